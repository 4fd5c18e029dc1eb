/*
 * tests/io/test_io_conformance.c: the same behaviour checked on every driver of
 * conformance.h: echo of N messages over loopback and over a veth pair between two network
 * namespaces the test creates, nothing lost at low rate, payload intact (a checksum in every
 * message), TCP framing when a message arrives in pieces, every burst size from 1 to the
 * maximum, no fd left after close, bad config strings rejected with the expected line.
 *
 * The server side is the driver under test, run by an echo thread; the client is a plain
 * kernel socket (in the other namespace for the veth tests). Every wait is bounded.
 */
#include "rf_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io/conformance.h"

#define N_MSGS 2000
#define WINDOW 8
#define IO_TIMEOUT_MS 3000

/* ---- helpers --------------------------------------------------------------------------- */

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Replace {ip}, {port}, {dev} in the row's template. */
static void make_spec(const struct backend_row *row, const char *ip, unsigned port,
		      const char *dev, char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = row->spec; *p && o + 1 < len;) {
		if (strncmp(p, "{ip}", 4) == 0)
			o += (size_t)snprintf(out + o, len - o, "%s", ip), p += 4;
		else if (strncmp(p, "{port}", 6) == 0)
			o += (size_t)snprintf(out + o, len - o, "%u", port), p += 6;
		else if (strncmp(p, "{dev}", 5) == 0)
			o += (size_t)snprintf(out + o, len - o, "%s", dev ? dev : "lo"), p += 5;
		else
			out[o++] = *p++;
	}
	out[o < len ? o : len - 1] = '\0';
}

/* A port nobody uses right now (bind to 0, read it back). */
static unsigned free_port(int proto, const char *ip)
{
	int fd = socket(AF_INET, proto, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	inet_pton(AF_INET, ip, &a.sin_addr);
	socklen_t sl = sizeof(a);
	unsigned port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &sl) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Message seq: 8-byte seq, payload bytes, 4-byte checksum of all before. Returns its size. */
static size_t make_msg(uint64_t seq, uint8_t *buf)
{
	size_t len = 16 + (seq * 37) % 1000; /* 16..1015 bytes */
	memcpy(buf, &seq, 8);
	for (size_t i = 8; i < len - 4; i++)
		buf[i] = (uint8_t)(seq * 31 + i);
	uint32_t h = fnv1a(buf, len - 4);
	memcpy(buf + len - 4, &h, 4);
	return len;
}

/* The message is intact and is number seq. */
static bool check_msg(const uint8_t *buf, size_t len, uint64_t seq)
{
	uint8_t want[1100];
	size_t wl = make_msg(seq, want);
	return len == wl && memcmp(buf, want, wl) == 0;
}

static struct rf_pktbuf_pool *test_pool(void)
{
	struct rf_pktbuf_pool *p =
		rf_pktbuf_pool_create("conf", 2048, 2048, 64, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(p, "pool");
	return p;
}

/* ---- network namespaces ---------------------------------------------------------------- */

struct netns_pair {
	char ns_a[32], ns_b[32], veth_a[16], veth_b[16];
	bool up;
	int reaper_fd;   /* write end of the reaper's pipe */
	pid_t reaper;
};

static struct netns_pair g_ns;

/*
 * Cleanup that survives any way this process ends (a failed assertion's _exit, a crash, a
 * kill by ctest's timeout): a child blocks reading a pipe whose only write end is ours; when
 * it reads end-of-file, we are gone or done, and it deletes the namespaces (the veth pair
 * goes with them) and the veth in case it was never moved.
 */
static void start_reaper(void)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; "
		 "ip link del %s 2>/dev/null; exit 0", g_ns.ns_a, g_ns.ns_b, g_ns.veth_a);
	int p[2];
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	cr_assert(pid >= 0, "fork");
	if (pid == 0) {
		char c;
		close(p[1]);
		while (read(p[0], &c, 1) != 0 && errno == EINTR)
			;
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	g_ns.reaper_fd = p[1];
	g_ns.reaper = pid;
}

static void netns_teardown(void)
{
	if (!g_ns.up)
		return;
	close(g_ns.reaper_fd); /* the reaper deletes everything; wait until it has */
	waitpid(g_ns.reaper, NULL, 0);
	g_ns.up = false;
}

/* Two namespaces joined by a veth pair: A has 10.77.0.1/24, B 10.77.0.2/24. */
static bool netns_setup(void)
{
	int pid = (int)getpid();
	snprintf(g_ns.ns_a, sizeof(g_ns.ns_a), "rfconfa%d", pid);
	snprintf(g_ns.ns_b, sizeof(g_ns.ns_b), "rfconfb%d", pid);
	snprintf(g_ns.veth_a, sizeof(g_ns.veth_a), "rfca%d", pid);
	snprintf(g_ns.veth_b, sizeof(g_ns.veth_b), "rfcb%d", pid);
	start_reaper();
	g_ns.up = true;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "set -e; ip netns add %1$s; ip netns add %2$s;"
		 "ip link add %3$s type veth peer name %4$s;"
		 "ip link set %3$s netns %1$s; ip link set %4$s netns %2$s;"
		 "ip -n %1$s addr add 10.77.0.1/24 dev %3$s; ip -n %2$s addr add 10.77.0.2/24 dev %4$s;"
		 "ip -n %1$s link set %3$s up; ip -n %2$s link set %4$s up;"
		 "ip -n %1$s link set lo up; ip -n %2$s link set lo up",
		 g_ns.ns_a, g_ns.ns_b, g_ns.veth_a, g_ns.veth_b);
	if (system(cmd) != 0) {
		netns_teardown();
		return false;
	}
	return true;
}

