/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The access files as last read, for every login and SendTargets: read
 * and compiled again only when one of them changed, so that a peer that
 * asks a thousand times costs a thousand stat() calls, not a thousand
 * parses of three files and their patterns.
 *
 * A change is another file found first in the directories, a file gone or
 * come, or a different device, inode, size, modification or change time
 * of one (an edit in place, a rename over it). An edit that keeps all of
 * those within the file system's timestamp granularity is seen at the
 * next SIGHUP, which forgets what was read (access_cache_flush()).
 */
#ifndef IET_USR_ACL_CACHE_H
#define IET_USR_ACL_CACHE_H

#include <stddef.h>

#include "acl.h"

/*
 * The rules of the files in dirs (as access_load() reads them), or NULL
 * with err saying why they cannot be used: a broken file refuses until it
 * is changed, without being parsed again for each request. dirs NULL:
 * no files, everything allowed. Valid until the next call or flush.
 */
const struct access *access_cached(const char *dirs, char *err,
				   size_t errlen);
/* Read the files afresh at the next access_cached(). */
void access_cache_flush(void);
/* Times the files were read and parsed (tests, ietadm's counters). */
unsigned long access_cache_loads(void);

#endif
