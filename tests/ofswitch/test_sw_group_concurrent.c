/*
 * tests/ofswitch/test_sw_group_concurrent.c: pollers forwarding through a group while the
 * agent modifies it (issue 25; TSan in CI).
 *
 * READERS poller threads each send N frames (a different TCP flow each) through a program
 * [GROUP 1] with sw_dp_apply, as the datapath does, and pass a quiescent state after each.
 * The agent thread meanwhile MODIFYs group 1 over and over through four shapes (indirect,
 * select with weights, fast failover, all with one bucket), toggles port 2's link, and
 * reclaims through the flow table's QSBR retire list. Every shape sends each frame out of
 * exactly one port (port 3 never goes down), and every bucket that outputs to port p first
 * sets eth_dst to 02:00:00:00:00:p. So: each frame must leave exactly once, on a port whose
 * frame carries that port's MAC (a torn or freed program would show another byte or none),
 * and at the end the group's packet counters and the sums of its bucket counters must both
 * equal READERS x N.
 */
#include "rf_test.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/ring.h>

#include "sw.h"
#include "sw_frames.h"
#include "sw_group.h"

#define READERS 2
#define N 40000u

static struct sw_dp dp;
static struct sw_actions prog;
static _Atomic unsigned done;
static _Atomic uint64_t sent[READERS], bad[READERS], modifies;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct of_group_mod gm;

/* Bucket: set eth_dst 02:00:00:00:00:port, output port; weight w, watching port wp. */
static void bucket(uint16_t w, uint32_t wp, uint32_t port)
{
	struct of_bucket *b = &gm.buckets[gm.nbuckets++];
	memset(b, 0, sizeof(*b));
	b->weight = w;
	b->watch_port = wp;
	b->watch_group = OFPG_ANY;
	uint8_t mac[6] = {2, 0, 0, 0, 0, (uint8_t)port};
	of_act_set_mac(&b->actions, OF_OXM_ETH_DST, mac);
	of_act_output(&b->actions, port, 0);
}

/* Shape k of group 1 (command ADD or MODIFY). */
static void shape(unsigned k, uint16_t cmd)
{
	memset(&gm, 0, sizeof(gm));
	gm.command = cmd;
	gm.group_id = 1;
	switch (k % 4) {
	case 0:
		gm.type = OFPGT_INDIRECT;
		bucket(0, OFPP_ANY, 2 + (k / 4) % 2);
		break;
	case 1:
		gm.type = OFPGT_SELECT;
		bucket(1, 2, 2);
		bucket(2, OFPP_ANY, 3);
		break;
	case 2:
		gm.type = OFPGT_FF;
		bucket(0, 2, 2);
		bucket(0, 3, 3);
		break;
	default:
		gm.type = OFPGT_ALL;
		bucket(0, OFPP_ANY, 3);
		break;
	}
	bool del;
	uint16_t et, ec;
	cr_assert_eq(sw_group_mod(dp.groups, &gm, 0, &del, &et, &ec), 0, "refused %u/%u", et, ec);
}

