// SPDX-License-Identifier: GPL-2.0
/* Sessions (I_T nexuses): negotiated keys, the CmdSN window, unit attentions. */
#include <linux/slab.h>
#include <net/netlink.h>

#include "iet.h"

/* RFC 7143 defaults; ietd sends every key it negotiated anyway. */
static const u32 session_defaults[IET_KEY_MAX + 1] = {
	[IET_KEY_INITIAL_R2T] = 1,
	[IET_KEY_IMMEDIATE_DATA] = 1,
	[IET_KEY_MAX_CONNECTIONS] = 1,
	[IET_KEY_MAX_RECV_DSL] = 8192,
	[IET_KEY_MAX_XMIT_DSL] = 8192,
	[IET_KEY_MAX_BURST] = 262144,
	[IET_KEY_FIRST_BURST] = 65536,
	[IET_KEY_DEFAULT_TIME2WAIT] = 2,
	[IET_KEY_DEFAULT_TIME2RETAIN] = 0,
	[IET_KEY_MAX_OUTSTANDING_R2T] = 1,
	[IET_KEY_DATA_PDU_INORDER] = 1,
	[IET_KEY_DATA_SEQUENCE_INORDER] = 1,
	[IET_KEY_ERROR_RECOVERY_LEVEL] = 0,
	[IET_KEY_HEADER_DIGEST] = IET_DIGEST_NONE,
	[IET_KEY_DATA_DIGEST] = IET_DIGEST_NONE,
};

/* What the data path implements; anything else was negotiated wrongly. */
static int check_session_keys(const u32 *keys, struct netlink_ext_ack *extack)
{
	if (keys[IET_KEY_ERROR_RECOVERY_LEVEL]) {
		NL_SET_ERR_MSG(extack, "only ErrorRecoveryLevel=0 is supported");
		return -EOPNOTSUPP;
	}
	if (!keys[IET_KEY_DATA_PDU_INORDER] ||
	    !keys[IET_KEY_DATA_SEQUENCE_INORDER]) {
		NL_SET_ERR_MSG(extack, "only in-order data is supported");
		return -EOPNOTSUPP;
	}
	if (keys[IET_KEY_HEADER_DIGEST] > IET_DIGEST_CRC32C ||
	    keys[IET_KEY_DATA_DIGEST] > IET_DIGEST_CRC32C) {
		NL_SET_ERR_MSG(extack, "a negotiated digest is None or CRC32C");
		return -EINVAL;
	}
	if (keys[IET_KEY_FIRST_BURST] > keys[IET_KEY_MAX_BURST]) {
		NL_SET_ERR_MSG(extack,
			       "FirstBurstLength exceeds MaxBurstLength");
		return -EINVAL;
	}
	return 0;
}

/*
 * A new I_T nexus: each logical unit reports POWER ON, RESET, OR BUS
 * DEVICE RESET OCCURRED to it once, or I_T NEXUS LOSS OCCURRED when its
 * initiator port's last session ended (SAM-5 6.3). Under target->lock,
 * before the session can take a command.
 */
static void first_attention(struct iet_session *session)
{
	struct iet_target *target = session->target;
	struct iet_lost_nexus *lost, *found = NULL;
	unsigned long idx;
	void *lun;

	lockdep_assert_held(&target->lock);
	list_for_each_entry(lost, &target->lost, list) {
		if (lost->isid == session->sid >> 16 &&
		    !strcmp(lost->initiator, session->initiator)) {
			found = lost;
			break;
		}
	}
	if (found) {
		list_del(&found->list);
		target->nr_lost--;
		kfree(found);
	}
	xa_for_each(&target->luns, idx, lun)
		iet_ua_add_session(session, idx, 0x29, found ? 0x07 : 0x00);
}

/*
 * The initiator port of a session just unlinked is remembered, for its
 * next session to hear I_T NEXUS LOSS OCCURRED: in the same hold of
 * target->lock as the unlinking, so that no login of the port in between
 * is told POWER ON instead.
 */
