// SPDX-License-Identifier: GPL-2.0
/* The login state machine, PDU in and PDU out (RFC 7143 6, 11.12-13). */
#include <stdlib.h>

#include "helpers.h"
#include "kernel_fake.h"
#include "login.h"
#include "params.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n Lun 0 Type=nullio\nTarget " TARGET2 "\n"

/* The operational keys open-iscsi sends, all at once. */
#define OPEN_ISCSI_KEYS							\
	"HeaderDigest=None", "DataDigest=None", "DefaultTime2Wait=2",	\
	"DefaultTime2Retain=0", "IFMarker=No", "OFMarker=No",		\
	"ErrorRecoveryLevel=0", "InitialR2T=No", "ImmediateData=Yes",	\
	"MaxBurstLength=16776192", "FirstBurstLength=262144",		\
	"MaxOutstandingR2T=1", "MaxConnections=1", "DataPDUInOrder=Yes", \
	"DataSequenceInOrder=Yes", "MaxRecvDataSegmentLength=262144"

struct lfx {
	struct config cfg;
	struct registry reg;
	struct sockaddr_storage local;
	struct login *l;
	struct pdu_out out;
	struct login_rsp rsp;
};

static void lf_init(struct lfx *f, const char *conf)
{
	struct login_env env = { 0 };

	memset(f, 0, sizeof(*f));
	config_of(&f->cfg, conf);
	registry_init(&f->reg);
	env.cfg = &f->cfg;
	env.reg = &f->reg;
	f->l = login_new(&env, 500);
}

static void lf_free(struct lfx *f)
{
	login_free(f->l);
	registry_free(&f->reg);
	config_free(&f->cfg);
}

static enum login_result step(struct lfx *f, const struct login_req *r,
			      const struct text *t)
{
	const char *why;
	uint8_t bhs[BHS_LEN];
	enum login_result res;

	login_bhs(r, t, bhs);
	res = login_pdu(f->l, bhs, t ? (const uint8_t *)t->buf : NULL,
			t ? t->len : 0, &f->out);
	if (res != LOGIN_DROP)
		login_rsp_decode(f->out.bhs, &f->rsp, &why);
	return res;
}

static const char *rkey(const struct lfx *f, const char *key)
{
	return text_get(f->out.data, f->out.dlen, key);
}

/* A leading login to TARGET1 straight in the operational stage. */
static enum login_result op_login(struct lfx *f, struct text *t)
{
	struct login_req r;

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	return step(f, &r, t);
}

TEST(login_full_sequence_security_then_operational_then_ffp)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	const struct login_outcome *o;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"SessionType=Normal", "AuthMethod=None", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.rsp.csg, STAGE_SECURITY);
	CHECK_EQ(f.rsp.nsg, STAGE_OPERATIONAL);
	CHECK_EQ(f.rsp.tsih, 0);
	CHECK_EQ(f.rsp.statsn, 500);
	CHECK_EQ(f.rsp.exp_cmdsn, 77);
	CHECK_EQ(f.rsp.max_cmdsn, 77 + 128 - 1);
	CHECK_EQ(f.rsp.itt, 0x1000);
	CHECK_EQ(f.rsp.vmax, 0);
	CHECK_EQ(f.rsp.vactive, 0);
	CHECK(!memcmp(f.rsp.isid, r.isid, 6));
	CHECK_STR(rkey(&f, "AuthMethod"), "None");
	CHECK_STR(rkey(&f, "TargetPortalGroupTag"), "1");

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.rsp.csg, STAGE_OPERATIONAL);
	CHECK_EQ(f.rsp.nsg, STAGE_FFP);
	CHECK(f.rsp.tsih != 0);
	CHECK_EQ(f.rsp.statsn, 501);
	CHECK_STR(rkey(&f, "InitialR2T"), "Yes");
	CHECK_STR(rkey(&f, "MaxBurstLength"), "262144");
	CHECK_STR(rkey(&f, "FirstBurstLength"), "65536");
	CHECK_STR(rkey(&f, "MaxRecvDataSegmentLength"), "8192");
	CHECK(rkey(&f, "TargetPortalGroupTag") == NULL);

	o = login_outcome(f.l);
	CHECK(!o->discovery && o->leading);
	CHECK_EQ(o->tid, 1);
	CHECK_EQ(o->sid, make_sid(0x80123456789aull, f.rsp.tsih));
	CHECK_EQ(o->exp_cmdsn, 77);
	CHECK_EQ(o->statsn, 502);
	CHECK_STR(o->initiator, INITIATOR);
	CHECK_EQ(o->keys[IET_KEY_MAX_XMIT_DSL], 8192);
	CHECK_EQ(o->keys[IET_KEY_MAX_RECV_DSL], 8192);
	CHECK_EQ(o->keys[IET_KEY_INITIAL_R2T], 1);
	CHECK_EQ(o->keys[IET_KEY_DEFAULT_TIME2RETAIN], 0);
	REQUIRE(o->reserved != NULL);
	CHECK(o->reserved->pending);
	registry_drop(&f.reg, o->reserved);
	lf_free(&f);
}

