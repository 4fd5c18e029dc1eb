/*
 * hash/hash.c: the bucketised hash of ringflow/hash.h.
 *
 * A table is an array of 64-byte buckets, each one cache line with three slots. A slot is a
 * key word and a value: keys of up to 8 bytes sit in the key word itself (a lookup of a
 * present key reads one line), longer keys in a copy the key word points at, with a 16-bit
 * tag of the hash in the bucket's meta word so most non-matching slots are skipped without
 * following the pointer. A key lives in its home bucket (hash & mask) or, when that was
 * full, in the next bucket with room (linear probing by whole lines). Each bucket counts the
 * keys whose probe passed over it (raised by insert, lowered by delete), and a lookup stops at
 * the first bucket whose count is zero: chains shrink again when their keys go.
 *
 * Readers never write and never wait. Writers take one spinlock per table (as DPDK rte_hash
 * in its lock-free reader mode does), so the writer side is simple enough to reason about:
 *   - insert writes the key word (and tag), then stores the value with release;
 *   - delete stores NULL into the value; the slot stays "dirty" (unusable) until a grace
 *     period has passed, so a reader that loaded the old value and then reads the key word
 *     can never see a later key there (the reader loads value first, key word second);
 *   - growth builds a new table, publishes it with one release store and frees the old one
 *     a grace period later: readers in the old table see a consistent frozen copy.
 * Entries never move inside a table, so there is no cuckoo-style retry for readers.
 *
 * Grace periods for dirty slots are batched: deletes collect in a FIFO tagged with a batch
 * number; a batch is handed to call_rcu when it holds 64 slots or when no batch is in
 * flight, and its callback raises `gp_done`. Writers recycle the FIFO's head up to gp_done.
 */
#include <ringflow/hash.h>
#include <ringflow/mempool.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu-qsbr.h>

#define SLOTS 3                           /* per 64-byte bucket */
#define OVF_SHIFT 51                      /* meta bits 51-62: keys whose probe passed here */
#define OVF_MAX ((uint64_t)0xfff)         /* the counter sticks there (until a rebuild) */
#define OVF_MASK (OVF_MAX << OVF_SHIFT)
#define DIRTY(s) ((uint64_t)1 << (48 + (s))) /* meta: slot s freed, grace period pending */
#define TAG_SHIFT(s) (16u * (s))          /* meta: 16-bit hash tag of slot s (long keys) */
#define BATCH_MAX 64                      /* dirty slots per grace-period batch */
#define BULK 32                           /* lookups overlapped by lookup_bulk */
#define MMAP_BYTES (64u * 1024)           /* tables this big come from mmap */
#define HUGE_2M ((size_t)2 << 20)

struct slot {
	_Atomic uint64_t kw;   /* the key (<= 8 bytes, zero-padded) or a pointer to its copy */
	_Atomic(void *) value; /* NULL: free or dirty */
};

struct bucket {
	_Atomic uint64_t meta; /* overflow count | DIRTY bits (writers only) | three 16-bit tags */
	uint64_t pad;
	struct slot s[SLOTS];
};
_Static_assert(sizeof(struct bucket) == 64, "a bucket is one cache line");

struct table {
	uint64_t mask; /* buckets - 1 */
	struct bucket *b;
	size_t bytes;   /* mapping length */
	bool mapped, huge;
	uint32_t gen;   /* which table a FIFO entry refers to */
	struct rcu_head rcu;
};

struct pend {
	uint64_t batch;
	uint64_t slot; /* bucket * SLOTS + slot */
	uint32_t gen;
	void *key;     /* long keys: the copy to free */
};

struct gp_batch {
	struct rcu_head rcu;
	struct rf_hash *h;
	uint64_t id;
};

