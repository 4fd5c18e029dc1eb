/*
 * ringflow/ring.h: bounded lock-free rings of pointers (SPSC, MPSC, SPMC, MPMC).
 *
 * Shaped like DPDK's rte_ring: a power-of-two array of `void *` slots and two head/tail
 * pairs, one for producers and one for consumers, each on its own cache line(s). Indexes are
 * free-running 32-bit counters (they wrap past 2^32; only differences are used), so all
 * `count` slots are usable.
 *
 * How an enqueue works (dequeue is the mirror image):
 *   1. reserve: move prod.head forward by n. Multi-producer: one CAS on prod.head. Single
 *      producer: a plain store, and the consumer tail is read from a cached copy that is only
 *      refreshed when the cache says the ring looks full, so the SPSC fast path performs no
 *      atomic read-modify-write and rarely touches the consumer's cache line.
 *   2. copy the n pointers into the reserved slots.
 *   3. publish: store prod.tail = new head with release. Multi-producer: first wait until
 *      earlier producers have published (prod.tail == our old head), so tail moves in order.
 *
 * Contract:
 *   - Enqueues may run concurrently with dequeues, always.
 *   - With RF_RING_SP_ENQ, at most one thread enqueues at a time; without it any number may.
 *     Likewise RF_RING_SC_DEQ for dequeues.
 *   - Each element is dequeued exactly once; with one producer, elements come out in the
 *     order they went in; with many, each producer's elements keep their relative order
 *     whichever consumer takes them, as reservations are published in reservation order.
 *   - A thread preempted between reserve and publish stalls other producers (or consumers)
 *     of the same ring until it runs again; waiters spin with `pause`, then yield the CPU,
 *     so an oversubscribed core makes progress.
 *   - rf_ring_count() and friends are snapshots: 0..capacity, exact when the ring is quiescent
 *     and, under concurrent use, the count at one instant (or a lower bound when consumers
 *     never pause); a ring kept near-empty never reads as full.
 *   - Failed enqueues (a bulk that found too little room, a burst that placed fewer than
 *     asked) are counted on the failure path only, on a line of their own (struct
 *     rf_ring_fail), so a successful enqueue writes nothing new; rf_ring_enqueue_failures
 *     reads the count from any thread.
 *
 * Errors: functions that move objects return the number moved (0 when nothing could be);
 * invalid arguments (NULL ring, NULL array with n > 0, bulk n larger than the ring can ever
 * hold) return 0 and set errno = EINVAL. rf_ring_create returns NULL with errno set.
 */
#ifndef RINGFLOW_RING_H
#define RINGFLOW_RING_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_RING_SP_ENQ 0x1u /* single producer: enqueue without CAS */
#define RF_RING_SC_DEQ 0x2u /* single consumer: dequeue without CAS */
#define RF_RING_NAMESIZE 32
#define RF_RING_SZ_MAX (1u << 31) /* largest count: differences of 32-bit indexes stay exact */

/*
 * Alignment of each block of ring state. 128 B rather than 64 B keeps two blocks out of the
 * same adjacent-line-prefetch pair. Fixed: the layout of a public struct must not depend on
 * a macro a user could define before including this header.
 */
#define RF_RING_HEADTAIL_ALIGN 128

/*
 * One side of the ring, on two cache-line blocks: what only this side touches (head and, for
 * a single-threaded side, its cached copy of the other side's tail) apart from the tail the
 * other side polls. So a consumer spinning on prod.tail never steals the line the producer
 * reserves on, and a single producer writes the shared line once per burst (the tail store).
 */
struct rf_ring_headtail {
	_Atomic(uint32_t) head; /* next index to reserve */
	uint32_t single;       /* 1: single-threaded side, no CAS */
	uint32_t other_tail_cache; /* single side only: last value read of the other side's tail */
	/* everything before this index is published to the other side */
	alignas(RF_RING_HEADTAIL_ALIGN) _Atomic(uint32_t) tail;
};

/*
 * Failure counters, written only when an enqueue could not place all its objects: a block of
 * their own, so neither side's head or tail line is touched by them (a full ring is the
 * moment the consumer polls prod.tail hardest). Producers on different threads may fail
 * together, so the count is a relaxed read-modify-write (a statistic; it orders nothing).
 */
