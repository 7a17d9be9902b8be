/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ietadm <-> ietd protocol over a root-only UNIX stream socket.
 *
 * Request, text lines, ended by an empty line:
 *	IETCTL 2		magic and protocol version
 *	op=show			then one field per line, each at most once:
 *	tid=1			op, tid, sid, cid, lun (decimal numbers),
 *	sid=0			user=1, params=<text>, redirect=<text>,
 *	<empty line>		and since version 2 target=<name> (a target
 *				by name instead of tid), json=1, dryrun=1
 * Response, then ietd closes the connection:
 *	IETCTL 2 <status>	0, or a positive errno; the request's version
 *	<body>			on success the output (Key=Value lines for
 *				show); on failure what was done, if anything,
 *				then one line saying why
 * A field this version does not know is an error, so new fields come with
 * a new version and an old ietd refuses them rather than ignoring them.
 * ietd answers version 1 requests too (with version 1 fields only).
 */
#ifndef IET_USR_CTL_PROTO_H
#define IET_USR_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_SOCKET_PATH		"/run/iet/ietd.sock"
#define CTL_MAGIC		"IETCTL"
#define CTL_VERSION		3
#define CTL_VERSION_MIN		1
#define CTL_REQ_MAX		65536
#define CTL_RSP_MAX		(16u << 20)
#define CTL_PARAMS_MAX		8192

enum ctl_field {
	CTL_F_TID	= 1 << 0,
	CTL_F_SID	= 1 << 1,
	CTL_F_CID	= 1 << 2,
	CTL_F_LUN	= 1 << 3,
	CTL_F_USER	= 1 << 4,
	CTL_F_PARAMS	= 1 << 5,
	CTL_F_REDIRECT	= 1 << 6,
	/* version 2 */
	CTL_F_TARGET	= 1 << 7,
	CTL_F_JSON	= 1 << 8,
	CTL_F_DRYRUN	= 1 << 9,
	/* version 3 */
	CTL_F_STATS	= 1 << 10,
	CTL_F_PROMETHEUS = 1 << 11,
};

struct ctl_req {
	int version;			/* of a parsed request */
	char op[16];
	uint32_t fields;		/* enum ctl_field: which are given */
	uint32_t tid;
	uint64_t sid;
	uint32_t cid;
	uint32_t lun;
	char params[CTL_PARAMS_MAX];
	char redirect[256];
	char target[224];		/* IET_NAME_MAX + 1 */
};

/* Bytes written, or -ENOSPC / -EINVAL (a value with a newline). */
int ctl_req_format(const struct ctl_req *r, char *buf, size_t len);
/*
 * A complete request (up to and including the empty line). -EPROTO for
 * another protocol version, -EINVAL for anything malformed; err says why.
 */
int ctl_req_parse(const char *buf, size_t len, struct ctl_req *r, char *err,
		  size_t errlen);
/* Whether buf holds a complete request yet. */
bool ctl_req_complete(const char *buf, size_t len);
/* The header line of a response to a request of that version. */
int ctl_rsp_header(int version, int status, char *buf, size_t len);
/* Split a response: *status and *body (NUL-terminated by the caller). */
int ctl_rsp_parse(const char *buf, int *status, const char **body);

#endif
