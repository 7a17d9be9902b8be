/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block devices that change under blockio LUNs (uevent.c): the kernel's
 * uevents read, and each LUN on a device that changed resized to follow it.
 */
#ifndef IET_USR_UEVENT_H
#define IET_USR_UEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model.h"

/*
 * A kernel uevent ("ACTION@DEVPATH" then KEY=VALUE strings, each ended by
 * a NUL): whether it is a block device's change (a disk or a partition;
 * a resize among them), with the device number. Pure.
 */
bool uevent_block_change(const char *buf, size_t len, dev_t *dev);

/*
 * Every LUN of cfg whose Path is the block device dev (0: any block
 * device; a fileio LUN's only when its Path is under /dev) asked of the
 * kernel to take the device's size now.
 */
void uevent_follow(const struct config *cfg, dev_t dev);

/* A non-blocking socket on the kernel's uevents, or -errno. */
int uevent_open(void);
/*
 * Read what is queued on fd; for each block device change, every LUN of
 * cfg whose Path is that device is resized to it (the kernel re-reads the
 * size and tells the initiators; a device that shrank is not followed, and
 * said so; when events were lost, every LUN on a device is). -errno on
 * a failed read.
 */
int uevent_read(int fd, const struct config *cfg);

#endif