struct rf_ring_fail {
	_Atomic(uint64_t) calls; /* enqueue calls that placed fewer objects than asked */
	_Atomic(uint64_t) objs;  /* objects those calls could not place */
};

struct rf_ring {
	char name[RF_RING_NAMESIZE];
	unsigned flags;
	uint32_t size;     /* number of slots, a power of two */
	uint32_t mask;     /* size - 1 */
	uint32_t capacity; /* usable slots (== size) */
	alignas(RF_RING_HEADTAIL_ALIGN) struct rf_ring_headtail prod;
	alignas(RF_RING_HEADTAIL_ALIGN) struct rf_ring_headtail cons;
	alignas(RF_RING_HEADTAIL_ALIGN) struct rf_ring_fail enq_fail;
	alignas(RF_RING_HEADTAIL_ALIGN) void *slots[];
};

/* Creates a ring of `count` slots (a power of two, 1..2^31); flags RF_RING_SP_ENQ |
 * RF_RING_SC_DEQ. Returns NULL with errno EINVAL (bad count/flags) or ENOMEM. */
struct rf_ring *rf_ring_create(const char *name, unsigned count, unsigned flags);

/* Frees a ring made by rf_ring_create (NULL is ignored). No thread may still use it. */
void rf_ring_free(struct rf_ring *r);

/* Bytes needed for a ring of `count` slots placed by rf_ring_init, or 0 for a bad count. */
size_t rf_ring_get_memsize(unsigned count);

/* Initialises a ring in caller memory of rf_ring_get_memsize(count) bytes, aligned to
 * RF_RING_HEADTAIL_ALIGN. Returns 0 or -EINVAL. */
int rf_ring_init(struct rf_ring *r, const char *name, unsigned count, unsigned flags);

/* ---- internals of the fast path (inline for speed; not part of the API) ---- */

enum rf_ring_behavior { RF_RING_FIXED, RF_RING_VARIABLE };

/* Waits (pause, then yield) until `ht->tail` reaches `expected`: earlier reservations of
 * this side must publish first so tail only moves in order. */
static inline void rf_ring_wait_tail_pvt(struct rf_ring_headtail *ht, uint32_t expected)
{
	unsigned spins = 0;
	/* acquire: pairs with the release store of this tail by the thread before us. Our own
	 * release store then carries its slot accesses too, so the other side, which
	 * synchronises only with the last tail store, also sees every earlier one's. A relaxed
	 * wait would leave that chain broken in the C11 model (TSan reports it). */
	while (atomic_load_explicit(&ht->tail, memory_order_acquire) != expected) {
		if (++spins < 128)
			rf_cpu_relax();
		else
			sched_yield(); /* the thread we wait for may be preempted on this CPU */
	}
}

/* Reserves up to n slots for the producer side; returns the count, sets *old_head. */
static inline uint32_t rf_ring_move_prod_head_pvt(struct rf_ring *r, uint32_t n,
						  enum rf_ring_behavior behavior,
						  uint32_t *old_head, uint32_t *free_entries)
{
	struct rf_ring_headtail *p = &r->prod;
	if (p->single) {
		uint32_t head = atomic_load_explicit(&p->head, memory_order_relaxed); /* ours only */
		uint32_t free_n = r->capacity + p->other_tail_cache - head;
		if (free_n < n) {
			/* acquire: pairs with the consumer's release store of cons.tail, so the
			 * consumer has finished reading the slots we are about to overwrite. */
			p->other_tail_cache = atomic_load_explicit(&r->cons.tail, memory_order_acquire);
			free_n = r->capacity + p->other_tail_cache - head;
		}
		if (free_n < n)
			n = behavior == RF_RING_FIXED ? 0 : free_n;
		*old_head = head;
		*free_entries = free_n;
		if (n)
			atomic_store_explicit(&p->head, head + n, memory_order_relaxed); /* ours only */
		return n;
	}

	uint32_t max = n;
	/* acquire: orders this head read before the cons.tail read below (as DPDK's fence),
	 * so the free count is never computed from a tail older than the head it pairs with. */
	uint32_t head = atomic_load_explicit(&p->head, memory_order_acquire);
	for (;;) {
		n = max;
		/* acquire: pairs with the consumers' release store of cons.tail (slots read). */
		uint32_t cons_tail = atomic_load_explicit(&r->cons.tail, memory_order_acquire);
		uint32_t free_n = r->capacity + cons_tail - head;
		if (free_n < n)
			n = behavior == RF_RING_FIXED ? 0 : free_n;
		*free_entries = free_n;
		if (n == 0)
			break;
		/* The CAS only claims slots; publication is the release store of prod.tail.
		 * Acquire on failure reloads `head` as above; C11 wants success at least as
		 * strong as failure, so success is acquire too (free on x86). */
		if (atomic_compare_exchange_weak_explicit(&p->head, &head, head + n,
							  memory_order_acquire, memory_order_acquire))
			break;
	}
	*old_head = head;
	return n;
}

