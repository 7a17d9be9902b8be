/* SPDX-License-Identifier: GPL-2.0 */
/* The version ietd and ietadm report. */
#ifndef IET_USR_VERSION_H
#define IET_USR_VERSION_H

#define IET_VERSION	"2.0.0"

#endif
