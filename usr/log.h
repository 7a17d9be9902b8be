/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging for ietd and ietadm: stderr in the foreground, syslog when
 * daemonised, a rate limit for what peers can make us say.
 */
#ifndef IET_USR_LOG_H
#define IET_USR_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h>

enum log_sink {
	LOG_SINK_STDERR = 1,
	LOG_SINK_SYSLOG = 2,
};

/* sinks: a mask of enum log_sink; level: 0 quiet debug, 1 debug, 2 trace. */
void log_init(const char *ident, unsigned int sinks, int level);
void log_set_sinks(unsigned int sinks);
int log_level(void);

/* Tests capture messages instead of printing them. */
typedef void (*log_hook_fn)(int prio, const char *msg);
void log_set_hook(log_hook_fn fn);

/*
 * Every message is one line of printable ASCII: a control character, a
 * byte beyond ASCII or a backslash in it (a name a peer sent, a path)
 * is written as \xNN, so no peer can add a line of its own to the log.
 */
void log_msg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(int prio, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/*
 * Like log_msg, but at most a burst per second: for events no one peer
 * is the source of (descriptors running out); peerlog.h for those of one.
 */
void log_peer(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_dbg(lvl, ...) do {					\
		if (log_level() >= (lvl))			\
			log_msg(LOG_DEBUG, __VA_ARGS__);	\
	} while (0)

#endif
