// SPDX-License-Identifier: GPL-2.0
/* Per-connection socket I/O: one PDU in, one PDU out, then hand-off. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "acl.h"
#include "backoff.h"
#include "conn.h"
#include "crc32c.h"
#include "discovery.h"
#include "handoff.h"
#include "log.h"
#include "login.h"
#include "pdu.h"
#include "peerlog.h"

#define AHS_MAX		(255 * 4)
#define TX_KEEP		(64u << 10)	/* kept between PDUs; more is freed */

enum conn_phase {
	PH_LOGIN,
	PH_DISCOVERY,
};

enum conn_after {
	AFTER_READ,		/* read the next PDU */
	AFTER_HANDOFF,		/* give the socket to the kernel */
	AFTER_DISCOVERY,	/* serve the discovery session */
	AFTER_CLOSE,
};

struct conn {
	struct watch w;
	struct server *srv;
	struct conn *next;
	struct conn **pprev;
	struct sockaddr_storage local;
	struct sockaddr_storage peer_addr;
	char peer[INET6_ADDRSTRLEN + 16];
	enum conn_phase phase;
	uint8_t bhs[BHS_LEN];
	size_t bhs_have;
	uint8_t *rest;			/* AHS, header digest, data, pad, data digest */
	size_t rest_len, rest_have, rest_cap;
	bool sized;			/* rest_len known for this PDU */
	bool oversize;			/* refused unread: the PDU's rest not read */
	bool hdigest, ddigest;
	uint8_t *tx;
	size_t tx_len, tx_off, tx_cap;
	bool out_armed;			/* waiting for EPOLLOUT */
	enum conn_after after;
	uint64_t accepted;
	uint64_t last_rx;		/* when its last PDU was complete */
	uint64_t active;		/* srv->activity then: which came last */
	bool got_pdu;			/* one PDU has come */
	bool authenticated;		/* a discovery session CHAP admitted */
	uint64_t deadline;		/* first PDU, login's end; discovery idle */
	uint64_t disc_end;		/* a discovery session's lifetime */
	struct login *login;
	struct disc *disc;
	struct reg_session *disc_session;	/* its TSIH reservation */
};

void server_init(struct server *srv, struct loop *loop, struct config *cfg,
		 struct registry *reg)
{
	memset(srv, 0, sizeof(*srv));
	srv->loop = loop;
	srv->cfg = cfg;
	srv->reg = reg;
	srv->first_pdu_ms = FIRST_PDU_MS;
	srv->login_timeout_ms = LOGIN_TIMEOUT_MS;
	srv->idle_timeout_ms = DISC_IDLE_MS;
	srv->disc_lifetime_ms = DISC_LIFETIME_MS;
	srv->max_conns = MAX_CONNS;
	srv->max_conns_per_addr = MAX_CONNS_PER_ADDR;
	srv->max_conns_per_net = MAX_CONNS_PER_NET;
	srv->disc_budget.max = DISC_ANSWERS_MAX;
}

/* The address as 16 bytes, IPv4 as IPv4-mapped; false if neither. */
bool peer_same_addr(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];
	int n = addr_bytes(a, x);

	return n && n == addr_bytes(b, y) && !memcmp(x, y, n);
}

bool peer_same_net(const struct sockaddr_storage *a,
		   const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];

	return addr_bytes(a, x) == 16 && addr_bytes(b, y) == 16 &&
	       !memcmp(x, y, 8);
}

static void name_peer(struct conn *c)
{
	const struct sockaddr_storage *ss = &c->peer_addr;
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned int port;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		port = ntohs(s4->sin_port);
		snprintf(c->peer, sizeof(c->peer), "%s:%u", a, port);
		return;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		port = ntohs(s6->sin6_port);
		snprintf(c->peer, sizeof(c->peer), "[%s]:%u", a, port);
		return;
	}
	snprintf(c->peer, sizeof(c->peer), "(unknown peer)");
}

