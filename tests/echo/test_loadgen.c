/*
 * tests/echo/test_loadgen.c: the load generator's engine end to end over loopback, against a
 * minimal echo thread (rx_burst, tx_burst of the same buffers) on the same driver: at a low
 * rate nothing is lost, nothing is corrupt, the point is not saturated, the RTTs are sane; and
 * against a reflector that drops every other message, the point is saturated with ~50 % loss.
 * Content decides, never timing.
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

#include "lg_msg.h"
#include "lg_run.h"

struct reflector {
	struct rf_io_dev *dev;
	atomic_bool stop;
	unsigned drop_every; /* 0: echo all; k: drop every k-th message */
};

static void *reflect(void *arg)
{
	struct reflector *r = arg;
	struct rf_pktbuf *b[64], *keep[64];
	uint64_t seen = 0;
	uint64_t end = rf_lg_now_ns() + 30000000000ull; /* bounded: 30 s at most */
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed) && rf_lg_now_ns() < end) {
		unsigned n = rf_io_rx_burst(r->dev, 0, b, 64), k = 0;
		for (unsigned i = 0; i < n; i++) {
			if (r->drop_every && ++seen % r->drop_every == 0)
				rf_pktbuf_free(b[i]);
			else
				keep[k++] = b[i];
		}
		unsigned sent = k ? rf_io_tx_burst(r->dev, 0, keep, k) : 0;
		if (sent < k)
			rf_pktbuf_free_bulk(keep + sent, k - sent);
		if (n == 0)
			rf_io_wait(r->dev, 0, 1);
	}
	return NULL;
}

/* What the kernel dropped at full receive buffers of the UDP sockets on either end of port:
 * the drops column of /proc/net/udp, summed over lines whose local or remote port is port. */
static unsigned long long udp_kernel_drops(unsigned port)
{
	FILE *f = fopen("/proc/net/udp", "r");
	if (!f)
		return 0;
	char line[512];
	unsigned long long sum = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned lport, rport;
		unsigned long long drops;
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops */
		if (sscanf(line, " %*u: %*x:%x %*x:%x %*x %*x:%*x %*x:%*x %*x %*u %*u %*u %*u %*x %llu",
			   &lport, &rport, &drops) == 3 &&
		    (lport == port || rport == port))
			sum += drops;
	}
	fclose(f);
	return sum;
}

/* prefix: the driver part of the specs ("uring:udp", "udp"); rx_cpu >= 0: the split mode.
 * *kdrops (may be NULL): the kernel's drops at the point's sockets, read before closing. */
static void run_against(const char *prefix, unsigned port, unsigned drop_every, int rx_cpu,
			struct rf_lg_point *p, struct rf_hist *h, unsigned long long *kdrops)
{
	char spec[128], err[256];
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("lgt", 4096, 2048, 64,
							    RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	struct reflector r = {.drop_every = drop_every};
	snprintf(spec, sizeof(spec), "%s:listen=127.0.0.1:%u", prefix, port);
	r.dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(r.dev, "%s: %s", spec, err);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, reflect, &r), 0);
	snprintf(spec, sizeof(spec), "%s:connect=127.0.0.1:%u", prefix, port);
	struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(dev, "%s: %s", spec, err);
	struct rf_lg_track t;
	cr_assert_eq(rf_lg_track_init(&t, 2000), 0);
	/* 2000 msg/s: even a reflector descheduled for 50 ms (a loaded CI box, sanitizers) fits
	 * in a default socket buffer, so "nothing lost" is about the code, not the machine. */
	struct rf_lg_opts o = {.rate = 2000, .warmup_s = 0.05, .duration_s = 0.5, .size = 100,
			       .burst = 32, .drain_ms = 500, .point = 1};
	p->rtt = h;
	p->backend = spec;
	if (rx_cpu >= 0)
		cr_assert_eq(rf_lg_run_point_split(dev, pool, &o, &t, p, rx_cpu), 0);
	else
		cr_assert_eq(rf_lg_run_point(dev, pool, &o, &t, p), 0);
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	if (kdrops)
		*kdrops = udp_kernel_drops(port);
	rf_lg_track_free(&t);
	rf_io_close(dev);
	rf_io_close(r.dev);
	rf_pktbuf_pool_free(pool);
}

static struct rf_hist hist; /* static: a failed assertion must not leak it */

