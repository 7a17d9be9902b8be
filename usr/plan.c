// SPDX-License-Identifier: GPL-2.0
/* Plans that bring the kernel and the model to a configuration. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confwrite.h"
#include "logout.h"
#include "params.h"
#include "plan.h"
#include "tpg_retire.h"

/* Steps are collected by kind, then concatenated in this order. */
struct builder {
	struct plan *p;
	struct plan_step *bucket[STEP_TARGET_DEL + 1];
	size_t nr[STEP_TARGET_DEL + 1];
	bool oom;
};

static struct plan_step *add_step(struct builder *b, enum step_op op,
				  uint32_t tid, const char *name)
{
	struct plan_step *ns;

	ns = realloc(b->bucket[op], (b->nr[op] + 1) * sizeof(*ns));
	if (!ns) {
		b->oom = true;
		return NULL;
	}
	b->bucket[op] = ns;
	ns = &ns[b->nr[op]++];
	memset(ns, 0, sizeof(*ns));
	ns->op = op;
	ns->tid = tid;
	snprintf(ns->name, sizeof(ns->name), "%s", name);
	return ns;
}

__attribute__((format(printf, 4, 5)))
static void add_text(struct builder *b, char ***list, size_t *nr,
		     const char *fmt, ...)
{
	char buf[768], **nl, *copy;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	copy = strdup(buf);
	nl = copy ? realloc(*list, (*nr + 1) * sizeof(*nl)) : NULL;
	if (!nl) {
		free(copy);
		b->oom = true;
		return;
	}
	*list = nl;
	nl[(*nr)++] = copy;
}

#define note(b, ...) add_text(b, &(b)->p->notes, &(b)->p->nr_notes, __VA_ARGS__)
#define refuse(b, ...) \
	add_text(b, &(b)->p->refused, &(b)->p->nr_refused, __VA_ARGS__)

/* Do the kernel's LUN and the wanted one describe the same thing? */
static bool same_lun(const struct lun_conf *k, const struct lun_conf *w)
{
	if (k->type != w->type || k->iomode != w->iomode ||
	    strcmp(k->path, w->path) || strcmp(k->scsi_id, w->scsi_id) ||
	    strcmp(k->scsi_sn, w->scsi_sn))
		return false;
	if (w->block_size && k->block_size && k->block_size != w->block_size)
		return false;
	/* Asked for or not, the same physical block is the same LUN. */
	if (lun_phys_block_size(w) && lun_phys_block_size(k) &&
	    lun_phys_block_size(k) != lun_phys_block_size(w))
		return false;
	if (k->rotation_rate != w->rotation_rate || k->thin_off != w->thin_off ||
	    lun_mode_select(k) != lun_mode_select(w))
		return false;
	return w->type != IET_LUN_NULLIO || !w->blocks ||
	       k->blocks == w->blocks;
}

static const struct klun *klun_find(const struct ktarget *kt, uint32_t lun)
{
	size_t i;

	for (i = 0; i < kt->nr_luns; i++)
		if (kt->luns[i].conf.lun == lun)
			return &kt->luns[i];
	return NULL;
}

static const struct ktarget *ktarget_by_name(const struct kstate *st,
					     const char *name)
{
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (!strcasecmp(st->targets[i].name, name))
			return &st->targets[i];
	return NULL;
}

static void describe_lun(const struct lun_conf *l, char *buf, size_t len)
{
	if (l->type == IET_LUN_NULLIO)
		snprintf(buf, len, "nullio");
	else
		snprintf(buf, len, "%.200s", l->path);
}

/* Names of the parameters that differ, "Wthreads=4, InitialR2T=No". */
static void changed_params(const struct ktarget *kt,
			   const struct target_conf *t, char *buf, size_t len)
{
	size_t n = 0;
	unsigned int i;
	char val[32];

	buf[0] = '\0';
	for (i = 1; i <= IET_KEY_MAX && n < len; i++) {
		if (kt->keys[i] == t->keys[i])
			continue;
		iet_key_format(i, t->keys[i], true, val, sizeof(val));
		n += snprintf(buf + n, len - n, "%s%s=%s", n ? ", " : "",
			      iet_key_name(i), val);
	}
	for (i = 1; i <= IET_TP_MAX && n < len; i++)
		if (kt->tparams[i] != t->tparams[i])
			n += snprintf(buf + n, len - n, "%s%s=%s", n ? ", " : "",
				      tparam_name(i),
				      tparam_format(i, t->tparams[i], val,
						    sizeof(val)));
}

