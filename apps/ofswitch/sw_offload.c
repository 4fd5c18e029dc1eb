/*
 * apps/ofswitch/sw_offload.c: ringflow-switch --offload: which microflows the kernel may
 * forward, and how the agent keeps the xdp ports' offload tables consistent with the flow
 * table (sw_offload.h has the contract).
 *
 * An entry stands for every whole frame (RF_OFFLOAD_F_WHOLE: one sw_key_parse accepts) whose
 * fields equal the entry's, received on its port. It is correct only if every such frame
 * would get the same decision in userspace: sw_offload_decide_chain checks that the decision
 * came from one flow's program the kernel runs the same way (the flows before it in the
 * pipeline only pass the frame on: sw_offload_follow), and that every bit the classifier
 * consulted in every table of that chain (the OR of the masks of the subtables it probed,
 * sw_offload_cls.c) is a bit such frames share with the key. The entry names only the menu fields (MACs, tag,
 * EtherType, IP addresses, IP protocol, TCP/UDP ports) that hold a consulted bit, as a
 * megaflow does: a flow on in_port alone makes one port-wide entry of WHOLE frames, which
 * the kernel runs without hashing a key. Bits the parser leaves zero for the key's
 * EtherType (`determined`) are fixed by naming the EtherType. A flow matching ip_dscp, a
 * tag's vlan_pcp, the flow label, ARP or ICMP fields is not offloaded (vlan_vid=NONE and
 * vlan_pcp on untagged frames are: the entry says "untagged").
 *
 * Consistency, all on the agent thread (the flow table's only writer): an ADD removes, before
 * the new flow is in the classifier, every entry whose winner in any table of its chain it
 * could beat for some frame the entry matches (may_beat); MODIFY, DELETE, expiry and a
 * replacing ADD remove the entries of every chain the flow is in first. A removal is one BPF map delete, visible to the next frame the kernel processes, so
 * the BARRIER reply (sent later by the same thread) comes after it. A request from a poller
 * carries only the key: the agent classifies it again against the table as it is now, so a
 * request made before a FLOW_MOD can never install the old decision.
 *
 * Counters: an entry's hits are read (every second, before every stats reply and before the
 * entry goes) and their growth added to every flow of its chain (sw_flow.off_pkts, read by
 * sw_flow_counts, so FLOW stats, FLOW_REMOVED and the idle timeout see them), to the TABLE
 * stats of its tables and to its ports. Hits between
 * the last read and a removal are lost with the entry (the driver keeps no counters of a
 * deleted entry): the window is one system call wide.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/pktbuf.h>
#include <ringflow/stats.h>

#include "sw_offload.h"

#define HASH_BUCKETS 4096u /* the agent's index of its entries (a power of two) */

struct sw_off_ent {
	struct sw_off_ent *next, **pprev;   /* every entry */
	struct sw_off_ent *fnext, **fpprev; /* its last flow's (sw_flow.off_ents): the flow whose
					       program it runs, step[nsteps - 1].f */
	struct sw_off_ent *hnext;           /* index by (port, match) */
	struct sw_key key, det; /* the microflow that made it; the bytes the entry fixes */
	/* Its chain (struct sw_off_chain): step i's flow, the table and metadata it was looked
	 * up with, its priority. */
	struct sw_off_step {
		struct sw_flow *f;
		uint64_t md;
		uint16_t prio;
		uint8_t table;
	} step[SW_N_TABLES];
	unsigned nsteps;
	struct rf_offload_match m;
	uint64_t hits, bytes;   /* read from the driver so far */
	unsigned port;
	int out, tx_adj;
};

/* A poller's own line: its random state, what it could not hand over, and the requests it
 * did not make because the port's table was full (port_full). */
struct sw_off_core {
	RF_CACHE_ALIGNED uint32_t rng;
	_Atomic uint64_t requests, ring_full, skipped_full;
};

struct sw_offload {
	struct sw_dp *dp;
	bool fast[SW_MAX_PORTS]; /* port i has an offload table */
	/* Port i's table holds RF_OFFLOAD_MAX_ENTRIES: the pollers make no requests for it until
	 * an entry goes (each would cost the agent a classification and a refused map update).
	 * The agent writes it on a change only, the pollers read it (relaxed: a hint that orders
	 * nothing; a request made on a stale value is refused or installed as before). */
	_Atomic bool port_full[SW_MAX_PORTS];
	struct rf_ring *req;     /* MPSC: pollers -> agent, pktbufs holding a struct sw_key */
	struct sw_off_core core[SW_MAX_CORES];
	/* agent */
	RF_CACHE_ALIGNED struct sw_off_ent *all;
	struct sw_off_ent *idx[HASH_BUCKETS];
	unsigned port_entries[SW_MAX_PORTS]; /* entries installed on port i's table */
	unsigned chained; /* entries whose chain has more than one flow (sw_offload_flow_gone) */
	uint64_t last_link_ns;
	_Atomic uint64_t port_rx[SW_MAX_PORTS][2], port_tx[SW_MAX_PORTS][2]; /* packets, bytes */
	/* counters (the agent writes them; the stats registry reads them relaxed) */
	_Atomic uint64_t entries, installed, removed, removed_by_mod, hits, exists;
	uint64_t table_hits[SW_N_TABLES]; /* the kernel's hits per table they went through */
	_Atomic uint64_t why[SW_OFF_N];
};

