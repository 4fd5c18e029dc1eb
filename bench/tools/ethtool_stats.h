/*
 * bench/tools/ethtool_stats.h: the driver's own counters of an interface, as `ethtool -S`
 * shows them, read through the SIOCETHTOOL ioctl (ETHTOOL_GSSET_INFO for how many,
 * ETHTOOL_GSTRINGS for their names, ETHTOOL_GSTATS for their values).
 *
 * These are where a NIC reports the drops /proc/net/dev cannot see (rx_missed_errors,
 * rx_fifo_errors: the ring was full before the kernel polled it). Which counters exist is up
 * to the driver: veth has a few (peer_ifindex, per-queue XDP counters), loopback has none.
 *
 * Errors: negative errno (-ENODEV no such interface, -EOPNOTSUPP the driver has no stats).
 */
#ifndef RINGFLOW_BENCH_TOOLS_ETHTOOL_STATS_H
#define RINGFLOW_BENCH_TOOLS_ETHTOOL_STATS_H

#include <stdint.h>

#define RF_ETH_NAME_LEN 32 /* ETH_GSTRING_LEN */

struct rf_ethtool_stats {
	unsigned n;
	char (*name)[RF_ETH_NAME_LEN]; /* n names, NUL-terminated */
	uint64_t *value;               /* n values */
};

/* Reads every statistic of `ifname` into *st (allocated here; release with
 * rf_ethtool_stats_free). Returns 0 (n may be 0) or -errno. The interface is looked up in the
 * caller's network namespace. */
int rf_ethtool_stats_read(const char *ifname, struct rf_ethtool_stats *st);

/* Index of the statistic called `name`, or -1. */
int rf_ethtool_stats_find(const struct rf_ethtool_stats *st, const char *name);

void rf_ethtool_stats_free(struct rf_ethtool_stats *st);

#endif /* RINGFLOW_BENCH_TOOLS_ETHTOOL_STATS_H */