/* Move the calling thread into namespace name (NULL: stay). */
static bool enter_netns(const char *name)
{
	if (!name)
		return true;
	char path[128];
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	int rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc == 0;
}

/* ---- the echo server: the driver under test ------------------------------------------ */

struct server {
	const struct backend_row *row;
	const char *ns, *ip, *ifname;
	unsigned burst;
	struct rf_pktbuf_pool *pool;
	/* set by the thread */
	pthread_t th;
	unsigned port;
	char spec[256], err[512];
	struct rf_io_dev *dev;
	_Atomic int state; /* 0 opening, 1 running, -1 open failed */
	_Atomic int stop;
	_Atomic uint64_t echoed;
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	if (!enter_netns(s->ns)) {
		snprintf(s->err, sizeof(s->err), "setns %s failed", s->ns);
		atomic_store(&s->state, -1);
		return NULL;
	}
	for (int attempt = 0; attempt < 5 && !s->dev; attempt++) {
		s->port = free_port(s->row->proto, s->ip);
		make_spec(s->row, s->ip, s->port, s->ifname, s->spec, sizeof(s->spec));
		s->dev = rf_io_open(s->spec, s->pool, s->err, sizeof(s->err));
	}
	if (!s->dev) {
		atomic_store(&s->state, -1);
		return NULL;
	}
	/* Release: the main thread reads port/spec/dev after seeing state 1 (acquire below). */
	atomic_store_explicit(&s->state, 1, memory_order_release);
	struct rf_pktbuf *pkts[RF_IO_MAX_BURST];
	while (!atomic_load(&s->stop)) {
		unsigned n = rf_io_rx_burst(s->dev, 0, pkts, s->burst);
		if (n == 0) {
			rf_io_wait(s->dev, 0, 5);
			continue;
		}
		unsigned sent = 0;
		for (int tries = 0; sent < n && tries < 1000; tries++)
			sent += rf_io_tx_burst(s->dev, 0, pkts + sent, n - sent);
		rf_pktbuf_free_bulk(pkts + sent, n - sent);
		atomic_fetch_add(&s->echoed, sent);
	}
	return NULL;
}

