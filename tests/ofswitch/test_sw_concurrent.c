/*
 * tests/ofswitch/test_sw_concurrent.c: the switch's table updates under readers. One writer
 * (the agent's role) publishes GENS snapshots, each made of freshly allocated flows for the
 * same NKEYS keys, tagged with their generation; after each publish it waits a grace period
 * and frees the previous snapshot and its flows, as sw_agent.c does. Reader threads (the
 * pollers' role: QSBR-registered, a quiescent state after each pass) look every key up in the
 * snapshot they loaded. Checked: every lookup finds its flow (nothing lost), the flow is the
 * key's own (nothing torn or swapped), all flows of one pass come from one generation, and a
 * reader never sees a generation go backwards. ASan/TSan would see a use after free.
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"

#define NKEYS 64
#define GENS 200
#define READERS 2

static _Atomic(struct sw_table *) table;
static atomic_bool done;
static _Atomic uint64_t bad, lookups, passes;

static void key_of(unsigned i, struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	k->eth_dst[0] = 2;
	k->eth_dst[5] = (uint8_t)i;
}

static struct sw_table *make_gen(uint64_t gen, struct sw_flow **list)
{
	struct sw_flow *head = NULL;
	for (unsigned i = 0; i < NKEYS; i++) {
		struct sw_flow *f = aligned_alloc(RF_CACHE_LINE, sizeof(*f));
		cr_assert(f);
		memset(f, 0, sizeof(*f));
		key_of(i, &f->match);
		f->mask.in_port = 0xffffffffu;
		memset(f->mask.eth_dst, 0xff, 6);
		f->priority = 10;
		f->cookie = gen << 8 | i;
		f->next = head;
		head = f;
	}
	*list = head;
	struct sw_table *t = sw_table_build(head, NKEYS);
	cr_assert(t);
	return t;
}

static void free_list(struct sw_flow *f)
{
	while (f) {
		struct sw_flow *n = f->next;
		free(f);
		f = n;
	}
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t last_gen = 0, n = 0, nbad = 0, np = 0;
	rf_qsbr_register();
	while (!atomic_load_explicit(&done, memory_order_acquire)) {
		/* Pairs with the writer's release exchange: a complete snapshot. */
		struct sw_table *t = atomic_load_explicit(&table, memory_order_acquire);
		uint64_t gen = UINT64_MAX;
		for (unsigned i = 0; i < NKEYS; i++) {
			struct sw_key k;
			key_of((i * 7 + id) % NKEYS, &k);
			struct sw_flow *f = sw_table_lookup(t, &k);
			n++;
			if (!f || (f->cookie & 0xff) != (i * 7 + id) % NKEYS) {
				nbad++;
				continue;
			}
			rf_counter_add(&f->ctr[id].pkts, 1); /* as the pollers count */
			uint64_t g = f->cookie >> 8;
			if (gen == UINT64_MAX)
				gen = g;
			else if (g != gen)
				nbad++;
		}
		if (gen < last_gen)
			nbad++;
		last_gen = gen;
		np++;
		rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	atomic_fetch_add(&bad, nbad);
	atomic_fetch_add(&lookups, n);
	atomic_fetch_add(&passes, np);
	return NULL;
}

Test(sw_concurrent, publish_under_readers, .timeout = 240)
{
	struct sw_flow *list;
	atomic_store(&table, make_gen(1, &list));
	pthread_t th[READERS];
	for (unsigned r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&th[r], NULL, reader, (void *)(uintptr_t)r), 0);
	for (uint64_t g = 2; g <= GENS; g++) {
		struct sw_flow *nl;
		struct sw_table *t = make_gen(g, &nl);
		/* Pairs with the readers' acquire load. */
		struct sw_table *old = atomic_exchange_explicit(&table, t, memory_order_acq_rel);
		rf_qsbr_synchronize();
		sw_table_free(old);
		free_list(list);
		list = nl;
	}
	atomic_store_explicit(&done, true, memory_order_release);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(th[r], NULL);
	sw_table_free(atomic_load(&table));
	free_list(list);
	cr_log_info("%llu lookups in %llu passes over %d generations",
		    (unsigned long long)lookups, (unsigned long long)passes, GENS);
	cr_assert_eq(atomic_load(&bad), 0, "lost, torn or mixed-generation lookups: %llu",
		     (unsigned long long)atomic_load(&bad));
	cr_assert_gt(atomic_load(&lookups), 0);
	cr_assert_eq(atomic_load(&lookups), atomic_load(&passes) * NKEYS);
}
