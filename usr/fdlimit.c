// SPDX-License-Identifier: GPL-2.0
/* RLIMIT_NOFILE at start, and the spare descriptor of each listener. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdlimit.h"

int nofile_raise(unsigned long need, unsigned long *have, char *err,
		 size_t errlen)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r)) {
		snprintf(err, errlen, "RLIMIT_NOFILE: %s", strerror(errno));
		return -errno;
	}
	if (r.rlim_cur < need && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = need < r.rlim_max ? need : r.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &r)) {
			snprintf(err, errlen, "raising RLIMIT_NOFILE to %lu: %s",
				 (unsigned long)r.rlim_cur, strerror(errno));
			return -errno;
		}
	}
	*have = r.rlim_cur;
	return 0;
}

void spare_open(struct spare *s)
{
	s->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void spare_close(struct spare *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int accept_or_shed(int lfd, struct spare *s)
{
	int fd, err;

	/* Lost at the last shed (ENFILE): maybe there is one again. */
	if (s->fd < 0)
		spare_open(s);
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0 || (errno != EMFILE && errno != ENFILE) || s->fd < 0)
		return fd;
	err = errno;
	close(s->fd);
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0)
		close(fd);
	spare_open(s);
	errno = err;
	return -1;
}

bool accept_starved(const struct spare *s, int err)
{
	return (err == EMFILE || err == ENFILE) && s->fd < 0;
}
