// SPDX-License-Identifier: GPL-2.0
/* MetricsFile: the kernel's counters for node_exporter, written whole. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "ctl_ops.h"
#include "kernel.h"
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
	char tmp[sizeof(((struct config *)0)->metrics_file) + 8];
	struct textbuf out;
	struct kstate st;
	int fd, ret;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
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
	/*
	 * A name of its own, made here (O_EXCL): nothing someone else put in
	 * the directory, a link, a FIFO, is opened. node_exporter reads
	 * *.prom alone, so it never reads this one.
	 */
	fd = mkostemp(tmp, O_CLOEXEC);
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
	/* A link at path is replaced, not written through. */
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

/*
 * A child writes the file, so that a slow or hung file system (dirty pages
 * throttled, an NFS server gone) never stops ietd's loop: it says what
 * failed if the last write did not fail, and exits 0 if it wrote.
 */
static pid_t write_in_child(const char *path, bool quiet)
{
	char err[600];
	pid_t pid;
	int ret;

	pid = fork();
	if (pid)
		return pid;
	/*
	 * Nothing of the parent's but stdio: a writer that hangs must not
	 * hold the portals' listening sockets (the next ietd could not
	 * listen) nor the parent's netlink sockets (their answers are not
	 * ours). syslog connects again when it next logs.
	 */
	kernel_close();
	closelog();
	close_range(3, ~0U, 0);
	ret = kernel_reopen();
	if (ret)
		snprintf(err, sizeof(err), "a netlink socket: %s", strerror(-ret));
	else
		ret = metrics_file_write(path, err, sizeof(err));
	if (ret && !quiet)
		log_err("MetricsFile: %s (said once until it works again)", err);
	_exit(ret ? 1 : 0);
}

/* Whether the last child has ended (then its result is taken), or none. */
static bool reaped(struct metrics_file *m, bool block)
{
	int status;
	pid_t pid;

	if (m->child <= 0)
		return true;
	do
		pid = waitpid(m->child, &status, block ? 0 : WNOHANG);
	while (pid < 0 && errno == EINTR);
	if (!pid)
		return false;
	m->child = 0;
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (!m->failing && (pid < 0 || !WIFEXITED(status)))
			log_err("MetricsFile: the writer of %s did not exit (wait status %d)",
				m->last, pid < 0 ? -1 : status);
		m->failing = true;
	} else if (m->failing) {
		log_info("MetricsFile: %s written again", m->last);
		m->failing = false;
	}
	return true;
}

void metrics_file_tick(struct metrics_file *m, const struct config *cfg,
		       uint64_t now_ms)
{
	uint32_t interval = cfg->metrics_interval ?: METRICS_INTERVAL;
	pid_t pid;

	/* One writer at a time: a slow one delays the next. */
	if (!reaped(m, false))
		return;
	/*
	 * A reload that drops or renames the file removes the one written,
	 * which would else tell node_exporter the same counters for ever;
	 * one that names another writes it at once.
	 */
	if (strcmp(m->last, cfg->metrics_file)) {
		if (m->last[0] && unlink(m->last) && errno != ENOENT)
			log_warn("MetricsFile: removing %s: %s", m->last,
				 strerror(errno));
		snprintf(m->last, sizeof(m->last), "%s", cfg->metrics_file);
		m->next = 0;
		m->failing = false;
	}
	if (!cfg->metrics_file[0] || now_ms < m->next)
		return;
	m->next = now_ms + (uint64_t)interval * 1000;
	pid = write_in_child(cfg->metrics_file, m->failing);
	if (pid < 0) {
		if (!m->failing)
			log_err("MetricsFile: fork: %s (said once until it works again)",
				strerror(errno));
		m->failing = true;
		return;
	}
	m->child = pid;
}

void metrics_file_wait(struct metrics_file *m)
{
	reaped(m, true);
}

void metrics_file_stop(struct metrics_file *m)
{
	if (m->child > 0)
		kill(m->child, SIGKILL);
	/* A writer stuck in a file system is left to init to reap. */
	reaped(m, false);
}
