// SPDX-License-Identifier: GPL-2.0
/*
 * iSNSP as ietd builds it and reads it (isns_pdu.c), and iSNSAccessControl
 * deciding logins and SendTargets from what the server said (isns_acl.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "discovery.h"
#include "helpers.h"
#include "isns_acl.h"
#include "isns_pdu.h"
#include "test.h"

static struct isns_msg m;

/* A TLV into b at *off; a string gets its NUL and padding. */
static void tlv(uint8_t *b, size_t *off, uint32_t tag, const void *v,
		uint32_t len)
{
	uint32_t be = htonl(tag), bl = htonl(len);

	memcpy(b + *off, &be, 4);
	memcpy(b + *off + 4, &bl, 4);
	if (len)
		memcpy(b + *off + 8, v, len);
	*off += 8 + len;
}

static void str(uint8_t *b, size_t *off, uint32_t tag, const char *s)
{
	char v[256] = { 0 };
	size_t n = strlen(s);

	memcpy(v, s, n);
	tlv(b, off, tag, v, (n + 4) & ~(size_t)3);
}

static void u32(uint8_t *b, size_t *off, uint32_t tag, uint32_t v)
{
	uint32_t be = htonl(v);

	tlv(b, off, tag, &be, 4);
}

static uint16_t be16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/* The tags of a built message's payload, as "1 2 0 32 ". */
static const char *tags_of(const struct isns_msg *msg)
{
	static char out[8192];
	struct isns_iter it;
	struct isns_tlv t;
	size_t n = 0;

	out[0] = '\0';
	isns_iter_init(&it, msg->buf + ISNS_HDR_LEN, msg->len - ISNS_HDR_LEN);
	while (isns_iter_next(&it, &t) > 0 && n < sizeof(out) - 16)
		n += snprintf(out + n, sizeof(out) - n, "%u ", t.tag);
	return out;
}

