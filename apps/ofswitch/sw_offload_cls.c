/*
 * apps/ofswitch/sw_offload_cls.c: a table's answer for a key (and the metadata the pipeline
 * gave it) together with every mask the answer depends on, for --offload (sw_offload.c).
 *
 * The walk is sw_table_classify_in's (table 0, metadata 0), and it also ORs the mask of every
 * subtable it probes. A subtable it does not probe has a max priority no higher than the
 * answer's, so no flow in it can beat the answer for any key. So every frame that agrees with
 * the key on the consulted bits walks the same subtables and gets the same answer: that is
 * the condition for one kernel entry to stand for all of them. A subtable whose flows also
 * match fields outside the key (sw_xmatch.c) makes the answer depend on bits no entry fixes:
 * the walk marks every bit consulted, so such a decision is never offloaded.
 */
#include "sw_offload.h"
#include "sw_table_pvt.h"

struct sw_flow *sw_offload_classify(struct sw_table *t, const struct sw_key *k,
				    struct sw_key *consulted)
{
	memset(consulted, 0, sizeof(*consulted));
	return sw_offload_classify_md(t, 0, 0, k, consulted);
}

struct sw_flow *sw_offload_classify_md(struct sw_table *t, unsigned tbl, uint64_t md,
				       const struct sw_key *k, struct sw_key *consulted)
{
	/* acquire: pairs with the writer's release in publish_vec (the order, its subtables);
	 * the agent is that writer, but tests call this from other threads too. */
	const struct sw_pvec *v = atomic_load_explicit(&t->vec, memory_order_acquire);
	struct sw_flow *best = NULL;
	int64_t bp = -1;
	uint8_t *u = (uint8_t *)consulted;
	if (tbl >= SW_N_TABLES)
		return NULL;
	for (unsigned i = v->start[tbl]; i < v->start[tbl + 1]; i++) {
		if ((int64_t)v->e[i].maxprio <= bp)
			break;
		struct sw_subtable *st = v->e[i].st;
		if ((md & st->md_mask) != st->md)
			continue; /* matches a metadata value this frame does not carry here (the
				     pipeline's steps before decided md, not the frame's bits) */
		if (st->has_x) {
			/* its flows also match fields outside the key (ND target/ll, tunnel_id,
			 * in_phy_port: sw_xmatch.c) that no kernel entry can: the answer depends on
			 * bits the entry cannot fix, so mark every bit consulted (not offloaded) */
			memset(consulted, 0xff, sizeof(*consulted));
			continue;
		}
		const uint8_t *m = (const uint8_t *)&st->mask;
		for (unsigned b = 0; b < sizeof(*k); b++)
			u[b] |= m[b];
		struct sw_key mk;
		sw_mask_key(k, &st->mask, &mk);
		/* acquire: pairs with the release in grow() (sw_table.c). */
		struct rf_hash *h = atomic_load_explicit(&st->h, memory_order_acquire);
		struct sw_flow *f = rf_hash_lookup(h, &mk);
		if (f && (int64_t)f->priority > bp) {
			best = f;
			bp = f->priority;
		}
	}
	return best;
}