struct rf_hash {
	/* Read-mostly: what every lookup reads. */
	RF_CACHE_ALIGNED _Atomic(struct table *) tab;
	uint64_t seed;
	uint32_t key_len;
	uint32_t max_entries;
	unsigned flags;
	bool inline_keys; /* key_len <= 8 */
	char name[RF_HASH_NAMESIZE];
	/* Writers (under lock). */
	RF_CACHE_ALIGNED _Atomic int lock;
	_Atomic uint64_t count; /* written under the lock; read relaxed by rf_hash_count */
	uint64_t dirty;         /* dirty slots in the current table */
	uint64_t nsat;          /* buckets of the current table whose overflow count stuck */
	struct pend *fifo;
	size_t f_head, f_len, f_cap;
	uint64_t open_batch, open_n, closed_upto;
	struct rf_mempool *kpool; /* long keys: their copies */
	const char *kbase;
	size_t klen;
	_Atomic uint64_t overflow; /* key copies from malloc (pool empty) */
	/* Written by call_rcu callbacks. */
	RF_CACHE_ALIGNED _Atomic uint64_t gp_done; /* batches up to this one are past a GP */
};

/* ---- hashing ---- */

static inline uint64_t fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline uint64_t hash_key(const struct rf_hash *h, const void *key)
{
	const unsigned char *p = key;
	uint64_t w;
	if (h->key_len == 8) {
		memcpy(&w, p, 8);
		return fmix64(w ^ h->seed);
	}
	size_t len = h->key_len;
	uint64_t x = h->seed ^ (len * 0x9e3779b97f4a7c15ull);
	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		x = (x ^ w) * 0x9e3779b97f4a7c15ull;
		x ^= x >> 29;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		x = (x ^ w) * 0x9e3779b97f4a7c15ull;
	}
	return fmix64(x);
}

/* The key word of an inline key: its bytes at the start of a zeroed 64-bit word. */
static inline uint64_t inline_kw(const struct rf_hash *h, const void *key)
{
	uint64_t w = 0;
	if (h->key_len == 8)
		memcpy(&w, key, 8); /* a fixed size: one load, no call to memcpy */
	else
		memcpy(&w, key, h->key_len);
	return w;
}

static inline uint64_t tag_of(uint64_t hv)
{
	return hv >> 48;
}

/* ---- the read side ---- */

/* probe for keys of <= 8 bytes: all three slots of a line are compared without branches
 * (which slot holds a key is random, so a branch per slot mispredicts about every other
 * lookup). A slot counts only with a non-NULL value: a dirty slot keeps its old key word. */
static inline void *probe_inline(struct table *t, uint64_t hv, uint64_t ukw)
{
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		/* acquire (three loads): as in probe; every key word is read after its value. */
		void *v0 = atomic_load_explicit(&bk->s[0].value, memory_order_acquire);
		void *v1 = atomic_load_explicit(&bk->s[1].value, memory_order_acquire);
		void *v2 = atomic_load_explicit(&bk->s[2].value, memory_order_acquire);
		/* relaxed: ordered after the acquires above. */
		uint64_t k0 = atomic_load_explicit(&bk->s[0].kw, memory_order_relaxed);
		uint64_t k1 = atomic_load_explicit(&bk->s[1].kw, memory_order_relaxed);
		uint64_t k2 = atomic_load_explicit(&bk->s[2].kw, memory_order_relaxed);
		/* Pick one match, the first slot first (not an OR of them): a key deleted from
		 * slot 0 and inserted again into slot 1 between our loads matches twice. */
		void *r = NULL;
		r = ((k2 == ukw) & (v2 != NULL)) ? v2 : r;
		r = ((k1 == ukw) & (v1 != NULL)) ? v1 : r;
		r = ((k0 == ukw) & (v0 != NULL)) ? v0 : r;
		if (r)
			return r;
		/* relaxed: as in probe. */
		if (!(atomic_load_explicit(&bk->meta, memory_order_relaxed) & OVF_MASK))
			return NULL;
		b = (b + 1) & t->mask;
	}
	return NULL;
}

