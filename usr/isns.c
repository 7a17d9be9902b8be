// SPDX-License-Identifier: GPL-2.0
/* The iSNS client's connections and the order of its transactions. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "acl.h"
#include "config.h"
#include "discovery.h"
#include "isns.h"
#include "isns_acl.h"
#include "log.h"
#include "model.h"
#include "portal.h"

static void on_server(struct watch *w, uint32_t events);
static void on_listen(struct watch *w, uint32_t events);
static void on_side(struct watch *w, uint32_t events);

static void fnv(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		*h ^= *b++;
		*h *= 0x100000001b3ull;
	}
}

/* Whether a target is one initiators may use, and so one to register. */
static bool offered(const struct target_conf *t)
{
	return t->origin != ORIGIN_KERNEL && !t->deleting;
}

/* What decides what is registered, and where. */
static uint64_t fingerprint(const struct config *cfg)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	fnv(&h, cfg->isns_server, strlen(cfg->isns_server) + 1);
	fnv(&h, &cfg->isns_access_control, sizeof(cfg->isns_access_control));
	for (i = 0; i < cfg->nr_targets; i++) {
		const struct target_conf *t = &cfg->targets[i];

		if (!offered(t))
			continue;
		fnv(&h, t->name, strlen(t->name) + 1);
		fnv(&h, t->alias, strlen(t->alias) + 1);
	}
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct portal_group *g = &cfg->groups[i];

		fnv(&h, &g->tag, sizeof(g->tag));
		fnv(&h, g->portals, g->nr_portals * sizeof(g->portals[0]));
	}
	return h;
}

static const char *srv_name(const struct isns *c)
{
	return c->server;
}

static bool any_addr(const struct sockaddr_storage *ss)
{
	static const uint8_t zero[16];
	uint8_t b[16];
	int n = addr_bytes(ss, b);

	return n && !memcmp(b, zero, n);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)(void *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)ss)->sin6_port = htons(port);
}

static bool same_portal(const struct isns_portal *a,
			const struct isns_portal *b)
{
	uint8_t x[16], y[16];
	int n = addr_bytes(&a->addr, x);

	return n && n == addr_bytes(&b->addr, y) && !memcmp(x, y, n) &&
	       sockaddr_port(&a->addr) == sockaddr_port(&b->addr);
}

/*
 * The portals as ietd listens on them: one on every address is
 * registered as the address the server sees ietd at.
 */
static void build_portals(struct isns *c)
{
	struct sockaddr_storage here;
	socklen_t len = sizeof(here);
	size_t i, j;

	c->nr_portals = 0;
	/* A reload may have opened more portals than there were. */
	if (c->portals->nr > c->cap_portals) {
		struct isns_portal *v;

		v = realloc(c->pv, c->portals->nr * sizeof(*v));

		if (!v)
			return;
		c->pv = v;
		c->cap_portals = c->portals->nr;
	}
	memset(&here, 0, sizeof(here));
	if (c->w.fd >= 0 &&
	    getsockname(c->w.fd, (struct sockaddr *)&here, &len))
		here.ss_family = AF_UNSPEC;
	for (i = 0; i < c->portals->nr; i++) {
		const struct portal *p = &c->portals->v[i];
		struct isns_portal ip = { .addr = p->addr };

		if (any_addr(&p->addr)) {
			if (here.ss_family != AF_INET &&
			    here.ss_family != AF_INET6)
				continue;
			/* The family ietd listens on for it must match. */
			if (p->addr.ss_family != here.ss_family)
				continue;
			ip.addr = here;
		}
		set_port(&ip.addr, portal_port(p));
		ip.tag = portal_tag_of(c->cfg, &ip.addr);
		if (!ip.tag)
			continue;
		for (j = 0; j < c->nr_portals; j++)
			if (same_portal(&c->pv[j], &ip))
				break;
		if (j == c->nr_portals)
			c->pv[c->nr_portals++] = ip;
	}
}