static bool same_accounts(const struct auth *a, const struct auth *b)
{
	size_t i;

	if (a->nr_incoming != b->nr_incoming ||
	    a->has_outgoing != b->has_outgoing || a->chap_algs != b->chap_algs)
		return false;
	if (a->has_outgoing &&
	    (strcmp(a->outgoing.user, b->outgoing.user) ||
	     strcmp(a->outgoing.secret, b->outgoing.secret)))
		return false;
	for (i = 0; i < a->nr_incoming; i++) {
		const struct account *o = auth_incoming(b, a->incoming[i].user);
		unsigned int k;

		if (!o || strcmp(o->secret, a->incoming[i].secret) ||
		    o->nr_initiators != a->incoming[i].nr_initiators)
			return false;
		/* The same names, in any order (none twice: config.c). */
		for (k = 0; k < o->nr_initiators; k++)
			if (!account_admits(&a->incoming[i], o->initiators[k]))
				return false;
	}
	return true;
}

/* What changes in the model alone: logged, applied to new logins. */
static void model_changes(struct builder *b, const struct target_conf *old,
			  const struct target_conf *t)
{
	char what[160];
	size_t n = 0;

	what[0] = '\0';
	if (!same_accounts(&old->auth, &t->auth))
		n += snprintf(what + n, sizeof(what) - n, "CHAP accounts");
	if (strcmp(old->redirect, t->redirect))
		n += snprintf(what + n, sizeof(what) - n, "%sredirect",
			      n ? ", " : "");
	if (old->max_sessions != t->max_sessions)
		n += snprintf(what + n, sizeof(what) - n, "%sMaxSessions",
			      n ? ", " : "");
	if (strcmp(old->alias, t->alias))
		n += snprintf(what + n, sizeof(what) - n, "%sAlias",
			      n ? ", " : "");
	if (n)
		note(b, "tid %u %s: %s changed (new logins)", t->tid, t->name,
		     what);
}

/*
 * The kernel's LUNs of kt, in the model of t, replacing t's. A fileio or
 * blockio LUN's size is its backing's, not a setting: left out.
 */
static int take_kernel_luns(struct target_conf *t, const struct ktarget *kt)
{
	struct lun_conf l;
	size_t i;

	free(t->luns);
	t->luns = NULL;
	t->nr_luns = 0;
	for (i = 0; i < kt->nr_luns; i++) {
		l = kt->luns[i].conf;
		if (l.type != IET_LUN_NULLIO)
			l.blocks = 0;
		if (target_add_lun(t, &l))
			return -ENOMEM;
	}
	return 0;
}

/* The groups every target should have: the PortalGroup lines', or 1. */
static size_t wanted_groups(const struct config *cfg,
			    struct portal_group *want)
{
	size_t i;

	if (!cfg->nr_groups) {
		memset(want, 0, sizeof(*want));
		want[0].tag = 1;
		return 1;
	}
	for (i = 0; i < cfg->nr_groups; i++)
		want[i] = cfg->groups[i];
	return cfg->nr_groups;
}

static const struct ktpg *find_group(const struct ktpg *have, size_t n,
				     uint16_t tag)
{
	while (n--)
		if (have[n].tag == tag)
			return &have[n];
	return NULL;
}

static bool wants_tag(const struct portal_group *want, size_t n, uint16_t tag)
{
	while (n--)
		if (want[n].tag == tag)
			return true;
	return false;
}

/*
 * The state a group of the configuration starts in where it is new (or
 * changes kind): a node of an HA pair (a RemotePortalGroup line) claims
 * nothing until its cluster manager says so, and its LUNs' backings stay
 * closed meanwhile; a single node's groups are active/optimized.
 */
