// SPDX-License-Identifier: GPL-2.0
/*
 * ietadm's options: IET's, plus --json, --stats, --prometheus, --dry-run,
 * --file, names as tids.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "adm_args.h"
#include "model.h"
#include "params.h"

enum {
	OPT_SOCKET = 256, OPT_VERSION, OPT_JSON, OPT_DRY_RUN, OPT_FILE,
	OPT_TARGET, OPT_PASSWORD_FILE, OPT_STATS, OPT_PROMETHEUS,
};

static const struct option long_opts[] = {
	{ "op", required_argument, NULL, 'o' },
	{ "tid", required_argument, NULL, 't' },
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "sid", required_argument, NULL, 's' },
	{ "cid", required_argument, NULL, 'c' },
	{ "lun", required_argument, NULL, 'l' },
	{ "user", no_argument, NULL, 'u' },
	{ "params", required_argument, NULL, 'p' },
	{ "redirect", required_argument, NULL, 'r' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "password-file", required_argument, NULL, OPT_PASSWORD_FILE },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const ops[] = {
	"new", "delete", "update", "show", "reload", "save",
};

void adm_usage(FILE *f)
{
	fprintf(f,
"Usage: ietadm --op new|delete|update|show [--tid=N|NAME] [--sid=N] [--cid=N]\n"
"              [--lun=N] [--user] [--params=KEY=VALUE,...] [--redirect=ADDR]\n"
"       ietadm --op reload [--dry-run]    ietadm --op save [--file=FILE]\n"
"Manage the running iSCSI target through ietd (see ietadm(8)).\n"
"\n"
"  --op new --tid=N --params Name=IQN          create a target (N=0: next free)\n"
"  --op delete --tid=N                         delete a target without sessions\n"
"  --op update --tid=N --params K=V,...        change parameters (new sessions)\n"
"  --op update --tid=N --redirect=ADDR[:PORT]  redirect new logins (\"\": stop)\n"
"  --op update --tid=N --lun=L --params Reservations=release|clear\n"
"                                              end a LUN's reservations (clear:\n"
"                                              its registrations too)\n"
"  --op update --tid=N --lun=L --params Size=BYTES|Blocks=N|Resize=backing\n"
"                                              resize a live LUN (Force=Yes:\n"
"                                              shrink past data)\n"
"  --op new --tid=N --lun=L --params Path=P,Type=fileio|nullio,...\n"
"  --op delete --tid=N --lun=L                 remove a LUN\n"
"  --op delete --tid=N --sid=S --cid=C         close a connection\n"
"  --op new|delete [--tid=N] --user --params IncomingUser=U,Password=P\n"
"                                              (or OutgoingUser=; no tid: discovery)\n"
"  --op new [--tid=N] --user --params IncomingUser=U --password-file=FILE\n"
"                                              the secret from FILE's first line\n"
"                                              (\"-\": standard input), not argv\n"
"  --op show [--tid=N [--sid=S|--lun=L]] [--user] [--json]\n"
"  --op show [--tid=N [--sid=S|--lun=L]] --stats [--json]\n"
"                                              commands, errors by sense key,\n"
"                                              latency histograms\n"
"  --op show [--tid=N] --prometheus            the same, Prometheus' format\n"
"  --op delete                                 ask every initiator to log out,\n"
"                                              close every session, delete\n"
"                                              every target\n"
"  --op delete ... --params LogoutTimeout=S    of everything, a target, a session\n"
"                                              or a connection: ask initiators\n"
"                                              to log out within S s (0..60;\n"
"                                              default 10 for everything, else 0)\n"
"  --op reload [--dry-run]                     apply ietd.conf's changes\n"
"  --op save [--file=FILE]                     the running configuration\n"
"\n"
"  --tid takes a target's name as well (or use --target=NAME).\n"
"  --socket=PATH   ietd's socket (default %s)\n"
"  --version       print the version and exit\n"
"  --help          print this help and exit\n"
"\n"
"Options take their value as --opt=VALUE or --opt VALUE.\n",
		CTL_SOCKET_PATH);
}

static int number(const char *opt, const char *s, uint64_t max, uint64_t *v,
		  char *err, size_t errlen)
{
	if (parse_number(s, v) || *v > max) {
		snprintf(err, errlen, "--%s: \"%s\" is not a number 0..%" PRIu64,
			 opt, s, max);
		return -1;
	}
	return 0;
}

static int set_target(struct ctl_req *r, const char *opt, const char *name,
		      char *err, size_t errlen)
{
	if (strlen(name) >= sizeof(r->target) || strchr(name, '\n') ||
	    (strncasecmp(name, "iqn.", 4) && strncasecmp(name, "eui.", 4) &&
	     strncasecmp(name, "naa.", 4))) {
		snprintf(err, errlen,
			 "--%s: \"%s\" is neither a number nor a target name (iqn., eui., naa.)",
			 opt, name);
		return -1;
	}
	strcpy(r->target, name);
	r->fields |= CTL_F_TARGET;
	return 0;
}

static int text_opt(const char *opt, const char *v, char *dst, size_t len,
		    char *err, size_t errlen)
{
	if (strlen(v) >= len || strchr(v, '\n')) {
		snprintf(err, errlen, "--%s: too long or more than one line", opt);
		return -1;
	}
	strcpy(dst, v);
	return 0;
}

/*
 * Which options each operation takes, checked here so that every wrong
 * command line exits 2 before ietd is asked anything (ietd checks again:
 * the socket has other clients). What the options mean is ietd's business.
 */
