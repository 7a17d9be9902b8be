// SPDX-License-Identifier: GPL-2.0
/* Login stages, key processing and the session rules of a login. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl_cache.h"
#include "isns_acl.h"
#include "discovery.h"
#include "login.h"
#include "params.h"
#include "text.h"

enum lstate {
	L_START,		/* no request yet */
	L_ACTIVE,
	L_DONE,			/* final response produced */
	L_FAILED,
};

enum auth_state {
	AUTH_START,		/* no AuthMethod agreed yet */
	AUTH_CHAP,		/* CHAP agreed, exchange under way */
	AUTH_OK,		/* None agreed, or CHAP verified */
};

/* The security keys of one request set, taken together. */
struct auth_keys {
	const struct text_pair *method, *a, *n, *r, *i, *c;
};

struct login {
	struct login_env env;
	enum lstate state;
	bool chap_wrong;		/* a CHAP response was checked, wrong */
	uint8_t stage;			/* the CSG the next request must have */
	struct login_req first;		/* fields that must not change */
	struct login_req req;		/* the request being answered */
	uint32_t statsn;		/* of the next response */
	struct textbuf in;		/* request text until C=0 */
	struct textbuf out;		/* response text, sent in pieces */
	size_t out_off;
	bool chunking;			/* more pieces of out to send */
	bool reply_transit;		/* decision for the last piece */
	uint8_t reply_nsg;
	bool fail_with_text;		/* failure response carries out */
	bool first_set_done;
	bool discovery;
	bool leading;
	uint16_t tpgt;			/* the portal group it came through */
	/*
	 * Copies of what the login needs of its target and accounts: a
	 * reload may replace the configuration while a login is under way.
	 */
	const struct target_conf *target;
	struct target_conf tconf;
	struct auth auth;
	bool auth_required;
	enum auth_state auth_state;
	struct chap chap;
	char auth_info[CHAP_NAME_MAX + 64];
	struct neg neg;
	struct login_outcome outcome;
	char err[384];
};

/*
 * A discovery session has no target configuration: RFC defaults, both
 * digests acceptable, our MaxRecvDataSegmentLength the RFC default.
 */
static const uint32_t disc_limits[IET_KEY_COUNT] = {
	[IET_KEY_INITIAL_R2T] = 1,
	[IET_KEY_IMMEDIATE_DATA] = 1,
	[IET_KEY_MAX_CONNECTIONS] = 1,
	[IET_KEY_MAX_RECV_DSL] = DSL_DEFAULT,
	[IET_KEY_MAX_XMIT_DSL] = DSL_DEFAULT,
	[IET_KEY_MAX_BURST] = 262144,
	[IET_KEY_FIRST_BURST] = 65536,
	[IET_KEY_DEFAULT_TIME2WAIT] = 2,
	[IET_KEY_DEFAULT_TIME2RETAIN] = 20,
	[IET_KEY_MAX_OUTSTANDING_R2T] = 1,
	[IET_KEY_DATA_PDU_INORDER] = 1,
	[IET_KEY_DATA_SEQUENCE_INORDER] = 1,
	[IET_KEY_ERROR_RECOVERY_LEVEL] = 0,
	[IET_KEY_HEADER_DIGEST] = DIGEST_MASK_NONE | DIGEST_MASK_CRC32C,
	[IET_KEY_DATA_DIGEST] = DIGEST_MASK_NONE | DIGEST_MASK_CRC32C,
};

struct login *login_new(const struct login_env *env, uint32_t statsn)
{
	struct login *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->env = *env;
	l->statsn = statsn;
	textbuf_init(&l->in, TEXT_SET_MAX);
	/* Answers to a full set of unknown keys can outgrow the request. */
	textbuf_init(&l->out, 2 * TEXT_SET_MAX);
	return l;
}

void login_release(struct login *l)
{
	struct login_outcome *o = &l->outcome;

	if (o->reserved)
		registry_drop(l->env.reg, o->reserved);
	if (o->cid_reserved)
		registry_release_cid(l->env.reg, o->tid, o->sid, o->cid);
	o->reserved = NULL;
	o->cid_reserved = false;
}

