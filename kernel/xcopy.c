// SPDX-License-Identifier: GPL-2.0
/*
 * SPC-4 third-party copy, LID1: EXTENDED COPY with identification CSCD
 * descriptors and block-to-block segment descriptors, and RECEIVE COPY
 * RESULTS (COPY STATUS, OPERATING PARAMETERS) -- VMware's XCOPY.
 *
 * The copy manager is the addressed LUN's device server; the copy targets
 * it reaches are the LUNs of the same target, named by the NAA designator
 * of their device identification page, so an I_T nexus copies only among
 * LUNs it could read and write itself. A copy runs in an I/O thread in
 * chunks through iet_lun_io_sync(): each chunk written is stable where the
 * destination writes through, and is one write to its write gate, so a
 * COMPARE AND WRITE sees none of it or all of it. The nexus reaches each
 * copy target only as its own commands could (reservations, port group
 * state, unit attentions), checked before each segment, and task
 * management of any copy target ends the copy. Its status is held per
 * I_T nexus and list identifier for RECEIVE COPY RESULTS.
 */
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define CSCD_MAX	8		/* CSCD descriptors in one list */
#define SEG_MAX		16		/* segment descriptors in one list */
#define DESC_LIST_MAX	1024		/* bytes of both lists */
#define SEG_LEN_MAX	(16U << 20)	/* bytes one segment copies */
#define CHUNK		BIT(20)		/* copied per step */
#define HDR		16		/* the parameter list header */
#define CSCD_LEN	32
#define SEG_LEN		28		/* a block-to-block one */

#define CSCD_ID		0xe4		/* identification descriptor */
#define SEG_B2B		0x02		/* block device to block device */

/* COPY MANAGER STATUS (SPC-4 6.18.3) */
#define COPY_RUNNING	0x00
#define COPY_DONE	0x01
#define COPY_FAILED	0x02

/* LIST ID USAGE */
#define LID_HELD	0x0		/* results held for RECEIVE COPY RESULTS */
#define LID_NOT_HELD	0x2
#define LID_NONE	0x3

struct copy_target {
	struct iet_lun *lun;		/* a reference */
};

/* The held status of the command's list identifier, or NULL. */
static struct iet_copy_status *held(struct iet_session *s, u8 list_id)
{
	unsigned int i;

	for (i = 0; i < IET_COPIES_HELD; i++)
		if (s->copies[i].used && s->copies[i].list_id == list_id)
			return &s->copies[i];
	return NULL;
}

/*
 * Claims the list identifier for the command: refused while a copy with it
 * runs on this I_T nexus, else it replaces an old status (or the oldest).
 */
static bool claim_list_id(struct iet_scsi_req *req, u8 list_id)
{
	struct iet_session *s = req->nexus;
	struct iet_copy_status *c;
	unsigned int i;

	spin_lock(&s->lock);
	c = held(s, list_id);
	if (c && c->status == COPY_RUNNING) {
		spin_unlock(&s->lock);
		/* OPERATION IN PROGRESS */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x00, 0x16);
		return false;
	}
	for (i = 0; !c && i < IET_COPIES_HELD; i++) {
		c = &s->copies[(s->copy_next + i) % IET_COPIES_HELD];
		if (c->used && c->status == COPY_RUNNING)
			c = NULL;
	}
	if (!c) {
		spin_unlock(&s->lock);
		req->status = SAM_STAT_BUSY;
		return false;
	}
	s->copy_next = (c - s->copies + 1) % IET_COPIES_HELD;
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->list_id = list_id;
	c->status = COPY_RUNNING;
	spin_unlock(&s->lock);
	return true;
}

static void set_list_status(struct iet_scsi_req *req, u8 list_id, u8 status,
			    u16 segs, u64 bytes)
{
	struct iet_session *s = req->nexus;
	struct iet_copy_status *c;

	spin_lock(&s->lock);
	c = held(s, list_id);
	if (c) {
		c->status = status;
		c->segments = segs;
		c->kib = min_t(u64, bytes >> 10, U32_MAX);
	}
	spin_unlock(&s->lock);
}

/* The LUN of the command's target whose NAA designator is naa (len). */
static struct iet_lun *lun_by_naa(struct iet_target *t, const u8 *naa, u8 len)
{
	struct iet_lun *lun, *found = NULL;
	unsigned long idx;
	u8 mine[IET_NAA_LEN];

