// SPDX-License-Identifier: GPL-2.0
/* The state file: the running model, replaced whole after every change. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "confwrite.h"
#include "log.h"
#include "state.h"
#include "version.h"

#define STATE_MAX	(64u << 20)
#define TMP_SUFFIX	".new"
#define TMP_LEN		(sizeof(((struct state *)0)->name) + \
			 sizeof(TMP_SUFFIX))

/*
 * Open name (path, for messages) in dirfd for reading if it is what ietd
 * makes there: a regular file of one name. With -u the state file's
 * directory is the unprivileged user's, and root opens the file first: a
 * FIFO put there must not block start-up, nor a link take root to another
 * file.
 */
static int open_own(int dirfd, const char *name, const char *path,
		    int flags, struct stat *st, char *err, size_t errlen)
{
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
		    O_CLOEXEC | flags, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, errno == ELOOP ?
			 "a symbolic link, not the state file" :
			 strerror(errno));
		return ret;
	}
	if (fstat(fd, st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st->st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file, not the state file (remove it)",
			 path);
	} else if (st->st_nlink != 1) {
		ret = -EMLINK;
		snprintf(err, errlen, "%s: has %lu names (hard links), not the state file (remove it)",
			 path, (unsigned long)st->st_nlink);
	} else {
		return fd;
	}
	close(fd);
	return ret;
}

int state_open(struct state *s, const char *path, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[sizeof(s->path)];
	struct stat st;
	int fd, ret;

	s->dirfd = -1;
	s->old_path[0] = '\0';
	s->from_old = false;
	if (strlen(path) >= sizeof(s->path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(s->path, path);
	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (!dir[0])
			strcpy(dir, "/");
		strcpy(s->name, slash + 1);
	} else {
		strcpy(dir, ".");
		strcpy(s->name, path);
	}
	if (!s->name[0] ||
	    strlen(s->name) + strlen(TMP_SUFFIX) >= sizeof(s->name)) {
		snprintf(err, errlen, "%s: not a file name", path);
		return -EINVAL;
	}
	strcpy(s->dir, dir);
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return ret;
	}
	/*
	 * Not chmod'ed: a file made before is replaced by the first save (at
	 * start), a new file of mode 0600 like every one ietd writes.
	 */
	fd = open_own(s->dirfd, s->name, s->path, O_CREAT, &st, err,
		      errlen);
	if (fd < 0) {
		state_close(s);
		return fd;
	}
	close(fd);
	return 0;
}

void state_close(struct state *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	s->dirfd = -1;
}

static void tmp_name(const struct state *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s" TMP_SUFFIX, s->name);
}

/* A new temporary file beside the state file, whatever a crash left. */
static int tmp_create(struct state *s, char *err, size_t errlen)
{
	char tmp[TMP_LEN];
	int fd;

	tmp_name(s, tmp, sizeof(tmp));
	if (unlinkat(s->dirfd, tmp, 0) && errno != ENOENT) {
		snprintf(err, errlen, "%s" TMP_SUFFIX ": %s", s->path,
			 strerror(errno));
		return -errno;
	}
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s" TMP_SUFFIX ": %s", s->path,
			 strerror(errno));
		return -errno;
	}
	return fd;
}

int state_check(struct state *s, char *err, size_t errlen)
{
	char tmp[TMP_LEN];
	int fd;

	if (s->dirfd < 0)
		return 0;
	fd = tmp_create(s, err, errlen);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create %s" TMP_SUFFIX " there: %s",
			 s->dir, s->name, strerror(-fd));
		return fd;
	}
	close(fd);
	tmp_name(s, tmp, sizeof(tmp));
	unlinkat(s->dirfd, tmp, 0);
	return 0;
}

int state_migrate_from(struct state *s, const char *old_path, char *err,
		       size_t errlen)
{
	if (strlen(old_path) >= sizeof(s->old_path)) {
		snprintf(err, errlen, "%s: path too long", old_path);
		return -ENAMETOOLONG;
	}
	strcpy(s->old_path, old_path);
	return 0;
}