static const char *const why_name[SW_OFF_N] = {
	"ok", "no_flow", "pipeline", "meter", "group", "controller", "outputs", "action", "match",
	"full", "error"};

static void inc(_Atomic uint64_t *c, uint64_t n) /* relaxed: one writer, readers tolerate lag */
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* ---- the decision (pure) ---- */

#define DET(d, fld) memset(&(d)->fld, 0xff, sizeof((d)->fld))

/* The key bytes every frame matching an entry made from k shares with k: the menu's fields
 * the entry names, and fields the parser (sw_key.c) leaves zero for k's EtherType. Fields not
 * named here (a tag's vlan_pcp, dscp/ecn of IP, ARP's, the flow label, MPLS, ICMP type/code, fields a
 * later key may add) are not fixed: a decision that consulted them is not offloaded. */
static void determined(const struct sw_key *k, struct sw_key *d)
{
	memset(d, 0, sizeof(*d));
	DET(d, in_port);
	DET(d, eth_dst);
	DET(d, eth_src);
	DET(d, eth_type);
	DET(d, vlan); /* tagged: the entry names the VID; untagged: that there is no tag */
	if (!(k->vlan & 0x1000))
		DET(d, vlan_pcp); /* no tag: no priority bits either */
	bool ip4 = k->eth_type == 0x0800, ip6 = k->eth_type == 0x86dd;
	if (ip4 || ip6) {
		DET(d, nw_src); /* IPv4: bytes 4..15 are zero in every IPv4 key */
		DET(d, nw_dst);
		DET(d, ip_proto);
		uint8_t p = k->ip_proto;
		if (p == 6 || p == 17 || (p != 132 && p != (ip4 ? 1 : 58)))
			DET(d, tp_src), DET(d, tp_dst); /* TCP/UDP ports, or zero */
		if (ip4)
			DET(d, mpls); /* the shared last word: zero for IPv4 */
	} else {
		/* No IP header: protocol, ports, DSCP, ECN stay zero. */
		DET(d, ip_proto);
		DET(d, ip_dscp);
		DET(d, ip_ecn);
		DET(d, tp_src);
		DET(d, tp_dst);
		if (k->eth_type != 0x0806) { /* ARP has addresses there */
			DET(d, nw_src);
			DET(d, nw_dst);
		}
		if (k->eth_type != 0x0806 && k->eth_type != 0x8847 && k->eth_type != 0x8848)
			DET(d, mpls); /* arp_op / MPLS label otherwise */
	}
}

/* Whether any of the n bytes at p is set. */
static bool any_set(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return true;
	return false;
}

#define CONSULTED(c, fld) any_set(&(c)->fld, sizeof((c)->fld))

/* The entry's match: WHOLE (the kernel takes only frames sw_key_parse accepts) and, from k,
 * the menu fields that hold a consulted bit (c), so one entry stands for every microflow the
 * classifier cannot tell from k, as a megaflow does; tag: its tag state is named even when not
 * consulted (a pop_vlan's byte count depends on it). *d gets the bytes the entry fixes (for
 * sw_offload_flow_new). The caller checked that every consulted bit is one determined(k)
 * fixes: a menu field, or one the parser leaves zero for k's EtherType, which the entry then
 * names. */
