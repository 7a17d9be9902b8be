// SPDX-License-Identifier: GPL-2.0
/*
 * What iscsi_trgt answers and announces, built with libmnl the way
 * kernel/netlink.c fills its messages, and taken apart by kreply.c: every
 * field read back, and every malformed attribute read as absent.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kmsg.h"
#include "kreply.h"
#include "test.h"

#define FAMILY	0x1d

/* One message of the family being built; 64 KiB like a dump's buffer. */
struct msg {
	union {
		struct nlmsghdr h;
		char b[65536];
	} u;
	struct nlmsghdr *nlh;
};

static struct nlmsghdr *start(struct msg *m, uint16_t type, uint8_t cmd)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->nlh = mnl_nlmsg_put_header(m->u.b);
	m->nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(m->nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = IET_GENL_VERSION;
	return m->nlh;
}

static void put_u32_nest(struct nlmsghdr *nlh, uint16_t type,
			 const uint32_t *vals, unsigned int max)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);
	unsigned int i;

	for (i = 1; i <= max; i++)
		mnl_attr_put_u32(nlh, i, vals[i]);
	mnl_attr_nest_end(nlh, nest);
}

static void put_stats(struct nlmsghdr *nlh, uint64_t cmds, uint64_t rd,
		      uint64_t wr, uint64_t errors)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, IET_A_STATS);

	mnl_attr_put_u64(nlh, IET_STAT_CMDS, cmds);
	mnl_attr_put_u64(nlh, IET_STAT_READ_BYTES, rd);
	mnl_attr_put_u64(nlh, IET_STAT_WRITE_BYTES, wr);
	mnl_attr_put_u64(nlh, IET_STAT_ERRORS, errors);
	mnl_attr_nest_end(nlh, nest);
}

/* A kstate of one target, as a target dump leaves it; kstate_free frees it. */
static struct ktarget *one_target(struct kstate *st, uint32_t tid)
{
	st->targets = calloc(1, sizeof(*st->targets));
	st->nr_targets = st->targets ? 1 : 0;
	if (st->targets)
		st->targets[0].tid = tid;
	return st->targets;
}

TEST(kreply_target_reads_tid_name_parameters_and_keys)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	uint32_t tp[IET_TP_COUNT], keys[IET_KEY_COUNT];
	struct kstate st = { 0 };
	unsigned int i;

	for (i = 0; i < IET_TP_COUNT; i++)
		tp[i] = 100 + i;
	for (i = 0; i < IET_KEY_COUNT; i++)
		keys[i] = 1000 + i;
	mnl_attr_put_u32(nlh, IET_A_TID, 3);
	mnl_attr_put_strz(nlh, IET_A_TARGET_NAME, "iqn.2001-04.com.example:t3");
	put_u32_nest(nlh, IET_A_TARGET_PARAMS, tp, IET_TP_MAX);
	put_u32_nest(nlh, IET_A_SESSION_PARAMS, keys, IET_KEY_MAX);
	REQUIRE_EQ(kreply_target(nlh, &st), 0);
	REQUIRE_EQ(st.nr_targets, 1);
	CHECK_EQ(st.targets[0].tid, 3);
	CHECK_STR(st.targets[0].name, "iqn.2001-04.com.example:t3");
	CHECK_EQ(st.targets[0].tparams[0], 0);
	for (i = 1; i <= IET_TP_MAX; i++)
		CHECK_EQ(st.targets[0].tparams[i], 100 + i);
	for (i = 1; i <= IET_KEY_MAX; i++)
		CHECK_EQ(st.targets[0].keys[i], 1000 + i);
	CHECK_EQ(st.targets[0].luns_closing, 0);
	/* LUN backings still closing, as a kernel with HA pairs counts them. */
	mnl_attr_put_u32(nlh, IET_A_LUNS_CLOSING, 2);
	REQUIRE_EQ(kreply_target(nlh, &st), 0);
	REQUIRE_EQ(st.nr_targets, 2);
	CHECK_EQ(st.targets[1].luns_closing, 2);
	kstate_free(&st);
	CHECK_EQ(st.nr_targets, 0);
}