/* The value of key in table t, or NULL. Loads only. */
static inline void *probe(struct rf_hash *h, struct table *t, uint64_t hv, const void *key,
			  uint64_t ukw)
{
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		for (unsigned s = 0; s < SLOTS; s++) {
			/* acquire: pairs with the release store of the value by insert/upsert; the
			 * key word and tag written before it are then visible. The key word cannot
			 * change under us: a slot is reused only a grace period after its delete. */
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_acquire);
			if (!v)
				continue;
			/* relaxed: ordered after the acquire above. */
			uint64_t kw = atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
			if (h->inline_keys) {
				if (kw == ukw)
					return v;
			} else if (((atomic_load_explicit(&bk->meta, memory_order_relaxed) >>
				     TAG_SHIFT(s)) & 0xffff) == tag_of(hv) &&
				   memcmp((const void *)(uintptr_t)kw, key, h->key_len) == 0) {
				return v;
			}
		}
		/* relaxed: an insert raises the overflow counts before it stores its value
		 * (release); a lookup that must see that insert sees both. */
		if (!(atomic_load_explicit(&bk->meta, memory_order_relaxed) & OVF_MASK))
			return NULL;
		b = (b + 1) & t->mask;
	}
	return NULL;
}

void *rf_hash_lookup(const struct rf_hash *ch, const void *key)
{
	struct rf_hash *h = (struct rf_hash *)ch;
	uint64_t hv = hash_key(h, key);
	/* acquire: pairs with the release store that published the table (its buckets). */
	struct table *t = atomic_load_explicit(&h->tab, memory_order_acquire);
	if (h->inline_keys)
		return probe_inline(t, hv, inline_kw(h, key));
	return probe(h, t, hv, key, 0);
}

unsigned rf_hash_lookup_bulk(const struct rf_hash *ch, const void *const *keys, unsigned n,
			     void **values)
{
	struct rf_hash *h = (struct rf_hash *)ch;
	unsigned hits = 0;
	uint64_t hv[BULK];
	for (unsigned base = 0; base < n; base += BULK) {
		unsigned m = n - base < BULK ? n - base : BULK;
		/* acquire: as in rf_hash_lookup. */
		struct table *t = atomic_load_explicit(&h->tab, memory_order_acquire);
		/* Stage 1: hash every key and start loading its home bucket, so the batch's
		 * cache misses overlap; stage 2 then finds the lines on their way in. */
		for (unsigned i = 0; i < m; i++) {
			hv[i] = hash_key(h, keys[base + i]);
			__builtin_prefetch(&t->b[hv[i] & t->mask]);
		}
		for (unsigned i = 0; i < m; i++) {
			const void *k = keys[base + i];
			void *v = h->inline_keys ? probe_inline(t, hv[i], inline_kw(h, k))
						 : probe(h, t, hv[i], k, 0);
			values[base + i] = v;
			hits += v != NULL;
		}
	}
	return hits;
}

/* ---- table memory ---- */

static struct table *table_new(struct rf_hash *h, uint64_t nb, uint32_t gen)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	size_t bytes = (size_t)nb * sizeof(struct bucket);
	t->mask = nb - 1;
	t->gen = gen;
	if (bytes >= MMAP_BYTES) {
		void *p = MAP_FAILED;
		if (bytes >= HUGE_2M && !(h->flags & RF_MEMPOOL_NO_HUGE)) {
			size_t l = (bytes + HUGE_2M - 1) & ~(HUGE_2M - 1);
			p = mmap(NULL, l, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
			if (p != MAP_FAILED) {
				t->bytes = l;
				t->huge = true;
			}
		}
		if (p == MAP_FAILED) {
			p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				free(t);
				return NULL;
			}
			t->bytes = bytes;
			/* Lookups hit buckets at random: ask for transparent hugepages (a hint). */
			madvise(p, bytes, MADV_HUGEPAGE);
		}
		t->b = p; /* zero-filled by the kernel */
		t->mapped = true;
	} else {
		void *p = NULL;
		if (posix_memalign(&p, RF_CACHE_LINE, bytes) != 0) {
			free(t);
			return NULL;
		}
		memset(p, 0, bytes);
		t->b = p;
		t->bytes = bytes;
	}
	return t;
}

static void table_destroy(struct table *t)
{
	if (t->mapped)
		munmap(t->b, t->bytes);
	else
		free(t->b);
	free(t);
}

