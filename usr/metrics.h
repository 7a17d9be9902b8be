/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's counters and latency histograms of LUNs and sessions, as
 * people and programs read them: ietadm --op show --stats (text, JSON) and
 * Prometheus' text exposition format (version 0.0.4), which ietd writes for
 * node_exporter's textfile collector (MetricsFile, ietd.conf(5)). Pure
 * functions of a struct kstate: tests hand them made-up counters.
 */
#ifndef IET_USR_METRICS_H
#define IET_USR_METRICS_H

#include "json.h"
#include "kernel.h"

/* Upper bound of histogram bucket b in ns; UINT64_MAX for the last. */
uint64_t metrics_bucket_le_ns(unsigned int b);
/*
 * The upper bound in ns of the bucket holding quantile q (0 < q <= 1) of
 * h's latencies; 0 when h is empty, UINT64_MAX when in the last bucket.
 */
uint64_t metrics_quantile_ns(const struct khist *h, double q);

/* A LUN's or a session's statistics, lines indented by indent tabs. */
void metrics_text(struct textbuf *out, const struct kstats *s,
		  unsigned int indent);
/* What --stats adds to a "stats" object: kinds, sense keys, latency. */
void metrics_json(struct jw *j, const struct kstats *s);
/*
 * The LUNs and sessions of st's targets (of target tid alone, if not 0) in
 * Prometheus' text format: 0, or -ENOMEM when out is full.
 */
int metrics_prometheus(struct textbuf *out, const struct kstate *st,
		       uint32_t tid);

#endif
