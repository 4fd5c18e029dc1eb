/*
 * tests/ofswitch/ofchurn.c: floods a switch's OpenFlow listener with FLOW_MODs while a
 * command (e.g. a bounded ping across the switch) runs, then checks the table it leaves.
 *
 *   ofchurn IPV4:PORT N [COMMAND]
 *
 * Connects to the switch's --listen port as a client (ovs-ofctl's way in), says HELLO and:
 *   1. installs two forwarding flows (priority 10: in_port 1 -> output 2, in_port 2 ->
 *      output 1; cookie 0x1) and waits for a BARRIER;
 *   2. starts COMMAND (sh -c) and sends N FLOW_MOD ADDs (cookie 0xc0) spread over 10
 *      wildcard masks (eth_type IPv4 + ipv4_dst/18 .. /27, in 100.64.0.0/10 and above, which
 *      the test traffic never uses), priorities 100..109 so each is a new highest-priority
 *      flow of its masked key, checked against every poller's cache; while COMMAND still
 *      runs afterwards it keeps churning (DELETE_STRICT + ADD of the same flows, at most
 *      another 10 N messages or 60 s), so the command runs under churn from start to end;
 *   3. BARRIER, then counts the flows with cookie 0xc0 in FLOW stats (must be N exactly)
 *      and with cookie 0x1 (must be 2), deletes the 0xc0 ones by cookie, BARRIER, counts
 *      again (0); no ERROR may arrive at any point.
 * Exit 0 when all that holds and COMMAND exited 0; 1 with one line per failure otherwise.
 * It writes the messages itself (no dependence on the protocol module's models), so a
 * benchmark may reuse it to drive FLOW_MOD load. Every wait has a deadline.
 */
#define _GNU_SOURCE /* usleep, kill, clock_gettime under -std=c11 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OFV 4 /* OpenFlow 1.3 */
enum { T_HELLO = 0, T_ERROR = 1, T_ECHO_REQ = 2, T_ECHO_REP = 3, T_FLOW_MOD = 14,
       T_MP_REQ = 18, T_MP_REP = 19, T_BARRIER_REQ = 20, T_BARRIER_REP = 21 };
#define COOKIE_FLOOD 0xc0ull
#define COOKIE_FWD 0x1ull
#define DEADLINE_NS (60ull * 1000000000ull) /* for any one wait */

static int fd = -1, fails;
static uint8_t rbuf[1 << 20];
static size_t rlen;
static unsigned errors_seen;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void p16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void p32(uint8_t *p, uint32_t v) { p16(p, (uint16_t)(v >> 16)); p16(p + 2, (uint16_t)v); }
static void p64(uint8_t *p, uint64_t v) { p32(p, (uint32_t)(v >> 32)); p32(p + 4, (uint32_t)v); }
static uint16_t g16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t g32(const uint8_t *p) { return (uint32_t)g16(p) << 16 | g16(p + 2); }

static void header(uint8_t *b, uint8_t type, uint16_t len, uint32_t xid)
{
	b[0] = OFV;
	b[1] = type;
	p16(b + 2, len);
	p32(b + 4, xid);
}

/* Handles one received message (ECHO answered, ERROR counted); returns its type. */
static int handle(const uint8_t *m, uint16_t len, uint32_t *xid)
{
	*xid = g32(m + 4);
	if (m[1] == T_ERROR) {
		errors_seen++;
		if (errors_seen <= 5)
			printf("FAIL: ERROR type %u code %u from the switch\n",
			       len >= 12 ? g16(m + 8) : 0, len >= 12 ? g16(m + 10) : 0);
	} else if (m[1] == T_ECHO_REQ) {
		uint8_t r[8];
		header(r, T_ECHO_REP, 8, *xid);
		(void)send(fd, r, 8, MSG_NOSIGNAL); /* best effort: tiny */
	}
	return m[1];
}

/* Writes all of b, reading (and handling) what arrives meanwhile so neither side blocks. */
static int send_all(const uint8_t *b, size_t n)
{
	uint64_t end = now_ns() + DEADLINE_NS;
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (now_ns() > end)
			return -1;
		struct pollfd p = {.fd = fd, .events = POLLOUT | POLLIN};
		poll(&p, 1, 10);
		if (p.revents & POLLIN) {
			ssize_t r = recv(fd, rbuf + rlen, sizeof(rbuf) - rlen, MSG_DONTWAIT);
			if (r == 0)
				return -1;
			if (r > 0)
				rlen += (size_t)r;
			while (rlen >= 8 && g16(rbuf + 2) >= 8 && rlen >= g16(rbuf + 2)) {
				uint16_t l = g16(rbuf + 2);
				uint32_t x;
				handle(rbuf, l, &x);
				memmove(rbuf, rbuf + l, rlen - l);
				rlen -= l;
			}
		}
	}
	return 0;
}

