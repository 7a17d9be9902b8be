/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietd's data model in plain C: what /etc/ietd.conf describes, shared by the
 * config parser, login negotiation, the kernel facade and ietadm's server.
 */
#ifndef IET_USR_MODEL_H
#define IET_USR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/iet.h>

#include "wipe.h"

#define IET_KEY_COUNT	(IET_KEY_MAX + 1)	/* index: enum iet_key */
#define IET_TP_COUNT	(IET_TP_MAX + 1)	/* index: enum iet_tparam */

/* Digest offer masks in a target's keys[IET_KEY_*_DIGEST]. */
#define DIGEST_MASK_NONE	(1u << IET_DIGEST_NONE)
#define DIGEST_MASK_CRC32C	(1u << IET_DIGEST_CRC32C)

#define CHAP_NAME_MAX	255
#define CHAP_SECRET_MAX	255
/* Shorter secrets are refused unless the configuration says otherwise. */
#define CHAP_SECRET_MIN	12
/* "[IPv6 address]:port" or "host.name:port" */
#define REDIRECT_MAX	272

/* CHAP algorithms by their IANA numbers (RFC 7143 12.1.3, RFC 7144). */
enum chap_alg_id {
	CHAP_MD5	= 5,
	CHAP_SHA1	= 6,
	CHAP_SHA256	= 7,
	CHAP_SHA3_256	= 8,
};
#define CHAP_ALG_BIT(id)	(1u << (id))
#define CHAP_ALGS_ALL	(CHAP_ALG_BIT(CHAP_MD5) | CHAP_ALG_BIT(CHAP_SHA1) | \
			 CHAP_ALG_BIT(CHAP_SHA256) | CHAP_ALG_BIT(CHAP_SHA3_256))

/* A latency histogram: IET_HIST_NR_BUCKETS log2 buckets (uapi iet.h). */
struct khist {
	uint64_t sum_ns;
	uint64_t counts[IET_HIST_NR_BUCKETS];
};

struct kstats {
	uint64_t cmds;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t errors;
	uint64_t op_cmds[IET_SOP_NR];	/* enum iet_stat_op */
	uint64_t sense[16];		/* CHECK CONDITIONs by sense key */
	uint64_t conflicts;		/* RESERVATION CONFLICT */
	uint64_t busy;			/* BUSY, TASK SET FULL */
	struct khist hist[IET_LAT_NR][IET_SOP_HIST_NR];
};

/*
 * ModeSelect: whether initiators may change a LUN's mode parameters. Not
 * given, or given as its default, it is as IOMode says: No for wt.
 */
enum lun_mode_select {
	MODE_SELECT_DEFAULT,
	MODE_SELECT_NO,
	MODE_SELECT_YES,
};

struct lun_conf {
	uint32_t lun;
	uint32_t type;			/* enum iet_lun_type */
	uint32_t iomode;		/* enum iet_iomode */
	char path[IET_PATH_MAX + 1];	/* "" for nullio */
	char scsi_id[IET_SCSI_ID_MAX + 1];	/* "" = derived by ietd */
	char scsi_sn[IET_SCSI_SN_MAX + 1];	/* "" = derived by ietd */
	uint32_t block_size;		/* 512 unless configured */
	uint32_t phys_block_size;	/* 0 = as block_size */
	uint32_t rotation_rate;		/* VPD 0xb1; 0 = not reported */
	bool thin_off;			/* ThinProvisioning=No */
	uint8_t mode_select;		/* enum lun_mode_select: ModeSelect= */
	uint64_t blocks;		/* nullio size; else closed size; 0 = default */
	unsigned int line;		/* where it was configured, 0 = ietadm */
};

#define ACCOUNT_INITIATORS_MAX	8

struct account {
	char user[CHAP_NAME_MAX + 1];
	char secret[CHAP_SECRET_MAX + 1];
	unsigned int line;		/* where it was configured, 0 = ietadm */
	/*
	 * An IncomingUser's: the InitiatorNames it may log in as (compared
	 * as iSCSI names are, without case); none: any.
	 */
	char initiators[ACCOUNT_INITIATORS_MAX][IET_NAME_MAX + 1];
	unsigned int nr_initiators;
};

