// SPDX-License-Identifier: GPL-2.0
/*
 * The size of a LUN's backing found without opening it: a regular file's
 * from its inode, a block device's from sysfs (here a directory of the
 * test's own, as sysfs lays it out).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "backing.h"
#include "test.h"

TEST(backing_blocks_of_a_regular_file_are_its_whole_blocks)
{
	char path[] = "/tmp/iet-backing-XXXXXX";
	uint64_t blocks = 0;
	int fd = mkstemp(path);

	REQUIRE(fd >= 0);
	REQUIRE(ftruncate(fd, 3 * 4096 + 100) == 0);
	CHECK_EQ(backing_blocks(path, 512, &blocks), 0);
	CHECK_EQ(blocks, (3 * 4096 + 100) / 512);
	CHECK_EQ(backing_blocks(path, 4096, &blocks), 0);
	CHECK_EQ(blocks, 3);
	/* Less than one block, or a block size of 0: refused. */
	REQUIRE(ftruncate(fd, 100) == 0);
	CHECK_EQ(backing_blocks(path, 512, &blocks), -ENOSPC);
	CHECK_EQ(backing_blocks(path, 0, &blocks), -EINVAL);
	close(fd);
	unlink(path);
	CHECK_EQ(backing_blocks(path, 512, &blocks), -ENOENT);
	/* Neither a file nor a block device. */
	CHECK_EQ(backing_blocks("/dev/null", 512, &blocks), -ENOTBLK);
	CHECK_EQ(backing_blocks("/tmp", 512, &blocks), -ENOTBLK);
}

/* Some block device node of this machine's, or NULL. */
static const char *a_block_device(char *buf, size_t len, struct stat *st)
{
	struct dirent *d;
	DIR *dir = opendir("/dev");

	if (!dir)
		return NULL;
	while ((d = readdir(dir))) {
		snprintf(buf, len, "/dev/%s", d->d_name);
		if (!stat(buf, st) && S_ISBLK(st->st_mode)) {
			closedir(dir);
			return buf;
		}
	}
	closedir(dir);
	return NULL;
}

TEST(backing_blocks_of_a_block_device_come_from_sysfs_in_sectors)
{
	char dir[] = "/tmp/iet-sysfs-XXXXXX", sub[128], size[160], dev[300];
	uint64_t blocks = 0;
	struct stat st;
	FILE *f;

	if (!a_block_device(dev, sizeof(dev), &st)) {
		fprintf(stderr, "no block device node in /dev: cannot test\n");
		CHECK(!"a block device node in /dev");
		return;
	}
	REQUIRE(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/%u:%u", dir, major(st.st_rdev),
		 minor(st.st_rdev));
	REQUIRE(mkdir(sub, 0700) == 0);
	snprintf(size, sizeof(size), "%s/size", sub);
	f = fopen(size, "w");
	REQUIRE(f);
	fprintf(f, "%llu\n", 2097152ull + 7);	/* 1 GiB and 7 sectors */
	fclose(f);
	CHECK_EQ(backing_blocks_sysfs(dir, dev, 512, &blocks), 0);
	CHECK_EQ(blocks, 2097152 + 7);
	CHECK_EQ(backing_blocks_sysfs(dir, dev, 4096, &blocks), 0);
	CHECK_EQ(blocks, 262144);
	/* What sysfs must not say: refused, not read as 0. */
	f = fopen(size, "w");
	REQUIRE(f);
	fprintf(f, "many\n");
	fclose(f);
	CHECK_EQ(backing_blocks_sysfs(dir, dev, 512, &blocks), -EINVAL);
	unlink(size);
	CHECK_EQ(backing_blocks_sysfs(dir, dev, 512, &blocks), -ENOENT);
	rmdir(sub);
	rmdir(dir);
}
