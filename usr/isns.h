/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's iSNS client (RFC 4171), in the event loop and never blocking it:
 * a non-blocking TCP connection to iSNSServer with one transaction at a
 * time (its ID and function matched, a deadline on each), a bounded
 * back-off between attempts, and a listener on which the server's State
 * Change Notifications and Entity Status Inquiries arrive (open-isns's
 * isnsd connects to the SCN and ESI ports a portal registers).
 *
 * On each connection it registers ietd's network entity, its portals
 * (with SCN and ESI ports), each target as an iSCSI node with a portal
 * group on each portal; registers each target for SCNs; and with
 * iSNSAccessControl queries each target's discovery domains into
 * isns_acl.h. It does so again after a reconnect, when the targets, the
 * portal groups or the server change (reload, ietadm), and queries again
 * on every SCN and every 15 seconds. At a clean stop it deregisters the
 * entity. Nothing the server sends is trusted: an SCN only makes ietd
 * ask again, and only the server's address may connect to the listener.
 */
#ifndef IET_USR_ISNS_H
#define IET_USR_ISNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "isns_pdu.h"
#include "fdlimit.h"
#include "loop.h"

struct config;
struct portals;

/* The server's and the listener's connections, and their limits. */
#define ISNS_SIDES		4
#define ISNS_TIMEOUT_MS		10000	/* connect, or one transaction */
#define ISNS_SIDE_IDLE_MS	30000
#define ISNS_BACKOFF_MIN_MS	1000
#define ISNS_BACKOFF_MAX_MS	60000
/*
 * Every target's domains asked again this often, SCN or not: open-isns
 * sends none about a member that never registered, and the SCNs after
 * the first may not arrive (seen with Debian's isnsd 0.101).
 */
#define ISNS_REQUERY_MS		15000
#define ISNS_SCN_GAP_MS		1000	/* SCNs: one query a second at most */
#define ISNS_ESI_INTERVAL	60	/* seconds asked for */

enum isns_state {
	ISNS_OFF,			/* no iSNSServer */
	ISNS_WAIT,			/* back-off before the next attempt */
	ISNS_CONNECTING,
	ISNS_UP,
};

enum isns_step {
	STEP_NONE,
	STEP_REG,
	STEP_SCN_REG,
	STEP_QUERY,
	STEP_REFRESH,
	STEP_DEREG,
};

struct isns_side {
	struct watch w;			/* fd -1: free */
	struct isns *owner;
	uint8_t in[ISNS_PDU_MAX];
	size_t len;
	uint64_t deadline;
};

struct isns_listener {
	struct watch w;			/* fd -1: none */
	struct isns *owner;
	uint16_t port;
	bool paused;			/* out of descriptors: not polled */
};

struct isns {
	struct loop *loop;
	const struct config *cfg;	/* the running model */
	const struct portals *portals;
	uint16_t port;			/* ietd's -p, in the entity's name */

	char server[256];		/* as configured, "" none */
	struct sockaddr_storage srv;	/* resolved, port set */
	bool resolved;
	uint64_t fingerprint;		/* of what was last applied */

	enum isns_state state;
	struct watch w;
	uint8_t in[ISNS_PDU_MAX];
	size_t in_len;
	struct isns_msg out;
	size_t out_off;			/* out.len: nothing to send */
	enum isns_step step;		/* the transaction awaited */
	size_t step_nodes;		/* the nodes a registration carried */
	uint16_t xid;
	uint64_t deadline;
	uint64_t retry_at;
	unsigned int backoff_ms;
	bool lost_logged;
	bool stopping;			/* only the deregistration now */

	struct isns_listener listeners[2];	/* SCN's, ESI's */
	struct spare spare;		/* the listeners', at EMFILE */
	int lfamily;
	uint16_t scn_port, esi_port;	/* 0: no listeners */
	struct isns_side sides[ISNS_SIDES];

	char eid[ISNS_NAME_MAX + 1];
	struct isns_node *nodes;	/* what is (to be) registered */
	size_t nr_nodes;
	struct isns_portal *pv;
	size_t nr_portals, cap_portals;
	char source[ISNS_NAME_MAX + 1];	/* a node the server knows, "" none */
	bool dirty;			/* nodes or portals to rebuild */
	size_t reg_next;		/* nodes registered so far */
	size_t scn_next;
	size_t qry_next;
	bool registered;
	bool no_esi;			/* the server refused an ESI port */
	uint32_t period_s;		/* registration period granted */
	uint64_t refresh_at;
	bool requery;
	uint64_t requery_at;
	uint64_t periodic_at;
	unsigned long scns, esis, queries;	/* counts (tests, logs) */
};

/* Follow cfg (iSNSServer, targets, groups) from now on; 0 or -ENOMEM. */
int isns_init(struct isns *c, struct loop *loop, const struct config *cfg,
	      const struct portals *portals, uint16_t port);
/* Every second, and after a reload or ietadm change: follow the model. */
void isns_tick(struct isns *c, uint64_t now);
/* After SIGHUP: the same, and a server name that did not resolve again. */
void isns_reload(struct isns *c, uint64_t now);
/*
 * At a clean stop: deregister (waiting at most a second for the answer),
 * then close everything.
 */
void isns_stop(struct isns *c);

#endif
