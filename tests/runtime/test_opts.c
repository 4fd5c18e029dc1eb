/*
 * tests/runtime/test_opts.c: the apps' shared option parser (rf_opt_*, runtime.h): decimal
 * only, the whole value, ranges kept (overflow included), one line naming the option.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <ringflow/runtime.h>

Test(opts, uint_takes_decimal_in_range)
{
	char err[160];
	unsigned x = 7;
	cr_assert_eq(rf_opt_uint("--burst", "32", 1, 256, &x, err, sizeof(err)), 0);
	cr_assert_eq(x, 32);
	cr_assert_eq(rf_opt_uint("--burst", "1", 1, 256, &x, err, sizeof(err)), 0);
	cr_assert_eq(x, 1);
	cr_assert_eq(rf_opt_uint("--burst", "256", 1, 256, &x, err, sizeof(err)), 0);
	cr_assert_eq(x, 256);
	cr_assert_eq(rf_opt_uint("--buffers", "010", 1, 100, &x, err, sizeof(err)), 0);
	cr_assert_eq(x, 10, "leading zeros are decimal, not octal");
	cr_assert_eq(rf_opt_uint("--n", "4294967295", 0, UINT_MAX, &x, err, sizeof(err)), 0);
	cr_assert_eq(x, UINT_MAX);
}

Test(opts, uint_refuses_what_is_not_decimal)
{
	static const char *bad[] = {"", "x", "0x10", "-1", "+1", " 1", "1 ", "1k", "1.5", "1e3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[160] = "";
		unsigned x = 7;
		cr_assert_eq(rf_opt_uint("--burst", bad[i], 0, 256, &x, err, sizeof(err)), -EINVAL,
			     "\"%s\"", bad[i]);
		cr_assert_eq(x, 7, "untouched on error");
		cr_assert(strstr(err, "--burst") && strstr(err, "0..256"), "%s", err);
		cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	}
}

Test(opts, uint_refuses_out_of_range_and_overflow)
{
	char err[160];
	unsigned x = 7;
	cr_assert_eq(rf_opt_uint("--burst", "0", 1, 256, &x, err, sizeof(err)), -ERANGE);
	cr_assert_str_eq(err, "--burst 0: not in 1..256");
	cr_assert_eq(rf_opt_uint("--burst", "257", 1, 256, &x, err, sizeof(err)), -ERANGE);
	cr_assert_eq(rf_opt_uint("--n", "4294967296", 0, UINT_MAX, &x, err, sizeof(err)), -ERANGE,
		     "past UINT_MAX");
	cr_assert_eq(rf_opt_uint("--n", "99999999999999999999999", 0, UINT_MAX, &x, err,
				 sizeof(err)), -ERANGE, "past UINT64_MAX");
	cr_assert_eq(x, 7);
	uint64_t y = 0;
	cr_assert_eq(rf_opt_u64("--count", "18446744073709551615", 0, UINT64_MAX, &y, err,
				sizeof(err)), 0);
	cr_assert_eq(y, UINT64_MAX);
	cr_assert_eq(rf_opt_u64("--count", "18446744073709551616", 0, UINT64_MAX, &y, err,
				sizeof(err)), -ERANGE);
	cr_assert_eq(rf_opt_u64("--count", "99999999999999999999x", 0, UINT64_MAX, &y, err,
				sizeof(err)), -EINVAL, "a long bad value is not a number");
	cr_assert_eq(rf_opt_uint("--burst", NULL, 1, 256, &x, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "needs a value"), "%s", err);
}

Test(opts, error_text_is_cut_to_the_buffer)
{
	char err[8];
	unsigned x;
	cr_assert_eq(rf_opt_uint("--buffers", "abc", 1, 2, &x, err, sizeof(err)), -EINVAL);
	cr_assert_eq(strlen(err), sizeof(err) - 1);
	cr_assert_eq(rf_opt_uint("--buffers", "abc", 1, 2, &x, NULL, 0), -EINVAL, "err optional");
}

Test(opts, a_value_with_a_newline_still_gives_one_line)
{
	char err[200];
	unsigned x;
	cr_assert_eq(rf_opt_uint("--burst", "1\n2", 1, 256, &x, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--burst 1?2: not a decimal integer: give 1..256");
	cr_assert_eq(rf_opt_cores("--cores", "0\n", err, sizeof(err)), -EINVAL);
	cr_assert_null(strchr(err, '\n'), "%s", err);
	cr_assert_eq(rf_opt_metrics("--metrics", "\x1b[2J:1", err, sizeof(err)), -EINVAL);
	cr_assert_null(strchr(err, 0x1b), "%s", err);
}

Test(opts, cores)
{
	char err[200];
	cr_assert_eq(rf_opt_cores("--cores", "0", err, sizeof(err)), 0);
	cr_assert_eq(rf_opt_cores("--cores", "0-3,6", err, sizeof(err)), 0);
	cr_assert_eq(rf_opt_cores("--cores", "0x3", err, sizeof(err)), 0);
	static const char *bad[] = {"", "a", "3-1", "0,,1", "-1", "99999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(rf_opt_cores("--cores", bad[i], err, sizeof(err)), -EINVAL, "\"%s\"",
			     bad[i]);
		cr_assert(strncmp(err, "--cores ", 8) == 0, "%s", err);
		cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	}
}

Test(opts, metrics)
{
	char err[200];
	cr_assert_eq(rf_opt_metrics("--metrics", "127.0.0.1:9100", err, sizeof(err)), 0);
	cr_assert_eq(rf_opt_metrics("--metrics", "0.0.0.0:0", err, sizeof(err)), 0);
	cr_assert_eq(rf_opt_metrics("--metrics", "[::1]:9100", err, sizeof(err)), 0);
	static const char *bad[] = {"",          "9100",         ":9100",         "127.0.0.1:",
				    "127.0.0.1:65536", "127.0.0.1:0x10", "127.0.0.1:-1", "localhost:9100",
				    "[::1:9100", "1.2.3:9100"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(rf_opt_metrics("--metrics", bad[i], err, sizeof(err)), -EINVAL, "\"%s\"",
			     bad[i]);
		cr_assert(strncmp(err, "--metrics ", 10) == 0, "%s", err);
		cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	}
}