/* call_rcu callback: a replaced table, one grace period after it was unpublished. */
static void table_reclaim(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* TSan: before the first access to the old table */
	table_destroy((struct table *)((char *)head - offsetof(struct table, rcu)));
	rf_qsbr_retire_note();   /* TSan: rf_hash_free's barrier comes after this */
}

/* ---- long keys' copies ---- */

static void *key_copy(struct rf_hash *h, const void *key)
{
	void *p;
	if (rf_mempool_get(h->kpool, &p) != 0) {
		p = malloc(h->key_len);
		if (!p)
			return NULL;
		/* relaxed: a statistic */
		atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
	}
	memcpy(p, key, h->key_len);
	return p;
}

static void key_free(struct rf_hash *h, void *p)
{
	if (!p)
		return;
	if ((const char *)p >= h->kbase && (const char *)p < h->kbase + h->klen)
		rf_mempool_put(h->kpool, p);
	else
		free(p);
}

/* ---- the writer lock ---- */

static void wlock(struct rf_hash *h)
{
	unsigned spins = 0;
	/* acquire: pairs with wunlock's release; the previous writer's table state is ours. */
	while (atomic_exchange_explicit(&h->lock, 1, memory_order_acquire)) {
		/* relaxed: only waits for a change; the exchange above takes the lock. */
		while (atomic_load_explicit(&h->lock, memory_order_relaxed)) {
			if (++spins < 256)
				rf_cpu_relax();
			else
				sched_yield(); /* the holder may be preempted on this CPU */
		}
	}
}

static void wunlock(struct rf_hash *h)
{
	/* release: pairs with wlock's acquire. */
	atomic_store_explicit(&h->lock, 0, memory_order_release);
}

/* ---- grace periods for dirty slots (all under the lock) ---- */

static void batch_done(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* TSan: readers' accesses before the grace period */
	struct gp_batch *c = (struct gp_batch *)head;
	struct rf_hash *h = c->h;
	uint64_t id = c->id;
	free(c);
	/* Batches can finish out of order (call_rcu queues are per thread); a later batch's
	 * grace period also covers every earlier one, so keep the maximum. relaxed load: the
	 * CAS decides. release: pairs with drain's acquire: what readers did before the grace
	 * period happens before the writer reuses the slots. */
	uint64_t cur = atomic_load_explicit(&h->gp_done, memory_order_relaxed);
	while (cur < id && !atomic_compare_exchange_weak_explicit(&h->gp_done, &cur, id,
								   memory_order_release,
								   memory_order_relaxed))
		;
	rf_qsbr_retire_note();
}

static void close_batch(struct rf_hash *h)
{
	struct gp_batch *c = malloc(sizeof(*c));
	if (!c)
		return; /* try again at the next write */
	c->h = h;
	c->id = h->open_batch;
	h->closed_upto = h->open_batch++;
	h->open_n = 0;
	rf_qsbr_retire_note();
	call_rcu(&c->rcu, batch_done);
}

/* Recycles the dirty slots whose grace period is over; starts a batch if none is running. */
static void drain(struct rf_hash *h, struct table *t)
{
	/* acquire: pairs with batch_done's release. */
	uint64_t done = atomic_load_explicit(&h->gp_done, memory_order_acquire);
	while (h->f_len && h->fifo[h->f_head].batch <= done) {
		struct pend *p = &h->fifo[h->f_head];
		if (p->gen == t->gen) {
			struct bucket *bk = &t->b[p->slot / SLOTS];
			uint64_t m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
			/* relaxed: readers ignore DIRTY bits. */
			atomic_store_explicit(&bk->meta, m & ~DIRTY(p->slot % SLOTS),
					      memory_order_relaxed);
			h->dirty--;
		}
		key_free(h, p->key);
		h->f_head = (h->f_head + 1) % h->f_cap;
		h->f_len--;
	}
	if (h->open_n && h->closed_upto <= done)
		close_batch(h); /* nothing in flight: start the next grace period now */
}

