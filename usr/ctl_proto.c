// SPDX-License-Identifier: GPL-2.0
/* Format and parse ietadm's requests and ietd's responses. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "params.h"

static int put(char *buf, size_t len, size_t *off, const char *key,
	       const char *val)
{
	int n;

	if (strchr(val, '\n'))
		return -EINVAL;
	n = snprintf(buf + *off, len - *off, "%s=%s\n", key, val);
	if (n < 0 || (size_t)n >= len - *off)
		return -ENOSPC;
	*off += n;
	return 0;
}

static const struct {
	const char *name;
	uint32_t field;
	int version;			/* the first that has it */
} fields[] = {
	{ "tid", CTL_F_TID, 1 }, { "sid", CTL_F_SID, 1 },
	{ "cid", CTL_F_CID, 1 }, { "lun", CTL_F_LUN, 1 },
	{ "user", CTL_F_USER, 1 }, { "params", CTL_F_PARAMS, 1 },
	{ "redirect", CTL_F_REDIRECT, 1 }, { "target", CTL_F_TARGET, 2 },
	{ "json", CTL_F_JSON, 2 }, { "dryrun", CTL_F_DRYRUN, 2 },
	{ "stats", CTL_F_STATS, 3 }, { "prometheus", CTL_F_PROMETHEUS, 3 },
};

/*
 * The lowest version that has every field of r, 2 at least: an ietd from
 * before a field answers a request without it as it always did.
 */
static int req_version(const struct ctl_req *r)
{
	int ver = 2;
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if ((r->fields & fields[i].field) && fields[i].version > ver)
			ver = fields[i].version;
	return ver;
}

int ctl_req_format(const struct ctl_req *r, char *buf, size_t len)
{
	char num[32];
	size_t off = 0;
	int n, ret = 0;

	n = snprintf(buf, len, "%s %d\n", CTL_MAGIC, req_version(r));
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = n;
	ret = put(buf, len, &off, "op", r->op);
	if (!ret && (r->fields & CTL_F_TID)) {
		snprintf(num, sizeof(num), "%" PRIu32, r->tid);
		ret = put(buf, len, &off, "tid", num);
	}
	if (!ret && (r->fields & CTL_F_SID)) {
		snprintf(num, sizeof(num), "%" PRIu64, r->sid);
		ret = put(buf, len, &off, "sid", num);
	}
	if (!ret && (r->fields & CTL_F_CID)) {
		snprintf(num, sizeof(num), "%" PRIu32, r->cid);
		ret = put(buf, len, &off, "cid", num);
	}
	if (!ret && (r->fields & CTL_F_LUN)) {
		snprintf(num, sizeof(num), "%" PRIu32, r->lun);
		ret = put(buf, len, &off, "lun", num);
	}
	if (!ret && (r->fields & CTL_F_USER))
		ret = put(buf, len, &off, "user", "1");
	if (!ret && (r->fields & CTL_F_PARAMS))
		ret = put(buf, len, &off, "params", r->params);
	if (!ret && (r->fields & CTL_F_REDIRECT))
		ret = put(buf, len, &off, "redirect", r->redirect);
	if (!ret && (r->fields & CTL_F_TARGET))
		ret = put(buf, len, &off, "target", r->target);
	if (!ret && (r->fields & CTL_F_JSON))
		ret = put(buf, len, &off, "json", "1");
	if (!ret && (r->fields & CTL_F_DRYRUN))
		ret = put(buf, len, &off, "dryrun", "1");
	if (!ret && (r->fields & CTL_F_STATS))
		ret = put(buf, len, &off, "stats", "1");
	if (!ret && (r->fields & CTL_F_PROMETHEUS))
		ret = put(buf, len, &off, "prometheus", "1");
	if (ret)
		return ret;
	if (off + 1 >= len)
		return -ENOSPC;
	buf[off++] = '\n';
	buf[off] = '\0';
	return off;
}

