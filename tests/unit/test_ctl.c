// SPDX-License-Identifier: GPL-2.0
/* The ietadm protocol and ietd's operations, on the fake kernel. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "helpers.h"
#include "kernel_fake.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n MaxSessions 3\n Wthreads 4\n" \
		" HeaderDigest None,CRC32C\n Lun 0 Type=nullio\n"

static char err[512];

TEST(ctl_request_round_trips)
{
	struct ctl_req r = { .op = "show", .tid = 1, .sid = 1ull << 40,
			     .fields = CTL_F_TID | CTL_F_SID | CTL_F_PARAMS };
	struct ctl_req d;
	char buf[1024];
	int n;

	strcpy(r.params, "Name=iqn.x,Alias=a b");
	n = ctl_req_format(&r, buf, sizeof(buf));
	REQUIRE(n > 0);
	CHECK(!strncmp(buf, "IETCTL 2\nop=show\n", 17));
	CHECK(ctl_req_complete(buf, n));
	CHECK(!ctl_req_complete(buf, n - 1));
	REQUIRE(ctl_req_parse(buf, n, &d, err, sizeof(err)) == 0);
	CHECK_STR(d.op, "show");
	CHECK_EQ(d.fields, r.fields);
	CHECK_EQ(d.tid, 1);
	CHECK_EQ(d.sid, 1ull << 40);
	CHECK_STR(d.params, "Name=iqn.x,Alias=a b");
}

TEST(ctl_request_of_another_version_is_refused)
{
	static const char req[] = "IETCTL 4\nop=show\n\n";
	struct ctl_req d;

	CHECK_EQ(ctl_req_parse(req, strlen(req), &d, err, sizeof(err)),
		 -EPROTO);
	CHECK_CONTAINS(err, "version 4");
}

TEST(ctl_request_of_version_1_is_served_without_version_2_fields)
{
	static const char v1[] = "IETCTL 1\nop=show\ntid=1\n\n";
	static const char v1json[] = "IETCTL 1\nop=show\njson=1\n\n";
	static const char v2[] = "IETCTL 2\nop=show\ntarget=iqn.x:y\njson=1\n"
				 "dryrun=1\n\n";
	struct ctl_req d;

	REQUIRE(ctl_req_parse(v1, strlen(v1), &d, err, sizeof(err)) == 0);
	CHECK_EQ(d.version, 1);
	CHECK_EQ(ctl_req_parse(v1json, strlen(v1json), &d, err, sizeof(err)),
		 -EINVAL);
	REQUIRE(ctl_req_parse(v2, strlen(v2), &d, err, sizeof(err)) == 0);
	CHECK_EQ(d.version, 2);
	CHECK_EQ(d.fields, CTL_F_TARGET | CTL_F_JSON | CTL_F_DRYRUN);
	CHECK_STR(d.target, "iqn.x:y");
}

/* An ietd of version 2 still serves what does not need 3. */
TEST(ctl_request_says_the_lowest_version_its_fields_need)
{
	struct ctl_req r = { .op = "show", .fields = CTL_F_JSON };
	static const char v2stats[] = "IETCTL 2\nop=show\nstats=1\n\n";
	struct ctl_req d;
	char buf[256];
	int n;

	n = ctl_req_format(&r, buf, sizeof(buf));
	REQUIRE(n > 0);
	CHECK(!strncmp(buf, "IETCTL 2\n", 9));
	r.fields = CTL_F_STATS | CTL_F_JSON;
	n = ctl_req_format(&r, buf, sizeof(buf));
	REQUIRE(n > 0);
	CHECK(!strncmp(buf, "IETCTL 3\n", 9));
	REQUIRE(ctl_req_parse(buf, n, &d, err, sizeof(err)) == 0);
	CHECK_EQ(d.fields, CTL_F_STATS | CTL_F_JSON);
	r.fields = CTL_F_PROMETHEUS;
	n = ctl_req_format(&r, buf, sizeof(buf));
	REQUIRE(n > 0);
	REQUIRE(ctl_req_parse(buf, n, &d, err, sizeof(err)) == 0);
	CHECK_EQ(d.fields, CTL_F_PROMETHEUS);
	CHECK_EQ(ctl_req_parse(v2stats, strlen(v2stats), &d, err, sizeof(err)),
		 -EINVAL);
	CHECK_CONTAINS(err, "unknown field");
}

