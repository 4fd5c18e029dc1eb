/*
 * bench/kernels/list_kernels.c: the mutex list and the mixed workload of list_kernels.h.
 */
#include "list_kernels.h"

#include <ringflow/qsbr.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <urcu-qsbr.h>

int ml_init(struct ml_list *l)
{
	l->head = NULL;
	return -pthread_mutex_init(&l->lock, NULL);
}

void ml_fini(struct ml_list *l)
{
	for (struct ml_node *n = l->head, *next; n; n = next) {
		next = n->next;
		free(n);
	}
	l->head = NULL;
	pthread_mutex_destroy(&l->lock);
}

/* The link that points at the first node with key >= `key` (caller holds the lock). */
static struct ml_node **find_link(struct ml_list *l, uint64_t key)
{
	struct ml_node **link = &l->head;
	while (*link && (*link)->key < key)
		link = &(*link)->next;
	return link;
}

bool ml_insert(struct ml_list *l, uint64_t key)
{
	struct ml_node *n = malloc(sizeof(*n)); /* outside the lock, as a real user would */
	if (!n)
		return false;
	n->key = key;
	pthread_mutex_lock(&l->lock);
	struct ml_node **link = find_link(l, key);
	bool added = !*link || (*link)->key != key;
	if (added) {
		n->next = *link;
		*link = n;
	}
	pthread_mutex_unlock(&l->lock);
	if (!added)
		free(n);
	return added;
}

bool ml_delete(struct ml_list *l, uint64_t key)
{
	pthread_mutex_lock(&l->lock);
	struct ml_node **link = find_link(l, key), *victim = NULL;
	if (*link && (*link)->key == key) {
		victim = *link;
		*link = victim->next;
	}
	pthread_mutex_unlock(&l->lock);
	free(victim);
	return victim != NULL;
}

bool ml_lookup(struct ml_list *l, uint64_t key)
{
	pthread_mutex_lock(&l->lock);
	struct ml_node **link = find_link(l, key);
	bool found = *link && (*link)->key == key;
	pthread_mutex_unlock(&l->lock);
	return found;
}

unsigned ml_count(struct ml_list *l)
{
	unsigned c = 0;
	pthread_mutex_lock(&l->lock);
	for (struct ml_node *n = l->head; n; n = n->next)
		c++;
	pthread_mutex_unlock(&l->lock);
	return c;
}

static bool ml_insert_op(void *l, uint64_t k) { return ml_insert(l, k); }
static bool ml_delete_op(void *l, uint64_t k) { return ml_delete(l, k); }
static bool ml_lookup_op(void *l, uint64_t k) { return ml_lookup(l, k); }

const struct list_ops ml_ops = {ml_insert_op, ml_delete_op, ml_lookup_op};

/* ---- the lock-free list: rf_lflist nodes that free themselves a grace period after unlink ---- */

struct lf_item {
	struct rf_lflist_node node; /* first: the list's node pointer is the item's */
	struct rcu_head rcu;
};

static void lf_item_free(struct rcu_head *head)
{
	rf_qsbr_reclaim_begin(); /* a grace period has passed: no reader holds the item */
	free((struct lf_item *)(void *)((char *)head - offsetof(struct lf_item, rcu)));
}

static void lf_item_retire(struct rf_lflist_node *n, void *arg)
{
	(void)arg;
	rf_qsbr_retire_note();
	call_rcu(&((struct lf_item *)(void *)n)->rcu, lf_item_free);
}

void lf_init(struct lf_list *l)
{
	static const struct rf_lflist_ops ops = {NULL, lf_item_retire, NULL};
	rf_lflist_init(&l->l, &ops);
}

void lf_fini(struct lf_list *l)
{
	/* No user left: unlink nothing, just free what is linked, then the pending frees. */
	struct rf_lflist_node *n = rf_lflist_ptr(atomic_load(&l->l.head.next));
	while (n) {
		struct rf_lflist_node *next = rf_lflist_ptr(atomic_load(&n->next));
		free(n);
		n = next;
	}
	atomic_store(&l->l.head.next, (uintptr_t)0);
	/* Nodes already retired are freed by their call_rcu callbacks whenever those run: they
	 * do not touch the list, so there is nothing to wait for. (rcu_barrier() would do, but
	 * liburcu's own barrier bookkeeping is invisible to TSan and reported as a race.) */
}

bool lf_insert(struct lf_list *l, uint64_t key)
{
	struct lf_item *it = malloc(sizeof(*it));
	if (!it)
		return false;
	it->node.key = key;
	if (rf_lflist_insert(&l->l, &it->node, NULL) == 0)
		return true;
	free(it); /* -EEXIST: never linked, nobody saw it */
	return false;
}

bool lf_delete(struct lf_list *l, uint64_t key)
{
	return rf_lflist_delete(&l->l, key, NULL) == 0;
}

bool lf_lookup(struct lf_list *l, uint64_t key)
{
	return rf_lflist_lookup(&l->l, key, NULL) != NULL;
}

unsigned lf_count(struct lf_list *l)
{
	unsigned c = 0;
	for (struct rf_lflist_node *n = rf_lflist_first(&l->l); n; n = rf_lflist_next(n))
		c++;
	return c;
}

static bool lf_insert_op(void *l, uint64_t k) { return lf_insert(l, k); }
static bool lf_delete_op(void *l, uint64_t k) { return lf_delete(l, k); }
static bool lf_lookup_op(void *l, uint64_t k) { return lf_lookup(l, k); }

const struct list_ops lf_ops = {lf_insert_op, lf_delete_op, lf_lookup_op};

/* ---- the workload ---- */

static inline uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

uint64_t list_mixed_ops(const struct list_ops *ops, void *list, uint64_t *rng, uint64_t n,
			unsigned key_range, unsigned update_pct)
{
	uint64_t ok = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = xorshift(rng);
		uint64_t key = (r >> 8) % key_range;
		unsigned dice = (unsigned)(r & 0xff) % 100;
		if (dice < update_pct / 2)
			ok += ops->insert(list, key);
		else if (dice < update_pct)
			ok += ops->delete(list, key);
		else
			ok += ops->lookup(list, key);
	}
	return ok;
}
