// SPDX-License-Identifier: GPL-2.0
/* The ietadm server: socket, clients and the operation table. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "kernel.h"
#include "log.h"
#include "params.h"

#define CLIENT_TIMEOUT_MS	5000

struct ctl_client {
	struct watch w;
	struct ctl *ctl;
	struct ctl_client *next;
	char req[CTL_REQ_MAX];
	size_t have;
	struct textbuf rsp;
	size_t rsp_off;
	uint64_t deadline;
};

__attribute__((format(printf, 2, 3)))
static int line(struct textbuf *out, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return -ENOSPC;
	buf[n++] = '\n';
	return textbuf_append(out, buf, n);
}

static void keys_out(struct textbuf *out, const uint32_t *keys, bool is_mask)
{
	char val[32];
	unsigned int i;

	for (i = 1; i <= IET_KEY_MAX; i++) {
		iet_key_format(i, keys[i], is_mask, val, sizeof(val));
		line(out, "%s=%s", iet_key_name(i), val);
	}
}

static int op_show(const struct config *cfg, const struct ctl_req *req,
		   struct textbuf *out, char *err, size_t errlen)
{
	const struct target_conf *tc;
	const struct ktarget *kt = NULL;
	struct kstate st;
	size_t i;
	int ret;

	if (req->fields & CTL_F_USER) {
		snprintf(err, errlen, "CHAP accounts are not supported yet");
		return -EOPNOTSUPP;
	}
	if (!(req->fields & CTL_F_TID)) {
		snprintf(err, errlen, "--op show needs --tid");
		return -EINVAL;
	}
	memset(&st, 0, sizeof(st));
	ret = kernel_dump(&st);
	if (ret) {
		snprintf(err, errlen, "reading the kernel's state: %s%s%s",
			 strerror(-ret), *kernel_errmsg() ? ": " : "",
			 kernel_errmsg());
		return ret;
	}
	for (i = 0; i < st.nr_targets; i++)
		if (st.targets[i].tid == req->tid)
			kt = &st.targets[i];
	if (!kt) {
		snprintf(err, errlen, "no target with tid %u", req->tid);
		ret = -ENOENT;
		goto out;
	}
	if (req->fields & CTL_F_SID) {
		const struct ksession *ks = NULL;

		if (req->sid == 0) {
			/* IET: sid 0 shows the target's session defaults. */
			keys_out(out, kt->keys, true);
			goto out;
		}
		for (i = 0; i < kt->nr_sessions; i++)
			if (kt->sessions[i].sid == req->sid)
				ks = &kt->sessions[i];
		if (!ks) {
			snprintf(err, errlen, "no session %llu in target %u",
				 (unsigned long long)req->sid, req->tid);
			ret = -ENOENT;
			goto out;
		}
		keys_out(out, ks->keys, false);
		goto out;
	}
	tc = config_target_by_tid(cfg, req->tid);
	line(out, "Wthreads=%u", kt->tparams[IET_TP_WTHREADS]);
	line(out, "QueuedCommands=%u", kt->tparams[IET_TP_QUEUED_CMDS]);
	line(out, "NOPInterval=%u", kt->tparams[IET_TP_NOP_INTERVAL]);
	line(out, "NOPTimeout=%u", kt->tparams[IET_TP_NOP_TIMEOUT]);
	line(out, "MaxSessions=%u", tc ? tc->max_sessions : 0);
out:
	kstate_free(&st);
	if (!ret && out->overflow) {
		snprintf(err, errlen, "output too long");
		ret = -ENOSPC;
	}
	return ret;
}

static int op_later(const struct config *cfg, const struct ctl_req *req,
		    struct textbuf *out, char *err, size_t errlen)
{
	(void)cfg;
	(void)out;
	snprintf(err, errlen, "--op %s is not supported yet", req->op);
	return -EOPNOTSUPP;
}

static const struct ctl_op {
	const char *name;
	int (*fn)(const struct config *cfg, const struct ctl_req *req,
		  struct textbuf *out, char *err, size_t errlen);
} ctl_ops[] = {
	{ "show", op_show },
	{ "new", op_later },
	{ "delete", op_later },
	{ "update", op_later },
};

int ctl_handle(const struct config *cfg, const struct ctl_req *req,
	       struct textbuf *out, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof(ctl_ops) / sizeof(ctl_ops[0]); i++)
		if (!strcmp(ctl_ops[i].name, req->op))
			return ctl_ops[i].fn(cfg, req, out, err, errlen);
	snprintf(err, errlen, "unknown op \"%s\" (new, delete, update, show)",
		 req->op);
	return -EINVAL;
}

