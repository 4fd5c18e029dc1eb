/*
 * bench/micro.c: variant ratios and the pinned thread runner of bench/micro.h.
 *
 * The sample-keeping wrapper sits between the harness and each variant's function: the
 * harness still does the interleaving, warm-up and JSON lines; the wrapper only copies each
 * measured value aside so two variants' medians can be divided afterwards.
 */
#include "micro.h"

#include <ringflow/common.h>

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int checks_failed;

void micro_check_failed(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	checks_failed = 1;
}

int micro_exit_status(void)
{
	return checks_failed ? 1 : 0;
}

static double keep_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	struct micro_impl *m = arg;
	double v = m->fn(m->arg, ctx);
	if (ctx->round > 0 && v >= 0 && m->n < MICRO_MAX_SAMPLES)
		m->samples[m->n++] = v;
	return v;
}

int micro_case(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
	       const char *unit, enum rf_better better, struct micro_impl *impls, unsigned n)
{
	struct rf_bench_impl wrapped[16];
	if (n > RF_ARRAY_SIZE(wrapped))
		n = RF_ARRAY_SIZE(wrapped);
	for (unsigned i = 0; i < n; i++) {
		impls[i].n = 0;
		wrapped[i] = (struct rf_bench_impl){impls[i].name, keep_sample, &impls[i]};
	}
	return rf_bench_case(opts, bench, case_name, unit, better, wrapped, n);
}

double micro_median(const struct micro_impl *impls, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(impls[i].name, name) == 0 && impls[i].n > 0)
			return rf_bench_median(impls[i].samples, impls[i].n);
	return -1;
}

double micro_ratio(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		   const struct micro_impl *impls, unsigned n, const char *num, const char *den,
		   const char *label)
{
	double a = micro_median(impls, n, num), b = micro_median(impls, n, den);
	if (a <= 0 || b <= 0)
		return -1;
	rf_bench_record(opts, bench, case_name, label, "x", RF_LOWER_IS_BETTER, a / b, a / b, 1);
	return a / b;
}

struct runner {
	pthread_barrier_t start;
	micro_work_fn fn;
	void *arg;
	double seconds;
	uint64_t chunk;
	void (*start_fn)(void *arg), (*stop)(void *arg);
};

struct worker {
	struct runner *r;
	unsigned index;
	uint64_t ops, cpu_ns;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct runner *r = w->r;
	pthread_barrier_wait(&r->start);
	if (r->start_fn)
		r->start_fn(r->arg);
	uint64_t deadline = rf_bench_now_ns() + (uint64_t)(r->seconds * 1e9);
	uint64_t c0 = thread_cpu_ns(), ops = 0;
	do
		ops += r->fn(r->arg, w->index, r->chunk);
	while (rf_bench_now_ns() < deadline);
	w->cpu_ns = thread_cpu_ns() - c0;
	w->ops = ops;
	if (r->stop)
		r->stop(r->arg);
	return NULL;
}

int micro_run_threads(unsigned n, double seconds, micro_work_fn fn, void *arg, uint64_t chunk,
		      struct micro_threads_result *out)
{
	return micro_run_threads_hooked(n, seconds, fn, arg, chunk, NULL, NULL, out);
}

