/*
 * tests/openflow/test_ofc_apps.c: the controller's apps through the app interface
 * (ofc_app.h), no sockets: synthetic switches come up (FEATURES_REPLY + PORT_DESC), the
 * LLDP PACKET_OUTs they get are "wired" back as PACKET_INs of the neighbour, and the links,
 * hosts and JSON views (ofc_rest_render) must follow: links appear, port down and switch
 * down remove them, they age out; hosts are learnt off inter-switch ports only; JSON is
 * well-formed and escaped. Time is passed in, so aging is checked without waiting.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofc_app.h"
#include "ofc_rest.h"
#include "json_check.h"

static struct ofc_apps *apps;
static struct ofc_net *net;
static struct ofc_handler h;
static uint64_t t0;

static void setup(void)
{
	rf_qsbr_register();
	char err[256];
	apps = ofc_apps_create("learning,topology,hosts", 1024, err, sizeof(err));
	cr_assert(apps, "%s", err);
	net = ofc_apps_net(apps);
	memset(&h, 0, sizeof(h));
	h.macs = rf_hash_create("t_macs", 14, 1024, RF_MEMPOOL_QUIET);
	cr_assert(h.macs);
	h.apps = apps;
	struct ofc_learn_limits ll = {.macs_per_switch = 100, .hosts_per_switch = 50,
				      .mac_age_ms = 300000, .host_age_ms = OFC_HOST_AGE_MS};
	h.learn = ofc_learn_create(h.macs, &ll);
	cr_assert(h.learn);
	ofc_learn_set_hosts(h.learn, net);
	t0 = ofc_now_ms();
}

static void teardown(void)
{
	ofc_apps_free(apps);
	ofc_learn_free(h.learn);
	rf_hash_free(h.macs);
	rf_qsbr_unregister();
}

static char *render(const char *path, int *status)
{
	struct ofc_rest_view v = {.net = net, .h = &h, .nh = 1, .apps = "test"};
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	const char *ctype;
	*status = ofc_rest_render(&v, path, f, &ctype);
	fclose(f);
	return s;
}

static char *render_ok(const char *path)
{
	int st;
	char *s = render(path, &st);
	cr_assert_eq(st, 200, "%s: %d %s", path, st, s);
	cr_assert(json_valid(s), "%s is not valid JSON: %s", path, s);
	return s;
}

struct lldp_out {
	unsigned n;
	uint32_t out_port[8];
	uint8_t frame[8][128];
	size_t len[8];
};

/* Brings switch dpid up with ports 1..nports named names[i] (NULL: "ethN") and collects
 * the LLDP PACKET_OUTs it is sent. */
static void switch_up(uint64_t dpid, unsigned nports, const char *const *names,
		      struct lldp_out *lo)
{
	static uint8_t buf[65536];
	struct of_out out = {.p = buf, .cap = sizeof(buf)};
	struct of_session s = {.state = OF_SESSION_UP, .datapath_id = dpid};
	s.framer.version = OF_VERSION_1_3;
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FEATURES_REPLY};
	m.u.features.datapath_id = dpid;
	ofc_apps_control(apps, &s, &m, t0, &out);
	struct of_port p[8];
	memset(p, 0, sizeof(p));
	for (unsigned i = 0; i < nports; i++) {
		p[i].port_no = i + 1;
		uint8_t hw[6] = {2, 0, 0, 0, (uint8_t)dpid, (uint8_t)(i + 1)};
		memcpy(p[i].hw_addr, hw, 6);
		if (names && names[i])
			snprintf(p[i].name, sizeof(p[i].name), "%s", names[i]);
		else
			snprintf(p[i].name, sizeof(p[i].name), "eth%u", i + 1);
	}
	struct of_msg r = {.version = OF_VERSION_1_3, .type = OF_MULTIPART_REPLY};
	r.u.mp_reply.mp_type = OF_MP_PORT_DESC;
	r.u.mp_reply.body.n = (uint16_t)nports;
	r.u.mp_reply.body.items = p;
	ofc_apps_control(apps, &s, &r, t0, &out);
	memset(lo, 0, sizeof(*lo));
	for (size_t off = 0; off + 8 <= out.len;) {
		size_t len = of_get16(buf + off + 2);
		struct of_msg po;
		struct of_fault f;
		cr_assert_eq(of_parse(buf + off, len, &po, &f), 0);
		cr_assert_eq(po.type, OF_PACKET_OUT);
		cr_assert_eq(po.u.packet_out.actions.n, 1);
		cr_assert_lt(lo->n, 8);
		lo->out_port[lo->n] = po.u.packet_out.actions.a[0].port;
		memcpy(lo->frame[lo->n], po.u.packet_out.data, po.u.packet_out.data_len);
		lo->len[lo->n++] = po.u.packet_out.data_len;
		off += len;
	}
}

