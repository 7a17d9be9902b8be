// SPDX-License-Identifier: GPL-2.0
/*
 * Counters and latency histograms of LUNs and sessions. Each CPU has its
 * own copy, so that a command pays a few this_cpu additions and shares no
 * cache line with the other CPUs' commands; a netlink dump adds the copies
 * up. Nothing here takes a lock: a dump that races a command may see it
 * counted in one field and not yet in another, as /proc/diskstats does.
 */
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <scsi/scsi_common.h>
#include <scsi/scsi_proto.h>

#include "iet.h"

struct iet_hist_cpu {
	u64 sum_ns;
	u64 counts[IET_HIST_NR_BUCKETS];
};

/* All u64, so that summing the CPUs' copies is one loop (stats_sum()). */
struct iet_stats_cpu {
	u64 op_cmds[IET_SOP_NR];
	u64 read_bytes;
	u64 write_bytes;
	u64 errors;
	u64 conflicts;
	u64 busy;
	u64 sense[16];
	struct iet_hist_cpu hist[IET_LAT_NR][IET_SOP_HIST_NR];
};

static_assert(sizeof(struct iet_stats_cpu) % sizeof(u64) == 0);

int iet_stats_init(struct iet_stats *st)
{
	st->cpu = alloc_percpu(struct iet_stats_cpu);
	return st->cpu ? 0 : -ENOMEM;
}

/* Also from an RCU callback: free_percpu() may be called in atomic context. */
void iet_stats_free(struct iet_stats *st)
{
	free_percpu(st->cpu);
	st->cpu = NULL;
}

/*
 * What the command asked for, even when it was refused before it got an
 * I/O (a READ past the end is a read that failed, not another command).
 */
static enum iet_stat_op req_op(const struct iet_scsi_req *req)
{
	switch (req->io.op) {
	case IET_IO_READ:
		return IET_SOP_READ;
	case IET_IO_WRITE:
		return IET_SOP_WRITE;
	case IET_IO_FLUSH:
		return IET_SOP_FLUSH;
	case IET_IO_NONE:
		break;
	}
	switch (req->cdb[0]) {
	case READ_6:
	case READ_10:
	case READ_12:
	case READ_16:
		return IET_SOP_READ;
	case WRITE_6:
	case WRITE_10:
	case WRITE_12:
	case WRITE_16:
		return IET_SOP_WRITE;
	case SYNCHRONIZE_CACHE:
	case SYNCHRONIZE_CACHE_16:
		return IET_SOP_FLUSH;
	default:
		return IET_SOP_OTHER;
	}
}

/*
 * 0: at most 2^IET_HIST_SHIFT ns; b: at most 2^(IET_HIST_SHIFT + b) ns, as
 * Prometheus' le ("less than or equal") reads a bucket's bound.
 */
static unsigned int hist_bucket(u64 ns)
{
	u64 v = ns ? (ns - 1) >> IET_HIST_SHIFT : 0;

	return v ? min_t(unsigned int, fls64(v), IET_HIST_NR_BUCKETS - 1) : 0;
}

static void stats_latency(struct iet_stats *st, enum iet_lat kind,
			  enum iet_stat_op op, u64 ns)
{
	struct iet_hist_cpu __percpu *h = &st->cpu->hist[kind][op];

	this_cpu_add(h->sum_ns, ns);
	this_cpu_inc(h->counts[hist_bucket(ns)]);
}

static void stats_done(struct iet_stats *st, const struct iet_scsi_req *req,
		       enum iet_stat_op op, int sense_key, u64 backend_ns)
{
	u64 bytes = req->lun ? (u64)req->nr_blocks << req->lun->blkbits : 0;

	this_cpu_inc(st->cpu->op_cmds[op]);
	switch (req->status) {
	case SAM_STAT_GOOD:
		if (req->data_out)
			this_cpu_add(st->cpu->write_bytes, bytes);
		else
			this_cpu_add(st->cpu->read_bytes, bytes);
		break;
	case SAM_STAT_CHECK_CONDITION:
		this_cpu_inc(st->cpu->errors);
		if (sense_key >= 0)
			this_cpu_inc(st->cpu->sense[sense_key]);
		break;
	case SAM_STAT_RESERVATION_CONFLICT:
		this_cpu_inc(st->cpu->errors);
		this_cpu_inc(st->cpu->conflicts);
		break;
	case SAM_STAT_BUSY:
	case SAM_STAT_TASK_SET_FULL:
		this_cpu_inc(st->cpu->errors);
		this_cpu_inc(st->cpu->busy);
		break;
	default:
		this_cpu_inc(st->cpu->errors);
		break;
	}
	if (backend_ns != U64_MAX && op < IET_SOP_HIST_NR)
		stats_latency(st, IET_LAT_BACKEND, op, backend_ns);
}

