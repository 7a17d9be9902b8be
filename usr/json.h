/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON writer for ietadm's --json output: objects, arrays,
 * strings (escaped), numbers and booleans, commas placed for the caller.
 */
#ifndef IET_USR_JSON_H
#define IET_USR_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "text.h"

#define JSON_DEPTH	16

struct jw {
	struct textbuf *out;
	unsigned int depth;
	bool more[JSON_DEPTH];		/* a value already at this level */
};

void jw_init(struct jw *j, struct textbuf *out);
/* key is NULL at the top and inside arrays. */
void jw_obj(struct jw *j, const char *key);
void jw_arr(struct jw *j, const char *key);
/* Ends the innermost object or array; a newline after the outermost. */
void jw_end(struct jw *j, char close);
void jw_str(struct jw *j, const char *key, const char *v);
void jw_u64(struct jw *j, const char *key, uint64_t v);
void jw_bool(struct jw *j, const char *key, bool v);

#endif
