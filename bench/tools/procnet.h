/*
 * bench/tools/procnet.h: parsers for the kernel counters that say where packets and CPU time
 * went, shared by ringflow-stolen, ringflow-netstat and their tests.
 *
 * The one idea: every counter here is a running total, so a reading alone says little; the
 * tools read twice and print the difference (rf_counter_delta, which survives a wrap) per
 * second or per phase. Each parser takes a FILE * so the tests can feed recorded samples
 * (tests/tools/data/) as well as the live /proc file.
 *
 *   /proc/net/softnet_stat  one row per online CPU, hex: processed, dropped (backlog full),
 *                           time_squeeze (budget ran out), received_rps, flow_limit, ...
 *                           The number of columns grew with the kernel (10 in 2.6, 11 in
 *                           3.x-5.9, 13 from 5.10 with the CPU id, 15 from 6.x with the two
 *                           queue lengths), so rows are parsed by column count.
 *   /proc/softirqs          per-CPU counts of each softirq vector (NET_RX, NET_TX, ...).
 *   /proc/stat              per-CPU time in clock ticks (user ... softirq, steal).
 *   /proc/net/dev           per-interface packets, bytes, errs, drops.
 *   /proc/net/snmp          the Udp: block (RcvbufErrors, InErrors, SndbufErrors, ...).
 *
 * Errors: parsers return 0 or a negative errno (-EINVAL for a malformed file, -ENODEV for an
 * interface that is not there, -E2BIG past RF_PN_MAX_CPUS CPUs). Not thread-safe per struct.
 */
#ifndef RINGFLOW_BENCH_TOOLS_PROCNET_H
#define RINGFLOW_BENCH_TOOLS_PROCNET_H

#include <stdint.h>
#include <stdio.h>

#define RF_PN_MAX_CPUS 256

/* ---- /proc/net/softnet_stat ---- */

struct rf_softnet_cpu {
	unsigned cpu;           /* CPU id: column 12 where the kernel prints it, else the row */
	uint64_t processed;     /* packets taken off this CPU's backlog / NAPI poll */
	uint64_t dropped;       /* dropped: this CPU's backlog held netdev_max_backlog already */
	uint64_t time_squeeze;  /* net_rx_action stopped with work left (budget or time ran out) */
	uint64_t received_rps;  /* times another CPU sent this one work by IPI (RPS/RFS) */
	uint64_t flow_limit;    /* packets dropped by the per-flow limit (flow_limit_cpu_bitmap) */
	uint64_t backlog;       /* packets queued right now (a level, not a counter) */
};

struct rf_softnet {
	unsigned n;       /* rows = online CPUs */
	unsigned columns; /* columns the kernel printed (the same on every row) */
	struct rf_softnet_cpu cpu[RF_PN_MAX_CPUS];
};

/* Parses a whole softnet_stat file. Returns 0 or -EINVAL/-E2BIG. */
int rf_softnet_parse(FILE *f, struct rf_softnet *out);
/* The row of CPU `cpu`, or NULL if that CPU is not listed. */
const struct rf_softnet_cpu *rf_softnet_find(const struct rf_softnet *s, unsigned cpu);

/* ---- /proc/softirqs ---- */

struct rf_softirqs {
	unsigned n;                      /* CPU columns */
	unsigned cpu[RF_PN_MAX_CPUS];    /* CPU id of each column (from the "CPUn" header) */
	uint64_t net_rx[RF_PN_MAX_CPUS]; /* NET_RX softirqs run on that CPU */
	uint64_t net_tx[RF_PN_MAX_CPUS]; /* NET_TX softirqs run on that CPU */
};

/* Parses /proc/softirqs (only the NET_RX and NET_TX rows are kept). Returns 0 or -EINVAL. */
int rf_softirqs_parse(FILE *f, struct rf_softirqs *out);
/* Column index of CPU `cpu`, or -1. */
int rf_softirqs_col(const struct rf_softirqs *s, unsigned cpu);

/* ---- /proc/stat ---- */

struct rf_cpu_ticks {
	int cpu; /* -1 for the "cpu" line (all CPUs) */
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

struct rf_procstat {
	struct rf_cpu_ticks all;
	unsigned n;
	struct rf_cpu_ticks cpu[RF_PN_MAX_CPUS];
};

/* Parses the cpu lines of /proc/stat. Returns 0 or -EINVAL. */
int rf_procstat_parse(FILE *f, struct rf_procstat *out);
const struct rf_cpu_ticks *rf_procstat_find(const struct rf_procstat *s, unsigned cpu);
/* Sum of the eight fields (guest time is already inside user). */
uint64_t rf_cpu_ticks_total(const struct rf_cpu_ticks *t);

/* ---- /proc/net/dev ---- */

struct rf_netdev {
	uint64_t rx_bytes, rx_packets, rx_errs, rx_drop, rx_fifo, rx_frame, rx_compressed,
		rx_multicast;
	uint64_t tx_bytes, tx_packets, tx_errs, tx_drop, tx_fifo, tx_colls, tx_carrier,
		tx_compressed;
};

/* Reads the row of interface `ifname`. Returns 0, -ENODEV if absent, -EINVAL if malformed. */
int rf_netdev_parse(FILE *f, const char *ifname, struct rf_netdev *out);

/* ---- /proc/net/snmp, Udp: block ---- */

struct rf_udp_mib {
	uint64_t in_datagrams, no_ports, in_errors, out_datagrams, rcvbuf_errors, sndbuf_errors,
		in_csum_errors, mem_errors;
};

/* Reads the Udp: header/value line pair, by column name (fields missing in older kernels
 * stay 0). Returns 0 or -EINVAL if there is no Udp: block. */
int rf_udp_mib_parse(FILE *f, struct rf_udp_mib *out);

/* ---- arithmetic ---- */

/* cur - prev for a counter `bits` wide (32 or 64) that may have wrapped once. */
uint64_t rf_counter_delta(uint64_t prev, uint64_t cur, unsigned bits);
/* For counters whose width is not known (/proc/net/dev prints u64, but some drivers keep
 * 32-bit counters): a step back from below 2^32 is a 32-bit wrap; a step back from above it
 * is a reset (device re-created), counted as `cur`. */
uint64_t rf_counter_delta_auto(uint64_t prev, uint64_t cur);
/* delta / seconds, 0 when seconds <= 0. */
double rf_rate(uint64_t delta, double seconds);

/* ---- the live files: each opens the /proc file, parses it, closes it; returns the parser's
 * result or -errno of fopen. /proc/net/ files show the network namespace of the caller. */
int rf_softnet_read(struct rf_softnet *out);
int rf_softirqs_read(struct rf_softirqs *out);
int rf_procstat_read(struct rf_procstat *out);
int rf_netdev_read(const char *ifname, struct rf_netdev *out);
int rf_udp_mib_read(struct rf_udp_mib *out);

#endif /* RINGFLOW_BENCH_TOOLS_PROCNET_H */
