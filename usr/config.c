// SPDX-License-Identifier: GPL-2.0
/* Parse ietd.conf into the data model, refusing anything doubtful. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "config.h"
#include "digest.h"
#include "isns_pdu.h"
#include "readfile.h"
#include "params.h"

/* The port of a Redirect address that names none: iSCSI's. */
#define REDIRECT_PORT	3260

enum ck_type {
	CK_BOOL,
	CK_NUM,
	CK_DIGEST,
	CK_MARK_INT,		/* number or range n~m, validated, unused */
};

enum ck_dest {
	CK_KEYS,		/* target_conf.keys[idx] */
	CK_TPARAMS,		/* target_conf.tparams[idx] */
	CK_NONE,		/* accepted and checked, never enabled */
};

struct conf_key {
	const char *name;
	enum ck_type type;
	enum ck_dest dest;
	unsigned int idx;
	uint32_t min, max;
};

static const struct conf_key conf_keys[] = {
	{ "HeaderDigest", CK_DIGEST, CK_KEYS, IET_KEY_HEADER_DIGEST, 0, 0 },
	{ "DataDigest", CK_DIGEST, CK_KEYS, IET_KEY_DATA_DIGEST, 0, 0 },
	{ "MaxConnections", CK_NUM, CK_KEYS, IET_KEY_MAX_CONNECTIONS,
	  1, 65535 },
	{ "InitialR2T", CK_BOOL, CK_KEYS, IET_KEY_INITIAL_R2T, 0, 1 },
	{ "ImmediateData", CK_BOOL, CK_KEYS, IET_KEY_IMMEDIATE_DATA, 0, 1 },
	{ "MaxRecvDataSegmentLength", CK_NUM, CK_KEYS, IET_KEY_MAX_RECV_DSL,
	  DSL_MIN, DSL_MAX },
	{ "MaxXmitDataSegmentLength", CK_NUM, CK_KEYS, IET_KEY_MAX_XMIT_DSL,
	  DSL_MIN, DSL_MAX },
	{ "MaxBurstLength", CK_NUM, CK_KEYS, IET_KEY_MAX_BURST,
	  DSL_MIN, DSL_MAX },
	{ "FirstBurstLength", CK_NUM, CK_KEYS, IET_KEY_FIRST_BURST,
	  DSL_MIN, DSL_MAX },
	{ "DefaultTime2Wait", CK_NUM, CK_KEYS, IET_KEY_DEFAULT_TIME2WAIT,
	  0, 3600 },
	{ "DefaultTime2Retain", CK_NUM, CK_KEYS, IET_KEY_DEFAULT_TIME2RETAIN,
	  0, 3600 },
	{ "MaxOutstandingR2T", CK_NUM, CK_KEYS, IET_KEY_MAX_OUTSTANDING_R2T,
	  1, 65535 },
	{ "DataPDUInOrder", CK_BOOL, CK_KEYS, IET_KEY_DATA_PDU_INORDER, 0, 1 },
	{ "DataSequenceInOrder", CK_BOOL, CK_KEYS,
	  IET_KEY_DATA_SEQUENCE_INORDER, 0, 1 },
	/* RFC 7143 allows 0..2; recovery levels 1 and 2 are not implemented. */
	{ "ErrorRecoveryLevel", CK_NUM, CK_KEYS, IET_KEY_ERROR_RECOVERY_LEVEL,
	  0, 0 },
	{ "OFMarker", CK_BOOL, CK_NONE, 0, 0, 1 },
	{ "IFMarker", CK_BOOL, CK_NONE, 0, 0, 1 },
	{ "OFMarkInt", CK_MARK_INT, CK_NONE, 0, 1, 65535 },
	{ "IFMarkInt", CK_MARK_INT, CK_NONE, 0, 1, 65535 },
	{ "Wthreads", CK_NUM, CK_TPARAMS, IET_TP_WTHREADS, 1, 128 },
	{ "QueuedCommands", CK_NUM, CK_TPARAMS, IET_TP_QUEUED_CMDS, 1, 4096 },
	{ "NOPInterval", CK_NUM, CK_TPARAMS, IET_TP_NOP_INTERVAL, 0, 3600 },
	{ "NOPTimeout", CK_NUM, CK_TPARAMS, IET_TP_NOP_TIMEOUT, 0, 3600 },
	{ "AllowTargetReset", CK_BOOL, CK_TPARAMS, IET_TP_TARGET_RESET, 0, 1 },
};

#define NR_CONF_KEYS	(sizeof(conf_keys) / sizeof(conf_keys[0]))
/* Per-stanza "where was it set" slots: conf_keys, then these. */
enum {
	SLOT_ALIAS = NR_CONF_KEYS, SLOT_MAX_SESSIONS, SLOT_REDIRECT,
	SLOT_CHAP_ALGS, SLOT_ORIGIN, NR_SLOTS
};

static const struct conf_key *conf_key_find(const char *name)
{
	size_t i;

	for (i = 0; i < NR_CONF_KEYS; i++)
		if (!strcasecmp(conf_keys[i].name, name))
			return &conf_keys[i];
	return NULL;
}

static bool has_space(const char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s))
			return true;
	return false;
}

static int parse_u32(const char *v, uint32_t min, uint32_t max, uint32_t *out,
		     char *err, size_t errlen)
{
	uint64_t n;

	if (parse_number(v, &n)) {
		snprintf(err, errlen, "\"%.64s\" is not a number", v);
		return -EINVAL;
	}
	if (n < min || n > max) {
		if (min == max)
			snprintf(err, errlen, "%.32s is not supported (only %u)",
				 v, min);
		else
			snprintf(err, errlen, "%.32s out of range %u..%u", v,
				 min, max);
		return -EINVAL;
	}
	*out = n;
	return 0;
}

static int parse_yes_no(const char *v, uint32_t *out, char *err,
			size_t errlen)
{
	if (!strcasecmp(v, "Yes"))
		*out = 1;
	else if (!strcasecmp(v, "No"))
		*out = 0;
	else {
		snprintf(err, errlen, "\"%.64s\" is not Yes or No", v);
		return -EINVAL;
	}
	return 0;
}

static int parse_digests(const char *v, uint32_t *mask, char *err,
			 size_t errlen)
{
	*mask = 0;
	while (1) {
		size_t len = strcspn(v, ",");

		if (len == 4 && !strncasecmp(v, "None", 4))
			*mask |= DIGEST_MASK_NONE;
		else if (len == 6 && !strncasecmp(v, "CRC32C", 6))
			*mask |= DIGEST_MASK_CRC32C;
		else {
			snprintf(err, errlen,
				 "\"%.*s\" is not None or CRC32C", (int)(len > 64 ? 64 : len), v);
			return -EINVAL;
		}
		if (!v[len])
			return 0;
		v += len + 1;
	}
}

