/* SPDX-License-Identifier: GPL-2.0 */
/* A target's portal groups and their ALUA states in ietadm (op_alua.c). */
#ifndef IET_USR_OP_ALUA_H
#define IET_USR_OP_ALUA_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl.h"
#include "json.h"
#include "kernel.h"
#include "runtime.h"
#include "text.h"

/* "active/optimized", ..., for an enum iet_alua_state */
const char *alua_state_name(uint32_t state);
/* The enum iet_alua_state of a name (or its short form), or UNSPEC. */
uint32_t alua_state_parse(const char *name);
/* One PortalGroup=TAG,State=STATE,Sessions=N line per group */
void tpg_text(struct textbuf *out, const struct ktarget *kt);
/* "portal_groups": [...] into the target's object */
void tpg_json(struct jw *j, const struct ktarget *kt);
/* Does --op update's --params name a portal group (PortalGroup=)? */
bool tpg_params(const char *params);
/* --op update --tid --params PortalGroup=TAG,State=STATE */
int tpg_update(struct runtime *rt, const struct ctl_req *req, char *err,
	       size_t errlen);

#endif
