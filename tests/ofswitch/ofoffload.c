/*
 * tests/ofswitch/ofoffload.c: ringflow-switch --offload end to end (issue 24, part 2), run by
 * offload_test.sh inside a namespace of its own:
 *
 *   injector a0 ==veth== a1 [port 1 (xdp)] ringflow-switch [port 2 (xdp)] b1 ==veth== b0 capture
 *
 *   ofoffload LISTEN_PORT A0 A1 B0 B1 RINGFLOW_CTL SWITCH_PID
 *
 * A client of the switch's --listen (it writes the OpenFlow messages itself, as ofchurn does)
 * and raw sockets on a0 and b0. Frames carry a trailer (magic, sequence number) in their last
 * 8 bytes. Phases, each checked with counts and contents only (no timing decides):
 *   1. flows A (udp 9000: set eth_dst, output 2) and I (udp 9002: output 2, idle_timeout 2 s);
 *      frames of both, paced over 4 s: every frame arrives once, byte-exact with the new MAC;
 *      FLOW, PORT and TABLE stats count every frame (offloaded + userspace); the
 *      kernel forwarded some (app/offload_hits), and those + what port 1's socket received
 *      (ports/A1/rx_pkts) = what was sent;
 *      I, whose frames mostly never reach userspace, did not idle out.
 *   2. a priority-200 drop flow over A's match, then a BARRIER, while A's frames keep going:
 *      no frame sent after the BARRIER_REPLY reaches b0; entries were removed by the FLOW_MOD.
 *   3. the drop flow deleted (+ BARRIER): A's frames are forwarded again; A deleted
 *      (+ BARRIER): none is (the entries went with it); no entry is left.
 *   4. a flow matching ip_dscp (udp 9001, TOS 40): forwarded, counted, never offloaded.
 *   5. flow P (udp 9003, output 2) offloaded, then b1 (port 2) set down: every frame of P
 *      reaches port 1's socket (the entry stopped); b1 up again: P is forwarded again.
 *   6. a full table: flow W (udp 9004, output 2) and 1500 microflows (source ports) of it,
 *      20 frames each, under a higher flow on udp source port 1 that none of them takes (so
 *      the classifier looks at every source port and each microflow needs an entry of its
 *      own): the port's table fills at 1024 entries, the rest are refused as `full`, and
 *      every frame still arrives (userspace forwards what the kernel cannot).
 *   7. every flow deleted; flow PW (in_port 1 alone, output 2): one entry for the port, of
 *      WHOLE frames only. Whole frames of many microflows arrive, forwarded by the kernel;
 *      frames whose UDP header the IP total length cuts short (the switch's parser refuses
 *      them) reach port 1's socket, and none arrives.
 *   8. a pipeline: G (table 0, udp 9005: write_metadata 5, goto_table 1) and G1 (table 1,
 *      metadata 5: set eth_dst, output 2): every frame arrives once, byte-exact, the kernel
 *      forwarded some, FLOW stats of both flows and TABLE stats of table 1 count every
 *      frame; a drop flow in table 1
 *      above G1, then a BARRIER while G's frames keep going: none sent after the reply
 *      arrives; every flow of every table deleted: no entry left.
 * Exit 0 when everything holds, 1 with one FAIL line per failure. Every wait is bounded.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
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

#define RF_OFFLOAD_MAX_ENTRIES 1024 /* a port's table (ringflow/offload.h) */

#define OFV 4
enum { T_HELLO = 0, T_ERROR = 1, T_ECHO_REQ = 2, T_ECHO_REP = 3, T_FLOW_MOD = 14,
       T_MP_REQ = 18, T_MP_REP = 19, T_BARRIER_REQ = 20, T_BARRIER_REP = 21 };
#define MAGIC 0x4c464f52u
#define FLEN 96
#define MAXSEQ 60000
#define CK_A 0xa1ull
#define CK_I 0xa2ull
#define CK_DROP 0xa3ull
#define CK_DSCP 0xa4ull
#define CK_P 0xa5ull

static int fd = -1, sa = -1, sb = -1, fails;
static unsigned errors_seen;
static uint8_t rbuf[1 << 20];
static size_t rlen;
static uint32_t xid = 100, seq;
static const char *ctl, *swpid;
static const uint8_t MAC_DST[6] = {2, 0, 0, 0, 0x0b, 2}, MAC_SRC[6] = {2, 0, 0, 0, 0x0a, 1},
		     MAC_NEW[6] = {2, 0xbb, 0, 0, 0, 9};

#define CHECK(c, ...) do { if (!(c)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } \
	else { printf("ok: " __VA_ARGS__); printf("\n"); } } while (0)

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}
static void p16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void p32(uint8_t *p, uint32_t v) { p16(p, (uint16_t)(v >> 16)); p16(p + 2, (uint16_t)v); }
static void p64(uint8_t *p, uint64_t v) { p32(p, (uint32_t)(v >> 32)); p32(p + 4, (uint32_t)v); }
static uint16_t g16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t g32(const uint8_t *p) { return (uint32_t)g16(p) << 16 | g16(p + 2); }
static uint64_t g64(const uint8_t *p) { return (uint64_t)g32(p) << 32 | g32(p + 4); }

