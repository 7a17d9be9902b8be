// SPDX-License-Identifier: GPL-2.0
/* The login key table and RFC 7143 negotiation result functions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "params.h"

#define YES_NO(b)	((b) ? "Yes" : "No")

static const struct key_def key_table[] = {
	{ "InitiatorName", KEY_DECL_INITIATOR, 0, 0, 0, 0, 0, 0 },
	{ "InitiatorAlias", KEY_DECL_INITIATOR, 0, 0, 0, 0, 0, 0 },
	{ "TargetName", KEY_DECL_INITIATOR, 0, 0, 0, 0, 0, 0 },
	{ "SessionType", KEY_DECL_INITIATOR, 0, KF_LO, 0, 0, 0, 0 },
	{ "TargetAlias", KEY_DECL_TARGET, 0, 0, 0, 0, 0, 0 },
	{ "TargetAddress", KEY_DECL_TARGET, 0, 0, 0, 0, 0, 0 },
	{ "TargetPortalGroupTag", KEY_DECL_TARGET, 0, 0, 0, 0, 0, 0 },
	{ "AuthMethod", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "CHAP_A", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "CHAP_I", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "CHAP_C", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "CHAP_N", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "CHAP_R", KEY_AUTH, 0, 0, 0, 0, 0, 0 },
	{ "SendTargets", KEY_FFP, 0, 0, 0, 0, 0, 0 },
	{ "HeaderDigest", KEY_DIGEST, IET_KEY_HEADER_DIGEST, 0,
	  0, 0, IET_DIGEST_NONE, 0 },
	{ "DataDigest", KEY_DIGEST, IET_KEY_DATA_DIGEST, 0,
	  0, 0, IET_DIGEST_NONE, 0 },
	{ "MaxConnections", KEY_NUM_MIN, IET_KEY_MAX_CONNECTIONS,
	  KF_LO | KF_NO_DISC, 1, 65535, 1, 0 },
	{ "InitialR2T", KEY_BOOL_OR, IET_KEY_INITIAL_R2T,
	  KF_LO | KF_NO_DISC, 0, 1, 1, 0 },
	{ "ImmediateData", KEY_BOOL_AND, IET_KEY_IMMEDIATE_DATA,
	  KF_LO | KF_NO_DISC, 0, 1, 1, 0 },
	{ "MaxRecvDataSegmentLength", KEY_NUM_DECL, IET_KEY_MAX_RECV_DSL, 0,
	  DSL_MIN, DSL_MAX, DSL_DEFAULT, 0 },
	{ "MaxBurstLength", KEY_NUM_MIN, IET_KEY_MAX_BURST,
	  KF_LO | KF_NO_DISC, DSL_MIN, DSL_MAX, 262144, 0 },
	{ "FirstBurstLength", KEY_NUM_MIN, IET_KEY_FIRST_BURST,
	  KF_LO | KF_NO_DISC, DSL_MIN, DSL_MAX, 65536, 0 },
	{ "DefaultTime2Wait", KEY_NUM_MAX, IET_KEY_DEFAULT_TIME2WAIT, KF_LO,
	  0, 3600, 2, 0 },
	{ "DefaultTime2Retain", KEY_NUM_MIN, IET_KEY_DEFAULT_TIME2RETAIN,
	  KF_LO, 0, 3600, 20, 0 },
	{ "MaxOutstandingR2T", KEY_NUM_MIN, IET_KEY_MAX_OUTSTANDING_R2T,
	  KF_LO | KF_NO_DISC, 1, 65535, 1, 0 },
	{ "DataPDUInOrder", KEY_BOOL_OR, IET_KEY_DATA_PDU_INORDER,
	  KF_LO | KF_NO_DISC, 0, 1, 1, 0 },
	{ "DataSequenceInOrder", KEY_BOOL_OR, IET_KEY_DATA_SEQUENCE_INORDER,
	  KF_LO | KF_NO_DISC, 0, 1, 1, 0 },
	{ "ErrorRecoveryLevel", KEY_NUM_MIN, IET_KEY_ERROR_RECOVERY_LEVEL,
	  KF_LO, 0, 2, 0, 0 },
	/* Markers are obsolete (RFC 7143 13.25); "No" is the AND answer. */
	{ "OFMarker", KEY_BOOL_AND, 0, 0, 0, 1, 0, 0 },
	{ "IFMarker", KEY_BOOL_AND, 0, 0, 0, 1, 0, 0 },
	{ "OFMarkInt", KEY_ALWAYS_REJECT, 0, 0, 0, 0, 0, 0 },
	{ "IFMarkInt", KEY_ALWAYS_REJECT, 0, 0, 0, 0, 0, 0 },
	{ "TaskReporting", KEY_TASK_REPORTING, 0, KF_LO | KF_NO_DISC,
	  0, 0, 0, 0 },
	{ "iSCSIProtocolLevel", KEY_NUM_MIN, 0, KF_LO, 0, 31, 0,
	  PROTOCOL_LEVEL },
	/* iSER (RFC 7145) needs an RDMA transport we do not have. */
	{ "RDMAExtensions", KEY_BOOL_AND, 0, KF_LO, 0, 1, 0, 0 },
};

