/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's memory across its own restarts. The kernel keeps targets, LUNs
 * and sessions when ietd exits (even by kill -9), but not what only ietd
 * knows: which targets ietd.conf owns, and the CHAP accounts, redirects,
 * MaxSessions and aliases, whether configured or set with ietadm. ietd
 * writes its running model here after every change, in ietd.conf syntax
 * with each target's Origin, and reads it back at start.
 *
 * The file sits next to the ietadm socket (default /run/iet/ietd.state):
 * root-only, and gone at reboot together with the kernel's state. It is
 * opened before ietd drops privileges and rewritten in place through that
 * descriptor; a last line marks it complete, so a write cut short is seen
 * and ignored.
 */
#ifndef IET_USR_STATE_H
#define IET_USR_STATE_H

#include <stddef.h>

#include "model.h"

#define STATE_NAME	"ietd.state"
#define STATE_END	"# end of ietd state\n"

struct state {
	int fd;
	char path[256];
};

/* Open (creating, mode 0600) the file; -1 descriptor means "no file". */
int state_open(struct state *s, const char *path, char *err, size_t errlen);
void state_close(struct state *s);
/*
 * The model the file holds into cfg: -ENOENT when it is empty (never
 * written), -EINVAL when incomplete or malformed (err says why).
 */
int state_load(struct state *s, struct config *cfg, char *err,
	       size_t errlen);
int state_save(struct state *s, const struct config *cfg, char *err,
	       size_t errlen);

#endif
