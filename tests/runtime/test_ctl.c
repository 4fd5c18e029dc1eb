/*
 * tests/runtime/test_ctl.c: the control socket and the metrics endpoint (ctl.h) with pollers
 * running: the protocol (hello, list, stats, reset, log-level, an app command); bad input
 * (unknown command, malformed JSON, an over-long request, a client that never reads, 1000
 * clients at once) gets one error line or a close, memory stays bounded, and the pollers
 * keep going all along; GET /metrics and the HTTP errors; the socket file is 0600 and gone
 * after stop. Concurrent: built under TSan too.
 */
#include "rf_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ringflow/ctl.h>
#include <ringflow/json.h>
#include <ringflow/log.h>
#include <ringflow/runtime.h>
#include <ringflow/stats.h>

struct bed {
	struct rf_runtime *rt;
	struct rf_stats *st;
	struct rf_ctl *ctl;
	char path[108];
};

static unsigned spin_poll(struct rf_poller *p, void *arg)
{
	(void)arg;
	rf_counter_add(&rf_poller_counters(p)->rx, 1);
	return 1;
}

static int fail_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	(void)arg;
	rf_buf_puts(out, "the switch is gone");
	return -ENODEV;
}

static int echo_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)arg;
	rf_buf_puts(out, "{\"arg\":");
	rf_json_str(out, rf_json_get_str(req, "x", "none"));
	rf_buf_puts(out, "}");
	return 0;
}

static struct bed bed_up(const char *metrics, unsigned timeout_ms)
{
	struct bed b = {0};
	char err[256];
	struct rf_runtime_config cfg = {.cores = "0", .idle = RF_IDLE_BUSY};
	b.rt = rf_runtime_create(&cfg, err, sizeof(err));
	cr_assert_not_null(b.rt, "%s", err);
	cr_assert_eq(rf_runtime_add_poll(b.rt, 0, spin_poll, NULL, -1), 0);
	b.st = rf_stats_create("ctltest");
	cr_assert_eq(rf_stats_add_runtime(b.st, b.rt), 0);
	snprintf(b.path, sizeof(b.path), "/tmp/rf-ctltest.%d.sock", (int)getpid());
	struct rf_ctl_config cc = {.stats = b.st, .sock_path = b.path, .metrics = metrics,
				   .timeout_ms = timeout_ms, .max_output_len = 1u << 20};
	b.ctl = rf_ctl_start(&cc, err, sizeof(err));
	cr_assert_not_null(b.ctl, "%s", err);
	cr_assert_eq(rf_ctl_register(b.ctl, "fail", "always fails", fail_cmd, NULL), 0);
	cr_assert_eq(rf_ctl_register(b.ctl, "echo", "says x back", echo_cmd, NULL), 0);
	cr_assert_eq(rf_ctl_register(b.ctl, "echo", "again", echo_cmd, NULL), -EEXIST);
	cr_assert_eq(rf_ctl_register(b.ctl, "stats", "shadow", echo_cmd, NULL), -EEXIST);
	cr_assert_eq(rf_ctl_register(b.ctl, "Bad Name", "", echo_cmd, NULL), -EINVAL);
	cr_assert_eq(rf_runtime_start(b.rt), 0);
	return b;
}

static void bed_down(struct bed *b)
{
	rf_ctl_stop(b->ctl);
	rf_runtime_destroy(b->rt);
	rf_stats_destroy(b->st);
}

static uint64_t rounds(struct bed *b)
{
	struct rf_counters c;
	rf_runtime_counters(b->rt, 0, &c);
	return c.loops;
}

static int conn(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	return fd;
}

/* One line (up to 1 MiB) within 5 s; "" on EOF. Caller frees. */
static char *line(int fd)
{
	size_t cap = 1u << 20, n = 0;
	char *buf = malloc(cap + 1);
	cr_assert_not_null(buf);
	while (n < cap) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		cr_assert_gt(poll(&p, 1, 5000), 0, "no answer within 5 s");
		ssize_t r = read(fd, buf + n, 1);
		if (r <= 0)
			break;
		if (buf[n] == '\n')
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return buf;
}

