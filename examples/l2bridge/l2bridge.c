/*
 * examples/l2bridge/l2bridge.c: an N-port learning Ethernet bridge built only on the installed
 * ringflow. Each --port is an io config string in frame mode ("packet:dev=veth1").
 *
 *   l2bridge --port SPEC --port SPEC [--port SPEC...] [--cores 0,1] [--age-ms N]
 *
 * Pollers and queues: every port is opened with one queue per poller. Poller i receives from
 * queue i of every port (one poll function per port) and transmits on queue i of every port,
 * so no queue is ever used by two threads.
 * Per frame: a frame whose source MAC is one of our ports' own is dropped (the host stack of
 * this machine sent it: we must not learn our own MACs); a unicast source is learned (MAC ->
 * in port) in ringflow's lock-free hash, on the poller itself; the destination is looked up:
 * known on another port -> sent there, known on the in port -> filtered, unknown, broadcast or
 * multicast -> flooded to every other port (a copy each).
 * Aging: a runtime timer (service thread, online QSBR reader, see qsbr.h rule 5) deletes the
 * entries idle for --age-ms and frees them with rf_qsbr_defer, never by blocking.
 * Observing: `ringflow-ctl -p PID stats` shows ports/, pollers/ and app/bridge/ (a stats
 * callback summing the per-poller counters); `ringflow-ctl -p PID fdb` lists the table.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/ctl.h>
#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

#define BURST 32
#define MAX_PORTS 8
#define MAX_POLLERS 16
#define MAX_PENDING 256 /* aged entries whose deferred free failed (-EAGAIN), retried later */

/* One MAC table entry: written by any poller (relaxed stores, last writer wins), read by the
 * pollers and the aging timer. The hash publishes it (release) and lookups acquire it. */
struct fdb_entry {
	_Atomic uint32_t port;
	_Atomic uint64_t seen_ns;
};

/* One poller's counters (only it writes them; the stats callback sums them). */
enum { C_RX, C_FORWARDED, C_FLOODED, C_FILTERED, C_OWN_SRC, C_LEARNED, C_MOVED, C_TABLE_FULL,
       C_NOBUF, C_TX_DROPS, C_N };
static const char *const cname[C_N] = {"rx", "forwarded", "flooded", "filtered", "own_src",
	"learned", "moved", "table_full", "nobuf", "tx_drops"};
static const char *const chelp[C_N] = {
	"frames received", "frames sent to the one port their destination was learned on",
	"frames sent to every other port (unknown, broadcast, multicast destination)",
	"frames dropped: destination learned on the port they came from",
	"frames dropped: source MAC is one of the bridge's own ports (host stack)",
	"MACs learned", "MACs that moved to another port", "MACs not learned: table full or no memory",
	"flood copies not made: no buffer", "frames the driver refused (dropped)"};

struct poller_stats {
	RF_CACHE_ALIGNED _Atomic uint64_t c[C_N];
};

struct bridge;
struct port_poll { /* the argument of one poll function: this port, this poller's queue */
	struct bridge *br;
	unsigned port, queue;
};

