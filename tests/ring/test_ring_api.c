/*
 * tests/ring/test_ring_api.c: every ring call and its edges, single-threaded:
 * empty, full, wrap-around past 2^32, bulk (all or nothing) vs burst (as many as fit),
 * and bad arguments.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/ring.h>

#include "ring/ring_pvt.h"

#define P(x) ((void *)(uintptr_t)(x))

Test(ring_api, create_rejects_bad_count_and_flags)
{
	errno = 0;
	cr_assert_null(rf_ring_create("zero", 0, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_ring_create("three", 3, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_ring_create("huge", 1u << 31 << 1, 0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_ring_create("flags", 8, 0x80));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rf_ring_get_memsize(6), 0);
	cr_assert_eq(rf_ring_init(NULL, "x", 8, 0), -EINVAL);
	rf_ring_free(NULL); /* no-op */
}

Test(ring_api, new_ring_is_empty_with_full_capacity)
{
	struct rf_ring *r = rf_ring_create("r", 16, 0);
	cr_assert_not_null(r);
	cr_assert(rf_ring_empty(r));
	cr_assert_not(rf_ring_full(r));
	cr_assert_eq(rf_ring_count(r), 0);
	cr_assert_eq(rf_ring_free_count(r), 16);
	cr_assert_eq(rf_ring_get_capacity(r), 16);
	cr_assert_str_eq(r->name, "r");
	rf_ring_free(r);
}

