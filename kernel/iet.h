/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iscsi_trgt internal interfaces: the object model (target, LUN, session,
 * connection, command), the pipeline between read, I/O and write threads,
 * and the boundary between the iSCSI transport and SCSI emulation.
 */
#ifndef IET_H
#define IET_H

#include <linux/bvec.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/netlink.h>
#include <scsi/iscsi_proto.h>
#include <scsi/scsi_common.h>
#include <scsi/scsi_proto.h>
#include <linux/iet.h>

#include "compat.h"

#define IET_MAX_WTHREADS	128
#define IET_MAX_XFER		(8U << 20)	/* bytes per SCSI command */
#define IET_MAX_AHS		1020		/* 255 words */
#define IET_CDB_MAX		32		/* 16 + extended CDB AHS */
#define IET_SENSE_MAX		96
#define IET_TEXT_MAX		8192		/* a Text Request in full feature phase */
#define IET_CACHED_READ_MAX	(128U << 10)	/* served by the read thread */
#define IET_CAW_MAX		32		/* blocks of a COMPARE AND WRITE */
#define IET_NULLIO_BLOCKS	(64ULL << 20)	/* 32 GiB at 512 bytes */
#define IET_LUN_ANY		U32_MAX		/* every LUN (unit attentions, TMFs) */
#define IET_LUN_NONE		(U32_MAX - 1)	/* an address we never export */
/* The portal group of a target that has no other, and of old ietds' sessions. */
#define IET_TPGT_DEFAULT	1

struct iet_target;
struct iet_session;
struct iet_conn;
struct iet_cmd;
struct iet_lun;
struct iet_scsi_req;

/*
 * Pages a connection keeps for its next commands' data. The page
 * allocator zeroes every page it hands out (init_on_alloc, on by default
 * in Debian's kernels), which for a 128 KiB write costs more than
 * receiving it: a page whose command is done comes back here instead, if
 * nobody else holds it, and only the same connection's reads and writes,
 * which overwrite it whole, take it again. At most IET_POOL_PAGES each.
 */
#define IET_POOL_PAGES	128
struct iet_page_pool {
	spinlock_t lock;		/* nr and pages */
	unsigned int nr;
	struct page *pages[IET_POOL_PAGES];
};

void iet_page_pool_init(struct iet_page_pool *pool);
void iet_page_pool_drain(struct iet_page_pool *pool);

/*
 * A data buffer: whole pages, received into and sent from by reference.
 * len bytes in nr pages are there; cap pages may come (iet_buf_grow()).
 */
struct iet_buf {
	struct bio_vec *bvec;
	unsigned int nr;
	unsigned int cap;
	u32 len;
	bool lent;			/* holds pages that are not its own */
	struct iet_page_pool *pool;	/* where its pages come from, or NULL */
};

int iet_buf_alloc(struct iet_buf *buf, u32 len);
int iet_buf_reserve(struct iet_buf *buf, u32 len);
int iet_buf_grow(struct iet_buf *buf, u32 len);
void iet_buf_free(struct iet_buf *buf);
bool iet_buf_lend(struct iet_buf *buf, struct page *page, u32 len);
void iet_buf_return(struct iet_buf *buf);
int iet_buf_lend_zeros(struct iet_buf *buf, u32 len);
int iet_buf_init(void);
void iet_buf_exit(void);
void iet_buf_copy_to(struct iet_buf *buf, u32 off, const void *src, u32 len);
void iet_buf_copy_from(const struct iet_buf *buf, u32 off, void *dst, u32 len);
void iet_buf_zero(struct iet_buf *buf, u32 off, u32 len);
u32 iet_buf_cmp(const struct iet_buf *a, u32 aoff, const struct iet_buf *b,
		u32 boff, u32 len);
void iet_buf_or(struct iet_buf *dst, u32 doff, const struct iet_buf *src,
		u32 soff, u32 len);
void iet_buf_iter(const struct iet_buf *buf, struct iov_iter *iter,
		  unsigned int dir, u32 off, u32 len);

/* Counters and latency histograms of a LUN or a session (stats.c). */
struct iet_stats {
	struct iet_stats_cpu __percpu *cpu;
};

int iet_stats_init(struct iet_stats *st);
void iet_stats_free(struct iet_stats *st);
int iet_stats_put(struct sk_buff *skb, const struct iet_stats *st);

/* ---- backends ---------------------------------------------------------- */

enum iet_io_op {
	IET_IO_NONE,
	IET_IO_READ,
	IET_IO_WRITE,
	IET_IO_FLUSH,
};

/* One I/O of a command: whole blocks of its buffer at pos, or a flush. */
struct iet_io {
	enum iet_io_op op;
	bool stable;			/* FUA, or the write-through promise */
	loff_t pos;
	u64 len;			/* bytes; a flush of 0 means all */
	u32 done;			/* bytes read without sleeping */
	atomic_t pending;		/* bios in flight, plus one */
	int error;
	/*
	 * Started by the thread that received it, which must not sleep: the
	 * backend starts it only as far as it can without (REQ_NOWAIT) and
	 * ends it with -EAGAIN if it cannot, and it runs again, whole, in an
	 * I/O thread (iet_scsi_io_again()).
	 */
	bool nowait;
	bool blocked;			/* a bio would have had to wait */
	bool again;			/* to an I/O thread (irq_done) */
	/* Ends an I/O of iet_lun_io_sync() instead of the command. */
	void (*end)(struct iet_scsi_req *req, int error);
};

int iet_lun_io_sync(struct iet_lun *lun, enum iet_io_op op, loff_t pos,
		    struct iet_buf *buf, u32 len, bool stable);
int iet_backend_io_sync(struct iet_lun *lun, enum iet_io_op op, loff_t pos,
			struct iet_buf *buf, u32 len, bool stable);

/*
 * Storage behind a LUN, asynchronous at the interface: submit() starts the
 * command's I/O and iet_scsi_io_done() ends it, from any context (a bio's
 * end_io, an I/O thread, the submitter itself). A backend whose submit()
 * does synchronous VFS I/O says so (blocking): then only the target's I/O
 * threads call it. read_cached() serves a read from what is in memory and
 * never sleeps: it returns 0 once io.done covers io.len, else -EAGAIN
 * (having moved io.done on by what it found). lend(), if there, serves a
 * whole read the same way without copying: it fills the command's reserved
 * buffer with references to pages that already hold the data (the page
 * cache, a page of zeros) and returns 0, or -EAGAIN with the buffer left
 * empty; with digest the Data-In is digested before it is sent, and only
 * pages nobody writes may be lent. prefetch(), if there, starts reading a
 * range into the backend's cache, from an I/O thread.
 *
 * Thin provisioning, where attach() found the storage can (lun->thin),
 * from an I/O thread: unmap() deallocates whole blocks, and with zero the
 * range must read back as zeros after it (WRITE SAME with UNMAP); without
 * it, the range reads as zeros only if lun->lbprz says so (UNMAP). Both
 * are stable before they return when the LUN writes through. mapped(), if
 * there, tells whether pos is mapped and where that extent ends (else
 * everything is mapped).
 */
