// SPDX-License-Identifier: GPL-2.0
/*
 * SCSI emulation core: decode a CDB into what it will move and how it runs
 * (parse), run it (execute), and say exactly why when it cannot (sense).
 */
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

/* In the format the LUN's control mode page asks for (D_SENSE). */
void iet_scsi_sense(struct iet_scsi_req *req, u8 key, u8 asc, u8 ascq)
{
	bool desc = req->lun && READ_ONCE(req->lun->d_sense);

	req->status = SAM_STAT_CHECK_CONDITION;
	req->execute = NULL;
	scsi_build_sense_buffer(desc, req->sense, key, asc, ascq);
	req->sense_len = desc ? 8 : 18;
}

/* A descriptor appended to descriptor-format sense data (SPC-4 4.5.2). */
static u8 *sense_desc(struct iet_scsi_req *req, u8 type, u8 len)
{
	u8 *d = req->sense + req->sense_len;

	if (req->sense_len + 2 + len > IET_SENSE_MAX)
		return NULL;
	memset(d, 0, 2 + len);
	d[0] = type;
	d[1] = len;
	req->sense_len += 2 + len;
	req->sense[7] += 2 + len;
	return d;
}

/* The INFORMATION field, VALID. */
void iet_scsi_sense_info(struct iet_scsi_req *req, u64 info)
{
	u8 *d;

	if ((req->sense[0] & 0x7f) == 0x70) {		/* fixed format */
		req->sense[0] |= 0x80;
		put_unaligned_be32(info, req->sense + 3);
		return;
	}
	d = sense_desc(req, 0x00, 0x0a);
	if (d) {
		d[2] = 0x80;
		put_unaligned_be64(info, d + 4);
	}
}

/* The sense-key specific field pointer (SPC-4 4.5.2.4.2). */
static void sense_field(struct iet_scsi_req *req, bool cdb, u32 byte, int bit)
{
	u8 sks[3], *d;

	sks[0] = 0x80 | (cdb ? 0x40 : 0);		/* SKSV, C/D */
	if (bit >= 0)
		sks[0] |= 0x08 | bit;			/* BPV */
	put_unaligned_be16(byte, sks + 1);
	if ((req->sense[0] & 0x7f) == 0x70) {
		memcpy(req->sense + 15, sks, 3);
		return;
	}
	d = sense_desc(req, 0x02, 0x06);
	if (d)
		memcpy(d + 4, sks, 3);
}

/*
 * PROGRESS INDICATION (SPC-4 4.5.2.4.4) added to sense data that
 * scsi_build_sense_buffer() made (len bytes of it, IET_SENSE_MAX room):
 * the sense-key specific bytes, in the format's place. Its new length.
 */
u32 iet_sense_progress(u8 *sense, u32 len, u16 progress)
{
	u8 *d = sense + len;

	if ((sense[0] & 0x7f) == 0x70) {		/* fixed format */
		sense[15] = 0x80;			/* SKSV */
		put_unaligned_be16(progress, sense + 16);
		return len;
	}
	memset(d, 0, 8);
	d[0] = 0x02;				/* sense key specific */
	d[1] = 0x06;
	d[4] = 0x80;				/* SKSV */
	put_unaligned_be16(progress, d + 5);
	sense[7] += 8;
	return len + 8;
}

/* Copy response data; what exceeds the buffer is cut, but still counted. */
void iet_scsi_set_data(struct iet_scsi_req *req, u32 off, const void *src,
		       u32 len)
{
	iet_buf_copy_to(&req->buf, off, src, len);
}

/*
 * Data-in of at most alloc bytes (the CDB's allocation length) from a
 * command that produces at most max: the buffer holds what both and the
 * EDTL let through, never what an allocation length alone asks for;
 * data_len tells what the command moves (execute lowers it to what it
 * produced).
 */
void iet_scsi_data_in(struct iet_scsi_req *req, u32 alloc, u32 max)
{
	req->buf_len = req->want_read ? min3(alloc, req->edtl, max) : 0;
	req->data_len = alloc;
	req->xfer_len = alloc;
}

/*
 * INVALID FIELD IN CDB, pointing at the byte (and bit, unless < 0) at
 * fault in the sense-key specific bytes (SPC-4 4.5.2.4.2).
 */
void iet_scsi_invalid_field(struct iet_scsi_req *req, u32 byte, int bit)
{
	iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
	sense_field(req, true, byte, bit);
}

/* INVALID FIELD IN PARAMETER LIST, pointing at its byte (and bit). */
void iet_scsi_invalid_param(struct iet_scsi_req *req, u32 byte, int bit)
{
	iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x00);
	sense_field(req, false, byte, bit);
}

/*
 * The parameter list a command's data-out carries, of min bytes at least,
 * in memory of its own (kfree() it): NULL with PARAMETER LIST LENGTH
 * ERROR if shorter, or BUSY without memory.
 */
u8 *iet_scsi_param_list(struct iet_scsi_req *req, u32 min)
{
	u8 *p;

	if (req->buf_len < min) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
		return NULL;
	}
	p = kmalloc(req->buf_len, GFP_NOIO);
	if (!p) {
		req->status = SAM_STAT_BUSY;
		return NULL;
	}
	iet_buf_copy_from(&req->buf, 0, p, req->buf_len);
	return p;
}

/*
 * May the command write? Not to a LUN configured read-only (WRITE
 * PROTECTED), nor while an initiator has set SWP in the control mode page
 * (LOGICAL UNIT SOFTWARE WRITE PROTECTED).
 */
