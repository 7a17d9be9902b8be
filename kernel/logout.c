// SPDX-License-Identifier: GPL-2.0
/*
 * Logout in the full feature phase: of this connection, of another, or of
 * the whole session; answered once the connection's commands are done.
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
	iet_conn_check_logout(conn);
}
