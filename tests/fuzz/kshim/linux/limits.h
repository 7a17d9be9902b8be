/* SPDX-License-Identifier: GPL-2.0 */
/* U64_MAX, which the kernel's <linux/limits.h> has. */
#ifndef KSHIM_LINUX_LIMITS_H
#define KSHIM_LINUX_LIMITS_H

#define U64_MAX ((unsigned long long)~0ULL)

#endif
