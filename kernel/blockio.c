// SPDX-License-Identifier: GPL-2.0
/*
 * The blockio backend: bios straight to a block device (an LVM volume, an
 * MD array, a disk), without the page cache and without an I/O thread. A
 * stable write is REQ_FUA (the block layer turns it into a flush on a
 * device without FUA), SYNCHRONIZE CACHE is REQ_PREFLUSH, and the command
 * ends in the last bio's end_io.
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/slab.h>

#include "iet.h"

struct blockio {
	struct iet_bdev b;
};

static struct block_device *lun_bdev(struct iet_lun *lun)
{
	return ((struct blockio *)lun->private)->b.bdev;
}

static int blockio_attach(struct iet_lun *lun, const char *path)
{
	struct block_device *bdev;
	struct blockio *bd;
	int ret;

	if (!path || !path[0])
		return -EINVAL;
	bd = kzalloc(sizeof(*bd), GFP_KERNEL);
	if (!bd)
		return -ENOMEM;
	/*
	 * Exclusive against every other user (a mount, another target); the
	 * target is the holder, so that a LUN deleted and added back at once
	 * (Proxmox VE's resize) is not refused while the old one finishes.
	 */
	ret = iet_bdev_open(&bd->b, path, lun->iomode != IET_IOMODE_RO,
			    lun->target);
	if (ret)
		goto out_free;
	bdev = bd->b.bdev;
	ret = -EDOM;
	if (lun->block_size < bdev_logical_block_size(bdev))
		goto out_close;
	ret = -ENOSPC;
	if (bdev_nr_bytes(bdev) < lun->block_size)
		goto out_close;
	/* READ CAPACITY may read it meanwhile (a standby LUN opening). */
	WRITE_ONCE(lun->blocks, bdev_nr_bytes(bdev) >> lun->blkbits);
	lun->private = bd;
	/* A discarded range may read as anything: LBPRZ stays 0. */
	lun->thin = bdev_max_discard_sectors(bdev) &&
		    lun->iomode != IET_IOMODE_RO;
	/* Where the device deallocates whole chunks (dm-thin), say so. */
	if (lun->thin && bdev_discard_granularity(bdev) > lun->block_size) {
		lun->unmap_gran = bdev_discard_granularity(bdev) >> lun->blkbits;
		lun->unmap_align = (bdev_discard_alignment(bdev) >> lun->blkbits) %
				   lun->unmap_gran;
	}
	return 0;

out_close:
	iet_bdev_close(&bd->b);
out_free:
	kfree(bd);
	return ret;
}

static void blockio_detach(struct iet_lun *lun)
{
	struct blockio *bd = lun->private;

	iet_bdev_close(&bd->b);
	kfree(bd);
}

/* One I/O less in flight; the last one ends the command. */
static void io_put(struct iet_scsi_req *req)
{
	int error;

	if (!atomic_dec_and_test(&req->io.pending))
		return;
	/* An error is the answer; a bio that would have waited, a retry. */
	error = READ_ONCE(req->io.error);
	if (!error && READ_ONCE(req->io.blocked))
		error = -EAGAIN;
	iet_scsi_io_done(req, error);
}

static void blockio_end_io(struct bio *bio)
{
	struct iet_scsi_req *req = bio->bi_private;

	if (bio->bi_status == BLK_STS_AGAIN && req->io.nowait)
		WRITE_ONCE(req->io.blocked, true);
	else if (bio->bi_status)
		WRITE_ONCE(req->io.error, blk_status_to_errno(bio->bi_status));
	bio_put(bio);
	io_put(req);
}

/* A bio, or NULL where it cannot be had without sleeping (io.nowait). */
static struct bio *new_bio(struct iet_scsi_req *req, struct block_device *bdev,
			   unsigned int nr_vecs, blk_opf_t opf, sector_t sector)
{
	struct bio *bio;

	if (req->io.nowait)
		opf |= REQ_NOWAIT;
	bio = bio_alloc(bdev, nr_vecs, opf,
			req->io.nowait ? GFP_NOWAIT : GFP_NOIO);
	if (!bio) {
		WRITE_ONCE(req->io.blocked, true);
		return NULL;
	}
	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = blockio_end_io;
	bio->bi_private = req;
	atomic_inc(&req->io.pending);
	return bio;
}

/*
 * Whether the command's I/O goes to the device as one bio it takes whole,
 * as REQ_NOWAIT needs: the block layer fails a REQ_NOWAIT bio it would
 * have to split, and a command of several bios failing in part would run
 * again over blocks some of them had written, after a fence or a COMPARE
 * AND WRITE that came between. Within the queue's limits: its transfer
 * and segment sizes, its segment count (one page is at most one segment),
 * no gap its virtual boundary forbids, no chunk to cross.
 */
