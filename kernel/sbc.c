// SPDX-License-Identifier: GPL-2.0
/*
 * SBC-3 block commands: READ and WRITE (6, 10, 12, 16), READ CAPACITY (10,
 * 16), SYNCHRONIZE CACHE (10, 16). Only whole blocks reach a backend.
 */
#include <linux/completion.h>
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

/* The command's I/O: the backend ends it in iet_scsi_io_done(). */
static int io_execute(struct iet_scsi_req *req)
{
	if (req->io.op != IET_IO_FLUSH && !req->io.len)
		return 0;
	if (!req->t_submit)
		req->t_submit = ktime_get_ns();
	req->lun->ops->submit(req->lun, req);
	return IET_ASYNC;
}

/* A read served from memory, whole, without sleeping; else -EAGAIN. */
static int read_cached_execute(struct iet_scsi_req *req)
{
	int ret;

	req->t_submit = ktime_get_ns();
	ret = req->lun->ops->read_cached(req->lun, req);
	if (!ret) {
		req->t_backend = ktime_get_ns();
		return 0;
	}
	/* An I/O thread reads it: the backend's time is counted from there. */
	req->t_submit = 0;
	/* On an error, the I/O thread reads it all and reports it. */
	if (ret != -EAGAIN)
		req->io.done = 0;
	return -EAGAIN;
}

/* How a backend's error reads in sense data, per kind of I/O. */
void iet_scsi_io_error(struct iet_scsi_req *req, enum iet_io_op op, int error)
{
	/* A backing closed (its port groups left the active states): retry. */
	if (error == -ENXIO)
		return iet_scsi_sense(req, NOT_READY, 0x04, 0x0a);
	switch (op) {
	case IET_IO_NONE:
	case IET_IO_READ:
		iet_scsi_sense(req, MEDIUM_ERROR, 0x11, 0x00);
		break;
	case IET_IO_WRITE:
	case IET_IO_FLUSH:
		if (error == -EROFS)
			iet_scsi_sense(req, DATA_PROTECT, 0x27, 0x00);
		else if (error == -ENOSPC || error == -EDQUOT)
			/* SPACE ALLOCATION FAILED WRITE PROTECT */
			iet_scsi_sense(req, DATA_PROTECT, 0x27, 0x07);
		else
			iet_scsi_sense(req, MEDIUM_ERROR, 0x0c, 0x00);
		break;
	}
}

void iet_scsi_io_done(struct iet_scsi_req *req, int error)
{
	if (req->io.end) {
		req->io.end(req, error);
		return;
	}
	req->t_backend = ktime_get_ns();
	iet_wgate_exit(req);
	if (error == -EAGAIN && req->io.nowait) {
		iet_scsi_io_again(req);
		return;
	}
	if (error)
		iet_scsi_io_error(req, req->io.op, error);
	iet_scsi_done(req);
}

/* An I/O of iet_lun_io_sync(), made like a command's for the backend. */
struct sync_io {
	struct iet_scsi_req req;
	struct completion done;
	int error;
};

static void sync_io_end(struct iet_scsi_req *req, int error)
{
	struct sync_io *s = container_of(req, struct sync_io, req);

	s->error = error;
	complete(&s->done);
}

/*
 * One I/O of len bytes of buf (NULL: a flush) at pos, waited for, on a
 * backing that stays open meanwhile (iet_lun_io_sync(), or close_work).
 * Any backend, blocking or not.
 */
int iet_backend_io_sync(struct iet_lun *lun, enum iet_io_op op, loff_t pos,
			struct iet_buf *buf, u32 len, bool stable)
{
	struct sync_io *s;
	int ret;

	might_sleep();
	s = kzalloc(sizeof(*s), GFP_NOIO);
	if (!s)
		return -ENOMEM;
	init_completion(&s->done);
	s->req.lun = lun;
	if (buf)
		s->req.buf = *buf;	/* the pages stay the caller's */
	s->req.io.op = op;
	s->req.io.pos = pos;
	s->req.io.len = len;
	s->req.io.stable = stable;
	s->req.io.end = sync_io_end;
	lun->ops->submit(lun, &s->req);
	wait_for_completion(&s->done);
	ret = s->error;
	kfree(s);
	return ret;
}

