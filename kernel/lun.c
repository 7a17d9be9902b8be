// SPDX-License-Identifier: GPL-2.0
/*
 * Logical units: their identity, their backend, and their lifetime; and
 * their backing opened and closed with the target's ALUA state (alua.c).
 */
#include <linux/crc32c.h>
#include <linux/file.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "iet.h"

static const struct iet_backend_ops *backends[] = {
	&iet_fileio_ops,
	&iet_blockio_ops,
	&iet_nullio_ops,
};

static const struct iet_backend_ops *backend(u32 type)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(backends); i++)
		if (backends[i]->type == type)
			return backends[i];
	return NULL;
}

/* Commands find LUNs under RCU and keep them with a reference. */
struct iet_lun *iet_lun_get(struct iet_target *target, u32 lun_id)
{
	struct iet_lun *lun;

	rcu_read_lock();
	lun = xa_load(&target->luns, lun_id);
	if (lun && !kref_get_unless_zero(&lun->kref))
		lun = NULL;
	rcu_read_unlock();
	return lun;
}

static void lun_release(struct kref *kref)
{
	struct iet_lun *lun = container_of(kref, struct iet_lun, kref);

	/* In-flight I/O has finished: the last command held this. */
	iet_pr_destroy(lun);
	/* Never CLOSING: close_work holds a reference until it is closed. */
	if (lun->backing == IET_BACKING_OPEN)
		lun->ops->detach(lun);
	percpu_ref_exit(&lun->io);
	/* RCU readers look the LUN up by number or name, never at these. */
	iet_stats_free(&lun->stats);
	kfree_rcu(lun, rcu);
}

void iet_lun_put(struct iet_lun *lun)
{
	kref_put(&lun->kref, lun_release);
}

/*
 * A hold on the LUN's backing: 0, or -ENXIO. A new command (live) gets
 * none once closing has begun; the further I/O of work that holds it
 * already (a command's, or one that reaches another LUN) gets one until
 * the last holder lets go, so that a command is never cut short half way.
 * lun->private is the backend's once this holds: the store of
 * IET_BACKING_OPEN that follows its attach publishes it.
 */
int iet_lun_io_hold(struct iet_lun *lun, bool live)
{
	enum iet_backing state;

	if (live ? !percpu_ref_tryget_live(&lun->io) :
		   !percpu_ref_tryget(&lun->io))
		return -ENXIO;
	/* Pairs with the release in iet_lun_open(): private is seen. */
	state = smp_load_acquire(&lun->backing);
	if (state == IET_BACKING_OPEN ||
	    (!live && state == IET_BACKING_CLOSING))
		return 0;
	percpu_ref_put(&lun->io);
	return -ENXIO;
}

/* Why a backend could not open a path, for ietadm. */
static void attach_error(struct iet_lun *lun, int ret,
			 struct netlink_ext_ack *extack)
{
	if (ret == -ENOENT)
		NL_SET_ERR_MSG(extack, "Path does not exist");
	else if (ret == -EACCES || ret == -EPERM || ret == -EROFS)
		NL_SET_ERR_MSG(extack, "Path cannot be opened for writing");
	else if (ret == -EMEDIUMTYPE)
		NL_SET_ERR_MSG(extack,
			       "Path cannot be opened here (a DRBD device that is not primary?)");
	else if (ret == -ENOTBLK && lun->ops == &iet_blockio_ops)
		NL_SET_ERR_MSG(extack, "Path is not a block device");
	else if (ret == -ENOTBLK)
		NL_SET_ERR_MSG(extack,
			       "Path is not a regular file or block device");
	else if (ret == -ENOSPC)
		NL_SET_ERR_MSG(extack, "Path is smaller than one block");
	else if (ret == -EBUSY)
		NL_SET_ERR_MSG(extack,
			       "Path is in use (mounted, or another LUN's)");
	else if (ret == -EDOM)
		NL_SET_ERR_MSG(extack,
			       "BlockSize is smaller than the device's logical block size");
	else if (ret == -EINVAL && !lun->path[0])
		NL_SET_ERR_MSG(extack, "this LUN type needs a Path");
}

