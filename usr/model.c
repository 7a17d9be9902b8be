// SPDX-License-Identifier: GPL-2.0
/* Defaults, lookups, identity derivation and freeing for the data model. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model.h"

static const char *const tparam_names[IET_TP_COUNT] = {
	[IET_TP_WTHREADS] = "Wthreads",
	[IET_TP_QUEUED_CMDS] = "QueuedCommands",
	[IET_TP_NOP_INTERVAL] = "NOPInterval",
	[IET_TP_NOP_TIMEOUT] = "NOPTimeout",
	[IET_TP_TARGET_RESET] = "AllowTargetReset",
};

const char *tparam_name(unsigned int tp)
{
	return tp < IET_TP_COUNT && tparam_names[tp] ? tparam_names[tp] : "?";
}

const char *tparam_format(unsigned int tp, uint32_t v, char *buf, size_t len)
{
	if (tp == IET_TP_TARGET_RESET)
		return v ? "Yes" : "No";
	snprintf(buf, len, "%u", v);
	return buf;
}

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

void auth_free(struct auth *a)
{
	if (a->incoming)
		wipe(a->incoming, a->nr_incoming * sizeof(*a->incoming));
	free(a->incoming);
	wipe(a, sizeof(*a));
}

int auth_copy(struct auth *dst, const struct auth *src)
{
	*dst = *src;
	dst->incoming = NULL;
	if (!src->nr_incoming)
		return 0;
	dst->incoming = malloc(src->nr_incoming * sizeof(*dst->incoming));
	if (!dst->incoming) {
		wipe(dst, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->incoming, src->incoming,
	       src->nr_incoming * sizeof(*dst->incoming));
	return 0;
}

bool account_admits(const struct account *acc, const char *initiator)
{
	unsigned int i;

	if (!acc->nr_initiators)
		return true;
	for (i = 0; i < acc->nr_initiators; i++)
		if (!strcasecmp(acc->initiators[i], initiator))
			return true;
	return false;
}

void account_initiators_format(const struct account *acc, char *buf,
			       size_t len)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < acc->nr_initiators && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "," : "",
			      acc->initiators[i]);
}

struct account *auth_incoming(const struct auth *a, const char *user)
{
	size_t i;

	for (i = 0; i < a->nr_incoming; i++)
		if (!strcmp(a->incoming[i].user, user))
			return &a->incoming[i];
	return NULL;
}

int auth_add_incoming(struct auth *a, const struct account *acc)
{
	struct account *na;

	na = wiped_realloc(a->incoming, a->nr_incoming * sizeof(*na),
			   (a->nr_incoming + 1) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	na[a->nr_incoming] = *acc;
	a->incoming = na;
	a->nr_incoming++;
	return 0;
}

void auth_del_incoming(struct auth *a, const char *user)
{
	struct account *acc = auth_incoming(a, user);
	size_t i;

	if (!acc)
		return;
	i = acc - a->incoming;
	memmove(acc, acc + 1, (a->nr_incoming - i - 1) * sizeof(*acc));
	a->nr_incoming--;
	wipe(&a->incoming[a->nr_incoming], sizeof(*acc));
}

uint32_t auth_algs(const struct auth *a, const struct auth *fallback)
{
	if (a && a->chap_algs)
		return a->chap_algs;
	if (fallback && fallback->chap_algs)
		return fallback->chap_algs;
	return CHAP_ALGS_ALL;
}

void target_conf_free(struct target_conf *t)
{
	free(t->luns);
	auth_free(&t->auth);
	t->luns = NULL;
	t->nr_luns = 0;
}

int target_conf_copy(struct target_conf *dst, const struct target_conf *src)
{
	*dst = *src;
	dst->luns = NULL;
	dst->auth.incoming = NULL;
	if (src->nr_luns) {
		dst->luns = malloc(src->nr_luns * sizeof(*dst->luns));
		if (!dst->luns)
			goto fail;
		memcpy(dst->luns, src->luns, src->nr_luns * sizeof(*dst->luns));
	}
	if (auth_copy(&dst->auth, &src->auth))
		goto fail;
	return 0;
fail:
	free(dst->luns);
	dst->luns = NULL;
	dst->nr_luns = 0;
	dst->auth.nr_incoming = 0;
	wipe(&dst->auth, sizeof(dst->auth));
	return -ENOMEM;
}

void config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nr_targets; i++)
		target_conf_free(&cfg->targets[i]);
	free(cfg->targets);
	auth_free(&cfg->auth);
	memset(cfg, 0, sizeof(*cfg));
}

int config_copy(struct config *dst, const struct config *src)
{
	size_t i;

	*dst = *src;
	dst->targets = NULL;
	dst->nr_targets = 0;
	dst->cap_targets = 0;
	if (auth_copy(&dst->auth, &src->auth)) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	for (i = 0; i < src->nr_targets; i++) {
		if (!config_add_target(dst, &src->targets[i])) {
			config_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
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

int config_grow_targets(struct config *cfg)
{
	struct target_conf *nt;
	size_t cap;

	if (cfg->nr_targets < cfg->cap_targets)
		return 0;
	cap = cfg->cap_targets ? 2 * cfg->cap_targets : 8;
	/* Each target holds its outgoing secret: no copy left behind. */
	nt = wiped_realloc(cfg->targets, cfg->nr_targets * sizeof(*nt),
			   cap * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	memset(nt + cfg->nr_targets, 0,
	       (cap - cfg->nr_targets) * sizeof(*nt));
	cfg->targets = nt;
	cfg->cap_targets = cap;
	return 0;
}

