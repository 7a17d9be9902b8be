// SPDX-License-Identifier: GPL-2.0
/* Access files: parse the rules, match them, decide at login. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "readfile.h"

#define ACL_LINE_MAX	8192
#define ACL_PATTERN_MAX	256
#define ACL_REPEATS_MAX	16	/* repetition operators in one pattern */
#define ACL_BOUND_MAX	64	/* n and m of {n,m} */

static void free_rule(struct acl_rule *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		if (r->entries[i].type == ACL_NAME)
			regfree(&r->entries[i].re);
	free(r->entries);
	free(r->target);
}

void acl_file_free(struct acl_file *af)
{
	size_t i;

	for (i = 0; i < af->nr; i++)
		free_rule(&af->rules[i]);
	free(af->rules);
	af->rules = NULL;
	af->nr = 0;
}

static int parse_prefix(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > (long)max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "[2001:db8::/32]", "[2001:db8::]/32" or "[::1]" */
static int parse_net6(const char *s, struct acl_entry *e)
{
	char a[INET6_ADDRSTRLEN + 8];
	const char *close = strchr(s, ']'), *slash;
	size_t len;

	if (!close)
		return -EINVAL;
	len = close - s - 1;
	if (len >= sizeof(a))
		return -EINVAL;
	memcpy(a, s + 1, len);
	a[len] = '\0';
	e->prefix = 128;
	slash = strchr(a, '/');
	if (slash) {
		if (close[1] || parse_prefix(slash + 1, 128, &e->prefix))
			return -EINVAL;
		a[slash - a] = '\0';
	} else if (close[1]) {
		if (close[1] != '/' || parse_prefix(close + 2, 128, &e->prefix))
			return -EINVAL;
	}
	if (inet_pton(AF_INET6, a, e->addr) != 1)
		return -EINVAL;
	e->type = ACL_NET6;
	return 0;
}

static int parse_net4(const char *s, struct acl_entry *e)
{
	char a[INET_ADDRSTRLEN + 4];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);

	if (len >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, len);
	a[len] = '\0';
	e->prefix = 32;
	if (slash && parse_prefix(slash + 1, 32, &e->prefix))
		return -EINVAL;
	if (inet_pton(AF_INET, a, e->addr) != 1)
		return -EINVAL;
	e->type = ACL_NET4;
	return 0;
}

static bool looks_ipv4(const char *s)
{
	return *s && strspn(s, "0123456789./") == strlen(s) &&
	       strchr(s, '.');
}

/*
 * glibc's regcomp() needs memory exponential in stacked repetitions
 * ("a+++", "a{50}{50}"): a name pattern has no use for them, so they are
 * refused, as are large bounds and many operators.
 */
static bool pattern_sane(const char *s)
{
	unsigned int repeats = 0;
	bool after_repeat = false;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			after_repeat = false;
			continue;
		}
		if (*s == '*' || *s == '+' || *s == '?' || *s == '{') {
			if (after_repeat || ++repeats > ACL_REPEATS_MAX)
				return false;
			if (*s == '{') {
				char *end;
				long n = strtol(s + 1, &end, 10);

				if (n < 0 || n > ACL_BOUND_MAX)
					return false;
				if (*end == ',' && end[1] != '}') {
					n = strtol(end + 1, &end, 10);
					if (n < 0 || n > ACL_BOUND_MAX)
						return false;
				} else if (*end == ',') {
					end++;
				}
				if (*end != '}')
					return false;
				s = end;
			}
			after_repeat = true;
			continue;
		}
		after_repeat = false;
	}
	return true;
}

