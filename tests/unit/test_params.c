// SPDX-License-Identifier: GPL-2.0
/* Key negotiation: result functions, Reject, Irrelevant, target offers. */
#include "helpers.h"
#include "params.h"
#include "test.h"

struct negfx {
	struct target_conf t;
	struct neg n;
	struct textbuf out;
};

static void nf_init(struct negfx *f, bool discovery, bool leading)
{
	target_conf_defaults(&f->t);
	neg_init(&f->n, f->t.keys, discovery, leading);
	textbuf_init(&f->out, 65536);
}

/* Offer key=value as the initiator; the target's answer, or NULL. */
static const char *offer(struct negfx *f, const char *key, const char *value)
{
	const struct key_def *k = key_find(key);

	textbuf_reset(&f->out);
	if (!k || neg_operational(&f->n, k, value, false, &f->out))
		return "(failed)";
	return text_get(f->out.buf, f->out.len, key);
}

TEST(neg_header_digest_picks_first_of_initiator_list_the_target_allows)
{
	struct negfx f;

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_NONE | DIGEST_MASK_CRC32C;
	CHECK_STR(offer(&f, "HeaderDigest", "CRC32C,None"), "CRC32C");
	CHECK_EQ(f.n.val[IET_KEY_HEADER_DIGEST], IET_DIGEST_CRC32C);
	textbuf_free(&f.out);
}

TEST(neg_data_digest_none_when_target_allows_only_none)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "DataDigest", "CRC32C,None"), "None");
	CHECK_EQ(f.n.val[IET_KEY_DATA_DIGEST], IET_DIGEST_NONE);
	textbuf_free(&f.out);
}

TEST(neg_digest_without_common_value_is_rejected)
{
	struct negfx f;

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_CRC32C;
	CHECK_STR(offer(&f, "HeaderDigest", "None"), "Reject");
	CHECK_EQ(f.n.val[IET_KEY_HEADER_DIGEST], IET_DIGEST_NONE);
	textbuf_free(&f.out);
}

TEST(neg_digest_list_skips_unknown_values_and_rejects_malformed)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "HeaderDigest", "MD5,None"), "None");
	CHECK_STR(offer(&f, "DataDigest", "None,,CRC32C"), "Reject");
	textbuf_free(&f.out);
}

TEST(neg_max_connections_is_the_minimum)
{
	struct negfx f;

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_MAX_CONNECTIONS] = 4;
	CHECK_STR(offer(&f, "MaxConnections", "8"), "4");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_MAX_CONNECTIONS] = 4;
	CHECK_STR(offer(&f, "MaxConnections", "2"), "2");
	CHECK_EQ(f.n.val[IET_KEY_MAX_CONNECTIONS], 2);
	textbuf_free(&f.out);
}

TEST(neg_numbers_out_of_range_or_malformed_are_rejected_and_keep_defaults)
{
	static const char *const bad[][2] = {
		{ "MaxConnections", "0" }, { "MaxConnections", "65536" },
		{ "MaxBurstLength", "511" }, { "MaxBurstLength", "16777216" },
		{ "FirstBurstLength", "-1" }, { "DefaultTime2Wait", "3601" },
		{ "DefaultTime2Retain", "x" }, { "MaxOutstandingR2T", "0" },
		{ "ErrorRecoveryLevel", "3" }, { "iSCSIProtocolLevel", "32" },
		{ "MaxBurstLength", "" }, { "MaxBurstLength", "0x" },
		{ "MaxBurstLength", "99999999999999999999999" },
		{ "MaxBurstLength", " 512" },
	};
	struct negfx f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nf_init(&f, false, true);
		if (strcmp(offer(&f, bad[i][0], bad[i][1]), "Reject"))
			test_fail(__FILE__, __LINE__, "%s=%s not rejected",
				  bad[i][0], bad[i][1]);
		CHECK_EQ(f.n.val[IET_KEY_MAX_BURST], 262144);
		textbuf_free(&f.out);
	}
}

TEST(neg_numbers_may_be_hexadecimal)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "MaxBurstLength", "0x10000"), "65536");
	textbuf_free(&f.out);
}

