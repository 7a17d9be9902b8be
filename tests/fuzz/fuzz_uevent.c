// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for the kernel's uevents as ietd reads them
 * (usr/uevent_parse.c). The input is copied into a buffer of exactly its
 * size, so that AddressSanitizer reports the first byte read past it; a
 * change it accepts names a device number that fits dev_t's 12 and 20
 * bits, and comes from input that holds the strings it was read from.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "uevent.h"

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		abort();						\
	}								\
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	dev_t dev = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (uevent_block_change(buf, size, &dev)) {
		CHECK(major(dev) <= 0xfff && minor(dev) <= 0xfffff);
		CHECK(memmem(buf, size, "ACTION=change", 14));
		CHECK(memmem(buf, size, "SUBSYSTEM=block", 16));
		CHECK(size && buf[size - 1] == '\0');
	}
	free(buf);
	return 0;
}