TEST(login_may_start_in_the_operational_stage)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "TargetPortalGroupTag"), "1");
	lf_free(&f);
}

TEST(login_response_names_target_alias_when_configured)
{
	struct lfx f;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n Alias Disk One\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "TargetAlias"), "Disk One");
	lf_free(&f);
}

TEST(login_first_pdu_not_a_login_request_is_dropped)
{
	struct lfx f;
	struct text_req tr = { .final = true, .itt = 1, .ttt = RSVD_TAG };
	uint8_t bhs[BHS_LEN];

	lf_init(&f, CONF);
	text_req_encode(&tr, bhs);
	CHECK_EQ(login_pdu(f.l, bhs, NULL, 0, &f.out), LOGIN_DROP);
	CHECK_CONTAINS(login_error(f.l), "not a Login Request");
	lf_free(&f);
}

TEST(login_other_pdu_during_login_is_invalid_during_login)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct text_req tr = { .final = true, .itt = 9, .ttt = RSVD_TAG };
	uint8_t bhs[BHS_LEN];
	const char *why;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	text_req_encode(&tr, bhs);
	REQUIRE_EQ(login_pdu(f.l, bhs, NULL, 0, &f.out), LOGIN_FAILED);
	login_rsp_decode(f.out.bhs, &f.rsp, &why);
	CHECK_EQ(f.rsp.status, LS_INVALID_IN_LOGIN);
	CHECK_EQ(f.rsp.itt, 9);
	lf_free(&f);
}

TEST(login_unsupported_version_fails_with_class_2_detail_5)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.vmin = 1;
	r.vmax = 2;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_UNSUPPORTED_VERSION);
	CHECK_EQ(f.rsp.vmax, 0);
	lf_free(&f);
}

TEST(login_version_range_including_zero_is_accepted)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.vmax = 3;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		OPEN_ISCSI_KEYS, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK_EQ(f.rsp.vactive, 0);
	lf_free(&f);
}

TEST(login_transit_and_continue_together_is_an_initiator_error)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	r.cont = true;
	text_of(&t, "InitiatorName=" INITIATOR, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "T and C");
	lf_free(&f);
}

TEST(login_next_stage_must_follow_the_current_one)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_SECURITY);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "NSG 0 after CSG 1");
	lf_free(&f);

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, 2);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	lf_free(&f);
}

TEST(login_reserved_stage_is_an_initiator_error)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, 2, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_CONTAINS(login_error(f.l), "not a login stage");
	lf_free(&f);
}

TEST(login_request_in_a_stage_other_than_the_current_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	/* No transition was agreed: still the security stage. */
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_CONTAINS(login_error(f.l), "CSG 1, expected 0");
	lf_free(&f);
}

TEST(login_without_initiator_name_is_missing_parameter)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "TargetName=" TARGET1, NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_MISSING_PARAM);
	lf_free(&f);
}

TEST(login_normal_session_without_target_name_is_missing_parameter)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Normal", NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_MISSING_PARAM);
	lf_free(&f);
}