static int build_nodes(struct isns *c)
{
	const struct config *cfg = c->cfg;
	struct isns_node *v;
	size_t i, n = 0;

	v = calloc(cfg->nr_targets ? cfg->nr_targets : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < cfg->nr_targets; i++) {
		const struct target_conf *t = &cfg->targets[i];

		if (!offered(t) || strlen(t->name) > ISNS_NAME_MAX)
			continue;
		snprintf(v[n].name, sizeof(v[n].name), "%s", t->name);
		snprintf(v[n].alias, sizeof(v[n].alias), "%s", t->alias);
		n++;
	}
	/* What the server said of a target no longer here is forgotten. */
	for (i = 0; i < c->nr_nodes; i++) {
		size_t j;

		for (j = 0; j < n; j++)
			if (!strcasecmp(c->nodes[i].name, v[j].name))
				break;
		if (j == n)
			isns_acl_forget(c->nodes[i].name);
	}
	free(c->nodes);
	c->nodes = v;
	c->nr_nodes = n;
	return 0;
}

static void side_close(struct isns_side *s)
{
	if (s->w.fd < 0)
		return;
	loop_del(s->owner->loop, &s->w);
	close(s->w.fd);
	s->w.fd = -1;
	s->len = 0;
}

static void listener_close(struct isns *c)
{
	size_t i;

	for (i = 0; i < ISNS_SIDES; i++)
		side_close(&c->sides[i]);
	for (i = 0; i < 2; i++) {
		struct isns_listener *l = &c->listeners[i];

		if (l->w.fd >= 0) {
			loop_del(c->loop, &l->w);
			close(l->w.fd);
		}
		l->w.fd = -1;
		l->port = 0;
		l->paused = false;
	}
	c->scn_port = c->esi_port = 0;
	spare_close(&c->spare);
}

/* A listener on every address of the server's family, on a free port. */
static int listen_one(struct isns *c, struct isns_listener *l)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = c->srv.ss_family;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	len = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	      sizeof(struct sockaddr_in);
	l->w.fd = fd;
	l->w.fn = on_listen;
	l->owner = c;
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, ISNS_SIDES) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    loop_add(c->loop, &l->w, EPOLLIN)) {
		int ret = -errno;

		close(fd);
		l->w.fd = -1;
		return ret;
	}
	l->port = sockaddr_port(&ss);
	return 0;
}

/*
 * The server connects to each portal's address at these ports: SCNs to
 * one, ESIs to another (isnsd 0.101 crashes when both share a port: it
 * sends an SCN on the connection an ESI closed).
 */
static void listener_open(struct isns *c)
{
	int ret;

	if (c->listeners[0].w.fd >= 0 && c->lfamily == c->srv.ss_family)
		return;
	listener_close(c);
	spare_open(&c->spare);
	ret = listen_one(c, &c->listeners[0]);
	if (!ret)
		ret = listen_one(c, &c->listeners[1]);
	if (ret) {
		log_warn("iSNS: no listener for state change notifications (%s): ietd follows discovery domain changes every 15 s only",
			 strerror(-ret));
		listener_close(c);
		return;
	}
	c->lfamily = c->srv.ss_family;
	c->scn_port = c->listeners[0].port;
	c->esi_port = c->listeners[1].port;
}

static void disconnect(struct isns *c, uint64_t now, const char *why)
{
	if (c->w.fd >= 0) {
		loop_del(c->loop, &c->w);
		close(c->w.fd);
		c->w.fd = -1;
	}
	c->in_len = 0;
	c->out.len = c->out_off = 0;
	c->step = STEP_NONE;
	c->registered = false;
	c->reg_next = c->scn_next = c->qry_next = 0;
	if (c->state == ISNS_OFF)
		return;
	/* Nothing the server said holds while it cannot be asked. */
	isns_acl_clear();
	if (!c->lost_logged || log_level() >= 1)
		log_warn("iSNS server %s: %s; retrying in %u s%s", srv_name(c),
			 why, c->backoff_ms / 1000,
			 c->cfg->isns_access_control ?
			 "; until it answers, iSNSAccessControl refuses every login" :
			 "");
	c->lost_logged = true;
	c->state = ISNS_WAIT;
	c->retry_at = now + c->backoff_ms;
	c->backoff_ms = c->backoff_ms * 2 > ISNS_BACKOFF_MAX_MS ?
			ISNS_BACKOFF_MAX_MS : c->backoff_ms * 2;
}

static int resolve(struct isns *c)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	char host[256];
	uint16_t port;
	int ret;

	c->resolved = false;
	if (isns_server_split(c->server, host, sizeof(host), &port))
		return -EINVAL;
	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		log_err("iSNS server %s: %s: not registering%s", c->server,
			gai_strerror(ret), c->cfg->isns_access_control ?
			", and iSNSAccessControl refuses every login until a reload finds it" :
			" (until a reload)");
		return -ENOENT;
	}
	memset(&c->srv, 0, sizeof(c->srv));
	memcpy(&c->srv, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	set_port(&c->srv, port);
	c->resolved = true;
	return 0;
}

