// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the access-file parser (initiators.allow, .deny,
 * targets.allow) and rule matching against a few initiators and addresses.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"

static const char *const names[] = {
	"iqn.2001-04.com.example:disk1", "iqn.1993-08.org.debian:01:abc",
	"ALL", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage v4 = { 0 }, v6 = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&v4;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&v6;
	struct acl_file af = { .exists = true };
	char err[512];
	size_t i, j;

	s4->sin_family = AF_INET;
	inet_pton(AF_INET, "192.0.2.77", &s4->sin_addr);
	s6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::77", &s6->sin6_addr);
	err[0] = '\0';
	if (acl_parse((const char *)data, size, "fuzz.allow", &af, err,
		      sizeof(err))) {
		/* One line naming the file, and nothing left behind. */
		if (strncmp(err, "fuzz.allow", 10) || strchr(err, '\n') ||
		    af.rules || af.nr)
			abort();
		return 0;
	}
	for (i = 0; i < af.nr; i++)
		if (!af.rules[i].nr || !af.rules[i].line)
			abort();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
			enum acl_result r = acl_match(&af, names[i], names[j],
						      &v4);

			if (r != ACL_NO_RULE && r != ACL_MISS && r != ACL_HIT)
				abort();
			acl_match(&af, names[i], NULL, &v6);
		}
	}
	acl_file_free(&af);
	return 0;
}
