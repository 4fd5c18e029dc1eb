/*
 * apps/openflow/ofbench/ofb_gen.c: the generator side of ringflow-ofbench (see ofb.h):
 * N emulated switches on one epoll set, the switch half of the handshake, PACKET_IN
 * generation per mode, and matching responses to PACKET_INs for counts and RTTs.
 *
 * Each switch keeps a table of send times indexed by sequence number (low bits); a response
 * names its PACKET_IN by buffer_id (buffered mode, the cbench way) or by the sequence number
 * the frame carries at offset 42 (--no-buffer, the OVS way: the data comes back in the
 * PACKET_OUT). A slot is cleared when matched, so a second response to one PACKET_IN
 * (FLOW_MOD and PACKET_OUT both naming the buffer) is not counted twice.
 *
 * The stall meter: while the loop spins, every timestamp it takes is compared with the one
 * before. A gap over OFB_GEN_STALL_NS means this thread was not running (descheduled, host
 * steal), so an answer read after that gap, for a PACKET_IN scheduled before its end, has an
 * RTT the generator inflated; so has one the generator sent more than that late (the
 * backlog a stall leaves). Such samples stay in every figure and are also counted apart,
 * so the report can give the maximum RTT without them beside the raw one.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ofb.h"
#include "ofb_conn.h"

#define FRAME_LEN 60
#define SEQ_OFF 42          /* where the frame carries the sequence number */
#define N_PORTS 4           /* ports announced in FEATURES_REPLY / PORT_DESC */
#define STALL_NS 1000000000u /* no answer for this long: count outstanding as lost */

struct slot {
	uint32_t seq;
	bool measured; /* sent during a measured round: its answer goes into the figures */
	uint64_t t;    /* send (or scheduled send) time; 0 = free */
};

struct sw {
	struct ofb_conn c;
	unsigned idx;
	bool ready;       /* answered FEATURES_REQUEST: may send PACKET_INs */
	uint32_t seq;     /* next sequence number (31 bits: buffer_id never NO_BUFFER) */
	unsigned outstanding;
	uint64_t last_answer_ns;
	struct slot *slots;
	uint32_t mask;
};

struct gen {
	const struct ofb_opts *o;
	struct ofb_result *r;
	struct sw *sw;
	int ep;
	bool measuring;
	bool draining;           /* after the rounds: waiting for answers still in flight */
	uint64_t last_tick;      /* the stall meter's previous timestamp; 0: none yet */
	uint64_t last_stall_end; /* when the latest generator stall ended; 0: none */
	uint64_t round_responses;
	char *err;
	unsigned errlen;
};

void ofb_live_init(struct ofb_live *l)
{
	memset(l, 0, sizeof(*l));
	rf_stats_hist_init(&l->rtt, 1000, 2.0, 24, 1e-9);
}

uint64_t ofb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Values below 32 ns have a bucket each; above, 16 sub-buckets per power of two. */
void ofb_hist_add(struct ofb_hist *h, uint64_t ns)
{
	unsigned i;
	if (ns < 32) {
		i = (unsigned)ns;
	} else {
		unsigned e = 63u - (unsigned)__builtin_clzll(ns) - 4; /* ns >> e is in [16, 32) */
		i = 32 + (e - 1) * 16 + (unsigned)((ns >> e) & 15);
	}
	if (i >= OFB_HIST_BUCKETS)
		i = OFB_HIST_BUCKETS - 1;
	h->b[i]++;
	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->sum_ns += ns;
}

uint64_t ofb_hist_quantile(const struct ofb_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t want = (uint64_t)(q * (double)h->count + 0.5), acc = 0;
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < OFB_HIST_BUCKETS; i++) {
		acc += h->b[i];
		if (acc < want)
			continue;
		if (i < 32)
			return i;
		unsigned e = (i - 32) / 16 + 1, s = (i - 32) % 16;
		uint64_t top = ((uint64_t)(16 + s + 1) << e) - 1; /* the bucket's upper edge */
		return top < h->max_ns ? top : h->max_ns;
	}
	return h->max_ns;
}

static int fail(struct gen *g, int rc, const char *fmt, const char *a, const char *b)
{
	snprintf(g->err, g->errlen, fmt, a, b);
	return rc;
}

/* ---- sending ---- */

