/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An in-memory iscsi_trgt behind usr/kernel.h, for unit tests and the
 * ietd-fake binary: records every call, keeps targets, LUNs, sessions and
 * connections, holds handed-off sockets, and queues events on demand.
 */
#ifndef IET_TESTS_KERNEL_FAKE_H
#define IET_TESTS_KERNEL_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

enum fake_op {
	F_OPEN,
	F_TARGET_NEW,
	F_TARGET_SET,
	F_TARGET_DEL,
	F_LUN_NEW,
	F_LUN_DEL,
	F_SESSION_NEW,
	F_SESSION_DEL,
	F_CONN_NEW,
	F_CONN_DEL,
	F_DUMP,
	F_PR_GET,
	F_PR_CLEAR,
	F_TPG_SET,
	F_TPG_DEL,
	F_LOGOUT_REQ,
	F_LUN_SET,
	F_NR_OPS,
};

struct fake_call {
	enum fake_op op;
	int ret;
	uint32_t tid;
	uint64_t sid;
	uint16_t cid;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	char name[IET_NAME_MAX + 1];	/* target or initiator */
	struct lun_conf lun;
	uint32_t keys[IET_KEY_COUNT];
	uint32_t tparams[IET_TP_COUNT];
	bool pr_all;			/* PR_CLEAR: registrations too */
	bool force;			/* LUN_SET (its blocks: lun.blocks) */
	uint16_t tpgt;			/* TPG_SET, TPG_DEL */
	uint32_t alua_state;		/* TPG_SET */
	int tpg_remote;			/* TPG_SET: TPG_KIND_KEEP, 0 or 1 */
	int logout_cid;			/* LOGOUT_REQ: -1 every connection */
	uint32_t logout_wait;		/* LOGOUT_REQ */
};

/* Forget everything (closing held sockets); open succeeds again. */
void fake_reset(void);

size_t fake_nr_calls(void);
const struct fake_call *fake_call(size_t i);
size_t fake_count(enum fake_op op);
/* The most recent call of op, or NULL. */
const struct fake_call *fake_last(enum fake_op op);

/* The next call of op fails with err (negative) and the message. */
void fake_fail(enum fake_op op, int err, const char *msg);

/* Put a session straight into the state, as if it outlived ietd. */
int fake_add_session(uint32_t tid, uint64_t sid, const char *initiator,
		     const uint32_t *keys, const uint16_t *cids, size_t nr);
/* The state itself, for inspection. */
const struct kstate *fake_state(void);
/* The fake kernel's target of that tid, NULL if it has none. */
const struct ktarget *fake_target(uint32_t tid);
/* Our duplicate of a handed-off socket, or -1. */
int fake_conn_fd(uint32_t tid, uint64_t sid, uint16_t cid);

/*
 * The reservations of (tid, lun) that kernel_pr_get() gives and
 * kernel_pr_clear() changes (one LUN at a time; others have none).
 */
void fake_set_pr(uint32_t tid, uint32_t lun, const struct kpr *pr);
const struct kpr *fake_pr(void);

/*
 * What the initiators do when asked to log out: obey at once (the
 * default), or ignore it, when the kernel drops them at the deadline: in
 * the fake, right after the next dump has shown them still there.
 */
void fake_logout_ignored(bool ignored);
/*
 * Or take their time: asked sessions stay until fake_logout_go() (the
 * initiators log out then), however often the state is dumped.
 */
void fake_logout_held(bool held);
void fake_logout_go(void);

/*
 * n LUN backings of target tid closing: one fewer at each dump, or
 * (stuck) none, as when commands hang in the backend.
 */
void fake_set_closing(uint32_t tid, uint32_t n, bool stuck);

/* Queue an event; kernel_event_fd() becomes readable. */
void fake_event(const struct kevent *ev);

#endif
