/*
 * tests/ofswitch/test_sw_emc_stale.c: an add that raises an existing subtable's max
 * priority must reach every poller's exact-match cache (issue 25, "stale EMC answer").
 *
 * The table: subtable A (in_port) holds a1, priority 10, which every key matches; subtable
 * B (eth_type + tp_src) holds b1, priority 5, which no key matches, so B is in the order
 * with max priority 5; FILLERS more subtables (nw_dst prefixes no key has, priorities 6..9)
 * sit between A and B in the order, so a poller's fill notes B last in its shadow filter and
 * the window between its load of the order and that note is wide. A lookup of a key stops
 * after A (nothing below 10 can beat a1).
 *
 * Each cycle c the writer adds b2_c (eth_type 0x0800, tp_src c, priority 20) into B, raising
 * B's max priority from 5 to 20, while the readers look up key k_c (tp_src c) for the first
 * time, so their filters hold nothing of (B, k_c). Once the add has returned, every lookup of
 * k_c must answer b2_c: an a1 is the stale answer of a fill that loaded the order from before
 * the add. Then b2_c is removed (after that, b2_c must never answer again) and the next cycle
 * uses a fresh key. The verdict is counts (stale answers, wrong answers), never timing; the
 * race is hit only on some cycles, so there are many (with the bug, 64 to 432 stale answers
 * per run of 12000-20000 cycles on a 2-vCPU machine). On a host so loaded that the threads
 * rarely run together, the writer starts no new cycle after BUDGET_NS (the run then checks
 * fewer cycles; the verdict is the same counts).
 *
 * A second case runs the same with every lookup a new microflow of k_c's megaflow (tp_dst
 * changes; no flow looks at it), so the megaflow cache answers, not the EMC; a third, that
 * one in table 1 with every flow matching the metadata every lookup carries (megaflow keys
 * with metadata in them). A fourth sends frames through the whole pipeline as a poller does
 * (sw_pipe_run): table 0 writes the metadata and goes to table 1, where a1 outputs to port 2
 * and b2_c to port 3; the port a frame leaves by is the answer, and the pipeline's outcome
 * cache (sw_outcome.c), which answers every lookup of k_c after its first, must not keep
 * a1's outcome once the add has returned.
 */
#include "rf_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/qsbr.h>

#include <ringflow/pktbuf.h>

#include "sw.h"

#define READERS 1 /* beside the writer: two threads on two CPUs, so they really overlap */
#define FILLERS 160
#define AFTER 8 /* lookups per reader once the add has returned */
#ifdef RF_TEST_STANDALONE
#define CYCLES 3000 /* TSan: about ten times slower */
#else
#define CYCLES 12000
#endif
#define BUDGET_NS 20000000000ull /* the writer starts no cycle after 20 s (a loaded host) */
#define MIN_CYCLES 100            /* but runs at least these */
#define COOKIE_A1 1u
#define COOKIE_B1 2u
#define COOKIE_B2 1000u /* + cycle */

static struct sw_table *table;
static _Atomic uint32_t cycle, added, removed; /* writer: the cycle prepared, added, removed */
static _Atomic uint32_t ack[READERS], checked[READERS];
static _Atomic uint64_t stale, wrong, after_lookups, writer_errors;
static _Atomic uint32_t ncycles; /* cycles the writer ran */
static atomic_bool finished;    /* the writer starts no more cycles */
static bool fresh_microflows;   /* each lookup a new microflow of k_c's megaflow (tp_dst) */
static unsigned test_tbl;       /* every flow in this table, matching metadata test_md/0xff */
static uint64_t test_md;        /* (0: none); the lookups carry test_md */
static bool via_pipe;           /* frames through sw_pipe_run, the port they leave by */
static struct sw_dp dp;         /* via_pipe: one core per reader, four ports, a pool */
static struct sw_flow *entry;   /* via_pipe: table 0's flow, metadata test_md, goto test_tbl */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void key_of(uint32_t c, struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	k->eth_type = 0x0800;
	k->ip_proto = 17;
	k->tp_src = (uint16_t)c;
}