TEST(neg_booleans_must_be_yes_or_no_as_written)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "InitialR2T", "yes"), "Reject");
	CHECK_STR(offer(&f, "ImmediateData", "true"), "Reject");
	textbuf_free(&f.out);
}

TEST(neg_initial_r2t_is_or)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "InitialR2T", "No"), "Yes");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_INITIAL_R2T] = 0;
	CHECK_STR(offer(&f, "InitialR2T", "No"), "No");
	CHECK_EQ(f.n.val[IET_KEY_INITIAL_R2T], 0);
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_INITIAL_R2T] = 0;
	CHECK_STR(offer(&f, "InitialR2T", "Yes"), "Yes");
	textbuf_free(&f.out);
}

TEST(neg_immediate_data_is_and)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "ImmediateData", "Yes"), "Yes");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
	CHECK_STR(offer(&f, "ImmediateData", "Yes"), "No");
	CHECK_EQ(f.n.val[IET_KEY_IMMEDIATE_DATA], 0);
	textbuf_free(&f.out);
}

TEST(neg_data_pdu_and_sequence_in_order_are_or)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "DataPDUInOrder", "No"), "Yes");
	CHECK_STR(offer(&f, "DataSequenceInOrder", "No"), "Yes");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_DATA_PDU_INORDER] = 0;
	f.t.keys[IET_KEY_DATA_SEQUENCE_INORDER] = 0;
	CHECK_STR(offer(&f, "DataPDUInOrder", "No"), "No");
	CHECK_STR(offer(&f, "DataSequenceInOrder", "No"), "No");
	textbuf_free(&f.out);
}

TEST(neg_burst_lengths_r2t_and_time2retain_are_minimum)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "MaxBurstLength", "16776192"), "262144");
	CHECK_STR(offer(&f, "FirstBurstLength", "262144"), "65536");
	CHECK_STR(offer(&f, "MaxOutstandingR2T", "8"), "1");
	CHECK_STR(offer(&f, "DefaultTime2Retain", "20"), "0");
	textbuf_free(&f.out);
}

TEST(neg_default_time2wait_is_maximum)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "DefaultTime2Wait", "0"), "2");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "DefaultTime2Wait", "10"), "10");
	textbuf_free(&f.out);
}

TEST(neg_error_recovery_level_is_zero_whatever_is_asked)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "ErrorRecoveryLevel", "2"), "0");
	textbuf_free(&f.out);
}

TEST(neg_first_burst_never_exceeds_max_burst)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_MAX_BURST] = 1048576;
	f.t.keys[IET_KEY_FIRST_BURST] = 1048576;
	CHECK_STR(offer(&f, "MaxBurstLength", "65536"), "65536");
	CHECK_STR(offer(&f, "FirstBurstLength", "262144"), "65536");
	CHECK_STR(offer(&f, "DefaultTime2Retain", "0"), "0");
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK(keys[IET_KEY_FIRST_BURST] <= keys[IET_KEY_MAX_BURST]);
	textbuf_free(&f.out);
}

TEST(neg_finish_fails_when_max_burst_drops_below_first_burst)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_MAX_BURST] = 1048576;
	f.t.keys[IET_KEY_FIRST_BURST] = 1048576;
	f.t.keys[IET_KEY_DEFAULT_TIME2RETAIN] = 20;
	CHECK_STR(offer(&f, "FirstBurstLength", "262144"), "262144");
	CHECK_STR(offer(&f, "MaxBurstLength", "65536"), "65536");
	CHECK(neg_finish(&f.n, keys) != 0);
	CHECK_CONTAINS(f.n.err, "FirstBurstLength=262144 exceeds MaxBurstLength=65536");
	textbuf_free(&f.out);
}

