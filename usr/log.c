// SPDX-License-Identifier: GPL-2.0
/* Logging sinks, debug level and the peer rate limit. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

#define PEER_BURST	20	/* messages per second a peer may cause */

static const char *log_ident = "ietd";
static unsigned int log_sinks = LOG_SINK_STDERR;
static int log_lvl;
static log_hook_fn log_hook;

static time_t rl_second;
static unsigned int rl_count;
static unsigned long rl_suppressed;

void log_init(const char *ident, unsigned int sinks, int level)
{
	log_ident = ident;
	log_lvl = level;
	log_set_sinks(sinks);
}

void log_set_sinks(unsigned int sinks)
{
	if ((sinks & LOG_SINK_SYSLOG) && !(log_sinks & LOG_SINK_SYSLOG))
		openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_sinks = sinks;
}

int log_level(void)
{
	return log_lvl;
}

void log_set_hook(log_hook_fn fn)
{
	log_hook = fn;
}

/* One printable line: what could start another is written as \xNN. */
static void escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (; *in && n + 5 < outlen; in++) {
		unsigned char ch = *in;

		if (ch < 0x20 || ch >= 0x7f || ch == '\\') {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		} else {
			out[n++] = ch;
		}
	}
	out[n] = '\0';
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	char raw[1024], msg[4 * sizeof(raw) + 1];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape(raw, msg, sizeof(msg));
	if (log_hook) {
		log_hook(prio, msg);
		return;
	}
	if (log_sinks & LOG_SINK_SYSLOG)
		syslog(prio, "%s", msg);
	if (log_sinks & LOG_SINK_STDERR)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
}

void log_vmsg(int prio, const char *fmt, va_list ap)
{
	vlog(prio, fmt, ap);
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void log_peer(int prio, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec != rl_second) {
		if (rl_suppressed)
			log_msg(LOG_WARNING, "%lu messages caused by peers suppressed",
				rl_suppressed);
		rl_second = ts.tv_sec;
		rl_count = 0;
		rl_suppressed = 0;
	}
	if (++rl_count > PEER_BURST) {
		rl_suppressed++;
		return;
	}
	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}
