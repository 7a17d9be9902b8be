// SPDX-License-Identifier: GPL-2.0
/*
 * The statistics as ietadm --stats and Prometheus read them (metrics.c):
 * buckets and quantiles, text and JSON, and Prometheus' exposition format
 * checked line by line as a scraper would read it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "test.h"

static struct kstate one(void)
{
	struct kstate st = { 0 };
	struct ktarget *t;

	st.targets = calloc(1, sizeof(*st.targets));
	st.nr_targets = 1;
	t = st.targets;
	t->tid = 3;
	strcpy(t->name, "iqn.2001-04.com.example:disk\"1\\");
	t->luns = calloc(2, sizeof(*t->luns));
	t->nr_luns = 2;
	t->luns[0].conf.lun = 0;
	t->luns[1].conf.lun = 9;
	t->sessions = calloc(1, sizeof(*t->sessions));
	t->nr_sessions = 1;
	t->sessions[0].sid = 1ull << 48;
	strcpy(t->sessions[0].initiator, "iqn.1993-08.org.debian:01:abc");
	return st;
}

static char *text_of(struct textbuf *tb)
{
	if (textbuf_append(tb, "", 1))
		abort();
	return tb->buf;
}

TEST(metrics_buckets_double_from_2us_to_4s_and_the_last_is_open)
{
	struct khist h = { 0 };

	CHECK_EQ(metrics_bucket_le_ns(0), 2048);
	CHECK_EQ(metrics_bucket_le_ns(1), 4096);
	CHECK_EQ(metrics_bucket_le_ns(IET_HIST_NR_BUCKETS - 2), 1ull << 32);
	CHECK_EQ(metrics_bucket_le_ns(IET_HIST_NR_BUCKETS - 1), UINT64_MAX);
	CHECK_EQ(metrics_quantile_ns(&h, 0.5), 0);
	h.counts[2] = 50;	/* under 8.192 us */
	h.counts[5] = 49;	/* under 65.536 us */
	h.counts[IET_HIST_NR_BUCKETS - 1] = 1;
	CHECK_EQ(metrics_quantile_ns(&h, 0.5), 8192);
	CHECK_EQ(metrics_quantile_ns(&h, 0.51), 65536);
	CHECK_EQ(metrics_quantile_ns(&h, 0.99), 65536);
	CHECK_EQ(metrics_quantile_ns(&h, 1.0), UINT64_MAX);
}

TEST(metrics_text_says_counts_errors_by_sense_key_and_quantiles)
{
	struct kstats s = { 0 };
	struct textbuf tb;
	char *t;

	s.cmds = 12;
	s.op_cmds[IET_SOP_READ] = 10;
	s.op_cmds[IET_SOP_OTHER] = 2;
	s.read_bytes = 40960;
	s.errors = 3;
	s.sense[6] = 2;
	s.conflicts = 1;
	s.hist[IET_LAT_TOTAL][IET_SOP_READ].counts[7] = 10;
	s.hist[IET_LAT_TOTAL][IET_SOP_READ].sum_ns = 2000000;
	textbuf_init(&tb, 1 << 20);
	metrics_text(&tb, &s, 1);
	t = text_of(&tb);
	CHECK_CONTAINS(t, "\tcommands:12 read:10 write:0 flush:0 other:2\n");
	CHECK_CONTAINS(t, "\tbytes read:40960 written:0\n");
	CHECK_CONTAINS(t, "\terrors:3 reservation_conflict:1 busy:0 unit_attention:2\n");
	CHECK(!strstr(t, "medium_error"));
	CHECK_CONTAINS(t, "\tread total latency: count:10 mean:200.0us p50:<=262.1us");
	CHECK_CONTAINS(t, "\twrite backend latency: none\n");
	textbuf_free(&tb);
}