/* Start the echo thread; false (with s->err) when the driver would not open. */
static bool server_start(struct server *s)
{
	atomic_store(&s->state, 0);
	atomic_store(&s->stop, 0);
	cr_assert_eq(pthread_create(&s->th, NULL, server_main, s), 0);
	for (int i = 0; i < 10000 && atomic_load_explicit(&s->state, memory_order_acquire) == 0; i++)
		usleep(1000);
	if (atomic_load_explicit(&s->state, memory_order_acquire) != 1) {
		pthread_join(s->th, NULL);
		return false;
	}
	return true;
}

static void server_stop(struct server *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->th, NULL);
	/* One queue: its own counters are the device's (rx_drops aside: dpdk's imissed belongs
	 * to no queue), and there is no queue 1. */
	struct rf_io_stats dev_st, q_st;
	rf_io_stats_get(s->dev, &dev_st);
	cr_assert_eq(rf_io_queue_stats_get(s->dev, 0, &q_st), 0, "%s", s->row->name);
	cr_assert_eq(q_st.rx_pkts, dev_st.rx_pkts, "%s: queue 0 rx", s->row->name);
	cr_assert_eq(q_st.tx_pkts, dev_st.tx_pkts, "%s: queue 0 tx", s->row->name);
	cr_assert_eq(q_st.rx_bytes, dev_st.rx_bytes, "%s", s->row->name);
	cr_assert_eq(q_st.tx_bytes, dev_st.tx_bytes, "%s", s->row->name);
	cr_assert_eq(q_st.tx_drops, dev_st.tx_drops, "%s", s->row->name);
	cr_assert_geq(q_st.rx_pkts, atomic_load(&s->echoed), "%s", s->row->name);
	cr_assert_eq(rf_io_queue_stats_get(s->dev, 1, &q_st), -EINVAL, "%s", s->row->name);
	rf_io_close(s->dev);
	s->dev = NULL;
}

/* ---- the client: a plain kernel socket ------------------------------------------------- */

