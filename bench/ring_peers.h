/*
 * bench/ring_peers.h: the rings `ringflow-bench ring` measures, each behind the same four
 * inline calls so one generic loop (bench_ring.c) drives them all with nothing but the ring
 * itself differing:
 *   create(count, mode) / destroy(q) / enq(q, objs, n) / deq(q, objs, n)
 * enq/deq move up to n pointers and return how many moved (burst semantics).
 * Ours: rf_ring and, for SPSC, rf_slotring (ringflow/slotring.h).
 * Peers: DPDK rte_ring (initialised in our memory, no EAL needed), Concurrency Kit ck_ring
 * (single-element API, so a burst is a loop), and a mutex-protected array as the floor any
 * lock-free ring must beat.
 */
#ifndef RINGFLOW_BENCH_RING_PEERS_H
#define RINGFLOW_BENCH_RING_PEERS_H

#if RF_HAVE_CK /* optional peers (RF_WITH_CK, RF_WITH_DPDK): a missing one is "skipped" */
#include <ck_ring.h>
#endif
#include <pthread.h>
#if RF_HAVE_DPDK
#include <rte_ring.h>
#endif
#include <stdbool.h>
#include <stdlib.h>

#include <ringflow/ring.h>
#include <ringflow/slotring.h>

enum ring_mode { MODE_SPSC, MODE_MPMC, MODE_MPMC_HTS };

/* ---- ringflow ---- */
static inline void *rf_create(unsigned count, enum ring_mode m)
{
	return rf_ring_create("bench", count, m == MODE_SPSC ? RF_RING_SP_ENQ | RF_RING_SC_DEQ : 0);
}
static inline void rf_destroy(void *q) { rf_ring_free(q); }
static inline unsigned rf_enq(void *q, void **o, unsigned n)
{
	return rf_ring_enqueue_burst(q, o, n, NULL);
}
static inline unsigned rf_deq(void *q, void **o, unsigned n)
{
	return rf_ring_dequeue_burst(q, o, n, NULL);
}

/* ---- ringflow slot ring (SPSC only: the slot carries its full state) ---- */
static inline void *slot_create(unsigned count, enum ring_mode m)
{
	return m == MODE_SPSC ? rf_slotring_create(count) : NULL;
}
static inline void slot_destroy(void *q) { rf_slotring_free(q); }
static inline unsigned slot_enq(void *q, void **o, unsigned n)
{
	return rf_slotring_enqueue_burst(q, o, n);
}
static inline unsigned slot_deq(void *q, void **o, unsigned n)
{
	return rf_slotring_dequeue_burst(q, o, n);
}

/* ---- DPDK rte_ring ---- */
#if RF_HAVE_DPDK
static inline void *rte_create(unsigned count, enum ring_mode m)
{
	unsigned flags = m == MODE_SPSC ? RING_F_SP_ENQ | RING_F_SC_DEQ
			 : m == MODE_MPMC_HTS ? RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ
					      : 0;
	/* RING_F_EXACT_SZ: `count` usable slots, as ours (rte_ring otherwise keeps one free),
	 * which makes rte_ring allocate the next power of two above count. */
	ssize_t sz = rte_ring_get_memsize_elem(sizeof(void *), count * 2);
	if (sz < 0)
		return NULL;
	struct rte_ring *r = aligned_alloc(128, ((size_t)sz + 127) & ~(size_t)127);
	if (!r || rte_ring_init(r, "bench", count, flags | RING_F_EXACT_SZ) != 0) {
		free(r);
		return NULL;
	}
	return r;
}
static inline void rte_destroy(void *q) { free(q); }
static inline unsigned rte_enq(void *q, void **o, unsigned n)
{
	return rte_ring_enqueue_burst(q, o, n, NULL);
}
static inline unsigned rte_deq(void *q, void **o, unsigned n)
{
	return rte_ring_dequeue_burst(q, o, n, NULL);
}
#else /* built without DPDK: no ring, so rb_run_* returns -1 and the row says "skipped" */
static inline void *rte_create(unsigned count, enum ring_mode m) { (void)count, (void)m; return NULL; }
static inline void rte_destroy(void *q) { (void)q; }
static inline unsigned rte_enq(void *q, void **o, unsigned n) { (void)q, (void)o, (void)n; return 0; }
static inline unsigned rte_deq(void *q, void **o, unsigned n) { (void)q, (void)o, (void)n; return 0; }
#endif

