// SPDX-License-Identifier: GPL-2.0
/*
 * Plans: (kernel state, running model, new configuration) -> kernel calls,
 * model, refusals. Start-up (no model, or the state file's) and reloads.
 */
#include <errno.h>

#include "helpers.h"
#include "kernel_fake.h"
#include "logout.h"
#include "loop.h"
#include "tpg_retire.h"
#include "plan.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n Wthreads 4\n Lun 0 Type=nullio\n" \
		" Lun 1 Path=/dev/null\nTarget " TARGET2 "\n Lun 3 Type=nullio\n"
#define OTHER	"iqn.2001-04.com.example:other"

static char err[1024];

/* The plan of next against the fake kernel and cur; not applied. */
static int make(const struct config *cur, const char *next, struct plan *p)
{
	struct config n;
	struct kstate st;
	int ret;

	config_of(&n, next);
	kernel_dump(&st);
	ret = plan_make(&st, cur, &n, p, err, sizeof(err));
	kstate_free(&st);
	config_free(&n);
	return ret;
}

/* Plan and apply; the result replaces *model. */
static int run(struct config *model, const char *next)
{
	struct plan p;
	int ret;

	ret = make(model, next, &p);
	if (ret)
		return ret;
	ret = plan_apply(&p, err, sizeof(err));
	if (!ret && model) {
		config_free(model);
		*model = p.result;
		memset(&p.result, 0, sizeof(p.result));
	}
	plan_free(&p);
	return ret;
}

static char *format(const struct plan *p)
{
	static char buf[8192];
	struct textbuf tb;

	textbuf_init(&tb, sizeof(buf) - 1);
	plan_format(p, &tb);
	memcpy(buf, tb.buf ? tb.buf : "", tb.len);
	buf[tb.len] = '\0';
	textbuf_free(&tb);
	return buf;
}

static void start(void)
{
	fake_reset();
	kernel_open();
}

TEST(plan_start_creates_targets_and_luns_with_file_tids)
{
	struct config model = { 0 };
	const struct fake_call *c;

	start();
	REQUIRE(run(&model, CONF) == 0);
	CHECK_EQ(fake_count(F_TARGET_NEW), 2);
	CHECK_EQ(fake_count(F_LUN_NEW), 3);
	c = fake_call(2);	/* after open and dump */
	REQUIRE(c && c->op == F_TARGET_NEW);
	CHECK_EQ(c->tid, 1);
	CHECK_STR(c->name, TARGET1);
	CHECK_EQ(c->tparams[IET_TP_WTHREADS], 4);
	c = fake_last(F_LUN_NEW);
	CHECK_EQ(c->tid, 2);
	CHECK_EQ(c->lun.lun, 3);
	CHECK_EQ(strlen(c->lun.scsi_id), 16);
	CHECK_STR(c->lun.scsi_sn, c->lun.scsi_id);
	REQUIRE_EQ(model.nr_targets, 2);
	CHECK_STR(model.targets[1].luns[0].scsi_id, c->lun.scsi_id);
	CHECK_EQ(model.targets[0].origin, ORIGIN_FILE);
	config_free(&model);
	fake_reset();
}

