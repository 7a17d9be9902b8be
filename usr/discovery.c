// SPDX-License-Identifier: GPL-2.0
/* SendTargets, Logout and NOP in discovery sessions. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl_cache.h"
#include "isns_acl.h"
#include "discovery.h"
#include "params.h"

#define DISC_TEXT_MAX	(4u << 20)	/* every target of a large config */

struct disc {
	const struct config *cfg;
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	bool has_peer;
	const char *access_dirs;
	char initiator[IET_NAME_MAX + 1];
	uint16_t cid;
	uint32_t statsn;		/* of the next response */
	uint32_t exp_cmdsn;
	uint32_t xmit_max;		/* the initiator's MaxRecvDataSegmentLength */
	uint32_t recv_max;		/* ours */
	struct textbuf in;		/* request text until C=0 */
	struct textbuf out;		/* response text, sent in pieces */
	size_t out_off;
	struct disc_budget *budget;	/* out's memory counts here */
	size_t charged;			/* what it counts */
	uint32_t itt;			/* of the exchange in progress */
	uint32_t ttt;			/* we expect back, RSVD_TAG if none */
	uint32_t next_ttt;
	uint8_t rejected[BHS_LEN];
	char err[256];
};

struct disc *disc_new(const struct config *cfg, const struct login_outcome *o,
		      const struct sockaddr_storage *local)
{
	struct disc *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = cfg;
	d->local = *local;
	snprintf(d->initiator, sizeof(d->initiator), "%s", o->initiator);
	d->cid = o->cid;
	d->statsn = o->statsn;
	d->exp_cmdsn = o->exp_cmdsn;
	d->xmit_max = o->keys[IET_KEY_MAX_XMIT_DSL];
	d->recv_max = o->keys[IET_KEY_MAX_RECV_DSL];
	d->ttt = RSVD_TAG;
	d->next_ttt = 1;
	textbuf_init(&d->in, TEXT_SET_MAX);
	textbuf_init(&d->out, DISC_TEXT_MAX);
	return d;
}

/* The answer is over (sent, refused or abandoned): its memory goes. */
static void answer_free(struct disc *d)
{
	if (d->budget)
		d->budget->used -= d->charged;
	d->charged = 0;
	textbuf_free(&d->out);
	d->out_off = 0;
}

void disc_free(struct disc *d)
{
	if (!d)
		return;
	textbuf_free(&d->in);
	answer_free(d);
	free(d);
}

void disc_set_budget(struct disc *d, struct disc_budget *b)
{
	d->budget = b;
}

void disc_sent(struct disc *d)
{
	if (d->out.cap && d->out_off >= d->out.len && d->ttt == RSVD_TAG)
		answer_free(d);
}

void disc_set_access(struct disc *d, const struct sockaddr_storage *peer,
		     const char *access_dirs)
{
	if (peer) {
		d->peer = *peer;
		d->has_peer = true;
	}
	d->access_dirs = access_dirs;
}

size_t disc_max_dsl(const struct disc *d)
{
	return d->recv_max;
}

const char *disc_error(const struct disc *d)
{
	return d->err;
}

int format_portal(const struct sockaddr_storage *ss, uint16_t tag, char *buf,
		  size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u,%u", a, ntohs(s4->sin_port), tag);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], a,
				  sizeof(a));
			snprintf(buf, len, "%s:%u,%u", a,
				 ntohs(s6->sin6_port), tag);
			return 0;
		}
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u,%u", a, ntohs(s6->sin6_port),
			 tag);
		return 0;
	}
	return -1;
}

uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* A group's portal as a socket address: one on every address, the local. */
static int portal_sockaddr(const struct portal_addr *p,
			   const struct sockaddr_storage *local,
			   struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (void *)ss;
	struct sockaddr_in *s4 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (!p->addr[0]) {
		if (!local)
			return -1;
		*ss = *local;
		if (ss->ss_family == AF_INET6)
			s6->sin6_port = htons(p->port);
		else
			s4->sin_port = htons(p->port);
		return 0;
	}
	if (inet_pton(AF_INET, p->addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(p->port);
		return 0;
	}
	if (inet_pton(AF_INET6, p->addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(p->port);
		return 0;
	}
	return -1;
}

uint16_t portal_tag_of(const struct config *cfg,
		       const struct sockaddr_storage *local)
{
	uint8_t here[16], there[16];
	struct sockaddr_storage ss;
	int n = addr_bytes(local, here);
	size_t i, j;

	if (!cfg->nr_groups)
		return 1;
	if (!n)
		return 0;
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct portal_group *g = &cfg->groups[i];

		for (j = 0; j < g->nr_portals; j++)
			if (!portal_sockaddr(&g->portals[j], local, &ss) &&
			    n == addr_bytes(&ss, there) &&
			    !memcmp(here, there, n) &&
			    sockaddr_port(&ss) == sockaddr_port(local))
				return g->tag;
	}
	return 0;
}

/* TargetAddress: every portal of every group the access files leave open. */
static int target_addresses(const struct config *cfg, const struct access *a,
			    const char *target,
			    const struct sockaddr_storage *local,
			    struct textbuf *out)
{
	char portal[INET6_ADDRSTRLEN + 16];
	struct sockaddr_storage ss;
	size_t i, j;

	if (!cfg->nr_groups) {
		if (!local || format_portal(local, 1, portal, sizeof(portal)))
			return 0;
		return textbuf_add(out, "TargetAddress", portal);
	}
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct portal_group *g = &cfg->groups[i];

		for (j = 0; j < g->nr_portals; j++) {
			if (portal_sockaddr(&g->portals[j], local, &ss) ||
			    !access_portal(a, target, &ss) ||
			    format_portal(&ss, g->tag, portal, sizeof(portal)))
				continue;
			if (textbuf_add(out, "TargetAddress", portal))
				return -ENOSPC;
		}
	}
	return 0;
}

int sendtargets(const struct config *cfg, const char *what,
		const struct st_who *who, struct textbuf *out, char *err,
		size_t errlen)
{
	bool all = !strcmp(what, "All");
	const struct access *a;
	size_t i;

	if (!*what)
		return 0;
	/* As they are now: a change to the files applies to this request. */
	a = access_cached(who->access_dirs, err, errlen);
	if (!a)
		return -EACCES;
	for (i = 0; i < cfg->nr_targets; i++) {
		const struct target_conf *t = &cfg->targets[i];

		if (!all && strcasecmp(t->name, what))
			continue;
		/*
		 * Logins to it are refused until it is configured again, or
		 * while it is being deleted.
		 */
		if (t->origin == ORIGIN_KERNEL || t->deleting)
			continue;
		if (!access_portal(a, t->name, who->local) ||
		    !access_initiator(a, t->name, who->initiator, who->peer))
			continue;
		/* Hidden unless the iSNS server says they share a domain. */
		if (cfg->isns_access_control &&
		    isns_acl_check(t->name, who->initiator) != ISNS_ADMIT)
			continue;
		if (textbuf_add(out, "TargetName", t->name) ||
		    target_addresses(cfg, a, t->name, who->local, out))
			return -ENOSPC;
	}
	return 0;
}

static void window(struct disc *d, uint32_t *statsn, uint32_t *exp,
		   uint32_t *max)
{
	*statsn = d->statsn++;
	*exp = d->exp_cmdsn;
	*max = d->exp_cmdsn;	/* one command at a time is all discovery needs */
}

static void advance(struct disc *d, bool immediate, uint32_t cmdsn)
{
	if (!immediate)
		d->exp_cmdsn = cmdsn + 1;
}