struct iet_backend_ops {
	const char *name;
	u32 type;				/* enum iet_lun_type */
	bool blocking;
	bool storage;				/* a path it opens and closes */
	int (*attach)(struct iet_lun *lun, const char *path);
	void (*detach)(struct iet_lun *lun);
	void (*submit)(struct iet_lun *lun, struct iet_scsi_req *req);
	int (*read_cached)(struct iet_lun *lun, struct iet_scsi_req *req);
	int (*lend)(struct iet_lun *lun, struct iet_scsi_req *req,
		    bool digest);
	void (*prefetch)(struct iet_lun *lun, loff_t pos, u64 len);
	int (*unmap)(struct iet_lun *lun, loff_t pos, u64 len, bool zero);
	int (*mapped)(struct iet_lun *lun, loff_t pos, loff_t *end,
		      bool *mapped);
	/*
	 * The open backing's size in bytes into *size when it is 0; else
	 * the backing made *size long (a file: -EOPNOTSUPP where it keeps
	 * its own size, -ENOTEMPTY when data past *size would go and not
	 * force).
	 */
	int (*resize)(struct iet_lun *lun, loff_t *size, bool force);
};

extern const struct iet_backend_ops iet_fileio_ops;
extern const struct iet_backend_ops iet_nullio_ops;
extern const struct iet_backend_ops iet_blockio_ops;

/* A LUN's task set (tset.c). */
struct iet_tset {
	spinlock_t lock;			/* protects the set and its tasks' tset_* */
	struct list_head live;			/* oldest first */
};

void iet_tset_init(struct iet_tset *ts);
void iet_tset_enter(struct iet_scsi_req *req);
bool iet_tset_ready(struct iet_scsi_req *req);
bool iet_tset_start(struct iet_scsi_req *req);
void iet_tset_exit(struct iet_scsi_req *req);
void iet_tset_abort(struct iet_scsi_req *req);

/* A registration of a LUN's persistent reservations (pr.c). */
#define IET_PR_REGS_MAX		128
#define IET_PR_REGS_PER_NAME	32	/* of one initiator name */

struct iet_pr_reg {
	u64 key;
	u64 isid;				/* of the port, or IET_PR_ANY_ISID */
	u16 rtpi;				/* the target port */
	bool all_tg_pt;				/* or every target port */
	bool holder;				/* of a one-holder reservation */
	bool gone;				/* while PR OUT builds a state */
	char initiator[IET_NAME_MAX + 1];
};

/* Registrations and reservation: replaced whole, never changed in place. */
struct iet_pr_state {
	u32 generation;
	u32 nr;
	u32 cap;
	bool reserved;
	u8 type;
	bool aptpl;
	struct iet_pr_reg regs[];
};

struct iet_pr {
	struct mutex mutex;			/* changes, one at a time */
	spinlock_t lock;			/* protects state, scsi2 */
	struct iet_pr_state *state;
	struct iet_session *scsi2;		/* SPC-2 RESERVE's holder */
	bool active;				/* a reservation: commands check */
	bool persisted;				/* the newest record has state */
	bool legacy;				/* it is an older module's */
	char slot;				/* the file holding it */
	u64 seq;				/* its sequence number */
};

int iet_pr_init(struct iet_lun *lun);
void iet_pr_destroy(struct iet_lun *lun);
void iet_pr_check(struct iet_scsi_req *req);
bool iet_pr_allows(struct iet_lun *lun, struct iet_session *nexus, bool write);
void iet_pr_reset(struct iet_lun *lun);
void iet_pr_release_spc2(struct iet_target *target,
			 struct iet_session *holder);
int iet_pr_fill(struct sk_buff *skb, struct iet_lun *lun);
int iet_pr_admin_clear(struct iet_lun *lun, bool all);

/* A LUN's write gate (wgate.c). */
struct iet_wgate {
	struct mutex excl_lock;			/* one exclusive command */
	spinlock_t lock;			/* protects parked, sets excl */
	unsigned long excl;			/* buckets it holds closed */
	struct list_head parked;		/* writes waiting for them */
	wait_queue_head_t wq;			/* it waits for writers */
	atomic_t writers[BITS_PER_LONG];	/* writes running, by bucket */
};

#define IET_WGATE_ALL	U64_MAX		/* wnr: every block of the LUN */

void iet_wgate_init(struct iet_wgate *g);
bool iet_wgate_enter(struct iet_scsi_req *req);
void iet_wgate_exit(struct iet_scsi_req *req);
void iet_wgate_lock(struct iet_lun *lun, u64 lba, u64 nr);
void iet_wgate_unlock(struct iet_lun *lun);

/*
 * A LUN's sanitize operation (sanitize.c): at most one at a time, run by
 * its own work item past the command that asked for it (IMMED, a reset, a
 * lost nexus). state and progress are read without the lock.
 */
enum iet_sanitize_state {
	IET_SANITIZE_IDLE,
	IET_SANITIZE_RUNNING,		/* every other command: NOT READY */
	IET_SANITIZE_FAILED,		/* until one succeeds, or an exit */
};

struct iet_sanitize {
	spinlock_t lock;			/* the fields below */
	u8 state;				/* enum iet_sanitize_state */
	bool ause;				/* EXIT FAILURE MODE may end a failure */
	bool stop;				/* the LUN is going */
	u8 sa;					/* its service action */
	u8 passes;				/* OVERWRITE COUNT */
	bool invert;				/* INVERT between passes */
	u16 progress;				/* of 65536 */
	u8 *block;				/* one block of the pattern */
	struct iet_scsi_req *waiter;		/* the command, without IMMED */
	struct work_struct work;
};

/*
 * Whether a LUN's storage is open (lun.c): it is while the target can be
 * reached through an active portal group of its own, and only then.
 * CLOSED -> OPEN and OPEN -> CLOSING under iet_mutex; CLOSING -> CLOSED in
 * the LUN's close_work once the last command using it has ended.
 */