static void nexus_lost_locked(struct iet_session *session)
{
	struct iet_target *target = session->target;
	struct iet_lost_nexus *lost, *old;

	lockdep_assert_held(&target->lock);
	lost = kmalloc(sizeof(*lost), GFP_NOIO);
	if (!lost)
		return;
	lost->isid = session->sid >> 16;
	strscpy(lost->initiator, session->initiator, sizeof(lost->initiator));
	list_add(&lost->list, &target->lost);
	if (++target->nr_lost > IET_LOST_MAX) {
		old = list_last_entry(&target->lost, struct iet_lost_nexus,
				      list);
		list_del(&old->list);
		target->nr_lost--;
		kfree(old);
	}
}

/*
 * A session ended: I_T nexus loss (SAM-5 6.3.4). Its SPC-2 reservations
 * end (its port was remembered as it was unlinked).
 */
void iet_session_lost(struct iet_session *session)
{
	iet_pr_release_spc2(session->target, session);
}

void iet_lost_free(struct iet_target *target)
{
	struct iet_lost_nexus *lost, *tmp;

	list_for_each_entry_safe(lost, tmp, &target->lost, list)
		kfree(lost);
	INIT_LIST_HEAD(&target->lost);
	target->nr_lost = 0;
}

/* A session iet_session_add() made and did not add. */
static void session_discard(struct iet_session *session)
{
	iet_stats_free(&session->stats);
	kfree(session);
}

int iet_session_add(struct iet_target *target, u64 sid, const char *initiator,
		    u32 exp_cmdsn, u16 tpgt, struct nlattr *keys,
		    struct netlink_ext_ack *extack)
{
	struct iet_session *session, *old;
	int ret, tpg;

	lockdep_assert_held(&iet_mutex);
	if (!initiator[0]) {
		NL_SET_ERR_MSG(extack, "a session needs an initiator name");
		return -EINVAL;
	}
	session = kzalloc(sizeof(*session), GFP_KERNEL);
	if (!session)
		return -ENOMEM;
	if (iet_stats_init(&session->stats)) {
		session_discard(session);
		return -ENOMEM;
	}
	kref_init(&session->kref);
	session->sid = sid;
	strscpy(session->initiator, initiator, sizeof(session->initiator));
	INIT_LIST_HEAD(&session->conns);
	INIT_LIST_HEAD(&session->pending);
	iet_ua_init(session);
	spin_lock_init(&session->lock);
	memcpy(session->keys, session_defaults, sizeof(session->keys));
	ret = iet_parse_params(keys, session->keys, IET_KEY_MAX,
			       iet_key_policy, extack) ?:
	      check_session_keys(session->keys, extack);
	if (ret) {
		session_discard(session);
		return ret;
	}

	mutex_lock(&target->lock);
	list_for_each_entry(old, &target->sessions, list) {
		if (old->sid == sid) {
			mutex_unlock(&target->lock);
			session_discard(session);
			NL_SET_ERR_MSG(extack, "a session with this sid exists");
			return -EEXIST;
		}
	}
	tpg = iet_tpg_find(target, tpgt);
	if (tpg < 0) {
		mutex_unlock(&target->lock);
		session_discard(session);
		NL_SET_ERR_MSG(extack, "the target has no such portal group");
		return -ENOENT;
	}
	if (target->tpgs[tpg].remote) {
		mutex_unlock(&target->lock);
		session_discard(session);
		NL_SET_ERR_MSG(extack, "the portal group is another node's");
		return -EINVAL;
	}
	session->tpgt = tpgt;
	session->tpg = tpg;
	target->tpgs[tpg].sessions++;
	kref_get(&target->kref);
	session->target = target;
	session->queued_cmds = target->tparams[IET_TP_QUEUED_CMDS];
	session->exp_cmdsn = exp_cmdsn;
	session->max_cmdsn = exp_cmdsn + session->queued_cmds - 1;
	first_attention(session);
	list_add_tail(&session->list, &target->sessions);
	mutex_unlock(&target->lock);
	pr_info("target %u: session %#llx from %s\n", target->tid, sid,
		initiator);
	return 0;
}

/* Returns the session with a reference, or NULL. */
struct iet_session *iet_session_lookup(struct iet_target *target, u64 sid)
{
	struct iet_session *session;

