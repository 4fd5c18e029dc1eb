/*
 * runtime/runtime.c: pinned poller threads, the stop eventfd, idle policy, QSBR points.
 *
 * The one idea: stopping is a flag plus an eventfd that is written once and never read.
 * The flag is what busy pollers see on their next iteration; the eventfd stays readable
 * forever after stop, and it is in every poller's and the service thread's
 * poll set, so a thread blocked for idleness wakes at once, and a signal handler can stop
 * everything with two async-signal-safe operations. The service thread (timers, stats) is
 * in runtime/service.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <ringflow/io.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>

#include "runtime_pvt.h"

/* The runtimes that asked for SIGINT/SIGTERM (rf_runtime_handle_signals): the handler stops
 * every one of them. Slots are claimed and cleared with atomics so the handler (which may run
 * on any thread at any time) only ever loads them; the sigaction is installed by the first
 * runtime that asks and the previous one restored when the last of them is destroyed
 * (sig_lock orders those, never taken by the handler). */
#define RF_SIG_MAX 64
static _Atomic(struct rf_runtime *) sig_rt[RF_SIG_MAX];
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned sig_users; /* under sig_lock */
static struct sigaction sig_old_int, sig_old_term; /* under sig_lock */

int rf_runtime_err(char *err, size_t len, int rc, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* "0-1,4" for the CPUs this process may run on. */
static void allowed_list(const cpu_set_t *set, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && o < len; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", c);
		if (e > c && o < len)
			o += (size_t)snprintf(buf + o, len - o, "-%d", e);
		c = e;
	}
}

struct rf_runtime *rf_runtime_create(const struct rf_runtime_config *cfg, char *err, size_t len)
{
	struct rf_runtime_config def = {0};
	if (!cfg)
		cfg = &def;
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		errno = rf_runtime_err(err, len, errno, "runtime: sched_getaffinity failed: %s", strerror(errno));
		return NULL;
	}
	int cpus[RF_RUNTIME_MAX_CORES];
	int n;
	if (cfg->cores && *cfg->cores) {
		n = rf_cpulist_parse(cfg->cores, cpus, RF_RUNTIME_MAX_CORES, err, len);
		if (n < 0) {
			errno = -n;
			return NULL;
		}
	} else {
		n = 1;
		cpus[0] = 0;
		while (cpus[0] < CPU_SETSIZE - 1 && !CPU_ISSET(cpus[0], &allowed))
			cpus[0]++;
	}
	for (int i = 0; i < n; i++) {
		if (!CPU_ISSET(cpus[i], &allowed)) {
			char list[128];
			allowed_list(&allowed, list, sizeof(list));
			errno = EINVAL;
			rf_runtime_err(err, len, 0, "runtime: CPU %d is not available to this process "
			       "(usable: %s): pick --cores from those", cpus[i], list);
			return NULL;
		}
	}
	if (cfg->idle != RF_IDLE_BUSY && cfg->idle != RF_IDLE_ADAPTIVE) {
		errno = EINVAL;
		rf_runtime_err(err, len, 0, "runtime: unknown idle policy %d (busy or adaptive)", (int)cfg->idle);
		return NULL;
	}
	if (cfg->block_ms > 10000 || cfg->stats_interval_s < 0 || cfg->stats_interval_s > 86400 ||
	    cfg->stall_us > 10000000) {
		errno = EINVAL;
		rf_runtime_err(err, len, 0, "runtime: block_ms must be <= 10000, stall_us <= 10000000 and "
		       "stats interval 0..86400 s");
		return NULL;
	}

	struct rf_runtime *rt = calloc(1, sizeof(*rt));
	struct rf_poller *p = aligned_alloc(RF_CACHE_LINE, sizeof(*p) * (size_t)n);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!rt || !p || efd < 0 || wfd < 0) {
		int e = errno ? errno : ENOMEM;
		free(rt);
		free(p);
		if (efd >= 0)
			close(efd);
		if (wfd >= 0)
			close(wfd);
		errno = e;
		rf_runtime_err(err, len, 0, "runtime: cannot allocate (%s)", strerror(e));
		return NULL;
	}
	memset(p, 0, sizeof(*p) * (size_t)n);
	rt->cfg = *cfg;
	rt->cfg.cores = NULL; /* not kept: the caller owns the string */
	if (!rt->cfg.spin_rounds)
		rt->cfg.spin_rounds = 2048;
	if (!rt->cfg.block_ms)
		rt->cfg.block_ms = 50;
	rt->n = (unsigned)n;
	rt->p = p;
	rt->cyc0 = rf_cycles();
	rt->ns0 = rf_now_ns();
	rt->meter_ns = cfg->stall_us > 0;
	rt->stop_efd = efd;
	rt->wake_efd = wfd;
	for (int i = 0; i < n; i++) {
		p[i].wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: wake is a no-op */
		p[i].rt = rt;
		p[i].idx = (unsigned)i;
		p[i].cpu = cpus[i];
	}
	pthread_mutex_init(&rt->gate_lock, NULL);
	pthread_cond_init(&rt->gate_cond, NULL);
	rf_service_init(rt);
	return rt;
}

