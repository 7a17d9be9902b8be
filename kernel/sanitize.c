// SPDX-License-Identifier: GPL-2.0
/*
 * SANITIZE (SBC-4 4.11, 5.30): OVERWRITE and BLOCK ERASE, and EXIT FAILURE
 * MODE. CRYPTOGRAPHIC ERASE has no key to change here: it is refused as a
 * service action the device server lacks.
 *
 * The operation is the LUN's, not the command's: a work item of its own
 * runs it, holding the LUN, so that it goes on past an IMMED reply, an
 * aborted command, a reset or a lost nexus, as the standard asks. While it
 * runs every command but INQUIRY, REPORT LUNS and REQUEST SENSE ends NOT
 * READY, SANITIZE IN PROGRESS with its progress; once one has failed they
 * end MEDIUM ERROR, SANITIZE COMMAND FAILED until a sanitize succeeds, or
 * EXIT FAILURE MODE ends it where the failed one allowed (AUSE).
 *
 * It writes in steps, each under the write gate of its blocks, so that a
 * resize never cuts the backing under a step, and each holding the backing
 * (a backing that closes, for a port group leaving the active states or
 * the LUN deleted, fails the operation at its next step rather than
 * waiting for its end).
 */
#include <linux/math64.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define SANITIZE		0x48	/* not in <scsi/scsi_proto.h> */
#define SA_OVERWRITE		0x01
#define SA_BLOCK_ERASE		0x02
#define SA_EXIT_FAILURE_MODE	0x1f
#define STEP			BIT(20)		/* bytes OVERWRITE writes at once */
#define ERASE_STEP		BIT_ULL(28)	/* bytes BLOCK ERASE drops at once */

static struct workqueue_struct *sanitize_wq;

int iet_sanitize_module_init(void)
{
	/* Long work, at most one per LUN: not on the system's queues. */
	sanitize_wq = alloc_workqueue("iet_sanitize", WQ_UNBOUND, 0);
	return sanitize_wq ? 0 : -ENOMEM;
}

/* Every LUN deleted by now: waits for their operations to see it. */
void iet_sanitize_module_exit(void)
{
	destroy_workqueue(sanitize_wq);
}

/* Storage of its own to write: not nullio. */
static bool can_overwrite(const struct iet_lun *lun)
{
	return lun->ops->storage;
}

/* Where the backing deallocates (LBPME): a punched hole, a discard. */
bool iet_sanitize_block_erase(const struct iet_lun *lun)
{
	return lun->thin;
}

/* ---- the state every command meets ------------------------------------ */

/*
 * Sense data for the LUN's sanitize state, into sense (IET_SENSE_MAX
 * bytes) and *len: false when no operation runs nor has failed.
 */
bool iet_sanitize_sense(struct iet_lun *lun, bool desc, u8 *sense, u32 *len)
{
	u8 state = READ_ONCE(lun->sanitize.state);

	if (state == IET_SANITIZE_IDLE)
		return false;
	if (state == IET_SANITIZE_RUNNING) {
		/* LOGICAL UNIT NOT READY, SANITIZE IN PROGRESS */
		scsi_build_sense_buffer(desc, sense, NOT_READY, 0x04, 0x1b);
		*len = iet_sense_progress(sense, desc ? 8 : 18,
					  READ_ONCE(lun->sanitize.progress));
	} else {
		/* SANITIZE COMMAND FAILED */
		scsi_build_sense_buffer(desc, sense, MEDIUM_ERROR, 0x31, 0x03);
		*len = desc ? 8 : 18;
	}
	return true;
}

/* The command ends with the sense data of the state, if not IDLE. */
static void refuse(struct iet_scsi_req *req)
{
	u32 len;

	if (!iet_sanitize_sense(req->lun, READ_ONCE(req->lun->d_sense),
				req->sense, &len))
		return;
	req->sense_len = len;
	req->status = SAM_STAT_CHECK_CONDITION;
	req->execute = NULL;
}

/* Neither running nor failed: a copy may reach the LUN (xcopy.c). */
bool iet_sanitize_idle(const struct iet_lun *lun)
{
	return READ_ONCE(lun->sanitize.state) == IET_SANITIZE_IDLE;
}

/*
 * As a command is dispatched and again as it runs: refused while the LUN
 * is being sanitized or after a sanitize failed, unless it is one the
 * standard lets through (those for any LUN) or SANITIZE itself, which
 * looks at the state as it starts.
 */
