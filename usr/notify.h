/* SPDX-License-Identifier: GPL-2.0 */
/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd: one
 * datagram to $NOTIFY_SOCKET. Type=notify units learn from READY=1 that
 * ietd listens; nothing happens when the variable is not set.
 */
#ifndef IET_USR_NOTIFY_H
#define IET_USR_NOTIFY_H

/* "READY=1", "RELOADING=1", "STOPPING=1", "STATUS=..."; 0 or -errno. */
int notify(const char *msg);

#endif
