/* SPDX-License-Identifier: GPL-2.0 */
/* A live LUN resized by ietadm (op_resize.c). */
#ifndef IET_USR_OP_RESIZE_H
#define IET_USR_OP_RESIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "runtime.h"

/* What --params asks of a LUN's size. */
struct resize_req {
	uint64_t bytes;		/* Size=: a multiple of the block size */
	uint64_t blocks;	/* Blocks= */
	bool backing;		/* Resize=backing: what the backing has now */
	bool force;		/* Force=Yes: a shrink may drop data */
};

/*
 * --params of a LUN's update: exactly one of Size=BYTES[K|M|G|T],
 * Blocks=N or Resize=backing, and Force=Yes|No. Pure: 0 or -EINVAL with
 * the reason in err.
 */
int resize_parse(const char *params, struct resize_req *r, char *err,
		 size_t errlen);
/* Whether --params is a resize (a key resize_parse takes). */
bool resize_params(const char *params);
/* --op update --tid --lun --params Size=|Blocks=|Resize=backing[,Force=] */
int resize_update(struct runtime *rt, const struct ctl_req *req, char *err,
		  size_t errlen);

#endif
