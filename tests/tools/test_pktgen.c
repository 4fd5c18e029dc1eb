/*
 * tests/tools/test_pktgen.c: ringflow-pktgen (bench/tools/pktgen.c) end to end on a
 * two-namespace veth bed (bench/tools/vethbed.h, names with the test's PID, deleted at the end
 * of every test): the generator runs in side 0 and the sink (pktgen_sink.bpf.c, attached in
 * native mode to side 1's veth) counts what arrives. Checked: the count the tool reports is
 * exactly the sink's; pacing at three rates, from the tool's own clock (and never faster than
 * the wall clock allows); --flows N gives N distinct 5-tuples; --size is the length that
 * arrives; bad arguments and unusable devices give one line and exit status 2; --probe says in
 * one line whether the kernel runs live frames. Root only (namespaces, XDP); skips with the
 * reason otherwise, and the checks that send skip with the probe's line where the kernel runs
 * no live frames for us.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pktgen_sink.h"
#include "vethbed.h"

#define PG_SRC_IP 0x0afa0001u /* bench/tools/pktgen_frame.h: flow f's source is this + f */

static struct rf_vethbed bed;
static struct bpf_object *sink;
static int stats_fd = -1, tuples_fd = -1;
static char out_path[64], err_path[64];
static uint64_t sink_before; /* the sink's count before the run expect_exact checks */

struct pg_result {
	int status;     /* exit status, -1 if it did not exit */
	char out[2048]; /* stdout */
	char err[2048]; /* stderr */
	int err_lines;
	double wall_s;
};

/* A crash or a kill skips .fini: the namespaces go anyway (then the signal does its work). */
static void on_fatal(int sig)
{
	rf_vethbed_destroy_in_signal(&bed);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The tool's stdout and stderr files, named with the test's PID. */
static void paths_up(void)
{
	snprintf(out_path, sizeof(out_path), "/tmp/rf-pktgen-%d.out", (int)getpid());
	snprintf(err_path, sizeof(err_path), "/tmp/rf-pktgen-%d.err", (int)getpid());
}

static void root_or_skip(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: network namespaces, veth pairs and XDP");
}

static void bed_up(void)
{
	root_or_skip();
	int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM, SIGINT};
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_fatal);
	int rc = rf_vethbed_create(&bed, "pg");
	if (rc)
		cr_skip_test("cannot create the veth bed (%s): is iproute2 installed?", strerror(-rc));
	paths_up();
}

static void bed_down(void)
{
	if (sink)
		bpf_object__close(sink);
	sink = NULL;
	rf_vethbed_destroy(&bed);
	unlink(out_path);
	unlink(err_path);
}

static struct pg_result pktgen(int side, const char *args);

/* Skips the test, with ringflow-pktgen's own line saying why, when this kernel runs no live
 * frames for us (`--probe`; seen as root on a VM of the project's kind): every check that
 * sends needs them. Called before the bed is made: a skip in .init runs no .fini, so a bed
 * made first would stay behind. */
static void live_frames_or_skip(void)
{
	root_or_skip();
	paths_up();
	struct pg_result r = pktgen(-1, "--probe");
	unlink(out_path);
	unlink(err_path);
	if (r.status != 0)
		cr_skip_test("%s", r.err);
}

/* The bed, for tests that send: only where live frames run. */
static void live_bed_up(void)
{
	live_frames_or_skip();
	bed_up();
}

/* The bed plus the counting sink on side 1 (which also puts that veth in NAPI mode). */
static void sink_up(void)
{
	live_bed_up();
	sink = bpf_object__open_file(RF_PKTGEN_SINK_OBJ, NULL);
	cr_assert_not_null(sink, "opening %s", RF_PKTGEN_SINK_OBJ);
	cr_assert_eq(bpf_object__load(sink), 0, "loading the sink");
	int prog = bpf_program__fd(bpf_object__find_program_by_name(sink, "pgs_sink"));
	stats_fd = bpf_object__find_map_fd_by_name(sink, "pgs_stats_map");
	tuples_fd = bpf_object__find_map_fd_by_name(sink, "pgs_tuples");
	cr_assert(prog >= 0 && stats_fd >= 0 && tuples_fd >= 0);
	cr_assert_eq(rf_vethbed_enter(&bed, 1), 0);
	int ifindex = (int)if_nametoindex(bed.dev[1]);
	cr_assert_gt(ifindex, 0);
	/* Attached the old way: it goes with the namespace when bed_down deletes it. */
	cr_assert_eq(bpf_xdp_attach(ifindex, prog, XDP_FLAGS_DRV_MODE, NULL), 0, "attaching the sink");
	cr_assert_eq(rf_vethbed_enter(&bed, -1), 0);
	sink_before = 0;
}

