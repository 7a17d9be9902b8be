// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: adopting a logged-in socket from ietd, the socket callbacks
 * that wake the read and write threads, keepalive, and ordered teardown.
 */
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "iet.h"

static struct workqueue_struct *iet_wq, *iet_close_wq;

/* How long a logged-out connection may linger before it is cut. */
#define LOGOUT_LINGER	(5 * HZ)

/*
 * How long a closing connection waits for commands still in the backend.
 * Past it the connection and its session are released anyway: the commands
 * keep what they use referenced and their completions are dropped.
 */
static unsigned int release_timeout = 30;
module_param(release_timeout, uint, 0644);
MODULE_PARM_DESC(release_timeout,
		 "seconds a closing connection waits for commands stuck in the backend (default 30)");

/*
 * A dead peer is found by TCP even without NOP-In pings: keepalive probes
 * after a minute of silence, and unacknowledged data (or a window that
 * stays shut) gives up after two minutes.
 */
#define KEEPALIVE_IDLE		60	/* seconds */
#define KEEPALIVE_INTVL		10
#define KEEPALIVE_CNT		6
#define USER_TIMEOUT_MS		(120 * 1000)

struct iet_conn *iet_conn_lookup(struct iet_session *session, u16 cid)
{
	struct iet_conn *conn;

	lockdep_assert_held(&session->target->lock);
	list_for_each_entry(conn, &session->conns, list)
		if (conn->cid == cid)
			return conn;
	return NULL;
}

static void conn_free_buffers(struct iet_conn *conn)
{
	kfree(conn->scratch);
	iet_page_pool_drain(&conn->pool);
	kvfree(conn->tx.bvec);
	/* Pages still in the socket's queue keep references of their own. */
	iet_tx_slot_free(&conn->tx);
	page_frag_cache_drain(&conn->tx.frag);
	xa_destroy(&conn->cmds);
	iet_text_release(conn);
}

static void conn_free(struct kref *kref)
{
	struct iet_conn *conn = container_of(kref, struct iet_conn, kref);
	bool pins = test_bit(IET_CF_PINS_MODULE, &conn->flags);

	put_task_struct(conn->rx_thread);
	put_task_struct(conn->tx_thread);
	fput(conn->file);
	iet_session_put(conn->session);
	conn_free_buffers(conn);
	kfree(conn);
	/*
	 * Last: an unload may begin the moment it is dropped. What runs of
	 * ours after it runs in a thread or work item that the unload waits
	 * for (iet_cmd_wait_all(), then the module's workqueue destroyed).
	 */
	if (pins)
		module_put(THIS_MODULE);
}

void iet_conn_put(struct iet_conn *conn)
{
	kref_put(&conn->kref, conn_free);
}

/* Socket callbacks: they only wake the thread that does the work. */
static void conn_data_ready(struct sock *sk)
{
	struct iet_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		set_bit(IET_CF_RX_READY, &conn->flags);
		wake_up_process(conn->rx_thread);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void conn_state_change(struct sock *sk)
{
	void (*saved)(struct sock *sk) = NULL;
	struct iet_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn) {
		saved = conn->saved_state_change;
		set_bit(IET_CF_RX_READY, &conn->flags);
		wake_up_process(conn->rx_thread);
	}
	read_unlock_bh(&sk->sk_callback_lock);
	if (saved)
		saved(sk);
}

static void conn_write_space(struct sock *sk)
{
	struct iet_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn && sk_stream_is_writeable(sk)) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		set_bit(IET_CF_TX_READY, &conn->flags);
		wake_up_process(conn->tx_thread);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* Start an orderly teardown of this connection only. */
void iet_conn_close(struct iet_conn *conn)
{
	if (test_and_set_bit(IET_CF_CLOSING, &conn->flags))
		return;
	queue_work(iet_wq, &conn->release_work);
}

/*
 * The connection failed. At ErrorRecoveryLevel 0 its tasks cannot move to
 * another connection, so the whole session ends (RFC 7143 7.1.5).
 */
