// SPDX-License-Identifier: GPL-2.0
/*
 * ietadm --op show: IET's Key=Value lines for a target, a session (sid 0:
 * the target's session defaults) and accounts; beyond IET a LUN, the whole
 * tree with counters, and every form as JSON (--json); with --stats the
 * counters by kind, errors by sense key and latency histograms (metrics.c),
 * or all of them in Prometheus' format (--prometheus).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "ctl_ops.h"
#include "json.h"
#include "metrics.h"
#include "op_alua.h"
#include "op_pr.h"
#include "params.h"

static const char *iomode_name(uint32_t m)
{
	return m == IET_IOMODE_WB ? "wb" : m == IET_IOMODE_RO ? "ro" : "wt";
}

static const char *origin_name(enum target_origin o)
{
	return o == ORIGIN_ADMIN ? "ietadm" : o == ORIGIN_KERNEL ? "kernel" :
	       "file";
}

/* "192.0.2.1" or "[2001:db8::1]", and the port. */
static unsigned int addr_text(const struct sockaddr_storage *ss, char *buf,
			      size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s", a);
		return ntohs(s4->sin_port);
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]", a);
		return ntohs(s6->sin6_port);
	}
	snprintf(buf, len, "?");
	return 0;
}

/* ---------------------------------------------------------------- text */

static void keys_text(struct textbuf *out, const uint32_t *keys, bool is_mask)
{
	char val[32];
	unsigned int i;

	for (i = 1; i <= IET_KEY_MAX; i++) {
		iet_key_format(i, keys[i], is_mask, val, sizeof(val));
		out_line(out, "%s=%s", iet_key_name(i), val);
	}
}

static void stats_text(struct textbuf *out, const struct kstats *s)
{
	out_line(out, "Commands=%llu", (unsigned long long)s->cmds);
	out_line(out, "ReadBytes=%llu", (unsigned long long)s->read_bytes);
	out_line(out, "WrittenBytes=%llu", (unsigned long long)s->write_bytes);
	out_line(out, "Errors=%llu", (unsigned long long)s->errors);
}

static void target_text(struct textbuf *out, const struct target_conf *t,
			const struct ktarget *kt)
{
	unsigned int i;
	char val[16];

	for (i = 1; i <= IET_TP_MAX; i++)
		out_line(out, "%s=%s", tparam_name(i),
			 tparam_format(i, kt->tparams[i], val, sizeof(val)));
	out_line(out, "MaxSessions=%u", t->max_sessions);
	if (t->alias[0])
		out_line(out, "Alias=%s", t->alias);
	if (t->redirect[0])
		out_line(out, "Redirect=%s", t->redirect);
	tpg_text(out, kt);
}

/* A module older than closed backings has every one open. */
static const char *backing_name(uint32_t backing)
{
	switch (backing) {
	case IET_LUN_BACKING_CLOSING:
		return "closing";
	case IET_LUN_BACKING_CLOSED:
		return "closed";
	default:
		return "open";
	}
}

static void lun_text(struct textbuf *out, const struct klun *kl)
{
	const struct lun_conf *l = &kl->conf;

	out_line(out, "Lun=%u", l->lun);
	if (l->type != IET_LUN_NULLIO)
		out_line(out, "Path=%s", l->path);
	out_line(out, "Type=%s", lun_type_name(l->type));
	out_line(out, "IOMode=%s", iomode_name(l->iomode));
	out_line(out, "ScsiId=%s", l->scsi_id);
	out_line(out, "ScsiSN=%s", l->scsi_sn);
	out_line(out, "BlockSize=%u", l->block_size);
	out_line(out, "PhysicalBlockSize=%u", lun_phys_block_size(l));
	out_line(out, "RotationRate=%u", l->rotation_rate);
	out_line(out, "ThinProvisioning=%s", l->thin_off ? "No" : "Yes");
	out_line(out, "ModeSelect=%s", lun_mode_select(l) ? "Yes" : "No");
	out_line(out, "Blocks=%llu", (unsigned long long)l->blocks);
	if (l->type != IET_LUN_NULLIO)
		out_line(out, "Backing=%s", backing_name(kl->backing));
	stats_text(out, &kl->stats);
}

