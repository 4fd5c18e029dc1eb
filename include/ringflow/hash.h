/*
 * ringflow/hash.h: a resizable hash table with lock-free readers and writers, with fixed-length
 * byte keys and `void *` values (a MAC table: 6-byte keys; a flow table: 13-byte 5-tuples;
 * 8-byte ids).
 *
 * Design: a bucketised open-addressing table (ideas from DPDK rte_hash's lock-free mode,
 * Cuckoo++ and DLHT; hash/hash.c has the details). Buckets are one 64-byte cache line with
 * three slots; a slot holds the key itself when it is at most 8 bytes (a hit reads one line),
 * else a pointer to a copy plus a 16-bit hash tag in the bucket (most non-matching slots are
 * skipped without following it). A key sits in its home bucket or, when that was full, in
 * the next bucket with room; each bucket counts the keys that probed past it, so a lookup
 * stops at the first bucket whose count is zero. Entries never move inside a table. Writers
 * change slots with CAS only: an insert claims a slot, parks its key there unseen by readers,
 * and a CAS on the slot's value word makes it visible; racing inserts of one key settle on
 * exactly one winner, any writer finishing a preempted one's insert (hash/hash.c explains).
 *
 * Growth: one entry per bucket while the table is small (< 1024 buckets), one and a half
 * per bucket (half the slots) above; then the writers build a table twice the size together (the old
 * one frozen for writers meanwhile), publish it with one CAS and free the old one a grace
 * period later. Readers are never stopped or redirected: one still in the old table reads a
 * consistent copy. It never shrinks.
 *
 * Contract:
 *   - insert, delete, upsert, lookup, lookup_bulk, count and iteration may run concurrently,
 *     from any threads registered with QSBR (ringflow/qsbr.h: read the rule there, it applies
 *     to every thread that calls these). create and free may not run concurrently with any
 *     other call on the same table.
 *   - Readers (lookup, lookup_bulk, iteration) never lock, never wait and never write shared
 *     memory. Writers (insert, upsert, delete) take no lock: they are lock-free (a writer
 *     preempted anywhere in a call delays no other writer and no reader) except while the
 *     table grows: growth waits for the writer calls already inside the old table to leave
 *     it, and a writer that arrives then helps copy and waits for the other copiers' chunks.
 *     So a writer preempted in the middle of a call, or of a copy chunk, can delay the other
 *     writers during a growth (about log2(max_entries) growths in a table's life, plus
 *     rebuilds when deleted slots pile up), never readers. With RF_HASH_SINGLE_WRITER the
 *     writer calls must not overlap (the app's promise): then they never wait at all.
 *   - Linearizable: insert and upsert-as-insert at the CAS that turns the slot's value from
 *     pending to the value (made by the inserter or a helper), upsert-as-replace at its CAS
 *     of the value, delete at its CAS of the value to NULL; insert's -EEXIST and delete's
 *     -ENOENT at the scan that saw the key present / absent. Of inserts racing on one key
 *     exactly one returns 0, the others -EEXIST. A dead slot is reused only after a grace
 *     period, so a reader never pairs one key with another key's value.
 *   - A value returned by lookup stays valid for the caller until its next quiescent state
 *     *as far as the table is concerned*; what the value points at is the caller's business
 *     (defer its free across a grace period if readers may hold it).
 *   - rf_hash_count is exact when no writer is running.
 *   - Iteration walks the table that was current at rf_hash_iter_init and visits every entry
 *     present throughout the walk exactly once (in slot order, not key order); entries added
 *     or removed meanwhile may or may not be visited. The whole walk must stay between two
 *     quiescent states of the walking thread.
 *
 * Memory: buckets are 64 B per 0.75 to 1.5 entries (1M entries: 64 MiB), on 2 MiB hugetlb pages
 * when free ones exist and flags lack RF_MEMPOOL_NO_HUGE, else normal pages with a
 * transparent-hugepage hint (silently). Keys longer than 8 bytes are copied into a mempool
 * of max_entries plus a quarter (flags apply to it); a copy returns to it one grace period
 * after its delete, and when the pool is empty meanwhile a copy comes from malloc instead
 * (rf_hash_overflow_allocs counts them). -ENOSPC means max_entries entries are present (or
 * no memory was left to grow). -EAGAIN means the slots near the key are deleted ones still
 * waiting for their grace period: either a grace period is stalled (qsbr.h rule 2: the hash's
 * deferred frees reached the QSBR defer limit; inserts work again once the stalled thread
 * passes a quiescent state), or a few keys are deleted and inserted again faster than grace
 * periods end (a retry after a quiescent state succeeds). A deleted slot
 * is stamped with the reclamation epoch it died in and reused in place by a later insert once
 * that epoch's grace period is over (no allocation per delete); long keys' copies wait in
 * batches of 64 (one malloc per batch).
 *
 * Errors: int functions return 0 (or 1 where said) or a negative errno; rf_hash_create returns
 * NULL with errno; lookups return NULL when the key is absent (so values may not be NULL).
 */
