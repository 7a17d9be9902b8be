// SPDX-License-Identifier: GPL-2.0
/*
 * Reservations of a logical unit: persistent reservations (SPC-4 5.13,
 * PERSISTENT RESERVE IN and OUT) and SPC-2 RESERVE / RELEASE, with SPC-4's
 * compatible reservation handling (5.13.3) between the two.
 *
 * A registration belongs to an I_T nexus: the initiator port (iSCSI name
 * and ISID) and the target port, so two sessions of one host are two
 * nexuses, and a session reinstated with its ISID keeps its registration.
 * The registrations and the reservation are one immutable state: PERSISTENT
 * RESERVE OUT builds the next one in a copy, persists it if APTPL asks for
 * it, and only then puts it in place. Commands see either state whole.
 *
 * An SPC-2 reservation belongs to a session, which it holds; it ends with
 * the session (I_T nexus loss), a LUN reset or a target reset.
 */
#include <linux/crc32c.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <scsi/scsi_common.h>

#include "iet.h"
#include "pr_parse.h"

static char *pr_dir = "/var/lib/iet/pr";
module_param(pr_dir, charp, 0444);
MODULE_PARM_DESC(pr_dir,
		 "where persistent reservations kept through power loss (APTPL) are written, a pair of files per logical unit");

/* 6.15.1: PERSISTENT RESERVE IN service actions */
#define PRI_READ_KEYS		0x00
#define PRI_READ_RESERVATION	0x01
#define PRI_REPORT_CAPS		0x02
#define PRI_READ_FULL_STATUS	0x03

/* 6.16.3 Table 177: reservation types */
#define PR_WE			0x1
#define PR_EA			0x3
#define PR_WE_RO		0x5
#define PR_EA_RO		0x6
#define PR_WE_AR		0x7
#define PR_EA_AR		0x8

/* Unit attentions (ASC 2Ah) */
#define UA_RES_PREEMPTED	0x03
#define UA_RES_RELEASED		0x04
#define UA_REG_PREEMPTED	0x05

static bool type_valid(u8 type)
{
	return type == PR_WE || type == PR_EA || type == PR_WE_RO ||
	       type == PR_EA_RO || type == PR_WE_AR || type == PR_EA_AR;
}

/* Every registrant holds an all-registrants reservation. */
static bool type_all_reg(u8 type)
{
	return type == PR_WE_AR || type == PR_EA_AR;
}

/* Registrants have access: registrants only and all registrants types. */
static bool type_reg_access(u8 type)
{
	return type != PR_WE && type != PR_EA;
}

/* Reads conflict for those without access: exclusive access types. */
static bool type_ea(u8 type)
{
	return type == PR_EA || type == PR_EA_RO || type == PR_EA_AR;
}

/* ---- nexuses and states ------------------------------------------------- */

/* An I_T nexus as registrations name it. */
struct pr_nexus {
	const char *initiator;
	u64 isid;
	u16 rtpi;
};

static void nexus_of(const struct iet_session *session, struct pr_nexus *n)
{
	n->initiator = session->initiator;
	n->isid = session->sid >> 16;
	n->rtpi = session->tpgt;
}

/* Every ISID a registration holds has 48 bits, or is IET_PR_ANY_ISID. */
static bool isid_valid(u64 isid)
{
	return isid == IET_PR_ANY_ISID || !(isid >> 48);
}

/* iSCSI names compare without case (RFC 3722: they are stored folded). */
static bool reg_matches(const struct iet_pr_reg *r, const struct pr_nexus *n)
{
	return (r->all_tg_pt || r->rtpi == n->rtpi) &&
	       (r->isid == IET_PR_ANY_ISID || r->isid == n->isid) &&
	       !strcasecmp(r->initiator, n->initiator);
}

static int find_reg(const struct iet_pr_state *st, const struct pr_nexus *n)
{
	int i;

	for (i = 0; i < st->nr; i++)
		if (!st->regs[i].gone && reg_matches(&st->regs[i], n))
			return i;
	return -1;
}

/* Does this registration hold the reservation (or share it)? */
static bool reg_holds(const struct iet_pr_state *st, int i)
{
	return st->reserved && i >= 0 &&
	       (type_all_reg(st->type) || st->regs[i].holder);
}

/*
 * Has this registration access through the reservation: it holds it, or
 * it is a registrant of a registrants only or all registrants one?
 */
static bool reg_has_access(const struct iet_pr_state *st, int i)
{
	return reg_holds(st, i) ||
	       (i >= 0 && st->reserved && type_reg_access(st->type));
}

static struct iet_pr_state *state_alloc(u32 cap)
{
	struct iet_pr_state *st;
	unsigned int flags = memalloc_noio_save();

	st = kvzalloc(struct_size(st, regs, cap), GFP_KERNEL);
	memalloc_noio_restore(flags);
	if (st)
		st->cap = cap;
	return st;
}

static void state_free(struct iet_pr_state *st)
{
	kvfree(st);
}

/* A copy of old with room for extra more registrations. */
static struct iet_pr_state *state_copy(const struct iet_pr_state *old,
				       u32 extra)
{
	struct iet_pr_state *st = state_alloc(old->nr + extra);

	if (!st)
		return NULL;
	st->generation = old->generation;
	st->nr = old->nr;
	st->reserved = old->reserved;
	st->type = old->type;
	st->aptpl = old->aptpl;
	memcpy(st->regs, old->regs, old->nr * sizeof(old->regs[0]));
	return st;
}

/* Drop the registrations marked gone. */
static void state_compact(struct iet_pr_state *st)
{
	u32 i, n = 0;

	for (i = 0; i < st->nr; i++)
		if (!st->regs[i].gone)
			st->regs[n++] = st->regs[i];
	st->nr = n;
	if (!n)
		st->reserved = false;
}

static struct iet_pr_reg *add_reg(struct iet_pr_state *st,
				  const struct pr_nexus *n, u64 key,
				  bool all_tg_pt)
{
	struct iet_pr_reg *r = &st->regs[st->nr++];

	memset(r, 0, sizeof(*r));
	r->key = key;
	r->isid = n->isid;
	r->rtpi = n->rtpi;
	r->all_tg_pt = all_tg_pt;
	strscpy(r->initiator, n->initiator, sizeof(r->initiator));
	return r;
}

/* Remove a registration; its reservation goes with it unless shared. */
static void remove_reg(struct iet_pr_state *st, int i)
{
	if (st->regs[i].holder && !type_all_reg(st->type))
		st->reserved = false;
	st->regs[i].holder = false;
	st->regs[i].gone = true;
}

static void release(struct iet_pr_state *st)
{
	u32 i;

	st->reserved = false;
	for (i = 0; i < st->nr; i++)
		st->regs[i].holder = false;
}

static u32 live_regs(const struct iet_pr_state *st)
{
	u32 i, n = 0;

	for (i = 0; i < st->nr; i++)
		n += !st->regs[i].gone;
	return n;
}

/* ---- what commands may do ----------------------------------------------- */

