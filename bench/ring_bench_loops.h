/*
 * bench/ring_bench_loops.h: the measuring loops of `ringflow-bench ring`, stamped out once per
 * ring implementation by RING_BENCH_IMPL(name, create, destroy, enq, deq) so every ring runs
 * the very same loop with its own calls inlined (no function pointer on the measured path).
 *
 * Throughput: producers push bursts, consumers pop bursts, each thread pinned; the figure is
 * items moved per second while the clock ran. Handoff: one token goes A -> ring 1 -> B ->
 * ring 2 -> A; A times batches of RB_TRIP_BATCH round trips, and the one-way latency is the
 * median batch / (2 * RB_TRIP_BATCH). The median, not the mean: on a loaded VM a batch in which
 * either thread lost its CPU takes milliseconds, and a mean over the run would measure the
 * scheduler, not the ring; the median still measures trips with both threads running.
 */
#ifndef RINGFLOW_BENCH_RING_LOOPS_H
#define RINGFLOW_BENCH_RING_LOOPS_H

#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <ringflow/common.h>

#include "harness.h"

#define RB_MAX_THREADS 8
#define RB_RING_SIZE 1024

/* What a throughput case asks for; passed as the impl's arg. */
struct rb_case {
	unsigned mode; /* enum ring_mode of ring_peers.h, or the same values elsewhere */
	unsigned burst;
	unsigned producers, consumers;
};

struct rb_shared {
	void *q;
	unsigned burst;
	RF_CACHE_ALIGNED _Atomic int go;
	_Atomic int stop;
	RF_CACHE_ALIGNED _Atomic uint64_t consumed;
};

struct rb_thread_arg {
	struct rb_shared *sh;
	uint64_t count;
	uint64_t out_of_order; /* checked loops: items that were not the next number */
	uint64_t sum;          /* checked loops: the consumer's checksum (kept, so it is computed) */
};

