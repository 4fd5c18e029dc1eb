/*
 * apps/echo/lg_modes.h: the load generator's netperf-style modes beside the open-loop echo
 * (lg_run.h): stream (TCP_STREAM / UDP_STREAM), rr (TCP_RR / UDP_RR) and crr (TCP_CRR).
 *
 *   stream  one direction, as fast as the backend takes messages, for a duration; the far end
 *           is a sink (lg_sink.h) that counts and checksums what arrives and reports it at the
 *           end, so throughput is what arrived, and UDP loss is sent minus arrived.
 *   rr      closed loop: each of C connections keeps N requests outstanding; a reply lets the
 *           next request go. Transactions/s and the latency of each transaction.
 *   crr     connect, one request and its reply, close; repeated one at a time, as netperf's
 *           TCP_CRR. Connections/s and the latency of connect + request + reply.
 * Each run is a warm-up (not counted) and a measured window; every loop is bounded in time and
 * in count. One thread; the caller pins it.
 */
#ifndef RINGFLOW_APPS_ECHO_LG_MODES_H
#define RINGFLOW_APPS_ECHO_LG_MODES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"
#include "lg_report.h"

struct rf_io_dev;
struct rf_pktbuf_pool;

enum rf_lg_mode { RF_LG_MODE_ECHO, RF_LG_MODE_STREAM, RF_LG_MODE_RR, RF_LG_MODE_CRR };

/* "echo", "stream", "rr", "crr" -> the mode; -1 for anything else. */
int rf_lg_mode_parse(const char *s);
const char *rf_lg_mode_name(enum rf_lg_mode m);

struct rf_lg_mopts {
	double warmup_s, duration_s;
	unsigned size;        /* message bytes (RF_LG_HDR_SIZE .. RF_LG_MAX_SIZE) */
	unsigned burst;       /* stream: messages per tx_burst */
	unsigned outstanding; /* rr: requests in flight per connection (1 .. RF_LG_MAX_OUTSTANDING) */
	unsigned drain_ms;    /* how long to wait for the last replies / the sink's report */
	uint64_t max_msgs;    /* bound on measured messages (rr: transactions, crr: connections) */
	bool block;           /* rr: after a few empty rounds, block in rf_io_wait (up to 1 ms)
			       * instead of spinning: the client's side of a blocking peer such as
			       * sockperf's default; meant for --conns 1 (it waits on one connection
			       * at a time, in turn) */
	uint16_t point;
};

#define RF_LG_MAX_OUTSTANDING 256
#define RF_LG_MAX_CONNS 64

/* One measured point of stream, rr or crr. */
struct rf_lg_mpoint {
	enum rf_lg_mode mode;
	const char *backend;
	unsigned size, conns, outstanding;
	double seconds;           /* measured window */
	/* What this side sent in the window (stream: messages; rr/crr: requests). */
	uint64_t sent_msgs, sent_bytes, sent_csum;
	/* stream: what the sink reported for the window; rr/crr: distinct measured replies. */
	uint64_t recv_msgs, recv_bytes, recv_csum;
	bool reported;            /* stream: the sink's report arrived */
	uint64_t corrupt;         /* replies (or, stream, sink-side messages) that failed the check */
	uint64_t duplicates;      /* rr: replies to a request already answered */
	uint64_t lost;            /* rr: requests given up after drain_ms without a reply */
	uint64_t errors;          /* crr: connections that failed (open, send or no reply) */
	uint64_t total_sent, total_recv; /* rr/crr: every request and reply, warm-up included */
	uint64_t conns_made;      /* crr: connections opened, warm-up included */
	struct rf_hist *lat;      /* rr/crr: transaction latency in ns */
	double proc_cpu_pct;      /* this process's CPU over the window, % of one CPU */
	double steal_pct, load1;
	unsigned n_cpus;
	double cpu_busy_pct[RF_LG_MAX_CPUS];
};

/* Stream on dev (queue 0) to a sink. Returns 0 or -errno (device failed outright). */
int rf_lg_run_stream(struct rf_io_dev *dev, struct rf_pktbuf_pool *pool,
		     const struct rf_lg_mopts *o, struct rf_lg_mpoint *p);

/* Closed-loop request/response over ndev devices (one connection each) to a reflector.
 * p->lat must point to a histogram. Returns 0, -EINVAL, -ENOMEM, or -errno. */
int rf_lg_run_rr(struct rf_io_dev **dev, unsigned ndev, struct rf_pktbuf_pool *pool,
		 const struct rf_lg_mopts *o, struct rf_lg_mpoint *p);

/* Connect/request/response/close, repeated: each connection is rf_io_open(spec) and
 * rf_io_close (the driver's own connect and close). p->lat must point to a histogram.
 * Returns 0, or -errno when not one connection could be made (err then says why). */
int rf_lg_run_crr(const char *spec, struct rf_pktbuf_pool *pool, const struct rf_lg_mopts *o,
		  struct rf_lg_mpoint *p, char *err, size_t errlen);

/* Output: a table per mode (header, row) and one JSON object per line. */
void rf_lg_mtable_header(FILE *f, enum rf_lg_mode m);
void rf_lg_mtable_row(FILE *f, const struct rf_lg_mpoint *p);
void rf_lg_mjson(FILE *f, const struct rf_lg_mpoint *p);

/* stream: fraction of sent messages the sink did not count (0 when nothing was sent). */
double rf_lg_mpoint_loss(const struct rf_lg_mpoint *p);

/* The CPU fields of p from two samples around the window, plus this process's CPU time. */
void rf_lg_mpoint_cpu(struct rf_lg_mpoint *p, const struct rf_lg_cpu_sample *a,
		      const struct rf_lg_cpu_sample *b, double proc_cpu_s);

/* This process's user + system CPU time in seconds. */
double rf_lg_proc_cpu_s(void);

#endif /* RINGFLOW_APPS_ECHO_LG_MODES_H */
