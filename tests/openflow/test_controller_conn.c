/*
 * tests/openflow/test_controller_conn.c: ringflow-controller's switch connections end to end
 * on loopback with hand-written switches:
 *   - a header whose length lies (below 8) gets ERROR BAD_REQUEST/BAD_LEN naming its xid, then
 *     the connection is closed, and another switch is served all along;
 *   - ECHO_REQUESTs of 40000 and 65527 bytes (far over a handler buffer) come back whole;
 *   - with the I/O poller and the handler on two cores under --idle adaptive (they wake each
 *     other through rf_runtime_wake), every PACKET_IN is answered, in order, one at a time
 *     and pipelined; also through a handler ring smaller than a receive burst (the held
 *     queues and the receive pause);
 *   - PACKET_INs of 1500- and 9000-byte frames (the latter longer than a pool buffer: it
 *     comes in a jumbo buffer) are flooded back whole;
 *   - a switch that never reads its replies is closed, and the others are served meanwhile.
 * Checks content (types, xids, bytes), never timing; every wait has a deadline.
 */
#include "rf_test.h" /* concurrent: the controller runs under TSan in the TSan build */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "of.h"
#include "free_port.h"

static pid_t ofc_pid = -1;
static uint16_t of_port_no;
static char ofc_log[64]; /* the controller's stderr, for its summary lines */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void start_ring(const char *cores, const char *ring)
{
	of_port_no = free_port();
	char listen_at[32];
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u", of_port_no);
	snprintf(ofc_log, sizeof(ofc_log), "/tmp/rf-ctlconn-XXXXXX");
	int log_fd = mkstemp(ofc_log);
	cr_assert_geq(log_fd, 0);
	ofc_pid = fork();
	cr_assert_geq(ofc_pid, 0);
	if (ofc_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(log_fd, 2);
		const char *bin = getenv("RF_CTL_BIN") ? getenv("RF_CTL_BIN") : RF_CONTROLLER_BIN;
		execl(bin, bin, "--listen", listen_at, "--cores", cores, "--idle", "adaptive",
		      "--max-macs", "4096", "--ring", ring, (char *)NULL);
		_exit(127);
	}
	close(log_fd);
}

/* After stop: the count the controller's back-pressure summary line gives (-1: no line). */
static long long held_in_log(void)
{
	FILE *f = fopen(ofc_log, "r");
	char line[512];
	long long held = -1;
	while (f && fgets(line, sizeof(line), f)) {
		fputs(line, stderr); /* keep the controller's lines in the test's output */
		const char *p = strstr(line, "back-pressure: ");
		if (p)
			held = strtoll(p + strlen("back-pressure: "), NULL, 10);
	}
	if (f)
		fclose(f);
	return held;
}

static void start(const char *cores)
{
	start_ring(cores, "16384");
}

static long long last_held = -1; /* the last stopped controller's held count */

static void stop(void)
{
	kill(ofc_pid, SIGTERM);
	int st = 0;
	waitpid(ofc_pid, &st, 0);
	ofc_pid = -1;
	long long held = held_in_log();
	unlink(ofc_log);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "controller exit status %d", st);
	last_held = held;
}

static int connect_switch(void)
{
	for (int t = 0; t < 100; t++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(of_port_no),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(50000);
	}
	cr_assert_fail("the controller is not listening on %u", of_port_no);
	return -1;
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		cr_assert_gt(k, 0, "send to the controller: %s", strerror(errno));
		p += k;
		n -= (size_t)k;
	}
}

static void send_msg(int fd, struct of_msg *m)
{
	static uint8_t buf[70000];
	m->version = OF_VERSION_1_3;
	ssize_t n = of_serialize(m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	send_all(fd, buf, (size_t)n);
}

/* Reads one whole message into buf (cap >= 65535). Returns its length, or 0 on EOF. */
static size_t recv_msg(int fd, uint8_t *buf, double secs)
{
	size_t have = 0, want = 8;
	double end = now_s() + secs;
	while (have < want) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		cr_assert_lt(now_s(), end, "no whole message from the controller within %.0f s", secs);
		if (poll(&pf, 1, 100) <= 0)
			continue;
		ssize_t k = recv(fd, buf + have, want - have, 0);
		if (k == 0 || (k < 0 && errno == ECONNRESET))
			return 0;
		cr_assert_gt(k, 0, "recv: %s", strerror(errno));
		have += (size_t)k;
		if (have >= 8 && want == 8) {
			want = of_get16(buf + 2);
			cr_assert_geq(want, 8, "the controller sent a length below 8");
		}
	}
	return have;
}

/* Reads messages until one of type t (the others are dropped); returns it parsed. */
static void expect(int fd, enum of_type t, uint8_t *buf, struct of_msg *m)
{
	for (int i = 0; i < 10000; i++) {
		size_t n = recv_msg(fd, buf, 10);
		cr_assert_gt(n, 0, "the controller closed the connection waiting for type %d", t);
		struct of_fault f;
		cr_assert_eq(of_parse(buf, n, m, &f), 0, "the controller sent a malformed message");
		if (m->type == t)
			return;
	}
	cr_assert_fail("no message of type %d", t);
}