/*
 * One I/O of a command that runs in an I/O thread and moves data in steps
 * of its own (VERIFY and the like), or reaches another LUN (EXTENDED
 * COPY): -ENXIO while the LUN's backing is closed.
 */
int iet_lun_io_sync(struct iet_lun *lun, enum iet_io_op op, loff_t pos,
		    struct iet_buf *buf, u32 len, bool stable)
{
	int ret = iet_lun_io_hold(lun, false);

	if (ret)
		return ret;
	ret = iet_backend_io_sync(lun, op, pos, buf, len, stable);
	percpu_ref_put(&lun->io);
	return ret;
}

/*
 * The LBA and the number of blocks of a 10-, 12- or 16-byte SBC CDB, where
 * each length keeps them (READ, WRITE, VERIFY, WRITE SAME and the like).
 */
void iet_sbc_cdb_range(const u8 *cdb, u64 *lba, u32 *nr)
{
	switch (cdb[0] >> 5) {
	case 4:				/* 16 bytes */
		*lba = get_unaligned_be64(cdb + 2);
		*nr = get_unaligned_be32(cdb + 10);
		break;
	case 5:				/* 12 bytes */
		*lba = get_unaligned_be32(cdb + 2);
		*nr = get_unaligned_be32(cdb + 6);
		break;
	default:			/* 10 bytes */
		*lba = get_unaligned_be32(cdb + 2);
		*nr = get_unaligned_be16(cdb + 7);
		break;
	}
}

/* Is [lba, lba + nr) on the medium? */
static bool range_ok(struct iet_scsi_req *req, u64 lba, u64 nr)
{
	/* Once: a resize may change it meanwhile. */
	u64 blocks = READ_ONCE(req->lun->blocks);

	if (lba > blocks || nr > blocks - lba) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x21, 0x00);
		return false;
	}
	return true;
}

bool iet_sbc_lba_ok(struct iet_scsi_req *req, u64 lba, u32 nr)
{
	return range_ok(req, lba, nr);
}

/*
 * Again as the command runs, past the write gate: a resize may have cut
 * the LUN short since it was parsed, and what it writes (the gate's
 * blocks) or reads (its I/O) must still be on the medium.
 */
bool iet_sbc_still_fits(struct iet_scsi_req *req)
{
	u8 bits = req->lun->blkbits;

	if (req->wnr && req->wnr != IET_WGATE_ALL)
		return range_ok(req, req->wlba, req->wnr);
	if (req->io.op == IET_IO_READ && req->io.len)
		return range_ok(req, req->io.pos >> bits,
				DIV_ROUND_UP_ULL(req->io.len, 1U << bits));
	return true;
}

/*
 * A READ or WRITE of nr blocks at lba. The EDTL decides how much really
 * moves: a write stores the whole blocks it was given, a read reads the
 * whole blocks covering what is asked for (libiscsi's residual tests).
 */
