// SPDX-License-Identifier: GPL-2.0
/* The access files read once, and again when they change. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl_cache.h"

#define ACL_NAMES	3

/* What identifies the file one name resolves to, for a change to show. */
struct stamp {
	int err;			/* 0 found; -ENOENT in no directory */
	char path[512];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

static struct {
	bool valid;
	char *dirs;
	struct stamp stamps[ACL_NAMES];
	struct access a;
	int ret;
	char err[320];
	unsigned long loads;
} cache;

static const char *const names[ACL_NAMES] = {
	ACL_ALLOW, ACL_DENY, ACL_TARGETS,
};

/* The first of dirs that has name, as access_load() will look for it. */
static void stamp_of(const char *dirs, const char *name, struct stamp *s)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->err = -ENOENT;
	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");

		if ((size_t)snprintf(s->path, sizeof(s->path), "%.*s/%s",
				     (int)len, dirs, name) >= sizeof(s->path)) {
			s->err = -ENAMETOOLONG;
			return;
		}
		if (!stat(s->path, &st)) {
			s->err = 0;
			s->dev = st.st_dev;
			s->ino = st.st_ino;
			s->size = st.st_size;
			s->mtime = st.st_mtim;
			s->ctime = st.st_ctim;
			return;
		}
		if (errno != ENOENT) {
			/* Unreadable: access_load() says why, every time. */
			s->err = -errno;
			return;
		}
		dirs += len;
		if (*dirs)
			dirs++;
	}
	s->path[0] = '\0';
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool same_stamp(const struct stamp *a, const struct stamp *b)
{
	return a->err == b->err && !strcmp(a->path, b->path) &&
	       a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       same_time(&a->mtime, &b->mtime) &&
	       same_time(&a->ctime, &b->ctime);
}

void access_cache_flush(void)
{
	if (cache.valid && !cache.ret)
		access_free(&cache.a);
	free(cache.dirs);
	cache.dirs = NULL;
	cache.valid = false;
}

unsigned long access_cache_loads(void)
{
	return cache.loads;
}

const struct access *access_cached(const char *dirs, char *err,
				   size_t errlen)
{
	static const struct access none;
	struct stamp now[ACL_NAMES];
	bool fresh;
	size_t i;

	if (!dirs)
		return &none;
	for (i = 0; i < ACL_NAMES; i++)
		stamp_of(dirs, names[i], &now[i]);
	fresh = cache.valid && !strcmp(cache.dirs, dirs);
	for (i = 0; fresh && i < ACL_NAMES; i++)
		fresh = !now[i].err || now[i].err == -ENOENT ?
			same_stamp(&now[i], &cache.stamps[i]) : false;
	if (!fresh) {
		access_cache_flush();
		cache.dirs = strdup(dirs);
		if (!cache.dirs) {
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		/* Stamped before reading: a change while read shows next time. */
		memcpy(cache.stamps, now, sizeof(now));
		cache.ret = access_load(&cache.a, dirs, cache.err,
					sizeof(cache.err));
		cache.loads++;
		cache.valid = true;
	}
	if (cache.ret) {
		snprintf(err, errlen, "%s", cache.err);
		return NULL;
	}
	return &cache.a;
}
