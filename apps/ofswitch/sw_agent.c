/*
 * apps/ofswitch/sw_agent.c: the OpenFlow 1.3 agent, one thread: the controller connections,
 * the handshake, roles, the dispatch of each message and the timers. The rest of the agent:
 * sw_agent_flow.c (the master flow list, FLOW_MOD, expiry), sw_agent_stats.c (multipart),
 * sw_agent_pkt.c (PACKET_IN/PACKET_OUT); sw_agent_pvt.h what they share.
 *
 * Everything the protocol module parses but this switch does not do is refused with the
 * OpenFlow ERROR the spec names (docs/switch.md has the table); malformed input gets its
 * ERROR and the connection stays up unless the framing itself is lost.
 *
 * Connections: one per --controller (up to 8, each connecting on its own, non-blocking,
 * with exponential backoff and jitter) plus up to 4 clients of --listen. Each has its role
 * (EQUAL until a ROLE_REQUEST; sw_role.c), its async config and miss_send_len; PACKET_IN
 * and FLOW_REMOVED go to every connection whose role and config want them, PORT_STATUS to
 * all by default. A SLAVE's state-changing requests get BAD_REQUEST/IS_SLAVE.
 *
 * The agent never waits for a controller: sockets are non-blocking, what one does not take
 * is queued whole, in order, on its connection (sw_out.h) and flushed on POLLOUT. A
 * connection with SW_OUT_MAX queued is not read until it drains (back-pressure); one whose
 * queue did not move for an echo interval, or would pass the hard bound, is a controller
 * that does not read: closed, with one line, and counted (closed_unread).
 */
#include "sw_agent_pvt.h"

/* ---- sending ---- */

/* The next connect attempt of controller connection c: after its backoff with jitter
 * (a random point in [backoff/2, backoff], so switches that lost the same controller do not
 * come back in step), then the backoff doubles up to BACKOFF_MAX_MS. */
static void schedule_retry(struct sw_agent *a, struct sw_conn *c, uint64_t now)
{
	a->rng ^= a->rng << 13; /* xorshift64 */
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	uint64_t half = c->backoff_ms / 2;
	c->next_try_ns = now + (half + a->rng % (half + 1)) * 1000000ull;
	c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
}

void conn_close(struct sw_agent *a, struct sw_conn *c, const char *why)
{
	if (c->fd >= 0) {
		if (c->ctl >= 0 && !c->connecting)
			fprintf(stderr, "ringflow-switch: controller %s: connection closed: %s\n",
				a->cfg.controllers[c->ctl], why);
		sw_out_flush(&c->out, c->fd, 0); /* best effort: what the socket takes now */
		close(c->fd);
		if (c->ctl >= 0)
			schedule_retry(a, c, now_ns());
	}
	sw_out_reset(&c->out);
	c->dump.on = false;
	c->fd = -1;
	c->version = 0;
	c->connecting = false;
	c->rlen = 0;
	a->roles[c - a->conns] = 0;
}

/* Closes c, a peer that does not read (its output queue is full or stuck): one line saying
 * so (--listen clients too, whose other closes are quiet) and closed_unread counts it. */
static void conn_close_unread(struct sw_agent *a, struct sw_conn *c, const char *what)
{
	char why[160];
	snprintf(why, sizeof(why), "the controller does not read: %s (%zu bytes queued)", what,
		 c->out.len);
	if (c->ctl < 0)
		fprintf(stderr, "ringflow-switch: --listen client (slot %u): connection closed: %s\n",
			(unsigned)(c - a->conns), why);
	atomic_fetch_add_explicit(&c->closed_unread, 1, memory_order_relaxed); /* see sw_conn */
	conn_close(a, c, why);
}

/* Message b[0, n) to c, whole: sent now or queued behind what waits (sw_out.h); never
 * waited for. */
void send_bytes(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, ssize_t n)
{
	if (n <= 0 || c->fd < 0)
		return;
	int rc = sw_out_send(&c->out, c->fd, b, (size_t)n, now_ns());
	if (rc == -ENOBUFS)
		conn_close_unread(a, c, "a message would pass the hard bound of its queue");
	else if (rc)
		conn_close(a, c, strerror(-rc));
}

