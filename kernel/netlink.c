// SPDX-License-Identifier: GPL-2.0
/* The generic netlink family "iscsi_trgt": ietd's requests, dumps, events. */
#include <linux/in.h>
#include <linux/in6.h>
#include <net/genetlink.h>

#include "iet.h"

static struct netlink_range_validation u16_range = {
	.min = 0,
	.max = U16_MAX,
};

static struct netlink_range_validation one_u16_range = {
	.min = 1,
	.max = U16_MAX,
};

static struct netlink_range_validation logout_wait_range = {
	.min = 1,
	.max = 3600,
};

static struct netlink_range_validation dsl_range = {
	.min = 512,
	.max = 16777215,
};

/* Beyond the s16 of NLA_POLICY_RANGE; lun.c checks what ranges cannot. */
static struct netlink_range_validation phys_block_range = {
	.min = 512,
	.max = IET_PHYS_BLOCK_SIZE_MAX,
};

static struct netlink_range_validation rotation_range = {
	.min = 0,
	.max = 0xfffe,
};

const struct nla_policy iet_tparam_policy[IET_TP_MAX + 1] = {
	[IET_TP_WTHREADS] = NLA_POLICY_RANGE(NLA_U32, 1, IET_MAX_WTHREADS),
	[IET_TP_QUEUED_CMDS] = NLA_POLICY_RANGE(NLA_U32, 1, 4096),
	[IET_TP_NOP_INTERVAL] = NLA_POLICY_MAX(NLA_U32, 3600),
	[IET_TP_NOP_TIMEOUT] = NLA_POLICY_MAX(NLA_U32, 3600),
	[IET_TP_TARGET_RESET] = NLA_POLICY_MAX(NLA_U32, 1),
};

/* Ranges of RFC 7143 section 13; digests are a value or an offer mask. */
const struct nla_policy iet_key_policy[IET_KEY_MAX + 1] = {
	[IET_KEY_INITIAL_R2T] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_KEY_IMMEDIATE_DATA] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_KEY_MAX_CONNECTIONS] = NLA_POLICY_FULL_RANGE(NLA_U32, &one_u16_range),
	[IET_KEY_MAX_RECV_DSL] = NLA_POLICY_FULL_RANGE(NLA_U32, &dsl_range),
	[IET_KEY_MAX_XMIT_DSL] = NLA_POLICY_FULL_RANGE(NLA_U32, &dsl_range),
	[IET_KEY_MAX_BURST] = NLA_POLICY_FULL_RANGE(NLA_U32, &dsl_range),
	[IET_KEY_FIRST_BURST] = NLA_POLICY_FULL_RANGE(NLA_U32, &dsl_range),
	[IET_KEY_DEFAULT_TIME2WAIT] = NLA_POLICY_MAX(NLA_U32, 3600),
	[IET_KEY_DEFAULT_TIME2RETAIN] = NLA_POLICY_MAX(NLA_U32, 3600),
	[IET_KEY_MAX_OUTSTANDING_R2T] = NLA_POLICY_FULL_RANGE(NLA_U32, &one_u16_range),
	[IET_KEY_DATA_PDU_INORDER] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_KEY_DATA_SEQUENCE_INORDER] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_KEY_ERROR_RECOVERY_LEVEL] = NLA_POLICY_MAX(NLA_U32, 2),
	[IET_KEY_HEADER_DIGEST] = NLA_POLICY_MAX(NLA_U32, 3),
	[IET_KEY_DATA_DIGEST] = NLA_POLICY_MAX(NLA_U32, 3),
};