enum iet_backing {
	IET_BACKING_OPEN,
	IET_BACKING_CLOSING,
	IET_BACKING_CLOSED,
};

struct iet_lun {
	struct kref kref;
	struct rcu_head rcu;
	struct iet_target *target;		/* the LUN's target outlives it */
	/*
	 * Held by every command that uses the backend, from the moment it
	 * runs to its completion (iet_scsi_hold_backing()), and by each
	 * iet_lun_io_sync(): killed to close the backing, and once it drains
	 * close_work detaches the backend.
	 */
	struct percpu_ref io;
	enum iet_backing backing;		/* READ_ONCE without iet_mutex */
	struct work_struct close_work;
	u32 lun;
	u32 iomode;				/* enum iet_iomode */
	u32 block_size;
	u8 blkbits;
	u8 pbexp;				/* log2(physical / logical) */
	u16 rotation_rate;			/* VPD 0xb1 */
	/* Changed under iet_mutex by a resize: READ_ONCE without it. */
	u64 blocks;
	char path[IET_PATH_MAX + 1];
	char scsi_id[IET_SCSI_ID_MAX + 1];
	char scsi_sn[IET_SCSI_SN_MAX + 1];
	const struct iet_backend_ops *ops;
	void *private;				/* the backend's */
	struct iet_tset tset;
	struct iet_wgate wgate;
	struct iet_pr pr;
	struct iet_sanitize sanitize;
	/* Mode parameters MODE SELECT changes (READ_ONCE, WRITE_ONCE). */
	bool wce;				/* write cache: not stable */
	bool swp;				/* software write protect */
	bool d_sense;				/* descriptor format sense */
	bool tas;				/* TASK ABORTED to other nexuses */
	bool mode_select;			/* IET_A_LUN_MODE_SELECT */
	bool thin;				/* unmap() works here */
	bool lbprz;				/* unmapped blocks read as zeros */
	bool thin_allowed;			/* IET_A_LUN_THIN */
	u32 unmap_gran;				/* blocks; 0: a physical one */
	u32 unmap_align;			/* blocks, below unmap_gran */
	struct iet_stats stats;
};

/* What IET_CMD_LUN_NEW asks for, defaults filled in (netlink.c). */
struct iet_lun_params {
	u32 type;				/* enum iet_lun_type */
	const char *path;			/* NULL: none */
	u32 iomode;				/* enum iet_iomode */
	const char *scsi_id;			/* "": derived */
	const char *scsi_sn;			/* "": the scsi_id */
	u32 block_size;
	u32 phys_block_size;
	u32 rotation_rate;
	bool thin;				/* where the storage can */
	bool mode_select;			/* initiators may change them */
	u64 blocks;				/* nullio: 0 is the default */
};

struct iet_lun *iet_lun_get(struct iet_target *target, u32 lun);
void iet_lun_put(struct iet_lun *lun);
int iet_lun_open(struct iet_lun *lun, struct netlink_ext_ack *extack);
bool iet_lun_close(struct iet_lun *lun);
int iet_lun_io_hold(struct iet_lun *lun, bool live);
int iet_lun_add(struct iet_target *target, u32 lun,
		const struct iet_lun_params *p, struct netlink_ext_ack *extack);
int iet_lun_del(struct iet_target *target, u32 lun);
int iet_lun_resize(struct iet_lun *lun, u64 blocks, bool force,
		   struct netlink_ext_ack *extack);

/* ---- targets ----------------------------------------------------------- */

/* The target's pool of I/O threads ("Wthreads"), fed one command at a time. */
struct iet_iopool {
	spinlock_t lock;			/* queue, busy, refused, closed */
	struct list_head queue;
	wait_queue_head_t wq;
	struct task_struct *threads[IET_MAX_WTHREADS];
	unsigned int nr;			/* under target->lock */
	unsigned int busy;			/* threads running a command */
	bool refused;				/* a take left work for its share */
	bool closed;				/* no threads: see drain */
	struct work_struct drain;		/* ends what comes unexecuted */
};

/*
 * A portal group of a target: a target port (its relative target port
 * identifier is the tag) and a target port group of that one port (SPC-4
 * 5.16, its ID the tag too). Changed under target->lock; commands read
 * tag, state and implicit with READ_ONCE(), without it.
 */
struct iet_tpg {
	u16 tag;			/* TPGT, 1..65535; 0: a free slot */
	u8 state;			/* SPC-4's code: IET_ALUA_AO... */
	bool implicit;			/* changed since made (RTPG status) */
	bool remote;			/* another node's port: never logged into */
	u32 sessions;			/* through it, under target->lock */
};

/* Asymmetric access states as SPC-4 Table 164 codes them. */
#define IET_ALUA_AO		0x0
#define IET_ALUA_AN		0x1
#define IET_ALUA_S		0x2
#define IET_ALUA_U		0x3
#define IET_ALUA_T		0xf

/* iet_tpg_set()'s remote: make or keep the group's kind */
#define IET_TPG_KEEP	(-1)
int iet_tpg_set(struct iet_target *target, u16 tag, u32 state, int remote,
		struct netlink_ext_ack *extack);
bool iet_tpg_active(struct iet_target *target);
int iet_tpg_del(struct iet_target *target, u16 tag,
		struct netlink_ext_ack *extack);
int iet_tpg_find(struct iet_target *target, u16 tag);
u32 iet_alua_state_uapi(u8 state);
void iet_alua_check(struct iet_scsi_req *req);
void iet_alua_rtpg_parse(struct iet_scsi_req *req);

struct iet_target {
	struct kref kref;
	u32 tid;
	char name[IET_NAME_MAX + 1];
	/*
	 * Protects sessions, each session's conns list, tparams, keys and
	 * the size of the pool. Taken after iet_mutex, before session->lock.
	 */
	struct mutex lock;
	struct list_head sessions;
	struct list_head lost;			/* iet_lost_nexus, newest first */
	u32 nr_lost;
	struct xarray luns;			/* lun -> iet_lun; RCU readers */
	struct xarray gone_sizes;		/* lun -> blocks when deleted */
	u32 tparams[IET_TP_MAX + 1];
	u32 keys[IET_KEY_MAX + 1];
	struct iet_iopool pool;
	wait_queue_head_t wq;			/* a session went away */
	atomic_t conn_serial;			/* names of connection threads */
	/* Portal groups (alua.c): slots never move; tag 0 is a free one. */
	struct iet_tpg tpgs[IET_TPGS_MAX];
	atomic_t luns_closing;			/* LUN backings closing */
};