/* The next message into m (up to cap bytes); 0, or -1 on a closed connection or deadline. */
static int next_msg(uint8_t *m, size_t cap, uint16_t *len)
{
	uint64_t end = now_ns() + DEADLINE_NS;
	for (;;) {
		if (rlen >= 8) {
			uint16_t l = g16(rbuf + 2);
			if (l < 8 || l > cap)
				return -1;
			if (rlen >= l) {
				memcpy(m, rbuf, l);
				memmove(rbuf, rbuf + l, rlen - l);
				rlen -= l;
				*len = l;
				return 0;
			}
		}
		if (now_ns() > end)
			return -1;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t r = recv(fd, rbuf + rlen, sizeof(rbuf) - rlen, 0);
		if (r <= 0)
			return -1;
		rlen += (size_t)r;
	}
}

static uint32_t xid = 1000;

static int barrier(void)
{
	uint8_t b[8], m[1 << 16];
	uint32_t want = ++xid, x;
	uint16_t l;
	header(b, T_BARRIER_REQ, 8, want);
	if (send_all(b, 8))
		return -1;
	while (next_msg(m, sizeof(m), &l) == 0)
		if (handle(m, l, &x) == T_BARRIER_REP && x == want)
			return 0;
	return -1;
}

/* A FLOW_MOD into b: match in_port (port != 0) or eth_type IPv4 + ipv4_dst/plen (plen != 0),
 * one OUTPUT action (out != 0). Returns its length. */
static size_t flow_mod(uint8_t *b, uint8_t cmd, uint64_t cookie, uint64_t cookie_mask,
		       uint16_t prio, uint32_t in_port, uint32_t dst, unsigned plen, uint32_t out)
{
	memset(b, 0, 48);
	p64(b + 8, cookie);
	p64(b + 16, cookie_mask);
	b[24] = cmd == 3 ? 0xff : 0; /* DELETE: every table */
	b[25] = cmd;
	p16(b + 30, prio);
	p32(b + 32, 0xffffffffu); /* buffer_id: none */
	p32(b + 36, 0xffffffffu); /* out_port: any */
	p32(b + 40, 0xffffffffu); /* out_group: any */
	uint8_t *m = b + 48, *o = m + 4;
	if (in_port) {
		p32(o, 0x80000004u); /* OXM in_port */
		p32(o + 4, in_port);
		o += 8;
	}
	if (plen) {
		p32(o, 0x80000a02u); /* eth_type */
		p16(o + 4, 0x0800);
		o += 6;
		p32(o, 0x80001908u); /* ipv4_dst with mask */
		uint32_t mask = plen >= 32 ? 0xffffffffu : ~(0xffffffffu >> plen);
		p32(o + 4, dst & mask);
		p32(o + 8, mask);
		o += 12;
	}
	p16(m, 1); /* OFPMT_OXM */
	p16(m + 2, (uint16_t)(o - m));
	size_t ml = (size_t)(o - m);
	size_t padded = (ml + 7) / 8 * 8;
	memset(o, 0, padded - ml);
	uint8_t *in = m + padded;
	size_t len = (size_t)(in - b);
	if (out) {
		p16(in, 4); /* APPLY_ACTIONS */
		p16(in + 2, 24);
		memset(in + 4, 0, 4);
		p16(in + 8, 0); /* OUTPUT */
		p16(in + 10, 16);
		p32(in + 12, out);
		p16(in + 16, 0xffff);
		memset(in + 18, 0, 6);
		len += 24;
	}
	header(b, T_FLOW_MOD, (uint16_t)len, ++xid);
	return len;
}

/* Flood flow i: mask i % 10 (ipv4_dst /18 .. /27), a distinct prefix per i in its mask. */
static size_t flood_mod(uint8_t *b, uint8_t cmd, uint32_t i)
{
	unsigned plen = 18 + i % 10;
	uint32_t dst = 0x64400000u + ((i / 10) << (32 - plen)); /* 100.64.0.0 and up */
	return flow_mod(b, cmd, COOKIE_FLOOD, 0, (uint16_t)(100 + i % 10), 0, dst, plen, 2);
}

/* Flows with this cookie, by FLOW stats (every table, any port); -1 on no answer. */
static long count_flows(uint64_t cookie)
{
	uint8_t b[64], m[1 << 16];
	memset(b, 0, sizeof(b));
	uint32_t want = ++xid, x;
	header(b, T_MP_REQ, 56, want);
	p16(b + 8, 1);            /* OFPMP_FLOW */
	b[16] = 0xff;             /* table: all */
	p32(b + 20, 0xffffffffu); /* out_port any */
	p32(b + 24, 0xffffffffu); /* out_group any */
	p64(b + 32, cookie);
	p64(b + 40, ~0ull);
	p16(b + 48, 1);           /* empty OXM match */
	p16(b + 50, 4);
	if (send_all(b, 56))
		return -1;
	long n = 0;
	uint16_t l;
	while (next_msg(m, sizeof(m), &l) == 0) {
		if (handle(m, l, &x) != T_MP_REP || x != want || l < 16)
			continue;
		for (size_t off = 16; off + 2 <= l;) {
			uint16_t el = g16(m + off);
			if (el < 48 || off + el > l)
				return -1;
			n++;
			off += el;
		}
		if (!(g16(m + 10) & 1)) /* no REPLY_MORE: the last part */
			return n;
	}
	return -1;
}

