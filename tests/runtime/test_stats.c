/*
 * tests/runtime/test_stats.c: the stats registry (stats.h) while pollers run: a reader that
 * reads the tree over and over sees every counter only grow, and once the pollers stop it
 * reads exactly what they counted (a known number of messages, by a checksum of the
 * per-poller totals); the busy/idle meter adds up; reset makes the JSON count from zero and
 * leaves Prometheus alone; a histogram's buckets are cumulative in Prometheus and match its
 * count. Concurrent: built under TSan too.
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/json.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/slotring.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#define PER_POLLER 200000u

struct work {
	_Atomic uint64_t done;
};

/* Counts PER_POLLER messages in bursts of 1..7, then idles. */
static unsigned counting_poll(struct rf_poller *p, void *arg)
{
	struct work *w = arg;
	uint64_t d = atomic_load_explicit(&w->done, memory_order_relaxed);
	if (d >= PER_POLLER)
		return 0;
	unsigned n = (unsigned)(d % 7) + 1;
	if (d + n > PER_POLLER)
		n = (unsigned)(PER_POLLER - d);
	rf_counter_add(&rf_poller_counters(p)->rx, n);
	rf_counter_add(&rf_poller_counters(p)->tx, n);
	atomic_store_explicit(&w->done, d + n, memory_order_relaxed);
	return n;
}

/* The rounds counting_poll does work in, by replaying it; by[k]: those with work in
 * [2^k, 2^(k+1)) (the batch histogram's buckets). */
static uint64_t expected_rounds_by(uint64_t by[3])
{
	uint64_t d = 0, r = 0;
	by[0] = by[1] = by[2] = 0;
	while (d < PER_POLLER) {
		unsigned n = (unsigned)(d % 7) + 1;
		if (d + n > PER_POLLER)
			n = (unsigned)(PER_POLLER - d);
		by[n >= 4 ? 2 : n >= 2 ? 1 : 0]++;
		d += n;
		r++;
	}
	return r;
}

static uint64_t expected_rounds(void)
{
	uint64_t by[3];
	return expected_rounds_by(by);
}

static uint64_t get_u64(const struct rf_json *root, const char *path)
{
	const struct rf_json *v = rf_json_path(root, path);
	cr_assert_not_null(v, "no %s", path);
	return (uint64_t)v->num;
}

static struct rf_json *read_tree(struct rf_stats *st, const char *path)
{
	struct rf_buf b;
	rf_buf_init(&b, 1u << 20);
	cr_assert_eq(rf_stats_write_json(st, path, &b), 0);
	char err[160];
	struct rf_json *j = rf_json_parse(b.p, b.len, err, sizeof(err));
	cr_assert_not_null(j, "%s: %s", err, b.p);
	rf_buf_free(&b);
	return j;
}

