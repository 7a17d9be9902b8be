// SPDX-License-Identifier: GPL-2.0
/*
 * Task management functions (RFC 7143 11.5, SAM-5 7). A TMF response waits
 * until every task it ended has released all it held, so no response of an
 * aborted task can follow it (RFC 7143 4.2.3.3).
 */
#include <scsi/scsi_common.h>

#include "iet.h"

/* RFC 7144 4.1: the functions of SAM-4 and SAM-5, and their answer. */
#define TMF_QUERY_TASK		9
#define TMF_QUERY_TASK_SET	10
#define TMF_I_T_NEXUS_RESET	11
#define TMF_QUERY_ASYNC_EVENT	12
#define TMF_RSP_SUCCEEDED	7

/* The TMF has no more tasks to wait for: its response may go. */
static void tmf_put_wait(struct iet_cmd *tmf)
{
	if (!atomic_dec_and_test(&tmf->tmf_wait))
		return;
	/* PREEMPT AND ABORT: a SCSI command, in the backend's place. */
	if (tmf->kind == IET_KIND_SCSI)
		iet_scsi_done(&tmf->req);
	else
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
 * A task another I_T nexus aborts ends with TASK ABORTED status when its
 * LUN's control mode page has TAS set (SAM-5 5.6.3, the default here as
 * in most targets): its initiator retries it at once instead of waiting
 * for its command timer. The nexus that asked is told by the TMF's
 * response (or PREEMPT AND ABORT's status) alone.
 */
static bool victim_tas(struct iet_cmd *tmf, struct iet_cmd *victim)
{
	struct iet_lun *lun = victim->req.lun;

	if (victim->conn->session == tmf->conn->session)
		return false;
	return !lun || READ_ONCE(lun->tas);
}

/*
 * Abort a task unless its status is already on its way (then it is answered,
 * not aborted: the initiator gets one or the other, never both).
 */
static bool abort_task(struct iet_cmd *tmf, struct iet_cmd *victim)
{
	struct iet_conn *conn = victim->conn;
	bool tas = victim_tas(tmf, victim);
	bool take, end = false;

	spin_lock(&conn->lock);
	take = !victim->aborted && victim != tmf &&
	       victim->state != IET_ST_STATUS_SENT;
	if (take) {
		victim->aborted = true;
		victim->tas = tas;
		victim->tmf = tmf;
		/*
		 * Waiting for its data it would end unanswered: with TAS it
		 * ends here, as if it had run (nobody else dispatches it).
		 */
		if (tas && victim->state == IET_ST_DELIVERED) {
			victim->state = IET_ST_DISPATCHED;
			end = true;
		}
	}
	spin_unlock(&conn->lock);
	if (!take)
		return false;
	iet_cmd_get(tmf);
	atomic_inc(&tmf->tmf_wait);
	/* Data-Out still on its way for it is dropped from now on. */
	iet_cmd_finish(victim);
	/* Held behind older commands, it need not wait for them now. */
	iet_tset_abort(&victim->req);
	/* A SANITIZE waiting for its operation ends; the operation goes on. */
	iet_sanitize_abort(&victim->req);
	if (end)
		iet_cmd_complete(&victim->req);
	/* Waiting for memory, it would hold up the TMF's response. */
	if (READ_ONCE(victim->queue) >= IET_Q_MEM_DISPATCH)
		iet_conn_mem_kick(conn);
	return true;
}

/*
 * Collect the tasks of one session a function applies to: the one with the
 * given ITT (on lun, unless that is IET_LUN_ANY), or those on lun (every
 * LUN for IET_LUN_ANY) that entered the task set before the TMF. Under
 * target->lock.
 */
static unsigned int collect_session(struct iet_cmd *tmf,
				    struct iet_session *session,
				    struct list_head *list, u32 lun,
				    bool by_itt, u32 itt)
{
	struct iet_conn *conn;
	struct iet_cmd *cmd;
	unsigned long index;
	unsigned int nr = 0;
	bool take;

	list_for_each_entry(conn, &session->conns, list) {
		xa_lock(&conn->cmds);
		xa_for_each(&conn->cmds, index, cmd) {
			if (by_itt)
				take = cmd->itt == itt &&
				       (lun == IET_LUN_ANY ||
					cmd->req.lun_id == lun);
			else if (lun != IET_LUN_ANY &&
				 !iet_scsi_touches(&cmd->req, lun))
				take = false;
			else if (session == tmf->conn->session)
				take = cmd->state >= IET_ST_DELIVERED ||
				       iscsi_sna_lt(cmd->cmdsn, tmf->cmdsn);
			else
				take = cmd->state >= IET_ST_DELIVERED;
			if (!take)
				continue;
			iet_cmd_get(cmd);
			list_add_tail(&cmd->tmf_entry, list);
			nr++;
		}
		xa_unlock(&conn->cmds);
	}
	return nr;
}

/* The same in the TMF's session or, for resets, in all. */
static unsigned int collect(struct iet_cmd *tmf, struct list_head *list,
			    u32 lun, bool by_itt, u32 itt, bool all_sessions)
{
	struct iet_session *own = tmf->conn->session, *session;
	unsigned int nr = 0;

	mutex_lock(&own->target->lock);
	list_for_each_entry(session, &own->target->sessions, list)
		if (session == own || all_sessions)
			nr += collect_session(tmf, session, list, lun, by_itt,
					      itt);
	mutex_unlock(&own->target->lock);
	return nr;
}

/* How many collected tasks are still live (neither aborted nor answered). */
static unsigned int count_live(struct list_head *list)
{
	struct iet_cmd *cmd, *tmp;
	unsigned int nr = 0;
	struct iet_conn *conn;

	list_for_each_entry_safe(cmd, tmp, list, tmf_entry) {
		conn = cmd->conn;
		spin_lock(&conn->lock);
		nr += !cmd->aborted && cmd->state != IET_ST_STATUS_SENT;
		spin_unlock(&conn->lock);
		list_del_init(&cmd->tmf_entry);
		iet_cmd_put(cmd);
	}
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

/*
 * The task ABORT TASK names never arrived: its CmdSN counts as received
 * (RFC 7143 11.5.1), so the commands after it do not wait for it forever,
 * and should it still arrive it is dropped as a duplicate.
 */
static void take_as_received(struct iet_conn *conn, u32 cmdsn)
{
	struct iet_cmd *gap = iet_cmd_alloc(conn, IET_KIND_NONE);

	if (!gap)
		return;
	gap->cmdsn = cmdsn;
	iet_cmd_sequence(gap);
	iet_cmd_put(gap);
}

/* I_T NEXUS LOSS OCCURRED and the like, for one nexus on each of its LUNs. */
static void tmf_ua_each_lun(struct iet_session *session, u8 asc, u8 ascq)
{
	struct iet_lun *lun;
	unsigned long idx;

	xa_for_each(&session->target->luns, idx, lun)
		iet_ua_add_session(session, idx, asc, ascq);
}

/*
 * RFC 7144's queries of the TMF's I_T_L nexus, which change nothing:
 * FUNCTION SUCCEEDED when there is what is asked about, else FUNCTION
 * COMPLETE. QUERY ASYNCHRONOUS EVENT gives the unit attention pending
 * (it stays pending) in the additional response information: SAM-5's
 * UADE DEPTH (one, or more than one) and sense key, ASC, ASCQ.
 */
static u8 tmf_query(struct iet_cmd *tmf, u8 function, u32 lun)
{
	struct iscsi_tm *hdr = (struct iscsi_tm *)&tmf->hdr;
	struct iet_session *session = tmf->conn->session;
	unsigned int nr;
	struct iet_lun *l;
	LIST_HEAD(tasks);
	u8 asc, ascq;

	l = lun == IET_LUN_NONE ? NULL : iet_lun_get(session->target, lun);
	if (!l)
		return ISCSI_TMF_RSP_NO_LUN;
	iet_lun_put(l);
	switch (function) {
	case TMF_QUERY_TASK:
		collect(tmf, &tasks, lun, true, (__force u32)hdr->rtt, false);
		nr = count_live(&tasks);
		break;
	case TMF_QUERY_TASK_SET:
		collect(tmf, &tasks, lun, false, 0, false);
		nr = count_live(&tasks);
		break;
	default:
		nr = iet_ua_peek(session, lun, &asc, &ascq);
		if (nr) {
			tmf->tmf_info[0] = (nr > 1 ? 0x20 : 0x10) |
					   UNIT_ATTENTION;
			tmf->tmf_info[1] = asc;
			tmf->tmf_info[2] = ascq;
		}
		break;
	}
	return nr ? TMF_RSP_SUCCEEDED : ISCSI_TMF_RSP_COMPLETE;
}

/*
 * PREEMPT AND ABORT (SPC-4 5.13.11.2.5): the tasks on req's LUN of the
 * sessions match() picks end as a task set abort ends them (TASK ABORTED
 * with TAS: victim_tas()). The command waits for them as a TMF would:
 * see iet_scsi_abort_wait().
 */
void iet_scsi_abort_tasks(struct iet_scsi_req *req,
			  bool (*match)(struct iet_session *session, void *arg),
			  void *arg)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);
	struct iet_target *target = cmd->conn->session->target;
	struct iet_session *session;
	LIST_HEAD(victims);

	atomic_set(&cmd->tmf_wait, 1);
	mutex_lock(&target->lock);
	list_for_each_entry(session, &target->sessions, list)
		if (match(session, arg))
			collect_session(cmd, session, &victims, req->lun_id,
					false, 0);
	mutex_unlock(&target->lock);
	abort_all(cmd, &victims);
}

