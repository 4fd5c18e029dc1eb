/*
 * hash/hash.c: the bucketised hash of ringflow/hash.h, with lock-free readers AND writers.
 *
 * A table is an array of 64-byte buckets, each one cache line with three slots. A slot is a
 * key word and a value: keys of up to 8 bytes sit in the key word itself (a lookup of a
 * present key reads one line), longer keys in a copy the key word points at, with a 16-bit
 * tag of the hash in the bucket's meta word so most non-matching slots are skipped without
 * following the pointer. A key lives in its home bucket (hash & mask) or, when that was
 * full, in a later bucket (linear probing by whole lines). Each bucket counts the keys whose
 * probe passed over it, and a lookup stops at the first bucket whose count is zero.
 *
 * Readers never write and never wait: a slot holds a key for them when its value word is a
 * user value (not NULL and not one of the sentinels PENDING, KILLED and DEAD(e): addresses
 * in one private array, so the test is two compares).
 *
 * Writers use CAS only (no lock). Per slot, the value word is the state readers see; the meta
 * word's USED bit says the slot was ever claimed in this table and its PSLOT bits name the
 * bucket's one pending insert:
 *   free      USED clear (value NULL), or dead past its grace period: an inserter claims it
 *             with one CAS on meta (USED+tag+PSLOT for a never-used slot; PSLOT, then a
 *             check of the value, for a dead one: only the PSLOT holder claims in a bucket).
 *   pending   value PENDING: claimed, key word written, value parked in the bucket's pv word
 *             (writers only; one pending insert per bucket at a time, its slot in meta's
 *             PSLOT bits). Invisible to readers; visible to other writers of the key.
 *   live      value = the user's: CAS PENDING -> value committed it (the linearization
 *             point of insert/upsert-insert); CAS value -> value' replaces (upsert);
 *             CAS value -> NULL deletes (the linearization point of delete).
 *   dead      value DEAD(e) (passing through NULL or KILLED): deleted, or a pending insert
 *             that lost, stamped with the reclamation epoch e read after it died. It becomes
 *             free when epoch e's grace period is over ("dead slots" below), so a reader or
 *             writer still looking at the slot never sees another key appear in it while it
 *             holds the old one (QSBR: none of our threads passes a quiescent state inside
 *             a call). Nothing revisits it: the next insert that probes its bucket reuses it.
 *
 * Two inserts of the same key: each claims its own slot, raises the overflow counts on its
 * chain, stores PENDING (seq_cst), then runs resolve(): scan the key's chain; if a live copy
 * is there, kill every pending copy (CAS PENDING -> KILLED); else kill every pending copy
 * but the first in chain order and commit that one (CAS PENDING -> its bucket's pv); if that
 * CAS failed, scan again. Any writer may commit another's pending slot (that is the helping
 * that makes it lock-free: a preempted inserter stalls nobody). Why never two live copies: a
 * slot goes live only by a commit CAS made after the committer killed every other pending
 * copy it saw and saw no live one; a copy it did not see became pending after its scan
 * (all these stores and loads are seq_cst, the Dekker argument), so that copy's own resolve
 * sees the first one and either kills it (then the commit CAS fails) or finds it live and
 * dies. Each slot's
 * value word decides between its commit and its kill. An inserter whose slot was KILLED
 * returns -EEXIST (a live copy existed during its call); upsert then replaces it instead.
 * Every loop retries only after another writer's CAS succeeded: lock-free.
 *
 * Overflow counts are raised by CAS before a slot becomes pending (so every later scan of
 * the chain reaches it) and lowered after it dies; a count stuck at its maximum stays until
 * the next rebuild. Long keys' copies of dead slots go into their thread stripe's open batch
 * (entry numbers taken with fetch_add); a full batch (or any, when none is waiting) is handed
 * to call_rcu, whose callback pushes it on a ready stack (CAS); the next writer takes that
 * stack whole (one exchange) and frees the copies. Nothing there waits.
 *
 * Growth (and rebuilds at the same size that drop dead slots and stuck counts) is the one
 * coordinated step, done by all writers together: a writer that finds the table over its
 * load limit (or with no free slot near the key) allocates the next table, links it as
 * t->next and sets FROZEN in every stripe of t->ctl[] (so does every writer it sends to
 * help, before it waits: none may find a stripe open that another will still freeze). Each
 * writer call counts itself in t->ctl[] while it works in t, and no new call enters a frozen
 * table. Once the calls already inside have left, the writers that arrive copy t into the
 * new table in chunks claimed with fetch_add (entries never move inside a table, so the copy
 * is of a quiescent t), and the first to see every chunk copied publishes it (CAS on h->tab)
 * and retires t through call_rcu. Readers are never stopped: they read the frozen t until the
 * new table is published, then the new one. An insert that still finds no free slot after 8
 * growths or rebuilds fails: -ENOSPC when memory ran out, else -EAGAIN, since then the slots
 * near its key are dead ones still in their grace period (a stalled grace period, or a few
 * keys deleted and inserted again faster than grace periods end: their dead slots pile up
 * around their home buckets, whatever the table's size); a retry after a quiescent state
 * may succeed.
 *
 * Single-writer mode (RF_HASH_SINGLE_WRITER, the app promises writer calls never overlap):
 * the same table, slots and grace periods, without the protocol that lets writers race. An
 * insert claims a free slot with a plain store of meta, raises the overflow counts with
 * stores, writes the key word and publishes the value with one release store (no pending
 * state, no resolve); a delete stores DEAD(epoch) (release); counts are one plain counter;
 * growth is the same code, with no other writer to wait for. Readers cannot tell the modes
 * apart.
 *
 * Stripes: threads are dealt over STRIPES cache lines, each holding the stripe's t->ctl[]
 * counter, open key-copy batch, and one account word (its entry count and its room against
 * max_entries, taken from the shared h->reserved QUOTA at a time: one atomic instruction per
 * insert or delete), so a common insert or delete writes no line shared with the writers on
 * another CPU but the buckets themselves (and, once per ADV_EVERY deaths, the epoch's line).
 * What can block, and only during a growth: (1) the copy waits for writer calls that were
 * already inside t to leave it (each is a bounded number of steps; one preempted there
 * delays the growth until it runs again); (2) a writer that finds every chunk claimed waits
 * for the claimers to finish theirs. Outside growth, no writer ever waits for another.
 */
#include <ringflow/hash.h>
#include <ringflow/log.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu-qsbr.h>

/* Tests only: tests/hash/test_hash_grow_race compiles its own copy of this file with
 * RF_HASH_FREEZE_PAUSE defined (a yield), to widen the window between the stripes a growth
 * freezes, where a helper once started copying while a stripe was still open. */
#ifdef RF_HASH_FREEZE_PAUSE
#define FREEZE_PAUSE() RF_HASH_FREEZE_PAUSE()
#else
#define FREEZE_PAUSE() ((void)0)
#endif

/* Debug builds (RF_DEBUG_CHECKS): every lookup and write checks that its thread is a
 * registered, online QSBR reader (qsbr.h rule 1), so a forgotten rf_qsbr_register aborts
 * with one line naming the call instead of reading freed memory later. */
#ifdef RF_DEBUG_CHECKS
#define READER_CHECK(call) rf_qsbr_assert_reader(call)
#else
#define READER_CHECK(call) ((void)0)
#endif

#define SLOTS 3                           /* per 64-byte bucket */
#define OVF_SHIFT 51                      /* meta bits 51-60: keys whose probe passed here */
#define OVF_MAX ((uint64_t)0x3ff)         /* the counter sticks there (until a rebuild) */
#define PSLOT_SHIFT 61                    /* meta bits 61-62: 1 + the slot whose insert is */
#define PSLOT_MASK ((uint64_t)3 << PSLOT_SHIFT) /* pending with its value in pv (0: none) */
#define OVF_MASK (OVF_MAX << OVF_SHIFT)
#define USED(s) ((uint64_t)1 << (48 + (s))) /* meta: slot s claimed (pending, live or dead) */
#define TAG_SHIFT(s) (16u * (s))          /* meta: 16-bit hash tag of slot s (long keys) */
#define TAG_MASK(s) ((uint64_t)0xffff << TAG_SHIFT(s))
#define BATCH_MAX 64                      /* dead slots per grace-period batch */
#define BULK 32                           /* lookups overlapped by lookup_bulk */
#define MMAP_BYTES (64u * 1024)           /* tables this big come from mmap */
#define HUGE_2M ((size_t)2 << 20)
#define CLAIM_PROBE 64                    /* buckets an insert searches for a free slot */
#define CHUNK 512                         /* buckets per growth copy chunk */
#define FROZEN ((uint64_t)1 << 63)        /* t->ctl: growing, no new writer enters */
#define ACTIVE_MASK ((uint64_t)0xffffffff)/* t->ctl: writer calls inside the table */
#define MAX_PEND 64                       /* pending copies of one key resolve() tracks */
#define STRIPES 16                        /* writer-side counters and dead lists, per thread */
#define QUOTA 64                          /* max_entries room a stripe takes at a time */
#define ADV_MAX 2048u                     /* epoch advances waiting at once, at most */
#define ADV_EVERY 64                      /* a stripe's deaths per epoch advance */