Test(ring_api, size_one_ring_holds_one)
{
	struct rf_ring *r = rf_ring_create("one", 1, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	void *out = NULL;
	cr_assert_eq(rf_ring_enqueue(r, P(7)), 0);
	cr_assert(rf_ring_full(r));
	cr_assert_eq(rf_ring_enqueue(r, P(8)), -ENOBUFS);
	cr_assert_eq(rf_ring_dequeue(r, &out), 0);
	cr_assert_eq(out, P(7));
	cr_assert_eq(rf_ring_dequeue(r, &out), -ENOENT);
	rf_ring_free(r);
}

static void check_bulk_is_all_or_nothing(unsigned flags)
{
	struct rf_ring *r = rf_ring_create("bulk", 8, flags);
	void *in[8], *out[8];
	unsigned free_space = 99, avail = 99;
	for (unsigned i = 0; i < 8; i++)
		in[i] = P(i + 1);

	cr_assert_eq(rf_ring_enqueue_bulk(r, in, 5, &free_space), 5);
	cr_assert_eq(free_space, 3);
	/* 4 do not fit in 3: nothing moves. */
	cr_assert_eq(rf_ring_enqueue_bulk(r, in, 4, &free_space), 0);
	cr_assert_eq(free_space, 3);
	cr_assert_eq(rf_ring_count(r), 5);
	/* 6 are not there: nothing moves. */
	cr_assert_eq(rf_ring_dequeue_bulk(r, out, 6, &avail), 0);
	cr_assert_eq(avail, 5);
	cr_assert_eq(rf_ring_dequeue_bulk(r, out, 5, &avail), 5);
	cr_assert_eq(avail, 0);
	for (unsigned i = 0; i < 5; i++)
		cr_assert_eq(out[i], in[i]);
	rf_ring_free(r);
}

Test(ring_api, bulk_is_all_or_nothing_mpmc) { check_bulk_is_all_or_nothing(0); }
Test(ring_api, bulk_is_all_or_nothing_spsc)
{
	check_bulk_is_all_or_nothing(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}

static void check_burst_moves_what_fits(unsigned flags)
{
	struct rf_ring *r = rf_ring_create("burst", 8, flags);
	void *in[12], *out[12];
	unsigned free_space = 99, avail = 99;
	for (unsigned i = 0; i < 12; i++)
		in[i] = P(100 + i);
	cr_assert_eq(rf_ring_enqueue_burst(r, in, 12, &free_space), 8);
	cr_assert_eq(free_space, 0);
	cr_assert(rf_ring_full(r));
	cr_assert_eq(rf_ring_enqueue_burst(r, in, 1, &free_space), 0);
	cr_assert_eq(rf_ring_dequeue_burst(r, out, 3, &avail), 3);
	cr_assert_eq(avail, 5);
	cr_assert_eq(rf_ring_dequeue_burst(r, out + 3, 12, &avail), 5);
	cr_assert_eq(avail, 0);
	for (unsigned i = 0; i < 8; i++)
		cr_assert_eq(out[i], in[i], "slot %u", i);
	cr_assert_eq(rf_ring_dequeue_burst(r, out, 12, NULL), 0);
	rf_ring_free(r);
}

Test(ring_api, burst_moves_what_fits_mpmc) { check_burst_moves_what_fits(0); }
Test(ring_api, burst_moves_what_fits_spsc)
{
	check_burst_moves_what_fits(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}

static void check_wrap_past_2_32(unsigned flags)
{
	struct rf_ring *r = rf_ring_create("wrap", 16, flags);
	rf_ring_set_start_index_pvt(r, UINT32_MAX - 20);
	void *in[7], *out[7];
	uintptr_t next_in = 1, next_out = 1;
	/* 7-element steps cross both the slot-array end and the 2^32 index wrap. */
	for (unsigned step = 0; step < 40; step++) {
		for (unsigned i = 0; i < 7; i++)
			in[i] = P(next_in++);
		cr_assert_eq(rf_ring_enqueue_bulk(r, in, 7, NULL), 7, "step %u", step);
		cr_assert_eq(rf_ring_count(r), 7);
		cr_assert_eq(rf_ring_dequeue_bulk(r, out, 7, NULL), 7);
		for (unsigned i = 0; i < 7; i++)
			cr_assert_eq(out[i], P(next_out++), "step %u slot %u", step, i);
		cr_assert(rf_ring_empty(r));
	}
	/* Fill completely across the wrap, then drain. */
	void *full[16];
	for (unsigned i = 0; i < 16; i++)
		full[i] = P(1000 + i);
	cr_assert_eq(rf_ring_enqueue_burst(r, full, 16, NULL), 16);
	cr_assert(rf_ring_full(r));
	void *back[16];
	cr_assert_eq(rf_ring_dequeue_burst(r, back, 16, NULL), 16);
	for (unsigned i = 0; i < 16; i++)
		cr_assert_eq(back[i], full[i]);
	rf_ring_free(r);
}

Test(ring_api, burst_wraps_past_2_32_mpmc) { check_wrap_past_2_32(0); }
Test(ring_api, burst_wraps_past_2_32_spsc)
{
	check_wrap_past_2_32(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}
Test(ring_api, burst_wraps_past_2_32_spmc) { check_wrap_past_2_32(RF_RING_SP_ENQ); }
Test(ring_api, burst_wraps_past_2_32_mpsc) { check_wrap_past_2_32(RF_RING_SC_DEQ); }

Test(ring_api, bad_arguments_return_zero_with_einval)
{
	struct rf_ring *r = rf_ring_create("bad", 8, 0);
	void *objs[16] = {0};
	unsigned free_space = 99;

	errno = 0;
	cr_assert_eq(rf_ring_enqueue_bulk(NULL, objs, 1, NULL), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rf_ring_dequeue_burst(NULL, objs, 1, NULL), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(rf_ring_enqueue_burst(r, NULL, 1, NULL), 0);
	cr_assert_eq(errno, EINVAL);
	/* A bulk larger than the ring can never succeed: say so rather than report "full". */
	errno = 0;
	cr_assert_eq(rf_ring_enqueue_bulk(r, objs, 9, &free_space), 0);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(free_space, 8);
	errno = 0;
	cr_assert_eq(rf_ring_dequeue_bulk(r, objs, 9, NULL), 0);
	cr_assert_eq(errno, EINVAL);
	/* n == 0 is fine and moves nothing. */
	cr_assert_eq(rf_ring_enqueue_bulk(r, NULL, 0, NULL), 0);
	cr_assert_eq(rf_ring_count(NULL), 0);
	cr_assert(rf_ring_empty(NULL));
	cr_assert_not(rf_ring_full(NULL));
	rf_ring_free(r);
}

Test(ring_api, init_in_caller_memory)
{
	size_t sz = rf_ring_get_memsize(32);
	cr_assert_gt(sz, 32 * sizeof(void *));
	struct rf_ring *r = aligned_alloc(RF_RING_HEADTAIL_ALIGN, sz);
	cr_assert_eq(rf_ring_init(r, "mine", 32, RF_RING_SC_DEQ), 0);
	cr_assert_eq(rf_ring_enqueue(r, P(5)), 0);
	void *o;
	cr_assert_eq(rf_ring_dequeue(r, &o), 0);
	cr_assert_eq(o, P(5));
	free(r);
}

Test(ring_api, producer_and_consumer_state_on_separate_lines)
{
	cr_assert_geq(offsetof(struct rf_ring, cons) - offsetof(struct rf_ring, prod), 64);
	cr_assert_eq(offsetof(struct rf_ring, prod) % 64, 0);
	cr_assert_eq(offsetof(struct rf_ring, cons) % 64, 0);
	cr_assert_eq(offsetof(struct rf_ring, slots) % 64, 0);
}

/* Every burst length 1..size at every start slot: the copy moves four at a time and then the
 * last 1..3, and splits at the end of the slot array; each path must keep content and order.
 * Guard words either side of the caller's array catch a copy that writes one too many. */
static void check_every_length_at_every_offset(unsigned flags)
{
	enum { SIZE = 16 };
	struct rf_ring *r = rf_ring_create("copy", SIZE, flags);
	uintptr_t next_in = 1, next_out = 1;
	for (unsigned offset = 0; offset < SIZE; offset++) {
		for (unsigned n = 1; n <= SIZE; n++) {
			void *in[SIZE], *out[SIZE + 2];
			for (unsigned i = 0; i < n; i++)
				in[i] = P(next_in++);
			for (unsigned i = 0; i < SIZE + 2; i++)
				out[i] = P(0xdead);
			cr_assert_eq(rf_ring_enqueue_burst(r, in, n, NULL), n, "offset %u n %u", offset, n);
			cr_assert_eq(rf_ring_dequeue_burst(r, out + 1, n, NULL), n);
			for (unsigned i = 0; i < n; i++)
				cr_assert_eq(out[1 + i], P(next_out++), "offset %u n %u item %u", offset,
					     n, i);
			cr_assert_eq(out[0], P(0xdead), "wrote before the array");
			cr_assert_eq(out[n + 1], P(0xdead), "wrote past the array");
		}
		/* move the start slot on by one for the next round */
		cr_assert_eq(rf_ring_enqueue(r, P(next_in++)), 0);
		void *o = NULL;
		cr_assert_eq(rf_ring_dequeue(r, &o), 0);
		cr_assert_eq(o, P(next_out++));
	}
	rf_ring_free(r);
}

Test(ring_api, every_length_at_every_offset_spsc)
{
	check_every_length_at_every_offset(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}
Test(ring_api, every_length_at_every_offset_mpmc) { check_every_length_at_every_offset(0); }

/* Failed enqueues: every call that placed fewer than asked, and the objects it left out. */
static void check_enqueue_failures_counted(unsigned flags)
{
	struct rf_ring *r = rf_ring_create("fail", 8, flags);
	void *in[8], *out[8];
	for (unsigned i = 0; i < 8; i++)
		in[i] = P(i + 1);
	cr_assert_eq(rf_ring_enqueue_failures(r, NULL), 0);
	cr_assert_eq(rf_ring_enqueue_bulk(r, in, 8, NULL), 8);
	cr_assert_eq(rf_ring_enqueue_failures(r, NULL), 0, "a success counts nothing");
	const unsigned N = 37;
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(rf_ring_enqueue(r, P(99)), -ENOBUFS);
	uint64_t objs = 0;
	cr_assert_eq(rf_ring_enqueue_failures(r, &objs), N);
	cr_assert_eq(objs, N);
	cr_assert_eq(rf_ring_enqueue_bulk(r, in, 3, NULL), 0);   /* +1 call, +3 objects */
	cr_assert_eq(rf_ring_dequeue_bulk(r, out, 2, NULL), 2);
	cr_assert_eq(rf_ring_enqueue_burst(r, in, 5, NULL), 2);  /* +1 call, +3 objects */
	cr_assert_eq(rf_ring_enqueue_burst(r, in, 0, NULL), 0);  /* n == 0: not a failure */
	errno = 0;
	cr_assert_eq(rf_ring_enqueue_bulk(r, in, 9, NULL), 0);   /* EINVAL: not counted */
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rf_ring_enqueue_failures(r, &objs), N + 2);
	cr_assert_eq(objs, N + 6);
	cr_assert_eq(rf_ring_enqueue_failures(NULL, &objs), 0);
	cr_assert_eq(objs, 0);
	rf_ring_free(r);
}

Test(ring_api, enqueue_failures_counted_mpmc) { check_enqueue_failures_counted(0); }
Test(ring_api, enqueue_failures_counted_spsc)
{
	check_enqueue_failures_counted(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}

Test(ring_api, failure_counters_share_no_line_with_head_or_tail)
{
	size_t f = offsetof(struct rf_ring, enq_fail);
	cr_assert_eq(f % RF_RING_HEADTAIL_ALIGN, 0);
	cr_assert_geq(f, offsetof(struct rf_ring, cons.tail) + RF_RING_HEADTAIL_ALIGN);
	cr_assert_geq(offsetof(struct rf_ring, slots), f + RF_RING_HEADTAIL_ALIGN);
}
