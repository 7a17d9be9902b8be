// SPDX-License-Identifier: GPL-2.0
/*
 * Commands: their life from the PDU that creates them to the response that
 * ends them. SCSI Command and Data-Out reception, CmdSN ordering, dispatch
 * to the I/O threads, and the one completion path back to the write thread.
 */
#include <linux/slab.h>
#include <asm/unaligned.h>
#include <scsi/scsi_common.h>

#include "iet.h"

static struct kmem_cache *cmd_cache;

int __init iet_cmd_cache_init(void)
{
	cmd_cache = KMEM_CACHE(iet_cmd, 0);
	return cmd_cache ? 0 : -ENOMEM;
}

void iet_cmd_cache_exit(void)
{
	kmem_cache_destroy(cmd_cache);
}

struct iet_cmd *iet_cmd_alloc(struct iet_conn *conn, enum iet_cmd_kind kind)
{
	struct iet_cmd *cmd = kmem_cache_zalloc(cmd_cache, GFP_NOIO);

	if (!cmd)
		return NULL;
	kref_init(&cmd->kref);
	cmd->kind = kind;
	cmd->conn = conn;
	INIT_LIST_HEAD(&cmd->pending);
	INIT_LIST_HEAD(&cmd->tx_entry);
	INIT_LIST_HEAD(&cmd->io_entry);
	INIT_LIST_HEAD(&cmd->tmf_entry);
	cmd->req.status = SAM_STAT_GOOD;
	kref_get(&conn->kref);
	atomic_inc(&conn->nr_cmds);
	if (kind == CMD_SCSI)
		atomic_inc(&conn->nr_scsi);
	return cmd;
}

/* A command for the PDU the read thread has just received. */
struct iet_cmd *iet_cmd_alloc_rx(struct iet_conn *conn, enum iet_cmd_kind kind)
{
	struct iet_cmd *cmd = iet_cmd_alloc(conn, kind);

	if (!cmd)
		return NULL;
	/* The request's header, for the response and for Reject. */
	memcpy(&cmd->hdr, &conn->rx.bhs, sizeof(cmd->hdr));
	cmd->itt = (__force u32)cmd->hdr.itt;
	cmd->cmdsn = be32_to_cpu(cmd->hdr.statsn);	/* CmdSN sits here */
	cmd->immediate = cmd->hdr.opcode & ISCSI_OP_IMMEDIATE;
	return cmd;
}

void iet_cmd_get(struct iet_cmd *cmd)
{
	kref_get(&cmd->kref);
}

static void cmd_release(struct kref *kref)
{
	struct iet_cmd *cmd = container_of(kref, struct iet_cmd, kref);
	struct iet_conn *conn = cmd->conn;
	struct iet_scsi_req *req = &cmd->req;

	iet_session_done(conn->session, cmd);
	if (cmd->counted_immediate)
		atomic_dec(&conn->session->immediate);
	iet_buf_free(&req->buf);
	iet_buf_free(&cmd->data);
	if (req->lun)
		iet_lun_put(req->lun);
	if (cmd->tmf)
		iet_tmf_release(cmd);
	if (cmd->kind == CMD_SCSI && atomic_dec_and_test(&conn->nr_scsi))
		iet_conn_check_logout(conn);
	kmem_cache_free(cmd_cache, cmd);
	if (atomic_dec_and_test(&conn->nr_cmds))
		wake_up(&conn->cmds_wq);
	iet_conn_put(conn);
}

void iet_cmd_put(struct iet_cmd *cmd)
{
	kref_put(&cmd->kref, cmd_release);
}

/* Take the command out of the ITT table, once, whoever gets there first. */
void iet_cmd_finish(struct iet_cmd *cmd)
{
	if (!cmd->in_table)
		return;
	if (xa_cmpxchg(&cmd->conn->cmds, cmd->itt, cmd, NULL, 0) == cmd)
		iet_cmd_put(cmd);
}

/* Returns the command for itt with a reference, or NULL. */
struct iet_cmd *iet_cmd_find(struct iet_conn *conn, u32 itt)
{
	struct iet_cmd *cmd;