void iet_conn_fail(struct iet_conn *conn)
{
	set_bit(IET_CF_FAILED, &conn->flags);
	iet_conn_close(conn);
}

/*
 * Once a second: keepalive pings, their timeout, the logout linger, the
 * deadline of a logout we asked for.
 */
static void conn_timer(struct timer_list *t)
{
	struct iet_conn *conn = from_timer(conn, t, timer);
	unsigned long now = jiffies;
	unsigned long last_rx = READ_ONCE(conn->last_rx);
	unsigned long sent = READ_ONCE(conn->nop_sent);
	unsigned long by = READ_ONCE(conn->logout_by);

	if (iet_stopping(conn))
		return;
	if (test_bit(IET_CF_LOGGED_OUT, &conn->flags)) {
		if (time_after(now, conn->logout_time + LOGOUT_LINGER)) {
			iet_conn_close(conn);
			return;
		}
	} else if (by && time_after(now, by)) {
		pr_notice_ratelimited("target %u session %#llx cid %u: no Logout within %u s of asking for it, closing\n",
				      conn->session->target->tid,
				      conn->session->sid, conn->cid,
				      READ_ONCE(conn->logout_wait));
		iet_conn_fail(conn);
		return;
	} else if (conn->nop_interval) {
		bool answered = !READ_ONCE(conn->nop_ttt) ||
				time_after_eq(last_rx, sent);

		if (!answered && conn->nop_timeout &&
		    time_after(now, sent + conn->nop_timeout * HZ)) {
			pr_notice_ratelimited("target %u session %#llx cid %u: no answer to NOP-In for %u s, closing\n",
					      conn->session->target->tid,
					      conn->session->sid, conn->cid,
					      conn->nop_timeout);
			iet_conn_fail(conn);
			return;
		}
		if (answered &&
		    time_after(now, last_rx + conn->nop_interval * HZ) &&
		    time_after(now, sent + conn->nop_interval * HZ) &&
		    !test_and_set_bit(IET_CF_NOP_DUE, &conn->flags))
			wake_up_process(conn->tx_thread);
	}
	mod_timer(&conn->timer, now + HZ);
}

/* Install our callbacks unless somebody else owns the socket. */
static int conn_claim_socket(struct iet_conn *conn)
{
	struct sock *sk = conn->sock->sk;
	int ret = 0;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_user_data) {
		ret = -EBUSY;
	} else {
		sk->sk_user_data = conn;
		conn->saved_data_ready = sk->sk_data_ready;
		conn->saved_state_change = sk->sk_state_change;
		conn->saved_write_space = sk->sk_write_space;
		sk->sk_data_ready = conn_data_ready;
		sk->sk_state_change = conn_state_change;
		sk->sk_write_space = conn_write_space;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	return ret;
}

static void conn_unclaim_socket(struct iet_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = conn->saved_data_ready;
	sk->sk_state_change = conn->saved_state_change;
	sk->sk_write_space = conn->saved_write_space;
	write_unlock_bh(&sk->sk_callback_lock);
}