static void *agent(void *arg)
{
	struct sw_table *t = arg;
	rf_qsbr_register();
	uint64_t end = now_ms() + 120000; /* bounded: the test fails rather than hangs */
	for (unsigned k = 1; atomic_load(&done) < READERS && now_ms() < end; k++) {
		shape(k, OFPGC_MODIFY);
		sw_group_set_link(dp.groups, 2, k % 3 != 0);
		sw_table_reclaim(t, (uint64_t)k * 100000u, false); /* a grace period every 20 */
		atomic_fetch_add(&modifies, 1);
		rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

static void *poller(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg;
	struct sw_core *c = &dp.cores[r];
	rf_qsbr_register();
	uint8_t f[128];
	uint32_t n = frame(f, 6);
	/* N frames, and on until the agent has changed the group a few times: on a loaded
	 * machine the agent may not have been scheduled during the first N (bounded: 120 s) */
	uint64_t end = now_ms() + 120000;
	for (uint32_t i = 0; i < N || (atomic_load(&modifies) <= 10 && now_ms() < end); i++) {
		f[34] = (uint8_t)(i >> 8), f[35] = (uint8_t)i; /* a flow per frame */
		f[36] = (uint8_t)(i >> 16), f[37] = (uint8_t)r;
		struct rf_pktbuf *b = rf_pktbuf_alloc(dp.pool);
		if (!b) {
			i--;
			continue;
		}
		memcpy(rf_pktbuf_data(b), f, n);
		b->data_len = n;
		sw_dp_apply(c, b, 0, &prog, NULL);
		unsigned outs = 0;
		for (unsigned pi = 0; pi < dp.nports; pi++) {
			for (unsigned k = 0; k < c->ntx[pi]; k++) {
				const uint8_t *d = rf_pktbuf_data(c->tx[pi][k]);
				if (d[5] != pi + 1 || d[0] != 2)
					atomic_fetch_add(&bad[r], 1);
			}
			outs += c->ntx[pi];
			rf_pktbuf_free_bulk(c->tx[pi], c->ntx[pi]);
			c->ntx[pi] = 0;
		}
		if (outs != 1)
			atomic_fetch_add(&bad[r], 1);
		atomic_fetch_add_explicit(&sent[r], outs, memory_order_relaxed);
		rf_qsbr_quiescent();
	}
	atomic_fetch_add(&done, 1);
	rf_qsbr_unregister();
	return NULL;
}

Test(sw_group_concurrent, pollers_forward_through_a_group_while_it_changes, .timeout = 280)
{
	rf_qsbr_register();
	dp.nports = 3;
	dp.ncores = READERS;
	dp.pool = rf_pktbuf_pool_create("sw_group_conc", 1024, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(dp.pool);
	struct sw_table *t = sw_table_create(READERS);
	cr_assert_not_null(t);
	atomic_store(&dp.table, t);
	dp.groups = sw_groups_create(&dp);
	cr_assert_not_null(dp.groups);
	for (unsigned r = 0; r < READERS; r++) {
		dp.cores[r].idx = r;
		dp.cores[r].dp = &dp;
	}
	shape(0, OFPGC_ADD);
	struct of_actions a = {0};
	of_act_simple(&a, OF_ACT_GROUP, 1);
	struct of_match any = {0};
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&any, dp.nports, &ctx);
	ctx.groups = dp.groups;
	uint16_t et, ec;
	cr_assert_eq(sw_actions_decode(&a, &ctx, &prog, &et, &ec), 0);

	rf_qsbr_offline(); /* the main thread only waits below */
	pthread_t rd[READERS], w;
	for (unsigned r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&rd[r], NULL, poller, (void *)(uintptr_t)r), 0);
	cr_assert_eq(pthread_create(&w, NULL, agent, t), 0);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	pthread_join(w, NULL);
	rf_qsbr_online();

	uint64_t total = 0;
	for (unsigned r = 0; r < READERS; r++) {
		cr_assert_eq(atomic_load(&bad[r]), 0, "poller %u: %lu frames lost, doubled or torn",
			     r, (unsigned long)atomic_load(&bad[r]));
		cr_assert_geq(atomic_load(&sent[r]), N);
		total += atomic_load(&sent[r]);
	}
	cr_assert_gt(atomic_load(&modifies), 10, "the agent changed the group while they ran");
	int s = sw_group_find(dp.groups, 1);
	cr_assert_geq(s, 0);
	const struct sw_group *grp = atomic_load(&dp.groups->slot[s]);
	uint64_t gp = 0, bp = 0;
	for (unsigned r = 0; r < READERS; r++) {
		gp += atomic_load(&grp->ctr[r].pkts);
		for (unsigned i = 0; i < SW_GROUP_MAX_BUCKETS; i++)
			bp += atomic_load(&grp->ctr[r].bpkts[i]);
	}
	cr_assert_eq(gp, total, "group packets %lu, frames %lu", (unsigned long)gp,
		     (unsigned long)total);
	cr_assert_eq(bp, total, "bucket packets %lu, frames %lu", (unsigned long)bp,
		     (unsigned long)total);
	sw_table_reclaim(t, 0, true);
	sw_table_reclaim(t, 0, true);
	atomic_store(&dp.table, NULL);
	sw_table_free(t);
	sw_groups_free(dp.groups);
	rf_pktbuf_pool_free(dp.pool);
	rf_qsbr_unregister();
}
