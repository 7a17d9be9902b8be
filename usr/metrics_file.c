// SPDX-License-Identifier: GPL-2.0
/* MetricsFile: the kernel's counters for node_exporter, written whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_ops.h"
#include "log.h"
#include "metrics.h"
#include "metrics_file.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

int metrics_file_write(const char *path, char *err, size_t errlen)
{
	char tmp[sizeof(((struct config *)0)->metrics_file) + 16];
	struct textbuf out;
	struct kstate st;
	int fd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	textbuf_init(&out, METRICS_MAX);
	ret = metrics_prometheus(&out, &st, 0);
	kstate_free(&st);
	if (ret) {
		snprintf(err, errlen, "the metrics are over %u MiB",
			 METRICS_MAX >> 20);
		goto out;
	}
	/* Not ours if it is a link: someone else's file is not replaced. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(-ret));
		goto out;
	}
	/*
	 * node_exporter runs as a user of its own: readable by all whatever
	 * ietd's umask (the unit's is 0077). The names in it are no secret,
	 * they are what SendTargets and /proc/net/iet tell.
	 */
	ret = fchmod(fd, 0644) ? -errno : 0;
	if (!ret)
		ret = write_all(fd, out.buf ? out.buf : "", out.len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		unlink(tmp);
	}
out:
	textbuf_free(&out);
	return ret;
}

void metrics_file_tick(struct metrics_file *m, const struct config *cfg,
		       uint64_t now_ms)
{
	uint32_t interval = cfg->metrics_interval ?: METRICS_INTERVAL;
	char err[600];

	if (!cfg->metrics_file[0]) {
		m->next = 0;
		m->last[0] = '\0';
		return;
	}
	/* A reload that names another file writes it at once. */
	if (strcmp(m->last, cfg->metrics_file)) {
		snprintf(m->last, sizeof(m->last), "%s", cfg->metrics_file);
		m->next = 0;
		m->failing = false;
	}
	if (now_ms < m->next)
		return;
	m->next = now_ms + (uint64_t)interval * 1000;
	if (metrics_file_write(cfg->metrics_file, err, sizeof(err))) {
		if (!m->failing)
			log_err("MetricsFile: %s (said once until it works again)",
				err);
		m->failing = true;
	} else if (m->failing) {
		log_info("MetricsFile: %s written again", cfg->metrics_file);
		m->failing = false;
	}
}
