// SPDX-License-Identifier: GPL-2.0
/* UTF-8 as RFC 3629 has it: what JSON and Prometheus' labels may hold. */
#include "utf8.h"

size_t utf8_len(const unsigned char *c)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*c >= 0xc2 && *c <= 0xdf)
		n = 2;
	else if (*c >= 0xe0 && *c <= 0xef)
		n = 3;
	else if (*c >= 0xf0 && *c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range excludes what the first cannot start. */
	if (*c == 0xe0)
		lo = 0xa0;
	else if (*c == 0xed)
		hi = 0x9f;
	else if (*c == 0xf0)
		lo = 0x90;
	else if (*c == 0xf4)
		hi = 0x8f;
	if (c[1] < lo || c[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((c[i] & 0xc0) != 0x80)
			return 0;
	return n;
}
