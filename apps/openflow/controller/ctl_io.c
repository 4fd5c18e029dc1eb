/*
 * apps/openflow/controller/ctl_io.c: the I/O poller of ringflow-controller (see ctl.h).
 *
 * One epoll set holds the listening socket and every switch connection (non-blocking TCP,
 * partial messages reassembled in ofb_conn's receive buffer). Each connection runs an
 * of_session; its app messages (once the datapath id is known) are copied into a pool buffer
 * and go to the handler dpid % n_handlers. Replies come back on the handlers' out rings.
 * Connections live in slots with a generation number, so a reply that arrives after its
 * switch disconnected (and the slot was reused) is recognised and dropped.
 * A datapath id that connects again while its old connection is still open (a switch that
 * restarted faster than TCP noticed) takes over: the old connection is closed, and closing
 * it does not tear down the switch's state, which now belongs to the new connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_app.h"
#include "of_session.h"
#include "ofb_conn.h"

#define CTL_MAX_CONNS 1024
#define LISTEN_ID UINT32_MAX

struct slot {
	struct ofb_conn c;
	struct of_session s;
	uint32_t gen;
	bool open;
	bool backlog; /* received messages wait for buffers or ring room (push-back) */
	bool superseded; /* a newer connection has its datapath id: no switch_down on close */
};

struct ctl_io {
	int lfd, ep;
	struct rf_mempool *pool;
	struct ctl_handler *h;
	unsigned nh;
	unsigned n_open;
	bool any_backlog;         /* some slot has backlog set */
	uint32_t scan_start;      /* where the next backlog scan begins (fairness) */
	struct rf_poller *poller; /* set on the first poll: counters */
	struct ctl_apps *apps;    /* NULL: learning switch only, no control hooks */
	struct slot *slots;
};

struct ctl_io *ctl_io_create(const char *host, uint16_t port, struct rf_mempool *pool,
			     struct ctl_handler *handlers, unsigned n_handlers, char *err,
			     size_t errlen)
{
	struct ctl_io *io = calloc(1, sizeof(*io));
	struct slot *slots = calloc(CTL_MAX_CONNS, sizeof(*slots));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (!io || !slots) {
		snprintf(err, errlen, "out of memory for %u connection slots", CTL_MAX_CONNS);
		goto fail;
	}
	io->slots = slots;
	io->lfd = io->ep = -1;
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		snprintf(err, errlen, "--listen %s: not an IPv4 address; use e.g. 127.0.0.1:6653", host);
		goto fail;
	}
	io->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (io->lfd >= 0)
		setsockopt(io->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (io->lfd < 0 || bind(io->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(io->lfd, 128) < 0) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s; pick a free port with --listen",
			 host, port, strerror(errno));
		goto fail;
	}
	io->ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = LISTEN_ID};
	if (io->ep < 0 || epoll_ctl(io->ep, EPOLL_CTL_ADD, io->lfd, &ev) < 0) {
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		goto fail;
	}
	for (unsigned i = 0; i < CTL_MAX_CONNS; i++)
		slots[i].c.fd = -1;
	io->pool = pool;
	io->h = handlers;
	io->nh = n_handlers;
	return io;
fail:
	if (io && io->lfd >= 0)
		close(io->lfd);
	if (io && io->ep >= 0)
		close(io->ep);
	free(slots);
	free(io);
	return NULL;
}

void ctl_io_free(struct ctl_io *io)
{
	if (!io)
		return;
	for (unsigned i = 0; i < CTL_MAX_CONNS; i++)
		if (io->slots[i].open)
			ofb_conn_close(&io->slots[i].c);
	close(io->lfd);
	close(io->ep);
	free(io->slots);
	free(io);
}

void ctl_io_set_apps(struct ctl_io *io, struct ctl_apps *apps)
{
	io->apps = apps;
}

int ctl_io_wait_fd(const struct ctl_io *io)
{
	return io->ep;
}

unsigned ctl_io_switches(const struct ctl_io *io)
{
	return io->n_open;
}

static void drop_conn(struct ctl_io *io, uint32_t id)
{
	struct slot *sl = &io->slots[id];
	if (io->apps && sl->s.datapath_id && !sl->superseded)
		ctl_apps_switch_down(io->apps, sl->s.datapath_id);
	sl->superseded = false;
	epoll_ctl(io->ep, EPOLL_CTL_DEL, sl->c.fd, NULL);
	ofb_conn_close(&sl->c);
	sl->open = false;
	sl->gen++;
	io->n_open--;
}

