/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unaligned accessors, the one difference between kernels that
 * pr_parse.c needs: it includes this rather than compat.h, for it builds
 * on the host too (tests/fuzz/kshim), where compat.h's block, network
 * and netlink headers do not exist. compat.h includes it for the rest.
 */
#ifndef IET_COMPAT_UNALIGNED_H
#define IET_COMPAT_UNALIGNED_H

#include <linux/version.h>

/*
 * 6.12 moved the unaligned accessors out of asm/ (by version: sparse
 * does not know __has_include).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif
