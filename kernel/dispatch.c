// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatch: commands delivered in CmdSN order (RFC 7143 4.2.2.1), each run
 * once its turn has come and all its data is in, or soliciting that data.
 */
#include <scsi/scsi_common.h>

#include "iet.h"

void iet_cmd_dispatch(struct iet_cmd *cmd)
{
	struct iet_scsi_req *req = &cmd->req;

	if (cmd->aborted) {
		/* Answered TASK ABORTED (build_scsi()), or not at all. */
		if (iet_cmd_tas(cmd))
			iet_cmd_complete(req);
		iet_cmd_finish(cmd);
		return;
	}
	if (cmd->digest_error && req->status == SAM_STAT_GOOD) {
		/* PROTOCOL SERVICE CRC ERROR: the initiator may retry. */
		iet_scsi_sense(req, ABORTED_COMMAND, 0x47, 0x05);
	}
	iet_scsi_check_ua(req);
	iet_alua_check(req);
	iet_sanitize_check(req);
	iet_pr_check(req);
	/*
	 * A read's pages come now, in CmdSN order, within the byte limit:
	 * lent by the backend where it may run now and has the data in
	 * memory, which serves it; else allocated. Only reads as short as
	 * those served from the cache by copying (IET_CACHED_READ_MAX):
	 * longer ones, all lent at once, filled open-iscsi's receive window
	 * faster than it opened it again, and TCP then waited for zero-window
	 * probes (200 ms and more; measured with 1 MiB reads at QD4).
	 */
	if (req->status == SAM_STAT_GOOD && req->io.op == IET_IO_READ) {
		if (iet_cmd_admit(cmd, req->buf_len, IET_Q_MEM_DISPATCH))
			return;
		if (req->lun->ops->lend && req->execute && req->io.len &&
		    req->io.len <= IET_CACHED_READ_MAX &&
		    iet_tset_ready(req) && iet_scsi_hold_backing(req)) {
			req->t_submit = ktime_get_ns();
			if (iet_cmd_buf_lend(cmd)) {
				req->t_backend = ktime_get_ns();
				iet_cmd_complete(req);
				return;
			}
			/* Not lent: its backend time starts where it runs. */
			req->t_submit = 0;
		}
		if (req->status == SAM_STAT_GOOD &&
		    iet_cmd_buf_grow(cmd, req->buf_len)) {
			/* Out of memory for now: the initiator retries. */
			req->status = SAM_STAT_BUSY;
			req->execute = NULL;
		}
	}
	if (req->status != SAM_STAT_GOOD || !req->execute) {
		iet_cmd_complete(req);
	} else if (!req->blocking) {
		/* Here, in the receiving thread, its I/O may not sleep. */
		req->io.nowait = true;
		iet_cmd_execute(cmd);
	} else if (req->execute_nowait && iet_tset_ready(req) &&
		   iet_scsi_hold_backing(req) && !req->execute_nowait(req)) {
		/* Served from the page cache: no I/O thread, no wait. */
		iet_cmd_complete(req);
	} else {
		iet_cmd_get(cmd);
		iet_pool_submit(cmd->conn->session->target, cmd);
	}
}

/* Runs once both its CmdSN turn has come and all its data is in. */
void iet_cmd_try_dispatch(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;
	bool go, r2t;

	spin_lock(&conn->lock);
	go = cmd->state == IET_ST_DELIVERED && cmd->data_done;
	if (go)
		cmd->state = IET_ST_DISPATCHED;
	/* Solicit the rest once the unsolicited part is in. */
	r2t = !go && cmd->state == IET_ST_DELIVERED && !cmd->aborted &&
	      cmd->data_next >= cmd->unsol_len &&
	      cmd->r2t_next < cmd->want_len &&
	      cmd->r2t_outstanding < conn->session->keys[IET_KEY_MAX_OUTSTANDING_R2T];
	spin_unlock(&conn->lock);
	if (go)
		iet_cmd_dispatch(cmd);
	else if (r2t)
		iet_cmd_queue_tx(cmd);
}

