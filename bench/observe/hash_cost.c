/*
 * bench/observe/hash_cost.c: what one insert + delete pair costs the hash's writer, counted
 * in instructions and cache misses instead of time (the machine is shared): run under
 * callgrind, which counts only between the two CALLGRIND_TOGGLE_COLLECT marks, i.e. only the
 * measured pairs (not the fill):
 *
 *   setarch -R valgrind --fair-sched=yes --tool=callgrind --collect-atstart=no --cache-sim=yes \
 *       build/bench/ringflow-hash-cost IMPL [KEYS] [PAIRS]
 *
 * (--fair-sched=yes: else the callback thread may starve and dead slots wait longer, which
 * moves the counts; docs/lock-free-hash.md)
 *
 * then divide Ir (instructions), D1mr+D1mw and DLmr+DLmw (first- and last-level data misses,
 * simulated) by PAIRS. IMPL: ringflow (the lock-free multi-writer table, one writer),
 * ringflow_1w (RF_HASH_SINGLE_WRITER), rte_hash (DPDK's lock-free reader mode with its QSBR
 * defer queue, as `ringflow-bench hash` builds it; when built with DPDK). The pattern is the
 * `insert_delete` case's: KEYS (default 1M) keys present, then one writer inserts a key of
 * its own band of 32768 and deletes the one inserted 16384 steps earlier, with a quiescent
 * state every 256 operations. Without valgrind it prints the pairs per second (meaningless
 * on a loaded machine, but a smoke check).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>

#if RF_HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_rcu_qsbr.h>
#endif

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MARKS 1
#else /* built without valgrind's header: no marks (--collect-atstart=no then counts nothing) */
#define CALLGRIND_TOGGLE_COLLECT
#define MARKS 0
#endif

#define WKEYS 32768u
#define WBASE ((uint64_t)1 << 40)

struct ops {
	int (*insert)(void *t, uint64_t k, void *v);
	int (*del)(void *t, uint64_t k);
	void (*quiescent)(void);
};

static int rf_ins(void *t, uint64_t k, void *v) { return rf_hash_insert(t, &k, v); }
static int rf_del(void *t, uint64_t k) { return rf_hash_delete(t, &k, NULL); }
static void rf_qs(void) { rf_qsbr_quiescent(); }

#if RF_HAVE_DPDK
static struct rte_rcu_qsbr *qsv;
static int rte_ins(void *t, uint64_t k, void *v) { return rte_hash_add_key_data(t, &k, v) < 0; }
static int rte_del(void *t, uint64_t k) { return rte_hash_del_key(t, &k) < 0; }
static void rte_qs(void) {}

static void *make_rte(void)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "rfhashcost_%d", (int)getpid());
	char *argv[] = {"hash-cost", "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			"--file-prefix", prefix, "-l", "0", "--log-level", "lib.*:error", NULL};
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "hash-cost: rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return NULL;
	}
	struct rte_hash_parameters p = {
		.name = "hashcost", .entries = 2 * 1000000, .key_len = 8,
		.hash_func = rte_hash_crc, .hash_func_init_val = 0, .socket_id = 0,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE};
	struct rte_hash *h = rte_hash_create(&p);
	if (!h)
		return NULL;
	size_t sz = rte_rcu_qsbr_get_memsize(4);
	qsv = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	struct rte_hash_rcu_config rc = {.v = qsv, .mode = RTE_HASH_QSBR_MODE_DQ};
	if (!qsv || rte_rcu_qsbr_init(qsv, 4) != 0 || rte_hash_rcu_qsbr_add(h, &rc) != 0)
		return NULL;
	/* No reader registered with qsv: as in the bench's insert_delete case, whose writer is
	 * not one of rte_hash's QSBR readers (so its deleted slots come back at once). */
	return h;
}
#endif

int main(int argc, char **argv)
{
	const char *impl = argc > 1 ? argv[1] : "ringflow";
	unsigned keys = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1000000u;
	unsigned long pairs = argc > 3 ? strtoul(argv[3], NULL, 10) : 200000ul;
	struct ops o;
	void *t = NULL;
	rf_qsbr_register();
	if (!strcmp(impl, "ringflow") || !strcmp(impl, "ringflow_1w")) {
		unsigned fl = !strcmp(impl, "ringflow_1w") ? RF_HASH_SINGLE_WRITER : 0;
		t = rf_hash_create("cost", 8, keys + 4 * WKEYS, fl); /* as the bench */
		o = (struct ops){rf_ins, rf_del, rf_qs};
#if RF_HAVE_DPDK
	} else if (!strcmp(impl, "rte_hash")) {
		t = make_rte();
		o = (struct ops){rte_ins, rte_del, rte_qs};
#endif
	} else {
		fprintf(stderr, "hash-cost: unknown impl '%s' (ringflow, ringflow_1w, rte_hash)\n",
			impl);
		return 2;
	}
	if (!t) {
		fprintf(stderr, "hash-cost: %s: could not create the table\n", impl);
		return 1;
	}
	for (unsigned i = 1; i <= keys; i++) {
		/* values far from any address of ours: valgrind loads the binary low, where a small
		 * integer could equal one of the hash's sentinel addresses (-EINVAL) */
		int rc = o.insert(t, i, (void *)(uintptr_t)(((uint64_t)i << 20) | 1));
		if (rc != 0) {
			fprintf(stderr, "hash-cost: fill failed at key %u: %s\n", i, strerror(-rc));
			return 1;
		}
		if ((i & 1023) == 0)
			o.quiescent();
	}
	/* Warm-up: the band reaches its steady state (half its keys present). */
	uint64_t step = 0, fails = 0;
	for (unsigned long i = 0; i < 2 * (unsigned long)WKEYS; i++, step++) {
		uint64_t k = WBASE + (step / 2) % WKEYS;
		if (step & 1)
			fails += o.del(t, WBASE + ((step / 2) + WKEYS / 2) % WKEYS) != 0;
		else
			fails += o.insert(t, k, (void *)(uintptr_t)(k | 1)) != 0;
		if ((step & 255) == 255)
			o.quiescent();
	}
	fails = 0; /* the warm-up's first deletes find nothing */
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	CALLGRIND_TOGGLE_COLLECT;
	for (unsigned long i = 0; i < 2 * pairs; i++, step++) {
		uint64_t k = WBASE + (step / 2) % WKEYS;
		if (step & 1)
			fails += o.del(t, WBASE + ((step / 2) + WKEYS / 2) % WKEYS) != 0;
		else
			fails += o.insert(t, k, (void *)(uintptr_t)(k | 1)) != 0;
		if ((step & 255) == 255)
			o.quiescent();
	}
	CALLGRIND_TOGGLE_COLLECT;
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("{\"bench\":\"hash_cost\",\"impl\":\"%s\",\"keys\":%u,\"pairs\":%lu,"
	       "\"failed_ops\":%llu,\"Mpairs_per_s\":%.3f,\"callgrind_marks\":%s}\n",
	       impl, keys, pairs, (unsigned long long)fails, (double)pairs / s / 1e6,
	       MARKS ? "true" : "false");
	rf_qsbr_unregister();
	return fails != 0;
}