	if (len != IET_NAA_LEN)
		return NULL;
	rcu_read_lock();
	xa_for_each(&t->luns, idx, lun) {
		iet_lun_naa(lun, mine);
		if (!memcmp(mine, naa, len) && kref_get_unless_zero(&lun->kref)) {
			found = lun;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* One identification CSCD descriptor at p (offset off in the list). */
static bool parse_cscd(struct iet_scsi_req *req, const u8 *p, u32 off,
		       struct copy_target *ct)
{
	struct iet_lun *lun;
	u32 bs;

	if (p[0] != CSCD_ID) {
		/* UNSUPPORTED TARGET DESCRIPTOR TYPE CODE */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x07);
		return false;
	}
	if (p[1] & 0x20 || (p[1] & 0x1f) != TYPE_DISK) {   /* NUL, a disk */
		iet_scsi_invalid_param(req, off + 1, -1);
		return false;
	}
	/* A binary NAA designator of a logical unit. */
	if ((p[4] & 0x0f) != 0x01) {
		iet_scsi_invalid_param(req, off + 4, 3);
		return false;
	}
	if ((p[5] & 0x3f) != 0x03) {
		iet_scsi_invalid_param(req, off + 5, 5);
		return false;
	}
	if (p[7] > 20) {
		iet_scsi_invalid_param(req, off + 7, 7);
		return false;
	}
	lun = lun_by_naa(req->lun->target, p + 8, p[7]);
	if (!lun) {
		/* COPY ABORTED: UNREACHABLE COPY TARGET */
		iet_scsi_sense(req, COPY_ABORTED, 0x08, 0x04);
		return false;
	}
	ct->lun = lun;
	/* DISK BLOCK LENGTH, if given, must be the LUN's. */
	bs = get_unaligned_be24(p + 29);
	if (bs && bs != lun->block_size) {
		iet_scsi_invalid_param(req, off + 29, -1);
		return false;
	}
	return true;
}

/*
 * Neither copy target is being sanitized nor failed one: its commands
 * would end NOT READY or MEDIUM ERROR, the copy's end COPY ABORTED, ERROR
 * DETECTED BY THIRD PARTY TEMPORARY INITIATOR.
 */
static bool sanitize_idle(struct iet_scsi_req *req, struct iet_lun *s,
			  struct iet_lun *d)
{
	if (iet_sanitize_idle(s) && iet_sanitize_idle(d))
		return true;
	iet_scsi_sense(req, COPY_ABORTED, 0x0d, 0x00);
	return false;
}

/*
 * Whether the nexus may still use a segment's copy targets as it could with
 * commands of its own to them: through an active port group, with no unit
 * attention pending for it there (that stays pending, for the nexus to
 * hear on its next command to that LUN), within their reservations (the
 * source read, the destination written), neither of them sanitized. Checked before anything is
 * copied and again before each segment: a copy addressed to one LUN must
 * never pass the fence of another.
 */
static bool segment_allowed(struct iet_scsi_req *req, struct iet_lun *s,
			    struct iet_lun *d)
{
	u8 asc, ascq;

	iet_alua_check(req);
	if (req->status != SAM_STAT_GOOD)
		return false;
	if ((s->lun != req->lun_id &&
	     iet_ua_peek(req->nexus, s->lun, &asc, &ascq)) ||
	    (d->lun != req->lun_id &&
	     iet_ua_peek(req->nexus, d->lun, &asc, &ascq))) {
		/* ERROR DETECTED BY THIRD PARTY TEMPORARY INITIATOR */
		iet_scsi_sense(req, COPY_ABORTED, 0x0d, 0x00);
		return false;
	}
	if (!iet_pr_allows(s, req->nexus, false) ||
	    !iet_pr_allows(d, req->nexus, true)) {
		req->status = SAM_STAT_RESERVATION_CONFLICT;
		return false;
	}
	return sanitize_idle(req, s, d);
}

/*
 * One block-to-block segment descriptor (its form checked already): blocks
 * of the source (DC=0) or of the destination (DC=1), the same bytes on
 * both, on both media; the destination writable.
 */
static bool check_segment(struct iet_scsi_req *req, const u8 *p, u32 off,
			  struct copy_target *ct, u32 nr_ct, u64 *bytes)
{
	u16 src = get_unaligned_be16(p + 4), dst = get_unaligned_be16(p + 6);
	u32 nr = get_unaligned_be16(p + 10);
	struct iet_lun *s, *d;
	u64 len, sblocks, dblocks;

	if (p[1] & 0x01) {		/* CAT: no residue to handle */
		iet_scsi_invalid_param(req, off + 1, 0);
		return false;
	}
	if (src >= nr_ct || dst >= nr_ct) {
		/* No such CSCD: UNREACHABLE COPY TARGET */
		iet_scsi_sense(req, COPY_ABORTED, 0x08, 0x04);
		return false;
	}
	s = ct[src].lun;
	d = ct[dst].lun;
	len = (u64)nr << (p[1] & 0x02 ? d->blkbits : s->blkbits);
	if (len & (s->block_size - 1) || len & (d->block_size - 1)) {
		iet_scsi_invalid_param(req, off + 10, -1);
		return false;
	}
	if (len > SEG_LEN_MAX) {
		iet_scsi_invalid_param(req, off + 10, -1);
		return false;
	}
	/* Each size read once: a resize may change it meanwhile. */
	sblocks = READ_ONCE(s->blocks);
	dblocks = READ_ONCE(d->blocks);
	if (get_unaligned_be64(p + 12) > sblocks ||
	    len >> s->blkbits > sblocks - get_unaligned_be64(p + 12) ||
	    get_unaligned_be64(p + 20) > dblocks ||
	    len >> d->blkbits > dblocks - get_unaligned_be64(p + 20)) {
		/*
		 * Past the end of a copy target: the copy is aborted
		 * (SPC-4 6.4.5), the descriptor's offset in INFORMATION.
		 */
		iet_scsi_sense(req, COPY_ABORTED, 0x00, 0x00);
		iet_scsi_sense_info(req, off);
		return false;
	}
	if (d->iomode == IET_IOMODE_RO || READ_ONCE(d->swp)) {
		iet_scsi_sense(req, COPY_ABORTED, 0x27,
			       d->iomode == IET_IOMODE_RO ? 0x00 : 0x02);
		return false;
	}
	if (!segment_allowed(req, s, d))
		return false;
	*bytes = len;
	return true;
}

/*
 * The copy targets other than the addressed LUN, told to task management
 * before the first of them is touched (iet_scsi_touches()): a reset or a
 * PREEMPT AND ABORT of any of them ends the copy and waits for it.
 */
static void publish_targets(struct iet_scsi_req *req,
			    const struct copy_target *ct, u32 nr_ct)
{
	u32 i, j;
	u8 nr = 0;

	BUILD_BUG_ON(CSCD_MAX > IET_ALSO_MAX);
	for (i = 0; i < nr_ct; i++) {
		u32 id = ct[i].lun->lun;

		for (j = 0; j < nr && req->also[j] != id; j++)
			;
		if (id != req->lun_id && j == nr && nr < IET_ALSO_MAX)
			req->also[nr++] = id;
	}
	/* also[] is whole before task management sees its count. */
	smp_store_release(&req->nr_also, nr);
}

/* An I/O error at a copy target ends the copy: COPY ABORTED, with why. */
static void copy_io_error(struct iet_scsi_req *req, enum iet_io_op op,
			  int error)
{
	iet_scsi_io_error(req, op, error);
	if (req->sense_len)
		req->sense[(req->sense[0] & 0x7f) == 0x70 ? 2 : 1] = COPY_ABORTED;
}

static int copy_segment(struct iet_scsi_req *req, const u8 *p,
			struct copy_target *ct, u64 len, struct iet_buf *b)
{
	struct iet_lun *s = ct[get_unaligned_be16(p + 4)].lun;
	struct iet_lun *d = ct[get_unaligned_be16(p + 6)].lun;
	loff_t from = get_unaligned_be64(p + 12) << s->blkbits;
	loff_t to = get_unaligned_be64(p + 20) << d->blkbits;
	/*
	 * Within one LUN, a destination overlapping the source from above
	 * is copied from the end: no block is read after it was written.
	 */
	bool down = s == d && to > from && to < from + len;
	u64 done, off;
	u32 n;
	int ret;

	if (!segment_allowed(req, s, d))
		return -EACCES;
	for (done = 0; done < len; done += n) {
		if (iet_scsi_aborted(req)) {
			req->status = SAM_STAT_TASK_ABORTED;
			return -ECANCELED;
		}
		n = min_t(u64, len - done, CHUNK);
		off = down ? len - done - n : done;
		ret = iet_lun_io_sync(s, IET_IO_READ, from + off, b, n, false);
		if (ret) {
			copy_io_error(req, IET_IO_READ, ret);
			return ret;
		}
		iet_wgate_lock(d, (to + off) >> d->blkbits, n >> d->blkbits);
		/*
		 * A sanitize begun meanwhile: it drains the writes of d at
		 * this gate, so past it this one is seen to go first or sees
		 * the sanitize.
		 */
		if (!sanitize_idle(req, s, d)) {
			iet_wgate_unlock(d);
			return -EBUSY;
		}
		/* A resize may have cut the destination short meanwhile. */
		if ((to + off + n) >> d->blkbits > READ_ONCE(d->blocks)) {
			iet_wgate_unlock(d);
			iet_scsi_sense(req, COPY_ABORTED, 0x21, 0x00);
			return -ERANGE;
		}
		ret = iet_lun_io_sync(d, IET_IO_WRITE, to + off, b, n,
				      !READ_ONCE(d->wce));
		iet_wgate_unlock(d);
		if (ret) {
			copy_io_error(req, IET_IO_WRITE, ret);
			return ret;
		}
		iet_stats_copied(s, d, n);
		cond_resched();
	}
	return 0;
}

/*
 * The segment descriptor list, as far as its form goes: each descriptor's
 * type and length, and how many. Their offsets go to seg[].
 */
static bool walk_segments(struct iet_scsi_req *req, const u8 *p, u32 off,
			  u32 end, u32 *seg, u32 *nr)
{
	u32 len;

	for (*nr = 0; off < end; off += len) {
		if (end - off < 4) {
			iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
			return false;
		}
		len = get_unaligned_be16(p + off + 2) + 4;
		if (p[off] != SEG_B2B) {
			/* UNSUPPORTED SEGMENT DESCRIPTOR TYPE CODE */
			iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x09);
			return false;
		}
		if (len != SEG_LEN) {
			iet_scsi_invalid_param(req, off + 2, -1);
			return false;
		}
		if (len > end - off) {
			iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
			return false;
		}
		if (*nr == SEG_MAX) {
			/* TOO MANY SEGMENT DESCRIPTORS */
			iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x08);
			return false;
		}
		seg[(*nr)++] = off;
	}
	return true;
}

