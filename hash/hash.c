/*
 * hash/hash.c: the split-ordered lock-free hash of ringflow/hash.h.
 *
 * One lflist holds everything. A regular node's list key is rev64(hash) | 1 (odd); bucket b's
 * sentinel has key rev64(b) (even), so sentinels and entries never tie and every entry of b
 * sorts after b's sentinel and before the sentinel of any bucket that splits off b later.
 *
 * Buckets (a sentinel node plus an init state, 32 B) live in segments that are allocated
 * once and never move: segment 0 holds bucket 0, segment k >= 1 holds buckets
 * [2^(k-1), 2^k). The parent of bucket b (the bucket it split from) is b with its top bit
 * cleared, which is also b's offset in its segment.
 *
 * Lazy bucket init, lock-free: the first writer that needs bucket b claims it (CAS on its
 * state), links its sentinel starting from the parent's sentinel, and publishes READY.
 * Anyone who finds the bucket not READY simply starts from the nearest READY ancestor:
 * any earlier node of the one list is a correct starting point, only a longer walk.
 * Readers never initialise anything; they only walk up to a READY ancestor.
 *
 * Delete linearizes when the node's value is CAS'ed to NULL; only then is the node marked
 * and unlinked (lflist). A node with a NULL value is dead: any writer that meets it marks it
 * and lets the search unlink it, so at most one live node per key is ever linked. Upsert
 * CASes the value of a live node, so it can never resurrect a deleted one.
 */
#include <ringflow/hash.h>
#include <ringflow/lflist.h>
#include <ringflow/mempool.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu-qsbr.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RF_HASH_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define RF_HASH_ASAN 1
#endif
#ifdef RF_HASH_ASAN
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#define RF_HASH_QUARANTINE 1024 /* reclaimed nodes kept poisoned before reuse */
#else
#define RF_HASH_QUARANTINE 0
#endif

#define SEGS 32                           /* buckets up to 2^31 */
#define MAX_BUCKETS ((uint64_t)1 << (SEGS - 1))
#define STRIPES 16                        /* per-thread count stripes */
#define LOAD_NUM 1                        /* grow when count / buckets > LOAD_NUM / LOAD_DEN */
#define LOAD_DEN 2
#define BULK 32                           /* lookups overlapped by lookup_bulk */
#define SEG_MMAP_BYTES (64u * 1024)       /* segments this big come from mmap (zero, lazy) */

enum { B_UNINIT = 0, B_CLAIMED = 1, B_READY = 2 };

struct bucket {
	struct rf_lflist_node s; /* the sentinel */
	_Atomic uint32_t state;  /* B_* */
	uint32_t pad0;
	uint64_t pad1; /* 32 B: two buckets per line, never straddling one */
};
_Static_assert(sizeof(struct bucket) == 32, "bucket is half a cache line");

struct hnode {
	struct rf_lflist_node ln; /* next + rev64(hash) | 1 */
	_Atomic(void *) value;    /* NULL: deleted */
	struct rcu_head rcu;      /* call_rcu after unlink */
	struct rf_hash *owner;
	unsigned char key[];      /* key_len bytes: same cache line as ln for keys <= 16 B */
};

struct stripe {
	RF_CACHE_ALIGNED _Atomic int64_t n; /* inserts - deletes by the threads of this stripe */
};

struct rf_hash {
	/* Read-mostly: what every lookup reads. nbuckets and seg[] change only on growth. */
	RF_CACHE_ALIGNED _Atomic uint64_t nbuckets; /* power of two */
	uint64_t seed;
	uint32_t key_len;
	uint32_t max_entries;
	struct rf_lflist_ops ops;
	struct rf_mempool *pool;
	size_t node_size;
	const char *pool_base; /* the pool's region, to tell pool nodes from overflow nodes */
	size_t pool_len;
	_Atomic(struct bucket *) seg[SEGS];
	char name[RF_HASH_NAMESIZE];
	/* Written by writers only. */
	struct stripe count[STRIPES];
	RF_CACHE_ALIGNED _Atomic uint64_t overflow; /* nodes taken from malloc (pool empty) */
	_Atomic uint64_t init_next; /* buckets below this were initialised by the cursor */
#ifdef RF_HASH_ASAN
	RF_CACHE_ALIGNED pthread_mutex_t q_lock;
	unsigned q_head, q_len;
	void *quarantine[RF_HASH_QUARANTINE];
#endif
};

