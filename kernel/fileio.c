// SPDX-License-Identifier: GPL-2.0
/*
 * The fileio backend: synchronous VFS reads and writes on a regular file or
 * a block device, through the page cache: a write-through (or FUA) write
 * is a buffered write with RWF_DSYNC, or direct I/O with the module
 * parameter direct_writes.
 */
#include <linux/blkdev.h>
#include <linux/falloc.h>
#include <linux/fadvise.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/stat.h>
#include <linux/swap.h>
#include <linux/uio.h>

#include "iet.h"

/*
 * A write-through write must never be answered GOOD unless its own data
 * reached stable storage. A buffered write learns of a writeback error
 * only through the file's errseq cursor, which reports every error since
 * the cursor's last look, whoever's write it was: through one shared file,
 * thread B's sync could take the EIO of thread A's write and A would be
 * answered GOOD. So each stable write (and each flush) borrows an open
 * file of its own from a stack of them: an error then reaches every writer
 * whose sync could have lost data (one that did not may hear of it too,
 * never the reverse).
 *
 * With the module parameter direct_writes, stable writes go through an
 * O_DIRECT file with RWF_DSYNC instead, where the file allows: the error
 * is exactly that of the write's own bios. It is not the default because
 * it serves worse where fileio is chosen for the page cache: measured on a
 * RAM disk (make bench, 6.1), 4 KiB random writes at QD32 ran at 0.65x the
 * buffered way, and reads after them at half the rate, their pages having
 * been dropped from the cache; only 128 KiB sequential writes gained (1.1x).
 */
struct fileio {
	struct file *file;		/* reads, cached writes */
	struct file *direct;		/* stable writes; NULL: a handle each */
	spinlock_t lock;		/* protects spare and nr_spare */
	unsigned int nr_spare;
	struct file *spare[IET_MAX_WTHREADS];
};

static struct file *fileio_file(struct iet_lun *lun)
{
	return ((struct fileio *)lun->private)->file;
}

static struct file *handle_get(struct fileio *fio)
{
	struct file *file = NULL;

	spin_lock(&fio->lock);
	if (fio->nr_spare)
		file = fio->spare[--fio->nr_spare];
	spin_unlock(&fio->lock);
	if (file)
		return file;
	return dentry_open(&fio->file->f_path, fio->file->f_flags,
			   fio->file->f_cred);
}

static void handle_put(struct fileio *fio, struct file *file)
{
	spin_lock(&fio->lock);
	if (fio->nr_spare < ARRAY_SIZE(fio->spare)) {
		fio->spare[fio->nr_spare++] = file;
		file = NULL;
	}
	spin_unlock(&fio->lock);
	if (file)
		fput(file);
}

/* Whether whole blocks of the LUN meet the file's direct I/O alignment. */
static bool direct_aligned(struct iet_lun *lun, struct file *file)
{
	struct inode *inode = file->f_mapping->host;
	struct kstat st;

	if (S_ISBLK(inode->i_mode))
		return !(lun->block_size %
			 bdev_logical_block_size(I_BDEV(inode)));
	if (vfs_getattr(&file->f_path, &st, STATX_DIOALIGN,
			AT_STATX_SYNC_AS_STAT) ||
	    !(st.result_mask & STATX_DIOALIGN) || !st.dio_offset_align)
		return false;
	/* Buffers are whole pages: only the offset alignment can fail. */
	return !(lun->block_size % st.dio_offset_align) &&
	       st.dio_mem_align <= PAGE_SIZE;
}

static bool direct_writes;
module_param(direct_writes, bool, 0644);
MODULE_PARM_DESC(direct_writes,
		 "fileio: stable writes by direct I/O where the file allows (default N; taken when a LUN is added)");

/* The O_DIRECT file for stable writes, or NULL where there can be none. */
static struct file *direct_open(struct iet_lun *lun, struct file *file)
{
	struct file *direct;

	if (!READ_ONCE(direct_writes) || lun->iomode == IET_IOMODE_RO ||
	    !direct_aligned(lun, file))
		return NULL;
	direct = dentry_open(&file->f_path, file->f_flags | O_DIRECT,
			     file->f_cred);
	return IS_ERR(direct) ? NULL : direct;
}

