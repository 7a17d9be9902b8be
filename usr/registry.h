/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sessions ietd knows: those the kernel holds (read back at start,
 * kept current by its events), plus logins that have reserved a TSIH and
 * discovery sessions, which live in ietd only. TSIH allocation and the
 * lookups that session reinstatement and connection addition need.
 */
#ifndef IET_USR_REGISTRY_H
#define IET_USR_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "model.h"

struct reg_session {
	uint32_t tid;			/* 0 for discovery sessions */
	uint64_t sid;			/* ISID << 16 | TSIH */
	char initiator[IET_NAME_MAX + 1];
	uint16_t tpgt;			/* its portal group (target port) */
	uint32_t keys[IET_KEY_COUNT];	/* negotiated session keys */
	uint16_t *cids;
	size_t nr_cids;
	/* CIDs of logins that have finished but not been handed off yet. */
	uint16_t *pending_cids;
	size_t nr_pending_cids;
	bool pending;			/* reserved by a login in progress */
	bool discovery;
};

struct registry {
	struct reg_session **s;
	size_t nr;
	uint16_t next_tsih;
};

static inline uint16_t reg_tsih(const struct reg_session *s)
{
	return s->sid & 0xffff;
}

static inline uint64_t reg_isid(const struct reg_session *s)
{
	return s->sid >> 16;
}

void registry_init(struct registry *r);
void registry_free(struct registry *r);

/* Replace what the registry knows about kernel sessions with a dump. */
int registry_learn(struct registry *r, const struct kstate *st);

/*
 * Reserve a TSIH for a login: non-zero, unused by any session ietd knows
 * (so never one the kernel still has), and not recently used. The entry is
 * pending until registry_commit(); NULL when all are in use.
 */
struct reg_session *registry_reserve(struct registry *r, uint32_t tid,
				     uint64_t isid, const char *initiator,
				     bool discovery);
void registry_commit(struct reg_session *s, const uint32_t *keys);
void registry_drop(struct registry *r, struct reg_session *s);

struct reg_session *registry_find(const struct registry *r, uint32_t tid,
				  uint64_t sid);
struct reg_session *registry_find_tsih(const struct registry *r, uint32_t tid,
				       uint16_t tsih);
/*
 * A live (not pending) session of that initiator port (name and ISID)
 * through that target port (portal group) of the target: its I_T nexus.
 */
struct reg_session *registry_find_isid(const struct registry *r, uint32_t tid,
				       uint16_t tpgt, const char *initiator,
				       uint64_t isid);
/* Normal sessions of a target, pending ones included. */
size_t registry_count(const struct registry *r, uint32_t tid);

/*
 * A connection login reserves its CID in the session when it finishes,
 * so that MaxConnections counts it from then until the hand-off (which
 * releases it, then adds the CID) or the login's end. -EBUSY when another
 * login has that CID reserved.
 */
int registry_reserve_cid(struct reg_session *s, uint16_t cid);
void registry_release_cid(struct registry *r, uint32_t tid, uint64_t sid,
			  uint16_t cid);
/* Connections of a session, reserved ones included. */
size_t registry_conns(const struct reg_session *s);

int registry_add_cid(struct reg_session *s, uint16_t cid);
bool registry_has_cid(const struct reg_session *s, uint16_t cid);
void registry_del_cid(struct reg_session *s, uint16_t cid);

/* Apply a kernel event: a closed session is forgotten, its TSIH freed. */
void registry_event(struct registry *r, const struct kevent *ev);

#endif
