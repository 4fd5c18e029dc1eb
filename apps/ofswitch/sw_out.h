/*
 * apps/ofswitch/sw_out.h: one controller connection's output, in order: what its
 * non-blocking socket did not take yet. The agent never waits for a controller: a send
 * goes to the socket if nothing is queued before it, and whatever the socket does not take
 * now is queued here whole; the poll loop asks POLLOUT for a connection with output queued
 * and flushes it. Two bounds: at SW_OUT_MAX queued the agent stops reading that
 * connection's requests (back-pressure: a controller that reads slowly gets every reply, a
 * big FLOW dump included, and sends no more until it catches up), and a message that would
 * take the queue past o->hard (SW_OUT_HARD unless set) is refused (-ENOBUFS) and the agent
 * closes the connection. A queue that does not move for an echo interval closes it too
 * (sw_agent.c): a controller that does not read costs SW_OUT_MAX plus one reply.
 *
 * Contract: one thread only (the agent's); nothing here is shared. Errors: negative errno.
 */
#ifndef RINGFLOW_APPS_SW_OUT_H
#define RINGFLOW_APPS_SW_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Queued bytes at which the agent stops reading a connection's requests: 8 MiB, 128
 * messages of the largest size (OF_MAX_MSG_LEN). Replies to what it already read still
 * queue whole beyond it (one FLOW dump is ~140 bytes a flow). */
#define SW_OUT_MAX (8u << 20)
/* The hard bound: a message that would take the queue past it is refused and the
 * connection closed. Only output nothing asked for can get there (FLOW_REMOVED and
 * PORT_STATUS to a controller that stopped reading, before the echo-interval rule closes
 * it) or a reply bigger than any flow table here makes. */
#define SW_OUT_HARD ((size_t)256 << 20)

struct sw_out {
	uint8_t *buf;         /* malloc'd when something must wait; freed when it drains */
	size_t cap, off, len; /* the queued bytes: buf[off, off + len) */
	uint64_t progress_ns; /* when the queue last moved (became non-empty, or sent some) */
	size_t hard;          /* the hard bound; 0: SW_OUT_HARD (tests set a small one) */
	size_t high;          /* the most bytes ever queued at once (kept by sw_out_reset) */
};

/* Sends message b[0, n) on fd, or queues what the socket does not take now (after what is
 * already queued: order is kept). 0, or -ENOBUFS (the queue would pass the hard bound;
 * nothing of b is queued or sent when anything was queued before it), -ENOMEM, or the
 * socket's error (-EPIPE, -ECONNRESET, ...). */
int sw_out_send(struct sw_out *o, int fd, const uint8_t *b, size_t n, uint64_t now);

/* Sends what the socket takes of the queue now. 0 (done or partly done: see sw_out_pending)
 * or the socket's error. */
int sw_out_flush(struct sw_out *o, int fd, uint64_t now);

/* Forgets the queue and its memory (the connection closed, or the queue drained); the hard
 * bound and the high-water mark stay. */
void sw_out_reset(struct sw_out *o);

static inline bool sw_out_pending(const struct sw_out *o)
{
	return o->len != 0;
}

/* At or past SW_OUT_MAX: read no more requests from this connection until it drains. */
static inline bool sw_out_backlogged(const struct sw_out *o)
{
	return o->len >= SW_OUT_MAX;
}

#endif