/* POLLOUT on c: as much of its queue as the socket takes. */
static void conn_flush(struct sw_agent *a, struct sw_conn *c)
{
	int rc = sw_out_flush(&c->out, c->fd, now_ns());
	if (rc)
		conn_close(a, c, strerror(-rc));
}

void send_error(struct sw_agent *a, struct sw_conn *c, uint32_t xid, uint16_t type, uint16_t code,
		       const uint8_t *msg, size_t len)
{
	uint8_t v = c->version ? c->version : OF_VERSION_1_3;
	send_bytes(a, c, a->wbuf, of_build_error(a->wbuf, WBUF, v, xid, type, code, msg, len));
}


/* Does connection c take an async message of kind (SW_ASYNC_*) and reason now? Its role
 * and async config say; --listen clients (ovs-ofctl) get PACKET_IN and FLOW_REMOVED only
 * once they asked (a nonzero miss_send_len or SET_ASYNC), as OVS's service connections. */
bool wants(struct sw_agent *a, struct sw_conn *c, unsigned kind, uint8_t reason)
{
	if (c->fd < 0 || !c->version)
		return false;
	if (c->ctl < 0 && !c->async_on && kind != SW_ASYNC_PORT_STATUS)
		return false;
	return sw_async_wants(&c->async, a->roles[c - a->conns], kind, reason);
}

/* ---- one message ---- */

/* Wire types a SLAVE may not send (1.3.5 section 6.3.6): PACKET_OUT, FLOW_MOD, GROUP_MOD,
 * PORT_MOD, TABLE_MOD, METER_MOD, and a TABLE_FEATURES request that sets features. */
static bool slave_denied(const uint8_t *b, size_t len)
{
	switch (b[1]) {
	case 13: case 14: case 15: case 16: case 17: case 29:
		return true;
	case 18:
		return len > 16 && of_get16(b + 8) == OFPMP13_TABLE_FEATURES;
	}
	return false;
}

/* A FLOW or AGGREGATE request's table: the one table (0) or all (OFPTT_ALL); another id
 * is OFPBRC_BAD_TABLE_ID, as OVS answers. */
static bool table_ok(uint8_t table_id)
{
	return table_id < SW_N_TABLES || table_id == OFPTT_ALL;
}

