/*
 * apps/openflow/controller/ofc_io.c: the I/O poller of ringflow-controller (see ofc.h).
 *
 * The switch sockets belong to ringflow's tcp driver (io/sock_tcp.c): it accepts, reads,
 * reassembles and hands over whole OpenFlow messages (framing=inline16: the length is at
 * offset 2 of the header), each in a packet buffer, and tells us when a connection comes and
 * goes (events=1). A message with a length below the header's 8 bytes comes flagged
 * RF_PKTBUF_F_BAD_FRAME: the session answers BAD_LEN and the driver closes the connection.
 *
 * Each connection runs an of_session over its messages. A PACKET_IN of an UP session is
 * handed, in the buffer the driver filled, to the handler dpid % n_handlers; when that
 * handler's ring is full the buffer waits in the handler's held queue (same order), and while
 * a held queue or the pool runs low the poller stops receiving, so TCP slows the switches
 * down and nothing already accepted is dropped. Replies come back on the handlers' out rings
 * and go to the driver's tx_burst with the connection id (`flow`) they came in with: a reply
 * to a switch that has gone is dropped by the driver (the id's generation no longer matches).
 * A switch whose output backs up (it does not read) is closed (RF_PKTBUF_F_ABORT).
 * A datapath id that connects again while its old connection is still open (a switch that
 * restarted faster than TCP noticed) takes over: the old connection is closed, and closing
 * it does not tear down the switch's state, which now belongs to the new connection.
 *
 * Defences (struct ofc_limits, docs/openflow.md "Limits and defences"): a connection over the
 * per-source-address cap or over the cap on unfinished handshakes is closed as it opens; a
 * handshake not done within handshake_ms is closed; an UP switch silent for echo_idle_ms gets
 * an ECHO_REQUEST and is closed after echo_dead_ms without any message (and never before it
 * had an ECHO_REQUEST and echo_dead_ms - echo_idle_ms to answer it). These deadlines are
 * checked by a sweep over CONN_SWEEP slots at a time, never per message. The driver's own
 * max_conns is the global cap (it accepts and closes the connections over it); controller.c
 * keeps that cap under the process's fd limit, so accept never fails for want of an fd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/io.h>

#include "cl_roles.h"
#include "ofc.h"
#include "ofc_app.h"
#include "of_session.h"

#define FLOW_MAP (2 * OFC_MAX_CONNS) /* open addressing, power of two, half full at most */
#define RX_BURST 32
#define TX_BATCH 64
#define HELD_MAX 1024                /* per handler */
#define POOL_RESERVE 1024            /* stop receiving below this many free buffers */
#define OUT_CAP (256u * 1024)        /* a session's or the apps' output from one call */
#define SRC_MAP (2 * OFC_MAX_CONNS)  /* source address -> open connections */
#define CONN_SWEEP 128               /* slots the deadline sweep visits per step */
#define SWEEP_MS 10                  /* at most one sweep step per this many ms */

struct conn {
	uint64_t flow; /* the driver's connection id; 0: a free entry */
	struct of_session s;
	bool superseded; /* a newer connection has its datapath id: no switch_down on close */
	bool handshaking; /* counted in n_handshaking */
	bool closing;     /* a close was requested: wait for CONN_DOWN */
	uint8_t src[16];  /* peer address (IPv4 mapped into IPv6) */
	uint64_t opened_ms, last_rx_ms, echo_ms; /* echo_ms: the last ECHO_REQUEST sent */
	uint64_t ask_ms; /* the first ECHO_REQUEST since the switch's last message */
	struct cl_role_slot *role; /* --cluster, OpenFlow 1.3: this switch's role slot */
	uint64_t role_sent;        /* the want word last sent as a ROLE_REQUEST */
};

/* Unfinished handshakes in the order they opened (entries of connections that finished or
 * closed are skipped when reached): at the handshaking cap the oldest makes room. */
struct hs_entry {
	uint64_t flow;
	unsigned k; /* conns index */
};
#define HS_FIFO (2 * OFC_MAX_CONNS)

struct src_slot {
	uint8_t addr[16];
	unsigned n; /* 0: empty */
};

/* Buffers for a handler whose ring was full, in arrival order (a circular queue). */
struct held {
	struct rf_pktbuf *b[HELD_MAX];
	unsigned head, n;
};

