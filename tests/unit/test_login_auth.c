// SPDX-License-Identifier: GPL-2.0
/*
 * Login security: CHAP in the security stage (one-way, mutual, discovery),
 * the access files, redirects, and logins that outlive a reload.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "chap.h"
#include "helpers.h"
#include "login.h"
#include "params.h"
#include "test.h"

#define IN_SECRET	"initiatorsecret"
#define OUT_SECRET	"targetsecret99"
#define CHAP_CONF	"Target " TARGET1 "\n IncomingUser joe " IN_SECRET "\n" \
			" OutgoingUser tgt " OUT_SECRET "\n Lun 0 Type=nullio\n" \
			"Target " TARGET2 "\n"

/* The operational keys open-iscsi sends, all at once. */
#define OPEN_ISCSI_KEYS							\
	"HeaderDigest=None", "DataDigest=None", "DefaultTime2Wait=2",	\
	"DefaultTime2Retain=0", "IFMarker=No", "OFMarker=No",		\
	"ErrorRecoveryLevel=0", "InitialR2T=No", "ImmediateData=Yes",	\
	"MaxBurstLength=16776192", "FirstBurstLength=262144",		\
	"MaxOutstandingR2T=1", "MaxConnections=1", "DataPDUInOrder=Yes", \
	"DataSequenceInOrder=Yes", "MaxRecvDataSegmentLength=262144"

struct lfx {
	struct config cfg;
	struct registry reg;
	struct login *l;
	struct pdu_out out;
	struct login_rsp rsp;
	struct sockaddr_storage peer, local;
};

static uint8_t next_byte;

static int fake_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = next_byte++;
	return 0;
}

static void sa(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	inet_pton(AF_INET, ip, &s4->sin_addr);
}

static void lf_init_dirs(struct lfx *f, const char *conf, const char *dirs)
{
	struct login_env env = { 0 };

	memset(f, 0, sizeof(*f));
	config_of(&f->cfg, conf);
	registry_init(&f->reg);
	sa(&f->peer, "192.0.2.10", 40000);
	sa(&f->local, "192.0.2.1", 3260);
	env.cfg = &f->cfg;
	env.reg = &f->reg;
	env.peer = &f->peer;
	env.local = &f->local;
	env.access_dirs = dirs;
	env.rnd = fake_random;
	next_byte = 0;
	f->l = login_new(&env, 500);
}

static void lf_init(struct lfx *f, const char *conf)
{
	lf_init_dirs(f, conf, NULL);
}

static void lf_free(struct lfx *f)
{
	login_free(f->l);
	registry_free(&f->reg);
	config_free(&f->cfg);
}

static enum login_result step(struct lfx *f, bool transit, uint8_t csg,
			      uint8_t nsg, const struct text *t)
{
	struct login_req r;
	const char *why;
	uint8_t bhs[BHS_LEN];
	enum login_result res;

	login_req_init(&r, transit, csg, nsg);
	login_bhs(&r, t, bhs);
	res = login_pdu(f->l, bhs, t ? (const uint8_t *)t->buf : NULL,
			t ? t->len : 0, &f->out);
	if (res != LOGIN_DROP)
		login_rsp_decode(f->out.bhs, &f->rsp, &why);
	return res;
}

static const char *rkey(const struct lfx *f, const char *key)
{
	return text_get(f->out.data, f->out.dlen, key);
}

/* Security stage up to the challenge; returns the CHAP_I sent. */
static int challenged(struct lfx *f, const char *target, const char *algs)
{
	struct text t;
	char tn[300], a[64];

	if (target)
		snprintf(tn, sizeof(tn), "TargetName=%s", target);
	else
		snprintf(tn, sizeof(tn), "SessionType=Discovery");
	text_of(&t, "InitiatorName=" INITIATOR, tn, "AuthMethod=CHAP,None",
		NULL);
	if (step(f, false, STAGE_SECURITY, 0, &t) != LOGIN_CONTINUE ||
	    !rkey(f, "AuthMethod") || strcmp(rkey(f, "AuthMethod"), "CHAP"))
		return -1;
	snprintf(a, sizeof(a), "CHAP_A=%s", algs);
	text_of(&t, a, NULL);
	if (step(f, false, STAGE_SECURITY, 0, &t) != LOGIN_CONTINUE ||
	    !rkey(f, "CHAP_I"))
		return -1;
	return atoi(rkey(f, "CHAP_I"));
}

