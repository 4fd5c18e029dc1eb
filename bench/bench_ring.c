/*
 * bench/bench_ring.c: `ringflow-bench ring`, ringflow's ring beside DPDK rte_ring, ck_ring
 * and a mutex ring, producer on --cpus A and consumer on B.
 *
 * Cases (DPDK's app/test/test_ring_perf.c measures the same shapes):
 *   spsc_burst1, spsc_burst32      one producer, one consumer, single-threaded modes
 *   spsc_burst32_checked           the same, the producer numbering its items and the
 *                                  consumer checking and summing each (a consumer that looks
 *                                  at what it takes); any item out of order fails the run
 *   mpmc_1p1c_burst32              multi-producer/consumer mode, one thread each side
 *   mpmc_2p2c_burst32              two producers and two consumers on the two CPUs: with
 *                                  2 vCPUs this is oversubscribed; rte_ring HTS mode too
 *   handoff                        one-way latency of a token through two SPSC rings,
 *                                  beside the raw cache-line ping-pong (the physical floor)
 */
#include <stdatomic.h>
#include <string.h>

#include "ring_bench_loops.h"
#include "ring_peers.h"

RING_BENCH_IMPL(ringflow, rf_create, rf_destroy, rf_enq, rf_deq)
RING_BENCH_IMPL(slotring, slot_create, slot_destroy, slot_enq, slot_deq)
RING_BENCH_IMPL(rte, rte_create, rte_destroy, rte_enq, rte_deq)
RING_BENCH_IMPL(ck, ck_create, ck_destroy, ck_enq, ck_deq)
RING_BENCH_IMPL(mutexq, mutex_create, mutex_destroy, mutex_enq, mutex_deq)

/* The raw floor: one cache line bounced between the two CPUs. A waits for an even value and
 * writes it + 1, B waits for odd and writes + 1; each write is one one-way trip. */
struct floor_line {
	RF_CACHE_ALIGNED _Atomic uint64_t v;
	RF_CACHE_ALIGNED _Atomic int stop;
	double seconds, result;
};

static void *floor_b(void *p)
{
	struct floor_line *f = p;
	uint64_t want = 1;
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		/* acquire/release on the line itself: it carries the "your turn" message. */
		if (atomic_load_explicit(&f->v, memory_order_acquire) == want) {
			atomic_store_explicit(&f->v, want + 1, memory_order_release);
			want += 2;
		} else {
			rf_cpu_relax();
		}
	}
	return NULL;
}

static void *floor_a(void *p)
{
	struct floor_line *f = p;
	uint64_t want = 0, deadline = rf_bench_now_ns() + (uint64_t)(f->seconds * 1e9);
	struct rb_lat *lat = malloc(sizeof(*lat));
	f->result = -1;
	if (lat) {
		lat->n = 0;
		for (;;) {
			uint64_t b0 = rf_bench_now_ns();
			/* RB_TRIP_BATCH round trips: our write and B's answer each. */
			for (unsigned k = 0; k < RB_TRIP_BATCH; k++) {
				/* acquire/release: pair with B's (the line is the message). */
				atomic_store_explicit(&f->v, want + 1, memory_order_release);
				want += 2;
				while (atomic_load_explicit(&f->v, memory_order_acquire) != want)
					rf_cpu_relax();
			}
			if (!rb_lat_add(lat, b0, rf_bench_now_ns(), deadline))
				break;
		}
		f->result = rb_lat_oneway(lat);
		free(lat);
	}
	atomic_store_explicit(&f->stop, 1, memory_order_relaxed);
	return NULL;
}

static double floor_handoff(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	struct floor_line *f = aligned_alloc(RF_CACHE_LINE, sizeof(*f));
	if (!f)
		return -1;
	memset(f, 0, sizeof(*f));
	f->seconds = ctx->seconds;
	struct rf_bench_thread *b = rf_bench_thread_start(ctx->opts->cpu[1], floor_b, f);
	struct rf_bench_thread *a = rf_bench_thread_start(ctx->opts->cpu[0], floor_a, f);
	rf_bench_thread_join(a);
	rf_bench_thread_join(b);
	double v = f->result;
	free(f);
	return v;
}

