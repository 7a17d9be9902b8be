// SPDX-License-Identifier: GPL-2.0
/* initiators.allow, initiators.deny, targets.allow: parse, match, decide. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "acl_cache.h"
#include "helpers.h"
#include "test.h"

#define INIT_A	"iqn.1993-08.org.debian:01:aaaa"
#define INIT_B	"iqn.1991-05.com.microsoft:host-b"

static char err[512];

static int parse(const char *text, struct acl_file *af)
{
	memset(af, 0, sizeof(*af));
	err[0] = '\0';
	af->exists = true;
	return acl_parse(text, strlen(text), "initiators.allow", af, err,
			 sizeof(err));
}

static enum acl_result match(const char *text, const char *target,
			     const char *name, const char *ip)
{
	struct acl_file af;
	struct sockaddr_storage ss = sockaddr_of(ip, 0);
	enum acl_result r;

	if (parse(text, &af)) {
		test_fail(__FILE__, __LINE__, "parse failed: %s", err);
		return ACL_NO_RULE;
	}
	r = acl_match(&af, target, name, &ss);
	acl_file_free(&af);
	return r;
}

TEST(acl_rules_with_comments_and_blank_lines)
{
	struct acl_file af;

	REQUIRE(parse("# comment\n\n  \t\n" TARGET1 " " INIT_A ", 10.0.0.0/8\n"
		      "ALL [fe80::/10],ALL\n", &af) == 0);
	REQUIRE_EQ(af.nr, 2);
	CHECK_STR(af.rules[0].target, TARGET1);
	CHECK_EQ(af.rules[0].nr, 2);
	CHECK_EQ(af.rules[0].line, 4);
	CHECK_EQ(af.rules[0].entries[0].type, ACL_NAME);
	CHECK_EQ(af.rules[0].entries[1].type, ACL_NET4);
	CHECK_EQ(af.rules[0].entries[1].prefix, 8);
	CHECK(af.rules[1].target == NULL);
	CHECK_EQ(af.rules[1].entries[0].type, ACL_NET6);
	CHECK_EQ(af.rules[1].entries[0].prefix, 10);
	CHECK_EQ(af.rules[1].entries[1].type, ACL_ANY);
	acl_file_free(&af);
}

TEST(acl_malformed_entries_are_errors_naming_file_and_line)
{
	struct acl_file af;

	CHECK(parse("ALL 10.0.0.300/8\n", &af) != 0);
	CHECK_CONTAINS(err, "initiators.allow:1: ");
	CHECK_CONTAINS(err, "not an IPv4 address");
	CHECK(parse("# x\nALL 10.0.0.0/33\n", &af) != 0);
	CHECK_CONTAINS(err, "initiators.allow:2: ");
	CHECK(parse("ALL [fe80::/129]\n", &af) != 0);
	CHECK_CONTAINS(err, "not an IPv6");
	CHECK(parse("ALL [fe80::\n", &af) != 0);
	CHECK(parse("ALL [zz::1]\n", &af) != 0);
	CHECK(parse("ALL iqn.(broken\n", &af) != 0);
	CHECK_CONTAINS(err, "not a valid pattern");
	CHECK(parse(TARGET1 "\n", &af) != 0);
	CHECK_CONTAINS(err, "expected");
	CHECK(parse(TARGET1 " ,,\n", &af) != 0);
	CHECK_CONTAINS(err, "empty list");
}

TEST(acl_patterns_that_would_exhaust_regcomp_are_refused)
{
	struct acl_file af;

	/* Found by fuzz_acl: stacked repetitions eat gigabytes in glibc. */
	CHECK(parse("ALL iqn.1993++++++++++++++++++++++++++++++-0\n", &af) != 0);
	CHECK_CONTAINS(err, "none stacked");
	CHECK(parse("ALL a{50}{50}\n", &af) != 0);
	CHECK(parse("ALL a{1000}\n", &af) != 0);
	CHECK(parse("ALL a*?\n", &af) != 0);
	REQUIRE(parse("ALL iqn\\.1993-08\\.org\\.debian:.*,a{2}b+,x{4}\n",
		      &af) == 0);
	acl_file_free(&af);
}

TEST(acl_stray_commas_and_blanks_in_a_list_are_tolerated)
{
	CHECK_EQ(match(TARGET1 " 10.0.0.1, ,192.0.2.5,\n", TARGET1, INIT_A,
		       "192.0.2.5"), ACL_HIT);
}