static int fifo_push(struct rf_hash *h, struct pend p)
{
	if (h->f_len == h->f_cap) {
		size_t cap = h->f_cap ? 2 * h->f_cap : 256;
		struct pend *f = malloc(cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		for (size_t i = 0; i < h->f_len; i++)
			f[i] = h->fifo[(h->f_head + i) % h->f_cap];
		free(h->fifo);
		h->fifo = f;
		h->f_cap = cap;
		h->f_head = 0;
	}
	h->fifo[(h->f_head + h->f_len++) % h->f_cap] = p;
	if (++h->open_n >= BATCH_MAX)
		close_batch(h);
	return 0;
}

/* ---- the write side (all under the lock) ---- */

/* Where a key is, or where it could go: the slot holding it (or -1) and the first reusable
 * slot on its probe chain (or -1), and the last bucket of the chain. */
struct spot {
	int64_t found, free_slot;
	uint64_t last;
};

static struct spot w_find(struct rf_hash *h, struct table *t, uint64_t hv, const void *key,
			  uint64_t ukw)
{
	struct spot sp = {-1, -1, 0};
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		/* relaxed, here and below: we are the only writer; nothing to synchronise. */
		uint64_t meta = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		for (unsigned s = 0; s < SLOTS; s++) {
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_relaxed);
			if (!v) {
				if (sp.free_slot < 0 && !(meta & DIRTY(s)))
					sp.free_slot = (int64_t)(b * SLOTS + s);
				continue;
			}
			uint64_t kw = atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
			if (h->inline_keys ? kw == ukw
					   : ((meta >> TAG_SHIFT(s)) & 0xffff) == tag_of(hv) &&
						     memcmp((const void *)(uintptr_t)kw, key,
							    h->key_len) == 0) {
				sp.found = (int64_t)(b * SLOTS + s);
				return sp;
			}
		}
		sp.last = b;
		if (!(meta & OVF_MASK))
			return sp;
		b = (b + 1) & t->mask;
	}
	return sp;
}

/* Adds d (+1 or -1) to the overflow count of every bucket from home up to (not including)
 * bucket `at`: the buckets a key stored in `at` was probed past. */
static void ovf_adjust(struct rf_hash *h, struct table *t, uint64_t home, uint64_t at, int d)
{
	for (uint64_t b = home; b != at; b = (b + 1) & t->mask) {
		struct bucket *bk = &t->b[b];
		uint64_t meta = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		uint64_t c = (meta & OVF_MASK) >> OVF_SHIFT;
		if (c == OVF_MAX)
			continue; /* stuck: cleared by the next rebuild */
		c = d > 0 ? c + 1 : c - 1;
		if (c == OVF_MAX)
			h->nsat++;
		/* relaxed: on insert, published by the release store of the value that follows;
		 * on delete, a stale non-zero count only makes a lookup read one line more. */
		atomic_store_explicit(&bk->meta, (meta & ~OVF_MASK) | (c << OVF_SHIFT),
				      memory_order_relaxed);
	}
}

/* Stores an entry into table t: the free slot found on its chain, or the first one past the
 * chain's end, raising the overflow count of every bucket its probe passes. The table has a
 * free slot (the caller made sure). */
static void place(struct rf_hash *h, struct table *t, uint64_t hv, uint64_t kw, void *value,
		  struct spot sp)
{
	uint64_t at;
	if (sp.free_slot >= 0) {
		at = (uint64_t)sp.free_slot;
	} else {
		uint64_t b = sp.last;
		for (;;) {
			struct bucket *bk = &t->b[b];
			uint64_t meta = atomic_load_explicit(&bk->meta, memory_order_relaxed);
			unsigned s = 0;
			for (; s < SLOTS; s++)
				if (!(meta & DIRTY(s)) &&
				    !atomic_load_explicit(&bk->s[s].value, memory_order_relaxed))
					break;
			if (s < SLOTS) {
				at = b * SLOTS + s;
				break;
			}
			b = (b + 1) & t->mask;
		}
	}
	ovf_adjust(h, t, hv & t->mask, at / SLOTS, +1);
	struct bucket *bk = &t->b[at / SLOTS];
	unsigned s = (unsigned)(at % SLOTS);
	if (!h->inline_keys) {
		uint64_t meta = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		meta = (meta & ~((uint64_t)0xffff << TAG_SHIFT(s))) | (tag_of(hv) << TAG_SHIFT(s));
		/* relaxed: published by the release store of the value below. */
		atomic_store_explicit(&bk->meta, meta, memory_order_relaxed);
	}
	atomic_store_explicit(&bk->s[s].kw, kw, memory_order_relaxed); /* as the tag above */
	/* release: pairs with probe's acquire load of the value: the key word, tag, overflow
	 * counts and whatever the value points at are visible to a reader that sees the value. */
	atomic_store_explicit(&bk->s[s].value, value, memory_order_release);
}