static void check_clean_point(const char *prefix, int socktype, int rx_cpu)
{
	struct rf_hist *h = &hist;
	struct rf_lg_point p = {0};
	/* A thread starved on a loaded machine (ctest -j, sanitizers, a pinned receiver sharing
	 * its CPU) lets a socket buffer fill, and the kernel drops there and counts it. Such a
	 * point says nothing about the code, so it is run again on a fresh port, up to 5 times;
	 * a point the kernel dropped nothing in must have everything back. */
	unsigned long long kdrops = 0;
	for (int attempt = 0; attempt < 5; attempt++) {
		memset(&p, 0, sizeof(p));
		run_against(prefix, free_port_of(socktype), 0, rx_cpu, &p, h,
			    socktype == SOCK_DGRAM ? &kdrops : NULL);
		if (kdrops == 0)
			break;
		fprintf(stderr, "loadgen test: the kernel dropped %llu at full socket buffers "
				"(received %llu of %llu); running the point again\n",
			kdrops, (unsigned long long)p.received, (unsigned long long)p.sent);
	}
	cr_assert_eq(kdrops, 0, "the kernel dropped at full socket buffers in 5 runs");
	cr_assert_geq(p.offered, 1000); /* more only when this (loaded) machine made the sender late */
	cr_assert_eq(p.sent, 1000, "sent %llu", (unsigned long long)p.sent);
	cr_assert_eq(p.received, 1000, "received %llu", (unsigned long long)p.received);
	cr_assert_eq(p.corrupt, 0);
	cr_assert_eq(p.duplicates, 0);
	cr_assert_eq(h->count, 1000);
	cr_assert_gt(h->min, 0);
	/* Content, not timing: everything sent came back, so against the schedule's count the
	 * point is clean (a late sender on a loaded machine would only raise p.offered). */
	cr_assert_not(rf_lg_saturated(1000, p.sent, p.received));
}

#if RF_HAVE_URING /* the io_uring driver is optional (RF_WITH_URING) */
Test(loadgen, uring_udp_loopback_low_rate_loses_nothing)
{
	check_clean_point("uring:udp", SOCK_DGRAM, -1);
}

Test(loadgen, uring_tcp_loopback_low_rate_loses_nothing)
{
	check_clean_point("uring:tcp", SOCK_STREAM, -1);
}
#define LG_DGRAM "uring:udp" /* a datagram driver without RF_IO_CAP_SPLIT_RXTX */
#else
#define LG_DGRAM "udp"
#endif

Test(loadgen, udp_loopback_low_rate_loses_nothing)
{
	check_clean_point("udp", SOCK_DGRAM, -1);
}

Test(loadgen, udp_receiver_on_other_cpu_loses_nothing)
{
	/* Split mode: the replies are taken by a thread pinned to the last CPU while this thread
	 * sends; the same content checks as the one-loop points. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	check_clean_point("udp", SOCK_DGRAM, (int)(ncpu > 1 ? ncpu - 1 : 0));
}

Test(loadgen, split_mode_refused_without_the_capability)
{
	char err[256];
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("lgs", 1024, 2048, 32,
							    RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	char spec[64];
	/* tcp: a driver without RF_IO_CAP_SPLIT_RXTX (uring's neither, but it is optional). Its
	 * connect waits for the handshake, so a listener first. */
	unsigned port = free_port_of(SOCK_STREAM);
	snprintf(spec, sizeof(spec), "tcp:listen=127.0.0.1:%u", port);
	struct rf_io_dev *srv = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(srv, "%s: %s", spec, err);
	snprintf(spec, sizeof(spec), "tcp:connect=127.0.0.1:%u", port);
	struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(dev, "%s: %s", spec, err);
	struct rf_lg_track t;
	cr_assert_eq(rf_lg_track_init(&t, 100), 0);
	struct rf_lg_opts o = {.rate = 100, .warmup_s = 0, .duration_s = 0.1, .size = 100,
			       .burst = 8, .drain_ms = 10, .point = 1};
	struct rf_lg_point p = {.rtt = &hist, .backend = spec};
	cr_assert_eq(rf_lg_run_point_split(dev, pool, &o, &t, &p, 0), -EOPNOTSUPP);
	rf_lg_track_free(&t);
	rf_io_close(dev);
	rf_io_close(srv);
	rf_pktbuf_pool_free(pool);
}

Test(loadgen, dropping_reflector_is_saturated)
{
	struct rf_lg_point p = {0};
	run_against(LG_DGRAM, free_port_of(SOCK_DGRAM), 2, -1, &p, &hist, NULL);
	/* The reflector drops every other message it sees (warm-up ones included), so at most
	 * half of the measured ones can come back. */
	cr_assert_eq(p.sent, 1000);
	cr_assert_leq(p.received, 501);
	cr_assert(rf_lg_saturated(p.offered, p.sent, p.received));
}