Test(stats, reads_while_pollers_run_see_counters_grow_and_end_exact)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct rf_runtime_config cfg = {.cores = ncpu > 1 ? "0,1" : "0", .idle = RF_IDLE_ADAPTIVE};
	char err[256];
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	unsigned n = rf_runtime_ncores(rt);
	struct work w[2] = {{0}, {0}};
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(rf_runtime_add_poll(rt, i, counting_poll, &w[i], RF_POLL_WAKE), 0);
		cr_assert_eq(rf_runtime_poll_name(rt, i, 0, "count"), 0);
	}
	struct rf_stats *st = rf_stats_create("test");
	cr_assert_not_null(st);
	cr_assert_eq(rf_stats_add_runtime(st, rt), 0);
	cr_assert_eq(rf_stats_add_runtime(st, rt), -EEXIST);
	cr_assert_eq(rf_stats_add_counter(st, "bad name", "x", &w[0].done), -EINVAL);
	cr_assert_eq(rf_runtime_start(rt), 0);
	uint64_t last_rx[2] = {0, 0};
	int reads = 0;
	for (;;) {
		bool done = true;
		for (unsigned i = 0; i < n; i++)
			done &= atomic_load_explicit(&w[i].done, memory_order_relaxed) == PER_POLLER;
		struct rf_json *j = read_tree(st, "pollers");
		for (unsigned i = 0; i < n; i++) {
			char path[64];
			snprintf(path, sizeof(path), "%u/rx", i);
			uint64_t rx = get_u64(j, path);
			cr_assert_geq(rx, last_rx[i], "poller %u rx went back", i);
			cr_assert_leq(rx, PER_POLLER);
			last_rx[i] = rx;
		}
		rf_json_free(j);
		reads++;
		if (done)
			break;
	}
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	struct rf_json *j = read_tree(st, "");
	uint64_t sum = 0, work = 0;
	for (unsigned i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "pollers/%u/rx", i);
		sum += get_u64(j, path);
		snprintf(path, sizeof(path), "pollers/%u/polls/count/work", i);
		work += get_u64(j, path);
		snprintf(path, sizeof(path), "pollers/%u/busy_rounds", i);
		uint64_t br = get_u64(j, path);
		snprintf(path, sizeof(path), "pollers/%u/polls/count/busy_rounds", i);
		cr_assert_eq(get_u64(j, path), br, "one poll function: its busy rounds are the poller's");
		cr_assert_eq(br, expected_rounds(), "poller %u busy rounds", i);
		uint64_t by[3];
		expected_rounds_by(by);
		snprintf(path, sizeof(path), "pollers/%u/batch", i);
		const struct rf_json *bh = rf_json_path(j, path);
		cr_assert_not_null(bh);
		cr_assert_eq((uint64_t)rf_json_get_num(bh, "count", 0), br, "batch count = busy rounds");
		cr_assert_eq((uint64_t)rf_json_get_num(bh, "sum", 0), PER_POLLER, "batch sum = work");
		const struct rf_json *cnt = rf_json_get(bh, "counts")->child;
		for (unsigned k = 0; k < RF_RUNTIME_BATCH_BUCKETS; k++, cnt = cnt->next)
			cr_assert_eq((uint64_t)cnt->num, k < 3 ? by[k] : 0, "batch bucket %u", k);
		snprintf(path, sizeof(path), "pollers/%u/busy_ns", i);
		cr_assert_gt(get_u64(j, path), 0);
	}
	cr_assert_eq(sum, (uint64_t)n * PER_POLLER);
	cr_assert_eq(work, sum);
	cr_assert_gt(reads, 0);
	rf_json_free(j);

	/* reset: JSON from zero, Prometheus untouched */
	rf_stats_reset(st);
	j = read_tree(st, "pollers/0");
	cr_assert_eq(get_u64(j, "rx"), 0);
	cr_assert_eq(get_u64(j, "cpu"), (uint64_t)rf_runtime_cpu(rt, 0), "gauges are not reset");
	rf_json_free(j);
	struct rf_buf b;
	rf_buf_init(&b, 1u << 20);
	cr_assert_eq(rf_stats_write_prometheus(st, &b), 0);
	char line[128];
	snprintf(line, sizeof(line), "ringflow_poller_rx_total{app=\"test\",poller=\"0\",core=\"%d\"} %u\n",
		 rf_runtime_cpu(rt, 0), PER_POLLER);
	cr_assert(strstr(b.p, line), "%s not in\n%s", line, b.p);
	cr_assert(strstr(b.p, "# TYPE ringflow_poller_rx_total counter\n"));
	int types = 0; /* a family with three samples per poller: HELP/TYPE once */
	for (const char *q = b.p; (q = strstr(q, "# TYPE ringflow_poller_drops_total ")); q++)
		types++;
	cr_assert_eq(types, 1);
	rf_buf_free(&b);
	rf_stats_destroy(st);
	rf_runtime_destroy(rt);
}

static void *fail_alloc(void *arg)
{
	struct rf_pktbuf *b[200];
	cr_assert_eq(rf_pktbuf_alloc_bulk(arg, b, 200), -ENOBUFS);
	return NULL;
}

