/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's side of ietadm: a root-only UNIX socket (SO_PEERCRED uid 0), the
 * request/response protocol of ctl_proto.h, and a table of operations.
 */
#ifndef IET_USR_CTL_H
#define IET_USR_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_proto.h"
#include "fdlimit.h"
#include "loop.h"
#include "runtime.h"
#include "text.h"

struct ctl_client;

/* ietadm clients served at once; more wait in the listen backlog. */
#define CTL_CLIENTS_MAX	16

struct ctl {
	struct watch w;
	struct loop *loop;
	struct runtime *rt;
	char path[108];
	struct ctl_client *clients;
	unsigned int nr_clients;
	struct spare spare;		/* for accept at EMFILE */
	bool paused;			/* no descriptors: not polled */
};

/* Make the socket's directory (0700) if it is missing. */
int ctl_prepare_dir(const char *path, char *err, size_t errlen);
/*
 * Create the socket (its directory 0700, the socket 0600). Refuses if
 * another ietd answers on it; removes a stale one.
 */
int ctl_open(struct ctl *c, struct loop *loop, struct runtime *rt,
	     const char *path, char *err, size_t errlen);
void ctl_close(struct ctl *c);
/*
 * Drop clients that have not finished their request in time; poll the
 * socket again if it ran out of descriptors without a spare (fdlimit.h).
 */
void ctl_tick(struct ctl *c, uint64_t now);
/*
 * Answer the requests that waited for initiators to log out, those whose
 * initiators are gone or whose time is up (each tick, and when the kernel
 * reports sessions closed).
 */
void ctl_poll(struct ctl *c, uint64_t now);

/*
 * Run one request to its end: output lines go to out, a failure returns a
 * negative errno with err saying why in one line (out may hold what was
 * done). One that waits for initiators to log out blocks for it: ietd's
 * clients are served without blocking (ctl_start() in ctl_ops.h).
 */
int ctl_handle(struct runtime *rt, const struct ctl_req *req,
	       struct textbuf *out, char *err, size_t errlen);

#endif