static void make_frame(uint8_t *f, unsigned sw, unsigned src, unsigned dst, uint32_t seq)
{
	static const uint8_t tmpl[FRAME_LEN] = {
		[12] = 0x08, [13] = 0x00,                      /* IPv4 */
		[14] = 0x45, [16] = 0x00, [17] = 46, [22] = 64, [23] = 17, /* len 46, TTL, UDP */
		[26] = 10, [30] = 10,                          /* 10.x.x.x -> 10.x.x.x */
		[34] = 0x30, [35] = 0x39, [36] = 0x30, [37] = 0x39, [38] = 0, [39] = 26,
	};
	memcpy(f, tmpl, FRAME_LEN);
	uint8_t d[6] = {0x02, 0x00, (uint8_t)(sw >> 8), (uint8_t)sw, (uint8_t)(dst >> 8), (uint8_t)dst};
	uint8_t s[6] = {0x02, 0x00, (uint8_t)(sw >> 8), (uint8_t)sw, (uint8_t)(src >> 8), (uint8_t)src};
	memcpy(f, d, 6);
	memcpy(f + 6, s, 6);
	f[27] = (uint8_t)sw, f[28] = (uint8_t)(src >> 8), f[29] = (uint8_t)src;
	f[31] = (uint8_t)sw, f[32] = (uint8_t)(dst >> 8), f[33] = (uint8_t)dst;
	f[SEQ_OFF] = (uint8_t)(seq >> 24);
	f[SEQ_OFF + 1] = (uint8_t)(seq >> 16);
	f[SEQ_OFF + 2] = (uint8_t)(seq >> 8);
	f[SEQ_OFF + 3] = (uint8_t)seq;
}

/* Queues one PACKET_IN stamped t. Returns false when the send buffer is full. */
static bool send_packet_in(struct gen *g, struct sw *s, uint64_t t)
{
	const struct ofb_opts *o = g->o;
	size_t room;
	uint8_t *q = ofb_conn_reserve(&s->c, 256, &room);
	if (!q)
		return false;
	uint32_t seq = s->seq;
	unsigned src = seq % o->macs, dst = (seq + 1) % o->macs;
	uint8_t frame[FRAME_LEN];
	make_frame(frame, s->idx, src, dst, seq);
	struct of_msg m = {.version = s->c.framer.version, .type = OF_PACKET_IN, .xid = seq};
	m.u.packet_in.buffer_id = o->no_buffer ? OFP_NO_BUFFER : seq;
	m.u.packet_in.total_len = FRAME_LEN;
	m.u.packet_in.reason = 0; /* NO_MATCH */
	m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m.u.packet_in.match.in_port = src + 1; /* each host on its own port */
	m.u.packet_in.data = frame;
	m.u.packet_in.data_len = FRAME_LEN;
	ssize_t n = of_serialize(&m, q, room);
	if (n < 0)
		return false;
	ofb_conn_commit(&s->c, (size_t)n);
	struct slot *sl = &s->slots[seq & s->mask];
	if (sl->t)
		g->r->lost += sl->measured; /* overwritten before it was answered */
	else
		s->outstanding++;
	sl->seq = seq;
	sl->measured = g->measuring;
	sl->t = t;
	s->seq = (seq + 1) & 0x7fffffffu;
	if (g->measuring)
		g->r->sent++;
	OFB_LIVE_ADD(o->live, packet_ins, 1);
	return true;
}

static void queue_msg(struct sw *s, const struct of_msg *m)
{
	size_t room;
	uint8_t *q = ofb_conn_reserve(&s->c, 2048, &room);
	if (!q)
		return;
	ssize_t n = of_serialize(m, q, room);
	if (n > 0)
		ofb_conn_commit(&s->c, (size_t)n);
}

/* ---- receiving ---- */

/* One measured RTT into the figures; apart from the clean maximum if a generator stall
 * ended after the PACKET_IN was due (stalls end no later than `now`, so that is overlap). */
static void add_rtt(struct gen *g, uint64_t sched, uint64_t now)
{
	uint64_t rtt = now > sched ? now - sched : 0;
	ofb_hist_add(&g->r->rtt, rtt);
	g->r->responses++;
	if (sched < g->last_stall_end)
		g->r->rtt_samples_stalled++;
	else if (rtt > g->r->rtt_max_clean_ns)
		g->r->rtt_max_clean_ns = rtt;
}

