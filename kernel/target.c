// SPDX-License-Identifier: GPL-2.0
/* Targets: their parameters, LUN table, sessions and pool of I/O threads. */
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "iet.h"

/* The control plane: netlink requests and module unload, one at a time. */
DEFINE_MUTEX(iet_mutex);
bool iet_shutting_down;
DEFINE_XARRAY_ALLOC1(iet_targets);

static const u32 tparam_defaults[IET_TP_MAX + 1] = {
	[IET_TP_WTHREADS] = 8,
	[IET_TP_QUEUED_CMDS] = 128,
	[IET_TP_NOP_INTERVAL] = 10,
	[IET_TP_NOP_TIMEOUT] = 15,
	[IET_TP_TARGET_RESET] = 0,
};

/* IET's defaults: RFC 7143's, but DefaultTime2Retain 0 (no ERL 2). */
static const u32 key_defaults[IET_KEY_MAX + 1] = {
	[IET_KEY_INITIAL_R2T] = 1,
	[IET_KEY_IMMEDIATE_DATA] = 1,
	[IET_KEY_MAX_CONNECTIONS] = 1,
	[IET_KEY_MAX_RECV_DSL] = 8192,
	[IET_KEY_MAX_XMIT_DSL] = 8192,
	[IET_KEY_MAX_BURST] = 262144,
	[IET_KEY_FIRST_BURST] = 65536,
	[IET_KEY_DEFAULT_TIME2WAIT] = 2,
	[IET_KEY_DEFAULT_TIME2RETAIN] = 0,
	[IET_KEY_MAX_OUTSTANDING_R2T] = 1,
	[IET_KEY_DATA_PDU_INORDER] = 1,
	[IET_KEY_DATA_SEQUENCE_INORDER] = 1,
	[IET_KEY_ERROR_RECOVERY_LEVEL] = 0,
	[IET_KEY_HEADER_DIGEST] = 1 << IET_DIGEST_NONE,
	[IET_KEY_DATA_DIGEST] = 1 << IET_DIGEST_NONE,
};

/* Copy the attributes present in nest over vals[]; absent ones stay. */
int iet_parse_params(struct nlattr *nest, u32 *vals, unsigned int max,
		     const struct nla_policy *policy,
		     struct netlink_ext_ack *extack)
{
	struct nlattr *tb[IET_KEY_MAX + 1];
	unsigned int i;
	int ret;

	if (!nest)
		return 0;
	if (WARN_ON_ONCE(max > IET_KEY_MAX))
		return -EINVAL;
	ret = nla_parse_nested(tb, max, nest, policy, extack);
	if (ret)
		return ret;
	for (i = 1; i <= max; i++)
		if (tb[i])
			vals[i] = nla_get_u32(tb[i]);
	return 0;
}

static int check_target_keys(const u32 *keys, struct netlink_ext_ack *extack)
{
	if (!keys[IET_KEY_HEADER_DIGEST] || !keys[IET_KEY_DATA_DIGEST]) {
		NL_SET_ERR_MSG(extack, "a digest offer must allow something");
		return -EINVAL;
	}
	if (keys[IET_KEY_FIRST_BURST] > keys[IET_KEY_MAX_BURST]) {
		NL_SET_ERR_MSG(extack,
			       "FirstBurstLength exceeds MaxBurstLength");
		return -EINVAL;
	}
	return 0;
}

struct iet_target *iet_target_lookup(u32 tid)
{
	lockdep_assert_held(&iet_mutex);
	return xa_load(&iet_targets, tid);
}

/* Commands looked at past the head for one of a session below its share. */
#define POOL_SCAN	32

static bool over_share(struct iet_cmd *cmd, unsigned int share)
{
	return atomic_read(&cmd->conn->session->in_pool) >= share;
}

/*
 * The next command for a thread. The threads are shared by the target's
 * sessions, and one session's commands must not take them all from the
 * others: while the one at the head belongs to a session that holds its
 * share already (half the threads), one of a session below its share
 * goes first if there is one near the head; and a long one (a copy) of a
 * session past its share leaves the last idle thread to the others.
 */
static struct iet_cmd *pool_take(struct iet_iopool *pool)
{
	unsigned int nr = READ_ONCE(pool->nr), share = max(1U, nr / 2), n = 0;
	struct iet_cmd *cmd, *pos;

