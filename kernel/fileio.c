// SPDX-License-Identifier: GPL-2.0
/*
 * The fileio backend: synchronous VFS reads and writes on a regular file or
 * a block device, through the page cache. A stable write asks for
 * RWF_DSYNC, which for a block device also flushes its volatile cache.
 */
#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/uio.h>

#include "iet.h"

static int fileio_attach(struct iet_lun *lun, const char *path)
{
	int flags = lun->iomode == IET_IOMODE_RO ? O_RDONLY : O_RDWR;
	struct inode *inode;
	struct file *file;
	loff_t size;

	if (!path || !path[0])
		return -EINVAL;
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
	lun->blocks = size >> lun->blkbits;
	lun->private = file;
	return 0;
}

static void fileio_detach(struct iet_lun *lun)
{
	filp_close(lun->private, NULL);
}

static int fileio_read(struct iet_lun *lun, struct iet_buf *buf, u32 len,
		       loff_t pos)
{
	struct file *file = lun->private;
	struct iov_iter iter;
	ssize_t ret;

	iet_buf_iter(buf, &iter, ITER_DEST, 0, len);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_read(file, &iter, &pos, 0);
		if (ret < 0)
			return ret;
		if (!ret)	/* the file shrank under us */
			return -EIO;
	}
	return 0;
}

/* Only what the page cache holds: a read thread must never wait for a disk. */
static int fileio_read_nowait(struct iet_lun *lun, struct iet_buf *buf,
			      u32 len, loff_t pos)
{
	struct iov_iter iter;
	ssize_t ret;

	iet_buf_iter(buf, &iter, ITER_DEST, 0, len);
	ret = vfs_iter_read(lun->private, &iter, &pos, RWF_NOWAIT);
	if (ret == len)
		return 0;
	/* Partly cached, not cached, or no RWF_NOWAIT here: try it all later. */
	return ret < 0 && ret != -EAGAIN && ret != -EOPNOTSUPP ? ret : -EAGAIN;
}

static int fileio_write(struct iet_lun *lun, struct iet_buf *buf, u32 len,
			loff_t pos, bool stable)
{
	struct file *file = lun->private;
	struct iov_iter iter;
	ssize_t ret = 0;

	iet_buf_iter(buf, &iter, ITER_SOURCE, 0, len);
	file_start_write(file);
	while (iov_iter_count(&iter)) {
		ret = vfs_iter_write(file, &iter, &pos, stable ? RWF_DSYNC : 0);
		if (ret < 0)
			break;
		if (!ret) {
			ret = -EIO;
			break;
		}
	}
	file_end_write(file);
	return ret < 0 ? ret : 0;
}

static int fileio_flush(struct iet_lun *lun, loff_t pos, loff_t len)
{
	loff_t end = len == LLONG_MAX || pos + len < pos ? LLONG_MAX :
		     pos + len - 1;

	return vfs_fsync_range(lun->private, pos, end, 1);
}

const struct iet_backend_ops iet_fileio_ops = {
	.name = "fileio",
	.type = IET_LUN_FILEIO,
	.attach = fileio_attach,
	.detach = fileio_detach,
	.read = fileio_read,
	.read_nowait = fileio_read_nowait,
	.write = fileio_write,
	.flush = fileio_flush,
};
