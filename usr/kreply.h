/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iscsi_trgt's answers and events taken apart, one netlink message at a
 * time: pure functions, no socket, so that tests and a fuzzer can hand them
 * anything. An attribute of the wrong size or type reads as absent (0, "",
 * no address); a string is cut to its field; what a message does not carry
 * is left zero. kernel.c feeds them what it receives.
 */
#ifndef IET_USR_KREPLY_H
#define IET_USR_KREPLY_H

#include <stdint.h>
#include <linux/netlink.h>

#include "kernel.h"

/* The TID of a TARGET_NEW answer into *tid, if it has one. */
void kreply_tid(const struct nlmsghdr *nlh, uint32_t *tid);
/*
 * One message of a target, LUN or session dump appended to st or t (a
 * message without its key attribute adds nothing). 0, or -ENOMEM with
 * everything appended before kept for kstate_free.
 */
int kreply_target(const struct nlmsghdr *nlh, struct kstate *st);
int kreply_lun(const struct nlmsghdr *nlh, struct ktarget *t);
int kreply_session(const struct nlmsghdr *nlh, struct ktarget *t);
/* A portal group of a TPG_GET dump, added to t's (IET_TPGS_MAX at most). */
int kreply_tpg(const struct nlmsghdr *nlh, struct ktarget *t);
/*
 * A PR_GET answer into *pr (zeroed first): 0, or -ENOMEM with what was
 * taken kept for kpr_free.
 */
int kreply_pr(const struct nlmsghdr *nlh, struct kpr *pr);
/*
 * A message of the events group: 1 with *ev filled for an event ietd acts
 * on, 0 for anything else (another family, another command, too short).
 */
int kreply_event(const struct nlmsghdr *nlh, uint16_t family,
		 struct kevent *ev);

#endif
