/*
 * runtime/stats.c: the stats registry (stats.h): its list of sources, and how each kind of
 * source is read into samples. The writers (JSON tree, Prometheus text) are in stats_write.c.
 *
 * Reading a source is only loads of counters their owners write with relaxed stores, plus
 * rf_pktbuf_pool_avail, which takes the mempool's slow-path lock (the one the pollers take
 * only when a thread first uses a pool), so no read ever makes a poller wait.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#include "stats_pvt.h"

enum src_kind { SRC_RUNTIME, SRC_DEV, SRC_RING, SRC_POOL, SRC_COUNTER, SRC_GAUGE, SRC_GAUGE_FN,
		SRC_HIST, SRC_FN };

struct src {
	enum src_kind kind;
	char name[32];
	const void *ptr;
	double (*gauge_fn)(void *);
	rf_stats_fn fn;
	void *arg;
	const char *help;
};

/* ---- histograms and sample sets --------------------------------------------------------- */

int rf_stats_hist_init(struct rf_stats_hist *h, uint64_t first, double factor, unsigned nb,
		       double scale)
{
	if (!h || !first || !(factor > 1.0) || nb == 0 || nb > RF_STATS_HIST_MAX)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	double b = (double)first;
	uint64_t prev = 0;
	for (unsigned i = 0; i < nb; i++) {
		uint64_t v = (uint64_t)ceil(b);
		if (v <= prev)
			v = prev + 1;
		h->le[i] = prev = v;
		b *= factor;
	}
	h->nb = nb;
	h->scale = scale;
	return 0;
}

void rf_stat_set_init(struct rf_stat_set *s, size_t max)
{
	*s = (struct rf_stat_set){.max = max ? max : 1};
}

void rf_stat_set_free(struct rf_stat_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].hist);
	free(s->v);
	*s = (struct rf_stat_set){.max = s->max};
}

/* s (NULL: "") into dst, cut to fit. */
static void copy(char *dst, size_t len, const char *s)
{
	size_t n = s ? strnlen(s, len - 1) : 0;
	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

static struct rf_stat *slot(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
			    const char *metric, const char *labels, const char *help)
{
	if (s->n == s->max) {
		s->full = true;
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		if (cap > s->max)
			cap = s->max;
		struct rf_stat *v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			s->full = true;
			return NULL;
		}
		s->v = v;
		s->cap = cap;
	}
	struct rf_stat *x = &s->v[s->n++];
	/* Field by field: a memset of the whole (mostly string) struct is most of a read. */
	x->type = type;
	copy(x->path, sizeof(x->path), path);
	copy(x->metric, sizeof(x->metric), metric);
	copy(x->labels, sizeof(x->labels), labels);
	x->help = help ? help : "";
	x->is_double = false;
	x->u = 0;
	x->d = 0;
	x->scale = 0;
	x->text[0] = '\0';
	x->hist = NULL;
	return x;
}

void rf_stats_emit_u64(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
		       const char *metric, const char *labels, const char *help, uint64_t v)
{
	struct rf_stat *x = slot(s, type, path, metric, labels, help);
	if (x)
		x->u = v;
}

/* As rf_stats_emit_u64 with a Prometheus scale (ns counted, seconds shown). */
static void emit_scaled(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
			const char *metric, const char *labels, const char *help, uint64_t v,
			double scale)
{
	struct rf_stat *x = slot(s, type, path, metric, labels, help);
	if (x) {
		x->u = v;
		x->scale = scale;
	}
}

void rf_stats_emit_double(struct rf_stat_set *s, const char *path, const char *metric,
			  const char *labels, const char *help, double v)
{
	struct rf_stat *x = slot(s, RF_STAT_GAUGE, path, metric, labels, help);
	if (x) {
		x->is_double = true;
		x->d = v;
	}
}

void rf_stats_emit_text(struct rf_stat_set *s, const char *path, const char *text)
{
	struct rf_stat *x = slot(s, RF_STAT_TEXT, path, NULL, NULL, NULL);
	if (x)
		snprintf(x->text, sizeof(x->text), "%s", text ? text : "");
}

