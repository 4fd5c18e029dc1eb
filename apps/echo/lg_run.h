/*
 * apps/echo/lg_run.h: the open-loop load generator's engine: one rate point over an open I/O
 * device (a client spec such as udp:connect=10.0.0.2:9000).
 *
 * Open loop: message k of a point is due at t0 + k / rate (absolute deadlines, so a late loop
 * catches up with a burst instead of drifting), and is sent when due whatever has come back;
 * the loop never waits for a reply. Between sends it polls the device for replies and times
 * each one against the send time carried in the message (CLOCK_MONOTONIC, one clock). A point
 * is a warm-up (not counted), then the measured window, then a bounded drain for late replies.
 *
 * Threads: rf_lg_run_point uses one: the device's queue 0 is used by the calling thread only
 * (io.h's contract), so sending and receiving are interleaved in one busy loop on one core; the
 * caller pins it. rf_lg_run_point_split puts the receiver on a thread of its own, pinned to
 * another CPU, for drivers with RF_IO_CAP_SPLIT_RXTX (UDP sockets): the sender's schedule then
 * never waits behind reply processing.
 * Every loop is bounded in time: a point ends at most drain_ms after its last deadline.
 */
#ifndef RINGFLOW_APPS_ECHO_LG_RUN_H
#define RINGFLOW_APPS_ECHO_LG_RUN_H

#include <stdint.h>

#include "lg_report.h"
#include "lg_track.h"

struct rf_io_dev;
struct rf_pktbuf_pool;

struct rf_lg_opts {
	double rate;        /* msg/s */
	double warmup_s;    /* seconds sent at rate before measuring */
	double duration_s;  /* measured seconds */
	unsigned size;      /* message bytes (RF_LG_HDR_SIZE .. RF_LG_MAX_SIZE) */
	unsigned burst;     /* most messages per tx_burst (1 .. RF_IO_MAX_BURST) */
	unsigned drain_ms;  /* how long to wait for replies after the last send */
	uint16_t point;     /* point number, carried in every message */
};

/* Runs one point on dev (queue 0) with buffers from pool. p->rtt must point to a histogram,
 * t to a tracker with capacity >= rate * duration_s + 1; both are reset here. Fills p (backend
 * is left to the caller). Returns 0, or -errno when the device failed outright. */
int rf_lg_run_point(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
		    const struct rf_lg_opts *o, struct rf_lg_track *t, struct rf_lg_point *p);

/* As rf_lg_run_point, with the replies received by a thread pinned to rx_cpu while the calling
 * thread sends. -EOPNOTSUPP when the driver cannot receive and send on two threads at once. */
int rf_lg_run_point_split(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
			  const struct rf_lg_opts *o, struct rf_lg_track *t, struct rf_lg_point *p,
			  int rx_cpu);

/* CLOCK_MONOTONIC in ns. */
uint64_t rf_lg_now_ns(void);

#endif /* RINGFLOW_APPS_ECHO_LG_RUN_H */
