/*
 * apps/echo/loadgen.c: ringflow-loadgen, the open-loop load generator (command line).
 *
 *   ringflow-loadgen --backend udp:connect=10.0.0.2:9000 --rates 20k,100k,200k,400k,800k,1.6M
 *                    --size 100 --warmup 1 --duration 5 [--json] [--cores 0[,1]]
 *
 * For each rate it runs one point (lg_run.c) and prints a table row, or with --json one JSON
 * object per point on stdout; a progress line per point goes to stderr. A saturated point is
 * a result, not an error: the exit status is 0 unless something failed.
 * --mode stream|rr|crr runs one point of a netperf-style mode instead (lg_modes_main.c).
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ringflow/ctl.h>
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#include "lg_modes_main.h"
#include "lg_msg.h"
#include "lg_run.h"

#define MAX_RATES 32

static volatile sig_atomic_t stop_asked;

static void on_signal(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringflow-loadgen --backend SPEC [--rates 20k,100k,200k,400k,800k,1.6M]\n"
		"         [--size 100] [--warmup 1] [--duration 5] [--json] [--cores TX[,RX]]\n"
		"         [--burst 32] [--drain-ms 200] [--pool 8192] [--label NAME]\n"
		"         [--mode echo|stream|rr|crr] [--conns 1] [--outstanding 1] [--wait spin|block]\n"
		"  Open loop: sends at each fixed rate whatever comes back, times every reply\n"
		"  (RTT from CLOCK_MONOTONIC in the message). A point is saturated when received <\n"
		"  99%% of offered or loss > 0.1%%. --cores TX: sender and receiver share one busy\n"
		"  loop on CPU TX; --cores TX,RX: the receiver runs on CPU RX (drivers that can\n"
		"  receive and send on two threads at once: udp).\n"
		"  --label names the backend in the output (default: SPEC).\n"
		"  --mode echo|stream|rr|crr (default echo: the open loop above; docs/echo-benchmark.md):\n"
		"    stream  one direction as fast as the backend goes, for --duration, to ringflow-echo\n"
		"            --sink: Gbit/s and msg/s of what arrived, loss for UDP (TCP_/UDP_STREAM)\n"
		"    rr      closed loop: --conns C connections, --outstanding N requests in flight on\n"
		"            each (default 1 and 1): transactions/s and latency (TCP_RR / UDP_RR)\n"
		"    crr     connect, one request and reply, close, repeated (TCP_CRR; tcp, uring:tcp)\n"
		"  --wait spin|block  rr: spin between replies (default) or block in the driver after\n"
		"            a few empty rounds (like a blocking client; for --conns 1)\n"
		"  --metrics IP:PORT serves Prometheus metrics there (docs/observing.md).\n"
		"  SPEC is a client config string, e.g. udp:connect=10.0.0.2:9000,\n"
		"  tcp:connect=10.0.0.2:9000, uring:udp:connect=10.0.0.2:9000. Drivers here:\n");
	rf_io_print_usage(f);
}

static int fail(const char *msg)
{
	fprintf(stderr, "ringflow-loadgen: %s\n", msg);
	return 2;
}

/* The target, checked before a sweep: the spec must send (connect=IP:PORT), and a port that
 * refuses (TCP RST, or UDP answered by ICMP port unreachable: ECONNREFUSED on a connected
 * socket) is named now rather than measured as 100 % loss. Anything else (no answer, another
 * namespace, a driver that bypasses the kernel) goes on to the sweep. Returns false with one
 * line in err. */
