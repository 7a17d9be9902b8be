// SPDX-License-Identifier: GPL-2.0
/*
 * The read thread of a connection: a state machine that receives one PDU at
 * a time without blocking, checks it against a table before reading or
 * allocating anything, and hands it on.
 */
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/sched/mm.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "iet.h"

/*
 * What may arrive, per opcode: how much data at most (0, or the negotiated
 * MaxRecvDataSegmentLength), whether it may be immediate, and the handlers
 * that run once the header and once the whole PDU are in.
 */
struct rx_op {
	bool data;
	int (*start)(struct iet_conn *conn);
	int (*end)(struct iet_conn *conn);
};

static int rx_recv(struct iet_conn *conn, struct iov_iter *iter)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL,
	};
	int ret;

	msg.msg_iter = *iter;
	ret = sock_recvmsg(conn->sock, &msg, msg.msg_flags);
	if (ret == 0)
		return -ECONNRESET;	/* the peer closed */
	return ret;
}

static int rx_kvec(struct iet_conn *conn, void *p, u32 len)
{
	struct kvec kv = { .iov_base = p, .iov_len = len };
	struct iov_iter iter;

	iov_iter_kvec(&iter, ITER_DEST, &kv, 1, len);
	return rx_recv(conn, &iter);
}

static u32 hdr_crc(struct iet_rx *rx)
{
	u32 crc = iet_crc32c(~0, &rx->bhs, ISCSI_HDR_LEN);

	return ~iet_crc32c(crc, rx->ahs, rx->ahs_len);
}

/* ---- PDU handlers ------------------------------------------------------ */

static int nop_out_start(struct iet_conn *conn)
{
	struct iscsi_nopout *hdr = (struct iscsi_nopout *)&conn->rx.bhs;
	struct iet_rx *rx = &conn->rx;
	struct iet_cmd *cmd;

	if (hdr->itt == RESERVED_ITT) {
		/* An answer to our ping, or a ping that wants no answer. */
		if (!(hdr->opcode & ISCSI_OP_IMMEDIATE))
			iet_reject(conn, &rx->bhs, ISCSI_REASON_PROTOCOL_ERROR);
		else if (hdr->ttt != cpu_to_be32(ISCSI_RESERVED_TAG) &&
			 be32_to_cpu(hdr->ttt) == READ_ONCE(conn->nop_ttt))
			WRITE_ONCE(conn->nop_ttt, 0);
		return 0;
	}
	cmd = iet_cmd_alloc_rx(conn, IET_KIND_NOP);
	if (!cmd)
		return -ENOMEM;
	rx->cmd = cmd;
	if (hdr->ttt != cpu_to_be32(ISCSI_RESERVED_TAG)) {
		cmd->reject_reason = ISCSI_REASON_PROTOCOL_ERROR;
		return 0;
	}
	/*
	 * The ping data comes back in the NOP-In, as far as it fits; past
	 * the connection's limit of pinned bytes, none does (read, dropped).
	 */
	cmd->data_len = min(rx->dlen, conn->max_xmit_dsl);
	if (!iet_conn_pin_now(conn, cmd->data_len))
		cmd->data_len = 0;
	if (iet_cmd_buf_alloc(cmd, &cmd->data, cmd->data_len))
		return -ENOMEM;
	rx->dbuf = &cmd->data;
	rx->dkeep = cmd->data_len;
	return 0;
}

static int text_start(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;
	struct iet_cmd *cmd;

	cmd = iet_cmd_alloc_rx(conn, IET_KIND_TEXT);
	if (!cmd)
		return -ENOMEM;
	rx->cmd = cmd;
	if (rx->dlen > IET_TEXT_MAX) {
		/* SendTargets fits in far less; the data is read and dropped. */
		cmd->reject_reason = ISCSI_REASON_CMD_NOT_SUPPORTED;
		return 0;
	}
	cmd->data_len = rx->dlen;
	if (iet_cmd_buf_alloc(cmd, &cmd->data, cmd->data_len))
		return -ENOMEM;
	rx->dbuf = &cmd->data;
	rx->dkeep = cmd->data_len;
	return 0;
}

