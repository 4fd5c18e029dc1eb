/*
 * apps/ofswitch/sw_dp.c: the datapath, one poll function per core.
 *
 * Core c receives on queue c of every port (one poll function per port, so an adaptive
 * poller wakes on any port's fd) and sends on queue c of every port, so no queue is shared
 * between threads. Per frame: parse the flow key once (sw_key.c), look it up in the table
 * (sw_emc.c: this core's EMC and megaflow cache, then sw_table.c: tuple-space search), count
 * it on the flow's line for this core, and apply the flow's actions: each output appends the
 * frame to this core's batch for that port, rewrites change the frame in place (a copy for
 * every output but the last, so a queued frame never changes); batches go out with one
 * rf_io_tx_burst per port at the end of the round. OUTPUT:CONTROLLER hands the frame to the
 * agent over an MPSC ring (PACKET_IN); no flow means drop (OpenFlow 1.3).
 */
#include <string.h>
#include <unistd.h>

#include <ringflow/pktbuf.h>

#include "sw.h"
#include "sw_meter.h"
#include "sw_group.h"
#include "sw_offload.h"

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

/* The frame for a PACKET_IN onto to_ctl (sw.h: what travels with it). Only a frame with
 * pipeline fields set (sw_pipe.c) writes them in front of itself; one without room there
 * (a driver that hands out frames at the start of their buffer) goes as a copy from the
 * pool, which has the headroom. */
static void to_controller(struct sw_core *c, struct rf_pktbuf *b, uint32_t in_no,
			  uint16_t max_len, bool no_match, uint64_t cookie, uint8_t table_id)
{
	uint64_t has = 0;
	if (c->pin_md | c->pin_tun) {
		struct sw_pin_fields pf = {.metadata = c->pin_md, .tunnel_id = c->pin_tun};
		if (b->data_off < sizeof(pf)) {
			struct rf_pktbuf *n = sw_dp_frame_copy(c->dp, b);
			rf_pktbuf_free(b);
			b = n;
			if (!b || b->data_off < sizeof(pf)) {
				rf_pktbuf_free(b);
				rf_counter_add(&c->drop_ctl, 1);
				return;
			}
		}
		memcpy(b->buf_addr, &pf, sizeof(pf));
		has = SW_PIN_HAS_FIELDS;
	}
	b->flow = (uint64_t)table_id << 56 | has | (uint64_t)no_match << 48 |
		  (uint64_t)max_len << 32 | in_no;
	b->timestamp_ns = cookie;
	if (rf_ring_enqueue_burst(c->dp->to_ctl, (void **)&b, 1, NULL) != 1) {
		rf_pktbuf_free(b);
		rf_counter_add(&c->drop_ctl, 1);
		return;
	}
	rf_counter_add(&c->to_ctl, 1);
	sw_dp_wake_agent(c->dp);
}

void sw_dp_wake_agent(struct sw_dp *dp)
{
	/* seq_cst fence: our enqueue comes before the load of agent_asleep; pairs with the fence
	 * in the agent's agent_sleep (sw_agent.c), so either it sees the frame in to_ctl before
	 * it blocks or we see it asleep. relaxed (load, exchange): the fences order them; the
	 * exchange lets one poller of several write the eventfd. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&dp->agent_asleep, memory_order_relaxed) &&
	    atomic_exchange_explicit(&dp->agent_asleep, false, memory_order_relaxed)) {
		uint64_t one = 1;
		if (write(dp->agent_efd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is full, so the agent is woken anyway */
		}
	}
}

void sw_pin_fields_of(const struct rf_pktbuf *b, struct sw_pin_fields *pf)
{
	if (b->flow & SW_PIN_HAS_FIELDS)
		memcpy(pf, b->buf_addr, sizeof(*pf)); /* to_controller put them there */
	else
		memset(pf, 0, sizeof(*pf));
}

struct rf_pktbuf *sw_dp_frame_copy(struct sw_dp *dp, const struct rf_pktbuf *b)
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