static void conn_release(struct work_struct *work)
{
	struct iet_conn *conn = container_of(work, struct iet_conn,
					     release_work);
	struct iet_session *session = conn->session;
	struct iet_target *target = session->target;
	unsigned int wait, spins;
	bool last;

	if (test_bit(IET_CF_FAILED, &conn->flags))
		iet_session_close(session);

	kernel_sock_shutdown(conn->sock, SHUT_RDWR);
	conn_unclaim_socket(conn);
	timer_delete_sync(&conn->timer);

	/* Whoever queued work saw CLOSING clear and woke tx under this lock. */
	spin_lock(&conn->lock);
	spin_unlock(&conn->lock);
	/*
	 * Sending becomes ours for good: a thread that owns it (the writer,
	 * or an I/O thread or a work item sending what it served) may be
	 * using the command at the head of the queue, whose reference the
	 * tables below drop. It lets go soon: sends do not block, and fail
	 * on the shut socket.
	 */
	for (spins = 0; !iet_tx_own(conn); spins++) {
		if (spins == 10000)
			pr_notice("target %u session %#llx cid %u: release waits for a sender\n",
				  target->tid, session->sid, conn->cid);
		usleep_range(50, 100);
	}
	kthread_stop(conn->rx_thread);
	kthread_stop(conn->tx_thread);
	/* Completions from now on are drained by a work item. */
	set_bit(IET_CF_RELEASED, &conn->flags);
	/* Pairs with llist_add() in iet_cmd_complete(): see it or be seen. */
	smp_mb__after_atomic();
	iet_conn_drain_done(conn);

	iet_cmd_release_tables(conn);
	/* Commands still in the backend end on their own; wait a while. */
	wait = max(READ_ONCE(release_timeout), 1U);
	if (!wait_event_timeout(conn->cmds_wq, !atomic_read(&conn->nr_cmds),
				wait * HZ)) {
		pr_notice("target %u session %#llx cid %u: %d commands still in the backend after %u s; released without them\n",
			  target->tid, session->sid, conn->cid,
			  atomic_read(&conn->nr_cmds), wait);
		/*
		 * They run our code when they end: until then rmmod is
		 * refused rather than left waiting for them.
		 */
		if (try_module_get(THIS_MODULE))
			set_bit(IET_CF_PINS_MODULE, &conn->flags);
	}

	mutex_lock(&target->lock);
	list_del(&conn->list);
	WRITE_ONCE(conn->unlinked, true);
	last = iet_session_unlink_locked(session);
	mutex_unlock(&target->lock);
	wake_up_all(&target->wq);

	pr_info("target %u session %#llx cid %u closed\n", target->tid,
		session->sid, conn->cid);
	iet_event_conn_closed(target->tid, session->sid, conn->cid);
	if (last) {
		iet_session_lost(session);
		iet_event_session_closed(target->tid, session->sid);
		iet_session_put(session);	/* the target's list */
	}
	iet_conn_put(conn);			/* the session's list */
}

static void conn_drain_work(struct work_struct *work)
{
	struct iet_conn *conn = container_of(work, struct iet_conn, done_work);

	iet_conn_drain_done(conn);
	iet_conn_put(conn);	/* the one iet_conn_drain_later() took */
}

/* Work of the module's own, on a workqueue that runs under memory pressure. */
bool iet_queue_work(struct work_struct *work)
{
	return queue_work(iet_wq, work);
}

/*
 * A backing's close, on a workqueue without WQ_MEM_RECLAIM: it waits for
 * the files released later (flush_delayed_fput()), work of the system
 * workqueue that a WQ_MEM_RECLAIM worker must not wait for.
 */
void iet_queue_close(struct work_struct *work)
{
	queue_work(iet_close_wq, work);
}

/*
 * A completion after the write thread is gone: drained by a work item. The
 * pending work holds the connection: the completion it was queued for may
 * be drained by a run already under way, and the completer's own put then
 * be the connection's last.
 */
void iet_conn_drain_later(struct iet_conn *conn)
{
	kref_get(&conn->kref);
	if (!queue_work(iet_wq, &conn->done_work))
		iet_conn_put(conn);
}

static int conn_check_socket(struct socket *sock, struct netlink_ext_ack *extack)
{
	struct sock *sk = sock->sk;

	if ((sk->sk_family != AF_INET && sk->sk_family != AF_INET6) ||
	    sk->sk_type != SOCK_STREAM || sk->sk_protocol != IPPROTO_TCP) {
		NL_SET_ERR_MSG(extack, "the descriptor is not a TCP socket");
		return -EINVAL;
	}
	if (READ_ONCE(sk->sk_state) != TCP_ESTABLISHED) {
		NL_SET_ERR_MSG(extack, "the socket is not connected");
		return -ENOTCONN;
	}
	return 0;
}

static void conn_set_keys(struct iet_conn *conn)
{
	conn->hdigest = conn->keys[IET_KEY_HEADER_DIGEST] == IET_DIGEST_CRC32C;
	conn->ddigest = conn->keys[IET_KEY_DATA_DIGEST] == IET_DIGEST_CRC32C;
	conn->max_recv_dsl = conn->keys[IET_KEY_MAX_RECV_DSL];
	conn->max_xmit_dsl = conn->keys[IET_KEY_MAX_XMIT_DSL];
}

