/*
 * tests/runtime/test_cpulist.c: --cores parsing (lists, ranges, hex masks, errors), --idle
 * names, and the runtime's refusal of CPUs the process cannot use.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <ringflow/runtime.h>

static void expect(const char *s, const int *want, int n)
{
	int cpus[16];
	char err[256];
	int got = rf_cpulist_parse(s, cpus, 16, err, sizeof(err));
	cr_assert_eq(got, n, "'%s': %d cpus (%s)", s, got, err);
	for (int i = 0; i < n; i++)
		cr_assert_eq(cpus[i], want[i], "'%s' [%d]", s, i);
}

Test(cpulist, lists_ranges_and_masks)
{
	expect("0", (int[]){0}, 1);
	expect("0,1", (int[]){0, 1}, 2);
	expect("1,0,1", (int[]){0, 1}, 2);
	expect("0-3,6", (int[]){0, 1, 2, 3, 6}, 5);
	expect("0x3", (int[]){0, 1}, 2);
	expect("0xA", (int[]){1, 3}, 2);
	expect("0x10", (int[]){4}, 1);
}

Test(cpulist, rejects_bad_lists_with_one_line)
{
	static const char *bad[] = {"", "a", "1,", "3-1", "0x", "0xg", "0x0", "1-", "-1", "1;2", "99999"};
	int cpus[4];
	char err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_assert_eq(rf_cpulist_parse(bad[i], cpus, 4, err, sizeof(err)), -EINVAL, "'%s'", bad[i]);
		cr_assert(strstr(err, "bad core list"), "'%s' gave '%s'", bad[i], err);
	}
	cr_assert_eq(rf_cpulist_parse("0-9", cpus, 4, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "more than 4 CPUs"), "%s", err);
}

Test(cpulist, runtime_refuses_unusable_cpu)
{
	char err[256];
	struct rf_runtime_config cfg = {.cores = "1000"};
	errno = 0;
	cr_assert_null(rf_runtime_create(&cfg, err, sizeof(err)));
	cr_assert_eq(errno, EINVAL);
	cr_assert(strstr(err, "CPU 1000 is not available to this process (usable: "), "%s", err);
	cfg.cores = "zz";
	cr_assert_null(rf_runtime_create(&cfg, err, sizeof(err)));
	cr_assert(strstr(err, "bad core list 'zz'"), "%s", err);
}

Test(cpulist, idle_policy_names)
{
	enum rf_idle idle = RF_IDLE_ADAPTIVE;
	cr_assert_eq(rf_idle_parse("busy", &idle), 0);
	cr_assert_eq(idle, RF_IDLE_BUSY);
	cr_assert_eq(rf_idle_parse("adaptive", &idle), 0);
	cr_assert_eq(idle, RF_IDLE_ADAPTIVE);
	for (const char *const *s = (const char *const[]){"spin", "", "Busy", "busy ", NULL}; *s; s++) {
		cr_assert_eq(rf_idle_parse(*s, &idle), -EINVAL, "'%s'", *s);
		cr_assert_eq(idle, RF_IDLE_ADAPTIVE, "'%s' changed the policy", *s);
	}
}