/* The non-user values a slot can hold: PENDING, KILLED and DEAD(e), a dead slot stamped with
 * the reclamation epoch e it died in (mod EPOCHS; see "dead slots" below). Their addresses are
 * private to this file, so no caller can pass one as a value (insert rejects them anyway). */
#define EPOCHS 4096u /* a power of two, > ADV_MAX + 2 (only addresses: no memory used) */
static char sentinel[2 + EPOCHS];
#define PENDING ((void *)&sentinel[0])
#define KILLED ((void *)&sentinel[1])
#define DEAD(e) ((void *)&sentinel[2 + ((e) & (EPOCHS - 1))])

/* A user value: what a reader may return. Two compares, no branch. */
static inline bool live(const void *v)
{
	return (v != NULL) & ((uintptr_t)v - (uintptr_t)sentinel >= sizeof(sentinel));
}

/* Whether v is DEAD(e) for some e. */
static inline bool dead(const void *v)
{
	return (uintptr_t)v - (uintptr_t)&sentinel[2] < EPOCHS;
}

/* v when take, else r, by masking: compilers turn a ?: with the two-compare live() into a
 * branch per slot, which mispredicts (which slot holds a key is random). */
static inline uintptr_t pick(uintptr_t r, const void *v, bool take)
{
	return r ^ ((r ^ (uintptr_t)v) & (0 - (uintptr_t)take));
}

/* The calling thread's stripe: threads are dealt round-robin over STRIPES. */
static _Atomic unsigned stripe_next;
static _Thread_local unsigned stripe_mine = ~0u;

static inline unsigned my_stripe(void)
{
	if (stripe_mine == ~0u) /* relaxed: only spreads threads out */
		stripe_mine = atomic_fetch_add_explicit(&stripe_next, 1, memory_order_relaxed) %
			      STRIPES;
	return stripe_mine;
}

struct slot {
	_Atomic uint64_t kw;   /* the key (<= 8 bytes, zero-padded) or a pointer to its copy */
	_Atomic(void *) value; /* NULL, PENDING, KILLED, DEAD(e) or the user's value */
};

struct bucket {
	_Atomic uint64_t meta; /* PSLOT | overflow count | USED bits | three 16-bit tags */
	_Atomic(void *) pv;    /* writers only: the value the pending insert (PSLOT) will commit */
	struct slot s[SLOTS];
};
_Static_assert(sizeof(struct bucket) == 64, "a bucket is one cache line");

struct table {
	uint64_t mask; /* buckets - 1 */
	struct bucket *b;
	size_t bytes;   /* mapping length */
	bool mapped, huge;
	uint64_t nchunks;
	struct rcu_head rcu;
	/* Writers: their count and FROZEN (per stripe), and the growth's bookkeeping. */
	struct {
		RF_CACHE_ALIGNED _Atomic uint64_t v;
	} ctl[STRIPES];
	RF_CACHE_ALIGNED _Atomic(struct table *) next; /* the table being built from this one */
	_Atomic uint64_t claim, copied;   /* growth: chunks claimed, chunks copied */
	_Atomic uint64_t nsat;            /* buckets whose overflow count stuck */
};

/* Up to BATCH_MAX key copies (long keys) of dead slots of one stripe, filled in place (an
 * entry number is taken with fetch_add), then handed to call_rcu as one. */
struct gp_batch {
	struct rcu_head rcu;
	struct rf_hash *h;
	struct gp_batch *next;  /* on h->ready */
	_Atomic uint64_t n;     /* entry numbers taken (past BATCH_MAX: closed) */
	uint64_t valid;         /* entries in it, set by the thread that closes it */
	bool counted;           /* holds a QSBR defer reservation (batch_close) */
	void *e[BATCH_MAX];
};

struct rf_hash {
	/* Read-mostly: what every lookup reads. */
	RF_CACHE_ALIGNED _Atomic(struct table *) tab;
	uint64_t seed;
	uint32_t key_len;
	uint32_t max_entries;
	unsigned flags;
	bool inline_keys; /* key_len <= 8 */
	bool one_writer;  /* RF_HASH_SINGLE_WRITER */
	char name[RF_HASH_NAMESIZE];
	struct rf_mempool *kpool; /* long keys: their copies */
	const char *kbase;
	size_t klen;
	/* Writers. */
	RF_CACHE_ALIGNED _Atomic uint64_t reserved; /* of max_entries: handed to the stripes */
	_Atomic uint64_t overflow;                  /* key copies from malloc (pool empty) */
	struct {
		RF_CACHE_ALIGNED _Atomic(struct gp_batch *) cur; /* the batch being filled */
		_Atomic uint64_t acct;   /* room against max_entries | count (room_take) */
		_Atomic unsigned deaths; /* slots died since this stripe's last epoch advance */
	} ds[STRIPES];
	RF_CACHE_ALIGNED _Atomic uint64_t inflight;    /* batches waiting for a grace period */
	_Atomic int wbusy; /* single-writer mode, debug builds: a writer call is running */
	RF_CACHE_ALIGNED _Atomic(struct gp_batch *) ready; /* batches past their grace period */
	/* Dead slots' epochs: read by every delete, written once per ADV_EVERY deaths. */
	RF_CACHE_ALIGNED _Atomic uint64_t epoch; /* a slot dying now is stamped DEAD(epoch) */
	_Atomic uint64_t done;   /* slots stamped <= done are past their grace period: free */
	_Atomic uint64_t advn;   /* epoch advances waiting for their grace period */
	/* Holders of h: its owner until rf_hash_free, and each epoch_done / batch_done queued
	 * and not yet run. The one that drops the last frees the table (hash_unref). */
	_Atomic uint64_t refs;
};

/* An epoch advance waiting for its grace period (one malloc per ADV_EVERY deaths). */
struct adv {
	struct rcu_head rcu;
	struct rf_hash *h;
	uint64_t epoch; /* the epoch it closes */
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

/* One bucket of probe_inline: the value of the live slot of bk whose key word is ukw, or 0.
 * All three slots are compared without branches (which slot holds a key is random, so a
 * branch per slot mispredicts about every other lookup). A slot counts only with a live
 * value: a dead or pending slot keeps a key word. */
static inline uintptr_t bucket_inline(struct bucket *bk, uint64_t ukw)
{
	/* acquire (three loads): as in probe; every key word is read after its value. */
	void *v0 = atomic_load_explicit(&bk->s[0].value, memory_order_acquire);
	void *v1 = atomic_load_explicit(&bk->s[1].value, memory_order_acquire);
	void *v2 = atomic_load_explicit(&bk->s[2].value, memory_order_acquire);
	/* relaxed: ordered after the acquires above. */
	uint64_t k0 = atomic_load_explicit(&bk->s[0].kw, memory_order_relaxed);
	uint64_t k1 = atomic_load_explicit(&bk->s[1].kw, memory_order_relaxed);
	uint64_t k2 = atomic_load_explicit(&bk->s[2].kw, memory_order_relaxed);
	/* Pick one match, the first slot first (not an OR of them): a key deleted from slot 0
	 * and inserted again into slot 1 between our loads matches twice. */
	uintptr_t r = 0;
	r = pick(r, v2, (k2 == ukw) & live(v2));
	r = pick(r, v1, (k1 == ukw) & live(v1));
	r = pick(r, v0, (k0 == ukw) & live(v0));
	return r;
}

/* Whether a lookup that did not find its key in bk must go on to the next bucket: some key
 * was probed past bk. relaxed: an insert raises the overflow counts before its slot goes
 * pending and so before the commit (release); a lookup that must see that insert sees both. */
static inline bool bucket_passed(struct bucket *bk)
{
	return (atomic_load_explicit(&bk->meta, memory_order_relaxed) & OVF_MASK) != 0;
}

/* probe for keys of <= 8 bytes, from bucket b on (the key's home, or a later bucket of its
 * chain that a bulk lookup reached in a second pass). */
static inline void *probe_inline_from(struct table *t, uint64_t b, uint64_t ukw)
{
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		uintptr_t r = bucket_inline(bk, ukw);
		if (r)
			return (void *)r;
		if (!bucket_passed(bk))
			return NULL;
		b = (b + 1) & t->mask;
	}
	return NULL;
}

static inline void *probe_inline(struct table *t, uint64_t hv, uint64_t ukw)
{
	return probe_inline_from(t, hv & t->mask, ukw);
}

/* The value of key in table t, or NULL. Loads only. */
static inline void *probe(struct rf_hash *h, struct table *t, uint64_t hv, const void *key,
			  uint64_t ukw)
{
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		for (unsigned s = 0; s < SLOTS; s++) {
			/* acquire: pairs with the commit CAS (PENDING -> value, release or
			 * stronger) and upsert's replacing CAS; the key word and tag written
			 * before the slot went pending are then visible. The key word cannot
			 * change under us: a slot is reused only a grace period after it died. */
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_acquire);
			if (!live(v))
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
		/* relaxed: an insert raises the overflow counts before its slot goes pending
		 * and so before the commit (release); a lookup that must see that insert sees
		 * both. */
		if (!(atomic_load_explicit(&bk->meta, memory_order_relaxed) & OVF_MASK))
			return NULL;
		b = (b + 1) & t->mask;
	}
	return NULL;
}

