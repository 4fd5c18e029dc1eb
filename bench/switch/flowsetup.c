/*
 * bench/switch/flowsetup.c: the flow-setup rate of a switch under a learning controller
 * (bench/switch/run.sh), measured end to end: new flows per second, PACKET_IN -> FLOW_MOD
 * (+ PACKET_OUT) -> the flow's first frame at the sink.
 *
 * One process, two raw sockets: one in the generator's namespace (--gen NS:DEV, the switch's
 * port 1) and one in the sink's (--sink NS:DEV, port 2; the sink's XDP program passes
 * ethertype 0x88b5, which every frame here uses). Both are opened after setns() into their
 * namespace, so one monotonic clock times both ends.
 *  1. learn: from the sink, one broadcast frame from each of --flows source MACs
 *     02:5e:00:xx:xx:xx (twice, paced at --learn-rate): the controller learns them on port 2
 *     and floods (no flow: the destination is broadcast).
 *  2. measure: from the generator, one frame to each of those MACs (a new flow for a
 *     learning controller: in_port 1 + eth_dst unknown to the switch), --window flows in
 *     flight; a flow is set up when its first frame reaches the sink. A flow not seen within
 *     200 ms is sent again (counted), at most 10 times; the whole phase is bounded by
 *     --timeout seconds.
 * Prints one JSON line: flows set up, per second (from the first send to the last first
 * arrival), setup latency p50/p99/max (first send -> first arrival), resends.
 *
 *   flowsetup --gen NS:DEV --sink NS:DEV [--flows N (2000)] [--window W (16)]
 *             [--learn-rate N/s (4000)] [--timeout S (30)] [--label TEXT]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ETH_P_BENCH 0x88b5
#define FRAME_LEN 60
#define MAGIC 0x52465355u /* "RFSU" */
#define MAX_FLOWS 100000
#define RESEND_NS 200000000LL
#define MAX_TRIES 10

struct flow {
	int64_t first_sent, seen;
	uint8_t tries;
};

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A raw socket on dev inside namespace ns (by name, /run/netns/NS); the caller's namespace
 * is restored afterwards. Returns the fd and the device's index, or -1 with a message. */
static int open_in(const char *spec, int *ifindex)
{
	char ns[64], dev[IF_NAMESIZE];
	const char *colon = strchr(spec, ':');
	if (!colon || colon - spec >= (int)sizeof(ns) || strlen(colon + 1) >= sizeof(dev)) {
		fprintf(stderr, "flowsetup: '%s': NS:DEV\n", spec);
		return -1;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(colon - spec), spec);
	snprintf(dev, sizeof(dev), "%s", colon + 1);
	char path[128];
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int there = open(path, O_RDONLY | O_CLOEXEC);
	if (home < 0 || there < 0 || setns(there, CLONE_NEWNET) != 0) {
		fprintf(stderr, "flowsetup: cannot enter %s: %s\n", path, strerror(errno));
		return -1;
	}
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_BENCH));
	int err = errno;
	*ifindex = (int)if_nametoindex(dev);
	if (setns(home, CLONE_NEWNET) != 0) {
		fprintf(stderr, "flowsetup: cannot return to my namespace: %s\n", strerror(errno));
		return -1;
	}
	close(home);
	close(there);
	if (fd < 0 || !*ifindex) {
		fprintf(stderr, "flowsetup: %s in %s: %s\n", dev, ns,
			fd < 0 ? strerror(err) : "no such device");
		return -1;
	}
	struct sockaddr_ll sl = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_BENCH),
				 .sll_ifindex = *ifindex};
	if (bind(fd, (struct sockaddr *)&sl, sizeof(sl)) != 0) {
		fprintf(stderr, "flowsetup: bind %s: %s\n", dev, strerror(errno));
		return -1;
	}
	return fd;
}

static void flow_mac(uint8_t mac[6], uint32_t i)
{
	mac[0] = 0x02, mac[1] = 0x5e, mac[2] = 0;
	mac[3] = (uint8_t)(i >> 16), mac[4] = (uint8_t)(i >> 8), mac[5] = (uint8_t)i;
}