static void answered(struct gen *g, struct sw *s, uint32_t seq, uint64_t now)
{
	struct slot *sl = &s->slots[seq & s->mask];
	if (sl->seq != seq || !sl->t)
		return; /* a second response, or one for a PACKET_IN written off as lost */
	if (sl->measured)
		add_rtt(g, sl->t, now);
	struct ofb_live *l = g->o->live;
	if (l) {
		OFB_LIVE_ADD(l, responses, 1);
		rf_stats_hist_record(&l->rtt, now > sl->t ? now - sl->t : 0);
	}
	g->round_responses += g->measuring; /* the rate: any answer inside a measured round */
	sl->t = 0;
	s->outstanding--;
	s->last_answer_ns = now;
}

static void announce_ports(struct of_port *p, unsigned sw)
{
	memset(p, 0, N_PORTS * sizeof(*p));
	for (unsigned i = 0; i < N_PORTS; i++) {
		p[i].port_no = i + 1;
		p[i].hw_addr[0] = 0x02;
		p[i].hw_addr[3] = (uint8_t)sw;
		p[i].hw_addr[5] = (uint8_t)(i + 1);
		snprintf(p[i].name, sizeof(p[i].name), "s%u-eth%u", sw % 10000, i + 1);
		p[i].curr = p[i].supported = 0x20; /* 1 Gb full duplex */
		p[i].curr_speed = p[i].max_speed = 1000000;
	}
}

static int handle(struct gen *g, struct sw *s, const uint8_t *b, size_t len, uint64_t now)
{
	struct of_msg m, out;
	struct of_fault f;
	struct of_port ports[N_PORTS];
	if (of_parse(b, len, &m, &f) != 0) {
		size_t room;
		uint8_t *q = ofb_conn_reserve(&s->c, 128, &room);
		uint8_t v = s->c.framer.version ? s->c.framer.version : g->o->version;
		ssize_t n = q ? of_build_error_reply(q, room, v, &f, b, len) : -1;
		if (n > 0)
			ofb_conn_commit(&s->c, (size_t)n);
		return f.close ? -EPROTO : 0;
	}
	memset(&out, 0, sizeof(out));
	out.version = m.version;
	out.xid = m.xid;
	switch (m.type) {
	case OF_HELLO: {
		int v = of_negotiate(1u << g->o->version, &m);
		if (v < 0)
			return fail(g, -EPROTO, "handshake failed: the controller does not offer "
				    "OpenFlow %s%s (try -O 1.0 or -O 1.3)",
				    g->o->version == OF_VERSION_1_0 ? "1.0" : "1.3", "");
		s->c.framer.version = (uint8_t)v;
		g->r->version = (uint8_t)v;
		return 0;
	}
	case OF_FEATURES_REQUEST:
		out.type = OF_FEATURES_REPLY;
		out.u.features.datapath_id = s->idx + 1;
		out.u.features.n_buffers = g->o->no_buffer ? 0 : 256;
		out.u.features.n_tables = m.version == OF_VERSION_1_0 ? 1 : 254;
		out.u.features.capabilities = 0x47; /* flow, table, port stats; ARP match */
		if (m.version == OF_VERSION_1_0) {
			announce_ports(ports, s->idx);
			out.u.features.actions = 0xfff;
			out.u.features.ports.n = N_PORTS;
			out.u.features.ports.items = ports;
		}
		queue_msg(s, &out);
		s->ready = true;
		OFB_LIVE_ADD(g->o->live, switches_up, 1);
		return 0;
	case OF_ECHO_REQUEST:
		out.type = OF_ECHO_REPLY;
		out.u.echo = m.u.echo;
		queue_msg(s, &out);
		return 0;
	case OF_BARRIER_REQUEST:
		out.type = OF_BARRIER_REPLY;
		queue_msg(s, &out);
		return 0;
	case OF_MULTIPART_REQUEST:
		out.type = OF_MULTIPART_REPLY;
		out.u.mp_reply.mp_type = m.u.mp_request.mp_type;
		if (m.u.mp_request.mp_type == OF_MP_PORT_DESC) {
			announce_ports(ports, s->idx);
			out.u.mp_reply.body.n = N_PORTS;
			out.u.mp_reply.body.items = ports;
		}
		queue_msg(s, &out);
		return 0;
	case OF_ERROR:
		g->r->errors_received++;
		OFB_LIVE_ADD(g->o->live, errors, 1);
		return 0;
	case OF_PACKET_OUT:
		if (g->measuring)
			g->r->packet_outs++;
		if (!g->o->no_buffer && m.u.packet_out.buffer_id != OFP_NO_BUFFER)
			answered(g, s, m.u.packet_out.buffer_id, now);
		else if (m.u.packet_out.data_len >= SEQ_OFF + 4)
			answered(g, s, of_get32(m.u.packet_out.data + SEQ_OFF), now);
		return 0;
	case OF_FLOW_MOD:
		if (g->measuring)
			g->r->flow_mods++;
		if (m.u.flow_mod.buffer_id != OFP_NO_BUFFER && !g->o->no_buffer)
			answered(g, s, m.u.flow_mod.buffer_id, now);
		return 0;
	default: /* SET_CONFIG, BARRIER_REPLY, ...: nothing to answer */
		return 0;
	}
}

