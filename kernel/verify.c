// SPDX-License-Identifier: GPL-2.0
/*
 * SBC-3 commands that compare or are about the medium: VERIFY and WRITE
 * AND VERIFY (10, 12, 16), COMPARE AND WRITE, ORWRITE(16), PRE-FETCH (10,
 * 16), READ DEFECT DATA (10, 12).
 *
 * The verifying commands run in an I/O thread and read the medium back
 * in chunks of their own (iet_lun_io_sync()), so a compare holds at most
 * one chunk beside the command's data-out buffer, whatever the backend.
 */
#include <linux/highmem.h>
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define ORWRITE_16		0x8b
#define PRE_FETCH_16		0x90
#define READ_DEFECT_DATA_12	0xb7

#define CHUNK		(256U << 10)	/* read back per step */

/* BYTCHK of VERIFY (SBC-3 5.22): what the data-out holds, if anything. */
enum { BYTCHK_NONE, BYTCHK_ALL, BYTCHK_RESERVED, BYTCHK_ONE };

static u8 bytchk(struct iet_scsi_req *req)
{
	return (req->cdb[1] >> 1) & 0x03;
}

/* MISCOMPARE DURING VERIFY OPERATION, at byte off of the data compared. */
static void miscompare(struct iet_scsi_req *req, u32 off)
{
	iet_scsi_sense(req, MISCOMPARE, 0x1d, 0x00);
	iet_scsi_sense_info(req, off);
}

/*
 * Read len bytes at pos back from the medium and compare them with the
 * data-out buffer (how): not at all, all of it, or its one block against
 * each block.
 */
static void check_medium(struct iet_scsi_req *req, loff_t pos, u32 len,
			 u8 how)
{
	struct iet_lun *lun = req->lun;
	u32 bs = lun->block_size, done, n, i, at;
	struct iet_buf m;
	int ret;

	if (!len)
		return;
	if (iet_buf_alloc(&m, min(len, CHUNK))) {
		req->status = SAM_STAT_BUSY;	/* the initiator retries */
		return;
	}
	for (done = 0; done < len; done += n) {
		n = min(len - done, CHUNK);
		ret = iet_lun_io_sync(lun, IET_IO_READ, pos + done, &m, n,
				      false);
		if (ret) {
			iet_scsi_io_error(req, IET_IO_READ, ret);
			break;
		}
		if (how == BYTCHK_ALL) {
			at = iet_buf_cmp(&req->buf, done, &m, 0, n);
			if (at < n) {
				miscompare(req, done + at);
				break;
			}
		} else if (how == BYTCHK_ONE) {
			for (i = 0; i < n; i += bs) {
				at = iet_buf_cmp(&req->buf, 0, &m, i, bs);
				if (at < bs)
					break;
			}
			if (i < n) {
				miscompare(req, done + i + at);
				break;
			}
		}
		cond_resched();
	}
	iet_buf_free(&m);
}

static int verify_execute(struct iet_scsi_req *req)
{
	check_medium(req, req->io.pos, req->io.len, bytchk(req));
	return 0;
}

/*
 * VERIFY of nr blocks at lba: bounded like a read by the MAXIMUM TRANSFER
 * LENGTH of the block limits page, with BYTCHK 01b as much data-out as a
 * write of them, with 11b one block. Like a write, it compares the whole
 * blocks the EDTL lets through.
 */
static void verify_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u8 bits = lun->blkbits, how = bytchk(req);
	u32 avail, nr;
	u64 lba;

	iet_sbc_cdb_range(req->cdb, &lba, &nr);
	if (req->cdb[1] >> 5)		/* VRPROTECT: PROTECT=0 */
		return iet_scsi_invalid_field(req, 1, 7);
	if (how == BYTCHK_RESERVED)
		return iet_scsi_invalid_field(req, 1, 2);
	if (!iet_sbc_lba_ok(req, lba, nr))
		return;
	if ((u64)nr << bits > IET_MAX_XFER)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
	req->lba = lba;
	req->io.pos = lba << bits;
	req->io.len = (u64)nr << bits;
	req->blocking = true;
	req->execute = verify_execute;
	if (how == BYTCHK_NONE || !nr)
		return;
	req->data_out = true;
	req->xfer_len = how == BYTCHK_ALL ? nr << bits : lun->block_size;
	avail = req->want_write ? req->edtl : 0;
	if (avail < req->xfer_len && avail & (lun->block_size - 1))
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x0e, 0x03);
	if (how == BYTCHK_ALL) {
		req->nr_blocks = min(nr, avail >> bits);
		req->io.len = req->nr_blocks << bits;
	} else {
		req->nr_blocks = min(1U, avail >> bits);
		if (!req->nr_blocks)
			req->io.len = 0;
	}
	req->buf_len = req->nr_blocks << bits;
}

