// SPDX-License-Identifier: GPL-2.0
/* The wait that wrong CHAP responses earn their source. */
#include <stdbool.h>
#include <string.h>

#include "acl.h"
#include "backoff.h"

#define ENTRIES		4096	/* remembered; the least recent goes */

struct entry {
	bool used;
	uint8_t key[16];
	int len;
	uint32_t scope;
	unsigned int failures;
	uint64_t last;			/* the last failure */
	uint64_t until;			/* no connection taken before */
};

static struct entry entries[ENTRIES];
static unsigned int nr_used;		/* none: nothing to look at */

static void forget(struct entry *e)
{
	e->used = false;
	nr_used--;
}

static bool same_source(const struct entry *e, const uint8_t *key, int len)
{
	return e->used && e->len == len && !memcmp(e->key, key, len);
}

/* Forget what is an hour old; then the entry of src and scope, if any. */
static struct entry *find(const uint8_t *key, int len, uint32_t scope,
			  uint64_t now)
{
	struct entry *e;

	for (e = entries; e < entries + ENTRIES; e++) {
		if (e->used && now - e->last >= BACKOFF_FORGET_MS)
			forget(e);
		if (same_source(e, key, len) && e->scope == scope)
			return e;
	}
	return NULL;
}

void backoff_failed(const struct sockaddr_storage *src, uint32_t scope,
		    uint64_t now)
{
	uint8_t key[16];
	int len = source_key(src, key);
	struct entry *e;
	uint64_t wait = BACKOFF_FIRST_MS;
	unsigned int i;

	if (!len)
		return;
	e = find(key, len, scope, now);
	if (!e) {
		struct entry *victim = NULL;

		for (e = entries; e < entries + ENTRIES; e++) {
			if (!e->used) {
				victim = e;
				break;
			}
			if (!victim || e->last < victim->last)
				victim = e;
		}
		e = victim;
		if (!e->used)
			nr_used++;
		memset(e, 0, sizeof(*e));
		e->used = true;
		e->len = len;
		e->scope = scope;
		memcpy(e->key, key, len);
	}
	e->failures++;
	e->last = now;
	if (e->failures <= BACKOFF_FREE)
		return;
	for (i = BACKOFF_FREE + 1; i < e->failures && wait < BACKOFF_MAX_MS;
	     i++)
		wait *= 2;
	e->until = now + (wait < BACKOFF_MAX_MS ? wait : BACKOFF_MAX_MS);
}

void backoff_passed(const struct sockaddr_storage *src, uint32_t scope,
		    uint64_t now)
{
	uint8_t key[16];
	int len = source_key(src, key);
	struct entry *e = len ? find(key, len, scope, now) : NULL;

	if (e)
		forget(e);
}

uint64_t backoff_check(const struct sockaddr_storage *src, uint64_t now,
		       unsigned int *failures)
{
	uint8_t key[16];
	int len = nr_used ? source_key(src, key) : 0;
	uint64_t wait = 0;
	struct entry *e;

	*failures = 0;
	for (e = entries; len && e < entries + ENTRIES; e++) {
		if (!same_source(e, key, len) || now - e->last >= BACKOFF_FORGET_MS)
			continue;
		if (e->failures > *failures)
			*failures = e->failures;
		if (e->until > now && e->until - now > wait)
			wait = e->until - now;
	}
	return wait;
}

uint64_t backoff_wait(const struct sockaddr_storage *src, uint64_t now)
{
	unsigned int failures;

	return backoff_check(src, now, &failures);
}

unsigned int backoff_failures(const struct sockaddr_storage *src,
			      uint64_t now)
{
	unsigned int failures;

	backoff_check(src, now, &failures);
	return failures;
}
