/*
 * apps/openflow/controller/ofc_apps.c: the app list and its dispatch (see ofc_app.h), and the
 * switch/port tables every app shares: the I/O poller records a switch and its ports when
 * they become known, then tells the apps; PORT_STATUS updates the port first; a closed
 * connection removes the switch, its ports and (through the apps) its links.
 *
 * Per-switch port lists for the I/O-side callbacks live in a private array (I/O poller only),
 * searched by dpid: control events are rare, so a linear search is plenty.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ofc_app.h"

#define OFC_MAX_SWITCHES 1024

struct ofc_apps {
	struct ofc_net net;
	struct ofc_app app[OFC_MAX_APPS];
	unsigned n;
	uint64_t next_timer_ms;
	struct ofc_flow_req flows;
	struct ofc_switch *sw; /* I/O poller only */
	unsigned n_sw;
};

uint64_t ofc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t ofc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ofc_apps_latency(struct ofc_apps *a, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned b = 0;
	while (us > 1 && b < OFC_LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	_Atomic uint64_t *c = &a->net.lat[b];
	/* single writer (the I/O poller), read by the REST thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

struct ofc_flow_req *ofc_apps_flows(struct ofc_apps *a)
{
	return &a->flows;
}

struct ofc_net *ofc_apps_net(struct ofc_apps *a)
{
	return &a->net;
}

int ofc_apps_add(struct ofc_apps *a, const struct ofc_app *app)
{
	if (a->n == OFC_MAX_APPS)
		return -ENOSPC;
	a->app[a->n++] = *app;
	return 0;
}

bool ofc_apps_want_packet_in(const struct ofc_apps *a)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->app[i].on_packet_in)
			return true;
	return false;
}

struct ofc_apps *ofc_apps_create(const char *list, unsigned max_entries, char *err,
				 size_t errlen)
{
	struct ofc_apps *a = calloc(1, sizeof(*a));
	if (a)
		a->sw = calloc(OFC_MAX_SWITCHES, sizeof(*a->sw));
	if (!a || !a->sw) {
		snprintf(err, errlen, "out of memory for the app state");
		goto fail;
	}
	ofc_flows_init(&a->flows);
	struct ofc_net *net = &a->net;
	net->switches = rf_hash_create("ofc_sw", 8, OFC_MAX_SWITCHES, RF_MEMPOOL_QUIET);
	net->ports = rf_hash_create("ofc_ports", OFC_PORT_KEY, OFC_MAX_SWITCHES * OFC_MAX_PORTS,
				    RF_MEMPOOL_QUIET);
	net->links = rf_hash_create("ofc_links", 24, max_entries, RF_MEMPOOL_QUIET);
	net->hosts = rf_hash_create("ofc_hosts", 22, max_entries, RF_MEMPOOL_QUIET);
	net->ends = rf_hash_create("ofc_ends", 12, max_entries, RF_MEMPOOL_QUIET);
	if (!net->switches || !net->ports || !net->links || !net->hosts || !net->ends) {
		snprintf(err, errlen, "cannot allocate the topology tables: %s", strerror(errno));
		goto fail;
	}
	int krc = ofc_lldp_key_init(net);
	if (krc < 0) {
		snprintf(err, errlen, "cannot draw the LLDP secret: %s", strerror(-krc));
		goto fail;
	}
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct ofc_app app;
		if (!strcmp(tok, "learning"))
			app = ofc_learning_app(net);
		else if (!strcmp(tok, "topology"))
			app = ofc_topology_app(net);
		else if (!strcmp(tok, "hosts"))
			app = ofc_hosts_app(net);
		else {
			snprintf(err, errlen, "--app %s: unknown app; use a list of learning, "
				 "topology, hosts", tok);
			goto fail;
		}
		if (ofc_apps_add(a, &app) < 0) {
			snprintf(err, errlen, "--app %s: at most %d apps", list, OFC_MAX_APPS);
			goto fail;
		}
	}
	if (a->n == 0) {
		snprintf(err, errlen, "--app '%s': no app named; use e.g. learning,topology", list);
		goto fail;
	}
	return a;
fail:
	ofc_apps_free(a);
	return NULL;
}

void ofc_apps_free(struct ofc_apps *a)
{
	if (!a)
		return;
	ofc_flows_fini(&a->flows);
	rf_hash_free(a->net.switches);
	rf_hash_free(a->net.ports);
	rf_hash_free(a->net.links);
	rf_hash_free(a->net.hosts);
	rf_hash_free(a->net.ends);
	free(a->sw);
	free(a);
}

static struct ofc_switch *find_sw(struct ofc_apps *a, uint64_t dpid, bool add)
{
	for (unsigned i = 0; i < a->n_sw; i++)
		if (a->sw[i].dpid == dpid)
			return &a->sw[i];
	if (!add || a->n_sw == OFC_MAX_SWITCHES)
		return NULL;
	struct ofc_switch *sw = &a->sw[a->n_sw++];
	memset(sw, 0, sizeof(*sw));
	sw->dpid = dpid;
	return sw;
}

static void port_key(uint8_t key[OFC_PORT_KEY], uint64_t dpid, uint32_t port, const char *name)
{
	ofc_put64(key, dpid);
	ofc_put32(key + 8, port);
	memset(key + 12, 0, 16);
	memcpy(key + 12, name, strnlen(name, 15));
}

static void put_port(struct ofc_net *net, uint64_t dpid, const struct of_port *p)
{
	uint8_t key[OFC_PORT_KEY];
	port_key(key, dpid, p->port_no, p->name);
	uint64_t v = OFC_PORT_VALID;
	for (int i = 0; i < 6; i++)
		v |= (uint64_t)p->hw_addr[i] << (56 - 8 * i);
	if (p->state & 1u) /* OFPPS_LINK_DOWN */
		v |= OFC_PORT_LINK_DOWN;
	if (p->config & 1u) /* OFPPC_PORT_DOWN */
		v |= OFC_PORT_ADMIN_DOWN;
	rf_hash_upsert(net->ports, key, (void *)(uintptr_t)v, NULL);
}

static void unlist_port(struct ofc_net *net, struct ofc_switch *sw, uint32_t port_no)
{
	for (unsigned i = 0; i < sw->n_ports; i++)
		if (sw->ports[i] == port_no) {
			uint8_t key[OFC_PORT_KEY];
			port_key(key, sw->dpid, port_no, sw->name[i]);
			rf_hash_delete(net->ports, key, NULL);
			sw->n_ports--;
			sw->ports[i] = sw->ports[sw->n_ports];
			memcpy(sw->hw[i], sw->hw[sw->n_ports], 6);
			memcpy(sw->name[i], sw->name[sw->n_ports], 16);
			return;
		}
}

/* Records a port in the table and the I/O-side list (replacing an older record of it). */
static void add_port(struct ofc_net *net, struct ofc_switch *sw, const struct of_port *p)
{
	unlist_port(net, sw, p->port_no);
	if (sw->n_ports == OFC_MAX_PORTS)
		return;
	put_port(net, sw->dpid, p);
	memcpy(sw->hw[sw->n_ports], p->hw_addr, 6);
	snprintf(sw->name[sw->n_ports], 16, "%s", p->name);
	sw->ports[sw->n_ports++] = p->port_no;
}

static void switch_up(struct ofc_apps *a, struct ofc_switch *sw, uint64_t now_ms,
		      struct of_out *out)
{
	uint8_t key[8];
	ofc_put64(key, sw->dpid);
	uint64_t v = (uint64_t)sw->version << 48 | (now_ms & 0xffffffffffffull);
	rf_hash_upsert(a->net.switches, key, (void *)(uintptr_t)v, NULL);
	uint64_t zero = 0;
	atomic_compare_exchange_strong_explicit(&a->net.first_up_ms, &zero, now_ms,
						memory_order_relaxed, memory_order_relaxed);
	for (unsigned i = 0; i < a->n; i++)
		if (a->app[i].on_switch_up)
			a->app[i].on_switch_up(&a->app[i], sw, now_ms, out);
}

static void count(_Atomic uint64_t *c)
{
	/* single writer (the I/O poller), read by the REST thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

void ofc_apps_control(struct ofc_apps *a, const struct of_session *s, const struct of_msg *m,
		      uint64_t now_ms, struct of_out *out)
{
	struct ofc_net *net = &a->net;
	count(&net->msgs[m->type]);
	if (m->type == OF_FEATURES_REPLY) {
		struct ofc_switch *sw = find_sw(a, s->datapath_id, true);
		if (!sw)
			return;
		sw->version = m->version;
		while (sw->n_ports) /* a reconnect: start from the reply */
			unlist_port(net, sw, sw->ports[0]);
		if (m->version != OF_VERSION_1_0)
			return; /* 1.3: the ports come in the PORT_DESC reply */
		struct of_port p;
		for (unsigned i = 0; of_port_at(m->version, &m->u.features.ports, i, &p) == 0; i++) {
			add_port(net, sw, &p);
		}
		switch_up(a, sw, now_ms, out);
	} else if (m->type == OF_MULTIPART_REPLY && m->u.mp_reply.mp_type == OF_MP_PORT_DESC) {
		struct ofc_switch *sw = find_sw(a, s->datapath_id, false);
		if (!sw)
			return;
		struct of_port p;
		for (unsigned i = 0; of_port_at(m->version, &m->u.mp_reply.body, i, &p) == 0; i++) {
			add_port(net, sw, &p);
		}
		if (!(m->u.mp_reply.flags & OFPMPF_MORE))
			switch_up(a, sw, now_ms, out);
	} else if (m->type == OF_MULTIPART_REPLY && m->u.mp_reply.mp_type == OF_MP_FLOW) {
		ofc_flows_reply(&a->flows, s, m);
	} else if (m->type == OF_PORT_STATUS) {
		struct ofc_switch *sw = find_sw(a, s->datapath_id, false);
		if (!sw)
			return;
		const struct of_port_status *ps = &m->u.port_status;
		if (ps->reason == 1) /* OFPPR_DELETE */
			unlist_port(net, sw, ps->port.port_no);
		else
			add_port(net, sw, &ps->port);
		for (unsigned i = 0; i < a->n; i++)
			if (a->app[i].on_port_status)
				a->app[i].on_port_status(&a->app[i], sw, ps, now_ms);
	}
}

