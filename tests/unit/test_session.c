// SPDX-License-Identifier: GPL-2.0
/*
 * Logins and discovery driven through conn.c over loopback TCP, with the
 * fake kernel: what reaches the kernel, and what stays on the socket.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "crc32c.h"
#include "helpers.h"
#include "kernel_fake.h"
#include "params.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n Lun 0 Type=nullio\n"		\
		"Target " TARGET2 "\n Lun 0 Type=nullio\n"

#define OPS	"HeaderDigest=None", "DataDigest=None",			\
		"DefaultTime2Retain=0", "InitialR2T=No",		\
		"MaxRecvDataSegmentLength=262144"

struct rsp {
	uint8_t bhs[BHS_LEN];
	uint8_t *data;
	size_t dlen;
	struct login_rsp lr;
};

static int exchange(struct fixture *fx, int fd, const struct login_req *r,
		    const struct text *t, struct rsp *p)
{
	uint8_t bhs[BHS_LEN];
	const char *why;

	login_bhs(r, t, bhs);
	if (send_pdu(fd, bhs, t ? t->buf : NULL, t ? t->len : 0))
		return -1;
	free(p->data);
	if (recv_pdu(fx, fd, p->bhs, &p->data, &p->dlen))
		return -1;
	login_rsp_decode(p->bhs, &p->lr, &why);
	return 0;
}

/* Security then operational stage; returns the final response's TSIH. */
static int full_login(struct fixture *fx, int fd, const char *target,
		      const uint8_t *isid, uint16_t tsih, uint16_t cid,
		      struct rsp *p)
{
	struct login_req r;
	struct text t;
	char tn[300];

	snprintf(tn, sizeof(tn), "TargetName=%s", target);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	if (isid)
		memcpy(r.isid, isid, 6);
	r.tsih = tsih;
	r.cid = cid;
	text_of(&t, "InitiatorName=" INITIATOR, tn, "SessionType=Normal",
		"AuthMethod=None", NULL);
	if (exchange(fx, fd, &r, &t, p) || p->lr.status)
		return -1;
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	if (isid)
		memcpy(r.isid, isid, 6);
	r.tsih = tsih;
	r.cid = cid;
	text_of(&t, OPS, NULL);
	if (exchange(fx, fd, &r, &t, p) || p->lr.status || !p->lr.transit)
		return -1;
	return p->lr.tsih;
}

static bool handed_off(void *arg)
{
	return fake_count(F_CONN_NEW) >= (size_t)(uintptr_t)arg;
}