static const struct nla_policy iet_policy[IET_A_MAX + 1] = {
	[IET_A_TID] = { .type = NLA_U32 },
	[IET_A_TARGET_NAME] = { .type = NLA_NUL_STRING, .len = IET_NAME_MAX },
	[IET_A_TARGET_PARAMS] = NLA_POLICY_NESTED(iet_tparam_policy),
	[IET_A_SESSION_PARAMS] = NLA_POLICY_NESTED(iet_key_policy),
	[IET_A_LUN] = NLA_POLICY_MAX(NLA_U32, IET_LUN_MAX),
	[IET_A_LUN_TYPE] = NLA_POLICY_RANGE(NLA_U32, IET_LUN_FILEIO,
					    __IET_LUN_TYPE_MAX - 1),
	[IET_A_LUN_PATH] = { .type = NLA_NUL_STRING, .len = IET_PATH_MAX },
	[IET_A_LUN_IOMODE] = NLA_POLICY_RANGE(NLA_U32, IET_IOMODE_WT,
					      __IET_IOMODE_MAX - 1),
	[IET_A_LUN_SCSI_ID] = { .type = NLA_NUL_STRING, .len = IET_SCSI_ID_MAX },
	[IET_A_LUN_SCSI_SN] = { .type = NLA_NUL_STRING, .len = IET_SCSI_SN_MAX },
	[IET_A_LUN_BLOCK_SIZE] = NLA_POLICY_RANGE(NLA_U32, 512, 4096),
	[IET_A_LUN_BLOCKS] = { .type = NLA_U64 },
	[IET_A_SID] = { .type = NLA_U64 },
	[IET_A_INITIATOR_NAME] = { .type = NLA_NUL_STRING, .len = IET_NAME_MAX },
	[IET_A_EXP_CMDSN] = { .type = NLA_U32 },
	[IET_A_CID] = NLA_POLICY_FULL_RANGE(NLA_U32, &u16_range),
	[IET_A_CONN_FD] = { .type = NLA_S32 },
	[IET_A_STATSN] = { .type = NLA_U32 },
	[IET_A_LUN_PHYS_BLOCK_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U32,
							    &phys_block_range),
	[IET_A_LUN_ROTATION_RATE] = NLA_POLICY_FULL_RANGE(NLA_U32,
							  &rotation_range),
	[IET_A_LUN_THIN] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_A_LUN_MODE_SELECT] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_A_TPG_REMOTE] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_A_LUN_RESIZE_FORCE] = NLA_POLICY_MAX(NLA_U32, 1),
	[IET_A_PR_CLEAR] = NLA_POLICY_RANGE(NLA_U32, IET_PR_RELEASE,
					    __IET_PR_CLEAR_MAX - 1),
	[IET_A_TPGT] = NLA_POLICY_FULL_RANGE(NLA_U32, &one_u16_range),
	[IET_A_ALUA_STATE] = NLA_POLICY_RANGE(NLA_U32,
					      IET_ALUA_ACTIVE_OPTIMIZED,
					      __IET_ALUA_MAX - 1),
	[IET_A_LOGOUT_WAIT] = NLA_POLICY_FULL_RANGE(NLA_U32,
						    &logout_wait_range),
};

enum {
	IET_MCGRP_EVENTS,
};

static const struct genl_multicast_group iet_mcgrps[] = {
	[IET_MCGRP_EVENTS] = {
		.name = IET_GENL_MCGRP_EVENTS,
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family iet_family;

/* Bumped on every change a dump could see, so dumps can flag tearing. */
static atomic_t iet_generation = ATOMIC_INIT(1);

static void changed(void)
{
	atomic_inc(&iet_generation);
}

/*
 * Requests run under iet_mutex, but for those marked UNLOCKED: they wait
 * for a teardown and take the mutex only to look their object up, so that
 * a slow teardown never stops the rest of the control plane.
 */
#define UNLOCKED	0x01

/* How long a request waits for a session or connection to go. */
#define DEL_WAIT	(60 * HZ)

static int pre_doit(const IET_GENL_OPS *ops, struct sk_buff *skb,
		    struct genl_info *info)
{
	if (ops->internal_flags & UNLOCKED)
		return READ_ONCE(iet_shutting_down) ? -ESHUTDOWN : 0;
	mutex_lock(&iet_mutex);
	if (iet_shutting_down) {
		mutex_unlock(&iet_mutex);
		GENL_SET_ERR_MSG(info, "the module is being unloaded");
		return -ESHUTDOWN;
	}
	return 0;
}

static void post_doit(const IET_GENL_OPS *ops, struct sk_buff *skb,
		      struct genl_info *info)
{
	if (!(ops->internal_flags & UNLOCKED))
		mutex_unlock(&iet_mutex);
}

/* Wait, interruptibly and at most DEL_WAIT, until *gone is set. */
static int wait_gone(struct iet_target *target, bool *gone,
		     struct genl_info *info)
{
	long left = wait_event_interruptible_timeout(target->wq,
						     READ_ONCE(*gone), DEL_WAIT);

	if (left > 0)
		return 0;
	if (!left) {
		GENL_SET_ERR_MSG(info, "still closing: commands are stuck in the backend");
		return -ETIMEDOUT;
	}
	return left;
}

static struct iet_target *req_target(struct genl_info *info)
{
	struct iet_target *target;

	if (GENL_REQ_ATTR_CHECK(info, IET_A_TID))
		return NULL;
	target = iet_target_lookup(nla_get_u32(info->attrs[IET_A_TID]));
	if (!target)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_TID],
				    "no target with this tid");
	return target;
}

