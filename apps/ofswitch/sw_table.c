/*
 * apps/ofswitch/sw_table.c: the classifier the pollers read and the agent updates in place.
 *
 * Design: tuple-space search, as OVS's classifier. Flows are grouped by mask; each group (a
 * subtable) is one ringflow lock-free hash from the masked key to the highest-priority flow
 * with that masked key. A lookup masks the key with each subtable's mask and probes its hash.
 * The subtables are visited in a published order, max priority descending, and the walk stops
 * at the first subtable whose max priority is not above the best match found so far: with
 * the table-miss flow at 0 and a few priority levels, most lookups end after the subtables
 * of the top level. Within one max priority, subtables with more hits (counted per core)
 * come first, re-ranked by a timer, as OVS's dpcls ranks its subtables: among equal
 * priorities OpenFlow leaves the choice undefined, so the first hit there can end the walk.
 * A lookup costs (subtables visited) hash probes, not (flows).
 *
 * Updates, one flow at a time by the one writer (the agent): an add inserts the flow into
 * its subtable's hash (or makes it the head of its masked key's chain with one upsert), a
 * remove deletes it (or promotes the next of its chain); a new, emptied or re-prioritised
 * subtable republishes the small ordered array of subtables. Each is one release store, so a
 * reader sees the table before or after the change. Nothing is rebuilt per batch. What goes
 * out of reach (a flow, an action list, an old order array, a grown-out hash, an emptied
 * subtable) is retired and freed after a QSBR grace period; the writer hands what it retired
 * to a grace period in batches (rf_qsbr_defer, at most one per SW_RECLAIM_NS) and frees each
 * batch on its own thread once it is past, so it never waits for a reader: a FLOW_MOD or a
 * PACKET_IN behind it is not held up by a grace period (which took 8-10 ms on the bench bed
 * when the writer waited for it). A full subtable hash is replaced by one twice its size (copied by the writer
 * while readers keep using the old one), so a subtable costs memory for what it holds.
 *
 * The per-core caches in front (exact-match and megaflow) are in sw_emc.c; they stay correct
 * through the slot generations and the add generation kept here (see sw_emc.c for why these
 * two), and the megaflow cache through the order's umask, made in publish_vec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>

#include "sw_table_pvt.h"

#define SUB_MIN_CAP 256u           /* a new subtable's hash holds this many before it grows */
#define RETIRE_MAX 65536u          /* a longer retire list goes to a grace period at once */
/* private kinds beside enum sw_retire_kind */
enum { RETIRE_HASH = 100, RETIRE_SUB, RETIRE_REPLACED };

struct sw_flow *sw_flow_alloc(unsigned ncores)
{
	if (ncores == 0 || ncores > SW_MAX_CORES) {
		errno = EINVAL;
		return NULL;
	}
	size_t sz = sizeof(struct sw_flow) + ncores * sizeof(struct sw_flow_ctr);
	sz = (sz + RF_CACHE_LINE - 1) & ~(size_t)(RF_CACHE_LINE - 1);
	struct sw_flow *f = aligned_alloc(RF_CACHE_LINE, sz);
	if (!f)
		return NULL;
	memset(f, 0, sz);
	f->ncores = ncores;
	return f;
}

void sw_flow_counts(const struct sw_flow *f, uint64_t *pkts, uint64_t *bytes)
{
	uint64_t p = 0, b = 0;
	for (unsigned c = 0; c < f->ncores; c++) {
		p += atomic_load_explicit(&f->ctr[c].pkts, memory_order_relaxed);
		b += atomic_load_explicit(&f->ctr[c].bytes, memory_order_relaxed);
	}
	*pkts = p + f->off_pkts; /* + what the kernel forwarded for it (--offload) */
	*bytes = b + f->off_bytes;
}

/* ---- the read side ---- */

