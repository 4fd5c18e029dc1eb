/*
 * tests/xdp/test_offload_concurrent.c: the offload API (ringflow/offload.h) called from
 * several threads at once on one port's table, with the kernel's maps underneath: nothing
 * lost, nothing duplicated. Runs under ThreadSanitizer (label concurrent).
 *
 * Each worker installs, replaces, reads and removes entries of its own (every call must
 * succeed exactly as if alone), and all workers race on a shared key set: per key and round
 * exactly one add and exactly one delete win. A side thread reads the totals and toggles the
 * output port's state meanwhile. The bed is one netns of the test's own (unshare).
 */
#include "rf_test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/io.h>
#include <ringflow/offload.h>
#include <ringflow/pktbuf.h>

#define WORKERS 4
#define OWN 48     /* keys per worker */
#define SHARED 16  /* keys all workers race on */
#define ROUNDS 12

static struct rf_io_dev *A, *B;
static pthread_barrier_t bar;
static atomic_uint add_wins[SHARED], del_wins[SHARED];
static atomic_bool stop;
static atomic_uint failures;

static struct rf_offload_match key(unsigned owner, unsigned i)
{
	struct rf_offload_match m = {.fields = RF_OFFLOAD_F_ETH_SRC | RF_OFFLOAD_F_L4_DST};
	m.eth_src[0] = 0x06;
	m.eth_src[4] = (uint8_t)owner;
	m.eth_src[5] = (uint8_t)i;
	m.l4_dst = (uint16_t)(1000 + i);
	if (owner == WORKERS) /* shared keys: another mask */
		m.fields |= RF_OFFLOAD_F_ETH_TYPE, m.eth_type = 0x0800;
	return m;
}

static void *worker(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B},
				 drop = {.type = RF_OFFLOAD_DROP};
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (unsigned i = 0; i < OWN; i++) {
			struct rf_offload_match m = key(w, i);
			if (rf_offload_add(A, &m, (i + r) % 2 ? &out : &drop, 1) != 0)
				atomic_fetch_add(&failures, 1);
		}
		for (unsigned i = 0; i < OWN; i += 2) {
			struct rf_offload_match m = key(w, i);
			uint64_t h = 1;
			if (rf_offload_replace(A, &m, &out, 1) != 0 ||
			    rf_offload_stats(A, &m, &h, NULL) != 0 || h != 0)
				atomic_fetch_add(&failures, 1);
		}
		pthread_barrier_wait(&bar);
		for (unsigned j = 0; j < SHARED; j++) {
			struct rf_offload_match m = key(WORKERS, (j + w) % SHARED);
			int rc = rf_offload_add(A, &m, &out, 1);
			if (rc == 0)
				atomic_fetch_add(&add_wins[(j + w) % SHARED], 1);
			else if (rc != -EEXIST)
				atomic_fetch_add(&failures, 1);
		}
		pthread_barrier_wait(&bar);
		for (unsigned j = 0; j < SHARED; j++) {
			struct rf_offload_match m = key(WORKERS, (j + w) % SHARED);
			int rc = rf_offload_del(A, &m);
			if (rc == 0)
				atomic_fetch_add(&del_wins[(j + w) % SHARED], 1);
			else if (rc != -ENOENT)
				atomic_fetch_add(&failures, 1);
		}
		for (unsigned i = 0; i < OWN; i++) {
			struct rf_offload_match m = key(w, i);
			if (rf_offload_del(A, &m) != 0)
				atomic_fetch_add(&failures, 1);
		}
	}
	/* Leave the own set installed, for the final count. */
	for (unsigned i = 0; i < OWN; i++) {
		struct rf_offload_match m = key(w, i);
		if (rf_offload_add(A, &m, &out, 1) != 0)
			atomic_fetch_add(&failures, 1);
	}
	return NULL;
}

static void *side(void *arg)
{
	(void)arg;
	bool up = false;
	while (!atomic_load(&stop)) {
		struct rf_offload_totals t;
		if (rf_offload_totals(A, &t) != 0 || t.entries > RF_OFFLOAD_MAX_ENTRIES)
			atomic_fetch_add(&failures, 1);
		if (rf_offload_port_state(B, up) != 0)
			atomic_fetch_add(&failures, 1);
		up = !up;
		usleep(500);
	}
	return NULL;
}

Test(offload_concurrent, install_remove_from_many_threads)
{
	char a[16], b[16], cmd[256], spec[128], err[512];
	if (geteuid() != 0)
		cr_skip_test("needs root: a network namespace, a veth pair, XDP programs");
	if (system("command -v ip >/dev/null 2>&1") != 0)
		cr_skip_test("needs the ip tool (Debian package iproute2)");
	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	snprintf(a, sizeof(a), "rfOc0%d", (int)getpid() % 100000);
	snprintf(b, sizeof(b), "rfOc1%d", (int)getpid() % 100000);
	snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name %s && ip link set %s up && "
		 "ip link set %s up", a, b, a, b);
	cr_assert_eq(system(cmd), 0, "cannot build the veth pair");
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("oflc", 4096, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=skb,frames=1", a);
	A = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(A, "%s", err);
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=skb,frames=1", b);
	B = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(B, "%s", err);

	pthread_t th[WORKERS], sd;
	pthread_barrier_init(&bar, NULL, WORKERS);
	cr_assert_eq(pthread_create(&sd, NULL, side, NULL), 0);
	for (unsigned w = 0; w < WORKERS; w++)
		cr_assert_eq(pthread_create(&th[w], NULL, worker, (void *)(uintptr_t)w), 0);
	for (unsigned w = 0; w < WORKERS; w++)
		pthread_join(th[w], NULL);
	atomic_store(&stop, true);
	pthread_join(sd, NULL);
	pthread_barrier_destroy(&bar);

	cr_assert_eq(atomic_load(&failures), 0, "%u calls failed", atomic_load(&failures));
	for (unsigned j = 0; j < SHARED; j++) {
		cr_assert_eq(atomic_load(&add_wins[j]), ROUNDS, "shared key %u: %u adds won", j,
			     atomic_load(&add_wins[j]));
		cr_assert_eq(atomic_load(&del_wins[j]), ROUNDS, "shared key %u: %u deletes won", j,
			     atomic_load(&del_wins[j]));
	}
	struct rf_offload_totals t;
	cr_assert_eq(rf_offload_totals(A, &t), 0);
	cr_assert_eq(t.entries, WORKERS * OWN, "entries %llu", (unsigned long long)t.entries);
	cr_assert_eq(t.full, 0);
	for (unsigned w = 0; w < WORKERS; w++)
		for (unsigned i = 0; i < OWN; i++) {
			struct rf_offload_match m = key(w, i);
			uint64_t h = 1;
			cr_assert_eq(rf_offload_stats(A, &m, &h, NULL), 0, "worker %u key %u", w, i);
			cr_assert_eq(h, 0);
		}
	cr_assert_eq(rf_offload_flush(A), WORKERS * OWN);
	rf_io_close(A);
	rf_io_close(B);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 4096);
	rf_pktbuf_pool_free(pool);
}