/* Written as with FUA, then read back from the medium (and compared). */
static int write_verify_execute(struct iet_scsi_req *req)
{
	u32 len = req->nr_blocks << req->lun->blkbits;
	int ret;

	if (!len)
		return 0;
	ret = iet_lun_io_sync(req->lun, IET_IO_WRITE, req->io.pos, &req->buf,
			      len, true);
	if (ret) {
		iet_scsi_io_error(req, IET_IO_WRITE, ret);
		return 0;
	}
	check_medium(req, req->io.pos, len,
		     bytchk(req) ? BYTCHK_ALL : BYTCHK_NONE);
	return 0;
}

/* WRITE AND VERIFY: a write (SBC-3: BYTCHK is one bit), then a verify. */
static void write_verify_parse(struct iet_scsi_req *req)
{
	u64 lba;
	u32 nr;

	iet_sbc_cdb_range(req->cdb, &lba, &nr);
	iet_sbc_rw_parse(req, lba, nr, true, req->cdb[1] >> 5, false);
	if (req->status != SAM_STAT_GOOD)
		return;
	req->blocking = true;
	req->execute = write_verify_execute;
}

/* ---- COMPARE AND WRITE ------------------------------------------------- */

/* Bytes off..off + len of the data-out buffer into the start of to. */
static void buf_move(struct iet_buf *to, const struct iet_buf *from, u32 off,
		     u32 len)
{
	unsigned int i;
	u32 n;

	for (i = 0; len; i++, off += n, len -= n) {
		void *p = kmap_local_page(to->bvec[i].bv_page);

		n = min_t(u32, len, PAGE_SIZE);
		iet_buf_copy_from(from, off, p, n);
		kunmap_local(p);
	}
}

/*
 * The blocks are read, compared with the first half of the data-out and,
 * if equal, overwritten with its second half, with the LUN's write gate
 * closed on them: atomic against every other write, from any session.
 */
static int caw_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u32 len = req->io.len, at;
	struct iet_buf m;
	int ret;

	if (!len)
		return 0;
	if (iet_buf_alloc(&m, len)) {
		req->status = SAM_STAT_BUSY;
		return 0;
	}
	iet_wgate_lock(lun, req->lba, req->nr_blocks);
	/*
	 * A resize may have cut the LUN short since it was parsed, a
	 * sanitize begun (it takes the gate too: it runs before or after).
	 */
	iet_sanitize_check(req);
	if (req->status != SAM_STAT_GOOD ||
	    !iet_sbc_lba_ok(req, req->lba, req->nr_blocks))
		goto out;
	ret = iet_lun_io_sync(lun, IET_IO_READ, req->io.pos, &m, len, false);
	if (ret) {
		iet_scsi_io_error(req, IET_IO_READ, ret);
		goto out;
	}
	at = iet_buf_cmp(&req->buf, 0, &m, 0, len);
	if (at < len) {
		miscompare(req, at);
		goto out;
	}
	buf_move(&m, &req->buf, len, len);
	ret = iet_lun_io_sync(lun, IET_IO_WRITE, req->io.pos, &m, len,
			      req->io.stable);
	if (ret)
		iet_scsi_io_error(req, IET_IO_WRITE, ret);
out:
	iet_wgate_unlock(lun);
	iet_buf_free(&m);
	return 0;
}

