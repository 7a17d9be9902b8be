/* SPDX-License-Identifier: GPL-2.0 */
/*
 * After a normal-session login: reinstate or create the session in the
 * kernel and give it the connection's socket, keeping the registry right
 * whatever the kernel says.
 */
#ifndef IET_USR_HANDOFF_H
#define IET_USR_HANDOFF_H

#include <stddef.h>

#include "login.h"
#include "registry.h"

/*
 * fd stays the caller's to close. The outcome's TSIH reservation is
 * committed or dropped. Returns 0, or a negative errno with err saying
 * which step failed and the kernel's message.
 */
int handoff(struct registry *reg, const struct login_outcome *o, int fd,
	    char *err, size_t errlen);

#endif
