/*
 * tests/io/test_tcp_stream.c: the stream features that a protocol server (the OpenFlow
 * controller) needs, checked as one table on both TCP paths, `tcp` (epoll + send/recv) and
 * `uring:tcp` (io_uring), which share io/stream.c: prefix16 and inline16 framing (the length
 * inside the header), connection events, bad frames, closing from the app (close, abort), and
 * the jumbo pool for long messages. Every check runs on every row of stream_drivers[]; a row
 * whose driver is absent here (built without liburing, io_uring disabled) says so and is
 * skipped. One thread drives both the device and plain kernel client sockets on loopback;
 * every wait is bounded (a few seconds), so a driver bug fails a test instead of hanging it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#define Q RF_MEMPOOL_QUIET
#define HDR 8 /* the test protocol: OpenFlow's header shape, length at offset 2 */
#define INLINE ",framing=inline16,frame_off=2,frame_min=8"

/* The table: the driver part of the spec, and the registry name that must be present. */
static const struct {
	const char *prefix, *driver;
} stream_drivers[] = {{"tcp", "tcp"}, {"uring:tcp", "uring"}};
static const char *drv = "tcp"; /* the row being run */

static struct rf_pktbuf_pool *pool, *jumbo;
static struct rf_io_dev *dev;
static unsigned port;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Opens "<drv>:listen=127.0.0.1:<free port>" + extra on a pool of 2 KiB buffers. */
static void open_dev(const char *extra)
{
	pool = rf_pktbuf_pool_create("tcpstream", 512, 2048, 0, Q);
	cr_assert_not_null(pool);
	char err[256], spec[256];
	for (int tries = 0; tries < 20 && !dev; tries++) {
		port = 20000 + (unsigned)((getpid() * 7 + tries * 131 + time(NULL)) % 40000);
		snprintf(spec, sizeof(spec), "%s:listen=127.0.0.1:%u%s", drv, port, extra);
		dev = rf_io_open(spec, pool, err, sizeof(err));
	}
	cr_assert_not_null(dev, "%s: %s", drv, err);
}

static void teardown(void)
{
	rf_io_close(dev);
	dev = NULL;
	rf_pktbuf_pool_free(pool);
	rf_pktbuf_pool_free(jumbo);
	pool = jumbo = NULL;
}

static int client(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "connect: %s", strerror(errno));
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
		cr_assert_gt(k, 0, "send: %s", strerror(errno));
		b += k;
		n -= (size_t)k;
	}
}

