// SPDX-License-Identifier: GPL-2.0
/* Statistics of LUNs and sessions for people (text, JSON) and Prometheus. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_ops.h"
#include "metrics.h"
#include "utf8.h"

static const char *const op_names[IET_SOP_NR] = {
	[IET_SOP_READ] = "read", [IET_SOP_WRITE] = "write",
	[IET_SOP_FLUSH] = "flush", [IET_SOP_OTHER] = "other",
};

static const char *const lat_names[IET_LAT_NR] = {
	[IET_LAT_TOTAL] = "total", [IET_LAT_BACKEND] = "backend",
};

/* SPC-4 table 28; 0xc is obsolete. */
static const char *const sense_names[16] = {
	"no_sense", "recovered_error", "not_ready", "medium_error",
	"hardware_error", "illegal_request", "unit_attention", "data_protect",
	"blank_check", "vendor_specific", "copy_aborted", "aborted_command",
	"obsolete_0c", "volume_overflow", "miscompare", "completed",
};

uint64_t metrics_bucket_le_ns(unsigned int b)
{
	if (b >= IET_HIST_NR_BUCKETS - 1)
		return UINT64_MAX;
	return UINT64_C(1) << (IET_HIST_SHIFT + b);
}

static uint64_t hist_count(const struct khist *h)
{
	uint64_t n = 0;
	unsigned int b;

	for (b = 0; b < IET_HIST_NR_BUCKETS; b++)
		n += h->counts[b];
	return n;
}

uint64_t metrics_quantile_ns(const struct khist *h, double q)
{
	uint64_t n = hist_count(h), seen = 0;
	unsigned int b;

	if (!n)
		return 0;
	for (b = 0; b < IET_HIST_NR_BUCKETS; b++) {
		seen += h->counts[b];
		if ((double)seen >= q * (double)n)
			return metrics_bucket_le_ns(b);
	}
	return UINT64_MAX;
}

