// SPDX-License-Identifier: GPL-2.0
/*
 * SPC-4 primary commands: INQUIRY and its VPD pages, REPORT LUNS, REQUEST
 * SENSE, TEST UNIT READY, MODE SENSE and MODE SELECT, START STOP UNIT.
 */
#include <linux/crc32c.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <scsi/scsi_common.h>

#include "iet.h"

#define INQ_VENDOR	"IET     "
#define INQ_PRODUCT	"VIRTUAL-DISK    "
#define INQ_REVISION	"0002"
#define VPD_MAX		512
#define MODE_SENSE_MAX	256

#define NAA6_LEN	16

/*
 * An IEEE company ID the administrator holds: with it, each logical unit
 * is also named by an NAA 6 designator (IEEE Registered Extended), which
 * Linux prefers for a device's WWID. Without one, NAA 3 (locally assigned)
 * and the T10 vendor ID name it, as they always did: taking somebody
 * else's OUI would be a lie, and a new designator would change every WWID.
 */
static unsigned int naa_company_id;

static int naa_company_id_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v > 0xffffff)
		return -ERANGE;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops naa_company_id_ops = {
	.set = naa_company_id_set,
	.get = param_get_uint,
};

module_param_cb(naa_company_id, &naa_company_id_ops, &naa_company_id, 0444);
MODULE_PARM_DESC(naa_company_id,
		 "an IEEE company ID (OUI, 24 bits) of yours: VPD page 0x83 then also names each logical unit by an NAA 6 designator under it (0: none)");

static void invalid_cdb(struct iet_scsi_req *req)
{
	iet_scsi_sense(req, ILLEGAL_REQUEST, 0x24, 0x00);
}

/* ---- INQUIRY ----------------------------------------------------------- */

static u32 inquiry_standard(struct iet_scsi_req *req, u8 *d)
{
	static const u16 versions[] = {
		0x00a0,		/* SAM-5 */
		0x0960,		/* iSCSI */
		0x0460,		/* SPC-4 */
		0x04c0,		/* SBC-3 */
	};
	unsigned int i;

	d[0] = req->lun ? TYPE_DISK : 0x7f;	/* PQ 3: no such LU */
	d[2] = 0x06;				/* SPC-4 */
	d[3] = 0x12;				/* HISUP, format 2 */
	d[4] = 96 - 5;
	d[5] = 0x18;				/* TPGS 01b (alua.c), 3PC */
	d[7] = 0x02;				/* CMDQUE */
	memcpy(d + 8, INQ_VENDOR, 8);
	memcpy(d + 16, INQ_PRODUCT, 16);
	memcpy(d + 32, INQ_REVISION, 4);
	for (i = 0; i < ARRAY_SIZE(versions); i++)
		put_unaligned_be16(versions[i], d + 58 + 2 * i);
	return 96;
}

static u32 vpd_supported(struct iet_scsi_req *req, u8 *d)
{
	static const u8 pages[] = {
		0x00, 0x80, 0x83, 0x86, 0x8f, 0xb0, 0xb1, 0xb2
	};

	memcpy(d + 4, pages, sizeof(pages));
	return 4 + sizeof(pages);
}

static u32 vpd_serial(struct iet_scsi_req *req, u8 *d)
{
	u32 len = strlen(req->lun->scsi_sn);

	memcpy(d + 4, req->lun->scsi_sn, len);
	return 4 + len;
}

/* One designation descriptor; returns its length. */
static u32 designator(u8 *d, u8 code_set, u8 assoc_type, bool iscsi_port,
		      const void *id, u32 len, u32 padded)
{
	d[0] = code_set;
	d[1] = assoc_type;
	if (iscsi_port) {
		d[0] |= 0x50;	/* protocol identifier: iSCSI */
		d[1] |= 0x80;	/* PIV */
	}
	d[3] = padded;
	memcpy(d + 4, id, len);
	return 4 + padded;
}