/* The initiator's CHAP_R for the challenge in the last response. */
static void response(struct lfx *f, const char *secret, char *hex, size_t len)
{
	const struct chap_alg *a = chap_alg_by_id(atoi(rkey(f, "CHAP_A")));
	uint8_t c[CHAP_CHALLENGE_MAX], d[CHAP_DIGEST_MAX];
	size_t clen;

	chap_decode(rkey(f, "CHAP_C"), c, sizeof(c), &clen);
	chap_digest(a, atoi(rkey(f, "CHAP_I")), secret, c, clen, d);
	chap_encode(d, a->len, hex, len);
}

static enum login_result answer(struct lfx *f, const char *user,
				const char *secret, bool mutual)
{
	char r[2 * CHAP_DIGEST_MAX + 16], n[300];
	struct text t;

	strcpy(r, "CHAP_R=");
	response(f, secret, r + 7, sizeof(r) - 7);
	snprintf(n, sizeof(n), "CHAP_N=%s", user);
	if (mutual)
		text_of(&t, n, r, "CHAP_I=77", "CHAP_C=0xdeadbeefcafe0102", NULL);
	else
		text_of(&t, n, r, NULL);
	return step(f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t);
}

TEST(login_chap_required_refuses_auth_method_none)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	CHECK_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		 LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	CHECK_STR(rkey(&f, "AuthMethod"), "Reject");
	CHECK_CONTAINS(login_error(f.l), "requires CHAP");
	lf_free(&f);
}

TEST(login_chap_required_refuses_skipping_the_security_stage)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, true, STAGE_OPERATIONAL, STAGE_FFP, &t),
		 LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	lf_free(&f);
}

TEST(login_chap_required_refuses_leaving_without_auth_method)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1, NULL);
	CHECK_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		 LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	lf_free(&f);
}