/* The session the request names, with a reference the caller drops. */
static struct iet_session *req_session(struct genl_info *info,
				       struct iet_target *target)
{
	struct iet_session *session;

	if (GENL_REQ_ATTR_CHECK(info, IET_A_SID))
		return NULL;
	session = iet_session_lookup(target, nla_get_u64(info->attrs[IET_A_SID]));
	if (!session)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_SID],
				    "no session with this sid");
	return session;
}

static int target_new(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	u32 tid = 0;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, IET_A_TARGET_NAME))
		return -EINVAL;
	if (info->attrs[IET_A_TID])
		tid = nla_get_u32(info->attrs[IET_A_TID]);
	ret = iet_target_add(&tid, nla_data(info->attrs[IET_A_TARGET_NAME]),
			     info->attrs[IET_A_TARGET_PARAMS],
			     info->attrs[IET_A_SESSION_PARAMS], info->extack);
	if (ret)
		return ret;
	changed();

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &iet_family, 0, IET_CMD_TARGET_NEW);
	if (!hdr || nla_put_u32(msg, IET_A_TID, tid)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int target_set(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	ret = iet_target_set(target, info->attrs[IET_A_TARGET_PARAMS],
			     info->attrs[IET_A_SESSION_PARAMS], info->extack);
	changed();
	return ret;
}

static int target_del(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	ret = iet_target_del(target);
	if (ret == -EBUSY)
		GENL_SET_ERR_MSG(info, "the target has sessions");
	changed();
	return ret;
}

static int put_u32_array(struct sk_buff *skb, int type, const u32 *vals,
			 unsigned int max)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 1; i <= max; i++)
		if (nla_put_u32(skb, i, vals[i]))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_target(struct sk_buff *skb, struct iet_target *target)
{
	int ret;

	mutex_lock(&target->lock);
	ret = nla_put_u32(skb, IET_A_TID, target->tid) ?:
	      nla_put_string(skb, IET_A_TARGET_NAME, target->name) ?:
	      put_u32_array(skb, IET_A_TARGET_PARAMS, target->tparams,
			    IET_TP_MAX) ?:
	      put_u32_array(skb, IET_A_SESSION_PARAMS, target->keys,
			    IET_KEY_MAX) ?:
	      nla_put_u32(skb, IET_A_LUNS_CLOSING,
			  atomic_read(&target->luns_closing));
	mutex_unlock(&target->lock);
	return ret ? -EMSGSIZE : 0;
}