static const struct {
	const char *op;
	unsigned int takes;
} shapes[] = {
	{ "new", CTL_F_TID | CTL_F_TARGET | CTL_F_LUN | CTL_F_USER |
		 CTL_F_PARAMS },
	{ "delete", CTL_F_TID | CTL_F_TARGET | CTL_F_SID | CTL_F_CID |
		    CTL_F_LUN | CTL_F_USER | CTL_F_PARAMS },
	{ "update", CTL_F_TID | CTL_F_TARGET | CTL_F_LUN | CTL_F_PARAMS |
		    CTL_F_REDIRECT },
	{ "show", CTL_F_TID | CTL_F_TARGET | CTL_F_SID | CTL_F_CID |
		  CTL_F_LUN | CTL_F_USER | CTL_F_JSON | CTL_F_STATS |
		  CTL_F_PROMETHEUS },
	{ "reload", CTL_F_DRYRUN },
	{ "save", 0 },
};

static const char *const flag_names[] = {
	"--tid", "--sid", "--cid", "--lun", "--user", "--params",
	"--redirect", "--target", "--json", "--dry-run", "--stats",
	"--prometheus",
};

_Static_assert(CTL_F_DRYRUN == 1u << 9 && CTL_F_TARGET == 1u << 7 &&
	       CTL_F_PROMETHEUS == 1u << 11,
	       "flag_names follows the CTL_F_ bits");

/*
 * Whether every item of --params is LogoutTimeout= (ietd checks the
 * value): what --op delete takes without --user.
 */
static bool only_logout_timeout(const char *list)
{
	static const char key[] = "LogoutTimeout=";
	bool found = false;

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len && strncasecmp(list, key, sizeof(key) - 1))
			return false;
		found |= len > 0;
		list += len;
		if (*list)
			list++;
	}
	return found;
}

