/*
 * bench/echo/crr_floor.c: ringflow-crr-floor, the TCP_CRR floor: what plain blocking sockets do
 * for connect, one request and reply, close, repeated. Debian 12 main has no netperf and no
 * other tool that measures TCP connection rate, so bench/echo/modes.sh runs this pair beside
 * ringflow-loadgen --mode crr against ringflow-echo. No ringflow code: socket, connect, write,
 * read, close; the messages use the tcp driver's framing (2-byte big-endian length first), so
 * either end can also talk to ringflow's.
 *
 *   ringflow-crr-floor server IP:PORT                        (until SIGTERM/SIGINT)
 *   ringflow-crr-floor client IP:PORT [--size 100] [--warmup 1] [--duration 5] [--label NAME]
 *
 * The client prints one JSON line with the keys of ringflow-loadgen --mode crr --json (conn_s,
 * percentiles of connect + request + reply + close, errors). Bounded: the duration, 2M
 * connections, 1 s per connection (SO_RCVTIMEO/SO_SNDTIMEO), 100 failures in a row.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE 1400
#define MAX_CONNS 2000000

static volatile sig_atomic_t stop;

static void on_signal(int s)
{
	(void)s;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse_addr(const char *s, struct sockaddr_in *a)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	if (*end || port < 1 || port > 65535 || inet_pton(AF_INET, host, &a->sin_addr) != 1)
		return -1;
	return 0;
}

static int full_io(int fd, void *buf, size_t len, int wr)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int server(const struct sockaddr_in *a)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (const struct sockaddr *)a, sizeof(*a)) < 0 || listen(ls, 1024) < 0) {
		fprintf(stderr, "ringflow-crr-floor: cannot listen: %s\n", strerror(errno));
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: accept returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	uint64_t conns = 0, msgs = 0;
	uint8_t buf[2 + 65535];
	while (!stop) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		conns++;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		struct timeval tv = {.tv_sec = 1};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (!stop && full_io(fd, buf, 2, 0) == 0) { /* echo framed messages until EOF */
			size_t len = (size_t)buf[0] << 8 | buf[1];
			if (full_io(fd, buf + 2, len, 0) < 0 || full_io(fd, buf, len + 2, 1) < 0)
				break;
			msgs++;
		}
		close(fd);
	}
	close(ls);
	printf("ringflow-crr-floor: server: connections %llu, messages %llu\n",
	       (unsigned long long)conns, (unsigned long long)msgs);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct_us(const uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1000.0;
}

/* One connection; 0 when the reply equals the request. */
static int one(const struct sockaddr_in *a, const uint8_t *req, size_t len, uint8_t *rep)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, rc = -1;
	if (fd < 0)
		return -1;
	struct timeval tv = {.tv_sec = 1};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 &&
	    full_io(fd, (void *)req, len, 1) == 0 && full_io(fd, rep, len, 0) == 0 &&
	    memcmp(req, rep, len) == 0)
		rc = 0;
	close(fd);
	return rc;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int client(const struct sockaddr_in *a, unsigned size, double warmup, double duration,
		  const char *label)
{
	uint64_t *lat = malloc(MAX_CONNS * sizeof(*lat));
	uint8_t req[2 + MAX_SIZE], rep[2 + MAX_SIZE];
	if (!lat) {
		fprintf(stderr, "ringflow-crr-floor: out of memory\n");
		return 1;
	}
	req[0] = (uint8_t)(size >> 8);
	req[1] = (uint8_t)size;
	size_t n = 0, len = 2 + size;
	uint64_t errors = 0, made = 0, seq = 0;
	unsigned in_a_row = 0;
	uint64_t t = now_ns(), t_meas = t + (uint64_t)(warmup * 1e9);
	uint64_t t_end = t_meas + (uint64_t)(duration * 1e9), t_start = t_meas;
	double c0 = 0;
	int measuring = 0;
	while ((t = now_ns()) < t_end && n < MAX_CONNS && in_a_row < 100) {
		if (!measuring && t >= t_meas) {
			measuring = 1;
			t_start = t;
			c0 = cpu_s();
		}
		for (unsigned i = 0; i < size; i++)
			req[2 + i] = (uint8_t)(seq * 131u + i);
		seq++;
		uint64_t t0 = now_ns();
		int rc = one(a, req, len, rep);
		uint64_t t1 = now_ns();
		made++;
		in_a_row = rc ? in_a_row + 1 : 0;
		if (measuring) {
			if (rc == 0)
				lat[n++] = t1 - t0;
			else
				errors++;
		}
	}
	double secs = (double)(now_ns() - t_start) / 1e9, cpu = cpu_s() - c0;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)lat[i];
	printf("{\"mode\":\"crr\",\"backend\":\"%s\",\"size\":%u,\"seconds\":%.3f,\"conns\":1,"
	       "\"outstanding\":1,\"conn_s\":%.1f,\"errors\":%llu,\"conns_made\":%llu,"
	       "\"received_msgs\":%zu,\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,"
	       "\"p99_us\":%.2f,\"p999_us\":%.2f,\"max_us\":%.2f,\"mean_us\":%.2f,"
	       "\"cpu_client_pct\":%.1f}\n",
	       label, size, secs, secs > 0 ? (double)n / secs : 0, (unsigned long long)errors,
	       (unsigned long long)made, n, n ? (double)lat[0] / 1000.0 : 0, pct_us(lat, n, 50),
	       pct_us(lat, n, 90), pct_us(lat, n, 99), pct_us(lat, n, 99.9),
	       n ? (double)lat[n - 1] / 1000.0 : 0, n ? sum / (double)n / 1000.0 : 0,
	       secs > 0 ? 100.0 * cpu / secs : 0);
	free(lat);
	if (in_a_row >= 100) {
		fprintf(stderr, "ringflow-crr-floor: 100 connections in a row failed: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	if (argc < 3 || parse_addr(argv[2], &a) < 0) {
		fprintf(stderr, "usage: ringflow-crr-floor server|client IP:PORT [--size N] "
				"[--warmup S] [--duration S] [--label NAME]\n");
		return 2;
	}
	if (strcmp(argv[1], "server") == 0)
		return server(&a);
	if (strcmp(argv[1], "client") != 0) {
		fprintf(stderr, "ringflow-crr-floor: first argument: server or client\n");
		return 2;
	}
	unsigned size = 100;
	double warmup = 1, duration = 5;
	const char *label = "floor: blocking C client+server";
	for (int i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--size") == 0)
			size = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--warmup") == 0)
			warmup = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--duration") == 0)
			duration = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--label") == 0)
			label = argv[i + 1];
		else {
			fprintf(stderr, "ringflow-crr-floor: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (size < 1 || size > MAX_SIZE || !(warmup >= 0 && warmup <= 600) ||
	    !(duration > 0 && duration <= 3600)) {
		fprintf(stderr, "ringflow-crr-floor: --size 1..1400, --warmup 0..600, --duration "
				"0..3600\n");
		return 2;
	}
	return client(&a, size, warmup, duration, label);
}
