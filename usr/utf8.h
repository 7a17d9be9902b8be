/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IET_USR_UTF8_H
#define IET_USR_UTF8_H

#include <stddef.h>

/*
 * The length of the UTF-8 sequence at c (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 if it is not one. c is
 * NUL-terminated: no byte past a NUL is read.
 */
size_t utf8_len(const unsigned char *c);

#endif
