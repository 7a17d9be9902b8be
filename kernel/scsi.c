// SPDX-License-Identifier: GPL-2.0
/*
 * SCSI emulation core: decode a CDB into what it will move and how it runs
 * (parse), run it (execute), and say exactly why when it cannot (sense).
 */
#include <scsi/scsi_common.h>

#include "iet.h"

void iet_scsi_sense(struct iet_scsi_req *req, u8 key, u8 asc, u8 ascq)
{
	req->status = SAM_STAT_CHECK_CONDITION;
	req->execute = NULL;
	/* Fixed format: the control mode page reports D_SENSE=0. */
	scsi_build_sense_buffer(0, req->sense, key, asc, ascq);
	req->sense_len = 18;
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

void iet_scsi_parse(struct iet_scsi_req *req)
{
	int ret;

	req->status = SAM_STAT_GOOD;
	req->execute = NULL;
	req->execute_nowait = NULL;
	req->blocking = false;
	/* Commands that do not need a logical unit answer for every LUN. */
	ret = iet_spc_parse_any_lun(req);
	if (ret != -ENOENT)
		return;
	if (!req->lun) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x25, 0x00);
		return;
	}
	if (req->cdb[0] == VARIABLE_LENGTH_CMD) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
		return;
	}
	/* NACA: we do not support ACA (INQUIRY reports NormACA=0). */
	if (req->cdb[scsi_command_size(req->cdb) - 1] & 0x04) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
		return;
	}
	/* Reported when the command runs, in CmdSN order (see below). */
	req->check_ua = true;
	ret = iet_sbc_parse(req);
	if (ret == -ENOENT)
		ret = iet_spc_parse(req);
	if (ret == -ENOENT)
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x20, 0x00);
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

int iet_scsi_execute(struct iet_scsi_req *req)
{
	if (req->status != SAM_STAT_GOOD || !req->execute)
		return 0;
	return req->execute(req) == IET_ASYNC ? IET_ASYNC : 0;
}

/* Counters of a LUN or a session, for a finished command. */
void iet_scsi_account(struct iet_stats *st, const struct iet_scsi_req *req)
{
	u64 bytes = req->lun ? (u64)req->nr_blocks << req->lun->blkbits : 0;

	atomic64_inc(&st->cmds);
	if (req->status != SAM_STAT_GOOD)
		atomic64_inc(&st->errors);
	else if (req->data_out)
		atomic64_add(bytes, &st->write_bytes);
	else
		atomic64_add(bytes, &st->read_bytes);
}
