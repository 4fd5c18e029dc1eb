/*
 * tests/hash/test_lflist_stress.c: the bare lock-free list under 3 threads on 2 CPUs:
 * concurrent insert / delete / lookup of 32 hot keys, nodes reclaimed through call_rcu.
 *
 * Each thread counts its successful inserts and deletes per key. Since every successful
 * delete removes exactly one successful insert, at the end sum(inserts) - sum(deletes) must be
 * 0 or 1 for each key, and 1 exactly when the key is in the list (no lost insert, no double
 * delete). Lookups must return a node carrying the key they asked for (a recycled or freed
 * node would not, and ASan would catch the read). The final list must be strictly sorted with
 * no marked node. RF_LFLIST_STRESS_OPS scales it (default 3 * 10^6).
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-qsbr.h>

#include <ringflow/lflist.h>
#include <ringflow/qsbr.h>

#define THREADS 3
#define KEYS 32

struct item {
	struct rf_lflist_node ln;
	struct rcu_head rcu;
	uint64_t key_copy; /* what the node was made for: checked by lookups */
};

static void item_free(struct rcu_head *h)
{
	rf_qsbr_reclaim_begin();
	free((char *)h - offsetof(struct item, rcu));
}

static void item_retire(struct rf_lflist_node *n, void *arg)
{
	(void)arg;
	rf_qsbr_retire_note();
	call_rcu(&((struct item *)n)->rcu, item_free);
}

struct stress {
	struct rf_lflist list;
	uint64_t per_thread;
	uint64_t ins[THREADS][KEYS], del[THREADS][KEYS];
	_Atomic unsigned errors;
};

struct worker {
	struct stress *s;
	unsigned id;
};

static void *worker(void *p)
{
	struct worker *w = p;
	struct stress *s = w->s;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->id % 2, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	rf_qsbr_register();
	uint64_t x = 0x2545f4914f6cdd1dull * (w->id + 1);
	for (uint64_t i = 0; i < s->per_thread; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t key = x % KEYS + 1, op = (x >> 20) % 3;
		if (op == 0) {
			struct item *it = malloc(sizeof(*it));
			if (!it) {
				atomic_fetch_add(&s->errors, 1);
				break;
			}
			it->ln.key = key;
			it->key_copy = key;
			if (rf_lflist_insert(&s->list, &it->ln, NULL) == 0)
				s->ins[w->id][key - 1]++;
			else
				free(it); /* never published */
		} else if (op == 1) {
			if (rf_lflist_delete(&s->list, key, NULL) == 0)
				s->del[w->id][key - 1]++;
		} else {
			struct rf_lflist_node *n = rf_lflist_lookup(&s->list, key, NULL);
			if (n && (n->key != key || ((struct item *)n)->key_copy != key))
				atomic_fetch_add(&s->errors, 1);
		}
		if ((i & 63) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(lflist_stress, concurrent_insert_delete_conserve_every_key)
{
	static struct stress s;
	memset(&s, 0, sizeof(s));
	const char *e = getenv("RF_LFLIST_STRESS_OPS");
	uint64_t total = e && strtoull(e, NULL, 10) >= 1000 ? strtoull(e, NULL, 10) : 3000000ull;
	s.per_thread = total / THREADS;
	struct rf_lflist_ops ops = {NULL, item_retire, NULL};
	rf_lflist_init(&s.list, &ops);
	pthread_t th[THREADS];
	struct worker w[THREADS];
	for (unsigned t = 0; t < THREADS; t++) {
		w[t] = (struct worker){&s, t};
		cr_assert_eq(pthread_create(&th[t], NULL, worker, &w[t]), 0);
	}
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	cr_assert_eq(atomic_load(&s.errors), 0, "a lookup returned a node of another key");

	rf_qsbr_register();
	for (uint64_t k = 1; k <= KEYS; k++) {
		int64_t bal = 0;
		for (unsigned t = 0; t < THREADS; t++)
			bal += (int64_t)s.ins[t][k - 1] - (int64_t)s.del[t][k - 1];
		bool present = rf_lflist_lookup(&s.list, k, NULL) != NULL;
		cr_assert(bal == 0 || bal == 1, "key %lu: inserts - deletes = %ld", (unsigned long)k, (long)bal);
		cr_assert_eq(bal == 1, present, "key %lu: balance %ld but present %d", (unsigned long)k,
			     (long)bal, present);
	}
	uint64_t prev = 0;
	unsigned n = 0;
	struct rf_lflist_node *it = rf_lflist_ptr(atomic_load(&s.list.head.next));
	while (it) {
		uintptr_t next = atomic_load(&it->next);
		cr_assert_not(next & RF_LFLIST_MARK, "marked node left after all deletes returned");
		cr_assert_gt(it->key, prev, "sorted, no duplicates");
		prev = it->key;
		n++;
		it = rf_lflist_ptr(next);
	}
	unsigned iterated = 0;
	for (struct rf_lflist_node *q = rf_lflist_first(&s.list); q; q = rf_lflist_next(q))
		iterated++;
	cr_assert_eq(iterated, n);
	/* Free what is left, after the pending call_rcu frees. */
	while ((it = rf_lflist_first(&s.list)) != NULL)
		rf_lflist_delete(&s.list, it->key, NULL);
	rf_qsbr_barrier();
	rf_qsbr_unregister();
}
