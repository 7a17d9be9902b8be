/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels iscsi_trgt supports (6.1 to 7.x:
 * Debian 12's 6.1 and 6.12, Debian 13's 6.12 and trixie-backports' 7.x,
 * generic, cloud and PREEMPT_RT), in one
 * place (and compat_unaligned.h, which it includes): no version test
 * anywhere else. Tested by feature where a feature can be seen from C, by
 * version where it cannot.
 */
#ifndef IET_COMPAT_H
#define IET_COMPAT_H

#include <linux/blkdev.h>
#include <linux/bvec.h>
#include <linux/file.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/timer.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/genetlink.h>
#include <scsi/scsi_proto.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "iscsi_trgt needs Linux 6.1 or later"
#endif

/* The unaligned accessors: apart, as pr_parse.c builds on the host too. */
#include "compat_unaligned.h"

/*
 * Generic netlink: 6.2 gave pre_doit and post_doit the split ops, and the
 * parsed attributes of a dump moved into a genl_info.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define IET_GENL_OPS struct genl_split_ops

static inline struct nlattr **iet_dump_attrs(struct netlink_callback *cb)
{
	return genl_info_dump(cb)->attrs;
}
#else
#define IET_GENL_OPS struct genl_ops

static inline struct nlattr **iet_dump_attrs(struct netlink_callback *cb)
{
	return genl_dumpit_info(cb)->attrs;
}
#endif

/* Kernels after 6.12 (7.x does) name SCSI-2's RESERVE and RELEASE by length. */
#ifndef RESERVE_6
#define RESERVE_6 RESERVE
#define RELEASE_6 RELEASE
#endif

/* 6.16 renamed from_timer(). */
#ifndef from_timer
#define from_timer(var, timer, field) timer_container_of(var, timer, field)
#endif

/*
 * Sending a PDU's pages by reference: total bytes of the bio_vec array bv
 * (nr entries, none crossing a page), from off on. Returns what was sent
 * (perhaps less) or -errno. 6.5 replaced sendpage with one sendmsg of the
 * whole array with MSG_SPLICE_PAGES. A test of the flag alone would lie:
 * Debian's 6.1 defines MSG_SPLICE_PAGES (for one backported user) while
 * its TCP ignores it and copies. So the version decides.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
static inline int iet_send_bvec(struct socket *sock, struct bio_vec *bv,
				unsigned int nr, u32 total, u32 off, int flags)
{
	struct msghdr msg = { .msg_flags = flags | MSG_SPLICE_PAGES };

	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, total);
	iov_iter_advance(&msg.msg_iter, off);
	return sock_sendmsg(sock, &msg);
}
#else
static inline int iet_send_bvec(struct socket *sock, struct bio_vec *bv,
				unsigned int nr, u32 total, u32 off, int flags)
{
	u32 sent = 0;
	int ret;

	for (; nr && off >= bv->bv_len; bv++, nr--)
		off -= bv->bv_len;
	for (; nr; bv++, nr--, off = 0) {
		u32 len = bv->bv_len - off;
		int f = flags;

		if (nr > 1)
			f |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
		ret = kernel_sendpage(sock, bv->bv_page, bv->bv_offset + off,
				      len, f);
		if (ret <= 0)
			return sent ?: (ret ?: -EAGAIN);
		sent += ret;
		if (ret < len)
			break;
	}
	return sent;
}
#endif

/* Freeing what a page_frag_cache still holds: 6.9 gave it a function. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
static inline void page_frag_cache_drain(struct page_frag_cache *nc)
{
	if (!nc->va)
		return;
	__page_frag_cache_drain(virt_to_head_page(nc->va), nc->pagecnt_bias);
	nc->va = NULL;
}
#endif

/*
 * Opening a block device exclusively, with the target as holder (6.9
 * turned the handle into a struct file). Kernels between the two ways
 * (6.5 to 6.8) changed it twice more; none is built or tested here.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
struct iet_bdev {
	struct file *file;
	struct block_device *bdev;
};

static inline int iet_bdev_open(struct iet_bdev *b, const char *path,
				bool write, void *holder)
{
	blk_mode_t mode = BLK_OPEN_READ | (write ? BLK_OPEN_WRITE : 0);

	b->file = bdev_file_open_by_path(path, mode, holder, NULL);
	if (IS_ERR(b->file))
		return PTR_ERR(b->file);
	b->bdev = file_bdev(b->file);
	return 0;
}

static inline void iet_bdev_close(struct iet_bdev *b)
{
	/* At once, not at the next return to user space: a LUN added back reclaims it. */
	bdev_fput(b->file);
}
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
struct iet_bdev {
	struct block_device *bdev;
	fmode_t mode;
};

static inline int iet_bdev_open(struct iet_bdev *b, const char *path,
				bool write, void *holder)
{
	b->mode = FMODE_READ | FMODE_EXCL | (write ? FMODE_WRITE : 0);
	b->bdev = blkdev_get_by_path(path, b->mode, holder);
	return PTR_ERR_OR_ZERO(b->bdev);
}

static inline void iet_bdev_close(struct iet_bdev *b)
{
	blkdev_put(b->bdev, b->mode);
}
#else
#error "iscsi_trgt supports Linux 6.1 to 6.4 and 6.9 onwards (blockio's open)"
#endif

#endif /* IET_COMPAT_H */
