// SPDX-License-Identifier: GPL-2.0
/*
 * What peers make ietd log: one printable line each, whatever a peer
 * sends, and limited per source, so that one flooder cannot hide the
 * others' refusals.
 */
#include <stdlib.h>
#include <unistd.h>

#include "helpers.h"
#include "log.h"
#include "peerlog.h"
#include "test.h"

static char logged[65536];
static size_t used;
static unsigned int lines;

static void hook(int prio, const char *msg)
{
	(void)prio;
	lines++;
	if (used < sizeof(logged))
		used += snprintf(logged + used, sizeof(logged) - used, "%s\n",
				 msg);
}

static unsigned int newlines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void capture(void)
{
	used = 0;
	lines = 0;
	logged[0] = '\0';
	log_set_hook(hook);
}

TEST(peerlog_what_a_peer_sends_cannot_start_a_line_of_its_own)
{
	struct fixture fx;
	struct login_req r;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	size_t dlen;
	int fd;

	fx_init(&fx, "Target " TARGET1 "\n Lun 0 Type=nullio\n");
	capture();
	fd = fx_connect(&fx);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	/* A target name with a forged journal line after a newline. */
	text_of(&t, "InitiatorName=" INITIATOR,
		"TargetName=iqn.2001-04.com.example:x\nietd[1]: fake\\\r\x1b[2J",
		"AuthMethod=None", NULL);
	login_bhs(&r, &t, bhs);
	REQUIRE(send_pdu(fd, bhs, t.buf, t.len) == 0);
	REQUIRE(recv_pdu(&fx, fd, bhs, &data, &dlen) == 0);
	free(data);
	fx_run(&fx, 3);
	log_set_hook(NULL);
	CHECK(lines >= 1);
	/* One line per message: the only newlines are the hook's. */
	CHECK_EQ(newlines(logged), lines);
	CHECK(!strstr(logged, "\nietd[1]"));
	CHECK_CONTAINS(logged, "x\\x0aietd[1]: fake\\x5c");
	CHECK(!strchr(logged, '\r'));
	CHECK(!strchr(logged, '\x1b'));
	close(fd);
	fx_free(&fx);
}

TEST(peerlog_one_flooding_source_does_not_hide_another)
{
	struct sockaddr_storage a = sockaddr_of("192.0.2.1", 1000);
	struct sockaddr_storage b = sockaddr_of("192.0.2.2", 1000);
	struct sockaddr_storage a6 = sockaddr_of("2001:db8:1:2::1", 1000);
	struct sockaddr_storage b6 = sockaddr_of("2001:db8:1:2:ffff::9", 1000);
	int i;

	capture();
	for (i = 0; i < 50; i++)
		peer_log(&a, LOG_WARNING, "a: refused %d", i);
	peer_log(&b, LOG_WARNING, "b: refused");
	CHECK_CONTAINS(logged, "b: refused");
	CHECK_CONTAINS(logged, "a: refused 4\n");
	CHECK(!strstr(logged, "a: refused 5\n"));
	/* An IPv6 /64 is one source: one host can take all of it. */
	for (i = 0; i < 20; i++) {
		peer_log(&a6, LOG_WARNING, "a6 %d", i);
		peer_log(&b6, LOG_WARNING, "b6 %d", i);
	}
	CHECK_CONTAINS(logged, "b6 1\n");
	CHECK(!strstr(logged, "b6 3\n"));
	/* Once the second is over, what was held back is counted. */
	sleep(1);
	peer_log_tick();
	log_set_hook(NULL);
	CHECK_CONTAINS(logged, "45 messages caused by 192.0.2.1 suppressed");
	CHECK_CONTAINS(logged, "35 messages caused by 2001:db8:1:2::/64 suppressed");
	CHECK(!strstr(logged, "caused by 192.0.2.2"));
}

TEST(peerlog_many_sources_together_are_held_to_the_rate_of_all)
{
	struct sockaddr_storage ss;
	char ip[32];
	int i, j;

	capture();
	/* More sources than are remembered: the counts of those forgotten
	 * are lines of the same rate, not lines beyond it. */
	for (i = 0; i < 400; i++) {
		snprintf(ip, sizeof(ip), "198.51.%d.%d", 100 + i / 200, i % 200 + 1);
		ss = sockaddr_of(ip, 1);
		for (j = 0; j < 7; j++)
			peer_log(&ss, LOG_WARNING, "from %s", ip);
	}
	CHECK(lines <= PEERLOG_ALL_BURST);
	sleep(1);
	peer_log_tick();
	log_set_hook(NULL);
	CHECK_CONTAINS(logged, "messages caused by peers suppressed");
}