void *rf_hash_lookup(const struct rf_hash *ch, const void *key)
{
	struct rf_hash *h = (struct rf_hash *)ch;
	READER_CHECK("rf_hash_lookup");
	uint64_t hv = hash_key(h, key);
	/* acquire: pairs with the release CAS that published the table (its buckets). */
	struct table *t = atomic_load_explicit(&h->tab, memory_order_acquire);
	if (h->inline_keys)
		return probe_inline(t, hv, inline_kw(h, key));
	return probe(h, t, hv, key, 0);
}

unsigned rf_hash_lookup_bulk(const struct rf_hash *ch, const void *const *keys, unsigned n,
			     void **values)
{
	struct rf_hash *h = (struct rf_hash *)ch;
	READER_CHECK("rf_hash_lookup_bulk");
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
		if (!h->inline_keys) {
			for (unsigned i = 0; i < m; i++) {
				void *v = probe(h, t, hv[i], keys[base + i], 0);
				values[base + i] = v;
				hits += v != NULL;
			}
			continue;
		}
		/* Stage 2: each key's home bucket. A key not there whose chain goes on (some
		 * key was probed past its home) is not followed now, which would wait for one
		 * more line with nothing else in flight: its next bucket is prefetched and the
		 * key kept for stage 3, so those second lines overlap too. */
		uint8_t later[BULK];
		unsigned nl = 0;
		for (unsigned i = 0; i < m; i++) {
			struct bucket *bk = &t->b[hv[i] & t->mask];
			uintptr_t r = bucket_inline(bk, inline_kw(h, keys[base + i]));
			if (!r && bucket_passed(bk)) {
				__builtin_prefetch(&t->b[(hv[i] + 1) & t->mask]);
				later[nl++] = (uint8_t)i;
			}
			values[base + i] = (void *)r;
			hits += r != 0;
		}
		/* Stage 3: the rest of those chains, from the bucket after home. */
		for (unsigned j = 0; j < nl; j++) {
			unsigned i = later[j];
			void *v = probe_inline_from(t, (hv[i] + 1) & t->mask,
						    inline_kw(h, keys[base + i]));
			values[base + i] = v;
			hits += v != NULL;
		}
	}
	return hits;
}

/* ---- table memory ---- */

static struct table *table_new(struct rf_hash *h, uint64_t nb)
{
	struct table *t = NULL;
	if (posix_memalign((void **)&t, RF_CACHE_LINE, sizeof(*t)) != 0)
		return NULL;
	memset(t, 0, sizeof(*t));
	size_t bytes = (size_t)nb * sizeof(struct bucket);
	t->mask = nb - 1;
	t->nchunks = (nb + CHUNK - 1) / CHUNK;
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

/* call_rcu callback: a replaced table, one grace period after it was unpublished. Its
 * retirement was reserved against the QSBR defer limit when its successor was made (grow). */
static void table_reclaim(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* TSan: before the first access to the old table */
	table_destroy((struct table *)((char *)head - offsetof(struct table, rcu)));
	rf_qsbr_defer_release();
	rf_qsbr_retire_note();   /* TSan: an rf_qsbr_barrier comes after this */
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

/* ---- small helpers of the write side ---- */

static void backoff(unsigned *spins)
{
	if (++*spins < 256)
		rf_cpu_relax();
	else
		sched_yield(); /* the thread we wait for may be preempted on this CPU */
}

static inline uint64_t hash_of_slot(struct rf_hash *h, uint64_t kw)
{
	return h->inline_keys ? hash_key(h, &kw) : hash_key(h, (const void *)(uintptr_t)kw);
}

static inline struct slot *slot_at(struct table *t, uint64_t at)
{
	return &t->b[at / SLOTS].s[at % SLOTS];
}

/* Live entries a table of nb buckets holds before it doubles: one per bucket while small
 * (tests and small tables stay sparse), one and a half (half the slots) from 1024 on. At two
 * a bucket (2/3 of the slots) one key in eight sat past its home bucket and one absent-key
 * probe in five went on past home, and the writer paid for it: insert/delete ran at 0.75-0.83x
 * rte_hash at 1M keys, 1.0-1.9x at this limit (docs/lock-free-hash.md, "Load"). */
static inline uint64_t grow_limit(uint64_t nb)
{
	return nb < 1024 ? nb : nb + nb / 2;
}

static void epoch_advance(struct rf_hash *h);

/* Whether the dead slot value v (DEAD(e)) is past its grace period: its epoch e is at most
 * h->done. The epoch is never more than ADV_MAX + 1 ahead of done (every advance started after
 * the one that set done is still waiting, and at most ADV_MAX wait), so e is still waiting
 * exactly when e - done is 1 .. ADV_MAX + 1 mod EPOCHS; a stamp older than that can only look
 * younger (kept a little longer), never older. */
static inline bool dead_passed(struct rf_hash *h, const void *v)
{
	uint64_t e = (uintptr_t)v - (uintptr_t)&sentinel[2];
	/* acquire: pairs with epoch_done's release: the grace period that freed e is over. */
	uint64_t d = atomic_load_explicit(&h->done, memory_order_acquire);
	return ((e - d - 1) & (EPOCHS - 1)) >= ADV_MAX + 1;
}

/* Sets the pending mark (PSLOT) of bucket bk for its slot s, expecting meta m without one;
 * for a slot never used, sets its USED bit and tag in the same CAS (that claims it). False
 * when the bucket changed (m reloaded) or has a pending insert. */
static inline bool pslot_take(struct bucket *bk, uint64_t *m, unsigned s, uint64_t set)
{
	/* acquire: pairs with the release CASes that last cleared PSLOT and with deletes'
	 * release stamps; the slot's last owner is done with it. */
	return atomic_compare_exchange_weak_explicit(&bk->meta, m,
						     *m | ((uint64_t)(s + 1) << PSLOT_SHIFT) | set,
						     memory_order_acq_rel, memory_order_relaxed);
}

/* Clears bucket bk's pending mark (ours). release: pairs with pslot_take's acquire. */
static void pslot_release(struct bucket *bk)
{
	uint64_t m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&bk->meta, &m, m & ~PSLOT_MASK,
						      memory_order_release, memory_order_relaxed))
		;
}

/* Claims a free slot for a key of hash hv, searching up to `limit` buckets from its home. A
 * slot is free when it was never used in this table (USED clear) or it is dead and past its
 * grace period (dead slots are reused here, lazily, in the bucket the insert visits anyway;
 * see "dead slots" below). With `pend` (multi-writer inserts), only in a bucket with no pending
 * insert, whose pending mark (PSLOT) the claim takes: holding it is what makes a dead slot
 * ours, since only its holder may claim in the bucket. Without `pend`: the single writer
 * (plain stores), or a growth copy into a fresh table (no dead slots; USED set by CAS).
 * Returns bucket * SLOTS + slot, or -1. */
static int64_t claim(struct rf_hash *h, struct table *t, uint64_t hv, uint64_t limit, bool pend)
{
	uint64_t b = hv & t->mask;
	bool reuse = pend || h->one_writer; /* dead slots exist only in a published table */
	if (limit > t->mask + 1)
		limit = t->mask + 1;
	for (; limit; limit--, b = (b + 1) & t->mask) {
		struct bucket *bk = &t->b[b];
		/* relaxed: the CAS below decides. */
		uint64_t m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		for (;;) {
			if (pend && (m & PSLOT_MASK))
				break;
			unsigned s = 0;
			bool waiting = false;
			for (; s < SLOTS; s++) {
				if (!(m & USED(s)))
					break;
				if (!reuse)
					continue;
				/* acquire: pairs with the release store of the stamp (the dead
				 * slot's last owner is done with it). */
				void *v = atomic_load_explicit(&bk->s[s].value,
							       memory_order_acquire);
				if (dead(v)) {
					if (dead_passed(h, v))
						break;
					waiting = true;
				}
			}
			/* A dead slot waits: make sure an epoch advance is on. relaxed: a peek, as
			 * in slot_die. */
			if (waiting && !atomic_load_explicit(&h->advn, memory_order_relaxed))
				epoch_advance(h);
			if (s == SLOTS)
				break;
			uint64_t tag = h->inline_keys ? 0 : tag_of(hv) << TAG_SHIFT(s);
			uint64_t mtag = (m & ~TAG_MASK(s)) | tag;
			if (h->one_writer) {
				/* relaxed: the only writer; readers get meta (tag) through the
				 * value's release store in one_put. */
				atomic_store_explicit(&bk->meta, mtag | USED(s), memory_order_relaxed);
				return (int64_t)(b * SLOTS + s);
			}
			if (!(m & USED(s))) {
				/* A never-used slot: setting USED claims it (USED is never cleared
				 * in a table, so no ABA), with the pending mark and tag. release:
				 * orders nothing we need (the tag is published by the pending
				 * store), but a CAS failure must not let us skip a slot. */
				uint64_t nm = mtag | USED(s);
				if (!pend) {
					if (atomic_compare_exchange_weak_explicit(
						    &bk->meta, &m, nm, memory_order_acq_rel,
						    memory_order_relaxed))
						return (int64_t)(b * SLOTS + s);
					continue;
				}
				if (pslot_take(bk, &m, s, USED(s) | tag)) /* tag bits: 0 */
					return (int64_t)(b * SLOTS + s);
				continue;
			}
			/* A dead slot past its grace period: take the bucket's pending mark, then
			 * check the slot again (between our load and the CAS another writer may
			 * have taken, used and released the mark, leaving meta as it was). */
			if (!pslot_take(bk, &m, s, 0))
				continue;
			/* acquire: as above. */
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_acquire);
			if (dead(v) && dead_passed(h, v)) {
				if (!h->inline_keys) { /* our tag (readers look at it only once the
							* slot is live again) */
					m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
					while (!atomic_compare_exchange_weak_explicit(
						&bk->meta, &m, (m & ~TAG_MASK(s)) | tag,
						memory_order_relaxed, memory_order_relaxed))
						; /* relaxed: published by the pending store */
				}
				return (int64_t)(b * SLOTS + s);
			}
			pslot_release(bk);
			m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		}
	}
	return -1;
}