	mutex_lock(&target->lock);
	list_for_each_entry(session, &target->sessions, list) {
		if (session->sid == sid) {
			kref_get(&session->kref);
			mutex_unlock(&target->lock);
			return session;
		}
	}
	mutex_unlock(&target->lock);
	return NULL;
}

static void session_release(struct kref *kref)
{
	struct iet_session *session =
		container_of(kref, struct iet_session, kref);

	WARN_ON_ONCE(!list_empty(&session->pending));
	iet_ua_destroy(session);
	iet_target_put(session->target);
	iet_stats_free(&session->stats);
	kfree(session);
}

void iet_session_put(struct iet_session *session)
{
	kref_put(&session->kref, session_release);
}

/* Unlink a session that has no connection left; under target->lock. */
bool iet_session_unlink_locked(struct iet_session *session)
{
	lockdep_assert_held(&session->target->lock);
	if (session->unlinked || !list_empty(&session->conns))
		return false;
	list_del(&session->list);
	session->target->tpgs[session->tpg].sessions--;
	WRITE_ONCE(session->unlinked, true);
	nexus_lost_locked(session);
	return true;
}

void iet_session_close_locked(struct iet_session *session)
{
	struct iet_conn *conn;

	lockdep_assert_held(&session->target->lock);
	session->closing = true;
	list_for_each_entry(conn, &session->conns, list)
		iet_conn_close(conn);
}

/* After a Logout for the session: its other connections end now. */
void iet_session_close_others(struct iet_conn *conn)
{
	struct iet_session *session = conn->session;
	struct iet_conn *c;

	mutex_lock(&session->target->lock);
	session->closing = true;
	list_for_each_entry(c, &session->conns, list)
		if (c != conn)
			iet_conn_close(c);
	mutex_unlock(&session->target->lock);
}

void iet_session_close(struct iet_session *session)
{
	struct iet_target *target = session->target;

	mutex_lock(&target->lock);
	iet_session_close_locked(session);
	mutex_unlock(&target->lock);
}

/*
 * Close a session: its connections are closed, and a session without any
 * (one that never got its first) is unlinked at once. The caller waits
 * for session->unlinked if it must.
 */
void iet_session_end(struct iet_session *session)
{
	struct iet_target *target = session->target;
	bool unlinked;

	mutex_lock(&target->lock);
	iet_session_close_locked(session);
	unlinked = iet_session_unlink_locked(session);
	mutex_unlock(&target->lock);
	if (unlinked) {
		iet_session_lost(session);
		wake_up_all(&target->wq);
		iet_event_session_closed(target->tid, session->sid);
		iet_session_put(session);	/* the target's list */
	}
}

/*
 * The window advertised in every PDU: it opens as commands finish and
 * never shrinks (RFC 7143 4.2.2.1).
 */
void iet_session_window(struct iet_session *session, u32 *exp, u32 *max)
{
	u32 open, new_max;

	spin_lock(&session->lock);
	open = session->queued_cmds > session->in_flight ?
	       session->queued_cmds - session->in_flight : 0;
	new_max = session->exp_cmdsn + open - 1;
	if (iscsi_sna_gt(new_max, session->max_cmdsn))
		session->max_cmdsn = new_max;
	*exp = session->exp_cmdsn;
	*max = session->max_cmdsn;
	spin_unlock(&session->lock);
}

/* Whether a non-immediate command with this CmdSN may be accepted now. */
bool iet_session_in_window(struct iet_session *session, u32 cmdsn)
{
	bool in;

	spin_lock(&session->lock);
	in = iscsi_sna_gte(cmdsn, session->exp_cmdsn) &&
	     iscsi_sna_lte(cmdsn, session->max_cmdsn);
	spin_unlock(&session->lock);
	return in;
}

/* A command that occupied the window is gone. */
void iet_session_done(struct iet_session *session, struct iet_cmd *cmd)
{
	if (!cmd->counted)
		return;
	spin_lock(&session->lock);
	session->in_flight--;
	spin_unlock(&session->lock);
}