/* Whether the account may log in as initiator (true without a list). */
bool account_admits(const struct account *acc, const char *initiator);
/* Its initiators as "name,name" ("" for none) into buf. */
void account_initiators_format(const struct account *acc, char *buf,
			       size_t len);

/*
 * CHAP accounts of one scope: a target's, or the global section's (which
 * guard discovery sessions). Incoming accounts authenticate initiators;
 * the outgoing one is what the target answers with in mutual CHAP.
 */
struct auth {
	struct account *incoming;
	size_t nr_incoming;
	struct account outgoing;
	bool has_outgoing;
	uint32_t chap_algs;		/* CHAP_ALG_BIT()s allowed, 0: not set */
	unsigned int algs_line;
};

/* Where a running target came from, which decides what a reload may do. */
enum target_origin {
	ORIGIN_FILE,			/* ietd.conf: the file owns it */
	ORIGIN_ADMIN,			/* created with ietadm at runtime */
	ORIGIN_KERNEL,			/* found in the kernel, origin unknown */
};

struct target_conf {
	uint32_t tid;			/* assigned in file order from 1 */
	char name[IET_NAME_MAX + 1];
	char alias[IET_NAME_MAX + 1];
	uint32_t max_sessions;		/* 0 = unlimited */
	uint32_t tparams[IET_TP_COUNT];
	uint32_t keys[IET_KEY_COUNT];	/* offers and limits */
	struct lun_conf *luns;
	size_t nr_luns;
	struct auth auth;
	char redirect[REDIRECT_MAX + 1];	/* "" = none; "addr:port" */
	enum target_origin origin;
	unsigned int line;
	bool deleting;			/* its initiators asked to log out */
};

/* One listening address of a portal group. */
struct portal_addr {
	char addr[46];			/* numeric; "" for every address */
	uint16_t port;			/* 0: ietd's port (-p) */
};

#define PORTALS_PER_GROUP	8

/*
 * A portal group (ietd.conf "PortalGroup TAG ADDRESS[:PORT] ..."): every
 * target is offered through each, and each is a SCSI target port and an
 * ALUA target port group of every target. A remote one
 * ("RemotePortalGroup TAG") is the other node's of an HA pair: no portal
 * here, reported by REPORT TARGET PORT GROUPS with the state ietadm gives.
 */
struct portal_group {
	uint16_t tag;			/* TPGT, 1..65535 */
	bool remote;
	struct portal_addr portals[PORTALS_PER_GROUP];
	size_t nr_portals;
	unsigned int line;
};

struct config {
	struct target_conf *targets;
	size_t nr_targets;
	size_t cap_targets;		/* room in targets (config_grow_targets) */
	/* None: group 1, on ietd's -a address or every address. */
	struct portal_group groups[IET_TPGS_MAX];
	size_t nr_groups;
	struct auth auth;		/* discovery CHAP, default algorithms */
	bool allow_short_secrets;
	char isns_server[256];
	bool isns_access_control;
	/* Prometheus metrics for node_exporter's textfile collector. */
	char metrics_file[512];		/* "": none */
	uint32_t metrics_interval;	/* seconds; 0: METRICS_INTERVAL */
	/*
	 * SHA-256 (hex) of the configuration file as read, or in a state
	 * file of the one the running model was made from; "" unknown.
	 */
	char digest[65];
};

/* Helpers over the model (model.c). */

/* A target with IET's defaults for every parameter and key. */
void target_conf_defaults(struct target_conf *t);
/* A target parameter's name in ietd.conf and ietadm, and its value as text. */
const char *tparam_name(unsigned int tp);
const char *tparam_format(unsigned int tp, uint32_t v, char *buf, size_t len);
void target_conf_free(struct target_conf *t);
/* Deep copy; dst is overwritten. -ENOMEM leaves dst empty. */
int target_conf_copy(struct target_conf *dst, const struct target_conf *src);
void config_free(struct config *cfg);
/* Deep copy of everything; -ENOMEM leaves dst empty. */
int config_copy(struct config *dst, const struct config *src);