TEST(login_to_unknown_target_fails_with_class_2_detail_3)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR,
		"TargetName=iqn.2001-04.com.example:nosuch", NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, STATUS(2, 3));
	CHECK(!f.rsp.transit);
	CHECK_EQ(f.out.dlen, 0);
	CHECK_CONTAINS(login_error(f.l), "not found");
	lf_free(&f);
}

TEST(login_target_names_match_case_insensitively)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR,
		"TargetName=IQN.2001-04.COM.EXAMPLE:DISK1", OPEN_ISCSI_KEYS,
		NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_EQ(login_outcome(f.l)->tid, 1);
	lf_free(&f);
}

TEST(login_target_name_in_a_discovery_session_is_an_error)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery",
		"TargetName=" TARGET1, NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	lf_free(&f);
}

TEST(login_unknown_session_type_is_not_supported)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Boot",
		"TargetName=" TARGET1, NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_SESSION_TYPE);
	lf_free(&f);
}

TEST(login_discovery_session_answers_session_keys_irrelevant)
{
	struct lfx f;
	struct text t;
	const struct login_outcome *o;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery",
		OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "InitialR2T"), "Irrelevant");
	CHECK_STR(rkey(&f, "MaxBurstLength"), "Irrelevant");
	CHECK_STR(rkey(&f, "FirstBurstLength"), "Irrelevant");
	CHECK_STR(rkey(&f, "MaxConnections"), "Irrelevant");
	CHECK_STR(rkey(&f, "HeaderDigest"), "None");
	CHECK_STR(rkey(&f, "DefaultTime2Retain"), "0");
	CHECK(rkey(&f, "TargetPortalGroupTag") == NULL);
	CHECK(f.rsp.tsih != 0);
	CHECK_EQ(f.rsp.max_cmdsn, f.rsp.exp_cmdsn);
	o = login_outcome(f.l);
	CHECK(o->discovery);
	CHECK_EQ(o->tid, 0);
	CHECK_EQ(o->keys[IET_KEY_MAX_XMIT_DSL], 8192);
	REQUIRE(o->reserved != NULL);
	CHECK(o->reserved->discovery);
	registry_drop(&f.reg, o->reserved);
	lf_free(&f);
}

TEST(login_discovery_session_accepts_crc32c_digests)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery",
		"HeaderDigest=CRC32C,None", "DataDigest=CRC32C", NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "HeaderDigest"), "CRC32C");
	CHECK_EQ(login_outcome(f.l)->keys[IET_KEY_DATA_DIGEST], IET_DIGEST_CRC32C);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_auth_method_none_is_accepted)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=CHAP,None", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "AuthMethod"), "None");
	lf_free(&f);
}

TEST(login_chap_only_is_rejected_with_authentication_failure)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=CHAP", NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	CHECK_STR(rkey(&f, "AuthMethod"), "Reject");
	lf_free(&f);
}

TEST(login_chap_keys_without_chap_fail_authentication)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"CHAP_A=5", NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	lf_free(&f);
}

TEST(login_operational_keys_in_security_stage_are_not_understood)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"MaxBurstLength=65536", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "MaxBurstLength"), "NotUnderstood");
	/* Offered again where it belongs, it is negotiated, not a duplicate. */
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	t.len -= 0;
	{
		struct text t2;

		text_of(&t2, "MaxBurstLength=65536", "DefaultTime2Retain=0", NULL);
		REQUIRE_EQ(step(&f, &r, &t2), LOGIN_DONE);
	}
	CHECK_STR(rkey(&f, "MaxBurstLength"), "65536");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_unknown_and_extension_keys_are_not_understood)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"X-com.example.Frob=1", "X#Something=2", "NoSuchKey=3",
		OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "X-com.example.Frob"), "NotUnderstood");
	CHECK_STR(rkey(&f, "X#Something"), "NotUnderstood");
	CHECK_STR(rkey(&f, "NoSuchKey"), "NotUnderstood");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_target_only_keys_from_the_initiator_are_not_understood)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"TargetAlias=x", "SendTargets=All", OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "TargetAlias"), "NotUnderstood");
	CHECK_STR(rkey(&f, "SendTargets"), "NotUnderstood");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_key_twice_in_one_pdu_fails_with_initiator_error)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"MaxBurstLength=65536", "MaxBurstLength=65536", NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "sent twice");
	lf_free(&f);
}