/* A message and the replies to it, as a handler sees them. */
struct msgbuf {
	uint8_t in[4096];   /* the PACKET_IN */
	uint8_t data[4096]; /* the apps' replies */
	uint16_t len;
};

/* The frame arrives at (dpid, in_port): a PACKET_IN through the handler dispatch. Returns
 * the reply bytes (in b->data). */
static size_t packet_in(uint64_t dpid, uint32_t in_port, const uint8_t *frame, size_t len,
			uint64_t now, struct msgbuf *b)
{
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PACKET_IN, .xid = 7};
	m.u.packet_in.buffer_id = OFP_NO_BUFFER;
	m.u.packet_in.total_len = (uint16_t)len;
	m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m.u.packet_in.match.in_port = in_port;
	m.u.packet_in.data = frame;
	m.u.packet_in.data_len = (uint16_t)len;
	ssize_t n = of_serialize(&m, b->in, sizeof(b->in));
	cr_assert_gt(n, 0);
	struct ofc_buf msg = {.dpid = dpid, .version = OF_VERSION_1_3, .len = (uint16_t)n,
			      .data = b->in};
	b->len = (uint16_t)ofc_apps_packet_in(apps, &h, 0, &msg, now, b->data, sizeof(b->data));
	return b->len;
}

/* Switch 1 port 2 <-> switch 2 port 1, both directions delivered. */
static void two_linked(struct lldp_out *a, struct lldp_out *b)
{
	switch_up(1, 3, NULL, a);
	switch_up(2, 3, NULL, b);
	cr_assert_eq(a->n, 3, "one LLDP per port");
	for (unsigned i = 0; i < a->n; i++) {
		uint64_t d;
		uint32_t p;
		cr_assert_eq(of_lldp_parse(a->frame[i], a->len[i], &d, &p), 0);
		cr_assert_eq(d, 1);
		cr_assert_eq(p, a->out_port[i], "LLDP names the port it goes out of");
	}
	static struct msgbuf buf;
	for (unsigned i = 0; i < a->n; i++)
		if (a->out_port[i] == 2)
			cr_assert_eq(packet_in(2, 1, a->frame[i], a->len[i], t0, &buf), 0,
				     "LLDP gets no reply");
	for (unsigned i = 0; i < b->n; i++)
		if (b->out_port[i] == 1)
			packet_in(1, 2, b->frame[i], b->len[i], t0, &buf);
	cr_assert_eq(rf_hash_count(net->links), 2);
}

TestSuite(ofc_apps, .init = setup, .fini = teardown);

Test(ofc_apps, lldp_on_switch_up_gives_links_both_ways)
{
	struct lldp_out a, b;
	two_linked(&a, &b);
	char *s = render_ok("/api/links");
	cr_assert(strstr(s, "{\"src\":{\"dpid\":\"0000000000000001\",\"port\":2},"
			    "\"dst\":{\"dpid\":\"0000000000000002\",\"port\":1}"), "%s", s);
	cr_assert(strstr(s, "{\"src\":{\"dpid\":\"0000000000000002\",\"port\":1},"
			    "\"dst\":{\"dpid\":\"0000000000000001\",\"port\":2}"), "%s", s);
	free(s);
	s = render_ok("/api/stats");
	cr_assert(strstr(s, "\"links\":2"), "%s", s);
	cr_assert(strstr(s, "\"first_switch_up_to_last_new_link_ms\":0"), "%s", s);
	free(s);
	s = render_ok("/api/switches");
	cr_assert_eq(count_of(s, "\"dpid\""), 2, "%s", s);
	cr_assert(strstr(s, "\"dpid\":\"0000000000000002\",\"version\":\"1.3\",\"ports\":3"), "%s", s);
	free(s);
}

