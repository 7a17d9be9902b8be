/* SPDX-License-Identifier: GPL-2.0 */
/* What a file said, in 64 hex digits (OpenSSL's SHA-256). */
#ifndef IET_USR_DIGEST_H
#define IET_USR_DIGEST_H

#include <stddef.h>

/* hex gets 64 lowercase hex digits and a NUL; -1 if OpenSSL fails. */
int sha256_hex(const void *data, size_t len, char hex[65]);

#endif