static int client_connect(int proto, const char *ip, unsigned port)
{
	int fd = socket(AF_INET, proto | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0, "client socket");
	struct timeval tv = {IO_TIMEOUT_MS / 1000, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int one = 1;
	if (proto == SOCK_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, ip, &a.sin_addr);
	int rc = -1;
	for (int i = 0; i < 50 && rc != 0; i++) {
		rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
		if (rc != 0)
			usleep(20000);
	}
	cr_assert_eq(rc, 0, "client connect: %s", strerror(errno));
	return fd;
}

static bool read_full(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;
	for (int eintr = 0; got < n;) {
		ssize_t r = recv(fd, buf + got, n - got, 0);
		if (r < 0 && errno == EINTR && eintr++ < 100)
			continue; /* see client_recv */
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* send() all of buf, retrying on EINTR and short writes; the count sent. */
static ssize_t send_all(int fd, const void *buf, size_t n)
{
	size_t o = 0;
	while (o < n) {
		ssize_t w = send(fd, (const char *)buf + o, n - o, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return (ssize_t)o;
		o += (size_t)w;
	}
	return (ssize_t)o;
}

/* One message out on the client socket (TCP: framed). */
static void client_send(int proto, int fd, const uint8_t *msg, size_t len)
{
	if (proto == SOCK_DGRAM) {
		cr_assert_eq(send_all(fd, msg, len), (ssize_t)len, "udp send");
		return;
	}
	uint8_t f[2 + 1100];
	f[0] = (uint8_t)(len >> 8);
	f[1] = (uint8_t)len;
	memcpy(f + 2, msg, len);
	cr_assert_eq(send_all(fd, f, len + 2), (ssize_t)(len + 2), "tcp send");
}

/* One message in; returns its length, or -1 on timeout / close. */
static ssize_t client_recv(int proto, int fd, uint8_t *buf, size_t cap)
{
	if (proto == SOCK_DGRAM) {
		/* A blocking recv with SO_RCVTIMEO on the thread that owns an io_uring returns EINTR
		 * when the ring queues task work to that thread (sock_intr_errno): retry, bounded. */
		ssize_t r;
		int eintr = 0;
		do
			r = recv(fd, buf, cap, 0);
		while (r < 0 && errno == EINTR && eintr++ < 100);
		return r;
	}
	uint8_t h[2];
	if (!read_full(fd, h, 2))
		return -1;
	size_t l = ((size_t)h[0] << 8) | h[1];
	if (l > cap || !read_full(fd, buf, l))
		return -1;
	return (ssize_t)l;
}

/* n messages, WINDOW at a time (a low rate: the client waits for each window's answers).
 * Returns how many came back intact and in order. */
static unsigned echo_roundtrip(int proto, int fd, unsigned n)
{
	uint8_t msg[1100], in[2048];
	unsigned ok = 0;
	for (unsigned base = 0; base < n; base += WINDOW) {
		unsigned w = n - base < WINDOW ? n - base : WINDOW;
		for (unsigned i = 0; i < w; i++) {
			size_t l = make_msg(base + i, msg);
			client_send(proto, fd, msg, l);
		}
		for (unsigned i = 0; i < w; i++) {
			ssize_t r = client_recv(proto, fd, in, sizeof(in));
			if (r < 0) {
				cr_log_warn("message %u: no answer (%s)", base + i, strerror(errno));
				return ok;
			}
			if (!check_msg(in, (size_t)r, base + i)) {
				uint64_t seq = 0;
				memcpy(&seq, in, r >= 8 ? 8 : 0);
				cr_log_warn("message %u: got %zd bytes with seq %llu", base + i, r,
					    (unsigned long long)seq);
				continue;
			}
			ok++;
		}
	}
	return ok;
}

struct client_job {
	const char *ns, *ip;
	int proto;
	unsigned port, n, ok;
};

static void *client_main(void *arg)
{
	struct client_job *j = arg;
	if (!enter_netns(j->ns))
		return NULL;
	int fd = client_connect(j->proto, j->ip, j->port);
	j->ok = echo_roundtrip(j->proto, fd, j->n);
	close(fd);
	return NULL;
}

static bool row_present(const struct backend_row *row)
{
	if (rf_io_find(row->driver))
		return true;
	char d[1024];
	rf_io_describe(d, sizeof(d));
	cr_log_info("skip %s: driver %s not usable here (%s)", row->name, row->driver, d);
	return false;
}

/* ---- the tests ------------------------------------------------------------------------- */

Test(io_conformance, echo_loopback_nothing_lost_payload_intact)
{
	struct rf_pktbuf_pool *pool = test_pool();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (!row->loopback || !row_present(row))
			continue;
		struct server s = {.row = row, .ip = "127.0.0.1", .burst = 32, .pool = pool};
		cr_assert(server_start(&s), "%s: open failed: %s", row->name, s.err);
		struct client_job j = {NULL, "127.0.0.1", row->proto, s.port, N_MSGS, 0};
		client_main(&j);
		server_stop(&s);
		cr_assert_eq(j.ok, N_MSGS, "%s: %u of %u messages came back intact", row->name, j.ok,
			     N_MSGS);
	}
	rf_pktbuf_pool_free(pool);
}

Test(io_conformance, echo_over_netns_veth)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: creates network namespaces and a veth pair");
	if (system("command -v ip >/dev/null 2>&1") != 0)
		cr_skip_test("needs the ip tool (Debian package iproute2)");
	cr_assert(netns_setup(), "could not create the namespaces and veth pair");
	struct rf_pktbuf_pool *pool = test_pool();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (!row_present(row))
			continue;
		struct server s = {.row = row, .ns = g_ns.ns_a, .ip = "10.77.0.1",
				   .ifname = g_ns.veth_a, .burst = 32, .pool = pool};
		if (!server_start(&s)) {
			netns_teardown();
			cr_assert(false, "%s: open failed: %s", row->name, s.err);
		}
		struct client_job j = {g_ns.ns_b, "10.77.0.1", row->proto, s.port, N_MSGS, 0};
		pthread_t th;
		cr_assert_eq(pthread_create(&th, NULL, client_main, &j), 0);
		pthread_join(th, NULL);
		server_stop(&s);
		if (!row->loopback) { /* bypass: raw drivers leave no XDP program, no EAL files */
			char cmd[256], dir[64];
			snprintf(cmd, sizeof(cmd), "ip -n %s link show dev %s | grep -q xdp", g_ns.ns_a,
				 g_ns.veth_a);
			snprintf(dir, sizeof(dir), "/var/run/dpdk/rf%d", (int)getpid());
			cr_assert_neq(system(cmd), 0, "%s left an XDP program attached", row->name);
			cr_assert_neq(access(dir, F_OK), 0, "%s left EAL files in %s", row->name, dir);
		}
		if (j.ok != N_MSGS)
			netns_teardown();
		cr_assert_eq(j.ok, N_MSGS, "%s over veth: %u of %u came back intact", row->name, j.ok,
			     N_MSGS);
	}
	rf_pktbuf_pool_free(pool);
	netns_teardown();
}

/* A message in several write() pieces, and several messages in one write(), both come back
 * framed exactly. */
Test(io_conformance, tcp_framing_across_split_reads)
{
	struct rf_pktbuf_pool *pool = test_pool();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (row->proto != SOCK_STREAM || !row->loopback || !row_present(row))
			continue;
		struct server s = {.row = row, .ip = "127.0.0.1", .burst = 32, .pool = pool};
		cr_assert(server_start(&s), "%s: open failed: %s", row->name, s.err);
		int fd = client_connect(SOCK_STREAM, "127.0.0.1", s.port);
		uint8_t msg[1100], frame[1102], in[2048];
		/* pieces: the length bytes split too, with pauses so each is its own segment */
		for (uint64_t seq = 0; seq < 20; seq++) {
			size_t l = make_msg(seq, msg);
			frame[0] = (uint8_t)(l >> 8), frame[1] = (uint8_t)l;
			memcpy(frame + 2, msg, l);
			size_t cuts[] = {1, 2, 7, l / 2, l + 2};
			size_t prev = 0;
			for (size_t c = 0; c < 5; c++) {
				if (cuts[c] <= prev || cuts[c] > l + 2)
					continue;
				cr_assert_eq(send_all(fd, frame + prev, cuts[c] - prev),
					     (ssize_t)(cuts[c] - prev));
				prev = cuts[c];
				usleep(2000);
			}
			ssize_t got = client_recv(SOCK_STREAM, fd, in, sizeof(in));
			cr_assert(got >= 0 && check_msg(in, (size_t)got, seq), "%s: split message %u",
				  row->name, (unsigned)seq);
		}
		/* many messages in one write */
		uint8_t big[16 * 1102];
		size_t o = 0;
		for (uint64_t seq = 100; seq < 116; seq++) {
			size_t l = make_msg(seq, msg);
			big[o] = (uint8_t)(l >> 8), big[o + 1] = (uint8_t)l;
			memcpy(big + o + 2, msg, l);
			o += l + 2;
		}
		cr_assert_eq(send_all(fd, big, o), (ssize_t)o);
		for (uint64_t seq = 100; seq < 116; seq++) {
			ssize_t got = client_recv(SOCK_STREAM, fd, in, sizeof(in));
			cr_assert(got >= 0 && check_msg(in, (size_t)got, seq), "%s: joined message %u",
				  row->name, (unsigned)seq);
		}
		close(fd);
		server_stop(&s);
	}
	rf_pktbuf_pool_free(pool);
}

