// SPDX-License-Identifier: GPL-2.0
/* Block devices that change under LUNs: the kernel's uevents (uevent.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "kernel_fake.h"
#include "test.h"
#include "uevent.h"

/* A uevent as the kernel sends it: NULs between, "|" here. */
static size_t ev(char *buf, const char *text)
{
	size_t n = strlen(text), i;

	memcpy(buf, text, n + 1);
	for (i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	return n + 1;
}

#define RESIZE "change@/devices/virtual/block/loop3|ACTION=change|" \
	"DEVPATH=/devices/virtual/block/loop3|SUBSYSTEM=block|RESIZE=1|" \
	"MAJOR=7|MINOR=3|DEVNAME=loop3|DEVTYPE=disk|DISKSEQ=9|SEQNUM=4242"

TEST(uevent_a_block_devices_change_gives_its_number)
{
	char buf[512];
	dev_t dev = 0;

	REQUIRE(uevent_block_change(buf, ev(buf, RESIZE), &dev));
	CHECK_EQ(major(dev), 7);
	CHECK_EQ(minor(dev), 3);
	/* dm's resume: no RESIZE=1, a change all the same. */
	REQUIRE(uevent_block_change(buf, ev(buf, "change@/devices/virtual/block/dm-2|"
					    "ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|"
					    "MAJOR=254|MINOR=2|DM_COOKIE=1234"), &dev));
	CHECK_EQ(dev, makedev(254, 2));
	REQUIRE(uevent_block_change(buf, ev(buf, "change@/x|ACTION=change|SUBSYSTEM=block|"
					    "DEVTYPE=partition|MAJOR=8|MINOR=1048575"), &dev));
	CHECK_EQ(minor(dev), 1048575);
}

TEST(uevent_anything_else_or_torn_is_not_a_change)
{
	static const char *const bad[] = {
		/* other actions, subsystems, kinds */
		"add@/x|ACTION=add|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=3",
		"change@/x|ACTION=change|SUBSYSTEM=net|DEVTYPE=disk|MAJOR=7|MINOR=3",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=dm|MAJOR=7|MINOR=3",
		/* numbers missing, not numbers, too large */
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=-3",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=3x",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=4096|MINOR=3",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=1048576",
		"change@/x|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|"
			"MINOR=99999999999999999999999",
		/* udev's form (no "@" header), a header alone */
		"libudev|ACTION=change|SUBSYSTEM=block|DEVTYPE=disk|MAJOR=7|MINOR=3",
		"change@/x",
	};
	char buf[512];
	dev_t dev = 0;
	size_t i, n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!uevent_block_change(buf, ev(buf, bad[i]), &dev));
	/* A last string without its NUL is torn, not read past. */
	n = ev(buf, RESIZE);
	CHECK(!uevent_block_change(buf, n - 1, &dev));
	CHECK(!uevent_block_change(buf, 0, &dev));
	CHECK_EQ(dev, 0);
}

TEST(uevent_each_lun_on_the_changed_device_is_resized_to_it)
{
	char dir[] = "/tmp/iet-uevent-XXXXXX", conf[1024], err[256];
	char blk[64], other[64], file[80];
	struct config cfg;
	FILE *f;

	REQUIRE(mkdtemp(dir));
	snprintf(blk, sizeof(blk), "%s/blk", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	REQUIRE(!mknod(blk, S_IFBLK | 0600, makedev(7, 123)));
	REQUIRE(!mknod(other, S_IFBLK | 0600, makedev(7, 124)));
	f = fopen(file, "w");
	REQUIRE(f);
	fclose(f);
	snprintf(conf, sizeof(conf),
		 "Target iqn.2024-01.com.example:a\n"
		 " Lun 0 Path=%s,Type=blockio\n Lun 1 Path=%s,Type=blockio\n"
		 " Lun 2 Path=%s,Type=fileio\n Lun 3 Type=nullio\n"
		 "Target iqn.2024-01.com.example:b\n Lun 5 Path=%s,Type=fileio\n",
		 blk, other, file, blk);
	REQUIRE(!config_parse(conf, strlen(conf), "t.conf", &cfg, err,
			      sizeof(err)));
	cfg.targets[0].tid = 1;
	cfg.targets[1].tid = 2;
	fake_reset();
	uevent_follow(&cfg, makedev(7, 123));
	/*
	 * LUN 0; not LUN 5, fileio on it but named outside /dev (a file
	 * LUN's path is not looked at: its server may hang).
	 */
	REQUIRE_EQ(fake_count(F_LUN_SET), 1);
	CHECK_EQ(fake_call(0)->tid, 1);
	CHECK_EQ(fake_call(0)->lun.lun, 0);
	CHECK_EQ(fake_call(0)->lun.blocks, 0);
	CHECK(!fake_call(0)->force);
	/* Events lost: every blockio LUN on a block device. */
	fake_reset();
	uevent_follow(&cfg, 0);
	CHECK_EQ(fake_count(F_LUN_SET), 2);
	/* A device no LUN is on: nothing asked. */
	fake_reset();
	uevent_follow(&cfg, makedev(8, 0));
	CHECK_EQ(fake_count(F_LUN_SET), 0);
	config_free(&cfg);
	unlink(blk);
	unlink(other);
	unlink(file);
	rmdir(dir);
}