TEST(plan_restart_with_the_same_file_changes_nothing)
{
	struct config model = { 0 };
	struct plan p;
	size_t calls;

	start();
	REQUIRE(run(&model, CONF) == 0);
	calls = fake_nr_calls();
	/* A restart: no model yet, the kernel has it all. */
	REQUIRE(make(NULL, CONF, &p) == 0);
	CHECK_EQ(p.nr, 0);
	CHECK_EQ(p.nr_refused, 0);
	CHECK_STR(format(&p), "nothing to change\n");
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	CHECK_EQ(fake_nr_calls(), calls + 1);	/* the dump */
	CHECK_EQ(p.result.nr_targets, 2);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_new_target_and_lun_appear_without_touching_the_rest)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, CONF " Lun 4 Type=nullio\nTarget " OTHER
		     "\n Lun 0 Type=nullio\n", &p) == 0);
	REQUIRE_EQ(p.nr, 3);
	CHECK_EQ(p.steps[0].op, STEP_TARGET_NEW);
	CHECK_EQ(p.steps[0].tid, 3);
	CHECK_EQ(p.steps[1].op, STEP_LUN_NEW);
	CHECK_EQ(p.steps[1].tid, 3);
	CHECK_EQ(p.steps[2].op, STEP_LUN_NEW);
	CHECK_EQ(p.steps[2].tid, 2);
	CHECK_EQ(p.steps[2].lun.lun, 4);
	CHECK_CONTAINS(format(&p), "tid 3 " OTHER ": create\n");
	CHECK_CONTAINS(format(&p), "tid 2 " TARGET2 " LUN 4: add (nullio)\n");
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	CHECK_EQ(fake_count(F_TARGET_DEL) + fake_count(F_LUN_DEL) +
		 fake_count(F_TARGET_SET), 0);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_changed_parameters_are_set_for_new_sessions)
{
	struct config model = { 0 };
	const struct fake_call *c;
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, "Target " TARGET1 "\n Wthreads 6\n InitialR2T No\n"
		     " Lun 0 Type=nullio\n Lun 1 Path=/dev/null\nTarget " TARGET2
		     "\n Lun 3 Type=nullio\n", &p) == 0);
	REQUIRE_EQ(p.nr, 1);
	CHECK_EQ(p.steps[0].op, STEP_TARGET_SET);
	CHECK_CONTAINS(format(&p), "tid 1 " TARGET1
		       ": set InitialR2T=No, Wthreads=6 (new sessions)");
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	/* Session keys and thread count in two calls (the kernel needs it). */
	CHECK_EQ(fake_count(F_TARGET_SET), 2);
	c = fake_last(F_TARGET_SET);
	CHECK_EQ(c->tid, 1);
	CHECK_EQ(fake_state()->targets[0].tparams[IET_TP_WTHREADS], 6);
	CHECK_EQ(fake_state()->targets[0].keys[IET_KEY_INITIAL_R2T], 0);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_removed_target_goes_when_idle_and_stays_while_in_use)
{
	struct config model = { 0 };
	uint16_t cid = 0;
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, "Target " TARGET1 "\n Wthreads 4\n Lun 0 Type=nullio\n"
		     " Lun 1 Path=/dev/null\n", &p) == 0);
	REQUIRE_EQ(p.nr, 1);
	CHECK_EQ(p.steps[0].op, STEP_TARGET_DEL);
	CHECK_EQ(p.steps[0].tid, 2);
	plan_free(&p);

	REQUIRE(fake_add_session(2, make_sid(0x1234, 5), INITIATOR, NULL, &cid,
				 1) == 0);
	REQUIRE(make(&model, "Target " TARGET1 "\n Wthreads 4\n Lun 0 Type=nullio\n"
		     " Lun 1 Path=/dev/null\n", &p) == 0);
	CHECK_EQ(p.nr, 0);
	REQUIRE_EQ(p.nr_refused, 1);
	CHECK_CONTAINS(p.refused[0], "tid 2 " TARGET2
		       ": removed from the configuration, kept: it has 1 session");
	/* Still served, still the file's: the next reload tries again. */
	REQUIRE(config_target_by_tid(&p.result, 2) != NULL);
	CHECK_EQ(config_target_by_tid(&p.result, 2)->origin, ORIGIN_FILE);
	CHECK_EQ(config_target_by_tid(&p.result, 2)->nr_luns, 1);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_lun_removed_or_changed_is_refused_while_the_target_has_sessions)
{
	struct config model = { 0 };
	uint16_t cid = 0;
	struct plan p;
	const char *next = "Target " TARGET1 "\n Wthreads 4\n Lun 0 Type=nullio\n"
			   " Lun 1 Path=/dev/zero\nTarget " TARGET2 "\n";

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, next, &p) == 0);
	/* Idle: LUN 1 replaced (delete, add), LUN 3 removed. */
	REQUIRE_EQ(p.nr, 3);
	CHECK_EQ(p.steps[0].op, STEP_LUN_DEL);
	CHECK_EQ(p.steps[1].op, STEP_LUN_DEL);
	CHECK_EQ(p.steps[2].op, STEP_LUN_NEW);
	CHECK_STR(p.steps[2].lun.path, "/dev/zero");
	plan_free(&p);

	REQUIRE(fake_add_session(1, make_sid(0x1234, 5), INITIATOR, NULL, &cid,
				 1) == 0);
	REQUIRE(fake_add_session(2, make_sid(0x1234, 6), INITIATOR, NULL, &cid,
				 1) == 0);
	REQUIRE(make(&model, next, &p) == 0);
	CHECK_EQ(p.nr, 0);
	REQUIRE_EQ(p.nr_refused, 2);
	CHECK_CONTAINS(format(&p), "refused: tid 1 " TARGET1
		       " LUN 1: changed in the configuration, kept as it runs (/dev/null)");
	CHECK_CONTAINS(format(&p), "refused: tid 2 " TARGET2
		       " LUN 3 (nullio): not in the configuration, kept");
	CHECK_STR(target_lun(config_target_by_tid(&p.result, 1), 1)->path,
		  "/dev/null");
	CHECK(target_lun(config_target_by_tid(&p.result, 2), 3) != NULL);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