/* The messages of_xparse knows: roles, async config, GET_CONFIG, DESC/AGGREGATE/TABLE. */
static void handle_x(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x,
		     const uint8_t *b, size_t len)
{
	unsigned who = (unsigned)(c - a->conns);
	struct of_xmsg r = {.version = OF_VERSION_1_3, .xid = x->xid};
	switch (x->type) {
	case OF_X_GET_CONFIG_REQUEST:
		r.type = OF_X_GET_CONFIG_REPLY;
		r.u.config.flags = a->cfg_flags;
		r.u.config.miss_send_len = c->miss_send_len;
		break;
	case OF_X_ROLE_REQUEST: {
		int code = sw_role_request(&a->role_state, a->roles, SW_MAX_CONNS, who,
					   x->u.role.role, x->u.role.generation_id, &r.u.role.role,
					   &r.u.role.generation_id);
		if (code >= 0)
			return send_error(a, c, x->xid, OFPET_ROLE_REQUEST_FAILED, (uint16_t)code, b,
					  len);
		r.type = OF_X_ROLE_REPLY;
		break;
	}
	case OF_X_GET_ASYNC_REQUEST:
		r.type = OF_X_GET_ASYNC_REPLY;
		for (unsigned i = 0; i < 2; i++) {
			r.u.async.packet_in[i] = c->async.mask[SW_ASYNC_PACKET_IN][i];
			r.u.async.port_status[i] = c->async.mask[SW_ASYNC_PORT_STATUS][i];
			r.u.async.flow_removed[i] = c->async.mask[SW_ASYNC_FLOW_REMOVED][i];
		}
		break;
	case OF_X_SET_ASYNC:
		for (unsigned i = 0; i < 2; i++) {
			c->async.mask[SW_ASYNC_PACKET_IN][i] = x->u.async.packet_in[i];
			c->async.mask[SW_ASYNC_PORT_STATUS][i] = x->u.async.port_status[i];
			c->async.mask[SW_ASYNC_FLOW_REMOVED][i] = x->u.async.flow_removed[i];
		}
		c->async_on = true;
		return;
	case OF_X_DESC_REQUEST:
		return mp_desc(a, c, x);
	case OF_X_AGGREGATE_REQUEST:
		if (x->u.aggregate_request.match.n_other)
			return send_error(a, c, x->xid, OFPET_BAD_MATCH, OFPBMC_BAD_FIELD, b, len);
		if (!table_ok(x->u.aggregate_request.table_id))
			return send_error(a, c, x->xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TABLE_ID, b, len);
		return mp_aggregate(a, c, x);
	case OF_X_TABLE_REQUEST:
		return mp_table(a, c, x);
	default: /* replies: a switch takes none */
		return send_error(a, c, x->xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
	}
	send_bytes(a, c, a->wbuf, of_xserialize(&r, a->wbuf, WBUF));
}

static void handle(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, size_t len)
{
	struct of_msg m;
	struct of_fault f;
	if (c->version) {
		struct of_xmsg x;
		if (a->roles[c - a->conns] == OFPCR_ROLE_SLAVE && slave_denied(b, len))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE, b,
					  len);
		/* EXPERIMENTER, as a message or a multipart kind: no experimenter is known. */
		if (b[1] == 4 || (b[1] == 18 && len >= 16 && of_get16(b + 8) == 0xffff))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST,
					  OFPBRC_BAD_EXPERIMENTER, b, len);
		/* A request in several parts (REQ_MORE): every request this switch takes fits
		 * in one message, so it keeps no parts (1.3.5 section 7.3.5). */
		if (b[1] == 18 && len >= 16 && (of_get16(b + 10) & OFPMPF_MORE))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST,
					  OFPBRC_MULTIPART_BUFFER_OVERFLOW, b, len);
		if (group_msg(a, c, b, len)) /* GROUP_MOD, the group multiparts */
			return;
		struct of_mmsg mm; /* METER_MOD and the meter multiparts (issue 25) */
		int mr = of_mparse(b, len, &mm, &f);
		if (mr == 0)
			return meter_msg(a, c, &mm, b, len);
		if (mr != -ENOENT)
			return send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version,
								      &f, b, len));
		int xr = of_xparse(b, len, &x, &f);
		if (xr == 0)
			return handle_x(a, c, &x, b, len);
		if (xr != -ENOENT)
			return send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version,
								      &f, b, len));
	}
	if (c->version && len >= 16 && b[1] == 18 && of_get16(b + 8) == OFPMP13_TABLE_FEATURES) {
		if (len != 16) /* a request that sets features: not done */
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, b, len);
		return table_features(a, c, of_get32(b + 4));
	}
	if (of_parse(b, len, &m, &f) != 0) {
		send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version ? c->version
					  : OF_VERSION_1_3, &f, b, len));
		if (f.close)
			conn_close(a, c, f.why);
		return;
	}
	if (!c->version && m.type != OF_HELLO) {
		send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
		return;
	}
	switch (m.type) {
	case OF_HELLO: {
		int v = of_negotiate(OF_VERSION_BIT, &m);
		if (v < 0) {
			send_error(a, c, m.xid, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, b, len);
			conn_close(a, c, "no common OpenFlow version (this switch speaks 1.3)");
			return;
		}
		c->version = (uint8_t)v;
		c->backoff_ms = BACKOFF_MIN_MS; /* a session: the next loss starts over */
		return;
	}
	case OF_ECHO_REQUEST: {
		struct of_msg r = m;
		r.type = OF_ECHO_REPLY;
		return send_bytes(a, c, a->wbuf, of_serialize(&r, a->wbuf, WBUF));
	}
	case OF_ECHO_REPLY:
	case OF_ERROR:
		return; /* last_rx_ns is already updated */
	case OF_FEATURES_REQUEST: {
		struct of_msg r = {.version = c->version, .type = OF_FEATURES_REPLY, .xid = m.xid};
		r.u.features.datapath_id = a->cfg.dpid;
		r.u.features.n_buffers = 0;
		r.u.features.n_tables = SW_N_TABLES;
		r.u.features.capabilities = 0x1 | 0x4 | 0x8; /* FLOW, PORT, GROUP_STATS */
		return send_bytes(a, c, a->wbuf, of_serialize(&r, a->wbuf, WBUF));
	}
	case OF_SET_CONFIG:
		/* Only OFPC_FRAG_NORMAL: fragments go through the table like other frames; this
		 * switch neither drops (FRAG_DROP) nor reassembles (FRAG_REASM) them. */
		if (m.u.config.flags)
			return send_error(a, c, m.xid, OFPET_SWITCH_CONFIG_FAILED, OFPSCFC_BAD_FLAGS, b,
					  len);
		a->cfg_flags = m.u.config.flags;
		c->miss_send_len = m.u.config.miss_send_len;
		c->async_on = c->async_on || c->miss_send_len != 0;
		return;
	case OF_BARRIER_REQUEST:
		/* Everything before it is done: FLOW_MODs change the master list at once, and the
		 * table the pollers use is published before this reply goes out. */
		if (a->dirty)
			publish(a);
		return send_bytes(a, c, a->wbuf, of_build_simple(a->wbuf, WBUF, c->version,
							      OF_BARRIER_REPLY, m.xid));
	case OF_FLOW_MOD:
		return flow_mod(a, c, &m, b, len);
	case OF_PACKET_OUT:
		return packet_out(a, c, &m, b, len);
	case OF_MULTIPART_REQUEST:
		if (m.u.mp_request.mp_type == OF_MP_FLOW && !table_ok(m.u.mp_request.table_id))
			return send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TABLE_ID, b, len);
		if (m.u.mp_request.mp_type == OF_MP_FLOW)
			return mp_flow(a, c, &m);
		return mp_ports(a, c, &m);
	default: /* messages a switch does not take (FEATURES_REPLY, PACKET_IN, ...) */
		return send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
	}
}

