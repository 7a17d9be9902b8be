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

#define IET_KEY_COUNT	(IET_KEY_MAX + 1)	/* index: enum iet_key */
#define IET_TP_COUNT	(IET_TP_MAX + 1)	/* index: enum iet_tparam */

/* Digest offer masks in a target's keys[IET_KEY_*_DIGEST]. */
#define DIGEST_MASK_NONE	(1u << IET_DIGEST_NONE)
#define DIGEST_MASK_CRC32C	(1u << IET_DIGEST_CRC32C)

#define CHAP_NAME_MAX	255
#define CHAP_SECRET_MAX	255

struct kstats {
	uint64_t cmds;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t errors;
};

struct lun_conf {
	uint32_t lun;
	uint32_t type;			/* enum iet_lun_type */
	uint32_t iomode;		/* enum iet_iomode */
	char path[IET_PATH_MAX + 1];	/* "" for nullio */
	char scsi_id[IET_SCSI_ID_MAX + 1];	/* "" = derived by ietd */
	char scsi_sn[IET_SCSI_SN_MAX + 1];	/* "" = derived by ietd */
	uint32_t block_size;		/* 512 unless configured */
	uint64_t blocks;		/* nullio size; 0 = kernel default */
	unsigned int line;		/* where it was configured, 0 = ietadm */
};

struct account {
	char user[CHAP_NAME_MAX + 1];
	char secret[CHAP_SECRET_MAX + 1];
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
	struct account *incoming;
	size_t nr_incoming;
	struct account outgoing;
	bool has_outgoing;
	unsigned int line;
};

struct config {
	struct target_conf *targets;
	size_t nr_targets;
	struct account *incoming;	/* discovery CHAP */
	size_t nr_incoming;
	struct account outgoing;
	bool has_outgoing;
	char isns_server[256];
	bool isns_access_control;
};

/* Helpers over the model (model.c). */

/* A target with IET's defaults for every parameter and key. */
void target_conf_defaults(struct target_conf *t);
void target_conf_free(struct target_conf *t);
void config_free(struct config *cfg);

/* Lookups: names compare case-insensitively, as iSCSI names do. */
struct target_conf *config_target_by_name(const struct config *cfg,
					  const char *name);
struct target_conf *config_target_by_tid(const struct config *cfg,
					 uint32_t tid);

/*
 * Fill an empty ScsiId with a deterministic value derived from the target
 * name and LUN number (16 hex digits), and an empty ScsiSN from the ScsiId,
 * so a LUN keeps its identity across restarts and hosts.
 */
void lun_conf_derive_ids(struct lun_conf *lun, const char *target_name);

#endif
