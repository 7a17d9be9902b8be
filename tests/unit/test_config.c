// SPDX-License-Identifier: GPL-2.0
/* The ietd.conf parser: good files, and every kind of error. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "config.h"
#include "helpers.h"
#include "test.h"

static char err[1024];

static int parse(const char *text, struct config *cfg)
{
	err[0] = '\0';
	return config_parse(text, strlen(text), "ietd.conf", cfg, err,
			    sizeof(err));
}

/* The config fails with an error that starts with prefix and says what. */
static void fails(const char *text, const char *prefix, const char *what,
		  int line)
{
	struct config cfg;

	if (parse(text, &cfg) == 0) {
		test_fail(__FILE__, line, "accepted: %s", text);
		config_free(&cfg);
		return;
	}
	if (strncmp(err, prefix, strlen(prefix)))
		test_fail(__FILE__, line, "\"%s\" does not start with \"%s\"",
			  err, prefix);
	if (what && !strstr(err, what))
		test_fail(__FILE__, line, "\"%s\" lacks \"%s\"", err, what);
	if (strchr(err, '\n'))
		test_fail(__FILE__, line, "error is not one line: %s", err);
	CHECK_EQ(cfg.nr_targets, 0);
	CHECK(cfg.targets == NULL);
}
#define FAILS(text, prefix, what) fails(text, prefix, what, __LINE__)

TEST(config_empty_file_has_no_targets)
{
	struct config cfg;

	REQUIRE(parse("", &cfg) == 0);
	CHECK_EQ(cfg.nr_targets, 0);
	config_free(&cfg);
}

TEST(config_comments_and_blank_lines_are_ignored)
{
	struct config cfg;

	REQUIRE(parse("# comment\n\n   # indented comment\n\t\n", &cfg) == 0);
	CHECK_EQ(cfg.nr_targets, 0);
	config_free(&cfg);
}

TEST(config_assigns_tids_in_file_order_from_one)
{
	struct config cfg;

	REQUIRE(parse("Target " TARGET1 "\nTarget " TARGET2 "\n", &cfg) == 0);
	REQUIRE_EQ(cfg.nr_targets, 2);
	CHECK_EQ(cfg.targets[0].tid, 1);
	CHECK_STR(cfg.targets[0].name, TARGET1);
	CHECK_EQ(cfg.targets[0].line, 1);
	CHECK_EQ(cfg.targets[1].tid, 2);
	CHECK_EQ(cfg.targets[1].line, 2);
	config_free(&cfg);
}

TEST(config_target_gets_iet_defaults)
{
	struct config cfg;
	const struct target_conf *t;

	REQUIRE(parse("Target " TARGET1 "\n", &cfg) == 0);
	t = &cfg.targets[0];
	CHECK_EQ(t->tparams[IET_TP_WTHREADS], 8);
	CHECK_EQ(t->tparams[IET_TP_QUEUED_CMDS], 128);
	CHECK_EQ(t->tparams[IET_TP_NOP_INTERVAL], 10);
	CHECK_EQ(t->tparams[IET_TP_NOP_TIMEOUT], 15);
	CHECK_EQ(t->keys[IET_KEY_INITIAL_R2T], 1);
	CHECK_EQ(t->keys[IET_KEY_IMMEDIATE_DATA], 1);
	CHECK_EQ(t->keys[IET_KEY_MAX_CONNECTIONS], 1);
	CHECK_EQ(t->keys[IET_KEY_MAX_RECV_DSL], 8192);
	CHECK_EQ(t->keys[IET_KEY_MAX_XMIT_DSL], 8192);
	CHECK_EQ(t->keys[IET_KEY_MAX_BURST], 262144);
	CHECK_EQ(t->keys[IET_KEY_FIRST_BURST], 65536);
	CHECK_EQ(t->keys[IET_KEY_DEFAULT_TIME2WAIT], 2);
	CHECK_EQ(t->keys[IET_KEY_DEFAULT_TIME2RETAIN], 0);
	CHECK_EQ(t->keys[IET_KEY_MAX_OUTSTANDING_R2T], 1);
	CHECK_EQ(t->keys[IET_KEY_DATA_PDU_INORDER], 1);
	CHECK_EQ(t->keys[IET_KEY_DATA_SEQUENCE_INORDER], 1);
	CHECK_EQ(t->keys[IET_KEY_ERROR_RECOVERY_LEVEL], 0);
	CHECK_EQ(t->keys[IET_KEY_HEADER_DIGEST], DIGEST_MASK_NONE);
	CHECK_EQ(t->keys[IET_KEY_DATA_DIGEST], DIGEST_MASK_NONE);
	CHECK_EQ(t->max_sessions, 0);
	CHECK_STR(t->alias, "");
	config_free(&cfg);
}

TEST(config_sets_every_target_key)
{
	static const char text[] =
		"Target " TARGET1 "\n"
		"  Alias My Disk One\n"
		"  MaxSessions 4\n"
		"  HeaderDigest None,CRC32C\n"
		"  DataDigest CRC32C\n"
		"  MaxConnections 2\n"
		"  InitialR2T No\n"
		"  ImmediateData No\n"
		"  MaxRecvDataSegmentLength 262144\n"
		"  MaxXmitDataSegmentLength 0x10000\n"
		"  MaxBurstLength 1048576\n"
		"  FirstBurstLength 262144\n"
		"  DefaultTime2Wait 5\n"
		"  DefaultTime2Retain 20\n"
		"  MaxOutstandingR2T 8\n"
		"  DataPDUInOrder Yes\n"
		"  DataSequenceInOrder Yes\n"
		"  ErrorRecoveryLevel 0\n"
		"  OFMarker No\n"
		"  IFMarker Yes\n"
		"  OFMarkInt 2048\n"
		"  IFMarkInt 1024~4096\n"
		"  Wthreads 16\n"
		"  QueuedCommands 256\n"
		"  NOPInterval 0\n"
		"  NOPTimeout 30\n"
		"  AllowTargetReset Yes\n";
	struct config cfg;
	const struct target_conf *t;

	REQUIRE(parse(text, &cfg) == 0);
	t = &cfg.targets[0];
	CHECK_STR(t->alias, "My Disk One");
	CHECK_EQ(t->max_sessions, 4);
	CHECK_EQ(t->keys[IET_KEY_HEADER_DIGEST],
		 DIGEST_MASK_NONE | DIGEST_MASK_CRC32C);
	CHECK_EQ(t->keys[IET_KEY_DATA_DIGEST], DIGEST_MASK_CRC32C);
	CHECK_EQ(t->keys[IET_KEY_MAX_CONNECTIONS], 2);
	CHECK_EQ(t->keys[IET_KEY_INITIAL_R2T], 0);
	CHECK_EQ(t->keys[IET_KEY_IMMEDIATE_DATA], 0);
	CHECK_EQ(t->keys[IET_KEY_MAX_RECV_DSL], 262144);
	CHECK_EQ(t->keys[IET_KEY_MAX_XMIT_DSL], 65536);
	CHECK_EQ(t->keys[IET_KEY_MAX_BURST], 1048576);
	CHECK_EQ(t->keys[IET_KEY_FIRST_BURST], 262144);
	CHECK_EQ(t->keys[IET_KEY_DEFAULT_TIME2WAIT], 5);
	CHECK_EQ(t->keys[IET_KEY_DEFAULT_TIME2RETAIN], 20);
	CHECK_EQ(t->keys[IET_KEY_MAX_OUTSTANDING_R2T], 8);
	CHECK_EQ(t->tparams[IET_TP_WTHREADS], 16);
	CHECK_EQ(t->tparams[IET_TP_QUEUED_CMDS], 256);
	CHECK_EQ(t->tparams[IET_TP_NOP_INTERVAL], 0);
	CHECK_EQ(t->tparams[IET_TP_NOP_TIMEOUT], 30);
	CHECK_EQ(t->tparams[IET_TP_TARGET_RESET], 1);
	config_free(&cfg);
}