static uint32_t initial_state(const struct config *cfg,
			      const struct portal_group *g)
{
	if (g->remote || config_remote_groups(cfg))
		return IET_ALUA_STANDBY;
	return IET_ALUA_ACTIVE_OPTIMIZED;
}

/*
 * Whether a group the target has already must be set: of the other kind
 * than configured, or the one a target is made with (active/optimized)
 * where the configuration wants it to start otherwise.
 */
static bool group_differs(const struct config *cfg, const struct ktpg *h,
			  const struct portal_group *g, bool made)
{
	return h->remote != g->remote ||
	       (made && initial_state(cfg, g) != IET_ALUA_ACTIVE_OPTIMIZED);
}

/*
 * What TPG_SET says of a group's kind: only that it is another node's, or
 * that one of the other kind becomes this node's (a module older than
 * remote groups takes every other request).
 */
static int kind_of(bool remote, bool was_remote)
{
	return remote ? 1 : was_remote ? 0 : TPG_KIND_KEEP;
}

/*
 * Steps that give a target the configured portal groups. kt NULL: a target
 * this plan creates (with group 1), whose steps join its creation's bucket.
 */
static int sync_groups(struct builder *b, const struct ktarget *kt,
		       uint32_t tid, const char *name)
{
	const struct config *cfg = &b->p->result;
	struct portal_group want[IET_TPGS_MAX];
	struct ktpg have[IET_TPGS_MAX] = { { .tag = 1,
					     .state = IET_ALUA_ACTIVE_OPTIMIZED } };
	size_t nw = wanted_groups(cfg, want), nh = 1, i;
	const struct ktpg *h;
	struct plan_step *s;

	/* A module without groups reports none: it has group 1 and no other. */
	if (kt && kt->nr_tpgs) {
		nh = kt->nr_tpgs;
		memcpy(have, kt->tpgs, nh * sizeof(have[0]));
	}
	for (i = 0; i < nw; i++) {
		h = find_group(have, nh, want[i].tag);
		if (h && !group_differs(cfg, h, &want[i], !kt))
			continue;
		s = add_step(b, kt ? STEP_TPG_NEW : STEP_TARGET_NEW, tid, name);
		if (!s)
			return -ENOMEM;
		s->op = STEP_TPG_NEW;
		s->tpgt = want[i].tag;
		s->tpg_remote = kind_of(want[i].remote, h && h->remote);
		s->tpg_state = initial_state(cfg, &want[i]);
		if (h) {
			s->tpg_existed = true;
			s->old_tpg_remote = h->remote;
			s->old_tpg_state = h->state;
		}
	}
	for (i = 0; i < nh; i++) {
		if (wants_tag(want, nw, have[i].tag))
			continue;
		s = add_step(b, kt ? STEP_TPG_DEL : STEP_TARGET_NEW, tid, name);
		if (!s)
			return -ENOMEM;
		s->op = STEP_TPG_DEL;
		s->tpgt = have[i].tag;
		s->old_tpg_remote = have[i].remote;
		s->old_tpg_state = have[i].state;
		/* Its portals are no longer served: its sessions are let go. */
		if (kt && kt->nr_tpgs)
			s->sessions = have[i].sessions;
	}
	return 0;
}

int apply_target_groups(uint32_t tid, const struct config *cfg)
{
	struct portal_group want[IET_TPGS_MAX];
	size_t nw = wanted_groups(cfg, want), i;
	int ret = 0;

	for (i = 0; i < nw && !ret; i++)
		if (want[i].tag != 1 || want[i].remote ||
		    initial_state(cfg, &want[i]) != IET_ALUA_ACTIVE_OPTIMIZED)
			ret = kernel_tpg_set(tid, want[i].tag,
					     initial_state(cfg, &want[i]),
					     kind_of(want[i].remote, false));
	if (!ret && !wants_tag(want, nw, 1))
		ret = kernel_tpg_del(tid, 1);
	return ret;
}