TEST(acl_initiator_patterns_are_anchored_at_both_ends)
{
	CHECK_EQ(match("ALL " INIT_A "\n", TARGET1, INIT_A, "192.0.2.1"),
		 ACL_HIT);
	CHECK_EQ(match("ALL " INIT_A "\n", TARGET1, "x" INIT_A, "192.0.2.1"),
		 ACL_MISS);
	CHECK_EQ(match("ALL " INIT_A "\n", TARGET1, INIT_A "b", "192.0.2.1"),
		 ACL_MISS);
	CHECK_EQ(match("ALL iqn.1993-08.org.debian:.*\n", TARGET1, INIT_A,
		       "192.0.2.1"), ACL_HIT);
	CHECK_EQ(match("ALL iqn.1993-08.org.debian:.*\n", TARGET1, INIT_B,
		       "192.0.2.1"), ACL_MISS);
	/* An alternation stays inside the anchors. */
	CHECK_EQ(match("ALL " INIT_B "|foo\n", TARGET1, INIT_A, "192.0.2.1"),
		 ACL_MISS);
	/* iSCSI names compare without case. */
	CHECK_EQ(match("ALL IQN.1993-08.ORG.DEBIAN:01:AAAA\n", TARGET1, INIT_A,
		       "192.0.2.1"), ACL_HIT);
}

TEST(acl_ipv4_networks_match_by_prefix)
{
	const char *r = "ALL 10.1.0.0/16\n";

	CHECK_EQ(match(r, TARGET1, INIT_A, "10.1.255.4"), ACL_HIT);
	CHECK_EQ(match(r, TARGET1, INIT_A, "10.2.0.1"), ACL_MISS);
	CHECK_EQ(match("ALL 192.0.2.128/25\n", TARGET1, INIT_A, "192.0.2.200"),
		 ACL_HIT);
	CHECK_EQ(match("ALL 192.0.2.128/25\n", TARGET1, INIT_A, "192.0.2.127"),
		 ACL_MISS);
	CHECK_EQ(match("ALL 192.0.2.7\n", TARGET1, INIT_A, "192.0.2.7"), ACL_HIT);
	CHECK_EQ(match("ALL 192.0.2.7\n", TARGET1, INIT_A, "192.0.2.8"),
		 ACL_MISS);
	CHECK_EQ(match("ALL 0.0.0.0/0\n", TARGET1, INIT_A, "203.0.113.9"),
		 ACL_HIT);
	/* An IPv4 peer on an IPv6 socket is still IPv4. */
	CHECK_EQ(match(r, TARGET1, INIT_A, "::ffff:10.1.2.3"), ACL_HIT);
	/* Addresses are not names: an IPv4 rule never matches IPv6. */
	CHECK_EQ(match(r, TARGET1, INIT_A, "2001:db8::1"), ACL_MISS);
}

TEST(acl_ipv6_networks_in_brackets)
{
	CHECK_EQ(match("ALL [2001:db8::/32]\n", TARGET1, INIT_A,
		       "2001:db8:1::5"), ACL_HIT);
	CHECK_EQ(match("ALL [2001:db8::]/32\n", TARGET1, INIT_A,
		       "2001:db9::5"), ACL_MISS);
	CHECK_EQ(match("ALL [fe80::]/10\n", TARGET1, INIT_A, "febf::1"),
		 ACL_HIT);
	CHECK_EQ(match("ALL [fe80::]/10\n", TARGET1, INIT_A, "fec0::1"),
		 ACL_MISS);
	CHECK_EQ(match("ALL [::1]\n", TARGET1, INIT_A, "::1"), ACL_HIT);
	CHECK_EQ(match("ALL [::1]\n", TARGET1, INIT_A, "127.0.0.1"), ACL_MISS);
}

TEST(acl_first_rule_whose_target_matches_decides)
{
	const char *r = TARGET1 " " INIT_B "\nALL " INIT_A "\n";

	/* TARGET1's own rule decides, even though ALL would admit INIT_A. */
	CHECK_EQ(match(r, TARGET1, INIT_A, "192.0.2.1"), ACL_MISS);
	CHECK_EQ(match(r, TARGET1, INIT_B, "192.0.2.1"), ACL_HIT);
	CHECK_EQ(match(r, TARGET2, INIT_A, "192.0.2.1"), ACL_HIT);
	/* An ALL line ends the search: rules after it never count. */
	CHECK_EQ(match("ALL 10.0.0.1\n" TARGET1 " ALL\n", TARGET1, INIT_A,
		       "192.0.2.1"), ACL_MISS);
	CHECK_EQ(match(TARGET1 " ALL\n", TARGET2, INIT_A, "192.0.2.1"),
		 ACL_NO_RULE);
	/* Target names compare without case. */
	CHECK_EQ(match("IQN.2001-04.COM.EXAMPLE:DISK1 ALL\n", TARGET1, INIT_A,
		       "192.0.2.1"), ACL_HIT);
}

static void access_of(struct access *a, const char *allow, const char *deny,
		      const char *targets)
{
	memset(a, 0, sizeof(*a));
	if (allow && parse(allow, &a->allow))
		abort();
	if (deny && parse(deny, &a->deny))
		abort();
	if (targets && parse(targets, &a->targets))
		abort();
}

