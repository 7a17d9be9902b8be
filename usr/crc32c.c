// SPDX-License-Identifier: GPL-2.0
/* Table-driven CRC32C; discovery traffic is tiny, speed does not matter. */
#include <stdbool.h>

#include "crc32c.h"

#define POLY	0x82f63b78u	/* reflected Castagnoli polynomial */

static uint32_t table[256];
static bool table_ready;

static void make_table(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		table[i] = c;
	}
	table_ready = true;
}

uint32_t crc32c_continue(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!table_ready)
		make_table();
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t crc32c(const void *data, size_t len)
{
	return crc32c_continue(0, data, len);
}

void crc32c_put(uint8_t *out, uint32_t crc)
{
	out[0] = crc;
	out[1] = crc >> 8;
	out[2] = crc >> 16;
	out[3] = crc >> 24;
}

uint32_t crc32c_get(const uint8_t *in)
{
	return (uint32_t)in[0] | (uint32_t)in[1] << 8 |
	       (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
}
