// SPDX-License-Identifier: GPL-2.0
/*
 * ietadm's operations inside ietd, on the fake kernel: every row of
 * COMPAT.md's table, what goes beyond it (names, JSON, counters, reload,
 * save), and that a refusal or a kernel failure changes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "ctl_ops.h"
#include "helpers.h"
#include "kernel_fake.h"
#include "logout.h"
#include "metrics_file.h"
#include "state.h"
#include "test.h"

/* Requests are written as (struct rq){ "op", fields, tid, ... }. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define CONF	"Target " TARGET1 "\n Lun 0 Type=nullio\n"
#define NEWT	"iqn.2001-04.com.example:agent"

static char err[1024];

struct ofx {
	struct fixture fx;
	struct textbuf out;
	char dir[64];
};

static void of_init(struct ofx *f, const char *conf)
{
	char path[128];
	int fd;

	fx_init(&f->fx, conf);
	textbuf_init(&f->out, 1 << 20);
	strcpy(f->dir, "/tmp/iet-ops-XXXXXX");
	if (!mkdtemp(f->dir))
		abort();
	/* The configuration file a reload reads, and a state file. */
	snprintf(path, sizeof(path), "%s/ietd.conf", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, conf, strlen(conf)) != (ssize_t)strlen(conf))
		abort();
	close(fd);
	f->fx.rt.config_path = strdup(path);
	snprintf(path, sizeof(path), "%s/%s", f->dir, STATE_NAME);
	if (state_open(&f->fx.rt.state, path, err, sizeof(err)))
		abort();
}

static void of_free(struct ofx *f)
{
	char cmd[128];

	state_close(&f->fx.rt.state);
	free((char *)f->fx.rt.config_path);
	textbuf_free(&f->out);
	fx_free(&f->fx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd))
		abort();
}

static void rewrite_conf(struct ofx *f, const char *conf)
{
	int fd = open(f->fx.rt.config_path, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, conf, strlen(conf)) != (ssize_t)strlen(conf))
		abort();
	close(fd);
}

/* One request: "op", fields, and the values they need. */
struct rq {
	const char *op;
	uint32_t fields;
	uint32_t tid;
	uint64_t sid;
	uint32_t cid, lun;
	const char *params, *redirect, *target;
};

static int op(struct ofx *f, struct rq q)
{
	struct ctl_req r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.version = CTL_VERSION;
	strcpy(r.op, q.op);
	r.fields = q.fields;
	r.tid = q.tid;
	r.sid = q.sid;
	r.cid = q.cid;
	r.lun = q.lun;
	if (q.params) {
		strcpy(r.params, q.params);
		r.fields |= CTL_F_PARAMS;
	}
	if (q.redirect) {
		strcpy(r.redirect, q.redirect);
		r.fields |= CTL_F_REDIRECT;
	}
	if (q.target) {
		strcpy(r.target, q.target);
		r.fields |= CTL_F_TARGET;
	}
	textbuf_reset(&f->out);
	err[0] = '\0';
	ret = ctl_handle(&f->fx.rt, &r, &f->out, err, sizeof(err));
	textbuf_append(&f->out, "", 1);
	return ret;
}


/* ---------------------------------------------------------------- targets */

TEST(ops_new_target_with_a_tid_or_the_next_free_one)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 5,
			.params = "Name=" NEWT }) == 0);
	CHECK_STR(f.out.buf, "");
	REQUIRE(fake_target(5) != NULL);
	CHECK_STR(fake_target(5)->name, NEWT);
	CHECK_EQ(config_target_by_tid(&f.fx.rt.cfg, 5)->origin, ORIGIN_ADMIN);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT "2,Wthreads=2" }) == 0);
	CHECK_STR(f.out.buf, "tid=6\n");
	CHECK_EQ(fake_target(6)->tparams[IET_TP_WTHREADS], 2);
	of_free(&f);
}

TEST(ops_new_target_refusals_change_nothing)
{
	struct ofx f;
	size_t calls;

	of_init(&f, CONF);
	calls = fake_count(F_TARGET_NEW);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 2 }), -EINVAL);
	CHECK_CONTAINS(err, "needs --params Name=IQN");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 2,
				     .params = "Name=disk" }), -EINVAL);
	CHECK_CONTAINS(err, "Name: ");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 2,
				     .params = "Name=" TARGET1 }), -EEXIST);
	CHECK_CONTAINS(err, "exists as tid 1");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 1,
				     .params = "Name=" NEWT }), -EEXIST);
	CHECK_CONTAINS(err, "tid 1 is in use");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 2,
				     .params = "Name=" NEWT ",Frob=1" }), -EINVAL);
	CHECK_CONTAINS(err, "Frob: not a target parameter");
	CHECK_EQ(fake_count(F_TARGET_NEW), calls);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	of_free(&f);
}

TEST(ops_delete_target_refused_while_it_has_sessions)
{
	struct ofx f;
	uint16_t cid = 3;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID, 1 }), -EBUSY);
	CHECK_CONTAINS(err, "has 1 session");
	CHECK_CONTAINS(err, "--sid=");
	CHECK_CONTAINS(err, "--cid=3");
	CHECK(fake_target(1) != NULL);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	of_free(&f);
}

TEST(ops_delete_target_and_missing_target)
{
	struct ofx f;

	of_init(&f, CONF);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID, 9 }), -ENOENT);
	CHECK_STR(err, "no target with tid 9");
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID, 1 }) == 0);
	CHECK(fake_target(1) == NULL);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 0);
	of_free(&f);
}

TEST(ops_targets_by_name_as_well_as_by_tid)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "show", .target = TARGET1 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Wthreads=8\n");
	CHECK_EQ(op(&f, (struct rq){ "show", .target = NEWT }), -ENOENT);
	CHECK_STR(err, "no target named " NEWT);
	REQUIRE(op(&f, (struct rq){ "update", .target = TARGET1,
			.params = "MaxSessions=2" }) == 0);
	CHECK_EQ(f.fx.rt.cfg.targets[0].max_sessions, 2);
	of_free(&f);
}

TEST(ops_update_sets_parameters_for_new_sessions)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "MaxRecvDataSegmentLength=65536,"
				  "HeaderDigest=None,CRC32C,Wthreads=3,"
				  "Alias=first disk" }) == 0);
	CHECK_EQ(fake_target(1)->keys[IET_KEY_MAX_RECV_DSL], 65536);
	CHECK_EQ(fake_target(1)->keys[IET_KEY_HEADER_DIGEST],
		 DIGEST_MASK_NONE | DIGEST_MASK_CRC32C);
	CHECK_EQ(fake_target(1)->tparams[IET_TP_WTHREADS], 3);
	CHECK_EQ(f.fx.rt.cfg.targets[0].keys[IET_KEY_MAX_RECV_DSL], 65536);
	CHECK_STR(f.fx.rt.cfg.targets[0].alias, "first disk");
	of_free(&f);
}