/* Forget the connection; the descriptor is closed unless it was handed off. */
static void conn_free(struct conn *c, bool close_fd)
{
	struct server *srv = c->srv;

	if (close_fd) {
		loop_del(srv->loop, &c->w);
		close(c->w.fd);
	}
	*c->pprev = c->next;
	if (c->next)
		c->next->pprev = c->pprev;
	srv->nr_conns--;
	login_free(c->login);
	disc_free(c->disc);
	if (c->disc_session)
		registry_drop(srv->reg, c->disc_session);
	wipe(c->rest, c->rest_cap);
	free(c->rest);
	wipe(c->tx, c->tx_cap);
	free(c->tx);
	free(c);
}

/* A finished login whose response never got out keeps no TSIH or CID. */
static void conn_close(struct conn *c)
{
	if (c->login && (c->after == AFTER_HANDOFF ||
			 c->after == AFTER_DISCOVERY))
		login_release(c->login);
	conn_free(c, true);
}

static int want(struct conn *c, uint32_t events)
{
	int ret = loop_mod(c->srv->loop, &c->w, events);

	if (ret) {
		log_err("epoll: %s", strerror(-ret));
		conn_close(c);
	}
	return ret;
}

/*
 * A larger buffer for the next PDU, whose old contents are not needed:
 * they may hold CHAP values, so they are wiped, not left to the allocator.
 */
static int regrow(uint8_t **buf, size_t *cap, size_t len)
{
	uint8_t *nb;

	if (*cap >= len)
		return 0;
	nb = malloc(len);
	if (!nb)
		return -ENOMEM;
	wipe(*buf, *cap);
	free(*buf);
	*buf = nb;
	*cap = len;
	return 0;
}

static int tx_reserve(struct conn *c, size_t len)
{
	return regrow(&c->tx, &c->tx_cap, len);
}

/* Lay out a PDU with padding and, in discovery sessions, digests. */
static int queue_pdu(struct conn *c, const struct pdu_out *out)
{
	size_t pad = pdu_pad(out->dlen);
	size_t hd = c->hdigest ? DIGEST_LEN : 0;
	size_t dd = c->ddigest && out->dlen ? DIGEST_LEN : 0;
	size_t len = BHS_LEN + hd + out->dlen + pad + dd;
	uint8_t *p;

	if (tx_reserve(c, len))
		return -ENOMEM;
	p = c->tx;
	memcpy(p, out->bhs, BHS_LEN);
	p += BHS_LEN;
	if (hd) {
		crc32c_put(p, crc32c(out->bhs, BHS_LEN));
		p += hd;
	}
	if (out->dlen)
		memcpy(p, out->data, out->dlen);
	memset(p + out->dlen, 0, pad);
	if (dd)
		crc32c_put(p + out->dlen + pad, crc32c(p, out->dlen + pad));
	c->tx_len = len;
	c->tx_off = 0;
	return 0;
}

static void become_discovery(struct conn *c)
{
	const struct login_outcome *o = login_outcome(c->login);

	c->disc = disc_new(c->srv->cfg, o, &c->local);
	if (!c->disc) {
		log_err("out of memory for a discovery session");
		conn_close(c);
		return;
	}
	disc_set_access(c->disc, &c->peer_addr, c->srv->access_dirs);
	disc_set_budget(c->disc, &c->srv->disc_budget);
	c->disc_session = o->reserved;
	c->authenticated = *login_auth_info(c->login) != '\0';
	c->hdigest = o->keys[IET_KEY_HEADER_DIGEST] == IET_DIGEST_CRC32C;
	c->ddigest = o->keys[IET_KEY_DATA_DIGEST] == IET_DIGEST_CRC32C;
	log_dbg(1, "%s: discovery session of %s", c->peer, o->initiator);
	login_free(c->login);
	c->login = NULL;
	c->phase = PH_DISCOVERY;
	c->after = AFTER_READ;
	c->disc_end = now_ms() + c->srv->disc_lifetime_ms;
	c->deadline = now_ms() + c->srv->idle_timeout_ms;
	c->out_armed = false;
	want(c, EPOLLIN);
}