int micro_run_threads_hooked(unsigned n, double seconds, micro_work_fn fn, void *arg,
			     uint64_t chunk, void (*start)(void *arg), void (*stop)(void *arg),
			     struct micro_threads_result *out)
{
	if (n == 0 || n > MICRO_MAX_THREADS)
		return -EINVAL;
	struct runner r = {.fn = fn, .arg = arg, .seconds = seconds, .chunk = chunk,
			   .start_fn = start, .stop = stop};
	struct worker w[MICRO_MAX_THREADS];
	struct rf_bench_thread *t[MICRO_MAX_THREADS];
	int rc = -pthread_barrier_init(&r.start, NULL, n);
	if (rc)
		return rc;
	unsigned started = 0, ncpus = rf_bench_ncpus();
	uint64_t w0 = rf_bench_now_ns();
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct worker){.r = &r, .index = i};
		t[i] = rf_bench_thread_start(i % ncpus, worker_main, &w[i]);
		if (!t[i]) {
			/* The barrier would wait forever for the missing thread: give up loudly. */
			fprintf(stderr, "ringflow-bench: cannot start thread %u of %u: %s\n", i, n,
				strerror(errno));
			abort();
		}
		started++;
	}
	*out = (struct micro_threads_result){0, 0, 0};
	for (unsigned i = 0; i < started; i++) {
		rf_bench_thread_join(t[i]);
		out->ops += w[i].ops;
		out->cpu_ns += w[i].cpu_ns;
	}
	out->wall_ns = rf_bench_now_ns() - w0;
	pthread_barrier_destroy(&r.start);
	return 0;
}

struct pingpong {
	RF_CACHE_ALIGNED _Atomic uint64_t v; /* the line handed back and forth */
	RF_CACHE_ALIGNED _Atomic int stop;
	double seconds, ns;
};

static void *pingpong_b(void *p)
{
	struct pingpong *pp = p;
	uint64_t want = 1;
	while (!atomic_load_explicit(&pp->stop, memory_order_relaxed)) {
		/* acquire/release on v: the value itself is the "your turn" message. */
		if (atomic_load_explicit(&pp->v, memory_order_acquire) == want) {
			atomic_store_explicit(&pp->v, want + 1, memory_order_release);
			want += 2;
		} else {
			rf_cpu_relax();
		}
	}
	return NULL;
}

static void *pingpong_a(void *p)
{
	struct pingpong *pp = p;
	uint64_t want = 0, t0 = rf_bench_now_ns();
	uint64_t deadline = t0 + (uint64_t)(pp->seconds * 1e9);
	do {
		while (atomic_load_explicit(&pp->v, memory_order_acquire) != want) /* pairs with B */
			rf_cpu_relax();
		atomic_store_explicit(&pp->v, want + 1, memory_order_release); /* pairs with B */
		want += 2;
	} while ((want & 255) != 0 || rf_bench_now_ns() < deadline);
	while (atomic_load_explicit(&pp->v, memory_order_acquire) != want) /* B's last answer */
		rf_cpu_relax();
	pp->ns = (double)(rf_bench_now_ns() - t0) / (double)want;
	atomic_store_explicit(&pp->stop, 1, memory_order_relaxed);
	return NULL;
}

double micro_line_pingpong_ns(unsigned a, unsigned b, double seconds)
{
	if (rf_bench_ncpus() < 2 || a == b)
		return -1;
	struct pingpong *pp = aligned_alloc(RF_CACHE_LINE, sizeof(*pp));
	if (!pp)
		return -1;
	memset(pp, 0, sizeof(*pp));
	pp->seconds = seconds;
	struct rf_bench_thread *tb = rf_bench_thread_start(b, pingpong_b, pp);
	struct rf_bench_thread *ta = tb ? rf_bench_thread_start(a, pingpong_a, pp) : NULL;
	if (!ta)
		atomic_store_explicit(&pp->stop, 1, memory_order_relaxed);
	rf_bench_thread_join(ta);
	rf_bench_thread_join(tb);
	double ns = ta ? pp->ns : -1;
	free(pp);
	return ns;
}

void micro_note_placement(const struct rf_bench_opts *opts, const char *bench)
{
	double ns = micro_line_pingpong_ns(opts->cpu[0], opts->cpu[1], 0.05);
	if (ns < 0)
		return;
	rf_bench_record(opts, bench, "placement", "line_handoff", "ns", RF_LOWER_IS_BETTER, ns, ns, 1);
	rf_bench_note("a cache line moves between CPU %u and CPU %u in %.0f ns one way right now "
		      "(measured before the cases: tens to a few hundred ns when both threads really run "
		      "at once; microseconds when other processes or the host keep the CPUs busy, "
		      "and then the threads seldom contend)",
		      opts->cpu[0], opts->cpu[1], ns);
}
