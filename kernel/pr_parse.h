/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parameter list of PERSISTENT RESERVE OUT and the TransportIDs in it
 * (SPC-4 6.16.3, 6.16.4, 7.6.4.6), parsed by pr_parse.c: bytes in, fields
 * or the field at fault out. Nothing here knows a command, a LUN or a
 * lock, so that the same pr_parse.c builds on the host, for the fuzzer
 * (tests/fuzz/fuzz_pr_tpid.c); pr.c turns a fault into sense data.
 */
#ifndef IET_PR_PARSE_H
#define IET_PR_PARSE_H

#include <linux/limits.h>
#include <linux/types.h>

/* SPC-4 6.16.2: PERSISTENT RESERVE OUT service actions */
#define PRO_REGISTER		0x00
#define PRO_RESERVE		0x01
#define PRO_RELEASE		0x02
#define PRO_CLEAR		0x03
#define PRO_PREEMPT		0x04
#define PRO_PREEMPT_ABORT	0x05
#define PRO_REGISTER_IGNORE	0x06
#define PRO_REGISTER_MOVE	0x07

#define PR_OUT_MIN		24
#define PR_OUT_MAX		8192	/* the parameter list, with TransportIDs */
#define PR_TPID_MIN		20	/* SPC-4 7.6.4.6: an iSCSI TransportID */
#define ISCSI_PROTO_ID		0x05

#define IET_PR_ANY_ISID		U64_MAX		/* every port of the name */

/* The fields of a parameter list, as far as its service action has them. */
struct iet_pr_params {
	u64 key;			/* RESERVATION KEY */
	u64 sa_key;			/* SERVICE ACTION RESERVATION KEY */
	bool spec_i_pt;
	bool all_tg_pt;
	bool aptpl;
	bool unreg;			/* REGISTER AND MOVE */
	u16 rtpi;			/* REGISTER AND MOVE */
	const u8 *tpids;		/* TransportIDs, in the list */
	u32 tpids_len;
	u32 tpids_off;			/* where they start in the list */
};

/*
 * What is wrong with a parameter list: PARAMETER LIST LENGTH ERROR, or
 * INVALID FIELD IN PARAMETER LIST at this byte of the list and bit.
 */
struct iet_pr_fault {
	bool length;
	u32 byte;
	int bit;
};

u32 iet_pr_parse_params(u8 sa, const u8 *p, u32 len,
			struct iet_pr_params *o, struct iet_pr_fault *f);
u32 iet_pr_parse_tpid(const u8 *p, u32 avail, u32 at, char *name,
		      u64 *isid, struct iet_pr_fault *f);
int iet_pr_count_tpids(const struct iet_pr_params *o,
		       struct iet_pr_fault *f);

#endif