/* A running target the new configuration defines: make it so. */
static int reconcile_target(struct builder *b, const struct ktarget *kt,
			    const struct target_conf *old,
			    const struct target_conf *want)
{
	struct target_conf *rt;
	struct plan_step *s;
	char desc[256];
	size_t i;

	rt = config_add_target(&b->p->result, want);
	if (!rt)
		return -ENOMEM;
	rt->tid = kt->tid;
	rt->origin = ORIGIN_FILE;
	if (memcmp(kt->tparams, want->tparams, sizeof(kt->tparams)) ||
	    memcmp(kt->keys, want->keys, sizeof(kt->keys))) {
		s = add_step(b, STEP_TARGET_SET, kt->tid, kt->name);
		if (!s)
			return -ENOMEM;
		memcpy(s->tparams, want->tparams, sizeof(s->tparams));
		memcpy(s->keys, want->keys, sizeof(s->keys));
		memcpy(s->old_tparams, kt->tparams, sizeof(s->old_tparams));
		memcpy(s->old_keys, kt->keys, sizeof(s->old_keys));
		changed_params(kt, want, s->what, sizeof(s->what));
	}
	for (i = 0; i < rt->nr_luns; i++) {
		struct lun_conf *w = &rt->luns[i];
		const struct klun *kl;

		lun_conf_derive_ids(w, rt->name);
		kl = klun_find(kt, w->lun);
		if (kl && same_lun(&kl->conf, w))
			continue;
		if (kl && kt->nr_sessions) {
			describe_lun(&kl->conf, desc, sizeof(desc));
			refuse(b, "tid %u %s LUN %u: changed in the configuration, kept as it runs (%s): the target has %zu session%s",
			       kt->tid, kt->name, w->lun, desc, kt->nr_sessions,
			       kt->nr_sessions == 1 ? "" : "s");
			*w = kl->conf;
			continue;
		}
		if (kl) {
			s = add_step(b, STEP_LUN_DEL, kt->tid, kt->name);
			if (!s)
				return -ENOMEM;
			s->lun = kl->conf;
		}
		s = add_step(b, STEP_LUN_NEW, kt->tid, kt->name);
		if (!s)
			return -ENOMEM;
		s->lun = *w;
	}
	for (i = 0; i < kt->nr_luns; i++) {
		const struct lun_conf *kl = &kt->luns[i].conf;

		if (target_lun(rt, kl->lun))
			continue;
		if (kt->nr_sessions) {
			describe_lun(kl, desc, sizeof(desc));
			refuse(b, "tid %u %s LUN %u (%s): not in the configuration, kept: the target has %zu session%s",
			       kt->tid, kt->name, kl->lun, desc,
			       kt->nr_sessions, kt->nr_sessions == 1 ? "" : "s");
			if (target_add_lun(rt, kl))
				return -ENOMEM;
			continue;
		}
		s = add_step(b, STEP_LUN_DEL, kt->tid, kt->name);
		if (!s)
			return -ENOMEM;
		s->lun = *kl;
	}
	if (old)
		model_changes(b, old, rt);
	return sync_groups(b, kt, kt->tid, kt->name);
}

