// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the login state machine and the discovery session
 * after it. The input is a stream of PDUs, each a BHS and as much data as
 * its DataSegmentLength says (padded), as it would come off the socket;
 * once a login ends, the rest of the stream is the next login (one
 * registry for all: reinstatements, added connections). Each stream runs
 * against two configurations, the second with discovery CHAP and
 * accounts that name their initiators. Whatever the stream, a login that
 * reaches the full feature phase in a scope with accounts has
 * authenticated, as one of them, under a name that account may use.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "discovery.h"
#include "log.h"
#include "login.h"
#include "params.h"
#include "pdu_stream.h"
#include "registry.h"

static const char conf[] =
	"Target iqn.2001-04.com.example:disk1\n"
	" Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:disk2\n"
	" ImmediateData No\n MaxBurstLength 65536\n"
	" DataDigest CRC32C\n MaxRecvDataSegmentLength 4096\n"
	" MaxSessions 2\n Alias two\n"
	"Target iqn.2001-04.com.example:chap\n"
	" IncomingUser joe secretsecret\n OutgoingUser tgt targetsecret\n"
	" Redirect 192.0.2.9\n"
	"Target iqn.2001-04.com.example:chap2\n"
	" IncomingUser joe secretsecret\n CHAPAlgorithms 5\n";

static uint8_t next_byte;

/* Deterministic challenges, so a crash replays. */
static int counting(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = next_byte++;
	return 0;
}

static const char conf_chap[] =
	"IncomingUser disc discsecret01 iqn.1993-08.org.debian:01:x\n"
	"Target iqn.2001-04.com.example:disk1\n"
	" IncomingUser joe secretsecret iqn.1993-08.org.debian:01:x\n"
	" IncomingUser ann annsecret001\n"
	" Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:open\n"
	" Lun 0 Type=nullio\n";

static struct config cfg, cfg_chap;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	log_init("fuzz", 0, 0);
	if (config_parse(conf, sizeof(conf) - 1, "fuzz.conf", &cfg, err,
			 sizeof(err)) ||
	    config_parse(conf_chap, sizeof(conf_chap) - 1, "chap.conf",
			 &cfg_chap, err, sizeof(err)))
		abort();
	return 0;
}

/*
 * The invariant: no way into the full feature phase of a scope that has
 * accounts but through one of them, as a name it may use.
 */
static void check_authenticated(const struct config *c, struct login *l)
{
	const struct login_outcome *o = login_outcome(l);
	const struct target_conf *t = NULL;
	const struct auth *a = &c->auth;
	const struct account *acc;
	const char *info = login_auth_info(l), *user;

	if (!o->discovery) {
		t = config_target_by_tid(c, o->tid);
		if (!t)
			abort();
		a = &t->auth;
	}
	if (!a->nr_incoming)
		return;
	user = strstr(info, " user ");
	if (strncmp(info, "CHAP ", 5) || !user)
		abort();
	user += 6;
	for (acc = a->incoming; acc < a->incoming + a->nr_incoming; acc++) {
		size_t n = strlen(acc->user);

		if (!strncmp(user, acc->user, n) &&
		    (!user[n] || user[n] == ','))
			break;
	}
	if (acc == a->incoming + a->nr_incoming ||
	    !account_admits(acc, o->initiator))
		abort();
}

/* Logins off the stream, one after the other, against config c. */
static void run(const struct config *c, const uint8_t *in, size_t size)
{
	struct registry reg;
	struct login_env env = { .cfg = c, .reg = &reg, .rnd = counting };
	struct sockaddr_storage local = { 0 };
	struct sockaddr_in *l4 = (struct sockaddr_in *)&local;
	const uint8_t *bhs, *data;
	struct pdu_out out;
	size_t dlen;
	int logins;

	registry_init(&reg);
	next_byte = 0;
	/* A live session for logins that add connections. */
	{
		uint32_t keys[IET_KEY_COUNT] = { [IET_KEY_MAX_CONNECTIONS] = 2 };
		struct reg_session *s = registry_reserve(&reg, 1, 0x80123456789aull,
							 "iqn.1993-08.org.debian:01:x",
							 false);

		registry_commit(s, keys);
		registry_add_cid(s, 0);
	}
	l4->sin_family = AF_INET;
	l4->sin_port = htons(3260);
	l4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (logins = 0; logins < 4 && size >= BHS_LEN; logins++) {
		enum login_result res = LOGIN_CONTINUE;
		struct login *l = login_new(&env, 1);
		struct disc *d = NULL;

		while (res == LOGIN_CONTINUE &&
		       next_pdu(&in, &size, &bhs, &data, &dlen, LOGIN_DSL_MAX)) {
			res = login_pdu(l, bhs, data, dlen, &out);
			if (out.dlen > LOGIN_DSL_MAX)
				abort();
		}
		if (res == LOGIN_DONE) {
			const struct login_outcome *o = login_outcome(l);

			check_authenticated(c, l);
			if (o->keys[IET_KEY_MAX_RECV_DSL] < DSL_MIN ||
			    (!o->discovery && o->leading &&
			     o->keys[IET_KEY_FIRST_BURST] > o->keys[IET_KEY_MAX_BURST] &&
			     !(o->keys[IET_KEY_INITIAL_R2T] &&
			       !o->keys[IET_KEY_IMMEDIATE_DATA])))
				abort();
			if (o->discovery) {
				d = disc_new(c, o, &local);
			} else if (o->leading && o->reserved) {
				/* Handed to the kernel, as handoff.c does. */
				struct reg_session *old;

				old = registry_find_isid(&reg, o->tid, o->tpgt,
							 o->initiator,
							 o->sid >> 16);
				if (old)
					registry_drop(&reg, old);
				registry_commit(o->reserved, o->keys);
				registry_add_cid(o->reserved, o->cid);
			} else {
				login_release(l);
			}
		}
		while (d && next_pdu(&in, &size, &bhs, &data, &dlen,
				     disc_max_dsl(d))) {
			enum disc_result r = disc_pdu(d, bhs, data, dlen, &out);

			if (r == DISC_CLOSE || r == DISC_REPLY_CLOSE)
				break;
		}
		if (d)
			registry_drop(&reg, login_outcome(l)->reserved);
		disc_free(d);
		login_free(l);
	}
	registry_free(&reg);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	run(&cfg, in, size);
	run(&cfg_chap, in, size);
	return 0;
}
