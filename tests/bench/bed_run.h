/*
 * tests/bench/bed_run.h: what the end-to-end tests of the benchmark beds (test_fwd_bed.c,
 * test_switch_bed.c) share: whether a tool is installed, whether ringflow-pktgen is the
 * generator here, a bed's run.sh run in its quick mode
 * with its output kept (and shown when it fails), a number read from one of its JSON lines,
 * and the check that the run left none of its namespaces. Test files only (it asserts with
 * Criterion).
 */
#ifndef RINGFLOW_TEST_BED_RUN_H
#define RINGFLOW_TEST_BED_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* 1 when the command TOOL is not on PATH. */
static inline int bed_tool_missing(const char *tool)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) != 0;
}

/* 1 when ringflow-pktgen (in RF_BUILD_DIR) is the bed's generator: built (`built`, the test's
 * RF_*_PKTGEN) and the kernel runs its live frames (`ringflow-pktgen --probe`), as
 * bed_pick_generator decides; else the bed runs trafgen, and why goes to stderr. */
static inline int bed_pktgen_runs(int built)
{
	if (!built)
		return 0;
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s/bench/tools/ringflow-pktgen --probe >/dev/null", RF_BUILD_DIR);
	int st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The number after the first "key": in line, or -1. */
static inline double bed_field(const char *line, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : -1;
}

/*
 * Makes the directory OUT (a mkdtemp template, filled in), runs `bash DIR/run.sh --build
 * RF_BUILD_DIR --quick --quiet ARGS --out OUT` under `timeout -k 5 SECS` with its stdout and
 * stderr in OUT (both shown when it fails), asserts that it exited 0, and returns
 * OUT/results.jsonl open for reading (asserted).
 */
static inline FILE *bed_run(char *out, const char *dir, int secs, const char *args)
{
	cr_assert_not_null(mkdtemp(out));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "timeout -k 5 %d bash %s/run.sh --build %s --quick --quiet %s --out %s "
		 "> %s/stdout.txt 2> %s/stderr.txt",
		 secs, dir, RF_BUILD_DIR, args, out, out, out);
	int st = system(cmd);
	char path[512];
	snprintf(path, sizeof(path), "cat %s/stderr.txt %s/stdout.txt >&2", out, out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		(void)system(path);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run.sh failed (status %d)", st);
	snprintf(path, sizeof(path), "%s/results.jsonl", out);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	return f;
}

/* Expects that the run tagged TAG left none of its namespaces (bench/lib/bed.sh's names). */
static inline void bed_expect_no_netns(int tag)
{
	const char *nss[] = {"rffg", "rfff", "rffs"};
	for (int i = 0; i < 3; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/run/netns/%s%d", nss[i], tag);
		struct stat sb;
		cr_expect_neq(stat(path, &sb), 0, "namespace %s%d left behind", nss[i], tag);
	}
}

/* Removes the run's directory OUT. */
static inline void bed_remove(const char *out)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	(void)system(cmd);
}

#endif /* RINGFLOW_TEST_BED_RUN_H */
