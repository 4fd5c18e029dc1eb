/*
 * apps/openflow/controller/ofc_learning.c: the learning switch, run by a handler poller.
 *
 * PACKET_IN: learn source MAC -> in_port for this switch (a write only when it changed or
 * its last-seen time is OFC_REFRESH_S old), within the switch's quota (ofc_quota.c);
 * if the destination is known, FLOW_MOD (in_port + eth_dst -> that port, idle 60 s, naming
 * the PACKET_IN's buffer) and, when the switch has no buffer (OVS: n_buffers = 0), a
 * PACKET_OUT carrying the frame; otherwise a PACKET_OUT flooding it. LLDP is not learned.
 * The reply is written into the buffer the PACKET_IN came in (the PACKET_IN is parsed from
 * a copy), which goes back to the I/O poller.
 */
#include <string.h>

#include "ofc.h"
#include "ofc_app.h"
#include "of.h"
#include "of_eth.h"

static void key_of(uint8_t key[14], uint64_t dpid, const uint8_t *mac)
{
	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(dpid >> (56 - 8 * i));
	memcpy(key + 8, mac, 6);
}

static void count(_Atomic uint64_t *c)
{
	/* single writer (this handler), read by the stats thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The reply bytes to the PACKET_IN in b, in reply[0..cap) (see ofc_app.h). */
size_t ofc_learning_reply(struct ofc_handler *h, const struct ofc_buf *b, uint8_t *reply,
			  size_t cap)
{
	size_t rlen = 0;
	struct of_msg m;
	struct of_fault f;
	struct of_eth e;
	if (of_parse(b->data, b->len, &m, &f) != 0 || m.type != OF_PACKET_IN)
		goto done;
	count(&h->packet_ins);
	const struct of_packet_in *pi = &m.u.packet_in;
	if (!(pi->match.fields & OF_MATCH_IN_PORT) || of_eth_parse(pi->data, pi->data_len, &e) ||
	    e.type == OF_ETH_TYPE_LLDP)
		goto done;
	uint32_t in_port = pi->match.in_port;
	uint8_t key[14];
	if (!(e.src[0] & 1)) { /* unicast source: learn it */
		key_of(key, b->dpid, e.src);
		if (h->learn) {
			ofc_learn_mac(h->learn, b->dpid, key, in_port, b->now_ms);
		} else { /* no quotas (unit tests): the same value */
			void *want = (void *)(uintptr_t)((b->now_ms / 1000) << 32 |
							 ((uint64_t)in_port + 1));
			if ((uint32_t)(uintptr_t)rf_hash_lookup(h->macs, key) != in_port + 1)
				rf_hash_upsert(h->macs, key, want, NULL);
		}
	}
	uint32_t out = OFPP_FLOOD;
	if (!(e.dst[0] & 1)) {
		key_of(key, b->dpid, e.dst);
		void *v = rf_hash_lookup(h->macs, key);
		if (v)
			out = (uint32_t)(uintptr_t)v - 1;
	}
	if (out == in_port)
		goto done; /* it came from where it is going: drop */
	bool unbuffered = pi->buffer_id == OFP_NO_BUFFER;
	if (out != OFPP_FLOOD) {
		struct of_msg fm = {.version = b->version, .type = OF_FLOW_MOD, .xid = m.xid};
		fm.u.flow_mod.command = OFPFC_ADD;
		fm.u.flow_mod.idle_timeout = 60;
		fm.u.flow_mod.priority = 100;
		fm.u.flow_mod.buffer_id = pi->buffer_id;
		fm.u.flow_mod.out_port = OFPP_ANY;
		fm.u.flow_mod.out_group = OFPG_ANY;
		fm.u.flow_mod.match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_DST;
		fm.u.flow_mod.match.in_port = in_port;
		memcpy(fm.u.flow_mod.match.eth_dst, e.dst, 6);
		fm.u.flow_mod.actions.n = 1;
		fm.u.flow_mod.actions.a[0].port = out;
		ssize_t n = of_serialize(&fm, reply, cap);
		if (n < 0)
			goto done;
		rlen = (size_t)n;
		count(&h->flow_mods);
		if (!unbuffered)
			goto done; /* the FLOW_MOD releases the buffered packet itself */
	} else {
		count(&h->floods);
	}
	ssize_t n = of_build_packet_out(reply + rlen, cap - rlen, b->version, m.xid,
					pi->buffer_id, in_port, out, pi->data, pi->data_len);
	if (n > 0) {
		rlen += (size_t)n;
		count(&h->packet_outs);
	}
done:
	return rlen;
}

/* The PACKET_IN in buffer b becomes its reply (data_len 0: nothing to send). */
static void handle(struct ofc_handler *h, struct rf_pktbuf *b, uint64_t now_ms)
{
	static _Thread_local uint8_t copy[OFC_JUMBO_ROOM]; /* the PACKET_IN, parsed from here */
	struct ofc_meta *meta = ofc_meta_of(b);
	if (meta->kind == OFC_META_SWITCH_GONE) { /* forget the switch (in bounded steps) */
		if (h->learn)
			ofc_learn_gone(h->learn, meta->dpid, now_ms);
		meta->t_ns = 0;
		b->data_len = 0;
		return;
	}
	if (meta->kind == OFC_META_SEED) { /* --cluster: what the switch's old master knew */
		const uint8_t *r = rf_pktbuf_data(b);
		for (uint32_t off = 0; off + OFC_SEED_REC <= b->data_len; off += OFC_SEED_REC) {
			uint8_t key[14];
			key_of(key, meta->dpid, r + off);
			if (h->learn)
				ofc_learn_mac(h->learn, meta->dpid, key, of_get32(r + off + 6), now_ms);
		}
		meta->t_ns = 0;
		b->data_len = 0;
		return;
	}
	uint32_t len = b->data_len < sizeof(copy) ? b->data_len : (uint32_t)sizeof(copy);
	memcpy(copy, rf_pktbuf_data(b), len);
	struct ofc_buf msg = {.dpid = meta->dpid, .now_ms = now_ms, .version = meta->version,
			      .len = (uint16_t)len, .data = copy};
	uint8_t *reply = rf_pktbuf_data(b);
	size_t cap = b->buf_len - b->data_off;
	if (h->apps) /* --app list: the apps' dispatch (ofc_app.h) */
		b->data_len = (uint32_t)ofc_apps_packet_in(h->apps, h, h->index, &msg, now_ms, reply, cap);
	else
		b->data_len = (uint32_t)ofc_learning_reply(h, &msg, reply, cap);
}

unsigned ofc_learning_poll(struct rf_poller *p, void *arg)
{
	struct ofc_handler *h = arg;
	void *bufs[32];
	unsigned n = rf_ring_dequeue_burst(h->in, bufs, 32, NULL);
	uint64_t now = ofc_now_ms();
	for (unsigned i = 0; i < n; i++)
		handle(h, bufs[i], now);
	unsigned aged = ofc_learn_step(h->learn, now); /* bounded: aging, departed switches */
	unsigned done = 0;
	/* Each out ring holds OFC_RING_SIZE > all the buffers of both pools, so it cannot be
	 * full: the loop only guards the invariant. */
	while (done < n) {
		done += rf_ring_enqueue_burst(h->out, bufs + done, n - done, NULL);
		if (done < n)
			rf_cpu_relax();
	}
	if (n)
		rf_runtime_wake(h->rt, 0); /* the I/O poller, if it sleeps (adaptive idle) */
	rf_counter_add(&rf_poller_counters(p)->rx, n);
	return n + aged + (ofc_learn_busy(h->learn, now) ? 1 : 0); /* busy: poll again soon */
}
