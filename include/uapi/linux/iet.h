/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The only interface between iscsi_trgt.ko and ietd: generic netlink family
 * IET_GENL_NAME, version IET_GENL_VERSION. Every operation needs
 * CAP_NET_ADMIN. Every attribute is one scalar or string; lists are nests of
 * nests. Enums start at *_UNSPEC (never sent) and end with a __*_MAX sentinel.
 *
 * IET_CMD_TARGET_NEW   TID (0 or absent: next free), TARGET_NAME,
 *                      [TARGET_PARAMS], [SESSION_PARAMS]
 *                      reply: TID
 * IET_CMD_TARGET_SET   TID, [TARGET_PARAMS], [SESSION_PARAMS]
 *                      changes take effect for new sessions; Wthreads resizes
 *                      the target's I/O thread pool at once
 * IET_CMD_TARGET_DEL   TID                      -EBUSY while it has sessions
 * IET_CMD_TARGET_GET   TID (do) or nothing (dump, one message per target):
 *                      TID, TARGET_NAME, TARGET_PARAMS, SESSION_PARAMS,
 *                      LUNS_CLOSING
 *
 * IET_CMD_LUN_NEW      TID, LUN, LUN_TYPE, [LUN_PATH], [LUN_IOMODE],
 *                      [LUN_SCSI_ID], [LUN_SCSI_SN], [LUN_BLOCK_SIZE],
 *                      [LUN_BLOCKS]            (nullio: its size; fileio,
 *                                              blockio: the size reported
 *                                              while the backing is closed,
 *                                              needed to add one closed)
 *                      [LUN_PHYS_BLOCK_SIZE]   (default: LUN_BLOCK_SIZE)
 *                      [LUN_ROTATION_RATE]     (default: 0, not reported)
 *                      [LUN_THIN]              (default: 1)
 *                      [LUN_MODE_SELECT]       (default: 0 if wt, else 1)
 * IET_CMD_LUN_DEL      TID, LUN                 in-flight I/O still completes
 * IET_CMD_LUN_SET      TID, LUN, [LUN_BLOCKS], [LUN_RESIZE_FORCE]: resizes
 *                      a live LUN, its reservations and commands in flight
 *                      kept, every I_T nexus told (CAPACITY DATA HAS
 *                      CHANGED): to LUN_BLOCKS (a fileio regular file is
 *                      made that long; a block device keeps its own size,
 *                      -EOPNOTSUPP; nullio, or a closed backing: the size
 *                      reported), or, absent, to what the open backing has
 *                      now. Shrinking past data written (a file's, or any
 *                      the backing itself lost) is -ENOTEMPTY unless
 *                      LUN_RESIZE_FORCE is 1.
 * IET_CMD_LUN_GET      dump, TID required: one message per LUN:
 *                      TID, LUN, LUN_TYPE, LUN_PATH (not nullio),
 *                      LUN_IOMODE, LUN_SCSI_ID, LUN_SCSI_SN,
 *                      LUN_BLOCK_SIZE, LUN_BLOCKS, STATS,
 *                      LUN_PHYS_BLOCK_SIZE, LUN_ROTATION_RATE, LUN_THIN,
 *                      LUN_MODE_SELECT, LUN_BACKING
 *                      (the four before it as asked for, or their
 *                      defaults; a kernel older than them leaves them out)
 *
 * A fileio or blockio LUN's backing is open while the target can be reached
 * through one of its own portal groups (not TPG_REMOTE) in an active ALUA
 * state (optimized or non-optimized), and closed while it cannot: the
 * standby node of an HA pair, whose replicated device cannot be opened,
 * serves the LUN's identity, size and ALUA states without it. A change of
 * state that makes the target active opens every closed backing first (and
 * fails, changing nothing, if one cannot be opened); one that leaves it
 * inactive sets the state and starts closing each backing, which closes
 * once the commands using it have ended, flushing what it caches: the
 * target's LUNS_CLOSING counts those still closing (a LUN deleted while
 * open closes the same way).
 *
 * IET_CMD_SESSION_NEW  TID, SID, INITIATOR_NAME, EXP_CMDSN, SESSION_PARAMS,
 *                      [TPGT] (the portal group it logged in through, one
 *                      the target has; default 1)
 * IET_CMD_SESSION_DEL  TID, SID                 closes all its connections
 * IET_CMD_SESSION_GET  dump, TID required: one message per session:
 *                      TID, SID, INITIATOR_NAME, SESSION_PARAMS, STATS,
 *                      TPGT,
 *                      CONNS { CONN { CID, CONN_STATE, PEER_ADDR,
 *                      PEER_PORT, LOCAL_ADDR, LOCAL_PORT, SESSION_PARAMS
 *                      (the connection-scoped keys) } ... }
 *
 * IET_CMD_CONN_NEW     TID, SID, CID, CONN_FD, STATSN, SESSION_PARAMS
 *                      (HEADER_DIGEST, DATA_DIGEST, MAX_RECV_DSL,
 *                      MAX_XMIT_DSL of this connection). CONN_FD is a
 *                      connected TCP socket of the calling process; the
 *                      kernel takes its own reference, the caller closes
 *                      its descriptor afterwards.
 * IET_CMD_CONN_DEL     TID, SID, CID
 *
 * IET_CMD_PR_GET       TID, LUN (do): the LUN's reservations (SPC-4 5.13):
 *                      TID, LUN, PR_GENERATION, PR_APTPL, [PR_TYPE] (a
 *                      persistent reservation is held), [SID] (an SPC-2
 *                      RESERVE's session), PR_REGS { PR_REG { PR_KEY,
 *                      INITIATOR_NAME, [PR_ISID] (absent: every port of
 *                      the name), PR_RTPI (0: every target port),
 *                      [PR_HOLDER] } ... }
 * IET_CMD_PR_CLEAR     TID, LUN, PR_CLEAR: what an administrator ends
 *                      (enum iet_pr_clear); the registrants hear of it as
 *                      of a PREEMPT or a RELEASE; kept through power loss
 *                      as the LUN's state is (APTPL)
 *
 * IET_CMD_TPG_SET      TID, TPGT, [ALUA_STATE], [TPG_REMOTE]: a portal
 *                      group of the target (made if new, at most
 *                      IET_TPGS_MAX), which is also a target port (its
 *                      relative target port identifier is the TPGT) and a
 *                      target port group of one port (SPC-4 5.16, its ID
 *                      the TPGT too), in an ALUA state (default: active/
 *                      optimized; a remote one's standby). A change of
 *                      state is an implicit transition: every I_T nexus
 *                      hears of it (ASYMMETRIC ACCESS STATE CHANGED). A
 *                      new target has portal group 1, active/optimized.
 *                      TPG_REMOTE changes a group's kind (-EBUSY while a
 *                      session uses it); absent, a group keeps its kind and
 *                      a new one is the target's own.
 * IET_CMD_TPG_DEL      TID, TPGT                -EBUSY while a session uses it
 * IET_CMD_TPG_GET      dump, TID required: one message per portal group:
 *                      TID, TPGT, ALUA_STATE, TPG_SESSIONS, TPG_REMOTE
 *
 * IET_CMD_LOGOUT_REQ   TID, [TPGT | SID [CID]], LOGOUT_WAIT: asks the
 *                      initiator of each connection of the target (of the
 *                      portal group, of the session, or that connection) to
 *                      log out within LOGOUT_WAIT seconds, by an Async
 *                      Message (RFC 7143 11.9.1, AsyncEvent 1); a connection
 *                      still there past it is dropped. Returns at once;
 *                      -ENOENT when nothing matched. Asked twice, the first
 *                      deadline stands.
 *
 * Events, multicast group IET_GENL_MCGRP_EVENTS:
 * IET_CMD_CONN_CLOSED     TID, SID, CID
 * IET_CMD_SESSION_CLOSED  TID, SID
 *
 * SID is the 64-bit session identifier of IET: ISID << 16 | TSIH.
 */