static void caw_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u64 lba = get_unaligned_be64(req->cdb + 2);
	u32 nr = req->cdb[13], avail;

	if (req->cdb[1] >> 5)			/* WRPROTECT: PROTECT=0 */
		return iet_scsi_invalid_field(req, 1, 7);
	if (!iet_sbc_lba_ok(req, lba, nr))
		return;
	if (nr > IET_CAW_MAX)
		return iet_scsi_invalid_field(req, 13, -1);
	if (!iet_scsi_writable(req))
		return;
	req->lba = lba;
	req->io.pos = lba << lun->blkbits;
	req->io.len = nr << lun->blkbits;
	req->io.stable = req->cdb[1] & 0x08 || !READ_ONCE(lun->wce);
	req->blocking = true;
	req->execute = caw_execute;
	/*
	 * The compare data, then the write data, exactly: a Data-Out buffer
	 * of another size (256 blocks wrapped to 0 in the CDB) is refused.
	 */
	req->data_out = true;
	req->xfer_len = 2 * req->io.len;
	avail = req->want_write ? req->edtl : 0;
	if (avail != req->xfer_len)
		return iet_scsi_invalid_field(req, 13, -1);
	if (!nr)
		return;
	req->nr_blocks = nr;
	req->buf_len = req->xfer_len;
}

/* ---- ORWRITE ----------------------------------------------------------- */

/*
 * The blocks are read, ORed with the data-out and written back (SBC-4
 * 5.9), chunk by chunk with the write gate closed on all of them: atomic
 * against every other write, like COMPARE AND WRITE.
 */
static int orwrite_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u32 len = req->io.len, done, n;
	struct iet_buf m;
	int ret = 0;

	if (!len)
		return 0;
	if (iet_buf_alloc(&m, min(len, CHUNK))) {
		req->status = SAM_STAT_BUSY;
		return 0;
	}
	iet_wgate_lock(lun, req->lba, req->nr_blocks);
	/* The same as COMPARE AND WRITE: a resize, a sanitize begun. */
	iet_sanitize_check(req);
	if (req->status != SAM_STAT_GOOD ||
	    !iet_sbc_lba_ok(req, req->lba, req->nr_blocks))
		len = 0;
	for (done = 0; done < len; done += n) {
		n = min(len - done, CHUNK);
		ret = iet_lun_io_sync(lun, IET_IO_READ, req->io.pos + done, &m,
				      n, false);
		if (ret) {
			iet_scsi_io_error(req, IET_IO_READ, ret);
			break;
		}
		iet_buf_or(&m, 0, &req->buf, done, n);
		ret = iet_lun_io_sync(lun, IET_IO_WRITE, req->io.pos + done,
				      &m, n, req->io.stable);
		if (ret) {
			iet_scsi_io_error(req, IET_IO_WRITE, ret);
			break;
		}
		cond_resched();
	}
	iet_wgate_unlock(lun);
	iet_buf_free(&m);
	return 0;
}

/* Checked and bounded as a WRITE(16) is; ORPROTECT is WRPROTECT's place. */
static void orwrite16_parse(struct iet_scsi_req *req)
{
	const u8 *cdb = req->cdb;

	iet_sbc_rw_parse(req, get_unaligned_be64(cdb + 2),
			 get_unaligned_be32(cdb + 10), true, cdb[1] >> 5,
			 cdb[1] & 0x08);
	if (req->status != SAM_STAT_GOOD)
		return;
	req->blocking = true;
	req->execute = orwrite_execute;
	req->wnr = 0;	/* it closes the gate rather than passing it */
}

/* ---- PRE-FETCH --------------------------------------------------------- */

/*
 * The backend starts reading the blocks into its cache, if it has one
 * (fileio: the page cache). GOOD, not CONDITION MET: SBC-3 keeps CONDITION
 * MET for blocks known to be in the cache once the command ends.
 */
static int prefetch_execute(struct iet_scsi_req *req)
{
	req->lun->ops->prefetch(req->lun, req->io.pos, req->io.len);
	return 0;
}

static void prefetch_parse(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u64 lba;
	u32 nr;

	iet_sbc_cdb_range(req->cdb, &lba, &nr);
	if (!iet_sbc_lba_ok(req, lba, nr))
		return;
	req->lba = lba;
	if (!lun->ops->prefetch || !nr)
		return;
	req->io.pos = lba << lun->blkbits;
	req->io.len = (u64)nr << lun->blkbits;
	req->blocking = true;
	req->execute = prefetch_execute;
}

/* ---- READ DEFECT DATA -------------------------------------------------- */

/*
 * As a disk without defects answers: the lists asked for are valid and
 * empty, in the format asked for (SBC-3 5.11, 5.12).
 */
