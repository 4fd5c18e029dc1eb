/*
 * ringflow/stats.h: the stats registry: every counter of a running dataplane, in one place,
 * readable at any time without stopping the pollers.
 *
 * The one idea: the registry holds no numbers. It holds *sources* (a runtime, a device, a
 * ring, a pool, an app's counter, gauge, histogram or callback) and reads them when asked,
 * on the asking thread (the control socket's, rf_ctl in ctl.h). Every source it reads is
 * written by a single owner with relaxed stores (the per-core counters of runtime.h, the
 * drivers' rf_io_stats, the time meter), so a read is a handful of relaxed loads and the
 * fast path gets no new shared write and never waits for a reader.
 *
 * A read produces a flat list of samples (struct rf_stat). Each sample has a JSON path
 * ("ports/echo0/rx_pkts": where it sits in the tree the control socket shows) and a
 * Prometheus metric name and labels (ringflow_port_rx_packets_total{port="echo0"}); the
 * writers below turn the list into either. docs/observing.md lists every name.
 *
 * Reset (rf_stats_reset) never writes a source: it stores the counters' current values, and
 * the JSON views subtract them. Prometheus counters are never reset (rate() expects that).
 *
 * Thread-safety: every function may be called from any thread; registration and reads are
 * serialised by the registry's lock (which pollers never take). A source must outlive its
 * registration (remove it or destroy the registry first).
 *
 * Errors: int functions return 0 or a negative errno.
 */
#ifndef RINGFLOW_STATS_H
#define RINGFLOW_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/json.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

struct rf_runtime;
struct rf_io_dev;
struct rf_ring;
struct rf_slotring;
struct rf_pktbuf_pool;
struct rf_stats;

enum rf_stat_type {
	RF_STAT_COUNTER,   /* only grows */
	RF_STAT_GAUGE,     /* goes up and down */
	RF_STAT_HISTOGRAM, /* counts in buckets (struct rf_stats_hist) */
	RF_STAT_TEXT,      /* JSON only: a name, a driver, a mode */
};

/* ---- app histograms (HDR-style buckets, one writer) ------------------------------------- */

#define RF_STATS_HIST_MAX 48 /* buckets (plus one above the last bound) */

/* A histogram of integer values (e.g. ns) with fixed upper bounds. One thread records;
 * anyone reads (relaxed loads; a snapshot may be a few records behind). */
struct rf_stats_hist {
	unsigned nb;                            /* bounds in use */
	uint64_t le[RF_STATS_HIST_MAX];         /* upper bounds, ascending */
	double scale;                           /* Prometheus value = value * scale; 0 = 1 */
	_Atomic(uint64_t) cnt[RF_STATS_HIST_MAX + 1]; /* cnt[nb]: above every bound */
	_Atomic(uint64_t) count, sum;
};

/* Bounds first, first*factor, ... (nb of them, factor > 1, rounded up to integers, strictly
 * ascending). scale as in the struct. 0 or -EINVAL. */
int rf_stats_hist_init(struct rf_stats_hist *h, uint64_t first, double factor, unsigned nb,
		       double scale);

