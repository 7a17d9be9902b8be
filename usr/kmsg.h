/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The requests ietd sends to iscsi_trgt, built into the caller's buffer:
 * pure functions, no socket, so that tests can parse each one back. Every
 * attribute goes in through libmnl's checked puts: a request that does not
 * fit fails with -EMSGSIZE and nothing is written past the buffer.
 */
#ifndef IET_USR_KMSG_H
#define IET_USR_KMSG_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "model.h"

/* Sizes on the wire, from the uapi limits of <linux/iet.h>. */
#define KMSG_HDR	(MNL_NLMSG_HDRLEN + \
			 MNL_ALIGN(sizeof(struct genlmsghdr)))
#define KMSG_ATTR(len)	(MNL_ATTR_HDRLEN + MNL_ALIGN(len))
#define KMSG_STR(max)	KMSG_ATTR((max) + 1)	/* and its NUL */
#define KMSG_U32_NEST(n) (MNL_ATTR_HDRLEN + (n) * KMSG_ATTR(4))

#define KMSG_TARGET_MAX	(KMSG_HDR + KMSG_ATTR(4) + \
			 KMSG_STR(IET_NAME_MAX) + \
			 KMSG_U32_NEST(IET_TP_MAX) + \
			 KMSG_U32_NEST(IET_KEY_MAX))
#define KMSG_LUN_MAX	(KMSG_HDR + 9 * KMSG_ATTR(4) + KMSG_ATTR(8) + \
			 KMSG_STR(IET_PATH_MAX) + KMSG_STR(IET_SCSI_ID_MAX) + \
			 KMSG_STR(IET_SCSI_SN_MAX))
#define KMSG_SESSION_MAX (KMSG_HDR + 3 * KMSG_ATTR(4) + KMSG_ATTR(8) + \
			  KMSG_STR(IET_NAME_MAX) + KMSG_U32_NEST(IET_KEY_MAX))
#define KMSG_CONN_MAX	(KMSG_HDR + 4 * KMSG_ATTR(4) + KMSG_ATTR(8) + \
			 KMSG_U32_NEST(IET_KEY_MAX))

#define KMSG_MAX2(a, b)	((a) > (b) ? (a) : (b))
/* The largest request: a buffer of this size takes any of them. */
#define KMSG_MAX	KMSG_MAX2(KMSG_MAX2(KMSG_TARGET_MAX, KMSG_LUN_MAX), \
				  KMSG_MAX2(KMSG_SESSION_MAX, KMSG_CONN_MAX))

/* Where a request goes: the family id and the sequence number to use. */
struct kmsg_to {
	uint16_t family;
	uint32_t seq;
};

/*
 * Each builds one request at buf (a struct nlmsghdr) and returns 0, or
 * -EMSGSIZE when it does not fit in len bytes. Arrays of parameters and
 * keys are indexed by enum iet_tparam / iet_key; NULL leaves them out.
 */
int kmsg_get_family(void *buf, size_t len, uint32_t seq, const char *name);
int kmsg_target_new(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, const char *name, const uint32_t *tparams,
		    const uint32_t *keys);
int kmsg_target_set(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, const uint32_t *tparams,
		    const uint32_t *keys);
int kmsg_target_del(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid);
int kmsg_lun_new(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, const struct lun_conf *lun);
int kmsg_lun_del(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint32_t lun);
int kmsg_session_new(void *buf, size_t len, const struct kmsg_to *to,
		     uint32_t tid, uint64_t sid, const char *initiator,
		     uint32_t exp_cmdsn, uint16_t tpgt, const uint32_t *keys);
int kmsg_session_del(void *buf, size_t len, const struct kmsg_to *to,
		     uint32_t tid, uint64_t sid);
int kmsg_conn_new(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint64_t sid, uint16_t cid, int fd,
		  uint32_t statsn, const uint32_t *keys);
int kmsg_conn_del(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint64_t sid, uint16_t cid);
int kmsg_pr_get(void *buf, size_t len, const struct kmsg_to *to,
		uint32_t tid, uint32_t lun);
/* clear: enum iet_pr_clear */
int kmsg_pr_clear(void *buf, size_t len, const struct kmsg_to *to,
		  uint32_t tid, uint32_t lun, uint32_t clear);
/* blocks: the new size, 0 for the backing's; force: a shrink past data */
int kmsg_lun_set(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint32_t lun, uint64_t blocks, bool force);
/* state: enum iet_alua_state, IET_ALUA_UNSPEC to leave it */
/* remote < 0: the group's kind stays (kernel.h's TPG_KIND_KEEP) */
int kmsg_tpg_set(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint16_t tag, uint32_t state, int remote);
int kmsg_tpg_del(void *buf, size_t len, const struct kmsg_to *to,
		 uint32_t tid, uint16_t tag);
/*
 * Ask initiators to log out within wait seconds: a target's, a portal
 * group's (tpgt not 0), a session's (sid not 0) or, with a session, its
 * connection cid (not negative).
 */
int kmsg_logout_req(void *buf, size_t len, const struct kmsg_to *to,
		    uint32_t tid, uint16_t tpgt, uint64_t sid, int cid,
		    uint32_t wait);
/* A dump of cmd (IET_CMD_*_GET); tid 0 leaves the TID out. */
int kmsg_dump(void *buf, size_t len, const struct kmsg_to *to, uint8_t cmd,
	      uint32_t tid);

#endif