static void do_handoff(struct conn *c)
{
	struct server *srv = c->srv;
	const struct login_outcome *o = login_outcome(c->login);
	char err[512];
	int fd = c->w.fd, flags;

	/*
	 * The kernel keeps the open file: its epoll registration would
	 * outlive our close(), so remove it first. Blocking mode is what a
	 * kernel socket user expects of the file.
	 */
	loop_del(srv->loop, &c->w);
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (handoff(srv->reg, o, fd, err, sizeof(err))) {
		log_err("%s: login of %s to tid %u failed: %s", c->peer,
			o->initiator, o->tid, err);
		srv->failures++;
	} else {
		const char *auth = login_auth_info(c->login);

		log_info("%s: %s logged in to tid %u, sid %llu, cid %u%s%s%s",
			 c->peer, o->initiator, o->tid,
			 (unsigned long long)o->sid, o->cid,
			 o->leading ? "" : " (added connection)",
			 *auth ? ", " : "", auth);
		srv->logins++;
	}
	close(fd);
	conn_free(c, false);
}

static void tx_done(struct conn *c)
{
	switch (c->after) {
	case AFTER_READ:
		break;
	case AFTER_HANDOFF:
		do_handoff(c);
		break;
	case AFTER_DISCOVERY:
		become_discovery(c);
		break;
	case AFTER_CLOSE:
		conn_close(c);
		break;
	}
}

/* Returns -1 once the connection is gone. */
static int conn_write(struct conn *c)
{
	while (c->tx_off < c->tx_len) {
		ssize_t n = send(c->w.fd, c->tx + c->tx_off,
				 c->tx_len - c->tx_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				if (!c->out_armed) {
					if (want(c, EPOLLOUT))
						return -1;
					c->out_armed = true;
				}
				return 0;
			}
			peer_log(&c->peer_addr, LOG_INFO, "%s: send: %s",
				 c->peer, strerror(errno));
			conn_close(c);
			return -1;
		}
		c->tx_off += n;
	}
	c->tx_len = c->tx_off = 0;
	/* A long answer's piece is not held while the connection idles. */
	if (c->tx_cap > TX_KEEP) {
		wipe(c->tx, c->tx_cap);
		free(c->tx);
		c->tx = NULL;
		c->tx_cap = 0;
	}
	if (c->after != AFTER_READ) {
		tx_done(c);
		return -1;	/* not reading on: gone or another phase */
	}
	if (c->out_armed) {
		c->out_armed = false;
		if (want(c, EPOLLIN))
			return -1;
	}
	return 0;
}

static int send_pdu(struct conn *c, const struct pdu_out *out,
		    enum conn_after after)
{
	c->after = after;
	if (queue_pdu(c, out)) {
		log_err("%s: out of memory", c->peer);
		conn_close(c);
		return -1;
	}
	if (c->disc)
		disc_sent(c->disc);	/* out's data is in tx now */
	return conn_write(c);
}

/* Debug level 2: every PDU's header and text, for interoperability work. */
/* Whether the pair starting at p is a CHAP value that must not be logged. */
static bool secret_key(const uint8_t *p, size_t left)
{
	return left > 7 && (!memcmp(p, "CHAP_R=", 7) || !memcmp(p, "CHAP_C=", 7));
}