/* Adds d (+1 or -1) to the overflow count of every bucket from home up to (not including)
 * bucket `at`: the buckets a key stored in `at` was probed past. */
static void ovf_adjust(struct table *t, uint64_t home, uint64_t at, int d, bool one)
{
	for (uint64_t b = home; b != at; b = (b + 1) & t->mask) {
		struct bucket *bk = &t->b[b];
		/* relaxed: the CAS below decides. */
		uint64_t m = atomic_load_explicit(&bk->meta, memory_order_relaxed);
		for (;;) {
			uint64_t c = (m & OVF_MASK) >> OVF_SHIFT;
			if (c == OVF_MAX || (d < 0 && c == 0))
				break; /* stuck: cleared by the next rebuild */
			c = d > 0 ? c + 1 : c - 1;
			if (one) {
				/* relaxed: the only writer; a raise reaches readers through the
				 * value's release store that follows it in sw_put. */
				atomic_store_explicit(&bk->meta, (m & ~OVF_MASK) | (c << OVF_SHIFT),
						      memory_order_relaxed);
				if (c == OVF_MAX) /* relaxed: as below */
					atomic_fetch_add_explicit(&t->nsat, 1, memory_order_relaxed);
				break;
			}
			/* seq_cst: a raise comes before the slot's pending store (seq_cst) in the
			 * single order, so a scan that sees the pending value also sees the chain
			 * reach it (resolve); readers get it through the commit's release. */
			if (atomic_compare_exchange_weak_explicit(
				    &bk->meta, &m, (m & ~OVF_MASK) | (c << OVF_SHIFT),
				    memory_order_seq_cst, memory_order_relaxed)) {
				if (c == OVF_MAX) /* relaxed: a statistic for rebuild decisions */
					atomic_fetch_add_explicit(&t->nsat, 1, memory_order_relaxed);
				break;
			}
		}
	}
}

/* ---- dead slots and their grace periods ---- */

/*
 * A slot that dies (deleted, or a pending insert killed) is stamped DEAD(e), e the table's
 * reclamation epoch read AFTER the slot stopped being live, and it is free again once a grace
 * period that covers epoch e is over: a claim that finds it then reuses it in place (claim,
 * dead_passed). Nothing revisits it, and a delete costs no allocation and no callback of its
 * own. epoch_advance closes the current epoch e: it moves h->epoch to e + 1, then call_rcu;
 * the callback raises h->done to e. A writer starts one every ADV_EVERY deaths of its stripe
 * (so a slot waits about as long as when dead slots went to call_rcu in batches of 64:
 * liburcu's callback thread takes what was queued each time it wakes, every 10 ms or so, and
 * a slot that died after the last advance before that waits for the next round), and also
 * whenever none is waiting (so the last deaths before a pause are closed too); at most
 * ADV_MAX wait at once.
 *
 * Why a slot stamped e is never reused while a reader may still look at its old key: the
 * reader loaded the slot's live value before the slot died. The stamp was read after the
 * death (seq_cst both), so the epoch moved past e after the death, and the grace period of
 * that advance (and of every later one) began after the move (call_rcu comes after it): the
 * reader was inside its read-side section when the grace period began, so the period waits
 * for it. With one writer, the epoch changes only inside writer calls, which never overlap:
 * the value read before the death is the same. Callbacks may run out of order (threads can
 * have call_rcu threads of their own): done only grows, and covering e covers every earlier
 * epoch.
 */

static void hash_destroy(struct rf_hash *h);

/* A callback about to be queued for h takes a hold on it. relaxed: its caller holds one
 * already (the owner's, or its own callback's), so h cannot be freed meanwhile. */
static void hash_ref(struct rf_hash *h)
{
	atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
}

/* Drops a hold on h; the last one frees it (true: we did). acq_rel: release, our accesses
 * to h come before the free; acquire, the one that frees sees every other holder's. */
static bool hash_unref(struct rf_hash *h)
{
	if (atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1)
		return false;
	hash_destroy(h);
	return true;
}

/* call_rcu callback: the grace period of advance a is over. */
static void epoch_done(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* TSan: readers' accesses before the grace period */
	struct adv *a = (struct adv *)head;
	struct rf_hash *h = a->h;
	uint64_t e = a->epoch;
	free(a);
	/* relaxed: the CAS decides; release: pairs with dead_passed's acquire. */
	uint64_t d = atomic_load_explicit(&h->done, memory_order_relaxed);
	while (d < e && !atomic_compare_exchange_weak_explicit(&h->done, &d, e,
							       memory_order_release,
							       memory_order_relaxed))
		;
	/* release: pairs with epoch_advance's acquire (done is raised before the count drops:
	 * the epoch stays within ADV_MAX + 1 of done). */
	atomic_fetch_sub_explicit(&h->advn, 1, memory_order_release);
	rf_qsbr_defer_release();
	rf_qsbr_retire_note(); /* TSan: an rf_qsbr_barrier comes after this */
	hash_unref(h);         /* our last access to h */
}

/* Closes the current epoch. With ADV_MAX advances waiting, without memory, or at the QSBR
 * defer limit (a stalled grace period) it does nothing: dead slots wait, and when the table
 * is full of them inserts end in -EAGAIN (hash.h). */
static void epoch_advance(struct rf_hash *h)
{
	/* acquire: pairs with epoch_done's release. */
	uint64_t n = atomic_load_explicit(&h->advn, memory_order_acquire);
	do {
		if (n >= ADV_MAX)
			return;
		/* acquire: as the load above. */
	} while (!atomic_compare_exchange_weak_explicit(&h->advn, &n, n + 1, memory_order_acquire,
							memory_order_acquire));
	struct adv *a = NULL;
	bool reserved = rf_qsbr_defer_reserve() == 0;
	if (reserved)
		a = malloc(sizeof(*a));
	if (!a) {
		if (reserved)
			rf_qsbr_defer_release();
		atomic_fetch_sub_explicit(&h->advn, 1, memory_order_release); /* as in epoch_done */
		return;
	}
	a->h = h;
	/* seq_cst: against the stamps' seq_cst loads (slot_die): a stamp read before this is
	 * at most e, and its slot died before the grace period below begins. */
	a->epoch = atomic_fetch_add_explicit(&h->epoch, 1, memory_order_seq_cst);
	hash_ref(h); /* dropped by epoch_done */
	rf_qsbr_retire_note(); /* TSan: what came before is ordered before the callback */
	call_rcu(&a->rcu, epoch_done);
}

/* Stamps slot sl, which just stopped being live (our delete CAS, or our insert killed), as
 * DEAD(epoch), and makes sure an advance will close that epoch (see above for when). */
static void slot_die(struct rf_hash *h, struct slot *sl)
{
	/* seq_cst: read after the death (our seq_cst CAS or load of KILLED), see above; with one
	 * writer the epoch cannot change under us, relaxed would do. */
	uint64_t e = atomic_load_explicit(&h->epoch, memory_order_seq_cst);
	/* release: pairs with claim's acquire load of the value: we are done with the slot. */
	atomic_store_explicit(&sl->value, DEAD(e), memory_order_release);
	/* relaxed (both): a count that only paces the advances (threads sharing a stripe may
	 * lose an increment) and a peek; epoch_advance decides. */
	_Atomic unsigned *n = &h->ds[my_stripe()].deaths;
	unsigned died = atomic_load_explicit(n, memory_order_relaxed) + 1;
	bool none = !atomic_load_explicit(&h->advn, memory_order_relaxed);
	if (died >= ADV_EVERY || none) {
		atomic_store_explicit(n, 0, memory_order_relaxed);
		epoch_advance(h);
	} else {
		atomic_store_explicit(n, died, memory_order_relaxed);
	}
}

/* Long keys' copies of dead slots are freed one grace period after the death, in batches
 * (a slot's copy is not needed for the slot's reuse, and the pool must not run dry while
 * dead slots wait for an insert to come by). */

/* call_rcu callback: a batch of copies is past its grace period; hand it to the next writer
 * (it frees them into the pool). */
static void batch_done(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* TSan: readers' accesses before the grace period */
	struct gp_batch *b = (struct gp_batch *)head;
	struct rf_hash *h = b->h;
	bool counted = b->counted; /* read before b is handed on */
	/* relaxed: the CAS decides. */
	struct gp_batch *top = atomic_load_explicit(&h->ready, memory_order_relaxed);
	do
		b->next = top;
	/* release: pairs with recycle's acquire exchange: b and its list are the taker's. */
	while (!atomic_compare_exchange_weak_explicit(&h->ready, &top, b, memory_order_release,
						      memory_order_relaxed));
	/* relaxed: a hint for when to start the next batch. */
	atomic_fetch_sub_explicit(&h->inflight, 1, memory_order_relaxed);
	if (counted)
		rf_qsbr_defer_release();
	rf_qsbr_retire_note();
	hash_unref(h); /* our last access to h */
}

