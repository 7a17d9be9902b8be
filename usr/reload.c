// SPDX-License-Identifier: GPL-2.0
/* Start-up reconciliation and reloads: plan, apply, remember. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"
#include "plan.h"
#include "portal.h"
#include "runtime.h"

void runtime_persist(struct runtime *rt)
{
	char err[512];
	int ret;

	ret = state_save(&rt->state, &rt->cfg, err, sizeof(err));
	if (ret == STATE_UNSYNCED)
		log_err("state file written, but the directory sync failed: %s; after a crash a restarted ietd might find the previous state",
			err);
	else if (ret)
		log_err("state file not written: %s; a restarted ietd would not know what ietadm changed",
			err);
}

/* Each line of the plan in the log. */
static void log_plan(const struct plan *p, const char *what)
{
	struct textbuf tb;
	char *line, *save = NULL;

	textbuf_init(&tb, 1u << 20);
	plan_format(p, &tb);
	if (textbuf_append(&tb, "", 1) == 0) {
		for (line = strtok_r(tb.buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			log_msg(strncmp(line, "refused:", 8) ? LOG_INFO :
				LOG_WARNING, "%s: %s", what, line);
	}
	textbuf_free(&tb);
}

/*
 * Take the plan's result as the running model. A target being deleted
 * (its initiators asked to log out, ctl_ops.h) stays marked: a reload
 * meanwhile must not let them log in again.
 */
static void adopt_result(struct runtime *rt, struct plan *p)
{
	size_t i;

	for (i = 0; i < p->result.nr_targets; i++) {
		struct target_conf *t = &p->result.targets[i];
		const struct target_conf *old = config_target_by_tid(&rt->cfg,
								     t->tid);

		if (old && old->deleting && !strcasecmp(old->name, t->name))
			t->deleting = true;
	}
	config_free(&rt->cfg);
	rt->cfg = p->result;
	memset(&p->result, 0, sizeof(p->result));
}

int runtime_resume(const struct config *prev, struct config *file)
{
	struct auth auth;
	size_t i = 0;

	while (i < file->nr_targets) {
		struct target_conf *t = &file->targets[i];
		const struct target_conf *ran = config_target_by_name(prev,
								      t->name);
		struct target_conf copy;

		if (!ran || ran->origin == ORIGIN_ADMIN) {
			/*
			 * Deleted with ietadm: not brought back by a restart.
			 * Made again with ietadm: ietadm's, as it ran.
			 */
			config_del_target(file, t->tid);
			continue;
		}
		if (ran->origin == ORIGIN_FILE) {
			if (target_conf_copy(&copy, ran))
				return -ENOMEM;
			copy.tid = t->tid;
			target_conf_free(t);
			*t = copy;
		}
		i++;
	}
	if (auth_copy(&auth, &prev->auth))
		return -ENOMEM;
	auth_free(&file->auth);
	file->auth = auth;
	return 0;
}

/*
 * Whether the kernel still runs a target of the state: ietd restarted,
 * not the module (whose targets went with it, and the state's meaning).
 */
static bool kernel_runs_state(const struct kstate *st,
			      const struct config *prev)
{
	size_t i, j;

	for (i = 0; i < st->nr_targets; i++)
		for (j = 0; j < prev->nr_targets; j++)
			if (!strcasecmp(st->targets[i].name,
					prev->targets[j].name))
				return true;
	return false;
}

int runtime_start(struct runtime *rt, struct config *next,
		  const struct kstate *st, char *err, size_t errlen)
{
	char digest[sizeof(next->digest)];
	struct config prev;
	struct plan p;
	char why[512];
	bool have_prev;
	int ret;

	ret = state_load(&rt->state, &prev, why, sizeof(why));
	have_prev = ret == 0;
	if (ret && ret != -ENOENT)
		log_warn("%s; the kernel's targets are taken as they run", why);
	if (have_prev && prev.digest[0] && !strcmp(prev.digest, next->digest) &&
	    kernel_runs_state(st, &prev)) {
		log_info("%s is as it was when the state was written: resuming what ran, with what ietadm changed",
			 rt->config_path);
		ret = runtime_resume(&prev, next);
		if (ret) {
			config_free(&prev);
			snprintf(err, errlen, "out of memory");
			return ret;
		}
	} else if (have_prev && prev.digest[0] &&
		   strcmp(prev.digest, next->digest)) {
		log_info("%s changed since the state was written: applied as a reload would be",
			 rt->config_path);
	}
	memcpy(digest, next->digest, sizeof(digest));
	ret = plan_make(st, have_prev ? &prev : NULL, next, &p, err, errlen);
	if (have_prev)
		config_free(&prev);
	if (ret)
		return ret;
	ret = plan_apply(&p, err, errlen);
	if (ret) {
		plan_free(&p);
		return ret;
	}
	if (p.nr || p.nr_notes || p.nr_refused)
		log_plan(&p, "start");
	adopt_result(rt, &p);
	memcpy(rt->cfg.digest, digest, sizeof(digest));
	plan_free(&p);
	config_free(next);
	runtime_persist(rt);
	return 0;
}

int runtime_reload(struct runtime *rt, bool dry_run, struct textbuf *out,
		   char *err, size_t errlen)
{
	char digest[sizeof(rt->cfg.digest)];
	struct config next;
	struct kstate st;
	struct plan p;
	int ret;

	ret = config_load(rt->config_path, &next, err, errlen);
	if (ret)
		return ret;
	config_resolve_ports(&next, rt->port ? rt->port : ISCSI_PORT);
	/* The listening sockets are ietd's start's: so are the groups. */
	if (!config_same_groups(&next, &rt->cfg)) {
		snprintf(err, errlen,
			 "%s: the PortalGroup lines changed: ietd listens on the portals it started with; restart it to change them (sessions stay in the kernel)",
			 rt->config_path);
		config_free(&next);
		return -EINVAL;
	}
	ret = kernel_dump(&st);
	if (ret) {
		snprintf(err, errlen, "reading the kernel's state: %s%s%s",
			 strerror(-ret), *kernel_errmsg() ? ": " : "",
			 kernel_errmsg());
		config_free(&next);
		return ret;
	}
	ret = plan_make(&st, &rt->cfg, &next, &p, err, errlen);
	kstate_free(&st);
	memcpy(digest, next.digest, sizeof(digest));
	config_free(&next);
	if (ret)
		return ret;
	if (!dry_run) {
		ret = plan_apply(&p, err, errlen);
		if (ret) {
			log_err("reload of %s failed: %s", rt->config_path, err);
			plan_free(&p);
			return ret;
		}
		log_plan(&p, "reload");
		adopt_result(rt, &p);
		memcpy(rt->cfg.digest, digest, sizeof(digest));
		runtime_persist(rt);
	}
	plan_format(&p, out);
	/*
	 * What sessions hold is kept until they end, and the next reload
	 * does it: a reload that did all it could has not failed (systemctl
	 * reload would say so).
	 */
	if (!dry_run && p.nr_refused) {
		char line[160];
		int n = snprintf(line, sizeof(line),
				 "%zu change%s deferred while sessions use %s (the rest applied): reload again once they end\n",
				 p.nr_refused, p.nr_refused == 1 ? "" : "s",
				 p.nr_refused == 1 ? "it" : "them");

		textbuf_append(out, line, n);
	}
	plan_free(&p);
	return ret;
}