static void entry_match(const struct sw_key *k, const struct sw_key *c, bool tag,
			struct rf_offload_match *m, struct sw_key *d)
{
	memset(m, 0, sizeof(*m)); /* padding too: the agent's index hashes the bytes */
	memset(d, 0, sizeof(*d));
	m->fields = RF_OFFLOAD_F_WHOLE;
	DET(d, in_port);
	if (CONSULTED(c, eth_dst)) {
		m->fields |= RF_OFFLOAD_F_ETH_DST;
		memcpy(m->eth_dst, k->eth_dst, 6);
		DET(d, eth_dst);
	}
	if (CONSULTED(c, eth_src)) {
		m->fields |= RF_OFFLOAD_F_ETH_SRC;
		memcpy(m->eth_src, k->eth_src, 6);
		DET(d, eth_src);
	}
	/* Tagged or not: an entry made from an untagged frame says so, and no tagged frame
	 * with the same other fields takes it. Both parsers read one 802.1Q or 802.1ad tag
	 * alike (no CTAG). */
	if (tag || CONSULTED(c, vlan) || CONSULTED(c, vlan_pcp)) {
		DET(d, vlan);
		if (k->vlan & 0x1000) {
			m->fields |= RF_OFFLOAD_F_VLAN;
			m->vlan = k->vlan & 0x0fff;
		} else {
			m->fields |= RF_OFFLOAD_F_UNTAGGED;
			DET(d, vlan_pcp);
		}
	}
	/* Any other consulted bit: the EtherType, which also fixes the fields its parser
	 * leaves zero; then the IP fields that hold consulted bits. */
	struct sw_key rest = *c;
	rest.in_port = 0;
	memset(rest.eth_dst, 0, 6);
	memset(rest.eth_src, 0, 6);
	rest.vlan = 0;
	rest.vlan_pcp = 0;
	if (!any_set(&rest, sizeof(rest)))
		return;
	m->fields |= RF_OFFLOAD_F_ETH_TYPE;
	m->eth_type = k->eth_type;
	DET(d, eth_type);
	bool ip4 = k->eth_type == 0x0800, ip6 = k->eth_type == 0x86dd;
	if (!ip4 && !ip6)
		return;
	if (CONSULTED(c, nw_src)) {
		m->fields |= ip4 ? RF_OFFLOAD_F_IP4_SRC : RF_OFFLOAD_F_IP6_SRC;
		memcpy(ip4 ? m->ip4_src : m->ip6_src, k->nw_src, ip4 ? 4 : 16);
		DET(d, nw_src); /* IPv4: bytes 4..15 are zero in every IPv4 key */
	}
	if (CONSULTED(c, nw_dst)) {
		m->fields |= ip4 ? RF_OFFLOAD_F_IP4_DST : RF_OFFLOAD_F_IP6_DST;
		memcpy(ip4 ? m->ip4_dst : m->ip6_dst, k->nw_dst, ip4 ? 4 : 16);
		DET(d, nw_dst);
	}
	bool ports = k->ip_proto == 6 || k->ip_proto == 17;
	bool tp = CONSULTED(c, tp_src) || CONSULTED(c, tp_dst);
	if (CONSULTED(c, ip_proto) || (tp && !ports)) { /* no ports: the protocol zeroes them */
		m->fields |= RF_OFFLOAD_F_IP_PROTO;
		m->ip_proto = k->ip_proto;
		DET(d, ip_proto);
	}
	if (ports && CONSULTED(c, tp_src)) {
		m->fields |= RF_OFFLOAD_F_L4_SRC;
		m->l4_src = k->tp_src;
		DET(d, tp_src);
	}
	if (ports && CONSULTED(c, tp_dst)) {
		m->fields |= RF_OFFLOAD_F_L4_DST;
		m->l4_dst = k->tp_dst;
		DET(d, tp_dst);
	}
}

/* push_vlan at op[i]: the VID and PCP the set-fields after it (before the output) give the
 * new tag. Both are required: userspace copies what is not set from the frame's own outer
 * tag, which an entry cannot know. */
static bool push_tci(const struct sw_actions *x, unsigned i, uint16_t *vid, uint8_t *pcp)
{
	bool v = false, p = false;
	for (unsigned j = i + 1; j < x->last_out && j < x->n; j++) {
		uint8_t c = x->op[j].code;
		if (c == SW_OP_PUSH_VLAN || c == SW_OP_POP_VLAN)
			break;
		if (c == SW_OP_SET_VLAN_VID)
			*vid = (uint16_t)(x->op[j].arg & 0x0fff), v = true;
		else if (c == SW_OP_SET_VLAN_PCP)
			*pcp = (uint8_t)(x->op[j].arg & 7), p = true;
	}
	return v && p;
}

