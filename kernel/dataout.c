// SPDX-License-Identifier: GPL-2.0
/*
 * Reception of SCSI Command PDUs (checked, parsed, given a buffer) and of
 * the Data-Out PDUs that carry their write data, checked against what each
 * command expects and what its R2Ts asked for.
 */
#include <scsi/scsi_common.h>

#include "iet.h"

/* The Extended CDB AHS carries CDB bytes beyond the sixteenth. */
static int parse_ahs(struct iet_cmd *cmd, const u8 *ahs, u32 len)
{
	while (len >= 4) {
		u16 alen = get_unaligned_be16(ahs);
		u8 type = ahs[2];
		u32 total = ALIGN(alen + 3, 4);

		if (total > len)
			return -EINVAL;
		if (type == ISCSI_AHSTYPE_CDB) {
			/* alen counts the reserved byte before the CDB. */
			if (alen < 2 || alen - 1 > IET_CDB_MAX - ISCSI_CDB_SIZE)
				return -EINVAL;
			memcpy(cmd->req.cdb + ISCSI_CDB_SIZE, ahs + 4, alen - 1);
		} else if (type == ISCSI_AHSTYPE_RLENGTH) {
			cmd->bidi = true;
		} else {
			return -EINVAL;
		}
		ahs += total;
		len -= total;
	}
	return len ? -EINVAL : 0;
}

static u8 scsi_cmd_check(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_scsi_req *hdr = (struct iscsi_scsi_req *)&cmd->hdr;
	const u32 *keys = conn->session->keys;
	struct iet_scsi_req *req = &cmd->req;
	u32 dlen = conn->rx.dlen;

	if (cmd->hdr.itt == RESERVED_ITT ||
	    parse_ahs(cmd, conn->rx.ahs, conn->rx.ahs_len))
		return ISCSI_REASON_PROTOCOL_ERROR;
	if (dlen && (!req->want_write || dlen > req->edtl ||
		     !keys[IET_KEY_IMMEDIATE_DATA] ||
		     dlen > keys[IET_KEY_FIRST_BURST]))
		return ISCSI_REASON_PROTOCOL_ERROR;
	if (!(hdr->flags & ISCSI_FLAG_CMD_FINAL) &&
	    (keys[IET_KEY_INITIAL_R2T] || !req->want_write))
		return ISCSI_REASON_PROTOCOL_ERROR;
	return 0;
}

int iet_scsi_cmd_start(struct iet_conn *conn)
{
	struct iscsi_scsi_req *hdr = (struct iscsi_scsi_req *)&conn->rx.bhs;
	struct iet_session *session = conn->session;
	const u32 *keys = session->keys;
	struct iet_rx *rx = &conn->rx;
	struct iet_scsi_req *req;
	struct iet_cmd *cmd;
	int ret;

	cmd = iet_cmd_alloc_rx(conn, IET_KIND_SCSI);
	if (!cmd)
		return -ENOMEM;
	rx->cmd = cmd;
	req = &cmd->req;
	req->t_rx = ktime_get_ns();
	req->nexus = session;
	if (!cmd->immediate && !iet_session_in_window(session, cmd->cmdsn)) {
		/* Nothing is allocated for it; its data is read and dropped. */
		cmd->dropped = true;
		return 0;
	}
	req->edtl = be32_to_cpu(hdr->data_length);
	req->want_read = hdr->flags & ISCSI_FLAG_CMD_READ;
	req->want_write = hdr->flags & ISCSI_FLAG_CMD_WRITE;
	req->attr = hdr->flags & ISCSI_FLAG_CMD_ATTR_MASK;
	memcpy(req->cdb, hdr->cdb, ISCSI_CDB_SIZE);
	req->lun_id = iet_lun_id(&hdr->lun);
	if (req->lun_id != IET_LUN_NONE)
		req->lun = iet_lun_get(session->target, req->lun_id);

	cmd->reject_reason = scsi_cmd_check(conn, cmd);
	if (cmd->reject_reason)
		return 0;	/* its data is read and dropped */

	cmd->unsol_len = hdr->flags & ISCSI_FLAG_CMD_FINAL ? rx->dlen :
			 max(min(keys[IET_KEY_FIRST_BURST], req->edtl),
			     rx->dlen);
	if (cmd->bidi || (req->want_read && req->want_write))
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
	else
		iet_scsi_parse(req);
	if (req->status == SAM_STAT_GOOD && req->buf_len && iet_cmd_buf_prepare(cmd)) {
		/* Out of memory for now: the initiator retries. */
		req->status = SAM_STAT_BUSY;
		req->execute = NULL;
	}
	if (req->status == SAM_STAT_GOOD && req->data_out && req->want_write)
		cmd->want_len = min(req->edtl, req->buf_len);
	cmd->r2t_next = cmd->unsol_len;
	cmd->seq_end = cmd->unsol_len;
	if (cmd->want_len > cmd->unsol_len)
		cmd->ttt = iet_next_ttt(conn);

	/*
	 * The table's reference and in_table are there before the command
	 * is: a task management function of another session may find it and
	 * take it out the moment it is inserted.
	 */
	iet_cmd_get(cmd);
	cmd->in_table = true;
	ret = xa_insert(&conn->cmds, cmd->itt, cmd, GFP_NOIO);
	if (ret) {
		cmd->in_table = false;
		iet_cmd_put(cmd);
	}
	if (ret == -EBUSY) {
		cmd->reject_reason = ISCSI_REASON_TASK_IN_PROGRESS;
		return 0;
	}
	if (ret)
		return ret;

	rx->dbuf = &req->buf;
	rx->dkeep = min(rx->dlen, cmd->want_len);
	return 0;
}

