/*
 * bench/switch/ofchurn.c: flow churn for the switch benchmark (bench/switch/run.sh). Connects
 * to an OpenFlow 1.3 listener (ringflow-switch --listen, or an OVS bridge's ptcp controller),
 * exchanges HELLOs and then applies FLOW_MODs at a paced rate for a bounded time and count:
 * step j adds churn flow j (priority 10, eth_type 0x0800, ipv4_dst 172.16.0.0 + j % 65536,
 * output port 2) and, once --window flows are in, deletes flow j - window (DELETE_STRICT), so
 * the table holds about --window churn flows and every FLOW_MOD changes it. The traffic of the
 * benchmark never matches 172.16/16: churn only changes the table under it.
 *
 *   ofchurn --connect IP:PORT [--rate N/s (10000)] [--duration S (5)] [--window N (1000)]
 *
 * A BARRIER_REQUEST follows every 500 FLOW_MODs; with 8 barriers unanswered the client waits
 * (the switch is behind): the rate it reports is what the switch took, not what was offered.
 * ECHO_REQUESTs are answered, ERRORs counted. At the end: one JSON line on stdout with the
 * FLOW_MODs sent, the applied rate (FLOW_MODs answered by a barrier, per second from the start
 * to the last answer), the errors and the seconds spent waiting for barriers. Exit 0, or 1
 * with a one-line reason.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "of.h"

#define BARRIER_EVERY 500
#define MAX_BARRIERS 8

struct churn {
	int fd;
	uint8_t in[1 << 17];
	size_t in_len;
	uint32_t xid;
	uint64_t sent, errors, barriers_sent, barriers_done, echoes;
	uint64_t applied; /* FLOW_MODs covered by an answered barrier */
	double last_barrier; /* when the last barrier was answered (CLOCK_MONOTONIC s) */
	bool hello;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads what is there (waits up to wait_ms for something) and handles whole messages. */
static int pump(struct churn *c, int wait_ms)
{
	struct pollfd pf = {.fd = c->fd, .events = POLLIN};
	if (poll(&pf, 1, wait_ms) <= 0)
		return 0;
	ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
		fprintf(stderr, "ofchurn: the switch closed the connection\n");
		return -1;
	}
	if (r > 0)
		c->in_len += (size_t)r;
	struct of_framer fr = {.version = c->hello ? OF_VERSION_1_3 : 0};
	size_t off = 0;
	for (;;) {
		struct of_frame f;
		of_frame(&fr, c->in + off, c->in_len - off, &f);
		if (f.kind == OF_FRAME_NEED_MORE)
			break;
		if (f.kind == OF_FRAME_BAD) {
			if (f.fault.close) {
				fprintf(stderr, "ofchurn: bad stream from the switch: %s\n", f.fault.why);
				return -1;
			}
			off += f.len;
			continue;
		}
		const uint8_t *m = c->in + off;
		uint8_t type = m[1];
		if (!c->hello) {
			if (type != 0 /* HELLO */) {
				fprintf(stderr, "ofchurn: first message was not a HELLO\n");
				return -1;
			}
			c->hello = true;
		} else if (type == 1 /* ERROR */) {
			c->errors++;
		} else if (type == 2 /* ECHO_REQUEST */) {
			uint8_t rep[OF_MAX_MSG_LEN];
			memcpy(rep, m, f.len);
			rep[1] = 3; /* ECHO_REPLY: same xid and data */
			if (send_all(c->fd, rep, f.len))
				return -1;
			c->echoes++;
		} else if (type == 21 /* 1.3 BARRIER_REPLY */) {
			c->barriers_done++;
			c->applied = c->barriers_done * BARRIER_EVERY;
			c->last_barrier = now_s();
		}
		off += f.len;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return 0;
}