static int service(struct gen *g, struct sw *s, uint64_t now)
{
	long n = ofb_conn_read(&s->c);
	if (n < 0)
		return fail(g, -ECONNRESET, "the controller closed switch connection %s%s",
			    "(see its log)", "");
	const uint8_t *msg;
	size_t len;
	int bad, rc;
	struct of_fault f;
	while ((rc = ofb_conn_next(&s->c, &msg, &len, &bad, &f)) > 0) {
		if (bad) {
			size_t room;
			uint8_t *q = ofb_conn_reserve(&s->c, 128, &room);
			ssize_t e = q ? of_build_error_reply(q, room, s->c.framer.version, &f, msg,
							     len) : -1;
			if (e > 0)
				ofb_conn_commit(&s->c, (size_t)e);
			continue;
		}
		int hr = handle(g, s, msg, len, now);
		if (hr < 0)
			return hr;
	}
	if (rc < 0)
		return fail(g, -EPROTO, "the controller sent a malformed stream: %s%s", f.why, "");
	return 0;
}

/* Feeds the stall meter one timestamp of the spinning loop (see the top of this file). */
static void tick(struct gen *g, uint64_t now)
{
	uint64_t gap = g->last_tick ? now - g->last_tick : 0;
	g->last_tick = now;
	if (gap <= OFB_GEN_STALL_NS)
		return;
	g->last_stall_end = now;
	if (!g->measuring)
		return;
	g->r->gen_stalls++;
	g->r->gen_stall_sum_ns += gap;
	if (gap > g->r->gen_stall_max_ns)
		g->r->gen_stall_max_ns = gap;
}

/* Reads every connection with data; returns 0 or the first error. Spins (timeout 0) while
 * generating and draining; blocks up to 1 ms otherwise (handshake), so a controller sharing
 * our CPU gets to run. Answers are stamped after the wait returns, when they are read. */
