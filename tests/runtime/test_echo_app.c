/*
 * tests/runtime/test_echo_app.c: ringflow-echo as a user runs it: it echoes, SIGTERM and
 * SIGINT stop it cleanly (exit 0) and it prints the final counters; a bad backend is one
 * line on stderr and a non-zero exit. Every wait is bounded; the child is killed by its
 * PID if it does not stop.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

struct child {
	pid_t pid;
	int out, err; /* read ends of its stdout and stderr */
};

static struct child spawn(char *const argv[])
{
	int po[2], pe[2];
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	struct child c = {.pid = fork()};
	cr_assert(c.pid >= 0);
	if (c.pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]), close(pe[0]), close(po[1]), close(pe[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(po[1]), close(pe[1]);
	c.out = po[0], c.err = pe[0];
	return c;
}

/* Wait up to 10 s for the child; its exit status, or -1 (then it was killed). */
static int reap(struct child *c)
{
	int st;
	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(c->pid, &st, WNOHANG);
		if (r == c->pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(c->pid, SIGKILL);
	waitpid(c->pid, &st, 0);
	return -1;
}

static void slurp(int fd, char *buf, size_t len)
{
	size_t o = 0;
	ssize_t r;
	while (o + 1 < len && (r = read(fd, buf + o, len - 1 - o)) > 0)
		o += (size_t)r;
	buf[o] = '\0';
	close(fd);
}

static unsigned free_udp_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(a);
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a, &sl);
	close(fd);
	return ntohs(a.sin_port);
}

static void echo_then_signal(int sig)
{
	unsigned port = free_udp_port();
	char spec[64];
	snprintf(spec, sizeof(spec), "udp:listen=127.0.0.1:%u", port);
	char *argv[] = {RF_ECHO_BIN, "--backend", spec, "--cores", "0", NULL};
	struct child c = spawn(argv);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct timeval tv = {0, 200000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	/* Until the reflector is up, messages go unanswered: retry each one a bounded number
	 * of times, then count exactly 100 answered ones. */
	unsigned answered = 0;
	for (unsigned i = 0; i < 100; i++) {
		char m[32], in[64];
		int l = snprintf(m, sizeof(m), "hello %u", i);
		bool ok = false;
		for (int t = 0; t < 50 && !ok; t++) {
			send(fd, m, (size_t)l, 0);
			ssize_t r = recv(fd, in, sizeof(in), 0);
			ok = r == l && memcmp(in, m, (size_t)l) == 0;
			if (!ok)
				usleep(20000); /* not up yet (ECONNREFUSED) or a lost answer */
		}
		answered += ok;
	}
	close(fd);
	cr_assert_eq(answered, 100u);
	kill(c.pid, sig);
	int status = reap(&c);
	char out[4096], err[4096];
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert_eq(status, 0, "exit %d; stderr: %s", status, err);
	/* Retried sends may have been echoed twice: at least 100 in, as many out. */
	unsigned long rx = 0, tx = 0;
	cr_assert(sscanf(out, "ringflow-echo: rx %lu tx %lu", &rx, &tx) == 2, "stdout: %s", out);
	cr_assert_geq(rx, 100);
	cr_assert_eq(rx, tx);
	cr_assert(strstr(out, "driver udp rx"), "stdout: %s", out);
}

Test(echo_app, sigterm_stops_and_prints_counters)
{
	echo_then_signal(SIGTERM);
}

Test(echo_app, sigint_stops_and_prints_counters)
{
	echo_then_signal(SIGINT);
}

Test(echo_app, bad_backend_is_one_line_and_nonzero_exit)
{
	char *argv[] = {RF_ECHO_BIN, "--backend", "udp:lisen=1.2.3.4:9", NULL};
	struct child c = spawn(argv);
	int status = reap(&c);
	char out[1024], err[1024];
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert_eq(status, 1);
	cr_assert_str_eq(err, "ringflow-echo: udp: unknown key 'lisen'; valid keys: listen, connect, "
			      "bind, busy_poll, rcvbuf, sndbuf, queues, frames\n");
	char *argv2[] = {RF_ECHO_BIN, "--help", NULL};
	c = spawn(argv2);
	cr_assert_eq(reap(&c), 0);
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert(strstr(out, "usage: ringflow-echo --backend SPEC"), "%s", out);
}

Test(echo_app, buffers_below_one_cache_are_refused_up_front)
{
	char *argv[] = {RF_ECHO_BIN, "--backend", "udp:listen=127.0.0.1:0", "--buffers", "64", NULL};
	struct child c = spawn(argv);
	int status = reap(&c);
	char out[1024], err[1024];
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert_eq(status, 2, "exit %d; stderr: %s", status, err);
	cr_assert_str_eq(err, "ringflow-echo: --buffers 64: not in 256..16777216\n");
}

#ifdef RF_LOADGEN_BIN
Test(echo_app, loadgen_given_a_listen_spec_says_so)
{
	char *argv[] = {RF_LOADGEN_BIN, "--backend", "udp:listen=127.0.0.1:19500", "--rates", "1k",
			"--duration", "0.1", "--warmup", "0", NULL};
	struct child c = spawn(argv);
	int status = reap(&c);
	char out[1024], err[1024];
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert_eq(status, 2, "exit %d; stderr: %s", status, err);
	cr_assert(strstr(err, "give connect=IP:PORT"), "%s", err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

Test(echo_app, loadgen_aimed_at_a_dead_port_says_it_refuses)
{
	char spec[64];
	snprintf(spec, sizeof(spec), "udp:connect=127.0.0.1:%u", free_udp_port());
	char *argv[] = {RF_LOADGEN_BIN, "--backend", spec, "--rates", "20k,100k", "--duration",
			"5", NULL};
	struct child c = spawn(argv);
	int status = reap(&c);
	char out[1024], err[1024];
	slurp(c.out, out, sizeof(out));
	slurp(c.err, err, sizeof(err));
	cr_assert_eq(status, 2, "exit %d; stderr: %s", status, err);
	cr_assert(strstr(err, "the port refuses"), "%s", err);
	cr_assert_null(strstr(err, "loadgen: [1/2]"), "a point was run: %s", err);
}
#endif