/*
 * The parameter list header; false with the sense set if it is wrong. STR
 * and PRIORITY are hints, taken as given: segments run in order.
 */
static bool check_header(struct iet_scsi_req *req, const u8 *p, u32 len)
{
	u8 usage = (p[1] >> 3) & 0x03;
	u32 cscd_len = get_unaligned_be16(p + 2);
	u32 seg_len = get_unaligned_be32(p + 8);

	if (usage == 0x1) {
		iet_scsi_invalid_param(req, 1, 4);
	} else if (usage == LID_NONE && p[0]) {
		iet_scsi_invalid_param(req, 0, -1);
	} else if (get_unaligned_be32(p + 12)) {	/* no inline data */
		iet_scsi_invalid_param(req, 12, -1);
	} else if ((u64)HDR + cscd_len + seg_len != len) {
		/* PARAMETER LIST LENGTH ERROR */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
	} else if (cscd_len / CSCD_LEN > CSCD_MAX) {
		/* TOO MANY TARGET DESCRIPTORS */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x06);
	} else if (cscd_len % CSCD_LEN) {
		iet_scsi_invalid_param(req, 2, -1);
	} else {
		return true;
	}
	return false;
}

static int copy_run(struct iet_scsi_req *req)
{
	u32 len = req->buf_len, cscd_len, nr_ct, nr_seg, i, off;
	struct copy_target ct[CSCD_MAX] = {};
	u32 seg[SEG_MAX], segs = 0;
	u64 bytes[SEG_MAX], total = 0;
	struct iet_buf b = {};
	bool hold = false;
	u8 list_id, *p;

	if (!len)
		return 0;
	p = iet_scsi_param_list(req, HDR);
	if (!p)
		return 0;
	list_id = p[0];
	cscd_len = get_unaligned_be16(p + 2);
	nr_ct = cscd_len / CSCD_LEN;
	if (!check_header(req, p, len) ||
	    !walk_segments(req, p, HDR + cscd_len, len, seg, &nr_seg))
		goto out;
	if (!nr_ct || !nr_seg)
		goto out;		/* nothing to copy */

	hold = ((p[1] >> 3) & 0x03) == LID_HELD;
	if (hold && !claim_list_id(req, list_id)) {
		hold = false;
		goto out;
	}
	for (i = 0, off = HDR; i < nr_ct; i++, off += CSCD_LEN)
		if (!parse_cscd(req, p + off, off, &ct[i]))
			goto done;
	publish_targets(req, ct, nr_ct);
	for (i = 0; i < nr_seg; i++)
		if (!check_segment(req, p + seg[i], seg[i], ct, nr_ct,
				   &bytes[i]))
			goto done;
	if (iet_buf_alloc(&b, CHUNK)) {
		req->status = SAM_STAT_BUSY;
		goto done;
	}
	for (; segs < nr_seg; segs++) {
		if (copy_segment(req, p + seg[segs], ct, bytes[segs], &b))
			break;
		total += bytes[segs];
	}
	iet_buf_free(&b);
done:
	for (i = 0; i < nr_ct; i++)
		if (ct[i].lun)
			iet_lun_put(ct[i].lun);
out:
	if (hold)
		set_list_status(req, list_id,
				req->status == SAM_STAT_GOOD ? COPY_DONE :
				COPY_FAILED, segs, total);
	kfree(p);
	return 0;
}