static int read_defect_data_execute(struct iet_scsi_req *req)
{
	bool twelve = req->cdb[0] == READ_DEFECT_DATA_12;
	u8 d[8] = { 0 };
	u32 len = twelve ? 8 : 4;

	d[1] = twelve ? req->cdb[1] & 0x1f : req->cdb[2] & 0x1f;
	iet_scsi_set_data(req, 0, d, len);
	req->data_len = min(req->data_len, len);
	return 0;
}

static void read_defect_data10_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be16(req->cdb + 7), 4);
	req->execute = read_defect_data_execute;
}

static void read_defect_data12_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 6), 8);
	req->execute = read_defect_data_execute;
}

#define GROUP		0x1f
#define CONTROL		0x04	/* NACA, refused: no ACA */
#define VERIFY_FLAGS	0xf6	/* VRPROTECT, DPO, BYTCHK */
#define WV_FLAGS	0xf2	/* WRPROTECT, DPO, BYTCHK */
#define TIMEOUT		60

const struct iet_opcode iet_verify_opcodes[] = {
	{ .op = COMPARE_AND_WRITE, .len = 16, .timeout = TIMEOUT,
	  .parse = caw_parse,
	  .usage = { COMPARE_AND_WRITE, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0, 0, 0, 0xff, GROUP, CONTROL } },
	{ .op = WRITE_VERIFY, .len = 10, .timeout = TIMEOUT,
	  .parse = write_verify_parse,
	  .usage = { WRITE_VERIFY, WV_FLAGS, 0xff, 0xff, 0xff, 0xff, GROUP,
		     0xff, 0xff, CONTROL } },
	{ .op = VERIFY, .flags = IET_OP_PR_READ,
	  .len = 10, .timeout = TIMEOUT, .parse = verify_parse,
	  .usage = { VERIFY, VERIFY_FLAGS, 0xff, 0xff, 0xff, 0xff, GROUP,
		     0xff, 0xff, CONTROL } },
	{ .op = PRE_FETCH, .flags = IET_OP_PR_READ,
	  .len = 10, .timeout = TIMEOUT,
	  .parse = prefetch_parse,
	  .usage = { PRE_FETCH, 0x02, 0xff, 0xff, 0xff, 0xff, GROUP, 0xff,
		     0xff, CONTROL } },
	{ .op = READ_DEFECT_DATA, .flags = IET_OP_PR_READ,
	  .len = 10, .timeout = 10,
	  .parse = read_defect_data10_parse,
	  .usage = { READ_DEFECT_DATA, 0, 0x1f, 0, 0, 0, 0, 0xff, 0xff,
		     CONTROL } },
	{ .op = WRITE_VERIFY_16, .len = 16, .timeout = TIMEOUT,
	  .parse = write_verify_parse,
	  .usage = { WRITE_VERIFY_16, WV_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP,
		     CONTROL } },
	{ .op = VERIFY_16, .flags = IET_OP_PR_READ,
	  .len = 16, .timeout = TIMEOUT,
	  .parse = verify_parse,
	  .usage = { VERIFY_16, VERIFY_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP,
		     CONTROL } },
	{ .op = ORWRITE_16, .len = 16, .timeout = TIMEOUT,
	  .parse = orwrite16_parse,
	  .usage = { ORWRITE_16, 0xfa, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = PRE_FETCH_16, .flags = IET_OP_PR_READ,
	  .len = 16, .timeout = TIMEOUT,
	  .parse = prefetch_parse,
	  .usage = { PRE_FETCH_16, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = WRITE_VERIFY_12, .len = 12, .timeout = TIMEOUT,
	  .parse = write_verify_parse,
	  .usage = { WRITE_VERIFY_12, WV_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = VERIFY_12, .flags = IET_OP_PR_READ,
	  .len = 12, .timeout = TIMEOUT,
	  .parse = verify_parse,
	  .usage = { VERIFY_12, VERIFY_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = READ_DEFECT_DATA_12, .flags = IET_OP_PR_READ,
	  .len = 12, .timeout = 10,
	  .parse = read_defect_data12_parse,
	  .usage = { READ_DEFECT_DATA_12, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0, CONTROL } },
};

const unsigned int iet_verify_nr_opcodes = ARRAY_SIZE(iet_verify_opcodes);
