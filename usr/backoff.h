/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CHAP responses found wrong, counted per source (source_key(): an IPv4
 * address, an IPv6 /64, a link-local address whole) and scope (a target,
 * or discovery): past BACKOFF_FREE of them in a scope, each makes the
 * source wait before ietd takes its next connection, twice as long each
 * time up to BACKOFF_MAX_MS, and while it has more than that it may have
 * one connection in login at a time, so that guesses cannot be made in
 * parallel either. Guessing a CHAP secret so takes years, not hours. A
 * login that authenticates in a scope forgets the source's failures of
 * that scope only; an hour without one forgets them too. Other sources
 * are not affected.
 */
#ifndef IET_USR_BACKOFF_H
#define IET_USR_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define BACKOFF_FREE		3	/* failures before any wait */
#define BACKOFF_FIRST_MS	1000
#define BACKOFF_MAX_MS		60000
#define BACKOFF_FORGET_MS	3600000	/* failures older than this go */

/* scope: the target's tid, 0 for discovery. */
void backoff_failed(const struct sockaddr_storage *src, uint32_t scope,
		    uint64_t now);
void backoff_passed(const struct sockaddr_storage *src, uint32_t scope,
		    uint64_t now);
/*
 * How long src must still wait (ms), 0 if it may try now, and its most
 * failures in one scope: one pass, made at every accept.
 */
uint64_t backoff_check(const struct sockaddr_storage *src, uint64_t now,
		       unsigned int *failures);
/* How long src must still wait (ms), 0 if it may try now. */
uint64_t backoff_wait(const struct sockaddr_storage *src, uint64_t now);
/* Its most failures in one scope (the log, and one login at a time). */
unsigned int backoff_failures(const struct sockaddr_storage *src,
			      uint64_t now);

#endif
