/*
 * tests/bench/test_fwd_bed.c: the forwarding bed (bench/fwd/run.sh, `make bench-fwd`) end to
 * end in its quick mode, with the generator's ceiling and the Linux bridge as forwarders: the
 * script exits 0, frames reached SINK through the bridge (a max_64B point with forwarded > 0 and
 * a round trip with frames received), the summary lines are there, and the run left nothing
 * behind (none of its namespaces, no DPDK runtime directory of its prefix). The figures are
 * not judged: timing never decides a test. Root only; skips with the reason otherwise.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The first "key":number after the first occurrence of "key" in line, or -1. */
static double num_after(const char *line, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(line, pat);
	return p ? strtod(p + strlen(pat), NULL) : -1;
}

static int tool_missing(const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) != 0;
}

Test(fwd_bed, quick_run_forwards_through_the_bridge_and_cleans_up, .timeout = 90)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: network namespaces, veth pairs and XDP");
	if (tool_missing("trafgen"))
		cr_skip_test("trafgen missing: run scripts/deps.sh (netsniff-ng)");
	char out[] = "/tmp/rf-test-fwd-bed.XXXXXX";
	cr_assert_not_null(mkdtemp(out));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "timeout -k 5 75 bash %s/run.sh --build %s --quick --quiet --impls 'gen-only linux-bridge' "
		 "--out %s > %s/stdout.txt 2> %s/stderr.txt",
		 RF_FWD_DIR, RF_BUILD_DIR, out, out, out);
	int st = system(cmd);
	char path[512];
	snprintf(path, sizeof(path), "cat %s/stderr.txt %s/stdout.txt >&2", out, out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		(void)system(path);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run.sh failed (status %d)", st);

	snprintf(path, sizeof(path), "%s/results.jsonl", out);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	char line[4096];
	double bridge_fwd = -1, ceiling_fwd = -1, rtt_recv = -1;
	int summary = 0, tag = 0;
	while (fgets(line, sizeof(line), f)) {
		int bridge = strstr(line, "\"impl\":\"linux-bridge\"") != NULL;
		int ceiling = strstr(line, "\"impl\":\"gen-only\"") != NULL;
		if (strstr(line, "\"case\":\"max_64B\",\"round\"")) {
			if (bridge)
				bridge_fwd = num_after(line, "forwarded");
			if (ceiling)
				ceiling_fwd = num_after(line, "forwarded");
		}
		if (bridge && strstr(line, "\"case\":\"rtt_64B\""))
			rtt_recv = num_after(line, "received");
		if (bridge && strstr(line, "\"stat\":\"median\"") && num_after(line, "min") >= 0)
			summary = 1;
		if (strstr(line, "\"case\":\"bed\""))
			tag = (int)num_after(line, "tag");
	}
	fclose(f);
	cr_expect_gt(bridge_fwd, 0, "no frame reached SINK through the Linux bridge");
	cr_expect_gt(ceiling_fwd, 0, "the generator's ceiling counted no frame");
	cr_expect_gt(rtt_recv, 0, "no timestamped frame came back through the bridge");
	cr_expect(summary, "no median/range summary line for the bridge");
	cr_assert_gt(tag, 0, "the run did not say its tag (a \"case\":\"bed\" line)");
	const char *nss[] = {"rffg", "rfff", "rffs"};
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/run/netns/%s%d", nss[i], tag);
		struct stat sb;
		cr_expect_neq(stat(path, &sb), 0, "namespace %s%d left behind", nss[i], tag);
	}
	snprintf(cmd, sizeof(cmd), "ls -d /var/run/dpdk/rffwd%d* >/dev/null 2>&1", tag);
	cr_expect_neq(system(cmd), 0, "DPDK runtime files of the run left in /var/run/dpdk");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	(void)system(cmd);
}