void login_free(struct login *l)
{
	if (!l)
		return;
	if (l->state != L_DONE)
		login_release(l);
	chap_wipe(&l->chap);
	auth_free(&l->auth);
	textbuf_free(&l->in);	/* wiped: CHAP values */
	textbuf_free(&l->out);
	wipe(l, sizeof(*l));
	free(l);
}

const struct login_outcome *login_outcome(const struct login *l)
{
	return &l->outcome;
}

const char *login_error(const struct login *l)
{
	return l->err;
}

const char *login_initiator(const struct login *l)
{
	return l->outcome.initiator;
}

const char *login_auth_info(const struct login *l)
{
	return l->auth_info;
}

bool login_chap_wrong(const struct login *l)
{
	return l->chap_wrong;
}

uint32_t login_scope(const struct login *l)
{
	return l->discovery || !l->target ? 0 : l->target->tid;
}

static uint32_t cmd_window(const struct login *l)
{
	if (l->discovery || !l->target)
		return 1;
	return l->target->tparams[IET_TP_QUEUED_CMDS];
}

static void rsp_header(struct login *l, struct login_rsp *r)
{
	memset(r, 0, sizeof(*r));
	r->csg = l->req.csg;
	r->vmax = ISCSI_VERSION;
	r->vactive = ISCSI_VERSION;
	memcpy(r->isid, l->req.isid, sizeof(r->isid));
	r->tsih = l->req.tsih;
	r->itt = l->req.itt;
	r->statsn = l->statsn++;
	/* Login requests are immediate: they do not advance CmdSN. */
	r->exp_cmdsn = l->req.cmdsn;
	r->max_cmdsn = l->req.cmdsn + cmd_window(l) - 1;
}

/* Answer with a failure status; l->err already says why. */
static enum login_result reject(struct login *l, uint16_t status,
				struct pdu_out *out)
{
	struct login_rsp r;

	rsp_header(l, &r);
	r.status = status;
	if (l->fail_with_text && l->out.len <= LOGIN_DSL_MAX) {
		r.dlength = l->out.len;
		out->data = (const uint8_t *)l->out.buf;
		out->dlen = l->out.len;
	}
	login_rsp_encode(&r, out->bhs);
	l->state = L_FAILED;
	return LOGIN_FAILED;
}

__attribute__((format(printf, 4, 5)))
static enum login_result fail(struct login *l, uint16_t status,
			      struct pdu_out *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, sizeof(l->err), fmt, ap);
	va_end(ap);
	return reject(l, status, out);
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

static bool list_has(const char *list, const char *item)
{
	size_t ilen = strlen(item);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == ilen && !strncmp(list, item, len))
			return true;
		list += len;
		if (*list)
			list++;
	}
	return false;
}

/*
 * iSNSAccessControl: the initiator must share a discovery domain with the
 * target, as the iSNS server last said (isns_acl.h); no answer refuses.
 */
static int check_isns(struct login *l, const struct target_conf *t,
		      const char *iname)
{
	switch (isns_acl_check(t->name, iname)) {
	case ISNS_ADMIT:
		return LS_SUCCESS;
	case ISNS_NOT_IN_DD:
		snprintf(l->err, sizeof(l->err),
			 "access to %.223s refused by iSNSAccessControl: the initiator is in none of its iSNS discovery domains",
			 t->name);
		return LS_AUTHZ_FAILED;
	case ISNS_UNKNOWN:
		break;
	}
	snprintf(l->err, sizeof(l->err),
		 "access to %.223s refused by iSNSAccessControl: the iSNS server has not said who is in its discovery domains (unreachable?)",
		 t->name);
	return LS_AUTHZ_FAILED;
}

/*
 * The access files as they are now (acl_cache.h): targets.allow hides the
 * target on this portal, initiators.allow and .deny refuse the initiator.
 * A file that cannot be read or parsed refuses too.
 */
