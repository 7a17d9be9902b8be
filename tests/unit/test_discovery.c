// SPDX-License-Identifier: GPL-2.0
/* Discovery sessions after login: SendTargets, Logout, NOP, Reject. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "discovery.h"
#include "helpers.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\nTarget " TARGET2 "\n"

struct dfx {
	struct config cfg;
	struct login_outcome o;
	struct sockaddr_storage local;
	struct disc *d;
	struct pdu_out out;
};

static void df_init(struct dfx *f, uint32_t xmit)
{
	struct sockaddr_in *s4 = (void *)&f->local;

	memset(f, 0, sizeof(*f));
	config_of(&f->cfg, CONF);
	f->o.discovery = true;
	f->o.cid = 2;
	f->o.statsn = 100;
	f->o.exp_cmdsn = 10;
	f->o.keys[IET_KEY_MAX_XMIT_DSL] = xmit;
	f->o.keys[IET_KEY_MAX_RECV_DSL] = 8192;
	s4->sin_family = AF_INET;
	s4->sin_port = htons(3260);
	inet_pton(AF_INET, "192.0.2.7", &s4->sin_addr);
	f->d = disc_new(&f->cfg, &f->o, &f->local);
}

static void df_free(struct dfx *f)
{
	disc_free(f->d);
	config_free(&f->cfg);
}

static enum disc_result text(struct dfx *f, const char *kv, uint32_t ttt,
			     bool immediate, uint32_t cmdsn)
{
	struct text_req q = { .immediate = immediate, .final = true,
			      .itt = 7, .ttt = ttt, .cmdsn = cmdsn };
	struct text t;
	uint8_t bhs[BHS_LEN];

	t.len = 0;
	if (kv)
		text_of(&t, kv, NULL);
	q.dlength = t.len;
	text_req_encode(&q, bhs);
	return disc_pdu(f->d, bhs, (const uint8_t *)t.buf, t.len, &f->out);
}

TEST(discovery_portal_formats_ipv4_and_bracketed_ipv6)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *s6 = (void *)&ss;
	char buf[80];

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(3261);
	inet_pton(AF_INET6, "2001:db8::1", &s6->sin6_addr);
	REQUIRE(format_portal(&ss, 1, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "[2001:db8::1]:3261,1");
	inet_pton(AF_INET6, "::ffff:192.0.2.9", &s6->sin6_addr);
	REQUIRE(format_portal(&ss, 1, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "192.0.2.9:3261,1");
}

TEST(discovery_send_targets_all_answers_names_and_addresses)
{
	struct dfx f;
	struct text_rsp r;
	const char *why;

	df_init(&f, 8192);
	REQUIRE_EQ(text(&f, "SendTargets=All", RSVD_TAG, false, 10), DISC_REPLY);
	REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
	CHECK(r.final);
	CHECK_EQ(r.itt, 7);
	CHECK_EQ(r.statsn, 100);
	CHECK_EQ(r.exp_cmdsn, 11);
	CHECK_EQ(text_count(f.out.data, f.out.dlen, "TargetName"), 2);
	CHECK_STR(text_get(f.out.data, f.out.dlen, "TargetAddress"),
		  "192.0.2.7:3260,1");
	/* TargetName first, then its address. */
	CHECK(!strncmp((const char *)f.out.data, "TargetName=" TARGET1, 11));
	df_free(&f);
}

TEST(discovery_send_targets_named_lists_that_target_only)
{
	struct dfx f;

	df_init(&f, 8192);
	REQUIRE_EQ(text(&f, "SendTargets=" TARGET2, RSVD_TAG, true, 10),
		   DISC_REPLY);
	CHECK_EQ(text_count(f.out.data, f.out.dlen, "TargetName"), 1);
	CHECK_STR(text_get(f.out.data, f.out.dlen, "TargetName"), TARGET2);
	REQUIRE_EQ(text(&f, "SendTargets=iqn.2001-04.com.example:none",
			RSVD_TAG, true, 10), DISC_REPLY);
	CHECK_EQ(f.out.dlen, 0);
	df_free(&f);
}

TEST(discovery_send_targets_empty_lists_nothing)
{
	struct dfx f;

	df_init(&f, 8192);
	REQUIRE_EQ(text(&f, "SendTargets=", RSVD_TAG, false, 10), DISC_REPLY);
	CHECK_EQ(f.out.dlen, 0);
	df_free(&f);
}