/* NAA 3, locally assigned: 60 bits of the ScsiId's hash (EXTENDED COPY too). */
void iet_lun_naa(const struct iet_lun *lun, u8 *naa)
{
	u32 len = strlen(lun->scsi_id);
	u64 v;

	v = (u64)crc32c(0x5a5a5a5a, lun->scsi_id, len) << 32 |
	    crc32c(~0, lun->scsi_id, len);
	v = (v & ~(0xfULL << 60)) | 0x3ULL << 60;
	put_unaligned_be64(v, naa);
}

/*
 * NAA 6: the company ID, then 100 bits of the ScsiId's hashes (the low 36
 * of NAA 3's and 64 more).
 */
static void lun_naa6(const struct iet_lun *lun, u32 company, u8 *naa)
{
	u32 len = strlen(lun->scsi_id);
	u8 naa3[IET_NAA_LEN];
	u64 v;

	iet_lun_naa(lun, naa3);
	v = 0x6ULL << 60 | (u64)company << 36 |
	    (get_unaligned_be64(naa3) & GENMASK_ULL(35, 0));
	put_unaligned_be64(v, naa);
	v = (u64)crc32c(0xc3c3c3c3, lun->scsi_id, len) << 32 |
	    crc32c(0x3c3c3c3c, lun->scsi_id, len);
	put_unaligned_be64(v, naa + 8);
}

/*
 * Identities derive from ScsiId alone, so that two targets configured with
 * the same ScsiId (an HA pair) present the same logical unit to multipath.
 */
static u32 vpd_identification(struct iet_scsi_req *req, u8 *d)
{
	struct iet_lun *lun = req->lun;
	const char *name = lun->target->name;
	char t10[8 + IET_SCSI_ID_MAX];
	u16 tpgt = req->nexus->tpgt;
	u32 id_len = strlen(lun->scsi_id);
	u32 off = 4, len;
	u32 company = READ_ONCE(naa_company_id);
	u8 naa[NAA6_LEN], port[4] = { 0 };
	char *sname;

	memcpy(t10, INQ_VENDOR, 8);
	memcpy(t10 + 8, lun->scsi_id, id_len);
	off += designator(d + off, 0x02, 0x01, false, t10, 8 + id_len,
			  8 + id_len);

	if (company) {
		lun_naa6(lun, company, naa);
		off += designator(d + off, 0x01, 0x03, false, naa, NAA6_LEN,
				  NAA6_LEN);
	}

	iet_lun_naa(lun, naa);
	off += designator(d + off, 0x01, 0x03, false, naa, IET_NAA_LEN,
			  IET_NAA_LEN);

	/*
	 * The target port the command came through (its portal group: alua.c)
	 * by relative port and SCSI name, and its target port group.
	 */
	put_unaligned_be16(tpgt, port + 2);
	off += designator(d + off, 0x01, 0x14, true, port, 4, 4);
	off += designator(d + off, 0x01, 0x15, true, port, 4, 4);
	len = strlen(name) + sizeof(",t,0x0001");	/* with its NUL */
	sname = kzalloc(ALIGN(len, 4), GFP_NOIO);
	if (sname) {
		snprintf(sname, len, "%s,t,0x%04x", name, tpgt);
		off += designator(d + off, 0x03, 0x18, true, sname, len,
				  ALIGN(len, 4));
		kfree(sname);
	}
	return off;
}

/* Extended INQUIRY data (SPC-4 7.8.7). */
static u32 vpd_extended(struct iet_scsi_req *req, u8 *d)
{
	d[5] = 0x07;			/* HEADSUP, ORDSUP, SIMPSUP (tset.c) */
	d[6] = 0x01;			/* V_SUP: a write cache, if on */
	/*
	 * LUICLR: REPORTED LUNS DATA HAS CHANGED, once reported, is cleared
	 * on every LUN of the nexus (iet_ua_add() with IET_LUN_ANY).
	 */
	d[7] = 0x01;
	d[13] = IET_SENSE_MAX;		/* MAXIMUM SUPPORTED SENSE DATA LENGTH */
	return 4 + 0x3c;
}