	xa_lock(&conn->cmds);
	cmd = xa_load(&conn->cmds, itt);
	if (cmd)
		iet_cmd_get(cmd);
	xa_unlock(&conn->cmds);
	return cmd;
}

u32 iet_next_ttt(struct iet_conn *conn)
{
	u32 ttt;

	spin_lock(&conn->lock);
	ttt = conn->next_ttt++;
	if (ttt == ISCSI_RESERVED_TAG || !ttt)
		ttt = conn->next_ttt++;
	spin_unlock(&conn->lock);
	return ttt;
}

/* Hand the command to the write thread, unless it is queued already. */
void iet_cmd_queue_tx(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;

	spin_lock(&conn->lock);
	if (!iet_stopping(conn)) {
		if (!cmd->queued) {
			cmd->queued = true;
			iet_cmd_get(cmd);
			list_add_tail(&cmd->tx_entry, &conn->tx_queue);
		}
		iet_conn_wake_tx(conn);
	}
	spin_unlock(&conn->lock);
}

void iet_reject(struct iet_conn *conn, const struct iscsi_hdr *hdr, u8 reason)
{
	struct iet_cmd *cmd = iet_cmd_alloc(conn, CMD_REJECT);

	if (!cmd)
		return;
	memcpy(&cmd->hdr, hdr, sizeof(cmd->hdr));
	cmd->reject_reason = reason;
	iet_cmd_queue_tx(cmd);
	iet_cmd_put(cmd);
}

/* The end of every SCSI command: its response may go. */
void iet_cmd_complete(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	iet_scsi_account(&cmd->conn->session->stats, req);
	if (req->lun)
		iet_scsi_account(&req->lun->stats, req);
	/* Read by the write thread under conn->lock, via the queueing. */
	cmd->executed = true;
	iet_cmd_queue_tx(cmd);
}

/* Called by an I/O thread. */
void iet_io_run(struct iet_cmd *cmd)
{
	if (!cmd->aborted)
		iet_scsi_execute(&cmd->req);
	iet_cmd_complete(&cmd->req);
	iet_cmd_put(cmd);
}

static void cmd_dispatch(struct iet_cmd *cmd)
{
	struct iet_scsi_req *req = &cmd->req;

	if (cmd->aborted) {
		iet_cmd_finish(cmd);
		return;
	}
	if (cmd->digest_error && req->status == SAM_STAT_GOOD) {
		/* PROTOCOL SERVICE CRC ERROR: the initiator may retry. */
		iet_scsi_sense(req, ABORTED_COMMAND, 0x47, 0x05);
	}
	if (req->status != SAM_STAT_GOOD || !req->execute) {
		iet_cmd_complete(req);
	} else if (!req->blocking) {
		iet_scsi_execute(req);
		iet_cmd_complete(req);
	} else if (req->execute_nowait && req->execute_nowait(req) != -EAGAIN) {
		/* Served from the page cache: no I/O thread, no wait. */
		iet_cmd_complete(req);
	} else {
		iet_cmd_get(cmd);
		iet_pool_submit(cmd->conn->session->target, cmd);
	}
}