/* Serialises the control plane: netlink requests, module unload. */
extern struct mutex iet_mutex;
extern bool iet_shutting_down;		/* set under iet_mutex at unload */
extern struct xarray iet_targets;		/* tid -> iet_target */

struct iet_target *iet_target_lookup(u32 tid);	/* under iet_mutex */
int iet_target_add(u32 *tid, const char *name, struct nlattr *tparams,
		   struct nlattr *keys, struct netlink_ext_ack *extack);
int iet_target_set(struct iet_target *target, struct nlattr *tparams,
		   struct nlattr *keys, struct netlink_ext_ack *extack);
int iet_target_del(struct iet_target *target);
void iet_target_put(struct iet_target *target);
void iet_targets_destroy(void);
int iet_parse_params(struct nlattr *nest, u32 *vals, unsigned int max,
		     const struct nla_policy *policy,
		     struct netlink_ext_ack *extack);
extern const struct nla_policy iet_tparam_policy[IET_TP_MAX + 1];
extern const struct nla_policy iet_key_policy[IET_KEY_MAX + 1];

int iet_pool_resize(struct iet_target *target, unsigned int nr);
void iet_pool_submit(struct iet_target *target, struct iet_cmd *cmd);

/* ---- sessions ---------------------------------------------------------- */

/*
 * An I_T nexus whose session ended (SAM-5 6.3.4), remembered so that the
 * initiator port's next session hears I_T NEXUS LOSS OCCURRED rather than
 * POWER ON; the oldest are forgotten past IET_LOST_MAX a target.
 */
#define IET_LOST_MAX		256

struct iet_lost_nexus {
	struct list_head list;
	u64 isid;
	char initiator[IET_NAME_MAX + 1];
};

/* The status of an EXTENDED COPY held for RECEIVE COPY RESULTS (xcopy.c). */
#define IET_COPIES_HELD		8	/* per I_T nexus */
#define IET_COPIES_RUNNING	8	/* per I_T nexus at once */

struct iet_copy_status {
	bool used;
	u8 list_id;
	u8 status;				/* COPY MANAGER STATUS */
	u16 segments;				/* processed */
	u32 kib;				/* copied */
};

struct iet_session {
	struct kref kref;
	struct iet_target *target;		/* holds a target reference */
	u64 sid;
	char initiator[IET_NAME_MAX + 1];
	struct list_head list;			/* in target->sessions */
	struct list_head ending;		/* iet_targets_destroy() only */
	struct list_head conns;			/* under target->lock */
	bool closing;				/* under target->lock */
	bool unlinked;				/* gone from target->sessions */
	u32 keys[IET_KEY_MAX + 1];		/* negotiated, read-only */
	u32 queued_cmds;			/* the CmdSN window */
	u16 tpgt;				/* its portal group (target port) */
	u8 tpg;					/* that group's slot in target->tpgs */

	spinlock_t lock;			/* protects everything below */
	u32 exp_cmdsn;
	u32 max_cmdsn;
	u32 in_flight;				/* non-immediate, unanswered */
	atomic_t immediate;			/* immediate, unanswered */
	struct list_head pending;		/* out of order, by CmdSN */
	struct xarray ua;			/* LUN -> unit attentions (ua.c) */
	struct iet_copy_status copies[IET_COPIES_HELD];
	u8 copy_next;				/* the one replaced next */
	atomic_t copies_running;		/* EXTENDED COPYs running */
	atomic_t ordered;			/* ORDERED ones in task sets */
	atomic_t in_pool;			/* I/O threads its commands hold */

	struct iet_stats stats;
};

int iet_session_add(struct iet_target *target, u64 sid, const char *initiator,
		    u32 exp_cmdsn, u16 tpgt, struct nlattr *keys,
		    struct netlink_ext_ack *extack);
struct iet_session *iet_session_lookup(struct iet_target *target, u64 sid);
void iet_session_end(struct iet_session *session);
void iet_session_lost(struct iet_session *session);
void iet_lost_free(struct iet_target *target);
void iet_session_close(struct iet_session *session);
void iet_session_close_locked(struct iet_session *session);
void iet_session_close_others(struct iet_conn *conn);
bool iet_session_unlink_locked(struct iet_session *session);
void iet_session_put(struct iet_session *session);
void iet_session_window(struct iet_session *session, u32 *exp, u32 *max);
void iet_session_done(struct iet_session *session, struct iet_cmd *cmd);
bool iet_session_in_window(struct iet_session *session, u32 cmdsn);
void iet_ua_init(struct iet_session *session);
void iet_ua_destroy(struct iet_session *session);
void iet_ua_add(struct iet_target *target, struct iet_session *except,
		u32 lun, u8 asc, u8 ascq);
void iet_ua_add_session(struct iet_session *session, u32 lun, u8 asc, u8 ascq);
bool iet_ua_take(struct iet_session *session, u32 lun, u8 *asc, u8 *ascq);
unsigned int iet_ua_peek(struct iet_session *session, u32 lun, u8 *asc,
			 u8 *ascq);

/* ---- connections ------------------------------------------------------- */

enum iet_conn_flag {
	IET_CF_CLOSING,		/* teardown started */
	IET_CF_RX_READY,		/* the socket has data or changed state */
	IET_CF_TX_READY,		/* write space came back */
	IET_CF_NOP_DUE,		/* the keepalive timer wants a ping */
	IET_CF_LOGGED_OUT,	/* Logout Response sent: wait for the FIN */
	IET_CF_FAILED,		/* lost, not closed: the session ends too */
	IET_CF_RX_HELD,		/* rx holds a PDU until commands are freed */
	IET_CF_RELEASED,		/* the threads are gone: drain in a work */
	IET_CF_MEM_KICK,		/* memory was freed: retry conn->mem_wait */
	IET_CF_PINS_MODULE,	/* released with commands stuck in the backend */
	IET_CF_ASYNC_DUE,	/* a logout request is to be sent */
	IET_CF_TX_OWNED,		/* somebody sends: see iet_tx_own() */
	IET_CF_TX_BLOCKED,	/* the socket was full: wait for TX_READY */
	IET_CF_TX_HANDOFF,	/* a long Data-In is queued: the writer sends */
};