static bool target_ok(const char *backend, bool probe, char *err, size_t len)
{
	struct rf_io_config cfg;
	struct sockaddr_storage ss;
	socklen_t sl;
	if (rf_io_config_parse(backend, &cfg, err, len) < 0)
		return false;
	if (!rf_io_config_get(&cfg, "connect")) {
		snprintf(err, len, "--backend %s: the load generator sends to a server: give "
			 "connect=IP:PORT (a listen= spec only receives)", backend);
		return false;
	}
	if (rf_io_config_get_addr(&cfg, "connect", &ss, &sl, err, len) < 0)
		return false;
	bool tcp = !strcmp(cfg.driver, "tcp") || !strcmp(cfg.transport, "tcp");
	if (!probe ||
	    (strcmp(cfg.driver, "udp") && strcmp(cfg.driver, "tcp") && strcmp(cfg.driver, "uring")))
		return true; /* frames past the kernel (xdp, dpdk): a kernel socket proves nothing */
	int fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	bool refused = false;
	if (fd >= 0 && connect(fd, (struct sockaddr *)&ss, sl) != 0) {
		refused = errno == ECONNREFUSED;
	} else if (fd >= 0 && !tcp) {
		char b[64];
		send(fd, "ringflow-loadgen probe", 22, MSG_NOSIGNAL);
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		poll(&pf, 1, 300);
		refused = recv(fd, b, sizeof(b), MSG_DONTWAIT) < 0 && errno == ECONNREFUSED;
	}
	if (fd >= 0)
		close(fd);
	if (refused)
		snprintf(err, len, "--backend %s: the port refuses (nothing listens there): start "
			 "the echo server first, or check the address", backend);
	return !refused;
}

