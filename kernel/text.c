// SPDX-License-Identifier: GPL-2.0
/*
 * Text requests in the full feature phase (RFC 7143 11.10, 11.11): the
 * keys of a request may span PDUs (C=1, each answered empty with a Target
 * Transfer Tag until the last), and an answer longer than the initiator's
 * MaxRecvDataSegmentLength goes in pieces (C=1), each fetched with an empty
 * request carrying the tag. Operational keys are negotiated at login; here
 * only SendTargets is answered: for this target, at the connection's
 * address. A connection holds one exchange, of IET_TEXT_MAX bytes each
 * way at most, under its text_mutex: the read thread that delivers a Text
 * request in CmdSN order may be another connection's of the session.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>

#include "iet.h"

/* RFC 7143 11.17.1 reasons, under their RFC 3720 names in iscsi_proto.h. */
#define REASON_INVALID_PDU_FIELD	ISCSI_REASON_BOOKMARK_INVALID
#define REASON_OUT_OF_RESOURCES		ISCSI_REASON_BOOKMARK_NO_RESOURCES

struct iet_text {
	u32 itt;			/* of the exchange, as on the wire */
	u32 ttt;			/* what the initiator must send back */
	bool final_asked;		/* the last request had F=1 */
	bool answered;			/* the request is complete */
	u32 in_len;
	u32 out_len;
	u32 out_off;			/* sent so far */
	char in[IET_TEXT_MAX + 1];
	char out[IET_TEXT_MAX];
};

static u32 text_add(char *out, u32 off, const char *key, const char *val)
{
	int n = snprintf(out + off, IET_TEXT_MAX - off, "%s=%s", key, val);

	if (n < 0 || off + n + 1 > IET_TEXT_MAX)
		return off;
	return off + n + 1;
}

/* The portal the connection came in through, with its group's tag. */
static u32 text_addresses(struct iet_conn *conn, char *out, u32 off)
{
	u16 tag = conn->session->tpgt;
	char addr[64];

	off = text_add(out, off, "TargetName", conn->session->target->name);
	if (conn->local.ss_family == AF_INET6)
		snprintf(addr, sizeof(addr), "[%pI6c]:%u,%u",
			 &((struct sockaddr_in6 *)&conn->local)->sin6_addr,
			 ntohs(((struct sockaddr_in6 *)&conn->local)->sin6_port),
			 tag);
	else
		snprintf(addr, sizeof(addr), "%pI4:%u,%u",
			 &((struct sockaddr_in *)&conn->local)->sin_addr,
			 ntohs(((struct sockaddr_in *)&conn->local)->sin_port),
			 tag);
	return text_add(out, off, "TargetAddress", addr);
}

/* An iSCSI name's form (RFC 3720 3.2.6.3): the kind of name it is. */
static bool iscsi_name_like(const char *v)
{
	return !strncasecmp(v, "iqn.", 4) || !strncasecmp(v, "eui.", 4) ||
	       !strncasecmp(v, "naa.", 4);
}

/*
 * SendTargets (RFC 7143 Appendix C) in a normal session: All, nothing or
 * this target's name give this target; another target's name gives
 * nothing; a value that is no iSCSI name is refused (SendTargets=Reject).
 */
static u32 send_targets(struct iet_conn *conn, const char *v, char *out,
			u32 off)
{
	if (!strcmp(v, "All") || !*v ||
	    !strcasecmp(v, conn->session->target->name))
		return text_addresses(conn, out, off);
	if (iscsi_name_like(v))
		return off;
	return text_add(out, off, "SendTargets", "Reject");
}

static void text_answer(struct iet_conn *conn, struct iet_text *t)
{
	u32 pos = 0, off = 0;

	t->in[t->in_len] = '\0';
	while (pos < t->in_len) {
		char *kv = t->in + pos, *eq = strchr(kv, '=');
		u32 n = strlen(kv);

		pos += n + 1;
		if (!n)
			continue;
		if (!eq) {
			off = text_add(t->out, off, kv, "Reject");
			continue;
		}
		*eq = '\0';
		if (!strcmp(kv, "SendTargets"))
			off = send_targets(conn, eq + 1, t->out, off);
		else
			off = text_add(t->out, off, kv, "NotUnderstood");
	}
	t->out_len = off;
	t->out_off = 0;
}