static void trace(const struct conn *c, const char *dir, const uint8_t *bhs,
		  const uint8_t *data, size_t dlen)
{
	static const char hidden[] = "CHAP_?=(hidden) ";
	char text[512];
	size_t i, n = 0, room = sizeof(text) - sizeof(hidden) - 4;

	if (log_level() < 2)
		return;
	for (i = 0; i < dlen && n < room; i++) {
		uint8_t ch = data[i];

		/* CHAP challenges and responses never reach the log. */
		if ((i == 0 || data[i - 1] == 0) && secret_key(data + i, dlen - i)) {
			memcpy(text + n, hidden, sizeof(hidden) - 1);
			text[n + 5] = data[i + 5];
			n += sizeof(hidden) - 1;
			while (i + 1 < dlen && data[i + 1])
				i++;
			i++;		/* and its NUL */
			continue;
		}
		text[n++] = ch == 0 ? ' ' : (ch < 0x20 || ch > 0x7e) ? '?' : ch;
	}
	if (i < dlen) {
		memcpy(text + n, "...", 3);
		n += 3;
	}
	text[n] = '\0';
	log_msg(LOG_DEBUG, "%s %s opcode 0x%02x flags 0x%02x len %zu: %s",
		c->peer, dir, bhs[0] & 0x3f, bhs[1], dlen, text);
}

static int login_step(struct conn *c, const uint8_t *data, size_t dlen)
{
	struct pdu_out out;
	enum login_result res;

	trace(c, "<-", c->bhs, data, dlen);
	res = login_pdu(c->login, c->bhs, data, dlen, &out);
	if (res != LOGIN_DROP)
		trace(c, "->", out.bhs, out.data, out.dlen);
	switch (res) {
	case LOGIN_CONTINUE:
		return send_pdu(c, &out, AFTER_READ);
	case LOGIN_DONE:
		if (*login_auth_info(c->login))
			backoff_passed(&c->peer_addr, login_scope(c->login),
				       now_ms());
		return send_pdu(c, &out, login_outcome(c->login)->discovery ?
				AFTER_DISCOVERY : AFTER_HANDOFF);
	case LOGIN_FAILED:
		c->srv->failures++;
		if (login_chap_wrong(c->login))
			backoff_failed(&c->peer_addr, login_scope(c->login),
				       now_ms());
		peer_log(&c->peer_addr, LOG_WARNING,
			 "%s: login%s%s refused: %s", c->peer,
			 *login_initiator(c->login) ? " of " : "",
			 login_initiator(c->login), login_error(c->login));
		return send_pdu(c, &out, AFTER_CLOSE);
	case LOGIN_DROP:
	default:
		c->srv->failures++;
		peer_log(&c->peer_addr, LOG_WARNING,
			 "%s: connection dropped: %s", c->peer,
			 login_error(c->login));
		conn_close(c);
		return -1;
	}
}

static int disc_step(struct conn *c, const uint8_t *data, size_t dlen)
{
	struct pdu_out out;
	enum disc_result res;

	c->deadline = now_ms() + c->srv->idle_timeout_ms;
	trace(c, "<-", c->bhs, data, dlen);
	res = disc_pdu(c->disc, c->bhs, data, dlen, &out);
	if (res == DISC_REPLY || res == DISC_REPLY_CLOSE)
		trace(c, "->", out.bhs, out.data, out.dlen);
	if (*disc_error(c->disc)) {
		peer_log(&c->peer_addr, LOG_INFO, "%s: discovery: %s",
			 c->peer, disc_error(c->disc));
	}
	switch (res) {
	case DISC_REPLY:
		return send_pdu(c, &out, AFTER_READ);
	case DISC_REPLY_CLOSE:
		return send_pdu(c, &out, AFTER_CLOSE);
	case DISC_NOTHING:
		return 0;
	case DISC_CLOSE:
	default:
		conn_close(c);
		return -1;
	}
}

