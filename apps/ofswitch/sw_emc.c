/*
 * apps/ofswitch/sw_emc.c: the per-core caches in front of the classifier, exact-match (EMC)
 * and megaflow, and sw_table_lookup / sw_table_lookup_md, the calls the pollers make per
 * frame and per pipeline table.
 *
 * Each poller has its own two caches (struct sw_pcache; each 4-way sets, a key may sit in
 * either of two sets picked by its hash, and a fill takes a free way of the two first), so
 * a hit writes nothing and a fill writes only memory of its own core. (With one place or
 * one set per key, as OVS's 2-way EMC, 4096 hot keys in 8192 entries kept evicting each
 * other in the fullest sets: 6.5 % of lookups missed.)
 *   - The EMC (SW_EMC_ENTRIES) maps the whole 64-byte key to the classifier's answer (a
 *     flow, or "none"). As in OVS (emc-insert-inv-prob), a key not in it goes in only on a
 *     random 1 miss in SW_EMC_INSERT_INV, so traffic with far more flows than it holds does
 *     not pay a fill on every frame; a hot key gets in after a few frames, and a key whose
 *     entry went stale is refilled at once.
 *   - The megaflow cache (SW_MFC_ENTRIES, 8 times more) is probed on an EMC miss, keyed by
 *     k & umask, where umask is the union of the masks of the table's subtables in the order
 *     (struct sw_pvec): every bit any flow of that table looks at. Two keys equal under umask
 *     are equal under every subtable's mask, so the classifier gives them the same answer:
 *     one entry answers every microflow of a megaflow, a new microflow included, with one
 *     probe instead of a walk over the subtables. Every classification fills it. This is a
 *     coarser megaflow than OVS's (which un-wildcards only the masks its walk visited, one
 *     megaflow mask per walk shape, one probe per mask): here there is one mask, so one
 *     probe, and no traffic can make more (the tuple-space explosion of Csikor et al. needs
 *     many); the price is that a table whose masks together cover fields most flows ignore
 *     splits megaflows finer than OVS would (docs/switch.md "The caches").
 *   - Every table of the pipeline is cached so: a way's tag carries a selector (the
 *     table's number, and where the key holds metadata), so an entry answers only its own
 *     table, and what follows holds per table. The later tables see the frame's metadata,
 *     which the frame key does not hold. Table tbl's answer depends on md only through
 *     mdk = md & md_umask[tbl] (the metadata bits its subtables match). With mdk == 0 both
 *     caches answer as for table 0. With mdk != 0 the EMC is skipped (its key is the whole
 *     frame key: no room) and the megaflow key carries mdk in a 64-bit word that umask[tbl]
 *     leaves zero (md_word[tbl]), with that word in the selector: no key without metadata
 *     has anything there, and a key with metadata in another word (another order's layout)
 *     has another selector, so equal keys and selectors mean equal (k & umask, mdk). When
 *     umask[tbl] leaves no word zero, such frames are classified uncached. A subtable that
 *     joins with a metadata match widens md_umask and bumps every core, as any join does;
 *     one that leaves narrows it, and an older entry still found is still right, as above.
 *
 * Why both stay correct while the agent changes the table, without a flush per change:
 *   - Removal (delete, expiry, replacement): every flow owns a slot; the table's
 *     slot_gen[slot] is bumped when the flow is removed, and an entry remembers the
 *     generation it saw. A hit checks slot_gen[slot] == entry's (one load from a 512 KiB
 *     array whose hot part stays in cache), so a removed flow is never answered again. It
 *     never dereferences a freed flow: the flow is freed a grace period after the bump, and
 *     after that grace period every poller loads the new value (sw_table_remove says why).
 *     Removing a flow cannot change the answer for keys it did not answer: nothing else is
 *     touched, so deletes cost the pollers nothing. MODIFY swaps actions in place: nothing.
 *   - Add: a new flow f (mask M, in subtable st) can change the cached answer of key k only
 *     if f matches k, i.e. k & M == f's match. So when a poller caches an answer for k, it
 *     first records (st, k & st's mask) for every subtable st of the order it uses in its
 *     shadow filter (a Bloom filter, two bits of one word each, only it writes), then
 *     fences, then loads the order again and classifies in it. When the agent makes f
 *     visible (into its subtable's hash, and a new order first if f raises the subtable's
 *     max priority), it fences and tests
 *     (st, f's match) in each core's filter; only on a hit (or when st is new to the order,
 *     which no filter knows) it bumps that core's generation, and the core's entries filled
 *     under the old one stop counting. The two fences make it exact in the one way that
 *     matters: either the poller's classification saw f, or the agent saw the poller's
 *     bits. The order is among the loads after the fence: its max priorities decide where a
 *     walk stops, and an order loaded before the fence may predate an add that raised a
 *     listed subtable's max priority, stop above that subtable and cache the lower answer
 *     under a generation no one bumps (issue 25; tests/ofswitch/test_sw_emc_stale.c). A
 *     subtable in the reloaded order but not in the one whose bits were noted joined the
 *     order after the poller loaded its generation; a join bumps every core, so that
 *     entry is stale at once. An add that cannot win anywhere (below a flow with the same
 *     mask and masked key) checks nothing.
 *     Stale bits (keys since evicted) only cause extra bumps; a poller starts a clean filter
 *     (and empty caches, its epoch) every SW_SHADOW_REFRESH fills.
 *   - The megaflow entry for m = k0 & umask, filled by key k0, answers a key k with
 *     k & umask == m. For every subtable st of that order, k & st.mask == k0 & st.mask (st's
 *     mask is inside umask), so the bits noted for k0 are the bits for k, and the argument
 *     above holds for k unchanged. A subtable that joins the order later may widen umask;
 *     the join bumps every core, so entries of the narrower mask stop counting. One that
 *     leaves it (empty) narrows umask; an entry of the wider mask can then still be found
 *     (its key has zeros where the narrower mask has), and its answer is still right: k
 *     agrees with k0 on every mask of the old order, and the subtable that left has no flow.
 * So churn in flows the traffic does not hit costs the pollers nothing but their misses'
 * filter stores (one word per subtable); `ringflow-bench switch-lookup` measures it
 * (docs/switch.md). The simpler scheme, one table generation bumped by every add, made
 * each core refill its whole working set after every add: 10K adds/s cost 58 % of the
 * lookup rate in that benchmark.
 */