static void connect_start(struct isns *c, uint64_t now)
{
	socklen_t len = c->srv.ss_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) :
			sizeof(struct sockaddr_in);
	int fd, one = 1;

	fd = socket(c->srv.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->state = ISNS_CONNECTING;
		disconnect(c, now, strerror(errno));
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->w.fd = fd;
	c->w.fn = on_server;
	c->state = ISNS_CONNECTING;
	c->deadline = now + ISNS_TIMEOUT_MS;
	if (loop_add(c->loop, &c->w, EPOLLOUT)) {
		close(fd);
		c->w.fd = -1;
		disconnect(c, now, "cannot watch its socket");
		return;
	}
	if (connect(fd, (struct sockaddr *)&c->srv, len) &&
	    errno != EINPROGRESS)
		disconnect(c, now, strerror(errno));
}

/* Send what is in c->out as far as the socket takes it. */
static void flush(struct isns *c, uint64_t now)
{
	ssize_t n;

	while (c->out_off < c->out.len) {
		n = send(c->w.fd, c->out.buf + c->out_off,
			 c->out.len - c->out_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			disconnect(c, now, strerror(errno));
			return;
		}
		c->out_off += n;
	}
	loop_mod(c->loop, &c->w,
		 c->out_off < c->out.len ? EPOLLIN | EPOLLOUT : EPOLLIN);
}

static void send_step(struct isns *c, enum isns_step step, int built,
		      uint64_t now)
{
	if (built < 0) {
		log_peer(LOG_ERR, "iSNS: a request does not fit in one PDU: %s",
			 strerror(-built));
		disconnect(c, now, "request too large");
		return;
	}
	c->step = step;
	c->out_off = 0;
	c->deadline = now + ISNS_TIMEOUT_MS;
	flush(c, now);
}

static uint16_t next_xid(struct isns *c)
{
	if (!++c->xid)
		c->xid = 1;
	return c->xid;
}

static void rebuild(struct isns *c)
{
	if (build_nodes(c)) {
		log_peer(LOG_ERR, "iSNS: out of memory");
		return;
	}
	build_portals(c);
	c->dirty = false;
	c->reg_next = c->scn_next = c->qry_next = 0;
}

/* The next transaction, once the previous one is answered. */
static void next_step(struct isns *c, uint64_t now)
{
	struct isns_entity e;
	uint16_t xid;
	bool round_over;
	int n;

	if (c->state != ISNS_UP || c->step != STEP_NONE || c->stopping)
		return;
	if (c->dirty)
		rebuild(c);
	if (c->dirty)
		return;
	if (!c->nr_nodes) {
		/* Nothing to be the source of a registration: leave. */
		if (c->registered && c->source[0]) {
			xid = next_xid(c);
			send_step(c, STEP_DEREG, isns_build_dereg(&c->out, xid,
				  c->source, c->eid), now);
		}
		return;
	}
	if (c->reg_next < c->nr_nodes) {
		e = (struct isns_entity){
			.portals = c->pv, .nr_portals = c->nr_portals,
			.nodes = c->nodes, .nr_nodes = c->nr_nodes,
			.scn_port = c->scn_port,
			.esi_port = c->esi_port,
			.esi_interval = c->no_esi ? 0 : ISNS_ESI_INTERVAL,
		};
		snprintf(e.eid, sizeof(e.eid), "%s", c->eid);
		xid = next_xid(c);
		n = isns_build_reg(&c->out, xid, &e, c->reg_next);
		c->step_nodes = n > 0 ? n : 0;
		send_step(c, STEP_REG, n < 0 ? n : 0, now);
		return;
	}
	if (c->scn_port && c->scn_next < c->nr_nodes) {
		xid = next_xid(c);
		send_step(c, STEP_SCN_REG, isns_build_scn_reg(&c->out, xid,
			  c->nodes[c->scn_next].name), now);
		return;
	}
	/* No round of queries under way (or none asked for at all). */
	round_over = !c->cfg->isns_access_control || c->qry_next >= c->nr_nodes;
	/* The registration's refresh before another round of queries. */
	if (c->period_s && now >= c->refresh_at && round_over) {
		xid = next_xid(c);
		send_step(c, STEP_REFRESH, isns_build_refresh(&c->out, xid,
			  c->source, c->eid), now);
		return;
	}
	/*
	 * An SCN asks for a new round once the one under way has ended:
	 * restarting it would leave the targets past where SCNs keep
	 * cutting it never asked again, their old answers in force.
	 */
	if (c->requery && now >= c->requery_at && round_over) {
		c->requery = false;
		c->qry_next = 0;
		c->periodic_at = now + ISNS_REQUERY_MS;
	}
	if (!c->requery && now >= c->periodic_at &&
	    c->qry_next >= c->nr_nodes) {
		c->qry_next = 0;
		c->periodic_at = now + ISNS_REQUERY_MS;
	}
	if (c->cfg->isns_access_control && c->qry_next < c->nr_nodes) {
		xid = next_xid(c);
		c->queries++;
		log_dbg(2, "iSNS: asking for %s's discovery domains",
			c->nodes[c->qry_next].name);
		send_step(c, STEP_QUERY, isns_build_dd_query(&c->out, xid,
			  c->nodes[c->qry_next].name), now);
		return;
	}
}

