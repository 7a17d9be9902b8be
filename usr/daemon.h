/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Process set-up of ietd: going to the background with the start-up
 * result reported to the parent, a pid file, and dropping root while
 * keeping CAP_NET_ADMIN, which every netlink request needs.
 */
#ifndef IET_USR_DAEMON_H
#define IET_USR_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Fork; the parent waits and exits with the child's start-up status. The
 * child gets a descriptor for daemon_ready() (or -1 on failure).
 */
int daemon_start(void);
/* Tell the parent how start-up went; on success detach stdio. */
void daemon_ready(int fd, int status);

int pidfile_write(const char *path, char *err, size_t errlen);

/* Resolve a user or group given by name or number. */
int lookup_uid(const char *s, uid_t *uid, gid_t *primary_gid);
int lookup_gid(const char *s, gid_t *gid);

/* setgid/setuid keeping exactly CAP_NET_ADMIN; err says what failed. */
int drop_privileges(bool set_uid, uid_t uid, bool set_gid, gid_t gid,
		    char *err, size_t errlen);
/*
 * As root, once the listening sockets are bound: keep of the capabilities
 * only CAP_NET_ADMIN (the kernel's netlink family) and CAP_DAC_OVERRIDE
 * (the kernel opens LUN files with ietd's credentials, whoever owns
 * them), in the bounding set too where ietd may lower it, and no new
 * privileges ever: what a peer's input could make ietd do shrinks to what
 * the hand-off needs. Returns what is kept in *kept.
 */
int keep_runtime_caps(uint64_t *kept, char *err, size_t errlen);

#endif