#include <string.h>

#include "sw_table_pvt.h"

_Static_assert((SW_EMC_ENTRIES & (SW_EMC_ENTRIES - 1)) == 0, "EMC size: a power of two");

/* Record key k in poller m's shadow filter for every subtable of table tbl in order v
 * (before it is classified in v: see the top of the file). A filter grown stale is restarted
 * with empty caches first. */
static void shadow_note(struct sw_pcache *m, const struct sw_pvec *v, unsigned tbl,
			const struct sw_key *k)
{
	if (++m->fills >= SW_SHADOW_REFRESH) {
		m->fills = 0;
		m->epoch++; /* every entry of both caches is stale now, then the filter goes */
		for (size_t i = 0; i < SW_SHADOW_BITS / 64; i++) /* relaxed: the only writer */
			atomic_store_explicit(&m->shadow[i], 0, memory_order_relaxed);
	}
	for (unsigned i = v->start[tbl]; i < v->start[tbl + 1]; i++) {
		struct sw_key mk;
		sw_mask_key(k, &v->e[i].st->mask, &mk);
		uint64_t bits;
		_Atomic uint64_t *w = &m->shadow[sw_shadow_pos(v->e[i].st, &mk, &bits)];
		uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
		if ((old & bits) != bits) /* relaxed: the only writer; the fence after orders it */
			atomic_store_explicit(w, old | bits, memory_order_relaxed);
	}
}

/* Where a key with hash h64 and selector sel (the table, and where a megaflow key holds
 * metadata: mega_key) is or would go in cache c: its two sets, its tag (24 bits of the hash
 * above the selector), and the way holding it (x = set choice * SW_EMC_WAYS + way), stale or
 * not, or -1. */
struct probe {
	uint64_t h64;
	uint32_t si[2], tag;
	int mine;
};

static inline struct sw_emc_way *cache_find(const struct sw_cache *c, uint32_t epoch,
					    unsigned sel, uint64_t h64, const struct sw_key *k,
					    struct probe *p)
{
	p->h64 = h64;
	p->tag = (uint32_t)(h64 >> 40) << 8 | sel;
	p->si[0] = (uint32_t)h64 & (c->nsets - 1);
	p->si[1] = (uint32_t)(h64 >> 16) & (c->nsets - 1);
	p->mine = -1;
	for (unsigned x = 0; x < 2 * SW_EMC_WAYS; x++) {
		unsigned s = x / SW_EMC_WAYS, w = x % SW_EMC_WAYS;
		struct sw_emc_way *e = &c->set[p->si[s]].w[w];
		if (e->hash == p->tag && e->epoch == epoch && sw_key_eq(&c->key[p->si[s]][w], k)) {
			p->mine = (int)x;
			return e;
		}
	}
	return NULL;
}