static void reg_done(struct isns *c, struct isns_iter *it, uint64_t now)
{
	uint32_t period = isns_reg_period(it);

	c->reg_next += c->step_nodes;
	if (c->reg_next < c->nr_nodes)
		return;
	if (period)
		c->period_s = period;
	/* Half the period, at most ten minutes, at least ten seconds. */
	c->refresh_at = now + (c->period_s > 1200 ? 600000 :
			       c->period_s < 20 ? 10000 :
			       c->period_s * 500ull);
	snprintf(c->source, sizeof(c->source), "%s", c->nodes[0].name);
	c->registered = true;
	c->backoff_ms = ISNS_BACKOFF_MIN_MS;
	c->scn_next = 0;
	c->qry_next = 0;
	c->periodic_at = now + ISNS_REQUERY_MS;
	log_peer(LOG_INFO, "iSNS server %s: registered %zu target%s on %zu portal%s as %s%s",
		 srv_name(c), c->nr_nodes, c->nr_nodes == 1 ? "" : "s",
		 c->nr_portals, c->nr_portals == 1 ? "" : "s", c->eid,
		 c->scn_port ? "" : ", without SCNs");
	c->lost_logged = false;
}

static void queried(struct isns *c, uint32_t status, struct isns_iter *it)
{
	const char *target = c->nodes[c->qry_next].name;
	struct isns_names names;
	long before = isns_acl_count(target);
	int ret;

	if (status) {
		log_peer(LOG_WARNING, "iSNS server %s: query of %s's discovery domains failed with status %u: its logins are refused",
			 srv_name(c), target, status);
		isns_acl_forget(target);
		return;
	}
	ret = isns_dd_members(it, target, &names);
	if (ret) {
		log_peer(LOG_WARNING, "iSNS server %s: unusable answer for %s's discovery domains (%s): its logins are refused",
			 srv_name(c), target, strerror(-ret));
		isns_acl_forget(target);
		return;
	}
	/* The server decides how often: rate-limited. */
	if (before != (long)names.nr)
		log_peer(LOG_INFO, "iSNS: %s's discovery domains hold %zu other node%s",
			 target, names.nr, names.nr == 1 ? "" : "s");
	if (isns_acl_set(target, &names)) {
		isns_names_free(&names);
		isns_acl_forget(target);
	}
}