/* Sleeps `seconds` on the calling (unpinned) thread. */
static inline void rb_sleep(double seconds)
{
	struct timespec ts = {.tv_sec = (time_t)seconds,
			      .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
}

typedef void *(*rb_thread_fn)(void *);

/* What every throughput loop does when a call moved nothing: spin a little, then yield, as a
 * poller with a backoff would. Without the yield, two threads sharing a CPU (2p2c on two
 * CPUs) burn whole time slices waiting for a peer that cannot run. Same for every ring. */
static inline void rb_backoff(unsigned moved, unsigned *idle)
{
	if (moved) {
		*idle = 0;
	} else if (++*idle < 64) {
		rf_cpu_relax();
	} else {
		*idle = 0;
		sched_yield();
	}
}

/* Items the checked loops' consumers found out of order (summed by rb_run_throughput). */
static _Atomic uint64_t rb_out_of_order;

/* Runs producers and consumers for ctx->seconds; returns Mops/s (or -1 if no ring). */
static inline double rb_run_throughput(const struct rb_case *c, const struct rf_bench_ctx *ctx,
				       void *q, rb_thread_fn producer, rb_thread_fn consumer)
{
	if (!q)
		return -1;
	struct rb_shared sh = {.q = q, .burst = c->burst};
	struct rb_thread_arg args[RB_MAX_THREADS];
	struct rf_bench_thread *th[RB_MAX_THREADS];
	unsigned n = 0;
	/* Producers on cpu[0] side first, consumers on cpu[1]; with two of each, one of each per CPU. */
	for (unsigned i = 0; i < c->producers; i++, n++) {
		args[n] = (struct rb_thread_arg){.sh = &sh};
		th[n] = rf_bench_thread_start(ctx->opts->cpu[i % 2], producer, &args[n]);
	}
	for (unsigned i = 0; i < c->consumers; i++, n++) {
		args[n] = (struct rb_thread_arg){.sh = &sh};
		th[n] = rf_bench_thread_start(ctx->opts->cpu[(i + 1) % 2], consumer, &args[n]);
	}
	rb_sleep(0.01); /* let every thread reach its pinned CPU */
	uint64_t t0 = rf_bench_now_ns();
	/* release: pairs with the workers' acquire load of go; nothing to publish but order. */
	atomic_store_explicit(&sh.go, 1, memory_order_release);
	rb_sleep(ctx->seconds);
	atomic_store_explicit(&sh.stop, 1, memory_order_relaxed); /* a flag; no data rides on it */
	uint64_t t1 = rf_bench_now_ns();
	uint64_t moved = 0;
	for (unsigned i = 0; i < n; i++) {
		rf_bench_thread_join(th[i]);
		if (i >= c->producers)
			moved += args[i].count;
		/* relaxed: a count read by the main thread after the joins */
		atomic_fetch_add_explicit(&rb_out_of_order, args[i].out_of_order, memory_order_relaxed);
	}
	return (double)moved / ((double)(t1 - t0) / 1e9) / 1e6;
}

#define RB_TRIP_BATCH 16
#define RB_MAX_BATCHES 65536

/* Batch timings of one handoff sample (the pinger's side). */
struct rb_lat {
	uint32_t n;
	uint64_t ns[RB_MAX_BATCHES];
};

/* Records one batch; false when the sample should end (deadline passed or buffer full). */
static inline bool rb_lat_add(struct rb_lat *l, uint64_t b0, uint64_t b1, uint64_t deadline)
{
	l->ns[l->n++] = b1 - b0;
	return b1 < deadline && l->n < RB_MAX_BATCHES;
}

static int rb_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One-way ns: the median batch over 2 * RB_TRIP_BATCH one-way trips. */
static inline double rb_lat_oneway(struct rb_lat *l)
{
	if (l->n == 0)
		return -1;
	qsort(l->ns, l->n, sizeof(l->ns[0]), rb_cmp_u64);
	return (double)l->ns[l->n / 2] / (2.0 * RB_TRIP_BATCH);
}

struct rb_pingpong {
	void *q1, *q2;
	RF_CACHE_ALIGNED _Atomic int stop;
};

#define RING_BENCH_IMPL(NAME, CREATE, DESTROY, ENQ, DEQ)                                     \
	/* The producer and consumer loops, plain and checked (checked is a constant at each   \
	 * call, so the plain loop has nothing of the checks). Checked: the producer numbers    \
	 * each item it offers (1, 2, 3, ...: fresh values per call, the ones not taken offered \
	 * again), the consumer checks each is the next number and folds it into a checksum: a \
	 * consumer that looks at what it takes, as any real one does. Out-of-order items are   \
	 * counted, never expected. */                                                         \
	static inline __attribute__((always_inline)) void *NAME##_produce(void *p, bool checked) \
	{                                                                                    \
		struct rb_thread_arg *a = p;                                                 \
		struct rb_shared *sh = a->sh;                                                \
		void *objs[64];                                                              \
		for (unsigned i = 0; i < 64; i++)                                            \
			objs[i] = (void *)(uintptr_t)(i + 1);                                \
		while (!atomic_load_explicit(&sh->go, memory_order_acquire))                 \
			rf_cpu_relax();                                                      \
		uint64_t sent = 0;                                                           \
		unsigned idle = 0;                                                           \
		while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {             \
			if (checked)                                                         \
				for (unsigned i = 0; i < sh->burst; i++)                     \
					objs[i] = (void *)(uintptr_t)(sent + i + 1);         \
			unsigned n = ENQ(sh->q, objs, sh->burst);                            \
			sent += n;                                                           \
			rb_backoff(n, &idle);                                                \
		}                                                                            \
		a->count = sent;                                                             \
		return NULL;                                                                 \
	}                                                                                    \
	static inline __attribute__((always_inline)) void *NAME##_consume(void *p, bool checked) \
	{                                                                                    \
		struct rb_thread_arg *a = p;                                                 \
		struct rb_shared *sh = a->sh;                                                \
		void *objs[64];                                                              \
		while (!atomic_load_explicit(&sh->go, memory_order_acquire))                 \
			rf_cpu_relax();                                                      \
		uint64_t got = 0, bad = 0, sum = 0;                                          \
		unsigned idle = 0;                                                           \
		while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {             \
			unsigned n = DEQ(sh->q, objs, sh->burst);                            \
			for (unsigned i = 0; checked && i < n; i++) {                        \
				uint64_t v = (uintptr_t)objs[i];                             \
				bad += v != got + i + 1;                                     \
				sum = sum * 31 + v;                                          \
			}                                                                    \
			got += n;                                                            \
			rb_backoff(n, &idle);                                                \
		}                                                                            \
		a->count = got;                                                              \
		a->out_of_order = bad;                                                       \
		a->sum = sum;                                                                \
		return NULL;                                                                 \
	}                                                                                    \
	static void *NAME##_producer(void *p) { return NAME##_produce(p, false); }           \
	static void *NAME##_consumer(void *p) { return NAME##_consume(p, false); }           \
	static void *NAME##_producer_checked(void *p) { return NAME##_produce(p, true); }    \
	static void *NAME##_consumer_checked(void *p) { return NAME##_consume(p, true); }    \
	static double NAME##_run(void *arg, const struct rf_bench_ctx *ctx, rb_thread_fn prod, \
				 rb_thread_fn cons)                                          \
	{                                                                                    \
		const struct rb_case *c = arg;                                               \
		void *q = CREATE(RB_RING_SIZE, c->mode);                                     \
		double v = rb_run_throughput(c, ctx, q, prod, cons);                         \
		if (q)                                                                       \
			DESTROY(q);                                                          \
		return v;                                                                    \
	}                                                                                    \
	static double NAME##_throughput(void *arg, const struct rf_bench_ctx *ctx)           \
	{                                                                                    \
		return NAME##_run(arg, ctx, NAME##_producer, NAME##_consumer);               \
	}                                                                                    \
	static double NAME##_throughput_checked(void *arg, const struct rf_bench_ctx *ctx)   \
	{                                                                                    \
		return NAME##_run(arg, ctx, NAME##_producer_checked, NAME##_consumer_checked); \
	}                                                                                    \
	static void *NAME##_echo(void *p)                                                    \
	{                                                                                    \
		struct rb_pingpong *pp = p;                                                  \
		void *tok;                                                                   \
		while (!atomic_load_explicit(&pp->stop, memory_order_relaxed)) {             \
			if (DEQ(pp->q1, &tok, 1) == 1) {                                     \
				while (ENQ(pp->q2, &tok, 1) == 0)                            \
					rf_cpu_relax();                                      \
			} else {                                                             \
				rf_cpu_relax();                                              \
			}                                                                    \
		}                                                                            \
		return NULL;                                                                 \
	}                                                                                    \
	static void *NAME##_pinger(void *p)                                                  \
	{                                                                                    \
		struct rb_pingpong *pp = p;                                                  \
		void *tok = (void *)(uintptr_t)1;                                            \
		struct rb_lat *lat = malloc(sizeof(*lat));                                   \
		uint64_t deadline = rf_bench_now_ns() + (uint64_t)(pp_seconds_pvt(pp) * 1e9); \
		double v = -1;                                                               \
		if (lat) {                                                                   \
			lat->n = 0;                                                          \
			for (;;) {                                                           \
				uint64_t b0 = rf_bench_now_ns();                             \
				for (unsigned k = 0; k < RB_TRIP_BATCH; k++) {               \
					while (ENQ(pp->q1, &tok, 1) == 0)                    \
						rf_cpu_relax();                              \
					while (DEQ(pp->q2, &tok, 1) == 0)                    \
						rf_cpu_relax();                              \
				}                                                            \
				if (!rb_lat_add(lat, b0, rf_bench_now_ns(), deadline))       \
					break;                                               \
			}                                                                    \
			v = rb_lat_oneway(lat);                                              \
			free(lat);                                                           \
		}                                                                            \
		atomic_store_explicit(&pp->stop, 1, memory_order_relaxed);                   \
		pp_result_pvt(pp, v);                                                        \
		return NULL;                                                                 \
	}                                                                                    \
	static double NAME##_handoff(void *arg, const struct rf_bench_ctx *ctx)              \
	{                                                                                    \
		const struct rb_case *c = arg;                                               \
		struct rb_pingpong_run run = {.seconds = ctx->seconds};                      \
		run.pp.q1 = CREATE(RB_RING_SIZE, c->mode);                                   \
		run.pp.q2 = CREATE(RB_RING_SIZE, c->mode);                                   \
		double v = -1;                                                               \
		if (run.pp.q1 && run.pp.q2) {                                                \
			struct rf_bench_thread *b =                                          \
				rf_bench_thread_start(ctx->opts->cpu[1], NAME##_echo, &run.pp); \
			struct rf_bench_thread *a =                                          \
				rf_bench_thread_start(ctx->opts->cpu[0], NAME##_pinger, &run.pp); \
			rf_bench_thread_join(a);                                             \
			rf_bench_thread_join(b);                                             \
			v = run.result;                                                      \
		}                                                                            \
		if (run.pp.q1)                                                               \
			DESTROY(run.pp.q1);                                                  \
		if (run.pp.q2)                                                               \
			DESTROY(run.pp.q2);                                                  \
		return v;                                                                    \
	}

/* The ping-pong's parameters and result travel with it (first member is the ping-pong). */
struct rb_pingpong_run {
	struct rb_pingpong pp;
	double seconds;
	double result;
};

static inline double pp_seconds_pvt(struct rb_pingpong *pp)
{
	return ((struct rb_pingpong_run *)pp)->seconds;
}

static inline void pp_result_pvt(struct rb_pingpong *pp, double ns)
{
	((struct rb_pingpong_run *)pp)->result = ns;
}

#endif
