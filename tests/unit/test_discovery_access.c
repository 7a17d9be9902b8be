// SPDX-License-Identifier: GPL-2.0
/* SendTargets lists only what the initiator may log in to, on this portal. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "discovery.h"
#include "helpers.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\nTarget " TARGET2 "\n"

static char err[512];

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

/* The targets SendTargets=All lists, as "name name ". */
static const char *listed(const struct config *cfg, const char *dirs,
			  int *ret)
{
	static char names[1024];
	struct sockaddr_storage peer, local;
	struct st_who who = { INITIATOR, &peer, &local, dirs };
	struct textbuf tb;
	size_t off = 0, n = 0;

	peer = sockaddr_of("192.0.2.10", 3260);
	local = sockaddr_of("192.0.2.1", 3260);
	textbuf_init(&tb, 65536);
	*ret = sendtargets(cfg, "All", &who, &tb, err, sizeof(err));
	names[0] = '\0';
	while (off < tb.len) {
		const char *p = tb.buf + off;

		if (!strncmp(p, "TargetName=", 11))
			n += snprintf(names + n, sizeof(names) - n, "%s ", p + 11);
		else if (strcmp(p, "TargetAddress=192.0.2.1:3260,1"))
			abort();
		off += strlen(p) + 1;
	}
	textbuf_free(&tb);
	return names;
}

TEST(discovery_lists_only_what_the_access_files_allow)
{
	char dir[] = "/tmp/iet-disc-XXXXXX", cmd[64];
	struct config cfg;
	int ret;

	REQUIRE(mkdtemp(dir));
	config_of(&cfg, CONF);
	CHECK_STR(listed(&cfg, dir, &ret), TARGET1 " " TARGET2 " ");
	CHECK_EQ(ret, 0);
	put(dir, ACL_ALLOW, TARGET2 " iqn.1991-05.com.microsoft:.*\nALL ALL\n");
	CHECK_STR(listed(&cfg, dir, &ret), TARGET1 " ");
	put(dir, ACL_ALLOW, "ALL 192.0.2.0/24\n");
	put(dir, ACL_TARGETS, TARGET1 " 198.51.100.1\nALL ALL\n");
	CHECK_STR(listed(&cfg, dir, &ret), TARGET2 " ");
	/* A broken file lists nothing and says why. */
	put(dir, ACL_DENY, "ALL [broken\n");
	CHECK_STR(listed(&cfg, dir, &ret), "");
	CHECK_EQ(ret, -EACCES);
	CHECK_CONTAINS(err, "initiators.deny:1:");
	config_free(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

TEST(discovery_without_access_files_lists_every_target)
{
	struct config cfg;
	int ret;

	config_of(&cfg, CONF);
	CHECK_STR(listed(&cfg, NULL, &ret), TARGET1 " " TARGET2 " ");
	config_free(&cfg);
}

/* SendTargets=All's answer, its pairs separated by spaces. */
static const char *answer(const struct config *cfg, const char *dirs)
{
	static char out[2048];
	struct sockaddr_storage peer, local;
	struct st_who who = { INITIATOR, &peer, &local, dirs };
	struct textbuf tb;
	size_t off = 0, n = 0;

	peer = sockaddr_of("192.0.2.10", 3260);
	local = sockaddr_of("192.0.2.1", 3260);
	textbuf_init(&tb, 65536);
	if (sendtargets(cfg, "All", &who, &tb, err, sizeof(err))) {
		fprintf(stderr, "sendtargets: %s\n", err);
		abort();
	}
	out[0] = '\0';
	while (off < tb.len) {
		n += snprintf(out + n, sizeof(out) - n, "%s ", tb.buf + off);
		off += strlen(tb.buf + off) + 1;
	}
	textbuf_free(&tb);
	return out;
}

TEST(discovery_lists_every_portal_of_every_group_with_its_tag)
{
	char dir[] = "/tmp/iet-disc-XXXXXX", cmd[64];
	struct config cfg;

	/* "*" is given as the address the initiator came to. */
	config_of(&cfg, "PortalGroup 1 *\n"
		  "PortalGroup 2 198.51.100.2:3261 [2001:db8::2]:3262\n"
		  "Target " TARGET1 "\n");
	config_resolve_ports(&cfg, 3260);
	CHECK_STR(answer(&cfg, NULL),
		  "TargetName=" TARGET1 " TargetAddress=192.0.2.1:3260,1 "
		  "TargetAddress=198.51.100.2:3261,2 "
		  "TargetAddress=[2001:db8::2]:3262,2 ");
	/* A portal targets.allow closes to the target is not given. */
	REQUIRE(mkdtemp(dir));
	put(dir, ACL_TARGETS, TARGET1 " 192.0.2.0/24,[2001:db8::/32]\n");
	CHECK_STR(answer(&cfg, dir),
		  "TargetName=" TARGET1 " TargetAddress=192.0.2.1:3260,1 "
		  "TargetAddress=[2001:db8::2]:3262,2 ");
	config_free(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}