TEST(metrics_json_has_every_bucket_with_its_bound)
{
	struct kstats s = { 0 };
	struct textbuf tb;
	struct jw j;
	char *t;

	s.hist[IET_LAT_BACKEND][IET_SOP_FLUSH].counts[IET_HIST_NR_BUCKETS - 1] = 4;
	s.sense[3] = 1;
	textbuf_init(&tb, 1 << 20);
	jw_init(&j, &tb);
	jw_obj(&j, NULL);
	metrics_json(&j, &s);
	jw_end(&j, '}');
	t = text_of(&tb);
	CHECK_CONTAINS(t, "\"medium_error\":1");
	CHECK_CONTAINS(t, "\"flush\":{\"total\":{\"count\":0,");
	CHECK_CONTAINS(t, "\"backend\":{\"count\":4,\"sum_ns\":0,\"buckets\":[{\"le_ns\":2048,\"count\":0}");
	CHECK_CONTAINS(t, "{\"le_ns\":4294967296,\"count\":0},{\"count\":4}]");
	textbuf_free(&tb);
}

/* Every line a comment of the two kinds or "name{labels} value". */
static void check_exposition(const char *t)
{
	const char *line = t;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char name[128], rest[2048];
		double v;

		REQUIRE(nl);
		if (!strncmp(line, "# HELP iet_", 11) ||
		    !strncmp(line, "# TYPE iet_", 11)) {
			line = nl + 1;
			continue;
		}
		if (sscanf(line, "%127[a-z_]{%2047[^}]} %lf", name, rest, &v) != 3)
			test_fail(__FILE__, __LINE__, "not a sample: %.*s",
				  (int)(nl - line), line);
		line = nl + 1;
	}
}

TEST(metrics_prometheus_histograms_are_cumulative_and_labels_escaped)
{
	struct kstate st = one();
	struct kstats *s = &st.targets[0].luns[1].stats;
	struct textbuf tb;
	char *t;

	s->op_cmds[IET_SOP_WRITE] = 7;
	s->write_bytes = 7 * 4096;
	s->errors = 1;
	s->sense[3] = 1;
	s->hist[IET_LAT_TOTAL][IET_SOP_WRITE].counts[0] = 2;
	s->hist[IET_LAT_TOTAL][IET_SOP_WRITE].counts[4] = 3;
	s->hist[IET_LAT_TOTAL][IET_SOP_WRITE].counts[IET_HIST_NR_BUCKETS - 1] = 2;
	s->hist[IET_LAT_TOTAL][IET_SOP_WRITE].sum_ns = 1500000000;
	st.targets[0].sessions[0].stats.read_bytes = 5;
	textbuf_init(&tb, 16 << 20);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 0), 0);
	t = text_of(&tb);
	check_exposition(t);
#define L9 "target=\"iqn.2001-04.com.example:disk\\\"1\\\\\",tid=\"3\",lun=\"9\""
	CHECK_CONTAINS(t, "# TYPE iet_lun_commands_total counter\n");
	CHECK_CONTAINS(t, "iet_lun_commands_total{" L9 ",op=\"write\"} 7\n");
	CHECK_CONTAINS(t, "iet_lun_written_bytes_total{" L9 "} 28672\n");
	CHECK_CONTAINS(t, "iet_lun_check_conditions_total{" L9 ",sense_key=\"medium_error\"} 1\n");
	CHECK_CONTAINS(t, "# TYPE iet_lun_write_latency_seconds histogram\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_bucket{" L9 ",le=\"2.048e-06\"} 2\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_bucket{" L9 ",le=\"3.2768e-05\"} 5\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_bucket{" L9 ",le=\"4.294967296\"} 5\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_bucket{" L9 ",le=\"+Inf\"} 7\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_sum{" L9 "} 1.500000000\n");
	CHECK_CONTAINS(t, "iet_lun_write_latency_seconds_count{" L9 "} 7\n");
	CHECK_CONTAINS(t, "# TYPE iet_lun_flush_backend_latency_seconds histogram\n");
	CHECK_CONTAINS(t, "iet_session_read_bytes_total{target=\"iqn.2001-04.com.example:disk\\\"1\\\\\",tid=\"3\",initiator=\"iqn.1993-08.org.debian:01:abc\",sid=\"281474976710656\"} 5\n");
	/* One TYPE line per family, not per series. */
	{
		const char *a = strstr(t, "# TYPE iet_lun_commands_total");

		CHECK(a && !strstr(a + 1, "# TYPE iet_lun_commands_total"));
	}
	textbuf_free(&tb);
	kstate_free(&st);
}