static bool allowed(const char *allow, const char *deny, const char *who,
		    const char *ip)
{
	struct access a;
	struct sockaddr_storage ss = sockaddr_of(ip, 0);
	bool ok;

	access_of(&a, allow, deny, NULL);
	ok = access_initiator(&a, TARGET1, who, &ss);
	access_free(&a);
	return ok;
}

TEST(access_without_files_allows_everyone)
{
	CHECK(allowed(NULL, NULL, INIT_A, "192.0.2.1"));
}

TEST(access_an_existing_empty_allow_file_denies_all)
{
	CHECK(!allowed("", NULL, INIT_A, "192.0.2.1"));
	CHECK(!allowed("# nothing\n", NULL, INIT_A, "192.0.2.1"));
}

TEST(access_allow_file_admits_by_name_and_by_network)
{
	const char *allow = TARGET1 " " INIT_A ",10.9.0.0/16\n";

	CHECK(allowed(allow, NULL, INIT_A, "192.0.2.1"));
	CHECK(allowed(allow, NULL, INIT_B, "10.9.3.4"));
	CHECK(!allowed(allow, NULL, INIT_B, "192.0.2.1"));
	/* A target without a rule is closed once the file exists. */
	CHECK(!allowed(TARGET2 " ALL\n", NULL, INIT_A, "192.0.2.1"));
}

TEST(access_deny_refuses_unless_an_allow_rule_matches)
{
	const char *deny = TARGET1 " ALL\n";

	CHECK(!allowed(NULL, deny, INIT_A, "192.0.2.1"));
	CHECK(allowed(NULL, TARGET2 " ALL\n", INIT_A, "192.0.2.1"));
	/* The cluster agents' pair: deny ALL, allow the listed ones. */
	CHECK(allowed(TARGET1 " " INIT_A "\n", deny, INIT_A, "192.0.2.1"));
	CHECK(!allowed(TARGET1 " " INIT_A "\n", deny, INIT_B, "192.0.2.1"));
}

TEST(access_targets_allow_hides_a_target_on_other_portals)
{
	struct access a;
	struct sockaddr_storage here = sockaddr_of("192.0.2.1", 0),
				there = sockaddr_of("198.51.100.1", 0),
				v6 = sockaddr_of("2001:db8::1", 0);

	access_of(&a, NULL, NULL, NULL);
	CHECK(access_portal(&a, TARGET1, &here));
	access_free(&a);

	access_of(&a, NULL, NULL,
		  TARGET1 " 192.0.2.0/24,[2001:db8::/64]\nALL ALL\n");
	CHECK(access_portal(&a, TARGET1, &here));
	CHECK(!access_portal(&a, TARGET1, &there));
	CHECK(access_portal(&a, TARGET1, &v6));
	CHECK(access_portal(&a, TARGET2, &there));
	access_free(&a);

	/* Names never match in targets.allow: it is about addresses. */
	access_of(&a, NULL, NULL, TARGET1 " .*\n");
	CHECK(!access_portal(&a, TARGET1, &here));
	access_free(&a);
}

