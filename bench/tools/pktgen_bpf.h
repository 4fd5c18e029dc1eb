/*
 * bench/tools/pktgen_bpf.h: ringflow-pktgen's BPF side (pktgen.bpf.c, embedded in the tool):
 * load the two programs, write the configuration, attach the transmit counter, run a chunk of
 * live frames, read the counters. Errors: negative errno (libbpf's), with what failed in `why`.
 */
#ifndef RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_H
#define RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_H

#include <stddef.h>
#include <stdint.h>

#include "pktgen_bpf_shared.h"

struct pg_bpf {
	struct bpf_object *obj;
	struct bpf_link *xmit_link;
	int xdp_fd, cfg_fd, stats_fd, pace_fd;
	int ncpu; /* possible CPUs: the per-CPU map's width */
};

/* Loads the object, writes cfg, attaches pg_xmit. On failure `why` (if not NULL) names the
 * step and the bpf object is released. Returns 0 or -errno. */
int pg_bpf_open(struct pg_bpf *b, const struct pg_cfg *cfg, const char **why);

/* Runs pg_xdp `repeat` times on the template, `batch` frames per kernel batch (1..256), live.
 * Thread-safe (each call is one syscall). Returns 0 or -errno (-EINTR: a signal came). */
int pg_bpf_run(const struct pg_bpf *b, const void *frame, size_t len, uint32_t repeat,
	       uint32_t batch);

/* Sums the per-CPU counters into `out` (last_err: the first non-zero one). Returns 0 or -errno. */
int pg_bpf_read(const struct pg_bpf *b, struct pg_stats *out);

/* Writes / reads the paced mode's schedule (pktgen_bpf_shared.h). Returns 0 or -errno. */
int pg_bpf_pace_set(const struct pg_bpf *b, const struct pg_pace *p);
int pg_bpf_pace_get(const struct pg_bpf *b, struct pg_pace *p);

/* Whether this kernel runs live frames for this process at all: loads a two-instruction
 * XDP_DROP program and runs it once in live-frame mode (no device involved). Returns 0, or the
 * -errno of the step that failed, named in *step ("load" or "run"; -EPERM from the run as
 * root: the machine forbids live frames; -EINVAL or -EOPNOTSUPP: a kernel before 5.18). */
int pg_bpf_probe_live(const char **step);

/* Detaches and unloads. Safe on a zeroed struct. */
void pg_bpf_close(struct pg_bpf *b);

#endif /* RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_H */
