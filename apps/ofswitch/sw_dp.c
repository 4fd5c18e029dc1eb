/*
 * apps/ofswitch/sw_dp.c: the datapath, one poll function per core.
 *
 * Core c receives on queue c of every port (one poll function per port, so an adaptive
 * poller wakes on any port's fd) and sends on queue c of every port, so no queue is shared
 * between threads. Per frame: parse the flow key once (sw_key.c), look it up in
 * the table (sw_emc.c: this core's EMC, then sw_table.c: tuple-space search), count it on the
 * flow's line for this core, and apply the flow's actions: each output appends the frame to
 * this core's batch for that port (a copy for every output but the last); batches go out
 * with one rf_io_tx_burst per port at the end of the round. OUTPUT:CONTROLLER hands the
 * frame to the agent over an MPSC ring (PACKET_IN); no flow means drop (OpenFlow 1.3).
 */
#include <string.h>

#include <ringflow/pktbuf.h>

#include "sw.h"

static void flush(struct sw_core *c, unsigned pi)
{
	unsigned n = c->ntx[pi];
	if (!n)
		return;
	struct rf_io_dev *dev = c->dp->ports[pi].dev;
	unsigned sent = rf_io_tx_burst(dev, c->idx, c->tx[pi], n);
	if (sent < n) /* one retry: a ring that was full a moment ago often has room */
		sent += rf_io_tx_burst(dev, c->idx, c->tx[pi] + sent, n - sent);
	if (sent < n) {
		rf_pktbuf_free_bulk(c->tx[pi] + sent, n - sent);
		rf_counter_add(&c->drop_tx, n - sent);
	}
	rf_counter_add(&c->tx_pkts, sent);
	c->ntx[pi] = 0;
}

static void push(struct sw_core *c, unsigned pi, struct rf_pktbuf *b)
{
	if (c->ntx[pi] == SW_BURST)
		flush(c, pi);
	c->tx[pi][c->ntx[pi]++] = b;
}

static void to_controller(struct sw_core *c, struct rf_pktbuf *b, uint32_t in_no,
			  uint16_t max_len, bool no_match, uint64_t cookie)
{
	b->flow = (uint64_t)no_match << 48 | (uint64_t)max_len << 32 | in_no;
	b->timestamp_ns = cookie;
	if (rf_ring_enqueue_burst(c->dp->to_ctl, (void **)&b, 1, NULL) != 1) {
		rf_pktbuf_free(b);
		rf_counter_add(&c->drop_ctl, 1);
		return;
	}
	rf_counter_add(&c->to_ctl, 1);
}

static struct rf_pktbuf *frame_copy(struct sw_dp *dp, const struct rf_pktbuf *b)
{
	struct rf_pktbuf *n = rf_pktbuf_alloc(dp->pool);
	if (!n)
		return NULL;
	if (rf_pktbuf_tailroom(n) < b->data_len) {
		rf_pktbuf_free(n);
		return NULL;
	}
	memcpy(rf_pktbuf_data(n), rf_pktbuf_data(b), b->data_len);
	n->data_len = b->data_len;
	return n;
}

/* Apply acts to b, which came in on port index in (-1: from the controller). Consumes b. */
static void apply(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_actions *acts,
		  const struct sw_flow *f)
{
	struct sw_dp *dp = c->dp;
	/* targets: port indices, or -1 - k for "controller with max_len of action k" */
	int tgt[SW_MAX_PORTS * OF_MAX_ACTIONS + OF_MAX_ACTIONS];
	unsigned nt = 0;
	for (unsigned a = 0; a < acts->n; a++) {
		uint32_t p = acts->out[a].port;
		if (p == OFPP_FLOOD || p == OFPP_ALL) {
			for (unsigned i = 0; i < dp->nports; i++)
				if ((int)i != in)
					tgt[nt++] = (int)i;
		} else if (p == OFPP_IN_PORT) {
			if (in >= 0)
				tgt[nt++] = in;
		} else if (p == OFPP_CONTROLLER) {
			tgt[nt++] = -1 - (int)a;
		} else if (p >= 1 && p <= dp->nports && (int)(p - 1) != in) {
			tgt[nt++] = (int)(p - 1); /* OpenFlow: output to the in port needs IN_PORT */
		}
	}
	if (nt == 0) {
		rf_pktbuf_free(b);
		return;
	}
	uint32_t in_no = in >= 0 ? (uint32_t)in + 1 : OFPP_CONTROLLER;
	for (unsigned i = 0; i < nt; i++) {
		struct rf_pktbuf *x = i + 1 == nt ? b : frame_copy(dp, b);
		if (!x) {
			rf_counter_add(&c->drop_tx, 1);
			continue;
		}
		if (tgt[i] >= 0) {
			push(c, (unsigned)tgt[i], x);
		} else {
			unsigned k = (unsigned)(-1 - tgt[i]);
			bool miss = f && f->priority == 0 && f->fields == 0;
			to_controller(c, x, in_no, acts->out[k].max_len, miss, f ? f->cookie : 0);
		}
	}
}

