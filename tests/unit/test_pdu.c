// SPDX-License-Identifier: GPL-2.0
/* BHS encoding and decoding of the PDUs ietd handles (RFC 7143 11). */
#include "helpers.h"
#include "pdu.h"
#include "test.h"

TEST(login_request_encodes_fields_at_rfc_offsets)
{
	struct login_req r;
	uint8_t b[BHS_LEN];

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	r.dlength = 0x010203;
	r.tsih = 0xabcd;
	r.cid = 0x0102;
	r.exp_statsn = 0x11223344;
	login_req_encode(&r, b);
	CHECK_EQ(b[0], 0x43);		/* I bit + opcode 0x03 */
	CHECK_EQ(b[1], 0x87);		/* T, CSG 1, NSG 3 */
	CHECK_EQ(b[5], 1);
	CHECK_EQ(b[6], 2);
	CHECK_EQ(b[7], 3);
	CHECK_EQ(b[8], 0x80);		/* ISID */
	CHECK_EQ(b[14], 0xab);
	CHECK_EQ(b[15], 0xcd);
	CHECK_EQ(b[16], 0x00);		/* ITT 0x1000 */
	CHECK_EQ(b[18], 0x10);
	CHECK_EQ(b[20], 0x01);
	CHECK_EQ(b[21], 0x02);
	CHECK_EQ(b[27], 77);		/* CmdSN */
	CHECK_EQ(b[28], 0x11);
}

TEST(login_request_round_trips)
{
	struct login_req r, d;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	login_req_init(&r, false, STAGE_SECURITY, 0);
	r.cont = true;
	r.dlength = 100;
	login_req_encode(&r, b);
	REQUIRE(login_req_decode(b, &d, &why) == 0);
	CHECK(!d.transit && d.cont);
	CHECK_EQ(d.csg, 0);
	CHECK_EQ(d.dlength, 100);
	CHECK_EQ(d.itt, r.itt);
	CHECK_EQ(d.cmdsn, 77);
	CHECK(!memcmp(d.isid, r.isid, 6));
	CHECK_EQ(isid_value(d.isid), 0x80123456789aull);
}

TEST(login_request_without_i_bit_is_malformed)
{
	struct login_req r;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	login_req_init(&r, true, 0, 1);
	login_req_encode(&r, b);
	b[0] &= ~0x40;
	CHECK(login_req_decode(b, &r, &why) != 0);
	CHECK_CONTAINS(why, "I bit");
}

TEST(login_request_with_reserved_bytes_set_is_malformed)
{
	struct login_req r;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	login_req_init(&r, true, 0, 1);
	login_req_encode(&r, b);
	b[40] = 1;
	CHECK(login_req_decode(b, &r, &why) != 0);
	CHECK_CONTAINS(why, "reserved");
	login_req_encode(&r, b);
	b[1] |= 0x10;
	CHECK(login_req_decode(b, &r, &why) != 0);
}

TEST(login_request_with_ahs_is_malformed)
{
	struct login_req r;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	login_req_init(&r, true, 0, 1);
	login_req_encode(&r, b);
	b[4] = 1;
	CHECK(login_req_decode(b, &r, &why) != 0);
}

TEST(login_response_encodes_status_and_sequence_numbers)
{
	struct login_rsp r = {
		.transit = true, .csg = 1, .nsg = 3, .dlength = 5,
		.tsih = 7, .itt = 9, .statsn = 0x01020304,
		.exp_cmdsn = 0x05060708, .max_cmdsn = 0x090a0b0c,
		.status = LS_NOT_FOUND,
	};
	struct login_rsp d;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	login_rsp_encode(&r, b);
	CHECK_EQ(b[0], 0x23);
	CHECK_EQ(b[1], 0x87);
	CHECK_EQ(b[24], 0x01);
	CHECK_EQ(b[28], 0x05);
	CHECK_EQ(b[32], 0x09);
	CHECK_EQ(b[36], 2);		/* class */
	CHECK_EQ(b[37], 3);		/* detail */
	REQUIRE(login_rsp_decode(b, &d, &why) == 0);
	CHECK_EQ(d.status, LS_NOT_FOUND);
	CHECK_EQ(d.tsih, 7);
	CHECK_EQ(d.statsn, 0x01020304);
}