static inline uint64_t hash_of_slot(struct rf_hash *h, uint64_t kw)
{
	return h->inline_keys ? hash_key(h, &kw) : hash_key(h, (const void *)(uintptr_t)kw);
}

/* Live entries a table of nb buckets holds before it doubles: one per bucket while small
 * (tests and small tables stay sparse), two per bucket (2/3 of the slots) from 1024 on. */
static inline uint64_t grow_limit(uint64_t nb)
{
	return nb < 1024 ? nb : 2 * nb;
}

/* Rebuilds the live entries into a table of nb buckets (dropping dirty slots and stuck counts),
 * publishes it and retires the old one. 0 or -ENOMEM (the old table stays). */
static int rebuild(struct rf_hash *h, struct table *t, uint64_t nb)
{
	struct table *n = table_new(h, nb, t->gen + 1);
	if (!n)
		return -ENOMEM;
	h->nsat = 0;
	for (uint64_t i = 0; i <= t->mask; i++) {
		struct bucket *bk = &t->b[i];
		for (unsigned s = 0; s < SLOTS; s++) {
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_relaxed);
			if (!v)
				continue;
			uint64_t kw = atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
			uint64_t hv = hash_of_slot(h, kw);
			struct spot sp = {-1, -1, hv & n->mask};
			/* Fresh table, no deletes: the chain's end is the first bucket with room. */
			place(h, n, hv, kw, v, sp);
		}
	}
	h->dirty = 0;
	/* release: pairs with the readers' acquire of tab: the new buckets are visible. */
	atomic_store_explicit(&h->tab, n, memory_order_release);
	rf_qsbr_retire_note();
	call_rcu(&t->rcu, table_reclaim);
	return 0;
}

/* Makes room for one more entry: grows, or rebuilds at the same size when dirty slots have
 * piled up (grace periods stalled) or many overflow counts stuck at their maximum. Returns the table to use, or NULL (no memory, no room). */
static struct table *room_for_one(struct rf_hash *h, struct table *t)
{
	uint64_t nb = t->mask + 1;
	uint64_t count = atomic_load_explicit(&h->count, memory_order_relaxed); /* ours */
	int rc = 0;
	if (count + 1 > grow_limit(nb) && nb < ((uint64_t)1 << 40))
		rc = rebuild(h, t, 2 * nb);
	else if (count + h->dirty + 1 > nb * SLOTS - nb / 2 || h->nsat > nb / 16)
		rc = rebuild(h, t, nb);
	else
		return t;
	if (rc == 0)
		return atomic_load_explicit(&h->tab, memory_order_relaxed); /* ours */
	/* No memory for a new table: go on while a slot is free. */
	return count + h->dirty + 1 <= nb * SLOTS ? t : NULL;
}

