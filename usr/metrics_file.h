/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MetricsFile: every MetricsInterval seconds (15 unless set) ietd reads the
 * kernel's counters and writes them in Prometheus' text format to the file,
 * replacing it whole (a temporary file beside it, then rename()), as
 * node_exporter's textfile collector wants: it never reads half a file. A
 * child process writes it, so that a file system that blocks cannot stop
 * ietd. The file stays when ietd stops (the kernel still serves);
 * node_exporter's node_textfile_mtime_seconds says how old it is.
 */
#ifndef IET_USR_METRICS_FILE_H
#define IET_USR_METRICS_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

#define METRICS_INTERVAL	15	/* seconds */
#define METRICS_MAX		(64u << 20)	/* bytes of one file */

struct metrics_file {
	uint64_t next;			/* ms of the next write; 0: now */
	bool failing;			/* the last write failed (logged once) */
	char last[512];			/* the file written last */
	pid_t child;			/* the writer now, or 0 */
};

/* From ietd's tick: writes cfg's MetricsFile when its time has come. */
void metrics_file_tick(struct metrics_file *m, const struct config *cfg,
		       uint64_t now_ms);
/* Waits for the writer there is now; for tests. */
void metrics_file_wait(struct metrics_file *m);
/* At ietd's end: the writer there is now is killed. */
void metrics_file_stop(struct metrics_file *m);
/* Writes path now, in this process; 0 or a negative errno with err set. */
int metrics_file_write(const char *path, char *err, size_t errlen);

#endif
