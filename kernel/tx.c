// SPDX-License-Identifier: GPL-2.0
/*
 * The write thread of a connection: builds the next PDU of the command at
 * the head of its queue (R2T, Data-In, responses, NOP-In, Reject) and sends
 * it without blocking, data pages by reference.
 */
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/sched/mm.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <scsi/scsi_common.h>

#include "iet.h"

static void hdr_window(struct iet_conn *conn, __be32 *exp, __be32 *max)
{
	u32 e, m;

	iet_session_window(conn->session, &e, &m);
	*exp = cpu_to_be32(e);
	*max = cpu_to_be32(m);
}

static __be32 next_statsn(struct iet_conn *conn)
{
	return cpu_to_be32(conn->stat_sn++);
}

/* Residual of a SCSI command: what the CDB moves against the EDTL. */
static void residual(struct iet_cmd *cmd, u8 *flags, __be32 *count)
{
	struct iet_scsi_req *req = &cmd->req;
	u32 moved = req->data_out ? req->xfer_len : req->data_len;

	if (moved > req->edtl) {
		*flags |= ISCSI_FLAG_CMD_OVERFLOW;
		*count = cpu_to_be32(moved - req->edtl);
	} else if (moved < req->edtl) {
		*flags |= ISCSI_FLAG_CMD_UNDERFLOW;
		*count = cpu_to_be32(req->edtl - moved);
	}
}

static void tx_set_data(struct iet_tx *tx, struct iet_buf *buf, u32 off,
			u32 len)
{
	tx->dbuf = buf;
	tx->doff = off;
	tx->dlen = len;
	tx->kdata = NULL;
}

static void tx_set_kdata(struct iet_tx *tx, void *p, u32 len)
{
	tx->dbuf = NULL;
	tx->kdata = p;
	tx->doff = 0;
	tx->dlen = len;
}

/* Bytes of Data-In a command sends: only with GOOD status. */
u32 iet_data_in_len(struct iet_cmd *cmd)
{
	struct iet_scsi_req *req = &cmd->req;

	if (req->status != SAM_STAT_GOOD || !req->want_read)
		return 0;
	return min3(req->data_len, req->edtl, req->buf.len);
}