static u32 vpd_block_limits(struct iet_scsi_req *req, u8 *d)
{
	u32 max = IET_MAX_XFER >> req->lun->blkbits;

	/*
	 * OPTIMAL TRANSFER LENGTH GRANULARITY: a physical block, so that
	 * initiators (Linux's io_min) spare a 512e disk read-modify-writes.
	 * The optimal length must be a multiple of it: Linux ignores it else.
	 */
	BUILD_BUG_ON(IET_MAX_XFER % IET_PHYS_BLOCK_SIZE_MAX);
	put_unaligned_be16(1 << req->lun->pbexp, d + 6);
	put_unaligned_be32(max, d + 8);		/* MAXIMUM TRANSFER LENGTH */
	put_unaligned_be32(max, d + 12);	/* OPTIMAL TRANSFER LENGTH */
	iet_thin_block_limits(req->lun, d);
	return 4 + 0x3c;
}

static u32 vpd_block_characteristics(struct iet_scsi_req *req, u8 *d)
{
	/*
	 * MEDIUM ROTATION RATE as configured: 1 (non-rotating) makes Linux
	 * treat the disk as an SSD. No form factor.
	 */
	put_unaligned_be16(req->lun->rotation_rate, d + 4);
	/*
	 * WABEREQ 01b: after a BLOCK ERASE, reads succeed (with zeros: the
	 * blocks are deallocated). WACEREQ 00b: no CRYPTOGRAPHIC ERASE.
	 */
	if (iet_sanitize_block_erase(req->lun))
		d[7] = 0x40;
	return 4 + 0x3c;
}

/* Logical block provisioning (SBC-3 6.5.4): thin where the backend can. */
static u32 vpd_provisioning(struct iet_scsi_req *req, u8 *d)
{
	struct iet_lun *lun = req->lun;

	if (lun->thin) {
		d[5] = 0x80 | 0x40 | 0x20;	/* LBPU, LBPWS, LBPWS10 */
		if (lun->lbprz)
			d[5] |= 0x04;		/* LBPRZ */
		d[6] = 0x02;			/* thin provisioned */
	}
	return 8;
}

static const struct {
	u8 page;
	u32 (*build)(struct iet_scsi_req *req, u8 *d);
} vpd_pages[] = {
	{ 0x00, vpd_supported },
	{ 0x80, vpd_serial },
	{ 0x83, vpd_identification },
	{ 0x86, vpd_extended },
	{ 0x8f, iet_vpd_third_party_copy },
	{ 0xb0, vpd_block_limits },
	{ 0xb1, vpd_block_characteristics },
	{ 0xb2, vpd_provisioning },
};

static int inquiry_execute(struct iet_scsi_req *req)
{
	u32 alloc = req->data_len, len = 0;
	unsigned int i;
	u8 *d;

	d = kzalloc(VPD_MAX, GFP_NOIO);
	if (!d) {
		req->status = SAM_STAT_BUSY;
		return -ENOMEM;
	}
	if (!(req->cdb[1] & 0x01)) {
		len = inquiry_standard(req, d);
	} else {
		for (i = 0; i < ARRAY_SIZE(vpd_pages); i++) {
			if (vpd_pages[i].page != req->cdb[2])
				continue;
			d[0] = TYPE_DISK;
			d[1] = req->cdb[2];
			len = vpd_pages[i].build(req, d);
			put_unaligned_be16(len - 4, d + 2);
		}
	}
	iet_scsi_set_data(req, 0, d, len);
	req->data_len = min(alloc, len);
	kfree(d);
	return 0;
}

static void inquiry_parse(struct iet_scsi_req *req)
{
	bool evpd = req->cdb[1] & 0x01;
	unsigned int i;

	if (!evpd && req->cdb[2])
		return iet_scsi_invalid_field(req, 2, -1);
	if (evpd) {
		/* VPD pages describe a logical unit: there must be one. */
		if (!req->lun)
			return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x25, 0x00);
		for (i = 0; i < ARRAY_SIZE(vpd_pages); i++)
			if (vpd_pages[i].page == req->cdb[2])
				break;
		if (i == ARRAY_SIZE(vpd_pages))
			return iet_scsi_invalid_field(req, 2, -1);
	}
	iet_scsi_data_in(req, get_unaligned_be16(req->cdb + 3), VPD_MAX);
	req->execute = inquiry_execute;
}

