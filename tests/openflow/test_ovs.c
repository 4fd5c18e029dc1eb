/*
 * tests/openflow/test_ovs.c: ringflow-controller against a real Open vSwitch. Each test starts
 * the controller binary on a free loopback port and a private OVS bed (tests/openflow/ovs_bed.sh:
 * own ovsdb-server and ovs-vswitchd, userspace bridges in fail-mode secure, hosts in network
 * namespaces), then checks what a user would: ping between namespaces works through the
 * learning switch, and `ovs-ofctl dump-flows` shows the table-miss entry (1.3) and the learned
 * flows for both hosts' MACs. The bed holds while this process keeps its stdin pipe open, so it
 * tears itself down even when a test fails or dies. Needs root; skips without OVS or ping.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "free_port.h"

struct bed {
	pid_t pid;	   /* the ovs_bed.sh process */
	int hold_fd;	   /* its stdin: closing it tears the bed down */
	pid_t controller;  /* ringflow-controller */
	uint16_t port;	   /* where it listens */
};

static void need_root_and_tools(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: network namespaces, veth and ovs-vswitchd");
	if (access("/usr/sbin/ovs-vswitchd", X_OK) != 0 || access("/usr/bin/ovs-ofctl", X_OK) != 0)
		cr_skip_test("Open vSwitch missing: run scripts/deps.sh (openvswitch-switch)");
	if (access("/usr/bin/ping", X_OK) != 0 && access("/bin/ping", X_OK) != 0)
		cr_skip_test("ping missing: run scripts/deps.sh (iputils-ping)");
	if (access("/usr/bin/curl", X_OK) != 0)
		cr_skip_test("curl missing: run scripts/deps.sh (curl)");
}

