/*
 * tests/echo/test_modes.c: the load generator's stream, rr and crr modes end to end over
 * loopback, against in-process servers on the same drivers: a sink thread (lg_sink.c, payload
 * checks on) for stream, a reflector thread that counts what it echoes for rr and crr. Counts and
 * content decide, never timing: stream's bytes and checksum equal on both sides (TCP) or the
 * sink counts no more than was sent and nothing corrupt (UDP); rr's requests, replies and the
 * reflector's count agree; crr's connections are counted alike on both sides.
 */
#include "rf_test.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "free_port.h"
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_modes.h"
#include "lg_msg.h"
#include "lg_run.h"
#include "lg_sink.h"

struct server {
	struct rf_io_dev *dev;
	bool sink;              /* true: a stream sink; false: echo */
	struct rf_lg_sink s;    /* sink counts (read after join) */
	atomic_bool stop;
	uint64_t echoed;        /* echo: messages sent back (read after join) */
};

static void *serve(void *arg)
{
	struct server *sv = arg;
	struct rf_pktbuf *b[64], *rep[64];
	uint64_t end = rf_lg_now_ns() + 60000000000ull; /* bounded: 60 s at most */
	while (!atomic_load_explicit(&sv->stop, memory_order_relaxed) && rf_lg_now_ns() < end) {
		unsigned n = rf_io_rx_burst(sv->dev, 0, b, 64), k = n;
		struct rf_pktbuf **out = b;
		if (sv->sink) {
			k = rf_lg_sink_take(&sv->s, b, n, rep);
			out = rep;
		}
		unsigned sent = 0;
		for (int tries = 0; sent < k && tries < 1000; tries++)
			sent += rf_io_tx_burst(sv->dev, 0, out + sent, k - sent);
		if (sent < k)
			rf_pktbuf_free_bulk(out + sent, k - sent);
		if (!sv->sink)
			sv->echoed += sent;
		if (n == 0)
			rf_io_wait(sv->dev, 0, 1);
	}
	return NULL;
}

static struct rf_pktbuf_pool *pool;
static struct server sv;
static pthread_t th;
static char cspec[128];
static struct rf_hist hist; /* static: a failed assertion must not leak it */

