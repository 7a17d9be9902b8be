/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ietd runs with: the running model (what ietd.conf said, plus every
 * change made since with ietadm), the sessions, the state file that
 * remembers the model across restarts, and the configuration file that a
 * reload reads again. ietadm's operations and reloads change the model
 * only through a kernel call that worked, then write the state file.
 */
#ifndef IET_USR_RUNTIME_H
#define IET_USR_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "model.h"
#include "registry.h"
#include "state.h"
#include "text.h"

struct ctl_later;

struct runtime {
	struct config cfg;		/* the running model */
	struct registry *reg;
	struct state state;		/* fd -1: none (tests) */
	const char *config_path;
	const char *access_dirs;
	uint16_t port;			/* for portals without one (-p) */
	struct ctl_later *later;	/* set by an op that waits (ctl_ops.h) */
};

/* Remember the model in the state file; a failure is logged. */
void runtime_persist(struct runtime *rt);

/*
 * At start: make the kernel (its state in st) match next, the
 * configuration just read, with what the state file remembers of targets
 * that outlived the previous ietd. next becomes the running model (it is
 * emptied). Logs what it does; err says why it failed (nothing changed).
 */
int runtime_start(struct runtime *rt, struct config *next,
		  const struct kstate *st, char *err, size_t errlen);
/*
 * A restart (the kernel still runs the state's targets) with the
 * configuration file as it was when the state was written resumes what
 * ran: each target the file defines as it ran (with
 * what ietadm changed in it: an account removed stays removed), those
 * deleted with ietadm left out, and the discovery accounts as they were.
 * file (what was just read) becomes that; only memory is touched.
 */
int runtime_resume(const struct config *prev, struct config *file);

/*
 * Read the configuration file again and apply the difference with what
 * runs (dry_run: only say what would be done). out gets one line per
 * step, and one counting what sessions kept from being done (deferred to
 * a later reload: still a success); an error when nothing changed.
 */
int runtime_reload(struct runtime *rt, bool dry_run, struct textbuf *out,
		   char *err, size_t errlen);

#endif