int state_prepare_dir(const char *dir, uid_t uid, gid_t gid, char *err,
		      size_t errlen)
{
	struct stat st;
	int ret;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return ret;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -ENOTDIR;
	}
	if (chown(dir, uid, gid) || chmod(dir, 0700)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return ret;
	}
	return 0;
}

/* The model of the file name in dirfd (path in messages) into cfg. */
static int load(int dirfd, const char *name, const char *path,
		struct config *cfg, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0, elen = strlen(STATE_END);
	char *buf;
	int fd, ret;

	fd = open_own(dirfd, name, path, 0, &st, err, errlen);
	if (fd < 0)
		return fd;	/* -ENOENT: never written */
	if (st.st_size == 0) {
		close(fd);
		return -ENOENT;
	}
	if (st.st_size > STATE_MAX) {
		snprintf(err, errlen, "%s: larger than %u bytes", path,
			 STATE_MAX);
		close(fd);
		return -EINVAL;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, st.st_size - got, got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	if (got < elen || memcmp(buf + got - elen, STATE_END, elen)) {
		snprintf(err, errlen, "%s: incomplete (a write was cut short)",
			 path);
		ret = -EINVAL;
	} else {
		ret = config_parse_flags(buf, got, path, CONFIG_STATE, cfg,
					 err, errlen);
	}
	wipe(buf, got);
	free(buf);
	return ret;
}

int state_load(struct state *s, struct config *cfg, char *err, size_t errlen)
{
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (s->dirfd < 0)
		return -ENOENT;
	ret = load(s->dirfd, s->name, s->path, cfg, err, errlen);
	if (ret != -ENOENT || !s->old_path[0])
		return ret;
	/* Never written here: an older ietd may have kept it elsewhere. */
	ret = load(AT_FDCWD, s->old_path, s->old_path, cfg, err, errlen);
	if (!ret) {
		s->from_old = true;
		log_info("state of an older ietd taken from %s; the next save moves it to %s",
			 s->old_path, s->path);
	}
	return ret;
}

static int write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		off += n;
	}
	return 0;
}

/*
 * The state an older ietd kept elsewhere is now here, synced: only then is
 * its file removed, so that there always is one copy at least. Said once.
 */
static void forget_old(struct state *s)
{
	s->from_old = false;
	if (unlink(s->old_path) && errno != ENOENT)
		log_warn("state moved from %s to %s, but %s stays: %s (remove it)",
			 s->old_path, s->path, s->old_path, strerror(errno));
	else
		log_info("state moved from %s to %s", s->old_path, s->path);
}

int state_save(struct state *s, const struct config *cfg, char *err,
	       size_t errlen)
{
	char tmp[TMP_LEN];
	struct textbuf out;
	int fd, ret;

	if (s->dirfd < 0)
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
	tmp_name(s, tmp, sizeof(tmp));
	fd = tmp_create(s, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = write_all(fd, out.buf, out.len);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret) {
		snprintf(err, errlen, "%s" TMP_SUFFIX ": write: %s", s->path,
			 strerror(-ret));
		unlinkat(s->dirfd, tmp, 0);
		goto out;
	}
	/* The old state stays whole until this replaces it in one step. */
	if (renameat(s->dirfd, tmp, s->dirfd, s->name)) {
		ret = -errno;
		snprintf(err, errlen, "%s: rename: %s", s->path,
			 strerror(errno));
		unlinkat(s->dirfd, tmp, 0);
		goto out;
	}
	/* In place: a failure now only means a crash might undo it. */
	if (fsync(s->dirfd)) {
		ret = STATE_UNSYNCED;
		snprintf(err, errlen, "%s: syncing its directory: %s", s->path,
			 strerror(errno));
	} else if (s->from_old) {
		forget_old(s);
	}
out:
	if (out.buf)
		wipe(out.buf, out.cap);
	textbuf_free(&out);
	return ret;
}
