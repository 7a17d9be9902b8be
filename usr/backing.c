// SPDX-License-Identifier: GPL-2.0
/*
 * The size of a LUN's backing as the path has it now, without opening it:
 * what a LUN reports while its backing stays closed (no active portal group
 * on this node, as on an HA pair's standby node).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "backing.h"

#define SYSFS_DEV_BLOCK	"/sys/dev/block"

/* A block device's size in bytes, from sysfs (in 512-byte sectors there). */
static int bdev_bytes(const char *sysdir, dev_t rdev, uint64_t *bytes)
{
	unsigned long long sectors;
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/%u:%u/size", sysdir, major(rdev),
		 minor(rdev));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &sectors);
	fclose(f);
	if (n != 1 || sectors > UINT64_MAX / 512)
		return -EINVAL;
	*bytes = (uint64_t)sectors * 512;
	return 0;
}

int backing_blocks_sysfs(const char *sysdir, const char *path,
			 uint32_t block_size, uint64_t *blocks)
{
	uint64_t bytes = 0;
	struct stat st;
	int ret;

	if (!block_size)
		return -EINVAL;
	if (stat(path, &st))
		return -errno;
	if (S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else if (S_ISBLK(st.st_mode)) {
		ret = bdev_bytes(sysdir, st.st_rdev, &bytes);
		if (ret)
			return ret;
	} else {
		return -ENOTBLK;
	}
	if (bytes < block_size)
		return -ENOSPC;
	*blocks = bytes / block_size;
	return 0;
}

int backing_blocks(const char *path, uint32_t block_size, uint64_t *blocks)
{
	return backing_blocks_sysfs(SYSFS_DEV_BLOCK, path, block_size, blocks);
}