/*
 * The last command using a closing backing has ended (from an RCU callback
 * or a command's completion): the backend goes in process context.
 */
static void io_released(struct percpu_ref *ref)
{
	iet_queue_close(&container_of(ref, struct iet_lun, io)->close_work);
}

static void close_work(struct work_struct *work)
{
	struct iet_lun *lun = container_of(work, struct iet_lun, close_work);
	struct iet_target *target = lun->target;
	int ret = 0;

	/* What a write-back LUN caches reaches its storage before it goes. */
	if (lun->iomode != IET_IOMODE_RO)
		ret = iet_backend_io_sync(lun, IET_IO_FLUSH, 0, NULL, 0, false);
	if (ret)
		pr_warn("target %u lun %u: the cache of %s could not be flushed (%d) as it closed\n",
			target->tid, lun->lun, lun->path, ret);
	lun->ops->detach(lun);
	lun->private = NULL;
	/*
	 * A file closed from a worker is released later, by another: closed
	 * means closed for whoever opens the device next (DRBD's demotion).
	 */
	flush_delayed_fput();
	/* Pairs with iet_lun_open()'s reading: it opens what is closed. */
	smp_store_release(&lun->backing, IET_BACKING_CLOSED);
	pr_info("target %u lun %u: %s closed\n", target->tid, lun->lun,
		lun->path);
	atomic_dec(&target->luns_closing);
	iet_lun_put(lun);
	iet_target_put(target);
}

/*
 * Start closing the backing of a LUN that has one open: commands that do
 * not hold it yet no longer can, and close_work detaches it once those
 * that do have ended. Whether it did (target->luns_closing counts it).
 */
bool iet_lun_close(struct iet_lun *lun)
{
	lockdep_assert_held(&iet_mutex);
	if (!lun->ops->storage || lun->backing != IET_BACKING_OPEN)
		return false;
	WRITE_ONCE(lun->backing, IET_BACKING_CLOSING);
	atomic_inc(&lun->target->luns_closing);
	kref_get(&lun->kref);
	kref_get(&lun->target->kref);
	percpu_ref_kill(&lun->io);
	return true;
}

/*
 * The backend's attach, and what the LUN's configuration allows of what
 * it found: ThinProvisioning=No reports a fully provisioned disk whatever
 * the storage can do (an array that overcommits, a file that must stay
 * allocated), and UNMAP and WRITE SAME with UNMAP answer as on storage
 * without it.
 */
static int lun_attach(struct iet_lun *lun)
{
	int ret = lun->ops->attach(lun, lun->path[0] ? lun->path : NULL);

	if (!ret && !lun->thin_allowed) {
		lun->thin = false;
		lun->lbprz = false;
	}
	return ret;
}

/*
 * Open a closed backing again: it may have another size now (the replica
 * grew meanwhile), or provision otherwise than was reported while it was
 * closed (never opened here), which every nexus then hears of.
 */
int iet_lun_open(struct iet_lun *lun, struct netlink_ext_ack *extack)
{
	bool thin = lun->thin, lbprz = lun->lbprz;
	u32 gran = lun->unmap_gran, align = lun->unmap_align;
	u64 blocks = lun->blocks;
	int ret;

	lockdep_assert_held(&iet_mutex);
	/* Pairs with close_work(): a closed backend is detached whole. */
	switch (smp_load_acquire(&lun->backing)) {
	case IET_BACKING_OPEN:
		return 0;
	case IET_BACKING_CLOSING:
		NL_SET_ERR_MSG(extack,
			       "a LUN's backing is still closing: commands are stuck in it");
		return -EBUSY;
	case IET_BACKING_CLOSED:
		break;
	}
	ret = lun_attach(lun);
	if (ret) {
		attach_error(lun, ret, extack);
		return ret;
	}
	/* Drained to zero by close_work's time, or never used. */
	percpu_ref_reinit(&lun->io);
	/* Pairs with iet_lun_io_hold(): who holds it sees private. */
	smp_store_release(&lun->backing, IET_BACKING_OPEN);
	if (lun->blocks != blocks)
		iet_ua_add(lun->target, NULL, lun->lun, 0x2a, 0x09);
	/* VPD 0xb0 and 0xb2, READ CAPACITY(16): INQUIRY DATA HAS CHANGED */
	if (lun->thin != thin || lun->lbprz != lbprz ||
	    lun->unmap_gran != gran || lun->unmap_align != align)
		iet_ua_add(lun->target, NULL, lun->lun, 0x3f, 0x03);
	pr_info("target %u lun %u: %s opened, %llu blocks of %u\n",
		lun->target->tid, lun->lun, lun->path, lun->blocks,
		lun->block_size);
	return 0;
}