Test(stats, app_sources_and_subtrees)
{
	struct rf_stats *st = rf_stats_create("app1");
	_Atomic uint64_t c = 41, g = 5;
	struct rf_ring *r = rf_ring_create("r", 64, 0);
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("p", 128, 256, 0, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(r);
	cr_assert_not_null(pool);
	void *objs[10] = {0};
	rf_ring_enqueue_burst(r, objs, 10, NULL);
	struct rf_pktbuf *held[3];
	cr_assert_eq(rf_pktbuf_alloc_bulk(pool, held, 3), 0);
	cr_assert_eq(rf_stats_add_counter(st, "requests", "Requests", &c), 0);
	cr_assert_eq(rf_stats_add_gauge(st, "queue_len", "Queue", &g), 0);
	cr_assert_eq(rf_stats_add_counter(st, "requests", "again", &c), -EEXIST);
	cr_assert_eq(rf_stats_add_ring(st, "r0", r), 0);
	cr_assert_eq(rf_stats_add_pool(st, "p0", pool), 0);
	atomic_store(&c, 42);
	struct rf_json *j = read_tree(st, "");
	cr_assert_eq(get_u64(j, "app/requests"), 42);
	cr_assert_eq(get_u64(j, "app/queue_len"), 5);
	cr_assert_eq(get_u64(j, "rings/r0/count"), 10);
	cr_assert_eq(get_u64(j, "rings/r0/capacity"), 64);
	cr_assert_eq(get_u64(j, "mempools/p0/in_use"), 3);
	cr_assert_eq(get_u64(j, "mempools/p0/size"), 128);
	cr_assert_eq(get_u64(j, "mempools/p0/empty"), 0);
	rf_json_free(j);
	/* empty events: ask for more than is free, from this thread and from another */
	struct rf_pktbuf *many[200];
	cr_assert_eq(rf_pktbuf_alloc_bulk(pool, many, 126), -ENOBUFS);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, fail_alloc, pool), 0);
	pthread_join(th, NULL);
	j = read_tree(st, "mempools/p0");
	cr_assert_eq(get_u64(j, "empty"), 2, "one from each thread, the exited one's kept");
	rf_json_free(j);
	struct rf_buf b;
	rf_buf_init(&b, 4096);
	cr_assert_eq(rf_stats_write_json(st, "app/requests", &b), 0);
	cr_assert_str_eq(b.p, "42", "a leaf is its bare value");
	rf_buf_reset(&b);
	cr_assert_eq(rf_stats_write_json(st, "nothing/here", &b), -ENOENT);
	rf_buf_reset(&b);
	cr_assert_eq(rf_stats_write_json(st, "app", &b), 0);
	cr_assert_str_eq(b.p, "{\"queue_len\":5,\"requests\":42}");
	rf_buf_free(&b);
	rf_buf_init(&b, 64);
	cr_assert_eq(rf_stats_write_json(st, "", &b), -E2BIG);
	rf_buf_free(&b);
	cr_assert_eq(rf_stats_remove(st, "r0"), 0);
	cr_assert_eq(rf_stats_remove(st, "r0"), -ENOENT);
	rf_pktbuf_free_bulk(held, 3);
	rf_stats_destroy(st);
	rf_pktbuf_pool_free(pool);
	rf_ring_free(r);
}

/* The new counters, end to end: N failed enqueues on a full ring (and slot ring) and a known
 * number of cache hits reach the JSON tree and the Prometheus text exactly. */