/* insert (replace = false) and upsert (true). */
static int put(struct rf_hash *h, const void *key, void *value, bool replace, void **old)
{
	if (!value)
		return -EINVAL;
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	wlock(h);
	struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed); /* ours */
	drain(h, t);
	struct spot sp = w_find(h, t, hv, key, ukw);
	if (sp.found >= 0) {
		struct slot *sl = &t->b[sp.found / SLOTS].s[sp.found % SLOTS];
		int rc = -EEXIST;
		if (replace) {
			void *prev = atomic_load_explicit(&sl->value, memory_order_relaxed);
			/* release: publishes what the new value points at to probe's acquire. */
			atomic_store_explicit(&sl->value, value, memory_order_release);
			if (old)
				*old = prev;
			rc = 1;
		}
		wunlock(h);
		return rc;
	}
	uint64_t count = atomic_load_explicit(&h->count, memory_order_relaxed);
	if (count >= h->max_entries) {
		wunlock(h);
		return -ENOSPC;
	}
	struct table *t2 = room_for_one(h, t);
	if (!t2) {
		wunlock(h);
		return -ENOSPC;
	}
	if (t2 != t)
		sp = w_find(h, t2, hv, key, ukw);
	uint64_t kw = ukw;
	if (!h->inline_keys) {
		void *copy = key_copy(h, key);
		if (!copy) {
			wunlock(h);
			return -ENOSPC;
		}
		kw = (uint64_t)(uintptr_t)copy;
	}
	place(h, t2, hv, kw, value, sp);
	/* relaxed: a statistic for rf_hash_count; writers read it under the lock. */
	atomic_store_explicit(&h->count, count + 1, memory_order_relaxed);
	wunlock(h);
	return 0;
}

int rf_hash_insert(struct rf_hash *h, const void *key, void *value)
{
	return put(h, key, value, false, NULL);
}

int rf_hash_upsert(struct rf_hash *h, const void *key, void *value, void **old)
{
	return put(h, key, value, true, old);
}

int rf_hash_delete(struct rf_hash *h, const void *key, void **old)
{
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	wlock(h);
	struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed); /* ours */
	drain(h, t);
	struct spot sp = w_find(h, t, hv, key, ukw);
	if (sp.found < 0) {
		wunlock(h);
		return -ENOENT;
	}
	struct bucket *bk = &t->b[sp.found / SLOTS];
	unsigned s = (unsigned)(sp.found % SLOTS);
	void *v = atomic_load_explicit(&bk->s[s].value, memory_order_relaxed);
	/* The linearization point of delete. release: no data to publish, but a reader that
	 * sees NULL sees the slot as its writer left it. */
	atomic_store_explicit(&bk->s[s].value, NULL, memory_order_release);
	uint64_t meta = atomic_load_explicit(&bk->meta, memory_order_relaxed);
	atomic_store_explicit(&bk->meta, meta | DIRTY(s), memory_order_relaxed); /* writers only */
	/* The buckets this key's probe passed no longer need to send lookups onwards for it. */
	ovf_adjust(h, t, hv & t->mask, (uint64_t)sp.found / SLOTS, -1);
	/* Queued after the NULL store, so the batch's grace period starts after it. Without
	 * memory for the queue the slot just stays dirty until the next rebuild. */
	struct pend p = {.batch = h->open_batch, .slot = (uint64_t)sp.found, .gen = t->gen};
	if (!h->inline_keys)
		p.key = (void *)(uintptr_t)atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
	(void)fifo_push(h, p);
	h->dirty++;
	atomic_store_explicit(&h->count, atomic_load_explicit(&h->count, memory_order_relaxed) - 1,
			      memory_order_relaxed); /* a statistic, as in put */
	wunlock(h);
	if (old)
		*old = v;
	return 0;
}

/* ---- create / free / statistics ---- */

