// SPDX-License-Identifier: GPL-2.0
/*
 * The commands of the device server, in one place: finding a CDB's entry
 * for dispatch, refusing the bits it does not look at, and REPORT
 * SUPPORTED OPERATION CODES (SPC-4 6.35) and REPORT SUPPORTED TASK
 * MANAGEMENT FUNCTIONS (6.36), both told from what dispatch really does.
 */
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define RSOC_DESC	8	/* a command descriptor */
#define RSOC_CTD	12	/* its command timeouts descriptor */

static const struct {
	const struct iet_opcode *ops;
	const unsigned int *nr;
} tables[] = {
	{ iet_sbc_opcodes, &iet_sbc_nr_opcodes },
	{ iet_verify_opcodes, &iet_verify_nr_opcodes },
	{ iet_thin_opcodes, &iet_thin_nr_opcodes },
	{ iet_xcopy_opcodes, &iet_xcopy_nr_opcodes },
	{ iet_pr_opcodes, &iet_pr_nr_opcodes },
	{ iet_sanitize_opcodes, &iet_sanitize_nr_opcodes },
	{ iet_spc_opcodes, &iet_spc_nr_opcodes },
};

/*
 * The entries of each operation code (side by side in one table), for
 * dispatch in one step.
 */
static struct {
	const struct iet_opcode *first;
	u8 nr;
} by_op[256];

void __init iet_opcodes_init(void)
{
	unsigned int t, i;

	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		for (i = 0; i < *tables[t].nr; i++) {
			const struct iet_opcode *op = &tables[t].ops[i];

			if (!by_op[op->op].first)
				by_op[op->op].first = op;
			/* One operation code: in one table, side by side. */
			WARN_ON(by_op[op->op].first + by_op[op->op].nr != op);
			by_op[op->op].nr++;
			WARN_ON(op->usage[0] != op->op || op->len > 16);
		}
	}
}

/* The entry of an operation code and service action, or NULL. */
static const struct iet_opcode *find(u8 opcode, bool by_sa, u8 sa)
{
	const struct iet_opcode *op = by_op[opcode].first;
	unsigned int i;

	for (i = 0; i < by_op[opcode].nr; i++, op++)
		if (!(op->flags & IET_OP_SA) || !by_sa || op->sa == sa)
			return op;
	return NULL;
}

static bool has_sa(u8 opcode)
{
	return by_op[opcode].nr && by_op[opcode].first->flags & IET_OP_SA;
}

const struct iet_opcode *iet_opcode_find(const u8 *cdb)
{
	return find(cdb[0], true, cdb[1] & 0x1f);
}

/* An operation code with service actions, whatever the CDB's is. */
bool iet_opcode_has_sa(const u8 *cdb)
{
	return has_sa(cdb[0]);
}

/* ---- REPORT SUPPORTED OPERATION CODES ---------------------------------- */

static u32 timeouts(const struct iet_opcode *op, u8 *d)
{
	put_unaligned_be16(RSOC_CTD - 2, d);
	/* Nominal processing time: not known ahead (0). */
	put_unaligned_be32(op->timeout, d + 8);
	return RSOC_CTD;
}

static u32 report_all(struct iet_scsi_req *req, bool rctd, u8 *d)
{
	u32 off = 4;
	unsigned int t, i;

	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		for (i = 0; i < *tables[t].nr; i++) {
			const struct iet_opcode *op = &tables[t].ops[i];

			if (op->supported && !op->supported(req->lun))
				continue;
			d[off] = op->op;
			if (op->flags & IET_OP_SA) {
				put_unaligned_be16(op->sa, d + off + 2);
				d[off + 5] |= 0x01;		/* SERVACTV */
			}
			put_unaligned_be16(op->len, d + off + 6);
			if (rctd)
				d[off + 5] |= 0x02;		/* CTDP */
			off += RSOC_DESC;
			if (rctd)
				off += timeouts(op, d + off);
		}
	}
	put_unaligned_be32(off - 4, d);
	return off;
}

static u32 report_one(struct iet_scsi_req *req, bool rctd, u8 *d)
{
	u8 options = req->cdb[2] & 0x07, opcode = req->cdb[3];
	u16 sa = get_unaligned_be16(req->cdb + 4);
	const struct iet_opcode *op = NULL;

	switch (options) {
	case 1:		/* the operation code, which has no service actions */
		if (has_sa(opcode)) {
			iet_scsi_invalid_field(req, 2, 2);
			return 0;
		}
		op = find(opcode, false, 0);
		break;
	case 2:		/* an operation code and one of its service actions */
		if (by_op[opcode].nr && !has_sa(opcode)) {
			iet_scsi_invalid_field(req, 2, 2);
			return 0;
		}
		fallthrough;
	case 3:		/* either */
		if (has_sa(opcode))
			op = sa < 0x20 ? find(opcode, true, sa) : NULL;
		else
			op = find(opcode, false, 0);
		break;
	}
	if (!op || (op->supported && !op->supported(req->lun))) {
		d[1] = 0x01;	/* SUPPORT: not supported */
		return 4;
	}
	d[1] = 0x03 | (rctd ? 0x80 : 0);	/* as the standard says */
	put_unaligned_be16(op->len, d + 2);
	memcpy(d + 4, op->usage, op->len);
	if (op->flags & IET_OP_SA)
		d[5] = (d[5] & ~0x1f) | op->sa;
	return 4 + op->len + (rctd ? timeouts(op, d + 4 + op->len) : 0);
}

static u32 report_max(void)
{
	u32 nr = 0;
	unsigned int t;

	for (t = 0; t < ARRAY_SIZE(tables); t++)
		nr += *tables[t].nr;
	return 4 + nr * (RSOC_DESC + RSOC_CTD);
}

static int report_opcodes_execute(struct iet_scsi_req *req)
{
	bool rctd = req->cdb[2] & 0x80;
	u32 max = report_max(), len;
	u8 *d;

	d = kzalloc(max, GFP_NOIO);
	if (!d) {
		req->status = SAM_STAT_BUSY;
		return -ENOMEM;
	}
	if (req->cdb[2] & 0x07)
		len = report_one(req, rctd, d);
	else
		len = report_all(req, rctd, d);
	if (req->status == SAM_STAT_GOOD) {
		iet_scsi_set_data(req, 0, d, len);
		req->data_len = min(req->data_len, len);
	}
	kfree(d);
	return 0;
}

void iet_opcodes_report_parse(struct iet_scsi_req *req)
{
	if ((req->cdb[2] & 0x07) > 3)
		return iet_scsi_invalid_field(req, 2, 2);
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 6), report_max());
	req->execute = report_opcodes_execute;
}

/* ---- REPORT SUPPORTED TASK MANAGEMENT FUNCTIONS ------------------------ */

static int report_tmf_execute(struct iet_scsi_req *req)
{
	bool repd = req->cdb[2] & 0x80;
	u8 d[16] = { 0 };
	u32 len = repd ? 16 : 4;

	iet_tmf_supported(req->nexus->target, d);
	if (repd)
		d[3] = 0x0c;	/* ADDITIONAL DATA LENGTH */
	iet_scsi_set_data(req, 0, d, len);
	req->data_len = min(req->data_len, len);
	return 0;
}

void iet_tmf_report_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 6), 16);
	req->execute = report_tmf_execute;
}