/* ---- the connection ---- */

static void conn_process(struct sw_agent *a, struct sw_conn *c);

static void conn_read(struct sw_agent *a, struct sw_conn *c)
{
	ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
		conn_close(a, c, n == 0 ? "closed by the controller" : strerror(errno));
		return;
	}
	if (n < 0)
		return;
	c->rlen += (size_t)n;
	c->last_rx_ns = now_ns();
	conn_process(a, c);
}

/* The whole messages waiting in c->rbuf, in order, until a FLOW dump starts (the rest wait
 * for its last part: the agent's loop comes back here then). */
static void conn_process(struct sw_agent *a, struct sw_conn *c)
{
	size_t off = 0;
	while (c->fd >= 0 && !c->dump.on) {
		struct of_framer fr = {.version = c->version, .max_len = OF_MAX_MSG_LEN};
		struct of_frame fo;
		of_frame(&fr, c->rbuf + off, c->rlen - off, &fo);
		if (fo.kind == OF_FRAME_NEED_MORE)
			break;
		if (fo.kind == OF_FRAME_BAD) {
			send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version ? c->version
						  : OF_VERSION_1_3, &fo.fault, c->rbuf + off,
						  c->rlen - off < 64 ? c->rlen - off : 64));
			if (fo.fault.close) {
				conn_close(a, c, fo.fault.why);
				return;
			}
			if (c->rlen - off < fo.len)
				break; /* the rest of the bad message is not here yet */
			off += fo.len;
			continue;
		}
		handle(a, c, c->rbuf + off, fo.len);
		off += fo.len;
	}
	if (c->fd < 0)
		return;
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
	if (a->dirty)
		publish(a);
}

/* A new connection on c (connected): a fresh session, EQUAL, the default async config;
 * send our HELLO. */
static void conn_start(struct sw_agent *a, struct sw_conn *c, int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Non-blocking: sends are queued (c->out) when the socket is full, reads wait for poll. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->fd = fd;
	c->version = 0;
	c->connecting = false;
	c->rlen = 0;
	c->last_rx_ns = c->last_echo_ns = now_ns();
	c->miss_send_len = c->ctl >= 0 ? 128 : 0; /* OFP_DEFAULT_MISS_SEND_LEN; 0: a client */
	c->async_on = false;
	sw_pinrate_init(&c->pin, a->cfg.pin_rate, a->cfg.pin_burst, now_ns());
	sw_async_default(&c->async);
	a->roles[c - a->conns] = OFPCR_ROLE_EQUAL;
	send_bytes(a, c, a->wbuf, of_build_hello(a->wbuf, WBUF, OF_VERSION_1_3, a->xid++,
						 OF_VERSION_BIT));
}

