/*
 * bench/fwd/fwd_latency.c: latency through a forwarder, for the forwarding bed (run.sh).
 * Two roles over raw AF_PACKET sockets bound to one device and one ethertype (0x88b5, IEEE
 * local experimental), so nothing else on the link is read or answered:
 *
 *   fwd_latency reflect --dev DEV --duration S
 *       (in SINK) sends every frame of that ethertype back out, source and destination MAC
 *       swapped, until S seconds have passed; prints how many it reflected.
 *   fwd_latency ping --dev DEV --dst MAC --rate PPS --duration S [--warmup S] [--label L]
 *       (in GEN) sends 60-byte frames to MAC at PPS on a fixed schedule (open loop), each
 *       carrying a sequence number and its send time (CLOCK_MONOTONIC); receives the
 *       reflections and prints one JSON line: p50/p90/p99/max of the round trip in us, sent,
 *       received, lost, duplicated (frames sent in the warm-up are not counted).
 *
 *   fwd_latency listen --dev DEV --duration S [--label L]
 *       (in GEN) the receiving half alone, for frames ringflow-pktgen --timestamps sends at rates
 *       this sender never reaches: the same payload, its pad holding the sending CPU and the
 *       send time stamped by the XDP program (bpf_ktime_get_ns, CLOCK_MONOTONIC as here).
 *       Reads reflections for S seconds and prints the same JSON line with received and
 *       duplicated; "sent" is -1: the generator's own count says what went out.
 *
 * The round trip GEN -> FWD -> SINK -> FWD -> GEN includes the two tools' own wake-ups: the
 * sender blocks in ppoll between sends, so that both tools can share one CPU (the bed's other
 * CPU is the forwarder's). Plain C11 + POSIX/Linux, no ringflow code: it measures the others.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAT_ETHERTYPE 0x88b5
#define LAT_MAGIC 0x72666c74u /* "rflt" */
#define LAT_FRAME 60          /* 64 bytes on the wire with the FCS */
#define LAT_MAX_SAMPLES (4u << 20)

struct lat_payload { /* after the 14-byte Ethernet header, unaligned: memcpy in and out */
	uint32_t magic;
	uint32_t pad;
	uint64_t seq;
	uint64_t sent_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_sock(const char *dev, int *ifindex, uint8_t mac[6])
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(LAT_ETHERTYPE));
	if (fd < 0) {
		fprintf(stderr, "fwd_latency: socket(AF_PACKET): %s (needs root)\n", strerror(errno));
		return -1;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(dev) >= sizeof(ifr.ifr_name)) {
		fprintf(stderr, "fwd_latency: device name '%s' too long\n", dev);
		close(fd);
		return -1;
	}
	strcpy(ifr.ifr_name, dev);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) != 0) {
		fprintf(stderr, "fwd_latency: no device '%s' here: %s\n", dev, strerror(errno));
		close(fd);
		return -1;
	}
	*ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		fprintf(stderr, "fwd_latency: %s: no MAC address: %s\n", dev, strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	struct sockaddr_ll sll;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(LAT_ETHERTYPE);
	sll.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		fprintf(stderr, "fwd_latency: bind to %s: %s\n", dev, strerror(errno));
		close(fd);
		return -1;
	}
	int big = 4 << 20;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	return fd;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int parse_num(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo && x <= hi)) {
		fprintf(stderr, "fwd_latency: %s wants a number in [%g, %g], got '%s'\n", opt, lo, hi, v);
		return -1;
	}
	*out = x;
	return 0;
}

static int reflect(const char *dev, double duration)
{
	int ifindex;
	uint8_t mac[6];
	int fd = open_sock(dev, &ifindex, mac);
	if (fd < 0)
		return 1;
	uint64_t end = now_ns() + (uint64_t)(duration * 1e9);
	unsigned long long n = 0;
	uint8_t buf[2048], tmp[6];
	for (;;) {
		uint64_t t = now_ns();
		if (t >= end)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left_ms = (int)((end - t) / 1000000u) + 1;
		if (poll(&p, 1, left_ms > 100 ? 100 : left_ms) <= 0)
			continue;
		for (;;) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			if (len < 0)
				break;
			if (from.sll_pkttype == PACKET_OUTGOING || len < 14)
				continue;
			memcpy(tmp, buf, 6); /* swap the MACs: back to whoever sent it */
			memcpy(buf, buf + 6, 6);
			memcpy(buf + 6, tmp, 6);
			if (send(fd, buf, (size_t)len, 0) == len)
				n++;
		}
	}
	fprintf(stderr, "fwd_latency: reflected %llu frames on %s\n", n, dev);
	close(fd);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1e3;
}

