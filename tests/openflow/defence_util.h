/*
 * tests/openflow/defence_util.h: what the attack regression tests (test_ofc_defences.c) share:
 * start ringflow-controller with extra options, connect hand-written switches from a chosen
 * loopback source address (127.0.0.N: the whole 127/8 is loopback, so "many hosts" need no
 * namespace), run the handshake, and read messages with deadlines. Test files only (it
 * asserts with Criterion or the TSan shim).
 */
#ifndef RINGFLOW_TEST_DEFENCE_UTIL_H
#define RINGFLOW_TEST_DEFENCE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "of.h"
#include "of_eth.h"
#include "free_port.h"

static pid_t ofc_pid = -1;
static uint16_t of_port_no, rest_port_no;
static char ofc_log[64];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Starts the controller on fresh ports with extra options (NULL-terminated); nofile > 0 sets
 * its fd limit (soft and hard). A port taken meanwhile by someone else (free_port only says
 * it was free) makes the controller exit at once: then it starts again on other ports. */
static void ofc_start(rlim_t nofile, bool rest, const char *const *extra)
{
	for (int attempt = 0; attempt < 5; attempt++) {
		of_port_no = free_port();
		do
			rest_port_no = free_port();
		while (rest_port_no == of_port_no);
		char listen_at[32], rest_at[32];
		snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u", of_port_no);
		snprintf(rest_at, sizeof(rest_at), "127.0.0.1:%u", rest_port_no);
		snprintf(ofc_log, sizeof(ofc_log), "/tmp/rf-ctldef-XXXXXX");
		int log_fd = mkstemp(ofc_log);
		cr_assert_geq(log_fd, 0);
		const char *argv[40] = {NULL};
		int n = 0;
		const char *bin = getenv("RF_CTL_BIN") ? getenv("RF_CTL_BIN") : RF_CONTROLLER_BIN;
		argv[n++] = bin;
		argv[n++] = "--listen";
		argv[n++] = listen_at;
		argv[n++] = "--cores";
		argv[n++] = "0";
		argv[n++] = "--idle";
		argv[n++] = "adaptive";
		if (rest) {
			argv[n++] = "--rest";
			argv[n++] = rest_at;
		}
		for (int i = 0; extra && extra[i] && n < 38; i++)
			argv[n++] = extra[i];
		ofc_pid = fork();
		cr_assert_geq(ofc_pid, 0);
		if (ofc_pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			dup2(log_fd, 2);
			if (nofile) {
				struct rlimit rl = {nofile, nofile};
				setrlimit(RLIMIT_NOFILE, &rl);
			}
			execv(bin, (char *const *)argv);
			_exit(127);
		}
		close(log_fd);
		/* up (its start-up line names the port) or gone (a port was taken) */
		for (double end = now_s() + 60; now_s() < end;) {
			int st;
			if (waitpid(ofc_pid, &st, WNOHANG) == ofc_pid) {
				ofc_pid = -1;
				break;
			}
			char line[512] = "";
			FILE *f = fopen(ofc_log, "r");
			bool up = false;
			while (f && fgets(line, sizeof(line), f))
				up |= strstr(line, "ringflow-controller: listening on") != NULL;
			if (f)
				fclose(f);
			if (up)
				return;
			usleep(20000);
		}
		if (ofc_pid < 0) {
			unlink(ofc_log);
			continue; /* exited: try other ports */
		}
		return; /* still starting after 60 s: the test's own waits will say so */
	}
	cr_assert_fail("the controller did not start on any of 5 pairs of free ports");
}

/* Stops the controller; copies its stderr into ours; returns the log's text (malloc'd). */
static char *ofc_stop(void)
{
	kill(ofc_pid, SIGTERM);
	int st = 0;
	waitpid(ofc_pid, &st, 0);
	ofc_pid = -1;
	FILE *f = fopen(ofc_log, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		fputs(line, stderr);
		fputs(line, m);
	}
	if (f)
		fclose(f);
	fclose(m);
	unlink(ofc_log);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "controller exit status %d", st);
	return text;
}

/* The number after `what` in the text (-1: absent). */
static inline long long count_after(const char *text, const char *what)
{
	const char *p = text ? strstr(text, what) : NULL;
	return p ? strtoll(p + strlen(what), NULL, 10) : -1;
}