TEST(config_key_names_are_case_insensitive)
{
	struct config cfg;

	REQUIRE(parse("target " TARGET1 "\n maxconnections 4\n"
		      " IMMEDIATEDATA no\n lun 0 type=NULLIO,iomode=WB\n",
		      &cfg) == 0);
	CHECK_EQ(cfg.targets[0].keys[IET_KEY_MAX_CONNECTIONS], 4);
	CHECK_EQ(cfg.targets[0].keys[IET_KEY_IMMEDIATE_DATA], 0);
	CHECK_EQ(cfg.targets[0].luns[0].type, IET_LUN_NULLIO);
	CHECK_EQ(cfg.targets[0].luns[0].iomode, IET_IOMODE_WB);
	config_free(&cfg);
}

TEST(config_tolerates_crlf_line_ends_and_tabs)
{
	struct config cfg;

	REQUIRE(parse("Target " TARGET1 "\r\n\tMaxSessions\t2\r\n", &cfg) == 0);
	CHECK_EQ(cfg.targets[0].max_sessions, 2);
	config_free(&cfg);
}

TEST(config_parses_lun_lines)
{
	static const char text[] =
		"Target " TARGET1 "\n"
		"  Lun 0 Path=/dev/vg0/lv0,Type=fileio\n"
		"  Lun 1 Path=/srv/disk.img,IOMode=ro,ScsiId=abc,ScsiSN=SN1,BlockSize=4096\n"
		"  Lun 16383 Type=nullio,Blocks=2097152\n";
	struct config cfg;
	const struct lun_conf *l;

	REQUIRE(parse(text, &cfg) == 0);
	REQUIRE_EQ(cfg.targets[0].nr_luns, 3);
	l = cfg.targets[0].luns;
	CHECK_EQ(l[0].lun, 0);
	CHECK_EQ(l[0].type, IET_LUN_FILEIO);
	CHECK_EQ(l[0].iomode, IET_IOMODE_WT);
	CHECK_STR(l[0].path, "/dev/vg0/lv0");
	CHECK_EQ(l[0].block_size, 512);
	CHECK_STR(l[0].scsi_id, "");
	CHECK_EQ(l[0].line, 2);
	CHECK_EQ(l[1].iomode, IET_IOMODE_RO);
	CHECK_STR(l[1].scsi_id, "abc");
	CHECK_STR(l[1].scsi_sn, "SN1");
	CHECK_EQ(l[1].block_size, 4096);
	CHECK_EQ(l[2].lun, 16383);
	CHECK_EQ(l[2].type, IET_LUN_NULLIO);
	CHECK_STR(l[2].path, "");
	CHECK_EQ(l[2].blocks, 2097152);
	config_free(&cfg);
}

TEST(config_parses_physical_block_size_rotation_rate_and_thin_provisioning)
{
	static const char text[] =
		"Target " TARGET1 "\n"
		"  Lun 0 Path=/a\n"
		"  Lun 1 Path=/b,PhysicalBlockSize=4096,RotationRate=1,"
		"ThinProvisioning=No\n"
		"  Lun 2 Path=/c,physicalblocksize=32768,BlockSize=4096,"
		"ROTATIONRATE=7200,thinprovisioning=yes\n"
		"  Lun 3 Path=/d,PhysicalBlockSize=512,RotationRate=0x401,"
		"ThinProvisioning=NO\n"
		"  Lun 4 Path=/e,BlockSize=2048,PhysicalBlockSize=2048,"
		"RotationRate=65534\n";
	struct config cfg;
	const struct lun_conf *l;

	REQUIRE(parse(text, &cfg) == 0);
	REQUIRE_EQ(cfg.targets[0].nr_luns, 5);
	l = cfg.targets[0].luns;
	/* The defaults: as BlockSize, not reported, thin where it can be. */
	CHECK_EQ(l[0].phys_block_size, 0);
	CHECK_EQ(lun_phys_block_size(&l[0]), 512);
	CHECK_EQ(l[0].rotation_rate, 0);
	CHECK(!l[0].thin_off);
	CHECK_EQ(l[1].phys_block_size, 4096);
	CHECK_EQ(l[1].block_size, 512);
	CHECK_EQ(l[1].rotation_rate, 1);
	CHECK(l[1].thin_off);
	/* Before BlockSize in the list or after, checked against it. */
	CHECK_EQ(l[2].phys_block_size, 32768);
	CHECK_EQ(l[2].block_size, 4096);
	CHECK_EQ(l[2].rotation_rate, 7200);
	CHECK(!l[2].thin_off);
	CHECK_EQ(lun_phys_block_size(&l[3]), 512);
	CHECK_EQ(l[3].rotation_rate, 0x401);
	CHECK(l[3].thin_off);
	CHECK_EQ(lun_phys_block_size(&l[4]), 2048);
	CHECK_EQ(l[4].rotation_rate, 65534);
	config_free(&cfg);
}

TEST(config_parses_mode_select_against_the_iomode_it_comes_with)
{
	static const char text[] =
		"Target " TARGET1 "\n"
		"  Lun 0 Path=/a\n"
		"  Lun 1 Path=/b,IOMode=wb\n"
		"  Lun 2 Path=/c,ModeSelect=Yes\n"
		"  Lun 3 Path=/d,modeselect=no,IOMode=wb\n"
		"  Lun 4 Path=/e,ModeSelect=No\n"
		"  Lun 5 Path=/f,ModeSelect=Yes,IOMode=ro\n";
	struct config cfg;
	const struct lun_conf *l;

	REQUIRE(parse(text, &cfg) == 0);
	REQUIRE_EQ(cfg.targets[0].nr_luns, 6);
	l = cfg.targets[0].luns;
	/* Write-through: no initiator turns the write cache on for all. */
	CHECK(!lun_mode_select(&l[0]));
	CHECK(lun_mode_select(&l[1]));
	CHECK(lun_mode_select(&l[2]));
	CHECK_EQ(l[2].mode_select, MODE_SELECT_YES);
	CHECK(!lun_mode_select(&l[3]));
	CHECK_EQ(l[3].mode_select, MODE_SELECT_NO);
	/* As the IOMode says anyway: kept as the default, not written. */
	CHECK_EQ(l[4].mode_select, MODE_SELECT_DEFAULT);
	CHECK_EQ(l[5].mode_select, MODE_SELECT_DEFAULT);
	CHECK(lun_mode_select(&l[5]));
	config_free(&cfg);
}