static bool is_release(u8 op)
{
	return op == RELEASE_6 || op == RELEASE_10;
}

/*
 * SBC-3 4.17 Table 13: START STOP UNIT with START=1 and POWER CONDITION=0,
 * and PREVENT ALLOW MEDIUM REMOVAL with PREVENT=0, pass every reservation.
 */
static bool allowed_special(const u8 *cdb)
{
	if (cdb[0] == START_STOP)
		return (cdb[4] & 0xf1) == 0x01;
	if (cdb[0] == ALLOW_MEDIUM_REMOVAL)
		return !(cdb[4] & 0x03);
	return false;
}

/* A command of the flags f from nexus; under pr->lock (the spinlock). */
static bool conflicts_for(struct iet_pr *pr, struct iet_session *nexus, u8 f)
{
	const struct iet_pr_state *st = pr->state;
	struct pr_nexus n;

	/*
	 * SPC-2: only INQUIRY, REPORT LUNS, REQUEST SENSE (and RELEASE,
	 * conflicts()) pass another nexus's reservation.
	 */
	if (pr->scsi2 && pr->scsi2 != nexus)
		return !(f & IET_OP_ANY_LUN);
	if (!st->reserved ||
	    f & (IET_OP_ANY_LUN | IET_OP_PR_FREE | IET_OP_PR_OWN))
		return false;
	nexus_of(nexus, &n);
	if (reg_has_access(st, find_reg(st, &n)))
		return false;
	/* SPC-4 Table 63, SBC-3 Table 13: what passes write exclusive. */
	return !(f & IET_OP_PR_READ) || type_ea(st->type);
}

/* Under pr->lock. RELEASE against an SPC-2 reservation then does nothing. */
static bool conflicts(struct iet_pr *pr, const struct iet_scsi_req *req)
{
	if (pr->scsi2 && pr->scsi2 != req->nexus)
		return !is_release(req->cdb[0]) &&
		       conflicts_for(pr, req->nexus, req->op_flags);
	return !allowed_special(req->cdb) &&
	       conflicts_for(pr, req->nexus, req->op_flags);
}

/*
 * Whether the reservations of lun let nexus read it (or write it), as they
 * would a READ or a WRITE of its own: for the LUNs a command reaches
 * besides the one it is addressed to (EXTENDED COPY's copy targets).
 */
bool iet_pr_allows(struct iet_lun *lun, struct iet_session *nexus, bool write)
{
	struct iet_pr *pr = &lun->pr;
	bool conflict;

	if (!READ_ONCE(pr->active))
		return true;
	spin_lock(&pr->lock);
	conflict = conflicts_for(pr, nexus, write ? 0 : IET_OP_PR_READ);
	spin_unlock(&pr->lock);
	return !conflict;
}

/*
 * RESERVATION CONFLICT for a command the reservations of its LUN forbid
 * to its nexus, checked as it runs (after unit attentions).
 */
void iet_pr_check(struct iet_scsi_req *req)
{
	struct iet_pr *pr;
	bool conflict;

	if (!req->lun || req->status != SAM_STAT_GOOD)
		return;
	pr = &req->lun->pr;
	if (!READ_ONCE(pr->active))
		return;
	spin_lock(&pr->lock);
	conflict = conflicts(pr, req);
	spin_unlock(&pr->lock);
	if (conflict) {
		req->status = SAM_STAT_RESERVATION_CONFLICT;
		req->execute = NULL;
		req->execute_nowait = NULL;
	}
}

static void update_active(struct iet_pr *pr)
{
	WRITE_ONCE(pr->active, pr->state->reserved || pr->scsi2);
}

/* The next state in place, under pr->mutex; the old one is freed. */
static void state_install(struct iet_pr *pr, struct iet_pr_state *st)
{
	struct iet_pr_state *old;

	spin_lock(&pr->lock);
	old = pr->state;
	pr->state = st;
	update_active(pr);
	spin_unlock(&pr->lock);
	state_free(old);
}

/* ---- unit attentions ---------------------------------------------------- */

/*
 * REGISTRATIONS PREEMPTED, RESERVATIONS RELEASED and the like, for the
 * sessions of the registrations marked with one (ua[i], the ASCQ), except
 * the session that caused them (if any).
 */
static void notify(struct iet_lun *lun, struct iet_session *except,
		   const struct iet_pr_state *st, const u8 *ua)
{
	struct iet_target *target = lun->target;
	struct iet_session *session;
	struct pr_nexus n;
	u32 i;

	mutex_lock(&target->lock);
	list_for_each_entry(session, &target->sessions, list) {
		if (session == except)
			continue;
		nexus_of(session, &n);
		for (i = 0; i < st->nr; i++) {
			if (ua[i] && reg_matches(&st->regs[i], &n)) {
				iet_ua_add_session(session, lun->lun, 0x2a,
						   ua[i]);
				break;
			}
		}
	}
	mutex_unlock(&target->lock);
}

/* ---- kept through power loss -------------------------------------------- */

/*
 * A logical unit's state is written whole, as a record, to one of two
 * files, PR_DIR/NAA-ID.a and PR_DIR/NAA-ID.b, always the one that does not
 * hold the newest record, then synced; the record carries a sequence
 * number and a CRC. A record cut by a power loss fails its CRC, and the
 * other file's is the state. NAA is the LUN's designator of VPD 0x83 in
 * hex, ID a hash of the target's name, the LUN number and its path: LUNs
 * of one ScsiId (the same disk through two targets, or ietd's ScsiId
 * derived from the target and LUN number for another volume added at a
 * number that was free again) each have their own records. Records of an
 * older module, named NAA.a and NAA.b, are read where a LUN has none of
 * its own yet, and emptied once it has.
 */
#define PR_MAGIC	0x52544549	/* "IETR" */
#define PR_VERSION	1

struct pr_file_reg {
	__le64 key;
	__le64 isid;
	__le16 rtpi;
	u8 flags;			/* bit 0 ALL_TG_PT, bit 1 holder */
	u8 reserved[5];
	char initiator[IET_NAME_MAX + 1];
} __packed;

struct pr_file {
	__le32 magic;
	__le16 version;
	__le16 nr;
	__le64 seq;
	__le32 crc;			/* crc32c of the record, this as 0 */
	u8 reserved_flag;		/* a reservation is held */
	u8 type;
	u8 pad[2];
	struct pr_file_reg regs[];
} __packed;

/* The path of a slot's file (kfree() it), or NULL; NAA.slot if old. */
static char *pr_path(struct iet_lun *lun, char slot, bool old)
{
	struct iet_target *target = lun->target;
	__le32 nr = cpu_to_le32(lun->lun);
	u8 naa[IET_NAA_LEN];
	u32 lo, hi;

	iet_lun_naa(lun, naa);
	if (old)
		return kasprintf(GFP_NOIO, "%s/%8phN.%c", pr_dir, naa, slot);
	/* Each field with its NUL: no two tuples hash the same bytes. */
	lo = crc32c(0, target->name, strlen(target->name) + 1);
	lo = crc32c(lo, &nr, sizeof(nr));
	lo = crc32c(lo, lun->path, strlen(lun->path) + 1);
	hi = crc32c(~lo, lun->path, strlen(lun->path) + 1);
	hi = crc32c(hi, target->name, strlen(target->name) + 1);
	return kasprintf(GFP_NOIO, "%s/%8phN-%08x%08x.%c", pr_dir, naa, hi, lo,
			 slot);
}

