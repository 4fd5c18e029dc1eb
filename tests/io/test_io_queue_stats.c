/*
 * tests/io/test_io_queue_stats.c: per-queue device counters (rf_io_queue_stats_get) and
 * their place in the stats registry. A udp device with 4 queues on loopback (SO_REUSEPORT
 * spreads 16 client sockets over them) is polled by one thread that echoes every message
 * on the queue it came from and counts, per queue, what it received and sent; meanwhile the
 * main thread reads the registry over and over (counters only grow). At the end each
 * queue's counters equal the poller's own counts exactly, they add up to the device total,
 * and the JSON tree and the Prometheus text (label queue) carry the same numbers.
 * Loopback only, bounded (a deadline per window of messages). Concurrent: built under TSan.
 */
#include "rf_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/io.h>
#include <ringflow/json.h>
#include <ringflow/pktbuf.h>
#include <ringflow/stats.h>

#define NQ 4
#define CLIENTS 16
#define PER_CLIENT 200
#define WINDOW 8 /* per client per round: 128 datagrams in flight at most */

struct poller {
	struct rf_io_dev *dev;
	_Atomic int stop;
	_Atomic uint64_t total; /* received, for the main thread's pacing */
	uint64_t rx[NQ], tx[NQ]; /* read after join */
};