Test(ofc_apps, port_down_and_delete_remove_links)
{
	struct lldp_out a, b;
	two_linked(&a, &b);
	struct of_session s = {.state = OF_SESSION_UP, .datapath_id = 2};
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PORT_STATUS};
	m.u.port_status.reason = 2; /* MODIFY */
	m.u.port_status.port.port_no = 3;
	m.u.port_status.port.state = 1; /* LINK_DOWN, on a port with no link */
	ofc_apps_control(apps, &s, &m, t0, NULL);
	cr_assert_eq(rf_hash_count(net->links), 2, "another port's state changes nothing");
	m.u.port_status.port.port_no = 1; /* a PORT_STATUS describes the whole port */
	snprintf(m.u.port_status.port.name, 16, "eth1");
	uint8_t hw[6] = {2, 0, 0, 0, 2, 1};
	memcpy(m.u.port_status.port.hw_addr, hw, 6);
	ofc_apps_control(apps, &s, &m, t0, NULL);
	cr_assert_eq(rf_hash_count(net->links), 0, "link down removes both directions");
	char *p = render_ok("/api/switches/2/ports");
	cr_assert(strstr(p, "\"port_no\":1,\"name\":\"eth1\",\"hw_addr\":\"02:00:00:00:02:01\","
			    "\"link_down\":true"), "%s", p);
	free(p);
	two_linked(&a, &b);
	m.u.port_status.reason = 1; /* DELETE */
	m.u.port_status.port.port_no = 2;
	s.datapath_id = 1;
	ofc_apps_control(apps, &s, &m, t0, NULL);
	cr_assert_eq(rf_hash_count(net->links), 0, "port delete removes the link");
	p = render_ok("/api/switches/1/ports");
	cr_assert_eq(count_of(p, "\"port_no\""), 2, "%s", p);
	free(p);
}

Test(ofc_apps, links_age_out_unless_refreshed)
{
	struct lldp_out a, b;
	two_linked(&a, &b);
	static struct msgbuf buf;
	uint64_t later = t0 + OFC_LINK_AGE_MS;
	for (unsigned i = 0; i < a.n; i++) /* only 1 -> 2 is seen again */
		if (a.out_port[i] == 2)
			packet_in(2, 1, a.frame[i], a.len[i], later, &buf);
	ofc_apps_timer_done(apps, t0 + OFC_LINK_AGE_MS + 1);
	cr_assert_eq(rf_hash_count(net->links), 1);
	char *s = render_ok("/api/links");
	cr_assert(strstr(s, "\"src\":{\"dpid\":\"0000000000000001\",\"port\":2}"), "%s", s);
	free(s);
	ofc_apps_timer_done(apps, later + OFC_LINK_AGE_MS + 1);
	cr_assert_eq(rf_hash_count(net->links), 0);
}

Test(ofc_apps, switch_down_removes_switch_ports_and_links)
{
	struct lldp_out a, b;
	two_linked(&a, &b);
	ofc_apps_switch_down(apps, 2);
	cr_assert_eq(rf_hash_count(net->links), 0);
	cr_assert_eq(rf_hash_count(net->switches), 1);
	cr_assert_eq(rf_hash_count(net->ports), 3);
	int st;
	free(render("/api/switches/2/ports", &st));
	cr_assert_eq(st, 404);
}

static size_t arp_frame(uint8_t *f, const uint8_t mac[6], uint32_t ip)
{
	memset(f, 0, 60);
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x08, f[13] = 0x06;
	uint8_t *a = f + 14;
	a[1] = 1, a[2] = 8, a[4] = 6, a[5] = 4, a[7] = 1;
	memcpy(a + 8, mac, 6);
	ofc_put32(a + 14, ip);
	return 60;
}

