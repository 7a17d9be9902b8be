// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink requests ietd sends to iscsi_trgt, each built and parsed back
 * with libmnl against a copy of the kernel's attribute policy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>

#include "kmsg.h"
#include "test.h"

#define FAMILY	0x1d
#define SEQ	4711

static const struct kmsg_to TO = { .family = FAMILY, .seq = SEQ };

/* What the kernel's iet_policy (kernel/netlink.c) allows per attribute. */
static const struct {
	enum mnl_attr_data_type type;
	size_t max;			/* strings: longest, NUL not counted */
} policy[IET_A_MAX + 1] = {
	[IET_A_TID] = { MNL_TYPE_U32, 0 },
	[IET_A_TARGET_NAME] = { MNL_TYPE_NUL_STRING, IET_NAME_MAX },
	[IET_A_TARGET_PARAMS] = { MNL_TYPE_NESTED, IET_TP_MAX },
	[IET_A_SESSION_PARAMS] = { MNL_TYPE_NESTED, IET_KEY_MAX },
	[IET_A_LUN] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_TYPE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_PATH] = { MNL_TYPE_NUL_STRING, IET_PATH_MAX },
	[IET_A_LUN_IOMODE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_SCSI_ID] = { MNL_TYPE_NUL_STRING, IET_SCSI_ID_MAX },
	[IET_A_LUN_SCSI_SN] = { MNL_TYPE_NUL_STRING, IET_SCSI_SN_MAX },
	[IET_A_LUN_BLOCK_SIZE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_BLOCKS] = { MNL_TYPE_U64, 0 },
	[IET_A_SID] = { MNL_TYPE_U64, 0 },
	[IET_A_INITIATOR_NAME] = { MNL_TYPE_NUL_STRING, IET_NAME_MAX },
	[IET_A_EXP_CMDSN] = { MNL_TYPE_U32, 0 },
	[IET_A_CID] = { MNL_TYPE_U32, 0 },
	[IET_A_CONN_FD] = { MNL_TYPE_U32, 0 },
	[IET_A_STATSN] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_PHYS_BLOCK_SIZE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_ROTATION_RATE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_THIN] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_MODE_SELECT] = { MNL_TYPE_U32, 0 },
	[IET_A_PR_CLEAR] = { MNL_TYPE_U32, 0 },
	[IET_A_TPGT] = { MNL_TYPE_U32, 0 },
	[IET_A_ALUA_STATE] = { MNL_TYPE_U32, 0 },
	[IET_A_LOGOUT_WAIT] = { MNL_TYPE_U32, 0 },
	[IET_A_TPG_REMOTE] = { MNL_TYPE_U32, 0 },
	[IET_A_LUN_RESIZE_FORCE] = { MNL_TYPE_U32, 0 },
};

/* A request taken apart: its header fields and each attribute. */
struct req {
	uint8_t cmd, version;
	uint16_t flags;
	const struct nlattr *tb[IET_A_MAX + 1];
	uint32_t tparams[IET_TP_COUNT];
	uint32_t keys[IET_KEY_COUNT];
	unsigned int nr_tparams, nr_keys;
	const char *bad;		/* why it would be refused */
};

struct nest_ctx {
	struct req *r;
	uint32_t *vals;
	unsigned int max, *nr;
};

static int nest_attr(const struct nlattr *a, void *data)
{
	struct nest_ctx *n = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!type || type > n->max ||
	    mnl_attr_validate(a, MNL_TYPE_U32) < 0) {
		n->r->bad = "bad nested attribute";
		return MNL_CB_ERROR;
	}
	n->vals[type] = mnl_attr_get_u32(a);
	(*n->nr)++;
	return MNL_CB_OK;
}