/* ---- hashing and split-order keys ---- */

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

static inline uint64_t rev64(uint64_t x)
{
	x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
	x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
	x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
	return __builtin_bswap64(x);
}

static inline bool key_eq(const struct rf_hash *h, const unsigned char *a, const void *b)
{
	if (h->key_len == 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x == y;
	}
	return memcmp(a, b, h->key_len) == 0;
}

/* Tie-break for equal list keys (only entries with the same 64-bit hash tag). */
static int node_cmp(const struct rf_lflist_node *n, const void *ukey, void *arg)
{
	const struct rf_hash *h = arg;
	if (!(n->key & 1) || ukey == NULL)
		return 0; /* sentinels are unique by construction */
	return memcmp(((const struct hnode *)n)->key, ukey, h->key_len);
}

/* ---- node memory: mempool, call_rcu, and (under ASan) a poisoned quarantine ---- */

static inline bool in_pool(const struct rf_hash *h, const void *n)
{
	return (const char *)n >= h->pool_base && (const char *)n < h->pool_base + h->pool_len;
}

static void node_put(struct rf_hash *h, struct hnode *n)
{
	if (rf_likely(in_pool(h, n)))
		rf_mempool_put(h->pool, n);
	else
		free(n);
}

/* A node from the pool; when the pool is empty (nodes waiting for their grace period: with
 * QSBR that is some milliseconds of deletes) and the table is below max_entries, one from
 * malloc instead, counted in `overflow`. NULL: the table is full. */
static struct hnode *node_get(struct rf_hash *h)
{
	void *p;
	if (rf_likely(rf_mempool_get(h->pool, &p) == 0))
		return p;
	if (rf_hash_count(h) >= h->max_entries)
		return NULL;
	if (posix_memalign(&p, RF_CACHE_LINE, h->node_size) != 0)
		return NULL;
	/* relaxed: a statistic */
	atomic_fetch_add_explicit(&h->overflow, 1, memory_order_relaxed);
	return p;
}

/* Runs one grace period after the unlink, in liburcu's call_rcu thread. */
static void node_reclaim(struct rcu_head *head)
{
	struct hnode *n = (struct hnode *)((char *)head - offsetof(struct hnode, rcu));
	rf_qsbr_reclaim_begin(); /* TSan: before the first read of the node (n->owner) */
	struct rf_hash *h = n->owner;
#ifdef RF_HASH_ASAN
	/* Keep the node poisoned for a while: a reader that (wrongly) still held it would
	 * trip ASan instead of silently reading a recycled node. */
	pthread_mutex_lock(&h->q_lock);
	void *victim = NULL;
	if (h->q_len == RF_HASH_QUARANTINE) {
		victim = h->quarantine[h->q_head];
		h->quarantine[h->q_head] = n;
		h->q_head = (h->q_head + 1) % RF_HASH_QUARANTINE;
	} else {
		h->quarantine[(h->q_head + h->q_len++) % RF_HASH_QUARANTINE] = n;
	}
	ASAN_POISON_MEMORY_REGION(n, h->node_size);
	pthread_mutex_unlock(&h->q_lock);
	if (victim) {
		ASAN_UNPOISON_MEMORY_REGION(victim, h->node_size);
		node_put(h, victim);
	}
#else
	node_put(h, n);
#endif
	/* TSan: a release point pairing with rf_qsbr_barrier()'s acquire, so rf_hash_free, which
	 * waits for this callback, is seen to come after its node_put (TSan cannot see inside
	 * liburcu's rcu_barrier). No-op without TSan. */
	rf_qsbr_retire_note();
}

/* lflist retire callback: a node was just unlinked by this thread. */
static void node_retire(struct rf_lflist_node *ln, void *arg)
{
	(void)arg;
	if (!(ln->key & 1))
		return; /* sentinels are never marked, so never unlinked; defensive */
	struct hnode *n = (struct hnode *)ln;
	rf_qsbr_retire_note();
	call_rcu(&n->rcu, node_reclaim);
}

/* ---- buckets ---- */

static inline unsigned seg_of(uint64_t b)
{
	return b ? 64u - (unsigned)__builtin_clzll(b) : 0u;
}

