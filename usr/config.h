/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ietd.conf parser (syntax in COMPAT.md): text in, struct config out,
 * or one line "FILE:LINE: KEY: what is wrong" and nothing else.
 */
#ifndef IET_USR_CONFIG_H
#define IET_USR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define CONFIG_PATH		"/etc/iet/ietd.conf"
#define CONFIG_PATH_OLD		"/etc/ietd.conf"
#define CONFIG_LINE_MAX		8192
#define CONFIG_TARGETS_MAX	4096
#define CONFIG_FILE_MAX		(16u << 20)

/* Parse a whole file's text; on failure cfg is left empty. */
int config_parse(const char *buf, size_t len, const char *file,
		 struct config *cfg, char *err, size_t errlen);
/* Read and parse a file; errors name the file. */
int config_load(const char *path, struct config *cfg, char *err,
		size_t errlen);

/*
 * ietd's own state file (state.h) is ietd.conf syntax plus a per-target
 * "Origin file|ietadm|kernel" line, which only this flag allows.
 */
#define CONFIG_STATE	0x1
int config_parse_flags(const char *buf, size_t len, const char *file,
		       unsigned int flags, struct config *cfg, char *err,
		       size_t errlen);
int config_load_flags(const char *path, unsigned int flags,
		      struct config *cfg, char *err, size_t errlen);
/* The file to read without -c: /etc/iet/ietd.conf, else /etc/ietd.conf. */
const char *config_default_path(void);

/*
 * One Lun line's "Key=Value,..." list into lun (lun->lun already set), for
 * the parser and for ietadm --op new --lun. err gets "KEY: what".
 */
int lun_parse_args(const char *args, struct lun_conf *lun, char *err,
		   size_t errlen);
/*
 * One target-level "Key Value" (session keys, Wthreads, ..., MaxSessions,
 * Alias) into t. Returns 0, -ENOENT for a key that is not a target key, or
 * -EINVAL with err set to "what is wrong".
 */
int target_set_key(struct target_conf *t, const char *key, const char *value,
		   char *err, size_t errlen);
/*
 * One CHAP account's user name and secret: printable, no blanks, within
 * their lengths; the secret at least CHAP_SECRET_MIN long unless
 * allow_short. err names the user, never the secret.
 */
int account_check(const char *user, const char *secret, bool allow_short,
		  char *err, size_t errlen);
/* "5,7" or "MD5,SHA256": CHAP algorithms into a mask of CHAP_ALG_BIT(). */
int chap_algs_parse(const char *v, uint32_t *mask, char *err, size_t errlen);
/*
 * A login redirect, ADDRESS[:PORT] with an IPv4 address, [IPv6 address]
 * or host name, into "address:port" (port 3260 when none is given).
 */
int redirect_parse(const char *v, char *out, size_t outlen, char *err,
		   size_t errlen);
/*
 * A portal as PortalGroup lists it: IPv4[:PORT], [IPv6][:PORT], or
 * *[:PORT] for every address, into p (port 0 when none is given).
 */
int portal_addr_parse(const char *v, struct portal_addr *p, char *err,
		      size_t errlen);
/*
 * iSNSServer's value, HOST[:PORT] with a host name, an IPv4 address or
 * [IPv6], into host and port (3205 when none is given). -EINVAL if not.
 */
int isns_server_split(const char *v, char *host, size_t hostlen,
		      uint16_t *port);
/* Portals without a port listen on port (ietd -p): set it in them. */
void config_resolve_ports(struct config *cfg, uint16_t port);
/* The same groups, tags and portals, in the same order (lines aside)? */
bool config_same_groups(const struct config *a, const struct config *b);
/* The group with that tag, or NULL. */
const struct portal_group *config_group(const struct config *cfg,
					uint16_t tag);
/* A valid iSCSI name (RFC 7143 4.2.7: iqn., eui. or naa. form)? */
int iscsi_name_check(const char *name, char *err, size_t errlen);
/*
 * "name,name,..." into acc's initiators, each a valid iSCSI name; err
 * says what is wrong otherwise (acc's list then empty).
 */
int account_set_initiators(struct account *acc, const char *list, char *err,
			   size_t errlen);

#endif