#define NR_KEYS	(sizeof(key_table) / sizeof(key_table[0]))
_Static_assert(NR_KEYS <= 64, "seen/offered are 64-bit masks");

const struct key_def *key_find(const char *name)
{
	size_t i;

	/* Key names are case-sensitive (RFC 7143 6.1). */
	for (i = 0; i < NR_KEYS; i++)
		if (!strcmp(key_table[i].name, name))
			return &key_table[i];
	return NULL;
}

bool key_is_operational(const struct key_def *k)
{
	return k->kind >= KEY_BOOL_OR;
}

static uint64_t key_bit(const struct key_def *k)
{
	return 1ull << (k - key_table);
}

int parse_number(const char *s, uint64_t *v)
{
	uint64_t n = 0;
	int base = 10, digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EINVAL;
		if (n > (UINT64_MAX - d) / base)
			return -ERANGE;
		n = n * base + d;
	}
	if (!digits)
		return -EINVAL;
	*v = n;
	return 0;
}

int parse_bool(const char *s, bool *v)
{
	if (!strcmp(s, "Yes"))
		*v = true;
	else if (!strcmp(s, "No"))
		*v = false;
	else
		return -EINVAL;
	return 0;
}

static uint32_t limit_of(const struct neg *n, const struct key_def *k)
{
	return k->idx ? n->limits[k->idx] : k->ours;
}

static bool irrelevant(const struct neg *n, const struct key_def *k)
{
	return (n->discovery && (k->flags & KF_NO_DISC)) ||
	       (!n->leading && (k->flags & KF_LO));
}

void neg_init(struct neg *n, const uint32_t *limits, bool discovery,
	      bool leading)
{
	size_t i;

	memset(n, 0, sizeof(*n));
	n->limits = limits;
	n->discovery = discovery;
	n->leading = leading;
	for (i = 0; i < NR_KEYS; i++)
		if (key_table[i].idx)
			n->val[key_table[i].idx] = key_table[i].def;
	n->val[IET_KEY_MAX_XMIT_DSL] = DSL_DEFAULT;
	n->init_mrdsl = DSL_DEFAULT;
}

int neg_mark_seen(struct neg *n, const struct key_def *k)
{
	if (n->seen & key_bit(k)) {
		snprintf(n->err, sizeof(n->err),
			 "key %s sent twice in one login", k->name);
		return -1;
	}
	n->seen |= key_bit(k);
	return 0;
}

/* Digest names in a list; unknown values are skipped (RFC 7143 6.2.1). */
static int parse_digest_list(const char *s, uint32_t *mask, int *order,
			     int *nr)
{
	*mask = 0;
	*nr = 0;
	while (1) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);

		if (len == 0)
			return -EINVAL;
		if (len == 4 && !strncmp(s, "None", 4)) {
			*mask |= DIGEST_MASK_NONE;
			order[(*nr)++] = IET_DIGEST_NONE;
		} else if (len == 6 && !strncmp(s, "CRC32C", 6)) {
			*mask |= DIGEST_MASK_CRC32C;
			order[(*nr)++] = IET_DIGEST_CRC32C;
		}
		if (*nr >= 64)
			return -EINVAL;
		if (!end)
			return 0;
		s = end + 1;
	}
}