/* Hands batch b, holding `valid` entries, to call_rcu. Entries whose numbers were taken but
 * are not written yet are written before the grace period ends: their writers are inside a
 * call, online. */
static void batch_close(struct rf_hash *h, struct gp_batch *b, uint64_t valid)
{
	b->valid = valid;
	/* Counted against the QSBR defer limit when there is room. Past it the batch goes on
	 * uncounted: its copies belong to dead slots already in the table, and with no room
	 * left for a replaced table (grow) or an epoch advance no more can die than the table
	 * holds, so this stays bounded. */
	b->counted = rf_qsbr_defer_reserve() == 0;
	/* relaxed: only a hint for when to close a partial batch. */
	atomic_fetch_add_explicit(&h->inflight, 1, memory_order_relaxed);
	hash_ref(h); /* dropped by batch_done */
	rf_qsbr_retire_note();
	call_rcu(&b->rcu, batch_done);
}

/* Closes stripe si's batch early (no batch is waiting for a grace period, so copies would
 * otherwise wait for 64 deletes). */
static void batch_flush(struct rf_hash *h, unsigned si)
{
	/* acquire: pairs with the CAS that installed the batch (its zeroed fields). */
	struct gp_batch *b = atomic_load_explicit(&h->ds[si].cur, memory_order_acquire);
	if (!b)
		return;
	/* relaxed: a peek; the fetch_add below decides. */
	if (atomic_load_explicit(&b->n, memory_order_relaxed) == 0)
		return;
	/* relaxed: taking entry numbers carries no data; the closer is whoever takes the
	 * number BATCH_MAX - 1, or this fetch_add when it finds fewer taken. */
	uint64_t n = atomic_fetch_add_explicit(&b->n, BATCH_MAX, memory_order_relaxed);
	if (n >= BATCH_MAX)
		return; /* full already: its last entry's writer closes it */
	struct gp_batch *exp = b;
	/* relaxed: the next retire installs a fresh batch; nothing is published here. */
	atomic_compare_exchange_strong_explicit(&h->ds[si].cur, &exp, NULL, memory_order_relaxed,
						memory_order_relaxed);
	batch_close(h, b, n);
}

/* Queues the key copy of a slot that just died for its free after a grace period, in the
 * calling thread's stripe's batch. Without memory for a batch the copy is not reused. */
static void retire_key(struct rf_hash *h, void *key)
{
	unsigned si = my_stripe();
	for (;;) {
		/* acquire: pairs with the installing CAS below (the batch's zeroed fields). */
		struct gp_batch *b = atomic_load_explicit(&h->ds[si].cur, memory_order_acquire);
		if (!b) {
			struct gp_batch *nb = calloc(1, sizeof(*nb));
			if (!nb)
				return;
			nb->h = h;
			struct gp_batch *exp = NULL;
			/* release: pairs with the acquire loads of cur. */
			if (!atomic_compare_exchange_strong_explicit(&h->ds[si].cur, &exp, nb,
								     memory_order_release,
								     memory_order_relaxed))
				free(nb);
			continue;
		}
		/* relaxed: as in batch_flush. */
		uint64_t i = atomic_fetch_add_explicit(&b->n, 1, memory_order_relaxed);
		if (i >= BATCH_MAX) { /* full or flushed: make way for a fresh one */
			struct gp_batch *exp = b;
			atomic_compare_exchange_strong_explicit(&h->ds[si].cur, &exp, NULL,
								memory_order_relaxed,
								memory_order_relaxed);
			continue;
		}
		b->e[i] = key;
		if (i == BATCH_MAX - 1) {
			struct gp_batch *exp = b;
			atomic_compare_exchange_strong_explicit(&h->ds[si].cur, &exp, NULL,
								memory_order_relaxed,
								memory_order_relaxed);
			batch_close(h, b, BATCH_MAX);
		} else if (atomic_load_explicit(&h->inflight, memory_order_relaxed) == 0) {
			batch_flush(h, si); /* relaxed load: a trigger only */
		}
		return;
	}
}

/* Long keys: frees the copies whose grace period is over; starts a batch if none is running.
 * Inline keys have no copies: nothing to do. */
static void recycle(struct rf_hash *h)
{
	if (h->inline_keys)
		return;
	/* relaxed: a peek; the exchange below takes. */
	if (atomic_load_explicit(&h->ready, memory_order_relaxed)) {
		/* acquire: pairs with batch_done's release. */
		struct gp_batch *b = atomic_exchange_explicit(&h->ready, NULL, memory_order_acquire);
		while (b) {
			struct gp_batch *nb = b->next;
			for (uint64_t i = 0; i < b->valid; i++)
				key_free(h, b->e[i]);
			free(b);
			b = nb;
		}
	}
	/* relaxed: a trigger, as in retire_key. */
	if (atomic_load_explicit(&h->inflight, memory_order_relaxed) == 0)
		batch_flush(h, my_stripe());
}

/* ---- entering a table, and growth ---- */

static void grow_help(struct rf_hash *h, struct table *t);

/* Counts the calling writer into the current table (see the file comment): returns it. */
static struct table *w_enter(struct rf_hash *h)
{
	for (;;) {
		/* acquire: pairs with the CAS that published the table. */
		struct table *t = atomic_load_explicit(&h->tab, memory_order_acquire);
		_Atomic uint64_t *ctl = &t->ctl[my_stripe()].v;
		/* relaxed: the CAS below decides. */
		uint64_t c = atomic_load_explicit(ctl, memory_order_relaxed);
		if (c & FROZEN) {
			grow_help(h, t);
			continue;
		}
		/* acquire: none of our accesses to t moves before we are counted in it (a
		 * growth that freezes t after this CAS waits for us). */
		if (atomic_compare_exchange_weak_explicit(ctl, &c, c + 1, memory_order_acquire,
							  memory_order_relaxed))
			return t;
	}
}

static void w_exit(struct table *t)
{
	/* release: pairs with grow_help's acquire load of ctl: what we wrote in t is in the
	 * copy. */
	atomic_fetch_sub_explicit(&t->ctl[my_stripe()].v, 1, memory_order_release);
}

/* Copies the live entries of chunk c of the frozen table t into n (other copiers fill n at
 * the same time, with other keys: entries are unique in t, so claims are the only race). */
static void copy_chunk(struct rf_hash *h, struct table *t, struct table *n, uint64_t c)
{
	uint64_t end = (c + 1) * CHUNK;
	if (end > t->mask + 1)
		end = t->mask + 1;
	for (uint64_t i = c * CHUNK; i < end; i++) {
		for (unsigned s = 0; s < SLOTS; s++) {
			struct slot *sl = &t->b[i].s[s];
			/* relaxed (both): t is quiescent; grow_help's acquire ordered its writes. */
			void *v = atomic_load_explicit(&sl->value, memory_order_relaxed);
			if (!live(v))
				continue;
			uint64_t kw = atomic_load_explicit(&sl->kw, memory_order_relaxed);
			uint64_t hv = hash_of_slot(h, kw);
			int64_t at = claim(h, n, hv, n->mask + 1, false); /* n has room for all */
			ovf_adjust(n, hv & n->mask, (uint64_t)at / SLOTS, +1, false);
			struct slot *d = slot_at(n, (uint64_t)at);
			/* relaxed: n is published by the CAS on h->tab after every chunk is in. */
			atomic_store_explicit(&d->kw, kw, memory_order_relaxed);
			atomic_store_explicit(&d->value, v, memory_order_relaxed);
		}
	}
}

/* Joins the growth of the frozen table t: waits for the calls still inside t, copies
 * chunks until none is left, waits for the other copiers, publishes the new table. */
static void grow_help(struct rf_hash *h, struct table *t)
{
	/* Every helper freezes every stripe itself before it waits: a helper sent here by one
	 * stripe's FROZEN must not find another stripe empty that the first freezer has not
	 * reached yet (a writer could still enter t there and change a chunk after it was
	 * copied; hash_stress caught that as a value deleted twice, once in t and once in its
	 * copy). acq_rel: release, pairs with the acquire of the next helper's fetch_or on the
	 * stripe that sends it here (our load of next, or grow's CAS of it, comes before);
	 * acquire, the same pairing from the other side. */
	for (unsigned i = 0; i < STRIPES; i++) {
		atomic_fetch_or_explicit(&t->ctl[i].v, FROZEN, memory_order_acq_rel);
		FREEZE_PAUSE();
	}
	/* acquire: pairs with grow's CAS of next (n's zeroed memory). */
	struct table *n = atomic_load_explicit(&t->next, memory_order_acquire);
	unsigned spins = 0;
	/* acquire: pairs with w_exit's release. */
	for (unsigned i = 0; i < STRIPES; i++)
		while (atomic_load_explicit(&t->ctl[i].v, memory_order_acquire) & ACTIVE_MASK)
			backoff(&spins);
	uint64_t c;
	/* relaxed: hands out chunk numbers; the copy's ordering is via ctl and copied. */
	while ((c = atomic_fetch_add_explicit(&t->claim, 1, memory_order_relaxed)) < t->nchunks) {
		copy_chunk(h, t, n, c);
		/* release: pairs with the acquire load below: our chunk is in before publish. */
		atomic_fetch_add_explicit(&t->copied, 1, memory_order_release);
	}
	/* acquire: pairs with the copiers' release above. */
	while (atomic_load_explicit(&t->copied, memory_order_acquire) < t->nchunks)
		backoff(&spins);
	struct table *exp = t;
	/* release: pairs with the acquire loads of h->tab (lookups, w_enter): n's buckets,
	 * filled by every copier (ordered before us by `copied`), are visible. */
	if (atomic_compare_exchange_strong_explicit(&h->tab, &exp, n, memory_order_release,
						    memory_order_relaxed)) {
		rf_qsbr_retire_note();
		call_rcu(&t->rcu, table_reclaim);
	}
}