TEST(isns_registration_carries_entity_portal_targets_and_their_groups)
{
	struct isns_portal p = { .addr = sockaddr_of("192.0.2.1", 3260),
				 .tag = 7 };
	struct isns_node nodes[2] = {
		{ .name = TARGET1, .alias = "disk one" },
		{ .name = TARGET2 },
	};
	struct isns_entity e = {
		.eid = "ietd:host:3260", .portals = &p, .nr_portals = 1,
		.nodes = nodes, .nr_nodes = 2, .scn_port = 40000,
		.esi_port = 40001, .esi_interval = 60,
	};
	struct isns_hdr h;
	struct isns_iter it;
	struct isns_tlv t;
	const char *s;

	REQUIRE_EQ(isns_build_reg(&m, 9, &e, 0), 2);
	REQUIRE_EQ(isns_hdr_parse(m.buf, m.len, &h), 0);
	CHECK_EQ(h.func, ISNS_DEV_ATTR_REG);
	CHECK_EQ(h.xid, 9);
	CHECK_EQ(h.len, m.len - ISNS_HDR_LEN);
	CHECK_EQ(h.flags, ISNS_F_CLIENT | ISNS_F_REPLACE | ISNS_F_FIRST |
		 ISNS_F_LAST);
	/* Source, key, delimiter; entity, portal with SCN and ESI; nodes. */
	CHECK_STR(tags_of(&m), "32 1 0 1 2 16 17 23 19 20 "
		  "32 33 34 48 49 50 51 32 33 48 49 50 51 ");
	isns_iter_init(&it, m.buf + ISNS_HDR_LEN, m.len - ISNS_HDR_LEN);
	REQUIRE(isns_iter_next(&it, &t) == 1);
	REQUIRE(isns_tlv_name(&t, &s));
	CHECK_STR(s, TARGET1);
	while (isns_iter_next(&it, &t) > 0 && t.tag != ISNS_T_PORTAL_ADDR)
		;
	/* IPv4 as an IPv4-mapped IPv6 address. */
	REQUIRE_EQ(t.len, 16);
	CHECK(!memcmp(t.val, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc0\0\2\1", 16));
}

TEST(isns_registration_without_scn_port_has_no_scn_or_esi)
{
	struct isns_portal p = { .addr = sockaddr_of("::1", 3260), .tag = 1 };
	struct isns_node n = { .name = TARGET1 };
	struct isns_entity e = {
		.eid = "e", .portals = &p, .nr_portals = 1, .nodes = &n,
		.nr_nodes = 1, .esi_interval = 60,
	};

	REQUIRE_EQ(isns_build_reg(&m, 1, &e, 0), 1);
	CHECK_STR(tags_of(&m), "32 1 0 1 2 16 17 32 33 48 49 50 51 ");
}

/* A file of many targets is registered in as many PDUs as it takes. */
TEST(isns_registration_splits_what_one_pdu_cannot_hold)
{
	static struct isns_node nodes[600];
	struct isns_portal p[2] = {
		{ .addr = sockaddr_of("192.0.2.1", 3260), .tag = 1 },
		{ .addr = sockaddr_of("192.0.2.2", 3260), .tag = 2 },
	};
	struct isns_entity e = {
		.eid = "e", .portals = p, .nr_portals = 2, .nodes = nodes,
		.nr_nodes = 600, .scn_port = 1,
	};
	size_t first = 0, pdus = 0;
	int n;

	for (n = 0; n < 600; n++) {
		snprintf(nodes[n].name, sizeof(nodes[n].name),
			 "iqn.2001-04.com.example:%0190d", n);
		snprintf(nodes[n].alias, sizeof(nodes[n].alias), "alias %d", n);
	}
	while (first < 600) {
		n = isns_build_reg(&m, 1, &e, first);
		REQUIRE(n > 0);
		CHECK(m.len <= ISNS_SEND_MAX);
		/* Only the first replaces, and carries the portals. */
		CHECK_EQ(!!(be16(m.buf + 6) & ISNS_F_REPLACE), first == 0);
		CHECK_EQ(!!strstr(tags_of(&m), " 16 17 23 "), first == 0);
		first += n;
		pdus++;
	}
	CHECK_EQ(first, 600);
	CHECK(pdus > 1);
	CHECK_EQ(isns_build_reg(&m, 1, &e, 600), -EINVAL);
}

TEST(isns_header_refuses_what_ietd_does_not_take)
{
	uint8_t b[ISNS_HDR_LEN] = { 0, 1, 0x80, 2, 0, 8, 0x0c, 0, 0, 5, 0, 0 };
	struct isns_hdr h;

	CHECK_EQ(isns_hdr_parse(b, 11, &h), -EAGAIN);
	REQUIRE_EQ(isns_hdr_parse(b, sizeof(b), &h), 0);
	CHECK_EQ(h.func, 0x8002);
	CHECK_EQ(h.len, 8);
	CHECK_EQ(h.xid, 5);
	b[1] = 2;			/* version 2 */
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
	b[1] = 1;
	b[5] = 7;			/* not a multiple of 4 */
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
	b[4] = 0xff;			/* 65535 + 3: beyond what fits */
	b[5] = 0xff;
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
	b[4] = 0;
	b[5] = 8;
	b[6] = 0x04;			/* FIRST without LAST: several PDUs */
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
	b[6] = 0x0c;
	b[11] = 1;			/* a later PDU of a message */
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
	b[11] = 0;
	b[6] = 0x2c;			/* an authentication block */
	CHECK_EQ(isns_hdr_parse(b, sizeof(b), &h), -EPROTO);
}

TEST(isns_attribute_lengths_never_run_past_the_payload)
{
	uint8_t b[64];
	struct isns_iter it;
	struct isns_tlv t;
	size_t off = 0;

	u32(b, &off, 6, 600);
	/* A length that, added to a pointer, would wrap. */
	u32(b, &off, 7, 0);
	b[off - 8] = b[off - 7] = b[off - 6] = b[off - 5] = 0xff;
	b[off - 4] = 0xff;
	isns_iter_init(&it, b, off);
	CHECK_EQ(isns_iter_next(&it, &t), 1);
	CHECK_EQ(isns_iter_next(&it, &t), -EBADMSG);
	/* A header cut short. */
	isns_iter_init(&it, b, 16);
	CHECK_EQ(isns_iter_next(&it, &t), 1);
	CHECK_EQ(isns_iter_next(&it, &t), -EBADMSG);
	isns_iter_init(&it, b, 8 + 4);
	CHECK_EQ(isns_iter_next(&it, &t), 1);
	CHECK_EQ(isns_iter_next(&it, &t), 0);
}

TEST(isns_names_must_be_terminated_printable_and_short)
{
	uint8_t b[512];
	struct isns_iter it;
	struct isns_tlv t;
	const char *s;
	size_t off = 0;
	char big[240];

	tlv(b, &off, 32, "abcd", 4);		/* no NUL */
	tlv(b, &off, 32, "ab\ncd\0\0\0", 8);	/* a newline */
	tlv(b, &off, 32, "\0\0\0\0", 4);	/* empty */
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	tlv(b, &off, 32, big, sizeof(big));	/* 239 bytes */
	str(b, &off, 32, TARGET1);
	isns_iter_init(&it, b, off);
	REQUIRE(isns_iter_next(&it, &t) == 1);
	CHECK(!isns_tlv_name(&t, &s));
	REQUIRE(isns_iter_next(&it, &t) == 1);
	CHECK(!isns_tlv_name(&t, &s));
	REQUIRE(isns_iter_next(&it, &t) == 1);
	CHECK(!isns_tlv_name(&t, &s));
	REQUIRE(isns_iter_next(&it, &t) == 1);
	CHECK(!isns_tlv_name(&t, &s));
	REQUIRE(isns_iter_next(&it, &t) == 1);
	REQUIRE(isns_tlv_name(&t, &s));
	CHECK_STR(s, TARGET1);
}

#define I1	"iqn.1993-08.org.debian:01:one"
#define I2	"iqn.1993-08.org.debian:01:two"
#define I3	"iqn.1993-08.org.debian:01:three"

/* A DevAttrQryRsp's status and attributes, as isnsd sends them. */
static size_t dd_answer(uint8_t *b, bool with_other_dd)
{
	size_t off = 4;

	memset(b, 0, 4);
	tlv(b, &off, ISNS_T_DD_ID, NULL, 0);		/* the key, echoed */
	tlv(b, &off, ISNS_T_DELIMITER, NULL, 0);
	u32(b, &off, ISNS_T_DD_ID, 1);
	str(b, &off, 2066, "dd1");
	u32(b, &off, 2067, 4);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, I2);
	u32(b, &off, 2067, 5);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, "IQN.2001-04.COM.EXAMPLE:DISK1");
	str(b, &off, ISNS_T_DD_MEMBER_NAME, I1);
	u32(b, &off, ISNS_T_DD_ID, 2);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, TARGET1);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, "iqn.1993-08.org.debian:01:ONE");
	if (with_other_dd) {
		/* A domain without the target: none of its business. */
		u32(b, &off, ISNS_T_DD_ID, 3);
		str(b, &off, ISNS_T_DD_MEMBER_NAME, I3);
		str(b, &off, ISNS_T_DD_MEMBER_NAME, TARGET2);
	}
	return off;
}

