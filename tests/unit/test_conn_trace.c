// SPDX-License-Identifier: GPL-2.0
/* The PDU trace (ietd -d 2) never shows CHAP challenges or responses. */
#include <stdlib.h>
#include <unistd.h>

#include "helpers.h"
#include "log.h"
#include "test.h"

static char logged[65536];
static size_t used;

static void hook(int prio, const char *msg)
{
	(void)prio;
	used += snprintf(logged + used, sizeof(logged) - used, "%s\n", msg);
}

TEST(trace_hides_chap_values)
{
	struct fixture fx;
	struct login_req r;
	struct text t;
	uint8_t bhs[BHS_LEN], *data;
	size_t dlen;
	char big[300];
	int fd;

	memset(big, 'b', sizeof(big) - 1);
	memcpy(big, "CHAP_C=0x", 9);
	big[sizeof(big) - 1] = '\0';
	fx_init(&fx, "Target " TARGET1 "\n IncomingUser joe secretsecret\n");
	log_init("ietd", 0, 2);
	log_set_hook(hook);
	fd = fx_connect(&fx);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"CHAP_R=0xfeedfacefeedface", big, "AuthMethod=CHAP", NULL);
	login_bhs(&r, &t, bhs);
	REQUIRE(send_pdu(fd, bhs, t.buf, t.len) == 0);
	REQUIRE(recv_pdu(&fx, fd, bhs, &data, &dlen) == 0);
	free(data);
	CHECK_CONTAINS(logged, "CHAP_R=(hidden) ");
	CHECK_CONTAINS(logged, "CHAP_C=(hidden) AuthMethod=CHAP");
	CHECK(!strstr(logged, "feedface"));
	CHECK(!strstr(logged, "bbbb"));
	log_set_hook(NULL);
	close(fd);
	fx_free(&fx);
}