static int check_access(struct login *l, const struct target_conf *t,
			const char *iname)
{
	const struct access *a;
	char why[320];
	int st = LS_SUCCESS;

	a = access_cached(l->env.access_dirs, why, sizeof(why));
	if (!a) {
		snprintf(l->err, sizeof(l->err), "access files: %.360s", why);
		return LS_TARGET_ERR;
	}
	if (!l->tpgt) {
		snprintf(l->err, sizeof(l->err),
			 "target %.223s is not offered on this portal (in no PortalGroup)",
			 t->name);
		st = LS_NOT_FOUND;
	} else if (!access_portal(a, t->name, l->env.local)) {
		snprintf(l->err, sizeof(l->err),
			 "target %.223s is not offered on this portal (%.100s)",
			 t->name, a->targets.path);
		st = LS_NOT_FOUND;
	} else if (!access_initiator(a, t->name, iname, l->env.peer)) {
		snprintf(l->err, sizeof(l->err),
			 "access to %.223s refused by %.100s", t->name,
			 a->allow.exists ? a->allow.path : a->deny.path);
		st = LS_AUTHZ_FAILED;
	} else if (l->env.cfg->isns_access_control) {
		st = check_isns(l, t, iname);
	}
	return st;
}

/*
 * Whether the target takes another session: its sessions, those of logins
 * that have finished and not been handed off included, less the one a
 * reinstatement replaces. Asked at the first request and again when the
 * login finishes and reserves its TSIH, since others may finish between.
 */
static bool session_room(struct login *l)
{
	const struct target_conf *t = l->target;
	struct registry *reg = l->env.reg;
	size_t n = registry_count(reg, t->tid);

	if (registry_find_isid(reg, t->tid, l->tpgt, l->outcome.initiator,
			       isid_value(l->first.isid)))
		n--;	/* reinstatement replaces it */
	if (t->max_sessions && n >= t->max_sessions) {
		snprintf(l->err, sizeof(l->err),
			 "target %s has its MaxSessions=%u sessions", t->name,
			 t->max_sessions);
		return false;
	}
	return true;
}

/* The same for a connection joining session s, reserved CIDs counted. */
static bool conn_room(struct login *l, const struct reg_session *s)
{
	uint32_t maxc = s->keys[IET_KEY_MAX_CONNECTIONS];
	size_t n = registry_conns(s);

	if (registry_has_cid(s, l->first.cid))
		n--;	/* connection reinstatement */
	if (!maxc)
		maxc = 1;
	if (n >= maxc) {
		snprintf(l->err, sizeof(l->err),
			 "session already has MaxConnections=%u connections",
			 maxc);
		return false;
	}
	return true;
}

