// SPDX-License-Identifier: GPL-2.0
/*
 * SBC-3 logical block provisioning: WRITE SAME (10, 16), UNMAP and GET LBA
 * STATUS. They run in an I/O thread: WRITE SAME writes its block in chunks
 * through iet_lun_io_sync(), or deallocates through the backend's unmap()
 * when the block is zeros and the initiator allows it; UNMAP checks every
 * descriptor before it deallocates any.
 */
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define CHUNK			(256U << 10)	/* written per step */
#define UNMAP_DESC_MAX		256		/* VPD 0xb0 */
#define UNMAP_LBA_MAX		BIT(20)		/* blocks in one UNMAP */
#define LBA_STATUS_MAX		64		/* descriptors in one reply */

/* The most blocks one WRITE SAME writes (VPD 0xb0): as for a WRITE. */
u32 iet_write_same_max(struct iet_lun *lun)
{
	return IET_MAX_XFER >> lun->blkbits;
}

/* The block limits page's WRITE SAME, COMPARE AND WRITE, UNMAP fields. */
void iet_thin_block_limits(struct iet_lun *lun, u8 *d)
{
	d[4] = 0x01;					/* WSNZ */
	d[5] = IET_CAW_MAX;		/* MAXIMUM COMPARE AND WRITE LENGTH */
	put_unaligned_be64(iet_write_same_max(lun), d + 36);
	if (!lun->thin)
		return;
	put_unaligned_be32(UNMAP_LBA_MAX, d + 20);
	put_unaligned_be32(UNMAP_DESC_MAX, d + 24);
	/*
	 * OPTIMAL UNMAP GRANULARITY: what the device deallocates as a whole
	 * (a thin pool's chunk), or else a physical block; UGAVALID, and where
	 * the first granule starts.
	 */
	put_unaligned_be32(max(1U << lun->pbexp, lun->unmap_gran), d + 28);
	put_unaligned_be32(0x80000000 | lun->unmap_align, d + 32);
}

/* ---- WRITE SAME -------------------------------------------------------- */

static bool block_is_zero(struct iet_scsi_req *req)
{
	static const u8 zeros[64];
	u32 bs = req->lun->block_size, off;
	u8 part[64];

	for (off = 0; off < bs; off += sizeof(part)) {
		iet_buf_copy_from(&req->buf, off, part, sizeof(part));
		if (memcmp(part, zeros, sizeof(part)))
			return false;
	}
	return true;
}

/* The block (or zeros, for NDOB) written to every block of the range. */
static int write_same_blocks(struct iet_scsi_req *req, bool ndob)
{
	struct iet_lun *lun = req->lun;
	u32 bs = lun->block_size, n, off;
	u64 len = req->io.len, done;
	struct iet_buf w;
	u8 *block;
	int ret = 0;

	if (iet_buf_alloc(&w, min_t(u64, len, CHUNK))) {
		req->status = SAM_STAT_BUSY;
		return 0;
	}
	block = kzalloc(bs, GFP_NOIO);
	if (!block) {
		iet_buf_free(&w);
		req->status = SAM_STAT_BUSY;
		return 0;
	}
	if (!ndob)
		iet_buf_copy_from(&req->buf, 0, block, bs);
	for (off = 0; off < w.len; off += bs)
		iet_buf_copy_to(&w, off, block, bs);
	kfree(block);
	for (done = 0; done < len && !ret; done += n) {
		n = min_t(u64, len - done, w.len);
		ret = iet_lun_io_sync(lun, IET_IO_WRITE, req->io.pos + done, &w,
				      n, !READ_ONCE(lun->wce));
		cond_resched();
	}
	iet_buf_free(&w);
	return ret;
}

static int write_same_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	bool ndob = req->cdb[0] == WRITE_SAME_16 && req->cdb[1] & 0x01;
	bool unmap = req->cdb[1] & 0x08;
	int ret;

	if (unmap && (ndob || block_is_zero(req)))
		ret = lun->ops->unmap(lun, req->io.pos, req->io.len, true);
	else
		ret = write_same_blocks(req, ndob);
	if (ret)
		iet_scsi_io_error(req, IET_IO_WRITE, ret);
	return 0;
}