/* ---- REPORT LUNS, REQUEST SENSE ---------------------------------------- */

static int report_luns_execute(struct iet_scsi_req *req)
{
	struct iet_target *target = req->nexus->target;
	u32 alloc = req->data_len, n = 0;
	struct iet_lun *lun;
	struct scsi_lun sl;
	unsigned long index;
	u8 hdr[8] = { 0 };

	rcu_read_lock();
	xa_for_each(&target->luns, index, lun) {
		int_to_scsilun(index, &sl);
		iet_scsi_set_data(req, 8 + 8 * n, &sl, sizeof(sl));
		n++;
	}
	rcu_read_unlock();
	put_unaligned_be32(8 * n, hdr);
	iet_scsi_set_data(req, 0, hdr, sizeof(hdr));
	req->data_len = min(alloc, 8 + 8 * n);
	return 0;
}

static void report_luns_parse(struct iet_scsi_req *req)
{
	u32 alloc = get_unaligned_be32(req->cdb + 6), n = 0;
	struct iet_lun *lun;
	unsigned long index;

	/* SELECT REPORT 0, 1, 2: all of ours are plain logical units. */
	if (req->cdb[2] > 2 || alloc < 16)
		return invalid_cdb(req);
	/* Room for the LUNs there are now; one added meanwhile is cut off. */
	rcu_read_lock();
	xa_for_each(&req->nexus->target->luns, index, lun)
		n++;
	rcu_read_unlock();
	iet_scsi_data_in(req, alloc, 8 + 8 * max(n, 1U));
	req->execute = report_luns_execute;
}

static int request_sense_execute(struct iet_scsi_req *req)
{
	bool desc = req->cdb[1] & 0x01;
	u8 sense[IET_SENSE_MAX] = { 0 };
	u8 key = NO_SENSE, asc = 0, ascq = 0;
	u32 len;

	if (iet_ua_take(req->nexus, req->lun_id, &asc, &ascq))
		key = UNIT_ATTENTION;
	else if (!req->lun)
		key = ILLEGAL_REQUEST, asc = 0x25;
	/* A sanitize running (its progress) or failed, where no UA is. */
	if (key != NO_SENSE ||
	    !iet_sanitize_sense(req->lun, desc, sense, &len)) {
		scsi_build_sense_buffer(desc, sense, key, asc, ascq);
		len = desc ? 8 : 18;
	}
	iet_scsi_set_data(req, 0, sense, len);
	req->data_len = min(req->data_len, len);
	return 0;
}

static void request_sense_parse(struct iet_scsi_req *req)
{
	iet_scsi_data_in(req, req->cdb[4], IET_SENSE_MAX);
	req->execute = request_sense_execute;
}

/* ---- MODE SENSE -------------------------------------------------------- */

enum { PC_CURRENT, PC_CHANGEABLE, PC_DEFAULT, PC_SAVED };

/* The parameters MODE SELECT changes, current or default. */
struct mode_vals {
	bool wce;
	bool swp;
	bool d_sense;
	bool tas;
};

static void mode_current(struct iet_lun *lun, struct mode_vals *v)
{
	v->wce = READ_ONCE(lun->wce);
	v->swp = READ_ONCE(lun->swp);
	v->d_sense = READ_ONCE(lun->d_sense);
	v->tas = READ_ONCE(lun->tas);
}

/*
 * Each page fills d with the values of v (or, changeable, with a mask of
 * the bits MODE SELECT may change) and returns its length.
 */
static u32 page_rw_recovery(struct iet_lun *lun, const struct mode_vals *v,
			    bool mask, u8 *d)
{
	d[0] = 0x01;
	d[1] = 0x0a;
	return 12;
}