/* The learning switch alone, or with topology discovery and REST when rest_port != 0. */
static pid_t start_controller(uint16_t port, uint16_t rest_port)
{
	char listen_at[32], rest_at[32];
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u", port);
	snprintf(rest_at, sizeof(rest_at), "127.0.0.1:%u", rest_port);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (rest_port)
			execl(RF_CONTROLLER_BIN, RF_CONTROLLER_BIN, "--listen", listen_at, "--cores",
			      "0", "--idle", "adaptive", "--max-macs", "4096", "--app",
			      "learning,topology", "--rest", rest_at, (char *)NULL);
		else
			execl(RF_CONTROLLER_BIN, RF_CONTROLLER_BIN, "--listen", listen_at, "--cores",
			      "0", "--idle", "adaptive", "--max-macs", "4096", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Starts the controller and ovs_bed.sh, and exports the BED_* and OVS_*DIR lines the bed
 * prints before READY. */
static void start_bed(struct bed *b, const char *protocol, int bridges, int hosts,
		      uint16_t rest_port)
{
	uint16_t port = free_port();
	b->port = port;
	b->controller = start_controller(port, rest_port);
	int in[2], out[2];
	/* close-on-exec: only the bed holds these (a controller started later must not keep
	 * the hold pipe open, or the bed would outlive this process) */
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	char target[48], nb[8], nh[8];
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%u", port);
	snprintf(nb, sizeof(nb), "%d", bridges);
	snprintf(nh, sizeof(nh), "%d", hosts);
	b->pid = fork();
	cr_assert_geq(b->pid, 0);
	if (b->pid == 0) {
		setsid(); /* out of our process group: a timeout's group SIGKILL must not skip
			   * the bed's teardown; it sees stdin close (and SIGTERM) instead */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execl("/bin/bash", "bash", RF_OVS_BED, "-c", target, "-O", protocol, "-b", nb, "-H",
		      nh, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	b->hold_fd = in[1];
	FILE *f = fdopen(out[0], "r");
	char line[512];
	int ready = 0;
	while (!ready && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *eq = strchr(line, '=');
		if (strcmp(line, "READY") == 0)
			ready = 1;
		else if (eq) {
			*eq = 0;
			setenv(line, eq + 1, 1);
		}
	}
	fclose(f);
	cr_assert(ready, "ovs_bed.sh failed (its error is on stderr)");
}

/* Tears the bed down and stops the controller, which must exit 0 on SIGTERM. */
static void stop_bed(struct bed *b)
{
	int st;
	close(b->hold_fd);
	cr_assert_eq(waitpid(b->pid, &st, 0), b->pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ovs_bed.sh teardown failed");
	kill(b->controller, SIGTERM);
	cr_assert_eq(waitpid(b->controller, &st, 0), b->controller);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "controller did not stop cleanly");
}

/* Runs a shell command (the BED_* variables are in the environment), returns its exit
 * status, and its stdout in out (may be NULL). */
static int sh(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = 0, r;
	char sink[4096];
	while ((r = fread(out ? out + n : sink, 1, out ? outlen - 1 - n : sizeof(sink), p)) > 0)
		if (out)
			n += r;
	if (out)
		out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Waits (at most 10 s) until ovs-vswitchd's log says every bridge connected to the controller
 * (the database's is_connected column lags by seconds). */
static void wait_connected(void)
{
	for (int i = 0; i < 100; i++) {
		if (sh(NULL, 0, "for br in $BED_BRIDGES; do grep -q \"|$br<->tcp:.*: connected$\" "
				"\"$BED_DIR/ovs-vswitchd.log\" || exit 1; done") == 0)
			return;
		usleep(100000);
	}
	cr_assert_fail("the bridges did not connect to the controller in 10 s");
}

/* ping -c 3 -W 1 from host a to host b, up to three tries (the first ARP floods while the
 * switch's handshake may still be settling); 0 when a reply came back. */
static int ping(const char *from, const char *to)
{
	int rc = -1;
	for (int i = 0; i < 3 && rc != 0; i++)
		rc = sh(NULL, 0, "ip netns exec \"$BED_NS_%s\" ping -q -c 3 -i 0.2 -W 1 \"$BED_IP_%s\"",
			from, to);
	return rc;
}

/* The learned flow towards a host matches its MAC as dl_dst on the given bridge. */
static void expect_learned(const char *flows, const char *host)
{
	char name[32], want[64];
	snprintf(name, sizeof(name), "BED_MAC_%s", host);
	const char *mac = getenv(name);
	cr_assert_not_null(mac);
	snprintf(want, sizeof(want), "dl_dst=%s", mac);
	cr_expect_not_null(strstr(flows, want), "no learned flow to %s in:\n%s", want, flows);
}

static void one_bridge(const char *protocol)
{
	need_root_and_tools();
	struct bed b;
	start_bed(&b, protocol, 1, 2, 0);
	wait_connected();
	cr_assert_eq(ping("1_1", "1_2"), 0, "ping through the learning switch failed");
	char flows[16384];
	cr_assert_eq(sh(flows, sizeof(flows), "ovs-ofctl -O %s dump-flows \"$BED_BRIDGE_1\"",
			protocol), 0);
	if (strcmp(protocol, "OpenFlow13") == 0)
		cr_expect_not_null(strstr(flows, "priority=0 actions=CONTROLLER"),
				   "no table-miss entry in:\n%s", flows);
	expect_learned(flows, "1_1");
	expect_learned(flows, "1_2");
	stop_bed(&b);
}

Test(ovs, learning_switch_pings_openflow13, .timeout = 60)
{
	one_bridge("OpenFlow13");
}

Test(ovs, learning_switch_pings_openflow10, .timeout = 60)
{
	one_bridge("OpenFlow10");
}

/* Three bridges in a line, one host each: end-to-end ping crosses both veth links. */
Test(ovs, learning_switch_pings_across_three_bridges, .timeout = 60)
{
	need_root_and_tools();
	struct bed b;
	start_bed(&b, "OpenFlow13", 3, 1, 0);
	wait_connected();
	cr_assert_eq(ping("1_1", "3_1"), 0, "ping across three bridges failed");
	char flows[16384];
	cr_assert_eq(sh(flows, sizeof(flows), "ovs-ofctl -O OpenFlow13 dump-flows \"$BED_BRIDGE_2\""),
		     0);
	expect_learned(flows, "1_1");
	expect_learned(flows, "3_1");
	stop_bed(&b);
}

/* N bridges in a line: LLDP discovery must report exactly the 2(N-1) directed links, with
 * the right dpids and port numbers, on GET /api/links (waits at most 10 s for them). */
static void links_discovered(int n)
{
	need_root_and_tools();
	uint16_t rest = free_port();
	struct bed b;
	start_bed(&b, "OpenFlow13", n, 1, rest);
	wait_connected();
	char links[16384], want[2][256];
	int found = 0;
	for (int t = 0; t < 100 && found < 2 * (n - 1); t++) {
		usleep(100000);
		if (sh(links, sizeof(links), "curl -sf http://127.0.0.1:%u/api/links", rest) != 0)
			continue;
		found = 0;
		for (int i = 2; i <= n; i++) {
			char v[4][32];
			const char *names[4] = {"BED_DPID_%d", "BED_LINK_%d_A", "BED_DPID_%d",
						"BED_LINK_%d_B"};
			const int of[4] = {i - 1, i, i, i};
			for (int k = 0; k < 4; k++) {
				char name[32];
				snprintf(name, sizeof(name), names[k], of[k]);
				cr_assert_not_null(getenv(name), "%s not exported", name);
				snprintf(v[k], sizeof(v[k]), "%s", getenv(name));
			}
			snprintf(want[0], sizeof(want[0]),
				 "{\"src\":{\"dpid\":\"%s\",\"port\":%s},\"dst\":{\"dpid\":\"%s\",\"port\":%s}",
				 v[0], v[1], v[2], v[3]);
			snprintf(want[1], sizeof(want[1]),
				 "{\"src\":{\"dpid\":\"%s\",\"port\":%s},\"dst\":{\"dpid\":\"%s\",\"port\":%s}",
				 v[2], v[3], v[0], v[1]);
			found += (strstr(links, want[0]) != NULL) + (strstr(links, want[1]) != NULL);
		}
	}
	cr_assert_eq(found, 2 * (n - 1), "links not discovered in 10 s:\n%s", links);
	int total = 0;
	for (const char *s = links; (s = strstr(s, "\"src\"")); s++)
		total++;
	cr_expect_eq(total, 2 * (n - 1), "extra links reported:\n%s", links);
	stop_bed(&b);
}

Test(ovs, lldp_discovers_two_bridges_linked, .timeout = 60)
{
	links_discovered(2);
}

Test(ovs, lldp_discovers_three_bridges_in_a_line, .timeout = 60)
{
	links_discovered(3);
}

/* OVS keeps flows across a controller restart; the new controller must delete them on
 * connect (a clean state), put the table-miss entry back, and forward again. */
Test(ovs, restarted_controller_clears_stale_flows, .timeout = 60)
{
	need_root_and_tools();
	struct bed b;
	start_bed(&b, "OpenFlow13", 1, 2, 0);
	wait_connected();
	cr_assert_eq(ping("1_1", "1_2"), 0);
	kill(b.controller, SIGTERM);
	int st;
	cr_assert_eq(waitpid(b.controller, &st, 0), b.controller);
	char flows[16384];
	cr_assert_eq(sh(flows, sizeof(flows), "ovs-ofctl -O OpenFlow13 dump-flows \"$BED_BRIDGE_1\""), 0);
	expect_learned(flows, "1_2"); /* survived the controller */

	b.controller = start_controller(b.port, 0);
	int cleared = 0;
	for (int i = 0; i < 100 && !cleared; i++) {
		usleep(100000);
		/* reconnected (a second "connected" line), learned flows gone, table-miss back */
		cleared = sh(NULL, 0, "[ $(grep -c \"|$BED_BRIDGE_1<->tcp:.*: connected$\" "
				      "\"$BED_DIR/ovs-vswitchd.log\") -ge 2 ]") == 0 &&
			  sh(flows, sizeof(flows), "ovs-ofctl -O OpenFlow13 dump-flows \"$BED_BRIDGE_1\"") == 0 &&
			  !strstr(flows, "dl_dst=") && strstr(flows, "priority=0 actions=CONTROLLER");
	}
	cr_assert(cleared, "stale flows not cleared after reconnect:\n%s", flows);
	cr_assert_eq(ping("1_1", "1_2"), 0, "no forwarding after the controller restart");
	stop_bed(&b);
}