static int write_record(struct iet_lun *lun, char slot, bool old,
			const void *rec, size_t len)
{
	char *path = pr_path(lun, slot, old);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int ret;

	if (!path)
		return -ENOMEM;
	/* As root: a link planted where the record goes is not followed. */
	f = filp_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_LARGEFILE, 0600);
	kfree(path);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_write(f, rec, len, &pos);
	ret = n < 0 ? n : n != len ? -EIO : vfs_fsync(f, 0);
	filp_close(f, NULL);
	if (ret)
		return ret;
	/* A file just made must still be there after a power loss. */
	f = filp_open(pr_dir, O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	ret = vfs_fsync(f, 0);
	filp_close(f, NULL);
	return ret;
}

/*
 * The LUN's state came from an older module's records and is now in its
 * own: those become empty, so that none of it comes back, should the LUN
 * ever have no record of its own again (a Path spelt otherwise).
 */
static void forget_legacy(struct iet_lun *lun)
{
	struct pr_file rec = {
		.magic = cpu_to_le32(PR_MAGIC),
		.version = cpu_to_le16(PR_VERSION),
		.seq = cpu_to_le64(lun->pr.seq),
	};
	char slot;

	rec.crc = cpu_to_le32(crc32c(~0, &rec, sizeof(rec)));
	for (slot = 'a'; slot <= 'b'; slot++)
		if (write_record(lun, slot, true, &rec, sizeof(rec)))
			pr_warn("target %u lun %u: the older module's record %c could not be emptied\n",
				lun->target->tid, lun->lun, slot);
	lun->pr.legacy = false;
}

/* Persist st (an empty record for a state not to be kept), under mutex. */
static int persist(struct iet_lun *lun, const struct iet_pr_state *st)
{
	struct iet_pr *pr = &lun->pr;
	u32 nr = st->aptpl ? live_regs(st) : 0, i, k = 0;
	size_t len = sizeof(struct pr_file) + nr * sizeof(struct pr_file_reg);
	unsigned int flags = memalloc_noio_save();
	struct pr_file *rec;
	int ret;

	rec = kvzalloc(len, GFP_KERNEL);
	memalloc_noio_restore(flags);
	if (!rec)
		return -ENOMEM;
	rec->magic = cpu_to_le32(PR_MAGIC);
	rec->version = cpu_to_le16(PR_VERSION);
	rec->nr = cpu_to_le16(nr);
	rec->seq = cpu_to_le64(pr->seq + 1);
	rec->reserved_flag = nr && st->reserved;
	rec->type = st->type;
	for (i = 0; i < st->nr && k < nr; i++) {
		const struct iet_pr_reg *r = &st->regs[i];
		struct pr_file_reg *fr = &rec->regs[k];

		if (r->gone)
			continue;
		fr->key = cpu_to_le64(r->key);
		fr->isid = cpu_to_le64(r->isid);
		fr->rtpi = cpu_to_le16(r->rtpi);
		fr->flags = r->all_tg_pt | r->holder << 1;
		strscpy(fr->initiator, r->initiator, sizeof(fr->initiator));
		k++;
	}
	rec->crc = cpu_to_le32(crc32c(~0, rec, len));
	ret = write_record(lun, pr->slot == 'a' ? 'b' : 'a', false, rec, len);
	kvfree(rec);
	if (ret) {
		pr_warn("target %u lun %u: cannot keep persistent reservations in %s: error %d\n",
			lun->target->tid, lun->lun, pr_dir, ret);
		return ret;
	}
	pr->seq++;
	pr->slot = pr->slot == 'a' ? 'b' : 'a';
	pr->persisted = nr > 0;
	if (pr->legacy)
		forget_legacy(lun);
	return 0;
}

/*
 * A record read from a slot (an older module's if old), checked; NULL if
 * there is none whole.
 */
static struct pr_file *read_record(struct iet_lun *lun, char slot, bool old)
{
	size_t max = sizeof(struct pr_file) +
		     IET_PR_REGS_MAX * sizeof(struct pr_file_reg);
	char *path = pr_path(lun, slot, old);
	struct pr_file *rec;
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	u32 crc;

	if (!path)
		return NULL;
	f = filp_open(path, O_RDONLY | O_NOFOLLOW | O_LARGEFILE, 0);
	if (IS_ERR(f)) {
		kfree(path);
		return NULL;
	}
	rec = kvzalloc(max, GFP_KERNEL);
	n = rec ? kernel_read(f, rec, max, &pos) : -ENOMEM;
	filp_close(f, NULL);
	if (n < (ssize_t)sizeof(*rec) || le32_to_cpu(rec->magic) != PR_MAGIC ||
	    le16_to_cpu(rec->version) != PR_VERSION ||
	    le16_to_cpu(rec->nr) > IET_PR_REGS_MAX ||
	    n != sizeof(*rec) + le16_to_cpu(rec->nr) * sizeof(rec->regs[0]))
		goto bad;
	crc = le32_to_cpu(rec->crc);
	rec->crc = 0;
	if (crc32c(~0, rec, n) != crc)
		goto bad;
	kfree(path);
	return rec;
bad:
	if (n > 0)
		pr_warn("target %u lun %u: %s: not a whole record, ignored\n",
			lun->target->tid, lun->lun, path);
	kfree(path);
	kvfree(rec);
	return NULL;
}

