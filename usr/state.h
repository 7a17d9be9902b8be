/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's memory across its own restarts. The kernel keeps targets, LUNs
 * and sessions when ietd exits (even by kill -9), but not what only ietd
 * knows: which targets ietd.conf owns, and the CHAP accounts, redirects,
 * MaxSessions and aliases, whether configured or set with ietadm. ietd
 * writes its running model here after every change, in ietd.conf syntax
 * with each target's Origin, and reads it back at start.
 *
 * The file sits next to the ietadm socket (default /run/iet/ietd.state):
 * root-only, and gone at reboot together with the kernel's state. Its
 * directory is opened before ietd drops privileges, and every save
 * replaces the file whole: a temporary file in that directory, synced,
 * renamed over the state file, then the directory synced. A crash at any
 * moment leaves the previous state or the new one, never neither; a last
 * line marks the file complete all the same.
 */
#ifndef IET_USR_STATE_H
#define IET_USR_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "model.h"

#define STATE_NAME	"ietd.state"
#define STATE_END	"# end of ietd state\n"

struct state {
	int dirfd;			/* -1: no state file (tests) */
	char path[256];
	char dir[256];			/* its directory, for messages */
	char name[256];			/* its name in its directory */
	char old_path[256];		/* "": none (state_migrate_from) */
	bool from_old;			/* loaded from old_path */
};

/*
 * Open the file's directory and create the file (mode 0600) if it is
 * missing; s->dirfd -1 means "no file". Anything there but a regular file
 * of one name (a FIFO, a hard link) is refused, as state_load() does.
 */
int state_open(struct state *s, const char *path, char *err, size_t errlen);
void state_close(struct state *s);
/*
 * Where an older ietd kept the file (ietd -u before it had a directory of
 * its own): while the file at s was never written, state_load() reads that
 * one instead, and the first save that is complete and synced removes it.
 * An upgrade so keeps the targets and CHAP accounts made with ietadm.
 */
int state_migrate_from(struct state *s, const char *old_path, char *err,
		       size_t errlen);
/*
 * Whether ietd, as it runs now, can replace the file (after dropping
 * privileges: the directory must be the user's to write).
 */
int state_check(struct state *s, char *err, size_t errlen);
/*
 * A directory of its own for the state of an ietd that runs as uid:gid
 * (mode 0700, that user's), inside the root-only socket directory.
 */
int state_prepare_dir(const char *dir, uid_t uid, gid_t gid, char *err,
		      size_t errlen);
/*
 * The model the file holds into cfg: -ENOENT when it is empty (never
 * written), -EINVAL when incomplete or malformed (err says why).
 */
int state_load(struct state *s, struct config *cfg, char *err,
	       size_t errlen);
/*
 * Replace the file with cfg: 0 once the new file is in place and synced;
 * STATE_UNSYNCED (positive) when it is in place but its directory could
 * not be synced (a crash may yet bring the previous file back); a
 * negative errno when the file is as it was. err says why, but for 0.
 */
#define STATE_UNSYNCED	1
int state_save(struct state *s, const struct config *cfg, char *err,
	       size_t errlen);

#endif
