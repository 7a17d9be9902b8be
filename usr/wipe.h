/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory that may hold secrets (CHAP secrets, the text of a login, a
 * configuration) is wiped before it goes back to the allocator: freed,
 * or left behind by growing, since realloc() frees the old block as it
 * is. Shared by ietd and ietadm.
 */
#ifndef IET_USR_WIPE_H
#define IET_USR_WIPE_H

#include <stddef.h>

/* Wipe a secret (or anything derived from one) so it leaves no copy. */
void wipe(void *p, size_t len);
/* free() of the len bytes at p, wiped first; p may be NULL. */
void wiped_free(void *p, size_t len);
/*
 * realloc() that leaves no copy behind: a new block of new_len bytes gets
 * the first old_len (at most new_len) bytes of p, then p is wiped and
 * freed. NULL when out of memory, p then left as it was.
 */
void *wiped_realloc(void *p, size_t old_len, size_t new_len);

#endif