/* Runs once both its CmdSN turn has come and all its data is in. */
static void cmd_try_dispatch(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;
	bool go, r2t;

	spin_lock(&conn->lock);
	go = cmd->delivered && cmd->data_done && !cmd->dispatched;
	if (go)
		cmd->dispatched = true;
	/* Solicit the rest once the unsolicited part is in. */
	r2t = !go && cmd->delivered && !cmd->aborted &&
	      cmd->data_next >= cmd->unsol_len &&
	      cmd->r2t_next < cmd->want_len &&
	      cmd->r2t_outstanding < conn->session->keys[IET_KEY_MAX_OUTSTANDING_R2T];
	spin_unlock(&conn->lock);
	if (go)
		cmd_dispatch(cmd);
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
	case CMD_SCSI:
		spin_lock(&conn->lock);
		cmd->delivered = true;
		spin_unlock(&conn->lock);
		cmd_try_dispatch(cmd);
		break;
	case CMD_TMF:
		iet_tmf_execute(cmd);
		break;
	case CMD_LOGOUT:
		iet_logout_execute(cmd);
		break;
	case CMD_TEXT:
		iet_text_execute(cmd);
		break;
	case CMD_NOP:
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
	if (cmd->cmdsn != session->exp_cmdsn) {
		bool ok = iscsi_sna_gt(cmd->cmdsn, session->exp_cmdsn) &&
			  iscsi_sna_lte(cmd->cmdsn, session->max_cmdsn);

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
		}
		spin_unlock(&session->lock);
		if (!ok) {
			pr_debug("session %#llx: CmdSN %u outside [%u, %u], dropped\n",
				 session->sid, cmd->cmdsn, session->exp_cmdsn,
				 session->max_cmdsn);
			iet_cmd_finish(cmd);
		}
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

/* ---- SCSI Command PDUs ------------------------------------------------- */

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
	u32 lun_id;
	int ret;

	cmd = iet_cmd_alloc_rx(conn, CMD_SCSI);
	if (!cmd)
		return -ENOMEM;
	rx->cmd = cmd;
	req = &cmd->req;
	req->nexus = session;
	req->edtl = be32_to_cpu(hdr->data_length);
	req->want_read = hdr->flags & ISCSI_FLAG_CMD_READ;
	req->want_write = hdr->flags & ISCSI_FLAG_CMD_WRITE;
	memcpy(req->cdb, hdr->cdb, ISCSI_CDB_SIZE);
	lun_id = scsilun_to_int(&hdr->lun);
	req->lun_id = lun_id;
	if (lun_id <= IET_LUN_MAX)
		req->lun = iet_lun_get(session->target, lun_id);

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
	if (req->status == SAM_STAT_GOOD && req->buf_len &&
	    iet_buf_alloc(&req->buf, req->buf_len)) {
		/* Out of memory for now: the initiator retries. */
		req->status = SAM_STAT_BUSY;
		req->execute = NULL;
	}
	if (req->status == SAM_STAT_GOOD && req->data_out && req->want_write)
		cmd->want_len = min(req->edtl, req->buf.len);
	cmd->r2t_next = cmd->unsol_len;
	cmd->seq_end = cmd->unsol_len;
	if (cmd->want_len > cmd->unsol_len)
		cmd->ttt = iet_next_ttt(conn);

	ret = xa_insert(&conn->cmds, cmd->itt, cmd, GFP_NOIO);
	if (ret == -EBUSY) {
		cmd->reject_reason = ISCSI_REASON_TASK_IN_PROGRESS;
		return 0;
	}
	if (ret)
		return ret;
	iet_cmd_get(cmd);
	cmd->in_table = true;

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
	cmd_try_dispatch(cmd);
	iet_cmd_put(cmd);
	return 0;
}

/* ---- teardown ---------------------------------------------------------- */

/* With the threads stopped: drop every reference the connection's tables hold. */
void iet_cmd_release_tables(struct iet_conn *conn)
{
	struct iet_session *session = conn->session;
	struct iet_cmd *cmd, *tmp;
	unsigned long index;
	LIST_HEAD(drop);

	spin_lock(&conn->lock);
	list_splice_init(&conn->tx_queue, &drop);
	list_for_each_entry(cmd, &drop, tx_entry)
		cmd->queued = false;
	if (conn->logout) {
		list_add_tail(&conn->logout->tx_entry, &drop);
		conn->logout = NULL;
	}
	spin_unlock(&conn->lock);
	list_for_each_entry_safe(cmd, tmp, &drop, tx_entry) {
		list_del_init(&cmd->tx_entry);
		iet_cmd_put(cmd);
	}

	spin_lock(&session->lock);
	list_for_each_entry_safe(cmd, tmp, &session->pending, pending)
		if (cmd->conn == conn)
			list_move_tail(&cmd->pending, &drop);
	spin_unlock(&session->lock);
	list_for_each_entry_safe(cmd, tmp, &drop, pending) {
		list_del_init(&cmd->pending);
		iet_cmd_finish(cmd);
		iet_cmd_put(cmd);
	}

	xa_for_each(&conn->cmds, index, cmd)
		iet_cmd_finish(cmd);

	if (conn->rx.cmd) {
		iet_cmd_put(conn->rx.cmd);
		conn->rx.cmd = NULL;
	}
}