TEST(discovery_other_text_keys_are_rejected_or_not_understood)
{
	struct dfx f;

	df_init(&f, 8192);
	REQUIRE_EQ(text(&f, "MaxBurstLength=512", RSVD_TAG, false, 10),
		   DISC_REPLY);
	CHECK_STR(text_get(f.out.data, f.out.dlen, "MaxBurstLength"), "Reject");
	REQUIRE_EQ(text(&f, "X-foo=1", RSVD_TAG, false, 11), DISC_REPLY);
	CHECK_STR(text_get(f.out.data, f.out.dlen, "X-foo"), "NotUnderstood");
	df_free(&f);
}

TEST(discovery_answer_longer_than_initiator_limit_continues_on_ttt)
{
	struct dfx f;
	struct text_rsp r;
	const char *why;
	size_t total = 0, pieces = 0, i, len = 0;
	char conf[2048];

	df_init(&f, 512);
	config_free(&f.cfg);
	for (i = 0; i < 20; i++)
		len += sprintf(conf + len, "Target iqn.2001-04.com.example:t%zu\n", i);
	config_of(&f.cfg, conf);
	REQUIRE_EQ(text(&f, "SendTargets=All", RSVD_TAG, false, 10), DISC_REPLY);
	for (;;) {
		REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
		CHECK(f.out.dlen <= 512);
		total += f.out.dlen;
		pieces++;
		if (r.final)
			break;
		CHECK(r.cont);
		CHECK(r.ttt != RSVD_TAG);
		REQUIRE(pieces < 10);
		REQUIRE_EQ(text(&f, NULL, r.ttt, false, 10 + pieces),
			   DISC_REPLY);
	}
	CHECK(pieces >= 2);
	CHECK_EQ(r.ttt, RSVD_TAG);
	CHECK(total > 512);
	df_free(&f);
}

TEST(discovery_continued_request_is_acknowledged_then_answered)
{
	struct dfx f;
	struct text_req q = { .cont = true, .itt = 7, .ttt = RSVD_TAG,
			      .cmdsn = 10 };
	struct text_rsp r;
	uint8_t bhs[BHS_LEN];
	const char *why;

	df_init(&f, 8192);
	q.dlength = 8;
	text_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, (const uint8_t *)"SendTarg", 8, &f.out),
		   DISC_REPLY);
	REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
	CHECK(!r.final && !r.cont);
	CHECK_EQ(f.out.dlen, 0);
	CHECK(r.ttt != RSVD_TAG);
	q.cont = false;
	q.final = true;
	q.ttt = r.ttt;
	q.dlength = 8;
	q.cmdsn = 11;
	text_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, (const uint8_t *)"ets=All\0", 8, &f.out),
		   DISC_REPLY);
	REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
	CHECK(r.final);
	CHECK_EQ(text_count(f.out.data, f.out.dlen, "TargetName"), 2);
	df_free(&f);
}

TEST(discovery_unknown_ttt_is_rejected)
{
	struct dfx f;
	struct reject rj;
	const char *why;

	df_init(&f, 8192);
	REQUIRE_EQ(text(&f, NULL, 0x1234, false, 10), DISC_REPLY);
	REQUIRE(reject_decode(f.out.bhs, &rj, &why) == 0);
	CHECK_EQ(rj.reason, REJECT_INVALID_FIELD);
	CHECK_EQ(f.out.dlen, BHS_LEN);
	df_free(&f);
}

TEST(discovery_logout_closes_the_session_after_the_response)
{
	struct dfx f;
	struct logout_req q = { .immediate = true, .reason = 0, .itt = 3,
				.cmdsn = 10 };
	struct logout_rsp r;
	uint8_t bhs[BHS_LEN];
	const char *why;

	df_init(&f, 8192);
	logout_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY_CLOSE);
	REQUIRE(logout_rsp_decode(f.out.bhs, &r, &why) == 0);
	CHECK_EQ(r.response, LOGOUT_OK);
	CHECK_EQ(r.itt, 3);
	df_free(&f);
}

TEST(discovery_logout_of_another_cid_or_for_recovery_keeps_the_session)
{
	struct dfx f;
	struct logout_req q = { .immediate = true, .reason = 1, .cid = 9 };
	struct logout_rsp r;
	uint8_t bhs[BHS_LEN];
	const char *why;

	df_init(&f, 8192);
	logout_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY);
	logout_rsp_decode(f.out.bhs, &r, &why);
	CHECK_EQ(r.response, LOGOUT_CID_NOT_FOUND);
	q.cid = 2;
	logout_req_encode(&q, bhs);
	CHECK_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY_CLOSE);
	df_free(&f);
	df_init(&f, 8192);
	q.reason = 2;
	logout_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY);
	logout_rsp_decode(f.out.bhs, &r, &why);
	CHECK_EQ(r.response, LOGOUT_NO_RECOVERY);
	df_free(&f);
}