void iet_sanitize_check(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;

	u8 state;

	if (!lun || req->status != SAM_STAT_GOOD ||
	    (req->op_flags & IET_OP_ANY_LUN) || req->cdb[0] == SANITIZE)
		return;
	state = READ_ONCE(lun->sanitize.state);
	if (likely(state == IET_SANITIZE_IDLE))
		return;
	/*
	 * After a failure, what tells how to end it still answers: REPORT
	 * SUPPORTED OPERATION CODES (and the rest of MAINTENANCE IN).
	 */
	if (state == IET_SANITIZE_FAILED && req->cdb[0] == MAINTENANCE_IN)
		return;
	refuse(req);
}

/* ---- the operation ----------------------------------------------------- */

static void set_progress(struct iet_sanitize *s, u64 done, u64 total)
{
	WRITE_ONCE(s->progress, total ?
		   min_t(u64, mul_u64_u64_div_u64(done, 0x10000, total),
			 0xffff) : 0);
}

/* Before each step: the LUN not deleted, its backing held for the step. */
static int step_hold(struct iet_lun *lun, struct iet_sanitize *s)
{
	if (READ_ONCE(s->stop))
		return -EINTR;
	return iet_lun_io_hold(lun, true);
}

/* The step's blocks, held for it: false when the LUN is now shorter. */
static bool step_begin(struct iet_lun *lun, u64 lba, u64 *nr)
{
	u64 blocks;

	iet_wgate_lock(lun, lba, *nr);
	blocks = READ_ONCE(lun->blocks);
	if (lba >= blocks) {
		iet_wgate_unlock(lun);
		return false;
	}
	*nr = min(*nr, blocks - lba);
	return true;
}

/*
 * Where a pass of zeros need not write (a hole of a backing that reads
 * holes as zeros): the blocks from lba it may skip, or 0 with *nr cut to
 * the mapped blocks from lba.
 */
static int holes(struct iet_lun *lun, u64 lba, u64 *nr, u64 *skip)
{
	loff_t end = LLONG_MAX;
	bool mapped = true;
	u64 last;
	int ret;

	*skip = 0;
	if (!lun->ops->mapped || !lun->thin || !lun->lbprz)
		return 0;
	ret = lun->ops->mapped(lun, lba << lun->blkbits, &end, &mapped);
	if (ret)
		return ret;
	if (mapped) {
		/* A block partly mapped is written whole. */
		last = DIV_ROUND_UP_ULL((u64)end, lun->block_size);
		*nr = min(*nr, max(last, lba + 1) - lba);
	} else if (((u64)end >> lun->blkbits) > lba) {
		*skip = ((u64)end >> lun->blkbits) - lba;
	}
	return 0;
}

/* One pass of the pattern (inverted or not) over every block. */
static int overwrite_pass(struct iet_lun *lun, struct iet_sanitize *s,
			  struct iet_buf *w, bool invert, u64 *done, u64 total)
{
	u32 bs = lun->block_size, off, i;
	bool zero = true;
	u64 lba = 0, nr, skip;
	u8 *block;
	int ret = 0;

	block = kmalloc(bs, GFP_KERNEL);
	if (!block)
		return -ENOMEM;
	for (i = 0; i < bs; i++) {
		block[i] = invert ? ~s->block[i] : s->block[i];
		zero &= !block[i];
	}
	for (off = 0; off < w->len; off += bs)
		iet_buf_copy_to(w, off, block, bs);
	kfree(block);

	while (!ret && lba < READ_ONCE(lun->blocks)) {
		ret = step_hold(lun, s);
		if (ret)
			break;
		nr = w->len >> lun->blkbits;
		skip = 0;
		if (zero)
			ret = holes(lun, lba, &nr, &skip);
		if (!ret && !skip) {
			if (!step_begin(lun, lba, &nr)) {
				percpu_ref_put(&lun->io);
				break;
			}
			ret = iet_backend_io_sync(lun, IET_IO_WRITE,
						  lba << lun->blkbits, w,
						  nr << lun->blkbits, false);
			iet_wgate_unlock(lun);
		}
		percpu_ref_put(&lun->io);
		nr = skip ?: nr;
		lba += nr;
		*done += nr;
		set_progress(s, *done, total);
		cond_resched();
	}
	if (ret)
		return ret;
	/* Each pass on stable storage before the next, the last before GOOD. */
	return iet_lun_io_sync(lun, IET_IO_FLUSH, 0, NULL, 0, true);
}

