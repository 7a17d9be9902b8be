// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: the ietadm request parser of ietd. */
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_req r, again;
	static char buf[CTL_REQ_MAX + 64];
	char err[256];
	int n;

	if (ctl_req_parse((const char *)data, size, &r, err, sizeof(err)))
		return 0;
	/* A parsed request formats back to one that parses the same. */
	n = ctl_req_format(&r, buf, sizeof(buf));
	if (n < 0)
		return 0;
	if (ctl_req_parse(buf, n, &again, err, sizeof(err)))
		abort();
	/* Formatting speaks the newest version; the fields stay the same. */
	again.version = r.version;
	if (memcmp(&r, &again, sizeof(r)))
		abort();
	return 0;
}
