/*
 * apps/echo/echo.c: ringflow-echo, the reflector. Every message received goes back out,
 * unchanged, through the same backend: rx_burst then tx_burst of the same buffers (the
 * driver put the sender's address or connection id in each buffer, so nothing needs
 * rewriting). One poller per --cores entry, each on its own queue of the device (for UDP
 * sockets that is one SO_REUSEPORT socket per poller). Built only on the public headers.
 *
 *   ringflow-echo --backend udp:listen=0.0.0.0:9000 --cores 1 --idle busy
 *
 * With --sink it echoes nothing: it is the far end of ringflow-loadgen --mode stream, counting
 * what arrives and answering the loadgen's report request (lg_sink.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/ctl.h>
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#include "lg_sink.h"

struct echo_queue {
	struct rf_io_dev *dev;
	unsigned queue, burst;
};

/* One round: receive a burst, send it back; what the driver cannot take now is dropped. */
static unsigned echo_poll(struct rf_poller *p, void *arg)
{
	struct echo_queue *eq = arg;
	struct rf_pktbuf *pkts[RF_IO_MAX_BURST];
	unsigned n = rf_io_rx_burst(eq->dev, eq->queue, pkts, eq->burst);
	if (n == 0)
		return 0;
	struct rf_core_counters *c = rf_poller_counters(p);
	rf_counter_add(&c->rx, n);
	unsigned sent = rf_io_tx_burst(eq->dev, eq->queue, pkts, n);
	if (sent < n) {
		/* One retry: a socket buffer that was full a microsecond ago often has room. */
		sent += rf_io_tx_burst(eq->dev, eq->queue, pkts + sent, n - sent);
	}
	rf_counter_add(&c->tx, sent);
	if (sent < n) {
		rf_pktbuf_free_bulk(pkts + sent, n - sent);
		rf_counter_add(&c->drop_driver, n - sent);
	}
	return n;
}

/* ctl command "peers": the device's connections (tcp; udp keeps no peer list). */
static int echo_peers(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	struct rf_io_stats st;
	rf_io_stats_get(arg, &st);
	rf_buf_printf(out, "{\"driver\":\"%s\",\"conns_open\":%llu,\"conns_total\":%llu}",
		      rf_io_driver_name(arg), (unsigned long long)st.conns_open,
		      (unsigned long long)st.conns_total);
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-echo --backend SPEC [--cores LIST] [--idle busy|adaptive]\n"
		"                     [--stats-interval S] [--burst N] [--buffers N] [--json]\n"
		"Reflects every message back to its sender through the same backend; prints the\n"
		"final counters on SIGINT/SIGTERM.\n"
		"  --backend SPEC        driver config string (docs/config.md), e.g. udp:listen=0.0.0.0:9000\n"
		"  --cores LIST          CPUs for the pollers, one device queue each: 0,1 or 0-3 or 0x3 (default 0)\n"
		"  --idle busy|adaptive  busy: spin with pause; adaptive: block after idle rounds (default)\n"
		"  --stats-interval S    print a stats line every S seconds (default 0: off)\n"
		"  --burst N             messages per rx/tx burst, 1..%d (default 32)\n"
		"  --buffers N           packet buffers in the pool, 256..16777216 (default 16384)\n"
		"  --json                final counters as one JSON object\n"
		"  --sink                receive only (ringflow-loadgen --mode stream's far end): count\n"
		"                        and checksum what arrives, answer the loadgen's report request\n"
		"  --sink-check          as --sink, and verify every message's payload pattern\n"
		"  --metrics IP:PORT     serve Prometheus metrics there (docs/observing.md)\n"
		"Backends here:\n",
		RF_IO_MAX_BURST);
	rf_io_print_usage(out);
}