static ssize_t churn_mod(uint8_t *buf, size_t cap, uint32_t xid, uint8_t command, uint32_t j)
{
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = xid};
	struct of_flow_mod *fm = &m.u.flow_mod;
	fm->command = command;
	fm->priority = 10;
	fm->buffer_id = OFP_NO_BUFFER;
	fm->out_port = OFPP_ANY;
	fm->out_group = OFPG_ANY;
	fm->match.fields = OF_MATCH_ETH_TYPE | OF_MATCH_IPV4_DST;
	fm->match.eth_type = 0x0800;
	fm->match.ipv4_dst = (172u << 24 | 16u << 16) + (j & 0xffff);
	if (command == OFPFC_ADD) {
		fm->actions.n = 1;
		fm->actions.a[0].port = 2;
	}
	return of_serialize(&m, buf, cap);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ofchurn --connect IP:PORT [--rate N] [--duration S] [--window N]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'}, {"rate", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'}, {"window", required_argument, NULL, 'w'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	const char *connect_to = NULL;
	double rate = 10000, duration = 5;
	long window = 1000;
	int o;
	while ((o = getopt_long(argc, argv, "c:r:d:w:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': connect_to = optarg; break;
		case 'r': rate = atof(optarg); break;
		case 'd': duration = atof(optarg); break;
		case 'w': window = atol(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!connect_to || !(rate >= 1 && rate <= 1e6) || !(duration > 0 && duration <= 600) ||
	    window < 1 || window > 60000) {
		fprintf(stderr, "ofchurn: need --connect IP:PORT, --rate 1..1e6, --duration (0, 600], "
				"--window 1..60000\n");
		return 2;
	}
	char host[64];
	const char *colon = strrchr(connect_to, ':');
	struct sockaddr_in sa = {.sin_family = AF_INET};
	if (!colon || (size_t)(colon - connect_to) >= sizeof(host)) {
		fprintf(stderr, "ofchurn: --connect %s: IP:PORT\n", connect_to);
		return 2;
	}
	memcpy(host, connect_to, (size_t)(colon - connect_to));
	host[colon - connect_to] = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || !sa.sin_port) {
		fprintf(stderr, "ofchurn: --connect %s: IP:PORT\n", connect_to);
		return 2;
	}
	static struct churn c;
	c.fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	if (c.fd < 0 || connect(c.fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "ofchurn: connect %s: %s\n", connect_to, strerror(errno));
		return 1;
	}
	setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	uint8_t buf[4096];
	ssize_t n = of_build_hello(buf, sizeof(buf), OF_VERSION_1_3, c.xid++, 1u << OF_VERSION_1_3);
	if (n < 0 || send_all(c.fd, buf, (size_t)n)) {
		fprintf(stderr, "ofchurn: cannot send HELLO\n");
		return 1;
	}
	double t0 = now_s();
	while (!c.hello && now_s() - t0 < 5)
		if (pump(&c, 100))
			return 1;
	if (!c.hello) {
		fprintf(stderr, "ofchurn: no HELLO from %s within 5 s\n", connect_to);
		return 1;
	}
	/* Paced in ticks of 1 ms: by time t, rate * t FLOW_MODs are due; bounded by the count. */
	const uint64_t total = (uint64_t)(rate * duration);
	double start = now_s(), waited = 0;
	uint64_t j = 0; /* flows added */
	while (c.sent < total && now_s() - start < duration + 5) {
		uint64_t due = (uint64_t)((now_s() - start) * rate);
		if (due > total)
			due = total;
		while (c.sent < due) {
			if (c.barriers_sent - c.barriers_done >= MAX_BARRIERS) {
				double w0 = now_s();
				if (pump(&c, 10))
					return 1;
				waited += now_s() - w0;
				if (now_s() - start >= duration + 5)
					break;
				continue;
			}
			bool del = j >= (uint64_t)window && (c.sent & 1);
			n = churn_mod(buf, sizeof(buf), c.xid++, del ? OFPFC_DELETE_STRICT : OFPFC_ADD,
				      (uint32_t)(del ? j - (uint64_t)window : j));
			if (n < 0 || send_all(c.fd, buf, (size_t)n)) {
				fprintf(stderr, "ofchurn: send failed: %s\n", strerror(errno));
				return 1;
			}
			if (!del)
				j++;
			if (++c.sent % BARRIER_EVERY == 0) {
				n = of_build_simple(buf, sizeof(buf), OF_VERSION_1_3, OF_BARRIER_REQUEST,
						    c.xid++);
				if (n < 0 || send_all(c.fd, buf, (size_t)n))
					return 1;
				c.barriers_sent++;
			}
		}
		if (pump(&c, 1))
			return 1;
	}
	double sent_s = now_s() - start;
	/* The last barriers: up to 5 s more, then report what was answered. */
	double d0 = now_s();
	while (c.barriers_done < c.barriers_sent && now_s() - d0 < 5)
		if (pump(&c, 50))
			return 1;
	double end = c.last_barrier > start ? c.last_barrier : now_s();
	printf("{\"bench\":\"switch\",\"tool\":\"ofchurn\",\"target_per_s\":%.0f,\"flow_mods_sent\":%llu,"
	       "\"flow_mods_applied\":%llu,\"applied_per_s\":%.1f,\"sent_seconds\":%.3f,"
	       "\"barrier_wait_seconds\":%.3f,\"errors\":%llu,\"echoes\":%llu,\"window\":%ld}\n",
	       rate, (unsigned long long)c.sent, (unsigned long long)c.applied,
	       (double)c.applied / (end - start), sent_s, waited, (unsigned long long)c.errors,
	       (unsigned long long)c.echoes, window);
	close(c.fd);
	return 0;
}