TEST(ops_update_refusals_and_kernel_failures_change_nothing)
{
	struct ofx f;

	of_init(&f, CONF);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
				     .params = "MaxBurstLength=4096,Bogus=1" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "Bogus: not a target parameter");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
				     .params = "FirstBurstLength=524288" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "exceeds MaxBurstLength");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
				     .params = "InitialR2T=Maybe" }), -EINVAL);
	CHECK_CONTAINS(err, "InitialR2T: ");
	fake_fail(F_TARGET_SET, -EINVAL, "no such thing");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
				     .params = "MaxBurstLength=65536" }), -EINVAL);
	CHECK_CONTAINS(err, "no such thing");
	CHECK_EQ(f.fx.rt.cfg.targets[0].keys[IET_KEY_MAX_BURST], 262144);
	CHECK_EQ(fake_target(1)->keys[IET_KEY_MAX_BURST], 262144);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1 }), -EINVAL);
	of_free(&f);
}

TEST(ops_update_redirect_sets_normalizes_and_clears)
{
	struct ofx f;
	size_t sets;

	of_init(&f, CONF);
	sets = fake_count(F_TARGET_SET);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.redirect = "192.0.2.44" }) == 0);
	CHECK_STR(f.fx.rt.cfg.targets[0].redirect, "192.0.2.44:3260");
	/* ietd's own: the kernel is not involved. */
	CHECK_EQ(fake_count(F_TARGET_SET), sets);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
				     .redirect = "192.0.2.44:0" }), -EINVAL);
	CHECK_STR(f.fx.rt.cfg.targets[0].redirect, "192.0.2.44:3260");
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.redirect = "" }) == 0);
	CHECK_STR(f.fx.rt.cfg.targets[0].redirect, "");
	of_free(&f);
}

/* ---------------------------------------------------------------- LUNs */

TEST(ops_new_lun_as_a_cluster_agent_asks_for_it)
{
	struct ofx f;
	const struct fake_call *c;

	of_init(&f, CONF);
	/* The agent's list: Type=blockio for a device, a trailing comma. */
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 2,
			.params = "Path=/dev/null,Type=blockio,ScsiId=vol2,"
				  "ScsiSN=sn2," }) == 0);
	c = fake_last(F_LUN_NEW);
	CHECK_EQ(c->tid, 1);
	CHECK_EQ(c->lun.lun, 2);
	CHECK_EQ(c->lun.type, IET_LUN_BLOCKIO);
	CHECK_STR(c->lun.path, "/dev/null");
	CHECK_STR(c->lun.scsi_id, "vol2");
	CHECK_STR(c->lun.scsi_sn, "sn2");
	REQUIRE(target_lun(&f.fx.rt.cfg.targets[0], 2) != NULL);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 2,
				     .params = "Type=nullio" }), -EEXIST);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 4,
				     .params = "Path=relative" }), -EINVAL);
	CHECK_CONTAINS(err, "Path: must be an absolute path");
	fake_fail(F_LUN_NEW, -ENOENT, "no such file");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 4,
				     .params = "Path=/nope" }), -ENOENT);
	CHECK_CONTAINS(err, "adding LUN 4 to target 1: ");
	CHECK_CONTAINS(err, "no such file");
	CHECK(target_lun(&f.fx.rt.cfg.targets[0], 4) == NULL);
	of_free(&f);
}

TEST(ops_new_lun_takes_the_lun_options_and_show_gives_them_back)
{
	struct ofx f;
	const struct fake_call *c;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 2,
			.params = "Path=/dev/null,PhysicalBlockSize=4096,"
				  "RotationRate=1,ThinProvisioning=No" }) == 0);
	c = fake_last(F_LUN_NEW);
	CHECK_EQ(c->lun.block_size, 512);
	CHECK_EQ(c->lun.phys_block_size, 4096);
	CHECK_EQ(c->lun.rotation_rate, 1);
	CHECK(c->lun.thin_off);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 2 }) == 0);
	CHECK_CONTAINS(f.out.buf, "BlockSize=512\nPhysicalBlockSize=4096\n"
		       "RotationRate=1\nThinProvisioning=No\n");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN | CTL_F_JSON,
			1, .lun = 2 }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"block_size\":512,"
		       "\"physical_block_size\":4096,\"rotation_rate\":1,"
		       "\"thin_provisioning\":false,");
	/* A LUN that says nothing of them shows the defaults. */
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "BlockSize=512\nPhysicalBlockSize=512\n"
		       "RotationRate=0\nThinProvisioning=Yes\n");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 4,
				     .params = "Path=/dev/null,RotationRate=2" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "RotationRate: \"2\" is not 0 (not reported), "
		       "1 (non-rotating) or 1025..65534 (rpm)");
	CHECK(target_lun(&f.fx.rt.cfg.targets[0], 4) == NULL);
	of_free(&f);
}

TEST(ops_delete_lun_even_while_sessions_use_it)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_EQ(fake_target(1)->nr_luns, 0);
	CHECK_EQ(f.fx.rt.cfg.targets[0].nr_luns, 0);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_LUN, 1,
				     .lun = 0 }), -ENOENT);
	CHECK_STR(err, "target 1 has no LUN 0");
	of_free(&f);
}

/* ---------------------------------------------------------------- accounts */

TEST(ops_users_of_a_target_and_of_discovery)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "IncomingUser=joe,Password=secretsecret1" }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "OutgoingUser=tgt,Password=secretsecret2" }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_USER,
			.params = "incominguser=disc,password=secretsecret3" }) == 0);
	CHECK_EQ(f.fx.rt.cfg.targets[0].auth.nr_incoming, 1);
	CHECK_STR(f.fx.rt.cfg.targets[0].auth.outgoing.user, "tgt");
	CHECK_EQ(f.fx.rt.cfg.auth.nr_incoming, 1);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_USER, 1 }) == 0);
	CHECK_STR(f.out.buf, "IncomingUser=joe\nOutgoingUser=tgt\n");
	/* Secrets are not shown. */
	CHECK(!strstr(f.out.buf, "secret"));
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_USER }) == 0);
	CHECK_STR(f.out.buf, "IncomingUser=disc\n");
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_USER, 1,
			.params = "IncomingUser=joe" }) == 0);
	CHECK_EQ(f.fx.rt.cfg.targets[0].auth.nr_incoming, 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_USER, 1,
			.params = "OutgoingUser=tgt" }) == 0);
	CHECK(!f.fx.rt.cfg.targets[0].auth.has_outgoing);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_USER, 1,
				     .params = "IncomingUser=joe" }), -ENOENT);
	of_free(&f);
}