TEST(kreply_lun_reads_every_field_past_a_pad_attribute)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_LUN_GET);
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 1);
	char path[IET_PATH_MAX + 1];

	REQUIRE(t);
	memset(path, 'p', IET_PATH_MAX);
	path[0] = '/';
	path[IET_PATH_MAX] = '\0';
	mnl_attr_put_u32(nlh, IET_A_TID, 1);
	mnl_attr_put_u32(nlh, IET_A_LUN, 7);
	mnl_attr_put_u32(nlh, IET_A_LUN_TYPE, IET_LUN_BLOCKIO);
	mnl_attr_put_strz(nlh, IET_A_LUN_PATH, path);
	mnl_attr_put_u32(nlh, IET_A_LUN_IOMODE, IET_IOMODE_WB);
	mnl_attr_put_strz(nlh, IET_A_LUN_SCSI_ID, "id-7");
	mnl_attr_put_strz(nlh, IET_A_LUN_SCSI_SN, "sn-7");
	mnl_attr_put_u32(nlh, IET_A_LUN_BLOCK_SIZE, 4096);
	/* nla_put_u64_64bit pads where u64s must be aligned. */
	mnl_attr_put(nlh, IET_A_PAD, 0, NULL);
	mnl_attr_put_u64(nlh, IET_A_LUN_BLOCKS, 1ull << 40);
	put_stats(nlh, 5, 1ull << 33, 12, 1);
	mnl_attr_put_u32(nlh, IET_A_LUN_PHYS_BLOCK_SIZE, 16384);
	mnl_attr_put_u32(nlh, IET_A_LUN_ROTATION_RATE, 15000);
	mnl_attr_put_u32(nlh, IET_A_LUN_THIN, 0);
	mnl_attr_put_u32(nlh, IET_A_LUN_MODE_SELECT, 0);
	REQUIRE_EQ(kreply_lun(nlh, t), 0);
	REQUIRE_EQ(t->nr_luns, 1);
	CHECK_EQ(t->luns[0].conf.lun, 7);
	CHECK_EQ(t->luns[0].conf.type, IET_LUN_BLOCKIO);
	CHECK_EQ(t->luns[0].conf.iomode, IET_IOMODE_WB);
	CHECK_STR(t->luns[0].conf.path, path);
	CHECK_STR(t->luns[0].conf.scsi_id, "id-7");
	CHECK_STR(t->luns[0].conf.scsi_sn, "sn-7");
	CHECK_EQ(t->luns[0].conf.block_size, 4096);
	CHECK_EQ(t->luns[0].conf.blocks, 1ull << 40);
	CHECK_EQ(t->luns[0].conf.phys_block_size, 16384);
	CHECK_EQ(t->luns[0].conf.rotation_rate, 15000);
	CHECK(t->luns[0].conf.thin_off);
	/* Not wb's default: kept as asked for, so that it is written back. */
	CHECK_EQ(t->luns[0].conf.mode_select, MODE_SELECT_NO);
	CHECK(!lun_mode_select(&t->luns[0].conf));
	CHECK_EQ(t->luns[0].stats.cmds, 5);
	CHECK_EQ(t->luns[0].stats.read_bytes, 1ull << 33);
	CHECK_EQ(t->luns[0].stats.write_bytes, 12);
	CHECK_EQ(t->luns[0].stats.errors, 1);
	/* A module without closed backings says nothing: open, then. */
	CHECK_EQ(t->luns[0].backing, IET_LUN_BACKING_UNSPEC);
	mnl_attr_put_u32(nlh, IET_A_LUN_BACKING, IET_LUN_BACKING_CLOSING);
	REQUIRE_EQ(kreply_lun(nlh, t), 0);
	REQUIRE_EQ(t->nr_luns, 2);
	CHECK_EQ(t->luns[1].backing, IET_LUN_BACKING_CLOSING);
	kstate_free(&st);
}

static void put_conn(struct nlmsghdr *nlh, uint32_t cid, const void *peer,
		     size_t alen, uint16_t port)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, IET_A_CONN);

	mnl_attr_put_u32(nlh, IET_A_CID, cid);
	mnl_attr_put_u32(nlh, IET_A_CONN_STATE, IET_CONN_ACTIVE);
	mnl_attr_put(nlh, IET_A_PEER_ADDR, alen, peer);
	mnl_attr_put_u16(nlh, IET_A_PEER_PORT, port);
	mnl_attr_put(nlh, IET_A_LOCAL_ADDR, alen, peer);
	mnl_attr_put_u16(nlh, IET_A_LOCAL_PORT, 3260);
	mnl_attr_nest_end(nlh, nest);
}