/*
 * OVERWRITE COUNT passes; with INVERT they alternate between the pattern
 * and its inverse, so that the last one writes the pattern itself.
 */
static int overwrite(struct iet_lun *lun, struct iet_sanitize *s)
{
	u64 total = READ_ONCE(lun->blocks) * s->passes, done = 0;
	struct iet_buf w;
	unsigned int pass;
	int ret = 0;

	if (iet_buf_alloc(&w, STEP))
		return -ENOMEM;
	for (pass = 0; pass < s->passes && !ret; pass++)
		ret = overwrite_pass(lun, s, &w, s->invert &&
				     (s->passes - 1 - pass) % 2, &done, total);
	iet_buf_free(&w);
	return ret;
}

/* Every block deallocated; they read as zeros after it (unmap's zero). */
static int block_erase(struct iet_lun *lun, struct iet_sanitize *s)
{
	u64 lba = 0, nr, total = READ_ONCE(lun->blocks);
	int ret = 0;

	while (!ret && lba < READ_ONCE(lun->blocks)) {
		ret = step_hold(lun, s);
		if (ret)
			break;
		nr = ERASE_STEP >> lun->blkbits;
		if (!step_begin(lun, lba, &nr)) {
			percpu_ref_put(&lun->io);
			break;
		}
		ret = lun->ops->unmap(lun, lba << lun->blkbits,
				      nr << lun->blkbits, true);
		iet_wgate_unlock(lun);
		percpu_ref_put(&lun->io);
		lba += nr;
		set_progress(s, lba, total);
		cond_resched();
	}
	if (ret)
		return ret;
	return iet_lun_io_sync(lun, IET_IO_FLUSH, 0, NULL, 0, true);
}

static void sanitize_work(struct work_struct *work)
{
	struct iet_sanitize *s = container_of(work, struct iet_sanitize, work);
	struct iet_lun *lun = container_of(s, struct iet_lun, sanitize);
	struct iet_scsi_req *waiter;
	unsigned int flags = current->flags;
	struct iet_target *target;
	bool ause;
	int ret;

	/*
	 * As the I/O threads: its allocations recurse into no I/O, and its
	 * writes are throttled by the backing's own dirty pages, not the
	 * machine's (a loopback initiator's, which cannot be written back
	 * while every write is refused, would stall it for ever).
	 */
	current->flags |= PF_MEMALLOC_NOIO | PF_LOCAL_THROTTLE;
	pr_info("target %u lun %u: sanitize (%s) started\n", lun->target->tid,
		lun->lun, s->sa == SA_OVERWRITE ? "overwrite" : "block erase");
	/* The writes that began before it end first; later ones see it. */
	iet_wgate_lock(lun, 0, IET_WGATE_ALL);
	iet_wgate_unlock(lun);
	if (s->sa == SA_OVERWRITE)
		ret = overwrite(lun, s);
	else
		ret = block_erase(lun, s);

	spin_lock(&s->lock);
	waiter = s->waiter;
	s->waiter = NULL;
	kfree(s->block);
	s->block = NULL;
	WRITE_ONCE(s->state, ret ? IET_SANITIZE_FAILED : IET_SANITIZE_IDLE);
	ause = s->ause;
	spin_unlock(&s->lock);
	if (ret == -EINTR && READ_ONCE(s->stop))
		pr_info("target %u lun %u: sanitize ended: the LUN is deleted\n",
			lun->target->tid, lun->lun);
	else if (ret)
		pr_warn("target %u lun %u: sanitize failed (%d): its blocks are refused until a sanitize succeeds%s\n",
			lun->target->tid, lun->lun, ret,
			ause ? " or EXIT FAILURE MODE" : "");
	else
		pr_info("target %u lun %u: sanitize done\n", lun->target->tid,
			lun->lun);
	if (waiter) {
		if (ret)
			iet_scsi_sense(waiter, MEDIUM_ERROR, 0x31, 0x03);
		iet_scsi_done(waiter);
	}
	target = lun->target;
	iet_lun_put(lun);
	iet_target_put(target);
	current_restore_flags(flags, PF_MEMALLOC_NOIO | PF_LOCAL_THROTTLE);
}

/*
 * An aborted SANITIZE (ABORT TASK, a reset, its nexus lost) ends now,
 * answered as aborted; its operation goes on. Any task, any context the
 * TMF runs in.
 */