struct ofc_io {
	struct rf_io_dev *dev;
	struct rf_pktbuf_pool *pool, *jumbo;
	struct ofc_handler *h;
	unsigned nh;
	unsigned n_open;
	struct rf_poller *poller; /* set on the first poll: counters */
	struct ofc_apps *apps;    /* NULL: learning switch only, no control hooks */
	struct conn conns[OFC_MAX_CONNS];
	uint16_t map[FLOW_MAP];   /* hash of flow -> conns index + 1; 0: empty */
	struct held held[OFC_MAX_HANDLERS];
	unsigned wake_mask;       /* handlers given work this round */
	unsigned at_handlers;     /* buffers handed off (held, on a ring, being answered) */
	uint64_t held_total;      /* PACKET_INs that waited in a held queue */
	uint64_t paused;          /* rounds that did not receive (held queue or pool low) */
	struct rf_pktbuf *tx[TX_BATCH];
	unsigned ntx;
	struct ofc_limits lim;
	unsigned n_handshaking;
	struct hs_entry hs[HS_FIFO];
	unsigned hs_head, hs_n;
	struct src_slot src[SRC_MAP];
	uint64_t now_ms, next_sweep_ms;
	unsigned sweep_at;
	struct ofc_guard_stats guard;
	struct ofc_ratelog log;
	struct cl_roles *roles;   /* --cluster: roles decided by the cluster thread; else NULL */
	uint64_t roles_epoch, next_roles_ms;
	uint8_t out[OUT_CAP];
};

/* ---- open connections per source address ------------------------------------------------ */

static unsigned src_hash(const uint8_t a[16])
{
	uint64_t x = 0, y = 0;
	memcpy(&x, a, 8);
	memcpy(&y, a + 8, 8);
	return (unsigned)(((x ^ (y * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull) >> 40) &
	       (SRC_MAP - 1);
}

/* The slot of a (found or the empty one where it would go). */
static struct src_slot *src_slot(struct ofc_io *io, const uint8_t a[16])
{
	unsigned i = src_hash(a);
	while (io->src[i].n && memcmp(io->src[i].addr, a, 16))
		i = (i + 1) & (SRC_MAP - 1);
	return &io->src[i];
}

/* One connection from a gone: backward-shift deletion when it was the last. */
static void src_release(struct ofc_io *io, const uint8_t a[16])
{
	struct src_slot *sl = src_slot(io, a);
	if (!sl->n || --sl->n)
		return;
	unsigned i = (unsigned)(sl - io->src);
	for (unsigned j = (i + 1) & (SRC_MAP - 1); io->src[j].n; j = (j + 1) & (SRC_MAP - 1)) {
		unsigned home = src_hash(io->src[j].addr);
		if (((j - home) & (SRC_MAP - 1)) >= ((j - i) & (SRC_MAP - 1))) {
			io->src[i] = io->src[j];
			i = j;
		}
	}
	io->src[i] = (struct src_slot){0};
}

static void src_of(const struct rf_pktbuf *b, uint8_t a[16])
{
	memset(a, 0, 16);
	if (b->peer_len && b->peer.sa.sa_family == AF_INET6) {
		memcpy(a, &b->peer.in6.sin6_addr, 16);
	} else if (b->peer_len && b->peer.sa.sa_family == AF_INET) {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &b->peer.in.sin_addr, 4);
	}
}

static void src_str(const uint8_t a[16], char *s, size_t n)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (!memcmp(a, v4, 12))
		inet_ntop(AF_INET, a + 12, s, (socklen_t)n);
	else
		inet_ntop(AF_INET6, a, s, (socklen_t)n);
}

bool ofc_ratelog_ok(struct ofc_ratelog *r, uint64_t now_ms, uint64_t *suppressed)
{
	if (now_ms < r->next_ms) {
		r->suppressed++;
		return false;
	}
	*suppressed = r->suppressed;
	r->suppressed = 0;
	r->next_ms = now_ms + 5000;
	return true;
}

/* One line about a refused or closed connection, at most one per 5 s. */
static void guard_log(struct ofc_io *io, const uint8_t a[16], const char *what)
{
	uint64_t sup;
	if (!ofc_ratelog_ok(&io->log, io->now_ms, &sup))
		return;
	char s[INET6_ADDRSTRLEN];
	src_str(a, s, sizeof(s));
	fprintf(stderr, "ringflow-controller: %s (from %s); %llu more such lines held back\n",
		what, s, (unsigned long long)sup);
}

/* ---- connection ids -> connections ----------------------------------------------------- */

static unsigned flow_hash(uint64_t flow)
{
	return (unsigned)((flow * 0x9e3779b97f4a7c15ull) >> 40) & (FLOW_MAP - 1);
}

static struct conn *conn_find(struct ofc_io *io, uint64_t flow)
{
	for (unsigned i = flow_hash(flow);; i = (i + 1) & (FLOW_MAP - 1)) {
		if (!io->map[i])
			return NULL;
		struct conn *c = &io->conns[io->map[i] - 1];
		if (c->flow == flow)
			return c;
	}
}