TEST(config_error_physical_block_size_rotation_rate_and_thin_provisioning)
{
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ModeSelect=1\n",
	      "ietd.conf:2: Lun: ", "ModeSelect: \"1\" is not Yes or No");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ModeSelect=No,"
	      "ModeSelect=Yes\n", "ietd.conf:2: Lun: ",
	      "ModeSelect: given twice");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,PhysicalBlockSize=256\n",
	      "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: \"256\" is not a power of 2 from 512 to 32768");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,PhysicalBlockSize=3000\n",
	      "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: \"3000\" is not a power of 2 from 512 to 32768");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,PhysicalBlockSize=65536\n",
	      "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: \"65536\" is not a power of 2 from 512 to 32768");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,PhysicalBlockSize=4k\n",
	      "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: \"4k\" is not a power of 2 from 512 to 32768");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,BlockSize=4096,"
	      "PhysicalBlockSize=2048\n", "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: 2048 is smaller than BlockSize 4096");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,PhysicalBlockSize=1024,"
	      "BlockSize=2048\n", "ietd.conf:2: Lun: ",
	      "PhysicalBlockSize: 1024 is smaller than BlockSize 2048");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=2\n",
	      "ietd.conf:2: Lun: ",
	      "RotationRate: \"2\" is not 0 (not reported), 1 (non-rotating) "
	      "or 1025..65534 (rpm)");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=1024\n",
	      "ietd.conf:2: Lun: ",
	      "RotationRate: \"1024\" is not 0 (not reported), 1 (non-rotating) "
	      "or 1025..65534 (rpm)");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=0xffff\n",
	      "ietd.conf:2: Lun: ",
	      "RotationRate: \"0xffff\" is not 0 (not reported), 1 (non-rotating) "
	      "or 1025..65534 (rpm)");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=-1\n",
	      "ietd.conf:2: Lun: ",
	      "RotationRate: \"-1\" is not 0 (not reported), 1 (non-rotating) "
	      "or 1025..65534 (rpm)");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=ssd\n",
	      "ietd.conf:2: Lun: ",
	      "RotationRate: \"ssd\" is not 0 (not reported), 1 (non-rotating) "
	      "or 1025..65534 (rpm)");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ThinProvisioning=maybe\n",
	      "ietd.conf:2: Lun: ",
	      "ThinProvisioning: \"maybe\" is not Yes or No");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ThinProvisioning=0\n",
	      "ietd.conf:2: Lun: ",
	      "ThinProvisioning: \"0\" is not Yes or No");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ThinProvisioning=No,"
	      "thinprovisioning=No\n", "ietd.conf:2: Lun: ",
	      "ThinProvisioning: given twice");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,RotationRate=\n",
	      "ietd.conf:2: Lun: ", "RotationRate: missing value");
}

TEST(config_reads_isns_server_with_and_without_port)
{
	struct config cfg;
	char host[256];
	uint16_t port;

	REQUIRE(parse("iSNSServer 192.0.2.1\niSNSAccessControl Yes\nTarget "
		      TARGET1 "\n", &cfg) == 0);
	CHECK_STR(cfg.isns_server, "192.0.2.1");
	CHECK(cfg.isns_access_control);
	config_free(&cfg);
	REQUIRE(isns_server_split("192.0.2.1", host, sizeof(host), &port) == 0);
	CHECK_STR(host, "192.0.2.1");
	CHECK_EQ(port, 3205);
	REQUIRE(isns_server_split("[2001:db8::5]:4000", host, sizeof(host),
				  &port) == 0);
	CHECK_STR(host, "2001:db8::5");
	CHECK_EQ(port, 4000);
	REQUIRE(isns_server_split("isns.example.com:3206", host, sizeof(host),
				  &port) == 0);
	CHECK_STR(host, "isns.example.com");
	CHECK_EQ(port, 3206);
}

TEST(config_reads_the_metrics_file_and_interval)
{
	struct config cfg;

	REQUIRE(parse("MetricsFile /var/lib/prometheus/node-exporter/iet.prom\n"
		      "MetricsInterval 30\nTarget " TARGET1 "\n", &cfg) == 0);
	CHECK_STR(cfg.metrics_file,
		  "/var/lib/prometheus/node-exporter/iet.prom");
	CHECK_EQ(cfg.metrics_interval, 30);
	config_free(&cfg);
	REQUIRE(parse("Target " TARGET1 "\n", &cfg) == 0);
	CHECK_STR(cfg.metrics_file, "");
	CHECK_EQ(cfg.metrics_interval, 0);
	config_free(&cfg);
}

TEST(config_refuses_a_malformed_metrics_file_or_interval)
{
	FAILS("MetricsFile iet.prom\n", "ietd.conf:1: MetricsFile: ",
	      "absolute file name");
	FAILS("MetricsFile /var/lib/\n", "ietd.conf:1: MetricsFile: ",
	      "absolute file name");
	/* node_exporter would never read it. */
	FAILS("MetricsFile /var/lib/iet.txt\n", "ietd.conf:1: MetricsFile: ",
	      "ending in .prom");
	FAILS("MetricsFile /var/lib/.prom\n", "ietd.conf:1: MetricsFile: ",
	      "ending in .prom");
	FAILS("MetricsFile /a.prom\nMetricsFile /b.prom\n", "ietd.conf:2: MetricsFile: ",
	      "already set on line 1");
	FAILS("MetricsInterval 0\n", "ietd.conf:1: MetricsInterval: ",
	      "out of range 1..3600");
	FAILS("MetricsInterval 3601\n", "ietd.conf:1: MetricsInterval: ",
	      "out of range");
	FAILS("MetricsInterval often\n", "ietd.conf:1: MetricsInterval: ",
	      "not a number");
	FAILS("Target " TARGET1 "\nMetricsFile /a.prom\n",
	      "ietd.conf:2: MetricsFile: ", "only allowed in the global section");
}

TEST(config_refuses_a_malformed_isns_server)
{
	FAILS("iSNSServer 2001:db8::5\n", "ietd.conf:1: iSNSServer: ",
	      "[IPv6]:port");
	FAILS("iSNSServer 192.0.2.1:0\n", "ietd.conf:1: iSNSServer: ",
	      "optional :port");
	FAILS("iSNSServer 192.0.2.1:65536\n", "ietd.conf:1: iSNSServer: ",
	      "optional :port");
	FAILS("iSNSServer [2001:db8::5\n", "ietd.conf:1: iSNSServer: ",
	      "host name");
	FAILS("iSNSServer a/b\n", "ietd.conf:1: iSNSServer: ", "host name");
}

/*
 * Access control with no server to ask would refuse every login, or
 * (as IET's did) admit everyone: neither is what the file means.
 */