/* The newest whole record becomes the state (as_kernel()). */
static int restore(struct iet_lun *lun, unsigned long unused)
{
	struct iet_pr *pr = &lun->pr;
	struct pr_file *a = read_record(lun, 'a', false);
	struct pr_file *b = read_record(lun, 'b', false);
	struct pr_file *rec;
	struct iet_pr_state *st;
	u32 i, nr;
	int ret = 0;

	/*
	 * No whole record of its own: an older module's, if any. The next
	 * write goes to the LUN's own files, which then are the state.
	 */
	if (!a && !b) {
		a = read_record(lun, 'a', true);
		b = read_record(lun, 'b', true);
		pr->legacy = a || b;
	}

	/* The next write goes to the other file (to .a if there is none). */
	if (a && (!b || le64_to_cpu(a->seq) > le64_to_cpu(b->seq))) {
		rec = a;
		pr->slot = 'a';
	} else {
		rec = b;
		pr->slot = 'b';
	}
	if (!rec)
		goto out;
	pr->seq = le64_to_cpu(rec->seq);
	nr = le16_to_cpu(rec->nr);
	if (!nr)
		goto out;
	st = state_alloc(nr);
	if (!st) {
		ret = -ENOMEM;
		goto out;
	}
	st->aptpl = true;
	st->reserved = rec->reserved_flag && type_valid(rec->type);
	st->type = rec->type;
	for (i = 0; i < nr; i++) {
		struct iet_pr_reg *r = &st->regs[st->nr];
		const struct pr_file_reg *fr = &rec->regs[i];

		/*
		 * Not one a PR OUT could have made: the ISID must fit the 12
		 * digits of a TransportID READ FULL STATUS writes.
		 */
		if (!memchr(fr->initiator, 0, sizeof(fr->initiator)) ||
		    !fr->initiator[0] || !fr->key ||
		    !isid_valid(le64_to_cpu(fr->isid)))
			continue;
		r->key = le64_to_cpu(fr->key);
		r->isid = le64_to_cpu(fr->isid);
		r->rtpi = le16_to_cpu(fr->rtpi);
		r->all_tg_pt = fr->flags & 0x01;
		r->holder = fr->flags & 0x02;
		strscpy(r->initiator, fr->initiator, sizeof(r->initiator));
		st->nr++;
	}
	state_compact(st);
	/* A reservation of one holder needs that holder. */
	if (st->reserved && !type_all_reg(st->type)) {
		for (i = 0; i < st->nr && !st->regs[i].holder; i++)
			;
		st->reserved = i < st->nr;
	}
	pr->persisted = true;
	state_install(pr, st);
	pr_info("target %u lun %u: %u persistent registrations restored%s\n",
		lun->target->tid, lun->lun, st->nr,
		st->reserved ? ", and a reservation" : "");
out:
	kvfree(a);
	kvfree(b);
	return ret;
}

/*
 * Run fn(lun, arg) in a work item, waited for: files under pr_dir are then
 * opened with the kernel's credentials and root, whoever asked.
 */
struct kernel_work {
	struct work_struct work;
	struct iet_lun *lun;
	int (*fn)(struct iet_lun *lun, unsigned long arg);
	unsigned long arg;
	int ret;
};

static void kernel_work_fn(struct work_struct *work)
{
	struct kernel_work *w = container_of(work, struct kernel_work, work);

	w->ret = w->fn(w->lun, w->arg);
}

static int as_kernel(struct iet_lun *lun,
		     int (*fn)(struct iet_lun *lun, unsigned long arg),
		     unsigned long arg)
{
	struct kernel_work w = { .lun = lun, .fn = fn, .arg = arg };

	INIT_WORK_ONSTACK(&w.work, kernel_work_fn);
	iet_queue_work(&w.work);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	return w.ret;
}

/* ---- the LUN's life ----------------------------------------------------- */

int iet_pr_init(struct iet_lun *lun)
{
	struct iet_pr *pr = &lun->pr;

	mutex_init(&pr->mutex);
	spin_lock_init(&pr->lock);
	pr->slot = 'b';
	pr->state = state_alloc(0);
	if (!pr->state)
		return -ENOMEM;
	/* Restored before the LUN takes a command. */
	return as_kernel(lun, restore, 0);
}

void iet_pr_destroy(struct iet_lun *lun)
{
	struct iet_pr *pr = &lun->pr;

	if (pr->scsi2)
		iet_session_put(pr->scsi2);
	state_free(pr->state);
}

/* SPC-2 reservations end: the holder's nexus is lost (SAM-5 6.3.4). */
static void scsi2_release(struct iet_pr *pr)
{
	struct iet_session *s;

	spin_lock(&pr->lock);
	s = pr->scsi2;
	pr->scsi2 = NULL;
	update_active(pr);
	spin_unlock(&pr->lock);
	if (s)
		iet_session_put(s);
}

/* A LUN reset or a target reset: the SPC-2 reservation ends. */
/*
 * A reset ends the SPC-2 reservation under pr->lock alone: it runs in the
 * read thread, which must not wait for pr->mutex while a PERSISTENT RESERVE
 * OUT holding it syncs its record. A RESERVE or a PR OUT that decided under
 * the mutex with the reservation as it was decided before the reset.
 */
void iet_pr_reset(struct iet_lun *lun)
{
	scsi2_release(&lun->pr);
}

/*
 * The SPC-2 reservations on a target's LUNs end: those holder's session
 * held (I_T nexus loss), or all of them (holder NULL: a target reset). For
 * a holder, under pr->mutex whatever scsi2 says now: a RESERVE of its that
 * saw the session still linked may be about to take the reservation, and
 * must be done first (it checks unlinked, set before this, under the same
 * mutex).
 */
void iet_pr_release_spc2(struct iet_target *target,
			 struct iet_session *holder)
{
	struct iet_lun *lun;
	unsigned long idx;
	void *entry;

	xa_for_each(&target->luns, idx, entry) {
		lun = iet_lun_get(target, idx);
		if (!lun)
			continue;
		if (!holder) {
			scsi2_release(&lun->pr);
		} else {
			mutex_lock(&lun->pr.mutex);
			if (lun->pr.scsi2 == holder)
				scsi2_release(&lun->pr);
			mutex_unlock(&lun->pr.mutex);
		}
		iet_lun_put(lun);
	}
}

/* ---- RESERVE and RELEASE (SPC-2 7.21, 7.22; SPC-4 5.13.3) --------------- */

/*
 * With registrations, RESERVE and RELEASE do nothing (GOOD) for a nexus
 * with access to the persistent reservation, and conflict for others.
 */
static int reserve_execute(struct iet_scsi_req *req)
{
	struct iet_pr *pr = &req->lun->pr;
	const struct iet_pr_state *st;
	bool reserve = !is_release(req->cdb[0]);
	struct pr_nexus n;
	int i;

	nexus_of(req->nexus, &n);
	mutex_lock(&pr->mutex);
	st = pr->state;
	if (st->nr) {
		i = find_reg(st, &n);
		if (!reg_has_access(st, i))
			req->status = SAM_STAT_RESERVATION_CONFLICT;
	} else if (pr->scsi2 && pr->scsi2 != req->nexus) {
		/* Another's: RESERVE conflicts, RELEASE does nothing. */
		if (reserve)
			req->status = SAM_STAT_RESERVATION_CONFLICT;
	} else if (reserve && !pr->scsi2) {
		/* Not for a session on its way out: it would never end. */
		if (!READ_ONCE(req->nexus->unlinked)) {
			kref_get(&req->nexus->kref);
			spin_lock(&pr->lock);
			pr->scsi2 = req->nexus;
			update_active(pr);
			spin_unlock(&pr->lock);
		}
	} else if (!reserve && pr->scsi2) {
		scsi2_release(pr);
	}
	mutex_unlock(&pr->mutex);
	return 0;
}

static void reserve_parse(struct iet_scsi_req *req)
{
	req->blocking = true;
	req->execute = reserve_execute;
}

/* ---- PERSISTENT RESERVE IN (SPC-4 6.15) --------------------------------- */

/* The longest: name, ",i,0x", 12 digits, NUL, padding. */
#define PR_TPID_MAX	(4 + ALIGN(IET_NAME_MAX + 18, 4))

