/*
 * apps/l2fwd/l2fwd.c: ringflow-l2fwd, the two-port forwarder (like DPDK's l2fwd). Ports are
 * paired 0<->1, 2<->3, ...; every frame received on a port goes out of its pair, unchanged
 * (or with the MACs rewritten, --mac-rewrite). One forwarding unit per rx (port, queue);
 * each unit runs on one poller and transmits on the paired port's queue (same number, modulo
 * its queue count). Built only on the public headers.
 *
 *   ringflow-l2fwd --port packet:dev=veth1,frames=1 --port packet:dev=veth2,frames=1 --cores 1
 *   ringflow-l2fwd --port dpdk:dev=0000:03:00.0,frames=1 --port dpdk:dev=0000:03:00.1,frames=1 \
 *       --cores 1 -- -l 1 -a 0000:03:00.0 -a 0000:03:00.1      (after --: the EAL's arguments)
 *
 * Which poller runs which unit: a tx queue is used by one thread, so units that send on the
 * same queue share a poller; and a port whose driver lacks RF_IO_CAP_SPLIT_RXTX may not
 * receive on a queue on one thread while another sends on it, so there the unit receiving on
 * queue q shares a poller with the units sending on q. The groups go round-robin to --cores.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/ctl.h>
#include <ringflow/io.h>
#include <ringflow/offload.h>
#include <ringflow/pktbuf.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#include "l2fwd.h"

static unsigned fwd_poll(struct rf_poller *p, void *arg)
{
	struct l2f_unit *u = arg;
	struct rf_pktbuf *pkts[RF_IO_MAX_BURST];
	unsigned n = rf_io_rx_burst(u->in, u->rxq, pkts, u->burst);
	(void)p;
	if (n == 0)
		return 0;
	if (u->mac_rewrite)
		for (unsigned i = 0; i < n; i++) {
			uint8_t *eth = rf_pktbuf_data(pkts[i]);
			memcpy(eth, u->dst, 6);
			memcpy(eth + 6, u->src, 6);
		}
	unsigned sent = rf_io_tx_burst(u->out, u->txq, pkts, n);
	if (sent < n) /* one retry: a ring that was full a moment ago often has room */
		sent += rf_io_tx_burst(u->out, u->txq, pkts + sent, n - sent);
	if (sent < n)
		rf_pktbuf_free_bulk(pkts + sent, n - sent);
	rf_counter_add(&u->rx, n);
	rf_counter_add(&u->sent, sent);
	rf_counter_add(&u->dropped, n - sent);
	return n;
}

/* Control-socket command "ports": each port's forwarding sums (docs/observing.md). */
static int ports_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	const struct l2f *f = arg;
	rf_buf_printf(out, "[");
	for (unsigned i = 0; i < f->nports; i++) {
		uint64_t rx, sent, dropped;
		l2f_port_sums(f, i, &rx, &sent, &dropped);
		rf_buf_printf(out, "%s{\"port\":%u,\"spec\":", i ? "," : "", i);
		rf_json_str(out, rf_io_spec(f->ports[i]));
		uint64_t off, fb;
		l2f_offload_sums(f, i, &off, &fb);
		rf_buf_printf(out, ",\"pair\":%u,\"rx\":%llu,\"tx\":%llu,\"drops\":%llu,"
			      "\"offloaded\":%llu,\"offload_fallback\":%llu}", i ^ 1u,
			      (unsigned long long)rx, (unsigned long long)sent,
			      (unsigned long long)dropped, (unsigned long long)off,
			      (unsigned long long)fb);
	}
	rf_buf_printf(out, "]");
	return 0;
}