Test(ofc_apps, hosts_are_learnt_off_inter_switch_ports)
{
	struct lldp_out a, b;
	two_linked(&a, &b);
	static struct msgbuf buf;
	uint8_t f[60], mac[6] = {0x02, 0xaa, 0, 0, 0, 7};
	arp_frame(f, mac, 0x0a000007);
	cr_assert_gt(packet_in(1, 3, f, 60, t0, &buf), 0, "the learning switch floods it");
	struct of_msg m;
	struct of_fault flt;
	cr_assert_eq(of_parse(buf.data, buf.len, &m, &flt), 0);
	cr_assert_eq(m.type, OF_PACKET_OUT);
	cr_assert_eq(m.u.packet_out.actions.a[0].port, OFPP_FLOOD);
	packet_in(2, 1, f, 60, t0, &buf); /* the flood, seen by switch 2 on the link port */
	cr_assert_eq(rf_hash_count(net->hosts), 1);
	char *s = render_ok("/api/hosts");
	const char *want = "[{\"mac\":\"02:aa:00:00:00:07\",\"dpid\":\"0000000000000001\","
			   "\"port\":3,\"ipv4\":\"10.0.0.7\",\"age_ms\":";
	cr_assert(!strncmp(s, want, strlen(want)), "%s", s);
	cr_assert_eq(count_of(s, "\"mac\""), 1, "%s", s);
	free(s);
	/* a reply from another host: learning now knows where 02:aa:..:07 is: FLOW_MOD */
	uint8_t g[60], mac2[6] = {0x02, 0xbb, 0, 0, 0, 8};
	arp_frame(g, mac2, 0x0a000008);
	memcpy(g, mac, 6);
	cr_assert_gt(packet_in(1, 1, g, 60, t0, &buf), 0);
	cr_assert_eq(of_parse(buf.data, of_get16(buf.data + 2), &m, &flt), 0);
	cr_assert_eq(m.type, OF_FLOW_MOD);
	cr_assert_eq(m.u.flow_mod.actions.a[0].port, 3);
	s = render_ok("/api/flows/1");
	cr_assert(strstr(s, "{\"eth_dst\":\"02:aa:00:00:00:07\",\"out_port\":3}"), "%s", s);
	free(s);
	ofc_learn_step(h.learn, t0 + OFC_HOST_AGE_MS + 1); /* the handler's aging step */
	cr_assert_eq(rf_hash_count(net->hosts), 0, "hosts age out");
}

Test(ofc_apps, json_strings_are_escaped)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	ofc_json_str(f, "a\"b\\c\n\x01\xc3\xa9");
	fclose(f);
	cr_assert_str_eq(s, "\"a\\\"b\\\\c\\u000a\\u0001\\u00c3\\u00a9\"");
	cr_assert(json_valid(s));
	free(s);
	struct lldp_out a;
	const char *names[] = {"we\"ird\\", "tab\there", NULL};
	switch_up(5, 3, names, &a);
	s = render_ok("/api/switches/5/ports");
	cr_assert(strstr(s, "\"name\":\"we\\\"ird\\\\\""), "%s", s);
	free(s);
	int st;
	free(render("/api/nothing", &st));
	cr_assert_eq(st, 404);
	free(render("/api/flows/xyz", &st));
	cr_assert_eq(st, 400);
	free(render("/api/flows/77", &st));
	cr_assert_eq(st, 404);
	s = render("/", &st);
	cr_assert_eq(st, 200);
	cr_assert(strstr(s, "<svg") && !strstr(s, "http://cdn") && !strstr(s, "<script src"));
	free(s);
}