void rf_stats_emit_hist(struct rf_stat_set *s, const char *path, const char *metric,
			const char *labels, const char *help, const struct rf_stats_hist *h)
{
	struct rf_stat_hist_snap *snap = malloc(sizeof(*snap));
	if (!snap) {
		s->full = true;
		return;
	}
	struct rf_stat *x = slot(s, RF_STAT_HISTOGRAM, path, metric, labels, help);
	if (!x) {
		free(snap);
		return;
	}
	snap->nb = h->nb <= RF_STATS_HIST_MAX ? h->nb : RF_STATS_HIST_MAX;
	snap->scale = h->scale;
	memcpy(snap->le, h->le, sizeof(snap->le));
	/* Relaxed: single writer; the buckets are re-added so count matches them exactly. */
	snap->count = 0;
	for (unsigned i = 0; i <= snap->nb; i++) {
		snap->cnt[i] = atomic_load_explicit(&h->cnt[i], memory_order_relaxed);
		snap->count += snap->cnt[i];
	}
	snap->sum = atomic_load_explicit(&h->sum, memory_order_relaxed);
	x->hist = snap;
}

/* ---- the registry ----------------------------------------------------------------------- */

struct rf_stats {
	char app[32];
	pthread_mutex_t lock; /* sources and baseline; never taken by a poller */
	struct src *src;
	size_t nsrc, capsrc;
	struct rf_stats_base *base; /* sorted by key */
	size_t nbase;
};

bool rf_stats_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