static void header(uint8_t *b, uint8_t type, uint16_t len, uint32_t x)
{
	b[0] = OFV;
	b[1] = type;
	p16(b + 2, len);
	p32(b + 4, x);
}

/* ---- OpenFlow ---- */

static int send_all(const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The next message if one is complete within wait_ms: its type (ECHO answered, ERROR
 * counted), or -1. */
static int next_msg(uint8_t *m, size_t cap, uint16_t *len, int wait_ms)
{
	double end = now_s() + wait_ms / 1000.0;
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
				if (m[1] == T_ERROR && ++errors_seen <= 5)
					printf("FAIL: ERROR type %u code %u from the switch\n",
					       l >= 12 ? g16(m + 8) : 0, l >= 12 ? g16(m + 10) : 0);
				if (m[1] == T_ECHO_REQ) {
					uint8_t r[8];
					header(r, T_ECHO_REP, 8, g32(m + 4));
					(void)send_all(r, 8);
				}
				return m[1];
			}
		}
		int left = (int)((end - now_s()) * 1000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, left > 0 ? left : 0) <= 0)
			return -1;
		ssize_t r = recv(fd, rbuf + rlen, sizeof(rbuf) - rlen, 0);
		if (r <= 0)
			return -1;
		rlen += (size_t)r;
	}
}

static uint32_t send_barrier(void)
{
	uint8_t b[8];
	header(b, T_BARRIER_REQ, 8, ++xid);
	return send_all(b, 8) == 0 ? xid : 0;
}

static int wait_reply(uint32_t want, uint8_t type, uint8_t *m, size_t cap, uint16_t *l)
{
	double end = now_s() + 10;
	while (now_s() < end) {
		int t = next_msg(m, cap, l, 100);
		if (t == type && g32(m + 4) == want)
			return 0;
	}
	return -1;
}

static int barrier(void)
{
	static uint8_t m[1 << 16];
	uint16_t l;
	uint32_t x = send_barrier();
	return x ? wait_reply(x, T_BARRIER_REP, m, sizeof(m), &l) : -1;
}

struct fm {
	uint8_t cmd; /* 0 ADD, 3 DELETE, 4 DELETE_STRICT */
	uint64_t cookie;
	uint16_t prio, idle;
	uint16_t udp_dst; /* in_port 1, IPv4, UDP to this port; 0: not matched */
	uint16_t udp_src; /* and (or only) UDP from this port; 0: not matched */
	bool port_only;   /* in_port 1 alone (no eth_type) */
	bool any_cookie;  /* DELETE: whatever the cookie (else only this cookie's flows) */
	int dscp;         /* >= 0: ip_dscp too */
	bool set_dst, out; /* set eth_dst MAC_NEW; output:2 (none: drop) */
	uint8_t table;     /* its table (0xff with DELETE: all) */
	bool md_match;     /* and metadata 5 */
	bool write_md;     /* write_metadata 5/0xff */
	uint8_t goto_table; /* goto_table (0: none) */
};

static int flow_mod(const struct fm *f)
{
	uint8_t b[256];
	memset(b, 0, sizeof(b));
	p64(b + 8, f->cookie);
	p64(b + 16, f->cmd >= 3 && !f->any_cookie ? ~0ull : 0);
	b[24] = f->table;
	b[25] = f->cmd;
	p16(b + 26, f->idle);
	p16(b + 30, f->prio);
	p32(b + 32, 0xffffffffu);
	p32(b + 36, 0xffffffffu);
	p32(b + 40, 0xffffffffu);
	uint8_t *m = b + 48, *o = m + 4;
	p32(o, 0x80000004u), p32(o + 4, 1), o += 8; /* in_port 1 */
	if (!f->port_only)
		p32(o, 0x80000a02u), p16(o + 4, 0x0800), o += 6; /* eth_type IPv4 */
	if (f->dscp >= 0)
		p32(o, 0x80001001u), o[4] = (uint8_t)f->dscp, o += 5;
	if (f->udp_dst || f->udp_src)
		p32(o, 0x80001401u), o[4] = 17, o += 5; /* ip_proto UDP */
	if (f->udp_src)
		p32(o, 0x80001e02u), p16(o + 4, f->udp_src), o += 6;
	if (f->udp_dst)
		p32(o, 0x80002002u), p16(o + 4, f->udp_dst), o += 6;
	if (f->md_match)
		p32(o, 0x80000408u), p64(o + 4, 5), o += 12; /* metadata 5 */
	p16(m, 1);
	p16(m + 2, (uint16_t)(o - m));
	size_t padded = ((size_t)(o - m) + 7) / 8 * 8;
	uint8_t *in = m + padded, *a = in + 8;
	if (f->cmd == 0 && (f->set_dst || f->out)) {
		if (f->set_dst) { /* set_field eth_dst */
			p16(a, 25), p16(a + 2, 16), p32(a + 4, 0x80000606u);
			memcpy(a + 8, MAC_NEW, 6);
			a += 16;
		}
		if (f->out) {
			p16(a, 0), p16(a + 2, 16), p32(a + 4, 2), p16(a + 8, 0xffff);
			a += 16;
		}
		p16(in, 4); /* APPLY_ACTIONS */
		p16(in + 2, (uint16_t)(a - in));
	} else {
		a = in;
	}
	if (f->cmd == 0 && f->write_md) { /* WRITE_METADATA 5/0xff */
		p16(a, 2), p16(a + 2, 24), p64(a + 8, 5), p64(a + 16, 0xff);
		a += 24;
	}
	if (f->cmd == 0 && f->goto_table) { /* GOTO_TABLE */
		p16(a, 1), p16(a + 2, 8), a[4] = f->goto_table;
		a += 8;
	}
	header(b, T_FLOW_MOD, (uint16_t)(a - b), ++xid);
	return send_all(b, (size_t)(a - b));
}

