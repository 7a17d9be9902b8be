// SPDX-License-Identifier: GPL-2.0
/*
 * Portal groups and ALUA (SPC-4 5.16). Each portal group of a target is one
 * target port, whose relative target port identifier is its TPGT, and one
 * target port group of that port, whose ID is the TPGT too; a session is of
 * the group it logged in through (RFC 7143: all its connections are). The
 * groups' asymmetric access states are set by the administrator (implicit
 * ALUA: TPGS 01b, no SET TARGET PORT GROUPS), reported by REPORT TARGET PORT
 * GROUPS, and enforced here on every command but those SPC-4 lets through.
 * A remote group is another node's port to the same logical units (an HA
 * pair): reported with the state its cluster gives it, never logged into.
 * The LUNs' backings are open only while an active group of the target's
 * own can reach them (an HA pair's standby node cannot open its replicated
 * device).
 */
#include <scsi/scsi_common.h>
#include <scsi/scsi_proto.h>

#include "iet.h"

static const u8 to_spc[__IET_ALUA_MAX] = {
	[IET_ALUA_ACTIVE_OPTIMIZED] = IET_ALUA_AO,
	[IET_ALUA_ACTIVE_NON_OPTIMIZED] = IET_ALUA_AN,
	[IET_ALUA_STANDBY] = IET_ALUA_S,
	[IET_ALUA_UNAVAILABLE] = IET_ALUA_U,
	[IET_ALUA_TRANSITIONING] = IET_ALUA_T,
};

u32 iet_alua_state_uapi(u8 state)
{
	u32 i;

	for (i = IET_ALUA_ACTIVE_OPTIMIZED; i < __IET_ALUA_MAX; i++)
		if (to_spc[i] == state)
			return i;
	return IET_ALUA_UNSPEC;
}

static const char *state_name(u8 state)
{
	switch (state) {
	case IET_ALUA_AO:
		return "active/optimized";
	case IET_ALUA_AN:
		return "active/non-optimized";
	case IET_ALUA_S:
		return "standby";
	case IET_ALUA_U:
		return "unavailable";
	default:
		return "transitioning";
	}
}

/*
 * The slot of a group, or -1: under target->lock to act on the slot;
 * without it, a hint (a target port that may just have gone).
 */
int iet_tpg_find(struct iet_target *target, u16 tag)
{
	int i;

	for (i = 0; i < IET_TPGS_MAX; i++)
		if (tag && READ_ONCE(target->tpgs[i].tag) == tag)
			return i;
	return -1;
}

/* Every I_T nexus hears of a change of state, on every LU (5.16.2.8). */
static void state_changed(struct iet_target *target)
{
	struct iet_session *session;
	unsigned long idx;
	void *lun;

	lockdep_assert_held(&target->lock);
	list_for_each_entry(session, &target->sessions, list)
		xa_for_each(&target->luns, idx, lun)
			iet_ua_add_session(session, idx, 0x2a, 0x06);
}

static bool state_active(u8 state)
{
	return state == IET_ALUA_AO || state == IET_ALUA_AN;
}

/*
 * Whether the target can be reached through an active portal group of its
 * own, which is when its LUNs' backings are open (lun.c). Groups change
 * under iet_mutex (and target->lock).
 */
bool iet_tpg_active(struct iet_target *target)
{
	int i;

	for (i = 0; i < IET_TPGS_MAX; i++) {
		struct iet_tpg *tpg = &target->tpgs[i];

		if (tpg->tag && !tpg->remote && state_active(tpg->state))
			return true;
	}
	return false;
}

/*
 * Every closed backing of the target opened, or none: the target is about
 * to become active. Those this opened close again if one cannot be opened
 * (at once: no command could use them yet).
 */
