// SPDX-License-Identifier: GPL-2.0
/* ietadm: IET's command line, sent to ietd over its UNIX socket. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "params.h"
#include "version.h"

#define TIMEOUT_S	30

enum { OPT_SOCKET = 256, OPT_VERSION };

static const struct option long_opts[] = {
	{ "op", required_argument, NULL, 'o' },
	{ "tid", required_argument, NULL, 't' },
	{ "sid", required_argument, NULL, 's' },
	{ "cid", required_argument, NULL, 'c' },
	{ "lun", required_argument, NULL, 'l' },
	{ "user", no_argument, NULL, 'u' },
	{ "params", required_argument, NULL, 'p' },
	{ "redirect", required_argument, NULL, 'r' },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ietadm --op new|delete|update|show [--tid=N] [--sid=N] [--cid=N]\n"
"              [--lun=N] [--user] [--params=KEY=VALUE,...] [--redirect=ADDR]\n"
"Manage the running iSCSI target through ietd.\n"
"\n"
"  --op show --tid=N            the target's parameters, one Key=Value a line\n"
"  --op show --tid=N --sid=S    a session's negotiated parameters\n"
"                               (S=0: the target's session defaults)\n"
"  --socket=PATH                ietd's socket (default %s)\n"
"  --version                    print the version and exit\n"
"  --help                       print this help and exit\n"
"\n"
"Options take their value as --opt=VALUE or --opt VALUE.\n",
		CTL_SOCKET_PATH);
}

static int number(const char *opt, const char *s, uint64_t max, uint64_t *v)
{
	if (parse_number(s, v) || *v > max) {
		fprintf(stderr, "ietadm: --%s: \"%s\" is not a number 0..%" PRIu64 "\n",
			opt, s, max);
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct ctl_req *r, const char **sock)
{
	uint64_t v;
	int c;

	memset(r, 0, sizeof(*r));
	while ((c = getopt_long(argc, argv, "o:t:s:c:l:up:r:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			if (strlen(optarg) >= sizeof(r->op) || !*optarg) {
				fprintf(stderr, "ietadm: --op: unknown operation \"%s\"\n",
					optarg);
				return -1;
			}
			strcpy(r->op, optarg);
			break;
		case 't':
			if (number("tid", optarg, UINT32_MAX, &v))
				return -1;
			r->tid = v;
			r->fields |= CTL_F_TID;
			break;
		case 's':
			if (number("sid", optarg, UINT64_MAX, &v))
				return -1;
			r->sid = v;
			r->fields |= CTL_F_SID;
			break;
		case 'c':
			if (number("cid", optarg, 65535, &v))
				return -1;
			r->cid = v;
			r->fields |= CTL_F_CID;
			break;
		case 'l':
			if (number("lun", optarg, 16383, &v))
				return -1;
			r->lun = v;
			r->fields |= CTL_F_LUN;
			break;
		case 'u':
			r->fields |= CTL_F_USER;
			break;
		case 'p':
			if (strlen(optarg) >= sizeof(r->params) ||
			    strchr(optarg, '\n')) {
				fprintf(stderr, "ietadm: --params: too long or multi-line\n");
				return -1;
			}
			strcpy(r->params, optarg);
			r->fields |= CTL_F_PARAMS;
			break;
		case 'r':
			if (strlen(optarg) >= sizeof(r->redirect) ||
			    strchr(optarg, '\n')) {
				fprintf(stderr, "ietadm: --redirect: too long\n");
				return -1;
			}
			strcpy(r->redirect, optarg);
			r->fields |= CTL_F_REDIRECT;
			break;
		case OPT_SOCKET:
			*sock = optarg;
			break;
		case OPT_VERSION:
			printf("ietadm %s\n", IET_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ietadm: unexpected argument \"%s\"\n",
			argv[optind]);
		return -1;
	}
	if (!r->op[0]) {
		fprintf(stderr, "ietadm: --op is required (new, delete, update or show)\n");
		return -1;
	}
	return 0;
}

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
		fprintf(stderr, "ietadm: cannot reach ietd at %s: %s (is ietd running?)\n",
			path, strerror(errno));
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
			char *nr = cap < CTL_RSP_MAX + 4096 ?
				   realloc(rsp, cap * 2) : NULL;

			if (!nr) {
				free(rsp);
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
		if (n < 0) {
			fprintf(stderr, "ietadm: reading from ietd: %s\n",
				errno == EAGAIN ? "timed out" : strerror(errno));
			free(rsp);
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

int main(int argc, char **argv)
{
	const char *sock = CTL_SOCKET_PATH, *body;
	static struct ctl_req r;
	static char req[CTL_REQ_MAX];
	char *rsp;
	int len, status;

	if (parse(argc, argv, &r, &sock))
		return 2;
	len = ctl_req_format(&r, req, sizeof(req));
	if (len < 0) {
		fprintf(stderr, "ietadm: request too long\n");
		return 2;
	}
	rsp = call(sock, req, len);
	if (!rsp)
		return 1;
	if (ctl_rsp_parse(rsp, &status, &body)) {
		fprintf(stderr, "ietadm: ietd answered in a protocol this ietadm does not speak\n");
		free(rsp);
		return 1;
	}
	if (status) {
		fprintf(stderr, "ietadm: %s%s", *body ? body : strerror(status),
			*body && body[strlen(body) - 1] == '\n' ? "" : "\n");
		free(rsp);
		return 1;
	}
	fputs(body, stdout);
	free(rsp);
	return 0;
}