void ofc_apps_switch_down(struct ofc_apps *a, uint64_t dpid)
{
	struct ofc_net *net = &a->net;
	struct ofc_switch *sw = find_sw(a, dpid, false);
	if (!sw)
		return;
	while (sw->n_ports)
		unlist_port(net, sw, sw->ports[0]);
	uint8_t key[8];
	ofc_put64(key, dpid);
	rf_hash_delete(net->switches, key, NULL);
	*sw = a->sw[--a->n_sw];
	for (unsigned i = 0; i < a->n; i++)
		if (a->app[i].on_switch_down)
			a->app[i].on_switch_down(&a->app[i], dpid);
}

size_t ofc_apps_packet_in(struct ofc_apps *a, struct ofc_handler *h, unsigned idx,
			  const struct ofc_buf *b, uint64_t now_ms, uint8_t *reply, size_t cap)
{
	struct of_msg m;
	struct of_fault f;
	struct of_eth e;
	struct ofc_buf bn = *b;
	bn.now_ms = now_ms; /* the learning switch's time */
	b = &bn;
	struct ofc_pkt pk = {.h = h, .buf = b, .handler = idx, .dpid = b->dpid, .version = b->version,
			     .now_ms = now_ms, .m = &m, .eth = &e, .reply = reply, .cap = cap};
	if (of_parse(b->data, b->len, &m, &f) == 0 && m.type == OF_PACKET_IN &&
	    of_eth_parse(m.u.packet_in.data, m.u.packet_in.data_len, &e) == 0)
		for (unsigned i = 0; i < a->n; i++)
			if (a->app[i].on_packet_in)
				a->app[i].on_packet_in(&a->app[i], &pk);
	return pk.len;
}

