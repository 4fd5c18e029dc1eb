/*
 * ringflow/runtime.h: pinned pollers, a service thread for timers, per-core counters.
 *
 * The one idea: each chosen CPU runs one poller thread, pinned to it, that calls the poll
 * functions registered on it in a tight loop and nothing else. Slow-path work (timers, the
 * periodic stats line, anything an app hands over with rf_runtime_call) runs on one service
 * thread, so the pollers never sleep on a lock.
 *
 * Idle policy (rf_runtime_config.idle):
 *   RF_IDLE_BUSY      never block: an empty round executes `pause` and polls again (a whole
 *                     CPU per poller, the lowest latency).
 *   RF_IDLE_ADAPTIVE  after spin_rounds empty rounds in a row, block on the poller's wait fds
 *                     (poll) for at most block_ms, so an idle app costs ~0 % CPU.
 * A poll function returns how much work it did; 0 means an empty round. Work another thread
 * hands to a poller without an fd (a ring between pollers) reaches a blocked poller through
 * rf_runtime_wake: register such a poll function with wait fd RF_POLL_WAKE, and call
 * rf_runtime_wake after each hand-off (one fence and one load while the poller is awake).
 *
 * QSBR: every poller is a liburcu-qsbr reader thread (rf_qsbr_register, qsbr.h). Each loop
 * iteration is a quiescent state (rf_qsbr_quiescent), and the poller is offline while it
 * blocks, so a poll function may read RCU-protected structures (e.g. hash.h) without
 * rcu_read_lock and writers' synchronize_rcu()/call_rcu() always make progress. A poll function
 * must not keep RCU-protected pointers across calls. The service thread is a reader too.
 *
 * Counters: each poller owns one struct rf_core_counters on its own cache line; only that
 * poller writes it (relaxed load + store: single writer, so no read-modify-write is needed);
 * any thread may read it at any time without stopping the pollers (relaxed loads: each value
 * is exact, the set of values is a snapshot taken over a few nanoseconds).
 *
 * Thread-safety: create/add_poll/start/join/destroy from one controlling thread, in that
 * order. rf_runtime_stop is async-signal-safe and may be called from any thread or a signal
 * handler. Timers, rf_runtime_call and the stats readers may be called from any thread.
 *
 * Errors: int functions return 0 (or a count/id) or a negative errno; rf_runtime_create
 * returns NULL with errno set and one line in err.
 */
#ifndef RINGFLOW_RUNTIME_H
#define RINGFLOW_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_RUNTIME_MAX_CORES 64 /* pollers per runtime */
#define RF_RUNTIME_MAX_POLLS 16 /* poll functions per poller */
#define RF_RUNTIME_MAX_TIMERS 64

struct rf_runtime;
struct rf_poller;
struct rf_io_dev;

enum rf_idle {
	RF_IDLE_BUSY = 0,
	RF_IDLE_ADAPTIVE = 1,
};

struct rf_runtime_config {
	const char *cores;       /* "0,1", "0-3,6" or a hex mask "0x3"; NULL/"": first usable CPU */
	enum rf_idle idle;       /* see above */
	unsigned spin_rounds;    /* adaptive: empty rounds before blocking; 0 = 2048 */
	unsigned block_ms;       /* adaptive: longest block, bounds how late stop is seen; 0 = 50 */
	unsigned stall_us;       /* > 0: stall meter; a gap over stall_us between the starts of
				  * two rounds counts as a stall (descheduled, host steal, a long
				  * poll function); costs one clock read a round; 0 = off */
	double stats_interval_s; /* > 0: the service thread prints a stats line this often */
	bool no_time_meter;      /* true: no busy/idle/sleep split (rf_counters.busy_ns ... stay
				  * 0), saving the cycle-counter read each round costs */
	FILE *stats_out;         /* where the stats line goes; NULL = rf_log (log.h), info */
};

/* One poller's counters: written only by that poller, readable by anyone. */
struct rf_core_counters {
	RF_CACHE_ALIGNED _Atomic(uint64_t) rx; /* messages received */
	_Atomic(uint64_t) tx;                   /* messages sent */
	_Atomic(uint64_t) drop_ring_full;       /* dropped: a ring between stages was full */
	_Atomic(uint64_t) drop_pool_empty;      /* dropped: no buffer in the pool */
	_Atomic(uint64_t) drop_driver;          /* dropped: the driver refused or failed */
	_Atomic(uint64_t) loops;                /* loop iterations */
	_Atomic(uint64_t) idle_blocks;          /* adaptive: times the poller blocked */
};

