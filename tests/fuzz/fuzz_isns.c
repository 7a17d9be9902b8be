// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: one PDU as an iSNS server (or anyone who reaches the
 * notification listener) sends it to ietd, taken apart by every parser of
 * isns_pdu.c: the header, a response's status and attributes, a DD query
 * answer into the members a target admits, a registration's period, an
 * SCN and an ESI with the answers built to them. The members must come
 * out sorted, unique, printable names that are not the target, and the
 * access cache must then admit exactly them.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "isns_acl.h"
#include "isns_pdu.h"

#define TARGET	"iqn.2001-04.com.example:disk1"

static struct isns_msg m;

static void members(const uint8_t *payload, size_t len)
{
	struct isns_names names;
	struct isns_iter it;
	uint32_t status;
	size_t i, j;

	if (isns_response(payload, len, &status, &it))
		return;
	if (isns_dd_members(&it, TARGET, &names))
		return;
	for (i = 0; i < names.nr; i++) {
		size_t n = strnlen(names.v[i], ISNS_NAME_MAX + 1);

		if (!n || n > ISNS_NAME_MAX || !strcasecmp(names.v[i], TARGET))
			abort();
		for (j = 0; j < n; j++)
			if ((unsigned char)names.v[i][j] <= ' ' ||
			    (unsigned char)names.v[i][j] >= 0x7f)
				abort();
		if (i && strcasecmp(names.v[i - 1], names.v[i]) >= 0)
			abort();
	}
	j = names.nr;
	{
		char first[ISNS_NAME_MAX + 1] = "";

		if (j)
			strcpy(first, names.v[0]);
		if (isns_acl_set(TARGET, &names))
			abort();
		if (j && isns_acl_check(TARGET, first) != ISNS_ADMIT)
			abort();
		if (isns_acl_check(TARGET, TARGET) != ISNS_NOT_IN_DD ||
		    isns_acl_count(TARGET) != (long)j)
			abort();
	}
	isns_acl_clear();
}

static void payload_parsers(const uint8_t *p, size_t len)
{
	char dest[ISNS_NAME_MAX + 1];
	struct isns_iter it;
	struct isns_tlv t;
	const char *s;
	uint32_t v, status;
	int ret;

	isns_iter_init(&it, p, len);
	while ((ret = isns_iter_next(&it, &t)) > 0) {
		if (t.val < p || t.val + t.len > p + len)
			abort();
		if (isns_tlv_name(&t, &s) && strlen(s) > ISNS_NAME_MAX)
			abort();
		isns_tlv_u32(&t, &v);
	}
	members(p, len);
	if (!isns_response(p, len, &status, &it))
		isns_reg_period(&it);
	if (!isns_scn_parse(p, len, dest, sizeof(dest))) {
		if (isns_build_scn_rsp(&m, 1, dest) || m.len > ISNS_SEND_MAX)
			abort();
	}
	if (!isns_build_esi_rsp(&m, 1, p, len) &&
	    (m.len != ISNS_HDR_LEN + 4 + len || memcmp(m.buf + 16, p, len)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct isns_hdr h;
	uint8_t *copy;

	if (size > ISNS_PDU_MAX)
		return 0;
	/* Exactly size bytes: a parser that reads past them trips ASan. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!isns_hdr_parse(copy, size, &h)) {
		if (h.len > ISNS_PAYLOAD_MAX)
			abort();
		/* What isns.c hands on: a whole PDU's payload. */
		if (size - ISNS_HDR_LEN >= h.len)
			payload_parsers(copy + ISNS_HDR_LEN, h.len);
	}
	free(copy);
	return 0;
}