static void data_check_done(struct iet_cmd *cmd)
{
	spin_lock(&cmd->conn->lock);
	if (cmd->data_next >= max(cmd->unsol_len, cmd->want_len))
		cmd->data_done = true;
	spin_unlock(&cmd->conn->lock);
}

int iet_scsi_cmd_end(struct iet_conn *conn)
{
	struct iet_cmd *cmd = conn->rx.cmd;

	conn->rx.cmd = NULL;
	if (conn->rx.digest_error)
		cmd->digest_error = true;
	cmd->data_next = conn->rx.dlen;
	data_check_done(cmd);
	iet_cmd_sequence(cmd);
	iet_cmd_put(cmd);
	return 0;
}

/* ---- Data-Out PDUs ----------------------------------------------------- */

/* Checks a Data-Out against what its command expects; under conn->lock. */
static bool data_out_valid(struct iet_conn *conn, struct iet_cmd *cmd,
			   const struct iscsi_data *hdr, u32 dlen)
{
	u32 offset = be32_to_cpu(hdr->offset);
	u32 ttt = be32_to_cpu(hdr->ttt);
	u32 end = offset + dlen;

	if (offset != cmd->data_next || end < offset ||
	    be32_to_cpu(hdr->datasn) != cmd->exp_datasn)
		return false;
	if (ttt == ISCSI_RESERVED_TAG)
		return end <= cmd->unsol_len;
	/* Solicited: inside what the R2Ts sent so far asked for. */
	return cmd->ttt && ttt == cmd->ttt && offset >= cmd->unsol_len &&
	       end <= cmd->r2t_next;
}

int iet_data_out_start(struct iet_conn *conn)
{
	struct iscsi_data *hdr = (struct iscsi_data *)&conn->rx.bhs;
	struct iet_rx *rx = &conn->rx;
	struct iet_cmd *cmd;
	u32 offset = be32_to_cpu(hdr->offset);
	bool valid;

	cmd = iet_cmd_find(conn, (__force u32)hdr->itt);
	if (!cmd) {
		/* Data of a task ended by task management: drop it. */
		pr_debug("cid %u: Data-Out for unknown ITT %#x\n", conn->cid,
			 (__force u32)hdr->itt);
		return 0;
	}
	spin_lock(&conn->lock);
	valid = data_out_valid(conn, cmd, hdr, rx->dlen);
	if (valid && cmd->exp_datasn == 0 && offset >= cmd->unsol_len)
		cmd->seq_end = min(offset + conn->session->keys[IET_KEY_MAX_BURST],
				   cmd->want_len);
	spin_unlock(&conn->lock);
	if (!valid) {
		pr_notice_ratelimited("cid %u: Data-Out ITT %#x offset %u len %u DataSN %u out of sequence\n",
				      conn->cid, cmd->itt, offset, rx->dlen,
				      be32_to_cpu(hdr->datasn));
		iet_reject(conn, &rx->bhs, ISCSI_REASON_PROTOCOL_ERROR);
		iet_cmd_put(cmd);
		return 0;
	}
	rx->cmd = cmd;
	if (offset < cmd->want_len) {
		rx->dbuf = &cmd->req.buf;
		rx->doff = offset;
		rx->dkeep = min(rx->dlen, cmd->want_len - offset);
	}
	return 0;
}

int iet_data_out_end(struct iet_conn *conn)
{
	struct iscsi_data *hdr = (struct iscsi_data *)&conn->rx.bhs;
	struct iet_cmd *cmd = conn->rx.cmd;
	bool final = hdr->flags & ISCSI_FLAG_CMD_FINAL;
	bool seq_done, bad;

	conn->rx.cmd = NULL;
	if (!cmd)
		return 0;
	if (conn->rx.digest_error)
		cmd->digest_error = true;

	spin_lock(&conn->lock);
	cmd->data_next += conn->rx.dlen;
	cmd->exp_datasn++;
	seq_done = cmd->data_next >= cmd->seq_end;
	/* The F bit ends a sequence, exactly where the sequence ends. */
	bad = final != seq_done;
	if (seq_done) {
		cmd->exp_datasn = 0;
		if (cmd->seq_end > cmd->unsol_len && cmd->r2t_outstanding)
			cmd->r2t_outstanding--;
	}
	spin_unlock(&conn->lock);
	if (bad) {
		pr_notice_ratelimited("cid %u: ITT %#x: F bit %s at offset %u\n",
				      conn->cid, cmd->itt,
				      final ? "early" : "missing",
				      cmd->data_next);
		if (final)
			cmd->digest_error = true;	/* the data is short */
	}
	data_check_done(cmd);
	iet_cmd_try_dispatch(cmd);
	iet_cmd_put(cmd);
	return 0;
}