void iet_sbc_rw_parse(struct iet_scsi_req *req, u64 lba, u32 nr, bool write,
		      u8 protect, bool fua)
{
	struct iet_lun *lun = req->lun;
	u8 bits = lun->blkbits;
	u32 avail;

	if (protect)	/* INQUIRY says PROTECT=0 */
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
	if (!iet_sbc_lba_ok(req, lba, nr))
		return;
	if ((u64)nr << bits > IET_MAX_XFER)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
	if (write && !iet_scsi_writable(req))
		return;
	req->lba = lba;
	req->fua = fua;
	req->xfer_len = nr << bits;
	req->blocking = lun->ops->blocking;
	req->io.pos = lba << bits;
	req->io.stable = fua || !READ_ONCE(lun->wce);
	req->execute = io_execute;
	if (write) {
		avail = req->want_write ? req->edtl : 0;
		req->data_out = true;
		if (avail < req->xfer_len && avail & (lun->block_size - 1)) {
			/* Part of a block cannot be written. */
			return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x0e, 0x03);
		}
		req->nr_blocks = min(nr, avail >> bits);
		req->io.op = IET_IO_WRITE;
		req->wlba = lba;
		req->wnr = req->nr_blocks;
	} else {
		avail = req->want_read ? req->edtl : 0;
		req->nr_blocks = min_t(u32, nr,
				       DIV_ROUND_UP(avail, lun->block_size));
		req->data_len = req->xfer_len;
		req->io.op = IET_IO_READ;
		/* Small reads only: the delivering thread has others to serve. */
		if (lun->ops->read_cached &&
		    req->nr_blocks << bits <= IET_CACHED_READ_MAX)
			req->execute_nowait = read_cached_execute;
	}
	req->buf_len = req->nr_blocks << bits;
	req->io.len = req->buf_len;
}

static int read_capacity10_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u8 d[8];

	put_unaligned_be32(min_t(u64, READ_ONCE(lun->blocks) - 1, 0xffffffff), d);
	put_unaligned_be32(lun->block_size, d + 4);
	iet_scsi_set_data(req, 0, d, sizeof(d));
	return 0;
}

static int read_capacity16_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	u8 d[32] = { 0 };

	put_unaligned_be64(READ_ONCE(lun->blocks) - 1, d);
	put_unaligned_be32(lun->block_size, d + 8);
	d[13] = lun->pbexp;	/* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT */
	if (lun->thin)
		d[14] = 0x80 | (lun->lbprz ? 0x40 : 0);	/* LBPME, LBPRZ */
	iet_scsi_set_data(req, 0, d, sizeof(d));
	req->data_len = min_t(u32, req->data_len, sizeof(d));
	return 0;
}

static void sync_cache_parse(struct iet_scsi_req *req)
{
	u64 lba;
	u32 nr;

	iet_sbc_cdb_range(req->cdb, &lba, &nr);
	if (!iet_sbc_lba_ok(req, lba, nr))
		return;
	req->lba = lba;
	req->xfer_len = 0;
	req->data_len = 0;
	req->buf_len = 0;
	req->nr_blocks = 0;
	req->execute = io_execute;
	req->blocking = req->lun->ops->blocking;
	req->io.op = IET_IO_FLUSH;
	req->io.pos = lba << req->lun->blkbits;
	req->io.len = (u64)nr << req->lun->blkbits;
}

static void rw6_parse(struct iet_scsi_req *req)
{
	const u8 *cdb = req->cdb;

	iet_sbc_rw_parse(req, get_unaligned_be24(cdb + 1) & 0x1fffff,
			 cdb[4] ?: 256, cdb[0] == WRITE_6, 0, false);
}

/* READ and WRITE (10, 12, 16) */
static void rw_parse(struct iet_scsi_req *req)
{
	const u8 *cdb = req->cdb;
	u64 lba;
	u32 nr;

	iet_sbc_cdb_range(cdb, &lba, &nr);
	iet_sbc_rw_parse(req, lba, nr, cdb[0] == WRITE_10 ||
			 cdb[0] == WRITE_12 || cdb[0] == WRITE_16,
			 cdb[1] >> 5, cdb[1] & 0x08);
}

static void read_capacity10_parse(struct iet_scsi_req *req)
{
	/* Without PMI the LBA field must be zero. */
	if (!(req->cdb[8] & 0x01) && get_unaligned_be32(req->cdb + 2))
		return iet_scsi_invalid_field(req, 2, -1);
	iet_scsi_data_in(req, 8, 8);
	req->execute = read_capacity10_execute;
}

static void read_capacity16_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, get_unaligned_be32(req->cdb + 10), 32);
	req->execute = read_capacity16_execute;
}