static int check_shape(const struct ctl_req *r, char *err, size_t errlen)
{
	unsigned int f = r->fields, target = CTL_F_TID | CTL_F_TARGET;
	size_t i, b;

	for (i = 0; strcmp(shapes[i].op, r->op); i++)
		;
	for (b = 0; b < sizeof(flag_names) / sizeof(flag_names[0]); b++)
		if (f & ~shapes[i].takes & (1u << b)) {
			snprintf(err, errlen, "--op %s does not take %s",
				 r->op, flag_names[b]);
			return -1;
		}
	if ((f & CTL_F_CID) && !(f & CTL_F_SID)) {
		snprintf(err, errlen, "--cid needs --sid");
		return -1;
	}
	if ((f & (CTL_F_SID | CTL_F_LUN)) && !(f & target)) {
		snprintf(err, errlen, "--sid and --lun need --tid");
		return -1;
	}
	if (f & CTL_F_USER && f & (CTL_F_SID | CTL_F_LUN)) {
		snprintf(err, errlen, "--user goes with --tid or alone, not with --sid or --lun");
		return -1;
	}
	if (f & CTL_F_USER && f & (CTL_F_STATS | CTL_F_PROMETHEUS)) {
		snprintf(err, errlen, "accounts have no statistics: --user goes without --stats and --prometheus");
		return -1;
	}
	if (f & CTL_F_PROMETHEUS &&
	    f & (CTL_F_SID | CTL_F_CID | CTL_F_LUN | CTL_F_JSON | CTL_F_STATS)) {
		snprintf(err, errlen, "--prometheus is a format of its own: it takes --tid or --target alone");
		return -1;
	}
	if (!strcmp(r->op, "delete") && (f & CTL_F_PARAMS) &&
	    !(f & CTL_F_USER) && !only_logout_timeout(r->params)) {
		/* Without --user this would be the full teardown. */
		snprintf(err, errlen,
			 "--op delete takes --params only with --user (an account to delete), or LogoutTimeout=SECONDS");
		return -1;
	}
	if (!strcmp(r->op, "update") && !(f & (CTL_F_PARAMS | CTL_F_REDIRECT))) {
		snprintf(err, errlen,
			 "--op update needs --params K=V,... or --redirect=ADDR[:PORT]");
		return -1;
	}
	if (!strcmp(r->op, "update") && !(f & target)) {
		snprintf(err, errlen, "--op update needs --tid");
		return -1;
	}
	return 0;
}