int rf_idle_parse(const char *s, enum rf_idle *idle)
{
	if (strcmp(s, "busy") == 0)
		*idle = RF_IDLE_BUSY;
	else if (strcmp(s, "adaptive") == 0)
		*idle = RF_IDLE_ADAPTIVE;
	else
		return -EINVAL;
	return 0;
}

unsigned rf_runtime_ncores(const struct rf_runtime *rt)
{
	return rt->n;
}

int rf_runtime_cpu(const struct rf_runtime *rt, unsigned idx)
{
	return idx < rt->n ? rt->p[idx].cpu : -EINVAL;
}

static int add_poll(struct rf_runtime *rt, unsigned idx, rf_poll_fn fn, void *arg, int wait_fd,
		    struct rf_io_dev *dev, unsigned queue)
{
	if (!rt || idx >= rt->n || !fn)
		return -EINVAL;
	if (rt->started)
		return -EBUSY;
	struct rf_poller *p = &rt->p[idx];
	if (p->npolls == RF_RUNTIME_MAX_POLLS)
		return -ENOSPC;
	p->polls[p->npolls++] = (struct rf_poll_entry){fn, arg, wait_fd, dev, queue};
	return 0;
}

int rf_runtime_add_poll(struct rf_runtime *rt, unsigned idx, rf_poll_fn fn, void *arg,
			int wait_fd)
{
	return add_poll(rt, idx, fn, arg, wait_fd, NULL, 0);
}

int rf_runtime_add_poll_io(struct rf_runtime *rt, unsigned idx, rf_poll_fn fn, void *arg,
			   struct rf_io_dev *dev, unsigned queue)
{
	if (!dev || queue >= rf_io_nqueues(dev))
		return -EINVAL;
	return add_poll(rt, idx, fn, arg, rf_io_wait_fd(dev, queue), dev, queue);
}

/* Add fd to what the poller blocks on, once; -EBADF for an fd that is not open (poll()
 * would report it at once on every call and the idle poller would spin). */
static int wait_add(struct rf_poller *p, int fd)
{
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	for (unsigned i = 0; i < p->nwait; i++)
		if (p->wait[i].fd == fd)
			return 0;
	p->wait[p->nwait++] = (struct pollfd){.fd = fd, .events = POLLIN};
	return 0;
}

/*
 * The fds a poller blocks on: the stop eventfd and each poll function's wait fd. They are
 * handed to poll() each time the poller blocks, not kept in an epoll set: a socket in an
 * epoll set has a waiter on its wait queue for good, and the kernel then takes the wait
 * queue's lock (irqsave) for every frame it queues or every sent frame it frees on that
 * socket (AF_XDP's and AF_PACKET's write-space and data-ready callbacks), busy or not.
 */
