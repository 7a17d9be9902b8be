/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's file descriptors: a soft RLIMIT_NOFILE raised at start to what
 * its connection limits need, and a spare descriptor per listener for
 * when they run out all the same (another process's leak, a lower hard
 * limit): the listener then takes the pending connection with the spare
 * and closes it, instead of staying readable and spinning the loop.
 */
#ifndef IET_USR_FDLIMIT_H
#define IET_USR_FDLIMIT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Raise the soft limit to need, or to the hard limit if that is lower;
 * never lower it. *have gets the soft limit in force afterwards.
 */
int nofile_raise(unsigned long need, unsigned long *have, char *err,
		 size_t errlen);

/* A descriptor held in reserve (of /dev/null); -1 when none. */
struct spare {
	int fd;
};

void spare_open(struct spare *s);
void spare_close(struct spare *s);

/*
 * accept4() a connection, non-blocking and close-on-exec. Out of
 * descriptors, the spare takes the connection, which is closed, and is
 * taken back; -1 with errno EMFILE or ENFILE then, as for other errors.
 * A spare that could not be taken back is tried again at the next call.
 */
int accept_or_shed(int lfd, struct spare *s);
/*
 * After accept_or_shed() failed: whether the connection may still be
 * pending, out of descriptors and without a spare to shed it. The
 * listener stays readable then: its caller must stop polling it for a
 * while (until its next tick), or the event loop would spin.
 */
bool accept_starved(const struct spare *s, int err);

#endif