/* n bytes from fd within 5 s; returns what arrived (less on EOF/timeout). */
static size_t recv_n(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;
	double end = now_s() + 5;
	while (got < n && now_s() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t k = recv(fd, buf + got, n - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

/* True when fd reaches EOF (or a reset) within 5 s, after discarding what was still queued.
 * Meanwhile the device is kept going with empty tx bursts, as a poller would (an io_uring
 * driver learns that its last send completed only when called; rx is left alone). */
static bool sees_close(int fd)
{
	uint8_t b[4096];
	double end = now_s() + 5;
	while (now_s() < end) {
		if (dev)
			rf_io_tx_burst(dev, 0, NULL, 0);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		if (recv(fd, b, sizeof(b), 0) <= 0)
			return true;
	}
	return false;
}

/* Receives from the device until `want` buffers have come (or 5 s): returns how many. */
static unsigned rx_until(struct rf_pktbuf **pkts, unsigned want)
{
	unsigned got = 0;
	double end = now_s() + 5;
	while (got < want && now_s() < end) {
		got += rf_io_rx_burst(dev, 0, pkts + got, want - got);
		if (got < want)
			rf_io_wait(dev, 0, 10);
	}
	return got;
}

/* A frame of the test protocol: len bytes, header {1, type, len16, seq32}, then a pattern. */
static size_t frame(uint8_t *p, uint16_t len, uint32_t seq)
{
	p[0] = 1;
	p[1] = 2;
	p[2] = (uint8_t)(len >> 8);
	p[3] = (uint8_t)len;
	for (int i = 0; i < 4; i++)
		p[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
	for (unsigned i = HDR; i < len; i++)
		p[i] = (uint8_t)(seq * 31 + i);
	return len;
}

static uint32_t len_of(const struct rf_pktbuf *b)
{
	const uint8_t *p = rf_pktbuf_data(b);
	return ((uint32_t)p[2] << 8) | p[3];
}

static uint32_t seq_of(const uint8_t *p)
{
	return ((uint32_t)p[4] << 24) | ((uint32_t)p[5] << 16) | ((uint32_t)p[6] << 8) | p[7];
}


static void inline16_whole_frames_in_order_across_any_split_and_echoed_unchanged(void)
{
	open_dev(INLINE);
	int fd = client();
	/* 300 frames of 8..1200 bytes, written in pieces that cut headers and bodies anywhere. */
	static uint8_t out[400000], back[400000];
	size_t total = 0;
	uint16_t lens[300];
	for (uint32_t i = 0; i < 300; i++) {
		lens[i] = (uint16_t)(HDR + (i * 397) % 1193);
		total += frame(out + total, lens[i], i);
	}
	size_t off = 0;
	for (unsigned piece = 1; off < total; piece = piece % 13 + 1) {
		size_t k = piece < total - off ? piece : total - off;
		send_all(fd, out + off, k);
		off += k;
		if (piece == 13) { /* let the driver see partial frames */
			struct rf_pktbuf *tmp[32];
			unsigned n = rf_io_rx_burst(dev, 0, tmp, 32);
			unsigned k2 = rf_io_tx_burst(dev, 0, tmp, n);
			cr_assert_eq(k2, n);
		}
	}
	static struct rf_pktbuf *pkts[300];
	double end = now_s() + 5;
	size_t rcvd = 0;
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (rcvd < total && now_s() < end) {
		unsigned n = rf_io_rx_burst(dev, 0, pkts, 32);
		for (unsigned i = 0; i < n; i++) {
			cr_assert_eq(pkts[i]->flags, 0);
			cr_assert_eq(pkts[i]->data_len, len_of(pkts[i]), "a whole frame, header included");
		}
		cr_assert_eq(rf_io_tx_burst(dev, 0, pkts, n), n);
		ssize_t k = recv(fd, back + rcvd, sizeof(back) - rcvd, 0);
		if (k > 0)
			rcvd += (size_t)k;
		else
			rf_io_wait(dev, 0, 1);
	}
	cr_assert_eq(rcvd, total, "echoed %zu of %zu bytes", rcvd, total);
	cr_assert_eq(memcmp(out, back, total), 0, "the stream came back unchanged, in order");
	off = 0;
	for (uint32_t i = 0; i < 300; i++) {
		cr_assert_eq(seq_of(back + off), i);
		off += lens[i];
	}
	struct rf_io_stats st = {0};
	rf_io_stats_get(dev, &st);
	cr_assert_eq(st.rx_pkts, 300);
	cr_assert_eq(st.tx_pkts, 300);
	cr_assert_eq(st.rx_drops, 0);
	close(fd);
}

/* The client socket's port (network order), as the driver sees it as the peer. */
static uint16_t port_of(int fd)
{
	struct sockaddr_in me;
	socklen_t sl = sizeof(me);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&me, &sl), 0);
	return me.sin_port;
}

/* The flow of the CONN_UP among p[0..n) whose peer port is `peer` (0: none). */
static uint64_t flow_of(struct rf_pktbuf **p, unsigned n, uint16_t peer)
{
	for (unsigned i = 0; i < n; i++)
		if ((p[i]->flags & RF_PKTBUF_F_CONN_UP) && p[i]->peer.in.sin_port == peer)
			return p[i]->flow;
	return 0;
}

/* A zero-length buffer with flags, on flow. */
static struct rf_pktbuf *control(uint64_t flow, uint16_t flags)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(pool);
	cr_assert_not_null(b);
	b->flow = flow;
	b->flags = flags;
	return b;
}

static void events_up_before_messages_down_after_the_last_one(void)
{
	open_dev(INLINE ",events=1");
	int a = client(), b = client();
	uint16_t pa = port_of(a), pb = port_of(b);
	uint8_t f[64];
	send_all(a, f, frame(f, 20, 1));
	send_all(b, f, frame(f, 30, 2));
	send_all(a, f, frame(f, 40, 3));
	close(a); /* a's last message is already sent */
	struct rf_pktbuf *p[8];
	unsigned n = rx_until(p, 6);
	cr_assert_eq(n, 6, "2 UP + 3 messages + a's DOWN, got %u", n);
	uint64_t fa = flow_of(p, n, pa), fb = flow_of(p, n, pb);
	cr_assert(fa && fb && fa != fb, "an UP for each connection");
	unsigned seen_a = 0, seen_b = 0, up_a = 0, up_b = 0, down_a = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t fl = p[i]->flow;
		cr_assert(fl == fa || fl == fb);
		if (p[i]->flags & RF_PKTBUF_F_CONN_UP) {
			cr_assert_eq(p[i]->data_len, 0);
			up_a += fl == fa;
			up_b += fl == fb;
		} else if (p[i]->flags & RF_PKTBUF_F_CONN_DOWN) {
			cr_assert_eq(fl, fa, "only a has closed");
			cr_assert_eq(seen_a, 2, "DOWN only after the connection's last message");
			down_a++;
		} else {
			cr_assert_eq(p[i]->flags, 0);
			cr_assert_eq(fl == fa ? up_a : up_b, 1, "a message before its connection's UP");
			if (fl == fa)
				cr_assert_eq(seq_of(rf_pktbuf_data(p[i])), seen_a++ ? 3 : 1, "a's order");
			else
				seen_b++;
		}
	}
	cr_assert(seen_a == 2 && seen_b == 1 && down_a == 1);
	rf_pktbuf_free_bulk(p, n);
	struct rf_pktbuf *r = rf_pktbuf_alloc(pool);
	r->flow = fb;
	r->data_len = (uint32_t)frame(rf_pktbuf_data(r), 16, 77);
	cr_assert_eq(rf_io_tx_burst(dev, 0, &r, 1), 1);
	uint8_t back[16];
	cr_assert_eq(recv_n(b, back, 16), 16);
	cr_assert_eq(seq_of(back), 77);
	close(b);
	n = rx_until(p, 1);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0]->flags, RF_PKTBUF_F_CONN_DOWN);
	cr_assert_eq(p[0]->flow, fb);
	rf_pktbuf_free(p[0]);
	struct rf_io_stats st = {0};
	rf_io_stats_get(dev, &st);
	cr_assert_eq(st.rx_pkts, 3, "events are not counted as messages");
	cr_assert_eq(st.conns_open, 0);
}

