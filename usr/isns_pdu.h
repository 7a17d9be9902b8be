/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iSNSP (RFC 4171 section 5) as ietd speaks it: messages built into a
 * fixed buffer, and what the server sends taken apart by pure functions
 * that trust no length. No sockets here: isns.c moves the bytes.
 *
 * A PDU is a 12-byte header (version, function, payload length, flags,
 * transaction and sequence IDs, all big-endian) and a payload of TLVs:
 * a 4-byte tag, a 4-byte length (a multiple of 4) and the value, strings
 * NUL-terminated and padded. A request's payload is the source attribute,
 * the message key, a delimiter (tag 0, length 0) and the operating
 * attributes; a response's starts with a 4-byte status.
 *
 * ietd sends and accepts only messages of one PDU (FIRST and LAST set):
 * what it registers is split into several registrations that fit in the
 * 8 KiB open-isns takes.
 */
#ifndef IET_USR_ISNS_PDU_H
#define IET_USR_ISNS_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ISNS_PORT		3205
#define ISNS_VERSION		1
#define ISNS_HDR_LEN		12
#define ISNS_PAYLOAD_MAX	65532	/* a 16-bit length, 4-byte aligned */
#define ISNS_PDU_MAX		(ISNS_HDR_LEN + ISNS_PAYLOAD_MAX)
/*
 * What ietd sends at most, header included: open-isns's isnsd resets the
 * connection on a larger PDU (RFC 4171 sets no minimum a server takes).
 */
#define ISNS_SEND_MAX		8192
/* iSCSI names and aliases: 223 bytes and the NUL (RFC 3720 3.2.6.1). */
#define ISNS_NAME_MAX		223

/* Function IDs (RFC 4171 5.1.3); a response is the request's | 0x8000. */
enum isns_func {
	ISNS_DEV_ATTR_REG	= 0x0001,
	ISNS_DEV_ATTR_QRY	= 0x0002,
	ISNS_DEV_DEREG		= 0x0004,
	ISNS_SCN_REG		= 0x0005,
	ISNS_SCN		= 0x0008,
	ISNS_ESI		= 0x000d,
	ISNS_RESPONSE		= 0x8000,
};

/* Header flags (5.1.4). */
#define ISNS_F_CLIENT		0x8000
#define ISNS_F_SERVER		0x4000
#define ISNS_F_AUTH		0x2000
#define ISNS_F_REPLACE		0x1000
#define ISNS_F_LAST		0x0800
#define ISNS_F_FIRST		0x0400

/* Attribute tags (6.1) ietd sends or reads. */
enum isns_tag {
	ISNS_T_DELIMITER	= 0,
	ISNS_T_EID		= 1,
	ISNS_T_ENTITY_PROTOCOL	= 2,
	ISNS_T_TIMESTAMP	= 4,
	ISNS_T_REG_PERIOD	= 6,
	ISNS_T_PORTAL_ADDR	= 16,
	ISNS_T_PORTAL_PORT	= 17,
	ISNS_T_ESI_INTERVAL	= 19,
	ISNS_T_ESI_PORT		= 20,
	ISNS_T_SCN_PORT		= 23,
	ISNS_T_ISCSI_NAME	= 32,
	ISNS_T_NODE_TYPE	= 33,
	ISNS_T_ALIAS		= 34,
	ISNS_T_SCN_BITMAP	= 35,
	ISNS_T_PG_NAME		= 48,
	ISNS_T_PG_ADDR		= 49,
	ISNS_T_PG_PORT		= 50,
	ISNS_T_PG_TAG		= 51,
	ISNS_T_DD_ID		= 2065,
	ISNS_T_DD_MEMBER_NAME	= 2068,
};

#define ISNS_PROTOCOL_ISCSI	2
#define ISNS_NODE_TARGET	0x1
/* SCN bitmap (6.4.4): the events a target follows. */
#define ISNS_SCN_MEMBER_ADDED	0x01
#define ISNS_SCN_MEMBER_REMOVED	0x02
#define ISNS_SCN_OBJ_UPDATED	0x04
#define ISNS_SCN_OBJ_ADDED	0x08
#define ISNS_SCN_OBJ_REMOVED	0x10
#define ISNS_SCN_TARGET_EVENTS	(ISNS_SCN_MEMBER_ADDED | \
				 ISNS_SCN_MEMBER_REMOVED | \
				 ISNS_SCN_OBJ_UPDATED | ISNS_SCN_OBJ_ADDED | \
				 ISNS_SCN_OBJ_REMOVED)

/* Status codes (5.4) ietd tells apart. */
#define ISNS_OK			0
#define ISNS_ESI_NOT_AVAILABLE	21

struct isns_hdr {
	uint16_t version;
	uint16_t func;
	uint16_t len;			/* of the payload */
	uint16_t flags;
	uint16_t xid;
	uint16_t seq;
};

/* A message being built: header and payload, never beyond ISNS_SEND_MAX. */
struct isns_msg {
	uint8_t buf[ISNS_PDU_MAX];
	size_t len;			/* header included */
	bool overflow;			/* an attribute did not fit */
};

/* What ietd registers: its network entity, portals and targets. */
struct isns_portal {
	struct sockaddr_storage addr;	/* address and port */
	uint16_t tag;			/* its portal group's */
};

struct isns_node {
	char name[ISNS_NAME_MAX + 1];
	char alias[ISNS_NAME_MAX + 1];	/* "" none */
};