/* Starts a non-blocking connect of controller connection c; the poll loop finishes it
 * (conn_connected) or conn_close schedules the next try. */
static void conn_open(struct sw_agent *a, struct sw_conn *c, uint64_t now)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		schedule_retry(a, c, now);
		return;
	}
	c->fd = fd;
	c->connecting = true;
	c->connect_ns = now;
	if (connect(fd, (struct sockaddr *)&a->ctl[c->ctl], sizeof(a->ctl[0])) != 0 &&
	    errno != EINPROGRESS)
		conn_close(a, c, strerror(errno));
}

/* The connect of c finished (POLLOUT): connected, or failed (closed, retried later). */
static void conn_connected(struct sw_agent *a, struct sw_conn *c)
{
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err) {
		conn_close(a, c, strerror(err));
		return;
	}
	int fd = c->fd;
	fprintf(stderr, "ringflow-switch: connected to controller %s\n",
		a->cfg.controllers[c->ctl]);
	conn_start(a, c, fd);
}

/* A client of --listen (ovs-ofctl): the first free slot after the controllers'. */
static void conn_accept(struct sw_agent *a)
{
	int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (unsigned i = SW_MAX_CONTROLLERS; i < SW_MAX_CONNS; i++)
		if (a->conns[i].fd < 0) {
			conn_start(a, &a->conns[i], fd);
			return;
		}
	close(fd); /* all slots busy: the client sees the close */
}

/* ---- timers: expiry and echo ---- */

static void timers(struct sw_agent *a, uint64_t now)
{
	sw_offload_sync(a->dp->offload); /* idle timeouts see the kernel's hits */
	flow_expire(a, now);
	struct sw_table *t = atomic_load_explicit(&a->dp->table, memory_order_relaxed); /* ours */
	sw_table_rerank(t); /* subtables of equal priority: the busiest first */
	sw_table_reclaim(t, now, false);
	a->dirty = false;
	port_status_check(a);
	if (a->cfg.stats_interval_s && now - a->last_obs_ns >= a->cfg.stats_interval_s * 1000000000ull) {
		a->last_obs_ns = now;
		agent_obs_print(a);
	}
	uint64_t every = (a->cfg.echo_interval_s ? a->cfg.echo_interval_s : 5) * 1000000000ull;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		struct sw_conn *c = &a->conns[i];
		if (c->fd < 0 || c->connecting)
			continue;
		/* While its requests are not read (back-pressure), the controller's reading of
		 * its replies is its sign of life: a slow reader of a big dump is not dropped. */
		uint64_t alive = c->last_rx_ns;
		if ((sw_out_backlogged(&c->out) || c->dump.on) && c->out.progress_ns > alive)
			alive = c->out.progress_ns;
		if (now - alive > 3 * every)
			conn_close(a, c, "no answer to ECHO: dropped");
		else if (sw_out_pending(&c->out) && now - c->out.progress_ns >= every)
			conn_close_unread(a, c, "its output did not move for an echo interval");
		else if (c->version && now - c->last_rx_ns >= every &&
			 now - c->last_echo_ns >= every) {
			c->last_echo_ns = now;
			send_bytes(a, c, a->wbuf, of_build_simple(a->wbuf, WBUF, c->version,
								  OF_ECHO_REQUEST, a->xid++));
		}
	}
}

/* "tcp:IPV4:PORT" into *sa; 0 or -1 after one line naming opt. */
static int parse_tcp(const char *opt, const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (strncmp(s, "tcp:", 4) != 0 || !colon || colon == s + 3 ||
	    (size_t)(colon - s - 4) >= sizeof(host) || *end || port <= 0 || port > 65535)
		goto bad;
	memcpy(host, s + 4, (size_t)(colon - s - 4));
	host[colon - s - 4] = '\0';
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) == 1)
		return 0;
bad:
	fprintf(stderr, "ringflow-switch: %s %s: use tcp:IPV4:PORT, e.g. tcp:127.0.0.1:6653\n", opt,
		s);
	return -1;
}