enum adm_parse_result adm_parse(int argc, char **argv, struct adm_args *a,
				char *err, size_t errlen)
{
	struct ctl_req *r = &a->req;
	uint64_t v;
	size_t i;
	int c;

	memset(a, 0, sizeof(*a));
	a->socket = CTL_SOCKET_PATH;
	opterr = 0;
	optind = 0;		/* GNU: start afresh */
	while ((c = getopt_long(argc, argv, ":o:t:s:c:l:up:r:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
				if (!strcmp(optarg, ops[i]))
					break;
			if (i == sizeof(ops) / sizeof(ops[0])) {
				snprintf(err, errlen,
					 "--op: unknown operation \"%s\" (new, delete, update, show, reload, save)",
					 optarg);
				return ADM_ERROR;
			}
			strcpy(r->op, optarg);
			break;
		case 't':
			/* A number is a tid; anything else names a target. */
			if (!parse_number(optarg, &v)) {
				if (number("tid", optarg, UINT32_MAX, &v, err,
					   errlen))
					return ADM_ERROR;
				r->tid = v;
				r->fields |= CTL_F_TID;
			} else if (set_target(r, "tid", optarg, err, errlen)) {
				return ADM_ERROR;
			}
			break;
		case OPT_TARGET:
			if (set_target(r, "target", optarg, err, errlen))
				return ADM_ERROR;
			break;
		case 's':
			if (number("sid", optarg, UINT64_MAX, &v, err, errlen))
				return ADM_ERROR;
			r->sid = v;
			r->fields |= CTL_F_SID;
			break;
		case 'c':
			if (number("cid", optarg, 65535, &v, err, errlen))
				return ADM_ERROR;
			r->cid = v;
			r->fields |= CTL_F_CID;
			break;
		case 'l':
			if (number("lun", optarg, 16383, &v, err, errlen))
				return ADM_ERROR;
			r->lun = v;
			r->fields |= CTL_F_LUN;
			break;
		case 'u':
			r->fields |= CTL_F_USER;
			break;
		case 'p':
			if (text_opt("params", optarg, r->params,
				     sizeof(r->params), err, errlen))
				return ADM_ERROR;
			r->fields |= CTL_F_PARAMS;
			break;
		case 'r':
			if (text_opt("redirect", optarg, r->redirect,
				     sizeof(r->redirect), err, errlen))
				return ADM_ERROR;
			r->fields |= CTL_F_REDIRECT;
			break;
		case OPT_JSON:
			r->fields |= CTL_F_JSON;
			break;
		case OPT_DRY_RUN:
			r->fields |= CTL_F_DRYRUN;
			break;
		case OPT_STATS:
			r->fields |= CTL_F_STATS;
			break;
		case OPT_PROMETHEUS:
			r->fields |= CTL_F_PROMETHEUS;
			break;
		case OPT_FILE:
			a->file = optarg;
			break;
		case OPT_PASSWORD_FILE:
			a->password_file = optarg;
			break;
		case OPT_SOCKET:
			a->socket = optarg;
			break;
		case OPT_VERSION:
			return ADM_VERSION;
		case 'h':
			return ADM_HELP;
		case ':':
			snprintf(err, errlen, "%s needs a value",
				 argv[optind - 1]);
			return ADM_ERROR;
		default:
			snprintf(err, errlen, "unknown option %s (ietadm --help)",
				 argv[optind - 1]);
			return ADM_ERROR;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument \"%s\"", argv[optind]);
		return ADM_ERROR;
	}
	if (!r->op[0]) {
		snprintf(err, errlen,
			 "--op is required (new, delete, update, show, reload or save)");
		return ADM_ERROR;
	}
	if (a->file && strcmp(r->op, "save")) {
		snprintf(err, errlen, "--file goes with --op save");
		return ADM_ERROR;
	}
	if (a->password_file && (strcmp(r->op, "new") ||
				 !(r->fields & CTL_F_USER))) {
		snprintf(err, errlen, "--password-file goes with --op new --user");
		return ADM_ERROR;
	}
	if ((r->fields & CTL_F_DRYRUN) && strcmp(r->op, "reload")) {
		snprintf(err, errlen, "--dry-run goes with --op reload");
		return ADM_ERROR;
	}
	if ((r->fields & CTL_F_TID) && (r->fields & CTL_F_TARGET)) {
		snprintf(err, errlen, "a target by --tid or by name, not both");
		return ADM_ERROR;
	}
	if (check_shape(r, err, errlen))
		return ADM_ERROR;
	return ADM_RUN;
}

/* Whether the comma-separated list has an item with that key. */
static bool has_key(const char *list, const char *key)
{
	size_t klen = strlen(key);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len > klen && list[klen] == '=' &&
		    !strncasecmp(list, key, klen))
			return true;
		list += len;
		if (*list)
			list++;
	}
	return false;
}

int adm_add_secret(struct adm_args *a, const char *secret, char *err,
		   size_t errlen)
{
	struct ctl_req *r = &a->req;
	size_t len = strlen(r->params), slen = strlen(secret);

	if (has_key(r->params, "Password")) {
		snprintf(err, errlen,
			 "--password-file: --params has a Password= already");
		return -1;
	}
	if (!slen) {
		snprintf(err, errlen, "--password-file: no secret in its first line");
		return -1;
	}
	if (slen > CHAP_SECRET_MAX) {
		snprintf(err, errlen, "--password-file: secret longer than %d characters",
			 CHAP_SECRET_MAX);
		return -1;
	}
	/* --params separates with commas: one would end the secret there. */
	if (strpbrk(secret, ",\n\r")) {
		snprintf(err, errlen,
			 "--password-file: the secret has a comma or a line break, which ietadm cannot pass to ietd");
		return -1;
	}
	if (len + slen + sizeof(",Password=") > sizeof(r->params)) {
		snprintf(err, errlen, "--params too long with the secret");
		return -1;
	}
	snprintf(r->params + len, sizeof(r->params) - len, "%sPassword=%s",
		 len ? "," : "", secret);
	r->fields |= CTL_F_PARAMS;
	return 0;
}
