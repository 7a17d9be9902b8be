// SPDX-License-Identifier: GPL-2.0
/* Start-up reconciliation of ietd.conf with the kernel's state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "reconcile.h"

struct undo {
	uint32_t tid;
	uint32_t lun;
	bool is_lun;
};

static const struct ktarget *ktarget_by_tid(const struct kstate *st,
					    uint32_t tid)
{
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid == tid)
			return &st->targets[i];
	return NULL;
}

static const struct klun *klun_find(const struct ktarget *kt, uint32_t lun)
{
	size_t i;

	for (i = 0; kt && i < kt->nr_luns; i++)
		if (kt->luns[i].conf.lun == lun)
			return &kt->luns[i];
	return NULL;
}

static int conflicts(const struct config *cfg, const struct kstate *st,
		     char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < cfg->nr_targets; i++) {
		const struct target_conf *t = &cfg->targets[i];

		for (j = 0; j < st->nr_targets; j++) {
			const struct ktarget *kt = &st->targets[j];

			if (kt->tid == t->tid && strcasecmp(kt->name, t->name)) {
				snprintf(err, errlen,
					 "the kernel has tid %u as %s, the configuration (line %u) as %s; delete it or fix the configuration",
					 kt->tid, kt->name, t->line, t->name);
				return -EEXIST;
			}
			if (kt->tid != t->tid && !strcasecmp(kt->name, t->name)) {
				snprintf(err, errlen,
					 "the kernel has %s as tid %u, the configuration (line %u) as tid %u",
					 t->name, kt->tid, t->line, t->tid);
				return -EEXIST;
			}
		}
	}
	return 0;
}

static void kerr(char *err, size_t errlen, const char *what, int ret)
{
	snprintf(err, errlen, "%s: %s%s%s", what, strerror(-ret),
		 *kernel_errmsg() ? ": " : "", kernel_errmsg());
}

static void roll_back(struct undo *u, size_t n)
{
	while (n--) {
		if (u[n].is_lun)
			kernel_lun_del(u[n].tid, u[n].lun);
		else
			kernel_target_del(u[n].tid);
	}
}

static bool same_lun(const struct lun_conf *a, const struct lun_conf *b)
{
	return a->type == b->type && a->iomode == b->iomode &&
	       !strcmp(a->path, b->path);
}

/* Make the kernel-only targets part of what ietd serves. */
static int adopt(struct config *cfg, const struct kstate *st)
{
	size_t i;

	for (i = 0; i < st->nr_targets; i++) {
		const struct ktarget *kt = &st->targets[i];
		struct target_conf *nt, *t;
		size_t l;

		if (config_target_by_tid(cfg, kt->tid))
			continue;
		nt = realloc(cfg->targets, (cfg->nr_targets + 1) * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		cfg->targets = nt;
		t = &cfg->targets[cfg->nr_targets];
		target_conf_defaults(t);
		t->tid = kt->tid;
		snprintf(t->name, sizeof(t->name), "%s", kt->name);
		memcpy(t->tparams, kt->tparams, sizeof(t->tparams));
		memcpy(t->keys, kt->keys, sizeof(t->keys));
		if (kt->nr_luns) {
			t->luns = calloc(kt->nr_luns, sizeof(*t->luns));
			if (!t->luns)
				return -ENOMEM;
			for (l = 0; l < kt->nr_luns; l++)
				t->luns[l] = kt->luns[l].conf;
			t->nr_luns = kt->nr_luns;
		}
		cfg->nr_targets++;
		log_info("tid %u %s is in the kernel but not in the configuration: served as it is",
			 kt->tid, kt->name);
	}
	return 0;
}

int reconcile(struct config *cfg, const struct kstate *st, char *err,
	      size_t errlen)
{
	struct undo *undo;
	size_t nundo = 0, total = 0, i, l, cfg_targets = cfg->nr_targets;
	char what[IET_NAME_MAX + IET_PATH_MAX + 64];
	int ret;

	ret = conflicts(cfg, st, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < cfg->nr_targets; i++)
		total += 1 + cfg->targets[i].nr_luns;
	undo = calloc(total ? total : 1, sizeof(*undo));
	if (!undo) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < cfg_targets; i++) {
		struct target_conf *t = &cfg->targets[i];
		const struct ktarget *kt = ktarget_by_tid(st, t->tid);

		if (!kt) {
			uint32_t tid = t->tid;

			ret = kernel_target_new(&tid, t->name, t->tparams,
						t->keys);
			if (!ret && tid != t->tid) {
				kernel_target_del(tid);
				ret = -EEXIST;
			}
			if (ret) {
				snprintf(what, sizeof(what),
					 "creating target tid %u %s", t->tid,
					 t->name);
				kerr(err, errlen, what, ret);
				goto fail;
			}
			undo[nundo++] = (struct undo){ .tid = t->tid };
		} else if (memcmp(kt->tparams, t->tparams, sizeof(t->tparams)) ||
			   memcmp(kt->keys, t->keys, sizeof(t->keys))) {
			log_warn("tid %u %s: the kernel's parameters differ from the configuration; kept the kernel's",
				 t->tid, t->name);
		}
		for (l = 0; l < t->nr_luns; l++) {
			struct lun_conf *lun = &t->luns[l];
			const struct klun *kl = klun_find(kt, lun->lun);

			lun_conf_derive_ids(lun, t->name);
			if (kl) {
				if (!same_lun(&kl->conf, lun))
					log_warn("tid %u LUN %u: the kernel's LUN differs from the configuration (line %u); kept the kernel's",
						 t->tid, lun->lun, lun->line);
				continue;
			}
			ret = kernel_lun_new(t->tid, lun);
			if (ret) {
				snprintf(what, sizeof(what),
					 "tid %u LUN %u (%s, line %u)", t->tid,
					 lun->lun,
					 lun->type == IET_LUN_NULLIO ?
					 "nullio" : lun->path, lun->line);
				kerr(err, errlen, what, ret);
				goto fail;
			}
			undo[nundo++] = (struct undo){
				.tid = t->tid, .lun = lun->lun, .is_lun = true,
			};
		}
	}
	ret = adopt(cfg, st);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	free(undo);
	return 0;
fail:
	roll_back(undo, nundo);
	free(undo);
	return ret;
}
