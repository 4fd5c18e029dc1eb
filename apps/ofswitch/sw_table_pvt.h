/*
 * apps/ofswitch/sw_table_pvt.h: the inside of struct sw_table, shared by the classifier
 * (sw_table.c: subtables, updates, reclamation) and the per-core caches (sw_emc.c:
 * sw_table_lookup). Nothing outside those two files reads it.
 *
 * Who writes what: the agent (one writer thread) owns every field marked "writer"; pollers
 * only load `vec`, a subtable's `h`, their `cgen` and `slot_gen`, and write only their own
 * caches and their own line of each subtable's `hits`.
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
	/* With the mask, what makes a subtable: its pipeline table, and the metadata its flows
	 * match (md under md_mask; md_mask 0: any). The metadata is not in the hash key (that
	 * is the frame's struct sw_key, RF_HASH_KEY_MAX bytes already): flows matching
	 * different metadata values get subtables of their own, and a lookup skips a subtable
	 * whose metadata the frame's does not match before probing it. */
	uint64_t md, md_mask;
	uint8_t table_id;
	bool has_x;           /* the fields outside the key (sw.h, struct sw_xmatch) */
	struct sw_xmatch x;   /* its flows' extra match, as md: a lookup skips on a miss */
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

/* The published order of the non-empty subtables: by table, then max priority descending
 * (the value recorded here, which a reader uses to stop early), then most hits first; table
 * i's are e[start[i] .. start[i + 1]). umask[i]: the union of table i's masks (and in_port
 * whole if one of them matches fields outside the key: sw_xmatch_ok reads k->in_port);
 * md_umask[i]: the union of the metadata masks its subtables match. Table i's answer for a
 * key k and metadata md is a function of k & umask[i] and md & md_umask[i]. uall: the union
 * of every table's umask, the outcome cache's mask (sw_outcome.c). Immutable once
 * published; replaced as a whole. */
struct sw_pvec {
	struct sw_key umask[SW_N_TABLES];
	struct sw_key uall;
	uint64_t md_umask[SW_N_TABLES];
	int8_t md_word[SW_N_TABLES]; /* a 64-bit word umask[i] leaves all zero, or -1: where a
					megaflow key of table i carries metadata (sw_emc.c) */
	unsigned n;
	unsigned start[SW_N_TABLES + 1];
	struct sw_pvec_ent {
		uint32_t maxprio;
		struct sw_subtable *st;
	} e[];
};

/* A poller's two caches have one shape (struct sw_cache): 4-way sets, a key in one of two
 * sets its hash picks. A way maps a selector and a 64-byte key to the classifier's answer,
 * valid while its core's generation is still `tgen`, the core's cache epoch still `epoch`,
 * and (for a flow) the flow's slot still carries its generation `fgen`; `hash` is 24 bits of
 * the key's hash above the selector (8 bits: the pipeline table, and which word of a
 * megaflow key holds metadata, if one does), so a way of another table or key layout never
 * matches. A set's ways fill two lines, its keys four. The exact-match cache (EMC) is keyed
 * by the whole key; the megaflow cache by the key under the table's union mask (struct
 * sw_pvec's umask: sw_emc.c says why that is exact). */
_Static_assert(SW_N_TABLES <= 8, "a selector has 3 bits for the table");
#define SW_EMC_WAYS 4
#define SW_EMC_INSERT_INV 8 /* a key not in the EMC is put there on 1 miss in 8 (random) */

struct sw_emc_way {
	struct sw_flow *flow; /* NULL: no flow matches */
	uint64_t tgen;
	uint32_t hash, epoch; /* hash: key hash << 8 | selector; epoch 0: empty (a cache starts at 1) */
	uint32_t slot, fgen;
};

struct sw_emc_set {
	RF_CACHE_ALIGNED struct sw_emc_way w[SW_EMC_WAYS];
};

struct sw_cache {
	struct sw_emc_set *set;            /* [nsets] */
	struct sw_key (*key)[SW_EMC_WAYS]; /* [nsets] */
	uint32_t nsets;                    /* a power of two */
};

/* The shadow filter: a Bloom filter of (subtable, masked key) for every key the caches
 * answered, two bits in one 64-bit word each (one cache line touched per item); the poller
 * sets bits (relaxed stores: it is the only writer), the writer tests them (sw_emc.c
 * explains the protocol). */
#define SW_SHADOW_BITS (1u << 24) /* 2 MiB per core */
#define SW_SHADOW_REFRESH (1u << 16) /* fills before the poller starts a clean filter */

/* The pipeline's outcome cache (sw_outcome.c): the same 4-way sets, two per key, with the
 * tags and epochs of a set on one line and the entries (struct sw_outcome, sw.h) apart. */
struct sw_out_set {
	RF_CACHE_ALIGNED uint32_t hash[SW_EMC_WAYS]; /* 32 bits of the key's hash */
	uint32_t epoch[SW_EMC_WAYS];                 /* 0: empty */
};
struct sw_ocache {
	struct sw_out_set *set;                      /* [nsets] */
	struct sw_key (*key)[SW_EMC_WAYS];           /* [nsets] */
	struct sw_outcome (*ent)[SW_EMC_WAYS];       /* [nsets] */
	uint32_t nsets;                              /* a power of two */
};

