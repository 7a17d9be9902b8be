// SPDX-License-Identifier: GPL-2.0
/* ietadm's command line: every form of COMPAT.md's table, and the rest. */
#include "adm_args.h"
#include "test.h"

static char err[512];

#define PARSE(a, ...) parse(a, (char *[]){ "ietadm", __VA_ARGS__, NULL })

static enum adm_parse_result parse(struct adm_args *a, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	err[0] = '\0';
	return adm_parse(argc, argv, a, err, sizeof(err));
}

TEST(adm_params_take_both_forms)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "new", "--tid=3", "--params",
			 "Name=iqn.2001-04.com.example:x"), ADM_RUN);
	CHECK_STR(a.req.op, "new");
	CHECK_EQ(a.req.tid, 3);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_PARAMS);
	CHECK_STR(a.req.params, "Name=iqn.2001-04.com.example:x");
	REQUIRE_EQ(PARSE(&a, "--op=new", "--tid", "3",
			 "--params=Name=iqn.2001-04.com.example:x"), ADM_RUN);
	CHECK_STR(a.req.params, "Name=iqn.2001-04.com.example:x");
}

TEST(adm_every_row_of_iets_table_parses)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "delete", "--tid=1", "--sid=281474997486080",
			 "--cid=0"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_SID | CTL_F_CID);
	CHECK_EQ(a.req.sid, 281474997486080ull);
	REQUIRE_EQ(PARSE(&a, "--op", "new", "--tid=1", "--lun=0", "--params",
			 "Path=/dev/vg/lv,Type=fileio"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_LUN | CTL_F_PARAMS);
	REQUIRE_EQ(PARSE(&a, "--op", "new", "--user",
			 "--params=IncomingUser=joe,Password=secretsecret"),
		   ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_USER | CTL_F_PARAMS);
	REQUIRE_EQ(PARSE(&a, "--op", "update", "--tid=2", "--redirect="),
		   ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_REDIRECT);
	CHECK_STR(a.req.redirect, "");
	REQUIRE_EQ(PARSE(&a, "--op", "show", "--tid=2", "--sid=0"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_SID);
	REQUIRE_EQ(PARSE(&a, "--op", "delete"), ADM_RUN);
	CHECK_EQ(a.req.fields, 0);
}

TEST(adm_tid_takes_a_target_name_too)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "show", "--tid",
			 "iqn.2001-04.com.example:disk1"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TARGET);
	CHECK_STR(a.req.target, "iqn.2001-04.com.example:disk1");
	REQUIRE_EQ(PARSE(&a, "--op", "show",
			 "--target=eui.0123456789abcdef"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TARGET);
	CHECK_EQ(PARSE(&a, "--op", "show", "--tid=disk1"), ADM_ERROR);
	CHECK_CONTAINS(err, "neither a number nor a target name");
	CHECK_EQ(PARSE(&a, "--op", "show", "--tid=1",
		       "--target=iqn.2001-04.com.example:x"), ADM_ERROR);
}

TEST(adm_json_dry_run_file_and_socket)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "show", "--json"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_JSON);
	REQUIRE_EQ(PARSE(&a, "--op", "reload", "--dry-run"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_DRYRUN);
	REQUIRE_EQ(PARSE(&a, "--op", "save", "--file=/etc/iet/ietd.conf",
			 "--socket", "/tmp/s"), ADM_RUN);
	CHECK_STR(a.file, "/etc/iet/ietd.conf");
	CHECK_STR(a.socket, "/tmp/s");
	REQUIRE_EQ(PARSE(&a, "--op", "show"), ADM_RUN);
	CHECK_STR(a.socket, CTL_SOCKET_PATH);
	CHECK_EQ(PARSE(&a, "--op", "show", "--file=x"), ADM_ERROR);
	CHECK_CONTAINS(err, "--file goes with --op save");
	CHECK_EQ(PARSE(&a, "--op", "new", "--dry-run"), ADM_ERROR);
}

