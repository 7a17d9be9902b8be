// SPDX-License-Identifier: GPL-2.0
/* Byte-exact encoding and checked decoding of the PDUs ietd handles. */
#include <errno.h>
#include <string.h>

#include "be.h"
#include "pdu.h"

#define F_BIT		0x80	/* byte 1: Final / Transit */
#define C_BIT		0x40	/* byte 1: Continue */
#define I_BIT		0x40	/* byte 0: Immediate */

static bool zero(const uint8_t *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

void bhs_common_decode(const uint8_t *bhs, struct bhs_common *c)
{
	c->opcode = bhs[0] & 0x3f;
	c->immediate = bhs[0] & I_BIT;
	c->final = bhs[1] & F_BIT;
	c->ahs_words = bhs[4];
	c->dlength = get24(bhs + 5);
	c->itt = get32(bhs + 16);
}

uint64_t isid_value(const uint8_t *isid)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | isid[i];
	return v;
}

/* Byte 0 bit 7 is reserved in every PDU. */
static int check_opcode(const uint8_t *bhs, uint8_t op, const char **why)
{
	if ((bhs[0] & 0x3f) != op) {
		*why = "unexpected opcode";
		return -EINVAL;
	}
	if (bhs[0] & 0x80) {
		*why = "reserved bit 7 of byte 0 set";
		return -EINVAL;
	}
	return 0;
}

int login_req_decode(const uint8_t *bhs, struct login_req *r,
		     const char **why)
{
	int ret;

	r->immediate = bhs[0] & I_BIT;
	r->transit = bhs[1] & F_BIT;
	r->cont = bhs[1] & C_BIT;
	r->csg = (bhs[1] >> 2) & 3;
	r->nsg = bhs[1] & 3;
	r->vmax = bhs[2];
	r->vmin = bhs[3];
	r->ahs_words = bhs[4];
	r->dlength = get24(bhs + 5);
	memcpy(r->isid, bhs + 8, 6);
	r->tsih = get16(bhs + 14);
	r->itt = get32(bhs + 16);
	r->cid = get16(bhs + 20);
	r->cmdsn = get32(bhs + 24);
	r->exp_statsn = get32(bhs + 28);

	ret = check_opcode(bhs, OP_LOGIN_REQ, why);
	if (ret)
		return ret;
	if (!r->immediate) {
		*why = "I bit not set";
		return -EINVAL;
	}
	if (bhs[1] & 0x30) {
		*why = "reserved bits of byte 1 set";
		return -EINVAL;
	}
	if (r->ahs_words) {
		*why = "AHS in a Login Request";
		return -EINVAL;
	}
	if (!zero(bhs + 22, 2) || !zero(bhs + 32, 16)) {
		*why = "reserved bytes not zero";
		return -EINVAL;
	}
	return 0;
}

void login_req_encode(const struct login_req *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_LOGIN_REQ | (r->immediate ? I_BIT : 0);
	bhs[1] = (r->transit ? F_BIT : 0) | (r->cont ? C_BIT : 0) |
		 (r->csg & 3) << 2 | (r->nsg & 3);
	bhs[2] = r->vmax;
	bhs[3] = r->vmin;
	bhs[4] = r->ahs_words;
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->isid, 6);
	put16(bhs + 14, r->tsih);
	put32(bhs + 16, r->itt);
	put16(bhs + 20, r->cid);
	put32(bhs + 24, r->cmdsn);
	put32(bhs + 28, r->exp_statsn);
}

int login_rsp_decode(const uint8_t *bhs, struct login_rsp *r,
		     const char **why)
{
	int ret;

	r->transit = bhs[1] & F_BIT;
	r->cont = bhs[1] & C_BIT;
	r->csg = (bhs[1] >> 2) & 3;
	r->nsg = bhs[1] & 3;
	r->vmax = bhs[2];
	r->vactive = bhs[3];
	r->dlength = get24(bhs + 5);
	memcpy(r->isid, bhs + 8, 6);
	r->tsih = get16(bhs + 14);
	r->itt = get32(bhs + 16);
	r->statsn = get32(bhs + 24);
	r->exp_cmdsn = get32(bhs + 28);
	r->max_cmdsn = get32(bhs + 32);
	r->status = get16(bhs + 36);

	ret = check_opcode(bhs, OP_LOGIN_RSP, why);
	if (ret)
		return ret;
	if ((bhs[0] & I_BIT) || (bhs[1] & 0x30) || bhs[4] ||
	    !zero(bhs + 20, 4) || !zero(bhs + 38, 10)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	return 0;
}

void login_rsp_encode(const struct login_rsp *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_LOGIN_RSP;
	bhs[1] = (r->transit ? F_BIT : 0) | (r->cont ? C_BIT : 0) |
		 (r->csg & 3) << 2 | (r->nsg & 3);
	bhs[2] = r->vmax;
	bhs[3] = r->vactive;
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->isid, 6);
	put16(bhs + 14, r->tsih);
	put32(bhs + 16, r->itt);
	put32(bhs + 24, r->statsn);
	put32(bhs + 28, r->exp_cmdsn);
	put32(bhs + 32, r->max_cmdsn);
	put16(bhs + 36, r->status);
}

