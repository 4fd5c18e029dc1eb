/*
 * tests/bench/test_falseshare.c: the false-sharing kernels count right. Threads increment
 * their own counters in every layout and with both increments; each counter must end at
 * exactly its thread's iterations and the sum at threads x iterations. The per-core counter
 * blocks must add up to what fs_stats_update() promises for the packets counted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rf_test.h"

#include "kernels/falseshare_kernels.h"

#define THREADS 4
#define ITERS 200000

struct job {
	struct fs_counters *c;
	unsigned index;
	int op; /* 0 atomic, 1 plain, 2 stats */
	size_t stats_stride;
	unsigned char *stats;
};

static void *run_job(void *p)
{
	struct job *j = p;
	if (j->op == 2) {
		struct fs_stats *s = (struct fs_stats *)(void *)(j->stats + j->index * j->stats_stride);
		/* two calls, as the benchmark chunks its work */
		fs_stats_update(s, 0, ITERS / 2);
		fs_stats_update(s, ITERS / 2, ITERS - ITERS / 2);
	} else if (j->op == 0) {
		fs_increment_atomic(fs_counter(j->c, j->index), ITERS);
	} else {
		fs_increment_plain(fs_counter(j->c, j->index), ITERS);
	}
	return NULL;
}

static void run_counters(size_t stride, int op)
{
	struct fs_counters c;
	cr_assert_eq(fs_counters_init(&c, THREADS, stride), 0, "init stride %zu", stride);
	pthread_t t[THREADS];
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){.c = &c, .index = i, .op = op};
		cr_assert_eq(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0, "pthread_create");
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < THREADS; i++)
		cr_assert_eq(atomic_load(fs_counter(&c, i)), ITERS, "counter %u, stride %zu", i, stride);
	cr_assert_eq(fs_counters_sum(&c), (uint64_t)THREADS * ITERS, "sum, stride %zu", stride);
	fs_counters_fini(&c);
}

Test(bench_falseshare, atomic_counters_add_up_in_every_layout)
{
	run_counters(8, 0);
	run_counters(64, 0);
	run_counters(128, 0);
}

Test(bench_falseshare, plain_counters_add_up_in_every_layout)
{
	run_counters(8, 1);
	run_counters(64, 1);
	run_counters(128, 1);
}

Test(bench_falseshare, layouts_put_counters_where_they_say)
{
	struct fs_counters c;
	cr_assert_eq(fs_counters_init(&c, 3, 64), 0, "init");
	cr_assert_eq((uintptr_t)fs_counter(&c, 0) % 128, 0, "base aligned to 128");
	cr_assert_eq((char *)fs_counter(&c, 2) - (char *)fs_counter(&c, 0), 128, "stride 64");
	fs_counters_fini(&c);
	cr_assert_eq(fs_counters_init(&c, 3, 12), -EINVAL, "stride not a multiple of 8");
	cr_assert_eq(sizeof(struct fs_stats_aligned) % RF_CACHE_LINE, 0, "aligned stats: own line");
	cr_assert_lt(sizeof(struct fs_stats_packed), RF_CACHE_LINE, "packed stats share lines");
}

static void run_stats(size_t stride)
{
	unsigned char *blocks = aligned_alloc(128, 128 * THREADS);
	cr_assert_not_null(blocks, "alloc");
	memset(blocks, 0, 128 * THREADS);
	pthread_t t[THREADS];
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){.index = i, .op = 2, .stats_stride = stride, .stats = blocks};
		cr_assert_eq(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0, "pthread_create");
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < THREADS; i++) {
		struct fs_stats *s = (struct fs_stats *)(void *)(blocks + i * stride);
		cr_assert_eq(atomic_load(&s->rx), ITERS, "rx of core %u", i);
		cr_assert_eq(atomic_load(&s->tx), ITERS, "tx of core %u", i);
		cr_assert_eq(atomic_load(&s->loops), ITERS / 32, "loops of core %u", i);
		cr_assert_eq(atomic_load(&s->drop_ring_full), ITERS / 1024, "drops of core %u", i);
		cr_assert_eq(atomic_load(&s->idle_blocks), 0, "idle_blocks of core %u", i);
	}
	free(blocks);
}

Test(bench_falseshare, per_core_stats_add_up_packed_and_aligned)
{
	run_stats(sizeof(struct fs_stats_packed));
	run_stats(sizeof(struct fs_stats_aligned));
}