static struct conn *conn_new(struct ofc_io *io, uint64_t flow)
{
	unsigned k = 0;
	while (k < OFC_MAX_CONNS && io->conns[k].flow)
		k++;
	if (k == OFC_MAX_CONNS)
		return NULL; /* cannot happen: the driver takes at most OFC_MAX_CONNS */
	unsigned i = flow_hash(flow);
	while (io->map[i])
		i = (i + 1) & (FLOW_MAP - 1);
	io->map[i] = (uint16_t)(k + 1);
	io->conns[k] = (struct conn){.flow = flow, .opened_ms = io->now_ms,
				     .last_rx_ms = io->now_ms};
	io->n_open++;
	return &io->conns[k];
}

/* Removes c from the map (backward-shift deletion: no tombstones) and frees it. */
static void conn_delete(struct ofc_io *io, struct conn *c)
{
	unsigned i = flow_hash(c->flow);
	while (io->map[i] && &io->conns[io->map[i] - 1] != c)
		i = (i + 1) & (FLOW_MAP - 1);
	if (!io->map[i])
		return; /* not in the map (cannot happen) */
	for (unsigned j = (i + 1) & (FLOW_MAP - 1); io->map[j]; j = (j + 1) & (FLOW_MAP - 1)) {
		unsigned home = flow_hash(io->conns[io->map[j] - 1].flow);
		/* Entry j may move into the hole at i when its home is not in (i, j]. */
		if (((j - home) & (FLOW_MAP - 1)) >= ((j - i) & (FLOW_MAP - 1))) {
			io->map[i] = io->map[j];
			i = j;
		}
	}
	io->map[i] = 0;
	src_release(io, c->src);
	if (c->handshaking)
		io->n_handshaking--;
	*c = (struct conn){0};
	io->n_open--;
}

/* ---- sending ----------------------------------------------------------------------------- */

static void count_drop(struct ofc_io *io)
{
	rf_counter_add(&rf_poller_counters(io->poller)->drop_driver, 1);
}

/* Hands the batch to the driver. A buffer it refuses means that connection's output is full:
 * the switch does not read its replies, so it is closed rather than buffered without bound. */
static void tx_flush(struct ofc_io *io)
{
	unsigned i = 0;
	while (i < io->ntx) {
		i += rf_io_tx_burst(io->dev, 0, io->tx + i, io->ntx - i);
		if (i < io->ntx) {
			struct rf_pktbuf *b = io->tx[i++];
			count_drop(io);
			b->data_len = 0; /* the refused buffer becomes the close request */
			b->flags = RF_PKTBUF_F_ABORT;
			rf_io_tx_burst(io->dev, 0, &b, 1); /* zero-length: always taken */
		}
	}
	io->ntx = 0;
}

static void tx_add(struct ofc_io *io, struct rf_pktbuf *b)
{
	io->tx[io->ntx++] = b;
	if (io->ntx == TX_BATCH)
		tx_flush(io);
}

/* Sends p[0..len) (whole OpenFlow messages) on flow, in buffers of up to OFC_BUF_ROOM bytes
 * (a longer message alone in a jumbo buffer); flags (RF_PKTBUF_F_CLOSE) go on the last one,
 * an empty one when len is 0. */
static void send_out(struct ofc_io *io, uint64_t flow, const uint8_t *p, size_t len,
		     uint16_t flags)
{
	size_t off = 0;
	while (off < len || flags) {
		size_t chunk = 0;
		while (off + chunk < len) {
			size_t m = off + chunk + 4 <= len ? of_get16(p + off + chunk + 2) : 0;
			if (m < 8 || m > len - off - chunk)
				m = len - off - chunk; /* not ours to split (cannot happen) */
			if (chunk && chunk + m > OFC_BUF_ROOM)
				break;
			chunk += m;
		}
		bool last = off + chunk >= len;
		struct rf_pktbuf *b = rf_pktbuf_alloc(chunk > OFC_BUF_ROOM ? io->jumbo : io->pool);
		if (b && chunk <= b->buf_len - b->data_off) {
			if (chunk) /* p is NULL for a bare close */
				memcpy(rf_pktbuf_data(b), p + off, chunk);
			b->data_len = (uint32_t)chunk;
			b->flow = flow;
			b->flags = last ? flags : 0;
			tx_add(io, b);
		} else {
			rf_pktbuf_free(b);
			count_drop(io); /* no buffer (receiving stops well before the pool is dry) */
		}
		off += chunk;
		if (last)
			break;
	}
}

/* ---- handing PACKET_INs to the handlers ------------------------------------------------- */

static void hand_off(struct ofc_io *io, unsigned k, struct rf_pktbuf *b)
{
	struct held *hq = &io->held[k];
	void *obj = b;
	io->wake_mask |= 1u << k;
	io->at_handlers++;
	if (hq->n == 0 && rf_ring_enqueue_burst(io->h[k].in, &obj, 1, NULL) == 1)
		return;
	hq->b[(hq->head + hq->n) % HELD_MAX] = b; /* room: receiving stops before it fills */
	hq->n++;
	io->held_total++;
}