static int parse_mark_int(const char *v, const struct conf_key *k, char *err,
			  size_t errlen)
{
	const char *tilde = strchr(v, '~');
	uint32_t lo, hi;
	char first[32];

	if (!tilde)
		return parse_u32(v, k->min, k->max, &lo, err, errlen);
	if ((size_t)(tilde - v) >= sizeof(first)) {
		snprintf(err, errlen, "\"%.64s\" is not a number or range", v);
		return -EINVAL;
	}
	memcpy(first, v, tilde - v);
	first[tilde - v] = '\0';
	if (parse_u32(first, k->min, k->max, &lo, err, errlen) ||
	    parse_u32(tilde + 1, k->min, k->max, &hi, err, errlen))
		return -EINVAL;
	if (lo > hi) {
		snprintf(err, errlen, "empty range %u~%u", lo, hi);
		return -EINVAL;
	}
	return 0;
}

int chap_algs_parse(const char *v, uint32_t *mask, char *err,
		    size_t errlen)
{
	static const struct {
		const char *name;
		unsigned int id;
	} names[] = {
		{ "MD5", CHAP_MD5 }, { "SHA1", CHAP_SHA1 },
		{ "SHA-1", CHAP_SHA1 }, { "SHA256", CHAP_SHA256 },
		{ "SHA-256", CHAP_SHA256 }, { "SHA3-256", CHAP_SHA3_256 },
	};
	uint32_t m = 0;

	if (!*v) {
		snprintf(err, errlen, "missing value");
		return -EINVAL;
	}
	while (1) {
		size_t len = strcspn(v, ","), i;
		char item[16];
		uint64_t n;
		int id = -1;

		if (!len || len >= sizeof(item))
			goto bad;
		memcpy(item, v, len);
		item[len] = '\0';
		if (!parse_number(item, &n) && n >= CHAP_MD5 &&
		    n <= CHAP_SHA3_256)
			id = n;
		for (i = 0; id < 0 && i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(item, names[i].name))
				id = names[i].id;
		if (id < 0)
			goto bad;
		m |= CHAP_ALG_BIT(id);
		if (!v[len])
			break;
		v += len + 1;
		continue;
bad:
		snprintf(err, errlen,
			 "\"%.*s\" is not a CHAP algorithm: 5 (MD5), 6 (SHA1), 7 (SHA256) or 8 (SHA3-256)",
			 (int)(len > 32 ? 32 : len), v);
		return -EINVAL;
	}
	*mask = m;
	return 0;
}

/* A host name, as TargetAddress allows one (RFC 7143 13.8). */
static bool host_name(const char *s, size_t len)
{
	size_t i;

	if (!len || len > 253)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

/*
 * "HOST[:PORT]" or "[IPv6][:PORT]" into host (NUL-terminated, without the
 * brackets) and *port (NULL if none); *v6 says it was bracketed and is an
 * IPv6 address. host_ok judges an unbracketed host. 0, or -1 if malformed.
 */
static int split_host_port(const char *v, char *host, size_t hostlen,
			   const char **port, bool *v6,
			   bool (*host_ok)(const char *host, size_t len))
{
	struct in6_addr a6;
	const char *end;
	size_t hlen;

	*port = NULL;
	*v6 = v[0] == '[';
	if (*v6) {
		end = strchr(v, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -1;
		v++;
		hlen = end - v;
		if (end[1])
			*port = end + 2;
	} else {
		end = strchr(v, ':');
		hlen = end ? (size_t)(end - v) : strlen(v);
		if (end)
			*port = end + 1;
		if (!host_ok(v, hlen))
			return -1;
	}
	if (hlen >= hostlen)
		return -1;
	memcpy(host, v, hlen);
	host[hlen] = '\0';
	return *v6 && inet_pton(AF_INET6, host, &a6) != 1 ? -1 : 0;
}

static int parse_port(const char *port, uint64_t *p, char *err, size_t errlen)
{
	if (port && (parse_number(port, p) || *p < 1 || *p > 65535)) {
		snprintf(err, errlen, "\"%.32s\" is not a port 1..65535", port);
		return -EINVAL;
	}
	return 0;
}

/* An IPv4 address, or "*" for every address. */
static bool ipv4_or_any(const char *h, size_t len)
{
	char host[INET_ADDRSTRLEN];
	struct in_addr a4;

	if (len == 1 && h[0] == '*')
		return true;
	if (len >= sizeof(host))
		return false;
	memcpy(host, h, len);
	host[len] = '\0';
	return inet_pton(AF_INET, host, &a4) == 1;
}

int portal_addr_parse(const char *v, struct portal_addr *pa, char *err,
		      size_t errlen)
{
	const char *port;
	uint64_t p = 0;
	bool v6;

	memset(pa, 0, sizeof(*pa));
	if (split_host_port(v, pa->addr, sizeof(pa->addr), &port, &v6,
			    ipv4_or_any)) {
		memset(pa, 0, sizeof(*pa));
		snprintf(err, errlen,
			 "\"%.64s\" is not a portal: IPv4[:PORT], [IPv6][:PORT] or *[:PORT]",
			 v);
		return -EINVAL;
	}
	if (parse_port(port, &p, err, errlen))
		return -EINVAL;
	if (!strcmp(pa->addr, "*"))
		pa->addr[0] = '\0';
	pa->port = (uint16_t)p;
	return 0;
}

void config_resolve_ports(struct config *cfg, uint16_t port)
{
	size_t i, j;

	for (i = 0; i < cfg->nr_groups; i++)
		for (j = 0; j < cfg->groups[i].nr_portals; j++)
			if (!cfg->groups[i].portals[j].port)
				cfg->groups[i].portals[j].port = port;
}

bool config_same_groups(const struct config *a, const struct config *b)
{
	size_t i, j;

	if (a->nr_groups != b->nr_groups)
		return false;
	for (i = 0; i < a->nr_groups; i++) {
		const struct portal_group *x = &a->groups[i], *y = &b->groups[i];

		if (x->tag != y->tag || x->remote != y->remote ||
		    x->nr_portals != y->nr_portals)
			return false;
		for (j = 0; j < x->nr_portals; j++)
			if (x->portals[j].port != y->portals[j].port ||
			    strcmp(x->portals[j].addr, y->portals[j].addr))
				return false;
	}
	return true;
}

const struct portal_group *config_group(const struct config *cfg,
					uint16_t tag)
{
	size_t i;

	for (i = 0; i < cfg->nr_groups; i++)
		if (cfg->groups[i].tag == tag)
			return &cfg->groups[i];
	return NULL;
}

/* A host name, or what looks like an IPv4 address and is one. */
static bool redirect_host(const char *h, size_t len)
{
	char host[INET6_ADDRSTRLEN + 8];
	struct in_addr a4;

	if (len >= sizeof(host) || !host_name(h, len))
		return false;
	memcpy(host, h, len);
	host[len] = '\0';
	return strspn(host, "0123456789.") != len ||
	       inet_pton(AF_INET, host, &a4) == 1;
}

int redirect_parse(const char *v, char *out, size_t outlen, char *err,
		   size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 8];
	uint64_t p = REDIRECT_PORT;
	const char *port;
	bool v6;

	if (split_host_port(v, host, sizeof(host), &port, &v6,
			    redirect_host))
		goto bad;
	if (parse_port(port, &p, err, errlen))
		return -EINVAL;
	if ((size_t)snprintf(out, outlen, v6 ? "[%s]:%u" : "%s:%u", host,
			     (unsigned int)p) >= outlen)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen,
		 "\"%.64s\" is not ADDRESS[:PORT] (an IPv4 address, [IPv6 address] or host name)",
		 v);
	return -EINVAL;
}