static int tmf_start(struct iet_conn *conn)
{
	struct iet_cmd *cmd = iet_cmd_alloc_rx(conn, IET_KIND_TMF);

	if (!cmd)
		return -ENOMEM;
	conn->rx.cmd = cmd;
	return 0;
}

static int logout_start(struct iet_conn *conn)
{
	struct iet_cmd *cmd = iet_cmd_alloc_rx(conn, IET_KIND_LOGOUT);

	if (!cmd)
		return -ENOMEM;
	conn->rx.cmd = cmd;
	return 0;
}

/* The end of a PDU that is a command of its own: take its CmdSN turn. */
static int cmd_end(struct iet_conn *conn)
{
	struct iet_cmd *cmd = conn->rx.cmd;

	conn->rx.cmd = NULL;
	if (!cmd)
		return 0;
	/*
	 * The header is sound, the payload is not: the PDU is rejected, but
	 * in its CmdSN turn, so that the numbering goes on.
	 */
	if (conn->rx.digest_error && !cmd->reject_reason)
		cmd->reject_reason = ISCSI_REASON_DATA_DIGEST_ERROR;
	iet_cmd_sequence(cmd);
	iet_cmd_put(cmd);
	return 0;
}

static int reject_start(struct iet_conn *conn)
{
	iet_reject(conn, &conn->rx.bhs, ISCSI_REASON_CMD_NOT_SUPPORTED);
	return 0;
}

static int protocol_error_start(struct iet_conn *conn)
{
	iet_reject(conn, &conn->rx.bhs, ISCSI_REASON_PROTOCOL_ERROR);
	return 0;
}

static const struct rx_op rx_ops[ISCSI_OPCODE_MASK + 1] = {
	[ISCSI_OP_NOOP_OUT] = {
		.data = true, .start = nop_out_start, .end = cmd_end,
	},
	[ISCSI_OP_SCSI_CMD] = {
		.data = true, .start = iet_scsi_cmd_start,
		.end = iet_scsi_cmd_end,
	},
	[ISCSI_OP_SCSI_TMFUNC] = {
		.start = tmf_start, .end = cmd_end,
	},
	[ISCSI_OP_TEXT] = {
		.data = true, .start = text_start, .end = cmd_end,
	},
	[ISCSI_OP_SCSI_DATA_OUT] = {
		.data = true, .start = iet_data_out_start,
		.end = iet_data_out_end,
	},
	[ISCSI_OP_LOGOUT] = {
		.start = logout_start, .end = cmd_end,
	},
	/* Recovery needs ErrorRecoveryLevel > 0; login ended long ago. */
	[ISCSI_OP_SNACK] = { .data = true, .start = protocol_error_start },
	[ISCSI_OP_LOGIN] = { .data = true, .start = protocol_error_start },
};

/* ---- the state machine ------------------------------------------------- */

static void rx_reset(struct iet_rx *rx)
{
	rx->state = IET_RX_BHS;
	rx->done = 0;
	rx->dbuf = NULL;
	rx->doff = 0;
	rx->dkeep = 0;
	rx->crc = ~0;
	rx->crc_upto = 0;
	rx->digest_error = false;
}

static int rx_pdu_end(struct iet_conn *conn)
{
	u8 op = conn->rx.bhs.opcode & ISCSI_OPCODE_MASK;
	int ret = 0;

	if (rx_ops[op].end)
		ret = rx_ops[op].end(conn);
	rx_reset(&conn->rx);
	return ret;
}

static int rx_after_data(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;

	rx->done = 0;
	if (rx->pad)
		rx->state = IET_RX_PAD;
	else if (conn->ddigest && rx->dlen)
		rx->state = IET_RX_DDIGEST;
	else
		return rx_pdu_end(conn);
	return 0;
}

/*
 * Whether the PDU whose header is in may be taken on now: each may cost a
 * command (a task, a response, a Reject). A peer within its CmdSN window
 * never reaches the limit; one that floods, or never reads what it is
 * sent, is held here and TCP pushes back. Buffer bytes are not gated here
 * (a held header would also hold the Data-Out behind it, which commands
 * holding memory wait for): they wait for room in iet_cmd_admit().
 */
static bool rx_may_admit(struct iet_conn *conn)
{
	return atomic_read(&conn->nr_cmds) < conn->max_cmds;
}