/* Moves held buffers onto their rings, oldest first. Returns how many moved. */
static unsigned release_held(struct ofc_io *io)
{
	unsigned moved = 0;
	for (unsigned k = 0; k < io->nh; k++) {
		struct held *hq = &io->held[k];
		while (hq->n) {
			unsigned run = HELD_MAX - hq->head < hq->n ? HELD_MAX - hq->head : hq->n;
			unsigned m = rf_ring_enqueue_burst(io->h[k].in, (void **)&hq->b[hq->head], run,
							   NULL);
			hq->head = (hq->head + m) % HELD_MAX;
			hq->n -= m;
			moved += m;
			if (m)
				io->wake_mask |= 1u << k;
			if (m < run)
				break;
		}
	}
	return moved;
}

/* True when a whole burst can be received without a held queue overflowing or the pool
 * running dry for the sessions' own replies. The poller counts the buffers it handed off
 * itself (the pool's own free count takes a lock: not on this path); the others it holds
 * only within a round. */
static bool can_receive(const struct ofc_io *io)
{
	for (unsigned k = 0; k < io->nh; k++)
		if (io->held[k].n > HELD_MAX - RX_BURST)
			return false;
	return io->at_handlers + RX_BURST + POOL_RESERVE <= OFC_POOL_BUFS;
}

/* ---- sessions ----------------------------------------------------------------------------- */

struct fwd {
	struct ofc_io *io;
	struct conn *c;
	struct rf_pktbuf *b; /* the message's buffer */
	bool taken;          /* handed to a handler */
};

/* of_session callback: control messages to the apps, PACKET_INs to their switch's handler. */
static bool forward(void *arg, struct of_session *s, const struct of_msg *m,
		    const uint8_t *raw, size_t raw_len, struct of_out *out)
{
	(void)raw;
	(void)raw_len;
	struct fwd *fw = arg;
	struct ofc_io *io = fw->io;
	if (s->state != OF_SESSION_UP || fw->c->superseded)
		return true;
	if (m->type == OF_ERROR && m->u.error.type == OFPET_ROLE_REQUEST_FAILED && fw->c->role)
		/* Relaxed: a counter the cluster thread only shows. */
		atomic_fetch_add_explicit(&fw->c->role->refused, 1, memory_order_relaxed);
	if (m->type != OF_PACKET_IN) {
		if (io->apps)
			ofc_apps_control(io->apps, s, m, ofc_now_ms(), out); /* ports, switch up */
		return true;
	}
	struct ofc_meta *meta = ofc_meta_of(fw->b);
	meta->dpid = s->datapath_id;
	meta->version = s->framer.version;
	meta->kind = OFC_META_PACKET_IN;
	meta->t_ns = io->apps ? ofc_now_ns() : 0;
	hand_off(io, (unsigned)(s->datapath_id % io->nh), fw->b);
	fw->taken = true;
	rf_counter_add(&rf_poller_counters(io->poller)->rx, 1);
	return true;
}

/* The session of c just came up: an older connection with the same datapath id is closed as
 * superseded (its close leaves the switch's state to the new connection). */
static void take_over_dpid(struct ofc_io *io, struct conn *c)
{
	for (unsigned k = 0; k < OFC_MAX_CONNS; k++) {
		struct conn *o = &io->conns[k];
		if (o != c && o->flow && !o->superseded && o->s.state == OF_SESSION_UP &&
		    o->s.datapath_id == c->s.datapath_id) {
			o->superseded = true;
			send_out(io, o->flow, NULL, 0, RF_PKTBUF_F_CLOSE);
		}
	}
}

/* At the handshaking cap: closes the oldest connection still handshaking (a real switch
 * finishes in a round trip; only a stalling one is old). True when one was closed. */
static bool evict_oldest_handshake(struct ofc_io *io)
{
	while (io->hs_n) {
		struct hs_entry e = io->hs[io->hs_head];
		io->hs_head = (io->hs_head + 1) % HS_FIFO;
		io->hs_n--;
		struct conn *o = &io->conns[e.k];
		if (o->flow != e.flow || !o->handshaking || o->closing)
			continue; /* finished or closed meanwhile */
		io->guard.handshakes_evicted++;
		o->closing = true;
		o->handshaking = false; /* its slot no longer counts as a handshake */
		io->n_handshaking--;
		guard_log(io, o->src, "oldest unfinished handshake closed to make room");
		send_out(io, o->flow, NULL, 0, RF_PKTBUF_F_ABORT);
		return true;
	}
	return false;
}