/* The first set of keys says who logs in to what; check the session rules. */
static int first_set(struct login *l, const struct text_list *tl)
{
	const char *iname = NULL, *tname = NULL, *stype = NULL;
	struct registry *reg = l->env.reg;
	const struct target_conf *found;
	const uint32_t *limits;
	uint32_t algs;
	size_t i;
	int st;

	/*
	 * The portal group of the address the connection came to (known by
	 * now; not when the login began). 0: in no PortalGroup: refused.
	 */
	l->tpgt = portal_tag_of(l->env.cfg, l->env.local);
	for (i = 0; i < tl->nr; i++) {
		const struct text_pair *p = &tl->pairs[i];

		if (!strcmp(p->key, "InitiatorName") && !iname)
			iname = p->value;
		else if (!strcmp(p->key, "TargetName") && !tname)
			tname = p->value;
		else if (!strcmp(p->key, "SessionType") && !stype)
			stype = p->value;
	}
	if (!iname) {
		snprintf(l->err, sizeof(l->err),
			 "no InitiatorName in the first login request");
		return LS_MISSING_PARAM;
	}
	if (!*iname || strlen(iname) > IET_NAME_MAX || !printable(iname)) {
		snprintf(l->err, sizeof(l->err), "invalid InitiatorName");
		return LS_INIT_ERR;
	}
	strcpy(l->outcome.initiator, iname);

	if (!stype || !strcmp(stype, "Normal")) {
		l->discovery = false;
	} else if (!strcmp(stype, "Discovery")) {
		l->discovery = true;
	} else {
		snprintf(l->err, sizeof(l->err),
			 "SessionType=%.64s is not supported", stype);
		return LS_SESSION_TYPE;
	}

	if (l->discovery) {
		if (tname) {
			snprintf(l->err, sizeof(l->err),
				 "TargetName in a discovery session");
			return LS_INIT_ERR;
		}
		if (!l->leading) {
			snprintf(l->err, sizeof(l->err),
				 "a discovery session has only one connection");
			return LS_CANT_INCLUDE;
		}
		/* The global section's accounts guard discovery. */
		if (auth_copy(&l->auth, &l->env.cfg->auth)) {
			snprintf(l->err, sizeof(l->err), "out of memory");
			return LS_NO_RESOURCES;
		}
		algs = auth_algs(&l->env.cfg->auth, NULL);
		limits = disc_limits;
	} else {
		uint64_t isid = isid_value(l->first.isid);

		if (!tname) {
			snprintf(l->err, sizeof(l->err),
				 "no TargetName in the first login request of a normal session");
			return LS_MISSING_PARAM;
		}
		found = config_target_by_name(l->env.cfg, tname);
		if (!found) {
			snprintf(l->err, sizeof(l->err), "target %.223s not found",
				 tname);
			return LS_NOT_FOUND;
		}
		if (found->deleting) {
			snprintf(l->err, sizeof(l->err),
				 "target %.223s is being deleted (ietadm --op delete)",
				 tname);
			return LS_TARGET_REMOVED;
		}
		if (found->origin == ORIGIN_KERNEL) {
			/*
			 * Found in the kernel, described nowhere: its CHAP
			 * accounts (if it had any) are unknown, so serving it
			 * could let in whom they kept out.
			 */
			snprintf(l->err, sizeof(l->err),
				 "target %.223s is in the kernel but not in the configuration or the state file, so its CHAP accounts are unknown: configure it again (ietd.conf and reload)",
				 tname);
			return LS_UNAVAILABLE;
		}
		st = check_access(l, found, iname);
		if (st)
			return st;
		l->tconf = *found;
		l->tconf.luns = NULL;
		l->tconf.nr_luns = 0;
		memset(&l->tconf.auth, 0, sizeof(l->tconf.auth));
		l->target = &l->tconf;
		if (auth_copy(&l->auth, &found->auth)) {
			snprintf(l->err, sizeof(l->err), "out of memory");
			return LS_NO_RESOURCES;
		}
		algs = auth_algs(&found->auth, &l->env.cfg->auth);
		if (found->redirect[0]) {
			char addr[REDIRECT_MAX + 16];

			/* RFC 7143 11.13.5: moved temporarily, look there. */
			snprintf(addr, sizeof(addr), "%s,%u", l->tconf.redirect,
				 l->tpgt);
			textbuf_add(&l->out, "TargetAddress", addr);
			l->fail_with_text = true;
			snprintf(l->err, sizeof(l->err),
				 "redirected to %s (ietadm --op update --redirect)",
				 l->tconf.redirect);
			return LS_MOVED_TEMP;
		}
		if (l->leading) {
			if (!session_room(l))
				return LS_NO_RESOURCES;
		} else {
			struct reg_session *s;

			s = registry_find_tsih(reg, l->target->tid,
					       l->first.tsih);
			/* A session's connections share its portal group. */
			if (!s || reg_isid(s) != isid || s->tpgt != l->tpgt ||
			    strcasecmp(s->initiator, iname)) {
				snprintf(l->err, sizeof(l->err),
					 "no session with TSIH %u for this initiator and ISID",
					 l->first.tsih);
				return LS_NO_SESSION;
			}
			if (!conn_room(l, s))
				return LS_TOO_MANY_CONNS;
		}
		limits = l->target->keys;
	}
	neg_init(&l->neg, limits, l->discovery, l->leading);
	chap_init(&l->chap, &l->auth, algs, l->env.rnd);
	l->auth_required = l->auth.nr_incoming > 0;
	l->first_set_done = true;
	if (l->auth_required && l->first.csg != STAGE_SECURITY) {
		snprintf(l->err, sizeof(l->err),
			 "%s requires CHAP and the login skips the security stage",
			 l->discovery ? "discovery" : l->target->name);
		return LS_AUTH_FAILED;
	}

	/* RFC 7143 13.9: the first response of a normal session names the TPGT. */
	if (!l->discovery) {
		textbuf_addu(&l->out, "TargetPortalGroupTag", l->tpgt);
		if (l->target->alias[0])
			textbuf_add(&l->out, "TargetAlias", l->target->alias);
	}
	return LS_SUCCESS;
}

static int not_understood(struct login *l, const char *key)
{
	return textbuf_add(&l->out, key, "NotUnderstood");
}