static int open_luns(struct iet_target *target, struct netlink_ext_ack *extack)
{
	struct iet_lun *lun, *undo;
	unsigned long idx, i;
	int ret;

	xa_for_each(&target->luns, idx, lun) {
		if (!lun->ops->storage)
			continue;
		ret = iet_lun_open(lun, extack);
		if (!ret)
			continue;
		pr_warn("target %u lun %lu: %s cannot be opened (%d): the portal group stays as it was\n",
			target->tid, idx, lun->path, ret);
		xa_for_each(&target->luns, i, undo) {
			if (i == idx)
				break;
			iet_lun_close(undo);
		}
		return ret;
	}
	return 0;
}

/* The target is no longer active: its backings close as their commands end. */
static void close_luns(struct iet_target *target)
{
	struct iet_lun *lun;
	unsigned long idx;

	xa_for_each(&target->luns, idx, lun)
		iet_lun_close(lun);
}

/*
 * Makes the group if it is new (the target's own, or another node's with
 * remote 1); changes its kind if remote says so and no session uses it;
 * sets its state unless state is UNSPEC. The LUNs' backings open before
 * the target becomes active and start closing once it no longer is
 * (target->luns_closing counts them until closed).
 */
int iet_tpg_set(struct iet_target *target, u16 tag, u32 state, int remote,
		struct netlink_ext_ack *extack)
{
	struct iet_tpg *tpg, want = { .tag = tag, .state = IET_ALUA_AO };
	bool was = iet_tpg_active(target), will = false, made = false;
	int i, j, ret;

	lockdep_assert_held(&iet_mutex);
	i = iet_tpg_find(target, tag);
	if (i < 0) {
		for (i = 0; i < IET_TPGS_MAX && target->tpgs[i].tag; i++)
			;
		if (i == IET_TPGS_MAX) {
			NL_SET_ERR_MSG(extack, "the target has 16 portal groups already");
			return -ENOSPC;
		}
		want.remote = remote == 1;
		/* Another node's, until it says otherwise, serves nothing. */
		if (want.remote)
			want.state = IET_ALUA_S;
		made = true;
	} else {
		want = target->tpgs[i];
		if (remote != IET_TPG_KEEP && remote != want.remote) {
			if (want.sessions) {
				NL_SET_ERR_MSG(extack, "sessions use the portal group");
				return -EBUSY;
			}
			want.remote = remote;
		}
	}
	if (state != IET_ALUA_UNSPEC)
		want.state = to_spc[state];
	for (j = 0; j < IET_TPGS_MAX; j++) {
		tpg = j == i ? &want : &target->tpgs[j];
		if (tpg->tag && !tpg->remote && state_active(tpg->state))
			will = true;
	}
	if (!was && will) {
		ret = open_luns(target, extack);
		if (ret)
			return ret;
	}

	mutex_lock(&target->lock);
	tpg = &target->tpgs[i];
	if (made) {
		WRITE_ONCE(tpg->implicit, false);
		WRITE_ONCE(tpg->state, want.remote ? IET_ALUA_S : IET_ALUA_AO);
		WRITE_ONCE(tpg->remote, want.remote);
		WRITE_ONCE(tpg->tag, tag);
		pr_info("target %u: portal group %u%s\n", target->tid, tag,
			want.remote ? ", another node's" : "");
	} else if (want.remote != tpg->remote) {
		WRITE_ONCE(tpg->remote, want.remote);
		pr_info("target %u: portal group %u is %s\n", target->tid, tag,
			want.remote ? "another node's" : "this node's");
	}
	if (want.state != tpg->state) {
		WRITE_ONCE(tpg->state, want.state);
		WRITE_ONCE(tpg->implicit, true);
		pr_info("target %u: portal group %u is %s\n", target->tid, tag,
			state_name(tpg->state));
		state_changed(target);
	}
	mutex_unlock(&target->lock);
	if (was && !will)
		close_luns(target);
	return 0;
}

int iet_tpg_del(struct iet_target *target, u16 tag,
		struct netlink_ext_ack *extack)
{
	bool was = iet_tpg_active(target);
	int i, ret = 0;

