/*
 * apps/ofswitch/sw_main.c: ringflow-switch, an OpenFlow 1.3 switch on ringflow's frame
 * ports. Opens the ports (frame mode, one queue per core), starts one poller per core
 * (sw_dp.c) and the OpenFlow agent thread (sw_agent.c), and prints per-core counters at the
 * end.
 *
 *   ringflow-switch --port packet:dev=veth1,frames=1 --port packet:dev=veth2,frames=1 \
 *                   --controller tcp:127.0.0.1:6653
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <ringflow/ctl.h>
#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#include "sw.h"
#include "sw_pinrate.h"
#include "sw_offload.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-switch --port SPEC [--port SPEC ...] --controller tcp:IP:PORT\n"
		"                       [--controller ...] [--listen tcp:IP:PORT] [--dpid N]\n"
		"                       [--cores LIST] [--echo-interval S]\n"
		"                       [--fail-mode secure|standalone] [--idle busy|adaptive]\n"
		"                       [--packet-in-rate PPS[,BURST]] [--stats-interval S]\n"
		"                       [--offload] [--buffers N]\n"
		"An OpenFlow 1.3 switch: frames between the ports follow the flows a controller\n"
		"installs (no flow: dropped). OpenFlow port numbers are 1, 2, ... in --port order.\n"
		"  --port SPEC        a device in frame mode, e.g. packet:dev=veth1,frames=1\n"
		"  --controller URL   tcp:IPV4:PORT; repeat for up to 8 controllers, each connected\n"
		"                     on its own, reconnecting with backoff (0.25 s doubling to 8 s,\n"
		"                     with jitter); roles by ROLE_REQUEST (all start EQUAL)\n"
		"  --listen URL       tcp:IPV4:PORT: accept OpenFlow clients too (ovs-ofctl; up to 4;\n"
		"                     no PACKET_IN to them until they set a miss_send_len)\n"
		"  --echo-interval S  ECHO_REQUEST after S quiet seconds, drop after 3*S (default 5)\n"
		"  --fail-mode M      without a controller session: secure (default) keeps forwarding\n"
		"                     by the installed flows only; standalone also forwards what no\n"
		"                     flow matches by MAC learning\n"
		"  --dpid N           datapath id (decimal or 0x hex; default 1)\n"
		"  --cores LIST       CPUs for the pollers (default 0); each port gets one queue per core\n"
		"  --idle busy|adaptive (default adaptive)\n"
		"  --metrics IP:PORT  serve Prometheus metrics there (docs/observing.md)\n"
		"  --packet-in-rate PPS[,BURST]  at most PPS PACKET_INs a second to each connection,\n"
		"                     BURST at once (default PPS/4, as OVS); the rest is dropped and\n"
		"                     counted. 0 (the default, as OVS): no limit\n"
		"  --stats-interval S print flows, subtables and PACKET_IN counters every S seconds\n"
		"  --offload          xdp ports: decided microflows are forwarded by the kernel's\n"
		"                     XDP program (docs/switch.md, \"The XDP fast path\")\n"
		"  --buffers N        packet buffers in the pool every port shares (default 8192;\n"
		"                     the xdp driver sizes its rings from it: docs/backends.md)\n");
}

/* A bad option value: the shared parser's line (runtime.h, rf_opt_*), exit status 2. */
static int bad_opt(const char *err)
{
	fprintf(stderr, "ringflow-switch: %s\n", err);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"port", required_argument, NULL, 'p'}, {"controller", required_argument, NULL, 'C'},
		{"dpid", required_argument, NULL, 'd'}, {"listen", required_argument, NULL, 'L'},
		{"fail-mode", required_argument, NULL, 'F'}, {"cores", required_argument, NULL, 'c'},
		{"idle", required_argument, NULL, 'i'}, {"help", no_argument, NULL, 'h'},
		{"metrics", required_argument, NULL, 'M'},
		{"echo-interval", required_argument, NULL, 'E'}, {"offload", no_argument, NULL, 'O'},
		{"packet-in-rate", required_argument, NULL, 'R'},
		{"stats-interval", required_argument, NULL, 'S'}, {"buffers", required_argument, NULL, 'B'},
		{NULL, 0, NULL, 0}};
	bool offload = false;
	const char *metrics = NULL;
	char opt_err[200];
	struct sw_ctlcmd *ctlcmd = NULL;
	struct rf_ctl *ctl = NULL;
	static struct sw_dp dp; /* large: not on the stack */
	const char *specs[SW_MAX_PORTS];
	struct rf_runtime_config rc = {.cores = "0", .idle = RF_IDLE_ADAPTIVE};
	struct sw_agent_cfg ac = {.dpid = 1};
	unsigned nbufs = 8192; /* --buffers */
	int o;
	dp.agent_efd = -1;
	while ((o = getopt_long(argc, argv, "p:C:d:c:i:hL:F:M:E:R:S:B:", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			if (dp.nports == SW_MAX_PORTS) {
				fprintf(stderr, "ringflow-switch: at most %d --port\n", SW_MAX_PORTS);
				return 2;
			}
			specs[dp.nports++] = optarg;
			break;
		case 'C':
			if (ac.ncontrollers == SW_MAX_CONTROLLERS) {
				fprintf(stderr, "ringflow-switch: at most %d --controller\n",
					SW_MAX_CONTROLLERS);
				return 2;
			}
			ac.controllers[ac.ncontrollers++] = optarg;
			break;
		case 'E': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 3600) {
				fprintf(stderr, "ringflow-switch: --echo-interval %s: seconds, 1..3600\n",
					optarg);
				return 2;
			}
			ac.echo_interval_s = (unsigned)v;
			break;
		}
		case 'd': {
			char *end;
			errno = 0;
			ac.dpid = strtoull(optarg, &end, 0);
			if (!*optarg || *end || errno) {
				fprintf(stderr, "ringflow-switch: --dpid %s: a number\n", optarg);
				return 2;
			}
			break;
		}
		case 'L': ac.listen = optarg; break;
		case 'S': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 3600) {
				fprintf(stderr, "ringflow-switch: --stats-interval %s: seconds, 1..3600\n",
					optarg);
				return 2;
			}
			ac.stats_interval_s = (unsigned)v;
			break;
		}
		case 'R':
			if (sw_pinrate_parse(optarg, &ac.pin_rate, &ac.pin_burst)) {
				fprintf(stderr, "ringflow-switch: --packet-in-rate %s: PPS[,BURST], each "
					"0..%u (0: no limit)\n", optarg, SW_PINRATE_MAX);
				return 2;
			}
			break;
		case 'F':
			if (strcmp(optarg, "standalone") == 0)
				ac.standalone = true;
			else if (strcmp(optarg, "secure") == 0)
				ac.standalone = false;
			else {
				fprintf(stderr, "ringflow-switch: --fail-mode %s: use secure or standalone\n",
					optarg);
				return 2;
			}
			break;
		case 'c':
			if (rf_opt_cores("--cores", optarg, opt_err, sizeof(opt_err)))
				return bad_opt(opt_err);
			rc.cores = optarg;
			break;
		case 'i':
			if (rf_idle_parse(optarg, &rc.idle) != 0) {
				fprintf(stderr, "ringflow-switch: --idle %s: use busy or adaptive\n", optarg);
				return 2;
			}
			break;
		case 'M':
			if (rf_opt_metrics("--metrics", optarg, opt_err, sizeof(opt_err)))
				return bad_opt(opt_err);
			metrics = optarg;
			break;
		case 'O': offload = true; break;
		case 'B':
			if (rf_opt_uint("--buffers", optarg, 256, 1u << 22, &nbufs, opt_err,
					sizeof(opt_err)))
				return bad_opt(opt_err);
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "ringflow-switch: bad arguments: see ringflow-switch --help\n");
			return 2;
		}
	}
	if (optind != argc || dp.nports < 1 || (!ac.ncontrollers && !ac.listen)) {
		fprintf(stderr, "ringflow-switch: %s: see ringflow-switch --help\n",
			optind != argc ? "unexpected argument" : "give --port SPEC and --controller URL (or --listen URL)");
		return 2;
	}
	char err[512];
	int status = 1;
	struct sw_agent *agent = NULL;
	pthread_t agent_tid;
	bool agent_started = false;
	rf_qsbr_register(); /* the main thread touches no table, but stays a well-behaved reader */
	rf_qsbr_offline();
	struct rf_runtime *rt = rf_runtime_create(&rc, err, sizeof(err));
	if (!rt) {
		fprintf(stderr, "ringflow-switch: %s\n", err);
		goto out;
	}
	dp.rt = rt;
	dp.ncores = rf_runtime_ncores(rt);
	if (dp.ncores > SW_MAX_CORES) {
		fprintf(stderr, "ringflow-switch: at most %d --cores\n", SW_MAX_CORES);
		goto out;
	}
	dp.pool = rf_pktbuf_pool_create("ofswitch", nbufs, 2048, 256, RF_MEMPOOL_QUIET);
	if (!dp.pool) {
		fprintf(stderr, "ringflow-switch: cannot create %u packet buffers: %s: try fewer "
			"--buffers\n", nbufs, strerror(errno));
		goto out;
	}
	dp.to_ctl = rf_ring_create("sw_to_ctl", 1024, RF_RING_SC_DEQ);
	dp.from_ctl = rf_ring_create("sw_from_ctl", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	dp.agent_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!dp.to_ctl || !dp.from_ctl || dp.agent_efd < 0) {
		fprintf(stderr, "ringflow-switch: cannot create buffers or rings: %s\n", strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < dp.nports; i++) {
		struct sw_port *p = &dp.ports[i];
		p->dev = rf_io_open_queues(specs[i], dp.pool, dp.ncores, err, sizeof(err));
		if (!p->dev) {
			fprintf(stderr, "ringflow-switch: port %u: %s\n", i + 1, err);
			goto out;
		}
		if (!rf_io_frame_mode(p->dev) || rf_io_nqueues(p->dev) < dp.ncores) {
			fprintf(stderr, "ringflow-switch: port %u (%s): needs frame mode (frames=1) and "
				"one queue per core (%u)\n", i + 1, specs[i], dp.ncores);
			goto out;
		}
		p->of_no = i + 1;
		const char *dev = strstr(specs[i], "dev=");
		snprintf(p->name, sizeof(p->name), "%.*s", dev ? (int)strcspn(dev + 4, ",") : 15,
			 dev ? dev + 4 : specs[i]);
		if (rf_io_mac(p->dev, p->mac) != 0)
			memset(p->mac, 0, 6);
	}
	if (ac.standalone) {
		dp.macs = rf_hash_create("sw_macs", 6, 65536, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
		if (!dp.macs) {
			fprintf(stderr, "ringflow-switch: cannot create the MAC table: %s\n",
				strerror(errno));
			goto out;
		}
		atomic_store_explicit(&dp.standalone, true, memory_order_relaxed);
	}
	if (offload) /* NULL (said in one line): the switch runs without it */
		dp.offload = sw_offload_create(&dp);
	ctlcmd = sw_ctlcmd_create(&dp);
	ac.ctlcmd = ctlcmd; /* NULL (no memory): no `flows` command, nothing else lost */
	agent = sw_agent_create(&dp, &ac);
	if (!agent)
		goto out;
	for (unsigned c = 0; c < dp.ncores; c++) {
		dp.cores[c].idx = c;
		dp.cores[c].dp = &dp;
		int r = 0;
		for (unsigned i = 0; r == 0 && i < dp.nports; i++) {
			dp.units[c][i] = (struct sw_unit){&dp.cores[c], i};
			r = rf_runtime_add_poll_io(rt, c, sw_dp_poll, &dp.units[c][i], dp.ports[i].dev, c);
		}
		if (r == 0 && c == 0)
			r = rf_runtime_add_poll(rt, 0, sw_dp_poll_ctl, &dp.cores[0], RF_POLL_WAKE);
		if (r) {
			fprintf(stderr, "ringflow-switch: cannot add core %u: %s\n", c, strerror(-r));
			goto out;
		}
	}
	int r = rf_runtime_handle_signals(rt);
	if (r == 0)
		r = rf_runtime_start(rt);
	if (r == 0)
		r = -pthread_create(&agent_tid, NULL, sw_agent_run, agent);
	if (r) {
		fprintf(stderr, "ringflow-switch: cannot start: %s\n", strerror(-r));
		rf_runtime_stop(rt);
		goto out;
	}
	agent_started = true;
	/* The control socket and --metrics (docs/observing.md): pollers, ports, pool, rings;
	 * the `ports` and `flows` commands (sw_ctlcmd.c). */
	{
		struct rf_io_dev *devs[SW_MAX_PORTS];
		const char *names[SW_MAX_PORTS];
		static char stats_names[SW_MAX_PORTS][SW_STATS_NAME]; /* valid registry names */
		sw_port_stats_names(dp.ports, dp.nports, stats_names);
		for (unsigned i = 0; i < dp.nports; i++) {
			devs[i] = dp.ports[i].dev;
			names[i] = stats_names[i];
		}
		char cerr[256];
		ctl = rf_ctl_start_app(&(struct rf_ctl_app){.app = "switch", .metrics = metrics,
							    .rt = rt, .devs = devs,
							    .dev_names = names, .ndevs = dp.nports,
							    .pool = dp.pool},
				       cerr, sizeof(cerr));
		if (!ctl) {
			fprintf(stderr, "ringflow-switch: %s\n", cerr);
		} else {
			struct rf_stats *reg = rf_ctl_stats(ctl);
			rf_stats_add_ring(reg, "to_controller", dp.to_ctl);
			rf_stats_add_ring(reg, "from_controller", dp.from_ctl);
			sw_offload_stats_register(dp.offload, reg);
			if (ctlcmd)
				sw_ctlcmd_register(ctlcmd, ctl);
			sw_agent_obs_register(agent, reg);
		}
	}
	if (!ctl && metrics) {
		rf_runtime_stop(rt);
		goto out;
	}
	fprintf(stderr, "ringflow-switch: %u ports, %u core(s), dpid 0x%016" PRIx64
		", %u controller(s)%s%s, listen %s; Ctrl-C stops\n", dp.nports, dp.ncores, ac.dpid,
		ac.ncontrollers, ac.ncontrollers ? " first " : "",
		ac.ncontrollers ? ac.controllers[0] : "", ac.listen ? ac.listen : "-");
	rf_runtime_wait(rt);
	status = 0;
out:
	rf_ctl_stop(ctl); /* before the runtime and the ports go (and the registry with it) */
	if (agent_started)
		pthread_join(agent_tid, NULL);
	if (rt) {
		rf_runtime_stop(rt);
		rf_runtime_join(rt);
	}
	sw_agent_destroy(agent);
	sw_ctlcmd_destroy(ctlcmd); /* the control thread and the agent are gone */
	for (unsigned c = 0; c < dp.ncores && status == 0; c++) {
		struct sw_core *k = &dp.cores[c];
		fprintf(stderr, "ringflow-switch: core %u: rx %" PRIu64 " tx %" PRIu64 " to_controller %"
			PRIu64 " drop: short %" PRIu64 " no_flow %" PRIu64 " tx %" PRIu64 " controller %"
			PRIu64 " actions %" PRIu64 " group %" PRIu64 "; rewrites skipped %" PRIu64
			"; pipeline outcomes: cached %" PRIu64 " answered %" PRIu64 "\n",
			c, k->rx, k->tx_pkts, k->to_ctl, k->drop_short, k->drop_nomatch, k->drop_tx,
			k->drop_ctl, k->drop_act, k->drop_group, k->act_skip, k->out_fills,
			k->out_hits);
	}
	if (status == 0)
		sw_offload_report(dp.offload, stderr);
	sw_offload_destroy(dp.offload); /* its entries out of the kernel, before the ports go */
	rf_runtime_destroy(rt);
	for (unsigned i = 0; i < dp.nports; i++)
		rf_io_close(dp.ports[i].dev);
	if (dp.to_ctl) { /* frames still queued go back to the pool before it goes */
		void *b;
		while (rf_ring_dequeue_burst(dp.to_ctl, &b, 1, NULL) == 1)
			rf_pktbuf_free(b);
	}
	if (dp.from_ctl) {
		void *b;
		while (rf_ring_dequeue_burst(dp.from_ctl, &b, 1, NULL) == 1)
			rf_pktbuf_free(b);
	}
	rf_ring_free(dp.to_ctl);
	rf_ring_free(dp.from_ctl);
	if (dp.agent_efd >= 0)
		close(dp.agent_efd);
	rf_pktbuf_pool_free(dp.pool);
	rf_hash_free(dp.macs);
	rf_qsbr_online();
	rf_qsbr_unregister();
	return status;
}
