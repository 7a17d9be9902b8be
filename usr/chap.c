// SPDX-License-Identifier: GPL-2.0
/* CHAP algorithms, binary values and the target's side of the exchange. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "chap.h"
#include "params.h"

/*
 * IANA "PPP Authentication Algorithms": 5 MD5, 6 SHA-1, 7 SHA-256,
 * 8 SHA3-256 (RFC 7143 12.1.3 refers to it). IET and tgt had 7 wrong.
 */
static const struct chap_alg algs[] = {
	{ CHAP_MD5, "MD5", 16 },
	{ CHAP_SHA1, "SHA-1", 20 },
	{ CHAP_SHA256, "SHA-256", 32 },
	{ CHAP_SHA3_256, "SHA3-256", 32 },
};

const struct chap_alg *chap_alg_by_id(unsigned int id)
{
	size_t i;

	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].id == id)
			return &algs[i];
	return NULL;
}

static const EVP_MD *md_of(const struct chap_alg *a)
{
	switch (a->id) {
	case CHAP_MD5:
		return EVP_md5();
	case CHAP_SHA1:
		return EVP_sha1();
	case CHAP_SHA256:
		return EVP_sha256();
	case CHAP_SHA3_256:
		return EVP_sha3_256();
	default:
		return NULL;
	}
}

int chap_digest(const struct chap_alg *a, uint8_t id, const char *secret,
		const uint8_t *challenge, size_t clen, uint8_t *out)
{
	const EVP_MD *md = md_of(a);
	EVP_MD_CTX *ctx;
	unsigned int len = 0;
	int ok;

	if (!md)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, md, NULL) &&
	     EVP_DigestUpdate(ctx, &id, 1) &&
	     EVP_DigestUpdate(ctx, secret, strlen(secret)) &&
	     EVP_DigestUpdate(ctx, challenge, clen) &&
	     EVP_DigestFinal_ex(ctx, out, &len);
	/* The context held the secret. */
	EVP_MD_CTX_free(ctx);
	return ok && len == a->len ? 0 : -EIO;
}

bool chap_alg_available(const struct chap_alg *a)
{
	uint8_t out[CHAP_DIGEST_MAX];

	return chap_digest(a, 0, "", (const uint8_t *)"", 0, out) == 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static int decode_hex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(s), i, o = 0;
	bool odd = n & 1;

	if (!n || (n + 1) / 2 > max)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (hexval(s[i]) < 0)
			return -EINVAL;
	i = 0;
	if (odd)
		out[o++] = hexval(s[i++]);
	for (; i < n; i += 2)
		out[o++] = hexval(s[i]) << 4 | hexval(s[i + 1]);
	*len = o;
	return 0;
}

/* RFC 4648 base64 with its padding, nothing else tolerated. */
static int decode_b64(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(s), i, o = 0, pad = 0;

	if (!n || n % 4 || n / 4 * 3 > max + 2)
		return -EINVAL;
	if (s[n - 1] == '=')
		pad = s[n - 2] == '=' ? 2 : 1;
	if (n / 4 * 3 - pad > max || n / 4 * 3 - pad == 0)
		return -EINVAL;
	for (i = 0; i < n; i += 4) {
		int v[4], k;
		uint32_t w;

		for (k = 0; k < 4; k++) {
			bool last = i + 4 == n;

			if (s[i + k] == '=' && last && k >= 4 - (int)pad)
				v[k] = 0;
			else if ((v[k] = b64val(s[i + k])) < 0)
				return -EINVAL;
		}
		w = v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
		out[o++] = w >> 16;
		if (i + 4 < n || pad < 2)
			out[o++] = w >> 8;
		if (i + 4 < n || pad < 1)
			out[o++] = w;
	}
	*len = o;
	return 0;
}

int chap_decode(const char *value, uint8_t *out, size_t max, size_t *len)
{
	if (value[0] != '0')
		return -EINVAL;
	if (value[1] == 'x' || value[1] == 'X')
		return decode_hex(value + 2, out, max, len);
	if (value[1] == 'b' || value[1] == 'B')
		return decode_b64(value + 2, out, max, len);
	return -EINVAL;
}

int chap_encode(const uint8_t *in, size_t len, char *out, size_t outlen)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (outlen < 2 * len + 3)
		return -ENOSPC;
	out[0] = '0';
	out[1] = 'x';
	for (i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[in[i] >> 4];
		out[3 + 2 * i] = digits[in[i] & 15];
	}
	out[2 + 2 * len] = '\0';
	return 0;
}

int chap_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

void chap_init(struct chap *c, const struct auth *auth, uint32_t algs_allowed,
	       chap_random_fn rnd)
{
	memset(c, 0, sizeof(*c));
	c->auth = auth;
	c->algs = algs_allowed;
	c->rnd = rnd ? rnd : chap_random;
	c->stage = CHAP_WANT_A;
}

__attribute__((format(printf, 2, 3)))
static int failed(struct chap *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->stage = CHAP_FAILED;
	wipe(c->challenge, sizeof(c->challenge));
	return -1;
}

