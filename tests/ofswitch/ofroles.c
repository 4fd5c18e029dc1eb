/*
 * tests/ofswitch/ofroles.c: two OpenFlow 1.3 controllers at once against one ringflow-switch,
 * for roles_test.sh. It listens on 127.0.0.1:PORTA and :PORTB (the switch runs with
 * `--controller tcp:127.0.0.1:PORTA --controller tcp:127.0.0.1:PORTB --echo-interval 1`),
 * takes both connections and checks, in order:
 *   both start EQUAL; A becomes MASTER (generation 10); B's SLAVE request with generation 9
 *   is refused ROLE_REQUEST_FAILED/STALE, with 11 accepted; the slave's FLOW_MOD and
 *   PACKET_OUT get BAD_REQUEST/IS_SLAVE, its DESC request is answered; the master installs
 *   the flows (table-miss to CONTROLLER, ICMP and ARP between ports 1 and 2); a UDP frame
 *   (UDPCMD) misses: PACKET_IN to the master only, and so does a hard timeout's FLOW_REMOVED; SET_ASYNC gives the slave PACKET_IN
 *   (GET_ASYNC reads it back), SET_CONFIG's miss_send_len is per connection (GET_CONFIG);
 *   PINGCMD (N echoes) passes: AGGREGATE on ip,icmp counts exactly 2 flows, 2N packets,
 *   2N*98 bytes; TABLE stats: 5 active flows, matched >= 2N, lookups >= matched; B becomes
 *   MASTER (generation 12): A is demoted to SLAVE, A's FLOW_MOD refused, A's stale MASTER
 *   request (11) refused; malformed and unsupported requests get their ERRORs (BAD_LEN,
 *   BAD_TYPE, BAD_MULTIPART, MULTIPART_BUFFER_OVERFLOW, BAD_TABLE_ID, BAD_ROLE) and the
 *   connection stays up; LINKCMD (a port's link down) gives PORT_STATUS to both, slave too;
 *   the switch sends ECHO_REQUEST on a quiet connection; a controller that stops answering
 *   is dropped and the switch connects again (EQUAL again; the generation id is kept: 5 is
 *   stale); a controller that restarts (listener closed 2 s) is connected again; 200 more
 *   flows give a FLOW stats reply in parts (REPLY_MORE on all but the last); EXPERIMENTER
 *   and SET_CONFIG with FRAG_DROP get their ERRORs; a 1.0-only HELLO gets HELLO_FAILED.
 * Exit 0 when all hold, 1 (with a FAIL line each) otherwise; every wait has a deadline.
 *
 *   ofroles PORTA PORTB UDPCMD PINGCMD N LINKCMD
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "of.h"

#define CHECK(c, ...) do { bool ok_ = (c); printf(ok_ ? "ok: " : "FAIL: "); \
	printf(__VA_ARGS__); printf("\n"); fails += !ok_; } while (0)

enum { A, B };

struct conn {
	int fd, lfd;
	uint16_t port;
	uint8_t rbuf[1 << 18];
	size_t rlen;
	bool answer_echo, eof;
	unsigned echo_req, pin_udp, port_status, flow_removed;
};

static struct conn c[2];
static int fails;
static uint32_t next_xid = 1000;
static uint8_t last[1 << 16]; /* the message wait_for found */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

static void send_msg(int k, const uint8_t *b, ssize_t n)
{
	if (n <= 0 || c[k].fd < 0 || send(c[k].fd, b, (size_t)n, MSG_NOSIGNAL) != n)
		printf("note: send on %c failed\n", 'A' + k);
}

static int listen_on(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 2)) {
		perror("ofroles: listen");
		exit(1);
	}
	return fd;
}

/* One message taken from connection k: echo, PACKET_IN and PORT_STATUS are counted here
 * (and echo answered); wait_for looks at the rest. */
static bool is_udp_frame(const struct of_packet_in *pi)
{
	return pi->data_len >= 34 && of_get16(pi->data + 12) == 0x0800 && pi->data[23] == 17;
}

#define ANY_XID 0xffffffffu

/* Reads what is there on both connections for up to ms; stops early when connection
 * `want` has a message of wire type `type` (-1: any) with `xid` (ANY_XID: any), copied to
 * last[]: returns true. Other messages are counted (above) or dropped. */
