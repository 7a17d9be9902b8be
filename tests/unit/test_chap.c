// SPDX-License-Identifier: GPL-2.0
/* CHAP: algorithms, binary values, the target's side of the exchange. */
#include <errno.h>

#include "chap.h"
#include "helpers.h"
#include "test.h"

#define SECRET_IN	"secretsecret"
#define SECRET_OUT	"targetsecret"

/* Vectors: H(0x2a || "secretsecret" || 00 01 .. 0f), from Python hashlib. */
static const struct {
	unsigned int id;
	const char *hex;
} vectors[] = {
	{ CHAP_MD5, "0x54d49338a27b0c1dd5e935c21ab005a3" },
	{ CHAP_SHA1, "0xb060c80c0e004a388193dd4b911b5a400ca2b931" },
	{ CHAP_SHA256,
	  "0x2076dab09b25dfe7f89cdb79aa854cf8af88246b80126a0856a426662b39d903" },
	{ CHAP_SHA3_256,
	  "0x1e1bc4b940a438823a7ab5862e223043f6f65ee8148abe3310f5b7de30b8aa95" },
};

static const uint8_t counting[16] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

TEST(chap_digest_of_every_algorithm_matches_known_vectors)
{
	uint8_t out[CHAP_DIGEST_MAX];
	char hex[2 * CHAP_DIGEST_MAX + 3];
	size_t i;

	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct chap_alg *a = chap_alg_by_id(vectors[i].id);

		REQUIRE(a != NULL);
		REQUIRE(chap_alg_available(a));
		REQUIRE(chap_digest(a, 0x2a, SECRET_IN, counting, 16, out) == 0);
		REQUIRE(chap_encode(out, a->len, hex, sizeof(hex)) == 0);
		CHECK_STR(hex, vectors[i].hex);
	}
}

TEST(chap_algorithms_have_their_iana_numbers_and_lengths)
{
	CHECK_EQ(chap_alg_by_id(5)->len, 16);
	CHECK_STR(chap_alg_by_id(5)->name, "MD5");
	CHECK_EQ(chap_alg_by_id(6)->len, 20);
	CHECK_EQ(chap_alg_by_id(7)->len, 32);
	CHECK_STR(chap_alg_by_id(7)->name, "SHA-256");
	CHECK_EQ(chap_alg_by_id(8)->len, 32);
	CHECK_STR(chap_alg_by_id(8)->name, "SHA3-256");
	CHECK(chap_alg_by_id(4) == NULL);
	CHECK(chap_alg_by_id(9) == NULL);
}

TEST(chap_decode_accepts_hex_and_base64)
{
	uint8_t out[32];
	size_t len;

	REQUIRE(chap_decode("0x000102030405060708090a0b0c0d0e0f", out,
			    sizeof(out), &len) == 0);
	CHECK_EQ(len, 16);
	CHECK(!memcmp(out, counting, 16));
	REQUIRE(chap_decode("0XA0b1", out, sizeof(out), &len) == 0);
	CHECK_EQ(len, 2);
	CHECK_EQ(out[0], 0xa0);
	CHECK_EQ(out[1], 0xb1);
	/* An odd number of digits has a leading zero nibble. */
	REQUIRE(chap_decode("0xabc", out, sizeof(out), &len) == 0);
	CHECK_EQ(len, 2);
	CHECK_EQ(out[0], 0x0a);
	CHECK_EQ(out[1], 0xbc);
	REQUIRE(chap_decode("0bAAECAwQFBgcICQoLDA0ODw==", out, sizeof(out),
			    &len) == 0);
	CHECK_EQ(len, 16);
	CHECK(!memcmp(out, counting, 16));
	REQUIRE(chap_decode("0BAQI=", out, sizeof(out), &len) == 0);
	CHECK_EQ(len, 2);
	CHECK_EQ(out[1], 2);
	REQUIRE(chap_decode("0bAQ==", out, sizeof(out), &len) == 0);
	CHECK_EQ(len, 1);
	CHECK_EQ(out[0], 1);
}

