/*
 * tests/openflow/soak.c: `make soak` (not in CI): ringflow-controller under a mixed attack for
 * a few minutes (SOAK_S seconds, default 180), on loopback only, printing every 5 s the
 * controller's RSS, open fds and CPU, and the good switches' PACKET_IN -> reply p99 in that
 * interval. The attackers, all at once: idle connections from many addresses, a switch
 * flooding random source MACs, a switch forging LLDP, a switch that teaches thousands of
 * hosts then leaves (over and over), and REST clients (slowloris, 6 GB POSTs, GETs of
 * /api/flows). Exits 1 if a good switch was closed or stopped being answered.
 *   soak CONTROLLER_BINARY
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* defence_util.h asserts with Criterion's names: here an assertion ends the soak. */
#define SOAK_FAIL(...) (fprintf(stderr, "soak: " __VA_ARGS__), fputc('\n', stderr), exit(1))
#define cr_assert(c, ...) ((c) ? (void)0 : SOAK_FAIL("%s:%d: %s", __FILE__, __LINE__, #c))
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b))
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b))
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b))
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b))
#define cr_assert_fail(...) SOAK_FAIL("%s:%d", __FILE__, __LINE__)
#define RF_CONTROLLER_BIN "ringflow-controller"

#include "defence_util.h"

#define GOOD 4
#define LAT_MAX 4096 /* latency samples per interval per switch */

static atomic_bool stop;
static double deadline;

struct good {
	int fd;
	unsigned idx;
	pthread_mutex_t mu;
	double lat[LAT_MAX]; /* this interval's PACKET_IN -> reply, seconds */
	unsigned nlat;
	uint64_t answered;
	atomic_bool lost;
};

static struct good goods[GOOD];

static void *good_run(void *arg)
{
	struct good *g = arg;
	uint8_t a[6] = {0x02, 0x60, 0, 0, (uint8_t)g->idx, 1}, b[6] = {0x02, 0x60, 0, 0, (uint8_t)g->idx, 2};
	for (uint32_t xid = 1; !atomic_load(&stop); xid++) {
		double t = now_s();
		uint32_t port;
		if (!send_pin(g->fd, xid, xid & 1 ? a : b, xid & 1 ? b : a, 0x0800, 1 + (xid & 1)) ||
		    answer_of(g->fd, xid, &port, 10) < 0) {
			atomic_store(&g->lost, true);
			break;
		}
		pthread_mutex_lock(&g->mu);
		if (g->nlat < LAT_MAX)
			g->lat[g->nlat++] = now_s() - t;
		g->answered++;
		pthread_mutex_unlock(&g->mu);
		usleep(1000);
	}
	return NULL;
}

/* answer_of skips ECHO_REQUESTs: a good switch must answer them to stay. A second reader
 * cannot share the socket, so the good switches answer from a side channel: they send
 * something every millisecond, which keeps them alive without echoes. */

static void mac_of_rand(unsigned i, uint8_t mac[6])
{
	uint32_t x = (uint32_t)rand() ^ (i * 2654435761u);
	mac[0] = 0x02, mac[1] = 0x61, mac[2] = (uint8_t)(x >> 24), mac[3] = (uint8_t)(x >> 16);
	mac[4] = (uint8_t)(x >> 8), mac[5] = (uint8_t)x;
}

static void *mac_flood(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = try_handshake(3, 1000, 5);
		if (fd < 0) {
			usleep(100000);
			continue;
		}
		while (!atomic_load(&stop) && pin_burst(fd, 1, 5000, 128, mac_of_rand, 0x0800) == 5000)
			;
		close(fd);
	}
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	for (uint64_t dpid = 2000; !atomic_load(&stop); dpid++) {
		int fd = try_handshake(4, dpid, 5);
		if (fd < 0) {
			usleep(100000);
			continue;
		}
		pin_burst(fd, 1, 6000, 128, mac_of_rand, 0x0800);
		close(fd); /* leaves: 6000 hosts and MACs to forget */
	}
	return NULL;
}

static void *lldp_forge(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = try_handshake(5, 3000, 5);
		if (fd < 0) {
			usleep(100000);
			continue;
		}
		for (uint32_t i = 0; !atomic_load(&stop); i++) {
			uint8_t f[128];
			ssize_t n = of_lldp_build(f, sizeof(f), (const uint8_t *)"\2\0\0\0\0\1", 1 + i % 64,
						  1 + i % 48, 120);
			struct of_msg m = {.type = OF_PACKET_IN, .xid = i};
			m.u.packet_in.buffer_id = OFP_NO_BUFFER;
			m.u.packet_in.total_len = (uint16_t)n;
			m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
			m.u.packet_in.match.in_port = 100 + i % 48;
			m.u.packet_in.data = f;
			m.u.packet_in.data_len = (uint16_t)n;
			if (!send_msg(fd, &m) || (i % 500 == 499 && !echo_ok(fd, i, 10)))
				break;
		}
		close(fd);
	}
	return NULL;
}