/*
 * An iSCSI TransportID of an initiator port (7.6.4.6, format 01b):
 * "name,i,0xISID", NUL-terminated and padded to 4 bytes, in the
 * PR_TPID_MAX bytes at d; its length.
 */
static u32 transport_id(const struct iet_pr_reg *r, u8 *d)
{
	u32 len;

	if (r->isid == IET_PR_ANY_ISID) {
		len = strlen(r->initiator) + 1;
		d[0] = ISCSI_PROTO_ID;
		memcpy(d + 4, r->initiator, len);
	} else {
		/*
		 * Bounded even so: an ISID past 48 bits, whatever let it in,
		 * would print more than 12 digits.
		 */
		len = scnprintf((char *)d + 4, PR_TPID_MAX - 4,
				"%s,i,0x%012llx", r->initiator, r->isid) + 1;
		d[0] = 0x40 | ISCSI_PROTO_ID;
	}
	len = max_t(u32, ALIGN(len, 4), PR_TPID_MIN);
	put_unaligned_be16(len, d + 2);
	return 4 + len;
}

static int pr_in_execute(struct iet_scsi_req *req)
{
	struct iet_pr *pr = &req->lun->pr;
	u32 alloc = req->data_len, off = 8, i;
	const struct iet_pr_state *st;
	struct pr_nexus n;
	u8 d[24 + PR_TPID_MAX];
	u32 len;

	nexus_of(req->nexus, &n);
	mutex_lock(&pr->mutex);
	st = pr->state;
	memset(d, 0, 8);
	put_unaligned_be32(st->generation, d);
	switch (req->cdb[1] & 0x1f) {
	case PRI_READ_KEYS:
		for (i = 0; i < st->nr; i++, off += 8) {
			put_unaligned_be64(st->regs[i].key, d + 8);
			iet_scsi_set_data(req, off, d + 8, 8);
		}
		break;
	case PRI_READ_RESERVATION:
		if (!st->reserved)
			break;
		memset(d + 8, 0, 16);
		/* An all registrants reservation has no one key (5.13.10). */
		for (i = 0; i < st->nr && !type_all_reg(st->type); i++)
			if (st->regs[i].holder)
				put_unaligned_be64(st->regs[i].key, d + 8);
		d[8 + 13] = st->type;		/* LU_SCOPE */
		iet_scsi_set_data(req, off, d + 8, 16);
		off += 16;
		break;
	case PRI_READ_FULL_STATUS:
		for (i = 0; i < st->nr; i++) {
			const struct iet_pr_reg *r = &st->regs[i];

			memset(d, 0, sizeof(d));
			put_unaligned_be64(r->key, d);
			d[12] = r->all_tg_pt << 1 | reg_holds(st, i);
			if (reg_holds(st, i))
				d[13] = st->type;
			put_unaligned_be16(r->all_tg_pt ? 0 : r->rtpi, d + 18);
			len = transport_id(r, d + 24);
			put_unaligned_be32(len, d + 20);
			iet_scsi_set_data(req, off, d, 24 + len);
			off += 24 + len;
		}
		memset(d, 0, 8);
		put_unaligned_be32(st->generation, d);
		break;
	}
	mutex_unlock(&pr->mutex);
	put_unaligned_be32(off - 8, d + 4);
	iet_scsi_set_data(req, 0, d, 8);
	req->data_len = min(alloc, off);
	return 0;
}

static int report_caps_execute(struct iet_scsi_req *req)
{
	struct iet_pr *pr = &req->lun->pr;
	u8 d[8] = { 0, 8 };

	/* CRH, SIP_C, ATP_C, PTPL_C */
	d[2] = 0x10 | 0x08 | 0x04 | 0x01;
	/* TMV; ALLOW COMMANDS 001b (TEST UNIT READY passes); PTPL_A */
	spin_lock(&pr->lock);
	d[3] = 0x80 | 0x10 | pr->state->aptpl;
	spin_unlock(&pr->lock);
	/* WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX; EX_AC_AR */
	d[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02;
	d[5] = 0x01;
	iet_scsi_set_data(req, 0, d, sizeof(d));
	req->data_len = min_t(u32, req->data_len, sizeof(d));
	return 0;
}

static void pr_in_parse(struct iet_scsi_req *req)
{
	u8 sa = req->cdb[1] & 0x1f;
	u32 alloc = get_unaligned_be16(req->cdb + 7);

	if (sa > PRI_READ_FULL_STATUS)
		return iet_scsi_invalid_field(req, 1, 4);
	if (sa == PRI_REPORT_CAPS) {
		iet_scsi_data_in(req, alloc, 8);
		req->execute = report_caps_execute;
		return;
	}
	iet_scsi_data_in(req, alloc, 8 + IET_PR_REGS_MAX * (24 + PR_TPID_MAX));
	req->blocking = true;
	req->execute = pr_in_execute;
}

/* ---- PERSISTENT RESERVE OUT (SPC-4 6.16, 5.13.5 to 5.13.11) ------------- */

struct pr_out {
	u8 sa;
	u8 type;
	struct iet_pr_params pl;	/* the parameter list's fields */
	struct pr_nexus me;
	int i;				/* my registration, or -1 */
};

/* The sense data of what the parse found wrong in the parameter list. */
static void pr_fault_sense(struct iet_scsi_req *req,
			   const struct iet_pr_fault *f)
{
	if (f->length)
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
	else
		iet_scsi_invalid_param(req, f->byte, f->bit);
}

/*
 * Room for one more registration of initiator: in the LUN's table, and
 * within its share, so that one initiator (all its ports, SPEC_I_PT lists
 * of made-up ISIDs) cannot take every registration from the others.
 */
static bool reg_room(const struct iet_pr_state *st, const char *initiator)
{
	u32 i, mine = 0;

	for (i = 0; i < st->nr; i++)
		mine += !st->regs[i].gone &&
			!strcasecmp(st->regs[i].initiator, initiator);
	return st->nr < IET_PR_REGS_MAX && mine < IET_PR_REGS_PER_NAME;
}

/* REGISTER and REGISTER AND IGNORE EXISTING KEY (5.13.7). */
static int do_register(struct iet_scsi_req *req, struct pr_out *o,
		       struct iet_pr_state *st, u8 *ua)
{
	const struct iet_pr_params *pl = &o->pl;
	char name[IET_NAME_MAX + 1];
	struct iet_pr_fault f;
	struct pr_nexus n;
	u32 off, len;
	int j;

	if (o->i < 0) {
		if (o->sa == PRO_REGISTER && pl->key)
			return SAM_STAT_RESERVATION_CONFLICT;
		if (!pl->sa_key)
			return -ENODATA;	/* GOOD, nothing changes */
		if (!reg_room(st, o->me.initiator))
			goto no_room;
		add_reg(st, &o->me, pl->sa_key, pl->all_tg_pt);
		/* SPEC_I_PT: the ports named, on this target port too. */
		for (off = 0; off < pl->tpids_len; off += len) {
			len = iet_pr_parse_tpid(pl->tpids + off,
						pl->tpids_len - off,
						pl->tpids_off + off, name,
						&n.isid, &f);
			/* All passed iet_pr_count_tpids(); 0 must not loop. */
			if (!len) {
				pr_fault_sense(req, &f);
				return SAM_STAT_CHECK_CONDITION;
			}
			n.initiator = name;
			n.rtpi = o->me.rtpi;
			j = find_reg(st, &n);
			if (j >= 0 && st->regs[j].key != pl->sa_key) {
				iet_scsi_invalid_param(req, pl->tpids_off + off,
						       7);
				return SAM_STAT_CHECK_CONDITION;
			}
			if (j >= 0)
				continue;
			if (!reg_room(st, n.initiator))
				goto no_room;
			add_reg(st, &n, pl->sa_key, pl->all_tg_pt);
		}
	} else {
		if (o->sa == PRO_REGISTER && pl->key != st->regs[o->i].key)
			return SAM_STAT_RESERVATION_CONFLICT;
		if (pl->spec_i_pt) {
			iet_scsi_invalid_param(req, 20, 3);
			return SAM_STAT_CHECK_CONDITION;
		}
		if (pl->sa_key) {
			st->regs[o->i].key = pl->sa_key;
		} else {
			/*
			 * Unregistered, a registrants only reservation's
			 * holder releases it, and every other registrant
			 * hears of it (5.13.11.2.3).
			 */
			bool told = reg_holds(st, o->i) &&
				    (st->type == PR_WE_RO ||
				     st->type == PR_EA_RO);

			remove_reg(st, o->i);
			for (j = 0; told && j < st->nr; j++)
				if (!st->regs[j].gone)
					ua[j] = UA_RES_RELEASED;
		}
	}
	st->aptpl = pl->aptpl;
	st->generation++;
	return SAM_STAT_GOOD;
no_room:
	/* INSUFFICIENT REGISTRATION RESOURCES */
	iet_scsi_sense(req, ILLEGAL_REQUEST, 0x55, 0x04);
	return SAM_STAT_CHECK_CONDITION;
}

/* RESERVE (5.13.9) */
static int do_reserve(struct pr_out *o, struct iet_pr_state *st)
{
	if (o->i < 0 || o->pl.key != st->regs[o->i].key)
		return SAM_STAT_RESERVATION_CONFLICT;
	if (st->reserved)
		return reg_holds(st, o->i) && st->type == o->type ?
		       -ENODATA : SAM_STAT_RESERVATION_CONFLICT;
	st->reserved = true;
	st->type = o->type;
	st->regs[o->i].holder = true;
	return SAM_STAT_GOOD;	/* no new generation, as with RELEASE */
}

/* RELEASE (5.13.11.2) */
static int do_release(struct iet_scsi_req *req, struct pr_out *o,
		      struct iet_pr_state *st, u8 *ua)
{
	u32 j;

	if (o->i < 0 || o->pl.key != st->regs[o->i].key)
		return SAM_STAT_RESERVATION_CONFLICT;
	if (!reg_holds(st, o->i))
		return -ENODATA;
	if (st->type != o->type) {
		/* INVALID RELEASE OF PERSISTENT RESERVATION */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x04);
		return SAM_STAT_CHECK_CONDITION;
	}
	if (type_reg_access(st->type))
		for (j = 0; j < st->nr; j++)
			if (j != o->i)
				ua[j] = UA_RES_RELEASED;
	release(st);
	return SAM_STAT_GOOD;	/* persisted, but the same generation */
}