/*
 * A copy holds an I/O thread for as long as it runs (up to SEG_MAX segments
 * of SEG_LEN_MAX): an I_T nexus runs a few at once, and is told TASK SET
 * FULL past that (initiators retry, or copy by hand).
 */
static int xcopy_execute(struct iet_scsi_req *req)
{
	atomic_t *running = &req->nexus->copies_running;

	if (atomic_inc_return(running) > IET_COPIES_RUNNING) {
		atomic_dec(running);
		req->status = SAM_STAT_TASK_SET_FULL;
		return 0;
	}
	copy_run(req);
	atomic_dec(running);
	return 0;
}

static void xcopy_parse(struct iet_scsi_req *req)
{
	u32 len = get_unaligned_be32(req->cdb + 10);

	req->blocking = true;
	req->lengthy = true;
	req->execute = xcopy_execute;
	req->data_out = true;
	req->xfer_len = len;
	/*
	 * A list longer than the longest the copy manager takes is refused
	 * before its data is taken in.
	 */
	if (len > HDR + DESC_LIST_MAX) {
		/* PARAMETER LIST LENGTH ERROR */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
		return;
	}
	req->buf_len = min(len, req->want_write ? req->edtl : 0);
}

/* ---- RECEIVE COPY RESULTS ---------------------------------------------- */

