/*
 * bench/harness.h: the harness every `ringflow-bench` subcommand shares.
 *
 * The one idea: this machine is noisy (a 2-vCPU VM whose cross-core figures swing 3-8x from
 * minute to minute), so a figure alone means little. A case runs every implementation
 * (ours and the peers) interleaved, round after round in the same process, and reports the
 * median and the best of each, next to each other, with the ratio. Timing never decides a
 * test; it only ever lands in a table and in JSON lines:
 *   {"bench":"ring","impl":"rte_ring","case":"spsc_burst32","value":131.2,"unit":"Mops/s",...}
 *
 * A subcommand registers itself with RF_BENCH_COMMAND(); main.c dispatches by name.
 */
#ifndef RINGFLOW_BENCH_HARNESS_H
#define RINGFLOW_BENCH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Options common to every subcommand (parsed by the harness before the subcommand runs). */
struct rf_bench_opts {
	bool json;          /* --json: JSON lines on stdout, the table on stderr */
	unsigned repeats;   /* --repeats N: measured rounds per case (>= 5) */
	double duration;    /* --duration S: seconds each measured sample runs */
	double max_time;    /* --max-time S: whole-run bound; cases past it are skipped, said aloud */
	unsigned cpu[2];    /* --cpus A,B: the two CPUs threads are pinned to (producer, consumer) */
	bool quick;         /* --quick: smallest sizes (used by tests and `make demo`) */
	const char *filter; /* --case SUBSTR: only cases whose name contains SUBSTR */
};

/* What a sample function is told: how long to run and where. */
struct rf_bench_ctx {
	const struct rf_bench_opts *opts;
	double seconds; /* target duration of this sample */
	unsigned round; /* 0 for warm-up, 1..repeats for measured rounds */
};

/* A sample: run the case once for about ctx->seconds and return the figure in the case's unit,
 * or a negative value when the implementation cannot run here (the case prints why once). */
typedef double (*rf_bench_fn)(void *arg, const struct rf_bench_ctx *ctx);

struct rf_bench_impl {
	const char *impl; /* "ringflow", "rte_ring", "ck_ring", "mutex", "floor", ... */
	rf_bench_fn fn;
	void *arg;
};

enum rf_better { RF_HIGHER_IS_BETTER, RF_LOWER_IS_BETTER };

/* How many times better "ringflow" was than an impl, round by round (each round runs both
 * within a second, on one placement of the vCPUs): median, lowest and highest over `rounds`. */
struct rf_bench_paired {
	double median, min, max;
	unsigned rounds; /* 0: not measured against "ringflow" in rounds */
};

/* Runs one case: a warm-up sample of each impl, then opts->repeats interleaved rounds (the
 * order rotates each round), then records median/best per impl for the table and prints a
 * JSON line per impl. The impl named "ringflow" (if present) is the reference for ratios:
 * the ratio of the medians, and the per-round ratios (paired_ratio, _min, _max in JSON).
 * Returns 0, or -1 if the case was skipped (time bound or filter). */
int rf_bench_case(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		  const char *unit, enum rf_better better, const struct rf_bench_impl *impls,
		  unsigned n_impls);

/* Records a single already-measured result (for benches that compute their own medians). */
void rf_bench_record(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		     const char *impl, const char *unit, enum rf_better better, double median,
		     double best, unsigned reps);

/* Records an implementation that did not run (built without its library, or its setup failed;
 * say why with rf_bench_note): a "skipped" row in the table, "value":null in JSON. */
void rf_bench_record_skipped(const struct rf_bench_opts *opts, const char *bench,
			     const char *case_name, const char *impl, const char *unit);

/* Adds a note printed under the table (e.g. why a peer was not run). printf-style. */
void rf_bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints the human table of everything recorded so far (to stdout, or stderr with --json),
 * including the steal-time delta since the subcommand started, then forgets the results. */
void rf_bench_print_table(const struct rf_bench_opts *opts, const char *bench);

/* Monotonic clock in nanoseconds. */
uint64_t rf_bench_now_ns(void);

/* Pins the calling thread to one CPU; returns 0 or -errno. */
int rf_bench_pin_self(unsigned cpu);

/* Starts a thread pinned to `cpu` running fn(arg); returns 0 or -errno. Join with
 * rf_bench_thread_join. */
struct rf_bench_thread;
struct rf_bench_thread *rf_bench_thread_start(unsigned cpu, void *(*fn)(void *), void *arg);
void *rf_bench_thread_join(struct rf_bench_thread *t);

/* Median of n doubles (sorts a copy); 0 when n == 0. */
double rf_bench_median(const double *v, unsigned n);

/* Online CPUs (at least 1). */
unsigned rf_bench_ncpus(void);

/* A subcommand. run() gets argv after the harness options were removed (argv[0] is the
 * subcommand name) and returns the process exit code. */
struct rf_bench_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv, const struct rf_bench_opts *opts);
	void (*help)(FILE *out); /* subcommand-specific help (cases, peers), may be NULL */
	struct rf_bench_command *next;
};

void rf_bench_register(struct rf_bench_command *cmd);

/* Registers a subcommand at program start; use once at file scope in its source file. */
#define RF_BENCH_COMMAND(cname, csummary, crun, chelp)                                  \
	static struct rf_bench_command rf_bench_cmd_##crun = {                          \
		.name = (cname), .summary = (csummary), .run = (crun), .help = (chelp)}; \
	__attribute__((constructor)) static void rf_bench_cmd_register_##crun(void)     \
	{                                                                               \
		rf_bench_register(&rf_bench_cmd_##crun);                                \
	}

#endif /* RINGFLOW_BENCH_HARNESS_H */
