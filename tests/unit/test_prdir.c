// SPDX-License-Identifier: GPL-2.0
/* The directory of reservations kept through power loss (prdir.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prdir.h"
#include "test.h"

static char *tmpdir(void)
{
	static char path[64];

	strcpy(path, "/tmp/iet-prdir-XXXXXX");
	return mkdtemp(path);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

TEST(prdir_make_makes_the_directory_and_its_parents)
{
	char *base = tmpdir(), dir[256], err[256];
	struct stat st;

	REQUIRE(base);
	snprintf(dir, sizeof(dir), "%s/var/lib/iet/pr", base);
	CHECK_EQ(prdir_make(dir, err, sizeof(err)), 0);
	REQUIRE(stat(dir, &st) == 0);
	CHECK(S_ISDIR(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0700);
	/* There already: nothing to do. */
	CHECK_EQ(prdir_make(dir, err, sizeof(err)), 0);
	/* A file in the way is named. */
	snprintf(dir, sizeof(dir), "%s/file", base);
	write_file(dir, "x");
	snprintf(dir, sizeof(dir), "%s/file/pr", base);
	CHECK_EQ(prdir_make(dir, err, sizeof(err)), -ENOTDIR);
	CHECK_CONTAINS(err, "/file/pr");
	CHECK_EQ(prdir_make("relative/pr", err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "not an absolute path");
	snprintf(dir, sizeof(dir), "rm -rf %s", base);
	CHECK_EQ(system(dir), 0);
}

TEST(prdir_read_takes_the_parameter_line)
{
	char *base = tmpdir(), param[256], buf[64];

	REQUIRE(base);
	snprintf(param, sizeof(param), "%s/pr_dir", base);
	write_file(param, "/var/lib/iet/pr\n");
	CHECK_EQ(prdir_read(param, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/var/lib/iet/pr");
	write_file(param, "relative\n");
	CHECK_EQ(prdir_read(param, buf, sizeof(buf)), -EINVAL);
	write_file(param, "/a/very/long/directory/name/that/does/not/fit/in/the/buffer\n");
	CHECK_EQ(prdir_read(param, buf, 16), -ENAMETOOLONG);
	unlink(param);
	CHECK_EQ(prdir_read(param, buf, sizeof(buf)), -ENOENT);
	rmdir(base);
}