	lockdep_assert_held(&iet_mutex);
	mutex_lock(&target->lock);
	i = iet_tpg_find(target, tag);
	if (i < 0) {
		NL_SET_ERR_MSG(extack, "the target has no such portal group");
		ret = -ENOENT;
	} else if (target->tpgs[i].sessions) {
		NL_SET_ERR_MSG(extack, "sessions use the portal group");
		ret = -EBUSY;
	} else {
		WRITE_ONCE(target->tpgs[i].tag, 0);
		pr_info("target %u: portal group %u deleted\n", target->tid,
			tag);
	}
	mutex_unlock(&target->lock);
	if (!ret && was && !iet_tpg_active(target))
		close_luns(target);
	return ret;
}

/*
 * Not through an active group: NOT READY, LOGICAL UNIT NOT ACCESSIBLE, with
 * the state's ASCQ, for all but what the state lets through (5.16.2.4.4-6).
 */
void iet_alua_check(struct iet_scsi_req *req)
{
	struct iet_session *session = req->nexus;
	u8 state, flags = req->op_flags;

	if (req->status != SAM_STAT_GOOD || !session)
		return;
	state = READ_ONCE(session->target->tpgs[session->tpg].state);
	/* INQUIRY, REPORT LUNS and REQUEST SENSE are answered in any state. */
	if (state == IET_ALUA_AO || state == IET_ALUA_AN ||
	    (flags & (IET_OP_ALUA_ANY | IET_OP_ANY_LUN)))
		return;
	switch (state) {
	case IET_ALUA_S:
		if (!(flags & IET_OP_ALUA_STANDBY))
			iet_scsi_sense(req, NOT_READY, 0x04, 0x0b);
		break;
	case IET_ALUA_U:
		iet_scsi_sense(req, NOT_READY, 0x04, 0x0c);
		break;
	default:
		iet_scsi_sense(req, NOT_READY, 0x04, 0x0a);
		break;
	}
}

/* ---- REPORT TARGET PORT GROUPS (SPC-4 6.37) ----------------------------- */

#define RTPG_DESC	12	/* a group's descriptor with its one port */
#define RTPG_MAX	(8 + IET_TPGS_MAX * RTPG_DESC)

static int rtpg_execute(struct iet_scsi_req *req)
{
	struct iet_target *target = req->nexus->target;
	bool ext = (req->cdb[1] >> 5) == 1;
	u32 hlen = ext ? 8 : 4, off = hlen;
	u8 d[RTPG_MAX] = { 0 };
	int i;

	/*
	 * Without target->lock, which no command path should wait for: a
	 * group changed meanwhile is reported as it was or as it is.
	 */
	for (i = 0; i < IET_TPGS_MAX; i++) {
		struct iet_tpg *tpg = &target->tpgs[i];
		u16 tag = READ_ONCE(tpg->tag);

		if (!tag)
			continue;
		d[off] = READ_ONCE(tpg->state);
		/* T_SUP, U_SUP, S_SUP, AN_SUP, AO_SUP */
		d[off + 1] = 0x80 | 0x08 | 0x04 | 0x02 | 0x01;
		put_unaligned_be16(tag, d + off + 2);
		/* STATUS CODE: altered by an implicit transition */
		d[off + 5] = READ_ONCE(tpg->implicit) ? 0x02 : 0x00;
		d[off + 7] = 1;				/* TARGET PORT COUNT */
		put_unaligned_be16(tag, d + off + 10);		/* its RTPI */
		off += RTPG_DESC;
	}
	put_unaligned_be32(off - 4, d);			/* RETURN DATA LENGTH */
	if (ext)
		d[4] = 0x10;		/* FORMAT TYPE 001b; no transition time */
	iet_scsi_set_data(req, 0, d, off);
	req->data_len = min(req->data_len, off);
	return 0;
}

void iet_alua_rtpg_parse(struct iet_scsi_req *req)
{
	/* PARAMETER DATA FORMAT: length only (000b) or extended (001b). */
	if (req->cdb[1] >> 5 > 1)
		return iet_scsi_invalid_field(req, 1, 7);
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 6), RTPG_MAX);
	req->execute = rtpg_execute;
}
