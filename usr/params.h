/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iSCSI login keys (RFC 7143 section 13, RFC 7144, RFC 7145) and their
 * negotiation: one table says what each key is, a negotiation state applies
 * the result functions, answers the initiator, makes the target's own
 * offers and checks the outcome against the target's configuration.
 */
#ifndef IET_USR_PARAMS_H
#define IET_USR_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "text.h"

#define PROTOCOL_LEVEL		1	/* RFC 7143 (RFC 7144 section 2.1) */
#define DSL_MIN			512
#define DSL_MAX			16777215
#define DSL_DEFAULT		8192

enum key_kind {
	KEY_DECL_INITIATOR,	/* InitiatorName, TargetName, ...: login.c */
	KEY_DECL_TARGET,	/* only a target sends these */
	KEY_AUTH,		/* AuthMethod, CHAP_*: security stage */
	KEY_FFP,		/* SendTargets: full feature phase only */
	KEY_BOOL_OR,
	KEY_BOOL_AND,
	KEY_NUM_MIN,
	KEY_NUM_MAX,
	KEY_NUM_DECL,		/* MaxRecvDataSegmentLength */
	KEY_DIGEST,		/* list: None, CRC32C */
	KEY_TASK_REPORTING,	/* list: RFC3720, ResponseFence, FastAbort */
	KEY_ALWAYS_REJECT,	/* OFMarkInt, IFMarkInt (RFC 7143 13.25) */
};

#define KF_LO		0x01	/* leading only: Irrelevant elsewhere */
#define KF_NO_DISC	0x02	/* Irrelevant in discovery sessions */

struct key_def {
	const char *name;
	enum key_kind kind;
	uint8_t idx;		/* enum iet_key, or 0 when the kernel needs none */
	uint8_t flags;
	uint32_t min, max;
	uint32_t def;		/* RFC default; for digests an iet_digest */
	uint32_t ours;		/* the target's value when idx is 0 */
};

const struct key_def *key_find(const char *name);
/* Operational keys are negotiated in the operational stage only. */
bool key_is_operational(const struct key_def *k);

/* Parse an RFC 7143 numerical value: decimal or 0x-hex. */
int parse_number(const char *s, uint64_t *v);
/* Yes / No exactly as RFC 7143 spells them. */
int parse_bool(const char *s, bool *v);

struct neg {
	const uint32_t *limits;		/* the target's keys[] */
	bool discovery;
	bool leading;
	uint32_t val[IET_KEY_COUNT];	/* negotiated so far, RFC defaults */
	uint64_t seen;			/* keys the initiator has sent */
	uint64_t offered;		/* target offers awaiting an answer */
	bool declared;			/* our MaxRecvDataSegmentLength */
	uint32_t init_mrdsl;		/* the initiator's declaration */
	uint32_t protocol_level;
	char err[160];			/* why negotiation failed */
};

void neg_init(struct neg *n, const uint32_t *limits, bool discovery,
	      bool leading);
/*
 * Record that the initiator sent key k; -1 (n->err set) if it already did
 * in this login, which fails the login (RFC 7143 6.2).
 */
int neg_mark_seen(struct neg *n, const struct key_def *k);
/*
 * Negotiate one operational key the initiator sent, appending the answer
 * (if the key needs one) to out. Returns 0, or -1 with n->err set when the
 * login must fail (a duplicate key, an invalid answer to a target offer).
 */
int neg_operational(struct neg *n, const struct key_def *k, const char *value,
		    bool too_long, struct textbuf *out);
/*
 * Would the target need the operational stage for its own offers or its
 * MaxRecvDataSegmentLength declaration?
 */
bool neg_wants_operational(const struct neg *n);
/*
 * Append the target's offers for keys whose RFC default the configuration
 * does not accept and the initiator has not sent; the count of new offers.
 * Called when the initiator asks to leave the operational stage, so that
 * everything it wanted to propose has been proposed.
 */
int neg_offers(struct neg *n, struct textbuf *out);
/* Declare our MaxRecvDataSegmentLength once; no answer is expected. */
int neg_declare(struct neg *n, struct textbuf *out);
static inline bool neg_pending(const struct neg *n)
{
	return n->offered != 0;
}
/* The name of a key offered and not answered yet, or NULL. */
const char *neg_pending_key(const struct neg *n);
/*
 * Check the outcome against the target's limits (FirstBurstLength <=
 * MaxBurstLength included) and produce the kernel's keys[]: negotiated
 * values, digests as enum iet_digest, MAX_RECV_DSL as declared,
 * MAX_XMIT_DSL as the initiator's declaration capped by the target's.
 */
int neg_finish(struct neg *n, uint32_t *keys);

/* RFC names of the kernel keys, for ietadm and logs. */
const char *iet_key_name(unsigned int idx);
/* Format a value: Yes/No, None/CRC32C (a mask when is_mask), numbers. */
void iet_key_format(unsigned int idx, uint32_t val, bool is_mask, char *buf,
		    size_t len);

#endif