static int target_get(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	struct sk_buff *msg;
	void *hdr;

	if (!target)
		return -ENOENT;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &iet_family, 0, IET_CMD_TARGET_GET);
	if (!hdr || fill_target(msg, target)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static void *dump_put(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &iet_family, NLM_F_MULTI,
				cmd);

	if (hdr)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

/* cb->args[0]: the next tid to dump */
static int target_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct iet_target *target;
	unsigned long tid = cb->args[0];
	void *hdr;

	mutex_lock(&iet_mutex);
	cb->seq = atomic_read(&iet_generation);
	xa_for_each_start(&iet_targets, tid, target, tid) {
		hdr = dump_put(skb, cb, IET_CMD_TARGET_GET);
		if (!hdr)
			break;
		if (fill_target(skb, target)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = tid + 1;
	}
	mutex_unlock(&iet_mutex);
	return skb->len;
}

static struct iet_target *dump_target(struct netlink_callback *cb)
{
	struct nlattr *tid = iet_dump_attrs(cb)[IET_A_TID];

	if (!tid) {
		NL_SET_ERR_MSG(cb->extack, "a dump of this kind needs a tid");
		return ERR_PTR(-EINVAL);
	}
	return iet_target_lookup(nla_get_u32(tid)) ?: ERR_PTR(-ENOENT);
}

static const u32 backing_uapi[] = {
	[IET_BACKING_OPEN] = IET_LUN_BACKING_OPEN,
	[IET_BACKING_CLOSING] = IET_LUN_BACKING_CLOSING,
	[IET_BACKING_CLOSED] = IET_LUN_BACKING_CLOSED,
};

static int fill_lun(struct sk_buff *skb, struct iet_target *target,
		    struct iet_lun *lun)
{
	if (nla_put_u32(skb, IET_A_TID, target->tid) ||
	    nla_put_u32(skb, IET_A_LUN, lun->lun) ||
	    nla_put_u32(skb, IET_A_LUN_TYPE, lun->ops->type) ||
	    (lun->path[0] && nla_put_string(skb, IET_A_LUN_PATH, lun->path)) ||
	    nla_put_u32(skb, IET_A_LUN_IOMODE, lun->iomode) ||
	    nla_put_string(skb, IET_A_LUN_SCSI_ID, lun->scsi_id) ||
	    nla_put_string(skb, IET_A_LUN_SCSI_SN, lun->scsi_sn) ||
	    nla_put_u32(skb, IET_A_LUN_BLOCK_SIZE, lun->block_size) ||
	    nla_put_u64_64bit(skb, IET_A_LUN_BLOCKS, lun->blocks, IET_A_PAD) ||
	    iet_stats_put(skb, &lun->stats) ||
	    nla_put_u32(skb, IET_A_LUN_PHYS_BLOCK_SIZE,
			lun->block_size << lun->pbexp) ||
	    nla_put_u32(skb, IET_A_LUN_ROTATION_RATE, lun->rotation_rate) ||
	    nla_put_u32(skb, IET_A_LUN_THIN, lun->thin_allowed) ||
	    nla_put_u32(skb, IET_A_LUN_MODE_SELECT, lun->mode_select) ||
	    nla_put_u32(skb, IET_A_LUN_BACKING, backing_uapi[READ_ONCE(lun->backing)]))
		return -EMSGSIZE;
	return 0;
}

/*
 * A LUN's or a session's message (its path or connections, its statistics)
 * fits one dump buffer or fails the dump: never smaller than this, even
 * when the allocator has no larger block at hand (netlink's fallback is a
 * page, where a session of six connections with its counters did not fit).
 */
#define OBJ_DUMP_MIN	(16 * 1024)

static int obj_dump_start(struct netlink_callback *cb)
{
	cb->min_dump_alloc = OBJ_DUMP_MIN;
	return 0;
}

/* cb->args[0]: the next LUN to dump */
static int lun_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct iet_target *target;
	unsigned long index = cb->args[0];
	struct iet_lun *lun;
	void *hdr;
	int ret;

	mutex_lock(&iet_mutex);
	cb->seq = atomic_read(&iet_generation);
	target = dump_target(cb);
	if (IS_ERR(target)) {
		ret = PTR_ERR(target);
		goto out;
	}
	xa_for_each_start(&target->luns, index, lun, index) {
		hdr = dump_put(skb, cb, IET_CMD_LUN_GET);
		if (!hdr)
			break;
		ret = fill_lun(skb, target, lun);
		if (ret) {
			genlmsg_cancel(skb, hdr);
			/* One that fits no message fails the dump, not ends it. */
			if (!skb->len)
				goto out;
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = index + 1;
	}
	ret = skb->len;
out:
	mutex_unlock(&iet_mutex);
	return ret;
}

static int put_addr(struct sk_buff *skb, int addr_type, int port_type,
		    const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		return nla_put_in_addr(skb, addr_type, sin->sin_addr.s_addr) ?:
		       nla_put_u16(skb, port_type, ntohs(sin->sin_port));
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		return nla_put_in6_addr(skb, addr_type, &sin6->sin6_addr) ?:
		       nla_put_u16(skb, port_type, ntohs(sin6->sin6_port));
	}
	return 0;
}