/* How many of its portal groups are another node's (RemotePortalGroup). */
size_t config_remote_groups(const struct config *cfg);
/* Lookups: names compare case-insensitively, as iSCSI names do. */
struct target_conf *config_target_by_name(const struct config *cfg,
					  const char *name);
struct target_conf *config_target_by_tid(const struct config *cfg,
					 uint32_t tid);
/*
 * Room for one more target: the array doubles, so that a file of
 * thousands of targets is read in linear time, and the secrets its
 * targets hold are wiped from where it was. 0 or -ENOMEM.
 */
int config_grow_targets(struct config *cfg);
/* Append a deep copy of t; the copy, or NULL when out of memory. */
struct target_conf *config_add_target(struct config *cfg,
				      const struct target_conf *t);
/*
 * Mutual CHAP: the secret ietd answers challenges with (an OutgoingUser's)
 * must be none of the secrets initiators prove (IncomingUsers'), in any
 * scope, or a peer could have one scope's target answer the challenge of
 * another's login and send that back as its own response. The account of
 * the other kind (outgoing: an IncomingUser's) whose secret is secret, in
 * any scope, with *scope "discovery" or its target's name; or NULL.
 */
const struct account *config_secret_clash(const struct config *cfg,
					  const char *secret, bool outgoing,
					  const char **scope);
/* Remove (and free) the target with that tid, if there is one. */
void config_del_target(struct config *cfg, uint32_t tid);
/* Order the targets by tid (as they are listed and saved). */
void config_sort_targets(struct config *cfg);

struct lun_conf *target_lun(const struct target_conf *t, uint32_t lun);
int target_add_lun(struct target_conf *t, const struct lun_conf *lun);
void target_del_lun(struct target_conf *t, uint32_t lun);

void auth_free(struct auth *a);
int auth_copy(struct auth *dst, const struct auth *src);
struct account *auth_incoming(const struct auth *a, const char *user);
int auth_add_incoming(struct auth *a, const struct account *acc);
void auth_del_incoming(struct auth *a, const char *user);
/* The CHAP algorithms a scope allows: its own list, else the fallback's. */
uint32_t auth_algs(const struct auth *a, const struct auth *fallback);

/*
 * Fill an empty ScsiId with a deterministic value derived from the target
 * name and LUN number (16 hex digits), and an empty ScsiSN from the ScsiId,
 * so a LUN keeps its identity across restarts and hosts.
 */
void lun_conf_derive_ids(struct lun_conf *lun, const char *target_name);
/* "fileio", "blockio" or "nullio", as ietd.conf writes a LUN type. */
const char *lun_type_name(uint32_t type);
/* The physical block size a LUN reports: its own, else its block size. */
uint32_t lun_phys_block_size(const struct lun_conf *lun);
/* ModeSelect's default, the kernel's too (IET_A_LUN_MODE_SELECT). */
static inline bool lun_mode_select_default(const struct lun_conf *lun)
{
	return lun->iomode != IET_IOMODE_WT;
}

/* Whether MODE SELECT may change the LUN's mode parameters. */
static inline bool lun_mode_select(const struct lun_conf *lun)
{
	if (lun->mode_select == MODE_SELECT_DEFAULT)
		return lun_mode_select_default(lun);
	return lun->mode_select == MODE_SELECT_YES;
}

/* ModeSelect as the kernel reports it (yes or no), as a lun_conf keeps it. */
static inline uint8_t lun_mode_select_of(const struct lun_conf *lun, bool yes)
{
	if (yes == lun_mode_select_default(lun))
		return MODE_SELECT_DEFAULT;
	return yes ? MODE_SELECT_YES : MODE_SELECT_NO;
}


#endif
