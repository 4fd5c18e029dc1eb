/*
 * io/sock_tcp.c: the TCP sockets driver, "tcp:listen=IP:PORT" or "tcp:connect=IP:PORT".
 *
 * TCP is a byte stream, so each message travels as a 2-byte big-endian length and then that
 * many bytes (seed 002's framing; at most 65535 bytes a message). Per connection the driver
 * keeps a reassembly buffer (bytes read but not yet a whole message: reads may split or
 * join messages anywhere) and a pending-output buffer (bytes a non-blocking send() did not
 * take yet; flushed when epoll says the socket is writable).
 *
 * Each queue owns an epoll set (its wait fd) holding its listening socket (listen mode,
 * SO_REUSEPORT across queues) and its connections, so a queue is one poller's business
 * only. A message's `flow` names its connection: ((generation << 32) | (slot << 8) | queue),
 * never 0; a reply goes out on the queue it came in on. In connect mode each queue makes
 * one connection at open (the handshake is waited for, so "connection refused" is an open
 * error), and flow 0 in tx_burst means "this queue's connection".
 *
 * A connection whose peer closed is kept until what the app sends in reply has been
 * flushed (an echo's last answers are not lost), then closed at the next rx_burst.
 *
 * Framings (prefix16, inline16), bad frames, the jumbo pool and connection events (`events=1`)
 * are the stream layer's (stream_pvt.h), shared with uring:tcp. The app may close a
 * connection itself (RF_PKTBUF_F_CLOSE / RF_PKTBUF_F_ABORT on a tx buffer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"
#include "sock_pvt.h"
#include "stream_pvt.h"

#define TCP_RBUF (128u * 1024) /* > 2 + 65535: always room for one whole message */
#define TCP_WBUF (256u * 1024) /* pending output per connection */
#define TCP_EVENTS 64
#define TCP_DRIVER_KEYS RF_SOCK_TCP_KEYS "," RF_STREAM_KEYS

struct tcp_conn {
	int fd;             /* -1: free slot */
	uint32_t gen;
	bool eof;           /* peer closed its side: close once output is flushed */
	bool want_out;      /* EPOLLOUT registered */
	bool pending;       /* on the queue's pending list (whole messages buffered) */
	bool touched;       /* on the queue's touched list (tx_burst flushes it) */
	bool up_owed;       /* events: the CONN_UP buffer is still to be handed over */
	uint32_t roff, rlen; /* reassembly: unread bytes are rbuf[roff..rlen) */
	uint32_t woff, wlen; /* pending output: wbuf[woff..wlen) */
	uint8_t *rbuf, *wbuf;
	union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } peer;
	socklen_t peer_len;
};

struct tcp_queue {
	RF_CACHE_ALIGNED struct rf_io_qstats st; /* written by this queue's thread only */
	int epfd, lfd;       /* lfd -1 in connect mode */
	unsigned qidx;
	uint32_t next_gen;
	unsigned nconns, max_conns, neof;
	struct tcp_conn *conns; /* max_conns slots */
	unsigned *pending;      /* slots with whole messages buffered (a stack) */
	unsigned npending;
	unsigned *touched;      /* slots written to in this tx_burst */
	unsigned ntouched;
	unsigned default_slot;  /* connect mode: the queue's connection */
	struct rf_stream_downs downs; /* events: flows closed whose CONN_DOWN is owed */
};

struct tcp_dev {
	bool connect, nodelay;
	struct rf_stream_cfg sc;
	unsigned nq;
	struct tcp_queue q[];
};

static int tcp_probe(char *why, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "cannot create a TCP socket: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	return 0;
}

static uint64_t conn_flow(const struct tcp_queue *q, unsigned slot)
{
	return ((uint64_t)q->conns[slot].gen << 32) | ((uint64_t)slot << 8) | q->qidx;
}

/* Put slot on the pending list (it holds work beyond this burst), once. */
static void mark_pending(struct tcp_queue *q, unsigned slot)
{
	if (!q->conns[slot].pending) {
		q->conns[slot].pending = true;
		q->pending[q->npending++] = slot;
	}
}

