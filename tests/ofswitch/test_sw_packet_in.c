/*
 * tests/ofswitch/test_sw_packet_in.c: what a PACKET_IN's match carries, end to end
 * (OpenFlow 1.3.5 section 7.4.1): ringflow-switch on two packet ports of a veth bed
 * (veth_bed.h: a network namespace of the test's own, gone with its process), this test its
 * controller over the namespace's loopback. Each test installs a two-table pipeline, injects
 * one frame on port 1 and reads the PACKET_IN table 1 sends:
 *
 *   - write_metadata in table 0: the match has in_port and the metadata, exact, nothing else;
 *   - set_field tunnel_id as well: the tunnel_id too;
 *   - no write_metadata: in_port only (no metadata field of value 0).
 *
 * in_port is the first OXM of the match (as Open vSwitch sends it). Every wait is bounded;
 * the switch is stopped (SIGTERM, then SIGKILL) by its PID.
 */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "of.h"
#include "of_wire.h"
#include "veth_bed.h"

#ifndef SW_BIN
#error "SW_BIN: the ringflow-switch binary (tests/ofswitch/CMakeLists.txt)"
#endif

#define ETHERTYPE 0x88b5 /* IEEE local experimental: nothing else on the bed sends it */

static struct veth_bed bed = VETH_BED_INIT;
static pid_t sw = -1;
static int lsock = -1, conn = -1;
static uint32_t next_xid = 100;
static uint8_t raw[70000]; /* the last message read; a parsed one points into it */

/* Reads exactly n bytes of the connection before the deadline (monotonic seconds). */
static void read_full(uint8_t *p, size_t n, double deadline)
{
	while (n) {
		struct pollfd pf = {.fd = conn, .events = POLLIN};
		int ms = (int)((deadline - bed_now_s()) * 1000);
		cr_assert_gt(ms, 0, "the switch sent nothing in time");
		cr_assert_geq(poll(&pf, 1, ms), 0);
		if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t r = read(conn, p, n);
		cr_assert_gt(r, 0, "the switch closed the connection (%s)", r ? strerror(errno) : "EOF");
		p += r;
		n -= (size_t)r;
	}
}

