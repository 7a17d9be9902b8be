// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: conn.c, the bytes of a connection from accept to
 * hand-off, over a real socket: PDU framing (a BHS, AHS, header digest,
 * data, padding and data digest read to the byte, never a byte of the
 * next PDU), the digests of discovery sessions, oversized segments left
 * unread, answers written back while the peer stops reading, and normal
 * logins handed to a fake kernel (tests/unit/kernel_fake.c). The input is
 * what the peer sends, then it closes its side; whatever it sends, the
 * connection ends and ietd holds nothing of it afterwards.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "conn.h"
#include "kernel_fake.h"
#include "log.h"
#include "loop.h"
#include "registry.h"

static const char conf[] =
	"Target iqn.2001-04.com.example:disk1\n"
	" Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:digests\n"
	" HeaderDigest CRC32C\n DataDigest CRC32C\n"
	" MaxRecvDataSegmentLength 4096\n Lun 0 Type=nullio\n"
	"Target iqn.2001-04.com.example:chap\n"
	" IncomingUser joe secretsecret iqn.1993-08.org.debian:01:x\n"
	" Lun 0 Type=nullio\n";

static struct config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	log_init("fuzz", 0, 0);
	if (config_parse(conf, sizeof(conf) - 1, "fuzz.conf", &cfg, err,
			 sizeof(err)))
		abort();
	return 0;
}

/* The fake kernel with the configuration's targets, afresh. */
static void kernel_afresh(void)
{
	size_t i;

	fake_reset();
	if (kernel_open())
		abort();
	for (i = 0; i < cfg.nr_targets; i++) {
		uint32_t tid = cfg.targets[i].tid;

		if (kernel_target_new(&tid, cfg.targets[i].name,
				      cfg.targets[i].tparams,
				      cfg.targets[i].keys))
			abort();
	}
}

/* Read and drop what ietd answered, as a peer that reads does. */
static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct sockaddr_storage peer = { 0 };
	struct sockaddr_in *p4 = (struct sockaddr_in *)&peer;
	struct registry reg;
	struct server srv;
	struct loop loop;
	size_t off = 0;
	int sv[2], idle = 0;
	/* The first byte: whether the peer reads what ietd answers. */
	bool reads = size && (in[0] & 1);

	if (loop_init(&loop))
		abort();
	registry_init(&reg);
	kernel_afresh();
	server_init(&srv, &loop, &cfg, &reg);
	srv.login_timeout_ms = srv.first_pdu_ms = 1000;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv))
		abort();
	p4->sin_family = AF_INET;
	p4->sin_port = htons(40000);
	p4->sin_addr.s_addr = htonl(0xc0000201);	/* 192.0.2.1 */
	server_accept_from(&srv, sv[0], &peer);
	/* Send, letting ietd read and answer, until all is sent and done. */
	while (srv.nr_conns && idle < 4) {
		int n;

		if (off < size) {
			ssize_t w = send(sv[1], in + off, size - off,
					 MSG_NOSIGNAL);

			if (w > 0)
				off += w;
			else if (w < 0 && errno != EAGAIN)
				off = size;
			if (off == size)
				shutdown(sv[1], SHUT_WR);
		}
		if (reads)
			drain(sv[1]);
		n = loop_run_once(&loop, 0);
		if (n < 0)
			abort();
		/* Nothing moved, all is sent: a peer that stops reading. */
		idle = n == 0 && off == size ? idle + 1 : 0;
	}
	server_close_all(&srv);
	if (srv.nr_conns || srv.conns || srv.disc_budget.used)
		abort();
	close(sv[1]);
	registry_free(&reg);
	kernel_close();
	fake_reset();
	loop_close(&loop);
	return 0;
}