static void conn_close(struct tcp_queue *q, unsigned slot)
{
	struct tcp_conn *c = &q->conns[slot];
	if (c->fd < 0)
		return;
	close(c->fd); /* also removes it from the epoll set */
	if (c->roff < c->rlen)
		rf_stat_add(&q->st.rx_drops, 1); /* a message cut short by the close */
	free(c->rbuf);
	free(c->wbuf);
	if (c->eof)
		q->neof--;
	for (unsigned i = 0; c->pending && i < q->npending; i++)
		if (q->pending[i] == slot) {
			q->pending[i] = q->pending[--q->npending];
			break;
		}
	if (q->downs.flow && !c->up_owed && /* the app knew this connection: tell it it is gone */
	    !rf_stream_downs_push(&q->downs, conn_flow(q, slot)))
		rf_stat_add(&q->st.rx_drops, 1); /* cannot happen: cap covers every open conn */
	*c = (struct tcp_conn){.fd = -1};
	q->nconns--;
	rf_stat_add(&q->st.conns_open, (uint64_t)-1);
}

/* Take fd as a new connection of q. Returns the slot, or -1 (fd closed). */
static int conn_add(struct tcp_queue *q, int fd, const struct sockaddr *peer, socklen_t plen)
{
	unsigned slot = 0;
	while (slot < q->max_conns && q->conns[slot].fd >= 0)
		slot++;
	struct tcp_conn *c = &q->conns[slot < q->max_conns ? slot : 0];
	if (slot == q->max_conns || !(c->rbuf = malloc(TCP_RBUF)) || !(c->wbuf = malloc(TCP_WBUF))) {
		if (slot < q->max_conns) {
			free(c->rbuf);
			c->rbuf = NULL;
		}
		close(fd);
		rf_stat_add(&q->st.rx_drops, 1); /* a connection we could not take */
		return -1;
	}
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = slot + 1};
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		free(c->rbuf);
		free(c->wbuf);
		c->rbuf = c->wbuf = NULL;
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->up_owed = q->downs.flow != NULL;
	c->gen = q->next_gen++; /* starts at 1 and skips 0, so a flow is never 0 */
	if (q->next_gen == 0)
		q->next_gen = 1;
	memcpy(&c->peer, peer, plen < sizeof(c->peer) ? plen : sizeof(c->peer));
	c->peer_len = plen;
	if (c->up_owed) /* handed over by the next rx_burst, before any message */
		mark_pending(q, slot);
	q->nconns++;
	rf_stat_add(&q->st.conns_open, 1);
	rf_stat_add(&q->st.conns_total, 1);
	return (int)slot;
}

static void tcp_close_priv(struct tcp_dev *t)
{
	for (unsigned i = 0; i < t->nq; i++) {
		struct tcp_queue *q = &t->q[i];
		for (unsigned s = 0; q->conns && s < q->max_conns; s++)
			conn_close(q, s);
		if (q->lfd >= 0)
			close(q->lfd);
		if (q->epfd >= 0)
			close(q->epfd);
		free(q->conns);
		free(q->pending);
		free(q->touched);
		rf_stream_downs_free(&q->downs);
	}
	free(t);
}

