// SPDX-License-Identifier: GPL-2.0
/* JSON output for ietadm --json. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

void jw_init(struct jw *j, struct textbuf *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

static void put(struct jw *j, const char *s, size_t len)
{
	textbuf_append(j->out, s, len);
}

static void puts_(struct jw *j, const char *s)
{
	put(j, s, strlen(s));
}

/*
 * JSON is UTF-8 (RFC 8259 8.1), names and paths need not be: a byte that
 * is not part of a UTF-8 sequence is written as \u00XX, the character of
 * its value, so that the output always parses and the byte can be told.
 */
static void quoted(struct jw *j, const char *s)
{
	const unsigned char *c;
	char esc[8];
	size_t n;

	put(j, "\"", 1);
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\') {
			esc[0] = '\\';
			esc[1] = *c;
			put(j, esc, 2);
		} else if (*c < 0x20 || *c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *c);
			puts_(j, esc);
		} else if (*c < 0x80) {
			put(j, (const char *)c, 1);
		} else if ((n = utf8_len(c))) {
			put(j, (const char *)c, n);
			c += n - 1;
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", *c);
			puts_(j, esc);
		}
	}
	put(j, "\"", 1);
}

/* Comma and key before a value at the current level. */
static void lead(struct jw *j, const char *key)
{
	if (j->depth && j->depth <= JSON_DEPTH) {
		if (j->more[j->depth - 1])
			put(j, ",", 1);
		j->more[j->depth - 1] = true;
	}
	if (key) {
		quoted(j, key);
		put(j, ":", 1);
	}
}

static void open_(struct jw *j, const char *key, char c)
{
	lead(j, key);
	put(j, &c, 1);
	if (j->depth < JSON_DEPTH)
		j->more[j->depth] = false;
	j->depth++;
}

void jw_obj(struct jw *j, const char *key)
{
	open_(j, key, '{');
}

void jw_arr(struct jw *j, const char *key)
{
	open_(j, key, '[');
}

void jw_end(struct jw *j, char close)
{
	put(j, &close, 1);
	if (j->depth)
		j->depth--;
	if (!j->depth)
		put(j, "\n", 1);
}

void jw_str(struct jw *j, const char *key, const char *v)
{
	lead(j, key);
	quoted(j, v);
}

void jw_u64(struct jw *j, const char *key, uint64_t v)
{
	char num[24];

	lead(j, key);
	snprintf(num, sizeof(num), "%" PRIu64, v);
	puts_(j, num);
}

void jw_bool(struct jw *j, const char *key, bool v)
{
	lead(j, key);
	puts_(j, v ? "true" : "false");
}