#ifndef _UAPI_LINUX_IET_H
#define _UAPI_LINUX_IET_H

#define IET_GENL_NAME		"iscsi_trgt"
#define IET_GENL_VERSION	1
#define IET_GENL_MCGRP_EVENTS	"events"

#define IET_NAME_MAX		223	/* iSCSI names, RFC 7143 6.1 */
#define IET_SCSI_ID_MAX		16
#define IET_SCSI_SN_MAX		16
#define IET_LUN_MAX		16383	/* flat addressing, SAM-5 */
#define IET_PATH_MAX		4095
#define IET_PHYS_BLOCK_SIZE_MAX	32768	/* the largest LUN_PHYS_BLOCK_SIZE */
#define IET_TPGS_MAX		16	/* portal groups of a target */

enum iet_genl_cmd {
	IET_CMD_UNSPEC,
	IET_CMD_TARGET_NEW,
	IET_CMD_TARGET_SET,
	IET_CMD_TARGET_DEL,
	IET_CMD_TARGET_GET,
	IET_CMD_LUN_NEW,
	IET_CMD_LUN_DEL,
	IET_CMD_LUN_GET,
	IET_CMD_SESSION_NEW,
	IET_CMD_SESSION_DEL,
	IET_CMD_SESSION_GET,
	IET_CMD_CONN_NEW,
	IET_CMD_CONN_DEL,
	IET_CMD_CONN_CLOSED,
	IET_CMD_SESSION_CLOSED,
	IET_CMD_PR_GET,
	IET_CMD_PR_CLEAR,
	IET_CMD_TPG_SET,
	IET_CMD_TPG_DEL,
	IET_CMD_TPG_GET,
	IET_CMD_LOGOUT_REQ,
	IET_CMD_LUN_SET,
	__IET_CMD_MAX
};