static int fileio_attach(struct iet_lun *lun, const char *path)
{
	int flags = lun->iomode == IET_IOMODE_RO ? O_RDONLY : O_RDWR;
	struct fileio *fio;
	struct inode *inode;
	struct file *file;
	loff_t size;

	if (!path || !path[0])
		return -EINVAL;
	/* Reads never touch atime: no journal handle in the read thread. */
	file = filp_open(path, flags | O_LARGEFILE | O_NOATIME, 0);
	if (PTR_ERR(file) == -EPERM)	/* O_NOATIME needs the owner */
		file = filp_open(path, flags | O_LARGEFILE, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	/* For a block device, the mapping's host is the device's inode. */
	inode = file->f_mapping->host;
	if (!S_ISREG(inode->i_mode) && !S_ISBLK(inode->i_mode)) {
		filp_close(file, NULL);
		return -ENOTBLK;
	}
	if (!(file->f_mode & FMODE_CAN_READ) ||
	    (flags == O_RDWR && !(file->f_mode & FMODE_CAN_WRITE))) {
		filp_close(file, NULL);
		return -EINVAL;
	}
	size = i_size_read(inode);
	if (size < lun->block_size) {
		filp_close(file, NULL);
		return -ENOSPC;
	}
	fio = kzalloc(sizeof(*fio), GFP_KERNEL);
	if (!fio) {
		filp_close(file, NULL);
		return -ENOMEM;
	}
	spin_lock_init(&fio->lock);
	fio->file = file;
	fio->direct = direct_open(lun, file);
	if (lun->iomode != IET_IOMODE_RO)
		pr_info("target %u lun %u: stable writes by %s\n",
			lun->target->tid, lun->lun,
			fio->direct ? "direct I/O" : "buffered I/O and a sync each");
	/* READ CAPACITY may read it meanwhile (a standby LUN opening). */
	WRITE_ONCE(lun->blocks, size >> lun->blkbits);
	lun->private = fio;
	/* Holes in a regular file: deallocated, and read as zeros. */
	lun->thin = S_ISREG(inode->i_mode) && file->f_op->fallocate &&
		    lun->iomode != IET_IOMODE_RO;
	lun->lbprz = lun->thin;
	return 0;
}

static void fileio_detach(struct iet_lun *lun)
{
	struct fileio *fio = lun->private;

	while (fio->nr_spare)
		fput(fio->spare[--fio->nr_spare]);
	if (fio->direct)
		fput(fio->direct);
	filp_close(fio->file, NULL);
	kfree(fio);
}

/* The rest of the read, from where a cached read stopped. */
static int fileio_read(struct iet_lun *lun, struct iet_scsi_req *req)
{
	struct file *file = fileio_file(lun);
	loff_t pos = req->io.pos + req->io.done;
	struct iov_iter iter;
	ssize_t ret;

	iet_buf_iter(&req->buf, &iter, ITER_DEST, req->io.done,
		     req->io.len - req->io.done);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_read(file, &iter, &pos, 0);
		if (ret < 0)
			return ret;
		if (!ret)	/* the file shrank under us */
			return -EIO;
	}
	return 0;
}

/*
 * What the page cache holds, without ever sleeping: IOCB_NOWAIT does not
 * wait for locks or pages, IOCB_NOIO starts no readahead or other I/O, and
 * the file is O_NOATIME, so no journal handle is opened either.
 */
static int fileio_read_cached(struct iet_lun *lun, struct iet_scsi_req *req)
{
	struct file *file = fileio_file(lun);
	struct iov_iter iter;
	struct kiocb kiocb;
	ssize_t ret;

	init_sync_kiocb(&kiocb, file);
	kiocb.ki_flags |= IOCB_NOWAIT | IOCB_NOIO;
	kiocb.ki_pos = req->io.pos + req->io.done;
	iet_buf_iter(&req->buf, &iter, ITER_DEST, req->io.done,
		     req->io.len - req->io.done);
	ret = file->f_op->read_iter(&kiocb, &iter);
	if (ret > 0)
		req->io.done += ret;
	if (req->io.done == req->io.len)
		return 0;
	return ret < 0 && ret != -EAGAIN && ret != -EOPNOTSUPP ? ret : -EAGAIN;
}

/*
 * A cached read without a copy: the page cache's own pages, by reference,
 * where every one is there and up to date and none marks where readahead
 * goes on (a read that meets one goes to an I/O thread, which reads the
 * next window ahead). A write to a lent page before it is sent changes
 * what is sent, as a write racing a read may; but with a data digest it
 * would fail the digest, so then the read copies.
 */
static int fileio_lend(struct iet_lun *lun, struct iet_scsi_req *req,
		       bool digest)
{
	struct address_space *mapping = fileio_file(lun)->f_mapping;
	struct iet_buf *buf = &req->buf;
	pgoff_t index = req->io.pos >> PAGE_SHIFT;
	u32 len = req->io.len;

	if (digest || offset_in_page(req->io.pos))
		return -EAGAIN;
	while (buf->len < len) {
		/* NULL before 6.3, an ERR_PTR since. */
		struct folio *folio = filemap_get_folio(mapping, index);
		pgoff_t end;

		if (IS_ERR_OR_NULL(folio))
			goto miss;
		if (!folio_test_uptodate(folio) ||
		    folio_test_readahead(folio) ||
		    READ_ONCE(folio->mapping) != mapping) {
			folio_put(folio);
			goto miss;
		}
		folio_mark_accessed(folio);
		end = folio->index + folio_nr_pages(folio);
		/* A reference a page: the buffer puts each. */
		for (;;) {
			struct page *page = folio_page(folio, index - folio->index);

			if (!iet_buf_lend(buf, page, min_t(u32, len - buf->len,
							   PAGE_SIZE))) {
				folio_put(folio);
				goto miss;
			}
			if (++index == end || buf->len == len)
				break;
			folio_get(folio);
		}
	}
	return 0;
miss:
	iet_buf_return(buf);
	return -EAGAIN;
}