/* The reply of the last mp_ask. */
static uint8_t mp_rep[1 << 16];

/* Sends the multipart request of type `type` in b (len bytes, its body already in place from
 * byte 16) and waits for the reply: in mp_rep, its length in *l. 0, or -1. */
static int mp_ask(uint8_t *b, uint16_t len, uint16_t type, uint16_t *l)
{
	uint32_t want = ++xid;
	header(b, T_MP_REQ, len, want);
	p16(b + 8, type);
	return send_all(b, len) || wait_reply(want, T_MP_REP, mp_rep, sizeof(mp_rep), l) ? -1 : 0;
}

/* FLOW stats of the flows with this cookie: how many, and their packets and bytes summed. */
static int flow_stats(uint64_t cookie, unsigned *n, uint64_t *pk, uint64_t *by)
{
	const uint8_t *m = mp_rep;
	uint8_t b[56];
	memset(b, 0, sizeof(b));
	b[16] = 0xff;
	p32(b + 20, 0xffffffffu);
	p32(b + 24, 0xffffffffu);
	p64(b + 32, cookie);
	p64(b + 40, ~0ull);
	p16(b + 48, 1);
	p16(b + 50, 4);
	*n = 0, *pk = *by = 0;
	uint16_t l;
	if (mp_ask(b, 56, 1 /* OFPMP_FLOW */, &l))
		return -1;
	for (size_t off = 16; off + 48 <= l;) {
		uint16_t el = g16(m + off);
		if (el < 48 || off + el > l)
			return -1;
		(*n)++;
		*pk += g64(m + off + 32);
		*by += g64(m + off + 40);
		off += el;
	}
	return 0;
}

/* PORT stats of port p: rx and tx packets. */
static int port_stats(uint32_t p, uint64_t *rx, uint64_t *tx)
{
	uint8_t b[24];
	memset(b, 0, sizeof(b));
	p32(b + 16, p);
	uint16_t l;
	if (mp_ask(b, 24, 4 /* OFPMP_PORT_STATS */, &l) || l < 16 + 112)
		return -1;
	*rx = g64(mp_rep + 16 + 8);
	*tx = g64(mp_rep + 16 + 16);
	return 0;
}

/* TABLE stats of table tbl: lookups and matches (24 bytes a table, in order). */
static int table_stats(unsigned tbl, uint64_t *lookup, uint64_t *matched)
{
	uint8_t b[16];
	memset(b, 0, sizeof(b));
	uint16_t l;
	const uint8_t *t = mp_rep + 16 + 24 * tbl;
	if (mp_ask(b, 16, 3 /* OFPMP_TABLE */, &l) || l < 16 + 24 * (tbl + 1) || t[0] != tbl)
		return -1;
	*lookup = g64(t + 8);
	*matched = g64(t + 16);
	return 0;
}

/* What `ringflow-ctl -p SWITCH_PID ARGS` printed (out[0] = 0 when it could not run). */
static void ctl_run(const char *args, char *out, size_t cap)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s -p %s %s 2>&1", ctl, swpid, args);
	out[0] = '\0';
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	pclose(p);
}

/* ringflow-ctl's value at a stats path of the switch, or -1. */
static long long ctl_value(const char *path)
{
	char args[256], out[128];
	snprintf(args, sizeof(args), "stats %s", path);
	ctl_run(args, out, sizeof(out));
	char *sp = strrchr(out, ' '), *end; /* "PATH   VALUE" */
	if (!sp)
		return -1;
	long long v = strtoll(sp + 1, &end, 10);
	return end == sp + 1 ? -1 : v;
}

