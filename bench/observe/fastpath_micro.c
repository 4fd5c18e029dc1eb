/*
 * bench/observe/fastpath_micro.c: the fast paths the observability counters touch, on ONE
 * thread, so a figure depends on the instructions and not on where the host put two vCPUs:
 *   ring_spsc_b32   rf_ring SP/SC: enqueue_burst 32 then dequeue_burst 32 (success path)
 *   ring_mpmc_b32   the same on an MP/MC ring (the CAS paths)
 *   ring_spsc_b1    one object at a time (the per-call overhead shows most)
 *   mempool_single  rf_mempool_get + rf_mempool_put of one object (cache hits), a write each
 *   mempool_bulk32  get_bulk + put_bulk of 32, a write to each object
 *
 * Built two ways. Alone (CMake's ringflow-fastpath-micro): the current tree, impl "ringflow".
 * A/B (bench/observe/fastpath_cost.sh): the variant half (FP_VARIANT_ONLY) is compiled once
 * against the base commit's headers and once against the current ones, their symbols and the
 * base library's renamed apart (objcopy), and linked with the main half (FP_MAIN_ONLY, FP_AB):
 * then every sample of base and current alternates IN ONE PROCESS, so host noise that lasts
 * longer than a sample (0.1 s) hits both alike. Public API only (it must build against both).
 * Prints one JSON line per case and impl: bench, impl, case, value (M objects/s, median of
 * REPS samples), best, unit; with FP_AB also new/base of the medians and of each sample pair.
 * usage: fastpath_micro [REPS 3..201] [SAMPLE_SECONDS]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define FP_NCASES 5

#ifndef FP_MAIN_ONLY /* ---- the variant: the cases, against one tree's headers ---- */
#include <ringflow/mempool.h>
#include <ringflow/ring.h>

int fp_setup(void);
double fp_sample(int c, double secs);

static struct rf_ring *sp, *mp;
static struct rf_mempool *pool;
static void *in[32], *out[32];
static volatile uintptr_t sink;