/* The switch side of the handshake, up to the controller's BARRIER (setup done). */
static int handshake(uint64_t dpid)
{
	static uint8_t buf[70000];
	int fd = connect_switch();
	struct of_msg m;
	expect(fd, OF_HELLO, buf, &m);
	uint8_t hello[64];
	ssize_t n = of_build_hello(hello, sizeof(hello), OF_VERSION_1_3, 1, 1u << OF_VERSION_1_3);
	send_all(fd, hello, (size_t)n);
	expect(fd, OF_FEATURES_REQUEST, buf, &m);
	struct of_msg r = {.type = OF_FEATURES_REPLY, .xid = m.xid};
	r.u.features.datapath_id = dpid;
	r.u.features.n_tables = 1;
	send_msg(fd, &r);
	expect(fd, OF_BARRIER_REQUEST, buf, &m);
	r = (struct of_msg){.type = OF_BARRIER_REPLY, .xid = m.xid};
	send_msg(fd, &r);
	return fd;
}

static void echo_round_trip(int fd, uint32_t xid, size_t len)
{
	static uint8_t data[65536], buf[70000];
	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7 + xid);
	struct of_msg m = {.type = OF_ECHO_REQUEST, .xid = xid};
	m.u.echo.data = data;
	m.u.echo.data_len = (uint16_t)len;
	send_msg(fd, &m);
	struct of_msg r;
	expect(fd, OF_ECHO_REPLY, buf, &r);
	cr_assert_eq(r.xid, xid);
	cr_assert_eq(r.u.echo.data_len, len, "echo of %zu bytes came back with %u", len, r.u.echo.data_len);
	cr_assert_eq(memcmp(r.u.echo.data, data, len), 0, "echo bytes differ");
}

Test(controller_conn, lying_length_gets_bad_len_then_close_others_served, .timeout = 60)
{
	start("0");
	int a = handshake(1), b = handshake(2);
	echo_round_trip(b, 10, 16);
	uint8_t lie[8] = {OF_VERSION_1_3, 2 /* ECHO_REQUEST */, 0, 4 /* length 4 < 8 */, 0, 0, 0, 9};
	send_all(a, lie, sizeof(lie));
	static uint8_t buf[70000];
	struct of_msg m;
	expect(a, OF_ERROR, buf, &m);
	cr_assert_eq(m.u.error.type, 1, "OFPET_BAD_REQUEST");
	cr_assert_eq(m.u.error.code, 6, "OFPBRC_BAD_LEN");
	cr_assert_eq(m.xid, 9, "the error names the bad message's xid");
	size_t n;
	while ((n = recv_msg(a, buf, 10)) > 0)
		; /* anything still in flight, then the close */
	echo_round_trip(b, 11, 16);
	close(a);
	close(b);
	stop();
}

Test(controller_conn, echo_longer_than_a_pool_buffer_comes_back_whole, .timeout = 60)
{
	start("0");
	int a = handshake(1);
	echo_round_trip(a, 1, 40000);
	echo_round_trip(a, 2, 65535 - 8);
	echo_round_trip(a, 3, 0);
	close(a);
	stop();
}

/* A PACKET_IN of a 60-byte frame from host src to host dst, buffered as buffer_id. */
static void send_packet_in(int fd, uint32_t xid, uint32_t buffer_id, uint32_t in_port,
			   const uint8_t *frame, size_t len)
{
	struct of_msg m = {.type = OF_PACKET_IN, .xid = xid};
	m.u.packet_in.buffer_id = buffer_id;
	m.u.packet_in.total_len = (uint16_t)len;
	m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m.u.packet_in.match.in_port = in_port;
	m.u.packet_in.data = frame;
	m.u.packet_in.data_len = (uint16_t)len;
	send_msg(fd, &m);
}

static void packet_in(int fd, uint32_t buffer_id, uint8_t src, uint8_t dst, uint32_t in_port)
{
	uint8_t f[60] = {2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x08, 0x00};
	send_packet_in(fd, buffer_id, buffer_id, in_port, f, sizeof(f));
}

/* The answer to PACKET_IN buffer_id: a PACKET_OUT or a FLOW_MOD naming the buffer. */
static uint32_t answer(int fd, uint8_t *buf)
{
	for (;;) {
		size_t n = recv_msg(fd, buf, 10);
		cr_assert_gt(n, 0, "the controller closed the switch");
		struct of_msg m;
		struct of_fault f;
		cr_assert_eq(of_parse(buf, n, &m, &f), 0);
		if (m.type == OF_PACKET_OUT)
			return m.u.packet_out.buffer_id;
		if (m.type == OF_FLOW_MOD && m.u.flow_mod.command == OFPFC_ADD)
			return m.u.flow_mod.buffer_id;
	}
}