static void bad_length_hands_over_the_header_then_answer_then_close(void)
{
	open_dev(INLINE ",events=1");
	int a = client();
	uint8_t f[64];
	send_all(a, f, frame(f, 12, 5));
	uint8_t lie[24] = {1, 2, 0, 4 /* length 4 < frame_min 8 */, 0, 0, 0, 9};
	frame(lie + 8, 16, 6); /* a well-formed frame after the lie: never delivered */
	send_all(a, lie, sizeof(lie));
	struct rf_pktbuf *p[8];
	unsigned n = rx_until(p, 3);
	cr_assert_eq(n, 3, "UP, the good frame, the bad frame's header");
	cr_assert_eq(p[0]->flags, RF_PKTBUF_F_CONN_UP);
	cr_assert_eq(p[1]->flags, 0);
	cr_assert_eq(p[1]->data_len, 12);
	cr_assert_eq(p[2]->flags, RF_PKTBUF_F_BAD_FRAME);
	cr_assert_eq(p[2]->data_len, 8, "frame_min bytes of the bad frame");
	cr_assert_eq(memcmp(rf_pktbuf_data(p[2]), lie, 8), 0);
	uint64_t flow = p[0]->flow;
	/* The app answers the bad frame; the answer goes out, then the connection closes. */
	struct rf_pktbuf *err = p[2];
	err->data_len = (uint32_t)frame(rf_pktbuf_data(err), 12, 99);
	rf_pktbuf_free_bulk(p, 2);
	cr_assert_eq(rf_io_tx_burst(dev, 0, &err, 1), 1);
	n = rx_until(p, 1);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0]->flags, RF_PKTBUF_F_CONN_DOWN, "no message after the bad frame");
	cr_assert_eq(p[0]->flow, flow);
	rf_pktbuf_free(p[0]);
	uint8_t back[12];
	cr_assert_eq(recv_n(a, back, 12), 12, "the answer was sent before the close");
	cr_assert_eq(seq_of(back), 99);
	cr_assert(sees_close(a));
	close(a);
}

