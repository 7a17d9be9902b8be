/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connections from accept to hand-off: read exactly one PDU at a time
 * (never a byte of the next one, which may belong to the kernel), feed it
 * to the login or discovery state machine, write the answer, time out
 * stalled logins, and hand finished normal logins to the kernel.
 */
#ifndef IET_USR_CONN_H
#define IET_USR_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "model.h"
#include "registry.h"

struct conn;

struct server {
	struct loop *loop;
	struct config *cfg;
	struct registry *reg;
	unsigned int login_timeout_ms;	/* whole login, accept to hand-off */
	unsigned int idle_timeout_ms;	/* a discovery session between PDUs */
	unsigned int max_conns;		/* connections ietd holds at once */
	const char *access_dirs;	/* access files (acl.h); NULL: none */
	uint32_t statsn_seed;		/* first StatSN of the next connection */
	struct conn *conns;
	size_t nr_conns;
	unsigned long logins;		/* handed to the kernel */
	unsigned long failures;		/* logins that failed or timed out */
};

void server_init(struct server *srv, struct loop *loop, struct config *cfg,
		 struct registry *reg);
/* accept_fn of portal.h: takes ownership of fd. */
void server_accept(void *srv, int fd);
/* Close connections whose time is up. */
void server_tick(struct server *srv, uint64_t now);
/* Close every connection ietd still holds (shutdown). */
void server_close_all(struct server *srv);

#endif