/*
 * What one connection may hold: commands of every kind (past it, its read
 * thread stops reading and TCP pushes back on the initiator), and bytes of
 * buffers pinned by reads and writes (past it, reads wait to run and
 * writes wait for their R2Ts: iet_cmd_admit()). A legitimate initiator
 * stays within its CmdSN window and never meets the command limit; the
 * byte limit only lowers its parallelism. What arrives unasked (immediate
 * and unsolicited data, ping echoes) and replies' buffers take the limit's
 * last IET_CONN_PIN_UNASKED, which admissions leave them, and past the
 * limit are refused (iet_conn_pin_now()).
 */
#define IET_CONN_CMDS(window)	(2 * (window) + 64)
#define IET_CONN_PIN_MAX	(64UL << 20)
#define IET_CONN_PIN_UNASKED	(IET_CONN_PIN_MAX / 8)

enum rx_state {
	IET_RX_BHS,
	IET_RX_AHS,
	IET_RX_HDIGEST,
	IET_RX_ADMIT,		/* the header is in; waiting for resources */
	IET_RX_DATA,
	IET_RX_PAD,
	IET_RX_DDIGEST,
};

/* The receive side: one PDU at a time, advanced by rx_step(). */
struct iet_rx {
	enum rx_state state;
	u32 done;			/* bytes of the current piece */
	struct iscsi_hdr bhs;
	u8 ahs[IET_MAX_AHS];
	u32 ahs_len;
	u32 dlen;			/* data segment length */
	u32 pad;
	__le32 digest;
	u32 crc;			/* data digest so far */
	u32 crc_upto;			/* bytes of the buffer part folded */
	u8 pad_buf[4];
	struct iet_buf *dbuf;		/* the data goes here, or nowhere */
	u32 doff;
	u32 dkeep;			/* bytes for dbuf; the rest is dropped */
	struct iet_cmd *cmd;		/* the command this PDU belongs to */
	bool digest_error;
};

enum tx_state {
	IET_TX_IDLE,
	IET_TX_SENDING,
};

/*
 * A PDU's header, digests, padding and the small payloads that live in
 * kernel memory (sense data, a rejected header) go into a slot of a page
 * fragment, so that the whole PDU is sent by reference in one go. Every
 * slot has this size: page_frag then never lets one cross a page.
 */
#define IET_TX_SLOT	256

/* The PDU being sent. */
struct iet_tx {
	enum tx_state state;
	struct iet_cmd *cmd;
	u8 hdr[ISCSI_HDR_LEN];		/* built here, then sealed in a slot */
	struct iet_buf *dbuf;		/* data from pages, by reference */
	void *kdata;			/* or small data from kernel memory */
	u32 doff;
	u32 dlen;
	struct page_frag_cache frag;	/* the slots */
	void *slot;			/* the current PDU's */
	struct bio_vec *bvec;		/* the PDU: slot, data pages, slot */
	unsigned int nr;
	u32 len;			/* bytes of the PDU */
	u32 done;			/* of which sent */
	bool corked;			/* sent with MSG_MORE, not pushed */
	bool more;			/* more PDUs were queued behind it */
};

struct iet_text;

struct iet_conn {
	struct kref kref;
	struct iet_session *session;	/* holds a session reference */
	struct list_head list;		/* in session->conns */
	bool unlinked;			/* gone from session->conns */
	u16 cid;
	u32 serial;
	unsigned long flags;		/* enum iet_conn_flag */
	struct socket *sock;
	struct file *file;		/* holds the socket */
	struct sockaddr_storage peer;
	struct sockaddr_storage local;
	/*
	 * A Text exchange (text.c), under text_mutex: a Text request runs in
	 * the read thread that delivers it in CmdSN order, which may be
	 * another connection's of the session (MaxConnections > 1).
	 */
	struct mutex text_mutex;
	struct iet_text *text;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	struct task_struct *rx_thread;
	struct task_struct *tx_thread;

	/* connection-scoped negotiated keys, read-only */
	bool hdigest;
	bool ddigest;
	u32 max_recv_dsl;
	u32 max_xmit_dsl;
	u32 keys[IET_KEY_MAX + 1];

	void *scratch;			/* a page for data that is dropped */
	struct iet_page_pool pool;	/* for its commands' data pages */
	struct iet_rx rx;		/* rx thread only */
	struct iet_tx tx;		/* tx thread only */
	u32 stat_sn;			/* tx thread only */
	u32 exp_stat_sn;		/* rx thread only */
	u32 next_ttt;			/* under lock */

	/*
	 * Protects tx_queue, mem_wait, the R2T state of their commands,
	 * nop_* and logout. Taken inside session->lock when both are needed.
	 */
	spinlock_t lock;
	struct list_head tx_queue;	/* commands with a PDU to send */
	struct iet_cmd *logout;		/* answered once commands drain */
	u32 nop_ttt;			/* our outstanding ping, 0 = none */
	unsigned long nop_sent;		/* jiffies */

	struct xarray cmds;		/* ITT -> SCSI command */
	atomic_t nr_cmds;		/* commands not yet released */
	u32 max_cmds;			/* IET_CONN_CMDS() of the window */
	atomic_long_t pinned;		/* bytes of their buffers */
	atomic_t nr_admitted;		/* commands holding their whole buffer */
	struct llist_head done;		/* completed, for the write thread */
	struct list_head mem_wait;	/* commands waiting for pinned bytes */
	struct work_struct done_work;	/* drains done once tx is gone */
	atomic_t nr_scsi;		/* of which SCSI commands */
	unsigned long logout_time;	/* jiffies of the Logout Response */
	unsigned long logout_by;	/* we asked for a Logout: jiffies, 0 no */
	u16 logout_wait;		/* seconds given for it */
	wait_queue_head_t cmds_wq;
	unsigned long last_rx;		/* jiffies of the last PDU */
	u32 nop_interval;		/* seconds, 0 = off */
	u32 nop_timeout;
	struct timer_list timer;
	struct work_struct release_work;
};

int iet_conn_init(void);
void iet_conn_exit(void);
void iet_conn_fail(struct iet_conn *conn);
int iet_conn_add(struct iet_session *session, u16 cid, int fd, u32 stat_sn,
		 struct nlattr *keys, struct netlink_ext_ack *extack);
