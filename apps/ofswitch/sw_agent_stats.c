/*
 * apps/ofswitch/sw_agent_stats.c: the agent's answers about the switch: the multipart
 * replies (FLOW, AGGREGATE, TABLE, DESC, PORT_STATS, PORT_DESC), TABLE_FEATURES, and
 * PORT_STATUS when a port's link goes up or down. Counters are read from the pollers'
 * per-core counters and the drivers' stats; nothing here changes the table.
 */
#include "sw_agent_pvt.h"

/* ---- multipart ---- */

void mp_flow(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m)
{
	struct sw_dump *d = &c->dump;
	d->on = true;
	d->xid = m->xid;
	d->req = m->u.mp_request;
	sw_key_of_match(&d->req.match, &d->v, &d->mk);
	d->next = a->flows;
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the flows */
	dump_more(a, c);
}

/* The stats of flow f into s. */
static void flow_stats(const struct sw_flow *f, uint64_t now, struct of_flow_stats *s)
{
	memset(s, 0, sizeof(*s));
	uint64_t age = now - f->created_ns;
	s->duration_sec = (uint32_t)(age / 1000000000u);
	s->duration_nsec = (uint32_t)(age % 1000000000u);
	s->priority = f->priority;
	s->idle_timeout = f->idle_timeout;
	s->hard_timeout = f->hard_timeout;
	s->flags = f->flags;
	s->cookie = f->cookie;
	sw_flow_counts(f, &s->packet_count, &s->byte_count);
	sw_match_of_flow(f, &s->match);
	sw_actions_to_of(atomic_load_explicit(&f->actions, memory_order_relaxed), &s->actions);
	s->table_id = f->table_id;
	sw_insts_to_of(atomic_load_explicit(&f->actions, memory_order_relaxed), &s->inst);
}

void dump_more(struct sw_agent *a, struct sw_conn *c)
{
	struct sw_dump *d = &c->dump;
	const struct of_mp_request *r = &d->req;
	while (d->on && c->fd >= 0 && c->out.len < SW_DUMP_LOW) {
		uint64_t now = now_ns();
		unsigned n = 0;
		struct sw_flow *f = d->next;
		for (; f && n < STATS_PER_MSG; f = f->next) {
			if (!covered(f, &d->v, &d->mk) || !sw_pipe_covered(f, r->table_id, &r->match) ||
			    !cookie_ok(f, r->cookie, r->cookie_mask) ||
			    !outputs_to(f, r->out_port) || !to_group(f, r->out_group))
				continue;
			flow_stats(f, now, &a->fs[n++]);
		}
		d->next = f;
		d->on = f != NULL; /* off before the send: a close on error finds it done */
		struct of_msg rep = {.version = c->version, .type = OF_MULTIPART_REPLY, .xid = d->xid};
		rep.u.mp_reply.mp_type = OF_MP_FLOW;
		rep.u.mp_reply.flags = f ? OFPMPF_MORE : 0;
		rep.u.mp_reply.body.n = (uint16_t)n;
		rep.u.mp_reply.body.items = a->fs;
		send_bytes(a, c, a->wbuf, of_serialize(&rep, a->wbuf, WBUF));
	}
}

void dump_forget(struct sw_agent *a, const struct sw_flow *f, struct sw_flow *succ)
{
	for (unsigned i = 0; i < SW_MAX_CONNS; i++)
		if (a->conns[i].dump.on && a->conns[i].dump.next == f)
			a->conns[i].dump.next = succ;
}

static void port_desc(const struct sw_port *p, int link, struct of_port *o)
{
	memset(o, 0, sizeof(*o));
	o->port_no = p->of_no;
	memcpy(o->hw_addr, p->mac, 6);
	snprintf(o->name, sizeof(o->name), "%s", p->name);
	o->state = link == 0 ? OFPPS_LINK_DOWN : 0;
}

/* PORT_STATUS (MODIFY) to every connection when a port's link went up or down. */
void port_status_check(struct sw_agent *a)
{
	for (unsigned i = 0; i < a->dp->nports; i++) {
		struct sw_port *p = &a->dp->ports[i];
		int link = rf_io_link_up(p->dev);
		if (link == a->link[i])
			continue;
		a->link[i] = link;
		sw_group_set_link(a->dp->groups, p->of_no, link != 0); /* fast failover */
		struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PORT_STATUS, .xid = 0};
		m.u.port_status.reason = OFPPR_MODIFY;
		port_desc(p, link, &m.u.port_status.port);
		ssize_t len = of_serialize(&m, a->wbuf, WBUF);
		for (unsigned k = 0; k < SW_MAX_CONNS; k++)
			if (wants(a, &a->conns[k], SW_ASYNC_PORT_STATUS, OFPPR_MODIFY))
				send_bytes(a, &a->conns[k], a->wbuf, len);
	}
}

