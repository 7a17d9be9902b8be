/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a small regular file whole: ietd.conf and the access files. */
#ifndef IET_USR_READFILE_H
#define IET_USR_READFILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The whole of path, at most max bytes, into *bufp (malloc'ed, one byte
 * more than *lenp for the caller's use). A file that shrinks while read is
 * an error unless allow_short, then what is there is taken. Returns 0, or
 * a negative errno (-ENOENT from open as it is) with err saying
 * "PATH: what".
 */
int read_small_file(const char *path, size_t max, bool allow_short,
		    char **bufp, size_t *lenp, char *err, size_t errlen);

#endif
