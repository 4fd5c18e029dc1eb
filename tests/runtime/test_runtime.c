/*
 * tests/runtime/test_runtime.c: the pollers and the service thread, with real threads.
 * Pollers run on the CPUs asked for (sched_getcpu inside the poll function), a signal stops
 * everything within a generous bound (liveness, not timing), per-core counters add up to
 * what the poll functions generated, adaptive idle blocks and wakes on its wait fd, timers
 * fire, and QSBR grace periods complete while pollers spin or block.
 * Runs under TSan (rf_test.h: the Criterion subset).
 */
#include "rf_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <ringflow/qsbr.h>

#include <ringflow/ring.h>
#include <ringflow/runtime.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Up to 2 CPUs this process may use, as a --cores string. */
static unsigned usable_cores(char *buf, size_t len, int *cpus)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	unsigned n = 0;
	size_t o = 0;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set)) {
			cpus[n++] = c;
			o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
		}
	return n;
}

struct core_probe {
	_Atomic int cpu_seen;    /* last sched_getcpu() */
	_Atomic int wrong;       /* rounds seen on another CPU than the pinned one */
	_Atomic uint64_t rounds;
};

static unsigned probe_poll(struct rf_poller *p, void *arg)
{
	struct core_probe *cp = arg;
	int cpu = sched_getcpu();
	atomic_store_explicit(&cp->cpu_seen, cpu, memory_order_relaxed);
	if (cpu != rf_poller_cpu(p))
		atomic_fetch_add_explicit(&cp->wrong, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&cp->rounds, 1, memory_order_relaxed);
	return 1;
}

Test(runtime, pollers_run_on_requested_cores)
{
	char cores[64], err[256];
	int cpus[2];
	unsigned n = usable_cores(cores, sizeof(cores), cpus);
	struct rf_runtime_config cfg = {.cores = cores, .idle = RF_IDLE_BUSY};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	cr_assert_eq(rf_runtime_ncores(rt), n);
	struct core_probe cp[2];
	memset(cp, 0, sizeof(cp));
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(rf_runtime_cpu(rt, i), cpus[i]);
		atomic_store(&cp[i].cpu_seen, -1);
		cr_assert_eq(rf_runtime_add_poll(rt, i, probe_poll, &cp[i], -1), 0);
	}
	cr_assert_eq(rf_runtime_start(rt), 0);
	cr_assert_eq(rf_runtime_add_poll(rt, 0, probe_poll, &cp[0], -1), -EBUSY);
	uint64_t t0 = now_ms();
	for (unsigned i = 0; i < n; i++)
		while (atomic_load(&cp[i].rounds) < 1000 && now_ms() - t0 < 20000)
			usleep(1000);
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_geq(atomic_load(&cp[i].rounds), 1000, "poller %u did not run", i);
		cr_assert_eq(atomic_load(&cp[i].cpu_seen), cpus[i], "poller %u on cpu %d", i,
			     atomic_load(&cp[i].cpu_seen));
		cr_assert_eq(atomic_load(&cp[i].wrong), 0, "poller %u ran off its CPU", i);
	}
	rf_runtime_destroy(rt);
}

static unsigned idle_poll(struct rf_poller *p, void *arg)
{
	(void)p, (void)arg;
	return 0;
}

static void *send_signal(void *arg)
{
	usleep(50000);
	kill(getpid(), *(int *)arg);
	return NULL;
}

/* SIGINT or SIGTERM: the handler only stops; wait returns and join finishes promptly. */
static void stop_on(int sig, enum rf_idle idle)
{
	char cores[64], err[256];
	int cpus[2];
	unsigned n = usable_cores(cores, sizeof(cores), cpus);
	struct rf_runtime_config cfg = {.cores = cores, .idle = idle, .block_ms = 1000};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(rf_runtime_add_poll(rt, i, idle_poll, NULL, -1), 0);
	cr_assert_eq(rf_runtime_handle_signals(rt), 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, send_signal, &sig), 0);
	uint64_t t0 = now_ms();
	rf_runtime_wait(rt);
	rf_runtime_join(rt);
	uint64_t dt = now_ms() - t0;
	pthread_join(th, NULL);
	cr_assert(rf_runtime_stopping(rt));
	cr_assert_lt(dt, 10000, "stop took %llu ms", (unsigned long long)dt);
	rf_runtime_destroy(rt);
}