TEST(ops_user_refusals)
{
	struct ofx f;

	of_init(&f, CONF);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "IncomingUser=joe,Password=short" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "at least 12");
	CHECK(!strstr(err, "short,"));
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "IncomingUser=joe" }), -EINVAL);
	CHECK_CONTAINS(err, "Password= is required");
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "IncomingUser=joe,Password=secretsecret1" }) == 0);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "IncomingUser=joe,Password=secretsecret9" }),
		 -EEXIST);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "OutgoingUser=tgt,Password=secretsecret1" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "the target's secret to be no initiator's");
	/* Nor an initiator's of another scope: discovery's, here. */
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_USER,
			.params = "IncomingUser=disc,Password=discsecret007" }) == 0);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "OutgoingUser=tgt,Password=discsecret007" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "IncomingUser disc's (discovery)");
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "OutgoingUser=tgt,Password=targetsecret7" }) == 0);
	/* And the other way: an initiator's secret that is the target's. */
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_USER,
				     .params = "IncomingUser=d2,Password=targetsecret7" }),
		 -EINVAL);
	CHECK_CONTAINS(err, "OutgoingUser tgt's (" TARGET1 ")");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
				     .params = "Color=blue" }), -EINVAL);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 9,
				     .params = "IncomingUser=x,Password=secretsecret1" }),
		 -ENOENT);
	CHECK_EQ(f.fx.rt.cfg.targets[0].auth.nr_incoming, 1);
	of_free(&f);
}

/* ---------------------------------------------------------------- sessions */

TEST(ops_close_a_connection_or_a_session)
{
	struct ofx f;
	uint16_t cids[2] = { 0, 1 };
	uint64_t sid = make_sid(0x1234, 7);

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, cids, 2) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID | CTL_F_CID,
			1, sid, 1 }) == 0);
	CHECK_EQ(fake_last(F_CONN_DEL)->cid, 1);
	CHECK_EQ(fake_target(1)->sessions[0].nr_conns, 1);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID | CTL_F_CID,
				     1, sid, 1 }), -ENOENT);
	CHECK_CONTAINS(err, "no connection 1 in session");
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID, 1,
			sid }) == 0);
	CHECK_EQ(fake_target(1)->nr_sessions, 0);
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID, 1, sid }),
		 -ENOENT);
	of_free(&f);
}

TEST(ops_delete_alone_lets_every_session_log_out_and_deletes_every_target)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF "Target " TARGET2 "\n");
	REQUIRE(fake_add_session(2, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "delete" }) == 0);
	/* Only target 2 has a session to ask, with the default deadline. */
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->tid, 2);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->sid, 0);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_wait, LOGOUT_WAIT_DEFAULT);
	/* It logged out: nothing is left to close. */
	CHECK_EQ(fake_count(F_SESSION_DEL), 0);
	CHECK_EQ(fake_state()->nr_targets, 0);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 0);
	of_free(&f);
}

TEST(ops_delete_alone_with_no_logout_time_closes_sessions_at_once)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_PARAMS,
			.params = "LogoutTimeout=0" }) == 0);
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 0);
	CHECK_EQ(fake_count(F_SESSION_DEL), 1);
	CHECK_EQ(fake_state()->nr_targets, 0);
	of_free(&f);
}

TEST(ops_delete_alone_survives_initiators_that_ignore_the_request)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	fake_logout_ignored(true);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_PARAMS,
			.params = "LogoutTimeout=1" }) == 0);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_wait, 1);
	CHECK_EQ(fake_state()->nr_targets, 0);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 0);
	of_free(&f);
}

TEST(ops_delete_refuses_a_wrong_logout_time_and_changes_nothing)
{
	static const char *const bad[] = {
		"LogoutTimeout=-1", "LogoutTimeout=61", "LogoutTimeout=x",
		"LogoutTimeout=", "Frob=1",
	};
	struct ofx f;
	size_t i;

	of_init(&f, CONF);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_PARAMS,
				.params = bad[i] }), -EINVAL);
		CHECK_CONTAINS(err, "LogoutTimeout=SECONDS (0..60)");
	}
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_LUN |
			CTL_F_PARAMS, 1, .lun = 0,
			.params = "LogoutTimeout=5" }), -EINVAL);
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 0);
	CHECK(fake_target(1) != NULL);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	of_free(&f);
}

TEST(ops_delete_target_with_sessions_when_they_may_log_out)
{
	struct ofx f;
	uint16_t cids[2] = { 0, 1 };

	of_init(&f, CONF "Target " TARGET2 "\n");
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 cids, 2) == 0);
	REQUIRE(fake_add_session(2, make_sid(0x1234, 8), INITIATOR, NULL,
				 cids, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_PARAMS, 1,
			.params = "LogoutTimeout=3" }) == 0);
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->tid, 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_wait, 3);
	CHECK(fake_target(1) == NULL);
	/* The other target and its session are untouched. */
	REQUIRE(fake_target(2) != NULL);
	CHECK_EQ(fake_target(2)->nr_sessions, 1);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	of_free(&f);
}

TEST(ops_delete_alone_with_a_module_that_cannot_ask_closes_sessions)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	fake_fail(F_LOGOUT_REQ, -EOPNOTSUPP, "");
	REQUIRE(op(&f, (struct rq){ "delete" }) == 0);
	CHECK_EQ(fake_count(F_SESSION_DEL), 1);
	CHECK_EQ(fake_state()->nr_targets, 0);
	of_free(&f);
}

TEST(ops_delete_target_closes_what_did_not_log_out)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_PARAMS, 1,
			.params = "LogoutTimeout=0" }) == 0);
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 0);
	CHECK_EQ(fake_count(F_SESSION_DEL), 1);
	CHECK(fake_target(1) == NULL);
	of_free(&f);
}

TEST(ops_close_a_connection_by_asking_it_to_log_out)
{
	struct ofx f;
	uint16_t cids[2] = { 0, 1 };
	uint64_t sid = make_sid(0x1234, 7);

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, cids, 2) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID |
			CTL_F_CID | CTL_F_PARAMS, 1, sid, 1,
			.params = "LogoutTimeout=2" }) == 0);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->sid, sid);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_cid, 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_wait, 2);
	/* A session unknown to the kernel is still an error. */
	CHECK_EQ(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_SID |
			CTL_F_PARAMS, 1, sid + 1,
			.params = "LogoutTimeout=2" }), -ENOENT);
	CHECK_CONTAINS(err, "no session");
	of_free(&f);
}

/* ---------------------------------------------------------------- show */

TEST(ops_show_lun_and_session_have_counters)
{
	struct ofx f;
	uint16_t cid = 0;
	uint64_t sid = make_sid(0x1234, 7);

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, &cid, 1) == 0);
	((struct kstate *)fake_state())->targets[0].luns[0].stats.cmds = 12;
	((struct kstate *)fake_state())->targets[0].sessions[0].stats.read_bytes
		= 4096;
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Lun=0\nType=nullio\nIOMode=wt\n");
	CHECK_CONTAINS(f.out.buf, "Commands=12\n");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_SID, 1, sid }) == 0);
	CHECK_CONTAINS(f.out.buf, "ReadBytes=4096\n");
	REQUIRE(op(&f, (struct rq){ "show" }) == 0);
	CHECK_CONTAINS(f.out.buf, "tid:1 name:" TARGET1 "\n\tlun:0 iotype:nullio "
		       "iomode:wt commands:12 read:0 written:0 errors:0\n");
	CHECK_CONTAINS(f.out.buf, "\tsid:");
	CHECK_CONTAINS(f.out.buf, "read:4096");
	CHECK_CONTAINS(f.out.buf, "\t\tcid:0 ip:");
	of_free(&f);
}