/* AuthMethod: CHAP when the scope has accounts, else None. */
static int auth_method(struct login *l, const struct text_pair *p)
{
	const char *scope = l->discovery ? "discovery" : l->target->name;
	bool chap = !p->too_long && list_has(p->value, "CHAP");
	bool none = !p->too_long && list_has(p->value, "None");

	if (l->auth_state != AUTH_START) {
		snprintf(l->err, sizeof(l->err), "AuthMethod after it was agreed");
		return LS_INIT_ERR;
	}
	if (l->auth_required && chap) {
		textbuf_add(&l->out, "AuthMethod", "CHAP");
		l->auth_state = AUTH_CHAP;
		return LS_SUCCESS;
	}
	if (!l->auth_required && none) {
		textbuf_add(&l->out, "AuthMethod", "None");
		l->auth_state = AUTH_OK;
		return LS_SUCCESS;
	}
	textbuf_add(&l->out, "AuthMethod", "Reject");
	l->fail_with_text = true;
	if (l->auth_required)
		snprintf(l->err, sizeof(l->err),
			 "%s requires CHAP; the initiator offers only AuthMethod=%.64s",
			 scope, p->too_long ? "(too long)" : p->value);
	else
		snprintf(l->err, sizeof(l->err),
			 "the initiator offers only AuthMethod=%.64s and %s has no IncomingUser",
			 p->too_long ? "(too long)" : p->value, scope);
	return LS_AUTH_FAILED;
}

static const char *val(const struct text_pair *p)
{
	return p ? p->value : NULL;
}

/* The security keys of a set, in the order the exchange needs them. */
static int auth_step(struct login *l, const struct auth_keys *k)
{
	const struct account *acc;
	int st;

	if (k->method) {
		st = auth_method(l, k->method);
		if (st)
			return st;
	}
	if (k->a) {
		if (l->auth_state != AUTH_CHAP) {
			snprintf(l->err, sizeof(l->err),
				 "CHAP_A without AuthMethod=CHAP agreed");
			return LS_AUTH_FAILED;
		}
		if (k->a->too_long ||
		    chap_challenge(&l->chap, k->a->value, &l->out)) {
			if (l->chap.reject_a) {
				textbuf_add(&l->out, "CHAP_A", "Reject");
				l->fail_with_text = true;
			}
			snprintf(l->err, sizeof(l->err), "CHAP: %s",
				 k->a->too_long ? "CHAP_A too long" :
				 l->chap.err);
			return LS_AUTH_FAILED;
		}
	}
	if (k->n || k->r || k->i || k->c) {
		if (l->auth_state != AUTH_CHAP) {
			snprintf(l->err, sizeof(l->err),
				 "CHAP keys without AuthMethod=CHAP agreed");
			return LS_AUTH_FAILED;
		}
		if ((k->n && k->n->too_long) || (k->r && k->r->too_long) ||
		    (k->i && k->i->too_long) || (k->c && k->c->too_long)) {
			snprintf(l->err, sizeof(l->err), "CHAP: a value too long");
			return LS_AUTH_FAILED;
		}
		if (chap_verify(&l->chap, val(k->n), val(k->r), val(k->i),
				val(k->c), &l->out)) {
			snprintf(l->err, sizeof(l->err), "CHAP: %s",
				 l->chap.err);
			l->chap_wrong = true;
			return LS_AUTH_FAILED;
		}
		acc = auth_incoming(l->chap.auth, l->chap.user);
		if (!acc || !account_admits(acc, l->outcome.initiator)) {
			snprintf(l->err, sizeof(l->err),
				 "CHAP user %.64s may not log in as %.223s (its IncomingUser line lists the initiators it may)",
				 l->chap.user, l->outcome.initiator);
			return LS_AUTHZ_FAILED;
		}
		l->auth_state = AUTH_OK;
		snprintf(l->auth_info, sizeof(l->auth_info),
			 "CHAP %s user %s%s", l->chap.alg->name, l->chap.user,
			 l->chap.mutual ? ", mutual" : "");
	}
	return LS_SUCCESS;
}