Test(runtime, stop_on_sigterm_busy)
{
	stop_on(SIGTERM, RF_IDLE_BUSY);
}

Test(runtime, stop_on_sigint_adaptive)
{
	stop_on(SIGINT, RF_IDLE_ADAPTIVE);
}

static volatile sig_atomic_t app_got; /* the app's own handler (sig_atomic_t: signal context) */
static void app_handler(int sig)
{
	app_got = sig;
}

static void (*disposition(int sig))(int)
{
	struct sigaction cur;
	cr_assert_eq(sigaction(sig, NULL, &cur), 0);
	return cur.sa_handler;
}

static struct rf_runtime *idle_runtime(void)
{
	char cores[64], err[256];
	int cpus[2];
	unsigned n = usable_cores(cores, sizeof(cores), cpus);
	struct rf_runtime_config cfg = {.cores = cores, .idle = RF_IDLE_ADAPTIVE, .block_ms = 1000};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(rf_runtime_add_poll(rt, i, idle_poll, NULL, -1), 0);
	return rt;
}

/* The process is the app's: a runtime that did not ask touches no signal disposition. */
Test(runtime, no_signal_handler_unless_asked)
{
	int sigs[] = {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGUSR1};
	void (*before[5])(int);
	for (unsigned i = 0; i < 5; i++)
		before[i] = disposition(sigs[i]);
	struct rf_runtime *rt = idle_runtime();
	cr_assert_eq(rf_runtime_start(rt), 0);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_eq(disposition(sigs[i]), before[i], "signal %d changed", sigs[i]);
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	rf_runtime_destroy(rt);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_eq(disposition(sigs[i]), before[i], "signal %d changed", sigs[i]);
}

/* Two runtimes of one process both asked: one SIGTERM stops both; the app's own handler is
 * back once the last of them is destroyed (not before). */
Test(runtime, signals_stop_every_runtime_that_asked)
{
	struct sigaction app = {.sa_handler = app_handler};
	sigemptyset(&app.sa_mask);
	cr_assert_eq(sigaction(SIGTERM, &app, NULL), 0);
	struct rf_runtime *a = idle_runtime(), *b = idle_runtime();
	cr_assert_eq(rf_runtime_handle_signals(a), 0);
	cr_assert_eq(rf_runtime_handle_signals(b), 0);
	cr_assert_neq(disposition(SIGTERM), app_handler);
	cr_assert_eq(rf_runtime_start(a), 0);
	cr_assert_eq(rf_runtime_start(b), 0);
	int sig = SIGTERM;
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, send_signal, &sig), 0);
	rf_runtime_wait(a);
	rf_runtime_wait(b);
	pthread_join(th, NULL);
	cr_assert(rf_runtime_stopping(a) && rf_runtime_stopping(b));
	cr_assert_eq(app_got, 0, "the app's handler ran while the runtimes had the signal");
	rf_runtime_join(a);
	rf_runtime_join(b);
	rf_runtime_destroy(a);
	cr_assert_neq(disposition(SIGTERM), app_handler, "b still asked for it");
	rf_runtime_destroy(b);
	cr_assert_eq(disposition(SIGTERM), app_handler, "the app's handler is not back");
	raise(SIGTERM); /* to this thread: handled before raise returns */
	cr_assert_eq(app_got, SIGTERM);
	signal(SIGTERM, SIG_DFL);
}

/* Each poll function generates a known pattern of events and keeps its own tally. */
struct gen {
	uint64_t made_rx, made_tx, made_drop; /* written by the poller only, read after join */
	uint64_t rounds;
};