static double fp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int fp_setup(void)
{
	sp = rf_ring_create("sp", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	mp = rf_ring_create("mp", 1024, 0);
	pool = rf_mempool_create("m", 8191, 2048, 256, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	for (unsigned i = 0; i < 32; i++)
		in[i] = (void *)(uintptr_t)(i + 1);
	return sp && mp && pool ? 0 : -1;
}

/* As many batches of 1000 calls as fit in secs; M objects/s. */
#define SAMPLE(objs_per_iter, body)                                                           \
	do {                                                                                  \
		uint64_t n_ = 0;                                                              \
		double t0_ = fp_now(), t_;                                                    \
		do {                                                                          \
			for (unsigned i_ = 0; i_ < 1000; i_++) {                              \
				body;                                                         \
			}                                                                     \
			n_ += 1000u * (objs_per_iter);                                        \
		} while ((t_ = fp_now()) - t0_ < secs);                                       \
		return (double)n_ / (t_ - t0_) / 1e6;                                         \
	} while (0)

double fp_sample(int c, double secs)
{
	switch (c) {
	case 0:
		SAMPLE(32, {
			rf_ring_enqueue_burst(sp, in, 32, NULL);
			sink += rf_ring_dequeue_burst(sp, out, 32, NULL);
		});
	case 1:
		SAMPLE(32, {
			rf_ring_enqueue_burst(mp, in, 32, NULL);
			sink += rf_ring_dequeue_burst(mp, out, 32, NULL);
		});
	case 2:
		SAMPLE(1, {
			void *o = NULL; /* a dequeue that found nothing leaves it unwritten */
			rf_ring_enqueue(sp, in[0]);
			rf_ring_dequeue(sp, &o);
			sink += (uintptr_t)o;
		});
	case 3:
		SAMPLE(1, {
			void *o;
			if (rf_mempool_get(pool, &o) == 0) {
				*(volatile char *)o = 1;
				rf_mempool_put(pool, o);
			}
		});
	default:
		SAMPLE(32, {
			if (rf_mempool_get_bulk(pool, out, 32) == 0) {
				for (unsigned k = 0; k < 32; k++)
					*(volatile char *)out[k] = 1;
				rf_mempool_put_bulk(pool, out, 32);
			}
		});
	}
}
#endif

#ifndef FP_VARIANT_ONLY /* ---- the main half: samples, medians, output ---- */
#ifdef FP_AB
int base_fp_setup(void);
double base_fp_sample(int c, double secs);
int new_fp_setup(void);
double new_fp_sample(int c, double secs);
#define NIMPL 2
static int (*const setups[NIMPL])(void) = {base_fp_setup, new_fp_setup};
static double (*const samples[NIMPL])(int, double) = {base_fp_sample, new_fp_sample};
static const char *const impls[NIMPL] = {"base", "new"};
#else
#define NIMPL 1
static int (*const setups[NIMPL])(void) = {fp_setup};
static double (*const samples[NIMPL])(int, double) = {fp_sample};
static const char *const impls[NIMPL] = {"ringflow"};
#endif

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double t[201];
	for (int i = 0; i < n; i++)
		t[i] = v[i];
	qsort(t, (size_t)n, sizeof(double), cmpd);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	static const char *const names[FP_NCASES] = {"ring_spsc_b32", "ring_mpmc_b32",
						     "ring_spsc_b1", "mempool_single",
						     "mempool_bulk32"};
	int reps = argc > 1 ? atoi(argv[1]) : 21;
	double secs = argc > 2 ? atof(argv[2]) : 0.1;
	if (reps < 3 || reps > 201 || secs <= 0 || secs > 5) {
		fprintf(stderr, "usage: fastpath_micro [REPS 3..201] [SAMPLE_SECONDS (0, 5]]\n");
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (int k = 0; k < NIMPL; k++)
		if (setups[k]()) {
			fprintf(stderr, "fastpath_micro: cannot create the rings or the pool\n");
			return 1;
		}
	static double v[FP_NCASES][NIMPL][201];
	for (int c = 0; c < FP_NCASES; c++) {
		for (int k = 0; k < NIMPL; k++)
			samples[k](c, secs); /* warm-up, dropped */
		for (int r = 0; r < reps; r++)
			for (int j = 0; j < NIMPL; j++) { /* the order flips every sample */
				int k = r % 2 ? NIMPL - 1 - j : j;
				v[c][k][r] = samples[k](c, secs);
			}
	}
	for (int c = 0; c < FP_NCASES; c++) {
		for (int k = 0; k < NIMPL; k++) {
			double best = 0;
			for (int r = 0; r < reps; r++)
				best = v[c][k][r] > best ? v[c][k][r] : best;
			printf("{\"bench\":\"fastpath\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.2f,"
			       "\"best\":%.2f,\"unit\":\"Mobj/s\",\"reps\":%d}\n",
			       impls[k], names[c], median(v[c][k], reps), best, reps);
		}
		if (NIMPL == 2) {
			double pr[201];
			for (int r = 0; r < reps; r++)
				pr[r] = v[c][NIMPL - 1][r] / v[c][0][r];
			double lo = median(pr, reps), q1, q3, t[201];
			for (int r = 0; r < reps; r++)
				t[r] = pr[r];
			qsort(t, (size_t)reps, sizeof(double), cmpd);
			q1 = t[reps / 4];
			q3 = t[(3 * reps) / 4];
			printf("{\"bench\":\"fastpath\",\"impl\":\"new/base\",\"case\":\"%s\","
			       "\"value\":%.4f,\"unit\":\"ratio\",\"ratio_of_medians\":%.4f,"
			       "\"pair_q1\":%.4f,\"pair_q3\":%.4f,\"pair_min\":%.4f,\"pair_max\":%.4f}\n",
			       names[c], lo, median(v[c][NIMPL - 1], reps) / median(v[c][0], reps),
			       q1, q3, t[0], t[reps - 1]);
		}
	}
	return 0;
}
#endif
