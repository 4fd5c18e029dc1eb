/*
 * ringflow/slotring.h: a single-producer single-consumer ring whose slots carry their own
 * "full" state, for the lowest one-way handoff latency between two threads.
 *
 * Why a second ring: in an index ring (ringflow/ring.h, DPDK's rte_ring) the consumer first
 * reads the producer's tail (one cache line) and only then the slot (another line), so every
 * handoff pays two dependent line transfers. Here each 16-byte slot holds the object and a
 * sequence word the producer stores last (release): the consumer polls the slot itself, so a
 * handoff touches one shared line, not two, as in FastForward (Giacomoni et al., PPoPP'08) and
 * Vyukov's bounded queue (docs/ring.md measures what that buys on this VM). The consumer never writes a slot: it publishes its
 * own position on a private line, which the producer reads only when its cached copy says
 * the ring is full. The price: 16 B per slot instead of 8, so bulk throughput moves two lines
 * per eight objects where rf_ring moves one.
 *
 * Which to use: rf_slotring for request/response or wake-up paths where latency of single
 * objects rules (one object at a time, a mostly empty ring); rf_ring for bursts (packet
 * batches between pollers), for many producers or consumers, and when the count of entries
 * matters (rf_ring_count).
 *
 * Contract: exactly one thread enqueues and exactly one thread dequeues at any time (they
 * may be different threads, and may change over time if the hand-over is synchronised by the
 * caller). Objects come out in the order they went in, each exactly once. Any pointer value,
 * NULL included, may be enqueued.
 *
 * Errors: bursts return the number moved (0 when none could be); a NULL ring or a NULL array
 * with n > 0 returns 0 with errno = EINVAL. rf_slotring_create returns NULL with errno set.
 */
#ifndef RINGFLOW_SLOTRING_H
#define RINGFLOW_SLOTRING_H

#include <errno.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_SLOTRING_ALIGN 128 /* as RF_RING_HEADTAIL_ALIGN: out of each other's prefetch pair */

struct rf_slotring_slot {
	_Atomic(uint32_t) seq; /* index + 1 of the object in it: full for that index */
	uint32_t pad;
	void *obj; /* written before seq (release), read after it (acquire) */
};

struct rf_slotring {
	uint32_t size, mask; /* read-only */
	/* Producer only. */
	alignas(RF_SLOTRING_ALIGN) uint32_t head;  /* next index to fill */
	uint32_t cons_cache;                       /* last value read of cons_pos */
	/* Consumer only, but read by the producer when the ring looks full. */
	alignas(RF_SLOTRING_ALIGN) _Atomic(uint32_t) cons_pos; /* every index below it is read */
	/* Written by the producer only when an enqueue falls short (its failure path): apart
	 * from head so a successful enqueue writes nothing new, apart from cons_pos so the
	 * consumer's line is not disturbed. */
	alignas(RF_SLOTRING_ALIGN) _Atomic(uint64_t) fail_calls; /* enqueues that fell short */
	_Atomic(uint64_t) fail_objs;                              /* objects they could not place */
	alignas(RF_SLOTRING_ALIGN) struct rf_slotring_slot slots[];
};

/* Creates a ring of `count` slots (a power of two, 2..2^30). NULL with errno EINVAL or
 * ENOMEM. */
struct rf_slotring *rf_slotring_create(unsigned count);

/* Frees a ring from rf_slotring_create (NULL is ignored). No thread may still use it. */
void rf_slotring_free(struct rf_slotring *r);