static int send_frame(int fd, int ifindex, const uint8_t dst[6], const uint8_t src[6],
		      uint32_t id)
{
	uint8_t f[FRAME_LEN] = {0};
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETH_P_BENCH >> 8, f[13] = ETH_P_BENCH & 0xff;
	uint32_t w[2] = {htonl(MAGIC), htonl(id)};
	memcpy(f + 14, w, sizeof(w));
	struct sockaddr_ll sl = {.sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = 6};
	memcpy(sl.sll_addr, dst, 6);
	for (int tries = 0; tries < 100; tries++) {
		if (sendto(fd, f, sizeof(f), 0, (struct sockaddr *)&sl, sizeof(sl)) == (ssize_t)sizeof(f))
			return 0;
		if (errno != ENOBUFS && errno != EAGAIN)
			break;
		usleep(100);
	}
	fprintf(stderr, "flowsetup: send: %s\n", strerror(errno));
	return -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"gen", required_argument, NULL, 'g'}, {"sink", required_argument, NULL, 's'},
		{"flows", required_argument, NULL, 'n'}, {"window", required_argument, NULL, 'w'},
		{"learn-rate", required_argument, NULL, 'l'}, {"timeout", required_argument, NULL, 't'},
		{"label", required_argument, NULL, 'L'}, {NULL, 0, NULL, 0}};
	const char *gen = NULL, *sink = NULL, *label = "switch";
	long nflows = 2000, window = 16, learn_rate = 4000;
	double timeout = 30;
	int o;
	while ((o = getopt_long(argc, argv, "g:s:n:w:l:t:L:", opts, NULL)) != -1) {
		switch (o) {
		case 'g': gen = optarg; break;
		case 's': sink = optarg; break;
		case 'n': nflows = atol(optarg); break;
		case 'w': window = atol(optarg); break;
		case 'l': learn_rate = atol(optarg); break;
		case 't': timeout = atof(optarg); break;
		case 'L': label = optarg; break;
		default:
			fprintf(stderr, "usage: flowsetup --gen NS:DEV --sink NS:DEV [--flows N] "
					"[--window W] [--learn-rate N] [--timeout S] [--label TEXT]\n");
			return 2;
		}
	}
	if (!gen || !sink || nflows < 1 || nflows > MAX_FLOWS || window < 1 || window > 1024 ||
	    learn_rate < 1 || learn_rate > 1000000 || !(timeout > 0 && timeout <= 300)) {
		fprintf(stderr, "flowsetup: need --gen and --sink; --flows 1..%d, --window 1..1024, "
				"--learn-rate 1..1e6, --timeout (0, 300]\n", MAX_FLOWS);
		return 2;
	}
	int gidx, sidx;
	int gfd = open_in(gen, &gidx), sfd = open_in(sink, &sidx);
	if (gfd < 0 || sfd < 0)
		return 1;
	static struct flow fl[MAX_FLOWS];
	const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t gmac[6] = {0x02, 0x5e, 0xff, 0, 0, 1}; /* the generator side's one source */
	uint8_t mac[6];

	/* 1. learn, twice (a PACKET_IN the switch or controller dropped the first time). */
	for (int pass = 0; pass < 2; pass++) {
		int64_t t0 = now_ns();
		for (long i = 0; i < nflows; i++) {
			while (now_ns() - t0 < i * 1000000000LL / learn_rate)
				usleep(50);
			flow_mac(mac, (uint32_t)i);
			if (send_frame(sfd, sidx, bcast, mac, (uint32_t)i))
				return 1;
		}
		usleep(300000);
	}
	/* Drop what the learn phase left in the sink socket (nothing should reach it: the
	 * floods go to port 1). */
	uint8_t rx[2048];
	while (recv(sfd, rx, sizeof(rx), MSG_DONTWAIT) > 0)
		;

	/* 2. measure: slot[k] holds a flow in flight (or -1). */
	static long slot[1024];
	long next = 0, done = 0;
	uint64_t resends = 0, gave_up = 0, dups = 0;
	for (long k = 0; k < window; k++)
		slot[k] = -1;
	int64_t start = now_ns(), last_done = start, limit = start + (int64_t)(timeout * 1e9);
	while (done + (long)gave_up < nflows && now_ns() < limit) {
		for (long k = 0; k < window && next < nflows; k++) {
			if (slot[k] >= 0)
				continue;
			flow_mac(mac, (uint32_t)next);
			fl[next].first_sent = now_ns();
			fl[next].tries = 1;
			if (send_frame(gfd, gidx, mac, gmac, (uint32_t)next))
				return 1;
			slot[k] = next++;
		}
		struct pollfd pf = {.fd = sfd, .events = POLLIN};
		if (poll(&pf, 1, 5) > 0) {
			ssize_t r;
			while ((r = recv(sfd, rx, sizeof(rx), MSG_DONTWAIT)) >= 22) {
				uint32_t w[2];
				memcpy(w, rx + 14, sizeof(w));
				uint32_t id = ntohl(w[1]);
				if (ntohl(w[0]) != MAGIC || id >= (uint32_t)next || rx[0] != 0x02 ||
				    rx[1] != 0x5e || rx[2] != 0)
					continue; /* not a measured frame */
				if (fl[id].seen || fl[id].tries > MAX_TRIES) {
					dups++; /* a resent copy, or one given up on */
					continue;
				}
				fl[id].seen = now_ns();
				last_done = fl[id].seen;
				done++;
			}
		}
		/* Free the slots of flows seen; resend what waited RESEND_NS per try; give up
		 * after MAX_TRIES sends. */
		int64_t t = now_ns();
		for (long k = 0; k < window; k++) {
			long i = slot[k];
			if (i < 0)
				continue;
			struct flow *f = &fl[i];
			if (f->seen) {
				slot[k] = -1;
				continue;
			}
			if (t - f->first_sent < (int64_t)f->tries * RESEND_NS)
				continue;
			if (f->tries == MAX_TRIES) {
				f->tries++;
				gave_up++;
				slot[k] = -1;
				continue;
			}
			f->tries++;
			resends++;
			flow_mac(mac, (uint32_t)i);
			if (send_frame(gfd, gidx, mac, gmac, (uint32_t)i))
				return 1;
		}
	}
	int64_t *lat = calloc((size_t)nflows, sizeof(*lat));
	if (!lat)
		return 1;
	long n = 0;
	for (long i = 0; i < next; i++)
		if (fl[i].seen)
			lat[n++] = fl[i].seen - fl[i].first_sent;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_i64);
	double secs = (double)(last_done - start) / 1e9;
	printf("{\"bench\":\"switch\",\"impl\":\"%s\",\"case\":\"setup\",\"value\":%.1f,\"unit\":\"flows/s\","
	       "\"flows\":%ld,\"set_up\":%ld,\"gave_up\":%llu,\"not_sent\":%ld,\"seconds\":%.3f,"
	       "\"resends\":%llu,\"dups\":%llu,\"window\":%ld,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
	       label, secs > 0 ? (double)done / secs : 0, nflows, done, (unsigned long long)gave_up,
	       nflows - next, secs, (unsigned long long)resends, (unsigned long long)dups, window,
	       n ? (double)lat[n / 2] / 1e3 : 0, n ? (double)lat[(n * 99) / 100] / 1e3 : 0,
	       n ? (double)lat[n - 1] / 1e3 : 0);
	free(lat);
	return 0;
}