Test(ofc_apps, flow_request_cancelled_frees_the_mailbox)
{
	struct ofc_flow_req *r = ofc_apps_flows(apps);
	uint64_t d;
	char *json = NULL;
	bool trunc;
	cr_assert_not(ofc_flows_pending(r, &d));
	cr_assert_eq(ofc_flows_post(r, 1), 0);
	cr_assert_eq(ofc_flows_post(r, 2), -EBUSY, "one request at a time");
	cr_assert_eq(ofc_flows_poll(r, &json, &trunc), 0);
	cr_assert_eq(ofc_flows_cancel(r, &json, &trunc), 0);
	cr_assert_null(json);
	cr_assert_not(ofc_flows_pending(r, &d), "an abandoned request is not sent later");
	/* a reply to nothing is ignored */
	struct of_session s = {.state = OF_SESSION_UP, .datapath_id = 1};
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_MULTIPART_REPLY, .xid = 1};
	m.u.mp_reply.mp_type = OF_MP_FLOW;
	ofc_flows_reply(r, &s, &m);
	cr_assert_not(ofc_flows_pending(r, &d));
}

Test(ofc_apps, flow_reply_counts_only_from_the_asked_connection_and_xid_and_is_bounded)
{
	struct ofc_flow_req *r = ofc_apps_flows(apps);
	uint64_t d;
	char *json = NULL;
	bool trunc = false;
	cr_assert_eq(ofc_flows_post(r, 1), 0);
	cr_assert(ofc_flows_pending(r, &d) && d == 1);
	uint8_t obuf[256];
	struct of_out out = {.p = obuf, .cap = sizeof(obuf)};
	struct of_session asked = {.state = OF_SESSION_UP, .datapath_id = 1, .next_xid = 40};
	struct of_session other = {.state = OF_SESSION_UP, .datapath_id = 2, .next_xid = 40};
	asked.framer.version = other.framer.version = OF_VERSION_1_3;
	ofc_flows_send(r, &asked, &out);
	cr_assert_gt(out.len, 0);
	static struct of_flow_stats fs[1000];
	for (unsigned i = 0; i < 1000; i++)
		fs[i] = (struct of_flow_stats){.priority = 100, .match.fields = OF_MATCH_IN_PORT,
					       .match.in_port = i + 1};
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_MULTIPART_REPLY, .xid = 40};
	m.u.mp_reply.mp_type = OF_MP_FLOW;
	m.u.mp_reply.body.items = fs;
	m.u.mp_reply.body.n = 3;
	ofc_flows_reply(r, &other, &m); /* another switch guessing the xid */
	m.xid = 41;
	ofc_flows_reply(r, &asked, &m); /* the right switch, another xid */
	cr_assert_eq(ofc_flows_poll(r, &json, &trunc), 0, "a wrong reply was taken");
	/* the right one, in parts flagged MORE, past OFC_FLOWS_MAX entries: cut there */
	m.xid = 40;
	m.u.mp_reply.flags = OFPMPF_MORE;
	m.u.mp_reply.body.n = 1000;
	for (int i = 0; i < OFC_FLOWS_MAX / 1000 + 5 && !ofc_flows_poll(r, &json, &trunc); i++)
		ofc_flows_reply(r, &asked, &m);
	cr_assert_not_null(json, "no answer after %d entries", OFC_FLOWS_MAX);
	cr_assert(trunc);
	cr_assert_eq(count_of(json, "\"table_id\""), OFC_FLOWS_MAX);
	free(json);
	cr_assert_eq(ofc_flows_post(r, 1), 0, "the mailbox is free again");
	cr_assert_eq(ofc_flows_cancel(r, &json, &trunc), 0);
}