/*
 * A LUN's mode parameters are every initiator's: where the LUN does not
 * let initiators change them (ModeSelect=No, the default of IOMode=wt)
 * MODE SENSE reports nothing changeable, and MODE SELECT changing a bit
 * ends INVALID FIELD IN PARAMETER LIST.
 */

/* WCE: changeable unless the LUN is write-protected. */
static u32 page_caching(struct iet_lun *lun, const struct mode_vals *v,
			bool mask, u8 *d)
{
	d[0] = 0x08;
	d[1] = 0x12;
	if (mask ? lun->mode_select && lun->iomode != IET_IOMODE_RO : v->wce)
		d[2] = 0x04;
	return 20;
}

/* D_SENSE, SWP and TAS. */
static u32 page_control(struct iet_lun *lun, const struct mode_vals *v,
			bool mask, u8 *d)
{
	d[0] = 0x0a;
	d[1] = 0x0a;
	if (mask && !lun->mode_select)
		return 12;
	if (mask) {
		d[2] = 0x04;
		d[4] = 0x08;
		d[5] = 0x40;
		return 12;
	}
	/* TST 001b: a task set per I_T nexus (tset.c); GLTSD, D_SENSE */
	d[2] = 0x20 | 0x02 | (v->d_sense ? 0x04 : 0);
	/* QUEUE ALGORITHM MODIFIER 1: SIMPLE ones in any order */
	d[3] = 0x10;
	d[4] = v->swp ? 0x08 : 0;
	/* TAS: what another nexus aborts ends TASK ABORTED (tmf.c) */
	d[5] = v->tas ? 0x40 : 0;
	put_unaligned_be16(0xffff, d + 8);	/* BUSY TIMEOUT: unlimited */
	return 12;
}

static u32 page_exceptions(struct iet_lun *lun, const struct mode_vals *v,
			   bool mask, u8 *d)
{
	d[0] = 0x1c;
	d[1] = 0x0a;
	if (!mask)
		d[2] = 0x08;	/* DEXCPT: no informational exceptions */
	return 12;
}

static const struct {
	u8 page;
	u32 (*build)(struct iet_lun *lun, const struct mode_vals *v, bool mask,
		     u8 *d);
} mode_pages[] = {
	{ 0x01, page_rw_recovery },
	{ 0x08, page_caching },
	{ 0x0a, page_control },
	{ 0x1c, page_exceptions },
};

#define MODE_PAGE_MAX	20

static u32 mode_page(struct iet_lun *lun, unsigned int i, u8 pc, u8 *d)
{
	struct mode_vals v = { .wce = lun->iomode == IET_IOMODE_WB,
			       .tas = true };

	if (pc == PC_CURRENT)
		mode_current(lun, &v);
	return mode_pages[i].build(lun, &v, pc == PC_CHANGEABLE, d);
}

static int mode_sense_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	bool ten = req->cdb[0] == MODE_SENSE_10;
	bool dbd = req->cdb[1] & 0x08;
	bool llba = ten && (req->cdb[1] & 0x10);
	u8 pc = req->cdb[2] >> 6, page = req->cdb[2] & 0x3f;
	u32 hlen = ten ? 8 : 4, off, bdlen = dbd ? 0 : llba ? 16 : 8;
	u8 wp = lun->iomode == IET_IOMODE_RO || READ_ONCE(lun->swp) ? 0x80 : 0;
	u8 d[MODE_SENSE_MAX] = { 0 };
	unsigned int i;

	off = hlen;
	if (bdlen == 8) {
		put_unaligned_be32(min_t(u64, READ_ONCE(lun->blocks), 0xffffffff),
				   d + off);
		put_unaligned_be32(lun->block_size, d + off + 4);
	} else if (bdlen == 16) {
		put_unaligned_be64(READ_ONCE(lun->blocks), d + off);
		put_unaligned_be32(lun->block_size, d + off + 12);
	}
	off += bdlen;
	for (i = 0; i < ARRAY_SIZE(mode_pages); i++)
		if (page == 0x3f || page == mode_pages[i].page)
			off += mode_page(lun, i, pc, d + off);

	/* The device-specific parameter: write protect, DPO and FUA. */
	if (ten) {
		put_unaligned_be16(off - 2, d);
		d[3] = wp | 0x10;
		d[4] = llba ? 0x01 : 0;
		put_unaligned_be16(bdlen, d + 6);
	} else {
		d[0] = off - 1;
		d[2] = wp | 0x10;
		d[3] = bdlen;
	}
	iet_scsi_set_data(req, 0, d, off);
	req->data_len = min(req->data_len, off);
	return 0;
}