/* Whether the answer of way e still counts under the core's generation gen. */
static inline bool way_valid(const struct sw_table *t, const struct sw_emc_way *e, uint64_t gen)
{
	if (e->tgen != gen)
		return false;
	/* relaxed: see sw_table_remove; a matching generation means the flow is still in the
	 * table, or was removed so recently that this read-side section started before it:
	 * either way it stays allocated until our next quiescent state. */
	return !e->flow ||
	       atomic_load_explicit(&t->slot_gen[e->slot], memory_order_relaxed) == e->fgen;
}

/* Put key k (probed into p) in cache c with the answer of `ans` (flow, slot, fgen, tgen):
 * into its own way if it has one, else a free or stale way of its two sets, else a
 * pseudo-random one of the eight. */
static void cache_fill(struct sw_cache *c, const struct probe *p, uint32_t epoch, uint64_t gen,
		       const struct sw_key *k, const struct sw_emc_way *ans)
{
	int x = p->mine;
	for (unsigned y = 0; x < 0 && y < 2 * SW_EMC_WAYS; y++) {
		const struct sw_emc_way *e = &c->set[p->si[y / SW_EMC_WAYS]].w[y % SW_EMC_WAYS];
		if (e->epoch != epoch || e->tgen != gen)
			x = (int)y;
	}
	if (x < 0)
		x = (int)(p->h64 >> 40 & (2 * SW_EMC_WAYS - 1));
	uint32_t s = p->si[x / SW_EMC_WAYS], w = (uint32_t)x % SW_EMC_WAYS;
	struct sw_emc_way *e = &c->set[s].w[w];
	c->key[s][w] = *k;
	*e = *ans;
	e->hash = p->tag;
	e->epoch = epoch;
}

/* Whether a key's answer goes into the EMC now (probed into pe): at once when it holds a
 * way there (a stale one), else on a random 1 miss in SW_EMC_INSERT_INV. */
static inline bool emc_admits(struct sw_pcache *m, const struct probe *pe)
{
	m->rng ^= m->rng << 13, m->rng ^= m->rng >> 17, m->rng ^= m->rng << 5;
	return pe->mine >= 0 || !(m->rng & (SW_EMC_INSERT_INV - 1));
}

#define MEGA_SEED 0x5bd1e9955bd1e995ull /* the megaflow cache's hash seed (the EMC's: 0) */

/* Table tbl's megaflow key for (k, md) under order v: k & umask[tbl] and, when md has bits
 * the table's flows match (md & md_umask[tbl]), those bits in the word md_word[tbl] of the
 * key, one that umask[tbl] leaves zero (so no key without metadata has anything there);
 * *sel gets the selector: the table, and 1 + that word when it holds metadata. False when
 * md has such bits and umask[tbl] leaves no word zero: the answer cannot be cached. */
static inline bool mega_key(const struct sw_pvec *v, unsigned tbl, uint64_t md,
			    const struct sw_key *k, struct sw_key *mk, unsigned *sel)
{
	uint64_t mdk = md & v->md_umask[tbl];
	sw_mask_key(k, &v->umask[tbl], mk);
	*sel = tbl;
	if (!mdk)
		return true;
	int w = v->md_word[tbl];
	if (w < 0)
		return false;
	memcpy((uint8_t *)mk + 8 * w, &mdk, 8);
	*sel = tbl | (unsigned)(w + 1) << 3;
	return true;
}

/* Table tbl's answer for key k and metadata md through core's caches. gen: the core's
 * generation, loaded (acquire) before any order; v: the order, loaded after gen, or NULL to
 * load it only on an EMC miss (table 0, where md is 0). The EMC's key is the whole frame
 * key, with no room for metadata: it answers only while md has no bit a flow of tbl matches;
 * the megaflow cache carries those bits in its key (mega_key). */