TEST(discovery_nop_out_is_echoed_in_a_nop_in)
{
	struct dfx f;
	struct nop_out q = { .immediate = true, .dlength = 4, .itt = 5,
			     .ttt = RSVD_TAG };
	struct nop_in r;
	uint8_t bhs[BHS_LEN];
	const char *why;

	df_init(&f, 8192);
	nop_out_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, (const uint8_t *)"ping", 4, &f.out),
		   DISC_REPLY);
	REQUIRE(nop_in_decode(f.out.bhs, &r, &why) == 0);
	CHECK_EQ(r.itt, 5);
	CHECK_EQ(r.ttt, RSVD_TAG);
	REQUIRE_EQ(f.out.dlen, 4);
	CHECK(!memcmp(f.out.data, "ping", 4));
	df_free(&f);
}

TEST(discovery_nop_out_without_itt_needs_no_answer)
{
	struct dfx f;
	struct nop_out q = { .immediate = true, .itt = RSVD_TAG,
			     .ttt = RSVD_TAG };
	uint8_t bhs[BHS_LEN];

	df_init(&f, 8192);
	nop_out_encode(&q, bhs);
	CHECK_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_NOTHING);
	df_free(&f);
}

TEST(discovery_scsi_command_is_rejected_as_protocol_error)
{
	struct dfx f;
	struct reject rj;
	uint8_t bhs[BHS_LEN] = { OP_SCSI_CMD, 0x80 };
	const char *why;

	df_init(&f, 8192);
	REQUIRE_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY);
	REQUIRE(reject_decode(f.out.bhs, &rj, &why) == 0);
	CHECK_EQ(rj.reason, REJECT_PROTOCOL_ERROR);
	CHECK_EQ(rj.statsn, 100);
	CHECK(!memcmp(f.out.data, bhs, BHS_LEN));
	df_free(&f);
}

TEST(discovery_unknown_opcode_is_rejected_as_not_supported)
{
	struct dfx f;
	struct reject rj;
	uint8_t bhs[BHS_LEN] = { 0x1c, 0x80 };
	const char *why;

	df_init(&f, 8192);
	REQUIRE_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_REPLY);
	REQUIRE(reject_decode(f.out.bhs, &rj, &why) == 0);
	CHECK_EQ(rj.reason, REJECT_NOT_SUPPORTED);
	df_free(&f);
}

TEST(discovery_oversized_data_segment_closes)
{
	struct dfx f;
	struct text_req q = { .final = true, .itt = 1, .ttt = RSVD_TAG,
			      .dlength = 100000 };
	uint8_t bhs[BHS_LEN];

	df_init(&f, 8192);
	text_req_encode(&q, bhs);
	CHECK_EQ(disc_pdu(f.d, bhs, NULL, 0, &f.out), DISC_CLOSE);
	df_free(&f);
}

TEST(discovery_status_sequence_advances_per_response)
{
	struct dfx f;
	struct text_rsp r;
	const char *why;

	df_init(&f, 8192);
	text(&f, "SendTargets=All", RSVD_TAG, false, 10);
	text_rsp_decode(f.out.bhs, &r, &why);
	CHECK_EQ(r.statsn, 100);
	text(&f, "SendTargets=All", RSVD_TAG, false, 11);
	text_rsp_decode(f.out.bhs, &r, &why);
	CHECK_EQ(r.statsn, 101);
	CHECK_EQ(r.exp_cmdsn, 12);
	CHECK_EQ(r.max_cmdsn, 12);
	df_free(&f);
}

TEST(discovery_portal_tag_is_the_group_of_the_local_address)
{
	struct config cfg;
	struct sockaddr_storage ss;

	config_of(&cfg, "");
	ss = sockaddr_of("192.0.2.9", 3260);
	CHECK_EQ(portal_tag_of(&cfg, &ss), 1);	/* no groups: 1 */
	CHECK_EQ(portal_tag_of(&cfg, NULL), 1);
	config_free(&cfg);

	config_of(&cfg, "PortalGroup 3 192.0.2.1 [2001:db8::1]\n"
		  "PortalGroup 4 192.0.2.2 *:3270\n");
	config_resolve_ports(&cfg, 3260);
	ss = sockaddr_of("192.0.2.1", 3260);
	CHECK_EQ(portal_tag_of(&cfg, &ss), 3);
	ss = sockaddr_of("2001:db8:0::1", 3260);	/* another spelling */
	CHECK_EQ(portal_tag_of(&cfg, &ss), 3);
	ss = sockaddr_of("::ffff:192.0.2.2", 3260);	/* IPv4-mapped */
	CHECK_EQ(portal_tag_of(&cfg, &ss), 4);
	ss = sockaddr_of("198.51.100.1", 3270);	/* "*" */
	CHECK_EQ(portal_tag_of(&cfg, &ss), 4);
	ss = sockaddr_of("192.0.2.1", 3261);	/* no such portal */
	CHECK_EQ(portal_tag_of(&cfg, &ss), 0);
	CHECK_EQ(portal_tag_of(&cfg, NULL), 0);
	config_free(&cfg);
}