TEST(chap_decode_refuses_malformed_values)
{
	static const char *const bad[] = {
		"", "0", "0x", "0b", "1234", "0y12", "0x12g4", "0x 12",
		"0bAQ=", "0bA===", "0b=AQI", "0bAQ=I", "0b!!!!", "0bAQ==AQ==",
	};
	uint8_t out[32];
	size_t i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (chap_decode(bad[i], out, sizeof(out), &len) == 0)
			test_fail(__FILE__, __LINE__, "accepted \"%s\"", bad[i]);
}

TEST(chap_decode_checks_the_length_before_decoding)
{
	char big[2 + 2 * 40 + 1];
	uint8_t out[32];
	size_t len;

	memset(big, 'a', sizeof(big) - 1);
	big[0] = '0';
	big[1] = 'x';
	big[sizeof(big) - 1] = '\0';
	CHECK(chap_decode(big, out, sizeof(out), &len) != 0);
	big[2 + 64] = '\0';
	CHECK(chap_decode(big, out, sizeof(out), &len) == 0);
	CHECK_EQ(len, 32);
	/* 33 bytes of base64 do not fit in 32. */
	CHECK(chap_decode("0bAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", out,
			  sizeof(out), &len) != 0);
}

/* A "random" source that counts: id 0, challenge 1, 2, 3, ... */
static uint8_t next_byte;

static int counting_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = next_byte++;
	return 0;
}

struct cx {
	struct auth auth;
	struct chap c;
	struct textbuf out;
};

static void cx_init(struct cx *x, uint32_t algs, bool outgoing)
{
	struct account acc = { .user = "joe", .secret = SECRET_IN };

	memset(x, 0, sizeof(*x));
	auth_add_incoming(&x->auth, &acc);
	strcpy(acc.user, "ann");
	strcpy(acc.secret, "annsecretxxxx");
	auth_add_incoming(&x->auth, &acc);
	if (outgoing) {
		strcpy(x->auth.outgoing.user, "tgt");
		strcpy(x->auth.outgoing.secret, SECRET_OUT);
		x->auth.has_outgoing = true;
	}
	next_byte = 0;
	chap_init(&x->c, &x->auth, algs, counting_random);
	textbuf_init(&x->out, 4096);
}

static void cx_free(struct cx *x)
{
	textbuf_free(&x->out);
	auth_free(&x->auth);
}

static const char *out_key(struct cx *x, const char *key)
{
	return text_get(x->out.buf, x->out.len, key);
}

/* The response the initiator computes for the target's challenge. */
static void respond(struct cx *x, const char *secret, char *hex, size_t len)
{
	uint8_t d[CHAP_DIGEST_MAX];

	chap_digest(x->c.alg, x->c.id, secret, x->c.challenge, x->c.clen, d);
	chap_encode(d, x->c.alg->len, hex, len);
}

TEST(chap_challenge_takes_the_initiators_first_allowed_algorithm)
{
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7,5", &x.out) == 0);
	CHECK_STR(out_key(&x, "CHAP_A"), "7");
	CHECK_STR(out_key(&x, "CHAP_I"), "0");
	/* A challenge as long as the digest, from the random source. */
	CHECK_STR(out_key(&x, "CHAP_C"),
		  "0x0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20");
	CHECK_EQ(x.c.stage, CHAP_WANT_R);
	cx_free(&x);

	cx_init(&x, CHAP_ALG_BIT(CHAP_MD5) | CHAP_ALG_BIT(CHAP_SHA1), false);
	REQUIRE(chap_challenge(&x.c, "8,7,6,5", &x.out) == 0);
	CHECK_STR(out_key(&x, "CHAP_A"), "6");
	CHECK_EQ(x.c.clen, 20);
	cx_free(&x);
}

