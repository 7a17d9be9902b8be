// SPDX-License-Identifier: GPL-2.0
/* Text requests in the full feature phase: SendTargets for this target. */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>

#include "iet.h"

static u32 text_add(struct iet_buf *out, u32 off, const char *key,
		    const char *val)
{
	char kv[IET_NAME_MAX + 64];
	int n = snprintf(kv, sizeof(kv), "%s=%s", key, val);

	if (n < 0 || n >= sizeof(kv) || off + n + 1 > out->len)
		return off;
	iet_buf_copy_to(out, off, kv, n + 1);
	return off + n + 1;
}

static u32 text_addresses(struct iet_cmd *cmd, struct iet_buf *out, u32 off)
{
	struct iet_conn *conn = cmd->conn;
	char addr[64];

	off = text_add(out, off, "TargetName", conn->session->target->name);
	if (conn->local.ss_family == AF_INET6)
		snprintf(addr, sizeof(addr), "[%pI6c]:%u,1",
			 &((struct sockaddr_in6 *)&conn->local)->sin6_addr,
			 ntohs(((struct sockaddr_in6 *)&conn->local)->sin6_port));
	else
		snprintf(addr, sizeof(addr), "%pI4:%u,1",
			 &((struct sockaddr_in *)&conn->local)->sin_addr,
			 ntohs(((struct sockaddr_in *)&conn->local)->sin_port));
	return text_add(out, off, "TargetAddress", addr);
}

/*
 * Operational keys are negotiated at login; in the full feature phase only
 * SendTargets is answered: for this target, at the connection's address.
 */
void iet_text_execute(struct iet_cmd *cmd)
{
	struct iscsi_text *hdr = (struct iscsi_text *)&cmd->hdr;
	struct iet_conn *conn = cmd->conn;
	struct iet_buf in = cmd->data;
	u32 len = cmd->data_len, off = 0, pos = 0;
	char *text;

	if (!(hdr->flags & ISCSI_FLAG_CMD_FINAL) ||
	    hdr->ttt != cpu_to_be32(ISCSI_RESERVED_TAG)) {
		/* No multi-PDU text in the full feature phase. */
		iet_reject(conn, &cmd->hdr, ISCSI_REASON_CMD_NOT_SUPPORTED);
		return;
	}
	text = kmalloc(len + 1, GFP_NOIO);
	if (!text)
		return;
	iet_buf_copy_from(&in, 0, text, len);
	text[len] = '\0';
	memset(&cmd->data, 0, sizeof(cmd->data));
	if (iet_cmd_buf_alloc(cmd, &cmd->data,
			      min_t(u32, conn->max_xmit_dsl, IET_TEXT_MAX))) {
		iet_buf_free(&in);
		kfree(text);
		return;
	}
	while (pos < len) {
		char *kv = text + pos, *eq = strchr(kv, '=');
		u32 n = strlen(kv);

		pos += n + 1;
		if (!n)
			continue;
		if (!eq) {
			off = text_add(&cmd->data, off, kv, "Reject");
			continue;
		}
		*eq = '\0';
		if (!strcmp(kv, "SendTargets")) {
			if (!strcmp(eq + 1, "All") || !eq[1] ||
			    !strcmp(eq + 1, conn->session->target->name))
				off = text_addresses(cmd, &cmd->data, off);
		} else {
			off = text_add(&cmd->data, off, kv, "NotUnderstood");
		}
	}
	cmd->data_len = off;
	iet_buf_free(&in);
	kfree(text);
	iet_cmd_queue_tx(cmd);
}
