// SPDX-License-Identifier: GPL-2.0
/*
 * The only netlink speaker of ietd: requests, dumps and events of
 * iscsi_trgt, built by kmsg.c and taken apart by kreply.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "backing.h"
#include "kernel.h"
#include "kmsg.h"
#include "kreply.h"

#define BUF_SIZE	(64 * 1024)

static struct {
	struct mnl_socket *req;	/* requests and their answers */
	struct mnl_socket *ev;	/* the events group */
	uint16_t family;
	uint32_t mcgrp;
	unsigned int seq;
	char errmsg[256];
} k;

const char *kernel_errmsg(void)
{
	return k.errmsg;
}

static int too_big(void)
{
	snprintf(k.errmsg, sizeof(k.errmsg),
		 "request does not fit in a netlink message of %zu bytes",
		 (size_t)KMSG_MAX);
	return -EMSGSIZE;
}

/* A callback for the data messages of one request, with its context. */
struct answer {
	mnl_cb_t fn;
	void *arg;
};

static int ctl_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);
	struct nlattr *attr;

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;
	/* Extended ack attributes follow the original header when capped. */
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(e->msg);
		mnl_attr_for_each(attr, nlh, off) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				snprintf(k.errmsg, sizeof(k.errmsg), "%s",
					 mnl_attr_get_str(attr));
		}
	}
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int ctl_done(const struct nlmsghdr *nlh, void *data)
{
	(void)data;
	/* A dump that failed part way reports the error in DONE. */
	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
		int err = *(int *)mnl_nlmsg_get_payload(nlh);

		if (err < 0) {
			errno = -err;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_STOP;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = ctl_error,
	[NLMSG_DONE] = ctl_done,
};

static ssize_t recv_reply(char *buf, size_t len)
{
	ssize_t n;

	do
		n = mnl_socket_recvfrom(k.req, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Whether buf holds the end of the answer to request seq. */
static bool has_end(const char *buf, ssize_t n, unsigned int seq)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
	int len = (int)n;

	for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len))
		if (h->nlmsg_seq == seq && (h->nlmsg_type == NLMSG_DONE ||
					    h->nlmsg_type == NLMSG_ERROR))
			return true;
	return false;
}

/* Send one request and read until its ack, error or end of dump. */
static int transact(struct nlmsghdr *nlh, mnl_cb_t fn, void *arg)
{
	static char buf[BUF_SIZE];
	unsigned int portid = mnl_socket_get_portid(k.req);
	ssize_t n;
	int ret, err;

	k.errmsg[0] = '\0';
	/* A signal for ietd's loop interrupts neither the request nor its answer. */
	do
		n = mnl_socket_sendto(k.req, nlh, nlh->nlmsg_len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	do {
		n = recv_reply(buf, sizeof(buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run2(buf, n, nlh->nlmsg_seq, portid, fn, arg,
				  ctl_cbs, NLMSG_MIN_TYPE);
	} while (ret == MNL_CB_OK);
	err = ret == MNL_CB_ERROR ? errno : 0;
	/*
	 * A dump given up part way (a change cut across it, which libmnl
	 * reports as EINTR, or a reply we could not read) leaves the rest of
	 * it on the socket: read it to its end, or the next request would
	 * find it instead of its own answer.
	 */
	if (err && (nlh->nlmsg_flags & NLM_F_DUMP)) {
		while (!has_end(buf, n, nlh->nlmsg_seq)) {
			n = recv_reply(buf, sizeof(buf));
			if (n < 0)
				break;
		}
	}
	return -err;
}

/* Generic netlink controller: our family's id and events group. */
static int family_attr(const struct nlattr *attr, void *data)
{
	const struct nlattr *grp, *a;

	(void)data;
	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(attr, MNL_TYPE_U16) == 0)
			k.family = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(grp, attr) {
			const char *name = NULL;
			uint32_t id = 0;

			mnl_attr_for_each_nested(a, grp) {
				if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
				    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
					name = mnl_attr_get_str(a);
				if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
				    mnl_attr_validate(a, MNL_TYPE_U32) == 0)
					id = mnl_attr_get_u32(a);
			}
			if (name && !strcmp(name, IET_GENL_MCGRP_EVENTS))
				k.mcgrp = id;
		}
		break;
	}
	return MNL_CB_OK;
}

