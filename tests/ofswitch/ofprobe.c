/*
 * tests/ofswitch/ofprobe.c: a tiny OpenFlow 1.3 controller that checks what ringflow-switch
 * answers. It listens on IP:PORT, takes the switch's connection (up to 20 s), and then,
 * in order, checks: the HELLO and FEATURES_REPLY (datapath id, no buffers); PORT_DESC
 * (2 ports numbered 1, 2); FLOW stats (at least two flows matching in_port + eth_dst, the
 * learning switch's, with packet counters > 0, and the table-miss flow); a FLOW_MOD cut
 * short gets ERROR BAD_REQUEST/BAD_LEN; a FLOW_MOD matching pbb_uca (a 1.4 field) gets ERROR
 * BAD_MATCH/BAD_FIELD; a FLOW_MOD with a SET_FIELD of in_phy_port gets BAD_ACTION/BAD_SET_TYPE;
 * after each the
 * connection is still up (ECHO answered); GET_CONFIG and BARRIER answered; CHECK_OVERLAP
 * refused with FLOW_MOD_FAILED/OVERLAP; FLOW_REMOVED after a hard timeout; with a second
 * argument, runs it (a command taking a port's link down) and expects PORT_STATUS. Exit 0
 * when all hold, 1 (with one line per failure) otherwise.
 *
 *   ofprobe 127.0.0.1:6653 ["ip link set veth2 down"]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "of.h"

static int fails;
static uint8_t rbuf[1 << 17];
static size_t rlen;

#define CHECK(c, ...) do { if (!(c)) { printf("FAIL: " __VA_ARGS__); printf("\n"); fails++; } \
	else { printf("ok: " __VA_ARGS__); printf("\n"); } } while (0)

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v;
}

static int send_all(int fd, const uint8_t *b, ssize_t n)
{
	if (n <= 0)
		return -1;
	return send(fd, b, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* How long next_msg waits in silence, in 10 ms rounds: 5 s, longer around the flood below. */
static int idle_rounds = 500;

/* Next message into out (raw copy in raw/len); skips PACKET_IN. 0, or -1 after idle_rounds. */
static int next_msg(int fd, struct of_msg *m, uint8_t *raw, size_t *rawlen)
{
	for (int rounds = 0; rounds < idle_rounds;) {
		if (rlen >= 8) {
			size_t l = of_get16(rbuf + 2);
			if (l < 8)
				return -1;
			if (rlen >= l) {
				memcpy(raw, rbuf, l);
				*rawlen = l;
				memmove(rbuf, rbuf + l, rlen - l);
				rlen -= l;
				struct of_fault f;
				if (raw[1] == OF13_GET_CONFIG_REPLY) {
					memset(m, 0, sizeof(*m));
					m->type = OF_TYPE_COUNT; /* marker: GET_CONFIG_REPLY */
					m->xid = of_get32(raw + 4);
					return 0;
				}
				if (of_parse(raw, l, m, &f) != 0) {
					printf("FAIL: the switch sent a malformed message (%s)\n", f.why);
					return -1;
				}
				if (m->type == OF_PACKET_IN)
					continue;
				return 0;
			}
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 10) <= 0) {
			rounds++;
			continue;
		}
		ssize_t n = recv(fd, rbuf + rlen, sizeof(rbuf) - rlen, 0);
		if (n <= 0)
			return -1;
		rlen += (size_t)n;
	}
	return -1;
}

static uint8_t raw[1 << 17];

/* Send b[0..n) and wait for a message of type t with xid; 0 or -1. */
static int ask(int fd, const uint8_t *b, ssize_t n, enum of_type t, uint32_t xid, struct of_msg *m)
{
	size_t rl;
	if (send_all(fd, b, n))
		return -1;
	while (next_msg(fd, m, raw, &rl) == 0)
		if (m->type == t && m->xid == xid)
			return 0;
	return -1;
}

static bool alive(int fd, uint32_t xid)
{
	uint8_t b[64];
	struct of_msg m;
	return ask(fd, b, of_build_simple(b, sizeof(b), OF_VERSION_1_3, OF_ECHO_REQUEST, xid),
		   OF_ECHO_REPLY, xid, &m) == 0;
}