static unsigned gen_poll(struct rf_poller *p, void *arg)
{
	struct gen *g = arg;
	struct rf_core_counters *c = rf_poller_counters(p);
	if (g->rounds >= 200000)
		return 0;
	uint64_t rx = 1 + g->rounds % 7, drop = g->rounds % 3 == 0 ? 1 : 0;
	rf_counter_add(&c->rx, rx);
	rf_counter_add(&c->tx, rx - drop);
	rf_counter_add(&c->drop_driver, drop);
	g->made_rx += rx;
	g->made_tx += rx - drop;
	g->made_drop += drop;
	g->rounds++;
	return (unsigned)rx;
}

struct reader {
	struct rf_runtime *rt;
	_Atomic int stop;
	_Atomic int went_back; /* a counter decreased between two reads */
};

static void *read_while_running(void *arg)
{
	struct reader *r = arg;
	struct rf_counters prev = {0}, cur;
	while (!atomic_load(&r->stop)) {
		rf_runtime_totals(r->rt, &cur);
		if (cur.rx < prev.rx || cur.tx < prev.tx || cur.drop_driver < prev.drop_driver)
			atomic_store(&r->went_back, 1);
		prev = cur;
		char line[512];
		rf_runtime_stats_line(r->rt, line, sizeof(line));
	}
	return NULL;
}

Test(runtime, counters_add_up)
{
	char cores[64], err[256];
	int cpus[2];
	unsigned n = usable_cores(cores, sizeof(cores), cpus);
	struct rf_runtime_config cfg = {.cores = cores, .idle = RF_IDLE_ADAPTIVE, .spin_rounds = 64};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	struct gen g[2];
	memset(g, 0, sizeof(g));
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(rf_runtime_add_poll(rt, i, gen_poll, &g[i], -1), 0);
	struct reader rd = {.rt = rt};
	pthread_t th;
	cr_assert_eq(rf_runtime_start(rt), 0);
	cr_assert_eq(pthread_create(&th, NULL, read_while_running, &rd), 0);
	/* Wait until every generator is done (its loops counter keeps moving meanwhile). */
	uint64_t t0 = now_ms();
	for (;;) {
		bool done = true;
		for (unsigned i = 0; i < n; i++) {
			struct rf_counters c;
			rf_runtime_counters(rt, i, &c);
			if (c.idle_blocks == 0)
				done = false; /* a generator still has work: no empty rounds yet */
		}
		if (done || now_ms() - t0 > 30000)
			break;
		usleep(2000);
	}
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	atomic_store(&rd.stop, 1);
	pthread_join(th, NULL);

	struct rf_counters total, sum = {0};
	rf_runtime_totals(rt, &total);
	uint64_t made_rx = 0, made_tx = 0, made_drop = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rf_counters c;
		rf_runtime_counters(rt, i, &c);
		cr_assert_eq(g[i].rounds, 200000, "generator %u finished", i);
		cr_assert_eq(c.rx, g[i].made_rx, "core %u rx", i);
		cr_assert_eq(c.tx, g[i].made_tx, "core %u tx", i);
		cr_assert_eq(c.drop_driver, g[i].made_drop, "core %u drops", i);
		cr_assert_eq(c.rx, c.tx + c.drop_driver, "core %u: rx = tx + drops", i);
		sum.rx += c.rx, sum.tx += c.tx, sum.drop_driver += c.drop_driver;
		made_rx += g[i].made_rx, made_tx += g[i].made_tx, made_drop += g[i].made_drop;
	}
	cr_assert_eq(total.rx, sum.rx);
	cr_assert_eq(total.tx, sum.tx);
	cr_assert_eq(total.drop_driver, sum.drop_driver);
	cr_assert_eq(total.rx, made_rx);
	cr_assert_eq(total.tx, made_tx);
	cr_assert_eq(total.drop_driver, made_drop);
	cr_assert_eq(atomic_load(&rd.went_back), 0, "a counter went backwards");
	rf_runtime_destroy(rt);
}

/* Adaptive idle blocks on the wait fd and wakes when it becomes readable. */
struct efd_job {
	int efd;
	_Atomic uint64_t got;
};