TEST(session_full_login_hands_the_socket_and_keys_to_the_kernel)
{
	static const uint8_t next_pdu[BHS_LEN + 8] = { 0x01, 0x80, 1, 2, 3 };
	struct fixture fx;
	struct rsp p = { 0 };
	struct login_req r;
	struct text t;
	const struct fake_call *sn, *cn;
	uint8_t bhs[BHS_LEN], got[sizeof(next_pdu)];
	int fd, kfd, tsih;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET2,
		"AuthMethod=None", NULL);
	REQUIRE(exchange(&fx, fd, &r, &t, &p) == 0);
	CHECK_EQ(p.lr.status, 0);
	CHECK_EQ(p.lr.statsn, 1000);
	CHECK_STR(text_get(p.data, p.dlen, "TargetPortalGroupTag"), "1");

	/* The final request and, right behind it, the first SCSI command. */
	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, OPS, NULL);
	login_bhs(&r, &t, bhs);
	REQUIRE(send_pdu(fd, bhs, t.buf, t.len) == 0);
	REQUIRE(send(fd, next_pdu, sizeof(next_pdu), 0) == sizeof(next_pdu));
	free(p.data);
	REQUIRE(recv_pdu(&fx, fd, p.bhs, &p.data, &p.dlen) == 0);
	login_rsp_decode(p.bhs, &p.lr, &(const char *){ NULL });
	CHECK_EQ(p.lr.status, 0);
	CHECK(p.lr.transit);
	CHECK_EQ(p.lr.nsg, STAGE_FFP);
	tsih = p.lr.tsih;
	CHECK(tsih != 0);
	CHECK_EQ(p.lr.statsn, 1001);

	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	sn = fake_last(F_SESSION_NEW);
	cn = fake_last(F_CONN_NEW);
	REQUIRE(sn && cn);
	CHECK_EQ(sn->tid, 2);
	CHECK_EQ(sn->sid, make_sid(0x80123456789aull, tsih));
	CHECK_STR(sn->name, INITIATOR);
	CHECK_EQ(sn->exp_cmdsn, 77);
	CHECK_EQ(sn->keys[IET_KEY_INITIAL_R2T], 1);
	CHECK_EQ(sn->keys[IET_KEY_IMMEDIATE_DATA], 1);
	CHECK_EQ(sn->keys[IET_KEY_HEADER_DIGEST], IET_DIGEST_NONE);
	CHECK_EQ(sn->keys[IET_KEY_DATA_DIGEST], IET_DIGEST_NONE);
	CHECK_EQ(sn->keys[IET_KEY_MAX_RECV_DSL], 8192);
	CHECK_EQ(sn->keys[IET_KEY_MAX_XMIT_DSL], 8192);
	CHECK_EQ(sn->keys[IET_KEY_DEFAULT_TIME2RETAIN], 0);
	CHECK_EQ(cn->tid, 2);
	CHECK_EQ(cn->sid, sn->sid);
	CHECK_EQ(cn->cid, 0);
	CHECK_EQ(cn->statsn, 1002);
	CHECK(!memcmp(cn->keys, sn->keys, sizeof(cn->keys)));

	/* Nothing past the login PDU was read: the kernel gets it all. */
	kfd = fake_conn_fd(2, sn->sid, 0);
	REQUIRE(kfd >= 0);
	REQUIRE(recv(kfd, got, sizeof(got), MSG_DONTWAIT) == sizeof(got));
	CHECK(!memcmp(got, next_pdu, sizeof(got)));
	/* ietd let go of the connection; the registry knows the session. */
	CHECK_EQ(fx.srv.nr_conns, 0);
	REQUIRE(registry_find(&fx.reg, 2, sn->sid) != NULL);
	CHECK(!registry_find(&fx.reg, 2, sn->sid)->pending);
	CHECK(registry_has_cid(registry_find(&fx.reg, 2, sn->sid), 0));
	CHECK_EQ(fx.srv.logins, 1);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_reinstatement_replaces_the_old_session)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct kstate st;
	uint64_t old = make_sid(0x80123456789aull, 0x4242), new_sid;
	uint16_t cid = 0;
	size_t i, del_at = 0, new_at = 0;
	int fd, tsih;

	fx_init(&fx, CONF);
	REQUIRE(fake_add_session(1, old, INITIATOR, NULL, &cid, 1) == 0);
	kernel_dump(&st);
	registry_learn(&fx.reg, &st);
	kstate_free(&st);
	REQUIRE(registry_find(&fx.reg, 1, old) != NULL);

	fd = fx_connect(&fx);
	tsih = full_login(&fx, fd, TARGET1, NULL, 0, 0, &p);
	REQUIRE(tsih > 0);
	CHECK(tsih != 0x4242);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	new_sid = make_sid(0x80123456789aull, tsih);
	for (i = 0; i < fake_nr_calls(); i++) {
		const struct fake_call *c = fake_call(i);

		if (c->op == F_SESSION_DEL && c->sid == old)
			del_at = i + 1;
		if (c->op == F_SESSION_NEW && c->sid == new_sid)
			new_at = i + 1;
	}
	CHECK(del_at && new_at && del_at < new_at);
	CHECK(registry_find(&fx.reg, 1, old) == NULL);
	CHECK(registry_find(&fx.reg, 1, new_sid) != NULL);
	CHECK_EQ(fake_state()->targets[0].nr_sessions, 1);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_same_isid_from_another_initiator_is_not_reinstated)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct kstate st;
	uint64_t old = make_sid(0x80123456789aull, 0x4242);
	int fd;

	fx_init(&fx, CONF);
	REQUIRE(fake_add_session(1, old, "iqn.1993-08.org.debian:01:other",
				 NULL, NULL, 0) == 0);
	kernel_dump(&st);
	registry_learn(&fx.reg, &st);
	kstate_free(&st);
	fd = fx_connect(&fx);
	REQUIRE(full_login(&fx, fd, TARGET1, NULL, 0, 0, &p) > 0);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	CHECK_EQ(fake_count(F_SESSION_DEL), 0);
	CHECK(registry_find(&fx.reg, 1, old) != NULL);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_login_to_unknown_target_gets_class_2_detail_3_and_closes)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct login_req r;
	struct text t;
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR,
		"TargetName=iqn.2001-04.com.example:missing", NULL);
	REQUIRE(exchange(&fx, fd, &r, &t, &p) == 0);
	CHECK_EQ(p.lr.status, STATUS(2, 3));
	CHECK(peer_closed(&fx, fd));
	CHECK_EQ(fx.srv.nr_conns, 0);
	CHECK_EQ(fake_count(F_SESSION_NEW), 0);
	CHECK_EQ(fx.srv.failures, 1);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_added_connection_reaches_the_existing_session)
{
	struct fixture fx;
	struct rsp p = { 0 };
	uint32_t keys[IET_KEY_COUNT] = { 0 };
	struct kstate st;
	uint64_t sid = make_sid(0x80123456789aull, 0x77);
	uint16_t cid = 0;
	const struct fake_call *cn;
	int fd;

	fx_init(&fx, CONF);
	keys[IET_KEY_MAX_CONNECTIONS] = 2;
	keys[IET_KEY_MAX_BURST] = 65536;
	REQUIRE(fake_add_session(1, sid, INITIATOR, keys, &cid, 1) == 0);
	kernel_dump(&st);
	registry_learn(&fx.reg, &st);
	kstate_free(&st);
	fd = fx_connect(&fx);
	REQUIRE(full_login(&fx, fd, TARGET1, NULL, 0x77, 1, &p) == 0x77);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	CHECK_EQ(fake_count(F_SESSION_NEW), 0);
	cn = fake_last(F_CONN_NEW);
	CHECK_EQ(cn->sid, sid);
	CHECK_EQ(cn->cid, 1);
	CHECK_EQ(cn->keys[IET_KEY_MAX_BURST], 65536);
	CHECK(registry_has_cid(registry_find(&fx.reg, 1, sid), 1));
	/* Its reservation became the connection: two, not three. */
	CHECK_EQ(registry_conns(registry_find(&fx.reg, 1, sid)), 2);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_connection_with_a_live_cid_is_reinstated)
{
	struct fixture fx;
	struct rsp p = { 0 };
	uint32_t keys[IET_KEY_COUNT] = { 0 };
	struct kstate st;
	uint64_t sid = make_sid(0x80123456789aull, 0x77);
	uint16_t cid = 3;
	int fd;

	fx_init(&fx, CONF);
	keys[IET_KEY_MAX_CONNECTIONS] = 1;
	REQUIRE(fake_add_session(1, sid, INITIATOR, keys, &cid, 1) == 0);
	kernel_dump(&st);
	registry_learn(&fx.reg, &st);
	kstate_free(&st);
	fd = fx_connect(&fx);
	REQUIRE(full_login(&fx, fd, TARGET1, NULL, 0x77, 3, &p) == 0x77);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	REQUIRE(fake_last(F_CONN_DEL) != NULL);
	CHECK_EQ(fake_last(F_CONN_DEL)->cid, 3);
	CHECK_EQ(fake_last(F_CONN_NEW)->cid, 3);
	CHECK_EQ(fake_last(F_CONN_NEW)->ret, 0);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_kernel_refusing_the_connection_removes_the_new_session)
{
	struct fixture fx;
	struct rsp p = { 0 };
	int fd, tsih;

	fx_init(&fx, CONF);
	fake_fail(F_CONN_NEW, -EINVAL, "bad socket");
	fd = fx_connect(&fx);
	tsih = full_login(&fx, fd, TARGET1, NULL, 0, 0, &p);
	REQUIRE(tsih > 0);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	CHECK(peer_closed(&fx, fd));
	REQUIRE(fake_last(F_SESSION_DEL) != NULL);
	CHECK_EQ(fake_last(F_SESSION_DEL)->sid,
		 make_sid(0x80123456789aull, tsih));
	CHECK_EQ(fx.reg.nr, 0);
	CHECK_EQ(fx.srv.failures, 1);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

static bool session_new_called(void *arg)
{
	(void)arg;
	return fake_count(F_SESSION_NEW) > 0;
}

TEST(session_kernel_refusing_the_session_closes_the_connection)
{
	struct fixture fx;
	struct rsp p = { 0 };
	int fd;

	fx_init(&fx, CONF);
	fake_fail(F_SESSION_NEW, -ENOMEM, "no memory");
	fd = fx_connect(&fx);
	REQUIRE(full_login(&fx, fd, TARGET1, NULL, 0, 0, &p) > 0);
	REQUIRE(fx_run_until(&fx, session_new_called, NULL));
	CHECK(peer_closed(&fx, fd));
	CHECK_EQ(fake_count(F_CONN_NEW), 0);
	CHECK_EQ(fx.reg.nr, 0);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_stalled_login_times_out)
{
	struct fixture fx;
	struct login_req r;
	uint8_t bhs[BHS_LEN];
	int fd, i;

	fx_init(&fx, CONF);
	fx.srv.login_timeout_ms = 50;
	loop_set_tick(&fx.loop, 10, (void (*)(void *, uint64_t))server_tick,
		      &fx.srv);
	fd = fx_connect(&fx);
	/* Half a BHS, then silence. */
	login_req_init(&r, true, 0, 1);
	login_req_encode(&r, bhs);
	REQUIRE(send(fd, bhs, 20, 0) == 20);
	for (i = 0; i < 50 && fx.srv.nr_conns; i++)
		loop_run_once(&fx.loop, 10);
	CHECK_EQ(fx.srv.nr_conns, 0);
	CHECK(peer_closed(&fx, fd));
	close(fd);
	fx_free(&fx);
}

TEST(session_oversized_login_pdu_is_refused_without_reading_its_data)
{
	struct fixture fx;
	struct login_req r;
	uint8_t bhs[BHS_LEN], *data;
	size_t dlen;
	struct login_rsp lr;
	const char *why;
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	login_req_init(&r, true, 1, 3);
	r.dlength = 1 << 20;
	login_req_encode(&r, bhs);
	REQUIRE(send(fd, bhs, BHS_LEN, 0) == BHS_LEN);
	REQUIRE(recv_pdu(&fx, fd, bhs, &data, &dlen) == 0);
	login_rsp_decode(bhs, &lr, &why);
	CHECK_EQ(lr.status, LS_INIT_ERR);
	CHECK(peer_closed(&fx, fd));
	free(data);
	close(fd);
	fx_free(&fx);
}

TEST(session_garbage_first_pdu_drops_the_connection)
{
	struct fixture fx;
	uint8_t junk[BHS_LEN];
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	memset(junk, 'G', sizeof(junk));
	REQUIRE(send(fd, junk, sizeof(junk), 0) == sizeof(junk));
	CHECK(peer_closed(&fx, fd));
	CHECK_EQ(fx.srv.nr_conns, 0);
	close(fd);
	fx_free(&fx);
}

TEST(session_closed_event_frees_the_tsih)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct kevent ev = { .type = KEVENT_SESSION_CLOSED, .tid = 1 };
	int fd, tsih;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	tsih = full_login(&fx, fd, TARGET1, NULL, 0, 0, &p);
	REQUIRE(tsih > 0);
	REQUIRE(fx_run_until(&fx, handed_off, (void *)1));
	ev.sid = make_sid(0x80123456789aull, tsih);
	REQUIRE(registry_find(&fx.reg, 1, ev.sid) != NULL);
	registry_event(&fx.reg, &ev);
	CHECK(registry_find(&fx.reg, 1, ev.sid) == NULL);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

/* Discovery over the socket. */

static uint32_t cmdsn = 77;

static int disc_login(struct fixture *fx, int fd, const char *hd,
		      const char *dd, const char *mrdsl, struct rsp *p)
{
	struct login_req r;
	struct text t;

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery", hd,
		dd, mrdsl, NULL);
	if (exchange(fx, fd, &r, &t, p) || p->lr.status || !p->lr.transit)
		return -1;
	return 0;
}