struct isns_entity {
	char eid[ISNS_NAME_MAX + 1];
	const struct isns_portal *portals;
	size_t nr_portals;
	const struct isns_node *nodes;
	size_t nr_nodes;
	uint16_t scn_port;		/* 0: none (no SCN, no ESI) */
	uint16_t esi_port;
	uint32_t esi_interval;		/* seconds; 0: no ESI port */
};

/* A request: client flags, FIRST and LAST, sequence 0. */
void isns_msg_start(struct isns_msg *m, uint16_t func, uint16_t flags,
		    uint16_t xid);
void isns_put_u32(struct isns_msg *m, uint32_t tag, uint32_t v);
/* s must hold at most ISNS_NAME_MAX bytes; an empty string is nil. */
void isns_put_str(struct isns_msg *m, uint32_t tag, const char *s);
void isns_put_nil(struct isns_msg *m, uint32_t tag);
/* 16 bytes, IPv4 as IPv4-mapped IPv6 (6.3.1). */
void isns_put_addr(struct isns_msg *m, uint32_t tag,
		   const struct sockaddr_storage *ss);
/* Write the payload length into the header: 0, or -EMSGSIZE. */
int isns_msg_end(struct isns_msg *m);

/*
 * DevAttrReg of e's entity, its portals, and its nodes from first on with
 * a portal group for each node and portal: as many nodes as fit, their
 * number returned (at least one, or -EMSGSIZE). The first registration
 * (first == 0) replaces what the entity held; the later ones add to it.
 * source: a node of the entity (the first).
 */
int isns_build_reg(struct isns_msg *m, uint16_t xid,
		   const struct isns_entity *e, size_t first);
/* SCNReg of a target for the events of ISNS_SCN_TARGET_EVENTS. */
int isns_build_scn_reg(struct isns_msg *m, uint16_t xid, const char *name);
/* DevAttrQry of the discovery domains target is in, and their members. */
int isns_build_dd_query(struct isns_msg *m, uint16_t xid, const char *target);
/* DevAttrReg of the entity alone, which keeps its registration alive. */
int isns_build_refresh(struct isns_msg *m, uint16_t xid, const char *source,
		       const char *eid);
/* DevDereg of the whole entity. */
int isns_build_dereg(struct isns_msg *m, uint16_t xid, const char *source,
		     const char *eid);

/*
 * The header of a PDU whose first len bytes are at b: -EAGAIN while
 * fewer than ISNS_HDR_LEN, -EPROTO for another version, a length that is
 * not 4-byte aligned, a message of several PDUs or an authentication
 * block (ietd has no keys to check one with).
 */
int isns_hdr_parse(const uint8_t *b, size_t len, struct isns_hdr *h);

/* One attribute as read: value points into the payload. */
struct isns_tlv {
	uint32_t tag;
	uint32_t len;
	const uint8_t *val;
};

struct isns_iter {
	const uint8_t *p;
	size_t left;
};

void isns_iter_init(struct isns_iter *it, const uint8_t *p, size_t len);
/* 1 and the next attribute, 0 at the end, -EBADMSG if one overruns. */
int isns_iter_next(struct isns_iter *it, struct isns_tlv *t);
/*
 * A string attribute: NUL-terminated within its length, 1 to
 * ISNS_NAME_MAX printable ASCII bytes before the NUL, as names are.
 */
bool isns_tlv_name(const struct isns_tlv *t, const char **s);
bool isns_tlv_u32(const struct isns_tlv *t, uint32_t *v);

/*
 * A response: its status, and the attributes after it in *it. -EBADMSG
 * for a payload too short for a status.
 */
int isns_response(const uint8_t *payload, size_t len, uint32_t *status,
		  struct isns_iter *it);

/* The initiators a target may admit, from a DD query's response. */
#define ISNS_MEMBERS_MAX	4096

struct isns_names {
	char (*v)[ISNS_NAME_MAX + 1];
	size_t nr;
};

/*
 * The members of the discovery domains of the response (after its
 * status) that list target among them, target left out, sorted and
 * without duplicates (names compared without case). A domain that does
 * not list the target is not the target's, whatever the server sent.
 * -EBADMSG for a malformed attribute, -E2BIG beyond ISNS_MEMBERS_MAX,
 * -ENOMEM; out is empty on error.
 */
int isns_dd_members(struct isns_iter *it, const char *target,
		    struct isns_names *out);
void isns_names_free(struct isns_names *n);
bool isns_names_has(const struct isns_names *n, const char *name);

/*
 * The registration period the server granted (seconds), from a
 * DevAttrRegRsp's attributes; 0 if it sent none.
 */
uint32_t isns_reg_period(struct isns_iter *it);

/*
 * A server's SCN (5.6.5.9): the destination node it is for (the first
 * attribute, an iSCSI Name) into dest. -EBADMSG otherwise.
 */
int isns_scn_parse(const uint8_t *payload, size_t len, char *dest,
		   size_t destlen);
/* SCNRsp: success and the destination. */
int isns_build_scn_rsp(struct isns_msg *m, uint16_t xid, const char *dest);
/*
 * ESIRsp (5.7.4): success and the ESI's attributes echoed, which must be
 * well-formed TLVs (-EBADMSG) and fit in ISNS_SEND_MAX (-EMSGSIZE).
 */
int isns_build_esi_rsp(struct isns_msg *m, uint16_t xid,
		       const uint8_t *payload, size_t len);

#endif