/* Reads every reflection waiting on the socket; records the RTT of those sent after warm-up. */
static void drain(int fd, uint64_t nsent, uint64_t warm, uint8_t *seen, uint64_t *rtt, size_t *nrtt,
		  uint64_t *dup)
{
	uint8_t buf[2048];
	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		uint64_t t = now_ns();
		if (len < 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING || len < 14 + (ssize_t)sizeof(struct lat_payload))
			continue;
		struct lat_payload pl;
		memcpy(&pl, buf + 14, sizeof(pl));
		if (pl.magic != LAT_MAGIC || pl.seq >= nsent)
			continue;
		if (seen[pl.seq / 8] & (1u << (pl.seq % 8))) {
			(*dup)++;
			continue;
		}
		seen[pl.seq / 8] |= (uint8_t)(1u << (pl.seq % 8));
		if (pl.seq >= warm && *nrtt < LAT_MAX_SAMPLES)
			rtt[(*nrtt)++] = t - pl.sent_ns;
	}
}

static int ping(const char *dev, const uint8_t dst[6], double rate, double duration, double warmup,
		const char *label)
{
	uint64_t warm = (uint64_t)(rate * warmup), total = warm + (uint64_t)(rate * duration);
	if (total - warm > LAT_MAX_SAMPLES || total == warm) {
		fprintf(stderr, "fwd_latency: rate x duration must give 1..%u samples\n", LAT_MAX_SAMPLES);
		return 2;
	}
	int ifindex;
	uint8_t mac[6];
	int fd = open_sock(dev, &ifindex, mac);
	if (fd < 0)
		return 1;
	uint8_t *seen = calloc(total / 8 + 1, 1);
	uint64_t *rtt = malloc((total - warm) * sizeof(*rtt));
	if (!seen || !rtt) {
		fprintf(stderr, "fwd_latency: out of memory\n");
		free(seen);
		free(rtt);
		close(fd);
		return 1;
	}
	uint8_t frame[LAT_FRAME];
	memset(frame, 0, sizeof(frame));
	memcpy(frame, dst, 6);
	memcpy(frame + 6, mac, 6);
	frame[12] = LAT_ETHERTYPE >> 8;
	frame[13] = LAT_ETHERTYPE & 0xff;
	double period = 1e9 / rate;
	size_t nrtt = 0;
	uint64_t sent = 0, send_err = 0, dup = 0, start = now_ns();
	while (sent < total) {
		uint64_t t = now_ns();
		/* every frame whose time has come goes now (open loop: a late sender catches up) */
		while (sent < total && (double)(t - start) >= (double)sent * period) {
			struct lat_payload pl = {.magic = LAT_MAGIC, .seq = sent, .sent_ns = now_ns()};
			memcpy(frame + 14, &pl, sizeof(pl));
			if (send(fd, frame, sizeof(frame), 0) != (ssize_t)sizeof(frame))
				send_err++;
			sent++;
			t = now_ns();
		}
		drain(fd, sent, warm, seen, rtt, &nrtt, &dup);
		if (sent >= total)
			break;
		double next = (double)start + (double)sent * period;
		t = now_ns();
		if (next > (double)t) {
			uint64_t wait = (uint64_t)(next - (double)t);
			struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000u), .tv_nsec = (long)(wait % 1000000000u)};
			struct pollfd p = {.fd = fd, .events = POLLIN};
			(void)ppoll(&p, 1, &ts, NULL);
		}
	}
	uint64_t grace = now_ns() + 300000000u; /* stragglers: 300 ms */
	while (now_ns() < grace) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 50) > 0)
			drain(fd, sent, warm, seen, rtt, &nrtt, &dup);
	}
	qsort(rtt, nrtt, sizeof(*rtt), cmp_u64);
	uint64_t counted = total - warm;
	printf("{\"bench\":\"fwd\",\"impl\":\"%s\",\"case\":\"rtt_64B\",\"rate_pps\":%.0f,\"value\":%.2f,"
	       "\"unit\":\"us\",\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,\"max_us\":%.2f,"
	       "\"sent\":%llu,\"received\":%zu,\"lost\":%llu,\"dup\":%llu,\"send_errors\":%llu}\n",
	       label, rate, pct(rtt, nrtt, 0.5), pct(rtt, nrtt, 0.5), pct(rtt, nrtt, 0.9), pct(rtt, nrtt, 0.99),
	       nrtt ? (double)rtt[nrtt - 1] / 1e3 : 0.0, (unsigned long long)counted, nrtt,
	       (unsigned long long)(counted - nrtt), (unsigned long long)dup, (unsigned long long)send_err);
	free(seen);
	free(rtt);
	close(fd);
	return nrtt > 0 ? 0 : 3;
}

/* A frame of ringflow-pktgen is (cpu, seq): one bit each, cpu below 64, index below LISTEN_BITS
 * (beyond that a frame is counted but not checked for a duplicate: said in "unchecked"). */
#define LISTEN_BITS (1ull << 27) /* 16 MiB of bitmap */