static void put_u64_nest(struct nlmsghdr *nlh, uint16_t type,
			 const uint64_t *vals, unsigned int n)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);
	unsigned int i;

	for (i = 0; i < n; i++)
		mnl_attr_put_u64(nlh, i + 1, vals[i]);
	mnl_attr_nest_end(nlh, nest);
}

static void put_hist(struct nlmsghdr *nlh, uint32_t op, uint32_t kind,
		     uint64_t sum, const uint64_t *counts, size_t len)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, IET_STAT_HIST);

	mnl_attr_put_u32(nlh, IET_HIST_OP, op);
	mnl_attr_put_u32(nlh, IET_HIST_KIND, kind);
	mnl_attr_put_u64(nlh, IET_HIST_SUM_NS, sum);
	mnl_attr_put(nlh, IET_HIST_COUNTS, len, counts);
	mnl_attr_nest_end(nlh, nest);
}

/* As kernel/stats.c fills IET_A_STATS, with histograms to skip. */
TEST(kreply_session_reads_counters_by_kind_sense_keys_and_histograms)
{
	uint64_t ops[IET_SOP_NR] = { 10, 20, 3, 4 }, sense[16] = { 0 };
	uint64_t counts[IET_HIST_NR_BUCKETS] = { 0 }, wide[40] = { 0 };
	struct ktarget *t;
	struct nlattr *nest;
	struct nlmsghdr *nlh;
	struct kstate st = { 0 };
	const struct kstats *s;
	struct msg m;

	REQUIRE(t = one_target(&st, 1));
	sense[3] = 2;
	sense[6] = 5;
	counts[0] = 1;
	counts[7] = 8;
	counts[IET_HIST_NR_BUCKETS - 1] = 9;
	wide[0] = 77;
	nlh = start(&m, FAMILY, IET_CMD_SESSION_GET);
	mnl_attr_put_u32(nlh, IET_A_TID, 1);
	mnl_attr_put_u64(nlh, IET_A_SID, 5);
	mnl_attr_put_strz(nlh, IET_A_INITIATOR_NAME, "iqn.x:i");
	nest = mnl_attr_nest_start(nlh, IET_A_STATS);
	mnl_attr_put_u64(nlh, IET_STAT_CMDS, 37);
	mnl_attr_put_u64(nlh, IET_STAT_ERRORS, 9);
	put_u64_nest(nlh, IET_STAT_OP_CMDS, ops, IET_SOP_NR);
	put_u64_nest(nlh, IET_STAT_SENSE_KEYS, sense, 16);
	mnl_attr_put_u64(nlh, IET_STAT_CONFLICTS, 1);
	mnl_attr_put_u64(nlh, IET_STAT_BUSY, 1);
	put_hist(nlh, IET_SOP_WRITE, IET_LAT_BACKEND, 12345, counts,
		 sizeof(counts));
	put_hist(nlh, IET_SOP_READ, IET_LAT_TOTAL, 999, counts, sizeof(counts));
	/* From a module with more buckets, ops or kinds: not ours, skipped. */
	put_hist(nlh, IET_SOP_FLUSH, IET_LAT_TOTAL, 1, wide, sizeof(wide));
	put_hist(nlh, IET_SOP_OTHER, IET_LAT_TOTAL, 1, counts, sizeof(counts));
	put_hist(nlh, IET_SOP_READ, IET_LAT_NR, 1, counts, sizeof(counts));
	mnl_attr_nest_end(nlh, nest);
	REQUIRE_EQ(kreply_session(nlh, t), 0);
	REQUIRE_EQ(t->nr_sessions, 1);
	s = &t->sessions[0].stats;
	CHECK_EQ(s->cmds, 37);
	CHECK_EQ(s->errors, 9);
	CHECK_EQ(s->op_cmds[IET_SOP_READ], 10);
	CHECK_EQ(s->op_cmds[IET_SOP_OTHER], 4);
	CHECK_EQ(s->sense[3], 2);
	CHECK_EQ(s->sense[6], 5);
	CHECK_EQ(s->sense[5], 0);
	CHECK_EQ(s->conflicts, 1);
	CHECK_EQ(s->busy, 1);
	CHECK_EQ(s->hist[IET_LAT_BACKEND][IET_SOP_WRITE].sum_ns, 12345);
	CHECK_EQ(s->hist[IET_LAT_BACKEND][IET_SOP_WRITE].counts[7], 8);
	CHECK_EQ(s->hist[IET_LAT_TOTAL][IET_SOP_READ].sum_ns, 999);
	CHECK_EQ(s->hist[IET_LAT_TOTAL][IET_SOP_READ]
		 .counts[IET_HIST_NR_BUCKETS - 1], 9);
	CHECK_EQ(s->hist[IET_LAT_TOTAL][IET_SOP_FLUSH].sum_ns, 0);
	CHECK_EQ(s->hist[IET_LAT_TOTAL][IET_SOP_FLUSH].counts[0], 0);
	CHECK_EQ(s->hist[IET_LAT_TOTAL][IET_SOP_WRITE].sum_ns, 0);
	kstate_free(&st);
}