TEST(ops_show_stats_gives_kinds_errors_and_latency_in_text_json_and_prometheus)
{
	struct ofx f;
	uint16_t cid = 0;
	uint64_t sid = make_sid(0x1234, 7);
	struct kstats *ls;

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, &cid, 1) == 0);
	ls = &((struct kstate *)fake_state())->targets[0].luns[0].stats;
	ls->cmds = 3;
	ls->op_cmds[IET_SOP_FLUSH] = 3;
	ls->hist[IET_LAT_TOTAL][IET_SOP_FLUSH].counts[10] = 3;
	ls->hist[IET_LAT_TOTAL][IET_SOP_FLUSH].sum_ns = 3000000;
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_STATS }) == 0);
	CHECK_CONTAINS(f.out.buf, "tid:1 name:" TARGET1 "\n\tlun:0\n"
		       "\t\tcommands:3 read:0 write:0 flush:3 other:0\n");
	CHECK_CONTAINS(f.out.buf, "\t\tflush total latency: count:3 mean:1000.0us p50:<=2.097ms");
	CHECK_CONTAINS(f.out.buf, "\tsid:");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN | CTL_F_STATS,
			1, .lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Lun=0\nType=nullio\n");
	CHECK_CONTAINS(f.out.buf, "flush total latency: count:3");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_SID | CTL_F_STATS |
			CTL_F_JSON, 1, sid }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"commands_by_op\":{");
	CHECK_CONTAINS(f.out.buf, "\"latency\":{\"read\":{\"total\":");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_JSON }) == 0);
	CHECK(!strstr(f.out.buf, "commands_by_op"));
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_PROMETHEUS }) == 0);
	CHECK_CONTAINS(f.out.buf, "iet_lun_flush_latency_seconds_count{target=\""
		       TARGET1 "\",tid=\"1\",lun=\"0\"} 3\n");
	CHECK_CONTAINS(f.out.buf, "iet_session_commands_total{target=\"" TARGET1
		       "\",tid=\"1\",initiator=\"" INITIATOR "\"");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_PROMETHEUS, 1 }) == 0);
	CHECK_CONTAINS(f.out.buf, "# TYPE iet_lun_read_latency_seconds histogram\n");
	CHECK_EQ(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_PROMETHEUS, 9 }),
		 -ENOENT);
	CHECK_EQ(op(&f, (struct rq){ "show", CTL_F_PROMETHEUS | CTL_F_JSON }),
		 -EINVAL);
	CHECK_CONTAINS(err, "--prometheus takes --tid or --target alone");
	of_free(&f);
}

static int entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * MetricsFile: written whole, by a child, in its directory, on time; a link
 * at its name is replaced, not followed; a reload that renames or drops
 * it removes the file it wrote.
 */
TEST(ops_metrics_file_is_replaced_whole_and_on_time)
{
	char dir[] = "/tmp/iet-metrics-XXXXXX", path[64], other[64], buf[256];
	struct metrics_file m = { 0 };
	struct config cfg = { 0 };
	struct ofx f;
	struct stat sb;
	mode_t old_mask;
	FILE *fp;

	of_init(&f, CONF);
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/iet.prom", dir);
	snprintf(other, sizeof(other), "%s/other.prom", dir);
	strcpy(cfg.metrics_file, path);
	cfg.metrics_interval = 10;
	/* ietd's unit has UMask=0077; node_exporter is another user. */
	old_mask = umask(077);
	metrics_file_tick(&m, &cfg, 1000);
	umask(old_mask);
	CHECK(m.child > 0);
	metrics_file_wait(&m);
	CHECK(!m.failing);
	REQUIRE(stat(path, &sb) == 0);
	CHECK_EQ(sb.st_mode & 0777, 0644);
	REQUIRE(fp = fopen(path, "r"));
	CHECK(fgets(buf, sizeof(buf), fp));
	CHECK_CONTAINS(buf, "# HELP iet_lun_commands_total");
	fclose(fp);
	/* No temporary file left beside it. */
	CHECK_EQ(entries(dir), 1);
	/* Not again before its interval; then again. */
	unlink(path);
	metrics_file_tick(&m, &cfg, 10999);
	CHECK_EQ(m.child, 0);
	CHECK(access(path, F_OK) != 0);
	metrics_file_tick(&m, &cfg, 11000);
	metrics_file_wait(&m);
	CHECK(access(path, F_OK) == 0);
	/* A link at its name: replaced by the file, its target untouched. */
	unlink(path);
	REQUIRE(symlink("/tmp/iet-metrics-elsewhere", path) == 0);
	CHECK_EQ(metrics_file_write(path, err, sizeof(err)), 0);
	CHECK(access("/tmp/iet-metrics-elsewhere", F_OK) != 0);
	REQUIRE(lstat(path, &sb) == 0);
	CHECK(S_ISREG(sb.st_mode));
	/* Renamed by a reload: the new one at once, the old one gone. */
	strcpy(cfg.metrics_file, other);
	metrics_file_tick(&m, &cfg, 12000);
	metrics_file_wait(&m);
	CHECK(access(path, F_OK) != 0);
	CHECK(access(other, F_OK) == 0);
	/* Dropped: gone too, and nothing written after. */
	cfg.metrics_file[0] = '\0';
	metrics_file_tick(&m, &cfg, 13000);
	CHECK_EQ(m.child, 0);
	CHECK_EQ(entries(dir), 0);
	/* No such directory: an error, said, and the writer says it failed. */
	CHECK(metrics_file_write("/nonexistent/iet.prom", err, sizeof(err)) < 0);
	CHECK_CONTAINS(err, "No such file or directory");
	strcpy(cfg.metrics_file, "/nonexistent/iet.prom");
	metrics_file_tick(&m, &cfg, 14000);
	metrics_file_wait(&m);
	CHECK(m.failing);
	metrics_file_stop(&m);
	rmdir(dir);
	of_free(&f);
}

/* Brackets and quotes balance, outside strings: a cheap JSON sanity check. */
static bool balanced(const char *s)
{
	int depth = 0;
	bool str = false;

	for (; *s; s++) {
		if (str) {
			if (*s == '\\')
				s++;
			else if (*s == '"')
				str = false;
			continue;
		}
		if (*s == '"')
			str = true;
		else if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			depth--;
		if (depth < 0)
			return false;
	}
	return !depth && !str;
}