static void client_free(struct ctl_client *cl)
{
	struct ctl_client **pp;

	for (pp = &cl->ctl->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	loop_del(cl->ctl->loop, &cl->w);
	close(cl->w.fd);
	textbuf_free(&cl->rsp);
	free(cl);
}

static void respond(struct ctl_client *cl, int status, const char *body,
		    size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %d %d\n", CTL_MAGIC,
			 CTL_VERSION, status);

	textbuf_reset(&cl->rsp);
	textbuf_append(&cl->rsp, head, n);
	textbuf_append(&cl->rsp, body, len);
	cl->rsp_off = 0;
}

static void process(struct ctl_client *cl)
{
	struct ctl_req *req = malloc(sizeof(*req));
	struct textbuf out;
	char err[512];
	int ret;

	textbuf_init(&out, CTL_RSP_MAX);
	if (!req) {
		ret = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	} else {
		ret = ctl_req_parse(cl->req, cl->have, req, err, sizeof(err));
		if (!ret)
			ret = ctl_handle(cl->ctl->cfg, req, &out, err,
					 sizeof(err));
	}
	if (ret) {
		size_t len = strlen(err);

		err[len++] = '\n';
		respond(cl, -ret, err, len);
		log_dbg(1, "ietadm request failed: %.*s", (int)len - 1, err);
	} else {
		respond(cl, 0, out.buf ? out.buf : "", out.len);
	}
	textbuf_free(&out);
	free(req);
}

static void client_write(struct ctl_client *cl)
{
	while (cl->rsp_off < cl->rsp.len) {
		ssize_t n = send(cl->w.fd, cl->rsp.buf + cl->rsp_off,
				 cl->rsp.len - cl->rsp_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			loop_mod(cl->ctl->loop, &cl->w, EPOLLOUT);
			return;
		}
		if (n <= 0)
			break;
		cl->rsp_off += n;
	}
	client_free(cl);
}

static void client_event(struct watch *w, uint32_t events)
{
	struct ctl_client *cl = container_of(w, struct ctl_client, w);
	ssize_t n;

	(void)events;
	if (cl->rsp.len) {
		client_write(cl);
		return;
	}
	n = recv(w->fd, cl->req + cl->have, sizeof(cl->req) - cl->have, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_free(cl);
		return;
	}
	cl->have += n;
	if (ctl_req_complete(cl->req, cl->have)) {
		process(cl);
		client_write(cl);
	} else if (cl->have == sizeof(cl->req)) {
		static const char msg[] = "request too long\n";

		respond(cl, EINVAL, msg, sizeof(msg) - 1);
		client_write(cl);
	}
}

static void on_accept(struct watch *w, uint32_t events)
{
	struct ctl *c = container_of(w, struct ctl, w);
	struct ctl_client *cl;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	(void)events;
	fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->w.fd = fd;
	cl->w.fn = client_event;
	cl->ctl = c;
	cl->deadline = now_ms() + CLIENT_TIMEOUT_MS;
	textbuf_init(&cl->rsp, CTL_RSP_MAX + 64);
	cl->next = c->clients;
	c->clients = cl;
	if (loop_add(c->loop, &cl->w, EPOLLIN)) {
		c->clients = cl->next;
		close(fd);
		free(cl);
		return;
	}
	/* The socket file is 0600 already; this also covers odd mounts. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    cred.uid != 0) {
		static const char msg[] = "permission denied: ietadm must run as root\n";

		log_peer(LOG_WARNING, "ietadm connection from uid %d refused",
			 (int)cred.uid);
		respond(cl, EACCES, msg, sizeof(msg) - 1);
		client_write(cl);
	}
}

int ctl_open(struct ctl *c, struct loop *loop, const struct config *cfg,
	     const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[sizeof(sun.sun_path)], *slash;
	int fd, probe, ret;

	memset(c, 0, sizeof(*c));
	c->w.fd = -1;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			return ret;
		}
	}
	/* Another ietd answering here owns the kernel state: refuse. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (!connect(probe, (struct sockaddr *)&sun, sizeof(sun))) {
			close(probe);
			snprintf(err, errlen, "another ietd is running (%s answers)",
				 path);
			return -EADDRINUSE;
		}
		close(probe);
	}
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return ret;
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, 0600) || listen(fd, 16)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	c->w.fd = fd;
	c->w.fn = on_accept;
	c->loop = loop;
	c->cfg = cfg;
	strcpy(c->path, path);
	ret = loop_add(loop, &c->w, EPOLLIN);
	if (ret) {
		snprintf(err, errlen, "epoll: %s", strerror(-ret));
		close(fd);
		unlink(path);
		c->w.fd = -1;
		return ret;
	}
	return 0;
}

void ctl_close(struct ctl *c)
{
	while (c->clients)
		client_free(c->clients);
	if (c->w.fd >= 0) {
		loop_del(c->loop, &c->w);
		close(c->w.fd);
		unlink(c->path);
	}
	c->w.fd = -1;
}

void ctl_tick(struct ctl *c, uint64_t now)
{
	struct ctl_client *cl = c->clients, *next;

	for (; cl; cl = next) {
		next = cl->next;
		if (now >= cl->deadline)
			client_free(cl);
	}
}