static int family_msg(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr,
			      data);
}

static int resolve_family(void)
{
	union {
		struct nlmsghdr h;
		char b[KMSG_HDR + KMSG_STR(GENL_NAMSIZ)];
	} buf;

	if (kmsg_get_family(&buf, sizeof(buf), ++k.seq, IET_GENL_NAME))
		return too_big();
	return transact(&buf.h, family_msg, NULL);
}

static struct mnl_socket *open_socket(void)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	int one = 1;

	if (!nl)
		return NULL;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(nl);
		errno = err;
		return NULL;
	}
	/* Best effort: kernels without extended acks still work. */
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	return nl;
}

int kernel_open(void)
{
	int ret, fd;

	k.req = open_socket();
	if (!k.req)
		return -errno;
	ret = resolve_family();
	if (ret < 0) {
		if (ret == -ENOENT)
			snprintf(k.errmsg, sizeof(k.errmsg),
				 "generic netlink family %s not found: is iscsi_trgt loaded?",
				 IET_GENL_NAME);
		goto fail;
	}
	if (!k.mcgrp) {
		ret = -ENOENT;
		snprintf(k.errmsg, sizeof(k.errmsg), "no events group");
		goto fail;
	}
	k.ev = open_socket();
	if (!k.ev) {
		ret = -errno;
		goto fail;
	}
	if (mnl_socket_setsockopt(k.ev, NETLINK_ADD_MEMBERSHIP, &k.mcgrp,
				  sizeof(k.mcgrp)) < 0) {
		ret = -errno;
		goto fail;
	}
	fd = mnl_socket_get_fd(k.ev);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		ret = -errno;
		goto fail;
	}
	return 0;
fail:
	kernel_close();
	return ret;
}

void kernel_close(void)
{
	if (k.ev)
		mnl_socket_close(k.ev);
	if (k.req)
		mnl_socket_close(k.req);
	k.ev = NULL;
	k.req = NULL;
}

int kernel_reopen(void)
{
	k.req = open_socket();
	return k.req ? 0 : -errno;
}

int kernel_event_fd(void)
{
	return k.ev ? mnl_socket_get_fd(k.ev) : -1;
}

/* libmnl's callbacks over kreply.c's parsers. */
static int tid_reply(const struct nlmsghdr *nlh, void *data)
{
	kreply_tid(nlh, data);
	return MNL_CB_OK;
}

static int cb_result(int ret)
{
	if (!ret)
		return MNL_CB_OK;
	errno = -ret;
	return MNL_CB_ERROR;
}

static int target_msg(const struct nlmsghdr *nlh, void *data)
{
	return cb_result(kreply_target(nlh, data));
}

static int lun_msg(const struct nlmsghdr *nlh, void *data)
{
	return cb_result(kreply_lun(nlh, data));
}

static int session_msg(const struct nlmsghdr *nlh, void *data)
{
	return cb_result(kreply_session(nlh, data));
}

static int tpg_msg(const struct nlmsghdr *nlh, void *data)
{
	return cb_result(kreply_tpg(nlh, data));
}

static int pr_msg(const struct nlmsghdr *nlh, void *data)
{
	return cb_result(kreply_pr(nlh, data));
}

/* A request's buffer: room for the largest, aligned for its header. */
typedef union {
	struct nlmsghdr h;
	char b[KMSG_MAX];
} reqbuf;

/* The next request's destination. */
static const struct kmsg_to *to(void)
{
	static struct kmsg_to t;

	t.family = k.family;
	t.seq = ++k.seq;
	return &t;
}