static int poller_wait_setup(struct rf_poller *p)
{
	p->nwait = 0;
	int rc = wait_add(p, p->rt->stop_efd);
	if (!rc && p->wake_efd >= 0)
		rc = wait_add(p, p->wake_efd);
	p->nwaitless = 0;
	p->waitdev = NULL;
	for (unsigned i = 0; i < p->npolls && !rc; i++) {
		struct rf_poll_entry *e = &p->polls[i];
		if (e->wait_fd == RF_POLL_WAKE && p->wake_efd >= 0)
			continue; /* rf_runtime_wake reaches it through wake_efd */
		if (e->wait_fd < 0) {
			if (e->dev && (rf_io_caps(e->dev) & RF_IO_CAP_WAIT) && !p->waitdev) {
				p->waitdev = e->dev;
				p->waitq = e->queue;
			} else {
				p->nwaitless++;
			}
			continue;
		}
		rc = wait_add(p, e->wait_fd);
	}
	return rc;
}

/*
 * Block for idleness, bounded by block_ms. The normal case is poll() on the wait fds (the
 * stop eventfd among them). A poll function with a driver wait() and no fd is waited on
 * directly when it is the only thing to wait for; with anything else that has no way to
 * wake us, sleep at most 1 ms so it is still polled often.
 */
static void poller_block(struct rf_poller *p)
{
	const struct rf_runtime *rt = p->rt;
	int timeout = (int)rt->cfg.block_ms;
	if (p->nwaitless)
		timeout = 1;
	if (p->waitdev && p->npolls == 1) {
		rf_io_wait(p->waitdev, p->waitq, timeout);
		return;
	}
	if (p->waitdev && timeout > 1)
		timeout = 1;
	poll(p->wait, p->nwait, timeout); /* EINTR or a timeout: the loop polls again */
}

static unsigned poll_round(struct rf_poller *p)
{
	unsigned work = 0;
	for (unsigned i = 0; i < p->npolls; i++) {
		unsigned w = p->polls[i].fn(p, p->polls[i].arg);
		if (w) { /* per-function counters: written only when it did work */
			rf_counter_add(&p->pctr[i].work, w);
			rf_counter_add(&p->pctr[i].rounds, 1);
			work += w;
		}
	}
	if (work) { /* busy round: count it and its batch size (log2 bucket, no search) */
		unsigned k = 31u - (unsigned)__builtin_clz(work);
		rf_counter_add(&p->busy_rounds, 1);
		rf_counter_add(&p->batch[k < RF_RUNTIME_BATCH_BUCKETS ? k : RF_RUNTIME_BATCH_BUCKETS - 1], 1);
	}
	return work;
}

void rf_runtime_wake(struct rf_runtime *rt, unsigned idx)
{
	if (!rt || idx >= rt->n)
		return;
	struct rf_poller *p = &rt->p[idx];
	/* Seq_cst fence: orders the caller's hand-off (e.g. a ring enqueue) before the load of
	 * sleeping. Pairs with the seq_cst store of sleeping in poller_main: either we see 1
	 * here, or the poller's last round before blocking sees the hand-off. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&p->sleeping, memory_order_relaxed))
		return;
	/* Relaxed: only one waker needs to write; the eventfd carries no data. */
	if (atomic_exchange_explicit(&p->sleeping, 0, memory_order_relaxed) && p->wake_efd >= 0) {
		uint64_t one = 1;
		ssize_t w = write(p->wake_efd, &one, sizeof(one));
		(void)w; /* EAGAIN: the counter is full, so the poller is awake anyway */
	}
}

/* Stall meter: the gap since the previous round's start (last_ns 0: none to compare with,
 * e.g. after a deliberate block). */
static uint64_t meter_round(struct rf_poller *p, uint64_t *last_ns, uint64_t threshold_ns)
{
	uint64_t t = rf_now_ns();
	if (*last_ns) {
		uint64_t gap = t - *last_ns;
		if (gap > threshold_ns)
			rf_counter_add(&p->stalls, 1);
		if (gap > atomic_load_explicit(&p->stall_max_ns, memory_order_relaxed))
			atomic_store_explicit(&p->stall_max_ns, gap, memory_order_relaxed);
	}
	*last_ns = t;
	return t;
}

