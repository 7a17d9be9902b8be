/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What peers make ietd say (refused logins, timeouts, protocol errors),
 * limited per source: one flooding address, or IPv6 /64, is held to a few
 * lines a second and cannot hide the others' refusals. All sources
 * together are held to a larger rate, so that many cannot fill the
 * journal either. What is held back is counted, and the count logged
 * once its second is over.
 */
#ifndef IET_USR_PEERLOG_H
#define IET_USR_PEERLOG_H

#include <sys/socket.h>

#include "log.h"

#define PEERLOG_SOURCE_BURST	5	/* lines a second of one source */
#define PEERLOG_ALL_BURST	100	/* of all sources together */

void peer_log(const struct sockaddr_storage *src, int prio, const char *fmt,
	      ...) __attribute__((format(printf, 3, 4)));
/* Log the counts of seconds that are over (each tick of the loop). */
void peer_log_tick(void);

#endif
