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

/* Reads return zeros, writes and flushes vanish, at once. */
static void nullio_submit(struct iet_lun *lun, struct iet_scsi_req *req)
{
	if (req->io.op == IET_IO_READ)
		iet_buf_zero(&req->buf, 0, req->io.len);
	iet_scsi_io_done(req, 0);
}

/* Zeros without writing them: one page of zeros, lent to every read. */
static int nullio_lend(struct iet_lun *lun, struct iet_scsi_req *req,
		       bool digest)
{
	return iet_buf_lend_zeros(&req->buf, req->io.len);
}

const struct iet_backend_ops iet_nullio_ops = {
	.name = "nullio",
	.type = IET_LUN_NULLIO,
	.attach = nullio_attach,
	.detach = nullio_detach,
	.submit = nullio_submit,
	.lend = nullio_lend,
};
