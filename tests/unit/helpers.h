/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests share: building initiator PDUs and text, reading target
 * PDUs, and a running ietd core (config, registry, loop, server) with the
 * fake kernel, reached over real loopback TCP connections.
 */
#ifndef IET_TESTS_HELPERS_H
#define IET_TESTS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config.h"
#include "conn.h"
#include "login.h"
#include "loop.h"
#include "model.h"
#include "pdu.h"
#include "registry.h"
#include "runtime.h"
#include "text.h"

#define INITIATOR	"iqn.1993-08.org.debian:01:test"
#define TARGET1		"iqn.2001-04.com.example:disk1"
#define TARGET2		"iqn.2001-04.com.example:disk2"

/* Text from NULL-terminated "key=value" strings, NUL after each. */
struct text {
	char buf[16384];
	size_t len;
};
void text_of(struct text *t, ...) __attribute__((sentinel));
/* The value of key in a data segment, or NULL. */
const char *text_get(const void *data, size_t len, const char *key);
size_t text_count(const void *data, size_t len, const char *key);

/* A Login Request with the usual fields and the given stage bits. */
void login_req_init(struct login_req *r, bool transit, uint8_t csg,
		    uint8_t nsg);
/* Encode r (dlength from t) into bhs. */
void login_bhs(const struct login_req *r, const struct text *t, uint8_t *bhs);

/* A parsed configuration; aborts the test on a parse error. */
void config_of(struct config *cfg, const char *text);

/* ietd's core on the fake kernel. */
struct fixture {
	struct loop loop;
	struct runtime rt;		/* rt.cfg: the running model */
	struct registry reg;
	struct server srv;
	int listen_fd;
};

/* conf: ietd.conf text; the fake kernel gets its targets and LUNs. */
void fx_init(struct fixture *fx, const char *conf);
/* The same, starting on what the fake kernel already has (a restart). */
void fx_init_on_kernel(struct fixture *fx, const char *conf);
void fx_free(struct fixture *fx);
/* A client connection to the server; returns the initiator's socket. */
int fx_connect(struct fixture *fx);
/* The same from a loopback address of the test's choice (127.x.y.z). */
int fx_connect_from(struct fixture *fx, const char *ip);
/*
 * A first Login Request (AuthMethod=None) to target from ip, on a
 * connection of its own: the status of the answer (0xffff: none came).
 */
unsigned int fx_login_status(struct fixture *fx, const char *ip,
			     const char *target);
/*
 * A loopback connection that ietd takes as coming from the IPv6 address
 * ip, port port: addresses no test host has (other /64s, link-local).
 */
int fx_connect_as(struct fixture *fx, const char *ip, uint16_t port);

/* A numeric IPv4 or IPv6 address and a port; aborts on anything else. */
struct sockaddr_storage sockaddr_of(const char *ip, uint16_t port);
/* Run the loop until cond(arg) or about two seconds have passed. */
bool fx_run_until(struct fixture *fx, bool (*cond)(void *), void *arg);
/* Run the loop for a while (to let ietd act on what it has). */
void fx_run(struct fixture *fx, int iterations);

/*
 * Count the blocks given back to the allocator while they still hold
 * secret, from now until freed_holding() (ASan builds: its free hook sees
 * each block before it goes; without ASan nothing is seen, 0).
 */
void freed_watch(const char *secret);
size_t freed_holding(void);

/* Send a PDU: BHS, data and padding. */
int send_pdu(int fd, const uint8_t *bhs, const void *data, size_t len);
/* Receive one PDU, running the loop meanwhile; data is malloc'ed. */
int recv_pdu(struct fixture *fx, int fd, uint8_t *bhs, uint8_t **data,
	     size_t *dlen);
/* Whether the peer has closed the connection (after running the loop). */
bool peer_closed(struct fixture *fx, int fd);

#endif
