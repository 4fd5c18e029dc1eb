/*
 * apps/ofswitch/sw_agent_obs.c: what the agent shows the control socket and --metrics
 * (docs/observing.md): per connection slot, the PACKET_INs sent and dropped (by the rate
 * limit, sw_pinrate.h, or because the connection's socket was full), the sessions closed
 * because the controller did not read (its output queue full or stuck, sw_out.h), and the
 * classifier's
 * subtables and the flows as gauges; the same in one line every --stats-interval and when
 * the switch stops. The agent is their only writer; the control thread reads them through
 * the registry, so they are relaxed atomics (snapshots of counters).
 */
#include <inttypes.h>

#include <ringflow/stats.h>

#include "sw_agent_pvt.h"

/* app/packet_in/<slot>/{sent,drop_rate,drop_busy}: slots 0..7 are --controller i, 8.. the
 * --listen clients; every slot that ever had a session. Totals under app/packet_in/. */
static void pin_samples(struct rf_stat_set *s, void *arg)
{
	const struct sw_agent *a = arg;
	static const char *const name[] = {"sent", "drop_rate", "drop_busy"};
	static const char *const help[] = {
		"PACKET_IN messages sent to this connection",
		"PACKET_IN messages dropped by the connection's rate limit (--packet-in-rate)",
		"PACKET_IN messages dropped: the connection's socket was full"};
	uint64_t tot[3] = {0, 0, 0};
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		const struct sw_conn *c = &a->conns[i];
		/* relaxed: counters of one writer, read as a snapshot */
		uint64_t v[3] = {atomic_load_explicit(&c->pin_sent, memory_order_relaxed),
				 atomic_load_explicit(&c->pin_drop_rate, memory_order_relaxed),
				 atomic_load_explicit(&c->pin_drop_busy, memory_order_relaxed)};
		for (unsigned k = 0; k < 3; k++)
			tot[k] += v[k];
		if (!v[0] && !v[1] && !v[2] && i >= a->cfg.ncontrollers)
			continue;
		for (unsigned k = 0; k < 3; k++) {
			char path[96], metric[64], lab[32];
			snprintf(path, sizeof(path), "app/packet_in/conn%u/%s", i, name[k]);
			snprintf(metric, sizeof(metric), "switch_packet_in_%s_total", name[k]);
			snprintf(lab, sizeof(lab), "conn=%u", i);
			rf_stats_emit_u64(s, RF_STAT_COUNTER, path, metric, lab, help[k], v[k]);
		}
	}
	for (unsigned k = 0; k < 3; k++) {
		char path[96];
		snprintf(path, sizeof(path), "app/packet_in/%s", name[k]);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, path, NULL, NULL, help[k], tot[k]);
	}
}

/* app/conn/<slot>/closed_unread (every slot that ever had a session closed so, and the
 * --controller slots) and the total app/conn/closed_unread. */
static void conn_samples(struct rf_stat_set *s, void *arg)
{
	const struct sw_agent *a = arg;
	static const char help[] = "Sessions closed because the controller did not read "
				   "(queued output over its bound or stuck for an echo interval)";
	uint64_t tot = 0;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		/* relaxed: a counter of one writer, read as a snapshot */
		uint64_t v = atomic_load_explicit(&a->conns[i].closed_unread, memory_order_relaxed);
		tot += v;
		if (!v && i >= a->cfg.ncontrollers)
			continue;
		char path[96], lab[32];
		snprintf(path, sizeof(path), "app/conn/conn%u/closed_unread", i);
		snprintf(lab, sizeof(lab), "conn=%u", i);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "switch_conn_closed_unread_total", lab,
				  help, v);
	}
	rf_stats_emit_u64(s, RF_STAT_COUNTER, "app/conn/closed_unread", NULL, NULL, help, tot);
}

int sw_agent_obs_register(struct sw_agent *a, struct rf_stats *reg)
{
	int rc = rf_stats_add_fn(reg, "packet_in", pin_samples, a);
	if (rc == 0)
		rc = rf_stats_add_fn(reg, "conn", conn_samples, a);
	if (rc == 0)
		rc = rf_stats_add_gauge(reg, "switch_subtables",
					"Subtables (distinct masks) of the classifier", &a->g_subtables);
	if (rc == 0)
		rc = rf_stats_add_gauge(reg, "switch_flows", "Flows in the flow tables", &a->g_flows);
	return rc;
}

void agent_obs_update(struct sw_agent *a)
{
	struct sw_table *t = atomic_load_explicit(&a->dp->table, memory_order_relaxed); /* ours */
	/* relaxed: plain values for the reader, nothing published through them */
	atomic_store_explicit(&a->g_subtables, t ? sw_table_nsubtables(t) : 0, memory_order_relaxed);
	atomic_store_explicit(&a->g_flows, a->nflows, memory_order_relaxed);
}

void agent_obs_print(const struct sw_agent *a)
{
	fprintf(stderr, "ringflow-switch: flows %" PRIu64 " subtables %" PRIu64 "; ",
		atomic_load_explicit(&a->g_flows, memory_order_relaxed),
		atomic_load_explicit(&a->g_subtables, memory_order_relaxed));
	uint64_t v[4] = {0, 0, 0, 0};
	size_t high = 0; /* the agent's own (this runs on its thread) */
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		high = a->conns[i].out.high > high ? a->conns[i].out.high : high;
		v[3] += atomic_load_explicit(&a->conns[i].closed_unread, memory_order_relaxed);
		v[0] += atomic_load_explicit(&a->conns[i].pin_sent, memory_order_relaxed);
		v[1] += atomic_load_explicit(&a->conns[i].pin_drop_rate, memory_order_relaxed);
		v[2] += atomic_load_explicit(&a->conns[i].pin_drop_busy, memory_order_relaxed);
	}
	fprintf(stderr, "packet_in: sent %" PRIu64 " drop: rate %" PRIu64
		" busy %" PRIu64 " (--packet-in-rate %" PRIu32 ",%" PRIu32 "); closed unread %" PRIu64
		"; queued max %zu\n", v[0], v[1], v[2], a->cfg.pin_rate, a->cfg.pin_burst, v[3], high);
}