/* rx_burst(n) never returns more than n, and bursts of every size move every message. */
Test(io_conformance, burst_sizes_1_to_max)
{
	static const unsigned sizes[] = {1, 2, 3, 5, 8, 16, 31, 32, 64, 128, RF_IO_MAX_BURST};
	struct rf_pktbuf_pool *pool = test_pool();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (!row->loopback || !row_present(row))
			continue;
		for (size_t si = 0; si < RF_ARRAY_SIZE(sizes); si++) {
			unsigned b = sizes[si], k = 40;
			char spec[256], err[512];
			struct rf_io_dev *dev = NULL;
			unsigned port = 0;
			for (int a = 0; a < 5 && !dev; a++) {
				port = free_port(row->proto, "127.0.0.1");
				make_spec(row, "127.0.0.1", port, NULL, spec, sizeof(spec));
				dev = rf_io_open(spec, pool, err, sizeof(err));
			}
			cr_assert_not_null(dev, "%s: %s", row->name, err);
			cr_assert_eq(rf_io_tx_burst(dev, 0, NULL, 0), 0, "%s: an empty tx burst",
				     row->name);
			int fd = client_connect(row->proto, "127.0.0.1", port);
			uint8_t msg[1100], in[2048];
			for (unsigned i = 0; i < k; i++) {
				size_t l = make_msg(i, msg);
				client_send(row->proto, fd, msg, l);
			}
			/* Collect all k with bursts of b, then send them back b at a time. */
			struct rf_pktbuf *got[64];
			unsigned n = 0;
			for (int spins = 0; n < k && spins < 2000; spins++) {
				unsigned want = k - n < b ? k - n : b;
				unsigned m = rf_io_rx_burst(dev, 0, got + n, want);
				cr_assert_leq(m, want, "%s: rx_burst(%u) returned %u", row->name, want, m);
				n += m;
				if (m == 0)
					rf_io_wait(dev, 0, 5);
			}
			cr_assert_eq(n, k, "%s burst %u: received %u of %u", row->name, b, n, k);
			for (unsigned i = 0; i < k; i++)
				cr_assert(check_msg(rf_pktbuf_data(got[i]), got[i]->data_len, i),
					  "%s burst %u: message %u corrupt or out of order", row->name, b, i);
			for (unsigned sent = 0, tries = 0; sent < k && tries < 1000; tries++) {
				unsigned want = k - sent < b ? k - sent : b;
				sent += rf_io_tx_burst(dev, 0, got + sent, want);
			}
			for (unsigned i = 0; i < k; i++) {
				ssize_t l = client_recv(row->proto, fd, in, sizeof(in));
				cr_assert(l >= 0 && check_msg(in, (size_t)l, i),
					  "%s burst %u: echo %u wrong", row->name, b, i);
			}
			close(fd);
			rf_io_close(dev);
		}
	}
	rf_pktbuf_pool_free(pool);
}

