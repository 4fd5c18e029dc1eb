/*
 * tests/shim/criterion_shim.h: the subset of Criterion's API the concurrent tests use, for
 * builds where Criterion itself cannot run (ThreadSanitizer). Each Test() registers itself;
 * shim_main.c runs every test in a forked child, like Criterion, and prints Criterion-style
 * lines plus "N passed, N failed". Assertion messages must be string literals (as in the
 * tests), e.g. cr_assert_eq(a, b, "slot %u", i).
 */
#ifndef RINGFLOW_TESTS_CRITERION_SHIM_H
#define RINGFLOW_TESTS_CRITERION_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct rf_shim_test {
	const char *suite, *name;
	void (*fn)(void);
	struct rf_shim_test *next;
};

void rf_shim_register(struct rf_shim_test *t);
void rf_shim_fail(const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 4, 5)));
void rf_shim_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void rf_shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define Test(suite_, name_, ...)                                                        \
	static void rf_shim_fn_##suite_##_##name_(void);                                \
	static struct rf_shim_test rf_shim_t_##suite_##_##name_ = {                     \
		#suite_, #name_, rf_shim_fn_##suite_##_##name_, NULL};                  \
	__attribute__((constructor)) static void rf_shim_reg_##suite_##_##name_(void)   \
	{                                                                               \
		rf_shim_register(&rf_shim_t_##suite_##_##name_);                        \
	}                                                                               \
	static void rf_shim_fn_##suite_##_##name_(void)

#define RF_SHIM_CHECK(cond, expr, ...)                                                  \
	do {                                                                            \
		if (!(cond))                                                            \
			rf_shim_fail(__FILE__, __LINE__, expr, "" __VA_ARGS__);         \
	} while (0)

#define cr_assert(c, ...) RF_SHIM_CHECK((c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) RF_SHIM_CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) RF_SHIM_CHECK((a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) RF_SHIM_CHECK((a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) RF_SHIM_CHECK((a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) RF_SHIM_CHECK((a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) RF_SHIM_CHECK((a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) RF_SHIM_CHECK((a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) RF_SHIM_CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) RF_SHIM_CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) \
	RF_SHIM_CHECK(strcmp((a), (b)) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_assert_fail(...) RF_SHIM_CHECK(0, "unreachable", __VA_ARGS__)
#define cr_expect(c, ...) cr_assert(c, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) cr_assert_eq(a, b, __VA_ARGS__)
#define cr_skip_test(...) rf_shim_skip("" __VA_ARGS__)
#define cr_log_info(...) rf_shim_log("" __VA_ARGS__)
#define cr_log_warn(...) rf_shim_log("" __VA_ARGS__)

#endif