TEST(isns_dd_members_are_those_of_the_domains_listing_the_target)
{
	uint8_t b[1024];
	size_t len = dd_answer(b, true);
	struct isns_names names;
	struct isns_iter it;
	uint32_t status;

	REQUIRE_EQ(isns_response(b, len, &status, &it), 0);
	CHECK_EQ(status, 0);
	REQUIRE_EQ(isns_dd_members(&it, TARGET1, &names), 0);
	/* Sorted, the target left out, I1 once whatever its case. */
	REQUIRE_EQ(names.nr, 2);
	CHECK_STR(names.v[0], I1);
	CHECK_STR(names.v[1], I2);
	CHECK(isns_names_has(&names, "IQN.1993-08.ORG.DEBIAN:01:TWO"));
	CHECK(!isns_names_has(&names, I3));
	isns_names_free(&names);
	/* From the other target's side, only domain 3 counts. */
	isns_response(b, len, &status, &it);
	REQUIRE_EQ(isns_dd_members(&it, TARGET2, &names), 0);
	REQUIRE_EQ(names.nr, 1);
	CHECK_STR(names.v[0], I3);
	isns_names_free(&names);
}

TEST(isns_dd_members_refuse_a_malformed_answer_whole)
{
	uint8_t b[1024];
	size_t len = dd_answer(b, false), off;
	struct isns_names names;
	struct isns_iter it;
	uint32_t status;

	off = len;
	tlv(b, &off, ISNS_T_DD_MEMBER_NAME, "bad\x01name\0\0\0", 12);
	isns_response(b, off, &status, &it);
	CHECK_EQ(isns_dd_members(&it, TARGET1, &names), -EBADMSG);
	CHECK_EQ(names.nr, 0);
	CHECK(!names.v);
	/* Cut in the middle of an attribute. */
	isns_response(b, len - 2, &status, &it);
	CHECK_EQ(isns_dd_members(&it, TARGET1, &names), -EBADMSG);
	CHECK_EQ(names.nr, 0);
	/* No delimiter: no operating attributes, nobody. */
	off = 4;
	u32(b, &off, ISNS_T_DD_ID, 1);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, TARGET1);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, I1);
	isns_response(b, off, &status, &it);
	CHECK_EQ(isns_dd_members(&it, TARGET1, &names), 0);
	CHECK_EQ(names.nr, 0);
	CHECK_EQ(isns_response(b, 3, &status, &it), -EBADMSG);
}