TEST(login_key_again_in_a_later_pdu_fails_with_initiator_error)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_OPERATIONAL, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"ImmediateData=Yes", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	text_of(&t, "ImmediateData=No", NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	lf_free(&f);
}

TEST(login_initiator_name_again_in_a_later_pdu_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	text_of(&t, "InitiatorName=" INITIATOR, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	lf_free(&f);
}

TEST(login_first_burst_is_capped_by_max_burst_given_later_in_the_pdu)
{
	struct lfx f;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n MaxBurstLength 1048576\n"
		" FirstBurstLength 1048576\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"FirstBurstLength=262144", "MaxBurstLength=65536",
		"DefaultTime2Retain=0", NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "MaxBurstLength"), "65536");
	CHECK_STR(rkey(&f, "FirstBurstLength"), "65536");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_target_offers_its_keys_and_waits_for_the_answers)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	const struct login_outcome *o;

	lf_init(&f, "Target " TARGET1 "\n ImmediateData No\n"
		" MaxBurstLength 65536\n FirstBurstLength 65536\n"
		" DataDigest CRC32C\n MaxRecvDataSegmentLength 65536\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"MaxRecvDataSegmentLength=131072", NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_CONTINUE);
	CHECK(!f.rsp.transit);
	CHECK_STR(rkey(&f, "ImmediateData"), "No");
	CHECK_STR(rkey(&f, "MaxBurstLength"), "65536");
	CHECK(rkey(&f, "FirstBurstLength") == NULL);	/* 65536 is the default */
	CHECK_STR(rkey(&f, "DataDigest"), "CRC32C");
	CHECK_STR(rkey(&f, "DefaultTime2Retain"), "0");
	CHECK_STR(rkey(&f, "MaxRecvDataSegmentLength"), "65536");

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "ImmediateData=No", "MaxBurstLength=65536",
		"DataDigest=CRC32C", "DefaultTime2Retain=0", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.out.dlen, 0);	/* answers need no answer */
	o = login_outcome(f.l);
	CHECK_EQ(o->keys[IET_KEY_IMMEDIATE_DATA], 0);
	CHECK_EQ(o->keys[IET_KEY_MAX_BURST], 65536);
	CHECK_EQ(o->keys[IET_KEY_DATA_DIGEST], IET_DIGEST_CRC32C);
	CHECK_EQ(o->keys[IET_KEY_MAX_RECV_DSL], 65536);
	CHECK_EQ(o->keys[IET_KEY_MAX_XMIT_DSL], 8192);
	registry_drop(&f.reg, o->reserved);
	lf_free(&f);
}

TEST(login_invalid_answer_to_a_target_offer_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n ImmediateData No\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"DefaultTime2Retain=0", NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "ImmediateData"), "No");
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "ImmediateData=Yes", NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "invalid answer ImmediateData=Yes");
	lf_free(&f);
}

TEST(login_target_does_not_transit_until_its_offers_are_answered)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_CONTINUE);
	CHECK(!f.rsp.transit);
	CHECK_STR(rkey(&f, "DefaultTime2Retain"), "0");
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "DefaultTime2Retain=0", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK(f.rsp.transit);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_offer_left_unanswered_fails_instead_of_looping)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_CONTINUE);
	CHECK(!f.rsp.transit);
	/* An empty request with T=1 answers nothing. */
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	CHECK_EQ(step(&f, &r, NULL), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l),
		       "no answer to the target's offer of DefaultTime2Retain");
	lf_free(&f);
}

TEST(login_skip_from_security_to_ffp_goes_through_operational_when_target_must_offer)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_FFP);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.rsp.nsg, STAGE_OPERATIONAL);
	lf_free(&f);
}

