// SPDX-License-Identifier: GPL-2.0
/* Defaults, lookups, identity derivation and freeing for the data model. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"

void target_conf_defaults(struct target_conf *t)
{
	memset(t, 0, sizeof(*t));
	t->tparams[IET_TP_WTHREADS] = 8;
	/* IET had 32; open-iscsi queues 128 commands per session. */
	t->tparams[IET_TP_QUEUED_CMDS] = 128;
	/* IET had 0 (no keepalive); a dead initiator must not pin a session. */
	t->tparams[IET_TP_NOP_INTERVAL] = 10;
	t->tparams[IET_TP_NOP_TIMEOUT] = 15;

	t->keys[IET_KEY_INITIAL_R2T] = 1;
	t->keys[IET_KEY_IMMEDIATE_DATA] = 1;
	t->keys[IET_KEY_MAX_CONNECTIONS] = 1;
	t->keys[IET_KEY_MAX_RECV_DSL] = 8192;
	t->keys[IET_KEY_MAX_XMIT_DSL] = 8192;
	t->keys[IET_KEY_MAX_BURST] = 262144;
	t->keys[IET_KEY_FIRST_BURST] = 65536;
	t->keys[IET_KEY_DEFAULT_TIME2WAIT] = 2;
	t->keys[IET_KEY_DEFAULT_TIME2RETAIN] = 0;
	t->keys[IET_KEY_MAX_OUTSTANDING_R2T] = 1;
	t->keys[IET_KEY_DATA_PDU_INORDER] = 1;
	t->keys[IET_KEY_DATA_SEQUENCE_INORDER] = 1;
	t->keys[IET_KEY_ERROR_RECOVERY_LEVEL] = 0;
	t->keys[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_NONE;
	t->keys[IET_KEY_DATA_DIGEST] = DIGEST_MASK_NONE;
}

void target_conf_free(struct target_conf *t)
{
	free(t->luns);
	if (t->incoming)
		memset(t->incoming, 0, t->nr_incoming * sizeof(*t->incoming));
	free(t->incoming);
	memset(&t->outgoing, 0, sizeof(t->outgoing));
	t->luns = NULL;
	t->nr_luns = 0;
	t->incoming = NULL;
	t->nr_incoming = 0;
}

void config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nr_targets; i++)
		target_conf_free(&cfg->targets[i]);
	free(cfg->targets);
	if (cfg->incoming)
		memset(cfg->incoming, 0,
		       cfg->nr_incoming * sizeof(*cfg->incoming));
	free(cfg->incoming);
	memset(cfg, 0, sizeof(*cfg));
}

struct target_conf *config_target_by_name(const struct config *cfg,
					  const char *name)
{
	size_t i;

	for (i = 0; i < cfg->nr_targets; i++)
		if (!strcasecmp(cfg->targets[i].name, name))
			return &cfg->targets[i];
	return NULL;
}

struct target_conf *config_target_by_tid(const struct config *cfg,
					 uint32_t tid)
{
	size_t i;

	for (i = 0; i < cfg->nr_targets; i++)
		if (cfg->targets[i].tid == tid)
			return &cfg->targets[i];
	return NULL;
}

/* FNV-1a, 64 bits: stable across builds and architectures. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

void lun_conf_derive_ids(struct lun_conf *lun, const char *target_name)
{
	if (!lun->scsi_id[0]) {
		char num[16];
		uint64_t h = 0xcbf29ce484222325ull;

		const char *c;

		/* iSCSI names are case-insensitive: so is the identity. */
		for (c = target_name; *c; c++) {
			unsigned char lc = tolower((unsigned char)*c);

			h = fnv1a(h, &lc, 1);
		}
		snprintf(num, sizeof(num), ":%u", lun->lun);
		h = fnv1a(h, num, strlen(num));
		snprintf(lun->scsi_id, sizeof(lun->scsi_id), "%016llx",
			 (unsigned long long)h);
	}
	if (!lun->scsi_sn[0])
		snprintf(lun->scsi_sn, sizeof(lun->scsi_sn), "%s",
			 lun->scsi_id);
}