static unsigned efd_poll(struct rf_poller *p, void *arg)
{
	(void)p;
	struct efd_job *j = arg;
	uint64_t v;
	if (read(j->efd, &v, sizeof(v)) == sizeof(v)) {
		atomic_fetch_add(&j->got, v);
		return 1;
	}
	return 0;
}

/* One adaptive poller (block_ms as given) whose poll function reads j's new eventfd, started,
 * then waited on until it has blocked for idleness `blocks` times; its counters in *c. */
static struct rf_runtime *efd_runtime_blocked(struct efd_job *j, unsigned block_ms,
					      uint64_t blocks, struct rf_counters *c)
{
	char err[256];
	struct rf_runtime_config cfg = {.cores = NULL, .idle = RF_IDLE_ADAPTIVE, .spin_rounds = 16,
					.block_ms = block_ms};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	j->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cr_assert(j->efd >= 0);
	cr_assert_eq(rf_runtime_add_poll(rt, 0, efd_poll, j, j->efd), 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	uint64_t t0 = now_ms();
	do {
		usleep(1000);
		rf_runtime_counters(rt, 0, c);
	} while (c->idle_blocks < blocks && now_ms() - t0 < 10000);
	cr_assert_geq(c->idle_blocks, blocks, "the idle poller never blocked");
	return rt;
}

Test(runtime, adaptive_blocks_and_wakes_on_wait_fd)
{
	struct efd_job j = {0};
	struct rf_counters c;
	struct rf_runtime *rt = efd_runtime_blocked(&j, 10000, 1, &c);
	uint64_t t0;
	uint64_t loops = c.loops;
	usleep(100000);
	rf_runtime_counters(rt, 0, &c);
	/* Blocked (block_ms is 10 s): it has not been spinning all this time. */
	cr_assert_lt(c.loops - loops, 10000, "poller spun while idle");
	for (int i = 1; i <= 5; i++) {
		uint64_t one = 1;
		cr_assert_eq(write(j.efd, &one, sizeof(one)), 8);
		t0 = now_ms();
		while (atomic_load(&j.got) < (uint64_t)i && now_ms() - t0 < 5000)
			usleep(200);
		cr_assert_eq(atomic_load(&j.got), (uint64_t)i, "wake %d not seen", i);
		usleep(20000); /* let it go back to sleep */
	}
	t0 = now_ms();
	rf_runtime_stop(rt); /* the stop eventfd wakes the blocked poller at once */
	rf_runtime_join(rt);
	cr_assert_lt(now_ms() - t0, 5000, "stop did not wake the blocked poller");
	close(j.efd);
	rf_runtime_destroy(rt);
}

/* How many epoll instances of this process watch fd (the "tfd:" lines of each epoll fd's
 * /proc/self/fdinfo entry). */
static int epoll_watchers(int fd)
{
	int n = 0;
	char path[64], line[256], want[32];
	snprintf(want, sizeof(want), "tfd: %8d ", fd);
	for (int i = 0; i < 4096; i++) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", i);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, want, strlen(want)) == 0)
				n++;
		fclose(f);
	}
	return n;
}

/* A running poller keeps no standing waiter on its wait fds (no epoll set holds them): the
 * kernel would pay a wait-queue wake-up per frame on such a socket, busy or not
 * (docs/runtime.md, "Idle policy"). The fd is still what wakes it (the test above). */
Test(runtime, wait_fds_are_in_no_standing_epoll_set)
{
	struct efd_job j = {0};
	struct rf_counters c;
	struct rf_runtime *rt = efd_runtime_blocked(&j, 5, 3, &c);
	cr_assert_eq(epoll_watchers(j.efd), 0, "an epoll set watches the wait fd");
	uint64_t one = 1;
	cr_assert_eq(write(j.efd, &one, sizeof(one)), 8);
	uint64_t t0 = now_ms();
	while (atomic_load(&j.got) < 1 && now_ms() - t0 < 5000)
		usleep(200);
	cr_assert_eq(atomic_load(&j.got), 1, "the wait fd did not wake the poller");
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	/* The count sees a standing epoll set when there is one. */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN};
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, j.efd, &ev), 0);
	cr_assert_eq(epoll_watchers(j.efd), 1);
	close(ep);
	close(j.efd);
	rf_runtime_destroy(rt);
}