static int tcp_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	struct rf_sock_opts o;
	int rc = rf_sock_opts_parse(cfg, &o, err, len);
	if (rc)
		return rc;
	struct rf_stream_cfg sc;
	if ((rc = rf_stream_cfg_parse(cfg, "tcp", &sc, err, len)))
		return rc;
	size_t sz = sizeof(struct tcp_dev) + dev->nqueues * sizeof(struct tcp_queue);
	struct tcp_dev *t = aligned_alloc(RF_CACHE_LINE, (sz + RF_CACHE_LINE - 1) & ~(size_t)(RF_CACHE_LINE - 1));
	if (!t)
		return rf_io_err(err, len, "tcp: out of memory"), -ENOMEM;
	memset(t, 0, sz);
	t->connect = o.connect;
	t->nodelay = o.nodelay;
	t->sc = sc;
	t->nq = dev->nqueues;
	unsigned maxc = o.connect ? 1 : o.max_conns;
	for (unsigned i = 0; i < t->nq; i++) {
		struct tcp_queue *q = &t->q[i];
		q->epfd = q->lfd = -1;
		q->qidx = i;
		q->next_gen = 1;
		q->max_conns = maxc;
		q->conns = malloc(maxc * sizeof(*q->conns));
		q->pending = malloc(maxc * sizeof(*q->pending));
		q->touched = malloc(maxc * sizeof(*q->touched));
		/* Each pending CONN_DOWN names a connection whose CONN_UP was handed over, and
		 * at most max_conns more can open and close before the next rx_burst drains them. */
		if (sc.events && rf_stream_downs_init(&q->downs, 2 * maxc + 1))
			errno = ENOMEM;
		if (q->conns)
			for (unsigned s = 0; s < maxc; s++)
				q->conns[s] = (struct tcp_conn){.fd = -1};
		q->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (!q->conns || !q->pending || !q->touched || (sc.events && !q->downs.flow) || q->epfd < 0) {
			rc = -(errno ? errno : ENOMEM);
			rf_io_err(err, len, "tcp: cannot set up queue %u: %s", i, strerror(-rc));
			goto fail;
		}
	}
	for (unsigned i = 0; i < t->nq; i++) {
		struct tcp_queue *q = &t->q[i];
		int fd = rf_sock_open(&o, SOCK_STREAM, t->nq > 1 && !o.connect, err, len);
		if (fd < 0) {
			rc = fd;
			goto fail;
		}
		if (o.connect) {
			int slot = conn_add(q, fd, (const struct sockaddr *)&o.addr, o.alen);
			if (slot < 0) {
				rc = -ENOMEM;
				rf_io_err(err, len, "tcp: cannot set up the connection to %s", o.addr_str);
				goto fail;
			}
			q->default_slot = (unsigned)slot;
		} else {
			q->lfd = fd;
			struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
			if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
				rc = -errno;
				rf_io_err(err, len, "tcp: epoll_ctl: %s", strerror(errno));
				goto fail;
			}
		}
	}
	dev->priv = t;
	return 0;
fail:
	tcp_close_priv(t);
	return rc;
}

static void tcp_close(struct rf_io_dev *dev)
{
	tcp_close_priv(dev->priv);
}

static void accept_all(struct tcp_dev *t, struct tcp_queue *q)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(q->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or a connection that died before accept */
		int one = 1;
		if (t->nodelay)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		conn_add(q, fd, (struct sockaddr *)&ss, sl);
	}
}

