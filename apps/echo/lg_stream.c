/*
 * apps/echo/lg_stream.c: stream mode (TCP_STREAM / UDP_STREAM), see lg_modes.h.
 *
 * Each round allocates a burst, writes the messages (header + pattern, as lg_msg.h) and offers
 * them to tx_burst; what the driver does not take is freed and rebuilt next round, so a
 * sequence number counts once it is sent. The sum of rf_lg_csum over what was sent in the
 * measured window is kept; after the window one report request goes out behind the data, and
 * the sink's answer (lg_sink.h) says what arrived: same bytes and same checksum on TCP, and on
 * UDP the difference is the loss. The request is resent every 250 ms (UDP may lose it) until
 * the answer comes or the drain time (at least 2 s: a sink may have a socket buffer of backlog
 * to read first) has passed.
 */
#include <errno.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_modes.h"
#include "lg_msg.h"
#include "lg_run.h"
#include "lg_sink.h"

static void clear_meta(struct rf_pktbuf *b)
{
	b->flow = 0; /* tcp connect mode: 0 = this queue's connection */
	b->flags = 0;
	b->peer_len = 0; /* udp connect mode: the connected peer */
}

/* Frees whatever came back (a stream expects nothing but the report); returns the report of
 * `point` if one was among them (into *r), else leaves *r alone. */
static bool take_report(struct rf_io_dev *dev, uint16_t point, struct rf_lg_sink_report *r)
{
	struct rf_pktbuf *b[64];
	bool got = false;
	unsigned n = rf_io_rx_burst(dev, 0, b, 64);
	for (unsigned i = 0; i < n; i++) {
		struct rf_lg_sink_report x;
		if (!got && b[i]->data_len == sizeof(x)) {
			memcpy(&x, rf_pktbuf_data(b[i]), sizeof(x));
			if (x.magic == RF_LG_SINK_MAGIC && x.point == point) {
				*r = x;
				got = true;
			}
		}
	}
	if (n)
		rf_pktbuf_free_bulk(b, n);
	return got;
}

int rf_lg_run_stream(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
		     const struct rf_lg_mopts *o, struct rf_lg_mpoint *p)
{
	if (o->size < RF_LG_HDR_SIZE || o->size > RF_LG_MAX_SIZE || o->burst == 0 ||
	    o->burst > RF_IO_MAX_BURST || o->duration_s <= 0)
		return -EINVAL;
	p->mode = RF_LG_MODE_STREAM;
	p->size = o->size;
	p->conns = 1;
	p->sent_msgs = p->sent_bytes = p->sent_csum = 0;
	p->recv_msgs = p->recv_bytes = p->recv_csum = 0;
	p->reported = false;
	p->corrupt = 0;

	struct rf_pktbuf *b[RF_IO_MAX_BURST];
	uint64_t csum[RF_IO_MAX_BURST];
	struct rf_lg_cpu_sample ca, cb;
	double proc_a = 0;
	uint64_t seq_warm = 0, seq = 0;
	uint64_t now = rf_lg_now_ns();
	const uint64_t t_meas = now + (uint64_t)(o->warmup_s * 1e9);
	const uint64_t t_end = t_meas + (uint64_t)(o->duration_s * 1e9);
	uint64_t t_start = t_meas;
	bool measuring = false;
	for (;;) {
		now = rf_lg_now_ns();
		if (now >= t_end || (measuring && o->max_msgs && p->sent_msgs >= o->max_msgs))
			break;
		if (!measuring && now >= t_meas) {
			rf_lg_cpu_read(&ca);
			proc_a = rf_lg_proc_cpu_s();
			t_start = rf_lg_now_ns();
			measuring = true;
		}
		unsigned cnt = o->burst;
		if (measuring && o->max_msgs && o->max_msgs - p->sent_msgs < cnt)
			cnt = (unsigned)(o->max_msgs - p->sent_msgs);
		if (rf_pktbuf_alloc_bulk(pool, b, cnt) == 0) {
			for (unsigned i = 0; i < cnt; i++) {
				struct rf_lg_hdr h = {
					.magic = RF_LG_MAGIC, .point = o->point,
					.phase = measuring ? RF_LG_PHASE_MEASURED : RF_LG_PHASE_WARMUP,
					.seq = (measuring ? seq : seq_warm) + i};
				void *d = rf_pktbuf_data(b[i]);
				rf_lg_msg_write(d, o->size, &h);
				b[i]->data_len = o->size;
				clear_meta(b[i]);
				csum[i] = measuring ? rf_lg_csum(d, o->size) : 0;
			}
			unsigned m = rf_io_tx_burst(dev, 0, b, cnt);
			if (m < cnt)
				rf_pktbuf_free_bulk(b + m, cnt - m);
			if (measuring) {
				for (unsigned i = 0; i < m; i++)
					p->sent_csum += csum[i];
				p->sent_msgs += m;
				p->sent_bytes += (uint64_t)m * o->size;
				seq += m;
			} else {
				seq_warm += m;
			}
		}
		/* Nothing should come back, but receiving drives some drivers' completions and
		 * frees anything stray. */
		struct rf_lg_sink_report ignored;
		take_report(dev, (uint16_t)(o->point + 1), &ignored);
	}
	if (!measuring) { /* a zero-length warm-up still measures from here */
		rf_lg_cpu_read(&ca);
		proc_a = rf_lg_proc_cpu_s();
		t_start = now;
	}
	uint64_t t_stop = rf_lg_now_ns();
	rf_lg_cpu_read(&cb);
	double proc_b = rf_lg_proc_cpu_s();
	p->seconds = (double)(t_stop - t_start) / 1e9;
	rf_lg_mpoint_cpu(p, &ca, &cb, proc_b - proc_a);

	/* The report: bounded by max(drain_ms, 2 s). */
	uint64_t wait_ms = o->drain_ms > 2000 ? o->drain_ms : 2000;
	uint64_t give_up = t_stop + wait_ms * 1000000u, next_req = t_stop;
	struct rf_lg_sink_report r;
	while ((now = rf_lg_now_ns()) < give_up) {
		if (now >= next_req) {
			struct rf_pktbuf *q = rf_pktbuf_alloc(pool);
			if (q) {
				struct rf_lg_hdr h = {.magic = RF_LG_MAGIC, .point = o->point,
						      .phase = RF_LG_PHASE_REPORT_REQ};
				memcpy(rf_pktbuf_data(q), &h, sizeof(h));
				q->data_len = RF_LG_HDR_SIZE;
				clear_meta(q);
				if (rf_io_tx_burst(dev, 0, &q, 1) == 1)
					next_req = now + 250000000u;
				else
					rf_pktbuf_free(q);
			}
		}
		if (take_report(dev, o->point, &r)) {
			p->reported = true;
			p->recv_msgs = r.msgs;
			p->recv_bytes = r.bytes;
			p->recv_csum = r.csum;
			p->corrupt = r.corrupt;
			break;
		}
	}
	return 0;
}
