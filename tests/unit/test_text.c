// SPDX-License-Identifier: GPL-2.0
/* The key=value text parser and builder (RFC 7143 section 6.1). */
#include <stdlib.h>
#include <string.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#include "helpers.h"
#include "test.h"
#include "text.h"
#include "wipe.h"

static int parse(const void *data, size_t len, struct text_list *tl,
		 char *err)
{
	return text_parse(data, len, tl, err, 256);
}

TEST(text_parses_well_formed_pairs_in_order)
{
	static const char data[] = "InitiatorName=iqn.x\0HeaderDigest=None,CRC32C\0";
	struct text_list tl;
	char err[256];

	REQUIRE(parse(data, sizeof(data) - 1, &tl, err) == 0);
	REQUIRE_EQ(tl.nr, 2);
	CHECK_STR(tl.pairs[0].key, "InitiatorName");
	CHECK_STR(tl.pairs[0].value, "iqn.x");
	CHECK_STR(tl.pairs[1].key, "HeaderDigest");
	CHECK_STR(tl.pairs[1].value, "None,CRC32C");
	CHECK(!tl.pairs[0].too_long && !tl.pairs[1].too_long);
	text_list_free(&tl);
}

TEST(text_empty_segment_is_no_pairs)
{
	struct text_list tl;
	char err[256];

	REQUIRE(parse("", 0, &tl, err) == 0);
	CHECK_EQ(tl.nr, 0);
	text_list_free(&tl);
}

TEST(text_empty_value_is_allowed)
{
	static const char data[] = "SendTargets=\0";
	struct text_list tl;
	char err[256];

	REQUIRE(parse(data, sizeof(data) - 1, &tl, err) == 0);
	REQUIRE_EQ(tl.nr, 1);
	CHECK_STR(tl.pairs[0].value, "");
	text_list_free(&tl);
}

TEST(text_nul_padding_between_pairs_is_skipped)
{
	static const char data[] = "A=1\0\0\0B=2\0\0";
	struct text_list tl;
	char err[256];

	REQUIRE(parse(data, sizeof(data) - 1, &tl, err) == 0);
	CHECK_EQ(tl.nr, 2);
	text_list_free(&tl);
}

TEST(text_rejects_pair_without_equals)
{
	static const char data[] = "A=1\0JustAKey\0";
	struct text_list tl;
	char err[256];

	CHECK(parse(data, sizeof(data) - 1, &tl, err) != 0);
	CHECK_CONTAINS(err, "missing '='");
	CHECK_CONTAINS(err, "JustAKey");
	CHECK(tl.pairs == NULL && tl.buf == NULL);
}

TEST(text_rejects_unterminated_text)
{
	static const char data[] = "A=1\0B=2";
	struct text_list tl;
	char err[256];

	CHECK(parse(data, sizeof(data) - 1, &tl, err) != 0);
	CHECK_CONTAINS(err, "not NUL-terminated");
	CHECK_CONTAINS(err, "B=2");
}

TEST(text_rejects_key_longer_than_63_bytes)
{
	char data[128];
	struct text_list tl;
	char err[256];

	memset(data, 'K', 64);
	strcpy(data + 64, "=v");
	CHECK(parse(data, strlen(data) + 1, &tl, err) != 0);
	CHECK_CONTAINS(err, "longer than 63");
}

TEST(text_accepts_key_of_exactly_63_bytes)
{
	char data[128];
	struct text_list tl;
	char err[256];

	memset(data, 'K', 63);
	strcpy(data + 63, "=v");
	REQUIRE(parse(data, strlen(data) + 1, &tl, err) == 0);
	CHECK_EQ(strlen(tl.pairs[0].key), 63);
	text_list_free(&tl);
}

TEST(text_marks_value_longer_than_255_bytes)
{
	char data[400];
	struct text_list tl;
	char err[256];

	strcpy(data, "TargetAlias=");
	memset(data + 12, 'v', 256);
	data[12 + 256] = '\0';
	REQUIRE(parse(data, 12 + 256 + 1, &tl, err) == 0);
	REQUIRE_EQ(tl.nr, 1);
	CHECK(tl.pairs[0].too_long);
	text_list_free(&tl);
}

TEST(text_allows_long_chap_binary_values)
{
	char data[1200];
	struct text_list tl;
	char err[256];

	strcpy(data, "CHAP_C=0x");
	memset(data + 9, 'a', 1024);
	data[9 + 1024] = '\0';
	REQUIRE(parse(data, 9 + 1024 + 1, &tl, err) == 0);
	CHECK(!tl.pairs[0].too_long);
	text_list_free(&tl);
}

TEST(text_rejects_empty_key)
{
	static const char data[] = "=value\0";
	struct text_list tl;
	char err[256];

	CHECK(parse(data, sizeof(data) - 1, &tl, err) != 0);
	CHECK_CONTAINS(err, "empty key");
}