/* A running target the new configuration does not define. */
static int other_target(struct builder *b, const struct ktarget *kt,
			const struct target_conf *old)
{
	struct target_conf *rt, fresh;
	struct plan_step *s;
	size_t i;

	if (old && old->origin == ORIGIN_FILE && !kt->nr_sessions) {
		s = add_step(b, STEP_TARGET_DEL, kt->tid, kt->name);
		if (!s)
			return -ENOMEM;
		memcpy(s->old_tparams, kt->tparams, sizeof(s->old_tparams));
		memcpy(s->old_keys, kt->keys, sizeof(s->old_keys));
		if (kt->nr_luns) {
			s->old_luns = calloc(kt->nr_luns, sizeof(*s->old_luns));
			if (!s->old_luns)
				return -ENOMEM;
			for (i = 0; i < kt->nr_luns; i++)
				s->old_luns[i] = kt->luns[i].conf;
			s->nr_old_luns = kt->nr_luns;
		}
		return 0;
	}
	if (old) {
		rt = config_add_target(&b->p->result, old);
	} else {
		target_conf_defaults(&fresh);
		snprintf(fresh.name, sizeof(fresh.name), "%s", kt->name);
		fresh.origin = ORIGIN_KERNEL;
		rt = config_add_target(&b->p->result, &fresh);
	}
	if (!rt)
		return -ENOMEM;
	/* The kernel is the truth for what it runs. */
	rt->tid = kt->tid;
	memcpy(rt->tparams, kt->tparams, sizeof(rt->tparams));
	memcpy(rt->keys, kt->keys, sizeof(rt->keys));
	if (take_kernel_luns(rt, kt))
		return -ENOMEM;
	if (old && old->origin == ORIGIN_FILE)
		refuse(b, "tid %u %s: removed from the configuration, kept: it has %zu session%s (close them, then reload)",
		       kt->tid, kt->name, kt->nr_sessions,
		       kt->nr_sessions == 1 ? "" : "s");
	else if (rt->origin == ORIGIN_KERNEL)
		/* Its CHAP accounts are unknown: serving it could open it. */
		note(b, "tid %u %s: in the kernel but in neither the configuration nor the state file: logins refused until it is configured again (add it to ietd.conf and reload, or give it an IncomingUser with ietadm)",
		     kt->tid, kt->name);
	return sync_groups(b, kt, kt->tid, kt->name);
}

static bool tid_taken(const struct kstate *st, const struct config *result,
		      uint32_t tid)
{
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid == tid)
			return true;
	return config_target_by_tid(result, tid) != NULL;
}

static uint32_t max_tid(const struct kstate *st, const struct config *result)
{
	uint32_t max = 0;
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid > max)
			max = st->targets[i].tid;
	for (i = 0; i < result->nr_targets; i++)
		if (result->targets[i].tid > max)
			max = result->targets[i].tid;
	return max;
}

static int new_target(struct builder *b, const struct kstate *st,
		      const struct target_conf *want)
{
	struct target_conf *rt;
	struct plan_step *s;
	uint32_t tid = want->tid;
	size_t i;

	/* Its place in the file, unless a running target holds that tid. */
	if (!tid || tid_taken(st, &b->p->result, tid))
		tid = max_tid(st, &b->p->result) + 1;
	rt = config_add_target(&b->p->result, want);
	if (!rt)
		return -ENOMEM;
	rt->tid = tid;
	rt->origin = ORIGIN_FILE;
	s = add_step(b, STEP_TARGET_NEW, tid, want->name);
	if (!s)
		return -ENOMEM;
	memcpy(s->tparams, want->tparams, sizeof(s->tparams));
	memcpy(s->keys, want->keys, sizeof(s->keys));
	if (sync_groups(b, NULL, tid, want->name))
		return -ENOMEM;
	for (i = 0; i < rt->nr_luns; i++) {
		lun_conf_derive_ids(&rt->luns[i], rt->name);
		/* Right after its target: the creations form one bucket. */
		s = add_step(b, STEP_TARGET_NEW, tid, want->name);
		if (!s)
			return -ENOMEM;
		s->op = STEP_LUN_NEW;
		s->lun = rt->luns[i];
	}
	return 0;
}

static int merge(struct builder *b)
{
	size_t total = 0, k;
	int op;

	for (op = 0; op <= STEP_TARGET_DEL; op++)
		total += b->nr[op];
	b->p->steps = calloc(total ? total : 1, sizeof(*b->p->steps));
	if (!b->p->steps)
		return -ENOMEM;
	for (op = 0; op <= STEP_TARGET_DEL; op++) {
		for (k = 0; k < b->nr[op]; k++)
			b->p->steps[b->p->nr++] = b->bucket[op][k];
		free(b->bucket[op]);
		b->bucket[op] = NULL;
		b->nr[op] = 0;
	}
	return 0;
}