static int copy_status_execute(struct iet_scsi_req *req)
{
	struct iet_session *s = req->nexus;
	struct iet_copy_status *c;
	u8 d[12] = {};

	spin_lock(&s->lock);
	c = held(s, req->cdb[2]);
	if (c) {
		d[4] = c->status;
		put_unaligned_be16(c->segments, d + 5);
		d[7] = 0x01;			/* TRANSFER COUNT UNITS: KiB */
		put_unaligned_be32(c->kib, d + 8);
	}
	spin_unlock(&s->lock);
	if (!c) {
		iet_scsi_invalid_field(req, 2, -1);
		return 0;
	}
	put_unaligned_be32(sizeof(d) - 4, d);
	iet_scsi_set_data(req, 0, d, sizeof(d));
	req->data_len = min_t(u32, req->data_len, sizeof(d));
	return 0;
}

static void copy_status_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 10), 12);
	req->execute = copy_status_execute;
}

static const u8 implemented[] = { SEG_B2B, CSCD_ID };

static int operating_params_execute(struct iet_scsi_req *req)
{
	u8 d[44 + sizeof(implemented)] = {};

	put_unaligned_be32(sizeof(d) - 4, d);
	d[4] = 0x00;				/* SNLID: list IDs are held */
	put_unaligned_be16(CSCD_MAX, d + 8);
	put_unaligned_be16(SEG_MAX, d + 10);
	put_unaligned_be32(DESC_LIST_MAX, d + 12);
	put_unaligned_be32(SEG_LEN_MAX, d + 16);
	/* No inline data, no held data, no stream devices. */
	put_unaligned_be16(IET_COPIES_HELD, d + 34);	/* per I_T nexus */
	d[36] = IET_COPIES_HELD;
	d[37] = req->lun->blkbits;		/* DATA SEGMENT GRANULARITY */
	d[43] = sizeof(implemented);
	memcpy(d + 44, implemented, sizeof(implemented));
	iet_scsi_set_data(req, 0, d, sizeof(d));
	req->data_len = min_t(u32, req->data_len, sizeof(d));
	return 0;
}

