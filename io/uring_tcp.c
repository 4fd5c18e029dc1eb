/*
 * io/uring_tcp.c: uring:tcp, the stream half of the io_uring driver (uring.c has the ring).
 *
 * The same sockets, keys and stream layer as the tcp driver (rf_sock_open, stream_pvt.h:
 * framings, bad frames, jumbo buffers, connection events; connect waits timeout_ms for the
 * handshake); only the I/O differs. Each connection has one multishot recv into provided
 * buffers of the ring (d->tcpmem); the bytes are copied into the connection's reassembly
 * buffer and cut into messages by rx_burst. tx_burst frames messages into the connection's
 * output buffer and sends it with one send SQE per connection (one in flight at a time).
 *
 * A connection whose peer closed (or that the app closed with RF_PKTBUF_F_CLOSE, or that sent
 * a bad frame) reads no more; it is closed once its input is handed over and its output
 * sent. Closing with requests in flight shuts the socket down and closes the fd at the last
 * completion, so the kernel never writes into a reused slot. A message's flow is
 * (generation << 32) | (slot << 8) | queue (queue 0: one queue), never 0, as the tcp driver's;
 * in connect mode flow 0 means "the connection".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "io_pvt.h"
#include "sock_pvt.h"
#include "uring_pvt.h"

static uint64_t conn_flow(const struct ur_dev *d, unsigned slot)
{
	return (uint64_t)d->conns[slot].gen << 32 | (uint64_t)slot << 8;
}

void ur_br_give_back_tcp(struct ur_dev *d, uint16_t bid)
{
	io_uring_buf_ring_add(d->br, d->tcpmem + (size_t)bid * UR_TCP_BUF, UR_TCP_BUF, bid,
			      io_uring_buf_ring_mask(d->nbufs), 0);
	io_uring_buf_ring_advance(d->br, 1);
}

static int arm_tcp_recv(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (!sqe)
		return -EBUSY;
	if (d->multishot)
		io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
	else
		io_uring_prep_recv(sqe, c->fd, NULL, UR_TCP_BUF, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
	io_uring_sqe_set_data64(sqe, ud(UR_TRECV, c->gen, slot));
	c->recv_armed = true;
	return 0;
}

static int arm_accept(struct ur_dev *d)
{
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (!sqe)
		return -EBUSY;
	if (d->multishot)
		io_uring_prep_multishot_accept(sqe, d->fd, NULL, NULL, SOCK_CLOEXEC);
	else
		io_uring_prep_accept(sqe, d->fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, ud(UR_ACCEPT, 0, 0));
	d->accept_armed = true;
	return 0;
}

/* Gives back the provided buffers a connection still holds (not copied in). */
static void drop_pend(struct ur_dev *d, struct ur_conn *c)
{
	while (c->npend) {
		ur_br_give_back_tcp(d, (uint16_t)(c->pend[c->pend_head] >> 16));
		c->pend_head = (c->pend_head + 1) % d->nbufs;
		c->npend--;
	}
	c->pend_head = 0;
}

/* The fd goes once no request refers to it any more (else: shut down, the last one closes). */
static void conn_finish(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	if (c->recv_armed || c->send_inflight) {
		shutdown(c->fd, SHUT_RDWR); /* makes them complete */
		return;
	}
	drop_pend(d, c);
	close(c->fd);
	c->fd = -1;
	c->gen++;
	if (c->gen == 0)
		c->gen = 1;
	c->in_head = c->in_tail = 0;
	c->out_head = c->out_tail = c->out_sending = 0;
	c->closing = c->eof = c->up_owed = false;
	d->nconns--;
	ur_stat_add(&d->conns_open, (uint64_t)-1);
}

/* Closes slot: the app is told (CONN_DOWN) when it knew the connection. */
static void conn_close(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	if (c->fd < 0 || c->closing)
		return;
	if (c->in_head < c->in_tail)
		ur_stat_add(&d->rx_drops, 1); /* a message cut short by the close */
	if (d->downs.flow && !c->up_owed && !rf_stream_downs_push(&d->downs, conn_flow(d, slot)))
		ur_stat_add(&d->rx_drops, 1); /* cannot happen: cap covers every open conn */
	c->closing = c->eof = true;
	conn_finish(d, slot);
}

