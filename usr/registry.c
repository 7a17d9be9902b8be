// SPDX-License-Identifier: GPL-2.0
/* Sessions known to ietd, TSIH allocation and lookups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "registry.h"

void registry_init(struct registry *r)
{
	memset(r, 0, sizeof(*r));
	r->next_tsih = 1;
}

static void session_free(struct reg_session *s)
{
	free(s->pending_cids);
	free(s->cids);
	free(s);
}

void registry_free(struct registry *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		session_free(r->s[i]);
	free(r->s);
	registry_init(r);
}

static struct reg_session *add(struct registry *r, uint32_t tid, uint64_t sid,
			       const char *initiator)
{
	struct reg_session *s, **ns;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	ns = realloc(r->s, (r->nr + 1) * sizeof(*ns));
	if (!ns) {
		free(s);
		return NULL;
	}
	r->s = ns;
	s->tid = tid;
	s->sid = sid;
	snprintf(s->initiator, sizeof(s->initiator), "%s", initiator);
	r->s[r->nr++] = s;
	return s;
}

/* The CID reservations of logins under way go over to the new entry. */
static void keep_reservations(struct registry *r, struct reg_session *old)
{
	struct reg_session *s = registry_find(r, old->tid, old->sid);

	if (!s || s->pending || s->discovery)
		return;
	s->pending_cids = old->pending_cids;
	s->nr_pending_cids = old->nr_pending_cids;
	old->pending_cids = NULL;
	old->nr_pending_cids = 0;
}

int registry_learn(struct registry *r, const struct kstate *st)
{
	struct reg_session **gone = NULL;
	size_t t, i, c, nr_gone = 0;
	int ret = 0;

	if (r->nr) {
		gone = calloc(r->nr, sizeof(*gone));
		if (!gone)
			return -ENOMEM;
	}
	for (i = 0; i < r->nr;) {
		if (!r->s[i]->pending && !r->s[i]->discovery) {
			gone[nr_gone++] = r->s[i];
			r->s[i] = r->s[--r->nr];
		} else {
			i++;
		}
	}
	for (t = 0; t < st->nr_targets && !ret; t++) {
		const struct ktarget *kt = &st->targets[t];

		for (i = 0; i < kt->nr_sessions && !ret; i++) {
			const struct ksession *ks = &kt->sessions[i];
			struct reg_session *s;

			s = add(r, kt->tid, ks->sid, ks->initiator);
			if (!s) {
				ret = -ENOMEM;
				break;
			}
			memcpy(s->keys, ks->keys, sizeof(s->keys));
			s->tpgt = ks->tpgt ? ks->tpgt : 1;
			for (c = 0; c < ks->nr_conns && !ret; c++)
				if (registry_add_cid(s, ks->conns[c].cid))
					ret = -ENOMEM;
		}
	}
	for (i = 0; i < nr_gone; i++) {
		keep_reservations(r, gone[i]);
		session_free(gone[i]);
	}
	free(gone);
	return ret;
}

static bool tsih_used(const struct registry *r, uint16_t tsih)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		if (reg_tsih(r->s[i]) == tsih)
			return true;
	return false;
}

struct reg_session *registry_reserve(struct registry *r, uint32_t tid,
				     uint64_t isid, const char *initiator,
				     bool discovery)
{
	struct reg_session *s;
	unsigned int tries;

	/*
	 * Unique across all targets, which is stricter than RFC 7143 needs,
	 * and rotating, so a TSIH just freed is not handed out again at once.
	 */
	for (tries = 0; tries < 65535; tries++) {
		uint16_t tsih = r->next_tsih;

		r->next_tsih = tsih == 0xffff ? 1 : tsih + 1;
		if (tsih_used(r, tsih))
			continue;
		s = add(r, tid, isid << 16 | tsih, initiator);
		if (!s)
			return NULL;
		s->pending = true;
		s->discovery = discovery;
		s->tpgt = 1;		/* the login sets its own */
		return s;
	}
	return NULL;
}

