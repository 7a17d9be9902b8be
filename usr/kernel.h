/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The facade over the iscsi_trgt generic netlink family. kernel.c is the only
 * file of ietd that speaks netlink; tests link a fake with the same API.
 * Every call returns 0 or a negative errno; *err gets the kernel's extended
 * ack message when there is one.
 */
#ifndef IET_USR_KERNEL_H
#define IET_USR_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "model.h"

/* One connection as the kernel reports it. */
struct kconn {
	uint16_t cid;
	uint32_t state;			/* enum iet_conn_state */
	struct sockaddr_storage peer;
	struct sockaddr_storage local;
	uint32_t keys[IET_KEY_COUNT];	/* connection-scoped keys */
};

struct ksession {
	uint64_t sid;
	char initiator[IET_NAME_MAX + 1];
	uint16_t tpgt;			/* its portal group */
	uint32_t keys[IET_KEY_COUNT];
	struct kstats stats;
	struct kconn *conns;
	size_t nr_conns;
};

struct klun {
	struct lun_conf conf;
	struct kstats stats;
	/* enum iet_lun_backing; UNSPEC from a module that has none to close */
	uint32_t backing;
};

/* A portal group of a target: a target port and its ALUA state. */
struct ktpg {
	uint16_t tag;
	uint32_t state;			/* enum iet_alua_state */
	uint32_t sessions;
	bool remote;			/* another node's (RemotePortalGroup) */
};

struct ktarget {
	uint32_t tid;
	char name[IET_NAME_MAX + 1];
	uint32_t tparams[IET_TP_COUNT];
	uint32_t keys[IET_KEY_COUNT];
	struct klun *luns;
	size_t nr_luns;
	struct ksession *sessions;
	size_t nr_sessions;
	/* A module without portal groups reports none: it has group 1. */
	struct ktpg tpgs[IET_TPGS_MAX];
	size_t nr_tpgs;
	uint32_t luns_closing;		/* LUN backings still closing */
};

/* A registration of a LUN's persistent reservations. */
struct kpr_reg {
	uint64_t key;
	char initiator[IET_NAME_MAX + 1];
	bool any_isid;			/* every initiator port of the name */
	uint64_t isid;
	uint32_t rtpi;			/* relative target port, 0: all */
	bool holder;			/* holds or shares the reservation */
};

/* A LUN's reservations (SPC-4 5.13). */
struct kpr {
	uint32_t generation;
	bool aptpl;			/* kept through power loss */
	uint32_t type;			/* 0: no persistent reservation */
	bool spc2;			/* an SPC-2 RESERVE holds the LUN */
	uint64_t spc2_sid;		/* its session */
	struct kpr_reg *regs;
	size_t nr_regs;
};

/*
 * Connections of a target: all, a portal group's (tpgt not 0), a session's
 * (sid not 0), or one of its connections (cid not negative).
 */
struct logout_scope {
	uint32_t tid;
	uint16_t tpgt;
	uint64_t sid;
	int cid;
};

/* Everything the kernel holds, read back in one go. */
struct kstate {
	struct ktarget *targets;
	size_t nr_targets;
};

/* Events from the kernel's multicast group. */
enum kevent_type {
	KEVENT_CONN_CLOSED,
	KEVENT_SESSION_CLOSED,
};

struct kevent {
	enum kevent_type type;
	uint32_t tid;
	uint64_t sid;
	uint16_t cid;
};

typedef void (*kevent_fn)(const struct kevent *ev, void *arg);

/* Open the family and subscribe to events; fails if the module is absent. */
int kernel_open(void);
void kernel_close(void);
/*
 * After kernel_close() in a child of fork(): a request socket of its own,
 * so that its answers are not the parent's; no events. 0 or a negative
 * errno.
 */
int kernel_reopen(void);
/* A descriptor that becomes readable when events are pending. */
int kernel_event_fd(void);
/* Read pending events without blocking and hand each to fn. */
int kernel_events(kevent_fn fn, void *arg);

/* *tid == 0 asks the kernel for the next free tid; the tid used comes back. */
int kernel_target_new(uint32_t *tid, const char *name, const uint32_t *tparams,
		      const uint32_t *keys);
int kernel_target_set(uint32_t tid, const uint32_t *tparams,
		      const uint32_t *keys);
int kernel_target_del(uint32_t tid);

int kernel_lun_new(uint32_t tid, const struct lun_conf *lun);
int kernel_lun_del(uint32_t tid, uint32_t lun);

/* tpgt: the portal group it logged in through (1 is left out) */
int kernel_session_new(uint32_t tid, uint64_t sid, const char *initiator,
		       uint32_t exp_cmdsn, uint16_t tpgt, const uint32_t *keys);
int kernel_session_del(uint32_t tid, uint64_t sid);

/* Hands a logged-in socket to the kernel; the caller still closes fd. */
int kernel_conn_new(uint32_t tid, uint64_t sid, uint16_t cid, int fd,
		    uint32_t statsn, const uint32_t *keys);
int kernel_conn_del(uint32_t tid, uint64_t sid, uint16_t cid);

int kernel_dump(struct kstate *st);
void kstate_free(struct kstate *st);

/* A LUN's reservations; kpr_free() them. */
int kernel_pr_get(uint32_t tid, uint32_t lun, struct kpr *pr);
void kpr_free(struct kpr *pr);
/* End the reservations of a LUN (all: its registrations too). */
int kernel_pr_clear(uint32_t tid, uint32_t lun, bool all);
/* Resize a live LUN to blocks, or (0) to its backing's size now. */
int kernel_lun_set(uint32_t tid, uint32_t lun, uint64_t blocks, bool force);

/*
 * Make a portal group of a target if it is new, and set its ALUA state
 * unless state is IET_ALUA_UNSPEC; delete one no session uses.
 */
/*
 * state IET_ALUA_UNSPEC: the one it has (a new group: active/optimized, a
 * remote one standby); remote TPG_KIND_KEEP: the kind it has (a new
 * group: this node's), else 0 (this node's) or 1 (another's).
 */
#define TPG_KIND_KEEP	(-1)
int kernel_tpg_set(uint32_t tid, uint16_t tag, uint32_t state, int remote);
int kernel_tpg_del(uint32_t tid, uint16_t tag);

/*
 * Ask the initiators of a scope's connections to log out within wait
 * seconds (1..3600); the kernel drops those that have not by then.
 * -ENOENT: no connection in the scope.
 */
int kernel_logout_req(const struct logout_scope *sc, uint32_t wait);

/* The kernel's last extended-ack message, or "" */
const char *kernel_errmsg(void);

#endif
