/*
 * bench/bench_eal.h: starting DPDK's EAL once, on demand, for the subcommands whose peers need
 * it (rte_mempool, rte_hash). Nothing runs at program start, so subcommands that do not call
 * this never see DPDK. The EAL can start only once per process: the first caller picks the
 * mode (with hugepages or --no-huge) and later callers get the same answer.
 */
#ifndef RINGFLOW_BENCH_EAL_H
#define RINGFLOW_BENCH_EAL_H

#include <stdbool.h>
#include <stddef.h>

/* Starts the EAL with its main lcore on `cpu`: on hugepages when want_huge and enough 2 MiB
 * pages are free (--in-memory: no hugetlbfs mount needed), else `--no-huge --no-shconf -m
 * 256`. Always --no-pci and a --file-prefix unique to this process. Returns 1 (hugepages),
 * 0 (no hugepages) or -1 with a one-line reason in why. */
int rf_bench_eal_start(unsigned cpu, bool want_huge, char *why, size_t len);

/* Stops the EAL started above (rte_eal_cleanup) and removes its runtime directory. Only
 * after every DPDK object was freed; the EAL cannot be started again in this process. */
void rf_bench_eal_stop(void);

/* Removes the EAL's runtime directory and its files (after a failed rte_eal_init, which
 * leaves it behind). DPDK builds only. */
void rf_bench_eal_remove_dir(void);

/* As root, makes sure `pages` 2 MiB hugepages are free, reserving the missing ones through
 * /proc/sys/vm/nr_hugepages. Returns how many this call added (give them back with
 * rf_bench_hugepages_release), 0 when none were needed, -1 when it could not (not root, or
 * the kernel found too little memory; nothing is left reserved then). */
long rf_bench_hugepages_reserve(long pages);
void rf_bench_hugepages_release(long added);

#endif
