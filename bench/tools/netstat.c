/*
 * bench/tools/netstat.c: ringflow-netstat, where packets are dropped, per second.
 *
 * Samples, every --interval seconds and --count times, the counters seeds 001 and 004 read
 * by hand to find drops: /proc/net/dev for one interface (like `sar -n DEV`, plus its drop
 * and error columns), /proc/net/softnet_stat per CPU (backlog drops, budget squeezes), the
 * driver's own counters through the ETHTOOL_GSTATS ioctl (`ethtool -S`), and the Udp: block
 * of /proc/net/snmp (socket buffer overflows). It prints rates; a row with a non-zero drop
 * rate gets a "<- DROP" marker, and each kind of drop seen gets one line saying what it
 * means and what to change.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ethtool_stats.h"
#include "procnet.h"

struct opts {
	const char *dev;
	const char *netns;
	double interval;
	unsigned count;
	bool json;
};

struct sample {
	double t;
	struct rf_netdev dev;
	struct rf_softnet softnet;
	struct rf_udp_mib udp;
	struct rf_ethtool_stats eth;
	int eth_rc;
};

/* What each drop counter means (seeds 001 and 004, and net/core/dev.c). */
enum drop_kind {
	D_DEV_RX, D_DEV_TX, D_DEV_FIFO, D_BACKLOG, D_SQUEEZE, D_FLOW, D_RCVBUF, D_SNDBUF,
	D_INERR, D_NOPORT, D_DRIVER, D_KINDS
};
static const char *const drop_help[D_KINDS] = {
	[D_DEV_RX] = "dev rxdrop: the kernel dropped received packets for this device (no buffer, "
		     "backlog full on netif_rx, unknown protocol); see the softnet and driver rows",
	[D_DEV_TX] = "dev txdrop: the device or its qdisc refused packets (veth: the peer's "
		     "backlog was full)",
	[D_DEV_FIFO] = "dev rxfifo: the NIC's receive FIFO/ring overflowed before the kernel polled "
		       "it: bigger ring (ethtool -G), IRQ affinity on a nearby CPU, faster polling",
	[D_BACKLOG] = "softnet dropped: that CPU's backlog already held net.core.netdev_max_backlog "
		      "packets (netif_rx/RPS path): raise it, or spread receive over CPUs with RPS",
	[D_SQUEEZE] = "softnet time_squeeze: net_rx_action ran out of net.core.netdev_budget or "
		      "netdev_budget_usecs with packets left; they wait (latency, then drops "
		      "upstream): raise the budget or add CPUs",
	[D_FLOW] = "softnet flow_limit: the per-flow backlog limit dropped packets of a heavy flow",
	[D_RCVBUF] = "Udp RcvbufErrors: a socket's receive buffer was full, the application reads "
		     "too slowly: read faster/more threads, or raise SO_RCVBUF (net.core.rmem_max)",
	[D_SNDBUF] = "Udp SndbufErrors: a send found the socket send buffer (or the qdisc) full: "
		     "raise SO_SNDBUF or pace the sender",
	[D_INERR] = "Udp InErrors: datagrams not delivered (includes RcvbufErrors and checksum "
		    "errors)",
	[D_NOPORT] = "Udp NoPorts: datagrams to a port no socket listens on (ICMP unreachable)",
	[D_DRIVER] = "driver counter (ethtool -S) with drop/miss/fifo/err in its name: the NIC or "
		     "driver lost packets before the kernel saw them (seed 004: rx_missed_errors)",
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int take(struct sample *s, const char *dev)
{
	s->t = now_s();
	int rc = rf_netdev_read(dev, &s->dev);
	if (rc)
		return rc;
	rc = rf_softnet_read(&s->softnet);
	if (rc)
		return rc;
	rc = rf_udp_mib_read(&s->udp);
	if (rc)
		return rc;
	s->eth_rc = rf_ethtool_stats_read(dev, &s->eth);
	return 0;
}

static bool is_drop_name(const char *n)
{
	return strstr(n, "drop") || strstr(n, "miss") || strstr(n, "fifo") || strstr(n, "err");
}

static void json(const struct opts *o, double t, const char *c, double v, const char *unit)
{
	printf("{\"bench\":\"netstat\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.6g,"
	       "\"unit\":\"%s\",\"t\":%.3f}\n",
	       o->dev, c, v, unit, t);
}

/* Prints one interval (b - a); marks which drop kinds were seen in `seen`. */
static void report(const struct opts *o, const struct sample *a, const struct sample *b,
		   double t0, bool *seen, FILE *out)
{
	double dt = b->t - a->t, t = b->t - t0;
#define R(field) rf_rate(rf_counter_delta_auto(a->field, b->field), dt)
	double rxp = R(dev.rx_packets), txp = R(dev.tx_packets);
	double rxk = R(dev.rx_bytes) / 1024, txk = R(dev.tx_bytes) / 1024;
	double rxd = R(dev.rx_drop), txd = R(dev.tx_drop), rxe = R(dev.rx_errs);
	double txe = R(dev.tx_errs), rxf = R(dev.rx_fifo);
	seen[D_DEV_RX] |= rxd > 0;
	seen[D_DEV_TX] |= txd > 0;
	seen[D_DEV_FIFO] |= rxf > 0;
	fprintf(out, "%7.2f %-10s %10.0f %10.0f %9.1f %9.1f %9.0f %9.0f %8.0f %8.0f %8.0f%s\n", t,
		o->dev, rxp, txp, rxk, txk, rxd, txd, rxe, txe, rxf,
		(rxd + txd + rxe + txe + rxf) > 0 ? "  <- DROP" : "");
	if (o->json) {
		json(o, t, "rxpck", rxp, "1/s");
		json(o, t, "txpck", txp, "1/s");
		json(o, t, "rxkB", rxk, "KiB/s");
		json(o, t, "txkB", txk, "KiB/s");
		json(o, t, "rxdrop", rxd, "1/s");
		json(o, t, "txdrop", txd, "1/s");
		json(o, t, "rxerr", rxe, "1/s");
		json(o, t, "txerr", txe, "1/s");
		json(o, t, "rxfifo", rxf, "1/s");
	}
	for (unsigned i = 0; i < b->softnet.n; i++) {
		const struct rf_softnet_cpu *nb = &b->softnet.cpu[i];
		const struct rf_softnet_cpu *na = rf_softnet_find(&a->softnet, nb->cpu);
		if (!na)
			continue; /* CPU came online in between */
#define S(field) rf_rate(rf_counter_delta(na->field, nb->field, 32), dt)
		double pr = S(processed), dr = S(dropped), sq = S(time_squeeze);
		double rps = S(received_rps), fl = S(flow_limit);
#undef S
		seen[D_BACKLOG] |= dr > 0;
		seen[D_SQUEEZE] |= sq > 0;
		seen[D_FLOW] |= fl > 0;
		fprintf(out, "%7.2f   cpu%-5u %10.0f %10.0f %9.0f %9.0f %9.0f %9llu%s\n", t, nb->cpu,
			pr, dr, sq, rps, fl, (unsigned long long)nb->backlog,
			(dr + fl) > 0 ? "                            <- DROP"
			: sq > 0 ? "                            <- squeeze" : "");
		if (o->json) {
			char c[48];
			snprintf(c, sizeof(c), "cpu%u_processed", nb->cpu);
			json(o, t, c, pr, "1/s");
			snprintf(c, sizeof(c), "cpu%u_dropped", nb->cpu);
			json(o, t, c, dr, "1/s");
			snprintf(c, sizeof(c), "cpu%u_time_squeeze", nb->cpu);
			json(o, t, c, sq, "1/s");
		}
	}
	double ind = R(udp.in_datagrams), nop = R(udp.no_ports), ine = R(udp.in_errors);
	double rcv = R(udp.rcvbuf_errors), snd = R(udp.sndbuf_errors), outd = R(udp.out_datagrams);
#undef R
	seen[D_RCVBUF] |= rcv > 0;
	seen[D_SNDBUF] |= snd > 0;
	seen[D_INERR] |= ine > 0;
	seen[D_NOPORT] |= nop > 0;
	fprintf(out, "%7.2f   udp      %10.0f %10.0f %9.0f %9.0f %9.0f %9.0f%s\n", t, ind, outd,
		rcv, ine, snd, nop, (rcv + ine + snd) > 0 ? "                   <- DROP" : "");
	if (o->json) {
		json(o, t, "udp_in", ind, "1/s");
		json(o, t, "udp_out", outd, "1/s");
		json(o, t, "udp_rcvbuf_errors", rcv, "1/s");
		json(o, t, "udp_in_errors", ine, "1/s");
		json(o, t, "udp_sndbuf_errors", snd, "1/s");
		json(o, t, "udp_no_ports", nop, "1/s");
	}
	/* Driver counters: only the ones that moved, by name (a queue may come or go). */
	if (a->eth_rc == 0 && b->eth_rc == 0) {
		for (unsigned i = 0; i < b->eth.n; i++) {
			int j = rf_ethtool_stats_find(&a->eth, b->eth.name[i]);
			if (j < 0)
				continue;
			uint64_t d = rf_counter_delta_auto(a->eth.value[j], b->eth.value[i]);
			if (d == 0)
				continue;
			bool drop = is_drop_name(b->eth.name[i]);
			seen[D_DRIVER] |= drop;
			fprintf(out, "%7.2f   ethtool  %-32s %12.0f /s%s\n", t, b->eth.name[i],
				rf_rate(d, dt), drop ? "  <- DROP" : "");
			if (o->json) {
				char c[48];
				snprintf(c, sizeof(c), "ethtool_%s", b->eth.name[i]);
				json(o, t, c, rf_rate(d, dt), "1/s");
			}
		}
	}
	fflush(out);
	if (o->json)
		fflush(stdout); /* a sample is complete: a reader that stops us keeps every line */
}

static void header(const struct opts *o, const struct sample *s, FILE *out)
{
	fprintf(out, "ringflow-netstat: %s%s%s, every %.2f s, %u samples; rates per second\n",
		o->dev, o->netns ? " in netns " : "", o->netns ? o->netns : "", o->interval,
		o->count);
	if (s->eth_rc == 0 && s->eth.n > 0)
		fprintf(out, "driver counters (ethtool -S): %u, listed when they change\n", s->eth.n);
	else
		fprintf(out, "driver counters (ethtool -S): none (%s)\n",
			(s->eth_rc == 0 || s->eth_rc == -EOPNOTSUPP) ? "the driver has no statistics"
						 : strerror(-s->eth_rc));
	fprintf(out, "%7s %-10s %10s %10s %9s %9s %9s %9s %8s %8s %8s\n", "t s", "IFACE",
		"rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "rxdrop/s", "txdrop/s", "rxerr/s",
		"txerr/s", "rxfifo/s");
	fprintf(out, "%7s   %-8s %10s %10s %9s %9s %9s %9s\n", "", "CPU", "process/s", "dropped/s",
		"squeeze/s", "rps_ipi/s", "flowlim/s", "backlog");
	fprintf(out, "%7s   %-8s %10s %10s %9s %9s %9s %9s\n", "", "UDP", "in/s", "out/s",
		"rcvbuf/s", "inerr/s", "sndbuf/s", "noport/s");
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-netstat --dev IFACE [--interval S] [--count N] [--netns NAME] "
		"[--json]\n"
		"Samples /proc/net/dev (IFACE), /proc/net/softnet_stat (per CPU), the driver's\n"
		"ethtool -S counters (SIOCETHTOOL) and /proc/net/snmp Udp:, and prints rates per\n"
		"second, marking drops and saying what each one means.\n"
		"  --interval S  seconds between samples (default 1)\n"
		"  --count N     number of intervals printed (default 5)\n"
		"  --netns NAME  read inside network namespace NAME (/run/netns/NAME; needs root)\n"
		"  --json        JSON lines on stdout (bench/impl/case/value/unit), table on stderr\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.interval = 1.0, .count = 5};
	static const struct option lo[] = {
		{"dev", required_argument, 0, 'd'},   {"interval", required_argument, 0, 'i'},
		{"count", required_argument, 0, 'c'}, {"netns", required_argument, 0, 'n'},
		{"json", no_argument, 0, 'j'},        {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': o->dev = optarg; break;
		case 'i': o->interval = atof(optarg); break;
		case 'c': o->count = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': o->netns = optarg; break;
		case 'j': o->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (!o->dev) {
		fprintf(stderr, "ringflow-netstat: which interface? give --dev IFACE (see `ip -br "
				"link`)\n");
		return 2;
	}
	if (o->interval < 0.01 || o->interval > 3600 || o->count == 0 || o->count > 100000) {
		fprintf(stderr, "ringflow-netstat: --interval must be 0.01..3600 s and --count "
				"1..100000\n");
		return 2;
	}
	return 0;
}

static int enter_netns(const char *name)
{
	char path[300];
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "ringflow-netstat: cannot enter netns '%s': %s (see `ip netns list`; "
				"needs root)\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.netns && enter_netns(o.netns))
		return 1;
	FILE *out = o.json ? stderr : stdout;
	static struct sample s[2];
	rc = take(&s[0], o.dev);
	if (rc == -ENODEV) {
		fprintf(stderr, "ringflow-netstat: no interface '%s' in this network namespace (see "
				"`ip -br link`; for another namespace add --netns NAME)\n", o.dev);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "ringflow-netstat: cannot read the /proc/net counters: %s\n",
			strerror(-rc));
		return 1;
	}
	header(&o, &s[0], out);
	bool seen[D_KINDS] = {false};
	double t0 = s[0].t;
	for (unsigned i = 0; i < o.count; i++) {
		struct sample *a = &s[i & 1], *b = &s[(i + 1) & 1];
		struct timespec ts = {.tv_sec = (time_t)o.interval,
				      .tv_nsec = (long)((o.interval - (double)(time_t)o.interval) * 1e9)};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		rf_ethtool_stats_free(&b->eth);
		rc = take(b, o.dev);
		if (rc) {
			fprintf(stderr, "ringflow-netstat: interface '%s' went away (%s)\n", o.dev,
				strerror(-rc));
			break;
		}
		report(&o, a, b, t0, seen, out);
	}
	bool any = false;
	for (int k = 0; k < D_KINDS; k++)
		if (seen[k]) {
			if (!any)
				fprintf(out, "drops (and squeezes) seen:\n");
			any = true;
			fprintf(out, "  %s\n", drop_help[k]);
		}
	if (!any)
		fprintf(out, "no drops in %u intervals\n", o.count);
	rf_ethtool_stats_free(&s[0].eth);
	rf_ethtool_stats_free(&s[1].eth);
	return rc ? 1 : 0;
}