struct iet_conn *iet_conn_lookup(struct iet_session *session, u16 cid);
void iet_conn_close(struct iet_conn *conn);
void iet_conn_put(struct iet_conn *conn);
void iet_conn_drain_done(struct iet_conn *conn);
void iet_conn_drain_later(struct iet_conn *conn);
bool iet_queue_work(struct work_struct *work);
void iet_queue_close(struct work_struct *work);
int iet_rx_thread(void *arg);
void iet_tx_slot_free(struct iet_tx *tx);
int iet_tx_thread(void *arg);
bool iet_tx_inline(void);
bool iet_tx_own(struct iet_conn *conn);
void iet_tx_wake(struct iet_conn *conn);
void iet_tx_flush(struct iet_conn *conn);
bool iet_tx_handoff(struct iet_conn *conn);
u32 iet_data_in_len(struct iet_cmd *cmd);
/*
 * Bytes another thread sends itself before the write thread takes over; a
 * command with more Data-In than this is the writer's from the start.
 */
#define IET_TX_INLINE_BUDGET	(64 * 1024)
/* Receive steps the read thread takes between two such sends at most. */
#define IET_RX_OWN_STEPS	16

/* ---- commands ---------------------------------------------------------- */

#define IET_ALSO_MAX	8	/* LUNs a command reaches besides its own */

/*
 * What SCSI emulation needs of a command and gives back. The transport
 * embeds it in its command; SCSI code never sees iSCSI.
 */
struct iet_scsi_req {
	struct iet_session *nexus;	/* the I_T nexus, for unit attentions */
	struct iet_lun *lun;		/* NULL: no such logical unit */
	u32 lun_id;
	u8 cdb[IET_CDB_MAX];
	u32 edtl;			/* what the initiator expects to move */
	bool want_read;			/* the initiator's R flag */
	bool want_write;		/* the initiator's W flag */

	/*
	 * Set by iet_scsi_parse(). execute() returns 0 when the command is
	 * done, IET_ASYNC when its I/O ends in iet_scsi_io_done(); with
	 * blocking it runs in an I/O thread. execute_nowait(), if set, is
	 * tried first in the delivering thread: 0 done, -EAGAIN not yet.
	 */
	int (*execute)(struct iet_scsi_req *req);
	int (*execute_nowait)(struct iet_scsi_req *req);
	u32 xfer_len;			/* bytes the CDB asks to move */
	u32 buf_len;			/* bytes of buffer the command needs */
	bool data_out;			/* the command takes data from the host */
	u64 lba;
	u32 nr_blocks;			/* blocks actually read or written */
	bool fua;
	bool blocking;			/* runs in an I/O thread */
	bool lengthy;			/* holds it long (a copy) */
	bool check_ua;			/* a unit attention preempts it */
	bool holds_io;			/* a reference of lun->io */
	u8 op_flags;			/* its iet_opcode's */
	struct iet_io io;
	/* The blocks it writes, for the LUN's write gate (wnr 0: none). */
	u64 wlba;
	u64 wnr;
	unsigned long wgate;		/* the buckets it counts in */
	struct list_head wgate_entry;	/* parked behind an exclusive one */
	/* In the LUN's task set, under its lock. */
	u8 attr;			/* ISCSI_ATTR_* */
	bool in_tset;
	bool tset_enabled;		/* allowed to run */
	bool tset_held;			/* waits for older ones */
	bool tset_aborted;		/* by a TMF: waits for nobody */
	struct list_head tset_entry;	/* in tset.live */
	struct list_head tset_resume;
	/*
	 * The other LUNs it reads or writes (EXTENDED COPY's copy targets),
	 * set once before it touches them (nr_also last, released): task
	 * management of any of them ends it as one of their own.
	 */
	u32 also[IET_ALSO_MAX];
	u8 nr_also;

	/* results */
	u8 status;			/* SAM status */
	u8 sense_len;
	u8 sense[IET_SENSE_MAX];
	u32 data_len;			/* data-in the command produced */
	struct iet_buf buf;

	/* ktime_get_ns() of its arrival, first submission, backend's end */
	u64 t_rx;
	u64 t_submit;
	u64 t_backend;
};

void iet_stats_cmd_done(struct iet_session *session,
			const struct iet_scsi_req *req);
void iet_stats_cmd_sent(struct iet_session *session,
			const struct iet_scsi_req *req);
void iet_stats_copied(struct iet_lun *src, struct iet_lun *dst, u64 bytes);

#define IET_ASYNC	1	/* execute(): the backend completes it later */

/* Ended by task management while it runs: a long command stops at its next step. */
static inline bool iet_scsi_aborted(const struct iet_scsi_req *req)
{
	return READ_ONCE(req->tset_aborted);
}

bool iet_scsi_touches(const struct iet_scsi_req *req, u32 lun);

void iet_scsi_parse(struct iet_scsi_req *req);
int iet_scsi_execute(struct iet_scsi_req *req);
void iet_scsi_io_done(struct iet_scsi_req *req, int error);
void iet_scsi_resume(struct iet_scsi_req *req);
void iet_scsi_io_again(struct iet_scsi_req *req);
void iet_scsi_resume_later(struct iet_scsi_req *req);
void iet_scsi_io_error(struct iet_scsi_req *req, enum iet_io_op op, int error);
void iet_sbc_cdb_range(const u8 *cdb, u64 *lba, u32 *nr);
bool iet_sbc_lba_ok(struct iet_scsi_req *req, u64 lba, u32 nr);
bool iet_sbc_still_fits(struct iet_scsi_req *req);
void iet_sbc_rw_parse(struct iet_scsi_req *req, u64 lba, u32 nr, bool write,
		      u8 protect, bool fua);
void iet_scsi_done(struct iet_scsi_req *req);
void iet_scsi_check_ua(struct iet_scsi_req *req);
bool iet_scsi_hold_backing(struct iet_scsi_req *req);
void iet_scsi_release_backing(struct iet_scsi_req *req);
void iet_scsi_data_in(struct iet_scsi_req *req, u32 alloc, u32 max);
void iet_scsi_sense(struct iet_scsi_req *req, u8 key, u8 asc, u8 ascq);
void iet_scsi_invalid_field(struct iet_scsi_req *req, u32 byte, int bit);
void iet_scsi_invalid_param(struct iet_scsi_req *req, u32 byte, int bit);
u32 iet_sense_progress(u8 *sense, u32 len, u16 progress);
void iet_scsi_sense_info(struct iet_scsi_req *req, u64 info);
bool iet_scsi_writable(struct iet_scsi_req *req);
u8 *iet_scsi_param_list(struct iet_scsi_req *req, u32 min);
void iet_scsi_set_data(struct iet_scsi_req *req, u32 off, const void *src,
		       u32 len);