TEST(isns_dd_members_are_bounded)
{
	static uint8_t b[ISNS_PAYLOAD_MAX * 8];
	struct isns_names names;
	struct isns_iter it;
	size_t off = 4;
	uint32_t status;
	char name[64];
	int i;

	memset(b, 0, 4);
	tlv(b, &off, ISNS_T_DELIMITER, NULL, 0);
	u32(b, &off, ISNS_T_DD_ID, 1);
	str(b, &off, ISNS_T_DD_MEMBER_NAME, TARGET1);
	for (i = 0; i <= ISNS_MEMBERS_MAX; i++) {
		snprintf(name, sizeof(name), "iqn.2001-04.com.example:i%d", i);
		str(b, &off, ISNS_T_DD_MEMBER_NAME, name);
	}
	isns_response(b, off, &status, &it);
	CHECK_EQ(isns_dd_members(&it, TARGET1, &names), -E2BIG);
	CHECK_EQ(names.nr, 0);
}

TEST(isns_scn_is_answered_with_its_destination)
{
	uint8_t b[256];
	char dest[ISNS_NAME_MAX + 1];
	struct isns_hdr h;
	size_t off = 0;

	str(b, &off, ISNS_T_ISCSI_NAME, TARGET1);
	tlv(b, &off, ISNS_T_TIMESTAMP, "\0\0\0\0\0\0\0\1", 8);
	u32(b, &off, ISNS_T_SCN_BITMAP, ISNS_SCN_MEMBER_ADDED);
	str(b, &off, ISNS_T_ISCSI_NAME, I1);
	REQUIRE_EQ(isns_scn_parse(b, off, dest, sizeof(dest)), 0);
	CHECK_STR(dest, TARGET1);
	REQUIRE_EQ(isns_build_scn_rsp(&m, 77, dest), 0);
	REQUIRE_EQ(isns_hdr_parse(m.buf, m.len, &h), 0);
	CHECK_EQ(h.func, ISNS_SCN | ISNS_RESPONSE);
	CHECK_EQ(h.xid, 77);
	/* Status 0, then the destination. */
	CHECK(!memcmp(m.buf + ISNS_HDR_LEN, "\0\0\0\0\0\0\0\x20", 8));
	/* Not a name first: not an SCN ietd answers. */
	off = 0;
	u32(b, &off, ISNS_T_SCN_BITMAP, 1);
	CHECK_EQ(isns_scn_parse(b, off, dest, sizeof(dest)), -EBADMSG);
}

TEST(isns_esi_is_answered_with_its_attributes)
{
	uint8_t b[256];
	struct isns_hdr h;
	size_t off = 0;

	tlv(b, &off, ISNS_T_TIMESTAMP, "\0\0\0\0\0\0\0\1", 8);
	str(b, &off, ISNS_T_EID, "ietd:host:3260");
	REQUIRE_EQ(isns_build_esi_rsp(&m, 3, b, off), 0);
	REQUIRE_EQ(isns_hdr_parse(m.buf, m.len, &h), 0);
	CHECK_EQ(h.func, ISNS_ESI | ISNS_RESPONSE);
	CHECK_EQ(h.len, 4 + off);
	CHECK(!memcmp(m.buf + ISNS_HDR_LEN + 4, b, off));
	CHECK_EQ(isns_build_esi_rsp(&m, 3, b, off - 1), -EBADMSG);
	CHECK_EQ(isns_build_esi_rsp(&m, 3, b, ISNS_PAYLOAD_MAX), -EMSGSIZE);
}

static struct isns_names names_of(const char *a, const char *b)
{
	struct isns_names n = { calloc(2, sizeof(*n.v)), 0 };

	if (!n.v)
		abort();
	if (a)
		strcpy(n.v[n.nr++], a);
	if (b)
		strcpy(n.v[n.nr++], b);
	return n;
}