static struct rf_json *ask(int fd, const char *req)
{
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	cr_assert_eq(write(fd, "\n", 1), 1);
	char *l = line(fd);
	char err[160];
	struct rf_json *j = rf_json_parse(l, strlen(l), err, sizeof(err));
	cr_assert_not_null(j, "answer not JSON (%s): %s", err, l);
	free(l);
	return j;
}

static void expect_error(int fd, const char *req, const char *part)
{
	struct rf_json *j = ask(fd, req);
	const char *e = rf_json_get_str(j, "error", NULL);
	cr_assert_not_null(e, "no error for %s", req);
	cr_assert(strstr(e, part), "%s -> %s", req, e);
	rf_json_free(j);
}

Test(ctl, protocol_commands_and_errors)
{
	struct bed b = bed_up(NULL, 0);
	struct stat sb;
	cr_assert_eq(stat(b.path, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0600, "socket mode %o", sb.st_mode & 0777);
	cr_assert_str_eq(rf_ctl_path(b.ctl), b.path);
	int fd = conn(b.path);
	char *h = line(fd);
	char want[96];
	snprintf(want, sizeof(want), "{\"ringflow\":1,\"app\":\"ctltest\",\"pid\":%d,", (int)getpid());
	cr_assert(strncmp(h, want, strlen(want)) == 0, "hello: %s", h);
	free(h);

	struct rf_json *j = ask(fd, "{\"cmd\":\"list\"}");
	const struct rf_json *r = rf_json_get(j, "result");
	cr_assert_not_null(rf_json_get(r, "stats"));
	cr_assert_str_eq(rf_json_get_str(r, "echo", ""), "says x back");
	rf_json_free(j);

	for (int i = 0; i < 5000 && rounds(&b) == 0; i++) /* the poller's first round */
		usleep(1000);
	j = ask(fd, "{\"cmd\":\"stats\",\"path\":\"pollers/0\"}");
	r = rf_json_get(j, "result");
	cr_assert_gt(rf_json_get_num(r, "rx", 0), 0);
	cr_assert_not_null(rf_json_get(r, "busy_ns"));
	rf_json_free(j);

	j = ask(fd, "{\"cmd\":\"echo\",\"x\":\"hi\"}");
	cr_assert_str_eq(rf_json_get_str(rf_json_get(j, "result"), "arg", ""), "hi");
	rf_json_free(j);

	enum rf_log_level old = rf_log_get_level();
	j = ask(fd, "{\"cmd\":\"log-level\",\"level\":\"debug\"}");
	cr_assert_str_eq(rf_json_get_str(j, "result", ""), "debug");
	cr_assert_eq(rf_log_get_level(), RF_LOG_DEBUG, "the level changed in the process");
	rf_json_free(j);
	rf_log_set_level(old);

	j = ask(fd, "{\"cmd\":\"reset\"}");
	cr_assert(rf_json_get(j, "result")->b);
	rf_json_free(j);

	expect_error(fd, "{\"cmd\":\"frobnicate\"}", "unknown command \"frobnicate\"");
	expect_error(fd, "{\"cmd\":", "malformed JSON at byte 7");
	expect_error(fd, "[1,2]", "a request is a JSON object");
	expect_error(fd, "{\"cmd\":7}", "a request is a JSON object");
	expect_error(fd, "", "empty request");
	expect_error(fd, "{\"cmd\":\"stats\",\"path\":\"nope\"}", "no stats under \"nope\"");
	expect_error(fd, "{\"cmd\":\"log-level\",\"level\":\"loud\"}", "log level \"loud\"");
	expect_error(fd, "{\"cmd\":\"fail\"}", "the switch is gone");

	/* two requests in one write: two answers, in order */
	const char *two = "{\"cmd\":\"echo\",\"x\":\"1\"}\n{\"cmd\":\"echo\",\"x\":\"2\"}\n";
	cr_assert_eq(write(fd, two, strlen(two)), (ssize_t)strlen(two));
	char *a1 = line(fd), *a2 = line(fd);
	cr_assert(strstr(a1, "\"arg\":\"1\"") && strstr(a2, "\"arg\":\"2\""), "%s / %s", a1, a2);
	free(a1);
	free(a2);

	/* a request over RF_CTL_MAX_REQUEST with no newline: one error line, then closed */
	char *big = malloc(RF_CTL_MAX_REQUEST + 100);
	memset(big, 'x', RF_CTL_MAX_REQUEST + 100);
	cr_assert_eq(write(fd, big, RF_CTL_MAX_REQUEST + 100), RF_CTL_MAX_REQUEST + 100);
	free(big);
	char *e = line(fd);
	cr_assert(strstr(e, "request longer than 4096 bytes"), "%s", e);
	free(e);
	e = line(fd);
	cr_assert_str_eq(e, "", "closed after the error");
	free(e);
	close(fd);
	bed_down(&b);
	cr_assert_neq(stat(b.path, &sb), 0, "the socket file is removed on stop");
}

Test(ctl, a_client_that_never_reads_is_bounded_and_closed)
{
	struct bed b = bed_up(NULL, 300);
	int lazy = conn(b.path);
	fcntl(lazy, F_SETFL, O_NONBLOCK);
	/* Pipeline stats requests without reading until the kernel refuses more: the server
	 * stops reading this client while its answer is pending, so what we manage to write is
	 * bounded by socket buffers, not by the server's memory. */
	const char *req = "{\"cmd\":\"stats\"}\n";
	size_t sent = 0;
	uint64_t r0 = rounds(&b);
	for (int i = 0; i < 200000; i++) {
		ssize_t w = write(lazy, req, strlen(req));
		if (w < 0) {
			cr_assert_eq(errno, EAGAIN);
			break;
		}
		sent += (size_t)w;
	}
	cr_assert_lt(sent, (size_t)200000 * strlen(req), "the server read everything we sent");
	/* Meanwhile another client is served and the poller runs. */
	int fd = conn(b.path);
	free(line(fd));
	struct rf_json *j = ask(fd, "{\"cmd\":\"info\"}");
	cr_assert_str_eq(rf_json_get_str(rf_json_get(j, "result"), "app", ""), "ctltest");
	rf_json_free(j);
	/* After the timeout without progress, the lazy client is closed: reading drains what
	 * was written to it and then sees EOF (or a reset). */
	usleep(800 * 1000);
	fcntl(lazy, F_SETFL, 0);
	char buf[65536];
	ssize_t r = 1;
	size_t got = 0;
	struct pollfd p = {.fd = lazy, .events = POLLIN};
	while (poll(&p, 1, 5000) > 0 && (r = read(lazy, buf, sizeof(buf))) > 0)
		got += (size_t)r;
	cr_assert(r == 0 || (r < 0 && errno == ECONNRESET), "closed by the server (r %zd, %s)",
		  r, strerror(errno));
	cr_assert_gt(got, 0, "the hello and the answers it had room for");
	cr_assert_gt(rounds(&b), r0, "the poller kept running");
	close(lazy);
	close(fd);
	bed_down(&b);
}

Test(ctl, a_thousand_clients_at_once)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 1100) {
		rl.rlim_cur = rl.rlim_max < 1100 ? rl.rlim_max : 1100;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < 1100)
		cr_skip_test("RLIMIT_NOFILE hard limit %llu < 1100", (unsigned long long)rl.rlim_max);
	struct bed b = bed_up(NULL, 0);
	uint64_t r0 = rounds(&b);
	enum { N = 1000 };
	static int fds[N];
	for (int i = 0; i < N; i++)
		fds[i] = conn(b.path);
	int hellos = 0, refused = 0;
	for (int i = 0; i < N; i++) {
		char *l = line(fds[i]);
		if (strncmp(l, "{\"ringflow\":1,", 14) == 0)
			hellos++;
		else if (strstr(l, "\"error\":\"too many clients (64): try again\""))
			refused++;
		else
			cr_assert_fail("client %d got: %s", i, l);
		free(l);
	}
	cr_assert_eq(hellos, 64);
	cr_assert_eq(refused, N - 64);
	int served = 0;
	for (int i = 0; i < N; i++) { /* each held client is served, the others were closed */
		char *l = NULL;
		if (send(fds[i], "{\"cmd\":\"info\"}\n", 15, MSG_NOSIGNAL) == 15) {
			struct pollfd p = {.fd = fds[i], .events = POLLIN};
			if (poll(&p, 1, 5000) > 0) {
				l = line(fds[i]);
				if (*l) {
					cr_assert(strstr(l, "\"result\":{\"app\":\"ctltest\""), "%s", l);
					served++;
				}
			}
		}
		free(l);
	}
	cr_assert_eq(served, 64);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	usleep(200 * 1000);
	int fd = conn(b.path);
	char *h = line(fd);
	cr_assert(strncmp(h, "{\"ringflow\":1,", 14) == 0, "a new client is served: %s", h);
	free(h);
	close(fd);
	cr_assert_gt(rounds(&b), r0, "the poller kept running");
	bed_down(&b);
}