/* No more input from this connection (what is unread is dropped). */
static void conn_stop_reading(struct ur_dev *d, struct ur_conn *c)
{
	c->in_head = c->in_tail = 0;
	drop_pend(d, c);
	c->eof = true;
}

static int conn_add(struct ur_dev *d, int fd)
{
	for (unsigned i = 0; i < d->max_conns; i++) {
		struct ur_conn *c = &d->conns[i];
		if (c->fd >= 0 || (c->in == NULL && (c->in = malloc(UR_TCP_IN_CAP)) == NULL) ||
		    (c->out == NULL && (c->out = malloc(UR_TCP_OUT_CAP)) == NULL) ||
		    (c->pend == NULL && (c->pend = calloc(d->nbufs, sizeof(*c->pend))) == NULL))
			continue;
		c->pend_head = c->npend = 0;
		c->fd = fd;
		c->recv_armed = c->send_inflight = c->closing = c->eof = c->touched = false;
		c->up_owed = d->sc.events; /* handed over by the next rx_burst, before any message */
		c->peer_len = sizeof(c->peer);
		if (getpeername(fd, (struct sockaddr *)&c->peer, &c->peer_len) != 0)
			c->peer_len = 0;
		d->nconns++;
		if (i >= d->conns_hi)
			d->conns_hi = i + 1;
		ur_stat_add(&d->conns_open, 1);
		ur_stat_add(&d->conns_total, 1);
		return (int)i;
	}
	return -ENOSPC;
}

int ur_tcp_open(struct ur_dev *d, const struct rf_io_config *cfg, char *err, size_t len)
{
	struct rf_sock_opts o;
	int rc;
	if ((rc = rf_sock_opts_parse(cfg, &o, err, len)) ||
	    (rc = rf_stream_cfg_parse(cfg, "uring", &d->sc, err, len)))
		return rc;
	d->listen = !o.connect;
	d->max_conns = o.connect ? 1 : o.max_conns;
	d->conns = calloc(d->max_conns, sizeof(*d->conns));
	d->touched = calloc(d->max_conns, sizeof(*d->touched));
	if (!d->conns || !d->touched ||
	    (d->sc.events && rf_stream_downs_init(&d->downs, 2 * d->max_conns + 1)))
		return rf_io_err(err, len, "uring: out of memory for %u connections", d->max_conns),
		       -ENOMEM;
	for (unsigned i = 0; i < d->max_conns; i++)
		d->conns[i] = (struct ur_conn){.fd = -1, .gen = 1};
	int fd = rf_sock_open(&o, SOCK_STREAM, false, err, len);
	if (fd < 0)
		return fd;
	if (d->listen) {
		d->fd = fd;
		return 0;
	}
	if (conn_add(d, fd) < 0) {
		close(fd);
		return rf_io_err(err, len, "uring: out of memory for the connection"), -ENOMEM;
	}
	return 0;
}

void ur_tcp_start(struct ur_dev *d)
{
	if (d->listen)
		arm_accept(d);
	else
		arm_tcp_recv(d, 0);
}

void ur_tcp_rearm(struct ur_dev *d)
{
	if (d->listen && !d->accept_armed && d->nconns < d->max_conns)
		arm_accept(d);
}

void ur_accept_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		d->accept_armed = false;
	if (cqe->res >= 0) {
		int slot = conn_add(d, cqe->res);
		if (slot < 0) {
			close(cqe->res); /* table full: refuse the connection */
			ur_stat_add(&d->rx_drops, 1);
			return;
		}
		int one = 1; /* as rf_sock_open sets it for the tcp driver */
		setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		arm_tcp_recv(d, (unsigned)slot);
	} else if (cqe->res == -EINVAL && d->multishot) {
		d->multishot = false;
		ur_say_once_single_shot("the kernel rejected multishot accept");
	}
}

/* Appends n stream bytes to the reassembly buffer; false (nothing copied) when they do not fit
 * yet: the app has not taken enough messages out. */