/* Reserves up to n filled slots for the consumer side; returns the count, sets *old_head. */
static inline uint32_t rf_ring_move_cons_head_pvt(struct rf_ring *r, uint32_t n,
						  enum rf_ring_behavior behavior,
						  uint32_t *old_head, uint32_t *entries)
{
	struct rf_ring_headtail *c = &r->cons;
	if (c->single) {
		uint32_t head = atomic_load_explicit(&c->head, memory_order_relaxed); /* ours only */
		uint32_t avail = c->other_tail_cache - head;
		if (avail < n) {
			/* acquire: pairs with the producer's release store of prod.tail, so the
			 * slot contents written before it are visible to our reads. */
			c->other_tail_cache = atomic_load_explicit(&r->prod.tail, memory_order_acquire);
			avail = c->other_tail_cache - head;
		}
		if (avail < n)
			n = behavior == RF_RING_FIXED ? 0 : avail;
		*old_head = head;
		*entries = avail;
		if (n)
			atomic_store_explicit(&c->head, head + n, memory_order_relaxed); /* ours only */
		return n;
	}

	uint32_t max = n;
	/* acquire: orders this head read before the prod.tail read (see producer side). */
	uint32_t head = atomic_load_explicit(&c->head, memory_order_acquire);
	for (;;) {
		n = max;
		/* acquire: pairs with the producers' release store of prod.tail (slots written). */
		uint32_t prod_tail = atomic_load_explicit(&r->prod.tail, memory_order_acquire);
		uint32_t avail = prod_tail - head;
		if (avail < n)
			n = behavior == RF_RING_FIXED ? 0 : avail;
		*entries = avail;
		if (n == 0)
			break;
		/* claim only; the release store of cons.tail publishes "slots read". Acquire
		 * as on the producer side (failure reloads head; success must match). */
		if (atomic_compare_exchange_weak_explicit(&c->head, &head, head + n,
							  memory_order_acquire, memory_order_acquire))
			break;
	}
	*old_head = head;
	return n;
}

/* Publishes [old_head, old_head + n) to the other side, in reservation order. */
static inline void rf_ring_update_tail_pvt(struct rf_ring_headtail *ht, uint32_t old_head,
					   uint32_t n)
{
	if (!ht->single)
		rf_ring_wait_tail_pvt(ht, old_head);
	/* release: pairs with the other side's acquire load of this tail; it makes our slot
	 * writes (producer) or slot reads (consumer) happen-before the other side's reuse. */
	atomic_store_explicit(&ht->tail, old_head + n, memory_order_release);
}

/*
 * A single producer that just published [head, head + n) asks for the slot lines of its next
 * burst, [head + n, head + 2n), in a writable state now, so their ownership transfers (the
 * consumer read each of them one lap ago) overlap with this call's return and the next
 * call's work instead of each stalling the store that needs it. Far cores (~190 ns a
 * transfer) gain most; see docs/ring.md. Only whole lines past the one just written, and
 * only when the cached consumer tail shows them free (`ready_after`: slots free after this
 * burst, a lower bound), so no line the consumer may still read is pulled away from it.
 * Bursts under one line (8 slots) skip it: their next slot shares the line just written.
 * A single consumer does the same for reading (write = false): the next burst's lines, once
 * its cached producer tail shows them published (`ready_after`: entries left after this
 * burst), so no line the producer may still be writing is pulled away from it.
 */