struct sw_flow *sw_table_classify_in(const struct sw_pvec *v, int core, unsigned tbl,
				     uint64_t md, const struct sw_key *k,
				     const struct sw_xkey *xk)
{
	struct sw_flow *best = NULL;
	struct sw_subtable *where = NULL;
	int64_t bp = -1;
	if (tbl >= SW_N_TABLES)
		return NULL;
	for (unsigned i = v->start[tbl]; i < v->start[tbl + 1]; i++) {
		if ((int64_t)v->e[i].maxprio <= bp)
			break; /* nothing further down can beat (or needs to tie with) best */
		struct sw_subtable *st = v->e[i].st;
		if ((md & st->md_mask) != st->md)
			continue; /* its flows match other metadata */
		if (st->has_x && !sw_xmatch_ok(&st->x, k, xk))
			continue; /* or other fields outside the key (issue 25) */
		struct sw_key mk;
		sw_mask_key(k, &st->mask, &mk);
		/* acquire: pairs with the release in grow(): the new hash is fully filled. */
		struct rf_hash *h = atomic_load_explicit(&st->h, memory_order_acquire);
		struct sw_flow *f = rf_hash_lookup(h, &mk);
		if (f && (int64_t)f->priority > bp) {
			best = f;
			bp = f->priority;
			where = st;
		}
	}
	if (where && core >= 0) /* relaxed: this core's own line, a statistic */
		atomic_store_explicit(&where->hits[core].n,
				      atomic_load_explicit(&where->hits[core].n, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	return best;
}

struct sw_flow *sw_table_classify(struct sw_table *t, const struct sw_key *k)
{
	/* acquire: pairs with the writer's release in publish_vec: the array and every
	 * subtable it names (mask, hash, hit lines) are complete. */
	return sw_table_classify_in(atomic_load_explicit(&t->vec, memory_order_acquire), -1, 0, 0,
				    k, NULL);
}

struct sw_flow *sw_table_classify_md(struct sw_table *t, unsigned tbl, uint64_t md,
				     const struct sw_key *k)
{
	/* acquire: as in sw_table_classify. */
	return sw_table_classify_in(atomic_load_explicit(&t->vec, memory_order_acquire), -1, tbl,
				    md, k, NULL);
}

/* ---- create / free ---- */

/* One cache of n entries, every way empty (epoch 0). */
static bool cache_init(struct sw_cache *c, uint32_t n)
{
	c->nsets = n / SW_EMC_WAYS;
	c->set = aligned_alloc(RF_CACHE_LINE, c->nsets * sizeof(*c->set));
	c->key = calloc(c->nsets, sizeof(*c->key));
	if (c->set)
		memset(c->set, 0, c->nsets * sizeof(*c->set));
	return c->set && c->key;
}

static void pcache_free(struct sw_pcache *p)
{
	if (!p)
		return;
	free(p->exact.set);
	free(p->exact.key);
	free(p->mega.set);
	free(p->mega.key);
	free(p->out.set);
	free(p->out.key);
	free(p->out.ent);
	free(p);
}

/* Poller c's caches, empty, at epoch 1; NULL on no memory. */
static struct sw_pcache *pcache_new(unsigned c)
{
	struct sw_pcache *p = aligned_alloc(RF_CACHE_LINE, sizeof(*p));
	if (!p)
		return NULL;
	memset(p, 0, sizeof(*p));
	p->epoch = 1;
	p->rng = 0x9e3779b9u * (c + 1);
	p->out.nsets = SW_OUT_ENTRIES / SW_EMC_WAYS;
	p->out.set = aligned_alloc(RF_CACHE_LINE, p->out.nsets * sizeof(*p->out.set));
	p->out.key = calloc(p->out.nsets, sizeof(*p->out.key));
	p->out.ent = calloc(p->out.nsets, sizeof(*p->out.ent));
	if (p->out.set)
		memset(p->out.set, 0, p->out.nsets * sizeof(*p->out.set));
	if (!cache_init(&p->exact, SW_EMC_ENTRIES) || !cache_init(&p->mega, SW_MFC_ENTRIES) ||
	    !p->out.set || !p->out.key || !p->out.ent) {
		pcache_free(p);
		return NULL;
	}
	return p;
}

struct sw_table *sw_table_create(unsigned ncores)
{
	if (ncores == 0 || ncores > SW_MAX_CORES) {
		errno = EINVAL;
		return NULL;
	}
	struct sw_table *t = aligned_alloc(RF_CACHE_LINE, sizeof(*t));
	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->ncores = ncores;
	t->slot_gen = calloc(SW_MAX_FLOWS, sizeof(*t->slot_gen));
	t->free_slots = malloc(SW_MAX_FLOWS * sizeof(*t->free_slots));
	struct sw_pvec *v = calloc(1, sizeof(*v));
	bool ok = t->slot_gen && t->free_slots && v;
	for (unsigned c = 0; ok && c < ncores; c++) {
		t->pc[c] = pcache_new(c);
		ok = t->pc[c] != NULL;
		atomic_init(&t->cgen[c].v, 1);
	}
	if (!ok) {
		free(v);
		sw_table_free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < SW_MAX_FLOWS; i++) /* slot 0 on top */
		t->free_slots[i] = SW_MAX_FLOWS - 1 - i;
	t->nfree = SW_MAX_FLOWS;
	atomic_init(&t->vec, v);
	return t;
}

/* A subtable hash, freed on the writer's thread (the agent): without waiting for its own
 * reclamation callbacks (a hash that saw deletes has some; rf_hash_free would wait for a
 * grace period), whose last one frees it; sw_table_free waits for those. */
static void hash_free(struct sw_table *t, struct rf_hash *h)
{
	if (!h)
		return;
	rf_hash_free_deferred(h);
	t->hash_deferred = true;
}

static void sub_free(struct sw_table *t, struct sw_subtable *st)
{
	hash_free(t, atomic_load_explicit(&st->h, memory_order_relaxed));
	free(st->hits);
	free(st->prios);
	free(st);
}

static void free_retired(struct sw_table *t, struct sw_retired *r)
{
	switch (r->kind) {
	case SW_RETIRE_FLOW: {
		struct sw_flow *f = r->p;
		t->free_slots[t->nfree++] = f->slot; /* its generation was bumped at remove */
		if (t->dtor)
			t->dtor(f, t->dtor_arg);
		free(f);
		break;
	}
	case RETIRE_REPLACED: { /* its slot went on with the flow that replaced it */
		struct sw_flow *f = r->p;
		if (t->dtor)
			t->dtor(f, t->dtor_arg);
		free(f);
		break;
	}
	case RETIRE_HASH:
		hash_free(t, r->p);
		break;
	case RETIRE_SUB:
		sub_free(t, r->p);
		break;
	default:
		free(r->p);
	}
}

static void free_list(struct sw_table *t, struct sw_retired *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free_retired(t, &r[i]);
}

/* Frees the batches whose grace period is over (the writer's thread). */
static void collect_ready(struct sw_table *t)
{
	/* relaxed: a peek; the exchange below takes. */
	if (!atomic_load_explicit(&t->ready, memory_order_relaxed))
		return;
	/* acquire: pairs with batch_ready's release: the batch is complete, and its grace period
	 * (the readers' last accesses to what it holds) is over. */
	struct sw_retire_batch *b = atomic_exchange_explicit(&t->ready, NULL, memory_order_acquire);
	while (b) {
		struct sw_retire_batch *next = b->next;
		free_list(t, b->r, b->n);
		free(b->r);
		free(b);
		t->batches_out--;
		b = next;
	}
}

/* The grace period of b is over (liburcu's call_rcu thread): hand it back to the writer. */
static void batch_ready(void *arg)
{
	struct sw_retire_batch *b = arg;
	_Atomic(struct sw_retire_batch *) *top = &b->t->ready;
	/* relaxed: the CAS below decides. */
	struct sw_retire_batch *old = atomic_load_explicit(top, memory_order_relaxed);
	do
		b->next = old;
	/* release: pairs with collect_ready's acquire exchange (b->next and b are complete). */
	while (!atomic_compare_exchange_weak_explicit(top, &old, b, memory_order_release,
						      memory_order_relaxed));
}

/* Hands the retire list to a grace period without waiting: 0, or -1 (no memory, or the defer
 * queue is at its limit) with the list left as it was. */
static int defer_list(struct sw_table *t)
{
	struct sw_retire_batch *b = malloc(sizeof(*b));
	if (!b)
		return -1;
	*b = (struct sw_retire_batch){.t = t, .r = t->ret, .n = t->nret};
	if (rf_qsbr_defer(batch_ready, b) != 0) {
		free(b);
		return -1;
	}
	t->batches_out++;
	t->ret = NULL; /* the next retire starts a new list */
	t->nret = t->ret_cap = 0;
	return 0;
}

void sw_table_free(struct sw_table *t)
{
	if (!t)
		return;
	if (t->batches_out) { /* their callbacks hold t */
		rf_qsbr_barrier();
		collect_ready(t);
	}
	free_list(t, t->ret, t->nret);
	free(t->ret);
	while (t->subs) {
		struct sw_subtable *st = t->subs;
		t->subs = st->next;
		sub_free(t, st);
	}
	if (t->hash_deferred)
		rf_qsbr_barrier(); /* the hashes' last callbacks have freed them */
	free(atomic_load_explicit(&t->vec, memory_order_relaxed));
	for (unsigned c = 0; c < SW_MAX_CORES; c++)
		pcache_free(t->pc[c]);
	free(t->slot_gen);
	free(t->free_slots);
	free(t);
}

unsigned sw_table_nflows(const struct sw_table *t)
{
	return t->nflows;
}

unsigned sw_table_nsubtables(const struct sw_table *t)
{
	unsigned n = 0;
	for (const struct sw_subtable *st = t->subs; st; st = st->next)
		n += st->nflows > 0;
	return n;
}

void sw_table_set_flow_dtor(struct sw_table *t, void (*fn)(struct sw_flow *f, void *arg),
			    void *arg)
{
	t->dtor = fn;
	t->dtor_arg = arg;
}

/* ---- reclamation ---- */

void sw_table_reclaim(struct sw_table *t, uint64_t now_ns, bool force)
{
	collect_ready(t);
	if (t->nret == 0 && !(force && t->batches_out))
		return;
	if (!force && t->nret < RETIRE_MAX && now_ns - t->last_sync_ns < SW_RECLAIM_NS)
		return;
	t->last_sync_ns = now_ns;
	/* Everything on the list was unreachable before this call: after one grace period no
	 * reader holds any of it. */
	if (!force && defer_list(t) == 0)
		return;
	/* Wait here (offline meanwhile; readers never wait): for the list's grace period, and
	 * with force for the batches already out, so all of it is freed on return. */
	rf_qsbr_synchronize();
	if (force && t->batches_out)
		rf_qsbr_barrier(); /* the callbacks of the batches out have run */
	size_t n = t->nret;
	t->nret = 0; /* a dtor may not retire, but keep the list consistent anyway */
	free_list(t, t->ret, n);
	collect_ready(t);
}

static void retire_kind(struct sw_table *t, void *p, int kind)
{
	if (!p)
		return;
	if (t->nret == t->ret_cap) {
		size_t cap = t->ret_cap ? t->ret_cap * 2 : 1024;
		struct sw_retired *r = realloc(t->ret, cap * sizeof(*r));
		if (!r) { /* cannot defer: wait for the grace period here instead */
			rf_qsbr_synchronize();
			struct sw_retired one = {p, kind};
			sw_table_reclaim(t, 0, true);
			free_retired(t, &one);
			return;
		}
		t->ret = r;
		t->ret_cap = cap;
	}
	t->ret[t->nret++] = (struct sw_retired){p, kind};
	if (t->nret >= RETIRE_MAX) /* bound the memory a flood can pin: a batch now */
		sw_table_reclaim(t, t->last_sync_ns, false);
}

void sw_table_retire(struct sw_table *t, void *p, enum sw_retire_kind kind)
{
	retire_kind(t, p, (int)kind);
}

/* ---- the published order of subtables ---- */

static uint32_t maxprio(const struct sw_subtable *st)
{
	return st->prios[0].prio; /* only asked of non-empty subtables */
}

static int by_rank(const void *a, const void *b)
{
	const struct sw_pvec_ent *x = a, *y = b;
	if (x->st->table_id != y->st->table_id)
		return x->st->table_id < y->st->table_id ? -1 : 1;
	if (x->maxprio != y->maxprio)
		return x->maxprio > y->maxprio ? -1 : 1;
	return x->st->rank > y->st->rank ? -1 : x->st->rank < y->st->rank;
}

/* An array with room for every subtable (the caller fills it with publish_vec). */
static struct sw_pvec *vec_alloc(const struct sw_table *t)
{
	return malloc(sizeof(struct sw_pvec) + (t->nsubs + 1) * sizeof(struct sw_pvec_ent));
}

/* *u |= *m, byte by byte: a union of masks. */
static void key_or(struct sw_key *u, const struct sw_key *m)
{
	for (size_t b = 0; b < sizeof(*u); b++)
		((uint8_t *)u)[b] |= ((const uint8_t *)m)[b];
}

/* Fill v with the non-empty subtables in rank order and publish it; the old one is retired. */
static void publish_vec(struct sw_table *t, struct sw_pvec *v)
{
	v->n = 0;
	for (struct sw_subtable *st = t->subs; st; st = st->next) {
		st->in_vec = st->nflows > 0;
		if (st->in_vec)
			v->e[v->n++] = (struct sw_pvec_ent){maxprio(st), st};
	}
	qsort(v->e, v->n, sizeof(v->e[0]), by_rank);
	for (unsigned tb = 0, i = 0; tb <= SW_N_TABLES; tb++) {
		while (i < v->n && v->e[i].st->table_id < tb)
			i++;
		v->start[tb] = tb == SW_N_TABLES ? v->n : i;
	}
	/* the megaflow cache's masks (sw_emc.c), per table, and their union (sw_outcome.c) */
	memset(v->umask, 0, sizeof(v->umask));
	memset(v->md_umask, 0, sizeof(v->md_umask));
	memset(&v->uall, 0, sizeof(v->uall));
	for (unsigned tb = 0; tb < SW_N_TABLES; tb++) {
		for (unsigned i = v->start[tb]; i < v->start[tb + 1]; i++) {
			const struct sw_subtable *st = v->e[i].st;
			key_or(&v->umask[tb], &st->mask);
			if (st->has_x)
				v->umask[tb].in_port = 0xffffffffu;
			v->md_umask[tb] |= st->md_mask;
		}
		key_or(&v->uall, &v->umask[tb]);
		v->md_word[tb] = -1; /* where a megaflow key carries metadata */
		for (int w = 0; w < (int)(sizeof(struct sw_key) / 8) && v->md_word[tb] < 0; w++) {
			uint64_t x;
			memcpy(&x, (const uint8_t *)&v->umask[tb] + 8 * w, 8);
			if (x == 0)
				v->md_word[tb] = (int8_t)w;
		}
	}
	/* release: pairs with the readers' acquires of t->vec: the array, and the
	 * subtables and flows it reaches, are complete before a reader sees it. */
	struct sw_pvec *old = atomic_exchange_explicit(&t->vec, v, memory_order_acq_rel);
	retire_kind(t, old, SW_RETIRE_FREE);
}

/* Publish a new order, or keep the old one without memory. The old one stays correct for
 * readers as long as it names every non-empty subtable: a stale max priority that is too
 * high only costs a visit; callers never let it be too low (see sw_table_add). */
static bool republish(struct sw_table *t)
{
	struct sw_pvec *v = vec_alloc(t);
	if (!v)
		return false;
	publish_vec(t, v);
	return true;
}

void sw_table_rerank(struct sw_table *t)
{
	bool changed = false;
	/* Subtables empty since the last call go now (kept until then: flows that come and go
	 * on one mask do not create and free a hash each time). */
	for (struct sw_subtable **pp = &t->subs; *pp;) {
		struct sw_subtable *st = *pp;
		if (st->nflows == 0 && st->idle && !st->in_vec) {
			*pp = st->next;
			t->nsubs--;
			retire_kind(t, st, RETIRE_SUB);
			continue;
		}
		st->idle = st->nflows == 0;
		pp = &st->next;
	}
	for (struct sw_subtable *st = t->subs; st; st = st->next) {
		uint64_t sum = 0;
		for (unsigned c = 0; c < t->ncores; c++)
			sum += atomic_load_explicit(&st->hits[c].n, memory_order_relaxed);
		uint64_t rank = sum - st->hits_seen;
		changed |= rank != st->rank;
		st->rank = rank;
		st->hits_seen = sum;
	}
	if (changed)
		(void)republish(t);
}

/* ---- the writer's bookkeeping of priorities per subtable ---- */

/* Index of prio in st->prios, or where it would go (descending order). */
static unsigned prio_pos(const struct sw_subtable *st, uint32_t prio)
{
	unsigned lo = 0, hi = st->nprios;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (st->prios[mid].prio > prio)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int prio_reserve(struct sw_subtable *st)
{
	if (st->nprios < st->prios_cap)
		return 0;
	unsigned cap = st->prios_cap ? st->prios_cap * 2 : 4;
	struct sw_prio *p = realloc(st->prios, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	st->prios = p;
	st->prios_cap = cap;
	return 0;
}

static void prio_add(struct sw_subtable *st, uint32_t prio) /* after prio_reserve */
{
	unsigned i = prio_pos(st, prio);
	if (i < st->nprios && st->prios[i].prio == prio) {
		st->prios[i].n++;
		return;
	}
	memmove(&st->prios[i + 1], &st->prios[i], (st->nprios - i) * sizeof(st->prios[0]));
	st->prios[i] = (struct sw_prio){prio, 1};
	st->nprios++;
}

static void prio_del(struct sw_subtable *st, uint32_t prio)
{
	unsigned i = prio_pos(st, prio);
	if (i >= st->nprios || st->prios[i].prio != prio)
		return; /* cannot happen: every flow was counted */
	if (--st->prios[i].n)
		return;
	memmove(&st->prios[i], &st->prios[i + 1], (st->nprios - i - 1) * sizeof(st->prios[0]));
	st->nprios--;
}

/* ---- subtables ---- */

static struct rf_hash *sub_hash(unsigned cap)
{
	return rf_hash_create("sw_sub", sizeof(struct sw_key), cap,
			      RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
}

/* The subtable of f's mask, table and metadata match, or NULL. */
static struct sw_subtable *sub_find(struct sw_table *t, const struct sw_flow *f)
{
	for (struct sw_subtable *st = t->subs; st; st = st->next)
		if (memcmp(&st->mask, &f->mask, sizeof(f->mask)) == 0 &&
		    st->table_id == f->table_id && st->md == f->md && st->md_mask == f->md_mask &&
		    memcmp(&st->x, &f->x, sizeof(f->x)) == 0)
			return st;
	return NULL;
}

/* An empty subtable for f's, on the writer's list but in no published order yet. */
static struct sw_subtable *sub_new(struct sw_table *t, const struct sw_flow *f)
{
	struct sw_subtable *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->mask = f->mask;
	st->table_id = f->table_id;
	st->md = f->md;
	st->md_mask = f->md_mask;
	st->x = f->x;
	st->has_x = sw_xmatch_any(&f->x);
	st->cap = SUB_MIN_CAP;
	struct rf_hash *h = sub_hash(st->cap);
	st->hits = aligned_alloc(RF_CACHE_LINE, t->ncores * sizeof(struct sw_hits));
	if (!h || !st->hits) {
		rf_hash_free(h);
		free(st->hits);
		free(st);
		return NULL;
	}
	memset(st->hits, 0, t->ncores * sizeof(struct sw_hits));
	atomic_init(&st->h, h);
	st->next = t->subs;
	t->subs = st;
	t->nsubs++;
	return st;
}

/* Replace st's full hash by one twice its size with the same entries. Readers in the old
 * one see it frozen (the writer is us), and it goes after a grace period. */
static int grow(struct sw_subtable *st, struct sw_table *t)
{
	if (st->cap >= SW_MAX_FLOWS)
		return -ENOSPC;
	struct rf_hash *old = atomic_load_explicit(&st->h, memory_order_relaxed); /* ours */
	struct rf_hash *nh = sub_hash(st->cap * 2);
	if (!nh)
		return -ENOMEM;
	struct rf_hash_iter it;
	const void *key;
	void *val;
	rf_hash_iter_init(old, &it);
	while (rf_hash_iter_next(old, &it, &key, &val))
		if (rf_hash_insert(nh, key, val) != 0) {
			rf_hash_free(nh);
			return -ENOMEM;
		}
	st->cap *= 2;
	/* release: pairs with the readers' acquire of st->h: every entry is in place. */
	atomic_store_explicit(&st->h, nh, memory_order_release);
	retire_kind(t, old, RETIRE_HASH);
	return 0;
}

/* ---- add and remove ---- */

/* After f became visible as a head in st: which cores may have cached an answer f now
 * beats (sw_emc.c has the protocol)? A core whose filter holds (st, f's masked key), and
 * every core when st just (re)joined the order (their filters know nothing of it). Those
 * cores' generations are bumped. */
static void shadow_check(struct sw_table *t, struct sw_subtable *st, struct sw_flow *f,
			 bool was_listed)
{
	uint64_t bits;
	size_t word = sw_shadow_pos(st, &f->match, &bits);
	/* seq_cst: orders the stores that made f visible (the hash's release store) before
	 * the filter loads below; pairs with the fence between a poller's filter stores and
	 * its classifier loads in sw_table_lookup: either that lookup sees f, or we see its
	 * bits (the store-buffering pattern). */
	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned c = 0; c < t->ncores; c++) {
		bool hit = !was_listed;
		if (!hit) /* relaxed: ordered by the fence above */
			hit = (atomic_load_explicit(&t->pc[c]->shadow[word], memory_order_relaxed) &
			       bits) == bits;
		/* release: pairs with the poller's acquire of its generation: a poller that sees
		 * the bump also sees f (and the order naming st). */
		if (hit)
			atomic_fetch_add_explicit(&t->cgen[c].v, 1, memory_order_release);
	}
}

int sw_table_add(struct sw_table *t, struct sw_flow *f)
{
	if (t->nflows >= SW_MAX_FLOWS)
		return -ENOSPC;
	if (t->nfree == 0) /* every free slot waits for a grace period: wait for it once */
		sw_table_reclaim(t, t->last_sync_ns, true);
	if (t->nfree == 0)
		return -ENOSPC;
	if (f->table_id >= SW_N_TABLES)
		return -EINVAL;
	f->md &= f->md_mask;
	f->has_md = f->md_mask != 0;
	struct sw_subtable *st = sub_find(t, f);
	if (!st && !(st = sub_new(t, f)))
		return -ENOMEM;
	if (prio_reserve(st) != 0)
		return -ENOMEM; /* a new subtable stays empty, unpublished, for a later add */
	struct rf_hash *h = atomic_load_explicit(&st->h, memory_order_relaxed); /* ours */
	struct sw_flow *head = rf_hash_lookup(h, &f->match);
	bool new_head = !head || f->priority > head->priority;
	/* A new subtable or a higher max priority needs a new order, made before anything is
	 * visible so that running out of memory leaves the table as it was. */
	bool reorder = st->nflows == 0 || f->priority > maxprio(st);
	bool was_listed = st->nflows > 0; /* in every order published since it got a flow */
	struct sw_pvec *v = reorder ? vec_alloc(t) : NULL;
	if (reorder && !v)
		return -ENOMEM;
	uint32_t slot = t->free_slots[t->nfree - 1];
	f->slot = slot;
	f->gen = atomic_load_explicit(&t->slot_gen[slot], memory_order_relaxed); /* ours */
	f->st = st;
	if (new_head) {
		f->snext = head;
		int rc = head ? rf_hash_upsert(h, &f->match, f, NULL) : rf_hash_insert(h, &f->match, f);
		if (rc == -ENOSPC || rc == -EAGAIN) { /* full, or its free slots wait: a new table */
			rc = grow(st, t);
			h = atomic_load_explicit(&st->h, memory_order_relaxed);
			if (rc == 0)
				rc = rf_hash_insert(h, &f->match, f);
		}
		if (rc < 0) {
			free(v);
			return rc == -ENOSPC || rc == -EAGAIN ? -ENOSPC : -ENOMEM;
		}
	} else { /* below the head: the writer's chain only, no reader can tell */
		struct sw_flow *p = head;
		while (p->snext && p->snext->priority > f->priority)
			p = p->snext;
		f->snext = p->snext;
		p->snext = f;
	}
	t->nfree--;
	prio_add(st, f->priority);
	st->nflows++;
	t->nflows++;
	if (v)
		publish_vec(t, v);
	if (new_head) /* the caches answer every table */
		shadow_check(t, st, f, was_listed);
	return 0;
}

void sw_table_remove(struct sw_table *t, struct sw_flow *f)
{
	struct sw_subtable *st = f->st;
	/* Cached answers naming f stop being used: a poller checks its slot's generation on
	 * every hit. relaxed: a poller that still reads the old value is inside a read-side
	 * section that began before this store, so f is not freed before it ends (f is freed
	 * a grace period later); after that grace period every poller sees the new value
	 * (liburcu's full barriers at quiescent states and in synchronize_rcu). */
	atomic_store_explicit(&t->slot_gen[f->slot],
			      atomic_load_explicit(&t->slot_gen[f->slot], memory_order_relaxed) + 1,
			      memory_order_relaxed);
	struct rf_hash *h = atomic_load_explicit(&st->h, memory_order_relaxed); /* ours */
	struct sw_flow *head = rf_hash_lookup(h, &f->match);
	if (head == f) {
		/* the next of the chain takes its place (one release store), or the key goes */
		if (f->snext)
			(void)rf_hash_upsert(h, &f->match, f->snext, NULL);
		else
			(void)rf_hash_delete(h, &f->match, NULL);
	} else if (head) {
		struct sw_flow *p = head;
		while (p->snext && p->snext != f)
			p = p->snext;
		if (p->snext == f)
			p->snext = f->snext;
	}
	uint32_t before = maxprio(st);
	prio_del(st, f->priority);
	st->nflows--;
	t->nflows--;
	if (st->nflows == 0) {
		/* Out of the order (without memory it stays, empty, in the old one: a wasted
		 * probe, no harm); freed by sw_table_rerank once it stayed empty a while. */
		(void)republish(t);
	} else if (maxprio(st) != before) {
		(void)republish(t); /* a stale, higher max priority is only slower */
	}
}

void sw_table_replace(struct sw_table *t, struct sw_flow *old, struct sw_flow *f)
{
	struct sw_subtable *st = old->st;
	struct rf_hash *h = atomic_load_explicit(&st->h, memory_order_relaxed); /* ours */
	struct sw_flow *head = rf_hash_lookup(h, &old->match);
	/* f takes old's slot with the slot's next generation: entries naming old (its
	 * generation) stop counting, entries filled with f carry the new one. Set before f is
	 * visible (the upsert's release store publishes them). */
	uint32_t gen = atomic_load_explicit(&t->slot_gen[old->slot], memory_order_relaxed) + 1;
	f->slot = old->slot;
	f->gen = gen;
	f->st = st;
	f->snext = old->snext;
	if (head == old) {
		/* The key is present, so this replaces the value in place (one release store,
		 * no allocation): a reader finds old or f, never neither. */
		(void)rf_hash_upsert(h, &old->match, f, NULL);
	} else { /* below the head: the writer's chain only */
		struct sw_flow *p = head;
		while (p && p->snext != old)
			p = p->snext;
		if (p)
			p->snext = f;
	}
	/* relaxed: as in sw_table_remove; a poller still reading the old value answers old,
	 * which stays allocated until its grace period ends. */
	atomic_store_explicit(&t->slot_gen[old->slot], gen, memory_order_relaxed);
	/* Nothing else to tell the caches: f answers exactly the keys old answered, at the
	 * same priority (no shadow check), and no subtable's max priority moves (no new order). */
	retire_kind(t, old, RETIRE_REPLACED);
}