/* "<=256us", "<=4.3s", ">4.3s": a bucket's bound, short. */
static void bound_text(uint64_t ns, char *buf, size_t len)
{
	if (ns == UINT64_MAX)
		snprintf(buf, len, ">%.3gs",
			 (double)metrics_bucket_le_ns(IET_HIST_NR_BUCKETS - 2) / 1e9);
	else if (ns < 1000000)
		snprintf(buf, len, "<=%.4gus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "<=%.4gms", (double)ns / 1e6);
	else
		snprintf(buf, len, "<=%.4gs", (double)ns / 1e9);
}

/* ---------------------------------------------------------------- text */

static void hist_text(struct textbuf *out, const char *tabs,
		      const struct khist *h, const char *op, const char *kind)
{
	uint64_t n = hist_count(h);
	char p50[16], p90[16], p99[16], p999[16];

	if (!n) {
		out_line(out, "%s%s %s latency: none", tabs, op, kind);
		return;
	}
	bound_text(metrics_quantile_ns(h, 0.5), p50, sizeof(p50));
	bound_text(metrics_quantile_ns(h, 0.9), p90, sizeof(p90));
	bound_text(metrics_quantile_ns(h, 0.99), p99, sizeof(p99));
	bound_text(metrics_quantile_ns(h, 0.999), p999, sizeof(p999));
	out_line(out, "%s%s %s latency: count:%" PRIu64 " mean:%.1fus p50:%s p90:%s p99:%s p99.9:%s",
		 tabs, op, kind, n, (double)h->sum_ns / (double)n / 1e3, p50,
		 p90, p99, p999);
}

void metrics_text(struct textbuf *out, const struct kstats *s,
		  unsigned int indent)
{
	char tabs[8] = "", errs[512];
	unsigned int k, o;
	size_t off;

	if (indent >= sizeof(tabs))
		indent = sizeof(tabs) - 1;
	memset(tabs, '\t', indent);
	out_line(out, "%scommands:%" PRIu64 " read:%" PRIu64 " write:%" PRIu64
		 " flush:%" PRIu64 " other:%" PRIu64, tabs, s->cmds,
		 s->op_cmds[IET_SOP_READ], s->op_cmds[IET_SOP_WRITE],
		 s->op_cmds[IET_SOP_FLUSH], s->op_cmds[IET_SOP_OTHER]);
	out_line(out, "%sbytes read:%" PRIu64 " written:%" PRIu64, tabs,
		 s->read_bytes, s->write_bytes);
	off = snprintf(errs, sizeof(errs), "%serrors:%" PRIu64
		       " reservation_conflict:%" PRIu64 " busy:%" PRIu64,
		       tabs, s->errors, s->conflicts, s->busy);
	for (k = 0; k < 16 && off < sizeof(errs); k++)
		if (s->sense[k])
			off += snprintf(errs + off, sizeof(errs) - off,
					" %s:%" PRIu64, sense_names[k],
					s->sense[k]);
	out_line(out, "%s", errs);
	for (o = 0; o < IET_SOP_HIST_NR; o++)
		for (k = 0; k < IET_LAT_NR; k++)
			hist_text(out, tabs, &s->hist[k][o], op_names[o],
				  lat_names[k]);
}

/* ---------------------------------------------------------------- JSON */

static void hist_json(struct jw *j, const char *key, const struct khist *h)
{
	unsigned int b;

	jw_obj(j, key);
	jw_u64(j, "count", hist_count(h));
	jw_u64(j, "sum_ns", h->sum_ns);
	/* Each bucket alone, by its upper bound; the last has none. */
	jw_arr(j, "buckets");
	for (b = 0; b < IET_HIST_NR_BUCKETS; b++) {
		jw_obj(j, NULL);
		if (b < IET_HIST_NR_BUCKETS - 1)
			jw_u64(j, "le_ns", metrics_bucket_le_ns(b));
		jw_u64(j, "count", h->counts[b]);
		jw_end(j, '}');
	}
	jw_end(j, ']');
	jw_end(j, '}');
}

void metrics_json(struct jw *j, const struct kstats *s)
{
	unsigned int k, o;

	jw_obj(j, "commands_by_op");
	for (o = 0; o < IET_SOP_NR; o++)
		jw_u64(j, op_names[o], s->op_cmds[o]);
	jw_end(j, '}');
	jw_obj(j, "check_conditions");
	for (k = 0; k < 16; k++)
		jw_u64(j, sense_names[k], s->sense[k]);
	jw_end(j, '}');
	jw_u64(j, "reservation_conflicts", s->conflicts);
	jw_u64(j, "busy", s->busy);
	jw_obj(j, "latency");
	for (o = 0; o < IET_SOP_HIST_NR; o++) {
		jw_obj(j, op_names[o]);
		for (k = 0; k < IET_LAT_NR; k++)
			hist_json(j, lat_names[k], &s->hist[k][o]);
		jw_end(j, '}');
	}
	jw_end(j, '}');
}

/* ---------------------------------------------------------- Prometheus */

/*
 * A label value with \, " and newline escaped, as the format asks, and in
 * UTF-8, cut where it would not fit len.
 */
static void label_escape(const char *v, char *buf, size_t len)
{
	const unsigned char *c = (const unsigned char *)v;
	size_t o = 0, in, out;
	const char *rep;

	for (; *c; c += in, o += out) {
		in = 1;
		out = 2;
		if (*c == '\\' || *c == '"') {
			rep = *c == '"' ? "\\\"" : "\\\\";
		} else if (*c == '\n') {
			rep = "\\n";
		} else if (*c < 0x80 || (in = utf8_len(c))) {
			rep = (const char *)c;
			out = in;
		} else {
			/*
			 * A label is UTF-8, or the parser drops the whole file:
			 * a byte that is not (a name from the wire) reads as
			 * U+FFFD.
			 */
			rep = "\xef\xbf\xbd";
			in = 1;
			out = 3;
		}
		if (o + out >= len)
			break;
		memcpy(buf + o, rep, out);
	}
	buf[o] = '\0';
}

/* One object's labels, without braces: target="..",lun="0" and the like. */
struct series {
	const char *kind;		/* "lun" or "session" */
	char labels[6 * IET_NAME_MAX + 128];	/* two names, label_escape()d */
};

static const struct {
	const char *name;
	const char *type;
	const char *help;
} families[] = {
	{ "commands_total", "counter",
	  "SCSI commands completed, by what they asked of the backend" },
	{ "read_bytes_total", "counter", "Bytes read by commands that succeeded" },
	{ "written_bytes_total", "counter", "Bytes written by commands that succeeded" },
	{ "errors_total", "counter", "Commands ended with a status other than GOOD" },
	{ "check_conditions_total", "counter",
	  "Commands ended with CHECK CONDITION, by sense key" },
	{ "reservation_conflicts_total", "counter",
	  "Commands ended with RESERVATION CONFLICT" },
	{ "busy_total", "counter", "Commands ended with BUSY or TASK SET FULL" },
};

enum { F_COMMANDS, F_READ, F_WRITTEN, F_ERRORS, F_SENSE, F_CONFLICTS, F_BUSY,
       F_NR };

static int family_header(struct textbuf *out, const char *kind,
			 const char *name, const char *type, const char *help)
{
	return out_line(out, "# HELP iet_%s_%s %s.", kind, name, help) ?:
	       out_line(out, "# TYPE iet_%s_%s %s", kind, name, type);
}

static int family_samples(struct textbuf *out, const struct series *sr,
			  const struct kstats *st, size_t n, unsigned int f)
{
	const char *kind = sr[0].kind;
	unsigned int o, k;
	size_t i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		const struct kstats *s = &st[i];
		const char *l = sr[i].labels;

		switch (f) {
		case F_COMMANDS:
			for (o = 0; o < IET_SOP_NR && !ret; o++)
				ret = out_line(out, "iet_%s_commands_total{%s,op=\"%s\"} %" PRIu64,
					       kind, l, op_names[o], s->op_cmds[o]);
			break;
		case F_READ:
			ret = out_line(out, "iet_%s_read_bytes_total{%s} %" PRIu64,
				       kind, l, s->read_bytes);
			break;
		case F_WRITTEN:
			ret = out_line(out, "iet_%s_written_bytes_total{%s} %" PRIu64,
				       kind, l, s->write_bytes);
			break;
		case F_ERRORS:
			ret = out_line(out, "iet_%s_errors_total{%s} %" PRIu64,
				       kind, l, s->errors);
			break;
		case F_SENSE:
			/* The keys seen; the total is errors_total's. */
			for (k = 0; k < 16 && !ret; k++)
				if (s->sense[k])
					ret = out_line(out, "iet_%s_check_conditions_total{%s,sense_key=\"%s\"} %" PRIu64,
						       kind, l, sense_names[k],
						       s->sense[k]);
			break;
		case F_CONFLICTS:
			ret = out_line(out, "iet_%s_reservation_conflicts_total{%s} %" PRIu64,
				       kind, l, s->conflicts);
			break;
		case F_BUSY:
			ret = out_line(out, "iet_%s_busy_total{%s} %" PRIu64,
				       kind, l, s->busy);
			break;
		}
	}
	return ret;
}