/*
 * A command of the device server: how its CDB is parsed, and what REPORT
 * SUPPORTED OPERATION CODES says of it. usage[] holds the bits of the CDB
 * the device server looks at (SPC-4 6.35.3); a CDB with any other bit set
 * is refused before parse() runs, so the report is what dispatch does.
 * Entries of one operation code are adjacent in their table.
 */
struct iet_opcode {
	u8 op;
	u8 sa;			/* the service action, with IET_OP_SA */
	u8 flags;
	u8 len;			/* of the CDB */
	u16 timeout;		/* recommended command timeout, seconds */
	void (*parse)(struct iet_scsi_req *req);
	/* If there: whether a LUN has it (REPORT SUPPORTED OPERATION CODES). */
	bool (*supported)(const struct iet_lun *lun);
	u8 usage[16];
};

#define IET_OP_SA	0x01	/* a service action in CDB byte 1, bits 4-0 */
#define IET_OP_ANY_LUN	0x02	/* answered for any LUN, before UAs */
/*
 * Persistent reservations (SPC-4 Table 63, SBC-3 Table 13): a command
 * passes every reservation (FREE), passes write exclusive ones (READ), or
 * checks them itself (OWN); any other conflicts unless its nexus has access.
 */
#define IET_OP_PR_FREE	0x04
#define IET_OP_PR_READ	0x08
#define IET_OP_PR_OWN	0x10
/*
 * ALUA (SPC-4 5.16.2.4): what a command may do through a target port group
 * that is not active: run in standby (STANDBY), or in every state (ANY);
 * any other gets NOT READY.
 */
#define IET_OP_ALUA_STANDBY	0x20
#define IET_OP_ALUA_ANY		0x40

extern const struct iet_opcode iet_spc_opcodes[];
extern const unsigned int iet_spc_nr_opcodes;
extern const struct iet_opcode iet_sbc_opcodes[];
extern const unsigned int iet_sbc_nr_opcodes;
extern const struct iet_opcode iet_verify_opcodes[];
extern const unsigned int iet_verify_nr_opcodes;
extern const struct iet_opcode iet_thin_opcodes[];
extern const unsigned int iet_thin_nr_opcodes;
extern const struct iet_opcode iet_xcopy_opcodes[];
extern const unsigned int iet_xcopy_nr_opcodes;
extern const struct iet_opcode iet_pr_opcodes[];
extern const unsigned int iet_pr_nr_opcodes;
extern const struct iet_opcode iet_sanitize_opcodes[];
extern const unsigned int iet_sanitize_nr_opcodes;

void iet_sanitize_init(struct iet_lun *lun);
void iet_sanitize_stop(struct iet_lun *lun);
void iet_sanitize_check(struct iet_scsi_req *req);
bool iet_sanitize_idle(const struct iet_lun *lun);
bool iet_sanitize_sense(struct iet_lun *lun, bool desc, u8 *sense, u32 *len);
void iet_sanitize_abort(struct iet_scsi_req *req);
void iet_sanitize_logout(struct iet_conn *conn);
bool iet_sanitize_block_erase(const struct iet_lun *lun);
int iet_sanitize_module_init(void);
void iet_sanitize_module_exit(void);

u32 iet_write_same_max(struct iet_lun *lun);
u32 iet_vpd_third_party_copy(struct iet_scsi_req *req, u8 *d);
#define IET_NAA_LEN	8
void iet_lun_naa(const struct iet_lun *lun, u8 *naa);
void iet_thin_block_limits(struct iet_lun *lun, u8 *d);
void iet_get_lba_status_parse(struct iet_scsi_req *req);

void iet_opcodes_init(void);
const struct iet_opcode *iet_opcode_find(const u8 *cdb);
bool iet_opcode_has_sa(const u8 *cdb);
void iet_opcodes_report_parse(struct iet_scsi_req *req);
void iet_tmf_report_parse(struct iet_scsi_req *req);

enum iet_cmd_kind {
	IET_KIND_NONE,		/* stands in for a CmdSN taken as received */
	IET_KIND_SCSI,
	IET_KIND_TMF,
	IET_KIND_NOP,		/* NOP-Out: echo as NOP-In */
	IET_KIND_PING,		/* our own NOP-In */
	IET_KIND_TEXT,
	IET_KIND_LOGOUT,
	IET_KIND_REJECT,
	IET_KIND_ASYNC,		/* our Async Message: log out, please */
};

/*
 * Where a command is in its life; it only moves forward, under conn->lock.
 * Whether all its data is in (data_done) and whether task management ended
 * it (aborted) are told apart from this.
 */
enum iet_cmd_state {
	IET_ST_NEW,		/* received, waiting for its CmdSN turn */
	IET_ST_DELIVERED,	/* its turn came: waiting for its data */
	IET_ST_DISPATCHED,	/* run, or in the backend */
	IET_ST_EXECUTED,	/* done: its response may be sent */
	/*
	 * The PDU with the status is built or being built: an abort checks
	 * for it under the same lock, so a task is either aborted before its
	 * status or answered, never both.
	 */
	IET_ST_STATUS_SENT,
};

/*
 * The one list of its connection a command waits on, if any: to send a PDU,
 * or for memory, and what it does once it has that (conn->lock).
 */
enum iet_cmd_queue {
	IET_Q_NONE,
	IET_Q_TX,		/* conn->tx_queue */
	IET_Q_MEM_DISPATCH,	/* conn->mem_wait; a read: then run */
	IET_Q_MEM_R2T,		/* conn->mem_wait; a write: then solicit */
};

enum iet_logout_scope {
	IET_LOGOUT_NONE,		/* answer only */
	IET_LOGOUT_CONN,		/* this connection ends */
	IET_LOGOUT_SESSION,		/* the whole session ends */
};

