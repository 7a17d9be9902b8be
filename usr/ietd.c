// SPDX-License-Identifier: GPL-2.0
/* ietd: options, start-up order, signals and the main loop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "acl.h"
#include "acl_cache.h"
#include "config.h"
#include "conn.h"
#include "ctl.h"
#include "daemon.h"
#include "fdlimit.h"
#include "isns.h"
#include "kernel.h"
#include "log.h"
#include "peerlog.h"
#include "loop.h"
#include "metrics_file.h"
#include "notify.h"
#include "portal.h"
#include "prdir.h"
#include "registry.h"
#include "runtime.h"
#include "tpg_retire.h"
#include "uevent.h"
#include "version.h"

struct ietd {
	struct loop loop;
	struct runtime rt;
	struct registry reg;
	struct server srv;
	struct portals portals;
	struct isns isns;
	struct metrics_file metrics;
	struct ctl ctl;
	struct watch sig;
	struct watch kev;
	struct watch uev;		/* block devices that changed */
};

struct options {
	const char *config;
	bool foreground;
	int debug;
	const char *uid, *gid;
	const char *address;
	uint16_t port;
	const char *pidfile;
	const char *socket;
	const char *state;
	const char *access_dir;
	bool check;
};

enum {
	OPT_PIDFILE = 256, OPT_SOCKET, OPT_STATE, OPT_ACCESS_DIR, OPT_CHECK,
	OPT_VERSION
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "debug", required_argument, NULL, 'd' },
	{ "uid", required_argument, NULL, 'u' },
	{ "gid", required_argument, NULL, 'g' },
	{ "address", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "access-dir", required_argument, NULL, OPT_ACCESS_DIR },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ietd [OPTION]...\n"
