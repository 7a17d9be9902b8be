// SPDX-License-Identifier: GPL-2.0
/* iSNSP messages: built into a bounded buffer, parsed without trust. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "be.h"
#include "isns_pdu.h"

void isns_msg_start(struct isns_msg *m, uint16_t func, uint16_t flags,
		    uint16_t xid)
{
	memset(m->buf, 0, ISNS_HDR_LEN);
	put16(m->buf, ISNS_VERSION);
	put16(m->buf + 2, func);
	put16(m->buf + 6, flags | ISNS_F_CLIENT | ISNS_F_FIRST | ISNS_F_LAST);
	put16(m->buf + 8, xid);
	m->len = ISNS_HDR_LEN;
	m->overflow = false;
}

/* Room for an attribute of vlen value bytes (already padded)? */
static uint8_t *put_tlv(struct isns_msg *m, uint32_t tag, size_t vlen)
{
	uint8_t *p;

	if (m->overflow || vlen > ISNS_SEND_MAX ||
	    ISNS_SEND_MAX - m->len < 8 + vlen) {
		m->overflow = true;
		return NULL;
	}
	p = m->buf + m->len;
	put32(p, tag);
	put32(p + 4, vlen);
	memset(p + 8, 0, vlen);
	m->len += 8 + vlen;
	return p + 8;
}

void isns_put_u32(struct isns_msg *m, uint32_t tag, uint32_t v)
{
	uint8_t *p = put_tlv(m, tag, 4);

	if (p)
		put32(p, v);
}

void isns_put_str(struct isns_msg *m, uint32_t tag, const char *s)
{
	size_t n = strnlen(s, ISNS_NAME_MAX + 1);
	uint8_t *p;

	if (n > ISNS_NAME_MAX) {
		m->overflow = true;
		return;
	}
	if (!n) {
		isns_put_nil(m, tag);
		return;
	}
	/* The NUL, then padding to 4 bytes. */
	p = put_tlv(m, tag, (n + 1 + 3) & ~(size_t)3);
	if (p)
		memcpy(p, s, n);
}

void isns_put_nil(struct isns_msg *m, uint32_t tag)
{
	put_tlv(m, tag, 0);
}

void isns_put_addr(struct isns_msg *m, uint32_t tag,
		   const struct sockaddr_storage *ss)
{
	uint8_t *p = put_tlv(m, tag, 16);

	if (!p)
		return;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		p[10] = 0xff;
		p[11] = 0xff;
		memcpy(p + 12, &s4->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		memcpy(p, &s6->sin6_addr, 16);
	}
}