static char *http(int port, const char *req)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	size_t cap = 1u << 20, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (n < cap && poll(&p, 1, 5000) > 0 && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(fd);
	return buf;
}

Test(ctl, metrics_over_http)
{
	struct bed b = bed_up("127.0.0.1:0", 0);
	int port = rf_ctl_metrics_port(b.ctl);
	cr_assert_gt(port, 0);
	char *r = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	cr_assert(strncmp(r, "HTTP/1.0 200 OK\r\n", 17) == 0, "%.200s", r);
	cr_assert(strstr(r, "Content-Type: text/plain; version=0.0.4"));
	cr_assert(strstr(r, "\r\n\r\n# HELP ringflow_"), "%.300s", r);
	cr_assert(strstr(r, "ringflow_poller_rx_total{app=\"ctltest\",poller=\"0\",core=\"0\"} "));
	const char *cl = strstr(r, "Content-Length: ");
	cr_assert_not_null(cl);
	cr_assert_eq(strtoul(cl + 16, NULL, 10), strlen(strstr(r, "\r\n\r\n") + 4));
	free(r);
	r = http(port, "GET /other HTTP/1.0\r\n\r\n");
	cr_assert(strncmp(r, "HTTP/1.0 404", 12) == 0, "%.100s", r);
	free(r);
	r = http(port, "POST /metrics HTTP/1.0\r\n\r\n");
	cr_assert(strncmp(r, "HTTP/1.0 405", 12) == 0, "%.100s", r);
	free(r);
	char *big = malloc(8000);
	memset(big, 'a', 7999);
	big[7999] = '\0';
	memcpy(big, "GET /", 5);
	r = http(port, big);
	cr_assert(strncmp(r, "HTTP/1.0 431", 12) == 0, "%.100s", r);
	free(r);
	free(big);
	bed_down(&b);
}

