// SPDX-License-Identifier: GPL-2.0
/*
 * ietadm --op new, delete and update: targets, LUNs, CHAP accounts,
 * connections and the full teardown. Each checks everything first, then
 * makes the kernel call, then changes the model and the state file: a
 * refusal or a kernel failure leaves everything as it was.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "ctl_ops.h"
#include "log.h"
#include "logout.h"
#include "op_alua.h"
#include "op_pr.h"
#include "op_resize.h"
#include "plan.h"

/* ---------------------------------------------------------------- targets */

struct key_ctx {
	struct target_conf *t;
	const char *name;		/* Name= of --op new */
	char *err;
	size_t errlen;
};

static int set_target_key(void *arg, const char *key, const char *value)
{
	struct key_ctx *k = arg;
	char what[256];
	int ret;

	if (!strcasecmp(key, "Name")) {
		if (!k->name) {
			snprintf(k->err, k->errlen,
				 "Name: a target's name cannot change (delete it and create it again)");
			return -EINVAL;
		}
		if (iscsi_name_check(value, what, sizeof(what))) {
			snprintf(k->err, k->errlen, "Name: %s", what);
			return -EINVAL;
		}
		snprintf(k->t->name, sizeof(k->t->name), "%s", value);
		return 0;
	}
	ret = target_set_key(k->t, key, value, what, sizeof(what));
	if (ret == -ENOENT) {
		snprintf(k->err, k->errlen, "%.64s: not a target parameter",
			 key);
		return -EINVAL;
	}
	if (ret) {
		snprintf(k->err, k->errlen, "%.64s: %s", key, what);
		return ret;
	}
	return 0;
}

static int check_bursts(const struct target_conf *t, char *err, size_t errlen)
{
	if (t->keys[IET_KEY_FIRST_BURST] > t->keys[IET_KEY_MAX_BURST]) {
		snprintf(err, errlen,
			 "FirstBurstLength: %u exceeds MaxBurstLength %u",
			 t->keys[IET_KEY_FIRST_BURST],
			 t->keys[IET_KEY_MAX_BURST]);
		return -EINVAL;
	}
	return 0;
}

static int target_new(struct runtime *rt, const struct ctl_req *req,
		      struct textbuf *out, char *err, size_t errlen)
{
	struct target_conf t, *old;
	struct key_ctx k = { &t, "", err, errlen };
	uint32_t tid = req->fields & CTL_F_TID ? req->tid : 0;
	int ret;

