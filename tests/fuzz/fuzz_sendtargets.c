// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: SendTargets as the access files and the peer decide.
 * The input is the three access files and who asks, then the Text
 * Requests of a discovery session:
 *
 *   byte 0      the peer: 192.0.2.(byte) if even, else 2001:db8::(byte)
 *   byte 1      the local portal: 127.0.0.1 or 192.0.2.200 (PortalGroups)
 *   u16 + text  initiators.allow (length 0xffff: no file)
 *   u16 + text  initiators.deny
 *   u16 + text  targets.allow
 *   the rest    PDUs, as fuzz_login takes them
 *
 * Whatever the files and requests, every TargetName answered is one the
 * files let this initiator from this peer use through this portal, and
 * every TargetAddress one they leave open to it: the answer is checked
 * against the files read on their own.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "acl_cache.h"
#include "config.h"
#include "discovery.h"
#include "log.h"
#include "login.h"
#include "params.h"
#include "pdu_stream.h"

#define INITIATOR	"iqn.1993-08.org.debian:01:x"

static const char conf[] =
	"PortalGroup 1 127.0.0.1:3260\n"
	"PortalGroup 2 192.0.2.200:3260 [2001:db8::200]:3260\n"
	"Target iqn.2001-04.com.example:disk1\n Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:disk2\n Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:disk3\n Lun 0 Type=nullio\n";

static struct config cfg;
static char dir[] = "/tmp/iet-fuzz-st-XXXXXX";
static const char *const names[3] = { ACL_ALLOW, ACL_DENY, ACL_TARGETS };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	log_init("fuzz", 0, 0);
	if (config_parse(conf, sizeof(conf) - 1, "fuzz.conf", &cfg, err,
			 sizeof(err)) || !mkdtemp(dir))
		abort();
	config_resolve_ports(&cfg, 3260);
	return 0;
}

/* One access file from the input; false when the input runs out. */
static bool take_file(const uint8_t **p, size_t *left, const char *name)
{
	char path[128];
	size_t len;
	int fd;

	if (*left < 2)
		return false;
	len = (*p)[0] << 8 | (*p)[1];
	*p += 2;
	*left -= 2;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (len == 0xffff)
		return true;
	if (len > *left)
		len = *left;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, *p, len) != (ssize_t)len)
		abort();
	close(fd);
	*p += len;
	*left -= len;
	return true;
}

static void addr(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *s4 = (void *)ss;
	struct sockaddr_in6 *s6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
	} else {
		abort();
	}
}

/*
 * Each TargetName and TargetAddress of an answer, against the files (a
 * NULL: they are broken, and nothing may be listed).
 */
static void check(const struct access *a, const struct sockaddr_storage *peer,
		  const struct sockaddr_storage *local, const char *text,
		  size_t len)
{
	const char *target = NULL;
	size_t off = 0;

	while (off < len) {
		const char *kv = text + off;
		size_t n = strnlen(kv, len - off);

		off += n + 1;
		/* A key the request should not have sent, answered as such. */
		if (strstr(kv, "=Reject") || strstr(kv, "=NotUnderstood")) {
			target = NULL;
			continue;
		}
		if (!strncmp(kv, "TargetName=", 11)) {
			target = kv + 11;
			if (!a || !config_target_by_name(&cfg, target) ||
			    !access_portal(a, target, local) ||
			    !access_initiator(a, target, INITIATOR, peer))
				abort();
		} else if (!strncmp(kv, "TargetAddress=", 14)) {
			char ip[64];
			const char *v = kv + 14, *end = strrchr(v, ':');
			struct sockaddr_storage ss;
			size_t l;

			if (!target || !end)
				abort();
			l = end - v;
			if (*v == '[') {
				v++;
				l -= 2;
			}
			if (l >= sizeof(ip))
				abort();
			memcpy(ip, v, l);
			ip[l] = '\0';
			addr(&ss, ip, 3260);
			if (!access_portal(a, target, &ss))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct login_outcome o = { .discovery = true, .cid = 0, .statsn = 1,
				   .exp_cmdsn = 1 };
	struct sockaddr_storage peer, local;
	struct disc_budget budget = { .max = 1u << 20 };
	const uint8_t *bhs, *data;
	struct pdu_out out;
	struct access a;
	struct disc *d;
	char ip[64], err[512];
	size_t dlen, i;
	bool files_ok;

	if (size < 2)
		return 0;
	if (in[0] & 1)
		snprintf(ip, sizeof(ip), "2001:db8::%x", in[0]);
	else
		snprintf(ip, sizeof(ip), "192.0.2.%u", in[0]);
	addr(&peer, ip, 40000);
	addr(&local, in[1] & 1 ? "192.0.2.200" : "127.0.0.1", 3260);
	in += 2;
	size -= 2;
	for (i = 0; i < 3; i++)
		if (!take_file(&in, &size, names[i]))
			return 0;
	/* Rewritten within the file system's timestamp granularity. */
	access_cache_flush();
	files_ok = !access_load(&a, dir, err, sizeof(err));

	snprintf(o.initiator, sizeof(o.initiator), "%s", INITIATOR);
	/* Answers in one piece, checked whole (continuations: fuzz_login). */
	o.keys[IET_KEY_MAX_XMIT_DSL] = 65536;
	o.keys[IET_KEY_MAX_RECV_DSL] = 8192;
	d = disc_new(&cfg, &o, &local);
	if (!d)
		abort();
	disc_set_access(d, &peer, dir);
	disc_set_budget(d, &budget);
	while (next_pdu(&in, &size, &bhs, &data, &dlen, disc_max_dsl(d))) {
		enum disc_result r = disc_pdu(d, bhs, data, dlen, &out);

		if (r == DISC_CLOSE || r == DISC_REPLY_CLOSE)
			break;
		/* Broken files answer nothing; sound ones only what they allow. */
		if (r == DISC_REPLY && (bhs[0] & 0x3f) == OP_TEXT_REQ &&
		    (out.bhs[0] & 0x3f) == OP_TEXT_RSP && out.dlen)
			check(files_ok ? &a : NULL, &peer, &local,
			      (const char *)out.data, out.dlen);
		disc_sent(d);
	}
	disc_free(d);
	if (budget.used)
		abort();
	if (files_ok)
		access_free(&a);
	return 0;
}