Test(ctl, start_refuses_a_live_socket_and_replaces_a_stale_one)
{
	struct bed b = bed_up(NULL, 0);
	char err[256];
	struct rf_ctl_config cc = {.stats = b.st, .sock_path = b.path};
	struct rf_ctl *again = rf_ctl_start(&cc, err, sizeof(err));
	cr_assert_null(again);
	cr_assert(strstr(err, "cannot listen on"), "%s", err);
	cr_assert_null(strchr(err, '\n'));
	cc.sock_path = "";
	cc.metrics = "300.1.1.1:80";
	cr_assert_null(rf_ctl_start(&cc, err, sizeof(err)));
	cr_assert(strstr(err, "bad IPv4 address"), "%s", err);
	cc.metrics = "127.0.0.1";
	cr_assert_null(rf_ctl_start(&cc, err, sizeof(err)));
	cr_assert(strstr(err, "use IP:PORT"), "%s", err);
	bed_down(&b);
	/* a stale file (nobody listening) is replaced */
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", b.path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
	struct rf_stats *st = rf_stats_create("stale");
	cc = (struct rf_ctl_config){.stats = st, .sock_path = b.path};
	struct rf_ctl *c = rf_ctl_start(&cc, err, sizeof(err));
	cr_assert_not_null(c, "%s", err);
	rf_ctl_stop(c);
	rf_stats_destroy(st);
}