#define CHECK(c, ...) do { if (!(c)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } \
	else { printf("ok: " __VA_ARGS__); printf("\n"); } } while (0)

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || !strchr(argv[1], ':') || atol(argv[2]) <= 0 ||
	    atol(argv[2]) > 1000000) {
		fprintf(stderr, "usage: ofchurn IPV4:PORT N(1..1000000) [COMMAND]\n");
		return 2;
	}
	uint32_t n = (uint32_t)atol(argv[2]);
	char host[64];
	snprintf(host, sizeof(host), "%.*s", (int)(strchr(argv[1], ':') - argv[1]), argv[1]);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(strchr(argv[1], ':') + 1))};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "ofchurn: %s: not IPV4:PORT\n", argv[1]);
		return 2;
	}
	for (int i = 0; i < 100; i++) { /* up to 10 s for the switch's listener */
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0) {
		printf("FAIL: no OpenFlow listener at %s after 10 s\n", argv[1]);
		return 1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	uint8_t hb[16];
	header(hb, T_HELLO, 16, 1);
	p16(hb + 8, 1), p16(hb + 10, 8), p32(hb + 12, 1u << OFV); /* version bitmap */
	uint8_t m[1 << 16], b[128];
	uint16_t l;
	uint32_t x;
	if (send_all(hb, 16) || next_msg(m, sizeof(m), &l) || handle(m, l, &x) != T_HELLO) {
		printf("FAIL: no HELLO from the switch\n");
		return 1;
	}
	/* 1. forwarding between ports 1 and 2 */
	bool ok = send_all(b, flow_mod(b, 0, COOKIE_FWD, 0, 10, 1, 0, 0, 2)) == 0 &&
		  send_all(b, flow_mod(b, 0, COOKIE_FWD, 0, 10, 2, 0, 0, 1)) == 0 && barrier() == 0;
	CHECK(ok && errors_seen == 0, "forwarding flows installed");
	if (!ok)
		return 1;
	/* 2. the flood, with COMMAND running */
	pid_t child = -1;
	if (argc == 4) {
		child = fork();
		if (child == 0) {
			close(fd);
			execl("/bin/sh", "sh", "-c", argv[3], (char *)NULL);
			_exit(127);
		}
	}
	enum { BATCH = 256 };
	static uint8_t fb[BATCH * 128];
	uint64_t t0 = now_ns();
	uint32_t sent = 0;
	for (uint32_t i = 0; ok && i < n;) {
		size_t off = 0;
		for (unsigned k = 0; k < BATCH && i < n; k++, i++)
			off += flood_mod(fb + off, 0, i);
		ok = send_all(fb, off) == 0;
		sent = i;
	}
	uint64_t t_flood = now_ns() - t0;
	uint64_t extra = 0;
	int status = 0;
	bool reaped = false;
	while (ok && child > 0 && extra < 10ull * n && now_ns() - t0 < DEADLINE_NS) {
		if (waitpid(child, &status, WNOHANG) == child) {
			reaped = true;
			break;
		}
		size_t off = 0; /* churn: take some flows out and put them back */
		for (unsigned k = 0; k < BATCH / 2; k++, extra += 2) {
			uint32_t i = (uint32_t)((extra / 2) % n);
			off += flood_mod(fb + off, 4, i); /* DELETE_STRICT */
			off += flood_mod(fb + off, 0, i);
		}
		ok = send_all(fb, off) == 0;
	}
	ok = ok && barrier() == 0;
	uint64_t t_all = now_ns() - t0;
	CHECK(ok && errors_seen == 0, "%u FLOW_MOD ADDs in %.2f s, then %llu churn messages "
	      "(%.2f s in all), BARRIER answered, %u ERRORs", sent, (double)t_flood / 1e9,
	      (unsigned long long)extra, (double)t_all / 1e9, errors_seen);
	if (child > 0 && !reaped) {
		/* the churn budget ran out first: the command gets its own deadline */
		for (int i = 0; i < 600 && waitpid(child, &status, WNOHANG) != child; i++)
			usleep(100000);
		if (waitpid(child, &status, WNOHANG) == 0) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
		}
	}
	if (child > 0)
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the command during the flood exited %d", WIFEXITED(status) ?
		      WEXITSTATUS(status) : 128 + WTERMSIG(status));
	/* 3. the table it leaves */
	long c = ok ? count_flows(COOKIE_FLOOD) : -1;
	CHECK(c == (long)n, "flood flows in the table: %ld of %u", c, n);
	long f = ok ? count_flows(COOKIE_FWD) : -1;
	CHECK(f == 2, "forwarding flows kept: %ld of 2", f);
	ok = ok && send_all(b, flow_mod(b, 3, COOKIE_FLOOD, ~0ull, 0, 0, 0, 0, 0)) == 0 &&
	     barrier() == 0;
	c = ok ? count_flows(COOKIE_FLOOD) : -1;
	CHECK(ok && c == 0, "DELETE by cookie: %ld flood flows left", c);
	CHECK(errors_seen == 0, "no ERROR from the switch (%u)", errors_seen);
	close(fd);
	return fails ? 1 : 0;
}