/* A plain snapshot of counters (one core or the sum). */
struct rf_counters {
	uint64_t rx, tx, drop_ring_full, drop_pool_empty, drop_driver, loops, idle_blocks;
	/* Stall meter (cfg.stall_us): round gaps over stall_us, and the longest gap. Totals:
	 * the sum of stalls, the largest stall_max_ns. */
	uint64_t stalls, stall_max_ns;
	/* Rounds that did work, and the time meter (on unless cfg.no_time_meter): where the
	 * time went: rounds that did work (busy), empty rounds (idle, polling), blocked for
	 * idleness (sleep), as in `ovs-appctl dpif-netdev/pmd-stats-show`. Totals: sums. */
	uint64_t busy_rounds, busy_ns, idle_ns, sleep_ns;
};

/* One poll function's counters (rf_runtime_poll_counters). */
struct rf_poll_counters {
	uint64_t work;   /* sum of what it returned */
	uint64_t rounds; /* calls that returned > 0 */
	char name[24];   /* rf_runtime_poll_name, or "pollK" */
};

/* A poll function: do one round of work, return how much was done (0 = nothing). */
typedef unsigned (*rf_poll_fn)(struct rf_poller *p, void *arg);

/* Add n to a counter of the calling poller (single writer: no atomic read-modify-write). */
static inline void rf_counter_add(_Atomic(uint64_t) *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* ---- cores ----------------------------------------------------------------------------- */

/*
 * Parse a CPU list ("0,1", "0-3,6") or a hex mask ("0x3") into cpus[0..max), ascending,
 * without duplicates. Returns the count (>= 1), or -EINVAL with one line in err. Does not
 * check that the CPUs exist (rf_runtime_create does).
 */
int rf_cpulist_parse(const char *s, int *cpus, unsigned max, char *err, size_t len);

/* The idle policy named s ("busy" or "adaptive", as the apps' --idle takes it) into *idle:
 * 0, or -EINVAL (*idle untouched). */
int rf_idle_parse(const char *s, enum rf_idle *idle);

/* The options every app shares (--cores, --burst, --buffers, --metrics and counts like them),
 * parsed one way: the whole value, decimal only (no sign, spaces, 0x or leading-zero octal:
 * "010" is ten), and on a bad value one line in err that names the option, what was wrong and
 * what to give, e.g. "--burst 0: not in 1..256". The output is untouched on error. */

/* v as a decimal integer in lo..hi into *out: 0, -EINVAL (not a decimal number) or -ERANGE
 * (outside lo..hi, overflow included). */
int rf_opt_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
	       char *err, size_t len);

/* As rf_opt_u64 for an unsigned (hi at most UINT_MAX): --burst, --buffers. */
int rf_opt_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out,
		char *err, size_t len);

/* v as a CPU list or mask (rf_cpulist_parse's forms, at most RF_RUNTIME_MAX_CORES CPUs):
 * --cores. 0 or -EINVAL. Whether the CPUs are usable is rf_runtime_create's check. */
int rf_opt_cores(const char *opt, const char *v, char *err, size_t len);

/* v as IPv4:PORT or [IPv6]:PORT, the port decimal in 0..65535 (0: the kernel picks):
 * --metrics. 0 or -EINVAL. Whether it can listen there is rf_ctl_start's check. */
int rf_opt_metrics(const char *opt, const char *v, char *err, size_t len);

/* ---- lifecycle ------------------------------------------------------------------------- */

/* A runtime with one (not yet started) poller per CPU in cfg->cores. NULL + errno and one
 * line in err when a CPU is not usable by this process or a value is out of range. */
struct rf_runtime *rf_runtime_create(const struct rf_runtime_config *cfg, char *err, size_t len);

/* Number of pollers, and the CPU poller idx is pinned to. */
unsigned rf_runtime_ncores(const struct rf_runtime *rt);
int rf_runtime_cpu(const struct rf_runtime *rt, unsigned idx);

/* wait_fd value for rf_runtime_add_poll: fn's work is handed to it by other threads, which
 * call rf_runtime_wake after the hand-off. Unlike -1, it does not make the poller nap in 1 ms
 * steps. */
#define RF_POLL_WAKE (-2)

/*
 * Register fn(p, arg) on poller idx (before start). wait_fd: an fd that is readable when fn
 * may have work (adaptive idle blocks on it), RF_POLL_WAKE, or -1 (no way to wake: the
 * poller blocks at most 1 ms). 0, -EINVAL, -ENOSPC, -EBUSY (started).
 */
int rf_runtime_add_poll(struct rf_runtime *rt, unsigned idx, rf_poll_fn fn, void *arg,
			int wait_fd);

/* As rf_runtime_add_poll, blocking on queue of dev (its wait fd, or its wait() when it has
 * no fd). */
int rf_runtime_add_poll_io(struct rf_runtime *rt, unsigned idx, rf_poll_fn fn, void *arg,
			   struct rf_io_dev *dev, unsigned queue);

