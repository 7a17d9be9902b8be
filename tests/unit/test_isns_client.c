// SPDX-License-Identifier: GPL-2.0
/*
 * isns.c against a fake iSNS server in the test: the order of what it
 * sends, what it makes of the answers, and what a broken or hostile
 * server gets: a response to no request, silence, a malformed answer, a
 * notification from another address. None of them admits anyone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "isns.h"
#include "isns_acl.h"
#include "isns_pdu.h"
#include "portal.h"
#include "test.h"

struct fake {
	struct loop loop;
	struct config cfg;
	struct portal portal;
	struct portals ps;
	struct isns c;
	int lfd;			/* the fake server's listener */
	int fd;				/* its connection from ietd */
	uint8_t buf[ISNS_PDU_MAX];
	struct isns_hdr h;		/* of the last request read */
};

static struct fake f;

static void pump(int ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end) {
		loop_run_once(&f.loop, 5);
		isns_tick(&f.c, now_ms());
	}
}

static void setup_with(const char *more);

static void setup(void)
{
	setup_with("");
}

static void setup_with(const char *more)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	char conf[512];

	memset(&f, 0, sizeof(f));
	f.fd = -1;
	f.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(f.lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(f.lfd, 4) ||
	    getsockname(f.lfd, (struct sockaddr *)&sin, &len))
		abort();
	snprintf(conf, sizeof(conf),
		 "iSNSServer 127.0.0.1:%u\niSNSAccessControl Yes\nTarget "
		 TARGET1 "\n Alias one\n%s", ntohs(sin.sin_port), more);
	config_of(&f.cfg, conf);
	if (loop_init(&f.loop))
		abort();
	f.portal.addr = sockaddr_of("127.0.0.1", 3260);
	f.portal.w.fd = -1;
	f.ps.v = &f.portal;
	f.ps.nr = 1;
	if (isns_init(&f.c, &f.loop, &f.cfg, &f.ps, 3260))
		abort();
}

static void teardown(void)
{
	isns_stop(&f.c);
	if (f.fd >= 0)
		close(f.fd);
	close(f.lfd);
	loop_close(&f.loop);
	config_free(&f.cfg);
	isns_acl_clear();
}

/* ietd's connection, accepted while it is pumped. */
static bool accepted(void)
{
	uint64_t end = now_ms() + 3000;

	while (now_ms() < end) {
		pump(5);
		f.fd = accept4(f.lfd, NULL, NULL, SOCK_NONBLOCK);
		if (f.fd >= 0)
			return true;
	}
	return false;
}

/* The next whole PDU from fd into f.buf (ietd pumped meanwhile): 0, or -1. */
static int read_from(int fd)
{
	uint64_t end = now_ms() + 3000;
	size_t have = 0, need = ISNS_HDR_LEN;
	ssize_t n;

	while (now_ms() < end) {
		pump(2);
		n = recv(fd, f.buf + have, need - have, MSG_DONTWAIT);
		if (n == 0)
			return -1;
		if (n < 0)
			continue;
		have += n;
		if (have == ISNS_HDR_LEN) {
			if (isns_hdr_parse(f.buf, have, &f.h))
				return -1;
			need += f.h.len;
		}
		if (have == need && have >= ISNS_HDR_LEN)
			return 0;
	}
	return -1;
}

/* Whether fd was closed by ietd (pumped meanwhile). */
static bool closed(int fd)
{
	uint64_t end = now_ms() + 3000;
	uint8_t b[256];
	ssize_t n;

	while (now_ms() < end) {
		pump(2);
		n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
	}
	return false;
}

/* A response to the last request: status, then attrs. */
static void answer(int fd, uint16_t xid, uint32_t status, const uint8_t *attrs,
		   size_t len)
{
	uint8_t b[4096];
	uint16_t func = f.h.func | ISNS_RESPONSE;
	uint16_t plen = 4 + len;

	b[0] = 0;
	b[1] = 1;
	b[2] = func >> 8;
	b[3] = func;
	b[4] = plen >> 8;
	b[5] = plen;
	b[6] = (ISNS_F_SERVER | ISNS_F_FIRST | ISNS_F_LAST) >> 8;
	b[7] = 0;
	b[8] = xid >> 8;
	b[9] = xid;
	b[10] = b[11] = 0;
	b[12] = status >> 24;
	b[13] = status >> 16;
	b[14] = status >> 8;
	b[15] = status;
	if (len)
		memcpy(b + 16, attrs, len);
	if (send(fd, b, 16 + len, 0) != (ssize_t)(16 + len))
		abort();
}

static size_t put_tlv(uint8_t *b, size_t off, uint32_t tag, const char *s)
{
	uint32_t n = s ? (strlen(s) + 4) & ~3u : 0;
	uint32_t be = htonl(tag), bl = htonl(n);

	memcpy(b + off, &be, 4);
	memcpy(b + off + 4, &bl, 4);
	memset(b + off + 8, 0, n);
	if (s)
		memcpy(b + off + 8, s, strlen(s));
	return off + 8 + n;
}