int account_check(const char *user, const char *secret, bool allow_short,
		  char *err, size_t errlen)
{
	const char *c;

	if (!*user || strlen(user) > CHAP_NAME_MAX) {
		snprintf(err, errlen, "user name must be 1..%d characters",
			 CHAP_NAME_MAX);
		return -EINVAL;
	}
	for (c = user; *c; c++) {
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f) {
			snprintf(err, errlen,
				 "user name: only printable characters without blanks");
			return -EINVAL;
		}
	}
	if (!*secret) {
		snprintf(err, errlen, "missing secret for %.64s", user);
		return -EINVAL;
	}
	if (strlen(secret) > CHAP_SECRET_MAX) {
		snprintf(err, errlen, "secret of %.64s is longer than %d characters",
			 user, CHAP_SECRET_MAX);
		return -EINVAL;
	}
	for (c = secret; *c; c++) {
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f) {
			snprintf(err, errlen,
				 "secret of %.64s: only printable characters without blanks",
				 user);
			return -EINVAL;
		}
	}
	if (!allow_short && strlen(secret) < CHAP_SECRET_MIN) {
		snprintf(err, errlen,
			 "secret of %.64s has %zu characters, at least %d are needed (AllowShortSecrets Yes in the global section allows shorter ones)",
			 user, strlen(secret), CHAP_SECRET_MIN);
		return -EINVAL;
	}
	return 0;
}

int target_set_key(struct target_conf *t, const char *key, const char *value,
		   char *err, size_t errlen)
{
	const struct conf_key *k = conf_key_find(key);
	uint32_t v;
	int ret;

	if (!k) {
		if (!strcasecmp(key, "Alias")) {
			if (!*value || strlen(value) > IET_NAME_MAX) {
				snprintf(err, errlen,
					 "must be 1..%d characters",
					 IET_NAME_MAX);
				return -EINVAL;
			}
			strcpy(t->alias, value);
			return 0;
		}
		if (!strcasecmp(key, "MaxSessions"))
			return parse_u32(value, 0, 65535, &t->max_sessions,
					 err, errlen);
		if (!strcasecmp(key, "Redirect")) {
			if (!*value) {
				t->redirect[0] = '\0';
				return 0;
			}
			return redirect_parse(value, t->redirect,
					      sizeof(t->redirect), err, errlen);
		}
		if (!strcasecmp(key, "CHAPAlgorithms"))
			return chap_algs_parse(value, &t->auth.chap_algs, err,
					       errlen);
		return -ENOENT;
	}
	if (!*value) {
		snprintf(err, errlen, "missing value");
		return -EINVAL;
	}
	if (has_space(value)) {
		snprintf(err, errlen, "unexpected text after the value");
		return -EINVAL;
	}
	switch (k->type) {
	case CK_BOOL:
		ret = parse_yes_no(value, &v, err, errlen);
		break;
	case CK_NUM:
		ret = parse_u32(value, k->min, k->max, &v, err, errlen);
		break;
	case CK_DIGEST:
		ret = parse_digests(value, &v, err, errlen);
		break;
	case CK_MARK_INT:
	default:
		ret = parse_mark_int(value, k, err, errlen);
		v = 0;
		break;
	}
	if (ret)
		return ret;
	if (k->dest == CK_KEYS)
		t->keys[k->idx] = v;
	else if (k->dest == CK_TPARAMS)
		t->tparams[k->idx] = v;
	return 0;
}

int iscsi_name_check(const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name), i;

	if (len == 0 || len > IET_NAME_MAX) {
		snprintf(err, errlen, "name must be 1..%d characters",
			 IET_NAME_MAX);
		return -EINVAL;
	}
	if (strncasecmp(name, "iqn.", 4) && strncasecmp(name, "eui.", 4) &&
	    strncasecmp(name, "naa.", 4)) {
		snprintf(err, errlen,
			 "\"%.64s\" does not start with iqn., eui. or naa.",
			 name);
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = name[i];

		if (!isalnum(c) && c != '.' && c != '-' && c != ':') {
			snprintf(err, errlen,
				 "character '%c' not allowed in an iSCSI name",
				 isprint(c) ? c : '?');
			return -EINVAL;
		}
	}
	return 0;
}

int account_set_initiators(struct account *acc, const char *list, char *err,
			   size_t errlen)
{
	const char *p = list;

	acc->nr_initiators = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		char *name;

		if (acc->nr_initiators == ACCOUNT_INITIATORS_MAX) {
			snprintf(err, errlen, "at most %d initiator names an account",
				 ACCOUNT_INITIATORS_MAX);
			goto fail;
		}
		if (!len || len > IET_NAME_MAX) {
			snprintf(err, errlen, "an initiator name of %zu characters: expected 1 to %d",
				 len, IET_NAME_MAX);
			goto fail;
		}
		name = acc->initiators[acc->nr_initiators];
		memcpy(name, p, len);
		name[len] = '\0';
		if (iscsi_name_check(name, err, errlen))
			goto fail;
		if (account_admits(acc, name) && acc->nr_initiators) {
			snprintf(err, errlen, "%.223s listed twice", name);
			goto fail;
		}
		acc->nr_initiators++;
		p += len;
		if (*p && !*++p) {
			snprintf(err, errlen, "an empty initiator name after a comma");
			goto fail;
		}
	}
	return 0;