TEST(adm_stats_and_prometheus_go_with_show_alone)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "show", "--stats"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_STATS);
	REQUIRE_EQ(PARSE(&a, "--op", "show", "--tid=1", "--lun=0", "--stats",
			 "--json"), ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_LUN | CTL_F_STATS |
		 CTL_F_JSON);
	REQUIRE_EQ(PARSE(&a, "--op", "show", "--tid=1", "--prometheus"),
		   ADM_RUN);
	CHECK_EQ(a.req.fields, CTL_F_TID | CTL_F_PROMETHEUS);
	CHECK_EQ(PARSE(&a, "--op", "show", "--prometheus", "--json"), ADM_ERROR);
	CHECK_CONTAINS(err, "--prometheus is a format of its own");
	CHECK_EQ(PARSE(&a, "--op", "show", "--tid=1", "--lun=0",
		       "--prometheus"), ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "show", "--user", "--stats"), ADM_ERROR);
	CHECK_CONTAINS(err, "accounts have no statistics");
	CHECK_EQ(PARSE(&a, "--op", "delete", "--stats"), ADM_ERROR);
	CHECK_CONTAINS(err, "--op delete does not take --stats");
	CHECK_EQ(PARSE(&a, "--op", "reload", "--prometheus"), ADM_ERROR);
	CHECK_CONTAINS(err, "does not take --prometheus");
}

TEST(adm_errors_say_what_is_wrong)
{
	struct adm_args a;

	CHECK_EQ(PARSE(&a, "--tid=1"), ADM_ERROR);
	CHECK_CONTAINS(err, "--op is required");
	CHECK_EQ(PARSE(&a, "--op", "frob"), ADM_ERROR);
	CHECK_CONTAINS(err, "unknown operation \"frob\"");
	CHECK_EQ(PARSE(&a, "--op", "show", "--sid=x"), ADM_ERROR);
	CHECK_CONTAINS(err, "--sid: \"x\" is not a number");
	CHECK_EQ(PARSE(&a, "--op", "show", "--cid=70000"), ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "show", "--lun=16384"), ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "show", "--frob"), ADM_ERROR);
	CHECK_CONTAINS(err, "unknown option --frob");
	CHECK_EQ(PARSE(&a, "--op", "show", "--tid"), ADM_ERROR);
	CHECK_CONTAINS(err, "needs a value");
	CHECK_EQ(PARSE(&a, "--op", "show", "extra"), ADM_ERROR);
	CHECK_CONTAINS(err, "unexpected argument");
}

TEST(adm_each_operation_takes_only_its_options)
{
	struct adm_args a;

	/* A forgotten --user must not make "delete" the full teardown. */
	CHECK_EQ(PARSE(&a, "--op", "delete", "--params",
		       "IncomingUser=joe"), ADM_ERROR);
	CHECK_CONTAINS(err, "--params only with --user");
	CHECK_EQ(PARSE(&a, "--op", "delete", "--redirect=10.0.0.1"),
		 ADM_ERROR);
	CHECK_CONTAINS(err, "--op delete does not take --redirect");
	CHECK_EQ(PARSE(&a, "--op", "delete", "--json"), ADM_ERROR);
	CHECK_CONTAINS(err, "does not take --json");
	CHECK_EQ(PARSE(&a, "--op", "delete", "--params",
		       "LogoutTimeout=5,IncomingUser=joe"), ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "delete", "--params", ","), ADM_ERROR);
	REQUIRE_EQ(PARSE(&a, "--op", "delete", "--user", "--params",
			 "IncomingUser=joe"), ADM_RUN);
	/* How long initiators get to log out: ietd checks the value. */
	REQUIRE_EQ(PARSE(&a, "--op", "delete", "--params",
			 "LogoutTimeout=5"), ADM_RUN);
	REQUIRE_EQ(PARSE(&a, "--op", "delete", "--tid=1", "--sid=5",
			 "--params=logouttimeout=0"), ADM_RUN);

	CHECK_EQ(PARSE(&a, "--op", "update", "--tid=1"), ADM_ERROR);
	CHECK_CONTAINS(err, "needs --params");
	CHECK_EQ(PARSE(&a, "--op", "update", "--params=MaxSessions=1"),
		 ADM_ERROR);
	CHECK_CONTAINS(err, "--op update needs --tid");
	/* A LUN's update is its reservations' (ietd checks the params). */
	REQUIRE_EQ(PARSE(&a, "--op", "update", "--tid=1", "--lun=0",
			 "--params=Reservations=clear"), ADM_RUN);
	CHECK_EQ(PARSE(&a, "--op", "update", "--tid=1", "--lun=0",
		       "--sid=1", "--params=Reservations=clear"), ADM_ERROR);
	CHECK_CONTAINS(err, "does not take --sid");
	CHECK_EQ(PARSE(&a, "--op", "new", "--tid=1", "--sid=1"), ADM_ERROR);
	CHECK_CONTAINS(err, "--op new does not take --sid");
	CHECK_EQ(PARSE(&a, "--op", "delete", "--tid=1", "--cid=0"),
		 ADM_ERROR);
	CHECK_CONTAINS(err, "--cid needs --sid");
	CHECK_EQ(PARSE(&a, "--op", "show", "--sid=1"), ADM_ERROR);
	CHECK_CONTAINS(err, "need --tid");
	CHECK_EQ(PARSE(&a, "--op", "new", "--lun=0", "--params=Path=/x"),
		 ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "new", "--tid=1", "--lun=0", "--user"),
		 ADM_ERROR);
	CHECK_EQ(PARSE(&a, "--op", "reload", "--tid=1"), ADM_ERROR);
	CHECK_CONTAINS(err, "--op reload does not take --tid");
	CHECK_EQ(PARSE(&a, "--op", "save", "--json"), ADM_ERROR);
	REQUIRE_EQ(PARSE(&a, "--op", "show", "--tid=1", "--sid=2",
			 "--cid=0", "--json"), ADM_RUN);
}