/* CONF with LUN 1's argument list extended by args. */
static const char *conf_lun1(const char *args)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "Target " TARGET1 "\n Wthreads 4\n"
		 " Lun 0 Type=nullio\n Lun 1 Path=/dev/null,%s\nTarget "
		 TARGET2 "\n Lun 3 Type=nullio\n", args);
	return buf;
}

TEST(plan_lun_options_changed_replace_the_lun_as_a_block_size_does)
{
	static const char *const changes[] = {
		"BlockSize=4096", "PhysicalBlockSize=4096", "RotationRate=1",
		"ThinProvisioning=No",
	};
	struct config model;
	uint16_t cid = 0;
	struct plan p;
	size_t i;

	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		memset(&model, 0, sizeof(model));
		start();
		REQUIRE(run(&model, CONF) == 0);
		REQUIRE(make(&model, conf_lun1(changes[i]), &p) == 0);
		REQUIRE_EQ(p.nr, 2);
		CHECK_EQ(p.steps[0].op, STEP_LUN_DEL);
		CHECK_EQ(p.steps[0].lun.lun, 1);
		CHECK_EQ(p.steps[1].op, STEP_LUN_NEW);
		CHECK_EQ(p.steps[1].lun.lun, 1);
		plan_free(&p);
		config_free(&model);
	}

	/* The new LUN is what the file says; while in use, it is kept. */
	memset(&model, 0, sizeof(model));
	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(run(&model, conf_lun1("PhysicalBlockSize=4096,RotationRate=1,"
				      "ThinProvisioning=No")) == 0);
	CHECK_EQ(fake_last(F_LUN_NEW)->lun.phys_block_size, 4096);
	CHECK_EQ(fake_last(F_LUN_NEW)->lun.rotation_rate, 1);
	CHECK(fake_last(F_LUN_NEW)->lun.thin_off);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 5), INITIATOR, NULL, &cid,
				 1) == 0);
	REQUIRE(make(&model, CONF, &p) == 0);
	CHECK_EQ(p.nr, 0);
	REQUIRE_EQ(p.nr_refused, 1);
	CHECK_CONTAINS(p.refused[0], " LUN 1: changed in the configuration, "
		       "kept as it runs (/dev/null)");
	CHECK(target_lun(config_target_by_tid(&p.result, 1), 1)->thin_off);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_restart_keeps_luns_whose_options_the_kernel_already_has)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, conf_lun1("PhysicalBlockSize=4096,RotationRate=7200,"
				      "ThinProvisioning=No")) == 0);
	/* A restart: the kernel's dump against the file. */
	REQUIRE(make(NULL, conf_lun1("PhysicalBlockSize=4096,RotationRate=7200,"
				     "ThinProvisioning=No"), &p) == 0);
	CHECK_EQ(p.nr, 0);
	CHECK(target_lun(config_target_by_tid(&p.result, 1), 1)->thin_off);
	plan_free(&p);
	config_free(&model);

	memset(&model, 0, sizeof(model));
	start();
	REQUIRE(run(&model, CONF) == 0);
	/* The kernel's defaults, written out. */
	REQUIRE(make(NULL, conf_lun1("PhysicalBlockSize=512,RotationRate=0,"
				     "ThinProvisioning=Yes"), &p) == 0);
	CHECK_EQ(p.nr, 0);
	plan_free(&p);
	config_free(&model);

	memset(&model, 0, sizeof(model));
	start();
	REQUIRE(run(&model, conf_lun1("BlockSize=4096")) == 0);
	REQUIRE(make(NULL, conf_lun1("BlockSize=4096,PhysicalBlockSize=4096"),
		     &p) == 0);
	CHECK_EQ(p.nr, 0);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_keeps_targets_created_with_ietadm)
{
	struct config model = { 0 };
	struct target_conf t;
	uint32_t tid = 0;
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	target_conf_defaults(&t);
	strcpy(t.name, OTHER);
	REQUIRE(kernel_target_new(&tid, OTHER, t.tparams, t.keys) == 0);
	t.tid = tid;
	t.origin = ORIGIN_ADMIN;
	strcpy(t.redirect, "192.0.2.9:3260");
	config_add_target(&model, &t);
	REQUIRE(make(&model, CONF, &p) == 0);
	CHECK_EQ(p.nr, 0);
	CHECK_EQ(p.nr_refused, 0);
	REQUIRE(config_target_by_name(&p.result, OTHER) != NULL);
	CHECK_EQ(config_target_by_name(&p.result, OTHER)->origin, ORIGIN_ADMIN);
	/* What only ietd knows survives: the redirect. */
	CHECK_STR(config_target_by_name(&p.result, OTHER)->redirect,
		  "192.0.2.9:3260");
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_adopts_kernel_targets_it_knows_nothing_about)
{
	struct config model = { 0 };
	uint32_t tid = 9, tp[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };
	const struct target_conf *t;
	struct plan p;

	start();
	k[IET_KEY_MAX_BURST] = 4096;
	kernel_target_new(&tid, OTHER, tp, k);
	REQUIRE(make(NULL, CONF, &p) == 0);
	t = config_target_by_tid(&p.result, 9);
	REQUIRE(t != NULL);
	CHECK_STR(t->name, OTHER);
	CHECK_EQ(t->keys[IET_KEY_MAX_BURST], 4096);
	CHECK_EQ(t->origin, ORIGIN_KERNEL);
	CHECK_CONTAINS(format(&p), "tid 9 " OTHER
		       ": in the kernel but in neither the configuration nor the state file: logins refused until it is configured again");
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_running_targets_keep_their_tids_and_new_ones_fit_around)
{
	struct config model = { 0 };
	uint32_t tid = 1, tp[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };
	struct plan p;

	start();
	/* The kernel runs TARGET2 as tid 1; the file has it second. */
	kernel_target_new(&tid, TARGET2, tp, k);
	REQUIRE(make(NULL, "Target " TARGET1 "\nTarget " TARGET2 "\n", &p) == 0);
	CHECK_EQ(config_target_by_name(&p.result, TARGET2)->tid, 1);
	CHECK_EQ(config_target_by_name(&p.result, TARGET1)->tid, 2);
	/* The result is in tid order. */
	CHECK_STR(p.result.targets[0].name, TARGET2);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_undoes_everything_when_the_kernel_fails_half_way)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, "Target " TARGET1 "\n Wthreads 2\n Lun 0 Type=nullio\n"
		     "Target " OTHER "\n Lun 0 Type=nullio\n", &p) == 0);
	/* Steps: OTHER create, its LUN, TARGET1 set, LUN 1 and TARGET2 go. */
	fake_fail(F_TARGET_DEL, -EIO, "disk on fire");
	CHECK_EQ(plan_apply(&p, err, sizeof(err)), -EIO);
	CHECK_CONTAINS(err, "tid 2 " TARGET2 ": delete: ");
	CHECK_CONTAINS(err, "disk on fire; nothing changed");
	/* Back as it was: OTHER gone, LUN 1 back, Wthreads 4 again. */
	CHECK_EQ(fake_state()->nr_targets, 2);
	CHECK_EQ(fake_state()->targets[0].tparams[IET_TP_WTHREADS], 4);
	CHECK_EQ(fake_state()->targets[0].nr_luns, 2);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