bool ofc_apps_timer_due(struct ofc_apps *a, uint64_t now_ms)
{
	return now_ms >= a->next_timer_ms;
}

void ofc_apps_timer_switch(struct ofc_apps *a, uint64_t dpid, uint64_t now_ms,
			   struct of_out *out)
{
	struct ofc_switch *sw = find_sw(a, dpid, false);
	if (!sw)
		return;
	for (unsigned i = 0; i < a->n; i++)
		if (a->app[i].on_timer)
			a->app[i].on_timer(&a->app[i], sw, now_ms, out);
}

void ofc_apps_timer_done(struct ofc_apps *a, uint64_t now_ms)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->app[i].on_timer)
			a->app[i].on_timer(&a->app[i], NULL, now_ms, NULL);
	a->next_timer_ms = now_ms + OFC_TIMER_MS;
}

/* The learning switch as an app: its reply goes after what earlier apps wrote. */
static void learning_packet_in(const struct ofc_app *app, struct ofc_pkt *pk)
{
	(void)app;
	pk->len += ofc_learning_reply(pk->h, pk->buf, pk->reply + pk->len, pk->cap - pk->len);
}

struct ofc_app ofc_learning_app(struct ofc_net *net)
{
	return (struct ofc_app){.name = "learning", .arg = net, .on_packet_in = learning_packet_in};
}