/* --offload: one port-wide entry per port with a fast path (see the file comment). */
static void offload_ports(struct l2f *f, bool mac_rewrite)
{
	char why[512];
	for (unsigned i = 0; i < f->nports; i++) {
		struct rf_offload_action a[3] = {0};
		struct rf_offload_match all = {.fields = 0}; /* every frame of the port */
		unsigned n = 0, o = i ^ 1u;
		int rc;
		if (rf_offload_supported(f->ports[i], why, sizeof(why)) != 0) {
			fprintf(stderr, "ringflow-l2fwd: port %u: %s\n", i, why);
			continue;
		}
		if (mac_rewrite) {
			const struct l2f_unit *u = NULL;
			for (unsigned k = 0; k < f->nunits && !u; k++)
				if (f->units[k].in_port == i)
					u = &f->units[k];
			a[n].type = RF_OFFLOAD_SET_ETH_SRC;
			memcpy(a[n++].mac, u->src, 6);
			a[n].type = RF_OFFLOAD_SET_ETH_DST;
			memcpy(a[n++].mac, u->dst, 6);
		}
		a[n].type = RF_OFFLOAD_OUTPUT;
		a[n++].port = f->ports[o];
		rc = rf_offload_add(f->ports[i], &all, a, n);
		if (rc != 0) {
			if (rc == -EINVAL)
				fprintf(stderr, "ringflow-l2fwd: port %u: no offload: its pair, port %u, "
					"has no XDP fast path to send through (open both as xdp); "
					"forwarding it in userspace\n", i, o);
			else
				fprintf(stderr, "ringflow-l2fwd: port %u: offload entry refused: %s; "
					"forwarding it in userspace\n", i, strerror(-rc));
			continue;
		}
		f->offloaded[i] = true;
	}
}

/* Timer (service thread): tell the offload tables each port's link state, so the entries
 * sending to a port that went down stop and its frames come to userspace (counted). */
static void offload_links(void *arg)
{
	struct l2f *f = arg;
	for (unsigned i = 0; i < f->nports; i++)
		if (f->offloaded[i ^ 1u])
			rf_offload_link_sync(f->ports[i]);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-l2fwd --port SPEC --port SPEC [--port SPEC ...] [--cores LIST]\n"
		"                      [--mac-rewrite] [--stats S] [--json] [--idle busy|adaptive]\n"
		"                      [--burst N] [--buffers N] [-- DPDK-EAL-ARGS...]\n"
		"Forwards every frame between paired ports (0<->1, 2<->3, ...); prints per-direction\n"
		"totals on SIGINT/SIGTERM.\n"
		"  --port SPEC           a device in frame mode (docs/config.md), e.g.\n"
		"                        packet:dev=veth1,frames=1  xdp:dev=veth1,mode=skb,frames=1\n"
		"                        dpdk:vdev=net_af_packet0,iface=veth1,frames=1 (queues=K: K rx queues)\n"
		"  --cores LIST          CPUs for the pollers: 0,1 or 0-3 or 0x3 (default 0)\n"
		"  --offload             forward in the kernel (XDP) where a port allows it (xdp ports):\n"
		"                        userspace sees only what the kernel leaves to it\n"
		"  --mac-rewrite         set the source MAC to the output port's, the destination to\n"
		"                        02:00:00:00:00:<output port> (as DPDK l2fwd)\n"
		"  --stats S             per-port rx/tx/drop rates on stderr every S seconds (default 0: off)\n"
		"  --json                stats (stderr) and totals (stdout) as JSON lines\n"
		"  --idle busy|adaptive  busy: spin; adaptive: block after idle rounds (default)\n"
		"  --burst N             frames per burst, 1..%d (default 32)\n"
		"  --buffers N           packet buffers in the pool (default 8192)\n"
		"  --metrics IP:PORT     serve Prometheus metrics there (docs/observing.md)\n"
		"  -- ARGS...            the DPDK EAL's arguments for dpdk ports (e.g. -l 1 -a 0000:03:00.0);\n"
		"                        without them the dpdk driver starts the EAL with its defaults\n"
		"Drivers here:\n",
		RF_IO_MAX_BURST);
	rf_io_print_usage(out);
}

/* A bad option value: the shared parser's line (runtime.h, rf_opt_*), exit status 2. */
static int bad_opt(const char *err)
{
	fprintf(stderr, "ringflow-l2fwd: %s\n", err);
	return 2;
}

/* ---- placing units on pollers (see the file comment) ----------------------------------- */