/* The ports one OUTPUT reaches: indices, or -1 for the controller. */
static unsigned targets(const struct sw_dp *dp, uint32_t p, int in, int *tgt)
{
	unsigned nt = 0;
	if (p == OFPP_FLOOD || p == OFPP_ALL) {
		for (unsigned i = 0; i < dp->nports; i++)
			if ((int)i != in)
				tgt[nt++] = (int)i;
	} else if (p == OFPP_IN_PORT) {
		if (in >= 0)
			tgt[nt++] = in;
	} else if (p == OFPP_CONTROLLER) {
		tgt[nt++] = -1;
	} else if (p >= 1 && p <= dp->nports && (int)(p - 1) != in) {
		tgt[nt++] = (int)(p - 1); /* OpenFlow: output to the in port needs IN_PORT */
	}
	return nt;
}

/* One OUTPUT of the frame as it is now. consume: b itself goes to the last target (or is
 * freed when there is none); otherwise every target gets a copy and b stays ours. */
static void output(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_op *o,
		   const struct sw_flow *f, bool consume)
{
	int tgt[SW_MAX_PORTS];
	unsigned nt = targets(c->dp, o->arg, in, tgt);
	if (consume && nt == 0)
		rf_pktbuf_free(b);
	for (unsigned i = 0; i < nt; i++) {
		struct rf_pktbuf *x = consume && i + 1 == nt ? b : sw_dp_frame_copy(c->dp, b);
		if (!x) {
			rf_counter_add(&c->drop_tx, 1);
			continue;
		}
		if (tgt[i] >= 0) {
			push(c, (unsigned)tgt[i], x);
		} else {
			uint32_t in_no = in >= 0 ? (uint32_t)in + 1 : OFPP_CONTROLLER;
			bool miss = f && f->priority == 0 && f->fields == 0 && !f->has_md;
			to_controller(c, x, in_no, o->max_len, miss, f ? f->cookie : 0,
				      f ? f->table_id : 0);
		}
	}
}

/* One rewrite on b. Returns 0 (done, or skipped on a frame without that header: counted in
 * act_skip, as OVS leaves such a frame alone), or -1: drop the frame (TTL expired, no room
 * for a tag). */