static bool parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= lo) || !(v <= hi))
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	const char *backend = NULL, *label = NULL, *rates_s = "20k,100k,200k,400k,800k,1.6M", *cores = NULL;
	double warmup = 1.0, duration = 5.0;
	unsigned size = 100, burst = 32, drain_ms = 200, pool_n = 8192;
	bool json = false;
	char err[512];
	int mode = RF_LG_MODE_ECHO;
	unsigned outstanding = 1, conns = 1;
	bool block = false;
	static const struct option lo[] = {
		{"backend", required_argument, 0, 'b'}, {"rates", required_argument, 0, 'r'},
		{"size", required_argument, 0, 's'},    {"warmup", required_argument, 0, 'w'},
		{"duration", required_argument, 0, 'd'}, {"json", no_argument, 0, 'j'},
		{"cores", required_argument, 0, 'c'},   {"burst", required_argument, 0, 'B'},
		{"drain-ms", required_argument, 0, 'D'}, {"pool", required_argument, 0, 'P'},
		{"label", required_argument, 0, 'L'},   {"help", no_argument, 0, 'h'},
		{"mode", required_argument, 0, 'm'},    {"outstanding", required_argument, 0, 'O'},
		{"conns", required_argument, 0, 'C'},   {"wait", required_argument, 0, 'W'},
		{"metrics", required_argument, 0, 'M'}, {0, 0, 0, 0}};
	const char *metrics = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "b:r:s:w:d:jc:B:D:P:L:hm:O:C:W:M:", lo, NULL)) != -1) {
		char *end = NULL;
		unsigned long v = 0;
		if (optarg && strchr("sDOC", c)) { /* decimal only; a bad value fails the range */
			uint64_t x;
			v = rf_opt_u64(NULL, optarg, 0, UINT_MAX, &x, NULL, 0) == 0 ? (unsigned long)x : 0;
		}
		(void)end;
		switch (c) {
		case 'b': backend = optarg; break;
		case 'r': rates_s = optarg; break;
		case 'L': label = optarg; break;
		case 'M':
			if (rf_opt_metrics("--metrics", optarg, err, sizeof(err)))
				return fail(err);
			metrics = optarg;
			break;
		case 'c':
			if (rf_opt_cores("--cores", optarg, err, sizeof(err)))
				return fail(err);
			cores = optarg;
			break;
		case 'j': json = true; break;
		case 'w':
			if (!parse_seconds(optarg, 0, 600, &warmup))
				return fail("--warmup: give seconds in 0..600, e.g. --warmup 1");
			break;
		case 'd':
			if (!parse_seconds(optarg, 0.01, 3600, &duration))
				return fail("--duration: give seconds in 0.01..3600, e.g. --duration 5");
			break;
		case 's':
			if (v < RF_LG_HDR_SIZE || v > RF_LG_MAX_SIZE)
				return fail("--size: give bytes in 24..1400 (a message carries a 24-byte header)");
			size = (unsigned)v;
			break;
		case 'B':
			if (rf_opt_uint("--burst", optarg, 1, RF_IO_MAX_BURST, &burst, err, sizeof(err)))
				return fail(err);
			break;
		case 'D':
			if (v < 1 || v > 10000)
				return fail("--drain-ms: give 1..10000 ms to wait for late replies");
			drain_ms = (unsigned)v;
			break;
		case 'P':
			if (rf_opt_uint("--pool", optarg, 1024, 1u << 20, &pool_n, err, sizeof(err)))
				return fail(err);
			break;
		case 'm':
			if ((mode = rf_lg_mode_parse(optarg)) < 0)
				return fail("--mode: give echo, stream, rr or crr");
			break;
		case 'O':
			if (v < 1 || v > RF_LG_MAX_OUTSTANDING)
				return fail("--outstanding: give 1..256 requests in flight per connection");
			outstanding = (unsigned)v;
			break;
		case 'C':
			if (v < 1 || v > RF_LG_MAX_CONNS)
				return fail("--conns: give 1..64 connections");
			conns = (unsigned)v;
			break;
		case 'W':
			if (strcmp(optarg, "spin") && strcmp(optarg, "block"))
				return fail("--wait: give spin or block");
			block = optarg[0] == 'b';
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return fail("unexpected argument: options only (see --help)");
	if (!backend)
		return fail("--backend is required, e.g. --backend udp:connect=10.0.0.2:9000 (see --help)");
	/* the probe only in the echo mode: the others' servers count connections and bytes */
	if (!target_ok(backend, mode == RF_LG_MODE_ECHO, err, sizeof(err)))
		return fail(err);

	double rates[MAX_RATES];
	unsigned nrates = 0;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", rates_s);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (nrates == MAX_RATES || rf_lg_parse_rate(tok, &rates[nrates]) < 0) {
			snprintf(err, sizeof(err), "--rates: '%s' is not a rate list of at most %d "
				 "(msg/s with k or M, e.g. 20k,100k,1.6M)", rates_s, MAX_RATES);
			return fail(err);
		}
		nrates++;
	}
	if (nrates == 0)
		return fail("--rates: empty list; give e.g. --rates 20k,100k");

	int rx_cpu = -1; /* >= 0: the receiver runs on its own thread there */
	if (cores) {
		int cpus[4];
		int n = rf_cpulist_parse(cores, cpus, 4, err, sizeof(err));
		if (n < 0)
			return fail(err);
		if (n > 2)
			return fail("--cores: give one CPU (sender and receiver in one loop) or two "
				    "(sender, receiver), e.g. --cores 0,1");
		if (n == 2)
			rx_cpu = cpus[1];
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpus[0], &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			snprintf(err, sizeof(err), "--cores %s: cannot pin to CPU %d: %s (is it online "
				 "and in this process's cpuset?)", cores, cpus[0], strerror(errno));
			return fail(err);
		}
	}

	if (mode != RF_LG_MODE_ECHO) {
		if (rx_cpu >= 0)
			return fail("--cores TX,RX: only --mode echo splits sender and receiver; give one CPU");
		if (metrics)
			return fail("--metrics: only --mode echo serves metrics (the other modes run one point)");
		/* Bounds in count as well as time: 2M transactions/s is far above this machine, and
		 * at most 2^26 (rr's duplicate bitmap then takes 8 MiB). */
		uint64_t max_msgs = (uint64_t)(duration * 2e6) + 1000;
		if (max_msgs > (1ull << 26))
			max_msgs = 1ull << 26;
		struct rf_lg_modes_cli mc = {
			.mode = (enum rf_lg_mode)mode, .backend = backend, .label = label,
			.o = {.warmup_s = warmup, .duration_s = duration, .size = size, .burst = burst,
			      .outstanding = outstanding, .drain_ms = drain_ms, .block = block,
			      .max_msgs = mode == RF_LG_MODE_STREAM ? 0 : max_msgs, .point = 1},
			.conns = conns, .pool_n = pool_n, .json = json};
		return rf_lg_modes_main(&mc);
	}
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("loadgen", pool_n, 2048, 256,
							    RF_MEMPOOL_QUIET);
	if (!pool) {
		snprintf(err, sizeof(err), "cannot create a pool of %u packet buffers: %s (try a "
			 "smaller --pool)", pool_n, strerror(errno));
		return fail(err);
	}
	struct rf_io_dev *dev = rf_io_open(backend, pool, err, sizeof(err));
	if (!dev) {
		rf_pktbuf_pool_free(pool);
		return fail(err);
	}
	if (rx_cpu >= 0 && !(rf_io_caps(dev) & RF_IO_CAP_SPLIT_RXTX)) {
		snprintf(err, sizeof(err), "--cores %s: the %s driver cannot receive and send on two "
			 "threads at once; give one CPU (sender and receiver in one loop), or use a "
			 "udp: backend", cores, rf_io_driver_name(dev));
		rf_io_close(dev);
		rf_pktbuf_pool_free(pool);
		return fail(err);
	}
	double max_rate = 0;
	for (unsigned i = 0; i < nrates; i++)
		if (rates[i] > max_rate)
			max_rate = rates[i];
	struct rf_lg_track track;
	struct rf_hist *hist = malloc(sizeof(*hist));
	if (!hist || rf_lg_track_init(&track, (uint64_t)(max_rate * duration) + 16) < 0) {
		free(hist);
		rf_io_close(dev);
		rf_pktbuf_pool_free(pool);
		return fail("out of memory for the reply tracker (shorter --duration or lower rates)");
	}

	/* The control socket and --metrics (docs/observing.md): the device and the pool. */
	struct rf_stats *reg = rf_stats_create("loadgen");
	struct rf_ctl *ctl = NULL;
	if (reg) {
		rf_stats_add_dev(reg, "loadgen0", dev);
		rf_stats_add_pool(reg, "loadgen", pool);
		ctl = rf_ctl_start(&(struct rf_ctl_config){.stats = reg, .metrics = metrics}, err,
				   sizeof(err));
		if (!ctl && metrics) {
			rf_stats_destroy(reg);
			rf_lg_track_free(&track);
			free(hist);
			rf_io_close(dev);
			rf_pktbuf_pool_free(pool);
			return fail(err);
		}
		if (!ctl)
			fprintf(stderr, "ringflow-loadgen: %s\n", err);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (!json)
		rf_lg_table_header(stdout);
	int rc = 0;
	for (unsigned i = 0; i < nrates && !stop_asked; i++) {
		struct rf_lg_opts o = {.rate = rates[i], .warmup_s = warmup, .duration_s = duration,
				       .size = size, .burst = burst, .drain_ms = drain_ms,
				       .point = (uint16_t)(i + 1)};
		struct rf_lg_point p = {.backend = label ? label : backend, .rtt = hist};
		fprintf(stderr, "loadgen: [%u/%u] %s at %.0f msg/s: %.1f s warm-up + %.1f s ...\n",
			i + 1, nrates, backend, rates[i], warmup, duration);
		int r = rx_cpu >= 0 ? rf_lg_run_point_split(dev, pool, &o, &track, &p, rx_cpu)
				    : rf_lg_run_point(dev, pool, &o, &track, &p);
		if (r < 0) {
			fprintf(stderr, "ringflow-loadgen: point %.0f msg/s failed: %s\n", rates[i],
				strerror(-r));
			rc = 1;
			break;
		}
		fprintf(stderr, "loadgen: [%u/%u] done: sent %llu, received %llu (%.2f%%)%s\n", i + 1,
			nrates, (unsigned long long)p.sent, (unsigned long long)p.received,
			p.sent ? 100.0 * (double)p.received / (double)p.sent : 0.0,
			rf_lg_saturated(p.offered, p.sent, p.received) ? ", saturated" : "");
		if (json)
			rf_lg_json(stdout, &p);
		else
			rf_lg_table_row(stdout, &p);
		fflush(stdout);
	}
	struct rf_io_stats st = {0};
	rf_io_stats_get(dev, &st);
	if (st.rx_drops || st.tx_drops || st.rx_nobuf)
		fprintf(stderr, "loadgen: driver counters: rx_drops %llu, tx_drops %llu, rx_nobuf %llu\n",
			(unsigned long long)st.rx_drops, (unsigned long long)st.tx_drops,
			(unsigned long long)st.rx_nobuf);
	rf_ctl_stop(ctl);
	rf_stats_destroy(reg);
	rf_lg_track_free(&track);
	free(hist);
	rf_io_close(dev);
	rf_pktbuf_pool_free(pool);
	return stop_asked ? 130 : rc;
}
