/*
 * tests/ofswitch/test_sw_agent_out.c: ringflow-switch's agent never waits for a controller
 * (sw_out.h). The test runs in a network namespace of its own (unshare: the switch's port
 * is a veth pair's end there, its controllers are the test's sockets on 127.0.0.1, and the
 * namespace and the pair go with the test's processes); it skips without root.
 *   - Controller A never reads while the test floods it with 16 KiB ECHO_REQUESTs;
 *     controller B's ECHO and BARRIER must still be answered within 5 s each, all through
 *     the flood (the echo interval is 8 s: an agent blocked on A's socket for it misses
 *     that). The switch stops reading A once SW_OUT_MAX waits for it, and closes A when its
 *     output has not moved for an echo interval (A's writes fail, and the switch connects to
 *     A's port again); the exit line counts exactly one `closed unread`, its log names the
 *     reason, and the switch exits 0.
 *   - A controller that starts reading only a second after sending 12 MiB more requests than
 *     the kernel's buffers hold (so the switch stops reading it for a while: back-pressure)
 *     gets every reply, whole and in order (ECHOs and BARRIERs by xid), and is not closed.
 *   - A FLOW dump of 80 000 flows (10 MB, past every kernel buffer) to a controller that
 *     reads nothing for a second is made part by part: the switch never queues more than
 *     SW_DUMP_LOW and a part, a second controller deleting flows mid-dump is answered at
 *     once, the dump reports every flow that stayed exactly once and none twice, and the
 *     BARRIER sent behind the request is answered after the last part.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "of_wire.h" /* of_set16/32, of_get64: big-endian fields */

#define PAYLOAD 16384 /* an ECHO_REQUEST's data: its reply is as big */
#define T_ECHO_REQ 2
#define T_ECHO_REP 3
#define T_BARRIER_REQ 20
#define T_BARRIER_REP 21

static pid_t sw_pid = -1;
static char sw_log[64];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A namespace of our own with lo up, or the test skips (not root). */
static void own_netns(void)
{
	if (unshare(CLONE_NEWNET) != 0)
		cr_skip_test("unshare(CLONE_NEWNET): %s: needs root", strerror(errno));
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr = {0};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	cr_assert_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	cr_assert_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0, "lo up: %s", strerror(errno));
	close(fd);
	/* the switch's port: one end of a veth pair in this namespace (lo carries no Ethernet) */
	if (system("ip link add swo0 type veth peer name swo1 && ip link set swo0 up && "
		   "ip link set swo1 up") != 0)
		cr_skip_test("no veth pair in the test's namespace (ip link add ... type veth)");
}

/* A listening socket on 127.0.0.1 (a port of its own); rcvbuf > 0 fixes the accepted
 * sockets' receive buffer (no autotuning: the kernel holds little of what we do not read). */