static bool pump(unsigned ms, int want, int type, uint32_t xid)
{
	uint64_t end = now_ms() + ms;
	for (;;) {
		for (int k = 0; k < 2; k++) {
			struct conn *x = &c[k];
			while (x->rlen >= 8 && x->rlen >= of_get16(x->rbuf + 2)) {
				size_t l = of_get16(x->rbuf + 2);
				if (l < 8) { /* lost framing: treat as closed */
					x->eof = true;
					x->rlen = 0;
					break;
				}
				uint8_t *m = x->rbuf;
				bool hit = k == want && (type < 0 || m[1] == type) &&
					   (xid == ANY_XID || of_get32(m + 4) == xid);
				if (hit)
					memcpy(last, m, l);
				struct of_msg pm;
				struct of_fault f;
				if (m[1] == 2) { /* ECHO_REQUEST */
					x->echo_req++;
					if (x->answer_echo) {
						uint8_t r[64];
						send_msg(k, r, of_build_simple(r, sizeof(r), OF_VERSION_1_3,
									       OF_ECHO_REPLY, of_get32(m + 4)));
					}
				} else if (m[1] == 10 && of_parse(m, l, &pm, &f) == 0) {
					x->pin_udp += is_udp_frame(&pm.u.packet_in);
				} else if (m[1] == 12) {
					x->port_status++;
				} else if (m[1] == 11) {
					x->flow_removed++;
				}
				memmove(x->rbuf, x->rbuf + l, x->rlen - l);
				x->rlen -= l;
				if (hit)
					return true;
			}
		}
		uint64_t t = now_ms();
		if (t >= end)
			return false;
		struct pollfd p[2] = {{.fd = c[A].eof ? -1 : c[A].fd, .events = POLLIN},
				      {.fd = c[B].eof ? -1 : c[B].fd, .events = POLLIN}};
		if (poll(p, 2, (int)(end - t)) <= 0)
			continue;
		for (int k = 0; k < 2; k++) {
			if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = recv(c[k].fd, c[k].rbuf + c[k].rlen, sizeof(c[k].rbuf) - c[k].rlen, 0);
			if (n <= 0)
				c[k].eof = true;
			else
				c[k].rlen += (size_t)n;
		}
	}
}

/* Send b on k and wait (5 s) for the answer with the same xid: true if it is of wire type
 * `type` (in last[]). */
static bool ask(int k, const uint8_t *b, ssize_t n, int type)
{
	if (n < 8)
		return false;
	send_msg(k, b, n);
	return pump(5000, k, -1, of_get32(b + 4)) && last[1] == type;
}

/* ERROR type/code for the request b on k (wire type 1), or false. */
static bool error_is(int k, const uint8_t *b, ssize_t n, uint16_t type, uint16_t code)
{
	return ask(k, b, n, 1) && of_get16(last + 8) == type && of_get16(last + 10) == code;
}

static bool alive(int k)
{
	uint8_t b[64];
	return ask(k, b, of_build_simple(b, sizeof(b), OF_VERSION_1_3, OF_ECHO_REQUEST, next_xid++), 3);
}

static ssize_t xmsg(uint8_t *b, size_t cap, struct of_xmsg *x)
{
	x->version = OF_VERSION_1_3;
	x->xid = next_xid++;
	return of_xserialize(x, b, cap);
}

/* ROLE_REQUEST on k: true with the role and generation id of the reply, or false (ERROR code in *err). */
static bool role(int k, uint32_t r, uint64_t gen, uint32_t *got, uint64_t *ggen, int *err)
{
	uint8_t b[64];
	struct of_xmsg x = {.type = OF_X_ROLE_REQUEST, .u.role = {r, gen}};
	ssize_t n = xmsg(b, sizeof(b), &x);
	send_msg(k, b, n);
	*err = -1;
	if (!pump(5000, k, -1, of_get32(b + 4)))
		return false;
	if (last[1] == 1) {
		*err = of_get16(last + 8) == OFPET_ROLE_REQUEST_FAILED ? of_get16(last + 10) : 999;
		return false;
	}
	struct of_fault f;
	if (last[1] != OF13_ROLE_REPLY || of_xparse(last, of_get16(last + 2), &x, &f) != 0)
		return false;
	*got = x.u.role.role;
	*ggen = x.u.role.generation_id;
	return true;
}

/* A FLOW_MOD ADD: priority, match (in_port if nonzero, eth_type if nonzero, ip_proto if
 * nonzero), APPLY_ACTIONS [OUTPUT out (max_len NO_BUFFER)]. */