/* The LUNs and sessions of one target, or of all (tid 0), with --stats. */
static void stats_tree_text(struct textbuf *out, const struct kstate *st,
			    uint32_t tid)
{
	size_t i, j;

	for (i = 0; i < st->nr_targets; i++) {
		const struct ktarget *kt = &st->targets[i];

		if (tid && kt->tid != tid)
			continue;
		out_line(out, "tid:%u name:%s", kt->tid, kt->name);
		for (j = 0; j < kt->nr_luns; j++) {
			out_line(out, "\tlun:%u", kt->luns[j].conf.lun);
			metrics_text(out, &kt->luns[j].stats, 2);
		}
		for (j = 0; j < kt->nr_sessions; j++) {
			const struct ksession *ks = &kt->sessions[j];

			out_line(out, "\tsid:%llu initiator:%s",
				 (unsigned long long)ks->sid, ks->initiator);
			metrics_text(out, &ks->stats, 2);
		}
	}
}

static void stats_inline(char *buf, size_t len, const struct kstats *s)
{
	snprintf(buf, len, "commands:%llu read:%llu written:%llu errors:%llu",
		 (unsigned long long)s->cmds,
		 (unsigned long long)s->read_bytes,
		 (unsigned long long)s->write_bytes,
		 (unsigned long long)s->errors);
}

/* The whole tree, /proc/net/iet-like, with the counters. */
static void all_text(struct textbuf *out, const struct kstate *st)
{
	char stats[160], ip[INET6_ADDRSTRLEN + 4];
	size_t i, j, c;

	for (i = 0; i < st->nr_targets; i++) {
		const struct ktarget *kt = &st->targets[i];

		out_line(out, "tid:%u name:%s", kt->tid, kt->name);
		for (j = 0; j < kt->nr_luns; j++) {
			const struct klun *kl = &kt->luns[j];

			stats_inline(stats, sizeof(stats), &kl->stats);
			out_line(out, "\tlun:%u iotype:%s iomode:%s %s%s%s",
				 kl->conf.lun, lun_type_name(kl->conf.type),
				 iomode_name(kl->conf.iomode), stats,
				 kl->conf.path[0] ? " path:" : "",
				 kl->conf.path);
		}
		for (j = 0; j < kt->nr_sessions; j++) {
			const struct ksession *ks = &kt->sessions[j];

			stats_inline(stats, sizeof(stats), &ks->stats);
			out_line(out, "\tsid:%llu initiator:%s %s",
				 (unsigned long long)ks->sid, ks->initiator,
				 stats);
			for (c = 0; c < ks->nr_conns; c++) {
				const struct kconn *kc = &ks->conns[c];

				addr_text(&kc->peer, ip, sizeof(ip));
				out_line(out, "\t\tcid:%u ip:%s state:%s",
					 kc->cid, ip,
					 kc->state == IET_CONN_CLOSING ?
					 "closing" : "active");
			}
		}
	}
}

/* ---------------------------------------------------------------- JSON */

static void keys_json(struct jw *j, const char *name, const uint32_t *keys,
		      bool is_mask)
{
	char val[32];
	unsigned int i;

	jw_obj(j, name);
	for (i = 1; i <= IET_KEY_MAX; i++) {
		switch (i) {
		case IET_KEY_INITIAL_R2T:
		case IET_KEY_IMMEDIATE_DATA:
		case IET_KEY_DATA_PDU_INORDER:
		case IET_KEY_DATA_SEQUENCE_INORDER:
		case IET_KEY_HEADER_DIGEST:
		case IET_KEY_DATA_DIGEST:
			iet_key_format(i, keys[i], is_mask, val, sizeof(val));
			jw_str(j, iet_key_name(i), val);
			break;
		default:
			jw_u64(j, iet_key_name(i), keys[i]);
		}
	}
	jw_end(j, '}');
}

