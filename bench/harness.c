/*
 * bench/harness.c: interleaved rounds, medians, the side-by-side table and JSON lines.
 *
 * Results are collected per case in a small array; the table groups them by case and puts
 * every peer beside ringflow with "x faster": how many times better ringflow is than that
 * implementation (above 1.00 ringflow wins), whichever direction the unit counts.
 */
#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RESULTS 512
#define MAX_NOTES 64
#define MAX_SAMPLES 64

struct result {
	char bench[32], case_name[48], impl[32], unit[16];
	enum rf_better better;
	double median, best;
	unsigned reps;
	bool skipped; /* the implementation could not run (not built in, or failed to set up) */
	struct rf_bench_paired paired; /* per-round ratios against "ringflow" (rounds 0: none) */
};

static struct result results[MAX_RESULTS];
static unsigned n_results;
static char *notes[MAX_NOTES];
static unsigned n_notes;
static uint64_t run_started_ns;

/* /proc/stat "cpu" line totals, for the steal share over the run. */
struct cpu_times {
	unsigned long long total, steal;
};

static struct cpu_times read_cpu_times(void)
{
	struct cpu_times t = {0, 0};
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return t;
	unsigned long long v[10] = {0};
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		/* guest and guest_nice (v[8], v[9]) are already inside user and nice. */
		for (int i = 0; i < 8; i++)
			t.total += v[i];
		t.steal = v[7];
	}
	fclose(f);
	return t;
}

static struct cpu_times run_start_times;
static bool run_started;

static void ensure_run_started(void)
{
	if (!run_started) {
		run_started = true;
		run_start_times = read_cpu_times();
		run_started_ns = rf_bench_now_ns();
	}
}

uint64_t rf_bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

unsigned rf_bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