Test(ofc_apps, openflow_10_switch_gets_lldp_from_its_features_ports)
{
	uint8_t buf[4096];
	struct of_out out = {.p = buf, .cap = sizeof(buf)};
	struct of_session s = {.state = OF_SESSION_UP, .datapath_id = 9};
	s.framer.version = OF_VERSION_1_0;
	struct of_port p[3];
	memset(p, 0, sizeof(p));
	p[0].port_no = 1, p[1].port_no = 2, p[2].port_no = OFPP_LOCAL;
	struct of_msg m = {.version = OF_VERSION_1_0, .type = OF_FEATURES_REPLY};
	m.u.features.datapath_id = 9;
	m.u.features.ports.n = 3;
	m.u.features.ports.items = p;
	ofc_apps_control(apps, &s, &m, t0, &out);
	unsigned n = 0;
	for (size_t off = 0; off + 8 <= out.len; n++) {
		size_t len = of_get16(buf + off + 2);
		struct of_msg po;
		struct of_fault f;
		cr_assert_eq(of_parse(buf + off, len, &po, &f), 0);
		cr_assert_eq(po.version, OF_VERSION_1_0);
		cr_assert_eq(po.type, OF_PACKET_OUT);
		cr_assert_neq(po.u.packet_out.actions.a[0].port, OFPP_LOCAL, "no LLDP to LOCAL");
		off += len;
	}
	cr_assert_eq(n, 2);
	char *j = render_ok("/api/switches/9/ports");
	cr_assert(strstr(j, "\"port_no\":\"LOCAL\""), "%s", j);
	free(j);
	j = render_ok("/api/switches");
	cr_assert(strstr(j, "\"version\":\"1.0\""), "%s", j);
	free(j);
}

/* A unicast frame from src to dst (ARP type), 60 bytes. */
static void eth_frame(uint8_t f[60], const uint8_t dst[6], const uint8_t src[6])
{
	memset(f, 0, 60);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08, f[13] = 0x06;
}

Test(ofc_apps, forged_replayed_and_foreign_lldp_make_no_link)
{
	struct lldp_out a, b;
	switch_up(1, 3, NULL, &a);
	switch_up(2, 3, NULL, &b);
	static struct msgbuf buf;
	/* what a host can send: a well-formed LLDP naming switch 1 port 2, without our tag */
	uint8_t f[128];
	ssize_t n = of_lldp_build(f, sizeof(f), (const uint8_t *)"\2\0\0\0\0\1", 1, 2, 120);
	cr_assert_gt(n, 0);
	packet_in(2, 1, f, (size_t)n, t0, &buf);
	cr_assert_eq(rf_hash_count(net->links), 0, "an untagged LLDP made a link");
	/* ours, with one bit of the tag flipped */
	unsigned k = 0;
	while (k < a.n && a.out_port[k] != 2)
		k++;
	cr_assert_lt(k, a.n);
	memcpy(f, a.frame[k], a.len[k]);
	f[14 + 24 + 7 + 4 + 2 + 12] ^= 1; /* in the tag TLV after Chassis, Port, TTL */
	packet_in(2, 1, f, a.len[k], t0, &buf);
	cr_assert_eq(rf_hash_count(net->links), 0, "a tampered tag made a link");
	/* ours, replayed two epochs later */
	packet_in(2, 1, a.frame[k], a.len[k], t0 + 2 * OFC_LLDP_EPOCH_MS + 1, &buf);
	cr_assert_eq(rf_hash_count(net->links), 0, "a replayed LLDP made a link");
	/* ours, but the sending switch has left */
	ofc_apps_switch_down(apps, 1);
	packet_in(2, 1, a.frame[k], a.len[k], t0, &buf);
	cr_assert_eq(rf_hash_count(net->links), 0, "LLDP from a gone switch made a link");
	cr_assert_eq(atomic_load(&net->lldp_rejected), 4);
	/* and the genuine one, in time, from a connected switch, does */
	switch_up(1, 3, NULL, &a);
	packet_in(2, 1, a.frame[k], a.len[k], t0, &buf);
	cr_assert_eq(rf_hash_count(net->links), 1);
	cr_assert(ofc_links_has_end(net, 2, 1, t0) && ofc_links_has_end(net, 1, 2, t0));
	cr_assert(!ofc_links_has_end(net, 2, 1, t0 + OFC_LINK_AGE_MS + 1), "an end ages out");
}

