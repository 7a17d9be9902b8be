// SPDX-License-Identifier: GPL-2.0
/*
 * The write gate of a LUN: what makes COMPARE AND WRITE and ORWRITE atomic
 * against every other command that writes the same blocks, from any
 * session (SBC-3 5.2: "an uninterrupted series of actions").
 *
 * The LUN is cut into regions of 1 MiB, hashed onto BITS_PER_LONG buckets.
 * A write counts itself in the buckets of its blocks while it runs,
 * lock-free; an exclusive command (one at a time per LUN) closes its
 * buckets, waits for the writes counted in them to end, and does its read,
 * compare or merge and write; a write that meets a closed bucket is parked
 * and runs again once the exclusive command is over. Two ranges sharing a
 * bucket by hashing only wait for each other a little longer.
 *
 * A write counts itself where it starts, in iet_scsi_execute(): in an I/O
 * thread or in the delivering thread for a non-blocking backend. So every
 * write an exclusive command waits for is already in its backend, and
 * none waits for an I/O thread the exclusive command holds.
 */
#include <linux/bitops.h>
#include <linux/sched.h>

#include "iet.h"

#define REGION_SHIFT	20		/* bytes */

void iet_wgate_init(struct iet_wgate *g)
{
	unsigned int i;

	mutex_init(&g->excl_lock);
	spin_lock_init(&g->lock);
	INIT_LIST_HEAD(&g->parked);
	init_waitqueue_head(&g->wq);
	for (i = 0; i < BITS_PER_LONG; i++)
		atomic_set(&g->writers[i], 0);
}

/* The buckets of nr blocks at lba; IET_WGATE_ALL is every block. */
static unsigned long buckets(struct iet_lun *lun, u64 lba, u64 nr)
{
	unsigned int shift = REGION_SHIFT - lun->blkbits;
	unsigned long mask = 0;
	u64 first, last, r;

	if (!nr)
		return 0;
	if (nr == IET_WGATE_ALL)
		return ~0UL;
	first = lba >> shift;
	last = (lba + nr - 1) >> shift;
	if (last - first >= BITS_PER_LONG - 1)
		return ~0UL;
	for (r = first; r <= last; r++)
		mask |= BIT(r % BITS_PER_LONG);
	return mask;
}

/* The writes of mask end; wake an exclusive command waiting for them. */
static void writers_put(struct iet_wgate *g, unsigned long mask)
{
	bool wake = false;
	unsigned int b;

	/* atomic_dec_and_test() orders the count before excl is read. */
	for_each_set_bit(b, &mask, BITS_PER_LONG)
		if (atomic_dec_and_test(&g->writers[b]) &&
		    READ_ONCE(g->excl) & BIT(b))
			wake = true;
	if (wake)
		wake_up(&g->wq);
}

/*
 * Before a command that writes runs (req->wnr blocks at req->wlba): true
 * if it may, false if it was parked behind an exclusive command, which
 * calls iet_scsi_resume() on it once it is over. Never sleeps.
 */
bool iet_wgate_enter(struct iet_scsi_req *req)
{
	struct iet_wgate *g = &req->lun->wgate;
	unsigned long mask = buckets(req->lun, req->wlba, req->wnr);
	bool parked;
	unsigned int b;

	for_each_set_bit(b, &mask, BITS_PER_LONG)
		atomic_inc(&g->writers[b]);
	/* Pairs with the barrier in iet_wgate_lock(): one sees the other. */
	smp_mb__after_atomic();
	if (likely(!(READ_ONCE(g->excl) & mask))) {
		req->wgate = mask;
		return true;
	}
	spin_lock(&g->lock);
	parked = g->excl & mask;
	if (parked) {
		writers_put(g, mask);
		list_add_tail(&req->wgate_entry, &g->parked);
	}
	spin_unlock(&g->lock);
	if (parked)
		return false;
	req->wgate = mask;
	return true;
}

/* Once the write has ended in its backend; any context. */
void iet_wgate_exit(struct iet_scsi_req *req)
{
	unsigned long mask = req->wgate;

	if (!mask)
		return;
	req->wgate = 0;
	writers_put(&req->lun->wgate, mask);
}

static bool writers_in(struct iet_wgate *g, unsigned long mask)
{
	unsigned int b;

	for_each_set_bit(b, &mask, BITS_PER_LONG)
		if (atomic_read(&g->writers[b]))
			return true;
	return false;
}

/*
 * Take the blocks [lba, lba + nr) for an exclusive command: once this
 * returns, no other write to them runs until iet_wgate_unlock(). In an
 * I/O thread; it sleeps.
 */
void iet_wgate_lock(struct iet_lun *lun, u64 lba, u64 nr)
{
	struct iet_wgate *g = &lun->wgate;
	unsigned long mask = buckets(lun, lba, nr);

	mutex_lock(&g->excl_lock);
	spin_lock(&g->lock);
	WRITE_ONCE(g->excl, mask);
	spin_unlock(&g->lock);
	/* Pairs with iet_wgate_enter(): excl is seen, or its count is. */
	smp_mb();
	wait_event(g->wq, !writers_in(g, mask));
}

void iet_wgate_unlock(struct iet_lun *lun)
{
	struct iet_wgate *g = &lun->wgate;
	struct iet_scsi_req *req, *tmp;
	LIST_HEAD(parked);

	spin_lock(&g->lock);
	WRITE_ONCE(g->excl, 0);
	list_splice_init(&g->parked, &parked);
	spin_unlock(&g->lock);
	mutex_unlock(&g->excl_lock);
	list_for_each_entry_safe(req, tmp, &parked, wgate_entry) {
		list_del_init(&req->wgate_entry);
		iet_scsi_resume(req);
	}
}