/*
 * Send a request built into buf; ret is the builder's result. Buffers are
 * sized for the largest request (kmsg.h), so a request that does not fit
 * means a caller passed what the uapi limits do not allow.
 */
static int send_built(int ret, reqbuf *buf, mnl_cb_t fn, void *arg)
{
	if (ret)
		return too_big();
	return transact(&buf->h, fn, arg);
}

int kernel_target_new(uint32_t *tid, const char *name, const uint32_t *tparams,
		      const uint32_t *keys)
{
	reqbuf buf;

	return send_built(kmsg_target_new(&buf, sizeof(buf), to(), *tid, name,
					  tparams, keys), &buf, tid_reply, tid);
}

int kernel_target_set(uint32_t tid, const uint32_t *tparams,
		      const uint32_t *keys)
{
	reqbuf buf;

	return send_built(kmsg_target_set(&buf, sizeof(buf), to(), tid, tparams,
					  keys), &buf, NULL, NULL);
}

int kernel_target_del(uint32_t tid)
{
	reqbuf buf;

	return send_built(kmsg_target_del(&buf, sizeof(buf), to(), tid), &buf,
			  NULL, NULL);
}

int kernel_lun_new(uint32_t tid, const struct lun_conf *lun)
{
	struct lun_conf sized;
	reqbuf buf;

	/*
	 * The size it reports while its backing stays closed (no active
	 * portal group here: an HA pair's standby node), unless Blocks= says:
	 * as the path has it now. The kernel takes the backing's own once it
	 * opens.
	 */
	if (lun->type != IET_LUN_NULLIO && !lun->blocks) {
		sized = *lun;
		if (!backing_blocks(lun->path, lun->block_size ?: 512,
				    &sized.blocks))
			lun = &sized;
	}
	return send_built(kmsg_lun_new(&buf, sizeof(buf), to(), tid, lun), &buf,
			  NULL, NULL);
}

int kernel_lun_del(uint32_t tid, uint32_t lun)
{
	reqbuf buf;

	return send_built(kmsg_lun_del(&buf, sizeof(buf), to(), tid, lun), &buf,
			  NULL, NULL);
}

int kernel_pr_get(uint32_t tid, uint32_t lun, struct kpr *pr)
{
	reqbuf buf;
	int ret;

	memset(pr, 0, sizeof(*pr));
	ret = send_built(kmsg_pr_get(&buf, sizeof(buf), to(), tid, lun), &buf,
			 pr_msg, pr);
	if (ret)
		kpr_free(pr);
	return ret;
}

int kernel_pr_clear(uint32_t tid, uint32_t lun, bool all)
{
	reqbuf buf;

	return send_built(kmsg_pr_clear(&buf, sizeof(buf), to(), tid, lun,
					all ? IET_PR_CLEAR_ALL : IET_PR_RELEASE),
			  &buf, NULL, NULL);
}

int kernel_lun_set(uint32_t tid, uint32_t lun, uint64_t blocks, bool force)
{
	reqbuf buf;

	return send_built(kmsg_lun_set(&buf, sizeof(buf), to(), tid, lun,
				       blocks, force), &buf, NULL, NULL);
}

int kernel_tpg_set(uint32_t tid, uint16_t tag, uint32_t state, int remote)
{
	reqbuf buf;

	return send_built(kmsg_tpg_set(&buf, sizeof(buf), to(), tid, tag,
				       state, remote), &buf, NULL, NULL);
}

int kernel_tpg_del(uint32_t tid, uint16_t tag)
{
	reqbuf buf;

	return send_built(kmsg_tpg_del(&buf, sizeof(buf), to(), tid, tag),
			  &buf, NULL, NULL);
}

int kernel_logout_req(const struct logout_scope *sc, uint32_t wait)
{
	reqbuf buf;

	return send_built(kmsg_logout_req(&buf, sizeof(buf), to(), sc->tid,
					  sc->tpgt, sc->sid, sc->cid, wait),
			  &buf, NULL, NULL);
}

