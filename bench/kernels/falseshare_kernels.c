/*
 * bench/kernels/falseshare_kernels.c: counter layouts and the increment loops of
 * falseshare_kernels.h. Kept out of line (one call per chunk of increments) so what the
 * benchmark times is exactly what the tests check.
 */
#include "falseshare_kernels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fs_counters_init(struct fs_counters *c, unsigned n, size_t stride)
{
	if (n == 0 || stride < sizeof(uint64_t) || stride % sizeof(uint64_t))
		return -EINVAL;
	size_t bytes = ((size_t)n * stride + 127) & ~(size_t)127;
	c->base = aligned_alloc(128, bytes);
	if (!c->base)
		return -ENOMEM;
	memset(c->base, 0, bytes);
	c->stride = stride;
	c->n = n;
	return 0;
}

void fs_counters_fini(struct fs_counters *c)
{
	free(c->base);
	c->base = NULL;
}

uint64_t fs_counters_sum(const struct fs_counters *c)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < c->n; i++)
		sum += atomic_load_explicit(fs_counter(c, i), memory_order_relaxed);
	return sum;
}

void fs_increment_atomic(_Atomic uint64_t *c, uint64_t iters)
{
	for (uint64_t i = 0; i < iters; i++)
		atomic_fetch_add_explicit(c, 1, memory_order_relaxed); /* lock xadd */
}

void fs_increment_plain(_Atomic uint64_t *c, uint64_t iters)
{
	/* Single writer: load + store is a correct increment, and each store must happen. */
	for (uint64_t i = 0; i < iters; i++)
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
				      memory_order_relaxed);
}

static inline void add_relaxed(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

void fs_stats_update(struct fs_stats *s, uint64_t first_packet, uint64_t packets)
{
	for (uint64_t i = first_packet; i < first_packet + packets; i++) {
		add_relaxed(&s->rx, 1);
		add_relaxed(&s->tx, 1);
		if (i % 32 == 31)
			add_relaxed(&s->loops, 1);
		if (i % 1024 == 1023)
			add_relaxed(&s->drop_ring_full, 1);
	}
}
