// SPDX-License-Identifier: GPL-2.0
/* In-memory fake of the iscsi_trgt netlink facade (usr/kernel.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kernel_fake.h"
#include "logout.h"

struct held_fd {
	uint32_t tid;
	uint64_t sid;
	uint16_t cid;
	int fd;
};

static struct {
	bool open;
	int pipe[2];
	struct kstate st;
	struct fake_call *calls;
	size_t nr_calls;
	int fail[F_NR_OPS];
	char fail_msg[F_NR_OPS][128];
	struct kevent *events;
	size_t nr_events;
	struct held_fd *fds;
	size_t nr_fds;
	char errmsg[256];
	bool trace_checked, trace;
	uint32_t pr_tid, pr_lun;
	struct kpr pr;
	bool logout_ignored;
	bool logout_held;		/* doomed stay until fake_logout_go() */
	struct logout_scope *doomed;	/* dropped after the next dump */
	size_t nr_doomed;
	bool closing_stuck;		/* backings closing stay so */
} f = { .pipe = { -1, -1 } };

static const char *const op_names[F_NR_OPS] = {
	"open", "target_new", "target_set", "target_del", "lun_new",
	"lun_del", "session_new", "session_del", "conn_new", "conn_del",
	"dump", "pr_get", "pr_clear", "tpg_set", "tpg_del", "logout_req",
	"lun_set",
};

static void trace(const struct fake_call *c)
{
	if (!f.trace_checked) {
		f.trace = getenv("IET_FAKE_TRACE") != NULL;
		f.trace_checked = true;
	}
	if (!f.trace)
		return;
	fprintf(stderr,
		"fake-kernel: %s ret=%d tid=%u sid=%llu cid=%u statsn=%u exp_cmdsn=%u name=%s\n",
		op_names[c->op], c->ret, c->tid, (unsigned long long)c->sid,
		c->cid, c->statsn, c->exp_cmdsn, c->name);
}

static struct fake_call *record(enum fake_op op)
{
	struct fake_call *nc = realloc(f.calls, (f.nr_calls + 1) * sizeof(*nc));

	if (!nc)
		abort();
	f.calls = nc;
	memset(&f.calls[f.nr_calls], 0, sizeof(*nc));
	f.calls[f.nr_calls].op = op;
	return &f.calls[f.nr_calls++];
}

/* Injected failure for op, if any; consumed. */
static int injected(enum fake_op op)
{
	int err = f.fail[op];

	if (err) {
		f.fail[op] = 0;
		snprintf(f.errmsg, sizeof(f.errmsg), "%s", f.fail_msg[op]);
	}
	return err;
}

static int done(struct fake_call *c, int ret, const char *fmt, ...)
{
	va_list ap;

	c->ret = ret;
	if (ret && fmt) {
		va_start(ap, fmt);
		vsnprintf(f.errmsg, sizeof(f.errmsg), fmt, ap);
		va_end(ap);
	}
	trace(c);
	return ret;
}

static struct ktarget *find_target(uint32_t tid)
{
	size_t i;

	for (i = 0; i < f.st.nr_targets; i++)
		if (f.st.targets[i].tid == tid)
			return &f.st.targets[i];
	return NULL;
}

static struct ksession *find_session(struct ktarget *t, uint64_t sid)
{
	size_t i;

	for (i = 0; t && i < t->nr_sessions; i++)
		if (t->sessions[i].sid == sid)
			return &t->sessions[i];
	return NULL;
}

static struct ktpg *find_tpg(struct ktarget *t, uint16_t tag)
{
	size_t i;

	for (i = 0; i < t->nr_tpgs; i++)
		if (t->tpgs[i].tag == tag)
			return &t->tpgs[i];
	return NULL;
}

static void drop_fd(uint32_t tid, uint64_t sid, uint16_t cid, bool any_cid)
{
	size_t i;

	for (i = 0; i < f.nr_fds;) {
		struct held_fd *h = &f.fds[i];

		if (h->tid == tid && h->sid == sid && (any_cid || h->cid == cid)) {
			close(h->fd);
			f.fds[i] = f.fds[--f.nr_fds];
		} else {
			i++;
		}
	}
}