Test(ofc_apps, a_switch_at_its_mac_quota_stops_learning_others_unaffected)
{
	static struct msgbuf buf;
	uint8_t f[60], dst[6] = {0x02, 0xdd, 0, 0, 0, 1}, src[6] = {0x02, 0xee, 0, 0, 0, 0};
	for (unsigned i = 0; i < 300; i++) { /* switch 1: 300 sources, quota 100 */
		src[4] = (uint8_t)(i >> 8), src[5] = (uint8_t)i;
		eth_frame(f, dst, src);
		packet_in(1, 1, f, 60, t0, &buf);
	}
	const struct ofc_learn_stats *ls = ofc_learn_stats(h.learn);
	cr_assert_eq(atomic_load(&ls->macs_refused), 200);
	cr_assert_eq(rf_hash_count(h.macs), 100);
	/* switch 2 still learns: a -> port 3, then b -> a gets a FLOW_MOD to port 3 */
	uint8_t ma[6] = {0x02, 0xaa, 0, 0, 0, 1}, mb[6] = {0x02, 0xbb, 0, 0, 0, 2};
	eth_frame(f, mb, ma);
	packet_in(2, 3, f, 60, t0, &buf);
	eth_frame(f, ma, mb);
	cr_assert_gt(packet_in(2, 4, f, 60, t0, &buf), 0);
	struct of_msg m;
	struct of_fault flt;
	cr_assert_eq(of_parse(buf.data, of_get16(buf.data + 2), &m, &flt), 0);
	cr_assert_eq(m.type, OF_FLOW_MOD, "switch 2 cannot learn while switch 1 is full");
	cr_assert_eq(m.u.flow_mod.actions.a[0].port, 3);
	/* idle entries age out in bounded steps; then switch 1 learns again */
	uint64_t later = t0 + 300000 + 2000;
	for (int i = 0; i < 10; i++)
		ofc_learn_step(h.learn, later + 100 * (uint64_t)i);
	cr_assert_eq(rf_hash_count(h.macs), 0);
	eth_frame(f, dst, src);
	packet_in(1, 1, f, 60, later, &buf);
	cr_assert_eq(rf_hash_count(h.macs), 1);
}

Test(ofc_apps, a_departed_switch_is_forgotten_in_bounded_steps)
{
	static struct msgbuf buf;
	uint8_t f[60], dst[6] = {0x02, 0xdd, 0, 0, 0, 1}, src[6] = {0x02, 0xee, 0, 0, 0, 0};
	for (unsigned i = 0; i < 100; i++) {
		src[5] = (uint8_t)i;
		eth_frame(f, dst, src);
		packet_in(5, 1, f, 60, t0, &buf);
	}
	cr_assert_eq(rf_hash_count(h.macs), 100);
	cr_assert_eq(rf_hash_count(net->hosts), 50, "hosts: the quota of 50");
	ofc_learn_gone(h.learn, 5, t0);
	cr_assert_not(ofc_learn_busy(h.learn, t0), "due at once: there is a grace");
	ofc_learn_step(h.learn, t0 + 1000);
	cr_assert_eq(rf_hash_count(h.macs), 100, "deleted within the grace");
	uint64_t later = t0 + 5000;
	cr_assert(ofc_learn_busy(h.learn, later));
	for (int i = 0; i < 10 && ofc_learn_busy(h.learn, later); i++)
		ofc_learn_step(h.learn, later + 100 * (uint64_t)i);
	cr_assert(!ofc_learn_busy(h.learn, later + 1000));
	cr_assert_eq(rf_hash_count(h.macs), 0);
	cr_assert_eq(rf_hash_count(net->hosts), 0);
	/* back before its entries are deleted: it keeps them (and what it learns again) */
	src[5] = 1;
	eth_frame(f, dst, src);
	packet_in(5, 1, f, 60, later + 2000, &buf);
	ofc_learn_gone(h.learn, 5, later + 2000);
	src[5] = 2;
	eth_frame(f, dst, src);
	packet_in(5, 1, f, 60, later + 3000, &buf);
	cr_assert_not(ofc_learn_busy(h.learn, later + 9000), "the returning switch took its state back");
	for (int i = 0; i < 10; i++)
		ofc_learn_step(h.learn, later + 9000 + 100 * (uint64_t)i);
	cr_assert_eq(rf_hash_count(h.macs), 2);
}