struct sw_agent *sw_agent_create(struct sw_dp *dp, const struct sw_agent_cfg *cfg)
{
	struct sw_agent *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->dp = dp;
	a->cfg = *cfg;
	a->lfd = -1;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		a->conns[i].fd = -1;
		a->conns[i].ctl = i < cfg->ncontrollers ? (int)i : -1;
		a->conns[i].backoff_ms = BACKOFF_MIN_MS;
	}
	a->rng = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)a;
	a->rng += !a->rng; /* xorshift state must not be 0 */
	a->xid = 1;
	for (unsigned i = 0; i < dp->nports; i++)
		a->link[i] = rf_io_link_up(dp->ports[i].dev);
	a->idx = calloc(IDX_BUCKETS, sizeof(*a->idx));
	if (!a->idx)
		goto fail;
	if (cfg->ncontrollers > SW_MAX_CONTROLLERS) {
		fprintf(stderr, "ringflow-switch: at most %d --controller\n", SW_MAX_CONTROLLERS);
		goto fail;
	}
	for (unsigned i = 0; i < cfg->ncontrollers; i++)
		if (parse_tcp("--controller", cfg->controllers[i], &a->ctl[i]))
			goto fail;
	if (cfg->listen) {
		struct sockaddr_in la;
		int one = 1;
		if (parse_tcp("--listen", cfg->listen, &la))
			goto fail;
		a->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (a->lfd < 0 || setsockopt(a->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(a->lfd, (struct sockaddr *)&la, sizeof(la)) || listen(a->lfd, 4)) {
			fprintf(stderr, "ringflow-switch: --listen %s: %s: pick a free port\n",
				cfg->listen, strerror(errno));
			goto fail;
		}
	}
	if (!dp->groups && !(dp->groups = sw_groups_create(dp)))
		goto fail;
	for (unsigned i = 0; i < dp->nports; i++) /* fast failover: the links as they are now */
		sw_group_set_link(dp->groups, dp->ports[i].of_no, a->link[i] != 0);
	if (publish(a) != 0) /* an empty table: pollers drop until a controller adds flows */
		goto fail;
	return a;
fail:
	if (a->lfd >= 0)
		close(a->lfd);
	sw_groups_free(dp->groups);
	dp->groups = NULL;
	free(a->idx);
	free(a);
	return NULL;
}

void sw_agent_destroy(struct sw_agent *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++)
		conn_close(a, &a->conns[i], "switch stopping");
	if (a->lfd >= 0)
		close(a->lfd);
	drain_to_ctl(a);
	agent_obs_print(a);
	struct sw_table *t = atomic_exchange_explicit(&a->dp->table, NULL, memory_order_acq_rel);
	rf_qsbr_synchronize();
	sw_table_free(t); /* and what it still had to retire */
	sw_groups_free(a->dp->groups); /* the pollers are done (sw_main joins them first) */
	a->dp->groups = NULL;
	while (a->flows) {
		struct sw_flow *f = a->flows;
		a->flows = f->next;
		free(atomic_load_explicit(&f->actions, memory_order_relaxed));
		free(f);
	}
	free(a->idx);
	sw_meters_free(&a->meters); /* no poller runs any more */
	free(a);
}

/* Blocks in poll for at most 1 ms (timers, link state, the offload's sync), or not at all
 * when a PACKET_IN waits in to_ctl; a poller that queues one meanwhile wakes us through
 * agent_efd (struct sw_dp). Returns poll's result. */