TEST(neg_max_recv_data_segment_length_is_declarative_and_caps_what_we_send)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_MAX_RECV_DSL] = 65536;
	f.t.keys[IET_KEY_MAX_XMIT_DSL] = 131072;
	CHECK(offer(&f, "MaxRecvDataSegmentLength", "262144") == NULL);
	CHECK_EQ(f.out.len, 0);
	neg_declare(&f.n, &f.out);
	CHECK_STR(text_get(f.out.buf, f.out.len, "MaxRecvDataSegmentLength"),
		  "65536");
	neg_offers(&f.n, &f.out);
	offer(&f, "DefaultTime2Retain", "0");
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK_EQ(keys[IET_KEY_MAX_RECV_DSL], 65536);
	CHECK_EQ(keys[IET_KEY_MAX_XMIT_DSL], 131072);
	textbuf_free(&f.out);

	nf_init(&f, false, true);
	CHECK(offer(&f, "MaxRecvDataSegmentLength", "4096") == NULL);
	neg_declare(&f.n, &f.out);
	offer(&f, "DefaultTime2Retain", "0");
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK_EQ(keys[IET_KEY_MAX_XMIT_DSL], 4096);
	textbuf_free(&f.out);
}

TEST(neg_max_recv_data_segment_length_out_of_range_is_rejected)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "MaxRecvDataSegmentLength", "100"), "Reject");
	CHECK_EQ(f.n.init_mrdsl, 8192);
	textbuf_free(&f.out);
}

TEST(neg_obsolete_markers_are_answered_no_and_intervals_reject)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "OFMarker", "Yes"), "No");
	CHECK_STR(offer(&f, "IFMarker", "No"), "No");
	CHECK_STR(offer(&f, "OFMarkInt", "2048~8192"), "Reject");
	CHECK_STR(offer(&f, "IFMarkInt", "2048"), "Reject");
	textbuf_free(&f.out);
}

TEST(neg_protocol_level_is_minimum_with_ours)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "iSCSIProtocolLevel", "2"), "1");
	CHECK_EQ(f.n.protocol_level, 1);
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "iSCSIProtocolLevel", "0"), "0");
	textbuf_free(&f.out);
}

TEST(neg_task_reporting_answers_rfc3720_or_reject)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "TaskReporting", "ResponseFence,RFC3720"), "RFC3720");
	textbuf_free(&f.out);
	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "TaskReporting", "FastAbort"), "Reject");
	textbuf_free(&f.out);
}

TEST(neg_rdma_extensions_are_declined)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "RDMAExtensions", "Yes"), "No");
	textbuf_free(&f.out);
}

TEST(neg_over_long_value_is_rejected)
{
	struct negfx f;
	const struct key_def *k = key_find("MaxBurstLength");

	nf_init(&f, false, true);
	REQUIRE(neg_operational(&f.n, k, "1", true, &f.out) == 0);
	CHECK_STR(text_get(f.out.buf, f.out.len, "MaxBurstLength"), "Reject");
	textbuf_free(&f.out);
}

TEST(neg_session_keys_are_irrelevant_in_discovery)
{
	static const char *const keys[] = {
		"MaxConnections", "InitialR2T", "ImmediateData",
		"MaxBurstLength", "FirstBurstLength", "MaxOutstandingR2T",
		"DataPDUInOrder", "DataSequenceInOrder", "TaskReporting",
	};
	struct negfx f;
	size_t i;

	nf_init(&f, true, true);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(offer(&f, keys[i], "1"), "Irrelevant"))
			test_fail(__FILE__, __LINE__, "%s not Irrelevant", keys[i]);
	CHECK_STR(offer(&f, "HeaderDigest", "None"), "None");
	CHECK_STR(offer(&f, "DefaultTime2Wait", "2"), "2");
	textbuf_free(&f.out);
}

TEST(neg_leading_only_keys_are_irrelevant_on_added_connections)
{
	struct negfx f;

	nf_init(&f, false, false);
	CHECK_STR(offer(&f, "MaxBurstLength", "65536"), "Irrelevant");
	CHECK_STR(offer(&f, "ErrorRecoveryLevel", "0"), "Irrelevant");
	CHECK_STR(offer(&f, "HeaderDigest", "None"), "None");
	textbuf_free(&f.out);
}

