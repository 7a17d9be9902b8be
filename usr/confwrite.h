/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running model written back in ietd.conf syntax: what ietadm --op save
 * prints and what ietd's state file holds. config_parse() reads the text
 * back to the same model (the round trip is tested), including runtime
 * changes and the CHAP secrets, so the output is for root only.
 */
#ifndef IET_USR_CONFWRITE_H
#define IET_USR_CONFWRITE_H

#include "model.h"
#include "text.h"

/*
 * flags: CONFIG_STATE (config.h) adds each target's Origin line, which
 * only ietd's state file may carry. Returns 0 or -ENOSPC / -ENOMEM.
 */
int config_write(const struct config *cfg, unsigned int flags,
		 const char *header, struct textbuf *out);

/* One LUN's "Key=Value,..." argument list, as a Lun line has it. */
int lun_args_format(const struct lun_conf *lun, char *buf, size_t len);
/* A portal as PortalGroup lists it (buf of 56 bytes holds any). */
void portal_addr_format(const struct portal_addr *pa, char *buf, size_t len);

#endif
