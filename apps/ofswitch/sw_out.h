/*
 * apps/ofswitch/sw_out.h: one controller connection's output, in order: what its
 * non-blocking socket did not take yet. The agent never waits for a controller: a send
 * goes to the socket if nothing is queued before it, and whatever the socket does not take
 * now is queued here whole; the poll loop asks POLLOUT for a connection with output queued
 * and flushes it. A queue that would pass SW_OUT_MAX is refused (-ENOBUFS): the agent closes
 * that connection (a controller that does not read), so memory stays bounded by
 * SW_OUT_MAX per connection whatever a peer does.
 *
 * Contract: one thread only (the agent's); nothing here is shared. Errors: negative errno.
 */
#ifndef RINGFLOW_APPS_SW_OUT_H
#define RINGFLOW_APPS_SW_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a connection may have queued beyond its socket: 8 MiB, 128 messages of the largest
 * size (OF_MAX_MSG_LEN). One reply is made whole before the agent polls again, so this is
 * also what one FLOW stats dump may be ahead of a reading controller (beyond the kernel's
 * buffers): ~60,000 flows of ~140 bytes. 12 connections at most: 96 MiB worst case. */
#define SW_OUT_MAX (8u << 20)

struct sw_out {
	uint8_t *buf;         /* malloc'd when something must wait; freed when it drains */
	size_t cap, off, len; /* the queued bytes: buf[off, off + len) */
	uint64_t progress_ns; /* when the queue last moved (became non-empty, or sent some) */
};

/* Sends message b[0, n) on fd, or queues what the socket does not take now (after what is
 * already queued: order is kept). 0, or -ENOBUFS (the queue would pass SW_OUT_MAX; nothing
 * of b is queued or sent when anything was queued before it), -ENOMEM, or the socket's
 * error (-EPIPE, -ECONNRESET, ...). */
int sw_out_send(struct sw_out *o, int fd, const uint8_t *b, size_t n, uint64_t now);

/* Sends what the socket takes of the queue now. 0 (done or partly done: see sw_out_pending)
 * or the socket's error. */
int sw_out_flush(struct sw_out *o, int fd, uint64_t now);

/* Forgets the queue and its memory (the connection closed). */
void sw_out_reset(struct sw_out *o);

static inline bool sw_out_pending(const struct sw_out *o)
{
	return o->len != 0;
}

#endif
