// SPDX-License-Identifier: GPL-2.0
/* The wait that failed authentications earn their source. */
#include <stdbool.h>
#include <string.h>

#include "acl.h"
#include "backoff.h"

#define SOURCES		256	/* remembered; the least recent goes */

struct source {
	bool used;
	uint8_t key[16];
	int len;
	unsigned int failures;
	uint64_t last;			/* the last failure */
	uint64_t until;			/* no connection taken before */
};

static struct source sources[SOURCES];

static int key_of(const struct sockaddr_storage *src, uint8_t key[16])
{
	int len = addr_bytes(src, key);

	return len == 16 ? 8 : len;	/* an IPv6 host has its /64 */
}

static struct source *find(const struct sockaddr_storage *src, uint64_t now,
			   bool make)
{
	struct source *s, *victim = NULL;
	uint8_t key[16];
	int len = key_of(src, key);

	if (!len)
		return NULL;
	for (s = sources; s < sources + SOURCES; s++) {
		if (s->used && now - s->last >= BACKOFF_FORGET_MS)
			s->used = false;
		if (s->used && s->len == len && !memcmp(s->key, key, len))
			return s;
	}
	if (!make)
		return NULL;
	for (s = sources; s < sources + SOURCES; s++) {
		if (!s->used) {
			victim = s;
			break;
		}
		if (!victim || s->last < victim->last)
			victim = s;
	}
	memset(victim, 0, sizeof(*victim));
	victim->used = true;
	victim->len = len;
	memcpy(victim->key, key, len);
	return victim;
}

void backoff_failed(const struct sockaddr_storage *src, uint64_t now)
{
	struct source *s = find(src, now, true);
	uint64_t wait = BACKOFF_FIRST_MS;
	unsigned int i;

	if (!s)
		return;
	s->failures++;
	s->last = now;
	if (s->failures <= BACKOFF_FREE)
		return;
	for (i = BACKOFF_FREE + 1; i < s->failures && wait < BACKOFF_MAX_MS; i++)
		wait *= 2;
	if (wait > BACKOFF_MAX_MS)
		wait = BACKOFF_MAX_MS;
	s->until = now + wait;
}

void backoff_passed(const struct sockaddr_storage *src, uint64_t now)
{
	struct source *s = find(src, now, false);

	if (s)
		s->used = false;
}

uint64_t backoff_wait(const struct sockaddr_storage *src, uint64_t now)
{
	struct source *s = find(src, now, false);

	return s && s->until > now ? s->until - now : 0;
}

unsigned int backoff_failures(const struct sockaddr_storage *src,
			      uint64_t now)
{
	struct source *s = find(src, now, false);

	return s ? s->failures : 0;
}