TEST(config_refuses_isns_access_control_without_a_server)
{
	struct config cfg;

	FAILS("iSNSAccessControl Yes\nTarget " TARGET1 "\n",
	      "ietd.conf:1: iSNSAccessControl: ", "needs an iSNSServer");
	REQUIRE(parse("iSNSAccessControl No\nTarget " TARGET1 "\n", &cfg) == 0);
	CHECK(!cfg.isns_access_control);
	config_free(&cfg);
}

TEST(config_error_unknown_key_names_file_line_and_key)
{
	FAILS("Target " TARGET1 "\n  MaxConections 4\n",
	      "ietd.conf:2: MaxConections: ", "unknown key");
}

TEST(config_error_unknown_global_key)
{
	FAILS("Frobnicate yes\n", "ietd.conf:1: Frobnicate: ", "unknown key");
}

TEST(config_error_target_key_in_global_section)
{
	FAILS("MaxConnections 2\nTarget " TARGET1 "\n",
	      "ietd.conf:1: MaxConnections: ", "inside a Target");
}

TEST(config_error_isns_inside_a_target)
{
	FAILS("Target " TARGET1 "\niSNSAccessControl No\n",
	      "ietd.conf:2: iSNSAccessControl: ", "global section");
}

TEST(config_error_value_out_of_range)
{
	FAILS("Target " TARGET1 "\n MaxRecvDataSegmentLength 511\n",
	      "ietd.conf:2: MaxRecvDataSegmentLength: ", "out of range 512..16777215");
	FAILS("Target " TARGET1 "\n MaxBurstLength 16777216\n",
	      "ietd.conf:2: MaxBurstLength: ", "out of range");
	FAILS("Target " TARGET1 "\n Wthreads 129\n",
	      "ietd.conf:2: Wthreads: ", "1..128");
	FAILS("Target " TARGET1 "\n QueuedCommands 0\n",
	      "ietd.conf:2: QueuedCommands: ", "1..4096");
	FAILS("Target " TARGET1 "\n NOPInterval 3601\n",
	      "ietd.conf:2: NOPInterval: ", "0..3600");
	FAILS("Target " TARGET1 "\n NOPTimeout 4000\n",
	      "ietd.conf:2: NOPTimeout: ", "0..3600");
	FAILS("Target " TARGET1 "\n AllowTargetReset 1\n",
	      "ietd.conf:2: AllowTargetReset: ", "not Yes or No");
	FAILS("Target " TARGET1 "\n MaxConnections 0\n",
	      "ietd.conf:2: MaxConnections: ", "1..65535");
	FAILS("Target " TARGET1 "\n DefaultTime2Wait 3601\n",
	      "ietd.conf:2: DefaultTime2Wait: ", "0..3600");
	FAILS("Target " TARGET1 "\n MaxOutstandingR2T 65536\n",
	      "ietd.conf:2: MaxOutstandingR2T: ", "1..65535");
	FAILS("Target " TARGET1 "\n MaxSessions 70000\n",
	      "ietd.conf:2: MaxSessions: ", "0..65535");
	FAILS("Target " TARGET1 "\n OFMarkInt 0\n",
	      "ietd.conf:2: OFMarkInt: ", "1..65535");
	FAILS("Target " TARGET1 "\n IFMarkInt 4096~1024\n",
	      "ietd.conf:2: IFMarkInt: ", "empty range");
}

TEST(config_error_malformed_values)
{
	FAILS("Target " TARGET1 "\n InitialR2T maybe\n",
	      "ietd.conf:2: InitialR2T: ", "not Yes or No");
	FAILS("Target " TARGET1 "\n MaxBurstLength 64k\n",
	      "ietd.conf:2: MaxBurstLength: ", "not a number");
	FAILS("Target " TARGET1 "\n HeaderDigest MD5\n",
	      "ietd.conf:2: HeaderDigest: ", "not None or CRC32C");
	FAILS("Target " TARGET1 "\n DataDigest None,\n",
	      "ietd.conf:2: DataDigest: ", "not None or CRC32C");
	FAILS("Target " TARGET1 "\n MaxSessions\n",
	      "ietd.conf:2: MaxSessions: ", "not a number");
	FAILS("Target " TARGET1 "\n Wthreads 4 8\n",
	      "ietd.conf:2: Wthreads: ", "unexpected text");
	FAILS("Target " TARGET1 "\n Wthreads\n",
	      "ietd.conf:2: Wthreads: ", "missing value");
}

TEST(config_error_unsupported_error_recovery_level)
{
	FAILS("Target " TARGET1 "\n ErrorRecoveryLevel 1\n",
	      "ietd.conf:2: ErrorRecoveryLevel: ", "only 0");
}

TEST(config_error_first_burst_beyond_max_burst_names_its_line)
{
	FAILS("Target " TARGET1 "\n FirstBurstLength 131072\n"
	      " MaxBurstLength 65536\n",
	      "ietd.conf:2: FirstBurstLength: ", "exceeds MaxBurstLength");
	/* Without FirstBurstLength set, the MaxBurstLength line is at fault. */
	FAILS("Target " TARGET1 "\n Alias a\n MaxBurstLength 4096\n"
	      "Target " TARGET2 "\n",
	      "ietd.conf:3: FirstBurstLength: ", "65536 exceeds");
}

TEST(config_error_key_set_twice)
{
	FAILS("Target " TARGET1 "\n Wthreads 4\n Wthreads 8\n",
	      "ietd.conf:3: Wthreads: ", "already set on line 2");
	/* In the global section too. */
	FAILS("iSNSAccessControl No\n\nisnsaccesscontrol No\n",
	      "ietd.conf:3: isnsaccesscontrol: ", "already set on line 1");
	FAILS("AllowShortSecrets No\nAllowShortSecrets No\n",
	      "ietd.conf:2: AllowShortSecrets: ", "already set on line 1");
}

TEST(config_error_duplicate_target_name)
{
	FAILS("Target " TARGET1 "\nTarget " TARGET2 "\nTarget " TARGET1 "\n",
	      "ietd.conf:3: Target: ", "already defined on line 1");
}

TEST(config_error_duplicate_target_name_differing_in_case)
{
	FAILS("Target iqn.2001-04.com.example:Disk\n"
	      "Target iqn.2001-04.com.example:disk\n",
	      "ietd.conf:2: Target: ", "already defined");
}

TEST(config_error_bad_target_names)
{
	FAILS("Target\n", "ietd.conf:1: Target: ", "missing target name");
	FAILS("Target disk1\n", "ietd.conf:1: Target: ", "iqn., eui. or naa.");
	FAILS("Target iqn.2001-04.com.example:a b\n", "ietd.conf:1: Target: ",
	      "unexpected text");
	FAILS("Target iqn.2001-04.com.example:a_b\n", "ietd.conf:1: Target: ",
	      "not allowed");
}