static const char *digest_name(uint32_t d)
{
	return d == IET_DIGEST_CRC32C ? "CRC32C" : "None";
}

static void format_value(const struct key_def *k, uint32_t v, char *buf,
			 size_t len)
{
	switch (k->kind) {
	case KEY_BOOL_OR:
	case KEY_BOOL_AND:
		snprintf(buf, len, "%s", YES_NO(v));
		break;
	case KEY_DIGEST:
		if (v == DIGEST_MASK_CRC32C)
			snprintf(buf, len, "CRC32C");
		else if (v == (DIGEST_MASK_NONE | DIGEST_MASK_CRC32C))
			snprintf(buf, len, "CRC32C,None");
		else
			snprintf(buf, len, "None");
		break;
	default:
		snprintf(buf, len, "%u", v);
		break;
	}
}

static void store(struct neg *n, const struct key_def *k, uint32_t v)
{
	if (k->idx)
		n->val[k->idx] = v;
	else if (!strcmp(k->name, "iSCSIProtocolLevel"))
		n->protocol_level = v;
}

/* Parse a value of a boolean or numerical key; -1 if malformed or out of range. */
static int parse_scalar(const struct key_def *k, const char *value,
			uint32_t *v)
{
	uint64_t num;
	bool b;

	if (k->kind == KEY_BOOL_OR || k->kind == KEY_BOOL_AND) {
		if (parse_bool(value, &b))
			return -1;
		*v = b;
		return 0;
	}
	if (parse_number(value, &num) || num < k->min || num > k->max)
		return -1;
	*v = num;
	return 0;
}

static bool is_special_answer(const char *value)
{
	return !strcmp(value, "Reject") || !strcmp(value, "NotUnderstood") ||
	       !strcmp(value, "Irrelevant");
}