TEST(login_skip_from_security_to_ffp_is_granted_when_nothing_to_offer)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n DefaultTime2Retain 20\n");
	login_req_init(&r, true, STAGE_SECURITY, STAGE_FFP);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK_EQ(f.rsp.nsg, STAGE_FFP);
	CHECK(f.rsp.tsih != 0);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_text_continued_with_c_bit_is_acknowledged_then_processed)
{
	struct lfx f;
	struct login_req r;
	struct text t, t1, t2;
	size_t half;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		OPEN_ISCSI_KEYS, NULL);
	/* Split in the middle of a pair. */
	half = t.len / 2;
	memcpy(t1.buf, t.buf, half);
	t1.len = half;
	memcpy(t2.buf, t.buf + half, t.len - half);
	t2.len = t.len - half;

	login_req_init(&r, false, STAGE_OPERATIONAL, 0);
	r.cont = true;
	REQUIRE_EQ(step(&f, &r, &t1), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	CHECK(!f.rsp.transit && !f.rsp.cont);
	CHECK_EQ(f.out.dlen, 0);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	REQUIRE_EQ(step(&f, &r, &t2), LOGIN_DONE);
	CHECK_STR(rkey(&f, "TargetPortalGroupTag"), "1");
	CHECK_STR(rkey(&f, "MaxBurstLength"), "262144");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_long_response_is_split_with_c_bit_and_continued_on_empty_requests)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	char keys[120][80];
	size_t i, total = 0, pieces = 0;

	lf_init(&f, CONF);
	t.len = 0;
	for (i = 0; i < 120; i++) {
		snprintf(keys[i], sizeof(keys[i]), "X-com.example.%048zu=1", i);
		memcpy(t.buf + t.len, keys[i], strlen(keys[i]) + 1);
		t.len += strlen(keys[i]) + 1;
	}
	{
		struct text head;

		text_of(&head, "InitiatorName=" INITIATOR,
			"TargetName=" TARGET1, "DefaultTime2Retain=0", NULL);
		memmove(t.buf + head.len, t.buf, t.len);
		memcpy(t.buf, head.buf, head.len);
		t.len += head.len;
	}
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	for (;;) {
		pieces++;
		total += f.out.dlen;
		CHECK(f.out.dlen <= LOGIN_DSL_MAX);
		if (!f.rsp.cont)
			break;
		CHECK(!f.rsp.transit);
		CHECK_EQ(f.out.dlen, LOGIN_DSL_MAX);
		REQUIRE(pieces < 10);
		if (step(&f, &r, NULL) == LOGIN_DONE) {
			pieces++;
			total += f.out.dlen;
			break;
		}
	}
	CHECK(pieces >= 2);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.rsp.nsg, STAGE_FFP);
	CHECK(f.rsp.tsih != 0);
	CHECK(total > LOGIN_DSL_MAX);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_data_while_target_continues_its_response_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t, more;
	size_t i;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	for (i = 0; i < 120; i++)
		t.len += sprintf(t.buf + t.len, "X-com.example.%048zu=1", i) + 1;
	login_req_init(&r, false, STAGE_OPERATIONAL, 0);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	REQUIRE(f.rsp.cont);
	text_of(&more, "MaxBurstLength=512", NULL);
	CHECK_EQ(step(&f, &r, &more), LOGIN_FAILED);
	lf_free(&f);
}

TEST(login_oversized_data_segment_fails_without_its_data)
{
	struct lfx f;
	struct login_req r;
	uint8_t bhs[BHS_LEN];
	const char *why;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.dlength = LOGIN_DSL_MAX + 4;
	login_req_encode(&r, bhs);
	CHECK_EQ(login_pdu(f.l, bhs, NULL, 0, &f.out), LOGIN_FAILED);
	login_rsp_decode(f.out.bhs, &f.rsp, &why);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "at most 8192");
	lf_free(&f);
}

TEST(login_isid_change_during_login_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_OPERATIONAL, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	r.isid[5] ^= 1;
	CHECK_EQ(step(&f, &r, NULL), LOGIN_FAILED);
	CHECK_CONTAINS(login_error(f.l), "changed during the login");
	lf_free(&f);
}

TEST(login_malformed_text_fails_with_initiator_error)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "NoEquals", NULL);
	CHECK_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_INIT_ERR);
	CHECK_CONTAINS(login_error(f.l), "missing '='");
	lf_free(&f);
}