TEST(ops_show_json_for_every_form)
{
	struct ofx f;
	uint16_t cid = 0;
	uint64_t sid = make_sid(0x1234, 7);

	of_init(&f, "IncomingUser d secretsecret1\nTarget " TARGET1
		"\n Alias a \"quoted\" alias\n Lun 0 Type=nullio\n");
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_JSON }) == 0);
	CHECK(balanced(f.out.buf));
	CHECK(!strncmp(f.out.buf, "{\"targets\":[{\"tid\":1,\"name\":\"" TARGET1
		       "\",\"origin\":\"file\",", 60));
	CHECK_CONTAINS(f.out.buf, "\"alias\":\"a \\\"quoted\\\" alias\"");
	CHECK_CONTAINS(f.out.buf, "\"params\":{\"Wthreads\":8,");
	CHECK_CONTAINS(f.out.buf, "\"luns\":[{\"lun\":0,\"type\":\"nullio\"");
	CHECK_CONTAINS(f.out.buf, "\"stats\":{\"commands\":0,\"read_bytes\":0,"
		       "\"write_bytes\":0,\"errors\":0}");
	CHECK_CONTAINS(f.out.buf, "\"initiator\":\"" INITIATOR "\"");
	CHECK_CONTAINS(f.out.buf, "\"connections\":[{\"cid\":0,");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_JSON, 1 }) == 0);
	CHECK(balanced(f.out.buf));
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_SID | CTL_F_JSON,
			1, sid }) == 0);
	CHECK(balanced(f.out.buf));
	CHECK_CONTAINS(f.out.buf, "\"MaxRecvDataSegmentLength\":");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_SID | CTL_F_JSON,
			1, 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"HeaderDigest\":\"None\"");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN | CTL_F_JSON,
			1, .lun = 0 }) == 0);
	CHECK(balanced(f.out.buf));
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_USER | CTL_F_JSON }) == 0);
	CHECK_STR(f.out.buf, "{\"incoming_users\":[\"d\"]}\n");
	of_free(&f);
}

TEST(ops_show_json_gives_the_sid_as_a_string_too)
{
	struct ofx f;
	uint16_t cid = 0;
	/* Beyond 2^53: a double (jq, JavaScript) cannot hold it exactly. */
	uint64_t sid = make_sid(0x80123456789aull, 0xfffe);
	char want[128];

	of_init(&f, CONF);
	REQUIRE(fake_add_session(1, sid, INITIATOR, NULL, &cid, 1) == 0);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_JSON }) == 0);
	snprintf(want, sizeof(want), "\"sid\":%llu,\"sid_str\":\"%llu\",",
		 (unsigned long long)sid, (unsigned long long)sid);
	CHECK_CONTAINS(f.out.buf, want);
	of_free(&f);
}

TEST(ops_show_json_of_a_path_that_is_not_utf8_stays_json)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 1, .lun = 5,
			.params = "Path=/srv/caf\xe9.img" }) == 0);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN | CTL_F_JSON,
			1, .lun = 5 }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"path\":\"/srv/caf\\u00e9.img\"");
	CHECK(!strchr(f.out.buf, '\xe9'));
	of_free(&f);
}

/* ---------------------------------------------------------------- save */

TEST(ops_save_writes_the_running_configuration_with_runtime_changes)
{
	struct ofx f;
	struct config back;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_LUN, 2, .lun = 1,
			.params = "Path=/dev/null,ScsiId=x1" }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 2,
			.params = "IncomingUser=joe,Password=secretsecret1" }) == 0);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 2,
			.params = "MaxConnections=2", .redirect = "192.0.2.3" }) == 0);
	REQUIRE(op(&f, (struct rq){ "save" }) == 0);
	CHECK_CONTAINS(f.out.buf, "keep it readable by root only");
	CHECK_CONTAINS(f.out.buf, "Target " NEWT "\n\tRedirect 192.0.2.3:3260\n"
		       "\tIncomingUser joe secretsecret1\n\tLun 1 Path=/dev/null,"
		       "Type=fileio,IOMode=wt,ScsiId=x1,ScsiSN=x1\n"
		       "\tMaxConnections 2\n");
	REQUIRE(config_parse(f.out.buf, strlen(f.out.buf), "saved", &back, err,
			     sizeof(err)) == 0);
	CHECK_EQ(back.nr_targets, 2);
	config_free(&back);
	of_free(&f);
}

/* ---------------------------------------------------------------- reload */

TEST(ops_reload_dry_run_prints_the_plan_and_changes_nothing)
{
	struct ofx f;
	size_t calls;

	of_init(&f, CONF);
	rewrite_conf(&f, CONF " Lun 1 Type=nullio\nTarget " TARGET2 "\n");
	calls = fake_nr_calls();
	REQUIRE(op(&f, (struct rq){ "reload", CTL_F_DRYRUN }) == 0);
	CHECK_STR(f.out.buf, "tid 2 " TARGET2 ": create\n"
		  "tid 1 " TARGET1 " LUN 1: add (nullio)\n");
	/* Only a dump. */
	CHECK_EQ(fake_nr_calls(), calls + 1);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	REQUIRE(op(&f, (struct rq){ "reload" }) == 0);
	CHECK_EQ(fake_state()->nr_targets, 2);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 2);
	REQUIRE(op(&f, (struct rq){ "reload" }) == 0);
	CHECK_STR(f.out.buf, "nothing to change\n");
	of_free(&f);
}

TEST(ops_reload_of_a_bad_file_changes_nothing)
{
	struct ofx f;
	size_t calls;

	of_init(&f, CONF);
	rewrite_conf(&f, CONF "Target " TARGET2 "\n MaxBurstLength lots\n");
	calls = fake_nr_calls();
	CHECK_EQ(op(&f, (struct rq){ "reload" }), -EINVAL);
	CHECK_CONTAINS(err, "ietd.conf:4: MaxBurstLength: ");
	CHECK(!strchr(err, '\n'));
	CHECK_EQ(fake_nr_calls(), calls);
	CHECK_EQ(f.fx.rt.cfg.nr_targets, 1);
	of_free(&f);
}

TEST(ops_reload_refusals_are_reported_and_the_rest_applied)
{
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF "Target " TARGET2 "\n");
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	rewrite_conf(&f, "Target " NEWT "\n");
	/* Done what it could: not a failure (systemctl reload). */
	CHECK_EQ(op(&f, (struct rq){ "reload" }), 0);
	CHECK_CONTAINS(f.out.buf, "1 change deferred while sessions use it (the rest applied)");
	CHECK_CONTAINS(f.out.buf, "tid 3 " NEWT ": create\n");
	CHECK_CONTAINS(f.out.buf, "tid 2 " TARGET2 ": delete\n");
	CHECK_CONTAINS(f.out.buf, "refused: tid 1 " TARGET1 ": removed from the configuration, kept");
	CHECK_EQ(fake_state()->nr_targets, 2);
	of_free(&f);
}

/* ---------------------------------------------------------------- restart */

/*
 * ietd -u kept its state beside the socket, then in state/ of its own: an
 * upgrade must not lose the targets and CHAP accounts made with ietadm.
 */