/* The PDU is complete: check digests and hand it to its state machine. */
static int dispatch(struct conn *c)
{
	size_t ahs = c->oversize ? 0 : c->bhs[4] * 4;
	size_t hd = c->hdigest ? DIGEST_LEN : 0;
	uint32_t dl = (uint32_t)c->bhs[5] << 16 | c->bhs[6] << 8 | c->bhs[7];
	const uint8_t *data = c->rest ? c->rest + ahs + hd : NULL;
	size_t dlen = c->oversize ? 0 : dl;
	int ret;

	if (hd && !c->oversize) {
		/* The header digest covers the BHS and any AHS. */
		uint32_t crc = crc32c_continue(crc32c(c->bhs, BHS_LEN),
					       c->rest, ahs);

		if (crc != crc32c_get(c->rest + ahs)) {
			peer_log(&c->peer_addr, LOG_WARNING,
				 "%s: header digest error, closing", c->peer);
			conn_close(c);
			return -1;
		}
	}
	if (c->ddigest && dlen) {
		size_t padded = dlen + pdu_pad(dlen);

		if (crc32c(data, padded) != crc32c_get(data + padded)) {
			peer_log(&c->peer_addr, LOG_WARNING,
				 "%s: data digest error, closing", c->peer);
			conn_close(c);
			return -1;
		}
	}
	c->last_rx = now_ms();
	c->active = ++c->srv->activity;
	if (!c->got_pdu) {
		/* The first PDU came in time: the whole login may take longer. */
		c->got_pdu = true;
		if (c->phase == PH_LOGIN)
			c->deadline = c->accepted + c->srv->login_timeout_ms;
	}
	/* Ready for the next PDU; data stays valid until it is sized. */
	c->bhs_have = 0;
	c->rest_have = c->rest_len = 0;
	c->sized = false;
	c->oversize = false;
	if (c->phase == PH_LOGIN)
		ret = login_step(c, data, dlen);
	else
		ret = disc_step(c, data, dlen);
	return ret;
}

/* Work out how much follows the BHS; never more than our limits. */
static int size_rest(struct conn *c)
{
	size_t ahs = c->bhs[4] * 4;
	uint32_t dl = (uint32_t)c->bhs[5] << 16 | c->bhs[6] << 8 | c->bhs[7];
	size_t max = c->phase == PH_LOGIN ? LOGIN_DSL_MAX : disc_max_dsl(c->disc);
	size_t len;

	c->sized = true;
	/*
	 * Not read: the state machine refuses the PDU and we close. During
	 * login anything but a Login Request without AHS is refused, so its
	 * rest is not waited for either.
	 */
	if (dl > max || (c->phase == PH_LOGIN &&
			 ((c->bhs[0] & 0x3f) != OP_LOGIN_REQ || ahs))) {
		c->oversize = true;
		dl = 0;
		ahs = 0;
	}
	len = ahs + (c->hdigest ? DIGEST_LEN : 0) + dl + pdu_pad(dl) +
	      (c->ddigest && dl ? DIGEST_LEN : 0);
	if (regrow(&c->rest, &c->rest_cap, len)) {
		log_err("%s: out of memory", c->peer);
		conn_close(c);
		return -1;
	}
	c->rest_len = len;
	c->rest_have = 0;
	return 0;
}

/* Returns -1 once the connection is gone or stops reading. */
static int conn_read(struct conn *c)
{
	for (;;) {
		uint8_t *buf;
		size_t want_len;
		ssize_t n;

		if (c->bhs_have < BHS_LEN) {
			buf = c->bhs + c->bhs_have;
			want_len = BHS_LEN - c->bhs_have;
		} else {
			if (!c->sized && size_rest(c))
				return -1;
			if (c->rest_have == c->rest_len) {
				if (dispatch(c))
					return -1;
				if (c->tx_len)
					return 0;	/* wait for EPOLLOUT */
				continue;
			}
			buf = c->rest + c->rest_have;
			want_len = c->rest_len - c->rest_have;
		}
		/* Exactly what this PDU still needs: nothing of the next. */
		n = recv(c->w.fd, buf, want_len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			peer_log(&c->peer_addr, LOG_INFO, "%s: recv: %s",
				 c->peer, strerror(errno));
			conn_close(c);
			return -1;
		}
		if (n == 0) {
			log_dbg(1, "%s: connection closed by the initiator",
				c->peer);
			conn_close(c);
			return -1;
		}
		if (c->bhs_have < BHS_LEN)
			c->bhs_have += n;
		else
			c->rest_have += n;
	}
}

