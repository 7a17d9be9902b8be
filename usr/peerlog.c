// SPDX-License-Identifier: GPL-2.0
/* The log of what peers cause, limited per source. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "acl.h"
#include "peerlog.h"

#define SOURCES		128	/* remembered at once; the least recent goes */

struct source {
	bool used;
	uint8_t key[16];
	int len;			/* of key: source_key() */
	time_t second;
	unsigned int count;
	unsigned long held;		/* lines held back in that second */
};

static struct source sources[SOURCES];
static struct source all;

static time_t this_second(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void name_of(const struct source *s, char *buf, size_t len)
{
	uint8_t a[16] = { 0 };

	if (s == &all) {
		snprintf(buf, len, "peers");
	} else if (s->len == 4) {
		inet_ntop(AF_INET, s->key, buf, len);
	} else if (s->len == 8) {
		memcpy(a, s->key, 8);
		inet_ntop(AF_INET6, a, buf, len);
		strncat(buf, "/64", len - strlen(buf) - 1);
	} else if (s->len == 16) {
		inet_ntop(AF_INET6, s->key, buf, len);
	} else {
		snprintf(buf, len, "an unknown address");
	}
}

static bool take(struct source *s, time_t now, unsigned int burst);

/*
 * The count a source's second held back, itself a line of the rate of
 * all: past it, the count goes to all's (one line for them at the end).
 */
static void report(struct source *s, time_t now)
{
	char name[INET6_ADDRSTRLEN + 8];

	if (!s->held)
		return;
	if (s != &all && !take(&all, now, PEERLOG_ALL_BURST)) {
		all.held += s->held - 1;	/* take() counted one */
		s->held = 0;
		return;
	}
	name_of(s, name, sizeof(name));
	log_msg(LOG_WARNING, "%lu messages caused by %s suppressed", s->held,
		name);
	s->held = 0;
}

/* The entry of src (source_key()), made if need be. */
static struct source *source_of(const struct sockaddr_storage *src,
				 time_t now)
{
	struct source *s, *free_one = NULL, *oldest = NULL;
	uint8_t key[16];
	int len = src ? source_key(src, key) : 0;

	for (s = sources; s < sources + SOURCES; s++) {
		if (!s->used) {
			free_one = free_one ? free_one : s;
			continue;
		}
		if (s->len == len && !memcmp(s->key, key, len))
			return s;
		if (!oldest || s->second < oldest->second)
			oldest = s;
	}
	s = free_one ? free_one : oldest;
	report(s, now);
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->len = len;
	memcpy(s->key, key, len);
	return s;
}

/* Whether s may say one more line this second. */
static bool take(struct source *s, time_t now, unsigned int burst)
{
	if (s->second != now) {
		report(s, now);
		s->second = now;
		s->count = 0;
	}
	if (s->count >= burst) {
		s->held++;
		return false;
	}
	s->count++;
	return true;
}

void peer_log(const struct sockaddr_storage *src, int prio, const char *fmt,
	      ...)
{
	time_t now = this_second();
	va_list ap;

	if (!take(source_of(src, now), now, PEERLOG_SOURCE_BURST) ||
	    !take(&all, now, PEERLOG_ALL_BURST))
		return;
	va_start(ap, fmt);
	log_vmsg(prio, fmt, ap);
	va_end(ap);
}

void peer_log_tick(void)
{
	time_t now = this_second();
	struct source *s;

	for (s = sources; s < sources + SOURCES; s++)
		if (s->used && s->second != now)
			report(s, now);
	if (all.second != now)
		report(&all, now);
}
