// SPDX-License-Identifier: GPL-2.0
/* The state file: the running model, rewritten after every change. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "confwrite.h"
#include "state.h"
#include "version.h"

#define STATE_MAX	(64u << 20)

int state_open(struct state *s, const char *path, char *err, size_t errlen)
{
	s->fd = -1;
	if (strlen(path) >= sizeof(s->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(s->path, path);
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->fd < 0) {
		int ret = -errno;

		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	/* It holds secrets; whatever made it before, make it root's alone. */
	if (fchmod(s->fd, 0600)) {
		int ret = -errno;

		snprintf(err, errlen, "%s: chmod: %s", path, strerror(errno));
		state_close(s);
		return ret;
	}
	return 0;
}

void state_close(struct state *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

int state_load(struct state *s, struct config *cfg, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0, elen = strlen(STATE_END);
	char *buf;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (s->fd < 0 || fstat(s->fd, &st))
		return -ENOENT;
	if (st.st_size == 0)
		return -ENOENT;
	if (st.st_size > STATE_MAX) {
		snprintf(err, errlen, "%s: larger than %u bytes", s->path,
			 STATE_MAX);
		return -EINVAL;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(s->fd, buf + got, st.st_size - got, got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	if (got < elen || memcmp(buf + got - elen, STATE_END, elen)) {
		snprintf(err, errlen, "%s: incomplete (a write was cut short)",
			 s->path);
		ret = -EINVAL;
	} else {
		ret = config_parse_flags(buf, got, s->path, CONFIG_STATE, cfg,
					 err, errlen);
	}
	wipe(buf, got);
	free(buf);
	return ret;
}

int state_save(struct state *s, const struct config *cfg, char *err,
	       size_t errlen)
{
	struct textbuf out;
	size_t off = 0;
	int ret;

	if (s->fd < 0)
		return 0;
	textbuf_init(&out, STATE_MAX);
	ret = config_write(cfg, CONFIG_STATE,
			   "# ietd " IET_VERSION " state: the running model. Do not edit;\n"
			   "# ietadm --op save writes a configuration file.\n",
			   &out);
	if (!ret)
		ret = textbuf_append(&out, STATE_END, strlen(STATE_END));
	if (ret) {
		snprintf(err, errlen, "%s: state too large", s->path);
		goto out;
	}
	if (ftruncate(s->fd, 0)) {
		ret = -errno;
		snprintf(err, errlen, "%s: truncate: %s", s->path,
			 strerror(errno));
		goto out;
	}
	while (off < out.len) {
		ssize_t n = pwrite(s->fd, out.buf + off, out.len - off, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -EIO;
			snprintf(err, errlen, "%s: write: %s", s->path,
				 strerror(-ret));
			goto out;
		}
		off += n;
	}
out:
	if (out.buf)
		wipe(out.buf, out.cap);
	textbuf_free(&out);
	return ret;
}