/* CLEAR (5.13.11.2.6) */
static int do_clear(struct pr_out *o, struct iet_pr_state *st, u8 *ua)
{
	u32 j;

	if (o->i < 0 || o->pl.key != st->regs[o->i].key)
		return SAM_STAT_RESERVATION_CONFLICT;
	for (j = 0; j < st->nr; j++) {
		if (j != o->i)
			ua[j] = UA_RES_PREEMPTED;
		st->regs[j].gone = true;
	}
	release(st);
	st->generation++;
	return SAM_STAT_GOOD;
}

/* PREEMPT and PREEMPT AND ABORT (5.13.11.2.4, 5.13.11.2.5) */
static int do_preempt(struct iet_scsi_req *req, struct pr_out *o,
		      struct iet_pr_state *st, u8 *ua)
{
	bool holder_preempted = false, changed;
	u32 j, removed = 0;
	int h = -1;

	if (o->i < 0 || o->pl.key != st->regs[o->i].key)
		return SAM_STAT_RESERVATION_CONFLICT;
	for (j = 0; st->reserved && j < st->nr; j++)
		if (st->regs[j].holder)
			h = j;
	if (st->reserved && type_all_reg(st->type) && !o->pl.sa_key) {
		/* Every other registration goes; a new reservation comes. */
		for (j = 0; j < st->nr; j++) {
			if (j == o->i)
				continue;
			ua[j] = UA_REG_PREEMPTED;
			st->regs[j].gone = true;
		}
		release(st);
		goto reserve;
	}
	if (!o->pl.sa_key) {
		/* Zero names no holder: INVALID FIELD IN PARAMETER LIST */
		iet_scsi_invalid_param(req, 8, 7);
		return SAM_STAT_CHECK_CONDITION;
	}
	holder_preempted = h >= 0 && !type_all_reg(st->type) &&
			   st->regs[h].key == o->pl.sa_key;
	for (j = 0; j < st->nr; j++) {
		if (st->regs[j].key != o->pl.sa_key)
			continue;
		removed++;
		/* The preempting nexus keeps its own registration. */
		if (j == o->i)
			continue;
		ua[j] = UA_REG_PREEMPTED;
		st->regs[j].holder = false;
		st->regs[j].gone = true;
	}
	if (!removed)
		return SAM_STAT_RESERVATION_CONFLICT;
	if (!holder_preempted) {
		/* Registrations only: the reservation stays as it is. */
		st->generation++;
		return SAM_STAT_GOOD;
	}
	/* Another type: the other registrants' access changed. */
	changed = st->type != o->type;
	release(st);
	for (j = 0; changed && j < st->nr; j++)
		if (j != o->i && !st->regs[j].gone)
			ua[j] = UA_RES_RELEASED;
reserve:
	st->reserved = true;
	st->type = o->type;
	st->regs[o->i].holder = true;
	st->generation++;
	return SAM_STAT_GOOD;
}

/* REGISTER AND MOVE (5.13.8) */
static int do_move(struct iet_scsi_req *req, struct pr_out *o,
		   struct iet_pr_state *st)
{
	const struct iet_pr_params *pl = &o->pl;
	char name[IET_NAME_MAX + 1];
	struct iet_pr_fault f;
	struct pr_nexus n;
	int j;

