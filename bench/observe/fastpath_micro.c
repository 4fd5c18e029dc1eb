/*
 * bench/observe/fastpath_micro.c: the fast paths the observability counters touch, on ONE
 * thread, so a figure depends on the instructions and not on where the host put two vCPUs.
 * bench/observe/fastpath_cost.sh builds this file against the base commit's library and
 * against the current one and runs the two binaries in turns.
 *   ring_spsc_b32   rf_ring SP/SC: enqueue_burst 32 then dequeue_burst 32 (success path)
 *   ring_mpmc_b32   the same on an MP/MC ring (the CAS paths)
 *   ring_spsc_b1    one object at a time (the per-call overhead shows most)
 *   mempool_single  rf_mempool_get + rf_mempool_put of one object (cache hits)
 *   mempool_bulk32  get_bulk + put_bulk of 32
 * Public API only (it must build against both trees). Prints one JSON line per case:
 * bench, impl (argv[1]), case, value (M objects/s, median of --reps samples), best, unit.
 * usage: fastpath_micro IMPL [REPS] [SAMPLE_SECONDS]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ringflow/mempool.h>
#include <ringflow/ring.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static volatile uintptr_t sink;

/* One sample: as many batches of `iters` calls as fit in secs; M objects/s. */
#define SAMPLE(secs, iters, objs_per_iter, body)                                              \
	({                                                                                    \
		uint64_t n_ = 0;                                                              \
		double t0_ = now_s(), t_;                                                     \
		do {                                                                          \
			for (unsigned i_ = 0; i_ < (iters); i_++) {                           \
				body;                                                         \
			}                                                                     \
			n_ += (uint64_t)(iters) * (objs_per_iter);                            \
		} while ((t_ = now_s()) - t0_ < (secs));                                      \
		(double)n_ / (t_ - t0_) / 1e6;                                                \
	})

int main(int argc, char **argv)
{
	const char *impl = argc > 1 ? argv[1] : "ringflow";
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	double secs = argc > 3 ? atof(argv[3]) : 0.2;
	if (reps < 3 || reps > 101 || secs <= 0 || secs > 5) {
		fprintf(stderr, "usage: fastpath_micro IMPL [REPS 3..101] [SECONDS (0, 5]]\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	struct rf_ring *sp = rf_ring_create("sp", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	struct rf_ring *mp = rf_ring_create("mp", 1024, 0);
	struct rf_mempool *pool = rf_mempool_create("m", 8191, 2048, 256,
						    RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	if (!sp || !mp || !pool) {
		fprintf(stderr, "fastpath_micro: cannot create the ring or pool\n");
		return 1;
	}
	void *in[32], *out[32];
	for (unsigned i = 0; i < 32; i++)
		in[i] = (void *)(uintptr_t)(i + 1);
	const char *names[] = {"ring_spsc_b32", "ring_mpmc_b32", "ring_spsc_b1", "mempool_single",
			       "mempool_bulk32"};
	enum { NC = 5 };
	double v[NC][101];
	for (int r = 0; r < reps + 1; r++) { /* the first round warms up and is dropped */
		double x[NC];
		x[0] = SAMPLE(secs, 1000, 32, {
			rf_ring_enqueue_burst(sp, in, 32, NULL);
			sink += rf_ring_dequeue_burst(sp, out, 32, NULL);
		});
		x[1] = SAMPLE(secs, 1000, 32, {
			rf_ring_enqueue_burst(mp, in, 32, NULL);
			sink += rf_ring_dequeue_burst(mp, out, 32, NULL);
		});
		x[2] = SAMPLE(secs, 1000, 1, {
			rf_ring_enqueue(sp, in[0]);
			void *o;
			rf_ring_dequeue(sp, &o);
			sink += (uintptr_t)o;
		});
		x[3] = SAMPLE(secs, 1000, 1, {
			void *o;
			if (rf_mempool_get(pool, &o) == 0) {
				*(volatile char *)o = 1;
				rf_mempool_put(pool, o);
			}
		});
		x[4] = SAMPLE(secs, 1000, 32, {
			if (rf_mempool_get_bulk(pool, out, 32) == 0) {
				for (unsigned k = 0; k < 32; k++)
					*(volatile char *)out[k] = 1;
				rf_mempool_put_bulk(pool, out, 32);
			}
		});
		if (r > 0)
			for (int c = 0; c < NC; c++)
				v[c][r - 1] = x[c];
	}
	for (int c = 0; c < NC; c++) {
		qsort(v[c], (size_t)reps, sizeof(double), cmpd);
		printf("{\"bench\":\"fastpath\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.2f,"
		       "\"best\":%.2f,\"unit\":\"Mobj/s\",\"reps\":%d}\n",
		       impl, names[c], v[c][reps / 2], v[c][reps - 1], reps);
	}
	rf_mempool_free(pool);
	rf_ring_free(mp);
	rf_ring_free(sp);
	return 0;
}