/* An answer to the transaction awaited. */
static void answered(struct isns *c, const struct isns_hdr *h,
		     const uint8_t *payload, uint64_t now)
{
	enum isns_step step = c->step;
	struct isns_iter it;
	uint32_t status;

	if (isns_response(payload, h->len, &status, &it)) {
		disconnect(c, now, "a response without a status");
		return;
	}
	c->step = STEP_NONE;
	switch (step) {
	case STEP_REG:
		if (status == ISNS_ESI_NOT_AVAILABLE && !c->no_esi) {
			log_info("iSNS server %s does no ESI: registering without an ESI port",
				 srv_name(c));
			c->no_esi = true;
			c->reg_next = 0;
			break;
		}
		if (status) {
			disconnect(c, now, status == 3 ?
				   "registration refused (status 3: are the targets registered by another entity?)" :
				   "registration refused");
			log_dbg(1, "iSNS DevAttrReg status %u", status);
			return;
		}
		reg_done(c, &it, now);
		break;
	case STEP_SCN_REG:
		if (status)
			log_peer(LOG_WARNING, "iSNS server %s: SCN registration of %s refused (status %u): its domain changes are followed every 15 s",
				 srv_name(c), c->nodes[c->scn_next].name,
				 status);
		c->scn_next++;
		break;
	case STEP_QUERY:
		if (c->qry_next < c->nr_nodes)
			queried(c, status, &it);
		c->qry_next++;
		break;
	case STEP_REFRESH:
		if (status) {
			/* Expired meanwhile: register again. */
			c->reg_next = c->scn_next = c->qry_next = 0;
			c->registered = false;
			break;
		}
		c->refresh_at = now + (c->period_s > 1200 ? 600000 :
				       c->period_s < 20 ? 10000 :
				       c->period_s * 500ull);
		break;
	case STEP_DEREG:
		c->registered = false;
		c->source[0] = '\0';
		break;
	case STEP_NONE:
		break;
	}
	next_step(c, now);
}

/*
 * A request from the server (SCN or ESI), on its connection or on the
 * listener's: the answer into m; false for anything else.
 */
static bool serve(struct isns *c, const struct isns_hdr *h,
		  const uint8_t *payload, struct isns_msg *m, uint64_t now)
{
	char dest[ISNS_NAME_MAX + 1];

	switch (h->func) {
	case ISNS_SCN:
		if (isns_scn_parse(payload, h->len, dest, sizeof(dest)) ||
		    isns_build_scn_rsp(m, h->xid, dest))
			return false;
		c->scns++;
		log_dbg(1, "iSNS: state change notification for %s", dest);
		/* Whatever it says, ask again: the server's answer decides. */
		if (!c->requery) {
			c->requery = true;
			c->requery_at = now + ISNS_SCN_GAP_MS;
		}
		return true;
	case ISNS_ESI:
		if (isns_build_esi_rsp(m, h->xid, payload, h->len))
			return false;
		c->esis++;
		log_dbg(1, "iSNS: entity status inquiry answered");
		return true;
	default:
		return false;
	}
}

static void server_pdu(struct isns *c, uint64_t now)
{
	const uint8_t *payload = c->in + ISNS_HDR_LEN;
	struct isns_hdr h;

	isns_hdr_parse(c->in, c->in_len, &h);
	c->in_len = 0;
	if (!(h.func & ISNS_RESPONSE)) {
		static struct isns_msg m;

		/* Answered at once if it fits beside what is being sent. */
		if (!serve(c, &h, payload, &m, now) ||
		    c->out_off < c->out.len) {
			disconnect(c, now, "unexpected request from the server");
			return;
		}
		if (send(c->w.fd, m.buf, m.len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)m.len)
			disconnect(c, now, "cannot answer it");
		return;
	}
	if (c->stopping && h.xid != c->xid)
		return;		/* the answer to what the stop abandoned */
	if (c->step == STEP_NONE || h.xid != c->xid) {
		disconnect(c, now, "a response to no request of ours");
		return;
	}
	if ((h.func & ~ISNS_RESPONSE) != (c->out.buf[2] << 8 | c->out.buf[3])) {
		disconnect(c, now, "a response of another function");
		return;
	}
	answered(c, &h, payload, now);
}

/* Read toward one whole PDU; 1 when in holds one, 0 for more, -1 error. */
static int read_pdu(int fd, uint8_t *in, size_t *len, const char **why)
{
	struct isns_hdr h;
	size_t need = ISNS_HDR_LEN;
	ssize_t n;
	int ret;

	if (*len >= ISNS_HDR_LEN) {
		ret = isns_hdr_parse(in, *len, &h);
		if (ret) {
			*why = "a malformed PDU header";
			return -1;
		}
		need += h.len;
	}
	n = recv(fd, in + *len, need - *len, MSG_DONTWAIT);
	if (n == 0) {
		*why = "connection closed";
		return -1;
	}
	if (n < 0) {
		*why = strerror(errno);
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
	*len += n;
	if (*len == ISNS_HDR_LEN) {
		if (isns_hdr_parse(in, *len, &h)) {
			*why = "a malformed PDU header";
			return -1;
		}
		return h.len ? 0 : 1;
	}
	return *len == need && need > ISNS_HDR_LEN ? 1 : 0;
}

static void on_server(struct watch *w, uint32_t events)
{
	struct isns *c = container_of(w, struct isns, w);
	uint64_t now = now_ms();
	const char *why = NULL;
	int err = 0, ret;
	socklen_t len = sizeof(err);

	if (c->state == ISNS_CONNECTING) {
		if (getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &len) ||
		    err) {
			disconnect(c, now, strerror(err ? err : errno));
			return;
		}
		c->state = ISNS_UP;
		listener_open(c);
		c->dirty = true;
		c->step = STEP_NONE;
		loop_mod(c->loop, &c->w, EPOLLIN);
		log_dbg(1, "iSNS: connected to %s", srv_name(c));
		next_step(c, now);
		return;
	}
	if (events & EPOLLOUT) {
		flush(c, now);
		if (c->w.fd < 0)
			return;
	}
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	ret = read_pdu(w->fd, c->in, &c->in_len, &why);
	if (ret < 0)
		disconnect(c, now, why);
	else if (ret > 0)
		server_pdu(c, now);
}