static void conn_up(struct ofc_io *io, const struct rf_pktbuf *b)
{
	uint64_t flow = b->flow;
	uint8_t a[16];
	src_of(b, a);
	struct src_slot *sl = src_slot(io, a);
	if (sl->n >= io->lim.per_source) {
		io->guard.refused_source++;
		guard_log(io, a, "connection refused: per-source cap (--max-conns-per-source)");
		send_out(io, flow, NULL, 0, RF_PKTBUF_F_ABORT);
		return;
	}
	if (io->n_handshaking >= io->lim.max_handshaking && !evict_oldest_handshake(io)) {
		io->guard.refused_handshaking++;
		guard_log(io, a, "connection refused: too many handshakes in progress");
		send_out(io, flow, NULL, 0, RF_PKTBUF_F_ABORT);
		return;
	}
	struct conn *c = conn_new(io, flow);
	if (!c) {
		send_out(io, flow, NULL, 0, RF_PKTBUF_F_ABORT);
		return;
	}
	if (io->hs_n == HS_FIFO) { /* full of stale entries: drop the oldest */
		io->hs_head = (io->hs_head + 1) % HS_FIFO;
		io->hs_n--;
	}
	io->hs[(io->hs_head + io->hs_n++) % HS_FIFO] =
		(struct hs_entry){.flow = flow, .k = (unsigned)(c - io->conns)};
	if (!sl->n)
		memcpy(sl->addr, a, 16);
	sl->n++;
	memcpy(c->src, a, 16);
	c->handshaking = true;
	io->n_handshaking++;
	struct of_out out = {.p = io->out, .cap = sizeof(io->out)};
	of_session_start(&c->s, 0, 0, &out);
	c->s.keep_flows = io->roles != NULL; /* the switch's master owns its flow table */
	send_out(io, flow, io->out, out.len, 0);
}

/* The switch's handler forgets it (its MACs and hosts, in bounded steps): a marker behind
 * its last PACKET_IN on the same ring. */
static void tell_gone(struct ofc_io *io, uint64_t dpid)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(io->pool);
	if (!b) {
		count_drop(io); /* cannot happen: receiving stops well before the pool is dry */
		return;
	}
	struct ofc_meta *meta = ofc_meta_of(b);
	*meta = (struct ofc_meta){.dpid = dpid, .kind = OFC_META_SWITCH_GONE};
	b->data_len = 0;
	hand_off(io, (unsigned)(dpid % io->nh), b);
}

static void conn_down(struct ofc_io *io, struct conn *c)
{
	if (c->role && !c->superseded) /* Relaxed: the cluster only reads it as a hint */
		atomic_store_explicit(&c->role->up, 0, memory_order_relaxed);
	if (c->s.state == OF_SESSION_UP && !c->superseded) {
		if (io->apps)
			ofc_apps_switch_down(io->apps, c->s.datapath_id);
		tell_gone(io, c->s.datapath_id);
	}
	conn_delete(io, c);
}

/* --cluster: a ROLE_REPLY (which of_parse does not model) is recorded in the switch's role
 * slot here rather than answered as an unknown type. True when msg was one. */
static bool role_reply(struct conn *c, const uint8_t *msg, size_t len)
{
	if (len < 8 || msg[0] != OF_VERSION_1_3 || msg[1] != OF13_ROLE_REPLY)
		return false;
	struct of_xmsg x;
	struct of_fault f;
	if (of_xparse(msg, len, &x, &f) == 0 && x.type == OF_X_ROLE_REPLY)
		/* Relaxed: shown by the cluster thread, no data depends on it. */
		atomic_store_explicit(&c->role->have,
				      cl_role_word(x.u.role.generation_id, x.u.role.role & 3u),
				      memory_order_relaxed);
	return true;
}

/* --cluster: sends a ROLE_REQUEST to every UP 1.3 switch whose decided role (want) differs
 * from what its connection was last sent. Runs when the cluster bumped its epoch, and every
 * 100 ms to catch connections that came up since. */
static unsigned roles_sync(struct ofc_io *io)
{
	/* Acquire: pairs with the cluster thread's release increment of epoch after it
	 * stored want words. */
	uint64_t ep = atomic_load_explicit(&io->roles->epoch, memory_order_acquire);
	if (ep == io->roles_epoch && io->now_ms < io->next_roles_ms)
		return 0;
	io->roles_epoch = ep;
	io->next_roles_ms = io->now_ms + 100;
	unsigned n = 0;
	for (unsigned k = 0; k < OFC_MAX_CONNS; k++) {
		struct conn *c = &io->conns[k];
		if (!c->flow || !c->role || c->superseded || c->closing ||
		    c->s.state != OF_SESSION_UP)
			continue;
		/* Acquire: pairs with the cluster thread's release store of want. */
		uint64_t want = atomic_load_explicit(&c->role->want, memory_order_acquire);
		uint64_t w = cl_roles_effective(io->roles, want, io->now_ms);
		if (!w || w == c->role_sent)
			continue;
		if (w != want) { /* fenced: record when (Relaxed: shown only) */
			atomic_store_explicit(&io->roles->fenced_ms, io->now_ms, memory_order_relaxed);
			atomic_store_explicit(&io->roles->fenced_deadline_ms,
					      atomic_load_explicit(&io->roles->fence_at_ms,
								   memory_order_relaxed),
					      memory_order_relaxed);
		}
		struct of_xmsg x = {.version = OF_VERSION_1_3, .type = OF_X_ROLE_REQUEST,
				    .xid = of_session_xid(&c->s)};
		x.u.role.role = (uint32_t)(w & 3u);
		x.u.role.generation_id = w >> 2;
		uint8_t m[32];
		ssize_t len = of_xserialize(&x, m, sizeof(m));
		if (len <= 0)
			continue;
		send_out(io, c->flow, m, (size_t)len, 0);
		c->role_sent = w;
		/* Relaxed: a counter. */
		atomic_fetch_add_explicit(&c->role->sent, 1, memory_order_relaxed);
		n++;
	}
	return n;
}

