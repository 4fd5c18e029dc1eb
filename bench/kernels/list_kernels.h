/*
 * bench/kernels/list_kernels.h: the mutex-protected ordered list that `ringflow-bench
 * atomics` puts beside ringflow's lock-free list, and the mixed workload both run.
 *
 * The one idea: under contention a single lock serialises every operation, readers included,
 * and the lock's own cache line bounces between the cores on every acquire; a lock-free list
 * lets lookups run in parallel and only conflicting updates retry.
 *
 * ml_list: a sorted singly linked list of unique uint64_t keys, one pthread mutex around
 * every operation. All calls are thread-safe.
 *
 * lf_list: ringflow's lock-free list (ringflow/lflist.h) holding the same keys, nodes from
 * malloc, unlinked nodes freed one grace period later through call_rcu (ringflow/qsbr.h).
 * Every thread that uses an lf_list must be registered with rf_qsbr_register() and pass
 * rf_qsbr_quiescent() between operations (list_mixed_ops does not: the caller does, once
 * per chunk).
 */
#ifndef RINGFLOW_BENCH_LIST_KERNELS_H
#define RINGFLOW_BENCH_LIST_KERNELS_H

#include <pthread.h>
#include <ringflow/lflist.h>
#include <stdbool.h>
#include <stdint.h>

struct ml_node {
	uint64_t key;
	struct ml_node *next;
};

struct ml_list {
	pthread_mutex_t lock;
	struct ml_node *head;
};

/* 0 or -errno. */
int ml_init(struct ml_list *l);
/* Frees every node (no concurrent use). */
void ml_fini(struct ml_list *l);

/* true when key was added / removed / found. */
bool ml_insert(struct ml_list *l, uint64_t key);
bool ml_delete(struct ml_list *l, uint64_t key);
bool ml_lookup(struct ml_list *l, uint64_t key);

/* Keys in the list (takes the lock). */
unsigned ml_count(struct ml_list *l);

struct lf_list {
	struct rf_lflist l;
};

/* Empty list / frees every node still linked (no concurrent use; the caller need not be
 * registered). Nodes already unlinked are freed by call_rcu, possibly after this returns. */
void lf_init(struct lf_list *l);
void lf_fini(struct lf_list *l);

/* true when key was added / removed / found. Thread-safe, lock-free. */
bool lf_insert(struct lf_list *l, uint64_t key);
bool lf_delete(struct lf_list *l, uint64_t key);
bool lf_lookup(struct lf_list *l, uint64_t key);

/* Keys in the list (a walk; exact when no update runs). */
unsigned lf_count(struct lf_list *l);

/* The mixed workload: n operations on keys drawn from [0, key_range) by the xorshift state
 * *rng; update_pct percent are updates (half inserts, half deletes), the rest lookups.
 * Calls the three given functions, so the same loop drives either list. Returns the number
 * of operations that succeeded (found, added or removed). */
struct list_ops {
	bool (*insert)(void *list, uint64_t key);
	bool (*delete)(void *list, uint64_t key);
	bool (*lookup)(void *list, uint64_t key);
};
uint64_t list_mixed_ops(const struct list_ops *ops, void *list, uint64_t *rng, uint64_t n,
			unsigned key_range, unsigned update_pct);

/* The two lists as list_ops. */
extern const struct list_ops ml_ops, lf_ops;

#endif /* RINGFLOW_BENCH_LIST_KERNELS_H */
