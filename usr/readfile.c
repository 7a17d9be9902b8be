// SPDX-License-Identifier: GPL-2.0
/* Reading a small regular file whole (readfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readfile.h"
#include "wipe.h"

int read_small_file(const char *path, size_t max, bool allow_short,
		    char **bufp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max) {
		snprintf(err, errlen, "%s: not a regular file of at most %zu bytes",
			 path, max);
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && allow_short)
			break;
		if (n <= 0) {
			snprintf(err, errlen, "%s: read failed: %s", path,
				 n ? strerror(errno) : "file shrank");
			/* ietd.conf: what was read may hold secrets. */
			wiped_free(buf, got);
			close(fd);
			return -EIO;
		}
		got += n;
	}
	close(fd);
	*bufp = buf;
	*lenp = got;
	return 0;
}
