// SPDX-License-Identifier: GPL-2.0
/* Start-up reconciliation of the configuration with the kernel's state. */
#include <errno.h>

#include "helpers.h"
#include "kernel_fake.h"
#include "reconcile.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n Wthreads 4\n Lun 0 Type=nullio\n" \
		" Lun 1 Path=/dev/null\nTarget " TARGET2 "\n Lun 3 Type=nullio\n"

static char err[1024];

static int reconcile_with_kernel(struct config *cfg)
{
	struct kstate st;
	int ret;

	kernel_dump(&st);
	ret = reconcile(cfg, &st, err, sizeof(err));
	kstate_free(&st);
	return ret;
}

TEST(reconcile_creates_targets_and_luns_with_config_tids)
{
	struct config cfg;
	const struct fake_call *c;

	fake_reset();
	kernel_open();
	config_of(&cfg, CONF);
	REQUIRE(reconcile_with_kernel(&cfg) == 0);
	CHECK_EQ(fake_count(F_TARGET_NEW), 2);
	CHECK_EQ(fake_count(F_LUN_NEW), 3);
	c = fake_call(2);	/* after open and dump */
	REQUIRE(c && c->op == F_TARGET_NEW);
	CHECK_EQ(c->tid, 1);
	CHECK_STR(c->name, TARGET1);
	CHECK_EQ(c->tparams[IET_TP_WTHREADS], 4);
	CHECK_EQ(c->keys[IET_KEY_MAX_BURST], 262144);
	c = fake_last(F_LUN_NEW);
	CHECK_EQ(c->tid, 2);
	CHECK_EQ(c->lun.lun, 3);
	CHECK_EQ(strlen(c->lun.scsi_id), 16);
	CHECK_STR(c->lun.scsi_sn, c->lun.scsi_id);
	CHECK_STR(cfg.targets[1].luns[0].scsi_id, c->lun.scsi_id);
	config_free(&cfg);
	fake_reset();
}

TEST(reconcile_keeps_what_the_kernel_already_has)
{
	struct config cfg;

	fake_reset();
	kernel_open();
	config_of(&cfg, CONF);
	REQUIRE(reconcile_with_kernel(&cfg) == 0);
	config_free(&cfg);
	/* ietd restarts with the same configuration and one LUN more. */
	config_of(&cfg, CONF " Lun 4 Type=nullio\n");
	REQUIRE(reconcile_with_kernel(&cfg) == 0);
	CHECK_EQ(fake_count(F_TARGET_NEW), 2);
	CHECK_EQ(fake_count(F_LUN_NEW), 4);
	CHECK_EQ(fake_last(F_LUN_NEW)->lun.lun, 4);
	CHECK_EQ(fake_count(F_TARGET_DEL) + fake_count(F_LUN_DEL), 0);
	config_free(&cfg);
	fake_reset();
}

TEST(reconcile_refuses_a_tid_the_kernel_has_under_another_name)
{
	struct config cfg;
	uint32_t tid = 1, p[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };

	fake_reset();
	kernel_open();
	kernel_target_new(&tid, "iqn.2001-04.com.example:other", p, k);
	config_of(&cfg, CONF);
	CHECK_EQ(reconcile_with_kernel(&cfg), -EEXIST);
	CHECK_CONTAINS(err, "the kernel has tid 1 as iqn.2001-04.com.example:other");
	/* Refused before touching anything. */
	CHECK_EQ(fake_count(F_TARGET_NEW), 1);
	CHECK_EQ(fake_count(F_LUN_NEW), 0);
	config_free(&cfg);
	fake_reset();
}

TEST(reconcile_refuses_a_name_the_kernel_has_under_another_tid)
{
	struct config cfg;
	uint32_t tid = 7, p[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };

	fake_reset();
	kernel_open();
	kernel_target_new(&tid, TARGET2, p, k);
	config_of(&cfg, CONF);
	CHECK_EQ(reconcile_with_kernel(&cfg), -EEXIST);
	CHECK_CONTAINS(err, "as tid 7");
	config_free(&cfg);
	fake_reset();
}

TEST(reconcile_undoes_its_own_changes_when_the_kernel_fails)
{
	struct config cfg;

	fake_reset();
	kernel_open();
	config_of(&cfg, CONF);
	fake_fail(F_LUN_NEW, -ENOENT, "no such file");
	CHECK_EQ(reconcile_with_kernel(&cfg), -ENOENT);
	CHECK_CONTAINS(err, "tid 1 LUN 0");
	CHECK_CONTAINS(err, "no such file");
	CHECK_EQ(fake_count(F_TARGET_DEL), 1);
	CHECK_EQ(fake_state()->nr_targets, 0);
	config_free(&cfg);
	fake_reset();
}

TEST(reconcile_adopts_targets_only_the_kernel_knows)
{
	struct config cfg;
	uint32_t tid = 9, p[IET_TP_COUNT] = { 0 }, k[IET_KEY_COUNT] = { 0 };
	const struct target_conf *t;

	fake_reset();
	kernel_open();
	k[IET_KEY_MAX_BURST] = 4096;
	kernel_target_new(&tid, "iqn.2001-04.com.example:kept", p, k);
	config_of(&cfg, CONF);
	REQUIRE(reconcile_with_kernel(&cfg) == 0);
	REQUIRE_EQ(cfg.nr_targets, 3);
	t = config_target_by_tid(&cfg, 9);
	REQUIRE(t != NULL);
	CHECK_STR(t->name, "iqn.2001-04.com.example:kept");
	CHECK_EQ(t->keys[IET_KEY_MAX_BURST], 4096);
	CHECK_EQ(t->line, 0);
	config_free(&cfg);
	fake_reset();
}
