/*
 * apps/ofswitch/sw_out.c: a connection's queued output (sw_out.h). The common case costs
 * nothing: with nothing queued a message goes straight to the socket, and the queue is
 * allocated only when the socket refuses part of one. Queued bytes sit in one buffer,
 * buf[off, off + len), moved to the front or doubled (64 KiB up to the hard bound) when a message
 * does not fit behind them, and freed once they have all gone out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sw_out.h"

#define SW_OUT_MIN (64u << 10) /* the first allocation: one message of the largest size */

/* What the socket takes of b[0, n) now: bytes sent (0: full), or -errno. */
static ssize_t put(int fd, const uint8_t *b, size_t n)
{
	for (;;) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0)
			return w;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

void sw_out_reset(struct sw_out *o)
{
	free(o->buf);
	*o = (struct sw_out){.hard = o->hard, .high = o->high};
}

static size_t hard_of(const struct sw_out *o)
{
	return o->hard ? o->hard : SW_OUT_HARD;
}

int sw_out_flush(struct sw_out *o, int fd, uint64_t now)
{
	while (o->len) {
		ssize_t w = put(fd, o->buf + o->off, o->len);
		if (w <= 0)
			return (int)w;
		o->off += (size_t)w;
		o->len -= (size_t)w;
		o->progress_ns = now;
	}
	sw_out_reset(o); /* drained: the memory goes back */
	return 0;
}

/* Room for n more bytes behind the queue: moved to the front, or a larger buffer. */
static int reserve(struct sw_out *o, size_t n)
{
	if (o->off + o->len + n <= o->cap)
		return 0;
	if (o->len)
		memmove(o->buf, o->buf + o->off, o->len);
	o->off = 0;
	if (o->len + n <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap : SW_OUT_MIN;
	while (cap < o->len + n)
		cap *= 2;
	cap = cap > hard_of(o) ? hard_of(o) : cap; /* the caller checked len + n <= hard */
	uint8_t *p = realloc(o->buf, cap);
	if (!p)
		return -ENOMEM;
	o->buf = p;
	o->cap = cap;
	return 0;
}

int sw_out_send(struct sw_out *o, int fd, const uint8_t *b, size_t n, uint64_t now)
{
	size_t done = 0;
	if (!o->len) { /* nothing before it: straight to the socket */
		ssize_t w = put(fd, b, n);
		if (w < 0)
			return (int)w;
		done = (size_t)w;
		if (done == n)
			return 0;
		o->progress_ns = now; /* the queue starts now */
	} else if (o->len + n > hard_of(o)) { /* full: the socket may have taken some since */
		int rc = sw_out_flush(o, fd, now);
		if (rc)
			return rc;
		if (!o->len)
			return sw_out_send(o, fd, b, n, now);
	}
	if (o->len + (n - done) > hard_of(o))
		return -ENOBUFS;
	int rc = reserve(o, n - done);
	if (rc)
		return rc;
	memcpy(o->buf + o->off + o->len, b + done, n - done);
	o->len += n - done;
	if (o->len > o->high)
		o->high = o->len;
	return 0;
}