static void conn_event(struct watch *w, uint32_t events)
{
	struct conn *c = container_of(w, struct conn, w);

	(void)events;
	/* While an answer is being written, the next request waits. */
	if (c->tx_len && (conn_write(c) || c->tx_len))
		return;
	conn_read(c);
}

/*
 * Why a new connection from peer would exceed the limit of its address or
 * its /64, or NULL.
 */
static const char *over_limit(const struct server *srv,
			      const struct sockaddr_storage *peer)
{
	const struct conn *c;
	size_t addr = 0, net = 0;

	for (c = srv->conns; c; c = c->next) {
		if (peer_same_addr(&c->peer_addr, peer))
			addr++;
		if (peer_same_net(&c->peer_addr, peer))
			net++;
	}
	if (addr >= srv->max_conns_per_addr)
		return "connections in login or discovery from this address";
	if (net >= srv->max_conns_per_net)
		return "connections in login or discovery from this /64";
	return NULL;
}

/* Whether the source of peer (source_key()) has a connection in login. */
static bool in_login(const struct server *srv,
		     const struct sockaddr_storage *peer)
{
	uint8_t a[16], b[16];
	int len = source_key(peer, a);
	const struct conn *c;

	for (c = srv->conns; len && c; c = c->next)
		if (c->phase == PH_LOGIN && source_key(&c->peer_addr, b) == len &&
		    !memcmp(a, b, len))
			return true;
	return false;
}

/* Places held by each source (source_key()), for choosing whom to shed. */
#define SHED_SLOTS	4096	/* a power of two, above MAX_CONNS */

struct shed_slot {
	uint64_t gen;			/* in use in that pass; else free */
	uint8_t key[16];
	int len;			/* 0: a peer of no address family */
	unsigned int held;
};

/*
 * The slot of key in this pass (gen): found, or taken where the probe
 * meets a free one. Never full: fewer connections than slots.
 */
static struct shed_slot *shed_slot(struct shed_slot *t, uint64_t gen,
				   const uint8_t *key, int len)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < len; i++)
		h = (h ^ key[i]) * 16777619u;
	for (;; h++) {
		struct shed_slot *s = &t[h & (SHED_SLOTS - 1)];

		if (s->gen != gen) {
			s->gen = gen;
			s->len = len;
			memcpy(s->key, key, len);
			s->held = 0;
			return s;
		}
		if (s->len == len && !memcmp(s->key, key, len))
			return s;
	}
}

/*
 * All peers hold every place: one of those no CHAP admitted makes room,
 * of the source that holds the most of them (a flood's, not the one real
 * initiator's among it, however busy the flood keeps its connections),
 * the one idle longest; NULL if every one is a discovery session that
 * authenticated.
 */
static struct conn *idlest(const struct server *srv)
{
	static struct shed_slot table[SHED_SLOTS];
	static uint64_t gen;		/* a pass of its own: no clearing */
	struct conn *c, *victim = NULL;
	unsigned int most = 0;
	uint8_t key[16];

	if (srv->nr_conns >= SHED_SLOTS)	/* cannot be: MAX_CONNS */
		return NULL;
	gen++;
	for (c = srv->conns; c; c = c->next)
		if (!c->authenticated)
			shed_slot(table, gen, key,
				  source_key(&c->peer_addr, key))->held++;
	for (c = srv->conns; c; c = c->next) {
		unsigned int held;

		if (c->authenticated)
			continue;
		held = shed_slot(table, gen, key,
				 source_key(&c->peer_addr, key))->held;
		if (!victim || held > most ||
		    (held == most && c->active < victim->active)) {
			victim = c;
			most = held;
		}
	}
	return victim;
}

void server_accept(void *arg, int fd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	memset(&peer, 0, sizeof(peer));
	getpeername(fd, (struct sockaddr *)&peer, &len);
	server_accept_from(arg, fd, &peer);
}