static void write_same_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	bool ndob = req->cdb[0] == WRITE_SAME_16 && req->cdb[1] & 0x01;
	u32 avail, nr;
	u64 lba;

	iet_sbc_cdb_range(req->cdb, &lba, &nr);
	if (req->cdb[1] >> 5)			/* WRPROTECT: PROTECT=0 */
		return iet_scsi_invalid_field(req, 1, 7);
	if (req->cdb[1] & 0x10)			/* ANCHOR: ANC_SUP=0 */
		return iet_scsi_invalid_field(req, 1, 4);
	if (!iet_sbc_lba_ok(req, lba, nr) || !iet_scsi_writable(req))
		return;
	if (req->cdb[1] & 0x08 && !lun->thin)	/* UNMAP: LBPWS=0 */
		return iet_scsi_invalid_field(req, 1, 3);
	if (!nr)				/* WSNZ=1 */
		return iet_scsi_invalid_field(req, req->cdb[0] == WRITE_SAME ?
					      7 : 10, -1);
	if (nr > iet_write_same_max(lun))
		return iet_scsi_invalid_field(req, req->cdb[0] == WRITE_SAME ?
					      7 : 10, -1);
	req->lba = lba;
	req->io.pos = lba << lun->blkbits;
	req->io.len = (u64)nr << lun->blkbits;
	req->blocking = true;
	req->execute = write_same_execute;
	req->wlba = lba;
	req->wnr = nr;
	if (ndob)
		return;
	req->data_out = true;
	req->xfer_len = lun->block_size;
	avail = req->want_write ? req->edtl : 0;
	/*
	 * Its one block exactly, as for COMPARE AND WRITE: without it there
	 * is nothing to write, and a larger Data-Out buffer was built for
	 * some other command than the one the CDB says.
	 */
	if (avail != lun->block_size)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x0e, 0x03);
	req->nr_blocks = 1;
	req->buf_len = lun->block_size;
}

/* ---- UNMAP ------------------------------------------------------------- */

/*
 * The parameter list (SBC-3 5.28.2): checked whole, every range on the
 * medium and the limits of the block limits page kept, before the first
 * range is deallocated.
 */
static int unmap_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u32 len = req->buf_len, nr, i, count;
	u64 lba, total = 0;
	u8 *p;
	int ret = 0;

	if (!len)
		return 0;
	p = iet_scsi_param_list(req, 8);
	if (!p)
		return 0;
	nr = get_unaligned_be16(p + 2) / 16;
	if (get_unaligned_be16(p) + 2 > len || 8 + nr * 16 > len ||
	    nr > UNMAP_DESC_MAX) {
		/* INVALID FIELD IN PARAMETER LIST */
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x00);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		lba = get_unaligned_be64(p + 8 + 16 * i);
		count = get_unaligned_be32(p + 8 + 16 * i + 8);
		if (!iet_sbc_lba_ok(req, lba, count))
			goto out;
		total += count;
	}
	if (total > UNMAP_LBA_MAX) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x26, 0x00);
		goto out;
	}
	for (i = 0; i < nr && !ret; i++) {
		lba = get_unaligned_be64(p + 8 + 16 * i);
		count = get_unaligned_be32(p + 8 + 16 * i + 8);
		if (count)
			ret = lun->ops->unmap(lun, lba << lun->blkbits,
					      (u64)count << lun->blkbits, false);
	}
	if (ret)
		iet_scsi_io_error(req, IET_IO_WRITE, ret);
out:
	kfree(p);
	return 0;
}

