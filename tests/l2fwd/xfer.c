/*
 * tests/l2fwd/xfer.c: the traffic ends of the l2fwd test, run inside the test's namespaces.
 *
 *   xfer tcprecv PORT FILE             accept one connection, write what arrives to FILE
 *   xfer tcpsend IP PORT FILE          connect, send FILE, close
 *   xfer udprecv PORT FLOWS N SECS     expect N datagrams on each of FLOWS flows, each once
 *   xfer udpsend IP PORT FLOWS N US    FLOWS sockets (one source port each) send N datagrams
 *                                      each, one round every US microseconds
 *   xfer rawsend IFACE N               N frames of ethertype 0x88b5 (not IP) of 60..1514
 *                                      bytes, every other one tagged VLAN 100, to ff:..:ff
 *   xfer rawrecv IFACE N SECS [DST SRC] expect those N frames, each once, byte for byte, the
 *                                      tagged ones with their tag (the kernel hands the tag
 *                                      over apart from the frame: PACKET_AUXDATA); with DST
 *                                      and SRC (aa:bb:..), with those MACs instead
 *
 * Every mode gives up after 60 s (alarm). udprecv prints "flows F got G dup D bad B" and exits
 * 0 only when every (flow, seq) arrived exactly once. Exit status 2 is a usage or setup error.
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FLOWS 256
#define MAX_N 100000

static int die(const char *what)
{
	fprintf(stderr, "xfer: %s: %s\n", what, strerror(errno));
	return 2;
}

static struct sockaddr_in addr(const char *ip, const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (ip)
		inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static int tcprecv(const char *port, const char *file)
{
	struct sockaddr_in a = addr(NULL, port);
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1))
		return die("bind/listen");
	int c = accept(s, NULL, NULL);
	FILE *out = fopen(file, "wb");
	if (c < 0 || !out)
		return die("accept/open");
	char buf[65536];
	ssize_t n;
	while ((n = read(c, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	fclose(out);
	return n < 0 ? die("read") : 0;
}

static int tcpsend(const char *ip, const char *port, const char *file)
{
	struct sockaddr_in a = addr(ip, port);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	FILE *in = fopen(file, "rb");
	if (!in)
		return die("open");
	for (int tries = 0; connect(s, (struct sockaddr *)&a, sizeof(a)) != 0; tries++) {
		if (tries == 50)
			return die("connect");
		close(s);
		s = socket(AF_INET, SOCK_STREAM, 0);
		usleep(100000); /* the receiver may not listen yet */
	}
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		for (size_t o = 0; o < n;) {
			ssize_t w = write(s, buf + o, n - o);
			if (w <= 0)
				return die("write");
			o += (size_t)w;
		}
	fclose(in);
	shutdown(s, SHUT_WR);
	char tmp;
	(void)!read(s, &tmp, 1); /* wait for the receiver's close: everything arrived */
	return 0;
}

struct dgram {
	uint32_t flow, seq, check;
};

static int udprecv(const char *port, unsigned flows, unsigned n, unsigned secs)
{
	struct sockaddr_in a = addr(NULL, port);
	int s = socket(AF_INET, SOCK_DGRAM, 0), rcvbuf = 8 << 20;
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)))
		return die("bind");
	uint8_t *seen = calloc((size_t)flows * n, 1);
	unsigned got = 0, dup = 0, bad = 0;
	if (!seen)
		return die("calloc");
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("ready\n");
	fflush(stdout);
	while (got < flows * n) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= (time_t)secs || poll(&p, 1, 200) < 0)
			break;
		struct dgram d;
		if (!(p.revents & POLLIN) || recv(s, &d, sizeof(d), 0) != sizeof(d))
			continue;
		if (d.flow >= flows || d.seq >= n || d.check != (d.flow * 2654435761u ^ d.seq)) {
			bad++;
			continue;
		}
		if (seen[(size_t)d.flow * n + d.seq]++)
			dup++;
		else
			got++;
	}
	printf("flows %u got %u of %u dup %u bad %u\n", flows, got, flows * n, dup, bad);
	free(seen);
	return got == flows * n && !dup && !bad ? 0 : 1;
}

static int udpsend(const char *ip, const char *port, unsigned flows, unsigned n, unsigned us)
{
	struct sockaddr_in a = addr(ip, port);
	int s[MAX_FLOWS];
	for (unsigned f = 0; f < flows; f++) {
		s[f] = socket(AF_INET, SOCK_DGRAM, 0);
		if (s[f] < 0 || connect(s[f], (struct sockaddr *)&a, sizeof(a)))
			return die("socket/connect");
	}
	for (unsigned i = 0; i < n; i++) {
		for (unsigned f = 0; f < flows; f++) {
			struct dgram d = {f, i, f * 2654435761u ^ i};
			if (send(s[f], &d, sizeof(d), 0) != sizeof(d))
				return die("send");
		}
		usleep(us);
	}
	return 0;
}