static void free_session(struct ksession *s)
{
	free(s->conns);
}

void fake_reset(void)
{
	size_t i;

	kstate_free(&f.st);
	kpr_free(&f.pr);
	f.pr_tid = 0;
	free(f.calls);
	f.calls = NULL;
	f.nr_calls = 0;
	memset(f.fail, 0, sizeof(f.fail));
	free(f.events);
	f.events = NULL;
	f.nr_events = 0;
	for (i = 0; i < f.nr_fds; i++)
		close(f.fds[i].fd);
	free(f.fds);
	f.fds = NULL;
	f.nr_fds = 0;
	free(f.doomed);
	f.doomed = NULL;
	f.nr_doomed = 0;
	f.logout_ignored = false;
	f.logout_held = false;
	f.closing_stuck = false;
	f.errmsg[0] = '\0';
	kernel_close();
}

size_t fake_nr_calls(void)
{
	return f.nr_calls;
}

const struct fake_call *fake_call(size_t i)
{
	return i < f.nr_calls ? &f.calls[i] : NULL;
}

size_t fake_count(enum fake_op op)
{
	size_t i, n = 0;

	for (i = 0; i < f.nr_calls; i++)
		n += f.calls[i].op == op;
	return n;
}

const struct fake_call *fake_last(enum fake_op op)
{
	size_t i = f.nr_calls;

	while (i--)
		if (f.calls[i].op == op)
			return &f.calls[i];
	return NULL;
}

void fake_fail(enum fake_op op, int err, const char *msg)
{
	f.fail[op] = err;
	snprintf(f.fail_msg[op], sizeof(f.fail_msg[op]), "%s", msg ? msg : "");
}

const struct kstate *fake_state(void)
{
	return &f.st;
}

const struct ktarget *fake_target(uint32_t tid)
{
	return find_target(tid);
}

int fake_conn_fd(uint32_t tid, uint64_t sid, uint16_t cid)
{
	size_t i;

	for (i = 0; i < f.nr_fds; i++)
		if (f.fds[i].tid == tid && f.fds[i].sid == sid &&
		    f.fds[i].cid == cid)
			return f.fds[i].fd;
	return -1;
}

const char *kernel_errmsg(void)
{
	return f.errmsg;
}

int kernel_open(void)
{
	struct fake_call *c = record(F_OPEN);
	int err = injected(F_OPEN);

	if (err)
		return done(c, err, NULL);
	if (f.pipe[0] < 0 && pipe2(f.pipe, O_NONBLOCK | O_CLOEXEC))
		return done(c, -errno, "pipe");
	f.open = true;
	f.errmsg[0] = '\0';
	return done(c, 0, NULL);
}

/* The child's copy of the fake is its own already. */
int kernel_reopen(void)
{
	f.open = true;
	return 0;
}

void kernel_close(void)
{
	if (f.pipe[0] >= 0) {
		close(f.pipe[0]);
		close(f.pipe[1]);
	}
	f.pipe[0] = f.pipe[1] = -1;
	f.open = false;
}

int kernel_event_fd(void)
{
	return f.pipe[0];
}

void fake_event(const struct kevent *ev)
{
	struct kevent *ne = realloc(f.events, (f.nr_events + 1) * sizeof(*ne));

	if (!ne)
		abort();
	f.events = ne;
	f.events[f.nr_events++] = *ev;
	if (f.pipe[1] >= 0)
		(void)!write(f.pipe[1], "e", 1);
}

int kernel_events(kevent_fn fn, void *arg)
{
	char buf[64];
	size_t i, n;
	struct kevent *evs;

	while (f.pipe[0] >= 0 && read(f.pipe[0], buf, sizeof(buf)) > 0)
		;
	/* Like the kernel, a closed session is gone before the event is read. */
	evs = f.events;
	n = f.nr_events;
	f.events = NULL;
	f.nr_events = 0;
	for (i = 0; i < n; i++)
		fn(&evs[i], arg);
	free(evs);
	return 0;
}

