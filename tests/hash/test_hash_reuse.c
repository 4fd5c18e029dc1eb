/*
 * tests/hash/test_hash_reuse.c: the reclamation rule for dead slots. A deleted slot is stamped
 * with the reclamation epoch it died in and reused by a later insert only once that epoch's
 * grace period is over; so a slot is never reused while a reader that could still see its old
 * key is online. A reader takes the key pointer of an entry from iteration (it points into the
 * table for keys of <= 8 bytes, at the key's copy for longer ones: valid until the reader's
 * next quiescent state, hash.h) and stays online without a quiescent state, while the writer
 * deletes that entry and churns insert/delete pairs in the same one-bucket table (quiescent
 * between them, so only the reader holds the grace period): the key under the pointer must
 * not change. Run for both write modes and both key kinds (for keys of <= 8 bytes the pointer
 * is the slot's key word, so this checks the slot; for longer ones it is the key's copy, freed
 * through its own grace-period batches). With the epoch check removed (dead slots reused at
 * once), the inline-key cases see the key change on the first insert after the delete.
 */
#include "rf_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>


#define CHURN 3000

struct reader {
	struct rf_hash *h;
	size_t key_len;
	unsigned char want[RF_HASH_KEY_MAX]; /* the key the reader holds */
	_Atomic int holding, release, checked;
	bool found;       /* the reader found the key by iteration */
	unsigned changed; /* times the bytes under the held pointer were not the key */
};

static void nap(void)
{
	struct timespec ts = {0, 100000}; /* 0.1 ms, online: the point of the test */
	nanosleep(&ts, NULL);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	rf_qsbr_register_named("holder");
	struct rf_hash_iter it;
	const void *key = NULL, *k;
	void *v;
	rf_hash_iter_init(r->h, &it);
	while (rf_hash_iter_next(r->h, &it, &k, &v))
		if (memcmp(k, r->want, r->key_len) == 0)
			key = k;
	r->found = key != NULL;
	if (!key)
		key = r->want; /* reported by the main thread */
	/* release/acquire (holding, release, checked): hand-offs between the two threads. */
	atomic_store_explicit(&r->holding, 1, memory_order_release);
	while (!atomic_load_explicit(&r->release, memory_order_acquire)) {
		if (memcmp(key, r->want, r->key_len) != 0)
			r->changed++;
		nap();
	}
	if (memcmp(key, r->want, r->key_len) != 0)
		r->changed++;
	atomic_store_explicit(&r->checked, 1, memory_order_release);
	rf_qsbr_quiescent(); /* now the slot may go */
	rf_qsbr_unregister();
	return NULL;
}

static void make_key(unsigned char *key, size_t len, uint32_t i)
{
	memset(key, 0xa5, len);
	memcpy(key, &i, sizeof(i));
}

static void held_slot_is_not_reused(size_t key_len, unsigned flags)
{
	rf_qsbr_register_named("writer");
	struct rf_hash *h = rf_hash_create("reuse", key_len, 64, RF_MEMPOOL_NO_HUGE | flags);
	cr_assert_not_null(h);
	static struct reader r;
	memset(&r, 0, sizeof(r));
	r.h = h;
	r.key_len = key_len;
	make_key(r.want, key_len, 7);
	cr_assert_eq(rf_hash_insert(h, r.want, (void *)(uintptr_t)0x1000), 0);
	cr_assert_eq(rf_hash_buckets(h), 1, "one bucket: every insert below lands in it");
	rf_qsbr_offline(); /* while we wait for the reader to start */
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, reader_main, &r), 0);
	while (!atomic_load_explicit(&r.holding, memory_order_acquire))
		sched_yield();
	rf_qsbr_online();
	void *old = NULL;
	cr_assert_eq(rf_hash_delete(h, r.want, &old), 0);
	cr_assert_eq(old, (void *)(uintptr_t)0x1000);
	/* Insert/delete pairs of other keys, quiescent after each: without the reader every
	 * dead slot would come back a grace period later. */
	for (uint32_t i = 0; i < CHURN; i++) {
		unsigned char k[RF_HASH_KEY_MAX];
		make_key(k, key_len, 100 + i);
		int rc = rf_hash_insert(h, k, (void *)(uintptr_t)(0x2000 + 16 * (uintptr_t)i));
		cr_assert_eq(rc, 0, "insert %u: %d", i, rc);
		cr_assert_eq(rf_hash_delete(h, k, NULL), 0);
		rf_qsbr_quiescent();
	}
	atomic_store_explicit(&r.release, 1, memory_order_release);
	rf_qsbr_offline();
	while (!atomic_load_explicit(&r.checked, memory_order_acquire))
		sched_yield();
	pthread_join(th, NULL);
	rf_qsbr_online();
	cr_assert(r.found, "the reader found the key by iteration");
	cr_assert_eq(r.changed, 0, "the held key changed %u times under an online reader",
		     r.changed);
	cr_assert_eq(rf_hash_count(h), 0);
	/* Once the reader has passed its quiescent state, inserts work as before. */
	for (uint32_t i = 0; i < 100; i++) {
		unsigned char k[RF_HASH_KEY_MAX];
		make_key(k, key_len, 10000 + i);
		cr_assert_eq(rf_hash_insert(h, k, (void *)(uintptr_t)(0x3000 + 16 * (uintptr_t)i)), 0);
		cr_assert_eq(rf_hash_delete(h, k, NULL), 0);
		rf_qsbr_quiescent();
	}
	rf_hash_free(h);
	rf_qsbr_unregister();
}

Test(hash_reuse, held_slot_is_not_reused_inline_keys)
{
	held_slot_is_not_reused(8, 0);
}

Test(hash_reuse, held_slot_is_not_reused_long_keys)
{
	held_slot_is_not_reused(13, 0);
}

Test(hash_reuse, held_slot_is_not_reused_single_writer_inline_keys)
{
	held_slot_is_not_reused(8, RF_HASH_SINGLE_WRITER);
}

Test(hash_reuse, held_slot_is_not_reused_single_writer_long_keys)
{
	held_slot_is_not_reused(13, RF_HASH_SINGLE_WRITER);
}