/* A 1.3 FLOW_MOD ADD header (48 bytes) into b, total length len. */
static void flow_mod_head(uint8_t *b, uint16_t len, uint32_t xid)
{
	memset(b, 0, 48);
	b[0] = OF_VERSION_1_3;
	b[1] = 14;
	put16(b + 2, len);
	put32(b + 4, xid);
	put16(b + 30, 10);             /* priority */
	put32(b + 32, OFP_NO_BUFFER);  /* buffer_id */
	put32(b + 36, OFPP_ANY);
	put32(b + 40, OFPG_ANY);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || !strchr(argv[1], ':')) {
		fprintf(stderr, "usage: ofprobe IPV4:PORT [COMMAND-THAT-TAKES-A-LINK-DOWN]\n");
		return 2;
	}
	char host[64];
	snprintf(host, sizeof(host), "%.*s", (int)(strchr(argv[1], ':') - argv[1]), argv[1]);
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(strchr(argv[1], ':') + 1))};
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1)) {
		perror("ofprobe: listen");
		return 1;
	}
	struct pollfd p = {.fd = ls, .events = POLLIN};
	if (poll(&p, 1, 20000) != 1) {
		printf("FAIL: the switch did not connect within 20 s\n");
		return 1;
	}
	int fd = accept(ls, NULL, NULL);
	close(ls);
	uint8_t b[2048];
	struct of_msg m;
	size_t rl;
	send_all(fd, b, of_build_hello(b, sizeof(b), OF_VERSION_1_3, 1, 1u << OF_VERSION_1_3));
	CHECK(next_msg(fd, &m, raw, &rl) == 0 && m.type == OF_HELLO, "HELLO from the switch");
	CHECK(ask(fd, b, of_build_simple(b, sizeof(b), OF_VERSION_1_3, OF_FEATURES_REQUEST, 2),
		  OF_FEATURES_REPLY, 2, &m) == 0 && m.u.features.n_buffers == 0 &&
	      m.u.features.datapath_id != 0, "FEATURES_REPLY (dpid %llx, n_buffers 0)",
	      (unsigned long long)m.u.features.datapath_id);

	struct of_msg req = {.version = OF_VERSION_1_3, .type = OF_MULTIPART_REQUEST, .xid = 3};
	req.u.mp_request.mp_type = OF_MP_PORT_DESC;
	bool ok = ask(fd, b, of_serialize(&req, b, sizeof(b)), OF_MULTIPART_REPLY, 3, &m) == 0;
	struct of_port pt[2];
	ok = ok && m.u.mp_reply.body.n == 2 && of_port_at(OF_VERSION_1_3, &m.u.mp_reply.body, 0, &pt[0]) == 0 &&
	     of_port_at(OF_VERSION_1_3, &m.u.mp_reply.body, 1, &pt[1]) == 0 && pt[0].port_no == 1 &&
	     pt[1].port_no == 2;
	CHECK(ok, "PORT_DESC: ports 1 and 2");

	req.xid = 4;
	req.u.mp_request.mp_type = OF_MP_FLOW;
	req.u.mp_request.table_id = OFPTT_ALL;
	req.u.mp_request.out_port = OFPP_ANY;
	req.u.mp_request.out_group = OFPG_ANY;
	ok = ask(fd, b, of_serialize(&req, b, sizeof(b)), OF_MULTIPART_REPLY, 4, &m) == 0;
	unsigned learned = 0, moved = 0, miss = 0, cur = 0;
	struct of_flow_stats fs;
	while (ok && of_flow_stats_next(OF_VERSION_1_3, &m.u.mp_reply.body, &cur, &fs) == 1) {
		printf("  flow: priority %u fields 0x%llx in_port %u packets %llu bytes %llu -> %u "
		       "action(s), first port 0x%x\n", fs.priority,
		       (unsigned long long)fs.match.fields, fs.match.in_port,
		       (unsigned long long)fs.packet_count, (unsigned long long)fs.byte_count,
		       fs.actions.n, fs.actions.n ? fs.actions.a[0].port : 0);
		if (fs.match.fields == (OF_MATCH_IN_PORT | OF_MATCH_ETH_DST) && fs.actions.n == 1) {
			learned++;
			moved += fs.packet_count > 0;
		}
		if (fs.priority == 0 && fs.match.fields == 0 && fs.actions.n == 1 &&
		    fs.actions.a[0].port == OFPP_CONTROLLER)
			miss++;
	}
	CHECK(ok && learned >= 2 && moved >= 2 && miss == 1,
	      "FLOW stats: %u learned flows (in_port+eth_dst), %u with packets, %u table-miss",
	      learned, moved, miss);

	/* A FLOW_MOD cut short: header says 24 bytes. */
	flow_mod_head(b, 24, 5);
	ok = ask(fd, b, 24, OF_ERROR, 5, &m) == 0 && m.u.error.type == OFPET_BAD_REQUEST &&
	     m.u.error.code == OFPBRC_BAD_LEN;
	CHECK(ok && alive(fd, 6), "short FLOW_MOD: ERROR BAD_REQUEST/BAD_LEN, connection up");

	/* A FLOW_MOD matching pbb_uca (OXM 0x80005001): OpenFlow 1.4's, not a 1.3 field. */
	flow_mod_head(b, 64, 7);
	put16(b + 48, 1); /* OFPMT_OXM */
	put32(b + 52, 0x80005001);    /* pbb_uca */
	memset(b + 56, 0, 8);
	b[56] = 1;
	put16(b + 50, 4 + 5);         /* padded to 16 */
	ok = ask(fd, b, 64, OF_ERROR, 7, &m) == 0 && m.u.error.type == OFPET_BAD_MATCH &&
	     m.u.error.code == 6 /* OFPBMC_BAD_FIELD */;
	CHECK(ok && alive(fd, 8), "FLOW_MOD on pbb_uca: ERROR BAD_MATCH/BAD_FIELD, connection up");

	/* A FLOW_MOD with APPLY_ACTIONS [SET_FIELD in_phy_port]: a field no switch sets. */
	flow_mod_head(b, 48 + 8 + 24, 9);
	put16(b + 48, 1);
	put16(b + 50, 4);             /* empty match, padded to 8 */
	memset(b + 52, 0, 4);
	put16(b + 56, 4);             /* OFPIT_APPLY_ACTIONS */
	put16(b + 58, 24);
	memset(b + 60, 0, 4);
	put16(b + 64, 25);            /* OFPAT_SET_FIELD */
	put16(b + 66, 16);
	put32(b + 68, 0x80000204);    /* in_phy_port */
	memcpy(b + 72, "\x00\x00\x00\x01\x00\x00\x00\x00", 8); /* value 1, 4 bytes padding */
	ok = ask(fd, b, 80, OF_ERROR, 9, &m) == 0;
	CHECK(ok && m.u.error.type == OFPET_BAD_ACTION && m.u.error.code == OFPBAC_BAD_SET_TYPE &&
	      alive(fd, 10),
	      "FLOW_MOD with SET_FIELD in_phy_port: ERROR BAD_ACTION/BAD_SET_TYPE (got %s %u/%u), "
	      "connection up",
	      ok ? "ERROR" : "nothing", m.u.error.type, m.u.error.code);

	/* GET_CONFIG and BARRIER. */
	memset(b, 0, 8);
	b[0] = OF_VERSION_1_3;
	b[1] = OF13_GET_CONFIG_REQUEST;
	put16(b + 2, 8);
	put32(b + 4, 11);
	CHECK(ask(fd, b, 8, OF_TYPE_COUNT, 11, &m) == 0, "GET_CONFIG_REPLY");
	CHECK(ask(fd, b, of_build_simple(b, sizeof(b), OF_VERSION_1_3, OF_BARRIER_REQUEST, 12),
		  OF_BARRIER_REPLY, 12, &m) == 0, "BARRIER_REPLY");

	/* SEND_FLOW_REM + hard_timeout 1 on a flow no traffic here hits (ethertype 0x88b5),
	 * CHECK_OVERLAP against it, then its FLOW_REMOVED (reason HARD_TIMEOUT). */
	struct of_msg fm = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 13};
	fm.u.flow_mod.command = OFPFC_ADD;
	fm.u.flow_mod.cookie = 0x55;
	fm.u.flow_mod.priority = 300;
	fm.u.flow_mod.hard_timeout = 1;
	fm.u.flow_mod.flags = OFPFF_SEND_FLOW_REM;
	fm.u.flow_mod.buffer_id = OFP_NO_BUFFER;
	fm.u.flow_mod.out_port = OFPP_ANY;
	fm.u.flow_mod.out_group = OFPG_ANY;
	fm.u.flow_mod.match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_TYPE;
	fm.u.flow_mod.match.in_port = 2;
	fm.u.flow_mod.match.eth_type = 0x88b5;
	fm.u.flow_mod.actions.n = 1;
	fm.u.flow_mod.actions.a[0].port = 1;
	send_all(fd, b, of_serialize(&fm, b, sizeof(b)));
	fm.xid = 14;
	fm.u.flow_mod.flags = 0x2; /* CHECK_OVERLAP: in_port=2 alone overlaps it */
	fm.u.flow_mod.hard_timeout = 0;
	fm.u.flow_mod.match.fields = OF_MATCH_IN_PORT;
	ok = ask(fd, b, of_serialize(&fm, b, sizeof(b)), OF_ERROR, 14, &m) == 0 &&
	     m.u.error.type == 5 && m.u.error.code == 3;
	CHECK(ok, "CHECK_OVERLAP: ERROR FLOW_MOD_FAILED/OVERLAP");
	ok = false;
	while (!ok && next_msg(fd, &m, raw, &rl) == 0)
		ok = m.type == OF_FLOW_REMOVED && m.u.flow_removed.cookie == 0x55;
	CHECK(ok && m.u.flow_removed.reason == 1 && m.u.flow_removed.priority == 300,
	      "FLOW_REMOVED after the hard timeout (reason %u)", ok ? m.u.flow_removed.reason : 99);

	/* A flood: 140000 FLOW_MOD ADDs (cookie 0x99, priority 1, in_port 2 + an eth_dst no
	 * host has), then BARRIER. The table holds 131072: the rest get FLOW_MOD_FAILED/
	 * TABLE_FULL, nothing else; then one DELETE by cookie removes them all again. */
	{
		enum { FLOOD = 140000 };
		static uint8_t fb[FLOOD * 96];
		size_t off = 0;
		struct of_msg f2 = fm;
		f2.u.flow_mod.cookie = 0x99;
		f2.u.flow_mod.priority = 1;
		f2.u.flow_mod.flags = 0;
		f2.u.flow_mod.hard_timeout = 0;
		f2.u.flow_mod.match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_DST;
		for (uint32_t i = 0; i < FLOOD; i++) {
			f2.xid = 0x100000 + i;
			memcpy(f2.u.flow_mod.match.eth_dst, (uint8_t[]){0x02, 0x99, 0, (uint8_t)(i >> 16),
				(uint8_t)(i >> 8), (uint8_t)i}, 6);
			ssize_t n = of_serialize(&f2, fb + off, sizeof(fb) - off);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		unsigned full = 0, other = 0;
		ok = send_all(fd, fb, (ssize_t)off) == 0 &&
		     send_all(fd, b, of_build_simple(b, sizeof(b), OF_VERSION_1_3, OF_BARRIER_REQUEST,
						    15)) == 0;
		bool barrier = false;
		/* The first TABLE_FULL comes only after 131072 ADDs: seconds of silence in an
		 * ASan build on a loaded machine (over 5 s seen), so wait up to 60 s here. */
		idle_rounds = 6000;
		while (ok && !barrier && next_msg(fd, &m, raw, &rl) == 0) {
			if (m.type == OF_ERROR && m.u.error.type == 5 && m.u.error.code == 1)
				full++;
			else if (m.type == OF_ERROR)
				other++;
			barrier = m.type == OF_BARRIER_REPLY && m.xid == 15;
		}
		CHECK(barrier && full >= FLOOD - 131072 && other == 0,
		      "%d FLOW_MODs: %u TABLE_FULL, %u other errors, BARRIER %s", FLOOD, full,
		      other, barrier ? "answered" : "not answered");
		f2.xid = 16;
		f2.u.flow_mod.command = OFPFC_DELETE;
		f2.u.flow_mod.table_id = OFPTT_ALL;
		f2.u.flow_mod.cookie_mask = ~0ull;
		f2.u.flow_mod.match.fields = 0;
		f2.u.flow_mod.actions.n = 0;
		send_all(fd, b, of_serialize(&f2, b, sizeof(b)));
		req.xid = 17;
		ok = ask(fd, b, of_serialize(&req, b, sizeof(b)), OF_MULTIPART_REPLY, 17, &m) == 0;
		unsigned left = 0, more = 0;
		cur = 0;
		while (ok && of_flow_stats_next(OF_VERSION_1_3, &m.u.mp_reply.body, &cur, &fs) == 1)
			left += fs.cookie == 0x99;
		more = ok && (m.u.mp_reply.flags & OFPMPF_MORE);
		CHECK(ok && left == 0 && !more, "DELETE by cookie: none of them left (%u)", left);
	}

	/* PORT_STATUS: the caller's command takes a port's link down. */
	if (argc > 2) {
		if (system(argv[2]) != 0)
			printf("FAIL: %s\n", argv[2]), fails++;
		ok = false;
		while (!ok && next_msg(fd, &m, raw, &rl) == 0)
			ok = m.type == OF_PORT_STATUS;
		CHECK(ok && (m.u.port_status.port.state & 1), "PORT_STATUS: port %u link down",
		      ok ? m.u.port_status.port.port_no : 0);
	}
	close(fd);
	return fails ? 1 : 0;
}