TEST(login_status_sequence_numbers_advance_per_response)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.statsn, 500);
	REQUIRE_EQ(step(&f, &r, NULL), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.statsn, 501);
	lf_free(&f);
}

/* A live session of INITIATOR on tid 1 with TSIH 5 and ISID of the tests. */
static struct reg_session *live_session(struct lfx *f, uint32_t maxconns)
{
	struct reg_session *s = registry_reserve(&f->reg, 1, 0x80123456789aull,
						 INITIATOR, false);
	uint32_t keys[IET_KEY_COUNT] = { 0 };

	keys[IET_KEY_MAX_CONNECTIONS] = maxconns;
	keys[IET_KEY_MAX_BURST] = 131072;
	keys[IET_KEY_IMMEDIATE_DATA] = 1;
	registry_commit(s, keys);
	registry_add_cid(s, 0);
	return s;
}

TEST(login_with_tsih_adds_a_connection_to_its_session)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct reg_session *s;
	const struct login_outcome *o;

	lf_init(&f, CONF);
	s = live_session(&f, 2);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	r.cid = 1;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"HeaderDigest=None", "MaxBurstLength=65536",
		"MaxRecvDataSegmentLength=4096", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	CHECK_STR(rkey(&f, "MaxBurstLength"), "Irrelevant");
	CHECK_STR(rkey(&f, "TargetPortalGroupTag"), "1");
	CHECK_EQ(f.rsp.tsih, reg_tsih(s));
	o = login_outcome(f.l);
	CHECK(!o->leading);
	CHECK(o->reserved == NULL);
	CHECK_EQ(o->sid, s->sid);
	CHECK_EQ(o->cid, 1);
	CHECK_EQ(o->keys[IET_KEY_MAX_BURST], 131072);	/* the session's */
	CHECK_EQ(o->keys[IET_KEY_MAX_XMIT_DSL], 4096);	/* this connection's */
	lf_free(&f);
}

TEST(login_with_unknown_tsih_fails_session_does_not_exist)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, CONF);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = 77;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, STATUS(2, 0x0a));
	lf_free(&f);
}

TEST(login_with_tsih_of_another_isid_or_initiator_fails)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct reg_session *s;

	lf_init(&f, CONF);
	s = live_session(&f, 4);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	r.isid[5] ^= 1;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NO_SESSION);
	lf_free(&f);

	lf_init(&f, CONF);
	s = live_session(&f, 4);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	text_of(&t, "InitiatorName=iqn.1993-08.org.debian:01:other",
		"TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NO_SESSION);
	lf_free(&f);
}

TEST(login_beyond_max_connections_fails_too_many_connections)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct reg_session *s;

	lf_init(&f, CONF);
	s = live_session(&f, 1);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	r.cid = 1;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_TOO_MANY_CONNS);
	lf_free(&f);
}

TEST(login_reusing_a_cid_reinstates_the_connection_within_max_connections)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct reg_session *s;

	lf_init(&f, CONF);
	s = live_session(&f, 1);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	r.cid = 0;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_DONE);
	lf_free(&f);
}

TEST(login_beyond_max_sessions_fails_out_of_resources_except_reinstatement)
{
	struct lfx f;
	struct login_req r;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n MaxSessions 1\n");
	live_session(&f, 1);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.isid[5] ^= 1;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NO_RESOURCES);
	lf_free(&f);

	lf_init(&f, "Target " TARGET1 "\n MaxSessions 1\n");
	live_session(&f, 1);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"DefaultTime2Retain=0", NULL);
	CHECK_EQ(step(&f, &r, &t), LOGIN_DONE);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_leading_logins_get_distinct_tsihs)
{
	struct lfx a, b;
	struct text t;
	struct login_env env = { 0 };

	lf_init(&a, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"DefaultTime2Retain=0", NULL);
	REQUIRE_EQ(op_login(&a, &t), LOGIN_DONE);
	/* A second login sharing the first one's registry. */
	memset(&b, 0, sizeof(b));
	env.cfg = &a.cfg;
	env.reg = &a.reg;
	b.l = login_new(&env, 1);
	REQUIRE_EQ(op_login(&b, &t), LOGIN_DONE);
	CHECK(a.rsp.tsih != b.rsp.tsih);
	CHECK(a.rsp.tsih && b.rsp.tsih);
	login_free(b.l);
	lf_free(&a);
}