	if (o->i < 0 || pl->key != st->regs[o->i].key || !st->reserved ||
	    type_all_reg(st->type) || !st->regs[o->i].holder)
		return SAM_STAT_RESERVATION_CONFLICT;
	if (!pl->sa_key) {
		iet_scsi_invalid_param(req, 8, 7);
		return SAM_STAT_CHECK_CONDITION;
	}
	if (iet_tpg_find(req->nexus->target, pl->rtpi) < 0) {
		iet_scsi_invalid_param(req, 18, 7);
		return SAM_STAT_CHECK_CONDITION;
	}
	if (!iet_pr_parse_tpid(pl->tpids, pl->tpids_len, pl->tpids_off, name,
			       &n.isid, &f)) {
		pr_fault_sense(req, &f);
		return SAM_STAT_CHECK_CONDITION;
	}
	n.initiator = name;
	n.rtpi = pl->rtpi;
	/* Not to itself (INVALID FIELD IN PARAMETER LIST). */
	if (reg_matches(&st->regs[o->i], &n)) {
		iet_scsi_invalid_param(req, pl->tpids_off + 4, 7);
		return SAM_STAT_CHECK_CONDITION;
	}
	j = find_reg(st, &n);
	if (j < 0) {
		if (!reg_room(st, n.initiator)) {
			iet_scsi_sense(req, ILLEGAL_REQUEST, 0x55, 0x04);
			return SAM_STAT_CHECK_CONDITION;
		}
		j = st->nr;
		add_reg(st, &n, pl->sa_key, false);
	} else {
		st->regs[j].key = pl->sa_key;
	}
	st->regs[o->i].holder = false;
	st->regs[j].holder = true;
	if (pl->unreg)
		st->regs[o->i].gone = true;
	st->aptpl = pl->aptpl;
	st->generation++;
	return SAM_STAT_GOOD;
}

/* PREEMPT AND ABORT: the tasks of the nexuses it preempted. */
struct abort_which {
	const struct iet_pr_state *st;
	const u8 *ua;
};

static bool preempted_nexus(struct iet_session *session, void *arg)
{
	const struct abort_which *w = arg;
	struct pr_nexus n;
	u32 i;

	nexus_of(session, &n);
	for (i = 0; i < w->st->nr; i++)
		if (w->ua[i] == UA_REG_PREEMPTED &&
		    reg_matches(&w->st->regs[i], &n))
			return true;
	return false;
}

static int pr_out_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	struct iet_pr *pr = &lun->pr;
	struct pr_out o = { .sa = req->cdb[1] & 0x1f,
			    .type = req->cdb[2] & 0x0f };
	struct iet_pr_state *st = NULL, *victims = NULL;
	struct iet_pr_fault f;
	struct abort_which w;
	int status, nr = 0;
	bool aborted = false;
	u8 *p, *ua = NULL;

	p = iet_scsi_param_list(req, PR_OUT_MIN);
	if (!p)
		return 0;
	/* The fields, checked against the service action and the length. */
	if (!iet_pr_parse_params(o.sa, p, req->buf_len, &o.pl, &f)) {
		pr_fault_sense(req, &f);
		goto out;
	}
	if (o.pl.spec_i_pt) {
		nr = iet_pr_count_tpids(&o.pl, &f);
		if (nr < 0) {
			pr_fault_sense(req, &f);
			goto out;
		}
	}
	nexus_of(req->nexus, &o.me);
	mutex_lock(&pr->mutex);
	/* Another nexus's SPC-2 reservation (SPC-4 5.13.3). */
	if (pr->scsi2 && pr->scsi2 != req->nexus) {
		req->status = SAM_STAT_RESERVATION_CONFLICT;
		goto unlock;
	}
	st = state_copy(pr->state, 1 + nr);
	ua = kzalloc(st ? st->cap : 1, GFP_NOIO);
	if (!st || !ua) {
		req->status = SAM_STAT_BUSY;
		goto unlock;
	}
	o.i = find_reg(st, &o.me);
	switch (o.sa) {
	case PRO_REGISTER:
	case PRO_REGISTER_IGNORE:
		status = do_register(req, &o, st, ua);
		break;
	case PRO_RESERVE:
		status = do_reserve(&o, st);
		break;
	case PRO_RELEASE:
		status = do_release(req, &o, st, ua);
		break;
	case PRO_CLEAR:
		status = do_clear(&o, st, ua);
		break;
	case PRO_PREEMPT:
	case PRO_PREEMPT_ABORT:
		status = do_preempt(req, &o, st, ua);
		break;
	default:	/* PRO_REGISTER_MOVE: the parse let nothing else in */
		status = do_move(req, &o, st);
		break;
	}
	/* -ENODATA: GOOD, and nothing changes. */
	if (status == -ENODATA)
		goto unlock;
	if (status > 0) {
		req->status = status;
		goto unlock;
	}
	/*
	 * PREEMPT AND ABORT: whom it preempted, as marked before the state
	 * is compacted. Their tasks are collected only once the new state
	 * is in force: one dispatched in between would pass the old check
	 * and be no victim (a command checks the state it finds, and is
	 * delivered, so collectable, before it checks).
	 */
	if (o.sa == PRO_PREEMPT_ABORT) {
		victims = state_copy(st, 0);
		if (!victims) {
			req->status = SAM_STAT_BUSY;
			goto unlock;
		}
	}
	if ((st->aptpl || pr->persisted) && persist(lun, st)) {
		/* Not kept as asked: nothing changes. */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x55, 0x04);
		goto unlock;
	}
	notify(lun, req->nexus, st, ua);
	state_compact(st);
	state_install(pr, st);
	st = NULL;
	if (victims) {
		w.st = victims;
		w.ua = ua;
		iet_scsi_abort_tasks(req, preempted_nexus, &w);
		aborted = true;
	}
unlock:
	mutex_unlock(&pr->mutex);
	state_free(victims);
	state_free(st);
	kfree(ua);
out:
	kfree(p);
	/*
	 * PREEMPT AND ABORT ends once the tasks it aborted are gone: the
	 * last of them completes it. Nothing here may touch req after.
	 */
	return aborted && iet_scsi_abort_wait(req) ? IET_ASYNC : 0;
}

static void pr_out_parse(struct iet_scsi_req *req)
{
	u8 sa = req->cdb[1] & 0x1f, scope = req->cdb[2] >> 4;
	u8 type = req->cdb[2] & 0x0f;
	u32 len = get_unaligned_be32(req->cdb + 5);
	bool typed = sa == PRO_RESERVE || sa == PRO_RELEASE ||
		     sa == PRO_PREEMPT || sa == PRO_PREEMPT_ABORT;

	if (sa > PRO_REGISTER_MOVE)
		return iet_scsi_invalid_field(req, 1, 4);
	/* LU_SCOPE only, and the types of Table 177. */
	if (typed && scope)
		return iet_scsi_invalid_field(req, 2, 7);
	if (typed && !type_valid(type))
		return iet_scsi_invalid_field(req, 2, 3);
	if (len > PR_OUT_MAX)
		return iet_scsi_invalid_field(req, 5, 7);
	req->blocking = true;
	req->execute = pr_out_execute;
	req->data_out = true;
	req->xfer_len = len;
	req->buf_len = min(len, req->want_write ? req->edtl : 0);
}

/* ---- what the administrator sees and does (netlink.c) ------------------- */

