/*
 * tests/fuzz/fuzz_of_meter.c: libFuzzer target for meters (issue 25): of_mparse (METER_MOD
 * and the meter multiparts, both directions; of_meter.c), the reply iterators over what it
 * accepted, the builders on what it decoded (a re-parse must agree), the switch's handler
 * (sw_meter_agent.c: checks, the meter table, replies) and, with the first input byte as a
 * frame length, the meter and DSCP remark on the input as a frame. The message sits in a
 * buffer of exactly its size, so ASan sees any read past it.
 * Build: cmake -DRF_BUILD_FUZZ=ON -DCMAKE_C_COMPILER=clang; run: build/tests/fuzz/fuzz_of_meter
 */
#include <stdlib.h>
#include <string.h>

#include "of_meter.h"
#include "sw.h"
#include "sw_meter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out[65536];

static void sink(void *ctx, const uint8_t *b, size_t n)
{
	struct of_mmsg m;
	struct of_fault f;
	(void)ctx;
	if (of_mparse(b, n, &m, &f) != 0) /* what the switch sends parses */
		abort();
}

static void free_now(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > OF_MAX_MSG_LEN)
		return 0;
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	struct of_mmsg m;
	struct of_fault f;
	if (of_mparse(b, size, &m, &f) == 0) {
		unsigned cur = 0;
		struct of_meter_stats s;
		struct of_meter_config c;
		if (m.type == OF_M_STATS_REPLY)
			while (of_meter_stats_next(&m, &cur, &s) == 1)
				of_build_meter_stats_reply(out, sizeof(out), 1, 0, &s, 1);
		if (m.type == OF_M_CONFIG_REPLY)
			while (of_meter_config_next(&m, &cur, &c) == 1)
				of_build_meter_config_reply(out, sizeof(out), 1, 0, &c, 1);
		if (m.type == OF_M_METER_MOD) {
			ssize_t n = of_build_meter_mod(out, sizeof(out), m.xid, &m.u.mod);
			struct of_mmsg again;
			if (n <= 0 || of_mparse(out, (size_t)n, &again, &f) != 0 ||
			    again.u.mod.nbands != m.u.mod.nbands)
				abort();
		}
		/* the switch's side, on a table with one meter already in it */
		struct sw_meters ms = {0};
		struct of_meter_config one = {.flags = OFPMF_PKTPS, .meter_id = 1, .nbands = 1,
					      .nbands_wire = 1};
		one.band[0].type = OFPMBT_DROP;
		one.band[0].rate = 10;
		sw_meters_add(&ms, &one, 0);
		struct sw_meter_io io = {sink, free_now, NULL, out, sizeof(out)};
		uint16_t et, ec;
		if (sw_meter_handle(&ms, &m, NULL, 5, &io, &et, &ec) == 1)
			sw_meters_reap(&ms, free_now, NULL);
		struct sw_meter *x = sw_meters_find(&ms, m.type == OF_M_METER_MOD ? m.u.mod.meter_id : 1);
		if (x)
			for (unsigned i = 0; i < 4; i++)
				sw_meter_apply(x, b, (uint32_t)size, 1000000ull * i);
		sw_meters_free(&ms);
	}
	sw_meter_remark(b, (uint32_t)size, size ? data[0] & 3 : 1);
	free(b);
	return 0;
}