TEST(login_abandoned_before_the_end_keeps_no_tsih)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	size_t i;

	lf_init(&f, CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"DefaultTime2Retain=0", NULL);
	for (i = 0; i < 120; i++)
		t.len += sprintf(t.buf + t.len, "X-com.example.%048zu=1", i) + 1;
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	REQUIRE(f.rsp.cont);
	CHECK_EQ(f.reg.nr, 1);		/* reserved for the final piece */
	login_free(f.l);
	f.l = NULL;
	CHECK_EQ(f.reg.nr, 0);
	lf_free(&f);
}

/* A second login sharing f's configuration and registry. */
static void lf_second(struct lfx *b, struct lfx *a)
{
	struct login_env env = { 0 };

	memset(b, 0, sizeof(*b));
	env.cfg = &a->cfg;
	env.reg = &a->reg;
	b->l = login_new(&env, 900);
}

/* A login's first request: security stage, on to the operational one. */
static enum login_result first_request(struct lfx *f, uint16_t tsih,
				       uint16_t cid, uint8_t isid5)
{
	struct login_req r;
	struct text t;

	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	r.tsih = tsih;
	r.cid = cid;
	r.isid[5] = isid5;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	return step(f, &r, &t);
}

/* Its last request: operational stage, on to full feature phase. */
static enum login_result last_request(struct lfx *f, uint16_t tsih,
				      uint16_t cid, uint8_t isid5)
{
	struct login_req r;
	struct text t;

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = tsih;
	r.cid = cid;
	r.isid[5] = isid5;
	text_of(&t, "DefaultTime2Retain=0", NULL);
	return step(f, &r, &t);
}

TEST(login_interleaved_leading_logins_cannot_both_pass_max_sessions)
{
	struct lfx a, b;

	lf_init(&a, "Target " TARGET1 "\n MaxSessions 1\n");
	lf_second(&b, &a);
	/* Both start while the target has no session: both may go on. */
	REQUIRE_EQ(first_request(&a, 0, 0, 1), LOGIN_CONTINUE);
	REQUIRE_EQ(first_request(&b, 0, 0, 2), LOGIN_CONTINUE);
	REQUIRE_EQ(last_request(&a, 0, 0, 1), LOGIN_DONE);
	/* a's session has the only place now. */
	CHECK_EQ(last_request(&b, 0, 0, 2), LOGIN_FAILED);
	CHECK_EQ(b.rsp.status, LS_NO_RESOURCES);
	CHECK_CONTAINS(login_error(b.l), "MaxSessions=1");
	CHECK_EQ(registry_count(&a.reg, 1), 1);
	login_free(b.l);
	registry_drop(&a.reg, login_outcome(a.l)->reserved);
	lf_free(&a);
}

TEST(login_interleaved_connection_logins_cannot_both_pass_max_connections)
{
	struct lfx a, b;
	struct reg_session *s;
	uint16_t tsih;

	lf_init(&a, CONF);
	s = live_session(&a, 2);	/* CID 0, room for one more */
	tsih = reg_tsih(s);
	lf_second(&b, &a);
	REQUIRE_EQ(first_request(&a, tsih, 1, 0x9a), LOGIN_CONTINUE);
	REQUIRE_EQ(first_request(&b, tsih, 2, 0x9a), LOGIN_CONTINUE);
	REQUIRE_EQ(last_request(&a, tsih, 1, 0x9a), LOGIN_DONE);
	CHECK_EQ(registry_conns(s), 2);
	CHECK_EQ(last_request(&b, tsih, 2, 0x9a), LOGIN_FAILED);
	CHECK_EQ(b.rsp.status, LS_TOO_MANY_CONNS);
	CHECK_CONTAINS(login_error(b.l), "MaxConnections=2");
	login_free(b.l);
	/* a's connection never reached the kernel: its place is free again. */
	login_release(a.l);
	CHECK_EQ(registry_conns(s), 1);
	lf_free(&a);
}

