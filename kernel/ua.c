// SPDX-License-Identifier: GPL-2.0
/*
 * Unit attentions (SAM-5 5.14), each I_T nexus its own: a short queue for
 * each LUN that has one pending, in an xarray indexed by the LUN, and one
 * at IET_LUN_ANY for what any one LUN reports once (REPORTED LUNS DATA HAS
 * CHANGED). Queueing one, peeking and taking cost the same however many
 * LUNs the target has: a login queues POWER ON for each of them, a reset
 * or a change of ALUA state one for each of every session, and each
 * command looks for its own.
 */
#include <linux/slab.h>
#include <linux/xarray.h>

#include "iet.h"

/*
 * Room for every distinct condition a LUN can have pending at once (ten
 * today: 29h/00h, 03h, 07h; 2Ah/01h, 03h, 04h, 05h, 06h, 09h; 3Fh/0Eh), so
 * that none is lost; 32 bytes with the count.
 */
#define IET_UA_QUEUE	15

struct iet_ua_queue {
	u8 nr;
	struct {
		u8 asc;
		u8 ascq;
	} ua[IET_UA_QUEUE];
};

void iet_ua_init(struct iet_session *session)
{
	xa_init(&session->ua);
}

void iet_ua_destroy(struct iet_session *session)
{
	struct iet_ua_queue *q;
	unsigned long lun;

	xa_for_each(&session->ua, lun, q)
		kfree(q);
	xa_destroy(&session->ua);
}

/* Queue a unit attention for one session, for lun or IET_LUN_ANY, once. */
void iet_ua_add_session(struct iet_session *session, u32 lun, u8 asc, u8 ascq)
{
	struct iet_ua_queue *q, *new = NULL;
	unsigned int i;

	xa_lock(&session->ua);
	q = xa_load(&session->ua, lun);
	if (!q) {
		xa_unlock(&session->ua);
		new = kzalloc(sizeof(*new), GFP_NOIO);
		if (!new)
			return;
		xa_lock(&session->ua);
		/* It may drop the lock: another may have made the queue. */
		q = __xa_cmpxchg(&session->ua, lun, NULL, new, GFP_NOIO);
		if (xa_is_err(q))
			goto out;
		if (!q) {
			q = new;
			new = NULL;
		}
	}
	for (i = 0; i < q->nr; i++)
		if (q->ua[i].asc == asc && q->ua[i].ascq == ascq)
			goto out;
	if (WARN_ON_ONCE(q->nr == ARRAY_SIZE(q->ua)))
		goto out;
	q->ua[q->nr].asc = asc;
	q->ua[q->nr].ascq = ascq;
	q->nr++;
out:
	xa_unlock(&session->ua);
	kfree(new);
}

/* Queue a unit attention for every session but one, for lun or any LUN. */
void iet_ua_add(struct iet_target *target, struct iet_session *except,
		u32 lun, u8 asc, u8 ascq)
{
	struct iet_session *session;

	mutex_lock(&target->lock);
	list_for_each_entry(session, &target->sessions, list)
		if (session != except)
			iet_ua_add_session(session, lun, asc, ascq);
	mutex_unlock(&target->lock);
}

/*
 * The unit attention lun would report next, left in place (QUERY
 * ASYNCHRONOUS EVENT); returns how many are pending for it.
 */
unsigned int iet_ua_peek(struct iet_session *session, u32 lun, u8 *asc,
			 u8 *ascq)
{
	struct iet_ua_queue *q, *any;
	unsigned int nr;

	if (xa_empty(&session->ua))
		return 0;
	xa_lock(&session->ua);
	q = xa_load(&session->ua, lun);
	any = xa_load(&session->ua, IET_LUN_ANY);
	nr = (q ? q->nr : 0) + (any ? any->nr : 0);
	if (q ?: any) {
		*asc = (q ?: any)->ua[0].asc;
		*ascq = (q ?: any)->ua[0].ascq;
	}
	xa_unlock(&session->ua);
	return nr;
}

/* The unit attention lun reports next, taken: its own, then any LUN's. */
bool iet_ua_take(struct iet_session *session, u32 lun, u8 *asc, u8 *ascq)
{
	struct iet_ua_queue *q, *empty = NULL;
	unsigned long index = lun;
	bool found;

	/* Most commands: nothing pending anywhere, and no lock taken. */
	if (xa_empty(&session->ua))
		return false;
	xa_lock(&session->ua);
	q = xa_load(&session->ua, index);
	if (!q) {
		index = IET_LUN_ANY;
		q = xa_load(&session->ua, index);
	}
	found = q;
	if (found) {
		*asc = q->ua[0].asc;
		*ascq = q->ua[0].ascq;
		q->nr--;
		memmove(q->ua, q->ua + 1, q->nr * sizeof(q->ua[0]));
		/* A queue is there only while something is pending in it. */
		if (!q->nr) {
			__xa_erase(&session->ua, index);
			empty = q;
		}
	}
	xa_unlock(&session->ua);
	kfree(empty);
	return found;
}