void iet_cmd_deliver(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;

	if (cmd->reject_reason) {
		iet_reject(conn, &cmd->hdr, cmd->reject_reason);
		iet_cmd_finish(cmd);
		return;
	}
	switch (cmd->kind) {
	case IET_KIND_SCSI:
		/* Its place among the LU's commands is its CmdSN's. */
		if (cmd->req.lun && cmd->req.execute &&
		    cmd->req.status == SAM_STAT_GOOD)
			iet_tset_enter(&cmd->req);
		spin_lock(&conn->lock);
		cmd->state = IET_ST_DELIVERED;
		spin_unlock(&conn->lock);
		iet_cmd_try_dispatch(cmd);
		break;
	case IET_KIND_TMF:
		iet_tmf_execute(cmd);
		break;
	case IET_KIND_LOGOUT:
		iet_logout_execute(cmd);
		break;
	case IET_KIND_TEXT:
		iet_text_execute(cmd);
		break;
	case IET_KIND_NOP:
		iet_cmd_queue_tx(cmd);
		break;
	default:
		break;
	}
}

/*
 * Deliver commands in CmdSN order (RFC 7143 4.2.2.1). Immediate commands
 * go at once; those ahead of a gap wait in session->pending; those outside
 * the window are dropped.
 */
void iet_cmd_sequence(struct iet_cmd *cmd)
{
	struct iet_session *session = cmd->conn->session;
	struct iet_cmd *next, *pos;
	bool ok;

	if (cmd->immediate) {
		/*
		 * Immediate commands bypass the window; a peer may not use
		 * them to queue without bound (RFC 7143 11.17.1, reason 6).
		 */
		if (atomic_inc_return(&session->immediate) >
		    session->queued_cmds) {
			atomic_dec(&session->immediate);
			iet_reject(cmd->conn, &cmd->hdr,
				   ISCSI_REASON_IMM_CMD_REJECT);
			iet_cmd_finish(cmd);
			return;
		}
		cmd->counted_immediate = true;
		iet_cmd_deliver(cmd);
		return;
	}
	spin_lock(&session->lock);
	/*
	 * Outside [ExpCmdSN, MaxCmdSN] a command is dropped (RFC 7143
	 * 4.2.2.1), ExpCmdSN itself too when the window is closed.
	 */
	ok = !cmd->dropped && iscsi_sna_gte(cmd->cmdsn, session->exp_cmdsn) &&
	     iscsi_sna_lte(cmd->cmdsn, session->max_cmdsn);
	if (ok && cmd->cmdsn != session->exp_cmdsn) {
		/* Keep the queue sorted; a CmdSN seen twice is dropped. */
		list_for_each_entry(pos, &session->pending, pending) {
			if (pos->cmdsn == cmd->cmdsn)
				ok = false;
			if (iscsi_sna_gt(pos->cmdsn, cmd->cmdsn))
				break;
		}
		if (ok) {
			iet_cmd_get(cmd);
			list_add_tail(&cmd->pending, &pos->pending);
			spin_unlock(&session->lock);
			return;
		}
	}
	if (!ok) {
		spin_unlock(&session->lock);
		pr_debug("session %#llx: CmdSN %u outside [%u, %u], dropped\n",
			 session->sid, cmd->cmdsn, session->exp_cmdsn,
			 session->max_cmdsn);
		iet_cmd_finish(cmd);
		return;
	}
	session->exp_cmdsn++;
	session->in_flight++;
	cmd->counted = true;
	spin_unlock(&session->lock);
	iet_cmd_deliver(cmd);

	for (;;) {
		spin_lock(&session->lock);
		next = list_first_entry_or_null(&session->pending,
						struct iet_cmd, pending);
		if (!next || next->cmdsn != session->exp_cmdsn) {
			spin_unlock(&session->lock);
			return;
		}
		list_del_init(&next->pending);
		session->exp_cmdsn++;
		session->in_flight++;
		next->counted = true;
		spin_unlock(&session->lock);
		iet_cmd_deliver(next);
		iet_cmd_put(next);
	}
}