int kernel_target_new(uint32_t *tid, const char *name, const uint32_t *tparams,
		      const uint32_t *keys)
{
	struct fake_call *c = record(F_TARGET_NEW);
	struct ktarget *nt, *t;
	int err = injected(F_TARGET_NEW);
	size_t i;

	c->tid = *tid;
	snprintf(c->name, sizeof(c->name), "%s", name);
	memcpy(c->tparams, tparams, sizeof(c->tparams));
	memcpy(c->keys, keys, sizeof(c->keys));
	if (err)
		return done(c, err, NULL);
	if (*tid == 0) {
		uint32_t max = 0;

		for (i = 0; i < f.st.nr_targets; i++)
			if (f.st.targets[i].tid > max)
				max = f.st.targets[i].tid;
		*tid = max + 1;
	}
	if (find_target(*tid))
		return done(c, -EEXIST, "tid %u exists", *tid);
	for (i = 0; i < f.st.nr_targets; i++)
		if (!strcasecmp(f.st.targets[i].name, name))
			return done(c, -EEXIST, "name %s exists", name);
	nt = realloc(f.st.targets, (f.st.nr_targets + 1) * sizeof(*nt));
	if (!nt)
		return done(c, -ENOMEM, "oom");
	f.st.targets = nt;
	t = &f.st.targets[f.st.nr_targets++];
	memset(t, 0, sizeof(*t));
	t->tid = *tid;
	snprintf(t->name, sizeof(t->name), "%s", name);
	memcpy(t->tparams, tparams, sizeof(t->tparams));
	memcpy(t->keys, keys, sizeof(t->keys));
	/* As the module: portal group 1, active/optimized. */
	t->tpgs[0].tag = 1;
	t->tpgs[0].state = IET_ALUA_ACTIVE_OPTIMIZED;
	t->nr_tpgs = 1;
	return done(c, 0, NULL);
}

int kernel_target_set(uint32_t tid, const uint32_t *tparams,
		      const uint32_t *keys)
{
	struct fake_call *c = record(F_TARGET_SET);
	struct ktarget *t = find_target(tid);
	int err = injected(F_TARGET_SET);

	c->tid = tid;
	if (err)
		return done(c, err, NULL);
	if (!t)
		return done(c, -ENOENT, "no tid %u", tid);
	if (tparams)
		memcpy(t->tparams, tparams, sizeof(t->tparams));
	if (keys)
		memcpy(t->keys, keys, sizeof(t->keys));
	return done(c, 0, NULL);
}

int kernel_target_del(uint32_t tid)
{
	struct fake_call *c = record(F_TARGET_DEL);
	struct ktarget *t = find_target(tid);
	int err = injected(F_TARGET_DEL);

	c->tid = tid;
	if (err)
		return done(c, err, NULL);
	if (!t)
		return done(c, -ENOENT, "no tid %u", tid);
	if (t->nr_sessions)
		return done(c, -EBUSY, "tid %u has sessions", tid);
	free(t->luns);
	free(t->sessions);
	*t = f.st.targets[--f.st.nr_targets];
	return done(c, 0, NULL);
}

int kernel_lun_new(uint32_t tid, const struct lun_conf *lun)
{
	struct fake_call *c = record(F_LUN_NEW);
	struct ktarget *t = find_target(tid);
	int err = injected(F_LUN_NEW);
	struct klun *nl;
	size_t i;

	c->tid = tid;
	c->lun = *lun;
	if (err)
		return done(c, err, NULL);
	if (!t)
		return done(c, -ENOENT, "no tid %u", tid);
	for (i = 0; i < t->nr_luns; i++)
		if (t->luns[i].conf.lun == lun->lun)
			return done(c, -EEXIST, "LUN %u exists", lun->lun);
	nl = realloc(t->luns, (t->nr_luns + 1) * sizeof(*nl));
	if (!nl)
		return done(c, -ENOMEM, "oom");
	t->luns = nl;
	memset(&t->luns[t->nr_luns], 0, sizeof(*nl));
	/* As the module's dump: the physical block size it took. */
	nl = &t->luns[t->nr_luns++];
	nl->conf = *lun;
	nl->conf.phys_block_size = lun_phys_block_size(lun);
	return done(c, 0, NULL);
}

