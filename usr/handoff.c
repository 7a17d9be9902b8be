// SPDX-License-Identifier: GPL-2.0
/* Session reinstatement, creation and connection hand-off to the kernel. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "handoff.h"
#include "kernel.h"
#include "log.h"

static void kerr(char *err, size_t errlen, const char *what, int ret)
{
	const char *km = kernel_errmsg();

	snprintf(err, errlen, "%s: %s%s%s", what, strerror(-ret),
		 km && *km ? ": " : "", km ? km : "");
}

static int new_session(struct registry *reg, const struct login_outcome *o,
		       int fd, char *err, size_t errlen)
{
	struct reg_session *s = o->reserved, *old;
	char what[128];
	int ret;

	/*
	 * RFC 7143 6.3.5: a leading login with the ISID of a live session
	 * of this initiator reinstates it: the old one goes first.
	 */
	old = registry_find_isid(reg, o->tid, o->tpgt, o->initiator,
				 o->sid >> 16);
	if (old) {
		ret = kernel_session_del(o->tid, old->sid);
		if (ret && ret != -ENOENT) {
			snprintf(what, sizeof(what),
				 "reinstatement: deleting session %llu of tid %u",
				 (unsigned long long)old->sid, o->tid);
			kerr(err, errlen, what, ret);
			registry_drop(reg, s);
			return ret;
		}
		log_info("tid %u: session %llu of %s reinstated as %llu",
			 o->tid, (unsigned long long)old->sid, o->initiator,
			 (unsigned long long)o->sid);
		registry_drop(reg, old);
	}
	ret = kernel_session_new(o->tid, o->sid, o->initiator, o->exp_cmdsn,
				 o->tpgt, o->keys);
	if (ret) {
		snprintf(what, sizeof(what), "creating session %llu of tid %u",
			 (unsigned long long)o->sid, o->tid);
		kerr(err, errlen, what, ret);
		registry_drop(reg, s);
		return ret;
	}
	registry_commit(s, o->keys);
	ret = kernel_conn_new(o->tid, o->sid, o->cid, fd, o->statsn, o->keys);
	if (ret) {
		snprintf(what, sizeof(what),
			 "handing connection %u of session %llu to the kernel",
			 o->cid, (unsigned long long)o->sid);
		kerr(err, errlen, what, ret);
		/* A session without its connection would only linger. */
		kernel_session_del(o->tid, o->sid);
		registry_drop(reg, s);
		return ret;
	}
	if (registry_add_cid(s, o->cid))
		log_err("out of memory recording connection %u", o->cid);
	return 0;
}

static int add_conn(struct registry *reg, const struct login_outcome *o,
		    int fd, char *err, size_t errlen)
{
	struct reg_session *s;
	char what[128];
	int ret;

	/* The CID is counted as a connection of the session from here on. */
	if (o->cid_reserved)
		registry_release_cid(reg, o->tid, o->sid, o->cid);
	s = registry_find(reg, o->tid, o->sid);
	if (!s || s->pending) {
		snprintf(err, errlen, "session %llu of tid %u ended during the login",
			 (unsigned long long)o->sid, o->tid);
		return -ENOENT;
	}
	if (registry_has_cid(s, o->cid)) {
		/* Connection reinstatement (RFC 7143 6.3.4): same CID again. */
		ret = kernel_conn_del(o->tid, o->sid, o->cid);
		if (ret && ret != -ENOENT) {
			snprintf(what, sizeof(what),
				 "reinstating connection %u of session %llu",
				 o->cid, (unsigned long long)o->sid);
			kerr(err, errlen, what, ret);
			return ret;
		}
		registry_del_cid(s, o->cid);
	}
	ret = kernel_conn_new(o->tid, o->sid, o->cid, fd, o->statsn, o->keys);
	if (ret) {
		snprintf(what, sizeof(what),
			 "adding connection %u to session %llu",
			 o->cid, (unsigned long long)o->sid);
		kerr(err, errlen, what, ret);
		return ret;
	}
	if (registry_add_cid(s, o->cid))
		log_err("out of memory recording connection %u", o->cid);
	return 0;
}

int handoff(struct registry *reg, const struct login_outcome *o, int fd,
	    char *err, size_t errlen)
{
	if (o->leading)
		return new_session(reg, o, fd, err, errlen);
	return add_conn(reg, o, fd, err, errlen);
}