/*
 * The threads are created, not started: a socket callback or the end of
 * iet_conn_add() wakes them. Their task structs are held as long as the
 * connection, so a late wake-up never touches a task that has exited.
 */
static int conn_create_threads(struct iet_conn *conn, u32 tid)
{
	struct task_struct *rx, *tx;

	rx = kthread_create(iet_rx_thread, conn, "iet_rx/%u.%u", tid,
			    conn->serial);
	if (IS_ERR(rx))
		return PTR_ERR(rx);
	tx = kthread_create(iet_tx_thread, conn, "iet_tx/%u.%u", tid,
			    conn->serial);
	if (IS_ERR(tx)) {
		kthread_stop(rx);
		return PTR_ERR(tx);
	}
	get_task_struct(rx);
	get_task_struct(tx);
	conn->rx_thread = rx;
	conn->tx_thread = tx;
	return 0;
}

static void conn_destroy_threads(struct iet_conn *conn)
{
	kthread_stop(conn->rx_thread);
	kthread_stop(conn->tx_thread);
	put_task_struct(conn->rx_thread);
	put_task_struct(conn->tx_thread);
}

/* Everything the socket needs before anybody can use the connection. */
static void conn_setup_socket(struct socket *sock)
{
	struct sock *sk = sock->sk;

	tcp_sock_set_nodelay(sk);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, KEEPALIVE_IDLE);
	tcp_sock_set_keepintvl(sk, KEEPALIVE_INTVL);
	tcp_sock_set_keepcnt(sk, KEEPALIVE_CNT);
	tcp_sock_set_user_timeout(sk, USER_TIMEOUT_MS);
	sk->sk_allocation = GFP_NOIO;
}

/*
 * Adopt the socket behind fd, in the calling process's context, as
 * connection cid of session. The caller keeps its descriptor and closes it.
 */
int iet_conn_add(struct iet_session *session, u16 cid, int fd, u32 stat_sn,
		 struct nlattr *keys, struct netlink_ext_ack *extack)
{
	struct iet_target *target = session->target;
	struct iet_conn *conn, *c;
	struct socket *sock;
	unsigned int nr = 0;
	int ret;

	lockdep_assert_held(&iet_mutex);
	sock = sockfd_lookup(fd, &ret);
	if (!sock) {
		NL_SET_ERR_MSG(extack, "the descriptor is not a socket");
		return ret;
	}
	ret = conn_check_socket(sock, extack);
	if (ret)
		goto out_sock;