static int rewrite(struct sw_core *c, struct rf_pktbuf *b, const struct sw_op *o)
{
	uint8_t *d = rf_pktbuf_data(b);
	uint32_t len = b->data_len;
	int rc;
	switch (o->code) {
	case SW_OP_SET_ETH_DST:
	case SW_OP_SET_ETH_SRC:
		rc = sw_act_set_eth(d, len, o->code == SW_OP_SET_ETH_DST, o->mac);
		break;
	case SW_OP_SET_VLAN_VID:
	case SW_OP_SET_VLAN_PCP:
		rc = sw_act_set_vlan(d, len, o->code == SW_OP_SET_VLAN_PCP, (uint16_t)o->arg);
		break;
	case SW_OP_SET_IP_DSCP:
		rc = sw_act_set_dscp(d, len, (uint8_t)o->arg);
		break;
	case SW_OP_SET_IPV4_SRC:
	case SW_OP_SET_IPV4_DST:
		rc = sw_act_set_ipv4(d, len, o->code == SW_OP_SET_IPV4_DST, o->arg);
		break;
	case SW_OP_SET_TCP_SRC:
	case SW_OP_SET_TCP_DST:
		rc = sw_act_set_l4_port(d, len, 6, o->code == SW_OP_SET_TCP_DST, (uint16_t)o->arg);
		break;
	case SW_OP_SET_UDP_SRC:
	case SW_OP_SET_UDP_DST:
		rc = sw_act_set_l4_port(d, len, 17, o->code == SW_OP_SET_UDP_DST, (uint16_t)o->arg);
		break;
	case SW_OP_SET_NW_TTL:
		rc = sw_act_set_nw_ttl(d, len, (uint8_t)o->arg);
		break;
	case SW_OP_SET_IP_ECN:
		rc = sw_act_set_ecn(d, len, (uint8_t)o->arg);
		break;
	case SW_OP_SET_SCTP_SRC:
	case SW_OP_SET_SCTP_DST:
		rc = sw_act_set_l4_port(d, len, 132, o->code == SW_OP_SET_SCTP_DST, (uint16_t)o->arg);
		break;
	case SW_OP_SET_ICMPV4_TYPE:
	case SW_OP_SET_ICMPV4_CODE:
	case SW_OP_SET_ICMPV6_TYPE:
	case SW_OP_SET_ICMPV6_CODE:
		rc = sw_act_set_icmp(d, len,
				     o->code == SW_OP_SET_ICMPV6_TYPE || o->code == SW_OP_SET_ICMPV6_CODE,
				     o->code == SW_OP_SET_ICMPV4_CODE || o->code == SW_OP_SET_ICMPV6_CODE,
				     (uint8_t)o->arg);
		break;
	case SW_OP_SET_ARP_OP:
	case SW_OP_SET_ARP_SPA:
	case SW_OP_SET_ARP_TPA:
	case SW_OP_SET_ARP_SHA:
	case SW_OP_SET_ARP_THA:
		rc = sw_act_set_arp(d, len, (uint8_t)(SW_ARP_OP + (o->code - SW_OP_SET_ARP_OP)), o->arg,
				    o->mac);
		break;
	case SW_OP_SET_IPV6_FLABEL:
		rc = sw_act_set_flabel(d, len, o->arg);
		break;
	case SW_OP_SET_MPLS_LABEL:
	case SW_OP_SET_MPLS_TC:
	case SW_OP_SET_MPLS_BOS:
	case SW_OP_SET_MPLS_TTL:
		rc = sw_act_set_mpls(d, len,
				     o->code == SW_OP_SET_MPLS_LABEL ? SW_MPLS_LABEL
				     : o->code == SW_OP_SET_MPLS_TC  ? SW_MPLS_TC
				     : o->code == SW_OP_SET_MPLS_BOS ? SW_MPLS_BOS
								     : SW_MPLS_TTL,
				     o->arg);
		break;
	case SW_OP_COPY_TTL_OUT:
	case SW_OP_COPY_TTL_IN:
		rc = sw_act_copy_ttl(d, len, o->code == SW_OP_COPY_TTL_IN);
		break;
	case SW_OP_POP_MPLS:
		rc = sw_act_pop_mpls(d, &b->data_len, (uint16_t)o->arg);
		break;
	case SW_OP_POP_PBB:
		rc = sw_act_pop_pbb(d, &b->data_len);
		break;
	case SW_OP_SET_ND_SLL:
	case SW_OP_SET_ND_TLL:
		rc = sw_act_set_nd_ll(d, len, o->code == SW_OP_SET_ND_SLL, o->mac);
		break;
	case SW_OP_SET_IPV6_SRC:
	case SW_OP_SET_IPV6_DST:
	case SW_OP_SET_ND_TARGET: {
		uint8_t a[16]; /* this op and the SW_OP_CONT after it */
		memcpy(a, o->mac, 6);
		for (unsigned i = 0; i < 4; i++)
			a[6 + i] = (uint8_t)(o->arg >> (24 - 8 * i));
		memcpy(a + 10, o[1].mac, 6);
		rc = o->code == SW_OP_SET_ND_TARGET
			     ? sw_act_set_nd_target(d, len, a)
			     : sw_act_set_ipv6(d, len, o->code == SW_OP_SET_IPV6_DST, a);
		break;
	}
	case SW_OP_SET_PBB_ISID:
		rc = sw_act_set_pbb_isid(d, len, o->arg);
		break;
	case SW_OP_SET_TUNNEL_ID: /* metadata for a tunnel port; none here (as OVS): the frame
				     stays as it is, later tables and PACKET_INs see the value.
				     Only in sw_pipe_run (SW_INST_TUN), a PACKET_OUT or a group
				     bucket, which all forget it afterwards (struct sw_core). */
		c->pin_tun = (uint64_t)o[1].arg << 32 | o->arg;
		return 0;
	case SW_OP_SET_QUEUE: /* one queue per port */
	case SW_OP_CONT:
		return 0;
	case SW_OP_DEC_MPLS_TTL:
		if (sw_act_dec_mpls_ttl(d, len) == 0)
			return 0;
		rf_counter_add(&c->drop_act, 1); /* TTL 0 or 1, or not MPLS: not forwarded */
		return -1;
	case SW_OP_PUSH_MPLS:
	case SW_OP_PUSH_PBB:
		if ((o->code == SW_OP_PUSH_MPLS ? sw_act_push_mpls : sw_act_push_pbb)(
			    d, &b->data_len, len + rf_pktbuf_tailroom(b), (uint16_t)o->arg) == 0)
			return 0;
		rf_counter_add(&c->drop_act, 1); /* no room */
		return -1;
	case SW_OP_POP_VLAN:
		rc = sw_act_pop_vlan(d, &b->data_len);
		break;
	case SW_OP_DEC_NW_TTL:
		if (sw_act_dec_nw_ttl(d, len) == 0)
			return 0;
		rf_counter_add(&c->drop_act, 1); /* TTL 0 or 1, or no IP header: not forwarded */
		return -1;
	case SW_OP_PUSH_VLAN:
		if (sw_act_push_vlan(d, &b->data_len, len + rf_pktbuf_tailroom(b),
				     (uint16_t)o->arg) == 0)
			return 0;
		rf_counter_add(&c->drop_act, 1);
		return -1;
	default:
		rc = -1;
		break;
	}
	if (rc)
		rf_counter_add(&c->act_skip, 1);
	return 0;
}

