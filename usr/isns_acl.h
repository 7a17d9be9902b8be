/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iSNSAccessControl's answers, kept for every login and SendTargets: for
 * each target, the initiators its discovery domains hold as the iSNS
 * server last said (isns.c refreshes them at registration, on every
 * state change notification and periodically), so that no login waits on
 * the network. A target the server has not answered for, or every target
 * while the server is unreachable, is unknown: refused, fail closed.
 */
#ifndef IET_USR_ISNS_ACL_H
#define IET_USR_ISNS_ACL_H

#include <stddef.h>

#include "isns_pdu.h"

enum isns_verdict {
	ISNS_ADMIT,
	ISNS_NOT_IN_DD,			/* the server says: no shared domain */
	ISNS_UNKNOWN,			/* no answer for the target (yet) */
};

/* The target's members are now names (taken over, names emptied). */
int isns_acl_set(const char *target, struct isns_names *names);
/* The target's answer is unknown again. */
void isns_acl_forget(const char *target);
/* Every target's: the server is unreachable. */
void isns_acl_clear(void);
enum isns_verdict isns_acl_check(const char *target, const char *initiator);
/* How many initiators the target admits; -1 unknown (tests, logs). */
long isns_acl_count(const char *target);

#endif