TEST(chap_challenge_skips_unknown_values_and_rejects_when_none_fits)
{
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "banana,99,5", &x.out) == 0);
	CHECK_STR(out_key(&x, "CHAP_A"), "5");
	cx_free(&x);

	cx_init(&x, CHAP_ALG_BIT(CHAP_SHA3_256), false);
	CHECK(chap_challenge(&x.c, "5,6,7", &x.out) != 0);
	CHECK(x.c.reject_a);
	CHECK_EQ(x.c.stage, CHAP_FAILED);
	CHECK_CONTAINS(x.c.err, "no CHAP algorithm");
	cx_free(&x);
}

TEST(chap_one_way_succeeds_with_the_right_secret_for_each_algorithm)
{
	static const char *const lists[] = { "5", "6", "7", "8" };
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;
	size_t i;

	for (i = 0; i < 4; i++) {
		cx_init(&x, CHAP_ALGS_ALL, false);
		REQUIRE(chap_challenge(&x.c, lists[i], &x.out) == 0);
		respond(&x, SECRET_IN, hex, sizeof(hex));
		textbuf_reset(&x.out);
		CHECK(chap_verify(&x.c, "joe", hex, NULL, NULL, &x.out) == 0);
		CHECK_EQ(x.c.stage, CHAP_DONE);
		CHECK_STR(x.c.user, "joe");
		CHECK(!x.c.mutual);
		CHECK_EQ(x.out.len, 0);
		cx_free(&x);
	}
}

TEST(chap_one_way_fails_with_a_wrong_secret_for_each_algorithm)
{
	static const char *const lists[] = { "5", "6", "7", "8" };
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;
	size_t i;

	for (i = 0; i < 4; i++) {
		cx_init(&x, CHAP_ALGS_ALL, false);
		REQUIRE(chap_challenge(&x.c, lists[i], &x.out) == 0);
		respond(&x, "wrongsecret!", hex, sizeof(hex));
		CHECK(chap_verify(&x.c, "joe", hex, NULL, NULL, &x.out) != 0);
		CHECK_EQ(x.c.stage, CHAP_FAILED);
		CHECK_CONTAINS(x.c.err, "wrong CHAP response for user joe");
		CHECK(!strstr(x.c.err, SECRET_IN));
		cx_free(&x);
	}
}

TEST(chap_response_in_base64_is_accepted)
{
	char hex[2 * CHAP_DIGEST_MAX + 3], b64[64] = "0b";
	uint8_t d[CHAP_DIGEST_MAX];
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct cx x;
	size_t i, n = 2;

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "5", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	chap_decode(hex, d, sizeof(d), &i);
	/* 16 bytes: 5 groups of 3 and one byte with "==". */
	for (i = 0; i < 15; i += 3) {
		uint32_t w = d[i] << 16 | d[i + 1] << 8 | d[i + 2];

		b64[n++] = tbl[w >> 18 & 63];
		b64[n++] = tbl[w >> 12 & 63];
		b64[n++] = tbl[w >> 6 & 63];
		b64[n++] = tbl[w & 63];
	}
	b64[n++] = tbl[d[15] >> 2];
	b64[n++] = tbl[(d[15] & 3) << 4];
	b64[n++] = '=';
	b64[n++] = '=';
	b64[n] = '\0';
	CHECK(chap_verify(&x.c, "joe", b64, NULL, NULL, &x.out) == 0);
	cx_free(&x);
}