int kernel_lun_del(uint32_t tid, uint32_t lun)
{
	struct fake_call *c = record(F_LUN_DEL);
	struct ktarget *t = find_target(tid);
	int err = injected(F_LUN_DEL);
	size_t i;

	c->tid = tid;
	c->lun.lun = lun;
	if (err)
		return done(c, err, NULL);
	for (i = 0; t && i < t->nr_luns; i++) {
		if (t->luns[i].conf.lun == lun) {
			t->luns[i] = t->luns[--t->nr_luns];
			return done(c, 0, NULL);
		}
	}
	return done(c, -ENOENT, "no LUN %u", lun);
}

/* A session through portal group tpgt, which the target must have. */
static int add_session(uint32_t tid, uint64_t sid, const char *initiator,
		       uint16_t tpgt, const uint32_t *keys)
{
	struct ktarget *t = find_target(tid);
	struct ksession *ns, *s;
	struct ktpg *g;

	if (!t)
		return -ENOENT;
	if (find_session(t, sid))
		return -EEXIST;
	g = find_tpg(t, tpgt);
	if (!g && (t->nr_tpgs || tpgt != 1))
		return -ENOENT;
	ns = realloc(t->sessions, (t->nr_sessions + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	t->sessions = ns;
	s = &t->sessions[t->nr_sessions++];
	memset(s, 0, sizeof(*s));
	s->sid = sid;
	snprintf(s->initiator, sizeof(s->initiator), "%s", initiator);
	s->tpgt = tpgt;
	if (g)
		g->sessions++;
	if (keys)
		memcpy(s->keys, keys, sizeof(s->keys));
	return 0;
}

static int add_conn(struct ksession *s, uint16_t cid, const uint32_t *keys)
{
	struct kconn *nc;
	size_t i;

	for (i = 0; i < s->nr_conns; i++)
		if (s->conns[i].cid == cid)
			return -EEXIST;
	nc = realloc(s->conns, (s->nr_conns + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	s->conns = nc;
	memset(&s->conns[s->nr_conns], 0, sizeof(*nc));
	s->conns[s->nr_conns].cid = cid;
	s->conns[s->nr_conns].state = IET_CONN_ACTIVE;
	if (keys)
		memcpy(s->conns[s->nr_conns].keys, keys, sizeof(nc->keys));
	s->nr_conns++;
	return 0;
}

int fake_add_session(uint32_t tid, uint64_t sid, const char *initiator,
		     const uint32_t *keys, const uint16_t *cids, size_t nr)
{
	struct ksession *s;
	size_t i;
	int ret = add_session(tid, sid, initiator, 1, keys);

	if (ret)
		return ret;
	s = find_session(find_target(tid), sid);
	for (i = 0; i < nr; i++) {
		ret = add_conn(s, cids[i], keys);
		if (ret)
			return ret;
	}
	return 0;
}

int kernel_session_new(uint32_t tid, uint64_t sid, const char *initiator,
		       uint32_t exp_cmdsn, uint16_t tpgt, const uint32_t *keys)
{
	struct fake_call *c = record(F_SESSION_NEW);
	int err = injected(F_SESSION_NEW);

	c->tid = tid;
	c->sid = sid;
	c->exp_cmdsn = exp_cmdsn;
	c->tpgt = tpgt;
	snprintf(c->name, sizeof(c->name), "%s", initiator);
	memcpy(c->keys, keys, sizeof(c->keys));
	if (err)
		return done(c, err, NULL);
	err = add_session(tid, sid, initiator, tpgt, keys);
	return done(c, err, "session_new tid %u sid %llu: %d", tid,
		    (unsigned long long)sid, err);
}

static void remove_session(struct ktarget *t, struct ksession *s)
{
	struct ktpg *g = find_tpg(t, s->tpgt);

	drop_fd(t->tid, s->sid, 0, true);
	if (g)
		g->sessions--;
	free_session(s);
	*s = t->sessions[--t->nr_sessions];
}

int kernel_session_del(uint32_t tid, uint64_t sid)
{
	struct fake_call *c = record(F_SESSION_DEL);
	struct ktarget *t = find_target(tid);
	struct ksession *s = find_session(t, sid);
	int err = injected(F_SESSION_DEL);

	c->tid = tid;
	c->sid = sid;
	if (err)
		return done(c, err, NULL);
	if (!s)
		return done(c, -ENOENT, "no session %llu",
			    (unsigned long long)sid);
	remove_session(t, s);
	return done(c, 0, NULL);
}

int kernel_conn_new(uint32_t tid, uint64_t sid, uint16_t cid, int fd,
		    uint32_t statsn, const uint32_t *keys)
{
	struct fake_call *c = record(F_CONN_NEW);
	struct ksession *s = find_session(find_target(tid), sid);
	struct held_fd *nh;
	int err = injected(F_CONN_NEW), dfd;

	c->tid = tid;
	c->sid = sid;
	c->cid = cid;
	c->statsn = statsn;
	memcpy(c->keys, keys, sizeof(c->keys));
	if (err)
		return done(c, err, NULL);
	if (!s)
		return done(c, -ENOENT, "no session %llu",
			    (unsigned long long)sid);
	err = add_conn(s, cid, keys);
	if (err)
		return done(c, err, "conn %u: %d", cid, err);
	/* Like the kernel: our own reference, the caller closes its fd. */
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return done(c, -errno, "dup");
	nh = realloc(f.fds, (f.nr_fds + 1) * sizeof(*nh));
	if (!nh) {
		close(dfd);
		return done(c, -ENOMEM, "oom");
	}
	f.fds = nh;
	f.fds[f.nr_fds++] = (struct held_fd){ tid, sid, cid, dfd };
	return done(c, 0, NULL);
}

int kernel_conn_del(uint32_t tid, uint64_t sid, uint16_t cid)
{
	struct fake_call *c = record(F_CONN_DEL);
	struct ksession *s = find_session(find_target(tid), sid);
	int err = injected(F_CONN_DEL);
	size_t i;

	c->tid = tid;
	c->sid = sid;
	c->cid = cid;
	if (err)
		return done(c, err, NULL);
	for (i = 0; s && i < s->nr_conns; i++) {
		if (s->conns[i].cid == cid) {
			s->conns[i] = s->conns[--s->nr_conns];
			drop_fd(tid, sid, cid, false);
			return done(c, 0, NULL);
		}
	}
	return done(c, -ENOENT, "no connection %u", cid);
}

void fake_set_pr(uint32_t tid, uint32_t lun, const struct kpr *pr)
{
	kpr_free(&f.pr);
	f.pr = *pr;
	f.pr.regs = calloc(pr->nr_regs + 1, sizeof(*pr->regs));
	memcpy(f.pr.regs, pr->regs, pr->nr_regs * sizeof(*pr->regs));
	f.pr_tid = tid;
	f.pr_lun = lun;
}

const struct kpr *fake_pr(void)
{
	return &f.pr;
}

static bool has_lun(uint32_t tid, uint32_t lun)
{
	struct ktarget *t = find_target(tid);
	size_t i;

	for (i = 0; t && i < t->nr_luns; i++)
		if (t->luns[i].conf.lun == lun)
			return true;
	return false;
}

int kernel_pr_get(uint32_t tid, uint32_t lun, struct kpr *pr)
{
	struct fake_call *c = record(F_PR_GET);
	int err = injected(F_PR_GET);

	c->tid = tid;
	c->lun.lun = lun;
	memset(pr, 0, sizeof(*pr));
	if (err)
		return done(c, err, NULL);
	if (!has_lun(tid, lun))
		return done(c, -ENOENT, "no such LUN");
	if (f.pr_tid == tid && f.pr_lun == lun) {
		*pr = f.pr;
		pr->regs = calloc(f.pr.nr_regs + 1, sizeof(*pr->regs));
		if (!pr->regs)
			return done(c, -ENOMEM, "oom");
		memcpy(pr->regs, f.pr.regs, f.pr.nr_regs * sizeof(*pr->regs));
	}
	return done(c, 0, NULL);
}

int kernel_lun_set(uint32_t tid, uint32_t lun, uint64_t blocks, bool force)
{
	struct fake_call *c = record(F_LUN_SET);
	int err = injected(F_LUN_SET);

	c->tid = tid;
	c->lun.lun = lun;
	c->lun.blocks = blocks;
	c->force = force;
	if (err)
		return done(c, err, NULL);
	if (!has_lun(tid, lun))
		return done(c, -ENOENT, "no such LUN");
	return done(c, 0, NULL);
}

int kernel_pr_clear(uint32_t tid, uint32_t lun, bool all)
{
	struct fake_call *c = record(F_PR_CLEAR);
	int err = injected(F_PR_CLEAR);
	size_t i;

	c->tid = tid;
	c->lun.lun = lun;
	c->pr_all = all;
	if (err)
		return done(c, err, NULL);
	if (!has_lun(tid, lun))
		return done(c, -ENOENT, "no such LUN");
	if (f.pr_tid == tid && f.pr_lun == lun) {
		f.pr.type = 0;
		f.pr.spc2 = false;
		for (i = 0; i < f.pr.nr_regs; i++)
			f.pr.regs[i].holder = false;
		if (all) {
			f.pr.nr_regs = 0;
			f.pr.generation++;
		}
	}
	return done(c, 0, NULL);
}

int kernel_tpg_set(uint32_t tid, uint16_t tag, uint32_t state, int remote)
{
	struct fake_call *c = record(F_TPG_SET);
	int err = injected(F_TPG_SET);
	struct ktarget *t;
	struct ktpg *g;

	c->tid = tid;
	c->tpgt = tag;
	c->alua_state = state;
	c->tpg_remote = remote;
	if (err)
		return done(c, err, NULL);
	t = find_target(tid);
	if (!t)
		return done(c, -ENOENT, "no target with this tid");
	g = find_tpg(t, tag);
	if (!g) {
		if (t->nr_tpgs == IET_TPGS_MAX)
			return done(c, -ENOSPC, "too many portal groups");
		g = &t->tpgs[t->nr_tpgs++];
		memset(g, 0, sizeof(*g));
		g->tag = tag;
		g->remote = remote == 1;
		g->state = g->remote ? IET_ALUA_STANDBY :
			   IET_ALUA_ACTIVE_OPTIMIZED;
	} else if (remote != TPG_KIND_KEEP && !!remote != g->remote) {
		if (g->sessions)
			return done(c, -EBUSY, "sessions use the portal group");
		g->remote = remote;
	}
	if (state != IET_ALUA_UNSPEC)
		g->state = state;
	return done(c, 0, NULL);
}

int kernel_tpg_del(uint32_t tid, uint16_t tag)
{
	struct fake_call *c = record(F_TPG_DEL);
	int err = injected(F_TPG_DEL);
	struct ktarget *t;
	struct ktpg *g;

	c->tid = tid;
	c->tpgt = tag;
	if (err)
		return done(c, err, NULL);
	t = find_target(tid);
	if (!t)
		return done(c, -ENOENT, "no target with this tid");
	g = find_tpg(t, tag);
	if (!g)
		return done(c, -ENOENT, "the target has no such portal group");
	if (g->sessions)
		return done(c, -EBUSY, "sessions use the portal group");
	*g = t->tpgs[--t->nr_tpgs];
	return done(c, 0, NULL);
}

void fake_logout_ignored(bool ignored)
{
	f.logout_ignored = ignored;
}

void fake_logout_held(bool held)
{
	f.logout_held = held;
}

/* The initiators of the scope log out, or are dropped: all sessions go. */
static void logout_scope_go(const struct logout_scope *sc)
{
	struct ktarget *t = find_target(sc->tid);
	size_t i = 0;

	while (t && i < t->nr_sessions) {
		if (logout_in_scope(sc, &t->sessions[i]))
			remove_session(t, &t->sessions[i]);
		else
			i++;
	}
}

void fake_logout_go(void)
{
	while (f.nr_doomed)
		logout_scope_go(&f.doomed[--f.nr_doomed]);
}

int kernel_logout_req(const struct logout_scope *sc, uint32_t wait)
{
	struct fake_call *c = record(F_LOGOUT_REQ);
	struct ktarget *t = find_target(sc->tid);
	int err = injected(F_LOGOUT_REQ);
	struct logout_scope *nd;
	size_t i, n = 0;

	c->tid = sc->tid;
	c->tpgt = sc->tpgt;
	c->sid = sc->sid;
	c->logout_cid = sc->cid;
	c->logout_wait = wait;
	if (err)
		return done(c, err, NULL);
	if (!t)
		return done(c, -ENOENT, "no target with this tid");
	for (i = 0; i < t->nr_sessions; i++)
		n += logout_in_scope(sc, &t->sessions[i]);
	if (!n)
		return done(c, -ENOENT, "no connection to ask");
	if (!f.logout_ignored && !f.logout_held) {
		logout_scope_go(sc);
		return done(c, 0, NULL);
	}
	nd = realloc(f.doomed, (f.nr_doomed + 1) * sizeof(*nd));
	if (!nd)
		return done(c, -ENOMEM, "oom");
	f.doomed = nd;
	f.doomed[f.nr_doomed++] = *sc;
	return done(c, 0, NULL);
}

static int dump_state(struct kstate *st)
{
	struct fake_call *c = record(F_DUMP);
	int err = injected(F_DUMP);
	size_t i, j;

	memset(st, 0, sizeof(*st));
	if (err)
		return done(c, err, NULL);
	if (!f.st.nr_targets)
		return done(c, 0, NULL);
	st->targets = calloc(f.st.nr_targets, sizeof(*st->targets));
	if (!st->targets)
		return done(c, -ENOMEM, "oom");
	st->nr_targets = f.st.nr_targets;
	for (i = 0; i < f.st.nr_targets; i++) {
		const struct ktarget *src = &f.st.targets[i];
		struct ktarget *dst = &st->targets[i];

		*dst = *src;
		dst->luns = NULL;
		dst->sessions = NULL;
		if (src->nr_luns) {
			dst->luns = malloc(src->nr_luns * sizeof(*dst->luns));
			memcpy(dst->luns, src->luns,
			       src->nr_luns * sizeof(*dst->luns));
		}
		if (src->nr_sessions) {
			dst->sessions = malloc(src->nr_sessions *
					       sizeof(*dst->sessions));
			memcpy(dst->sessions, src->sessions,
			       src->nr_sessions * sizeof(*dst->sessions));
			for (j = 0; j < src->nr_sessions; j++) {
				struct ksession *s = &dst->sessions[j];
				size_t n = s->nr_conns * sizeof(*s->conns);

				s->conns = n ? malloc(n) : NULL;
				if (n)
					memcpy(s->conns,
					       src->sessions[j].conns, n);
			}
		}
	}
	return done(c, 0, NULL);
}

void fake_set_closing(uint32_t tid, uint32_t n, bool stuck)
{
	struct ktarget *t = find_target(tid);

	if (t)
		t->luns_closing = n;
	f.closing_stuck = stuck;
}

int kernel_dump(struct kstate *st)
{
	int ret = dump_state(st);
	size_t i;

	/* Each dump finds one backing more closed, unless they are stuck. */
	for (i = 0; !ret && !f.closing_stuck && i < f.st.nr_targets; i++)
		if (f.st.targets[i].luns_closing)
			f.st.targets[i].luns_closing--;

	/* Past the deadline of an ignored request: dropped by the kernel. */
	while (!ret && f.nr_doomed && !f.logout_held)
		logout_scope_go(&f.doomed[--f.nr_doomed]);
	return ret;
}
