// SPDX-License-Identifier: GPL-2.0
/*
 * A live LUN's new size, asked by ietadm: --op update --tid=N --lun=L
 * --params Size=BYTES|Blocks=N|Resize=backing[,Force=Yes]. The kernel
 * resizes the LUN in place (its reservations and commands stay, every
 * nexus hears CAPACITY DATA HAS CHANGED); ietd keeps a size it was given
 * in its model, so that --op save writes it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ctl_ops.h"
#include "kernel.h"
#include "log.h"
#include "model.h"
#include "op_resize.h"
#include "params.h"

/* Each key once; which were seen. */
struct resize_parse_state {
	struct resize_req *r;
	unsigned int seen;
	char *err;
	size_t errlen;
};

enum { SEEN_SIZE = 1, SEEN_BLOCKS = 2, SEEN_RESIZE = 4, SEEN_FORCE = 8 };

/* BYTES with an optional K, M, G or T (powers of 1024), not past 2^63. */
static int parse_bytes(const char *v, uint64_t *out)
{
	char num[24];
	size_t len = strlen(v);
	unsigned int shift = 0;
	uint64_t n;

	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, len + 1);
	switch (num[len - 1]) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	}
	if (shift)
		num[len - 1] = '\0';
	if (parse_number(num, &n) || n > (UINT64_MAX >> 1) >> shift)
		return -EINVAL;
	*out = n << shift;
	return 0;
}

static int resize_key(void *arg, const char *key, const char *value)
{
	struct resize_parse_state *st = arg;
	struct resize_req *r = st->r;
	unsigned int bit;

	if (!strcasecmp(key, "Size"))
		bit = SEEN_SIZE;
	else if (!strcasecmp(key, "Blocks"))
		bit = SEEN_BLOCKS;
	else if (!strcasecmp(key, "Resize"))
		bit = SEEN_RESIZE;
	else if (!strcasecmp(key, "Force"))
		bit = SEEN_FORCE;
	else
		return -ENOENT;
	if (st->seen & bit) {
		snprintf(st->err, st->errlen, "--params: %s given twice", key);
		return -EINVAL;
	}
	st->seen |= bit;
	switch (bit) {
	case SEEN_SIZE:
		if (parse_bytes(value, &r->bytes) || !r->bytes) {
			snprintf(st->err, st->errlen,
				 "Size: \"%.32s\" is not a size in bytes (a number, K, M, G or T after it), above 0 and below 2^63",
				 value);
			return -EINVAL;
		}
		return 0;
	case SEEN_BLOCKS:
		if (parse_number(value, &r->blocks) || !r->blocks ||
		    r->blocks > (UINT64_MAX >> 1) / 512) {
			snprintf(st->err, st->errlen,
				 "Blocks: \"%.32s\" is not a number of blocks from 1 to 2^54",
				 value);
			return -EINVAL;
		}
		return 0;
	case SEEN_RESIZE:
		if (strcasecmp(value, "backing")) {
			snprintf(st->err, st->errlen,
				 "Resize: \"%.32s\": the only value is \"backing\" (the size the backing has now)",
				 value);
			return -EINVAL;
		}
		r->backing = true;
		return 0;
	default:
		if (!strcasecmp(value, "Yes")) {
			r->force = true;
		} else if (strcasecmp(value, "No")) {
			snprintf(st->err, st->errlen,
				 "Force: \"%.32s\" is neither Yes nor No", value);
			return -EINVAL;
		}
		return 0;
	}
}

int resize_parse(const char *params, struct resize_req *r, char *err,
		 size_t errlen)
{
	struct resize_parse_state st = {
		.r = r, .err = err, .errlen = errlen,
	};
	unsigned int how;
	int ret;

	memset(r, 0, sizeof(*r));
	err[0] = '\0';
	ret = params_each(params, resize_key, &st, err, errlen);
	if (ret == -ENOENT) {
		snprintf(err, errlen,
			 "--op update of a LUN takes --params Size=BYTES, Blocks=N or Resize=backing (with Force=Yes to shrink past data), or Reservations=release|clear");
		return -EINVAL;
	}
	if (ret)
		return ret;
	how = st.seen & (SEEN_SIZE | SEEN_BLOCKS | SEEN_RESIZE);
	if (!how || (how & (how - 1))) {
		snprintf(err, errlen,
			 "--params: one of Size=, Blocks= or Resize=backing");
		return -EINVAL;
	}
	return 0;
}

bool resize_params(const char *params)
{
	static const char *const keys[] = {
		"Size", "Blocks", "Resize", "Force", NULL,
	};

	return params_have(params, keys);
}

int resize_update(struct runtime *rt, const struct ctl_req *req, char *err,
		  size_t errlen)
{
	struct resize_req r;
	struct target_conf *t;
	struct lun_conf *lun;
	uint32_t bs;
	uint64_t blocks;
	int ret;

	ret = resize_parse(req->params, &r, err, errlen);
	if (ret)
		return ret;
	t = req_target(rt, req, err, errlen);
	if (!t)
		return -ENOENT;
	lun = target_lun(t, req->lun);
	if (!lun) {
		snprintf(err, errlen, "target %u has no LUN %u", t->tid,
			 req->lun);
		return -ENOENT;
	}
	bs = lun->block_size ?: 512;
	blocks = r.blocks;
	if (r.bytes) {
		if (r.bytes % bs) {
			snprintf(err, errlen,
				 "Size: %llu bytes is not a whole number of %u-byte blocks",
				 (unsigned long long)r.bytes, bs);
			return -EINVAL;
		}
		blocks = r.bytes / bs;
	}
	ret = kernel_lun_set(t->tid, req->lun, blocks, r.force);
	if (ret)
		return kernel_failed(ret, err, errlen,
				     "target %u LUN %u: resizing it", t->tid,
				     req->lun);
	/*
	 * A size ietd keeps follows: a nullio LUN's, or the size a closed
	 * backing reports (--op save writes it, a restart sends it).
	 */
	if (blocks && (lun->type == IET_LUN_NULLIO || lun->blocks))
		lun->blocks = blocks;
	log_info("ietadm: target tid %u %s LUN %u: resized%s", t->tid, t->name,
		 req->lun, r.backing ? " to its backing's size" : "");
	return 0;
}
