/*
 * runtime/service.c: the service thread, where slow-path work runs so pollers never wait.
 *
 * Timers live in a small binary min-heap on their deadline, under one mutex (timers are
 * added rarely and from anywhere; the heap is touched a few times a second). The thread
 * sleeps in poll() on two eventfds: the runtime's stop fd and a wake fd that rf_runtime_timer_add
 * writes when the new timer is the earliest, so a new deadline is honoured at once.
 * The periodic stats line is one of these timers.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/log.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>

#include "runtime_pvt.h"

uint64_t rf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void heap_swap(struct rf_runtime *rt, unsigned a, unsigned b)
{
	struct rf_timer t = rt->heap[a];
	rt->heap[a] = rt->heap[b];
	rt->heap[b] = t;
}

static void heap_up(struct rf_runtime *rt, unsigned i)
{
	while (i > 0 && rt->heap[(i - 1) / 2].when_ns > rt->heap[i].when_ns) {
		heap_swap(rt, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct rf_runtime *rt, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		if (l < rt->ntimers && rt->heap[l].when_ns < rt->heap[m].when_ns)
			m = l;
		if (r < rt->ntimers && rt->heap[r].when_ns < rt->heap[m].when_ns)
			m = r;
		if (m == i)
			return;
		heap_swap(rt, i, m);
		i = m;
	}
}

static void heap_remove(struct rf_runtime *rt, unsigned i)
{
	rt->heap[i] = rt->heap[--rt->ntimers];
	if (i < rt->ntimers) {
		heap_down(rt, i);
		heap_up(rt, i);
	}
}

static void wake(struct rf_runtime *rt)
{
	uint64_t one = 1;
	ssize_t w = write(rt->wake_efd, &one, sizeof(one));
	(void)w; /* EAGAIN: already readable */
}

int rf_runtime_timer_add(struct rf_runtime *rt, uint64_t delay_ns, uint64_t period_ns,
			 void (*fn)(void *arg), void *arg)
{
	if (!rt || !fn)
		return -EINVAL;
	pthread_mutex_lock(&rt->tlock);
	if (rt->ntimers == RF_RUNTIME_MAX_TIMERS) {
		pthread_mutex_unlock(&rt->tlock);
		return -ENOSPC;
	}
	int id = rt->next_id++;
	if (rt->next_id < 0)
		rt->next_id = 0;
	unsigned i = rt->ntimers++;
	rt->heap[i] = (struct rf_timer){rf_now_ns() + delay_ns, period_ns, fn, arg, id};
	heap_up(rt, i);
	bool first = rt->heap[0].id == id;
	pthread_mutex_unlock(&rt->tlock);
	if (first)
		wake(rt);
	return id;
}

int rf_runtime_timer_cancel(struct rf_runtime *rt, int id)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&rt->tlock);
	for (unsigned i = 0; i < rt->ntimers; i++)
		if (rt->heap[i].id == id) {
			heap_remove(rt, i);
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&rt->tlock);
	return rc;
}

int rf_runtime_call(struct rf_runtime *rt, void (*fn)(void *arg), void *arg)
{
	int id = rf_runtime_timer_add(rt, 0, 0, fn, arg);
	return id < 0 ? id : 0;
}

/* Run every due timer; return ms until the next one (capped: stop is seen at least that often). */
static int run_due(struct rf_runtime *rt)
{
	pthread_mutex_lock(&rt->tlock);
	for (;;) {
		uint64_t now = rf_now_ns();
		if (rt->ntimers == 0 || rt->heap[0].when_ns > now) {
			int ms = 200;
			if (rt->ntimers) {
				uint64_t d = (rt->heap[0].when_ns - now + 999999) / 1000000;
				ms = d < 200 ? (int)d : 200;
			}
			pthread_mutex_unlock(&rt->tlock);
			return ms;
		}
		struct rf_timer t = rt->heap[0];
		if (t.period_ns) {
			/* Fixed rate, but never a burst of catch-up runs after a stall. */
			rt->heap[0].when_ns = t.when_ns + t.period_ns > now ? t.when_ns + t.period_ns
									     : now + t.period_ns;
			heap_down(rt, 0);
		} else {
			heap_remove(rt, 0);
		}
		pthread_mutex_unlock(&rt->tlock);
		t.fn(t.arg);
		rf_qsbr_quiescent();
		pthread_mutex_lock(&rt->tlock);
	}
}

static void *service_main(void *arg)
{
	struct rf_runtime *rt = arg;
	struct pollfd pfd[2] = {{.fd = rt->stop_efd, .events = POLLIN},
				{.fd = rt->wake_efd, .events = POLLIN}};
	rf_qsbr_register();
	while (!rf_runtime_stopping(rt)) {
		int ms = run_due(rt);
		rf_qsbr_offline();
		if (poll(pfd, 2, ms) > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t v;
			ssize_t r = read(rt->wake_efd, &v, sizeof(v));
			(void)r;
		}
		rf_qsbr_online();
	}
	rf_qsbr_unregister();
	return NULL;
}

/* The periodic stats line: totals, and rates since the previous line. */
static void stats_tick(void *arg)
{
	struct rf_runtime *rt = arg;
	struct rf_counters now;
	uint64_t t = rf_now_ns();
	rf_runtime_totals(rt, &now);
	double s = (double)(t - rt->stats_last_ns) / 1e9;
	char line[1024];
	rf_runtime_stats_line(rt, line, sizeof(line));
	double rx = s > 0 ? (double)(now.rx - rt->stats_last.rx) / s : 0.0;
	double tx = s > 0 ? (double)(now.tx - rt->stats_last.tx) / s : 0.0;
	if (rt->cfg.stats_out) {
		fprintf(rt->cfg.stats_out, "[stats] rx/s %.0f tx/s %.0f | %s\n", rx, tx, line);
		fflush(rt->cfg.stats_out);
	} else {
		rf_log(RF_LOG_INFO, "[stats] rx/s %.0f tx/s %.0f | %s", rx, tx, line);
	}
	rt->stats_last = now;
	rt->stats_last_ns = t;
}

void rf_service_init(struct rf_runtime *rt)
{
	pthread_mutex_init(&rt->tlock, NULL);
	rt->stats_timer = -1;
}

int rf_service_start(struct rf_runtime *rt)
{
	if (rt->cfg.stats_interval_s > 0) {
		uint64_t period = (uint64_t)(rt->cfg.stats_interval_s * 1e9);
		rt->stats_last_ns = rf_now_ns();
		int id = rf_runtime_timer_add(rt, period, period ? period : 1, stats_tick, rt);
		if (id < 0)
			return id;
		rt->stats_timer = id;
	}
	int rc = pthread_create(&rt->svc, NULL, service_main, rt);
	if (rc)
		return -rc;
	pthread_setname_np(rt->svc, "rf-service");
	rt->svc_running = true;
	return 0;
}

void rf_service_join(struct rf_runtime *rt)
{
	if (rt->svc_running)
		pthread_join(rt->svc, NULL);
	rt->svc_running = false;
}

void rf_service_fini(struct rf_runtime *rt)
{
	pthread_mutex_destroy(&rt->tlock);
}