TEST(config_chap_accounts_global_and_per_target)
{
	struct config cfg;
	const struct target_conf *t;

	REQUIRE(parse("IncomingUser joe secretsecret1\n"
		      "IncomingUser ann secretsecret2\n"
		      "OutgoingUser tgt secretsecret3\n"
		      "Target " TARGET1 "\n"
		      " IncomingUser bob secretsecret4\n"
		      " OutgoingUser jim secretsecret5\n"
		      "Target " TARGET2 "\n", &cfg) == 0);
	REQUIRE_EQ(cfg.auth.nr_incoming, 2);
	CHECK_STR(cfg.auth.incoming[0].user, "joe");
	CHECK_STR(cfg.auth.incoming[0].secret, "secretsecret1");
	CHECK_EQ(cfg.auth.incoming[0].line, 1);
	CHECK_STR(cfg.auth.incoming[1].user, "ann");
	CHECK(cfg.auth.has_outgoing);
	CHECK_STR(cfg.auth.outgoing.user, "tgt");
	CHECK_STR(cfg.auth.outgoing.secret, "secretsecret3");
	t = &cfg.targets[0];
	REQUIRE_EQ(t->auth.nr_incoming, 1);
	CHECK_STR(t->auth.incoming[0].user, "bob");
	CHECK(t->auth.has_outgoing);
	CHECK_STR(t->auth.outgoing.user, "jim");
	CHECK_EQ(cfg.targets[1].auth.nr_incoming, 0);
	CHECK(!cfg.targets[1].auth.has_outgoing);
	config_free(&cfg);
}

TEST(config_error_chap_secret_shorter_than_12_is_refused)
{
	FAILS("IncomingUser joe short\n", "ietd.conf:1: IncomingUser: ",
	      "at least 12");
	FAILS("Target " TARGET1 "\n OutgoingUser jim 12345678901\n",
	      "ietd.conf:2: OutgoingUser: ", "has 11 characters");
}

TEST(config_error_names_the_account_not_the_secret)
{
	struct config cfg;

	REQUIRE(parse("IncomingUser joe topsecret\n", &cfg) != 0);
	CHECK_CONTAINS(err, "joe");
	CHECK(!strstr(err, "topsecret"));
}

TEST(config_allow_short_secrets_lets_them_through_wherever_it_stands)
{
	struct config cfg;

	REQUIRE(parse("IncomingUser joe short\nAllowShortSecrets Yes\n"
		      "Target " TARGET1 "\n OutgoingUser jim tiny\n",
		      &cfg) == 0);
	CHECK(cfg.allow_short_secrets);
	CHECK_STR(cfg.targets[0].auth.outgoing.secret, "tiny");
	config_free(&cfg);
	FAILS("AllowShortSecrets Maybe\n", "ietd.conf:1: AllowShortSecrets: ",
	      "Yes or No");
	FAILS("Target " TARGET1 "\n AllowShortSecrets Yes\n",
	      "ietd.conf:2: AllowShortSecrets: ", "global section");
}

TEST(config_error_mutual_chap_with_the_same_secret_both_ways)
{
	FAILS("Target " TARGET1 "\n IncomingUser joe secretsecret\n"
	      " OutgoingUser jim secretsecret\n",
	      "ietd.conf:3: OutgoingUser: ", "two different secrets");
	FAILS("OutgoingUser jim secretsecret\nIncomingUser joe secretsecret\n",
	      "ietd.conf:1: OutgoingUser: ", "IncomingUser joe (line 2)");
	/* Nor an initiator's secret anywhere else: ietd answers with it. */
	FAILS("IncomingUser disc secretsecret\nTarget " TARGET1 "\n"
	      " OutgoingUser jim secretsecret\n",
	      "ietd.conf:3: OutgoingUser: ", "IncomingUser disc of discovery (line 1)");
	FAILS("OutgoingUser jim secretsecret\nTarget " TARGET1 "\n"
	      " IncomingUser joe secretsecret\n",
	      "ietd.conf:1: OutgoingUser: ", "IncomingUser joe of " TARGET1);
}

TEST(config_an_account_may_name_the_initiators_it_logs_in_as)
{
	struct config cfg;
	const struct account *a;

	REQUIRE(parse("Target " TARGET1 "\n IncomingUser joe secretsecret1 "
		      INITIATOR ",iqn.2001-04.com.example:other\n"
		      " IncomingUser ann secretsecret2\n", &cfg) == 0);
	a = &cfg.targets[0].auth.incoming[0];
	CHECK_EQ(a->nr_initiators, 2);
	CHECK(account_admits(a, INITIATOR));
	CHECK(account_admits(a, "IQN.2001-04.COM.EXAMPLE:OTHER"));
	CHECK(!account_admits(a, "iqn.2001-04.com.example:third"));
	/* Without a list, any name. */
	CHECK(account_admits(&cfg.targets[0].auth.incoming[1],
			     "iqn.2001-04.com.example:third"));
	config_free(&cfg);
}

TEST(config_error_chap_account_lines)
{
	FAILS("IncomingUser joe\n", "ietd.conf:1: IncomingUser: ",
	      "missing secret");
	FAILS("IncomingUser\n", "ietd.conf:1: IncomingUser: ",
	      "IncomingUser <user> <secret>");
	FAILS("IncomingUser joe secret secret\n", "ietd.conf:1: IncomingUser: ",
	      "after the secret, only the initiator names");
	FAILS("IncomingUser joe secretsecret1 " INITIATOR " x\n",
	      "ietd.conf:1: IncomingUser: ", "after the initiator names of joe");
	FAILS("IncomingUser joe secretsecret1 " INITIATOR ",\n",
	      "ietd.conf:1: IncomingUser: ", "empty initiator name");
	FAILS("OutgoingUser jim secretsecret1 " INITIATOR "\n",
	      "ietd.conf:1: OutgoingUser: ", "unexpected text after the secret");
	FAILS("IncomingUser joe secretsecret1\nIncomingUser joe secretsecret2\n",
	      "ietd.conf:2: IncomingUser: ", "joe already defined on line 1");
	FAILS("OutgoingUser a secretsecret1\nOutgoingUser b secretsecret2\n",
	      "ietd.conf:2: OutgoingUser: ", "already set on line 1");
}

TEST(config_chap_algorithms_by_number_or_name)
{
	struct config cfg;

	REQUIRE(parse("CHAPAlgorithms 7,8\nTarget " TARGET1
		      "\n CHAPAlgorithms SHA3-256,MD5\nTarget " TARGET2 "\n",
		      &cfg) == 0);
	CHECK_EQ(cfg.auth.chap_algs, CHAP_ALG_BIT(7) | CHAP_ALG_BIT(8));
	CHECK_EQ(cfg.targets[0].auth.chap_algs, CHAP_ALG_BIT(8) | CHAP_ALG_BIT(5));
	CHECK_EQ(auth_algs(&cfg.targets[1].auth, &cfg.auth),
		 CHAP_ALG_BIT(7) | CHAP_ALG_BIT(8));
	CHECK_EQ(auth_algs(&cfg.targets[0].auth, &cfg.auth),
		 CHAP_ALG_BIT(8) | CHAP_ALG_BIT(5));
	config_free(&cfg);
	FAILS("CHAPAlgorithms 9\n", "ietd.conf:1: CHAPAlgorithms: ",
	      "not a CHAP algorithm");
	FAILS("CHAPAlgorithms 5,,7\n", "ietd.conf:1: CHAPAlgorithms: ",
	      "not a CHAP algorithm");
}

