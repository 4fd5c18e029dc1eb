/*
 * apps/ofswitch/sw_table_pvt.h: the inside of struct sw_table, shared by the classifier
 * (sw_table.c: subtables, updates, reclamation) and the per-core exact-match cache
 * (sw_emc.c: sw_table_lookup). Nothing outside those two files reads it.
 *
 * Who writes what: the agent (one writer thread) owns every field marked "writer"; pollers
 * only load `vec`, a subtable's `h`, `add_gen` and `slot_gen`, and write only their own EMC
 * and their own line of each subtable's `hits`.
 */
#ifndef RINGFLOW_APPS_SW_TABLE_PVT_H
#define RINGFLOW_APPS_SW_TABLE_PVT_H

#include "sw.h"

/* Hits of a subtable on one core (only that poller writes it: relaxed, a single writer). */
struct sw_hits {
	RF_CACHE_ALIGNED _Atomic uint64_t n;
};

/* One distinct priority in a subtable and how many of its flows have it. */
struct sw_prio {
	uint32_t prio, n;
};

/* A subtable: every flow with one mask, in a lock-free hash from the masked key to the
 * highest-priority flow with that masked key (the head of a chain the writer keeps through
 * sw_flow.snext, priority descending). Flows with the same mask, masked key and priority
 * cannot both exist (an OpenFlow ADD replaces), so the head is the subtable's whole answer. */
struct sw_subtable {
	struct sw_key mask;
	/* acquire by readers; pairs with the writer's release when it grows the subtable */
	_Atomic(struct rf_hash *) h;
	struct sw_hits *hits; /* [ncores] */
	/* writer */
	unsigned cap;         /* the hash's max_entries (doubled when full) */
	unsigned nflows;
	struct sw_prio *prios; /* distinct priorities, descending */
	unsigned nprios, prios_cap;
	uint64_t hits_seen, rank; /* hits summed at the last rerank; hits since then */
	bool in_vec;              /* named by the published order */
	bool idle;                /* empty at the last rerank: dropped at the next if still so */
	struct sw_subtable *next; /* the writer's list of every subtable */
};

/* The published order of the non-empty subtables: max priority descending (the value
 * recorded here, which a reader uses to stop early), then most hits first. Immutable once
 * published; replaced as a whole. */
struct sw_pvec {
	unsigned n;
	struct sw_pvec_ent {
		uint32_t maxprio;
		struct sw_subtable *st;
	} e[];
};

/* One entry of a poller's exact-match cache: the whole key -> the classifier's answer,
 * valid while the table's add generation is still `tgen` and (for a flow) the flow's slot
 * still carries its generation `fgen`. */
struct sw_emc_entry {
	RF_CACHE_ALIGNED struct sw_key key;
	struct sw_flow *flow; /* NULL: no flow matches */
	uint64_t tgen;        /* 0: empty (add_gen starts at 1) */
	uint32_t hash, slot, fgen;
};

struct sw_emc {
	struct sw_emc_entry e[SW_EMC_ENTRIES];
};

struct sw_retired {
	void *p;
	int kind; /* enum sw_retire_kind, or the private kinds in sw_table.c */
};

struct sw_table {
	/* Read by every lookup. */
	RF_CACHE_ALIGNED _Atomic(struct sw_pvec *) vec; /* acquire by readers, release by writer */
	_Atomic uint32_t *slot_gen; /* [SW_MAX_FLOWS]: bumped when the slot's flow is removed */
	unsigned ncores;
	struct sw_emc *emc[SW_MAX_CORES]; /* each touched by its poller only */
	/* Bumped (release) by an add that may shadow a cached answer; pollers acquire it. */
	RF_CACHE_ALIGNED _Atomic uint64_t add_gen;
	/* Writer. */
	RF_CACHE_ALIGNED struct sw_subtable *subs;
	unsigned nsubs, nflows;
	uint32_t *free_slots; /* a stack of slots whose flows are past their grace period */
	unsigned nfree;
	struct sw_retired *ret;
	size_t nret, ret_cap;
	uint64_t last_sync_ns;
	void (*dtor)(struct sw_flow *f, void *arg);
	void *dtor_arg;
};

/* The classifier alone (sw_table.c); `core` >= 0 counts the hit on that core's line. */
struct sw_flow *sw_table_classify_core(struct sw_table *t, int core, const struct sw_key *k);

#endif
