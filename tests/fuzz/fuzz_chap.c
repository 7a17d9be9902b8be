// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: CHAP binary values and the target's side of the
 * exchange. The input is NUL-separated: CHAP_A, CHAP_N, CHAP_R, CHAP_I,
 * CHAP_C (a missing one is absent), as an initiator could send them.
 */
#include <stdlib.h>
#include <string.h>

#include "chap.h"

static uint8_t next_byte;

static int counting(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = next_byte++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct account acc = { .user = "joe", .secret = "secretsecret" };
	const char *f[5] = { NULL };
	uint8_t bin[CHAP_CHALLENGE_MAX];
	struct textbuf out;
	struct auth a = { 0 };
	struct chap c;
	char *copy;
	size_t n = 0, off = 0, len;

	if (size > 16384)
		return 0;
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	while (off <= size && n < 5) {
		f[n++] = copy + off;
		off += strlen(copy + off) + 1;
	}
	/* Decoding is bounded whatever the text says. */
	if (f[0] && !chap_decode(f[0], bin, sizeof(bin), &len) &&
	    (len == 0 || len > sizeof(bin)))
		abort();
	auth_add_incoming(&a, &acc);
	strcpy(a.outgoing.user, "tgt");
	strcpy(a.outgoing.secret, "targetsecret");
	a.has_outgoing = true;
	next_byte = 0;
	chap_init(&c, &a, CHAP_ALGS_ALL, counting);
	textbuf_init(&out, 65536);
	if (!chap_challenge(&c, f[0] ? f[0] : "", &out)) {
		if (c.clen != c.alg->len)
			abort();
		if (!chap_verify(&c, f[1], f[2], f[3], f[4], &out) &&
		    (c.stage != CHAP_DONE || strcmp(c.user, "joe")))
			abort();
	}
	/*
	 * Nothing a peer sends makes the target reveal a secret (errors
	 * may quote what the peer sent, so only when it did not send it).
	 */
	if ((c.err[0] && !memmem(data, size, "secretsecret", 12) &&
	     strstr(c.err, "secretsecret")) ||
	    (!memmem(data, size, "targetsecret", 12) &&
	     (strstr(c.err, "targetsecret") ||
	      (out.buf && memmem(out.buf, out.len, "targetsecret", 12)))))
		abort();
	chap_wipe(&c);
	textbuf_free(&out);
	auth_free(&a);
	free(copy);
	return 0;
}
