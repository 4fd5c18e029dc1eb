/*
 * bench/observe/round_cost.c: ringflow-round-cost, what the runtime's time meter costs a
 * poller. One busy poller runs a trivial poll function (returning 1: every round busy, or 0:
 * every round empty) with the time meter on and off (rf_runtime_config.no_time_meter),
 * interleaved, REPEATS times each; the figure is ns per round. The per-round counters of a
 * busy round (per poll function, batch histogram) are in both: only the meter's clock read
 * differs. Prints JSON lines (bench, impl, case, value, unit) and a table with the medians.
 *
 *   ringflow-round-cost [--repeats N] [--cpu C]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/runtime.h>

static unsigned ret_work;

static unsigned trivial(struct rf_poller *p, void *arg)
{
	(void)p;
	(void)arg;
	return ret_work;
}

/* ns per round over 0.5 s, or -1. */
static double one_run(const char *cpu, bool meter, unsigned work)
{
	char err[256];
	struct rf_runtime_config c = {.cores = cpu, .idle = RF_IDLE_BUSY, .no_time_meter = !meter};
	struct rf_runtime *rt = rf_runtime_create(&c, err, sizeof(err));
	if (!rt) {
		fprintf(stderr, "ringflow-round-cost: %s\n", err);
		return -1;
	}
	ret_work = work;
	rf_runtime_add_poll(rt, 0, trivial, NULL, -1);
	if (rf_runtime_start(rt)) {
		rf_runtime_destroy(rt);
		return -1;
	}
	usleep(100000);
	struct rf_counters a, b;
	struct timespec t0, t1;
	rf_runtime_counters(rt, 0, &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep(500000);
	rf_runtime_counters(rt, 0, &b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rf_runtime_destroy(rt);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	return b.loops > a.loops ? ns / (double)(b.loops - a.loops) : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned repeats = 7;
	const char *cpu = "1";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
			repeats = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = argv[++i];
		else {
			fprintf(stderr, "usage: ringflow-round-cost [--repeats N] [--cpu C]\n");
			return 2;
		}
	}
	if (repeats < 1 || repeats > 100) {
		fprintf(stderr, "ringflow-round-cost: --repeats 1..100\n");
		return 2;
	}
	static const char *const wname[] = {"empty_round", "busy_round"};
	double *v[2][2];
	for (int w = 0; w < 2; w++)
		for (int m = 0; m < 2; m++)
			v[w][m] = calloc(repeats, sizeof(double));
	for (unsigned r = 0; r < repeats; r++)
		for (int w = 0; w < 2; w++)
			for (int k = 0; k < 2; k++) {
				int m = (int)((r + (unsigned)k) % 2); /* alternate which goes first */
				double x = one_run(cpu, m == 1, (unsigned)w);
				if (x < 0)
					return 1;
				v[w][m][r] = x;
				printf("{\"bench\":\"round_cost\",\"impl\":\"%s\",\"case\":\"%s\","
				       "\"value\":%.2f,\"unit\":\"ns/round\",\"repeat\":%u}\n",
				       m ? "time_meter_on" : "time_meter_off", wname[w], x, r);
			}
	printf("\n%-12s %16s %16s %8s\n", "case", "meter off ns", "meter on ns", "ratio");
	for (int w = 0; w < 2; w++) {
		qsort(v[w][0], repeats, sizeof(double), cmp);
		qsort(v[w][1], repeats, sizeof(double), cmp);
		double off = v[w][0][repeats / 2], on = v[w][1][repeats / 2];
		printf("%-12s %16.1f %16.1f %8.2f   (best %.1f / %.1f)\n", wname[w], off, on,
		       on / off, v[w][0][0], v[w][1][0]);
	}
	return 0;
}