TEST(ctl_response_carries_the_request_version)
{
	char buf[64];
	const char *body;
	int status;

	ctl_rsp_header(1, 0, buf, sizeof(buf));
	CHECK_STR(buf, "IETCTL 1 0\n");
	REQUIRE(ctl_rsp_parse("IETCTL 2 16\nbusy\n", &status, &body) == 0);
	CHECK_EQ(status, 16);
	CHECK(ctl_rsp_parse("IETCTL 9 0\n", &status, &body) != 0);
}

TEST(ctl_request_with_unknown_or_repeated_field_is_refused)
{
	static const char a[] = "IETCTL 1\nop=show\njson=1\n\n";
	static const char b[] = "IETCTL 1\nop=show\ntid=1\ntid=2\n\n";
	static const char c[] = "IETCTL 1\ntid=1\n\n";
	static const char d[] = "IETCTL 1\nop=show\ntid=x\n\n";
	struct ctl_req r;

	CHECK_EQ(ctl_req_parse(a, strlen(a), &r, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "unknown field");
	CHECK_EQ(ctl_req_parse(b, strlen(b), &r, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "twice");
	CHECK_EQ(ctl_req_parse(c, strlen(c), &r, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "without op");
	CHECK_EQ(ctl_req_parse(d, strlen(d), &r, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "not a number");
}

TEST(ctl_request_values_with_newlines_cannot_be_formatted)
{
	struct ctl_req r = { .op = "new", .fields = CTL_F_PARAMS };
	char buf[256];

	strcpy(r.params, "a\nb");
	CHECK(ctl_req_format(&r, buf, sizeof(buf)) < 0);
}

TEST(ctl_response_status_and_body_are_split)
{
	const char *body;
	int status;

	REQUIRE(ctl_rsp_parse("IETCTL 1 2\nno target\n", &status, &body) == 0);
	CHECK_EQ(status, 2);
	CHECK_STR(body, "no target\n");
	CHECK(ctl_rsp_parse("HTTP/1.0 200\n", &status, &body) != 0);
}

struct cfx {
	struct fixture fx;
	struct textbuf out;
};

static void cf_init(struct cfx *f)
{
	fx_init(&f->fx, CONF);
	textbuf_init(&f->out, 65536);
}

static void cf_free(struct cfx *f)
{
	textbuf_free(&f->out);
	fx_free(&f->fx);
}

static int run(struct cfx *f, const char *op, uint32_t fields, uint32_t tid,
	       uint64_t sid)
{
	struct ctl_req r = { .fields = fields, .tid = tid, .sid = sid };
	int ret;

	strcpy(r.op, op);
	textbuf_reset(&f->out);
	ret = ctl_handle(&f->fx.rt, &r, &f->out, err, sizeof(err));
	textbuf_append(&f->out, "", 1);
	return ret;
}

TEST(ctl_show_target_prints_its_parameters)
{
	struct cfx f;

	cf_init(&f);
	REQUIRE(run(&f, "show", CTL_F_TID, 1, 0) == 0);
	CHECK_STR(f.out.buf, "Wthreads=4\nQueuedCommands=128\nNOPInterval=10\n"
		  "NOPTimeout=15\nAllowTargetReset=No\nMaxSessions=3\n"
		  "PortalGroup=1,State=active/optimized,Sessions=0\n");
	cf_free(&f);
}

TEST(ctl_show_sid_zero_prints_the_session_defaults)
{
	struct cfx f;

	cf_init(&f);
	REQUIRE(run(&f, "show", CTL_F_TID | CTL_F_SID, 1, 0) == 0);
	CHECK_CONTAINS(f.out.buf, "InitialR2T=Yes\n");
	CHECK_CONTAINS(f.out.buf, "MaxRecvDataSegmentLength=8192\n");
	CHECK_CONTAINS(f.out.buf, "MaxXmitDataSegmentLength=8192\n");
	CHECK_CONTAINS(f.out.buf, "HeaderDigest=None,CRC32C\n");
	CHECK_CONTAINS(f.out.buf, "DataDigest=None\n");
	CHECK_CONTAINS(f.out.buf, "DefaultTime2Retain=0\n");
	cf_free(&f);
}

TEST(ctl_show_session_prints_negotiated_keys_with_rfc_names)
{
	struct cfx f;
	uint32_t keys[IET_KEY_COUNT] = { 0 };
	uint64_t sid = make_sid(0x123, 9);
	char *line;
	size_t n = 0;

	cf_init(&f);
	keys[IET_KEY_INITIAL_R2T] = 0;
	keys[IET_KEY_IMMEDIATE_DATA] = 1;
	keys[IET_KEY_MAX_RECV_DSL] = 65536;
	keys[IET_KEY_MAX_XMIT_DSL] = 262144;
	keys[IET_KEY_HEADER_DIGEST] = IET_DIGEST_CRC32C;
	REQUIRE(fake_add_session(1, sid, INITIATOR, keys, NULL, 0) == 0);
	REQUIRE(run(&f, "show", CTL_F_TID | CTL_F_SID, 1, sid) == 0);
	CHECK_CONTAINS(f.out.buf, "InitialR2T=No\nImmediateData=Yes\n");
	CHECK_CONTAINS(f.out.buf, "MaxRecvDataSegmentLength=65536\n");
	CHECK_CONTAINS(f.out.buf, "MaxXmitDataSegmentLength=262144\n");
	CHECK_CONTAINS(f.out.buf, "HeaderDigest=CRC32C\n");
	CHECK_CONTAINS(f.out.buf, "DataDigest=None\n");
	for (line = f.out.buf; (line = strchr(line, '\n')); line++)
		n++;
	/* The keys, the session's counters, its portal group. */
	CHECK_EQ(n, IET_KEY_MAX + 5);
	CHECK_CONTAINS(f.out.buf, "Commands=0\nReadBytes=0\nWrittenBytes=0\n"
		       "Errors=0\nPortalGroup=1\n");
	cf_free(&f);
}

TEST(ctl_show_of_missing_target_or_session_says_so)
{
	struct cfx f;

	cf_init(&f);
	CHECK_EQ(run(&f, "show", CTL_F_TID, 9, 0), -ENOENT);
	CHECK_STR(err, "no target with tid 9");
	CHECK_EQ(run(&f, "show", CTL_F_TID | CTL_F_SID, 1, 5), -ENOENT);
	CHECK_STR(err, "no session 5 in target 1");
	CHECK_EQ(run(&f, "show", CTL_F_SID, 0, 5), -EINVAL);
	CHECK_CONTAINS(err, "needs --tid");
	cf_free(&f);
}

TEST(ctl_unknown_operation_is_refused_with_the_list)
{
	struct cfx f;

	cf_init(&f);
	CHECK_EQ(run(&f, "frob", 0, 0, 0), -EINVAL);
	CHECK_CONTAINS(err, "unknown op \"frob\"");
	CHECK_CONTAINS(err, "reload, save");
	CHECK_EQ(fake_count(F_TARGET_DEL), 0);
	cf_free(&f);
}

TEST(ctl_kernel_failure_is_reported_with_its_message)
{
	struct cfx f;

	cf_init(&f);
	fake_fail(F_DUMP, -EIO, "dump broke");
	CHECK_EQ(run(&f, "show", CTL_F_TID, 1, 0), -EIO);
	CHECK_CONTAINS(err, "dump broke");
	cf_free(&f);
}

static bool got_reply(void *arg)
{
	int *fd = arg;
	char c;

	return recv(*fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

TEST(ctl_socket_serves_a_request_and_closes)
{
	struct cfx f;
	struct ctl ctl;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64], buf[4096];
	static const char req[] = "IETCTL 1\nop=show\ntid=1\n\n";
	struct stat st;
	size_t have = 0;
	int fd, i;

	cf_init(&f);
	REQUIRE(mkdtemp(path) != NULL);
	snprintf(sock, sizeof(sock), "%s/run/ietd.sock", path);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err, sizeof(err)) == 0);
	REQUIRE(stat(sock, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	/* A second ietd finds the first one and refuses. */
	{
		struct ctl other;

		CHECK(ctl_open(&other, &f.fx.loop, &f.fx.rt, sock, err,
			       sizeof(err)) != 0);
		CHECK_CONTAINS(err, "another ietd");
	}
	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	REQUIRE(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	REQUIRE(fx_run_until(&f.fx, got_reply, &fd));
	for (i = 0; i < 100; i++) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have,
				 MSG_DONTWAIT);

		if (n == 0)
			break;
		if (n > 0)
			have += n;
		else
			loop_run_once(&f.fx.loop, 5);
	}
	buf[have] = '\0';
	CHECK(!strncmp(buf, "IETCTL 1 0\nWthreads=4\n", 22));
	close(fd);
	ctl_close(&ctl);
	CHECK(stat(sock, &st) != 0);
	snprintf(sock, sizeof(sock), "%s/run", path);
	rmdir(sock);
	rmdir(path);
	cf_free(&f);
}

/* Send a request on the socket and read the whole answer into buf. */
static size_t ask(struct cfx *f, const char *sock, const char *req, char *buf,
		  size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t have = 0;
	int fd, i;

	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    send(fd, req, strlen(req), 0) != (ssize_t)strlen(req))
		abort();
	fx_run_until(&f->fx, got_reply, &fd);
	for (i = 0; i < 200 && have < len - 1; i++) {
		ssize_t n = recv(fd, buf + have, len - 1 - have, MSG_DONTWAIT);

		if (n == 0)
			break;
		if (n > 0)
			have += n;
		else
			loop_run_once(&f->fx.loop, 5);
	}
	buf[have] = '\0';
	close(fd);
	return have;
}

/*
 * A reload of a configuration file that cannot be opened fails with
 * "PATH: cannot open: ...": the path sets the error line's length.
 */
static void reload_error_of_length(size_t want)
{
	static const char req[] = "IETCTL 2\nop=reload\n\n";
	char dir[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64], path[1024];
	char expect[1024], rsp[2048];
	struct config cfg;
	struct cfx f;
	struct ctl ctl;
	size_t extra, n;

	cf_init(&f);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sock, sizeof(sock), "%s/ietd.sock", dir);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err, sizeof(err)) == 0);
	/* What the message adds to the path, from a short one. */
	REQUIRE(config_load("/nonexistent/x", &cfg, expect, sizeof(expect)));
	extra = strlen(expect) - strlen("/nonexistent/x");
	REQUIRE(want > extra + 20 && want - extra < sizeof(path));
	n = snprintf(path, sizeof(path), "/nonexistent/");
	while (n < want - extra) {
		/* Components short enough that open() says ENOENT. */
		path[n] = (n % 100 == 99) ? '/' : 'a';
		path[++n] = '\0';
	}
	path[n - 1] = 'z';
	f.fx.rt.config_path = path;
	REQUIRE(config_load(path, &cfg, expect, sizeof(expect)));
	REQUIRE_EQ(strlen(expect), want);
	/* ietd's error lines hold 511 characters; longer ones are cut. */
	expect[511] = '\0';
	snprintf(rsp, sizeof(rsp), "IETCTL 2 %d\n%s\n", ENOENT, expect);
	strcpy(expect, rsp);
	ask(&f, sock, req, rsp, sizeof(rsp));
	CHECK_STR(rsp, expect);
	ctl_close(&ctl);
	rmdir(dir);
	cf_free(&f);
}