TEST(config_redirect_is_normalized_with_the_default_port)
{
	struct config cfg;

	REQUIRE(parse("Target " TARGET1 "\n Redirect 192.0.2.7\nTarget "
		      TARGET2 "\n Redirect [2001:db8::5]:3261\n", &cfg) == 0);
	CHECK_STR(cfg.targets[0].redirect, "192.0.2.7:3260");
	CHECK_STR(cfg.targets[1].redirect, "[2001:db8::5]:3261");
	config_free(&cfg);
	FAILS("Target " TARGET1 "\n Redirect 192.0.2.7:99999\n",
	      "ietd.conf:2: Redirect: ", "not a port");
	FAILS("Target " TARGET1 "\n Redirect [2001:db8::5\n",
	      "ietd.conf:2: Redirect: ", "ADDRESS[:PORT]");
	FAILS("Target " TARGET1 "\n Redirect 300.1.1.1\n",
	      "ietd.conf:2: Redirect: ", "ADDRESS[:PORT]");
	FAILS("Redirect 192.0.2.1\n", "ietd.conf:1: Redirect: ",
	      "inside a Target");
}

TEST(config_origin_lines_belong_to_the_state_file_only)
{
	struct config cfg;
	static const char text[] = "Target " TARGET1 "\n Origin ietadm\n";

	FAILS(text, "ietd.conf:2: Origin: ", "unknown key");
	REQUIRE(config_parse_flags(text, strlen(text), "state", CONFIG_STATE,
				   &cfg, err, sizeof(err)) == 0);
	CHECK_EQ(cfg.targets[0].origin, ORIGIN_ADMIN);
	config_free(&cfg);
}

TEST(config_digest_is_of_the_file_and_a_state_line_only)
{
	static const char good[] = "ConfigDigest "
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
	char dir[] = "/tmp/iet-digest-XXXXXX", path[64];
	struct config cfg;
	FILE *f;

	FAILS(good, "ietd.conf:1: ConfigDigest: ", "unknown key");
	REQUIRE(config_parse_flags(good, strlen(good), "state", CONFIG_STATE,
				   &cfg, err, sizeof(err)) == 0);
	CHECK(!strncmp(cfg.digest, good + 13, 64));
	config_free(&cfg);
	CHECK(config_parse_flags("ConfigDigest 12ab\n", 18, "state",
				 CONFIG_STATE, &cfg, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "64 hexadecimal digits");

	/* A file read gets the SHA-256 of what it holds. */
	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ietd.conf", dir);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("abc\n", f);
	fclose(f);
	CHECK(config_load(path, &cfg, err, sizeof(err)) != 0);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("# nothing\n", f);
	fclose(f);
	REQUIRE(config_load(path, &cfg, err, sizeof(err)) == 0);
	/* sha256sum of "# nothing\n" */
	CHECK_STR(cfg.digest,
		  "5e49ea838dc30f3eeacf6ca7815f6e3adcf77f467a970d978676790fd90377e1");
	config_free(&cfg);
	unlink(path);
	rmdir(dir);
}

TEST(config_blockio_is_its_own_type)
{
	struct config cfg;

	REQUIRE(parse("Target " TARGET1 "\n Lun 0 Path=/dev/sda,Type=blockio\n",
		      &cfg) == 0);
	CHECK_EQ(cfg.targets[0].luns[0].type, IET_LUN_BLOCKIO);
	config_free(&cfg);
}


TEST(config_error_duplicate_lun_numbers)
{
	FAILS("Target " TARGET1 "\n Lun 0 Type=nullio\n Lun 0 Type=nullio\n",
	      "ietd.conf:3: Lun: ", "LUN 0 already defined on line 2");
}

TEST(config_error_lun_number_out_of_range)
{
	FAILS("Target " TARGET1 "\n Lun 16384 Type=nullio\n",
	      "ietd.conf:2: Lun: ", "0..16383");
	FAILS("Target " TARGET1 "\n Lun x Type=nullio\n",
	      "ietd.conf:2: Lun: ", "not a LUN number");
	FAILS("Target " TARGET1 "\n Lun\n", "ietd.conf:2: Lun: ",
	      "missing LUN number");
}

TEST(config_error_lun_arguments_name_the_argument)
{
	FAILS("Target " TARGET1 "\n Lun 0 Type=fileio\n",
	      "ietd.conf:2: Lun: ", "Path: required for Type=fileio");
	FAILS("Target " TARGET1 "\n Lun 0 Type=blockio\n",
	      "ietd.conf:2: Lun: ", "Path: required for Type=blockio");
	FAILS("Target " TARGET1 "\n Lun 0\n",
	      "ietd.conf:2: Lun: ", "Path: required");
	FAILS("Target " TARGET1 "\n Lun 0 Path=disk.img\n",
	      "ietd.conf:2: Lun: ", "Path: must be an absolute path");
	FAILS("Target " TARGET1 "\n Lun 0 Type=nullio,Path=/dev/zero\n",
	      "ietd.conf:2: Lun: ", "Path: not used with Type=nullio");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,Type=tape\n",
	      "ietd.conf:2: Lun: ",
	      "Type: \"tape\" is not fileio, blockio or nullio");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,IOMode=rw\n",
	      "ietd.conf:2: Lun: ", "IOMode: \"rw\" is not wt, wb or ro");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ScsiId=0123456789abcdefX\n",
	      "ietd.conf:2: Lun: ", "ScsiId: longer than 16");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,ScsiSN=0123456789abcdefX\n",
	      "ietd.conf:2: Lun: ", "ScsiSN: longer than 16");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,BlockSize=520\n",
	      "ietd.conf:2: Lun: ", "BlockSize: \"520\"");
	FAILS("Target " TARGET1 "\n Lun 0 Type=nullio,Blocks=0\n",
	      "ietd.conf:2: Lun: ", "Blocks: \"0\" is not a positive number");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,Frob=1\n",
	      "ietd.conf:2: Lun: ", "Frob: unknown LUN argument");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,Path=/b\n",
	      "ietd.conf:2: Lun: ", "Path: given twice");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,\n",
	      "ietd.conf:2: Lun: ", "trailing comma");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a,,Type=fileio\n",
	      "ietd.conf:2: Lun: ", "empty item");
	FAILS("Target " TARGET1 "\n Lun 0 Path=/a Type=fileio\n",
	      "ietd.conf:2: Lun: ", "unexpected text");
	FAILS("Target " TARGET1 "\n Lun 0 Path\n",
	      "ietd.conf:2: Lun: ", "Path: expected Key=Value");
	FAILS("Target " TARGET1 "\n Lun 0 ScsiId=\n",
	      "ietd.conf:2: Lun: ", "ScsiId: missing value");
}

TEST(config_error_lun_outside_a_target)
{
	FAILS("Lun 0 Type=nullio\n", "ietd.conf:1: Lun: ", "inside a Target");
}