static int top_attr(const struct nlattr *a, void *data)
{
	struct req *r = data;
	uint16_t type = mnl_attr_get_type(a);
	struct nest_ctx n = { .r = r };
	size_t len;

	if (!type || type > IET_A_MAX || !policy[type].type) {
		r->bad = "attribute the kernel does not take";
		return MNL_CB_ERROR;
	}
	if (r->tb[type]) {
		r->bad = "attribute twice";
		return MNL_CB_ERROR;
	}
	r->tb[type] = a;
	switch (policy[type].type) {
	case MNL_TYPE_NUL_STRING:
		/* As the kernel's NLA_NUL_STRING: a NUL within len + 1. */
		len = mnl_attr_get_payload_len(a);
		if (len > policy[type].max + 1)
			len = policy[type].max + 1;
		if (!len || !memchr(mnl_attr_get_payload(a), '\0', len)) {
			r->bad = "string not NUL-terminated or too long";
			return MNL_CB_ERROR;
		}
		return MNL_CB_OK;
	case MNL_TYPE_NESTED:
		if (type == IET_A_TARGET_PARAMS) {
			n.vals = r->tparams;
			n.nr = &r->nr_tparams;
		} else {
			n.vals = r->keys;
			n.nr = &r->nr_keys;
		}
		n.max = policy[type].max;
		return mnl_attr_parse_nested(a, nest_attr, &n) < 0 ?
			MNL_CB_ERROR : MNL_CB_OK;
	default:
		if (mnl_attr_validate(a, policy[type].type) < 0) {
			r->bad = "scalar of the wrong size";
			return MNL_CB_ERROR;
		}
		return MNL_CB_OK;
	}
}

/* Parse the request at buf (len bytes at most); false if it is not valid. */
static bool parse(const void *buf, size_t len, struct req *r)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *g;

	memset(r, 0, sizeof(*r));
	if (!mnl_nlmsg_ok(nlh, (int)len) || nlh->nlmsg_type != FAMILY ||
	    nlh->nlmsg_seq != SEQ ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*g)) {
		r->bad = "bad header";
		return false;
	}
	g = mnl_nlmsg_get_payload(nlh);
	r->cmd = g->cmd;
	r->version = g->version;
	r->flags = nlh->nlmsg_flags;
	if (mnl_attr_parse(nlh, sizeof(*g), top_attr, r) < 0 && !r->bad)
		r->bad = "attributes do not parse";
	return !r->bad;
}

static uint32_t u32_of(const struct req *r, int type)
{
	return r->tb[type] ? mnl_attr_get_u32(r->tb[type]) : 0xdeadbeef;
}

static uint64_t u64_of(const struct req *r, int type)
{
	return r->tb[type] ? mnl_attr_get_u64(r->tb[type]) : 0xdeadbeef;
}

static const char *str_of(const struct req *r, int type)
{
	return r->tb[type] ? mnl_attr_get_str(r->tb[type]) : NULL;
}

static size_t attrs(const struct req *r)
{
	size_t i, n = 0;

	for (i = 0; i <= IET_A_MAX; i++)
		n += r->tb[i] != NULL;
	return n;
}

/* A heap buffer of exactly len bytes, so ASan sees any write past it. */
static void *exact(size_t len)
{
	void *p = malloc(len);

	if (!p)
		abort();
	memset(p, 0xa5, len);
	return p;
}

static void fill(char *s, size_t n, char c)
{
	memset(s, c, n);
	s[n] = '\0';
}

/* A LUN with every field set, its strings as long as the uapi allows. */
static void longest_lun(struct lun_conf *l)
{
	memset(l, 0, sizeof(*l));
	l->lun = IET_LUN_MAX;
	l->type = IET_LUN_FILEIO;
	l->iomode = IET_IOMODE_WB;
	fill(l->path, IET_PATH_MAX, 'p');
	l->path[0] = '/';
	fill(l->scsi_id, IET_SCSI_ID_MAX, 'i');
	fill(l->scsi_sn, IET_SCSI_SN_MAX, 's');
	l->block_size = 4096;
	l->phys_block_size = IET_PHYS_BLOCK_SIZE_MAX;
	l->rotation_rate = 0xfffe;
	l->thin_off = true;
	l->mode_select = MODE_SELECT_NO;
	l->blocks = 1ull << 40;
}

