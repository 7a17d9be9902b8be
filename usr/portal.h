/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The listening sockets: by default all IPv6 (V6ONLY) and all IPv4
 * addresses, or the one address of -a, or the portals of the PortalGroup
 * lines. Accepted sockets go to a callback.
 */
#ifndef IET_USR_PORTAL_H
#define IET_USR_PORTAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "fdlimit.h"
#include "loop.h"

#define ISCSI_PORT	3260

typedef void (*accept_fn)(void *arg, int fd);

struct portal {
	struct watch w;
	struct loop *loop;
	accept_fn fn;
	void *arg;
	struct sockaddr_storage addr;
	struct spare *spare;		/* the portals' */
	bool paused;			/* not polled: out of descriptors */
};

struct portals {
	struct portal *v;
	size_t nr;
	struct spare spare;		/* to accept-and-close at EMFILE */
};

/*
 * The portals of cfg's PortalGroup lines (their ports resolved), each on
 * its address or, for "*", on every address.
 */
struct config;
int portals_open_groups(struct portals *p, struct loop *loop,
			const struct config *cfg, accept_fn fn, void *arg,
			char *err, size_t errlen);
/* addr NULL: the default pair. Fails with a one-line reason in err. */
int portals_open(struct portals *p, struct loop *loop, const char *addr,
		 uint16_t port, accept_fn fn, void *arg, char *err,
		 size_t errlen);
void portals_close(struct portals *p);
/*
 * Poll again the listeners that ran out of descriptors without a spare
 * (fdlimit.h): called every second, it retries that often at most.
 */
void portals_tick(struct portals *p);
/* The port actually bound (tests ask for port 0). */
uint16_t portal_port(const struct portal *p);

#endif