static inline void rf_ring_prefetch_next_pvt(struct rf_ring *r, uint32_t head, uint32_t n,
					     uint32_t ready_after, bool write)
{
	if (n < RF_CACHE_LINE / sizeof(void *) || ready_after < n)
		return;
	uintptr_t from = (uintptr_t)&r->slots[(head + n) & r->mask];
	uintptr_t end = from + (uintptr_t)n * sizeof(void *);
	uintptr_t base = (uintptr_t)r->slots;
	uintptr_t limit = base + (uintptr_t)r->size * sizeof(void *);
	from = (from + RF_CACHE_LINE - 1) & ~(uintptr_t)(RF_CACHE_LINE - 1);
	for (uintptr_t a = from; a < end; a += RF_CACHE_LINE) {
		const void *line = (const void *)(a < limit ? a : a - (limit - base));
		if (write)
			rf_prefetch_write(line);
		else
			__builtin_prefetch(line, 0, 3);
	}
}

/* The failure path of an enqueue: want objects asked, got placed (got < want). Called after
 * the placed objects are published, so the consumer never waits on the count. A single
 * producer is the counters' only writer: a relaxed load and store, no locked instruction
 * (on x86 a locked add drains the store buffer, i.e. waits for every slot line still in
 * flight to the consumer: a whole cross-core transfer on far cores, on every call that finds
 * the ring full). Several producers may fail together: a relaxed read-modify-write. */
