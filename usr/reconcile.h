/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bring the kernel to the configuration at start without disturbing what
 * it already serves: create missing targets and LUNs, keep matching ones,
 * and adopt targets only the kernel knows (their sessions outlived ietd).
 */
#ifndef IET_USR_RECONCILE_H
#define IET_USR_RECONCILE_H

#include <stddef.h>

#include "kernel.h"
#include "model.h"

/*
 * All conflicts are found before the kernel is touched; a kernel failure
 * half way undoes what this call created. On success cfg also lists the
 * kernel-only targets (line 0) and every LUN's ScsiId/ScsiSN is filled in.
 */
int reconcile(struct config *cfg, const struct kstate *st, char *err,
	      size_t errlen);

#endif
