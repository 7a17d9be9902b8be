// SPDX-License-Identifier: GPL-2.0
/* Listening sockets and accept. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "config.h"
#include "discovery.h"
#include "log.h"
#include "portal.h"

static void on_accept(struct watch *w, uint32_t events)
{
	struct portal *p = container_of(w, struct portal, w);
	int fd, one = 1;

	(void)events;
	fd = accept_or_shed(w->fd, p->spare);
	if (fd < 0) {
		if (accept_starved(p->spare, errno)) {
			log_peer(LOG_ERR, "out of file descriptors, not accepting connections for a while");
			/* Still readable: polled on, it would spin the loop. */
			if (!loop_mod(p->loop, &p->w, 0))
				p->paused = true;
		} else if (errno == EMFILE || errno == ENFILE) {
			log_peer(LOG_ERR, "out of file descriptors, refusing a connection");
		} else if (errno != EAGAIN && errno != EINTR &&
			   errno != ECONNABORTED) {
			log_peer(LOG_ERR, "accept: %s", strerror(errno));
		}
		return;
	}
	/* Login responses are small and latency-bound. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	p->fn(p->arg, fd);
}

static int listen_on(struct portals *ps, struct loop *loop,
		     const struct sockaddr *sa, socklen_t salen, accept_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct portal *np, *p;
	char name[INET6_ADDRSTRLEN + 16];
	int fd, one = 1, ret;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, sa, salen);
	format_portal(&ss, 1, name, sizeof(name));
	name[strcspn(name, ",")] = '\0';

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket for %s: %s", name,
			 strerror(errno));
		return ret;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* IPv4 has its own socket: keep [::] from taking its addresses. */
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, salen) || listen(fd, 128)) {
		ret = -errno;
		snprintf(err, errlen, "cannot listen on %s: %s", name,
			 strerror(errno));
		close(fd);
		return ret;
	}
	np = realloc(ps->v, (ps->nr + 1) * sizeof(*np));
	if (!np) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ps->v = np;
	p = &ps->v[ps->nr];
	memset(p, 0, sizeof(*p));
	p->w.fd = fd;
	p->w.fn = on_accept;
	p->loop = loop;
	p->fn = fn;
	p->arg = arg;
	p->spare = &ps->spare;
	salen = sizeof(p->addr);
	getsockname(fd, (struct sockaddr *)&p->addr, &salen);
	ps->nr++;
	return 0;
}

/* Every address: [::] (IPv6 only) and 0.0.0.0, or IPv4 alone. */
static int listen_any(struct portals *ps, struct loop *loop, uint16_t port,
		      accept_fn fn, void *arg, char *err, size_t errlen)
{
	struct sockaddr_in6 s6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	struct sockaddr_in s4 = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ret;

	ret = listen_on(ps, loop, (struct sockaddr *)&s6, sizeof(s6), fn, arg,
			err, errlen);
	/* A host without IPv6 still serves IPv4. */
	if (ret == -EAFNOSUPPORT || ret == -EADDRNOTAVAIL)
		log_warn("no IPv6 (%s): listening on IPv4 only", err);
	else if (ret)
		return ret;
	return listen_on(ps, loop, (struct sockaddr *)&s4, sizeof(s4), fn, arg,
			 err, errlen);
}

/* One numeric address ("[v6]" too) and port. */
static int listen_addr(struct portals *ps, struct loop *loop,
		       const char *addr, uint16_t port, accept_fn fn,
		       void *arg, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *ai;
	char host[256], service[8];
	size_t len = strlen(addr);
	int ret;

	/* Accept "[v6addr]" as written in portals. */
	if (len >= 2 && addr[0] == '[' && addr[len - 1] == ']' &&
	    len - 2 < sizeof(host)) {
		memcpy(host, addr + 1, len - 2);
		host[len - 2] = '\0';
	} else {
		snprintf(host, sizeof(host), "%s", addr);
	}
	snprintf(service, sizeof(service), "%u", port);
	ret = getaddrinfo(host, service, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "address %s: %s", addr,
			 gai_strerror(ret));
		return -EINVAL;
	}
	ret = listen_on(ps, loop, ai->ai_addr, ai->ai_addrlen, fn, arg, err,
			errlen);
	freeaddrinfo(ai);
	return ret;
}

static int watch_all(struct portals *ps, struct loop *loop, char *err,
		     size_t errlen)
{
	size_t i;
	int ret;

	for (i = 0; i < ps->nr; i++) {
		ret = loop_add(loop, &ps->v[i].w, EPOLLIN);
		if (ret) {
			snprintf(err, errlen, "epoll: %s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int portals_open_groups(struct portals *ps, struct loop *loop,
			const struct config *cfg, accept_fn fn, void *arg,
			char *err, size_t errlen)
{
	size_t i, j;
	int ret = 0;

	memset(ps, 0, sizeof(*ps));
	spare_open(&ps->spare);
	for (i = 0; i < cfg->nr_groups && !ret; i++) {
		const struct portal_group *g = &cfg->groups[i];

		for (j = 0; j < g->nr_portals && !ret; j++) {
			const struct portal_addr *p = &g->portals[j];

			ret = p->addr[0] ?
			      listen_addr(ps, loop, p->addr, p->port, fn, arg,
					  err, errlen) :
			      listen_any(ps, loop, p->port, fn, arg, err,
					 errlen);
		}
	}
	if (!ret)
		ret = watch_all(ps, loop, err, errlen);
	if (ret)
		portals_close(ps);
	return ret;
}

int portals_open(struct portals *ps, struct loop *loop, const char *addr,
		 uint16_t port, accept_fn fn, void *arg, char *err,
		 size_t errlen)
{
	int ret;

	memset(ps, 0, sizeof(*ps));
	spare_open(&ps->spare);
	ret = addr ? listen_addr(ps, loop, addr, port, fn, arg, err, errlen) :
		     listen_any(ps, loop, port, fn, arg, err, errlen);
	if (!ret)
		ret = watch_all(ps, loop, err, errlen);
	if (ret)
		portals_close(ps);
	return ret;
}

void portals_tick(struct portals *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++) {
		struct portal *p = &ps->v[i];

		if (p->paused && !loop_mod(p->loop, &p->w, EPOLLIN))
			p->paused = false;
	}
}

void portals_close(struct portals *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++) {
		loop_del(ps->v[i].loop, &ps->v[i].w);
		close(ps->v[i].w.fd);
	}
	free(ps->v);
	spare_close(&ps->spare);
	memset(ps, 0, sizeof(*ps));
	ps->spare.fd = -1;
}

uint16_t portal_port(const struct portal *p)
{
	return sockaddr_port(&p->addr);
}
