// SPDX-License-Identifier: GPL-2.0
/*
 * Commands: their life from the PDU that creates them to the response that
 * ends them. Allocation and references, the memory they pin, the one
 * completion path back to the write thread, and teardown.
 */
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <scsi/scsi_common.h>

#include "iet.h"

static struct kmem_cache *cmd_cache;
/* Commands alive anywhere: the module goes only once the last is freed. */
static atomic_t nr_cmds_alive = ATOMIC_INIT(0);

int __init iet_cmd_cache_init(void)
{
	cmd_cache = KMEM_CACHE(iet_cmd, 0);
	return cmd_cache ? 0 : -ENOMEM;
}

/*
 * A connection may have been released while commands of its were still in
 * the backend; they finish on their own (and need iet_wq for it).
 */
void iet_cmd_wait_all(void)
{
	/*
	 * Unbounded, and it must be: they run our code when they end. A
	 * connection released without them pinned the module, so only an
	 * unload begun while they were still owned by a connection gets here.
	 */
	while (!wait_var_event_timeout(&nr_cmds_alive,
				       !atomic_read(&nr_cmds_alive), 30 * HZ))
		pr_notice("unload waits for %d commands still in the backend\n",
			  atomic_read(&nr_cmds_alive));
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
	atomic_inc(&nr_cmds_alive);
	kref_init(&cmd->kref);
	cmd->kind = kind;
	cmd->conn = conn;
	INIT_LIST_HEAD(&cmd->pending);
	INIT_LIST_HEAD(&cmd->q_entry);
	INIT_LIST_HEAD(&cmd->io_entry);
	INIT_LIST_HEAD(&cmd->tmf_entry);
	INIT_LIST_HEAD(&cmd->req.wgate_entry);
	INIT_LIST_HEAD(&cmd->req.tset_entry);
	INIT_LIST_HEAD(&cmd->req.tset_resume);
	cmd->req.status = SAM_STAT_GOOD;
	kref_get(&conn->kref);
	atomic_inc(&conn->nr_cmds);
	if (kind == IET_KIND_SCSI)
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

/*
 * What all connections together hold in data buffers, and what they may: a
 * budget for the module, besides each connection's IET_CONN_PIN_MAX. Pages
 * held, not admissions: a write admitted to 8 MiB holds a burst until the
 * next comes, and a peer that never sends it must not spend the others'
 * budget.
 */
static atomic_long_t held_total = ATOMIC_LONG_INIT(0);
static unsigned long pin_budget_mib;
module_param(pin_budget_mib, ulong, 0644);
MODULE_PARM_DESC(pin_budget_mib,
		 "MiB of data buffers all connections together may hold (default 0: a quarter of RAM)");

static long pin_budget(void)
{
	unsigned long mib = READ_ONCE(pin_budget_mib);

	if (mib)
		return (long)min_t(unsigned long, mib, LONG_MAX >> 20) << 20;
	return min_t(u64, (u64)totalram_pages() << PAGE_SHIFT, LONG_MAX) / 4;
}

/*
 * Room for more bytes on the connection, within its limit less keep, and
 * in the module's budget.
 */
static bool room_for(struct iet_conn *conn, u32 more, long keep)
{
	return atomic_long_read(&conn->pinned) + more + keep <=
	       IET_CONN_PIN_MAX &&
	       atomic_long_read(&held_total) + more <= pin_budget();
}

/* Counted against the connection's limit: held or admitted. */
static void count_pinned(struct iet_cmd *cmd, u32 bytes)
{
	cmd->pinned += bytes;
	atomic_long_add(bytes, &cmd->conn->pinned);
}

/* Counted in the module's budget: held. */
static void count_global(struct iet_cmd *cmd, u32 bytes)
{
	cmd->held += bytes;
	atomic_long_add(bytes, &held_total);
}

/*
 * Whether the connection may pin len bytes that arrive unasked (immediate
 * and unsolicited write data, ping data to echo) or a reply's buffer:
 * within both limits, or when it pins nothing at all. A command refused
 * so ends at once (BUSY, a ping answered without its data), never waits.
 * Admissions leave IET_CONN_PIN_UNASKED of the limit to these.
 */
bool iet_conn_pin_now(struct iet_conn *conn, u32 len)
{
	return !len || !atomic_long_read(&conn->pinned) ||
	       room_for(conn, len, 0);
}

/*
 * What a SCSI command's buffer holds beyond what is counted already (its
 * admission counted the whole buffer against the connection in advance).
 */
static void count_held(struct iet_cmd *cmd)
{
	u32 len = cmd->req.buf.len;

	if (len > cmd->held)
		count_global(cmd, len - cmd->held);
	if (len > cmd->pinned)
		count_pinned(cmd, len - cmd->pinned);
}

/* A buffer of the command's, counted against both limits. */
int iet_cmd_buf_alloc(struct iet_cmd *cmd, struct iet_buf *buf, u32 len)
{
	int ret = iet_buf_alloc(buf, len);

	if (!ret) {
		count_pinned(cmd, buf->len);
		count_global(cmd, buf->len);
	}
	return ret;
}

/*
 * Whether more bytes may be admitted on the connection now. While no
 * command is admitted one always may be, so that one command of any size
 * makes progress whatever the commands still waiting hold (their
 * unsolicited data).
 */
static bool pin_room(struct iet_conn *conn, u32 more)
{
	return !more || !atomic_read(&conn->nr_admitted) ||
	       room_for(conn, more, IET_CONN_PIN_UNASKED);
}

/*
 * Admit a SCSI command to the memory of its whole buffer, total bytes,
 * counted against its connection's limit at once however little of it is
 * allocated yet: 0. Once admitted it never waits for memory again, so it
 * can always finish: commands that held part of their buffers and waited
 * for the rest would wait for each other for ever. Without room it waits
 * on conn->mem_wait (off the transmit queue, if it was there: the caller
 * drops that queue's reference) and, once memory is freed, does what
 * `then` says: -EAGAIN.
 */
int iet_cmd_admit(struct iet_cmd *cmd, u32 total, enum iet_cmd_queue then)
{
	struct iet_conn *conn = cmd->conn;
	u32 more = total > cmd->pinned ? total - cmd->pinned : 0;

	if (cmd->admitted || !total)
		return 0;
	/*
	 * Behind those waiting already, the first time: else a stream of
	 * small commands would take every byte freed before a big one that
	 * waits sees room.
	 */
	if ((!cmd->mem_waited && !list_empty_careful(&conn->mem_wait)) ||
	    !pin_room(conn, more)) {
		spin_lock(&conn->lock);
		/*
		 * Another connection's read thread may deliver a read of
		 * ours once our tables are gone: nobody would retry it.
		 */
		if (iet_stopping(conn) && cmd->queue == IET_Q_NONE) {
			spin_unlock(&conn->lock);
			return -EAGAIN;
		}
		iet_cmd_get(cmd);
		cmd->queue = then;
		cmd->mem_waited = true;
		list_move_tail(&cmd->q_entry, &conn->mem_wait);
		spin_unlock(&conn->lock);
		/* Pairs with the barrier in cmd_release(): a release since is seen. */
		smp_mb();
		if (pin_room(conn, more))
			iet_conn_mem_kick(conn);
		return -EAGAIN;
	}
	count_pinned(cmd, more);
	cmd->admitted = true;
	atomic_inc(&conn->nr_admitted);
	return 0;
}

/*
 * Grow a SCSI command's buffer to len bytes, within what its admission
 * counted (iet_cmd_admit()). Out of memory: -ENOMEM.
 */
int iet_cmd_buf_grow(struct iet_cmd *cmd, u32 len)
{
	int ret = iet_buf_grow(&cmd->req.buf, len);

	count_held(cmd);
	return ret;
}

/*
 * A read's pages lent by its backend, counted against the limit as if
 * allocated (they are held as long): true when the read is served, its
 * buffer full; false with nothing lent.
 */
bool iet_cmd_buf_lend(struct iet_cmd *cmd)
{
	struct iet_scsi_req *req = &cmd->req;

	if (req->lun->ops->lend(req->lun, req, cmd->conn->ddigest))
		return false;
	req->io.done = req->io.len;
	count_held(cmd);
	return true;
}

/* Memory was freed (or a waiter aborted): the write thread retries. */
void iet_conn_mem_kick(struct iet_conn *conn)
{
	if (!test_and_set_bit(IET_CF_MEM_KICK, &conn->flags))
		wake_up_process(conn->tx_thread);
}

/*
 * In the write thread: everyone waiting for memory has another go. Those
 * on retry still wait (their queue says so): iet_cmd_queue_tx() may take
 * one from there meanwhile, under the same lock.
 */
void iet_conn_mem_retry(struct iet_conn *conn)
{
	struct iet_cmd *cmd;
	LIST_HEAD(retry);
	u8 then;

	clear_bit(IET_CF_MEM_KICK, &conn->flags);
	spin_lock(&conn->lock);
	list_splice_init(&conn->mem_wait, &retry);
	while ((cmd = list_first_entry_or_null(&retry, struct iet_cmd,
					       q_entry))) {
		list_del_init(&cmd->q_entry);
		then = cmd->queue;
		cmd->queue = IET_Q_NONE;
		spin_unlock(&conn->lock);
		if (then == IET_Q_MEM_DISPATCH)
			iet_cmd_dispatch(cmd);
		else
			iet_cmd_queue_tx(cmd);
		iet_cmd_put(cmd);
		cond_resched();
		spin_lock(&conn->lock);
	}
	spin_unlock(&conn->lock);
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
	/* One that never completed (aborted, its data never came) leaves. */
	iet_scsi_release_backing(req);
	iet_tset_exit(req);
	if (req->lun)
		iet_lun_put(req->lun);
	if (cmd->tmf)
		iet_tmf_release(cmd);
	if (cmd->kind == IET_KIND_SCSI && atomic_dec_and_test(&conn->nr_scsi))
		iet_conn_check_logout(conn);
	atomic_long_sub(cmd->pinned, &conn->pinned);
	atomic_long_sub(cmd->held, &held_total);
	if (cmd->admitted)
		atomic_dec(&conn->nr_admitted);
	kmem_cache_free(cmd_cache, cmd);
	if (atomic_dec_and_test(&conn->nr_cmds))
		wake_up(&conn->cmds_wq);
	/*
	 * Pairs with the barriers of rx_admit() and iet_cmd_admit(): a
	 * reader held or a command waiting for memory is seen, or sees us.
	 */
	smp_mb();
	if (!list_empty_careful(&conn->mem_wait))
		iet_conn_mem_kick(conn);
	if (test_and_clear_bit(IET_CF_RX_HELD, &conn->flags)) {
		set_bit(IET_CF_RX_READY, &conn->flags);
		wake_up_process(conn->rx_thread);
	}
	iet_conn_put(conn);
	if (atomic_dec_and_test(&nr_cmds_alive))
		wake_up_var(&nr_cmds_alive);
}

void iet_cmd_put(struct iet_cmd *cmd)
{
	kref_put(&cmd->kref, cmd_release);
}

/* Whether task management of another nexus ended it: TASK ABORTED. */
bool iet_cmd_tas(struct iet_cmd *cmd)
{
	bool tas;

	spin_lock(&cmd->conn->lock);
	tas = cmd->tas;
	spin_unlock(&cmd->conn->lock);
	return tas;
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

/*
 * Hand the command to the write thread, unless it is queued already or is a
 * read waiting for memory to run (its status comes after that). A write
 * waiting for memory for its R2T is looked at again: its wait's reference
 * becomes the queue's.
 */
void iet_cmd_queue_tx(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;

	spin_lock(&conn->lock);
	if (!iet_stopping(conn)) {
		switch (cmd->queue) {
		case IET_Q_NONE:
			iet_cmd_get(cmd);
			fallthrough;
		case IET_Q_MEM_R2T:
			cmd->queue = IET_Q_TX;
			list_move_tail(&cmd->q_entry, &conn->tx_queue);
			break;
		default:
			break;
		}
		/* Pairs with tx_disown(): the owner sees it, or we wake. */
		smp_mb();
		iet_tx_wake(conn);
	}
	spin_unlock(&conn->lock);
}

void iet_reject(struct iet_conn *conn, const struct iscsi_hdr *hdr, u8 reason)
{
	struct iet_cmd *cmd = iet_cmd_alloc(conn, IET_KIND_REJECT);

	if (!cmd)
		return;
	memcpy(&cmd->hdr, hdr, sizeof(cmd->hdr));
	cmd->reject_reason = reason;
	iet_cmd_queue_tx(cmd);
	iet_cmd_put(cmd);
}

/*
 * Completions from interrupt context (a bio's end_io) wait here for a work
 * item: there nothing may take a lock that process context takes without
 * disabling interrupts, nor be the last put of a command, a LUN or a
 * connection. Only these two global objects are touched there.
 */
static LLIST_HEAD(irq_done);

/*
 * A thread about to complete cmd that will then send its status itself
 * (sends) marks it, so that iet_cmd_complete() does not wake the write
 * thread for it.
 */
static bool flush_begin(struct iet_cmd *cmd, bool sends)
{
	if (sends)
		cmd->flusher = current;
	return sends;
}

/*
 * Should cmd complete later, elsewhere, that thread wakes the writer. If
 * it completed here it did not: after the barrier of llist_add(), either
 * we own sending or the owner sees the status when it lets go.
 */
static void flush_end(struct iet_cmd *cmd, bool sends)
{
	WRITE_ONCE(cmd->flusher, NULL);
	if (sends && iet_tx_own(cmd->conn))
		iet_tx_flush(cmd->conn);
}

static void irq_done_work(struct work_struct *work)
{
	struct llist_node *list = llist_reverse_order(llist_del_all(&irq_done));
	struct iet_cmd *cmd, *tmp;

	/*
	 * _safe: iet_cmd_complete() reuses done_node for the conn's list.
	 * Each status goes out from here if nobody else is sending, as from
	 * an I/O thread (iet_io_run()).
	 */
	llist_for_each_entry_safe(cmd, tmp, list, done_node) {
		bool sends;

		if (cmd->req.io.again) {
			cmd->req.io.again = false;
			iet_pool_submit(cmd->conn->session->target, cmd);
			continue;
		}
		sends = flush_begin(cmd, iet_tx_inline());

		iet_cmd_complete(&cmd->req);
		flush_end(cmd, sends);
		iet_cmd_put(cmd);	/* the backend's */
		cond_resched();
	}
}

static DECLARE_WORK(irq_done_w, irq_done_work);

/*
 * The end of every SCSI command, from any context: it goes to the write
 * thread through a lock-free list, which holds a reference of its own (so
 * the caller's is never the last one this function drops). From interrupt
 * context it takes the detour through irq_done first.
 */
void iet_cmd_complete(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);
	struct iet_conn *conn = cmd->conn;

	if (!in_task()) {
		iet_cmd_get(cmd);
		if (llist_add(&cmd->done_node, &irq_done))
			iet_queue_work(&irq_done_w);
		return;
	}
	iet_scsi_release_backing(req);
	iet_stats_cmd_done(conn->session, req);
	/*
	 * A long Data-In goes out from the write thread, while the thread
	 * that served it goes back to its own work: sending it here would
	 * hold up the commands behind it (iet_tx_flush()).
	 */
	if (iet_data_in_len(cmd) > IET_TX_INLINE_BUDGET &&
	    !test_bit(IET_CF_TX_HANDOFF, &conn->flags))
		set_bit(IET_CF_TX_HANDOFF, &conn->flags);
	iet_cmd_get(cmd);
	if (llist_add(&cmd->done_node, &conn->done)) {
		/* Pairs with iet_conn_drain_done(): a drain after release sees it. */
		if (test_bit(IET_CF_RELEASED, &conn->flags))
			iet_conn_drain_later(conn);
		else if (READ_ONCE(cmd->flusher) != current)
			iet_tx_wake(conn);	/* llist_add() was a full barrier */
	}	/* else whoever added the first one woke the drainer */
	/*
	 * Only now may the commands it held back run: its status is queued
	 * ahead of theirs even if an I/O thread runs one before we go on
	 * (PREEMPT_RT). The caller's reference keeps req here.
	 */
	iet_tset_exit(req);
}

/* In process context: completed commands join the transmit queue. */
void iet_conn_drain_done(struct iet_conn *conn)
{
	struct llist_node *list = llist_del_all(&conn->done);
	struct iet_cmd *cmd, *tmp;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(cmd, tmp, list, done_node) {
		spin_lock(&conn->lock);
		cmd->state = IET_ST_EXECUTED;
		spin_unlock(&conn->lock);
		iet_cmd_queue_tx(cmd);
		iet_cmd_put(cmd);
		cond_resched();
	}
}

/* The backend's end of a command that execute() left asynchronous. */
void iet_scsi_done(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	if (in_task()) {
		iet_cmd_complete(req);
		iet_cmd_put(cmd);	/* the backend's; the list holds another */
		return;
	}
	/* The backend's reference goes with it to the work item. */
	if (llist_add(&cmd->done_node, &irq_done))
		iet_queue_work(&irq_done_w);
}

/*
 * The buffer of a new SCSI command. Pages come only for data about to
 * move: what arrives unsolicited now (it cannot wait), the rest of a
 * write before its R2T, a read's before it runs. Small SPC replies come
 * whole.
 */
int iet_cmd_buf_prepare(struct iet_cmd *cmd)
{
	struct iet_scsi_req *req = &cmd->req;
	u32 unsol = min(cmd->unsol_len, req->buf_len);
	int ret;

	if (!req->data_out && req->io.op != IET_IO_READ)
		return iet_conn_pin_now(cmd->conn, req->buf_len) ?
		       iet_cmd_buf_alloc(cmd, &req->buf, req->buf_len) :
		       -EBUSY;
	if (req->data_out && !iet_conn_pin_now(cmd->conn, unsol))
		return -EBUSY;
	ret = iet_buf_reserve(&req->buf, req->buf_len);
	/* Overwritten whole (data in, or read) before anyone reads them. */
	req->buf.pool = &cmd->conn->pool;
	if (ret || !req->data_out || !unsol)
		return ret;
	ret = iet_buf_grow(&req->buf, unsol);
	count_held(cmd);
	return ret;
}

/* Run the command; it completes now or, for I/O, when the backend ends it. */
void iet_cmd_execute(struct iet_cmd *cmd)
{
	iet_cmd_get(cmd);	/* the backend's, should it go asynchronous */
	if (iet_scsi_execute(&cmd->req) == IET_ASYNC)
		return;
	iet_cmd_complete(&cmd->req);
	iet_cmd_put(cmd);
}

/*
 * A write the LUN's write gate parked runs now, holding the reference
 * iet_cmd_execute() gave the backend: in an I/O thread if it blocks (the
 * reference becomes the pool's), else here.
 */
void iet_scsi_resume(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	req->io.nowait = false;		/* in an I/O thread (wgate.c) */
	if (req->blocking) {
		iet_pool_submit(cmd->conn->session->target, cmd);
		return;
	}
	if (!cmd->aborted && iet_scsi_execute(req) == IET_ASYNC)
		return;
	iet_cmd_complete(req);
	iet_cmd_put(cmd);
}

/*
 * A command whose I/O its receiving thread could not start without sleeping
 * (io.nowait) runs again, whole, in an I/O thread, with the backend's
 * reference; from interrupt context by way of irq_done.
 */
void iet_scsi_io_again(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	req->io.nowait = false;
	if (in_task()) {
		iet_pool_submit(cmd->conn->session->target, cmd);
		return;
	}
	req->io.again = true;
	if (llist_add(&cmd->done_node, &irq_done))
		iet_queue_work(&irq_done_w);
}

/*
 * A command the LUN's task set held runs now, in an I/O thread whatever it
 * is, with the reference iet_cmd_execute() gave the backend.
 */
void iet_scsi_resume_later(struct iet_scsi_req *req)
{
	struct iet_cmd *cmd = container_of(req, struct iet_cmd, req);

	req->io.nowait = false;
	iet_pool_submit(cmd->conn->session->target, cmd);
}

/*
 * Called by an I/O thread. If it took the last command waiting for one,
 * and nobody else is sending, the thread then sends the status itself
 * (iet_tx_flush()): the write thread is not woken for it. With more
 * commands waiting it goes back to them and leaves sending to the write
 * thread, which then sends several statuses of a connection at once: with
 * many connections busy, one status per segment costs the initiator more
 * than the wake-up saves (half the IOPS at 64 sessions of 4k writes).
 */
void iet_io_run(struct iet_cmd *cmd)
{
	struct iet_iopool *pool = &cmd->conn->session->target->pool;
	bool sends = flush_begin(cmd, iet_tx_inline() &&
				 list_empty_careful(&pool->queue));

	if (cmd->aborted)
		iet_cmd_complete(&cmd->req);
	else
		iet_cmd_execute(cmd);
	flush_end(cmd, sends);
	iet_cmd_put(cmd);
}

/* ---- teardown ---------------------------------------------------------- */

/* With the threads stopped: drop every reference the connection's tables hold. */
void iet_cmd_release_tables(struct iet_conn *conn)
{
	struct iet_session *session = conn->session;
	struct iet_cmd *cmd, *tmp, *logout;
	unsigned long index;
	LIST_HEAD(drop);

	spin_lock(&conn->lock);
	list_splice_init(&conn->tx_queue, &drop);
	list_splice_init(&conn->mem_wait, &drop);
	list_for_each_entry(cmd, &drop, q_entry)
		cmd->queue = IET_Q_NONE;
	logout = conn->logout;
	conn->logout = NULL;
	spin_unlock(&conn->lock);
	list_for_each_entry_safe(cmd, tmp, &drop, q_entry) {
		list_del_init(&cmd->q_entry);
		iet_cmd_put(cmd);
	}
	if (logout)
		iet_cmd_put(logout);

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

	/*
	 * Each command is taken out of the table under its lock, so that the
	 * table's reference is dropped once, whoever else (a LUN reset from
	 * another session) is ending it at the same time.
	 */
	xa_lock(&conn->cmds);
	xa_for_each(&conn->cmds, index, cmd) {
		__xa_erase(&conn->cmds, index);
		xa_unlock(&conn->cmds);
		/* Waiting for a sanitize, it ends; the sanitize goes on. */
		iet_sanitize_abort(&cmd->req);
		iet_cmd_put(cmd);
		xa_lock(&conn->cmds);
	}
	xa_unlock(&conn->cmds);

	if (conn->rx.cmd) {
		iet_cmd_put(conn->rx.cmd);
		conn->rx.cmd = NULL;
	}
}