static int hist_samples(struct textbuf *out, const char *name,
			const char *labels, const struct khist *h)
{
	uint64_t cum = 0;
	unsigned int b;
	int ret = 0;

	for (b = 0; b < IET_HIST_NR_BUCKETS && !ret; b++) {
		cum += h->counts[b];
		if (b < IET_HIST_NR_BUCKETS - 1)
			ret = out_line(out, "%s_bucket{%s,le=\"%.10g\"} %" PRIu64,
				       name, labels,
				       (double)metrics_bucket_le_ns(b) / 1e9, cum);
		else
			ret = out_line(out, "%s_bucket{%s,le=\"+Inf\"} %" PRIu64,
				       name, labels, cum);
	}
	return ret ?:
	       out_line(out, "%s_sum{%s} %.9f", name, labels,
			(double)h->sum_ns / 1e9) ?:
	       out_line(out, "%s_count{%s} %" PRIu64, name, labels, cum);
}

/* All series of one kind (LUNs or sessions): one block per family. */
static int kind_samples(struct textbuf *out, const struct series *sr,
			const struct kstats *st, size_t n)
{
	static const char *const hist_help[IET_LAT_NR] = {
		[IET_LAT_TOTAL] = "from the command PDU's arrival to its status sent",
		[IET_LAT_BACKEND] = "from the first submission to the backend to its completion",
	};
	char name[64], help[160];
	unsigned int f, o, k;
	size_t i;
	int ret = 0;

	if (!n)
		return 0;
	for (f = 0; f < F_NR && !ret; f++)
		ret = family_header(out, sr[0].kind, families[f].name,
				    families[f].type, families[f].help) ?:
		      family_samples(out, sr, st, n, f);
	for (k = 0; k < IET_LAT_NR && !ret; k++) {
		for (o = 0; o < IET_SOP_HIST_NR && !ret; o++) {
			snprintf(name, sizeof(name), "%s%s_latency_seconds",
				 op_names[o],
				 k == IET_LAT_BACKEND ? "_backend" : "");
			snprintf(help, sizeof(help), "Latency of %s commands, %s",
				 op_names[o], hist_help[k]);
			ret = family_header(out, sr[0].kind, name, "histogram",
					    help);
			snprintf(name, sizeof(name), "iet_%s_%s%s_latency_seconds",
				 sr[0].kind, op_names[o],
				 k == IET_LAT_BACKEND ? "_backend" : "");
			for (i = 0; i < n && !ret; i++)
				ret = hist_samples(out, name, sr[i].labels,
						   &st[i].hist[k][o]);
		}
	}
	return ret;
}