TEST(plan_reports_model_only_changes)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(make(&model, "IncomingUser disc secretsecret1\n" CONF
		     " IncomingUser joe secretsecret2\n Redirect 192.0.2.1\n",
		     &p) == 0);
	CHECK_EQ(p.nr, 0);
	CHECK_CONTAINS(format(&p), "discovery: CHAP accounts changed (new logins)\n");
	CHECK_CONTAINS(format(&p), "tid 2 " TARGET2
		       ": CHAP accounts, redirect changed (new logins)\n");
	CHECK_EQ(config_target_by_tid(&p.result, 2)->auth.nr_incoming, 1);
	CHECK_EQ(p.result.auth.nr_incoming, 1);
	plan_free(&p);
	config_free(&model);
	fake_reset();
}

#define GROUPS	"PortalGroup 2 192.0.2.2\nPortalGroup 3 192.0.2.3\n"

static bool kernel_groups(uint32_t tid, const char *want)
{
	const struct kstate *st = fake_state();
	char have[128] = "";
	size_t i, j, n = 0;

	for (i = 0; i < st->nr_targets; i++) {
		if (st->targets[i].tid != tid)
			continue;
		for (j = 0; j < st->targets[i].nr_tpgs; j++)
			n += snprintf(have + n, sizeof(have) - n, "%u ",
				      st->targets[i].tpgs[j].tag);
	}
	if (strcmp(have, want))
		fprintf(stderr, "tid %u has groups \"%s\", not \"%s\"\n", tid,
			have, want);
	return !strcmp(have, want);
}

