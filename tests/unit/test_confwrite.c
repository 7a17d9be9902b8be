// SPDX-License-Identifier: GPL-2.0
/* Writing the model back (ietadm --op save, the state file), round trips. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "confwrite.h"
#include "helpers.h"
#include "log.h"
#include "runtime.h"
#include "state.h"
#include "test.h"

static char err[1024];

#define RICH								\
	"AllowShortSecrets Yes\n"					\
	"CHAPAlgorithms 7,8\n"						\
	"MetricsFile /var/lib/prometheus/node-exporter/iet.prom\n"	\
	"MetricsInterval 5\n"						\
	"IncomingUser disc shortpw\n"					\
	"OutgoingUser discout secretsecret-out\n"			\
	"Target " TARGET1 "\n"						\
	"	Alias Disk One\n"					\
	"	MaxSessions 4\n"					\
	"	Redirect [2001:db8::7]:3261\n"				\
	"	CHAPAlgorithms SHA3-256\n"				\
	"	IncomingUser joe secretsecret-1\n"			\
	"	IncomingUser ann secretsecret-2\n"			\
	"	OutgoingUser tgt secretsecret-3\n"			\
	"	Lun 0 Path=/dev/vg0/lv0,Type=fileio,IOMode=wb,ScsiId=disk0,ScsiSN=SN0\n" \
	"	Lun 7 Type=nullio,Blocks=4096,BlockSize=4096\n"		\
	"	Lun 3 Path=/srv/a.img,IOMode=ro\n"			\
	"	Lun 5 Path=/srv/e.img,PhysicalBlockSize=4096,"		\
	"RotationRate=1,ThinProvisioning=No,BlockSize=1024\n"		\
	"	Lun 6 Path=/srv/f.img,BlockSize=4096,"			\
	"PhysicalBlockSize=4096,RotationRate=0,ThinProvisioning=Yes\n"	\
	"	Lun 8 Path=/srv/g.img,ModeSelect=Yes\n"			\
	"	Lun 9 Path=/srv/h.img,IOMode=wb,ModeSelect=No\n"		\
	"	Lun 10 Path=/srv/i.img,IOMode=wb,ModeSelect=Yes\n"		\
	"	HeaderDigest None,CRC32C\n"				\
	"	DataDigest CRC32C\n"					\
	"	InitialR2T No\n"					\
	"	MaxRecvDataSegmentLength 65536\n"			\
	"	MaxXmitDataSegmentLength 131072\n"			\
	"	MaxBurstLength 1048576\n"				\
	"	FirstBurstLength 131072\n"				\
	"	MaxConnections 4\n"					\
	"	DefaultTime2Wait 5\n"					\
	"	Wthreads 16\n"						\
	"	QueuedCommands 256\n"					\
	"	NOPInterval 5\n"					\
	"	NOPTimeout 30\n"					\
	"	AllowTargetReset Yes\n"				\
	"Target " TARGET2 "\n"						\
	"	Lun 0 Type=nullio\n"

static void same_auth(const struct auth *a, const struct auth *b)
{
	size_t i;

	CHECK_EQ(a->nr_incoming, b->nr_incoming);
	for (i = 0; i < a->nr_incoming && i < b->nr_incoming; i++) {
		CHECK_STR(a->incoming[i].user, b->incoming[i].user);
		CHECK_STR(a->incoming[i].secret, b->incoming[i].secret);
	}
	CHECK_EQ(a->has_outgoing, b->has_outgoing);
	CHECK_STR(a->outgoing.user, b->outgoing.user);
	CHECK_STR(a->outgoing.secret, b->outgoing.secret);
	CHECK_EQ(a->chap_algs, b->chap_algs);
}

/* Everything a configuration says, LUN identities derived on both sides. */
static void same_config(struct config *a, struct config *b)
{
	size_t i, l;

	CHECK_EQ(a->allow_short_secrets, b->allow_short_secrets);
	CHECK_STR(a->isns_server, b->isns_server);
	CHECK_EQ(a->isns_access_control, b->isns_access_control);
	CHECK_STR(a->metrics_file, b->metrics_file);
	CHECK_EQ(a->metrics_interval, b->metrics_interval);
	same_auth(&a->auth, &b->auth);
	REQUIRE_EQ(a->nr_targets, b->nr_targets);
	for (i = 0; i < a->nr_targets; i++) {
		struct target_conf *x = &a->targets[i], *y = &b->targets[i];

		CHECK_STR(x->name, y->name);
		CHECK_EQ(x->tid, y->tid);
		CHECK_STR(x->alias, y->alias);
		CHECK_EQ(x->max_sessions, y->max_sessions);
		CHECK_STR(x->redirect, y->redirect);
		CHECK(!memcmp(x->keys, y->keys, sizeof(x->keys)));
		CHECK(!memcmp(x->tparams, y->tparams, sizeof(x->tparams)));
		same_auth(&x->auth, &y->auth);
		REQUIRE_EQ(x->nr_luns, y->nr_luns);
		for (l = 0; l < x->nr_luns; l++) {
			struct lun_conf *p = target_lun(x, x->luns[l].lun);
			struct lun_conf *q = target_lun(y, x->luns[l].lun);

			REQUIRE(p && q);
			lun_conf_derive_ids(p, x->name);
			lun_conf_derive_ids(q, y->name);
			CHECK_EQ(p->type, q->type);
			CHECK_EQ(p->iomode, q->iomode);
			CHECK_STR(p->path, q->path);
			CHECK_STR(p->scsi_id, q->scsi_id);
			CHECK_STR(p->scsi_sn, q->scsi_sn);
			CHECK_EQ(p->block_size, q->block_size);
			CHECK_EQ(lun_phys_block_size(p),
				 lun_phys_block_size(q));
			CHECK_EQ(p->rotation_rate, q->rotation_rate);
			CHECK_EQ(p->thin_off, q->thin_off);
			CHECK_EQ(p->mode_select, q->mode_select);
			CHECK_EQ(p->blocks, q->blocks);
		}
	}
}

