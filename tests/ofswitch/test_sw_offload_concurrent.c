/*
 * tests/ofswitch/test_sw_offload_concurrent.c: --offload's classifier walk (sw_offload_classify,
 * which ORs the masks it consults) and its decision, run by reader threads while a writer adds
 * and removes flows over four masks (one on ip_dscp) and priorities, retiring and reclaiming
 * what it removes as the agent does. In the switch only the agent walks this way; the test
 * runs it from readers to check the walk's loads under TSan, and what any answer must satisfy:
 * the flow matches the key, its whole mask is among the consulted bits, it is not freed
 * (poisoned before free), and the decision is OK only when no consulted bit is ip_dscp.
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"
#include "sw_offload.h"

#ifdef RF_TEST_STANDALONE
#define NOPS 4000 /* TSan: about ten times slower */
#else
#define NOPS 20000
#endif
#define LIVE 32
#define READERS 2
#define POISON 0xdeaddeadull

static struct sw_table *table;
static struct sw_dp dp;
static bool fast[2] = {true, true};
static atomic_bool writer_done;
static _Atomic uint64_t bad, answers, offloadable;

static struct sw_key key_of(uint32_t r)
{
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = 1;
	k.eth_type = 0x0800;
	k.ip_proto = 17;
	k.tp_dst = (uint16_t)(9000 + r % 4);
	k.ip_dscp = (uint8_t)(r / 4 % 2);
	k.nw_dst[3] = (uint8_t)(r / 8 % 4);
	return k;
}

static void dtor(struct sw_flow *f, void *arg)
{
	(void)arg;
	free(atomic_load_explicit(&f->actions, memory_order_relaxed));
	f->cookie = POISON; /* a reader still holding it would see this (and TSan a race) */
}

static struct sw_flow *make(uint32_t r)
{
	struct sw_flow *f = sw_flow_alloc(1);
	struct sw_actions *x = calloc(1, sizeof(*x));
	if (!f || !x)
		abort();
	struct sw_key k = key_of(r);
	f->match.in_port = 1, f->mask.in_port = ~0u;
	f->match.eth_type = 0x0800, f->mask.eth_type = 0xffff;
	switch (r % 4) { /* four masks */
	case 0: break;
	case 1: f->match.ip_proto = 17, f->mask.ip_proto = 0xff;
		f->match.tp_dst = k.tp_dst, f->mask.tp_dst = 0xffff; break;
	case 2: f->match.ip_dscp = k.ip_dscp, f->mask.ip_dscp = 0x3f; break;
	case 3: f->match.nw_dst[3] = k.nw_dst[3], f->mask.nw_dst[3] = 0xff; break;
	}
	f->priority = (uint16_t)(10 + (r >> 3) % 5);
	f->cookie = r;
	x->n = 1;
	x->op[0].code = SW_OP_OUTPUT;
	x->op[0].arg = 2;
	atomic_init(&f->actions, x);
	return f;
}

static void *writer(void *arg)
{
	(void)arg;
	rf_qsbr_register();
	struct sw_flow *live[LIVE] = {0};
	uint32_t rng = 12345;
	for (unsigned op = 0; op < NOPS; op++) {
		rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
		unsigned i = rng % LIVE;
		if (live[i]) {
			sw_table_remove(table, live[i]);
			sw_table_retire(table, live[i], SW_RETIRE_FLOW);
			live[i] = NULL;
		} else {
			struct sw_flow *f = make(rng >> 8);
			bool dup = false; /* same match, mask, priority: an ADD would replace */
			for (unsigned j = 0; j < LIVE; j++)
				dup = dup || (live[j] && live[j]->priority == f->priority &&
					      !memcmp(&live[j]->match, &f->match, sizeof(f->match)) &&
					      !memcmp(&live[j]->mask, &f->mask, sizeof(f->mask)));
			if (dup || sw_table_add(table, f) != 0) {
				free(atomic_load(&f->actions));
				free(f);
			} else {
				live[i] = f;
			}
		}
		sw_table_reclaim(table, op * 100000ull, false);
	}
	for (unsigned i = 0; i < LIVE; i++)
		if (live[i]) {
			sw_table_remove(table, live[i]);
			sw_table_retire(table, live[i], SW_RETIRE_FLOW);
		}
	atomic_store(&writer_done, true);
	rf_qsbr_unregister();
	return NULL;
}

static void *reader(void *arg)
{
	uint32_t rng = (uint32_t)(uintptr_t)arg * 7919 + 1;
	rf_qsbr_register();
	while (!atomic_load(&writer_done)) {
		for (int n = 0; n < 64; n++) {
			rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
			struct sw_key k = key_of(rng), consulted;
			struct sw_off_plan p;
			struct sw_flow *f = sw_offload_classify(table, &k, &consulted);
			enum sw_off_why w = sw_offload_decide(&dp, fast, &k, f, &consulted, &p);
			if (!f) {
				if (w != SW_OFF_NO_FLOW)
					atomic_fetch_add(&bad, 1);
				continue;
			}
			atomic_fetch_add(&answers, 1);
			bool ok = f->cookie != POISON && sw_flow_matches(f, &k);
			const uint8_t *m = (const uint8_t *)&f->mask, *u = (const uint8_t *)&consulted;
			for (unsigned b = 0; b < sizeof(k); b++)
				ok = ok && (m[b] & ~u[b]) == 0;
			/* OK exactly when the walk never consulted ip_dscp */
			ok = ok && (w == SW_OFF_OK) == (consulted.ip_dscp == 0);
			if (w == SW_OFF_OK)
				atomic_fetch_add(&offloadable, 1);
			if (!ok)
				atomic_fetch_add(&bad, 1);
		}
		rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(sw_offload_concurrent, walk_and_decision_under_churn, .timeout = 120)
{
	rf_qsbr_register();
	dp.nports = 2;
	dp.ports[0].dev = (struct rf_io_dev *)(uintptr_t)0x1000;
	dp.ports[1].dev = (struct rf_io_dev *)(uintptr_t)0x2000;
	table = sw_table_create(1);
	cr_assert(table);
	sw_table_set_flow_dtor(table, dtor, NULL);
	rf_qsbr_offline();
	pthread_t w, rd[READERS];
	for (uintptr_t r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&rd[r], NULL, reader, (void *)r), 0);
	cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
	pthread_join(w, NULL);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	rf_qsbr_online();
	sw_table_reclaim(table, 0, true);
	sw_table_free(table);
	rf_qsbr_unregister();
	cr_assert_eq(atomic_load(&bad), 0, "%llu answers broke a rule",
		     (unsigned long long)atomic_load(&bad));
	cr_assert_gt(atomic_load(&answers), 0);
	cr_assert_gt(atomic_load(&offloadable), 0, "some answers were offloadable");
}