struct bridge {
	struct rf_runtime *rt;
	struct rf_pktbuf_pool *pool;
	struct rf_hash *fdb;
	unsigned nports, npollers;
	struct rf_io_dev *dev[MAX_PORTS];
	uint8_t mac[MAX_PORTS][6];
	uint64_t age_ns;
	struct poller_stats ps[MAX_POLLERS];
	struct port_poll pp[MAX_POLLERS][MAX_PORTS];
	_Atomic uint64_t aged, defer_retries; /* written by the timer only */
	void *pending[MAX_PENDING];           /* the timer's own */
	unsigned npending;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Single writer per counter: a relaxed load and store, no read-modify-write. */
static void bump(struct poller_stats *s, int i, uint64_t n)
{
	atomic_store_explicit(&s->c[i], atomic_load_explicit(&s->c[i], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static int own_mac(const struct bridge *br, const uint8_t *m)
{
	for (unsigned i = 0; i < br->nports; i++)
		if (memcmp(br->mac[i], m, 6) == 0)
			return 1;
	return 0;
}

/* Learn src on port `in` (a poller is an online QSBR reader: e stays valid this round). */
static void learn(struct bridge *br, struct poller_stats *s, const uint8_t *src, unsigned in,
		  uint64_t now)
{
	struct fdb_entry *e = rf_hash_lookup(br->fdb, src);
	if (e) {
		if (atomic_load_explicit(&e->port, memory_order_relaxed) != in) {
			atomic_store_explicit(&e->port, in, memory_order_relaxed);
			bump(s, C_MOVED, 1);
		}
		/* at most one store a millisecond: the line is shared with the other pollers */
		if (now - atomic_load_explicit(&e->seen_ns, memory_order_relaxed) > 1000000)
			atomic_store_explicit(&e->seen_ns, now, memory_order_relaxed);
		return;
	}
	e = malloc(sizeof(*e));
	if (!e) {
		bump(s, C_TABLE_FULL, 1);
		return;
	}
	atomic_init(&e->port, in);
	atomic_init(&e->seen_ns, now);
	int rc = rf_hash_insert(br->fdb, src, e);
	if (rc == 0) {
		bump(s, C_LEARNED, 1);
		return;
	}
	free(e); /* never published */
	if (rc != -EEXIST) /* -EEXIST: another poller learned it just now */
		bump(s, C_TABLE_FULL, 1);
}

/* Transmit out[p][0..n[p]) on queue q of every port; what the driver refuses is ours: free. */
static void send_all(struct bridge *br, struct poller_stats *s, unsigned q,
		     struct rf_pktbuf *out[MAX_PORTS][BURST], unsigned n[MAX_PORTS])
{
	for (unsigned p = 0; p < br->nports; p++) {
		unsigned sent = n[p] ? rf_io_tx_burst(br->dev[p], q, out[p], n[p]) : 0;
		if (sent < n[p]) {
			rf_pktbuf_free_bulk(out[p] + sent, n[p] - sent);
			bump(s, C_TX_DROPS, n[p] - sent);
		}
		n[p] = 0;
	}
}

/* One poll function per (poller, port): receive a burst on this port and bridge it. */
static unsigned bridge_poll(struct rf_poller *poller, void *arg)
{
	struct port_poll *pp = arg;
	struct bridge *br = pp->br;
	struct poller_stats *s = &br->ps[rf_poller_index(poller)];
	struct rf_pktbuf *pkts[BURST], *out[MAX_PORTS][BURST];
	unsigned n = rf_io_rx_burst(br->dev[pp->port], pp->queue, pkts, BURST), nout[MAX_PORTS] = {0};
	if (n == 0)
		return 0;
	bump(s, C_RX, n);
	uint64_t now = now_ns();
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *m = pkts[i];
		const uint8_t *dst = rf_pktbuf_data(m), *src = dst + 6; /* frame mode: >= 14 bytes */
		if (own_mac(br, src)) {
			rf_pktbuf_free(m);
			bump(s, C_OWN_SRC, 1);
			continue;
		}
		if (!(src[0] & 1)) /* a multicast source is not a station: never learned */
			learn(br, s, src, pp->port, now);
		struct fdb_entry *e = dst[0] & 1 ? NULL : rf_hash_lookup(br->fdb, dst);
		if (e) {
			unsigned to = atomic_load_explicit(&e->port, memory_order_relaxed);
			if (to == pp->port) {
				rf_pktbuf_free(m);
				bump(s, C_FILTERED, 1);
			} else {
				out[to][nout[to]++] = m;
				bump(s, C_FORWARDED, 1);
			}
		} else { /* flood: a copy to every other port, the original to the last one */
			unsigned last = pp->port == br->nports - 1 ? br->nports - 2 : br->nports - 1;
			for (unsigned p = 0; p < br->nports; p++) {
				if (p == pp->port)
					continue;
				struct rf_pktbuf *c = p == last ? m : rf_pktbuf_alloc(br->pool);
				if (!c) {
					bump(s, C_NOBUF, 1);
					continue;
				}
				if (c != m) {
					memcpy(rf_pktbuf_data(c), dst, m->data_len);
					c->data_len = m->data_len;
				}
				out[p][nout[p]++] = c;
			}
			bump(s, C_FLOODED, 1);
		}
	}
	send_all(br, s, pp->queue, out, nout);
	return n;
}

/* Aging, on the service thread (online; a quiescent state follows each run). It deletes idle
 * entries and defers their free past a grace period: a poller may still hold one. */
static void age(void *arg)
{
	struct bridge *br = arg;
	while (br->npending && rf_qsbr_defer(free, br->pending[br->npending - 1]) == 0) {
		br->npending--;
		atomic_store_explicit(&br->defer_retries,
				      atomic_load_explicit(&br->defer_retries, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
	uint64_t now = now_ns(), aged = 0;
	struct rf_hash_iter it;
	const void *k;
	void *v;
	rf_hash_iter_init(br->fdb, &it);
	while (br->npending < MAX_PENDING && rf_hash_iter_next(br->fdb, &it, &k, &v)) {
		struct fdb_entry *e = v;
		if (now - atomic_load_explicit(&e->seen_ns, memory_order_relaxed) < br->age_ns)
			continue;
		uint8_t key[6];
		void *old;
		memcpy(key, k, 6);
		if (rf_hash_delete(br->fdb, key, &old) != 0)
			continue;
		if (rf_qsbr_defer(free, old) != 0) /* -EAGAIN: grace periods stalled; retry later */
			br->pending[br->npending++] = old;
		aged++;
	}
	atomic_store_explicit(&br->aged, atomic_load_explicit(&br->aged, memory_order_relaxed) + aged,
			      memory_order_relaxed);
}

/* Stats callback (on the control thread, which is OFFLINE for QSBR here: it must not touch
 * the hash; it reads only the counters). */
static void bridge_stats(struct rf_stat_set *set, void *arg)
{
	struct bridge *br = arg;
	char path[64], metric[64];
	for (int i = 0; i < C_N; i++) {
		uint64_t sum = 0;
		for (unsigned p = 0; p < br->npollers; p++)
			sum += atomic_load_explicit(&br->ps[p].c[i], memory_order_relaxed);
		snprintf(path, sizeof(path), "app/bridge/%s", cname[i]);
		snprintf(metric, sizeof(metric), "bridge_%s_total", cname[i]);
		rf_stats_emit_u64(set, RF_STAT_COUNTER, path, metric, NULL, chelp[i], sum);
	}
	rf_stats_emit_u64(set, RF_STAT_COUNTER, "app/bridge/aged", "bridge_aged_total", NULL,
			  "MACs removed after --age-ms idle",
			  atomic_load_explicit(&br->aged, memory_order_relaxed));
}

/* `ringflow-ctl -p PID fdb`: the table as [{"mac":"..","port":N},...] (an app command: the
 * control thread is online while it runs, so it may walk the hash). */
static int fdb_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	struct bridge *br = arg;
	struct rf_hash_iter it;
	const void *k;
	void *v;
	int first = 1;
	rf_buf_puts(out, "[");
	rf_hash_iter_init(br->fdb, &it);
	while (rf_hash_iter_next(br->fdb, &it, &k, &v)) {
		const uint8_t *m = k;
		rf_buf_printf(out, "%s{\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"port\":%u}",
			      first ? "" : ",", m[0], m[1], m[2], m[3], m[4], m[5],
			      (unsigned)atomic_load_explicit(&((struct fdb_entry *)v)->port,
							     memory_order_relaxed));
		first = 0;
	}
	rf_buf_puts(out, "]");
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: l2bridge --port SPEC --port SPEC [--port SPEC...] (2..%d) "
			"[--cores LIST] [--age-ms N]\n", MAX_PORTS);
	return 2;
}

int main(int argc, char **argv)
{
	const char *spec[MAX_PORTS], *cores = "0,1";
	unsigned nports = 0;
	unsigned age_ms = 300000;
	char err[256];
	int bad = 0; /* options through the library's parser: decimal only, one line on error */
	for (int i = 1; i < argc && !bad; i++) {
		if (i + 1 == argc)
			return usage();
		const char *opt = argv[i], *v = argv[++i];
		if (strcmp(opt, "--port") == 0 && nports < MAX_PORTS)
			spec[nports++] = v;
		else if (strcmp(opt, "--cores") == 0)
			bad = rf_opt_cores(opt, cores = v, err, sizeof(err));
		else if (strcmp(opt, "--age-ms") == 0)
			bad = rf_opt_uint(opt, v, 1, 86400000, &age_ms, err, sizeof(err));
		else
			return usage();
	}
	if (bad) {
		fprintf(stderr, "l2bridge: %s\n", err);
		return 2;
	}
	if (nports < 2)
		return usage();

	static struct bridge br; /* large (per-poller counters): not on the stack */
	int rc = 1;
	struct rf_ctl *ctl = NULL;
	struct rf_runtime_config rcfg = {.cores = cores, .idle = RF_IDLE_ADAPTIVE};
	br.nports = nports;
	br.age_ns = (uint64_t)age_ms * 1000000u;
	br.rt = rf_runtime_create(&rcfg, err, sizeof(err));
	if (!br.rt) {
		fprintf(stderr, "l2bridge: %s\n", err);
		return 1;
	}
	br.npollers = rf_runtime_ncores(br.rt);
	if (br.npollers > MAX_POLLERS) {
		fprintf(stderr, "l2bridge: --cores %s: at most %d pollers\n", cores, MAX_POLLERS);
		goto out;
	}
	br.pool = rf_pktbuf_pool_create("l2bridge", 8192, 2048, 64, RF_MEMPOOL_QUIET);
	br.fdb = rf_hash_create("fdb", 6, 65536, RF_MEMPOOL_QUIET);
	if (!br.pool || !br.fdb) {
		fprintf(stderr, "l2bridge: no memory for the buffer pool or the MAC table\n");
		goto out;
	}
	for (unsigned p = 0; p < nports; p++) {
		br.dev[p] = rf_io_open_queues(spec[p], br.pool, br.npollers, err, sizeof(err));
		if (!br.dev[p]) {
			fprintf(stderr, "l2bridge: port %u: %s\n", p, err);
			goto out;
		}
		if (!rf_io_frame_mode(br.dev[p]) || rf_io_nqueues(br.dev[p]) != br.npollers ||
		    rf_io_mac(br.dev[p], br.mac[p]) != 0) {
			fprintf(stderr, "l2bridge: port %u (%s): needs frame mode, %u queue(s) and a MAC "
					"address\n", p, spec[p], br.npollers);
			goto out;
		}
	}
	for (unsigned q = 0; q < br.npollers; q++)
		for (unsigned p = 0; p < nports; p++) {
			br.pp[q][p] = (struct port_poll){&br, p, q};
			if (rf_runtime_add_poll_io(br.rt, q, bridge_poll, &br.pp[q][p], br.dev[p], q)) {
				fprintf(stderr, "l2bridge: cannot add the poll functions\n");
				goto out;
			}
		}
	char names[MAX_PORTS][16];
	const char *name_ptr[MAX_PORTS];
	for (unsigned p = 0; p < nports; p++) {
		snprintf(names[p], sizeof(names[p]), "port%u", p);
		name_ptr[p] = names[p];
	}
	struct rf_ctl_app ca = {.app = "l2bridge", .rt = br.rt, .devs = br.dev, .dev_names = name_ptr,
				.ndevs = nports, .pool = br.pool};
	ctl = rf_ctl_start_app(&ca, err, sizeof(err));
	if (!ctl || rf_stats_add_fn(rf_ctl_stats(ctl), "bridge", bridge_stats, &br) ||
	    rf_ctl_register(ctl, "fdb", "the MAC table: [{mac, port}]", fdb_cmd, &br)) {
		fprintf(stderr, "l2bridge: control socket: %s\n", ctl ? "cannot add the sources" : err);
		goto out;
	}
	uint64_t tick = br.age_ns / 4 < 1000000000u ? br.age_ns / 4 : 1000000000u;
	if (rf_runtime_timer_add(br.rt, tick, tick, age, &br) < 0 ||
	    rf_runtime_handle_signals(br.rt) || rf_runtime_start(br.rt)) {
		fprintf(stderr, "l2bridge: cannot start the pollers\n");
		goto out;
	}
	printf("l2bridge: %u ports, %u poller(s), aging %u ms, control socket %s\n", nports,
	       br.npollers, age_ms, rf_ctl_path(ctl));
	fflush(stdout);
	rf_runtime_wait(br.rt); /* until SIGINT/SIGTERM; this thread is not a QSBR reader */
	rf_runtime_join(br.rt);
	rc = 0;
out:
	rf_ctl_stop(ctl);          /* NULL: no-op; stops the control thread, destroys the registry */
	rf_runtime_destroy(br.rt); /* joins the pollers and the service thread first */
	/* Nobody reads the table any more: free the entries, the ones the timer kept, then wait
	 * for the deferred frees (a registered thread may block in rf_qsbr_barrier). */
	rf_qsbr_register_named("l2bridge-main");
	if (br.fdb) {
		struct rf_hash_iter it;
		const void *k;
		void *v;
		rf_hash_iter_init(br.fdb, &it);
		while (rf_hash_iter_next(br.fdb, &it, &k, &v))
			free(v);
		rf_qsbr_quiescent();
	}
	for (unsigned i = 0; i < br.npending; i++)
		free(br.pending[i]);
	rf_qsbr_barrier();
	rf_qsbr_unregister();
	for (unsigned p = 0; p < nports; p++)
		rf_io_close(br.dev[p]); /* NULL: no-op */
	if (br.fdb)
		rf_hash_free(br.fdb);
	rf_pktbuf_pool_free(br.pool);
	return rc;
}