static char *write_text(const struct config *cfg, unsigned int flags)
{
	struct textbuf tb;
	char *s;

	textbuf_init(&tb, 1 << 20);
	if (config_write(cfg, flags, "# header\n", &tb) ||
	    textbuf_append(&tb, "", 1))
		abort();
	s = strdup(tb.buf);
	textbuf_free(&tb);
	return s;
}

TEST(confwrite_round_trip_gives_the_same_configuration)
{
	struct config a, b;
	char *text, *again;

	config_of(&a, RICH);
	text = write_text(&a, 0);
	CHECK_CONTAINS(text, "MetricsFile /var/lib/prometheus/node-exporter/iet.prom\nMetricsInterval 5\n");
	REQUIRE(config_parse(text, strlen(text), "saved", &b, err,
			     sizeof(err)) == 0);
	/* Writing what was read back gives the same text. */
	again = write_text(&b, 0);
	CHECK_STR(again, text);
	same_config(&a, &b);
	free(text);
	free(again);
	config_free(&a);
	config_free(&b);
}

TEST(confwrite_writes_secrets_and_luns_with_their_identity)
{
	struct config a;
	char *text;

	config_of(&a, RICH);
	text = write_text(&a, 0);
	CHECK_CONTAINS(text, "\tIncomingUser joe secretsecret-1\n");
	CHECK_CONTAINS(text, "OutgoingUser discout secretsecret-out\n");
	CHECK_CONTAINS(text, "\tRedirect [2001:db8::7]:3261\n");
	CHECK_CONTAINS(text, "\tCHAPAlgorithms 8\n");
	CHECK_CONTAINS(text, "\tLun 0 Path=/dev/vg0/lv0,Type=fileio,IOMode=wb,"
		       "ScsiId=disk0,ScsiSN=SN0\n");
	CHECK_CONTAINS(text, "\tLun 7 Type=nullio,IOMode=wt,BlockSize=4096,"
		       "Blocks=4096\n");
	CHECK_CONTAINS(text, "\tLun 5 Path=/srv/e.img,Type=fileio,IOMode=wt,"
		       "BlockSize=1024,PhysicalBlockSize=4096,RotationRate=1,"
		       "ThinProvisioning=No\n");
	/* What the kernel does anyway is left out, as for BlockSize=512. */
	CHECK_CONTAINS(text, "\tLun 6 Path=/srv/f.img,Type=fileio,IOMode=wt,"
		       "BlockSize=4096\n");
	CHECK_CONTAINS(text, "\tLun 8 Path=/srv/g.img,Type=fileio,IOMode=wt,"
		       "ModeSelect=Yes\n");
	CHECK_CONTAINS(text, "\tLun 9 Path=/srv/h.img,Type=fileio,IOMode=wb,"
		       "ModeSelect=No\n");
	CHECK_CONTAINS(text, "\tLun 10 Path=/srv/i.img,Type=fileio,IOMode=wb\n");
	CHECK_CONTAINS(text, "\tHeaderDigest None,CRC32C\n");
	CHECK_CONTAINS(text, "\tWthreads 16\n");
	CHECK(!strstr(text, "Origin"));
	free(text);
	config_free(&a);
}

