/* SPDX-License-Identifier: GPL-2.0 */
/* Asking initiators to log out before their sessions close (logout.c). */
#ifndef IET_USR_LOGOUT_H
#define IET_USR_LOGOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/* What ietadm's --op delete gives initiators when it is not told. */
#define LOGOUT_WAIT_DEFAULT	10
/* ... and the most it may be told: ietadm waits 120 s for an answer. */
#define LOGOUT_WAIT_MAX		60

/* Whether a session of the scope's target is in it (tid not compared). */
bool logout_in_scope(const struct logout_scope *sc, const struct ksession *s);

/* Initiators asked to log out, and how long they have. */
struct logout_wait {
	struct logout_scope *sc;	/* owned */
	size_t n;
	unsigned int wait;		/* seconds they were given */
	uint64_t end_ms;		/* now_ms() past which no one waits */
};

/*
 * Ask the initiators of each of the n scopes (lw takes sc, malloc'ed) to
 * log out within wait seconds. Returns 0 when some were asked (then
 * logout_poll() until they are gone), -ENOENT when nobody was (none of
 * the scopes had a connection, or the module cannot ask), or another
 * -errno; lw holds nothing but on 0.
 */
int logout_ask(struct logout_wait *lw, struct logout_scope *sc, size_t n,
	       unsigned int wait);
/*
 * How many sessions of the scopes (or connections a scope names) are
 * still there, or 0 once all are gone (by their Logout, or dropped by the
 * kernel past the deadline) or the deadline is past with some left
 * (logged): the caller closes what remains then. A failing dump ends the
 * wait too (0). Never blocks longer than a dump of the kernel's state.
 */
int logout_poll(struct logout_wait *lw, uint64_t now);
void logout_wait_free(struct logout_wait *lw);

#endif