struct rf_hash *rf_hash_create(const char *name, size_t key_len, unsigned max_entries,
			       unsigned flags)
{
	if (key_len == 0 || key_len > RF_HASH_KEY_MAX || max_entries == 0 ||
	    max_entries > (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_hash *h = NULL;
	if (posix_memalign((void **)&h, RF_CACHE_LINE, sizeof(*h)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name ? name : "hash");
	h->key_len = (uint32_t)key_len;
	h->max_entries = max_entries;
	h->flags = flags;
	h->inline_keys = key_len <= 8;
	h->seed = fmix64((uint64_t)(uintptr_t)h ^ 0x2545f4914f6cdd1dull);
	h->open_batch = 1;
	if (!h->inline_keys) {
		/* Copies of present keys plus those waiting for a grace period (a quarter more). */
		unsigned n = max_entries + max_entries / 4 + 1024;
		char pname[RF_MEMPOOL_NAMESIZE];
		snprintf(pname, sizeof(pname), "hk:%.27s", h->name);
		h->kpool = rf_mempool_create(pname, n, key_len, n >= 4096 ? 64 : 0, flags);
		if (!h->kpool) {
			int e = errno;
			free(h);
			errno = e;
			return NULL;
		}
		void *base;
		size_t len, stride;
		rf_mempool_region(h->kpool, &base, &len, &stride);
		h->kbase = base;
		h->klen = len;
	}
	struct table *t = table_new(h, 1, 0);
	if (!t) {
		rf_mempool_free(h->kpool);
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	atomic_store_explicit(&h->tab, t, memory_order_relaxed); /* published by the return */
	return h;
}

void rf_hash_free(struct rf_hash *h)
{
	if (!h)
		return;
	rf_qsbr_barrier(); /* every table_reclaim and batch_done queued so far has run */
	struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed);
	if (!h->inline_keys) {
		for (uint64_t i = 0; i <= t->mask; i++)
			for (unsigned s = 0; s < SLOTS; s++)
				if (atomic_load_explicit(&t->b[i].s[s].value, memory_order_relaxed))
					key_free(h, (void *)(uintptr_t)atomic_load_explicit(
							    &t->b[i].s[s].kw, memory_order_relaxed));
		for (size_t i = 0; i < h->f_len; i++)
			key_free(h, h->fifo[(h->f_head + i) % h->f_cap].key);
	}
	table_destroy(t);
	free(h->fifo);
	rf_mempool_free(h->kpool);
	free(h);
}

size_t rf_hash_count(const struct rf_hash *h)
{
	/* relaxed: a statistic; exact once writers stopped (their joins order it). */
	return atomic_load_explicit(&((struct rf_hash *)h)->count, memory_order_relaxed);
}

size_t rf_hash_buckets(const struct rf_hash *h)
{
	/* acquire: as in rf_hash_lookup (we read the table's size). */
	struct table *t = atomic_load_explicit(&((struct rf_hash *)h)->tab, memory_order_acquire);
	return t->mask + 1;
}

bool rf_hash_on_hugepages(const struct rf_hash *h)
{
	/* acquire: as in rf_hash_buckets. */
	struct table *t = atomic_load_explicit(&((struct rf_hash *)h)->tab, memory_order_acquire);
	return t->huge;
}

uint64_t rf_hash_overflow_allocs(const struct rf_hash *h)
{
	/* relaxed: a statistic */
	return atomic_load_explicit(&((struct rf_hash *)h)->overflow, memory_order_relaxed);
}

size_t rf_hash_key_len(const struct rf_hash *h)
{
	return h->key_len;
}

/* ---- iteration: a walk over the slots of the table current at init ---- */

void rf_hash_iter_init(const struct rf_hash *h, struct rf_hash_iter *it)
{
	/* acquire: as in rf_hash_lookup. The walk stays in this table: a table replaced by
	 * growth is frozen and lives until the walker's next quiescent state. */
	it->pos = atomic_load_explicit(&((struct rf_hash *)h)->tab, memory_order_acquire);
	it->next = 0;
}

bool rf_hash_iter_next(const struct rf_hash *h, struct rf_hash_iter *it, const void **key,
		       void **value)
{
	struct table *t = (struct table *)it->pos;
	if (!t)
		return false;
	uint64_t end = (t->mask + 1) * SLOTS;
	while (it->next < end) {
		struct slot *sl = &t->b[it->next / SLOTS].s[it->next % SLOTS];
		it->next++;
		/* acquire: as in probe. */
		void *v = atomic_load_explicit(&sl->value, memory_order_acquire);
		if (!v)
			continue;
		if (key)
			*key = h->inline_keys ? (const void *)&sl->kw
					      : (const void *)(uintptr_t)atomic_load_explicit(
							&sl->kw, memory_order_relaxed);
		if (value)
			*value = v;
		return true;
	}
	it->pos = NULL;
	return false;
}
