/*
 * examples/udp_counter/udp_counter.c: a UDP service built only on the installed ringflow
 * (docs/writing-an-app.md walks through it). Every datagram gets the reply "count=N": how
 * many datagrams its source (address and port) has sent so far. The per-source state lives in
 * ringflow's lock-free hash.
 *
 * Two pollers (or one, with --cores 0), one job each:
 *   I/O poller (cores[0])     rx_burst from the device -> ring `to_worker`; ring `to_io` ->
 *                             tx_burst. Registered on the device's wait fd and on wake-ups.
 *   worker (cores[1])         ring `to_worker` -> hash lookup/insert, count, write the reply
 *                             into the same buffer -> ring `to_io`. Registered on wake-ups.
 * The main thread is not a poller: it reads the hash too (a stats line, the final table), so it
 * follows the QSBR rule by hand (register, go offline before it sleeps, quiescent between
 * reads). Buffers: rx_burst hands them to us; whoever holds one either passes it on (ring,
 * tx_burst) or frees it: every path below ends in exactly one of those.
 *
 *   udp_counter --listen 127.0.0.1:9000 [--cores 0,1] [--exit-after N] [--max-sources N]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c11 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>

#define BURST 32
#define KEY_LEN 18 /* port (2) + IPv6 address, IPv4 as ::ffff:a.b.c.d (16) */

/* One source's state: written by the worker only, read by the main thread (so atomic). */
struct source {
	_Atomic uint64_t count;
};

struct app {
	struct rf_runtime *rt;
	struct rf_io_dev *dev;
	struct rf_ring *to_worker, *to_io; /* SPSC: one producer and one consumer poller each */
	struct rf_hash *sources;
	unsigned io_idx, worker_idx;       /* poller indexes */
	uint64_t exit_after;               /* 0: run until SIGINT/SIGTERM */
	_Atomic uint64_t served, refused;  /* refused: the table was full */
};