TEST(access_targets_allow_refuses_a_name_instead_of_hiding_a_target)
{
	struct acl_file af;

	REQUIRE(parse(TARGET1 " 192.0.2.0/24, ALL,[2001:db8::1]\n", &af) == 0);
	CHECK(acl_addresses_only(&af, err, sizeof(err)) == 0);
	acl_file_free(&af);
	/* A typo in an address makes it a name pattern. */
	REQUIRE(parse("ALL ALL\n" TARGET1 " 192.0.2.0/24,192.0.2.l\n", &af) == 0);
	CHECK(acl_addresses_only(&af, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, ":2: entry 2 is a name");
	acl_file_free(&af);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

TEST(access_files_are_read_from_the_first_directory_that_has_each)
{
	char d1[] = "/tmp/iet-acl-XXXXXX", d2[] = "/tmp/iet-acl-XXXXXX";
	char dirs[64], path[512];
	struct sockaddr_storage peer = sockaddr_of("192.0.2.1", 0);
	struct access a;

	REQUIRE(mkdtemp(d1) && mkdtemp(d2));
	snprintf(dirs, sizeof(dirs), "%s:%s", d1, d2);
	write_file(d1, ACL_ALLOW, TARGET1 " " INIT_A "\n");
	write_file(d2, ACL_ALLOW, TARGET1 " ALL\n");
	write_file(d2, ACL_DENY, "ALL ALL\n");
	REQUIRE(access_load(&a, dirs, err, sizeof(err)) == 0);
	CHECK(a.allow.exists);
	CHECK(a.deny.exists);
	CHECK(!a.targets.exists);
	CHECK(access_initiator(&a, TARGET1, INIT_A, &peer));
	CHECK(!access_initiator(&a, TARGET1, INIT_B, &peer));
	access_free(&a);

	/* A broken file is an error: the caller refuses. */
	write_file(d2, ACL_TARGETS, "ALL 999.1.1.1\n");
	CHECK(access_load(&a, dirs, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "targets.allow:1:");
	write_file(d2, ACL_TARGETS, "ALL 192.0.2.1\n" TARGET1 " " INIT_A "\n");
	CHECK(access_load(&a, dirs, err, sizeof(err)) != 0);
	CHECK_CONTAINS(err, "targets.allow:2: entry 1 is a name");

	/* No directories at all: no files, everyone allowed. */
	REQUIRE(access_load(&a, NULL, err, sizeof(err)) == 0);
	CHECK(access_initiator(&a, TARGET1, INIT_B, &peer));
	access_free(&a);

	snprintf(path, sizeof(path), "rm -rf %s %s", d1, d2);
	CHECK(system(path) == 0);
}

TEST(access_files_are_parsed_again_only_when_one_changes)
{
	char d1[] = "/tmp/iet-acl-XXXXXX", d2[] = "/tmp/iet-acl-XXXXXX";
	char dirs[64], path[512], tmp[512];
	struct sockaddr_storage peer = sockaddr_of("192.0.2.1", 0);
	const struct access *a;
	unsigned long loads;
	int i;

	REQUIRE(mkdtemp(d1) && mkdtemp(d2));
	snprintf(dirs, sizeof(dirs), "%s:%s", d1, d2);
	write_file(d2, ACL_ALLOW, TARGET1 " " INIT_A "\n");
	a = access_cached(dirs, err, sizeof(err));
	REQUIRE(a);
	loads = access_cache_loads();
	CHECK(access_initiator(a, TARGET1, INIT_A, &peer));
	/* A thousand requests, one parse. */
	for (i = 0; i < 1000; i++)
		CHECK(access_cached(dirs, err, sizeof(err)) == a);
	CHECK_EQ(access_cache_loads(), loads);

	/* Edited in place (another size): read again. */
	write_file(d2, ACL_ALLOW, TARGET1 " " INIT_A "," INIT_B "\n");
	a = access_cached(dirs, err, sizeof(err));
	REQUIRE(a);
	CHECK_EQ(access_cache_loads(), loads + 1);
	CHECK(access_initiator(a, TARGET1, INIT_B, &peer));

	/* Renamed over, as editors and tools do: another inode. */
	snprintf(tmp, sizeof(tmp), "%s/new", d2);
	snprintf(path, sizeof(path), "%s/%s", d2, ACL_ALLOW);
	write_file(d2, "new", TARGET1 " " INIT_B "," INIT_A "\n");
	REQUIRE(rename(tmp, path) == 0);
	a = access_cached(dirs, err, sizeof(err));
	REQUIRE(a);
	CHECK_EQ(access_cache_loads(), loads + 2);

	/* A file that comes in an earlier directory hides the later one. */
	write_file(d1, ACL_ALLOW, TARGET1 " " INIT_B "\n");
	a = access_cached(dirs, err, sizeof(err));
	REQUIRE(a);
	CHECK(!access_initiator(a, TARGET1, INIT_A, &peer));
	/* ...and a deny file that comes is read as well. */
	write_file(d2, ACL_DENY, "ALL ALL\n");
	a = access_cached(dirs, err, sizeof(err));
	REQUIRE(a);
	CHECK(a->deny.exists);
	loads = access_cache_loads();

	/* A broken file refuses, and is not parsed again for each request. */
	write_file(d2, ACL_TARGETS, "ALL 999.1.1.1\n");
	for (i = 0; i < 100; i++) {
		err[0] = '\0';
		CHECK(!access_cached(dirs, err, sizeof(err)));
		CHECK_CONTAINS(err, "targets.allow:1:");
	}
	CHECK_EQ(access_cache_loads(), loads + 1);
	/* Gone again: everything as before it. */
	snprintf(path, sizeof(path), "%s/%s", d2, ACL_TARGETS);
	REQUIRE(unlink(path) == 0);
	CHECK(access_cached(dirs, err, sizeof(err)) != NULL);

	/* SIGHUP forgets what was read, changed or not. */
	loads = access_cache_loads();
	access_cache_flush();
	CHECK(access_cached(dirs, err, sizeof(err)) != NULL);
	CHECK_EQ(access_cache_loads(), loads + 1);
	/* Other directories are other files. */
	CHECK(access_cached(d1, err, sizeof(err)) != NULL);
	CHECK_EQ(access_cache_loads(), loads + 2);
	access_cache_flush();

	snprintf(path, sizeof(path), "rm -rf %s %s", d1, d2);
	CHECK(system(path) == 0);
}