static bool nowait_fits(struct block_device *bdev,
			const struct iet_scsi_req *req)
{
	struct request_queue *q = bdev_get_queue(bdev);
	unsigned long gap = queue_virt_boundary(q);
	unsigned int i, nr = req->buf.nr;

	if (!bdev_nowait(bdev))
		return false;
	if (req->io.op == IET_IO_FLUSH)
		return true;
	if (req->io.len > (u64)queue_max_sectors(q) << SECTOR_SHIFT ||
	    nr > min_t(unsigned int, queue_max_segments(q), BIO_MAX_VECS) ||
	    q->limits.chunk_sectors)
		return false;
	for (i = 0; i < nr; i++) {
		const struct bio_vec *bv = &req->buf.bvec[i];

		if (bv->bv_len > queue_max_segment_size(q))
			return false;
		if (gap && ((i && (bv->bv_offset & gap)) ||
			    (i + 1 < nr && ((bv->bv_offset + bv->bv_len) & gap))))
			return false;
	}
	return true;
}

/*
 * Bios for the command's buffer, each as large as the block layer takes;
 * the pending count starts at one so that no early completion ends the
 * command before the last bio is out. In the receiving thread (io.nowait)
 * only I/O of one bio the device takes whole starts, REQ_NOWAIT: a full
 * queue or a bio not to be had ends it -EAGAIN, having written nothing,
 * and it runs again in an I/O thread, which may sleep; so does all other
 * I/O, and all I/O to a device that cannot take REQ_NOWAIT (some stacked
 * ones), at once.
 */
static void blockio_submit(struct iet_lun *lun, struct iet_scsi_req *req)
{
	struct block_device *bdev = lun_bdev(lun);
	struct iet_io *io = &req->io;
	sector_t sector = io->pos >> SECTOR_SHIFT;
	struct bio *bio = NULL;
	unsigned int i, left;
	blk_opf_t opf;
	u64 len = io->len;

	atomic_set(&io->pending, 1);
	io->error = 0;
	io->blocked = false;
	if (io->nowait && !nowait_fits(bdev, req)) {
		iet_scsi_io_done(req, -EAGAIN);
		return;
	}
	switch (io->op) {
	case IET_IO_FLUSH:
		/* The whole cache: a flush has no range. */
		bio = new_bio(req, bdev, 0, REQ_OP_WRITE | REQ_PREFLUSH, 0);
		if (bio)
			submit_bio(bio);
		io_put(req);
		return;
	case IET_IO_READ:
		opf = REQ_OP_READ;
		break;
	case IET_IO_WRITE:
	default:
		/* As O_DIRECT writes go: not throttled as writeback is. */
		opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE |
		      (io->stable ? REQ_FUA : 0);
		break;
	}
	left = req->buf.nr;
	for (i = 0; i < req->buf.nr && len; i++) {
		struct bio_vec *bv = &req->buf.bvec[i];
		u32 n = min_t(u64, bv->bv_len, len);

		if (!bio)
			bio = new_bio(req, bdev, min_t(unsigned int, left,
						       BIO_MAX_VECS),
				      opf, sector);
		if (!bio)
			break;
		if (bio_add_page(bio, bv->bv_page, n, bv->bv_offset) != n) {
			submit_bio(bio);
			bio = new_bio(req, bdev, min_t(unsigned int, left,
						       BIO_MAX_VECS),
				      opf, sector);
			if (!bio)
				break;
			/* A fresh bio always takes one page. */
			__bio_add_page(bio, bv->bv_page, n, bv->bv_offset);
		}
		sector += n >> SECTOR_SHIFT;
		len -= n;
		left--;
	}
	if (bio)
		submit_bio(bio);
	io_put(req);
}

/*
 * UNMAP is a discard. WRITE SAME with UNMAP is a write of zeros that lets
 * the device deallocate (REQ_OP_WRITE_ZEROES without NOUNMAP), or zeros
 * written where it cannot.
 */
static int blockio_unmap(struct iet_lun *lun, loff_t pos, u64 len, bool zero)
{
	struct block_device *bdev = lun_bdev(lun);
	sector_t sector = pos >> SECTOR_SHIFT, nr = len >> SECTOR_SHIFT;
	int ret;

	if (zero)
		ret = blkdev_issue_zeroout(bdev, sector, nr, GFP_NOIO, 0);
	else
		ret = blkdev_issue_discard(bdev, sector, nr, GFP_NOIO);
	if (!ret && !READ_ONCE(lun->wce))
		ret = blkdev_issue_flush(bdev);
	return ret;
}

/* The device's size as it is now: a LUN follows its device. */
static int blockio_resize(struct iet_lun *lun, loff_t *size, bool force)
{
	loff_t now = bdev_nr_bytes(lun_bdev(lun));

	if (*size && *size != now)
		return -EOPNOTSUPP;
	*size = now;
	return 0;
}

const struct iet_backend_ops iet_blockio_ops = {
	.name = "blockio",
	.type = IET_LUN_BLOCKIO,
	.storage = true,
	.attach = blockio_attach,
	.detach = blockio_detach,
	.submit = blockio_submit,
	.unmap = blockio_unmap,
	.resize = blockio_resize,
};