static inline void rf_ring_count_fail_pvt(struct rf_ring *r, unsigned want, unsigned got)
{
	if (r->prod.single) {
		/* relaxed: a statistic with one writer, read by rf_ring_enqueue_failures. */
		atomic_store_explicit(&r->enq_fail.calls,
				      atomic_load_explicit(&r->enq_fail.calls, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&r->enq_fail.objs,
				      atomic_load_explicit(&r->enq_fail.objs, memory_order_relaxed) +
					      (want - got),
				      memory_order_relaxed);
		return;
	}
	/* relaxed: a statistic, read by rf_ring_enqueue_failures; no data is published by it. */
	atomic_fetch_add_explicit(&r->enq_fail.calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->enq_fail.objs, want - got, memory_order_relaxed);
}

/* Copies n pointers into the slots from index idx (already masked), wrapping at size. Four
 * at a time, as DPDK's __rte_ring_enqueue_elems_64: a burst of 32 is eight steps of four
 * independent moves, not 32 trips round a loop. */
static inline void rf_ring_copy_in_pvt(void **slots, uint32_t size, uint32_t idx,
				       void *const *objs, unsigned n)
{
	unsigned i = 0;
	if (n == 1) { /* the single-object calls (rf_ring_enqueue): one move, no loop set-up */
		slots[idx] = objs[0];
		return;
	}
	if (rf_likely(idx + n <= size)) {
		void **s = slots + idx;
		for (; i + 4 <= n; i += 4) {
			s[i] = objs[i];
			s[i + 1] = objs[i + 1];
			s[i + 2] = objs[i + 2];
			s[i + 3] = objs[i + 3];
		}
		if (n & 2) { /* the last 1..3 without a loop: a burst of one is one move */
			s[i] = objs[i];
			s[i + 1] = objs[i + 1];
			i += 2;
		}
		if (n & 1)
			s[i] = objs[i];
		return;
	}
	for (; idx < size; i++, idx++)
		slots[idx] = objs[i];
	for (idx = 0; i < n; i++, idx++)
		slots[idx] = objs[i];
}

/* The mirror of rf_ring_copy_in_pvt: n pointers out of the slots from index idx. */
static inline void rf_ring_copy_out_pvt(void *const *slots, uint32_t size, uint32_t idx,
					void **objs, unsigned n)
{
	unsigned i = 0;
	if (n == 1) { /* as in rf_ring_copy_in_pvt */
		objs[0] = slots[idx];
		return;
	}
	if (rf_likely(idx + n <= size)) {
		void *const *s = slots + idx;
		for (; i + 4 <= n; i += 4) {
			objs[i] = s[i];
			objs[i + 1] = s[i + 1];
			objs[i + 2] = s[i + 2];
			objs[i + 3] = s[i + 3];
		}
		if (n & 2) { /* the last 1..3, as in rf_ring_copy_in_pvt */
			objs[i] = s[i];
			objs[i + 1] = s[i + 1];
			i += 2;
		}
		if (n & 1)
			objs[i] = s[i];
		return;
	}
	for (; idx < size; i++, idx++)
		objs[i] = slots[idx];
	for (idx = 0; i < n; i++, idx++)
		objs[i] = slots[idx];
}

/* Published entries: a consistent snapshot, never more than the capacity and never "full"
 * from a wrap. cons.tail is read first, prod.tail second, then cons.tail again: if it did not
 * move, (prod, cons) held together at the prod.tail read and the difference is exact. If a
 * consumer kept moving, after a few tries the later cons.tail gives a lower bound (clamped at
 * 0), so a ring a consumer keeps near-empty never reads as full. */
static inline uint32_t rf_ring_used_pvt(const struct rf_ring *r)
{
	uint32_t prod_tail = 0, cons_tail = 0;
	for (int tries = 0; tries < 8; tries++) {
		/* acquire: pairs with the consumer's release store of cons.tail; that consumer
		 * had read prod.tail >= this value before its store, so (coherence) the prod.tail
		 * read below, ordered after this one by the acquire, is >= it: no wrap. */
		uint32_t cons_first = atomic_load_explicit(&r->cons.tail, memory_order_acquire);
		/* acquire: pairs with the producer's release store of prod.tail; that producer
		 * had read cons.tail >= prod_tail - capacity, so the re-read below (ordered after
		 * this load) is too: an unchanged cons.tail bounds the difference by capacity. */
		prod_tail = atomic_load_explicit(&r->prod.tail, memory_order_acquire);
		/* relaxed: only compared with cons_first; the acquire above orders it. */
		cons_tail = atomic_load_explicit(&r->cons.tail, memory_order_relaxed);
		if (cons_tail == cons_first)
			return prod_tail - cons_tail; /* <= capacity: both held at one instant */
	}
	/* cons.tail moved on every try: prod_tail - cons_tail is at most the count when prod.tail
	 * was read (cons only grows); a consumer that overtook prod_tail since makes it negative. */
	int32_t used = (int32_t)(prod_tail - cons_tail);
	if (used < 0)
		return 0;
	return (uint32_t)used > r->capacity ? r->capacity : (uint32_t)used;
}

static inline unsigned rf_ring_do_enqueue_pvt(struct rf_ring *r, void *const *objs, unsigned n,
					      enum rf_ring_behavior behavior,
					      unsigned *free_space)
{
	if (rf_unlikely(r == NULL || (objs == NULL && n > 0) ||
			(behavior == RF_RING_FIXED && r != NULL && n > r->capacity))) {
		errno = EINVAL;
		if (free_space)
			*free_space = r ? r->capacity - rf_ring_used_pvt(r) : 0;
		return 0;
	}
	uint32_t head, free_n;
	unsigned want = n;
	n = rf_ring_move_prod_head_pvt(r, n, behavior, &head, &free_n);
	if (n) {
		rf_ring_copy_in_pvt(r->slots, r->size, head & r->mask, objs, n);
		rf_ring_update_tail_pvt(&r->prod, head, n);
		if (r->prod.single)
			rf_ring_prefetch_next_pvt(r, head, n, free_n - n, true);
	}
	if (rf_unlikely(n < want))
		rf_ring_count_fail_pvt(r, want, n);
	if (free_space)
		*free_space = free_n - n;
	return n;
}

static inline unsigned rf_ring_do_dequeue_pvt(struct rf_ring *r, void **objs, unsigned n,
					      enum rf_ring_behavior behavior, unsigned *available)
{
	if (rf_unlikely(r == NULL || (objs == NULL && n > 0) ||
			(behavior == RF_RING_FIXED && r != NULL && n > r->capacity))) {
		errno = EINVAL;
		if (available)
			*available = r ? rf_ring_used_pvt(r) : 0;
		return 0;
	}
	uint32_t head, avail;
	n = rf_ring_move_cons_head_pvt(r, n, behavior, &head, &avail);
	if (n) {
		rf_ring_copy_out_pvt(r->slots, r->size, head & r->mask, objs, n);
		rf_ring_update_tail_pvt(&r->cons, head, n);
		if (r->cons.single)
			rf_ring_prefetch_next_pvt(r, head, n, avail - n, false);
	}
	if (available)
		*available = avail - n;
	return n;
}

/* ---- the API ---- */

/* Enqueues all n objects or none. Returns n or 0; *free_space (may be NULL) gets the free
 * slots left afterwards. Thread-safe per the ring's producer mode. */
static inline unsigned rf_ring_enqueue_bulk(struct rf_ring *r, void *const *objs, unsigned n,
					    unsigned *free_space)
{
	return rf_ring_do_enqueue_pvt(r, objs, n, RF_RING_FIXED, free_space);
}

/* Enqueues as many of the n objects as fit (objs[0] first). Returns the count enqueued. */
static inline unsigned rf_ring_enqueue_burst(struct rf_ring *r, void *const *objs, unsigned n,
					     unsigned *free_space)
{
	return rf_ring_do_enqueue_pvt(r, objs, n, RF_RING_VARIABLE, free_space);
}

/* Dequeues exactly n objects or none into objs. Returns n or 0; *available (may be NULL)
 * gets the entries left afterwards. Thread-safe per the ring's consumer mode. */
static inline unsigned rf_ring_dequeue_bulk(struct rf_ring *r, void **objs, unsigned n,
					    unsigned *available)
{
	return rf_ring_do_dequeue_pvt(r, objs, n, RF_RING_FIXED, available);
}

/* Dequeues up to n objects (oldest first). Returns the count dequeued. */
static inline unsigned rf_ring_dequeue_burst(struct rf_ring *r, void **objs, unsigned n,
					     unsigned *available)
{
	return rf_ring_do_dequeue_pvt(r, objs, n, RF_RING_VARIABLE, available);
}

/* Enqueues one object; returns 0 or -ENOBUFS (full). */
static inline int rf_ring_enqueue(struct rf_ring *r, void *obj)
{
	return rf_ring_enqueue_bulk(r, &obj, 1, NULL) ? 0 : -ENOBUFS;
}

/* Dequeues one object into *obj; returns 0 or -ENOENT (empty). */
static inline int rf_ring_dequeue(struct rf_ring *r, void **obj)
{
	return rf_ring_dequeue_bulk(r, obj, 1, NULL) ? 0 : -ENOENT;
}

/* Entries in the ring (a snapshot; exact when quiescent). 0 for NULL. */
static inline unsigned rf_ring_count(const struct rf_ring *r)
{
	return r ? rf_ring_used_pvt(r) : 0;
}

/* Free slots (a snapshot). 0 for NULL. */
static inline unsigned rf_ring_free_count(const struct rf_ring *r)
{
	return r ? r->capacity - rf_ring_count(r) : 0;
}

/* True when the ring holds nothing (snapshot). A NULL ring is empty. */
static inline bool rf_ring_empty(const struct rf_ring *r)
{
	return rf_ring_count(r) == 0;
}

/* True when no slot is free (snapshot). A NULL ring is not full. */
static inline bool rf_ring_full(const struct rf_ring *r)
{
	return r && rf_ring_count(r) == r->capacity;
}

/* Enqueue calls that placed fewer objects than asked since creation (a full ring: a bulk
 * that placed none, a burst cut short), and in *objs (may be NULL) the objects they could
 * not place. Calls with n == 0 and invalid arguments are not counted. Any thread, any time
 * (relaxed loads; exact when quiescent). 0 for NULL. */
static inline uint64_t rf_ring_enqueue_failures(const struct rf_ring *r, uint64_t *objs)
{
	uint64_t calls = 0, o = 0;
	if (r) {
		calls = atomic_load_explicit(&r->enq_fail.calls, memory_order_relaxed);
		o = atomic_load_explicit(&r->enq_fail.objs, memory_order_relaxed);
	}
	if (objs)
		*objs = o;
	return calls;
}

/* Usable slots of the ring (== count given at creation). */
static inline unsigned rf_ring_get_capacity(const struct rf_ring *r)
{
	return r ? r->capacity : 0;
}

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_RING_H */
