// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the kernel's PERSISTENT RESERVE OUT parser,
 * kernel/pr_parse.c itself, built on the host against kshim/. The input is
 * a parameter list as an initiator sends it, parsed for each service
 * action, then walked as a list of TransportIDs on its own.
 *
 * The input is copied into a buffer of exactly its size, and a name into
 * one of exactly IET_NAME_MAX + 1 bytes, so that AddressSanitizer reports
 * the first byte read or written past either. What the parser returns is
 * held to the input: lengths and offsets within it, names NUL-terminated,
 * at most IET_NAME_MAX long and taken from the TransportID's bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/iet.h>
#include "pr_parse.h"

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		abort();						\
	}								\
} while (0)

static char *name;	/* IET_NAME_MAX + 1 bytes, not one more */

static u32 be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/* A fault the parser reports: a field inside what it was given. */
static void check_fault(const struct iet_pr_fault *f, u32 at, u32 avail)
{
	if (f->length)
		return;
	CHECK(f->bit == 3 || f->bit == 7);
	CHECK(f->byte >= at && f->byte - at <= 4);
	/* At the TransportID's first byte (no room for a header), or in it. */
	CHECK(f->byte == at || f->byte - at < avail);
}

/*
 * One TransportID at p (avail bytes, at in the list); its length, or 0.
 * A name is what the TransportID says, at most IET_NAME_MAX long.
 */
static u32 check_tpid(const u8 *p, u32 avail, u32 at)
{
	struct iet_pr_fault f;
	u64 isid = 0;
	u32 len;
	size_t n;

	memset(name, 0xa5, IET_NAME_MAX + 1);
	len = iet_pr_parse_tpid(p, avail, at, name, &isid, &f);
	if (!len) {
		check_fault(&f, at, avail);
		return 0;
	}
	CHECK(len <= avail);
	CHECK(len >= 4 + PR_TPID_MIN && len % 4 == 0);
	CHECK(len == 4u + (p[2] << 8 | p[3]));
	n = strnlen(name, IET_NAME_MAX + 1);
	CHECK(n >= 1 && n <= IET_NAME_MAX);
	CHECK(!memcmp(name, p + 4, n));
	CHECK(n < len - 4);
	if (p[0] >> 6 == 0) {
		CHECK(isid == IET_PR_ANY_ISID);
		CHECK(p[4 + n] == 0);
	} else {
		CHECK(isid >> 48 == 0);
		CHECK(!memcmp(p + 4 + n, ",i,0x", 5));
		CHECK(p[4 + n + 5 + 12] == 0);
	}
	return len;
}

/* The list for service action sa, and the TransportIDs it carries. */
static void check_params(u8 sa, const u8 *p, u32 size)
{
	struct iet_pr_params o;
	struct iet_pr_fault f;
	u32 len, off, l;
	int nr, walked;

	len = iet_pr_parse_params(sa, p, size, &o, &f);
	if (!len) {
		if (!f.length)
			CHECK(f.byte == 20 && f.bit == 3 && size >= PR_OUT_MIN);
		return;
	}
	CHECK(len >= PR_OUT_MIN && len <= size);
	if (!o.tpids_len && !o.tpids) {
		CHECK(!o.spec_i_pt && sa != PRO_REGISTER_MOVE);
		CHECK(len == PR_OUT_MIN && size == PR_OUT_MIN);
		return;
	}
	CHECK(o.tpids == p + o.tpids_off);
	CHECK(o.tpids_off == (sa == PRO_REGISTER_MOVE ? 24u : 28u));
	/* In a form that cannot wrap, as the parser's own checks. */
	CHECK(o.tpids_off <= size && o.tpids_len <= size - o.tpids_off);
	CHECK(len == o.tpids_off + o.tpids_len);
	CHECK(o.tpids_len == be32(p + o.tpids_off - 4));
	if (sa == PRO_REGISTER_MOVE) {
		CHECK(o.tpids_len >= 4);
		check_tpid(o.tpids, o.tpids_len, o.tpids_off);
		return;
	}
	CHECK(o.spec_i_pt && sa == PRO_REGISTER);
	/* Counted, then walked as REGISTER walks them: the same ones. */
	nr = iet_pr_count_tpids(&o, &f);
	walked = 0;
	for (off = 0; off < o.tpids_len; off += l, walked++) {
		l = check_tpid(o.tpids + off, o.tpids_len - off,
			       o.tpids_off + off);
		if (!l)
			break;
	}
	if (nr < 0) {
		CHECK(off < o.tpids_len);
		check_fault(&f, o.tpids_off + off, o.tpids_len - off);
	} else {
		CHECK(off == o.tpids_len && nr == walked);
		CHECK((u32)nr <= o.tpids_len / (4 + PR_TPID_MIN));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u32 off, len;
	u8 *p;
	u8 sa;

	if (size > 1 << 20)
		return 0;
	if (!name)
		name = malloc(IET_NAME_MAX + 1);
	p = malloc(size ? size : 1);
	if (!p || !name)
		abort();
	memcpy(p, data, size);
	for (sa = PRO_REGISTER; sa <= PRO_REGISTER_MOVE; sa++)
		check_params(sa, p, size);
	/* The input as TransportIDs alone, from its first byte. */
	for (off = 0; off < size; off += len) {
		len = check_tpid(p + off, size - off, off);
		if (!len)
			break;
	}
	free(p);
	return 0;
}