static enum sw_off_why plan_actions(const struct sw_dp *dp, const bool *fast, unsigned in,
				    const struct sw_key *k, const struct sw_actions *x,
				    struct sw_off_plan *p)
{
	bool pushed = false, dec = false;
	unsigned n = 0;
	p->out = -1;
	p->tx_adj = 0;
	if (x->last_out < x->n) { /* else no output: dropped, the rewrites do not matter */
		for (unsigned i = 0; i <= x->last_out; i++) {
			const struct sw_op *o = &x->op[i];
			struct rf_offload_action *a = &p->a[n];
			if (n + 1 >= RF_OFFLOAD_MAX_ACTIONS && o->code != SW_OP_OUTPUT)
				return SW_OFF_ACTION;
			memset(a, 0, sizeof(*a));
			switch (o->code) {
			case SW_OP_OUTPUT: {
				uint32_t port = o->arg;
				if (port == OFPP_CONTROLLER)
					return SW_OFF_CONTROLLER;
				if (port == OFPP_FLOOD || port == OFPP_ALL)
					return SW_OFF_OUTPUTS;
				if (i != x->last_out) /* a copy out, then more */
					return SW_OFF_OUTPUTS;
				int t = -1; /* to its own in port without IN_PORT, elsewhere: none */
				if (port == OFPP_IN_PORT)
					t = (int)in;
				else if (port >= 1 && port <= dp->nports && port - 1 != in)
					t = (int)port - 1;
				if (t >= 0 && !fast[t])
					return SW_OFF_OUTPUTS;
				p->out = t;
				break;
			}
			case SW_OP_GROUP:
				return SW_OFF_GROUP;
			case SW_OP_SET_ETH_DST:
			case SW_OP_SET_ETH_SRC:
				a->type = o->code == SW_OP_SET_ETH_DST ? RF_OFFLOAD_SET_ETH_DST
								       : RF_OFFLOAD_SET_ETH_SRC;
				memcpy(a->mac, o->mac, 6);
				n++;
				break;
			case SW_OP_PUSH_VLAN:
				if (o->arg != 0x8100 || pushed || !push_tci(x, i, &a->vlan, &a->pcp))
					return SW_OFF_ACTION;
				a->type = RF_OFFLOAD_PUSH_VLAN;
				pushed = true;
				p->tx_adj += 4;
				n++;
				break;
			case SW_OP_SET_VLAN_VID:
			case SW_OP_SET_VLAN_PCP:
				if (!pushed) /* a rewrite of the frame's own tag */
					return SW_OFF_ACTION;
				break; /* already in the pushed tag */
			case SW_OP_POP_VLAN:
				if (pushed)
					return SW_OFF_ACTION;
				a->type = RF_OFFLOAD_POP_VLAN;
				if (k->vlan & 0x1000)
					p->tx_adj -= 4;
				n++;
				break;
			case SW_OP_DEC_NW_TTL:
				/* The kernel finds IP behind one tag only: not after a push. */
				if (dec || pushed)
					return SW_OFF_ACTION;
				a->type = RF_OFFLOAD_DEC_TTL;
				dec = true;
				n++;
				break;
			case SW_OP_SET_QUEUE: /* no effect: one queue per port */
				break;
			default:
				return SW_OFF_ACTION;
			}
		}
	}
	if (p->out < 0) { /* dropped: rewrites before it do not matter */
		n = 0;
		p->tx_adj = 0;
		memset(&p->a[0], 0, sizeof(p->a[0]));
		p->a[0].type = RF_OFFLOAD_DROP;
	} else {
		memset(&p->a[n], 0, sizeof(p->a[n]));
		p->a[n].type = RF_OFFLOAD_OUTPUT;
		p->a[n].port = dp->ports[p->out].dev;
	}
	p->n = n + 1;
	return SW_OFF_OK;
}

/* relaxed: the agent is the only writer of f->actions (tests: flows that stay put) */
static const struct sw_actions *prog_of(const struct sw_flow *f)
{
	return atomic_load_explicit(&((struct sw_flow *)f)->actions, memory_order_relaxed);
}

bool sw_offload_passes_on(const struct sw_actions *x)
{
	return x->goto_table != SW_NO_GOTO && x->n == 0 && !x->write &&
	       !(x->inst & ~(unsigned)SW_INST_META) && !x->meter_id && !x->meter;
}

enum sw_off_why sw_offload_follow(struct sw_table *t, const struct sw_key *k, const struct sw_flow *f,
				  struct sw_off_chain *ch, struct sw_key *consulted)
{
	uint64_t md = 0;
	ch->n = 0;
	while (f) {
		ch->f[ch->n] = f;
		ch->md[ch->n] = md;
		ch->n++;
		const struct sw_actions *x = prog_of(f);
		if (!sw_offload_passes_on(x) || ch->n == SW_N_TABLES ||
		    x->goto_table <= f->table_id)
			return SW_OFF_OK; /* the last step: decide judges its program */
		if (x->inst & SW_INST_META) /* as sw_pipe.c: the bits under the mask */
			md = (md & ~x->md_mask) | (x->md & x->md_mask);
		f = sw_offload_classify_md(t, x->goto_table, md, k, consulted);
	}
	return SW_OFF_NO_FLOW;
}

enum sw_off_why sw_offload_decide(const struct sw_dp *dp, const bool *fast, const struct sw_key *k,
				  const struct sw_flow *f, const struct sw_key *consulted,
				  struct sw_off_plan *p)
{
	struct sw_off_chain ch = {.n = f ? 1 : 0, .f = {f}};
	return sw_offload_decide_chain(dp, fast, k, &ch, consulted, p);
}