static int listen_rtt(const char *dev, double duration, const char *label)
{
	int ifindex;
	uint8_t mac[6];
	int fd = open_sock(dev, &ifindex, mac);
	if (fd < 0)
		return 1;
	uint8_t *seen = calloc(LISTEN_BITS / 8, 1);
	uint64_t *rtt = malloc(LAT_MAX_SAMPLES * sizeof(*rtt));
	if (!seen || !rtt) {
		fprintf(stderr, "fwd_latency: out of memory\n");
		free(seen);
		free(rtt);
		close(fd);
		return 1;
	}
	size_t nrtt = 0;
	uint64_t received = 0, dup = 0, unchecked = 0, end = now_ns() + (uint64_t)(duration * 1e9);
	uint8_t buf[2048];
	for (;;) {
		uint64_t t = now_ns();
		if (t >= end)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int left_ms = (int)((end - t) / 1000000u) + 1;
		if (poll(&p, 1, left_ms > 100 ? 100 : left_ms) <= 0)
			continue;
		for (;;) {
			struct sockaddr_ll from;
			socklen_t fl = sizeof(from);
			ssize_t len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
			uint64_t now = now_ns();
			if (len < 0)
				break;
			if (from.sll_pkttype == PACKET_OUTGOING || len < 14 + (ssize_t)sizeof(struct lat_payload))
				continue;
			struct lat_payload pl;
			memcpy(&pl, buf + 14, sizeof(pl));
			if (pl.magic != LAT_MAGIC || pl.sent_ns > now)
				continue;
			received++;
			uint64_t bit = pl.seq * 64 + pl.pad; /* pad: the sending CPU */
			if (pl.pad >= 64 || pl.seq >= LISTEN_BITS / 64) {
				unchecked++;
			} else if (seen[bit / 8] & (1u << (bit % 8))) {
				dup++;
				continue;
			} else {
				seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
			}
			if (nrtt < LAT_MAX_SAMPLES)
				rtt[nrtt++] = now - pl.sent_ns;
		}
	}
	qsort(rtt, nrtt, sizeof(*rtt), cmp_u64);
	printf("{\"bench\":\"fwd\",\"impl\":\"%s\",\"case\":\"rtt_64B\",\"value\":%.2f,\"unit\":\"us\","
	       "\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,\"max_us\":%.2f,\"sent\":-1,"
	       "\"received\":%llu,\"dup\":%llu,\"unchecked\":%llu,\"samples\":%zu}\n",
	       label, pct(rtt, nrtt, 0.5), pct(rtt, nrtt, 0.5), pct(rtt, nrtt, 0.9), pct(rtt, nrtt, 0.99),
	       nrtt ? (double)rtt[nrtt - 1] / 1e3 : 0.0, (unsigned long long)received,
	       (unsigned long long)dup, (unsigned long long)unchecked, nrtt);
	free(seen);
	free(rtt);
	close(fd);
	return 0;
}

static void usage(FILE *o)
{
	fprintf(o, "usage: fwd_latency reflect --dev DEV --duration S\n"
		   "       fwd_latency ping --dev DEV --dst MAC --rate PPS --duration S [--warmup S] [--label L]\n"
		   "       fwd_latency listen --dev DEV --duration S [--label L]   (ringflow-pktgen --timestamps)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "reflect") && strcmp(argv[1], "ping") && strcmp(argv[1], "listen"))) {
		usage(stderr);
		return 2;
	}
	const char *mode = argv[1], *dev = NULL, *label = "fwd";
	uint8_t dst[6];
	int have_dst = 0;
	double rate = 1000, duration = 3, warmup = 0.5;
	static const struct option opts[] = {
		{"dev", required_argument, 0, 'd'},	 {"dst", required_argument, 0, 'm'},
		{"rate", required_argument, 0, 'r'},	 {"duration", required_argument, 0, 't'},
		{"warmup", required_argument, 0, 'w'}, {"label", required_argument, 0, 'l'},
		{"help", no_argument, 0, 'h'},		 {0, 0, 0, 0}};
	int c;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'm':
			if (parse_mac(optarg, dst) != 0) {
				fprintf(stderr, "fwd_latency: --dst wants a MAC like 02:00:00:00:00:01, got '%s'\n", optarg);
				return 2;
			}
			have_dst = 1;
			break;
		case 'r':
			if (parse_num("--rate", optarg, 1, 1e6, &rate))
				return 2;
			break;
		case 't':
			if (parse_num("--duration", optarg, 0.01, 600, &duration))
				return 2;
			break;
		case 'w':
			if (parse_num("--warmup", optarg, 0, 60, &warmup))
				return 2;
			break;
		case 'l': label = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!dev) {
		fprintf(stderr, "fwd_latency: --dev is required\n");
		return 2;
	}
	if (!strcmp(mode, "reflect"))
		return reflect(dev, duration);
	if (strpbrk(label, "\"\\")) {
		fprintf(stderr, "fwd_latency: --label may not contain quotes or backslashes\n");
		return 2;
	}
	if (!strcmp(mode, "listen"))
		return listen_rtt(dev, duration, label);
	if (!have_dst) {
		fprintf(stderr, "fwd_latency: ping needs --dst MAC (the reflector's device)\n");
		return 2;
	}
	if (strpbrk(label, "\"\\")) {
		fprintf(stderr, "fwd_latency: --label may not contain quotes or backslashes\n");
		return 2;
	}
	return ping(dev, dst, rate, duration, warmup, label);
}