static void *idle_flood(void *arg)
{
	(void)arg;
	static int fds[600];
	for (unsigned round = 0; !atomic_load(&stop); round++) {
		for (unsigned i = 0; i < 600; i++)
			fds[i] = connect_from(10 + (round * 600 + i) % 200, of_port_no, true);
		for (int t = 0; t < 30 && !atomic_load(&stop); t++)
			usleep(100000);
		for (unsigned i = 0; i < 600; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	return NULL;
}

static void *rest_attack(void *arg)
{
	(void)arg;
	static int fds[200];
	while (!atomic_load(&stop)) {
		for (unsigned i = 0; i < 200; i++)
			if ((fds[i] = connect_from(6, rest_port_no, true)) >= 0)
				send(fds[i], "GET / HTTP/1.1\r\nX: ", 19, MSG_NOSIGNAL | MSG_DONTWAIT);
		char req[256];
		int n = snprintf(req, sizeof(req), "POST /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				 "Content-Length: 6000000000\r\n\r\n");
		for (int i = 0; i < 20 && !atomic_load(&stop); i++) {
			int st;
			free(http_raw(req, (size_t)n, &st, 2));
			free(http_get("/api/flows/1000", &st));
			free(http_get("/api/stats", &st));
			usleep(100000);
		}
		for (unsigned i = 0; i < 200; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	return NULL;
}

static long proc_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			v = strtol(line + strlen(field) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int proc_fds(pid_t pid)
{
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "ls /proc/%d/fd 2>/dev/null | wc -l", (int)pid);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: soak CONTROLLER_BINARY (SOAK_S=seconds, default 180)\n");
		return 2;
	}
	setenv("RF_CTL_BIN", argv[1], 1);
	double secs = getenv("SOAK_S") ? atof(getenv("SOAK_S")) : 180;
	raise_nofile();
	const char *opt[] = {"--app", "learning,topology,hosts", NULL};
	ofc_start(0, true, opt);
	for (unsigned i = 0; i < GOOD; i++) {
		goods[i] = (struct good){.idx = i, .fd = try_handshake(1, 1 + i, 5)};
		pthread_mutex_init(&goods[i].mu, NULL);
		cr_assert(goods[i].fd >= 0);
	}
	pthread_t th[GOOD + 6];
	for (unsigned i = 0; i < GOOD; i++)
		pthread_create(&th[i], NULL, good_run, &goods[i]);
	void *(*att[])(void *) = {mac_flood, churn, lldp_forge, idle_flood, rest_attack};
	for (unsigned i = 0; i < 5; i++)
		pthread_create(&th[GOOD + i], NULL, att[i], NULL);
	deadline = now_s() + secs;
	double c0 = cpu_s(ofc_pid), t0 = now_s();
	static double all[GOOD * LAT_MAX];
	printf("%8s %10s %6s %7s %12s %10s\n", "t_s", "rss_kb", "fds", "cpu_%", "good_p99_ms",
	       "answered");
	int rc = 0;
	while (now_s() < deadline && !rc) {
		usleep(5000000);
		unsigned n = 0;
		uint64_t answered = 0;
		for (unsigned i = 0; i < GOOD; i++) {
			pthread_mutex_lock(&goods[i].mu);
			memcpy(all + n, goods[i].lat, goods[i].nlat * sizeof(double));
			n += goods[i].nlat;
			goods[i].nlat = 0;
			answered += goods[i].answered;
			if (atomic_load(&goods[i].lost))
				rc = 1;
			pthread_mutex_unlock(&goods[i].mu);
		}
		qsort(all, n, sizeof(double), cmp_d);
		double c1 = cpu_s(ofc_pid), t1 = now_s();
		printf("%8.0f %10ld %6d %7.0f %12.2f %10llu\n", t1 - (deadline - secs),
		       proc_kb(ofc_pid, "VmRSS:"), proc_fds(ofc_pid), 100 * (c1 - c0) / (t1 - t0),
		       n ? 1e3 * all[(size_t)(0.99 * (n - 1))] : -1.0, (unsigned long long)answered);
		fflush(stdout);
		c0 = c1, t0 = t1;
		if (!n)
			rc = 1; /* nothing answered in 5 s */
	}
	atomic_store(&stop, true);
	for (unsigned i = 0; i < GOOD + 5; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < GOOD; i++)
		close(goods[i].fd);
	free(ofc_stop());
	printf("soak: %s\n", rc ? "FAILED: a good switch was closed or not answered" : "ok");
	return rc;
}
