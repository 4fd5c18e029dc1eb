/*
 * runtime/stats_sources.c: how the registry reads each kind of source into samples: a
 * runtime's pollers, a device (and each of its queues), a ring (or slot ring), a packet-buffer pool, an app's counters.
 *
 * Reading a source is only loads of counters their owners write with relaxed stores, plus
 * the mempool's slow-path lock (rf_mempool_stats_get: the lock the pollers take only when a
 * thread first uses a pool or exits), so no read ever makes a poller wait.
 */
#include <stdio.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>
#include <ringflow/slotring.h>
#include <ringflow/stats.h>

#include "stats_pvt.h"

/* As rf_stats_emit_u64 with a Prometheus scale (ns counted, seconds shown). */
static void emit_scaled(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
			const char *metric, const char *labels, const char *help, uint64_t v,
			double scale)
{
	size_t n = s->n;
	rf_stats_emit_u64(s, type, path, metric, labels, help, v);
	if (s->n > n)
		s->v[n].scale = scale;
}

static void read_runtime(struct rf_stat_set *s, const struct rf_runtime *rt)
{
	char path[128], lab[64];
	for (unsigned i = 0; i < rf_runtime_ncores(rt); i++) {
		struct rf_counters c;
		rf_runtime_counters(rt, i, &c);
		snprintf(lab, sizeof(lab), "poller=%u,core=%d", i, rf_runtime_cpu(rt, i));
#define P(field) (snprintf(path, sizeof(path), "pollers/%u/%s", i, field), path)
		rf_stats_emit_u64(s, RF_STAT_GAUGE, P("cpu"), NULL, NULL, NULL,
				  (uint64_t)rf_runtime_cpu(rt, i));
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("rx"), "poller_rx_total", lab,
				  "Messages received by the poller's poll functions", c.rx);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("tx"), "poller_tx_total", lab,
				  "Messages sent by the poller's poll functions", c.tx);
		char l2[96];
		snprintf(l2, sizeof(l2), "%s,reason=ring_full", lab);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("drop_ring_full"), "poller_drops_total", l2,
				  "Messages the poller dropped, by reason", c.drop_ring_full);
		snprintf(l2, sizeof(l2), "%s,reason=pool_empty", lab);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("drop_pool_empty"), "poller_drops_total", l2,
				  "Messages the poller dropped, by reason", c.drop_pool_empty);
		snprintf(l2, sizeof(l2), "%s,reason=driver", lab);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("drop_driver"), "poller_drops_total", l2,
				  "Messages the poller dropped, by reason", c.drop_driver);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("rounds"), "poller_rounds_total", lab,
				  "Poll rounds (every poll function called once)", c.loops);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("busy_rounds"), "poller_busy_rounds_total", lab,
				  "Poll rounds that did work", c.busy_rounds);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("idle_blocks"), "poller_idle_blocks_total", lab,
				  "Times the poller blocked for idleness (adaptive)", c.idle_blocks);
		emit_scaled(s, RF_STAT_COUNTER, P("busy_ns"), "poller_busy_seconds_total", lab,
			    "Time in rounds that did work", c.busy_ns, 1e-9);
		emit_scaled(s, RF_STAT_COUNTER, P("idle_ns"), "poller_idle_seconds_total", lab,
			    "Time in empty rounds (polling, nothing found)", c.idle_ns, 1e-9);
		emit_scaled(s, RF_STAT_COUNTER, P("sleep_ns"), "poller_sleep_seconds_total", lab,
			    "Time blocked for idleness (adaptive)", c.sleep_ns, 1e-9);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, P("stalls"), "poller_stalls_total", lab,
				  "Gaps between rounds over the stall threshold (stall_us)", c.stalls);
		emit_scaled(s, RF_STAT_GAUGE, P("stall_max_ns"), "poller_stall_max_seconds", lab,
			    "Longest gap between two rounds (stall meter on)", c.stall_max_ns, 1e-9);
		/* Work per busy round: bucket k holds [2^k, 2^(k+1)), so its le is 2^(k+1) - 1;
		 * the sum is all work of busy rounds, the count the busy rounds. */
		uint64_t bh[RF_RUNTIME_BATCH_BUCKETS];
		if (rf_runtime_batch_hist(rt, i, bh) == 0) {
			struct rf_stats_hist h;
			memset(&h, 0, sizeof(h));
			h.nb = RF_RUNTIME_BATCH_BUCKETS - 1;
			uint64_t work = 0;
			for (unsigned k = 0; k < RF_RUNTIME_BATCH_BUCKETS; k++) {
				if (k < h.nb)
					h.le[k] = (2ull << k) - 1;
				atomic_store_explicit(&h.cnt[k], bh[k], memory_order_relaxed);
			}
			for (unsigned k = 0; k < rf_runtime_npolls(rt, i); k++) {
				struct rf_poll_counters pc;
				if (rf_runtime_poll_counters(rt, i, k, &pc) == 0)
					work += pc.work;
			}
			atomic_store_explicit(&h.sum, work, memory_order_relaxed);
			rf_stats_emit_hist(s, P("batch"), "poller_batch_size", lab,
					   "Work per busy round (messages per burst, usually)", &h);
		}
		for (unsigned k = 0; k < rf_runtime_npolls(rt, i); k++) {
			struct rf_poll_counters pc;
			if (rf_runtime_poll_counters(rt, i, k, &pc))
				continue;
			char l3[128];
			snprintf(l3, sizeof(l3), "%s,poll=%s", lab, pc.name);
			snprintf(path, sizeof(path), "pollers/%u/polls/%s/work", i, pc.name);
			rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "poll_work_total", l3,
					  "Work a poll function reported (messages, usually)", pc.work);
			snprintf(path, sizeof(path), "pollers/%u/polls/%s/busy_rounds", i, pc.name);
			rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "poll_busy_rounds_total", l3,
					  "Calls of a poll function that did work", pc.rounds);
		}
