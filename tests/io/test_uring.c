/*
 * tests/io/test_uring.c: what is particular to the io_uring driver, over loopback: config
 * strings it rejects (and the line it prints), UDP echo through multishot recvmsg, through the
 * single-shot fallback (multishot=0) and with sqpoll=1, TCP framing of a byte stream split at
 * every awkward boundary by a plain socket peer, and TCP backpressure (thousands of messages
 * arrive while the app reads nothing; all come out, in order, intact). Content decides.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "free_port.h"
#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

static struct rf_pktbuf_pool *pool;

static void setup(void)
{
	pool = rf_pktbuf_pool_create("uring_t", 8192, 2048, 64, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
}

static void teardown(void)
{
	rf_pktbuf_pool_free(pool);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Receives up to want messages within 5 s; returns how many. */
static unsigned rx_some(struct rf_io_dev *d, struct rf_pktbuf **out, unsigned want)
{
	unsigned got = 0;
	uint64_t end = now_ms() + 5000;
	while (got < want && now_ms() < end) {
		unsigned n = rf_io_rx_burst(d, 0, out + got, want - got > 64 ? 64 : want - got);
		got += n;
		if (!n)
			rf_io_wait(d, 0, 10);
	}
	return got;
}

static void expect_rejected(const char *spec, const char *needle)
{
	char err[512] = "";
	struct rf_io_dev *d = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_null(d, "%s was accepted", spec);
	cr_assert_not_null(strstr(err, needle), "%s: message '%s' lacks '%s'", spec, err, needle);
	cr_assert_null(strchr(err, '\n'), "more than one line: %s", err);
}

Test(uring, bad_config_strings_are_rejected_with_one_line, .init = setup, .fini = teardown)
{
	expect_rejected("uring:listen=127.0.0.1:9000", "transport");
	expect_rejected("uring:sctp:listen=127.0.0.1:9000", "sctp");
	expect_rejected("uring:udp:sqpoll=1", "listen");
	expect_rejected("uring:udp:listen=127.0.0.1:9000,connect=127.0.0.1:9001", "exactly one");
	expect_rejected("uring:udp:listen=127.0.0.1:9000,bufs=100", "power of two");
	expect_rejected("uring:udp:listen=127.0.0.1:9000,entries=1", "entries");
	expect_rejected("uring:udp:listen=127.0.0.1:9000,sqpoll=maybe", "sqpoll");
	expect_rejected("uring:udp:listen=127.0.0.1:9000,colour=red", "colour");
	expect_rejected("uring:tcp:connect=127.0.0.1:1", "connect");
}

/* UDP: a client device sends n numbered messages to a listening device, which echoes them;
 * every one comes back with its payload intact. */
static void udp_echo(const char *extra)
{
	char spec[256], err[512];
	unsigned port = free_port_of(SOCK_DGRAM);
	snprintf(spec, sizeof(spec), "uring:udp:listen=127.0.0.1:%u%s", port, extra);
	struct rf_io_dev *srv = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(srv, "%s", err);
	snprintf(spec, sizeof(spec), "uring:udp:connect=127.0.0.1:%u%s", port, extra);
	struct rf_io_dev *cli = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(cli, "%s", err);
	enum { N = 200 };
	static unsigned char seen[N];
	memset(seen, 0, sizeof(seen));
	unsigned back = 0;
	for (unsigned i = 0; i < N; i += 10) {
		struct rf_pktbuf *b[64];
		cr_assert_eq(rf_pktbuf_alloc_bulk(pool, b, 10), 0);
		for (unsigned j = 0; j < 10; j++) {
			unsigned char *p = rf_pktbuf_data(b[j]);
			unsigned len = 20 + (i + j) % 200;
			for (unsigned q = 0; q < len; q++)
				p[q] = (unsigned char)(i + j + q);
			p[0] = (unsigned char)((i + j) & 0xff);
			p[1] = (unsigned char)((i + j) >> 8);
			b[j]->data_len = len;
		}
		unsigned s = 0;
		for (uint64_t end = now_ms() + 2000; s < 10 && now_ms() < end;)
			s += rf_io_tx_burst(cli, 0, b + s, 10 - s);
		cr_assert_eq(s, 10);
		/* echo what arrived */
		unsigned got = rx_some(srv, b, 10);
		cr_assert_eq(got, 10, "server got %u of 10", got);
		for (unsigned j = 0; j < got; j++)
			cr_assert_eq(b[j]->peer.sa.sa_family, AF_INET);
		s = 0;
		for (uint64_t end = now_ms() + 2000; s < got && now_ms() < end;)
			s += rf_io_tx_burst(srv, 0, b + s, got - s);
		cr_assert_eq(s, got);
		got = rx_some(cli, b, 10);
		for (unsigned j = 0; j < got; j++) {
			const unsigned char *p = rf_pktbuf_data(b[j]);
			unsigned id = p[0] | (unsigned)p[1] << 8;
			cr_assert_lt(id, N);
			cr_assert_eq(b[j]->data_len, 20 + id % 200);
			for (unsigned q = 2; q < b[j]->data_len; q++)
				cr_assert_eq(p[q], (unsigned char)(id + q), "message %u byte %u", id, q);
			cr_assert_eq(seen[id], 0, "message %u twice", id);
			seen[id] = 1;
			back++;
		}
		rf_pktbuf_free_bulk(b, got);
	}
	cr_assert_eq(back, N);
	struct rf_io_stats st = {0};
	rf_io_stats_get(cli, &st);
	cr_assert_eq(st.tx_pkts, N);
	cr_assert_eq(st.rx_pkts, N);
	rf_io_close(cli);
	rf_io_close(srv);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 8192, "buffers leaked: %u free",
		     rf_pktbuf_pool_avail(pool));
}