static struct pgs_stats sink_stats(void)
{
	struct pgs_stats sum = {0}, *v;
	int n = libbpf_num_possible_cpus();
	cr_assert_gt(n, 0);
	v = calloc((size_t)n, sizeof(*v));
	cr_assert_not_null(v);
	__u32 key = 0;
	cr_assert_eq(bpf_map_lookup_elem(stats_fd, &key, v), 0);
	for (int i = 0; i < n; i++) {
		sum.frames += v[i].frames;
		sum.lat_frames += v[i].lat_frames;
		sum.bad_csum += v[i].bad_csum;
		sum.tuple_overflow += v[i].tuple_overflow;
		if (v[i].frames && (!sum.min_len || v[i].min_len < sum.min_len))
			sum.min_len = v[i].min_len;
		if (v[i].max_len > sum.max_len)
			sum.max_len = v[i].max_len;
	}
	free(v);
	return sum;
}

/* The sink's frame count once it reaches `want` or stops moving (the peer's NAPI may still be
 * draining its ring when the generator exits); bounded at 3 s. */
static uint64_t sink_frames_settled(uint64_t want)
{
	uint64_t last = (uint64_t)-1, n = 0;
	for (int i = 0; i < 60; i++) {
		n = sink_stats().frames;
		if (n == want || (n == last && i >= 10))
			break;
		last = n;
		usleep(50000);
	}
	return n;
}

static void slurp(const char *path, char *buf, size_t cap)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Runs ringflow-pktgen ARGS in the namespace of `side` (-1: the test's own), bounded. */
static struct pg_result pktgen(int side, const char *args)
{
	struct pg_result r;
	memset(&r, 0, sizeof(r));
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s%s timeout -k 2 30 %s %s > %s 2> %s", side >= 0 ? "ip netns exec " : "",
		 side >= 0 ? bed.ns[side] : "", RF_PKTGEN, args, out_path, err_path);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int st = system(cmd);
	clock_gettime(CLOCK_MONOTONIC, &b);
	r.wall_s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(out_path, r.out, sizeof(r.out));
	slurp(err_path, r.err, sizeof(r.err));
	for (const char *p = r.err; *p; p++)
		r.err_lines += *p == '\n';
	return r;
}

static double field(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	cr_assert_not_null(p, "no \"%s\" in: %s", key, json);
	return strtod(p + strlen(pat), NULL);
}

/* Runs a generator that must succeed, in side 0 to side 0's veth, with --json. */
static struct pg_result pktgen_ok(const char *args)
{
	char full[512];
	snprintf(full, sizeof(full), "--dev %s --json %s", bed.dev[0], args);
	struct pg_result r = pktgen(0, full);
	cr_assert_eq(r.status, 0, "ringflow-pktgen %s: exit %d: %s", full, r.status, r.err);
	return r;
}

/* attempted == sent + refused + not redirected, and the sink saw exactly `sent` more frames. */
static uint64_t expect_exact(const struct pg_result *r)
{
	uint64_t sent = (uint64_t)field(r->out, "sent"), att = (uint64_t)field(r->out, "attempted");
	uint64_t ref = (uint64_t)field(r->out, "refused"), lost = (uint64_t)field(r->out, "not_redirected");
	cr_expect_eq(att, sent + ref + lost, "attempted %lu != sent %lu + refused %lu + lost %lu",
		     (unsigned long)att, (unsigned long)sent, (unsigned long)ref, (unsigned long)lost);
	cr_expect_gt(sent, 0);
	uint64_t got = sink_frames_settled(sink_before + sent) - sink_before;
	sink_before += got;
	cr_expect_eq(got, sent, "the tool says %lu frames left, the sink counted %lu", (unsigned long)sent,
		     (unsigned long)got);
	return sent;
}

Test(pktgen, count_reported_is_what_the_peer_received, .init = sink_up, .fini = bed_down)
{
	struct pg_result r = pktgen_ok("--count 300000");
	cr_expect_eq((uint64_t)field(r.out, "attempted"), 300000);
	expect_exact(&r);
	cr_expect_eq(sink_stats().bad_csum, 0);
}

Test(pktgen, count_is_exact_with_two_pinned_threads, .init = sink_up, .fini = bed_down)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct pg_result r = pktgen_ok(ncpu > 1 ? "--count 200001 --threads 2 --cpu 0" : "--count 200001 --threads 2");
	cr_expect_eq((uint64_t)field(r.out, "attempted"), 200001);
	expect_exact(&r);
}

