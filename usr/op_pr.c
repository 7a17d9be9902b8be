// SPDX-License-Identifier: GPL-2.0
/*
 * A LUN's reservations for ietadm: shown with --op show --tid --lun, ended
 * by an administrator with --op update --tid --lun --params
 * Reservations=release|clear (a cluster node that died holding one).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ctl_ops.h"
#include "json.h"
#include "log.h"
#include "op_pr.h"

/* SPC-4 Table 177 */
const char *pr_type_name(uint32_t type)
{
	switch (type) {
	case 1: return "Write Exclusive";
	case 3: return "Exclusive Access";
	case 5: return "Write Exclusive, Registrants Only";
	case 6: return "Exclusive Access, Registrants Only";
	case 7: return "Write Exclusive, All Registrants";
	case 8: return "Exclusive Access, All Registrants";
	default: return "unknown";
	}
}

/* The initiator port as a TransportID names it: "name,i,0xISID". */
static void port_name(char *buf, size_t len, const char *initiator,
		      bool any_isid, uint64_t isid)
{
	if (any_isid)
		snprintf(buf, len, "%s", initiator);
	else
		snprintf(buf, len, "%s,i,0x%012llx", initiator,
			 (unsigned long long)isid);
}

static const char *spc2_holder(const struct kpr *pr,
			       const struct ktarget *kt, char *buf,
			       size_t len)
{
	const char *name = "";
	size_t i;

	for (i = 0; kt && i < kt->nr_sessions; i++)
		if (kt->sessions[i].sid == pr->spc2_sid)
			name = kt->sessions[i].initiator;
	port_name(buf, len, name, false, pr->spc2_sid >> 16);
	return buf;
}

void pr_text(struct textbuf *out, const struct kpr *pr,
	     const struct ktarget *kt)
{
	char port[IET_NAME_MAX + 32];
	size_t i;

	out_line(out, "Reservation=%s",
		 pr->type ? pr_type_name(pr->type) : "None");
	if (pr->spc2)
		out_line(out, "SPC2Reservation=%s sid:%llu",
			 spc2_holder(pr, kt, port, sizeof(port)),
			 (unsigned long long)pr->spc2_sid);
	out_line(out, "APTPL=%s", pr->aptpl ? "Yes" : "No");
	out_line(out, "PRGeneration=%u", pr->generation);
	for (i = 0; i < pr->nr_regs; i++) {
		const struct kpr_reg *r = &pr->regs[i];

		port_name(port, sizeof(port), r->initiator, r->any_isid,
			  r->isid);
		out_line(out, "Registration=0x%016llx %s%s%s",
			 (unsigned long long)r->key, port,
			 r->rtpi ? "" : " all-target-ports",
			 r->holder ? " holder" : "");
	}
}

void pr_json(struct jw *j, const struct kpr *pr, const struct ktarget *kt)
{
	char port[IET_NAME_MAX + 32], key[24];
	size_t i;

	jw_obj(j, "reservations");
	if (pr->type)
		jw_str(j, "type", pr_type_name(pr->type));
	if (pr->spc2)
		jw_str(j, "spc2_holder", spc2_holder(pr, kt, port, sizeof(port)));
	jw_bool(j, "aptpl", pr->aptpl);
	jw_u64(j, "generation", pr->generation);
	jw_arr(j, "registrations");
	for (i = 0; i < pr->nr_regs; i++) {
		const struct kpr_reg *r = &pr->regs[i];

		jw_obj(j, NULL);
		/* A string: 64 bits do not fit in JSON's numbers. */
		snprintf(key, sizeof(key), "0x%016llx", (unsigned long long)r->key);
		jw_str(j, "key", key);
		port_name(port, sizeof(port), r->initiator, r->any_isid, r->isid);
		jw_str(j, "initiator_port", port);
		jw_u64(j, "relative_target_port", r->rtpi);
		jw_bool(j, "holder", r->holder);
		jw_end(j, '}');
	}
	jw_end(j, ']');
	jw_end(j, '}');
}

/* Reservations=: into *arg, an enum iet_pr_clear. */
static int clear_param(void *arg, const char *key, const char *value)
{
	uint32_t *what = arg;

	if (strcasecmp(key, "Reservations"))
		return -ENOENT;
	if (!strcasecmp(value, "release"))
		*what = IET_PR_RELEASE;
	else if (!strcasecmp(value, "clear"))
		*what = IET_PR_CLEAR_ALL;
	else
		return -EINVAL;
	return 0;
}

int pr_update(struct runtime *rt, const struct ctl_req *req, char *err,
	      size_t errlen)
{
	uint32_t what = IET_PR_CLEAR_UNSPEC;
	struct target_conf *t;
	int ret;

	ret = params_each(req->params, clear_param, &what, err, errlen);
	if (ret || what == IET_PR_CLEAR_UNSPEC) {
		snprintf(err, errlen,
			 "--op update of a LUN takes --params Reservations=release (its reservations end) or Reservations=clear (its registrations too), or Size=, Blocks= or Resize=backing; LUNs are otherwise deleted and added again");
		return -EINVAL;
	}
	t = req_target(rt, req, err, errlen);
	if (!t)
		return -ENOENT;
	ret = kernel_pr_clear(t->tid, req->lun, what == IET_PR_CLEAR_ALL);
	if (ret)
		return kernel_failed(ret, err, errlen,
				     "target %u LUN %u: ending its reservations",
				     t->tid, req->lun);
	log_info("ietadm: target tid %u %s LUN %u: %s", t->tid, t->name,
		 req->lun, what == IET_PR_CLEAR_ALL ?
		 "reservations and registrations cleared" :
		 "reservations released");
	return 0;
}