static void answered_in_order(void)
{
	int a = handshake(7);
	static uint8_t buf[70000];
	/* One at a time: each answer must come with the pollers idle in between. */
	for (uint32_t i = 1; i <= 300; i++) {
		packet_in(a, i, (uint8_t)(i % 4), (uint8_t)((i + 1) % 4), 1 + i % 4);
		cr_assert_eq(answer(a, buf), i, "PACKET_IN %u answered out of turn", i);
	}
	/* Pipelined: 3000 sent before reading; the answers keep the switch's order. Corked, so
	 * they leave in full segments and the controller's reads find hundreds at once (what
	 * fills a small handler ring), however the scheduler interleaves the two processes. */
	int on = 1, off = 0;
	cr_assert_eq(setsockopt(a, IPPROTO_TCP, TCP_CORK, &on, sizeof(on)), 0);
	for (uint32_t i = 1000; i < 4000; i++)
		packet_in(a, i, (uint8_t)(i % 8), (uint8_t)((i + 3) % 8), 1 + i % 8);
	cr_assert_eq(setsockopt(a, IPPROTO_TCP, TCP_CORK, &off, sizeof(off)), 0);
	for (uint32_t i = 1000; i < 4000; i++)
		cr_assert_eq(answer(a, buf), i, "pipelined PACKET_IN %u answered out of order", i);
	close(a);
	stop();
}

Test(controller_conn, packet_ins_answered_in_order_across_two_cores_adaptive, .timeout = 120)
{
	start("0,1");
	answered_in_order();
}

/* A handler ring of 16 slots is fuller than one receive burst (32): PACKET_INs wait in the
 * I/O poller's held queue and receiving pauses, yet none is lost or reordered. */
Test(controller_conn, packet_ins_in_order_through_a_tiny_handler_ring, .timeout = 120)
{
	start_ring("0", "16");
	answered_in_order();
	cr_assert_gt(last_held, 0, "the held queue was not used (held %lld)", last_held);
}

Test(controller_conn, packet_ins_in_order_through_a_tiny_handler_ring_two_cores, .timeout = 120)
{
	start_ring("0,1", "16");
	answered_in_order();
	cr_assert_geq(last_held, 0, "no back-pressure summary from the controller");
}

/* A PACKET_IN carrying a whole unbuffered frame of len bytes from a new host: the answer is a
 * flooding PACKET_OUT with the same bytes. */
static void big_frame_round_trip(int fd, uint32_t xid, size_t len)
{
	static uint8_t f[9100], buf[70000];
	for (size_t i = 0; i < len; i++)
		f[i] = (uint8_t)(i * 13 + xid);
	memcpy(f, (uint8_t[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0x11, (uint8_t)xid,
			      0x08, 0x00}, 14);
	send_packet_in(fd, xid, OFP_NO_BUFFER, 1, f, len);
	struct of_msg r;
	expect(fd, OF_PACKET_OUT, buf, &r);
	cr_assert_eq(r.xid, xid);
	cr_assert_eq(r.u.packet_out.data_len, len, "PACKET_OUT of %zu bytes carried %u", len,
		     r.u.packet_out.data_len);
	cr_assert_eq(memcmp(r.u.packet_out.data, f, len), 0, "the frame's bytes differ");
}

Test(controller_conn, packet_ins_of_big_frames_are_flooded_back_whole, .timeout = 60)
{
	start("0");
	int a = handshake(3);
	big_frame_round_trip(a, 1, 1514);
	big_frame_round_trip(a, 2, 9000);
	big_frame_round_trip(a, 3, 64);
	close(a);
	stop();
}

Test(controller_conn, switch_that_never_reads_is_closed_others_served, .timeout = 120)
{
	start("0");
	int a = handshake(1), b = handshake(2);
	static uint8_t data[60000], msg[60100];
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_ECHO_REQUEST};
	m.u.echo.data = data;
	m.u.echo.data_len = sizeof(data);
	ssize_t n = of_serialize(&m, msg, sizeof(msg));
	cr_assert_gt(n, 0);
	/* a sends 60 MB of echo requests and reads nothing: the replies have nowhere to go. */
	size_t sent = 0;
	bool refused = false;
	for (int i = 0; i < 1000 && !refused; i++) {
		size_t off = 0;
		double end = now_s() + 2;
		while (off < (size_t)n && now_s() < end) {
			ssize_t k = send(a, msg + off, (size_t)n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (k > 0) {
				off += (size_t)k;
			} else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				usleep(1000);
			} else {
				refused = true; /* reset: the controller is done with us */
				break;
			}
		}
		if (off < (size_t)n)
			break; /* the controller stopped reading us, or closed */
		sent++;
		if (i % 50 == 0)
			echo_round_trip(b, (uint32_t)i, 100); /* b is served meanwhile */
	}
	cr_assert_gt(sent, 10);
	/* Now a reads: whatever was flushed, then the close (EOF or reset), within bounds. */
	static uint8_t buf[70000];
	size_t got = 0;
	double end = now_s() + 30;
	while (now_s() < end && recv_msg(a, buf, 30) > 0)
		got++;
	cr_assert_lt(got, sent, "every echo was answered: the controller buffered %zu replies "
		     "for a switch that does not read", got);
	echo_round_trip(b, 99999, 100);
	close(a);
	close(b);
	stop();
}