static enum disc_result reject(struct disc *d, const uint8_t *bhs,
			       uint8_t reason, struct pdu_out *out,
			       const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static enum disc_result reject(struct disc *d, const uint8_t *bhs,
			       uint8_t reason, struct pdu_out *out,
			       const char *fmt, ...)
{
	struct reject r = { .reason = reason };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	window(d, &r.statsn, &r.exp_cmdsn, &r.max_cmdsn);
	reject_encode(&r, out->bhs);
	memcpy(d->rejected, bhs, BHS_LEN);
	out->data = d->rejected;
	out->dlen = BHS_LEN;
	return DISC_REPLY;
}

static uint32_t new_ttt(struct disc *d)
{
	d->ttt = d->next_ttt++;
	if (d->next_ttt == RSVD_TAG)
		d->next_ttt = 1;
	return d->ttt;
}

/*
 * The next piece of the response text (a Text Response of up to
 * xmit_max), or with ack an empty one asking for the rest of the request
 * (RFC 7143 11.10.2).
 */
static enum disc_result text_piece(struct disc *d, const struct text_req *req,
				   bool ack, struct pdu_out *out)
{
	size_t left = d->out.len - d->out_off;
	size_t n = left > d->xmit_max ? d->xmit_max : left;
	struct text_rsp r;

	memset(&r, 0, sizeof(r));
	memcpy(r.lun, req->lun, sizeof(r.lun));
	r.itt = d->itt;
	r.cont = left > n;
	r.final = !r.cont && !ack;
	if (r.final)
		d->ttt = RSVD_TAG;
	else
		new_ttt(d);
	r.ttt = d->ttt;
	r.dlength = n;
	window(d, &r.statsn, &r.exp_cmdsn, &r.max_cmdsn);
	text_rsp_encode(&r, out->bhs);
	out->data = n ? (const uint8_t *)d->out.buf + d->out_off : NULL;
	out->dlen = n;
	d->out_off += n;
	return DISC_REPLY;
}

static enum disc_result text_req(struct disc *d, const uint8_t *bhs,
				 const uint8_t *data, size_t dlen,
				 struct pdu_out *out)
{
	struct text_req req;
	struct text_list tl;
	const char *why = "";
	char perr[192];
	size_t i, n;

	if (text_req_decode(bhs, &req, &why))
		return reject(d, bhs, REJECT_INVALID_FIELD, out,
			      "malformed Text Request: %s", why);
	advance(d, req.immediate, req.cmdsn);

	if (req.ttt != RSVD_TAG) {
		if (req.ttt != d->ttt || req.itt != d->itt)
			return reject(d, bhs, REJECT_INVALID_FIELD, out,
				      "Text Request continues no exchange (TTT 0x%x)",
				      req.ttt);
		if (d->out_off < d->out.len) {
			if (dlen)
				return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
					      "text while the target's response continues");
			return text_piece(d, &req, false, out);
		}
	} else {
		/* A new exchange; one left unfinished is abandoned. */
		textbuf_reset(&d->in);
		d->itt = req.itt;
	}
	if (textbuf_append(&d->in, data, dlen))
		return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
			      "text request longer than %d bytes", TEXT_SET_MAX);
	answer_free(d);
	if (req.cont)
		return text_piece(d, &req, true, out);

	if (text_parse(d->in.buf, d->in.len, &tl, perr, sizeof(perr))) {
		textbuf_reset(&d->in);
		return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
			      "bad text: %s", perr);
	}
	textbuf_reset(&d->in);
	/* One answer a request: each SendTargets costs a walk of the config. */
	for (i = 0, n = 0; i < tl.nr; i++)
		if (!strcmp(tl.pairs[i].key, "SendTargets") && ++n > 1) {
			text_list_free(&tl);
			return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
				      "more than one SendTargets key in a Text Request");
		}
	d->out.max = DISC_TEXT_MAX;
	if (d->budget && d->budget->max - d->budget->used < d->out.max)
		d->out.max = d->budget->max - d->budget->used;
	for (i = 0; i < tl.nr; i++) {
		const struct text_pair *p = &tl.pairs[i];
		const struct key_def *k = key_find(p->key);

		if (k && !strcmp(k->name, "SendTargets") && !p->too_long) {
			struct st_who who = {
				.initiator = d->initiator,
				.peer = d->has_peer ? &d->peer : NULL,
				.local = &d->local,
				.access_dirs = d->access_dirs,
			};
			char why[320];

			if (sendtargets(d->cfg, p->value, &who, &d->out, why,
					sizeof(why)) == -EACCES)
				snprintf(d->err, sizeof(d->err),
					 "SendTargets answered empty: %.200s",
					 why);
		} else
			textbuf_add(&d->out, p->key,
				    k ? "Reject" : "NotUnderstood");
	}
	text_list_free(&tl);
	if (d->out.overflow) {
		size_t max = d->out.max;

		answer_free(d);
		if (max < DISC_TEXT_MAX)
			return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
				      "text response longer than the %zu KiB the answers of all discovery sessions have left",
				      max >> 10);
		return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
			      "text response longer than %u KiB",
			      DISC_TEXT_MAX >> 10);
	}
	d->charged = d->out.cap;
	if (d->budget)
		d->budget->used += d->charged;
	return text_piece(d, &req, false, out);
}

