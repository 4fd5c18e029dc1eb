/* ring/ring_pvt.h: ring internals used by tests only. */
#ifndef RINGFLOW_RING_PVT_H
#define RINGFLOW_RING_PVT_H

#include <ringflow/ring.h>

/* Moves every index of an empty, unused ring to `index` (tests: wrap-around past 2^32). */
void rf_ring_set_start_index_pvt(struct rf_ring *r, uint32_t index);

#endif