Test(pktgen, duration_stops_the_run, .init = sink_up, .fini = bed_down)
{
	struct pg_result r = pktgen_ok("--duration 0.3 --rate 100000");
	cr_expect(strstr(r.out, "\"stopped_by\":\"duration\""), "%s", r.out);
	expect_exact(&r);
}

/* The rate the tool paced (the frames it redirected, over the time its schedule ran: the run
 * less what the schedule slipped behind CPU the tool lost, which it reports as slipped_s) is
 * within 5 % of --rate, and it cannot have been faster than the wall clock allows: the run
 * took at least 95 % of count / rate. Lost CPU (a loaded CI machine, a sanitizer build) makes
 * the run longer by what slipped, never the pacing faster or slower than asked, so the check
 * holds whatever the load. (What the peer's ring refused, if its CPU was taken, is the
 * driver's loss, not the pacing's: expect_exact still holds the tool's sent count to the
 * sink's.) */
static void expect_paced(double rate, unsigned long count)
{
	char args[128];
	snprintf(args, sizeof(args), "--rate %.0f --count %lu --duration 20", rate, count);
	struct pg_result r = pktgen_ok(args);
	expect_exact(&r);
	cr_expect_eq((uint64_t)field(r.out, "attempted"), count);
	double secs = field(r.out, "elapsed_s"), slipped = field(r.out, "slipped_s");
	cr_assert(slipped >= 0 && slipped < secs, "slipped %.6f s of a %.6f s run", slipped, secs);
	double paced = field(r.out, "attempted") / (secs - slipped);
	cr_expect(paced >= 0.95 * rate && paced <= 1.05 * rate,
		  "asked %.0f pps, paced %.0f pps over %.3f s (%.3f s slipped)", rate, paced,
		  secs - slipped, slipped);
	cr_expect_geq(secs, 0.95 * (double)count / rate, "elapsed %.3f s for %lu frames at %.0f pps",
		      secs, count, rate);
	cr_expect_geq(r.wall_s, 0.95 * (double)count / rate, "the run took %.3f s of wall clock", r.wall_s);
}

Test(pktgen, pacing_within_5_percent_at_three_rates, .init = sink_up, .fini = bed_down)
{
	/* 1 s each: a CPU taken from the tool for d seconds at the very end (which no later frame
	 * can make up) costs d of the 5 %, so a loaded machine's 10-20 ms stalls fit. */
	expect_paced(2000, 2000);
	expect_paced(50000, 50000);
	expect_paced(400000, 400000);
}

/* Every tuple the sink saw: UDP from PG_SRC_IP + f (f < flows) to port 9, each `per` times
 * (0: any number). Returns how many distinct tuples. */
