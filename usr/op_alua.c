// SPDX-License-Identifier: GPL-2.0
/*
 * A target's portal groups for ietadm: shown with --op show --tid (one
 * PortalGroup= line each), and their ALUA states set with --op update --tid
 * --params PortalGroup=TAG,State=STATE, so that a cluster manager moves the
 * optimized path. The kernel tells every initiator of the change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl_ops.h"
#include "log.h"
#include "loop.h"
#include "op_alua.h"

static const struct {
	const char *name;
	const char *abbrev;
} states[__IET_ALUA_MAX] = {
	[IET_ALUA_ACTIVE_OPTIMIZED] = { "active/optimized", "ao" },
	[IET_ALUA_ACTIVE_NON_OPTIMIZED] = { "active/non-optimized", "an" },
	[IET_ALUA_STANDBY] = { "standby", "s" },
	[IET_ALUA_UNAVAILABLE] = { "unavailable", "u" },
	[IET_ALUA_TRANSITIONING] = { "transitioning", "t" },
};

const char *alua_state_name(uint32_t state)
{
	if (state > IET_ALUA_UNSPEC && state < __IET_ALUA_MAX)
		return states[state].name;
	return "unknown";
}

uint32_t alua_state_parse(const char *name)
{
	uint32_t i;

	for (i = IET_ALUA_ACTIVE_OPTIMIZED; i < __IET_ALUA_MAX; i++)
		if (!strcasecmp(name, states[i].name) ||
		    !strcasecmp(name, states[i].abbrev))
			return i;
	return IET_ALUA_UNSPEC;
}

void tpg_text(struct textbuf *out, const struct ktarget *kt)
{
	size_t i;

	for (i = 0; i < kt->nr_tpgs; i++)
		out_line(out, "PortalGroup=%u,State=%s,Sessions=%u%s",
			 kt->tpgs[i].tag, alua_state_name(kt->tpgs[i].state),
			 kt->tpgs[i].sessions,
			 kt->tpgs[i].remote ? ",Remote=Yes" : "");
}

void tpg_json(struct jw *j, const struct ktarget *kt)
{
	size_t i;

	jw_arr(j, "portal_groups");
	for (i = 0; i < kt->nr_tpgs; i++) {
		jw_obj(j, NULL);
		jw_u64(j, "tag", kt->tpgs[i].tag);
		jw_str(j, "state", alua_state_name(kt->tpgs[i].state));
		jw_u64(j, "sessions", kt->tpgs[i].sessions);
		jw_bool(j, "remote", kt->tpgs[i].remote);
		jw_end(j, '}');
	}
	jw_end(j, ']');
}

struct tpg_req {
	long tag;			/* -1: not given */
	uint32_t state;
	const char *bad;		/* the key or value at fault */
};

static int tpg_param(void *arg, const char *key, const char *value)
{
	struct tpg_req *r = arg;
	char *end;

	r->bad = key;
	if (!strcasecmp(key, "PortalGroup")) {
		errno = 0;
		r->tag = strtol(value, &end, 10);
		if (errno || end == value || *end || r->tag < 1 ||
		    r->tag > 65535)
			return -EINVAL;
	} else if (!strcasecmp(key, "State")) {
		r->state = alua_state_parse(value);
		if (r->state == IET_ALUA_UNSPEC)
			return -EINVAL;
	} else {
		return -ENOENT;
	}
	return 0;
}

bool tpg_params(const char *params)
{
	static const char *const keys[] = { "PortalGroup", NULL };

	return params_have(params, keys);
}

static int has_tpg(uint32_t tid, uint16_t tag, char *err, size_t errlen)
{
	const struct ktarget *kt;
	struct kstate st;
	bool found = false;
	size_t i;
	int ret;

	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	kt = kstate_target(&st, tid);
	for (i = 0; kt && i < kt->nr_tpgs; i++)
		found |= kt->tpgs[i].tag == tag;
	kstate_free(&st);
	if (!found) {
		snprintf(err, errlen, "target %u has no portal group %u", tid,
			 tag);
		return -ENOENT;
	}
	return 0;
}

/* Past this, the backings still closing are said to be stuck. */
#define CLOSE_WAIT_MS	(100 * 1000)

/* LUN backings of tid still closing, or -errno. */
static int closing(uint32_t tid)
{
	const struct ktarget *kt;
	struct kstate st;
	char err[8];
	int ret;

	ret = dump_kernel(&st, err, sizeof(err));
	if (ret)
		return ret;
	kt = kstate_target(&st, tid);
	ret = kt ? (int)kt->luns_closing : 0;
	kstate_free(&st);
	return ret;
}

static int closing_poll(struct ctl_later *l, uint64_t now)
{
	int n = closing(l->tid);

	return n > 0 && now < l->end_ms ? n : 0;
}

static int closing_finish(struct runtime *rt, const struct ctl_later *l,
			  struct textbuf *out, char *err, size_t errlen)
{
	int n = closing(l->tid);

	(void)rt;
	(void)out;
	if (n <= 0)
		return 0;
	snprintf(err, errlen,
		 "target %u: the state is set, but %d LUN backing%s still closing after %u s: commands are stuck in the backend (it closes when they end)",
		 l->tid, n, n == 1 ? " is" : "s are", (unsigned int)(CLOSE_WAIT_MS / 1000));
	return -ETIMEDOUT;
}

/*
 * A change that left the target inactive closes its LUNs' backings once
 * their commands end: answered then, so that a cluster agent demotes the
 * device only once it is free. Waited for in the event loop, not here.
 */
static int wait_closed(struct runtime *rt, uint32_t tid, char *err,
		       size_t errlen)
{
	struct ctl_later *l;
	int n = closing(tid);

	if (n <= 0)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	l->tid = tid;
	l->cid = -1;
	l->poll = closing_poll;
	l->finish = closing_finish;
	l->end_ms = now_ms() + CLOSE_WAIT_MS;
	rt->later = l;
	return -EINPROGRESS;
}

int tpg_update(struct runtime *rt, const struct ctl_req *req, char *err,
	       size_t errlen)
{
	struct tpg_req r = { .tag = -1, .state = IET_ALUA_UNSPEC };
	struct target_conf *t;
	int ret;

	ret = params_each(req->params, tpg_param, &r, err, errlen);
	if (ret || r.tag < 0 || r.state == IET_ALUA_UNSPEC) {
		snprintf(err, errlen,
			 "%s%s%s--params PortalGroup=TAG,State=STATE sets a portal group's ALUA state: TAG 1..65535, STATE active/optimized (ao), active/non-optimized (an), standby (s), unavailable (u) or transitioning (t)",
			 ret ? "wrong " : "", ret ? r.bad : "", ret ? ": " : "");
		return -EINVAL;
	}
	t = req_target(rt, req, err, errlen);
	if (!t)
		return -ENOENT;
	/* Groups come with their portals (ietd.conf): none is made here. */
	ret = has_tpg(t->tid, (uint16_t)r.tag, err, errlen);
	if (ret)
		return ret;
	ret = kernel_tpg_set(t->tid, (uint16_t)r.tag, r.state, TPG_KIND_KEEP);
	if (ret)
		return kernel_failed(ret, err, errlen,
				     "target %u portal group %ld: setting its state",
				     t->tid, r.tag);
	log_info("ietadm: target tid %u %s portal group %ld: %s", t->tid,
		 t->name, r.tag, alua_state_name(r.state));
	return wait_closed(rt, t->tid, err, errlen);
}
