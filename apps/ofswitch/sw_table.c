/*
 * apps/ofswitch/sw_table.c: the classifier the pollers read, and the snapshots the agent
 * builds for them.
 *
 * Design (this slice): an exact-match cache (EMC) on ringflow's lock-free hash, keyed by the
 * whole 64-byte flow key, in front of a priority-sorted array of wildcard flows scanned in
 * order (the first match is the highest priority). Not yet tuple-space search: a miss costs
 * one pass over the flows, so the EMC carries the steady state and a table of many masks
 * costs its length on every new microflow (docs/switch.md). Each snapshot has its own EMC,
 * so a table change invalidates every cached answer at once, without a per-entry
 * generation check on the fast path; the price is a cold cache after each change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/mempool.h>

#include "sw.h"

struct sw_flow sw_no_match; /* only its address is used */

struct sw_flow *sw_table_lookup(struct sw_table *t, const struct sw_key *k)
{
	struct sw_flow *f = rf_hash_lookup(t->emc, k);
	if (rf_likely(f != NULL))
		return f == &sw_no_match ? NULL : f;
	f = NULL;
	for (unsigned i = 0; i < t->n; i++)
		if (sw_flow_matches(t->flows[i], k)) {
			f = t->flows[i];
			break;
		}
	/* -EEXIST (another core cached it first) and -ENOSPC (cache full) both leave a correct
	 * cache behind: the answer is the same for every core of this snapshot. */
	(void)rf_hash_insert(t->emc, k, f ? f : &sw_no_match);
	return f;
}

static int by_priority(const void *a, const void *b)
{
	const struct sw_flow *x = *(struct sw_flow *const *)a, *y = *(struct sw_flow *const *)b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->created_ns < y->created_ns ? -1 : x->created_ns > y->created_ns;
}

struct sw_table *sw_table_build(struct sw_flow *list, unsigned n)
{
	struct sw_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->flows = calloc(n ? n : 1, sizeof(*t->flows));
	t->emc = rf_hash_create("sw_emc", sizeof(struct sw_key), SW_EMC_ENTRIES,
				RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	if (!t->flows || !t->emc) {
		sw_table_free(t);
		return NULL;
	}
	for (struct sw_flow *f = list; f && t->n < n; f = f->next)
		t->flows[t->n++] = f;
	qsort(t->flows, t->n, sizeof(*t->flows), by_priority);
	return t;
}

void sw_table_free(struct sw_table *t)
{
	if (!t)
		return;
	rf_hash_free(t->emc);
	free(t->flows);
	free(t);
}

void sw_flow_counts(const struct sw_flow *f, uint64_t *pkts, uint64_t *bytes)
{
	uint64_t p = 0, b = 0;
	for (unsigned c = 0; c < SW_MAX_CORES; c++) {
		p += atomic_load_explicit(&f->ctr[c].pkts, memory_order_relaxed);
		b += atomic_load_explicit(&f->ctr[c].bytes, memory_order_relaxed);
	}
	*pkts = p;
	*bytes = b;
}