/* A Text Request (kv may be NULL for an empty continuation) and its answer. */
static int text_exchange(struct fixture *fx, int fd, const char *kv,
			 uint32_t ttt, struct rsp *p, struct text_rsp *tr)
{
	struct text_req q = { .final = true, .itt = 0x55, .ttt = ttt,
			      .cmdsn = cmdsn++ };
	struct text t;
	uint8_t bhs[BHS_LEN];
	const char *why;

	t.len = 0;
	if (kv)
		text_of(&t, kv, NULL);
	q.dlength = t.len;
	text_req_encode(&q, bhs);
	if (send_pdu(fd, bhs, t.buf, t.len))
		return -1;
	free(p->data);
	p->data = NULL;
	if (recv_pdu(fx, fd, p->bhs, &p->data, &p->dlen))
		return -1;
	return text_rsp_decode(p->bhs, tr, &why);
}

TEST(session_discovery_send_targets_all_lists_every_target_with_its_portal)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct text_rsp tr;
	char addr[64];
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	REQUIRE(disc_login(&fx, fd, "HeaderDigest=None", "DataDigest=None",
			   "MaxRecvDataSegmentLength=65536", &p) == 0);
	CHECK(p.lr.tsih != 0);
	REQUIRE(text_exchange(&fx, fd, "SendTargets=All", RSVD_TAG, &p, &tr) == 0);
	CHECK(tr.final && !tr.cont);
	CHECK_EQ(tr.ttt, RSVD_TAG);
	CHECK_EQ(tr.itt, 0x55);
	CHECK_EQ(text_count(p.data, p.dlen, "TargetName"), 2);
	CHECK_EQ(text_count(p.data, p.dlen, "TargetAddress"), 2);
	CHECK_STR(text_get(p.data, p.dlen, "TargetName"), TARGET1);
	{
		struct sockaddr_in sin;
		socklen_t len = sizeof(sin);

		getsockname(fx.listen_fd, (struct sockaddr *)&sin, &len);
		snprintf(addr, sizeof(addr), "127.0.0.1:%u,1",
			 ntohs(sin.sin_port));
	}
	CHECK_STR(text_get(p.data, p.dlen, "TargetAddress"), addr);
	CHECK_EQ(fx.reg.nr, 1);		/* the discovery session's TSIH */

	REQUIRE(text_exchange(&fx, fd, "SendTargets=" TARGET2, RSVD_TAG, &p, &tr) == 0);
	CHECK_EQ(text_count(p.data, p.dlen, "TargetName"), 1);
	CHECK_STR(text_get(p.data, p.dlen, "TargetName"), TARGET2);

	REQUIRE(text_exchange(&fx, fd, "SendTargets=", RSVD_TAG, &p, &tr) == 0);
	CHECK_EQ(p.dlen, 0);
	free(p.data);
	close(fd);
	fx_run(&fx, 5);
	CHECK_EQ(fx.reg.nr, 0);		/* gone with the connection */
	fx_free(&fx);
}