static void accept_one(struct ctl_io *io)
{
	int fd = accept4(io->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	uint32_t id = 0;
	while (id < CTL_MAX_CONNS && io->slots[id].open)
		id++;
	struct slot *sl = &io->slots[id];
	if (id == CTL_MAX_CONNS || ofb_conn_init(&sl->c, fd) < 0) {
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = id};
	epoll_ctl(io->ep, EPOLL_CTL_ADD, fd, &ev);
	sl->open = true;
	io->n_open++;
	size_t room;
	uint8_t *q = ofb_conn_reserve(&sl->c, 64, &room);
	struct of_out out = {.p = q, .cap = room, .len = 0};
	of_session_start(&sl->s, 0, 0, &out);
	ofb_conn_commit(&sl->c, out.len);
	ofb_conn_flush(&sl->c);
}

struct fwd {
	struct ctl_io *io;
	uint32_t id;
	bool pushed_back;
};

/* of_session callback: an app message goes to its switch's handler. With no buffer or no
 * ring room it pushes back: the message stays in the receive buffer (and the rest in the
 * socket, so TCP slows the switch down) until the handlers catch up. Nothing is dropped. */
static bool forward(void *arg, struct of_session *s, const struct of_msg *m,
		    const uint8_t *raw, size_t raw_len, struct of_out *out)
{
	(void)out;
	struct fwd *fw = arg;
	struct ctl_io *io = fw->io;
	struct rf_core_counters *cnt = rf_poller_counters(io->poller);
	if (io->apps && s->state == OF_SESSION_UP && m->type != OF_PACKET_IN)
		ctl_apps_control(io->apps, s, m, ctl_now_ms(), out); /* ports, switch up */
	if (s->state != OF_SESSION_UP || m->type != OF_PACKET_IN)
		return true; /* the learning switch only needs PACKET_INs */
	if (raw_len > CTL_BUF_DATA) {
		rf_counter_add(&cnt->drop_driver, 1);
		return true;
	}
	struct ctl_handler *h = &io->h[s->datapath_id % io->nh];
	void *obj;
	if (rf_ring_free_count(h->in) == 0 || rf_mempool_get(io->pool, &obj) != 0) {
		fw->pushed_back = true;
		return false;
	}
	struct ctl_buf *b = obj;
	b->conn = fw->id;
	b->gen = io->slots[fw->id].gen;
	b->dpid = s->datapath_id;
	b->version = s->framer.version;
	b->len = (uint16_t)raw_len;
	memcpy(b->data, raw, raw_len);
	b->t_ns = io->apps ? ctl_now_ns() : 0;
	/* Single producer: the free count just read cannot shrink before this enqueue. */
	rf_ring_enqueue_burst(h->in, &obj, 1, NULL);
	rf_runtime_wake(h->rt, h->poller); /* if it sleeps (adaptive idle) */
	rf_counter_add(&cnt->rx, 1);
	return true;
}

/* The session of slot id just came up: an older open connection with the same datapath id is
 * closed as superseded (its close leaves the switch's state to the new connection). */
static void take_over_dpid(struct ctl_io *io, uint32_t id)
{
	uint64_t dpid = io->slots[id].s.datapath_id;
	for (uint32_t k = 0; k < CTL_MAX_CONNS; k++) {
		struct slot *o = &io->slots[k];
		if (k != id && o->open && o->s.state == OF_SESSION_UP && o->s.datapath_id == dpid) {
			o->superseded = true;
			drop_conn(io, k);
		}
	}
}

/* Runs the session over what the connection has received; false when it must be closed.
 * A push-back leaves the slot marked, to be run again once replies have freed buffers. */
static bool run_session(struct ctl_io *io, uint32_t id)
{
	struct slot *sl = &io->slots[id];
	size_t room;
	uint8_t *q = ofb_conn_reserve(&sl->c, OF_MAX_MSG_LEN, &room);
	if (!q) {
		sl->backlog = io->any_backlog = true; /* the switch is not reading its replies */
		return true;
	}
	struct of_out out = {.p = q, .cap = room, .len = 0};
	struct fwd fw = {.io = io, .id = id};
	bool close;
	bool was_up = sl->s.state == OF_SESSION_UP;
	sl->c.rx_off += of_session_input(&sl->s, sl->c.rx + sl->c.rx_off,
					 sl->c.rx_len - sl->c.rx_off, forward, &fw, &out, &close);
	if (!was_up && sl->s.state == OF_SESSION_UP)
		take_over_dpid(io, id);
	ofb_conn_commit(&sl->c, out.len);
	sl->backlog = fw.pushed_back;
	io->any_backlog |= sl->backlog;
	return ofb_conn_flush(&sl->c) == 0 && !close;
}

/* Replies from the handlers: appended to their connections, buffers back to the pool. */
static unsigned collect(struct ctl_io *io)
{
	unsigned total = 0;
	struct rf_core_counters *cnt = rf_poller_counters(io->poller);
	for (unsigned k = 0; k < io->nh; k++) {
		void *bufs[32];
		unsigned n = rf_ring_dequeue_burst(io->h[k].out, bufs, 32, NULL);
		for (unsigned i = 0; i < n; i++) {
			struct ctl_buf *b = bufs[i];
			if (b->t_ns)
				ctl_apps_latency(io->apps, ctl_now_ns() - b->t_ns);
			struct slot *sl = &io->slots[b->conn];
			size_t room;
			uint8_t *q;
			if (b->len && sl->open && sl->gen == b->gen &&
			    (q = ofb_conn_reserve(&sl->c, b->len, &room)) != NULL) {
				memcpy(q, b->data, b->len);
				ofb_conn_commit(&sl->c, b->len);
				rf_counter_add(&cnt->tx, 1);
			} else if (b->len) {
				rf_counter_add(&cnt->drop_driver, 1); /* gone, or not reading */
			}
		}
		if (n)
			rf_mempool_put_bulk(io->pool, bufs, n);
		total += n;
	}
	return total;
}

/* The apps' timer (ctl_app.h): once per connected switch, its out going to the switch. */
static unsigned apps_timer(struct ctl_io *io)
{
	uint64_t now = ctl_now_ms();
	unsigned n = 0;
	uint64_t want;
	if (ctl_flows_pending(ctl_apps_flows(io->apps), &want)) /* GET /api/flows/{dpid} */
		for (uint32_t id = 0; id < CTL_MAX_CONNS; id++) {
			struct slot *sl = &io->slots[id];
			size_t room;
			uint8_t *q;
			if (sl->open && sl->s.state == OF_SESSION_UP && sl->s.datapath_id == want &&
			    (q = ofb_conn_reserve(&sl->c, 256, &room))) {
				struct of_out out = {.p = q, .cap = room, .len = 0};
				ctl_flows_send(ctl_apps_flows(io->apps), &sl->s, &out);
				ofb_conn_commit(&sl->c, out.len);
				n++;
				break;
			}
		}
	if (!ctl_apps_timer_due(io->apps, now))
		return n;
	for (uint32_t id = 0; id < CTL_MAX_CONNS; id++) {
		struct slot *sl = &io->slots[id];
		size_t room;
		uint8_t *q;
		if (!sl->open || sl->s.state != OF_SESSION_UP ||
		    !(q = ofb_conn_reserve(&sl->c, OF_MAX_MSG_LEN, &room)))
			continue;
		struct of_out out = {.p = q, .cap = room, .len = 0};
		ctl_apps_timer_switch(io->apps, sl->s.datapath_id, now, &out);
		ofb_conn_commit(&sl->c, out.len);
		n++;
	}
	ctl_apps_timer_done(io->apps, now);
	return n + 1;
}

unsigned ctl_io_poll(struct rf_poller *p, void *arg)
{
	struct ctl_io *io = arg;
	io->poller = p;
	struct epoll_event ev[64];
	int n = epoll_wait(io->ep, ev, 64, 0);
	for (int i = 0; i < n; i++) {
		uint32_t id = ev[i].data.u32;
		if (id == LISTEN_ID)
			accept_one(io);
		else if (io->slots[id].open && !io->slots[id].backlog &&
			 (ofb_conn_read(&io->slots[id].c) < 0 || !run_session(io, id)))
			drop_conn(io, id);
	}
	unsigned work = (unsigned)(n > 0 ? n : 0) + collect(io);
	if (io->apps)
		work += apps_timer(io); /* its bytes go out in the flush below */
	if (io->any_backlog) { /* buffers came back: offer the waiting messages again */
		io->any_backlog = false;
		/* Start one slot further each time, so no switch always comes last. */
		io->scan_start = (io->scan_start + 1) % CTL_MAX_CONNS;
		for (uint32_t k = 0; k < CTL_MAX_CONNS; k++) {
			uint32_t id = (io->scan_start + k) % CTL_MAX_CONNS;
			if (io->slots[id].open && io->slots[id].backlog && !run_session(io, id))
				drop_conn(io, id);
		}
	}
	for (uint32_t id = 0; id < CTL_MAX_CONNS && work; id++) {
		struct slot *sl = &io->slots[id];
		if (sl->open && ofb_conn_pending(&sl->c) && ofb_conn_flush(&sl->c) < 0)
			drop_conn(io, id);
	}
	return work;
}