/* The number just before `what` in the text (-1: absent). */
static inline long long count_before(const char *text, const char *what)
{
	const char *p = text ? strstr(text, what) : NULL;
	if (!p)
		return -1;
	while (p > text && p[-1] == ' ')
		p--;
	while (p > text && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoll(p, NULL, 10);
}

/* A TCP socket from 127.0.0.src_host to port; blocking connect unless nb (then -1 only on
 * an immediate error). */
static int connect_from(unsigned src_host, uint16_t port, bool nb)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nb ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000000u | src_host)};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (bind(fd, (struct sockaddr *)&s, sizeof(s)) != 0 ||
	    (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && !(nb && errno == EINPROGRESS))) {
		close(fd);
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int connect_switch_from(unsigned src_host)
{
	for (int t = 0; t < 600; t++) { /* a sanitizer build starts slowly: up to 30 s */
		int fd = connect_from(src_host, of_port_no, false);
		if (fd >= 0)
			return fd;
		usleep(50000);
	}
	cr_assert_fail("the controller is not listening on %u", of_port_no);
	return -1;
}

/* Sends all (false: the peer reset or closed). */
static bool send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static bool send_msg(int fd, struct of_msg *m)
{
	static _Thread_local uint8_t buf[70000];
	m->version = OF_VERSION_1_3;
	ssize_t n = of_serialize(m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	return send_all(fd, buf, (size_t)n);
}

/* One whole message into buf (cap >= 65535): its length, 0 on EOF/reset, -1 on timeout. */
static long recv_msg(int fd, uint8_t *buf, double secs)
{
	size_t have = 0, want = 8;
	double end = now_s() + secs;
	while (have < want) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (now_s() >= end)
			return -1;
		if (poll(&pf, 1, 50) <= 0)
			continue;
		ssize_t k = recv(fd, buf + have, want - have, 0);
		if (k == 0 || (k < 0 && errno == ECONNRESET))
			return 0;
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		cr_assert_gt(k, 0, "recv: %s", strerror(errno));
		have += (size_t)k;
		if (have >= 8 && want == 8) {
			want = of_get16(buf + 2);
			cr_assert_geq(want, 8, "the controller sent a length below 8");
		}
	}
	return (long)have;
}

/* Reads until a message of type t (true, m parsed) or EOF/timeout (false). */
static bool wait_for(int fd, enum of_type t, uint8_t *buf, struct of_msg *m, double secs)
{
	double end = now_s() + secs;
	while (now_s() < end) {
		long n = recv_msg(fd, buf, end - now_s());
		if (n <= 0)
			return false;
		struct of_fault f;
		cr_assert_eq(of_parse(buf, (size_t)n, m, &f), 0, "malformed message from the controller");
		if (m->type == t)
			return true;
	}
	return false;
}

/* The switch side of the handshake from 127.0.0.src_host: the fd once the controller's
 * setup BARRIER is answered, or -1 when the controller closed or did not answer in secs. */
static inline int try_handshake(unsigned src_host, uint64_t dpid, double secs)
{
	static _Thread_local uint8_t buf[70000];
	int fd = connect_switch_from(src_host);
	struct of_msg m;
	uint8_t hello[64];
	ssize_t n = of_build_hello(hello, sizeof(hello), OF_VERSION_1_3, 1, 1u << OF_VERSION_1_3);
	if (!wait_for(fd, OF_HELLO, buf, &m, secs) || !send_all(fd, hello, (size_t)n) ||
	    !wait_for(fd, OF_FEATURES_REQUEST, buf, &m, secs))
		goto fail;
	struct of_msg r = {.type = OF_FEATURES_REPLY, .xid = m.xid};
	r.u.features.datapath_id = dpid;
	r.u.features.n_tables = 1;
	if (!send_msg(fd, &r) || !wait_for(fd, OF_BARRIER_REQUEST, buf, &m, secs))
		goto fail;
	r = (struct of_msg){.type = OF_BARRIER_REPLY, .xid = m.xid};
	if (!send_msg(fd, &r))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* A switch as real ones behave under a flood: when the controller drops the connection (a
 * starved controller may find its table full of a flood's connections it has not refused
 * yet, and close the newest), reconnect after 0.2 s, up to `tries` attempts of try_handshake
 * (each bounded by secs). Returns the fd or -1; *used gets the attempts made. */
static inline int handshake_reconnecting(unsigned src_host, uint64_t dpid, double secs,
					 unsigned tries, unsigned *used)
{
	int fd = -1;
	for (*used = 0; *used < tries && fd < 0;) {
		if (*used)
			usleep(200000);
		(*used)++;
		fd = try_handshake(src_host, dpid, secs);
	}
	return fd;
}

/* An ECHO_REQUEST answered with its xid within secs. */
static inline bool echo_ok(int fd, uint32_t xid, double secs)
{
	static _Thread_local uint8_t buf[70000];
	struct of_msg m = {.type = OF_ECHO_REQUEST, .xid = xid};
	if (!send_msg(fd, &m))
		return false;
	struct of_msg r;
	return wait_for(fd, OF_ECHO_REPLY, buf, &r, secs) && r.xid == xid;
}

/* Raises our own fd limit to the hard one (the attackers hold many sockets). */
static inline rlim_t raise_nofile(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

/* CPU seconds (user + system) the process pid has used. */
static inline double cpu_s(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* A PACKET_IN (1.3, unbuffered) of a 60-byte frame src -> dst of ethertype type on in_port. */
static inline bool send_pin(int fd, uint32_t xid, const uint8_t src[6], const uint8_t dst[6],
			    uint16_t type, uint32_t in_port)
{
	uint8_t f[60] = {0};
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = (uint8_t)(type >> 8), f[13] = (uint8_t)type;
	struct of_msg m = {.type = OF_PACKET_IN, .xid = xid};
	m.u.packet_in.buffer_id = OFP_NO_BUFFER;
	m.u.packet_in.total_len = 60;
	m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m.u.packet_in.match.in_port = in_port;
	m.u.packet_in.data = f;
	m.u.packet_in.data_len = 60;
	return send_msg(fd, &m);
}

/* The answer to PACKET_IN xid: OF_FLOW_MOD (then *port its output) or OF_PACKET_OUT (then
 * *port its output, OFPP_FLOOD when flooded); -1 when closed or nothing within secs. Other
 * messages (ECHO_REQUESTs, LLDP PACKET_OUTs with xid 0) are skipped. */
static inline int answer_of(int fd, uint32_t xid, uint32_t *port, double secs)
{
	static _Thread_local uint8_t buf[70000];
	double end = now_s() + secs;
	while (now_s() < end) {
		long n = recv_msg(fd, buf, end - now_s());
		if (n <= 0)
			return -1;
		struct of_msg m;
		struct of_fault f;
		cr_assert_eq(of_parse(buf, (size_t)n, &m, &f), 0);
		if (m.xid != xid)
			continue;
		if (m.type == OF_FLOW_MOD && m.u.flow_mod.command == OFPFC_ADD) {
			*port = m.u.flow_mod.actions.n ? m.u.flow_mod.actions.a[0].port : 0;
			return OF_FLOW_MOD;
		}
		if (m.type == OF_PACKET_OUT) {
			*port = m.u.packet_out.actions.n ? m.u.packet_out.actions.a[0].port : 0;
			return OF_PACKET_OUT;
		}
	}
	return -1;
}

/* Sends n PACKET_INs (xid first.., src MAC from mac_of(i)) pipelined `window` deep, reading
 * every answer. Returns how many were answered. */
static inline unsigned pin_burst(int fd, uint32_t first, unsigned n, unsigned window,
				 void (*mac_of)(unsigned i, uint8_t mac[6]), uint16_t type)
{
	static const uint8_t dst[6] = {0x02, 0x0d, 0x0d, 0, 0, 1};
	unsigned sent = 0, got = 0;
	while (got < n) {
		while (sent < n && sent - got < window) {
			uint8_t src[6];
			mac_of(sent, src);
			if (!send_pin(fd, first + sent, src, dst, type, 1 + sent % 4))
				return got;
			sent++;
		}
		uint32_t port;
		if (answer_of(fd, first + got, &port, 10) < 0)
			return got;
		got++;
	}
	return got;
}

/* Everything fd sends until EOF (or an error) or secs pass, as text (malloc'd, never NULL:
 * "" when nothing came). */
static inline char *recv_text(int fd, double secs)
{
	size_t have = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	cr_assert_not_null(buf);
	double end = now_s() + secs;
	while (now_s() < end) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, 50) <= 0)
			continue;
		if (have == cap) {
			buf = realloc(buf, (cap *= 2) + 1);
			cr_assert_not_null(buf);
		}
		ssize_t k = recv(fd, buf + have, cap - have, 0);
		if (k <= 0)
			break;
		have += (size_t)k;
	}
	buf[have] = '\0';
	return buf;
}

/* One HTTP request (raw bytes) to the REST port; the response's status in *status (0: none)
 * and its whole text (malloc'd; NULL when the connection failed). Reads until EOF or secs. */
static inline char *http_raw(const char *raw, size_t len, int *status, double secs)
{
	*status = 0;
	int fd = connect_from(1, rest_port_no, false);
	if (fd < 0)
		return NULL;
	send_all(fd, (const uint8_t *)raw, len);
	char *buf = recv_text(fd, secs);
	close(fd);
	if (strlen(buf) > 12 && !strncmp(buf, "HTTP/1.", 7))
		*status = atoi(buf + 9);
	return buf;
}

static inline char *http_get(const char *path, int *status)
{
	char req[512];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
			 "Connection: close\r\n\r\n", path, rest_port_no);
	return http_raw(req, (size_t)n, status, 10);
}

#endif /* RINGFLOW_TEST_DEFENCE_UTIL_H */
