// SPDX-License-Identifier: GPL-2.0
/* Write the model back as ietd.conf text. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "confwrite.h"
#include "params.h"

__attribute__((format(printf, 2, 3)))
static int put(struct textbuf *out, const char *fmt, ...)
{
	char buf[IET_PATH_MAX + 512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1) {
		wipe(buf, sizeof(buf));
		return -ENOSPC;
	}
	buf[n++] = '\n';
	n = textbuf_append(out, buf, n);
	/* The line may have been an account's. */
	wipe(buf, sizeof(buf));
	return n;
}

static const char *iomode_name(uint32_t mode)
{
	switch (mode) {
	case IET_IOMODE_WB:
		return "wb";
	case IET_IOMODE_RO:
		return "ro";
	default:
		return "wt";
	}
}

int lun_args_format(const struct lun_conf *lun, char *buf, size_t len)
{
	size_t n = 0;
	int r;

#define ADD(...) do {							\
		r = snprintf(buf + n, len - n, __VA_ARGS__);		\
		if (r < 0 || (size_t)r >= len - n)			\
			return -ENOSPC;					\
		n += r;							\
	} while (0)

	if (lun->type != IET_LUN_NULLIO)
		ADD("Path=%s,", lun->path);
	ADD("Type=%s,IOMode=%s", lun_type_name(lun->type),
	    iomode_name(lun->iomode));
	/* Written even when derived: a LUN's identity must never drift. */
	if (lun->scsi_id[0])
		ADD(",ScsiId=%s", lun->scsi_id);
	if (lun->scsi_sn[0])
		ADD(",ScsiSN=%s", lun->scsi_sn);
	if (lun->block_size && lun->block_size != 512)
		ADD(",BlockSize=%u", lun->block_size);
	if (lun->phys_block_size && lun->phys_block_size != lun->block_size)
		ADD(",PhysicalBlockSize=%u", lun->phys_block_size);
	if (lun->rotation_rate)
		ADD(",RotationRate=%u", lun->rotation_rate);
	if (lun->thin_off)
		ADD(",ThinProvisioning=No");
	if (lun->mode_select != MODE_SELECT_DEFAULT)
		ADD(",ModeSelect=%s", lun_mode_select(lun) ? "Yes" : "No");
	if (lun->blocks)
		ADD(",Blocks=%llu", (unsigned long long)lun->blocks);
#undef ADD
	return 0;
}

static void algs_format(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;
	unsigned int id;

	buf[0] = '\0';
	for (id = CHAP_MD5; id <= CHAP_SHA3_256; id++)
		if (mask & CHAP_ALG_BIT(id))
			n += snprintf(buf + n, len - n, "%s%u", n ? "," : "", id);
}

static int write_auth(const struct auth *a, const char *indent,
		      struct textbuf *out)
{
	char algs[32];
	size_t i;
	int ret = 0;

	if (a->chap_algs) {
		algs_format(a->chap_algs, algs, sizeof(algs));
		ret |= put(out, "%sCHAPAlgorithms %s", indent, algs);
	}
	for (i = 0; i < a->nr_incoming; i++) {
		const struct account *acc = &a->incoming[i];
		char names[ACCOUNT_INITIATORS_MAX * (IET_NAME_MAX + 1) + 1];

		account_initiators_format(acc, names, sizeof(names));
		ret |= put(out, "%sIncomingUser %s %s%s%s", indent, acc->user,
			   acc->secret, *names ? " " : "", names);
	}
	if (a->has_outgoing)
		ret |= put(out, "%sOutgoingUser %s %s", indent,
			   a->outgoing.user, a->outgoing.secret);
	return ret;
}

static const char *origin_name(enum target_origin o)
{
	switch (o) {
	case ORIGIN_ADMIN:
		return "ietadm";
	case ORIGIN_KERNEL:
		return "kernel";
	default:
		return "file";
	}
}

/* A portal as PortalGroup takes it: IPv4[:PORT], [IPv6][:PORT], *[:PORT]. */
void portal_addr_format(const struct portal_addr *pa, char *buf, size_t len)
{
	const char *a = pa->addr[0] ? pa->addr : "*";
	bool v6 = strchr(pa->addr, ':') != NULL;
	char port[8] = "";

	if (pa->port)
		snprintf(port, sizeof(port), ":%u", pa->port);
	snprintf(buf, len, v6 ? "[%s]%s" : "%s%s", a, port);
}