/* Replaces t by a table of nb buckets (nb == its size: a rebuild that drops dead slots and
 * stuck counts). The caller is not counted in t. 0, -ENOMEM, or -EAGAIN when t's retirement
 * would pass the QSBR defer limit (a stalled grace period: t stays as it is, and memory does
 * not grow by a table per rebuild). */
static int grow(struct rf_hash *h, struct table *t, uint64_t nb)
{
	/* acquire: pairs with the CAS below by another grower. */
	if (!atomic_load_explicit(&t->next, memory_order_acquire)) {
		/* The winner's reservation is t's call_rcu (grow_help), released in table_reclaim. */
		if (rf_qsbr_defer_reserve() != 0)
			return -EAGAIN;
		struct table *n = table_new(h, nb);
		if (!n) {
			rf_qsbr_defer_release();
			return -ENOMEM;
		}
		struct table *exp = NULL;
		/* release: pairs with grow_help's acquire: n's zeroed memory. acquire (failure):
		 * nothing of the winner's table is read here, relaxed would do. */
		if (!atomic_compare_exchange_strong_explicit(&t->next, &exp, n,
							     memory_order_release,
							     memory_order_relaxed)) {
			table_destroy(n);
			rf_qsbr_defer_release();
		}
	}
	grow_help(h, t); /* freezes t, after our CAS of next */
	return 0;
}

/* ---- finding a key, and settling racing inserts of it ---- */

struct scan {
	int64_t live;  /* a slot holding the key live, or -1 */
	void *lv;      /* its value */
	unsigned np;   /* pending copies of the key, in chain order */
	bool restart;  /* resolve: a kill found a live copy */
	uint64_t pend[MAX_PEND];
};

/* CAS PENDING -> KILLED on slot at. False when the slot had gone live (or live and deleted)
 * meanwhile: the caller must look again. */
static bool kill_slot(struct table *t, uint64_t at)
{
	void *exp = PENDING;
	/* seq_cst: this CAS and the slot's commit CAS decide between them (file comment). */
	if (atomic_compare_exchange_strong_explicit(&slot_at(t, at)->value, &exp, KILLED,
						    memory_order_seq_cst, memory_order_seq_cst))
		return true;
	return exp == KILLED;
}

/* resolve's walk of key's chain in t: its live copy and its pending copies. Pending copies
 * past MAX_PEND are killed on the way (resolve must never commit while one it did not
 * record is pending). */
static void scan_key(struct rf_hash *h, struct table *t, uint64_t hv, const void *key,
		     uint64_t ukw, struct scan *sc)
{
	sc->live = -1;
	sc->lv = NULL;
	sc->np = 0;
	sc->restart = false;
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		for (unsigned s = 0; s < SLOTS; s++) {
			/* seq_cst: against the pending store of a racing insert of the same key
			 * (file comment); also acquire: the key word and tag before it. */
			void *v = atomic_load_explicit(&bk->s[s].value, memory_order_seq_cst);
			if (!live(v) && v != PENDING)
				continue; /* free, killed or dead */
			/* relaxed: ordered after the load above; the slot cannot be reused while
			 * we are inside this call (QSBR). */
			uint64_t kw = atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
			bool match;
			if (h->inline_keys)
				match = kw == ukw;
			else
				match = ((atomic_load_explicit(&bk->meta, memory_order_relaxed) >>
					  TAG_SHIFT(s)) & 0xffff) == tag_of(hv) &&
					memcmp((const void *)(uintptr_t)kw, key, h->key_len) == 0;
			if (!match)
				continue;
			uint64_t at = b * SLOTS + s;
			if (v != PENDING) {
				if (sc->live < 0) {
					sc->live = (int64_t)at;
					sc->lv = v;
				}
			} else if (sc->np < MAX_PEND) {
				sc->pend[sc->np++] = at;
			} else if (!kill_slot(t, at)) {
				sc->restart = true;
			}
		}
		/* seq_cst: an insert raises these counts before its pending store. */
		if (!(atomic_load_explicit(&bk->meta, memory_order_seq_cst) & OVF_MASK))
			return;
		b = (b + 1) & t->mask;
	}
}

/* The slot holding key live in t, with its value in *lv, or -1: the writers' own lookup. It
 * stops at the first live copy (there is at most one; a copy deleted and inserted again
 * between our loads may match twice, and the CAS on the one we return then tells).
 * Inline keys: the three slots of a bucket are compared without a branch per slot, as
 * probe_inline does. */
static inline int64_t find_live(struct rf_hash *h, struct table *t, uint64_t hv,
				const void *key, uint64_t ukw, void **lv)
{
	uint64_t b = hv & t->mask;
	for (uint64_t left = t->mask + 1; left; left--) {
		struct bucket *bk = &t->b[b];
		if (h->inline_keys) {
			void *v[SLOTS];
			unsigned hit = 0;
			for (unsigned s = 0; s < SLOTS; s++) /* acquire: as in probe */
				v[s] = atomic_load_explicit(&bk->s[s].value, memory_order_acquire);
			for (unsigned s = 0; s < SLOTS; s++) { /* relaxed: after the acquires */
				unsigned same = atomic_load_explicit(&bk->s[s].kw,
								     memory_order_relaxed) == ukw;
				hit |= (same & (unsigned)live(v[s])) << s;
			}
			if (hit) {
				unsigned s = (unsigned)__builtin_ctz(hit);
				*lv = v[s];
				return (int64_t)(b * SLOTS + s);
			}
		} else {
			for (unsigned s = 0; s < SLOTS; s++) {
				/* acquire: as in probe. */
				void *v = atomic_load_explicit(&bk->s[s].value, memory_order_acquire);
				if (!live(v))
					continue;
				/* relaxed: ordered after the acquire above. */
				uint64_t kw = atomic_load_explicit(&bk->s[s].kw, memory_order_relaxed);
				if (((atomic_load_explicit(&bk->meta, memory_order_relaxed) >>
				      TAG_SHIFT(s)) & 0xffff) == tag_of(hv) &&
				    memcmp((const void *)(uintptr_t)kw, key, h->key_len) == 0) {
					*lv = v;
					return (int64_t)(b * SLOTS + s);
				}
			}
		}
		/* relaxed: as in probe. */
		if (!(atomic_load_explicit(&bk->meta, memory_order_relaxed) & OVF_MASK))
			return -1;
		b = (b + 1) & t->mask;
	}
	return -1;
}

/* Settles every pending copy of key: killed, or (the first in chain order, when no copy is
 * live) committed. Returns once the key has no pending copy left in t (file comment). */
static void resolve(struct rf_hash *h, struct table *t, uint64_t hv, const void *key,
		    uint64_t ukw)
{
	struct scan sc;
	for (;;) {
		scan_key(h, t, hv, key, ukw, &sc);
		if (sc.restart)
			continue;
		if (sc.np == 0)
			return;
		bool again = false;
		for (unsigned i = sc.live >= 0 ? 0 : 1; i < sc.np && !again; i++)
			again = !kill_slot(t, sc.pend[i]);
		if (again)
			continue;
		if (sc.live >= 0)
			return;
		struct slot *sl = slot_at(t, sc.pend[0]);
		/* relaxed: written before the slot's pending store, which our scan loaded; while
		 * the slot stays pending its bucket's pv stays its value (PSLOT is released only
		 * after the slot is settled), and if it is no longer pending the CAS fails. */
		void *v = atomic_load_explicit(&t->b[sc.pend[0] / SLOTS].pv, memory_order_relaxed);
		void *exp = PENDING;
		/* seq_cst: decides against kill_slot; also release: pairs with the readers'
		 * acquire of the value (key word, tag, counts, what v points at). */
		if (atomic_compare_exchange_strong_explicit(&sl->value, &exp, v,
							    memory_order_seq_cst,
							    memory_order_seq_cst))
			return; /* copies we did not see settle in their own resolve */
	}
}

/* ---- the write side ---- */

/* A stripe's account is one word, so that an insert or a delete updates it with one atomic
 * instruction: its high half is the room the stripe holds against max_entries (taken from
 * h->reserved QUOTA at a time), its low half the stripe's count of entries (inserts minus
 * deletes by its threads: a stripe's count may go negative, never past +-max_entries <= 2^30)
 * plus ACCT_BIAS. */
#define ACCT_ROOM ((uint64_t)1 << 32) /* one entry's room */
#define ACCT_BIAS ((uint64_t)1 << 31) /* the low half of a count of 0 */