/* Runs program acts on b, which came in on port index in (-1: from the controller), in
 * order: an OUTPUT sends the frame as modified so far. Every OUTPUT but the last sends
 * copies (later rewrites must not reach a frame already queued); the last one takes b, and
 * nothing after it runs. One OUTPUT to one port: no copy. Consumes b. */
void sw_dp_apply(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_actions *acts,
		 const struct sw_flow *f)
{
	unsigned last = acts->last_out;
	if (last >= acts->n) {
		rf_pktbuf_free(b); /* no output: dropped (OpenFlow 1.3) */
		return;
	}
	for (unsigned i = 0; i <= last; i++) {
		const struct sw_op *o = &acts->op[i];
		if (o->code == SW_OP_OUTPUT) {
			output(c, b, in, o, f, i == last);
		} else if (o->code == SW_OP_GROUP) {
			sw_group_run(c, b, in, o, f, i == last); /* sw_group_dp.c */
		} else if (rewrite(c, b, o) != 0) {
			rf_pktbuf_free(b);
			return;
		}
	}
}

struct rf_pktbuf *sw_dp_apply_keep(struct sw_core *c, struct rf_pktbuf *b, int in,
				   const struct sw_actions *acts, const struct sw_flow *f)
{
	for (unsigned i = 0; i < acts->n; i++) {
		const struct sw_op *o = &acts->op[i];
		if (o->code == SW_OP_OUTPUT) {
			output(c, b, in, o, f, false);
		} else if (o->code == SW_OP_GROUP) {
			sw_group_run(c, b, in, o, f, false); /* its copies; b stays */
		} else if (rewrite(c, b, o) != 0) {
			rf_pktbuf_free(b);
			return NULL;
		}
	}
	return b;
}

/* Standalone fail mode, no controller: learn the source, send to the learned port of the
 * destination or flood. */
