/*
 * tests/ofswitch/test_sw_po_concurrent.c: PACKET_OUT programs handed from the agent to
 * poller 0 (sw_dp_po_slot / sw_dp_poll_ctl) under concurrency (TSan in CI).
 *
 * Three threads, as in the switch: the "agent" fills a program slot for frame i (set
 * eth_dst to a MAC made of i, output CONTROLLER) and enqueues the frame, whose payload says
 * i; "poller 0" runs sw_dp_poll_ctl; the checker takes the frames the program sent to the
 * controller ring. Every frame must arrive once, in order, with the eth_dst its own program
 * wrote: a slot reused while poller 0 still read it would show another frame's MAC. The pool
 * (256 buffers) bounds the frames in flight, so the controller ring never overflows.
 */
#include "rf_test.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>

#include "sw.h"

#define N 50000u

static struct sw_dp dp;
static _Atomic bool stop;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void mac_of(uint32_t i, uint8_t mac[6])
{
	memcpy(mac, (uint8_t[]){0x02, 0x77, (uint8_t)(i >> 24), (uint8_t)(i >> 16),
				(uint8_t)(i >> 8), (uint8_t)i}, 6);
}

static void *agent(void *arg)
{
	(void)arg;
	uint64_t end = now_ms() + 120000; /* bounded: the test fails rather than hangs */
	for (uint32_t i = 0; i < N && now_ms() < end;) {
		struct sw_actions *slot = sw_dp_po_slot(&dp);
		struct rf_pktbuf *b = slot ? rf_pktbuf_alloc(dp.pool) : NULL;
		if (!b)
			continue; /* poller 0 or the checker behind: try again */
		uint8_t *d = rf_pktbuf_data(b);
		memset(d, 0, 64);
		memcpy(d + 6, "\x02\0\0\0\0\x01", 6);
		d[12] = 0x88, d[13] = 0xb5;
		memcpy(d + 14, &i, sizeof(i));
		b->data_len = 64;
		b->flow = OFPP_CONTROLLER;
		memset(slot, 0, sizeof(*slot));
		slot->n = 2;
		slot->last_out = 1;
		slot->op[0].code = SW_OP_SET_ETH_DST;
		mac_of(i, slot->op[0].mac);
		slot->op[1].code = SW_OP_OUTPUT;
		slot->op[1].arg = OFPP_CONTROLLER;
		slot->op[1].max_len = OFPCML_NO_BUFFER;
		b->timestamp_ns = (uint64_t)(uintptr_t)slot;
		void *p = b;
		if (rf_ring_enqueue_burst(dp.from_ctl, &p, 1, NULL) != 1) {
			rf_pktbuf_free(b);
			continue;
		}
		dp.po_sent++;
		i++;
	}
	return NULL;
}

static void *poller0(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sw_dp_poll_ctl(NULL, &dp.cores[0]);
	return NULL;
}

Test(sw_po_concurrent, every_packet_out_runs_its_own_program_once_in_order, .timeout = 280)
{
	memset(&dp, 0, sizeof(dp));
	dp.nports = 0; /* outputs go to the controller ring only */
	dp.pool = rf_pktbuf_pool_create("sw_po_test", 256, 256, 0, RF_MEMPOOL_QUIET);
	dp.from_ctl = rf_ring_create("sw_po_from_ctl", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	dp.to_ctl = rf_ring_create("sw_po_to_ctl", 1024, RF_RING_SC_DEQ);
	cr_assert(dp.pool && dp.from_ctl && dp.to_ctl);
	dp.cores[0].dp = &dp;
	pthread_t ta, tp;
	cr_assert_eq(pthread_create(&tp, NULL, poller0, NULL), 0);
	cr_assert_eq(pthread_create(&ta, NULL, agent, NULL), 0);
	uint32_t next = 0, bad = 0;
	uint64_t end = now_ms() + 150000;
	while (next < N && now_ms() < end) {
		void *v[32];
		unsigned n = rf_ring_dequeue_burst(dp.to_ctl, v, 32, NULL);
		for (unsigned k = 0; k < n; k++) {
			struct rf_pktbuf *b = v[k];
			const uint8_t *d = rf_pktbuf_data(b);
			uint32_t i;
			memcpy(&i, d + 14, sizeof(i));
			uint8_t mac[6];
			mac_of(i, mac);
			if (i != next || b->data_len != 64 || memcmp(d, mac, 6) != 0)
				bad++;
			next = i + 1;
			rf_pktbuf_free(b);
		}
	}
	pthread_join(ta, NULL);
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	pthread_join(tp, NULL);
	cr_assert_eq(next, N, "frames seen up to %u of %u", next, N);
	cr_assert_eq(bad, 0, "%u frames out of order or with another frame's program", bad);
	cr_assert_eq(atomic_load(&dp.po_done), N, "poller 0 ran %llu programs",
		     (unsigned long long)atomic_load(&dp.po_done));
	cr_assert_eq(dp.cores[0].drop_ctl, 0);
	cr_assert_eq(dp.cores[0].drop_tx, 0);
	cr_assert_eq(rf_pktbuf_pool_avail(dp.pool), 256, "a buffer was lost");
	rf_ring_free(dp.from_ctl);
	rf_ring_free(dp.to_ctl);
	rf_pktbuf_pool_free(dp.pool);
}
