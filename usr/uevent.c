// SPDX-License-Identifier: GPL-2.0
/*
 * A LUN follows the size of its block device: a volume grown (lvextend), a
 * loop device's file grown and set again, a disk the hypervisor enlarged.
 * The kernel says so by a uevent (KOBJ_CHANGE); ietd asks the kernel to
 * re-read each such LUN's size, which tells every initiator CAPACITY DATA
 * HAS CHANGED when it differs. A device that shrank is left to the
 * administrator (ietadm ... Resize=backing,Force=Yes): what was past its
 * end is gone, and that is not for a daemon to accept.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kernel.h"
#include "log.h"
#include "uevent.h"

#define UEVENT_BUF	8192		/* the kernel's UEVENT_BUFFER_SIZE is 2048 */

int uevent_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1,			/* the kernel's own events */
	};
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

void uevent_follow(const struct config *cfg, dev_t dev)
{
	struct stat st;
	size_t i, j;
	int ret;

	for (i = 0; i < cfg->nr_targets; i++) {
		const struct target_conf *t = &cfg->targets[i];

		for (j = 0; j < t->nr_luns; j++) {
			const struct lun_conf *l = &t->luns[j];

			/*
			 * A fileio LUN's file may be on a server that hangs:
			 * only one named under /dev is looked at.
			 */
			if (l->type == IET_LUN_NULLIO || !l->path[0] ||
			    (l->type == IET_LUN_FILEIO &&
			     strncmp(l->path, "/dev/", 5)) ||
			    stat(l->path, &st) || !S_ISBLK(st.st_mode) ||
			    (dev && st.st_rdev != dev))
				continue;
			ret = kernel_lun_set(t->tid, l->lun, 0, false);
			if (ret == -ENOTEMPTY)
				log_warn("target tid %u %s LUN %u: %s is smaller than the LUN now; ietadm --op update --tid=%u --lun=%u --params Resize=backing,Force=Yes follows it",
					 t->tid, t->name, l->lun, l->path,
					 t->tid, l->lun);
			else if (ret && ret != -EINVAL && ret != -EBUSY)
				log_warn("target tid %u %s LUN %u: following %s's size: %s%s%s",
					 t->tid, t->name, l->lun, l->path,
					 strerror(-ret),
					 *kernel_errmsg() ? ": " : "",
					 kernel_errmsg());
			else
				log_dbg(1, "target tid %u LUN %u: %s changed",
					t->tid, l->lun, l->path);
		}
	}
}

int uevent_read(int fd, const struct config *cfg)
{
	static char buf[UEVENT_BUF];
	struct sockaddr_nl from;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t n;
	dev_t dev;

	for (;;) {
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			/* Events were lost: every device may have changed. */
			uevent_follow(cfg, 0);
			continue;
		}
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		/* The kernel's only: a process cannot send as port 0. */
		if (msg.msg_namelen != sizeof(from) || from.nl_pid ||
		    (msg.msg_flags & MSG_TRUNC))
			continue;
		if (uevent_block_change(buf, n, &dev))
			uevent_follow(cfg, dev);
		msg.msg_namelen = sizeof(from);
	}
}