static void resize_error(int ret, struct netlink_ext_ack *extack)
{
	if (ret == -EOPNOTSUPP)
		NL_SET_ERR_MSG(extack,
			       "a block device keeps its own size: resize the device, then Resize=backing");
	else if (ret == -ENOTEMPTY)
		NL_SET_ERR_MSG(extack,
			       "data is written past the new end: Force=Yes drops it");
	else if (ret == -EROFS)
		NL_SET_ERR_MSG(extack, "a read-only LUN's file keeps its size");
	else if (ret == -ENOSPC)
		NL_SET_ERR_MSG(extack, "the size is less than one block");
	else if (ret == -EFBIG)
		NL_SET_ERR_MSG(extack, "the size is larger than a file can be");
	else
		NL_SET_ERR_MSG(extack, "the backing could not be resized");
}

/*
 * Publish a LUN's new size. Shrinking, the writes to what goes are let
 * end and later ones held at the write gate while set() (if any) cuts the
 * backing and the size drops; those held then meet the smaller LUN as they
 * run (iet_scsi_execute()): none lands past the end, none is lost after
 * its check. Growing, set() extends the backing before the size rises.
 */
static int publish_size(struct iet_lun *lun, u64 blocks, bool set,
			bool force)
{
	loff_t size = blocks << lun->blkbits;
	u64 old = lun->blocks;
	int ret = 0;

	if (blocks < old)
		iet_wgate_lock(lun, blocks, old - blocks);
	if (set)
		ret = lun->ops->resize(lun, &size, force);
	if (!ret)
		WRITE_ONCE(lun->blocks, blocks);
	if (blocks < old)
		iet_wgate_unlock(lun);
	return ret;
}

/*
 * A live LUN takes a new size: BLOCKS (a file is made that long), or 0
 * for what its backing has now (a volume grown under it). The LUN object,
 * its reservations and the commands in flight stay; every nexus hears
 * CAPACITY DATA HAS CHANGED. Shrinking drops what was past the end: only
 * forced, unless a file has nothing written there. A closed backing (a
 * standby node) takes the size it is to report until it opens. 1 when the
 * size changed, 0 when it was that already, or -errno.
 */
int iet_lun_resize(struct iet_lun *lun, u64 blocks, bool force,
		   struct netlink_ext_ack *extack)
{
	bool open = lun->ops->storage && lun->backing == IET_BACKING_OPEN;
	bool set = open && blocks;
	u64 old = lun->blocks;
	loff_t size = 0;
	int ret;