TEST(plan_gives_every_target_the_configured_portal_groups)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, GROUPS CONF) == 0);
	CHECK(kernel_groups(1, "3 2 ") || kernel_groups(1, "2 3 "));
	CHECK(kernel_groups(2, "3 2 ") || kernel_groups(2, "2 3 "));
	CHECK_EQ(fake_count(F_TPG_SET), 4);
	/* Nothing of kinds for a single node: a module older than them takes it. */
	CHECK_EQ(fake_last(F_TPG_SET)->tpg_remote, TPG_KIND_KEEP);
	CHECK_EQ(fake_count(F_TPG_DEL), 2);		/* group 1 of each */
	CHECK_EQ(model.nr_groups, 2);
	/* Again: nothing to do. */
	REQUIRE(make(&model, GROUPS CONF, &p) == 0);
	CHECK_STR(format(&p), "nothing to change\n");
	plan_free(&p);
	/* Back to no PortalGroup lines: group 1 again, 2 and 3 go. */
	REQUIRE(run(&model, CONF) == 0);
	CHECK(kernel_groups(1, "1 "));
	CHECK(kernel_groups(2, "1 "));
	config_free(&model);
}

/* The global settings ietd acts on by itself live in the model it runs. */
TEST(plan_carries_the_global_settings_into_the_running_model)
{
	struct config model = { 0 };

	start();
	REQUIRE(run(&model, "MetricsFile /run/iet/iet.prom\nMetricsInterval 5\n"
		    "iSNSServer 192.0.2.1\n" CONF) == 0);
	CHECK_STR(model.metrics_file, "/run/iet/iet.prom");
	CHECK_EQ(model.metrics_interval, 5);
	CHECK_STR(model.isns_server, "192.0.2.1");
	/* A reload that drops them stops them. */
	REQUIRE(run(&model, CONF) == 0);
	CHECK_STR(model.metrics_file, "");
	CHECK_EQ(model.metrics_interval, 0);
	CHECK_STR(model.isns_server, "");
	config_free(&model);
}