/* --cluster: MACs the cluster knew for switches this member just became master of go to
 * their handlers as OFC_META_SEED buffers (a few per seed), never filling more than a
 * quarter of a held queue: records past that are dropped (counted as driver drops) and
 * learned again from PACKET_INs. */
static unsigned seeds_pass(struct ofc_io *io)
{
	void *obj;
	unsigned n = 0;
	while (n < 4 && rf_ring_dequeue_burst(io->roles->seeds, &obj, 1, NULL) == 1) {
		struct cl_seed *sd = obj;
		unsigned k = (unsigned)(sd->dpid % io->nh);
		uint32_t per = OFC_BUF_ROOM / OFC_SEED_REC, i = 0;
		for (; i < sd->n && io->held[k].n < HELD_MAX / 4; i += per) {
			struct rf_pktbuf *b = rf_pktbuf_alloc(io->pool);
			if (!b)
				break;
			uint32_t m = sd->n - i < per ? sd->n - i : per;
			memcpy(rf_pktbuf_data(b), sd->rec[i], (size_t)m * OFC_SEED_REC);
			b->data_len = m * OFC_SEED_REC;
			*ofc_meta_of(b) = (struct ofc_meta){.dpid = sd->dpid, .kind = OFC_META_SEED};
			hand_off(io, k, b);
		}
		if (i < sd->n)
			count_drop(io);
		free(sd);
		n++;
	}
	return n;
}

/* One message (or a bad frame's header) through its connection's session. */
static void conn_input(struct ofc_io *io, struct conn *c, struct rf_pktbuf *b)
{
	if (c->closing) { /* closed by a defence: what still arrives is dropped */
		rf_pktbuf_free(b);
		return;
	}
	if (c->role && role_reply(c, rf_pktbuf_data(b), b->data_len)) {
		c->last_rx_ms = io->now_ms;
		rf_pktbuf_free(b);
		return;
	}
	struct of_out out = {.p = io->out, .cap = sizeof(io->out)};
	struct fwd fw = {.io = io, .c = c, .b = b};
	bool close, was_up = c->s.state == OF_SESSION_UP;
	c->last_rx_ms = io->now_ms;
	of_session_input(&c->s, rf_pktbuf_data(b), b->data_len, forward, &fw, &out, &close);
	if (!was_up && c->s.state == OF_SESSION_UP) {
		if (c->handshaking)
			io->n_handshaking--;
		c->handshaking = false;
		take_over_dpid(io, c);
		if (io->roles && c->s.framer.version == OF_VERSION_1_3 &&
		    (c->role = cl_roles_slot(io->roles, c->s.datapath_id)))
			/* Relaxed: up is a hint for the cluster thread (which switches to
			 * decide); the decision itself is want, read with acquire below. */
			atomic_store_explicit(&c->role->up, 1, memory_order_relaxed);
	}
	if (close)
		c->closing = true;
	send_out(io, c->flow, io->out, out.len, close ? RF_PKTBUF_F_CLOSE : 0);
	if (!fw.taken)
		rf_pktbuf_free(b);
}

static unsigned receive(struct ofc_io *io)
{
	struct rf_pktbuf *pkts[RX_BURST];
	unsigned n = rf_io_rx_burst(io->dev, 0, pkts, RX_BURST);
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		struct conn *c = b->flags & RF_PKTBUF_F_CONN_UP ? NULL : conn_find(io, b->flow);
		if (b->flags & RF_PKTBUF_F_CONN_UP)
			conn_up(io, b);
		else if (c && (b->flags & RF_PKTBUF_F_CONN_DOWN))
			conn_down(io, c);
		else if (c) {
			conn_input(io, c, b);
			continue; /* conn_input owns b now */
		}
		rf_pktbuf_free(b);
	}
	return n;
}

/* ---- replies, timer ------------------------------------------------------------------------ */

