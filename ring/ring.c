/*
 * ring/ring.c: creating and freeing rings. The fast path lives inline in ringflow/ring.h;
 * this file only lays out memory: header, then the producer and consumer blocks (each a
 * private head block and a tail block, 128 B apart), the failed-enqueue counters on a block
 * of their own, then the slot array.
 */
#include <ringflow/ring.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring_pvt.h"

/* Lays out an empty ring in memory the caller sized with rf_ring_get_memsize (rf_ring_init
 * checks the arguments first). */
static void layout_init(struct rf_ring *r, const char *name, unsigned count, unsigned flags)
{
	unsigned i = 0;
	for (; name && name[i] && i + 1 < RF_RING_NAMESIZE; i++)
		r->name[i] = name[i];
	r->name[i] = '\0';
	r->flags = flags;
	r->size = count;
	r->mask = count - 1;
	r->capacity = count;
	r->prod.single = (flags & RF_RING_SP_ENQ) != 0;
	r->cons.single = (flags & RF_RING_SC_DEQ) != 0;
	r->prod.other_tail_cache = 0;
	r->cons.other_tail_cache = 0;
	atomic_init(&r->prod.head, 0);
	atomic_init(&r->prod.tail, 0);
	atomic_init(&r->cons.head, 0);
	atomic_init(&r->cons.tail, 0);
	atomic_init(&r->enq_fail.calls, 0);
	atomic_init(&r->enq_fail.objs, 0);
}

size_t rf_ring_get_memsize(unsigned count)
{
	if (!rf_is_power_of_2(count) || count > RF_RING_SZ_MAX)
		return 0;
	size_t sz = sizeof(struct rf_ring) + (size_t)count * sizeof(void *);
	return (sz + RF_RING_HEADTAIL_ALIGN - 1) & ~(size_t)(RF_RING_HEADTAIL_ALIGN - 1);
}

int rf_ring_init(struct rf_ring *r, const char *name, unsigned count, unsigned flags)
{
	if (!r || !rf_is_power_of_2(count) || count > RF_RING_SZ_MAX ||
	    (flags & ~(RF_RING_SP_ENQ | RF_RING_SC_DEQ)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	layout_init(r, name, count, flags);
	return 0;
}

struct rf_ring *rf_ring_create(const char *name, unsigned count, unsigned flags)
{
	size_t sz = rf_ring_get_memsize(count);
	if (sz == 0 || (flags & ~(RF_RING_SP_ENQ | RF_RING_SC_DEQ))) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_ring *r = aligned_alloc(RF_RING_HEADTAIL_ALIGN, sz);
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	rf_ring_init(r, name, count, flags);
	return r;
}

void rf_ring_free(struct rf_ring *r)
{
	free(r);
}

void rf_ring_set_start_index_pvt(struct rf_ring *r, uint32_t index)
{
	/* Only for an empty, unused ring (tests start near 2^32 to exercise the wrap). */
	atomic_store_explicit(&r->prod.head, index, memory_order_relaxed);
	atomic_store_explicit(&r->prod.tail, index, memory_order_relaxed);
	atomic_store_explicit(&r->cons.head, index, memory_order_relaxed);
	atomic_store_explicit(&r->cons.tail, index, memory_order_relaxed);
	r->prod.other_tail_cache = index;
	r->cons.other_tail_cache = index;
}