static size_t kernel_sessions(uint32_t tid)
{
	const struct kstate *st = fake_state();
	size_t i;

	for (i = 0; i < st->nr_targets; i++)
		if (st->targets[i].tid == tid)
			return st->targets[i].nr_sessions;
	return 0;
}

TEST(plan_lets_the_sessions_of_a_group_that_goes_log_out)
{
	struct config model = { 0 };
	struct plan p;
	char *text;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(fake_add_session(1, 0x1234, INITIATOR, NULL, NULL, 0) == 0);
	REQUIRE(make(&model, GROUPS CONF, &p) == 0);
	text = format(&p);
	CHECK_CONTAINS(text, "tid 1 " TARGET1 ": add portal group 2");
	CHECK_CONTAINS(text, "tid 1 " TARGET1 ": remove portal group 1, its sessions asked to log out");
	CHECK_CONTAINS(text, "tid 2 " TARGET2 ": remove portal group 1\n");
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	plan_free(&p);
	/* Asked once, for the group of target 1 only, and gone. */
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->tid, 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->tpgt, 1);
	CHECK_EQ(fake_last(F_LOGOUT_REQ)->logout_wait, LOGOUT_WAIT_DEFAULT);
	CHECK_EQ(kernel_sessions(1), 0);
	CHECK(kernel_groups(1, "2 3 ") || kernel_groups(1, "3 2 "));
	CHECK(kernel_groups(2, "2 3 ") || kernel_groups(2, "3 2 "));
	config_free(&model);
}

TEST(plan_closes_the_sessions_of_a_group_that_goes_if_they_stay)
{
	struct config model = { 0 };
	struct plan p;

	start();
	REQUIRE(run(&model, CONF) == 0);
	REQUIRE(fake_add_session(1, 0x1234, INITIATOR, NULL, NULL, 0) == 0);
	/* The kernel cannot ask (or nobody listens): ietd closes them. */
	fake_fail(F_LOGOUT_REQ, -EIO, "no");
	REQUIRE(make(&model, GROUPS CONF, &p) == 0);
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	plan_free(&p);
	CHECK_EQ(fake_count(F_SESSION_DEL), 1);
	CHECK_EQ(kernel_sessions(1), 0);
	CHECK(kernel_groups(1, "2 3 ") || kernel_groups(1, "3 2 "));
	config_free(&model);
}

static const struct ktpg *kernel_group(uint32_t tid, uint16_t tag)
{
	const struct kstate *st = fake_state();
	size_t i, j;

	for (i = 0; i < st->nr_targets; i++)
		for (j = 0; st->targets[i].tid == tid &&
			    j < st->targets[i].nr_tpgs; j++)
			if (st->targets[i].tpgs[j].tag == tag)
				return &st->targets[i].tpgs[j];
	return NULL;
}

static bool kernel_has_group(uint32_t tid, uint16_t tag)
{
	return kernel_group(tid, tag) != NULL;
}