__attribute__((always_inline)) /* the EMC hit path stays in sw_table_lookup's body */
static inline struct sw_flow *lookup(struct sw_table *t, unsigned core, unsigned tbl,
				     uint64_t md, const struct sw_key *k, uint64_t gen,
				     const struct sw_pvec *v)
{
	struct sw_pcache *m = t->pc[core];
	struct probe pe, pm;
	const struct sw_emc_way *e;
	bool emc = !v || !(md & v->md_umask[tbl]);
	pe.mine = pm.mine = -1;
	if (emc) {
		e = cache_find(&m->exact, m->epoch, tbl, sw_key_hash64(k, 0), k, &pe);
		if (e && way_valid(t, e, gen))
			return e->flow;
	}
	if (!v) /* acquire: pairs with the writer's release in publish_vec (the order, its
		   subtables). */
		v = atomic_load_explicit(&t->vec, memory_order_acquire);
	struct sw_key mk;
	unsigned sel;
	bool keyed = mega_key(v, tbl, md, k, &mk, &sel);
	if (keyed) {
		e = cache_find(&m->mega, m->epoch, sel, sw_key_hash64(&mk, MEGA_SEED), &mk, &pm);
		if (e && way_valid(t, e, gen)) {
			/* The megaflow's answer is k's: into the EMC as a classification would. */
			if (emc && emc_admits(m, &pe))
				cache_fill(&m->exact, &pe, m->epoch, gen, k, e);
			return e->flow;
		}
	}
	uint32_t epoch = m->epoch;
	shadow_note(m, v, tbl, k);
	/* seq_cst: our filter stores before the classifier's loads; pairs with the fence in
	 * shadow_check (sw_table.c). */
	atomic_thread_fence(memory_order_seq_cst);
	/* The order again, after the fence: its max priorities decide where the walk stops, so
	 * they are loads the store-buffering argument must cover (an order loaded before the
	 * fence may predate an add that raised a listed subtable's max priority, and stop above
	 * it). acquire: pairs with the writer's release in publish_vec. Subtables in it that
	 * were not in v joined the order after our generation load, and such a join bumps
	 * every core (shadow_check's was_listed). */
	const struct sw_pvec *v2 = atomic_load_explicit(&t->vec, memory_order_acquire);
	struct sw_flow *f = sw_table_classify_in(v2, (int)core, tbl, md, k, NULL);
	struct sw_key mk2;
	unsigned sel2;
	if (!mega_key(v2, tbl, md, k, &mk2, &sel2))
		return f; /* md's bits have no room in v2's megaflow key: nothing to cache */
	struct sw_emc_way ans = {.flow = f, .tgen = gen, .slot = f ? f->slot : 0,
				 .fgen = f ? f->gen : 0};
	if (epoch != m->epoch) /* a restart emptied the caches */
		pe.mine = pm.mine = -1;
	if (!keyed || sel2 != sel || memcmp(&mk2, &mk, sizeof(mk)) != 0) /* v2's megaflow */
		cache_find(&m->mega, m->epoch, sel2, sw_key_hash64(&mk2, MEGA_SEED), &mk2, &pm);
	cache_fill(&m->mega, &pm, m->epoch, gen, &mk2, &ans);
	/* the EMC only for an answer that md's bits do not decide in v2 either */
	if (emc && sel2 == tbl && emc_admits(m, &pe))
		cache_fill(&m->exact, &pe, m->epoch, gen, k, &ans);
	return f;
}

struct sw_flow *sw_table_lookup(struct sw_table *t, unsigned core, const struct sw_key *k)
{
	/* acquire: pairs with the writer's release bump in shadow_check (sw_table.c): a bump
	 * seen here comes with the flow that caused it. Loaded before the order (in lookup). */
	uint64_t gen = atomic_load_explicit(&t->cgen[core].v, memory_order_acquire);
	return lookup(t, core, 0, 0, k, gen, NULL);
}

struct sw_flow *sw_table_lookup_md(struct sw_table *t, unsigned core, unsigned tbl, uint64_t md,
				   const struct sw_key *k)
{
	if (tbl == 0 && md == 0)
		return sw_table_lookup(t, core, k);
	if (tbl >= SW_N_TABLES)
		return NULL;
	/* acquire: as in sw_table_lookup, before the order. */
	uint64_t gen = atomic_load_explicit(&t->cgen[core].v, memory_order_acquire);
	/* acquire: pairs with the writer's release in publish_vec (the order, its subtables). */
	const struct sw_pvec *v = atomic_load_explicit(&t->vec, memory_order_acquire);
	if ((md & v->md_umask[tbl]) && v->md_word[tbl] < 0) /* no room for md: not cached */
		return sw_table_classify_in(v, (int)core, tbl, md, k, NULL);
	return lookup(t, core, tbl, md, k, gen, v);
}

struct sw_flow *sw_table_lookup_x(struct sw_table *t, unsigned core, unsigned tbl, uint64_t md,
				  const struct sw_key *k, const struct sw_xkey *xk)
{
	if (!xk)
		return sw_table_lookup_md(t, core, tbl, md, k);
	/* acquire: pairs with the writer's release in publish_vec (the order, its subtables). */
	const struct sw_pvec *v = atomic_load_explicit(&t->vec, memory_order_acquire);
	return sw_table_classify_in(v, (int)core, tbl, md, k, xk);
}

void sw_table_cache_forget(struct sw_table *t, unsigned core)
{
	t->pc[core]->epoch++; /* the poller's own; its filter keeps bits: extra bumps at most */
}
