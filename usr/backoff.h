/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Failed authentications, counted per source (an IPv4 address, an IPv6
 * /64): past BACKOFF_FREE of them, each makes the source wait before ietd
 * takes its next connection, twice as long each time up to BACKOFF_MAX_MS,
 * so that guessing a CHAP secret takes years, not hours. A login that
 * authenticates forgets its source's failures; so does an hour without
 * one. Other sources are not affected.
 */
#ifndef IET_USR_BACKOFF_H
#define IET_USR_BACKOFF_H

#include <stdint.h>
#include <sys/socket.h>

#define BACKOFF_FREE		3	/* failures before any wait */
#define BACKOFF_FIRST_MS	1000
#define BACKOFF_MAX_MS		60000
#define BACKOFF_FORGET_MS	3600000	/* failures older than this go */

void backoff_failed(const struct sockaddr_storage *src, uint64_t now);
void backoff_passed(const struct sockaddr_storage *src, uint64_t now);
/* How long src must still wait (ms), 0 if it may try now. */
uint64_t backoff_wait(const struct sockaddr_storage *src, uint64_t now);
/* Failures src has to its name (tests, the log). */
unsigned int backoff_failures(const struct sockaddr_storage *src,
			      uint64_t now);

#endif
