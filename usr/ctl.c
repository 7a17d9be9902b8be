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
#include "ctl_ops.h"
#include "log.h"

#define CLIENT_TIMEOUT_MS	5000

struct ctl_client {
	struct watch w;
	struct ctl *ctl;
	struct ctl_client *next;
	bool refused;			/* not root: answered, never run */
	char req[CTL_REQ_MAX];
	size_t have;
	struct textbuf rsp;
	size_t rsp_off;
	uint64_t deadline;
	struct ctl_later *later;	/* answered when it is finished */
	int version;			/* of the request later answers */
};

static void client_free(struct ctl_client *cl)
{
	struct ctl_client **pp;

	for (pp = &cl->ctl->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	/* Room again: take the next one waiting in the backlog. */
	if (cl->ctl->nr_clients-- == CTL_CLIENTS_MAX && !cl->ctl->paused)
		loop_mod(cl->ctl->loop, &cl->ctl->w, EPOLLIN);
	loop_del(cl->ctl->loop, &cl->w);
	close(cl->w.fd);
	if (cl->rsp.buf)
		wipe(cl->rsp.buf, cl->rsp.cap);
	textbuf_free(&cl->rsp);
	wipe(cl->req, sizeof(cl->req));
	if (cl->later)
		log_warn("ietd stops before what an ietadm request waits for has happened: it is not finished");
	ctl_later_free(cl->later);
	free(cl);
}

/* The header, the body, then (on failure) the line saying why. */
static void respond(struct ctl_client *cl, int version, int status,
		    const char *body, size_t len, const char *why)
{
	char head[64];
	int n = ctl_rsp_header(version, status, head, sizeof(head));

	textbuf_reset(&cl->rsp);
	textbuf_append(&cl->rsp, head, n);
	textbuf_append(&cl->rsp, body, len);
	if (why) {
		textbuf_append(&cl->rsp, why, strlen(why));
		textbuf_append(&cl->rsp, "\n", 1);
	}
	cl->rsp_off = 0;
}

static void process(struct ctl_client *cl)
{
	struct ctl_req *req = malloc(sizeof(*req));
	struct textbuf out;
	char err[512];
	int ret;

	int version = CTL_VERSION;

	textbuf_init(&out, CTL_RSP_MAX);
	if (!req) {
		ret = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
	} else {
		ret = ctl_req_parse(cl->req, cl->have, req, err, sizeof(err));
		if (req->version)
			version = req->version;
		if (!ret)
			ret = ctl_start(cl->ctl->rt, req, &out, &cl->later,
					err, sizeof(err));
	}
	if (ret == -EINPROGRESS) {
		/*
		 * It waits for initiators to log out, or for LUNs' backings
		 * to close: answered by ctl_poll() then, and meanwhile
		 * neither read nor timed out.
		 */
		cl->version = version;
		cl->deadline = UINT64_MAX;
		loop_del(cl->ctl->loop, &cl->w);
	} else if (ret) {
		/* What was done before the failure, then why it failed. */
		respond(cl, version, -ret, out.buf ? out.buf : "", out.len,
			err);
		log_dbg(1, "ietadm request failed: %s", err);
	} else {
		respond(cl, version, 0, out.buf ? out.buf : "", out.len, NULL);
	}
	if (out.buf)
		wipe(out.buf, out.cap);	/* --op save holds secrets */
	textbuf_free(&out);
	if (req)
		wipe(req, sizeof(*req));	/* and --user its password */
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
	if (ctl_req_complete(cl->req, cl->have) && cl->refused) {
		static const char msg[] = "permission denied: ietadm must run as root";

		/*
		 * Answered once the request is in: closing with unread data
		 * would reset the connection and lose the answer.
		 */
		respond(cl, CTL_VERSION_MIN, EACCES, "", 0, msg);
		client_write(cl);
	} else if (ctl_req_complete(cl->req, cl->have)) {
		process(cl);
		if (!cl->later)
			client_write(cl);
	} else if (cl->have == sizeof(cl->req)) {
		respond(cl, CTL_VERSION, EINVAL, "", 0, "request too long");
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
	fd = accept_or_shed(w->fd, &c->spare);
	if (fd < 0) {
		if (accept_starved(&c->spare, errno)) {
			log_peer(LOG_ERR, "out of file descriptors, not accepting ietadm connections for a while");
			/* Still readable: polled on, it would spin the loop. */
			if (!loop_mod(c->loop, &c->w, 0))
				c->paused = true;
		} else if (errno == EMFILE || errno == ENFILE) {
			log_peer(LOG_ERR, "out of file descriptors, refusing an ietadm connection");
		}
		return;
	}
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
	/* Enough at once: the others wait in the backlog, unaccepted. */
	if (++c->nr_clients == CTL_CLIENTS_MAX)
		loop_mod(c->loop, &c->w, 0);
	/* The socket file is 0600 already; this also covers odd mounts. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    cred.uid != 0) {
		log_peer(LOG_WARNING, "ietadm connection from uid %d refused",
			 (int)cred.uid);
		cl->refused = true;
	}
}

int ctl_prepare_dir(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	char dir[sizeof(sun.sun_path)], *slash;
	int ret;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
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
	return 0;
}

int ctl_open(struct ctl *c, struct loop *loop, struct runtime *rt,
	     const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, probe, ret;

	memset(c, 0, sizeof(*c));
	c->w.fd = -1;
	c->spare.fd = -1;
	ret = ctl_prepare_dir(path, err, errlen);
	if (ret)
		return ret;
	strcpy(sun.sun_path, path);
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
	c->rt = rt;
	strcpy(c->path, path);
	ret = loop_add(loop, &c->w, EPOLLIN);
	if (ret) {
		snprintf(err, errlen, "epoll: %s", strerror(-ret));
		close(fd);
		unlink(path);
		c->w.fd = -1;
		return ret;
	}
	spare_open(&c->spare);
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
	spare_close(&c->spare);
}

/* A request that waited is finished: answer it. */
static void finish(struct ctl_client *cl)
{
	struct ctl_later *later = cl->later;
	struct textbuf out;
	char err[512];
	int ret;

	cl->later = NULL;
	textbuf_init(&out, CTL_RSP_MAX);
	ret = ctl_finish(cl->ctl->rt, later, &out, err, sizeof(err));
	respond(cl, cl->version, -ret, out.buf ? out.buf : "", out.len,
		ret ? err : NULL);
	if (ret)
		log_dbg(1, "ietadm request failed: %s", err);
	textbuf_free(&out);
	cl->deadline = now_ms() + CLIENT_TIMEOUT_MS;
	if (loop_add(cl->ctl->loop, &cl->w, EPOLLIN)) {
		client_free(cl);
		return;
	}
	client_write(cl);
}

void ctl_poll(struct ctl *c, uint64_t now)
{
	struct ctl_client *cl = c->clients, *next;

	for (; cl; cl = next) {
		next = cl->next;
		if (cl->later && !ctl_later_poll(cl->later, now))
			finish(cl);
	}
}

void ctl_tick(struct ctl *c, uint64_t now)
{
	struct ctl_client *cl, *next;

	ctl_poll(c, now);
	for (cl = c->clients; cl; cl = next) {
		next = cl->next;
		if (now >= cl->deadline)
			client_free(cl);
	}
	/* Out of descriptors a second ago: try the backlog again. */
	if (c->paused) {
		c->paused = false;
		if (c->nr_clients < CTL_CLIENTS_MAX)
			loop_mod(c->loop, &c->w, EPOLLIN);
	}
}