/* The floor of any index-based ring: the message (a slot line) and the "it is there" flag
 * (a tail line) are two lines, and the reader must see the flag before it may read the slot,
 * so each one-way trip is two dependent line transfers. A writes slot then flag; B waits for
 * the flag, reads the slot, answers the same way on a second pair of lines. */
struct floor2 {
	RF_CACHE_ALIGNED _Atomic uint64_t flag_ab;
	RF_CACHE_ALIGNED uint64_t slot_ab;
	RF_CACHE_ALIGNED _Atomic uint64_t flag_ba;
	RF_CACHE_ALIGNED uint64_t slot_ba;
	RF_CACHE_ALIGNED _Atomic int stop;
	double seconds, result;
};

static void *floor2_b(void *p)
{
	struct floor2 *f = p;
	uint64_t seen = 0;
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		/* acquire: pairs with A's release of flag_ab, making slot_ab readable. */
		uint64_t v = atomic_load_explicit(&f->flag_ab, memory_order_acquire);
		if (v == seen) {
			rf_cpu_relax();
			continue;
		}
		seen = v;
		f->slot_ba = f->slot_ab;
		/* release: publishes slot_ba to A's acquire of flag_ba. */
		atomic_store_explicit(&f->flag_ba, v, memory_order_release);
	}
	return NULL;
}

static void *floor2_a(void *p)
{
	struct floor2 *f = p;
	uint64_t trips = 0, sink = 0, deadline = rf_bench_now_ns() + (uint64_t)(f->seconds * 1e9);
	struct rb_lat *lat = malloc(sizeof(*lat));
	f->result = -1;
	if (lat) {
		lat->n = 0;
		for (;;) {
			uint64_t b0 = rf_bench_now_ns();
			for (unsigned k = 0; k < RB_TRIP_BATCH; k++) {
				trips++;
				f->slot_ab = trips;
				/* release: pairs with B's acquire of flag_ab (slot_ab readable). */
				atomic_store_explicit(&f->flag_ab, trips, memory_order_release);
				/* acquire: pairs with B's release of flag_ba (slot_ba readable). */
				while (atomic_load_explicit(&f->flag_ba, memory_order_acquire) != trips)
					rf_cpu_relax();
				sink += f->slot_ba;
			}
			if (!rb_lat_add(lat, b0, rf_bench_now_ns(), deadline))
				break;
		}
		f->result = sink ? rb_lat_oneway(lat) : -1;
		free(lat);
	}
	atomic_store_explicit(&f->stop, 1, memory_order_relaxed);
	return NULL;
}

static double floor2_handoff(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	struct floor2 *f = aligned_alloc(RF_CACHE_LINE, sizeof(*f));
	if (!f)
		return -1;
	memset(f, 0, sizeof(*f));
	f->seconds = ctx->seconds;
	struct rf_bench_thread *b = rf_bench_thread_start(ctx->opts->cpu[1], floor2_b, f);
	struct rf_bench_thread *a = rf_bench_thread_start(ctx->opts->cpu[0], floor2_a, f);
	rf_bench_thread_join(a);
	rf_bench_thread_join(b);
	double v = f->result;
	free(f);
	return v;
}

static void ring_help(FILE *out)
{
	fprintf(out, "cases: spsc_burst1 spsc_burst32 spsc_burst32_checked mpmc_1p1c_burst32 mpmc_2p2c_burst32 handoff\n"
		     "impls: ringflow (rf_ring), ringflow_slot (rf_slotring: SPSC, the slot carries its\n"
		     "       full state; SPSC cases and handoff), rte_ring, rte_ring_hts (2p2c only), ck_ring, mutex,\n"
		     "       floor (raw cache-line ping-pong, handoff only), floor_2lines (a data\n"
		     "       line plus a flag line per trip: the floor of any index-based ring)\n"
		     "units: Mops/s (items moved per second), ns (one-way handoff latency)\n");
}

