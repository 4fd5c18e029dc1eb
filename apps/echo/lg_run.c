/*
 * apps/echo/lg_run.c: one rate point of the open-loop load generator (see lg_run.h).
 *
 * The loop, each round: (1) send every message whose deadline has passed, up to `burst` per
 * tx_burst, stamped with the time just before the burst; whatever the driver did not accept
 * stays due and is rebuilt next round (so a sequence number is only used once it is sent);
 * (2) receive a burst of replies and time them. After the last deadline only (2) runs, until
 * every measured message is back or drain_ms has passed.
 */
#include "lg_run.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_msg.h"

uint64_t rf_lg_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct lg_state {
	const struct rf_lg_opts *o;
	struct rf_lg_track *t;
	struct rf_lg_point *p;
	uint64_t corrupt, stale;
};

static void take_replies(struct lg_state *s, struct rf_pktbuf **b, unsigned n)
{
	uint64_t now = rf_lg_now_ns();
	for (unsigned i = 0; i < n; i++) {
		struct rf_lg_hdr h;
		if (!rf_lg_msg_read(rf_pktbuf_data(b[i]), b[i]->data_len, s->o->size, &h))
			s->corrupt++;
		else if (h.point != s->o->point || h.phase != RF_LG_PHASE_MEASURED)
			s->stale++; /* warm-up, or a late reply of an earlier point */
		else if (rf_lg_track_reply(s->t, h.seq))
			rf_hist_record(s->p->rtt, now > h.send_ns ? now - h.send_ns : 0);
	}
	rf_pktbuf_free_bulk(b, n);
}

/* The receiver of a split point (rf_lg_run_point_split): polls the device's queue 0 for
 * replies on its own CPU while the caller sends; after the sender is done it drains for at
 * most drain_ms. The tracker and histogram are written by this thread only. */
struct lg_rx {
	struct lg_state *s;
	struct rf_io_dev *dev;
	int cpu;
	_Atomic uint64_t sent;    /* measured messages sent, final once sender_done is set */
	_Atomic bool sender_done;
};