static void close_after_data_and_abort_from_the_app(void)
{
	open_dev(INLINE ",events=1");
	int a = client(), b = client();
	struct rf_pktbuf *p[8];
	cr_assert_eq(rx_until(p, 2), 2);
	uint64_t fa = flow_of(p, 2, port_of(a)), fb = flow_of(p, 2, port_of(b));
	cr_assert(fa && fb && fa != fb);
	rf_pktbuf_free_bulk(p, 2);
	/* a: a last frame with F_CLOSE: it arrives, then EOF. */
	struct rf_pktbuf *last = rf_pktbuf_alloc(pool);
	last->flow = fa;
	last->flags = RF_PKTBUF_F_CLOSE;
	last->data_len = (uint32_t)frame(rf_pktbuf_data(last), 100, 42);
	/* b: aborted; a zero-length buffer is always taken. */
	struct rf_pktbuf *tx[2] = {last, control(fb, RF_PKTBUF_F_ABORT)};
	cr_assert_eq(rf_io_tx_burst(dev, 0, tx, 2), 2);
	uint8_t back[100];
	cr_assert_eq(recv_n(a, back, 100), 100);
	cr_assert_eq(seq_of(back), 42);
	cr_assert(sees_close(a), "F_CLOSE closes after the data");
	cr_assert(sees_close(b), "F_ABORT closes");
	unsigned n = rx_until(p, 2);
	cr_assert_eq(n, 2, "a DOWN for each");
	cr_assert(p[0]->flags == RF_PKTBUF_F_CONN_DOWN && p[1]->flags == RF_PKTBUF_F_CONN_DOWN);
	cr_assert(p[0]->flow != p[1]->flow && (p[0]->flow == fa || p[0]->flow == fb) &&
		  (p[1]->flow == fa || p[1]->flow == fb));
	rf_pktbuf_free_bulk(p, n);
	/* Sending on a closed flow is consumed and counted as a drop, never a crash. */
	struct rf_pktbuf *stale = control(fa, 0);
	stale->data_len = (uint32_t)frame(rf_pktbuf_data(stale), 8, 1);
	cr_assert_eq(rf_io_tx_burst(dev, 0, &stale, 1), 1);
	struct rf_io_stats st = {0};
	rf_io_stats_get(dev, &st);
	cr_assert_geq(st.tx_drops, 1);
	cr_assert_eq(st.conns_open, 0);
	close(a);
	close(b);
}

/* A long frame: with a jumbo pool it arrives whole; without one it is dropped, counted, and
 * the frames after it still arrive. */
static void long_frame(bool with_jumbo)
{
	open_dev(INLINE);
	if (with_jumbo) {
		jumbo = rf_pktbuf_pool_create("tcpjumbo", 4, 65536, 0, Q);
		cr_assert_not_null(jumbo);
		rf_io_set_jumbo_pool(dev, jumbo);
	}
	int a = client();
	static uint8_t f[65535];
	send_all(a, f, frame(f, 65535, 1));
	send_all(a, f, frame(f, 100, 2));
	struct rf_pktbuf *p[2];
	unsigned n = rx_until(p, with_jumbo ? 2 : 1);
	if (with_jumbo) {
		cr_assert_eq(n, 2);
		cr_assert_eq(p[0]->data_len, 65535);
		cr_assert_eq(p[0]->pool, jumbo, "the long one came from the jumbo pool");
		frame(f, 65535, 1);
		cr_assert_eq(memcmp(rf_pktbuf_data(p[0]), f, 65535), 0);
		cr_assert_eq(p[1]->pool, pool);
		/* and it goes back out whole */
		cr_assert_eq(rf_io_tx_burst(dev, 0, p, 1), 1);
		static uint8_t back[65535];
		cr_assert_eq(recv_n(a, back, 65535), 65535);
		cr_assert_eq(memcmp(back, f, 65535), 0);
		rf_pktbuf_free(p[1]);
	} else {
		cr_assert_eq(n, 1);
		cr_assert_eq(seq_of(rf_pktbuf_data(p[0])), 2, "the stream goes on after the drop");
		rf_pktbuf_free(p[0]);
		struct rf_io_stats st = {0};
		rf_io_stats_get(dev, &st);
		cr_assert_eq(st.rx_drops, 1);
	}
	close(a);
}

static void long_frame_comes_whole_from_the_jumbo_pool(void)
{
	long_frame(true);
}

static void long_frame_without_jumbo_pool_is_dropped_and_counted(void)
{
	long_frame(false);
}