static int fill_conn(struct sk_buff *skb, struct iet_conn *conn)
{
	struct nlattr *nest = nla_nest_start(skb, IET_A_CONN);

	if (!nest ||
	    nla_put_u32(skb, IET_A_CID, conn->cid) ||
	    nla_put_u32(skb, IET_A_CONN_STATE, iet_stopping(conn) ?
			IET_CONN_CLOSING : IET_CONN_ACTIVE) ||
	    put_addr(skb, IET_A_PEER_ADDR, IET_A_PEER_PORT, &conn->peer) ||
	    put_addr(skb, IET_A_LOCAL_ADDR, IET_A_LOCAL_PORT, &conn->local) ||
	    put_u32_array(skb, IET_A_SESSION_PARAMS, conn->keys, IET_KEY_MAX))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_session(struct sk_buff *skb, struct iet_session *session)
{
	struct iet_conn *conn;
	struct nlattr *conns;

	lockdep_assert_held(&session->target->lock);
	if (nla_put_u32(skb, IET_A_TID, session->target->tid) ||
	    nla_put_u64_64bit(skb, IET_A_SID, session->sid, IET_A_PAD) ||
	    nla_put_string(skb, IET_A_INITIATOR_NAME, session->initiator) ||
	    put_u32_array(skb, IET_A_SESSION_PARAMS, session->keys,
			  IET_KEY_MAX) ||
	    iet_stats_put(skb, &session->stats) ||
	    nla_put_u32(skb, IET_A_TPGT, session->tpgt))
		return -EMSGSIZE;
	conns = nla_nest_start(skb, IET_A_CONNS);
	if (!conns)
		return -EMSGSIZE;
	list_for_each_entry(conn, &session->conns, list)
		if (fill_conn(skb, conn))
			return -EMSGSIZE;
	nla_nest_end(skb, conns);
	return 0;
}

/* cb->args[0]: sessions of the target already dumped */
static int session_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct iet_session *session;
	struct iet_target *target;
	long skip = cb->args[0];
	void *hdr;
	int ret;

	mutex_lock(&iet_mutex);
	cb->seq = atomic_read(&iet_generation);
	target = dump_target(cb);
	if (IS_ERR(target)) {
		ret = PTR_ERR(target);
		goto out;
	}
	mutex_lock(&target->lock);
	list_for_each_entry(session, &target->sessions, list) {
		if (skip-- > 0)
			continue;
		hdr = dump_put(skb, cb, IET_CMD_SESSION_GET);
		if (!hdr)
			break;
		ret = fill_session(skb, session);
		if (ret) {
			genlmsg_cancel(skb, hdr);
			if (!skb->len)
				goto out_unlock;
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	ret = skb->len;
out_unlock:
	mutex_unlock(&target->lock);
out:
	mutex_unlock(&iet_mutex);
	return ret;
}

static u32 get_u32_or(const struct nlattr *attr, u32 def)
{
	return attr ? nla_get_u32(attr) : def;
}

static int lun_new(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	struct nlattr **a = info->attrs;
	struct iet_lun_params p;
	int ret;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_LUN) ||
	    GENL_REQ_ATTR_CHECK(info, IET_A_LUN_TYPE))
		return -EINVAL;
	p = (struct iet_lun_params) {
		.type = nla_get_u32(a[IET_A_LUN_TYPE]),
		.path = a[IET_A_LUN_PATH] ? nla_data(a[IET_A_LUN_PATH]) : NULL,
		.iomode = get_u32_or(a[IET_A_LUN_IOMODE], IET_IOMODE_WT),
		.scsi_id = a[IET_A_LUN_SCSI_ID] ?
			   nla_data(a[IET_A_LUN_SCSI_ID]) : "",
		.scsi_sn = a[IET_A_LUN_SCSI_SN] ?
			   nla_data(a[IET_A_LUN_SCSI_SN]) : "",
		.block_size = get_u32_or(a[IET_A_LUN_BLOCK_SIZE], 512),
		.rotation_rate = get_u32_or(a[IET_A_LUN_ROTATION_RATE], 0),
		.thin = get_u32_or(a[IET_A_LUN_THIN], 1),
		.blocks = a[IET_A_LUN_BLOCKS] ?
			  nla_get_u64(a[IET_A_LUN_BLOCKS]) : 0,
	};
	/* A 512e LUN says so; by default the physical block is the logical. */
	p.phys_block_size = get_u32_or(a[IET_A_LUN_PHYS_BLOCK_SIZE],
				       p.block_size);
	p.mode_select = get_u32_or(a[IET_A_LUN_MODE_SELECT],
				   p.iomode != IET_IOMODE_WT);
	ret = iet_lun_add(target, nla_get_u32(a[IET_A_LUN]), &p, info->extack);
	changed();
	return ret;
}

static int lun_del(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_LUN))
		return -EINVAL;
	ret = iet_lun_del(target, nla_get_u32(info->attrs[IET_A_LUN]));
	if (ret == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_LUN],
				    "no such LUN");
	changed();
	return ret;
}

/* The LUN a request names (a reference), or NULL with the reason said. */
static struct iet_lun *req_lun(struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	struct iet_lun *lun;

	if (!target || GENL_REQ_ATTR_CHECK(info, IET_A_LUN))
		return NULL;
	lun = iet_lun_get(target, nla_get_u32(info->attrs[IET_A_LUN]));
	if (!lun)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_LUN],
				    "no such LUN");
	return lun;
}

/* Room for a LUN's reservations: every registration at its longest. */
#define PR_MSG_SIZE	(NLMSG_GOODSIZE + IET_PR_REGS_MAX * \
			 (nla_total_size(0) + nla_total_size_64bit(8) * 2 + \
			  nla_total_size(IET_NAME_MAX + 1) + \
			  nla_total_size(4) * 2))