TEST(login_abandoned_connection_login_gives_its_cid_back)
{
	struct lfx a, b;
	struct reg_session *s;
	uint16_t tsih;

	lf_init(&a, CONF);
	s = live_session(&a, 2);
	tsih = reg_tsih(s);
	REQUIRE_EQ(first_request(&a, tsih, 1, 0x9a), LOGIN_CONTINUE);
	REQUIRE_EQ(last_request(&a, tsih, 1, 0x9a), LOGIN_DONE);
	CHECK(login_outcome(a.l)->cid_reserved);
	login_release(a.l);
	CHECK_EQ(registry_conns(s), 1);
	lf_second(&b, &a);
	REQUIRE_EQ(first_request(&b, tsih, 2, 0x9a), LOGIN_CONTINUE);
	CHECK_EQ(last_request(&b, tsih, 2, 0x9a), LOGIN_DONE);
	login_release(b.l);
	login_free(b.l);
	lf_free(&a);
}

TEST(login_same_cid_in_two_logins_at_once_lets_one_through)
{
	struct lfx a, b;
	struct reg_session *s;
	uint16_t tsih;

	lf_init(&a, CONF);
	s = live_session(&a, 4);
	tsih = reg_tsih(s);
	lf_second(&b, &a);
	REQUIRE_EQ(first_request(&a, tsih, 3, 0x9a), LOGIN_CONTINUE);
	REQUIRE_EQ(first_request(&b, tsih, 3, 0x9a), LOGIN_CONTINUE);
	REQUIRE_EQ(last_request(&a, tsih, 3, 0x9a), LOGIN_DONE);
	CHECK_EQ(last_request(&b, tsih, 3, 0x9a), LOGIN_FAILED);
	CHECK_CONTAINS(login_error(b.l), "connection 3");
	login_free(b.l);
	login_release(a.l);
	lf_free(&a);
}

#define GROUPS	"PortalGroup 1 192.0.2.1\nPortalGroup 5 198.51.100.5 [2001:db8::5]\n"

/* As lf_init, the connection accepted on local (port 3260). */
static void lf_init_at(struct lfx *f, const char *conf, const char *local)
{
	struct login_env env = { 0 };

	memset(f, 0, sizeof(*f));
	config_of(&f->cfg, conf);
	config_resolve_ports(&f->cfg, 3260);
	registry_init(&f->reg);
	f->local = sockaddr_of(local, 3260);
	env.cfg = &f->cfg;
	env.reg = &f->reg;
	env.local = &f->local;
	f->l = login_new(&env, 500);
}

TEST(login_through_a_portal_group_names_its_tag_and_hands_it_on)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	const struct login_outcome *o;

	lf_init_at(&f, GROUPS CONF, "2001:db8::5");
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"SessionType=Normal", "AuthMethod=None", NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	CHECK_STR(rkey(&f, "TargetPortalGroupTag"), "5");
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_DONE);
	o = login_outcome(f.l);
	CHECK_EQ(o->tpgt, 5);
	REQUIRE(o->reserved != NULL);
	CHECK_EQ(o->reserved->tpgt, 5);
	lf_free(&f);
}

TEST(login_on_an_address_of_no_portal_group_is_refused)
{
	struct lfx f;
	struct text t;

	lf_init_at(&f, GROUPS CONF, "203.0.113.1");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(op_login(&f, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NOT_FOUND);
	CHECK_CONTAINS(login_error(f.l), "not offered on this portal");
	lf_free(&f);
}

TEST(login_adding_a_connection_through_another_group_finds_no_session)
{
	struct lfx f;
	struct login_req r;
	struct text t;
	struct reg_session *s;

	/* The session came through group 1; this connection through 5. */
	lf_init_at(&f, GROUPS CONF, "198.51.100.5");
	s = live_session(&f, 2);
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.tsih = reg_tsih(s);
	r.cid = 1;
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	REQUIRE_EQ(step(&f, &r, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NO_SESSION);
	lf_free(&f);
}