static ssize_t flow_add(uint8_t *b, uint16_t prio, uint32_t in_port, uint16_t eth_type,
			uint8_t proto, uint32_t out)
{
	memset(b, 0, 256);
	uint8_t *m = b + 48 + 4;
	if (in_port) { put32(m, 0x80000004); put32(m + 4, in_port); m += 8; }
	if (eth_type) { put32(m, 0x80000a02); put16(m + 4, eth_type); m += 6; }
	if (proto) { put32(m, 0x80001401); m[4] = proto; m += 5; }
	size_t mlen = (size_t)(m - (b + 48));
	put16(b + 48, 1); /* OFPMT_OXM */
	put16(b + 50, (uint16_t)mlen);
	uint8_t *p = b + 48 + ((mlen + 7) / 8) * 8;
	put16(p, 4); /* APPLY_ACTIONS */
	put16(p + 2, 24);
	put16(p + 8, 0); /* OUTPUT */
	put16(p + 10, 16);
	put32(p + 12, out);
	put16(p + 16, 0xffff);
	size_t len = (size_t)(p + 24 - b);
	b[0] = OF_VERSION_1_3;
	b[1] = 14;
	put16(b + 2, (uint16_t)len);
	put32(b + 4, next_xid++);
	put16(b + 30, prio);
	put32(b + 32, OFP_NO_BUFFER);
	put32(b + 36, OFPP_ANY);
	put32(b + 40, OFPG_ANY);
	return (ssize_t)len;
}

/* A bare header (and body length extra zero bytes) of wire type t. */
static ssize_t raw(uint8_t *b, uint8_t t, size_t extra)
{
	memset(b, 0, 8 + extra);
	b[0] = OF_VERSION_1_3;
	b[1] = t;
	put16(b + 2, (uint16_t)(8 + extra));
	put32(b + 4, next_xid++);
	return (ssize_t)(8 + extra);
}

/* A multipart request of kind with flags and extra body bytes (zero). */
static ssize_t mp(uint8_t *b, uint16_t kind, uint16_t flags, size_t body)
{
	ssize_t n = raw(b, 18, 8 + body);
	put16(b + 8, kind);
	put16(b + 10, flags);
	return n;
}

/* Accepts the switch on listener k (up to secs) and does the HELLO; true when done. */
static bool take(int k, int secs)
{
	struct pollfd p = {.fd = c[k].lfd, .events = POLLIN};
	uint64_t end = now_ms() + (uint64_t)secs * 1000;
	while (poll(&p, 1, 50) != 1) { /* the other connection keeps answering meanwhile */
		if (now_ms() >= end)
			return false;
		pump(50, -1, 0, 0);
	}
	c[k].fd = accept4(c[k].lfd, NULL, NULL, SOCK_CLOEXEC);
	c[k].rlen = 0;
	c[k].eof = false;
	c[k].answer_echo = true;
	uint8_t b[64];
	send_msg(k, b, of_build_hello(b, sizeof(b), OF_VERSION_1_3, next_xid++, 1u << OF_VERSION_1_3));
	return c[k].fd >= 0 && pump(5000, k, 0, ANY_XID); /* its HELLO */
}

/* Drains, runs cmd, and waits up to 3 s for a UDP PACKET_IN on connection k; then 300 ms
 * more for stragglers. Returns the UDP PACKET_INs each connection got. */