TEST(confwrite_leaves_defaults_out)
{
	struct config a;
	char *text;

	config_of(&a, "Target " TARGET1 "\n");
	text = write_text(&a, 0);
	CHECK_STR(text, "# header\n\nTarget " TARGET1 "\n");
	free(text);
	config_free(&a);
}

TEST(confwrite_orders_targets_by_tid)
{
	struct config a;
	char *text;

	config_of(&a, "Target " TARGET1 "\nTarget " TARGET2 "\n");
	a.targets[0].tid = 7;
	text = write_text(&a, 0);
	CHECK(strstr(text, TARGET2) < strstr(text, TARGET1));
	free(text);
	config_free(&a);
}

TEST(confwrite_state_mode_records_each_targets_origin)
{
	struct config a, b;
	char *text;

	config_of(&a, RICH);
	a.targets[1].origin = ORIGIN_ADMIN;
	text = write_text(&a, CONFIG_STATE);
	CHECK_CONTAINS(text, "Target " TARGET1 "\n\tOrigin file\n");
	CHECK_CONTAINS(text, "Target " TARGET2 "\n\tOrigin ietadm\n");
	CHECK(config_parse(text, strlen(text), "x", &b, err, sizeof(err)) != 0);
	REQUIRE(config_parse_flags(text, strlen(text), "x", CONFIG_STATE, &b,
				   err, sizeof(err)) == 0);
	CHECK_EQ(b.targets[1].origin, ORIGIN_ADMIN);
	free(text);
	config_free(&a);
	config_free(&b);
}