static int listener(int rcvbuf, uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	cr_assert_eq(listen(fd, 4), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* The switch on lo with one --controller per port. */
static void sw_start(const uint16_t *ports, unsigned n)
{
	char ctl[4][40];
	const char *argv[16] = {RF_SWITCH_BIN, "--port", "packet:dev=swo0,frames=1", "--cores", "0",
				"--echo-interval", "8"};
	unsigned k = 7;
	for (unsigned i = 0; i < n; i++) {
		snprintf(ctl[i], sizeof(ctl[i]), "tcp:127.0.0.1:%u", ports[i]);
		argv[k++] = "--controller";
		argv[k++] = ctl[i];
	}
	snprintf(sw_log, sizeof(sw_log), "/tmp/rf-swout-XXXXXX");
	int log_fd = mkstemp(sw_log);
	cr_assert_geq(log_fd, 0);
	sw_pid = fork();
	cr_assert_geq(sw_pid, 0);
	if (sw_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(log_fd, 1);
		dup2(log_fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(log_fd);
}

/* Stops the switch; its log (malloc'd, also copied to our stderr); *status its exit. */
static char *sw_stop(int *status)
{
	kill(sw_pid, SIGTERM);
	waitpid(sw_pid, status, 0);
	sw_pid = -1;
	FILE *f = fopen(sw_log, "r");
	char *text = calloc(1, 1 << 20);
	size_t n = f ? fread(text, 1, (1 << 20) - 1, f) : 0;
	text[n] = '\0';
	if (f)
		fclose(f);
	fputs(text, stderr);
	unlink(sw_log);
	return text;
}

static void sw_kill(void)
{
	if (sw_pid > 0) {
		kill(sw_pid, SIGKILL);
		waitpid(sw_pid, NULL, 0);
		unlink(sw_log);
	}
}

/* The switch's connection on listener l, within 10 s (-1: none). */
static int accept_within(int l, int ms)
{
	struct pollfd p = {.fd = l, .events = POLLIN};
	if (poll(&p, 1, ms) != 1)
		return -1;
	return accept4(l, NULL, NULL, SOCK_CLOEXEC);
}

static void put_hdr(uint8_t *b, uint8_t type, uint16_t len, uint32_t xid)
{
	b[0] = 4; /* OpenFlow 1.3 */
	b[1] = type;
	b[2] = (uint8_t)(len >> 8);
	b[3] = (uint8_t)len;
	b[4] = (uint8_t)(xid >> 24);
	b[5] = (uint8_t)(xid >> 16);
	b[6] = (uint8_t)(xid >> 8);
	b[7] = (uint8_t)xid;
}

/* All of b[0, n) on a blocking socket. */
static void put_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		cr_assert_gt(w, 0, "send: %s", strerror(errno));
		b += w;
		n -= (size_t)w;
	}
}

/* Exactly n bytes by deadline (false: not in time, or closed). */
static bool get_all(int fd, uint8_t *b, size_t n, double deadline)
{
	while (n) {
		int ms = (int)((deadline - now_s()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (ms <= 0 || poll(&p, 1, ms) != 1)
			return false;
		ssize_t r = recv(fd, b, n, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return false;
		if (r > 0) {
			b += r;
			n -= (size_t)r;
		}
	}
	return true;
}

/* The next message whole: header in h, body in body (64 KiB); false: none by deadline. */
static bool get_msg_body(int fd, uint8_t h[8], uint8_t *body, double deadline)
{
	if (!get_all(fd, h, 8, deadline))
		return false;
	size_t len = (size_t)h[2] << 8 | h[3];
	cr_assert_geq(len, 8);
	return get_all(fd, body, len - 8, deadline);
}

/* The next message (header in h, its body read and dropped); false: none by deadline. */
static bool get_msg(int fd, uint8_t h[8], double deadline)
{
	static uint8_t body[65536];
	return get_msg_body(fd, h, body, deadline);
}

static uint32_t xid_of(const uint8_t h[8])
{
	return (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
}

/* Sends a request of type `type` with xid on fd and waits up to 5 s for its reply (other
 * messages, the switch's HELLO, are skipped); the seconds it took, or -1. */
static double ask(int fd, uint8_t type, uint8_t reply, uint32_t xid)
{
	uint8_t h[8];
	put_hdr(h, type, 8, xid);
	double t0 = now_s();
	put_all(fd, h, 8);
	while (get_msg(fd, h, t0 + 5))
		if (h[1] == reply && xid_of(h) == xid)
			return now_s() - t0;
	return -1;
}

static void hello(int fd)
{
	uint8_t h[8];
	put_hdr(h, 0, 8, 1);
	put_all(fd, h, 8);
}

/* The switch with controllers A (a 64 KiB receive buffer) and B on listeners of their own
 * ports, both sessions up: *la A's listener, *a and *b the two connections. */
static void two_controllers(uint16_t port[2], int *la, int *a, int *b)
{
	int lb;
	*la = listener(65536, &port[0]);
	lb = listener(0, &port[1]);
	sw_start(port, 2);
	*a = accept_within(*la, 10000);
	*b = accept_within(lb, 10000);
	cr_assert(*a >= 0 && *b >= 0, "the switch connected to both controllers");
	hello(*a);
	hello(*b);
	cr_assert_geq(ask(*b, T_BARRIER_REQ, T_BARRIER_REP, 2), 0, "B's session is up");
}

Test(sw_agent_out, a_controller_that_never_reads_stalls_no_other, .fini = sw_kill, .timeout = 180)
{
	own_netns();
	uint16_t port[2];
	int la, a, b;
	two_controllers(port, &la, &a, &b);
	fcntl(a, F_SETFL, fcntl(a, F_GETFL) | O_NONBLOCK);

	/* Flood A, never reading it; B asks after every MiB sent to A and every 100 ms. A's end:
	 * closed by the switch (its writes fail), or 60 s. */
	static uint8_t req[8 + PAYLOAD];
	put_hdr(req, T_ECHO_REQ, sizeof(req), 7);
	size_t sent = 0, off = 0, sent_ask = 0;
	unsigned asked = 0;
	double worst = 0, t_end = now_s() + 60, t_moved = now_s(), t_ask = 0;
	int a_err = 0;
	while (now_s() < t_end) {
		ssize_t w = send(a, req + off, sizeof(req) - off, MSG_NOSIGNAL);
		if (w > 0) {
			sent += (size_t)w;
			off = (off + (size_t)w) % sizeof(req);
			t_moved = now_s();
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			a_err = errno;
			break;
		} else {
			usleep(1000);
		}
		if (now_s() - t_ask >= 0.1 || sent - sent_ask >= (1u << 20)) {
			t_ask = now_s();
			sent_ask = sent;
			double dt = ask(b, asked % 2 ? T_BARRIER_REQ : T_ECHO_REQ,
					asked % 2 ? T_BARRIER_REP : T_ECHO_REP, 100 + asked);
			cr_assert_geq(dt, 0, "B's request %u (A flooded with %zu bytes) was not answered "
				      "within 5 s: the agent waits for A", asked, sent);
			worst = dt > worst ? dt : worst;
			asked++;
		}
	}
	fprintf(stderr, "A: %zu bytes of ECHO_REQUEST sent (the last %.1f s before its end), then "
		"%s; B: %u requests answered, the slowest in %.3f s\n", sent, now_s() - t_moved,
		a_err ? strerror(a_err) : "no end", asked, worst);
	cr_assert(a_err == EPIPE || a_err == ECONNRESET,
		  "A is closed by the switch (%zu bytes sent, then: %s)", sent,
		  a_err ? strerror(a_err) : "A was never closed");
	cr_assert_gt(sent, (size_t)8 << 20, "more than SW_OUT_MAX was asked of A before it closed");
	cr_assert_geq(asked, 1);
	int a2 = accept_within(la, 10000);
	cr_assert_geq(a2, 0, "the switch connects to A's port again after closing it");
	cr_assert_geq(ask(b, T_ECHO_REQ, T_ECHO_REP, 90), 0, "B is still served");
	cr_assert_geq(ask(b, T_BARRIER_REQ, T_BARRIER_REP, 91), 0, "B is still served");
	cr_assert_eq(waitpid(sw_pid, NULL, WNOHANG), 0, "the switch is running");
	int st;
	char *log = sw_stop(&st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "switch exit status %d", st);
	char line[80];
	snprintf(line, sizeof(line), "controller tcp:127.0.0.1:%u: connection closed: the "
		 "controller does not read", port[0]);
	cr_assert_not_null(strstr(log, line), "the log says why A was closed");
	snprintf(line, sizeof(line), "controller tcp:127.0.0.1:%u: connection closed: the", port[1]);
	cr_assert_null(strstr(log, line), "B was never closed for not reading");
	const char *c = strstr(log, "closed unread ");
	cr_assert_not_null(c, "the exit line counts closed_unread");
	cr_assert_eq(atoi(c + strlen("closed unread ")), 1, "one session closed unread: %s", c);
	free(log);
	close(a);
	close(a2);
	close(b);
}

/* The most a TCP socket's send buffer grows to here (tcp_wmem's third field, per namespace). */
static size_t wmem_max(void)
{
	long wmem[3] = {0, 0, 4 << 20};
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
	if (f) {
		if (fscanf(f, "%ld %ld %ld", &wmem[0], &wmem[1], &wmem[2]) != 3)
			wmem[2] = 4 << 20;
		fclose(f);
	}
	return (size_t)wmem[2];
}

/* The order test's writer: n requests on fd, every 8th a BARRIER, blocking sends (the switch
 * stops reading us while SW_OUT_MAX waits for us; the main thread's reads let it go on). */
struct writer {
	int fd;
	unsigned n;
	int err; /* errno of a failed send, 0 */
};

static void *write_requests(void *p)
{
	struct writer *w = p;
	static uint8_t req[8 + PAYLOAD];
	for (unsigned i = 0; i < w->n && !w->err; i++) {
		bool barrier = i % 8 == 7;
		size_t len = barrier ? 8 : sizeof(req);
		put_hdr(req, barrier ? T_BARRIER_REQ : T_ECHO_REQ, (uint16_t)len, 1000 + i);
		for (size_t off = 0; off < len && !w->err;) {
			ssize_t s = send(w->fd, req + off, len - off, MSG_NOSIGNAL);
			if (s > 0)
				off += (size_t)s;
			else if (s < 0 && errno != EINTR)
				w->err = errno;
		}
	}
	return NULL;
}

Test(sw_agent_out, replies_keep_their_order_behind_a_slow_reader, .fini = sw_kill, .timeout = 120)
{
	own_netns();
	/* What the kernel may hold of the switch's replies: its send buffer's limit and our
	 * fixed receive buffer; 12 MiB more waits in the switch's queue, past SW_OUT_MAX, so
	 * the switch stops reading us until we read. */
	size_t total = wmem_max() + (256u << 10) + (12u << 20);
	unsigned n = (unsigned)(total / (8 + PAYLOAD)) + 1;
	uint16_t port;
	int l = listener(65536, &port);
	sw_start(&port, 1);
	int c = accept_within(l, 10000);
	cr_assert_geq(c, 0);
	hello(c);
	cr_assert_geq(ask(c, T_BARRIER_REQ, T_BARRIER_REP, 2), 0, "the session is up");
	/* n requests, every 8th a BARRIER, from a thread; we read nothing for a second */
	struct writer w = {.fd = c, .n = n};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, write_requests, &w), 0);
	sleep(1); /* the switch queued SW_OUT_MAX for us and stopped reading our requests */
	uint8_t h[8];
	const size_t sizeof_req = 8 + PAYLOAD;
	for (unsigned i = 0; i < n; i++) {
		bool barrier = i % 8 == 7;
		cr_assert(get_msg(c, h, now_s() + 10), "reply %u of %u arrived", i, n);
		cr_assert_eq(h[1], barrier ? T_BARRIER_REP : T_ECHO_REP, "reply %u: type %u", i, h[1]);
		cr_assert_eq(xid_of(h), 1000 + i, "reply %u in order (xid %u)", i, xid_of(h));
		size_t len = (size_t)h[2] << 8 | h[3];
		cr_assert_eq(len, barrier ? 8 : sizeof_req, "reply %u whole", i);
	}
	pthread_join(th, NULL);
	cr_assert_eq(w.err, 0, "the requests went out: %s", strerror(w.err));
	int st;
	char *log = sw_stop(&st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "switch exit status %d", st);
	cr_assert_null(strstr(log, "does not read"), "a controller that reads is not closed");
	free(log);
	close(c);
}

/* ---- a FLOW dump bigger than every buffer on the way, made part by part ---- */

#define T_FLOW_MOD 14
#define T_MP_REQ 18
#define T_MP_REP 19
#define T_ERROR 1
#define DUMP_FLOWS 80000u
#define DUMP_LOW (256u << 10) /* SW_DUMP_LOW (sw_agent_pvt.h) */

/* A 64-bit big-endian field (of_wire.h has 16 and 32). */
static void set64(uint8_t *p, uint64_t v)
{
	of_set32(p, (uint32_t)(v >> 32));
	of_set32(p + 4, (uint32_t)v);
}

/* FLOW_MOD ADD of flow i into b (its length): cookie i, ip,nw_dst=10.0.0.0+i, priority 100,
 * apply_actions(set eth_dst, set eth_src, output:1): 128 bytes, as its FLOW stats entry. */
static size_t flow_add(uint8_t *b, uint32_t i)
{
	memset(b, 0, 128);
	put_hdr(b, T_FLOW_MOD, 128, 10 + i);
	set64(b + 8, i);           /* cookie */
	b[25] = 0;                 /* command ADD (table 0) */
	of_set16(b + 30, 100);        /* priority */
	of_set32(b + 32, 0xffffffff); /* buffer_id: none */
	of_set32(b + 36, 0xffffffff); /* out_port any */
	of_set32(b + 40, 0xffffffff); /* out_group any */
	uint8_t *m = b + 48;       /* the match: OXM eth_type, ipv4_dst (18 bytes, padded to 24) */
	of_set16(m, 1);
	of_set16(m + 2, 4 + 6 + 8);
	of_set32(m + 4, 0x80000a02); /* eth_type, 2 bytes */
	of_set16(m + 8, 0x0800);
	of_set32(m + 10, 0x80001804); /* ipv4_dst, 4 bytes */
	of_set32(m + 14, 0x0a000000u + i);
	uint8_t *in = b + 72; /* APPLY_ACTIONS: two set_fields (16 each) and an output (16) */
	of_set16(in, 4);
	of_set16(in + 2, 8 + 48);
	uint8_t *ac = in + 8;
	for (int k = 0; k < 2; k++, ac += 16) {
		of_set16(ac, 25); /* SET_FIELD */
		of_set16(ac + 2, 16);
		of_set32(ac + 4, k ? 0x80000806u : 0x80000606u); /* eth_src / eth_dst, 6 bytes */
		ac[9] = 0x02; /* a locally administered address */
		ac[13] = (uint8_t)k;
	}
	of_set16(ac, 0); /* OUTPUT port 1 */
	of_set16(ac + 2, 16);
	of_set32(ac + 4, 1);
	of_set16(ac + 8, 0xffff);
	return 128;
}

/* FLOW_MOD DELETE (every table) of the flows whose cookie has bit 0 set. */
static size_t flow_del_odd(uint8_t *b)
{
	memset(b, 0, 56);
	put_hdr(b, T_FLOW_MOD, 56, 5);
	set64(b + 8, 1);  /* cookie */
	set64(b + 16, 1); /* cookie_mask */
	b[24] = 0xff;     /* OFPTT_ALL */
	b[25] = 3;        /* DELETE */
	of_set32(b + 32, 0xffffffff);
	of_set32(b + 36, 0xffffffff);
	of_set32(b + 40, 0xffffffff);
	of_set16(b + 48, 1); /* an empty match */
	of_set16(b + 50, 4);
	return 56;
}

Test(sw_agent_out, a_flow_dump_is_made_part_by_part, .fini = sw_kill, .timeout = 240)
{
	own_netns();
	/* The dump must be bigger than the kernel can hold of it plus 4 MiB, so a reply built
	 * whole would queue at least that much in the switch. */
	cr_assert_gt((size_t)DUMP_FLOWS * 128, wmem_max() + (64u << 10) + (4u << 20));
	uint16_t port[2];
	int la, a, b;
	two_controllers(port, &la, &a, &b);

	/* B installs the flows (one big write from a child while we read B's replies). */
	static uint8_t adds[DUMP_FLOWS * 128 + 8];
	size_t n = 0;
	for (uint32_t i = 0; i < DUMP_FLOWS; i++)
		n += flow_add(adds + n, i);
	put_hdr(adds + n, T_BARRIER_REQ, 8, 3);
	n += 8;
	pid_t sv = fork(); /* the writer: a child, while we read B's replies */
	cr_assert_geq(sv, 0);
	if (sv == 0) {
		put_all(b, adds, n);
		_exit(0);
	}
	static uint8_t body[65536];
	uint8_t h[8];
	unsigned errors = 0;
	for (;;) {
		cr_assert(get_msg_body(b, h, body, now_s() + 60), "B's BARRIER after the adds");
		if (h[1] == T_ERROR && errors++ == 0)
			fprintf(stderr, "error type %u code %u\n", body[0] << 8 | body[1],
				body[2] << 8 | body[3]);
		if (h[1] == T_BARRIER_REP && xid_of(h) == 3)
			break;
	}
	waitpid(sv, NULL, 0);
	cr_assert_eq(errors, 0, "every flow was added (%u errors)", errors);

	/* A asks for every flow and, in the same write, a BARRIER; then reads nothing for 1 s. */
	uint8_t req[56 + 8] = {0};
	put_hdr(req, T_MP_REQ, 56, 77);
	of_set16(req + 8, 1); /* OFPMP_FLOW */
	req[16] = 0xff;    /* all tables */
	of_set32(req + 20, 0xffffffff);
	of_set32(req + 24, 0xffffffff);
	of_set16(req + 48, 1); /* an empty match */
	of_set16(req + 50, 4);
	put_hdr(req + 56, T_BARRIER_REQ, 8, 78);
	put_all(a, req, sizeof(req));
	sleep(1);
	/* Mid-dump, B deletes the odd cookies; the switch answers B at once. */
	uint8_t del[56 + 8];
	flow_del_odd(del);
	put_hdr(del + 56, T_BARRIER_REQ, 8, 6);
	put_all(b, del, sizeof(del));
	for (;;) {
		cr_assert(get_msg_body(b, h, body, now_s() + 10), "B is answered during A's dump");
		if (h[1] == T_BARRIER_REP && xid_of(h) == 6)
			break;
	}

	/* A's dump: parts of xid 77, MORE on all but the last, then the BARRIER's reply. */
	static uint8_t seen[DUMP_FLOWS];
	size_t parts = 0, entries = 0, bytes = 0;
	for (;;) {
		cr_assert(get_msg_body(a, h, body, now_s() + 30), "part %zu of the dump", parts);
		if (h[1] != T_MP_REP)
			continue; /* an ECHO_REQUEST from the switch, say */
		cr_assert_eq(xid_of(h), 77u);
		size_t len = (size_t)h[2] << 8 | h[3];
		bytes += len;
		parts++;
		size_t off = 8; /* body: type, flags, pad, then the flow stats */
		while (off + 32 <= len - 8) {
			size_t el = (size_t)body[off] << 8 | body[off + 1];
			cr_assert_geq(el, 56u, "a flow stats entry's length");
			uint64_t cookie = of_get64(body + off + 24);
			cr_assert_lt(cookie, DUMP_FLOWS);
			cr_assert_eq(seen[cookie], 0, "flow %" PRIu64 " reported twice", cookie);
			seen[cookie] = 1;
			entries++;
			off += el;
		}
		if (!(body[3] & 1)) /* flags: no OFPMPF_REPLY_MORE */
			break;
	}
	cr_assert(get_msg(a, h, now_s() + 10) && h[1] == T_BARRIER_REP && xid_of(h) == 78,
		  "A's BARRIER is answered after the dump's last part");
	unsigned even = 0, odd = 0;
	for (uint32_t i = 0; i < DUMP_FLOWS; i++)
		*(i & 1 ? &odd : &even) += seen[i];
	fprintf(stderr, "dump: %zu parts, %zu flows (%zu bytes): %u kept, %u deleted mid-dump\n",
		parts, entries, bytes, even, odd);
	cr_assert_eq(even, DUMP_FLOWS / 2, "every flow that stayed is in the dump");
	cr_assert_lt(odd, DUMP_FLOWS / 2, "flows deleted before the dump reached them are not");
	int st;
	char *log = sw_stop(&st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "switch exit status %d", st);
	const char *q = strstr(log, "queued max ");
	cr_assert_not_null(q, "the exit line gives the largest queue");
	size_t high = strtoul(q + strlen("queued max "), NULL, 10);
	fprintf(stderr, "the switch queued at most %zu bytes for a %zu-byte dump\n", high, bytes);
	cr_assert_leq(high, DUMP_LOW + 65536 + 4096, "a dump queues at most SW_DUMP_LOW and a part");
	cr_assert_null(strstr(log, "does not read"), "nobody was closed");
	free(log);
	close(a);
	close(b);
}
