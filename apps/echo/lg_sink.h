/*
 * apps/echo/lg_sink.h: the receiving end of the load generator's stream mode (TCP_STREAM /
 * UDP_STREAM): it counts what arrives and, when asked, says so; nothing is echoed.
 *
 * The one idea: stream mode sends in one direction only, so the sender cannot see loss or
 * damage by itself. The sink counts the measured messages of the current point (messages,
 * payload bytes, the sum of their rf_lg_csum), optionally checks every payload's pattern, and
 * answers a report request (a bare header with phase RF_LG_PHASE_REPORT_REQ, sent after the
 * stream) with one struct rf_lg_sink_report, sent back on the same connection or to the same
 * UDP peer by rewriting the request's own buffer. A message of a new point number starts the
 * counts afresh; warm-up messages are counted apart. Used by ringflow-echo --sink and by tests.
 *
 * Report layout (host byte order: this host's processes at both ends, as lg_msg.h):
 *   0 u32 magic "RFSK"  4 u16 point  6 u16 pad  8 u64 msgs  16 u64 bytes  24 u64 csum
 *  32 u64 corrupt      40 u64 warmup_msgs      (48 bytes)
 * One sink per device queue; not thread-safe.
 */
#ifndef RINGFLOW_APPS_ECHO_LG_SINK_H
#define RINGFLOW_APPS_ECHO_LG_SINK_H

#include <stdbool.h>
#include <stdint.h>

#define RF_LG_SINK_MAGIC 0x4b534652u /* "RFSK" in memory on little-endian hosts */

struct rf_pktbuf;
struct rf_io_dev;
struct rf_poller;

struct rf_lg_sink_report {
	uint32_t magic;
	uint16_t point;
	uint16_t pad;
	uint64_t msgs;        /* measured messages of `point` received */
	uint64_t bytes;       /* their payload bytes */
	uint64_t csum;        /* sum of rf_lg_csum over them (mod 2^64) */
	uint64_t corrupt;     /* messages that were not ours or (check on) failed the pattern */
	uint64_t warmup_msgs; /* warm-up messages of `point` */
};

struct rf_lg_sink {
	bool check;           /* verify every payload's pattern (costs a pass over the bytes) */
	struct rf_lg_sink_report r; /* counts of the current point */
	uint64_t reports;     /* report requests answered */
	uint64_t total_msgs;  /* everything received, all points and phases */
};

/* Accounts n received buffers. Report requests come back in out[] (at most n), rewritten as
 * reports and addressed like the request (the caller sends them); every other buffer is freed.
 * Returns the number of reports in out[]. */
unsigned rf_lg_sink_take(struct rf_lg_sink *s, struct rf_pktbuf **b, unsigned n,
			 struct rf_pktbuf **out);

/* ringflow-echo --sink: one poller round on a device queue (rx_burst, account, send reports). */
struct rf_lg_sink_queue {
	struct rf_io_dev *dev;
	unsigned queue, burst;
	struct rf_lg_sink sink;
};
unsigned rf_lg_sink_poll(struct rf_poller *p, void *arg);

#endif /* RINGFLOW_APPS_ECHO_LG_SINK_H */
