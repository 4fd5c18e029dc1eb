/*
 * apps/l2fwd/l2fwd_stats.c: ringflow-l2fwd's counters: per-port rates every --stats seconds
 * (a human line or a JSON line on stderr) and the per-direction totals at exit, which must
 * add up: frames received on A = frames the driver of B sent + frames dropped on the way
 * (by the forwarder when B's queue was full, or by B's driver after taking them).
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include <ringflow/offload.h>

#include "l2fwd.h"

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

void l2f_port_sums(const struct l2f *f, unsigned i, uint64_t *rx, uint64_t *sent,
		   uint64_t *dropped)
{
	*rx = *sent = *dropped = 0;
	for (unsigned u = 0; u < f->nunits; u++) {
		const struct l2f_unit *x = &f->units[u];
		if (x->in_port == i)
			*rx += ld(&x->rx);
		if (x->out_port == i) {
			*sent += ld(&x->sent);
			*dropped += ld(&x->dropped);
		}
	}
}

void l2f_stats_tick(void *arg)
{
	struct l2f *f = arg;
	uint64_t t = now_ns();
	double dt = f->last_ns ? (double)(t - f->last_ns) * 1e-9 : f->interval_s;
	char line[4096];
	size_t o = 0;

	if (f->json)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "{\"bench\":\"l2fwd\",\"t_ns\":%" PRIu64
				      ",\"ports\":[", t);
	for (unsigned i = 0; i < f->nports && o < sizeof(line); i++) {
		uint64_t rx, tx, dr;
		l2f_port_sums(f, i, &rx, &tx, &dr);
		double r = (double)(rx - f->last_rx[i]) / dt, s = (double)(tx - f->last_tx[i]) / dt,
		       d = (double)(dr - f->last_drop[i]) / dt;
		f->last_rx[i] = rx, f->last_tx[i] = tx, f->last_drop[i] = dr;
		if (f->json)
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      "%s{\"port\":%u,\"rx_pps\":%.0f,\"tx_pps\":%.0f,"
					      "\"drop_pps\":%.0f}", i ? "," : "", i, r, s, d);
		else
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      "%sport %u rx %.0f tx %.0f drop %.0f", i ? " | " : "",
					      i, r, s, d);
	}
	if (o < sizeof(line))
		snprintf(line + o, sizeof(line) - o, "%s", f->json ? "]}" : " (frames/s)");
	f->last_ns = t;
	fprintf(f->out, "%s%s\n", f->json ? "" : "ringflow-l2fwd: ", line);
	fflush(f->out);
}

void l2f_offload_sums(const struct l2f *f, unsigned i, uint64_t *offloaded, uint64_t *fallback)
{
	struct rf_offload_totals t;
	*offloaded = *fallback = 0;
	if (f->offloaded[i] && rf_offload_totals(f->ports[i], &t) == 0) {
		*offloaded = t.hits;
		*fallback = t.fallback_port_down + t.fallback_ttl;
	}
}

int l2f_print_totals(struct l2f *f, FILE *out)
{
	int bad = 0;
	for (unsigned a = 0; a < f->nports; a++) {
		unsigned b = a ^ 1u;
		uint64_t rx = 0, fwd = 0, dropped = 0;
		for (unsigned u = 0; u < f->nunits; u++)
			if (f->units[u].in_port == a) {
				rx += ld(&f->units[u].rx);
				fwd += ld(&f->units[u].sent);
				dropped += ld(&f->units[u].dropped);
			}
		/* What B's driver did with the frames it consumed: sent or dropped itself. */
		struct rf_io_stats sb, sa;
		rf_io_stats_get(f->ports[b], &sb);
		rf_io_stats_get(f->ports[a], &sa);
		uint64_t drops = dropped + sb.tx_drops;
		bool ok = rx == sb.tx_pkts + drops && fwd == sb.tx_pkts + sb.tx_drops;
		bad |= !ok;
		uint64_t off, fb;
		l2f_offload_sums(f, a, &off, &fb);
		if (f->offloaded[a] && f->json)
			fprintf(out, "{\"bench\":\"l2fwd\",\"case\":\"offload\",\"from\":%u,\"to\":%u,"
				"\"offloaded\":%" PRIu64 ",\"fallback\":%" PRIu64 "}\n", a, b, off, fb);
		else if (f->offloaded[a])
			fprintf(out, "ringflow-l2fwd: port %u -> %u: offloaded %" PRIu64 " (forwarded "
				"by the kernel; %" PRIu64 " matched but left to userspace)\n", a, b, off,
				fb);
		if (f->json)
			fprintf(out, "{\"bench\":\"l2fwd\",\"case\":\"total\",\"from\":%u,\"to\":%u,"
				"\"rx\":%" PRIu64 ",\"tx\":%" PRIu64 ",\"drops\":%" PRIu64
				",\"drops_queue_full\":%" PRIu64 ",\"drops_driver\":%" PRIu64
				",\"rx_driver_drops\":%" PRIu64 ",\"adds_up\":%s}\n", a, b, rx,
				sb.tx_pkts, drops, dropped, sb.tx_drops, sa.rx_drops,
				ok ? "true" : "false");
		else
			fprintf(out, "ringflow-l2fwd: port %u -> %u: rx %" PRIu64 " = tx %" PRIu64
				" + drops %" PRIu64 " (queue full %" PRIu64 ", driver %" PRIu64
				")%s; not delivered by port %u's driver: %" PRIu64 "\n", a, b, rx,
				sb.tx_pkts, drops, dropped, sb.tx_drops,
				ok ? "" : " DOES NOT ADD UP", a, sa.rx_drops);
	}
	for (unsigned i = 0; i < f->nports; i++) { /* the drivers' own counters, the non-zero ones */
		struct rf_io_xstat xs[64];
		int n = rf_io_xstats_get(f->ports[i], xs, 64);
		fprintf(out, f->json ? "{\"bench\":\"l2fwd\",\"case\":\"xstats\",\"port\":%u,"
				       "\"driver\":\"%s\"" : "ringflow-l2fwd: port %u (%s) xstats:",
			i, rf_io_driver_name(f->ports[i]));
		for (int j = 0; j < n && j < 64; j++)
			if (xs[j].value || f->json)
				fprintf(out, f->json ? ",\"%s\":%" PRIu64 : " %s %" PRIu64, xs[j].name,
					xs[j].value);
		fprintf(out, f->json ? "}\n" : "\n");
	}
	for (unsigned u = 0; u < f->nunits; u++) { /* how the device spread the frames over queues */
		const struct l2f_unit *x = &f->units[u];
		if (f->json)
			fprintf(out, "{\"bench\":\"l2fwd\",\"case\":\"queue\",\"port\":%u,"
				"\"queue\":%u,\"core\":%d,\"rx\":%" PRIu64 "}\n", x->in_port, x->rxq,
				x->core, ld(&x->rx));
		else
			fprintf(out, "ringflow-l2fwd: port %u queue %u (poller %d): rx %" PRIu64 "\n",
				x->in_port, x->rxq, x->core, ld(&x->rx));
	}
	fflush(out);
	return bad;
}
