// SPDX-License-Identifier: GPL-2.0
/* Parse and build iSCSI key=value text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "wipe.h"

/* RFC 7143 6.1 key-name characters, plus '#' of X# extension keys. */
static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' ||
	       c == '@' || c == '_' || c == '#';
}

/* Copy at most 32 printable characters of s for an error message. */
static void show(char *dst, size_t dlen, const char *s, size_t slen)
{
	size_t i, o = 0;

	for (i = 0; i < slen && o + 5 < dlen && i < 32; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '"')
			dst[o++] = c;
		else
			o += snprintf(dst + o, dlen - o, "\\x%02x", c);
	}
	if (i < slen && o + 4 < dlen) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

bool text_key_is_binary(const char *key)
{
	return strncmp(key, "CHAP_", 5) == 0;
}

int text_parse(const void *data, size_t len, struct text_list *out,
	       char *err, size_t errlen)
{
	char shown[160];
	size_t pos = 0, cap = 0;
	char *p;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return 0;
	if (len > TEXT_SET_MAX) {
		snprintf(err, errlen, "text of %zu bytes exceeds %d", len,
			 TEXT_SET_MAX);
		return -EINVAL;
	}
	if (((const char *)data)[len - 1] != '\0') {
		const char *d = data;
		size_t start = len - 1;

		while (start > 0 && d[start - 1] != '\0')
			start--;
		show(shown, sizeof(shown), d + start, len - start);
		snprintf(err, errlen, "text not NUL-terminated at \"%s\"",
			 shown);
		return -EINVAL;
	}
	out->buf = malloc(len);
	if (!out->buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(out->buf, data, len);
	out->len = len;

	while (pos < len) {
		char *pair = out->buf + pos;
		size_t plen = strlen(pair);
		char *eq;
		size_t klen, vlen, vmax;

		pos += plen + 1;
		if (plen == 0)
			continue;	/* tolerate NUL padding between pairs */
		eq = memchr(pair, '=', plen);
		if (!eq) {
			show(shown, sizeof(shown), pair, plen);
			snprintf(err, errlen, "missing '=' in \"%s\"", shown);
			goto fail;
		}
		klen = eq - pair;
		vlen = plen - klen - 1;
		if (klen == 0) {
			show(shown, sizeof(shown), pair, plen);
			snprintf(err, errlen, "empty key in \"%s\"", shown);
			goto fail;
		}
		if (klen > TEXT_KEY_MAX) {
			show(shown, sizeof(shown), pair, klen);
			snprintf(err, errlen, "key \"%s\" longer than %d bytes",
				 shown, TEXT_KEY_MAX);
			goto fail;
		}
		for (p = pair; p < eq; p++) {
			if (!key_char(*p)) {
				show(shown, sizeof(shown), pair, klen);
				snprintf(err, errlen,
					 "invalid character in key \"%s\"",
					 shown);
				goto fail;
			}
		}
		if (out->nr == TEXT_MAX_PAIRS) {
			snprintf(err, errlen, "more than %d keys",
				 TEXT_MAX_PAIRS);
			goto fail;
		}
		if (out->nr == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct text_pair *np;

			np = realloc(out->pairs, ncap * sizeof(*np));
			if (!np) {
				snprintf(err, errlen, "out of memory");
				text_list_free(out);
				return -ENOMEM;
			}
			out->pairs = np;
			cap = ncap;
		}
		*eq = '\0';
		vmax = text_key_is_binary(pair) ? TEXT_BINARY_MAX :
						   TEXT_VALUE_MAX;
		out->pairs[out->nr].key = pair;
		out->pairs[out->nr].value = eq + 1;
		out->pairs[out->nr].too_long = vlen > vmax;
		out->nr++;
	}
	return 0;
fail:
	text_list_free(out);
	return -EINVAL;
}

/*
 * Text may hold CHAP values, and a textbuf a whole configuration with its
 * secrets: no copy is given back to the allocator without being wiped.
 */
void text_list_free(struct text_list *tl)
{
	wiped_free(tl->buf, tl->len);
	free(tl->pairs);
	memset(tl, 0, sizeof(*tl));
}

void textbuf_init(struct textbuf *tb, size_t max)
{
	memset(tb, 0, sizeof(*tb));
	tb->max = max;
}

void textbuf_free(struct textbuf *tb)
{
	wiped_free(tb->buf, tb->cap);
	textbuf_init(tb, tb->max);
}

void textbuf_reset(struct textbuf *tb)
{
	tb->len = 0;
	tb->overflow = false;
}

int textbuf_append(struct textbuf *tb, const void *data, size_t len)
{
	if (!len)
		return tb->overflow ? -ENOSPC : 0;
	if (tb->overflow || len > tb->max - tb->len) {
		tb->overflow = true;
		return -ENOSPC;
	}
	if (tb->len + len > tb->cap) {
		size_t ncap = tb->cap ? tb->cap : 256;
		char *nb;

		while (ncap < tb->len + len)
			ncap *= 2;
		if (ncap > tb->max)
			ncap = tb->max;
		nb = wiped_realloc(tb->buf, tb->cap, ncap);
		if (!nb) {
			tb->overflow = true;
			return -ENOMEM;
		}
		tb->buf = nb;
		tb->cap = ncap;
	}
	memcpy(tb->buf + tb->len, data, len);
	tb->len += len;
	return 0;
}

int textbuf_add(struct textbuf *tb, const char *key, const char *value)
{
	size_t klen = strlen(key), vlen = strlen(value);
	size_t need = klen + 1 + vlen + 1;
	size_t start = tb->len;

	if (tb->overflow || need > tb->max - tb->len) {
		tb->overflow = true;
		return -ENOSPC;
	}
	if (textbuf_append(tb, key, klen) || textbuf_append(tb, "=", 1) ||
	    textbuf_append(tb, value, vlen + 1)) {
		tb->len = start;
		return -ENOSPC;
	}
	return 0;
}

int textbuf_addu(struct textbuf *tb, const char *key, unsigned long value)
{
	char num[24];

	snprintf(num, sizeof(num), "%lu", value);
	return textbuf_add(tb, key, num);
}