TEST(kreply_lun_of_a_module_without_the_lun_options_reads_their_defaults)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_LUN_GET);
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 1);

	REQUIRE(t);
	mnl_attr_put_u32(nlh, IET_A_TID, 1);
	mnl_attr_put_u32(nlh, IET_A_LUN, 0);
	mnl_attr_put_u32(nlh, IET_A_LUN_TYPE, IET_LUN_NULLIO);
	mnl_attr_put_u32(nlh, IET_A_LUN_BLOCK_SIZE, 2048);
	REQUIRE_EQ(kreply_lun(nlh, t), 0);
	/* A THIN of the wrong size is no THIN: thin, as by default. */
	nlh = start(&m, FAMILY, IET_CMD_LUN_GET);
	mnl_attr_put_u32(nlh, IET_A_LUN, 1);
	mnl_attr_put_u32(nlh, IET_A_LUN_BLOCK_SIZE, 512);
	mnl_attr_put_u16(nlh, IET_A_LUN_THIN, 0);
	REQUIRE_EQ(kreply_lun(nlh, t), 0);
	REQUIRE_EQ(t->nr_luns, 2);
	CHECK_EQ(t->luns[0].conf.phys_block_size, 0);
	CHECK_EQ(lun_phys_block_size(&t->luns[0].conf), 2048);
	CHECK_EQ(t->luns[0].conf.rotation_rate, 0);
	CHECK(!t->luns[0].conf.thin_off);
	CHECK(!t->luns[1].conf.thin_off);
	/* A module without it: as IOMode says. */
	CHECK_EQ(t->luns[0].conf.mode_select, MODE_SELECT_DEFAULT);
	kstate_free(&st);
}

TEST(kreply_lun_reads_back_the_lun_options_kmsg_sends)
{
	static union {
		struct nlmsghdr h;
		char b[KMSG_MAX];
	} buf;
	const struct kmsg_to to = { .family = FAMILY, .seq = 1 };
	const struct lun_conf want = {
		.lun = 9, .type = IET_LUN_FILEIO, .iomode = IET_IOMODE_WT,
		.path = "/srv/a.img", .scsi_id = "id", .scsi_sn = "sn",
		.block_size = 512, .phys_block_size = 4096,
		.rotation_rate = 7200, .thin_off = true,
	};
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 3);
	const struct lun_conf *got;

	REQUIRE(t);
	REQUIRE_EQ(kmsg_lun_new(buf.b, sizeof(buf.b), &to, 3, &want), 0);
	REQUIRE_EQ(kreply_lun(&buf.h, t), 0);
	REQUIRE_EQ(t->nr_luns, 1);
	got = &t->luns[0].conf;
	CHECK_EQ(got->lun, 9);
	CHECK_STR(got->path, "/srv/a.img");
	CHECK_EQ(got->block_size, 512);
	CHECK_EQ(got->phys_block_size, 4096);
	CHECK_EQ(got->rotation_rate, 7200);
	CHECK(got->thin_off);
	kstate_free(&st);
}

