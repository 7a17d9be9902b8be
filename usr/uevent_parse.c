// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel uevent taken apart (uevent.h): "ACTION@DEVPATH", then
 * KEY=VALUE strings, each ended by a NUL, as lib/kobject_uevent.c sends
 * them. Only a block device's change matters here. Pure: the fuzz harness
 * and the unit tests feed it anything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "uevent.h"

/* "KEY=" at the start of s: its value, else NULL. */
static const char *value_of(const char *s, const char *key)
{
	size_t n = strlen(key);

	return !strncmp(s, key, n) && s[n] == '=' ? s + n + 1 : NULL;
}

static bool parse_num(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 0xfffff)	/* 20 bits, as dev_t's minor */
		return false;
	*out = v;
	return true;
}

bool uevent_block_change(const char *buf, size_t len, dev_t *dev)
{
	bool change = false, block = false, disk = false;
	unsigned int major = 0, minor = 0;
	bool have_major = false, have_minor = false;
	const char *s = buf, *end = buf + len, *nul, *v;

	/* The header "change@/devices/...": only the kernel's form. */
	nul = memchr(s, '\0', len);
	if (!nul || !strchr(s, '@'))
		return false;
	for (s = nul + 1; s < end; s = nul + 1) {
		nul = memchr(s, '\0', end - s);
		if (!nul)
			return false;		/* a string not ended: torn */
		if ((v = value_of(s, "ACTION")))
			change = !strcmp(v, "change");
		else if ((v = value_of(s, "SUBSYSTEM")))
			block = !strcmp(v, "block");
		else if ((v = value_of(s, "DEVTYPE")))
			disk = !strcmp(v, "disk") || !strcmp(v, "partition");
		else if ((v = value_of(s, "MAJOR")))
			have_major = parse_num(v, &major);
		else if ((v = value_of(s, "MINOR")))
			have_minor = parse_num(v, &minor);
	}
	if (!change || !block || !disk || !have_major || !have_minor ||
	    major > 0xfff)
		return false;
	*dev = makedev(major, minor);
	return true;
}