static struct sw_flow *flow(const struct sw_key *match, const struct sw_key *mask, uint16_t prio,
			    uint64_t cookie)
{
	struct sw_flow *f = sw_flow_alloc(READERS);
	if (!f)
		return NULL;
	f->mask = *mask;
	for (size_t i = 0; i < sizeof(f->match); i++)
		((uint8_t *)&f->match)[i] = ((const uint8_t *)match)[i] & ((const uint8_t *)mask)[i];
	f->priority = prio;
	f->cookie = cookie;
	f->table_id = (uint8_t)test_tbl;
	f->md = test_md;
	f->md_mask = test_md ? 0xff : 0;
	f->has_md = test_md != 0;
	if (via_pipe) { /* a1 out port 2, b2 out port 3, the rest port 4 (frames come in on 1) */
		struct sw_actions *a = calloc(1, sizeof(*a));
		if (!a) {
			free(f);
			return NULL;
		}
		a->n = 1;
		a->op[0].code = SW_OP_OUTPUT;
		a->op[0].arg = cookie == COOKIE_A1 ? 2 : cookie >= COOKIE_B2 ? 3 : 4;
		sw_actions_stamp(a);
		atomic_init(&f->actions, a);
	}
	return f;
}

/* Removes f from the table, its program too (after a grace period). */
static void remove_flow(struct sw_flow *f)
{
	sw_table_remove(table, f);
	if (via_pipe)
		sw_table_retire(table, atomic_load_explicit(&f->actions, memory_order_relaxed),
				SW_RETIRE_FREE);
	sw_table_retire(table, f, SW_RETIRE_FLOW);
}

/* via_pipe: what the poller does with a frame of key k; the answer's cookie from the port
 * the frame left by (b2: that of cycle c), 0 for none. */
static uint64_t pipe_answer(unsigned id, const struct sw_key *k, uint32_t c)
{
	struct sw_core *core = &dp.cores[id];
	struct rf_pktbuf *b = rf_pktbuf_alloc(dp.pool);
	if (!b)
		return ~0ull; /* counted as wrong */
	b->data_len = 60; /* no flow rewrites, so the key given is the frame's */
	memset(rf_pktbuf_data(b), 0, 60);
	struct sw_key kk = *k;
	struct sw_flow *f0 = sw_table_lookup(table, id, &kk);
	if (f0 != entry) {
		rf_pktbuf_free(b);
		return ~0ull;
	}
	sw_pipe_run(core, table, b, 0, &kk, f0,
		    atomic_load_explicit(&f0->actions, memory_order_acquire));
	uint64_t ck = 0;
	for (unsigned p = 0; p < dp.nports; p++) {
		if (core->ntx[p])
			ck = p == 1 ? COOKIE_A1 : p == 2 ? COOKIE_B2 + c : COOKIE_B1;
		rf_pktbuf_free_bulk(core->tx[p], core->ntx[p]);
		core->ntx[p] = 0;
	}
	return ck;
}

/* The lookup under test: table 0 as a frame enters, or test_tbl with metadata test_md, or
 * (via_pipe) the whole pipeline; the answer's cookie, 0 for none. */
static uint64_t lookup_k(unsigned id, const struct sw_key *k, uint32_t c)
{
	if (via_pipe)
		return pipe_answer(id, k, c);
	struct sw_flow *f = test_tbl == 0 ? sw_table_lookup(table, id, k)
					  : sw_table_lookup_md(table, id, test_tbl, test_md, k);
	return f ? f->cookie : 0;
}

static void mask_b(struct sw_key *m)
{
	memset(m, 0, sizeof(*m));
	m->eth_type = 0xffff;
	m->tp_src = 0xffff;
}

/* Wait (quiescent while waiting, so the writer's grace periods end) until *v reaches c:
 * true, or false when the writer has finished without getting there. */
static bool wait_for(_Atomic uint32_t *v, uint32_t c)
{
	/* acquire: pairs with the release store of the other side's progress */
	for (unsigned spins = 0; atomic_load_explicit(v, memory_order_acquire) < c; spins++) {
		/* acquire: pairs with the writer's release of finished (after its last store) */
		if (atomic_load_explicit(&finished, memory_order_acquire) &&
		    atomic_load_explicit(v, memory_order_acquire) < c)
			return false;
		rf_qsbr_quiescent();
		if (spins % 256 == 255) /* spin first: the other side is usually running */
			sched_yield();
	}
	return true;
}