TEST(kreply_session_reads_its_connections_over_ipv4_and_ipv6)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_SESSION_GET);
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 2);
	struct in_addr v4 = { htonl(0x0a000001) };
	struct in6_addr v6 = IN6ADDR_LOOPBACK_INIT;
	const struct sockaddr_in *sin;
	const struct sockaddr_in6 *sin6;
	struct nlattr *conns;

	REQUIRE(t);
	mnl_attr_put_u32(nlh, IET_A_TID, 2);
	mnl_attr_put_u64(nlh, IET_A_SID, 0x0123456789abcdefull);
	mnl_attr_put_strz(nlh, IET_A_INITIATOR_NAME, "iqn.1993-08.org.debian:01:i");
	put_stats(nlh, 1, 2, 3, 0);
	conns = mnl_attr_nest_start(nlh, IET_A_CONNS);
	put_conn(nlh, 0, &v4, sizeof(v4), 51000);
	put_conn(nlh, 1, &v6, sizeof(v6), 51001);
	mnl_attr_nest_end(nlh, conns);
	REQUIRE_EQ(kreply_session(nlh, t), 0);
	REQUIRE_EQ(t->nr_sessions, 1);
	CHECK_EQ(t->sessions[0].sid, 0x0123456789abcdefull);
	CHECK_STR(t->sessions[0].initiator, "iqn.1993-08.org.debian:01:i");
	/* A module without portal groups leaves the TPGT out: group 1. */
	CHECK_EQ(t->sessions[0].tpgt, 1);
	CHECK_EQ(t->sessions[0].stats.write_bytes, 3);
	REQUIRE_EQ(t->sessions[0].nr_conns, 2);
	sin = (const void *)&t->sessions[0].conns[0].peer;
	CHECK_EQ(sin->sin_family, AF_INET);
	CHECK_EQ(sin->sin_addr.s_addr, v4.s_addr);
	CHECK_EQ(ntohs(sin->sin_port), 51000);
	sin6 = (const void *)&t->sessions[0].conns[1].peer;
	CHECK_EQ(sin6->sin6_family, AF_INET6);
	CHECK(!memcmp(&sin6->sin6_addr, &v6, sizeof(v6)));
	CHECK_EQ(ntohs(sin6->sin6_port), 51001);
	CHECK_EQ(t->sessions[0].conns[1].cid, 1);
	CHECK_EQ(t->sessions[0].conns[1].state, IET_CONN_ACTIVE);
	sin = (const void *)&t->sessions[0].conns[1].local;
	CHECK_EQ(ntohs(sin->sin_port), 3260);
	kstate_free(&st);
}

TEST(kreply_ignores_a_message_whose_key_attribute_is_missing_or_malformed)
{
	static struct msg m;
	struct nlmsghdr *nlh;
	struct kstate st = { 0 };
	struct ktarget t = { 0 };

	nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	mnl_attr_put_strz(nlh, IET_A_TARGET_NAME, "iqn.2001-04.com.example:x");
	CHECK_EQ(kreply_target(nlh, &st), 0);
	/* A TID of two bytes is no TID: no target 0 appears. */
	nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	mnl_attr_put_u16(nlh, IET_A_TID, 9);
	CHECK_EQ(kreply_target(nlh, &st), 0);
	CHECK_EQ(st.nr_targets, 0);
	nlh = start(&m, FAMILY, IET_CMD_LUN_GET);
	mnl_attr_put_u64(nlh, IET_A_LUN, 1);
	CHECK_EQ(kreply_lun(nlh, &t), 0);
	CHECK_EQ(t.nr_luns, 0);
	nlh = start(&m, FAMILY, IET_CMD_SESSION_GET);
	mnl_attr_put_u32(nlh, IET_A_SID, 1);
	CHECK_EQ(kreply_session(nlh, &t), 0);
	CHECK_EQ(t.nr_sessions, 0);
}

