/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The harnesses' input as it would come off a socket: PDUs one after the
 * other, each a BHS and as much data as its DataSegmentLength says,
 * padded. One longer than max is handed over without its data, as conn.c
 * refuses to read it.
 */
#ifndef IET_FUZZ_PDU_STREAM_H
#define IET_FUZZ_PDU_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pdu.h"

/* Take the next PDU off the stream; false when it runs out. */
static inline bool next_pdu(const uint8_t **p, size_t *left,
			    const uint8_t **bhs, const uint8_t **data,
			    size_t *dlen, size_t max)
{
	uint32_t dl;
	size_t padded;

	if (*left < BHS_LEN)
		return false;
	*bhs = *p;
	*p += BHS_LEN;
	*left -= BHS_LEN;
	dl = (uint32_t)(*bhs)[5] << 16 | (*bhs)[6] << 8 | (*bhs)[7];
	if (dl > max) {
		*data = NULL;
		*dlen = 0;
		return true;
	}
	padded = dl + pdu_pad(dl);
	if (padded > *left)
		return false;
	*data = *p;
	*dlen = dl;
	*p += padded;
	*left -= padded;
	return true;
}

#endif