/*
 * After iet_scsi_abort_tasks(), as the command's execute() returns: true
 * when tasks it aborted are still there (it returns IET_ASYNC, and the last
 * of them to go completes it), false when it may complete now.
 */
bool iet_scsi_abort_wait(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	return !atomic_dec_and_test(&cmd->tmf_wait);
}

void iet_tmf_execute(struct iet_cmd *tmf)
{
	struct iscsi_tm *hdr = (struct iscsi_tm *)&tmf->hdr;
	struct iet_session *session = tmf->conn->session, *other;
	struct iet_target *target = session->target;
	u8 function = hdr->flags & ISCSI_FLAG_TM_FUNC_MASK;
	u32 lun = iet_lun_id(&hdr->lun);
	struct iet_lun *l = NULL;
	LIST_HEAD(victims);
	u8 response = ISCSI_TMF_RSP_COMPLETE;

	atomic_set(&tmf->tmf_wait, 1);
	switch (function) {
	case ISCSI_TM_FUNC_ABORT_TASK:
		collect(tmf, &victims, IET_LUN_ANY, true, (__force u32)hdr->rtt,
			false);
		if (abort_all(tmf, &victims))
			break;
		if (ref_in_window(session, be32_to_cpu(hdr->refcmdsn),
				  tmf->cmdsn))
			take_as_received(tmf->conn, be32_to_cpu(hdr->refcmdsn));
		else
			response = ISCSI_TMF_RSP_NO_TASK;
		break;
	case ISCSI_TM_FUNC_ABORT_TASK_SET:
	case ISCSI_TM_FUNC_CLEAR_TASK_SET:
	case ISCSI_TM_FUNC_LOGICAL_UNIT_RESET:
		if (lun != IET_LUN_NONE)
			l = iet_lun_get(target, lun);
		if (!l) {
			response = ISCSI_TMF_RSP_NO_LUN;
			break;
		}
		if (function != ISCSI_TM_FUNC_LOGICAL_UNIT_RESET) {
			iet_lun_put(l);
			collect(tmf, &victims, lun, false, 0, false);
			break;
		}
		/* An SPC-2 reservation ends; persistent ones stay. */
		iet_pr_reset(l);
		iet_lun_put(l);
		/*
		 * A reset ends the tasks of every I_T nexus (another's TASK
		 * ABORTED with TAS) and tells every nexus, this one too
		 * (SAM-5 5.9.7).
		 */
		collect(tmf, &victims, lun, false, 0, true);
		iet_ua_add(target, NULL, lun, 0x29, 0x03);
		break;
	case ISCSI_TM_FUNC_TARGET_WARM_RESET:
	case ISCSI_TM_FUNC_TARGET_COLD_RESET:
		/*
		 * It ends every session's tasks: one initiator may do so to
		 * all only where the target says it may (AllowTargetReset).
		 */
		if (!READ_ONCE(target->tparams[IET_TP_TARGET_RESET])) {
			response = ISCSI_TMF_RSP_AUTH_FAILED;
			break;
		}
		collect(tmf, &victims, IET_LUN_ANY, false, 0, true);
		/* What a LUN reset ends, on every LUN. */
		iet_pr_release_spc2(target, NULL);
		/* Each LUN tells each nexus, once (SAM-5 6.3.5). */
		mutex_lock(&target->lock);
		list_for_each_entry(other, &target->sessions, list)
			tmf_ua_each_lun(other, 0x29, 0x00);
		mutex_unlock(&target->lock);
		break;
	case TMF_QUERY_TASK:
	case TMF_QUERY_TASK_SET:
	case TMF_QUERY_ASYNC_EVENT:
		response = tmf_query(tmf, function, lun);
		break;
	case TMF_I_T_NEXUS_RESET:
		/*
		 * This nexus's tasks end, on every LUN, as if the nexus had
		 * been lost; each of its LUNs tells it so. The session stays.
		 */
		collect(tmf, &victims, IET_LUN_ANY, false, 0, false);
		tmf_ua_each_lun(session, 0x29, 0x07);
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

/*
 * The functions iet_tmf_execute() performs, as the first two bytes of
 * REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS' parameter data (SPC-4 6.36):
 * ABORT TASK, ABORT TASK SET, CLEAR TASK SET, LOGICAL UNIT RESET, QUERY
 * TASK, TARGET RESET (warm and cold alike, where the target allows them),
 * QUERY ASYNCHRONOUS EVENT, QUERY TASK SET and I_T NEXUS RESET. Keep the
 * two together.
 */
void iet_tmf_supported(struct iet_target *target, u8 *d)
{
	/* ATS ATSS CTSS LURS QTS; QAES QTSS ITNRS */
	d[0] = 0x80 | 0x40 | 0x10 | 0x08 | 0x04;
	if (READ_ONCE(target->tparams[IET_TP_TARGET_RESET]))
		d[0] |= 0x02;	/* TRS */
	d[1] = 0x04 | 0x02 | 0x01;
}
