/*
 * ringflow/hash.h: a lock-free, resizable hash table with fixed-length byte keys and
 * `void *` values (a MAC table: 6-byte keys; a flow table: 13-byte 5-tuples; 8-byte ids).
 *
 * Design: split-ordered lists (Shalev & Shavit, "Split-Ordered Lists: Lock-Free Extensible
 * Hash Tables", JACM 2006). All entries sit in ONE lock-free ordered list (ringflow/lflist.h),
 * sorted by the bit-reversed hash. Bucket b is a sentinel node in that list, keyed by the
 * bit-reversed b, in front of exactly the entries whose hash ends in b's bits. Doubling the
 * table from n to 2n buckets then moves nothing: bucket b + n's entries already follow
 * bucket b's in the list, and b + n's sentinel is linked in between lazily, by the first
 * writer that needs it. Buckets live in segments of a directory (segment k holds buckets
 * [2^(k-1), 2^k)), allocated once and never moved, so growing never stops or redirects a
 * reader. Each node carries its bit-reversed hash (the list's order key): most non-matching
 * nodes are rejected on that tag alone, without reading their key.
 *
 * Load factor <= 1/2: the table doubles when the entry count passes half the bucket count
 * (32 B per bucket: 64 MiB of buckets for 1M entries), so a hit walks 1.25 nodes on average.
 * Readers never initialise a bucket; every insert initialises the next two, in index order,
 * so new buckets are ready long before the next doubling. It never shrinks. Nodes come from a ringflow mempool made at create (no malloc on the fast path).
 *
 * Contract:
 *   - insert, delete, upsert, lookup, lookup_bulk, count and iteration may run concurrently,
 *     from any threads registered with QSBR (ringflow/qsbr.h: read the rule there, it applies
 *     to every thread that calls these). create and free may not run concurrently with any
 *     other call on the same table.
 *   - Linearizable: insert at the CAS that links the node, delete at the CAS that swaps the
 *     value to NULL (the node is then marked and unlinked), upsert at its value CAS or link.
 *   - Reads never lock and never write shared memory: lookup only loads. Writers are
 *     lock-free; the entry count is striped per thread (no shared counter line).
 *   - A value returned by lookup stays valid for the caller until its next quiescent state
 *     *as far as the table is concerned*; what the value points at is the caller's business
 *     (defer its free across a grace period if readers may hold it).
 *   - rf_hash_count is a sum of per-thread stripes: exact when no writer is running.
 *   - Iteration visits every entry present throughout the walk exactly once (in split order,
 *     not key order); entries added or removed meanwhile may or may not be visited. The whole
 *     walk must stay between two quiescent states of the walking thread.
 *
 * Memory: nodes come from a mempool of max_entries nodes plus slack (a quarter more, + 4096).
 * A deleted node returns to it one grace period after its unlink (call_rcu; liburcu's
 * call_rcu thread batches every ~10 ms), so a burst of deletes can empty the pool while the
 * table is far from full. Then, and only while the entry count is below max_entries, a node
 * comes from malloc instead (the slow path; rf_hash_overflow_allocs counts them) and goes
 * back to free() after its grace period. -ENOSPC means: the pool is empty and at least
 * max_entries entries are present.
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

#define RF_HASH_KEY_MAX 64      /* longest key, bytes */
#define RF_HASH_NAMESIZE 32

struct rf_hash;

/* Creates an empty table (one bucket) for keys of key_len bytes (1..RF_HASH_KEY_MAX) holding
 * up to max_entries entries (>= 1). flags are RF_MEMPOOL_* flags for the node pool (e.g.
 * RF_MEMPOOL_NO_HUGE; 0 tries hugepages and warns on fallback). NULL + errno: EINVAL bad
 * arguments, ENOMEM no memory. Not thread-safe with other calls on the table. */
struct rf_hash *rf_hash_create(const char *name, size_t key_len, unsigned max_entries,
			       unsigned flags);

/* Waits for pending node reclamation (rcu_barrier: goes offline meanwhile if the caller is
 * online), then frees the table, its nodes and its pool. NULL is ignored. No other thread may
 * use the table during or after this. Values are not freed. */
void rf_hash_free(struct rf_hash *h);

/* Adds key -> value (value != NULL). 0, -EEXIST (key present; table unchanged), -EINVAL
 * (NULL value), -ENOSPC (max_entries entries present: see Memory above). Lock-free, thread-safe. */
int rf_hash_insert(struct rf_hash *h, const void *key, void *value);

/* Sets key -> value whether or not key was present (value != NULL). Returns 0 when it
 * inserted, 1 when it replaced (then *old, if old != NULL, gets the previous value), or
 * -EINVAL / -ENOSPC as insert. Lock-free, thread-safe. */
int rf_hash_upsert(struct rf_hash *h, const void *key, void *value, void **old);

/* Removes key. 0 (and *old, if old != NULL, gets its value) or -ENOENT. Lock-free. */
int rf_hash_delete(struct rf_hash *h, const void *key, void **old);

/* The value of key, or NULL when absent. Read-only, wait-free apart from the walk of one
 * bucket; call from a registered online thread. */
void *rf_hash_lookup(const struct rf_hash *h, const void *key);

/* n lookups at once, with the memory accesses of the batch overlapped (prefetching, as DPDK's
 * rte_hash_lookup_bulk): values[i] = rf_hash_lookup(h, keys[i]). Returns how many were found. */
unsigned rf_hash_lookup_bulk(const struct rf_hash *h, const void *const *keys, unsigned n,
			     void **values);

/* Number of entries (sum of the per-thread stripes; see the contract). */
size_t rf_hash_count(const struct rf_hash *h);

/* Number of buckets now (a power of two; grows with the count). */
size_t rf_hash_buckets(const struct rf_hash *h);

/* Nodes that came from malloc because the pool was empty (see Memory above). */
uint64_t rf_hash_overflow_allocs(const struct rf_hash *h);

/* Key length the table was made with. */
size_t rf_hash_key_len(const struct rf_hash *h);

/* Iteration cursor: rf_hash_iter_init, then rf_hash_iter_next until it returns false. */
struct rf_hash_iter {
	const void *pos; /* private: the list node reached */
};

void rf_hash_iter_init(const struct rf_hash *h, struct rf_hash_iter *it);

/* Next entry: true with *key (points into the node: valid until the caller's next quiescent
 * state) and *value set, or false at the end. Read-only. */
bool rf_hash_iter_next(const struct rf_hash *h, struct rf_hash_iter *it, const void **key,
		       void **value);

#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_HASH_H */