enum sw_off_why sw_offload_decide_chain(const struct sw_dp *dp, const bool *fast,
					const struct sw_key *k, const struct sw_off_chain *ch,
					const struct sw_key *consulted, struct sw_off_plan *p)
{
	if (ch->n == 0)
		return SW_OFF_NO_FLOW;
	for (unsigned i = 0; i + 1 < ch->n; i++)
		if (!sw_offload_passes_on(prog_of(ch->f[i])))
			return SW_OFF_PIPELINE; /* a chain sw_offload_follow would not make */
	const struct sw_flow *f = ch->f[ch->n - 1];
	const struct sw_actions *x = prog_of(f);
	if (x->meter_id || x->meter)
		return SW_OFF_METER;
	if (sw_actions_pipeline(x) || (ch->n == 1 && f->table_id != 0))
		return SW_OFF_PIPELINE;
	unsigned in = k->in_port - 1;
	if (k->in_port < 1 || k->in_port > dp->nports || !fast[in])
		return SW_OFF_OUTPUTS;
	enum sw_off_why w = plan_actions(dp, fast, in, k, x, p);
	if (w != SW_OFF_OK)
		return w;
	struct sw_key det;
	determined(k, &det);
	const uint8_t *u = (const uint8_t *)consulted, *d = (const uint8_t *)&det;
	for (unsigned i = 0; i < sizeof(*k); i++)
		if (u[i] & ~d[i])
			return SW_OFF_MATCH;
	bool pops = false; /* a pop's byte count depends on the frame's tag */
	for (unsigned i = 0; i < x->n && i <= x->last_out; i++)
		pops = pops || x->op[i].code == SW_OP_POP_VLAN;
	entry_match(k, consulted, pops, &p->m, &p->det);
	return SW_OFF_OK;
}

/* ---- the pollers' side ---- */

void sw_offload_request(struct sw_offload *o, unsigned core, const struct sw_key *k,
			const struct sw_actions *acts)
{
	if (!o || !o->fast[k->in_port - 1] || acts->meter ||
	    (sw_actions_pipeline(acts) && !sw_offload_passes_on(acts)))
		return; /* a flow that passes the frame on: the agent follows it (follow) */
	/* The common programs the agent would refuse for any key, told by their last step
	 * (a table-miss flow to the controller, a flood, a group): no request at all. */
	if (acts->last_out < acts->n) {
		const struct sw_op *o_last = &acts->op[acts->last_out];
		if (o_last->code == SW_OP_GROUP ||
		    (o_last->code == SW_OP_OUTPUT &&
		     (o_last->arg == OFPP_CONTROLLER || o_last->arg == OFPP_FLOOD ||
		      o_last->arg == OFPP_ALL)))
			return;
	}
	struct sw_off_core *c = &o->core[core];
	c->rng ^= c->rng << 13, c->rng ^= c->rng >> 17, c->rng ^= c->rng << 5;
	if (c->rng & (SW_OFFLOAD_REQ_INV - 1))
		return;
	if (atomic_load_explicit(&o->port_full[k->in_port - 1], memory_order_relaxed)) {
		inc(&c->skipped_full, 1); /* userspace keeps it: no entry can go in now */
		return;
	}
	struct rf_pktbuf *b = rf_pktbuf_alloc(o->dp->pool);
	if (!b) {
		inc(&c->ring_full, 1);
		return;
	}
	memcpy(rf_pktbuf_data(b), k, sizeof(*k));
	b->data_len = sizeof(*k);
	if (rf_ring_enqueue_burst(o->req, (void **)&b, 1, NULL) != 1) {
		rf_pktbuf_free(b);
		inc(&c->ring_full, 1);
		return;
	}
	inc(&c->requests, 1);
}

/* ---- the agent's index of its entries ---- */

static uint32_t ent_hash(unsigned port, const struct rf_offload_match *m)
{
	uint32_t h = 2166136261u ^ port; /* FNV-1a over the zero-padded match */
	const uint8_t *p = (const uint8_t *)m;
	for (size_t i = 0; i < sizeof(*m); i++)
		h = (h ^ p[i]) * 16777619u;
	return h & (HASH_BUCKETS - 1);
}

static struct sw_off_ent *ent_find(struct sw_offload *o, unsigned port,
				   const struct rf_offload_match *m)
{
	for (struct sw_off_ent *e = o->idx[ent_hash(port, m)]; e; e = e->hnext)
		if (e->port == port && memcmp(&e->m, m, sizeof(*m)) == 0)
			return e;
	return NULL;
}