TEST(kreply_reads_malformed_fields_as_absent_and_cuts_long_strings)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	char name[IET_NAME_MAX + 100];
	struct kstate st = { 0 };
	struct nlattr *nest;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	mnl_attr_put_u32(nlh, IET_A_TID, 4);
	mnl_attr_put_strz(nlh, IET_A_TARGET_NAME, name);
	nest = mnl_attr_nest_start(nlh, IET_A_TARGET_PARAMS);
	mnl_attr_put_u32(nlh, 0, 11);			/* no such index */
	mnl_attr_put_u16(nlh, 1, 12);			/* not a u32 */
	mnl_attr_put_u32(nlh, IET_TP_MAX + 1, 13);	/* past the array */
	mnl_attr_put_u32(nlh, IET_TP_MAX, 14);
	mnl_attr_nest_end(nlh, nest);
	/* Not a nest at all: its payload parses as no attributes. */
	mnl_attr_put_u32(nlh, IET_A_SESSION_PARAMS, 0xffffffff);
	REQUIRE_EQ(kreply_target(nlh, &st), 0);
	REQUIRE_EQ(st.nr_targets, 1);
	CHECK_EQ(strlen(st.targets[0].name), IET_NAME_MAX);
	CHECK_EQ(st.targets[0].tparams[0], 0);
	CHECK_EQ(st.targets[0].tparams[1], 0);
	CHECK_EQ(st.targets[0].tparams[IET_TP_MAX], 14);
	CHECK_EQ(st.targets[0].keys[1], 0);
	kstate_free(&st);

	/* A string without its NUL is no string. */
	nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	mnl_attr_put_u32(nlh, IET_A_TID, 5);
	mnl_attr_put(nlh, IET_A_TARGET_NAME, 4, "iqn.");
	REQUIRE_EQ(kreply_target(nlh, &st), 0);
	REQUIRE_EQ(st.nr_targets, 1);
	CHECK_STR(st.targets[0].name, "");
	kstate_free(&st);
}

TEST(kreply_session_skips_what_is_not_a_connection)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_SESSION_GET);
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 2);
	uint8_t five[5] = { 10, 0, 0, 1, 9 };
	struct in_addr v4 = { htonl(0x7f000001) };
	struct nlattr *conns, *c;

	REQUIRE(t);
	mnl_attr_put_u64(nlh, IET_A_SID, 77);
	conns = mnl_attr_nest_start(nlh, IET_A_CONNS);
	mnl_attr_put_u32(nlh, IET_A_CID, 1);		/* not IET_A_CONN */
	put_conn(nlh, 2, five, sizeof(five), 1);	/* 5-byte address */
	c = mnl_attr_nest_start(nlh, IET_A_CONN);	/* an address, no port */
	mnl_attr_put_u32(nlh, IET_A_CID, 3);
	mnl_attr_put(nlh, IET_A_PEER_ADDR, sizeof(v4), &v4);
	mnl_attr_nest_end(nlh, c);
	mnl_attr_nest_end(nlh, conns);
	REQUIRE_EQ(kreply_session(nlh, t), 0);
	REQUIRE_EQ(t->nr_sessions, 1);
	REQUIRE_EQ(t->sessions[0].nr_conns, 2);
	CHECK_EQ(t->sessions[0].conns[0].cid, 2);
	CHECK_EQ(t->sessions[0].conns[0].peer.ss_family, AF_UNSPEC);
	CHECK_EQ(t->sessions[0].conns[1].cid, 3);
	CHECK_EQ(t->sessions[0].conns[1].peer.ss_family, AF_UNSPEC);
	kstate_free(&st);
}

TEST(kreply_session_reads_a_thousand_connections)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_SESSION_GET);
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 2);
	struct in_addr v4 = { htonl(0x7f000001) };
	struct nlattr *conns;
	unsigned int i;

	REQUIRE(t);
	mnl_attr_put_u64(nlh, IET_A_SID, 78);
	conns = mnl_attr_nest_start(nlh, IET_A_CONNS);
	for (i = 0; i < 1000; i++)
		put_conn(nlh, i, &v4, sizeof(v4), (uint16_t)i);
	mnl_attr_nest_end(nlh, conns);
	REQUIRE(nlh->nlmsg_len < sizeof(m.u));
	REQUIRE_EQ(kreply_session(nlh, t), 0);
	REQUIRE_EQ(t->sessions[0].nr_conns, 1000);
	CHECK_EQ(t->sessions[0].conns[999].cid, 999);
	kstate_free(&st);
}

TEST(kreply_a_message_shorter_than_its_genl_header_adds_nothing)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	struct kstate st = { 0 };
	struct kevent ev;
	uint32_t tid = 42;

	/* Attributes follow in the buffer, but the header says it ends here. */
	mnl_attr_put_u32(nlh, IET_A_TID, 1);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	CHECK_EQ(kreply_target(nlh, &st), 0);
	CHECK_EQ(st.nr_targets, 0);
	kreply_tid(nlh, &tid);
	CHECK_EQ(tid, 42);
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN;
	CHECK_EQ(kreply_event(nlh, FAMILY, &ev), 0);
}