static void bad_framing_keys_rejected_with_one_line(void)
{
	pool = rf_pktbuf_pool_create("tcpstream", 8, 2048, 0, Q);
	char err[256];
	static const char *bad[] = {
		"listen=127.0.0.1:0,framing=varint",
		"listen=127.0.0.1:0,frame_off=2",
		"listen=127.0.0.1:0,framing=inline16,frame_off=65",
		"listen=127.0.0.1:0,framing=inline16,frame_off=2,frame_min=3",
		"listen=127.0.0.1:0,events=maybe",
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char spec[128];
		snprintf(spec, sizeof(spec), "%s:%s", drv, bad[i]);
		err[0] = 0;
		cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "%s opened", spec);
		cr_assert_gt(strlen(err), 10, "%s: no reason given", spec);
		cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	}
}

/* prefix16 (the default): messages of 0..1500 bytes, written in pieces that cut the length
 * prefix and the bodies anywhere, come whole and in order, and go back out framed the same. */
static void prefix16_messages_across_any_split_echoed_unchanged(void)
{
	open_dev("");
	int fd = client();
	static uint8_t out[200000], back[200000];
	size_t total = 0;
	for (uint32_t i = 0; i < 200; i++) {
		uint16_t l = (uint16_t)((i * 211) % 1501); /* i == 0: an empty message */
		out[total] = (uint8_t)(l >> 8);
		out[total + 1] = (uint8_t)l;
		for (unsigned k = 0; k < l; k++)
			out[total + 2 + k] = (uint8_t)(i * 7 + k);
		total += 2u + l;
	}
	for (size_t off = 0, piece = 1; off < total; piece = piece % 7 + 1) {
		size_t k = piece < total - off ? piece : total - off;
		send_all(fd, out + off, k);
		off += k;
	}
	static struct rf_pktbuf *pkts[32];
	double end = now_s() + 5;
	size_t rcvd = 0;
	unsigned msgs = 0;
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (rcvd < total && now_s() < end) {
		unsigned n = rf_io_rx_burst(dev, 0, pkts, 32);
		for (unsigned i = 0; i < n; i++, msgs++)
			cr_assert_eq(pkts[i]->data_len, (msgs * 211) % 1501, "%s: message %u", drv, msgs);
		cr_assert_eq(rf_io_tx_burst(dev, 0, pkts, n), n);
		ssize_t k = recv(fd, back + rcvd, sizeof(back) - rcvd, 0);
		if (k > 0)
			rcvd += (size_t)k;
		else
			rf_io_wait(dev, 0, 1);
	}
	cr_assert_eq(msgs, 200, "%s: %u messages", drv, msgs);
	cr_assert_eq(rcvd, total, "%s: echoed %zu of %zu bytes", drv, rcvd, total);
	cr_assert_eq(memcmp(out, back, total), 0, "%s: the stream came back unchanged", drv);
	close(fd);
}

/* Each check, on every row of the table. */
static void on_every_driver(const char *name, void (*check)(void))
{
	for (unsigned i = 0; i < sizeof(stream_drivers) / sizeof(stream_drivers[0]); i++) {
		drv = stream_drivers[i].prefix;
		if (!rf_io_find(stream_drivers[i].driver)) {
			char all[512];
			rf_io_describe(all, sizeof(all));
			/* (not cr_log_warn: Criterion 2.4 then exits 1 although every test passed) */
			fprintf(stderr, "tcp_stream: %s: row %s skipped: %s\n", name, drv, all);
			continue;
		}
		fprintf(stderr, "tcp_stream: %s on %s\n", name, drv);
		check();
		teardown();
	}
}

#define STREAM_TEST(name) \
	Test(tcp_stream, name) { on_every_driver(#name, name); }

STREAM_TEST(inline16_whole_frames_in_order_across_any_split_and_echoed_unchanged)
STREAM_TEST(events_up_before_messages_down_after_the_last_one)
STREAM_TEST(bad_length_hands_over_the_header_then_answer_then_close)
STREAM_TEST(close_after_data_and_abort_from_the_app)
STREAM_TEST(long_frame_comes_whole_from_the_jumbo_pool)
STREAM_TEST(long_frame_without_jumbo_pool_is_dropped_and_counted)
STREAM_TEST(bad_framing_keys_rejected_with_one_line)
STREAM_TEST(prefix16_messages_across_any_split_echoed_unchanged)