#define IET_CMD_MAX (__IET_CMD_MAX - 1)

enum iet_attr {
	IET_A_UNSPEC,
	IET_A_PAD,
	IET_A_TID,		/* u32, 1.. */
	IET_A_TARGET_NAME,	/* string */
	IET_A_TARGET_PARAMS,	/* nest of enum iet_tparam */
	IET_A_SESSION_PARAMS,	/* nest of enum iet_key */
	IET_A_LUN,		/* u32, 0..IET_LUN_MAX */
	IET_A_LUN_TYPE,		/* u32, enum iet_lun_type */
	IET_A_LUN_PATH,		/* string */
	IET_A_LUN_IOMODE,	/* u32, enum iet_iomode */
	IET_A_LUN_SCSI_ID,	/* string */
	IET_A_LUN_SCSI_SN,	/* string */
	IET_A_LUN_BLOCK_SIZE,	/* u32: 512, 1024, 2048, 4096 */
	IET_A_LUN_BLOCKS,	/* u64 */
	IET_A_SID,		/* u64 */
	IET_A_INITIATOR_NAME,	/* string */
	IET_A_EXP_CMDSN,	/* u32 */
	IET_A_CID,		/* u32, 0..65535 */
	IET_A_CONN_FD,		/* s32 */
	IET_A_STATSN,		/* u32 */
	IET_A_CONN_STATE,	/* u32, enum iet_conn_state */
	IET_A_PEER_ADDR,	/* binary: 4 or 16 bytes */
	IET_A_PEER_PORT,	/* u16 */
	IET_A_LOCAL_ADDR,	/* binary: 4 or 16 bytes */
	IET_A_LOCAL_PORT,	/* u16 */
	IET_A_CONNS,		/* nest of IET_A_CONN */
	IET_A_CONN,		/* nest of enum iet_attr */
	IET_A_STATS,		/* nest of enum iet_stat */
	/*
	 * u32, a power of 2 from LUN_BLOCK_SIZE to IET_PHYS_BLOCK_SIZE_MAX:
	 * the physical block reported (512e: 4096 over 512-byte blocks). I/O
	 * stays in logical blocks.
	 */
	IET_A_LUN_PHYS_BLOCK_SIZE,
	/*
	 * u32, SBC-3's MEDIUM ROTATION RATE (VPD 0xb1): 0 not reported,
	 * 1 non-rotating medium (SSD), 0x401..0xfffe revolutions per minute.
	 */
	IET_A_LUN_ROTATION_RATE,
	/*
	 * u32, 0 or 1: thin provisioning (UNMAP, WRITE SAME with UNMAP, GET
	 * LBA STATUS, LBPME) where the storage can; 0 never.
	 */
	IET_A_LUN_THIN,
	IET_A_PR_GENERATION,	/* u32 */
	IET_A_PR_APTPL,		/* u32, 0 or 1: kept through power loss */
	IET_A_PR_TYPE,		/* u32, SPC-4 Table 177's type held */
	IET_A_PR_REGS,		/* nest of IET_A_PR_REG */
	IET_A_PR_REG,		/* nest of enum iet_attr */
	IET_A_PR_KEY,		/* u64, the reservation key */
	IET_A_PR_ISID,		/* u64, 48 bits: the initiator port */
	IET_A_PR_RTPI,		/* u32, relative target port, 0: all */
	IET_A_PR_HOLDER,	/* flag: holds or shares the reservation */
	IET_A_PR_CLEAR,		/* u32, enum iet_pr_clear */
	IET_A_TPGT,		/* u32, 1..65535: a target portal group tag */
	IET_A_ALUA_STATE,	/* u32, enum iet_alua_state */
	IET_A_TPG_SESSIONS,	/* u32: sessions through the portal group */
	IET_A_LOGOUT_WAIT,	/* u32, 1..3600 seconds */
	/*
	 * u32, 0 or 1: whether MODE SELECT may change the LUN's mode
	 * parameters (WCE, SWP, D_SENSE, TAS) for every initiator; when 0
	 * MODE SENSE reports none of them changeable. Default: 0 for
	 * IET_IOMODE_WT (no initiator turns a write-through LUN's write cache
	 * on or write-protects it for the others), 1 otherwise.
	 */
	IET_A_LUN_MODE_SELECT,
	/*
	 * u32, 0 or 1: a target port group of the same logical units on
	 * another node (an HA pair's peer): REPORT TARGET PORT GROUPS lists it
	 * with its state, no session logs in through it, and its state opens
	 * or closes no backing here.
	 */
	IET_A_TPG_REMOTE,
	IET_A_LUN_BACKING,	/* u32, enum iet_lun_backing: see LUN_NEW */
	IET_A_LUNS_CLOSING,	/* u32: a target's LUN backings still closing */
	IET_A_LUN_RESIZE_FORCE,	/* u32, 0 or 1: see LUN_SET */
	__IET_A_MAX
};