/* The initiator answers an offer of ours: valid iff f(offer, answer) == answer. */
static int take_answer(struct neg *n, const struct key_def *k,
		       const char *value)
{
	uint32_t offer = limit_of(n, k), v;
	int order[64], nr;
	bool ok;

	n->offered &= ~key_bit(k);
	n->seen |= key_bit(k);
	if (is_special_answer(value))
		return 0;	/* default stays; neg_finish judges it */

	if (k->kind == KEY_DIGEST) {
		uint32_t mask;

		if (strchr(value, ',') ||
		    parse_digest_list(value, &mask, order, &nr) || nr != 1 ||
		    !(offer & mask))
			goto invalid;
		store(n, k, order[0]);
		return 0;
	}
	if (parse_scalar(k, value, &v))
		goto invalid;
	switch (k->kind) {
	case KEY_BOOL_OR:
		ok = (offer || v) == v;
		break;
	case KEY_BOOL_AND:
		ok = (offer && v) == v;
		break;
	case KEY_NUM_MIN:
		ok = v <= offer;
		break;
	case KEY_NUM_MAX:
		ok = v >= offer;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		goto invalid;
	store(n, k, v);
	return 0;
invalid:
	snprintf(n->err, sizeof(n->err),
		 "invalid answer %s=%.64s to the target's offer", k->name,
		 value);
	return -1;
}

int neg_operational(struct neg *n, const struct key_def *k, const char *value,
		    bool too_long, struct textbuf *out)
{
	uint32_t lim = limit_of(n, k), v, res;
	int order[64], nr, i;
	char buf[32];

	if (n->offered & key_bit(k))
		return take_answer(n, k, value);
	if (neg_mark_seen(n, k))
		return -1;
	if (irrelevant(n, k))
		return textbuf_add(out, k->name, "Irrelevant") ? -1 : 0;
	if (too_long)
		return textbuf_add(out, k->name, "Reject") ? -1 : 0;

	switch (k->kind) {
	case KEY_ALWAYS_REJECT:
		return textbuf_add(out, k->name, "Reject") ? -1 : 0;
	case KEY_TASK_REPORTING: {
		const char *s = value;
		bool found = false;

		while (*s) {
			size_t len = strcspn(s, ",");

			if (len == 7 && !strncmp(s, "RFC3720", 7))
				found = true;
			s += len;
			if (*s)
				s++;
		}
		return textbuf_add(out, k->name,
				   found ? "RFC3720" : "Reject") ? -1 : 0;
	}
	case KEY_DIGEST: {
		uint32_t mask;

		if (parse_digest_list(value, &mask, order, &nr))
			return textbuf_add(out, k->name, "Reject") ? -1 : 0;
		for (i = 0; i < nr; i++) {
			if (lim & (1u << order[i])) {
				store(n, k, order[i]);
				return textbuf_add(out, k->name,
						   digest_name(order[i])) ?
				       -1 : 0;
			}
		}
		return textbuf_add(out, k->name, "Reject") ? -1 : 0;
	}
	case KEY_NUM_DECL:
		if (parse_scalar(k, value, &v))
			return textbuf_add(out, k->name, "Reject") ? -1 : 0;
		/* Declarative: no answer; it bounds what we send. */
		n->init_mrdsl = v;
		return 0;
	case KEY_BOOL_OR:
	case KEY_BOOL_AND:
	case KEY_NUM_MIN:
	case KEY_NUM_MAX:
		if (parse_scalar(k, value, &v))
			return textbuf_add(out, k->name, "Reject") ? -1 : 0;
		if (k->kind == KEY_BOOL_OR)
			res = v || lim;
		else if (k->kind == KEY_BOOL_AND)
			res = v && lim;
		else if (k->kind == KEY_NUM_MAX)
			res = v > lim ? v : lim;
		else
			res = v < lim ? v : lim;
		/*
		 * FirstBurstLength must not exceed MaxBurstLength (RFC 7143
		 * 13.14): cap it by what MaxBurstLength is so far.
		 */
		if (k->idx == IET_KEY_FIRST_BURST &&
		    res > n->val[IET_KEY_MAX_BURST])
			res = n->val[IET_KEY_MAX_BURST];
		store(n, k, res);
		format_value(k, res, buf, sizeof(buf));
		return textbuf_add(out, k->name, buf) ? -1 : 0;
	default:
		snprintf(n->err, sizeof(n->err), "%s is not an operational key",
			 k->name);
		return -1;
	}
}

/* Does the RFC default of k fail to give what the target is configured to? */
static bool needs_offer(const struct neg *n, const struct key_def *k)
{
	uint32_t lim;

	if (!k->idx || (n->seen | n->offered) & key_bit(k) || irrelevant(n, k))
		return false;
	lim = n->limits[k->idx];
	switch (k->kind) {
	case KEY_BOOL_OR:
	case KEY_BOOL_AND:
	case KEY_NUM_MIN:
	case KEY_NUM_MAX:
		return lim != k->def;
	case KEY_DIGEST:
		return !(lim & (1u << k->def));
	default:
		return false;
	}
}

bool neg_wants_operational(const struct neg *n)
{
	size_t i;

	if (!n->declared && n->limits[IET_KEY_MAX_RECV_DSL] < DSL_DEFAULT)
		return true;
	for (i = 0; i < NR_KEYS; i++)
		if (needs_offer(n, &key_table[i]))
			return true;
	return false;
}

int neg_offers(struct neg *n, struct textbuf *out)
{
	char buf[32];
	size_t i;
	int count = 0;

	for (i = 0; i < NR_KEYS; i++) {
		const struct key_def *k = &key_table[i];

		if (!needs_offer(n, k))
			continue;
		format_value(k, n->limits[k->idx], buf, sizeof(buf));
		if (textbuf_add(out, k->name, buf))
			return -1;
		n->offered |= key_bit(k);
		count++;
	}
	return count;
}

const char *neg_pending_key(const struct neg *n)
{
	size_t i;

	for (i = 0; i < NR_KEYS; i++)
		if (n->offered & key_bit(&key_table[i]))
			return key_table[i].name;
	return NULL;
}

int neg_declare(struct neg *n, struct textbuf *out)
{
	if (n->declared)
		return 0;
	if (textbuf_addu(out, "MaxRecvDataSegmentLength",
			 n->limits[IET_KEY_MAX_RECV_DSL]))
		return -1;
	n->declared = true;
	return 0;
}

int neg_finish(struct neg *n, uint32_t *keys)
{
	char want[32], got[32];
	size_t i;

	for (i = 0; i < NR_KEYS; i++) {
		const struct key_def *k = &key_table[i];
		uint32_t lim, v;
		bool ok;

		if (!k->idx || k->kind == KEY_NUM_DECL || irrelevant(n, k))
			continue;
		lim = n->limits[k->idx];
		v = n->val[k->idx];
		switch (k->kind) {
		case KEY_BOOL_OR:
			ok = v || !lim;
			break;
		case KEY_BOOL_AND:
			ok = !v || lim;
			break;
		case KEY_NUM_MIN:
			ok = v <= lim;
			break;
		case KEY_NUM_MAX:
			ok = v >= lim;
			break;
		case KEY_DIGEST:
			ok = lim & (1u << v);
			break;
		default:
			ok = true;
			break;
		}
		if (!ok) {
			format_value(k, lim, want, sizeof(want));
			if (k->kind == KEY_DIGEST)
				snprintf(got, sizeof(got), "%s", digest_name(v));
			else
				format_value(k, v, got, sizeof(got));
			snprintf(n->err, sizeof(n->err),
				 "%s=%s left by the initiator, the target requires %s",
				 k->name, got, want);
			return -1;
		}
	}
	/* FirstBurstLength is irrelevant when no unsolicited data is allowed. */
	if (n->leading && !n->discovery &&
	    !(n->val[IET_KEY_INITIAL_R2T] && !n->val[IET_KEY_IMMEDIATE_DATA]) &&
	    n->val[IET_KEY_FIRST_BURST] > n->val[IET_KEY_MAX_BURST]) {
		snprintf(n->err, sizeof(n->err),
			 "FirstBurstLength=%u exceeds MaxBurstLength=%u",
			 n->val[IET_KEY_FIRST_BURST], n->val[IET_KEY_MAX_BURST]);
		return -1;
	}
	memcpy(keys, n->val, sizeof(n->val));
	keys[IET_KEY_UNSPEC] = 0;
	keys[IET_KEY_MAX_RECV_DSL] = n->declared ?
		n->limits[IET_KEY_MAX_RECV_DSL] : DSL_DEFAULT;
	keys[IET_KEY_MAX_XMIT_DSL] =
		n->init_mrdsl < n->limits[IET_KEY_MAX_XMIT_DSL] ?
		n->init_mrdsl : n->limits[IET_KEY_MAX_XMIT_DSL];
	return 0;
}

const char *iet_key_name(unsigned int idx)
{
	size_t i;

	if (idx == IET_KEY_MAX_XMIT_DSL)
		return "MaxXmitDataSegmentLength";	/* IET's extension */
	for (i = 0; i < NR_KEYS; i++)
		if (key_table[i].idx == idx && idx)
			return key_table[i].name;
	return NULL;
}

void iet_key_format(unsigned int idx, uint32_t val, bool is_mask, char *buf,
		    size_t len)
{
	switch (idx) {
	case IET_KEY_INITIAL_R2T:
	case IET_KEY_IMMEDIATE_DATA:
	case IET_KEY_DATA_PDU_INORDER:
	case IET_KEY_DATA_SEQUENCE_INORDER:
		snprintf(buf, len, "%s", YES_NO(val));
		break;
	case IET_KEY_HEADER_DIGEST:
	case IET_KEY_DATA_DIGEST:
		if (!is_mask)
			snprintf(buf, len, "%s", digest_name(val));
		else if (val == (DIGEST_MASK_NONE | DIGEST_MASK_CRC32C))
			snprintf(buf, len, "None,CRC32C");
		else if (val == DIGEST_MASK_CRC32C)
			snprintf(buf, len, "CRC32C");
		else
			snprintf(buf, len, "None");
		break;
	default:
		snprintf(buf, len, "%u", val);
		break;
	}
}
