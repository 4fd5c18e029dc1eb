/*
 * tests/ofswitch/test_sw_meter_concurrent.c: pollers meter frames through one meter while
 * the agent modifies it (issue 25). Nothing is lost or counted twice:
 *
 * The clock is frozen (injected), so a configuration's bucket never refills: each passed
 * frame moves its band's tat by exactly its cost (bytes x 128000 ticks at 1000 kbit/s,
 * sw_meter.h), and each configuration starts full at tat 0. So over every configuration the
 * meter had (the agent keeps the old ones instead of freeing them), the sum of tat must be
 * the bytes the pollers saw pass x 128000, the band's counters must be what they saw drop,
 * every tat stays within its burst (+ one frame: a full bucket passes one), and the meter's
 * input counters are every frame sent. Lengths vary per frame, so a byte lost or doubled
 * anywhere shows. Timing decides nothing: how the modifies interleave changes the counts,
 * not the identities.
 */
#include "rf_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sw_meter.h"

#define POLLERS 2
#ifdef RF_TEST_STANDALONE
#define FRAMES 40000 /* TSan: about ten times slower */
#else
#define FRAMES 400000
#endif
#define MODS 64
#define T0 1000000000ull
#define RATE 1000      /* kbit/s */
#define BURST 10000    /* kbit: 1.25 MB of frames per configuration */
#define PER_BYTE 128000ull /* ticks per byte at RATE */

static struct sw_meters ms;
static struct sw_meter *meter;
static struct sw_meter_cfg *olds[MODS + 1];
static unsigned nolds;
static _Atomic uint64_t sent_total;
static _Atomic unsigned mods_done; /* the agent's MODIFYs so far: pollers wait for one halfway */
static atomic_bool pollers_done;

struct tally {
	uint64_t pass, drop, pass_bytes, drop_bytes, bytes;
};
static struct tally tallies[POLLERS];

static void keep(void *ctx, void *p)
{
	(void)ctx;
	cr_assert_lt(nolds, MODS + 1);
	olds[nolds++] = p;
}

static struct of_meter_config config(void)
{
	struct of_meter_config c = {.command = OFPMC_ADD, .flags = OFPMF_KBPS | OFPMF_BURST,
				    .meter_id = 1, .nbands = 1, .nbands_wire = 1};
	c.band[0].type = OFPMBT_DROP;
	c.band[0].rate = RATE;
	c.band[0].burst = BURST;
	return c;
}

static void *poller(void *arg)
{
	struct tally *t = arg;
	uint8_t frame[1500];
	memset(frame, 0, sizeof(frame)); /* not IP */
	for (unsigned i = 0; i < FRAMES; i++) {
		/* halfway, wait for the agent's first MODIFY: on a loaded machine it may not have
		 * run yet, and the test is about changes while pollers run (bounded: 4M yields) */
		for (unsigned y = 0; i == FRAMES / 2 && y < 4000000 &&
				     !atomic_load_explicit(&mods_done, memory_order_relaxed); y++)
			sched_yield();
		uint32_t len = 60 + (i * 7919u + (unsigned)(t - tallies) * 13u) % 1400;
		t->bytes += len;
		if (sw_meter_apply(meter, frame, len, T0) == 0) {
			t->pass++;
			t->pass_bytes += len;
		} else {
			t->drop++;
			t->drop_bytes += len;
		}
		if ((i & 255) == 255) /* relaxed: a progress count for the agent, publishes nothing */
			atomic_fetch_add_explicit(&sent_total, 256, memory_order_relaxed);
	}
	return NULL;
}

Test(sw_meter_concurrent, modify_under_pollers_counts_add_up)
{
	struct of_meter_config c = config();
	cr_assert_eq(sw_meter_check(&c), 0);
	cr_assert_eq(sw_meters_add(&ms, &c, T0), 0);
	meter = sw_meters_find(&ms, 1);
	pthread_t th[POLLERS];
	for (unsigned p = 0; p < POLLERS; p++)
		cr_assert_eq(pthread_create(&th[p], NULL, poller, &tallies[p]), 0);
	/* The agent: a MODIFY each time the pollers have sent another slice, MODS at most. */
	uint64_t step = (uint64_t)POLLERS * FRAMES / (MODS + 1), next = step;
	unsigned mods = 0;
	while (mods < MODS) {
		uint64_t s = atomic_load_explicit(&sent_total, memory_order_relaxed);
		if (s >= (uint64_t)POLLERS * FRAMES - 256 * POLLERS)
			break; /* the pollers are (nearly) through */
		if (s < next) {
			sched_yield();
			continue;
		}
		c.command = OFPMC_MODIFY;
		cr_assert_eq(sw_meters_modify(&ms, &c, T0, keep, NULL), 0);
		mods++;
		atomic_store_explicit(&mods_done, mods, memory_order_relaxed); /* a count only */
		next += step;
	}
	for (unsigned p = 0; p < POLLERS; p++)
		pthread_join(th[p], NULL);
	atomic_store(&pollers_done, true);
	cr_assert_gt(mods, 0, "the agent modified the meter while the pollers ran");

	struct tally sum = {0};
	for (unsigned p = 0; p < POLLERS; p++) {
		sum.pass += tallies[p].pass;
		sum.drop += tallies[p].drop;
		sum.pass_bytes += tallies[p].pass_bytes;
		sum.drop_bytes += tallies[p].drop_bytes;
		sum.bytes += tallies[p].bytes;
	}
	cr_assert_eq(sum.pass + sum.drop, (uint64_t)POLLERS * FRAMES);
	cr_assert_eq(atomic_load(&meter->pkts_in), (uint64_t)POLLERS * FRAMES);
	cr_assert_eq(atomic_load(&meter->bytes_in), sum.bytes);

	olds[nolds++] = atomic_load(&meter->cfg);
	uint64_t tat = 0, band_pkts = 0, band_bytes = 0;
	for (unsigned i = 0; i < nolds; i++) {
		uint64_t t = atomic_load(&olds[i]->band[0].tat);
		cr_assert_leq(t, olds[i]->band[0].cap + 1500 * PER_BYTE, "configuration %u", i);
		tat += t;
		band_pkts += atomic_load(&olds[i]->band[0].pkts);
		band_bytes += atomic_load(&olds[i]->band[0].bytes);
	}
	cr_assert_eq(tat, sum.pass_bytes * PER_BYTE, "tokens taken = bytes passed");
	cr_assert_eq(band_pkts, sum.drop);
	cr_assert_eq(band_bytes, sum.drop_bytes);
	cr_assert_gt(sum.pass, 0);
	cr_assert_gt(sum.drop, 0);
	nolds--; /* the current one is the meter's */
	for (unsigned i = 0; i < nolds; i++)
		free(olds[i]);
	sw_meters_free(&ms);
}
