/* SPDX-License-Identifier: GPL-2.0 */
/* A kernel with <linux/unaligned.h>, for compat_unaligned.h. */
#ifndef KSHIM_LINUX_VERSION_H
#define KSHIM_LINUX_VERSION_H

#define KERNEL_VERSION(a, b, c) \
	(((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE KERNEL_VERSION(6, 12, 0)

#endif
