/*
 * hash/lflist.c: the Harris/Michael ordered lock-free list (contract in ringflow/lflist.h).
 *
 * Every write is a CAS on a `next` word. Three kinds of CAS exist:
 *   link:   prev->next  cur -> n        (insert; n->next = cur was stored before)
 *   mark:   n->next     succ -> succ|1  (logical delete)
 *   unlink: prev->next  cur -> succ     (physical delete of a marked cur)
 * Link and unlink expect prev->next *unmarked*, so once a node is marked nothing can be
 * linked behind it and its successor pointer is frozen: the unlink cannot lose a node.
 *
 * Memory ordering: a node's fields (key, caller key, value) are written before the link CAS,
 * which is a release; every load of a `next` word that is followed by reading the node it
 * points to is an acquire, pairing with that release. The mark and unlink CASes publish no
 * new data (the nodes they expose were published by their own link), so they only need to
 * be ordered after the loads that chose them: acquire on failure, release on success keeps
 * the successor's publication chain intact for threads that read the new pointer.
 */
#include <ringflow/lflist.h>

#include <stddef.h>

/* Order of node against (key, ukey): <0 before, 0 equal, >0 after. */
static inline int node_order(const struct rf_lflist_node *n, uint64_t key, const void *ukey,
			     const struct rf_lflist_ops *ops)
{
	if (n->key != key)
		return n->key < key ? -1 : 1;
	return ops && ops->cmp ? ops->cmp(n, ukey, ops->arg) : 0;
}

void rf_lflist_init(struct rf_lflist *l, const struct rf_lflist_ops *ops)
{
	atomic_init(&l->head.next, (uintptr_t)0);
	l->head.key = 0;
	if (ops)
		l->ops = *ops;
	else
		l->ops = (struct rf_lflist_ops){NULL, NULL, NULL};
}

bool rf_lflist_find_from(struct rf_lflist_node *start, uint64_t key, const void *ukey,
			 const struct rf_lflist_ops *ops, struct rf_lflist_pos *pos)
{
retry:;
	struct rf_lflist_node *prev = start;
	/* acquire: pairs with the release link/unlink CAS that stored this pointer, so the
	 * node it names is fully initialised when we read it. */
	struct rf_lflist_node *cur = rf_lflist_ptr(atomic_load_explicit(&prev->next, memory_order_acquire));
	for (;;) {
		if (!cur) {
			pos->prev = prev;
			pos->cur = NULL;
			return false;
		}
		/* acquire: as above, for the successor we may step to. */
		uintptr_t succ = atomic_load_explicit(&cur->next, memory_order_acquire);
		if (succ & RF_LFLIST_MARK) {
			/* cur is logically deleted: unlink it. Expecting prev->next == cur unmarked
			 * fails if prev itself got marked or something was linked in between. */
			uintptr_t expect = (uintptr_t)cur;
			/* release on success: readers of prev->next then acquire the successor
			 * through us; acquire on failure: we restart from what we saw. */
			if (!atomic_compare_exchange_strong_explicit(&prev->next, &expect,
								     succ & ~RF_LFLIST_MARK,
								     memory_order_release,
								     memory_order_acquire))
				goto retry;
			if (ops && ops->retire)
				ops->retire(cur, ops->arg);
			cur = rf_lflist_ptr(succ);
			continue;
		}
		int o = node_order(cur, key, ukey, ops);
		if (o >= 0) {
			pos->prev = prev;
			pos->cur = cur;
			return o == 0;
		}
		prev = cur;
		cur = rf_lflist_ptr(succ);
	}
}

bool rf_lflist_link(const struct rf_lflist_pos *pos, struct rf_lflist_node *n)
{
	/* relaxed: n is private until the CAS below publishes it. */
	atomic_store_explicit(&n->next, (uintptr_t)pos->cur, memory_order_relaxed);
	uintptr_t expect = (uintptr_t)pos->cur;
	/* release: publishes n's fields (key, next, the caller's payload) to every thread that
	 * acquires prev->next (find/lookup loads). Failure needs nothing: the caller searches again. */
	return atomic_compare_exchange_strong_explicit(&pos->prev->next, &expect, (uintptr_t)n,
						       memory_order_release, memory_order_relaxed);
}

bool rf_lflist_mark(struct rf_lflist_node *n)
{
	uintptr_t succ = atomic_load_explicit(&n->next, memory_order_relaxed);
	while (!(succ & RF_LFLIST_MARK)) {
		/* release: orders the caller's logical-delete writes (the hash's value = NULL)
		 * before the mark that lets others unlink and retire the node. Relaxed failure:
		 * we only loop on the fresh value. */
		if (atomic_compare_exchange_weak_explicit(&n->next, &succ, succ | RF_LFLIST_MARK,
							  memory_order_release, memory_order_relaxed))
			return true;
	}
	return false;
}

struct rf_lflist_node *rf_lflist_lookup_from(const struct rf_lflist_node *start, uint64_t key,
					     const void *ukey, const struct rf_lflist_ops *ops)
{
	/* acquire: pairs with the link CAS (release) that published each node we step to.
	 * Marked nodes are walked through, never unlinked: their next stays valid until a
	 * grace period after their unlink, and we are inside a read-side section. */
	const struct rf_lflist_node *cur =
		rf_lflist_ptr(atomic_load_explicit(&start->next, memory_order_acquire));
	while (cur) {
		uintptr_t succ = atomic_load_explicit(&cur->next, memory_order_acquire);
		int o = node_order(cur, key, ukey, ops);
		if (o >= 0)
			return o == 0 && !(succ & RF_LFLIST_MARK) ? (struct rf_lflist_node *)cur : NULL;
		cur = rf_lflist_ptr(succ);
	}
	return NULL;
}

int rf_lflist_insert(struct rf_lflist *l, struct rf_lflist_node *n, const void *ukey)
{
	struct rf_lflist_pos pos;
	for (;;) {
		if (rf_lflist_find_from(&l->head, n->key, ukey, &l->ops, &pos))
			return -EEXIST;
		if (rf_lflist_link(&pos, n))
			return 0;
	}
}

int rf_lflist_delete(struct rf_lflist *l, uint64_t key, const void *ukey)
{
	struct rf_lflist_pos pos;
	for (;;) {
		if (!rf_lflist_find_from(&l->head, key, ukey, &l->ops, &pos))
			return -ENOENT;
		if (!rf_lflist_mark(pos.cur))
			continue; /* another delete won this node; look again */
		/* acquire: we are about to publish succ through prev->next, so we must have
		 * synchronised with the link that published succ (TSan caught this one relaxed). */
		uintptr_t succ = atomic_load_explicit(&pos.cur->next, memory_order_acquire);
		uintptr_t expect = (uintptr_t)pos.cur;
		/* release: as the unlink in find_from. */
		if (atomic_compare_exchange_strong_explicit(&pos.prev->next, &expect,
							    succ & ~RF_LFLIST_MARK,
							    memory_order_release, memory_order_relaxed)) {
			if (l->ops.retire)
				l->ops.retire(pos.cur, l->ops.arg);
		} else {
			/* The neighbourhood changed: a search unlinks (and retires) it for us. */
			rf_lflist_find_from(&l->head, key, ukey, &l->ops, &pos);
		}
		return 0;
	}
}

struct rf_lflist_node *rf_lflist_lookup(const struct rf_lflist *l, uint64_t key, const void *ukey)
{
	return rf_lflist_lookup_from(&l->head, key, ukey, &l->ops);
}

static struct rf_lflist_node *first_unmarked(uintptr_t p)
{
	struct rf_lflist_node *n = rf_lflist_ptr(p);
	while (n) {
		/* acquire: pairs with the link CAS that published the successor. */
		uintptr_t succ = atomic_load_explicit(&n->next, memory_order_acquire);
		if (!(succ & RF_LFLIST_MARK))
			return n;
		n = rf_lflist_ptr(succ);
	}
	return NULL;
}

struct rf_lflist_node *rf_lflist_first(const struct rf_lflist *l)
{
	/* acquire: pairs with the link CAS that published the first node. */
	return first_unmarked(atomic_load_explicit(&l->head.next, memory_order_acquire));
}

struct rf_lflist_node *rf_lflist_next(const struct rf_lflist_node *n)
{
	return first_unmarked(atomic_load_explicit(&n->next, memory_order_acquire));
}
