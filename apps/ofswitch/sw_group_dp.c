/*
 * apps/ofswitch/sw_group_dp.c: a GROUP action on a poller (sw_group.h has the design).
 *
 * The poller loads the group's program from its slot (acquire, pairs with the agent's
 * release in sw_group.c's publish) and checks that it is still the group the action named.
 * Then by type: all runs every bucket, each on its own copy of the frame; indirect its one
 * bucket; select one live bucket chosen by a hash of the frame's L2-L4 fields (eth src/dst,
 * type, VLAN, IP addresses and protocol, L4 ports), weighted, so one flow stays on one
 * bucket while the live buckets stay the same; fast failover the first live bucket. A bucket
 * is live when its watched port's link is up (the agent's sampled state) and its watched
 * group is live (has a live bucket). A bucket runs through sw_dp_apply, so a GROUP action in
 * a bucket chains; c->group_depth bounds the nesting (the agent refuses deeper chains and
 * loops, so only a mix of old and new programs during a change could reach the bound).
 */
#include <string.h>

#include <ringflow/pktbuf.h>

#include "sw_group.h"

static struct sw_group *load(const struct sw_groups *g, unsigned slot, uint32_t id)
{
	if (slot >= SW_MAX_GROUPS)
		return NULL;
	/* acquire: pairs with the agent's release in publish() (sw_group.c): a whole program */
	struct sw_group *grp = atomic_load_explicit(&((struct sw_groups *)g)->slot[slot],
						    memory_order_acquire);
	return grp && grp->id == id ? grp : NULL;
}

static bool group_live(const struct sw_groups *g, const struct sw_group *grp, unsigned depth)
{
	for (unsigned i = 0; i < grp->nb; i++)
		if (sw_group_bucket_live(g, grp, i, depth))
			return true;
	return false;
}

bool sw_group_bucket_live(const struct sw_groups *g, const struct sw_group *grp, unsigned i,
			  unsigned depth)
{
	const struct sw_bucket *b = &grp->b[i];
	if (b->watch_port != OFPP_ANY &&
	    (b->watch_port < 1 || b->watch_port > SW_MAX_PORTS ||
	     !atomic_load_explicit(&g->port_up[b->watch_port - 1], memory_order_relaxed)))
		return false;
	if (b->watch_group != OFPG_ANY) {
		const struct sw_group *w = load(g, b->watch_slot, b->watch_group);
		if (!w || depth >= SW_GROUP_MAX_DEPTH || !group_live(g, w, depth + 1))
			return false;
	}
	return true;
}

/* FNV-1a over the key's L2-L4 fields (not the in port: the same flow from any port). */
static uint32_t flow_hash(const struct sw_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;
	for (size_t i = offsetof(struct sw_key, eth_dst); i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	h ^= h >> 16; /* the low bits of FNV mix poorly */
	h *= 0x45d9f3bu;
	h ^= h >> 16;
	return h;
}

int sw_group_select(const struct sw_groups *g, const struct sw_group *grp,
		    const struct sw_key *k)
{
	/* Liveness read once: a link changing between two reads must not leave r past the
	 * buckets the second pass sees. */
	uint32_t live = 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < grp->nb; i++)
		if (grp->b[i].weight && sw_group_bucket_live(g, grp, i, 0)) {
			live |= 1u << i;
			total += grp->b[i].weight;
		}
	if (!total)
		return -1;
	uint64_t r = (uint64_t)flow_hash(k) * total >> 32; /* in [0, total) */
	for (unsigned i = 0; i < grp->nb; i++) {
		if (!(live >> i & 1))
			continue;
		if (r < grp->b[i].weight)
			return (int)i;
		r -= grp->b[i].weight;
	}
	return -1; /* not reached */
}

/* Bucket i of grp on frame x (ours), counted on this core's line. */
static void run_bucket(struct sw_core *c, struct rf_pktbuf *x, int in,
		       const struct sw_group *grp, unsigned i, const struct sw_flow *f)
{
	struct sw_group_ctr *ctr = &grp->ctr[c->idx];
	rf_counter_add(&ctr->bpkts[i], 1);
	rf_counter_add(&ctr->bbytes[i], x->data_len);
	c->group_depth++;
	if (grp->b[i].acts.inst & SW_INST_TUN) { /* its set_field tunnel_id is its copy's only */
		uint64_t tun = c->pin_tun;
		sw_dp_apply(c, x, in, &grp->b[i].acts, f);
		c->pin_tun = tun;
	} else {
		sw_dp_apply(c, x, in, &grp->b[i].acts, f);
	}
	c->group_depth--;
}

void sw_group_run(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_op *o,
		  const struct sw_flow *f, bool consume)
{
	const struct sw_groups *g = c->dp->groups;
	const struct sw_group *grp = g ? load(g, o->max_len, o->arg) : NULL;
	int pick = -1;
	if (grp && c->group_depth < SW_GROUP_MAX_DEPTH) {
		rf_counter_add(&grp->ctr[c->idx].pkts, 1);
		rf_counter_add(&grp->ctr[c->idx].bytes, b->data_len);
		switch (grp->type) {
		case OFPGT_ALL:
			for (unsigned i = 0; i < grp->nb; i++) {
				bool last = i + 1 == grp->nb;
				struct rf_pktbuf *x = consume && last ? b : sw_dp_frame_copy(c->dp, b);
				if (x)
					run_bucket(c, x, in, grp, i, f);
				else
					rf_counter_add(&c->drop_tx, 1);
			}
			if (consume && grp->nb == 0)
				rf_pktbuf_free(b);
			return;
		case OFPGT_SELECT: {
			struct sw_key k;
			if (sw_key_parse(rf_pktbuf_data(b), b->data_len, 0, &k) != 0)
				memset(&k, 0, sizeof(k));
			pick = sw_group_select(g, grp, &k);
			break;
		}
		case OFPGT_INDIRECT:
			pick = grp->nb ? 0 : -1;
			break;
		case OFPGT_FF:
			for (unsigned i = 0; i < grp->nb && pick < 0; i++)
				if (sw_group_bucket_live(g, grp, i, 0))
					pick = (int)i;
			break;
		}
	}
	if (pick < 0) { /* no group (deleted meanwhile), too deep, or no live bucket */
		rf_counter_add(&c->drop_group, 1);
		if (consume)
			rf_pktbuf_free(b);
		return;
	}
	struct rf_pktbuf *x = consume ? b : sw_dp_frame_copy(c->dp, b);
	if (!x) {
		rf_counter_add(&c->drop_tx, 1);
		return;
	}
	run_bucket(c, x, in, grp, (unsigned)pick, f);
}
