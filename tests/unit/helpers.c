// SPDX-License-Identifier: GPL-2.0
/* Shared test helpers: text, PDUs, a running core over loopback TCP. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "kernel_fake.h"
#include "plan.h"
#include "test.h"

void text_of(struct text *t, ...)
{
	const char *s;
	va_list ap;

	t->len = 0;
	va_start(ap, t);
	while ((s = va_arg(ap, const char *))) {
		size_t n = strlen(s) + 1;

		if (t->len + n > sizeof(t->buf))
			abort();
		memcpy(t->buf + t->len, s, n);
		t->len += n;
	}
	va_end(ap);
}

const char *text_get(const void *data, size_t len, const char *key)
{
	const char *p = data, *end = p ? p + len : NULL;
	size_t klen = strlen(key);

	while (p < end) {
		size_t n = strnlen(p, end - p);

		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return p + klen + 1;
		p += n + 1;
	}
	return NULL;
}

size_t text_count(const void *data, size_t len, const char *key)
{
	const char *p = data, *end = p ? p + len : NULL;
	size_t klen = strlen(key), count = 0;

	while (p < end) {
		size_t n = strnlen(p, end - p);

		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=')
			count++;
		p += n + 1;
	}
	return count;
}

void login_req_init(struct login_req *r, bool transit, uint8_t csg,
		    uint8_t nsg)
{
	static const uint8_t isid[6] = { 0x80, 0x12, 0x34, 0x56, 0x78, 0x9a };

	memset(r, 0, sizeof(*r));
	r->immediate = true;
	r->transit = transit;
	r->csg = csg;
	r->nsg = transit ? nsg : 0;
	memcpy(r->isid, isid, sizeof(isid));
	r->itt = 0x1000;
	r->cmdsn = 77;
	r->exp_statsn = 0;
}

void login_bhs(const struct login_req *r, const struct text *t, uint8_t *bhs)
{
	struct login_req c = *r;

	c.dlength = t ? t->len : 0;
	login_req_encode(&c, bhs);
}

void config_of(struct config *cfg, const char *text)
{
	char err[512];

	if (config_parse(text, strlen(text), "test.conf", cfg, err,
			 sizeof(err))) {
		fprintf(stderr, "config_of: %s\n", err);
		abort();
	}
}

void fx_init(struct fixture *fx, const char *conf)
{
	fake_reset();
	fx_init_on_kernel(fx, conf);
}

void fx_init_on_kernel(struct fixture *fx, const char *conf)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct kstate st;
	socklen_t len = sizeof(sin);
	char err[512];

	struct config next;

	memset(fx, 0, sizeof(*fx));
	if (kernel_open())
		abort();
	config_of(&next, conf);
	kernel_dump(&st);
	fx->rt.state.dirfd = -1;
	fx->rt.reg = &fx->reg;
	if (runtime_start(&fx->rt, &next, &st, err, sizeof(err))) {
		fprintf(stderr, "fx_init: %s\n", err);
		abort();
	}
	registry_init(&fx->reg);
	registry_learn(&fx->reg, &st);
	kstate_free(&st);
	if (loop_init(&fx->loop))
		abort();
	server_init(&fx->srv, &fx->loop, &fx->rt.cfg, &fx->reg);
	fx->srv.statsn_seed = 1000;

	fx->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fx->listen_fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(fx->listen_fd, 8) ||
	    getsockname(fx->listen_fd, (struct sockaddr *)&sin, &len))
		abort();
}

void fx_free(struct fixture *fx)
{
	server_close_all(&fx->srv);
	close(fx->listen_fd);
	loop_close(&fx->loop);
	registry_free(&fx->reg);
	config_free(&fx->rt.cfg);
	fake_reset();
}

unsigned int fx_login_status(struct fixture *fx, const char *ip,
			     const char *target)
{
	struct login_req r;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	size_t dlen;
	char tn[300];
	int fd = fx_connect_from(fx, ip);

	snprintf(tn, sizeof(tn), "TargetName=%s", target);
	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, tn, "AuthMethod=None", NULL);
	login_bhs(&r, &t, bhs);
	if (send_pdu(fd, bhs, t.buf, t.len) || recv_pdu(fx, fd, bhs, &data, &dlen))
		bhs[36] = bhs[37] = 0xff;
	free(data);
	close(fd);
	return bhs[36] << 8 | bhs[37];
}

int fx_connect(struct fixture *fx)
{
	return fx_connect_from(fx, "127.0.0.1");
}

int fx_connect_from(struct fixture *fx, const char *ip)
{
	struct sockaddr_in sin, from = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int c, s;

	getsockname(fx->listen_fd, (struct sockaddr *)&sin, &len);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || inet_pton(AF_INET, ip, &from.sin_addr) != 1 ||
	    bind(c, (struct sockaddr *)&from, sizeof(from)) ||
	    connect(c, (struct sockaddr *)&sin, sizeof(sin)))
		abort();
	s = accept4(fx->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (s < 0)
		abort();
	server_accept(&fx->srv, s);
	return c;
}

struct sockaddr_storage sockaddr_of(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	} else {
		abort();
	}
	return ss;
}

int fx_connect_as(struct fixture *fx, const char *ip, uint16_t port)
{
	struct sockaddr_storage peer = sockaddr_of(ip, port);
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int c, s;

	if (peer.ss_family != AF_INET6)
		abort();
	getsockname(fx->listen_fd, (struct sockaddr *)&sin, &len);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sin, sizeof(sin)))
		abort();
	s = accept4(fx->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (s < 0)
		abort();
	server_accept_from(&fx->srv, s, &peer);
	return c;
}

#ifdef __SANITIZE_ADDRESS__
/* From <sanitizer/allocator_interface.h>, which gcc does not install. */
int __sanitizer_install_malloc_and_free_hooks(
	void (*malloc_hook)(const volatile void *p, size_t size),
	void (*free_hook)(const volatile void *p));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static const char *watched;