int plan_make(const struct kstate *st, const struct config *cur,
	      const struct config *next, struct plan *p, char *err,
	      size_t errlen)
{
	struct builder b = { .p = p };
	struct config *res = &p->result;
	int ret = 0, op;
	size_t i, k;

	memset(p, 0, sizeof(*p));
	res->allow_short_secrets = next->allow_short_secrets;
	memcpy(res->isns_server, next->isns_server, sizeof(res->isns_server));
	res->isns_access_control = next->isns_access_control;
	memcpy(res->metrics_file, next->metrics_file, sizeof(res->metrics_file));
	res->metrics_interval = next->metrics_interval;
	memcpy(res->groups, next->groups, sizeof(res->groups));
	res->nr_groups = next->nr_groups;
	if (auth_copy(&res->auth, &next->auth))
		goto oom;
	if (cur && !same_accounts(&cur->auth, &next->auth))
		note(&b, "discovery: CHAP accounts changed (new logins)");

	for (i = 0; i < st->nr_targets && !ret; i++) {
		const struct ktarget *kt = &st->targets[i];
		const struct target_conf *want, *old;

		want = config_target_by_name(next, kt->name);
		old = cur ? config_target_by_name(cur, kt->name) : NULL;
		if (want)
			ret = reconcile_target(&b, kt, old, want);
		else
			ret = other_target(&b, kt, old);
	}
	for (i = 0; i < next->nr_targets && !ret; i++)
		if (!ktarget_by_name(st, next->targets[i].name))
			ret = new_target(&b, st, &next->targets[i]);
	if (ret || b.oom || merge(&b))
		goto oom;
	config_sort_targets(res);
	return 0;
oom:
	for (op = 0; op <= STEP_TARGET_DEL; op++) {
		for (k = 0; k < b.nr[op]; k++)
			free(b.bucket[op][k].old_luns);
		free(b.bucket[op]);
	}
	plan_free(p);
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int apply_target_params(uint32_t tid, const uint32_t *tparams,
			const uint32_t *keys)
{
	int ret = kernel_target_set(tid, NULL, keys);

	return ret ? ret : kernel_target_set(tid, tparams, NULL);
}

static int do_step(const struct plan_step *s)
{
	uint32_t tid = s->tid;
	int ret;

	switch (s->op) {
	case STEP_TARGET_NEW:
		ret = kernel_target_new(&tid, s->name, s->tparams, s->keys);
		if (!ret && tid != s->tid) {
			kernel_target_del(tid);
			ret = -EEXIST;
		}
		return ret;
	case STEP_TARGET_SET:
		return apply_target_params(s->tid, s->tparams, s->keys);
	case STEP_TPG_NEW:
		return kernel_tpg_set(s->tid, s->tpgt, s->tpg_state,
				      s->tpg_remote);
	case STEP_TPG_DEL:
		/*
		 * Its portals are no longer served: multipath initiators are
		 * asked to move to another group at once, and the group goes
		 * when they have, without the event loop waiting.
		 */
		if (s->sessions)
			return tpg_retire(s->tid, s->tpgt, LOGOUT_WAIT_DEFAULT);
		return kernel_tpg_del(s->tid, s->tpgt);
	case STEP_LUN_NEW:
		return kernel_lun_new(s->tid, &s->lun);
	case STEP_LUN_DEL:
		return kernel_lun_del(s->tid, s->lun.lun);
	case STEP_TARGET_DEL:
		return kernel_target_del(s->tid);
	}
	return -EINVAL;
}

/* Best effort: the kernel accepted all of it a moment ago. */
static void undo_step(const struct plan_step *s)
{
	uint32_t tid = s->tid;
	size_t i;

	switch (s->op) {
	case STEP_TARGET_NEW:
		kernel_target_del(s->tid);
		break;
	case STEP_TARGET_SET:
		apply_target_params(s->tid, s->old_tparams, s->old_keys);
		break;
	case STEP_TPG_NEW:
		if (s->tpg_existed)
			kernel_tpg_set(s->tid, s->tpgt, s->old_tpg_state,
				       kind_of(s->old_tpg_remote,
					       s->tpg_remote == 1));
		else
			kernel_tpg_del(s->tid, s->tpgt);
		break;
	case STEP_TPG_DEL:
		if (!tpg_retire_cancel(s->tid, s->tpgt))
			kernel_tpg_set(s->tid, s->tpgt, s->old_tpg_state,
				       kind_of(s->old_tpg_remote, false));
		break;
	case STEP_LUN_NEW:
		kernel_lun_del(s->tid, s->lun.lun);
		break;
	case STEP_LUN_DEL:
		kernel_lun_new(s->tid, &s->lun);
		break;
	case STEP_TARGET_DEL:
		if (kernel_target_new(&tid, s->name, s->old_tparams,
				      s->old_keys))
			break;
		for (i = 0; i < s->nr_old_luns; i++)
			kernel_lun_new(s->tid, &s->old_luns[i]);
		break;
	}
}

static void step_text(const struct plan_step *s, char *buf, size_t len)
{
	char desc[256];

	switch (s->op) {
	case STEP_TARGET_NEW:
		snprintf(buf, len, "tid %u %s: create", s->tid, s->name);
		break;
	case STEP_TARGET_SET:
		snprintf(buf, len, "tid %u %s: set %s (new sessions)", s->tid,
			 s->name, s->what);
		break;
	case STEP_TPG_NEW:
		snprintf(buf, len, "tid %u %s: %s portal group %u%s%s", s->tid,
			 s->name, s->tpg_existed ? "set" : "add", s->tpgt,
			 s->tpg_remote == 1 ? ", another node's" : "",
			 s->tpg_state == IET_ALUA_STANDBY ? ", standby" : "");
		break;
	case STEP_TPG_DEL:
		snprintf(buf, len, "tid %u %s: remove portal group %u%s", s->tid,
			 s->name, s->tpgt, s->sessions ?
			 ", its sessions asked to log out" : "");
		break;
	case STEP_LUN_NEW:
		describe_lun(&s->lun, desc, sizeof(desc));
		snprintf(buf, len, "tid %u %s LUN %u: add (%s)", s->tid,
			 s->name, s->lun.lun, desc);
		break;
	case STEP_LUN_DEL:
		describe_lun(&s->lun, desc, sizeof(desc));
		snprintf(buf, len, "tid %u %s LUN %u: remove (%s)", s->tid,
			 s->name, s->lun.lun, desc);
		break;
	case STEP_TARGET_DEL:
		snprintf(buf, len, "tid %u %s: delete", s->tid, s->name);
		break;
	}
}

int plan_apply(struct plan *p, char *err, size_t errlen)
{
	char what[640];
	size_t i;
	int ret;

	for (i = 0; i < p->nr; i++) {
		ret = do_step(&p->steps[i]);
		if (ret) {
			const char *km = kernel_errmsg();

			step_text(&p->steps[i], what, sizeof(what));
			snprintf(err, errlen, "%s: %s%s%s; nothing changed",
				 what, strerror(-ret), *km ? ": " : "", km);
			while (i--) {
				undo_step(&p->steps[i]);
				p->steps[i].done = false;
			}
			return ret;
		}
		p->steps[i].done = true;
	}
	return 0;
}

static void line(struct textbuf *out, const char *prefix, const char *s)
{
	textbuf_append(out, prefix, strlen(prefix));
	textbuf_append(out, s, strlen(s));
	textbuf_append(out, "\n", 1);
}

void plan_format(const struct plan *p, struct textbuf *out)
{
	char buf[640];
	size_t i;

	for (i = 0; i < p->nr; i++) {
		step_text(&p->steps[i], buf, sizeof(buf));
		line(out, "", buf);
	}
	for (i = 0; i < p->nr_notes; i++)
		line(out, "", p->notes[i]);
	for (i = 0; i < p->nr_refused; i++)
		line(out, "refused: ", p->refused[i]);
	if (!p->nr && !p->nr_notes && !p->nr_refused)
		line(out, "", "nothing to change");
}

void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->steps[i].old_luns);
	free(p->steps);
	for (i = 0; i < p->nr_notes; i++)
		free(p->notes[i]);
	free(p->notes);
	for (i = 0; i < p->nr_refused; i++)
		free(p->refused[i]);
	free(p->refused);
	config_free(&p->result);
	memset(p, 0, sizeof(*p));
}