static void *rx_loop(void *arg)
{
	struct lg_rx *rx = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(rx->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	struct rf_pktbuf *b[64];
	uint64_t end = 0;
	for (;;) {
		unsigned n = rf_io_rx_burst(rx->dev, 0, b, 64);
		if (n)
			take_replies(rx->s, b, n);
		/* acquire: pairs with the sender's release of sender_done, so `sent` is final. */
		if (atomic_load_explicit(&rx->sender_done, memory_order_acquire)) {
			uint64_t now = rf_lg_now_ns();
			if (!end)
				end = now + (uint64_t)rx->s->o->drain_ms * 1000000u;
			uint64_t sent = atomic_load_explicit(&rx->sent, memory_order_relaxed);
			if (rx->s->t->received >= sent || now >= end)
				break;
		}
	}
	return NULL;
}

/* Deadline of message k: t0 + k / rate, in integer ns without drift. */
static uint64_t deadline(uint64_t t0, uint64_t k, double period_ns)
{
	return t0 + (uint64_t)llround((double)k * period_ns);
}

/* One point; rx_cpu < 0: replies are polled in the sending loop, else by a receiver thread
 * pinned to rx_cpu (the device must have RF_IO_CAP_SPLIT_RXTX). */
static int run_point(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
		     const struct rf_lg_opts *o, struct rf_lg_track *t, struct rf_lg_point *p,
		     int rx_cpu)
{
	struct lg_state s = {.o = o, .t = t, .p = p};
	const double period_ns = 1e9 / o->rate;
	const uint64_t n_warm = (uint64_t)llround(o->rate * o->warmup_s);
	const uint64_t n_meas = (uint64_t)llround(o->rate * o->duration_s);
	const uint64_t n_all = n_warm + n_meas;
	if (n_meas + 1 > t->capacity || o->size < RF_LG_HDR_SIZE || o->size > RF_LG_MAX_SIZE ||
	    o->burst == 0 || o->burst > RF_IO_MAX_BURST)
		return -EINVAL;
	rf_hist_reset(p->rtt);
	rf_lg_track_reset(t);
	p->offered_rate = o->rate;
	p->seconds = o->duration_s;
	p->offered = n_meas;
	p->sent = 0;
	p->late_max_ns = 0;

	struct rf_pktbuf *b[RF_IO_MAX_BURST];
	struct rf_lg_cpu_sample cpu_a, cpu_b;
	bool cpu_a_taken = false;
	uint64_t k = 0; /* messages sent so far (warm-up and measured) */
	uint64_t t0 = rf_lg_now_ns() + 1000000; /* first deadline 1 ms from now */
	uint64_t first_meas_ns = deadline(t0, n_warm, period_ns), last_send_ns = first_meas_ns;
	uint64_t now = rf_lg_now_ns();

	struct lg_rx rx = {.s = &s, .dev = dev, .cpu = rx_cpu};
	pthread_t rx_thread;
	if (rx_cpu >= 0 && pthread_create(&rx_thread, NULL, rx_loop, &rx) != 0)
		return -EAGAIN;

	while (k < n_all) {
		/* Guard against a driver that never accepts: the window plus 2 s is the most. */
		if (now > deadline(t0, n_all, period_ns) + 2000000000ull)
			break;
		if (!cpu_a_taken && k >= n_warm) {
			rf_lg_cpu_read(&cpu_a);
			cpu_a_taken = true;
		}
		uint64_t due_until = (uint64_t)floor((double)(now - (now > t0 ? t0 : now)) / period_ns) + 1;
		if (now < t0)
			due_until = 0;
		if (due_until > n_all)
			due_until = n_all;
		if (k < due_until) {
			unsigned cnt = (unsigned)(due_until - k < o->burst ? due_until - k : o->burst);
			/* Phase boundary inside a burst: stop at it, so the next burst's stamp and
			 * the measured-window bookkeeping start cleanly. */
			if (k < n_warm && k + cnt > n_warm)
				cnt = (unsigned)(n_warm - k);
			if (rf_pktbuf_alloc_bulk(pool, b, cnt) == 0) {
				uint64_t late = now - deadline(t0, k, period_ns);
				for (unsigned i = 0; i < cnt; i++) {
					uint64_t idx = k + i;
					struct rf_lg_hdr h = {
						.magic = RF_LG_MAGIC, .point = o->point,
						.phase = idx < n_warm ? RF_LG_PHASE_WARMUP : RF_LG_PHASE_MEASURED,
						.seq = idx < n_warm ? idx : idx - n_warm};
					rf_lg_msg_write(rf_pktbuf_data(b[i]), o->size, &h);
					b[i]->data_len = o->size;
				}
				uint64_t stamp = rf_lg_now_ns();
				for (unsigned i = 0; i < cnt; i++)
					rf_lg_msg_stamp(rf_pktbuf_data(b[i]), stamp);
				unsigned m = rf_io_tx_burst(dev, 0, b, cnt);
				if (m < cnt)
					rf_pktbuf_free_bulk(b + m, cnt - m);
				if (m && k >= n_warm) {
					p->sent += m;
					last_send_ns = stamp;
					if (late > p->late_max_ns)
						p->late_max_ns = late;
				}
				k += m;
			}
		}
		if (rx_cpu < 0) {
			unsigned n = rf_io_rx_burst(dev, 0, b, 64);
			if (n)
				take_replies(&s, b, n);
		}
		now = rf_lg_now_ns();
	}
	if (!cpu_a_taken)
		rf_lg_cpu_read(&cpu_a);
	rf_lg_cpu_read(&cpu_b);

	if (rx_cpu >= 0) {
		atomic_store_explicit(&rx.sent, p->sent, memory_order_relaxed);
		/* release: pairs with the receiver's acquire; it may now drain and stop. */
		atomic_store_explicit(&rx.sender_done, true, memory_order_release);
		pthread_join(rx_thread, NULL);
	} else {
		/* Drain: bounded by drain_ms after the last send. */
		uint64_t end = rf_lg_now_ns() + (uint64_t)o->drain_ms * 1000000u;
		while (t->received < p->sent && rf_lg_now_ns() < end) {
			unsigned n = rf_io_rx_burst(dev, 0, b, 64);
			if (n)
				take_replies(&s, b, n);
		}
	}
	p->received = t->received;
	p->reordered = t->reordered;
	p->duplicates = t->duplicates;
	p->corrupt = s.corrupt + t->out_of_range;
	/* A sender that fell behind took longer than the schedule to send its messages: then the
	 * window is the real one, and offered is what the schedule asked for in it, so a late
	 * sender shows up as received < 99 % of offered (saturated), not as a clean point. */
	double window = (double)(last_send_ns - first_meas_ns) / 1e9 + period_ns / 1e9;
	p->achieved_rate = window > 0 ? (double)p->sent / window : 0;
	if (window > o->duration_s) {
		p->seconds = window;
		p->offered = (uint64_t)llround(o->rate * window);
	}
	rf_lg_point_cpu(p, &cpu_a, &cpu_b);
	return 0;
}

int rf_lg_run_point(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
		    const struct rf_lg_opts *o, struct rf_lg_track *t, struct rf_lg_point *p)
{
	return run_point(dev, pool, o, t, p, -1);
}

int rf_lg_run_point_split(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
			  const struct rf_lg_opts *o, struct rf_lg_track *t, struct rf_lg_point *p,
			  int rx_cpu)
{
	if (rx_cpu < 0 || !(rf_io_caps(dev) & RF_IO_CAP_SPLIT_RXTX))
		return -EOPNOTSUPP;
	return run_point(dev, pool, o, t, p, rx_cpu);
}
