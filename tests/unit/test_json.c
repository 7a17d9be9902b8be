// SPDX-License-Identifier: GPL-2.0
/* ietadm's JSON writer: what it writes is JSON, whatever the names hold. */
#include <stdlib.h>

#include "helpers.h"
#include "json.h"
#include "test.h"

/* One string value written alone, as the writer writes it. */
static const char *json_of(const char *s)
{
	static char buf[256];
	struct textbuf tb;
	struct jw j;

	textbuf_init(&tb, 4096);
	jw_init(&j, &tb);
	jw_arr(&j, NULL);
	jw_str(&j, NULL, s);
	jw_end(&j, ']');
	snprintf(buf, sizeof(buf), "%.*s", (int)tb.len, tb.buf);
	textbuf_free(&tb);
	return buf;
}

/* Whether s is UTF-8 throughout (RFC 3629: no overlongs, no surrogates). */
static bool utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned int n, cp, min;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf) {
			n = 1, cp = *p & 0x1f, min = 0x80;
		} else if (*p >= 0xe0 && *p <= 0xef) {
			n = 2, cp = *p & 0x0f, min = 0x800;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			n = 3, cp = *p & 0x07, min = 0x10000;
		} else {
			return false;
		}
		for (p++; n; n--, p++) {
			if ((*p & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (*p & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}

TEST(json_string_of_utf8_text_goes_through_as_it_is)
{
	CHECK_STR(json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe"),
		  "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xbe\"]\n");
}

TEST(json_string_bytes_that_are_not_utf8_are_escaped)
{
	/* A Latin-1 path, as a LUN's Path may well be. */
	CHECK_STR(json_of("/srv/caf\xe9.img"), "[\"/srv/caf\\u00e9.img\"]\n");
	CHECK_STR(json_of("\xff\xfe"), "[\"\\u00ff\\u00fe\"]\n");
	/* An overlong '/', a surrogate, a sequence cut short at the end. */
	CHECK_STR(json_of("\xc0\xaf"), "[\"\\u00c0\\u00af\"]\n");
	CHECK_STR(json_of("\xed\xa0\x80"), "[\"\\u00ed\\u00a0\\u0080\"]\n");
	CHECK_STR(json_of("x\xe2\x82"), "[\"x\\u00e2\\u0082\"]\n");
	/* Beyond U+10FFFF. */
	CHECK_STR(json_of("\xf4\x90\x80\x80"),
		  "[\"\\u00f4\\u0090\\u0080\\u0080\"]\n");
}

TEST(json_output_is_utf8_whatever_bytes_the_strings_hold)
{
	char s[2], out[64];
	int b;

	for (b = 1; b < 256; b++) {
		s[0] = (char)b;
		s[1] = '\0';
		snprintf(out, sizeof(out), "%s", json_of(s));
		if (!utf8(out))
			test_fail(__FILE__, __LINE__, "byte 0x%02x: %s", b, out);
	}
}

TEST(json_control_characters_quotes_and_backslashes_are_escaped)
{
	CHECK_STR(json_of("a\"b\\c\n\x7f"), "[\"a\\\"b\\\\c\\u000a\\u007f\"]\n");
}