void mp_ports(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m)
{
	struct sw_dp *dp = a->dp;
	struct of_port ports[SW_MAX_PORTS];
	struct of_port_stats st[SW_MAX_PORTS];
	unsigned n = 0;
	bool desc = m->u.mp_request.mp_type == OF_MP_PORT_DESC;
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the ports */
	for (unsigned i = 0; i < dp->nports; i++) {
		struct sw_port *p = &dp->ports[i];
		if (!desc && m->u.mp_request.port_no != OFPP_ANY && m->u.mp_request.port_no != p->of_no)
			continue;
		if (desc) {
			port_desc(p, rf_io_link_up(p->dev), &ports[n++]);
		} else {
			struct rf_io_stats s;
			rf_io_stats_get(p->dev, &s);
			struct of_port_stats *o = &st[n++];
			memset(o, 0, sizeof(*o));
			o->port_no = p->of_no;
			o->rx_packets = s.rx_pkts;
			o->tx_packets = s.tx_pkts;
			o->rx_bytes = s.rx_bytes;
			o->tx_bytes = s.tx_bytes;
			o->rx_dropped = s.rx_drops + s.rx_nobuf;
			uint64_t orp, orb, otp, otb; /* what the kernel forwarded (--offload) */
			sw_offload_port_counts(dp->offload, i, &orp, &orb, &otp, &otb);
			o->rx_packets += orp, o->rx_bytes += orb, o->tx_packets += otp,
				o->tx_bytes += otb;
			o->tx_dropped = s.tx_drops;
		}
	}
	struct of_msg rep = {.version = c->version, .type = OF_MULTIPART_REPLY, .xid = m->xid};
	rep.u.mp_reply.mp_type = m->u.mp_request.mp_type;
	rep.u.mp_reply.body.n = (uint16_t)n;
	rep.u.mp_reply.body.items = desc ? (const void *)ports : (const void *)st;
	send_bytes(a, c, a->wbuf, of_serialize(&rep, a->wbuf, WBUF));
}

/* AGGREGATE: the sums over the flows a FLOW stats request with the same fields would list. */
void mp_aggregate(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	const struct of_mp_request *r = &x->u.aggregate_request;
	struct sw_key v, mk;
	sw_key_of_match(&r->match, &v, &mk);
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_AGGREGATE_REPLY, .xid = x->xid};
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the flows */
	if (r->table_id < SW_N_TABLES || r->table_id == OFPTT_ALL)
		for (struct sw_flow *f = a->flows; f; f = f->next) {
			if (!covered(f, &v, &mk) || !sw_pipe_covered(f, r->table_id, &r->match) ||
			    !cookie_ok(f, r->cookie, r->cookie_mask) ||
			    !outputs_to(f, r->out_port) || !to_group(f, r->out_group))
				continue;
			uint64_t pk, by;
			sw_flow_counts(f, &pk, &by);
			rep.u.aggregate.packet_count += pk;
			rep.u.aggregate.byte_count += by;
			rep.u.aggregate.flow_count++;
		}
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

/* TABLE: every table of the pipeline (sw_tables.c). */
void mp_table(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	struct of_table_stats t[SW_N_TABLES];
	sw_offload_sync(a->dp->offload); /* the kernel's hits */
	sw_tables_stats(a->dp, a->flows, t);
	/* --offload: frames the kernel forwarded never reached a poller; each was looked up and
	 * matched in every table of its entry's chain. */
	for (unsigned i = 0; i < SW_N_TABLES; i++) {
		uint64_t off = sw_offload_hits(a->dp->offload, i);
		t[i].lookup_count += off;
		t[i].matched_count += off;
	}
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_TABLE_REPLY, .xid = x->xid};
	rep.u.tables.n = SW_N_TABLES;
	rep.u.tables.items = t;
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

void mp_desc(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_DESC_REPLY, .xid = x->xid};
	struct of_desc *d = &rep.u.desc;
	snprintf(d->mfr, sizeof(d->mfr), "ringflow");
	snprintf(d->hw, sizeof(d->hw), "ringflow-switch on ringflow frame ports");
	snprintf(d->sw, sizeof(d->sw), "ringflow-switch (OpenFlow 1.3)");
	snprintf(d->serial, sizeof(d->serial), "None");
	snprintf(d->dp, sizeof(d->dp), "dpid 0x%016llx, %u ports, %u cores",
		 (unsigned long long)a->cfg.dpid, a->dp->nports, a->dp->ncores);
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

/* ---- TABLE_FEATURES (ovs-ofctl asks before a FLOW_MOD) ---- */

/* Every table, described as it is (sw_tables.c). */
void table_features(struct sw_agent *a, struct sw_conn *c, uint32_t xid)
{
	size_t n = sw_tables_features(a->wbuf, WBUF, xid);
	if (n)
		send_bytes(a, c, a->wbuf, (ssize_t)n);
}