/* The hash key of a datagram's source: port then address, IPv4 mapped into IPv6. */
static int source_key(const struct rf_pktbuf *b, uint8_t key[KEY_LEN])
{
	memset(key, 0, KEY_LEN);
	if (b->peer.sa.sa_family == AF_INET) {
		memcpy(key, &b->peer.in.sin_port, 2);
		key[12] = key[13] = 0xff;
		memcpy(key + 14, &b->peer.in.sin_addr, 4);
		return 0;
	}
	if (b->peer.sa.sa_family == AF_INET6) {
		memcpy(key, &b->peer.in6.sin6_port, 2);
		memcpy(key + 2, &b->peer.in6.sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* I/O poller, receive side: device -> to_worker. */
static unsigned io_rx(struct rf_poller *p, void *arg)
{
	struct app *a = arg;
	struct rf_pktbuf *pkts[BURST];
	unsigned n = rf_io_rx_burst(a->dev, 0, pkts, BURST);
	if (n == 0)
		return 0;
	struct rf_core_counters *c = rf_poller_counters(p);
	rf_counter_add(&c->rx, n);
	unsigned k = rf_ring_enqueue_burst(a->to_worker, (void **)pkts, n, NULL);
	if (k < n) { /* the worker is behind: these are ours still, drop them (counted) */
		rf_pktbuf_free_bulk(pkts + k, n - k);
		rf_counter_add(&c->drop_ring_full, n - k);
	}
	if (k)
		rf_runtime_wake(a->rt, a->worker_idx); /* after the enqueue: it may be blocked */
	return n;
}

/* I/O poller, send side: to_io -> device. */
static unsigned io_tx(struct rf_poller *p, void *arg)
{
	struct app *a = arg;
	struct rf_pktbuf *pkts[BURST];
	unsigned n = rf_ring_dequeue_burst(a->to_io, (void **)pkts, BURST, NULL);
	if (n == 0)
		return 0;
	struct rf_core_counters *c = rf_poller_counters(p);
	unsigned sent = rf_io_tx_burst(a->dev, 0, pkts, n); /* pkts[0..sent) are the driver's now */
	rf_counter_add(&c->tx, sent);
	if (sent < n) { /* socket buffer full: the rest are still ours */
		rf_pktbuf_free_bulk(pkts + sent, n - sent);
		rf_counter_add(&c->drop_driver, n - sent);
	}
	return n;
}

/* Worker: count the source, write the reply into the same buffer, hand it back. */
static unsigned work(struct rf_poller *p, void *arg)
{
	struct app *a = arg;
	struct rf_pktbuf *pkts[BURST], *out[BURST];
	unsigned n = rf_ring_dequeue_burst(a->to_worker, (void **)pkts, BURST, NULL), nout = 0;
	struct rf_core_counters *c = rf_poller_counters(p);
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		uint8_t key[KEY_LEN];
		if (source_key(b, key) != 0) {
			rf_pktbuf_free(b);
			continue;
		}
		/* A poller is a QSBR reader already: the lookup needs no lock, and `s` stays valid
		 * until this function returns (the runtime passes a quiescent state between rounds). */
		struct source *s = rf_hash_lookup(a->sources, key);
		if (!s) {
			s = calloc(1, sizeof(*s));
			int rc = s ? rf_hash_insert(a->sources, key, s) : -ENOMEM;
			if (rc != 0) { /* -ENOSPC: --max-sources reached; -ENOMEM */
				free(s);
				s = NULL;
			}
		}
		if (s) {
			/* single writer: a relaxed load and store, no read-modify-write needed */
			uint64_t v = atomic_load_explicit(&s->count, memory_order_relaxed) + 1;
			atomic_store_explicit(&s->count, v, memory_order_relaxed);
			b->data_len = (uint32_t)snprintf(rf_pktbuf_data(b), rf_pktbuf_tailroom(b) + b->data_len,
							 "count=%llu\n", (unsigned long long)v);
		} else {
			atomic_fetch_add_explicit(&a->refused, 1, memory_order_relaxed);
			b->data_len = (uint32_t)snprintf(rf_pktbuf_data(b), rf_pktbuf_tailroom(b) + b->data_len,
							 "full\n");
		}
		/* b->peer still names the sender: the reply goes back to it. */
		out[nout++] = b;
	}
	unsigned k = rf_ring_enqueue_burst(a->to_io, (void **)out, nout, NULL);
	if (k < nout) {
		rf_pktbuf_free_bulk(out + k, nout - k);
		rf_counter_add(&c->drop_ring_full, nout - k);
	}
	if (k)
		rf_runtime_wake(a->rt, a->io_idx);
	uint64_t done = atomic_fetch_add_explicit(&a->served, k, memory_order_relaxed) + k;
	if (a->exit_after && done >= a->exit_after)
		rf_runtime_stop(a->rt); /* the replies already queued are still sent: see main */
	return n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Prints every source and its count. Run by a registered, online thread: the walk stays
 * between two of its quiescent states, as hash.h asks. */
static void print_sources(struct app *a, FILE *out)
{
	struct rf_hash_iter it;
	const void *k;
	void *v;
	rf_hash_iter_init(a->sources, &it);
	while (rf_hash_iter_next(a->sources, &it, &k, &v)) {
		const uint8_t *key = k;
		char ip[INET6_ADDRSTRLEN];
		bool v4 = key[12] == 0xff && key[13] == 0xff && !memcmp(key + 2, "\0\0\0\0\0\0\0\0\0\0", 10);
		inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? key + 14 : key + 2, ip, sizeof(ip));
		fprintf(out, "source %s:%u count %llu\n", ip, (unsigned)(key[0] << 8 | key[1]),
			(unsigned long long)atomic_load_explicit(&((struct source *)v)->count,
								 memory_order_relaxed));
	}
	rf_qsbr_quiescent(); /* done with the keys and values the walk handed out */
}

static void free_sources(struct app *a)
{
	struct rf_hash_iter it;
	const void *k;
	void *v;
	rf_hash_iter_init(a->sources, &it);
	while (rf_hash_iter_next(a->sources, &it, &k, &v))
		free(v); /* the pollers are joined: nobody else can see these any more */
}

/* Buffers still in a ring are ours: free them before the pool goes. */
static void drain_and_free(struct rf_ring *r)
{
	void *b;
	while (r && rf_ring_dequeue(r, &b) == 0)
		rf_pktbuf_free(b);
	rf_ring_free(r);
}

static int usage(void)
{
	fprintf(stderr, "usage: udp_counter --listen IP:PORT [--cores A,B] [--exit-after N] "
			"[--max-sources N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *listen = NULL, *cores = "0,1";
	uint64_t exit_after = 0;
	unsigned max_sources = 65536;
	char err[256], spec[128];
	int bad = 0; /* options through the library's parser: decimal only, one line on error */
	for (int i = 1; i < argc && !bad; i++) {
		if (i + 1 == argc)
			return usage();
		const char *opt = argv[i], *v = argv[++i];
		if (strcmp(opt, "--listen") == 0)
			listen = v;
		else if (strcmp(opt, "--cores") == 0)
			bad = rf_opt_cores(opt, cores = v, err, sizeof(err));
		else if (strcmp(opt, "--exit-after") == 0)
			bad = rf_opt_u64(opt, v, 0, UINT64_MAX, &exit_after, err, sizeof(err));
		else if (strcmp(opt, "--max-sources") == 0)
			bad = rf_opt_uint(opt, v, 1, 1u << 24, &max_sources, err, sizeof(err));
		else
			return usage();
	}
	if (bad) {
		fprintf(stderr, "udp_counter: %s\n", err);
		return 2;
	}
	if (!listen)
		return usage();

	struct app a = {.exit_after = exit_after};
	struct rf_runtime_config rc = {.cores = cores, .idle = RF_IDLE_ADAPTIVE};
	a.rt = rf_runtime_create(&rc, err, sizeof(err));
	if (!a.rt) {
		fprintf(stderr, "udp_counter: %s\n", err); /* one line: what and why */
		return 1;
	}
	unsigned ncores = rf_runtime_ncores(a.rt);
	a.io_idx = 0;
	a.worker_idx = ncores > 1 ? 1 : 0;
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("udp_counter", 4096, 2048, 64,
							    RF_MEMPOOL_QUIET);
	snprintf(spec, sizeof(spec), "udp:listen=%s", listen);
	a.dev = pool ? rf_io_open(spec, pool, err, sizeof(err)) : NULL;
	a.to_worker = rf_ring_create("to_worker", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	a.to_io = rf_ring_create("to_io", 1024, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	a.sources = rf_hash_create("sources", KEY_LEN, (unsigned)max_sources, RF_MEMPOOL_QUIET);
	int rc_ = 0;
	if (!pool || !a.dev || !a.to_worker || !a.to_io || !a.sources) {
		fprintf(stderr, "udp_counter: %s\n", !pool ? "no memory for the buffer pool"
						      : !a.dev ? err : "no memory for rings or the table");
		rc_ = 1;
		goto out;
	}
	if (rf_runtime_add_poll_io(a.rt, a.io_idx, io_rx, &a, a.dev, 0) ||
	    rf_runtime_add_poll(a.rt, a.io_idx, io_tx, &a, RF_POLL_WAKE) ||
	    rf_runtime_add_poll(a.rt, a.worker_idx, work, &a, RF_POLL_WAKE) ||
	    rf_runtime_handle_signals(a.rt) || /* the app asks: SIGINT/SIGTERM stop the runtime */
	    rf_runtime_start(a.rt)) {
		fprintf(stderr, "udp_counter: cannot start the pollers\n");
		rc_ = 1;
		goto out;
	}
	printf("udp_counter: listening on %s, pollers on %s\n", listen, cores);
	fflush(stdout);

	/* The main thread reads the hash while the pollers run: it is not a poller, so it follows
	 * the QSBR rule itself. Offline while it sleeps, so it never delays a grace period. */
	rf_qsbr_register();
	double next = now_s() + 1;
	while (!rf_runtime_stopping(a.rt)) {
		rf_qsbr_offline();
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
		rf_qsbr_online();
		if (now_s() >= next) {
			fprintf(stderr, "udp_counter: %zu sources, %llu served\n", rf_hash_count(a.sources),
				(unsigned long long)atomic_load(&a.served));
			rf_qsbr_quiescent();
			next += 1;
		}
	}
	rf_qsbr_offline(); /* joining blocks */
	rf_runtime_join(a.rt);
	rf_qsbr_online();
	/* Replies the worker queued before the stop, sent now from this thread (the pollers are
	 * gone, so the device's queue is ours). */
	for (unsigned spins = 0; !rf_ring_empty(a.to_io) && spins < 1000; spins++) {
		struct rf_pktbuf *pkts[BURST];
		unsigned n = rf_ring_dequeue_burst(a.to_io, (void **)pkts, BURST, NULL);
		unsigned sent = rf_io_tx_burst(a.dev, 0, pkts, n);
		rf_pktbuf_free_bulk(pkts + sent, n - sent);
	}
	print_sources(&a, stdout);
	struct rf_counters t;
	rf_runtime_totals(a.rt, &t);
	printf("served %llu, refused %llu, dropped %llu\n", (unsigned long long)atomic_load(&a.served),
	       (unsigned long long)atomic_load(&a.refused),
	       (unsigned long long)(t.drop_ring_full + t.drop_driver));
	free_sources(&a);
	rf_qsbr_unregister();
out:
	rf_runtime_destroy(a.rt);
	if (a.sources)
		rf_hash_free(a.sources);
	drain_and_free(a.to_worker);
	drain_and_free(a.to_io);
	rf_io_close(a.dev);
	rf_pktbuf_pool_free(pool);
	return rc_;
}
