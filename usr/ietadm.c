// SPDX-License-Identifier: GPL-2.0
/* ietadm: IET's command line, sent to ietd over its UNIX socket. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "adm_args.h"
#include "ctl_proto.h"
#include "version.h"
#include "wipe.h"

/* Long enough for a reload that closes nothing but creates many LUNs. */
#define TIMEOUT_S	120

/* Send the request, return the whole response NUL-terminated. */
static char *call(const char *path, const char *req, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = TIMEOUT_S };
	size_t have = 0, cap = 4096;
	char *rsp;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "ietadm: %s: socket path too long\n", path);
		return NULL;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "ietadm: cannot reach ietd at %s: %s%s\n",
			path, strerror(errno),
			errno == EACCES ? " (ietadm must run as root)" :
			" (is ietd running?)");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len) {
		ssize_t n = send(fd, req, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ietadm: sending to ietd: %s\n",
				strerror(errno));
			close(fd);
			return NULL;
		}
		req += n;
		len -= n;
	}
	rsp = malloc(cap);
	while (rsp) {
		ssize_t n;

		if (have + 1 >= cap) {
			/* --op save answers with every CHAP secret. */
			char *nr = cap < CTL_RSP_MAX + 4096 ?
				   wiped_realloc(rsp, cap, cap * 2) : NULL;

			if (!nr) {
				wiped_free(rsp, cap);
				rsp = NULL;
				fprintf(stderr, "ietadm: response too long\n");
				break;
			}
			rsp = nr;
			cap *= 2;
		}
		n = recv(fd, rsp + have, cap - have - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		/* ietd answers, then closes: a reset after an answer ends it. */
		if (n < 0 && errno == ECONNRESET && have)
			n = 0;
		if (n < 0) {
			fprintf(stderr, "ietadm: reading from ietd: %s\n",
				errno == EAGAIN ? "timed out" : strerror(errno));
			wiped_free(rsp, cap);
			rsp = NULL;
			break;
		}
		if (n == 0) {
			rsp[have] = '\0';
			break;
		}
		have += n;
	}
	close(fd);
	return rsp;
}

/*
 * Write the saved configuration: a temporary file beside it, mode 0600
 * (it holds secrets), synced, then renamed over FILE.
 */
static int write_file(const char *file, const char *text)
{
	char tmp[4096], dir[4096];
	size_t len = strlen(text), off = 0;
	int fd, dfd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file) >= sizeof(tmp)) {
		fprintf(stderr, "ietadm: %s: name too long\n", file);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "ietadm: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fchmod(fd, 0600);
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += n;
	}
	if (fsync(fd))
		goto fail;
	close(fd);
	if (rename(tmp, file)) {
		fprintf(stderr, "ietadm: %s: %s\n", file, strerror(errno));
		unlink(tmp);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", file);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
fail:
	fprintf(stderr, "ietadm: writing %s: %s\n", tmp, strerror(errno));
	close(fd);
	unlink(tmp);
	return -1;
}

/*
 * The secret of --password-file: the first line of path ("-": standard
 * input), without its line break, so that it never shows in argv or ps.
 */
static int read_secret(const char *path, char *buf, size_t len)
{
	size_t have = 0;
	char *nl;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;

	if (fd < 0) {
		fprintf(stderr, "ietadm: --password-file: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (have < len - 1) {
		ssize_t n = read(fd, buf + have, len - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "ietadm: --password-file: %s: %s\n",
				path, strerror(errno));
			if (fd)
				close(fd);
			return -1;
		}
		if (n == 0)
			break;
		have += n;
		if (memchr(buf, '\n', have))
			break;
	}
	if (fd)
		close(fd);
	buf[have] = '\0';
	nl = strchr(buf, '\n');
	if (!nl && have == len - 1) {
		fprintf(stderr, "ietadm: --password-file: %s: first line too long\n",
			path);
		return -1;
	}
	if (nl) {
		if (nl > buf && nl[-1] == '\r')
			nl--;
		*nl = '\0';
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct adm_args a;
	static char req[CTL_REQ_MAX];
	const char *body;
	char err[512];
	char *rsp;
	int len, status, ret = 0;

	switch (adm_parse(argc, argv, &a, err, sizeof(err))) {
	case ADM_HELP:
		adm_usage(stdout);
		return 0;
	case ADM_VERSION:
		printf("ietadm %s\n", IET_VERSION);
		return 0;
	case ADM_ERROR:
		fprintf(stderr, "ietadm: %s\n", err);
		return 2;
	case ADM_RUN:
		break;
	}
	if (a.password_file) {
		static char secret[1024];

		ret = read_secret(a.password_file, secret, sizeof(secret));
		if (!ret && adm_add_secret(&a, secret, err, sizeof(err))) {
			fprintf(stderr, "ietadm: %s\n", err);
			ret = -1;
		}
		explicit_bzero(secret, sizeof(secret));
		if (ret) {
			explicit_bzero(&a.req, sizeof(a.req));
			return 1;
		}
	}
	len = ctl_req_format(&a.req, req, sizeof(req));
	explicit_bzero(&a.req, sizeof(a.req));
	if (len < 0) {
		fprintf(stderr, "ietadm: request too long\n");
		return 2;
	}
	rsp = call(a.socket, req, len);
	explicit_bzero(req, sizeof(req));
	if (!rsp)
		return 1;
	if (ctl_rsp_parse(rsp, &status, &body)) {
		fprintf(stderr, "ietadm: ietd answered in a protocol this ietadm does not speak\n");
		wiped_free(rsp, strlen(rsp));
		return 1;
	}
	if (status) {
		/* What was done (if anything) on stdout, why not on stderr. */
		size_t blen = strlen(body);
		const char *last = body;

		if (blen && body[blen - 1] == '\n')
			blen--;
		for (const char *p = body; p < body + blen; p++)
			if (*p == '\n')
				last = p + 1;
		fwrite(body, 1, last - body, stdout);
		if (last < body + blen)
			fprintf(stderr, "ietadm: %.*s\n", (int)(body + blen - last),
				last);
		else
			fprintf(stderr, "ietadm: %s\n", strerror(status));
		ret = 1;
	} else if (a.file) {
		ret = write_file(a.file, body) ? 1 : 0;
	} else {
		fputs(body, stdout);
	}
	wiped_free(rsp, strlen(rsp));
	return ret;
}
