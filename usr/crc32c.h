/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32C (Castagnoli), the iSCSI header and data digest, for the discovery
 * sessions ietd serves itself; normal sessions' digests are the kernel's.
 */
#ifndef IET_USR_CRC32C_H
#define IET_USR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(const void *data, size_t len);
/* The CRC of A followed by data, given crc = crc32c(A). */
uint32_t crc32c_continue(uint32_t crc, const void *data, size_t len);
/* The 4 digest bytes as they go on the wire (RFC 7143 B.4: LSB first). */
void crc32c_put(uint8_t *out, uint32_t crc);
uint32_t crc32c_get(const uint8_t *in);

#endif
