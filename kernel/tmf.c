// SPDX-License-Identifier: GPL-2.0
/*
 * Task management, Logout, and Text requests in the full feature phase.
 * A TMF response waits until every task it ended has released all it held,
 * so no response of an aborted task can follow it (RFC 7143 4.2.3.3).
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

/* The TMF has no more tasks to wait for: its response may go. */
static void tmf_put_wait(struct iet_cmd *tmf)
{
	if (atomic_dec_and_test(&tmf->tmf_wait))
		iet_cmd_queue_tx(tmf);
}

/* Called as an aborted task is freed. */
void iet_tmf_release(struct iet_cmd *victim)
{
	struct iet_cmd *tmf = victim->tmf;

	victim->tmf = NULL;
	tmf_put_wait(tmf);
	iet_cmd_put(tmf);
}

/*
 * Abort a task unless its status is already on its way (then it is answered,
 * not aborted: the initiator gets one or the other, never both).
 */
static bool abort_task(struct iet_cmd *tmf, struct iet_cmd *victim)
{
	struct iet_conn *conn = victim->conn;
	bool take;

	spin_lock(&conn->lock);
	take = !victim->aborted && victim != tmf && !victim->status_sent;
	if (take) {
		victim->aborted = true;
		victim->tmf = tmf;
	}
	spin_unlock(&conn->lock);
	if (!take)
		return false;
	iet_cmd_get(tmf);
	atomic_inc(&tmf->tmf_wait);
	/* Data-Out still on its way for it is dropped from now on. */
	iet_cmd_finish(victim);
	return true;
}

/*
 * Collect the tasks a function applies to: the one with the given ITT in
 * the TMF's session, or those on lun (every LUN when lun < 0) that entered
 * the task set before the TMF, in its session or, for resets, in all.
 */
static unsigned int collect(struct iet_cmd *tmf, struct list_head *list,
			    int lun, bool by_itt, u32 itt, bool all_sessions)
{
	struct iet_session *own = tmf->conn->session, *session;
	struct iet_conn *conn;
	struct iet_cmd *cmd;
	unsigned long index;
	unsigned int nr = 0;
	bool take;

	mutex_lock(&own->target->lock);
	list_for_each_entry(session, &own->target->sessions, list) {
		if (session != own && !all_sessions)
			continue;
		list_for_each_entry(conn, &session->conns, list) {
			xa_lock(&conn->cmds);
			xa_for_each(&conn->cmds, index, cmd) {
				if (by_itt)
					take = cmd->itt == itt;
				else if (lun >= 0 && cmd->req.lun_id != lun)
					take = false;
				else if (session == own)
					take = cmd->delivered ||
					       iscsi_sna_lt(cmd->cmdsn, tmf->cmdsn);
				else
					take = cmd->delivered;
				if (!take)
					continue;
				iet_cmd_get(cmd);
				list_add_tail(&cmd->tmf_entry, list);
				nr++;
			}
			xa_unlock(&conn->cmds);
		}
	}
	mutex_unlock(&own->target->lock);
	return nr;
}

/* Abort the collected tasks; how many were aborted. */
static unsigned int abort_all(struct iet_cmd *tmf, struct list_head *list)
{
	struct iet_cmd *cmd, *tmp;
	unsigned int nr = 0;

	list_for_each_entry_safe(cmd, tmp, list, tmf_entry) {
		list_del_init(&cmd->tmf_entry);
		nr += abort_task(tmf, cmd);
		iet_cmd_put(cmd);
	}
	return nr;
}

/*
 * ABORT TASK for a task we do not have: "Function complete" only when its
 * RefCmdSN was never received, i.e. lies in the window and before this
 * request (RFC 7143 11.5.1); a task that already finished does not exist.
 */
static bool ref_in_window(struct iet_session *session, u32 ref, u32 cmdsn)
{
	u32 exp, max;

	iet_session_window(session, &exp, &max);
	return iscsi_sna_gte(ref, exp) && iscsi_sna_lte(ref, max) &&
	       iscsi_sna_lt(ref, cmdsn);
}