static unsigned tuples_check(unsigned flows, uint64_t per)
{
	struct pgs_tuple k, next, *prev = NULL;
	unsigned n = 0;
	while (bpf_map_get_next_key(tuples_fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		__u64 count = 0;
		cr_assert_eq(bpf_map_lookup_elem(tuples_fd, &k, &count), 0);
		uint32_t f = ntohl(k.saddr) - PG_SRC_IP;
		cr_expect_lt(f, flows, "source %08x is not one of the %u flows", ntohl(k.saddr), flows);
		cr_expect_eq(ntohs(k.sport), 1024 + (f & 0x3fff));
		cr_expect_eq(ntohs(k.dport), 9);
		cr_expect_eq(k.proto, 17);
		if (per)
			cr_expect_eq(count, per, "flow %u: %lu frames, want %lu", f, (unsigned long)count,
				     (unsigned long)per);
		n++;
	}
	return n;
}

Test(pktgen, flows_seq_gives_n_distinct_tuples_evenly, .init = sink_up, .fini = bed_down)
{
	struct pg_result r = pktgen_ok("--flows 1000 --count 20000 --rate 500000");
	cr_assert_eq(expect_exact(&r), 20000, "frames were refused: the even split cannot be checked");
	cr_expect_eq(tuples_check(1000, 20), 1000);
	struct pgs_stats s = sink_stats();
	cr_expect_eq(s.bad_csum, 0, "%lu frames with a wrong IP checksum", (unsigned long)s.bad_csum);
	cr_expect_eq(s.tuple_overflow, 0);
}

Test(pktgen, flows_random_stays_within_n_and_covers_them, .init = sink_up, .fini = bed_down)
{
	/* 50 flows, 100000 frames: missing one has probability 50 * (49/50)^100000, about 0. */
	struct pg_result r = pktgen_ok("--flows 50 --flows-mode random --count 100000");
	expect_exact(&r);
	cr_expect_eq(tuples_check(50, 0), 50);
	cr_expect_eq(sink_stats().bad_csum, 0);
}

Test(pktgen, size_is_the_length_that_arrives, .init = sink_up, .fini = bed_down)
{
	struct pg_result r = pktgen_ok("--size 1514 --count 1000");
	expect_exact(&r);
	struct pgs_stats s = sink_stats();
	cr_expect_eq(s.min_len, 1514);
	cr_expect_eq(s.max_len, 1514);
	cr_expect_eq(tuples_check(1, 1000), 1);
}

Test(pktgen, default_size_is_60_and_timestamps_use_fwd_latency_frames, .init = sink_up,
     .fini = bed_down)
{
	struct pg_result r = pktgen_ok("--count 1000 --timestamps");
	expect_exact(&r);
	struct pgs_stats s = sink_stats();
	cr_expect_eq(s.min_len, 60);
	cr_expect_eq(s.max_len, 60);
	cr_expect_eq(s.lat_frames, 1000);
}

/* Exit status 2 and exactly one line on stderr containing `what`. */
static void expect_refused(int side, const char *args, const char *what)
{
	struct pg_result r = pktgen(side, args);
	cr_expect_eq(r.status, 2, "'%s': exit %d (want 2): %s", args, r.status, r.err);
	cr_expect_eq(r.err_lines, 1, "'%s': %d lines on stderr: %s", args, r.err_lines, r.err);
	cr_expect(strstr(r.err, what), "'%s': stderr does not say '%s': %s", args, what, r.err);
	cr_expect_eq(r.out[0], 0, "'%s' printed a result: %s", args, r.out);
}

Test(pktgen, bad_arguments_give_one_line_and_exit_2)
{
	/* Parsed before any device or BPF is touched: no root needed. */
	paths_up();
	expect_refused(-1, "--count 10", "--dev IFACE is required");
	expect_refused(-1, "--dev x --size 59", "--size 59: not in 60..1514");
	expect_refused(-1, "--dev x --size 1515", "--size");
	expect_refused(-1, "--dev x --size 100.5", "--size");
	expect_refused(-1, "--dev x --flows 0", "--flows");
	expect_refused(-1, "--dev x --flows 16777217", "--flows");
	expect_refused(-1, "--dev x --flows-mode zigzag", "--flows-mode wants seq or random");
	expect_refused(-1, "--dev x --rate -1", "--rate");
	expect_refused(-1, "--dev x --rate fast", "--rate");
	expect_refused(-1, "--dev x --duration 0", "--duration");
	expect_refused(-1, "--dev x --count -5", "--count");
	expect_refused(-1, "--dev x --cpu 100000", "--cpu");
	expect_refused(-1, "--dev x --threads 0", "--threads");
	expect_refused(-1, "--dev x --dst-mac 02:00:00:00:00", "--dst-mac wants a MAC address");
	expect_refused(-1, "--dev x --src-mac zz:00:00:00:00:01", "--src-mac");
	expect_refused(-1, "--dev x --frobnicate", "unknown option '--frobnicate'");
	expect_refused(-1, "--dev x --size", "--size needs a value");
	expect_refused(-1, "--dev x extra", "unexpected argument 'extra'");
	expect_refused(-1, "--dev x --flows 4 --timestamps", "--timestamps frames carry no flow");
	expect_refused(-1, "--dev rf-no-such-if0", "no interface 'rf-no-such-if0'");
	unlink(out_path);
	unlink(err_path);
}

/* --probe: one line either way. Where the kernel runs live frames, exit 0 with it on stdout;
 * where it refuses them, exit 2 with it on stderr, and a real send says the same. */
Test(pktgen, probe_says_in_one_line_whether_live_frames_run, .init = bed_up, .fini = bed_down)
{
	struct pg_result r = pktgen(-1, "--probe");
	if (r.status == 0) {
		cr_expect(strstr(r.out, "runs BPF_PROG_RUN live frames"), "--probe printed: %s", r.out);
		cr_expect_eq(strchr(r.out, '\n') - r.out + 1, (long)strlen(r.out), "more than one line: %s",
			     r.out);
		cr_expect_eq(r.err[0], 0, "--probe wrote to stderr: %s", r.err);
		return;
	}
	cr_expect_eq(r.status, 2, "--probe: exit %d: %s", r.status, r.err);
	cr_expect_eq(r.err_lines, 1, "--probe: %d lines on stderr: %s", r.err_lines, r.err);
	cr_expect(strstr(r.err, "live frames"), "--probe does not say what it refused: %s", r.err);
	char args[128];
	snprintf(args, sizeof(args), "--dev %s --count 10", bed.dev[0]);
	expect_refused(0, args, "live frames");
}

/* The frames must run to find the device refusing them: live_bed_up. */
Test(pktgen, devices_that_take_no_xdp_frames_give_one_line_and_exit_2, .init = live_bed_up,
     .fini = bed_down)
{
	char args[128];
	/* The peer has neither an XDP program nor GRO: not in NAPI mode, it refuses XDP frames. */
	snprintf(args, sizeof(args), "--dev %s --count 1000", bed.dev[0]);
	expect_refused(0, args, "not in NAPI mode");
	/* Loopback has no ndo_xdp_xmit. */
	expect_refused(0, "--dev lo --count 1000", "takes no XDP frames");
}

Test(pktgen, unusable_devices_give_one_line_and_exit_2, .init = bed_up, .fini = bed_down)
{
	char args[128];
	/* Too big for the MTU. */
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "ip -n %s link set %s mtu 1000", bed.ns[0], bed.dev[0]);
	cr_assert_eq(system(cmd), 0);
	snprintf(args, sizeof(args), "--dev %s --size 1100 --count 10", bed.dev[0]);
	expect_refused(0, args, "does not fit");
	/* Down. */
	snprintf(cmd, sizeof(cmd), "ip -n %s link set %s down", bed.ns[0], bed.dev[0]);
	cr_assert_eq(system(cmd), 0);
	snprintf(args, sizeof(args), "--dev %s --count 10", bed.dev[0]);
	expect_refused(0, args, "is down");
}