/* Entry e's counters since the last read into its flow and its ports. */
static void fold(struct sw_offload *o, struct sw_off_ent *e)
{
	uint64_t h, by;
	if (rf_offload_stats(o->dp->ports[e->port].dev, &e->m, &h, &by) != 0 || h < e->hits)
		return;
	uint64_t dh = h - e->hits, db = by - e->bytes;
	if (!dh)
		return;
	e->hits = h;
	e->bytes = by;
	for (unsigned i = 0; i < e->nsteps; i++) { /* every flow of the chain took them */
		e->step[i].f->off_pkts += dh;
		e->step[i].f->off_bytes += db;
		o->table_hits[e->step[i].table] += dh;
	}
	inc(&o->port_rx[e->port][0], dh);
	inc(&o->port_rx[e->port][1], db);
	if (e->out >= 0) {
		inc(&o->port_tx[e->out][0], dh);
		inc(&o->port_tx[e->out][1], db + (uint64_t)((int64_t)e->tx_adj * (int64_t)dh));
	}
	inc(&o->hits, dh);
}

static void ent_remove(struct sw_offload *o, struct sw_off_ent *e)
{
	fold(o, e);
	(void)rf_offload_del(o->dp->ports[e->port].dev, &e->m); /* from here the app gets them */
	struct sw_off_ent **pp = &o->idx[ent_hash(e->port, &e->m)];
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	if (e->next)
		e->next->pprev = e->pprev;
	*e->pprev = e->next;
	if (e->fnext)
		e->fnext->fpprev = e->fpprev;
	*e->fpprev = e->fnext;
	if (e->nsteps > 1)
		o->chained--;
	if (o->port_entries[e->port]-- == RF_OFFLOAD_MAX_ENTRIES) /* room again: ask again */
		atomic_store_explicit(&o->port_full[e->port], false, memory_order_relaxed);
	free(e);
	inc(&o->removed, 1);
	atomic_store_explicit(&o->entries, atomic_load_explicit(&o->entries, memory_order_relaxed) - 1,
			      memory_order_relaxed);
}

/* One request: classify k now, decide, install. */
static void consider(struct sw_offload *o, struct sw_table *t, const struct sw_key *k)
{
	struct sw_key consulted;
	struct sw_off_plan p;
	struct sw_off_chain ch;
	struct sw_flow *f0 = sw_offload_classify(t, k, &consulted);
	enum sw_off_why w = sw_offload_follow(t, k, f0, &ch, &consulted);
	if (w == SW_OFF_OK)
		w = sw_offload_decide_chain(o->dp, o->fast, k, &ch, &consulted, &p);
	if (w != SW_OFF_OK) {
		inc(&o->why[w], 1);
		return;
	}
	unsigned port = k->in_port - 1;
	if (ent_find(o, port, &p.m)) { /* a request made before the entry was in */
		inc(&o->exists, 1);
		return;
	}
	if (o->port_entries[port] >= RF_OFFLOAD_MAX_ENTRIES) { /* a request made before the flag */
		inc(&o->why[SW_OFF_FULL], 1);
		return;
	}
	struct sw_off_ent *e = calloc(1, sizeof(*e));
	if (!e) {
		inc(&o->why[SW_OFF_ERROR], 1);
		return;
	}
	int rc = rf_offload_add(o->dp->ports[port].dev, &p.m, p.a, p.n);
	if (rc != 0) {
		free(e);
		inc(&o->why[rc == -ENOSPC ? SW_OFF_FULL : SW_OFF_ERROR], 1);
		return;
	}
	struct sw_flow *f = (struct sw_flow *)ch.f[ch.n - 1]; /* its list holds e */
	e->nsteps = ch.n;
	for (unsigned i = 0; i < ch.n; i++)
		e->step[i] = (struct sw_off_step){.f = (struct sw_flow *)ch.f[i], .md = ch.md[i],
						  .prio = ch.f[i]->priority,
						  .table = ch.f[i]->table_id};
	o->chained += ch.n > 1;
	e->key = *k;
	e->det = p.det;
	e->m = p.m;
	e->port = port;
	e->out = p.out;
	e->tx_adj = p.tx_adj;
	uint32_t b = ent_hash(port, &p.m);
	e->hnext = o->idx[b];
	o->idx[b] = e;
	e->next = o->all;
	e->pprev = &o->all;
	if (o->all)
		o->all->pprev = &e->next;
	o->all = e;
	e->fnext = f->off_ents;
	e->fpprev = &f->off_ents;
	if (f->off_ents)
		f->off_ents->fpprev = &e->fnext;
	f->off_ents = e;
	inc(&o->installed, 1);
	inc(&o->entries, 1);
	if (++o->port_entries[port] == RF_OFFLOAD_MAX_ENTRIES) /* full: the pollers stop asking */
		atomic_store_explicit(&o->port_full[port], true, memory_order_relaxed);
}

