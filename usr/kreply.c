// SPDX-License-Identifier: GPL-2.0
/* Taking apart what iscsi_trgt answers and announces, attribute by attribute. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "kreply.h"

/* Attribute tables: the index of each attribute of one nesting level. */
static int table_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = ((const struct nlattr ***)data)[0];
	uintptr_t max = (uintptr_t)((void **)data)[1];
	uint16_t type = mnl_attr_get_type(attr);

	if (type <= max)
		tb[type] = attr;
	return MNL_CB_OK;
}

static void parse_msg(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	void *ctx[2] = { tb, (void *)(uintptr_t)IET_A_MAX };

	memset(tb, 0, sizeof(*tb) * (IET_A_MAX + 1));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), table_attr, ctx);
}

static void parse_nest(const struct nlattr *nest, const struct nlattr **tb,
		       uintptr_t max)
{
	void *ctx[2] = { tb, (void *)max };

	memset(tb, 0, sizeof(*tb) * (max + 1));
	mnl_attr_parse_nested(nest, table_attr, ctx);
}

static bool valid(const struct nlattr *attr, enum mnl_attr_data_type type)
{
	return attr && mnl_attr_validate(attr, type) == 0;
}

static uint32_t get_u32(const struct nlattr *attr)
{
	return valid(attr, MNL_TYPE_U32) ? mnl_attr_get_u32(attr) : 0;
}

static uint64_t get_u64(const struct nlattr *attr)
{
	return valid(attr, MNL_TYPE_U64) ? mnl_attr_get_u64(attr) : 0;
}

static void get_str(const struct nlattr *attr, char *dst, size_t size)
{
	dst[0] = '\0';
	if (valid(attr, MNL_TYPE_NUL_STRING))
		snprintf(dst, size, "%s", mnl_attr_get_str(attr));
}

static void get_u32_array(const struct nlattr *nest, uint32_t *vals,
			  unsigned int max)
{
	const struct nlattr *tb[64] = { NULL };
	unsigned int i;

	if (!nest || max >= 64)
		return;
	parse_nest(nest, tb, max);
	for (i = 1; i <= max; i++)
		if (tb[i])
			vals[i] = get_u32(tb[i]);
}

/* A nest of u64 by index + 1 into vals[0..n-1]. */
static void get_u64_array(const struct nlattr *nest, uint64_t *vals,
			  unsigned int n)
{
	const struct nlattr *tb[64] = { NULL };
	unsigned int i;

	if (!nest || n >= 64)
		return;
	parse_nest(nest, tb, n);
	for (i = 0; i < n; i++)
		vals[i] = get_u64(tb[i + 1]);
}

/* One IET_STAT_HIST: a histogram the kernel has and we know, or nothing. */
static void get_hist(const struct nlattr *nest, struct kstats *st)
{
	const struct nlattr *tb[IET_HIST_MAX + 1];
	struct khist *h;
	uint32_t op, kind;

	parse_nest(nest, tb, IET_HIST_MAX);
	if (!valid(tb[IET_HIST_OP], MNL_TYPE_U32) ||
	    !valid(tb[IET_HIST_KIND], MNL_TYPE_U32) || !tb[IET_HIST_COUNTS] ||
	    mnl_attr_get_payload_len(tb[IET_HIST_COUNTS]) !=
	    sizeof(h->counts))
		return;
	op = mnl_attr_get_u32(tb[IET_HIST_OP]);
	kind = mnl_attr_get_u32(tb[IET_HIST_KIND]);
	if (op >= IET_SOP_HIST_NR || kind >= IET_LAT_NR)
		return;
	h = &st->hist[kind][op];
	h->sum_ns = get_u64(tb[IET_HIST_SUM_NS]);
	memcpy(h->counts, mnl_attr_get_payload(tb[IET_HIST_COUNTS]),
	       sizeof(h->counts));
}

static void get_stats(const struct nlattr *nest, struct kstats *st)
{
	const struct nlattr *tb[IET_STAT_MAX + 1];
	const struct nlattr *attr;

	memset(st, 0, sizeof(*st));
	if (!nest)
		return;
	parse_nest(nest, tb, IET_STAT_MAX);
	st->cmds = get_u64(tb[IET_STAT_CMDS]);
	st->read_bytes = get_u64(tb[IET_STAT_READ_BYTES]);
	st->write_bytes = get_u64(tb[IET_STAT_WRITE_BYTES]);
	st->errors = get_u64(tb[IET_STAT_ERRORS]);
	get_u64_array(tb[IET_STAT_OP_CMDS], st->op_cmds, IET_SOP_NR);
	get_u64_array(tb[IET_STAT_SENSE_KEYS], st->sense, 16);
	st->conflicts = get_u64(tb[IET_STAT_CONFLICTS]);
	st->busy = get_u64(tb[IET_STAT_BUSY]);
	mnl_attr_for_each_nested(attr, nest)
		if (mnl_attr_get_type(attr) == IET_STAT_HIST)
			get_hist(attr, st);
}

