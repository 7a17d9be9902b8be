/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iSCSI text (RFC 7143 section 6.1): NUL-terminated key=value pairs in
 * Login and Text PDUs. A pure parser and a bounded builder.
 */
#ifndef IET_USR_TEXT_H
#define IET_USR_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEXT_KEY_MAX		63	/* RFC 7143 6.1 */
#define TEXT_VALUE_MAX		255	/* RFC 7143 6.1 */
#define TEXT_BINARY_MAX		8192	/* CHAP_C/CHAP_R: large binary values */
#define TEXT_MAX_PAIRS		1024
#define TEXT_SET_MAX		65536	/* one set of keys, all PDUs of it */

struct text_pair {
	const char *key;
	const char *value;
	bool too_long;			/* value over its limit: answer Reject */
};

struct text_list {
	char *buf;			/* owned copy the pairs point into */
	size_t len;
	struct text_pair *pairs;
	size_t nr;
};

/*
 * Split a data segment into pairs. Fails (with a one-line reason in err) on
 * a pair without '=', an empty or over-long or ill-formed key, text that is
 * not NUL-terminated, or too many pairs; an over-long value only marks its
 * pair, since the key can still be answered.
 */
int text_parse(const void *data, size_t len, struct text_list *out,
	       char *err, size_t errlen);
void text_list_free(struct text_list *tl);

/* Whether the key is one whose value may be a large binary (CHAP_*). */
bool text_key_is_binary(const char *key);

/*
 * Appends pairs up to max bytes; once over, it stays failed. Its memory is
 * wiped whenever it is given back (growing, freeing): it may hold secrets.
 */
struct textbuf {
	char *buf;
	size_t len;
	size_t cap;
	size_t max;
	bool overflow;
};

void textbuf_init(struct textbuf *tb, size_t max);
void textbuf_free(struct textbuf *tb);
void textbuf_reset(struct textbuf *tb);
int textbuf_add(struct textbuf *tb, const char *key, const char *value);
int textbuf_addu(struct textbuf *tb, const char *key, unsigned long value);
/* Appends raw bytes (already NUL-separated pairs). */
int textbuf_append(struct textbuf *tb, const void *data, size_t len);

#endif
