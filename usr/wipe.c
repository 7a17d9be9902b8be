// SPDX-License-Identifier: GPL-2.0
/* Giving back memory that may hold secrets (wipe.h). */
#include <stdlib.h>
#include <string.h>

#include "wipe.h"

void wipe(void *p, size_t len)
{
	if (p)
		explicit_bzero(p, len);
}

void wiped_free(void *p, size_t len)
{
	wipe(p, len);
	free(p);
}

void *wiped_realloc(void *p, size_t old_len, size_t new_len)
{
	void *np = malloc(new_len ? new_len : 1);

	if (!np)
		return NULL;
	if (p)
		memcpy(np, p, old_len < new_len ? old_len : new_len);
	wiped_free(p, old_len);
	return np;
}