static void get_addr(const struct nlattr *addr, const struct nlattr *port,
		     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!addr || !valid(port, MNL_TYPE_U16))
		return;
	if (mnl_attr_get_payload_len(addr) == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, mnl_attr_get_payload(addr), 4);
		sin->sin_port = htons(mnl_attr_get_u16(port));
	} else if (mnl_attr_get_payload_len(addr) == 16) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, mnl_attr_get_payload(addr), 16);
		sin6->sin6_port = htons(mnl_attr_get_u16(port));
	}
}

void kreply_tid(const struct nlmsghdr *nlh, uint32_t *tid)
{
	const struct nlattr *tb[IET_A_MAX + 1];

	parse_msg(nlh, tb);
	if (valid(tb[IET_A_TID], MNL_TYPE_U32))
		*tid = get_u32(tb[IET_A_TID]);
}

/* Grow an array by one zeroed element; NULL when out of memory. */
static void *push(void *arr, size_t *nr, size_t size)
{
	char *p = realloc(arr, (*nr + 1) * size);

	if (!p)
		return NULL;
	memset(p + *nr * size, 0, size);
	(*nr)++;
	return p;
}

int kreply_target(const struct nlmsghdr *nlh, struct kstate *st)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	struct ktarget *t, *arr;

	parse_msg(nlh, tb);
	if (!valid(tb[IET_A_TID], MNL_TYPE_U32))
		return 0;
	arr = push(st->targets, &st->nr_targets, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	st->targets = arr;
	t = &arr[st->nr_targets - 1];
	t->tid = get_u32(tb[IET_A_TID]);
	get_str(tb[IET_A_TARGET_NAME], t->name, sizeof(t->name));
	get_u32_array(tb[IET_A_TARGET_PARAMS], t->tparams, IET_TP_MAX);
	get_u32_array(tb[IET_A_SESSION_PARAMS], t->keys, IET_KEY_MAX);
	t->luns_closing = get_u32(tb[IET_A_LUNS_CLOSING]);
	return 0;
}

int kreply_lun(const struct nlmsghdr *nlh, struct ktarget *t)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	struct klun *arr, *l;

	parse_msg(nlh, tb);
	if (!valid(tb[IET_A_LUN], MNL_TYPE_U32))
		return 0;
	arr = push(t->luns, &t->nr_luns, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	t->luns = arr;
	l = &arr[t->nr_luns - 1];
	l->conf.lun = get_u32(tb[IET_A_LUN]);
	l->conf.type = get_u32(tb[IET_A_LUN_TYPE]);
	l->conf.iomode = get_u32(tb[IET_A_LUN_IOMODE]);
	get_str(tb[IET_A_LUN_PATH], l->conf.path, sizeof(l->conf.path));
	get_str(tb[IET_A_LUN_SCSI_ID], l->conf.scsi_id,
		sizeof(l->conf.scsi_id));
	get_str(tb[IET_A_LUN_SCSI_SN], l->conf.scsi_sn,
		sizeof(l->conf.scsi_sn));
	l->conf.block_size = get_u32(tb[IET_A_LUN_BLOCK_SIZE]);
	l->conf.blocks = get_u64(tb[IET_A_LUN_BLOCKS]);
	/* A module older than these leaves them out: its defaults, then. */
	l->conf.phys_block_size = get_u32(tb[IET_A_LUN_PHYS_BLOCK_SIZE]);
	l->conf.rotation_rate = get_u32(tb[IET_A_LUN_ROTATION_RATE]);
	l->conf.thin_off = valid(tb[IET_A_LUN_THIN], MNL_TYPE_U32) &&
			   !get_u32(tb[IET_A_LUN_THIN]);
	if (valid(tb[IET_A_LUN_MODE_SELECT], MNL_TYPE_U32))
		l->conf.mode_select = lun_mode_select_of(&l->conf,
			get_u32(tb[IET_A_LUN_MODE_SELECT]));
	get_stats(tb[IET_A_STATS], &l->stats);
	l->backing = get_u32(tb[IET_A_LUN_BACKING]);
	return 0;
}

static int conn_attr(const struct nlattr *attr, struct ksession *s)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	struct kconn *arr, *c;

	if (mnl_attr_get_type(attr) != IET_A_CONN)
		return 0;
	parse_nest(attr, tb, IET_A_MAX);
	arr = push(s->conns, &s->nr_conns, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	s->conns = arr;
	c = &arr[s->nr_conns - 1];
	c->cid = (uint16_t)get_u32(tb[IET_A_CID]);
	c->state = get_u32(tb[IET_A_CONN_STATE]);
	get_addr(tb[IET_A_PEER_ADDR], tb[IET_A_PEER_PORT], &c->peer);
	get_addr(tb[IET_A_LOCAL_ADDR], tb[IET_A_LOCAL_PORT], &c->local);
	get_u32_array(tb[IET_A_SESSION_PARAMS], c->keys, IET_KEY_MAX);
	return 0;
}