#ifndef RINGFLOW_HASH_H
#define RINGFLOW_HASH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>
#include <ringflow/qsbr.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_HASH_KEY_MAX 64      /* longest key, bytes */
/* rf_hash_create flag: the caller promises that at most one insert/upsert/delete runs at a
 * time (any thread, one after another: a single writer thread, or writers serialised by the
 * app). Writers then use plain release stores instead of the multi-writer CAS protocol, about
 * twice as fast (DPDK rte_hash's default mode works the same way); readers are unchanged and
 * stay lock-free. Debug builds (RF_DEBUG_CHECKS) abort with one line when two writer calls
 * overlap. Not an RF_MEMPOOL_* bit. */
#define RF_HASH_SINGLE_WRITER 0x10000u
#define RF_HASH_NAMESIZE 32

struct rf_hash;

/* Creates an empty table (one bucket) for keys of key_len bytes (1..RF_HASH_KEY_MAX) holding
 * up to max_entries entries (>= 1). flags are RF_MEMPOOL_* flags for the buckets and key pool
 * (e.g. RF_MEMPOOL_NO_HUGE; 0 tries hugepages and warns on fallback), plus
 * RF_HASH_SINGLE_WRITER. NULL + errno: EINVAL bad arguments, ENOMEM no memory. Not
 * thread-safe with other calls on the table. */
struct rf_hash *rf_hash_create(const char *name, size_t key_len, unsigned max_entries,
			       unsigned flags);

/* Frees the table, its key copies and their pool; first, if reclamation of its deleted
 * slots or key copies is still pending, waits for it (rcu_barrier: goes offline meanwhile if
 * the caller is online): a table that saw no delete since its last grace period frees at
 * once. NULL is ignored. No other thread may use the table during or after this. Values are
 * not freed. */
void rf_hash_free(struct rf_hash *h);

/* rf_hash_free that never waits, for threads that must not block for a grace period (qsbr.h
 * rule 5; a control thread): with reclamation pending, the last of its callbacks frees the
 * table, on liburcu's callback thread, one grace period later; rf_qsbr_barrier() waits for
 * that (before exit, so a leak check sees it freed). Same rules otherwise. */
void rf_hash_free_deferred(struct rf_hash *h);

/* Adds key -> value (value != NULL). 0, -EEXIST (key present; table unchanged), -EINVAL
 * (NULL value, or one of the 4 KiB of addresses private to the hash that mark slot states),
 * -ENOSPC (max_entries entries present: see Memory above), -EAGAIN (the slots near the key
 * wait for a grace period; retry after a quiescent state: see Memory above). Debug builds abort when the caller is not a registered,
 * online QSBR reader (also for upsert, delete and the lookups). Thread-safe,
 * lock-free (see the contract for growth). */
int rf_hash_insert(struct rf_hash *h, const void *key, void *value);

/* Sets key -> value whether or not key was present (value != NULL). Returns 0 when it
 * inserted, 1 when it replaced (then *old, if old != NULL, gets the previous value), or
 * -EINVAL / -ENOSPC / -EAGAIN as insert. Thread-safe, lock-free as insert. */
int rf_hash_upsert(struct rf_hash *h, const void *key, void *value, void **old);

/* Removes key. 0 (and *old, if old != NULL, gets its value) or -ENOENT. Thread-safe,
 * lock-free as insert. */
int rf_hash_delete(struct rf_hash *h, const void *key, void **old);

/* The value of key, or NULL when absent. Read-only and wait-free (loads its home bucket and,
 * after an overflow, the next ones); call from a registered online thread. */
void *rf_hash_lookup(const struct rf_hash *h, const void *key);

/* n lookups at once, with the memory accesses of the batch overlapped (prefetching, as DPDK's
 * rte_hash_lookup_bulk): values[i] = rf_hash_lookup(h, keys[i]). Returns how many were found. */
unsigned rf_hash_lookup_bulk(const struct rf_hash *h, const void *const *keys, unsigned n,
			     void **values);

/* Number of entries (sum of the per-thread stripes; see the contract). */
size_t rf_hash_count(const struct rf_hash *h);

/* Number of buckets now (a power of two; grows with the count). */
size_t rf_hash_buckets(const struct rf_hash *h);

/* Key copies (keys > 8 bytes) that came from malloc because the pool was empty (see Memory
 * above); always 0 for shorter keys. */
uint64_t rf_hash_overflow_allocs(const struct rf_hash *h);

/* True when the table's buckets are on 2 MiB hugetlb pages (else 4 KiB pages, with a
 * transparent-hugepage hint). */
bool rf_hash_on_hugepages(const struct rf_hash *h);

/* Key length the table was made with. */
size_t rf_hash_key_len(const struct rf_hash *h);

/* Iteration cursor: rf_hash_iter_init, then rf_hash_iter_next until it returns false. */
struct rf_hash_iter {
	const void *pos; /* private: the table walked */
	size_t next;     /* private: the next slot to look at */
};

void rf_hash_iter_init(const struct rf_hash *h, struct rf_hash_iter *it);

/* Next entry: true with *key (points into the table or the key copy: valid until the caller's next quiescent
 * state) and *value set, or false at the end. Read-only. */
bool rf_hash_iter_next(const struct rf_hash *h, struct rf_hash_iter *it, const void **key,
		       void **value);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_HASH_H */
