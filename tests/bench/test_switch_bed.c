/*
 * tests/bench/test_switch_bed.c: the switch benchmark (bench/switch/run.sh, `make
 * bench-switch`) end to end in its quick mode: ringflow-switch and OVS userspace on packet /
 * system ports, cases one, exact1k, churn, pipe3, select and setup. Checks that the script
 * exits 0; that frames reached SINK through each switch with its flows installed by ovs-ofctl
 * (the `one` and `exact1k` points forwarded > 0, all 1000 exact flows in each table); that
 * the pipe3 and select points forwarded > 0 the way the flows say (pipe3: 4, 1 and 1 flows
 * taken in tables 0, 1, 2 and no packet to a drop or table-miss flow; select: the group's
 * packets are the flow's, split over all 4 buckets); that the churn
 * client's FLOW_MODs were all answered without an ERROR; that every new flow of the setup
 * case reached SINK and its flow is in the switch's table; that the summary and ratio lines
 * are there; that ringflow-pktgen was the generator when it can run here (built, and the kernel
 * runs its live frames; trafgen otherwise), the exact1k points carrying its 1000 flows (every
 * one of them installed, so every offered frame has its flow); that the headroom line is
 * there; and that the run left none of its namespaces. Figures are not judged: timing never
 * decides a test. Root only; skips with the reason otherwise. The
 * deadline is generous: the run waits for the host's one OVS userspace bed (a lock other OVS
 * tests hold too).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bed_run.h"

static int is(const char *line, const char *impl, const char *c)
{
	char a[64], b[64];
	snprintf(a, sizeof(a), "\"impl\":\"%s\"", impl);
	snprintf(b, sizeof(b), "\"case\":\"%s\"", c);
	return strstr(line, a) && strstr(line, b);
}

Test(switch_bed, quick_run_forwards_churns_sets_up_and_cleans_up, .timeout = 240)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: network namespaces, veth pairs and XDP");
	/* the generator is ringflow-pktgen (built, and the kernel runs its live frames) or trafgen */
	const int live = bed_pktgen_runs(RF_SWITCH_PKTGEN);
	if ((!live && bed_tool_missing("trafgen")) || bed_tool_missing("ovs-vswitchd") ||
	    bed_tool_missing("ovs-ofctl"))
		cr_skip_test("trafgen (no ringflow-pktgen here) or Open vSwitch missing: run scripts/deps.sh");
	char out[] = "/tmp/rf-test-switch-bed.XXXXXX";
	FILE *f = bed_run(out, RF_SWITCH_DIR, 200, "");
	const char *impls[] = {"ringflow-packet", "ovs-system"};
	double one[2] = {-1, -1}, exact[2] = {-1, -1}, installed[2] = {-1, -1};
	double applied[2] = {-1, -1}, sent[2] = {-1, -1}, errors[2] = {-1, -1};
	double setup_flows[2] = {-1, -1}, set_up[2] = {-1, -1}, in_table[2] = {-1, -1};
	double hit[2] = {-1, -1}, pipe3[2] = {-1, -1}, sel[2] = {-1, -1};
	double pipe_drop[2] = {-1, -1}, sel_group[2] = {-1, -1}, sel_flow[2] = {-1, -1};
	int pipe_path[2] = {0, 0}, sel_buckets[2] = {0, 0};
	char setup_why[2][160] = {"", ""}; /* a setup point's reason when it was not measured */
	int summary = 0, ratio = 0, tag = 0, pktgen = 0, headroom = 0;
	double ceiling = -1;
	char line[8192];
	while (fgets(line, sizeof(line), f)) {
		for (int i = 0; i < 2; i++) {
			int point = strstr(line, "\"round\"") && !strstr(line, "\"stat\"");
			if (point && is(line, impls[i], "one"))
				one[i] = bed_field(line, "forwarded");
			if (point && is(line, impls[i], "exact1k"))
				exact[i] = bed_field(line, "forwarded");
			if (is(line, impls[i], "flows_hit_exact1k"))
				hit[i] = bed_field(line, "value");
			if (point && is(line, impls[i], "pipe3"))
				pipe3[i] = bed_field(line, "forwarded");
			if (point && is(line, impls[i], "select"))
				sel[i] = bed_field(line, "forwarded");
			if (is(line, impls[i], "check_pipe3")) {
				pipe_drop[i] = bed_field(line, "value");
				pipe_path[i] = strstr(line, "\"flows_hit\":[4,1,1]") &&
					       bed_field(line, "out_flow_priority") == 124;
			}
			if (is(line, impls[i], "check_select")) {
				const char *b = strstr(line, "\"bucket_packets\":[");
				double n[4] = {0, 0, 0, 0};
				sel_group[i] = bed_field(line, "value");
				sel_flow[i] = bed_field(line, "flow_packets");
				sel_buckets[i] = b && sscanf(b + 18, "%lf,%lf,%lf,%lf]", &n[0], &n[1], &n[2],
							   &n[3]) == 4 && n[0] > 0 && n[1] > 0 && n[2] > 0 &&
						 n[3] > 0 && n[0] + n[1] + n[2] + n[3] == sel_group[i];
			}
			if (is(line, impls[i], "install_exact1k"))
				installed[i] = bed_field(line, "flows_installed");
			if (is(line, impls[i], "churn_client")) {
				applied[i] = bed_field(line, "flow_mods_applied");
				sent[i] = bed_field(line, "flow_mods_sent");
				errors[i] = bed_field(line, "errors");
			}
			const char *why = strstr(line, "\"reason\":\"");
			if (why && is(line, impls[i], "setup"))
				snprintf(setup_why[i], sizeof(setup_why[i]), "%.*s",
					 (int)strcspn(why + 10, "\""), why + 10);
			if (point && is(line, impls[i], "setup")) {
				setup_flows[i] = bed_field(line, "flows");
				set_up[i] = bed_field(line, "set_up");
				in_table[i] = bed_field(line, "flows_in_table");
			}
			if (is(line, impls[i], "one") && strstr(line, "\"stat\":\"median\""))
				summary++;
		}
		if (strstr(line, "\"impl\":\"ratio\""))
			ratio++;
		if (strstr(line, "\"impl\":\"ratio\"") && strstr(line, "\"case\":\"headroom\""))
			headroom = 1;
		if (strstr(line, "\"case\":\"bed\"") && strstr(line, "\"generator\":\"pktgen\""))
			pktgen = 1;
		if (strstr(line, "\"impl\":\"gen-only\",\"case\":\"ceiling\",\"round\""))
			ceiling = bed_field(line, "forwarded");
		if (strstr(line, "\"case\":\"bed\""))
			tag = (int)bed_field(line, "tag");
	}
	fclose(f);
	for (int i = 0; i < 2; i++) {
		cr_expect_gt(one[i], 0, "%s: no frame reached SINK with one flow", impls[i]);
		cr_expect_gt(exact[i], 0, "%s: no frame reached SINK with 1000 exact flows", impls[i]);
		cr_expect_eq(installed[i], 1000, "%s: %.0f of the 1000 exact flows in its table",
			     impls[i], installed[i]);
		/* every frame the switch forwarded matched one of the 1000 flows; how many of them
		 * got a frame depends on what got through, so only a forwarded count far above
		 * 1000 (each flow > 50 frames, in turn) asks for all of them */
		cr_expect(hit[i] > 0 && hit[i] <= 1000, "%s: %.0f exact1k flows matched a frame",
			  impls[i], hit[i]);
		if (exact[i] >= 50000)
			cr_expect_eq(hit[i], 1000, "%s: %.0f of the 1000 exact flows matched a frame "
				     "after %.0f frames forwarded", impls[i], hit[i], exact[i]);
		cr_expect_gt(pipe3[i], 0, "%s: no frame reached SINK through the 3 tables", impls[i]);
		cr_expect(pipe_path[i], "%s: pipe3's frames did not take the 4, 1, 1 flows and the /24",
			  impls[i]);
		cr_expect_eq(pipe_drop[i], 0, "%s: %.0f pipe3 packets went to a drop or table-miss "
			     "flow", impls[i], pipe_drop[i]);
		cr_expect_gt(sel[i], 0, "%s: no frame reached SINK through the select group", impls[i]);
		cr_expect(sel_group[i] > 0 && sel_group[i] == sel_flow[i], "%s: group 1 counted %.0f "
			  "packets, its flow %.0f", impls[i], sel_group[i], sel_flow[i]);
		cr_expect(sel_buckets[i], "%s: the select group's 4 buckets did not all take packets "
			  "adding up to the group's", impls[i]);
		cr_expect_gt(sent[i], 0, "%s: the churn client sent no FLOW_MOD", impls[i]);
		cr_expect_eq(applied[i], sent[i], "%s: %.0f of %.0f churn FLOW_MODs answered",
			     impls[i], applied[i], sent[i]);
		cr_expect_eq(errors[i], 0, "%s: %.0f ERRORs to the churn client", impls[i], errors[i]);
		cr_expect_gt(setup_flows[i], 0, "%s: no flow-setup result%s%s", impls[i],
			     setup_why[i][0] ? ": " : "", setup_why[i]);
		cr_expect_eq(set_up[i], setup_flows[i], "%s: %.0f of %.0f new flows reached SINK",
			     impls[i], set_up[i], setup_flows[i]);
		cr_expect_geq(in_table[i], set_up[i], "%s: %.0f learned flows in its table for %.0f "
			      "set up", impls[i], in_table[i], set_up[i]);
	}
	cr_expect_eq(summary, 2, "summary lines for the one-flow case: %d of 2", summary);
	cr_expect_gt(ratio, 0, "no ratio line");
	cr_expect_gt(ceiling, 0, "the generator alone counted no frame at FWD");
	cr_expect(headroom, "no headroom line (the generator alone against the best switch)");
	cr_expect_eq(pktgen, live, "%s", live ? "ringflow-pktgen runs here but the bed did not use it"
					       : "the bed used ringflow-pktgen, which cannot run here");
	cr_assert_gt(tag, 0, "the run did not say its tag (a \"case\":\"bed\" line)");
	bed_expect_no_netns(tag);
	bed_remove(out);
}