static void operating_params_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 10), 44 +
			 sizeof(implemented));
	req->execute = operating_params_execute;
}

/* ---- VPD 0x8f ---------------------------------------------------------- */

/* One third-party copy descriptor: type, then its parameters, 4-aligned. */
static u32 tpc_desc(u8 *d, u16 type, u32 len)
{
	len = ALIGN(len, 4);
	put_unaligned_be16(type, d);
	put_unaligned_be16(len - 4, d + 2);
	return len;
}

/* The third-party copy page (SPC-4 7.8.17): what EXTENDED COPY takes. */
u32 iet_vpd_third_party_copy(struct iet_scsi_req *req, u8 *d)
{
	u32 off = 4;
	u8 *x;

	/* Supported commands: EXTENDED COPY (LID1), RECEIVE COPY RESULTS. */
	x = d + off;
	x[5] = EXTENDED_COPY;
	x[6] = 1;
	x[7] = 0x00;
	x[8] = RECEIVE_COPY_RESULTS;
	x[9] = 2;
	x[10] = 0x00;
	x[11] = 0x03;
	x[4] = 7;
	off += tpc_desc(x, 0x0001, 12);

	/* Parameter data */
	x = d + off;
	put_unaligned_be16(CSCD_MAX, x + 8);
	put_unaligned_be16(SEG_MAX, x + 10);
	put_unaligned_be32(DESC_LIST_MAX, x + 12);
	off += tpc_desc(x, 0x0004, 32);

	/* Supported descriptors */
	x = d + off;
	x[4] = sizeof(implemented);
	memcpy(x + 5, implemented, sizeof(implemented));
	off += tpc_desc(x, 0x0008, 5 + sizeof(implemented));

	/* Supported CSCD descriptor IDs: none. */
	off += tpc_desc(d + off, 0x000c, 6);

	/* General copy operations */
	x = d + off;
	put_unaligned_be32(IET_COPIES_HELD, x + 4);
	put_unaligned_be32(IET_COPIES_HELD, x + 8);
	put_unaligned_be32(SEG_LEN_MAX, x + 12);
	x[16] = req->lun->blkbits;
	off += tpc_desc(x, 0x8001, 32);
	return off;
}

#define CONTROL		0x04	/* NACA, refused: no ACA */

const struct iet_opcode iet_xcopy_opcodes[] = {
	{ .op = EXTENDED_COPY, .sa = 0x00, .flags = IET_OP_SA, .len = 16,
	  .timeout = 120, .parse = xcopy_parse,
	  .usage = { EXTENDED_COPY, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
		     0xff, 0xff, 0, CONTROL } },
	{ .op = RECEIVE_COPY_RESULTS, .sa = 0x00, .flags = IET_OP_SA | IET_OP_PR_READ,
	  .len = 16, .timeout = 10, .parse = copy_status_parse,
	  .usage = { RECEIVE_COPY_RESULTS, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0,
		     0xff, 0xff, 0xff, 0xff, 0, CONTROL } },
	{ .op = RECEIVE_COPY_RESULTS, .sa = 0x03, .flags = IET_OP_SA | IET_OP_PR_READ,
	  .len = 16, .timeout = 10, .parse = operating_params_parse,
	  .usage = { RECEIVE_COPY_RESULTS, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0,
		     0xff, 0xff, 0xff, 0xff, 0, CONTROL } },
};

const unsigned int iet_xcopy_nr_opcodes = ARRAY_SIZE(iet_xcopy_opcodes);