TEST(text_request_round_trips_and_checks_f_and_c)
{
	struct text_req r = {
		.immediate = false, .final = true, .dlength = 16,
		.itt = 5, .ttt = RSVD_TAG, .cmdsn = 10, .exp_statsn = 20,
	};
	struct text_req d;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	text_req_encode(&r, b);
	CHECK_EQ(b[0], 0x04);
	CHECK_EQ(b[1], 0x80);
	REQUIRE(text_req_decode(b, &d, &why) == 0);
	CHECK(d.final && !d.cont);
	CHECK_EQ(d.ttt, RSVD_TAG);
	CHECK_EQ(d.cmdsn, 10);
	b[1] = 0xc0;
	CHECK(text_req_decode(b, &d, &why) != 0);
	CHECK_CONTAINS(why, "F and C");
}

TEST(text_response_round_trips)
{
	struct text_rsp r = {
		.cont = true, .dlength = 8192, .itt = 5, .ttt = 3,
		.statsn = 1, .exp_cmdsn = 2, .max_cmdsn = 3,
	};
	struct text_rsp d;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	text_rsp_encode(&r, b);
	CHECK_EQ(b[0], 0x24);
	CHECK_EQ(b[1], 0x40);
	REQUIRE(text_rsp_decode(b, &d, &why) == 0);
	CHECK(d.cont && !d.final);
	CHECK_EQ(d.dlength, 8192);
	CHECK_EQ(d.ttt, 3);
}

TEST(logout_request_and_response_round_trip)
{
	struct logout_req q = { .immediate = true, .reason = 1, .itt = 8,
				.cid = 3, .cmdsn = 4, .exp_statsn = 5 };
	struct logout_rsp p = { .response = LOGOUT_CID_NOT_FOUND, .itt = 8,
				.statsn = 6, .exp_cmdsn = 4, .max_cmdsn = 4,
				.time2wait = 2, .time2retain = 20 };
	struct logout_req dq;
	struct logout_rsp dp;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	logout_req_encode(&q, b);
	CHECK_EQ(b[0], 0x46);
	CHECK_EQ(b[1], 0x81);
	REQUIRE(logout_req_decode(b, &dq, &why) == 0);
	CHECK_EQ(dq.reason, 1);
	CHECK_EQ(dq.cid, 3);
	logout_rsp_encode(&p, b);
	CHECK_EQ(b[0], 0x26);
	CHECK_EQ(b[2], LOGOUT_CID_NOT_FOUND);
	REQUIRE(logout_rsp_decode(b, &dp, &why) == 0);
	CHECK_EQ(dp.time2retain, 20);
	CHECK_EQ(dp.statsn, 6);
}

TEST(logout_request_with_data_is_malformed)
{
	struct logout_req q = { .immediate = true };
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	logout_req_encode(&q, b);
	b[7] = 4;
	CHECK(logout_req_decode(b, &q, &why) != 0);
}

TEST(reject_carries_reason_and_reserved_itt)
{
	struct reject r = { .reason = REJECT_PROTOCOL_ERROR, .statsn = 9 };
	struct reject d;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	reject_encode(&r, b);
	CHECK_EQ(b[0], 0x3f);
	CHECK_EQ(b[2], REJECT_PROTOCOL_ERROR);
	CHECK_EQ(b[7], BHS_LEN);
	CHECK_EQ(b[16], 0xff);
	REQUIRE(reject_decode(b, &d, &why) == 0);
	CHECK_EQ(d.statsn, 9);
}

TEST(nop_out_and_nop_in_round_trip)
{
	struct nop_out o = { .immediate = true, .dlength = 4, .itt = 1,
			     .ttt = RSVD_TAG, .cmdsn = 2 };
	struct nop_in i = { .dlength = 4, .itt = 1, .ttt = RSVD_TAG,
			    .statsn = 3 };
	struct nop_out d;
	struct nop_in di;
	const char *why = NULL;
	uint8_t b[BHS_LEN];

	nop_out_encode(&o, b);
	REQUIRE(nop_out_decode(b, &d, &why) == 0);
	CHECK_EQ(d.itt, 1);
	nop_in_encode(&i, b);
	REQUIRE(nop_in_decode(b, &di, &why) == 0);
	CHECK_EQ(di.statsn, 3);
}

TEST(sid_is_isid_shifted_over_tsih)
{
	CHECK_EQ(make_sid(0x80123456789aull, 0x0102), 0x80123456789a0102ull);
}
