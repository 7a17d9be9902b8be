// SPDX-License-Identifier: GPL-2.0
/*
 * tcgprof: a QEMU TCG plugin that counts the guest instructions each
 * kernel code address executes, for a profile of a window the guest
 * chooses. perf in a TCG guest has no PMU and its software clock never
 * samples kernel code; the emulator itself sees every instruction.
 *
 * Each translated block of kernel code gets a counter that an inline add
 * bumps by the block's instruction count whenever it runs (no call out of
 * the generated code); user code shares one counter. The counts are not
 * atomic across vCPUs (a few lost adds, not a skew).
 *
 * The guest drives it through a directory both see (a virtme rwdir),
 * given as ctl=DIR, with files of names never used before (9p in the
 * guest may remember a name the host removed): creating DIR/start-N marks
 * the start of window N, which the plugin answers with DIR/started-N;
 * creating DIR/stop-N writes DIR/profile-N, one line per block start that
 * ran in the window, "<hex address> <instructions>", the user code's as
 * address 0. N counts up from 1. The guest removes every file: one the
 * host removed while the guest was still creating it failed that create.
 *
 * Built as a shared object by scripts/bench --profile; loaded with
 * qemu-system-x86_64 -plugin tcgprof.so,ctl=DIR.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The few declarations of QEMU's plugin API (version 1, QEMU 7.2) this
 * uses; Debian ships the emulator built with plugins but not the header.
 */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define SLOTS (1u << 19)	/* distinct kernel block starts; ample */
#define KERNEL_BASE 0xffff800000000000ull

struct slot {
	uint64_t addr;		/* 0: free (user code lives in slot 0) */
	uint64_t insns;
};

static struct slot *slots;
static uint64_t *base;		/* insns at the window's start */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char ctl[4096];

static uint64_t *counter(uint64_t addr)
{
	uint64_t h = (addr * 0x9e3779b97f4a7c15ull) >> 45;
	unsigned int i, n;

	if (addr < KERNEL_BASE)
		return &slots[0].insns;
	for (n = 0; n < SLOTS; n++) {
		i = (h + n) & (SLOTS - 1);
		if (i == 0)
			continue;
		if (slots[i].addr == addr)
			return &slots[i].insns;
		if (!slots[i].addr) {
			slots[i].addr = addr;
			return &slots[i].insns;
		}
	}
	return &slots[0].insns;	/* full: counted as user, never lost */
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t *c;

	(void)id;

	pthread_mutex_lock(&lock);
	c = counter(qemu_plugin_tb_vaddr(tb));
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 c, qemu_plugin_tb_n_insns(tb));
}

static int path(char *buf, size_t len, const char *name, unsigned long n)
{
	return snprintf(buf, len, "%s/%s-%lu", ctl, name, n) < (int)len ? 0 : -1;
}

static void answer(const char *name, unsigned long n, int profile)
{
	char tmp[4200], out[4200];
	unsigned int i;
	FILE *f;

	if (path(tmp, sizeof(tmp), "tmp", n) || path(out, sizeof(out), name, n) ||
	    !(f = fopen(tmp, "w"))) {
		fprintf(stderr, "tcgprof: cannot write in %s: %s\n", ctl,
			strerror(errno));
		return;
	}
	for (i = 0; profile && i < SLOTS; i++) {
		uint64_t d = slots[i].insns - base[i];

		if ((i == 0 || slots[i].addr) && d)
			fprintf(f, "%llx %llu\n",
				(unsigned long long)slots[i].addr,
				(unsigned long long)d);
	}
	/* Renamed when whole: the guest waits for the name. */
	if (fclose(f) || rename(tmp, out))
		fprintf(stderr, "tcgprof: %s: %s\n", out, strerror(errno));
}

/* Polls the control directory: the guest's requests are rare. */
static void *control(void *arg)
{
	unsigned long n, started = 0, stopped = 0;
	struct dirent *e;
	unsigned int i;
	DIR *d;

	(void)arg;
	for (;;) {
		usleep(20000);
		d = opendir(ctl);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (sscanf(e->d_name, "start-%lu", &n) == 1 &&
			    n > started) {
				for (i = 0; i < SLOTS; i++)
					base[i] = slots[i].insns;
				answer("started", n, 0);
				started = n;
			} else if (sscanf(e->d_name, "stop-%lu", &n) == 1 &&
				   n > stopped) {
				answer("profile", n, 1);
				stopped = n;
			}
		}
		closedir(d);
	}
	return NULL;
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	pthread_t t;
	int i;

	(void)info;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "ctl=", 4))
			snprintf(ctl, sizeof(ctl), "%s", argv[i] + 4);
	if (!ctl[0]) {
		fprintf(stderr, "tcgprof: needs ctl=DIR\n");
		return -1;
	}
	slots = calloc(SLOTS, sizeof(*slots));
	base = calloc(SLOTS, sizeof(*base));
	if (!slots || !base || pthread_create(&t, NULL, control, NULL)) {
		fprintf(stderr, "tcgprof: out of memory\n");
		return -1;
	}
	pthread_detach(t);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
