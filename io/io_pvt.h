/*
 * io/io_pvt.h: what the io module's files share and apps must not see: the built-in
 * drivers' ops tables (listed in io.c's registry) and small helpers the drivers use.
 *
 * Adding a driver: define `const struct rf_io_ops rf_io_<name>_ops` in io/<name>.c, declare
 * it below and list it in rf_io_builtin[] in io/io.c. An optional driver built without its
 * library gets a stub of the same name from io/absent.c.in (listed as absent, with why).
 */
#ifndef RINGFLOW_IO_PVT_H
#define RINGFLOW_IO_PVT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include <ringflow/io.h>
#include <ringflow/io_driver.h>

/* sockets */
extern const struct rf_io_ops rf_io_udp_ops;
extern const struct rf_io_ops rf_io_tcp_ops;
/* io_uring */
extern const struct rf_io_ops rf_io_uring_ops;
/* AF_XDP, DPDK */
extern const struct rf_io_ops rf_io_xdp_ops;
extern const struct rf_io_ops rf_io_dpdk_ops;

/* AF_PACKET (frame mode): declare rf_io_packet_ops below this line */
extern const struct rf_io_ops rf_io_packet_ops;

/* Per-queue counters of a driver: one writer (the queue's thread), read by stats() from
 * anywhere. Every driver keeps one per queue, on the queue's own cache line. */
struct rf_io_qstats {
	_Atomic uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, rx_nobuf, rx_drops, tx_drops;
	_Atomic uint64_t conns_open, conns_total;
};

/* Single writer: a relaxed load and store, no read-modify-write needed. */
static inline void rf_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Add one queue's counters into st (relaxed loads: each value exact, not a joint snapshot). */
void rf_io_qstats_sum(const struct rf_io_qstats *q, struct rf_io_stats *st);

/* The number a one-value file holds (sysfs, procfs), or 0 when it cannot be read. */
long rf_io_read_long(const char *path);

/* Write one formatted line into err (NULL or len 0: nothing). Returns -EINVAL for chaining. */
int rf_io_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The registry's view for rf_io_open's errors (io_registry.c): why the driver called name is
 * absent (into buf; NULL when it was never registered), and the usable frame-mode drivers
 * ("xdp, dpdk, packet", or "none"). */
#define RF_IO_WHY_MAX 160 /* an absent driver's reason, with the NUL */
const char *rf_io_absent_reason(const char *name, char *buf, size_t len);
void rf_io_frame_drivers(char *buf, size_t len);

#endif /* RINGFLOW_IO_PVT_H */