#define IET_A_MAX (__IET_A_MAX - 1)

/* Target-wide settings (IET's target parameters). */
enum iet_tparam {
	IET_TP_UNSPEC,
	IET_TP_WTHREADS,	/* u32, 1..128: I/O threads of the target */
	IET_TP_QUEUED_CMDS,	/* u32, 1..4096: CmdSN window per session */
	IET_TP_NOP_INTERVAL,	/* u32, seconds, 0 = no keepalive */
	IET_TP_NOP_TIMEOUT,	/* u32, seconds */
	IET_TP_TARGET_RESET,	/* u32, 0|1: initiators may reset the target */
	__IET_TP_MAX
};

#define IET_TP_MAX (__IET_TP_MAX - 1)

/*
 * Session and connection keys (RFC 7143 section 13), all u32. In a target's
 * SESSION_PARAMS they are the target's offers and limits; in a session's or
 * connection's they are the negotiated values. Booleans are 0/1; digests
 * are enum iet_digest values, a target's offer being a mask of
 * 1 << IET_DIGEST_*.
 */
enum iet_key {
	IET_KEY_UNSPEC,
	IET_KEY_INITIAL_R2T,
	IET_KEY_IMMEDIATE_DATA,
	IET_KEY_MAX_CONNECTIONS,
	IET_KEY_MAX_RECV_DSL,		/* what the target receives */
	IET_KEY_MAX_XMIT_DSL,		/* what the target sends */
	IET_KEY_MAX_BURST,
	IET_KEY_FIRST_BURST,
	IET_KEY_DEFAULT_TIME2WAIT,
	IET_KEY_DEFAULT_TIME2RETAIN,
	IET_KEY_MAX_OUTSTANDING_R2T,
	IET_KEY_DATA_PDU_INORDER,
	IET_KEY_DATA_SEQUENCE_INORDER,
	IET_KEY_ERROR_RECOVERY_LEVEL,
	IET_KEY_HEADER_DIGEST,
	IET_KEY_DATA_DIGEST,
	__IET_KEY_MAX
};

#define IET_KEY_MAX (__IET_KEY_MAX - 1)

enum iet_digest {
	IET_DIGEST_NONE,
	IET_DIGEST_CRC32C,
};

enum iet_lun_type {
	IET_LUN_UNSPEC,
	IET_LUN_FILEIO,		/* VFS through the page cache, I/O threads */
	IET_LUN_NULLIO,		/* no storage */
	IET_LUN_BLOCKIO,	/* bios to a block device, no page cache */
	__IET_LUN_TYPE_MAX
};

enum iet_iomode {
	IET_IOMODE_UNSPEC,
	IET_IOMODE_WT,		/* write-through: GOOD means stable */
	IET_IOMODE_WB,		/* write-back: WCE=1, flush on request */
	IET_IOMODE_RO,		/* write-protected */
	__IET_IOMODE_MAX
};