static void mode_sense_parse(struct iet_scsi_req *req)
{
	bool ten = req->cdb[0] == MODE_SENSE_10;
	u8 pc = req->cdb[2] >> 6, page = req->cdb[2] & 0x3f;
	u8 subpage = req->cdb[3];
	unsigned int i;

	if (pc == PC_SAVED)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x39, 0x00);
	if (subpage && !(page == 0x3f && subpage == 0xff))
		return invalid_cdb(req);
	for (i = 0; i < ARRAY_SIZE(mode_pages); i++)
		if (page == mode_pages[i].page)
			break;
	if (page != 0x3f && i == ARRAY_SIZE(mode_pages))
		return invalid_cdb(req);
	iet_scsi_data_in(req, ten ? get_unaligned_be16(req->cdb + 7) :
			 req->cdb[4], MODE_SENSE_MAX);
	req->execute = mode_sense_execute;
}

/* ---- MODE SELECT ------------------------------------------------------- */

#define MODE_SELECT_MAX	256

/* One mode page of a MODE SELECT list at p (len bytes left) into v. */
static int mode_select_page(struct iet_scsi_req *req, const u8 *p, u32 len,
			    u32 off, struct mode_vals *v)
{
	struct iet_lun *lun = req->lun;
	u8 cur[MODE_PAGE_MAX] = { 0 }, mask[MODE_PAGE_MAX] = { 0 };
	struct mode_vals now;
	unsigned int i;
	u32 plen, j;

	if (len < 2 || len < 2 + p[1]) {
		iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
		return -EINVAL;
	}
	if (p[0] & 0x40) {			/* SPF: no subpages here */
		iet_scsi_invalid_param(req, off, 6);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(mode_pages); i++)
		if (mode_pages[i].page == (p[0] & 0x3f))
			break;
	if (i == ARRAY_SIZE(mode_pages)) {
		iet_scsi_invalid_param(req, off, 5);
		return -EINVAL;
	}
	mode_current(lun, &now);
	plen = mode_pages[i].build(lun, &now, false, cur);
	mode_pages[i].build(lun, &now, true, mask);
	if (p[1] + 2 != plen) {
		iet_scsi_invalid_param(req, off + 1, -1);
		return -EINVAL;
	}
	/* Every bit that cannot change must be as it is. */
	for (j = 2; j < plen; j++) {
		if ((p[j] ^ cur[j]) & ~mask[j]) {
			iet_scsi_invalid_param(req, off + j,
					       fls((p[j] ^ cur[j]) & ~mask[j]) - 1);
			return -EINVAL;
		}
	}
	if (mode_pages[i].page == 0x08) {
		v->wce = p[2] & 0x04;
	} else if (mode_pages[i].page == 0x0a) {
		v->d_sense = p[2] & 0x04;
		v->swp = p[4] & 0x08;
		v->tas = p[5] & 0x40;
	}
	return plen;
}

/*
 * The whole list is checked before anything changes. Turning the write
 * cache off flushes it first: every write answered before is then as
 * stable as those after. The other I_T nexuses learn of a change by MODE
 * PARAMETERS CHANGED.
 */