	spin_lock(&pool->lock);
	cmd = list_first_entry_or_null(&pool->queue, struct iet_cmd, io_entry);
	/* A closed pool's drain takes everything (pool_drain_work()). */
	if (cmd && !pool->closed && over_share(cmd, share)) {
		list_for_each_entry(pos, &pool->queue, io_entry) {
			if (!over_share(pos, share)) {
				cmd = pos;
				break;
			}
			if (++n == POOL_SCAN)
				break;
		}
		if (over_share(cmd, share) && cmd->req.lengthy &&
		    pool->busy + 1 >= nr) {
			pool->refused = true;
			cmd = NULL;
		}
	}
	if (cmd) {
		list_del_init(&cmd->io_entry);
		atomic_inc(&cmd->conn->session->in_pool);
		pool->busy++;
	}
	spin_unlock(&pool->lock);
	return cmd;
}

/*
 * A command a thread took is done with: its session holds one fewer, and a
 * thread that left a command queued for want of its share looks again.
 */
static void pool_run(struct iet_iopool *pool, struct iet_cmd *cmd)
{
	struct iet_session *session = cmd->conn->session;
	bool refused;

	kref_get(&session->kref);
	iet_io_run(cmd);
	atomic_dec(&session->in_pool);
	iet_session_put(session);
	spin_lock(&pool->lock);
	pool->busy--;
	refused = pool->refused;
	pool->refused = false;
	spin_unlock(&pool->lock);
	if (refused)
		wake_up(&pool->wq);
}

static int io_thread(void *arg)
{
	struct iet_iopool *pool = arg;
	struct iet_cmd *cmd;

	/*
	 * As the loop driver's workers: an I/O thread's buffered writes are
	 * throttled against its own backing device only. Throttled against
	 * the machine's dirty pages, it would wait for pages that only it can
	 * clean when the initiator runs on this machine (a deadlock), and
	 * memory reclaim must not recurse into I/O that may need this thread.
	 */
	current->flags |= PF_LOCAL_THROTTLE | PF_MEMALLOC_NOIO;
	while (!kthread_should_stop()) {
		cmd = NULL;
		/* Take work before looking at the stop flag: none is lost. */
		wait_event_interruptible_exclusive(pool->wq,
						   (cmd = pool_take(pool)) ||
						   kthread_should_stop());
		if (cmd)
			pool_run(pool, cmd);
	}
	return 0;
}

/*
 * A pool without threads (its target going) ends what is queued there
 * unexecuted, in a work item: a command a task set or a write gate resumes
 * after the last thread left would otherwise wait for ever, and the module
 * with it. Unanswered: its connection is closing.
 */
static void pool_drain_work(struct work_struct *work)
{
	struct iet_iopool *pool = container_of(work, struct iet_iopool, drain);
	struct iet_target *target = container_of(pool, struct iet_target, pool);
	struct iet_cmd *cmd;

	while ((cmd = pool_take(pool))) {
		spin_lock(&cmd->conn->lock);
		cmd->aborted = true;
		spin_unlock(&cmd->conn->lock);
		pool_run(pool, cmd);
		cond_resched();
	}
	iet_target_put(target);
}

static void pool_drain_later(struct iet_target *target)
{
	kref_get(&target->kref);
	if (!iet_queue_work(&target->pool.drain))
		iet_target_put(target);
}

void iet_pool_submit(struct iet_target *target, struct iet_cmd *cmd)
{
	struct iet_iopool *pool = &target->pool;
	bool closed;

	spin_lock(&pool->lock);
	list_add_tail(&cmd->io_entry, &pool->queue);
	closed = pool->closed;
	spin_unlock(&pool->lock);
	if (closed)
		pool_drain_later(target);
	else
		wake_up(&pool->wq);
}

/* I/O threads leaving a pool: stopped by a work item, not by the caller. */
struct pool_retire {
	struct work_struct work;
	struct iet_target *target;	/* the pool they wait on */
	unsigned int nr;
	struct task_struct *tasks[];
};

static void pool_retire_work(struct work_struct *work)
{
	struct pool_retire *r = container_of(work, struct pool_retire, work);
	unsigned int i;

	/* Each ends its command first, however long the backend takes. */
	for (i = 0; i < r->nr; i++)
		kthread_stop(r->tasks[i]);
	iet_target_put(r->target);
	kfree(r);
}

