// SPDX-License-Identifier: GPL-2.0
/*
 * Portal groups that leave a target while sessions use them (ietd started
 * on a config whose PortalGroup lines differ from the running kernel's):
 * their initiators are asked to log out, and the group goes from the
 * kernel once they have, or once their time is up and ietd has closed
 * what stayed. The event loop goes on meanwhile; tpg_retire_poll() ends
 * them, from the tick and after the kernel's session events.
 *
 * One entry per (tid, group); the list is no longer than the groups the
 * kernel had, so it is walked whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "log.h"
#include "logout.h"
#include "loop.h"
#include "tpg_retire.h"

struct retiring {
	uint32_t tid;
	uint16_t tpgt;
	struct logout_wait lw;
};

static struct retiring *list;
static size_t nr_list;

static struct retiring *find(uint32_t tid, uint16_t tpgt)
{
	size_t i;

	for (i = 0; i < nr_list; i++)
		if (list[i].tid == tid && list[i].tpgt == tpgt)
			return &list[i];
	return NULL;
}

static void drop(struct retiring *r)
{
	logout_wait_free(&r->lw);
	*r = list[--nr_list];
	if (!nr_list) {
		free(list);
		list = NULL;
	}
}

/* Close the sessions of the group that are left, then delete it. */
static int finish(uint32_t tid, uint16_t tpgt)
{
	struct logout_scope sc = { tid, tpgt, 0, -1 };
	const struct ktarget *kt;
	struct kstate st;
	size_t i, j;
	int ret;

	if (!kernel_dump(&st)) {
		for (i = 0; i < st.nr_targets; i++) {
			kt = &st.targets[i];
			if (kt->tid != tid)
				continue;
			for (j = 0; j < kt->nr_sessions; j++)
				if (logout_in_scope(&sc, &kt->sessions[j]))
					kernel_session_del(tid,
							   kt->sessions[j].sid);
		}
		kstate_free(&st);
	}
	ret = kernel_tpg_del(tid, tpgt);
	/* The target went meanwhile, and its groups with it. */
	return ret == -ENOENT ? 0 : ret;
}

int tpg_retire(uint32_t tid, uint16_t tpgt, unsigned int wait)
{
	struct logout_scope *sc;
	struct retiring *r, *grown;
	int ret;

	if (find(tid, tpgt))
		return 0;
	sc = malloc(sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	*sc = (struct logout_scope){ tid, tpgt, 0, -1 };
	grown = realloc(list, (nr_list + 1) * sizeof(*list));
	if (!grown) {
		free(sc);
		return -ENOMEM;
	}
	list = grown;
	r = &list[nr_list];
	memset(r, 0, sizeof(*r));
	ret = logout_ask(&r->lw, sc, 1, wait);	/* takes sc */
	if (ret || !logout_poll(&r->lw, now_ms())) {
		/* Nobody to ask, the kernel could not, or all gone at once. */
		logout_wait_free(&r->lw);
		if (!nr_list) {
			free(list);
			list = NULL;
		}
		return finish(tid, tpgt);
	}
	r->tid = tid;
	r->tpgt = tpgt;
	nr_list++;
	log_info("tid %u: portal group %u goes once its sessions have logged out (within %u s)",
		 tid, tpgt, wait);
	return 0;
}

bool tpg_retiring(uint32_t tid, uint16_t tpgt)
{
	return find(tid, tpgt) != NULL;
}

bool tpg_retire_cancel(uint32_t tid, uint16_t tpgt)
{
	struct retiring *r = find(tid, tpgt);

	if (!r)
		return false;
	drop(r);
	return true;
}

void tpg_retire_poll(uint64_t now)
{
	size_t i = 0;
	uint32_t tid;
	uint16_t tpgt;
	int ret;

	while (i < nr_list) {
		if (logout_poll(&list[i].lw, now) > 0) {
			i++;
			continue;
		}
		tid = list[i].tid;
		tpgt = list[i].tpgt;
		drop(&list[i]);		/* list[i] is another one now */
		ret = finish(tid, tpgt);
		if (ret)
			log_err("tid %u: deleting portal group %u: %s%s%s", tid,
				tpgt, strerror(-ret),
				*kernel_errmsg() ? ": " : "", kernel_errmsg());
		else
			log_info("tid %u: portal group %u deleted", tid, tpgt);
	}
}

size_t tpg_retire_pending(void)
{
	return nr_list;
}

void tpg_retire_free_all(void)
{
	while (nr_list)
		drop(&list[nr_list - 1]);
}
