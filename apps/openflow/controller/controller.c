/*
 * apps/openflow/controller/controller.c: ringflow-controller's command line. Builds the
 * runtime (poller 0: switch I/O over ringflow's tcp driver; pollers 1..: the handlers; with
 * one core both run on it), the rings, the MAC table and the apps, then runs until
 * SIGINT/SIGTERM (see docs/openflow.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ringflow/io.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>

#include "cl_roles.h"
#include "ofc.h"
#include "ofc_app.h"
#include "ofc_observe.h"
#include "ofc_rest.h"
#if RF_HAVE_CURL
#include "cl_cluster.h"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringflow-controller [--listen IPV4:PORT] [--cores LIST] [--app LIST]\n"
		"                           [--rest [IPV4:]PORT] [--rest-token FILE]\n"
		"                           [--idle busy|adaptive] [--max-macs N] [--stats S]\n"
		"                           [--ring N] [--stall-us US] [--max-conns N]\n"
		"                           [--max-conns-per-source N] [--echo-ms MS]\n"
		"                           [--max-macs-per-switch N] [--mac-age S]\n"
		"                           [--cluster etcd=URL[,URL...] --node-id NAME\n"
		"                            [--cluster-prefix /ringflow] [--lease-ttl S]\n"
		"                            [--cluster-wait]]\n"
		"  --listen     where switches connect (default 127.0.0.1:6653)\n"
		"  --cores      CPUs: the first runs switch I/O, the others the handlers (default 0)\n"
		"  --app        apps, in order: learning,topology,hosts (default learning)\n"
		"  --rest       serve the REST API and the web page there (e.g. 8080: on\n"
		"               127.0.0.1; another address only when given)\n"
		"  --rest-token FILE  every REST request must carry the token in FILE\n"
		"               (Authorization: Bearer TOKEN, or ?token=TOKEN for the page)\n"
		"  --idle       busy (default: lowest latency, a CPU per core) or adaptive\n"
		"  --max-macs   MAC table capacity over all switches (default 1048576)\n"
		"  --max-macs-per-switch  MACs one switch may teach (default 8192, at most an\n"
		"               eighth of --max-macs); a full switch stops learning new ones\n"
		"  --mac-age S  a MAC not seen for S seconds is forgotten (default 300)\n"
		"  --stats S    print the runtime's stats line every S seconds\n"
		"  --ring N     each handler's input ring: N slots, a power of two 16..16384\n"
		"               (default 16384; small rings exercise the held queues)\n"
		"  --stall-us   count poll-round gaps over US per core (default 100, 0: off)\n"
		"  --metrics    serve Prometheus metrics at IP:PORT (docs/observing.md)\n"
		"  --max-conns  switch connections in all (default and at most 1024; lowered to\n"
		"               fit the fd limit)\n"
		"  --max-conns-per-source  switch connections from one IP address (default 32)\n"
		"  --echo-ms    a silent switch gets an ECHO_REQUEST after MS, and is closed after\n"
		"               3 x MS without a message (default 5000)\n"
		"  --cluster etcd=URL[,URL...]  run as a member of a cluster on etcd: one\n"
		"               master per switch, failover, rebalancing (docs/cluster.md;\n"
		"               OpenFlow 1.3 switches connected to every member)\n"
		"  --node-id    this member's name (required with --cluster)\n"
		"  --cluster-prefix  the etcd key prefix (default /ringflow)\n"
		"  --lease-ttl S  membership lease (default 3, 2..60); a member that cannot\n"
		"               renew it for 2/3 of S turns SLAVE everywhere\n"
		"  --cluster-wait  wait for etcd at start instead of exiting\n"
		"Stops cleanly on SIGINT/SIGTERM.\n");
}

/* Every switch connection and REST connection is an fd: the caps must fit the fd limit, so
 * that accept never fails for want of one (a failing accept leaves the listening socket
 * readable: the poller would spin on it). Raises the soft limit as far as the hard one
 * allows, then lowers max_conns if it still does not fit. */