static enum disc_result logout(struct disc *d, const uint8_t *bhs,
			       struct pdu_out *out)
{
	struct logout_req req;
	struct logout_rsp rsp;
	const char *why = "";
	bool close = false;

	if (logout_req_decode(bhs, &req, &why))
		return reject(d, bhs, REJECT_INVALID_FIELD, out,
			      "malformed Logout Request: %s", why);
	advance(d, req.immediate, req.cmdsn);
	memset(&rsp, 0, sizeof(rsp));
	rsp.itt = req.itt;
	if (req.reason == 0 || (req.reason == 1 && req.cid == d->cid)) {
		rsp.response = LOGOUT_OK;
		close = true;
	} else if (req.reason == 1) {
		rsp.response = LOGOUT_CID_NOT_FOUND;
	} else {
		rsp.response = LOGOUT_NO_RECOVERY;
	}
	window(d, &rsp.statsn, &rsp.exp_cmdsn, &rsp.max_cmdsn);
	logout_rsp_encode(&rsp, out->bhs);
	return close ? DISC_REPLY_CLOSE : DISC_REPLY;
}

static enum disc_result nop(struct disc *d, const uint8_t *bhs,
			    const uint8_t *data, size_t dlen,
			    struct pdu_out *out)
{
	struct nop_out req;
	struct nop_in rsp;
	const char *why = "";

	if (nop_out_decode(bhs, &req, &why))
		return reject(d, bhs, REJECT_INVALID_FIELD, out,
			      "malformed NOP-Out: %s", why);
	advance(d, req.immediate, req.cmdsn);
	/* No answer wanted (ITT reserved), or it answers a ping of ours. */
	if (req.itt == RSVD_TAG || req.ttt != RSVD_TAG)
		return DISC_NOTHING;
	memset(&rsp, 0, sizeof(rsp));
	memcpy(rsp.lun, req.lun, sizeof(rsp.lun));
	rsp.itt = req.itt;
	rsp.ttt = RSVD_TAG;
	rsp.dlength = dlen > d->xmit_max ? d->xmit_max : dlen;
	window(d, &rsp.statsn, &rsp.exp_cmdsn, &rsp.max_cmdsn);
	nop_in_encode(&rsp, out->bhs);
	out->data = data;
	out->dlen = rsp.dlength;
	return DISC_REPLY;
}

enum disc_result disc_pdu(struct disc *d, const uint8_t *bhs,
			  const uint8_t *data, size_t dlen,
			  struct pdu_out *out)
{
	struct bhs_common c;

	memset(out, 0, sizeof(*out));
	d->err[0] = '\0';
	bhs_common_decode(bhs, &c);
	if (c.dlength != dlen || dlen > d->recv_max) {
		snprintf(d->err, sizeof(d->err),
			 "data segment of %u bytes exceeds %u", c.dlength,
			 d->recv_max);
		return DISC_CLOSE;
	}
	switch (c.opcode) {
	case OP_TEXT_REQ:
		return text_req(d, bhs, data, dlen, out);
	case OP_LOGOUT_REQ:
		return logout(d, bhs, out);
	case OP_NOP_OUT:
		return nop(d, bhs, data, dlen, out);
	case OP_SCSI_CMD:
	case OP_TMF_REQ:
	case OP_DATA_OUT:
	case OP_SNACK:
	case OP_LOGIN_REQ:
		return reject(d, bhs, REJECT_PROTOCOL_ERROR, out,
			      "opcode 0x%02x not allowed in a discovery session",
			      c.opcode);
	default:
		return reject(d, bhs, REJECT_NOT_SUPPORTED, out,
			      "unknown opcode 0x%02x", c.opcode);
	}
}
