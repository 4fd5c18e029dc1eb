/*
 * apps/openflow/controller/ctl_topology.c: topology discovery by LLDP (see ctl_app.h).
 *
 * When a switch comes up, and every CTL_TIMER_MS after, one PACKET_OUT per port carries an
 * LLDP frame naming (dpid, port) (of_lldp_build: chassis "dpid:%016x", port id = port
 * number). A switch that receives it on a port sends it back as a PACKET_IN: that is the
 * link (src dpid, src port) -> (receiving dpid, in_port), one direction; the other direction
 * comes from the other switch's LLDP. Links live in net->links with their last-seen time;
 * PORT_STATUS (port deleted, link or admin down) and a closed switch remove them at once,
 * and a link not seen for CTL_LINK_AGE_MS (a cable pulled without a port event) ages out.
 */
#include <string.h>

#include "ctl_app.h"

#define AGE_BATCH 256 /* links removed per pass; the rest go on the next timer */

static void link_key(uint8_t key[24], uint64_t sd, uint32_t sp, uint64_t dd, uint32_t dp)
{
	ctl_put64(key, sd);
	ctl_put32(key + 8, sp);
	ctl_put64(key + 12, dd);
	ctl_put32(key + 20, dp);
}

/* Deletes the links for which match() holds, AGE_BATCH at a time. */
static void remove_where(struct ctl_net *net, bool (*match)(const uint8_t *key, uint64_t v,
							     const void *arg),
			 const void *arg)
{
	uint8_t keys[AGE_BATCH][24];
	unsigned n;
	do {
		n = 0;
		struct rf_hash_iter it;
		const void *key;
		void *v;
		rf_hash_iter_init(net->links, &it);
		while (n < AGE_BATCH && rf_hash_iter_next(net->links, &it, &key, &v))
			if (match(key, (uint64_t)(uintptr_t)v, arg))
				memcpy(keys[n++], key, 24);
		for (unsigned i = 0; i < n; i++)
			rf_hash_delete(net->links, keys[i], NULL);
	} while (n == AGE_BATCH);
}

struct end {
	uint64_t dpid;
	uint32_t port;
};

static bool at_end(const uint8_t *key, uint64_t v, const void *arg)
{
	(void)v;
	const struct end *e = arg;
	for (int side = 0; side < 2; side++) {
		const uint8_t *k = key + 12 * side;
		if (ctl_get64(k) == e->dpid && (e->port == OFPP_ANY || of_get32(k + 8) == e->port))
			return true;
	}
	return false;
}

void ctl_links_remove(struct ctl_net *net, uint64_t dpid, uint32_t port)
{
	struct end e = {dpid, port};
	remove_where(net, at_end, &e);
}

bool ctl_links_has_end(struct ctl_net *net, uint64_t dpid, uint32_t port)
{
	struct end e = {dpid, port};
	struct rf_hash_iter it;
	const void *key;
	void *v;
	rf_hash_iter_init(net->links, &it);
	while (rf_hash_iter_next(net->links, &it, &key, &v))
		if (at_end(key, 0, &e))
			return true;
	return false;
}

static bool too_old(const uint8_t *key, uint64_t v, const void *arg)
{
	(void)key;
	uint64_t now = *(const uint64_t *)arg;
	return now > v - 1 + CTL_LINK_AGE_MS;
}

static void count(_Atomic uint64_t *c)
{
	/* single writer (the I/O poller), read by the REST thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* One LLDP PACKET_OUT per port of sw, appended to out (as many as fit). */
static void send_lldp(struct ctl_net *net, const struct ctl_switch *sw, struct of_out *out)
{
	for (unsigned i = 0; i < sw->n_ports; i++) {
		if (sw->ports[i] >= OFPP_MAX)
			continue; /* LOCAL: no LLDP */
		uint8_t frame[128];
		ssize_t fl = of_lldp_build(frame, sizeof(frame), sw->hw[i], sw->dpid, sw->ports[i],
					   120);
		if (fl < 0)
			continue;
		ssize_t n = of_build_packet_out(out->p + out->len, out->cap - out->len, sw->version,
						0, OFP_NO_BUFFER, OFPP_CONTROLLER, sw->ports[i],
						frame, (size_t)fl);
		if (n < 0)
			return; /* out is full: the next period sends them */
		out->len += (size_t)n;
		count(&net->lldp_out);
	}
}

static void topo_switch_up(const struct ctl_app *a, const struct ctl_switch *sw, uint64_t now,
			   struct of_out *out)
{
	(void)now;
	send_lldp(a->arg, sw, out);
}

static void topo_timer(const struct ctl_app *a, const struct ctl_switch *sw, uint64_t now,
		       struct of_out *out)
{
	if (sw)
		send_lldp(a->arg, sw, out);
	else
		remove_where(a->arg, too_old, &now);
}

static void topo_port_status(const struct ctl_app *a, const struct ctl_switch *sw,
			     const struct of_port_status *ps, uint64_t now)
{
	(void)now;
	if (ps->reason == 1 /* OFPPR_DELETE */ || (ps->port.state & 1u) /* LINK_DOWN */ ||
	    (ps->port.config & 1u) /* PORT_DOWN */)
		ctl_links_remove(a->arg, sw->dpid, ps->port.port_no);
}

static void topo_switch_down(const struct ctl_app *a, uint64_t dpid)
{
	ctl_links_remove(a->arg, dpid, OFPP_ANY);
}

static void topo_packet_in(const struct ctl_app *a, struct ctl_pkt *pk)
{
	struct ctl_net *net = a->arg;
	const struct of_packet_in *pi = &pk->m->u.packet_in;
	uint64_t src;
	uint32_t sport;
	if (pk->eth->type != OF_ETH_TYPE_LLDP || !(pi->match.fields & OF_MATCH_IN_PORT) ||
	    of_lldp_parse(pi->data, pi->data_len, &src, &sport) != 0)
		return;
	/* several handlers write: a real read-modify-write; only a count, so relaxed */
	atomic_fetch_add_explicit(&net->lldp_in, 1, memory_order_relaxed);
	uint8_t key[24];
	link_key(key, src, sport, pk->dpid, pi->match.in_port);
	if (rf_hash_upsert(net->links, key, (void *)(uintptr_t)(pk->now_ms + 1), NULL) == 0) {
		uint64_t last = atomic_load_explicit(&net->last_link_ms, memory_order_relaxed);
		while (last < pk->now_ms &&
		       !atomic_compare_exchange_weak_explicit(&net->last_link_ms, &last, pk->now_ms,
							      memory_order_relaxed,
							      memory_order_relaxed))
			;
	}
}

struct ctl_app ctl_topology_app(struct ctl_net *net)
{
	return (struct ctl_app){.name = "topology", .arg = net, .on_packet_in = topo_packet_in,
				.on_switch_up = topo_switch_up, .on_port_status = topo_port_status,
				.on_switch_down = topo_switch_down, .on_timer = topo_timer};
}