/* Standalone fail mode, no controller: learn the source, send to the learned port of the
 * destination or flood. */
static void learning(struct sw_core *c, struct rf_pktbuf *b, unsigned in, const struct sw_key *k)
{
	struct sw_dp *dp = c->dp;
	void *want = (void *)(uintptr_t)(in + 1);
	if (!(k->eth_src[0] & 1) && rf_hash_lookup(dp->macs, k->eth_src) != want)
		(void)rf_hash_upsert(dp->macs, k->eth_src, want, NULL); /* -ENOSPC: not learned */
	struct sw_actions one = {.n = 1};
	one.out[0].port = OFPP_FLOOD;
	if (!(k->eth_dst[0] & 1)) {
		void *v = rf_hash_lookup(dp->macs, k->eth_dst);
		if (v)
			one.out[0].port = (uint32_t)(uintptr_t)v; /* the OpenFlow port number */
	}
	apply(c, b, (int)in, &one, NULL);
}

unsigned sw_dp_poll(struct rf_poller *p, void *arg)
{
	struct sw_unit *u = arg;
	struct sw_core *c = u->core;
	struct sw_dp *dp = c->dp;
	(void)p;
	/* Pairs with the release that published the table (set once at start, NULL at stop);
	 * its changes are published inside it (sw_table.c). */
	struct sw_table *t = atomic_load_explicit(&dp->table, memory_order_acquire);
	unsigned pi = u->port;
	struct rf_pktbuf *pkts[SW_BURST];
	unsigned n = rf_io_rx_burst(dp->ports[pi].dev, c->idx, pkts, SW_BURST);
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		struct sw_key k;
		if (sw_key_parse(rf_pktbuf_data(b), b->data_len, pi + 1, &k) != 0) {
			rf_pktbuf_free(b);
			rf_counter_add(&c->drop_short, 1);
			continue;
		}
		struct sw_flow *f = t ? sw_table_lookup(t, c->idx, &k) : NULL;
		if (!f && dp->macs && atomic_load_explicit(&dp->standalone, memory_order_relaxed)) {
			learning(c, b, pi, &k);
			continue;
		}
		if (!f) {
			rf_pktbuf_free(b);
			rf_counter_add(&c->drop_nomatch, 1);
			continue;
		}
		rf_counter_add(&f->ctr[c->idx].pkts, 1);
		rf_counter_add(&f->ctr[c->idx].bytes, b->data_len);
		/* Pairs with the agent's release store of a MODIFY: a complete list. */
		const struct sw_actions *acts =
			atomic_load_explicit(&f->actions, memory_order_acquire);
		apply(c, b, (int)pi, acts, f);
	}
	if (n == 0)
		return 0;
	rf_counter_add(&c->rx, n);
	for (unsigned o = 0; o < dp->nports; o++)
		flush(c, o);
	return n;
}

unsigned sw_dp_poll_ctl(struct rf_poller *p, void *arg)
{
	struct sw_core *c = arg;
	void *bufs[SW_BURST];
	(void)p;
	unsigned n = rf_ring_dequeue_burst(c->dp->from_ctl, bufs, SW_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = bufs[i];
		uint32_t in_no = (uint32_t)b->flow;
		struct sw_actions one = {.n = 1};
		one.out[0].port = (uint32_t)b->timestamp_ns;
		one.out[0].max_len = OFPCML_NO_BUFFER;
		int in = in_no >= 1 && in_no <= c->dp->nports ? (int)in_no - 1 : -1;
		apply(c, b, in, &one, NULL);
	}
	for (unsigned pi = 0; n && pi < c->dp->nports; pi++)
		flush(c, pi);
	return n;
}