int kernel_session_new(uint32_t tid, uint64_t sid, const char *initiator,
		       uint32_t exp_cmdsn, uint16_t tpgt, const uint32_t *keys)
{
	reqbuf buf;

	return send_built(kmsg_session_new(&buf, sizeof(buf), to(), tid, sid,
					   initiator, exp_cmdsn, tpgt, keys),
			  &buf, NULL, NULL);
}

int kernel_session_del(uint32_t tid, uint64_t sid)
{
	reqbuf buf;

	return send_built(kmsg_session_del(&buf, sizeof(buf), to(), tid, sid),
			  &buf, NULL, NULL);
}

int kernel_conn_new(uint32_t tid, uint64_t sid, uint16_t cid, int fd,
		    uint32_t statsn, const uint32_t *keys)
{
	reqbuf buf;

	return send_built(kmsg_conn_new(&buf, sizeof(buf), to(), tid, sid, cid,
					fd, statsn, keys), &buf, NULL, NULL);
}

int kernel_conn_del(uint32_t tid, uint64_t sid, uint16_t cid)
{
	reqbuf buf;

	return send_built(kmsg_conn_del(&buf, sizeof(buf), to(), tid, sid, cid),
			  &buf, NULL, NULL);
}

static int dump_of(uint8_t cmd, uint32_t tid, mnl_cb_t fn, void *arg)
{
	reqbuf buf;

	return send_built(kmsg_dump(&buf, sizeof(buf), to(), cmd, tid), &buf,
			  fn, arg);
}

static int dump_once(struct kstate *st)
{
	size_t i;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = dump_of(IET_CMD_TARGET_GET, 0, target_msg, st);
	for (i = 0; !ret && i < st->nr_targets; i++) {
		struct ktarget *t = &st->targets[i];

		ret = dump_of(IET_CMD_LUN_GET, t->tid, lun_msg, t);
		if (!ret)
			ret = dump_of(IET_CMD_SESSION_GET, t->tid, session_msg,
				      t);
		/* A module without portal groups does not know the command. */
		if (!ret) {
			ret = dump_of(IET_CMD_TPG_GET, t->tid, tpg_msg, t);
			if (ret == -EOPNOTSUPP)
				ret = 0;
		}
		/* A target deleted between the dumps simply has no objects. */
		if (ret == -ENOENT)
			ret = 0;
	}
	if (ret)
		kstate_free(st);
	return ret;
}

/*
 * The kernel marks a dump that a change (a login, a logout, a LUN added)
 * cut across (NLM_F_DUMP_INTR): what it holds may be neither the old state
 * nor the new one. Such a dump is taken again, a few times at most.
 */
#define DUMP_TRIES	8

int kernel_dump(struct kstate *st)
{
	int tries = 0, ret;

	do
		ret = dump_once(st);
	while (ret == -EINTR && ++tries < DUMP_TRIES);
	return ret;
}

struct event_ctx {
	kevent_fn fn;
	void *arg;
};

static int event_msg(const struct nlmsghdr *nlh, void *data)
{
	struct event_ctx *ctx = data;
	struct kevent ev;

	if (kreply_event(nlh, k.family, &ev))
		ctx->fn(&ev, ctx->arg);
	return MNL_CB_OK;
}

int kernel_events(kevent_fn fn, void *arg)
{
	static char buf[BUF_SIZE];
	struct event_ctx ctx = { fn, arg };
	ssize_t n;

	for (;;) {
		n = recv(mnl_socket_get_fd(k.ev), buf, sizeof(buf),
			 MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			/*
			 * ENOBUFS: events were lost. The caller must
			 * resynchronise with a dump.
			 */
			return -errno;
		}
		if (mnl_cb_run(buf, n, 0, 0, event_msg, &ctx) == MNL_CB_ERROR)
			return -errno;
	}
}
