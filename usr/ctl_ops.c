// SPDX-License-Identifier: GPL-2.0
/* The operation table of ietadm's requests and what the operations share. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ctl_ops.h"

int out_line(struct textbuf *out, const char *fmt, ...)
{
	char buf[IET_PATH_MAX + 512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return -ENOSPC;
	buf[n++] = '\n';
	return textbuf_append(out, buf, n);
}

int kernel_failed(int ret, char *err, size_t errlen, const char *fmt, ...)
{
	const char *km = kernel_errmsg();
	char what[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: %s%s%s", what, strerror(-ret),
		 *km ? ": " : "", km);
	return ret;
}

struct target_conf *req_target(struct runtime *rt, const struct ctl_req *req,
			       char *err, size_t errlen)
{
	struct target_conf *t;

	if (req->fields & CTL_F_TARGET) {
		t = config_target_by_name(&rt->cfg, req->target);
		if (!t)
			snprintf(err, errlen, "no target named %s", req->target);
		return t;
	}
	if (!(req->fields & CTL_F_TID)) {
		snprintf(err, errlen, "--op %s needs --tid (a number or a target name)",
			 req->op);
		return NULL;
	}
	t = config_target_by_tid(&rt->cfg, req->tid);
	if (!t)
		snprintf(err, errlen, "no target with tid %u", req->tid);
	return t;
}

int dump_kernel(struct kstate *st, char *err, size_t errlen)
{
	int ret = kernel_dump(st);

	if (ret)
		kernel_failed(ret, err, errlen, "reading the kernel's state");
	return ret;
}

const struct ktarget *kstate_target(const struct kstate *st, uint32_t tid)
{
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid == tid)
			return &st->targets[i];
	return NULL;
}

int params_each(const char *params,
		int (*fn)(void *arg, const char *key, const char *value),
		void *arg, char *err, size_t errlen)
{
	char *copy = strdup(params), *item, *save = NULL;
	char key[64], value[CTL_PARAMS_MAX];
	bool have = false;
	int ret = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (item = strtok_r(copy, ",", &save); item && !ret;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq) {
			if (!have) {
				snprintf(err, errlen,
					 "--params: \"%.64s\" is not Key=Value", item);
				ret = -EINVAL;
				break;
			}
			/* "HeaderDigest=None,CRC32C": a list value. */
			if (strlen(value) + strlen(item) + 2 > sizeof(value)) {
				snprintf(err, errlen, "--params: value too long");
				ret = -EINVAL;
				break;
			}
			strcat(value, ",");
			strcat(value, item);
			continue;
		}
		if (have)
			ret = fn(arg, key, value);
		if (ret)
			break;
		*eq = '\0';
		if (!*item || strlen(item) >= sizeof(key)) {
			snprintf(err, errlen, "--params: bad key \"%.64s\"", item);
			ret = -EINVAL;
			break;
		}
		strcpy(key, item);
		snprintf(value, sizeof(value), "%s", eq + 1);
		have = true;
	}
	if (!ret && have)
		ret = fn(arg, key, value);
	wipe(copy, strlen(params));
	wipe(value, sizeof(value));
	free(copy);
	return ret;
}

struct key_search {
	const char *const *keys;
	bool found;
};

static int find_key(void *arg, const char *key, const char *value)
{
	struct key_search *ks = arg;
	const char *const *k;

	(void)value;
	for (k = ks->keys; *k; k++)
		if (!strcasecmp(key, *k))
			ks->found = true;
	return 0;
}

bool params_have(const char *params, const char *const *keys)
{
	struct key_search ks = { .keys = keys };
	char err[8];

	params_each(params, find_key, &ks, err, sizeof(err));
	return ks.found;
}

static const struct {
	const char *name;
	op_fn *fn;
} ops[] = {
	{ "show", op_show },
	{ "new", op_new },
	{ "delete", op_delete },
	{ "update", op_update },
	{ "reload", op_reload },
	{ "save", op_save },
};

static int result(int ret, struct textbuf *out, char *err, size_t errlen)
{
	if (!ret && out->overflow) {
		snprintf(err, errlen, "output too long");
		ret = -ENOSPC;
	}
	return ret;
}

int ctl_start(struct runtime *rt, const struct ctl_req *req,
	      struct textbuf *out, struct ctl_later **later, char *err,
	      size_t errlen)
{
	size_t i;
	int ret;

	*later = NULL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(ops[i].name, req->op))
			continue;
		rt->later = NULL;
		ret = ops[i].fn(rt, req, out, err, errlen);
		if (ret == -EINPROGRESS) {
			*later = rt->later;
			rt->later = NULL;
			return ret;
		}
		return result(ret, out, err, errlen);
	}
	snprintf(err, errlen,
		 "unknown op \"%s\" (new, delete, update, show, reload, save)",
		 req->op);
	return -EINVAL;
}

int ctl_later_poll(struct ctl_later *later, uint64_t now)
{
	return later->poll ? later->poll(later, now) :
	       logout_poll(&later->lw, now);
}

void ctl_later_free(struct ctl_later *later)
{
	if (!later)
		return;
	logout_wait_free(&later->lw);
	free(later);
}

int ctl_finish(struct runtime *rt, struct ctl_later *later,
	       struct textbuf *out, char *err, size_t errlen)
{
	int ret = later->finish(rt, later, out, err, errlen);

	ctl_later_free(later);
	return result(ret, out, err, errlen);
}

/* Waiting where nothing else is served: tests, and nothing else. */
int ctl_handle(struct runtime *rt, const struct ctl_req *req,
	       struct textbuf *out, char *err, size_t errlen)
{
	const struct timespec nap = { 0, 100 * 1000 * 1000 };
	struct ctl_later *later;
	int ret = ctl_start(rt, req, out, &later, err, errlen);

	if (ret != -EINPROGRESS)
		return ret;
	while (ctl_later_poll(later, now_ms()) > 0)
		nanosleep(&nap, NULL);
	return ctl_finish(rt, later, out, err, errlen);
}
