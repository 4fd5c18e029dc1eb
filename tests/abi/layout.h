/*
 * tests/abi/layout.h: the public structs whose layout C and C++ must agree on (those with
 * atomic members above all: C's _Atomic(T) is std::atomic<T> in C++). layout_c.c and
 * cxx_headers.cpp each fill the same table with sizeof/alignof as their compiler sees them;
 * the test compares the two.
 */
#ifndef RF_TEST_ABI_LAYOUT_H
#define RF_TEST_ABI_LAYOUT_H

#include <stddef.h>

#define RF_ABI_TYPES(X)                                                                      \
	X(rf_ring_headtail) X(rf_ring) X(rf_slotring_slot) X(rf_slotring) X(rf_lflist_node)  \
	X(rf_lflist) X(rf_mempool_cache) X(rf_mempool) X(rf_mempool_stats) X(rf_pktbuf)      \
	X(rf_core_counters) X(rf_counters) X(rf_stats_hist) X(rf_stat) X(rf_io_ops)          \
	X(rf_io_dev) X(rf_io_stats) X(rf_json) X(rf_buf) X(rf_hash_iter) X(rf_ctl_config)

struct rf_abi_layout {
	const char *name;
	size_t size, align;
};

#define RF_ABI_COUNT_ONE(t) +1
enum { RF_ABI_NTYPES = 0 RF_ABI_TYPES(RF_ABI_COUNT_ONE) };

#ifdef __cplusplus
extern "C" {
#endif
/* layout_c.c: the table as the C compiler lays the structs out. */
void rf_abi_layout_c(struct rf_abi_layout *out);
#ifdef __cplusplus
}
#endif

#endif