static void *writer(void *arg)
{
	(void)arg;
	rf_qsbr_register();
	struct sw_key mb, v;
	mask_b(&mb);
	uint64_t end = now_ns() + BUDGET_NS;
	uint32_t c = 1;
	for (; c <= CYCLES && (c <= MIN_CYCLES || now_ns() < end); c++) {
		atomic_store_explicit(&cycle, c, memory_order_release); /* pairs with wait_for */
		for (unsigned r = 0; r < READERS; r++)
			wait_for(&ack[r], c);
		key_of(c, &v);
		struct sw_flow *b2 = flow(&v, &mb, 20, COOKIE_B2 + c);
		if (!b2 || sw_table_add(table, b2) != 0) { /* counted; the readers still finish */
			atomic_fetch_add(&writer_errors, 1);
			free(b2);
			b2 = NULL;
		}
		atomic_store_explicit(&added, c, memory_order_release); /* the add has returned */
		for (unsigned r = 0; r < READERS; r++)
			wait_for(&checked[r], c);
		if (b2)
			remove_flow(b2);
		atomic_store_explicit(&removed, c, memory_order_release); /* the remove returned */
		sw_table_reclaim(table, now_ns(), false);
	}
	atomic_store_explicit(&ncycles, c - 1, memory_order_relaxed); /* read after the join */
	atomic_store_explicit(&finished, true, memory_order_release); /* pairs with wait_for */
	rf_qsbr_unregister();
	return NULL;
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	rf_qsbr_register();
	for (uint32_t c = 1; c <= CYCLES; c++) {
		struct sw_key k;
		key_of(c, &k);
		if (!wait_for(&cycle, c))
			break; /* the writer's budget ran out */
		/* release: pairs with the writer's wait_for: we look k_c up from now on */
		atomic_store_explicit(&ack[id], c, memory_order_release);
		for (unsigned n = 0; n < AFTER;) {
			/* acquire: pairs with the writer's release after sw_table_add returned */
			bool in = atomic_load_explicit(&added, memory_order_acquire) >= c;
			if (fresh_microflows) /* no flow looks at tp_dst: the megaflow answers */
				k.tp_dst = (uint16_t)(k.tp_dst + 1);
			uint64_t ck = lookup_k(id, &k, c);
			if (ck != COOKIE_A1 && ck != COOKIE_B2 + c)
				atomic_fetch_add(&wrong, 1);
			if (in) {
				if (ck == COOKIE_A1)
					atomic_fetch_add(&stale, 1);
				n++;
				atomic_fetch_add(&after_lookups, 1);
			}
			rf_qsbr_quiescent();
		}
		atomic_store_explicit(&checked[id], c, memory_order_release); /* pairs with wait_for */
		wait_for(&removed, c);
		/* removed: b2_c must never answer again */
		if (lookup_k(id, &k, c) != COOKIE_A1)
			atomic_fetch_add(&wrong, 1);
		rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

static void run(void);

Test(sw_emc_stale, raised_max_priority_reaches_every_cache)
{
	run();
}

/* The same where every lookup is a microflow not seen before, so the EMC never answers and
 * the megaflow cache answers all but the first lookup of each k_c: a stale megaflow would
 * be served to every later microflow. */
Test(sw_emc_stale, raised_max_priority_reaches_every_megaflow)
{
	fresh_microflows = true;
	run();
}

/* The same in table 1, every flow matching metadata 5/0xff and every lookup carrying it, new
 * microflows each time: the megaflow entries carry the metadata in their key (sw_emc.c). */
Test(sw_emc_stale, raised_max_priority_reaches_a_later_tables_metadata_megaflows)
{
	fresh_microflows = true;
	test_tbl = 1;
	test_md = 5;
	run();
}

/* The same through the whole pipeline: table 0's flow writes metadata 5 and goes to table 1,
 * which holds the flows above; the same key again and again, so the pipeline's outcome cache
 * answers all but its first frame. */
Test(sw_emc_stale, raised_max_priority_reaches_the_pipelines_outcome_cache)
{
	via_pipe = true;
	test_tbl = 1;
	test_md = 5;
	run();
	uint64_t hits = 0;
	for (unsigned r = 0; r < READERS; r++)
		hits += dp.cores[r].out_hits;
	cr_assert_gt(hits, atomic_load(&after_lookups) / 2, "the outcome cache answered %llu",
		     (unsigned long long)hits);
}

/* via_pipe: the dp and table 0's flow (metadata test_md, goto test_tbl). */
static void pipe_bed(void)
{
	dp.nports = 4;
	dp.pool = rf_pktbuf_pool_create("sw_emc_stale", 256, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(dp.pool);
	for (unsigned r = 0; r < READERS; r++) {
		dp.cores[r].dp = &dp;
		dp.cores[r].idx = r;
	}
	entry = sw_flow_alloc(READERS);
	struct sw_actions *a = calloc(1, sizeof(*a));
	cr_assert(entry && a);
	memset(&entry->mask, 0, sizeof(entry->mask));
	memset(&entry->match, 0, sizeof(entry->match));
	a->goto_table = (uint8_t)test_tbl;
	a->inst = SW_INST_META;
	a->md = test_md;
	a->md_mask = 0xff;
	a->last_out = 0;
	sw_actions_stamp(a);
	atomic_init(&entry->actions, a);
	cr_assert_eq(sw_table_add(table, entry), 0);
}

static void run(void)
{
	rf_qsbr_register();
	table = sw_table_create(READERS);
	cr_assert(table);
	if (via_pipe)
		pipe_bed();
	struct sw_key m, v;
	memset(&m, 0, sizeof(m));
	m.in_port = 0xffffffffu;
	key_of(0, &v);
	struct sw_flow *a1 = flow(&v, &m, 10, COOKIE_A1);
	cr_assert(a1);
	cr_assert_eq(sw_table_add(table, a1), 0);
	mask_b(&m);
	v.eth_type = 0x86dd;
	struct sw_flow *b1 = flow(&v, &m, 5, COOKIE_B1);
	cr_assert(b1);
	cr_assert_eq(sw_table_add(table, b1), 0);
	struct sw_flow *fill[FILLERS];
	for (unsigned i = 0; i < FILLERS; i++) {
		/* prefixes of nw_dst, nw_src (/1../32), eth_dst, eth_src (/1../48); first bit set */
		memset(&m, 0, sizeof(m));
		memset(&v, 0, sizeof(v));
		uint8_t *mm = i < 32 ? m.nw_dst : i < 64 ? m.nw_src : i < 112 ? m.eth_dst : m.eth_src;
		uint8_t *vv = i < 32 ? v.nw_dst : i < 64 ? v.nw_src : i < 112 ? v.eth_dst : v.eth_src;
		unsigned len = i < 64 ? i % 32 + 1 : (i - 64) % 48 + 1;
		for (unsigned b = 0; b < len; b++)
			mm[b / 8] |= (uint8_t)(0x80u >> (b % 8));
		vv[0] = 0x80;
		fill[i] = flow(&v, &m, (uint16_t)(6 + i % 4), 100 + i);
		cr_assert(fill[i]);
		cr_assert_eq(sw_table_add(table, fill[i]), 0);
	}
	cr_assert_eq(sw_table_nsubtables(table), 2 + FILLERS + via_pipe); /* + entry's */
	rf_qsbr_offline(); /* the main thread only waits below */
	pthread_t w, rd[READERS];
	for (unsigned r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&rd[r], NULL, reader, (void *)(uintptr_t)r), 0);
	cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
	pthread_join(w, NULL);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	rf_qsbr_online();
	uint64_t n = atomic_load(&after_lookups);
	uint32_t nc = atomic_load(&ncycles);
	cr_log_info("%u cycles, %llu lookups after an add: %llu stale, %llu wrong", nc,
		    (unsigned long long)n, (unsigned long long)atomic_load(&stale),
		    (unsigned long long)atomic_load(&wrong));
	cr_assert_eq(atomic_load(&writer_errors), 0, "the writer failed an add");
	cr_assert_geq(nc, MIN_CYCLES);
	cr_assert_eq(n, (uint64_t)nc * READERS * AFTER, "every reader checked every cycle");
	cr_assert_eq(atomic_load(&wrong), 0, "an answer that was never right");
	cr_assert_eq(atomic_load(&stale), 0,
		     "%llu lookups after the add returned answered the lower-priority a1",
		     (unsigned long long)atomic_load(&stale));
	remove_flow(a1);
	remove_flow(b1);
	for (unsigned i = 0; i < FILLERS; i++)
		remove_flow(fill[i]);
	if (via_pipe)
		remove_flow(entry);
	sw_table_reclaim(table, 0, true);
	cr_assert_eq(sw_table_nflows(table), 0);
	sw_table_free(table);
	if (via_pipe)
		rf_pktbuf_pool_free(dp.pool);
	rf_qsbr_unregister();
}