static void on_side(struct watch *w, uint32_t events)
{
	struct isns_side *s = container_of(w, struct isns_side, w);
	struct isns *c = s->owner;
	static struct isns_msg m;
	uint64_t now = now_ms();
	struct isns_hdr h;
	const char *why = NULL;
	int ret;

	(void)events;
	ret = read_pdu(w->fd, s->in, &s->len, &why);
	if (ret < 0) {
		log_dbg(1, "iSNS: notification connection: %s", why);
		side_close(s);
		return;
	}
	if (!ret)
		return;
	isns_hdr_parse(s->in, s->len, &h);
	s->len = 0;
	s->deadline = now + ISNS_SIDE_IDLE_MS;
	log_dbg(2, "iSNS: function 0x%x on notification connection %d",
		h.func, w->fd);
	if (!serve(c, &h, s->in + ISNS_HDR_LEN, &m, now) ||
	    send(w->fd, m.buf, m.len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)m.len) {
		log_peer(LOG_WARNING, "iSNS: closed a notification connection: %s",
			 "not an SCN or ESI, or it does not read the answer");
		side_close(s);
	}
	if (c->state == ISNS_UP)
		next_step(c, now);
}

/* Only the server may notify: anyone else's connection is closed. */
static void on_listen(struct watch *w, uint32_t events)
{
	struct isns_listener *l = container_of(w, struct isns_listener, w);
	struct isns *c = l->owner;
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	uint8_t a[16], b[16];
	struct isns_side *s = NULL;
	int fd, n;
	size_t i;

	(void)events;
	fd = accept_or_shed(w->fd, &c->spare);
	if (fd < 0) {
		/* Still readable: polled on, it would spin the loop. */
		if (accept_starved(&c->spare, errno) &&
		    !loop_mod(c->loop, &l->w, 0)) {
			l->paused = true;
			log_peer(LOG_ERR, "iSNS: out of file descriptors, not accepting notifications for a while");
		}
		return;
	}
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len)) {
		close(fd);
		return;
	}
	n = addr_bytes(&peer, a);
	if (!n || n != addr_bytes(&c->srv, b) || memcmp(a, b, n)) {
		log_peer(LOG_WARNING, "iSNS: refused a notification connection from another address than the server's");
		close(fd);
		return;
	}
	for (i = 0; i < ISNS_SIDES; i++)
		if (c->sides[i].w.fd < 0) {
			s = &c->sides[i];
			break;
		}
	if (!s) {
		close(fd);
		return;
	}
	log_dbg(2, "iSNS: notification connection %d", fd);
	s->w.fd = fd;
	s->w.fn = on_side;
	s->len = 0;
	s->deadline = now_ms() + ISNS_SIDE_IDLE_MS;
	if (loop_add(c->loop, &s->w, EPOLLIN)) {
		close(fd);
		s->w.fd = -1;
	}
}

/* A server configured, changed or removed. */
static void apply_server(struct isns *c, uint64_t now)
{
	if (!strcmp(c->server, c->cfg->isns_server))
		return;
	if (c->state != ISNS_OFF) {
		c->state = ISNS_WAIT;
		c->backoff_ms = ISNS_BACKOFF_MIN_MS;
		disconnect(c, now, "iSNSServer changed");
		c->lost_logged = false;
	}
	isns_acl_clear();
	listener_close(c);
	snprintf(c->server, sizeof(c->server), "%s", c->cfg->isns_server);
	c->no_esi = false;
	c->period_s = 0;
	c->source[0] = '\0';
	c->backoff_ms = ISNS_BACKOFF_MIN_MS;
	if (!c->server[0]) {
		c->state = ISNS_OFF;
		return;
	}
	c->state = ISNS_WAIT;
	c->retry_at = now;
	if (resolve(c))
		c->state = ISNS_OFF;
}

