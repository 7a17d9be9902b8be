// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: a buffer of netlink messages, as ietd receives them
 * from iscsi_trgt, handed to every parser of kreply.c: target, LUN and
 * session and portal group dumps, the TARGET_NEW and PR_GET answers and
 * the events group.
 */
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>

#include "kreply.h"

#define FAMILY	0x1d

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct nlmsghdr *nlh;
	struct kstate st = { 0 };
	struct kevent ev;
	uint32_t tid;
	struct kpr pr;
	char *copy;
	int len;

	if (size > 65536)	/* ietd's receive buffer */
		return 0;
	/* Exactly size bytes: a parser that reads past them trips ASan. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	nlh = (const struct nlmsghdr *)copy;
	len = (int)size;
	/*
	 * Whole messages, as mnl_cb_run hands them on (its mnl_nlmsg_ok
	 * compares nlmsg_len as an int: only the kernel and CAP_NET_ADMIN
	 * may send to ietd's sockets, so that is not the parsers' input).
	 */
	while (len >= (int)sizeof(*nlh) && nlh->nlmsg_len >= sizeof(*nlh) &&
	       nlh->nlmsg_len <= (uint32_t)len) {
		kreply_tid(nlh, &tid);
		if (kreply_target(nlh, &st) < 0)
			abort();
		if (st.nr_targets) {
			struct ktarget *t = &st.targets[st.nr_targets - 1];

			if (kreply_lun(nlh, t) < 0 ||
			    kreply_session(nlh, t) < 0 ||
			    kreply_tpg(nlh, t) < 0)
				abort();
		}
		if (kreply_pr(nlh, &pr) < 0)
			abort();
		kpr_free(&pr);
		if (kreply_event(nlh, FAMILY, &ev) &&
		    ev.type != KEVENT_CONN_CLOSED &&
		    ev.type != KEVENT_SESSION_CLOSED)
			abort();
		nlh = mnl_nlmsg_next(nlh, &len);
	}
	kstate_free(&st);
	free(copy);
	return 0;
}