/* A number in `ringflow-ctl -j ports`'s object for OpenFlow port `port`, or -1. */
static long long ctl_port_value(unsigned port, const char *key)
{
	char out[8192], pat[64];
	ctl_run("-j ports", out, sizeof(out));
	snprintf(pat, sizeof(pat), "\"port\":%u,", port);
	char *o = strstr(out, pat);
	if (!o)
		return -1;
	char *next = strstr(o + 1, "\"port\":");
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	char *v = strstr(o, pat);
	if (!v || (next && v > next))
		return -1;
	return strtoll(v + strlen(pat), NULL, 10);
}

/* ---- frames ---- */

static int raw_socket(const char *ifname)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)), one = 1;
	struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				.sll_ifindex = (int)if_nametoindex(ifname)};
	if (s < 0 || !a.sll_ifindex || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		return -1;
	setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	int big = 8 << 20;
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	return s;
}

/* Sets the header checksum of the 20-byte IPv4 header at ip over its other fields. */
static void ip_csum_set(uint8_t *ip)
{
	uint32_t sum = 0;
	p16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += g16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	p16(ip + 10, (uint16_t)~sum);
}

/* Frame seq: IPv4/UDP 10.9.0.1:sport -> 10.9.0.2:dport, TOS tos, MAC_SRC -> dst. */
static void make_frame(uint8_t *f, uint32_t s, uint16_t sport, uint16_t dport, uint8_t tos,
		       const uint8_t *dst)
{
	memset(f, 0, FLEN);
	memcpy(f, dst, 6);
	memcpy(f + 6, MAC_SRC, 6);
	p16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45, ip[1] = tos;
	p16(ip + 2, FLEN - 14);
	ip[8] = 64, ip[9] = 17;
	ip[12] = 10, ip[13] = 9, ip[15] = 1, ip[16] = 10, ip[17] = 9, ip[19] = 2;
	ip_csum_set(ip);
	p16(ip + 20, sport), p16(ip + 22, dport), p16(ip + 24, FLEN - 34);
	for (int i = 42; i < FLEN - 8; i++)
		f[i] = (uint8_t)(s * 7 + i);
	uint32_t mg = MAGIC;
	memcpy(f + FLEN - 8, &mg, 4);
	memcpy(f + FLEN - 4, &s, 4);
}

/* What each sequence number was and should arrive as. */
static uint16_t sent_dport[MAXSEQ], sent_sport[MAXSEQ], cur_sport = 5000;
static uint8_t sent_tos[MAXSEQ], got[MAXSEQ], want_new[MAXSEQ];
static unsigned bad_bytes;

static uint32_t send_one(uint16_t dport, uint8_t tos, bool rewritten)
{
	uint8_t f[FLEN];
	uint32_t s = seq++;
	if (s >= MAXSEQ)
		return s;
	make_frame(f, s, cur_sport, dport, tos, MAC_DST);
	sent_dport[s] = dport, sent_sport[s] = cur_sport, sent_tos[s] = tos, want_new[s] = rewritten;
	for (int i = 0; i < 100 && send(sa, f, FLEN, 0) != FLEN; i++)
		usleep(100); /* a full socket buffer: retry, bounded */
	return s;
}

/* Everything b0 has now: each frame counted by sequence number, checked byte for byte. */
static void drain(void)
{
	uint8_t f[2048], e[FLEN];
	ssize_t r;
	while ((r = recv(sb, f, sizeof(f), MSG_DONTWAIT)) >= 0) {
		uint32_t mg, s;
		if (r < 8)
			continue;
		memcpy(&mg, f + r - 8, 4);
		memcpy(&s, f + r - 4, 4);
		if (mg != MAGIC || s >= seq)
			continue;
		got[s]++;
		make_frame(e, s, sent_sport[s], sent_dport[s], sent_tos[s],
			   want_new[s] ? MAC_NEW : MAC_DST);
		if (r != FLEN || memcmp(f, e, FLEN) != 0)
			bad_bytes++;
	}
}

/* How many frames of [from, to) arrived (what b0 has so far). */
static unsigned got_in(uint32_t from, uint32_t to)
{
	unsigned n = 0;
	for (uint32_t s = from; s < to; s++)
		n += got[s] != 0;
	return n;
}

/* Drains for up to 2 s or until every frame of [from, to) arrived; how many arrived. */
static unsigned arrived(uint32_t from, uint32_t to, bool expect_all)
{
	double end = now_s() + 2;
	unsigned n;
	do {
		usleep(10000);
		drain();
		n = got_in(from, to);
	} while (now_s() < end && (!expect_all || n < to - from));
	return n;
}

static unsigned dups(uint32_t from, uint32_t to)
{
	unsigned n = 0;
	for (uint32_t s = from; s < to; s++)
		n += got[s] > 1;
	return n;
}

/* FLOW_MOD fmod and a BARRIER, sent while frames to UDP dport keep going, until the
 * BARRIER_REPLY (20000 frames at most); then 300 more, and everything that arrives drained.
 * *after: the first frame sent after the reply; *end: one past the last. True when the
 * reply came. */