	ret = -ENOMEM;
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		goto out_sock;
	conn->scratch = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!conn->scratch)
		goto out_conn;
	kref_init(&conn->kref);
	conn->cid = cid;
	conn->sock = sock;
	conn->file = sock->file;
	conn->stat_sn = stat_sn;
	conn->next_ttt = 1;
	conn->last_rx = jiffies;
	spin_lock_init(&conn->lock);
	mutex_init(&conn->text_mutex);
	iet_page_pool_init(&conn->pool);
	INIT_LIST_HEAD(&conn->tx_queue);
	INIT_LIST_HEAD(&conn->mem_wait);
	xa_init(&conn->cmds);
	init_waitqueue_head(&conn->cmds_wq);
	INIT_WORK(&conn->release_work, conn_release);
	INIT_WORK(&conn->done_work, conn_drain_work);
	init_llist_head(&conn->done);
	timer_setup(&conn->timer, conn_timer, 0);
	memcpy(conn->keys, session->keys, sizeof(conn->keys));
	ret = iet_parse_params(keys, conn->keys, IET_KEY_MAX, iet_key_policy,
			       extack);
	if (ret)
		goto out_conn;
	if (conn->keys[IET_KEY_HEADER_DIGEST] > IET_DIGEST_CRC32C ||
	    conn->keys[IET_KEY_DATA_DIGEST] > IET_DIGEST_CRC32C) {
		NL_SET_ERR_MSG(extack, "a negotiated digest is None or CRC32C");
		ret = -EINVAL;
		goto out_conn;
	}
	conn_set_keys(conn);
	/* A PDU: its slot twice, and the pages of its longest data segment. */
	conn->tx.bvec = kvmalloc_array(DIV_ROUND_UP(conn->max_xmit_dsl,
						    PAGE_SIZE) + 3,
				       sizeof(*conn->tx.bvec), GFP_KERNEL);
	if (!conn->tx.bvec) {
		ret = -ENOMEM;
		goto out_conn;
	}
	if (kernel_getpeername(sock, (struct sockaddr *)&conn->peer) < 0 ||
	    kernel_getsockname(sock, (struct sockaddr *)&conn->local) < 0) {
		NL_SET_ERR_MSG(extack, "the socket has no addresses");
		ret = -ENOTCONN;
		goto out_conn;
	}

	conn_setup_socket(sock);

	/*
	 * Publish last: once the socket is claimed and the connection listed,
	 * the initiator's first PDU (a Logout, say) can run the whole teardown
	 * before this function returns. Our own reference keeps conn alive
	 * until then, and everything it needs is set up before.
	 */
	kref_get(&conn->kref);
	mutex_lock(&target->lock);
	conn->max_cmds = IET_CONN_CMDS(session->queued_cmds);
	conn->nop_interval = target->tparams[IET_TP_NOP_INTERVAL];
	conn->nop_timeout = target->tparams[IET_TP_NOP_TIMEOUT];
	conn->serial = atomic_inc_return(&target->conn_serial);
	list_for_each_entry(c, &session->conns, list)
		nr++;
	if (session->closing) {
		NL_SET_ERR_MSG(extack, "the session is closing");
		ret = -ESHUTDOWN;
	} else if (iet_conn_lookup(session, cid)) {
		NL_SET_ERR_MSG(extack, "a connection with this cid exists");
		ret = -EEXIST;
	} else if (nr >= session->keys[IET_KEY_MAX_CONNECTIONS]) {
		NL_SET_ERR_MSG(extack, "the session has MaxConnections");
		ret = -EBUSY;
	} else {
		ret = conn_create_threads(conn, target->tid);
	}
	if (ret) {
		mutex_unlock(&target->lock);
		goto out_conn;
	}
	kref_get(&session->kref);
	conn->session = session;
	mod_timer(&conn->timer, jiffies + HZ);
	ret = conn_claim_socket(conn);
	if (ret) {
		mutex_unlock(&target->lock);
		NL_SET_ERR_MSG(extack, "the socket is in use");
		timer_delete_sync(&conn->timer);
		conn_destroy_threads(conn);
		iet_session_put(session);
		goto out_conn;
	}
	list_add_tail(&conn->list, &session->conns);
	/* Data may have arrived before the callbacks were ours. */
	set_bit(IET_CF_RX_READY, &conn->flags);
	wake_up_process(conn->rx_thread);
	wake_up_process(conn->tx_thread);
	mutex_unlock(&target->lock);

	pr_info("target %u session %#llx cid %u: %pISp%s%s\n", target->tid,
		session->sid, cid, &conn->peer,
		conn->hdigest ? " hdigest" : "",
		conn->ddigest ? " ddigest" : "");
	iet_conn_put(conn);
	return 0;

out_conn:
	conn_free_buffers(conn);
	kfree(conn);
out_sock:
	sockfd_put(sock);
	return ret;
}

int __init iet_conn_init(void)
{
	/* Releasing a connection frees memory: it must run under pressure. */
	iet_wq = alloc_workqueue("iet", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!iet_wq)
		return -ENOMEM;
	iet_close_wq = alloc_workqueue("iet_close", WQ_UNBOUND, 0);
	if (!iet_close_wq) {
		destroy_workqueue(iet_wq);
		return -ENOMEM;
	}
	return 0;
}

void iet_conn_exit(void)
{
	destroy_workqueue(iet_wq);
	/* After iet_wq: a completion drained there may end a backing's use. */
	destroy_workqueue(iet_close_wq);
}