TEST(login_chap_one_way_succeeds_and_leaves_the_security_stage)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	REQUIRE(challenged(&f, TARGET1, "7,5") >= 0);
	CHECK_STR(rkey(&f, "CHAP_A"), "7");
	CHECK_EQ(strlen(rkey(&f, "CHAP_C")), 2 + 64);
	CHECK(!f.rsp.transit);
	REQUIRE_EQ(answer(&f, "joe", IN_SECRET, false), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	CHECK(f.rsp.transit);
	CHECK_EQ(f.rsp.nsg, STAGE_OPERATIONAL);
	CHECK(rkey(&f, "CHAP_R") == NULL);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(step(&f, true, STAGE_OPERATIONAL, STAGE_FFP, &t), LOGIN_DONE);
	CHECK_STR(login_auth_info(f.l), "CHAP SHA-256 user joe");
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

/*
 * An account that names its initiators admits those names only: another
 * host's account holder cannot log in as this one (and end its session,
 * or take its reservation registration).
 */
TEST(login_chap_account_logs_in_only_as_the_initiators_it_names)
{
	struct lfx f;

	lf_init(&f, "Target " TARGET1 "\n IncomingUser joe " IN_SECRET
		" iqn.2001-04.com.example:joes-host\n"
		" IncomingUser ann ann-secret-0001 " INITIATOR "\n");
	REQUIRE(challenged(&f, TARGET1, "5") >= 0);
	CHECK_EQ(answer(&f, "joe", IN_SECRET, false), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTHZ_FAILED);
	CHECK_CONTAINS(login_error(f.l), "joe may not log in as " INITIATOR);
	lf_free(&f);

	lf_init(&f, "Target " TARGET1 "\n IncomingUser joe " IN_SECRET
		" iqn.2001-04.com.example:joes-host\n"
		" IncomingUser ann ann-secret-0001 " INITIATOR "\n");
	REQUIRE(challenged(&f, TARGET1, "5") >= 0);
	CHECK_EQ(answer(&f, "ann", "ann-secret-0001", false), LOGIN_CONTINUE);
	CHECK_EQ(f.rsp.status, LS_SUCCESS);
	lf_free(&f);
}

TEST(login_chap_wrong_secret_fails_authentication)
{
	struct lfx f;

	lf_init(&f, CHAP_CONF);
	REQUIRE(challenged(&f, TARGET1, "5") >= 0);
	CHECK_EQ(answer(&f, "joe", "not-the-secret", false), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	CHECK_CONTAINS(login_error(f.l), "wrong CHAP response for user joe");
	CHECK(!strstr(login_error(f.l), IN_SECRET));
	lf_free(&f);
}

TEST(login_chap_unknown_user_fails_authentication)
{
	struct lfx f;

	lf_init(&f, CHAP_CONF);
	REQUIRE(challenged(&f, TARGET1, "6") >= 0);
	CHECK_EQ(answer(&f, "tgt", OUT_SECRET, false), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	lf_free(&f);
}

TEST(login_chap_mutual_answers_with_the_targets_response)
{
	const struct chap_alg *a = chap_alg_by_id(CHAP_SHA3_256);
	static const uint8_t theirs[] = { 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe,
					  1, 2 };
	char want[2 * CHAP_DIGEST_MAX + 3];
	uint8_t d[CHAP_DIGEST_MAX];
	struct lfx f;

	lf_init(&f, CHAP_CONF);
	REQUIRE(challenged(&f, TARGET1, "8") >= 0);
	REQUIRE_EQ(answer(&f, "joe", IN_SECRET, true), LOGIN_CONTINUE);
	CHECK(f.rsp.transit);
	CHECK_STR(rkey(&f, "CHAP_N"), "tgt");
	chap_digest(a, 77, OUT_SECRET, theirs, sizeof(theirs), d);
	chap_encode(d, a->len, want, sizeof(want));
	CHECK_STR(rkey(&f, "CHAP_R"), want);
	CHECK_CONTAINS(login_auth_info(f.l), "mutual");
	lf_free(&f);
}

TEST(login_chap_does_not_transit_before_the_response)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=CHAP", NULL);
	REQUIRE_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		   LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "AuthMethod"), "CHAP");
	CHECK(!f.rsp.transit);
	lf_free(&f);
}

TEST(login_chap_algorithm_not_allowed_is_rejected)
{
	struct lfx f;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n IncomingUser joe " IN_SECRET
		"\n CHAPAlgorithms 8\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=CHAP", NULL);
	REQUIRE_EQ(step(&f, false, STAGE_SECURITY, 0, &t), LOGIN_CONTINUE);
	text_of(&t, "CHAP_A=5,7", NULL);
	CHECK_EQ(step(&f, false, STAGE_SECURITY, 0, &t), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTH_FAILED);
	CHECK_STR(rkey(&f, "CHAP_A"), "Reject");
	lf_free(&f);
}

TEST(login_target_without_accounts_accepts_none)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET2,
		"AuthMethod=CHAP,None", NULL);
	REQUIRE_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		   LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "AuthMethod"), "None");
	CHECK(f.rsp.transit);
	lf_free(&f);
}

TEST(login_discovery_is_guarded_by_the_global_accounts)
{
	struct lfx f;

	lf_init(&f, "IncomingUser disc " IN_SECRET "\n" CHAP_CONF);
	REQUIRE(challenged(&f, NULL, "7") >= 0);
	CHECK_EQ(answer(&f, "joe", IN_SECRET, false), LOGIN_FAILED);
	lf_free(&f);

	lf_init(&f, "IncomingUser disc " IN_SECRET "\n" CHAP_CONF);
	REQUIRE(challenged(&f, NULL, "7") >= 0);
	CHECK_EQ(answer(&f, "disc", IN_SECRET, false), LOGIN_CONTINUE);
	CHECK(f.rsp.transit);
	lf_free(&f);
}