int rf_bench_pin_self(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % rf_bench_ncpus(), &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct rf_bench_thread {
	pthread_t tid;
	unsigned cpu;
	void *(*fn)(void *);
	void *arg;
};

static void *thread_trampoline(void *p)
{
	struct rf_bench_thread *t = p;
	rf_bench_pin_self(t->cpu);
	return t->fn(t->arg);
}

struct rf_bench_thread *rf_bench_thread_start(unsigned cpu, void *(*fn)(void *), void *arg)
{
	struct rf_bench_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cpu = cpu;
	t->fn = fn;
	t->arg = arg;
	int rc = pthread_create(&t->tid, NULL, thread_trampoline, t);
	if (rc != 0) {
		free(t);
		errno = rc;
		return NULL;
	}
	return t;
}

void *rf_bench_thread_join(struct rf_bench_thread *t)
{
	void *ret = NULL;
	if (!t)
		return NULL;
	pthread_join(t->tid, &ret);
	free(t);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double rf_bench_median(const double *v, unsigned n)
{
	if (n == 0)
		return 0;
	double tmp[MAX_SAMPLES];
	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

void rf_bench_note(const char *fmt, ...)
{
	if (n_notes >= MAX_NOTES)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (unsigned i = 0; i < n_notes; i++)
		if (strcmp(notes[i], buf) == 0)
			return; /* said once is enough */
	notes[n_notes++] = strdup(buf);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static void record(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		   const char *impl, const char *unit, enum rf_better better, double median,
		   double best, unsigned reps, const struct rf_bench_paired *paired)
{
	ensure_run_started();
	if (opts->json) {
		char pj[128] = "";
		if (paired->rounds)
			snprintf(pj, sizeof(pj),
				 ",\"paired_ratio\":%.4g,\"paired_min\":%.4g,\"paired_max\":%.4g,"
				 "\"paired_rounds\":%u",
				 paired->median, paired->min, paired->max, paired->rounds);
		printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.6g,"
		       "\"unit\":\"%s\",\"best\":%.6g,\"reps\":%u,\"better\":\"%s\"%s}\n",
		       bench, impl, case_name, median, unit, best, reps,
		       better == RF_HIGHER_IS_BETTER ? "higher" : "lower", pj);
		fflush(stdout);
	}
	if (n_results >= MAX_RESULTS)
		return;
	struct result *r = &results[n_results++];
	copy_str(r->bench, sizeof(r->bench), bench);
	copy_str(r->case_name, sizeof(r->case_name), case_name);
	copy_str(r->impl, sizeof(r->impl), impl);
	copy_str(r->unit, sizeof(r->unit), unit);
	r->better = better;
	r->median = median;
	r->best = best;
	r->reps = reps;
	r->skipped = false;
	r->paired = *paired;
}

void rf_bench_record(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		     const char *impl, const char *unit, enum rf_better better, double median,
		     double best, unsigned reps)
{
	static const struct rf_bench_paired none;
	record(opts, bench, case_name, impl, unit, better, median, best, reps, &none);
}

/*
 * ringflow against impl i, round by round: both ran in the same round, within a second of
 * each other, so on the same placement of the vCPUs. The host moves them every few seconds,
 * and a median of each side's rounds can then come from different placements (one side's
 * median a far round, the other's a near one); the median of the per-round ratios cannot.
 */
static struct rf_bench_paired pair_rounds(const double *ref, unsigned n_ref, const double *v,
					  unsigned n_v, enum rf_better better)
{
	struct rf_bench_paired p = {0};
	double r[MAX_SAMPLES];
	unsigned n = 0;
	for (unsigned s = 0; s < n_ref && s < n_v; s++)
		if (ref[s] > 0 && v[s] > 0)
			r[n++] = better == RF_HIGHER_IS_BETTER ? ref[s] / v[s] : v[s] / ref[s];
	if (n == 0)
		return p;
	p.rounds = n;
	p.median = rf_bench_median(r, n);
	p.min = p.max = r[0];
	for (unsigned s = 1; s < n; s++) {
		p.min = r[s] < p.min ? r[s] : p.min;
		p.max = r[s] > p.max ? r[s] : p.max;
	}
	return p;
}

void rf_bench_record_skipped(const struct rf_bench_opts *opts, const char *bench,
			     const char *case_name, const char *impl, const char *unit)
{
	ensure_run_started();
	if (opts->json) {
		printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":null,"
		       "\"unit\":\"%s\",\"skipped\":true}\n",
		       bench, impl, case_name, unit);
		fflush(stdout);
	}
	if (n_results >= MAX_RESULTS)
		return;
	struct result *r = &results[n_results++];
	memset(r, 0, sizeof(*r));
	copy_str(r->bench, sizeof(r->bench), bench);
	copy_str(r->case_name, sizeof(r->case_name), case_name);
	copy_str(r->impl, sizeof(r->impl), impl);
	copy_str(r->unit, sizeof(r->unit), unit);
	r->skipped = true;
}

int rf_bench_case(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		  const char *unit, enum rf_better better, const struct rf_bench_impl *impls,
		  unsigned n_impls)
{
	ensure_run_started();
	if (opts->filter && !strstr(case_name, opts->filter))
		return -1;
	double elapsed = (double)(rf_bench_now_ns() - run_started_ns) / 1e9;
	if (opts->max_time > 0 && elapsed > opts->max_time) {
		rf_bench_note("case %s skipped: --max-time %.0f s reached", case_name, opts->max_time);
		return -1;
	}

	unsigned reps = opts->repeats < MAX_SAMPLES ? opts->repeats : MAX_SAMPLES;
	double samples[16][MAX_SAMPLES];
	unsigned n_ok[16] = {0};
	bool unavailable[16] = {false};
	if (n_impls > 16)
		n_impls = 16;

	fprintf(stderr, "  %s/%s ...", bench, case_name);
	fflush(stderr);
	for (unsigned round = 0; round <= reps; round++) {
		struct rf_bench_ctx ctx = {.opts = opts, .seconds = opts->duration, .round = round};
		if (round == 0)
			ctx.seconds = opts->duration / 2; /* warm-up: caches, page faults, frequency */
		for (unsigned k = 0; k < n_impls; k++) {
			unsigned i = (k + round) % n_impls; /* rotate who goes first */
			if (unavailable[i])
				continue;
			double v = impls[i].fn(impls[i].arg, &ctx);
			if (v < 0) {
				unavailable[i] = true;
				continue;
			}
			if (round > 0)
				samples[i][n_ok[i]++] = v;
		}
	}
	fprintf(stderr, " done\n");

	/* An impl that failed stopped for good (unavailable), so sample s is round s + 1 in
	 * every impl's array: the arrays pair up by index. */
	int ref = -1;
	for (unsigned i = 0; i < n_impls; i++)
		if (strcmp(impls[i].impl, "ringflow") == 0 && !unavailable[i])
			ref = (int)i;
	for (unsigned i = 0; i < n_impls; i++) {
		if (unavailable[i] || n_ok[i] == 0) {
			rf_bench_record_skipped(opts, bench, case_name, impls[i].impl, unit);
			continue;
		}
		double best = samples[i][0];
		for (unsigned s = 1; s < n_ok[i]; s++)
			best = better == RF_HIGHER_IS_BETTER ? (samples[i][s] > best ? samples[i][s] : best)
							      : (samples[i][s] < best ? samples[i][s] : best);
		struct rf_bench_paired paired = {0};
		if (ref >= 0 && (int)i != ref)
			paired = pair_rounds(samples[ref], n_ok[ref], samples[i], n_ok[i], better);
		record(opts, bench, case_name, impls[i].impl, unit, better,
		       rf_bench_median(samples[i], n_ok[i]), best, n_ok[i], &paired);
	}
	return 0;
}

/* How many times better `ref` is than `v` in this unit's direction. */
static double advantage(const struct result *ref, const struct result *v)
{
	if (v->median <= 0 || ref->median <= 0)
		return 0;
	return ref->better == RF_HIGHER_IS_BETTER ? ref->median / v->median : v->median / ref->median;
}

void rf_bench_print_table(const struct rf_bench_opts *opts, const char *bench)
{
	FILE *out = opts->json ? stderr : stdout;
	struct cpu_times now = read_cpu_times();
	double steal_pct = 0;
	if (now.total > run_start_times.total)
		steal_pct = 100.0 * (double)(now.steal - run_start_times.steal) /
			    (double)(now.total - run_start_times.total);
	if (opts->json) {
		printf("{\"bench\":\"%s\",\"impl\":\"machine\",\"case\":\"steal\",\"value\":%.3f,"
		       "\"unit\":\"%%\"}\n",
		       bench, steal_pct);
		fflush(stdout);
	}

	fprintf(out, "\n%s: median (and best) of %u interleaved rounds, %.2f s each; "
		     "CPU steal during the run %.1f %%\n",
		bench, opts->repeats, opts->duration, steal_pct);
	fprintf(out, "%-24s %-14s %12s %12s  %-8s %-21s %s\n", "case", "impl", "median", "best",
		"unit", "ringflow is x better", "per round [min..max]");
	fprintf(out, "%.*s\n", 117, "--------------------------------------------------------------"
				    "--------------------------------------------------------------");
	for (unsigned i = 0; i < n_results; i++) {
		struct result *r = &results[i];
		bool first_of_case = true;
		for (unsigned j = 0; j < i; j++)
			if (strcmp(results[j].case_name, r->case_name) == 0)
				first_of_case = false;
		if (!first_of_case)
			continue;
		const struct result *ref = NULL;
		for (unsigned j = i; j < n_results; j++)
			if (strcmp(results[j].case_name, r->case_name) == 0 &&
			    strcmp(results[j].impl, "ringflow") == 0)
				ref = &results[j];
		for (unsigned j = i; j < n_results; j++) {
			struct result *v = &results[j];
			if (strcmp(v->case_name, r->case_name) != 0)
				continue;
			char ratio[32] = "", per_round[48] = "";
			if (v->skipped) {
				fprintf(out, "%-24s %-14s %12s %12s  %-8s %s\n",
					v == &results[i] ? v->case_name : "", v->impl, "skipped",
					"skipped", v->unit, "(see the notes)");
				continue;
			}
			if (ref && v != ref && !ref->skipped)
				snprintf(ratio, sizeof(ratio), "%.2fx", advantage(ref, v));
			else if (ref)
				snprintf(ratio, sizeof(ratio), "(reference)");
			if (v->paired.rounds)
				snprintf(per_round, sizeof(per_round), "%.2fx [%.2f..%.2f]",
					 v->paired.median, v->paired.min, v->paired.max);
			fprintf(out, "%-24s %-14s %12.3f %12.3f  %-8s %-21s %s\n",
				v == &results[i] ? v->case_name : "", v->impl, v->median, v->best,
				v->unit, ratio, per_round);
		}
	}
	for (unsigned i = 0; i < n_notes; i++) {
		fprintf(out, "note: %s\n", notes[i]);
		free(notes[i]);
	}
	fflush(out);
	n_notes = 0;
	n_results = 0;
	run_started = false;
}