void sw_offload_poll(struct sw_offload *o, struct sw_table *t, uint64_t now)
{
	if (!o)
		return;
	void *bufs[SW_BURST];
	unsigned n;
	while ((n = rf_ring_dequeue_burst(o->req, bufs, SW_BURST, NULL)) > 0)
		for (unsigned i = 0; i < n; i++) {
			struct rf_pktbuf *b = bufs[i];
			struct sw_key k;
			memcpy(&k, rf_pktbuf_data(b), sizeof(k));
			rf_pktbuf_free(b);
			if (t)
				consider(o, t, &k);
		}
	if (now - o->last_link_ns >= SW_OFFLOAD_LINK_NS) {
		o->last_link_ns = now;
		for (unsigned i = 0; i < o->dp->nports; i++)
			if (o->fast[i]) /* a down port stops the entries sending to it */
				(void)rf_offload_link_sync(o->dp->ports[i].dev);
	}
}

/* Could flow f beat step s's winner for some frame entry e matches? f in s's table, taking
 * s's metadata, at least s's priority, and agreeing with e's key on every bit both fix. */
static bool may_beat(const struct sw_flow *f, const struct sw_off_ent *e,
		     const struct sw_off_step *s)
{
	if (f->table_id != s->table || (s->md & f->md_mask) != f->md || f->priority < s->prio)
		return false;
	const uint8_t *fm = (const uint8_t *)&f->mask, *fv = (const uint8_t *)&f->match;
	const uint8_t *k = (const uint8_t *)&e->key, *d = (const uint8_t *)&e->det;
	for (unsigned i = 0; i < sizeof(e->key); i++)
		if ((k[i] ^ fv[i]) & fm[i] & d[i])
			return false;
	return true;
}

void sw_offload_flow_new(struct sw_offload *o, const struct sw_flow *f)
{
	if (!o)
		return;
	for (struct sw_off_ent *e = o->all, *next; e; e = next) {
		next = e->next;
		for (unsigned i = 0; i < e->nsteps; i++)
			if (may_beat(f, e, &e->step[i])) {
				ent_remove(o, e);
				inc(&o->removed_by_mod, 1);
				break;
			}
	}
}

void sw_offload_flow_gone(struct sw_offload *o, struct sw_flow *f)
{
	if (!o)
		return;
	while (f->off_ents) {
		ent_remove(o, f->off_ents);
		inc(&o->removed_by_mod, 1);
	}
	/* the chains that pass through f on their way (few: o->chained says whether any) */
	for (struct sw_off_ent *e = o->chained ? o->all : NULL, *next; e; e = next) {
		next = e->next;
		for (unsigned i = 0; i + 1 < e->nsteps; i++)
			if (e->step[i].f == f) {
				ent_remove(o, e);
				inc(&o->removed_by_mod, 1);
				break;
			}
	}
}

void sw_offload_sync(struct sw_offload *o)
{
	if (!o)
		return;
	for (struct sw_off_ent *e = o->all; e; e = e->next)
		fold(o, e);
}

void sw_offload_port_counts(const struct sw_offload *o, unsigned i, uint64_t *rx_pkts,
			    uint64_t *rx_bytes, uint64_t *tx_pkts, uint64_t *tx_bytes)
{
	*rx_pkts = *rx_bytes = *tx_pkts = *tx_bytes = 0;
	if (!o || i >= SW_MAX_PORTS)
		return;
	/* relaxed: statistics (inc's one writer, the agent) */
	*rx_pkts = atomic_load_explicit(&o->port_rx[i][0], memory_order_relaxed);
	*rx_bytes = atomic_load_explicit(&o->port_rx[i][1], memory_order_relaxed);
	*tx_pkts = atomic_load_explicit(&o->port_tx[i][0], memory_order_relaxed);
	*tx_bytes = atomic_load_explicit(&o->port_tx[i][1], memory_order_relaxed);
}

uint64_t sw_offload_hits(const struct sw_offload *o, unsigned tbl)
{
	return o && tbl < SW_N_TABLES ? o->table_hits[tbl] : 0;
}

/* ---- setup, the registry, the report ---- */

struct sw_offload *sw_offload_create(struct sw_dp *dp)
{
	struct sw_offload *o = aligned_alloc(RF_CACHE_LINE, sizeof(*o));
	if (!o) {
		fprintf(stderr, "ringflow-switch: --offload: no memory; running without offload\n");
		return NULL;
	}
	memset(o, 0, sizeof(*o));
	o->dp = dp;
	unsigned nfast = 0;
	for (unsigned i = 0; i < dp->nports; i++) {
		char why[256];
		if (rf_offload_supported(dp->ports[i].dev, why, sizeof(why)) == 0) {
			o->fast[i] = true;
			nfast++;
		} else {
			fprintf(stderr, "ringflow-switch: port %u: offload: %s; this port stays in "
				"userspace\n", i + 1, why);
		}
	}
	for (unsigned c = 0; c < SW_MAX_CORES; c++)
		o->core[c].rng = 0x2545f491u * (c + 1);
	o->req = nfast ? rf_ring_create("sw_offload", SW_OFFLOAD_RING, RF_RING_SC_DEQ) : NULL;
	if (!o->req) {
		if (nfast)
			fprintf(stderr, "ringflow-switch: --offload: no memory for its ring; running "
				"without offload\n");
		else
			fprintf(stderr, "ringflow-switch: --offload: no port has an XDP fast path "
				"(only xdp ports do); running without offload\n");
		free(o);
		return NULL;
	}
	return o;
}