/*
 * A name from the wire need not be UTF-8; a label must be, or node_exporter
 * drops every series of the file: such a byte reads as U+FFFD, a character
 * that is UTF-8 stays, and the longest name, every byte escaped or
 * replaced, is not cut.
 */
TEST(metrics_prometheus_labels_are_utf8_whatever_the_name)
{
	struct kstate st = one();
	struct ksession *ks = &st.targets[0].sessions[0];
	struct textbuf tb;
	char *t, *l;
	int n;

	strcpy(ks->initiator, "iqn.x:\xff\xc3\xa9\xed\xa0\x80\xc3");
	textbuf_init(&tb, 16 << 20);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 0), 0);
	t = text_of(&tb);
	check_exposition(t);
	CHECK_CONTAINS(t, "initiator=\"iqn.x:\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",");
	textbuf_free(&tb);

	memset(ks->initiator, 0xff, IET_NAME_MAX);
	ks->initiator[IET_NAME_MAX] = '\0';
	memset(st.targets[0].name, '"', IET_NAME_MAX);
	st.targets[0].name[IET_NAME_MAX] = '\0';
	textbuf_init(&tb, 16 << 20);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 0), 0);
	t = text_of(&tb);
	check_exposition(t);
	l = strstr(t, "initiator=\"");
	REQUIRE(l);
	for (n = 0, l += 11; !strncmp(l, "\xef\xbf\xbd", 3); l += 3)
		n++;
	CHECK_EQ(n, IET_NAME_MAX);
	CHECK(!strncmp(l, "\",sid=", 6));
	textbuf_free(&tb);
	kstate_free(&st);
}

TEST(metrics_prometheus_of_one_target_or_of_none)
{
	struct kstate st = one();
	struct textbuf tb;

	textbuf_init(&tb, 16 << 20);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 4), 0);
	CHECK_EQ(tb.len, 0);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 3), 0);
	CHECK(tb.len > 0);
	textbuf_free(&tb);
	/* Too small a buffer fails, never a file cut in the middle. */
	textbuf_init(&tb, 4096);
	CHECK_EQ(metrics_prometheus(&tb, &st, 0), -ENOMEM);
	textbuf_free(&tb);
	kstate_free(&st);
}

/*
 * etc/grafana-iet.json asks only for series that ietd writes: each iet_
 * name in its queries is one of a family's samples, so that renaming a
 * metric cannot leave the dashboard's panels silently empty.
 */
TEST(metrics_the_grafana_dashboard_asks_for_series_that_exist)
{
	struct kstate st = one();
	struct textbuf tb;
	char *dash, *p, *t;
	unsigned int names = 0;
	long len;
	FILE *f;

	f = fopen("../../etc/grafana-iet.json", "r");
	REQUIRE(f);
	REQUIRE(fseek(f, 0, SEEK_END) == 0);
	len = ftell(f);
	REQUIRE(len > 0);
	rewind(f);
	dash = calloc(1, len + 1);
	REQUIRE(dash && fread(dash, 1, len, f) == (size_t)len);
	fclose(f);
	/* A sense key's series shows once that key has been seen. */
	st.targets[0].luns[0].stats.sense[6] = 1;
	textbuf_init(&tb, 16 << 20);
	REQUIRE_EQ(metrics_prometheus(&tb, &st, 0), 0);
	t = text_of(&tb);
	for (p = dash; (p = strstr(p, "iet_")); ) {
		char name[128], sample[132];
		size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz_");

		/* "iet-target", "iet_" inside a longer word: not a series. */
		if (p > dash && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'))) {
			p += n;
			continue;
		}
		REQUIRE(n < sizeof(name));
		memcpy(name, p, n);
		name[n] = '\0';
		snprintf(sample, sizeof(sample), "\n%s{", name);
		if (!strstr(t, sample))
			test_fail(__FILE__, __LINE__,
				  "the dashboard asks for %s, which is never written",
				  name);
		names++;
		p += n;
	}
	CHECK(names >= 20);
	free(dash);
	textbuf_free(&tb);
	kstate_free(&st);
}