/* A command's SCSI part has ended: counted in its session's and LUN's. */
void iet_stats_cmd_done(struct iet_session *session,
			const struct iet_scsi_req *req)
{
	enum iet_stat_op op = req_op(req);
	u64 backend_ns = U64_MAX;
	struct scsi_sense_hdr sshdr;
	int key = -1;		/* no sense data that parses: no key counted */

	if (req->status == SAM_STAT_CHECK_CONDITION &&
	    scsi_normalize_sense(req->sense, req->sense_len, &sshdr))
		key = sshdr.sense_key & 0x0f;
	if (req->t_submit && req->t_backend >= req->t_submit)
		backend_ns = req->t_backend - req->t_submit;
	stats_done(&session->stats, req, op, key, backend_ns);
	if (req->lun)
		stats_done(&req->lun->stats, req, op, key, backend_ns);
}

/* Its status is out: the latency the initiator saw, nearly. */
void iet_stats_cmd_sent(struct iet_session *session,
			const struct iet_scsi_req *req)
{
	enum iet_stat_op op = req_op(req);
	u64 ns;

	if (op >= IET_SOP_HIST_NR || !req->t_rx)
		return;
	ns = ktime_get_ns() - req->t_rx;
	stats_latency(&session->stats, IET_LAT_TOTAL, op, ns);
	if (req->lun)
		stats_latency(&req->lun->stats, IET_LAT_TOTAL, op, ns);
}

/* Bytes a command moved for another LUN (EXTENDED COPY's). */
void iet_stats_copied(struct iet_lun *src, struct iet_lun *dst, u64 bytes)
{
	this_cpu_add(src->stats.cpu->read_bytes, bytes);
	this_cpu_add(dst->stats.cpu->write_bytes, bytes);
}

static void stats_sum(const struct iet_stats *st, struct iet_stats_cpu *sum)
{
	u64 *s = (u64 *)sum;
	unsigned int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const u64 *c = (const u64 *)per_cpu_ptr(st->cpu, cpu);

		for (i = 0; i < sizeof(*sum) / sizeof(u64); i++)
			s[i] += READ_ONCE(c[i]);
	}
}

static int put_u64_array(struct sk_buff *skb, int type, const u64 *vals,
			 unsigned int n)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	/* Index i + 1 (0 is no attribute), padded with attribute 0. */
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(skb, i + 1, vals[i], 0))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int put_hist(struct sk_buff *skb, const struct iet_hist_cpu *h,
		    enum iet_lat kind, enum iet_stat_op op)
{
	struct nlattr *nest = nla_nest_start(skb, IET_STAT_HIST);

	if (!nest ||
	    nla_put_u32(skb, IET_HIST_OP, op) ||
	    nla_put_u32(skb, IET_HIST_KIND, kind) ||
	    nla_put_u64_64bit(skb, IET_HIST_SUM_NS, h->sum_ns, IET_HIST_PAD) ||
	    nla_put(skb, IET_HIST_COUNTS, sizeof(h->counts), h->counts))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int put_sum(struct sk_buff *skb, const struct iet_stats_cpu *s)
{
	struct nlattr *nest = nla_nest_start(skb, IET_A_STATS);
	u64 cmds = 0;
	unsigned int i, k;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < IET_SOP_NR; i++)
		cmds += s->op_cmds[i];
	if (nla_put_u64_64bit(skb, IET_STAT_CMDS, cmds, IET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, IET_STAT_READ_BYTES, s->read_bytes,
			      IET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, IET_STAT_WRITE_BYTES, s->write_bytes,
			      IET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, IET_STAT_ERRORS, s->errors, IET_STAT_PAD) ||
	    put_u64_array(skb, IET_STAT_OP_CMDS, s->op_cmds, IET_SOP_NR) ||
	    put_u64_array(skb, IET_STAT_SENSE_KEYS, s->sense,
			  ARRAY_SIZE(s->sense)) ||
	    nla_put_u64_64bit(skb, IET_STAT_CONFLICTS, s->conflicts,
			      IET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, IET_STAT_BUSY, s->busy, IET_STAT_PAD))
		return -EMSGSIZE;
	for (k = 0; k < IET_LAT_NR; k++)
		for (i = 0; i < IET_SOP_HIST_NR; i++)
			if (put_hist(skb, &s->hist[k][i], k, i))
				return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* The counters as IET_A_STATS; about 2.4 KiB of message. */
int iet_stats_put(struct sk_buff *skb, const struct iet_stats *st)
{
	struct iet_stats_cpu *sum;
	int ret;

	sum = kmalloc(sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	stats_sum(st, sum);
	ret = put_sum(skb, sum);
	kfree(sum);
	return ret;
}