int chap_challenge(struct chap *c, const char *list, struct textbuf *out)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	const char *s = list;

	if (c->stage != CHAP_WANT_A)
		return failed(c, "CHAP_A after the challenge was sent");
	while (*s && !c->alg) {
		size_t len = strcspn(s, ",");
		char item[24];
		uint64_t n;

		if (len && len < sizeof(item)) {
			memcpy(item, s, len);
			item[len] = '\0';
			if (!parse_number(item, &n) && n < 32 &&
			    (c->algs & CHAP_ALG_BIT(n))) {
				const struct chap_alg *a = chap_alg_by_id(n);

				if (a && chap_alg_available(a))
					c->alg = a;
			}
		}
		s += len;
		if (*s)
			s++;
	}
	if (!c->alg) {
		c->reject_a = true;
		return failed(c, "no CHAP algorithm of CHAP_A=%.64s is allowed",
			      list);
	}
	c->clen = c->alg->len;
	if (c->rnd(&c->id, 1) || c->rnd(c->challenge, c->clen))
		return failed(c, "no random bytes for the challenge");
	chap_encode(c->challenge, c->clen, hex, sizeof(hex));
	textbuf_addu(out, "CHAP_A", c->alg->id);
	textbuf_addu(out, "CHAP_I", c->id);
	textbuf_add(out, "CHAP_C", hex);
	c->stage = CHAP_WANT_R;
	return 0;
}

/* The answer of mutual CHAP: our name and H(their I || our secret || C). */
static int answer(struct chap *c, const struct account *acc, const char *i,
		  const char *ch, struct textbuf *out)
{
	const struct auth *a = c->auth;
	uint8_t theirs[CHAP_CHALLENGE_MAX], digest[CHAP_DIGEST_MAX];
	char hex[2 * CHAP_DIGEST_MAX + 3];
	size_t tlen;
	uint64_t id;
	int ret;

	if (!i || !ch)
		return failed(c, "mutual CHAP needs both CHAP_I and CHAP_C");
	if (!a->has_outgoing)
		return failed(c, "the initiator asks for mutual CHAP and no OutgoingUser is configured");
	if (parse_number(i, &id) || id > 255)
		return failed(c, "CHAP_I=%.16s is not an identifier 0..255", i);
	if (chap_decode(ch, theirs, sizeof(theirs), &tlen))
		return failed(c, "CHAP_C is not a binary value of 1..%d bytes",
			      CHAP_CHALLENGE_MAX);
	/*
	 * Answering our own challenge would hand the initiator the response
	 * it owes us (RFC 7143 12.1.3): a reflection.
	 */
	if (tlen == c->clen && !CRYPTO_memcmp(theirs, c->challenge, tlen))
		return failed(c, "the initiator's CHAP_C is the target's challenge reflected");
	if (!strcmp(acc->secret, a->outgoing.secret))
		return failed(c, "IncomingUser %.64s and OutgoingUser %.64s have the same secret; refused for mutual CHAP",
			      acc->user, a->outgoing.user);
	ret = chap_digest(c->alg, id, a->outgoing.secret, theirs, tlen, digest);
	wipe(theirs, sizeof(theirs));
	if (ret)
		return failed(c, "computing the %s response failed", c->alg->name);
	chap_encode(digest, c->alg->len, hex, sizeof(hex));
	wipe(digest, sizeof(digest));
	textbuf_add(out, "CHAP_N", a->outgoing.user);
	textbuf_add(out, "CHAP_R", hex);
	wipe(hex, sizeof(hex));
	c->mutual = true;
	return 0;
}

int chap_verify(struct chap *c, const char *n, const char *r, const char *i,
		const char *ch, struct textbuf *out)
{
	uint8_t got[CHAP_DIGEST_MAX], want[CHAP_DIGEST_MAX];
	const struct account *acc;
	struct account dummy;
	size_t glen = 0;
	bool ok;
	int ret;

	if (c->stage != CHAP_WANT_R)
		return failed(c, "CHAP_R without a challenge");
	if (!n || !r)
		return failed(c, "CHAP_N and CHAP_R are both required");
	acc = auth_incoming(c->auth, n);
	if (!acc) {
		/*
		 * Do the same work for an unknown user, so timing does not
		 * tell which names exist.
		 */
		memset(&dummy, 0, sizeof(dummy));
		if (c->rnd(dummy.secret, 16))
			memset(dummy.secret, 'x', 16);
		for (size_t k = 0; k < 16; k++)
			dummy.secret[k] = 'a' + (dummy.secret[k] & 15);
		acc = &dummy;
	}
	if (chap_decode(r, got, sizeof(got), &glen))
		glen = 0;
	ret = chap_digest(c->alg, c->id, acc->secret, c->challenge, c->clen,
			  want);
	ok = !ret && glen == c->alg->len &&
	     !CRYPTO_memcmp(got, want, c->alg->len) && acc != &dummy;
	wipe(got, sizeof(got));
	wipe(want, sizeof(want));
	wipe(&dummy, sizeof(dummy));
	if (!ok) {
		if (acc == &dummy)
			return failed(c, "unknown CHAP user %.64s", n);
		if (glen != c->alg->len)
			return failed(c, "CHAP_R of %.64s is not a %zu-byte binary value",
				      n, c->alg->len);
		return failed(c, "wrong CHAP response for user %.64s (%s)", n,
			      c->alg->name);
	}
	snprintf(c->user, sizeof(c->user), "%s", n);
	/* The challenge is still needed to spot a reflection. */
	if ((i || ch) && answer(c, acc, i, ch, out))
		return -1;
	/* A challenge answers once. */
	wipe(c->challenge, sizeof(c->challenge));
	c->stage = CHAP_DONE;
	return 0;
}

void chap_wipe(struct chap *c)
{
	wipe(c->challenge, sizeof(c->challenge));
	c->clen = 0;
}
