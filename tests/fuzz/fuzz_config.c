// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: ietd.conf parser. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "confwrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char err[1024];
	size_t i;

	err[0] = '\0';
	if (config_parse((const char *)data, size, "fuzz.conf", &cfg, err,
			 sizeof(err))) {
		/* A failure is one line naming the file, and leaves nothing. */
		if (strncmp(err, "fuzz.conf:", 10) || strchr(err, '\n') ||
		    cfg.targets || cfg.nr_targets)
			abort();
		return 0;
	}
	for (i = 0; i < cfg.nr_targets; i++) {
		const struct target_conf *t = &cfg.targets[i];

		if (t->tid != i + 1 || !t->name[0] ||
		    t->keys[IET_KEY_FIRST_BURST] > t->keys[IET_KEY_MAX_BURST])
			abort();
	}
	/* What ietd would save reads back, to the same text again. */
	{
		struct textbuf a, b;
		struct config back;

		textbuf_init(&a, 1 << 22);
		textbuf_init(&b, 1 << 22);
		if (config_write(&cfg, 0, NULL, &a))
			abort();
		if (config_parse(a.buf ? a.buf : "", a.len, "saved", &back, err,
				 sizeof(err)))
			abort();
		if (config_write(&back, 0, NULL, &b) || a.len != b.len ||
		    (a.len && memcmp(a.buf, b.buf, a.len)))
			abort();
		config_free(&back);
		textbuf_free(&a);
		textbuf_free(&b);
	}
	config_free(&cfg);
	return 0;
}
