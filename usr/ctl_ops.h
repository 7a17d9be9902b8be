/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietadm's operations, inside ietd: one function per --op, each taking a
 * parsed request and giving output lines or one line saying why it failed.
 * op_show.c shows, op_admin.c changes targets, LUNs, accounts and
 * connections, op_config.c reloads and saves; ctl_ops.c dispatches.
 */
#ifndef IET_USR_CTL_OPS_H
#define IET_USR_CTL_OPS_H

#include <stddef.h>

#include "ctl.h"
#include "kernel.h"
#include "logout.h"
#include "runtime.h"
#include "text.h"

typedef int op_fn(struct runtime *rt, const struct ctl_req *req,
		  struct textbuf *out, char *err, size_t errlen);

/*
 * An operation that gives initiators time to log out does not wait for
 * them: it asks, sets rt->later to what remains to be done once they are
 * gone and returns -EINPROGRESS. ietd goes on serving logins, discovery
 * and other ietadm requests meanwhile, and answers this one when
 * finish() has run (ctl.c).
 */
struct ctl_later {
	struct logout_wait lw;
	/*
	 * > 0 while it waits, 0 once it may finish; without one, it waits
	 * for the initiators of lw to log out.
	 */
	int (*poll)(struct ctl_later *l, uint64_t now);
	uint64_t end_ms;		/* poll's deadline */
	int (*finish)(struct runtime *rt, const struct ctl_later *l,
		      struct textbuf *out, char *err, size_t errlen);
	uint32_t tid;			/* 0: every target */
	uint64_t sid;			/* of a connection or session */
	int cid;			/* -1: the whole session */
};

/*
 * Start the request: like ctl_handle(), but -EINPROGRESS with *later set
 * when it waits for initiators (finish it with ctl_finish() once
 * logout_poll() says so).
 */
int ctl_start(struct runtime *rt, const struct ctl_req *req,
	      struct textbuf *out, struct ctl_later **later, char *err,
	      size_t errlen);
/* > 0 while later waits (never blocks longer than a kernel dump). */
int ctl_later_poll(struct ctl_later *later, uint64_t now);
/* Do what remains and free later; the request's result. */
int ctl_finish(struct runtime *rt, struct ctl_later *later,
	       struct textbuf *out, char *err, size_t errlen);
/* A request that has not been finished (ietd stopping): only freed. */
void ctl_later_free(struct ctl_later *later);

op_fn op_show;
op_fn op_new;
op_fn op_delete;
op_fn op_update;
op_fn op_reload;
op_fn op_save;

/* One line of output, newline added. */
int out_line(struct textbuf *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* err = "what: strerror: the kernel's message"; returns ret. */
int kernel_failed(int ret, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * The target a request names, by --tid or by name; NULL with err set
 * ("--op X needs --tid", "no target with tid N").
 */
struct target_conf *req_target(struct runtime *rt, const struct ctl_req *req,
			       char *err, size_t errlen);
int dump_kernel(struct kstate *st, char *err, size_t errlen);
const struct ktarget *kstate_target(const struct kstate *st, uint32_t tid);
/*
 * Split "K=V,K=V" of --params, calling fn for each pair with the key and
 * value. An item without '=' continues the previous value
 * ("HeaderDigest=None,CRC32C"); empty items are skipped (scripts leave a
 * trailing comma). Stops at the first error fn returns.
 */
int params_each(const char *params,
		int (*fn)(void *arg, const char *key, const char *value),
		void *arg, char *err, size_t errlen);
/* Whether --params names one of keys (NULL-ended; any case). */
bool params_have(const char *params, const char *const *keys);

#endif