void iet_tmf_execute(struct iet_cmd *tmf)
{
	struct iscsi_tm *hdr = (struct iscsi_tm *)&tmf->hdr;
	struct iet_session *session = tmf->conn->session;
	struct iet_target *target = session->target;
	u8 function = hdr->flags & ISCSI_FLAG_TM_FUNC_MASK;
	int lun = scsilun_to_int(&hdr->lun);
	struct iet_lun *l = NULL;
	LIST_HEAD(victims);
	u8 response = ISCSI_TMF_RSP_COMPLETE;

	atomic_set(&tmf->tmf_wait, 1);
	switch (function) {
	case ISCSI_TM_FUNC_ABORT_TASK:
		collect(tmf, &victims, -1, true, (__force u32)hdr->rtt, false);
		if (!abort_all(tmf, &victims) &&
		    !ref_in_window(session, be32_to_cpu(hdr->refcmdsn),
				   tmf->cmdsn))
			response = ISCSI_TMF_RSP_NO_TASK;
		break;
	case ISCSI_TM_FUNC_ABORT_TASK_SET:
	case ISCSI_TM_FUNC_CLEAR_TASK_SET:
	case ISCSI_TM_FUNC_LOGICAL_UNIT_RESET:
		if (lun <= IET_LUN_MAX)
			l = iet_lun_get(target, lun);
		if (!l) {
			response = ISCSI_TMF_RSP_NO_LUN;
			break;
		}
		iet_lun_put(l);
		if (function != ISCSI_TM_FUNC_LOGICAL_UNIT_RESET) {
			collect(tmf, &victims, lun, false, 0, false);
			break;
		}
		/*
		 * A reset ends the tasks of every I_T nexus (TAS=0: without
		 * status) and tells every nexus, this one too (SAM-5 5.9.7).
		 */
		collect(tmf, &victims, lun, false, 0, true);
		iet_ua_add(target, NULL, lun, 0x29, 0x03);
		break;
	case ISCSI_TM_FUNC_TARGET_WARM_RESET:
	case ISCSI_TM_FUNC_TARGET_COLD_RESET:
		collect(tmf, &victims, -1, false, 0, true);
		iet_ua_add(target, NULL, -1, 0x29, 0x00);
		break;
	case ISCSI_TM_FUNC_TASK_REASSIGN:
		/* Connection allegiance cannot move at ERL 0. */
		response = ISCSI_TMF_RSP_NO_FAILOVER;
		break;
	case ISCSI_TM_FUNC_CLEAR_ACA:
		response = ISCSI_TMF_RSP_NOT_SUPPORTED;
		break;
	default:
		response = ISCSI_TMF_RSP_REJECTED;
		break;
	}
	tmf->tmf_response = response;
	abort_all(tmf, &victims);
	tmf_put_wait(tmf);
}

/* ---- Logout ------------------------------------------------------------ */

/* The Logout Response goes once the connection's commands are done. */
void iet_conn_check_logout(struct iet_conn *conn)
{
	struct iet_cmd *cmd = NULL;

	spin_lock(&conn->lock);
	if (conn->logout && !atomic_read(&conn->nr_scsi)) {
		cmd = conn->logout;
		conn->logout = NULL;
	}
	spin_unlock(&conn->lock);
	if (cmd) {
		iet_cmd_queue_tx(cmd);
		iet_cmd_put(cmd);
	}
}

void iet_logout_execute(struct iet_cmd *cmd)
{
	struct iscsi_logout *hdr = (struct iscsi_logout *)&cmd->hdr;
	struct iet_conn *conn = cmd->conn;
	struct iet_session *session = conn->session;
	u8 reason = hdr->flags & ISCSI_FLAG_LOGOUT_REASON_MASK;
	u16 cid = be16_to_cpu(hdr->cid);
	struct iet_conn *other;

	cmd->tmf_response = ISCSI_LOGOUT_SUCCESS;
	switch (reason) {
	case ISCSI_LOGOUT_REASON_CLOSE_SESSION:
		cmd->logout_scope = LOGOUT_SESSION;
		break;
	case ISCSI_LOGOUT_REASON_CLOSE_CONNECTION:
		if (cid == conn->cid) {
			cmd->logout_scope = LOGOUT_CONN;
			break;
		}
		mutex_lock(&session->target->lock);
		other = iet_conn_lookup(session, cid);
		if (other)
			iet_conn_close(other);
		else
			cmd->tmf_response = ISCSI_LOGOUT_CID_NOT_FOUND;
		mutex_unlock(&session->target->lock);
		break;
	case ISCSI_LOGOUT_REASON_RECOVERY:
		cmd->tmf_response = ISCSI_LOGOUT_RECOVERY_UNSUPPORTED;
		break;
	default:
		iet_reject(conn, &cmd->hdr, ISCSI_REASON_PROTOCOL_ERROR);
		return;
	}
	if (cmd->logout_scope == LOGOUT_NONE) {
		iet_cmd_queue_tx(cmd);
		return;
	}
	iet_cmd_get(cmd);
	spin_lock(&conn->lock);
	swap(conn->logout, cmd);
	spin_unlock(&conn->lock);
	if (cmd)	/* a second Logout replaces the first */
		iet_cmd_put(cmd);
	iet_conn_check_logout(conn);
}