static int write_group(const struct portal_group *g, struct textbuf *out)
{
	char line[16 + PORTALS_PER_GROUP * 56], *p = line;
	size_t i;

	if (g->remote)
		return put(out, "RemotePortalGroup %u", g->tag);
	p += snprintf(p, sizeof(line), "PortalGroup %u", g->tag);
	for (i = 0; i < g->nr_portals; i++) {
		*p++ = ' ';
		portal_addr_format(&g->portals[i], p, line + sizeof(line) - p);
		p += strlen(p);
	}
	return put(out, "%s", line);
}

static int write_target(const struct target_conf *t, unsigned int flags,
			struct textbuf *out)
{
	struct target_conf def;
	char val[IET_PATH_MAX + 128];
	unsigned int i;
	size_t l;
	int ret = 0;

	target_conf_defaults(&def);
	ret |= put(out, "\nTarget %s", t->name);
	if (flags & CONFIG_STATE)
		ret |= put(out, "\tOrigin %s", origin_name(t->origin));
	if (t->alias[0])
		ret |= put(out, "\tAlias %s", t->alias);
	if (t->max_sessions)
		ret |= put(out, "\tMaxSessions %u", t->max_sessions);
	if (t->redirect[0])
		ret |= put(out, "\tRedirect %s", t->redirect);
	ret |= write_auth(&t->auth, "\t", out);
	for (l = 0; l < t->nr_luns; l++) {
		if (lun_args_format(&t->luns[l], val, sizeof(val)))
			return -ENOSPC;
		ret |= put(out, "\tLun %u %s", t->luns[l].lun, val);
	}
	for (i = 1; i <= IET_KEY_MAX; i++) {
		if (t->keys[i] == def.keys[i])
			continue;
		iet_key_format(i, t->keys[i], true, val, sizeof(val));
		ret |= put(out, "\t%s %s", iet_key_name(i), val);
	}
	for (i = 1; i <= IET_TP_MAX; i++)
		if (t->tparams[i] != def.tparams[i])
			ret |= put(out, "\t%s %s", tparam_name(i),
				   tparam_format(i, t->tparams[i], val,
						 sizeof(val)));
	return ret ? -ENOSPC : 0;
}

int config_write(const struct config *cfg, unsigned int flags,
		 const char *header, struct textbuf *out)
{
	const struct target_conf **order;
	size_t i, j;
	int ret = 0;

	if (header)
		ret |= textbuf_append(out, header, strlen(header));
	if (cfg->allow_short_secrets)
		ret |= put(out, "AllowShortSecrets Yes");
	ret |= write_auth(&cfg->auth, "", out);
	if (cfg->isns_server[0])
		ret |= put(out, "iSNSServer %s", cfg->isns_server);
	if (cfg->isns_access_control)
		ret |= put(out, "iSNSAccessControl Yes");
	if (cfg->metrics_file[0])
		ret |= put(out, "MetricsFile %s", cfg->metrics_file);
	if (cfg->metrics_interval)
		ret |= put(out, "MetricsInterval %u", cfg->metrics_interval);
	if ((flags & CONFIG_STATE) && cfg->digest[0])
		ret |= put(out, "ConfigDigest %s", cfg->digest);
	for (i = 0; i < cfg->nr_groups; i++)
		ret |= write_group(&cfg->groups[i], out);
	if (ret)
		return -ENOSPC;
	/* In tid order, so that a fresh start numbers them the same way. */
	order = calloc(cfg->nr_targets + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < cfg->nr_targets; i++) {
		for (j = i; j > 0 && order[j - 1]->tid > cfg->targets[i].tid; j--)
			order[j] = order[j - 1];
		order[j] = &cfg->targets[i];
	}
	for (i = 0; i < cfg->nr_targets && !ret; i++)
		ret = write_target(order[i], flags, out);
	free(order);
	return ret || out->overflow ? -ENOSPC : 0;
}
