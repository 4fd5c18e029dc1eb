/*
 * bench/tools/udpflood.h: the default load of ringflow-stolen, a bounded UDP flood.
 *
 * One thread, pinned to the load CPU, sends 64-byte datagrams (sendmmsg, 32 at a time) to a
 * socket that is never read: every packet still walks the whole receive path (netif_rx,
 * the backlog, ip_rcv, the UDP lookup, the socket queue) and, once the receive buffer is
 * full, is dropped there (Udp RcvbufErrors). That receive work is the softirq being measured.
 * The flood stops at the first of: stop(), `max_packets` sent, `max_seconds` elapsed.
 */
#ifndef RINGFLOW_BENCH_TOOLS_UDPFLOOD_H
#define RINGFLOW_BENCH_TOOLS_UDPFLOOD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vethbed.h"

struct rf_flood {
	int tx_fd, rx_fd;
	unsigned cpu;
	uint64_t max_packets;
	double max_seconds;
	atomic_bool stop;
	atomic_uint_fast64_t sent; /* packets the kernel accepted */
	pthread_t thread;
	bool running;
};

/* Receiver on 127.0.0.1 (an ephemeral port), sender connected to it. Returns 0 or -errno. */
int rf_flood_open_loopback(struct rf_flood *f);
/* Sender in the bed's namespace 0, receiver on its address in namespace 1. Returns 0/-errno. */
int rf_flood_open_veth(struct rf_flood *f, const struct rf_vethbed *b);
/* Starts the sender thread pinned to `cpu`. Returns 0 or -errno. */
int rf_flood_start(struct rf_flood *f, unsigned cpu, uint64_t max_packets, double max_seconds);
/* Stops and joins the sender; returns the packets it sent. */
uint64_t rf_flood_stop(struct rf_flood *f);
/* Waits for the sender to reach its own bound, joins it; returns the packets it sent. */
uint64_t rf_flood_wait(struct rf_flood *f);
/* True once the sender has stopped by itself (packet or time bound reached). */
bool rf_flood_done(struct rf_flood *f);
void rf_flood_close(struct rf_flood *f);

#endif /* RINGFLOW_BENCH_TOOLS_UDPFLOOD_H */
