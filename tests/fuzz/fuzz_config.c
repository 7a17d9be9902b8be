// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: ietd.conf parser. */
#include <stdlib.h>
#include <string.h>

#include "config.h"

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
	config_free(&cfg);
	return 0;
}