/* Replies from the handlers go to the driver in the buffers they came in. */
static unsigned collect(struct ofc_io *io)
{
	unsigned total = 0;
	struct rf_core_counters *cnt = rf_poller_counters(io->poller);
	for (unsigned k = 0; k < io->nh; k++) {
		void *bufs[32];
		unsigned n = rf_ring_dequeue_burst(io->h[k].out, bufs, 32, NULL);
		io->at_handlers -= n;
		for (unsigned i = 0; i < n; i++) {
			struct rf_pktbuf *b = bufs[i];
			uint64_t t_ns = ofc_meta_of(b)->t_ns;
			if (t_ns)
				ofc_apps_latency(io->apps, ofc_now_ns() - t_ns);
			if (b->data_len == 0) {
				rf_pktbuf_free(b); /* nothing to answer (LLDP, a drop) */
				continue;
			}
			b->flags = 0;
			tx_add(io, b);
			rf_counter_add(&cnt->tx, 1);
		}
		total += n;
	}
	return total;
}

/* The apps' timer (ofc_app.h): once per connected switch, its out going to the switch. */
static unsigned apps_timer(struct ofc_io *io)
{
	uint64_t now = ofc_now_ms();
	unsigned n = 0;
	uint64_t want;
	if (ofc_flows_pending(ofc_apps_flows(io->apps), &want)) /* GET /api/flows/{dpid} */
		for (unsigned k = 0; k < OFC_MAX_CONNS; k++) {
			struct conn *c = &io->conns[k];
			if (c->flow && !c->superseded && c->s.state == OF_SESSION_UP &&
			    c->s.datapath_id == want) {
				struct of_out out = {.p = io->out, .cap = sizeof(io->out)};
				ofc_flows_send(ofc_apps_flows(io->apps), &c->s, &out);
				send_out(io, c->flow, io->out, out.len, 0);
				n++;
				break;
			}
		}
	if (!ofc_apps_timer_due(io->apps, now))
		return n;
	for (unsigned k = 0; k < OFC_MAX_CONNS; k++) {
		struct conn *c = &io->conns[k];
		if (!c->flow || c->superseded || c->s.state != OF_SESSION_UP)
			continue;
		if (c->role && !cl_roles_may_act(io->roles, c->s.datapath_id, now))
			continue; /* a SLAVE's PACKET_OUTs (LLDP) would be refused */
		struct of_out out = {.p = io->out, .cap = sizeof(io->out)};
		ofc_apps_timer_switch(io->apps, c->s.datapath_id, now, &out);
		send_out(io, c->flow, io->out, out.len, 0);
		n++;
	}
	ofc_apps_timer_done(io->apps, now);
	return n + 1;
}

/* Closes c (its CONN_DOWN follows), counting why. */
static void conn_expire(struct ofc_io *io, struct conn *c, uint64_t *counter, const char *what)
{
	(*counter)++;
	c->closing = true;
	if (c->handshaking)
		io->n_handshaking--;
	c->handshaking = false;
	guard_log(io, c->src, what);
	send_out(io, c->flow, NULL, 0, RF_PKTBUF_F_ABORT);
}

/* One step of the deadline sweep: CONN_SWEEP slots, at most every SWEEP_MS. */
static unsigned sweep_deadlines(struct ofc_io *io)
{
	if (io->now_ms < io->next_sweep_ms)
		return 0;
	io->next_sweep_ms = io->now_ms + SWEEP_MS;
	unsigned work = 0;
	for (unsigned n = 0; n < CONN_SWEEP; n++) {
		struct conn *c = &io->conns[io->sweep_at];
		io->sweep_at = (io->sweep_at + 1) % OFC_MAX_CONNS;
		if (!c->flow || c->closing)
			continue;
		uint64_t now = io->now_ms;
		if (c->s.state != OF_SESSION_UP) {
			if (now - c->opened_ms >= io->lim.handshake_ms) {
				conn_expire(io, c, &io->guard.handshake_timeouts,
					    "handshake not done in time: closed");
				work++;
			}
			continue;
		}
		/* asked: an ECHO_REQUEST went out after the switch's last message (ask_ms: the
		 * first of them; more follow every echo_idle). A switch is closed only once it was
		 * asked and had echo_dead - echo_idle to answer, so a sweep that comes round late
		 * (a loaded machine) never closes one it never asked. */
		uint64_t silent = now - c->last_rx_ms;
		bool asked = c->ask_ms > c->last_rx_ms;
		if (asked && silent >= io->lim.echo_dead_ms &&
		    now - c->ask_ms >= io->lim.echo_dead_ms - io->lim.echo_idle_ms) {
			conn_expire(io, c, &io->guard.echo_timeouts,
				    "switch silent past the echo deadline: closed");
			work++;
		} else if (silent >= io->lim.echo_idle_ms &&
			   (!asked || now - c->echo_ms >= io->lim.echo_idle_ms)) {
			uint8_t m[8];
			if (!asked)
				c->ask_ms = now;
			c->echo_ms = now;
			if (of_build_simple(m, sizeof(m), c->s.framer.version, OF_ECHO_REQUEST,
					    of_session_xid(&c->s)) == 8) {
				send_out(io, c->flow, m, 8, 0);
				io->guard.echo_sent++;
			}
			work++;
		}
	}
	return work;
}