static bool rx_admit(struct iet_conn *conn)
{
	if (rx_may_admit(conn))
		return true;
	set_bit(IET_CF_RX_HELD, &conn->flags);
	/* Pairs with the barrier in cmd_release(): a release in between is seen. */
	smp_mb__after_atomic();
	if (!rx_may_admit(conn))
		return false;
	clear_bit(IET_CF_RX_HELD, &conn->flags);
	return true;
}

static int rx_header_done(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;
	u8 op = rx->bhs.opcode & ISCSI_OPCODE_MASK;
	int ret;

	rx->done = 0;
	rx->state = IET_RX_ADMIT;
	if (!rx_admit(conn)) {
		/*
		 * A peer that reset the connection (or one TCP gave up on)
		 * will never read the answers whose sending would let us
		 * go on: nothing else would notice, with keepalive pings
		 * off. The state change woke us.
		 */
		if (READ_ONCE(conn->sock->sk->sk_state) == TCP_CLOSE)
			return -ECONNRESET;
		return -EAGAIN;		/* a released command wakes us */
	}
	WRITE_ONCE(conn->last_rx, jiffies);
	conn->exp_stat_sn = be32_to_cpu(rx->bhs.exp_statsn);
	if (rx_ops[op].start)
		ret = rx_ops[op].start(conn);
	else
		ret = reject_start(conn);
	if (ret)
		return ret;
	if (rx->dlen) {
		rx->state = IET_RX_DATA;
		return 0;
	}
	return rx_pdu_end(conn);
}

/* The header is in: check it before anything else is read. */
static int rx_bhs_done(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;
	u8 op = rx->bhs.opcode & ISCSI_OPCODE_MASK;
	u32 max;

	rx->dlen = iet_dlength(&rx->bhs);
	rx->ahs_len = rx->bhs.hlength * 4;
	rx->pad = (ISCSI_PAD_LEN - (rx->dlen & 3)) & 3;
	max = rx_ops[op].data || !rx_ops[op].start ? conn->max_recv_dsl : 0;
	if (rx->dlen > max) {
		/* Framing can no longer be trusted. */
		pr_notice_ratelimited("cid %u: PDU opcode %#x with %u bytes of data, at most %u allowed\n",
				      conn->cid, op, rx->dlen, max);
		return -EPROTO;
	}
	if (rx->ahs_len && op != ISCSI_OP_SCSI_CMD) {
		pr_notice_ratelimited("cid %u: AHS on opcode %#x\n", conn->cid,
				      op);
		return -EPROTO;
	}
	rx->done = 0;
	if (rx->ahs_len)
		rx->state = IET_RX_AHS;
	else if (conn->hdigest)
		rx->state = IET_RX_HDIGEST;
	else
		return rx_header_done(conn);
	return 0;
}

static int rx_data(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;
	struct iov_iter iter;
	int ret;

	if (rx->done < rx->dkeep) {
		/* Straight into the command's pages. */
		iet_buf_iter(rx->dbuf, &iter, ITER_DEST, rx->doff + rx->done,
			     rx->dkeep - rx->done);
		ret = rx_recv(conn, &iter);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done == rx->dkeep && conn->ddigest)
			rx->crc = iet_crc32c_buf(rx->crc, rx->dbuf, rx->doff,
						 rx->dkeep);
	} else {
		/* What the command has no room for is read and dropped. */
		u32 n = min_t(u32, rx->dlen - rx->done, PAGE_SIZE);

		ret = rx_kvec(conn, conn->scratch, n);
		if (ret < 0)
			return ret;
		if (conn->ddigest)
			rx->crc = iet_crc32c(rx->crc, conn->scratch, ret);
		rx->done += ret;
	}
	if (rx->done == rx->dlen)
		return rx_after_data(conn);
	return 0;
}