/* Enqueues up to n objects (objs[0] first). Returns the count enqueued. Producer only. */
static inline unsigned rf_slotring_enqueue_burst(struct rf_slotring *r, void *const *objs,
						 unsigned n)
{
	if (rf_unlikely(r == NULL || (objs == NULL && n > 0))) {
		errno = EINVAL;
		return 0;
	}
	uint32_t head = r->head;
	uint32_t free_n = r->size - (head - r->cons_cache);
	if (free_n < n) {
		/* acquire: pairs with the consumer's release store of cons_pos, so its reads of
		 * the slots we are about to overwrite are finished. */
		r->cons_cache = atomic_load_explicit(&r->cons_pos, memory_order_acquire);
		free_n = r->size - (head - r->cons_cache);
		if (free_n < n) {
			/* relaxed load + store: the producer is the only writer; a statistic. */
			atomic_store_explicit(&r->fail_calls,
					      atomic_load_explicit(&r->fail_calls, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			atomic_store_explicit(&r->fail_objs,
					      atomic_load_explicit(&r->fail_objs, memory_order_relaxed) +
						      (n - free_n),
					      memory_order_relaxed);
			n = free_n;
		}
	}
	uint32_t idx = head & r->mask;
	if (n > 1 && idx + n <= r->size) {
		/* a burst that does not wrap: walk the slots with a pointer, no mask per slot */
		struct rf_slotring_slot *s = &r->slots[idx];
		for (unsigned i = 0; i < n; i++) {
			s[i].obj = objs[i];
			/* release: pairs with the consumer's acquire load of seq; publishes obj. */
			atomic_store_explicit(&s[i].seq, head + i + 1, memory_order_release);
		}
	} else {
		for (unsigned i = 0; i < n; i++) {
			struct rf_slotring_slot *s = &r->slots[(head + i) & r->mask];
			s->obj = objs[i];
			/* release: as above. */
			atomic_store_explicit(&s->seq, head + i + 1, memory_order_release);
		}
	}
	r->head = head + n;
	return n;
}

/* Dequeues up to n objects, oldest first. Returns the count dequeued. Consumer only. */
static inline unsigned rf_slotring_dequeue_burst(struct rf_slotring *r, void **objs, unsigned n)
{
	if (rf_unlikely(r == NULL || (objs == NULL && n > 0))) {
		errno = EINVAL;
		return 0;
	}
	/* relaxed: cons_pos is written only by this (the consumer) side. */
	uint32_t pos = atomic_load_explicit(&r->cons_pos, memory_order_relaxed);
	unsigned got = 0;
	if (n > 1 && /* acquire: pairs with the producer's release store of the last slot's seq;
		      * the producer fills in order, so every earlier slot's obj is visible too. */
	    atomic_load_explicit(&r->slots[(pos + n - 1) & r->mask].seq, memory_order_acquire) ==
		    pos + n) {
		got = n;
	} else {
		/* acquire: as above, slot by slot. */
		while (got < n && atomic_load_explicit(&r->slots[(pos + got) & r->mask].seq,
						       memory_order_acquire) == pos + got + 1)
			got++;
	}
	uint32_t idx = pos & r->mask;
	if (got > 1 && idx + got <= r->size) {
		const struct rf_slotring_slot *s = &r->slots[idx]; /* as in enqueue: no wrap */
		for (unsigned i = 0; i < got; i++)
			objs[i] = s[i].obj;
	} else {
		for (unsigned i = 0; i < got; i++)
			objs[i] = r->slots[(pos + i) & r->mask].obj;
	}
	if (got)
		/* release: pairs with the producer's acquire load of cons_pos: our reads of these
		 * slots happen before it overwrites them. */
		atomic_store_explicit(&r->cons_pos, pos + got, memory_order_release);
	return got;
}

/* Enqueues that placed fewer objects than asked since creation, and in *objs (may be NULL)
 * the objects they could not place. Any thread (relaxed loads). 0 for NULL. */
static inline uint64_t rf_slotring_enqueue_failures(const struct rf_slotring *r, uint64_t *objs)
{
	uint64_t calls = 0, o = 0;
	if (r) {
		calls = atomic_load_explicit(&r->fail_calls, memory_order_relaxed);
		o = atomic_load_explicit(&r->fail_objs, memory_order_relaxed);
	}
	if (objs)
		*objs = o;
	return calls;
}

/* Enqueues one object; 0 or -ENOBUFS (full). Producer only. */
static inline int rf_slotring_enqueue(struct rf_slotring *r, void *obj)
{
	return rf_slotring_enqueue_burst(r, &obj, 1) ? 0 : -ENOBUFS;
}

/* Dequeues one object into *obj; 0 or -ENOENT (empty). Consumer only. */
static inline int rf_slotring_dequeue(struct rf_slotring *r, void **obj)
{
	return rf_slotring_dequeue_burst(r, obj, 1) ? 0 : -ENOENT;
}

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_SLOTRING_H */