TEST(neg_key_sent_twice_fails)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_STR(offer(&f, "MaxBurstLength", "65536"), "65536");
	CHECK_STR(offer(&f, "MaxBurstLength", "65536"), "(failed)");
	CHECK_CONTAINS(f.n.err, "MaxBurstLength sent twice");
	textbuf_free(&f.out);
}

TEST(neg_target_offers_what_its_configuration_needs)
{
	struct negfx f;

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
	f.t.keys[IET_KEY_MAX_BURST] = 65536;
	f.t.keys[IET_KEY_FIRST_BURST] = 16384;
	f.t.keys[IET_KEY_MAX_OUTSTANDING_R2T] = 4;
	f.t.keys[IET_KEY_DATA_DIGEST] = DIGEST_MASK_CRC32C;
	CHECK(neg_wants_operational(&f.n));
	CHECK_EQ(neg_offers(&f.n, &f.out), 6);
	CHECK_STR(text_get(f.out.buf, f.out.len, "ImmediateData"), "No");
	CHECK_STR(text_get(f.out.buf, f.out.len, "MaxBurstLength"), "65536");
	CHECK_STR(text_get(f.out.buf, f.out.len, "FirstBurstLength"), "16384");
	CHECK_STR(text_get(f.out.buf, f.out.len, "MaxOutstandingR2T"), "4");
	CHECK_STR(text_get(f.out.buf, f.out.len, "DataDigest"), "CRC32C");
	CHECK_STR(text_get(f.out.buf, f.out.len, "DefaultTime2Retain"), "0");
	CHECK(text_get(f.out.buf, f.out.len, "HeaderDigest") == NULL);
	CHECK(text_get(f.out.buf, f.out.len, "InitialR2T") == NULL);
	CHECK(neg_pending(&f.n));
	/* Offers are made once. */
	textbuf_reset(&f.out);
	CHECK_EQ(neg_offers(&f.n, &f.out), 0);
	textbuf_free(&f.out);
}

TEST(neg_target_makes_no_offer_for_keys_the_initiator_sent)
{
	struct negfx f;

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
	CHECK_STR(offer(&f, "ImmediateData", "Yes"), "No");
	CHECK_STR(offer(&f, "DefaultTime2Retain", "0"), "0");
	textbuf_reset(&f.out);
	CHECK(!neg_wants_operational(&f.n) || !f.n.declared);
	CHECK_EQ(neg_offers(&f.n, &f.out), 0);
	CHECK(!neg_pending(&f.n));
	textbuf_free(&f.out);
}

TEST(neg_valid_answers_to_target_offers_are_taken)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
	f.t.keys[IET_KEY_MAX_BURST] = 65536;
	f.t.keys[IET_KEY_FIRST_BURST] = 16384;
	f.t.keys[IET_KEY_DATA_DIGEST] = DIGEST_MASK_CRC32C;
	neg_offers(&f.n, &f.out);
	CHECK(offer(&f, "ImmediateData", "No") == NULL);
	CHECK(offer(&f, "MaxBurstLength", "32768") == NULL);
	CHECK(offer(&f, "FirstBurstLength", "16384") == NULL);
	CHECK(offer(&f, "DataDigest", "CRC32C") == NULL);
	CHECK(offer(&f, "DefaultTime2Retain", "0") == NULL);
	CHECK(!neg_pending(&f.n));
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK_EQ(keys[IET_KEY_IMMEDIATE_DATA], 0);
	CHECK_EQ(keys[IET_KEY_MAX_BURST], 32768);
	CHECK_EQ(keys[IET_KEY_DATA_DIGEST], IET_DIGEST_CRC32C);
	textbuf_free(&f.out);
}