TEST(ctl_error_line_of_510_characters_is_answered_whole)
{
	reload_error_of_length(510);
}

TEST(ctl_error_line_of_511_characters_is_answered_whole)
{
	reload_error_of_length(511);
}

TEST(ctl_error_line_longer_than_511_characters_is_cut_at_511)
{
	reload_error_of_length(512);
	reload_error_of_length(700);
}

/* Take every free descriptor below a lowered RLIMIT_NOFILE; how many. */
static int exhaust_descriptors(struct rlimit *saved)
{
	struct rlimit r;
	int fd, n = 0;

	getrlimit(RLIMIT_NOFILE, saved);
	fd = open("/dev/null", O_RDONLY);
	/* Room for what is open now and a few more, no more. */
	r = *saved;
	r.rlim_cur = fd + 8;
	close(fd);
	setrlimit(RLIMIT_NOFILE, &r);
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	return n;
}

TEST(ctl_out_of_descriptors_sheds_the_connection_and_does_not_spin)
{
	struct cfx f;
	struct ctl ctl;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64], c;
	struct rlimit saved;
	int fd, i, events = 0;
	ssize_t n;

	cf_init(&f);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sock, sizeof(sock), "%s/ietd.sock", dir);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err, sizeof(err)) == 0);
	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(fd >= 0);
	REQUIRE(exhaust_descriptors(&saved) > 0);
	REQUIRE(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	/* ietd cannot accept it: it must drop it, not see it forever. */
	for (i = 0; i < 20; i++)
		events += loop_run_once(&f.fx.loop, 5);
	CHECK(events <= 2);
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	CHECK(n == 0 || (n < 0 && errno == ECONNRESET));
	setrlimit(RLIMIT_NOFILE, &saved);
	close(fd);
	ctl_close(&ctl);
	rmdir(dir);
	cf_free(&f);
}