static size_t watched_hits;

static void on_malloc(const volatile void *p, size_t size)
{
	(void)p;
	(void)size;
}

static void on_free(const volatile void *p)
{
	const void *b = (const void *)p;

	if (watched && b && memmem(b, __sanitizer_get_allocated_size(p),
				   watched, strlen(watched)))
		watched_hits++;
}

void freed_watch(const char *secret)
{
	static bool hooked;

	if (!hooked &&
	    !__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free))
		abort();
	hooked = true;
	watched = secret;
	watched_hits = 0;
}

size_t freed_holding(void)
{
	watched = NULL;
	return watched_hits;
}
#else
void freed_watch(const char *secret)
{
	(void)secret;
}

size_t freed_holding(void)
{
	return 0;
}
#endif

bool fx_run_until(struct fixture *fx, bool (*cond)(void *), void *arg)
{
	int i;

	for (i = 0; i < 400; i++) {
		if (cond(arg))
			return true;
		loop_run_once(&fx->loop, 5);
	}
	return cond(arg);
}

void fx_run(struct fixture *fx, int iterations)
{
	while (iterations--)
		loop_run_once(&fx->loop, 1);
}

int send_pdu(int fd, const uint8_t *bhs, const void *data, size_t len)
{
	static const uint8_t zero[4];
	size_t pad = pdu_pad(len);

	if (send(fd, bhs, BHS_LEN, MSG_NOSIGNAL) != BHS_LEN)
		return -1;
	if (len && send(fd, data, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -1;
	if (pad && send(fd, zero, pad, MSG_NOSIGNAL) != (ssize_t)pad)
		return -1;
	return 0;
}

/* Read exactly len bytes, running the server's loop while waiting. */
static int read_full(struct fixture *fx, int fd, void *buf, size_t len)
{
	size_t have = 0;
	int i;

	for (i = 0; i < 400 && have < len; i++) {
		ssize_t n = recv(fd, (char *)buf + have, len - have,
				 MSG_DONTWAIT);

		if (n > 0) {
			have += n;
			continue;
		}
		if (n == 0)
			return -1;
		if (errno != EAGAIN)
			return -1;
		loop_run_once(&fx->loop, 5);
	}
	return have == len ? 0 : -1;
}

int recv_pdu(struct fixture *fx, int fd, uint8_t *bhs, uint8_t **data,
	     size_t *dlen)
{
	uint32_t len;
	size_t padded;

	*data = NULL;
	*dlen = 0;
	if (read_full(fx, fd, bhs, BHS_LEN))
		return -1;
	len = (uint32_t)bhs[5] << 16 | bhs[6] << 8 | bhs[7];
	padded = len + pdu_pad(len);
	*data = calloc(1, padded + 1);
	if (!*data || (padded && read_full(fx, fd, *data, padded))) {
		free(*data);
		*data = NULL;
		return -1;
	}
	*dlen = len;
	return 0;
}

bool peer_closed(struct fixture *fx, int fd)
{
	char c;
	int i;

	for (i = 0; i < 400; i++) {
		ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
		if (n > 0)
			return false;
		loop_run_once(&fx->loop, 5);
	}
	return false;
}