TEST(neg_answers_outside_the_result_function_fail)
{
	static const char *const bad[][2] = {
		{ "ImmediateData", "Yes" },	/* AND with our No */
		{ "MaxBurstLength", "131072" },	/* above our minimum */
		{ "DataDigest", "None" },	/* not in our list */
		{ "DataDigest", "CRC32C,None" },	/* a list, not a value */
		{ "DefaultTime2Retain", "5" },
		{ "MaxBurstLength", "lots" },
	};
	struct negfx f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nf_init(&f, false, true);
		f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
		f.t.keys[IET_KEY_MAX_BURST] = 65536;
		f.t.keys[IET_KEY_FIRST_BURST] = 16384;
		f.t.keys[IET_KEY_DATA_DIGEST] = DIGEST_MASK_CRC32C;
		neg_offers(&f.n, &f.out);
		if (strcmp(offer(&f, bad[i][0], bad[i][1]), "(failed)"))
			test_fail(__FILE__, __LINE__, "%s=%s accepted", bad[i][0],
				  bad[i][1]);
		CHECK_CONTAINS(f.n.err, "invalid answer");
		textbuf_free(&f.out);
	}
}

TEST(neg_rejected_offer_leaves_a_default_the_target_refuses)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_IMMEDIATE_DATA] = 0;
	neg_offers(&f.n, &f.out);
	CHECK(offer(&f, "ImmediateData", "Reject") == NULL);
	CHECK(offer(&f, "DefaultTime2Retain", "0") == NULL);
	CHECK(neg_finish(&f.n, keys) != 0);
	CHECK_CONTAINS(f.n.err, "ImmediateData=Yes");
	textbuf_free(&f.out);
}

TEST(neg_offer_answered_by_initiator_proposing_later_is_an_answer)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	/* The initiator raises InitialR2T after we offered No: OR allows Yes. */
	nf_init(&f, false, true);
	f.t.keys[IET_KEY_INITIAL_R2T] = 0;
	neg_offers(&f.n, &f.out);
	CHECK(offer(&f, "InitialR2T", "Yes") == NULL);
	CHECK(offer(&f, "DefaultTime2Retain", "0") == NULL);
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK_EQ(keys[IET_KEY_INITIAL_R2T], 1);
	textbuf_free(&f.out);
}

TEST(neg_defaults_need_only_a_time2retain_offer)
{
	struct negfx f;

	nf_init(&f, false, true);
	CHECK_EQ(neg_offers(&f.n, &f.out), 1);
	CHECK_STR(text_get(f.out.buf, f.out.len, "DefaultTime2Retain"), "0");
	textbuf_free(&f.out);
}

TEST(neg_finish_gives_the_kernel_digest_values_not_masks)
{
	struct negfx f;
	uint32_t keys[IET_KEY_COUNT];

	nf_init(&f, false, true);
	f.t.keys[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_NONE | DIGEST_MASK_CRC32C;
	offer(&f, "HeaderDigest", "CRC32C");
	offer(&f, "DataDigest", "None");
	offer(&f, "DefaultTime2Retain", "0");
	REQUIRE(neg_finish(&f.n, keys) == 0);
	CHECK_EQ(keys[IET_KEY_HEADER_DIGEST], IET_DIGEST_CRC32C);
	CHECK_EQ(keys[IET_KEY_DATA_DIGEST], IET_DIGEST_NONE);
	CHECK_EQ(keys[IET_KEY_MAX_RECV_DSL], 8192);	/* not declared: default */
	textbuf_free(&f.out);
}

TEST(key_names_and_formats_for_ietadm)
{
	char buf[32];

	CHECK_STR(iet_key_name(IET_KEY_MAX_XMIT_DSL), "MaxXmitDataSegmentLength");
	CHECK_STR(iet_key_name(IET_KEY_INITIAL_R2T), "InitialR2T");
	iet_key_format(IET_KEY_INITIAL_R2T, 1, false, buf, sizeof(buf));
	CHECK_STR(buf, "Yes");
	iet_key_format(IET_KEY_HEADER_DIGEST, IET_DIGEST_CRC32C, false, buf,
		       sizeof(buf));
	CHECK_STR(buf, "CRC32C");
	iet_key_format(IET_KEY_DATA_DIGEST, 3, true, buf, sizeof(buf));
	CHECK_STR(buf, "None,CRC32C");
	iet_key_format(IET_KEY_MAX_BURST, 262144, false, buf, sizeof(buf));
	CHECK_STR(buf, "262144");
}