int kreply_session(const struct nlmsghdr *nlh, struct ktarget *t)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	const struct nlattr *attr;
	struct ksession *arr, *s;

	parse_msg(nlh, tb);
	if (!valid(tb[IET_A_SID], MNL_TYPE_U64))
		return 0;
	arr = push(t->sessions, &t->nr_sessions, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	t->sessions = arr;
	s = &arr[t->nr_sessions - 1];
	s->sid = get_u64(tb[IET_A_SID]);
	get_str(tb[IET_A_INITIATOR_NAME], s->initiator, sizeof(s->initiator));
	/* A module without portal groups has group 1 only. */
	s->tpgt = valid(tb[IET_A_TPGT], MNL_TYPE_U32) ?
		  (uint16_t)get_u32(tb[IET_A_TPGT]) : 1;
	get_u32_array(tb[IET_A_SESSION_PARAMS], s->keys, IET_KEY_MAX);
	get_stats(tb[IET_A_STATS], &s->stats);
	if (tb[IET_A_CONNS]) {
		mnl_attr_for_each_nested(attr, tb[IET_A_CONNS]) {
			if (conn_attr(attr, s) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}


int kreply_tpg(const struct nlmsghdr *nlh, struct ktarget *t)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	struct ktpg *g;

	parse_msg(nlh, tb);
	if (!valid(tb[IET_A_TPGT], MNL_TYPE_U32) || t->nr_tpgs == IET_TPGS_MAX)
		return 0;
	g = &t->tpgs[t->nr_tpgs++];
	g->tag = (uint16_t)get_u32(tb[IET_A_TPGT]);
	g->state = get_u32(tb[IET_A_ALUA_STATE]);
	g->sessions = get_u32(tb[IET_A_TPG_SESSIONS]);
	g->remote = get_u32(tb[IET_A_TPG_REMOTE]);
	return 0;
}

static int pr_reg_attr(const struct nlattr *attr, struct kpr *pr)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	struct kpr_reg *arr, *r;

	if (mnl_attr_get_type(attr) != IET_A_PR_REG)
		return 0;
	parse_nest(attr, tb, IET_A_MAX);
	arr = push(pr->regs, &pr->nr_regs, sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	pr->regs = arr;
	r = &arr[pr->nr_regs - 1];
	r->key = get_u64(tb[IET_A_PR_KEY]);
	get_str(tb[IET_A_INITIATOR_NAME], r->initiator, sizeof(r->initiator));
	r->any_isid = !valid(tb[IET_A_PR_ISID], MNL_TYPE_U64);
	r->isid = get_u64(tb[IET_A_PR_ISID]);
	r->rtpi = get_u32(tb[IET_A_PR_RTPI]);
	r->holder = tb[IET_A_PR_HOLDER] != NULL;
	return 0;
}

int kreply_pr(const struct nlmsghdr *nlh, struct kpr *pr)
{
	const struct nlattr *tb[IET_A_MAX + 1];
	const struct nlattr *attr;

	memset(pr, 0, sizeof(*pr));
	parse_msg(nlh, tb);
	pr->generation = get_u32(tb[IET_A_PR_GENERATION]);
	pr->aptpl = get_u32(tb[IET_A_PR_APTPL]);
	pr->type = get_u32(tb[IET_A_PR_TYPE]);
	pr->spc2 = valid(tb[IET_A_SID], MNL_TYPE_U64);
	pr->spc2_sid = get_u64(tb[IET_A_SID]);
	if (tb[IET_A_PR_REGS]) {
		mnl_attr_for_each_nested(attr, tb[IET_A_PR_REGS]) {
			if (pr_reg_attr(attr, pr) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int kreply_event(const struct nlmsghdr *nlh, uint16_t family,
		 struct kevent *ev)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[IET_A_MAX + 1];

	memset(ev, 0, sizeof(*ev));
	if (nlh->nlmsg_type != family ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return 0;
	if (g->cmd == IET_CMD_CONN_CLOSED)
		ev->type = KEVENT_CONN_CLOSED;
	else if (g->cmd == IET_CMD_SESSION_CLOSED)
		ev->type = KEVENT_SESSION_CLOSED;
	else
		return 0;
	parse_msg(nlh, tb);
	ev->tid = get_u32(tb[IET_A_TID]);
	ev->sid = get_u64(tb[IET_A_SID]);
	ev->cid = (uint16_t)get_u32(tb[IET_A_CID]);
	return 1;
}

void kpr_free(struct kpr *pr)
{
	free(pr->regs);
	memset(pr, 0, sizeof(*pr));
}

void kstate_free(struct kstate *st)
{
	size_t i, j;

	for (i = 0; i < st->nr_targets; i++) {
		struct ktarget *t = &st->targets[i];

		for (j = 0; j < t->nr_sessions; j++)
			free(t->sessions[j].conns);
		free(t->sessions);
		free(t->luns);
	}
	free(st->targets);
	memset(st, 0, sizeof(*st));
}

