// SPDX-License-Identifier: GPL-2.0
/* The nullio backend: no storage; reads return zeros, writes vanish. */
#include "iet.h"

static int nullio_attach(struct iet_lun *lun, const char *path)
{
	if (!lun->blocks)
		lun->blocks = IET_NULLIO_BLOCKS >> (lun->blkbits - 9);
	lun->path[0] = '\0';
	return 0;
}

static void nullio_detach(struct iet_lun *lun)
{
}

static int nullio_read(struct iet_lun *lun, struct iet_buf *buf, u32 len,
		       loff_t pos)
{
	iet_buf_zero(buf, 0, len);
	return 0;
}

static int nullio_write(struct iet_lun *lun, struct iet_buf *buf, u32 len,
			loff_t pos, bool stable)
{
	return 0;
}

static int nullio_flush(struct iet_lun *lun, loff_t pos, loff_t len)
{
	return 0;
}

const struct iet_backend_ops iet_nullio_ops = {
	.name = "nullio",
	.type = IET_LUN_NULLIO,
	.never_blocks = true,
	.attach = nullio_attach,
	.detach = nullio_detach,
	.read = nullio_read,
	.write = nullio_write,
	.flush = nullio_flush,
};
