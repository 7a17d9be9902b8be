// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: iSCSI key=value text parser and builder. */
#include <stdlib.h>
#include <string.h>

#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct text_list tl;
	struct textbuf tb;
	char err[256];
	size_t i;

	if (text_parse(data, size, &tl, err, sizeof(err)))
		return 0;
	textbuf_init(&tb, TEXT_SET_MAX);
	for (i = 0; i < tl.nr; i++) {
		size_t klen = strlen(tl.pairs[i].key);

		if (!klen || klen > TEXT_KEY_MAX || strchr(tl.pairs[i].key, '='))
			abort();
		if (!tl.pairs[i].too_long)
			textbuf_add(&tb, tl.pairs[i].key, tl.pairs[i].value);
	}
	/* What we rebuild from parsed pairs parses again. */
	if (!tb.overflow) {
		struct text_list again;

		if (text_parse(tb.buf, tb.len, &again, err, sizeof(err)))
			abort();
		text_list_free(&again);
	}
	textbuf_free(&tb);
	text_list_free(&tl);
	return 0;
}