static inline uint64_t parent_of(uint64_t b)
{
	return b & ~((uint64_t)1 << (63 - __builtin_clzll(b))); /* b > 0 */
}

static inline struct bucket *bucket_at(const struct rf_hash *h, uint64_t b)
{
	unsigned k = seg_of(b);
	/* acquire: pairs with the release CAS that installed the (zeroed) segment. */
	struct bucket *s = atomic_load_explicit(&h->seg[k], memory_order_acquire);
	return &s[k ? parent_of(b) : 0];
}

static size_t seg_bytes(unsigned k)
{
	return (k ? (size_t)1 << (k - 1) : 1) * sizeof(struct bucket);
}

static struct bucket *seg_alloc(unsigned k)
{
	size_t bytes = seg_bytes(k);
	if (bytes >= SEG_MMAP_BYTES) {
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		/* Lookups hit buckets at random: ask for transparent hugepages (a hint; fewer
		 * TLB misses, as the pool's hugepages do for the nodes). */
		madvise(p, bytes, MADV_HUGEPAGE);
		return p; /* zero-filled by the kernel, lazily */
	}
	void *p = NULL;
	if (posix_memalign(&p, RF_CACHE_LINE, bytes < RF_CACHE_LINE ? RF_CACHE_LINE : bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static void seg_release(unsigned k, struct bucket *s)
{
	if (seg_bytes(k) >= SEG_MMAP_BYTES)
		munmap(s, seg_bytes(k));
	else
		free(s);
}

static bool seg_ensure(struct rf_hash *h, unsigned k)
{
	/* acquire: see bucket_at. */
	if (atomic_load_explicit(&h->seg[k], memory_order_acquire))
		return true;
	struct bucket *s = seg_alloc(k);
	if (!s)
		return false;
	struct bucket *expect = NULL;
	/* release: publishes the zeroed buckets to bucket_at's acquire. */
	if (!atomic_compare_exchange_strong_explicit(&h->seg[k], &expect, s, memory_order_release,
						     memory_order_acquire))
		seg_release(k, s); /* another writer installed it first */
	return true;
}

/* Reader's starting node for bucket b: its sentinel if READY, else the nearest READY
 * ancestor's. Never writes. */
static inline const struct rf_lflist_node *start_ro(const struct rf_hash *h, uint64_t b)
{
	for (;;) {
		struct bucket *bk = bucket_at(h, b);
		/* acquire: pairs with the release store of READY after the sentinel was linked,
		 * so the sentinel's key and next are those of a linked node. */
		if (b == 0 || atomic_load_explicit(&bk->state, memory_order_acquire) == B_READY)
			return &bk->s;
		b = parent_of(b);
	}
}

/* Writer's starting node for bucket b, initialising the bucket (and its ancestors) on the way. */
static struct rf_lflist_node *start_rw(struct rf_hash *h, uint64_t b)
{
	struct bucket *bk = bucket_at(h, b);
	/* acquire: as in start_ro. */
	uint32_t st = atomic_load_explicit(&bk->state, memory_order_acquire);
	if (b == 0 || st == B_READY)
		return &bk->s;
	struct rf_lflist_node *parent = start_rw(h, parent_of(b));
	uint32_t expect = B_UNINIT;
	/* relaxed: the claim only makes us the one linker; publication is the link CAS
	 * (release) and the READY store (release). */
	if (st != B_UNINIT ||
	    !atomic_compare_exchange_strong_explicit(&bk->state, &expect, B_CLAIMED,
						     memory_order_relaxed, memory_order_relaxed))
		return parent; /* being linked by someone else: the parent is a valid start */
	uint64_t sk = rev64(b);
	bk->s.key = sk;
	struct rf_lflist_pos pos;
	for (;;) {
		/* Nobody else links this sentinel, so the search cannot find it. */
		rf_lflist_find_from(parent, sk, NULL, &h->ops, &pos);
		if (rf_lflist_link(&pos, &bk->s))
			break;
	}
	/* release: pairs with the acquire loads of state in start_ro/start_rw. */
	atomic_store_explicit(&bk->state, B_READY, memory_order_release);
	return &bk->s;
}

/* ---- counting and growth ---- */

static _Atomic unsigned stripe_next;
static _Thread_local unsigned stripe_plus1;

static inline struct stripe *my_stripe(struct rf_hash *h)
{
	if (rf_unlikely(stripe_plus1 == 0))
		/* relaxed: only hands out distinct-ish numbers */
		stripe_plus1 = atomic_fetch_add_explicit(&stripe_next, 1, memory_order_relaxed) %
				       STRIPES + 1;
	return &h->count[stripe_plus1 - 1];
}

size_t rf_hash_count(const struct rf_hash *h)
{
	int64_t total = 0;
	for (unsigned i = 0; i < STRIPES; i++)
		/* relaxed: a statistic; exact once writers stopped (their joins order it). */
		total += atomic_load_explicit(&h->count[i].n, memory_order_relaxed);
	return total < 0 ? 0 : (size_t)total;
}

static void maybe_grow(struct rf_hash *h, int64_t stripe_val)
{
	/* relaxed: a stale size only delays or repeats the check; the CAS below decides. */
	uint64_t n = atomic_load_explicit(&h->nbuckets, memory_order_relaxed);
	if (n >= MAX_BUCKETS || (n >= 1024 && (stripe_val & 127) != 0))
		return; /* big tables: look at the sum only every 128 inserts of a stripe */
	uint64_t total = rf_hash_count(h);
	while (total * LOAD_DEN > n * LOAD_NUM && n < MAX_BUCKETS) {
		if (!seg_ensure(h, seg_of(n))) /* the segment of buckets [n, 2n) */
			return; /* no memory: stay at this size; the table still works */
		uint64_t expect = n;
		/* release: the new buckets' segment (installed above) is visible to whoever
		 * acquires the new size. */
		if (atomic_compare_exchange_strong_explicit(&h->nbuckets, &expect, 2 * n,
							    memory_order_release, memory_order_relaxed))
			n *= 2;
		else
			n = expect;
	}
}

/*
 * Readers never initialise buckets, so a bucket no writer touched since the last doubling
 * would make its readers start at the parent and walk twice the chain. So every insert also
 * initialises the next INIT_STEP buckets in index order (a cursor CAS'ed forward): the n new
 * buckets of a doubling at count n are all READY after n / INIT_STEP more inserts, long
 * before the next doubling (n more inserts).
 */
#define INIT_STEP 2

static void init_some(struct rf_hash *h)
{
	/* acquire: as in locate_rw (the segments of buckets below n are installed). */
	uint64_t n = atomic_load_explicit(&h->nbuckets, memory_order_acquire);
	/* relaxed, load and CAS: the cursor only spreads work and publishes nothing;
	 * start_rw is correct for any bucket whoever initialises it. */
	uint64_t c = atomic_load_explicit(&h->init_next, memory_order_relaxed);
	if (rf_likely(c >= n))
		return;
	uint64_t to = c + INIT_STEP < n ? c + INIT_STEP : n;
	if (!atomic_compare_exchange_strong_explicit(&h->init_next, &c, to, memory_order_relaxed,
						     memory_order_relaxed))
		return; /* another writer took this stretch */
	for (uint64_t b = c; b < to; b++)
		start_rw(h, b);
}

/* ---- create / free ---- */

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
	h->seed = fmix64((uint64_t)(uintptr_t)h ^ 0x2545f4914f6cdd1dull);
	h->ops = (struct rf_lflist_ops){node_cmp, node_retire, h};
	h->node_size = offsetof(struct hnode, key) + key_len;
	/* Slack for nodes waiting for their grace period, in thread caches, in quarantine. */
	unsigned slack = max_entries / 4 + 4096 + RF_HASH_QUARANTINE;
	unsigned cache = max_entries >= 4096 ? 64 : 0;
	char pname[RF_MEMPOOL_NAMESIZE];
	snprintf(pname, sizeof(pname), "h:%.28s", h->name);
	h->pool = rf_mempool_create(pname, max_entries + slack, h->node_size, cache, flags);
	if (!h->pool) {
		int e = errno;
		free(h);
		errno = e;
		return NULL;
	}
	void *base;
	size_t len, stride;
	rf_mempool_region(h->pool, &base, &len, &stride);
	h->pool_base = base;
	h->pool_len = len;
	if (!rf_mempool_on_hugepages(h->pool) && len >= ((size_t)2 << 20)) {
		/* No hugetlb pages: ask for transparent ones. The pool is already populated, so
		 * also collapse it now (Linux >= 6.1; a hint: failure just leaves 4 KiB pages). */
		madvise(base, len, MADV_HUGEPAGE);
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
		madvise(base, len, MADV_COLLAPSE);
	}
	if (!seg_ensure(h, 0)) {
		rf_mempool_free(h->pool);
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	struct bucket *b0 = atomic_load_explicit(&h->seg[0], memory_order_relaxed);
	b0->s.key = 0;
	atomic_store_explicit(&b0->state, B_READY, memory_order_relaxed); /* published by return */
	atomic_store_explicit(&h->nbuckets, 1, memory_order_relaxed);
	atomic_store_explicit(&h->init_next, 1, memory_order_relaxed);
#ifdef RF_HASH_ASAN
	pthread_mutex_init(&h->q_lock, NULL);
#endif
	return h;
}

void rf_hash_free(struct rf_hash *h)
{
	if (!h)
		return;
	rf_qsbr_barrier(); /* every node_reclaim queued so far has run */
#ifdef RF_HASH_ASAN
	for (unsigned i = 0; i < h->q_len; i++) {
		void *n = h->quarantine[(h->q_head + i) % RF_HASH_QUARANTINE];
		ASAN_UNPOISON_MEMORY_REGION(n, h->node_size);
		node_put(h, n);
	}
	pthread_mutex_destroy(&h->q_lock);
#endif
	struct bucket *b0 = atomic_load_explicit(&h->seg[0], memory_order_relaxed);
	struct rf_lflist_node *n = rf_lflist_ptr(atomic_load_explicit(&b0->s.next, memory_order_relaxed));
	while (n) {
		struct rf_lflist_node *next = rf_lflist_ptr(atomic_load_explicit(&n->next, memory_order_relaxed));
		if (n->key & 1)
			node_put(h, (struct hnode *)n);
		n = next;
	}
	for (unsigned k = 0; k < SEGS; k++) {
		struct bucket *s = atomic_load_explicit(&h->seg[k], memory_order_relaxed);
		if (s)
			seg_release(k, s);
	}
	rf_mempool_free(h->pool);
	free(h);
}

/* ---- operations ---- */

struct where {
	uint64_t sk;                 /* list key */
	struct rf_lflist_node *start;
};

static inline struct where locate_rw(struct rf_hash *h, const void *key)
{
	uint64_t hv = hash_key(h, key);
	/* acquire: pairs with maybe_grow's release CAS, so the segment of any bucket below the
	 * size we read is installed. */
	uint64_t n = atomic_load_explicit(&h->nbuckets, memory_order_acquire);
	return (struct where){rev64(hv) | 1, start_rw(h, hv & (n - 1))};
}

/* Marks a dead node (value NULL) so the next search unlinks it. */
static inline void help_dead(struct hnode *n)
{
	rf_lflist_mark(&n->ln);
}

/* Links a new node where the search left pos and counts it; -EAGAIN: search again. */
static int link_new(struct rf_hash *h, struct hnode *n, struct rf_lflist_pos *pos)
{
	if (!rf_lflist_link(pos, &n->ln))
		return -EAGAIN;
	struct stripe *s = my_stripe(h);
	/* relaxed: a statistic; growth decisions tolerate staleness. */
	int64_t v = atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed) + 1;
	maybe_grow(h, v);
	init_some(h);
	return 0;
}

static struct hnode *new_node(struct rf_hash *h, uint64_t sk, const void *key, void *value)
{
	struct hnode *n = node_get(h);
	if (!n)
		return NULL;
	n->ln.key = sk;
	/* relaxed: the node is private until the link CAS (release) publishes it. */
	atomic_store_explicit(&n->value, value, memory_order_relaxed);
	n->owner = h;
	memcpy(n->key, key, h->key_len);
	return n;
}

int rf_hash_insert(struct rf_hash *h, const void *key, void *value)
{
	if (!value)
		return -EINVAL;
	struct where w = locate_rw(h, key);
	struct hnode *n = new_node(h, w.sk, key, value);
	if (!n)
		return -ENOSPC;
	struct rf_lflist_pos pos;
	for (;;) {
		if (rf_lflist_find_from(w.start, w.sk, key, &h->ops, &pos)) {
			struct hnode *cur = (struct hnode *)pos.cur;
			/* relaxed: only NULL-ness matters, and the CAS that set NULL is ordered
			 * before the mark we then do (coherence on one word suffices). */
			if (atomic_load_explicit(&cur->value, memory_order_relaxed) != NULL) {
				node_put(h, n); /* never published */
				return -EEXIST;
			}
			help_dead(cur);
			continue;
		}
		if (link_new(h, n, &pos) == 0)
			return 0;
	}
}

int rf_hash_upsert(struct rf_hash *h, const void *key, void *value, void **old)
{
	if (!value)
		return -EINVAL;
	struct where w = locate_rw(h, key);
	struct hnode *n = NULL;
	struct rf_lflist_pos pos;
	for (;;) {
		if (rf_lflist_find_from(w.start, w.sk, key, &h->ops, &pos)) {
			struct hnode *cur = (struct hnode *)pos.cur;
			/* acquire: we hand the old value to the caller, who may read through it. */
			void *v = atomic_load_explicit(&cur->value, memory_order_acquire);
			while (v != NULL) {
				/* acq_rel: release publishes what the new value points at to
				 * lookups (acquire); acquire as above for the old one. */
				if (atomic_compare_exchange_weak_explicit(&cur->value, &v, value,
									  memory_order_acq_rel,
									  memory_order_acquire)) {
					if (n)
						node_put(h, n); /* never published */
					if (old)
						*old = v;
					return 1;
				}
			}
			help_dead(cur); /* deleted under us: insert instead */
			continue;
		}
		if (!n && !(n = new_node(h, w.sk, key, value)))
			return -ENOSPC;
		if (link_new(h, n, &pos) == 0)
			return 0;
	}
}

int rf_hash_delete(struct rf_hash *h, const void *key, void **old)
{
	struct where w = locate_rw(h, key);
	struct rf_lflist_pos pos;
	for (;;) {
		if (!rf_lflist_find_from(w.start, w.sk, key, &h->ops, &pos))
			return -ENOENT;
		struct hnode *cur = (struct hnode *)pos.cur;
		/* acquire: the value goes back to the caller. */
		void *v = atomic_load_explicit(&cur->value, memory_order_acquire);
		while (v != NULL) {
			/* The linearization point of delete. acquire: as above; release: nothing
			 * new to publish, but keeps the mark (next) ordered after it for helpers. */
			if (atomic_compare_exchange_weak_explicit(&cur->value, &v, NULL,
								  memory_order_acq_rel,
								  memory_order_acquire)) {
				rf_lflist_mark(&cur->ln);
				/* Unlink (and retire) it: the search does it for every marked node. */
				rf_lflist_find_from(w.start, w.sk, key, &h->ops, &pos);
				struct stripe *s = my_stripe(h);
				atomic_fetch_sub_explicit(&s->n, 1, memory_order_relaxed); /* statistic */
				if (old)
					*old = v;
				return 0;
			}
		}
		help_dead(cur); /* someone else's delete: help it, then look again */
	}
}

/* Walks one bucket's chain from cur for (sk, key). Read-only. */
static inline void *chain_lookup(const struct rf_hash *h, const struct rf_lflist_node *cur,
				 uint64_t sk, const void *key)
{
	while (cur) {
		/* acquire: pairs with the link CAS (release) that published the successor. */
		uintptr_t succ = atomic_load_explicit(&cur->next, memory_order_acquire);
		if (cur->key >= sk) {
			if (cur->key > sk)
				return NULL; /* the hash tag says: not in this list */
			const struct hnode *n = (const struct hnode *)cur;
			if (key_eq(h, n->key, key))
				/* acquire: pairs with the release of insert's link or upsert's CAS,
				 * so what the value points at is visible. NULL: deleted. */
				return atomic_load_explicit(&((struct hnode *)n)->value, memory_order_acquire);
		}
		cur = rf_lflist_ptr(succ);
	}
	return NULL;
}

void *rf_hash_lookup(const struct rf_hash *h, const void *key)
{
	uint64_t hv = hash_key(h, key);
	/* acquire: as in locate_rw. */
	uint64_t n = atomic_load_explicit(&((struct rf_hash *)h)->nbuckets, memory_order_acquire);
	const struct rf_lflist_node *start = start_ro(h, hv & (n - 1));
	/* acquire: the first node of the chain, published by its link CAS. */
	const struct rf_lflist_node *first =
		rf_lflist_ptr(atomic_load_explicit(&start->next, memory_order_acquire));
	return chain_lookup(h, first, rev64(hv) | 1, key);
}

unsigned rf_hash_lookup_bulk(const struct rf_hash *h, const void *const *keys, unsigned n,
			     void **values)
{
	unsigned hits = 0;
	uint64_t sk[BULK], bkt[BULK];
	const struct rf_lflist_node *cur[BULK];
	for (unsigned base = 0; base < n; base += BULK) {
		unsigned m = n - base < BULK ? n - base : BULK;
		/* acquire: as in locate_rw. */
		uint64_t nb = atomic_load_explicit(&((struct rf_hash *)h)->nbuckets, memory_order_acquire);
		/* Stage 1: hash every key and start loading its bucket line. */
		for (unsigned i = 0; i < m; i++) {
			uint64_t hv = hash_key(h, keys[base + i]);
			sk[i] = rev64(hv) | 1;
			bkt[i] = hv & (nb - 1);
			__builtin_prefetch(bucket_at(h, bkt[i]));
		}
		/* Stage 2: read each sentinel's next and start loading the first node. */
		for (unsigned i = 0; i < m; i++) {
			const struct rf_lflist_node *s = start_ro(h, bkt[i]);
			/* acquire: as in rf_hash_lookup. */
			cur[i] = rf_lflist_ptr(atomic_load_explicit(&s->next, memory_order_acquire));
			if (cur[i])
				__builtin_prefetch(cur[i]);
		}
		/* Stage 3: walk all chains one node per round, so the batch's second-node
		 * misses overlap as well (the first nodes are on their way in already). */
		uint32_t todo = m == 32 ? UINT32_MAX : (1u << m) - 1;
		while (todo) {
			for (uint32_t t = todo; t; t &= t - 1) {
				unsigned i = (unsigned)__builtin_ctz(t);
				const struct rf_lflist_node *c = cur[i];
				void *v = NULL;
				bool done = true;
				if (c) {
					/* acquire: pairs with the link CAS of the successor. */
					uintptr_t succ = atomic_load_explicit(&c->next, memory_order_acquire);
					if (c->key < sk[i] ||
					    (c->key == sk[i] &&
					     !key_eq(h, ((const struct hnode *)c)->key, keys[base + i]))) {
						cur[i] = rf_lflist_ptr(succ);
						if (cur[i])
							__builtin_prefetch(cur[i]);
						done = false;
					} else if (c->key == sk[i]) {
						/* acquire: as in chain_lookup. */
						v = atomic_load_explicit(&((struct hnode *)c)->value,
									 memory_order_acquire);
					}
				}
				if (done) {
					values[base + i] = v;
					hits += v != NULL;
					todo &= ~(1u << i);
				}
			}
		}
	}
	return hits;
}

size_t rf_hash_buckets(const struct rf_hash *h)
{
	/* relaxed: a snapshot for statistics and tests. */
	return atomic_load_explicit(&((struct rf_hash *)h)->nbuckets, memory_order_relaxed);
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

void rf_hash_iter_init(const struct rf_hash *h, struct rf_hash_iter *it)
{
	it->pos = &atomic_load_explicit(&((struct rf_hash *)h)->seg[0], memory_order_acquire)->s;
}

bool rf_hash_iter_next(const struct rf_hash *h, struct rf_hash_iter *it, const void **key,
		       void **value)
{
	(void)h;
	const struct rf_lflist_node *p = it->pos;
	if (!p)
		return false;
	for (;;) {
		/* acquire: pairs with the link CAS that published the successor. */
		p = rf_lflist_ptr(atomic_load_explicit(&p->next, memory_order_acquire));
		if (!p) {
			it->pos = NULL;
			return false;
		}
		if (!(p->key & 1))
			continue; /* a bucket sentinel */
		struct hnode *n = (struct hnode *)p;
		/* acquire: as in chain_lookup. */
		void *v = atomic_load_explicit(&n->value, memory_order_acquire);
		if (v == NULL)
			continue; /* deleted */
		it->pos = p;
		if (key)
			*key = n->key;
		if (value)
			*value = v;
		return true;
	}
}