#undef P
	}
}

static void read_dev(struct rf_stat_set *s, const char *name, struct rf_io_dev *dev)
{
	struct rf_io_stats io;
	rf_io_stats_get(dev, &io);
	char path[128], lab[96];
	snprintf(lab, sizeof(lab), "port=%s,driver=%s", name, rf_io_driver_name(dev));
#define D(field) (snprintf(path, sizeof(path), "ports/%s/%s", name, field), path)
	rf_stats_emit_text(s, D("driver"), rf_io_driver_name(dev));
	rf_stats_emit_u64(s, RF_STAT_GAUGE, D("queues"), "port_queues", lab, "Queues of the device",
			  rf_io_nqueues(dev));
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("rx_pkts"), "port_rx_packets_total", lab,
			  "Messages the driver handed to the app", io.rx_pkts);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("rx_bytes"), "port_rx_bytes_total", lab,
			  "Payload bytes the driver handed to the app", io.rx_bytes);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("tx_pkts"), "port_tx_packets_total", lab,
			  "Messages the driver sent or queued", io.tx_pkts);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("tx_bytes"), "port_tx_bytes_total", lab,
			  "Payload bytes the driver sent or queued", io.tx_bytes);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("rx_nobuf"), "port_rx_nobuf_total", lab,
			  "Receive bursts that found the buffer pool empty", io.rx_nobuf);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("rx_drops"), "port_rx_drops_total", lab,
			  "Messages the driver dropped on receive", io.rx_drops);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("tx_drops"), "port_tx_drops_total", lab,
			  "Messages the driver took but could not send", io.tx_drops);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, D("conns_open"), "port_connections", lab,
			  "Connections open now (connection drivers)", io.conns_open);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, D("conns_total"), "port_connections_total", lab,
			  "Connections accepted or made since open", io.conns_total);
	/* Each queue's own counters (its poller writes them, on the queue's own line), under
	 * ports/NAME/per_queue/Q/ and as ringflow_queue_* with a queue label. */
	for (unsigned q = 0; q < rf_io_nqueues(dev); q++) {
		struct rf_io_stats qs;
		if (rf_io_queue_stats_get(dev, q, &qs))
			break;
		char ql[128];
		snprintf(ql, sizeof(ql), "%s,queue=%u", lab, q);
#define Q(field) (snprintf(path, sizeof(path), "ports/%.40s/per_queue/%u/%s", name, q, field), path)
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("rx_pkts"), "queue_rx_packets_total", ql,
				  "Messages the driver handed to the app on this queue", qs.rx_pkts);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("rx_bytes"), "queue_rx_bytes_total", ql,
				  "Payload bytes the driver handed to the app on this queue", qs.rx_bytes);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("tx_pkts"), "queue_tx_packets_total", ql,
				  "Messages the driver sent or queued on this queue", qs.tx_pkts);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("tx_bytes"), "queue_tx_bytes_total", ql,
				  "Payload bytes the driver sent or queued on this queue", qs.tx_bytes);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("rx_nobuf"), "queue_rx_nobuf_total", ql,
				  "Receive bursts of this queue that found the buffer pool empty",
				  qs.rx_nobuf);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("rx_drops"), "queue_rx_drops_total", ql,
				  "Messages dropped on receive on this queue", qs.rx_drops);
		rf_stats_emit_u64(s, RF_STAT_COUNTER, Q("tx_drops"), "queue_tx_drops_total", ql,
				  "Messages this queue took but could not send", qs.tx_drops);
