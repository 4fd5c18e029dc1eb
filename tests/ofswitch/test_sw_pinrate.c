/*
 * tests/ofswitch/test_sw_pinrate.c: the PACKET_IN token bucket (sw_pinrate.c) on a clock the
 * test drives: a full bucket at start, refill by elapsed time, never more than
 * rate * time + burst over a long run, no limit at rate 0, no overflow after a long gap;
 * and --packet-in-rate's parser (OVS's default burst of rate / 4).
 */
#include <criterion/criterion.h>

#include "sw_pinrate.h"

#define S 1000000000ull

static unsigned take_n(struct sw_pinrate *b, uint64_t now, unsigned tries)
{
	unsigned n = 0;
	for (unsigned i = 0; i < tries; i++)
		n += sw_pinrate_take(b, now);
	return n;
}

Test(sw_pinrate, starts_full_then_refuses)
{
	struct sw_pinrate b;
	sw_pinrate_init(&b, 1000, 50, 5 * S);
	cr_assert_eq(take_n(&b, 5 * S, 200), 50, "the burst, then nothing at the same instant");
	cr_assert_eq(take_n(&b, 5 * S + 10000000ull, 200), 10, "10 ms at 1000/s: 10 more");
	cr_assert_eq(take_n(&b, 9 * S, 200), 50, "a long pause fills it to the burst only");
}

Test(sw_pinrate, default_burst_is_a_quarter_of_the_rate)
{
	struct sw_pinrate b;
	sw_pinrate_init(&b, 1000, 0, 0);
	cr_assert_eq(b.burst, 250);
	sw_pinrate_init(&b, 3, 0, 0);
	cr_assert_eq(b.burst, 1, "at least one");
}

Test(sw_pinrate, never_more_than_rate_times_time_plus_burst)
{
	struct sw_pinrate b;
	const uint32_t rate = 700, burst = 40;
	sw_pinrate_init(&b, rate, burst, 0);
	uint64_t sent = 0, t = 0, step = 37123; /* an odd step: rounding would show */
	for (; t < 10 * S; t += step)
		sent += take_n(&b, t, 3); /* offered far above the rate */
	uint64_t bound = (uint64_t)rate * t / S + burst;
	cr_assert_leq(sent, bound, "%lu sent, bound %lu", (unsigned long)sent, (unsigned long)bound);
	cr_assert_geq(sent, bound - 2, "the rate is kept, not undershot: %lu", (unsigned long)sent);
}

Test(sw_pinrate, rate_zero_is_no_limit)
{
	struct sw_pinrate b;
	sw_pinrate_init(&b, 0, 0, 0);
	cr_assert_eq(take_n(&b, 0, 100000), 100000);
}

Test(sw_pinrate, long_gap_at_the_largest_rate_does_not_overflow)
{
	struct sw_pinrate b;
	sw_pinrate_init(&b, SW_PINRATE_MAX, SW_PINRATE_MAX, 0);
	cr_assert_eq(take_n(&b, 0, SW_PINRATE_MAX), SW_PINRATE_MAX);
	cr_assert_eq(take_n(&b, 0, 10), 0);
	cr_assert_eq(take_n(&b, 100000 * S, 10), 10, "refilled after a day, no wrap-around");
	cr_assert_eq(b.tokens, ((uint64_t)SW_PINRATE_MAX - 10) * S);
}

Test(sw_pinrate, parse)
{
	uint32_t r, bu;
	cr_assert_eq(sw_pinrate_parse("1000", &r, &bu), 0);
	cr_assert(r == 1000 && bu == 250);
	cr_assert_eq(sw_pinrate_parse("1000,50", &r, &bu), 0);
	cr_assert(r == 1000 && bu == 50);
	cr_assert_eq(sw_pinrate_parse("0", &r, &bu), 0);
	cr_assert(r == 0 && bu == 0);
	cr_assert_eq(sw_pinrate_parse("2", &r, &bu), 0);
	cr_assert(r == 2 && bu == 1);
	const char *bad[] = {"", "x", "10,", "10,x", "-1", "+5", "10,-1", "10000001", "5,5,5",
			     "99999999999999999999"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(sw_pinrate_parse(bad[i], &r, &bu), -1, "'%s'", bad[i]);
}