/* Where a security key goes in the set's auth_keys. */
static const struct text_pair **auth_slot(struct auth_keys *ak,
					  const char *name)
{
	if (!strcmp(name, "AuthMethod"))
		return &ak->method;
	if (!strcmp(name, "CHAP_A"))
		return &ak->a;
	if (!strcmp(name, "CHAP_N"))
		return &ak->n;
	if (!strcmp(name, "CHAP_R"))
		return &ak->r;
	if (!strcmp(name, "CHAP_I"))
		return &ak->i;
	return &ak->c;
}

static int answer_keys(struct login *l, const struct text_list *tl)
{
	const struct text_pair *fbl = NULL;
	struct auth_keys ak;
	size_t i;
	int st;

	memset(&ak, 0, sizeof(ak));
	for (i = 0; i < tl->nr; i++) {
		const struct text_pair *p = &tl->pairs[i];
		const struct key_def *k = key_find(p->key);

		if (!k) {
			/* X-, X# and keys we do not know (RFC 7143 6.2). */
			not_understood(l, p->key);
			continue;
		}
		switch (k->kind) {
		case KEY_DECL_INITIATOR:
			if (neg_mark_seen(&l->neg, k))
				goto failed;
			continue;
		case KEY_DECL_TARGET:
		case KEY_FFP:
			not_understood(l, p->key);
			continue;
		case KEY_AUTH:
			if (l->stage != STAGE_SECURITY) {
				not_understood(l, p->key);
				continue;
			}
			if (neg_mark_seen(&l->neg, k))
				goto failed;
			*auth_slot(&ak, k->name) = p;
			continue;
		default:
			break;
		}
		/* Operational keys belong to the operational stage, as in IET and LIO. */
		if (l->stage != STAGE_OPERATIONAL) {
			not_understood(l, p->key);
			continue;
		}
		if (k->idx == IET_KEY_FIRST_BURST && !fbl) {
			/* Answered last, so it can be capped by MaxBurstLength. */
			fbl = p;
			continue;
		}
		if (neg_operational(&l->neg, k, p->value, p->too_long, &l->out))
			goto failed;
	}
	if (fbl && neg_operational(&l->neg, key_find(fbl->key), fbl->value,
				   fbl->too_long, &l->out))
		goto failed;
	st = auth_step(l, &ak);
	if (st)
		return st;
	if (l->out.overflow) {
		snprintf(l->err, sizeof(l->err), "login response too long");
		return LS_TARGET_ERR;
	}
	return LS_SUCCESS;
failed:
	snprintf(l->err, sizeof(l->err), "%s", l->neg.err);
	return LS_INIT_ERR;
}

static int process_set(struct login *l)
{
	struct text_list tl;
	char perr[192];
	int st;

	textbuf_reset(&l->out);
	l->out_off = 0;
	if (text_parse(l->in.buf, l->in.len, &tl, perr, sizeof(perr))) {
		snprintf(l->err, sizeof(l->err), "bad login text: %s", perr);
		return LS_INIT_ERR;
	}
	st = LS_SUCCESS;
	if (!l->first_set_done)
		st = first_set(l, &tl);
	if (st == LS_SUCCESS)
		st = answer_keys(l, &tl);
	text_list_free(&tl);
	return st;
}