/*
 * Stop the pool's threads from the nr-th on. A thread may be inside a
 * backend that never returns: the control plane must not wait for it, so
 * a work item does (module unload waits for that work, and must: the
 * thread runs our code).
 */
static void pool_shrink(struct iet_target *target, unsigned int nr)
{
	struct iet_iopool *pool = &target->pool;
	struct pool_retire *r;

	r = kmalloc(struct_size(r, tasks, pool->nr - nr), GFP_KERNEL);
	if (!r) {
		while (pool->nr > nr)
			kthread_stop(pool->threads[--pool->nr]);
		return;
	}
	INIT_WORK(&r->work, pool_retire_work);
	kref_get(&target->kref);
	r->target = target;
	r->nr = 0;
	while (pool->nr > nr) {
		r->tasks[r->nr++] = pool->threads[--pool->nr];
		pool->threads[pool->nr] = NULL;
	}
	iet_queue_work(&r->work);
}

int iet_pool_resize(struct iet_target *target, unsigned int nr)
{
	struct iet_iopool *pool = &target->pool;
	struct task_struct *task;

	lockdep_assert_held(&target->lock);
	while (pool->nr < nr) {
		task = kthread_run(io_thread, pool, "iet_io/%u.%u", target->tid,
				   pool->nr);
		if (IS_ERR(task))
			return PTR_ERR(task);
		pool->threads[pool->nr++] = task;
	}
	if (pool->nr > nr)
		pool_shrink(target, nr);
	/*
	 * Nobody is left to take what is queued, or comes: it ends
	 * unexecuted (a retiring thread may still take some first).
	 */
	spin_lock(&pool->lock);
	pool->closed = !pool->nr;
	spin_unlock(&pool->lock);
	if (!pool->nr)
		pool_drain_later(target);
	return 0;
}

static void target_release(struct kref *kref)
{
	struct iet_target *target = container_of(kref, struct iet_target, kref);

	xa_destroy(&target->luns);
	xa_destroy(&target->gone_sizes);
	iet_lost_free(target);
	mutex_destroy(&target->lock);
	kfree(target);
}

void iet_target_put(struct iet_target *target)
{
	kref_put(&target->kref, target_release);
}

int iet_target_add(u32 *tid, const char *name, struct nlattr *tparams,
		   struct nlattr *keys, struct netlink_ext_ack *extack)
{
	struct iet_target *target, *t;
	unsigned long index;
	int ret;

	lockdep_assert_held(&iet_mutex);
	if (!name[0]) {
		NL_SET_ERR_MSG(extack, "a target needs a name");
		return -EINVAL;
	}
	xa_for_each(&iet_targets, index, t) {
		if (!strcmp(t->name, name)) {
			NL_SET_ERR_MSG(extack, "a target with this name exists");
			return -EEXIST;
		}
	}
	target = kzalloc(sizeof(*target), GFP_KERNEL);
	if (!target)
		return -ENOMEM;
	kref_init(&target->kref);
	strscpy(target->name, name, sizeof(target->name));
	mutex_init(&target->lock);
	INIT_LIST_HEAD(&target->sessions);
	INIT_LIST_HEAD(&target->lost);
	xa_init(&target->luns);
	xa_init(&target->gone_sizes);
	init_waitqueue_head(&target->wq);
	spin_lock_init(&target->pool.lock);
	INIT_LIST_HEAD(&target->pool.queue);
	init_waitqueue_head(&target->pool.wq);
	INIT_WORK(&target->pool.drain, pool_drain_work);
	/* Portal group 1, active/optimized, until told otherwise. */
	target->tpgs[0].tag = IET_TPGT_DEFAULT;
	target->tpgs[0].state = IET_ALUA_AO;
	memcpy(target->tparams, tparam_defaults, sizeof(target->tparams));
	memcpy(target->keys, key_defaults, sizeof(target->keys));
	ret = iet_parse_params(tparams, target->tparams, IET_TP_MAX,
			       iet_tparam_policy, extack) ?:
	      iet_parse_params(keys, target->keys, IET_KEY_MAX, iet_key_policy,
			       extack) ?:
	      check_target_keys(target->keys, extack);
	if (ret)
		goto out_free;