TEST(login_discovery_without_global_accounts_needs_no_chap)
{
	struct lfx f;
	struct text t;

	/* Target accounts do not guard discovery. */
	lf_init(&f, CHAP_CONF);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery",
		"AuthMethod=None", NULL);
	REQUIRE_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		   LOGIN_CONTINUE);
	CHECK_STR(rkey(&f, "AuthMethod"), "None");
	lf_free(&f);
}

TEST(login_survives_a_reload_in_the_middle)
{
	struct lfx f;
	struct text t;

	lf_init(&f, CHAP_CONF);
	REQUIRE(challenged(&f, TARGET1, "7") >= 0);
	/* A reload replaces the whole model: the login keeps its copies. */
	config_free(&f.cfg);
	config_of(&f.cfg, "Target " TARGET2 "\n");
	REQUIRE_EQ(answer(&f, "joe", IN_SECRET, false), LOGIN_CONTINUE);
	text_of(&t, OPEN_ISCSI_KEYS, NULL);
	REQUIRE_EQ(step(&f, true, STAGE_OPERATIONAL, STAGE_FFP, &t), LOGIN_DONE);
	CHECK_EQ(login_outcome(f.l)->tid, 1);
	registry_drop(&f.reg, login_outcome(f.l)->reserved);
	lf_free(&f);
}

TEST(login_redirect_answers_target_moved_temporarily)
{
	struct lfx f;
	struct text t;

	lf_init(&f, "Target " TARGET1 "\n Redirect 198.51.100.9:3261\n");
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	CHECK_EQ(step(&f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t),
		 LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_MOVED_TEMP);
	CHECK_STR(rkey(&f, "TargetAddress"), "198.51.100.9:3261,1");
	lf_free(&f);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

static enum login_result first(struct lfx *f, const char *target)
{
	struct text t;
	char tn[300];

	snprintf(tn, sizeof(tn), "TargetName=%s", target);
	text_of(&t, "InitiatorName=" INITIATOR, tn, "AuthMethod=None", NULL);
	return step(f, true, STAGE_SECURITY, STAGE_OPERATIONAL, &t);
}

TEST(login_access_files_are_read_at_every_login)
{
	char dir[] = "/tmp/iet-login-acl-XXXXXX", cmd[64];
	struct lfx f;

	REQUIRE(mkdtemp(dir));
	lf_init_dirs(&f, CHAP_CONF, dir);
	CHECK_EQ(first(&f, TARGET2), LOGIN_CONTINUE);
	lf_free(&f);

	put(dir, ACL_ALLOW, TARGET2 " iqn.1991-05.com.microsoft:.*\n");
	lf_init_dirs(&f, CHAP_CONF, dir);
	CHECK_EQ(first(&f, TARGET2), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_AUTHZ_FAILED);
	CHECK_CONTAINS(login_error(f.l), "initiators.allow");
	lf_free(&f);

	put(dir, ACL_ALLOW, TARGET2 " 192.0.2.0/24\n");
	lf_init_dirs(&f, CHAP_CONF, dir);
	CHECK_EQ(first(&f, TARGET2), LOGIN_CONTINUE);
	lf_free(&f);

	put(dir, ACL_TARGETS, TARGET2 " 203.0.113.1\nALL ALL\n");
	lf_init_dirs(&f, CHAP_CONF, dir);
	CHECK_EQ(first(&f, TARGET2), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_NOT_FOUND);
	lf_free(&f);

	put(dir, ACL_TARGETS, "ALL 999.0.0.1\n");
	lf_init_dirs(&f, CHAP_CONF, dir);
	CHECK_EQ(first(&f, TARGET2), LOGIN_FAILED);
	CHECK_EQ(f.rsp.status, LS_TARGET_ERR);
	CHECK_CONTAINS(login_error(f.l), "targets.allow:1:");
	lf_free(&f);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}