TEST(state_file_round_trips_and_stays_root_only)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct config a, b;
	struct state s;
	struct stat st;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	REQUIRE(stat(path, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(state_load(&s, &b, err, sizeof(err)), -ENOENT);
	config_of(&a, RICH);
	a.targets[0].origin = ORIGIN_ADMIN;
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	same_config(&a, &b);
	CHECK_EQ(b.targets[0].origin, ORIGIN_ADMIN);
	config_free(&b);
	/* Smaller state after a larger one: nothing stale is left. */
	config_free(&a);
	config_of(&a, "Target " TARGET2 "\n");
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	CHECK_EQ(b.nr_targets, 1);
	config_free(&b);
	config_free(&a);
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

TEST(state_file_cut_short_is_refused)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct config a, b;
	struct stat st;
	struct state s;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	config_of(&a, RICH);
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	REQUIRE(stat(path, &st) == 0);
	REQUIRE(truncate(path, st.st_size - 5) == 0);
	CHECK_EQ(state_load(&s, &b, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "incomplete");
	config_free(&a);
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

/* The names in dir, sorted by readdir order, as "a b ". */
static const char *names_in(const char *dir)
{
	static char names[512];
	struct dirent *e;
	size_t n = 0;
	DIR *d = opendir(dir);

	names[0] = '\0';
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n += snprintf(names + n, sizeof(names) - n, "%s ",
				      e->d_name);
	if (d)
		closedir(d);
	return names;
}

TEST(state_save_cut_short_keeps_the_previous_state_whole)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct rlimit lim, old;
	struct config a, b;
	struct stat st;
	struct state s;
	int ret;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	config_of(&a, "Target " TARGET2 "\n IncomingUser joe secretsecret-1\n");
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	config_free(&a);
	REQUIRE(stat(path, &st) == 0);
	/* The disk fills up (or ietd dies) half way through the next save. */
	config_of(&a, RICH);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = st.st_size + 64;
	setrlimit(RLIMIT_FSIZE, &lim);
	ret = state_save(&s, &a, err, sizeof(err));
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(ret < 0);
	CHECK_CONTAINS(err, "write");
	/* The state before is all there, CHAP account included. */
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	REQUIRE_EQ(b.nr_targets, 1);
	CHECK_STR(b.targets[0].name, TARGET2);
	CHECK_EQ(b.targets[0].auth.nr_incoming, 1);
	CHECK_STR(names_in(dir), STATE_NAME " ");
	config_free(&b);
	config_free(&a);
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

TEST(state_save_replaces_the_file_by_rename_and_leaves_nothing_else)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct stat before, after;
	struct config a;
	struct state s;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	config_of(&a, RICH);
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	REQUIRE(stat(path, &before) == 0);
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	REQUIRE(stat(path, &after) == 0);
	/* A new file each time: the old one was never opened for writing. */
	CHECK(before.st_ino != after.st_ino);
	CHECK_EQ(after.st_mode & 0777, 0600);
	CHECK_STR(names_in(dir), STATE_NAME " ");
	config_free(&a);
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

TEST(state_temporary_file_left_by_a_crash_is_ignored_then_replaced)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128], tmp[160];
	struct config a, b;
	struct state s;
	int fd;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	config_of(&a, RICH);
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	/* Killed after writing half a temporary file. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "Target half", 11) == 11);
	close(fd);
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	same_config(&a, &b);
	config_free(&b);
	REQUIRE(state_save(&s, &a, err, sizeof(err)) == 0);
	CHECK_STR(names_in(dir), STATE_NAME " ");
	config_free(&a);
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

/*
 * In a directory the unprivileged ietd user owns, root opens the state
 * file first: what that user puts there must neither block start-up nor
 * lead root to another file.
 */
TEST(state_file_that_is_a_fifo_is_refused_without_blocking)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct config b;
	struct state s;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(mkfifo(path, 0600) == 0);
	/* Before, open() waited for a writer: the test's alarm ended it. */
	CHECK(state_open(&s, path, err, sizeof(err)) < 0);
	CHECK_CONTAINS(err, "not a regular file");
	CHECK_EQ(s.dirfd, -1);
	/* Planted after start-up, state_load() refuses it the same way. */
	unlink(path);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	unlink(path);
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK_EQ(state_load(&s, &b, err, sizeof(err)), -EINVAL);
	CHECK_CONTAINS(err, "not a regular file");
	state_close(&s);
	unlink(path);
	rmdir(dir);
}

TEST(state_file_with_a_second_name_is_refused_and_left_as_it_was)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128], other[128];
	struct config b;
	struct state s;
	struct stat st;
	int fd;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	/* Another file (root's, say), linked where the state file goes. */
	snprintf(other, sizeof(other), "%s/other", dir);
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0644);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "not ietd's\n", 11) == 11);
	REQUIRE(fchmod(fd, 0644) == 0);
	close(fd);
	REQUIRE(link(other, path) == 0);
	CHECK(state_open(&s, path, err, sizeof(err)) < 0);
	CHECK_CONTAINS(err, "hard links");
	/* Before, it was chmod'ed to 0600. */
	REQUIRE(stat(other, &st) == 0);
	CHECK_EQ(st.st_mode & 0777, 0644);
	CHECK_EQ(st.st_size, 11);
	/* Linked after start-up, it is not read either. */
	unlink(path);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	unlink(path);
	REQUIRE(link(other, path) == 0);
	CHECK_EQ(state_load(&s, &b, err, sizeof(err)), -EMLINK);
	CHECK_CONTAINS(err, "hard links");
	state_close(&s);
	unlink(path);
	unlink(other);
	rmdir(dir);
}

