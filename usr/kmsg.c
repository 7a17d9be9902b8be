// SPDX-License-Identifier: GPL-2.0
/* Building iscsi_trgt's netlink requests, every attribute checked to fit. */
#include <errno.h>
#include <string.h>
#include <linux/netlink.h>

#include "kmsg.h"

/* A request being built: it stays failed once something did not fit. */
struct mb {
	struct nlmsghdr *nlh;
	size_t len;
	bool full;
};

static void start(struct mb *m, void *buf, size_t len, uint16_t type,
		  uint8_t cmd, uint8_t version, uint16_t flags, uint32_t seq)
{
	struct genlmsghdr *g;

	m->nlh = NULL;
	m->len = len;
	m->full = len < KMSG_HDR;
	if (m->full)
		return;
	m->nlh = mnl_nlmsg_put_header(buf);
	m->nlh->nlmsg_type = type;
	m->nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	m->nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(m->nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
}

static void iet_start(struct mb *m, void *buf, size_t len,
		      const struct kmsg_to *to, uint8_t cmd, uint16_t flags)
{
	start(m, buf, len, to->family, cmd, IET_GENL_VERSION, flags, to->seq);
}

static void put_u32(struct mb *m, uint16_t type, uint32_t v)
{
	if (!m->full && !mnl_attr_put_u32_check(m->nlh, m->len, type, v))
		m->full = true;
}

static void put_u64(struct mb *m, uint16_t type, uint64_t v)
{
	if (!m->full && !mnl_attr_put_u64_check(m->nlh, m->len, type, v))
		m->full = true;
}

static void put_strz(struct mb *m, uint16_t type, const char *s)
{
	if (!m->full && !mnl_attr_put_strz_check(m->nlh, m->len, type, s))
		m->full = true;
}

static void put_u32_array(struct mb *m, uint16_t type, const uint32_t *vals,
			  unsigned int max)
{
	struct nlattr *nest;
	unsigned int i;

	if (!vals || m->full)
		return;
	nest = mnl_attr_nest_start_check(m->nlh, m->len, type);
	if (!nest) {
		m->full = true;
		return;
	}
	for (i = 1; i <= max; i++)
		put_u32(m, i, vals[i]);
	if (!m->full)
		mnl_attr_nest_end(m->nlh, nest);
}

static int done(const struct mb *m)
{
	return m->full ? -EMSGSIZE : 0;
}

int kmsg_get_family(void *buf, size_t len, uint32_t seq, const char *name)
{
	struct mb m;

	start(&m, buf, len, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK,
	      seq);
	put_strz(&m, CTRL_ATTR_FAMILY_NAME, name);
	return done(&m);
}

int kmsg_target_new(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, const char *name, const uint32_t *tparams,
		    const uint32_t *keys)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_TARGET_NEW, NLM_F_ACK);
	if (tid)
		put_u32(&m, IET_A_TID, tid);
	put_strz(&m, IET_A_TARGET_NAME, name);
	put_u32_array(&m, IET_A_TARGET_PARAMS, tparams, IET_TP_MAX);
	put_u32_array(&m, IET_A_SESSION_PARAMS, keys, IET_KEY_MAX);
	return done(&m);
}

int kmsg_target_set(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, const uint32_t *tparams,
		    const uint32_t *keys)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_TARGET_SET, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32_array(&m, IET_A_TARGET_PARAMS, tparams, IET_TP_MAX);
	put_u32_array(&m, IET_A_SESSION_PARAMS, keys, IET_KEY_MAX);
	return done(&m);
}

int kmsg_target_del(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_TARGET_DEL, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	return done(&m);
}

int kmsg_lun_new(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, const struct lun_conf *lun)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_LUN_NEW, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_LUN, lun->lun);
	put_u32(&m, IET_A_LUN_TYPE, lun->type);
	if (lun->path[0])
		put_strz(&m, IET_A_LUN_PATH, lun->path);
	if (lun->iomode)
		put_u32(&m, IET_A_LUN_IOMODE, lun->iomode);
	if (lun->scsi_id[0])
		put_strz(&m, IET_A_LUN_SCSI_ID, lun->scsi_id);
	if (lun->scsi_sn[0])
		put_strz(&m, IET_A_LUN_SCSI_SN, lun->scsi_sn);
	if (lun->block_size)
		put_u32(&m, IET_A_LUN_BLOCK_SIZE, lun->block_size);
	if (lun->blocks)
		put_u64(&m, IET_A_LUN_BLOCKS, lun->blocks);
	/*
	 * Only what differs from the kernel's defaults: a module older than
	 * these attributes refuses them, and still takes every other LUN.
	 */
	if (lun_phys_block_size(lun) != lun->block_size)
		put_u32(&m, IET_A_LUN_PHYS_BLOCK_SIZE, lun->phys_block_size);
	if (lun->rotation_rate)
		put_u32(&m, IET_A_LUN_ROTATION_RATE, lun->rotation_rate);
	if (lun->thin_off)
		put_u32(&m, IET_A_LUN_THIN, 0);
	if (lun->mode_select != MODE_SELECT_DEFAULT)
		put_u32(&m, IET_A_LUN_MODE_SELECT, lun_mode_select(lun));
	return done(&m);
}

