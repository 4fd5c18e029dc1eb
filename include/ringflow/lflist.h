/*
 * ringflow/lflist.h: an ordered lock-free singly linked list (Harris 2001, Michael 2002).
 *
 * Nodes are kept sorted by a 64-bit key (ties broken by an optional comparator over a
 * caller's key, which lets the hash keep entries whose 64-bit keys collide). Every change
 * is one compare-and-swap on one `next` word; there is no lock anywhere.
 *
 * The one idea: a node's deletion happens in two steps. First the low bit of the node's own
 * `next` pointer is set (the *mark*): the node is logically deleted, and since every insert
 * or unlink behind it must CAS that same word expecting it unmarked, nothing can be linked
 * after a dying node any more. Then the node is physically unlinked by a CAS on its
 * predecessor's `next`; any thread that walks past a marked node does that unlink for it,
 * so a delete never waits for anyone.
 *
 * Contract:
 *   - insert, delete, lookup and iteration may all run concurrently from any threads.
 *     insert and delete are lock-free and linearizable (at the linking CAS and at the marking
 *     CAS); lookup is read-only (it never writes, so it never unlinks) and linearizable.
 *   - Memory: an unlinked node may still be read by threads that were traversing. The list
 *     hands each unlinked node exactly once to the `retire` callback, which must defer its
 *     reuse until every such reader is done: with QSBR (ringflow/qsbr.h) that means
 *     call_rcu() or a free after synchronize_rcu(). Readers must therefore run inside an
 *     RCU read-side section (a registered, online QSBR thread is always in one) and must not
 *     keep a node pointer across their next quiescent state.
 *   - A node's key (and caller key) must not change while the node is linked.
 *   - Iteration (first/next) sees every node present throughout the walk exactly once, in
 *     order; nodes inserted or deleted during the walk may or may not be seen.
 *
 * Errors: negative errno (-EEXIST, -ENOENT); lookups return NULL when absent.
 */
#ifndef RINGFLOW_LFLIST_H
#define RINGFLOW_LFLIST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

/* Low bit of `next`: the node holding this pointer is logically deleted. Nodes are at least
 * 8-byte aligned, so the bit is free. */
#define RF_LFLIST_MARK ((uintptr_t)1)

struct rf_lflist_node {
	_Atomic(uintptr_t) next; /* successor | RF_LFLIST_MARK */
	uint64_t key;           /* ordering key; constant while linked */
};

/* Tie-break among nodes with equal 64-bit keys: <0, 0, >0 as `node` orders before, equal
 * to, or after the caller's key `ukey`. NULL comparator: 64-bit keys are unique. */
typedef int (*rf_lflist_cmp_fn)(const struct rf_lflist_node *node, const void *ukey, void *arg);

/* Called once for each node this list physically unlinked (from the unlinking thread). */
typedef void (*rf_lflist_retire_fn)(struct rf_lflist_node *node, void *arg);

struct rf_lflist_ops {
	rf_lflist_cmp_fn cmp;       /* may be NULL */
	rf_lflist_retire_fn retire; /* may be NULL: the caller reclaims nodes itself */
	void *arg;                  /* passed to both */
};

struct rf_lflist {
	struct rf_lflist_node head; /* sentinel before every node; never marked */
	struct rf_lflist_ops ops;
};

/* Where a key belongs: prev->next was cur (unmarked) when seen; cur is the first node not
 * ordered before the key, or NULL at the end. */
struct rf_lflist_pos {
	struct rf_lflist_node *prev, *cur;
};

static inline struct rf_lflist_node *rf_lflist_ptr(uintptr_t next)
{
	return (struct rf_lflist_node *)(next & ~RF_LFLIST_MARK);
}

static inline bool rf_lflist_is_marked(const struct rf_lflist_node *n)
{
	/* relaxed: a hint only; decisions are taken by a CAS on the same word */
	return atomic_load_explicit(&n->next, memory_order_relaxed) & RF_LFLIST_MARK;
}

/* Initialises an empty list. ops may be NULL (unique keys, no retire callback). */
void rf_lflist_init(struct rf_lflist *l, const struct rf_lflist_ops *ops);

/* Links n (n->key set, ukey its caller key for the comparator or NULL). 0, or -EEXIST when
 * an equal node is present (n is untouched then). Thread-safe, lock-free. */
int rf_lflist_insert(struct rf_lflist *l, struct rf_lflist_node *n, const void *ukey);

/* Deletes the node equal to (key, ukey): marks it, unlinks it, retires it. 0 or -ENOENT.
 * Thread-safe, lock-free. */
int rf_lflist_delete(struct rf_lflist *l, uint64_t key, const void *ukey);

/* The node equal to (key, ukey), or NULL. Read-only; call inside a read-side section. */
struct rf_lflist_node *rf_lflist_lookup(const struct rf_lflist *l, uint64_t key, const void *ukey);

/* Iteration in key order over unmarked nodes: first node or NULL; next after n or NULL.
 * Read-only; the whole walk must stay inside one read-side section. */
struct rf_lflist_node *rf_lflist_first(const struct rf_lflist *l);
struct rf_lflist_node *rf_lflist_next(const struct rf_lflist_node *n);

/*
 * Building blocks, for structures that are one list with many entry points (the split-ordered
 * hash starts each operation at a bucket's sentinel node instead of the head).
 */

/* Michael's search from `start` (a node that is never marked and orders before the key):
 * fills pos, unlinking (and retiring) every marked node it walks past. True when pos->cur
 * equals (key, ukey). Lock-free; retries from start when a CAS shows the list changed. */
bool rf_lflist_find_from(struct rf_lflist_node *start, uint64_t key, const void *ukey,
			 const struct rf_lflist_ops *ops, struct rf_lflist_pos *pos);

/* Links n between pos->prev and pos->cur with one CAS; false when the list changed there
 * (search again). Sets n->next itself. */
bool rf_lflist_link(const struct rf_lflist_pos *pos, struct rf_lflist_node *n);

/* Sets n's mark bit (logical delete). True when this call set it, false when it was set. */
bool rf_lflist_mark(struct rf_lflist_node *n);

/* Read-only search from `start`: the unmarked node equal to (key, ukey), or NULL. Never writes. */
struct rf_lflist_node *rf_lflist_lookup_from(const struct rf_lflist_node *start, uint64_t key,
					     const void *ukey, const struct rf_lflist_ops *ops);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_LFLIST_H */