	if (req->fields & CTL_F_TARGET) {
		snprintf(err, errlen,
			 "--op new takes the new target's name as --params Name=IQN, with --tid=N (0: the next free)");
		return -EINVAL;
	}
	target_conf_defaults(&t);
	ret = req->fields & CTL_F_PARAMS ?
	      params_each(req->params, set_target_key, &k, err, errlen) : 0;
	if (ret)
		goto out;
	if (!t.name[0]) {
		snprintf(err, errlen, "--op new --tid=N needs --params Name=IQN");
		ret = -EINVAL;
		goto out;
	}
	ret = check_bursts(&t, err, errlen);
	if (ret)
		goto out;
	old = config_target_by_name(&rt->cfg, t.name);
	if (old) {
		snprintf(err, errlen, "target %s exists as tid %u", t.name,
			 old->tid);
		ret = -EEXIST;
		goto out;
	}
	if (tid && config_target_by_tid(&rt->cfg, tid)) {
		snprintf(err, errlen, "tid %u is in use by %s", tid,
			 config_target_by_tid(&rt->cfg, tid)->name);
		ret = -EEXIST;
		goto out;
	}
	ret = kernel_target_new(&tid, t.name, t.tparams, t.keys);
	if (ret) {
		kernel_failed(ret, err, errlen, "creating target %s", t.name);
		goto out;
	}
	/* Reachable through every portal group, as the file's targets. */
	ret = apply_target_groups(tid, &rt->cfg);
	if (ret) {
		kernel_failed(ret, err, errlen,
			      "giving target %s its portal groups", t.name);
		kernel_target_del(tid);
		goto out;
	}
	t.tid = tid;
	t.origin = ORIGIN_ADMIN;
	if (!config_add_target(&rt->cfg, &t)) {
		kernel_target_del(tid);
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	config_sort_targets(&rt->cfg);
	runtime_persist(rt);
	log_info("ietadm: target tid %u %s created", tid, t.name);
	/* IET printed nothing; the tid is news only when ietd chose it. */
	if (!(req->fields & CTL_F_TID) || !req->tid)
		out_line(out, "tid=%u", tid);
out:
	target_conf_free(&t);
	return ret;
}

/* A session of the target, for a message that says how to close it. */
static int sessions_of(const struct ktarget *kt, char *hint, size_t len)
{
	if (!kt || !kt->nr_sessions)
		return 0;
	snprintf(hint, len, " (ietadm --op delete --tid=%u --sid=%llu --cid=%u)",
		 kt->tid, (unsigned long long)kt->sessions[0].sid,
		 kt->sessions[0].nr_conns ? kt->sessions[0].conns[0].cid : 0);
	return kt->nr_sessions;
}

/*
 * Ask the initiators of target tid (0: of every target) to log out within
 * wait seconds: 0 and *later to finish once they are gone, or -ENOENT
 * when there was nobody to ask (the caller goes on at once).
 */
static int ask_sessions(struct runtime *rt, uint32_t tid, unsigned int wait,
			char *err, size_t errlen)
{
	struct logout_scope *sc;
	struct ctl_later *l;
	struct kstate st;
	size_t i, n = 0;
	int ret;

	if (!wait)
		return -ENOENT;
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	sc = calloc(st.nr_targets + 1, sizeof(*sc));
	l = calloc(1, sizeof(*l));
	if (!sc || !l) {
		kstate_free(&st);
		free(sc);
		free(l);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < st.nr_targets; i++) {
		const struct ktarget *kt = &st.targets[i];

		if ((!tid || kt->tid == tid) && kt->nr_sessions)
			sc[n++] = (struct logout_scope){ .tid = kt->tid,
							 .cid = -1 };
	}
	kstate_free(&st);
	if (n)
		log_info("ietadm: asking the initiators of %zu target%s to log out within %u s",
			 n, n == 1 ? "" : "s", wait);
	ret = logout_ask(&l->lw, sc, n, wait);
	if (ret) {
		free(l);
		if (ret == -ENOENT)
			return ret;
		return kernel_failed(ret, err, errlen,
				     "asking initiators to log out");
	}
	l->tid = tid;
	l->cid = -1;
	rt->later = l;
	return 0;
}

/* No logins to a target while its initiators are asked to go. */
static void mark_deleting(struct runtime *rt, uint32_t tid)
{
	size_t i;

	for (i = 0; i < rt->cfg.nr_targets; i++)
		if (!tid || rt->cfg.targets[i].tid == tid)
			rt->cfg.targets[i].deleting = true;
}

/* Close every session of a target the kernel reports; 0 or the first error. */
static int close_sessions(const struct ktarget *kt, char *err, size_t errlen)
{
	size_t j;
	int ret, first = 0;

	for (j = 0; kt && j < kt->nr_sessions; j++) {
		ret = kernel_session_del(kt->tid, kt->sessions[j].sid);
		if (ret && ret != -ENOENT && !first)
			first = kernel_failed(ret, err, errlen,
					      "closing session %llu of target %u",
					      (unsigned long long)kt->sessions[j].sid,
					      kt->tid);
	}
	return first;
}

/* Close what is left of target tid's sessions and delete it. */
static int target_gone(struct runtime *rt, uint32_t tid, char *err,
		       size_t errlen)
{
	char name[IET_NAME_MAX + 1];
	struct target_conf *t = config_target_by_tid(&rt->cfg, tid);
	struct kstate st;
	int ret;

	if (!t)
		return 0;	/* deleted meanwhile, by a teardown of all */
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		goto out;
	ret = close_sessions(kstate_target(&st, tid), err, errlen);
	kstate_free(&st);
	if (ret)
		goto out;
	ret = kernel_target_del(tid);
	if (ret && ret != -ENOENT) {
		ret = kernel_failed(ret, err, errlen, "deleting target %u %s",
				    tid, t->name);
		goto out;
	}
	snprintf(name, sizeof(name), "%s", t->name);
	config_del_target(&rt->cfg, tid);
	runtime_persist(rt);
	log_info("ietadm: target tid %u %s deleted", tid, name);
	return 0;
out:
	t->deleting = false;	/* it stays, and takes logins again */
	return ret;
}

static int target_gone_later(struct runtime *rt, const struct ctl_later *l,
			     struct textbuf *out, char *err, size_t errlen)
{
	(void)out;
	return target_gone(rt, l->tid, err, errlen);
}

/*
 * Delete a target. One with sessions only when told how long its
 * initiators get to log out (wait >= 0); the rest are closed then.
 */
static int target_delete(struct runtime *rt, struct target_conf *t, int wait,
			 char *err, size_t errlen)
{
	uint32_t tid = t->tid;
	char hint[128];
	struct kstate st;
	int n, ret;

	if (t->deleting) {
		snprintf(err, errlen,
			 "target %u %s is being deleted already: its initiators were asked to log out",
			 tid, t->name);
		return -EBUSY;
	}
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	n = sessions_of(kstate_target(&st, tid), hint, sizeof(hint));
	kstate_free(&st);
	if (n && wait < 0) {
		snprintf(err, errlen,
			 "target %u %s has %d session%s: close %s first%s, or let %s log out (--params LogoutTimeout=SECONDS)",
			 tid, t->name, n, n == 1 ? "" : "s",
			 n == 1 ? "it" : "them", hint,
			 n == 1 ? "it" : "them");
		return -EBUSY;
	}
	if (n) {
		ret = ask_sessions(rt, tid, wait, err, errlen);
		if (!ret) {
			rt->later->finish = target_gone_later;
			mark_deleting(rt, tid);
			return -EINPROGRESS;
		}
		if (ret != -ENOENT)
			return ret;
	}
	return target_gone(rt, tid, err, errlen);
}

static int target_update(struct runtime *rt, struct target_conf *cur,
			 const struct ctl_req *req, char *err, size_t errlen)
{
	struct target_conf t;
	struct key_ctx k = { &t, NULL, err, errlen };
	char what[256];
	int ret;

	if (target_conf_copy(&t, cur)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = req->fields & CTL_F_PARAMS ?
	      params_each(req->params, set_target_key, &k, err, errlen) : 0;
	if (!ret && (req->fields & CTL_F_REDIRECT)) {
		if (!req->redirect[0])
			t.redirect[0] = '\0';
		else if (redirect_parse(req->redirect, t.redirect,
					sizeof(t.redirect), what, sizeof(what))) {
			snprintf(err, errlen, "--redirect: %s", what);
			ret = -EINVAL;
		}
	}
	if (!ret)
		ret = check_bursts(&t, err, errlen);
	if (!ret && (memcmp(t.tparams, cur->tparams, sizeof(t.tparams)) ||
		     memcmp(t.keys, cur->keys, sizeof(t.keys)))) {
		/* Wthreads resizes at once; the rest is for new sessions. */
		ret = apply_target_params(t.tid, t.tparams, t.keys);
		if (ret) {
			kernel_failed(ret, err, errlen,
				      "changing the parameters of target %u",
				      t.tid);
			apply_target_params(cur->tid, cur->tparams, cur->keys);
		}
	}
	if (ret) {
		target_conf_free(&t);
		return ret;
	}
	target_conf_free(cur);
	*cur = t;
	runtime_persist(rt);
	log_info("ietadm: target tid %u %s updated%s%s", cur->tid, cur->name,
		 req->fields & CTL_F_REDIRECT ? ", redirect " : "",
		 req->fields & CTL_F_REDIRECT ?
		 (cur->redirect[0] ? cur->redirect : "cleared") : "");
	return 0;
}

/* ---------------------------------------------------------------- LUNs */

struct lun_args {
	char buf[CTL_PARAMS_MAX];
	size_t len;
	char *err;
	size_t errlen;
};

/* Rebuild "K=V,..." without the empty items scripts leave. */
static int join_arg(void *arg, const char *key, const char *value)
{
	struct lun_args *a = arg;
	int n = snprintf(a->buf + a->len, sizeof(a->buf) - a->len, "%s%s=%s",
			 a->len ? "," : "", key, value);

	if (n < 0 || (size_t)n >= sizeof(a->buf) - a->len) {
		snprintf(a->err, a->errlen, "--params too long");
		return -EINVAL;
	}
	a->len += n;
	return 0;
}

static int lun_new(struct runtime *rt, struct target_conf *t,
		   const struct ctl_req *req, char *err, size_t errlen)
{
	struct lun_args a = { .err = err, .errlen = errlen };
	struct lun_conf lun;
	char what[512];
	int ret;

	if (!(req->fields & CTL_F_PARAMS)) {
		snprintf(err, errlen,
			 "--op new --lun needs --params Path=FILE,Type=fileio|nullio,...");
		return -EINVAL;
	}
	if (req->lun > IET_LUN_MAX) {
		snprintf(err, errlen, "LUN %u is not 0..%d", req->lun,
			 IET_LUN_MAX);
		return -EINVAL;
	}
	if (target_lun(t, req->lun)) {
		snprintf(err, errlen, "target %u already has LUN %u", t->tid,
			 req->lun);
		return -EEXIST;
	}
	ret = params_each(req->params, join_arg, &a, err, errlen);
	if (ret)
		return ret;
	lun.lun = req->lun;
	if (lun_parse_args(a.buf, &lun, what, sizeof(what))) {
		snprintf(err, errlen, "%s", what);
		return -EINVAL;
	}
	lun_conf_derive_ids(&lun, t->name);
	/* The kernel tells the target's sessions: REPORTED LUNS changed. */
	ret = kernel_lun_new(t->tid, &lun);
	if (ret)
		return kernel_failed(ret, err, errlen,
				     "adding LUN %u to target %u", lun.lun,
				     t->tid);
	if (target_add_lun(t, &lun)) {
		kernel_lun_del(t->tid, lun.lun);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	runtime_persist(rt);
	log_info("ietadm: tid %u LUN %u added (%s)", t->tid, lun.lun,
		 lun.type == IET_LUN_NULLIO ? "nullio" : lun.path);
	return 0;
}

static int lun_delete(struct runtime *rt, struct target_conf *t,
		      const struct ctl_req *req, char *err, size_t errlen)
{
	int ret;

	if (!target_lun(t, req->lun)) {
		snprintf(err, errlen, "target %u has no LUN %u", t->tid,
			 req->lun);
		return -ENOENT;
	}
	/* An explicit request: allowed while sessions use it (as IET). */
	ret = kernel_lun_del(t->tid, req->lun);
	if (ret && ret != -ENOENT)
		return kernel_failed(ret, err, errlen,
				     "removing LUN %u of target %u", req->lun,
				     t->tid);
	target_del_lun(t, req->lun);
	runtime_persist(rt);
	log_info("ietadm: tid %u LUN %u removed", t->tid, req->lun);
	return 0;
}

/* ---------------------------------------------------------------- accounts */

struct user_args {
	char kind[16];			/* IncomingUser or OutgoingUser */
	char user[CHAP_NAME_MAX + 1];
	char secret[CHAP_SECRET_MAX + 1];
	char initiators[ACCOUNT_INITIATORS_MAX * (IET_NAME_MAX + 1) + 1];
	bool has_user, has_secret, has_initiators;
	char *err;
	size_t errlen;
};

static int user_arg(void *arg, const char *key, const char *value)
{
	struct user_args *u = arg;

	if (!strcasecmp(key, "IncomingUser") ||
	    !strcasecmp(key, "OutgoingUser")) {
		if (u->has_user) {
			snprintf(u->err, u->errlen,
				 "--params: one IncomingUser= or OutgoingUser= at a time");
			return -EINVAL;
		}
		snprintf(u->kind, sizeof(u->kind), "%s",
			 tolower((unsigned char)key[0]) == 'i' ?
			 "IncomingUser" : "OutgoingUser");
		if (strlen(value) > CHAP_NAME_MAX) {
			snprintf(u->err, u->errlen, "%s: name too long", u->kind);
			return -EINVAL;
		}
		strcpy(u->user, value);
		u->has_user = true;
		return 0;
	}
	if (!strcasecmp(key, "Password")) {
		if (strlen(value) > CHAP_SECRET_MAX) {
			snprintf(u->err, u->errlen, "Password: longer than %d characters",
				 CHAP_SECRET_MAX);
			return -EINVAL;
		}
		strcpy(u->secret, value);
		u->has_secret = true;
		return 0;
	}
	if (!strcasecmp(key, "Initiators")) {
		if (strlen(value) >= sizeof(u->initiators)) {
			snprintf(u->err, u->errlen, "Initiators: at most %d names",
				 ACCOUNT_INITIATORS_MAX);
			return -EINVAL;
		}
		strcpy(u->initiators, value);
		u->has_initiators = true;
		return 0;
	}
	snprintf(u->err, u->errlen,
		 "--params: %.64s is not IncomingUser, OutgoingUser, Password or Initiators",
		 key);
	return -EINVAL;
}

static int user_params(const struct ctl_req *req, struct user_args *u,
		       char *err, size_t errlen)
{
	memset(u, 0, sizeof(*u));
	u->err = err;
	u->errlen = errlen;
	if (!(req->fields & CTL_F_PARAMS) ||
	    params_each(req->params, user_arg, u, err, errlen) ||
	    !u->has_user) {
		if (!(req->fields & CTL_F_PARAMS) || !u->has_user)
			snprintf(err, errlen,
				 "--user needs --params IncomingUser=NAME[,Password=SECRET] or OutgoingUser=NAME[,Password=SECRET]");
		return -EINVAL;
	}
	return 0;
}

static int user_new(struct runtime *rt, struct target_conf *t,
		    struct auth *a, const char *scope,
		    const struct ctl_req *req, char *err, size_t errlen)
{
	const struct account *clash;
	struct user_args u;
	struct account acc;
	const char *where;
	char what[384];
	int ret;

	ret = user_params(req, &u, err, errlen);
	if (ret)
		goto out;
	if (account_check(u.user, u.secret, rt->cfg.allow_short_secrets, what,
			  sizeof(what))) {
		snprintf(err, errlen, "%s: %s", u.kind,
			 u.has_secret ? what : "Password= is required");
		ret = -EINVAL;
		goto out;
	}
	memset(&acc, 0, sizeof(acc));
	strcpy(acc.user, u.user);
	strcpy(acc.secret, u.secret);
	if (u.has_initiators && strcmp(u.kind, "IncomingUser")) {
		snprintf(err, errlen,
			 "Initiators: only an IncomingUser logs in as an initiator");
		ret = -EINVAL;
		goto out;
	}
	if (u.has_initiators &&
	    account_set_initiators(&acc, u.initiators, what, sizeof(what))) {
		snprintf(err, errlen, "Initiators: %s", what);
		ret = -EINVAL;
		goto out;
	}
	if (!strcmp(u.kind, "IncomingUser")) {
		if (auth_incoming(a, u.user)) {
			snprintf(err, errlen, "%s has an IncomingUser %s already (delete it first)",
				 scope, u.user);
			ret = -EEXIST;
		} else if ((clash = config_secret_clash(&rt->cfg, u.secret, false,
						       &where))) {
			snprintf(err, errlen,
				 "IncomingUser %s: its secret is OutgoingUser %s's (%.223s): mutual CHAP needs the target's secret to be no initiator's",
				 u.user, clash->user, where);
			ret = -EINVAL;
		} else if (auth_add_incoming(a, &acc)) {
			snprintf(err, errlen, "out of memory");
			ret = -ENOMEM;
		}
	} else {
		clash = config_secret_clash(&rt->cfg, u.secret, true, &where);
		if (clash) {
			snprintf(err, errlen,
				 "OutgoingUser %s: its secret is IncomingUser %s's (%.223s): mutual CHAP needs the target's secret to be no initiator's",
				 u.user, clash->user, where);
			ret = -EINVAL;
		}
		if (!ret) {
			a->outgoing = acc;
			a->has_outgoing = true;
		}
	}
	wipe(&acc, sizeof(acc));
	if (!ret && t && t->origin == ORIGIN_KERNEL && a->nr_incoming) {
		/* Its accounts are known again: it is the admin's now. */
		t->origin = ORIGIN_ADMIN;
		log_info("ietadm: tid %u %s has CHAP accounts again: logins accepted",
			 t->tid, t->name);
	}
	if (!ret) {
		runtime_persist(rt);
		log_info("ietadm: %s %s added to %s", u.kind, u.user, scope);
	}
out:
	wipe(&u, sizeof(u));
	return ret;
}

static int user_delete(struct runtime *rt, struct auth *a, const char *scope,
		       const struct ctl_req *req, char *err, size_t errlen)
{
	struct user_args u;
	int ret;

	ret = user_params(req, &u, err, errlen);
	if (ret)
		goto out;
	if (!strcmp(u.kind, "IncomingUser")) {
		if (!auth_incoming(a, u.user)) {
			snprintf(err, errlen, "%s has no IncomingUser %s", scope,
				 u.user);
			ret = -ENOENT;
			goto out;
		}
		auth_del_incoming(a, u.user);
	} else {
		if (!a->has_outgoing ||
		    (u.user[0] && strcmp(a->outgoing.user, u.user))) {
			snprintf(err, errlen, "%s has no OutgoingUser %s", scope,
				 u.user);
			ret = -ENOENT;
			goto out;
		}
		wipe(&a->outgoing, sizeof(a->outgoing));
		a->has_outgoing = false;
	}
	runtime_persist(rt);
	log_info("ietadm: %s %s removed from %s", u.kind, u.user, scope);
out:
	wipe(&u, sizeof(u));
	return ret;
}

/* The accounts a request is about: a target's, or discovery's. */
static struct auth *req_auth(struct runtime *rt, const struct ctl_req *req,
			     char *scope, size_t len, struct target_conf **tp,
			     char *err, size_t errlen)
{
	struct target_conf *t;

	*tp = NULL;
	if (!(req->fields & (CTL_F_TID | CTL_F_TARGET)) ||
	    ((req->fields & CTL_F_TID) && !req->tid &&
	     !(req->fields & CTL_F_TARGET))) {
		snprintf(scope, len, "discovery");
		return &rt->cfg.auth;
	}
	t = req_target(rt, req, err, errlen);
	if (!t)
		return NULL;
	snprintf(scope, len, "target %u", t->tid);
	*tp = t;
	return &t->auth;
}

/* ---------------------------------------------------------------- sessions */

/*
 * Close connection cid (-1: the whole session sid) of target tid; asked:
 * its initiator was asked to log out, so it being gone is success.
 */
static int conn_gone(uint32_t tid, uint64_t sid, int cid, bool asked,
		     char *err, size_t errlen)
{
	int ret;

	if (cid >= 0) {
		ret = kernel_conn_del(tid, sid, cid);
		if (ret == -ENOENT && asked) {
			ret = 0;
		} else if (ret == -ENOENT) {
			snprintf(err, errlen,
				 "no connection %d in session %llu of target %u",
				 cid, (unsigned long long)sid, tid);
			return ret;
		}
		if (ret)
			return kernel_failed(ret, err, errlen,
					     "closing connection %d of session %llu",
					     cid, (unsigned long long)sid);
		log_info("ietadm: tid %u sid %llu cid %d closed", tid,
			 (unsigned long long)sid, cid);
		return 0;
	}
	ret = kernel_session_del(tid, sid);
	if (ret == -ENOENT && asked) {
		ret = 0;
	} else if (ret == -ENOENT) {
		snprintf(err, errlen, "no session %llu in target %u",
			 (unsigned long long)sid, tid);
		return ret;
	}
	if (ret)
		return kernel_failed(ret, err, errlen, "closing session %llu",
				     (unsigned long long)sid);
	log_info("ietadm: tid %u sid %llu closed", tid,
		 (unsigned long long)sid);
	return 0;
}

static int conn_gone_later(struct runtime *rt, const struct ctl_later *l,
			   struct textbuf *out, char *err, size_t errlen)
{
	(void)rt;
	(void)out;
	return conn_gone(l->tid, l->sid, l->cid, true, err, errlen);
}

static int conn_delete(struct runtime *rt, const struct target_conf *t,
		       const struct ctl_req *req, int wait, char *err,
		       size_t errlen)
{
	int cid = req->fields & CTL_F_CID ? (int)req->cid : -1;
	struct logout_scope *sc;
	struct ctl_later *l;
	int ret;

	if (wait > 0) {
		sc = calloc(1, sizeof(*sc));
		l = calloc(1, sizeof(*l));
		if (!sc || !l) {
			free(sc);
			free(l);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		*sc = (struct logout_scope){ t->tid, 0, req->sid, cid };
		ret = logout_ask(&l->lw, sc, 1, (unsigned int)wait);
		if (!ret) {
			l->finish = conn_gone_later;
			l->tid = t->tid;
			l->sid = req->sid;
			l->cid = cid;
			rt->later = l;
			return -EINPROGRESS;
		}
		free(l);
		if (ret != -ENOENT)
			return kernel_failed(ret, err, errlen,
					     "asking session %llu to log out",
					     (unsigned long long)req->sid);
	}
	return conn_gone(t->tid, req->sid, cid, false, err, errlen);
}

/*
 * Close every session still there and delete every target; marked: they
 * were marked deleting for it (what stays takes logins again).
 */
static int all_gone(struct runtime *rt, bool marked, char *err,
		    size_t errlen)
{
	struct kstate st;
	size_t i;
	int ret, first = 0;

	ret = dump_kernel(&st, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < st.nr_targets; i++) {
		const struct ktarget *kt = &st.targets[i];

		ret = close_sessions(kt, err, errlen);
		if (ret && !first)
			first = ret;
		ret = kernel_target_del(kt->tid);
		if (ret && ret != -ENOENT) {
			if (!first)
				first = kernel_failed(ret, err, errlen,
						      "deleting target %u",
						      kt->tid);
			continue;
		}
		config_del_target(&rt->cfg, kt->tid);
	}
	kstate_free(&st);
	/* Targets the kernel did not have are gone from the model too. */
	if (!first) {
		while (rt->cfg.nr_targets)
			config_del_target(&rt->cfg, rt->cfg.targets[0].tid);
	}
	runtime_persist(rt);
	if (!first)
		log_info("ietadm: every session closed and every target deleted");
	ret = first;
out:
	for (i = 0; marked && i < rt->cfg.nr_targets; i++)
		rt->cfg.targets[i].deleting = false;
	return ret;
}

static int all_gone_later(struct runtime *rt, const struct ctl_later *l,
			  struct textbuf *out, char *err, size_t errlen)
{
	(void)l;
	(void)out;
	return all_gone(rt, true, err, errlen);
}

/*
 * --op delete alone: every initiator is asked to log out and given wait
 * seconds, then every session still there is closed and every target
 * deleted.
 */
static int stop_all(struct runtime *rt, unsigned int wait, char *err,
		    size_t errlen)
{
	int ret = ask_sessions(rt, 0, wait, err, errlen);

	if (!ret) {
		rt->later->finish = all_gone_later;
		mark_deleting(rt, 0);
		return -EINPROGRESS;
	}
	if (ret != -ENOENT)
		return ret;
	return all_gone(rt, false, err, errlen);
}

/* --params LogoutTimeout=SECONDS of --op delete; -1 when not given. */
static int logout_param(void *arg, const char *key, const char *value)
{
	char *end;
	long v;

	if (strcasecmp(key, "LogoutTimeout"))
		return -ENOENT;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < 0 || v > LOGOUT_WAIT_MAX)
		return -EINVAL;
	*(int *)arg = (int)v;
	return 0;
}

static int delete_params(const struct ctl_req *req, int *wait, char *err,
			 size_t errlen)
{
	*wait = -1;
	if (!(req->fields & CTL_F_PARAMS))
		return 0;
	if (!params_each(req->params, logout_param, wait, err, errlen) &&
	    *wait >= 0)
		return 0;
	snprintf(err, errlen,
		 "--op delete takes --params LogoutTimeout=SECONDS (0..%d): how long initiators get to log out before their sessions are closed",
		 LOGOUT_WAIT_MAX);
	return -EINVAL;
}

/* ---------------------------------------------------------------- ops */

int op_new(struct runtime *rt, const struct ctl_req *req, struct textbuf *out,
	   char *err, size_t errlen)
{
	struct target_conf *t;
	struct auth *a;
	char scope[32];

	if (req->fields & CTL_F_USER) {
		a = req_auth(rt, req, scope, sizeof(scope), &t, err, errlen);
		return a ? user_new(rt, t, a, scope, req, err, errlen) :
			-ENOENT;
	}
	if (req->fields & CTL_F_LUN) {
		t = req_target(rt, req, err, errlen);
		return t ? lun_new(rt, t, req, err, errlen) : -ENOENT;
	}
	return target_new(rt, req, out, err, errlen);
}

int op_delete(struct runtime *rt, const struct ctl_req *req,
	      struct textbuf *out, char *err, size_t errlen)
{
	struct target_conf *t;
	struct auth *a;
	char scope[32];
	int wait, ret;

	(void)out;
	if (req->fields & CTL_F_USER) {
		a = req_auth(rt, req, scope, sizeof(scope), &t, err, errlen);
		return a ? user_delete(rt, a, scope, req, err, errlen) : -ENOENT;
	}
	ret = delete_params(req, &wait, err, errlen);
	if (ret)
		return ret;
	if (!(req->fields & ~CTL_F_PARAMS))
		return stop_all(rt, wait < 0 ? LOGOUT_WAIT_DEFAULT : wait, err,
				errlen);
	if (!(req->fields & (CTL_F_TID | CTL_F_TARGET))) {
		/* Never let a stray option turn into the full teardown. */
		snprintf(err, errlen,
			 "--op delete needs --tid (or --user); alone, it deletes everything");
		return -EINVAL;
	}
	t = req_target(rt, req, err, errlen);
	if (!t)
		return -ENOENT;
	if (req->fields & CTL_F_LUN) {
		if (wait >= 0) {
			snprintf(err, errlen,
				 "LogoutTimeout: a LUN is removed under its sessions, which stay");
			return -EINVAL;
		}
		return lun_delete(rt, t, req, err, errlen);
	}
	if (req->fields & CTL_F_SID)
		return conn_delete(rt, t, req, wait, err, errlen);
	if (req->fields & CTL_F_CID) {
		snprintf(err, errlen, "--cid needs --sid");
		return -EINVAL;
	}
	return target_delete(rt, t, wait, err, errlen);
}

int op_update(struct runtime *rt, const struct ctl_req *req,
	      struct textbuf *out, char *err, size_t errlen)
{
	struct target_conf *t;

	(void)out;
	if (!(req->fields & (CTL_F_PARAMS | CTL_F_REDIRECT))) {
		snprintf(err, errlen, "--op update needs --params K=V,... or --redirect=ADDR[:PORT]");
		return -EINVAL;
	}
	/* A LUN's size or reservations; otherwise deleted and added again. */
	if ((req->fields & CTL_F_LUN) &&
	    !(req->fields & (CTL_F_USER | CTL_F_SID | CTL_F_REDIRECT)))
		return resize_params(req->params) ?
		       resize_update(rt, req, err, errlen) :
		       pr_update(rt, req, err, errlen);
	if (req->fields & (CTL_F_USER | CTL_F_LUN | CTL_F_SID)) {
		snprintf(err, errlen,
			 "--op update changes a target (--tid and --params or --redirect); accounts and LUNs are deleted and added again");
		return -EINVAL;
	}
	/* A portal group's state, not the target's settings. */
	if ((req->fields & CTL_F_PARAMS) && !(req->fields & CTL_F_REDIRECT) &&
	    tpg_params(req->params))
		return tpg_update(rt, req, err, errlen);
	t = req_target(rt, req, err, errlen);
	return t ? target_update(rt, t, req, err, errlen) : -ENOENT;
}
