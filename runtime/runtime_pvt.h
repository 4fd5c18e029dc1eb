/*
 * runtime/runtime_pvt.h: the runtime's structures, shared by runtime.c (pollers) and
 * service.c (the service thread: timers and slow-path calls).
 */
#ifndef RINGFLOW_RUNTIME_PVT_H
#define RINGFLOW_RUNTIME_PVT_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <ringflow/runtime.h>

struct rf_poll_entry {
	rf_poll_fn fn;
	void *arg;
	int wait_fd;           /* -1: none; RF_POLL_WAKE: woken by rf_runtime_wake */
	struct rf_io_dev *dev; /* rf_runtime_add_poll_io: its wait() when it has no fd */
	unsigned queue;
};

/* One poller. The counters come first, on their own cache line (the only line other
 * threads read); the rest is set up before start and then read only by the poller. */
struct rf_poller {
	struct rf_core_counters ctr;
	RF_CACHE_ALIGNED struct rf_runtime *rt;
	unsigned idx;
	int cpu;
	pthread_t th;
	/* What an idle poller blocks on in poll(): the stop eventfd, its wake eventfd and each
	 * poll function's wait fd. poll(), not a standing epoll set: an fd stays on nobody's
	 * wait queue while the poller is busy (docs/runtime.md, "Idle policy"). */
	struct pollfd wait[RF_RUNTIME_MAX_POLLS + 2];
	unsigned nwait;
	unsigned nwaitless;      /* poll functions with no way to wake the poller */
	struct rf_io_dev *waitdev; /* first poll function with a driver wait() and no fd */
	unsigned waitq;
	unsigned npolls;
	struct rf_poll_entry polls[RF_RUNTIME_MAX_POLLS];
	int wake_efd;            /* rf_runtime_wake writes it while the poller sleeps */
	/* 1 while the poller is about to block or blocked; written by it and by wakers, so
	 * on its own line, away from what the poller reads every round. */
	RF_CACHE_ALIGNED _Atomic int sleeping;
	/* Stall meter: written by the poller (single writer), read by the stats readers; on
	 * their own line so the hot counters keep theirs. */
	RF_CACHE_ALIGNED _Atomic uint64_t stalls;
	_Atomic uint64_t stall_max_ns;
	/* Time meter (unless cfg.no_time_meter; one clock read a round): where the poller's
	 * time went, in rf_cycles() units or ns (rt->meter_ns), written only by the poller; the
	 * stats readers convert to ns. */
	_Atomic uint64_t busy_cyc;    /* rounds that did work */
	_Atomic uint64_t idle_cyc;    /* empty rounds (polling, found nothing) */
	_Atomic uint64_t sleep_cyc;   /* blocked for idleness (adaptive) */
	_Atomic uint64_t busy_rounds; /* rounds that did work */
	_Atomic uint64_t batch[RF_RUNTIME_BATCH_BUCKETS]; /* busy rounds by log2 of their work */
	/* Per poll function: work returned and rounds with work; written by the poller only
	 * when a function did work. */
	RF_CACHE_ALIGNED struct {
		_Atomic uint64_t work, rounds;
	} pctr[RF_RUNTIME_MAX_POLLS];
	char pname[RF_RUNTIME_MAX_POLLS][24]; /* rf_runtime_poll_name; "" = unnamed */
};

struct rf_timer {
	uint64_t when_ns; /* CLOCK_MONOTONIC deadline */
	uint64_t period_ns;
	void (*fn)(void *arg);
	void *arg;
	int id;
};

struct rf_runtime {
	struct rf_runtime_config cfg;
	unsigned n;
	struct rf_poller *p; /* n pollers, cache-line aligned */
	_Atomic int stop;
	int stop_efd; /* written once by rf_runtime_stop, never read: readable forever after */
	int wake_efd; /* wakes the service thread when a timer is added */
	bool started, joined, signals;
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	bool gate_open;

	/* service thread */
	pthread_t svc;
	bool svc_running;
	pthread_mutex_t tlock; /* guards the timer heap */
	unsigned ntimers;
	int next_id;
	struct rf_timer heap[RF_RUNTIME_MAX_TIMERS]; /* min-heap on when_ns */
	int stats_timer;
	uint64_t stats_last_ns;
	struct rf_counters stats_last;
	uint64_t cyc0, ns0; /* rf_cycles() and rf_now_ns() at create: the cycle clock's rate */
	bool meter_ns;      /* the time meter counts ns (stall meter on), else rf_cycles() */
};

/* A cheap cycle counter for the time meter: the TSC on x86-64, else the monotonic clock. */
static inline uint64_t rf_cycles(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	extern uint64_t rf_now_ns(void);
	return rf_now_ns();
#endif
}

uint64_t rf_now_ns(void);
void rf_service_init(struct rf_runtime *rt);

/* Writes one line into err (when err and len) and returns rc: the runtime's error lines. */
int rf_runtime_err(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int rf_service_start(struct rf_runtime *rt);
void rf_service_join(struct rf_runtime *rt);
void rf_service_fini(struct rf_runtime *rt);

#endif /* RINGFLOW_RUNTIME_PVT_H */