int isns_init(struct isns *c, struct loop *loop, const struct config *cfg,
	      const struct portals *portals, uint16_t port)
{
	char host[200];
	size_t i;

	memset(c, 0, sizeof(*c));
	c->loop = loop;
	c->cfg = cfg;
	c->portals = portals;
	c->port = port;
	c->w.fd = -1;
	c->listeners[0].w.fd = c->listeners[1].w.fd = -1;
	c->spare.fd = -1;
	for (i = 0; i < ISNS_SIDES; i++) {
		c->sides[i].w.fd = -1;
		c->sides[i].owner = c;
	}
	c->pv = calloc(portals->nr ? portals->nr : 1, sizeof(*c->pv));
	if (!c->pv)
		return -ENOMEM;
	c->cap_portals = portals->nr ? portals->nr : 1;
	/* One entity per ietd: its host and port make it the same each time. */
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(c->eid, sizeof(c->eid), "ietd:%s:%u", host, port);
	c->backoff_ms = ISNS_BACKOFF_MIN_MS;
	c->state = ISNS_OFF;
	isns_tick(c, now_ms());
	return 0;
}

void isns_tick(struct isns *c, uint64_t now)
{
	uint64_t fp = fingerprint(c->cfg);
	size_t i;

	apply_server(c, now);
	for (i = 0; i < 2; i++)
		if (c->listeners[i].paused &&
		    !loop_mod(c->loop, &c->listeners[i].w, EPOLLIN))
			c->listeners[i].paused = false;
	if (fp != c->fingerprint) {
		c->fingerprint = fp;
		c->dirty = true;
		if (!c->cfg->isns_access_control)
			isns_acl_clear();
	}
	for (i = 0; i < ISNS_SIDES; i++)
		if (c->sides[i].w.fd >= 0 && now >= c->sides[i].deadline)
			side_close(&c->sides[i]);
	switch (c->state) {
	case ISNS_OFF:
		return;
	case ISNS_WAIT:
		if (now >= c->retry_at)
			connect_start(c, now);
		return;
	case ISNS_CONNECTING:
		if (now >= c->deadline)
			disconnect(c, now, "connection timed out");
		return;
	case ISNS_UP:
		if (c->step != STEP_NONE && now >= c->deadline) {
			disconnect(c, now, "no answer in time");
			return;
		}
		next_step(c, now);
		return;
	}
}

void isns_reload(struct isns *c, uint64_t now)
{
	/* A name that did not resolve is looked up again. */
	if (c->server[0] && !c->resolved)
		c->server[0] = '\0';
	isns_tick(c, now);
}

void isns_stop(struct isns *c)
{
	struct pollfd pfd;
	uint64_t end = now_ms() + 1000, now;
	uint16_t xid;

	if (c->state == ISNS_UP && c->registered && c->source[0] &&
	    c->out_off >= c->out.len) {
		/* What was awaited is abandoned: only the deregistration. */
		xid = next_xid(c);
		c->stopping = true;
		c->step = STEP_DEREG;
		if (!isns_build_dereg(&c->out, xid, c->source, c->eid))
			c->out_off = 0;
		pfd.fd = c->w.fd;
		while (c->w.fd >= 0 && c->step == STEP_DEREG &&
		       (now = now_ms()) < end) {
			pfd.events = c->out_off < c->out.len ? POLLOUT : POLLIN;
			if (poll(&pfd, 1, (int)(end - now)) <= 0)
				break;
			on_server(&c->w, pfd.revents & POLLOUT ? EPOLLOUT :
				  EPOLLIN);
		}
		if (c->step == STEP_NONE && !c->registered)
			log_info("iSNS server %s: deregistered", srv_name(c));
	}
	c->state = ISNS_OFF;
	disconnect(c, now_ms(), "stopping");
	listener_close(c);
	isns_acl_clear();
	free(c->nodes);
	free(c->pv);
	c->nodes = NULL;
	c->pv = NULL;
	c->nr_nodes = 0;
}