static int poll_once(struct gen *g, uint64_t *now, bool spin)
{
	struct epoll_event ev[64];
	int n = epoll_wait(g->ep, ev, 64, spin ? 0 : 1);
	if (n > 0) { /* answers are stamped when read; the caller goes on with this time */
		*now = ofb_now_ns();
		if (spin)
			tick(g, *now);
	}
	for (int i = 0; i < n; i++) {
		int rc = service(g, &g->sw[ev[i].data.u32], *now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int flush_all(struct gen *g)
{
	for (unsigned i = 0; i < g->o->switches; i++)
		if (ofb_conn_pending(&g->sw[i].c) && ofb_conn_flush(&g->sw[i].c) < 0)
			return fail(g, -ECONNRESET, "sending to the controller failed %s%s",
				    "(connection reset)", "");
	return 0;
}

/* Throughput/latency: keep each switch's window full; write off a stalled window. */
static void fill_windows(struct gen *g, uint64_t now)
{
	unsigned window = g->o->mode == OFB_LATENCY ? 1 : g->o->window;
	for (unsigned i = 0; i < g->o->switches; i++) {
		struct sw *s = &g->sw[i];
		if (s->outstanding && now > s->last_answer_ns + STALL_NS) { /* no underflow */
			for (uint32_t k = 0; k <= s->mask && s->outstanding; k++)
				if (s->slots[k].t) {
					s->slots[k].t = 0;
					s->outstanding--;
					g->r->lost += s->slots[k].measured;
				}
			s->last_answer_ns = now;
		}
		while (s->outstanding < window && ofb_conn_pending(&s->c) < 64 * 1024)
			if (!send_packet_in(g, s, now))
				break;
	}
}

/* A connected socket to controller k of o (0 = host:port), or -errno with g->err. */
static int connect_ctl(struct gen *g, unsigned k)
{
	const struct ofb_opts *o = g->o;
	const char *host = k ? o->more_host[k - 1] : o->host;
	uint16_t p = k ? o->more_port[k - 1] : o->port;
	char port[8];
	snprintf(port, sizeof(port), "%u", p);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
	int rc = getaddrinfo(host, port, &hints, &ai);
	if (rc)
		return fail(g, -EINVAL, "cannot resolve controller host %s: %s", host,
			    gai_strerror(rc));
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Bounds a blocking connect to an unreachable host (Linux applies the send
	 * timeout to connect); later I/O is non-blocking anyway. */
	struct timeval tmo = {.tv_sec = 3};
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		snprintf(g->err, g->errlen, "cannot connect to %s:%u: %s; is the controller "
			 "listening there?", host, p, strerror(e));
		return -e;
	}
	freeaddrinfo(ai);
	return fd;
}

static int connect_all(struct gen *g)
{
	const struct ofb_opts *o = g->o;
	for (unsigned i = 0; i < o->switches; i++) {
		struct sw *s = &g->sw[i];
		int fd = connect_ctl(g, i % (1 + o->n_more));
		if (fd < 0)
			return fd;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		s->c.fd = -1;
		if (ofb_conn_init(&s->c, fd) < 0)
			return fail(g, -ENOMEM, "out of memory for connection buffers%s%s", "", "");
		s->idx = i;
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
		epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev);
		/* Our HELLO: 1.3 with a bitmap naming just the version asked for; 1.0 plain. */
		size_t room;
		uint8_t *q = ofb_conn_reserve(&s->c, 64, &room);
		ssize_t n = o->version == OF_VERSION_1_0
				    ? of_build_hello(q, room, OF_VERSION_1_0, 0, 0)
				    : of_build_hello(q, room, OF_VERSION_1_3, 0, 1u << OF_VERSION_1_3);
		ofb_conn_commit(&s->c, (size_t)n);
		/* Sent at once, as a switch does: ovs-testcontroller does not poll a connection
		 * it has just accepted for our HELLO, so a late one waits for its 1 s timeout. */
		ofb_conn_flush(&s->c);
	}
	return 0;
}

/* Rate mode: sends every PACKET_IN due by `now` (round robin over the switches, *rr), each
 * stamped with its scheduled time, and notes how late each one went out. */
static void send_due(struct gen *g, uint64_t now, uint64_t t0, uint64_t *sent_total,
		     unsigned *rr)
{
	const struct ofb_opts *o = g->o;
	struct ofb_result *r = g->r;
	uint64_t due = (uint64_t)((double)(now - t0) * 1e-9 * o->rate);
	while (*sent_total < due) {
		uint64_t sched = t0 + (uint64_t)((double)*sent_total * 1e9 / o->rate);
		uint64_t late = now - sched;
		if (late > 1000000)
			r->behind += g->measuring;
		/* Sent later than a stall's length: the generator's backlog (after a stall) delayed
		 * it, so it counts as spanning a stall, like one due during the stall itself. */
		if (late > OFB_GEN_STALL_NS)
			g->last_stall_end = now;
		if (!send_packet_in(g, &g->sw[*rr], sched))
			break;
		*rr = (*rr + 1) % o->switches;
		(*sent_total)++;
		if (!g->measuring)
			continue;
		r->late_sum_ns += late;
		r->late_count++;
		if (late > r->late_max_ns)
			r->late_max_ns = late;
	}
}

/* Runs until `until_ns`: services connections and generates load for the mode. */
static int run_until(struct gen *g, uint64_t until_ns, uint64_t t0, uint64_t *sent_total,
		     bool generate)
{
	const struct ofb_opts *o = g->o;
	bool spin = generate || g->draining;
	unsigned rr = 0;
	for (;;) {
		uint64_t now = ofb_now_ns();
		if (spin)
			tick(g, now);
		else
			g->last_tick = 0; /* a blocking wait is not a stall */
		if (now >= until_ns)
			return 0;
		int rc = poll_once(g, &now, spin); /* may move now on: answers read later */
		if (rc < 0)
			return rc;
		if (generate && o->mode == OFB_RATE) {
			send_due(g, now, t0, sent_total, &rr);
		} else if (generate) {
			fill_windows(g, now);
		}
		rc = flush_all(g);
		if (rc < 0)
			return rc;
	}
}

int ofb_run(const struct ofb_opts *o, struct ofb_result *r, char *err, unsigned errlen)
{
	struct gen g = {.o = o, .r = r, .err = err, .errlen = errlen, .ep = -1};
	memset(r, 0, sizeof(*r));
	err[0] = '\0';
	if (!o->switches || !o->macs || o->macs > 65000 || !o->loops ||
	    o->loops > OFB_MAX_ROUNDS || o->round_s <= 0 || (o->mode == OFB_RATE && o->rate <= 0) ||
	    (o->mode == OFB_THROUGHPUT && (!o->window || o->window > 16384)))
		return fail(&g, -EINVAL, "bad options: need switches>0, 0<macs<=65000, "
			    "0<loops<=64, time>0, window 1..16384, rate>0 in rate mode%s%s", "", "");
	uint32_t slots = o->mode == OFB_RATE ? 1u << 18 : 1u << 15;
	g.sw = calloc(o->switches, sizeof(*g.sw));
	g.ep = epoll_create1(EPOLL_CLOEXEC);
	int rc = 0;
	if (!g.sw || g.ep < 0) {
		rc = fail(&g, -ENOMEM, "out of memory or epoll fds%s%s", "", "");
		goto out;
	}
	for (unsigned i = 0; i < o->switches; i++) {
		g.sw[i].c.fd = -1;
		g.sw[i].slots = calloc(slots, sizeof(struct slot));
		g.sw[i].mask = slots - 1;
		if (!g.sw[i].slots) {
			rc = fail(&g, -ENOMEM, "out of memory for %s%s", "send-time tables", "");
			goto out;
		}
	}
	if ((rc = connect_all(&g)) < 0)
		goto out;

	/* Handshake: every switch must have answered FEATURES_REQUEST within 5 s. */
	uint64_t deadline = ofb_now_ns() + 5000000000ull;
	for (unsigned ready = 0; ready < o->switches;) {
		if (ofb_now_ns() > deadline) {
			rc = fail(&g, -ETIMEDOUT, "handshake timed out: %s%s",
				  "the controller sent no FEATURES_REQUEST within 5 s to every switch",
				  "");
			goto out;
		}
		if ((rc = run_until(&g, ofb_now_ns() + 1000000, 0, NULL, false)) < 0)
			goto out;
		ready = 0;
		for (unsigned i = 0; i < o->switches; i++)
			ready += g.sw[i].ready;
	}
	/* Let the controller's own connect-time messages (table-miss, delete-all) settle. */
	if ((rc = run_until(&g, ofb_now_ns() + 50000000, 0, NULL, false)) < 0)
		goto out;
	for (unsigned i = 0; i < o->switches; i++)
		g.sw[i].last_answer_ns = ofb_now_ns(); /* the stall clock starts now */

	uint64_t t0 = ofb_now_ns(), sent_total = 0;
	uint64_t round_ns = (uint64_t)(o->round_s * 1e9);
	for (unsigned k = 0; k < o->warmup + o->loops; k++) {
		g.measuring = k >= o->warmup;
		g.round_responses = 0;
		uint64_t start = ofb_now_ns();
		if ((rc = run_until(&g, start + round_ns, t0, &sent_total, true)) < 0)
			goto out;
		double secs = (double)(ofb_now_ns() - start) * 1e-9;
		OFB_LIVE_ADD(o->live, rounds, 1);
		if (g.measuring) {
			r->per_s[r->rounds++] = (double)g.round_responses / secs;
			r->seconds += secs;
		}
	}
	/* Drain: answers still in flight are waited for (and counted) for up to 2 s; what is
	 * still missing then is lost. The loop spins, so the stall meter sees these answers. */
	g.measuring = false;
	g.draining = true;
	uint64_t drain_end = ofb_now_ns() + 2000000000ull;
	for (;;) {
		unsigned out_total = 0;
		for (unsigned i = 0; i < o->switches; i++)
			out_total += g.sw[i].outstanding;
		if (!out_total || ofb_now_ns() >= drain_end)
			break;
		if ((rc = run_until(&g, ofb_now_ns() + 1000000, t0, &sent_total, false)) < 0)
			goto out;
	}
	for (unsigned i = 0; i < o->switches; i++)
		for (uint32_t k = 0; k <= g.sw[i].mask; k++)
			r->lost += g.sw[i].slots[k].t && g.sw[i].slots[k].measured;
out:
	if (g.sw) {
		for (unsigned i = 0; i < o->switches; i++) {
			if (g.sw[i].c.fd >= 0 || g.sw[i].c.rx)
				ofb_conn_close(&g.sw[i].c);
			if (g.sw[i].ready)
				OFB_LIVE_ADD(o->live, switches_up, (uint64_t)-1);
			free(g.sw[i].slots);
		}
		free(g.sw);
	}
	if (g.ep >= 0)
		close(g.ep);
	return rc;
}