Test(uring, udp_echo_multishot, .init = setup, .fini = teardown)
{
	udp_echo("");
}

Test(uring, udp_echo_single_shot_fallback, .init = setup, .fini = teardown)
{
	udp_echo(",multishot=0");
}

Test(uring, udp_echo_sqpoll, .init = setup, .fini = teardown)
{
	udp_echo(",sqpoll=1");
}

/* TCP: a plain socket writes framed messages in pieces of every size 1..7 bytes (so length
 * prefixes and payloads straddle reads); the device must cut out exactly those messages. */
Test(uring, tcp_framing_across_split_reads, .init = setup, .fini = teardown)
{
	char spec[128], err[512];
	unsigned port = free_port_of(SOCK_STREAM);
	snprintf(spec, sizeof(spec), "uring:tcp:listen=127.0.0.1:%u", port);
	struct rf_io_dev *srv = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(srv, "%s", err);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	enum { N = 300 };
	static unsigned char stream[N * 300];
	size_t len = 0;
	for (unsigned i = 0; i < N; i++) {
		unsigned l = i % 250; /* includes empty messages */
		stream[len++] = (unsigned char)(l >> 8);
		stream[len++] = (unsigned char)l;
		for (unsigned q = 0; q < l; q++)
			stream[len++] = (unsigned char)(i * 7 + q);
	}
	struct rf_pktbuf *b[64];
	unsigned got = 0;
	for (size_t off = 0, piece = 1; off < len; off += piece, piece = piece % 7 + 1) {
		size_t k = off + piece > len ? len - off : piece;
		cr_assert_eq(write(fd, stream + off, k), (ssize_t)k);
		if (piece == 7)
			usleep(100); /* let some pieces arrive as separate segments */
		unsigned n = rf_io_rx_burst(srv, 0, b, 64);
		for (unsigned j = 0; j < n; j++, got++) {
			const unsigned char *p = rf_pktbuf_data(b[j]);
			cr_assert_eq(b[j]->data_len, got % 250, "message %u", got);
			for (unsigned q = 0; q < b[j]->data_len; q++)
				cr_assert_eq(p[q], (unsigned char)(got * 7 + q));
		}
		rf_pktbuf_free_bulk(b, n);
	}
	for (uint64_t end = now_ms() + 5000; got < N && now_ms() < end;) {
		unsigned n = rf_io_rx_burst(srv, 0, b, 64);
		for (unsigned j = 0; j < n; j++, got++) {
			const unsigned char *p = rf_pktbuf_data(b[j]);
			cr_assert_eq(b[j]->data_len, got % 250, "message %u", got);
			for (unsigned q = 0; q < b[j]->data_len; q++)
				cr_assert_eq(p[q], (unsigned char)(got * 7 + q));
		}
		rf_pktbuf_free_bulk(b, n);
	}
	cr_assert_eq(got, N);
	close(fd);
	rf_io_close(srv);
}

/* TCP backpressure: 20000 messages (2 MB) are sent while the server takes one message per
 * round, so far more arrives than its reassembly buffer and provided buffers hold; every message
 * still comes out, in order, intact, and nothing is counted as dropped. */
static void check_msg(struct rf_pktbuf *b, unsigned want, unsigned len)
{
	unsigned id;
	memcpy(&id, rf_pktbuf_data(b), sizeof(id));
	cr_assert_eq(id, want, "message %u out of order (got %u)", want, id);
	cr_assert_eq(b->data_len, len);
	cr_assert_eq(((const unsigned char *)rf_pktbuf_data(b))[len - 1], (unsigned char)(id & 0xff));
}

Test(uring, tcp_backpressure_keeps_the_stream, .init = setup, .fini = teardown)
{
	char spec[128], err[512];
	unsigned port = free_port_of(SOCK_STREAM);
	snprintf(spec, sizeof(spec), "uring:tcp:listen=127.0.0.1:%u", port);
	struct rf_io_dev *srv = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(srv, "%s", err);
	snprintf(spec, sizeof(spec), "uring:tcp:connect=127.0.0.1:%u", port);
	struct rf_io_dev *cli = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(cli, "%s", err);
	enum { N = 20000, L = 100 };
	struct rf_pktbuf *b[64];
	unsigned sent = 0, got = 0;
	uint64_t end = now_ms() + 20000;
	while ((sent < N || got < N) && now_ms() < end) {
		if (sent < N) {
			unsigned n = N - sent < 64 ? N - sent : 64;
			cr_assert_eq(rf_pktbuf_alloc_bulk(pool, b, n), 0);
			for (unsigned j = 0; j < n; j++) {
				unsigned id = sent + j;
				memset(rf_pktbuf_data(b[j]), (int)(id & 0xff), L);
				memcpy(rf_pktbuf_data(b[j]), &id, sizeof(id));
				b[j]->data_len = L;
			}
			unsigned s = rf_io_tx_burst(cli, 0, b, n);
			rf_pktbuf_free_bulk(b + s, n - s);
			sent += s;
		}
		/* Slow reader while the sender runs, then full bursts. */
		unsigned n = rf_io_rx_burst(srv, 0, b, sent < N ? 1 : 64);
		for (unsigned j = 0; j < n; j++, got++)
			check_msg(b[j], got, L);
		rf_pktbuf_free_bulk(b, n);
	}
	cr_assert_eq(sent, N);
	cr_assert_eq(got, N);
	struct rf_io_stats st = {0};
	rf_io_stats_get(srv, &st);
	cr_assert_eq(st.rx_drops, 0);
	cr_assert_eq(st.rx_pkts, N);
	rf_io_close(cli);
	rf_io_close(srv);
}
