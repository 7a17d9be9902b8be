// SPDX-License-Identifier: GPL-2.0
/* The initiators each target's discovery domains hold, as last read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "isns_acl.h"

struct known {
	char target[ISNS_NAME_MAX + 1];
	struct isns_names names;
};

static struct {
	struct known *v;
	size_t nr, cap;
} acl;

static struct known *find(const char *target)
{
	size_t i;

	for (i = 0; i < acl.nr; i++)
		if (!strcasecmp(acl.v[i].target, target))
			return &acl.v[i];
	return NULL;
}

int isns_acl_set(const char *target, struct isns_names *names)
{
	struct known *k = find(target);

	if (strlen(target) > ISNS_NAME_MAX)
		return -EINVAL;
	if (!k) {
		if (acl.nr == acl.cap) {
			size_t cap = acl.cap ? acl.cap * 2 : 16;
			struct known *v = realloc(acl.v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			acl.v = v;
			acl.cap = cap;
		}
		k = &acl.v[acl.nr++];
		strcpy(k->target, target);
	} else {
		isns_names_free(&k->names);
	}
	k->names = *names;
	names->v = NULL;
	names->nr = 0;
	return 0;
}

void isns_acl_forget(const char *target)
{
	struct known *k = find(target);

	if (!k)
		return;
	isns_names_free(&k->names);
	*k = acl.v[--acl.nr];
}

void isns_acl_clear(void)
{
	size_t i;

	for (i = 0; i < acl.nr; i++)
		isns_names_free(&acl.v[i].names);
	free(acl.v);
	memset(&acl, 0, sizeof(acl));
}

enum isns_verdict isns_acl_check(const char *target, const char *initiator)
{
	const struct known *k = find(target);

	if (!k)
		return ISNS_UNKNOWN;
	return isns_names_has(&k->names, initiator) ? ISNS_ADMIT :
	       ISNS_NOT_IN_DD;
}

long isns_acl_count(const char *target)
{
	const struct known *k = find(target);

	return k ? (long)k->names.nr : -1;
}
