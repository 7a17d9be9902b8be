/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test harness: TEST(name) registers a test, CHECK* record a
 * failure and go on, REQUIRE* end the test. Each test runs in its own
 * process, so a crash or a leak fails that test only.
 */
#ifndef IET_TESTS_TEST_H
#define IET_TESTS_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct test {
	const char *name;
	const char *file;
	void (*fn)(void);
	struct test *next;
};

void test_register(struct test *t);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
extern bool test_failed;

#define TEST(name)							\
	static void name(void);						\
	static struct test test_##name = { #name, __FILE__, name, NULL }; \
	__attribute__((constructor)) static void register_##name(void)	\
	{								\
		test_register(&test_##name);				\
	}								\
	static void name(void)

#define CHECK(cond) do {						\
		if (!(cond))						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
	} while (0)

#define REQUIRE(cond) do {						\
		if (!(cond)) {						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
			return;						\
		}							\
	} while (0)

#define CHECK_EQ(a, b) do {						\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b)						\
			test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
				  #a, #b, _a, _b);			\
	} while (0)

#define REQUIRE_EQ(a, b) do {						\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b) {						\
			test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
				  #a, #b, _a, _b);			\
			return;						\
		}							\
	} while (0)

#define CHECK_STR(a, b) do {						\
		const char *_a = (a), *_b = (b);			\
		if (!_a || !_b || strcmp(_a, _b))			\
			test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", \
				  #a, #b, _a ? _a : "(null)",		\
				  _b ? _b : "(null)");			\
	} while (0)

#define CHECK_CONTAINS(hay, needle) do {				\
		const char *_h = (hay), *_n = (needle);			\
		if (!_h || !strstr(_h, _n))				\
			test_fail(__FILE__, __LINE__, "\"%s\" lacks \"%s\"", \
				  _h ? _h : "(null)", _n);		\
	} while (0)

#endif