	if (*tid) {
		target->tid = *tid;
		ret = xa_insert(&iet_targets, *tid, target, GFP_KERNEL);
		if (ret == -EBUSY) {
			NL_SET_ERR_MSG(extack, "this tid is in use");
			ret = -EEXIST;
		}
	} else {
		/* Nobody looks the target up before iet_mutex is released. */
		ret = xa_alloc(&iet_targets, tid, target, xa_limit_32b,
			       GFP_KERNEL);
		target->tid = *tid;
	}
	if (ret)
		goto out_free;

	mutex_lock(&target->lock);
	ret = iet_pool_resize(target, target->tparams[IET_TP_WTHREADS]);
	if (ret)
		iet_pool_resize(target, 0);
	mutex_unlock(&target->lock);
	if (ret) {
		xa_erase(&iet_targets, target->tid);
		goto out_free;
	}
	pr_info("target %u %s created\n", target->tid, target->name);
	return 0;

out_free:
	iet_target_put(target);
	return ret;
}

int iet_target_set(struct iet_target *target, struct nlattr *tparams,
		   struct nlattr *keys, struct netlink_ext_ack *extack)
{
	u32 tp[IET_TP_MAX + 1], k[IET_KEY_MAX + 1];
	int ret;

	mutex_lock(&target->lock);
	memcpy(tp, target->tparams, sizeof(tp));
	memcpy(k, target->keys, sizeof(k));
	ret = iet_parse_params(tparams, tp, IET_TP_MAX, iet_tparam_policy,
			       extack) ?:
	      iet_parse_params(keys, k, IET_KEY_MAX, iet_key_policy, extack) ?:
	      check_target_keys(k, extack);
	if (!ret && tp[IET_TP_WTHREADS] != target->pool.nr) {
		unsigned int old = target->pool.nr;

		ret = iet_pool_resize(target, tp[IET_TP_WTHREADS]);
		if (ret) {
			/* Nothing half-applied: back to the pool it was. */
			iet_pool_resize(target, old);
			NL_SET_ERR_MSG(extack, "cannot start I/O threads");
		}
	}
	if (!ret) {
		memcpy(target->tparams, tp, sizeof(tp));
		memcpy(target->keys, k, sizeof(k));
	}
	mutex_unlock(&target->lock);
	return ret;
}

static void target_remove(struct iet_target *target)
{
	struct iet_lun *lun;
	unsigned long index;

	xa_erase(&iet_targets, target->tid);
	xa_for_each(&target->luns, index, lun) {
		xa_erase(&target->luns, index);
		/*
		 * Its backing is closed by the last put, uncounted: a sanitize
		 * must not write it past this (a device a cluster demotes).
		 */
		iet_sanitize_stop(lun);
		flush_work(&lun->sanitize.work);
		iet_lun_put(lun);
	}
	mutex_lock(&target->lock);
	iet_pool_resize(target, 0);
	mutex_unlock(&target->lock);
	pr_info("target %u %s deleted\n", target->tid, target->name);
	iet_target_put(target);
}

int iet_target_del(struct iet_target *target)
{
	bool busy;

	lockdep_assert_held(&iet_mutex);
	mutex_lock(&target->lock);
	busy = !list_empty(&target->sessions);
	mutex_unlock(&target->lock);
	if (busy)
		return -EBUSY;
	target_remove(target);
	return 0;
}

/*
 * Module unload: refuse new requests, end every session and wait for them
 * (a connection's release is bounded), then remove the targets.
 */
void iet_targets_destroy(void)
{
	struct iet_session *session, *tmp;
	struct iet_target *target;
	unsigned long tid;
	LIST_HEAD(ending);

	mutex_lock(&iet_mutex);
	WRITE_ONCE(iet_shutting_down, true);
	xa_for_each(&iet_targets, tid, target) {
		mutex_lock(&target->lock);
		list_for_each_entry(session, &target->sessions, list) {
			kref_get(&session->kref);
			list_add_tail(&session->ending, &ending);
		}
		mutex_unlock(&target->lock);
		list_for_each_entry_safe(session, tmp, &ending, ending) {
			list_del(&session->ending);
			iet_session_end(session);
			iet_session_put(session);
		}
		wait_event(target->wq, list_empty_careful(&target->sessions));
		target_remove(target);
	}
	mutex_unlock(&iet_mutex);
}
