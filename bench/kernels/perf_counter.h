/*
 * bench/kernels/perf_counter.h: one hardware event counted for the calling thread through
 * perf_event_open(2), user space only.
 *
 * Many VMs expose no performance-monitoring unit (this project's test VM among them): the
 * open then fails (ENOENT/EOPNOTSUPP), and the benchmark says so in one line instead of
 * printing zeros. perf_counter_why() turns the errno into that line's reason.
 */
#ifndef RINGFLOW_BENCH_PERF_COUNTER_H
#define RINGFLOW_BENCH_PERF_COUNTER_H

#include <stdint.h>

/* Opens a disabled counter of branch misses for this thread. Returns an fd or -errno. */
int perf_counter_open_branch_misses(void);

/* Resets and enables / disables the counter; perf_counter_read() returns its value, or -1. */
void perf_counter_start(int fd);
void perf_counter_stop(int fd);
int64_t perf_counter_read(int fd);
void perf_counter_close(int fd);

/* Why an open failed with -err, e.g. "perf_event_open: No such file or directory (no
 * hardware counters exposed, e.g. a VM without a virtual PMU)". Static storage. */
const char *perf_counter_why(int err);

#endif /* RINGFLOW_BENCH_PERF_COUNTER_H */