static int ring_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench ring: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	static struct rb_case spsc1 = {MODE_SPSC, 1, 1, 1}, spsc32 = {MODE_SPSC, 32, 1, 1},
			      mpmc11 = {MODE_MPMC, 32, 1, 1}, mpmc22 = {MODE_MPMC, 32, 2, 2},
			      hts22 = {MODE_MPMC_HTS, 32, 2, 2}, spsc_lat = {MODE_SPSC, 1, 1, 1};

	const struct rf_bench_impl spsc_b1[] = {
		{"ringflow", ringflow_throughput, &spsc1}, {"ringflow_slot", slotring_throughput, &spsc1},
		{"rte_ring", rte_throughput, &spsc1},      {"ck_ring", ck_throughput, &spsc1},
		{"mutex", mutexq_throughput, &spsc1}};
	const struct rf_bench_impl spsc_b32[] = {
		{"ringflow", ringflow_throughput, &spsc32}, {"ringflow_slot", slotring_throughput, &spsc32},
		{"rte_ring", rte_throughput, &spsc32},      {"ck_ring", ck_throughput, &spsc32},
		{"mutex", mutexq_throughput, &spsc32}};
	const struct rf_bench_impl spsc_chk[] = {
		{"ringflow", ringflow_throughput_checked, &spsc32},
		{"ringflow_slot", slotring_throughput_checked, &spsc32},
		{"rte_ring", rte_throughput_checked, &spsc32},
		{"ck_ring", ck_throughput_checked, &spsc32},
		{"mutex", mutexq_throughput_checked, &spsc32}};
	const struct rf_bench_impl mpmc_11[] = {
		{"ringflow", ringflow_throughput, &mpmc11}, {"rte_ring", rte_throughput, &mpmc11},
		{"ck_ring", ck_throughput, &mpmc11},        {"mutex", mutexq_throughput, &mpmc11}};
	const struct rf_bench_impl mpmc_22[] = {
		{"ringflow", ringflow_throughput, &mpmc22}, {"rte_ring", rte_throughput, &mpmc22},
		{"rte_ring_hts", rte_throughput, &hts22},   {"ck_ring", ck_throughput, &mpmc22},
		{"mutex", mutexq_throughput, &mpmc22}};
	const struct rf_bench_impl handoff[] = {
		{"ringflow", ringflow_handoff, &spsc_lat}, {"ringflow_slot", slotring_handoff, &spsc_lat},
		{"rte_ring", rte_handoff, &spsc_lat},      {"ck_ring", ck_handoff, &spsc_lat},
		{"mutex", mutexq_handoff, &spsc_lat},      {"floor", floor_handoff, NULL},
		{"floor_2lines", floor2_handoff, NULL}};

	if (rf_bench_ncpus() < 2)
		rf_bench_note("only one CPU online: cross-core cases run both sides on it");
	rf_bench_case(opts, "ring", "spsc_burst1", "Mops/s", RF_HIGHER_IS_BETTER, spsc_b1, 5);
	rf_bench_case(opts, "ring", "spsc_burst32", "Mops/s", RF_HIGHER_IS_BETTER, spsc_b32, 5);
	rf_bench_case(opts, "ring", "spsc_burst32_checked", "Mops/s", RF_HIGHER_IS_BETTER, spsc_chk,
		      5);
	rf_bench_case(opts, "ring", "mpmc_1p1c_burst32", "Mops/s", RF_HIGHER_IS_BETTER, mpmc_11, 4);
	rf_bench_case(opts, "ring", "mpmc_2p2c_burst32", "Mops/s", RF_HIGHER_IS_BETTER, mpmc_22, 5);
	rf_bench_case(opts, "ring", "handoff", "ns", RF_LOWER_IS_BETTER, handoff, 7);
	if (!RF_HAVE_DPDK)
		rf_bench_note("rte_ring skipped: built without DPDK (RF_WITH_DPDK)");
	if (!RF_HAVE_CK)
		rf_bench_note("ck_ring skipped: built without Concurrency Kit (RF_WITH_CK)");
	rf_bench_note("ck_ring has no burst call: its bursts are loops of single enqueues");
	rf_bench_note("2p2c puts two threads on each of the two CPUs (oversubscribed here)");
	rf_bench_print_table(opts, "ring");
	/* relaxed: every worker has been joined */
	uint64_t bad = atomic_load_explicit(&rb_out_of_order, memory_order_relaxed);
	if (bad) {
		fprintf(stderr, "ringflow-bench ring: %llu items came out of order in the checked case\n",
			(unsigned long long)bad);
		return 1;
	}
	return 0;
}

RF_BENCH_COMMAND("ring", "rings: SPSC/MPMC throughput and handoff latency vs rte_ring, ck_ring, mutex",
		 ring_run, ring_help)