/* One step: returns 0 when it moved on, -EAGAIN when the socket is dry. */
static int rx_step(struct iet_conn *conn)
{
	struct iet_rx *rx = &conn->rx;
	int ret;

	switch (rx->state) {
	case IET_RX_BHS:
		ret = rx_kvec(conn, (u8 *)&rx->bhs + rx->done,
			      ISCSI_HDR_LEN - rx->done);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done < ISCSI_HDR_LEN)
			return 0;
		return rx_bhs_done(conn);
	case IET_RX_AHS:
		ret = rx_kvec(conn, rx->ahs + rx->done, rx->ahs_len - rx->done);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done < rx->ahs_len)
			return 0;
		rx->done = 0;
		if (conn->hdigest) {
			rx->state = IET_RX_HDIGEST;
			return 0;
		}
		return rx_header_done(conn);
	case IET_RX_HDIGEST:
		ret = rx_kvec(conn, (u8 *)&rx->digest + rx->done,
			      ISCSI_CRC_LEN - rx->done);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done < ISCSI_CRC_LEN)
			return 0;
		if (le32_to_cpu(rx->digest) != hdr_crc(rx)) {
			/* Nothing in the header can be believed. */
			pr_notice_ratelimited("cid %u: header digest error\n",
					      conn->cid);
			return -EBADMSG;
		}
		return rx_header_done(conn);
	case IET_RX_ADMIT:
		return rx_header_done(conn);
	case IET_RX_DATA:
		return rx_data(conn);
	case IET_RX_PAD:
		ret = rx_kvec(conn, rx->pad_buf + rx->done, rx->pad - rx->done);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done < rx->pad)
			return 0;
		rx->done = 0;
		if (conn->ddigest && rx->dlen) {
			rx->crc = iet_crc32c(rx->crc, rx->pad_buf, rx->pad);
			rx->state = IET_RX_DDIGEST;
			return 0;
		}
		return rx_pdu_end(conn);
	case IET_RX_DDIGEST:
		ret = rx_kvec(conn, (u8 *)&rx->digest + rx->done,
			      ISCSI_CRC_LEN - rx->done);
		if (ret < 0)
			return ret;
		rx->done += ret;
		if (rx->done < ISCSI_CRC_LEN)
			return 0;
		if (le32_to_cpu(rx->digest) != ~rx->crc) {
			pr_notice_ratelimited("cid %u: data digest error\n",
					      conn->cid);
			rx->digest_error = true;
		}
		return rx_pdu_end(conn);
	}
	return -EINVAL;
}

int iet_rx_thread(void *arg)
{
	struct iet_conn *conn = arg;
	unsigned int noio = memalloc_noio_save();
	unsigned int steps;
	bool owned, may_own;
	int ret;

	rx_reset(&conn->rx);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (iet_stopping(conn) ||
		    !test_and_clear_bit(IET_CF_RX_READY, &conn->flags)) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		/*
		 * An initiator that keeps the socket full never lets a step
		 * fail: give the CPU up now and then, or a non-preemptible
		 * kernel sees this thread in a soft lockup. While it owns
		 * sending, what it serves at once it sends itself when the
		 * socket runs dry (or every few steps): no wake-up of the
		 * write thread, statuses batched. Once it served a long read
		 * it leaves sending to the write thread until the socket runs
		 * dry, so that sending the data and serving the next command
		 * go on at once.
		 */
		owned = false;
		may_own = iet_tx_inline();
		steps = 0;
		do {
			if (!owned && may_own)
				owned = iet_tx_own(conn);
			ret = rx_step(conn);
			if (owned && iet_tx_handoff(conn))
				may_own = false;
			if (owned && (ret || ++steps == IET_RX_OWN_STEPS ||
				      !may_own)) {
				iet_tx_flush(conn);
				owned = false;
				steps = 0;
			}
			cond_resched();
		} while (!ret && !iet_stopping(conn) &&
			 !kthread_should_stop());
		if (owned)
			iet_tx_flush(conn);
		if (ret == -EAGAIN || !ret)
			continue;
		if (test_bit(IET_CF_LOGGED_OUT, &conn->flags) &&
		    ret == -ECONNRESET) {
			iet_conn_close(conn);
		} else {
			if (ret != -ECONNRESET)
				pr_notice_ratelimited("target %u session %#llx cid %u: receive failed (%d)\n",
						      conn->session->target->tid,
						      conn->session->sid,
						      conn->cid, ret);
			iet_conn_fail(conn);
		}
	}
	__set_current_state(TASK_RUNNING);
	memalloc_noio_restore(noio);
	return 0;
}