/* The DD answer: a domain of the target and member (none: no domain). */
static size_t dd_answer(uint8_t *b, const char *member)
{
	static const uint8_t dd1[12] = { 0, 0, 8, 0x11, 0, 0, 0, 4, 0, 0, 0, 1 };
	size_t off = put_tlv(b, 0, ISNS_T_DD_ID, NULL);

	off = put_tlv(b, off, ISNS_T_DELIMITER, NULL);
	if (!member)
		return off;
	memcpy(b + off, dd1, sizeof(dd1));
	off += sizeof(dd1);
	off = put_tlv(b, off, ISNS_T_DD_MEMBER_NAME, TARGET1);
	return put_tlv(b, off, ISNS_T_DD_MEMBER_NAME, member);
}

/* Registration, SCN registration and query answered: INITIATOR admitted. */
static bool registered_and_admitted(void)
{
	uint8_t b[1024];

	if (!accepted() || read_from(f.fd) || f.h.func != ISNS_DEV_ATTR_REG)
		return false;
	answer(f.fd, f.h.xid, 0, NULL, 0);
	if (read_from(f.fd) || f.h.func != ISNS_SCN_REG)
		return false;
	answer(f.fd, f.h.xid, 0, NULL, 0);
	if (read_from(f.fd) || f.h.func != ISNS_DEV_ATTR_QRY)
		return false;
	answer(f.fd, f.h.xid, 0, b, dd_answer(b, INITIATOR));
	pump(50);
	return isns_acl_check(TARGET1, INITIATOR) == ISNS_ADMIT;
}

TEST(isns_client_registers_follows_scns_and_admits_the_domain)
{
	setup();
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_UNKNOWN);
	REQUIRE(registered_and_admitted());
	CHECK(f.c.registered);
	CHECK_EQ(isns_acl_check(TARGET1, "iqn.1993-08.org.debian:01:other"),
		 ISNS_NOT_IN_DD);
	CHECK(f.c.scn_port);
	teardown();
}

TEST(isns_client_deregisters_at_stop)
{
	int status = -1;
	pid_t pid;

	setup();
	REQUIRE(registered_and_admitted());
	/* isns_stop waits on its own; answer from here once it has sent. */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* The child is the server: the parent stops meanwhile. */
		struct pollfd p = { .fd = f.fd, .events = POLLIN };
		size_t have = 0;
		ssize_t n;

		while (have < ISNS_HDR_LEN && poll(&p, 1, 2000) == 1 &&
		       (n = recv(f.fd, f.buf + have, sizeof(f.buf) - have, 0)) > 0)
			have += n;
		if (!isns_hdr_parse(f.buf, have, &f.h))
			answer(f.fd, f.h.xid, 0, NULL, 0);
		_exit(f.h.func == ISNS_DEV_DEREG ? 0 : 1);
	}
	isns_stop(&f.c);
	CHECK(!f.c.registered);
	/* The server saw a DevDereg, and ietd its answer. */
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_UNKNOWN);
	close(f.fd);
	f.fd = -1;
	close(f.lfd);
	loop_close(&f.loop);
	config_free(&f.cfg);
}

TEST(isns_client_drops_a_server_answering_another_transaction)
{
	setup();
	REQUIRE(accepted());
	REQUIRE(read_from(f.fd) == 0);
	answer(f.fd, f.h.xid + 1, 0, NULL, 0);
	CHECK(closed(f.fd));
	CHECK_EQ(f.c.state, ISNS_WAIT);
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_UNKNOWN);
	teardown();
}

TEST(isns_client_gives_up_on_a_silent_server_and_backs_off)
{
	unsigned int backoff;

	setup();
	REQUIRE(accepted());
	REQUIRE(read_from(f.fd) == 0);
	backoff = f.c.backoff_ms;
	/* Ten seconds without an answer, as the clock will say. */
	isns_tick(&f.c, now_ms() + ISNS_TIMEOUT_MS + 1);
	CHECK_EQ(f.c.state, ISNS_WAIT);
	CHECK(closed(f.fd));
	CHECK_EQ(f.c.backoff_ms, 2 * backoff);
	teardown();
}

TEST(isns_client_forgets_all_when_the_server_goes)
{
	setup();
	REQUIRE(registered_and_admitted());
	close(f.fd);
	f.fd = -1;
	pump(100);
	CHECK_EQ(f.c.state, ISNS_WAIT);
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_UNKNOWN);
	teardown();
}

TEST(isns_client_refuses_a_malformed_dd_answer)
{
	uint8_t b[1024];
	size_t len;

	setup();
	REQUIRE(accepted());
	REQUIRE(read_from(f.fd) == 0);
	answer(f.fd, f.h.xid, 0, NULL, 0);
	REQUIRE(read_from(f.fd) == 0);
	answer(f.fd, f.h.xid, 0, NULL, 0);
	REQUIRE(read_from(f.fd) == 0 && f.h.func == ISNS_DEV_ATTR_QRY);
	len = dd_answer(b, INITIATOR);
	b[len - 8] = '\n';		/* a newline inside the member's name */
	answer(f.fd, f.h.xid, 0, b, len);
	pump(50);
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_UNKNOWN);
	teardown();
}

