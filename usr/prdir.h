/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The directory where iscsi_trgt keeps persistent reservations that must
 * survive a power loss (APTPL): named by the module's pr_dir parameter,
 * made by ietd (root only) so that the kernel finds it when an initiator
 * asks for APTPL.
 */
#ifndef IET_USR_PRDIR_H
#define IET_USR_PRDIR_H

#include <stddef.h>

#define PRDIR_PARAM	"/sys/module/iscsi_trgt/parameters/pr_dir"

/*
 * Make dir and its missing parents (mode 0700; existing ones are left as
 * they are). 0, or -errno with err saying where it failed.
 */
int prdir_make(const char *dir, char *err, size_t errlen);

/*
 * The directory the module was given (param: PRDIR_PARAM's path), into
 * buf: 0, or -errno.
 */
int prdir_read(const char *param, char *buf, size_t len);

#endif