void iet_sanitize_abort(struct iet_scsi_req *req)
{
	struct iet_sanitize *s;
	bool mine;

	if (!req->lun || req->cdb[0] != SANITIZE)
		return;
	s = &req->lun->sanitize;
	spin_lock(&s->lock);
	mine = s->waiter == req;
	if (mine)
		s->waiter = NULL;
	spin_unlock(&s->lock);
	if (mine)
		iet_scsi_done(req);
}

/*
 * A connection logging out: its SANITIZE commands waiting for their
 * operations end now, unanswered as the connection's other tasks that
 * its end terminates, so that the Logout Response, which waits for the
 * connection's commands, need not wait for them; the operations go on.
 */
void iet_sanitize_logout(struct iet_conn *conn)
{
	struct iet_target *target = conn->session->target;
	struct iet_scsi_req *req;
	struct iet_lun *lun;
	unsigned long idx;

	rcu_read_lock();
	xa_for_each(&target->luns, idx, lun) {
		if (!kref_get_unless_zero(&lun->kref))
			continue;
		rcu_read_unlock();
		spin_lock(&lun->sanitize.lock);
		req = lun->sanitize.waiter;
		if (req && container_of(req, struct iet_cmd, req)->conn == conn)
			lun->sanitize.waiter = NULL;
		else
			req = NULL;
		spin_unlock(&lun->sanitize.lock);
		if (req) {
			/* Ended with its connection: answered by nothing. */
			spin_lock(&conn->lock);
			container_of(req, struct iet_cmd, req)->aborted = true;
			spin_unlock(&conn->lock);
			iet_scsi_done(req);
		}
		iet_lun_put(lun);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

void iet_sanitize_init(struct iet_lun *lun)
{
	spin_lock_init(&lun->sanitize.lock);
	INIT_WORK(&lun->sanitize.work, sanitize_work);
}

/* The LUN is deleted: its operation ends at its next step. */
void iet_sanitize_stop(struct iet_lun *lun)
{
	WRITE_ONCE(lun->sanitize.stop, true);
}

/* ---- the command ------------------------------------------------------- */

/*
 * The OVERWRITE parameter list (SBC-4 5.30.3.2): the pattern made into
 * one block, or NULL with the command ended.
 */
static u8 *overwrite_params(struct iet_scsi_req *req, u8 *passes,
			    bool *invert)
{
	u32 bs = req->lun->block_size, plen, i;
	u8 *p, *block = NULL;

	p = iet_scsi_param_list(req, get_unaligned_be16(req->cdb + 7));
	if (!p)
		return NULL;
	plen = get_unaligned_be16(p + 2);
	if (p[0] & 0x60)			/* TEST: 00b only */
		iet_scsi_invalid_param(req, 0, 6);
	else if (!(p[0] & 0x1f))		/* OVERWRITE COUNT 0 */
		iet_scsi_invalid_param(req, 0, 4);
	else if (p[1])
		iet_scsi_invalid_param(req, 1, fls(p[1]) - 1);
	else if (!plen || plen > bs || plen + 4 != req->buf_len)
		iet_scsi_invalid_param(req, 2, -1);
	else
		block = kmalloc(bs, GFP_NOIO);
	if (block) {
		for (i = 0; i < bs; i++)
			block[i] = p[4 + i % plen];
		*passes = p[0] & 0x1f;
		*invert = p[0] & 0x80;
	} else if (req->status == SAM_STAT_GOOD) {
		req->status = SAM_STAT_BUSY;
	}
	kfree(p);
	return block;
}

static int sanitize_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	struct iet_sanitize *s = &lun->sanitize;
	u8 sa = req->cdb[1] & 0x1f, passes = 0, *block = NULL;
	bool immed = req->cdb[1] & 0x80, ause = req->cdb[1] & 0x20;
	bool invert = false;

	if (sa == SA_OVERWRITE) {
		block = overwrite_params(req, &passes, &invert);
		if (!block)
			return 0;
	}
	spin_lock(&s->lock);
	if (s->state == IET_SANITIZE_RUNNING) {
		refuse(req);		/* under the lock: as it is now */
		spin_unlock(&s->lock);
		kfree(block);
		return 0;
	}
	/*
	 * After a failure in the restricted mode only a sanitize that
	 * succeeds ends it: not EXIT FAILURE MODE, nor one asking for the
	 * unrestricted mode (SBC-4 4.11.4).
	 */
	if (s->state == IET_SANITIZE_FAILED && !s->ause &&
	    (ause || sa == SA_EXIT_FAILURE_MODE)) {
		spin_unlock(&s->lock);
		kfree(block);
		iet_scsi_invalid_field(req, 1, ause ? 5 : 4);
		return 0;
	}
	if (sa == SA_EXIT_FAILURE_MODE) {
		WRITE_ONCE(s->state, IET_SANITIZE_IDLE);
		spin_unlock(&s->lock);
		return 0;
	}
	WRITE_ONCE(s->progress, 0);
	WRITE_ONCE(s->state, IET_SANITIZE_RUNNING);
	s->ause = ause;
	s->sa = sa;
	s->passes = passes;
	s->invert = invert;
	s->block = block;
	s->waiter = NULL;
	/* The work item's: its LUN, and the target it names in the log. */
	kref_get(&lun->kref);
	kref_get(&lun->target->kref);
	spin_unlock(&s->lock);
	/*
	 * The operation holds the backing step by step, not for its length;
	 * and a command waiting for it holds up no other in the task set
	 * (SANITIZE is processed as if HEAD OF QUEUE). Both before it waits:
	 * from then on an abort may end it on another thread.
	 */
	iet_scsi_release_backing(req);
	if (!immed) {
		iet_tset_exit(req);
		/* Aborted already (abort_task() sets it, then looks here): now. */
		spin_lock(&s->lock);
		if (!READ_ONCE(container_of(req, struct iet_cmd, req)->aborted))
			s->waiter = req;
		immed = !s->waiter;
		spin_unlock(&s->lock);
	}
	queue_work(sanitize_wq, &s->work);
	return immed ? 0 : IET_ASYNC;
}

static void sanitize_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u8 sa = req->cdb[1] & 0x1f;
	u32 len = get_unaligned_be16(req->cdb + 7);

	/* No storage to sanitize (nullio): as if there were no SANITIZE. */
	if (!can_overwrite(lun))
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
	if (sa == SA_BLOCK_ERASE && !iet_sanitize_block_erase(lun))
		return iet_scsi_invalid_field(req, 1, 4);
	/* PARAMETER LIST LENGTH as the service action needs it. */
	if (sa == SA_OVERWRITE ? len < 5 || len > lun->block_size + 4 : len)
		return iet_scsi_invalid_field(req, 7, -1);
	if (sa != SA_EXIT_FAILURE_MODE && !iet_scsi_writable(req))
		return;
	req->blocking = true;
	req->execute = sanitize_execute;
	if (!len)
		return;
	req->data_out = true;
	req->xfer_len = len;
	req->buf_len = min(len, req->want_write ? req->edtl : 0);
}

