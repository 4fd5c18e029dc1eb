/*
 * apps/ofswitch/sw_emc.c: the per-core exact-match cache (EMC) in front of the classifier,
 * and sw_table_lookup, the one call the pollers make per frame.
 *
 * Each poller has its own cache (struct sw_emc, 8192 entries, 2-way: a key may sit at two
 * places picked by its hash), so a hit or a fill writes nothing another core reads: no
 * atomics, no shared cache lines on the fast path. An entry maps the whole 64-byte flow key
 * to the classifier's answer (a flow, or "none").
 *
 * Why it stays correct while the agent changes the table, without a flush per change:
 *   - Removal (delete, expiry, replacement): every flow owns a slot; the table's
 *     slot_gen[slot] is bumped when the flow is removed, and an entry remembers the
 *     generation it saw. A hit checks slot_gen[slot] == entry's (one load from a 512 KiB
 *     array whose hot part stays in cache), so a removed flow is never answered again. It
 *     never dereferences a freed flow: the flow is freed a grace period after the bump, and
 *     after that grace period every poller loads the new value (sw_table_remove says why).
 *     Removing a flow cannot change the answer for keys it did not answer, so nothing else
 *     is touched: deletes cost the pollers nothing.
 *   - Add: a new flow may win for keys whose cached answer is a lower-priority flow or
 *     "none", and which keys those are is unknown without scanning the cache. So an add
 *     bumps the table's add generation, and an entry is used only under the generation it
 *     was filled in: one load of a read-mostly line per lookup, and after an add each core
 *     refills its working set from the classifier. The bump is skipped when the new flow
 *     cannot win anywhere (it sits below an existing flow with the same mask and masked
 *     key); MODIFY swaps a flow's actions in place and bumps nothing.
 * The price, measured by `ringflow-bench switch-lookup` (docs/switch.md): under a stream of
 * adds a lookup costs about what a classifier lookup costs; deletes and modifies are free.
 * A per-entry invalidation from the agent would avoid that but needs a shared write (or a
 * scan of every core's cache per add); OVS's EMC instead revalidates datapath flows.
 */
#include <string.h>

#include "sw_table_pvt.h"

_Static_assert((SW_EMC_ENTRIES & (SW_EMC_ENTRIES - 1)) == 0, "EMC size: a power of two");

static inline uint32_t key_hash(const struct sw_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t x = 0x2545f4914f6cdd1dull;
	for (unsigned i = 0; i < sizeof(*k); i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		x = (x ^ w) * 0x9e3779b97f4a7c15ull;
		x ^= x >> 29;
	}
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static inline bool key_eq(const struct sw_key *a, const struct sw_key *b)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
	uint64_t d = 0;
	for (unsigned i = 0; i < sizeof(*a); i += 8) {
		uint64_t u, v;
		memcpy(&u, x + i, 8);
		memcpy(&v, y + i, 8);
		d |= u ^ v;
	}
	return d == 0;
}

struct sw_flow *sw_table_lookup(struct sw_table *t, unsigned core, const struct sw_key *k)
{
	/* acquire: pairs with the release bump in sw_table_add (see there). */
	uint64_t gen = atomic_load_explicit(&t->add_gen, memory_order_acquire);
	uint32_t h = key_hash(k);
	struct sw_emc *m = t->emc[core];
	struct sw_emc_entry *e0 = &m->e[h & (SW_EMC_ENTRIES - 1)];
	struct sw_emc_entry *e1 = &m->e[(h >> 16) & (SW_EMC_ENTRIES - 1)];
	struct sw_emc_entry *mine = NULL; /* an entry holding this key, stale or not */
	for (unsigned w = 0; w < 2; w++) {
		struct sw_emc_entry *e = w ? e1 : e0;
		if (e->hash != h || e->tgen == 0 || !key_eq(&e->key, k))
			continue;
		mine = e;
		if (e->tgen != gen)
			break;
		if (!e->flow)
			return NULL;
		/* relaxed: see sw_table_remove; a matching generation means the flow is still
		 * in the table, or was removed so recently that this read-side section started
		 * before it: either way it stays allocated until our next quiescent state. */
		if (atomic_load_explicit(&t->slot_gen[e->slot], memory_order_relaxed) == e->fgen)
			return e->flow;
		break;
	}
	struct sw_flow *f = sw_table_classify_core(t, (int)core, k);
	struct sw_emc_entry *e = mine;
	if (!e)
		e = e0->tgen != gen ? e0 : e1->tgen != gen ? e1 : (h >> 31) ? e1 : e0;
	e->key = *k;
	e->hash = h;
	e->flow = f;
	e->slot = f ? f->slot : 0;
	e->fgen = f ? f->gen : 0;
	e->tgen = gen;
	return f;
}