bool ctl_req_complete(const char *buf, size_t len)
{
	size_t i;

	for (i = 1; i < len; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\n')
			return true;
	return false;
}

static int number(const char *v, uint64_t max, uint64_t *out)
{
	if (parse_number(v, out) || *out > max)
		return -EINVAL;
	return 0;
}

int ctl_req_parse(const char *buf, size_t len, struct ctl_req *r, char *err,
		  size_t errlen)
{
	char line[CTL_PARAMS_MAX + 32];
	size_t pos = 0;
	bool have_op = false, header = false;

	memset(r, 0, sizeof(*r));
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen;
		char *eq, *val;
		uint64_t n;
		size_t i;

		if (!nl) {
			snprintf(err, errlen, "request not terminated");
			return -EINVAL;
		}
		llen = nl - (buf + pos);
		if (llen >= sizeof(line)) {
			snprintf(err, errlen, "request line too long");
			return -EINVAL;
		}
		memcpy(line, buf + pos, llen);
		line[llen] = '\0';
		pos += llen + 1;
		if (memchr(line, '\0', llen)) {
			snprintf(err, errlen, "NUL byte in the request");
			return -EINVAL;
		}
		if (!header) {
			int ver;

			if (sscanf(line, CTL_MAGIC " %d", &ver) != 1) {
				snprintf(err, errlen, "not an IETCTL request");
				return -EINVAL;
			}
			if (ver < CTL_VERSION_MIN || ver > CTL_VERSION) {
				snprintf(err, errlen,
					 "protocol version %d not supported (ietd speaks %d..%d)",
					 ver, CTL_VERSION_MIN, CTL_VERSION);
				return -EPROTO;
			}
			r->version = ver;
			header = true;
			continue;
		}
		if (!llen) {
			if (!have_op) {
				snprintf(err, errlen, "request without op");
				return -EINVAL;
			}
			return 0;
		}
		eq = strchr(line, '=');
		if (!eq) {
			snprintf(err, errlen, "malformed request line");
			return -EINVAL;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(line, "op")) {
			if (have_op || strlen(val) >= sizeof(r->op) || !*val) {
				snprintf(err, errlen, "bad op");
				return -EINVAL;
			}
			strcpy(r->op, val);
			have_op = true;
			continue;
		}
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(line, fields[i].name))
				break;
		if (i == sizeof(fields) / sizeof(fields[0]) ||
		    fields[i].version > r->version) {
			snprintf(err, errlen, "unknown field \"%.32s\"", line);
			return -EINVAL;
		}
		if (r->fields & fields[i].field) {
			snprintf(err, errlen, "field %s given twice", line);
			return -EINVAL;
		}
		r->fields |= fields[i].field;
		switch (fields[i].field) {
		case CTL_F_TID:
		case CTL_F_CID:
		case CTL_F_LUN:
			if (number(val, UINT32_MAX, &n))
				goto bad_number;
			if (fields[i].field == CTL_F_TID)
				r->tid = n;
			else if (fields[i].field == CTL_F_CID)
				r->cid = n;
			else
				r->lun = n;
			break;
		case CTL_F_SID:
			if (number(val, UINT64_MAX, &n))
				goto bad_number;
			r->sid = n;
			break;
		case CTL_F_USER:
		case CTL_F_JSON:
		case CTL_F_DRYRUN:
		case CTL_F_STATS:
		case CTL_F_PROMETHEUS:
			if (strcmp(val, "1")) {
				snprintf(err, errlen, "%s: expected 1", line);
				return -EINVAL;
			}
			break;
		case CTL_F_TARGET:
			if (!*val || strlen(val) >= sizeof(r->target))
				goto too_long;
			strcpy(r->target, val);
			break;
		case CTL_F_PARAMS:
			if (strlen(val) >= sizeof(r->params))
				goto too_long;
			strcpy(r->params, val);
			break;
		case CTL_F_REDIRECT:
			if (strlen(val) >= sizeof(r->redirect))
				goto too_long;
			strcpy(r->redirect, val);
			break;
		}
		continue;
bad_number:
		snprintf(err, errlen, "%s: \"%.32s\" is not a number", line, val);
		return -EINVAL;
too_long:
		snprintf(err, errlen, "%s: value too long", line);
		return -EINVAL;
	}
	snprintf(err, errlen, "request not terminated by an empty line");
	return -EINVAL;
}

int ctl_rsp_header(int version, int status, char *buf, size_t len)
{
	return snprintf(buf, len, "%s %d %d\n", CTL_MAGIC,
			version ? version : CTL_VERSION, status);
}

int ctl_rsp_parse(const char *buf, int *status, const char **body)
{
	int ver, n = 0;

	if (sscanf(buf, CTL_MAGIC " %d %d%n", &ver, status, &n) != 2 ||
	    ver < CTL_VERSION_MIN || ver > CTL_VERSION || buf[n] != '\n')
		return -EPROTO;
	*body = buf + n + 1;
	return 0;
}