Test(stats, ring_failures_and_cache_hits_exact)
{
	struct rf_stats *st = rf_stats_create("obs");
	struct rf_ring *r = rf_ring_create("r", 16, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	struct rf_slotring *sr = rf_slotring_create(8);
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("p", 512, 256, 32, RF_MEMPOOL_NO_HUGE);
	cr_assert(st && r && sr && pool);
	cr_assert_eq(rf_stats_add_ring(st, "r0", r), 0);
	cr_assert_eq(rf_stats_add_slotring(st, "s0", sr), 0);
	cr_assert_eq(rf_stats_add_pool(st, "p0", pool), 0);
	void *objs[16] = {0};
	cr_assert_eq(rf_ring_enqueue_burst(r, objs, 16, NULL), 16);
	const unsigned N = 23;
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(rf_ring_enqueue_burst(r, objs, 2, NULL), 0);
	cr_assert_eq(rf_slotring_enqueue_burst(sr, objs, 8), 8);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_eq(rf_slotring_enqueue_burst(sr, objs, 3), 0);
	/* 1 miss (empty cache, refilled to 33), then K hits: alloc/free pairs of one buffer */
	const unsigned K = 777;
	struct rf_pktbuf *b;
	cr_assert_eq(rf_pktbuf_alloc_bulk(pool, &b, 1), 0);
	rf_pktbuf_free_bulk(&b, 1);
	for (unsigned i = 0; i < K; i++) {
		cr_assert_eq(rf_pktbuf_alloc_bulk(pool, &b, 1), 0);
		rf_pktbuf_free_bulk(&b, 1);
	}
	struct rf_json *j = read_tree(st, "");
	cr_assert_eq(get_u64(j, "rings/r0/enqueue_failures"), N);
	cr_assert_eq(get_u64(j, "rings/r0/enqueue_failed_objects"), 2 * N);
	cr_assert_eq(get_u64(j, "rings/r0/count"), 16);
	cr_assert_eq(get_u64(j, "rings/s0/enqueue_failures"), 5);
	cr_assert_eq(get_u64(j, "rings/s0/enqueue_failed_objects"), 15);
	cr_assert_eq(get_u64(j, "mempools/p0/cache_hits"), K);
	cr_assert_eq(get_u64(j, "mempools/p0/cache_misses"), 1);
	const struct rf_json *rate = rf_json_path(j, "mempools/p0/cache_hit_rate");
	cr_assert_not_null(rate);
	double want = (double)K / (K + 1), d = rate->num - want;
	cr_assert(d < 1e-9 && d > -1e-9, "hit rate %.12f, want %.12f", rate->num, want);
	rf_json_free(j);
	/* reset: the JSON counts from zero, the ring keeps its own count */
	rf_stats_reset(st);
	cr_assert_eq(rf_ring_enqueue_burst(r, objs, 1, NULL), 0);
	j = read_tree(st, "rings/r0");
	cr_assert_eq(get_u64(j, "enqueue_failures"), 1);
	rf_json_free(j);
	cr_assert_eq(rf_ring_enqueue_failures(r, NULL), N + 1);
	struct rf_buf bb;
	rf_buf_init(&bb, 1u << 20);
	cr_assert_eq(rf_stats_write_prometheus(st, &bb), 0);
	char line[160];
	snprintf(line, sizeof(line), "ringflow_ring_enqueue_failures_total{app=\"obs\",ring=\"r0\"} %u\n",
		 N + 1);
	cr_assert(strstr(bb.p, line), "%s not in\n%s", line, bb.p);
	cr_assert(strstr(bb.p, "ringflow_ring_enqueue_failures_total{app=\"obs\",ring=\"s0\"} 5\n"));
	snprintf(line, sizeof(line), "ringflow_mempool_cache_hits_total{app=\"obs\",pool=\"p0\"} %u\n", K);
	cr_assert(strstr(bb.p, line), "%s not in\n%s", line, bb.p);
	cr_assert(strstr(bb.p, "# TYPE ringflow_mempool_cache_hit_ratio gauge\n"));
	rf_buf_free(&bb);
	rf_stats_destroy(st);
	rf_pktbuf_pool_free(pool);
	rf_slotring_free(sr);
	rf_ring_free(r);
}

Test(stats, histogram_buckets_are_cumulative_in_prometheus)
{
	static struct rf_stats_hist h;
	cr_assert_eq(rf_stats_hist_init(&h, 1000, 10, 3, 1e-9), 0); /* 1 us, 10 us, 100 us */
	cr_assert_eq(rf_stats_hist_init(&h, 1000, 1.0, 3, 0), -EINVAL);
	cr_assert_eq(rf_stats_hist_init(&h, 1000, 10, 3, 1e-9), 0);
	uint64_t vals[] = {500, 1000, 1001, 9999, 10000, 50000, 100001, 7};
	for (size_t i = 0; i < 8; i++)
		rf_stats_hist_record(&h, vals[i]);
	struct rf_stats *st = rf_stats_create("h");
	cr_assert_eq(rf_stats_add_hist(st, "latency_seconds", "Latency", &h), 0);
	struct rf_buf b;
	rf_buf_init(&b, 1u << 16);
	cr_assert_eq(rf_stats_write_prometheus(st, &b), 0);
	cr_assert(strstr(b.p, "# TYPE ringflow_latency_seconds histogram\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_bucket{app=\"h\",le=\"1e-06\"} 3\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_bucket{app=\"h\",le=\"1e-05\"} 6\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_bucket{app=\"h\",le=\"0.0001\"} 7\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_bucket{app=\"h\",le=\"+Inf\"} 8\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_count{app=\"h\"} 8\n"), "%s", b.p);
	cr_assert(strstr(b.p, "ringflow_latency_seconds_sum{app=\"h\"} 0.000172508\n"), "%s", b.p);
	rf_buf_free(&b);
	struct rf_json *j = read_tree(st, "app/latency_seconds");
	cr_assert_eq(get_u64(j, "count"), 8);
	cr_assert_eq(rf_json_get(j, "counts")->n, 4);
	rf_json_free(j);
	rf_stats_destroy(st);
}

Test(stats, bad_names_are_refused)
{
	cr_assert_null(rf_stats_create(""));
	cr_assert_null(rf_stats_create("a/b"));
	cr_assert_null(rf_stats_create("0123456789012345678901234567890123"));
	struct rf_stats *st = rf_stats_create("ok");
	_Atomic uint64_t c = 0;
	cr_assert_eq(rf_stats_add_counter(st, "a\"b", "", &c), -EINVAL);
	cr_assert_eq(rf_stats_add_counter(st, "x", "", NULL), -EINVAL);
	rf_stats_destroy(st);
}

static unsigned one_poll(struct rf_poller *p, void *arg)
{
	(void)p;
	return atomic_fetch_add_explicit((_Atomic unsigned *)arg, 1, memory_order_relaxed) < 100000;
}

/* The meter in cycles (default), in ns (stall meter on: its clock read serves both), off. */
Test(stats, time_meter_modes)
{
	const struct {
		unsigned stall_us;
		bool off;
	} modes[] = {{0, false}, {100, false}, {0, true}};
	for (unsigned m = 0; m < 3; m++) {
		struct rf_runtime_config cfg = {.cores = "0", .idle = RF_IDLE_ADAPTIVE,
						.stall_us = modes[m].stall_us,
						.no_time_meter = modes[m].off};
		char err[256];
		struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
		cr_assert_not_null(rt, "%s", err);
		_Atomic unsigned calls = 0;
		cr_assert_eq(rf_runtime_add_poll(rt, 0, one_poll, &calls, RF_POLL_WAKE), 0);
		uint64_t t0 = 0;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		cr_assert_eq(rf_runtime_start(rt), 0);
		while (atomic_load(&calls) < 100000)
			usleep(1000);
		usleep(20000); /* some idle time */
		rf_runtime_stop(rt);
		rf_runtime_join(rt);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t wall = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - t0;
		struct rf_counters c;
		rf_runtime_counters(rt, 0, &c);
		cr_assert_eq(c.busy_rounds, 100000, "mode %u", m); /* calls 0..99999 did work */
		if (modes[m].off) {
			cr_assert_eq(c.busy_ns + c.idle_ns + c.sleep_ns, 0, "meter off");
		} else {
			cr_assert_gt(c.busy_ns, 0, "mode %u", m);
			cr_assert_leq(c.busy_ns + c.idle_ns + c.sleep_ns, wall, "mode %u: more time than "
				      "passed", m);
		}
		rf_runtime_destroy(rt);
	}
}
