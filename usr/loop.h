/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's one event loop: epoll over non-blocking descriptors, each with a
 * callback, and a periodic tick for timeouts. A callback may free its own
 * watch, never another's (events are taken one at a time anyway).
 */
#ifndef IET_USR_LOOP_H
#define IET_USR_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct watch;
typedef void (*watch_fn)(struct watch *w, uint32_t events);

/* Embedded in its owner, found again with container_of. */
struct watch {
	int fd;
	watch_fn fn;
};

struct loop {
	int epfd;
	bool stop;
	unsigned int tick_ms;
	uint64_t next_tick;
	void (*tick)(void *arg, uint64_t now);
	void *tick_arg;
};

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

uint64_t now_ms(void);

int loop_init(struct loop *l);
void loop_close(struct loop *l);
int loop_add(struct loop *l, struct watch *w, uint32_t events);
int loop_mod(struct loop *l, struct watch *w, uint32_t events);
/* Must come before the descriptor is closed or handed to the kernel. */
void loop_del(struct loop *l, struct watch *w);
void loop_set_tick(struct loop *l, unsigned int ms,
		   void (*fn)(void *arg, uint64_t now), void *arg);
/* Wait up to timeout_ms (-1: until the next tick) and run one event. */
int loop_run_once(struct loop *l, int timeout_ms);
/* Run until loop_stop(). */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

#endif