TEST(session_discovery_long_answer_comes_in_pieces_of_the_initiators_size)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct text_rsp tr;
	char *conf = malloc(200 * 80);
	size_t len = 0, i, total = 0, pieces = 0;
	int fd;

	for (i = 0; i < 200; i++)
		len += sprintf(conf + len,
			       "Target iqn.2001-04.com.example:a-rather-long-target-name-%03zu\n",
			       i);
	fx_init(&fx, conf);
	free(conf);
	fd = fx_connect(&fx);
	REQUIRE(disc_login(&fx, fd, "HeaderDigest=None", "DataDigest=None",
			   "MaxRecvDataSegmentLength=4096", &p) == 0);
	REQUIRE(text_exchange(&fx, fd, "SendTargets=All", RSVD_TAG, &p, &tr) == 0);
	for (;;) {
		pieces++;
		CHECK(p.dlen <= 4096);
		total += p.dlen;
		if (tr.final)
			break;
		CHECK(tr.cont);
		CHECK(tr.ttt != RSVD_TAG);
		REQUIRE(pieces < 100);
		REQUIRE(text_exchange(&fx, fd, NULL, tr.ttt, &p, &tr) == 0);
	}
	CHECK(pieces > 3);
	CHECK(total > 200 * 60);
	CHECK_EQ(tr.ttt, RSVD_TAG);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_discovery_logout_is_answered_then_closed)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct logout_req q = { .immediate = true, .reason = 0, .itt = 9 };
	struct logout_rsp lr;
	uint8_t bhs[BHS_LEN], *data;
	size_t dlen;
	const char *why;
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	REQUIRE(disc_login(&fx, fd, "HeaderDigest=None", "DataDigest=None",
			   "MaxRecvDataSegmentLength=8192", &p) == 0);
	q.cmdsn = 77;
	logout_req_encode(&q, bhs);
	REQUIRE(send(fd, bhs, BHS_LEN, 0) == BHS_LEN);
	REQUIRE(recv_pdu(&fx, fd, bhs, &data, &dlen) == 0);
	REQUIRE(logout_rsp_decode(bhs, &lr, &why) == 0);
	CHECK_EQ(lr.response, LOGOUT_OK);
	CHECK_EQ(lr.itt, 9);
	CHECK_EQ(lr.statsn, p.lr.statsn + 1);
	CHECK(peer_closed(&fx, fd));
	free(data);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_discovery_with_digests_checks_and_sends_crc32c)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct text_req q = { .final = true, .itt = 0x55, .ttt = RSVD_TAG,
			      .cmdsn = 77 };
	struct text t;
	uint8_t buf[512], rsp[BHS_LEN + 4];
	size_t len, pad;
	uint32_t dl;
	ssize_t n;
	int fd, i;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	REQUIRE(disc_login(&fx, fd, "HeaderDigest=CRC32C", "DataDigest=CRC32C",
			   "MaxRecvDataSegmentLength=8192", &p) == 0);
	CHECK_STR(text_get(p.data, p.dlen, "HeaderDigest"), "CRC32C");
	text_of(&t, "SendTargets=All", NULL);
	q.dlength = t.len;
	text_req_encode(&q, buf);
	crc32c_put(buf + BHS_LEN, crc32c(buf, BHS_LEN));
	len = BHS_LEN + 4;
	memcpy(buf + len, t.buf, t.len);
	pad = pdu_pad(t.len);
	memset(buf + len + t.len, 0, pad);
	crc32c_put(buf + len + t.len + pad, crc32c(buf + len, t.len + pad));
	len += t.len + pad + 4;
	REQUIRE(send(fd, buf, len, 0) == (ssize_t)len);
	/* Header and its digest, then data, pad and its digest. */
	for (i = 0, len = 0; i < 200 && len < sizeof(rsp); i++) {
		n = recv(fd, rsp + len, sizeof(rsp) - len, MSG_DONTWAIT);
		if (n > 0)
			len += n;
		else
			loop_run_once(&fx.loop, 5);
	}
	REQUIRE_EQ(len, sizeof(rsp));
	CHECK_EQ(rsp[0], OP_TEXT_RSP);
	CHECK_EQ(crc32c_get(rsp + BHS_LEN), crc32c(rsp, BHS_LEN));
	dl = (uint32_t)rsp[5] << 16 | rsp[6] << 8 | rsp[7];
	REQUIRE(dl > 0 && dl + pdu_pad(dl) + 4 <= sizeof(buf));
	for (i = 0, len = 0; i < 200 && len < dl + pdu_pad(dl) + 4; i++) {
		n = recv(fd, buf + len, dl + pdu_pad(dl) + 4 - len,
			 MSG_DONTWAIT);
		if (n > 0)
			len += n;
		else
			loop_run_once(&fx.loop, 5);
	}
	REQUIRE_EQ(len, dl + pdu_pad(dl) + 4);
	CHECK_EQ(crc32c_get(buf + dl + pdu_pad(dl)),
		 crc32c(buf, dl + pdu_pad(dl)));
	CHECK_STR(text_get(buf, dl, "TargetName"), TARGET1);
	free(p.data);
	close(fd);
	fx_free(&fx);
}

TEST(session_discovery_header_digest_error_closes_the_connection)
{
	struct fixture fx;
	struct rsp p = { 0 };
	struct nop_out q = { .immediate = true, .itt = 1, .ttt = RSVD_TAG };
	uint8_t buf[BHS_LEN + 4];
	int fd;

	fx_init(&fx, CONF);
	fd = fx_connect(&fx);
	REQUIRE(disc_login(&fx, fd, "HeaderDigest=CRC32C", "DataDigest=None",
			   "MaxRecvDataSegmentLength=8192", &p) == 0);
	nop_out_encode(&q, buf);
	crc32c_put(buf + BHS_LEN, crc32c(buf, BHS_LEN) ^ 1);
	REQUIRE(send(fd, buf, sizeof(buf), 0) == sizeof(buf));
	CHECK(peer_closed(&fx, fd));
	free(p.data);
	close(fd);
	fx_free(&fx);
}
