/*
 * apps/echo/lg_sink.c: the stream-mode sink (see lg_sink.h): count, check, answer reports.
 */
#include "lg_sink.h"

#include <string.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>
#include <ringflow/runtime.h>

#include "lg_msg.h"

static void start_point(struct rf_lg_sink *s, uint16_t point)
{
	memset(&s->r, 0, sizeof(s->r));
	s->r.magic = RF_LG_SINK_MAGIC;
	s->r.point = point;
}

unsigned rf_lg_sink_take(struct rf_lg_sink *s, struct rf_pktbuf **b, unsigned n,
			 struct rf_pktbuf **out)
{
	unsigned nout = 0, nfree = 0;
	if (s->r.magic != RF_LG_SINK_MAGIC)
		start_point(s, 0);
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *d = rf_pktbuf_data(b[i]);
		unsigned len = b[i]->data_len;
		struct rf_lg_hdr h;
		s->total_msgs++;
		if (len < RF_LG_HDR_SIZE || b[i]->flags) {
			if (!b[i]->flags) /* connection events are not messages */
				s->r.corrupt++;
			b[nfree++] = b[i];
			continue;
		}
		memcpy(&h, d, sizeof(h));
		if (h.magic != RF_LG_MAGIC || h.phase > RF_LG_PHASE_REPORT_REQ) {
			s->r.corrupt++;
			b[nfree++] = b[i];
			continue;
		}
		if (h.point != s->r.point)
			start_point(s, h.point);
		if (h.phase == RF_LG_PHASE_REPORT_REQ) {
			/* The request's buffer carries the peer (UDP) or flow (TCP): reuse it. */
			memcpy(rf_pktbuf_data(b[i]), &s->r, sizeof(s->r));
			b[i]->data_len = sizeof(s->r);
			s->reports++;
			out[nout++] = b[i];
			continue;
		}
		if (h.phase == RF_LG_PHASE_WARMUP) {
			s->r.warmup_msgs++;
		} else if (s->check && !rf_lg_msg_read(d, len, len, &h)) {
			s->r.corrupt++;
		} else {
			s->r.msgs++;
			s->r.bytes += len;
			s->r.csum += rf_lg_csum(d, len);
		}
		b[nfree++] = b[i];
	}
	if (nfree)
		rf_pktbuf_free_bulk(b, nfree);
	return nout;
}

unsigned rf_lg_sink_poll(struct rf_poller *p, void *arg)
{
	struct rf_lg_sink_queue *q = arg;
	struct rf_pktbuf *pkts[RF_IO_MAX_BURST], *rep[RF_IO_MAX_BURST];
	unsigned n = rf_io_rx_burst(q->dev, q->queue, pkts, q->burst);
	if (n == 0)
		return 0;
	struct rf_core_counters *c = rf_poller_counters(p);
	rf_counter_add(&c->rx, n);
	unsigned k = rf_lg_sink_take(&q->sink, pkts, n, rep);
	if (k) {
		unsigned sent = rf_io_tx_burst(q->dev, q->queue, rep, k);
		if (sent < k)
			sent += rf_io_tx_burst(q->dev, q->queue, rep + sent, k - sent);
		rf_counter_add(&c->tx, sent);
		if (sent < k) {
			rf_pktbuf_free_bulk(rep + sent, k - sent);
			rf_counter_add(&c->drop_driver, k - sent);
		}
	}
	return n;
}