TEST(kmsg_lun_new_with_a_path_of_iet_path_max_parses_back_whole)
{
	char *buf = exact(KMSG_MAX);
	struct lun_conf l;
	struct req r;

	longest_lun(&l);
	REQUIRE_EQ(kmsg_lun_new(buf, KMSG_MAX, &TO, 7, &l), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_LUN_NEW);
	CHECK_EQ(r.version, IET_GENL_VERSION);
	CHECK_EQ(r.flags, NLM_F_REQUEST | NLM_F_ACK);
	CHECK_EQ(u32_of(&r, IET_A_TID), 7);
	CHECK_EQ(u32_of(&r, IET_A_LUN), IET_LUN_MAX);
	CHECK_EQ(u32_of(&r, IET_A_LUN_TYPE), IET_LUN_FILEIO);
	CHECK_EQ(u32_of(&r, IET_A_LUN_IOMODE), IET_IOMODE_WB);
	CHECK_STR(str_of(&r, IET_A_LUN_PATH), l.path);
	CHECK_EQ(strlen(str_of(&r, IET_A_LUN_PATH)), IET_PATH_MAX);
	CHECK_STR(str_of(&r, IET_A_LUN_SCSI_ID), l.scsi_id);
	CHECK_STR(str_of(&r, IET_A_LUN_SCSI_SN), l.scsi_sn);
	CHECK_EQ(u32_of(&r, IET_A_LUN_BLOCK_SIZE), 4096);
	CHECK_EQ(u64_of(&r, IET_A_LUN_BLOCKS), 1ull << 40);
	CHECK_EQ(u32_of(&r, IET_A_LUN_PHYS_BLOCK_SIZE), IET_PHYS_BLOCK_SIZE_MAX);
	CHECK_EQ(u32_of(&r, IET_A_LUN_ROTATION_RATE), 0xfffe);
	CHECK_EQ(u32_of(&r, IET_A_LUN_THIN), 0);
	/* IOMode=wb lets initiators change the mode pages unless told not. */
	CHECK_EQ(u32_of(&r, IET_A_LUN_MODE_SELECT), 0);
	CHECK_EQ(attrs(&r), 13);
	free(buf);
}

TEST(kmsg_longest_requests_are_exactly_their_computed_sizes)
{
	char *buf = exact(KMSG_MAX);
	const struct nlmsghdr *nlh = (const void *)buf;
	uint32_t tparams[IET_TP_COUNT] = { 0 }, keys[IET_KEY_COUNT] = { 0 };
	char name[IET_NAME_MAX + 1];
	struct lun_conf l;

	fill(name, IET_NAME_MAX, 'n');
	longest_lun(&l);
	REQUIRE_EQ(kmsg_lun_new(buf, KMSG_MAX, &TO, 7, &l), 0);
	CHECK_EQ(nlh->nlmsg_len, KMSG_LUN_MAX);
	REQUIRE_EQ(kmsg_target_new(buf, KMSG_MAX, &TO, 3, name, tparams, keys),
		   0);
	CHECK_EQ(nlh->nlmsg_len, KMSG_TARGET_MAX);
	REQUIRE_EQ(kmsg_session_new(buf, KMSG_MAX, &TO, 3, ~0ull, name, 1,
				    65535, keys), 0);
	CHECK_EQ(nlh->nlmsg_len, KMSG_SESSION_MAX);
	REQUIRE_EQ(kmsg_conn_new(buf, KMSG_MAX, &TO, 3, ~0ull, 65535, 9, 1,
				 keys), 0);
	CHECK_EQ(nlh->nlmsg_len, KMSG_CONN_MAX);
	/* The LUN's path makes it the largest: more than the old 4 KiB. */
	CHECK_EQ(KMSG_MAX, KMSG_LUN_MAX);
	CHECK(KMSG_MAX > (size_t)MNL_SOCKET_BUFFER_SIZE);
	free(buf);
}

TEST(kmsg_request_too_large_for_its_buffer_fails_and_writes_nothing_past_it)
{
	size_t len = MNL_SOCKET_BUFFER_SIZE;	/* what kernel.c used to have */
	unsigned char *buf = exact(len + 64);
	struct lun_conf l;
	size_t i;

	longest_lun(&l);
	CHECK_EQ(kmsg_lun_new(buf, len, &TO, 7, &l), -EMSGSIZE);
	for (i = len; i < len + 64; i++)
		CHECK_EQ(buf[i], 0xa5);
	/* No buffer at all is too small too, not a crash. */
	memset(buf, 0xa5, len + 64);
	CHECK_EQ(kmsg_target_del(buf, 8, &TO, 1), -EMSGSIZE);
	for (i = 8; i < len + 64; i++)
		if (buf[i] != 0xa5)
			break;
	CHECK_EQ(i, len + 64);
	free(buf);
}