static inline uint64_t acct_room(uint64_t w)
{
	return w >> 32;
}

static inline int64_t acct_count(uint64_t w)
{
	return (int64_t)(uint32_t)w - (int64_t)ACCT_BIAS;
}

/* Takes room for one more entry against max_entries and counts it, without a shared counter
 * per insert: from the stripe's room, else QUOTA more from h->reserved, else one taken from
 * any stripe's room (so -ENOSPC means every entry of max_entries is present or being
 * inserted). An insert that does not happen gives it back (room_give). */
static bool room_take(struct rf_hash *h, unsigned si)
{
	_Atomic uint64_t *a = &h->ds[si].acct;
	/* relaxed (all of these): counts of room and entries; no data hangs on them. */
	uint64_t w = atomic_load_explicit(a, memory_order_relaxed);
	while (acct_room(w))
		if (atomic_compare_exchange_weak_explicit(a, &w, w - ACCT_ROOM + 1,
							  memory_order_relaxed, memory_order_relaxed))
			return true;
	uint64_t r = atomic_load_explicit(&h->reserved, memory_order_relaxed);
	while (r < h->max_entries) {
		uint64_t take = h->max_entries - r < QUOTA ? h->max_entries - r : QUOTA;
		if (atomic_compare_exchange_weak_explicit(&h->reserved, &r, r + take,
							  memory_order_relaxed, memory_order_relaxed)) {
			atomic_fetch_add_explicit(a, (take - 1) * ACCT_ROOM + 1, memory_order_relaxed);
			return true;
		}
	}
	for (unsigned i = 0; i < STRIPES; i++) {
		_Atomic uint64_t *o = &h->ds[i].acct;
		w = atomic_load_explicit(o, memory_order_relaxed);
		while (acct_room(w))
			if (atomic_compare_exchange_weak_explicit(o, &w, w - ACCT_ROOM,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
				return true;
			}
	}
	return false;
}

/* Uncounts one entry and gives back its room (deleted, or an insert that did not happen); a
 * stripe holding more than 2 * QUOTA returns QUOTA of it to h->reserved. */
static void room_give(struct rf_hash *h, unsigned si)
{
	_Atomic uint64_t *a = &h->ds[si].acct;
	/* relaxed: as in room_take. */
	uint64_t w = atomic_fetch_add_explicit(a, ACCT_ROOM - 1, memory_order_relaxed) +
		     ACCT_ROOM - 1;
	if (acct_room(w) > 2 * QUOTA &&
	    atomic_compare_exchange_strong_explicit(a, &w, w - QUOTA * ACCT_ROOM,
						    memory_order_relaxed, memory_order_relaxed))
		atomic_fetch_sub_explicit(&h->reserved, QUOTA, memory_order_relaxed);
}

/* Entries present (inserts minus deletes over every stripe): exact when writers are idle. */
static uint64_t entries(const struct rf_hash *h)
{
	int64_t n = 0;
	for (unsigned i = 0; i < STRIPES; i++) /* relaxed: a statistic */
		n += acct_count(atomic_load_explicit(&((struct rf_hash *)h)->ds[i].acct,
						     memory_order_relaxed));
	return n > 0 ? (uint64_t)n : 0;
}

/* Whether the entries counted (the caller's insert among them: room_take counts it) take a
 * table of nb buckets past its load limit. h->reserved bounds the count from above and is
 * one load of a line written once per QUOTA inserts; only when it is past the limit are the
 * stripes summed. */
static bool over_limit(const struct rf_hash *h, uint64_t nb)
{
	uint64_t lim = grow_limit(nb);
	/* relaxed: as in room_take. */
	if (atomic_load_explicit(&((struct rf_hash *)h)->reserved, memory_order_relaxed) < lim)
		return false;
	return entries(h) > lim;
}

/* insert (replace = false) and upsert (true). */
static int put(struct rf_hash *h, const void *key, void *value, bool replace, void **old)
{
	if (!live(value))
		return -EINVAL;
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	void *copy = NULL; /* long keys: our copy, made once */
	unsigned growths = 0;
	bool nomem = false; /* a key copy or a bigger table could not be allocated */
	for (;;) {
		struct table *t = w_enter(h);
		recycle(h);
		void *cur;
		int64_t found = find_live(h, t, hv, key, ukw, &cur);
		if (found >= 0) {
			if (!replace) {
				w_exit(t);
				key_free(h, copy); /* never published */
				return -EEXIST;
			}
			struct slot *sl = slot_at(t, (uint64_t)found);
			/* acq_rel: release publishes what value points at to probe's acquire;
			 * acquire: the replaced value is the caller's. */
			while (live(cur) && !atomic_compare_exchange_weak_explicit(
						    &sl->value, &cur, value, memory_order_acq_rel,
						    memory_order_relaxed))
				;
			w_exit(t);
			if (live(cur)) {
				key_free(h, copy);
				if (old)
					*old = cur;
				return 1;
			}
			continue; /* deleted meanwhile: start again */
		}
		uint64_t nb = t->mask + 1;
		unsigned si = my_stripe();
		if (!room_take(h, si)) {
			w_exit(t);
			key_free(h, copy);
			return -ENOSPC;
		}
		bool full = over_limit(h, nb) && nb < ((uint64_t)1 << 40);
		/* relaxed: a statistic */
		bool stuck = atomic_load_explicit(&t->nsat, memory_order_relaxed) > nb / 16;
		if (!h->inline_keys && !copy)
			copy = key_copy(h, key);
		bool keyed = h->inline_keys || copy;
		int64_t at = -1;
		if (keyed && (!(full || stuck) || growths >= 8))
			at = claim(h, t, hv, CLAIM_PROBE, true);
		if (at < 0) {
			room_give(h, si);
			w_exit(t);
			if (keyed && growths < 8) {
				uint64_t to = full || (entries(h) + 1) * 2 > nb * SLOTS ? 2 * nb : nb;
				growths++;
				int g = grow(h, t, to);
				if (g == 0)
					continue;
				growths = 8; /* no memory (or no room to retire t): use the free slots left */
				nomem = g == -ENOMEM;
				continue;
			}
			key_free(h, copy);
			return nomem || !keyed ? -ENOSPC : -EAGAIN; /* see the file comment */
		}
		ovf_adjust(t, hv & t->mask, (uint64_t)at / SLOTS, +1, false);
		struct slot *sl = slot_at(t, (uint64_t)at);
		uint64_t kw = h->inline_keys ? ukw : (uint64_t)(uintptr_t)copy;
		/* relaxed (both): published by the pending store below. */
		atomic_store_explicit(&sl->kw, kw, memory_order_relaxed);
		struct bucket *bk = &t->b[at / SLOTS];
		atomic_store_explicit(&bk->pv, value, memory_order_relaxed);
		/* seq_cst: publishes the key word and pv to writers that load PENDING (release),
		 * and comes before our scans in resolve in the single order (file comment). */
		atomic_store_explicit(&sl->value, PENDING, memory_order_seq_cst);
		resolve(h, t, hv, key, ukw);
		/* The bucket's pending-insert mark is ours to release, now that the slot is
		 * settled; the next pending insert of this bucket writes pv after we are done. */
		pslot_release(bk);
		/* seq_cst: our slot, settled (resolve saw its final state); if KILLED, the stamp
		 * slot_die reads comes after the kill (see "dead slots"). */
		void *now = atomic_load_explicit(&sl->value, memory_order_seq_cst);
		if (now != KILLED) {
			/* committed (by us or a helper), maybe deleted since: counted already. */
			w_exit(t);
			return 0;
		}
		/* Lost to a live copy: undo our counts, let the slot (and copy, which other
		 * writers may be reading) go after a grace period. */
		ovf_adjust(t, hv & t->mask, (uint64_t)at / SLOTS, -1, false);
		room_give(h, si);
		slot_die(h, sl);
		if (copy)
			retire_key(h, copy);
		copy = NULL;
		w_exit(t);
		if (!replace)
			return -EEXIST;
	}
}

/* ---- the single-writer mode ---- */

/* Debug builds: the app promised that writer calls never overlap; a second one arriving while
 * one runs is a bug in the app, reported in one line before it corrupts the table. */
static void one_enter(struct rf_hash *h, const char *call)
{
#ifdef RF_DEBUG_CHECKS
	/* relaxed: a detector, not a lock; an overlap shows in at least one of the calls. */
	if (atomic_exchange_explicit(&h->wbusy, 1, memory_order_relaxed)) {
		rf_log(RF_LOG_ERR, "hash '%s': %s overlaps another writer call on a table created "
		       "with RF_HASH_SINGLE_WRITER (serialise the writers or drop the flag)",
		       h->name, call);
		abort();
	}
#else
	(void)h;
	(void)call;
#endif
}

static void one_exit(struct rf_hash *h)
{
#ifdef RF_DEBUG_CHECKS
	atomic_store_explicit(&h->wbusy, 0, memory_order_relaxed); /* relaxed: as one_enter */
#else
	(void)h;
#endif
}

/* The one writer's count of entries (stripe 0's; the others stay 0). relaxed: only this
 * writer writes it; rf_hash_count's readers take a statistic. */
static void one_count(struct rf_hash *h, int64_t d)
{
	_Atomic uint64_t *c = &h->ds[0].acct;
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + (uint64_t)d,
			      memory_order_relaxed);
}