/*
 * Target 1's group 1 made to go (PortalGroup lines added) while a session
 * uses it, whose initiator does not log out until fake_logout_go(): the
 * plan made, not applied.
 */
static bool plan_group_goes_under_a_session(struct config *model, struct plan *p)
{
	start();
	if (run(model, CONF) ||
	    fake_add_session(1, 0x1234, INITIATOR, NULL, NULL, 0))
		return false;
	fake_logout_held(true);
	return make(model, GROUPS CONF, p) == 0;
}

TEST(plan_does_not_wait_for_the_sessions_of_a_group_that_goes)
{
	struct config model = { 0 };
	struct plan p;

	REQUIRE(plan_group_goes_under_a_session(&model, &p));
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	plan_free(&p);
	/* Applied at once: group 1 of target 1 stays while its session does. */
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	CHECK(tpg_retiring(1, 1));
	CHECK(kernel_has_group(1, 1));
	CHECK(kernel_has_group(1, 2));
	CHECK(!kernel_has_group(2, 1));		/* no sessions: at once */
	CHECK_EQ(kernel_sessions(1), 1);
	/* Asked again by a second plan: nothing new. */
	CHECK_EQ(tpg_retire(1, 1, LOGOUT_WAIT_DEFAULT), 0);
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	tpg_retire_poll(now_ms());
	CHECK(kernel_has_group(1, 1));
	/* It logs out: the next poll takes the group. */
	fake_logout_go();
	tpg_retire_poll(now_ms());
	CHECK(!tpg_retiring(1, 1));
	CHECK(!kernel_has_group(1, 1));
	CHECK_EQ(fake_count(F_SESSION_DEL), 0);
	CHECK_EQ(tpg_retire_pending(), 0);
	fake_logout_held(false);
	config_free(&model);
}

TEST(plan_closes_what_stays_in_a_group_that_goes_once_its_time_is_up)
{
	struct config model = { 0 };
	struct plan p;

	REQUIRE(plan_group_goes_under_a_session(&model, &p));
	REQUIRE(plan_apply(&p, err, sizeof(err)) == 0);
	plan_free(&p);
	tpg_retire_poll(now_ms());
	CHECK(kernel_has_group(1, 1));
	CHECK_EQ(fake_count(F_SESSION_DEL), 0);
	/* Past the wait and its slack: ietd closes it, then the group goes. */
	tpg_retire_poll(now_ms() + (LOGOUT_WAIT_DEFAULT + 5) * 1000ULL);
	CHECK_EQ(fake_count(F_SESSION_DEL), 1);
	CHECK_EQ(kernel_sessions(1), 0);
	CHECK(!kernel_has_group(1, 1));
	CHECK_EQ(tpg_retire_pending(), 0);
	fake_logout_go();
	fake_logout_held(false);
	config_free(&model);
}

TEST(plan_undone_keeps_a_group_that_was_going)
{
	struct config model = { 0 };
	struct plan p;

	REQUIRE(plan_group_goes_under_a_session(&model, &p));
	/* A step after the group's removal fails: everything is undone. */
	fake_fail(F_TPG_DEL, -EIO, "no");
	CHECK(plan_apply(&p, err, sizeof(err)) != 0);
	plan_free(&p);
	CHECK(!tpg_retiring(1, 1));
	CHECK(kernel_has_group(1, 1));
	CHECK_EQ(tpg_retire_pending(), 0);
	fake_logout_go();
	fake_logout_held(false);
	config_free(&model);
}

/* Where in the calls made the first (or last) of op on tid is; -1: none. */
static long call_at(enum fake_op op, uint32_t tid, bool last)
{
	long at = -1;
	size_t i;

	for (i = 0; i < fake_nr_calls(); i++)
		if (fake_call(i)->op == op && fake_call(i)->tid == tid) {
			at = (long)i;
			if (!last)
				break;
		}
	return at;
}