/*
 * What the CDBs of reads and writes carry: RDPROTECT or WRPROTECT (refused
 * unless 0), DPO (a hint, taken), FUA, FUA_NV (no non-volatile cache: as
 * good as done), and a group number, which only names a statistics group.
 */
#define RW_FLAGS	0xfa
#define GROUP		0x1f
#define CONTROL		0x04	/* NACA, refused: no ACA */
#define RW_TIMEOUT	30
#define SYNC_TIMEOUT	60

const struct iet_opcode iet_sbc_opcodes[] = {
	{ .op = READ_6, .flags = IET_OP_PR_READ,
	  .len = 6, .timeout = RW_TIMEOUT, .parse = rw6_parse,
	  .usage = { READ_6, 0x1f, 0xff, 0xff, 0xff, CONTROL } },
	{ .op = WRITE_6, .len = 6, .timeout = RW_TIMEOUT, .parse = rw6_parse,
	  .usage = { WRITE_6, 0x1f, 0xff, 0xff, 0xff, CONTROL } },
	/*
	 * In every ALUA state, as LIO and SCST answer it: a standby path's
	 * disk has its size (SPC-4 5.16.2.4.4 lets a device server support
	 * more than the list), and a multipath map takes it.
	 */
	{ .op = READ_CAPACITY, .flags = IET_OP_PR_FREE | IET_OP_ALUA_ANY,
	  .len = 10, .timeout = 10,
	  .parse = read_capacity10_parse,
	  .usage = { READ_CAPACITY, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01,
		     CONTROL } },
	{ .op = READ_10, .flags = IET_OP_PR_READ,
	  .len = 10, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { READ_10, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, GROUP, 0xff,
		     0xff, CONTROL } },
	{ .op = WRITE_10, .len = 10, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { WRITE_10, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, GROUP, 0xff,
		     0xff, CONTROL } },
	/*
	 * IMMED: answered once the cache is flushed, which is allowed;
	 * SYNC_NV (obsolete): every flush reaches stable storage.
	 */
	{ .op = SYNCHRONIZE_CACHE, .flags = IET_OP_PR_READ,
	  .len = 10, .timeout = SYNC_TIMEOUT,
	  .parse = sync_cache_parse,
	  .usage = { SYNCHRONIZE_CACHE, 0x06, 0xff, 0xff, 0xff, 0xff, GROUP,
		     0xff, 0xff, CONTROL } },
	{ .op = READ_16, .flags = IET_OP_PR_READ,
	  .len = 16, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { READ_16, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = WRITE_16, .len = 16, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { WRITE_16, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP, CONTROL } },
	{ .op = SYNCHRONIZE_CACHE_16, .flags = IET_OP_PR_READ,
	  .len = 16, .timeout = SYNC_TIMEOUT,
	  .parse = sync_cache_parse,
	  .usage = { SYNCHRONIZE_CACHE_16, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, GROUP,
		     CONTROL } },
	{ .op = SERVICE_ACTION_IN_16, .sa = SAI_READ_CAPACITY_16,
	  .flags = IET_OP_SA | IET_OP_PR_FREE | IET_OP_ALUA_ANY, .len = 16,
	  .timeout = 10, .parse = read_capacity16_parse,
	  .usage = { SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		     CONTROL } },
	{ .op = SERVICE_ACTION_IN_16, .sa = SAI_GET_LBA_STATUS,
	  .flags = IET_OP_SA | IET_OP_PR_READ, .len = 16, .timeout = 60,
	  .parse = iet_get_lba_status_parse,
	  .usage = { SERVICE_ACTION_IN_16, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, CONTROL } },
	{ .op = READ_12, .flags = IET_OP_PR_READ,
	  .len = 12, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { READ_12, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, GROUP, CONTROL } },
	{ .op = WRITE_12, .len = 12, .timeout = RW_TIMEOUT, .parse = rw_parse,
	  .usage = { WRITE_12, RW_FLAGS, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, GROUP, CONTROL } },
};

const unsigned int iet_sbc_nr_opcodes = ARRAY_SIZE(iet_sbc_opcodes);