void sw_offload_destroy(struct sw_offload *o)
{
	if (!o)
		return;
	while (o->all) { /* the flows are gone: unhook without touching them */
		struct sw_off_ent *e = o->all;
		o->all = e->next;
		(void)rf_offload_del(o->dp->ports[e->port].dev, &e->m);
		free(e);
	}
	void *b;
	while (rf_ring_dequeue_burst(o->req, &b, 1, NULL) == 1)
		rf_pktbuf_free(b);
	rf_ring_free(o->req);
	free(o);
}

static const char why_help[] = "microflows not offloaded, by reason";

/* Requests not made because the port's table was full (the pollers' counts). */
static uint64_t skipped_full(const struct sw_offload *o)
{
	uint64_t n = 0;
	for (unsigned c = 0; c < o->dp->ncores && c < SW_MAX_CORES; c++) /* relaxed: counts */
		n += atomic_load_explicit(&o->core[c].skipped_full, memory_order_relaxed);
	return n;
}

/* app/offload_not_full: what the agent refused as full plus what the pollers did not ask
 * for while the table was full, one counter as the other reasons are. */
static void full_samples(struct rf_stat_set *s, void *arg)
{
	const struct sw_offload *o = arg;
	rf_stats_emit_u64(s, RF_STAT_COUNTER, "app/offload_not_full", "offload_not_full_total",
			  NULL, why_help,
			  atomic_load_explicit(&o->why[SW_OFF_FULL], memory_order_relaxed) +
				  skipped_full(o));
}

void sw_offload_stats_register(struct sw_offload *o, struct rf_stats *reg)
{
	if (!o || !reg)
		return;
	rf_stats_add_gauge(reg, "offload_entries", "offload entries installed now", &o->entries);
	rf_stats_add_counter(reg, "offload_installed", "offload entries installed", &o->installed);
	rf_stats_add_counter(reg, "offload_removed", "offload entries removed", &o->removed);
	rf_stats_add_counter(reg, "offload_removed_by_flow_mod",
			     "offload entries removed because a flow changed", &o->removed_by_mod);
	rf_stats_add_counter(reg, "offload_hits", "frames the kernel forwarded by entries (read "
			     "every second and on stats requests)", &o->hits);
	static const char *const names[SW_OFF_N] = {
		NULL, "offload_not_no_flow", "offload_not_pipeline", "offload_not_meter",
		"offload_not_group", "offload_not_controller", "offload_not_outputs",
		"offload_not_action", "offload_not_match", "offload_not_full", "offload_not_error"};
	for (unsigned w = 1; w < SW_OFF_N; w++)
		if (w == SW_OFF_FULL) /* the agent's refusals and the requests not made */
			rf_stats_add_fn(reg, names[w], full_samples, o);
		else
			rf_stats_add_counter(reg, names[w], why_help, &o->why[w]);
}

void sw_offload_report(const struct sw_offload *o, FILE *out)
{
	if (!o)
		return;
	uint64_t req = 0, full = 0, skipped = skipped_full(o);
	for (unsigned c = 0; c < o->dp->ncores && c < SW_MAX_CORES; c++) {
		req += atomic_load_explicit(&o->core[c].requests, memory_order_relaxed);
		full += atomic_load_explicit(&o->core[c].ring_full, memory_order_relaxed);
	}
	fprintf(out, "ringflow-switch: offload: requests %" PRIu64 " (dropped %" PRIu64
		", not made while the table was full %" PRIu64 "), installed %" PRIu64
		", removed %" PRIu64 " (by flow changes %" PRIu64 "), entries now %" PRIu64
		", already in %" PRIu64 ", hits %" PRIu64 "; not offloaded:",
		req, full, skipped, o->installed, o->removed, o->removed_by_mod, o->entries,
		o->exists, o->hits);
	for (unsigned w = 1; w < SW_OFF_N; w++) /* full: refused and not asked, as the counter */
		fprintf(out, " %s %" PRIu64, why_name[w], o->why[w] + (w == SW_OFF_FULL ? skipped : 0));
	uint64_t ch = 0, cw = 0; /* the XDP programs' lookups: from their caches, or walks */
	for (unsigned i = 0; i < o->dp->nports; i++) {
		uint64_t h, w;
		if (o->fast[i] && rf_offload_cache_counts(o->dp->ports[i].dev, &h, &w) == 0)
			ch += h, cw += w;
	}
	fprintf(out, "; program lookups: cached %" PRIu64 ", walked %" PRIu64 "\n", ch, cw);
}
