// SPDX-License-Identifier: GPL-2.0
/* ietd's process set-up: the pid file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"
#include "test.h"

static char err[512];

static void read_back(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = '\0';
		fclose(f);
	}
}

TEST(pidfile_holds_the_process_id)
{
	char dir[] = "/tmp/ietd-pid-XXXXXX", path[64], buf[64], want[32];

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ietd.pid", dir);
	REQUIRE(pidfile_write(path, err, sizeof(err)) == 0);
	/* A stale one from a crash is replaced. */
	REQUIRE(pidfile_write(path, err, sizeof(err)) == 0);
	read_back(path, buf, sizeof(buf));
	snprintf(want, sizeof(want), "%d\n", (int)getpid());
	CHECK_STR(buf, want);
	unlink(path);
	rmdir(dir);
}

TEST(pidfile_that_is_a_symlink_is_refused_and_its_target_left_alone)
{
	char dir[] = "/tmp/ietd-pid-XXXXXX", path[64], victim[64], buf[64];
	FILE *f;

	REQUIRE(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/precious", dir);
	snprintf(path, sizeof(path), "%s/ietd.pid", dir);
	f = fopen(victim, "w");
	REQUIRE(f != NULL);
	fputs("keep me\n", f);
	fclose(f);
	REQUIRE(symlink(victim, path) == 0);
	CHECK_EQ(pidfile_write(path, err, sizeof(err)), -ELOOP);
	CHECK_CONTAINS(err, path);
	read_back(victim, buf, sizeof(buf));
	CHECK_STR(buf, "keep me\n");
	unlink(path);
	unlink(victim);
	rmdir(dir);
}
