/*
 * apps/echo/lg_crr.c: crr mode (TCP_CRR), see lg_modes.h.
 *
 * One connection at a time, as netperf's TCP_CRR: rf_io_open(spec) (the driver connects and
 * waits for the handshake), one request, wait for its reply (checked as lg_msg.h says), then
 * rf_io_close. The latency of a connection is from before the open to after the close, so it
 * includes everything a client pays for one. Warm-up connections are made but not counted.
 * Bounds: the window's end, max_msgs connections, 1 s for a reply, and 100 failures in a row
 * end the run (a refused or exhausted port range does not turn into a busy loop).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_modes.h"
#include "lg_msg.h"
#include "lg_run.h"

#define CRR_REPLY_NS 1000000000ull
#define CRR_MAX_FAILS_IN_A_ROW 100

/* One connection's life. Returns 0 when the reply came back and checked out. */
static int one_conn(const char *spec, struct rf_pktbuf_pool *pool, const struct rf_lg_mopts *o,
		    uint16_t phase, uint64_t seq, struct rf_lg_mpoint *p, char *err, size_t errlen)
{
	struct rf_io_dev *dev = rf_io_open(spec, pool, err, errlen);
	if (!dev)
		return -(errno ? errno : EIO);
	p->conns_made++;
	int rc = -ETIMEDOUT;
	struct rf_pktbuf *b[16];
	if (rf_pktbuf_alloc_bulk(pool, b, 1) != 0) {
		rf_io_close(dev);
		return -ENOBUFS;
	}
	struct rf_lg_hdr h = {.magic = RF_LG_MAGIC, .point = o->point, .phase = phase, .seq = seq,
			      .send_ns = rf_lg_now_ns()};
	rf_lg_msg_write(rf_pktbuf_data(b[0]), o->size, &h);
	b[0]->data_len = o->size;
	b[0]->flow = 0;
	b[0]->flags = 0;
	b[0]->peer_len = 0;
	uint64_t give_up = rf_lg_now_ns() + CRR_REPLY_NS;
	bool sent = false;
	while (!sent && rf_lg_now_ns() < give_up)
		sent = rf_io_tx_burst(dev, 0, b, 1) == 1;
	if (!sent) {
		rf_pktbuf_free(b[0]);
		rf_io_close(dev);
		snprintf(err, errlen, "the driver did not take the request within 1 s");
		return -EIO;
	}
	p->total_sent++;
	while (rc == -ETIMEDOUT && rf_lg_now_ns() < give_up) {
		unsigned n = rf_io_rx_burst(dev, 0, b, 16);
		for (unsigned i = 0; i < n; i++) {
			struct rf_lg_hdr r;
			p->total_recv++;
			if (rf_lg_msg_read(rf_pktbuf_data(b[i]), b[i]->data_len, o->size, &r) &&
			    r.point == o->point && r.phase == phase && r.seq == seq)
				rc = 0;
			else
				p->corrupt++;
		}
		if (n)
			rf_pktbuf_free_bulk(b, n);
	}
	if (rc)
		snprintf(err, errlen, "no valid reply within 1 s");
	rf_io_close(dev);
	return rc;
}

int rf_lg_run_crr(const char *spec, struct rf_pktbuf_pool *pool, const struct rf_lg_mopts *o,
		  struct rf_lg_mpoint *p, char *err, size_t errlen)
{
	if (o->size < RF_LG_HDR_SIZE || o->size > RF_LG_MAX_SIZE || o->max_msgs == 0 ||
	    o->duration_s <= 0 || !p->lat) {
		snprintf(err, errlen, "crr: bad options");
		return -EINVAL;
	}
	p->mode = RF_LG_MODE_CRR;
	p->size = o->size;
	p->conns = 1;
	p->outstanding = 1;
	p->sent_msgs = p->sent_bytes = p->sent_csum = 0;
	p->recv_msgs = p->recv_bytes = p->recv_csum = 0;
	p->corrupt = p->errors = p->total_sent = p->total_recv = p->conns_made = 0;
	rf_hist_reset(p->lat);

	struct rf_lg_cpu_sample ca, cb;
	double proc_a = 0;
	uint64_t seq = 0, seq_warm = 0, ok_total = 0;
	unsigned fails_in_a_row = 0;
	char e[512] = "";
	uint64_t now = rf_lg_now_ns();
	const uint64_t t_meas = now + (uint64_t)(o->warmup_s * 1e9);
	const uint64_t t_end = t_meas + (uint64_t)(o->duration_s * 1e9);
	uint64_t t_start = now;
	bool measuring = false;
	while ((now = rf_lg_now_ns()) < t_end && seq < o->max_msgs) {
		if (!measuring && now >= t_meas) {
			rf_lg_cpu_read(&ca);
			proc_a = rf_lg_proc_cpu_s();
			t_start = now;
			measuring = true;
		}
		uint16_t phase = measuring ? RF_LG_PHASE_MEASURED : RF_LG_PHASE_WARMUP;
		uint64_t t0 = rf_lg_now_ns();
		int rc = one_conn(spec, pool, o, phase, measuring ? seq : seq_warm, p, e, sizeof(e));
		uint64_t t1 = rf_lg_now_ns();
		if (measuring) {
			seq++;
			p->sent_msgs++;
			p->sent_bytes += o->size;
		} else {
			seq_warm++;
		}
		if (rc == 0) {
			ok_total++;
			fails_in_a_row = 0;
			if (measuring) {
				p->recv_msgs++;
				p->recv_bytes += o->size;
				rf_hist_record(p->lat, t1 - t0);
			}
		} else {
			if (measuring)
				p->errors++;
			if (++fails_in_a_row >= CRR_MAX_FAILS_IN_A_ROW)
				break;
		}
	}
	if (!measuring) {
		rf_lg_cpu_read(&ca);
		proc_a = rf_lg_proc_cpu_s();
		t_start = now;
	}
	uint64_t t_stop = rf_lg_now_ns();
	rf_lg_cpu_read(&cb);
	p->seconds = (double)(t_stop - t_start) / 1e9;
	rf_lg_mpoint_cpu(p, &ca, &cb, rf_lg_proc_cpu_s() - proc_a);
	if (fails_in_a_row >= CRR_MAX_FAILS_IN_A_ROW || (ok_total == 0 && e[0])) {
		snprintf(err, errlen, "crr: %u connections in a row failed; last: %s", fails_in_a_row,
			 e);
		return ok_total ? 0 : -ECONNREFUSED;
	}
	return 0;
}
