// SPDX-License-Identifier: GPL-2.0
/*
 * Logout in the full feature phase: of this connection, of another, or of
 * the whole session; answered once the connection's commands are done.
 * And the target's side: asking an initiator to log out.
 */
#include "iet.h"

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
		cmd->logout_scope = IET_LOGOUT_SESSION;
		break;
	case ISCSI_LOGOUT_REASON_CLOSE_CONNECTION:
		if (cid == conn->cid) {
			cmd->logout_scope = IET_LOGOUT_CONN;
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
	if (cmd->logout_scope == IET_LOGOUT_NONE) {
		iet_cmd_queue_tx(cmd);
		return;
	}
	iet_cmd_get(cmd);
	spin_lock(&conn->lock);
	swap(conn->logout, cmd);
	spin_unlock(&conn->lock);
	if (cmd)	/* a second Logout replaces the first */
		iet_cmd_put(cmd);
	/* A SANITIZE that waits for its operation ends: it goes on. */
	iet_sanitize_logout(conn);
	iet_conn_check_logout(conn);
}

/*
 * Ask for a Logout on this connection (RFC 7143 11.9.1, AsyncEvent 1: it
 * must go on the connection to be logged out), once; the timer drops the
 * connection if none came within @wait seconds. Under target->lock.
 */
static void conn_ask_logout(struct iet_conn *conn, u16 wait)
{
	unsigned long by = (jiffies + wait * HZ) | 1;

	if (test_bit(IET_CF_CLOSING, &conn->flags) ||
	    test_bit(IET_CF_LOGGED_OUT, &conn->flags))
		return;
	WRITE_ONCE(conn->logout_wait, wait);
	/* Fully ordered: the tx thread sees logout_wait with the bit. */
	if (cmpxchg(&conn->logout_by, 0, by))
		return;
	set_bit(IET_CF_ASYNC_DUE, &conn->flags);
	wake_up_process(conn->tx_thread);
}

/*
 * Ask the initiators of a target's connections to log out within @wait
 * seconds: all of them, those of portal group @tpgt (not 0), of @session,
 * or its connection @cid (not negative). Returns how many were asked.
 */
int iet_logout_request(struct iet_target *target, u16 tpgt,
		       struct iet_session *session, int cid, u16 wait)
{
	struct iet_session *s;
	struct iet_conn *conn;
	int n = 0;

	mutex_lock(&target->lock);
	list_for_each_entry(s, &target->sessions, list) {
		if ((session && s != session) ||
		    (tpgt && s->tpgt != tpgt))
			continue;
		list_for_each_entry(conn, &s->conns, list) {
			if (cid >= 0 && conn->cid != cid)
				continue;
			conn_ask_logout(conn, wait);
			n++;
		}
	}
	mutex_unlock(&target->lock);
	if (n)
		pr_info("target %u: %d connection%s asked to log out within %u s\n",
			target->tid, n, n == 1 ? "" : "s", wait);
	return n;
}
