// SPDX-License-Identifier: GPL-2.0
/*
 * What a peer can hold before login (ietd(8), LIMITS), each limit tried by
 * a peer over loopback TCP: connections per address and in all, a
 * discovery session's lifetime, a login's deadline, and descriptors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backoff.h"
#include "fdlimit.h"
#include "helpers.h"
#include "portal.h"
#include "test.h"

#define CONF	"Target " TARGET1 "\n Lun 0 Type=nullio\n"

static char err[512];

static void tick(void *arg, uint64_t now)
{
	server_tick(arg, now);
}

/* Whether ietd has closed fd's connection, without waiting for it. */
static bool closed_now(struct fixture *fx, int fd)
{
	char c;
	ssize_t n;

	fx_run(fx, 3);
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN);
}

TEST(limits_connections_from_one_address_beyond_its_cap_are_closed_at_accept)
{
	struct fixture fx;
	int fd[5], other, i;

	fx_init(&fx, CONF);
	fx.srv.max_conns_per_addr = 4;
	for (i = 0; i < 5; i++)
		fd[i] = fx_connect_from(&fx, "127.0.0.1");
	for (i = 0; i < 4; i++)
		CHECK(!closed_now(&fx, fd[i]));
	CHECK(closed_now(&fx, fd[4]));
	CHECK_EQ(fx.srv.nr_conns, 4);
	CHECK_EQ(fx.srv.refused, 1);
	/* Another address still gets in. */
	other = fx_connect_from(&fx, "127.0.0.2");
	CHECK(!closed_now(&fx, other));
	/* A place given back is there for the next one. */
	close(fd[0]);
	fx_run(&fx, 5);
	fd[0] = fx_connect_from(&fx, "127.0.0.1");
	CHECK(!closed_now(&fx, fd[0]));
	for (i = 0; i < 5; i++)
		close(fd[i]);
	close(other);
	fx_free(&fx);
}

