// SPDX-License-Identifier: GPL-2.0
/*
 * A target found in the kernel that neither the configuration nor the
 * state file describes: its CHAP accounts are unknown, so it is refused
 * (not served open) until it is configured again.
 */
#include <stdlib.h>
#include <unistd.h>

#include "ctl.h"
#include "discovery.h"
#include "helpers.h"
#include "kernel_fake.h"
#include "test.h"

#define OTHER	"iqn.2001-04.com.example:from-before"
#define CONF	"Target " TARGET1 "\n Lun 0 Type=nullio\n"

static char err[512];

/*
 * ietd starts (without a state file) on a kernel that already runs OTHER:
 * as after a restart whose state file was lost. OTHER gets tid 5.
 */
static void restart_with_other(struct fixture *fx)
{
	uint32_t tid = 5, tp[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };

	fake_reset();
	if (kernel_open())
		abort();
	tp[IET_TP_WTHREADS] = 1;
	tp[IET_TP_QUEUED_CMDS] = 32;
	k[IET_KEY_MAX_CONNECTIONS] = 1;
	k[IET_KEY_MAX_RECV_DSL] = 8192;
	k[IET_KEY_MAX_XMIT_DSL] = 8192;
	k[IET_KEY_MAX_BURST] = 262144;
	k[IET_KEY_FIRST_BURST] = 65536;
	k[IET_KEY_MAX_OUTSTANDING_R2T] = 1;
	k[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_NONE;
	k[IET_KEY_DATA_DIGEST] = DIGEST_MASK_NONE;
	if (kernel_target_new(&tid, OTHER, tp, k))
		abort();
	fx_init_on_kernel(fx, CONF);
}

/* A login without CHAP to target, in one request; its status. */
static int login_status(struct fixture *fx, const char *target)
{
	struct login_req r;
	struct login_rsp lr;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	char tn[300];
	const char *why;
	size_t dlen;
	int fd, status = -1;

	snprintf(tn, sizeof(tn), "TargetName=%s", target);
	fd = fx_connect(fx);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, tn, "AuthMethod=None", NULL);
	login_bhs(&r, &t, bhs);
	if (!send_pdu(fd, bhs, t.buf, t.len) &&
	    !recv_pdu(fx, fd, bhs, &data, &dlen) &&
	    !login_rsp_decode(bhs, &lr, &why))
		status = lr.status;
	free(data);
	close(fd);
	return status;
}

TEST(unknown_target_in_the_kernel_refuses_logins_as_unavailable)
{
	struct fixture fx;
	const struct target_conf *t;

	restart_with_other(&fx);
	t = config_target_by_name(&fx.rt.cfg, OTHER);
	REQUIRE(t != NULL);
	CHECK_EQ(t->origin, ORIGIN_KERNEL);
	/* Its accounts may have been lost: no login without them. */
	CHECK_EQ(login_status(&fx, OTHER), LS_UNAVAILABLE);
	CHECK_EQ(fake_count(F_SESSION_NEW), 0);
	/* The configured target is served as ever. */
	CHECK_EQ(login_status(&fx, TARGET1), LS_SUCCESS);
	fx_free(&fx);
}

TEST(unknown_target_refusal_says_why_and_how_to_fix_it)
{
	struct fixture fx;
	struct login_env env = { 0 };
	struct login_req r;
	struct login *l;
	struct pdu_out out;
	struct text t;
	uint8_t bhs[BHS_LEN];

	restart_with_other(&fx);
	env.cfg = &fx.rt.cfg;
	env.reg = &fx.reg;
	l = login_new(&env, 1);
	login_req_init(&r, true, STAGE_SECURITY, STAGE_OPERATIONAL);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" OTHER,
		"AuthMethod=None", NULL);
	login_bhs(&r, &t, bhs);
	CHECK_EQ(login_pdu(l, bhs, (const uint8_t *)t.buf, t.len, &out),
		 LOGIN_FAILED);
	CHECK_CONTAINS(login_error(l), "CHAP accounts are unknown");
	CHECK_CONTAINS(login_error(l), "configure it again");
	login_free(l);
	fx_free(&fx);
}

TEST(unknown_target_is_not_offered_by_discovery)
{
	struct fixture fx;
	struct sockaddr_storage peer = { .ss_family = AF_INET };
	struct sockaddr_storage local = { .ss_family = AF_INET };
	struct st_who who = { INITIATOR, &peer, &local, NULL };
	struct textbuf tb;

	restart_with_other(&fx);
	textbuf_init(&tb, 65536);
	REQUIRE(sendtargets(&fx.rt.cfg, "All", &who, &tb, err,
			    sizeof(err)) == 0);
	textbuf_append(&tb, "", 1);
	CHECK(text_get(tb.buf, tb.len, "TargetName") != NULL);
	CHECK_STR(text_get(tb.buf, tb.len, "TargetName"), TARGET1);
	CHECK_EQ(text_count(tb.buf, tb.len, "TargetName"), 1);
	textbuf_free(&tb);
	fx_free(&fx);
}

TEST(unknown_target_is_served_again_once_the_configuration_has_it)
{
	char path[] = "/tmp/ietd-unknown-XXXXXX";
	static const char conf[] = CONF "Target " OTHER "\n IncomingUser joe secretsecret12\n";
	struct fixture fx;
	struct textbuf out;
	int fd;

	restart_with_other(&fx);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, conf, strlen(conf)) == (ssize_t)strlen(conf));
	close(fd);
	fx.rt.config_path = path;
	textbuf_init(&out, 65536);
	REQUIRE(runtime_reload(&fx.rt, false, &out, err, sizeof(err)) == 0);
	textbuf_free(&out);
	unlink(path);
	CHECK_EQ(config_target_by_name(&fx.rt.cfg, OTHER)->origin, ORIGIN_FILE);
	/* Served, with the accounts the file gives it: CHAP required. */
	CHECK_EQ(login_status(&fx, OTHER), LS_AUTH_FAILED);
	fx_free(&fx);
}

/* ietadm --op new --tid=5 --user --params=PARAMS, which must succeed. */
static void ietadm_new_user(struct fixture *fx, const char *params)
{
	struct textbuf out;
	struct ctl_req req = { .fields = CTL_F_TID | CTL_F_USER | CTL_F_PARAMS,
			       .tid = 5 };

	strcpy(req.op, "new");
	strcpy(req.params, params);
	textbuf_init(&out, 65536);
	REQUIRE(ctl_handle(&fx->rt, &req, &out, err, sizeof(err)) == 0);
	textbuf_free(&out);
}

TEST(unknown_target_is_served_again_once_ietadm_gives_it_an_account)
{
	struct fixture fx;

	restart_with_other(&fx);
	ietadm_new_user(&fx, "IncomingUser=joe,Password=secretsecret12");
	CHECK_EQ(config_target_by_tid(&fx.rt.cfg, 5)->origin, ORIGIN_ADMIN);
	CHECK_EQ(login_status(&fx, OTHER), LS_AUTH_FAILED);
	fx_free(&fx);
}

TEST(unknown_target_stays_refused_when_ietadm_adds_only_an_outgoing_user)
{
	struct fixture fx;

	restart_with_other(&fx);
	ietadm_new_user(&fx, "OutgoingUser=tgt,Password=secretsecret12");
	CHECK_EQ(config_target_by_tid(&fx.rt.cfg, 5)->origin, ORIGIN_KERNEL);
	CHECK_EQ(login_status(&fx, OTHER), LS_UNAVAILABLE);
	fx_free(&fx);
}