int text_req_decode(const uint8_t *bhs, struct text_req *r, const char **why)
{
	int ret;

	r->immediate = bhs[0] & I_BIT;
	r->final = bhs[1] & F_BIT;
	r->cont = bhs[1] & C_BIT;
	r->dlength = get24(bhs + 5);
	memcpy(r->lun, bhs + 8, 8);
	r->itt = get32(bhs + 16);
	r->ttt = get32(bhs + 20);
	r->cmdsn = get32(bhs + 24);
	r->exp_statsn = get32(bhs + 28);

	ret = check_opcode(bhs, OP_TEXT_REQ, why);
	if (ret)
		return ret;
	if ((bhs[1] & 0x3f) || !zero(bhs + 2, 2) || !zero(bhs + 32, 16)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	if (bhs[4]) {
		*why = "AHS in a Text Request";
		return -EINVAL;
	}
	if (r->final && r->cont) {
		*why = "F and C bits both set";
		return -EINVAL;
	}
	if (r->itt == RSVD_TAG) {
		*why = "reserved ITT 0xffffffff";
		return -EINVAL;
	}
	return 0;
}

void text_req_encode(const struct text_req *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_TEXT_REQ | (r->immediate ? I_BIT : 0);
	bhs[1] = (r->final ? F_BIT : 0) | (r->cont ? C_BIT : 0);
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->lun, 8);
	put32(bhs + 16, r->itt);
	put32(bhs + 20, r->ttt);
	put32(bhs + 24, r->cmdsn);
	put32(bhs + 28, r->exp_statsn);
}

int text_rsp_decode(const uint8_t *bhs, struct text_rsp *r, const char **why)
{
	int ret;

	r->final = bhs[1] & F_BIT;
	r->cont = bhs[1] & C_BIT;
	r->dlength = get24(bhs + 5);
	memcpy(r->lun, bhs + 8, 8);
	r->itt = get32(bhs + 16);
	r->ttt = get32(bhs + 20);
	r->statsn = get32(bhs + 24);
	r->exp_cmdsn = get32(bhs + 28);
	r->max_cmdsn = get32(bhs + 32);

	ret = check_opcode(bhs, OP_TEXT_RSP, why);
	if (ret)
		return ret;
	if ((bhs[0] & I_BIT) || (bhs[1] & 0x3f) || !zero(bhs + 2, 3) ||
	    !zero(bhs + 36, 12)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	if (r->final && r->cont) {
		*why = "F and C bits both set";
		return -EINVAL;
	}
	return 0;
}

void text_rsp_encode(const struct text_rsp *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_TEXT_RSP;
	bhs[1] = (r->final ? F_BIT : 0) | (r->cont ? C_BIT : 0);
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->lun, 8);
	put32(bhs + 16, r->itt);
	put32(bhs + 20, r->ttt);
	put32(bhs + 24, r->statsn);
	put32(bhs + 28, r->exp_cmdsn);
	put32(bhs + 32, r->max_cmdsn);
}

