/*
 * apps/l2fwd/l2fwd.h: what the forwarder's two files share: the ports, the forwarding units
 * (one per rx (port, queue), each run by one poller) and their counters.
 *
 * Counting rule (so the totals add up): a unit counts every frame it received (rx), every
 * frame the paired port's tx_burst consumed (sent), and every frame it freed because the
 * paired port took no more (dropped). rx = sent + dropped for each unit by construction;
 * what the paired driver consumed but could not send is in that driver's tx_drops.
 * With --offload the kernel forwards a port's frames itself (ringflow/offload.h) and the
 * units see only what it leaves to userspace: offloaded + rx is what the port received.
 */
#ifndef RINGFLOW_APPS_L2FWD_H
#define RINGFLOW_APPS_L2FWD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ringflow/io.h>
#include <ringflow/runtime.h>

#define L2F_MAX_PORTS 32
#define L2F_MAX_UNITS (L2F_MAX_PORTS * 8)

struct l2f_unit {
	RF_CACHE_ALIGNED _Atomic uint64_t rx, sent, dropped; /* written by its poller only */
	struct rf_io_dev *in, *out;
	unsigned in_port, out_port; /* indices into l2f.ports */
	unsigned rxq, txq, burst;
	bool mac_rewrite;
	uint8_t src[6], dst[6];     /* --mac-rewrite: out's MAC, 02:00:00:00:00:<out_port> */
	int core;                   /* poller index */
};

struct l2f {
	unsigned nports, nunits;
	struct rf_io_dev *ports[L2F_MAX_PORTS];
	struct l2f_unit units[L2F_MAX_UNITS];
	bool json;
	FILE *out;                  /* stats lines: stderr */
	double interval_s;
	uint64_t last_ns;
	uint64_t last_rx[L2F_MAX_PORTS], last_tx[L2F_MAX_PORTS], last_drop[L2F_MAX_PORTS];
	bool offloaded[L2F_MAX_PORTS]; /* --offload: port i's frames go to its pair in the kernel */
};

/* --offload: frames the kernel forwarded from port i to its pair (the entry's hits), and
 * frames it matched but left to userspace (output port down); 0 without offload. */
void l2f_offload_sums(const struct l2f *f, unsigned i, uint64_t *offloaded, uint64_t *fallback);

/* Per-port sums over the units: rx on port i, sent to port i, dropped on the way to port i. */
void l2f_port_sums(const struct l2f *f, unsigned i, uint64_t *rx, uint64_t *sent,
		   uint64_t *dropped);

/* Timer callback (service thread): one stats line (or JSON line) of per-port rates. */
void l2f_stats_tick(void *arg);

/* After the pollers stopped: per-direction totals, checked to add up. Returns 0 when every
 * direction adds up, 1 otherwise. */
int l2f_print_totals(struct l2f *f, FILE *out);

#endif