TEST(config_error_overlong_line)
{
	size_t n = CONFIG_LINE_MAX + 10;
	char *text = malloc(n + 64);

	strcpy(text, "Target " TARGET1 "\n Alias ");
	memset(text + strlen(text), 'a', n);
	text[strlen("Target " TARGET1 "\n Alias ") + n] = '\0';
	FAILS(text, "ietd.conf:2: line: ", "longer than");
	free(text);
}

TEST(config_error_nul_byte)
{
	static const char text[] = "Target " TARGET1 "\n Ali\0as x\n";
	struct config cfg;

	CHECK(config_parse(text, sizeof(text) - 1, "ietd.conf", &cfg, err,
			   sizeof(err)) != 0);
	CHECK_CONTAINS(err, "ietd.conf:2: line: contains a NUL byte");
}

TEST(config_error_too_many_targets)
{
	size_t i, len = 0;
	char *text = malloc((CONFIG_TARGETS_MAX + 1) * 64);

	for (i = 0; i <= CONFIG_TARGETS_MAX; i++)
		len += sprintf(text + len, "Target iqn.2001-04.com.example:t%zu\n",
			       i);
	FAILS(text, "ietd.conf:4097: Target: ", "more than 4096 targets");
	free(text);
}

TEST(config_load_names_a_missing_file)
{
	struct config cfg;

	CHECK(config_load("/nonexistent/ietd.conf", &cfg, err,
			  sizeof(err)) != 0);
	CHECK_CONTAINS(err, "/nonexistent/ietd.conf: cannot open");
}

TEST(config_load_reads_a_file)
{
	char path[] = "/tmp/ietd-test-XXXXXX";
	int fd = mkstemp(path);
	struct config cfg;
	static const char text[] = "Target " TARGET1 "\n Lun 0 Type=nullio\n";

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, text, sizeof(text) - 1) == sizeof(text) - 1);
	close(fd);
	REQUIRE(config_load(path, &cfg, err, sizeof(err)) == 0);
	CHECK_EQ(cfg.nr_targets, 1);
	config_free(&cfg);
	/* The file name is in its errors. */
	fd = open(path, O_WRONLY | O_APPEND);
	REQUIRE(write(fd, " Bogus 1\n", 9) == 9);
	close(fd);
	CHECK(config_load(path, &cfg, err, sizeof(err)) != 0);
	CHECK(!strncmp(err, path, strlen(path)));
	CHECK_CONTAINS(err, ":3: Bogus: unknown key");
	unlink(path);
}

/*
 * The sample installs as /etc/iet/ietd.conf: it must export nothing until
 * the administrator says so, and every setting it shows commented out must
 * be valid as written.
 */
TEST(config_sample_file_is_accepted)
{
	struct config cfg;
	const struct target_conf *t;
	char *text, *out, *p, *line;
	size_t len = 0;
	FILE *f;

	REQUIRE(config_load("../../etc/ietd.conf", &cfg, err, sizeof(err)) == 0);
	CHECK_EQ(cfg.nr_targets, 0);
	config_free(&cfg);

	f = fopen("../../etc/ietd.conf", "r");
	REQUIRE(f);
	text = calloc(1, 65536);
	out = calloc(1, 65536);
	REQUIRE(text && out);
	len = fread(text, 1, 65535, f);
	fclose(f);
	/* Uncomment "#Key value" lines, keep "# prose" ones. */
	for (p = out, line = strtok(text, "\n"); line;
	     line = strtok(NULL, "\n")) {
		char *hash = line + strspn(line, " \t");

		if (*hash == '#' && isalpha((unsigned char)hash[1]))
			memmove(hash, hash + 1, strlen(hash));
		p += sprintf(p, "%s\n", line);
	}
	REQUIRE(len > 0);
	REQUIRE(config_parse(out, p - out, "uncommented", &cfg, err,
			     sizeof(err)) == 0);
	REQUIRE_EQ(cfg.nr_targets, 1);
	t = &cfg.targets[0];
	CHECK_EQ(t->tid, 1);
	CHECK_EQ(t->nr_luns, 3);
	CHECK_EQ(t->luns[0].type, IET_LUN_NULLIO);
	config_free(&cfg);
	free(text);
	free(out);
}

TEST(lun_scsi_id_is_derived_deterministically)
{
	struct lun_conf a = { .lun = 0 }, b = { .lun = 0 }, c = { .lun = 1 };
	struct lun_conf d = { .lun = 0 };

	lun_conf_derive_ids(&a, TARGET1);
	lun_conf_derive_ids(&b, TARGET1);
	lun_conf_derive_ids(&c, TARGET1);
	lun_conf_derive_ids(&d, "IQN.2001-04.COM.EXAMPLE:DISK1");
	CHECK_EQ(strlen(a.scsi_id), 16);
	CHECK_STR(a.scsi_id, b.scsi_id);
	CHECK(strcmp(a.scsi_id, c.scsi_id) != 0);
	CHECK_STR(a.scsi_id, d.scsi_id);
	CHECK_STR(a.scsi_sn, a.scsi_id);
}

TEST(lun_configured_scsi_id_is_kept_and_gives_the_serial)
{
	struct lun_conf a = { .lun = 0 };

	strcpy(a.scsi_id, "myid");
	lun_conf_derive_ids(&a, TARGET1);
	CHECK_STR(a.scsi_id, "myid");
	CHECK_STR(a.scsi_sn, "myid");
}

#define OUT_SECRET	"Outgoing-secret-4711"

/* Targets enough for their array to grow several times. */
static char *many_targets_with_secrets(void)
{
	static char text[8192];
	size_t n = 0;
	int i;

	for (i = 0; i < 24; i++)
		n += snprintf(text + n, sizeof(text) - n,
			      "Target iqn.2001-04.com.example:t%d\n"
			      " OutgoingUser out%d " OUT_SECRET "\n", i, i);
	return text;
}

/*
 * A target holds its outgoing secret inline: arrays of them that grew
 * with realloc() left the secrets of every target before in freed memory.
 */
TEST(config_targets_growing_or_going_leave_no_copy_of_their_secrets)
{
	const char *text = many_targets_with_secrets();
	struct config a, b;

	freed_watch(OUT_SECRET);
	REQUIRE(config_parse(text, strlen(text), "x", &a, err,
			     sizeof(err)) == 0);
	CHECK_EQ(freed_holding(), 0);
	REQUIRE_EQ(a.nr_targets, 24);
	freed_watch(OUT_SECRET);
	REQUIRE(config_copy(&b, &a) == 0);
	CHECK_EQ(freed_holding(), 0);
	/* The last target moves down: its old place held its secret. */
	freed_watch(OUT_SECRET);
	config_del_target(&b, 1);
	config_free(&b);
	config_free(&a);
	CHECK_EQ(freed_holding(), 0);
}