struct target_conf *config_add_target(struct config *cfg,
				      const struct target_conf *t)
{
	if (config_grow_targets(cfg) ||
	    target_conf_copy(&cfg->targets[cfg->nr_targets], t))
		return NULL;
	return &cfg->targets[cfg->nr_targets++];
}

static const struct account *auth_clash(const struct auth *a,
					 const char *secret, bool outgoing)
{
	size_t i;

	if (!outgoing)
		return a->has_outgoing && !strcmp(a->outgoing.secret, secret) ?
			&a->outgoing : NULL;
	for (i = 0; i < a->nr_incoming; i++)
		if (!strcmp(a->incoming[i].secret, secret))
			return &a->incoming[i];
	return NULL;
}

const struct account *config_secret_clash(const struct config *cfg,
					  const char *secret, bool outgoing,
					  const char **scope)
{
	const struct account *acc = auth_clash(&cfg->auth, secret, outgoing);
	size_t i;

	*scope = "discovery";
	for (i = 0; !acc && i < cfg->nr_targets; i++) {
		acc = auth_clash(&cfg->targets[i].auth, secret, outgoing);
		*scope = cfg->targets[i].name;
	}
	return acc;
}

void config_del_target(struct config *cfg, uint32_t tid)
{
	struct target_conf *t = config_target_by_tid(cfg, tid);
	size_t i;

	if (!t)
		return;
	i = t - cfg->targets;
	target_conf_free(t);
	memmove(t, t + 1, (cfg->nr_targets - i - 1) * sizeof(*t));
	cfg->nr_targets--;
	/* The last one moved down: its old place still held its secret. */
	wipe(&cfg->targets[cfg->nr_targets], sizeof(*t));
}

static int by_tid(const void *a, const void *b)
{
	const struct target_conf *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void config_sort_targets(struct config *cfg)
{
	if (cfg->nr_targets > 1)
		qsort(cfg->targets, cfg->nr_targets, sizeof(*cfg->targets),
		      by_tid);
}

struct lun_conf *target_lun(const struct target_conf *t, uint32_t lun)
{
	size_t i;

	for (i = 0; i < t->nr_luns; i++)
		if (t->luns[i].lun == lun)
			return &t->luns[i];
	return NULL;
}

static int by_lun(const void *a, const void *b)
{
	const struct lun_conf *x = a, *y = b;

	return x->lun < y->lun ? -1 : x->lun > y->lun;
}

int target_add_lun(struct target_conf *t, const struct lun_conf *lun)
{
	struct lun_conf *nl = realloc(t->luns, (t->nr_luns + 1) * sizeof(*nl));

	if (!nl)
		return -ENOMEM;
	t->luns = nl;
	t->luns[t->nr_luns++] = *lun;
	qsort(t->luns, t->nr_luns, sizeof(*t->luns), by_lun);
	return 0;
}

void target_del_lun(struct target_conf *t, uint32_t lun)
{
	struct lun_conf *l = target_lun(t, lun);
	size_t i;

	if (!l)
		return;
	i = l - t->luns;
	memmove(l, l + 1, (t->nr_luns - i - 1) * sizeof(*l));
	t->nr_luns--;
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

const char *lun_type_name(uint32_t type)
{
	switch (type) {
	case IET_LUN_NULLIO:
		return "nullio";
	case IET_LUN_BLOCKIO:
		return "blockio";
	default:
		return "fileio";
	}
}

uint32_t lun_phys_block_size(const struct lun_conf *lun)
{
	return lun->phys_block_size ? lun->phys_block_size : lun->block_size;
}

size_t config_remote_groups(const struct config *cfg)
{
	size_t i, n = 0;

	for (i = 0; i < cfg->nr_groups; i++)
		n += cfg->groups[i].remote;
	return n;
}