/* A poller's caches: only that poller writes them (the writer reads `shadow`). */
struct sw_pcache {
	struct sw_cache exact; /* SW_EMC_ENTRIES: the whole key */
	struct sw_cache mega;  /* SW_MFC_ENTRIES: the key under the order's umask */
	struct sw_ocache out;  /* SW_OUT_ENTRIES: the table-0 key under the order's uall -> the
				  pipeline's outcome */
	uint32_t epoch, fills; /* the poller's own */
	uint32_t rng;          /* xorshift state: which misses go into the EMC (sw_emc.c) */
	/* its own lines (the writer reads them); also makes the struct's size a multiple of
	 * its alignment, as aligned_alloc wants */
	RF_CACHE_ALIGNED _Atomic uint64_t shadow[SW_SHADOW_BITS / 64];
};

/* A core's cache generation, bumped (release) by the writer when an add may change one of
 * the core's cached answers; the poller acquires it per lookup. Own line per core. */
struct sw_cgen {
	RF_CACHE_ALIGNED _Atomic uint64_t v;
};

/* 64-bit hash of a key, seeded (the EMC index, the shadow filter's bits). Four independent
 * lanes of two words each, so the multiplies overlap (a per-frame cost), then one mix. */
static inline uint64_t sw_key_hash64(const struct sw_key *k, uint64_t seed)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t w[8], l[4];
	memcpy(w, p, sizeof(w));
	static const uint64_t K1 = 0x9e3779b97f4a7c15ull, K2 = 0xc2b2ae3d27d4eb4full;
	for (unsigned i = 0; i < 4; i++) {
		l[i] = (w[i] ^ seed ^ (K2 * (i + 1))) * K1;
		l[i] = (l[i] ^ (l[i] >> 29) ^ w[i + 4]) * K2;
	}
	uint64_t x = l[0] ^ (l[1] << 16 | l[1] >> 48) ^ (l[2] << 32 | l[2] >> 32) ^
		     (l[3] << 48 | l[3] >> 16);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Where masked key mk of subtable st sits in a shadow filter: a word, and two bits in it. */
static inline size_t sw_shadow_pos(const struct sw_subtable *st, const struct sw_key *mk,
				   uint64_t *bits)
{
	uint64_t h = sw_key_hash64(mk, (uint64_t)(uintptr_t)st * 0x9e3779b97f4a7c15ull);
	*bits = 1ull << (h >> 52 & 63) | 1ull << (h >> 58);
	return (size_t)(h & (SW_SHADOW_BITS / 64 - 1));
}

static inline bool sw_key_eq(const struct sw_key *a, const struct sw_key *b)
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

static inline void sw_mask_key(const struct sw_key *k, const struct sw_key *m,
			       struct sw_key *out)
{
	const uint8_t *a = (const uint8_t *)k, *b = (const uint8_t *)m;
	uint8_t *o = (uint8_t *)out;
	for (unsigned i = 0; i < sizeof(*k); i += 8) { /* memcpy: no aliasing games */
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		x &= y;
		memcpy(o + i, &x, 8);
	}
}

struct sw_retired {
	void *p;
	int kind; /* enum sw_retire_kind, or the private kinds in sw_table.c */
};

/* A retire list handed to rf_qsbr_defer: after its grace period the callback puts it on the
 * table's `ready` stack, and the writer frees its entries on its own thread (a freed flow's
 * slot goes back to the writer's free stack, and the dtor is the writer's). */
struct sw_retire_batch {
	struct sw_table *t;
	struct sw_retire_batch *next; /* on t->ready */
	struct sw_retired *r;
	size_t n;
};

struct sw_table {
	/* Read by every lookup. */
	RF_CACHE_ALIGNED _Atomic(struct sw_pvec *) vec; /* acquire by readers, release by writer */
	_Atomic uint32_t *slot_gen; /* [SW_MAX_FLOWS]: bumped when the slot's flow is removed */
	unsigned ncores;
	struct sw_pcache *pc[SW_MAX_CORES]; /* each written by its poller only */
	struct sw_cgen cgen[SW_MAX_CORES];
	/* Writer. */
	RF_CACHE_ALIGNED struct sw_subtable *subs;
	unsigned nsubs, nflows;
	uint32_t *free_slots; /* a stack of slots whose flows are past their grace period */
	unsigned nfree;
	struct sw_retired *ret;
	size_t nret, ret_cap;
	uint64_t last_sync_ns;   /* when the last batch went to its grace period */
	unsigned batches_out;    /* batches handed to rf_qsbr_defer, not yet freed */
	bool hash_deferred;      /* a subtable hash went to rf_hash_free_deferred */
	/* Batches past their grace period: pushed by the call_rcu thread (release CAS), taken by
	 * the writer (acquire exchange). */
	RF_CACHE_ALIGNED _Atomic(struct sw_retire_batch *) ready;
	void (*dtor)(struct sw_flow *f, void *arg);
	void *dtor_arg;
};

/* The classifier alone over table tbl of order v with metadata md (sw_table.c); `core` >= 0
 * counts the hit on that core's line. xk: the frame's fields outside the key (NULL: none
 * but what k implies). */
struct sw_flow *sw_table_classify_in(const struct sw_pvec *v, int core, unsigned tbl,
				     uint64_t md, const struct sw_key *k,
				     const struct sw_xkey *xk);

#endif