static unsigned find(unsigned *parent, unsigned i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

static void unite(unsigned *parent, unsigned a, unsigned b)
{
	parent[find(parent, a)] = find(parent, b);
}

/* Assign u->core for every unit; -1 with a message when a poller would get too many. */
static int place_units(struct l2f *f, unsigned ncores)
{
	unsigned parent[L2F_MAX_UNITS], load[RF_RUNTIME_MAX_CORES] = {0}, next = 0;
	int group_core[L2F_MAX_UNITS];
	for (unsigned i = 0; i < f->nunits; i++) {
		parent[i] = i;
		group_core[i] = -1;
	}
	for (unsigned i = 0; i < f->nunits; i++)
		for (unsigned j = 0; j < f->nunits; j++) {
			struct l2f_unit *a = &f->units[i], *b = &f->units[j];
			if (a->out_port == b->out_port && a->txq == b->txq)
				unite(parent, i, j); /* same tx queue */
			if (a->in_port == b->out_port && a->rxq == b->txq &&
			    !(rf_io_caps(a->in) & RF_IO_CAP_SPLIT_RXTX))
				unite(parent, i, j); /* rx and tx of one queue, no split allowed */
		}
	for (unsigned i = 0; i < f->nunits; i++) {
		unsigned g = find(parent, i);
		if (group_core[g] < 0)
			group_core[g] = (int)(next++ % ncores);
		f->units[i].core = group_core[g];
		if (++load[group_core[g]] > RF_RUNTIME_MAX_POLLS) {
			fprintf(stderr, "ringflow-l2fwd: more than %d forwarding units on one core: give "
				"more --cores or fewer queues\n", RF_RUNTIME_MAX_POLLS);
			return -1;
		}
	}
	if (next < ncores)
		fprintf(stderr, "ringflow-l2fwd: %u of %u cores have work (units that share a queue "
			"share a core)\n", next, ncores);
	return 0;
}

/* Open the ports and build the units; -1 after printing one line. */
static int open_ports(struct l2f *f, const char **specs, struct rf_pktbuf_pool *pool,
		      bool mac_rewrite, unsigned burst)
{
	char err[512];
	for (unsigned i = 0; i < f->nports; i++) {
		f->ports[i] = rf_io_open(specs[i], pool, err, sizeof(err));
		if (!f->ports[i]) {
			fprintf(stderr, "ringflow-l2fwd: port %u: %s\n", i, err);
			return -1;
		}
		if (!rf_io_frame_mode(f->ports[i])) {
			fprintf(stderr, "ringflow-l2fwd: port %u (%s) is not in frame mode: add frames=1 "
				"(drivers with frame mode: xdp, dpdk, packet)\n", i, specs[i]);
			return -1;
		}
	}
	for (unsigned i = 0; i < f->nports; i++) {
		unsigned o = i ^ 1u, nq = rf_io_nqueues(f->ports[i]);
		for (unsigned q = 0; q < nq; q++) {
			if (f->nunits == L2F_MAX_UNITS) {
				fprintf(stderr, "ringflow-l2fwd: more than %d rx queues in all\n", L2F_MAX_UNITS);
				return -1;
			}
			struct l2f_unit *u = &f->units[f->nunits++];
			u->in = f->ports[i];
			u->out = f->ports[o];
			u->in_port = i;
			u->out_port = o;
			u->rxq = q;
			u->txq = q % rf_io_nqueues(f->ports[o]);
			u->burst = burst;
			u->mac_rewrite = mac_rewrite;
			if (mac_rewrite) {
				if (rf_io_mac(u->out, u->src) != 0) {
					fprintf(stderr, "ringflow-l2fwd: --mac-rewrite: port %u has no MAC "
						"address\n", o);
					return -1;
				}
				memcpy(u->dst, (uint8_t[]){0x02, 0, 0, 0, 0, (uint8_t)o}, 6);
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'},  {"cores", required_argument, NULL, 'c'},
		{"mac-rewrite", no_argument, NULL, 'm'}, {"stats", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},        {"idle", required_argument, NULL, 'i'},
		{"burst", required_argument, NULL, 'n'}, {"buffers", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},        {"metrics", required_argument, NULL, 'M'},
		{"offload", no_argument, NULL, 'O'},     {NULL, 0, NULL, 0}};
	static struct l2f f; /* large: not on the stack */
	const char *specs[L2F_MAX_PORTS];
	char err[512];
	struct rf_runtime_config rc = {.cores = "0", .idle = RF_IDLE_ADAPTIVE};
	unsigned burst = 32, nbufs = 8192;
	bool mac_rewrite = false, offload = false;
	const char *metrics = NULL;
	int o;

	f.out = stderr;
	while ((o = getopt_long(argc, argv, "p:c:ms:ji:n:B:hM:O", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			if (f.nports == L2F_MAX_PORTS) {
				fprintf(stderr, "ringflow-l2fwd: at most %d --port\n", L2F_MAX_PORTS);
				return 2;
			}
			specs[f.nports++] = optarg;
			break;
		case 'c':
			if (rf_opt_cores("--cores", optarg, err, sizeof(err)))
				return bad_opt(err);
			rc.cores = optarg;
			break;
		case 'm': mac_rewrite = true; break;
		case 's': {
			char *end;
			f.interval_s = strtod(optarg, &end);
			if (!*optarg || *end || !(f.interval_s >= 0) || f.interval_s > 3600) {
				fprintf(stderr, "ringflow-l2fwd: --stats %s: seconds in 0..3600\n", optarg);
				return 2;
			}
			break;
		}
		case 'j': f.json = true; break;
		case 'i':
			if (rf_idle_parse(optarg, &rc.idle) != 0) {
				fprintf(stderr, "ringflow-l2fwd: --idle %s: use busy or adaptive\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (rf_opt_uint("--burst", optarg, 1, RF_IO_MAX_BURST, &burst, err, sizeof(err)))
				return bad_opt(err);
			break;
		case 'B':
			if (rf_opt_uint("--buffers", optarg, 256, 1u << 22, &nbufs, err, sizeof(err)))
				return bad_opt(err);
			break;
		case 'M':
			if (rf_opt_metrics("--metrics", optarg, err, sizeof(err)))
				return bad_opt(err);
			metrics = optarg;
			break;
		case 'O': offload = true; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "ringflow-l2fwd: bad arguments: see ringflow-l2fwd --help\n");
			return 2;
		}
	}
	/* getopt stops at "--": what follows is the EAL's command line (argv[0] is ours). */
	bool eal = optind < argc && strcmp(argv[optind - 1], "--") == 0;
	if ((optind != argc && !eal) || f.nports < 2 || f.nports % 2) {
		fprintf(stderr, "ringflow-l2fwd: %s: see ringflow-l2fwd --help\n",
			optind != argc && !eal ? "unexpected argument (EAL arguments go after --)"
					       : "give an even number of --port SPEC (pairs 0<->1, 2<->3, ...)");
		return 2;
	}

	int status = 1;
	struct rf_pktbuf_pool *pool = NULL;
	struct rf_ctl *ctl = NULL;
	/* The runtime first: it checks --cores against this thread's affinity, which the EAL
	 * changes (it pins the calling thread to its main lcore). */
	struct rf_runtime *rt = rf_runtime_create(&rc, err, sizeof(err));
	if (!rt) {
		fprintf(stderr, "ringflow-l2fwd: %s\n", err);
		return 1;
	}
	if (eal) {
		argv[optind - 1] = argv[0];
		int r = rf_io_driver_init("dpdk", argc - optind + 1, argv + optind - 1, err, sizeof(err));
		if (r) {
			fprintf(stderr, "ringflow-l2fwd: EAL arguments: %s\n",
				r == -ENODEV ? "the dpdk driver is not available here" : err);
			rf_runtime_destroy(rt);
			return 1;
		}
	}
	/* One pool for every port: xdp ports then share one UMEM, so a frame crosses without a
	 * copy (docs/dataplane-app.md says what each driver moves). */
	pool = rf_pktbuf_pool_create("l2fwd", nbufs, 2048, 256, RF_MEMPOOL_QUIET);
	if (!pool) {
		fprintf(stderr, "ringflow-l2fwd: cannot create %u packet buffers: %s: try fewer "
			"--buffers\n", nbufs, strerror(errno));
		goto out;
	}
	if (open_ports(&f, specs, pool, mac_rewrite, burst) || place_units(&f, rf_runtime_ncores(rt)))
		goto out;
	if (offload) {
		offload_ports(&f, mac_rewrite);
		if (rf_runtime_timer_add(rt, 100000000, 100000000, offload_links, &f) < 0) {
			fprintf(stderr, "ringflow-l2fwd: cannot start the link timer of --offload\n");
			goto out;
		}
	}
	for (unsigned i = 0; i < f.nunits; i++) {
		struct l2f_unit *u = &f.units[i];
		int r = rf_runtime_add_poll_io(rt, (unsigned)u->core, fwd_poll, u, u->in, u->rxq);
		if (r) {
			fprintf(stderr, "ringflow-l2fwd: cannot add unit %u to core %d: %s\n", i, u->core,
				strerror(-r));
			goto out;
		}
	}
	if (f.interval_s > 0 &&
	    rf_runtime_timer_add(rt, (uint64_t)(f.interval_s * 1e9), (uint64_t)(f.interval_s * 1e9),
				 l2f_stats_tick, &f) < 0) {
		fprintf(stderr, "ringflow-l2fwd: cannot start the stats timer\n");
		goto out;
	}
	int r = rf_runtime_handle_signals(rt);
	if (r == 0)
		r = rf_runtime_start(rt);
	if (r) {
		fprintf(stderr, "ringflow-l2fwd: cannot start the pollers: %s\n", strerror(-r));
		goto out;
	}
	for (unsigned i = 0; i < f.nports; i++) {
		uint8_t m[6] = {0};
		int up = rf_io_link_up(f.ports[i]);
		bool has_mac = rf_io_mac(f.ports[i], m) == 0;
		fprintf(stderr, "ringflow-l2fwd: port %u = %s: %u queue(s), MAC %02x:%02x:%02x:%02x:%02x:%02x%s, "
			"MTU %u, link %s\n", i, specs[i], rf_io_nqueues(f.ports[i]), m[0], m[1], m[2],
			m[3], m[4], m[5], has_mac ? "" : " (unknown)", rf_io_mtu(f.ports[i]),
			up == 1 ? "up" : up == 0 ? "down" : "unknown");
	}
	/* The control socket and --metrics, served by their own thread (docs/observing.md). */
	{
		char names[L2F_MAX_PORTS][16];
		const char *np[L2F_MAX_PORTS];
		for (unsigned i = 0; i < f.nports; i++) {
			snprintf(names[i], sizeof(names[i]), "port%u", i);
			np[i] = names[i];
		}
		ctl = rf_ctl_start_app(&(struct rf_ctl_app){.app = "l2fwd", .metrics = metrics,
							    .rt = rt, .devs = f.ports,
							    .dev_names = np, .ndevs = f.nports,
							    .pool = pool},
				       err, sizeof(err));
		if (!ctl)
			fprintf(stderr, "ringflow-l2fwd: %s\n", err);
		else
			rf_ctl_register(ctl, "ports", "forwarding sums per port", ports_cmd, &f);
	}
	if (!ctl && metrics) {
		rf_runtime_stop(rt);
		rf_runtime_join(rt);
		goto out;
	}
	fprintf(stderr, "ringflow-l2fwd: %u ports, %u units on %u core(s), %s idle; Ctrl-C stops\n",
		f.nports, f.nunits, rf_runtime_ncores(rt),
		rc.idle == RF_IDLE_BUSY ? "busy" : "adaptive");
	rf_runtime_wait(rt);
	rf_runtime_join(rt);
	status = l2f_print_totals(&f, f.json ? stdout : stderr);
out:
	rf_ctl_stop(ctl); /* before the runtime and the ports go (and the registry with it) */
	rf_runtime_destroy(rt);
	bool dpdk = eal;
	for (unsigned i = 0; i < f.nports; i++) {
		dpdk |= f.ports[i] && strcmp(rf_io_driver_name(f.ports[i]), "dpdk") == 0;
		rf_io_close(f.ports[i]);
	}
	rf_pktbuf_pool_free(pool);
	if (dpdk) /* the library installs no exit handler: release the EAL ourselves */
		rf_io_driver_fini("dpdk");
	return status;
}