/* A connection to ietd's notification listener from address from. */
static int notifier(const char *from)
{
	struct sockaddr_in sin = { .sin_family = AF_INET }, src = sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(f.c.scn_port);
	inet_pton(AF_INET, from, &src.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		abort();
	return fd;
}

static void send_scn(int fd, uint16_t xid)
{
	uint8_t b[512];
	size_t len = put_tlv(b, ISNS_HDR_LEN, ISNS_T_ISCSI_NAME, TARGET1);
	uint16_t plen = len - ISNS_HDR_LEN;

	memset(b, 0, ISNS_HDR_LEN);
	b[1] = 1;
	b[3] = ISNS_SCN;
	b[4] = plen >> 8;
	b[5] = plen;
	b[6] = (ISNS_F_SERVER | ISNS_F_FIRST | ISNS_F_LAST) >> 8;
	b[9] = xid;
	if (send(fd, b, len, 0) != (ssize_t)len)
		abort();
}

TEST(isns_client_answers_the_server_s_scn_and_asks_again)
{
	uint8_t b[1024];
	int n;

	setup();
	REQUIRE(registered_and_admitted());
	n = notifier("127.0.0.1");
	send_scn(n, 42);
	REQUIRE(read_from(n) == 0);
	CHECK_EQ(f.h.func, ISNS_SCN | ISNS_RESPONSE);
	CHECK_EQ(f.h.xid, 42);
	CHECK_EQ(f.c.scns, 1);
	/* A second later, the query again: now the domain lost the initiator. */
	isns_tick(&f.c, now_ms() + ISNS_SCN_GAP_MS + 1);
	REQUIRE(read_from(f.fd) == 0);
	REQUIRE_EQ(f.h.func, ISNS_DEV_ATTR_QRY);
	answer(f.fd, f.h.xid, 0, b, dd_answer(b, NULL));
	pump(50);
	CHECK_EQ(isns_acl_check(TARGET1, INITIATOR), ISNS_NOT_IN_DD);
	close(n);
	teardown();
}

/* The request read last names the target (its source or key). */
static bool asks_for(const char *target)
{
	return f.h.func == ISNS_DEV_ATTR_QRY &&
	       memmem(f.buf, ISNS_HDR_LEN + f.h.len, target, strlen(target));
}

TEST(isns_client_finishes_a_round_of_queries_before_an_scn_s)
{
	struct isns_hdr q;
	uint8_t b[1024];
	int n;

	setup_with("Target " TARGET2 "\n");
	REQUIRE(accepted());
	REQUIRE(read_from(f.fd) == 0 && f.h.func == ISNS_DEV_ATTR_REG);
	answer(f.fd, f.h.xid, 0, NULL, 0);
	for (n = 0; n < 2; n++) {
		REQUIRE(read_from(f.fd) == 0 && f.h.func == ISNS_SCN_REG);
		answer(f.fd, f.h.xid, 0, NULL, 0);
	}
	REQUIRE(read_from(f.fd) == 0 && asks_for(TARGET1));
	q = f.h;
	/* Notifications keep coming while the round is under way... */
	n = notifier("127.0.0.1");
	send_scn(n, 7);
	REQUIRE(read_from(n) == 0);
	/* The answer comes once the SCN's new round would be due. */
	pump(ISNS_SCN_GAP_MS + 100);
	f.h = q;
	answer(f.fd, f.h.xid, 0, b, dd_answer(b, INITIATOR));
	/* ...and the round goes on to the second target, not back to the first. */
	REQUIRE(read_from(f.fd) == 0);
	CHECK(asks_for(TARGET2));
	answer(f.fd, f.h.xid, 0, b, dd_answer(b, NULL));
	/* Then the round the SCN asked for. */
	isns_tick(&f.c, now_ms() + ISNS_SCN_GAP_MS + 1);
	REQUIRE(read_from(f.fd) == 0);
	CHECK(asks_for(TARGET1));
	close(n);
	teardown();
}

TEST(isns_client_takes_notifications_from_the_server_s_address_only)
{
	int n;

	setup();
	REQUIRE(registered_and_admitted());
	n = notifier("127.0.0.2");
	send_scn(n, 1);
	CHECK(closed(n));
	CHECK_EQ(f.c.scns, 0);
	close(n);
	/* Nor anything but an SCN or ESI from the server's. */
	n = notifier("127.0.0.1");
	CHECK(send(n, "\0\1\0\2\0\0\x4c\0\0\1\0\0", 12, 0) == 12);
	CHECK(closed(n));
	close(n);
	teardown();
}