static void *poller_main(void *arg)
{
	struct rf_poller *p = arg;
	struct rf_runtime *rt = p->rt;
	const unsigned spin = rt->cfg.spin_rounds;
	const bool adaptive = rt->cfg.idle == RF_IDLE_ADAPTIVE;
	const uint64_t stall_ns = (uint64_t)rt->cfg.stall_us * 1000;
	uint64_t last_round_ns = 0;
	unsigned empty = 0;
	uint64_t t_prev = 0;
	bool prev_busy = false;

	/* Wait at the gate until start() has pinned every poller (or given up). */
	pthread_mutex_lock(&rt->gate_lock);
	while (!rt->gate_open)
		pthread_cond_wait(&rt->gate_cond, &rt->gate_lock);
	pthread_mutex_unlock(&rt->gate_lock);
	rf_qsbr_register();
	/* The time meter's clock: the stall meter's ns when that is on (one clock read a round
	 * serves both), else the cycle counter (cheaper than the clock here). */
	const bool tmeter = !rt->cfg.no_time_meter, in_ns = rt->meter_ns;
	t_prev = in_ns ? rf_now_ns() : rf_cycles();
	/* Relaxed: the flag carries no data; what the pollers did is published by pthread_join. */
	while (!atomic_load_explicit(&rt->stop, memory_order_relaxed)) {
		uint64_t t_now = 0;
		if (stall_ns)
			t_now = meter_round(p, &last_round_ns, stall_ns);
		/* Time meter: the time since the previous round's start goes to what that round
		 * was (busy or idle). */
		if (tmeter) {
			if (!in_ns)
				t_now = rf_cycles();
			rf_counter_add(prev_busy ? &p->busy_cyc : &p->idle_cyc, t_now - t_prev);
			t_prev = t_now;
		}
		unsigned work = poll_round(p);
		rf_counter_add(&p->ctr.loops, 1);
		rf_qsbr_quiescent();
		prev_busy = work != 0;
		if (work) {
			empty = 0;
			continue;
		}
		if (!adaptive || ++empty < spin) {
			rf_cpu_relax();
			continue;
		}
		empty = 0;
		/* Seq_cst store, then one more round: pairs with the fence in rf_runtime_wake, so
		 * work handed over before a waker saw sleeping == 0 is found by this round. */
		atomic_store_explicit(&p->sleeping, 1, memory_order_seq_cst);
		if (poll_round(p)) {
			atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
			continue;
		}
		rf_counter_add(&p->ctr.idle_blocks, 1);
		rf_qsbr_offline();
		uint64_t t_block = in_ns ? rf_now_ns() : rf_cycles();
		if (tmeter)
			rf_counter_add(&p->idle_cyc, t_block - t_prev);
		poller_block(p);
		t_prev = in_ns ? rf_now_ns() : rf_cycles();
		if (tmeter)
			rf_counter_add(&p->sleep_cyc, t_prev - t_block);
		prev_busy = false;
		rf_qsbr_online();
		last_round_ns = 0; /* a block is idleness asked for, not a stall */
		atomic_store_explicit(&p->sleeping, 0, memory_order_relaxed);
		uint64_t drained;
		if (p->wake_efd >= 0 && read(p->wake_efd, &drained, sizeof(drained)) < 0)
			drained = 0; /* EAGAIN: nobody woke us (timeout or another fd) */
	}
	rf_qsbr_unregister();
	return NULL;
}

int rf_runtime_start(struct rf_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	if (rt->started)
		return -EBUSY;
	int rc = 0;
	unsigned created = 0;
	for (unsigned i = 0; i < rt->n && !rc; i++)
		rc = poller_wait_setup(&rt->p[i]);
	if (rc)
		return rc;
	for (; created < rt->n; created++) {
		struct rf_poller *p = &rt->p[created];
		rc = -pthread_create(&p->th, NULL, poller_main, p);
		if (rc)
			break;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(p->cpu, &set);
		rc = -pthread_setaffinity_np(p->th, sizeof(set), &set);
		if (rc) {
			created++;
			break;
		}
		char name[16];
		snprintf(name, sizeof(name), "rf-poll%d", p->cpu);
		pthread_setname_np(p->th, name);
	}
	if (!rc)
		rc = rf_service_start(rt);
	if (rc)
		rf_runtime_stop(rt); /* the created pollers leave the gate into a stopped runtime */
	pthread_mutex_lock(&rt->gate_lock);
	rt->gate_open = true;
	pthread_cond_broadcast(&rt->gate_cond);
	pthread_mutex_unlock(&rt->gate_lock);
	if (rc) {
		for (unsigned i = 0; i < created; i++)
			pthread_join(rt->p[i].th, NULL);
		return rc;
	}
	rt->started = true;
	return 0;
}

