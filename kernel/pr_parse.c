// SPDX-License-Identifier: GPL-2.0
/*
 * PERSISTENT RESERVE OUT's parameter list and its TransportIDs, parsed
 * (pr_parse.h). Every length in the list comes from the initiator: each
 * is held to what remains of the list, as "x > len - off" once off <= len
 * is known, never as "off + x > len", which a length near 4 GiB wraps.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/iet.h>

#include "compat_unaligned.h"
#include "pr_parse.h"

static u32 fault_length(struct iet_pr_fault *f)
{
	f->length = true;
	return 0;
}

static u32 fault_field(struct iet_pr_fault *f, u32 byte, int bit)
{
	f->length = false;
	f->byte = byte;
	f->bit = bit;
	return 0;
}

/*
 * The fields of the len bytes at p for service action sa (len the list
 * as it came, what the CDB's length and the data-out allow). Returns the
 * bytes the fields and TransportIDs take, or 0 with the fault.
 */
u32 iet_pr_parse_params(u8 sa, const u8 *p, u32 len,
			struct iet_pr_params *o, struct iet_pr_fault *f)
{
	memset(o, 0, sizeof(*o));
	if (len < PR_OUT_MIN)
		return fault_length(f);
	o->key = get_unaligned_be64(p);
	o->sa_key = get_unaligned_be64(p + 8);
	if (sa == PRO_REGISTER_MOVE) {
		o->unreg = p[17] & 0x02;
		o->aptpl = p[17] & 0x01;
		o->rtpi = get_unaligned_be16(p + 18);
		o->tpids_len = get_unaligned_be32(p + 20);
		o->tpids = p + 24;
		o->tpids_off = 24;
		if (o->tpids_len < 4 || o->tpids_len > len - 24)
			return fault_length(f);
		return 24 + o->tpids_len;
	}
	o->spec_i_pt = p[20] & 0x08;
	o->all_tg_pt = p[20] & 0x04;
	o->aptpl = p[20] & 0x01;
	if (o->spec_i_pt && sa != PRO_REGISTER)
		return fault_field(f, 20, 3);
	if (!o->spec_i_pt) {
		if (len != PR_OUT_MIN)
			return fault_length(f);
		return PR_OUT_MIN;
	}
	/* SPEC_I_PT: the TRANSPORTID PARAMETER DATA LENGTH must be there. */
	if (len < 28)
		return fault_length(f);
	o->tpids_len = get_unaligned_be32(p + 24);
	o->tpids = p + 28;
	o->tpids_off = 28;
	if (o->tpids_len > len - 28)
		return fault_length(f);
	return 28 + o->tpids_len;
}

/*
 * The initiator port a TransportID names (7.6.4.6): format 00b a name (all
 * its ports), 01b "name,i,0xISID". p has avail bytes; at is where p is in
 * the parameter list, for the fault. name has room for IET_NAME_MAX + 1.
 * Returns the TransportID's length (at most avail), or 0 with the fault.
 */
u32 iet_pr_parse_tpid(const u8 *p, u32 avail, u32 at, char *name,
		      u64 *isid, struct iet_pr_fault *f)
{
	const char *s = (const char *)p + 4, *sep;
	u32 len, n;
	u8 fmt;

	if (avail < 4 || (p[0] & 0x0f) != ISCSI_PROTO_ID)
		return fault_field(f, at, 3);
	fmt = p[0] >> 6;
	len = get_unaligned_be16(p + 2);
	if (fmt > 1 || p[0] & 0x30)
		return fault_field(f, at, 7);
	if (len < PR_TPID_MIN || len % 4 || len > avail - 4)
		return fault_field(f, at + 2, 7);
	n = strnlen(s, len);
	if (n == len || !n)
		return fault_field(f, at + 4, 7);
	*isid = IET_PR_ANY_ISID;
	if (fmt == 1) {
		char hex[13];

		/* ",i,0x" and 12 digits end the name, before its NUL. */
		sep = strnstr(s, ",i,0x", n);
		if (!sep || s + n - sep != 5 + 12)
			return fault_field(f, at + 4, 7);
		memcpy(hex, sep + 5, 12);
		hex[12] = 0;
		if (kstrtoull(hex, 16, isid))
			return fault_field(f, at + 4, 7);
		n = sep - s;
	}
	if (!n || n > IET_NAME_MAX)
		return fault_field(f, at + 4, 7);
	memcpy(name, s, n);
	name[n] = 0;
	return 4 + len;
}

/* How many TransportIDs the list holds (each checked), or -1 and the fault. */
int iet_pr_count_tpids(const struct iet_pr_params *o, struct iet_pr_fault *f)
{
	char name[IET_NAME_MAX + 1];
	u32 off = 0, len;
	u64 isid;
	int nr = 0;

	while (off < o->tpids_len) {
		len = iet_pr_parse_tpid(o->tpids + off, o->tpids_len - off,
					o->tpids_off + off, name, &isid, f);
		if (!len)
			return -1;
		off += len;
		nr++;
	}
	return nr;
}
