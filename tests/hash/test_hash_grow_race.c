/*
 * tests/hash/test_hash_grow_race.c: many writers, each in its own stripe, while the table
 * keeps being rebuilt under them; every result is checked at once against the writer's own
 * model.
 *
 * Eight writers on the 2 CPUs (so they are preempted mid-call, growth included) each own a
 * disjoint set of keys: no other thread writes them, so the writer knows what every call of
 * its own must return (insert 0 iff absent, delete 0 iff present with the value it wrote,
 * lookup the value it wrote or NULL). They churn a small key set, so dead slots pile up and
 * the table is rebuilt again and again while the others write. A write that lands in the old
 * table after its chunk was copied shows here as a delete that comes back, an insert that is
 * lost, or a value removed twice. (A growth once let a writer enter a stripe the grower had not
 * frozen yet, while a helper sent by another stripe was already copying.) At the end the table
 * holds exactly the union of the models. The yields make growths slow, so grace periods end
 * late and hot keys' dead slots pile up: an insert may then be refused with -EAGAIN (hash.h),
 * which must leave the table without the key; any other disagreement fails. The test builds
 * its own copy of hash/hash.c with RF_HASH_FREEZE_PAUSE (a yield between the stripes a
 * growth freezes): without the fix it fails within a second, and never with it.
 * RF_HASH_GROW_OPS sets the operations per writer.
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>

#define WRITERS 8
#define OWN 8 /* keys per writer */

struct gr {
	struct rf_hash *h;
	uint64_t ops;
	_Atomic unsigned errors;
	char first_error[160];
	pthread_mutex_t lock;
	uint64_t model[WRITERS][OWN]; /* each writer's own: the value its key holds, or 0 */
	uint64_t eagain[WRITERS];     /* inserts refused because the slots near the key wait */
};

struct gw {
	struct gr *g;
	unsigned id;
};

static void gr_fail(struct gr *g, const char *what, unsigned id, uint64_t key, uint64_t got)
{
	if (atomic_fetch_add(&g->errors, 1) == 0) {
		pthread_mutex_lock(&g->lock);
		snprintf(g->first_error, sizeof(g->first_error), "writer %u: %s (key %#lx, got %#lx)",
			 id, what, (unsigned long)key, (unsigned long)got);
		pthread_mutex_unlock(&g->lock);
	}
}

static void *gr_writer(void *p)
{
	struct gw *w = p;
	struct gr *g = w->g;
	uint64_t *model = g->model[w->id];
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->id % 2, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	rf_qsbr_register();
	uint64_t rnd = 0x2545f4914f6cdd1dull * (w->id + 1), seq = 0;
	for (uint64_t i = 0; i < g->ops && atomic_load(&g->errors) == 0; i++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		unsigned k = (unsigned)(rnd % OWN), op = (unsigned)(rnd >> 32) % 4;
		uint64_t key = (uint64_t)w->id << 32 | k;
		if (op == 0) { /* lookup */
			void *got = rf_hash_lookup(g->h, &key);
			if ((uint64_t)(uintptr_t)got != model[k])
				gr_fail(g, "lookup disagrees with the model", w->id, key,
					(uint64_t)(uintptr_t)got);
		} else if (op == 1) { /* delete */
			void *old = NULL;
			int rc = rf_hash_delete(g->h, &key, &old);
			if (model[k] ? rc != 0 || (uint64_t)(uintptr_t)old != model[k]
				     : rc != -ENOENT)
				gr_fail(g, "delete disagrees with the model", w->id, key,
					rc == 0 ? (uint64_t)(uintptr_t)old : (uint64_t)-rc);
			model[k] = 0;
		} else { /* insert, or upsert (op 3) */
			uint64_t v = key << 24 | (++seq & 0xffffff) | 1;
			void *old = NULL;
			int rc = op == 3 ? rf_hash_upsert(g->h, &key, (void *)(uintptr_t)v, &old)
					 : rf_hash_insert(g->h, &key, (void *)(uintptr_t)v);
			bool ok = model[k] ? (op == 3 ? rc == 1 && (uint64_t)(uintptr_t)old == model[k]
						      : rc == -EEXIST)
					   : rc == 0 || rc == -EAGAIN;
			if (rc == -EAGAIN) { /* refused: the table must not have the key */
				g->eagain[w->id]++;
				if (rf_hash_lookup(g->h, &key))
					gr_fail(g, "an insert refused with -EAGAIN left its key",
						w->id, key, v);
			}
			if (!ok)
				gr_fail(g, "write disagrees with the model", w->id, key, (uint64_t)rc);
			if (rc == 0 || rc == 1)
				model[k] = v;
		}
		if ((i & 31) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(hash_grow_race, writers_in_every_stripe_agree_with_their_models_through_rebuilds)
{
	static struct gr g;
	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.lock, NULL);
	const char *e = getenv("RF_HASH_GROW_OPS");
	g.ops = e && strtoull(e, NULL, 10) >= 1000 ? strtoull(e, NULL, 10) : 2000000;
	g.h = rf_hash_create("grow_race", 8, WRITERS * OWN, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(g.h);
	pthread_t th[WRITERS];
	struct gw w[WRITERS];
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct gw){&g, i};
		cr_assert_eq(pthread_create(&th[i], NULL, gr_writer, &w[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(atomic_load(&g.errors), 0, "%s", g.first_error);

	rf_qsbr_register();
	size_t want = 0;
	for (unsigned id = 0; id < WRITERS; id++)
		for (unsigned k = 0; k < OWN; k++) {
			uint64_t key = (uint64_t)id << 32 | k;
			cr_assert_eq((uint64_t)(uintptr_t)rf_hash_lookup(g.h, &key), g.model[id][k],
				     "key %#lx: the table disagrees with its writer's model",
				     (unsigned long)key);
			want += g.model[id][k] != 0;
		}
	cr_assert_eq(rf_hash_count(g.h), want);
	uint64_t eagain = 0;
	for (unsigned id = 0; id < WRITERS; id++)
		eagain += g.eagain[id];
	cr_log_info("%lu operations, %lu inserts refused with -EAGAIN, %zu keys present",
		    (unsigned long)(g.ops * WRITERS), (unsigned long)eagain, want);
	rf_qsbr_unregister();
	rf_hash_free(g.h);
}
