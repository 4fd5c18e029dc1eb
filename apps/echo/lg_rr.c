/*
 * apps/echo/lg_rr.c: rr mode (TCP_RR / UDP_RR), a closed loop, see lg_modes.h.
 *
 * Each connection (one device each) keeps `outstanding` requests in flight: every reply that
 * checks out (lg_msg.h: header, size, pattern) frees a slot and the next request goes at once.
 * A transaction is a measured request whose first reply came back; its latency is the reply's
 * receive time minus the send time carried in it. Sequence numbers of the measured window are
 * unique across connections, so a bitmap (lg_track.h) tells first replies from duplicates.
 * When the window ends no new request goes; the loop drains the replies still owed, for at
 * most drain_ms. A connection that got nothing back for RR_LOST_NS gives its in-flight requests
 * up as lost (UDP can lose them) and starts afresh. The loop spins, unless o->block: then after
 * RR_SPIN_ROUNDS rounds without a reply it blocks in rf_io_wait for up to 1 ms.
 */
#include <errno.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_modes.h"
#include "lg_msg.h"
#include "lg_run.h"
#include "lg_track.h"

#define RR_LOST_NS 1000000000ull
#define RR_SPIN_ROUNDS 8

struct rr_conn {
	unsigned inflight;
	uint64_t last_progress; /* last reply or (re)start */
};

int rf_lg_run_rr(struct rf_io_dev **dev, unsigned ndev, struct rf_pktbuf_pool *pool,
		 const struct rf_lg_mopts *o, struct rf_lg_mpoint *p)
{
	if (ndev == 0 || ndev > RF_LG_MAX_CONNS || o->outstanding == 0 ||
	    o->outstanding > RF_LG_MAX_OUTSTANDING || o->size < RF_LG_HDR_SIZE ||
	    o->size > RF_LG_MAX_SIZE || o->max_msgs == 0 || o->duration_s <= 0 || !p->lat)
		return -EINVAL;
	struct rf_lg_track t;
	if (rf_lg_track_init(&t, o->max_msgs) < 0)
		return -ENOMEM;
	p->mode = RF_LG_MODE_RR;
	p->size = o->size;
	p->conns = ndev;
	p->outstanding = o->outstanding;
	p->sent_msgs = p->sent_bytes = p->sent_csum = 0;
	p->recv_msgs = p->recv_bytes = p->recv_csum = 0;
	p->corrupt = p->duplicates = p->lost = p->total_sent = p->total_recv = 0;
	rf_hist_reset(p->lat);

	struct rr_conn c[RF_LG_MAX_CONNS];
	struct rf_pktbuf *b[RF_IO_MAX_BURST];
	struct rf_lg_cpu_sample ca, cb;
	double proc_a = 0, proc_b = 0;
	uint64_t seq_warm = 0, seq = 0;
	uint64_t now = rf_lg_now_ns();
	const uint64_t t_meas = now + (uint64_t)(o->warmup_s * 1e9);
	const uint64_t t_end = t_meas + (uint64_t)(o->duration_s * 1e9);
	uint64_t t_start = 0, t_stop = 0;
	bool measuring = false, stopping = false;
	unsigned empty_rounds = 0, wait_next = 0;
	for (unsigned i = 0; i < ndev; i++)
		c[i] = (struct rr_conn){0, now};
	for (;;) {
		now = rf_lg_now_ns();
		if (!measuring && !stopping && now >= t_meas) {
			rf_lg_cpu_read(&ca);
			proc_a = rf_lg_proc_cpu_s();
			t_start = now;
			measuring = true;
		}
		if (!stopping && (now >= t_end || seq >= o->max_msgs)) {
			if (!measuring) { /* a window shorter than a loop round */
				rf_lg_cpu_read(&ca);
				proc_a = rf_lg_proc_cpu_s();
				t_start = now;
			}
			t_stop = now;
			rf_lg_cpu_read(&cb);
			proc_b = rf_lg_proc_cpu_s();
			measuring = false;
			stopping = true;
		}
		unsigned owed = 0;
		for (unsigned k = 0; k < ndev; k++)
			owed += c[k].inflight;
		if (stopping && (owed == 0 || now >= t_stop + (uint64_t)o->drain_ms * 1000000u)) {
			p->lost += owed;
			break;
		}
		if (o->block && empty_rounds >= RR_SPIN_ROUNDS) {
			rf_io_wait(dev[wait_next], 0, 1);
			wait_next = (wait_next + 1) % ndev;
			now = rf_lg_now_ns();
		}
		empty_rounds++;
		for (unsigned k = 0; k < ndev; k++) {
			unsigned n = rf_io_rx_burst(dev[k], 0, b, 64);
			if (n)
				empty_rounds = 0;
			uint64_t rnow = n ? rf_lg_now_ns() : now;
			for (unsigned i = 0; i < n; i++) {
				struct rf_lg_hdr h;
				p->total_recv++;
				if (!rf_lg_msg_read(rf_pktbuf_data(b[i]), b[i]->data_len, o->size, &h) ||
				    h.point != o->point) {
					p->corrupt++;
					continue;
				}
				if (c[k].inflight)
					c[k].inflight--;
				c[k].last_progress = rnow;
				if (h.phase != RF_LG_PHASE_MEASURED)
					continue;
				if (rf_lg_track_reply(&t, h.seq)) {
					p->recv_msgs++;
					p->recv_bytes += o->size;
					rf_hist_record(p->lat, rnow > h.send_ns ? rnow - h.send_ns : 0);
				} else {
					p->duplicates++;
				}
			}
			if (n)
				rf_pktbuf_free_bulk(b, n);
			if (stopping)
				continue;
			/* now is the round's start and last_progress may be later: no unsigned wrap. */
			if (c[k].inflight && now > c[k].last_progress + RR_LOST_NS) {
				p->lost += c[k].inflight;
				c[k].inflight = 0;
				c[k].last_progress = now;
			}
			unsigned want = o->outstanding - c[k].inflight;
			if (measuring && want > o->max_msgs - seq)
				want = (unsigned)(o->max_msgs - seq);
			if (want == 0 || rf_pktbuf_alloc_bulk(pool, b, want) != 0)
				continue;
			uint64_t stamp = rf_lg_now_ns();
			for (unsigned i = 0; i < want; i++) {
				struct rf_lg_hdr h = {
					.magic = RF_LG_MAGIC, .point = o->point,
					.phase = measuring ? RF_LG_PHASE_MEASURED : RF_LG_PHASE_WARMUP,
					.seq = (measuring ? seq : seq_warm) + i, .send_ns = stamp};
				rf_lg_msg_write(rf_pktbuf_data(b[i]), o->size, &h);
				b[i]->data_len = o->size;
				b[i]->flow = 0;
				b[i]->flags = 0;
				b[i]->peer_len = 0;
			}
			unsigned m = rf_io_tx_burst(dev[k], 0, b, want);
			if (m < want)
				rf_pktbuf_free_bulk(b + m, want - m);
			c[k].inflight += m;
			if (m && c[k].inflight == m)
				c[k].last_progress = stamp; /* the clock for loss starts at the send */
			p->total_sent += m;
			if (measuring) {
				seq += m;
				p->sent_msgs += m;
				p->sent_bytes += (uint64_t)m * o->size;
			} else {
				seq_warm += m;
			}
		}
	}
	p->seconds = (double)(t_stop - t_start) / 1e9;
	rf_lg_mpoint_cpu(p, &ca, &cb, proc_b - proc_a);
	rf_lg_track_free(&t);
	return 0;
}