/* --timestamps frames as fwd_latency's load: reflected in side 1 (its veth in NAPI mode through
 * GRO, so live frames reach the stack there), read back in side 0 by `fwd_latency listen`.
 * The reflector and listener are AF_PACKET sockets that may drop under load, so the count is
 * bounded, not exact; every frame read back must be one pktgen sent, once. Both helpers end by
 * themselves (--duration, under timeout). */
Test(pktgen, timestamps_feed_fwd_latency_listen, .init = live_bed_up, .fini = bed_down)
{
	char cmd[768], mac[32] = "", lat_out[64];
	snprintf(lat_out, sizeof(lat_out), "/tmp/rf-pktgen-%d.lat", (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip netns exec %s ethtool -K %s gro on >/dev/null", bed.ns[1], bed.dev[1]);
	cr_assert_eq(system(cmd), 0, "ethtool -K gro on failed (is ethtool installed?)");
	snprintf(cmd, sizeof(cmd), "ip -n %s -br link show dev %s | awk '{print $3}'", bed.ns[1], bed.dev[1]);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(mac, sizeof(mac), p));
	pclose(p);
	mac[strcspn(mac, "\n")] = 0;
	snprintf(cmd, sizeof(cmd),
		 "ip netns exec %s timeout -k 1 8 %s reflect --dev %s --duration 5 >/dev/null 2>&1 & "
		 "ip netns exec %s timeout -k 1 8 %s listen --dev %s --duration 3 --label t > %s 2>&1 &",
		 bed.ns[1], RF_FWD_LATENCY, bed.dev[1], bed.ns[0], RF_FWD_LATENCY, bed.dev[0], lat_out);
	cr_assert_eq(system(cmd), 0);
	usleep(500000); /* both sockets open; a frame before that would only count as lost */
	char args[128];
	snprintf(args, sizeof(args), "--timestamps --rate 10000 --count 5000 --dst-mac %s", mac);
	struct pg_result r = pktgen_ok(args);
	uint64_t sent = (uint64_t)field(r.out, "sent");
	cr_expect_eq(sent, 5000);
	char line[1024] = "";
	for (int i = 0; i < 80 && !line[0]; i++) { /* the listener ends 3 s after it started */
		usleep(100000);
		slurp(lat_out, line, sizeof(line));
		if (!strchr(line, '\n'))
			line[0] = 0;
	}
	unlink(lat_out);
	cr_assert(line[0], "fwd_latency listen printed nothing");
	double got = field(line, "received");
	cr_expect(got >= 0.9 * (double)sent && got <= (double)sent, "sent %lu, read back %.0f: %s",
		  (unsigned long)sent, got, line);
	cr_expect_eq(field(line, "dup"), 0);
	cr_expect_gt(field(line, "p50_us"), 0);
}