void rf_runtime_stop(struct rf_runtime *rt)
{
	if (!rt)
		return;
	atomic_store_explicit(&rt->stop, 1, memory_order_relaxed); /* see poller_main */
	uint64_t one = 1;
	ssize_t w = write(rt->stop_efd, &one, sizeof(one));
	(void)w; /* EAGAIN only when the counter is near 2^64: it is readable then anyway */
}

bool rf_runtime_stopping(const struct rf_runtime *rt)
{
	return atomic_load_explicit(&rt->stop, memory_order_relaxed) != 0;
}

static void on_signal(int sig)
{
	(void)sig;
	int saved = errno; /* the handler must leave errno as it found it */
	for (unsigned i = 0; i < RF_SIG_MAX; i++) {
		/* acquire: pairs with the release store in rf_runtime_handle_signals, so the
		 * runtime's stop_efd is seen initialised. */
		struct rf_runtime *rt = atomic_load_explicit(&sig_rt[i], memory_order_acquire);
		if (rt)
			rf_runtime_stop(rt); /* a relaxed store and a write(): async-signal-safe */
	}
	errno = saved;
}

int rf_runtime_handle_signals(struct rf_runtime *rt)
{
	if (rt->signals)
		return 0;
	int rc = -ENOSPC;
	pthread_mutex_lock(&sig_lock);
	for (unsigned i = 0; i < RF_SIG_MAX; i++) {
		if (atomic_load_explicit(&sig_rt[i], memory_order_relaxed))
			continue;
		/* release: pairs with the acquire load in on_signal. */
		atomic_store_explicit(&sig_rt[i], rt, memory_order_release);
		rc = 0;
		if (sig_users == 0) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_signal;
			sigemptyset(&sa.sa_mask);
			if (sigaction(SIGINT, &sa, &sig_old_int) != 0) {
				rc = -errno;
			} else if (sigaction(SIGTERM, &sa, &sig_old_term) != 0) {
				rc = -errno;
				sigaction(SIGINT, &sig_old_int, NULL);
			}
			if (rc) {
				atomic_store_explicit(&sig_rt[i], NULL, memory_order_relaxed);
				break;
			}
		}
		sig_users++;
		rt->signals = true;
		break;
	}
	pthread_mutex_unlock(&sig_lock);
	return rc;
}

/* Take rt out of the handler's list; the last one out restores the previous handlers. */
static void signals_release(struct rf_runtime *rt)
{
	pthread_mutex_lock(&sig_lock);
	for (unsigned i = 0; i < RF_SIG_MAX; i++) {
		struct rf_runtime *expect = rt;
		atomic_compare_exchange_strong(&sig_rt[i], &expect, NULL);
	}
	if (--sig_users == 0) {
		sigaction(SIGINT, &sig_old_int, NULL);
		sigaction(SIGTERM, &sig_old_term, NULL);
	}
	rt->signals = false;
	pthread_mutex_unlock(&sig_lock);
}

void rf_runtime_wait(struct rf_runtime *rt)
{
	struct pollfd pfd = {.fd = rt->stop_efd, .events = POLLIN};
	while (!rf_runtime_stopping(rt))
		poll(&pfd, 1, 1000); /* EINTR from the stopping signal: the loop re-checks */
}

int rf_runtime_join(struct rf_runtime *rt)
{
	if (!rt || !rt->started || rt->joined)
		return 0;
	for (unsigned i = 0; i < rt->n; i++)
		pthread_join(rt->p[i].th, NULL);
	rf_service_join(rt);
	rt->joined = true;
	return 0;
}