static char logged[2048];

static void hook(int prio, const char *msg)
{
	size_t n = strlen(logged);

	(void)prio;
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

TEST(state_in_place_but_directory_not_synced_is_not_called_unwritten)
{
	char dir[] = "/tmp/iet-state-XXXXXX", path[128];
	struct runtime rt;
	struct config b;

	REQUIRE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	memset(&rt, 0, sizeof(rt));
	REQUIRE(state_open(&rt.state, path, err, sizeof(err)) == 0);
	/* A directory that renameat() takes but fsync() refuses (EBADF). */
	close(rt.state.dirfd);
	rt.state.dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(rt.state.dirfd >= 0);
	config_of(&rt.cfg, RICH);
	CHECK_EQ(state_save(&rt.state, &rt.cfg, err, sizeof(err)),
		 STATE_UNSYNCED);
	CHECK_CONTAINS(err, "syncing its directory");
	log_set_hook(hook);
	runtime_persist(&rt);
	log_set_hook(NULL);
	CHECK_CONTAINS(logged,
		       "state file written, but the directory sync failed");
	CHECK(!strstr(logged, "not written"));
	/* It is there all the same. */
	state_close(&rt.state);
	REQUIRE(state_open(&rt.state, path, err, sizeof(err)) == 0);
	REQUIRE(state_load(&rt.state, &b, err, sizeof(err)) == 0);
	same_config(&rt.cfg, &b);
	config_free(&b);
	config_free(&rt.cfg);
	state_close(&rt.state);
	unlink(path);
	rmdir(dir);
}

/* A state file at path holding conf, written as ietd writes it. */
static void state_file_of(const char *path, const char *conf)
{
	struct config a;
	struct state s;

	if (state_open(&s, path, err, sizeof(err)))
		abort();
	config_of(&a, conf);
	a.targets[0].origin = ORIGIN_ADMIN;
	if (state_save(&s, &a, err, sizeof(err)))
		abort();
	config_free(&a);
	state_close(&s);
}

/* An upgrade to an ietd -u that keeps its state in state/ of its own. */
TEST(state_of_an_older_ietd_is_read_and_removed_only_once_saved_anew)
{
	char dir[] = "/tmp/iet-state-XXXXXX", sub[64], old[128], path[128];
	struct rlimit lim, saved;
	struct config b;
	struct state s;
	int ret;

	REQUIRE(mkdtemp(dir));
	snprintf(old, sizeof(old), "%s/%s", dir, STATE_NAME);
	state_file_of(old, RICH);
	snprintf(sub, sizeof(sub), "%s/state", dir);
	REQUIRE(mkdir(sub, 0700) == 0);
	snprintf(path, sizeof(path), "%s/%s", sub, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	REQUIRE(state_migrate_from(&s, old, err, sizeof(err)) == 0);
	/* Before, the new file was empty: no state, the targets were lost. */
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	CHECK_EQ(b.targets[0].origin, ORIGIN_ADMIN);
	CHECK_EQ(b.targets[0].auth.nr_incoming, 2);
	CHECK(access(old, F_OK) == 0);
	/* A save cut short leaves the only whole copy where it was. */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &saved);
	lim = saved;
	lim.rlim_cur = 64;
	setrlimit(RLIMIT_FSIZE, &lim);
	ret = state_save(&s, &b, err, sizeof(err));
	setrlimit(RLIMIT_FSIZE, &saved);
	CHECK(ret < 0);
	CHECK(access(old, F_OK) == 0);
	/* Saved whole and synced: the old file goes. */
	REQUIRE(state_save(&s, &b, err, sizeof(err)) == 0);
	CHECK(access(old, F_OK) != 0);
	CHECK_STR(names_in(dir), "state ");
	config_free(&b);
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	CHECK_EQ(b.targets[0].auth.nr_incoming, 2);
	config_free(&b);
	/* Once the new file holds the state, an old one is not read. */
	state_file_of(old, "Target " TARGET2 "\n");
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	CHECK_STR(b.targets[0].name, TARGET1);
	config_free(&b);
	state_close(&s);
	unlink(old);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

TEST(state_of_an_older_ietd_stays_while_the_new_file_is_not_synced)
{
	char dir[] = "/tmp/iet-state-XXXXXX", sub[64], old[128], path[128];
	struct config b;
	struct state s;

	REQUIRE(mkdtemp(dir));
	snprintf(old, sizeof(old), "%s/%s", dir, STATE_NAME);
	state_file_of(old, RICH);
	snprintf(sub, sizeof(sub), "%s/state", dir);
	REQUIRE(mkdir(sub, 0700) == 0);
	snprintf(path, sizeof(path), "%s/%s", sub, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	REQUIRE(state_migrate_from(&s, old, err, sizeof(err)) == 0);
	REQUIRE(state_load(&s, &b, err, sizeof(err)) == 0);
	/* Renamed into place, but a crash could still undo it. */
	close(s.dirfd);
	s.dirfd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(s.dirfd >= 0);
	CHECK_EQ(state_save(&s, &b, err, sizeof(err)), STATE_UNSYNCED);
	CHECK(access(old, F_OK) == 0);
	config_free(&b);
	state_close(&s);
	unlink(old);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

/* In a child that runs as nobody: state_check()'s result. */
static int check_as_nobody(struct state *s)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(99);
		_exit(state_check(s, err, sizeof(err)) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(state_directory_of_its_own_lets_an_unprivileged_ietd_replace_the_file)
{
	char dir[] = "/tmp/iet-state-XXXXXX", sub[64], path[128];
	struct state s;
	struct stat st;

	if (geteuid() != 0)
		return;		/* needs root to change users */
	REQUIRE(mkdtemp(dir));
	/* The socket's directory is root's: nobody cannot replace a file there. */
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	CHECK_EQ(check_as_nobody(&s), 1);
	state_close(&s);
	unlink(path);
	/* Its own directory inside that one works. */
	snprintf(sub, sizeof(sub), "%s/state", dir);
	REQUIRE(state_prepare_dir(sub, 65534, 65534, err, sizeof(err)) == 0);
	REQUIRE(stat(sub, &st) == 0);
	CHECK_EQ(st.st_uid, 65534);
	CHECK_EQ(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/%s", sub, STATE_NAME);
	REQUIRE(state_open(&s, path, err, sizeof(err)) == 0);
	CHECK_EQ(check_as_nobody(&s), 0);
	state_close(&s);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

TEST(confwrite_keeps_portal_groups)
{
	static const char text[] =
		"PortalGroup 1 192.0.2.1 192.0.2.2:3261\n"
		"PortalGroup 9 [2001:db8::9]:3262 *:3263 [::1]\n";
	struct config a, b;
	char *out;

	REQUIRE(config_parse(text, strlen(text), "f", &a, err,
			     sizeof(err)) == 0);
	out = write_text(&a, 0);
	CHECK_CONTAINS(out, text);
	REQUIRE(config_parse(out, strlen(out), "saved", &b, err,
			     sizeof(err)) == 0);
	CHECK(config_same_groups(&a, &b));
	/* A port, an address or a tag more or less is another set. */
	b.groups[1].portals[2].port = 3260;
	CHECK(!config_same_groups(&a, &b));
	free(out);
	config_free(&a);
	config_free(&b);
}

TEST(confwrite_keeps_the_other_nodes_portal_group)
{
	static const char text[] =
		"PortalGroup 1 192.0.2.1\n"
		"RemotePortalGroup 2\n";
	struct config a, b;
	char *out;

	REQUIRE(config_parse(text, strlen(text), "f", &a, err,
			     sizeof(err)) == 0);
	out = write_text(&a, 0);
	CHECK_CONTAINS(out, text);
	REQUIRE(config_parse(out, strlen(out), "saved", &b, err,
			     sizeof(err)) == 0);
	CHECK(config_same_groups(&a, &b));
	/* The same tag of the other kind is another set. */
	b.groups[1].remote = false;
	CHECK(!config_same_groups(&a, &b));
	free(out);
	config_free(&a);
	config_free(&b);
}