static int parse_entry(const char *s, struct acl_entry *e, char *err,
		       size_t errlen)
{
	char pat[ACL_PATTERN_MAX + 8];
	int ret;

	memset(e, 0, sizeof(*e));
	if (!strcmp(s, "ALL")) {
		e->type = ACL_ANY;
		return 0;
	}
	if (s[0] == '[') {
		if (parse_net6(s, e)) {
			snprintf(err, errlen,
				 "\"%.64s\" is not an IPv6 address or network ([addr] or [addr/len])",
				 s);
			return -EINVAL;
		}
		return 0;
	}
	if (looks_ipv4(s)) {
		if (parse_net4(s, e)) {
			snprintf(err, errlen,
				 "\"%.64s\" is not an IPv4 address or network (a.b.c.d or a.b.c.d/len)",
				 s);
			return -EINVAL;
		}
		return 0;
	}
	if (strlen(s) > ACL_PATTERN_MAX) {
		snprintf(err, errlen, "pattern longer than %d characters",
			 ACL_PATTERN_MAX);
		return -EINVAL;
	}
	if (!pattern_sane(s)) {
		snprintf(err, errlen,
			 "\"%.64s\": at most %d repetitions, none stacked, bounds up to %d",
			 s, ACL_REPEATS_MAX, ACL_BOUND_MAX);
		return -EINVAL;
	}
	/* An initiator name pattern matches the whole name, never a part. */
	snprintf(pat, sizeof(pat), "^(%s)$", s);
	ret = regcomp(&e->re, pat, REG_EXTENDED | REG_NOSUB | REG_ICASE);
	if (ret) {
		char why[128];

		regerror(ret, &e->re, why, sizeof(why));
		snprintf(err, errlen, "\"%.64s\" is not a valid pattern: %s", s,
			 why);
		return -EINVAL;
	}
	e->type = ACL_NAME;
	return 0;
}

/* One rule line (trimmed, not a comment). */
static int parse_rule(char *l, struct acl_rule *r, char *err, size_t errlen)
{
	char *list, *item, *save = NULL;
	size_t tlen = strcspn(l, " \t");

	memset(r, 0, sizeof(*r));
	list = l + tlen;
	if (!*list) {
		snprintf(err, errlen,
			 "\"%.64s\": expected \"<target|ALL> <list>\"", l);
		return -EINVAL;
	}
	*list++ = '\0';
	if (strcmp(l, "ALL")) {
		r->target = strdup(l);
		if (!r->target)
			goto oom;
	}
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		struct acl_entry *ne;
		char *end;

		while (*item == ' ' || *item == '\t')
			item++;
		end = item + strlen(item);
		while (end > item && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		/* Tolerated: tools join lists with a stray comma. */
		if (!*item)
			continue;
		ne = realloc(r->entries, (r->nr + 1) * sizeof(*ne));
		if (!ne)
			goto oom;
		r->entries = ne;
		if (parse_entry(item, &r->entries[r->nr], err, errlen)) {
			free_rule(r);
			return -EINVAL;
		}
		r->nr++;
	}
	if (!r->nr) {
		snprintf(err, errlen, "rule for %.64s has an empty list", l);
		free_rule(r);
		return -EINVAL;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	free_rule(r);
	return -ENOMEM;
}

int acl_parse(const char *buf, size_t len, const char *file,
	      struct acl_file *af, char *err, size_t errlen)
{
	char l[ACL_LINE_MAX + 2], what[256];
	unsigned int line = 0;
	size_t pos = 0;

	af->rules = NULL;
	af->nr = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		struct acl_rule *nr;
		char *s, *e;

		line++;
		if (llen > ACL_LINE_MAX || memchr(buf + pos, '\0', llen)) {
			snprintf(err, errlen, "%s:%u: line too long or with a NUL byte",
				 file, line);
			goto fail;
		}
		memcpy(l, buf + pos, llen);
		l[llen] = '\0';
		pos += llen + 1;
		for (s = l; *s == ' ' || *s == '\t'; s++)
			;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (!*s || *s == '#')
			continue;
		nr = realloc(af->rules, (af->nr + 1) * sizeof(*nr));
		if (!nr) {
			snprintf(err, errlen, "%s: out of memory", file);
			goto fail;
		}
		af->rules = nr;
		if (parse_rule(s, &af->rules[af->nr], what, sizeof(what))) {
			snprintf(err, errlen, "%s:%u: %s", file, line, what);
			goto fail;
		}
		af->rules[af->nr++].line = line;
	}
	return 0;
fail:
	acl_file_free(af);
	return -EINVAL;
}

int addr_bytes(const struct sockaddr_storage *ss, uint8_t *out)
{
	if (!ss)
		return 0;
	if (ss->ss_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return 4;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(out, &a->s6_addr[12], 4);
			return 4;
		}
		memcpy(out, a, 16);
		return 16;
	}
	return 0;
}