#define HA_A	"PortalGroup 1 192.0.2.1\nRemotePortalGroup 2\n"
#define HA_B	"PortalGroup 2 192.0.2.2\nRemotePortalGroup 1\n"

/*
 * A node of an HA pair claims nothing until its cluster manager says so:
 * its own group starts standby (so that its LUNs' backings stay closed),
 * the other node's is there, standby, before any LUN is added.
 */
TEST(plan_gives_a_node_of_an_ha_pair_its_groups_standby_before_its_luns)
{
	struct config model = { 0 };
	const struct ktpg *g;
	size_t i, sets;

	for (i = 0; i < 2; i++) {
		const char *conf = i ? HA_B CONF : HA_A CONF;
		uint16_t own = i ? 2 : 1, other = i ? 1 : 2;

		start();
		REQUIRE(run(&model, conf) == 0);
		g = kernel_group(1, own);
		REQUIRE(g != NULL);
		CHECK(!g->remote);
		CHECK_EQ(g->state, IET_ALUA_STANDBY);
		g = kernel_group(1, other);
		REQUIRE(g != NULL);
		CHECK(g->remote);
		CHECK_EQ(g->state, IET_ALUA_STANDBY);
		CHECK(kernel_groups(2, "1 2 ") || kernel_groups(2, "2 1 "));
		/* Every group is set before the target's first LUN is added. */
		CHECK(call_at(F_TPG_SET, 1, true) >= 0);
		CHECK(call_at(F_TPG_SET, 1, true) < call_at(F_LUN_NEW, 1, false));
		CHECK(call_at(F_TPG_SET, 2, true) < call_at(F_LUN_NEW, 2, false));
		/* A restart finds them as they are: their states stay. */
		sets = fake_count(F_TPG_SET);
		REQUIRE(run(&model, conf) == 0);
		CHECK_EQ(fake_count(F_TPG_SET), sets);
		config_free(&model);
		memset(&model, 0, sizeof(model));
	}
}

TEST(plan_changes_a_groups_kind_and_undoes_it)
{
	struct config model = { 0 };
	const struct ktpg *g;

	start();
	REQUIRE(run(&model, "PortalGroup 1 192.0.2.1\nPortalGroup 2 192.0.2.2\n"
		    CONF) == 0);
	CHECK_EQ(kernel_group(1, 2)->state, IET_ALUA_ACTIVE_OPTIMIZED);
	/* Group 2 becomes the other node's: set, not made again. */
	REQUIRE(run(&model, HA_A CONF) == 0);
	CHECK_EQ(fake_count(F_TPG_DEL), 0);
	g = kernel_group(1, 2);
	REQUIRE(g != NULL);
	CHECK(g->remote);
	CHECK_EQ(g->state, IET_ALUA_STANDBY);
	/* A kernel that fails later: group 2 is this node's again, active. */
	REQUIRE(run(&model, "PortalGroup 1 192.0.2.1\nPortalGroup 2 192.0.2.2\n"
		    CONF) == 0);
	fake_fail(F_LUN_NEW, -EIO, "no");
	CHECK_EQ(run(&model, HA_A "Target " OTHER "\n Lun 0 Type=nullio\n" CONF),
		 -EIO);
	g = kernel_group(1, 2);
	REQUIRE(g != NULL);
	CHECK(!g->remote);
	CHECK_EQ(g->state, IET_ALUA_ACTIVE_OPTIMIZED);
	config_free(&model);
}

TEST(plan_undoes_portal_groups_when_the_kernel_fails)
{
	struct config model = { 0 };

	start();
	REQUIRE(run(&model, CONF) == 0);
	fake_fail(F_TPG_DEL, -EIO, "no");
	CHECK_EQ(run(&model, GROUPS CONF), -EIO);
	CHECK_CONTAINS(err, "remove portal group 1");
	CHECK(kernel_groups(1, "1 "));
	CHECK(kernel_groups(2, "1 "));
	config_free(&model);
}