int isns_msg_end(struct isns_msg *m)
{
	if (m->overflow || m->len > ISNS_SEND_MAX)
		return -EMSGSIZE;
	put16(m->buf + 4, m->len - ISNS_HDR_LEN);
	return 0;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return ntohs(s4->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(s6->sin6_port);
	return 0;
}

static void put_portal(struct isns_msg *m, const struct isns_entity *e,
		       const struct isns_portal *p)
{
	isns_put_addr(m, ISNS_T_PORTAL_ADDR, &p->addr);
	isns_put_u32(m, ISNS_T_PORTAL_PORT, port_of(&p->addr));
	if (e->scn_port) {
		isns_put_u32(m, ISNS_T_SCN_PORT, e->scn_port);
		if (e->esi_interval && e->esi_port) {
			isns_put_u32(m, ISNS_T_ESI_INTERVAL, e->esi_interval);
			isns_put_u32(m, ISNS_T_ESI_PORT, e->esi_port);
		}
	}
}

/* A node, then a portal group object for it on each portal (6.5). */
static void put_node(struct isns_msg *m, const struct isns_entity *e,
		     const struct isns_node *n)
{
	size_t i;

	isns_put_str(m, ISNS_T_ISCSI_NAME, n->name);
	isns_put_u32(m, ISNS_T_NODE_TYPE, ISNS_NODE_TARGET);
	if (n->alias[0])
		isns_put_str(m, ISNS_T_ALIAS, n->alias);
	for (i = 0; i < e->nr_portals; i++) {
		const struct isns_portal *p = &e->portals[i];

		isns_put_str(m, ISNS_T_PG_NAME, n->name);
		isns_put_addr(m, ISNS_T_PG_ADDR, &p->addr);
		isns_put_u32(m, ISNS_T_PG_PORT, port_of(&p->addr));
		isns_put_u32(m, ISNS_T_PG_TAG, p->tag);
	}
}

int isns_build_reg(struct isns_msg *m, uint16_t xid,
		   const struct isns_entity *e, size_t first)
{
	size_t i, n = 0, mark;

	if (first >= e->nr_nodes)
		return -EINVAL;
	isns_msg_start(m, ISNS_DEV_ATTR_REG, first ? 0 : ISNS_F_REPLACE, xid);
	/* A new entity's first node may be the source of its registration. */
	isns_put_str(m, ISNS_T_ISCSI_NAME, e->nodes[0].name);
	isns_put_str(m, ISNS_T_EID, e->eid);
	isns_put_nil(m, ISNS_T_DELIMITER);
	isns_put_str(m, ISNS_T_EID, e->eid);
	isns_put_u32(m, ISNS_T_ENTITY_PROTOCOL, ISNS_PROTOCOL_ISCSI);
	if (!first)
		for (i = 0; i < e->nr_portals; i++)
			put_portal(m, e, &e->portals[i]);
	if (m->overflow)
		return -EMSGSIZE;
	for (i = first; i < e->nr_nodes; i++) {
		mark = m->len;
		put_node(m, e, &e->nodes[i]);
		if (m->overflow) {
			/* Not this one: the next registration takes it. */
			m->len = mark;
			m->overflow = false;
			break;
		}
		n++;
	}
	if (!n)
		return -EMSGSIZE;
	return isns_msg_end(m) ? -EMSGSIZE : (int)n;
}

int isns_build_scn_reg(struct isns_msg *m, uint16_t xid, const char *name)
{
	isns_msg_start(m, ISNS_SCN_REG, 0, xid);
	isns_put_str(m, ISNS_T_ISCSI_NAME, name);
	isns_put_str(m, ISNS_T_ISCSI_NAME, name);
	isns_put_nil(m, ISNS_T_DELIMITER);
	isns_put_u32(m, ISNS_T_SCN_BITMAP, ISNS_SCN_TARGET_EVENTS);
	return isns_msg_end(m);
}

int isns_build_dd_query(struct isns_msg *m, uint16_t xid, const char *target)
{
	/*
	 * Every DD visible to the target, with all its attributes: open-isns
	 * answers a query naming DD Member iSCSI Name with the first member
	 * of each domain only, so the operating attributes stay empty.
	 */
	isns_msg_start(m, ISNS_DEV_ATTR_QRY, 0, xid);
	isns_put_str(m, ISNS_T_ISCSI_NAME, target);
	isns_put_nil(m, ISNS_T_DD_ID);
	isns_put_nil(m, ISNS_T_DELIMITER);
	return isns_msg_end(m);
}

int isns_build_refresh(struct isns_msg *m, uint16_t xid, const char *source,
		       const char *eid)
{
	isns_msg_start(m, ISNS_DEV_ATTR_REG, 0, xid);
	isns_put_str(m, ISNS_T_ISCSI_NAME, source);
	isns_put_str(m, ISNS_T_EID, eid);
	isns_put_nil(m, ISNS_T_DELIMITER);
	isns_put_str(m, ISNS_T_EID, eid);
	isns_put_u32(m, ISNS_T_ENTITY_PROTOCOL, ISNS_PROTOCOL_ISCSI);
	return isns_msg_end(m);
}

int isns_build_dereg(struct isns_msg *m, uint16_t xid, const char *source,
		     const char *eid)
{
	isns_msg_start(m, ISNS_DEV_DEREG, 0, xid);
	isns_put_str(m, ISNS_T_ISCSI_NAME, source);
	isns_put_nil(m, ISNS_T_DELIMITER);
	isns_put_str(m, ISNS_T_EID, eid);
	return isns_msg_end(m);
}

int isns_hdr_parse(const uint8_t *b, size_t len, struct isns_hdr *h)
{
	if (len < ISNS_HDR_LEN)
		return -EAGAIN;
	h->version = get16(b);
	h->func = get16(b + 2);
	h->len = get16(b + 4);
	h->flags = get16(b + 6);
	h->xid = get16(b + 8);
	h->seq = get16(b + 10);
	if (h->version != ISNS_VERSION || (h->len & 3) ||
	    h->len > ISNS_PAYLOAD_MAX)
		return -EPROTO;
	if ((h->flags & (ISNS_F_FIRST | ISNS_F_LAST)) !=
	    (ISNS_F_FIRST | ISNS_F_LAST) || h->seq || (h->flags & ISNS_F_AUTH))
		return -EPROTO;
	return 0;
}

void isns_iter_init(struct isns_iter *it, const uint8_t *p, size_t len)
{
	it->p = p;
	it->left = len;
}

int isns_iter_next(struct isns_iter *it, struct isns_tlv *t)
{
	uint32_t len;

	if (!it->left)
		return 0;
	if (it->left < 8)
		return -EBADMSG;
	len = get32(it->p + 4);
	/* Compared with what is left, never added to a pointer first. */
	if (len > it->left - 8)
		return -EBADMSG;
	t->tag = get32(it->p);
	t->len = len;
	t->val = it->p + 8;
	it->p += 8 + (size_t)len;
	it->left -= 8 + (size_t)len;
	return 1;
}

bool isns_tlv_name(const struct isns_tlv *t, const char **s)
{
	const uint8_t *nul;
	size_t i, n;

	if (!t->len)
		return false;
	nul = memchr(t->val, 0, t->len);
	if (!nul)
		return false;
	n = nul - t->val;
	if (!n || n > ISNS_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (t->val[i] <= ' ' || t->val[i] >= 0x7f)
			return false;
	*s = (const char *)t->val;
	return true;
}

bool isns_tlv_u32(const struct isns_tlv *t, uint32_t *v)
{
	if (t->len != 4)
		return false;
	*v = get32(t->val);
	return true;
}

int isns_response(const uint8_t *payload, size_t len, uint32_t *status,
		  struct isns_iter *it)
{
	if (len < 4)
		return -EBADMSG;
	*status = get32(payload);
	isns_iter_init(it, payload + 4, len - 4);
	return 0;
}

void isns_names_free(struct isns_names *n)
{
	free(n->v);
	n->v = NULL;
	n->nr = 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcasecmp(a, b);
}

bool isns_names_has(const struct isns_names *n, const char *name)
{
	return n->nr && bsearch(name, n->v, n->nr, sizeof(*n->v), name_cmp);
}

/* One domain's members, gathered until the next domain begins. */
struct dd {
	size_t first;			/* its members in out->v from here */
	bool has_target;
};

/* Keep the members of a domain that listed the target; drop the rest. */
static void dd_close(struct dd *d, struct isns_names *out)
{
	if (!d->has_target)
		out->nr = d->first;
	d->first = out->nr;
	d->has_target = false;
}

int isns_dd_members(struct isns_iter *it, const char *target,
		    struct isns_names *out)
{
	struct isns_tlv t;
	struct dd d = { 0 };
	char (*shrunk)[ISNS_NAME_MAX + 1];
	bool ops = false, in_dd = false;
	const char *s;
	size_t i, j;
	int ret;

	out->v = NULL;
	out->nr = 0;
	while ((ret = isns_iter_next(it, &t)) > 0) {
		/* The message key comes back first: skip to the delimiter. */
		if (!ops) {
			ops = t.tag == ISNS_T_DELIMITER;
			continue;
		}
		if (t.tag == ISNS_T_DD_ID) {
			if (in_dd)
				dd_close(&d, out);
			in_dd = true;
			continue;
		}
		if (t.tag != ISNS_T_DD_MEMBER_NAME || !in_dd)
			continue;
		if (!isns_tlv_name(&t, &s)) {
			ret = -EBADMSG;
			break;
		}
		if (!strcasecmp(s, target)) {
			d.has_target = true;
			continue;
		}
		if (out->nr == ISNS_MEMBERS_MAX) {
			ret = -E2BIG;
			break;
		}
		if (!out->v) {
			out->v = calloc(ISNS_MEMBERS_MAX, sizeof(*out->v));
			if (!out->v) {
				ret = -ENOMEM;
				break;
			}
		}
		strcpy(out->v[out->nr++], s);
	}
	if (ret < 0) {
		isns_names_free(out);
		return ret;
	}
	if (in_dd)
		dd_close(&d, out);
	if (!out->nr) {
		isns_names_free(out);
		return 0;
	}
	qsort(out->v, out->nr, sizeof(*out->v), name_cmp);
	for (i = 1, j = 0; i < out->nr; i++)
		if (strcasecmp(out->v[i], out->v[j]))
			memmove(out->v[++j], out->v[i], sizeof(*out->v));
	out->nr = j + 1;
	/* Kept per target: only the room the names take. */
	shrunk = realloc(out->v, out->nr * sizeof(*out->v));
	if (shrunk)
		out->v = shrunk;
	return 0;
}

uint32_t isns_reg_period(struct isns_iter *it)
{
	struct isns_tlv t;
	uint32_t v = 0;

	while (isns_iter_next(it, &t) > 0)
		if (t.tag == ISNS_T_REG_PERIOD && isns_tlv_u32(&t, &v))
			return v;
	return 0;
}

int isns_scn_parse(const uint8_t *payload, size_t len, char *dest,
		   size_t destlen)
{
	struct isns_iter it;
	struct isns_tlv t;
	const char *s;

	isns_iter_init(&it, payload, len);
	if (isns_iter_next(&it, &t) != 1 || t.tag != ISNS_T_ISCSI_NAME ||
	    !isns_tlv_name(&t, &s) || strlen(s) >= destlen)
		return -EBADMSG;
	strcpy(dest, s);
	return 0;
}

static void start_rsp(struct isns_msg *m, uint16_t func, uint16_t xid)
{
	isns_msg_start(m, func | ISNS_RESPONSE, 0, xid);
	memset(m->buf + m->len, 0, 4);	/* status: success */
	m->len += 4;
}

int isns_build_scn_rsp(struct isns_msg *m, uint16_t xid, const char *dest)
{
	start_rsp(m, ISNS_SCN, xid);
	isns_put_str(m, ISNS_T_ISCSI_NAME, dest);
	return isns_msg_end(m);
}

int isns_build_esi_rsp(struct isns_msg *m, uint16_t xid,
		       const uint8_t *payload, size_t len)
{
	struct isns_iter it;
	struct isns_tlv t;
	int ret;

	if (len > ISNS_SEND_MAX - ISNS_HDR_LEN - 4)
		return -EMSGSIZE;
	isns_iter_init(&it, payload, len);
	while ((ret = isns_iter_next(&it, &t)) > 0)
		;
	if (ret < 0)
		return -EBADMSG;
	start_rsp(m, ISNS_ESI, xid);
	memcpy(m->buf + m->len, payload, len);
	m->len += len;
	return isns_msg_end(m);
}