/* ---- Concurrency Kit ck_ring ---- */
#if RF_HAVE_CK
struct ck_q {
	ck_ring_t ring;
	bool spsc;
	ck_ring_buffer_t *buf;
};
static inline void *ck_create(unsigned count, enum ring_mode m)
{
	struct ck_q *q = aligned_alloc(128, (sizeof(*q) + 127) & ~(size_t)127);
	if (!q)
		return NULL;
	/* ck_ring keeps one slot empty: give it count + 1 rounded up to a power of two. */
	unsigned size = count * 2;
	q->buf = aligned_alloc(128, ((size_t)size * sizeof(ck_ring_buffer_t) + 127) & ~(size_t)127);
	if (!q->buf) {
		free(q);
		return NULL;
	}
	ck_ring_init(&q->ring, size);
	q->spsc = m == MODE_SPSC;
	return q;
}
static inline void ck_destroy(void *p)
{
	struct ck_q *q = p;
	free(q->buf);
	free(q);
}
static inline unsigned ck_enq(void *p, void **o, unsigned n)
{
	struct ck_q *q = p;
	unsigned i = 0;
	if (q->spsc) {
		while (i < n && ck_ring_enqueue_spsc(&q->ring, q->buf, o[i]))
			i++;
	} else {
		while (i < n && ck_ring_enqueue_mpmc(&q->ring, q->buf, o[i]))
			i++;
	}
	return i;
}
static inline unsigned ck_deq(void *p, void **o, unsigned n)
{
	struct ck_q *q = p;
	unsigned i = 0;
	if (q->spsc) {
		while (i < n && ck_ring_dequeue_spsc(&q->ring, q->buf, &o[i]))
			i++;
	} else {
		while (i < n && ck_ring_dequeue_mpmc(&q->ring, q->buf, &o[i]))
			i++;
	}
	return i;
}
#else /* built without Concurrency Kit */
static inline void *ck_create(unsigned count, enum ring_mode m) { (void)count, (void)m; return NULL; }
static inline void ck_destroy(void *q) { (void)q; }
static inline unsigned ck_enq(void *q, void **o, unsigned n) { (void)q, (void)o, (void)n; return 0; }
static inline unsigned ck_deq(void *q, void **o, unsigned n) { (void)q, (void)o, (void)n; return 0; }
#endif

/* ---- mutex ring: the floor ---- */
struct mutex_q {
	pthread_mutex_t lock;
	unsigned head, tail, mask;
	void **slots;
};
static inline void *mutex_create(unsigned count, enum ring_mode m)
{
	(void)m;
	struct mutex_q *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->slots = calloc(count, sizeof(void *));
	q->mask = count - 1;
	pthread_mutex_init(&q->lock, NULL);
	return q;
}
static inline void mutex_destroy(void *p)
{
	struct mutex_q *q = p;
	pthread_mutex_destroy(&q->lock);
	free(q->slots);
	free(q);
}
static inline unsigned mutex_enq(void *p, void **o, unsigned n)
{
	struct mutex_q *q = p;
	pthread_mutex_lock(&q->lock);
	unsigned room = q->mask + 1 - (q->head - q->tail), i;
	for (i = 0; i < n && i < room; i++)
		q->slots[(q->head + i) & q->mask] = o[i];
	q->head += i;
	pthread_mutex_unlock(&q->lock);
	return i;
}
static inline unsigned mutex_deq(void *p, void **o, unsigned n)
{
	struct mutex_q *q = p;
	pthread_mutex_lock(&q->lock);
	unsigned have = q->head - q->tail, i;
	for (i = 0; i < n && i < have; i++)
		o[i] = q->slots[(q->tail + i) & q->mask];
	q->tail += i;
	pthread_mutex_unlock(&q->lock);
	return i;
}

#endif