static void unmap_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u32 len = get_unaligned_be16(req->cdb + 7);

	/*
	 * Write protection first; then a LUN that is not thin answers as a
	 * disk without the command (LBPU=0).
	 */
	if (!iet_scsi_writable(req))
		return;
	if (!lun->thin)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
	if (req->cdb[1] & 0x01)			/* ANCHOR: ANC_SUP=0 */
		return iet_scsi_invalid_field(req, 1, 0);
	req->blocking = true;
	req->execute = unmap_execute;
	req->wnr = IET_WGATE_ALL;		/* its ranges are in its data */
	req->data_out = true;
	req->xfer_len = len;
	/* Whatever the initiator sends past what may be valid is dropped. */
	req->buf_len = min3(len, req->want_write ? req->edtl : 0,
			    8U + 16 * UNMAP_DESC_MAX);
}

/* ---- GET LBA STATUS ---------------------------------------------------- */

static int get_lba_status_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u32 alloc = req->data_len, n = 0, max;
	u64 lba = req->lba, nr, blocks = READ_ONCE(lun->blocks);
	u8 d[16];
	bool mapped = true;
	loff_t end;
	int ret;

	max = alloc < 24 ? 1 : min((alloc - 8) / 16, (u32)LBA_STATUS_MAX);
	while (n < max && lba < blocks) {
		end = LLONG_MAX;
		if (lun->ops->mapped) {
			ret = lun->ops->mapped(lun, lba << lun->blkbits, &end,
					       &mapped);
			if (ret) {
				iet_scsi_io_error(req, IET_IO_READ, ret);
				return 0;
			}
		}
		/* A block partly mapped is mapped. */
		if (mapped)
			nr = DIV_ROUND_UP_ULL((u64)end, lun->block_size) - lba;
		else
			nr = ((u64)end >> lun->blkbits) - lba;
		if (!nr) {
			mapped = true;
			nr = 1;
		}
		nr = min3(nr, blocks - lba, (u64)U32_MAX);
		memset(d, 0, sizeof(d));
		put_unaligned_be64(lba, d);
		put_unaligned_be32(nr, d + 8);
		d[12] = mapped ? 0 : 1;		/* mapped or deallocated */
		iet_scsi_set_data(req, 8 + 16 * n, d, sizeof(d));
		lba += nr;
		n++;
	}
	memset(d, 0, 8);
	put_unaligned_be32(4 + 16 * n, d);
	iet_scsi_set_data(req, 0, d, 8);
	req->data_len = min(alloc, 8 + 16 * n);
	return 0;
}

/* In sbc.c's table, beside READ CAPACITY(16): one operation code. */
void iet_get_lba_status_parse(struct iet_scsi_req *req)
{
	u64 lba = get_unaligned_be64(req->cdb + 2);
	u32 alloc = get_unaligned_be32(req->cdb + 10);

	if (!req->lun->thin)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
	if (lba >= READ_ONCE(req->lun->blocks))
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x21, 0x00);
	req->lba = lba;
	req->blocking = true;
	iet_scsi_data_in(req, alloc, 8 + 16 * LBA_STATUS_MAX);
	req->execute = get_lba_status_execute;
}

#define GROUP		0x1f
#define CONTROL		0x04	/* NACA, refused: no ACA */
#define TIMEOUT		60

const struct iet_opcode iet_thin_opcodes[] = {
	{ .op = WRITE_SAME, .len = 10, .timeout = TIMEOUT,
	  .parse = write_same_parse,
	  .usage = { WRITE_SAME, 0xf8, 0xff, 0xff, 0xff, 0xff, GROUP, 0xff,
		     0xff, CONTROL } },
	{ .op = UNMAP, .len = 10, .timeout = TIMEOUT, .parse = unmap_parse,
	  .usage = { UNMAP, 0x01, 0, 0, 0, 0, GROUP, 0xff, 0xff, CONTROL } },
	{ .op = WRITE_SAME_16, .len = 16, .timeout = TIMEOUT,
	  .parse = write_same_parse,
	  .usage = { WRITE_SAME_16, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP, CONTROL } },
};

const unsigned int iet_thin_nr_opcodes = ARRAY_SIZE(iet_thin_opcodes);

