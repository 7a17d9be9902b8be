// SPDX-License-Identifier: GPL-2.0
/*
 * The task sets of a logical unit, one per I_T nexus (SAM-5 8.6, TST=001b:
 * an initiator's ORDERED command orders its own commands, never another
 * initiator's, which it could stall), and what task attributes ask for:
 *  - SIMPLE (and untagged) commands run as they come, in any order;
 *  - an ORDERED command runs only once every command older than it has
 *    completed, and no command younger than it runs before it completes;
 *  - a HEAD OF QUEUE command runs at once, and counts as older than every
 *    command already waiting.
 *
 * The LUN keeps the tasks of all its nexuses in one list, each nexus's in
 * its order. A command enters it when it is delivered in CmdSN order,
 * before its data is in, and leaves when it completes or is released; older
 * and younger are that order. One that may not run yet when its turn to
 * execute comes is held, with the backend's reference, and resumed in an
 * I/O thread when the command that held it back leaves. Each nexus counts
 * its ORDERED commands (across its LUNs: only those of the same LUN, whose
 * count changes under the same lock, decide anything): a command of a nexus
 * with none enters, runs and leaves taking the lock once each and looking
 * at nothing else, whatever another nexus sends.
 */
#include "iet.h"

void iet_tset_init(struct iet_tset *ts)
{
	spin_lock_init(&ts->lock);
	INIT_LIST_HEAD(&ts->live);
}

void iet_tset_enter(struct iet_scsi_req *req)
{
	struct iet_tset *ts = &req->lun->tset;
	u8 attr = req->attr;

	spin_lock(&ts->lock);
	if (attr == ISCSI_ATTR_HEAD_OF_QUEUE) {
		list_add(&req->tset_entry, &ts->live);
	} else {
		list_add_tail(&req->tset_entry, &ts->live);
		if (attr == ISCSI_ATTR_ORDERED)
			atomic_inc(&req->nexus->ordered);
	}
	req->in_tset = true;
	spin_unlock(&ts->lock);
}

/*
 * May the command run, with what of its nexus is older than it? Under
 * ts->lock. An ORDERED one is its nexus's oldest; any other has no ORDERED
 * one of its nexus before it.
 */
static bool may_run(struct iet_tset *ts, struct iet_scsi_req *req)
{
	struct iet_scsi_req *t;

	if (req->attr == ISCSI_ATTR_HEAD_OF_QUEUE ||
	    !atomic_read(&req->nexus->ordered))
		return true;
	list_for_each_entry(t, &ts->live, tset_entry) {
		if (t == req)
			return true;
		if (t->nexus == req->nexus &&
		    (req->attr == ISCSI_ATTR_ORDERED ||
		     t->attr == ISCSI_ATTR_ORDERED))
			return false;
	}
	return true;
}

/*
 * May the command run now? If not, with hold it is held, to be resumed
 * (iet_scsi_resume_later()) when it may; without, it is asked again later.
 */
static bool tset_check(struct iet_scsi_req *req, bool hold)
{
	struct iet_tset *ts;
	bool go;

	if (!req->in_tset || req->tset_enabled)
		return true;
	ts = &req->lun->tset;
	spin_lock(&ts->lock);
	go = req->tset_aborted || may_run(ts, req);
	req->tset_enabled = go;
	req->tset_held = !go && hold;
	spin_unlock(&ts->lock);
	return go;
}

/* For a read the page cache may serve without an I/O thread. */
bool iet_tset_ready(struct iet_scsi_req *req)
{
	return tset_check(req, false);
}

/* At its turn to execute; false: it is held. */
bool iet_tset_start(struct iet_scsi_req *req)
{
	return tset_check(req, true);
}

/* Leaves the task set (once); commands it held back run. */
void iet_tset_exit(struct iet_scsi_req *req)
{
	struct iet_tset *ts;
	struct iet_scsi_req *t, *tmp;
	LIST_HEAD(resume);
	bool older = false;
	int ordered;

	if (!READ_ONCE(req->in_tset))
		return;
	ts = &req->lun->tset;
	spin_lock(&ts->lock);
	if (!req->in_tset) {
		spin_unlock(&ts->lock);
		return;
	}
	req->in_tset = false;
	list_del(&req->tset_entry);
	/* Only behind an ORDERED command, or as one, does a command wait. */
	ordered = atomic_read(&req->nexus->ordered);
	if (req->attr == ISCSI_ATTR_ORDERED)
		atomic_dec(&req->nexus->ordered);
	if (!ordered) {
		spin_unlock(&ts->lock);
		return;
	}
	/*
	 * Only its own nexus's commands waited for it: those before the
	 * first ORDERED one left, and that one if it is now the oldest.
	 */
	list_for_each_entry(t, &ts->live, tset_entry) {
		if (t->nexus != req->nexus)
			continue;
		if (t->tset_held && (t->attr != ISCSI_ATTR_ORDERED || !older)) {
			t->tset_held = false;
			t->tset_enabled = true;
			list_add_tail(&t->tset_resume, &resume);
		}
		if (t->attr == ISCSI_ATTR_ORDERED)
			break;		/* nothing younger runs before it ends */
		older = true;
	}
	spin_unlock(&ts->lock);
	/* Through the I/O threads: a chain of them never nests here. */
	list_for_each_entry_safe(t, tmp, &resume, tset_resume) {
		list_del(&t->tset_resume);
		iet_scsi_resume_later(t);
	}
}

/*
 * An aborted command waits for nobody: if it is held, it goes on now (to
 * be answered as aborted, or not at all), so the TMF that ended it is not
 * left waiting for the commands it waited for.
 */
void iet_tset_abort(struct iet_scsi_req *req)
{
	struct iet_tset *ts;
	bool held;

	if (!READ_ONCE(req->in_tset))
		return;
	ts = &req->lun->tset;
	spin_lock(&ts->lock);
	req->tset_aborted = true;
	held = req->in_tset && req->tset_held;
	if (held) {
		req->tset_held = false;
		req->tset_enabled = true;
	}
	spin_unlock(&ts->lock);
	if (held)
		iet_scsi_resume_later(req);
}