/* Frame i: broadcast, source 02:..:i, [VLAN 100 when i is odd], 0x88b5, i, then a pattern. */
static size_t raw_frame(unsigned i, uint8_t *f)
{
	size_t len = 60 + (i * 97) % (1514 - 60 + 1), o = 12;
	memset(f, 0xff, 6);
	memcpy(f + 6, (uint8_t[]){0x02, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i}, 6);
	if (i & 1) {
		memcpy(f + o, (uint8_t[]){0x81, 0x00, 0x00, 100}, 4);
		o += 4;
	}
	f[o++] = 0x88, f[o++] = 0xb5;
	memcpy(f + o, &i, 4);
	for (size_t j = o + 4; j < len; j++)
		f[j] = (uint8_t)(i * 31 + j);
	return len;
}

static int raw_socket(const char *ifname)
{
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), one = 1, buf = 8 << 20;
	/* Room for every frame of a run if the receiver is descheduled for a while. */
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				.sll_ifindex = (int)if_nametoindex(ifname)};
	if (s < 0 || !a.sll_ifindex || bind(s, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	setsockopt(s, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
	return s;
}

static int rawsend(const char *ifname, unsigned n)
{
	int s = raw_socket(ifname);
	uint8_t f[1600];
	if (s < 0)
		return die("raw socket");
	for (unsigned i = 0; i < n; i++) {
		size_t len = raw_frame(i, f);
		if (send(s, f, len, 0) != (ssize_t)len)
			return die("send");
		usleep(1000);
	}
	return 0;
}

static int parse_mac(const char *s, uint8_t *m)
{
	unsigned v[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
	return 0;
}

static int rawrecv(const char *ifname, unsigned n, unsigned secs, const uint8_t *macs)
{
	int s = raw_socket(ifname);
	uint8_t *seen = calloc(n, 1), f[2048], want[2048];
	unsigned got = 0, bad = 0, dup = 0;
	if (s < 0 || !seen)
		return die("raw socket");
	printf("ready\n");
	fflush(stdout);
	time_t end = time(NULL) + (time_t)secs;
	while (got < n && time(NULL) < end) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		if (poll(&p, 1, 200) <= 0)
			continue;
		union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))]; } c;
		struct iovec iov = {f + 4, sizeof(f) - 4}; /* room to put a stripped tag back */
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &c,
				   .msg_controllen = sizeof(c)};
		ssize_t r = recvmsg(s, &m, 0);
		if (r < 14)
			continue;
		uint8_t *fr = f + 4;
		size_t len = (size_t)r;
		for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
			struct tpacket_auxdata *ad = (struct tpacket_auxdata *)CMSG_DATA(h);
			if (h->cmsg_level == SOL_PACKET && h->cmsg_type == PACKET_AUXDATA &&
			    (ad->tp_status & TP_STATUS_VLAN_VALID)) {
				memmove(f, f + 4, 12);
				f[12] = 0x81, f[13] = 0x00;
				f[14] = (uint8_t)(ad->tp_vlan_tci >> 8), f[15] = (uint8_t)ad->tp_vlan_tci;
				fr = f;
				len += 4;
			}
		}
		size_t o = fr[12] == 0x81 ? 16 : 12;
		if (fr[o] != 0x88 || fr[o + 1] != 0xb5)
			continue; /* not ours (IPv6 neighbour discovery, ...) */
		unsigned i;
		memcpy(&i, fr + o + 2, 4);
		size_t wlen = i < n ? raw_frame(i, want) : 0;
		if (macs) /* --mac-rewrite: the forwarder replaced both addresses */
			memcpy(want, macs, 12);
		if (i >= n || wlen != len || memcmp(want, fr, len)) {
			bad++;
			continue;
		}
		if (seen[i]++)
			dup++;
		else
			got++;
	}
	printf("frames got %u of %u dup %u bad %u\n", got, n, dup, bad);
	free(seen);
	return got == n && !dup && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	alarm(60);
	if (argc == 4 && !strcmp(argv[1], "tcprecv"))
		return tcprecv(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "tcpsend"))
		return tcpsend(argv[2], argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "udprecv")) {
		unsigned f = (unsigned)atoi(argv[3]), n = (unsigned)atoi(argv[4]);
		if (f < 1 || f > MAX_FLOWS || n < 1 || n > MAX_N)
			return 2;
		return udprecv(argv[2], f, n, (unsigned)atoi(argv[5]));
	}
	if (argc == 7 && !strcmp(argv[1], "udpsend")) {
		unsigned f = (unsigned)atoi(argv[4]), n = (unsigned)atoi(argv[5]);
		if (f < 1 || f > MAX_FLOWS || n < 1 || n > MAX_N)
			return 2;
		return udpsend(argv[2], argv[3], f, n, (unsigned)atoi(argv[6]));
	}
	if (argc == 4 && !strcmp(argv[1], "rawsend"))
		return rawsend(argv[2], (unsigned)atoi(argv[3]));
	if ((argc == 5 || argc == 7) && !strcmp(argv[1], "rawrecv")) {
		uint8_t macs[12];
		if (argc == 7 && (parse_mac(argv[5], macs) || parse_mac(argv[6], macs + 6)))
			return 2;
		return rawrecv(argv[2], (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
			       argc == 7 ? macs : NULL);
	}
	fprintf(stderr, "usage: see tests/l2fwd/xfer.c\n");
	return 2;
}