static void stats_json(struct jw *j, const struct kstats *s, bool full)
{
	jw_obj(j, "stats");
	jw_u64(j, "commands", s->cmds);
	jw_u64(j, "read_bytes", s->read_bytes);
	jw_u64(j, "write_bytes", s->write_bytes);
	jw_u64(j, "errors", s->errors);
	if (full)
		metrics_json(j, s);
	jw_end(j, '}');
}

/* A LUN's object, left open for more. */
static void lun_json_open(struct jw *j, const struct klun *kl, bool full)
{
	const struct lun_conf *l = &kl->conf;

	jw_obj(j, NULL);
	jw_u64(j, "lun", l->lun);
	jw_str(j, "type", lun_type_name(l->type));
	if (l->type != IET_LUN_NULLIO)
		jw_str(j, "path", l->path);
	jw_str(j, "iomode", iomode_name(l->iomode));
	jw_str(j, "scsi_id", l->scsi_id);
	jw_str(j, "scsi_sn", l->scsi_sn);
	jw_u64(j, "block_size", l->block_size);
	jw_u64(j, "physical_block_size", lun_phys_block_size(l));
	jw_u64(j, "rotation_rate", l->rotation_rate);
	jw_bool(j, "thin_provisioning", !l->thin_off);
	jw_u64(j, "blocks", l->blocks);
	if (l->type != IET_LUN_NULLIO)
		jw_str(j, "backing", backing_name(kl->backing));
	stats_json(j, &kl->stats, full);
}

static void lun_json(struct jw *j, const struct klun *kl, bool full)
{
	lun_json_open(j, kl, full);
	jw_end(j, '}');
}

/* One LUN, with its reservations. */
static int lun_show(struct textbuf *out, struct jw *j, bool json, bool full,
		    const struct ktarget *kt, const struct klun *kl,
		    char *err, size_t errlen)
{
	struct kpr pr;
	int ret;

	ret = kernel_pr_get(kt->tid, kl->conf.lun, &pr);
	if (ret)
		return kernel_failed(ret, err, errlen,
				     "target %u LUN %u: reading its reservations",
				     kt->tid, kl->conf.lun);
	if (json) {
		lun_json_open(j, kl, full);
		pr_json(j, &pr, kt);
		jw_end(j, '}');
	} else {
		lun_text(out, kl);
		pr_text(out, &pr, kt);
		if (full)
			metrics_text(out, &kl->stats, 0);
	}
	kpr_free(&pr);
	return 0;
}

static void session_json(struct jw *j, const struct ksession *ks, bool full)
{
	char ip[INET6_ADDRSTRLEN + 4], sid[24];
	size_t c;

	jw_obj(j, NULL);
	/* jq and JavaScript read numbers as doubles: sids lose digits. */
	jw_u64(j, "sid", ks->sid);
	snprintf(sid, sizeof(sid), "%llu", (unsigned long long)ks->sid);
	jw_str(j, "sid_str", sid);
	jw_str(j, "initiator", ks->initiator);
	jw_u64(j, "portal_group", ks->tpgt);
	keys_json(j, "params", ks->keys, false);
	stats_json(j, &ks->stats, full);
	jw_arr(j, "connections");
	for (c = 0; c < ks->nr_conns; c++) {
		const struct kconn *kc = &ks->conns[c];
		unsigned int port;

		jw_obj(j, NULL);
		jw_u64(j, "cid", kc->cid);
		port = addr_text(&kc->peer, ip, sizeof(ip));
		jw_str(j, "ip", ip);
		jw_u64(j, "port", port);
		port = addr_text(&kc->local, ip, sizeof(ip));
		jw_str(j, "local_ip", ip);
		jw_u64(j, "local_port", port);
		jw_str(j, "state", kc->state == IET_CONN_CLOSING ? "closing" :
		       "active");
		jw_str(j, "header_digest",
		       kc->keys[IET_KEY_HEADER_DIGEST] == IET_DIGEST_CRC32C ?
		       "CRC32C" : "None");
		jw_str(j, "data_digest",
		       kc->keys[IET_KEY_DATA_DIGEST] == IET_DIGEST_CRC32C ?
		       "CRC32C" : "None");
		jw_end(j, '}');
	}
	jw_end(j, ']');
	jw_end(j, '}');
}