int metrics_prometheus(struct textbuf *out, const struct kstate *st,
		       uint32_t tid)
{
	struct series *sr = NULL;
	struct kstats *ss = NULL;
	char tname[3 * IET_NAME_MAX + 1], iname[3 * IET_NAME_MAX + 1];
	size_t t, i, n = 0, cap = 0;
	int pass, ret = 0;

	for (t = 0; t < st->nr_targets; t++)
		if (!tid || st->targets[t].tid == tid)
			cap += st->targets[t].nr_luns +
			       st->targets[t].nr_sessions;
	if (cap) {
		sr = calloc(cap, sizeof(*sr));
		ss = calloc(cap, sizeof(*ss));
		if (!sr || !ss) {
			ret = -ENOMEM;
			goto out;
		}
	}
	/* Pass 0 the LUNs, pass 1 the sessions: each a block of families. */
	for (pass = 0; pass < 2 && !ret; pass++) {
		n = 0;
		for (t = 0; t < st->nr_targets; t++) {
			const struct ktarget *kt = &st->targets[t];

			if (tid && kt->tid != tid)
				continue;
			label_escape(kt->name, tname, sizeof(tname));
			for (i = 0; !pass && i < kt->nr_luns; i++, n++) {
				sr[n].kind = "lun";
				snprintf(sr[n].labels, sizeof(sr[n].labels),
					 "target=\"%s\",tid=\"%u\",lun=\"%u\"",
					 tname, kt->tid, kt->luns[i].conf.lun);
				ss[n] = kt->luns[i].stats;
			}
			for (i = 0; pass && i < kt->nr_sessions; i++, n++) {
				const struct ksession *ks = &kt->sessions[i];

				label_escape(ks->initiator, iname, sizeof(iname));
				sr[n].kind = "session";
				snprintf(sr[n].labels, sizeof(sr[n].labels),
					 "target=\"%s\",tid=\"%u\",initiator=\"%s\",sid=\"%" PRIu64 "\"",
					 tname, kt->tid, iname, ks->sid);
				ss[n] = ks->stats;
			}
		}
		ret = kind_samples(out, sr, ss, n);
	}
out:
	free(sr);
	free(ss);
	return ret ? -ENOMEM : 0;
}
