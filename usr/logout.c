// SPDX-License-Identifier: GPL-2.0
/*
 * Letting initiators go before their sessions are closed: each connection is
 * asked to log out (the kernel sends an Async Message, RFC 7143 11.9.1) and
 * given some seconds, so that a multipath initiator moves its I/O to another
 * path at once instead of timing out on one that vanished. The kernel drops
 * what has not logged out by the deadline; callers close whatever is left
 * as they did before.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "logout.h"
#include "loop.h"

/* The kernel looks at deadlines once a second and drops in a work item. */
#define SLACK_S		3

bool logout_in_scope(const struct logout_scope *sc, const struct ksession *s)
{
	size_t i;

	if ((sc->tpgt && s->tpgt != sc->tpgt) || (sc->sid && s->sid != sc->sid))
		return false;
	if (!sc->sid || sc->cid < 0)
		return true;
	for (i = 0; i < s->nr_conns; i++)
		if (s->conns[i].cid == sc->cid)
			return true;
	return false;
}

/* How many sessions of the scopes the kernel still has. */
static int remaining(const struct logout_scope *sc, size_t n)
{
	const struct ktarget *kt;
	struct kstate st;
	size_t i, j, k;
	int left = 0, ret;

	ret = kernel_dump(&st);
	if (ret)
		return ret;
	for (k = 0; k < st.nr_targets; k++) {
		kt = &st.targets[k];
		for (i = 0; i < n; i++) {
			if (sc[i].tid != kt->tid)
				continue;
			for (j = 0; j < kt->nr_sessions; j++)
				left += logout_in_scope(&sc[i], &kt->sessions[j]);
		}
	}
	kstate_free(&st);
	return left;
}

void logout_wait_free(struct logout_wait *lw)
{
	free(lw->sc);
	memset(lw, 0, sizeof(*lw));
}

int logout_ask(struct logout_wait *lw, struct logout_scope *sc, size_t n,
	       unsigned int wait)
{
	size_t i, asked = 0;
	int ret;

	memset(lw, 0, sizeof(*lw));
	for (i = 0; i < n; i++) {
		ret = kernel_logout_req(&sc[i], wait);
		if (ret == -ENOENT)	/* nobody there (any more) */
			continue;
		if (ret == -EOPNOTSUPP) {
			/* A module older than the request: nobody is asked. */
			log_info("the kernel module cannot ask initiators to log out: their sessions are closed");
			ret = -ENOENT;
			goto out;
		}
		if (ret)
			goto out;
		asked++;
	}
	if (!asked) {
		ret = -ENOENT;
		goto out;
	}
	lw->sc = sc;
	lw->n = n;
	lw->wait = wait;
	lw->end_ms = now_ms() + (uint64_t)(wait + SLACK_S) * 1000;
	return 0;
out:
	free(sc);
	return ret;
}

int logout_poll(struct logout_wait *lw, uint64_t now)
{
	int ret = remaining(lw->sc, lw->n);

	if (ret <= 0)
		return 0;
	if (now >= lw->end_ms) {
		log_warn("%d session%s still there %u s after being asked to log out",
			 ret, ret == 1 ? "" : "s", lw->wait);
		return 0;
	}
	return ret;
}