#undef Q
	}
	int up = rf_io_link_up(dev);
	if (up >= 0)
		rf_stats_emit_u64(s, RF_STAT_GAUGE, D("link_up"), "port_link_up", lab,
				  "1 when the device's link is up (drivers that know it)", (uint64_t)up);
	/* The driver's extended counters (rf_io_xstats_get): a gauge each, since a driver's
	 * list mixes counters and levels (e.g. mbufs_in_use). */
	struct rf_io_xstat xs[64];
	int nx = rf_io_xstats_get(dev, xs, 64);
	for (int i = 0; i < nx && i < 64; i++) {
		char xl[160];
		snprintf(xl, sizeof(xl), "%s,xstat=%.31s", lab, xs[i].name);
		snprintf(path, sizeof(path), "ports/%.40s/xstats/%.31s", name, xs[i].name);
		rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "port_xstat", xl,
				  "A driver's extended counter (rf_io_xstats_get)", xs[i].value);
	}
#undef D
}

/* A ring's failed enqueues: calls that fell short, and the objects they could not place. */
static void emit_fail(struct rf_stat_set *s, const char *name, const char *lab, uint64_t calls,
		      uint64_t objs)
{
	char path[128];
	snprintf(path, sizeof(path), "rings/%s/enqueue_failures", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "ring_enqueue_failures_total", lab,
			  "Enqueue calls that found the ring too full for all their objects", calls);
	snprintf(path, sizeof(path), "rings/%s/enqueue_failed_objects", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "ring_enqueue_failed_objects_total", lab,
			  "Objects those enqueue calls could not place", objs);
}

static void read_ring(struct rf_stat_set *s, const char *name, const struct rf_ring *r)
{
	char path[128], lab[64];
	snprintf(lab, sizeof(lab), "ring=%s", name);
	snprintf(path, sizeof(path), "rings/%s/count", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "ring_entries", lab, "Entries in the ring now",
			  rf_ring_count(r));
	snprintf(path, sizeof(path), "rings/%s/capacity", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "ring_capacity", lab, "Slots of the ring",
			  rf_ring_get_capacity(r));
	uint64_t objs, calls = rf_ring_enqueue_failures(r, &objs);
	emit_fail(s, name, lab, calls, objs);
}

static void read_slotring(struct rf_stat_set *s, const char *name, const struct rf_slotring *r)
{
	char lab[64];
	snprintf(lab, sizeof(lab), "ring=%s", name);
	uint64_t objs, calls = rf_slotring_enqueue_failures(r, &objs);
	emit_fail(s, name, lab, calls, objs);
}

