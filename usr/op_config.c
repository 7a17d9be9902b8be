// SPDX-License-Identifier: GPL-2.0
/*
 * ietadm --op reload [--dry-run]: read ietd.conf again and apply the
 * difference (runtime.h); ietadm --op save: the running configuration in
 * ietd.conf syntax, secrets included (the socket is root's alone).
 */
#include <errno.h>
#include <stdio.h>

#include "confwrite.h"
#include "ctl_ops.h"
#include "version.h"

int op_reload(struct runtime *rt, const struct ctl_req *req,
	      struct textbuf *out, char *err, size_t errlen)
{
	if (req->fields & ~(CTL_F_DRYRUN | CTL_F_JSON)) {
		snprintf(err, errlen, "--op reload takes only --dry-run");
		return -EINVAL;
	}
	return runtime_reload(rt, req->fields & CTL_F_DRYRUN, out, err,
			      errlen);
}

int op_save(struct runtime *rt, const struct ctl_req *req,
	    struct textbuf *out, char *err, size_t errlen)
{
	int ret;

	(void)req;
	ret = config_write(&rt->cfg, 0,
			   "# The running configuration of ietd " IET_VERSION
			   " (ietadm --op save), ietd.conf(5) syntax.\n"
			   "# It holds CHAP secrets: keep it readable by root only.\n",
			   out);
	if (ret)
		snprintf(err, errlen, "the configuration does not fit in a response");
	return ret;
}