TEST(ops_upgrade_to_a_state_directory_keeps_what_ietadm_did)
{
	char sub[96], path[128], old[sizeof(((struct state *)0)->path)];
	struct config next, prev;
	struct runtime rt2;
	struct kstate st;
	struct ofx f;
	const struct target_conf *t;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 2,
			.params = "IncomingUser=joe,Password=secretsecret1" }) == 0);
	snprintf(old, sizeof(old), "%s", f.fx.rt.state.path);

	/* Restarted as the new ietd -u: an empty state/ietd.state. */
	memset(&rt2, 0, sizeof(rt2));
	snprintf(sub, sizeof(sub), "%s/state", f.dir);
	REQUIRE(mkdir(sub, 0700) == 0);
	snprintf(path, sizeof(path), "%s/%s", sub, STATE_NAME);
	REQUIRE(state_open(&rt2.state, path, err, sizeof(err)) == 0);
	REQUIRE(state_migrate_from(&rt2.state, old, err, sizeof(err)) == 0);
	config_of(&next, CONF);
	kernel_dump(&st);
	REQUIRE(runtime_start(&rt2, &next, &st, err, sizeof(err)) == 0);
	kstate_free(&st);
	t = config_target_by_name(&rt2.cfg, NEWT);
	REQUIRE(t != NULL);
	CHECK_EQ(t->origin, ORIGIN_ADMIN);
	REQUIRE_EQ(t->auth.nr_incoming, 1);
	CHECK_STR(t->auth.incoming[0].user, "joe");
	CHECK_EQ(fake_count(F_TARGET_DEL), 0);
	/* Saved at start in the new place; the old file gone after that. */
	CHECK(access(old, F_OK) != 0);
	REQUIRE(state_load(&rt2.state, &prev, err, sizeof(err)) == 0);
	t = config_target_by_name(&prev, NEWT);
	CHECK(t && t->auth.nr_incoming == 1);
	config_free(&prev);
	config_free(&rt2.cfg);
	state_close(&rt2.state);
	of_free(&f);
}

TEST(ops_state_file_remembers_what_ietadm_did_across_a_restart)
{
	struct ofx f;
	struct config next, prev;
	struct kstate st;
	struct runtime rt2;
	const struct target_conf *t;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 2,
			.params = "IncomingUser=joe,Password=secretsecret1" }) == 0);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.redirect = "192.0.2.3" }) == 0);
	REQUIRE(state_load(&f.fx.rt.state, &prev, err, sizeof(err)) == 0);
	CHECK_EQ(config_target_by_name(&prev, NEWT)->origin, ORIGIN_ADMIN);
	config_free(&prev);

	/* ietd killed and started again with the same file. */
	memset(&rt2, 0, sizeof(rt2));
	rt2.state = f.fx.rt.state;
	config_of(&next, CONF);
	kernel_dump(&st);
	REQUIRE(runtime_start(&rt2, &next, &st, err, sizeof(err)) == 0);
	kstate_free(&st);
	t = config_target_by_name(&rt2.cfg, NEWT);
	REQUIRE(t != NULL);
	CHECK_EQ(t->origin, ORIGIN_ADMIN);
	REQUIRE_EQ(t->auth.nr_incoming, 1);
	CHECK_STR(t->auth.incoming[0].user, "joe");
	/* The file's target takes the file's settings: no redirect. */
	CHECK_STR(config_target_by_name(&rt2.cfg, TARGET1)->redirect, "");
	CHECK_EQ(fake_count(F_TARGET_DEL), 0);
	config_free(&rt2.cfg);
	of_free(&f);
}

TEST(ops_an_account_made_with_ietadm_may_name_its_initiators)
{
	struct ofx f;
	const struct account *a;
	char *saved;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "IncomingUser=joe,Password=secretsecret1,"
				  "Initiators=" INITIATOR ",iqn.2001-04.com.example:b" }) == 0);
	a = &f.fx.rt.cfg.targets[0].auth.incoming[0];
	CHECK_EQ(a->nr_initiators, 2);
	CHECK(!account_admits(a, "iqn.2001-04.com.example:c"));
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_USER, 1 }) == 0);
	CHECK_STR(f.out.buf, "IncomingUser=joe,Initiators=" INITIATOR
		  ",iqn.2001-04.com.example:b\n");
	/* Saved with them, and so in the state file. */
	REQUIRE(op(&f, (struct rq){ "save" }) == 0);
	saved = strstr(f.out.buf, "IncomingUser joe secretsecret1 " INITIATOR
		       ",iqn.2001-04.com.example:b\n");
	CHECK(saved != NULL);
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "IncomingUser=ann,Password=secretsecret2,"
				  "Initiators=not-a-name" }), -EINVAL);
	CHECK_CONTAINS(err, "Initiators: ");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID | CTL_F_USER, 1,
			.params = "OutgoingUser=tgt,Password=secretsecret3,"
				  "Initiators=" INITIATOR }), -EINVAL);
	CHECK_CONTAINS(err, "only an IncomingUser");
	CHECK_EQ(f.fx.rt.cfg.targets[0].auth.nr_incoming, 1);
	CHECK(!f.fx.rt.cfg.targets[0].auth.has_outgoing);
	of_free(&f);
}

/*
 * A delete that waits for its initiators keeps its target refusing logins
 * through a reload meanwhile, and ends it once they are gone.
 */
TEST(ops_a_reload_while_a_delete_waits_keeps_the_target_going)
{
	struct ctl_req r = { .version = CTL_VERSION,
			     .fields = CTL_F_TID | CTL_F_PARAMS, .tid = 1 };
	struct ctl_later *later;
	struct ofx f;
	uint16_t cid = 0;

	of_init(&f, CONF "Target " TARGET2 "\n");
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	fake_logout_held(true);
	strcpy(r.op, "delete");
	strcpy(r.params, "LogoutTimeout=30");
	REQUIRE_EQ(ctl_start(&f.fx.rt, &r, &f.out, &later, err, sizeof(err)),
		   -EINPROGRESS);
	REQUIRE(later != NULL);
	CHECK(config_target_by_tid(&f.fx.rt.cfg, 1)->deleting);
	CHECK(logout_poll(&later->lw, now_ms()) > 0);
	REQUIRE(op(&f, (struct rq){ "reload" }) == 0);
	CHECK(config_target_by_tid(&f.fx.rt.cfg, 1)->deleting);
	CHECK(!config_target_by_tid(&f.fx.rt.cfg, 2)->deleting);
	fake_logout_go();
	CHECK_EQ(logout_poll(&later->lw, now_ms()), 0);
	CHECK_EQ(ctl_finish(&f.fx.rt, later, &f.out, err, sizeof(err)), 0);
	CHECK(config_target_by_tid(&f.fx.rt.cfg, 1) == NULL);
	CHECK(fake_target(1) == NULL);
	of_free(&f);
}

#define REVOKE_CONF	"IncomingUser disc disc-secret-0001\n" \
	"Target " TARGET1 "\n IncomingUser joe joe-secret-00001\n" \
	" IncomingUser ann ann-secret-00001\n Lun 0 Type=nullio\n" \
	"Target " TARGET2 "\n Lun 0 Type=nullio\n" \
	"Target " NEWT "\n IncomingUser bob bob-secret-00001\n Lun 0 Type=nullio\n"
#define DIGEST_A	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define DIGEST_B	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* ietd killed and started again, the file's digest then being digest. */
static void restart(struct ofx *f, struct runtime *rt2, const char *digest)
{
	struct config next;
	struct kstate st;

	memset(rt2, 0, sizeof(*rt2));
	rt2->state = f->fx.rt.state;
	config_of(&next, REVOKE_CONF);
	strcpy(next.digest, digest);
	kernel_dump(&st);
	CHECK(runtime_start(rt2, &next, &st, err, sizeof(err)) == 0);
	kstate_free(&st);
}