void registry_commit(struct reg_session *s, const uint32_t *keys)
{
	memcpy(s->keys, keys, sizeof(s->keys));
	s->pending = false;
}

void registry_drop(struct registry *r, struct reg_session *s)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		if (r->s[i] == s) {
			r->s[i] = r->s[--r->nr];
			session_free(s);
			return;
		}
	}
}

struct reg_session *registry_find(const struct registry *r, uint32_t tid,
				  uint64_t sid)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		if (r->s[i]->tid == tid && r->s[i]->sid == sid)
			return r->s[i];
	return NULL;
}

struct reg_session *registry_find_tsih(const struct registry *r, uint32_t tid,
				       uint16_t tsih)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		if (r->s[i]->tid == tid && reg_tsih(r->s[i]) == tsih &&
		    !r->s[i]->pending && !r->s[i]->discovery)
			return r->s[i];
	return NULL;
}

struct reg_session *registry_find_isid(const struct registry *r, uint32_t tid,
				       uint16_t tpgt, const char *initiator,
				       uint64_t isid)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		struct reg_session *s = r->s[i];

		if (s->tid == tid && s->tpgt == tpgt && !s->pending &&
		    !s->discovery &&
		    reg_isid(s) == isid && !strcasecmp(s->initiator, initiator))
			return s;
	}
	return NULL;
}

size_t registry_count(const struct registry *r, uint32_t tid)
{
	size_t i, n = 0;

	for (i = 0; i < r->nr; i++)
		if (r->s[i]->tid == tid && !r->s[i]->discovery)
			n++;
	return n;
}

bool registry_has_cid(const struct reg_session *s, uint16_t cid)
{
	size_t i;

	for (i = 0; i < s->nr_cids; i++)
		if (s->cids[i] == cid)
			return true;
	return false;
}

int registry_add_cid(struct reg_session *s, uint16_t cid)
{
	uint16_t *nc;

	if (registry_has_cid(s, cid))
		return 0;
	nc = realloc(s->cids, (s->nr_cids + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	s->cids = nc;
	s->cids[s->nr_cids++] = cid;
	return 0;
}

int registry_reserve_cid(struct reg_session *s, uint16_t cid)
{
	uint16_t *nc;
	size_t i;

	for (i = 0; i < s->nr_pending_cids; i++)
		if (s->pending_cids[i] == cid)
			return -EBUSY;
	nc = realloc(s->pending_cids, (s->nr_pending_cids + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	s->pending_cids = nc;
	s->pending_cids[s->nr_pending_cids++] = cid;
	return 0;
}

void registry_release_cid(struct registry *r, uint32_t tid, uint64_t sid,
			  uint16_t cid)
{
	struct reg_session *s = registry_find(r, tid, sid);
	size_t i;

	/* The session may have ended meanwhile: then there is nothing. */
	for (i = 0; s && i < s->nr_pending_cids; i++) {
		if (s->pending_cids[i] == cid) {
			s->nr_pending_cids--;
			s->pending_cids[i] = s->pending_cids[s->nr_pending_cids];
			return;
		}
	}
}

size_t registry_conns(const struct reg_session *s)
{
	return s->nr_cids + s->nr_pending_cids;
}

void registry_del_cid(struct reg_session *s, uint16_t cid)
{
	size_t i;

	for (i = 0; i < s->nr_cids; i++) {
		if (s->cids[i] == cid) {
			s->cids[i] = s->cids[--s->nr_cids];
			return;
		}
	}
}

void registry_event(struct registry *r, const struct kevent *ev)
{
	struct reg_session *s = registry_find(r, ev->tid, ev->sid);

	if (!s || s->pending || s->discovery)
		return;
	switch (ev->type) {
	case KEVENT_CONN_CLOSED:
		registry_del_cid(s, ev->cid);
		break;
	case KEVENT_SESSION_CLOSED:
		registry_drop(r, s);
		break;
	}
}
