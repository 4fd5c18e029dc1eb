/*
 * bench/ringlines/ring_trace.c: `ringflow-ring-trace IMPL REGIME BURST ITERS`, the driver
 * lines.sh runs under valgrind (lackey) to count, per enqueue and per dequeue, the
 * instructions executed and the cache lines one side writes that the other side reads.
 *
 * One thread plays both sides in a fixed order, so the count is exact and the same on every
 * machine (a timing run on a shared VM is neither). Each call is framed by a store to its own
 * marker word (marks[1] enqueue, marks[2] dequeue, marks[3]/[4] the warm-up's, marks[0] the
 * end of a call, marks[9]/[8] the measured stretch), so lines.py can split the trace by call.
 * Regimes: "empty" (enqueue then dequeue: the consumer keeps up, the ring holds one burst) and
 * "full" (the ring filled first, then dequeue then enqueue: the producer waits on the
 * consumer). IMPL: rf (rf_ring SPSC), slot (rf_slotring), rte (rte_ring SPSC, as the bench
 * makes it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_peers.h"

#define RING_COUNT 1024

volatile int marks[16];
static void *objs[64];

typedef unsigned (*ring_fn)(void *, void **, unsigned);

__attribute__((noinline)) static unsigned call(ring_fn f, void *q, unsigned n, int mark)
{
	marks[mark] = 1;
	unsigned got = f(q, objs, n);
	marks[0] = 1;
	return got;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: ringflow-ring-trace rf|slot|rte empty|full BURST ITERS\n");
		return 2;
	}
	const char *impl = argv[1];
	int full = strcmp(argv[2], "full") == 0;
	unsigned burst = (unsigned)atoi(argv[3]), iters = (unsigned)atoi(argv[4]);
	if (burst == 0 || burst > 64 || RING_COUNT % burst) {
		fprintf(stderr, "ringflow-ring-trace: BURST must divide %u and be at most 64\n", RING_COUNT);
		return 2;
	}
	void *q = NULL;
	ring_fn enq = NULL, deq = NULL;
	size_t bytes = 0;
	if (strcmp(impl, "rf") == 0) {
		q = rf_create(RING_COUNT, MODE_SPSC), enq = rf_enq, deq = rf_deq;
		bytes = rf_ring_get_memsize(RING_COUNT);
	} else if (strcmp(impl, "slot") == 0) {
		q = slot_create(RING_COUNT, MODE_SPSC), enq = slot_enq, deq = slot_deq;
		bytes = sizeof(struct rf_slotring) + RING_COUNT * sizeof(struct rf_slotring_slot);
	} else if (strcmp(impl, "rte") == 0 && RF_HAVE_DPDK) {
		q = rte_create(RING_COUNT, MODE_SPSC), enq = rte_enq, deq = rte_deq;
#if RF_HAVE_DPDK
		bytes = (size_t)rte_ring_get_memsize_elem(sizeof(void *), RING_COUNT * 2);
#endif
	}
	if (!q) {
		fprintf(stderr, "ringflow-ring-trace: no ring '%s' in this build\n", impl);
		return 1;
	}
	/* What lines.py needs: the ring's bytes (shared state) and where the markers are. */
	fprintf(stderr, "RANGE %lx %lx\nMARKS %lx\n", (unsigned long)(uintptr_t)q,
		(unsigned long)((uintptr_t)q + bytes), (unsigned long)(uintptr_t)&marks[0]);
	for (unsigned i = 0; i < 64; i++)
		objs[i] = (void *)(uintptr_t)(i + 1);
	if (full)
		for (unsigned k = 0; k < RING_COUNT; k += burst)
			call(enq, q, burst, 3);
	/* three laps of warm-up: every line has been written and read once before counting */
	for (unsigned i = 0; i < 3 * RING_COUNT / burst; i++) {
		if (full)
			call(deq, q, burst, 4), call(enq, q, burst, 3);
		else
			call(enq, q, burst, 3), call(deq, q, burst, 4);
	}
	marks[9] = 1;
	for (unsigned i = 0; i < iters; i++) {
		if (full)
			call(deq, q, burst, 2), call(enq, q, burst, 1);
		else
			call(enq, q, burst, 1), call(deq, q, burst, 2);
	}
	marks[8] = 1;
	return 0;
}