void rf_runtime_destroy(struct rf_runtime *rt)
{
	if (!rt)
		return;
	if (rt->started && !rt->joined) {
		rf_runtime_stop(rt);
		rf_runtime_join(rt);
	}
	if (rt->signals)
		signals_release(rt);
	rf_service_fini(rt);
	pthread_mutex_destroy(&rt->gate_lock);
	pthread_cond_destroy(&rt->gate_cond);
	close(rt->stop_efd);
	close(rt->wake_efd);
	for (unsigned i = 0; i < rt->n; i++)
		if (rt->p[i].wake_efd >= 0)
			close(rt->p[i].wake_efd);
	free(rt->p);
	free(rt);
}

struct rf_core_counters *rf_poller_counters(struct rf_poller *p)
{
	return &p->ctr;
}

unsigned rf_poller_index(const struct rf_poller *p)
{
	return p->idx;
}

int rf_poller_cpu(const struct rf_poller *p)
{
	return p->cpu;
}

struct rf_runtime *rf_poller_runtime(struct rf_poller *p)
{
	return p->rt;
}

/* ---- counters -------------------------------------------------------------------------- */

void rf_runtime_counters(const struct rf_runtime *rt, unsigned idx, struct rf_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (idx >= rt->n)
		return;
	const struct rf_core_counters *c = &rt->p[idx].ctr;
	/* Relaxed: each counter has one writer; a reader needs each value, not an order. */
	out->rx = atomic_load_explicit(&c->rx, memory_order_relaxed);
	out->tx = atomic_load_explicit(&c->tx, memory_order_relaxed);
	out->drop_ring_full = atomic_load_explicit(&c->drop_ring_full, memory_order_relaxed);
	out->drop_pool_empty = atomic_load_explicit(&c->drop_pool_empty, memory_order_relaxed);
	out->drop_driver = atomic_load_explicit(&c->drop_driver, memory_order_relaxed);
	out->loops = atomic_load_explicit(&c->loops, memory_order_relaxed);
	out->idle_blocks = atomic_load_explicit(&c->idle_blocks, memory_order_relaxed);
	out->stalls = atomic_load_explicit(&rt->p[idx].stalls, memory_order_relaxed);
	out->stall_max_ns = atomic_load_explicit(&rt->p[idx].stall_max_ns, memory_order_relaxed);
	out->busy_rounds = atomic_load_explicit(&rt->p[idx].busy_rounds, memory_order_relaxed);
	/* Cycles to ns at the rate measured since create (exact for the monotonic-clock build). */
	uint64_t dc = rf_cycles() - rt->cyc0, dn = rf_now_ns() - rt->ns0;
	double ns_per_cyc = !rt->meter_ns && dc && dn ? (double)dn / (double)dc : 1.0;
	out->busy_ns = (uint64_t)((double)atomic_load_explicit(&rt->p[idx].busy_cyc,
							       memory_order_relaxed) * ns_per_cyc);
	out->idle_ns = (uint64_t)((double)atomic_load_explicit(&rt->p[idx].idle_cyc,
							       memory_order_relaxed) * ns_per_cyc);
	out->sleep_ns = (uint64_t)((double)atomic_load_explicit(&rt->p[idx].sleep_cyc,
								memory_order_relaxed) * ns_per_cyc);
}

int rf_runtime_batch_hist(const struct rf_runtime *rt, unsigned idx,
			  uint64_t out[RF_RUNTIME_BATCH_BUCKETS])
{
	if (!rt || idx >= rt->n)
		return -EINVAL;
	for (unsigned k = 0; k < RF_RUNTIME_BATCH_BUCKETS; k++) /* relaxed: single writer */
		out[k] = atomic_load_explicit(&rt->p[idx].batch[k], memory_order_relaxed);
	return 0;
}

unsigned rf_runtime_npolls(const struct rf_runtime *rt, unsigned idx)
{
	return idx < rt->n ? rt->p[idx].npolls : 0;
}

int rf_runtime_poll_name(struct rf_runtime *rt, unsigned idx, unsigned k, const char *name)
{
	if (!rt || idx >= rt->n || k >= rt->p[idx].npolls || !name)
		return -EINVAL;
	snprintf(rt->p[idx].pname[k], sizeof(rt->p[idx].pname[k]), "%s", name);
	return 0;
}

