/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iSCSI PDUs ietd reads and writes before a connection reaches the
 * kernel (RFC 7143 section 11): Login, Text, Logout, NOP and Reject, as
 * plain structs with byte-exact encoders and checking decoders.
 */
#ifndef IET_USR_PDU_H
#define IET_USR_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BHS_LEN			48
#define DIGEST_LEN		4
#define RSVD_TAG		0xffffffffu
#define LOGIN_DSL_MAX		8192	/* RFC 7143 13.12 default during login */
#define ISCSI_VERSION		0x00

enum iscsi_opcode {
	OP_NOP_OUT	= 0x00,
	OP_SCSI_CMD	= 0x01,
	OP_TMF_REQ	= 0x02,
	OP_LOGIN_REQ	= 0x03,
	OP_TEXT_REQ	= 0x04,
	OP_DATA_OUT	= 0x05,
	OP_LOGOUT_REQ	= 0x06,
	OP_SNACK	= 0x10,
	OP_NOP_IN	= 0x20,
	OP_SCSI_RSP	= 0x21,
	OP_TMF_RSP	= 0x22,
	OP_LOGIN_RSP	= 0x23,
	OP_TEXT_RSP	= 0x24,
	OP_DATA_IN	= 0x25,
	OP_LOGOUT_RSP	= 0x26,
	OP_R2T		= 0x31,
	OP_ASYNC_MSG	= 0x32,
	OP_REJECT	= 0x3f,
};

/* Login stages (CSG/NSG). */
enum login_stage {
	STAGE_SECURITY		= 0,
	STAGE_OPERATIONAL	= 1,
	STAGE_FFP		= 3,
};

/* Login Response status (RFC 7143 11.13.5). */
#define STATUS(cls, det)	(((cls) << 8) | (det))
enum login_status {
	LS_SUCCESS		= STATUS(0, 0),
	LS_MOVED_TEMP		= STATUS(1, 0x01),
	LS_INIT_ERR		= STATUS(2, 0x00),
	LS_AUTH_FAILED		= STATUS(2, 0x01),
	LS_AUTHZ_FAILED		= STATUS(2, 0x02),
	LS_NOT_FOUND		= STATUS(2, 0x03),
	LS_TARGET_REMOVED	= STATUS(2, 0x04),
	LS_UNSUPPORTED_VERSION	= STATUS(2, 0x05),
	LS_TOO_MANY_CONNS	= STATUS(2, 0x06),
	LS_MISSING_PARAM	= STATUS(2, 0x07),
	LS_CANT_INCLUDE		= STATUS(2, 0x08),
	LS_SESSION_TYPE		= STATUS(2, 0x09),
	LS_NO_SESSION		= STATUS(2, 0x0a),
	LS_INVALID_IN_LOGIN	= STATUS(2, 0x0b),
	LS_TARGET_ERR		= STATUS(3, 0x00),
	LS_UNAVAILABLE		= STATUS(3, 0x01),
	LS_NO_RESOURCES		= STATUS(3, 0x02),
};

/* Reject reasons (RFC 7143 11.17.1). */
enum reject_reason {
	REJECT_DIGEST_ERROR	= 0x02,
	REJECT_PROTOCOL_ERROR	= 0x04,
	REJECT_NOT_SUPPORTED	= 0x05,
	REJECT_INVALID_FIELD	= 0x09,
};

/* Fields every BHS has in the same place. */
struct bhs_common {
	uint8_t opcode;
	bool immediate;
	bool final;			/* byte 1 bit 7: F or T */
	uint8_t ahs_words;		/* TotalAHSLength, in 4-byte words */
	uint32_t dlength;		/* DataSegmentLength, without padding */
	uint32_t itt;
};

void bhs_common_decode(const uint8_t *bhs, struct bhs_common *c);
static inline size_t pdu_pad(size_t len)
{
	return (4 - (len & 3)) & 3;
}

struct login_req {
	bool immediate;
	bool transit;
	bool cont;
	uint8_t csg, nsg;
	uint8_t vmax, vmin;
	uint8_t ahs_words;
	uint32_t dlength;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint16_t cid;
	uint32_t cmdsn;
	uint32_t exp_statsn;
};

struct login_rsp {
	bool transit;
	bool cont;
	uint8_t csg, nsg;
	uint8_t vmax, vactive;
	uint32_t dlength;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint16_t status;		/* class << 8 | detail */
};

struct text_req {
	bool immediate;
	bool final;
	bool cont;
	uint32_t dlength;
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t cmdsn;
	uint32_t exp_statsn;
};

struct text_rsp {
	bool final;
	bool cont;
	uint32_t dlength;
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
};

struct logout_req {
	bool immediate;
	uint8_t reason;
	uint32_t itt;
	uint16_t cid;
	uint32_t cmdsn;
	uint32_t exp_statsn;
};

enum logout_response {
	LOGOUT_OK		= 0,
	LOGOUT_CID_NOT_FOUND	= 1,
	LOGOUT_NO_RECOVERY	= 2,
};

struct logout_rsp {
	uint8_t response;
	uint32_t itt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint16_t time2wait;
	uint16_t time2retain;
};

struct nop_out {
	bool immediate;
	uint32_t dlength;
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t cmdsn;
	uint32_t exp_statsn;
};

struct nop_in {
	uint32_t dlength;
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
};

struct reject {
	uint8_t reason;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
};

/*
 * Decoders fill the whole struct even when they fail, so that a response
 * can still echo the ITT, ISID and so on; they return 0 or -EINVAL with
 * *why naming the offending field.
 */
int login_req_decode(const uint8_t *bhs, struct login_req *r,
		     const char **why);
void login_req_encode(const struct login_req *r, uint8_t *bhs);
int login_rsp_decode(const uint8_t *bhs, struct login_rsp *r,
		     const char **why);
void login_rsp_encode(const struct login_rsp *r, uint8_t *bhs);

int text_req_decode(const uint8_t *bhs, struct text_req *r, const char **why);
void text_req_encode(const struct text_req *r, uint8_t *bhs);
int text_rsp_decode(const uint8_t *bhs, struct text_rsp *r, const char **why);
void text_rsp_encode(const struct text_rsp *r, uint8_t *bhs);

int logout_req_decode(const uint8_t *bhs, struct logout_req *r,
		      const char **why);
void logout_req_encode(const struct logout_req *r, uint8_t *bhs);
int logout_rsp_decode(const uint8_t *bhs, struct logout_rsp *r,
		      const char **why);
void logout_rsp_encode(const struct logout_rsp *r, uint8_t *bhs);

int nop_out_decode(const uint8_t *bhs, struct nop_out *r, const char **why);
void nop_out_encode(const struct nop_out *r, uint8_t *bhs);
void nop_in_encode(const struct nop_in *r, uint8_t *bhs);
int nop_in_decode(const uint8_t *bhs, struct nop_in *r, const char **why);

/* data length of a Reject is the rejected BHS, which the caller appends. */
void reject_encode(const struct reject *r, uint8_t *bhs);
int reject_decode(const uint8_t *bhs, struct reject *r, const char **why);

/* The 48-bit ISID as a number, and the 64-bit sid IET builds from it. */
uint64_t isid_value(const uint8_t *isid);
static inline uint64_t make_sid(uint64_t isid, uint16_t tsih)
{
	return (isid << 16) | tsih;
}

#endif