static void read_pool(struct rf_stat_set *s, const char *name, const struct rf_pktbuf_pool *p)
{
	char path[128], lab[64];
	snprintf(lab, sizeof(lab), "pool=%s", name);
	struct rf_mempool *mp = rf_pktbuf_pool_mempool((struct rf_pktbuf_pool *)p);
	struct rf_mempool_stats ms;
	rf_mempool_stats_get(mp, &ms); /* zeroes for an external pool */
	unsigned avail = mp ? ms.avail : rf_pktbuf_pool_avail(p);
	unsigned n = ms.n;
	snprintf(path, sizeof(path), "mempools/%s/size", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "mempool_objects", lab, "Objects in the pool", n);
	snprintf(path, sizeof(path), "mempools/%s/avail", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "mempool_available", lab,
			  "Free objects (common ring and every thread's cache)", avail);
	snprintf(path, sizeof(path), "mempools/%s/in_use", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "mempool_in_use", lab, "Objects handed out",
			  n >= avail ? n - avail : 0);
	snprintf(path, sizeof(path), "mempools/%s/cache_hits", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "mempool_cache_hits_total", lab,
			  "Gets a thread's cache served alone (no ring access)", ms.cache_hits);
	uint64_t gets = ms.cache_hits + ms.cache_misses;
	snprintf(path, sizeof(path), "mempools/%s/cache_hit_rate", name);
	rf_stats_emit_double(s, path, "mempool_cache_hit_ratio", lab,
			     "Cache hits over all cached gets since start (0 before the first get)",
			     gets ? (double)ms.cache_hits / (double)gets : 0.0);
	snprintf(path, sizeof(path), "mempools/%s/cache_misses", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "mempool_cache_misses_total", lab,
			  "Gets a thread's cache could not serve alone (they went to the ring)",
			  ms.cache_misses);
	snprintf(path, sizeof(path), "mempools/%s/cache_flushes", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "mempool_cache_flushes_total", lab,
			  "Puts that flushed a thread's cache to the ring", ms.cache_flushes);
	snprintf(path, sizeof(path), "mempools/%s/empty", name);
	rf_stats_emit_u64(s, RF_STAT_COUNTER, path, "mempool_empty_total", lab,
			  "Gets that failed: the pool was empty", ms.empty);
	snprintf(path, sizeof(path), "mempools/%s/hugepages", name);
	rf_stats_emit_u64(s, RF_STAT_GAUGE, path, "mempool_hugepages", lab,
			  "1 when the pool sits on hugepages", mp && rf_mempool_on_hugepages(mp));
}

void rf_stats_read_src(struct rf_stat_set *s, const struct rf_stats_src *x)
{
	char path[128];
	snprintf(path, sizeof(path), "app/%s", x->name);
	switch (x->kind) {
	case SRC_RUNTIME: read_runtime(s, x->ptr); break;
	case SRC_DEV: read_dev(s, x->name, (struct rf_io_dev *)x->ptr); break;
	case SRC_RING: read_ring(s, x->name, x->ptr); break;
	case SRC_SLOTRING: read_slotring(s, x->name, x->ptr); break;
	case SRC_POOL: read_pool(s, x->name, x->ptr); break;
	case SRC_COUNTER:
	case SRC_GAUGE: {
		char metric[64];
		snprintf(metric, sizeof(metric), "%s%s", x->name, x->kind == SRC_COUNTER ? "_total" : "");
		/* Relaxed: single writer, a snapshot. */
		rf_stats_emit_u64(s, x->kind == SRC_COUNTER ? RF_STAT_COUNTER : RF_STAT_GAUGE, path,
				  metric, NULL, x->help,
				  atomic_load_explicit((const _Atomic uint64_t *)x->ptr,
						       memory_order_relaxed));
		break;
	}
	case SRC_GAUGE_FN: rf_stats_emit_double(s, path, x->name, NULL, x->help, x->gauge_fn(x->arg)); break;
	case SRC_HIST: rf_stats_emit_hist(s, path, x->name, NULL, x->help, x->ptr); break;
	case SRC_FN: x->fn(s, x->arg); break;
	}
}