	lockdep_assert_held(&iet_mutex);
	if (blocks > (u64)LLONG_MAX >> lun->blkbits) {
		resize_error(-EFBIG, extack);
		return -EFBIG;
	}
	if (!lun->ops->storage && !blocks) {
		NL_SET_ERR_MSG(extack, "a nullio LUN has no backing: give the size");
		return -EINVAL;
	}
	if (lun->ops->storage && lun->backing == IET_BACKING_CLOSED &&
	    !blocks) {
		NL_SET_ERR_MSG(extack,
			       "the backing is closed (no portal group of the target is active): give the size");
		return -EINVAL;
	}
	if (lun->ops->storage && lun->backing == IET_BACKING_CLOSING) {
		NL_SET_ERR_MSG(extack, "the LUN's backing is closing");
		return -EBUSY;
	}
	if (open && !blocks) {
		ret = lun->ops->resize(lun, &size, false);
		if (ret) {
			resize_error(ret, extack);
			return ret;
		}
		blocks = size >> lun->blkbits;
		if (blocks < old && !force) {
			NL_SET_ERR_MSG(extack,
				       "the backing is smaller than the LUN: Force=Yes follows it (what was past its end is gone)");
			return -ENOTEMPTY;
		}
	}
	if (!blocks) {
		resize_error(-ENOSPC, extack);
		return -ENOSPC;
	}
	if (blocks == old)
		return 0;
	ret = publish_size(lun, blocks, set, force);
	if (ret) {
		resize_error(ret, extack);
		return ret;
	}
	iet_ua_add(lun->target, NULL, lun->lun, 0x2a, 0x09);
	pr_info("target %u lun %u: resized from %llu to %llu blocks of %u\n",
		lun->target->tid, lun->lun, old, blocks, lun->block_size);
	return 1;
}

/* REPORTED LUNS DATA HAS CHANGED, to every session of the target. */
static void luns_changed(struct iet_target *target)
{
	iet_ua_add(target, NULL, IET_LUN_ANY, 0x3f, 0x0e);
}

/*
 * What the netlink policy's ranges cannot say: powers of 2, a physical
 * block of whole logical blocks, and the rotation rates SBC-3 reserves
 * (2..0x400).
 */
static int lun_params_check(const struct iet_lun_params *p,
			    struct netlink_ext_ack *extack)
{
	u32 pbs = p->phys_block_size;

	if (!is_power_of_2(p->block_size) || p->block_size < 512 ||
	    p->block_size > 4096) {
		NL_SET_ERR_MSG(extack, "BlockSize must be 512, 1024, 2048 or 4096");
		return -EINVAL;
	}
	if (!is_power_of_2(pbs) || pbs < p->block_size ||
	    pbs > IET_PHYS_BLOCK_SIZE_MAX) {
		NL_SET_ERR_MSG(extack,
			       "PhysicalBlockSize must be a power of 2 from BlockSize to 32768");
		return -EINVAL;
	}
	if ((p->rotation_rate > 1 && p->rotation_rate < 0x401) ||
	    p->rotation_rate > 0xfffe) {
		NL_SET_ERR_MSG(extack,
			       "RotationRate must be 0, 1 or 1025..65534");
		return -EINVAL;
	}
	return 0;
}