/* Accounts that may log in as named initiators only: user -> names. */
static void initiators_json(struct jw *j, const struct auth *a)
{
	unsigned int k;
	size_t i;

	for (i = 0; i < a->nr_incoming && !a->incoming[i].nr_initiators; i++)
		;
	if (i == a->nr_incoming)
		return;
	jw_obj(j, "initiators_of");
	for (i = 0; i < a->nr_incoming; i++) {
		if (!a->incoming[i].nr_initiators)
			continue;
		jw_arr(j, a->incoming[i].user);
		for (k = 0; k < a->incoming[i].nr_initiators; k++)
			jw_str(j, NULL, a->incoming[i].initiators[k]);
		jw_end(j, ']');
	}
	jw_end(j, '}');
}

static void users_json(struct jw *j, const struct auth *a)
{
	size_t i;

	jw_arr(j, "incoming_users");
	for (i = 0; i < a->nr_incoming; i++)
		jw_str(j, NULL, a->incoming[i].user);
	jw_end(j, ']');
	initiators_json(j, a);
	if (a->has_outgoing)
		jw_str(j, "outgoing_user", a->outgoing.user);
}

static void target_json(struct jw *j, const struct target_conf *t,
			const struct ktarget *kt, bool full)
{
	unsigned int i;
	size_t k;

	jw_obj(j, NULL);
	jw_u64(j, "tid", kt->tid);
	jw_str(j, "name", kt->name);
	if (t) {
		jw_str(j, "origin", origin_name(t->origin));
		if (t->alias[0])
			jw_str(j, "alias", t->alias);
		jw_u64(j, "max_sessions", t->max_sessions);
		if (t->redirect[0])
			jw_str(j, "redirect", t->redirect);
		users_json(j, &t->auth);
	}
	jw_obj(j, "params");
	for (i = 1; i <= IET_TP_MAX; i++)
		jw_u64(j, tparam_name(i), kt->tparams[i]);
	jw_end(j, '}');
	keys_json(j, "session_defaults", kt->keys, true);
	tpg_json(j, kt);
	jw_arr(j, "luns");
	for (k = 0; k < kt->nr_luns; k++)
		lun_json(j, &kt->luns[k], full);
	jw_end(j, ']');
	jw_arr(j, "sessions");
	for (k = 0; k < kt->nr_sessions; k++)
		session_json(j, &kt->sessions[k], full);
	jw_end(j, ']');
	jw_end(j, '}');
}

/* ---------------------------------------------------------------- the op */

static int show_users(struct runtime *rt, const struct ctl_req *req,
		      struct textbuf *out, char *err, size_t errlen)
{
	const struct auth *a = &rt->cfg.auth;
	struct jw j;
	size_t i;

	if ((req->fields & CTL_F_TARGET) ||
	    ((req->fields & CTL_F_TID) && req->tid)) {
		struct target_conf *t = req_target(rt, req, err, errlen);

		if (!t)
			return -ENOENT;
		a = &t->auth;
	}
	if (req->fields & CTL_F_JSON) {
		jw_init(&j, out);
		jw_obj(&j, NULL);
		users_json(&j, a);
		jw_end(&j, '}');
		return 0;
	}
	/* Names only: secrets are shown by --op save alone. */
	for (i = 0; i < a->nr_incoming; i++) {
		char names[ACCOUNT_INITIATORS_MAX * (IET_NAME_MAX + 1) + 1];

		account_initiators_format(&a->incoming[i], names, sizeof(names));
		out_line(out, "IncomingUser=%s%s%s", a->incoming[i].user,
			 *names ? ",Initiators=" : "", names);
	}
	if (a->has_outgoing)
		out_line(out, "OutgoingUser=%s", a->outgoing.user);
	return 0;
}

/* --prometheus: every target's, or the one of --tid/--target. */
static int show_prometheus(struct runtime *rt, const struct ctl_req *req,
			   struct textbuf *out, char *err, size_t errlen)
{
	struct target_conf *t = NULL;
	struct kstate st;
	int ret;

