/*
 * tests/runtime/test_runtime_hash.c: pollers read a lock-free hash (no locks, no
 * rcu_read_lock: the runtime's per-round quiescent states are the read side) while the main
 * thread deletes and re-inserts its keys, so deleted nodes are reclaimed under the readers'
 * feet. Every value a reader finds must be the record of the key it asked for. Under TSan
 * this also checks that the runtime's QSBR calls carry the grace-period ordering (qsbr.h).
 */
#include "rf_test.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>

#define NKEYS 512
#define ROUNDS 20

struct record {
	uint64_t key;
};

static struct record records[NKEYS];

struct reader {
	struct rf_hash *h;
	uint64_t next;       /* poller-private */
	_Atomic uint64_t found, wrong;
};

static unsigned read_poll(struct rf_poller *p, void *arg)
{
	(void)p;
	struct reader *r = arg;
	for (int i = 0; i < 16; i++) {
		uint64_t k = r->next++ % NKEYS;
		const struct record *rec = rf_hash_lookup(r->h, &k);
		if (!rec)
			continue; /* deleted just now */
		atomic_fetch_add_explicit(&r->found, 1, memory_order_relaxed);
		if (rec->key != k)
			atomic_fetch_add_explicit(&r->wrong, 1, memory_order_relaxed);
	}
	return 16;
}

static void run(enum rf_idle idle)
{
	char err[256];
	struct rf_hash *h = rf_hash_create("rt", sizeof(uint64_t), NKEYS, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(h);
	rf_qsbr_register();
	for (uint64_t k = 0; k < NKEYS; k++) {
		records[k].key = k;
		cr_assert_eq(rf_hash_insert(h, &k, &records[k]), 0);
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	const char *cores = CPU_COUNT(&set) >= 2 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set) ? "0,1" : NULL;
	struct rf_runtime_config cfg = {.cores = cores, .idle = idle, .spin_rounds = 64};
	struct rf_runtime *rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(rt, "%s", err);
	struct reader rd[2];
	memset(rd, 0, sizeof(rd));
	for (unsigned i = 0; i < rf_runtime_ncores(rt); i++) {
		rd[i].h = h;
		rd[i].next = i * 7;
		cr_assert_eq(rf_runtime_add_poll(rt, i, read_poll, &rd[i], -1), 0);
	}
	cr_assert_eq(rf_runtime_start(rt), 0);
	/* At least ROUNDS rounds, and until every reader has done real work alongside (the
	 * pollers may start late on a busy machine); bounded in time. */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int round = 0;; round++) {
		bool all_read = true;
		for (unsigned i = 0; i < rf_runtime_ncores(rt); i++)
			all_read = all_read && atomic_load(&rd[i].found) >= 1000;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((round >= ROUNDS && all_read) || t.tv_sec - t0.tv_sec > 20)
			break;
		for (uint64_t k = 0; k < NKEYS; k++) {
			void *old = NULL;
			cr_assert_eq(rf_hash_delete(h, &k, &old), 0);
			cr_assert_eq(old, &records[k]);
			cr_assert_eq(rf_hash_insert(h, &k, &records[k]), 0);
			rf_qsbr_quiescent();
		}
	}
	rf_qsbr_synchronize(); /* a grace period ends with the pollers running */
	rf_runtime_stop(rt);
	rf_runtime_join(rt);
	for (unsigned i = 0; i < rf_runtime_ncores(rt); i++) {
		cr_assert_gt(atomic_load(&rd[i].found), 0, "poller %u found nothing", i);
		cr_assert_eq(atomic_load(&rd[i].wrong), 0, "poller %u read a wrong record", i);
	}
	cr_assert_eq(rf_hash_count(h), NKEYS);
	rf_runtime_destroy(rt);
	rf_qsbr_unregister();
	rf_hash_free(h);
}

Test(runtime_hash, pollers_read_while_main_deletes_busy)
{
	run(RF_IDLE_BUSY);
}

Test(runtime_hash, pollers_read_while_main_deletes_adaptive)
{
	run(RF_IDLE_ADAPTIVE);
}