static int fileio_write(struct iet_lun *lun, struct iet_scsi_req *req)
{
	struct fileio *fio = lun->private;
	struct file *file = fio->file;
	loff_t pos = req->io.pos;
	struct iov_iter iter;
	ssize_t ret = 0;

	if (req->io.stable) {
		file = fio->direct ?: handle_get(fio);
		if (IS_ERR(file))
			return PTR_ERR(file);
	}
	iet_buf_iter(&req->buf, &iter, ITER_SOURCE, 0, req->io.len);
	file_start_write(file);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_write(file, &iter, &pos,
				     req->io.stable ? RWF_DSYNC : 0);
		if (ret < 0)
			break;
		if (!ret) {
			ret = -EIO;
			break;
		}
	}
	file_end_write(file);
	if (req->io.stable && file != fio->direct)
		handle_put(fio, file);
	return ret < 0 ? ret : 0;
}

static int fileio_flush(struct iet_lun *lun, struct iet_scsi_req *req)
{
	struct fileio *fio = lun->private;
	loff_t pos = req->io.pos, end = LLONG_MAX;
	struct file *file;
	int ret;

	if (req->io.len && pos + req->io.len > pos)
		end = pos + req->io.len - 1;
	file = handle_get(fio);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = vfs_fsync_range(file, pos, end, 1);
	handle_put(fio, file);
	return ret;
}

/* PRE-FETCH: readahead into the page cache, not waited for. */
static void fileio_prefetch(struct iet_lun *lun, loff_t pos, u64 len)
{
	vfs_fadvise(fileio_file(lun), pos, len, POSIX_FADV_WILLNEED);
}

/* A hole punched: the blocks read as zeros and hold no space. */
static int fileio_unmap(struct iet_lun *lun, loff_t pos, u64 len, bool zero)
{
	struct file *file = fileio_file(lun);
	int ret;

	ret = vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			    pos, len);
	if (!ret && !READ_ONCE(lun->wce))
		ret = vfs_fsync_range(file, pos, pos + len - 1, 1);
	return ret;
}

/* SEEK_DATA and SEEK_HOLE: what the file system knows of its holes. */
static int fileio_mapped(struct iet_lun *lun, loff_t pos, loff_t *end,
			 bool *mapped)
{
	struct file *file = fileio_file(lun);
	loff_t data = vfs_llseek(file, pos, SEEK_DATA);

	if (data == -ENXIO) {		/* a hole to the end of the file */
		*mapped = false;
		*end = LLONG_MAX;
		return 0;
	}
	if (data < 0)
		return data;
	*mapped = data == pos;
	*end = *mapped ? vfs_llseek(file, pos, SEEK_HOLE) : data;
	return *end < 0 ? *end : 0;
}

/*
 * A regular file is made the LUN's new size (sparse where it grows); a
 * block device keeps its own. Data written past a new end is never
 * dropped unless forced.
 */
static int fileio_resize(struct iet_lun *lun, loff_t *size, bool force)
{
	struct file *file = fileio_file(lun);
	struct inode *inode = file->f_mapping->host;
	loff_t cur = i_size_read(inode), end;
	bool mapped;
	int ret;

	if (!*size) {
		*size = cur;
		return 0;
	}
	if (!S_ISREG(inode->i_mode))
		return -EOPNOTSUPP;
	if (lun->iomode == IET_IOMODE_RO)
		return -EROFS;
	if (*size == cur)
		return 0;
	if (*size < cur && !force) {
		ret = fileio_mapped(lun, *size, &end, &mapped);
		if (ret)
			return ret;
		if (mapped || end < cur)
			return -ENOTEMPTY;
	}
	return vfs_truncate(&file->f_path, *size);
}

/* In an I/O thread: synchronous VFS I/O, the seed design. */
static void fileio_submit(struct iet_lun *lun, struct iet_scsi_req *req)
{
	int ret = -EINVAL;

	switch (req->io.op) {
	case IET_IO_READ:
		ret = fileio_read(lun, req);
		break;
	case IET_IO_WRITE:
		ret = fileio_write(lun, req);
		break;
	case IET_IO_FLUSH:
		ret = fileio_flush(lun, req);
		break;
	case IET_IO_NONE:
		break;
	}
	iet_scsi_io_done(req, ret);
}

const struct iet_backend_ops iet_fileio_ops = {
	.name = "fileio",
	.type = IET_LUN_FILEIO,
	.storage = true,
	.blocking = true,
	.attach = fileio_attach,
	.detach = fileio_detach,
	.submit = fileio_submit,
	.read_cached = fileio_read_cached,
	.lend = fileio_lend,
	.prefetch = fileio_prefetch,
	.unmap = fileio_unmap,
	.mapped = fileio_mapped,
	.resize = fileio_resize,
};