TEST(text_rejects_invalid_key_characters)
{
	static const char data[] = "Bad Key=1\0";
	struct text_list tl;
	char err[256];

	CHECK(parse(data, sizeof(data) - 1, &tl, err) != 0);
	CHECK_CONTAINS(err, "invalid character");
}

TEST(text_accepts_extension_key_names)
{
	static const char data[] = "X-com.example.foo=1\0X#NodeArchitecture=x\0";
	struct text_list tl;
	char err[256];

	REQUIRE(parse(data, sizeof(data) - 1, &tl, err) == 0);
	CHECK_EQ(tl.nr, 2);
	text_list_free(&tl);
}

TEST(text_rejects_too_many_pairs)
{
	char *data = malloc(TEXT_MAX_PAIRS * 4 + 8);
	struct text_list tl;
	char err[256];
	size_t i, len = 0;

	for (i = 0; i <= TEXT_MAX_PAIRS; i++) {
		memcpy(data + len, "a=1", 4);
		len += 4;
	}
	CHECK(parse(data, len, &tl, err) != 0);
	CHECK_CONTAINS(err, "more than");
	free(data);
}

TEST(textbuf_builds_nul_separated_pairs)
{
	struct textbuf tb;

	textbuf_init(&tb, 64);
	CHECK(textbuf_add(&tb, "A", "1") == 0);
	CHECK(textbuf_addu(&tb, "B", 8192) == 0);
	REQUIRE_EQ(tb.len, 4 + 7);
	CHECK(!memcmp(tb.buf, "A=1\0B=8192\0", 11));
	textbuf_free(&tb);
}

TEST(textbuf_refuses_to_grow_past_its_limit)
{
	struct textbuf tb;

	textbuf_init(&tb, 8);
	CHECK(textbuf_add(&tb, "A", "1") == 0);
	CHECK(textbuf_add(&tb, "Long", "value") != 0);
	CHECK(tb.overflow);
	CHECK_EQ(tb.len, 4);
	textbuf_free(&tb);
}

/*
 * Memory given back to the allocator still holds what it held (ASan
 * keeps it in quarantine, unreused): whether secret is in it.
 */
static bool left_behind(const void *p, size_t len, const char *secret)
{
#ifdef __SANITIZE_ADDRESS__
	bool found;

	__asan_unpoison_memory_region(p, len);
	found = memmem(p, len, secret, strlen(secret)) != NULL;
	__asan_poison_memory_region(p, len);
	return found;
#else
	(void)p;
	(void)len;
	(void)secret;
	return false;
#endif
}

#define SECRET	"CHAP-secret-4711"

TEST(text_buffer_growing_leaves_no_copy_of_what_it_held)
{
	static char more[4096];
	struct textbuf tb;
	const char *old;
	size_t cap;

	textbuf_init(&tb, 1 << 20);
	REQUIRE(textbuf_add(&tb, "IncomingUser", "joe") == 0);
	REQUIRE(textbuf_add(&tb, "Password", SECRET) == 0);
	old = tb.buf;
	cap = tb.cap;
	REQUIRE(textbuf_append(&tb, more, sizeof(more)) == 0);
	REQUIRE(tb.buf != old);
	CHECK(memmem(tb.buf, tb.len, SECRET, strlen(SECRET)) != NULL);
	CHECK(!left_behind(old, cap, SECRET));
	old = tb.buf;
	cap = tb.cap;
	textbuf_free(&tb);
	CHECK(!left_behind(old, cap, SECRET));
}

TEST(text_list_freed_leaves_no_copy_of_the_text)
{
	static const char data[] = "CHAP_N=joe\0CHAP_R=0x" SECRET "\0";
	struct text_list tl;
	char err[128];
	const char *old;

	REQUIRE(text_parse(data, sizeof(data) - 1, &tl, err, sizeof(err)) == 0);
	old = tl.buf;
	text_list_free(&tl);
	CHECK(!left_behind(old, sizeof(data) - 1, SECRET));
}

/* The one way ietd and ietadm grow what may hold secrets (wipe.h). */
TEST(wiped_realloc_copies_and_leaves_no_copy_behind)
{
	char *p = wiped_realloc(NULL, 0, sizeof(SECRET));

	REQUIRE(p != NULL);
	memcpy(p, SECRET, sizeof(SECRET));
	freed_watch(SECRET);
	p = wiped_realloc(p, sizeof(SECRET), 4096);
	REQUIRE(p != NULL);
	CHECK_STR(p, SECRET);
	/* Smaller: what fits is kept. */
	p = wiped_realloc(p, 4096, 6);
	REQUIRE(p != NULL);
	CHECK(!memcmp(p, SECRET, 6));
	wiped_free(p, 6);
	CHECK_EQ(freed_holding(), 0);
}