/* Starts the server on prefix:listen=127.0.0.1:PORT and fills cspec with the client spec. */
static void start(const char *prefix, bool sink)
{
	char spec[128], err[256];
	bool tcp = strstr(prefix, "tcp") != NULL;
	unsigned port = free_port_of(tcp ? SOCK_STREAM : SOCK_DGRAM);
	pool = rf_pktbuf_pool_create("lgm", 8192, 2048, 64, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	memset(&sv, 0, sizeof(sv));
	sv.sink = sink;
	sv.s.check = true;
	snprintf(spec, sizeof(spec), "%s:listen=127.0.0.1:%u", prefix, port);
	sv.dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(sv.dev, "%s: %s", spec, err);
	cr_assert_eq(pthread_create(&th, NULL, serve, &sv), 0);
	snprintf(cspec, sizeof(cspec), "%s:connect=127.0.0.1:%u", prefix, port);
}

static void stop(void)
{
	atomic_store(&sv.stop, true);
	pthread_join(th, NULL);
	rf_io_close(sv.dev);
	rf_pktbuf_pool_free(pool);
}

static const struct rf_lg_mopts opts = {.warmup_s = 0.05, .duration_s = 0.3, .size = 700,
					.burst = 16, .outstanding = 4, .drain_ms = 2000,
					.max_msgs = 2000000, .point = 7};

static void run_stream(const char *prefix, struct rf_lg_mpoint *p)
{
	char err[256];
	start(prefix, true);
	struct rf_io_dev *dev = rf_io_open(cspec, pool, err, sizeof(err));
	cr_assert_not_null(dev, "%s: %s", cspec, err);
	p->backend = cspec;
	cr_assert_eq(rf_lg_run_stream(dev, pool, &opts, p), 0);
	rf_io_close(dev);
	stop();
	cr_assert(p->reported, "the sink's report did not come back");
	cr_assert_gt(p->sent_msgs, 0);
	cr_assert_eq(p->corrupt, 0);
	cr_assert_eq(sv.s.r.corrupt, 0, "the sink saw %llu bad messages",
		     (unsigned long long)sv.s.r.corrupt);
	cr_assert_eq(sv.s.r.point, 7);
	cr_assert_eq(p->recv_bytes, p->recv_msgs * 700);
}

static void check_stream_intact(const char *prefix)
{
	struct rf_lg_mpoint p = {0};
	run_stream(prefix, &p);
	cr_assert_eq(p.recv_msgs, p.sent_msgs, "sent %llu, the sink counted %llu",
		     (unsigned long long)p.sent_msgs, (unsigned long long)p.recv_msgs);
	cr_assert_eq(p.recv_bytes, p.sent_bytes);
	cr_assert_eq(p.recv_csum, p.sent_csum, "checksums differ");
	cr_assert_eq(sv.s.r.msgs, p.sent_msgs); /* the sink's own count, not only its report */
	cr_assert_eq(rf_lg_mpoint_loss(&p), 0.0);
}

Test(modes, tcp_stream_bytes_and_checksum_match)
{
	check_stream_intact("tcp");
}

#if RF_HAVE_URING /* the io_uring driver is optional (RF_WITH_URING) */
Test(modes, uring_tcp_stream_bytes_and_checksum_match)
{
	check_stream_intact("uring:tcp");
}
#endif

Test(modes, udp_stream_sink_counts_no_more_than_sent_and_nothing_corrupt)
{
	/* UDP may lose (the sink is slower than the sender); it never invents or damages. */
	struct rf_lg_mpoint p = {0};
	run_stream("udp", &p);
	cr_assert_leq(p.recv_msgs, p.sent_msgs);
	cr_assert_gt(p.recv_msgs, 0);
	if (p.recv_msgs == p.sent_msgs)
		cr_assert_eq(p.recv_csum, p.sent_csum);
}

static void check_rr_opts(const char *prefix, unsigned conns, bool block)
{
	char err[256];
	start(prefix, false);
	struct rf_io_dev *dev[8];
	for (unsigned i = 0; i < conns; i++) {
		dev[i] = rf_io_open(cspec, pool, err, sizeof(err));
		cr_assert_not_null(dev[i], "%s: %s", cspec, err);
	}
	struct rf_lg_mpoint p = {.backend = cspec, .lat = &hist};
	struct rf_lg_mopts o = opts;
	o.block = block;
	cr_assert_eq(rf_lg_run_rr(dev, conns, pool, &o, &p), 0);
	for (unsigned i = 0; i < conns; i++)
		rf_io_close(dev[i]);
	stop();
	cr_assert_gt(p.recv_msgs, 0);
	/* Every request came back once (the drain waits for the last ones), and the reflector
	 * echoed exactly what the client counted on both ways. */
	cr_assert_eq(p.lost, 0);
	cr_assert_eq(p.corrupt, 0);
	cr_assert_eq(p.duplicates, 0);
	cr_assert_eq(p.recv_msgs, p.sent_msgs);
	cr_assert_eq(p.total_recv, p.total_sent);
	cr_assert_eq(sv.echoed, p.total_sent, "reflector echoed %llu, client sent %llu",
		     (unsigned long long)sv.echoed, (unsigned long long)p.total_sent);
	cr_assert_eq(hist.count, p.recv_msgs);
	cr_assert_eq(p.conns, conns);
	cr_assert_eq(p.outstanding, 4);
}

static void check_rr(const char *prefix, unsigned conns)
{
	check_rr_opts(prefix, conns, false);
}

Test(modes, tcp_rr_transactions_match_on_both_sides)
{
	check_rr("tcp", 3);
}

Test(modes, udp_rr_transactions_match_on_both_sides)
{
	check_rr("udp", 3);
}

#if RF_HAVE_URING /* the io_uring driver is optional (RF_WITH_URING) */
Test(modes, uring_tcp_rr_transactions_match_on_both_sides)
{
	check_rr("uring:tcp", 2);
}
#endif

Test(modes, udp_rr_blocking_client_transactions_match_on_both_sides)
{
	/* --wait block: the client sleeps in rf_io_wait between replies; same accounting. */
	check_rr_opts("udp", 1, true);
}

#if RF_HAVE_URING /* the io_uring driver is optional (RF_WITH_URING) */
Test(modes, uring_udp_rr_blocking_client_transactions_match_on_both_sides)
{
	check_rr_opts("uring:udp", 2, true);
}
#endif

static void check_crr(const char *prefix)
{
	char err[256] = "";
	start(prefix, false);
	struct rf_lg_mpoint p = {.backend = cspec, .lat = &hist};
	cr_assert_eq(rf_lg_run_crr(cspec, pool, &opts, &p, err, sizeof(err)), 0, "%s", err);
	struct rf_io_stats st = {0};
	rf_io_stats_get(sv.dev, &st);
	stop();
	cr_assert_gt(p.recv_msgs, 0);
	cr_assert_eq(p.errors, 0, "%s", err);
	cr_assert_eq(p.corrupt, 0);
	cr_assert_eq(p.recv_msgs, p.sent_msgs);
	cr_assert_eq(hist.count, p.recv_msgs);
	/* One connection per request, warm-up included, counted alike by the server. */
	cr_assert_eq(p.conns_made, p.total_sent);
	cr_assert_eq(p.total_recv, p.total_sent);
	cr_assert_eq(st.conns_total, p.conns_made, "server accepted %llu, client made %llu",
		     (unsigned long long)st.conns_total, (unsigned long long)p.conns_made);
	cr_assert_eq(sv.echoed, p.total_sent);
}

Test(modes, tcp_crr_connections_counted_on_both_sides)
{
	check_crr("tcp");
}

#if RF_HAVE_URING /* the io_uring driver is optional (RF_WITH_URING) */
Test(modes, uring_tcp_crr_connections_counted_on_both_sides)
{
	check_crr("uring:tcp");
}
#endif

Test(modes, crr_to_a_closed_port_fails_with_a_reason)
{
	char err[256] = "";
	pool = rf_pktbuf_pool_create("lgc", 1024, 2048, 32, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	snprintf(cspec, sizeof(cspec), "tcp:connect=127.0.0.1:%u", free_port_of(SOCK_STREAM));
	struct rf_lg_mopts o = opts;
	o.warmup_s = 0;
	struct rf_lg_mpoint p = {.backend = cspec, .lat = &hist};
	cr_assert_lt(rf_lg_run_crr(cspec, pool, &o, &p, err, sizeof(err)), 0);
	cr_assert(strstr(err, "failed") != NULL, "err: %s", err);
	cr_assert_eq(p.recv_msgs, 0);
	cr_assert_leq(p.errors, 100); /* 100 failures in a row end the run */
	rf_pktbuf_pool_free(pool);
}

Test(modes, rr_refuses_bad_options)
{
	struct rf_lg_mopts o = opts;
	struct rf_lg_mpoint p = {.lat = &hist};
	struct rf_io_dev *none[1] = {NULL};
	o.outstanding = 0;
	cr_assert_eq(rf_lg_run_rr(none, 1, NULL, &o, &p), -EINVAL);
	o = opts;
	o.outstanding = RF_LG_MAX_OUTSTANDING + 1;
	cr_assert_eq(rf_lg_run_rr(none, 1, NULL, &o, &p), -EINVAL);
	o = opts;
	cr_assert_eq(rf_lg_run_rr(none, 0, NULL, &o, &p), -EINVAL);
	o.size = RF_LG_MAX_SIZE + 1;
	cr_assert_eq(rf_lg_run_stream(NULL, NULL, &o, &p), -EINVAL);
}
