/*
 * tests/ofswitch/test_sw_out.c: a controller connection's queued output (sw_out.c) on a
 * socketpair whose reader the test drives: nothing is queued while the socket takes it,
 * what it does not take is queued in order and comes out whole after the reader drains,
 * the queue refuses (-ENOBUFS) a message that would pass its hard bound and nothing of it goes
 * out, and a closed peer is the socket's error. Content is checked byte by byte.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sw_out.h"

#define MSG 4096

static void pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	int small = 4096; /* the kernel's buffers small: the queue fills early */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
}

/* Message i: MSG bytes, each (i * 7 + k) & 0xff. */
static void fill(uint8_t *b, unsigned i)
{
	for (unsigned k = 0; k < MSG; k++)
		b[k] = (uint8_t)(i * 7 + k);
}

/* Reads everything the reader end has now (and what flushing o lets through) and checks
 * it continues the stream of messages at *pos bytes. */
static void drain(int rd, int wr, struct sw_out *o, size_t *pos)
{
	uint8_t b[MSG * 4];
	for (int idle = 0; idle < 3;) {
		ssize_t n = read(rd, b, sizeof(b));
		if (n > 0) {
			for (ssize_t k = 0; k < n; k++, (*pos)++)
				cr_assert_eq(b[k], (uint8_t)((*pos / MSG) * 7 + *pos % MSG),
					     "byte %zu out of order", *pos);
			idle = 0;
		} else {
			idle++;
		}
		cr_assert_eq(sw_out_flush(o, wr, 1), 0);
	}
}

Test(sw_out, sends_straight_while_the_socket_takes_it)
{
	int sv[2];
	pair(sv);
	struct sw_out o = {0};
	uint8_t b[64] = {1, 2, 3};
	cr_assert_eq(sw_out_send(&o, sv[0], b, sizeof(b), 1), 0);
	cr_assert_not(sw_out_pending(&o));
	cr_assert_null(o.buf, "no memory while nothing waits");
	cr_assert_eq(read(sv[1], b, sizeof(b)), 64);
	close(sv[0]);
	close(sv[1]);
}

Test(sw_out, queues_in_order_then_drains_whole)
{
	int sv[2];
	pair(sv);
	struct sw_out o = {0};
	uint8_t b[MSG];
	unsigned n = 512, first = n; /* 2 MiB: far more than the socket takes */
	for (unsigned i = 0; i < n; i++) {
		fill(b, i);
		cr_assert_eq(sw_out_send(&o, sv[0], b, MSG, 100 + i), 0);
		if (sw_out_pending(&o) && first == n)
			first = i;
	}
	cr_assert(sw_out_pending(&o));
	cr_assert_eq(o.progress_ns, 100 + first, "the queue's clock starts with the first message "
		     "the socket refused (%u)", first);
	size_t pos = 0;
	drain(sv[1], sv[0], &o, &pos);
	cr_assert_eq(pos, (size_t)n * MSG, "all %u messages arrived (%zu bytes)", n, pos);
	cr_assert_not(sw_out_pending(&o));
	cr_assert_null(o.buf, "drained: the memory went back");
	close(sv[0]);
	close(sv[1]);
}

Test(sw_out, refuses_what_would_pass_the_bound)
{
	int sv[2];
	pair(sv);
	struct sw_out o = {.hard = SW_OUT_MAX}; /* the hard bound, small enough for a test */
	uint8_t b[MSG];
	unsigned i = 0;
	int rc;
	for (;; i++) {
		fill(b, i);
		rc = sw_out_send(&o, sv[0], b, MSG, 1);
		if (rc)
			break;
		cr_assert_leq(o.len, SW_OUT_MAX);
	}
	cr_assert_eq(rc, -ENOBUFS);
	cr_assert_gt(o.len + MSG, SW_OUT_MAX, "refused only at the bound: %zu queued", o.len);
	cr_assert_leq(o.cap, SW_OUT_MAX);
	size_t pos = 0;
	drain(sv[1], sv[0], &o, &pos);
	cr_assert_eq(pos, (size_t)i * MSG, "the refused message sent nothing: %zu bytes", pos);
	fill(b, i); /* drained: the same message goes now */
	cr_assert_eq(sw_out_send(&o, sv[0], b, MSG, 2), 0);
	drain(sv[1], sv[0], &o, &pos);
	cr_assert_eq(pos, (size_t)(i + 1) * MSG);
	sw_out_reset(&o);
	close(sv[0]);
	close(sv[1]);
}

Test(sw_out, a_closed_peer_is_an_error)
{
	int sv[2];
	pair(sv);
	struct sw_out o = {0};
	uint8_t b[MSG] = {0};
	while (!sw_out_pending(&o))
		cr_assert_eq(sw_out_send(&o, sv[0], b, MSG, 1), 0);
	close(sv[1]);
	int rc = sw_out_flush(&o, sv[0], 2);
	cr_assert(rc == -EPIPE || rc == -ECONNRESET, "flush to a closed peer: %d", rc);
	sw_out_reset(&o);
	close(sv[0]);
}