static int lun_set(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_lun *lun = req_lun(info);
	struct nlattr **a = info->attrs;
	int ret;

	if (!lun)
		return -ENOENT;
	if (a[IET_A_LUN_BLOCKS] && !nla_get_u64(a[IET_A_LUN_BLOCKS])) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[IET_A_LUN_BLOCKS],
				    "a LUN has at least one block");
		ret = -EINVAL;
	} else {
		ret = iet_lun_resize(lun, a[IET_A_LUN_BLOCKS] ?
				     nla_get_u64(a[IET_A_LUN_BLOCKS]) : 0,
				     get_u32_or(a[IET_A_LUN_RESIZE_FORCE], 0),
				     info->extack);
	}
	iet_lun_put(lun);
	/* A dump sees a change only when there was one. */
	if (ret > 0)
		changed();
	return ret < 0 ? ret : 0;
}

static int pr_get(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_lun *lun = req_lun(info);
	struct sk_buff *msg;
	void *hdr;
	int ret = -EMSGSIZE;

	if (!lun)
		return -ENOENT;
	msg = genlmsg_new(PR_MSG_SIZE, GFP_KERNEL);
	if (!msg) {
		iet_lun_put(lun);
		return -ENOMEM;
	}
	hdr = genlmsg_put_reply(msg, info, &iet_family, 0, IET_CMD_PR_GET);
	if (hdr && !nla_put_u32(msg, IET_A_TID, lun->target->tid) &&
	    !nla_put_u32(msg, IET_A_LUN, lun->lun) && !iet_pr_fill(msg, lun)) {
		genlmsg_end(msg, hdr);
		ret = genlmsg_reply(msg, info);
		msg = NULL;
	}
	nlmsg_free(msg);
	iet_lun_put(lun);
	return ret;
}

static int pr_clear(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_lun *lun;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, IET_A_PR_CLEAR))
		return -EINVAL;
	lun = req_lun(info);
	if (!lun)
		return -ENOENT;
	ret = iet_pr_admin_clear(lun, nla_get_u32(info->attrs[IET_A_PR_CLEAR]) ==
				 IET_PR_CLEAR_ALL);
	if (ret && ret != -ENOMEM)
		NL_SET_ERR_MSG(info->extack,
			       "the LUN's state could not be kept through power loss (pr_dir)");
	iet_lun_put(lun);
	return ret;
}

static int tpg_set(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_TPGT))
		return -EINVAL;
	ret = iet_tpg_set(target, nla_get_u32(info->attrs[IET_A_TPGT]),
			  get_u32_or(info->attrs[IET_A_ALUA_STATE],
				     IET_ALUA_UNSPEC),
			  info->attrs[IET_A_TPG_REMOTE] ?
			  nla_get_u32(info->attrs[IET_A_TPG_REMOTE]) :
			  IET_TPG_KEEP, info->extack);
	changed();
	return ret;
}

static int tpg_del(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_TPGT))
		return -EINVAL;
	ret = iet_tpg_del(target, nla_get_u32(info->attrs[IET_A_TPGT]),
			  info->extack);
	changed();
	return ret;
}

/* cb->args[0]: the next slot to dump */
static int tpg_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct iet_target *target;
	void *hdr;
	int ret;

	mutex_lock(&iet_mutex);
	cb->seq = atomic_read(&iet_generation);
	target = dump_target(cb);
	if (IS_ERR(target)) {
		ret = PTR_ERR(target);
		goto out;
	}
	mutex_lock(&target->lock);
	for (; cb->args[0] < IET_TPGS_MAX; cb->args[0]++) {
		struct iet_tpg *tpg = &target->tpgs[cb->args[0]];

		if (!tpg->tag)
			continue;
		hdr = dump_put(skb, cb, IET_CMD_TPG_GET);
		if (!hdr)
			break;
		if (nla_put_u32(skb, IET_A_TID, target->tid) ||
		    nla_put_u32(skb, IET_A_TPGT, tpg->tag) ||
		    nla_put_u32(skb, IET_A_ALUA_STATE,
				iet_alua_state_uapi(tpg->state)) ||
		    nla_put_u32(skb, IET_A_TPG_SESSIONS, tpg->sessions) ||
		    nla_put_u32(skb, IET_A_TPG_REMOTE, tpg->remote)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	mutex_unlock(&target->lock);
	ret = skb->len;
out:
	mutex_unlock(&iet_mutex);
	return ret;
}

static int session_new(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	int ret;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_SID) ||
	    GENL_REQ_ATTR_CHECK(info, IET_A_INITIATOR_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, IET_A_EXP_CMDSN))
		return -EINVAL;
	ret = iet_session_add(target, nla_get_u64(info->attrs[IET_A_SID]),
			      nla_data(info->attrs[IET_A_INITIATOR_NAME]),
			      nla_get_u32(info->attrs[IET_A_EXP_CMDSN]),
			      get_u32_or(info->attrs[IET_A_TPGT],
					 IET_TPGT_DEFAULT),
			      info->attrs[IET_A_SESSION_PARAMS], info->extack);
	changed();
	return ret;
}