/* A dead process that had this PID left APP.PID.sock files; rf_ctl_start's default path removes
 * the stale ones (ringflow-ctl -p PID would take them for this process) and keeps live ones. */
Test(ctl, default_path_sweeps_stale_files_of_its_pid)
{
	char tmpl[] = "/tmp/rf-ctlsweep.XXXXXX", dir[40], stale[80], live[80], err[256];
	cr_assert_not_null(mkdtemp(tmpl));
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", tmpl, 1), 0);
	snprintf(dir, sizeof(dir), "%s/ringflow", tmpl);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(stale, sizeof(stale), "%s/switch.%d.sock", dir, (int)getpid());
	snprintf(live, sizeof(live), "%s/other.%d.sock", dir, (int)getpid());
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", stale);
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(sfd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(sfd); /* bound, never listened: what a process killed with -9 leaves */
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", live);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lfd, 4), 0);
	struct rf_stats *st = rf_stats_create("sweeper");
	struct rf_ctl_config cc = {.stats = st};
	struct rf_ctl *c = rf_ctl_start(&cc, err, sizeof(err));
	cr_assert_not_null(c, "%s", err);
	cr_assert_neq(access(stale, F_OK), 0, "the stale %s is still there", stale);
	cr_assert_eq(access(live, F_OK), 0, "the live %s was removed", live);
	rf_ctl_stop(c);
	rf_stats_destroy(st);
	close(lfd);
	unlink(live);
	rmdir(dir);
	rmdir(tmpl);
}

/* A counter past 2^53 (a ns counter after ~104 days) crosses the control socket exactly: the
 * emitter writes its digits, the reader keeps them (rf_json_u64), a double would not. */
Test(ctl, counters_above_2_53_arrive_exact)
{
	static _Atomic(uint64_t) big, top;
	atomic_store_explicit(&big, (UINT64_C(1) << 53) + 1, memory_order_relaxed);
	atomic_store_explicit(&top, UINT64_MAX - 1, memory_order_relaxed);
	struct bed b = bed_up(NULL, 0);
	cr_assert_eq(rf_stats_add_counter(b.st, "big", "2^53+1", &big), 0);
	cr_assert_eq(rf_stats_add_counter(b.st, "top", "2^64-2", &top), 0);
	int fd = conn(b.path);
	free(line(fd)); /* hello */
	struct rf_json *j = ask(fd, "{\"cmd\":\"stats\",\"path\":\"app\"}");
	const struct rf_json *r = rf_json_get(j, "result");
	cr_assert_not_null(r, "no result");
	uint64_t v = 0;
	cr_assert_eq(rf_json_u64(rf_json_get(r, "big"), &v), 0, "app/big is not an exact integer");
	cr_assert_eq(v, (UINT64_C(1) << 53) + 1, "app/big = %llu", (unsigned long long)v);
	cr_assert_neq((uint64_t)rf_json_get_num(r, "big", 0), v, "a double would have lost it");
	cr_assert_eq(rf_json_get_u64(r, "top", 0), UINT64_MAX - 1);
	rf_json_free(j);
	close(fd);
	bed_down(&b);
}