fail:
	acc->nr_initiators = 0;
	return -EINVAL;
}

enum lun_arg {
	ARG_PATH, ARG_TYPE, ARG_IOMODE, ARG_SCSI_ID, ARG_SCSI_SN,
	ARG_BLOCK_SIZE, ARG_BLOCKS, ARG_PHYS_BLOCK_SIZE, ARG_ROTATION_RATE,
	ARG_THIN, ARG_MODE_SELECT, NR_ARGS
};

static const char *const lun_args[NR_ARGS] = {
	"Path", "Type", "IOMode", "ScsiId", "ScsiSN", "BlockSize", "Blocks",
	"PhysicalBlockSize", "RotationRate", "ThinProvisioning", "ModeSelect",
};

static int check_id(const char *v, size_t max, char *err, size_t errlen)
{
	const char *c;

	if (strlen(v) > max) {
		snprintf(err, errlen, "longer than %zu characters", max);
		return -EINVAL;
	}
	for (c = v; *c; c++) {
		if (*c <= ' ' || *c > '~' || *c == ',') {
			snprintf(err, errlen,
				 "only printable characters without blanks or commas");
			return -EINVAL;
		}
	}
	return 0;
}

static int lun_arg_set(struct lun_conf *lun, enum lun_arg a, const char *v,
		       char *err, size_t errlen)
{
	uint64_t n;

	switch (a) {
	case ARG_PATH:
		if (v[0] != '/') {
			snprintf(err, errlen, "must be an absolute path");
			return -EINVAL;
		}
		if (has_space(v)) {
			/* A Lun line could not hold it. */
			snprintf(err, errlen, "blanks are not allowed in a path");
			return -EINVAL;
		}
		if (strlen(v) > IET_PATH_MAX) {
			snprintf(err, errlen, "longer than %d characters",
				 IET_PATH_MAX);
			return -EINVAL;
		}
		strcpy(lun->path, v);
		return 0;
	case ARG_TYPE:
		if (!strcasecmp(v, "fileio"))
			lun->type = IET_LUN_FILEIO;
		else if (!strcasecmp(v, "nullio"))
			lun->type = IET_LUN_NULLIO;
		else if (!strcasecmp(v, "blockio"))
			lun->type = IET_LUN_BLOCKIO;
		else {
			snprintf(err, errlen,
				 "\"%.32s\" is not fileio, blockio or nullio", v);
			return -EINVAL;
		}
		return 0;
	case ARG_IOMODE:
		if (!strcasecmp(v, "wt"))
			lun->iomode = IET_IOMODE_WT;
		else if (!strcasecmp(v, "wb"))
			lun->iomode = IET_IOMODE_WB;
		else if (!strcasecmp(v, "ro"))
			lun->iomode = IET_IOMODE_RO;
		else {
			snprintf(err, errlen, "\"%.32s\" is not wt, wb or ro",
				 v);
			return -EINVAL;
		}
		return 0;
	case ARG_SCSI_ID:
		if (check_id(v, IET_SCSI_ID_MAX, err, errlen))
			return -EINVAL;
		strcpy(lun->scsi_id, v);
		return 0;
	case ARG_SCSI_SN:
		if (check_id(v, IET_SCSI_SN_MAX, err, errlen))
			return -EINVAL;
		strcpy(lun->scsi_sn, v);
		return 0;
	case ARG_BLOCK_SIZE:
		if (parse_number(v, &n) ||
		    (n != 512 && n != 1024 && n != 2048 && n != 4096)) {
			snprintf(err, errlen,
				 "\"%.32s\" is not 512, 1024, 2048 or 4096", v);
			return -EINVAL;
		}
		lun->block_size = n;
		return 0;
	case ARG_BLOCKS:
		if (parse_number(v, &n) || n == 0) {
			snprintf(err, errlen, "\"%.32s\" is not a positive number",
				 v);
			return -EINVAL;
		}
		lun->blocks = n;
		return 0;
	case ARG_PHYS_BLOCK_SIZE:
		/* Against BlockSize once the whole list is read. */
		if (parse_number(v, &n) || n < 512 ||
		    n > IET_PHYS_BLOCK_SIZE_MAX || (n & (n - 1))) {
			snprintf(err, errlen,
				 "\"%.32s\" is not a power of 2 from 512 to %d",
				 v, IET_PHYS_BLOCK_SIZE_MAX);
			return -EINVAL;
		}
		lun->phys_block_size = n;
		return 0;
	case ARG_ROTATION_RATE:
		/* SBC-3 reserves 2..0x400 and 0xffff. */
		if (parse_number(v, &n) ||
		    (n > 1 && n < 0x401) || n > 0xfffe) {
			snprintf(err, errlen,
				 "\"%.32s\" is not 0 (not reported), 1 (non-rotating) or 1025..65534 (rpm)",
				 v);
			return -EINVAL;
		}
		lun->rotation_rate = n;
		return 0;
	case ARG_THIN: {
		uint32_t yes;

		if (parse_yes_no(v, &yes, err, errlen))
			return -EINVAL;
		lun->thin_off = !yes;
		return 0;
	}
	case ARG_MODE_SELECT: {
		uint32_t yes;

		/* As the IOMode it comes with says, once the list is read. */
		if (parse_yes_no(v, &yes, err, errlen))
			return -EINVAL;
		lun->mode_select = yes ? MODE_SELECT_YES : MODE_SELECT_NO;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int lun_parse_args(const char *args, struct lun_conf *lun, char *err,
		   size_t errlen)
{
	char what[160];
	bool given[NR_ARGS] = { false };
	const char *s = args;
	uint32_t number = lun->lun;

	memset(lun, 0, sizeof(*lun));
	lun->lun = number;
	lun->type = IET_LUN_FILEIO;
	lun->iomode = IET_IOMODE_WT;
	lun->block_size = 512;

	while (*s) {
		size_t len = strcspn(s, ","), klen;
		char item[IET_PATH_MAX + 64];
		char *eq;
		int a;

		if (len == 0) {
			snprintf(err, errlen, "empty item in the argument list");
			return -EINVAL;
		}
		if (len >= sizeof(item)) {
			size_t klen = strcspn(s, "=");

			snprintf(err, errlen, "%.*s: value too long",
				 (int)(klen > 64 ? 64 : klen), s);
			return -EINVAL;
		}
		memcpy(item, s, len);
		item[len] = '\0';
		s += len;
		if (*s == ',' && !*++s) {
			snprintf(err, errlen,
				 "trailing comma in the argument list");
			return -EINVAL;
		}
		eq = strchr(item, '=');
		if (!eq) {
			snprintf(err, errlen, "%.64s: expected Key=Value", item);
			return -EINVAL;
		}
		*eq = '\0';
		klen = eq - item;
		for (a = 0; a < NR_ARGS; a++)
			if (!strcasecmp(item, lun_args[a]))
				break;
		if (a == NR_ARGS) {
			snprintf(err, errlen, "%.64s: unknown LUN argument",
				 klen ? item : "(empty)");
			return -EINVAL;
		}
		if (given[a]) {
			snprintf(err, errlen, "%s: given twice", lun_args[a]);
			return -EINVAL;
		}
		given[a] = true;
		if (!eq[1]) {
			snprintf(err, errlen, "%s: missing value", lun_args[a]);
			return -EINVAL;
		}
		if (lun_arg_set(lun, a, eq + 1, what, sizeof(what))) {
			snprintf(err, errlen, "%s: %s", lun_args[a], what);
			return -EINVAL;
		}
	}
	if (lun->type != IET_LUN_NULLIO && !given[ARG_PATH]) {
		snprintf(err, errlen, "Path: required for Type=%s",
			 lun_type_name(lun->type));
		return -EINVAL;
	}
	if (lun->type == IET_LUN_NULLIO && given[ARG_PATH]) {
		snprintf(err, errlen, "Path: not used with Type=nullio");
		return -EINVAL;
	}
	if (lun->phys_block_size && lun->phys_block_size < lun->block_size) {
		snprintf(err, errlen,
			 "PhysicalBlockSize: %u is smaller than BlockSize %u",
			 lun->phys_block_size, lun->block_size);
		return -EINVAL;
	}
	if (lun->blocks > UINT64_MAX / 2 / lun->block_size) {
		snprintf(err, errlen, "Blocks: size exceeds 2^63 bytes");
		return -EINVAL;
	}
	if (lun->mode_select != MODE_SELECT_DEFAULT)
		lun->mode_select = lun_mode_select_of(lun,
			lun->mode_select == MODE_SELECT_YES);
	return 0;
}

struct parser {
	const char *file;
	unsigned int line;
	unsigned int flags;		/* CONFIG_* */
	struct config *cfg;
	struct target_conf *cur;	/* current stanza or NULL (global) */
	unsigned int slot_line[NR_SLOTS];
	unsigned int short_line;	/* AllowShortSecrets */
	unsigned int global_algs_line;
	unsigned int isns_line, isns_ac_line;
	unsigned int metrics_line, metrics_interval_line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct parser *p, const char *key, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s:%u: %.64s: %s", p->file, p->line, key,
		 what);
	return -EINVAL;
}

/* Checks across keys of a finished stanza. */
static int end_target(struct parser *p)
{
	struct target_conf *t = p->cur;
	unsigned int fbl = 0, mbl = 0, save = p->line;
	size_t i;

	if (!t)
		return 0;
	for (i = 0; i < NR_CONF_KEYS; i++) {
		if (conf_keys[i].idx == IET_KEY_FIRST_BURST &&
		    conf_keys[i].dest == CK_KEYS)
			fbl = p->slot_line[i];
		if (conf_keys[i].idx == IET_KEY_MAX_BURST &&
		    conf_keys[i].dest == CK_KEYS)
			mbl = p->slot_line[i];
	}
	if (t->keys[IET_KEY_FIRST_BURST] > t->keys[IET_KEY_MAX_BURST]) {
		int ret;

		p->line = fbl ? fbl : mbl;
		ret = fail(p, "FirstBurstLength",
			   "%u exceeds MaxBurstLength %u",
			   t->keys[IET_KEY_FIRST_BURST],
			   t->keys[IET_KEY_MAX_BURST]);
		p->line = save;
		return ret;
	}
	return 0;
}

static int do_target(struct parser *p, const char *name)
{
	struct config *cfg = p->cfg;
	struct target_conf *t;
	char what[256];

	if (!*name)
		return fail(p, "Target", "missing target name");
	if (has_space(name))
		return fail(p, "Target", "unexpected text after the name");
	if (iscsi_name_check(name, what, sizeof(what)))
		return fail(p, "Target", "%s", what);
	t = config_target_by_name(cfg, name);
	if (t)
		return fail(p, "Target", "%s already defined on line %u",
			    name, t->line);
	if (cfg->nr_targets >= CONFIG_TARGETS_MAX)
		return fail(p, "Target", "more than %d targets",
			    CONFIG_TARGETS_MAX);
	if (end_target(p))
		return -EINVAL;
	if (config_grow_targets(cfg))
		return fail(p, "Target", "out of memory");
	t = &cfg->targets[cfg->nr_targets++];
	target_conf_defaults(t);
	t->tid = cfg->nr_targets;
	strcpy(t->name, name);
	t->line = p->line;
	p->cur = t;
	memset(p->slot_line, 0, sizeof(p->slot_line));
	return 0;
}

static int do_lun(struct parser *p, const char *rest)
{
	struct target_conf *t = p->cur;
	struct lun_conf lun, *nl;
	char num[32], what[512];
	const char *args;
	size_t nlen = strcspn(rest, " \t");
	uint64_t n;
	size_t i;

	if (nlen == 0)
		return fail(p, "Lun", "missing LUN number");
	if (nlen >= sizeof(num))
		return fail(p, "Lun", "\"%.32s\" is not a LUN number", rest);
	memcpy(num, rest, nlen);
	num[nlen] = '\0';
	if (parse_number(num, &n) || n > IET_LUN_MAX)
		return fail(p, "Lun", "\"%s\" is not a LUN number 0..%d", num,
			    IET_LUN_MAX);
	args = rest + nlen;
	while (*args == ' ' || *args == '\t')
		args++;
	if (has_space(args))
		return fail(p, "Lun", "unexpected text after \"%.*s\"",
			    (int)strcspn(args, " \t"), args);
	for (i = 0; i < t->nr_luns; i++)
		if (t->luns[i].lun == n)
			return fail(p, "Lun", "LUN %u already defined on line %u",
				    (unsigned int)n, t->luns[i].line);
	if (t->nr_luns > IET_LUN_MAX)
		return fail(p, "Lun", "too many LUNs");
	lun.lun = n;
	if (lun_parse_args(args, &lun, what, sizeof(what)))
		return fail(p, "Lun", "LUN %u: %s", (unsigned int)n, what);
	lun.line = p->line;
	nl = realloc(t->luns, (t->nr_luns + 1) * sizeof(*nl));
	if (!nl)
		return fail(p, "Lun", "out of memory");
	t->luns = nl;
	t->luns[t->nr_luns++] = lun;
	return 0;
}

/* "IncomingUser <user> <secret>" or "OutgoingUser <user> <secret>" */
static int do_user(struct parser *p, const char *key, const char *rest,
		   bool incoming)
{
	struct auth *a = p->cur ? &p->cur->auth : &p->cfg->auth;
	struct account acc;
	const char *sec, *names;
	size_t ulen = strcspn(rest, " \t"), slen;
	char what[384];
	int ret;

	memset(&acc, 0, sizeof(acc));
	if (!ulen)
		return fail(p, key, "expected \"%s <user> <secret>\"", key);
	if (ulen > CHAP_NAME_MAX)
		return fail(p, key, "user name longer than %d characters",
			    CHAP_NAME_MAX);
	memcpy(acc.user, rest, ulen);
	sec = rest + ulen;
	while (*sec == ' ' || *sec == '\t')
		sec++;
	slen = strcspn(sec, " \t");
	names = sec + slen;
	while (*names == ' ' || *names == '\t')
		names++;
	if (*names && !incoming)
		return fail(p, key, "unexpected text after the secret of %.64s",
			    acc.user);
	if (has_space(names))
		return fail(p, key, "unexpected text after the initiator names of %.64s (one comma-separated list)",
			    acc.user);
	if (slen > CHAP_SECRET_MAX)
		return fail(p, key, "secret of %.64s is longer than %d characters",
			    acc.user, CHAP_SECRET_MAX);
	memcpy(acc.secret, sec, slen);
	if (*names && account_set_initiators(&acc, names, what, sizeof(what))) {
		wipe(&acc, sizeof(acc));
		return fail(p, key, "%.64s: after the secret, only the initiator names it may log in as (name,name,...): %s",
			    acc.user, what);
	}
	acc.line = p->line;
	/* Lengths are checked at the end: AllowShortSecrets may follow. */
	ret = account_check(acc.user, acc.secret, true, what, sizeof(what));
	if (ret) {
		wipe(&acc, sizeof(acc));
		return fail(p, key, "%s", what);
	}
	if (incoming) {
		const struct account *old = auth_incoming(a, acc.user);

		if (old) {
			wipe(&acc, sizeof(acc));
			return fail(p, key, "%.64s already defined on line %u",
				    old->user, old->line);
		}
		ret = auth_add_incoming(a, &acc);
		wipe(&acc, sizeof(acc));
		if (ret)
			return fail(p, key, "out of memory");
		return 0;
	}
	if (a->has_outgoing) {
		wipe(&acc, sizeof(acc));
		return fail(p, key, "only one OutgoingUser, already set on line %u",
			    a->outgoing.line);
	}
	a->outgoing = acc;
	a->has_outgoing = true;
	wipe(&acc, sizeof(acc));
	return 0;
}

/* Secret rules that need the whole file: lengths, and mutual CHAP. */
static int check_secrets(struct parser *p, const struct auth *a)
{
	size_t i;

	for (i = 0; i < a->nr_incoming; i++) {
		const struct account *acc = &a->incoming[i];

		if (!p->cfg->allow_short_secrets &&
		    strlen(acc->secret) < CHAP_SECRET_MIN) {
			p->line = acc->line;
			return fail(p, "IncomingUser",
				    "secret of %.64s has %zu characters, at least %d are needed (AllowShortSecrets Yes in the global section allows shorter ones)",
				    acc->user, strlen(acc->secret),
				    CHAP_SECRET_MIN);
		}
		if (a->has_outgoing && !strcmp(acc->secret, a->outgoing.secret)) {
			p->line = a->outgoing.line;
			return fail(p, "OutgoingUser",
				    "the secret of %.64s is the one of IncomingUser %.64s (line %u): mutual CHAP needs two different secrets",
				    a->outgoing.user, acc->user, acc->line);
		}
	}
	if (a->has_outgoing && !p->cfg->allow_short_secrets &&
	    strlen(a->outgoing.secret) < CHAP_SECRET_MIN) {
		p->line = a->outgoing.line;
		return fail(p, "OutgoingUser",
			    "secret of %.64s has %zu characters, at least %d are needed (AllowShortSecrets Yes in the global section allows shorter ones)",
			    a->outgoing.user, strlen(a->outgoing.secret),
			    CHAP_SECRET_MIN);
	}
	return 0;
}

/* An OutgoingUser's secret that is an IncomingUser's in another scope. */
static int check_reuse(struct parser *p, const struct auth *a)
{
	const struct account *acc;
	const char *scope;

	if (!a->has_outgoing)
		return 0;
	acc = config_secret_clash(p->cfg, a->outgoing.secret, true, &scope);
	if (!acc)
		return 0;
	p->line = a->outgoing.line;
	return fail(p, "OutgoingUser",
		    "the secret of %.64s is the one of IncomingUser %.64s of %.223s (line %u): ietd answers with it in every scope, so it must be no initiator's",
		    a->outgoing.user, acc->user, scope, acc->line);
}

static int check_all_secrets(struct parser *p)
{
	size_t i;

	if (check_secrets(p, &p->cfg->auth) ||
	    check_reuse(p, &p->cfg->auth))
		return -EINVAL;
	for (i = 0; i < p->cfg->nr_targets; i++)
		if (check_secrets(p, &p->cfg->targets[i].auth) ||
		    check_reuse(p, &p->cfg->targets[i].auth))
			return -EINVAL;
	return 0;
}

/* Two portals that would listen on the same address and port. */
static bool same_portal(const struct portal_addr *a,
			const struct portal_addr *b)
{
	return a->port == b->port &&
	       (!strcmp(a->addr, b->addr) || !a->addr[0] || !b->addr[0]);
}

/*
 * The group of "PortalGroup TAG PORTAL [PORTAL ...]" or "RemotePortalGroup
 * TAG" (key), its tag read from rest, its portals still to come (save).
 */
static int new_group(struct parser *p, const char *key, char *rest,
		     char **save, struct portal_group **out)
{
	struct config *cfg = p->cfg;
	struct portal_group *g;
	uint64_t tag;
	char *tok;

	tok = strtok_r(rest, " \t", save);
	if (!tok)
		return fail(p, key, "missing tag");
	if (parse_number(tok, &tag) || tag < 1 || tag > 65535)
		return fail(p, key, "\"%.32s\" is not a tag 1..65535", tok);
	g = (struct portal_group *)config_group(cfg, (uint16_t)tag);
	if (g)
		return fail(p, key, "%u already defined on line %u",
			    (unsigned int)tag, g->line);
	if (cfg->nr_groups == IET_TPGS_MAX)
		return fail(p, key, "more than %d portal groups", IET_TPGS_MAX);
	g = &cfg->groups[cfg->nr_groups];
	memset(g, 0, sizeof(*g));
	g->tag = (uint16_t)tag;
	g->line = p->line;
	*out = g;
	return 0;
}

static int do_remote_group(struct parser *p, char *rest)
{
	struct portal_group *g;
	char *save = NULL;

	if (new_group(p, "RemotePortalGroup", rest, &save, &g))
		return -EINVAL;
	if (strtok_r(NULL, " \t", &save))
		return fail(p, "RemotePortalGroup",
			    "takes a tag only: the other node's portals are its own");
	g->remote = true;
	p->cfg->nr_groups++;
	return 0;
}

static int do_portal_group(struct parser *p, char *rest)
{
	struct config *cfg = p->cfg;
	struct portal_group *g;
	char *tok, *save = NULL, what[256];
	size_t i, j;

	if (new_group(p, "PortalGroup", rest, &save, &g))
		return -EINVAL;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		struct portal_addr pa;

		if (g->nr_portals == PORTALS_PER_GROUP)
			return fail(p, "PortalGroup", "more than %d portals",
				    PORTALS_PER_GROUP);
		if (portal_addr_parse(tok, &pa, what, sizeof(what)))
			return fail(p, "PortalGroup", "%s", what);
		for (i = 0; i <= cfg->nr_groups; i++) {
			const struct portal_group *o = &cfg->groups[i];
			size_t n = i == cfg->nr_groups ? g->nr_portals :
				   o->nr_portals;

			for (j = 0; j < n; j++)
				if (same_portal(&o->portals[j], &pa))
					return fail(p, "PortalGroup",
						    "%.64s overlaps a portal of group %u",
						    tok, o->tag);
		}
		g->portals[g->nr_portals++] = pa;
	}
	if (!g->nr_portals)
		return fail(p, "PortalGroup", "group %u has no portal",
			    g->tag);
	cfg->nr_groups++;
	return 0;
}

int isns_server_split(const char *v, char *host, size_t hostlen,
		      uint16_t *port)
{
	const char *colon, *end;
	size_t n;
	char *e;
	long pv;

	*port = ISNS_PORT;
	if (*v == '[') {
		end = strchr(v, ']');
		if (!end || end == v + 1)
			return -EINVAL;
		n = end - (v + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon)
			return -EINVAL;
		v++;
	} else {
		colon = strchr(v, ':');
		if (colon && strchr(colon + 1, ':'))
			return -EINVAL;	/* IPv6 needs its brackets */
		n = colon ? (size_t)(colon - v) : strlen(v);
	}
	if (!n || n >= hostlen)
		return -EINVAL;
	memcpy(host, v, n);
	host[n] = '\0';
	if (strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") != n)
		return -EINVAL;
	if (colon) {
		errno = 0;
		pv = strtol(colon + 1, &e, 10);
		if (*e || e == colon + 1 || pv < 1 || pv > 65535)
			return -EINVAL;
		*port = pv;
	}
	return 0;
}

static int do_global(struct parser *p, const char *key, const char *value)
{
	struct config *cfg = p->cfg;
	uint32_t v;
	char what[256];

	if (!strcasecmp(key, "AllowShortSecrets")) {
		if (p->short_line)
			return fail(p, key, "already set on line %u",
				    p->short_line);
		if (parse_yes_no(value, &v, what, sizeof(what)))
			return fail(p, key, "%s", what);
		cfg->allow_short_secrets = v;
		p->short_line = p->line;
		return 0;
	}
	if (!strcasecmp(key, "CHAPAlgorithms")) {
		if (p->global_algs_line)
			return fail(p, key, "already set on line %u",
				    p->global_algs_line);
		if (chap_algs_parse(value, &cfg->auth.chap_algs, what,
				    sizeof(what)))
			return fail(p, key, "%s", what);
		p->global_algs_line = p->line;
		cfg->auth.algs_line = p->line;
		return 0;
	}

	/* IET's iSNS keys (isns.h): checked here, resolved when applied. */
	if (!strcasecmp(key, "iSNSServer")) {
		char host[256];
		uint16_t port;

		if (p->isns_line)
			return fail(p, key, "already set on line %u",
				    p->isns_line);
		p->isns_line = p->line;
		if (!*value || has_space(value) ||
		    strlen(value) >= sizeof(cfg->isns_server) ||
		    isns_server_split(value, host, sizeof(host), &port))
			return fail(p, key,
				    "expected one host name or address, with an optional :port ([IPv6]:port)");
		strcpy(cfg->isns_server, value);
		return 0;
	}
	if (!strcasecmp(key, "iSNSAccessControl")) {
		if (p->isns_ac_line)
			return fail(p, key, "already set on line %u",
				    p->isns_ac_line);
		p->isns_ac_line = p->line;
		if (parse_yes_no(value, &v, what, sizeof(what)))
			return fail(p, key, "%s", what);
		cfg->isns_access_control = v;
		return 0;
	}
	/* Written by ietd's tick (metrics_file.h). */
	if (!strcasecmp(key, "MetricsFile")) {
		size_t n = strlen(value);

		if (p->metrics_line)
			return fail(p, key, "already set on line %u",
				    p->metrics_line);
		p->metrics_line = p->line;
		/* The textfile collector reads *.prom alone. */
		if (*value != '/' || has_space(value) ||
		    n >= sizeof(cfg->metrics_file) || n < 7 ||
		    strcmp(value + n - 5, ".prom") || value[n - 6] == '/')
			return fail(p, key,
				    "expected an absolute file name ending in .prom, without spaces, shorter than %zu bytes",
				    sizeof(cfg->metrics_file));
		strcpy(cfg->metrics_file, value);
		return 0;
	}
	if (!strcasecmp(key, "MetricsInterval")) {
		if (p->metrics_interval_line)
			return fail(p, key, "already set on line %u",
				    p->metrics_interval_line);
		p->metrics_interval_line = p->line;
		if (parse_u32(value, 1, 3600, &cfg->metrics_interval, what,
			      sizeof(what)))
			return fail(p, key, "%s", what);
		return 0;
	}
	if (!strcasecmp(key, "ConfigDigest") && (p->flags & CONFIG_STATE)) {
		if (strlen(value) != 64 ||
		    strspn(value, "0123456789abcdef") != 64)
			return fail(p, key, "expected 64 hexadecimal digits");
		strcpy(cfg->digest, value);
		return 0;
	}
	if (!strcasecmp(key, "Lun") || !strcasecmp(key, "Alias") ||
	    !strcasecmp(key, "MaxSessions") || !strcasecmp(key, "Redirect") ||
	    !strcasecmp(key, "Origin") || conf_key_find(key))
		return fail(p, key, "only allowed inside a Target stanza");
	return fail(p, key, "unknown key");
}

static int do_line(struct parser *p, char *l)
{
	char *key = l, *rest, what[512];
	const struct conf_key *ck;
	int slot, ret;

	rest = key + strcspn(key, " \t");
	if (*rest) {
		*rest++ = '\0';
		while (*rest == ' ' || *rest == '\t')
			rest++;
	}
	if (!strcasecmp(key, "Target"))
		return do_target(p, rest);
	if (!strcasecmp(key, "IncomingUser"))
		return do_user(p, "IncomingUser", rest, true);
	if (!strcasecmp(key, "OutgoingUser"))
		return do_user(p, "OutgoingUser", rest, false);
	if (!p->cur && !strcasecmp(key, "PortalGroup"))
		return do_portal_group(p, rest);
	if (!p->cur && !strcasecmp(key, "RemotePortalGroup"))
		return do_remote_group(p, rest);
	if (!p->cur)
		return do_global(p, key, rest);
	if (!strcasecmp(key, "iSNSServer") ||
	    !strcasecmp(key, "PortalGroup") ||
	    !strcasecmp(key, "RemotePortalGroup") ||
	    !strcasecmp(key, "iSNSAccessControl") ||
	    !strcasecmp(key, "MetricsFile") ||
	    !strcasecmp(key, "MetricsInterval") ||
	    !strcasecmp(key, "AllowShortSecrets"))
		return fail(p, key,
			    "only allowed in the global section, before the first Target");
	if (!strcasecmp(key, "Lun"))
		return do_lun(p, rest);

	ck = conf_key_find(key);
	if (ck)
		slot = ck - conf_keys;
	else if (!strcasecmp(key, "Alias"))
		slot = SLOT_ALIAS;
	else if (!strcasecmp(key, "MaxSessions"))
		slot = SLOT_MAX_SESSIONS;
	else if (!strcasecmp(key, "Redirect"))
		slot = SLOT_REDIRECT;
	else if (!strcasecmp(key, "CHAPAlgorithms"))
		slot = SLOT_CHAP_ALGS;
	else if (!strcasecmp(key, "Origin") && (p->flags & CONFIG_STATE))
		slot = SLOT_ORIGIN;
	else
		return fail(p, key, "unknown key");
	if (p->slot_line[slot])
		return fail(p, key, "already set on line %u",
			    p->slot_line[slot]);
	if (slot == SLOT_ORIGIN) {
		if (!strcasecmp(rest, "ietadm"))
			p->cur->origin = ORIGIN_ADMIN;
		else if (!strcasecmp(rest, "kernel"))
			p->cur->origin = ORIGIN_KERNEL;
		else if (strcasecmp(rest, "file"))
			return fail(p, key, "\"%.32s\" is not file, ietadm or kernel",
				    rest);
		p->slot_line[slot] = p->line;
		return 0;
	}
	if (slot == SLOT_REDIRECT && !*rest)
		return fail(p, key, "missing value");
	ret = target_set_key(p->cur, key, rest, what, sizeof(what));
	if (ret)
		return fail(p, key, "%s", what);
	if (slot == SLOT_CHAP_ALGS)
		p->cur->auth.algs_line = p->line;
	p->slot_line[slot] = p->line;
	return 0;
}

int config_parse(const char *buf, size_t len, const char *file,
		 struct config *cfg, char *err, size_t errlen)
{
	return config_parse_flags(buf, len, file, 0, cfg, err, errlen);
}

int config_parse_flags(const char *buf, size_t len, const char *file,
		       unsigned int flags, struct config *cfg, char *err,
		       size_t errlen)
{
	struct parser p = {
		.file = file, .flags = flags, .cfg = cfg, .err = err,
		.errlen = errlen,
	};
	char l[CONFIG_LINE_MAX + 2];
	size_t pos = 0;

	memset(cfg, 0, sizeof(*cfg));
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		char *s, *e;

		p.line++;
		if (llen > CONFIG_LINE_MAX) {
			fail(&p, "line", "longer than %d characters",
			     CONFIG_LINE_MAX);
			goto fail;
		}
		if (memchr(buf + pos, '\0', llen)) {
			fail(&p, "line", "contains a NUL byte");
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
		if (do_line(&p, s))
			goto fail;
	}
	if (end_target(&p) || check_all_secrets(&p))
		goto fail;
	if (config_remote_groups(cfg) == cfg->nr_groups && cfg->nr_groups) {
		p.line = cfg->groups[0].line;
		fail(&p, "RemotePortalGroup",
		     "needs this node's own PortalGroup lines too: which portals are here");
		goto fail;
	}
	if (cfg->isns_access_control && !cfg->isns_server[0]) {
		p.line = p.isns_ac_line;
		fail(&p, "iSNSAccessControl",
		     "Yes needs an iSNSServer to ask who shares a discovery domain with each target");
		goto fail;
	}
	wipe(l, sizeof(l));
	return 0;
fail:
	/* The line buffer may hold a secret. */
	wipe(l, sizeof(l));
	config_free(cfg);
	return -EINVAL;
}

int config_load(const char *path, struct config *cfg, char *err,
		size_t errlen)
{
	return config_load_flags(path, 0, cfg, err, errlen);
}

int config_load_flags(const char *path, unsigned int flags,
		      struct config *cfg, char *err, size_t errlen)
{
	char *buf;
	size_t got;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	ret = read_small_file(path, CONFIG_FILE_MAX, false, &buf, &got, err,
			      errlen);
	if (ret)
		return ret;
	ret = config_parse_flags(buf, got, path, flags, cfg, err, errlen);
	if (!ret && sha256_hex(buf, got, cfg->digest)) {
		config_free(cfg);
		snprintf(err, errlen, "%s: cannot compute its digest", path);
		ret = -ENOMEM;
	}
	wipe(buf, got);
	free(buf);
	return ret;
}

const char *config_default_path(void)
{
	if (access(CONFIG_PATH, F_OK) && !access(CONFIG_PATH_OLD, F_OK))
		return CONFIG_PATH_OLD;
	return CONFIG_PATH;
}