TEST(ctl_out_of_descriptors_without_a_spare_waits_for_the_tick)
{
	struct cfx f;
	struct ctl ctl;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64];
	struct rlimit saved;
	int fd, i, events = 0;

	cf_init(&f);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sock, sizeof(sock), "%s/ietd.sock", dir);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err,
			 sizeof(err)) == 0);
	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(fd >= 0);
	spare_close(&ctl.spare);
	REQUIRE(exhaust_descriptors(&saved) > 0);
	REQUIRE(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	/* No spare to shed it with: not polled until the tick. */
	for (i = 0; i < 20; i++)
		events += loop_run_once(&f.fx.loop, 5);
	CHECK(events <= 2);
	CHECK(ctl.paused);
	setrlimit(RLIMIT_NOFILE, &saved);
	ctl_tick(&ctl, now_ms());
	CHECK(!ctl.paused);
	for (i = 0; i < 20 && !ctl.nr_clients; i++)
		loop_run_once(&f.fx.loop, 5);
	CHECK_EQ(ctl.nr_clients, 1);
	close(fd);
	ctl_close(&ctl);
	rmdir(dir);
	cf_free(&f);
}

static bool answered(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

TEST(ctl_clients_beyond_the_cap_wait_their_turn_unaccepted)
{
	struct cfx f;
	struct ctl ctl;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64];
	static const char req[] = "IETCTL 2\nop=show\ntid=1\n\n";
	int fd[CTL_CLIENTS_MAX + 1], i;

	cf_init(&f);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sock, sizeof(sock), "%s/ietd.sock", dir);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err, sizeof(err)) == 0);
	strcpy(sun.sun_path, sock);
	/* As many as the cap, connected and silent. */
	for (i = 0; i <= CTL_CLIENTS_MAX; i++) {
		fd[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		REQUIRE(connect(fd[i], (struct sockaddr *)&sun,
				sizeof(sun)) == 0);
		fx_run(&f.fx, 2);
	}
	CHECK_EQ(ctl.nr_clients, CTL_CLIENTS_MAX);
	/* One more asks: it waits, unaccepted... */
	REQUIRE(send(fd[CTL_CLIENTS_MAX], req, strlen(req), 0) ==
		(ssize_t)strlen(req));
	fx_run(&f.fx, 20);
	CHECK(!answered(fd[CTL_CLIENTS_MAX]));
	/* ...until one of the others goes. */
	close(fd[0]);
	fx_run(&f.fx, 20);
	CHECK(answered(fd[CTL_CLIENTS_MAX]));
	for (i = 1; i <= CTL_CLIENTS_MAX; i++)
		close(fd[i]);
	ctl_close(&ctl);
	rmdir(dir);
	cf_free(&f);
}