/* Record v (the histogram's one writer only; no read-modify-write). */
static inline void rf_stats_hist_record(struct rf_stats_hist *h, uint64_t v)
{
	unsigned lo = 0, hi = h->nb; /* first bound >= v, or nb */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (h->le[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* Relaxed load + store: one writer, readers want each value, not an order. */
	atomic_store_explicit(&h->cnt[lo],
			      atomic_load_explicit(&h->cnt[lo], memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&h->count, atomic_load_explicit(&h->count, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&h->sum, atomic_load_explicit(&h->sum, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

/* ---- samples ---------------------------------------------------------------------------- */

/* A histogram as read: bounds, per-bucket (not cumulative) counts, count and sum. */
struct rf_stat_hist_snap {
	unsigned nb;
	double scale;
	uint64_t le[RF_STATS_HIST_MAX];
	uint64_t cnt[RF_STATS_HIST_MAX + 1];
	uint64_t count, sum;
};

/* One value read from a source. */
struct rf_stat {
	enum rf_stat_type type;
	char path[128];   /* JSON path, '/'-separated */
	char metric[64];  /* Prometheus name without the "ringflow_" prefix ("" = JSON only) */
	char labels[128]; /* "port=echo0,queue=0" (values without ',' or '='), or "" */
	const char *help; /* one line, static storage */
	bool is_double;   /* value in d, else in u */
	uint64_t u;
	double d;
	double scale;     /* Prometheus shows u * scale (e.g. 1e-9: ns as seconds); 0 = 1 */
	char text[64];    /* RF_STAT_TEXT */
	struct rf_stat_hist_snap *hist; /* RF_STAT_HISTOGRAM (owned by the set) */
};

/* A list of samples; at most max (then full is set and later samples are dropped). */
struct rf_stat_set {
	struct rf_stat *v;
	size_t n, cap, max;
	bool full;
};

void rf_stat_set_init(struct rf_stat_set *s, size_t max);
void rf_stat_set_free(struct rf_stat_set *s);

/* Add a sample (what a callback source does). metric may be NULL (JSON only), labels NULL. */
void rf_stats_emit_u64(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
		       const char *metric, const char *labels, const char *help, uint64_t v);
void rf_stats_emit_double(struct rf_stat_set *s, const char *path, const char *metric,
			  const char *labels, const char *help, double v); /* a gauge */
void rf_stats_emit_text(struct rf_stat_set *s, const char *path, const char *text);
void rf_stats_emit_hist(struct rf_stat_set *s, const char *path, const char *metric,
			const char *labels, const char *help, const struct rf_stats_hist *h);

/* A callback source: add this source's samples to s (on the reading thread). */
typedef void (*rf_stats_fn)(struct rf_stat_set *s, void *arg);

/* ---- the registry ----------------------------------------------------------------------- */

/* A registry for app (its name: label app="..." on every metric, and the socket's name).
 * NULL + errno on bad name (empty, over 31 characters, not [A-Za-z0-9_.-]) or no memory. */
struct rf_stats *rf_stats_create(const char *app);
void rf_stats_destroy(struct rf_stats *st); /* NULL: no-op */
const char *rf_stats_app(const struct rf_stats *st);

/* Sources. name: the source's key in the tree and its label value ([A-Za-z0-9_.-], at most
 * 31 characters); -EINVAL on a bad name, -EEXIST when taken, -ENOMEM. */
int rf_stats_add_runtime(struct rf_stats *st, struct rf_runtime *rt); /* "pollers/..." */
int rf_stats_add_dev(struct rf_stats *st, const char *name, struct rf_io_dev *dev); /* "ports/NAME/..." */
int rf_stats_add_ring(struct rf_stats *st, const char *name, const struct rf_ring *r); /* "rings/NAME/..." */
/* A slot ring (slotring.h) under "rings/NAME/...": its failed enqueues (it has no entry count). */
int rf_stats_add_slotring(struct rf_stats *st, const char *name, const struct rf_slotring *r);
int rf_stats_add_pool(struct rf_stats *st, const char *name, const struct rf_pktbuf_pool *p); /* "mempools/NAME/..." */
/* App values under "app/NAME": a counter or gauge one thread writes, a histogram, a
 * gauge computed by fn, or a callback that adds any samples. help: static storage. */
int rf_stats_add_counter(struct rf_stats *st, const char *name, const char *help,
			 const _Atomic(uint64_t) *c);
int rf_stats_add_gauge(struct rf_stats *st, const char *name, const char *help,
		       const _Atomic(uint64_t) *g);
int rf_stats_add_gauge_fn(struct rf_stats *st, const char *name, const char *help,
			  double (*fn)(void *arg), void *arg);
int rf_stats_add_hist(struct rf_stats *st, const char *name, const char *help,
		      const struct rf_stats_hist *h);
int rf_stats_add_fn(struct rf_stats *st, const char *name, rf_stats_fn fn, void *arg);
/* Remove the source added under name (runtime: "pollers"). 0 or -ENOENT. */
int rf_stats_remove(struct rf_stats *st, const char *name);

/* Read every source into s (s is not cleared first). */
void rf_stats_collect(struct rf_stats *st, struct rf_stat_set *s);

/* Remember the counters' current values; the JSON views show counts since this call. */
void rf_stats_reset(struct rf_stats *st);

/* The tree under path ("" or NULL: all; "ports/echo0"; a leaf gives its bare value) as one
 * JSON value into b. 0, -ENOENT (nothing under path), -E2BIG (b's ceiling was reached). */
int rf_stats_write_json(struct rf_stats *st, const char *path, struct rf_buf *b);

/* Every metric in the Prometheus text exposition format (version 0.0.4) into b. 0 or
 * -E2BIG. */
int rf_stats_write_prometheus(struct rf_stats *st, struct rf_buf *b);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_STATS_H */