/*
 * What ietadm revoked of what ietd.conf defines stays revoked when ietd
 * restarts with the file unchanged (systemd's restart after a crash);
 * a file edited meanwhile applies as a reload would.
 */
TEST(ops_a_restart_with_the_same_file_keeps_what_ietadm_revoked)
{
	const struct target_conf *t;
	struct runtime rt2;
	struct ofx f;
	size_t made;

	of_init(&f, REVOKE_CONF);
	strcpy(f.fx.rt.cfg.digest, DIGEST_A);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID | CTL_F_USER |
			CTL_F_PARAMS, 1, .params = "IncomingUser=joe" }) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_USER | CTL_F_PARAMS,
			.params = "IncomingUser=disc" }) == 0);
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID, 2 }) == 0);
	/* Deleted and made again with ietadm, with no account: stays so. */
	REQUIRE(op(&f, (struct rq){ "delete", CTL_F_TID, 3 }) == 0);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 3,
			.params = "Name=" NEWT }) == 0);
	made = fake_count(F_TARGET_NEW);

	restart(&f, &rt2, DIGEST_A);
	t = config_target_by_name(&rt2.cfg, TARGET1);
	REQUIRE(t != NULL);
	REQUIRE_EQ(t->auth.nr_incoming, 1);
	CHECK_STR(t->auth.incoming[0].user, "ann");
	CHECK_EQ(t->origin, ORIGIN_FILE);
	CHECK_EQ(rt2.cfg.auth.nr_incoming, 0);
	CHECK(config_target_by_name(&rt2.cfg, TARGET2) == NULL);
	t = config_target_by_name(&rt2.cfg, NEWT);
	REQUIRE(t != NULL);
	CHECK_EQ(t->origin, ORIGIN_ADMIN);
	CHECK_EQ(t->auth.nr_incoming, 0);
	CHECK_EQ(fake_count(F_TARGET_NEW), made);
	/* And again: the resumed state records the same file. */
	CHECK_STR(rt2.cfg.digest, DIGEST_A);
	config_free(&rt2.cfg);

	/* Edited while ietd was down: the file's settings, as a reload. */
	restart(&f, &rt2, DIGEST_B);
	t = config_target_by_name(&rt2.cfg, TARGET1);
	REQUIRE(t != NULL);
	CHECK_EQ(t->auth.nr_incoming, 2);
	CHECK_EQ(rt2.cfg.auth.nr_incoming, 1);
	CHECK(config_target_by_name(&rt2.cfg, TARGET2) != NULL);
	config_free(&rt2.cfg);
	of_free(&f);
}

TEST(ops_show_lun_gives_its_reservations_and_update_ends_them)
{
	struct kpr_reg regs[2] = {
		{ .key = 0xabc, .initiator = "iqn.1994-05.com.redhat:node1",
		  .isid = 0x23d000001, .rtpi = 1, .holder = true },
		{ .key = 0xdef, .initiator = "iqn.1994-05.com.redhat:node2",
		  .any_isid = true, .rtpi = 0 },
	};
	struct kpr pr = { .generation = 7, .aptpl = true, .type = 5,
			  .regs = regs, .nr_regs = 2 };
	struct ofx f;

	of_init(&f, CONF);
	/* None held: said so. */
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Reservation=None\nAPTPL=No\nPRGeneration=0\n");
	fake_set_pr(1, 0, &pr);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Reservation=Write Exclusive, Registrants Only\n"
		       "APTPL=Yes\nPRGeneration=7\n"
		       "Registration=0x0000000000000abc iqn.1994-05.com.redhat:node1,i,0x00023d000001 holder\n"
		       "Registration=0x0000000000000def iqn.1994-05.com.redhat:node2 all-target-ports\n");
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN | CTL_F_JSON,
			1, .lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"reservations\":{\"type\":\"Write Exclusive, "
		       "Registrants Only\",\"aptpl\":true,\"generation\":7,"
		       "\"registrations\":[{\"key\":\"0x0000000000000abc\","
		       "\"initiator_port\":\"iqn.1994-05.com.redhat:node1,i,0x00023d000001\","
		       "\"relative_target_port\":1,\"holder\":true},");

	/* Only Reservations=release|clear, and only of a LUN there is. */
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Path=/dev/null" }), -EINVAL);
	CHECK_CONTAINS(err, "Reservations=release");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Reservations=maybe" }), -EINVAL);
	CHECK_EQ(fake_count(F_PR_CLEAR), 0);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 9,
				     .params = "Reservations=release" }), -ENOENT);
	CHECK_CONTAINS(err, "no such LUN");

	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
			.params = "Reservations=release" }) == 0);
	CHECK(!fake_last(F_PR_CLEAR)->pr_all);
	CHECK_EQ(fake_pr()->type, 0);
	CHECK_EQ(fake_pr()->nr_regs, 2);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
			.params = "Reservations=clear" }) == 0);
	CHECK(fake_last(F_PR_CLEAR)->pr_all);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_LUN, 1,
			.lun = 0 }) == 0);
	CHECK_CONTAINS(f.out.buf, "Reservation=None\nAPTPL=Yes\nPRGeneration=8\n");
	CHECK(!strstr(f.out.buf, "Registration="));
	/* A kernel that fails says so, and nothing changes. */
	fake_fail(F_PR_CLEAR, -EIO, "the LUN's state could not be kept");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Reservations=clear" }), -EIO);
	CHECK_CONTAINS(err, "could not be kept");
	of_free(&f);
}

/*
 * A live LUN's size: Size= in bytes (whole blocks), Blocks= or
 * Resize=backing, Force=Yes to shrink past data; the kernel decides the
 * rest. A size ietd keeps (a nullio LUN's) follows, so --op save has it.
 */
TEST(ops_update_resizes_a_lun_in_place)
{
	struct ofx f;

	of_init(&f, "Target " TARGET1 "\n Lun 0 Type=nullio,Blocks=2048\n"
		" Lun 1 Type=nullio,BlockSize=4096\n");
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
			.params = "Size=2M" }) == 0);
	CHECK_EQ(fake_last(F_LUN_SET)->lun.blocks, 4096);
	CHECK(!fake_last(F_LUN_SET)->force);
	CHECK_EQ(target_lun(config_target_by_tid(&f.fx.rt.cfg, 1), 0)->blocks, 4096);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 1,
			.params = "Blocks=10,Force=Yes" }) == 0);
	CHECK_EQ(fake_last(F_LUN_SET)->lun.blocks, 10);
	CHECK(fake_last(F_LUN_SET)->force);
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 1,
			.params = "resize=BACKING" }) == 0);
	CHECK_EQ(fake_last(F_LUN_SET)->lun.blocks, 0);

	/* Each refused before the kernel hears of it. */
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 1,
				     .params = "Size=6144" }), -EINVAL);
	CHECK_CONTAINS(err, "whole number of 4096-byte blocks");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Size=1M,Resize=backing" }), -EINVAL);
	CHECK_CONTAINS(err, "one of Size=");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Force=Yes" }), -EINVAL);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Size=1M,Reservations=clear" }), -EINVAL);
	CHECK_CONTAINS(err, "Size=BYTES");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 7,
				     .params = "Size=1M" }), -ENOENT);
	CHECK_CONTAINS(err, "no LUN 7");
	CHECK_EQ(fake_count(F_LUN_SET), 3);

	/* What the kernel refuses comes back with its reason; nothing moves. */
	fake_fail(F_LUN_SET, -ENOTEMPTY, "data is written past the new end");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID | CTL_F_LUN, 1, .lun = 0,
				     .params = "Blocks=1" }), -ENOTEMPTY);
	CHECK_CONTAINS(err, "data is written past the new end");
	CHECK_EQ(target_lun(config_target_by_tid(&f.fx.rt.cfg, 1), 0)->blocks, 4096);
	of_free(&f);
}