static void udp_miss(const char *cmd, int k, unsigned got[2])
{
	pump(300, -1, 0, 0);
	c[A].pin_udp = c[B].pin_udp = 0;
	if (system(cmd) != 0)
		printf("note: %s failed\n", cmd);
	for (uint64_t end = now_ms() + 3000; now_ms() < end && !c[k].pin_udp;)
		pump(50, -1, 0, 0);
	pump(300, -1, 0, 0);
	got[A] = c[A].pin_udp;
	got[B] = c[B].pin_udp;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: ofroles PORTA PORTB UDPCMD PINGCMD N LINKCMD\n");
		return 2;
	}
	const char *udp = argv[3], *ping = argv[4], *link = argv[6];
	unsigned npings = (unsigned)atoi(argv[5]);
	uint8_t b[4096];
	uint32_t r;
	uint64_t g;
	int err;
	unsigned got[2];
	struct of_fault f;
	struct of_xmsg x;
	for (int k = 0; k < 2; k++) {
		c[k].port = (uint16_t)atoi(argv[1 + k]);
		c[k].lfd = listen_on(c[k].port);
		c[k].fd = -1;
	}
	bool up = take(A, 20) && take(B, 20);
	CHECK(up, "the switch connected to both controllers");
	if (!up)
		return 1;

	/* Roles. */
	CHECK(role(A, OFPCR_ROLE_NOCHANGE, 0, &r, &g, &err) && r == OFPCR_ROLE_EQUAL,
	      "A starts EQUAL");
	CHECK(role(A, OFPCR_ROLE_MASTER, 10, &r, &g, &err) && r == OFPCR_ROLE_MASTER && g == 10,
	      "A: MASTER, generation 10");
	CHECK(!role(B, OFPCR_ROLE_SLAVE, 9, &r, &g, &err) && err == OFPRRFC_STALE && alive(B),
	      "B: SLAVE with generation 9 refused STALE (got %d), connection up", err);
	CHECK(role(B, OFPCR_ROLE_SLAVE, 11, &r, &g, &err) && r == OFPCR_ROLE_SLAVE && g == 11,
	      "B: SLAVE, generation 11");
	CHECK(role(A, OFPCR_ROLE_NOCHANGE, 0, &r, &g, &err) && r == OFPCR_ROLE_MASTER,
	      "A still MASTER");
	ssize_t n = flow_add(b, 5, 1, 0, 0, 2);
	CHECK(error_is(B, b, n, OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE), "slave's FLOW_MOD: IS_SLAVE");
	n = raw(b, 13, 16); /* PACKET_OUT, no actions, no data */
	put32(b + 8, OFP_NO_BUFFER);
	put32(b + 12, OFPP_CONTROLLER);
	CHECK(error_is(B, b, n, OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE), "slave's PACKET_OUT: IS_SLAVE");
	x = (struct of_xmsg){.type = OF_X_DESC_REQUEST};
	n = xmsg(b, sizeof(b), &x);
	bool ok = ask(B, b, n, 19) && of_xparse(last, of_get16(last + 2), &x, &f) == 0 &&
		  x.type == OF_X_DESC_REPLY && !strcmp(x.u.desc.mfr, "ringflow");
	CHECK(ok, "slave's DESC request answered (mfr \"%s\", dp \"%s\")", ok ? x.u.desc.mfr : "",
	      ok ? x.u.desc.dp : "");

	/* The master's flows, then a table miss. */
	send_msg(A, b, flow_add(b, 0, 0, 0, 0, OFPP_CONTROLLER));
	send_msg(A, b, flow_add(b, 10, 1, 0x0800, 1, 2));
	send_msg(A, b, flow_add(b, 10, 2, 0x0800, 1, 1));
	send_msg(A, b, flow_add(b, 10, 1, 0x0806, 0, 2));
	send_msg(A, b, flow_add(b, 10, 2, 0x0806, 0, 1));
	n = raw(b, 20, 0);
	CHECK(ask(A, b, n, 21), "master's five FLOW_MODs, BARRIER answered");
	udp_miss(udp, A, got);
	CHECK(got[A] >= 1 && got[B] == 0, "table miss: PACKET_IN to the master (%u), none to the "
	      "slave (%u)", got[A], got[B]);
	/* FLOW_REMOVED (hard timeout 1 s, SEND_FLOW_REM) to the master only. */
	n = flow_add(b, 400, 1, 0x88b6, 0, 2);
	put16(b + 28, 1);      /* hard_timeout */
	put16(b + 44, 0x1);    /* OFPFF_SEND_FLOW_REM */
	send_msg(A, b, n);
	c[A].flow_removed = c[B].flow_removed = 0;
	for (uint64_t end = now_ms() + 5000; now_ms() < end && !c[A].flow_removed;)
		pump(50, -1, 0, 0);
	pump(300, -1, 0, 0);
	CHECK(c[A].flow_removed == 1 && c[B].flow_removed == 0, "FLOW_REMOVED to the master (%u), "
	      "none to the slave (%u)", c[A].flow_removed, c[B].flow_removed);

	/* SET_ASYNC: the slave asks for NO_MATCH PACKET_INs; GET_ASYNC reads it back. */
	x = (struct of_xmsg){.type = OF_X_SET_ASYNC, .u.async = {{3, 1}, {7, 7}, {15, 0}}};
	send_msg(B, b, xmsg(b, sizeof(b), &x));
	x = (struct of_xmsg){.type = OF_X_GET_ASYNC_REQUEST};
	n = xmsg(b, sizeof(b), &x);
	ok = ask(B, b, n, OF13_GET_ASYNC_REPLY) && of_xparse(last, of_get16(last + 2), &x, &f) == 0 &&
	     x.u.async.packet_in[1] == 1 && x.u.async.port_status[1] == 7;
	CHECK(ok, "SET_ASYNC then GET_ASYNC on the slave");
	udp_miss(udp, B, got);
	CHECK(got[A] >= 1 && got[B] >= 1, "after SET_ASYNC the slave gets PACKET_IN too (%u, %u)",
	      got[A], got[B]);
	x = (struct of_xmsg){.type = OF_X_SET_ASYNC, .u.async = {{3, 0}, {7, 7}, {15, 0}}};
	send_msg(B, b, xmsg(b, sizeof(b), &x));

	/* SET_CONFIG miss_send_len is per connection. */
	n = raw(b, 9, 4);
	put16(b + 10, 200);
	send_msg(B, b, n);
	uint16_t msl[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		x = (struct of_xmsg){.type = OF_X_GET_CONFIG_REQUEST};
		n = xmsg(b, sizeof(b), &x);
		if (ask(k, b, n, OF13_GET_CONFIG_REPLY) &&
		    of_xparse(last, of_get16(last + 2), &x, &f) == 0)
			msl[k] = x.u.config.miss_send_len;
	}
	CHECK(msl[A] == 128 && msl[B] == 200, "GET_CONFIG: miss_send_len A %u (default 128), "
	      "B %u (set 200)", msl[A], msl[B]);

	/* Traffic through the ICMP flows: AGGREGATE and TABLE counts. */
	if (system(ping) != 0)
		printf("FAIL: %s\n", ping), fails++;
	pump(200, -1, 0, 0);
	x = (struct of_xmsg){.type = OF_X_AGGREGATE_REQUEST};
	x.u.aggregate_request.table_id = OFPTT_ALL;
	x.u.aggregate_request.out_port = OFPP_ANY;
	x.u.aggregate_request.out_group = OFPG_ANY;
	x.u.aggregate_request.match.fields = OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO;
	x.u.aggregate_request.match.eth_type = 0x0800;
	x.u.aggregate_request.match.ip_proto = 1;
	n = xmsg(b, sizeof(b), &x);
	ok = ask(B, b, n, 19) && of_xparse(last, of_get16(last + 2), &x, &f) == 0 &&
	     x.type == OF_X_AGGREGATE_REPLY;
	CHECK(ok && x.u.aggregate.flow_count == 2 && x.u.aggregate.packet_count == 2 * npings &&
	      x.u.aggregate.byte_count == 98ull * 2 * npings,
	      "AGGREGATE ip,icmp after %u pings: %u flows, %llu packets, %llu bytes (want 2, %u, %u)",
	      npings, ok ? x.u.aggregate.flow_count : 0,
	      ok ? (unsigned long long)x.u.aggregate.packet_count : 0,
	      ok ? (unsigned long long)x.u.aggregate.byte_count : 0, 2 * npings, 98 * 2 * npings);
	x = (struct of_xmsg){.type = OF_X_TABLE_REQUEST};
	n = xmsg(b, sizeof(b), &x);
	struct of_table_stats ts = {0};
	ok = ask(B, b, n, 19) && of_xparse(last, of_get16(last + 2), &x, &f) == 0 &&
	     x.type == OF_X_TABLE_REPLY && x.u.tables.n == 8 && /* the pipeline's tables */
	     of_table_stats_at(&x.u.tables, 0, &ts) == 0;
	CHECK(ok && ts.table_id == 0 && ts.active_count == 5 && ts.matched_count >= 2 * npings &&
	      ts.lookup_count >= ts.matched_count,
	      "TABLE stats: table 0 of 8, %u active, %llu lookups, %llu matched", ts.active_count,
	      (unsigned long long)ts.lookup_count, (unsigned long long)ts.matched_count);

	/* A new master demotes the old one; the old one's stale request is refused. */
	CHECK(role(B, OFPCR_ROLE_MASTER, 12, &r, &g, &err) && r == OFPCR_ROLE_MASTER && g == 12,
	      "B: MASTER, generation 12");
	CHECK(role(A, OFPCR_ROLE_NOCHANGE, 0, &r, &g, &err) && r == OFPCR_ROLE_SLAVE && g == 12,
	      "A demoted to SLAVE by B's request");
	n = flow_add(b, 5, 1, 0, 0, 2);
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE), "demoted A's FLOW_MOD: IS_SLAVE");
	CHECK(!role(A, OFPCR_ROLE_MASTER, 11, &r, &g, &err) && err == OFPRRFC_STALE,
	      "A: MASTER with generation 11 refused STALE");
	udp_miss(udp, B, got);
	CHECK(got[B] >= 1 && got[A] == 0, "table miss: PACKET_IN to the new master (%u), none to the "
	      "demoted one (%u)", got[B], got[A]);
	CHECK(role(A, OFPCR_ROLE_EQUAL, 0, &r, &g, &err) && r == OFPCR_ROLE_EQUAL,
	      "A: EQUAL (no generation id needed)");
	udp_miss(udp, A, got);
	CHECK(got[A] >= 1 && got[B] >= 1, "table miss: PACKET_IN to master and equal (%u, %u)",
	      got[B], got[A]);

	/* Bad input: the ERROR, and the connection stays up. */
	n = raw(b, OF13_ROLE_REQUEST, 12); /* 20 bytes, not 24 */
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN) && alive(A),
	      "ROLE_REQUEST of 20 bytes: BAD_LEN, connection up");
	n = raw(b, 40, 0);
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE) && alive(A),
	      "message type 40: BAD_TYPE, connection up");
	n = mp(b, 5, 0, 8); /* QUEUE stats (GROUP_DESC is answered since the groups, issue 25) */
	put32(b + 16, OFPP_ANY);
	put32(b + 20, 0xffffffffu);
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, OFPBRC_BAD_MULTIPART) && alive(A),
	      "multipart QUEUE: BAD_MULTIPART, connection up");
	n = mp(b, OFPMP13_DESC, OFPMPF_MORE, 0);
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, 13) && alive(A),
	      "multipart request with REQ_MORE: MULTIPART_BUFFER_OVERFLOW, connection up");
	n = mp(b, OF_MP_FLOW, 0, 40); /* table 9 (of 0..7), empty match */
	b[16] = 9;
	put32(b + 20, OFPP_ANY);
	put32(b + 24, OFPG_ANY);
	put16(b + 48, 1);
	put16(b + 50, 4);
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, 9) && alive(A),
	      "FLOW stats of table 9: BAD_TABLE_ID, connection up");
	CHECK(!role(A, 7, 20, &r, &g, &err) && err == OFPRRFC_BAD_ROLE && alive(A),
	      "ROLE_REQUEST role 7: BAD_ROLE, connection up");
	n = raw(b, 4, 8); /* EXPERIMENTER, experimenter id 0 */
	CHECK(error_is(A, b, n, OFPET_BAD_REQUEST, 3) && alive(A),
	      "EXPERIMENTER: BAD_EXPERIMENTER, connection up");
	n = raw(b, 9, 4); /* SET_CONFIG FRAG_DROP */
	put16(b + 8, 1);
	put16(b + 10, 128);
	CHECK(error_is(A, b, n, OFPET_SWITCH_CONFIG_FAILED, OFPSCFC_BAD_FLAGS) && alive(A),
	      "SET_CONFIG with FRAG_DROP: SWITCH_CONFIG_FAILED/BAD_FLAGS, connection up");

	/* FLOW stats split with REPLY_MORE: 200 more flows (ethertype 0x88b5, no traffic). */
	for (unsigned i = 0; i < 200; i++)
		send_msg(B, b, flow_add(b, (uint16_t)(100 + i), 1, 0x88b5, 0, 2));
	n = mp(b, OF_MP_FLOW, 0, 40);
	b[16] = OFPTT_ALL;
	put32(b + 20, OFPP_ANY);
	put32(b + 24, OFPG_ANY);
	put16(b + 48, 1);
	put16(b + 50, 4);
	send_msg(B, b, n);
	unsigned parts = 0, flows = 0, more = 0;
	uint32_t fxid = of_get32(b + 4);
	while (pump(5000, B, 19, fxid)) {
		size_t l = of_get16(last + 2);
		parts++;
		for (size_t off = 16; off + 2 <= l && of_get16(last + off) >= 56;
		     off += of_get16(last + off))
			flows++;
		if (!(of_get16(last + 10) & OFPMPF_MORE))
			break;
		more++;
	}
	CHECK(flows == 205 && parts >= 2 && more == parts - 1,
	      "FLOW stats of 205 flows: %u replies, REPLY_MORE on all but the last (%u), %u flows",
	      parts, more, flows);
	n = flow_add(b, 0, 0, 0x88b5, 0, 0);
	b[24] = OFPTT_ALL;
	b[25] = OFPFC_DELETE;
	send_msg(B, b, n);
	n = raw(b, 20, 0);
	CHECK(ask(B, b, n, 21), "DELETE eth_type=0x88b5, BARRIER");

	/* PORT_STATUS to every controller, the slave too. */
	CHECK(role(A, OFPCR_ROLE_SLAVE, 13, &r, &g, &err) && r == OFPCR_ROLE_SLAVE, "A: SLAVE again");
	c[A].port_status = c[B].port_status = 0;
	if (system(link) != 0)
		printf("FAIL: %s\n", link), fails++;
	for (uint64_t end = now_ms() + 5000; now_ms() < end && (!c[A].port_status || !c[B].port_status);)
		pump(50, -1, 0, 0);
	CHECK(c[A].port_status >= 1 && c[B].port_status >= 1, "PORT_STATUS to the slave (%u) and "
	      "the master (%u)", c[A].port_status, c[B].port_status);

	/* ECHO from the switch on a quiet connection (--echo-interval 1). */
	c[A].echo_req = 0;
	for (uint64_t end = now_ms() + 4000; now_ms() < end && !c[A].echo_req;)
		pump(50, -1, 0, 0);
	CHECK(c[A].echo_req >= 1 && !c[A].eof, "the switch sent ECHO_REQUEST on a quiet connection");

	/* A dead controller: A stops answering; the switch drops it after 3 intervals and
	 * connects again (a new session: EQUAL; the generation id stays 13). */
	c[A].answer_echo = false;
	for (uint64_t end = now_ms() + 8000; now_ms() < end && !c[A].eof;)
		pump(100, -1, 0, 0);
	CHECK(c[A].eof, "the switch dropped the controller that stopped answering ECHO");
	close(c[A].fd);
	c[A].fd = -1;
	ok = take(A, 10);
	CHECK(ok && role(A, OFPCR_ROLE_NOCHANGE, 0, &r, &g, &err) && r == OFPCR_ROLE_EQUAL &&
	      g == 13, "the switch connected again: EQUAL, generation id kept (%llu)",
	      (unsigned long long)g);
	CHECK(!role(A, OFPCR_ROLE_MASTER, 5, &r, &g, &err) && err == OFPRRFC_STALE,
	      "the reconnected controller's MASTER with generation 5: STALE");

	/* A controller restart: the listener goes away for 2 s. */
	close(c[A].fd);
	close(c[A].lfd);
	c[A].fd = -1;
	pump(2000, -1, 0, 0);
	c[A].lfd = listen_on(c[A].port);
	ok = take(A, 12);
	CHECK(ok && alive(A), "the switch reconnected after the controller restarted");
	CHECK(!c[B].eof && alive(B), "B's connection stayed up all along");

	/* A controller that speaks only 1.0: HELLO_FAILED/INCOMPATIBLE, then the close. */
	close(c[A].fd);
	c[A].fd = -1;
	struct pollfd p = {.fd = c[A].lfd, .events = POLLIN};
	ok = false;
	for (uint64_t end = now_ms() + 10000; now_ms() < end && !ok;) {
		ok = poll(&p, 1, 50) == 1;
		pump(50, -1, 0, 0);
	}
	if (ok) {
		c[A].fd = accept4(c[A].lfd, NULL, NULL, SOCK_CLOEXEC);
		c[A].rlen = 0;
		c[A].eof = false;
		uint8_t h[8] = {OF_VERSION_1_0, 0, 0, 8, 0, 0, 0, 77};
		send_msg(A, h, 8);
		ok = pump(5000, A, 1, ANY_XID) && of_get16(last + 8) == OFPET_HELLO_FAILED &&
		     of_get16(last + 10) == OFPHFC_INCOMPATIBLE;
		for (uint64_t end = now_ms() + 3000; now_ms() < end && !c[A].eof;)
			pump(50, -1, 0, 0);
	}
	CHECK(ok && c[A].eof, "a 1.0-only HELLO: HELLO_FAILED/INCOMPATIBLE and the connection closed");
	return fails ? 1 : 0;
}