/* ---- Text -------------------------------------------------------------- */

static u32 text_add(struct iet_buf *out, u32 off, const char *key,
		    const char *val)
{
	char kv[IET_NAME_MAX + 64];
	int n = snprintf(kv, sizeof(kv), "%s=%s", key, val);

	if (n < 0 || n >= sizeof(kv) || off + n + 1 > out->len)
		return off;
	iet_buf_copy_to(out, off, kv, n + 1);
	return off + n + 1;
}

static u32 text_addresses(struct iet_cmd *cmd, struct iet_buf *out, u32 off)
{
	struct iet_conn *conn = cmd->conn;
	char addr[64];

	off = text_add(out, off, "TargetName", conn->session->target->name);
	if (conn->local.ss_family == AF_INET6)
		snprintf(addr, sizeof(addr), "[%pI6c]:%u,1",
			 &((struct sockaddr_in6 *)&conn->local)->sin6_addr,
			 ntohs(((struct sockaddr_in6 *)&conn->local)->sin6_port));
	else
		snprintf(addr, sizeof(addr), "%pI4:%u,1",
			 &((struct sockaddr_in *)&conn->local)->sin_addr,
			 ntohs(((struct sockaddr_in *)&conn->local)->sin_port));
	return text_add(out, off, "TargetAddress", addr);
}

/*
 * Operational keys are negotiated at login; in the full feature phase only
 * SendTargets is answered: for this target, at the connection's address.
 */
void iet_text_execute(struct iet_cmd *cmd)
{
	struct iscsi_text *hdr = (struct iscsi_text *)&cmd->hdr;
	struct iet_conn *conn = cmd->conn;
	struct iet_buf in = cmd->data;
	u32 len = cmd->data_len, off = 0, pos = 0;
	char *text;

	if (!(hdr->flags & ISCSI_FLAG_CMD_FINAL) ||
	    hdr->ttt != cpu_to_be32(ISCSI_RESERVED_TAG)) {
		/* No multi-PDU text in the full feature phase. */
		iet_reject(conn, &cmd->hdr, ISCSI_REASON_CMD_NOT_SUPPORTED);
		return;
	}
	text = kmalloc(len + 1, GFP_NOIO);
	if (!text)
		return;
	iet_buf_copy_from(&in, 0, text, len);
	text[len] = '\0';
	memset(&cmd->data, 0, sizeof(cmd->data));
	if (iet_buf_alloc(&cmd->data, min_t(u32, conn->max_xmit_dsl, 8192))) {
		iet_buf_free(&in);
		kfree(text);
		return;
	}
	while (pos < len) {
		char *kv = text + pos, *eq = strchr(kv, '=');
		u32 n = strlen(kv);

		pos += n + 1;
		if (!n)
			continue;
		if (!eq) {
			off = text_add(&cmd->data, off, kv, "Reject");
			continue;
		}
		*eq = '\0';
		if (!strcmp(kv, "SendTargets")) {
			if (!strcmp(eq + 1, "All") || !eq[1] ||
			    !strcmp(eq + 1, conn->session->target->name))
				off = text_addresses(cmd, &cmd->data, off);
		} else {
			off = text_add(&cmd->data, off, kv, "NotUnderstood");
		}
	}
	cmd->data_len = off;
	iet_buf_free(&in);
	kfree(text);
	iet_cmd_queue_tx(cmd);
}