"iSCSI target daemon: logins, discovery and configuration for iscsi_trgt.\n"
"\n"
"  -c, --config=FILE     configuration (default %s,\n"
"                        else %s)\n"
"  -f, --foreground      stay in the foreground, log to stderr\n"
"  -d, --debug=LEVEL     debug messages: 1 debug, 2 trace\n"
"  -u, --uid=UID         run as this user (keeping CAP_NET_ADMIN)\n"
"  -g, --gid=GID         run as this group\n"
"  -a, --address=ADDR    listen on ADDR only (default: all IPv4 and IPv6)\n"
"  -p, --port=PORT       listen on PORT (default %d)\n"
"      --pidfile=FILE    write the process id to FILE\n"
"      --socket=PATH     ietadm socket (default %s)\n"
"      --state=FILE      state kept across restarts (default: %s\n"
"                        next to the socket)\n"
"      --access-dir=DIR  read initiators.allow, initiators.deny and\n"
"                        targets.allow from DIR (default /etc/iet, else /etc)\n"
"      --check           check the configuration and access files, exit\n"
"      --version         print the version and exit\n"
"  -h, --help            print this help and exit\n",
		CONFIG_PATH, CONFIG_PATH_OLD, ISCSI_PORT, CTL_SOCKET_PATH,
		STATE_NAME);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = ISCSI_PORT;
	o->socket = CTL_SOCKET_PATH;
	while ((c = getopt_long(argc, argv, "c:fd:u:g:a:p:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'd':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0 || v > 9) {
				fprintf(stderr, "ietd: --debug: \"%s\" is not a level 0..9\n",
					optarg);
				return -1;
			}
			o->debug = v;
			break;
		case 'u':
			o->uid = optarg;
			break;
		case 'g':
			o->gid = optarg;
			break;
		case 'a':
			o->address = optarg;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 65535) {
				fprintf(stderr, "ietd: --port: \"%s\" is not a port 1..65535\n",
					optarg);
				return -1;
			}
			o->port = v;
			break;
		case OPT_PIDFILE:
			o->pidfile = optarg;
			break;
		case OPT_SOCKET:
			o->socket = optarg;
			break;
		case OPT_STATE:
			o->state = optarg;
			break;
		case OPT_ACCESS_DIR:
			if (strchr(optarg, ':')) {
				fprintf(stderr, "ietd: --access-dir: \"%s\" has a ':'\n",
					optarg);
				return -1;
			}
			o->access_dir = optarg;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_VERSION:
			printf("ietd %s\n", IET_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ietd: unexpected argument \"%s\"\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

static void on_signal(struct watch *w, uint32_t events)
{
	struct ietd *d = container_of(w, struct ietd, sig);
	struct signalfd_siginfo si;

	(void)events;
	if (read(w->fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		struct textbuf out;
		char err[1024];
		int ret;

		notify("RELOADING=1");
		log_info("SIGHUP: reloading %s", d->rt.config_path);
		/* The access files too, changed or not (acl_cache.h). */
		access_cache_flush();
		textbuf_init(&out, 1u << 20);
		ret = runtime_reload(&d->rt, false, &out, err, sizeof(err));
		textbuf_free(&out);
		if (ret)
			log_err("reload refused, nothing changed: %s", err);
		isns_reload(&d->isns, now_ms());
		notify("READY=1");
		return;
	}
	notify("STOPPING=1");
	log_info("signal %u: stopping; targets and sessions stay in the kernel",
		 si.ssi_signo);
	loop_stop(&d->loop);
}

static void on_kevent(const struct kevent *ev, void *arg)
{
	struct ietd *d = arg;

	log_dbg(1, "kernel: %s closed, tid %u sid %llu cid %u",
		ev->type == KEVENT_SESSION_CLOSED ? "session" : "connection",
		ev->tid, (unsigned long long)ev->sid, ev->cid);
	registry_event(&d->reg, ev);
}

static void on_kernel(struct watch *w, uint32_t events)
{
	struct ietd *d = container_of(w, struct ietd, kev);
	int ret;

	(void)events;
	ret = kernel_events(on_kevent, d);
	if (ret == -ENOBUFS) {
		struct kstate st;

		/* Events were lost: read the sessions back instead. */
		log_warn("kernel events lost; re-reading the kernel's sessions");
		ret = kernel_dump(&st);
		if (!ret) {
			ret = registry_learn(&d->reg, &st);
			kstate_free(&st);
		}
	}
	/* A session that closed may be one a waiting ietadm asked to go. */
	ctl_poll(&d->ctl, now_ms());
	tpg_retire_poll(now_ms());
	if (ret < 0)
		log_peer(LOG_ERR, "reading kernel events: %s%s%s",
			 strerror(-ret), *kernel_errmsg() ? ": " : "",
			 kernel_errmsg());
}

static void on_uevent(struct watch *w, uint32_t events)
{
	struct ietd *d = container_of(w, struct ietd, uev);
	int ret;

	(void)events;
	ret = uevent_read(w->fd, &d->rt.cfg);
	if (ret)
		log_warn("reading the kernel's device events: %s",
			 strerror(-ret));
}

static void on_tick(void *arg, uint64_t now)
{
	struct ietd *d = arg;

	server_tick(&d->srv, now);
	peer_log_tick();
	portals_tick(&d->portals);
	ctl_tick(&d->ctl, now);
	tpg_retire_poll(now);
	isns_tick(&d->isns, now);
	metrics_file_tick(&d->metrics, &d->rt.cfg, now);
}

static int watch_signals(struct ietd *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	d->sig.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sig.fd < 0)
		return -errno;
	d->sig.fn = on_signal;
	return loop_add(&d->loop, &d->sig, EPOLLIN);
}

/*
 * The state file's default: next to the socket, in its root-only
 * directory. An ietd that will run as another user replaces the file in a
 * directory of that user's inside it ("state/"), which that user's other
 * processes cannot reach: the socket's directory is root's alone. old gets
 * where an ietd -u kept the file before it had that directory, or "".
 */
static int state_path(const struct options *o, uid_t uid, gid_t gid,
		      char *buf, size_t len, char *old, size_t oldlen,
		      char *err, size_t errlen)
{
	const char *slash = strrchr(o->socket, '/');
	int dlen = slash ? (int)(slash - o->socket) : 1;
	const char *dir = slash ? o->socket : ".";
	char sub[256];
	int ret;

	old[0] = '\0';
	if (o->state) {
		snprintf(buf, len, "%s", o->state);
		return 0;
	}
	if (!o->uid) {
		snprintf(buf, len, "%.*s/%s", dlen, dir, STATE_NAME);
		return 0;
	}
	snprintf(sub, sizeof(sub), "%.*s/state", dlen, dir);
	ret = state_prepare_dir(sub, uid, gid, err, errlen);
	if (!ret && (size_t)snprintf(buf, len, "%s/" STATE_NAME, sub) >= len) {
		snprintf(err, errlen, "%s: path too long", sub);
		ret = -ENAMETOOLONG;
	}
	if (!ret)
		snprintf(old, oldlen, "%.*s/%s", dlen, dir, STATE_NAME);
	return ret;
}

/* Open the state file, and say where an older ietd may have left it. */
static int open_state(struct state *s, const struct options *o, uid_t uid,
		      gid_t gid, char *err, size_t errlen)
{
	char path[256], old[256];
	int ret;

	ret = state_path(o, uid, gid, path, sizeof(path), old, sizeof(old),
			 err, errlen);
	if (!ret)
		ret = state_open(s, path, err, errlen);
	if (!ret && old[0])
		ret = state_migrate_from(s, old, err, errlen);
	return ret;
}

/*
 * Descriptors besides the connections: listeners and their spares,
 * netlink, epoll, signals, the state directory, stdio, syslog, the access
 * files a login reads, with room to spare.
 */
#define FD_RESERVE	64

/*
 * Enough descriptors for every connection the limits allow and every
 * ietadm client, or the limits lowered to fit: a daemon out of
 * descriptors could not read its access files and would refuse everyone.
 */
static int fit_descriptors(struct server *srv)
{
	unsigned long need = srv->max_conns + CTL_CLIENTS_MAX + FD_RESERVE;
	unsigned long have, room;
	char err[256];
	int ret;

	ret = nofile_raise(need, &have, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return ret;
	}
	if (have >= need)
		return 0;
	room = have - (have < CTL_CLIENTS_MAX + FD_RESERVE ? have :
		       CTL_CLIENTS_MAX + FD_RESERVE);
	if (room < 16) {
		log_err("RLIMIT_NOFILE is %lu (hard limit): ietd needs at least %u descriptors",
			have, CTL_CLIENTS_MAX + FD_RESERVE + 16);
		return -EMFILE;
	}
	log_warn("RLIMIT_NOFILE is %lu (hard limit): at most %lu connections in login or discovery instead of %u",
		 have, room, srv->max_conns);
	srv->max_conns = room;
	if (srv->max_conns_per_addr > room)
		srv->max_conns_per_addr = room;
	return 0;
}

/*
 * Where the kernel keeps reservations through power loss: made while ietd
 * is root. Without it only an initiator asking for APTPL is refused, so
 * ietd carries on.
 */
static void make_pr_dir(void)
{
	char dir[4096], err[512];
	int ret;

	ret = prdir_read(PRDIR_PARAM, dir, sizeof(dir));
	if (ret) {
		log_warn("%s: %s: persistent reservations asking for APTPL will be refused",
			 PRDIR_PARAM, strerror(-ret));
		return;
	}
	if (prdir_make(dir, err, sizeof(err)))
		log_warn("%s: persistent reservations asking for APTPL will be refused",
			 err);
}

/* Everything between reading the configuration and serving. */
static int start(struct ietd *d, struct config *next,
		 const struct options *o, uid_t uid, gid_t gid)
{
	struct kstate st;
	char err[1024];
	int ret;

	ret = kernel_open();
	if (ret) {
		log_err("cannot reach the iscsi_trgt kernel module: %s: %s",
			strerror(-ret), *kernel_errmsg() ? kernel_errmsg() :
			"is it loaded (modprobe iscsi_trgt)?");
		return ret;
	}
	memset(&st, 0, sizeof(st));
	ret = kernel_dump(&st);
	if (ret) {
		log_err("reading the kernel's state: %s%s%s", strerror(-ret),
			*kernel_errmsg() ? ": " : "", kernel_errmsg());
		return ret;
	}
	/*
	 * The socket's directory first: the state file lives in it, opened
	 * now because dropping privileges would leave it out of reach.
	 */
	ret = ctl_prepare_dir(o->socket, err, sizeof(err));
	if (!ret)
		ret = open_state(&d->rt.state, o, uid, gid, err, sizeof(err));
	if (ret) {
		log_err("state file: %s", err);
		kstate_free(&st);
		return ret;
	}
	make_pr_dir();
	ret = runtime_start(&d->rt, next, &st, err, sizeof(err));
	if (!ret)
		ret = registry_learn(&d->reg, &st);
	kstate_free(&st);
	if (ret) {
		log_err("%s", ret == -ENOMEM ? "out of memory" : err);
		return ret;
	}
	if (d->reg.nr)
		log_info("%zu sessions already in the kernel", d->reg.nr);

	ret = loop_init(&d->loop);
	if (ret) {
		log_err("epoll: %s", strerror(-ret));
		return ret;
	}
	server_init(&d->srv, &d->loop, &d->rt.cfg, &d->reg);
	ret = fit_descriptors(&d->srv);
	if (ret)
		return ret;
	d->srv.access_dirs = d->rt.access_dirs;
	d->srv.statsn_seed = (uint32_t)time(NULL) * 2654435761u;
	if (d->rt.cfg.nr_groups)
		ret = portals_open_groups(&d->portals, &d->loop, &d->rt.cfg,
					  server_accept, &d->srv, err,
					  sizeof(err));
	else
		ret = portals_open(&d->portals, &d->loop, o->address, o->port,
				   server_accept, &d->srv, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return ret;
	}
	ret = isns_init(&d->isns, &d->loop, &d->rt.cfg, &d->portals, o->port);
	if (ret) {
		log_err("iSNS: %s", strerror(-ret));
		return ret;
	}
	ret = ctl_open(&d->ctl, &d->loop, &d->rt, o->socket, err,
		       sizeof(err));
	if (ret) {
		log_err("ietadm socket: %s", err);
		return ret;
	}
	d->kev.fd = kernel_event_fd();
	d->kev.fn = on_kernel;
	ret = d->kev.fd < 0 ? d->kev.fd : loop_add(&d->loop, &d->kev, EPOLLIN);
	if (ret) {
		log_err("watching kernel events: %s", strerror(-ret));
		return ret;
	}
	/* LUNs follow their devices' sizes; without it only ietadm resizes. */
	d->uev.fd = uevent_open();
	d->uev.fn = on_uevent;
	ret = d->uev.fd < 0 ? d->uev.fd : loop_add(&d->loop, &d->uev, EPOLLIN);
	if (ret && d->uev.fd >= 0) {
		close(d->uev.fd);
		d->uev.fd = -1;
	}
	if (ret)
		log_warn("watching device events (LUNs will not follow their devices' sizes): %s",
			 strerror(-ret));
	ret = watch_signals(d);
	if (ret) {
		log_err("signals: %s", strerror(-ret));
		return ret;
	}
	loop_set_tick(&d->loop, 1000, on_tick, d);
	if (o->pidfile) {
		ret = pidfile_write(o->pidfile, err, sizeof(err));
		if (ret) {
			log_err("pid file: %s", err);
			return ret;
		}
	}
	ret = drop_privileges(o->uid != NULL, uid, o->uid || o->gid, gid, err,
			      sizeof(err));
	if (!ret && !o->uid && !o->gid) {
		uint64_t kept;

		ret = keep_runtime_caps(&kept, err, sizeof(err));
		if (!ret)
			log_dbg(1, "capabilities kept: 0x%llx",
				(unsigned long long)kept);
	}
	if (ret) {
		log_err("%s", err);
		return ret;
	}
	/* Better now than at the first change ietadm makes. */
	ret = o->uid || o->gid ?
	      state_check(&d->rt.state, err, sizeof(err)) : 0;
	if (ret) {
		log_err("state file %s: ietd replaces it with a new file after each change, and as uid %u gid %u it cannot: %s (give --state a file in a directory this user may write)",
			d->rt.state.path, (unsigned int)uid,
			(unsigned int)gid, err);
		return ret;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct ietd d;
	struct config next;
	struct options o;
	const char *path;
	char err[1024];
	uid_t uid = 0;
	gid_t gid = 0;
	int ready = -1, ret;

	if (parse_options(argc, argv, &o))
		return 2;
	log_init("ietd", LOG_SINK_STDERR, o.debug);
	signal(SIGPIPE, SIG_IGN);

	path = o.config ? o.config : config_default_path();
	if (config_load(path, &next, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (next.nr_groups && o.address) {
		fprintf(stderr, "%s: PortalGroup lines say where to listen: -a is for a file without them\n",
			path);
		config_free(&next);
		return 1;
	}
	config_resolve_ports(&next, o.port);
	d.rt.port = o.port;
	if (o.check) {
		struct access a;
		const char *dirs = o.access_dir ? o.access_dir : ACCESS_DIRS;

		/* One typo there refuses every login: say so now. */
		if (access_load(&a, dirs, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			config_free(&next);
			return 1;
		}
		printf("%s: %zu target%s, configuration OK\n", path,
		       next.nr_targets, next.nr_targets == 1 ? "" : "s");
		printf("access files (%s): %s%s%s%s%s%s\n", dirs,
		       a.allow.exists ? a.allow.path : "",
		       a.allow.exists && (a.deny.exists || a.targets.exists) ? ", " : "",
		       a.deny.exists ? a.deny.path : "",
		       a.deny.exists && a.targets.exists ? ", " : "",
		       a.targets.exists ? a.targets.path : "",
		       a.allow.exists || a.deny.exists || a.targets.exists ?
		       " OK" : "none");
		access_free(&a);
		config_free(&next);
		return 0;
	}
	/* Reloads read it again after the daemon has gone to "/". */
	d.rt.config_path = realpath(path, NULL);
	if (!d.rt.config_path)
		d.rt.config_path = path;
	d.rt.access_dirs = o.access_dir ? o.access_dir : ACCESS_DIRS;
	d.rt.reg = &d.reg;
	d.rt.state.dirfd = -1;
	if (o.uid && lookup_uid(o.uid, &uid, &gid)) {
		fprintf(stderr, "ietd: --uid: no user \"%s\"\n", o.uid);
		return 1;
	}
	if (o.gid && lookup_gid(o.gid, &gid)) {
		fprintf(stderr, "ietd: --gid: no group \"%s\"\n", o.gid);
		return 1;
	}
	registry_init(&d.reg);
	d.loop.epfd = -1;
	d.ctl.w.fd = -1;
	if (!o.foreground) {
		ready = daemon_start();
		if (ready < 0) {
			fprintf(stderr, "ietd: fork: %s\n", strerror(errno));
			return 1;
		}
		/* Start-up errors still reach the terminal that started us. */
		log_set_sinks(LOG_SINK_STDERR | LOG_SINK_SYSLOG);
	}

	ret = start(&d, &next, &o, uid, gid);
	if (ret) {
		config_free(&next);
		daemon_ready(ready, 1);
		return 1;
	}
	log_info("ietd %s serving %zu targets on port %u", IET_VERSION,
		 d.rt.cfg.nr_targets, o.port);
	notify("READY=1");
	if (!o.foreground) {
		daemon_ready(ready, 0);
		log_set_sinks(LOG_SINK_SYSLOG);
	}

	ret = loop_run(&d.loop);
	if (ret)
		log_err("event loop: %s", strerror(-ret));

	/* Stop listening; what the kernel holds outlives us. */
	metrics_file_stop(&d.metrics);
	isns_stop(&d.isns);
	portals_close(&d.portals);
	ctl_close(&d.ctl);
	server_close_all(&d.srv);
	kernel_close();
	if (o.pidfile)
		unlink(o.pidfile);
	registry_free(&d.reg);
	tpg_retire_free_all();
	state_close(&d.rt.state);
	config_free(&d.rt.cfg);
	if (d.rt.config_path != path)
		free((char *)d.rt.config_path);
	loop_close(&d.loop);
	return ret ? 1 : 0;
}
