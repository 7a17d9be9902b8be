/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ietadm's command line, parsed without side effects into a request for
 * ietd (ctl_proto.h) and the client's own options, so that tests can check
 * every form IET's scripts use.
 */
#ifndef IET_USR_ADM_ARGS_H
#define IET_USR_ADM_ARGS_H

#include <stddef.h>
#include <stdio.h>

#include "ctl_proto.h"

struct adm_args {
	struct ctl_req req;
	const char *socket;
	const char *file;		/* --op save --file=FILE */
	const char *password_file;	/* --password-file=FILE, "-": stdin */
};

enum adm_parse_result {
	ADM_RUN,			/* send req */
	ADM_HELP,			/* print the usage, exit 0 */
	ADM_VERSION,			/* print the version, exit 0 */
	ADM_ERROR = -1,			/* err says why; exit 2 */
};

/* Resets getopt itself, so it may be called more than once. */
enum adm_parse_result adm_parse(int argc, char **argv, struct adm_args *a,
				char *err, size_t errlen);
void adm_usage(FILE *f);

/*
 * The secret read from --password-file (its first line, the newline
 * taken off) into the request as its Password; err says why it cannot.
 */
int adm_add_secret(struct adm_args *a, const char *secret, char *err,
		   size_t errlen);

#endif
