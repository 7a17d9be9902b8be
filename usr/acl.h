/* SPDX-License-Identifier: GPL-2.0 */
/*
 * initiators.allow, initiators.deny and targets.allow, as COMPAT.md has
 * them: a pure parser of one file's text into rules, the match of one
 * file, and the decisions ietd takes at every login and SendTargets with
 * the files read afresh each time (no reload needed, no cache to go stale).
 *
 * A rule is "<target-name | ALL> <entry>,<entry>,..."; an entry is ALL, an
 * IPv4 address or network (10.0.0.0/8), an IPv6 one in brackets
 * ([fe80::/10] or [fe80::]/10), or else an initiator-name pattern: an
 * extended regular expression, anchored at both ends, case-insensitive.
 * The first rule whose target matches decides.
 */
#ifndef IET_USR_ACL_H
#define IET_USR_ACL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ACL_FILE_MAX		(1u << 20)
#define ACL_ALLOW		"initiators.allow"
#define ACL_DENY		"initiators.deny"
#define ACL_TARGETS		"targets.allow"

enum acl_entry_type {
	ACL_ANY,
	ACL_NET4,
	ACL_NET6,
	ACL_NAME,
};

struct acl_entry {
	enum acl_entry_type type;
	uint8_t addr[16];		/* network order; 4 bytes for IPv4 */
	unsigned int prefix;
	regex_t re;			/* ACL_NAME */
};

struct acl_rule {
	char *target;			/* NULL for ALL */
	struct acl_entry *entries;
	size_t nr;
	unsigned int line;
};

struct acl_file {
	bool exists;
	char path[512];
	struct acl_rule *rules;
	size_t nr;
};

/* Rules from a file's text; err is "FILE:LINE: what is wrong". */
int acl_parse(const char *buf, size_t len, const char *file,
	      struct acl_file *af, char *err, size_t errlen);
void acl_file_free(struct acl_file *af);
/*
 * targets.allow names local portals: a name pattern there could never
 * match, so it is an error rather than a target silently hidden.
 */
int acl_addresses_only(const struct acl_file *af, char *err, size_t errlen);

enum acl_result {
	ACL_NO_RULE,			/* no rule for this target */
	ACL_MISS,			/* its rule does not list the initiator */
	ACL_HIT,
};

/*
 * Decide with the first rule for target: does its list have the name
 * (NULL: only addresses can match, as in targets.allow) or the address?
 */
enum acl_result acl_match(const struct acl_file *af, const char *target,
			  const char *name, const struct sockaddr_storage *addr);

/* The three files, as read for one decision. */
struct access {
	struct acl_file allow, deny, targets;
};

/* Where ietd looks for each file, in order (COMPAT.md). */
#define ACCESS_DIRS		"/etc/iet:/etc"

/*
 * Read each file from the first of dirs (colon-separated) that has it;
 * dirs NULL reads nothing, so everything is allowed (tests). A missing
 * file is not an error; an unreadable or malformed one is (the caller then
 * refuses: a broken rule must not open access).
 */
int access_load(struct access *a, const char *dirs, char *err,
		size_t errlen);
void access_free(struct access *a);
/*
 * initiators.allow and .deny: with an allow file, access needs a matching
 * allow rule (an empty file denies all); without one, access is refused
 * only by a matching deny rule.
 */
bool access_initiator(const struct access *a, const char *target,
		      const char *initiator,
		      const struct sockaddr_storage *peer);
/* targets.allow: may target be used through the local address? */
/*
 * The IP address of ss as 4 bytes (IPv4, an IPv4-mapped IPv6 address
 * too) or 16 (IPv6) into out; 0 for NULL or another family.
 */
int addr_bytes(const struct sockaddr_storage *ss, uint8_t *out);
/*
 * Who a peer is, for limits that follow one source (peerlog.c,
 * backoff.c): an IPv4 address (4 bytes into key), an IPv6 /64 (8), which
 * one host can take all of, but a link-local IPv6 address whole (16),
 * since every host of a link shares fe80::/64. 0 for another family.
 */
int source_key(const struct sockaddr_storage *ss, uint8_t key[16]);
bool access_portal(const struct access *a, const char *target,
		   const struct sockaddr_storage *local);

#endif