TEST(adm_help_and_version)
{
	struct adm_args a;

	CHECK_EQ(PARSE(&a, "--help"), ADM_HELP);
	CHECK_EQ(PARSE(&a, "-h"), ADM_HELP);
	CHECK_EQ(PARSE(&a, "--version"), ADM_VERSION);
}

TEST(adm_request_formats_to_what_ietd_parses)
{
	struct adm_args a;
	struct ctl_req back;
	char buf[CTL_REQ_MAX];
	int n;

	REQUIRE_EQ(PARSE(&a, "--op", "new", "--tid", "iqn.2001-04.com.example:x",
			 "--user", "--params", "IncomingUser=u,Password=p"),
		   ADM_RUN);
	n = ctl_req_format(&a.req, buf, sizeof(buf));
	REQUIRE(n > 0);
	REQUIRE(ctl_req_parse(buf, n, &back, err, sizeof(err)) == 0);
	CHECK_EQ(back.fields, a.req.fields);
	CHECK_STR(back.target, "iqn.2001-04.com.example:x");
	CHECK_STR(back.params, "IncomingUser=u,Password=p");
}

TEST(adm_password_file_adds_the_secret_as_the_password)
{
	struct adm_args a;

	REQUIRE_EQ(PARSE(&a, "--op", "new", "--tid=1", "--user",
			 "--params=IncomingUser=joe", "--password-file=-"),
		   ADM_RUN);
	CHECK_STR(a.password_file, "-");
	REQUIRE(adm_add_secret(&a, "secret secret", err, sizeof(err)) == 0);
	CHECK_STR(a.req.params, "IncomingUser=joe,Password=secret secret");
	/* A secret given twice is refused, not one of them taken. */
	REQUIRE_EQ(PARSE(&a, "--op", "new", "--user",
			 "--params=IncomingUser=joe,password=x",
			 "--password-file=/etc/iet/joe"), ADM_RUN);
	CHECK(adm_add_secret(&a, "secretsecret", err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "Password= already");
}

TEST(adm_password_file_secret_that_params_cannot_carry_is_refused)
{
	struct adm_args a;
	char longer[300];

	REQUIRE_EQ(PARSE(&a, "--op", "new", "--user",
			 "--params=OutgoingUser=tgt", "--password-file=f"),
		   ADM_RUN);
	CHECK(adm_add_secret(&a, "", err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "no secret");
	CHECK(adm_add_secret(&a, "a,b=c", err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "comma");
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	CHECK(adm_add_secret(&a, longer, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "longer than 255");
	CHECK_STR(a.req.params, "OutgoingUser=tgt");
}

TEST(adm_password_file_goes_with_adding_an_account_only)
{
	struct adm_args a;

	CHECK_EQ(PARSE(&a, "--op", "delete", "--user",
		       "--params=IncomingUser=joe", "--password-file=-"),
		 ADM_ERROR);
	CHECK_CONTAINS(err, "--password-file goes with --op new --user");
	CHECK_EQ(PARSE(&a, "--op", "new", "--tid=1", "--password-file=-"),
		 ADM_ERROR);
}