int kmsg_lun_del(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint32_t lun)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_LUN_DEL, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_LUN, lun);
	return done(&m);
}

int kmsg_pr_get(void *buf, size_t len, const struct kmsg_to *to,
		uint32_t tid, uint32_t lun)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_PR_GET, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_LUN, lun);
	return done(&m);
}

int kmsg_pr_clear(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint32_t lun, uint32_t clear)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_PR_CLEAR, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_LUN, lun);
	put_u32(&m, IET_A_PR_CLEAR, clear);
	return done(&m);
}

int kmsg_lun_set(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint32_t lun, uint64_t blocks, bool force)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_LUN_SET, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_LUN, lun);
	if (blocks)
		put_u64(&m, IET_A_LUN_BLOCKS, blocks);
	if (force)
		put_u32(&m, IET_A_LUN_RESIZE_FORCE, 1);
	return done(&m);
}

int kmsg_tpg_set(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint16_t tag, uint32_t state, int remote)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_TPG_SET, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_TPGT, tag);
	if (state != IET_ALUA_UNSPEC)
		put_u32(&m, IET_A_ALUA_STATE, state);
	if (remote >= 0)
		put_u32(&m, IET_A_TPG_REMOTE, !!remote);
	return done(&m);
}

int kmsg_tpg_del(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint16_t tag)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_TPG_DEL, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u32(&m, IET_A_TPGT, tag);
	return done(&m);
}

int kmsg_logout_req(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, uint16_t tpgt, uint64_t sid, int cid,
		    uint32_t wait)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_LOGOUT_REQ, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	if (tpgt)
		put_u32(&m, IET_A_TPGT, tpgt);
	if (sid)
		put_u64(&m, IET_A_SID, sid);
	if (sid && cid >= 0)
		put_u32(&m, IET_A_CID, (uint32_t)cid);
	put_u32(&m, IET_A_LOGOUT_WAIT, wait);
	return done(&m);
}

int kmsg_session_new(void *buf, size_t len, const struct kmsg_to *to,
		     uint32_t tid, uint64_t sid, const char *initiator,
		     uint32_t exp_cmdsn, uint16_t tpgt, const uint32_t *keys)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_SESSION_NEW, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u64(&m, IET_A_SID, sid);
	put_strz(&m, IET_A_INITIATOR_NAME, initiator);
	put_u32(&m, IET_A_EXP_CMDSN, exp_cmdsn);
	/* Group 1 is the default: a module without groups takes the rest. */
	if (tpgt != 1)
		put_u32(&m, IET_A_TPGT, tpgt);
	put_u32_array(&m, IET_A_SESSION_PARAMS, keys, IET_KEY_MAX);
	return done(&m);
}

int kmsg_session_del(void *buf, size_t len, const struct kmsg_to *to,
		     uint32_t tid, uint64_t sid)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_SESSION_DEL, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u64(&m, IET_A_SID, sid);
	return done(&m);
}

int kmsg_conn_new(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint64_t sid, uint16_t cid, int fd,
		  uint32_t statsn, const uint32_t *keys)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_CONN_NEW, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u64(&m, IET_A_SID, sid);
	put_u32(&m, IET_A_CID, cid);
	put_u32(&m, IET_A_CONN_FD, (uint32_t)fd);
	put_u32(&m, IET_A_STATSN, statsn);
	put_u32_array(&m, IET_A_SESSION_PARAMS, keys, IET_KEY_MAX);
	return done(&m);
}

int kmsg_conn_del(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint64_t sid, uint16_t cid)
{
	struct mb m;

	iet_start(&m, buf, len, to, IET_CMD_CONN_DEL, NLM_F_ACK);
	put_u32(&m, IET_A_TID, tid);
	put_u64(&m, IET_A_SID, sid);
	put_u32(&m, IET_A_CID, cid);
	return done(&m);
}

int kmsg_dump(void *buf, size_t len, const struct kmsg_to *to, uint8_t cmd,
	      uint32_t tid)
{
	struct mb m;

	iet_start(&m, buf, len, to, cmd, NLM_F_DUMP);
	if (tid)
		put_u32(&m, IET_A_TID, tid);
	return done(&m);
}