static bool send_through_barrier(const struct fm *fmod, uint16_t dport, uint32_t *after,
				 uint32_t *end)
{
	static uint8_t m[1 << 16];
	uint16_t l;
	uint32_t from = seq, bx = 0;
	bool replied = false;
	if (flow_mod(fmod) == 0)
		bx = send_barrier();
	for (int i = 0; bx && i < 20000 && !replied; i++) { /* send, look for the reply */
		send_one(dport, 0, true);
		int t;
		while ((t = next_msg(m, sizeof(m), &l, 0)) >= 0)
			if (t == T_BARRIER_REP && g32(m + 4) == bx)
				replied = true;
	}
	*after = seq; /* every frame from here on was sent after the reply */
	for (int i = 0; i < 300; i++)
		send_one(dport, 0, true), usleep(200);
	*end = seq;
	arrived(from, *end, false);
	usleep(300000);
	drain();
	return replied;
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: ofoffload LISTEN_PORT A0 A1 B0 B1 RINGFLOW_CTL SWITCH_PID\n");
		return 2;
	}
	ctl = argv[6], swpid = argv[7];
	sa = raw_socket(argv[2]);
	sb = raw_socket(argv[4]);
	if (sa < 0 || sb < 0) {
		printf("FAIL: raw sockets on %s, %s: %s\n", argv[2], argv[4], strerror(errno));
		return 1;
	}
	struct sockaddr_in ad = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&ad, sizeof(ad)) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0) {
		printf("FAIL: no OpenFlow listener on port %s\n", argv[1]);
		return 1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	static uint8_t m[1 << 16];
	uint16_t l;
	uint8_t hb[16];
	header(hb, T_HELLO, 16, 1);
	p16(hb + 8, 1), p16(hb + 10, 8), p32(hb + 12, 1u << OFV);
	if (send_all(hb, 16) || next_msg(m, sizeof(m), &l, 5000) != T_HELLO) {
		printf("FAIL: no HELLO from the switch\n");
		return 1;
	}
	unsigned n;
	uint64_t pk, by, rx, tx;

	/* 1. forwarding, byte-exact, counted; an offloaded flow does not idle out */
	struct fm A = {.cmd = 0, .cookie = CK_A, .prio = 100, .udp_dst = 9000, .dscp = -1,
		       .set_dst = true, .out = true};
	struct fm I = {.cmd = 0, .cookie = CK_I, .prio = 100, .idle = 2, .udp_dst = 9002,
		       .dscp = -1, .out = true};
	CHECK(flow_mod(&A) == 0 && flow_mod(&I) == 0 && barrier() == 0 && !errors_seen,
	      "flows A (set eth_dst, output 2) and I (idle_timeout 2) installed");
	uint32_t s0 = seq;
	unsigned na = 0, ni = 0;
	for (int i = 0; i < 400; i++) { /* 4 s: two idle timeouts of I */
		if (i % 2)
			send_one(9002, 0, false), ni++;
		else
			send_one(9000, 0, true), na++;
		usleep(10000);
		drain();
	}
	uint32_t s1 = seq;
	n = arrived(s0, s1, true);
	CHECK(n == s1 - s0 && !dups(s0, s1), "phase 1: %u of %u frames arrived once", n, s1 - s0);
	CHECK(bad_bytes == 0, "phase 1: every frame byte-exact (A's with the new eth_dst): %u differ",
	      bad_bytes);
	CHECK(flow_stats(CK_A, &n, &pk, &by) == 0 && n == 1 && pk == na && by == na * (uint64_t)FLEN,
	      "FLOW stats of A: %llu packets %llu bytes, sent %u (offloaded + userspace)",
	      (unsigned long long)pk, (unsigned long long)by, na);
	CHECK(flow_stats(CK_I, &n, &pk, &by) == 0 && n == 1 && pk == ni,
	      "I did not idle out in 4 s of traffic (idle_timeout 2) and counts %llu of %u",
	      (unsigned long long)pk, ni);
	CHECK(port_stats(1, &rx, &tx) == 0 && rx == s1 - s0, "PORT stats: port 1 rx %llu of %u",
	      (unsigned long long)rx, s1 - s0);
	CHECK(port_stats(2, &rx, &tx) == 0 && tx == s1 - s0, "PORT stats: port 2 tx %llu of %u",
	      (unsigned long long)tx, s1 - s0);
	uint64_t tl, tm;
	CHECK(table_stats(0, &tl, &tm) == 0 && tl == s1 - s0 && tm == s1 - s0,
	      "TABLE stats: table 0 looked up %llu and matched %llu of %u (offloaded + userspace)",
	      (unsigned long long)tl, (unsigned long long)tm, s1 - s0);
	char path[128];
	snprintf(path, sizeof(path), "ports/%s/rx_pkts", argv[3]);
	long long hits = ctl_value("app/offload_hits"), user = ctl_value(path);
	CHECK(hits > 0 && hits < (long long)(s1 - s0), "the kernel forwarded %lld of %u frames",
	      hits, s1 - s0);
	CHECK(hits + user == (long long)(s1 - s0), "offloaded %lld + userspace %lld = sent %u",
	      hits, user, s1 - s0);
	long long installed = ctl_value("app/offload_installed");
	CHECK(installed >= 2, "offload entries installed: %lld (A's and I's microflows)", installed);
	/* ringflow-ctl ports shows the kernel's share apart, as of the PORT stats' sync above */
	long long orx = ctl_port_value(1, "offload_rx_packets"),
		  otx = ctl_port_value(2, "offload_tx_packets");
	CHECK(orx == hits && otx == hits,
	      "ringflow-ctl ports: offload rx %lld on port 1, tx %lld on port 2, hits %lld", orx,
	      otx, hits);

	/* 2. a drop flow above A, then a BARRIER while A's frames keep going: nothing sent
	 * after the BARRIER_REPLY may arrive */
	long long by_mod0 = ctl_value("app/offload_removed_by_flow_mod");
	uint32_t s2 = seq, after = 0;
	for (int i = 0; i < 100; i++) /* the entry is in by now: these go through the kernel */
		send_one(9000, 0, true), usleep(200);
	struct fm D = {.cmd = 0, .cookie = CK_DROP, .prio = 200, .udp_dst = 9000, .dscp = -1};
	uint32_t s3;
	bool replied = send_through_barrier(&D, 9000, &after, &s3);
	unsigned leaked = got_in(after, s3), before = got_in(s2, after);
	CHECK(replied, "BARRIER_REPLY to the drop flow's BARRIER (%u frames sent meanwhile)",
	      after - s2 - 100);
	CHECK(leaked == 0, "no frame leaked after the BARRIER_REPLY: %u of %u", leaked, s3 - after);
	CHECK(before >= 100, "the frames before the drop flow went through (%u)", before);
	long long by_mod1 = ctl_value("app/offload_removed_by_flow_mod");
	CHECK(by_mod1 > by_mod0, "the drop flow removed offloaded entries (%lld -> %lld)", by_mod0,
	      by_mod1);

	/* 3. delete the drop flow: forwarded again; delete A: its entries go with it */
	D.cmd = 4;
	CHECK(flow_mod(&D) == 0 && barrier() == 0, "drop flow deleted");
	uint32_t s4 = seq;
	for (int i = 0; i < 200; i++)
		send_one(9000, 0, true), usleep(2000);
	uint32_t s5 = seq;
	n = arrived(s4, s5, true);
	CHECK(n == s5 - s4, "phase 3: A forwards again: %u of %u", n, s5 - s4);
	long long inst2 = ctl_value("app/offload_installed");
	CHECK(inst2 > installed, "A's microflow offloaded again (installed %lld -> %lld)", installed,
	      inst2);
	A.cmd = 4;
	CHECK(flow_mod(&A) == 0 && barrier() == 0, "A deleted");
	uint32_t s6 = seq;
	for (int i = 0; i < 200; i++)
		send_one(9000, 0, true), usleep(500);
	uint32_t s7 = seq;
	n = arrived(s6, s7, false);
	usleep(200000);
	drain();
	n = got_in(s6, s7);
	CHECK(n == 0, "after A's DELETE and BARRIER none of %u frames arrived (got %u)", s7 - s6, n);

	/* 4. a flow matching ip_dscp: forwarded in userspace, never offloaded */
	long long inst3 = ctl_value("app/offload_installed"), nm0 = ctl_value("app/offload_not_match");
	struct fm S = {.cmd = 0, .cookie = CK_DSCP, .prio = 50, .udp_dst = 9001, .dscp = 10,
		       .out = true};
	CHECK(flow_mod(&S) == 0 && barrier() == 0, "flow matching ip_dscp 10 installed");
	uint32_t s8 = seq;
	for (int i = 0; i < 200; i++)
		send_one(9001, 40, false), usleep(2000);
	uint32_t s9 = seq;
	n = arrived(s8, s9, true);
	CHECK(n == s9 - s8, "phase 4: %u of %u dscp frames arrived", n, s9 - s8);
	CHECK(flow_stats(CK_DSCP, &n, &pk, &by) == 0 && pk == s9 - s8, "FLOW stats of it: %llu",
	      (unsigned long long)pk);
	long long inst4 = ctl_value("app/offload_installed"), nm1 = ctl_value("app/offload_not_match");
	CHECK(inst4 == inst3 && nm1 > nm0, "the ip_dscp flow was not offloaded (installed %lld -> "
	      "%lld, refused for its match %lld -> %lld)", inst3, inst4, nm0, nm1);

	/* 5. port 2 down: the entries sending to it stop (their frames reach userspace) */
	struct fm P = {.cmd = 0, .cookie = CK_P, .prio = 100, .udp_dst = 9003, .dscp = -1,
		       .out = true};
	long long inst5 = ctl_value("app/offload_installed");
	CHECK(flow_mod(&P) == 0 && barrier() == 0, "flow P installed");
	uint32_t s10 = seq;
	for (int i = 0; i < 100; i++)
		send_one(9003, 0, false), usleep(2000);
	n = arrived(s10, seq, true);
	CHECK(n == seq - s10 && ctl_value("app/offload_installed") > inst5,
	      "P forwarded (%u of %u) and offloaded", n, seq - s10);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "ip link set %s down", argv[5]);
	CHECK(system(cmd) == 0, "%s", cmd);
	usleep(500000); /* the agent tells the tables every 100 ms */
	long long u0 = ctl_value(path);
	uint32_t s11 = seq;
	for (int i = 0; i < 100; i++)
		send_one(9003, 0, false), usleep(1000);
	usleep(300000);
	long long u1 = ctl_value(path);
	CHECK(u1 - u0 == (long long)(seq - s11), "port 2 down: all %u frames of P reached port 1's "
	      "socket (%lld)", seq - s11, u1 - u0);
	snprintf(cmd, sizeof(cmd), "ip link set %s up", argv[5]);
	CHECK(system(cmd) == 0, "%s", cmd);
	usleep(1500000);
	long long h0 = ctl_value("app/offload_hits");
	uint32_t s12 = seq;
	for (int i = 0; i < 100; i++)
		send_one(9003, 0, false), usleep(2000);
	n = arrived(s12, seq, true);
	CHECK(flow_stats(CK_P, &n, &pk, &by) == 0 && ctl_value("app/offload_hits") > h0,
	      "port 2 up: P's frames go through the kernel again");
	drain();

	/* 6. the table fills: what does not fit stays in userspace, counted, nothing lost */
	struct fm Wsrc = {.cmd = 0, .cookie = 0xa7, .prio = 200, .udp_src = 1, .dscp = -1,
			  .out = true};
	struct fm W = {.cmd = 0, .cookie = 0xa6, .prio = 100, .udp_dst = 9004, .dscp = -1,
		       .out = true};
	CHECK(flow_mod(&Wsrc) == 0 && flow_mod(&W) == 0 && barrier() == 0,
	      "flows W and (above it, on udp source port 1) Wsrc installed");
	long long full0 = ctl_value("app/offload_not_full");
	uint32_t s13 = seq;
	for (int r = 0; r < 20; r++)
		for (int i = 0; i < 1500; i++) {
			cur_sport = (uint16_t)(20000 + i);
			send_one(9004, 0, false);
			if (i % 16 == 15)
				usleep(1000), drain();
		}
	cur_sport = 5000;
	uint32_t s14 = seq;
	n = arrived(s13, s14, true);
	long long ents = ctl_value("app/offload_entries"), full1 = ctl_value("app/offload_not_full");
	CHECK(n == s14 - s13, "full table: %u of %u frames arrived", n, s14 - s13);
	CHECK(ents == RF_OFFLOAD_MAX_ENTRIES && full1 > full0,
	      "the table filled (%lld entries of %d) and the rest was refused as full (%lld)",
	      ents, RF_OFFLOAD_MAX_ENTRIES, full1 - full0);
	CHECK(flow_stats(0xa6, &n, &pk, &by) == 0 && pk == s14 - s13,
	      "FLOW stats of W: %llu of %u (offloaded + userspace)", (unsigned long long)pk,
	      s14 - s13);

	/* 7. a flow on in_port alone: one port-wide entry, of whole frames only */
	struct fm all = {.cmd = 3, .port_only = true, .any_cookie = true, .dscp = -1};
	CHECK(flow_mod(&all) == 0 && barrier() == 0, "every flow deleted");
	long long ents7 = ctl_value("app/offload_entries");
	CHECK(ents7 == 0, "no entry left with the flows (%lld)", ents7);
	struct fm PW = {.cmd = 0, .cookie = 0xa8, .prio = 10, .port_only = true, .dscp = -1,
			.out = true};
	CHECK(flow_mod(&PW) == 0 && barrier() == 0, "flow PW (in_port 1 alone) installed");
	long long inst7 = ctl_value("app/offload_installed"), hits7 = ctl_value("app/offload_hits");
	uint32_t s15 = seq;
	for (int i = 0; i < 600; i++) { /* 600 microflows, paced */
		cur_sport = (uint16_t)(30000 + i);
		send_one((uint16_t)(7000 + i % 7), 0, false);
		if (i % 16 == 15)
			usleep(1000), drain();
	}
	cur_sport = 5000;
	uint32_t s16 = seq;
	n = arrived(s15, s16, true);
	CHECK(n == s16 - s15, "PW: %u of %u frames of 600 microflows arrived", n, s16 - s15);
	CHECK(flow_stats(0xa8, &n, &pk, &by) == 0 && pk == s16 - s15,
	      "FLOW stats of PW: %llu of %u (offloaded + userspace; the kernel's hits synced)",
	      (unsigned long long)pk, s16 - s15);
	long long ents8 = ctl_value("app/offload_entries");
	long long hits8 = ctl_value("app/offload_hits");
	CHECK(ents8 == 1 && ctl_value("app/offload_installed") == inst7 + 1,
	      "one entry for all of them (%lld now)", ents8);
	CHECK(hits8 > hits7, "the kernel forwarded %lld of them", hits8 - hits7);
	char rxp[128];
	snprintf(rxp, sizeof(rxp), "ports/%s/rx_pkts", argv[3]);
	long long user0 = ctl_value(rxp);
	uint32_t cut[50];
	for (int i = 0; i < 50; i++) { /* IPv4 total length 22: two bytes of UDP header */
		uint8_t f[FLEN];
		uint32_t sq = seq++;
		make_frame(f, sq, 5000, 9000, 0, MAC_DST);
		p16(f + 14 + 2, 22);
		ip_csum_set(f + 14); /* over the new length */
		cut[i] = sq;
		for (int j = 0; j < 100 && send(sa, f, FLEN, 0) != FLEN; j++)
			usleep(100);
	}
	uint32_t s17 = seq;
	(void)arrived(s16, s17, true); /* waits the whole 2 s: none should come */
	unsigned cut_out = 0;
	for (int i = 0; i < 50; i++)
		cut_out += got[cut[i]] != 0;
	long long user1 = ctl_value(rxp);
	CHECK(cut_out == 0, "no frame with a cut UDP header was forwarded (%u of 50)", cut_out);
	CHECK(user1 - user0 == 50, "all 50 reached port 1's socket (%lld), where the parser drops "
	      "them", user1 - user0);

	/* 8. a pipeline: G (table 0, udp 9005) writes metadata 5 and goes to table 1, where G1
	 * (metadata 5) sets eth_dst and outputs to 2: the kernel runs G1's program for the
	 * chain, both flows count every frame; then a drop flow in table 1 above G1 and a
	 * BARRIER while G's frames keep going: none sent after the reply arrives */
	struct fm clear = {.cmd = 3, .port_only = true, .any_cookie = true, .dscp = -1,
			   .table = 0xff};
	struct fm G = {.cmd = 0, .cookie = 0xb1, .prio = 100, .udp_dst = 9005, .dscp = -1,
		       .write_md = true, .goto_table = 1};
	struct fm G1 = {.cmd = 0, .cookie = 0xb2, .prio = 10, .port_only = true, .dscp = -1,
			.table = 1, .md_match = true, .set_dst = true, .out = true};
	CHECK(flow_mod(&clear) == 0 && flow_mod(&G) == 0 && flow_mod(&G1) == 0 && barrier() == 0 &&
	      errors_seen == 0, "pipeline G (table 0) -> G1 (table 1, metadata 5) installed");
	long long inst8 = ctl_value("app/offload_installed"), hits9 = ctl_value("app/offload_hits");
	uint32_t s18 = seq;
	for (int i = 0; i < 300; i++)
		send_one(9005, 0, true), usleep(2000);
	uint32_t s19 = seq;
	n = arrived(s18, s19, true);
	CHECK(n == s19 - s18 && !dups(s18, s19), "pipeline: %u of %u frames arrived once", n,
	      s19 - s18);
	uint64_t pk1, by1;
	CHECK(flow_stats(0xb1, &n, &pk, &by) == 0 && flow_stats(0xb2, &n, &pk1, &by1) == 0 &&
	      pk == s19 - s18 && pk1 == s19 - s18,
	      "FLOW stats: G %llu, G1 %llu of %u (offloaded + userspace, every flow of the chain)",
	      (unsigned long long)pk, (unsigned long long)pk1, s19 - s18);
	/* after a stats reply, which folds the kernel's hits in (else up to a second old) */
	long long hits10 = ctl_value("app/offload_hits");
	CHECK(ctl_value("app/offload_installed") > inst8 && hits10 > hits9,
	      "the pipeline's microflow was offloaded and the kernel forwarded %lld of its frames",
	      hits10 - hits9);
	CHECK(table_stats(1, &tl, &tm) == 0 && tl == s19 - s18 && tm == s19 - s18,
	      "TABLE stats: table 1 looked up %llu and matched %llu of %u (offloaded + userspace)",
	      (unsigned long long)tl, (unsigned long long)tm, s19 - s18);
	struct fm GD = {.cmd = 0, .cookie = 0xb3, .prio = 200, .udp_dst = 9005, .dscp = -1,
			.table = 1};
	uint32_t s21;
	replied = send_through_barrier(&GD, 9005, &after, &s21);
	leaked = got_in(after, s21);
	CHECK(replied && leaked == 0,
	      "a drop flow in table 1: no frame leaked after the BARRIER_REPLY (%u of %u)", leaked,
	      s21 - after);
	CHECK(flow_mod(&clear) == 0 && barrier() == 0 && ctl_value("app/offload_entries") == 0,
	      "every flow of every table deleted: no entry left");
	CHECK(bad_bytes == 0 && errors_seen == 0, "no frame differed (%u), no ERROR (%u)", bad_bytes,
	      errors_seen);
	return fails ? 1 : 0;
}
