/*
 * tests/bench/test_fwd_bed.c: the forwarding bed (bench/fwd/run.sh, `make bench-fwd`) end to
 * end in its quick mode, with the generator alone, the in-kernel XDP redirect and the Linux
 * bridge as forwarders: the script exits 0, frames reached SINK through the bridge (a max_64B
 * point with forwarded > 0 and a round trip with frames received) and through the redirect
 * (when built: it needs libbpf, as ringflow-pktgen, which is then the generator where the
 * kernel runs its live frames, trafgen elsewhere), the summary lines are there; with
 * ringflow-pktgen, both placements ran for the bridge (P1 by threaded
 * NAPI or RPS) and each placement's zero-loss search is consistent with its own steps (the
 * result is the highest rate that passed, and every passing step lost at most 0.1 % of what
 * was attempted); and the run left nothing behind (none of its namespaces, no DPDK runtime
 * directory of its prefix). The figures are not judged: timing never decides a test. Root
 * only; skips with the reason otherwise.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bed_run.h"

Test(fwd_bed, quick_run_forwards_through_the_bridge_and_cleans_up, .timeout = 170)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: network namespaces, veth pairs and XDP");
	if (bed_tool_missing("trafgen"))
		cr_skip_test("trafgen missing: run scripts/deps.sh (netsniff-ng)");
	/* pktgen: the generator is ringflow-pktgen (built, and the kernel runs its live frames) */
	const int live = bed_pktgen_runs(RF_FWD_PKTGEN);
	char out[] = "/tmp/rf-test-fwd-bed.XXXXXX";
	FILE *f = bed_run(out, RF_FWD_DIR, 150, "--impls 'gen-only xdp-redirect linux-bridge'");
	char line[4096];
	/* latency through the bridge: one way with pktgen (owd_64B), the round trip with trafgen */
	double bridge_fwd = -1, ceiling_fwd = -1, redirect_fwd = -1, lat_recv = -1, lat_sent = -1, lat_ahead = -1;
	int summary = 0, tag = 0, pktgen = 0, redirect_unavailable = 0;
	/* the bridge's zero-loss search per placement (0: P1, 1: P2) */
	int placed[2] = {0, 0}, steps[2] = {0, 0}, bad_pass[2] = {0, 0};
	double zl_rate[2] = {-1, -1}, best_pass[2] = {0, 0};
	while (fgets(line, sizeof(line), f)) {
		int bridge = strstr(line, "\"impl\":\"linux-bridge\"") != NULL;
		int ceiling = strstr(line, "\"impl\":\"gen-only\"") != NULL;
		int redirect = strstr(line, "\"impl\":\"xdp-redirect\"") != NULL;
		if (strstr(line, "\"case\":\"max_64B\",\"round\"")) {
			if (bridge)
				bridge_fwd = bed_field(line, "forwarded");
			if (ceiling)
				ceiling_fwd = bed_field(line, "forwarded");
			if (redirect)
				redirect_fwd = bed_field(line, "forwarded");
		}
		if (redirect && strstr(line, "\"case\":\"unavailable\""))
			redirect_unavailable = 1;
		if (strstr(line, "\"case\":\"bed\"") && strstr(line, "\"generator\":\"pktgen\""))
			pktgen = 1;
		if (bridge && strstr(line, live ? "\"case\":\"owd_64B\"" : "\"case\":\"rtt_64B\"")) {
			lat_recv = bed_field(line, "received");
			lat_sent = bed_field(line, "sent");
			lat_ahead = live ? bed_field(line, "ahead") : 0;
		}
		if (bridge && strstr(line, "\"stat\":\"median\"") && bed_field(line, "min") >= 0)
			summary = 1;
		if (strstr(line, "\"case\":\"bed\""))
			tag = (int)bed_field(line, "tag");
		int pl = strstr(line, "\"placement\":\"P1\"") ? 0 : strstr(line, "\"placement\":\"P2\"") ? 1 : -1;
		if (!bridge || pl < 0 || strstr(line, "\"stat\""))
			continue;
		if (strstr(line, "\"case\":\"placement\""))
			placed[pl] = pl == 1 ? strstr(line, "\"how\":\"default\"") != NULL
					     : (strstr(line, "\"how\":\"threaded-napi\"") ||
						strstr(line, "\"how\":\"rps\""));
		if (strstr(line, "\"case\":\"zl_step\"")) {
			steps[pl]++;
			if (strstr(line, "\"pass\":true")) {
				double at = bed_field(line, "attempted"), fw = bed_field(line, "forwarded");
				if (at <= 0 || fw < at * 0.999)
					bad_pass[pl]++;
				if (bed_field(line, "target_pps") > best_pass[pl])
					best_pass[pl] = bed_field(line, "target_pps");
			}
		}
		if (strstr(line, "\"case\":\"zero_loss_64B\""))
			zl_rate[pl] = bed_field(line, "rate_pps");
	}
	fclose(f);
	cr_expect_gt(bridge_fwd, 0, "no frame reached SINK through the Linux bridge");
	cr_expect_gt(ceiling_fwd, 0, "the generator's ceiling counted no frame");
	cr_expect_eq(pktgen, live, "%s", live ? "ringflow-pktgen runs here but the bed did not use it"
					       : "the bed used ringflow-pktgen, which cannot run here");
	if (RF_FWD_PKTGEN)
		cr_expect_gt(redirect_fwd, 0, "no frame reached SINK through the in-kernel XDP redirect");
	else
		cr_expect(redirect_unavailable, "xdp-redirect without its loader: no \"unavailable\" line");
	if (live) {
		for (int p = 0; p < 2; p++) {
			cr_expect(placed[p], "bridge: placement P%d not applied as it should be", p + 1);
			cr_expect_gt(steps[p], 0, "bridge P%d: no zero-loss step", p + 1);
			cr_expect_eq(bad_pass[p], 0, "bridge P%d: %d steps passed with more than 0.1 %% lost",
				     p + 1, bad_pass[p]);
			cr_expect_eq(zl_rate[p], best_pass[p], "bridge P%d: zero-loss %.0f/s, but the highest "
				     "passing step was %.0f/s", p + 1, zl_rate[p], best_pass[p]);
		}
	}
	cr_expect_gt(lat_recv, 0, "no timestamped frame was timed through the bridge");
	cr_expect_leq(lat_recv, lat_sent, "more frames timed (%.0f) than the generator sent (%.0f)", lat_recv, lat_sent);
	cr_expect_eq(lat_ahead, 0, "%.0f frames arrived before their send time", lat_ahead);
	cr_expect(summary, "no median/range summary line for the bridge");
	cr_assert_gt(tag, 0, "the run did not say its tag (a \"case\":\"bed\" line)");
	bed_expect_no_netns(tag);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "ls -d /var/run/dpdk/rffwd%dt* >/dev/null 2>&1", tag);
	cr_expect_neq(system(cmd), 0, "DPDK runtime files of the run left in /var/run/dpdk");
	bed_remove(out);
}