/* The first step of a normal login, which the target answers. */
static void login_step(struct fixture *fx, int fd)
{
	struct login_req r;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	size_t dlen;

	login_req_init(&r, false, STAGE_SECURITY, 0);
	text_of(&t, "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		"AuthMethod=None", NULL);
	login_bhs(&r, &t, bhs);
	CHECK(!send_pdu(fd, bhs, t.buf, t.len));
	CHECK(!recv_pdu(fx, fd, bhs, &data, &dlen));
	free(data);
}

/*
 * When every place is held, a new connection takes the one of the peer
 * that has been idle longest: silent connections cannot keep out the
 * multipath re-logins after a path failure.
 */
TEST(limits_beyond_the_global_cap_the_idlest_connection_makes_room)
{
	struct fixture fx;
	char ip[32];
	int fd[8], i;

	fx_init(&fx, CONF);
	fx.srv.max_conns = 6;
	fx.srv.max_conns_per_addr = 2;
	for (i = 0; i < 6; i++) {
		snprintf(ip, sizeof(ip), "127.0.0.%d", 10 + i / 2);
		fd[i] = fx_connect_from(&fx, ip);
		fx_run(&fx, 2);
	}
	/* The oldest has been talking: the next oldest is the idlest. */
	login_step(&fx, fd[0]);
	fd[6] = fx_connect_from(&fx, "127.0.0.20");
	CHECK(!closed_now(&fx, fd[6]));
	CHECK(closed_now(&fx, fd[1]));
	CHECK(!closed_now(&fx, fd[0]));
	for (i = 2; i < 6; i++)
		CHECK(!closed_now(&fx, fd[i]));
	CHECK_EQ(fx.srv.nr_conns, 6);
	CHECK_EQ(fx.srv.evicted, 1);
	CHECK_EQ(fx.srv.refused, 0);
	/* And the next one takes the place of the oldest silent one. */
	fd[7] = fx_connect_from(&fx, "127.0.0.21");
	CHECK(!closed_now(&fx, fd[7]));
	CHECK(closed_now(&fx, fd[2]));
	CHECK(!closed_now(&fx, fd[0]));
	CHECK_EQ(fx.srv.nr_conns, 6);
	for (i = 0; i < 8; i++)
		close(fd[i]);
	fx_free(&fx);
}

/*
 * The place a newcomer takes is the flood's: of the source holding the
 * most, even when the one real initiator's connection is the idlest.
 */
TEST(limits_the_source_holding_most_places_sheds_first)
{
	struct fixture fx;
	int real, flood[5], fd, i;

	fx_init(&fx, CONF);
	fx.srv.max_conns = 6;
	fx.srv.max_conns_per_addr = 8;
	real = fx_connect_from(&fx, "127.0.0.40");
	fx_run(&fx, 2);
	for (i = 0; i < 5; i++) {
		flood[i] = fx_connect_from(&fx, "127.0.0.41");
		fx_run(&fx, 2);
	}
	fd = fx_connect_from(&fx, "127.0.0.42");
	CHECK(!closed_now(&fx, fd));
	CHECK(!closed_now(&fx, real));
	CHECK(closed_now(&fx, flood[0]));
	CHECK_EQ(fx.srv.evicted, 1);
	/* A peer without an address (reset before accept) is one more. */
	{
		struct sockaddr_storage none = { 0 };
		int sv[2];

		REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
		server_accept_from(&fx.srv, sv[0], &none);
		CHECK_EQ(fx.srv.nr_conns, 6);
		close(fd);
		fd = fx_connect_from(&fx, "127.0.0.43");
		CHECK(!closed_now(&fx, fd));
		CHECK_EQ(fx.srv.evicted, 3);
		close(sv[1]);
	}
	close(real);
	close(fd);
	for (i = 0; i < 5; i++)
		close(flood[i]);
	fx_free(&fx);
}

/* One host can take all the addresses of its /64: they share a limit. */
TEST(limits_an_ipv6_64_holds_at_most_its_own_limit)
{
	struct fixture fx;
	char ip[64];
	int fd[5], other, i;

	fx_init(&fx, CONF);
	fx.srv.max_conns_per_net = 4;
	for (i = 0; i < 5; i++) {
		snprintf(ip, sizeof(ip), "2001:db8:1:2::%x", 0x100 + i);
		fd[i] = fx_connect_as(&fx, ip, 40000);
	}
	for (i = 0; i < 4; i++)
		CHECK(!closed_now(&fx, fd[i]));
	CHECK(closed_now(&fx, fd[4]));
	CHECK_EQ(fx.srv.refused, 1);
	/* Another /64 still gets in, and IPv4 has no /64. */
	other = fx_connect_as(&fx, "2001:db8:1:3::1", 40000);
	CHECK(!closed_now(&fx, other));
	close(other);
	for (i = 0; i < 5; i++)
		close(fd[i]);
	fx_free(&fx);
}

TEST(limits_a_connection_that_sends_nothing_is_closed_at_the_first_pdu_deadline)
{
	struct fixture fx;
	uint64_t start;
	int silent, talking;

	fx_init(&fx, CONF);
	fx.srv.first_pdu_ms = 200;
	fx.srv.login_timeout_ms = 3000;
	loop_set_tick(&fx.loop, 10, tick, &fx.srv);
	start = now_ms();
	silent = fx_connect(&fx);
	talking = fx_connect(&fx);
	login_step(&fx, talking);
	CHECK(peer_closed(&fx, silent));
	CHECK(now_ms() - start < 1500);
	/* One that sent its Login Request in time has the whole login. */
	CHECK(!closed_now(&fx, talking));
	CHECK_EQ(fx.srv.nr_conns, 1);
	close(silent);
	close(talking);
	fx_free(&fx);
}

TEST(limits_ipv6_addresses_of_one_64_count_apart_and_mapped_ipv4_as_ipv4)
{
	struct sockaddr_storage a, b;

	a = sockaddr_of("2001:db8:1:2::10", 0);
	b = sockaddr_of("2001:db8:1:2:ffff::1", 0);
	CHECK(!peer_same_addr(&a, &b));
	b = sockaddr_of("2001:db8:1:2::10", 0);
	CHECK(peer_same_addr(&a, &b));
	/* An IPv4-mapped address is its IPv4 address. */
	a = sockaddr_of("::ffff:192.0.2.7", 0);
	b = sockaddr_of("192.0.2.7", 0);
	CHECK(peer_same_addr(&a, &b));
	a = sockaddr_of("192.0.2.8", 0);
	CHECK(!peer_same_addr(&a, &b));
}

/*
 * A /64 is a LAN (and fe80::/64 every host's): hosts of one must not share
 * a limit, nor can one host with several addresses shut out the others.
 */
TEST(limits_addresses_of_one_ipv6_64_each_have_their_own_limit)
{
	static const char *const lan[] = {
		"fe80::1", "fe80::2", "fe80::3", "fe80::4", "fe80::5",
	};
	enum { HOSTS = sizeof(lan) / sizeof(lan[0]) };
	struct fixture fx;
	int fd[HOSTS][MAX_CONNS_PER_ADDR], more, h, i;
	bool all_open = true;

	fx_init(&fx, CONF);
	for (h = 0; h < HOSTS; h++)
		for (i = 0; i < MAX_CONNS_PER_ADDR; i++)
			fd[h][i] = fx_connect_as(&fx, lan[h], 40000 + i);
	fx_run(&fx, 3);
	for (h = 0; h < HOSTS; h++)
		for (i = 0; i < MAX_CONNS_PER_ADDR; i++)
			all_open = all_open && !closed_now(&fx, fd[h][i]);
	CHECK(all_open);
	CHECK_EQ(fx.srv.nr_conns, HOSTS * MAX_CONNS_PER_ADDR);
	CHECK_EQ(fx.srv.refused, 0);
	/* Each address still has its own limit. */
	more = fx_connect_as(&fx, lan[0], 50000);
	CHECK(closed_now(&fx, more));
	CHECK_EQ(fx.srv.refused, 1);
	close(more);
	more = fx_connect_as(&fx, "fe80::6", 50000);
	CHECK(!closed_now(&fx, more));
	close(more);
	for (h = 0; h < HOSTS; h++)
		for (i = 0; i < MAX_CONNS_PER_ADDR; i++)
			close(fd[h][i]);
	fx_free(&fx);
}

/* A discovery session's login, answered; false if it failed. */
static bool discovery_login(struct fixture *fx, int fd)
{
	struct login_req r;
	struct login_rsp lr;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	const char *why;
	size_t dlen;
	bool ok;

	login_req_init(&r, true, STAGE_OPERATIONAL, STAGE_FFP);
	text_of(&t, "InitiatorName=" INITIATOR, "SessionType=Discovery",
		"HeaderDigest=None", "DataDigest=None", NULL);
	login_bhs(&r, &t, bhs);
	ok = !send_pdu(fd, bhs, t.buf, t.len) &&
	     !recv_pdu(fx, fd, bhs, &data, &dlen) &&
	     !login_rsp_decode(bhs, &lr, &why) && !lr.status && lr.transit;
	free(data);
	return ok;
}

/* One SendTargets request and its answer; false if none came. */
static bool send_targets(struct fixture *fx, int fd, uint32_t cmdsn)
{
	struct text_req q = { .final = true, .itt = 0x55, .ttt = RSVD_TAG,
			      .cmdsn = cmdsn };
	uint8_t bhs[BHS_LEN], *data = NULL;
	struct text t;
	size_t dlen;
	bool ok;

	text_of(&t, "SendTargets=All", NULL);
	q.dlength = t.len;
	text_req_encode(&q, bhs);
	ok = !send_pdu(fd, bhs, t.buf, t.len) &&
	     !recv_pdu(fx, fd, bhs, &data, &dlen);
	free(data);
	return ok;
}

TEST(limits_discovery_session_ends_after_its_lifetime_however_busy)
{
	struct fixture fx;
	uint64_t start;
	uint32_t cmdsn = 77;
	int fd;

	fx_init(&fx, CONF);
	fx.srv.idle_timeout_ms = 200;
	fx.srv.disc_lifetime_ms = 600;
	loop_set_tick(&fx.loop, 10, tick, &fx.srv);
	fd = fx_connect(&fx);
	REQUIRE(discovery_login(&fx, fd));
	start = now_ms();
	/* A request well within the idle limit, again and again. */
	while (now_ms() - start < 2000 && send_targets(&fx, fd, cmdsn++))
		fx_run(&fx, 50);
	CHECK(peer_closed(&fx, fd));
	CHECK(now_ms() - start >= 550);
	CHECK(now_ms() - start < 1500);
	CHECK_EQ(fx.srv.nr_conns, 0);
	close(fd);
	fx_free(&fx);
}

TEST(limits_discovery_session_idle_past_its_limit_is_closed)
{
	struct fixture fx;
	int fd;

	fx_init(&fx, CONF);
	fx.srv.idle_timeout_ms = 100;
	loop_set_tick(&fx.loop, 10, tick, &fx.srv);
	fd = fx_connect(&fx);
	REQUIRE(discovery_login(&fx, fd));
	CHECK(peer_closed(&fx, fd));
	CHECK_EQ(fx.srv.nr_conns, 0);
	close(fd);
	fx_free(&fx);
}

TEST(limits_login_kept_busy_still_ends_at_its_deadline)
{
	struct fixture fx;
	struct login_req r;
	struct text t;
	uint8_t bhs[BHS_LEN], *data = NULL;
	uint64_t start;
	size_t dlen;
	int fd;

	fx_init(&fx, CONF);
	fx.srv.login_timeout_ms = 400;
	loop_set_tick(&fx.loop, 10, tick, &fx.srv);
	fd = fx_connect(&fx);
	start = now_ms();
	/* Text that never ends: C=1, again and again. */
	login_req_init(&r, false, STAGE_SECURITY, 0);
	r.cont = true;
	text_of(&t, "X-com.example.pad=1", NULL);
	login_bhs(&r, &t, bhs);
	while (now_ms() - start < 2000 && !send_pdu(fd, bhs, t.buf, t.len) &&
	       !recv_pdu(&fx, fd, bhs, &data, &dlen)) {
		free(data);
		data = NULL;
		login_bhs(&r, &t, bhs);
		fx_run(&fx, 20);
	}
	free(data);
	CHECK(peer_closed(&fx, fd));
	CHECK(now_ms() - start < 1500);
	CHECK_EQ(fx.srv.nr_conns, 0);
	close(fd);
	fx_free(&fx);
}

/* Lower RLIMIT_NOFILE to what is open and take every descriptor left. */
static void exhaust_descriptors(struct rlimit *saved)
{
	struct rlimit r;
	int fd;

	getrlimit(RLIMIT_NOFILE, saved);
	fd = open("/dev/null", O_RDONLY);
	r = *saved;
	r.rlim_cur = fd + 4;
	close(fd);
	setrlimit(RLIMIT_NOFILE, &r);
	while (open("/dev/null", O_RDONLY) >= 0)
		;
}

static int accepted;

static void count_accept(void *arg, int fd)
{
	(void)arg;
	accepted++;
	close(fd);
}

TEST(limits_portal_out_of_descriptors_sheds_the_connection_and_does_not_spin)
{
	struct loop loop;
	struct portals ps;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rlimit saved;
	int fd, i, events = 0;
	char c;
	ssize_t n;

	REQUIRE(loop_init(&loop) == 0);
	REQUIRE(portals_open(&ps, &loop, "127.0.0.1", 0, count_accept, NULL,
			     err, sizeof(err)) == 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(portal_port(&ps.v[0]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	REQUIRE(fd >= 0);
	exhaust_descriptors(&saved);
	REQUIRE(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	for (i = 0; i < 20; i++)
		events += loop_run_once(&loop, 5);
	CHECK(events <= 2);
	CHECK_EQ(accepted, 0);
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	CHECK(n == 0 || (n < 0 && errno == ECONNRESET));
	setrlimit(RLIMIT_NOFILE, &saved);
	close(fd);
	portals_close(&ps);
	loop_close(&loop);
}

/*
 * The spare lost (ENFILE when it was taken back): the connection cannot be
 * shed, the listener stays readable, and ietd must not poll it meanwhile.
 */
TEST(limits_portal_out_of_descriptors_without_a_spare_waits_for_the_tick)
{
	struct loop loop;
	struct portals ps;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rlimit saved;
	int fd, i, events = 0;

	REQUIRE(loop_init(&loop) == 0);
	REQUIRE(portals_open(&ps, &loop, "127.0.0.1", 0, count_accept, NULL,
			     err, sizeof(err)) == 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(portal_port(&ps.v[0]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	REQUIRE(fd >= 0);
	spare_close(&ps.spare);
	exhaust_descriptors(&saved);
	REQUIRE(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	/* Before, every round was an event: 20 of 20, at 100% CPU. */
	for (i = 0; i < 20; i++)
		events += loop_run_once(&loop, 5);
	CHECK(events <= 2);
	CHECK(ps.v[0].paused);
	CHECK_EQ(accepted, 0);
	/* Descriptors again: the tick polls it again and it is taken. */
	setrlimit(RLIMIT_NOFILE, &saved);
	portals_tick(&ps);
	CHECK(!ps.v[0].paused);
	for (i = 0; i < 20 && !accepted; i++)
		loop_run_once(&loop, 5);
	CHECK_EQ(accepted, 1);
	CHECK(ps.spare.fd >= 0);
	close(fd);
	portals_close(&ps);
	loop_close(&loop);
}

TEST(limits_nofile_is_raised_to_the_need_within_the_hard_limit)
{
	struct rlimit r, now;
	unsigned long have;

	getrlimit(RLIMIT_NOFILE, &r);
	REQUIRE(r.rlim_max >= 2048);
	r.rlim_cur = 256;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &r) == 0);
	REQUIRE(nofile_raise(1104, &have, err, sizeof(err)) == 0);
	CHECK_EQ(have, 1104);
	getrlimit(RLIMIT_NOFILE, &now);
	CHECK_EQ(now.rlim_cur, 1104);
	/* Never lowered. */
	REQUIRE(nofile_raise(300, &have, err, sizeof(err)) == 0);
	CHECK_EQ(have, 1104);
	/* No further than the hard limit. */
	r.rlim_cur = 256;
	r.rlim_max = 512;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &r) == 0);
	REQUIRE(nofile_raise(1104, &have, err, sizeof(err)) == 0);
	CHECK_EQ(have, 512);
}

#define CHAP_CONF	"Target " TARGET1 "\n IncomingUser joe secretsecret1\n" \
			" Lun 0 Type=nullio\n"

/* A CHAP exchange from ip that answers the challenge wrong: its status. */
static unsigned int chap_guess(struct fixture *fx, const char *ip)
{
	static const char *const steps[3][3] = {
		{ "InitiatorName=" INITIATOR, "TargetName=" TARGET1,
		  "AuthMethod=CHAP" },
		{ "CHAP_A=5", NULL, NULL },
		{ "CHAP_N=joe", "CHAP_R=0x00000000000000000000000000000000", NULL },
	};
	uint8_t bhs[BHS_LEN], *data = NULL;
	struct login_req r;
	struct text t;
	size_t dlen;
	int fd = fx_connect_from(fx, ip), i;

	for (i = 0; i < 3; i++) {
		login_req_init(&r, i == 2, STAGE_SECURITY,
			       i == 2 ? STAGE_OPERATIONAL : 0);
		text_of(&t, steps[i][0], steps[i][1], steps[i][2], NULL);
		login_bhs(&r, &t, bhs);
		free(data);
		data = NULL;
		if (send_pdu(fd, bhs, t.buf, t.len) ||
		    recv_pdu(fx, fd, bhs, &data, &dlen)) {
			bhs[36] = bhs[37] = 0xff;
			break;
		}
	}
	free(data);
	close(fd);
	return bhs[36] << 8 | bhs[37];
}

TEST(limits_wrong_chap_responses_make_their_source_wait)
{
	struct sockaddr_storage a = sockaddr_of("127.0.0.5", 0);
	struct fixture fx;
	int i, fd;

	fx_init(&fx, CHAP_CONF);
	/* A method refused is no guess. */
	CHECK_EQ(fx_login_status(&fx, "127.0.0.5", TARGET1), 0x0201);
	CHECK_EQ(backoff_failures(&a, now_ms()), 0);
	for (i = 0; i < BACKOFF_FREE; i++)
		CHECK_EQ(chap_guess(&fx, "127.0.0.5"), 0x0201);
	/* Those were free: the next connection is still taken... */
	CHECK_EQ(backoff_wait(&a, now_ms()), 0);
	CHECK_EQ(chap_guess(&fx, "127.0.0.5"), 0x0201);
	/* ...but after it the source waits. */
	CHECK(backoff_wait(&a, now_ms()) > BACKOFF_FIRST_MS / 2);
	/* Counted for the target guessed at: discovery's login clears none. */
	backoff_passed(&a, 0, now_ms());
	CHECK(backoff_failures(&a, now_ms()) > BACKOFF_FREE);
	fd = fx_connect_from(&fx, "127.0.0.5");
	CHECK(closed_now(&fx, fd));
	close(fd);
	CHECK_EQ(fx.srv.refused, 1);
	/* Another source is not affected. */
	fd = fx_connect_from(&fx, "127.0.0.6");
	CHECK(!closed_now(&fx, fd));
	close(fd);
	fx_free(&fx);
}

TEST(limits_a_guessing_source_has_one_login_at_a_time)
{
	struct fixture fx;
	/* Five failures wait 2 s at most: 4 s ago, theirs is over. */
	uint64_t long_ago = now_ms() - 4 * BACKOFF_FIRST_MS;
	struct sockaddr_storage a = sockaddr_of("127.0.0.7", 0);
	int i, one, two, other;

	fx_init(&fx, CHAP_CONF);
	/* Failures whose wait is over, and that an hour has not yet forgotten. */
	for (i = 0; i < BACKOFF_FREE + 2; i++)
		backoff_failed(&a, 1, long_ago);
	CHECK_EQ(backoff_wait(&a, now_ms()), 0);
	one = fx_connect_from(&fx, "127.0.0.7");
	CHECK(!closed_now(&fx, one));
	two = fx_connect_from(&fx, "127.0.0.7");
	CHECK(closed_now(&fx, two));
	other = fx_connect_from(&fx, "127.0.0.8");
	CHECK(!closed_now(&fx, other));
	close(one);
	close(two);
	close(other);
	fx_free(&fx);
}

TEST(limits_backoff_is_per_scope_doubles_and_is_forgotten)
{
	struct sockaddr_storage a = sockaddr_of("192.0.2.9", 0);
	struct sockaddr_storage l1 = sockaddr_of("fe80::1", 0);
	struct sockaddr_storage l2 = sockaddr_of("fe80::2", 0);
	struct sockaddr_storage g1 = sockaddr_of("2001:db8:1:2::1", 0);
	struct sockaddr_storage g2 = sockaddr_of("2001:db8:1:2::2", 0);
	uint64_t now = now_ms(), w;
	int i;

	for (i = 0; i < BACKOFF_FREE + 2; i++)
		backoff_failed(&a, 1, now);
	w = backoff_wait(&a, now);
	CHECK(w > BACKOFF_FIRST_MS && w <= 2 * BACKOFF_FIRST_MS);
	/* Doubling to the cap. */
	for (i = 0; i < 12; i++)
		backoff_failed(&a, 1, now);
	CHECK_EQ(backoff_wait(&a, now), BACKOFF_MAX_MS);
	/* A login that authenticates elsewhere forgets nothing of target 1... */
	backoff_passed(&a, 0, now);
	backoff_passed(&a, 2, now);
	CHECK_EQ(backoff_wait(&a, now), BACKOFF_MAX_MS);
	/* ...one to target 1 does. */
	backoff_passed(&a, 1, now);
	CHECK_EQ(backoff_wait(&a, now), 0);
	CHECK_EQ(backoff_failures(&a, now), 0);
	/* Link-local hosts share fe80::/64, not their back-off; a /64 does. */
	for (i = 0; i < BACKOFF_FREE + 1; i++) {
		backoff_failed(&l1, 0, now);
		backoff_failed(&g1, 0, now);
	}
	CHECK(backoff_wait(&l1, now) > 0);
	CHECK_EQ(backoff_wait(&l2, now), 0);
	CHECK(backoff_wait(&g2, now) > 0);
	/* An hour without failing forgets. */
	CHECK_EQ(backoff_failures(&l1, now + BACKOFF_FORGET_MS), 0);
}