static void set_out_interest(struct tcp_queue *q, unsigned slot, bool on)
{
	struct tcp_conn *c = &q->conns[slot];
	if (c->want_out == on)
		return;
	struct epoll_event ev = {.events = (c->eof ? 0u : (EPOLLIN | EPOLLRDHUP)) | (on ? EPOLLOUT : 0u),
				 .data.u64 = slot + 1};
	if (epoll_ctl(q->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->want_out = on;
}

/* Send pending output. Returns false when the connection died (and was closed). */
static bool conn_flush(struct tcp_queue *q, unsigned slot)
{
	struct tcp_conn *c = &q->conns[slot];
	while (c->woff < c->wlen) {
		ssize_t w = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			c->woff += (uint32_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			set_out_interest(q, slot, true);
			return true;
		}
		rf_stat_add(&q->st.tx_drops, 1); /* peer gone with output pending */
		conn_close(q, slot);
		return false;
	}
	c->woff = c->wlen = 0;
	set_out_interest(q, slot, false);
	return true;
}

/* Read what the socket has into the reassembly buffer. */
static void conn_read(struct tcp_queue *q, unsigned slot)
{
	struct tcp_conn *c = &q->conns[slot];
	if (c->roff > 0) {
		memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
		c->rlen -= c->roff;
		c->roff = 0;
	}
	while (c->rlen < TCP_RBUF) {
		size_t room = TCP_RBUF - c->rlen;
		ssize_t r = recv(c->fd, c->rbuf + c->rlen, room, MSG_DONTWAIT);
		if (r > 0) {
			c->rlen += (uint32_t)r;
			if ((size_t)r < room)
				return; /* drained: spare the EAGAIN call (epoll is level-triggered) */
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r == 0 && !c->eof) {
			/* Peer closed: no more input; keep the connection for our replies. */
			c->eof = true;
			q->neof++;
			struct epoll_event ev = {.events = c->want_out ? EPOLLOUT : 0u,
						 .data.u64 = slot + 1};
			epoll_ctl(q->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		if (r == 0)
			return;
		if (!c->eof) { /* reset: drop it at the next rx_burst, after its whole messages */
			c->eof = true;
			q->neof++;
		}
		c->woff = c->wlen = 0;
		return;
	}
}

/* The frame at the front of a connection's input (the stream layer's rule). */
static bool next_frame(const struct tcp_dev *t, const struct tcp_conn *c, struct rf_stream_frame *f)
{
	return rf_stream_next_frame(&t->sc, c->rbuf + c->roff, c->rlen - c->roff, f);
}

/* Something to hand over: a CONN_UP still owed or a whole frame. */
static bool conn_has_work(const struct tcp_dev *t, const struct tcp_conn *c)
{
	struct rf_stream_frame f;
	return c->up_owed || next_frame(t, c, &f);
}

/* No more input from this connection (what is unread is dropped); it is closed once the
 * output queued so far is sent (rx_burst's first loop). */
static void conn_stop_reading(struct tcp_queue *q, unsigned slot)
{
	struct tcp_conn *c = &q->conns[slot];
	c->roff = c->rlen = 0;
	if (c->eof)
		return;
	c->eof = true;
	q->neof++;
	struct epoll_event ev = {.events = c->want_out ? EPOLLOUT : 0u, .data.u64 = slot + 1};
	epoll_ctl(q->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void set_origin(struct rf_pktbuf *b, const struct tcp_queue *q, unsigned slot)
{
	const struct tcp_conn *c = &q->conns[slot];
	b->flow = conn_flow(q, slot);
	b->queue = (uint16_t)q->qidx;
	memcpy(&b->peer, &c->peer, sizeof(b->peer));
	b->peer_len = (uint32_t)c->peer_len;
}

/* What rx_burst hands over: buffers in pkts[got..n), how many of them are messages (the
 * rest are events and bad frames) and their bytes. */
struct rx_out {
	struct rf_pktbuf **pkts;
	unsigned got, n, msgs;
	uint64_t bytes;
};

/* Hand slot's CONN_UP (if owed) and whole frames to o. Returns false when the pool ran dry. */
static bool conn_extract(struct rf_io_dev *dev, struct tcp_dev *t, struct tcp_queue *q,
			 unsigned slot, struct rx_out *o)
{
	struct tcp_conn *c = &q->conns[slot];
	struct rf_stream_frame f;
	if (c->up_owed && o->got < o->n) {
		struct rf_pktbuf *b = rf_stream_event(dev, RF_PKTBUF_F_CONN_UP, conn_flow(q, slot),
						      q->qidx, &c->peer, (uint32_t)c->peer_len);
		if (!b) {
			rf_stat_add(&q->st.rx_nobuf, 1);
			return false;
		}
		c->up_owed = false;
		o->pkts[o->got++] = b;
	}
	while (!c->up_owed && o->got < o->n && next_frame(t, c, &f)) {
		struct rf_pktbuf *b;
		enum rf_stream_take r = rf_stream_take(dev, &f, c->rbuf + c->roff, &b);
		if (r == RF_STREAM_NOBUF) {
			rf_stat_add(&q->st.rx_nobuf, 1);
			return false;
		}
		c->roff += f.consume;
		if (r == RF_STREAM_DROPPED) {
			rf_stat_add(&q->st.rx_drops, 1);
			continue;
		}
		set_origin(b, q, slot);
		if (f.bad) {
			rf_stat_add(&q->st.rx_drops, 1);
			conn_stop_reading(q, slot);
		} else {
			o->msgs++;
			o->bytes += f.len;
		}
		o->pkts[o->got++] = b;
	}
	if (conn_has_work(t, c))
		mark_pending(q, slot);
	return true;
}

/* Hand over what the connections on the pending list hold, up to o->n. Returns false when
 * the pool ran dry (the connection stays on the list). */
static bool drain_pending(struct rf_io_dev *dev, struct tcp_dev *t, struct tcp_queue *q,
			  struct rx_out *o)
{
	while (q->npending && o->got < o->n) {
		unsigned s = q->pending[--q->npending];
		q->conns[s].pending = false;
		if (q->conns[s].fd >= 0 && !conn_extract(dev, t, q, s, o)) {
			mark_pending(q, s);
			return false;
		}
	}
	return true;
}

/* events: CONN_DOWN buffers for the connections closed since the last call, oldest first.
 * True when none is owed any more. */
static bool hand_over_downs(struct rf_io_dev *dev, struct tcp_queue *q, struct rx_out *o)
{
	bool nobuf;
	o->got += rf_stream_downs_hand_over(dev, &q->downs, q->qidx, o->pkts + o->got,
					    o->n - o->got, &nobuf);
	if (nobuf)
		rf_stat_add(&q->st.rx_nobuf, 1);
	return q->downs.n == 0;
}

static unsigned tcp_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct tcp_dev *t = dev->priv;
	struct tcp_queue *q = &t->q[queue];
	struct rx_out o = {.pkts = pkts, .n = n};

	/* Connections whose peer closed and whose replies are flushed: close them now. */
	for (unsigned s = 0; q->neof && s < q->max_conns; s++) {
		struct tcp_conn *c = &q->conns[s];
		if (c->fd >= 0 && c->eof && c->woff == c->wlen && !conn_has_work(t, c))
			conn_close(q, s);
	}
	if (q->downs.n && !hand_over_downs(dev, q, &o))
		goto out;
	/* Whole messages left from an earlier call (more than n arrived at once). */
	if (!drain_pending(dev, t, q, &o) || o.got == o.n)
		goto out;

	struct epoll_event evs[TCP_EVENTS];
	int ne = epoll_wait(q->epfd, evs, TCP_EVENTS, 0);
	for (int i = 0; i < ne; i++) {
		if (evs[i].data.u64 == 0) {
			accept_all(t, q);
			continue;
		}
		unsigned s = (unsigned)(evs[i].data.u64 - 1);
		struct tcp_conn *c = &q->conns[s];
		if (c->fd < 0)
			continue;
		if ((evs[i].events & EPOLLOUT) && !conn_flush(q, s))
			continue;
		if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
			if (!c->eof)
				conn_read(q, s);
			if (o.got < o.n) {
				if (!conn_extract(dev, t, q, s, &o))
					o.n = o.got; /* pool dry: the rest stays buffered, marked pending */
			} else if (conn_has_work(t, c)) {
				mark_pending(q, s);
			}
		}
	}
	/* Connections accepted just now owe their CONN_UP (they are on the pending list). */
	drain_pending(dev, t, q, &o);
out:
	rf_stat_add(&q->st.rx_pkts, o.msgs);
	rf_stat_add(&q->st.rx_bytes, o.bytes);
	return o.got;
}

/* The slot a message's flow names on this queue, or -1. */
static int flow_slot(struct tcp_dev *t, struct tcp_queue *q, uint64_t flow)
{
	if (flow == 0)
		return t->connect && q->conns[q->default_slot].fd >= 0 ? (int)q->default_slot : -1;
	unsigned s = (unsigned)(flow >> 8) & 0xffffffu;
	if ((flow & 0xff) != q->qidx || s >= q->max_conns || q->conns[s].fd < 0 ||
	    q->conns[s].gen != (uint32_t)(flow >> 32))
		return -1;
	return (int)s;
}

/* Append b's data (framed) to c's pending output. False when it does not fit even after a
 * flush (the peer is not reading); *dead when the connection died in that flush. */
static bool conn_append(struct tcp_dev *t, struct tcp_queue *q, unsigned s,
			const struct rf_pktbuf *b, bool *dead)
{
	struct tcp_conn *c = &q->conns[s];
	uint32_t hdr = rf_stream_hdr_len(&t->sc);
	uint32_t need = hdr + b->data_len;
	*dead = false;
	if (c->wlen + need > TCP_WBUF && c->woff > 0) {
		memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
		c->wlen -= c->woff;
		c->woff = 0;
	}
	if (c->wlen + need > TCP_WBUF) {
		if (!conn_flush(q, s)) {
			*dead = true;
			return true;
		}
		if (c->wlen + need > TCP_WBUF)
			return false;
	}
	rf_stream_put_hdr(&t->sc, c->wbuf + c->wlen, b->data_len);
	memcpy(c->wbuf + c->wlen + hdr, rf_pktbuf_data(b), b->data_len);
	if (!c->touched && !c->want_out) {
		c->touched = true; /* flushed once in tx_burst; EPOLLOUT flushes the others */
		q->touched[q->ntouched++] = s;
	}
	c->wlen += need;
	return true;
}

static unsigned tcp_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct tcp_dev *t = dev->priv;
	struct tcp_queue *q = &t->q[queue];
	unsigned done = 0, sent = 0, drops = 0;
	bool closing = false;
	uint32_t limit = rf_stream_tx_max(&t->sc, TCP_WBUF);
	uint64_t bytes = 0;
	q->ntouched = 0;
	for (; done < n; done++) {
		struct rf_pktbuf *b = pkts[done];
		int s = flow_slot(t, q, b->flow);
		if (s < 0 || b->data_len > limit) {
			drops++; /* connection gone (or never ours), or too long to frame */
			continue;
		}
		struct tcp_conn *c = &q->conns[s];
		if (b->flags & RF_PKTBUF_F_ABORT) { /* now, whatever is still unsent */
			drops += c->woff < c->wlen;
			conn_close(q, (unsigned)s);
			continue;
		}
		bool close = b->flags & RF_PKTBUF_F_CLOSE, dead;
		if (rf_stream_tx_writes(&t->sc, b)) {
			if (!conn_append(t, q, (unsigned)s, b, &dead))
				break; /* the peer is not reading: the caller keeps the rest */
			if (dead) {
				drops++;
				continue;
			}
			bytes += b->data_len;
			sent++;
		}
		if (close) {
			conn_stop_reading(q, (unsigned)s);
			closing = true;
		}
	}
	/* One send() per connection for the whole burst. */
	for (unsigned i = 0; i < q->ntouched; i++) {
		unsigned s = q->touched[i];
		q->conns[s].touched = false;
		if (q->conns[s].fd >= 0)
			conn_flush(q, s);
	}
	/* Closed at the app's request: at once when all is sent, else at the rx_burst after EPOLLOUT flushed it. */
	for (unsigned s = 0; closing && s < q->max_conns; s++) {
		struct tcp_conn *c = &q->conns[s];
		if (c->fd >= 0 && c->eof && c->woff == c->wlen && !conn_has_work(t, c))
			conn_close(q, s);
	}
	rf_pktbuf_free_bulk(pkts, done);
	rf_stat_add(&q->st.tx_pkts, sent);
	rf_stat_add(&q->st.tx_bytes, bytes);
	if (drops)
		rf_stat_add(&q->st.tx_drops, drops);
	return done;
}

static int tcp_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	struct tcp_dev *t = dev->priv;
	return t->q[queue].epfd;
}

static void tcp_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct tcp_dev *t = dev->priv;
	for (unsigned i = 0; i < t->nq; i++)
		rf_io_qstats_sum(&t->q[i].st, st);
}

static void tcp_queue_stats(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	struct tcp_dev *t = dev->priv;
	rf_io_qstats_sum(&t->q[queue].st, st);
}

const struct rf_io_ops rf_io_tcp_ops = {
	RF_IO_OPS_ABI,
	.name = "tcp",
	.usage = "tcp:listen=IP:PORT[,max_conns=N] | tcp:connect=IP:PORT[,bind=IP:PORT,timeout_ms=MS] "
		 "[,nodelay=0|1,busy_poll=US,rcvbuf=B,sndbuf=B,queues=N,framing=prefix16|inline16,"
		 "frame_off=N,frame_min=N,events=0|1]  e.g. tcp:listen=0.0.0.0:9000",
	.keys = TCP_DRIVER_KEYS,
	.max_queues = RF_IO_MAX_QUEUES,
	.probe = tcp_probe,
	.open = tcp_open,
	.rx_burst = tcp_rx_burst,
	.tx_burst = tcp_tx_burst,
	.wait_fd = tcp_wait_fd,
	.stats = tcp_stats,
	.queue_stats = tcp_queue_stats,
	.close = tcp_close,
};