unsigned ofc_io_poll(struct rf_poller *p, void *arg)
{
	struct ofc_io *io = arg;
	io->poller = p;
	io->now_ms = ofc_now_ms();
	unsigned work = release_held(io);
	work += sweep_deadlines(io);
	if (can_receive(io))
		work += receive(io);
	else
		io->paused++;
	work += collect(io);
	if (io->roles) {
		work += roles_sync(io);
		if (io->roles->seeds)
			work += seeds_pass(io);
	}
	if (io->apps)
		work += apps_timer(io);
	tx_flush(io);
	for (unsigned k = 0; io->wake_mask && k < io->nh; k++)
		if (io->wake_mask & (1u << k))
			rf_runtime_wake(io->h[k].rt, io->h[k].poller); /* if it sleeps (adaptive) */
	io->wake_mask = 0;
	return work;
}

/* ---- setup -------------------------------------------------------------------------------- */

struct ofc_io *ofc_io_create(const char *host, uint16_t port, struct ofc_handler *handlers,
			     unsigned n_handlers, const struct ofc_limits *lim, char *err,
			     size_t errlen)
{
	struct ofc_io *io = calloc(1, sizeof(*io));
	if (!io) {
		snprintf(err, errlen, "out of memory for the I/O poller's state");
		return NULL;
	}
	io->h = handlers;
	io->nh = n_handlers;
	io->lim = *lim;
	if (io->lim.max_conns == 0 || io->lim.max_conns > OFC_MAX_CONNS)
		io->lim.max_conns = OFC_MAX_CONNS;
	io->now_ms = ofc_now_ms();
	io->pool = rf_pktbuf_pool_create("ofc_bufs", OFC_POOL_BUFS, OFC_BUF_ROOM, 256,
					 RF_MEMPOOL_QUIET);
	io->jumbo = rf_pktbuf_pool_create("ofc_jumbo", OFC_JUMBO_BUFS, OFC_JUMBO_ROOM, 0,
					  RF_MEMPOOL_QUIET);
	if (!io->pool || !io->jumbo) {
		snprintf(err, errlen, "cannot allocate the message buffers (%u x %u bytes): %s",
			 OFC_POOL_BUFS, OFC_BUF_ROOM, strerror(errno));
		goto fail;
	}
	char spec[RF_IO_SPEC_MAX], derr[256];
	snprintf(spec, sizeof(spec),
		 "tcp:listen=%s:%u,framing=inline16,frame_off=2,frame_min=8,events=1,"
		 "max_conns=%u,nodelay=1", host, port, io->lim.max_conns);
	io->dev = rf_io_open(spec, io->pool, derr, sizeof(derr));
	if (!io->dev) {
		snprintf(err, errlen, "--listen %s:%u: %s", host, port, derr);
		goto fail;
	}
	rf_io_set_jumbo_pool(io->dev, io->jumbo);
	return io;
fail:
	ofc_io_free(io);
	return NULL;
}

void ofc_io_free(struct ofc_io *io)
{
	if (!io)
		return;
	for (unsigned k = 0; k < OFC_MAX_HANDLERS; k++)
		for (; io->held[k].n; io->held[k].n--) {
			rf_pktbuf_free(io->held[k].b[io->held[k].head]);
			io->held[k].head = (io->held[k].head + 1) % HELD_MAX;
		}
	rf_pktbuf_free_bulk(io->tx, io->ntx);
	rf_io_close(io->dev);
	rf_pktbuf_pool_free(io->pool);
	rf_pktbuf_pool_free(io->jumbo);
	free(io);
}

void ofc_io_set_roles(struct ofc_io *io, struct cl_roles *roles)
{
	io->roles = roles;
}

void ofc_io_set_apps(struct ofc_io *io, struct ofc_apps *apps)
{
	io->apps = apps;
}

int ofc_io_wait_fd(const struct ofc_io *io)
{
	return rf_io_wait_fd(io->dev, 0);
}

unsigned ofc_io_switches(const struct ofc_io *io)
{
	return io->n_open;
}

void ofc_io_backlog_stats(const struct ofc_io *io, uint64_t *held, uint64_t *paused)
{
	*held = io->held_total;
	*paused = io->paused;
}

void ofc_io_guard_stats(const struct ofc_io *io, struct ofc_guard_stats *st)
{
	*st = io->guard;
}

struct rf_io_dev *ofc_io_dev(const struct ofc_io *io)
{
	return io->dev;
}
