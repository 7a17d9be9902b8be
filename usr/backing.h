/* SPDX-License-Identifier: GPL-2.0 */
/* The size of a LUN's backing, found without opening it (backing.c). */
#ifndef IET_USR_BACKING_H
#define IET_USR_BACKING_H

#include <stdint.h>

/*
 * Whole blocks of block_size in path, a regular file or a block device
 * (from sysfs: a DRBD device that is not primary cannot be opened, and is
 * sized all the same): 0, or a negative errno (-ENOTBLK for anything else,
 * -ENOSPC for less than a block).
 */
int backing_blocks(const char *path, uint32_t block_size, uint64_t *blocks);

/* The same for a block device's sysfs directory (tests point it elsewhere). */
int backing_blocks_sysfs(const char *sysdir, const char *path,
			 uint32_t block_size, uint64_t *blocks);

#endif