static void learning(struct sw_core *c, struct rf_pktbuf *b, unsigned in, const struct sw_key *k)
{
	struct sw_dp *dp = c->dp;
	void *want = (void *)(uintptr_t)(in + 1);
	if (!(k->eth_src[0] & 1) && rf_hash_lookup(dp->macs, k->eth_src) != want)
		(void)rf_hash_upsert(dp->macs, k->eth_src, want, NULL); /* -ENOSPC: not learned */
	struct sw_actions one = {.n = 1, .last_out = 0};
	one.op[0].code = SW_OP_OUTPUT;
	one.op[0].arg = OFPP_FLOOD;
	if (!(k->eth_dst[0] & 1)) {
		void *v = rf_hash_lookup(dp->macs, k->eth_dst);
		if (v)
			one.op[0].arg = (uint32_t)(uintptr_t)v; /* the OpenFlow port number */
	}
	sw_dp_apply(c, b, (int)in, &one, NULL);
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
	uint64_t now = 0; /* the meters' clock, read once per burst when a meter runs */
	unsigned hits = 0; /* frames a table-0 flow matched (TABLE stats) */
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		struct sw_key k;
		if (sw_key_parse(rf_pktbuf_data(b), b->data_len, pi + 1, &k) != 0) {
			rf_pktbuf_free(b);
			rf_counter_add(&c->drop_short, 1);
			continue;
		}
		struct sw_flow *f = t ? sw_table_lookup_frame(t, c->idx, rf_pktbuf_data(b),
							      b->data_len, &k)
				      : NULL;
		if (!f && dp->macs && atomic_load_explicit(&dp->standalone, memory_order_relaxed)) {
			learning(c, b, pi, &k);
			continue;
		}
		if (!f) {
			rf_pktbuf_free(b);
			rf_counter_add(&c->drop_nomatch, 1);
			continue;
		}
		hits++;
		rf_counter_add(&f->ctr[c->idx].pkts, 1);
		rf_counter_add(&f->ctr[c->idx].bytes, b->data_len);
		/* Pairs with the agent's release store of a MODIFY: a complete list. */
		const struct sw_actions *acts =
			atomic_load_explicit(&f->actions, memory_order_acquire);
		if (acts->meter) { /* the meter instruction runs before the actions (issue 25) */
			now = now ? now : sw_meter_now();
			if (sw_meter_apply(acts->meter, rf_pktbuf_data(b), b->data_len, now) != 0) {
				rf_pktbuf_free(b); /* counted in the meter's band */
				continue;
			}
		}
		if (dp->offload) /* 1 in SW_OFFLOAD_REQ_INV: the agent may offload k */
			sw_offload_request(dp->offload, c->idx, &k, acts);
		if (sw_actions_pipeline(acts)) /* goto, metadata, the action set: sw_pipe.c */
			sw_pipe_run(c, t, b, (int)pi, &k, f, acts);
		else
			sw_dp_apply(c, b, (int)pi, acts, f);
	}
	if (n == 0)
		return 0;
	rf_counter_add(&c->rx, n);
	/* release: pairs with sw_tables_stats' acquire load of tmatch[0]: a reader that sees
	 * these hits sees the rx that counts their frames, so matched never exceeds looked up.
	 * Counted directly, not as rx - drops: that difference moved down and up again when a
	 * read fell between a burst's no-match drops and its rx (os-ken's table-miss check saw
	 * "an increment in matched_count" from a frame that matched nothing). */
	atomic_store_explicit(&c->tmatch[0],
			      atomic_load_explicit(&c->tmatch[0], memory_order_relaxed) + hits,
			      memory_order_release);
	for (unsigned o = 0; o < dp->nports; o++)
		flush(c, o);
	return n;
}

struct sw_actions *sw_dp_po_slot(struct sw_dp *dp)
{
	/* Pairs with poller 0's release increment in sw_dp_poll_ctl(): it no longer reads the
	 * slot we hand out. */
	uint64_t done = atomic_load_explicit(&dp->po_done, memory_order_acquire);
	if (dp->po_sent - done >= SW_PO_SLOTS)
		return NULL;
	return &dp->po_prog[dp->po_sent % SW_PO_SLOTS];
}

unsigned sw_dp_poll_ctl(struct rf_poller *p, void *arg)
{
	struct sw_core *c = arg;
	struct sw_dp *dp = c->dp;
	void *bufs[SW_BURST];
	(void)p;
	unsigned n = rf_ring_dequeue_burst(dp->from_ctl, bufs, SW_BURST, NULL);
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = bufs[i];
		uint32_t in_no = (uint32_t)b->flow;
		/* The agent's PACKET_OUT program, in a slot it does not reuse before po_done
		 * says we are through with it (the ring's dequeue made its contents visible). */
		const struct sw_actions *prog = (const struct sw_actions *)(uintptr_t)b->timestamp_ns;
		int in = in_no >= 1 && in_no <= dp->nports ? (int)in_no - 1 : -1;
		sw_dp_apply(c, b, in, prog, NULL);
		c->pin_tun = 0; /* its set_field tunnel_id, if any, was this frame's only */
		/* Pairs with the agent's acquire load in sw_dp_po_slot(): our reads of the slot
		 * are done before it may write the slot again. */
		atomic_fetch_add_explicit(&dp->po_done, 1, memory_order_release);
	}
	for (unsigned pi = 0; n && pi < dp->nports; pi++)
		flush(c, pi);
	return n;
}