TEST(chap_unknown_user_or_malformed_response_fails)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	CHECK(chap_verify(&x.c, "mallory", hex, NULL, NULL, &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "unknown CHAP user mallory");
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	CHECK(chap_verify(&x.c, "joe", "0x1234", NULL, NULL, &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "not a 32-byte binary value");
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	CHECK(chap_verify(&x.c, "joe", "hello", NULL, NULL, &x.out) != 0);
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	CHECK(chap_verify(&x.c, NULL, "0x00", NULL, NULL, &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "both required");
	cx_free(&x);
}

TEST(chap_response_without_a_challenge_or_twice_fails)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, false);
	CHECK(chap_verify(&x.c, "joe", "0x00", NULL, NULL, &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "without a challenge");
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "5", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	REQUIRE(chap_verify(&x.c, "joe", hex, NULL, NULL, &x.out) == 0);
	CHECK(chap_verify(&x.c, "joe", hex, NULL, NULL, &x.out) != 0);
	CHECK(chap_challenge(&x.c, "5", &x.out) != 0);
	cx_free(&x);
}

TEST(chap_mutual_answers_with_the_outgoing_account)
{
	char hex[2 * CHAP_DIGEST_MAX + 3], want[2 * CHAP_DIGEST_MAX + 3];
	uint8_t d[CHAP_DIGEST_MAX];
	struct cx x;
	size_t i;

	for (i = 0; i < 4; i++) {
		cx_init(&x, CHAP_ALGS_ALL, true);
		REQUIRE(chap_challenge(&x.c, i == 0 ? "5" : i == 1 ? "6" :
				       i == 2 ? "7" : "8", &x.out) == 0);
		respond(&x, SECRET_IN, hex, sizeof(hex));
		textbuf_reset(&x.out);
		REQUIRE(chap_verify(&x.c, "joe", hex, "42",
				    "0x000102030405060708090a0b0c0d0e0f",
				    &x.out) == 0);
		CHECK(x.c.mutual);
		CHECK_STR(out_key(&x, "CHAP_N"), "tgt");
		chap_digest(x.c.alg, 42, SECRET_OUT, counting, 16, d);
		chap_encode(d, x.c.alg->len, want, sizeof(want));
		CHECK_STR(out_key(&x, "CHAP_R"), want);
		cx_free(&x);
	}
}

TEST(chap_mutual_refuses_a_reflected_challenge)
{
	char hex[2 * CHAP_DIGEST_MAX + 3], ours[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, true);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	snprintf(ours, sizeof(ours), "%s", out_key(&x, "CHAP_C"));
	respond(&x, SECRET_IN, hex, sizeof(hex));
	textbuf_reset(&x.out);
	CHECK(chap_verify(&x.c, "joe", hex, "1", ours, &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "reflected");
	CHECK(out_key(&x, "CHAP_R") == NULL);
	cx_free(&x);
}

TEST(chap_mutual_refuses_the_same_secret_both_ways)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, true);
	strcpy(x.auth.outgoing.secret, SECRET_IN);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	textbuf_reset(&x.out);
	CHECK(chap_verify(&x.c, "joe", hex, "1", "0x0102030405", &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "same secret");
	CHECK(!strstr(x.c.err, SECRET_IN));
	CHECK(out_key(&x, "CHAP_R") == NULL);
	cx_free(&x);
}

TEST(chap_mutual_needs_an_outgoing_account_and_both_keys)
{
	char hex[2 * CHAP_DIGEST_MAX + 3];
	struct cx x;

	cx_init(&x, CHAP_ALGS_ALL, false);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	CHECK(chap_verify(&x.c, "joe", hex, "1", "0x0102", &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "no OutgoingUser");
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, true);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	CHECK(chap_verify(&x.c, "joe", hex, NULL, "0x0102", &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "both CHAP_I and CHAP_C");
	cx_free(&x);

	cx_init(&x, CHAP_ALGS_ALL, true);
	REQUIRE(chap_challenge(&x.c, "7", &x.out) == 0);
	respond(&x, SECRET_IN, hex, sizeof(hex));
	CHECK(chap_verify(&x.c, "joe", hex, "256", "0x0102", &x.out) != 0);
	CHECK_CONTAINS(x.c.err, "CHAP_I=256");
	cx_free(&x);
}

TEST(chap_random_source_is_the_kernels)
{
	uint8_t a[32], b[32];

	REQUIRE(chap_random(a, sizeof(a)) == 0);
	REQUIRE(chap_random(b, sizeof(b)) == 0);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
}
