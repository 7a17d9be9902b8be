/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CHAP (RFC 1994) as iSCSI logins use it (RFC 7143 12.1.3): algorithms by
 * their IANA numbers, the binary-value encodings of RFC 7143 6.1, and the
 * target's side of one-way and mutual authentication as two pure steps.
 * Digests come from OpenSSL's libcrypto; random bytes from getrandom(2)
 * unless a test gives its own source.
 */
#ifndef IET_USR_CHAP_H
#define IET_USR_CHAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "text.h"

#define CHAP_DIGEST_MAX		32	/* SHA-256 and SHA3-256 */
/* The largest challenge an initiator may send in mutual CHAP. */
#define CHAP_CHALLENGE_MAX	1024

struct chap_alg {
	unsigned int id;		/* IANA number: enum chap_alg_id */
	const char *name;		/* for logs: "SHA-256" */
	size_t len;			/* digest length in bytes */
};

/* The algorithm with that IANA number, or NULL if unknown. */
const struct chap_alg *chap_alg_by_id(unsigned int id);
/* Whether this libcrypto computes it (a FIPS build may lack MD5). */
bool chap_alg_available(const struct chap_alg *a);

/*
 * Decode a binary value: "0x" hex (an odd digit count means a leading 0)
 * or "0b" base64. Fails on anything else, on an empty value and on more
 * than max bytes; the length is checked before anything is decoded.
 */
int chap_decode(const char *value, uint8_t *out, size_t max, size_t *len);
/* "0x" and lower-case hex; -ENOSPC if out is too small. */
int chap_encode(const uint8_t *in, size_t len, char *out, size_t outlen);

/* H(id || secret || challenge) into out (alg->len bytes). */
int chap_digest(const struct chap_alg *a, uint8_t id, const char *secret,
		const uint8_t *challenge, size_t clen, uint8_t *out);

typedef int (*chap_random_fn)(void *buf, size_t len);
/* getrandom(2), the kernel's random source. */
int chap_random(void *buf, size_t len);

enum chap_stage {
	CHAP_WANT_A,			/* waiting for CHAP_A */
	CHAP_WANT_R,			/* challenge sent, waiting for CHAP_R */
	CHAP_DONE,			/* the initiator is authenticated */
	CHAP_FAILED,
};

/* One CHAP exchange of a login, target side. */
struct chap {
	enum chap_stage stage;
	const struct auth *auth;	/* accounts of the scope, not owned */
	uint32_t algs;			/* CHAP_ALG_BIT()s allowed */
	chap_random_fn rnd;
	const struct chap_alg *alg;
	uint8_t id;
	uint8_t challenge[CHAP_DIGEST_MAX];
	size_t clen;
	char user[CHAP_NAME_MAX + 1];	/* who authenticated */
	bool mutual;
	bool reject_a;			/* answer CHAP_A=Reject */
	char err[192];			/* why it failed; never a secret */
};

void chap_init(struct chap *c, const struct auth *auth, uint32_t algs,
	       chap_random_fn rnd);
/*
 * The initiator's CHAP_A list: pick the first algorithm of it that is
 * allowed and available, and append CHAP_A, CHAP_I and CHAP_C. -1 with
 * c->err set (and c->reject_a when no algorithm fits) on failure.
 */
int chap_challenge(struct chap *c, const char *algs, struct textbuf *out);
/*
 * The initiator's answer: CHAP_N and CHAP_R, with CHAP_I and CHAP_C when
 * it wants mutual CHAP (NULL when absent). Verifies the response in
 * constant time; for mutual CHAP refuses a reflected challenge and a
 * secret used both ways, then appends CHAP_N and CHAP_R. -1 with c->err.
 */
int chap_verify(struct chap *c, const char *n, const char *r, const char *i,
		const char *ch, struct textbuf *out);
/* Forget the challenge and everything derived from a secret. */
void chap_wipe(struct chap *c);

#endif