	if (req->fields & (CTL_F_SID | CTL_F_CID | CTL_F_LUN | CTL_F_JSON)) {
		snprintf(err, errlen, "--prometheus takes --tid or --target alone");
		return -EINVAL;
	}
	if (req->fields & (CTL_F_TID | CTL_F_TARGET)) {
		t = req_target(rt, req, err, errlen);
		if (!t)
			return -ENOENT;
	}
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	ret = metrics_prometheus(out, &st, t ? t->tid : 0);
	if (ret)
		snprintf(err, errlen, "the metrics do not fit the answer");
	kstate_free(&st);
	return ret;
}

int op_show(struct runtime *rt, const struct ctl_req *req,
	    struct textbuf *out, char *err, size_t errlen)
{
	bool json = req->fields & CTL_F_JSON;
	bool full = req->fields & CTL_F_STATS;
	const struct ktarget *kt;
	struct target_conf *t;
	struct kstate st;
	struct jw j;
	size_t i;
	int ret;

	if (req->fields & CTL_F_USER)
		return show_users(rt, req, out, err, errlen);
	if (req->fields & CTL_F_PROMETHEUS)
		return show_prometheus(rt, req, out, err, errlen);
	jw_init(&j, out);
	if (!(req->fields & (CTL_F_TID | CTL_F_TARGET))) {
		if (req->fields & (CTL_F_SID | CTL_F_CID | CTL_F_LUN)) {
			snprintf(err, errlen, "--op show needs --tid with --sid or --lun");
			return -EINVAL;
		}
		ret = dump_kernel(&st, err, errlen);
		if (ret)
			return ret;
		if (json) {
			jw_obj(&j, NULL);
			jw_arr(&j, "targets");
			for (i = 0; i < st.nr_targets; i++)
				target_json(&j, config_target_by_tid(&rt->cfg,
					    st.targets[i].tid), &st.targets[i],
					    full);
			jw_end(&j, ']');
			jw_end(&j, '}');
		} else if (full) {
			stats_tree_text(out, &st, 0);
		} else {
			all_text(out, &st);
		}
		kstate_free(&st);
		return 0;
	}
	t = req_target(rt, req, err, errlen);
	if (!t)
		return -ENOENT;
	ret = dump_kernel(&st, err, errlen);
	if (ret)
		return ret;
	kt = kstate_target(&st, t->tid);
	if (!kt) {
		snprintf(err, errlen, "no target with tid %u", t->tid);
		ret = -ENOENT;
		goto out;
	}
	if (req->fields & CTL_F_LUN) {
		const struct klun *kl = NULL;

		for (i = 0; i < kt->nr_luns; i++)
			if (kt->luns[i].conf.lun == req->lun)
				kl = &kt->luns[i];
		if (!kl) {
			snprintf(err, errlen, "target %u has no LUN %u", kt->tid,
				 req->lun);
			ret = -ENOENT;
			goto out;
		}
		ret = lun_show(out, &j, json, full, kt, kl, err, errlen);
		goto out;
	}
	if (req->fields & CTL_F_SID) {
		const struct ksession *ks = NULL;

		if (req->sid == 0) {
			/* IET: sid 0 shows the target's session defaults. */
			if (json)
				keys_json(&j, NULL, kt->keys, true);
			else
				keys_text(out, kt->keys, true);
			goto out;
		}
		for (i = 0; i < kt->nr_sessions; i++)
			if (kt->sessions[i].sid == req->sid)
				ks = &kt->sessions[i];
		if (!ks) {
			snprintf(err, errlen, "no session %llu in target %u",
				 (unsigned long long)req->sid, kt->tid);
			ret = -ENOENT;
		} else if (json) {
			session_json(&j, ks, full);
		} else {
			keys_text(out, ks->keys, false);
			stats_text(out, &ks->stats);
			out_line(out, "PortalGroup=%u", ks->tpgt);
			if (full)
				metrics_text(out, &ks->stats, 0);
		}
		goto out;
	}
	if (json)
		target_json(&j, t, kt, full);
	else if (full)
		stats_tree_text(out, &st, kt->tid);
	else
		target_text(out, t, kt);
out:
	kstate_free(&st);
	return ret;
}