int source_key(const struct sockaddr_storage *ss, uint8_t key[16])
{
	int len = addr_bytes(ss, key);

	if (len != 16)
		return len;
	/* fe80::/10 */
	return key[0] == 0xfe && (key[1] & 0xc0) == 0x80 ? 16 : 8;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b,
			 unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, full))
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ b[full]) & (0xff << (8 - rest))) == 0;
}

static bool entry_match(const struct acl_entry *e, const char *name,
			const uint8_t *addr, int alen)
{
	switch (e->type) {
	case ACL_ANY:
		return true;
	case ACL_NET4:
		return alen == 4 && prefix_match(addr, e->addr, e->prefix);
	case ACL_NET6:
		return alen == 16 && prefix_match(addr, e->addr, e->prefix);
	case ACL_NAME:
		return name && !regexec(&e->re, name, 0, NULL, 0);
	}
	return false;
}

enum acl_result acl_match(const struct acl_file *af, const char *target,
			  const char *name, const struct sockaddr_storage *addr)
{
	uint8_t a[16];
	int alen = addr_bytes(addr, a);
	size_t i, j;

	for (i = 0; i < af->nr; i++) {
		const struct acl_rule *r = &af->rules[i];

		if (r->target && strcasecmp(r->target, target))
			continue;
		for (j = 0; j < r->nr; j++)
			if (entry_match(&r->entries[j], name, a, alen))
				return ACL_HIT;
		return ACL_MISS;
	}
	return ACL_NO_RULE;
}

static int read_file(const char *path, struct acl_file *af, char *err,
		     size_t errlen)
{
	char *buf;
	size_t got;
	int ret;

	/* A file that shrinks while read: take what is there. */
	ret = read_small_file(path, ACL_FILE_MAX, true, &buf, &got, err,
			      errlen);
	if (ret)
		return ret;
	af->exists = true;
	snprintf(af->path, sizeof(af->path), "%s", path);
	ret = acl_parse(buf, got, path, af, err, errlen);
	free(buf);
	return ret;
}

static int load_one(struct acl_file *af, const char *dirs, const char *name,
		    char *err, size_t errlen)
{
	char path[sizeof(af->path)];
	int ret;

	memset(af, 0, sizeof(*af));
	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");

		if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)len,
				     dirs, name) >= sizeof(path)) {
			snprintf(err, errlen, "%.100s: directory name too long",
				 dirs);
			return -ENAMETOOLONG;
		}
		ret = read_file(path, af, err, errlen);
		if (ret != -ENOENT)
			return ret;
		dirs += len;
		if (*dirs)
			dirs++;
	}
	return 0;
}

int acl_addresses_only(const struct acl_file *af, char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < af->nr; i++)
		for (j = 0; j < af->rules[i].nr; j++)
			if (af->rules[i].entries[j].type == ACL_NAME) {
				snprintf(err, errlen,
					 "%s:%u: entry %zu is a name; this file lists portal addresses and networks (or ALL)",
					 af->path, af->rules[i].line, j + 1);
				return -EINVAL;
			}
	return 0;
}

int access_load(struct access *a, const char *dir, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	if (load_one(&a->allow, dir, ACL_ALLOW, err, errlen) ||
	    load_one(&a->deny, dir, ACL_DENY, err, errlen) ||
	    load_one(&a->targets, dir, ACL_TARGETS, err, errlen) ||
	    acl_addresses_only(&a->targets, err, errlen)) {
		access_free(a);
		return -EINVAL;
	}
	return 0;
}

void access_free(struct access *a)
{
	acl_file_free(&a->allow);
	acl_file_free(&a->deny);
	acl_file_free(&a->targets);
}

bool access_initiator(const struct access *a, const char *target,
		      const char *initiator,
		      const struct sockaddr_storage *peer)
{
	if (a->allow.exists)
		return acl_match(&a->allow, target, initiator, peer) == ACL_HIT;
	return acl_match(&a->deny, target, initiator, peer) != ACL_HIT;
}

bool access_portal(const struct access *a, const char *target,
		   const struct sockaddr_storage *local)
{
	if (!a->targets.exists)
		return true;
	return acl_match(&a->targets, target, NULL, local) == ACL_HIT;
}