static void send_msg(struct of_msg *m)
{
	uint8_t buf[4096];
	m->version = OF_VERSION_1_3;
	m->xid = next_xid++;
	ssize_t n = of_serialize(m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_eq(write(conn, buf, (size_t)n), n);
}

/* The next message from the switch, parsed (its bytes in raw); ECHO_REQUESTs answered. */
static void recv_msg(struct of_msg *m, double timeout_s)
{
	double deadline = bed_now_s() + timeout_s;
	for (;;) {
		read_full(raw, 8, deadline);
		uint16_t len = of_get16(raw + 2);
		cr_assert_geq(len, 8);
		read_full(raw + 8, len - 8u, deadline);
		struct of_fault f;
		cr_assert_eq(of_parse(raw, len, m, &f), 0, "a message that does not parse: %s", f.why);
		if (m->type != OF_ECHO_REQUEST)
			return;
		struct of_msg r = {.type = OF_ECHO_REPLY};
		send_msg(&r);
	}
}

static void setup(void)
{
	bed_netns("a network namespace, veth pairs, ringflow-switch on packet ports");
	veth_bed_up(&bed, 'I', 0, 0);
	lsock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	cr_assert_eq(bind(lsock, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(lsock, 1), 0);
	cr_assert_eq(getsockname(lsock, (struct sockaddr *)&a, &al), 0);
	char ctl[64], p1[64], p2[64];
	snprintf(ctl, sizeof(ctl), "tcp:127.0.0.1:%u", ntohs(a.sin_port));
	snprintf(p1, sizeof(p1), "packet:dev=%s,frames=1", bed.a1);
	snprintf(p2, sizeof(p2), "packet:dev=%s,frames=1", bed.b1);
	sw = fork();
	cr_assert_geq(sw, 0);
	if (sw == 0) {
		execl(SW_BIN, "ringflow-switch", "--port", p1, "--port", p2, "--controller", ctl,
		      "--idle", "adaptive", (char *)NULL);
		_exit(127);
	}
	struct pollfd pf = {.fd = lsock, .events = POLLIN};
	cr_assert_eq(poll(&pf, 1, 10000), 1, "the switch did not connect within 10 s");
	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(conn, 0);
	struct of_msg m;
	recv_msg(&m, 10);
	cr_assert_eq(m.type, OF_HELLO);
	struct of_msg h = {.type = OF_HELLO};
	send_msg(&h);
}

static void teardown(void)
{
	if (sw > 0) {
		kill(sw, SIGTERM);
		int st;
		double end = bed_now_s() + 5;
		while (waitpid(sw, &st, WNOHANG) == 0 && bed_now_s() < end)
			usleep(20000);
		if (waitpid(sw, &st, WNOHANG) == 0) {
			kill(sw, SIGKILL);
			waitpid(sw, &st, 0);
		}
		sw = -1;
	}
	if (conn >= 0)
		close(conn);
	if (lsock >= 0)
		close(lsock);
	conn = lsock = -1;
	veth_bed_down(&bed);
}

/* FLOW_MOD ADD in table tbl matching eth_type ETHERTYPE: apply-actions a, instructions in. */
static void add_flow(uint8_t tbl, const struct of_actions *a, const struct of_insts *in)
{
	struct of_msg m = {.type = OF_FLOW_MOD};
	struct of_flow_mod *fm = &m.u.flow_mod;
	fm->table_id = tbl;
	fm->command = OFPFC_ADD;
	fm->priority = 10;
	fm->buffer_id = OFP_NO_BUFFER;
	fm->out_port = OFPP_ANY;
	fm->out_group = OFPG_ANY;
	fm->cookie = 0xc00 + tbl;
	fm->match.fields = OF_MATCH_ETH_TYPE;
	fm->match.eth_type = ETHERTYPE;
	if (a)
		fm->actions = *a;
	if (in)
		fm->inst = *in;
	send_msg(&m);
}

/* Table 1: to the controller, whole frames. Then a BARRIER: every flow is in place. */
static void table1_to_controller(void)
{
	struct of_actions c = {0};
	of_act_output(&c, OFPP_CONTROLLER, OFPCML_NO_BUFFER);
	add_flow(1, &c, NULL);
	struct of_msg b = {.type = OF_BARRIER_REQUEST};
	send_msg(&b);
	uint32_t want = b.xid;
	for (;;) {
		struct of_msg m;
		recv_msg(&m, 10);
		cr_assert_neq(m.type, OF_ERROR, "the switch refused a FLOW_MOD");
		if (m.type == OF_BARRIER_REPLY && m.xid == want)
			return;
	}
}

/* Injects a frame on port 1 and returns the PACKET_IN that carries it (others skipped). */
static void frame_to_controller(struct of_msg *pi)
{
	uint8_t fr[60] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
			  ETHERTYPE >> 8, ETHERTYPE & 0xff, 'p', 'i', 'n'};
	cr_assert_eq(send(bed.sa, fr, sizeof(fr), 0), (ssize_t)sizeof(fr));
	double end = bed_now_s() + 10;
	for (;;) {
		cr_assert_lt(bed_now_s(), end, "no PACKET_IN with the frame");
		recv_msg(pi, end - bed_now_s());
		if (pi->type == OF_PACKET_IN && pi->u.packet_in.data_len == sizeof(fr) &&
		    memcmp(pi->u.packet_in.data, fr, sizeof(fr)) == 0)
			break;
	}
	cr_assert_eq(pi->u.packet_in.table_id, 1);
	cr_assert_eq(pi->u.packet_in.cookie, 0xc01);
	cr_assert_eq(pi->u.packet_in.match.in_port, 1);
	/* header, buffer_id, total_len, reason, table_id, cookie: the match's OXMs at 28 */
	cr_assert_eq(of_get32(raw + 28), 0x80000004u, "in_port is the first OXM");
}

Test(sw_packet_in, carries_the_metadata_of_write_metadata, .init = setup, .fini = teardown)
{
	struct of_insts in = {.present = OF_INST_WRITE_METADATA | OF_INST_GOTO_TABLE,
			      .goto_table = 1, .metadata = 0x8877665544332211ull,
			      .metadata_mask = ~0ull};
	add_flow(0, NULL, &in);
	table1_to_controller();
	struct of_msg pi;
	frame_to_controller(&pi);
	const struct of_match *mt = &pi.u.packet_in.match;
	cr_assert_eq(mt->fields, OF_MATCH_IN_PORT, "in_port and no other OXM field");
	cr_assert(mt->has_metadata, "the metadata");
	cr_assert_eq(mt->metadata, 0x8877665544332211ull);
	cr_assert_eq(mt->metadata_mask, ~0ull, "exact");
}

Test(sw_packet_in, carries_tunnel_id_and_metadata, .init = setup, .fini = teardown)
{
	struct of_actions a = {0};
	uint8_t id[16] = {0, 0, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d};
	cr_assert(of_act_set_ipv6(&a, OF_OXM_TUNNEL_ID, id));
	struct of_insts in = {.present = OF_INST_WRITE_METADATA | OF_INST_GOTO_TABLE,
			      .goto_table = 1, .metadata = 0x5, .metadata_mask = 0xff};
	add_flow(0, &a, &in);
	table1_to_controller();
	struct of_msg pi;
	frame_to_controller(&pi);
	const struct of_match *mt = &pi.u.packet_in.match;
	cr_assert_eq(mt->fields, OF_MATCH_IN_PORT | OF_MATCH_TUNNEL_ID);
	cr_assert_eq(mt->tunnel_id, 0x0a0b0c0dull);
	cr_assert_eq(mt->masked & OF_MATCH_TUNNEL_ID, 0, "exact");
	cr_assert(mt->has_metadata);
	cr_assert_eq(mt->metadata, 0x5, "the bits write_metadata wrote under its mask");
	cr_assert_eq(mt->metadata_mask, ~0ull);
}

Test(sw_packet_in, no_metadata_field_without_write_metadata, .init = setup, .fini = teardown)
{
	struct of_insts in = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	add_flow(0, NULL, &in);
	table1_to_controller();
	struct of_msg pi;
	frame_to_controller(&pi);
	const struct of_match *mt = &pi.u.packet_in.match;
	cr_assert_eq(mt->fields, OF_MATCH_IN_PORT);
	cr_assert(!mt->has_metadata, "metadata 0: no metadata field (as OVS)");
	cr_assert_eq(of_get16(raw + 26), 4 + 8, "the match is in_port alone");
}
