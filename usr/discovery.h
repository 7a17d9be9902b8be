/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Discovery sessions after login, served by ietd itself: Text Requests
 * with SendTargets (RFC 7143 Appendix C), Logout, NOP-Out; anything else
 * gets a Reject. Pure: PDU in, PDU out; conn.c moves the bytes.
 */
#ifndef IET_USR_DISCOVERY_H
#define IET_USR_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "login.h"
#include "model.h"
#include "text.h"

enum disc_result {
	DISC_REPLY,		/* send *out, read on */
	DISC_NOTHING,		/* no answer needed, read on */
	DISC_REPLY_CLOSE,	/* send *out, then close (logout) */
	DISC_CLOSE,		/* close at once */
};

struct disc;

struct disc *disc_new(const struct config *cfg, const struct login_outcome *o,
		      const struct sockaddr_storage *local);
/*
 * Who asks, for the access files (acl.h): SendTargets then lists only the
 * targets this initiator may log in to through this portal. Without it
 * every target is listed (tests).
 */
void disc_set_access(struct disc *d, const struct sockaddr_storage *peer,
		     const char *access_dirs);
void disc_free(struct disc *d);

/*
 * What the answers of all discovery sessions may hold at once (the
 * server's): an answer is built within what is left, or refused.
 */
struct disc_budget {
	size_t used;
	size_t max;
};

#define DISC_ANSWERS_MAX	(32u << 20)

/* Answers of d count against b (NULL: only against their own limit). */
void disc_set_budget(struct disc *d, struct disc_budget *b);
/*
 * The PDU disc_pdu() gave has been copied out: an answer sent whole is
 * given back at once, not held while the connection idles.
 */
void disc_sent(struct disc *d);

/* The largest data segment we accept, as declared at login. */
size_t disc_max_dsl(const struct disc *d);

/*
 * One PDU of the full feature phase; dlen must equal its DataSegmentLength
 * (a caller that refused to read an oversized segment passes 0, and the
 * connection is closed). *out is valid until the next call.
 */
enum disc_result disc_pdu(struct disc *d, const uint8_t *bhs,
			  const uint8_t *data, size_t dlen,
			  struct pdu_out *out);
const char *disc_error(const struct disc *d);

/* Who sends SendTargets, and the files that decide what it may see. */
struct st_who {
	const char *initiator;
	const struct sockaddr_storage *peer;
	const struct sockaddr_storage *local;
	const char *access_dirs;	/* NULL: no access files */
};

/*
 * The answer to SendTargets=<what> seen through the local address of the
 * connection: "All" lists every target, a name lists that target, an empty
 * value nothing (it names the session's target only in normal sessions).
 * Targets the access files hide from who are left out; if the files
 * cannot be read, nothing is listed and err says why. Each target comes
 * with the portals of every portal group (PortalGroup lines; a portal on
 * every address is given as the local address), those the access files
 * close to it left out; without PortalGroup lines, with the local address.
 */
int sendtargets(const struct config *cfg, const char *what,
		const struct st_who *who, struct textbuf *out, char *err,
		size_t errlen);
/*
 * The portal group a connection came through, by the local address it
 * was accepted on: 1 without PortalGroup lines, 0 for none of them.
 */
uint16_t portal_tag_of(const struct config *cfg,
		       const struct sockaddr_storage *local);
/* The port of an IPv4 or IPv6 socket address. */
uint16_t sockaddr_port(const struct sockaddr_storage *ss);
/* "192.0.2.1:3260,1" or "[2001:db8::1]:3260,1" (tag 1) */
int format_portal(const struct sockaddr_storage *ss, uint16_t tag, char *buf,
		  size_t len);

#endif