static bool in_append(struct ur_conn *c, const uint8_t *src, uint32_t n)
{
	if (c->in_head && c->in_tail + n > UR_TCP_IN_CAP) {
		memmove(c->in, c->in + c->in_head, c->in_tail - c->in_head);
		c->in_tail -= c->in_head;
		c->in_head = 0;
	}
	if (c->in_tail + n > UR_TCP_IN_CAP)
		return false;
	memcpy(c->in + c->in_tail, src, n);
	c->in_tail += n;
	return true;
}

static bool frame_ready(const struct ur_dev *d, const struct ur_conn *c)
{
	struct rf_stream_frame f;
	return rf_stream_next_frame(&d->sc, c->in + c->in_head, c->in_tail - c->in_head, &f);
}

/* Something to hand over: a CONN_UP owed, a whole frame, or bytes not copied in yet. */
static bool conn_has_work(const struct ur_dev *d, const struct ur_conn *c)
{
	return c->up_owed || c->npend || frame_ready(d, c);
}

/* eof, output sent, input handed over: close it now. */
static void close_if_done(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	if (c->fd >= 0 && c->eof && !c->closing && !c->send_inflight &&
	    c->out_head == c->out_tail && !conn_has_work(d, c))
		conn_close(d, slot);
}

void ur_tcp_recv_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	unsigned slot = ud_slot(cqe->user_data);
	struct ur_conn *c = slot < d->max_conns ? &d->conns[slot] : NULL;
	bool buffer = cqe->flags & IORING_CQE_F_BUFFER;
	uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	if (!c || c->fd < 0 || (c->gen & 0xffffffu) != ud_gen(cqe->user_data)) {
		if (buffer)
			ur_br_give_back_tcp(d, bid);
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_MORE))
		c->recv_armed = false;
	if (cqe->res > 0 && buffer && !c->eof) {
		/* Keep stream order: once a buffer waits, later ones queue behind it. */
		if (c->npend || !in_append(c, d->tcpmem + (size_t)bid * UR_TCP_BUF, (uint32_t)cqe->res)) {
			c->pend[(c->pend_head + c->npend) % d->nbufs] = (uint32_t)bid << 16 | (uint32_t)cqe->res;
			c->npend++;
			buffer = false; /* given back once copied in */
		}
	}
	if (buffer)
		ur_br_give_back_tcp(d, bid);
	if (cqe->res == -ENOBUFS) {
		ur_stat_add(&d->rx_nobuf, 1);
	} else if (cqe->res == -EINVAL && d->multishot) {
		d->multishot = false;
		ur_say_once_single_shot("the kernel rejected multishot recv");
	} else if (cqe->res <= 0 && !c->eof) {
		/* Peer closed (0) or reset: no more input; what it sent is still handed over,
		 * and after a clean close our replies still go out. */
		c->eof = true;
		if (cqe->res < 0 && !c->send_inflight)
			c->out_head = c->out_tail = 0;
	}
	if (c->closing)
		conn_finish(d, slot);
	else if (!c->eof && !c->recv_armed && !c->npend)
		arm_tcp_recv(d, slot); /* with buffers waiting, rx re-arms once they are in */
}

