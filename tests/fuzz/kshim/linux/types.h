/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's headers on the host, as far as kernel/pr_parse.c uses them
 * (fuzz_pr_tpid builds that very file): its integer types.
 */
#ifndef KSHIM_LINUX_TYPES_H
#define KSHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>

/* As asm-generic/int-ll64.h has them: u64 is unsigned long long. */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#endif