TEST(config_reads_portal_groups)
{
	struct config cfg;
	const struct portal_group *g;

	REQUIRE(parse("PortalGroup 1 192.0.2.1 192.0.2.2:3261\n"
		      "portalgroup 7 [2001:db8::7]:3262 *:3263\n"
		      "Target iqn.2001-04.com.example:t\n", &cfg) == 0);
	REQUIRE_EQ(cfg.nr_groups, 2);
	g = config_group(&cfg, 1);
	REQUIRE(g != NULL);
	REQUIRE_EQ(g->nr_portals, 2);
	CHECK_STR(g->portals[0].addr, "192.0.2.1");
	CHECK_EQ(g->portals[0].port, 0);
	CHECK_STR(g->portals[1].addr, "192.0.2.2");
	CHECK_EQ(g->portals[1].port, 3261);
	CHECK_EQ(g->line, 1);
	g = config_group(&cfg, 7);
	REQUIRE(g != NULL);
	CHECK_STR(g->portals[0].addr, "2001:db8::7");
	CHECK_EQ(g->portals[0].port, 3262);
	CHECK_STR(g->portals[1].addr, "");		/* every address */
	CHECK_EQ(g->portals[1].port, 3263);
	CHECK(config_group(&cfg, 2) == NULL);
	/* Without a port: ietd's (-p). */
	config_resolve_ports(&cfg, 3999);
	CHECK_EQ(config_group(&cfg, 1)->portals[0].port, 3999);
	CHECK_EQ(config_group(&cfg, 1)->portals[1].port, 3261);
	config_free(&cfg);
}

TEST(config_error_portal_groups)
{
	FAILS("PortalGroup\n", "ietd.conf:1: PortalGroup: ", "missing tag");
	FAILS("PortalGroup 0 192.0.2.1\n", "ietd.conf:1: PortalGroup: ", "tag 1..65535");
	FAILS("PortalGroup 65536 192.0.2.1\n", "ietd.conf:1: PortalGroup: ", "tag 1..65535");
	FAILS("PortalGroup two 192.0.2.1\n", "ietd.conf:1: PortalGroup: ", "tag 1..65535");
	FAILS("PortalGroup 2\n", "ietd.conf:1: PortalGroup: ", "no portal");
	FAILS("PortalGroup 2 192.0.2.1\nPortalGroup 2 192.0.2.2\n",
	      "ietd.conf:2: PortalGroup: ", "already defined on line 1");
	FAILS("PortalGroup 2 host.example\n", "ietd.conf:1: PortalGroup: ", "not a portal");
	FAILS("PortalGroup 2 192.0.2.300\n", "ietd.conf:1: PortalGroup: ", "not a portal");
	FAILS("PortalGroup 2 2001:db8::1\n", "ietd.conf:1: PortalGroup: ", "not a portal");
	FAILS("PortalGroup 2 [2001:db8::1\n", "ietd.conf:1: PortalGroup: ", "not a portal");
	FAILS("PortalGroup 2 192.0.2.1:0\n", "ietd.conf:1: PortalGroup: ", "port 1..65535");
	FAILS("PortalGroup 2 192.0.2.1:70000\n", "ietd.conf:1: PortalGroup: ", "port 1..65535");
	/* One address and port belongs to one group, "*" overlaps them all. */
	FAILS("PortalGroup 1 192.0.2.1:3260\nPortalGroup 2 192.0.2.1:3260\n",
	      "ietd.conf:2: PortalGroup: ", "overlaps a portal of group 1");
	FAILS("PortalGroup 1 192.0.2.1\nPortalGroup 2 *\n",
	      "ietd.conf:2: PortalGroup: ", "overlaps a portal of group 1");
	FAILS("PortalGroup 1 192.0.2.1 192.0.2.1\n",
	      "ietd.conf:1: PortalGroup: ", "overlaps a portal of group 1");
	FAILS("PortalGroup 1 1.0.0.1 1.0.0.2 1.0.0.3 1.0.0.4 1.0.0.5 1.0.0.6 1.0.0.7 1.0.0.8 1.0.0.9\n",
	      "ietd.conf:1: PortalGroup: ", "more than 8 portals");
	FAILS("Target iqn.2001-04.com.example:t\n\tPortalGroup 2 192.0.2.1\n",
	      "ietd.conf:2: PortalGroup: ", "global section");
}

TEST(config_reads_the_other_nodes_portal_group)
{
	struct config cfg;
	const struct portal_group *g;

	REQUIRE(parse("PortalGroup 1 192.0.2.1\n"
		      "remoteportalgroup 2\n"
		      "Target iqn.2001-04.com.example:t\n", &cfg) == 0);
	REQUIRE_EQ(cfg.nr_groups, 2);
	CHECK_EQ(config_remote_groups(&cfg), 1);
	CHECK(!config_group(&cfg, 1)->remote);
	g = config_group(&cfg, 2);
	REQUIRE(g != NULL);
	CHECK(g->remote);
	CHECK_EQ(g->nr_portals, 0);
	CHECK_EQ(g->line, 2);
	config_free(&cfg);
}

TEST(config_error_remote_portal_groups)
{
	FAILS("PortalGroup 1 192.0.2.1\nRemotePortalGroup\n",
	      "ietd.conf:2: RemotePortalGroup: ", "missing tag");
	FAILS("PortalGroup 1 192.0.2.1\nRemotePortalGroup 0\n",
	      "ietd.conf:2: RemotePortalGroup: ", "tag 1..65535");
	/* Its portals are the other node's: none is named here. */
	FAILS("PortalGroup 1 192.0.2.1\nRemotePortalGroup 2 192.0.2.2\n",
	      "ietd.conf:2: RemotePortalGroup: ", "takes a tag only");
	/* One tag, one group, whichever node it is on. */
	FAILS("PortalGroup 1 192.0.2.1\nRemotePortalGroup 1\n",
	      "ietd.conf:2: RemotePortalGroup: ", "already defined on line 1");
	FAILS("RemotePortalGroup 2\nPortalGroup 2 192.0.2.1\n",
	      "ietd.conf:2: PortalGroup: ", "already defined on line 1");
	/* Without a group of its own ietd would listen nowhere. */
	FAILS("RemotePortalGroup 2\n", "ietd.conf:1: RemotePortalGroup: ",
	      "needs this node's own PortalGroup lines");
	FAILS("PortalGroup 1 192.0.2.1\nTarget iqn.2001-04.com.example:t\n"
	      "\tRemotePortalGroup 2\n",
	      "ietd.conf:3: RemotePortalGroup: ", "global section");
}

TEST(config_allows_sixteen_portal_groups_and_no_more)
{
	char text[4096], *p = text;
	struct config cfg;
	int i;

	for (i = 1; i <= IET_TPGS_MAX; i++)
		p += sprintf(p, "PortalGroup %d 10.0.0.%d\n", i, i);
	REQUIRE(parse(text, &cfg) == 0);
	CHECK_EQ(cfg.nr_groups, IET_TPGS_MAX);
	config_free(&cfg);
	sprintf(p, "PortalGroup 99 10.0.1.1\n");
	FAILS(text, "ietd.conf:17: PortalGroup: ", "more than 16 portal groups");
}