TEST(discovery_a_second_send_targets_in_one_request_is_a_protocol_error)
{
	struct text_req q = { .final = true, .itt = 7, .ttt = RSVD_TAG,
			      .cmdsn = 10 };
	uint8_t bhs[BHS_LEN];
	struct dfx f;
	struct text t;

	df_init(&f, 8192);
	text_of(&t, "SendTargets=All", "SendTargets=" TARGET1, NULL);
	q.dlength = t.len;
	text_req_encode(&q, bhs);
	REQUIRE_EQ(disc_pdu(f.d, bhs, (const uint8_t *)t.buf, t.len, &f.out),
		   DISC_REPLY);
	CHECK_EQ(f.out.bhs[0] & 0x3f, OP_REJECT);
	CHECK_EQ(f.out.bhs[2], REJECT_PROTOCOL_ERROR);
	CHECK_CONTAINS(disc_error(f.d), "more than one SendTargets");
	/* The session goes on: the next request is answered. */
	REQUIRE_EQ(text(&f, "SendTargets=All", RSVD_TAG, false, 11), DISC_REPLY);
	CHECK_EQ(text_count(f.out.data, f.out.dlen, "TargetName"), 2);
	df_free(&f);
}

/* A config of n targets, for long answers. */
static void many_targets(struct dfx *f, size_t n)
{
	char *conf = malloc(n * 48 + 1);
	size_t i, len = 0;

	for (i = 0; i < n; i++)
		len += sprintf(conf + len, "Target iqn.2001-04.com.example:t%zu\n", i);
	config_free(&f->cfg);
	config_of(&f->cfg, conf);
	free(conf);
}

TEST(discovery_answers_of_all_sessions_share_one_budget)
{
	struct disc_budget b = { .max = 3000 };
	struct dfx f, g;
	struct text_rsp r;
	const char *why;
	size_t pieces = 0;

	df_init(&f, 512);
	df_init(&g, 512);
	many_targets(&f, 20);		/* an answer of about 1.6 KiB */
	disc_set_budget(f.d, &b);
	disc_set_budget(g.d, &b);
	REQUIRE_EQ(text(&f, "SendTargets=All", RSVD_TAG, false, 10), DISC_REPLY);
	disc_sent(f.d);
	REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
	REQUIRE(r.cont);
	CHECK(b.used > 1000 && b.used <= 2048);

	/* While f's answer is held, g's does not fit in what is left. */
	g.cfg.nr_targets = 0;
	config_free(&g.cfg);
	g.cfg = f.cfg;			/* the same long answer, not freed twice */
	REQUIRE_EQ(text(&g, "SendTargets=All", RSVD_TAG, false, 10), DISC_REPLY);
	CHECK_EQ(g.out.bhs[0] & 0x3f, OP_REJECT);
	CHECK_CONTAINS(disc_error(g.d), "the answers of all discovery sessions have left");

	/* f reads its answer to the end: its memory is given back... */
	while (!r.final) {
		REQUIRE(++pieces < 10);
		REQUIRE_EQ(text(&f, NULL, r.ttt, false, 10 + pieces), DISC_REPLY);
		disc_sent(f.d);
		REQUIRE(text_rsp_decode(f.out.bhs, &r, &why) == 0);
	}
	CHECK_EQ(b.used, 0);
	/* ...and g is answered. */
	REQUIRE_EQ(text(&g, "SendTargets=All", RSVD_TAG, false, 11), DISC_REPLY);
	disc_sent(g.d);
	CHECK(b.used > 1000);
	REQUIRE(text_rsp_decode(g.out.bhs, &r, &why) == 0);
	CHECK(r.cont);
	/* An answer abandoned with its session is given back too. */
	disc_free(g.d);
	g.d = NULL;
	CHECK_EQ(b.used, 0);
	disc_free(g.d);
	df_free(&f);
}