/* insert (replace = false) and upsert (true) of the single writer. */
static int one_put(struct rf_hash *h, const void *key, void *value, bool replace, void **old)
{
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	void *copy = NULL;
	unsigned growths = 0;
	bool nomem = false; /* a key copy or a bigger table could not be allocated */
	for (;;) {
		/* relaxed: only this writer publishes tables. */
		struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed);
		recycle(h);
		void *lv;
		int64_t found = find_live(h, t, hv, key, ukw, &lv);
		if (found >= 0) {
			key_free(h, copy);
			if (!replace)
				return -EEXIST;
			/* release: pairs with probe's acquire of the value (what it points at). */
			atomic_store_explicit(&slot_at(t, (uint64_t)found)->value, value,
					      memory_order_release);
			if (old)
				*old = lv;
			return 1;
		}
		/* relaxed: our own count (one_count). */
		int64_t c = acct_count(atomic_load_explicit(&h->ds[0].acct, memory_order_relaxed));
		uint64_t n = c > 0 ? (uint64_t)c : 0, nb = t->mask + 1;
		if (n >= h->max_entries) {
			key_free(h, copy);
			return -ENOSPC;
		}
		bool full = n + 1 > grow_limit(nb) && nb < ((uint64_t)1 << 40);
		/* relaxed: a statistic */
		bool stuck = atomic_load_explicit(&t->nsat, memory_order_relaxed) > nb / 16;
		if (!h->inline_keys && !copy)
			copy = key_copy(h, key);
		bool keyed = h->inline_keys || copy;
		int64_t at = -1;
		if (keyed && (!(full || stuck) || growths >= 8))
			at = claim(h, t, hv, CLAIM_PROBE, false);
		if (at < 0) {
			if (keyed && growths < 8) {
				uint64_t to = full || (n + 1) * 2 > nb * SLOTS ? 2 * nb : nb;
				growths++;
				int g = grow(h, t, to);
				if (g != 0) {
					growths = 8; /* no memory or no room to retire t: use */
					nomem = g == -ENOMEM; /* the free slots left */
				}
				continue;
			}
			key_free(h, copy);
			return nomem || !keyed ? -ENOSPC : -EAGAIN; /* as in put */
		}
		ovf_adjust(t, hv & t->mask, (uint64_t)at / SLOTS, +1, true);
		struct slot *sl = slot_at(t, (uint64_t)at);
		/* relaxed: published by the value's release store below. */
		atomic_store_explicit(&sl->kw, h->inline_keys ? ukw : (uint64_t)(uintptr_t)copy,
				      memory_order_relaxed);
		/* release: the linearization point; pairs with the readers' acquire of the value
		 * (the key word, the tag and the overflow counts written before it). */
		atomic_store_explicit(&sl->value, value, memory_order_release);
		one_count(h, +1);
		return 0;
	}
}

static int one_delete(struct rf_hash *h, const void *key, void **old)
{
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	/* relaxed: as in one_put. */
	struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed);
	recycle(h);
	void *lv;
	int64_t found = find_live(h, t, hv, key, ukw, &lv);
	if (found < 0)
		return -ENOENT;
	uint64_t at = (uint64_t)found;
	struct slot *sl = slot_at(t, at);
	void *k = h->inline_keys
			  ? NULL /* relaxed: our own store */
			  : (void *)(uintptr_t)atomic_load_explicit(&sl->kw, memory_order_relaxed);
	/* The linearization point: the release store of DEAD(epoch) (a reader that loads it
	 * sees the slot as it was left, as with the multi-writer delete's CAS). */
	slot_die(h, sl);
	ovf_adjust(t, hv & t->mask, at / SLOTS, -1, true);
	one_count(h, -1);
	if (k)
		retire_key(h, k);
	if (old)
		*old = lv;
	return 0;
}

/* insert (replace = false) and upsert (true), in the table's write mode; call names the
 * API function for the debug checks. */
static int put_mode(struct rf_hash *h, const void *key, void *value, bool replace, void **old,
		    const char *call)
{
	READER_CHECK(call);
	if (!h->one_writer)
		return put(h, key, value, replace, old);
	if (!live(value))
		return -EINVAL;
	one_enter(h, call);
	int rc = one_put(h, key, value, replace, old);
	one_exit(h);
	return rc;
}

int rf_hash_insert(struct rf_hash *h, const void *key, void *value)
{
	return put_mode(h, key, value, false, NULL, "rf_hash_insert");
}

int rf_hash_upsert(struct rf_hash *h, const void *key, void *value, void **old)
{
	return put_mode(h, key, value, true, old, "rf_hash_upsert");
}

int rf_hash_delete(struct rf_hash *h, const void *key, void **old)
{
	READER_CHECK("rf_hash_delete");
	if (h->one_writer) {
		one_enter(h, "rf_hash_delete");
		int rc = one_delete(h, key, old);
		one_exit(h);
		return rc;
	}
	uint64_t hv = hash_key(h, key);
	uint64_t ukw = h->inline_keys ? inline_kw(h, key) : 0;
	for (;;) {
		struct table *t = w_enter(h);
		recycle(h);
		void *cur;
		int64_t found = find_live(h, t, hv, key, ukw, &cur);
		if (found < 0) {
			w_exit(t);
			return -ENOENT;
		}
		uint64_t at = (uint64_t)found;
		struct slot *sl = slot_at(t, at);
		/* The linearization point of delete. seq_cst: acquire, the value we return is the
		 * caller's; release, a reader that sees NULL sees the slot as it was left; and
		 * before slot_die's load of the epoch in the single order (see "dead slots"). */
		while (live(cur) && !atomic_compare_exchange_weak_explicit(
					    &sl->value, &cur, NULL, memory_order_seq_cst,
					    memory_order_relaxed))
			;
		if (!live(cur)) {
			w_exit(t);
			continue; /* another delete won: look again */
		}
		/* The buckets this key's probe passed no longer need to send lookups onwards. */
		ovf_adjust(t, hv & t->mask, at / SLOTS, -1, false);
		unsigned si = my_stripe();
		room_give(h, si);
		void *k = h->inline_keys ? NULL
					 : (void *)(uintptr_t)atomic_load_explicit(
						   &sl->kw, memory_order_relaxed);
		slot_die(h, sl);
		if (k)
			retire_key(h, k);
		w_exit(t);
		if (old)
			*old = cur;
		return 0;
	}
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
	h->one_writer = (flags & RF_HASH_SINGLE_WRITER) != 0;
	flags &= ~RF_HASH_SINGLE_WRITER; /* the rest are the pools' */
	h->flags = flags;
	h->inline_keys = key_len <= 8;
	h->seed = fmix64((uint64_t)(uintptr_t)h ^ 0x2545f4914f6cdd1dull);
	atomic_init(&h->epoch, 1); /* slots die in epoch 1 first; done = 0: none is past */
	atomic_init(&h->refs, 1);  /* the owner's */
	for (unsigned i = 0; i < STRIPES; i++)
		atomic_init(&h->ds[i].acct, ACCT_BIAS); /* no room, no entries */
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
	struct table *t = table_new(h, 1);
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
	/* The owner's hold. Not the last: callbacks of h are queued; the last of them frees it,
	 * and the barrier waits for that. */
	if (!hash_unref(h))
		rf_qsbr_barrier();
}

void rf_hash_free_deferred(struct rf_hash *h)
{
	if (h)
		hash_unref(h); /* the owner's hold: frees now, or the last callback does */
}

/* Frees h and what it owns, once nothing holds it: its owner called rf_hash_free and every
 * epoch_done and batch_done queued for it has run (table_reclaim holds only its old table).
 * Runs on the thread that dropped the last hold: the owner's, or liburcu's callback thread. */
static void hash_destroy(struct rf_hash *h)
{
	struct table *t = atomic_load_explicit(&h->tab, memory_order_relaxed);
	if (!h->inline_keys) {
		for (uint64_t i = 0; i <= t->mask; i++)
			for (unsigned s = 0; s < SLOTS; s++)
				if (live(atomic_load_explicit(&t->b[i].s[s].value,
							      memory_order_relaxed)))
					key_free(h, (void *)(uintptr_t)atomic_load_explicit(
							    &t->b[i].s[s].kw, memory_order_relaxed));
	}
	/* Dead slots: past their grace period (ready) or in a batch not yet closed (cur). */
	for (struct gp_batch *b = atomic_load_explicit(&h->ready, memory_order_relaxed), *nb; b;
	     b = nb) {
		nb = b->next;
		for (uint64_t i = 0; i < b->valid; i++)
			key_free(h, b->e[i]);
		free(b);
	}
	for (unsigned i = 0; i < STRIPES; i++) {
		struct gp_batch *b = atomic_load_explicit(&h->ds[i].cur, memory_order_relaxed);
		if (!b)
			continue;
		uint64_t n = atomic_load_explicit(&b->n, memory_order_relaxed);
		for (uint64_t j = 0; j < n && j < BATCH_MAX; j++)
			key_free(h, b->e[j]);
		free(b);
	}
	table_destroy(t);
	rf_mempool_free(h->kpool);
	free(h);
}

size_t rf_hash_count(const struct rf_hash *h)
{
	/* exact once writers stopped (their joins order the stripes' counts). */
	return entries(h);
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
		if (!live(v))
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