/* Open, use (a client connects and exchanges messages), close: the same fds as before. */
Test(io_conformance, clean_close_leaves_no_fd)
{
	struct rf_pktbuf_pool *pool = test_pool();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (!row->loopback || !row_present(row))
			continue;
		int before = count_fds();
		struct server s = {.row = row, .ip = "127.0.0.1", .burst = 32, .pool = pool};
		cr_assert(server_start(&s), "%s: open failed: %s", row->name, s.err);
		struct client_job j = {NULL, "127.0.0.1", row->proto, s.port, 50, 0};
		client_main(&j); /* the client socket is closed before the server stops */
		server_stop(&s);
		cr_assert_eq(j.ok, 50u);
		int after = count_fds();
		cr_assert_eq(before, after, "%s: %d fds before, %d after close", row->name, before,
			     after);
	}
	rf_pktbuf_pool_free(pool);
}

/* Each bad spec: NULL, the expected words in the one-line error, and no fd left behind. */
Test(io_conformance, bad_config_rejected_with_one_line)
{
	struct rf_pktbuf_pool *pool = test_pool();
	char err[512], spec[300], base[256];
	int before = count_fds();
	for (size_t r = 0; r < N_BACKENDS; r++) {
		const struct backend_row *row = &backend_rows[r];
		if (!row_present(row))
			continue;
		unsigned port = free_port(row->proto, "127.0.0.1");
		make_spec(row, "127.0.0.1", port, "lo", base, sizeof(base));
		struct {
			const char *suffix, *expect;
		} bad[] = {
			{",bogus_key=1", "unknown key 'bogus_key'"},
			{",queues=0", "queues=0: must be an integer in 1.."},
			{",queues=abc", "queues=abc"},
			{",junk", "is not key=value"},
		};
		for (size_t i = 0; i < RF_ARRAY_SIZE(bad); i++) {
			snprintf(spec, sizeof(spec), "%s%s", base, bad[i].suffix);
			err[0] = '\0';
			struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
			cr_assert_null(dev, "%s: '%s' was accepted", row->name, spec);
			cr_assert(strstr(err, bad[i].expect) != NULL, "%s: '%s' gave '%s'", row->name,
				  spec, err);
			cr_assert(strchr(err, '\n') == NULL, "error is one line");
		}
	}
	/* driver-independent: the registry and the sockets' own checks */
	unsigned port = free_port(SOCK_DGRAM, "127.0.0.1");
	char inuse[64];
	snprintf(inuse, sizeof(inuse), "udp:listen=127.0.0.1:%u", port);
	struct rf_io_dev *holder = rf_io_open(inuse, pool, err, sizeof(err));
	cr_assert_not_null(holder, "%s", err);
	unsigned closed_port = free_port(SOCK_STREAM, "127.0.0.1");
	char refused[64];
	snprintf(refused, sizeof(refused), "tcp:connect=127.0.0.1:%u,timeout_ms=2000", closed_port);
	struct {
		const char *spec, *expect;
	} global[] = {
		{"nosuch:listen=1.2.3.4:5", "unknown driver 'nosuch'"},
		{"nosuch:x=1", "available: udp, tcp"},
		{"", "empty backend spec"},
		{"UDP:listen=0.0.0.0:9", "bad backend spec"},
		{"udp:listen=1.2.3:9000", "expected a numeric IPv4:port"},
		{"udp:listen=127.0.0.1:70000", "port 70000 out of range 0..65535"},
		{"udp:connect=127.0.0.1:9,listen=127.0.0.1:9", "exactly one of listen"},
		{"udp:busy_poll=x,listen=127.0.0.1:9", "busy_poll=x"},
		{"udp:listen=127.0.0.1:9,listen=127.0.0.1:10", "given twice"},
		{"udp:udp:listen=127.0.0.1:9", "takes no transport"},
		{"udp:listen=192.0.2.1:9000", "not an address of this host"},
		{inuse, "address already in use"},
		{refused, "connection refused"},
		{"tcp:listen=127.0.0.1:9,nodelay=maybe", "nodelay=maybe: must be 0 or 1"},
	};
	for (size_t i = 0; i < RF_ARRAY_SIZE(global); i++) {
		err[0] = '\0';
		struct rf_io_dev *dev = rf_io_open(global[i].spec, pool, err, sizeof(err));
		cr_assert_null(dev, "'%s' was accepted", global[i].spec);
		cr_assert(strstr(err, global[i].expect) != NULL, "'%s' gave '%s'", global[i].spec, err);
		cr_assert(strchr(err, '\n') == NULL, "error is one line");
	}
	rf_io_close(holder);
	cr_assert_eq(count_fds(), before, "a failed open left an fd behind");
	rf_pktbuf_pool_free(pool);
}