/* A bad option value: the shared parser's line (runtime.h, rf_opt_*), exit status 2. */
static int bad_opt(const char *err)
{
	fprintf(stderr, "ringflow-echo: %s\n", err);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"backend", required_argument, NULL, 'b'}, {"cores", required_argument, NULL, 'c'},
		{"idle", required_argument, NULL, 'i'},    {"stats-interval", required_argument, NULL, 's'},
		{"burst", required_argument, NULL, 'n'},   {"buffers", required_argument, NULL, 'B'},
		{"json", no_argument, NULL, 'j'},          {"help", no_argument, NULL, 'h'},
		{"sink", no_argument, NULL, 'K'},          {"sink-check", no_argument, NULL, 'X'},
		{"metrics", required_argument, NULL, 'M'},
		{NULL, 0, NULL, 0}};
	const char *spec = NULL;
	char err[512];
	struct rf_runtime_config rc = {.cores = "0", .idle = RF_IDLE_ADAPTIVE};
	unsigned burst = 32, nbufs = 16384;
	bool json = false;
	int sink = 0; /* 1: --sink, 2: --sink-check */
	const char *metrics = NULL;
	int o;
	while ((o = getopt_long(argc, argv, "b:c:i:s:n:B:jhKXM:", opts, NULL)) != -1) {
		switch (o) {
		case 'b': spec = optarg; break;
		case 'c':
			if (rf_opt_cores("--cores", optarg, err, sizeof(err)))
				return bad_opt(err);
			rc.cores = optarg;
			break;
		case 'i':
			if (rf_idle_parse(optarg, &rc.idle) != 0) {
				fprintf(stderr, "ringflow-echo: --idle %s: use busy or adaptive\n", optarg);
				return 2;
			}
			break;
		case 's': {
			char *end;
			rc.stats_interval_s = strtod(optarg, &end);
			if (*end || rc.stats_interval_s < 0) {
				fprintf(stderr, "ringflow-echo: --stats-interval %s: seconds >= 0\n", optarg);
				return 2;
			}
			break;
		}
		case 'n':
			if (rf_opt_uint("--burst", optarg, 1, RF_IO_MAX_BURST, &burst, err, sizeof(err)))
				return bad_opt(err);
			break;
		case 'B':
			/* at least one per-core cache (256, below) of buffers, or the pool is refused */
			if (rf_opt_uint("--buffers", optarg, 256, 1u << 24, &nbufs, err, sizeof(err)))
				return bad_opt(err);
			break;
		case 'j': json = true; break;
		case 'K': sink = sink ? sink : 1; break;
		case 'X': sink = 2; break;
		case 'M':
			if (rf_opt_metrics("--metrics", optarg, err, sizeof(err)))
				return bad_opt(err);
			metrics = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "ringflow-echo: bad arguments: see ringflow-echo --help\n");
			return 2;
		}
	}
	if (!spec || optind != argc) {
		fprintf(stderr, "ringflow-echo: %s: see ringflow-echo --help\n",
			!spec ? "--backend SPEC is required (e.g. --backend udp:listen=0.0.0.0:9000)"
			      : "unexpected argument");
		return 2;
	}

	struct rf_runtime *rt = rf_runtime_create(&rc, err, sizeof(err));
	if (!rt) {
		fprintf(stderr, "ringflow-echo: %s\n", err);
		return 1;
	}
	unsigned nq = rf_runtime_ncores(rt);
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("echo", nbufs, 2048, 256, RF_MEMPOOL_QUIET);
	if (!pool) {
		fprintf(stderr, "ringflow-echo: cannot create %u packet buffers: %s: try fewer --buffers\n",
			nbufs, strerror(errno));
		rf_runtime_destroy(rt);
		return 1;
	}
	struct rf_io_dev *dev = rf_io_open_queues(spec, pool, nq, err, sizeof(err));
	if (!dev) {
		fprintf(stderr, "ringflow-echo: %s\n", err);
		rf_pktbuf_pool_free(pool);
		rf_runtime_destroy(rt);
		return 1;
	}
	struct echo_queue eq[RF_RUNTIME_MAX_CORES];
	static struct rf_lg_sink_queue sq[RF_RUNTIME_MAX_CORES];
	int status = 0;
	for (unsigned i = 0; i < nq; i++) {
		eq[i] = (struct echo_queue){dev, i, burst};
		sq[i] = (struct rf_lg_sink_queue){.dev = dev, .queue = i, .burst = burst,
						  .sink = {.check = sink == 2}};
		int r = sink ? rf_runtime_add_poll_io(rt, i, rf_lg_sink_poll, &sq[i], dev, i)
			     : rf_runtime_add_poll_io(rt, i, echo_poll, &eq[i], dev, i);
		if (r) {
			fprintf(stderr, "ringflow-echo: cannot add poller %u: %s\n", i, strerror(-r));
			status = 1;
		}
	}
	if (!status && rf_runtime_handle_signals(rt) != 0)
		status = 1;
	int r = status ? 0 : rf_runtime_start(rt);
	if (r) {
		fprintf(stderr, "ringflow-echo: cannot start the pollers: %s\n", strerror(-r));
		status = 1;
	}
	/* The control socket and --metrics (docs/observing.md), served by their own thread. */
	struct rf_ctl *ctl = NULL;
	if (!status) {
		const char *dev_name = "echo0";
		ctl = rf_ctl_start_app(&(struct rf_ctl_app){.app = "echo", .metrics = metrics,
							    .rt = rt, .devs = &dev,
							    .dev_names = &dev_name, .ndevs = 1,
							    .pool = pool},
				       err, sizeof(err));
		if (!ctl)
			fprintf(stderr, "ringflow-echo: %s\n", err);
		if (!ctl && metrics)
			status = 1;
		if (ctl)
			rf_ctl_register(ctl, "peers", "connections of the device", echo_peers, dev);
	}
	if (status)
		rf_runtime_stop(rt);
	if (!status) {
		fprintf(stderr, "ringflow-echo: %s on %u core(s), %s idle%s; Ctrl-C stops\n", spec, nq,
			rc.idle == RF_IDLE_BUSY ? "busy" : "adaptive",
			sink == 2 ? ", sink (checking payloads)" : sink ? ", sink" : "");
		rf_runtime_wait(rt);
		rf_runtime_join(rt);
		rf_ctl_stop(ctl);
		ctl = NULL;
		struct rf_io_stats st;
		rf_io_stats_get(dev, &st);
		if (json) {
			rf_runtime_stats_json(rt, stdout);
		} else {
			char line[1024];
			rf_runtime_stats_line(rt, line, sizeof(line));
			printf("ringflow-echo: %s\n", line);
		}
		printf("ringflow-echo: driver %s rx %llu tx %llu rx_nobuf %llu rx_drops %llu "
		       "tx_drops %llu conns %llu\n", rf_io_driver_name(dev),
		       (unsigned long long)st.rx_pkts, (unsigned long long)st.tx_pkts,
		       (unsigned long long)st.rx_nobuf, (unsigned long long)st.rx_drops,
		       (unsigned long long)st.tx_drops, (unsigned long long)st.conns_total);
		for (unsigned i = 0; sink && i < nq; i++)
			printf("ringflow-echo: sink queue %u: messages %llu, reports %llu, last point "
			       "%u: measured %llu msgs %llu bytes, corrupt %llu\n", i,
			       (unsigned long long)sq[i].sink.total_msgs,
			       (unsigned long long)sq[i].sink.reports, sq[i].sink.r.point,
			       (unsigned long long)sq[i].sink.r.msgs,
			       (unsigned long long)sq[i].sink.r.bytes,
			       (unsigned long long)sq[i].sink.r.corrupt);
		fflush(stdout);
	}
	rf_ctl_stop(ctl);
	rf_runtime_destroy(rt);
	rf_io_close(dev);
	rf_pktbuf_pool_free(pool);
	return status;
}
