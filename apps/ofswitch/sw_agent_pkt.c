/*
 * apps/ofswitch/sw_agent_pkt.c: frames between the pollers and the controller: PACKET_IN
 * (the pollers' frames on dp->to_ctl, to every connection that wants them) and PACKET_OUT
 * (checked against the frame, then handed to poller 0 on dp->from_ctl with its program).
 * A PACKET_IN's match carries the frame's pipeline fields: in_port, and the metadata and
 * tunnel_id when the pipeline set them (what travels with the frame: sw.h, sw_pin_fields).
 *
 * Every connection has its PACKET_IN rate limit (sw_pinrate.h, --packet-in-rate, off by
 * default as in OVS) and a PACKET_IN is never waited for: one the bucket refuses, or that
 * does not fit the connection's socket now (a controller that stops reading, or replies
 * already queued for it, sw_out.h), is dropped and counted per connection
 * (sw_agent_obs.c). The frames come off the bounded to_ctl ring either way, so a flood of table-miss frames costs no memory: pollers drop (and
 * count) what the full ring cannot take.
 */
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include "sw_agent_pvt.h"

/* ---- PACKET_OUT ---- */

void packet_out(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw, size_t len)
{
	const struct of_packet_out *po = &m->u.packet_out;
	struct sw_dp *dp = a->dp;
	if (po->buffer_id != OFP_NO_BUFFER)
		return send_error(a, c, m->xid, OFPET_BAD_REQUEST, OFPBRC_BUFFER_UNKNOWN, raw, len);
	/* The actions are checked against the frame itself (as OVS does). */
	struct sw_key k;
	struct sw_act_ctx ctx;
	struct sw_actions prog;
	uint16_t etype, ecode;
	uint32_t in_no = po->in_port >= 1 && po->in_port <= dp->nports ? po->in_port : 0;
	if (sw_key_parse(po->data, po->data_len, in_no, &k) != 0)
		memset(&k, 0, sizeof(k)); /* not a whole frame: no header can be relied on */
	sw_act_ctx_of_key(&k, dp->nports, &ctx);
	ctx.groups = dp->groups;
	if (sw_actions_decode(&po->actions, &ctx, &prog, &etype, &ecode))
		return send_error(a, c, m->xid, etype, ecode, raw, len);
	struct sw_actions *slot = sw_dp_po_slot(dp);
	if (!slot || prog.last_out >= prog.n)
		return; /* poller 0 is behind (dropped like a full queue), or nothing to send */
	struct rf_pktbuf *b = rf_pktbuf_alloc(dp->pool);
	if (!b || rf_pktbuf_tailroom(b) < po->data_len || po->data_len < 14) {
		rf_pktbuf_free(b);
		return; /* no buffer now, or not a frame: dropped like a full queue */
	}
	memcpy(rf_pktbuf_data(b), po->data, po->data_len);
	b->data_len = po->data_len;
	b->flow = po->in_port;
	*slot = prog;
	b->timestamp_ns = (uint64_t)(uintptr_t)slot;
	void *p = b;
	if (rf_ring_enqueue_burst(dp->from_ctl, &p, 1, NULL) != 1) {
		rf_pktbuf_free(b);
		return;
	}
	dp->po_sent++;
	rf_runtime_wake(dp->rt, 0);
}

/* ---- frames for the controller ---- */

/* PACKET_IN to every connection whose role and async config take its reason (master and
 * equal ones by default; a slave only after SET_ASYNC asks). The frame is cut to the
 * output action's max_len. At most DRAIN_MAX frames a call: pollers that fill the ring as
 * fast as it drains cannot keep the agent from its connections and timers. */
#define DRAIN_MAX 1024
void drain_to_ctl(struct sw_agent *a)
{
	void *bufs[SW_BURST];
	unsigned n, budget = DRAIN_MAX;
	while (budget && (n = rf_ring_dequeue_burst(a->dp->to_ctl, bufs,
						     budget < SW_BURST ? budget : SW_BURST, NULL)) > 0) {
		budget -= n;
		uint64_t now = now_ns(); /* the rate limit's clock: once a burst */
		for (unsigned i = 0; i < n; i++) {
			struct rf_pktbuf *b = bufs[i];
			uint16_t max_len = (uint16_t)(b->flow >> 32);
			uint32_t dl = b->data_len;
			if (max_len != OFPCML_NO_BUFFER && dl > max_len)
				dl = max_len;
			struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PACKET_IN, .xid = 0};
			struct of_packet_in *pi = &m.u.packet_in;
			pi->buffer_id = OFP_NO_BUFFER;
			pi->total_len = (uint16_t)b->data_len;
			pi->reason = (b->flow >> 48) & 1 ? OFPR_NO_MATCH : OFPR_ACTION;
			pi->table_id = (uint8_t)(b->flow >> 56); /* the flow's table (sw_dp.c) */
			pi->cookie = b->timestamp_ns;
			/* The pipeline fields (1.3.5 section 7.4.1): in_port always; metadata and
			 * tunnel_id when set (non-zero, as OVS); never in_phy_port, which equals
			 * in_port on this switch (sw.h, struct sw_pin_fields). */
			struct sw_pin_fields pf;
			sw_pin_fields_of(b, &pf);
			pi->match.fields = OF_MATCH_IN_PORT;
			pi->match.in_port = (uint32_t)b->flow;
			if (pf.metadata) {
				pi->match.has_metadata = true;
				pi->match.metadata = pf.metadata;
				pi->match.metadata_mask = ~0ull;
			}
			if (pf.tunnel_id) {
				pi->match.fields |= OF_MATCH_TUNNEL_ID;
				pi->match.tunnel_id = pf.tunnel_id;
				pi->match.tunnel_id_mask = ~0ull;
			}
			pi->data = rf_pktbuf_data(b);
			pi->data_len = (uint16_t)dl;
			ssize_t len = -1;
			for (unsigned k = 0; k < SW_MAX_CONNS; k++) {
				struct sw_conn *c = &a->conns[k];
				if (!wants(a, c, SW_ASYNC_PACKET_IN, pi->reason))
					continue;
				if (!sw_pinrate_take(&c->pin, now)) { /* relaxed: see sw_conn */
					atomic_fetch_add_explicit(&c->pin_drop_rate, 1, memory_order_relaxed);
					continue;
				}
				if (len < 0)
					len = of_serialize(&m, a->wbuf, WBUF);
				if (len > 0 && !conn_has_room(c, (size_t)len)) {
					atomic_fetch_add_explicit(&c->pin_drop_busy, 1, memory_order_relaxed);
					continue;
				}
				send_bytes(a, c, a->wbuf, len);
				if (c->fd >= 0)
					atomic_fetch_add_explicit(&c->pin_sent, 1, memory_order_relaxed);
			}
			rf_pktbuf_free(b);
		}
	}
}

bool conn_has_room(const struct sw_conn *c, size_t n)
{
	int queued = 0, sndbuf = 0;
	socklen_t sl = sizeof(sndbuf);
	if (sw_out_pending(&c->out))
		return false; /* the socket is full already: replies wait in c->out */
	if (ioctl(c->fd, SIOCOUTQ, &queued) != 0 ||
	    getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) != 0)
		return true; /* cannot tell: what the socket does not take waits in c->out */
	/* The kernel doubles SO_SNDBUF for its bookkeeping: half of it is payload room. */
	return (size_t)queued + n <= (size_t)sndbuf / 2;
}