/* Cuts whole frames out of slot's reassembly buffer; returns false when the pool ran dry. */
static bool conn_cut(struct ur_dev *d, unsigned slot, struct rf_pktbuf **pkts, unsigned n,
		     unsigned *got, uint64_t *msgs, uint64_t *bytes)
{
	struct ur_conn *c = &d->conns[slot];
	bool ok = true;
	if (c->up_owed && *got < n) {
		struct rf_pktbuf *b = rf_stream_event(d->dev, RF_PKTBUF_F_CONN_UP, conn_flow(d, slot), 0,
						      &c->peer, (uint32_t)c->peer_len);
		if (!b) {
			ur_stat_add(&d->rx_nobuf, 1);
			return false;
		}
		c->up_owed = false;
		pkts[(*got)++] = b;
	}
	struct rf_stream_frame f;
	while (!c->up_owed && *got < n &&
	       rf_stream_next_frame(&d->sc, c->in + c->in_head, c->in_tail - c->in_head, &f)) {
		struct rf_pktbuf *b;
		enum rf_stream_take r = rf_stream_take(d->dev, &f, c->in + c->in_head, &b);
		if (r == RF_STREAM_NOBUF) {
			ur_stat_add(&d->rx_nobuf, 1);
			ok = false;
			break;
		}
		c->in_head += f.consume;
		if (r == RF_STREAM_DROPPED) {
			ur_stat_add(&d->rx_drops, 1);
			continue;
		}
		b->flow = conn_flow(d, slot);
		b->queue = 0;
		memcpy(&b->peer, &c->peer, c->peer_len < sizeof(b->peer) ? c->peer_len : sizeof(b->peer));
		b->peer_len = (uint32_t)c->peer_len;
		pkts[(*got)++] = b;
		if (f.bad) {
			ur_stat_add(&d->rx_drops, 1);
			conn_stop_reading(d, c);
		} else {
			(*msgs)++;
			*bytes += f.len;
		}
	}
	if (c->in_head == c->in_tail)
		c->in_head = c->in_tail = 0;
	/* Room again: copy in the buffers that waited, give them back, re-arm the receive. */
	while (c->npend) {
		uint32_t e = c->pend[c->pend_head];
		if (!in_append(c, d->tcpmem + (size_t)(e >> 16) * UR_TCP_BUF, e & 0xffffu))
			break;
		ur_br_give_back_tcp(d, (uint16_t)(e >> 16));
		c->pend_head = (c->pend_head + 1) % d->nbufs;
		c->npend--;
	}
	if (!c->eof && !c->npend && !c->recv_armed)
		arm_tcp_recv(d, slot);
	return ok;
}

unsigned ur_tcp_rx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n)
{
	unsigned got = 0;
	uint64_t msgs = 0, bytes = 0;
	for (unsigned s = 0; s < d->conns_hi; s++)
		close_if_done(d, s);
	if (d->downs.n) {
		bool nobuf;
		got += rf_stream_downs_hand_over(d->dev, &d->downs, 0, pkts, n, &nobuf);
		if (nobuf)
			ur_stat_add(&d->rx_nobuf, 1);
		if (d->downs.n)
			return got;
	}
	for (unsigned k = 0; k < d->conns_hi && got < n; k++) {
		unsigned s = (d->rr + k) % d->conns_hi;
		struct ur_conn *c = &d->conns[s];
		if (c->fd < 0 || c->closing || !conn_has_work(d, c))
			continue;
		if (!conn_cut(d, s, pkts, n, &got, &msgs, &bytes))
			break;
	}
	d->rr = d->conns_hi ? (d->rr + 1) % d->conns_hi : 0;
	ur_stat_add(&d->rx_pkts, msgs);
	ur_stat_add(&d->rx_bytes, bytes);
	return got;
}

bool ur_tcp_ready(struct ur_dev *d)
{
	if (d->downs.n)
		return true;
	for (unsigned s = 0; s < d->conns_hi; s++) {
		const struct ur_conn *c = &d->conns[s];
		if (c->fd >= 0 && !c->closing &&
		    (conn_has_work(d, c) || (c->eof && !c->send_inflight && c->out_head == c->out_tail)))
			return true;
	}
	return false;
}

static void tcp_send_more(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	if (c->send_inflight || c->closing || c->out_head == c->out_tail)
		return;
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (!sqe)
		return;
	c->out_sending = c->out_tail - c->out_head;
	io_uring_prep_send(sqe, c->fd, c->out + c->out_head, c->out_sending, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, ud(UR_TSEND, c->gen, slot));
	c->send_inflight = true;
}

void ur_tcp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	unsigned slot = ud_slot(cqe->user_data);
	if (slot >= d->max_conns)
		return;
	struct ur_conn *c = &d->conns[slot];
	if (c->fd < 0 || (c->gen & 0xffffffu) != ud_gen(cqe->user_data))
		return;
	c->send_inflight = false;
	if (c->closing) {
		conn_finish(d, slot);
		return;
	}
	if (cqe->res < 0) {
		ur_stat_add(&d->tx_drops, 1); /* peer gone with output pending */
		c->out_head = c->out_tail = 0;
		conn_close(d, slot);
		return;
	}
	c->out_head += (uint32_t)cqe->res; /* a short send leaves the rest for the next one */
	if (c->out_head == c->out_tail)
		c->out_head = c->out_tail = 0;
	tcp_send_more(d, slot);
	close_if_done(d, slot);
}

