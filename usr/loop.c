// SPDX-License-Identifier: GPL-2.0
/* epoll event loop with a periodic tick. */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int loop_init(struct loop *l)
{
	memset(l, 0, sizeof(*l));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void loop_close(struct loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

static int ctl(struct loop *l, int op, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	return epoll_ctl(l->epfd, op, w->fd, &ev) ? -errno : 0;
}

int loop_add(struct loop *l, struct watch *w, uint32_t events)
{
	return ctl(l, EPOLL_CTL_ADD, w, events);
}

int loop_mod(struct loop *l, struct watch *w, uint32_t events)
{
	return ctl(l, EPOLL_CTL_MOD, w, events);
}

void loop_del(struct loop *l, struct watch *w)
{
	ctl(l, EPOLL_CTL_DEL, w, 0);
}

void loop_set_tick(struct loop *l, unsigned int ms,
		   void (*fn)(void *arg, uint64_t now), void *arg)
{
	l->tick_ms = ms;
	l->tick = fn;
	l->tick_arg = arg;
	l->next_tick = now_ms() + ms;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	struct epoll_event ev;
	uint64_t now = now_ms();
	int n;

	if (l->tick && now >= l->next_tick) {
		l->next_tick = now + l->tick_ms;
		l->tick(l->tick_arg, now);
	}
	if (l->tick) {
		int until = (int)(l->next_tick > now ? l->next_tick - now : 0);

		if (timeout_ms < 0 || until < timeout_ms)
			timeout_ms = until;
	}
	/*
	 * One event per wait: a callback that ends a connection can then
	 * never leave a stale pointer in a batch. ietd's rate is logins, not
	 * I/O, so the extra system calls do not matter.
	 */
	n = epoll_wait(l->epfd, &ev, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 1) {
		struct watch *w = ev.data.ptr;

		w->fn(w, ev.events);
	}
	return n;
}

int loop_run(struct loop *l)
{
	int ret = 0;

	while (!l->stop) {
		ret = loop_run_once(l, -1);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}
