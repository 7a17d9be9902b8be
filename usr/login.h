/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The login phase of one connection (RFC 7143 sections 6 and 11.12-11.13)
 * as a pure state machine: a Login Request PDU in, a Login Response PDU
 * out. No sockets here: conn.c moves the bytes, handoff.c calls the kernel.
 */
#ifndef IET_USR_LOGIN_H
#define IET_USR_LOGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

#include "chap.h"
#include "model.h"
#include "pdu.h"
#include "registry.h"


/* A PDU to send: its data points into the producer's buffer. */
struct pdu_out {
	uint8_t bhs[BHS_LEN];
	const uint8_t *data;
	size_t dlen;
};

struct login_env {
	const struct config *cfg;
	struct registry *reg;
	/* The connection's addresses, for the access files; NULL in tests. */
	const struct sockaddr_storage *peer;
	const struct sockaddr_storage *local;
	const char *access_dirs;	/* see access_load(); NULL: none */
	chap_random_fn rnd;		/* NULL: getrandom(2) */
};

enum login_result {
	LOGIN_CONTINUE,		/* send the response, read the next request */
	LOGIN_DONE,		/* send the final response, then hand over */
	LOGIN_FAILED,		/* send the reject response, then close */
	LOGIN_DROP,		/* close without a response */
};

/* What a successful login decided. */
struct login_outcome {
	bool discovery;
	bool leading;
	uint32_t tid;			/* 0 for discovery */
	uint16_t tpgt;			/* the portal group it came through */
	uint64_t sid;
	uint16_t cid;
	char initiator[IET_NAME_MAX + 1];
	uint32_t exp_cmdsn;		/* the login request's CmdSN */
	uint32_t statsn;		/* the StatSN after the final response */
	uint32_t keys[IET_KEY_COUNT];	/* negotiated, for the kernel */
	uint32_t queued_cmds;		/* the target's CmdSN window */
	/* the TSIH reservation of a new session, owned by the caller now */
	struct reg_session *reserved;
	/* an added connection's CID, reserved in its session (sid, cid) */
	bool cid_reserved;
};

struct login;

/* statsn: the StatSN of the first response (any value, RFC 7143 11.13.4). */
struct login *login_new(const struct login_env *env, uint32_t statsn);
void login_free(struct login *l);

/*
 * One request: its BHS and data segment (dlen must equal the BHS's
 * DataSegmentLength; a caller that refused to read an oversized segment
 * passes dlen 0 and the login fails). *out is valid until the next call.
 */
enum login_result login_pdu(struct login *l, const uint8_t *bhs,
			    const uint8_t *data, size_t dlen,
			    struct pdu_out *out);

const struct login_outcome *login_outcome(const struct login *l);
/*
 * Give back what a finished login reserved (its TSIH or its CID), when
 * its connection ends before the hand-off.
 */
void login_release(struct login *l);
/* Why the login failed or was dropped, for the log. */
const char *login_error(const struct login *l);
/* The initiator's name once known, else "". */
const char *login_initiator(const struct login *l);
/* How the initiator authenticated, for the log: "" or "CHAP ...". */
const char *login_auth_info(const struct login *l);
/*
 * Whether the login failed on a CHAP response checked and found wrong (a
 * guess of a secret), not on a method refused or a key missing.
 */
bool login_chap_wrong(const struct login *l);
/*
 * The accounts' scope the login is in: its target's tid once it is
 * known, 0 for discovery (and before a target is named).
 */
uint32_t login_scope(const struct login *l);

#endif