/* The slot a message's flow names, or -1 (gone, closing, or never ours). */
static int conn_of(struct ur_dev *d, uint64_t flow)
{
	if (flow == 0)
		return !d->listen && d->conns[0].fd >= 0 && !d->conns[0].closing ? 0 : -1;
	unsigned s = (unsigned)(flow >> 8) & 0xffffffu;
	if ((flow & 0xff) != 0 || s >= d->max_conns || d->conns[s].fd < 0 || d->conns[s].closing ||
	    d->conns[s].gen != (uint32_t)(flow >> 32))
		return -1;
	return (int)s;
}

unsigned ur_tcp_tx(struct ur_dev *d, struct rf_pktbuf **pkts, unsigned n)
{
	unsigned k = 0;
	uint64_t bytes = 0, sent = 0, drops = 0;
	uint32_t limit = rf_stream_tx_max(&d->sc, UR_TCP_OUT_CAP), hdr = rf_stream_hdr_len(&d->sc);
	d->ntouched = 0;
	for (; k < n; k++) {
		struct rf_pktbuf *b = pkts[k];
		int slot = conn_of(d, b->flow);
		if (slot < 0 || b->data_len > limit) {
			drops++; /* connection gone (or never ours), or too long to frame */
			rf_pktbuf_free(b);
			continue;
		}
		struct ur_conn *c = &d->conns[slot];
		if (b->flags & RF_PKTBUF_F_ABORT) { /* now, whatever is still unsent */
			drops += c->out_head < c->out_tail;
			if (!c->send_inflight)
				c->out_head = c->out_tail = 0;
			conn_close(d, (unsigned)slot);
			rf_pktbuf_free(b);
			continue;
		}
		if (rf_stream_tx_writes(&d->sc, b)) {
			uint32_t need = hdr + b->data_len;
			if (c->out_tail + need > UR_TCP_OUT_CAP && !c->send_inflight && c->out_head) {
				memmove(c->out, c->out + c->out_head, c->out_tail - c->out_head);
				c->out_tail -= c->out_head;
				c->out_head = 0;
			}
			if (c->out_tail + need > UR_TCP_OUT_CAP)
				break; /* this connection is backed up: the caller keeps the rest */
			rf_stream_put_hdr(&d->sc, c->out + c->out_tail, b->data_len);
			memcpy(c->out + c->out_tail + hdr, rf_pktbuf_data(b), b->data_len);
			c->out_tail += need;
			if (!c->touched) {
				c->touched = true;
				d->touched[d->ntouched++] = (unsigned)slot;
			}
			bytes += b->data_len;
			sent++;
		}
		if (b->flags & RF_PKTBUF_F_CLOSE) /* send what is queued, then close */
			conn_stop_reading(d, c);
		rf_pktbuf_free(b);
	}
	for (unsigned i = 0; i < d->ntouched; i++) { /* one send per connection for the burst */
		unsigned s = d->touched[i];
		d->conns[s].touched = false;
		if (d->conns[s].fd >= 0)
			tcp_send_more(d, s);
	}
	for (unsigned s = 0; s < d->conns_hi; s++)
		close_if_done(d, s); /* closed by the app with nothing left to send */
	ur_stat_add(&d->tx_pkts, sent);
	ur_stat_add(&d->tx_bytes, bytes);
	if (drops)
		ur_stat_add(&d->tx_drops, drops);
	return k;
}

void ur_tcp_free(struct ur_dev *d)
{
	for (unsigned i = 0; d->conns && i < d->max_conns; i++) {
		if (d->conns[i].fd >= 0)
			close(d->conns[i].fd);
		free(d->conns[i].in);
		free(d->conns[i].out);
		free(d->conns[i].pend);
	}
	free(d->conns);
	free(d->touched);
	rf_stream_downs_free(&d->downs);
}
