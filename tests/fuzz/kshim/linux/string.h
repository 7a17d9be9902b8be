/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C library's string functions, and strnstr() as lib/string.c has it
 * (the C library has none): it reads at most len bytes of s1.
 */
#ifndef KSHIM_LINUX_STRING_H
#define KSHIM_LINUX_STRING_H

#include <string.h>

static inline char *strnstr(const char *s1, const char *s2, size_t len)
{
	size_t l2 = strlen(s2);

	if (!l2)
		return (char *)s1;
	while (len >= l2) {
		len--;
		if (!memcmp(s1, s2, l2))
			return (char *)s1;
		s1++;
	}
	return NULL;
}

#endif