static int agent_sleep(struct sw_agent *a, struct pollfd *pfd, nfds_t n)
{
	struct sw_dp *dp = a->dp;
	atomic_store_explicit(&dp->agent_asleep, true, memory_order_relaxed);
	/* seq_cst fence: the store above comes before our look at to_ctl; pairs with the fence
	 * in sw_dp_wake_agent (a poller's enqueue, then its load of agent_asleep). */
	atomic_thread_fence(memory_order_seq_cst);
	int timeout = rf_ring_count(dp->to_ctl) ? 0 : 1;
	rf_qsbr_offline(); /* blocking: delay no grace period */
	int pr = poll(pfd, n, timeout);
	rf_qsbr_online();
	/* relaxed: only saves the pollers a write; a stale true costs one spurious wake-up. */
	atomic_store_explicit(&dp->agent_asleep, false, memory_order_relaxed);
	if (pr > 0 && (pfd[n - 1].revents & POLLIN)) {
		uint64_t v;
		if (read(dp->agent_efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another read took it; nothing to do */
		}
	}
	return pr;
}

void *sw_agent_run(void *arg)
{
	struct sw_agent *a = arg;
	struct pollfd pfd[SW_MAX_CONNS + 2]; /* the connections, the listener, agent_efd */
	rf_qsbr_register(); /* it writes the classifier's lock-free hashes (qsbr.h's rule) */
	while (!rf_runtime_stopping(a->dp->rt)) {
		uint64_t now = now_ns();
		for (unsigned i = 0; i < a->cfg.ncontrollers; i++) {
			struct sw_conn *c = &a->conns[i];
			if (c->fd < 0 && now >= c->next_try_ns)
				conn_open(a, c, now);
			else if (c->connecting && now - c->connect_ns > CONNECT_TIMEOUT_NS)
				conn_close(a, c, "connect timed out");
		}
		/* Connecting: POLLOUT (the connect's end). Connected: POLLOUT when output is
		 * queued, POLLIN unless SW_OUT_MAX is (back-pressure: its requests wait in the
		 * socket until it reads its replies). */
		for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
			const struct sw_conn *c = &a->conns[i];
			short ev = POLLOUT;
			if (!c->connecting) /* a FLOW dump in progress: its requests wait too */
				ev = (short)((sw_out_backlogged(&c->out) || c->dump.on ? 0 : POLLIN) |
					     (sw_out_pending(&c->out) ? POLLOUT : 0));
			pfd[i] = (struct pollfd){.fd = c->fd, .events = ev};
		}
		pfd[SW_MAX_CONNS] = (struct pollfd){.fd = a->lfd, .events = POLLIN};
		pfd[SW_MAX_CONNS + 1] = (struct pollfd){.fd = a->dp->agent_efd, .events = POLLIN};
		int pr = agent_sleep(a, pfd, SW_MAX_CONNS + 2);
		for (unsigned i = 0; pr > 0 && i < SW_MAX_CONNS; i++) {
			struct sw_conn *c = &a->conns[i];
			if (c->fd < 0 || pfd[i].fd != c->fd)
				continue; /* closed (or reopened) by an earlier one's handling */
			if (c->connecting) {
				if (pfd[i].revents & (POLLOUT | POLLHUP | POLLERR))
					conn_connected(a, c);
				continue;
			}
			if (pfd[i].revents & POLLOUT)
				conn_flush(a, c);
			if (c->fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!c->dump.on)
				conn_read(a, c);
			else if (pfd[i].revents & (POLLHUP | POLLERR)) /* no reading mid-dump */
				conn_close(a, c, "closed by the controller");
		}
		for (unsigned i = 0; i < SW_MAX_CONNS; i++) { /* FLOW dumps whose queue drained */
			struct sw_conn *c = &a->conns[i];
			if (!c->dump.on)
				continue;
			dump_more(a, c);
			if (!c->dump.on && c->fd >= 0)
				conn_process(a, c); /* the requests that came behind it */
		}
		if (pr > 0 && (pfd[SW_MAX_CONNS].revents & POLLIN))
			conn_accept(a);
		drain_to_ctl(a);
		sw_offload_poll(a->dp->offload, atomic_load_explicit(&a->dp->table,
			memory_order_relaxed), now_ns()); /* ours: the writer */
		agent_obs_update(a);
		sw_ctlcmd_serve(a->cfg.ctlcmd, a->flows, a->nflows, now_ns());
		if (a->dp->macs) { /* relaxed: see struct sw_dp */
			bool up = false; /* a controller session is up */
			for (unsigned i = 0; i < a->cfg.ncontrollers; i++)
				up = up || (a->conns[i].fd >= 0 && a->conns[i].version);
			atomic_store_explicit(&a->dp->standalone, !up, memory_order_relaxed);
		}
		now = now_ns();
		if (now - a->last_timer_ns >= 1000000000ull) {
			a->last_timer_ns = now;
			timers(a, now);
		}
	}
	rf_qsbr_unregister();
	return NULL;
}
