/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstrtoull() as lib/kstrtox.c has it: an optional "+", for
 * base 16 an optional "0x", digits, an optional "\n", then the end; 0 and
 * *res set, or -EINVAL (nothing or something else) or -ERANGE (more than
 * 64 bits). The fuzzer must accept what the kernel accepts, no more.
 */
#ifndef KSHIM_LINUX_KERNEL_H
#define KSHIM_LINUX_KERNEL_H

#include <errno.h>
#include <linux/limits.h>
#include <linux/types.h>

static inline int kstrtoull(const char *s, unsigned int base,
			    unsigned long long *res)
{
	unsigned long long v = 0;
	const char *start;
	bool overflow = false;

	if (s[0] == '+')
		s++;
	if (base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	for (start = s; ; s++) {
		unsigned int d;
		char c = *s;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		if (v > (U64_MAX - d) / base)
			overflow = true;
		v = v * base + d;
	}
	if (overflow)
		return -ERANGE;
	if (s == start)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

#endif