int iet_lun_add(struct iet_target *target, u32 lun_id,
		const struct iet_lun_params *p, struct netlink_ext_ack *extack)
{
	const char *path = p->path;
	struct iet_lun *lun;
	bool closed;
	void *gone;
	int ret;

	lockdep_assert_held(&iet_mutex);
	ret = lun_params_check(p, extack);
	if (ret)
		return ret;
	if (xa_load(&target->luns, lun_id)) {
		NL_SET_ERR_MSG(extack, "this LUN exists");
		return -EEXIST;
	}
	lun = kzalloc(sizeof(*lun), GFP_KERNEL);
	if (!lun)
		return -ENOMEM;
	if (iet_stats_init(&lun->stats)) {
		kfree(lun);
		return -ENOMEM;
	}
	kref_init(&lun->kref);
	iet_tset_init(&lun->tset);
	iet_wgate_init(&lun->wgate);
	iet_sanitize_init(lun);
	lun->wce = p->iomode == IET_IOMODE_WB;
	lun->tas = true;
	lun->target = target;
	lun->lun = lun_id;
	lun->iomode = p->iomode;
	lun->block_size = p->block_size;
	lun->blkbits = ilog2(p->block_size);
	lun->pbexp = ilog2(p->phys_block_size) - lun->blkbits;
	lun->rotation_rate = p->rotation_rate;
	lun->thin_allowed = p->thin;
	lun->mode_select = p->mode_select;
	lun->blocks = p->blocks;
	lun->ops = backend(p->type);
	if (!lun->ops) {
		NL_SET_ERR_MSG(extack, "unknown LUN type");
		ret = -EINVAL;
		goto out_free;
	}
	if (path)
		strscpy(lun->path, path, sizeof(lun->path));
	/*
	 * Added while no active portal group of the target's own reaches it
	 * (an HA pair's standby node): its backing stays closed, and it
	 * reports the size it is given.
	 */
	closed = lun->ops->storage && !iet_tpg_active(target);
	if (closed && !lun->path[0]) {
		NL_SET_ERR_MSG(extack, "this LUN type needs a Path");
		ret = -EINVAL;
		goto out_free;
	}
	if (closed && !p->blocks) {
		NL_SET_ERR_MSG(extack,
			       "no portal group of the target is active: the backing stays closed, and Blocks must give its size");
		ret = -EINVAL;
		goto out_free;
	}
	INIT_WORK(&lun->close_work, close_work);
	lun->backing = closed ? IET_BACKING_CLOSED : IET_BACKING_OPEN;
	ret = percpu_ref_init(&lun->io, io_released,
			      closed ? PERCPU_REF_INIT_DEAD :
			      PERCPU_REF_ALLOW_REINIT, GFP_KERNEL);
	if (ret)
		goto out_free;
	/* Stable identities even when ietd gives none. */
	if (p->scsi_id[0])
		strscpy(lun->scsi_id, p->scsi_id, sizeof(lun->scsi_id));
	else
		snprintf(lun->scsi_id, sizeof(lun->scsi_id), "%08x%08x",
			 crc32c(~0, target->name, strlen(target->name)),
			 lun_id);
	if (p->scsi_sn[0])
		strscpy(lun->scsi_sn, p->scsi_sn, sizeof(lun->scsi_sn));
	else
		strscpy(lun->scsi_sn, lun->scsi_id, sizeof(lun->scsi_sn));

	ret = closed ? 0 : lun_attach(lun);
	if (ret) {
		attach_error(lun, ret, extack);
		goto out_ref;
	}
	/* Reservations kept through power loss, before any command. */
	ret = iet_pr_init(lun);
	if (!ret)
		ret = xa_insert(&target->luns, lun_id, lun, GFP_KERNEL);
	if (ret) {
		iet_pr_destroy(lun);
		if (!closed)
			lun->ops->detach(lun);
		goto out_ref;
	}
	luns_changed(target);
	/*
	 * The same LUN back with another size (a volume grown, then deleted
	 * and added again, as Proxmox VE resizes): CAPACITY DATA HAS CHANGED.
	 */
	gone = xa_erase(&target->gone_sizes, lun_id);
	if (gone && xa_to_value(gone) != lun->blocks)
		iet_ua_add(target, NULL, lun_id, 0x2a, 0x09);
	pr_info("target %u lun %u: %s %s, %llu blocks of %u%s\n", target->tid,
		lun_id, lun->ops->name, lun->path, lun->blocks, lun->block_size,
		closed ? ", closed: no portal group of the target is active" :
		"");
	return 0;

out_ref:
	percpu_ref_exit(&lun->io);
out_free:
	iet_stats_free(&lun->stats);
	kfree(lun);
	return ret;
}

int iet_lun_del(struct iet_target *target, u32 lun_id)
{
	struct iet_lun *lun;

	lockdep_assert_held(&iet_mutex);
	lun = xa_erase(&target->luns, lun_id);
	if (!lun)
		return -ENOENT;
	/* Remembered for a LUN added back in its place (and forgotten then). */
	if (lun->blocks <= LONG_MAX)
		xa_store(&target->gone_sizes, lun_id, xa_mk_value(lun->blocks),
			 GFP_KERNEL);
	luns_changed(target);
	pr_info("target %u lun %u deleted\n", target->tid, lun_id);
	/*
	 * Closed as its commands end, and counted as closing until then, so
	 * that a cluster that deletes it and then demotes its device can
	 * tell when the device is free.
	 */
	iet_sanitize_stop(lun);
	iet_lun_close(lun);
	iet_lun_put(lun);
	return 0;
}