struct rf_stats *rf_stats_create(const char *app)
{
	if (!rf_stats_name_ok(app)) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_stats *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	snprintf(st->app, sizeof(st->app), "%s", app);
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

void rf_stats_destroy(struct rf_stats *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	free(st->src);
	free(st->base);
	free(st);
}

const char *rf_stats_app(const struct rf_stats *st)
{
	return st->app;
}

static int add(struct rf_stats *st, struct src s)
{
	if (!st || !rf_stats_name_ok(s.name))
		return -EINVAL;
	int rc = 0;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		if (strcmp(st->src[i].name, s.name) == 0 &&
		    (st->src[i].kind == s.kind || (st->src[i].kind >= SRC_COUNTER && s.kind >= SRC_COUNTER)))
			rc = -EEXIST;
	if (!rc && st->nsrc == st->capsrc) {
		size_t cap = st->capsrc ? st->capsrc * 2 : 16;
		struct src *v = realloc(st->src, cap * sizeof(*v));
		if (!v)
			rc = -ENOMEM;
		else
			st->src = v, st->capsrc = cap;
	}
	if (!rc)
		st->src[st->nsrc++] = s;
	pthread_mutex_unlock(&st->lock);
	return rc;
}

static struct src mk(enum src_kind k, const char *name, const void *ptr)
{
	struct src s = {.kind = k, .ptr = ptr};
	if (name && strlen(name) < sizeof(s.name))
		snprintf(s.name, sizeof(s.name), "%s", name);
	return s;
}

int rf_stats_add_runtime(struct rf_stats *st, struct rf_runtime *rt)
{
	return rt ? add(st, mk(SRC_RUNTIME, "pollers", rt)) : -EINVAL;
}

int rf_stats_add_dev(struct rf_stats *st, const char *name, struct rf_io_dev *dev)
{
	return dev ? add(st, mk(SRC_DEV, name, dev)) : -EINVAL;
}

int rf_stats_add_ring(struct rf_stats *st, const char *name, const struct rf_ring *r)
{
	return r ? add(st, mk(SRC_RING, name, r)) : -EINVAL;
}

int rf_stats_add_pool(struct rf_stats *st, const char *name, const struct rf_pktbuf_pool *p)
{
	return p ? add(st, mk(SRC_POOL, name, p)) : -EINVAL;
}

int rf_stats_add_counter(struct rf_stats *st, const char *name, const char *help,
			 const _Atomic uint64_t *c)
{
	struct src s = mk(SRC_COUNTER, name, c);
	s.help = help;
	return c ? add(st, s) : -EINVAL;
}

int rf_stats_add_gauge(struct rf_stats *st, const char *name, const char *help,
		       const _Atomic uint64_t *g)
{
	struct src s = mk(SRC_GAUGE, name, g);
	s.help = help;
	return g ? add(st, s) : -EINVAL;
}

int rf_stats_add_gauge_fn(struct rf_stats *st, const char *name, const char *help,
			  double (*fn)(void *arg), void *arg)
{
	struct src s = mk(SRC_GAUGE_FN, name, NULL);
	s.help = help;
	s.gauge_fn = fn;
	s.arg = arg;
	return fn ? add(st, s) : -EINVAL;
}

int rf_stats_add_hist(struct rf_stats *st, const char *name, const char *help,
		      const struct rf_stats_hist *h)
{
	struct src s = mk(SRC_HIST, name, h);
	s.help = help;
	return h && h->nb && h->nb <= RF_STATS_HIST_MAX ? add(st, s) : -EINVAL;
}

int rf_stats_add_fn(struct rf_stats *st, const char *name, rf_stats_fn fn, void *arg)
{
	struct src s = mk(SRC_FN, name, NULL);
	s.fn = fn;
	s.arg = arg;
	return fn ? add(st, s) : -EINVAL;
}

int rf_stats_remove(struct rf_stats *st, const char *name)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		if (strcmp(st->src[i].name, name) == 0) {
			memmove(&st->src[i], &st->src[i + 1], (st->nsrc - i - 1) * sizeof(st->src[0]));
			st->nsrc--;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* ---- reading each kind of source -------------------------------------------------------- */

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
#undef D
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

static void read_src(struct rf_stat_set *s, const struct src *x)
{
	char path[128];
	snprintf(path, sizeof(path), "app/%s", x->name);
	switch (x->kind) {
	case SRC_RUNTIME: read_runtime(s, x->ptr); break;
	case SRC_DEV: read_dev(s, x->name, (struct rf_io_dev *)x->ptr); break;
	case SRC_RING: read_ring(s, x->name, x->ptr); break;
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

void rf_stats_collect(struct rf_stats *st, struct rf_stat_set *s)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		read_src(s, &st->src[i]);
	pthread_mutex_unlock(&st->lock);
}

/* ---- reset: a baseline of counter values, keyed by a hash of the path ------------------- */

uint64_t rf_stats_key(const char *path)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ull;
	return h;
}

static int cmp_base(const void *a, const void *b)
{
	uint64_t x = ((const struct rf_stats_base *)a)->key, y = ((const struct rf_stats_base *)b)->key;
	return x < y ? -1 : x > y;
}

void rf_stats_reset(struct rf_stats *st)
{
	struct rf_stat_set s;
	rf_stat_set_init(&s, RF_STATS_MAX_SAMPLES);
	rf_stats_collect(st, &s);
	struct rf_stats_base *b = calloc(s.n ? s.n : 1, sizeof(*b));
	size_t nb = 0;
	for (size_t i = 0; b && i < s.n; i++)
		if (s.v[i].type == RF_STAT_COUNTER)
			b[nb++] = (struct rf_stats_base){rf_stats_key(s.v[i].path), s.v[i].u};
	if (b)
		qsort(b, nb, sizeof(*b), cmp_base);
	rf_stat_set_free(&s);
	pthread_mutex_lock(&st->lock);
	free(st->base);
	st->base = b;
	st->nbase = b ? nb : 0;
	pthread_mutex_unlock(&st->lock);
}

void rf_stats_apply_base(struct rf_stats *st, struct rf_stat_set *s)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < s->n && st->nbase; i++) {
		struct rf_stat *x = &s->v[i];
		if (x->type != RF_STAT_COUNTER)
			continue;
		struct rf_stats_base key = {rf_stats_key(x->path), 0};
		const struct rf_stats_base *f = bsearch(&key, st->base, st->nbase, sizeof(key), cmp_base);
		if (f)
			x->u = x->u >= f->val ? x->u - f->val : x->u; /* a source re-added: from 0 */
	}
	pthread_mutex_unlock(&st->lock);
}
