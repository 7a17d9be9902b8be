/* SPDX-License-Identifier: GPL-2.0 */
/* A LUN's reservations in ietadm's output, and ended by ietadm (op_pr.c). */
#ifndef IET_USR_OP_PR_H
#define IET_USR_OP_PR_H

#include <stdint.h>

#include "ctl.h"
#include "json.h"
#include "kernel.h"
#include "runtime.h"
#include "text.h"

const char *pr_type_name(uint32_t type);
/* Reservation=, SPC2Reservation=, APTPL=, PRGeneration=, Registration= */
void pr_text(struct textbuf *out, const struct kpr *pr,
	     const struct ktarget *kt);
/* "reservations": {...} into the LUN's object */
void pr_json(struct jw *j, const struct kpr *pr, const struct ktarget *kt);
/* --op update --tid --lun --params Reservations=release|clear */
int pr_update(struct runtime *rt, const struct ctl_req *req, char *err,
	      size_t errlen);

#endif