/*
 * A state change that leaves the target inactive closes its LUNs'
 * backings as their commands end: ietadm hears back once they have, and
 * ietd serves everyone else meanwhile (the wait is a later of the loop's).
 */
TEST(ops_update_answers_once_the_backings_it_closes_are_closed)
{
	struct ctl_later *later = NULL;
	struct ofx f;
	struct ctl_req r = { .version = CTL_VERSION, .op = "update",
			     .fields = CTL_F_TID | CTL_F_PARAMS, .tid = 1,
			     .params = "PortalGroup=1,State=standby" };
	size_t dumps;

	of_init(&f, CONF);
	fake_set_closing(1, 3, false);
	dumps = fake_count(F_DUMP);
	REQUIRE_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1,State=standby" }), 0);
	/* Polled until none was left closing. */
	CHECK(fake_count(F_DUMP) >= dumps + 3);
	CHECK_EQ(fake_target(1)->luns_closing, 0);

	/* Stuck in the backend: said so, once the wait is over. */
	fake_set_closing(1, 2, true);
	REQUIRE_EQ(ctl_start(&f.fx.rt, &r, &f.out, &later, err, sizeof(err)),
		   -EINPROGRESS);
	REQUIRE(later != NULL);
	CHECK(ctl_later_poll(later, now_ms()) > 0);
	CHECK_EQ(ctl_later_poll(later, later->end_ms), 0);
	CHECK_EQ(ctl_finish(&f.fx.rt, later, &f.out, err, sizeof(err)),
		 -ETIMEDOUT);
	CHECK_CONTAINS(err, "2 LUN backings are still closing");
	/* Nothing closing: answered at once. */
	fake_set_closing(1, 0, false);
	later = NULL;
	r.params[strlen("PortalGroup=1,State=")] = 'u';
	r.params[strlen("PortalGroup=1,State=u")] = '\0';
	CHECK_EQ(ctl_start(&f.fx.rt, &r, &f.out, &later, err, sizeof(err)), 0);
	CHECK(later == NULL);
	of_free(&f);
}

TEST(ops_update_sets_a_portal_groups_alua_state_and_show_gives_it)
{
	struct ofx f;

	of_init(&f, CONF);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID, 1 }) == 0);
	CHECK_CONTAINS(f.out.buf, "PortalGroup=1,State=active/optimized,Sessions=0\n");

	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1,State=standby" }) == 0);
	CHECK_EQ(fake_last(F_TPG_SET)->tpgt, 1);
	CHECK_EQ(fake_last(F_TPG_SET)->alua_state, IET_ALUA_STANDBY);
	REQUIRE(op(&f, (struct rq){ "show", CTL_F_TID | CTL_F_JSON, 1 }) == 0);
	CHECK_CONTAINS(f.out.buf, "\"portal_groups\":[{\"tag\":1,\"state\":"
		       "\"standby\",\"sessions\":0,\"remote\":false}]");
	/* The group keeps its kind: ietadm changes states only. */
	CHECK_EQ(fake_last(F_TPG_SET)->tpg_remote, TPG_KIND_KEEP);
	/* The short names do too, in any case. */
	REQUIRE(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "State=AN,PortalGroup=1" }) == 0);
	CHECK_EQ(fake_last(F_TPG_SET)->alua_state,
		 IET_ALUA_ACTIVE_NON_OPTIMIZED);

	/* Refused, and nothing sent: a bad state, tag or key, no state. */
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1,State=sleepy" }), -EINVAL);
	CHECK_CONTAINS(err, "wrong State");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=0,State=standby" }), -EINVAL);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=70000,State=standby" }), -EINVAL);
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1,Wthreads=2" }), -EINVAL);
	CHECK_CONTAINS(err, "PortalGroup=TAG,State=STATE");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1" }), -EINVAL);
	/* Groups come with portals: ietadm makes none. */
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=2,State=standby" }), -ENOENT);
	CHECK_CONTAINS(err, "no portal group 2");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 9,
			.params = "PortalGroup=1,State=standby" }), -ENOENT);
	CHECK_EQ(fake_count(F_TPG_SET), 2);
	/* A kernel that fails says so. */
	fake_fail(F_TPG_SET, -EIO, "no");
	CHECK_EQ(op(&f, (struct rq){ "update", CTL_F_TID, 1,
			.params = "PortalGroup=1,State=u" }), -EIO);
	CHECK_CONTAINS(err, "portal group 1");
	of_free(&f);
}

#define GROUP4	"PortalGroup 4 192.0.2.4:3260\n"

static bool target_has_only_group(uint32_t tid, uint16_t tag)
{
	const struct kstate *st = fake_state();
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid == tid)
			return st->targets[i].nr_tpgs == 1 &&
			       st->targets[i].tpgs[0].tag == tag;
	return false;
}

TEST(ops_reload_refuses_changed_portal_groups_and_changes_nothing)
{
	struct ofx f;
	size_t calls;

	of_init(&f, GROUP4 CONF);
	CHECK(target_has_only_group(1, 4));
	REQUIRE(op(&f, (struct rq){ "reload" }) == 0);
	CHECK_STR(f.out.buf, "nothing to change\n");
	rewrite_conf(&f, GROUP4 "PortalGroup 5 192.0.2.5:3260\n" CONF
		     " Lun 1 Type=nullio\n");
	calls = fake_nr_calls();
	CHECK_EQ(op(&f, (struct rq){ "reload" }), -EINVAL);
	CHECK_CONTAINS(err, "PortalGroup lines changed");
	CHECK_CONTAINS(err, "restart");
	CHECK_EQ(fake_nr_calls(), calls);
	CHECK_EQ(f.fx.rt.cfg.nr_groups, 1);
	of_free(&f);
}

TEST(ops_new_target_gets_the_configured_portal_groups)
{
	struct ofx f;
	size_t n;

	of_init(&f, GROUP4 CONF);
	REQUIRE(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT }) == 0);
	CHECK(target_has_only_group(2, 4));
	/* If the kernel will not take them, there is no half-made target. */
	n = fake_state()->nr_targets;
	fake_fail(F_TPG_SET, -EIO, "no");
	CHECK_EQ(op(&f, (struct rq){ "new", CTL_F_TID, 0,
			.params = "Name=" NEWT "x" }), -EIO);
	CHECK_CONTAINS(err, "portal groups");
	CHECK_EQ(fake_state()->nr_targets, n);
	of_free(&f);
}