/* IET_CMD_PR_GET's attributes for the LUN. */
int iet_pr_fill(struct sk_buff *skb, struct iet_lun *lun)
{
	struct iet_pr *pr = &lun->pr;
	const struct iet_pr_state *st;
	struct nlattr *regs, *reg;
	int ret = -EMSGSIZE;
	u32 i;

	mutex_lock(&pr->mutex);
	st = pr->state;
	if (nla_put_u32(skb, IET_A_PR_GENERATION, st->generation) ||
	    nla_put_u32(skb, IET_A_PR_APTPL, st->aptpl) ||
	    (st->reserved && nla_put_u32(skb, IET_A_PR_TYPE, st->type)) ||
	    (pr->scsi2 && nla_put_u64_64bit(skb, IET_A_SID, pr->scsi2->sid,
					    IET_A_PAD)))
		goto out;
	regs = nla_nest_start(skb, IET_A_PR_REGS);
	if (!regs)
		goto out;
	for (i = 0; i < st->nr; i++) {
		const struct iet_pr_reg *r = &st->regs[i];

		reg = nla_nest_start(skb, IET_A_PR_REG);
		if (!reg ||
		    nla_put_u64_64bit(skb, IET_A_PR_KEY, r->key, IET_A_PAD) ||
		    nla_put_string(skb, IET_A_INITIATOR_NAME, r->initiator) ||
		    (r->isid != IET_PR_ANY_ISID &&
		     nla_put_u64_64bit(skb, IET_A_PR_ISID, r->isid,
				       IET_A_PAD)) ||
		    nla_put_u32(skb, IET_A_PR_RTPI, r->all_tg_pt ? 0 : r->rtpi) ||
		    (reg_holds(st, i) && nla_put_flag(skb, IET_A_PR_HOLDER)))
			goto out;
		nla_nest_end(skb, reg);
	}
	nla_nest_end(skb, regs);
	ret = 0;
out:
	mutex_unlock(&pr->mutex);
	return ret;
}

/*
 * A reservation an initiator left behind (a dead cluster node's), ended
 * by the administrator: the reservations, or everything. The registrants
 * hear of it as of a RELEASE (RESERVATIONS RELEASED) or a CLEAR
 * (RESERVATIONS PREEMPTED).
 */
static int admin_clear(struct iet_lun *lun, unsigned long all)
{
	struct iet_pr *pr = &lun->pr;
	struct iet_pr_state *st;
	bool reserved, scsi2;
	u32 i, nr;
	u8 *ua;
	int ret = 0;

	mutex_lock(&pr->mutex);
	st = state_copy(pr->state, 1);
	ua = kzalloc(st ? st->cap : 1, GFP_KERNEL);
	if (!st || !ua) {
		ret = -ENOMEM;
		goto out;
	}
	nr = st->nr;
	reserved = st->reserved;
	for (i = 0; i < st->nr; i++) {
		if (all) {
			ua[i] = UA_RES_PREEMPTED;
			st->regs[i].gone = true;
		} else if (reserved) {
			ua[i] = UA_RES_RELEASED;
		}
	}
	release(st);
	if (all && nr)
		st->generation++;
	if ((st->aptpl || pr->persisted) && (reserved || (all && nr))) {
		ret = persist(lun, st);
		if (ret)
			goto out;
	}
	notify(lun, NULL, st, ua);
	state_compact(st);
	state_install(pr, st);
	st = NULL;
	scsi2 = pr->scsi2;
	scsi2_release(pr);
	pr_notice("target %u lun %u: the administrator ended %s%s%s%s\n",
		  lun->target->tid, lun->lun,
		  reserved ? "the persistent reservation" : "",
		  reserved && scsi2 ? " and " : "",
		  scsi2 ? "an SPC-2 reservation" : "",
		  all && nr ? (reserved || scsi2 ? " and every registration" :
			       "every registration") :
		  reserved || scsi2 ? "" : "nothing: none was held");
out:
	mutex_unlock(&pr->mutex);
	state_free(st);
	kfree(ua);
	return ret;
}

int iet_pr_admin_clear(struct iet_lun *lun, bool all)
{
	return as_kernel(lun, admin_clear, all);
}

/* ---- the commands ------------------------------------------------------- */

#define CONTROL		0x04	/* NACA, refused: no ACA */

const struct iet_opcode iet_pr_opcodes[] = {
	{ .op = RESERVE_6, .len = 6, .timeout = 10, .flags = IET_OP_PR_OWN,
	  .parse = reserve_parse,
	  .usage = { RESERVE_6, 0, 0, 0, 0, CONTROL } },
	{ .op = RELEASE_6, .len = 6, .timeout = 10, .flags = IET_OP_PR_OWN,
	  .parse = reserve_parse,
	  .usage = { RELEASE_6, 0, 0, 0, 0, CONTROL } },
	{ .op = RESERVE_10, .len = 10, .timeout = 10, .flags = IET_OP_PR_OWN,
	  .parse = reserve_parse,
	  .usage = { RESERVE_10, 0, 0, 0, 0, 0, 0, 0, 0, CONTROL } },
	{ .op = RELEASE_10, .len = 10, .timeout = 10, .flags = IET_OP_PR_OWN,
	  .parse = reserve_parse,
	  .usage = { RELEASE_10, 0, 0, 0, 0, 0, 0, 0, 0, CONTROL } },
#define PR_IN(sa_)							\
	{ .op = PERSISTENT_RESERVE_IN, .sa = (sa_), .len = 10,		\
	  .flags = IET_OP_SA | IET_OP_PR_FREE | IET_OP_ALUA_STANDBY,	\
	  .timeout = 10,						\
	  .parse = pr_in_parse,						\
	  .usage = { PERSISTENT_RESERVE_IN, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, \
		     CONTROL } }
	PR_IN(PRI_READ_KEYS),
	PR_IN(PRI_READ_RESERVATION),
	PR_IN(PRI_REPORT_CAPS),
	PR_IN(PRI_READ_FULL_STATUS),
#undef PR_IN
#define PR_OUT(sa_)							\
	{ .op = PERSISTENT_RESERVE_OUT, .sa = (sa_), .len = 10,		\
	  .flags = IET_OP_SA | IET_OP_PR_OWN | IET_OP_ALUA_STANDBY,	\
	  .timeout = 10,						\
	  .parse = pr_out_parse,					\
	  .usage = { PERSISTENT_RESERVE_OUT, 0x1f, 0xff, 0, 0, 0xff, 0xff,	\
		     0xff, 0xff, CONTROL } }
	PR_OUT(PRO_REGISTER),
	PR_OUT(PRO_RESERVE),
	PR_OUT(PRO_RELEASE),
	PR_OUT(PRO_CLEAR),
	PR_OUT(PRO_PREEMPT),
	PR_OUT(PRO_PREEMPT_ABORT),
	PR_OUT(PRO_REGISTER_IGNORE),
	PR_OUT(PRO_REGISTER_MOVE),
#undef PR_OUT
};

const unsigned int iet_pr_nr_opcodes = ARRAY_SIZE(iet_pr_opcodes);