int rf_runtime_poll_counters(const struct rf_runtime *rt, unsigned idx, unsigned k,
			     struct rf_poll_counters *out)
{
	if (!rt || idx >= rt->n || k >= rt->p[idx].npolls)
		return -EINVAL;
	const struct rf_poller *p = &rt->p[idx];
	/* Relaxed: single writer, a snapshot. */
	out->work = atomic_load_explicit(&p->pctr[k].work, memory_order_relaxed);
	out->rounds = atomic_load_explicit(&p->pctr[k].rounds, memory_order_relaxed);
	if (p->pname[k][0])
		snprintf(out->name, sizeof(out->name), "%s", p->pname[k]);
	else
		snprintf(out->name, sizeof(out->name), "poll%u", k);
	return 0;
}

void rf_runtime_totals(const struct rf_runtime *rt, struct rf_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < rt->n; i++) {
		struct rf_counters c;
		rf_runtime_counters(rt, i, &c);
		out->rx += c.rx;
		out->tx += c.tx;
		out->drop_ring_full += c.drop_ring_full;
		out->drop_pool_empty += c.drop_pool_empty;
		out->drop_driver += c.drop_driver;
		out->loops += c.loops;
		out->idle_blocks += c.idle_blocks;
		out->stalls += c.stalls;
		out->busy_rounds += c.busy_rounds;
		out->busy_ns += c.busy_ns;
		out->idle_ns += c.idle_ns;
		out->sleep_ns += c.sleep_ns;
		if (c.stall_max_ns > out->stall_max_ns)
			out->stall_max_ns = c.stall_max_ns;
	}
}

int rf_runtime_stats_line(const struct rf_runtime *rt, char *buf, size_t len)
{
	struct rf_counters t;
	rf_runtime_totals(rt, &t);
	int o = snprintf(buf, len, "rx %llu tx %llu drop ring %llu pool %llu drv %llu",
			 (unsigned long long)t.rx, (unsigned long long)t.tx,
			 (unsigned long long)t.drop_ring_full, (unsigned long long)t.drop_pool_empty,
			 (unsigned long long)t.drop_driver);
	for (unsigned i = 0; i < rt->n && o >= 0 && (size_t)o < len; i++) {
		struct rf_counters c;
		rf_runtime_counters(rt, i, &c);
		o += snprintf(buf + o, len - (size_t)o, " | cpu%d rx %llu tx %llu", rt->p[i].cpu,
			      (unsigned long long)c.rx, (unsigned long long)c.tx);
		if (rt->cfg.stall_us && o >= 0 && (size_t)o < len)
			o += snprintf(buf + o, len - (size_t)o, " stalls %llu max %.0f us",
				      (unsigned long long)c.stalls, (double)c.stall_max_ns / 1e3);
	}
	return o;
}

static void json_counters(FILE *out, const struct rf_counters *c)
{
	fprintf(out, "\"rx\":%llu,\"tx\":%llu,\"drop_ring_full\":%llu,\"drop_pool_empty\":%llu,"
		"\"drop_driver\":%llu,\"loops\":%llu,\"idle_blocks\":%llu,\"stalls\":%llu,"
		"\"stall_max_ns\":%llu",
		(unsigned long long)c->rx, (unsigned long long)c->tx,
		(unsigned long long)c->drop_ring_full, (unsigned long long)c->drop_pool_empty,
		(unsigned long long)c->drop_driver, (unsigned long long)c->loops,
		(unsigned long long)c->idle_blocks, (unsigned long long)c->stalls,
		(unsigned long long)c->stall_max_ns);
}

void rf_runtime_stats_json(const struct rf_runtime *rt, FILE *out)
{
	struct rf_counters t;
	rf_runtime_totals(rt, &t);
	fprintf(out, "{\"totals\":{");
	json_counters(out, &t);
	fprintf(out, "},\"cores\":[");
	for (unsigned i = 0; i < rt->n; i++) {
		struct rf_counters c;
		rf_runtime_counters(rt, i, &c);
		fprintf(out, "%s{\"cpu\":%d,", i ? "," : "", rt->p[i].cpu);
		json_counters(out, &c);
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}