static int fit_fd_limit(struct ofc_limits *lim, bool rest)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	rlim_t want = lim->max_conns + (rest ? OFC_REST_MAX_CONNS : 0) + OFC_FD_RESERVE;
	if (rl.rlim_cur < want && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= want)
		return 0;
	rlim_t room = rl.rlim_cur - (rest ? OFC_REST_MAX_CONNS : 0);
	if (rl.rlim_cur < (rest ? OFC_REST_MAX_CONNS : 0) + OFC_FD_RESERVE + 8 ||
	    room < OFC_FD_RESERVE + 8) {
		fprintf(stderr, "ringflow-controller: the fd limit (%llu) leaves no room for switch "
			"connections; raise it (ulimit -n)\n", (unsigned long long)rl.rlim_cur);
		return -1;
	}
	lim->max_conns = (unsigned)(room - OFC_FD_RESERVE);
	if (lim->max_handshaking > lim->max_conns / 2)
		lim->max_handshaking = lim->max_conns / 2;
	fprintf(stderr, "ringflow-controller: fd limit %llu: at most %u switch connections, %u "
		"of them handshaking\n", (unsigned long long)rl.rlim_cur, lim->max_conns,
		lim->max_handshaking);
	return 0;
}

/* A bad option value: the shared parser's line (runtime.h, rf_opt_*), exit status 2. */
static int bad_opt(const char *err)
{
	fprintf(stderr, "ringflow-controller: %s\n", err);
	return 2;
}