/* A wait fd that is not open fails the start (poll() would report it on every call and the
 * idle poller would spin). */
Test(runtime, closed_wait_fd_fails_start)
{
	char err[256];
	struct rf_runtime_config cfg = {.cores = NULL, .idle = RF_IDLE_ADAPTIVE};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	int fd = eventfd(0, EFD_CLOEXEC);
	cr_assert(fd >= 0);
	close(fd);
	struct efd_job j = {.efd = fd};
	cr_assert_eq(rf_runtime_add_poll(rt, 0, efd_poll, &j, fd), 0);
	cr_assert_eq(rf_runtime_start(rt), -EBADF);
	rf_runtime_destroy(rt);
}

struct tick {
	_Atomic int n;
	_Atomic int calls;
	_Atomic int cancelled_runs;
};

static void on_tick(void *arg)
{
	atomic_fetch_add(&((struct tick *)arg)->n, 1);
}
static void on_call(void *arg)
{
	atomic_fetch_add(&((struct tick *)arg)->calls, 1);
}
static void on_cancelled(void *arg)
{
	atomic_fetch_add(&((struct tick *)arg)->cancelled_runs, 1);
}

Test(runtime, timers_fire_calls_run_cancel_works)
{
	char err[256];
	struct rf_runtime_config cfg = {.idle = RF_IDLE_ADAPTIVE};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	cr_assert_eq(rf_runtime_add_poll(rt, 0, idle_poll, NULL, -1), 0);
	struct tick t;
	memset(&t, 0, sizeof(t));
	cr_assert_geq(rf_runtime_timer_add(rt, 0, 2000000, on_tick, &t), 0); /* every 2 ms */
	int late = rf_runtime_timer_add(rt, 60ull * 1000000000, 0, on_cancelled, &t);
	cr_assert_geq(late, 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	cr_assert_eq(rf_runtime_call(rt, on_call, &t), 0);
	cr_assert_eq(rf_runtime_timer_cancel(rt, late), 0);
	cr_assert_eq(rf_runtime_timer_cancel(rt, late), -ENOENT);
	uint64_t t0 = now_ms();
	while ((atomic_load(&t.n) < 5 || atomic_load(&t.calls) < 1) && now_ms() - t0 < 10000)
		usleep(1000);
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	cr_assert_geq(atomic_load(&t.n), 5, "periodic timer ran %d times", atomic_load(&t.n));
	cr_assert_eq(atomic_load(&t.calls), 1);
	cr_assert_eq(atomic_load(&t.cancelled_runs), 0);
	rf_runtime_destroy(rt);
}

static void *grace_period(void *arg)
{
	rf_qsbr_synchronize();
	atomic_store((_Atomic int *)arg, 1);
	return NULL;
}

/* synchronize_rcu completes while pollers spin (quiescent each round) and while they block
 * (offline), so a hash's deferred frees make progress. */
static void grace_with(enum rf_idle idle)
{
	char cores[64], err[256];
	int cpus[2];
	unsigned n = usable_cores(cores, sizeof(cores), cpus);
	struct rf_runtime_config cfg = {.cores = cores, .idle = idle, .spin_rounds = 16,
					.block_ms = 5000};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(rf_runtime_add_poll(rt, i, idle_poll, NULL, -1), 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	usleep(20000);
	for (int k = 0; k < 3; k++) {
		_Atomic int done = 0;
		pthread_t th;
		cr_assert_eq(pthread_create(&th, NULL, grace_period, &done), 0);
		uint64_t t0 = now_ms();
		while (!atomic_load(&done) && now_ms() - t0 < 20000)
			usleep(1000);
		cr_assert(atomic_load(&done), "grace period %d never ended", k);
		pthread_join(th, NULL);
	}
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	rf_runtime_destroy(rt);
}

Test(runtime, qsbr_grace_period_completes_busy)
{
	grace_with(RF_IDLE_BUSY);
}

Test(runtime, qsbr_grace_period_completes_adaptive)
{
	grace_with(RF_IDLE_ADAPTIVE);
}

Test(runtime, stats_json_and_line)
{
	char err[256];
	struct rf_runtime_config cfg = {0};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	rf_runtime_stats_json(rt, f);
	fclose(f);
	cr_assert(strstr(buf, "{\"totals\":{\"rx\":0,\"tx\":0,") == buf, "%s", buf);
	cr_assert(strstr(buf, "\"cores\":[{\"cpu\":"), "%s", buf);
	free(buf);
	char line[256];
	rf_runtime_stats_line(rt, line, sizeof(line));
	cr_assert(strstr(line, "rx 0 tx 0 drop ring 0 pool 0 drv 0 | cpu"), "%s", line);
	rf_runtime_destroy(rt);
}

/* rf_runtime_wake: items handed over a ring to a poller that sleeps with block_ms = 10 s. */
#define WAKE_PRODUCERS 2
#define WAKE_ITEMS 1000

struct wake_job {
	struct rf_ring *r;
	_Atomic uint64_t seen[WAKE_PRODUCERS]; /* next sequence expected from each producer */
	_Atomic uint64_t bad, sum;
	struct rf_runtime *rt;
	unsigned producer;
};

static unsigned wake_poll(struct rf_poller *p, void *arg)
{
	(void)p;
	struct wake_job *j = arg;
	void *items[32];
	unsigned n = rf_ring_dequeue_burst(j->r, items, 32, NULL);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = (uint64_t)(uintptr_t)items[i];
		unsigned who = (unsigned)(v >> 32) - 1;
		uint64_t seq = v & 0xffffffffu;
		if (who >= WAKE_PRODUCERS ||
		    seq != atomic_load_explicit(&j->seen[who], memory_order_relaxed)) {
			atomic_fetch_add(&j->bad, 1);
			continue;
		}
		atomic_fetch_add_explicit(&j->sum, v, memory_order_relaxed);
		/* Release: pairs with the producer's acquire load before its next hand-off. */
		atomic_store_explicit(&j->seen[who], seq + 1, memory_order_release);
	}
	return n;
}

struct wake_producer {
	struct wake_job *j;
	unsigned who;
	bool stuck;
};

/* Ping-pong: hand item i over, wake the poller, wait until it took it. */
static void *wake_produce(void *arg)
{
	struct wake_producer *w = arg;
	uint64_t t0 = now_ms();
	for (uint64_t i = 0; i < WAKE_ITEMS && !w->stuck; i++) {
		void *item = (void *)(uintptr_t)((uint64_t)(w->who + 1) << 32 | i);
		while (rf_ring_enqueue_burst(w->j->r, &item, 1, NULL) == 0)
			sched_yield();
		rf_runtime_wake(w->j->rt, 0);
		/* Acquire: pairs with the poller's release store of seen. A lost wakeup leaves the
		 * item waiting 10 s (block_ms): the 60 s bound turns that into a failure. */
		while (atomic_load_explicit(&w->j->seen[w->who], memory_order_acquire) <= i)
			if (now_ms() - t0 > 60000) {
				w->stuck = true;
				break;
			} else {
				usleep(50); /* long enough for the poller to go back to sleep, often */
			}
	}
	return NULL;
}

Test(runtime, wake_reaches_a_sleeping_poller_from_several_threads)
{
	char err[256];
	struct rf_runtime_config cfg = {.cores = NULL, .idle = RF_IDLE_ADAPTIVE, .spin_rounds = 4,
					.block_ms = 10000};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	static struct wake_job j;
	memset(&j, 0, sizeof(j));
	j.rt = rt;
	j.r = rf_ring_create("wake", 1024, RF_RING_SC_DEQ);
	cr_assert_not_null(j.r);
	rf_runtime_wake(rt, 0);  /* before start: harmless */
	rf_runtime_wake(rt, 99); /* no such poller: ignored */
	cr_assert_eq(rf_runtime_add_poll(rt, 0, wake_poll, &j, RF_POLL_WAKE), 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	pthread_t th[WAKE_PRODUCERS];
	struct wake_producer w[WAKE_PRODUCERS];
	for (unsigned k = 0; k < WAKE_PRODUCERS; k++) {
		w[k] = (struct wake_producer){.j = &j, .who = k};
		cr_assert_eq(pthread_create(&th[k], NULL, wake_produce, &w[k]), 0);
	}
	for (unsigned k = 0; k < WAKE_PRODUCERS; k++)
		pthread_join(th[k], NULL);
	struct rf_counters c;
	rf_runtime_counters(rt, 0, &c);
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	rf_runtime_wake(rt, 0); /* after join: harmless */
	uint64_t want = 0;
	for (unsigned k = 0; k < WAKE_PRODUCERS; k++) {
		cr_assert(!w[k].stuck, "producer %u: an item was not seen for 60 s (lost wakeup)", k);
		cr_assert_eq(atomic_load(&j.seen[k]), WAKE_ITEMS, "producer %u: items lost", k);
		want += (uint64_t)WAKE_ITEMS * ((uint64_t)(k + 1) << 32) +
			(uint64_t)WAKE_ITEMS * (WAKE_ITEMS - 1) / 2;
	}
	cr_assert_eq(atomic_load(&j.bad), 0, "items duplicated or out of order");
	cr_assert_eq(atomic_load(&j.sum), want, "checksum");
	cr_assert_gt(c.idle_blocks, 0, "the poller never slept, so no wake was tested");
	rf_ring_free(j.r);
	rf_runtime_destroy(rt);
}

/* Stall meter: a poll function that sleeps 3 ms in its 50th round, then stops the runtime at
 * its 200th. The sleep is a gap between two rounds' starts of at least 3 ms, whatever the
 * machine does, so the meter must count at least one stall and a maximum >= 3 ms. */
struct stall_probe {
	struct rf_runtime *rt;
	unsigned rounds; /* this poller's only */
};

static unsigned stall_poll(struct rf_poller *p, void *arg)
{
	(void)p;
	struct stall_probe *sp = arg;
	if (++sp->rounds == 50)
		usleep(3000);
	if (sp->rounds == 200)
		rf_runtime_stop(sp->rt);
	return 1;
}

static void stall_run(unsigned stall_us, struct rf_counters *out)
{
	char cores[64], err[256];
	int cpus[2];
	usable_cores(cores, sizeof(cores), cpus);
	snprintf(cores, sizeof(cores), "%d", cpus[0]);
	struct rf_runtime_config cfg = {.cores = cores, .idle = RF_IDLE_BUSY, .stall_us = stall_us};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	struct stall_probe sp = {.rt = rt};
	cr_assert_geq(rf_runtime_add_poll(rt, 0, stall_poll, &sp, -1), 0);
	cr_assert_eq(rf_runtime_start(rt), 0);
	rf_runtime_wait(rt);
	rf_runtime_join(rt);
	rf_runtime_totals(rt, out);
	cr_assert_geq(sp.rounds, 200);
	char line[512];
	rf_runtime_stats_line(rt, line, sizeof(line));
	cr_assert_eq(strstr(line, "stalls") != NULL, stall_us > 0, "stats line: %s", line);
	rf_runtime_destroy(rt);
}

Test(runtime, stall_meter_sees_a_round_that_slept)
{
	struct rf_counters on, off;
	stall_run(1000, &on);
	cr_assert_geq(on.stalls, 1, "a 3 ms gap over a 1 ms threshold was not counted");
	cr_assert_geq(on.stall_max_ns, 3000000, "longest gap %llu ns < the 3 ms sleep",
		      (unsigned long long)on.stall_max_ns);
	stall_run(0, &off);
	cr_assert_eq(off.stalls, 0, "the meter is off: nothing counted");
	cr_assert_eq(off.stall_max_ns, 0);
	char err[256];
	struct rf_runtime_config bad = {.stall_us = 20000000};
	cr_assert_null(rf_runtime_create(&bad, err, sizeof(err)));
	cr_assert_neq(strstr(err, "stall_us"), NULL, "%s", err);
}