static int session_del(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_session *session = NULL;
	struct iet_target *target;
	int ret;

	mutex_lock(&iet_mutex);
	target = req_target(info);
	if (target)
		session = req_session(info, target);
	if (session)
		iet_session_end(session);
	mutex_unlock(&iet_mutex);
	if (!session)
		return -ENOENT;
	changed();
	/*
	 * Wait until it is gone, so that tasks of a session being reinstated
	 * never overlap those of its successor.
	 */
	ret = wait_gone(session->target, &session->unlinked, info);
	iet_session_put(session);
	return ret;
}

static int conn_new(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	struct iet_session *session;
	int ret;

	if (!target)
		return -ENOENT;
	session = req_session(info, target);
	if (!session)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_CID) ||
	    GENL_REQ_ATTR_CHECK(info, IET_A_CONN_FD) ||
	    GENL_REQ_ATTR_CHECK(info, IET_A_STATSN)) {
		iet_session_put(session);
		return -EINVAL;
	}
	ret = iet_conn_add(session, nla_get_u32(info->attrs[IET_A_CID]),
			   nla_get_s32(info->attrs[IET_A_CONN_FD]),
			   nla_get_u32(info->attrs[IET_A_STATSN]),
			   info->attrs[IET_A_SESSION_PARAMS], info->extack);
	iet_session_put(session);
	changed();
	return ret;
}

static int conn_del(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_session *session = NULL;
	struct iet_conn *conn = NULL;
	struct iet_target *target;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, IET_A_CID))
		return -EINVAL;
	mutex_lock(&iet_mutex);
	target = req_target(info);
	if (target)
		session = req_session(info, target);
	if (session) {
		mutex_lock(&target->lock);
		conn = iet_conn_lookup(session, nla_get_u32(info->attrs[IET_A_CID]));
		if (conn) {
			kref_get(&conn->kref);
			iet_conn_close(conn);
		} else {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_CID],
					    "no connection with this cid");
		}
		mutex_unlock(&target->lock);
		iet_session_put(session);
	}
	mutex_unlock(&iet_mutex);
	if (!conn)
		return -ENOENT;
	changed();
	/*
	 * Wait until the connection is gone, so that a connection
	 * reinstated with the same cid never overlaps its predecessor.
	 */
	ret = wait_gone(conn->session->target, &conn->unlinked, info);
	iet_conn_put(conn);
	return ret;
}

static int logout_req(struct sk_buff *skb, struct genl_info *info)
{
	struct iet_target *target = req_target(info);
	struct iet_session *session = NULL;
	u16 tpgt = 0;
	int cid = -1;
	int n;

	if (!target)
		return -ENOENT;
	if (GENL_REQ_ATTR_CHECK(info, IET_A_LOGOUT_WAIT))
		return -EINVAL;
	if (info->attrs[IET_A_TPGT] &&
	    (info->attrs[IET_A_SID] || info->attrs[IET_A_CID])) {
		GENL_SET_ERR_MSG(info, "a portal group or a session, not both");
		return -EINVAL;
	}
	if (info->attrs[IET_A_CID] && !info->attrs[IET_A_SID]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[IET_A_CID],
				    "a connection needs its session");
		return -EINVAL;
	}
	if (info->attrs[IET_A_TPGT])
		tpgt = nla_get_u32(info->attrs[IET_A_TPGT]);
	if (info->attrs[IET_A_CID])
		cid = nla_get_u32(info->attrs[IET_A_CID]);
	if (info->attrs[IET_A_SID]) {
		session = req_session(info, target);
		if (!session)
			return -ENOENT;
	}
	n = iet_logout_request(target, tpgt, session, cid,
			       nla_get_u32(info->attrs[IET_A_LOGOUT_WAIT]));
	if (session)
		iet_session_put(session);
	if (!n) {
		GENL_SET_ERR_MSG(info, "no connection to ask");
		return -ENOENT;
	}
	return 0;
}