/* Everything agreed: check the outcome and reserve the session's TSIH. */
static int finish(struct login *l)
{
	struct login_outcome *o = &l->outcome;
	struct registry *reg = l->env.reg;
	uint64_t isid = isid_value(l->first.isid);
	uint32_t keys[IET_KEY_COUNT];
	struct reg_session *s;

	if (neg_finish(&l->neg, keys)) {
		snprintf(l->err, sizeof(l->err), "%s", l->neg.err);
		return LS_INIT_ERR;
	}
	o->discovery = l->discovery;
	o->leading = l->leading;
	o->cid = l->first.cid;
	o->exp_cmdsn = l->req.cmdsn;
	o->queued_cmds = cmd_window(l);
	memcpy(o->keys, keys, sizeof(o->keys));

	if (l->discovery || l->leading) {
		o->tid = l->discovery ? 0 : l->target->tid;
		/* Other logins may have taken the last place meanwhile. */
		if (!l->discovery && !session_room(l))
			return LS_NO_RESOURCES;
		s = registry_reserve(reg, o->tid, isid, o->initiator,
				     l->discovery);
		if (!s) {
			snprintf(l->err, sizeof(l->err), "no free TSIH");
			return LS_NO_RESOURCES;
		}
		s->tpgt = l->tpgt;
		o->sid = s->sid;
		o->tpgt = l->tpgt;
		o->reserved = s;
		return LS_SUCCESS;
	}
	/* A connection joins a session: session keys are the session's. */
	s = registry_find_tsih(reg, l->target->tid, l->first.tsih);
	if (!s || reg_isid(s) != isid) {
		snprintf(l->err, sizeof(l->err),
			 "session with TSIH %u ended during the login",
			 l->first.tsih);
		return LS_NO_SESSION;
	}
	if (!conn_room(l, s))
		return LS_TOO_MANY_CONNS;
	switch (registry_reserve_cid(s, o->cid)) {
	case 0:
		break;
	case -EBUSY:
		snprintf(l->err, sizeof(l->err),
			 "connection %u of the session is being logged in by another login",
			 o->cid);
		return LS_TOO_MANY_CONNS;
	default:
		snprintf(l->err, sizeof(l->err), "out of memory");
		return LS_NO_RESOURCES;
	}
	o->cid_reserved = true;
	o->tid = s->tid;
	o->sid = s->sid;
	o->tpgt = s->tpgt;
	memcpy(o->keys, s->keys, sizeof(o->keys));
	o->keys[IET_KEY_HEADER_DIGEST] = keys[IET_KEY_HEADER_DIGEST];
	o->keys[IET_KEY_DATA_DIGEST] = keys[IET_KEY_DATA_DIGEST];
	o->keys[IET_KEY_MAX_RECV_DSL] = keys[IET_KEY_MAX_RECV_DSL];
	o->keys[IET_KEY_MAX_XMIT_DSL] = keys[IET_KEY_MAX_XMIT_DSL];
	return LS_SUCCESS;
}

/* Send the next piece of the response text (all of it when it fits). */
static enum login_result send_piece(struct login *l, struct pdu_out *out)
{
	size_t left = l->out.len - l->out_off;
	size_t n = left > LOGIN_DSL_MAX ? LOGIN_DSL_MAX : left;
	struct login_rsp r;

	rsp_header(l, &r);
	r.csg = l->stage;
	r.cont = left > n;
	r.transit = !r.cont && l->reply_transit;
	r.nsg = r.transit ? l->reply_nsg : 0;
	r.dlength = n;
	if (r.transit && r.nsg == STAGE_FFP)
		r.tsih = l->outcome.sid & 0xffff;
	login_rsp_encode(&r, out->bhs);
	out->data = n ? (const uint8_t *)l->out.buf + l->out_off : NULL;
	out->dlen = n;
	l->out_off += n;
	l->chunking = r.cont;
	if (r.transit) {
		l->stage = r.nsg;
		if (r.nsg == STAGE_FFP) {
			l->outcome.statsn = r.statsn + 1;
			l->state = L_DONE;
			return LOGIN_DONE;
		}
	}
	return LOGIN_CONTINUE;
}

enum login_result login_pdu(struct login *l, const uint8_t *bhs,
			    const uint8_t *data, size_t dlen,
			    struct pdu_out *out)
{
	struct login_req *req = &l->req;
	struct bhs_common c;
	const char *why = "";
	bool bad;
	int st, n;

