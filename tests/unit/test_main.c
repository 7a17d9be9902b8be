// SPDX-License-Identifier: GPL-2.0
/* Test runner: every test in a child process, a summary line at the end. */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "test.h"

static struct test *tests, **tail = &tests;
static const char *current;
bool test_failed;

void test_register(struct test *t)
{
	*tail = t;
	tail = &t->next;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (!test_failed)
		fprintf(stderr, "--- %s\n", current);
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	test_failed = true;
}

static bool selected(const struct test *t, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(t->name, argv[i]) || strstr(t->file, argv[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0;
	bool verbose = getenv("V") != NULL;
	struct test *t;

	for (t = tests; t; t = t->next) {
		int status;
		pid_t pid;

		if (!selected(t, argc, argv))
			continue;
		fflush(NULL);
		pid = fork();
		if (pid == 0) {
			/* Quiet unless asked: failures print their own lines. */
			log_init("ietd", LOG_SINK_STDERR, 0);
			if (!verbose)
				log_set_sinks(0);
			alarm(20);
			current = t->name;
			t->fn();
			fflush(NULL);
			exit(test_failed ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			failed++;
			printf("FAIL %s", t->name);
			if (pid > 0 && WIFSIGNALED(status))
				printf(" (signal %d)", WTERMSIG(status));
			printf("\n");
		} else {
			passed++;
			if (verbose)
				printf("ok   %s\n", t->name);
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
