/* SPDX-License-Identifier: GPL-2.0 */
/* Asking initiators to log out before their sessions close (logout.c). */
#ifndef IET_USR_LOGOUT_H
#define IET_USR_LOGOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"

/* What ietadm's --op delete gives initiators when it is not told. */
#define LOGOUT_WAIT_DEFAULT	10
/* ... and the most it may be told: ietadm waits 120 s for an answer. */
#define LOGOUT_WAIT_MAX		60

/* Whether a session of the scope's target is in it (tid not compared). */
bool logout_in_scope(const struct logout_scope *sc, const struct ksession *s);

/*
 * Ask the initiators of each of the n scopes to log out within wait
 * seconds, and wait until their sessions (or the connection a scope names)
 * are gone: by their Logout, or dropped by the kernel past the deadline.
 * Returns how many are still there (0: all gone), -ENOENT when nobody was
 * asked (none of the scopes had a connection, or the module cannot ask),
 * or another -errno.
 */
int logout_and_wait(const struct logout_scope *sc, size_t n,
		    unsigned int wait);

#endif