bool iet_scsi_writable(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;

	if (lun->iomode == IET_IOMODE_RO)
		iet_scsi_sense(req, DATA_PROTECT, 0x27, 0x00);
	else if (READ_ONCE(lun->swp))
		iet_scsi_sense(req, DATA_PROTECT, 0x27, 0x02);
	else
		return true;
	return false;
}

/* Refuses a CDB with a bit set that its command does not look at. */
static bool cdb_usage_ok(struct iet_scsi_req *req, const struct iet_opcode *op)
{
	unsigned int i;
	u8 extra;

	for (i = 1; i < op->len; i++) {
		extra = req->cdb[i] & ~op->usage[i];
		if (extra) {
			iet_scsi_invalid_field(req, i, fls(extra) - 1);
			return false;
		}
	}
	/* NACA: ACA is not supported (INQUIRY reports NormACA=0). */
	if (req->cdb[op->len - 1] & 0x04) {
		iet_scsi_invalid_field(req, op->len - 1, 2);
		return false;
	}
	return true;
}

void iet_scsi_parse(struct iet_scsi_req *req)
{
	const struct iet_opcode *op = iet_opcode_find(req->cdb);

	req->status = SAM_STAT_GOOD;
	req->execute = NULL;
	req->execute_nowait = NULL;
	req->blocking = false;
	req->op_flags = op ? op->flags : 0;
	/* INQUIRY, REPORT LUNS, REQUEST SENSE answer for every LUN. */
	if (!op || !(op->flags & IET_OP_ANY_LUN)) {
		if (!req->lun)
			return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x25, 0x00);
		/* Reported when the command runs, in CmdSN order (below). */
		req->check_ua = true;
	}
	/* A command we have, with a service action we have not. */
	if (!op && iet_opcode_has_sa(req->cdb))
		return iet_scsi_invalid_field(req, 1, 4);
	if (!op)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
	if (cdb_usage_ok(req, op))
		op->parse(req);
}

/*
 * A pending unit attention ends the command with CHECK CONDITION, ahead of
 * any other error the command has. Taken only once the command is accepted
 * and its turn has come: a command that is dropped (outside the CmdSN
 * window, a duplicate) or aborted before it runs must not consume it.
 */
void iet_scsi_check_ua(struct iet_scsi_req *req)
{
	u8 asc, ascq;

	if (req->check_ua &&
	    iet_ua_take(req->nexus, req->lun_id, &asc, &ascq))
		iet_scsi_sense(req, UNIT_ATTENTION, asc, ascq);
}

/*
 * A command that uses the backend holds the LUN's backing from the moment
 * it runs (not while it waits in the task set, the write gate or for
 * memory: a peer must not keep a backing open by stalling) to its
 * completion, so that it never closes under it (lun.c); those SPC-4 lets
 * through a standby group use none. Closing already (the target's active
 * groups left that state since the command was checked), it is refused as
 * the group's state now refuses it: false.
 */
bool iet_scsi_hold_backing(struct iet_scsi_req *req)
{
	if (req->holds_io || !req->lun || !req->execute ||
	    req->status != SAM_STAT_GOOD ||
	    (req->op_flags & (IET_OP_ALUA_STANDBY | IET_OP_ALUA_ANY |
			      IET_OP_ANY_LUN)))
		return true;
	if (!iet_lun_io_hold(req->lun, true)) {
		req->holds_io = true;
		return true;
	}
	iet_alua_check(req);
	/* LOGICAL UNIT NOT ACCESSIBLE, ASYMMETRIC ACCESS STATE TRANSITION */
	if (req->status == SAM_STAT_GOOD)
		iet_scsi_sense(req, NOT_READY, 0x04, 0x0a);
	return false;
}

/* Once its backend work is over: a closing backing may go. */
void iet_scsi_release_backing(struct iet_scsi_req *req)
{
	if (req->holds_io) {
		req->holds_io = false;
		percpu_ref_put(&req->lun->io);
	}
}

/* Whether the command reads or writes LUN lun: its own, or another it reaches. */
bool iet_scsi_touches(const struct iet_scsi_req *req, u32 lun)
{
	/* Pairs with the release that publishes also[] (xcopy.c). */
	u8 i, nr = smp_load_acquire(&req->nr_also);

	if (req->lun_id == lun)
		return true;
	for (i = 0; i < nr && i < IET_ALSO_MAX; i++)
		if (req->also[i] == lun)
			return true;
	return false;
}

int iet_scsi_execute(struct iet_scsi_req *req)
{
	/*
	 * Again as it runs, which may be after a wait (task set, write gate,
	 * an I/O thread): a reservation or a port group's state may have
	 * changed meanwhile what its nexus may do.
	 */
	iet_alua_check(req);
	iet_pr_check(req);
	if (req->status != SAM_STAT_GOOD || !req->execute)
		return 0;
	/* Held behind an older ORDERED command, or by one. */
	if (!iet_tset_start(req))
		return IET_ASYNC;
	/* A write parked behind COMPARE AND WRITE runs when it is over. */
	if (req->wnr && !iet_wgate_enter(req))
		return IET_ASYNC;
	if (req->lun && !iet_sbc_still_fits(req)) {
		iet_wgate_exit(req);
		return 0;
	}
	/*
	 * Past the gate, whose barrier pairs with the one a sanitize
	 * operation drains writes with: it waits for this write, or this
	 * write sees it.
	 */
	iet_sanitize_check(req);
	if (req->status != SAM_STAT_GOOD) {
		iet_wgate_exit(req);
		return 0;
	}
	if (!iet_scsi_hold_backing(req)) {
		iet_wgate_exit(req);
		return 0;
	}
	if (req->execute(req) == IET_ASYNC)
		return IET_ASYNC;
	iet_wgate_exit(req);
	return 0;
}
