/*
 * tests/tools/test_counters.c: the arithmetic the tools print: counter deltas across a wrap,
 * rates, and the compute job of ringflow-stolen (known FNV-1a answers, same checksum every
 * run). No timing.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "procnet.h"
#include "workload.h"

Test(delta, plain_step)
{
	cr_assert_eq(rf_counter_delta(100, 250, 32), 150);
	cr_assert_eq(rf_counter_delta(100, 250, 64), 150);
	cr_assert_eq(rf_counter_delta(7, 7, 32), 0);
}

Test(delta, wraps_at_32_bits)
{
	/* softnet_stat prints u32 counters: 0xfffffff0 -> 0x10 is 0x20 packets. */
	cr_assert_eq(rf_counter_delta(0xfffffff0u, 0x10, 32), 0x20);
	cr_assert_eq(rf_counter_delta(0xffffffffu, 0, 32), 1);
	cr_assert_eq(rf_counter_delta(0, 0xffffffffu, 32), 0xffffffffu);
}

Test(delta, wraps_at_64_bits)
{
	cr_assert_eq(rf_counter_delta(UINT64_MAX - 4, 5, 64), 10);
}

Test(delta, auto_width_tells_wrap_from_reset)
{
	cr_assert_eq(rf_counter_delta_auto(10, 15), 5);
	/* A 32-bit driver counter wrapped. */
	cr_assert_eq(rf_counter_delta_auto(0xfffffffeu, 3), 5);
	/* A 64-bit counter went backwards from far above 2^32: the device was re-created. */
	cr_assert_eq(rf_counter_delta_auto(UINT64_C(1) << 40, 42), 42);
}

Test(rate, per_second)
{
	cr_assert_float_eq(rf_rate(100, 0.5), 200.0, 1e-9);
	cr_assert_float_eq(rf_rate(3, 1.0), 3.0, 1e-9);
	cr_assert_float_eq(rf_rate(5, 0.0), 0.0, 1e-9, "no interval, no rate");
	cr_assert_float_eq(rf_rate(5, -1.0), 0.0, 1e-9);
}

Test(workload, fnv1a_known_answers)
{
	/* Published FNV-1a 64-bit test vectors. */
	cr_assert_eq(rf_fnv1a64(RF_FNV1A_OFFSET, "", 0), UINT64_C(0xcbf29ce484222325));
	cr_assert_eq(rf_fnv1a64(RF_FNV1A_OFFSET, "a", 1), UINT64_C(0xaf63dc4c8601ec8c));
	cr_assert_eq(rf_fnv1a64(RF_FNV1A_OFFSET, "foobar", 6), UINT64_C(0x85944171f73967e8));
}

Test(workload, same_checksum_every_run)
{
	static uint8_t a[RF_WORKLOAD_BUF], b[RF_WORKLOAD_BUF];
	rf_workload_fill(a);
	rf_workload_fill(b);
	cr_assert_arr_eq(a, b, RF_WORKLOAD_BUF, "the buffer is the same every time");
	uint64_t c1 = rf_workload_run(a, 50), c2 = rf_workload_run(a, 50);
	cr_assert_eq(c1, c2);
	cr_assert_neq(rf_workload_run(a, 51), c1, "one more pass changes the checksum");
}

Test(workload, passes_chain_the_hash)
{
	static uint8_t buf[RF_WORKLOAD_BUF];
	rf_workload_fill(buf);
	uint64_t h = RF_FNV1A_OFFSET;
	for (int i = 0; i < 3; i++)
		h = rf_fnv1a64(h, buf, RF_WORKLOAD_BUF);
	cr_assert_eq(rf_workload_run(buf, 3), h);
	cr_assert_eq(rf_workload_run(buf, 0), RF_FNV1A_OFFSET);
}