int main(int argc, char **argv)
{
	const char *listen_at = "127.0.0.1:6653", *cores = "0", *app = "learning", *rest_at = NULL;
	const char *rest_token = NULL;
	struct rf_runtime_config cfg = {.idle = RF_IDLE_BUSY, .stall_us = 100};
	unsigned max_macs = 1u << 20, ring = OFC_RING_SIZE;
	const char *metrics = NULL;
	char opt_err[200];
	struct ofc_limits lim = OFC_LIMITS_DEFAULT;
	unsigned macs_per_switch = 0, mac_age_s = 300; /* 0: the default */
	unsigned long v;
	const char *cluster = NULL, *node_id = NULL, *cl_prefix = "/ringflow";
	unsigned lease_ttl = 3;
	bool cluster_wait = false;
	static const struct option lo[] = {
		{"cluster", required_argument, 0, 1001}, {"node-id", required_argument, 0, 1002},
		{"cluster-prefix", required_argument, 0, 1003},
		{"lease-ttl", required_argument, 0, 1004}, {"cluster-wait", no_argument, 0, 1005},
		{"listen", required_argument, 0, 'L'}, {"cores", required_argument, 0, 'c'},
		{"app", required_argument, 0, 'a'},    {"idle", required_argument, 0, 'i'},
		{"max-macs", required_argument, 0, 'm'}, {"stats", required_argument, 0, 's'},
		{"rest", required_argument, 0, 'r'},   {"ring", required_argument, 0, 'R'},
		{"rest-token", required_argument, 0, 'T'},
		{"stall-us", required_argument, 0, 'S'},
		{"max-conns", required_argument, 0, 'C'},
		{"max-conns-per-source", required_argument, 0, 'P'},
		{"echo-ms", required_argument, 0, 'E'},
		{"max-macs-per-switch", required_argument, 0, 'M'},
		{"mac-age", required_argument, 0, 'A'},
		{"metrics", required_argument, 0, 'X'},
		{"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'L': listen_at = optarg; break;
		case 'c':
			if (rf_opt_cores("--cores", optarg, opt_err, sizeof(opt_err)))
				return bad_opt(opt_err);
			cores = optarg;
			break;
		case 'a': app = optarg; break;
		case 'r': rest_at = optarg; break;
		case 'X':
			if (rf_opt_metrics("--metrics", optarg, opt_err, sizeof(opt_err)))
				return bad_opt(opt_err);
			metrics = optarg;
			break;
		case 'T': rest_token = optarg; break;
		case 'i':
			if (rf_idle_parse(optarg, &cfg.idle) != 0) {
				fprintf(stderr, "ringflow-controller: --idle %s: use busy or adaptive\n", optarg);
				return 2;
			}
			break;
		case 'm': max_macs = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': cfg.stats_interval_s = strtod(optarg, NULL); break;
		case 'S': cfg.stall_us = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'R':
			ring = (unsigned)strtoul(optarg, NULL, 10);
			if (ring < 16 || ring > OFC_RING_SIZE || (ring & (ring - 1))) {
				fprintf(stderr, "ringflow-controller: --ring %s: use a power of two "
					"16..%u\n", optarg, OFC_RING_SIZE);
				return 2;
			}
			break;
		case 'C':
		case 'P':
		case 'E':
			v = strtoul(optarg, NULL, 10);
			if (v < 1 || v > (c == 'E' ? 3600000ul : OFC_MAX_CONNS)) {
				fprintf(stderr, "ringflow-controller: --%s %s: use 1..%lu\n",
					c == 'C' ? "max-conns" : c == 'P' ? "max-conns-per-source"
									  : "echo-ms",
					optarg, c == 'E' ? 3600000ul : (unsigned long)OFC_MAX_CONNS);
				return 2;
			}
			if (c == 'C')
				lim.max_conns = (unsigned)v;
			else if (c == 'P')
				lim.per_source = (unsigned)v;
			else {
				lim.echo_idle_ms = (unsigned)v;
				lim.echo_dead_ms = 3 * (unsigned)v;
			}
			break;
		case 'M':
		case 'A':
			v = strtoul(optarg, NULL, 10);
			if (v < 1 || v > (1ul << 24)) {
				fprintf(stderr, "ringflow-controller: --%s %s: use 1..%lu\n",
					c == 'M' ? "max-macs-per-switch" : "mac-age", optarg, 1ul << 24);
				return 2;
			}
			if (c == 'M')
				macs_per_switch = (unsigned)v;
			else
				mac_age_s = (unsigned)v;
			break;
		case 1001: cluster = optarg; break;
		case 1002: node_id = optarg; break;
		case 1003: cl_prefix = optarg; break;
		case 1004:
			v = strtoul(optarg, NULL, 10);
			if (v < 2 || v > 60) {
				fprintf(stderr, "ringflow-controller: --lease-ttl %s: use 2..60 "
					"seconds\n", optarg);
				return 2;
			}
			lease_ttl = (unsigned)v;
			break;
		case 1005: cluster_wait = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	char host[64];
	const char *colon = strrchr(listen_at, ':');
	long port = colon ? strtol(colon + 1, NULL, 10) : -1;
	if (!colon || (size_t)(colon - listen_at) >= sizeof(host) || port <= 0 || port > 65535) {
		fprintf(stderr, "ringflow-controller: --listen %s: use IPV4:PORT, e.g. 127.0.0.1:6653\n",
			listen_at);
		return 2;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = '\0';

	if (cluster && (strncmp(cluster, "etcd=", 5) != 0 || !node_id)) {
		fprintf(stderr, "ringflow-controller: --cluster %s: use --cluster etcd=http://HOST:PORT"
			"[,...] with --node-id NAME\n", cluster);
		return 2;
	}
	if (!cluster && (node_id || cluster_wait)) {
		fprintf(stderr, "ringflow-controller: --node-id and --cluster-wait need --cluster\n");
		return 2;
	}
#if !RF_HAVE_CURL
	(void)lease_ttl; /* the cluster options are parsed, and refused below */
	(void)cl_prefix;
	if (cluster) {
		fprintf(stderr, "ringflow-controller: --cluster: this build has no libcurl (configure "
			"with -DRF_WITH_CURL=ON after scripts/deps.sh)\n");
		return 2;
	}
#endif
	char err[256];
	if (fit_fd_limit(&lim, rest_at != NULL) < 0)
		return 1;
	cfg.cores = cores;
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	if (!rt) {
		fprintf(stderr, "ringflow-controller: %s\n", err);
		return 1;
	}
	unsigned ncores = rf_runtime_ncores(rt);
	unsigned nh = ncores > 1 ? ncores - 1 : 1;
	if (nh > OFC_MAX_HANDLERS)
		nh = OFC_MAX_HANDLERS;
	rf_qsbr_register(); /* the table is created and freed on this thread */
	struct rf_hash *macs = rf_hash_create("macs", 14, max_macs, RF_MEMPOOL_QUIET);
	struct ofc_handler h[OFC_MAX_HANDLERS];
	memset(h, 0, sizeof(h));
	int rc = 1;
	struct ofc_io *io = NULL;
	struct ofc_apps *apps = NULL; /* the plain learning switch keeps its direct path */
	struct ofc_rest *rest = NULL;
	struct ofc_observe *obs = NULL; /* control socket and --metrics (docs/observing.md) */
	struct ofc_rest_view view = {0};
	struct cl_roles *roles = NULL; /* --cluster: the role table the I/O poller reads */
#if RF_HAVE_CURL
	struct cl_cluster *cl = NULL;
#endif
	if ((strcmp(app, "learning") != 0 || rest_at || cluster) &&
	    !(apps = ofc_apps_create(app, OFC_HOSTS_TABLE, err, sizeof(err)))) {
		fprintf(stderr, "ringflow-controller: %s\n", err);
		goto out;
	}
	if (!macs) {
		fprintf(stderr, "ringflow-controller: cannot allocate the MAC table (%s); try a "
			"smaller --max-macs\n", strerror(errno));
		goto out;
	}
	if (!macs_per_switch) /* OVS's default table size, at most an eighth of ours */
		macs_per_switch = max_macs / 8 < 8192 ? (max_macs / 8 ? max_macs / 8 : 1) : 8192;
	struct ofc_learn_limits ll = {.macs_per_switch = macs_per_switch,
				      .hosts_per_switch = OFC_HOSTS_TABLE / 16,
				      .mac_age_ms = (uint64_t)mac_age_s * 1000,
				      .host_age_ms = OFC_HOST_AGE_MS};
	for (unsigned i = 0; i < nh; i++) {
		h[i].learn = ofc_learn_create(macs, &ll);
		if (!h[i].learn) {
			fprintf(stderr, "ringflow-controller: out of memory for the MAC quotas\n");
			goto out;
		}
		ofc_learn_set_hosts(h[i].learn, apps ? ofc_apps_net(apps) : NULL);
		h[i].in = rf_ring_create("ofc_in", ring, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
		h[i].out = rf_ring_create("ofc_out", OFC_RING_SIZE, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
		h[i].macs = macs;
		h[i].apps = apps;
		h[i].index = i;
		h[i].poller = ncores > 1 ? i + 1 : 0;
		h[i].rt = rt;
		if (!h[i].in || !h[i].out) {
			fprintf(stderr, "ringflow-controller: cannot create rings: %s\n", strerror(errno));
			goto out;
		}
	}
	io = ofc_io_create(host, (uint16_t)port, h, nh, &lim, err, sizeof(err));
	if (!io) {
		fprintf(stderr, "ringflow-controller: %s\n", err);
		goto out;
	}
	ofc_io_set_apps(io, apps);
#if RF_HAVE_CURL
	if (cluster) {
		roles = calloc(1, sizeof(*roles));
		if (!roles) {
			fprintf(stderr, "ringflow-controller: out of memory for the role table\n");
			goto out;
		}
		/* no deadline until the lease is granted: nothing is master before */
		atomic_store_explicit(&roles->fence_at_ms, UINT64_MAX, memory_order_relaxed);
		struct cl_config cc = {.urls = cluster + 5, .node = node_id, .prefix = cl_prefix,
				       .ttl_s = lease_ttl, .wait = cluster_wait, .rest = rest_at,
				       .lldp_key = ofc_apps_net(apps)->lldp_key,
				       .net = ofc_apps_net(apps), .macs = macs};
		/* new masters' MAC seeds, cluster thread -> I/O poller */
		roles->seeds = rf_ring_create("cl_seeds", 256, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
		if (!roles->seeds) {
			fprintf(stderr, "ringflow-controller: cannot create a ring: %s\n",
				strerror(errno));
			goto out;
		}
		if (!(cl = cl_cluster_start(&cc, roles, err, sizeof(err)))) {
			fprintf(stderr, "ringflow-controller: %s\n", err);
			goto out;
		}
		ofc_io_set_roles(io, roles);
	}
#endif
	if (rf_runtime_add_poll(rt, 0, ofc_io_poll, io, ofc_io_wait_fd(io)) < 0)
		goto out;
	for (unsigned i = 0; i < nh; i++) /* woken by the I/O poller when it fills their ring */
		if (rf_runtime_add_poll(rt, h[i].poller, ofc_learning_poll, &h[i], RF_POLL_WAKE) < 0)
			goto out;
	if (rf_runtime_handle_signals(rt) < 0 || rf_runtime_start(rt) < 0) {
		fprintf(stderr, "ringflow-controller: cannot start the pollers: %s\n", strerror(errno));
		goto out;
	}
	if (rest_at) {
		view = (struct ofc_rest_view){.net = ofc_apps_net(apps), .rt = rt, .h = h, .nh = nh,
					      .apps = app, .flows = ofc_apps_flows(apps)};
#if RF_HAVE_CURL
		if (cl) {
			view.cluster = cl_cluster_render;
			view.cluster_shared = cl_cluster_shared;
			view.cluster_arg = cl;
		}
#endif
		if (!(rest = ofc_rest_start(rest_at, rest_token, &view, err, sizeof(err)))) {
			fprintf(stderr, "ringflow-controller: %s\n", err);
			rf_runtime_stop(rt);
			rf_runtime_join(rt);
			goto out;
		}
		const char *rcolon = strrchr(rest_at, ':');
		fprintf(stderr, "ringflow-controller: REST API and web page on http://%.*s:%u/%s\n",
			rcolon ? (int)(rcolon - rest_at) : 9, rcolon ? rest_at : "127.0.0.1", ofc_rest_port(rest),
			rest_token ? " (token required)" : "");
	}
	struct ofc_rest_view oview = {.net = apps ? ofc_apps_net(apps) : NULL, .rt = rt, .h = h,
				      .nh = nh, .apps = app, .flows = apps ? ofc_apps_flows(apps) : NULL};
#if RF_HAVE_CURL
	if (cl) {
		oview.cluster = cl_cluster_render;
		oview.cluster_shared = cl_cluster_shared;
		oview.cluster_arg = cl;
	}
#endif
	obs = ofc_observe_start(&oview, io, metrics, err, sizeof(err));
	if (!obs) {
		fprintf(stderr, "ringflow-controller: %s\n", err);
		if (metrics) {
			rf_runtime_stop(rt);
			rf_runtime_join(rt);
			goto out;
		}
	}
	fprintf(stderr, "ringflow-controller: listening on %s:%ld, %u core(s), %u handler(s), "
		"app %s\n", host, port, ncores, nh, app);
	rf_qsbr_offline(); /* this thread only waits from now on */
	rf_runtime_wait(rt);
	rf_runtime_join(rt);
	if (rest) {
		struct ofc_rest_stats rs;
		ofc_rest_stop(rest, &rs);
		rest = NULL;
		fprintf(stderr, "ringflow-controller: REST: %llu requests, %llu refused by a check "
			"(%llu too large, %llu without the token), %llu pauses at the connection cap, "
			"%llu connections over the per-source cap, "
			"%llu closed at the deadline, %llu accept back-offs, %llu flow requests "
			"answered asynchronously\n", (unsigned long long)rs.requests,
			(unsigned long long)rs.rejected, (unsigned long long)rs.too_large,
			(unsigned long long)rs.bad_token, (unsigned long long)rs.refused,
			(unsigned long long)rs.refused_source,
			(unsigned long long)rs.deadline_closed,
			(unsigned long long)rs.accept_backoffs, (unsigned long long)rs.flows_async);
	}

	ofc_observe_stop(obs);
	obs = NULL;
	rf_qsbr_online();
	uint64_t pin = 0, fm = 0, po = 0, lq[6] = {0};
	for (unsigned i = 0; i < nh; i++) {
		const struct ofc_learn_stats *ls = ofc_learn_stats(h[i].learn);
		lq[0] += atomic_load(&ls->macs_refused);
		lq[1] += atomic_load(&ls->macs_aged);
		lq[2] += atomic_load(&ls->hosts_refused);
		lq[3] += atomic_load(&ls->hosts_aged);
		lq[4] += atomic_load(&ls->switches_gone);
		lq[5] += atomic_load(&ls->reaped);
		pin += atomic_load(&h[i].packet_ins);
		fm += atomic_load(&h[i].flow_mods);
		po += atomic_load(&h[i].packet_outs);
	}
	struct rf_counters tot;
	rf_runtime_totals(rt, &tot);
	struct rf_io_stats st = {0};
	rf_io_stats_get(ofc_io_dev(io), &st);
	struct ofc_guard_stats gs;
	ofc_io_guard_stats(io, &gs);
	fprintf(stderr, "ringflow-controller: defences: %llu connections refused over the "
		"per-source cap, %llu over the handshaking cap, %llu oldest handshakes closed for "
		"newer ones, %llu handshake timeouts, %llu "
		"ECHO_REQUESTs sent, %llu switches closed as silent; the driver dropped %llu "
		"(connections over the global cap, messages cut short)\n", (unsigned long long)gs.refused_source,
		(unsigned long long)gs.refused_handshaking,
		(unsigned long long)gs.handshakes_evicted,
		(unsigned long long)gs.handshake_timeouts, (unsigned long long)gs.echo_sent,
		(unsigned long long)gs.echo_timeouts, (unsigned long long)st.rx_drops);
	fprintf(stderr, "ringflow-controller: stopped: %llu PACKET_IN, %llu FLOW_MOD, %llu "
		"PACKET_OUT, %zu MACs learned; replies dropped %llu; connections %llu, messages "
		"in %llu out %llu, dropped in %llu out %llu\n", (unsigned long long)pin,
		(unsigned long long)fm, (unsigned long long)po, rf_hash_count(macs),
		(unsigned long long)tot.drop_driver, (unsigned long long)st.conns_total,
		(unsigned long long)st.rx_pkts, (unsigned long long)st.tx_pkts,
		(unsigned long long)st.rx_drops, (unsigned long long)st.tx_drops);
	fprintf(stderr, "ringflow-controller: quotas: %llu MACs refused (switch at its quota of "
		"%u), %llu MACs aged out; %llu hosts refused, %llu aged out; %llu switches left, "
		"%llu of their entries deleted\n", (unsigned long long)lq[0], macs_per_switch,
		(unsigned long long)lq[1], (unsigned long long)lq[2], (unsigned long long)lq[3],
		(unsigned long long)lq[4], (unsigned long long)lq[5]);
	uint64_t held, paused;
	ofc_io_backlog_stats(io, &held, &paused);
	fprintf(stderr, "ringflow-controller: back-pressure: %llu PACKET_IN held for a full "
		"handler ring, %llu rounds without receiving\n", (unsigned long long)held,
		(unsigned long long)paused);
	for (unsigned i = 0; cfg.stall_us && i < ncores; i++) {
		struct rf_counters core;
		rf_runtime_counters(rt, i, &core);
		fprintf(stderr, "ringflow-controller: cpu %d: %llu poll-round gaps over %u us, the "
			"longest %.0f us\n", rf_runtime_cpu(rt, i), (unsigned long long)core.stalls,
			cfg.stall_us, (double)core.stall_max_ns / 1e3);
	}
	rc = 0;
out:
	ofc_rest_stop(rest, NULL);
	ofc_observe_stop(obs);
#if RF_HAVE_CURL
	cl_cluster_stop(cl); /* before the runtime: the I/O poller has stopped reading roles */
#endif
	rf_runtime_destroy(rt);
	ofc_io_free(io);
	for (unsigned i = 0; i < nh; i++) {
		rf_ring_free(h[i].in);
		rf_ring_free(h[i].out);
		ofc_learn_free(h[i].learn);
	}
	rf_hash_free(macs);
	ofc_apps_free(apps);
	if (roles && roles->seeds) { /* seeds the I/O poller did not take before it stopped */
		void *obj = NULL; /* written only by a dequeue that returns 1 */
		while (rf_ring_dequeue_burst(roles->seeds, &obj, 1, NULL) == 1)
			free(obj);
		rf_ring_free(roles->seeds);
	}
	free(roles);
	rf_qsbr_unregister();
	return rc;
}