	memset(out, 0, sizeof(*out));
	if (l->state == L_DONE || l->state == L_FAILED) {
		snprintf(l->err, sizeof(l->err), "PDU after the login ended");
		return LOGIN_DROP;
	}
	bhs_common_decode(bhs, &c);
	if (c.opcode != OP_LOGIN_REQ) {
		if (l->state == L_START) {
			/* RFC 7143 6.3: anything else first is not iSCSI. */
			snprintf(l->err, sizeof(l->err),
				 "first PDU is not a Login Request (opcode 0x%02x)",
				 c.opcode);
			l->state = L_FAILED;
			return LOGIN_DROP;
		}
		*req = l->first;
		req->itt = c.itt;
		req->csg = l->stage;
		return fail(l, LS_INVALID_IN_LOGIN, out,
			    "opcode 0x%02x during login", c.opcode);
	}
	bad = login_req_decode(bhs, req, &why) != 0;
	if (l->state == L_START) {
		l->first = *req;
		l->leading = req->tsih == 0;
		l->stage = req->csg;
		l->state = L_ACTIVE;
		if (!bad && (req->vmin > ISCSI_VERSION || req->vmax < req->vmin))
			return fail(l, LS_UNSUPPORTED_VERSION, out,
				    "iSCSI versions %u..%u, only %u is supported",
				    req->vmin, req->vmax, ISCSI_VERSION);
	}
	if (bad)
		return fail(l, LS_INIT_ERR, out, "malformed Login Request: %s",
			    why);
	if (req->dlength != dlen || dlen > LOGIN_DSL_MAX)
		return fail(l, LS_INIT_ERR, out,
			    "data segment of %u bytes, at most %d during login",
			    req->dlength, LOGIN_DSL_MAX);
	if (memcmp(req->isid, l->first.isid, sizeof(req->isid)) ||
	    req->tsih != l->first.tsih || req->cid != l->first.cid ||
	    req->vmax != l->first.vmax || req->vmin != l->first.vmin)
		return fail(l, LS_INIT_ERR, out,
			    "ISID, TSIH, CID or version changed during the login");
	if (req->transit && req->cont)
		return fail(l, LS_INIT_ERR, out, "T and C bits both set");
	if (req->csg != STAGE_SECURITY && req->csg != STAGE_OPERATIONAL)
		return fail(l, LS_INIT_ERR, out, "CSG %u is not a login stage",
			    req->csg);
	if (req->csg != l->stage)
		return fail(l, LS_INIT_ERR, out, "CSG %u, expected %u",
			    req->csg, l->stage);
	if (req->transit && (req->nsg == 2 || req->nsg <= req->csg))
		return fail(l, LS_INIT_ERR, out, "NSG %u after CSG %u",
			    req->nsg, req->csg);

	if (l->chunking) {
		if (dlen)
			return fail(l, LS_INIT_ERR, out,
				    "text while the target's response continues");
		return send_piece(l, out);
	}
	if (textbuf_append(&l->in, data, dlen))
		return fail(l, LS_INIT_ERR, out,
			    "login text longer than %d bytes", TEXT_SET_MAX);
	if (req->cont) {
		/* RFC 7143 11.12.2: acknowledge, wait for the rest. */
		textbuf_reset(&l->out);
		l->out_off = 0;
		l->reply_transit = false;
		return send_piece(l, out);
	}

	st = process_set(l);
	textbuf_reset(&l->in);
	if (st)
		return reject(l, st, out);
	/*
	 * Offers go out only when the initiator asks to move on, so the
	 * next set must answer them (RFC 7143 6.2). Failing here beats
	 * answering T=0 until the login times out.
	 */
	if (neg_pending(&l->neg))
		return fail(l, LS_INIT_ERR, out,
			    "no answer to the target's offer of %s",
			    neg_pending_key(&l->neg));

	l->reply_transit = req->transit;
	l->reply_nsg = req->nsg;
	if (l->stage == STAGE_OPERATIONAL) {
		if (neg_declare(&l->neg, &l->out))
			return fail(l, LS_TARGET_ERR, out, "login response too long");
		if (req->transit) {
			n = neg_offers(&l->neg, &l->out);
			if (n < 0)
				return fail(l, LS_TARGET_ERR, out,
					    "login response too long");
		}
		/* The target does not transit while its offers are open. */
		if (neg_pending(&l->neg))
			l->reply_transit = false;
	} else if (req->transit && l->auth_state != AUTH_OK &&
		   (l->auth_required || l->auth_state == AUTH_CHAP)) {
		/* No leaving the security stage before authentication. */
		if (l->auth_state != AUTH_CHAP)
			return fail(l, LS_AUTH_FAILED, out,
				    "%s requires CHAP and the initiator offered no AuthMethod",
				    l->discovery ? "discovery" :
				    l->target->name);
		l->reply_transit = false;
	} else if (req->transit && req->nsg == STAGE_FFP &&
		   neg_wants_operational(&l->neg)) {
		/* Skip refused: the target has keys to offer or declare. */
		l->reply_nsg = STAGE_OPERATIONAL;
	}
	if (l->reply_transit && l->reply_nsg == STAGE_FFP) {
		st = finish(l);
		if (st)
			return reject(l, st, out);
	}
	return send_piece(l, out);
}