/* Wake poller idx if it is blocked for idleness, so work handed to it before this call is
 * seen now, not after block_ms. Any thread, any time after create; a bad idx is ignored. */
void rf_runtime_wake(struct rf_runtime *rt, unsigned idx);

/* Start the pollers and the service thread. 0, or -errno (nothing left running). */
int rf_runtime_start(struct rf_runtime *rt);

/* Ask every thread to stop. Async-signal-safe; idempotent. */
void rf_runtime_stop(struct rf_runtime *rt);

/* True once rf_runtime_stop was called. */
bool rf_runtime_stopping(const struct rf_runtime *rt);

/* Only on request: SIGINT/SIGTERM stop rt (rf_runtime_stop). The library installs no handler
 * otherwise. Any number of runtimes of one process may ask (up to 64): a signal stops each;
 * the handler is installed by the first and the previous one restored when the last of them
 * is destroyed. 0, -ENOSPC or -errno (sigaction). */
int rf_runtime_handle_signals(struct rf_runtime *rt);

/* Block the caller until rf_runtime_stop is called (by a signal, a timer, a poller). */
void rf_runtime_wait(struct rf_runtime *rt);

/* Wait for every thread to finish (call rf_runtime_stop first, or this waits for it). */
int rf_runtime_join(struct rf_runtime *rt);

/* Free the runtime (joins first if needed). NULL: no-op. */
void rf_runtime_destroy(struct rf_runtime *rt);

/* ---- inside a poll function ------------------------------------------------------------ */

struct rf_core_counters *rf_poller_counters(struct rf_poller *p); /* this poller's counters */
unsigned rf_poller_index(const struct rf_poller *p);              /* 0..ncores-1 */
int rf_poller_cpu(const struct rf_poller *p);                     /* the CPU it is pinned to */
struct rf_runtime *rf_poller_runtime(struct rf_poller *p);

/* ---- service thread -------------------------------------------------------------------- */

/*
 * Run fn(arg) on the service thread after delay_ns, then every period_ns (0: once).
 * Returns a timer id >= 0, or -ENOSPC / -EINVAL. Any thread.
 */
int rf_runtime_timer_add(struct rf_runtime *rt, uint64_t delay_ns, uint64_t period_ns,
			 void (*fn)(void *arg), void *arg);

/* Cancel a timer (it will not run again once this returns, unless it is running now on the
 * service thread). 0 or -ENOENT. Any thread. */
int rf_runtime_timer_cancel(struct rf_runtime *rt, int id);

/* Run fn(arg) once on the service thread, soon. 0 or -errno. Any thread. */
int rf_runtime_call(struct rf_runtime *rt, void (*fn)(void *arg), void *arg);

/* ---- counters -------------------------------------------------------------------------- */

/* Snapshot of poller idx's counters / of the sum over all pollers. Any thread, any time. */
void rf_runtime_counters(const struct rf_runtime *rt, unsigned idx, struct rf_counters *out);
void rf_runtime_totals(const struct rf_runtime *rt, struct rf_counters *out);

/* Work per busy round, as a histogram: bucket k < RF_RUNTIME_BATCH_BUCKETS - 1 counts rounds
 * whose poll functions returned [2^k, 2^(k+1)) in total, the last bucket the rest (the batch
 * size that OVS's pmd-stats and VPP's vector rate show). The counts sum to busy_rounds. */
#define RF_RUNTIME_BATCH_BUCKETS 10
int rf_runtime_batch_hist(const struct rf_runtime *rt, unsigned idx,
			  uint64_t out[RF_RUNTIME_BATCH_BUCKETS]);

/* Poll functions registered on poller idx (0 for a bad idx). */
unsigned rf_runtime_npolls(const struct rf_runtime *rt, unsigned idx);

/* Name poll function k (0-based, in the order added) of poller idx, for the stats (at most
 * 23 characters kept). 0 or -EINVAL. Before start. */
int rf_runtime_poll_name(struct rf_runtime *rt, unsigned idx, unsigned k, const char *name);

/* Snapshot of poll function k of poller idx. 0 or -EINVAL. Any thread, any time. */
int rf_runtime_poll_counters(const struct rf_runtime *rt, unsigned idx, unsigned k,
			     struct rf_poll_counters *out);

/* One human line: totals then each core ("rx 10 tx 10 drop ring 0 pool 0 drv 0 | cpu0 ..."). */
int rf_runtime_stats_line(const struct rf_runtime *rt, char *buf, size_t len);

/* One JSON object: {"totals":{...},"cores":[{"cpu":0,"rx":...},...]} and a newline. */
void rf_runtime_stats_json(const struct rf_runtime *rt, FILE *out);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_RUNTIME_H */