TEST(kreply_tid_reads_the_new_targets_tid)
{
	static struct msg m;
	struct nlmsghdr *nlh = start(&m, FAMILY, IET_CMD_TARGET_NEW);
	uint32_t tid = 0;

	mnl_attr_put_u32(nlh, IET_A_TID, 12);
	kreply_tid(nlh, &tid);
	CHECK_EQ(tid, 12);
}

TEST(kreply_event_reports_closed_connections_and_sessions_only)
{
	static struct msg m;
	struct nlmsghdr *nlh;
	struct kevent ev;

	nlh = start(&m, FAMILY, IET_CMD_CONN_CLOSED);
	mnl_attr_put_u32(nlh, IET_A_TID, 1);
	mnl_attr_put_u64(nlh, IET_A_SID, 0x8000000000000001ull);
	mnl_attr_put_u32(nlh, IET_A_CID, 3);
	REQUIRE_EQ(kreply_event(nlh, FAMILY, &ev), 1);
	CHECK_EQ(ev.type, KEVENT_CONN_CLOSED);
	CHECK_EQ(ev.tid, 1);
	CHECK_EQ(ev.sid, 0x8000000000000001ull);
	CHECK_EQ(ev.cid, 3);
	CHECK_EQ(kreply_event(nlh, FAMILY + 1, &ev), 0);

	nlh = start(&m, FAMILY, IET_CMD_SESSION_CLOSED);
	mnl_attr_put_u32(nlh, IET_A_TID, 2);
	mnl_attr_put_u64(nlh, IET_A_SID, 5);
	REQUIRE_EQ(kreply_event(nlh, FAMILY, &ev), 1);
	CHECK_EQ(ev.type, KEVENT_SESSION_CLOSED);
	CHECK_EQ(ev.sid, 5);
	CHECK_EQ(ev.cid, 0);

	nlh = start(&m, FAMILY, IET_CMD_TARGET_GET);
	mnl_attr_put_u32(nlh, IET_A_TID, 2);
	CHECK_EQ(kreply_event(nlh, FAMILY, &ev), 0);
}

TEST(kreply_tpg_reads_portal_groups_up_to_the_limit)
{
	static struct msg m;
	struct kstate st = { 0 };
	struct ktarget *t = one_target(&st, 2);
	struct nlmsghdr *nlh;
	unsigned int i;

	REQUIRE(t);
	for (i = 0; i < IET_TPGS_MAX + 2; i++) {
		nlh = start(&m, FAMILY, IET_CMD_TPG_GET);
		mnl_attr_put_u32(nlh, IET_A_TID, 2);
		mnl_attr_put_u32(nlh, IET_A_TPGT, 10 + i);
		mnl_attr_put_u32(nlh, IET_A_ALUA_STATE, IET_ALUA_STANDBY);
		mnl_attr_put_u32(nlh, IET_A_TPG_SESSIONS, i);
		REQUIRE_EQ(kreply_tpg(nlh, t), 0);
	}
	/* The limit holds whatever a kernel sends. */
	REQUIRE_EQ(t->nr_tpgs, IET_TPGS_MAX);
	CHECK_EQ(t->tpgs[3].tag, 13);
	CHECK_EQ(t->tpgs[3].state, IET_ALUA_STANDBY);
	CHECK_EQ(t->tpgs[3].sessions, 3);
	CHECK(!t->tpgs[3].remote);
	/* Another node's, as a kernel with HA pairs says. */
	t->nr_tpgs = 0;
	nlh = start(&m, FAMILY, IET_CMD_TPG_GET);
	mnl_attr_put_u32(nlh, IET_A_TID, 2);
	mnl_attr_put_u32(nlh, IET_A_TPGT, 2);
	mnl_attr_put_u32(nlh, IET_A_TPG_REMOTE, 1);
	REQUIRE_EQ(kreply_tpg(nlh, t), 0);
	REQUIRE_EQ(t->nr_tpgs, 1);
	CHECK(t->tpgs[0].remote);
	/* Without a TPGT it is not a group. */
	t->nr_tpgs = 0;
	nlh = start(&m, FAMILY, IET_CMD_TPG_GET);
	mnl_attr_put_u32(nlh, IET_A_TID, 2);
	mnl_attr_put_u32(nlh, IET_A_ALUA_STATE, IET_ALUA_STANDBY);
	REQUIRE_EQ(kreply_tpg(nlh, t), 0);
	CHECK_EQ(t->nr_tpgs, 0);
	kstate_free(&st);
}