static int mode_select_execute(struct iet_scsi_req *req)
{
	struct iet_lun *lun = req->lun;
	bool ten = req->cdb[0] == MODE_SELECT_10;
	u32 len = req->buf_len, hlen = ten ? 8 : 4, bdlen, off;
	struct mode_vals v, old;
	struct iet_buf none = { };
	u8 p[MODE_SELECT_MAX];
	int ret;

	if (!len)
		return 0;
	if (len < hlen)
		goto length_error;
	iet_buf_copy_from(&req->buf, 0, p, len);
	bdlen = ten ? get_unaligned_be16(p + 6) : p[3];
	if (hlen + bdlen > len)
		goto length_error;
	if (bdlen) {
		bool llba = ten && (p[4] & 0x01);
		u64 blocks = llba ? get_unaligned_be64(p + hlen) :
				    get_unaligned_be32(p + hlen);
		u32 bl = llba ? get_unaligned_be32(p + hlen + 12) :
				get_unaligned_be24(p + hlen + 5);

		/* One descriptor, of what the LUN is (or 0 blocks). */
		if (bdlen != (llba ? 16 : 8)) {
			iet_scsi_invalid_param(req, ten ? 6 : 3, -1);
			return 0;
		}
		/* As MODE SENSE reports it: short, at most 0xffffffff. */
		if (blocks && blocks != (llba ? READ_ONCE(lun->blocks) :
					 min_t(u64, READ_ONCE(lun->blocks),
					       U32_MAX))) {
			iet_scsi_invalid_param(req, hlen, -1);
			return 0;
		}
		if (bl != lun->block_size) {
			iet_scsi_invalid_param(req, hlen + (llba ? 12 : 5), -1);
			return 0;
		}
	}
	mode_current(lun, &old);
	v = old;
	for (off = hlen + bdlen; off < len; off += ret) {
		ret = mode_select_page(req, p + off, len - off, off, &v);
		if (ret < 0)
			return 0;
	}
	if (old.wce && !v.wce) {
		/* A closed backing was flushed as it closed (lun.c). */
		ret = iet_lun_io_sync(lun, IET_IO_FLUSH, 0, &none, 0, false);
		if (ret && ret != -ENXIO) {
			iet_scsi_io_error(req, IET_IO_FLUSH, ret);
			return 0;
		}
	}
	if (!memcmp(&old, &v, sizeof(v)))
		return 0;
	WRITE_ONCE(lun->wce, v.wce);
	WRITE_ONCE(lun->swp, v.swp);
	WRITE_ONCE(lun->d_sense, v.d_sense);
	WRITE_ONCE(lun->tas, v.tas);
	pr_info("target %u lun %u: mode parameters set by an initiator: write cache %s, software write protect %s, %s sense, task aborted status %s\n",
		lun->target->tid, lun->lun, v.wce ? "on" : "off",
		v.swp ? "on" : "off", v.d_sense ? "descriptor" : "fixed",
		v.tas ? "on" : "off");
	iet_ua_add(lun->target, req->nexus, lun->lun, 0x2a, 0x01);
	return 0;

length_error:
	iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
	return 0;
}

static void mode_select_parse(struct iet_scsi_req *req)
{
	bool ten = req->cdb[0] == MODE_SELECT_10;
	u32 len = ten ? get_unaligned_be16(req->cdb + 7) : req->cdb[4];

	if (!(req->cdb[1] & 0x10))		/* PF=0: a vendor format */
		return iet_scsi_invalid_field(req, 1, 4);
	if (req->cdb[1] & 0x01)			/* SP: nothing is saved */
		return iet_scsi_invalid_field(req, 1, 0);
	if (len > MODE_SELECT_MAX)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
	req->data_out = true;
	req->xfer_len = len;
	req->buf_len = req->want_write ? min(len, req->edtl) : 0;
	if (req->buf_len < len)
		return iet_scsi_sense(req, ILLEGAL_REQUEST, 0x1a, 0x00);
	req->blocking = true;
	req->execute = mode_select_execute;
}

/* ---- commands without data ------------------------------------------- */

static void no_data(struct iet_scsi_req *req)
{
	req->data_len = 0;
	req->xfer_len = 0;
	req->buf_len = 0;
}

#define CONTROL	0x04	/* NACA, refused: no ACA */

