/*
 * tests/bench/test_branch.c: the four branch kernels compute the same sum as a reference,
 * on random, sorted and edge-case data; and the branchy one really is branchy: objdump of
 * the built kernels library shows a conditional jump and no cmov in br_sum_branchy (a
 * compiler that if-converted it would make the benchmark measure nothing).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/branch_kernels.h"

static uint64_t reference_sum(const uint8_t *a, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += a[i] >= 128 ? a[i] : 0;
	return s;
}

static void check_all(const uint8_t *a, size_t n, const char *what)
{
	uint64_t want = reference_sum(a, n);
	cr_assert_eq(br_sum_branchy(a, n), want, "branchy, %s", what);
	cr_assert_eq(br_sum_expect(a, n), want, "expect, %s", what);
	cr_assert_eq(br_sum_branchless(a, n), want, "branchless, %s", what);
	cr_assert_eq(br_sum_compiler(a, n), want, "compiler, %s", what);
}

Test(bench_branch, variants_sum_like_the_reference_on_random_and_sorted_data)
{
	enum { N = 4099 }; /* odd size: no loop unrolling hides a tail bug */
	uint8_t a[N], s[N];
	br_fill_random(a, N, 7);
	br_sort_bytes(s, a, N);
	check_all(a, N, "random");
	check_all(s, N, "sorted");
	check_all(a, 0, "empty");
	check_all(a, 1, "one element");
}

Test(bench_branch, threshold_edges)
{
	uint8_t a[] = {0, 127, 128, 129, 255, 255, 1};
	check_all(a, sizeof(a), "edges");
	cr_assert_eq(br_sum_branchy(a, sizeof(a)), 128 + 129 + 255 + 255, "exact value");
}

Test(bench_branch, sort_is_a_sorted_permutation)
{
	enum { N = 1000 };
	uint8_t a[N], s[N];
	br_fill_random(a, N, 3);
	br_sort_bytes(s, a, N);
	unsigned ca[256] = {0}, cs[256] = {0};
	for (int i = 0; i < N; i++) {
		ca[a[i]]++;
		cs[s[i]]++;
		if (i)
			cr_assert_leq(s[i - 1], s[i], "sorted at %d", i);
	}
	cr_assert_eq(memcmp(ca, cs, sizeof(ca)), 0, "same multiset");
}

Test(bench_branch, random_data_is_reproducible_and_balanced)
{
	enum { N = 1 << 16 };
	static uint8_t a[N], b[N];
	br_fill_random(a, N, 42);
	br_fill_random(b, N, 42);
	cr_assert_eq(memcmp(a, b, N), 0, "same seed, same data");
	unsigned taken = 0;
	for (int i = 0; i < N; i++)
		taken += a[i] >= 128;
	/* the benchmark's premise: about half the branches go each way */
	cr_assert(taken > N * 45 / 100 && taken < N * 55 / 100, "taken %u of %d", taken, N);
}

/* The disassembly of one function from `objdump -d` of the kernels library. */
static char *disassemble(const char *fn)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' 2>/dev/null",
		 RF_BENCH_KERNELS_LIB);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap), line[512], header[128];
	snprintf(header, sizeof(header), "<%s>:", fn);
	int inside = 0;
	while (out && fgets(line, sizeof(line), p)) {
		if (!inside) {
			inside = strstr(line, header) != NULL;
			continue;
		}
		if (line[0] == '\n')
			break; /* blank line: end of the function */
		size_t l = strlen(line);
		if (len + l + 1 < cap) {
			memcpy(out + len, line, l + 1);
			len += l;
		}
	}
	pclose(p);
	if (out && len == 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* True when some instruction of `code` is a conditional jump (j<cc>, not jmp). */
static int has_conditional_jump(const char *code)
{
	for (const char *l = code; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *tab = strchr(l, '\t'), *eol = strchr(l, '\n');
		if (!tab || (eol && tab > eol))
			continue;
		tab++;
		if (tab[0] == 'j' && strncmp(tab, "jmp", 3) != 0)
			return 1;
	}
	return 0;
}

Test(bench_branch, branchy_kernel_keeps_its_branch)
{
	if (system("objdump --version >/dev/null 2>&1") != 0)
		cr_skip_test("objdump not installed (Debian package binutils)");
	char *code = disassemble("br_sum_branchy");
	cr_assert_not_null(code, "br_sum_branchy not found in objdump -d of %s", RF_BENCH_KERNELS_LIB);
	cr_assert(has_conditional_jump(code), "no conditional jump in br_sum_branchy:\n%s", code);
	cr_assert_null(strstr(code, "cmov"), "br_sum_branchy was if-converted:\n%s", code);
	free(code);

	code = disassemble("br_sum_expect");
	cr_assert_not_null(code, "br_sum_expect not found");
	cr_assert_null(strstr(code, "cmov"), "br_sum_expect was if-converted:\n%s", code);
	free(code);
}