#define CONTROL		0x04	/* NACA, refused: no ACA */
/*
 * Without IMMED it answers once the whole LUN is written: an hour's
 * timeout, where IMMED and REQUEST SENSE's progress are the way to wait.
 */
#define TIMEOUT		3600
/* IMMED, AUSE; ZNR (bit 6) is for zoned devices, refused. */
#define BYTE1(sa)	(0x80 | 0x20 | (sa))

const struct iet_opcode iet_sanitize_opcodes[] = {
	{ .op = SANITIZE, .sa = SA_OVERWRITE, .flags = IET_OP_SA, .len = 10,
	  .timeout = TIMEOUT, .parse = sanitize_parse,
	  .supported = can_overwrite,
	  .usage = { SANITIZE, BYTE1(SA_OVERWRITE), 0, 0, 0, 0, 0, 0xff, 0xff,
		     CONTROL } },
	{ .op = SANITIZE, .sa = SA_BLOCK_ERASE, .flags = IET_OP_SA, .len = 10,
	  .timeout = TIMEOUT, .parse = sanitize_parse,
	  .supported = iet_sanitize_block_erase,
	  .usage = { SANITIZE, BYTE1(SA_BLOCK_ERASE), 0, 0, 0, 0, 0, 0xff,
		     0xff, CONTROL } },
	{ .op = SANITIZE, .sa = SA_EXIT_FAILURE_MODE, .flags = IET_OP_SA,
	  .len = 10, .timeout = 10, .parse = sanitize_parse,
	  .supported = can_overwrite,
	  .usage = { SANITIZE, BYTE1(SA_EXIT_FAILURE_MODE), 0, 0, 0, 0, 0,
		     0xff, 0xff, CONTROL } },
};

const unsigned int iet_sanitize_nr_opcodes = ARRAY_SIZE(iet_sanitize_opcodes);