static const struct genl_small_ops iet_ops[] = {
	{
		.cmd = IET_CMD_TARGET_NEW,
		.flags = GENL_ADMIN_PERM,
		.doit = target_new,
	}, {
		.cmd = IET_CMD_TARGET_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = target_set,
	}, {
		.cmd = IET_CMD_TARGET_DEL,
		.flags = GENL_ADMIN_PERM,
		.doit = target_del,
	}, {
		.cmd = IET_CMD_TARGET_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = target_get,
		.dumpit = target_dump,
	}, {
		.cmd = IET_CMD_LUN_NEW,
		.flags = GENL_ADMIN_PERM,
		.doit = lun_new,
	}, {
		.cmd = IET_CMD_LUN_DEL,
		.flags = GENL_ADMIN_PERM,
		.doit = lun_del,
	}, {
		.cmd = IET_CMD_LUN_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = lun_set,
	}, {
		.cmd = IET_CMD_SESSION_NEW,
		.flags = GENL_ADMIN_PERM,
		.doit = session_new,
	}, {
		.cmd = IET_CMD_SESSION_DEL,
		.flags = GENL_ADMIN_PERM,
		.internal_flags = UNLOCKED,
		.doit = session_del,
	}, {
		.cmd = IET_CMD_CONN_NEW,
		.flags = GENL_ADMIN_PERM,
		.doit = conn_new,
	}, {
		.cmd = IET_CMD_CONN_DEL,
		.flags = GENL_ADMIN_PERM,
		.internal_flags = UNLOCKED,
		.doit = conn_del,
	}, {
		.cmd = IET_CMD_PR_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = pr_get,
	}, {
		.cmd = IET_CMD_PR_CLEAR,
		.flags = GENL_ADMIN_PERM,
		.doit = pr_clear,
	}, {
		.cmd = IET_CMD_TPG_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = tpg_set,
	}, {
		.cmd = IET_CMD_TPG_DEL,
		.flags = GENL_ADMIN_PERM,
		.doit = tpg_del,
	}, {
		.cmd = IET_CMD_TPG_GET,
		.flags = GENL_ADMIN_PERM,
		.dumpit = tpg_dump,
	}, {
		.cmd = IET_CMD_LOGOUT_REQ,
		.flags = GENL_ADMIN_PERM,
		.doit = logout_req,
	},
};

/* The dumps of objects that can be large, with a start that says so. */
static const struct genl_ops iet_dump_ops[] = {
	{
		.cmd = IET_CMD_LUN_GET,
		.flags = GENL_ADMIN_PERM,
		.start = obj_dump_start,
		.dumpit = lun_dump,
	}, {
		.cmd = IET_CMD_SESSION_GET,
		.flags = GENL_ADMIN_PERM,
		.start = obj_dump_start,
		.dumpit = session_dump,
	},
};

static struct genl_family iet_family __ro_after_init = {
	.name = IET_GENL_NAME,
	.version = IET_GENL_VERSION,
	.maxattr = IET_A_MAX,
	.policy = iet_policy,
	.module = THIS_MODULE,
	.pre_doit = pre_doit,
	.post_doit = post_doit,
	.ops = iet_dump_ops,
	.n_ops = ARRAY_SIZE(iet_dump_ops),
	.small_ops = iet_ops,
	.n_small_ops = ARRAY_SIZE(iet_ops),
	.mcgrps = iet_mcgrps,
	.n_mcgrps = ARRAY_SIZE(iet_mcgrps),
};

static void event(u8 cmd, u32 tid, u64 sid, int cid)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &iet_family, 0, cmd);
	if (!hdr ||
	    nla_put_u32(msg, IET_A_TID, tid) ||
	    nla_put_u64_64bit(msg, IET_A_SID, sid, IET_A_PAD) ||
	    (cid >= 0 && nla_put_u32(msg, IET_A_CID, cid))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	changed();
	genlmsg_multicast(&iet_family, msg, 0, IET_MCGRP_EVENTS, GFP_KERNEL);
}

void iet_event_conn_closed(u32 tid, u64 sid, u16 cid)
{
	event(IET_CMD_CONN_CLOSED, tid, sid, cid);
}

void iet_event_session_closed(u32 tid, u64 sid)
{
	event(IET_CMD_SESSION_CLOSED, tid, sid, -1);
}

int __init iet_netlink_init(void)
{
	return genl_register_family(&iet_family);
}

void iet_netlink_exit(void)
{
	genl_unregister_family(&iet_family);
}