int logout_req_decode(const uint8_t *bhs, struct logout_req *r,
		      const char **why)
{
	int ret;

	r->immediate = bhs[0] & I_BIT;
	r->reason = bhs[1] & 0x7f;
	r->itt = get32(bhs + 16);
	r->cid = get16(bhs + 20);
	r->cmdsn = get32(bhs + 24);
	r->exp_statsn = get32(bhs + 28);

	ret = check_opcode(bhs, OP_LOGOUT_REQ, why);
	if (ret)
		return ret;
	if (!(bhs[1] & F_BIT)) {
		*why = "bit 7 of byte 1 not set";
		return -EINVAL;
	}
	if (bhs[4] || get24(bhs + 5)) {
		*why = "AHS or data in a Logout Request";
		return -EINVAL;
	}
	if (!zero(bhs + 2, 2) || !zero(bhs + 8, 8) || !zero(bhs + 22, 2) ||
	    !zero(bhs + 32, 16)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	if (r->reason > 2) {
		*why = "unknown reason code";
		return -EINVAL;
	}
	return 0;
}

void logout_req_encode(const struct logout_req *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_LOGOUT_REQ | (r->immediate ? I_BIT : 0);
	bhs[1] = F_BIT | (r->reason & 0x7f);
	put32(bhs + 16, r->itt);
	put16(bhs + 20, r->cid);
	put32(bhs + 24, r->cmdsn);
	put32(bhs + 28, r->exp_statsn);
}

int logout_rsp_decode(const uint8_t *bhs, struct logout_rsp *r,
		      const char **why)
{
	int ret;

	r->response = bhs[2];
	r->itt = get32(bhs + 16);
	r->statsn = get32(bhs + 24);
	r->exp_cmdsn = get32(bhs + 28);
	r->max_cmdsn = get32(bhs + 32);
	r->time2wait = get16(bhs + 40);
	r->time2retain = get16(bhs + 42);

	ret = check_opcode(bhs, OP_LOGOUT_RSP, why);
	if (ret)
		return ret;
	if (bhs[1] != F_BIT || bhs[3] || !zero(bhs + 4, 12) ||
	    !zero(bhs + 20, 4) || !zero(bhs + 36, 4) || !zero(bhs + 44, 4)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	return 0;
}

void logout_rsp_encode(const struct logout_rsp *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_LOGOUT_RSP;
	bhs[1] = F_BIT;
	bhs[2] = r->response;
	put32(bhs + 16, r->itt);
	put32(bhs + 24, r->statsn);
	put32(bhs + 28, r->exp_cmdsn);
	put32(bhs + 32, r->max_cmdsn);
	put16(bhs + 40, r->time2wait);
	put16(bhs + 42, r->time2retain);
}

int nop_out_decode(const uint8_t *bhs, struct nop_out *r, const char **why)
{
	int ret;

	r->immediate = bhs[0] & I_BIT;
	r->dlength = get24(bhs + 5);
	memcpy(r->lun, bhs + 8, 8);
	r->itt = get32(bhs + 16);
	r->ttt = get32(bhs + 20);
	r->cmdsn = get32(bhs + 24);
	r->exp_statsn = get32(bhs + 28);

	ret = check_opcode(bhs, OP_NOP_OUT, why);
	if (ret)
		return ret;
	if (bhs[1] != F_BIT || !zero(bhs + 2, 3) || !zero(bhs + 32, 16)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	return 0;
}

void nop_out_encode(const struct nop_out *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_NOP_OUT | (r->immediate ? I_BIT : 0);
	bhs[1] = F_BIT;
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->lun, 8);
	put32(bhs + 16, r->itt);
	put32(bhs + 20, r->ttt);
	put32(bhs + 24, r->cmdsn);
	put32(bhs + 28, r->exp_statsn);
}

void nop_in_encode(const struct nop_in *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_NOP_IN;
	bhs[1] = F_BIT;
	put24(bhs + 5, r->dlength);
	memcpy(bhs + 8, r->lun, 8);
	put32(bhs + 16, r->itt);
	put32(bhs + 20, r->ttt);
	put32(bhs + 24, r->statsn);
	put32(bhs + 28, r->exp_cmdsn);
	put32(bhs + 32, r->max_cmdsn);
}

int nop_in_decode(const uint8_t *bhs, struct nop_in *r, const char **why)
{
	int ret;

	r->dlength = get24(bhs + 5);
	memcpy(r->lun, bhs + 8, 8);
	r->itt = get32(bhs + 16);
	r->ttt = get32(bhs + 20);
	r->statsn = get32(bhs + 24);
	r->exp_cmdsn = get32(bhs + 28);
	r->max_cmdsn = get32(bhs + 32);

	ret = check_opcode(bhs, OP_NOP_IN, why);
	if (ret)
		return ret;
	if (bhs[1] != F_BIT || !zero(bhs + 2, 3) || !zero(bhs + 36, 12)) {
		*why = "reserved field not zero";
		return -EINVAL;
	}
	return 0;
}

void reject_encode(const struct reject *r, uint8_t *bhs)
{
	memset(bhs, 0, BHS_LEN);
	bhs[0] = OP_REJECT;
	bhs[1] = F_BIT;
	bhs[2] = r->reason;
	put24(bhs + 5, BHS_LEN);
	put32(bhs + 16, RSVD_TAG);
	put32(bhs + 24, r->statsn);
	put32(bhs + 28, r->exp_cmdsn);
	put32(bhs + 32, r->max_cmdsn);
}

int reject_decode(const uint8_t *bhs, struct reject *r, const char **why)
{
	int ret;

	r->reason = bhs[2];
	r->statsn = get32(bhs + 24);
	r->exp_cmdsn = get32(bhs + 28);
	r->max_cmdsn = get32(bhs + 32);

	ret = check_opcode(bhs, OP_REJECT, why);
	if (ret)
		return ret;
	if (bhs[1] != F_BIT || get24(bhs + 5) != BHS_LEN ||
	    get32(bhs + 16) != RSVD_TAG) {
		*why = "malformed Reject";
		return -EINVAL;
	}
	return 0;
}