/*
 * A delete that gives initiators time to log out does not hold ietd
 * meanwhile: other ietadm requests are answered at once, and logins to
 * other targets go on; logins to the target being deleted are refused.
 * Its own answer comes once its initiators are gone.
 */
TEST(ctl_a_delete_that_waits_for_logouts_holds_up_nothing_else)
{
	static const char del[] = "IETCTL 2\nop=delete\ntid=1\nparams=LogoutTimeout=30\n\n";
	static const char show[] = "IETCTL 2\nop=show\ntid=2\n\n";
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ietd-ctl-test-XXXXXX", sock[64], buf[4096];
	uint16_t cid = 0;
	struct ctl ctl;
	struct cfx f;
	uint64_t t0;
	int fd;

	fx_init(&f.fx, CONF "Target " TARGET2 "\n Lun 0 Type=nullio\n");
	textbuf_init(&f.out, 65536);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(sock, sizeof(sock), "%s/ietd.sock", dir);
	REQUIRE(ctl_open(&ctl, &f.fx.loop, &f.fx.rt, sock, err, sizeof(err)) == 0);
	REQUIRE(fake_add_session(1, make_sid(0x1234, 7), INITIATOR, NULL,
				 &cid, 1) == 0);
	fake_logout_held(true);

	strcpy(sun.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	REQUIRE(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	REQUIRE(send(fd, del, strlen(del), 0) == (ssize_t)strlen(del));
	t0 = now_ms();
	fx_run(&f.fx, 20);
	CHECK(!answered(fd));
	CHECK_EQ(fake_count(F_LOGOUT_REQ), 1);
	/* Meanwhile: ietadm, a login elsewhere, none to the target going. */
	CHECK(ask(&f, sock, show, buf, sizeof(buf)) > 0);
	CHECK(!strncmp(buf, "IETCTL 2 0\n", 11));
	CHECK_EQ(fx_login_status(&f.fx, "127.0.0.1", TARGET2), 0);
	CHECK_EQ(fx_login_status(&f.fx, "127.0.0.1", TARGET1), LS_TARGET_REMOVED);
	/* A second delete of it is refused, not queued behind the first. */
	CHECK(ask(&f, sock, del, buf, sizeof(buf)) > 0);
	CHECK_CONTAINS(buf, "is being deleted already");
	CHECK(now_ms() - t0 < 3000);
	CHECK(!answered(fd));

	/* The initiator logs out: the delete ends and is answered. */
	fake_logout_go();
	ctl_poll(&ctl, now_ms());
	fx_run(&f.fx, 5);
	REQUIRE(answered(fd));
	CHECK_EQ(recv(fd, buf, sizeof(buf) - 1, 0), 11);
	CHECK(!strncmp(buf, "IETCTL 2 0\n", 11));
	CHECK(fake_target(1) == NULL);
	CHECK(config_target_by_tid(&f.fx.rt.cfg, 1) == NULL);
	CHECK(fake_target(2) != NULL);
	close(fd);
	ctl_close(&ctl);
	rmdir(dir);
	cf_free(&f);
}