static void text_end(struct iet_conn *conn)
{
	kfree(conn->text);
	conn->text = NULL;
}

void iet_text_release(struct iet_conn *conn)
{
	text_end(conn);
}

/* The next piece of the answer, or an empty one while a request spans PDUs. */
static void text_respond(struct iet_cmd *cmd, struct iet_text *t, bool more_in)
{
	struct iet_conn *conn = cmd->conn;
	u32 n = 0;

	if (!more_in) {
		n = min(t->out_len - t->out_off, conn->max_xmit_dsl);
		iet_buf_copy_to(&cmd->data, 0, t->out + t->out_off, n);
		t->out_off += n;
	}
	cmd->data_len = n;
	if (more_in || t->out_off < t->out_len) {
		/* More to come one way or the other: the tag fetches it. */
		cmd->text_flags = t->out_off < t->out_len && !more_in ?
				  ISCSI_FLAG_TEXT_CONTINUE : 0;
		t->ttt = iet_next_ttt(conn);
		cmd->text_ttt = t->ttt;
	} else if (!t->final_asked) {
		/* The initiator keeps the exchange open: it ends it. */
		t->ttt = iet_next_ttt(conn);
		cmd->text_ttt = t->ttt;
		cmd->text_flags = 0;
	} else {
		cmd->text_flags = ISCSI_FLAG_CMD_FINAL;
		cmd->text_ttt = ISCSI_RESERVED_TAG;
		text_end(conn);
	}
	iet_cmd_queue_tx(cmd);
}

/* A Reject ends the exchange. */
static void text_refuse(struct iet_cmd *cmd, u8 reason)
{
	text_end(cmd->conn);
	iet_reject(cmd->conn, &cmd->hdr, reason);
}

static void text_execute(struct iet_cmd *cmd)
{
	struct iscsi_text *hdr = (struct iscsi_text *)&cmd->hdr;
	struct iet_conn *conn = cmd->conn;
	bool final = hdr->flags & ISCSI_FLAG_CMD_FINAL;
	bool cont = hdr->flags & ISCSI_FLAG_TEXT_CONTINUE;
	u32 ttt = be32_to_cpu(hdr->ttt), len = cmd->data_len;
	struct iet_buf in = cmd->data;
	struct iet_text *t = conn->text;

	if (final && cont) {
		text_refuse(cmd, ISCSI_REASON_PROTOCOL_ERROR);
		return;
	}
	if (ttt == ISCSI_RESERVED_TAG) {
		/* A new exchange; one left open is forgotten. */
		text_end(conn);
		t = kzalloc(sizeof(*t), GFP_NOIO);
		if (!t) {
			text_refuse(cmd, REASON_OUT_OF_RESOURCES);
			return;
		}
		conn->text = t;
		t->itt = cmd->itt;
	} else if (!t || t->ttt != ttt || t->itt != cmd->itt) {
		/* A tag this connection did not give, or for another exchange. */
		text_refuse(cmd, REASON_INVALID_PDU_FIELD);
		return;
	} else if (t->answered) {
		/* Fetching the rest of the answer, or ending the exchange. */
		if (len) {
			text_refuse(cmd, ISCSI_REASON_PROTOCOL_ERROR);
			return;
		}
		t->final_asked = final;
		goto respond;
	}

	/* The request's keys, or more of them. */
	if (len > IET_TEXT_MAX - t->in_len) {
		text_refuse(cmd, REASON_OUT_OF_RESOURCES);
		return;
	}
	iet_buf_copy_from(&in, 0, t->in + t->in_len, len);
	t->in_len += len;
	if (cont)
		goto respond;
	t->final_asked = final;
	t->answered = true;
	text_answer(conn, t);
respond:
	iet_buf_free(&in);
	memset(&cmd->data, 0, sizeof(cmd->data));
	if (iet_cmd_buf_alloc(cmd, &cmd->data,
			      min_t(u32, conn->max_xmit_dsl, IET_TEXT_MAX))) {
		text_refuse(cmd, REASON_OUT_OF_RESOURCES);
		return;
	}
	text_respond(cmd, t, cont);
}

void iet_text_execute(struct iet_cmd *cmd)
{
	struct iet_conn *conn = cmd->conn;

	mutex_lock(&conn->text_mutex);
	text_execute(cmd);
	mutex_unlock(&conn->text_mutex);
}