void server_accept_from(struct server *srv, int fd,
			const struct sockaddr_storage *peer)
{
	unsigned int fails;
	char pause[128];
	uint64_t wait;
	const char *why;
	struct conn *c;
	socklen_t len;

	wait = backoff_check(peer, now_ms(), &fails);
	if (wait) {
		snprintf(pause, sizeof(pause),
			 "wrong CHAP responses from this source (%u): the next connection is taken in %llu ms",
			 fails, (unsigned long long)wait);
		why = pause;
	} else if (fails > BACKOFF_FREE && in_login(srv, peer)) {
		snprintf(pause, sizeof(pause),
			 "wrong CHAP responses from this source (%u): one login at a time",
			 fails);
		why = pause;
	} else {
		why = over_limit(srv, peer);
	}
	if (!why && srv->nr_conns >= srv->max_conns) {
		c = idlest(srv);
		if (c) {
			srv->evicted++;
			if (c->phase == PH_LOGIN)
				srv->failures++;
			peer_log(&c->peer_addr, LOG_WARNING,
				 "%s: closed, idle %llu ms: %u connections in login or discovery, the most (ietd(8), LIMITS)",
				 c->peer,
				 (unsigned long long)(now_ms() - c->last_rx),
				 srv->max_conns);
			conn_close(c);
		} else {
			why = "authenticated discovery sessions";
		}
	}
	if (why) {
		const struct sockaddr_in *s4 = (const void *)peer;
		const struct sockaddr_in6 *s6 = (const void *)peer;
		char a[INET6_ADDRSTRLEN] = "?";

		if (peer->ss_family == AF_INET)
			inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		else if (peer->ss_family == AF_INET6)
			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		srv->refused++;
		peer_log(peer, LOG_WARNING,
			 "%s: connection refused: %s%s (ietd(8), LIMITS)",
			 a, why == pause ? "" : "too many ", why);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->login = login_new(&(struct login_env){
			.cfg = srv->cfg, .reg = srv->reg,
			.peer = &c->peer_addr, .local = &c->local,
			.access_dirs = srv->access_dirs,
		}, srv->statsn_seed++);
	if (!c || !c->login) {
		log_err("out of memory for a connection");
		free(c);
		close(fd);
		return;
	}
	c->w.fd = fd;
	c->w.fn = conn_event;
	c->srv = srv;
	c->peer_addr = *peer;
	len = sizeof(c->local);
	getsockname(fd, (struct sockaddr *)&c->local, &len);
	name_peer(c);
	c->accepted = c->last_rx = now_ms();
	c->active = ++srv->activity;
	c->deadline = c->accepted + (srv->first_pdu_ms < srv->login_timeout_ms ?
				     srv->first_pdu_ms : srv->login_timeout_ms);
	c->next = srv->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &srv->conns;
	srv->conns = c;
	srv->nr_conns++;
	if (loop_add(srv->loop, &c->w, EPOLLIN)) {
		log_err("epoll: %s", strerror(errno));
		conn_free(c, false);
		close(fd);
		return;
	}
	log_dbg(1, "%s: connected", c->peer);
}

void server_tick(struct server *srv, uint64_t now)
{
	struct conn *c = srv->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->phase == PH_DISCOVERY && now >= c->disc_end) {
			/* A PDU a minute must not keep one open for ever. */
			peer_log(&c->peer_addr, LOG_INFO,
				 "%s: discovery session closed after %u s",
				 c->peer, srv->disc_lifetime_ms / 1000);
			conn_close(c);
			continue;
		}
		if (now < c->deadline)
			continue;
		if (c->phase == PH_LOGIN) {
			srv->failures++;
			peer_log(&c->peer_addr, LOG_WARNING, "%s: %s", c->peer,
				 c->got_pdu ? "login timed out" :
				 "no Login Request in time, closing");
		} else {
			log_dbg(1, "%s: idle discovery session closed", c->peer);
		}
		conn_close(c);
	}
}

void server_close_all(struct server *srv)
{
	while (srv->conns)
		conn_close(srv->conns);
}