struct iet_cmd {
	struct kref kref;
	struct iet_conn *conn;		/* a conn reference while alive */
	enum iet_cmd_kind kind;
	struct list_head pending;	/* session->pending */
	struct list_head q_entry;	/* the list queue names */
	struct list_head io_entry;	/* the I/O pool's queue */
	struct list_head tmf_entry;	/* a TMF's list of victims */
	struct llist_node done_node;	/* conn->done */
	struct iscsi_hdr hdr;		/* the request's header */
	u32 itt;			/* as on the wire (opaque) */
	u32 cmdsn;
	bool immediate;
	bool in_table;			/* in conn->cmds */
	bool dropped;			/* outside the window: never runs */
	u8 queue;			/* enum iet_cmd_queue, under conn->lock */
	bool admitted;			/* counted in conn->nr_admitted */
	bool mem_waited;		/* has waited for memory */
	bool counted;			/* occupies the CmdSN window */
	bool counted_immediate;		/* in session->immediate */
	/* The thread that sends the status if it completes there and then. */
	struct task_struct *flusher;
	enum iet_cmd_state state;	/* under conn->lock */
	bool data_done;			/* all the data it expects is here */
	bool aborted;			/* terminated by task management */
	bool tas;			/* so by another nexus: TASK ABORTED */
	bool digest_error;
	bool bidi;			/* bidirectional: not supported */
	u8 reject_reason;		/* IET_KIND_REJECT, or deferred */
	u8 logout_scope;		/* enum iet_logout_scope */

	/* Data-Out bookkeeping (SCSI writes) */
	u32 unsol_len;			/* immediate + unsolicited bytes */
	u32 want_len;			/* bytes the target will solicit to */
	u32 data_next;			/* next expected offset */
	u32 exp_datasn;
	u32 ttt;
	u32 r2t_next;			/* under conn->lock */
	u32 r2t_sn;			/* under conn->lock */
	u32 r2t_outstanding;		/* under conn->lock */
	u32 seq_end;			/* end of the current data sequence */
	u8 sense_pdu[2 + IET_SENSE_MAX];	/* SenseLength + sense */

	/* Data-In progress (tx thread) */
	u32 datasn;
	u32 tx_off;

	/* task management */
	struct iet_cmd *tmf;		/* the TMF waiting for this command */
	atomic_t tmf_wait;		/* commands this TMF waits for */
	u8 tmf_response;		/* also the Logout response */
	u8 tmf_info[3];			/* ADDITIONAL RESPONSE INFORMATION */
	u8 text_flags;			/* of a Text Response: F, C */
	u32 text_ttt;			/* its Target Transfer Tag */

	struct iet_buf data;		/* non-SCSI payloads (text, ping) */
	u32 data_len;
	u32 pinned;			/* bytes counted in conn->pinned */
	u32 held;			/* bytes held, in the module's budget */
	struct iet_scsi_req req;
};

struct iet_cmd *iet_cmd_alloc(struct iet_conn *conn, enum iet_cmd_kind kind);
struct iet_cmd *iet_cmd_alloc_rx(struct iet_conn *conn, enum iet_cmd_kind kind);
int iet_cmd_buf_alloc(struct iet_cmd *cmd, struct iet_buf *buf, u32 len);
int iet_cmd_buf_grow(struct iet_cmd *cmd, u32 len);
int iet_cmd_admit(struct iet_cmd *cmd, u32 total, enum iet_cmd_queue then);
bool iet_conn_pin_now(struct iet_conn *conn, u32 len);
bool iet_cmd_buf_lend(struct iet_cmd *cmd);
void iet_conn_mem_retry(struct iet_conn *conn);
void iet_conn_mem_kick(struct iet_conn *conn);
void iet_cmd_get(struct iet_cmd *cmd);
void iet_cmd_put(struct iet_cmd *cmd);
void iet_cmd_finish(struct iet_cmd *cmd);
bool iet_cmd_tas(struct iet_cmd *cmd);
struct iet_cmd *iet_cmd_find(struct iet_conn *conn, u32 itt);
void iet_cmd_queue_tx(struct iet_cmd *cmd);
void iet_cmd_complete(struct iet_scsi_req *req);
void iet_cmd_deliver(struct iet_cmd *cmd);
void iet_cmd_release_tables(struct iet_conn *conn);
void iet_cmd_sequence(struct iet_cmd *cmd);
void iet_io_run(struct iet_cmd *cmd);
int iet_cmd_buf_prepare(struct iet_cmd *cmd);
void iet_cmd_execute(struct iet_cmd *cmd);
void iet_cmd_dispatch(struct iet_cmd *cmd);
void iet_cmd_try_dispatch(struct iet_cmd *cmd);
int iet_scsi_cmd_start(struct iet_conn *conn);
int iet_scsi_cmd_end(struct iet_conn *conn);
int iet_data_out_start(struct iet_conn *conn);
int iet_data_out_end(struct iet_conn *conn);
void iet_tmf_execute(struct iet_cmd *cmd);
void iet_scsi_abort_tasks(struct iet_scsi_req *req,
			  bool (*match)(struct iet_session *session, void *arg),
			  void *arg);
bool iet_scsi_abort_wait(struct iet_scsi_req *req);
void iet_tmf_release(struct iet_cmd *victim);
void iet_tmf_supported(struct iet_target *target, u8 *d);
void iet_logout_execute(struct iet_cmd *cmd);
void iet_text_execute(struct iet_cmd *cmd);
void iet_text_release(struct iet_conn *conn);
void iet_conn_check_logout(struct iet_conn *conn);
int iet_logout_request(struct iet_target *target, u16 tpgt,
		       struct iet_session *session, int cid, u16 wait);
u32 iet_next_ttt(struct iet_conn *conn);
void iet_reject(struct iet_conn *conn, const struct iscsi_hdr *hdr, u8 reason);

/* ---- digests, netlink, procfs ----------------------------------------- */

u32 iet_crc32c(u32 crc, const void *data, u32 len);
u32 iet_crc32c_buf(u32 crc, const struct iet_buf *buf, u32 off, u32 len);

int iet_netlink_init(void);
void iet_netlink_exit(void);
void iet_event_conn_closed(u32 tid, u64 sid, u16 cid);
void iet_event_session_closed(u32 tid, u64 sid);

int iet_procfs_init(void);
void iet_procfs_exit(void);

int iet_cmd_cache_init(void);
void iet_cmd_cache_exit(void);
void iet_cmd_wait_all(void);

/*
 * The LUN field of a PDU as one of our LUN numbers. The whole 64-bit field
 * counts: a multi-level address is never taken for the LUN of its first
 * level.
 */
static inline u32 iet_lun_id(struct scsi_lun *sl)
{
	u64 lun = scsilun_to_int(sl);

	return lun <= IET_LUN_MAX ? lun : IET_LUN_NONE;
}

static inline u32 iet_dlength(const struct iscsi_hdr *hdr)
{
	return ntoh24(hdr->dlength);
}

static inline bool iet_stopping(struct iet_conn *conn)
{
	return test_bit(IET_CF_CLOSING, &conn->flags);
}

#endif /* IET_H */
