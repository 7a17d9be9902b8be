/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reconciling what runs with a configuration, for ietd's start (after a
 * restart, even after kill -9) and for reloads (SIGHUP, ietadm --op
 * reload): a pure function computes a plan from the kernel's state, ietd's
 * running model and the new configuration; applying it makes the kernel
 * calls, undoing them all if one fails.
 *
 * The rules (ietd.conf(5), RELOADING):
 *  - the file owns the targets it defines: they get its parameters (for
 *    new sessions), LUNs and accounts; a running target keeps its tid;
 *  - a target the previous file defined and the new one does not is
 *    deleted, unless it has sessions: then it is kept and the plan says so;
 *  - a LUN removed or changed in the file goes (or is replaced) only while
 *    its target has no sessions; otherwise it is kept as it runs;
 *  - targets created with ietadm, or found in the kernel without ietd
 *    knowing where they came from, are left as they are;
 *  - accounts, redirects, MaxSessions and aliases are ietd's alone: they
 *    change in the model, for new logins;
 *  - every target has the portal groups of the PortalGroup lines (group 1
 *    without any); a group no longer configured goes from a target only
 *    while no session of it uses that group.
 * Sessions are never closed by a plan.
 */
#ifndef IET_USR_PLAN_H
#define IET_USR_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel.h"
#include "model.h"
#include "text.h"

enum step_op {
	STEP_TARGET_NEW,
	STEP_TARGET_SET,
	STEP_TPG_NEW,
	STEP_LUN_DEL,
	STEP_LUN_NEW,
	STEP_TPG_DEL,
	STEP_TARGET_DEL,		/* the last */
};

struct plan_step {
	enum step_op op;
	uint32_t tid;
	char name[IET_NAME_MAX + 1];
	uint32_t tparams[IET_TP_COUNT];
	uint32_t keys[IET_KEY_COUNT];
	/* What was there, to undo: old parameters, the deleted LUN(s). */
	uint32_t old_tparams[IET_TP_COUNT];
	uint32_t old_keys[IET_KEY_COUNT];
	struct lun_conf lun;		/* LUN_NEW: new; LUN_DEL: old */
	uint16_t tpgt;			/* TPG_NEW, TPG_DEL */
	uint32_t sessions;		/* TPG_DEL: of the group, let go */
	/*
	 * TPG_NEW: the group's kind as TPG_SET says it (1 another node's, 0
	 * this node's once it was another's, TPG_KIND_KEEP for this node's)
	 * and its state; of a group the target has already (the one it was
	 * made with, or of the other kind), what it was, to undo.
	 */
	int tpg_remote;
	uint32_t tpg_state;
	bool tpg_existed;
	bool old_tpg_remote;
	uint32_t old_tpg_state;
	struct lun_conf *old_luns;	/* TARGET_DEL */
	size_t nr_old_luns;
	char what[256];			/* for TARGET_SET: the keys changed */
	bool done;
};

struct plan {
	struct plan_step *steps;
	size_t nr;
	char **notes;			/* model-only changes, kept targets */
	size_t nr_notes;
	char **refused;			/* what could not be done, and why */
	size_t nr_refused;
	struct config result;		/* the running model, once applied */
};

/*
 * st: what the kernel runs; cur: ietd's model (NULL at a start without a
 * state file: nothing is known of the kernel's targets); next: the
 * configuration just read. Only memory is touched.
 */
int plan_make(const struct kstate *st, const struct config *cur,
	      const struct config *next, struct plan *p, char *err,
	      size_t errlen);
/*
 * Make the kernel calls in order (creations and changes first, deletions
 * last). If one fails, undo the ones made, in reverse, and return its
 * error with err naming the step and the kernel's message.
 */
int plan_apply(struct plan *p, char *err, size_t errlen);
/*
 * Give a target ietadm just made the configuration's portal groups (it
 * has group 1). Returns 0 or the kernel's error.
 */
int apply_target_groups(uint32_t tid, const struct config *cfg);
/* One line per step, note and refusal ("nothing to change" if none). */
void plan_format(const struct plan *p, struct textbuf *out);
void plan_free(struct plan *p);

/*
 * TARGET_SET of both parameter sets, as two calls: the kernel drops the
 * session keys of a call that also resizes the I/O thread pool.
 */
int apply_target_params(uint32_t tid, const uint32_t *tparams,
			const uint32_t *keys);

#endif