static void *poll_main(void *arg)
{
	struct poller *p = arg;
	struct rf_pktbuf *b[32];
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		unsigned got = 0;
		for (unsigned q = 0; q < NQ; q++) {
			unsigned n = rf_io_rx_burst(p->dev, q, b, 32);
			p->rx[q] += n;
			unsigned s = n ? rf_io_tx_burst(p->dev, q, b, n) : 0;
			p->tx[q] += s;
			rf_pktbuf_free_bulk(b + s, n - s);
			got += n;
		}
		if (got)
			atomic_fetch_add_explicit(&p->total, got, memory_order_relaxed);
		else
			usleep(100);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t leaf(const struct rf_json *root, const char *path)
{
	const struct rf_json *v = rf_json_path(root, path);
	cr_assert_not_null(v, "no %s", path);
	return (uint64_t)v->num;
}

Test(io_queue_stats, per_queue_counters_add_up_and_reach_the_registry)
{
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("qst", 4096, 2048, 64, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	char spec[96], err[512];
	struct rf_io_dev *dev = NULL;
	unsigned port = 0;
	for (int attempt = 0; attempt < 5 && !dev; attempt++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t al = sizeof(a);
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		getsockname(fd, (struct sockaddr *)&a, &al);
		close(fd);
		port = ntohs(a.sin_port);
		snprintf(spec, sizeof(spec), "udp:listen=127.0.0.1:%u,queues=%u", port, NQ);
		dev = rf_io_open(spec, pool, err, sizeof(err));
	}
	cr_assert_not_null(dev, "%s", err);
	struct rf_io_stats qs;
	cr_assert_eq(rf_io_queue_stats_get(dev, NQ, &qs), -EINVAL);
	struct rf_stats *st = rf_stats_create("qtest");
	cr_assert_eq(rf_stats_add_dev(st, "u0", dev), 0);

	struct poller p = {.dev = dev};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, poll_main, &p), 0);

	int cs[CLIENTS];
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (unsigned c = 0; c < CLIENTS; c++) {
		cs[c] = socket(AF_INET, SOCK_DGRAM, 0);
		cr_assert_geq(cs[c], 0);
	}
	uint64_t sent = 0, last_rx = 0;
	char msg[64];
	memset(msg, 'q', sizeof(msg));
	for (unsigned round = 0; round < PER_CLIENT / WINDOW; round++) {
		for (unsigned c = 0; c < CLIENTS; c++)
			for (unsigned k = 0; k < WINDOW; k++)
				sent += sendto(cs[c], msg, sizeof(msg), 0, (struct sockaddr *)&to,
					       sizeof(to)) == (ssize_t)sizeof(msg);
		/* A reader while the poller runs (as the control thread would be). */
		struct rf_io_stats all;
		rf_io_stats_get(dev, &all);
		cr_assert_geq(all.rx_pkts, last_rx, "the device's rx went back");
		last_rx = all.rx_pkts;
		for (unsigned q = 0; q < NQ; q++)
			cr_assert_eq(rf_io_queue_stats_get(dev, q, &qs), 0);
		double dl = now_s() + 5;
		while (atomic_load_explicit(&p.total, memory_order_relaxed) < sent && now_s() < dl)
			usleep(200);
	}
	atomic_store(&p.stop, 1);
	pthread_join(th, NULL);
	for (unsigned c = 0; c < CLIENTS; c++)
		close(cs[c]);
	cr_assert_eq(sent, (uint64_t)CLIENTS * PER_CLIENT);
	cr_assert_eq(atomic_load(&p.total), sent, "loopback lost datagrams");

	struct rf_io_stats all, sum = {0};
	rf_io_stats_get(dev, &all);
	unsigned used = 0;
	for (unsigned q = 0; q < NQ; q++) {
		cr_assert_eq(rf_io_queue_stats_get(dev, q, &qs), 0);
		cr_assert_eq(qs.rx_pkts, p.rx[q], "queue %u rx", q);
		cr_assert_eq(qs.tx_pkts, p.tx[q], "queue %u tx", q);
		cr_assert_eq(qs.rx_bytes, p.rx[q] * sizeof(msg), "queue %u rx bytes", q);
		used += p.rx[q] > 0;
		sum.rx_pkts += qs.rx_pkts;
		sum.tx_pkts += qs.tx_pkts;
		sum.rx_bytes += qs.rx_bytes;
		sum.tx_bytes += qs.tx_bytes;
		sum.rx_drops += qs.rx_drops;
		sum.tx_drops += qs.tx_drops;
		sum.rx_nobuf += qs.rx_nobuf;
	}
	cr_assert_geq(used, 2, "16 flows all hashed to one of 4 queues");
	cr_assert_eq(sum.rx_pkts, all.rx_pkts);
	cr_assert_eq(all.rx_pkts, sent);
	cr_assert_eq(sum.tx_pkts, all.tx_pkts);
	cr_assert_eq(sum.rx_bytes, all.rx_bytes);
	cr_assert_eq(sum.tx_bytes, all.tx_bytes);
	cr_assert_eq(sum.rx_drops, all.rx_drops);
	cr_assert_eq(sum.tx_drops, all.tx_drops);
	cr_assert_eq(sum.rx_nobuf, all.rx_nobuf);

	/* The registry: ports/u0/per_queue/Q/... and ringflow_queue_*{queue="Q"} */
	struct rf_buf b;
	rf_buf_init(&b, 1u << 20);
	cr_assert_eq(rf_stats_write_json(st, "", &b), 0);
	struct rf_json *j = rf_json_parse(b.p, b.len, err, sizeof(err));
	cr_assert_not_null(j, "%s", err);
	uint64_t jsum = 0;
	for (unsigned q = 0; q < NQ; q++) {
		char path[96];
		snprintf(path, sizeof(path), "ports/u0/per_queue/%u/rx_pkts", q);
		cr_assert_eq(leaf(j, path), p.rx[q]);
		jsum += leaf(j, path);
		snprintf(path, sizeof(path), "ports/u0/per_queue/%u/tx_pkts", q);
		cr_assert_eq(leaf(j, path), p.tx[q]);
	}
	cr_assert_eq(jsum, leaf(j, "ports/u0/rx_pkts"));
	rf_json_free(j);
	rf_buf_reset(&b);
	cr_assert_eq(rf_stats_write_prometheus(st, &b), 0);
	for (unsigned q = 0; q < NQ; q++) {
		char line[160];
		snprintf(line, sizeof(line),
			 "ringflow_queue_rx_packets_total{app=\"qtest\",port=\"u0\",driver=\"udp\","
			 "queue=\"%u\"} %llu\n", q, (unsigned long long)p.rx[q]);
		cr_assert(strstr(b.p, line), "%s not in the exposition", line);
	}
	int types = 0;
	for (const char *x = b.p; (x = strstr(x, "# TYPE ringflow_queue_rx_packets_total ")); x++)
		types++;
	cr_assert_eq(types, 1);
	rf_buf_free(&b);
	rf_stats_destroy(st);
	rf_io_close(dev);
	rf_pktbuf_pool_free(pool);
}