static void build_r2t(struct iet_conn *conn, struct iet_cmd *cmd, u32 off,
		      u32 len, u32 r2tsn)
{
	struct iscsi_r2t_rsp *hdr = (struct iscsi_r2t_rsp *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_R2T;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	memcpy(&hdr->lun, &cmd->hdr.lun, sizeof(hdr->lun));
	hdr->itt = cmd->hdr.itt;
	hdr->ttt = cpu_to_be32(cmd->ttt);
	hdr->statsn = cpu_to_be32(conn->stat_sn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hdr->r2tsn = cpu_to_be32(r2tsn);
	hdr->data_offset = cpu_to_be32(off);
	hdr->data_length = cpu_to_be32(len);
}

/* The end of the Data-In sequence (burst) that the next Data-In is in. */
static u32 data_in_burst_end(struct iet_conn *conn, struct iet_cmd *cmd)
{
	u32 burst = conn->session->keys[IET_KEY_MAX_BURST];

	return (cmd->tx_off / burst + 1) * burst;
}

static u32 data_in_next_len(struct iet_conn *conn, struct iet_cmd *cmd,
			    u32 total)
{
	return min3(total - cmd->tx_off, conn->max_xmit_dsl,
		    data_in_burst_end(conn, cmd) - cmd->tx_off);
}

/*
 * Whether the next PDU of an executed command carries its status: the SCSI
 * Response, or the last Data-In when GOOD without sense rides on it (RFC
 * 7143 11.7.4).
 */
static bool next_pdu_has_status(struct iet_conn *conn, struct iet_cmd *cmd)
{
	u32 total = iet_data_in_len(cmd);

	return cmd->tx_off >= total ||
	       (cmd->tx_off + data_in_next_len(conn, cmd, total) == total &&
		!cmd->req.sense_len);
}

static void build_data_in(struct iet_conn *conn, struct iet_cmd *cmd,
			  u32 total)
{
	struct iscsi_data_rsp *hdr = (struct iscsi_data_rsp *)conn->tx.hdr;
	struct iet_scsi_req *req = &cmd->req;
	u32 off = cmd->tx_off;
	u32 burst_end = data_in_burst_end(conn, cmd);
	u32 len = data_in_next_len(conn, cmd, total);
	bool last = off + len == total;

	hdr->opcode = ISCSI_OP_SCSI_DATA_IN;
	if (last || off + len == burst_end)
		hdr->flags = ISCSI_FLAG_CMD_FINAL;
	if (last && !req->sense_len) {
		WARN_ON_ONCE(cmd->state != IET_ST_STATUS_SENT);
		hdr->flags |= ISCSI_FLAG_DATA_STATUS;
		hdr->cmd_status = req->status;
		hdr->statsn = next_statsn(conn);
		residual(cmd, &hdr->flags, &hdr->residual_count);
	}
	hton24(hdr->dlength, len);
	memcpy(&hdr->lun, &cmd->hdr.lun, sizeof(hdr->lun));
	hdr->itt = cmd->hdr.itt;
	hdr->ttt = cpu_to_be32(ISCSI_RESERVED_TAG);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hdr->datasn = cpu_to_be32(cmd->datasn++);
	hdr->offset = cpu_to_be32(off);
	tx_set_data(&conn->tx, &req->buf, off, len);
	cmd->tx_off += len;
}

static void build_scsi_rsp(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_scsi_rsp *hdr = (struct iscsi_scsi_rsp *)conn->tx.hdr;
	struct iet_scsi_req *req = &cmd->req;

	hdr->opcode = ISCSI_OP_SCSI_CMD_RSP;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	hdr->response = ISCSI_STATUS_CMD_COMPLETED;
	hdr->cmd_status = req->status;
	residual(cmd, &hdr->flags, &hdr->residual_count);
	hdr->itt = cmd->hdr.itt;
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hdr->exp_datasn = cpu_to_be32(cmd->datasn + cmd->r2t_sn);
	if (req->sense_len) {
		/* SenseLength, then the sense data (RFC 7143 11.4.7). */
		put_unaligned_be16(req->sense_len, cmd->sense_pdu);
		memcpy(cmd->sense_pdu + 2, req->sense, req->sense_len);
		hton24(hdr->dlength, req->sense_len + 2);
		tx_set_kdata(&conn->tx, cmd->sense_pdu, req->sense_len + 2);
	}
	WARN_ON_ONCE(cmd->state != IET_ST_STATUS_SENT);
}

/*
 * End a command that waits for its data here and now, unless task
 * management or its last Data-Out has ended it first: only one of them
 * completes it.
 */
static bool cmd_take_dispatch(struct iet_conn *conn, struct iet_cmd *cmd)
{
	bool take;

	spin_lock(&conn->lock);
	take = cmd->state == IET_ST_DELIVERED && !cmd->aborted;
	if (take)
		cmd->state = IET_ST_DISPATCHED;
	spin_unlock(&conn->lock);
	return take;
}

/* Whether the write's next R2T may go now (MaxOutstandingR2T). */
static bool r2t_due(struct iet_conn *conn, struct iet_cmd *cmd, u32 max_r2t)
{
	bool due;

	/* Executed (a Data-In to send, a status): never again; no lock. */
	if (READ_ONCE(cmd->state) >= IET_ST_EXECUTED)
		return false;
	spin_lock(&conn->lock);
	due = cmd->state < IET_ST_EXECUTED && !cmd->aborted &&
	      cmd->r2t_next < cmd->want_len && cmd->r2t_outstanding < max_r2t;
	spin_unlock(&conn->lock);
	return due;
}

/*
 * The memory for the burst the next R2T asks for: the whole write's is
 * reserved at its first (iet_cmd_admit()), the pages come burst by burst.
 * Returns 0, -EAGAIN with the command waiting for memory, or -ENOMEM with
 * it answered BUSY (the initiator retries); off the queue for either.
 */
static int r2t_buf(struct iet_conn *conn, struct iet_cmd *cmd, u32 max_burst)
{
	int ret = iet_cmd_admit(cmd, cmd->want_len, IET_Q_MEM_R2T);

	if (ret)
		return ret;
	ret = iet_cmd_buf_grow(cmd, min(cmd->want_len,
					cmd->r2t_next + max_burst));
	if (!ret)
		return 0;
	spin_lock(&conn->lock);
	list_del_init(&cmd->q_entry);
	cmd->queue = IET_Q_NONE;
	spin_unlock(&conn->lock);
	if (cmd_take_dispatch(conn, cmd)) {
		cmd->req.status = SAM_STAT_BUSY;
		cmd->req.execute = NULL;
		iet_cmd_complete(&cmd->req);
	}
	return ret;
}

/*
 * The next PDU of a SCSI command. When it has none to send now, it leaves
 * the queue in the same critical section that decided so: whoever makes
 * more work for it then finds it off the queue and queues it again.
 */
static bool build_scsi(struct iet_conn *conn, struct iet_cmd *cmd)
{
	u32 max_r2t = conn->session->keys[IET_KEY_MAX_OUTSTANDING_R2T];
	u32 max_burst = conn->session->keys[IET_KEY_MAX_BURST];
	u32 total, off = 0, len = 0, r2tsn = 0;
	bool executed;

	/* r2t_next moves only here: what r2t_buf() grew is what goes. */
	if (r2t_due(conn, cmd, max_r2t) && r2t_buf(conn, cmd, max_burst))
		return false;

	spin_lock(&conn->lock);
	executed = cmd->state >= IET_ST_EXECUTED;
	if (!executed && !cmd->aborted && cmd->r2t_next < cmd->want_len &&
	    cmd->r2t_outstanding < max_r2t) {
		off = cmd->r2t_next;
		len = min(cmd->want_len - off, max_burst);
		cmd->r2t_next += len;
		cmd->r2t_outstanding++;
		r2tsn = cmd->r2t_sn++;
	}
	if ((cmd->aborted && !(executed && cmd->tas)) ||
	    (executed ? cmd->state == IET_ST_STATUS_SENT : !len)) {
		list_del_init(&cmd->q_entry);
		cmd->queue = IET_Q_NONE;
		spin_unlock(&conn->lock);
		return false;
	}
	/*
	 * Another nexus aborted it (TAS): whatever it did, it ends with
	 * TASK ABORTED and no more data. Its backend is done with req.
	 */
	if (executed && cmd->aborted) {
		cmd->req.status = SAM_STAT_TASK_ABORTED;
		cmd->req.sense_len = 0;
		if (!cmd->req.data_out)
			cmd->req.data_len = 0;
	}
	/* From here on an ABORT TASK finds the task answered. */
	if (executed && next_pdu_has_status(conn, cmd))
		cmd->state = IET_ST_STATUS_SENT;
	spin_unlock(&conn->lock);

	if (!executed) {
		build_r2t(conn, cmd, off, len, r2tsn);
		return true;
	}
	total = iet_data_in_len(cmd);
	if (cmd->tx_off < total)
		build_data_in(conn, cmd, total);
	else
		build_scsi_rsp(conn, cmd);
	return true;
}

static void build_nop_in(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_nopin *hdr = (struct iscsi_nopin *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_NOOP_IN;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	if (cmd->kind == IET_KIND_PING) {
		/* Our keepalive: the StatSN does not advance. */
		hdr->itt = RESERVED_ITT;
		hdr->ttt = cpu_to_be32(cmd->ttt);
		hdr->statsn = cpu_to_be32(conn->stat_sn);
		return;
	}
	memcpy(&hdr->lun, &cmd->hdr.lun, sizeof(hdr->lun));
	hdr->itt = cmd->hdr.itt;
	hdr->ttt = cpu_to_be32(ISCSI_RESERVED_TAG);
	hdr->statsn = next_statsn(conn);
	hton24(hdr->dlength, cmd->data_len);
	tx_set_data(&conn->tx, &cmd->data, 0, cmd->data_len);
}

/* Our request for a Logout: StatSN advances, as for any status. */
static void build_async(struct iet_conn *conn)
{
	struct iscsi_async *hdr = (struct iscsi_async *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_ASYNC_EVENT;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	memset(hdr->rsvd4, 0xff, sizeof(u32));		/* the ITT */
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hdr->async_event = ISCSI_ASYNC_MSG_REQUEST_LOGOUT;
	hdr->param3 = cpu_to_be16(READ_ONCE(conn->logout_wait));
}

static void build_reject(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_reject *hdr = (struct iscsi_reject *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_REJECT;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	hdr->reason = cmd->reject_reason;
	hdr->ffffffff = cpu_to_be32(ISCSI_RESERVED_TAG);
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hton24(hdr->dlength, ISCSI_HDR_LEN);
	/* The data segment is the rejected header. */
	tx_set_kdata(&conn->tx, &cmd->hdr, ISCSI_HDR_LEN);
}

static void build_tmf_rsp(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_tm_rsp *hdr = (struct iscsi_tm_rsp *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_SCSI_TMFUNC_RSP;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	hdr->response = cmd->tmf_response;
	/* Bytes 8-10: SAM-5's additional response information (RFC 7144). */
	memcpy(hdr->rsvd2, cmd->tmf_info, sizeof(cmd->tmf_info));
	hdr->itt = cmd->hdr.itt;
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
}

static void build_logout_rsp(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_logout_rsp *hdr = (struct iscsi_logout_rsp *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_LOGOUT_RSP;
	hdr->flags = ISCSI_FLAG_CMD_FINAL;
	hdr->response = cmd->tmf_response;
	hdr->itt = cmd->hdr.itt;
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	/* Time2Wait and Time2Retain: nothing to wait for at ERL 0. */
}

static void build_text_rsp(struct iet_conn *conn, struct iet_cmd *cmd)
{
	struct iscsi_text_rsp *hdr = (struct iscsi_text_rsp *)conn->tx.hdr;

	hdr->opcode = ISCSI_OP_TEXT_RSP;
	hdr->flags = cmd->text_flags;
	hdr->itt = cmd->hdr.itt;
	hdr->ttt = cpu_to_be32(cmd->text_ttt);
	hdr->statsn = next_statsn(conn);
	hdr_window(conn, &hdr->exp_cmdsn, &hdr->max_cmdsn);
	hton24(hdr->dlength, cmd->data_len);
	tx_set_data(&conn->tx, &cmd->data, 0, cmd->data_len);
}

/*
 * The slot's own page reference: the socket took references of its own
 * for what it still has to send or may resend.
 */
void iet_tx_slot_free(struct iet_tx *tx)
{
	if (tx->slot)
		page_frag_free(tx->slot);
	tx->slot = NULL;
}

/* One entry of the PDU's array: len bytes at p (within one page). */
static void tx_add_virt(struct iet_tx *tx, void *p, u32 len)
{
	bvec_set_page(&tx->bvec[tx->nr++], virt_to_page(p), len,
		      offset_in_page(p));
}

/* The data pages of the PDU, by reference. */
static void tx_add_pages(struct iet_tx *tx)
{
	const struct bio_vec *bv = &tx->dbuf->bvec[tx->doff / PAGE_SIZE];
	u32 off = tx->doff % PAGE_SIZE, left = tx->dlen;

	for (; left; bv++, off = 0) {
		u32 n = min(left, bv->bv_len - off);

		bvec_set_page(&tx->bvec[tx->nr++], bv->bv_page, n,
			      bv->bv_offset + off);
		left -= n;
	}
}

/*
 * Seal the PDU just built: the header, its digest, data from kernel
 * memory, padding and the data digest into a slot; the array to send is
 * the slot, then the data pages, then the rest of the slot.
 */
static int tx_seal(struct iet_conn *conn)
{
	struct iet_tx *tx = &conn->tx;
	u32 pad = (ISCSI_PAD_LEN - (tx->dlen & 3)) & 3;
	u32 hdr_len = ISCSI_HDR_LEN, n;
	__le32 digest;
	u8 *slot;
	u32 crc;

	BUILD_BUG_ON(ISCSI_HDR_LEN + ISCSI_CRC_LEN + 2 + IET_SENSE_MAX +
		     ISCSI_PAD_LEN + ISCSI_CRC_LEN > IET_TX_SLOT);
	/* What conn->tx.bvec and the slot were sized for. */
	if (WARN_ON_ONCE(tx->kdata ? tx->dlen > IET_SENSE_MAX + 2 :
			 tx->dlen > conn->max_xmit_dsl))
		return -EINVAL;
	slot = page_frag_alloc(&tx->frag, IET_TX_SLOT, GFP_NOIO);
	if (!slot)
		return -ENOMEM;
	tx->slot = slot;
	memcpy(slot, tx->hdr, ISCSI_HDR_LEN);
	if (conn->hdigest) {
		digest = cpu_to_le32(~iet_crc32c(~0, tx->hdr, ISCSI_HDR_LEN));
		memcpy(slot + hdr_len, &digest, ISCSI_CRC_LEN);
		hdr_len += ISCSI_CRC_LEN;
	}
	n = hdr_len;
	if (tx->kdata) {
		memcpy(slot + n, tx->kdata, tx->dlen);
		n += tx->dlen;
	}
	memset(slot + n, 0, pad);
	n += pad;
	if (conn->ddigest && tx->dlen) {
		crc = tx->kdata ? iet_crc32c(~0, tx->kdata, tx->dlen) :
		      iet_crc32c_buf(~0, tx->dbuf, tx->doff, tx->dlen);
		digest = cpu_to_le32(~iet_crc32c(crc, slot + n - pad, pad));
		memcpy(slot + n, &digest, ISCSI_CRC_LEN);
		n += ISCSI_CRC_LEN;
	}

	tx->nr = 0;
	if (tx->kdata || !tx->dlen) {
		tx_add_virt(tx, slot, n);
	} else {
		tx_add_virt(tx, slot, hdr_len);
		tx_add_pages(tx);
		if (n > hdr_len)
			tx_add_virt(tx, slot + hdr_len, n - hdr_len);
	}
	tx->len = n + (tx->kdata ? 0 : tx->dlen);
	tx->done = 0;
	WRITE_ONCE(tx->state, IET_TX_SENDING);
	return 0;
}

static void tx_dequeue(struct iet_conn *conn, struct iet_cmd *cmd)
{
	spin_lock(&conn->lock);
	list_del_init(&cmd->q_entry);
	cmd->queue = IET_Q_NONE;
	spin_unlock(&conn->lock);
	iet_cmd_put(cmd);
}

/*
 * Build the next PDU from the head of the queue. Returns 1 when one is
 * ready, 0 when the queue has nothing to send, 2 when the next is for the
 * write thread and we are not it, or -errno. A Logout Response is the
 * writer's: sending it closes the session's other connections under the
 * target's lock, which an I/O thread must not wait for.
 */
static int tx_next(struct iet_conn *conn, bool writer)
{
	struct iet_tx *tx = &conn->tx;
	struct iet_cmd *cmd;
	bool ready;

	for (;;) {
		spin_lock(&conn->lock);
		cmd = list_first_entry_or_null(&conn->tx_queue, struct iet_cmd,
					       q_entry);
		/* Whether more PDUs are queued behind it, to send at once. */
		tx->more = cmd && !list_is_singular(&conn->tx_queue);
		spin_unlock(&conn->lock);
		if (!cmd)
			return 0;
		if (!writer && cmd->kind == IET_KIND_LOGOUT)
			return 2;

		memset(tx->hdr, 0, sizeof(tx->hdr));
		tx_set_kdata(tx, NULL, 0);
		switch (cmd->kind) {
		case IET_KIND_SCSI:
			ready = build_scsi(conn, cmd);
			break;
		case IET_KIND_NOP:
		case IET_KIND_PING:
			build_nop_in(conn, cmd);
			ready = true;
			break;
		case IET_KIND_REJECT:
			build_reject(conn, cmd);
			ready = true;
			break;
		case IET_KIND_ASYNC:
			build_async(conn);
			ready = true;
			break;
		case IET_KIND_TMF:
			build_tmf_rsp(conn, cmd);
			ready = true;
			break;
		case IET_KIND_LOGOUT:
			build_logout_rsp(conn, cmd);
			ready = true;
			break;
		case IET_KIND_TEXT:
			build_text_rsp(conn, cmd);
			ready = true;
			break;
		default:
			WARN_ON_ONCE(1);
			return -EINVAL;
		}
		if (ready) {
			tx->cmd = cmd;
			return tx_seal(conn) ?: 1;
		}
		/* build_scsi() took it off the queue: drop the queue's hold. */
		if (cmd->aborted || cmd->state == IET_ST_STATUS_SENT)
			iet_cmd_finish(cmd);
		iet_cmd_put(cmd);
	}
}

/*
 * Whether the command has another PDU that can certainly be sent right after
 * this one (the rest of its Data-In): only then is the socket kept corked.
 */
static bool cmd_has_more(struct iet_cmd *cmd)
{
	return cmd->kind == IET_KIND_SCSI && cmd->state == IET_ST_EXECUTED &&
	       !cmd->aborted;
}

/* After a PDU went out completely. */
static void tx_pdu_sent(struct iet_conn *conn)
{
	struct iet_cmd *cmd = conn->tx.cmd;
	struct iscsi_tm *tm;

	conn->tx.cmd = NULL;
	WRITE_ONCE(conn->tx.state, IET_TX_IDLE);
	iet_tx_slot_free(&conn->tx);
	if (cmd->kind == IET_KIND_SCSI && cmd->state != IET_ST_STATUS_SENT) {
		/* Round robin: a long read does not hold up the others. */
		spin_lock(&conn->lock);
		list_move_tail(&cmd->q_entry, &conn->tx_queue);
		spin_unlock(&conn->lock);
		return;
	}
	switch (cmd->kind) {
	case IET_KIND_PING:
		WRITE_ONCE(conn->nop_sent, jiffies);
		break;
	case IET_KIND_LOGOUT:
		if (cmd->logout_scope == IET_LOGOUT_SESSION)
			iet_session_close_others(conn);
		if (cmd->logout_scope != IET_LOGOUT_NONE) {
			/* Let the initiator close first; a timer bounds it. */
			conn->logout_time = jiffies;
			set_bit(IET_CF_LOGGED_OUT, &conn->flags);
			kernel_sock_shutdown(conn->sock, SHUT_WR);
		}
		break;
	case IET_KIND_TMF:
		tm = (struct iscsi_tm *)&cmd->hdr;
		if ((tm->flags & ISCSI_FLAG_TM_FUNC_MASK) ==
		    ISCSI_TM_FUNC_TARGET_COLD_RESET &&
		    cmd->tmf_response == ISCSI_TMF_RSP_COMPLETE)
			iet_conn_fail(conn);	/* RFC 7143 11.5.1 */
		break;
	default:
		break;
	}
	/* The queue's reference may be the last: finish before dropping it. */
	if (cmd->kind == IET_KIND_SCSI) {
		iet_stats_cmd_sent(conn->session, &cmd->req);
		iet_cmd_finish(cmd);
	}
	tx_dequeue(conn, cmd);
}

/*
 * Send what is left of the current PDU, in one call where the socket has
 * room: 0 when it is out, -EAGAIN when the socket is full. MSG_MORE while
 * the rest of the command's Data-In, or another PDU already queued,
 * follows at once.
 */
static int tx_send(struct iet_conn *conn, bool more)
{
	struct iet_tx *tx = &conn->tx;
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	int ret;

	tx->corked = cmd_has_more(tx->cmd) || more;
	if (tx->corked)
		flags |= MSG_MORE;
	while (tx->done < tx->len) {
		ret = iet_send_bvec(conn->sock, tx->bvec, tx->nr, tx->len,
				    tx->done, flags);
		if (ret < 0)
			return ret;
		tx->done += ret;
	}
	return 0;
}

/*
 * Send until the queue is empty (0) or the socket is full (-EAGAIN); a
 * thread other than the writer stops (1) after IET_TX_INLINE_BUDGET bytes
 * or before a PDU that is the writer's (tx_next()).
 */
static int tx_push(struct iet_conn *conn, bool writer)
{
	u64 budget = writer ? U64_MAX : IET_TX_INLINE_BUDGET;
	u64 sent = 0;
	int ret;

	for (;;) {
		if (conn->tx.state == IET_TX_IDLE) {
			if (sent >= budget)
				return 1;
			ret = tx_next(conn, writer);
			if (ret < 0 || ret == 2)
				return ret < 0 ? ret : 1;
			if (!ret) {
				/* The PDU we corked for was dropped: push. */
				if (conn->tx.corked)
					tcp_sock_set_cork(conn->sock->sk, false);
				conn->tx.corked = false;
				return 0;
			}
		}
		clear_bit(IET_CF_TX_READY, &conn->flags);
		/* PDUs queued behind this one go out in the same segment. */
		ret = tx_send(conn, conn->tx.more &&
			      sent + conn->tx.len < budget);
		if (ret)
			return ret;
		sent += conn->tx.len;
		tx_pdu_sent(conn);
		cond_resched();
	}
}

/*
 * Sending is owned: by the write thread, or by a thread that has statuses
 * to send and finds the write thread idle (the read thread after serving a
 * command at once), which saves the hand-off and its wake-up. Whoever owns
 * it moves completions to the queue (in order: one drainer at a time) and
 * sends. Those who queue work while it is owned do not wake the write
 * thread: the owner looks again when it lets go.
 */
static bool tx_has_work(struct iet_conn *conn)
{
	if (!llist_empty(&conn->done))
		return true;
	if (test_bit(IET_CF_TX_BLOCKED, &conn->flags) &&
	    !test_bit(IET_CF_TX_READY, &conn->flags))
		return false;
	return READ_ONCE(conn->tx.state) != IET_TX_IDLE ||
	       !list_empty_careful(&conn->tx_queue);
}

static bool inline_send = true;
module_param(inline_send, bool, 0644);
MODULE_PARM_DESC(inline_send,
		 "Read and idle I/O threads send the statuses of what they served when the write thread is idle (default Y; N: the write thread sends everything)");

bool iet_tx_own(struct iet_conn *conn)
{
	return !test_and_set_bit_lock(IET_CF_TX_OWNED, &conn->flags);
}

/* Whether a thread other than the writer may take sending now. */
bool iet_tx_inline(void)
{
	return READ_ONCE(inline_send);
}

/* Let go of sending; the write thread takes over what is left. */
static void tx_disown(struct iet_conn *conn)
{
	clear_bit_unlock(IET_CF_TX_OWNED, &conn->flags);
	/* Pairs with iet_tx_wake(): work queued meanwhile is seen here. */
	smp_mb__after_atomic();
	if (tx_has_work(conn))
		wake_up_process(conn->tx_thread);
}

/*
 * After queueing work (and a full barrier): wake the write thread, unless
 * the owner will see the work when it lets go.
 */
void iet_tx_wake(struct iet_conn *conn)
{
	if (!test_bit(IET_CF_TX_OWNED, &conn->flags))
		wake_up_process(conn->tx_thread);
}

/* As the owner: queue what completed and send (tx_push()). */
static void tx_work(struct iet_conn *conn, bool writer)
{
	int ret;

	if (!llist_empty(&conn->done))
		iet_conn_drain_done(conn);
	if (test_bit(IET_CF_TX_BLOCKED, &conn->flags)) {
		if (!test_and_clear_bit(IET_CF_TX_READY, &conn->flags))
			return;
		clear_bit(IET_CF_TX_BLOCKED, &conn->flags);
	}
	ret = tx_push(conn, writer);
	if (ret == -EAGAIN) {
		set_bit(IET_CF_TX_BLOCKED, &conn->flags);
	} else if (ret < 0) {
		pr_notice_ratelimited("target %u session %#llx cid %u: send failed (%d)\n",
				      conn->session->target->tid,
				      conn->session->sid, conn->cid, ret);
		iet_conn_fail(conn);
	}
}

/* Whether the owner should leave sending to the write thread now. */
bool iet_tx_handoff(struct iet_conn *conn)
{
	return test_bit(IET_CF_TX_HANDOFF, &conn->flags);
}

/*
 * A read or I/O thread, owning sending, after it served commands: send
 * their statuses now, then let go. A long Data-In is left to the write
 * thread, so that the caller goes back to its own work: all of it when a
 * command that long completed (IET_CF_TX_HANDOFF), else what is past
 * IET_TX_INLINE_BUDGET.
 */
void iet_tx_flush(struct iet_conn *conn)
{
	if (!iet_stopping(conn) && !iet_tx_handoff(conn) && tx_has_work(conn))
		tx_work(conn, false);
	tx_disown(conn);
}

/* The keepalive timer asked for a NOP-In. */
static void tx_ping(struct iet_conn *conn)
{
	struct iet_cmd *cmd = iet_cmd_alloc(conn, IET_KIND_PING);

	if (!cmd)
		return;
	cmd->ttt = iet_next_ttt(conn);
	WRITE_ONCE(conn->nop_ttt, cmd->ttt);
	WRITE_ONCE(conn->nop_sent, jiffies);
	iet_cmd_queue_tx(cmd);
	iet_cmd_put(cmd);
}

/* Somebody asked for the initiator to log out (iet_logout_request()). */
static void tx_ask_logout(struct iet_conn *conn)
{
	struct iet_cmd *cmd = iet_cmd_alloc(conn, IET_KIND_ASYNC);

	/* Out of memory: the timer drops the connection at the deadline. */
	if (!cmd)
		return;
	iet_cmd_queue_tx(cmd);
	iet_cmd_put(cmd);
}

int iet_tx_thread(void *arg)
{
	struct iet_conn *conn = arg;
	unsigned int noio = memalloc_noio_save();

	conn->tx.state = IET_TX_IDLE;
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (iet_stopping(conn)) {
			schedule();
			continue;
		}
		if (test_and_clear_bit(IET_CF_NOP_DUE, &conn->flags)) {
			__set_current_state(TASK_RUNNING);
			tx_ping(conn);
			continue;
		}
		if (test_and_clear_bit(IET_CF_ASYNC_DUE, &conn->flags)) {
			__set_current_state(TASK_RUNNING);
			tx_ask_logout(conn);
			continue;
		}
		if (test_bit(IET_CF_MEM_KICK, &conn->flags)) {
			__set_current_state(TASK_RUNNING);
			iet_conn_mem_retry(conn);
			continue;
		}
		/* An owner that is not us wakes us when it lets go. */
		if (!tx_has_work(conn) || !iet_tx_own(conn)) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		/* What made the others hand over is sent now. */
		if (iet_tx_handoff(conn))
			clear_bit(IET_CF_TX_HANDOFF, &conn->flags);
		tx_work(conn, true);
		clear_bit_unlock(IET_CF_TX_OWNED, &conn->flags);
	}
	__set_current_state(TASK_RUNNING);
	memalloc_noio_restore(noio);
	return 0;
}