TEST(kmsg_string_beyond_every_limit_fails_with_emsgsize)
{
	char *buf = exact(KMSG_MAX);
	size_t n = 2 * KMSG_MAX;
	char *name = malloc(n + 1);

	REQUIRE(name != NULL);
	fill(name, n, 'x');
	CHECK_EQ(kmsg_target_new(buf, KMSG_MAX, &TO, 0, name, NULL, NULL),
		 -EMSGSIZE);
	CHECK_EQ(kmsg_session_new(buf, KMSG_MAX, &TO, 1, 2, name, 0, 1, NULL),
		 -EMSGSIZE);
	free(name);
	free(buf);
}

TEST(kmsg_target_new_parses_back_with_its_parameters)
{
	char *buf = exact(KMSG_MAX);
	uint32_t tparams[IET_TP_COUNT], keys[IET_KEY_COUNT];
	struct req r;
	unsigned int i;

	for (i = 0; i < IET_TP_COUNT; i++)
		tparams[i] = 100 + i;
	for (i = 0; i < IET_KEY_COUNT; i++)
		keys[i] = 200 + i;
	REQUIRE_EQ(kmsg_target_new(buf, KMSG_MAX, &TO, 0, "iqn.x:y", tparams,
				   keys), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_TARGET_NEW);
	/* tid 0: the kernel picks one, so none is sent. */
	CHECK(!r.tb[IET_A_TID]);
	CHECK_STR(str_of(&r, IET_A_TARGET_NAME), "iqn.x:y");
	CHECK_EQ(r.nr_tparams, IET_TP_MAX);
	CHECK_EQ(r.nr_keys, IET_KEY_MAX);
	for (i = 1; i < IET_TP_COUNT; i++)
		CHECK_EQ(r.tparams[i], 100 + i);
	for (i = 1; i < IET_KEY_COUNT; i++)
		CHECK_EQ(r.keys[i], 200 + i);
	REQUIRE_EQ(kmsg_target_new(buf, KMSG_MAX, &TO, 9, "iqn.x:y", NULL,
				   NULL), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(u32_of(&r, IET_A_TID), 9);
	CHECK_EQ(attrs(&r), 2);
	free(buf);
}

TEST(kmsg_target_set_and_del_parse_back)
{
	char *buf = exact(KMSG_MAX);
	uint32_t keys[IET_KEY_COUNT] = { [IET_KEY_MAX_BURST] = 65536 };
	struct req r;

	REQUIRE_EQ(kmsg_target_set(buf, KMSG_MAX, &TO, 4, NULL, keys), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_TARGET_SET);
	CHECK_EQ(u32_of(&r, IET_A_TID), 4);
	CHECK(!r.tb[IET_A_TARGET_PARAMS]);
	CHECK_EQ(r.keys[IET_KEY_MAX_BURST], 65536);
	REQUIRE_EQ(kmsg_target_del(buf, KMSG_MAX, &TO, 4), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_TARGET_DEL);
	CHECK_EQ(u32_of(&r, IET_A_TID), 4);
	CHECK_EQ(attrs(&r), 1);
	free(buf);
}

TEST(kmsg_nullio_lun_leaves_out_what_is_not_set)
{
	char *buf = exact(KMSG_MAX);
	struct lun_conf l = { .lun = 3, .type = IET_LUN_NULLIO };
	struct req r;

	REQUIRE_EQ(kmsg_lun_new(buf, KMSG_MAX, &TO, 2, &l), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 3);
	CHECK(!r.tb[IET_A_LUN_PATH]);
	CHECK_EQ(u32_of(&r, IET_A_LUN_TYPE), IET_LUN_NULLIO);
	REQUIRE_EQ(kmsg_lun_del(buf, KMSG_MAX, &TO, 2, 3), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_LUN_DEL);
	CHECK_EQ(u32_of(&r, IET_A_LUN), 3);
	free(buf);
}

TEST(kmsg_lun_options_at_the_kernels_defaults_are_left_out)
{
	char *buf = exact(KMSG_MAX);
	struct lun_conf l = { .lun = 1, .type = IET_LUN_FILEIO, .path = "/a",
			      .block_size = 4096 };
	struct req r;

	/* A module older than them takes such a LUN as it always did. */
	l.phys_block_size = 4096;
	REQUIRE_EQ(kmsg_lun_new(buf, KMSG_MAX, &TO, 2, &l), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK(!r.tb[IET_A_LUN_PHYS_BLOCK_SIZE]);
	CHECK(!r.tb[IET_A_LUN_ROTATION_RATE]);
	CHECK(!r.tb[IET_A_LUN_THIN]);
	CHECK_EQ(u32_of(&r, IET_A_LUN_BLOCK_SIZE), 4096);

	l.block_size = 512;
	l.rotation_rate = 1;
	REQUIRE_EQ(kmsg_lun_new(buf, KMSG_MAX, &TO, 2, &l), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(u32_of(&r, IET_A_LUN_PHYS_BLOCK_SIZE), 4096);
	CHECK_EQ(u32_of(&r, IET_A_LUN_ROTATION_RATE), 1);
	CHECK(!r.tb[IET_A_LUN_THIN]);
	free(buf);
}

TEST(kmsg_session_and_connection_requests_parse_back)
{
	char *buf = exact(KMSG_MAX);
	uint32_t keys[IET_KEY_COUNT] = { [IET_KEY_HEADER_DIGEST] = 1 };
	uint64_t sid = 0x123456789abcull << 16 | 0xfffe;
	struct req r;

	REQUIRE_EQ(kmsg_session_new(buf, KMSG_MAX, &TO, 1, sid, "iqn.i:1", 77,
				    1, keys), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_SESSION_NEW);
	CHECK_EQ(u64_of(&r, IET_A_SID), sid);
	CHECK_STR(str_of(&r, IET_A_INITIATOR_NAME), "iqn.i:1");
	CHECK_EQ(u32_of(&r, IET_A_EXP_CMDSN), 77);
	CHECK_EQ(r.keys[IET_KEY_HEADER_DIGEST], 1);
	REQUIRE_EQ(kmsg_conn_new(buf, KMSG_MAX, &TO, 1, sid, 65535, 12, 99,
				 keys), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_CONN_NEW);
	CHECK_EQ(u32_of(&r, IET_A_CID), 65535);
	CHECK_EQ(u32_of(&r, IET_A_CONN_FD), 12);
	CHECK_EQ(u32_of(&r, IET_A_STATSN), 99);
	REQUIRE_EQ(kmsg_conn_del(buf, KMSG_MAX, &TO, 1, sid, 2), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_CONN_DEL);
	CHECK_EQ(attrs(&r), 3);
	REQUIRE_EQ(kmsg_session_del(buf, KMSG_MAX, &TO, 1, sid), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_SESSION_DEL);
	CHECK_EQ(u64_of(&r, IET_A_SID), sid);
	free(buf);
}

TEST(kmsg_logout_request_names_only_its_scope)
{
	char *buf = exact(KMSG_MAX);
	uint64_t sid = 0x123456789abcull << 16 | 0xfffe;
	struct req r;

	/* A whole target: no group, session or connection. */
	REQUIRE_EQ(kmsg_logout_req(buf, KMSG_MAX, &TO, 3, 0, 0, 5, 10), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_LOGOUT_REQ);
	CHECK_EQ(r.flags, NLM_F_REQUEST | NLM_F_ACK);
	CHECK_EQ(attrs(&r), 2);
	CHECK_EQ(u32_of(&r, IET_A_TID), 3);
	CHECK_EQ(u32_of(&r, IET_A_LOGOUT_WAIT), 10);
	REQUIRE_EQ(kmsg_logout_req(buf, KMSG_MAX, &TO, 3, 2, 0, -1, 1), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 3);
	CHECK_EQ(u32_of(&r, IET_A_TPGT), 2);
	/* A session's connection 0 is a connection, not "all". */
	REQUIRE_EQ(kmsg_logout_req(buf, KMSG_MAX, &TO, 3, 0, sid, 0, 60), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 4);
	CHECK_EQ(u64_of(&r, IET_A_SID), sid);
	CHECK_EQ(u32_of(&r, IET_A_CID), 0);
	REQUIRE_EQ(kmsg_logout_req(buf, KMSG_MAX, &TO, 3, 0, sid, -1, 60), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 3);
	CHECK(!r.tb[IET_A_CID]);
	free(buf);
}

TEST(kmsg_tpg_set_says_a_groups_kind_only_when_asked_to)
{
	char *buf = exact(KMSG_MAX);
	struct req r;

	/* ietadm's state change: the group keeps its kind. */
	REQUIRE_EQ(kmsg_tpg_set(buf, KMSG_MAX, &TO, 3, 2, IET_ALUA_STANDBY,
				-1), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_TPG_SET);
	CHECK_EQ(attrs(&r), 3);
	CHECK_EQ(u32_of(&r, IET_A_TPGT), 2);
	CHECK_EQ(u32_of(&r, IET_A_ALUA_STATE), IET_ALUA_STANDBY);
	CHECK(!r.tb[IET_A_TPG_REMOTE]);
	/* A plan's: the other node's, in the kernel's default state. */
	REQUIRE_EQ(kmsg_tpg_set(buf, KMSG_MAX, &TO, 3, 2, IET_ALUA_UNSPEC, 1),
		   0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 3);
	CHECK(!r.tb[IET_A_ALUA_STATE]);
	CHECK_EQ(u32_of(&r, IET_A_TPG_REMOTE), 1);
	REQUIRE_EQ(kmsg_tpg_set(buf, KMSG_MAX, &TO, 3, 2, IET_ALUA_UNSPEC, 0),
		   0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(u32_of(&r, IET_A_TPG_REMOTE), 0);
	free(buf);
}

TEST(kmsg_lun_set_sends_a_size_and_force_only_when_given)
{
	char *buf = exact(KMSG_MAX);
	struct req r;

	/* Resize=backing: the LUN alone. */
	REQUIRE_EQ(kmsg_lun_set(buf, KMSG_MAX, &TO, 3, 7, 0, false), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_LUN_SET);
	CHECK_EQ(attrs(&r), 2);
	CHECK_EQ(u32_of(&r, IET_A_LUN), 7);
	CHECK(!r.tb[IET_A_LUN_BLOCKS]);
	CHECK(!r.tb[IET_A_LUN_RESIZE_FORCE]);
	REQUIRE_EQ(kmsg_lun_set(buf, KMSG_MAX, &TO, 3, 7, 1ULL << 40, true), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(attrs(&r), 4);
	CHECK_EQ(u64_of(&r, IET_A_LUN_BLOCKS), 1ULL << 40);
	CHECK_EQ(u32_of(&r, IET_A_LUN_RESIZE_FORCE), 1);
	free(buf);
}

TEST(kmsg_dump_is_flagged_and_names_its_target)
{
	char *buf = exact(KMSG_MAX);
	struct req r;

	REQUIRE_EQ(kmsg_dump(buf, KMSG_MAX, &TO, IET_CMD_TARGET_GET, 0), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.flags, NLM_F_REQUEST | NLM_F_DUMP);
	CHECK_EQ(attrs(&r), 0);
	REQUIRE_EQ(kmsg_dump(buf, KMSG_MAX, &TO, IET_CMD_LUN_GET, 5), 0);
	REQUIRE(parse(buf, KMSG_MAX, &r));
	CHECK_EQ(r.cmd, IET_CMD_LUN_GET);
	CHECK_EQ(u32_of(&r, IET_A_TID), 5);
	free(buf);
}

static int family_name(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_NAME &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		*(const char **)data = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

TEST(kmsg_family_lookup_asks_the_controller_by_name)
{
	char buf[64];
	const struct nlmsghdr *nlh = (const void *)buf;
	const struct genlmsghdr *g;
	const char *name = NULL;

	REQUIRE_EQ(kmsg_get_family(buf, sizeof(buf), 3, IET_GENL_NAME), 0);
	CHECK(mnl_nlmsg_ok(nlh, sizeof(buf)));
	CHECK_EQ(nlh->nlmsg_type, GENL_ID_CTRL);
	CHECK_EQ(nlh->nlmsg_seq, 3);
	g = mnl_nlmsg_get_payload(nlh);
	CHECK_EQ(g->cmd, CTRL_CMD_GETFAMILY);
	mnl_attr_parse(nlh, sizeof(*g), family_name, &name);
	CHECK_STR(name, IET_GENL_NAME);
}