const struct iet_opcode iet_spc_opcodes[] = {
	{ .op = TEST_UNIT_READY, .flags = IET_OP_PR_FREE,
	  .len = 6, .timeout = 10, .parse = no_data,
	  .usage = { TEST_UNIT_READY, 0, 0, 0, 0, CONTROL } },
	{ .op = REQUEST_SENSE, .len = 6, .timeout = 10,
	  .flags = IET_OP_ANY_LUN, .parse = request_sense_parse,
	  .usage = { REQUEST_SENSE, 0x01, 0, 0, 0xff, CONTROL } },
	{ .op = INQUIRY, .len = 6, .timeout = 10, .flags = IET_OP_ANY_LUN,
	  .parse = inquiry_parse,
	  .usage = { INQUIRY, 0x01, 0xff, 0xff, 0xff, CONTROL } },
	{ .op = MODE_SENSE, .flags = IET_OP_PR_READ | IET_OP_ALUA_STANDBY,
	  .len = 6, .timeout = 10, .parse = mode_sense_parse,
	  .usage = { MODE_SENSE, 0x08, 0xff, 0xff, 0xff, CONTROL } },
	/* Power conditions and loading do not apply: accepted. */
	{ .op = MODE_SELECT, .flags = IET_OP_ALUA_STANDBY,
	  .len = 6, .timeout = 10, .parse = mode_select_parse,
	  .usage = { MODE_SELECT, 0x11, 0, 0, 0xff, CONTROL } },
	{ .op = START_STOP, .len = 6, .timeout = 10, .parse = no_data,
	  .usage = { START_STOP, 0x01, 0, 0x0f, 0xf7, CONTROL } },
	{ .op = ALLOW_MEDIUM_REMOVAL, .len = 6, .timeout = 10,
	  .parse = no_data,
	  .usage = { ALLOW_MEDIUM_REMOVAL, 0, 0, 0, 0x03, CONTROL } },
	{ .op = MODE_SELECT_10, .flags = IET_OP_ALUA_STANDBY,
	  .len = 10, .timeout = 10, .parse = mode_select_parse,
	  .usage = { MODE_SELECT_10, 0x11, 0, 0, 0, 0, 0, 0xff, 0xff,
		     CONTROL } },
	{ .op = MODE_SENSE_10, .flags = IET_OP_PR_READ | IET_OP_ALUA_STANDBY,
	  .len = 10, .timeout = 10,
	  .parse = mode_sense_parse,
	  .usage = { MODE_SENSE_10, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff,
		     CONTROL } },
	{ .op = REPORT_LUNS, .len = 12, .timeout = 10,
	  .flags = IET_OP_ANY_LUN, .parse = report_luns_parse,
	  .usage = { REPORT_LUNS, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
		     0, CONTROL } },
	{ .op = MAINTENANCE_IN, .sa = MI_REPORT_SUPPORTED_OPERATION_CODES,
	  .flags = IET_OP_SA | IET_OP_PR_READ, .len = 12, .timeout = 10,
	  .parse = iet_opcodes_report_parse,
	  .usage = { MAINTENANCE_IN, 0x1f, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff,
		     0xff, 0xff, 0, CONTROL } },
	{ .op = MAINTENANCE_IN, .sa = MI_REPORT_SUPPORTED_TASK_MANAGEMENT_FUNCTIONS,
	  .flags = IET_OP_SA | IET_OP_PR_READ, .len = 12, .timeout = 10,
	  .parse = iet_tmf_report_parse,
	  .usage = { MAINTENANCE_IN, 0x1f, 0x80, 0, 0, 0, 0xff, 0xff, 0xff,
		     0xff, 0, CONTROL } },
	{ .op = MAINTENANCE_IN, .sa = MI_REPORT_TARGET_PGS,
	  .flags = IET_OP_SA | IET_OP_PR_FREE | IET_OP_ALUA_ANY, .len = 12,
	  .timeout = 10, .parse = iet_alua_rtpg_parse,
	  .usage = { MAINTENANCE_IN, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff,
		     0xff, 0, CONTROL } },
};

const unsigned int iet_spc_nr_opcodes = ARRAY_SIZE(iet_spc_opcodes);
