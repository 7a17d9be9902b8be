/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connections from accept to hand-off: read exactly one PDU at a time
 * (never a byte of the next one, which may belong to the kernel), feed it
 * to the login or discovery state machine, write the answer, time out
 * stalled logins, and hand finished normal logins to the kernel.
 */
#ifndef IET_USR_CONN_H
#define IET_USR_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "discovery.h"
#include "loop.h"
#include "model.h"
#include "registry.h"

struct conn;

/*
 * What a peer may hold before its connection reaches the kernel, by
 * default (ietd(8), LIMITS). Every connection in login or in a discovery
 * session counts. A connection beyond the limit of its address or its
 * IPv6 /64 is closed at accept; one beyond the limit of all peers takes
 * the place of the connection that has been idle longest of those not
 * authenticated (in login, or in discovery without CHAP).
 */
#define FIRST_PDU_MS		5000	/* accept to the first Login Request */
#define LOGIN_TIMEOUT_MS	15000	/* accept to hand-off */
#define DISC_IDLE_MS		60000	/* discovery: between two PDUs */
#define DISC_LIFETIME_MS	300000	/* discovery: all of it */
#define MAX_CONNS		1024	/* all peers */
#define MAX_CONNS_PER_ADDR	32	/* one IP address */
#define MAX_CONNS_PER_NET	256	/* one IPv6 /64 */

struct server {
	struct loop *loop;
	struct config *cfg;
	struct registry *reg;
	unsigned int first_pdu_ms;	/* accept to the first PDU */
	unsigned int login_timeout_ms;	/* whole login, accept to hand-off */
	unsigned int idle_timeout_ms;	/* a discovery session between PDUs */
	unsigned int disc_lifetime_ms;	/* discovery, login to end */
	unsigned int max_conns;		/* connections ietd holds at once */
	unsigned int max_conns_per_addr; /* of them, from one address */
	unsigned int max_conns_per_net;	/* of them, from one IPv6 /64 */
	const char *access_dirs;	/* access files (acl.h); NULL: none */
	uint32_t statsn_seed;		/* first StatSN of the next connection */
	uint64_t activity;		/* accepts and PDUs so far, for order */
	struct disc_budget disc_budget;	/* SendTargets answers of them all */
	struct conn *conns;
	size_t nr_conns;
	unsigned long logins;		/* handed to the kernel */
	unsigned long failures;		/* logins that failed or timed out */
	unsigned long refused;		/* connections closed at accept */
	unsigned long evicted;		/* closed for a newer one */
};

/*
 * Whether two peers count as one for MAX_CONNS_PER_ADDR: the same IP
 * address, an IPv4-mapped IPv6 address being its IPv4 one.
 */
bool peer_same_addr(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b);
/*
 * For MAX_CONNS_PER_NET: IPv6 addresses (not IPv4-mapped) of one /64,
 * which one host can take all of. A /64 is also a whole LAN (fe80::/64
 * every host's), so its limit is many addresses' worth, not one's.
 */
bool peer_same_net(const struct sockaddr_storage *a,
		   const struct sockaddr_storage *b);

void server_init(struct server *srv, struct loop *loop, struct config *cfg,
		 struct registry *reg);
/* accept_fn of portal.h: takes ownership of fd. */
void server_accept(void *srv, int fd);
/*
 * The same for a connection from peer, as the limits and the log see it
 * (tests: addresses a loopback connection cannot come from).
 */
void server_accept_from(struct server *srv, int fd,
			const struct sockaddr_storage *peer);
/* Close connections whose time is up. */
void server_tick(struct server *srv, uint64_t now);
/* Close every connection ietd still holds (shutdown). */
void server_close_all(struct server *srv);

#endif