/* What IET_CMD_PR_CLEAR ends. */
enum iet_pr_clear {
	IET_PR_CLEAR_UNSPEC,
	IET_PR_RELEASE,		/* the reservations, persistent and SPC-2 */
	IET_PR_CLEAR_ALL,	/* those and every registration */
	__IET_PR_CLEAR_MAX
};

/* Whether a fileio or blockio LUN's backing is open (see LUN_NEW). */
enum iet_lun_backing {
	IET_LUN_BACKING_UNSPEC,
	IET_LUN_BACKING_OPEN,
	IET_LUN_BACKING_CLOSING,	/* until its commands have ended */
	IET_LUN_BACKING_CLOSED,
	__IET_LUN_BACKING_MAX
};

/* The asymmetric access state of a target port group (SPC-4 5.16.2.4). */
enum iet_alua_state {
	IET_ALUA_UNSPEC,
	IET_ALUA_ACTIVE_OPTIMIZED,
	IET_ALUA_ACTIVE_NON_OPTIMIZED,
	IET_ALUA_STANDBY,
	IET_ALUA_UNAVAILABLE,
	IET_ALUA_TRANSITIONING,
	__IET_ALUA_MAX
};

enum iet_conn_state {
	IET_CONN_UNSPEC,
	IET_CONN_ACTIVE,
	IET_CONN_CLOSING,
};

/*
 * Counters of a LUN (all its sessions) or of a session (all its LUNs), u64
 * unless said otherwise. A command counts when its SCSI part ends; its
 * latency from the command PDU's arrival to its status sent (IET_LAT_TOTAL)
 * when the status is out, and from its first submission to the backend to
 * the backend's completion (IET_LAT_BACKEND) when it ends.
 */
enum iet_stat {
	IET_STAT_UNSPEC,
	IET_STAT_PAD,
	IET_STAT_CMDS,		/* SCSI commands completed */
	IET_STAT_READ_BYTES,
	IET_STAT_WRITE_BYTES,
	IET_STAT_ERRORS,	/* commands ended with a status other than GOOD */
	IET_STAT_OP_CMDS,	/* nest: enum iet_stat_op + 1 -> u64 commands */
	IET_STAT_SENSE_KEYS,	/* nest: sense key + 1 -> u64 CHECK CONDITIONs */
	IET_STAT_CONFLICTS,	/* RESERVATION CONFLICT */
	IET_STAT_BUSY,		/* BUSY and TASK SET FULL */
	IET_STAT_HIST,		/* nest of enum iet_hist; one per histogram */
	__IET_STAT_MAX
};

#define IET_STAT_MAX (__IET_STAT_MAX - 1)

/* What a command asks of the backend: the kinds counted apart. */
enum iet_stat_op {
	IET_SOP_READ,
	IET_SOP_WRITE,
	IET_SOP_FLUSH,		/* SYNCHRONIZE CACHE */
	IET_SOP_OTHER,		/* everything else (INQUIRY, UNMAP, ...) */
	__IET_SOP_MAX
};

#define IET_SOP_NR	__IET_SOP_MAX
#define IET_SOP_HIST_NR	(IET_SOP_FLUSH + 1)	/* ops with histograms */

enum iet_lat {
	IET_LAT_TOTAL,		/* command PDU received to status sent */
	IET_LAT_BACKEND,	/* submitted to the backend to its completion */
	__IET_LAT_MAX
};

#define IET_LAT_NR	__IET_LAT_MAX

/*
 * Latency histograms in log2 buckets: bucket b below IET_HIST_NR_BUCKETS - 1
 * counts latencies under 2^(IET_HIST_SHIFT + b) ns (2.048 us up to 4.29 s,
 * each bucket alone, not cumulative); the last one counts the rest.
 */
#define IET_HIST_SHIFT		11
#define IET_HIST_NR_BUCKETS	23

enum iet_hist {
	IET_HIST_UNSPEC,
	IET_HIST_PAD,
	IET_HIST_OP,		/* u32, enum iet_stat_op (READ, WRITE, FLUSH) */
	IET_HIST_KIND,		/* u32, enum iet_lat */
	IET_HIST_SUM_NS,	/* u64, all the latencies counted, added */
	IET_HIST_COUNTS,	/* binary, u64[IET_HIST_NR_BUCKETS] */
	__IET_HIST_MAX
};

#define IET_HIST_MAX (__IET_HIST_MAX - 1)

#endif /* _UAPI_LINUX_IET_H */