TEST(isns_acl_is_unknown_until_the_server_answers_and_after_it_is_lost)
{
	struct isns_names n = names_of(I1, I2);

	CHECK_EQ(isns_acl_check(TARGET1, I1), ISNS_UNKNOWN);
	REQUIRE_EQ(isns_acl_set(TARGET1, &n), 0);
	CHECK(!n.v);
	CHECK_EQ(isns_acl_check(TARGET1, I1), ISNS_ADMIT);
	CHECK_EQ(isns_acl_check("IQN.2001-04.com.example:DISK1", I2),
		 ISNS_ADMIT);
	CHECK_EQ(isns_acl_check(TARGET1, I3), ISNS_NOT_IN_DD);
	CHECK_EQ(isns_acl_check(TARGET2, I1), ISNS_UNKNOWN);
	CHECK_EQ(isns_acl_count(TARGET1), 2);
	n = names_of(I3, NULL);
	REQUIRE_EQ(isns_acl_set(TARGET1, &n), 0);
	CHECK_EQ(isns_acl_check(TARGET1, I1), ISNS_NOT_IN_DD);
	CHECK_EQ(isns_acl_check(TARGET1, I3), ISNS_ADMIT);
	isns_acl_forget(TARGET1);
	CHECK_EQ(isns_acl_check(TARGET1, I3), ISNS_UNKNOWN);
	n = names_of(NULL, NULL);
	REQUIRE_EQ(isns_acl_set(TARGET2, &n), 0);
	CHECK_EQ(isns_acl_check(TARGET2, I1), ISNS_NOT_IN_DD);
	isns_acl_clear();
	CHECK_EQ(isns_acl_check(TARGET2, I1), ISNS_UNKNOWN);
	CHECK_EQ(isns_acl_count(TARGET2), -1);
}

#define AC_CONF	"iSNSServer 192.0.2.99\niSNSAccessControl Yes\n" \
		"Target " TARGET1 "\n Lun 0 Type=nullio\n" \
		"Target " TARGET2 "\n Lun 0 Type=nullio\n"

TEST(login_waits_for_no_server_and_is_refused_until_it_admits)
{
	struct fixture fx;
	struct isns_names n;

	fx_init(&fx, AC_CONF);
	/* No answer yet: refused at once, not held. */
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET1), LS_AUTHZ_FAILED);
	n = names_of(I1, NULL);
	REQUIRE_EQ(isns_acl_set(TARGET1, &n), 0);
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET1), LS_AUTHZ_FAILED);
	n = names_of(INITIATOR, NULL);
	REQUIRE_EQ(isns_acl_set(TARGET1, &n), 0);
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET1), LS_SUCCESS);
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET2), LS_AUTHZ_FAILED);
	isns_acl_clear();
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET1), LS_AUTHZ_FAILED);
	fx_free(&fx);
}

TEST(login_ignores_isns_without_access_control)
{
	struct fixture fx;

	fx_init(&fx, "iSNSServer 192.0.2.99\nTarget " TARGET1
		"\n Lun 0 Type=nullio\n");
	CHECK_EQ(fx_login_status(&fx, "127.0.0.1", TARGET1), LS_SUCCESS);
	fx_free(&fx);
}

/* The targets SendTargets=All lists, as "name name ". */
static const char *listed(const struct config *cfg)
{
	static char names[1024];
	struct sockaddr_storage peer = sockaddr_of("192.0.2.10", 3260);
	struct sockaddr_storage local = sockaddr_of("192.0.2.1", 3260);
	struct st_who who = { INITIATOR, &peer, &local, NULL };
	char err[256];
	struct textbuf tb;
	size_t off = 0, n = 0;

	textbuf_init(&tb, 65536);
	names[0] = '\0';
	if (sendtargets(cfg, "All", &who, &tb, err, sizeof(err)))
		abort();
	while (off < tb.len) {
		const char *p = tb.buf + off;

		if (!strncmp(p, "TargetName=", 11))
			n += snprintf(names + n, sizeof(names) - n, "%s ",
				      p + 11);
		off += strlen(p) + 1;
	}
	textbuf_free(&tb);
	return names;
}

TEST(discovery_lists_only_targets_sharing_a_domain_with_the_initiator)
{
	struct isns_names n;
	struct config cfg;

	config_of(&cfg, AC_CONF);
	CHECK_STR(listed(&cfg), "");
	n = names_of(INITIATOR, NULL);
	REQUIRE_EQ(isns_acl_set(TARGET2, &n), 0);
	CHECK_STR(listed(&cfg), TARGET2 " ");
	cfg.isns_access_control = false;
	CHECK_STR(listed(&cfg), TARGET1 " " TARGET2 " ");
	isns_acl_clear();
	config_free(&cfg);
}
