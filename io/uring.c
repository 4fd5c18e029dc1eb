/*
 * io/uring.c: the io_uring driver, "uring:udp:..." and "uring:tcp:...".
 *
 * The one idea: the same sockets as the sockets drivers, but the syscalls are batched into one
 * ring per queue. Receive is one multishot request that keeps producing completions: UDP uses
 * multishot recvmsg whose buffers come from a provided-buffer ring filled with the *pool's own
 * packet buffers* (the kernel writes the payload at the buffer's usual data offset, so a received
 * message is handed to the app without a copy); TCP uses multishot recv into driver-owned
 * buffers, then cuts the byte stream into messages on the 2-byte length prefix (big-endian, as
 * the sockets driver frames them) and copies each into a packet buffer. Sends are one SQE per
 * UDP message (sendmsg) or one send per TCP connection with its framed bytes, all of a burst
 * submitted with one io_uring_enter (none with sqpoll=1, where a kernel thread polls the SQ).
 * When the kernel refuses multishot receive, the driver falls back to single-shot requests
 * re-armed after each completion, and says so once on stderr.
 *
 * liburing 2.3 has no io_uring_setup_buf_ring(): the buffer ring is mmap()ed here and
 * registered with io_uring_register_buf_ring().
 *
 * One ring per queue, used by that queue's thread only (io.h's contract); max_queues is 1.
 * rx_burst also reaps send completions and tx_burst also reaps receives, so neither side
 * stalls when the app only calls one of them for a while.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"

#define UR_BGID 7              /* buffer group id of the provided-buffer ring */
#define UR_MAX_CONNS 64        /* TCP connections per listening queue */
#define UR_TCP_BUF 4096        /* bytes per provided buffer (TCP) */
#define UR_TCP_IN_CAP (1u << 17)  /* reassembly bytes per connection: > one max frame + buffer */
#define UR_TCP_OUT_CAP (1u << 18) /* framed bytes waiting to be sent per connection */
#define UR_STAGE 512           /* received messages reaped but not yet handed out */
#define UR_NAME_LEN ((unsigned)sizeof(struct sockaddr_in6))

/* user_data: kind in the top byte, connection generation, then a slot index. */
enum ur_kind { UR_RX = 1, UR_ACCEPT, UR_TRECV, UR_TSEND, UR_USEND, UR_CANCEL };
static uint64_t ud(enum ur_kind k, uint32_t gen, uint32_t slot)
{
	return (uint64_t)k << 56 | (uint64_t)(gen & 0xffffffu) << 32 | slot;
}
static enum ur_kind ud_kind(uint64_t u) { return (enum ur_kind)(u >> 56); }
static uint32_t ud_gen(uint64_t u) { return (uint32_t)(u >> 32) & 0xffffffu; }
static uint32_t ud_slot(uint64_t u) { return (uint32_t)u; }

struct ur_conn {
	int fd;            /* -1: slot free */
	uint32_t gen;      /* bumped on reuse, so stale completions and flows are recognised */
	bool recv_armed, send_inflight, closing;
	uint8_t *in;       /* reassembly of the byte stream: [in_head, in_tail) */
	uint32_t in_head, in_tail;
	uint32_t skip;     /* bytes still to drop of an oversized frame */
	uint32_t *pend;    /* received buffers not yet copied in (in was full): bid << 16 | len */
	unsigned pend_head, npend;
	uint8_t *out;      /* framed bytes to send: [out_head, out_tail) */
	uint32_t out_head, out_tail, out_sending;
};

struct ur_txslot {        /* one UDP sendmsg in flight: its msghdr must outlive the SQE */
	struct msghdr msg;
	struct iovec iov;
	struct rf_pktbuf *pkt;
};

struct ur_dev {
	struct io_uring ring;
	bool ring_ok, tcp, listen, sqpoll, multishot, rx_armed, coop;
	int fd;                            /* UDP socket, TCP listener, or TCP client socket */
	struct rf_pktbuf_pool *pool;
	/* provided-buffer ring */
	struct io_uring_buf_ring *br;
	size_t br_bytes;
	unsigned nbufs;
	bool br_registered;
	struct rf_pktbuf **bufpkt;         /* UDP: bid -> the packet buffer behind it (NULL: empty) */
	unsigned nmissing;                 /* UDP: bids waiting for a packet buffer */
	uint16_t *missing;
	uint8_t *tcpmem;                   /* TCP: nbufs * UR_TCP_BUF bytes */
	struct msghdr rx_msg;              /* recvmsg template (multishot: only namelen matters) */
	struct sockaddr_storage rx_name;   /* single-shot recvmsg: where the peer address lands */
	/* UDP sends */
	struct ur_txslot *tx;
	uint32_t *txfree;
	unsigned ntx, ntxfree;
	bool connected;                    /* UDP connect= (sends ignore pkt->peer) */
	/* TCP */
	struct ur_conn conns[UR_MAX_CONNS];
	unsigned nconns;
	bool accept_armed;
	unsigned rr;                       /* next connection rx_burst cuts messages from */
	/* received, not yet handed out */
	struct rf_pktbuf *stage[UR_STAGE];
	unsigned stage_head, stage_n;
	unsigned unsubmitted;              /* SQEs prepared since the last submit */
	atomic_uint_fast64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, rx_nobuf, rx_drops, tx_drops,
		conns_open, conns_total;
};

static void stat_add(atomic_uint_fast64_t *c, uint64_t v)
{
	/* Relaxed: counters are read as snapshots by rf_io_stats_get; nothing is ordered by them. */
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static void say_once_single_shot(const char *why)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
		fprintf(stderr, "uring: multishot receive unavailable (%s): using single-shot "
			"receives, one request re-armed per message\n", why);
}

/* ---- submission ----------------------------------------------------------------------- */

static int ur_submit(struct ur_dev *d)
{
	if (!d->unsubmitted)
		return 0;
	int r = io_uring_submit(&d->ring);
	if (r >= 0)
		d->unsubmitted = 0;
	return r < 0 ? r : 0;
}

static struct io_uring_sqe *ur_sqe(struct ur_dev *d)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	if (!sqe) { /* SQ full: push what is there, then there is room */
		ur_submit(d);
		sqe = io_uring_get_sqe(&d->ring);
	}
	if (sqe)
		d->unsubmitted++;
	return sqe;
}

/* ---- provided buffers ----------------------------------------------------------------- */

/* UDP: the kernel writes io_uring_recvmsg_out and the peer's address just before the payload,
 * so a buffer starts that far below the packet buffer's default data offset. */
static unsigned udp_prefix(void)
{
	return (unsigned)sizeof(struct io_uring_recvmsg_out) + UR_NAME_LEN;
}

static void br_add_pkt(struct ur_dev *d, struct rf_pktbuf *b, uint16_t bid, int offset)
{
	uint8_t *addr = (uint8_t *)b->buf_addr + RF_PKTBUF_HEADROOM - udp_prefix();
	unsigned len = b->buf_len - RF_PKTBUF_HEADROOM + udp_prefix();
	d->bufpkt[bid] = b;
	io_uring_buf_ring_add(d->br, addr, len, bid, io_uring_buf_ring_mask(d->nbufs), offset);
}

/* Gives packet buffers to the bids that lack one. Returns how many were added. */
static unsigned br_refill_udp(struct ur_dev *d)
{
	unsigned added = 0;
	while (d->nmissing) {
		struct rf_pktbuf *b = rf_pktbuf_alloc(d->pool);
		if (!b)
			break;
		br_add_pkt(d, b, d->missing[--d->nmissing], (int)added);
		added++;
	}
	if (added)
		io_uring_buf_ring_advance(d->br, (int)added); /* store-release of the tail inside */
	return added;
}

static void br_give_back_tcp(struct ur_dev *d, uint16_t bid)
{
	io_uring_buf_ring_add(d->br, d->tcpmem + (size_t)bid * UR_TCP_BUF, UR_TCP_BUF, bid,
			      io_uring_buf_ring_mask(d->nbufs), 0);
	io_uring_buf_ring_advance(d->br, 1);
}

static int br_setup(struct ur_dev *d, char *err, size_t len)
{
	d->br_bytes = (size_t)d->nbufs * sizeof(struct io_uring_buf);
	void *p = mmap(NULL, d->br_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (p == MAP_FAILED)
		return rf_io_err(err, len, "uring: mmap of the buffer ring failed: %s", strerror(errno)),
		       -ENOMEM;
	d->br = p;
	io_uring_buf_ring_init(d->br);
	struct io_uring_buf_reg reg = {.ring_addr = (uint64_t)(uintptr_t)p,
				       .ring_entries = d->nbufs, .bgid = UR_BGID};
	int r = io_uring_register_buf_ring(&d->ring, &reg, 0);
	if (r < 0)
		return rf_io_err(err, len, "uring: io_uring_register_buf_ring failed: %s (needs "
				 "Linux >= 5.19 with provided-buffer rings)", strerror(-r)), r;
	d->br_registered = true;
	if (d->tcp) {
		d->tcpmem = malloc((size_t)d->nbufs * UR_TCP_BUF);
		if (!d->tcpmem)
			return rf_io_err(err, len, "uring: out of memory for %u receive buffers",
					 d->nbufs), -ENOMEM;
		for (unsigned i = 0; i < d->nbufs; i++)
			io_uring_buf_ring_add(d->br, d->tcpmem + (size_t)i * UR_TCP_BUF, UR_TCP_BUF,
					      (uint16_t)i, io_uring_buf_ring_mask(d->nbufs), (int)i);
		io_uring_buf_ring_advance(d->br, (int)d->nbufs);
		return 0;
	}
	d->bufpkt = calloc(d->nbufs, sizeof(*d->bufpkt));
	d->missing = calloc(d->nbufs, sizeof(*d->missing));
	if (!d->bufpkt || !d->missing)
		return rf_io_err(err, len, "uring: out of memory for the buffer table"), -ENOMEM;
	unsigned room = rf_pktbuf_pool_data_room(d->pool);
	if (room && room < 64)
		return rf_io_err(err, len, "uring: pool buffers have %u bytes of room, need >= 64",
				 room), -EINVAL;
	for (unsigned i = 0; i < d->nbufs; i++)
		d->missing[d->nmissing++] = (uint16_t)(d->nbufs - 1 - i);
	if (br_refill_udp(d) == 0)
		return rf_io_err(err, len, "uring: the packet-buffer pool is empty: give it more "
				 "buffers than bufs=%u", d->nbufs), -ENOBUFS;
	return 0;
}

/* ---- receive -------------------------------------------------------------------------- */

static int arm_udp_rx(struct ur_dev *d)
{
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (!sqe)
		return -EBUSY;
	memset(&d->rx_msg, 0, sizeof(d->rx_msg));
	d->rx_msg.msg_namelen = UR_NAME_LEN;
	if (d->multishot) {
		io_uring_prep_recvmsg_multishot(sqe, d->fd, &d->rx_msg, 0);
	} else {
		d->rx_msg.msg_name = &d->rx_name;
		io_uring_prep_recvmsg(sqe, d->fd, &d->rx_msg, 0);
	}
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
	io_uring_sqe_set_data64(sqe, ud(UR_RX, 0, 0));
	d->rx_armed = true;
	return 0;
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

static void stage_push(struct ur_dev *d, struct rf_pktbuf *b)
{
	d->stage[(d->stage_head + d->stage_n) % UR_STAGE] = b;
	d->stage_n++;
}

static void udp_rx_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		d->rx_armed = false;
	if (cqe->res < 0) {
		if (cqe->res == -ENOBUFS)
			stat_add(&d->rx_nobuf, 1);
		else if (cqe->res == -EINVAL && d->multishot) {
			d->multishot = false;
			say_once_single_shot("the kernel rejected multishot recvmsg");
		}
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		return;
	uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	struct rf_pktbuf *b = d->bufpkt[bid];
	d->bufpkt[bid] = NULL;
	d->missing[d->nmissing++] = bid;
	if (!b)
		return;
	uint8_t *start = (uint8_t *)b->buf_addr + RF_PKTBUF_HEADROOM - udp_prefix();
	unsigned buflen = b->buf_len - RF_PKTBUF_HEADROOM + udp_prefix();
	const uint8_t *payload;
	unsigned plen;
	if (d->multishot) {
		struct io_uring_recvmsg_out *o =
			io_uring_recvmsg_validate(start, cqe->res, &d->rx_msg);
		if (!o || (o->flags & MSG_TRUNC)) {
			stat_add(&d->rx_drops, 1);
			rf_pktbuf_free(b);
			return;
		}
		payload = io_uring_recvmsg_payload(o, &d->rx_msg);
		plen = io_uring_recvmsg_payload_length(o, cqe->res, &d->rx_msg);
		unsigned nl = o->namelen < UR_NAME_LEN ? o->namelen : UR_NAME_LEN;
		memcpy(&b->peer, io_uring_recvmsg_name(o), nl);
		b->peer_len = nl;
	} else {
		if ((unsigned)cqe->res > buflen || (d->rx_msg.msg_flags & MSG_TRUNC)) {
			stat_add(&d->rx_drops, 1);
			rf_pktbuf_free(b);
			return;
		}
		payload = start;
		plen = (unsigned)cqe->res;
		unsigned nl = d->rx_msg.msg_namelen < UR_NAME_LEN ? d->rx_msg.msg_namelen : UR_NAME_LEN;
		memcpy(&b->peer, &d->rx_name, nl);
		b->peer_len = nl;
	}
	b->data_off = (uint32_t)(payload - (const uint8_t *)b->buf_addr);
	b->data_len = plen;
	b->flow = 0;
	b->queue = 0;
	stage_push(d, b);
}

static void conn_close(struct ur_dev *d, unsigned slot)
{
	struct ur_conn *c = &d->conns[slot];
	if (c->fd < 0)
		return;
	if (c->recv_armed || c->send_inflight) {
		/* Completions still refer to it: shut it down so they finish, close on the last. */
		if (!c->closing)
			shutdown(c->fd, SHUT_RDWR);
		c->closing = true;
		return;
	}
	while (c->npend) {
		br_give_back_tcp(d, (uint16_t)(c->pend[c->pend_head] >> 16));
		c->pend_head = (c->pend_head + 1) % d->nbufs;
		c->npend--;
	}
	close(c->fd);
	c->fd = -1;
	c->gen++;
	c->in_head = c->in_tail = c->skip = 0;
	c->out_head = c->out_tail = c->out_sending = 0;
	c->closing = false;
	if (d->nconns)
		d->nconns--;
	atomic_fetch_sub_explicit(&d->conns_open, 1, memory_order_relaxed);
}

static int conn_add(struct ur_dev *d, int fd)
{
	for (unsigned i = 0; i < UR_MAX_CONNS; i++) {
		struct ur_conn *c = &d->conns[i];
		if (c->fd >= 0 || (c->in == NULL && (c->in = malloc(UR_TCP_IN_CAP)) == NULL) ||
		    (c->out == NULL && (c->out = malloc(UR_TCP_OUT_CAP)) == NULL) ||
		    (c->pend == NULL && (c->pend = calloc(d->nbufs, sizeof(*c->pend))) == NULL))
			continue;
		c->pend_head = c->npend = 0;
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->recv_armed = c->send_inflight = c->closing = false;
		d->nconns++;
		stat_add(&d->conns_open, 1);
		stat_add(&d->conns_total, 1);
		arm_tcp_recv(d, i);
		return (int)i;
	}
	return -ENOSPC;
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

static void tcp_recv_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	unsigned slot = ud_slot(cqe->user_data);
	struct ur_conn *c = slot < UR_MAX_CONNS ? &d->conns[slot] : NULL;
	bool buffer = cqe->flags & IORING_CQE_F_BUFFER;
	uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	if (!c || c->fd < 0 || (c->gen & 0xffffffu) != ud_gen(cqe->user_data)) {
		if (buffer)
			br_give_back_tcp(d, bid);
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_MORE))
		c->recv_armed = false;
	if (cqe->res > 0 && buffer) {
		/* Keep stream order: once a buffer waits, later ones queue behind it. */
		if (c->npend || !in_append(c, d->tcpmem + (size_t)bid * UR_TCP_BUF, (uint32_t)cqe->res)) {
			c->pend[(c->pend_head + c->npend) % d->nbufs] = (uint32_t)bid << 16 | (uint32_t)cqe->res;
			c->npend++;
			buffer = false; /* given back once copied in */
		}
	}
	if (buffer)
		br_give_back_tcp(d, bid);
	if (cqe->res == -ENOBUFS) {
		stat_add(&d->rx_nobuf, 1);
	} else if (cqe->res == -EINVAL && d->multishot) {
		d->multishot = false;
		say_once_single_shot("the kernel rejected multishot recv");
	} else if (cqe->res <= 0) {
		c->closing = true; /* peer closed or error */
	}
	if (c->closing)
		conn_close(d, slot);
	else if (!c->recv_armed && !c->npend)
		arm_tcp_recv(d, slot); /* with buffers waiting, tcp_cut re-arms once they are in */
}

/* Cuts whole frames out of a connection's reassembly buffer into packet buffers. */
static unsigned tcp_cut(struct ur_dev *d, unsigned slot, struct rf_pktbuf **pkts, unsigned n)
{
	struct ur_conn *c = &d->conns[slot];
	unsigned got = 0;
	while (got < n && c->fd >= 0) {
		uint32_t avail = c->in_tail - c->in_head;
		if (c->skip) {
			uint32_t k = avail < c->skip ? avail : c->skip;
			c->in_head += k;
			c->skip -= k;
			if (c->skip)
				break;
			continue;
		}
		if (avail < 2)
			break;
		const uint8_t *p = c->in + c->in_head;
		uint32_t flen = (uint32_t)p[0] << 8 | p[1];
		unsigned room = rf_pktbuf_pool_data_room(d->pool);
		if (room && flen > room) {
			stat_add(&d->rx_drops, 1);
			c->in_head += 2;
			c->skip = flen;
			continue;
		}
		if (avail < 2 + flen)
			break;
		struct rf_pktbuf *b = rf_pktbuf_alloc(d->pool);
		if (!b) {
			stat_add(&d->rx_nobuf, 1);
			break;
		}
		memcpy(rf_pktbuf_data(b), p + 2, flen);
		b->data_len = flen;
		b->flow = (uint64_t)c->gen << 32 | slot;
		b->queue = 0;
		c->in_head += 2 + flen;
		pkts[got++] = b;
	}
	if (c->in_head == c->in_tail)
		c->in_head = c->in_tail = 0;
	/* Room again: copy in the buffers that waited, give them back, re-arm the receive. */
	while (c->npend && c->fd >= 0) {
		uint32_t e = c->pend[c->pend_head];
		if (!in_append(c, d->tcpmem + (size_t)(e >> 16) * UR_TCP_BUF, e & 0xffffu))
			break;
		br_give_back_tcp(d, (uint16_t)(e >> 16));
		c->pend_head = (c->pend_head + 1) % d->nbufs;
		c->npend--;
	}
	if (c->fd >= 0 && !c->npend && !c->recv_armed && !c->closing)
		arm_tcp_recv(d, slot);
	return got;
}

/* ---- send completion, TCP send -------------------------------------------------------- */

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

static void tcp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	unsigned slot = ud_slot(cqe->user_data);
	if (slot >= UR_MAX_CONNS)
		return;
	struct ur_conn *c = &d->conns[slot];
	if (c->fd < 0 || (c->gen & 0xffffffu) != ud_gen(cqe->user_data))
		return;
	c->send_inflight = false;
	if (cqe->res < 0) {
		c->closing = true;
		stat_add(&d->tx_drops, 1);
		conn_close(d, slot);
		return;
	}
	c->out_head += (uint32_t)cqe->res; /* a short send leaves the rest for the next one */
	if (c->out_head == c->out_tail)
		c->out_head = c->out_tail = 0;
	if (c->closing)
		conn_close(d, slot);
	else
		tcp_send_more(d, slot);
}

static void udp_send_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	uint32_t slot = ud_slot(cqe->user_data);
	if (slot >= d->ntx || !d->tx[slot].pkt)
		return;
	if (cqe->res < 0)
		stat_add(&d->tx_drops, 1);
	rf_pktbuf_free(d->tx[slot].pkt);
	d->tx[slot].pkt = NULL;
	d->txfree[d->ntxfree++] = slot;
}

static void accept_cqe(struct ur_dev *d, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		d->accept_armed = false;
	if (cqe->res >= 0) {
		if (conn_add(d, cqe->res) < 0) {
			close(cqe->res); /* table full: refuse the connection */
			stat_add(&d->rx_drops, 1);
		}
	} else if (cqe->res == -EINVAL && d->multishot) {
		d->multishot = false;
		say_once_single_shot("the kernel rejected multishot accept");
	}
}

/* Handles completions until the stage is nearly full (UDP) or none are left; re-arms. */
static void ur_reap(struct ur_dev *d)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	io_uring_for_each_cqe(&d->ring, head, cqe) {
		if (d->stage_n >= UR_STAGE)
			break;
		switch (ud_kind(cqe->user_data)) {
		case UR_RX: udp_rx_cqe(d, cqe); break;
		case UR_ACCEPT: accept_cqe(d, cqe); break;
		case UR_TRECV: tcp_recv_cqe(d, cqe); break;
		case UR_TSEND: tcp_send_cqe(d, cqe); break;
		case UR_USEND: udp_send_cqe(d, cqe); break;
		default: break;
		}
		seen++;
	}
	if (seen)
		io_uring_cq_advance(&d->ring, seen);
	/* taskrun=coop: completions that need our task's context (a datagram's copy into its
	 * buffer) wait for our next kernel entry instead of interrupting us; a busy-polling app
	 * with nothing to submit must enter on its own when the kernel flags pending work. */
	if (d->coop && !io_uring_cq_ready(&d->ring) &&
	    (IO_URING_READ_ONCE(*d->ring.sq.kflags) & IORING_SQ_TASKRUN))
		io_uring_get_events(&d->ring);
	/* Completions the CQ had no room for wait in the kernel (IORING_FEAT_NODROP) until someone
	 * asks for events; without this, send slots and multishot receives would starve. */
	if (io_uring_cq_has_overflow(&d->ring) && !io_uring_cq_ready(&d->ring))
		io_uring_get_events(&d->ring);
	if (!d->tcp) {
		br_refill_udp(d);
		if (!d->rx_armed && d->nmissing < d->nbufs)
			arm_udp_rx(d);
	} else if (d->listen && !d->accept_armed && d->nconns < UR_MAX_CONNS) {
		arm_accept(d);
	}
}

/* ---- ops ------------------------------------------------------------------------------ */

static unsigned ur_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			    unsigned n)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	unsigned got = 0;
	if (d->stage_n < n)
		ur_reap(d);
	while (got < n && d->stage_n) {
		pkts[got++] = d->stage[d->stage_head];
		d->stage_head = (d->stage_head + 1) % UR_STAGE;
		d->stage_n--;
	}
	if (d->tcp) {
		for (unsigned k = 0; k < UR_MAX_CONNS && got < n; k++) {
			unsigned slot = (d->rr + k) % UR_MAX_CONNS;
			if (d->conns[slot].fd >= 0 && (d->conns[slot].in_tail != d->conns[slot].in_head ||
							d->conns[slot].npend))
				got += tcp_cut(d, slot, pkts + got, n - got);
		}
		d->rr = (d->rr + 1) % UR_MAX_CONNS;
	}
	ur_submit(d);
	if (got) {
		uint64_t bytes = 0;
		for (unsigned i = 0; i < got; i++)
			bytes += pkts[i]->data_len;
		stat_add(&d->rx_pkts, got);
		stat_add(&d->rx_bytes, bytes);
	}
	return got;
}

static int tcp_conn_of(struct ur_dev *d, const struct rf_pktbuf *b)
{
	if (!d->listen) /* client: the one connection, whatever flow says */
		return d->conns[0].fd >= 0 ? 0 : -1;
	uint32_t slot = (uint32_t)b->flow;
	if (slot >= UR_MAX_CONNS || d->conns[slot].fd < 0 ||
	    d->conns[slot].gen != (uint32_t)(b->flow >> 32) || d->conns[slot].closing)
		return -1;
	return (int)slot;
}

static unsigned ur_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			    unsigned n)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	unsigned k = 0;
	uint64_t bytes = 0, sent = 0;
	ur_reap(d);
	if (d->tcp) {
		uint64_t touched = 0; /* bit per connection given bytes in this burst */
		for (; k < n; k++) {
			struct rf_pktbuf *b = pkts[k];
			int slot = tcp_conn_of(d, b);
			if (slot < 0 || b->data_len > 0xffff) {
				stat_add(&d->tx_drops, 1); /* connection gone: consumed, counted */
				rf_pktbuf_free(b);
				continue;
			}
			struct ur_conn *c = &d->conns[slot];
			uint32_t need = 2 + b->data_len;
			if (c->out_tail + need > UR_TCP_OUT_CAP && !c->send_inflight && c->out_head) {
				memmove(c->out, c->out + c->out_head, c->out_tail - c->out_head);
				c->out_tail -= c->out_head;
				c->out_head = 0;
			}
			if (c->out_tail + need > UR_TCP_OUT_CAP)
				break; /* this connection is backed up: the caller keeps the rest */
			uint8_t *o = c->out + c->out_tail;
			o[0] = (uint8_t)(b->data_len >> 8);
			o[1] = (uint8_t)b->data_len;
			memcpy(o + 2, rf_pktbuf_data(b), b->data_len);
			c->out_tail += need;
			touched |= (uint64_t)1 << slot;
			bytes += b->data_len;
			sent++;
			rf_pktbuf_free(b);
		}
		for (unsigned s = 0; touched; s++, touched >>= 1)
			if (touched & 1)
				tcp_send_more(d, s);
	} else {
		for (; k < n; k++) {
			if (!d->ntxfree)
				break; /* every slot in flight: the caller keeps the rest */
			struct rf_pktbuf *b = pkts[k];
			struct io_uring_sqe *sqe = ur_sqe(d);
			if (!sqe)
				break;
			uint32_t slot = d->txfree[--d->ntxfree];
			struct ur_txslot *t = &d->tx[slot];
			t->pkt = b;
			t->iov.iov_base = rf_pktbuf_data(b);
			t->iov.iov_len = b->data_len;
			memset(&t->msg, 0, sizeof(t->msg));
			t->msg.msg_iov = &t->iov;
			t->msg.msg_iovlen = 1;
			if (!d->connected) {
				t->msg.msg_name = &b->peer;
				t->msg.msg_namelen = b->peer_len;
			}
			io_uring_prep_sendmsg(sqe, d->fd, &t->msg, MSG_NOSIGNAL);
			io_uring_sqe_set_data64(sqe, ud(UR_USEND, 0, slot));
			bytes += b->data_len;
			sent++;
		}
	}
	ur_submit(d);
	stat_add(&d->tx_pkts, sent);
	stat_add(&d->tx_bytes, bytes);
	return k;
}

static int ur_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	(void)queue;
	return ((struct ur_dev *)dev->priv)->ring.ring_fd;
}

static bool tcp_frame_ready(const struct ur_conn *c)
{
	uint32_t avail = c->in_tail - c->in_head;
	if (c->skip)
		return avail > 0;
	return avail >= 2 && avail >= 2u + ((uint32_t)c->in[c->in_head] << 8 | c->in[c->in_head + 1]);
}

static int ur_wait(struct rf_io_dev *dev, unsigned queue, int timeout_ms)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	if (d->stage_n || io_uring_cq_ready(&d->ring))
		return 1;
	for (unsigned i = 0; d->tcp && i < UR_MAX_CONNS; i++) /* a whole frame already reaped */
		if (d->conns[i].fd >= 0 && (tcp_frame_ready(&d->conns[i]) || d->conns[i].npend))
			return 1;
	struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
				       .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
	struct io_uring_cqe *cqe;
	d->unsubmitted = 0; /* submit_and_wait submits them */
	int r = io_uring_submit_and_wait_timeout(&d->ring, &cqe, 1, timeout_ms < 0 ? NULL : &ts,
						 NULL);
	if (r == -ETIME || r == -EINTR)
		return 0;
	return r < 0 ? r : 1;
}

static void ur_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct ur_dev *d = dev->priv;
#define RD(f) atomic_load_explicit(&d->f, memory_order_relaxed)
	st->rx_pkts += RD(rx_pkts);
	st->rx_bytes += RD(rx_bytes);
	st->tx_pkts += RD(tx_pkts);
	st->tx_bytes += RD(tx_bytes);
	st->rx_nobuf += RD(rx_nobuf);
	st->rx_drops += RD(rx_drops);
	st->tx_drops += RD(tx_drops);
	st->conns_open += RD(conns_open);
	st->conns_total += RD(conns_total);
#undef RD
}

/* Cancels every request and waits (bounded) until the kernel is done with our memory. */
static void ur_quiesce(struct ur_dev *d)
{
	struct io_uring_sqe *sqe = ur_sqe(d);
	if (sqe) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
		io_uring_sqe_set_data64(sqe, ud(UR_CANCEL, 0, 0));
	}
	ur_submit(d);
	for (int i = 0; i < 100; i++) { /* <= 100 x 10 ms */
		struct __kernel_timespec ts = {.tv_nsec = 10 * 1000000};
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe_timeout(&d->ring, &cqe, &ts) < 0)
			break;
		bool rx_udp = ud_kind(cqe->user_data) == UR_RX, buf = cqe->flags & IORING_CQE_F_BUFFER;
		if (ud_kind(cqe->user_data) == UR_USEND)
			udp_send_cqe(d, cqe);
		else if (rx_udp && buf && d->bufpkt) {
			uint16_t bid = (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
			rf_pktbuf_free(d->bufpkt[bid]);
			d->bufpkt[bid] = NULL;
		}
		io_uring_cqe_seen(&d->ring, cqe);
	}
}

static void ur_free(struct ur_dev *d)
{
	if (d->ring_ok) {
		ur_quiesce(d);
		if (d->br_registered)
			io_uring_unregister_buf_ring(&d->ring, UR_BGID);
		io_uring_queue_exit(&d->ring);
	}
	if (d->br)
		munmap(d->br, d->br_bytes);
	if (d->bufpkt)
		for (unsigned i = 0; i < d->nbufs; i++)
			rf_pktbuf_free(d->bufpkt[i]);
	for (unsigned i = 0; i < d->ntx && d->tx; i++)
		rf_pktbuf_free(d->tx[i].pkt);
	while (d->stage_n) {
		rf_pktbuf_free(d->stage[d->stage_head]);
		d->stage_head = (d->stage_head + 1) % UR_STAGE;
		d->stage_n--;
	}
	for (unsigned i = 0; i < UR_MAX_CONNS; i++) {
		if (d->conns[i].fd >= 0)
			close(d->conns[i].fd);
		free(d->conns[i].in);
		free(d->conns[i].out);
		free(d->conns[i].pend);
	}
	if (d->fd >= 0)
		close(d->fd);
	free(d->bufpkt);
	free(d->missing);
	free(d->tcpmem);
	free(d->tx);
	free(d->txfree);
	free(d);
}

static void ur_close(struct rf_io_dev *dev)
{
	if (dev->priv)
		ur_free(dev->priv);
	dev->priv = NULL;
}

/* Connects with a bound wait (3 s), so an absent peer is an error line, not a hang. */
static int tcp_connect(int fd, const struct sockaddr_storage *ss, socklen_t sl)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	int r = connect(fd, (const struct sockaddr *)ss, sl);
	if (r < 0 && errno == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		r = poll(&p, 1, 3000);
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		int e = 0;
		socklen_t el = sizeof(e);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
		if (e) {
			errno = e;
			return -1;
		}
		r = 0;
	}
	fcntl(fd, F_SETFL, fl);
	return r;
}

static int ur_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	bool tcp = strcmp(cfg->transport, "tcp") == 0;
	if (!tcp && strcmp(cfg->transport, "udp") != 0)
		return rf_io_err(err, len, "uring: give the transport: uring:udp:listen=0.0.0.0:9000 "
				 "or uring:tcp:connect=10.0.0.2:9000 (got '%s')", cfg->spec);
	struct sockaddr_storage ss, ss_c;
	socklen_t sl, sl_c;
	int rl = rf_io_config_get_addr(cfg, "listen", &ss, &sl, err, len);
	if (rl != 0 && rl != -ENOENT)
		return rl;
	int rc = rf_io_config_get_addr(cfg, "connect", &ss_c, &sl_c, err, len);
	if (rc != 0 && rc != -ENOENT)
		return rc;
	if ((rl == 0) == (rc == 0))
		return rf_io_err(err, len, "uring: give exactly one of listen=IP:PORT or "
				 "connect=IP:PORT (e.g. uring:%s:listen=0.0.0.0:9000)", cfg->transport);
	if (rc == 0) {
		ss = ss_c;
		sl = sl_c;
	}
	uint32_t entries, nbufs, rcvbuf, sndbuf;
	unsigned taskrun;
	bool sqpoll, multishot;
	if (rf_io_config_get_u32(cfg, "entries", 256, 8, 4096, &entries, err, len) ||
	    rf_io_config_get_u32(cfg, "bufs", 1024, 8, 8192, &nbufs, err, len) ||
	    rf_io_config_get_bool(cfg, "sqpoll", false, &sqpoll, err, len) ||
	    rf_io_config_get_bool(cfg, "multishot", true, &multishot, err, len) ||
	    rf_io_config_get_u32(cfg, "rcvbuf", 0, 0, 1u << 30, &rcvbuf, err, len) ||
	    rf_io_config_get_u32(cfg, "sndbuf", 0, 0, 1u << 30, &sndbuf, err, len) ||
	    rf_io_config_get_enum(cfg, "taskrun", "coop|signal", 0, &taskrun, err, len))
		return -EINVAL;
	if (nbufs & (nbufs - 1))
		return rf_io_err(err, len, "uring: bufs=%u: must be a power of two in 8..8192", nbufs);

	struct ur_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return rf_io_err(err, len, "uring: out of memory"), -ENOMEM;
	d->fd = -1;
	for (unsigned i = 0; i < UR_MAX_CONNS; i++)
		d->conns[i].fd = -1;
	d->tcp = tcp;
	d->listen = rl == 0;
	d->sqpoll = sqpoll;
	d->multishot = multishot;
	d->pool = dev->pool;
	d->nbufs = nbufs;
	if (!multishot)
		say_once_single_shot("multishot=0 was given");
	int r;

	struct io_uring_params p = {0};
	if (sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 1000; /* ms of idling before the SQ thread sleeps */
	}
	/* Room for the multishot completions of a burst that arrives while the app is descheduled
	 * (task work posts one CQE per datagram): 16x the SQ, at least 4096. */
	p.cq_entries = entries * 16 < 4096 ? 4096 : entries * 16;
	p.flags |= IORING_SETUP_CQSIZE;
	struct io_uring_params p0 = p;
	if (taskrun == 0 && !sqpoll) { /* coop: no IPI per completion (Linux >= 5.19) */
		p.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
		d->coop = true;
	}
	r = io_uring_queue_init_params(entries, &d->ring, &p);
	if (r == -EINVAL && d->coop) { /* older kernel: the default notification */
		d->coop = false;
		p = p0;
		r = io_uring_queue_init_params(entries, &d->ring, &p);
	}
	if (r < 0) {
		rf_io_err(err, len, "uring: io_uring_queue_init failed: %s%s", strerror(-r),
			  r == -EPERM ? " (io_uring disabled? check sysctl kernel.io_uring_disabled; "
					"sqpoll may need CAP_SYS_NICE on old kernels)" : "");
		goto fail;
	}
	d->ring_ok = true;

	d->fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (d->fd < 0) {
		r = -errno;
		rf_io_err(err, len, "uring: socket: %s", strerror(errno));
		goto fail;
	}
	/* Socket buffers as the sockets drivers size them: the kernel's default unless asked. */
	if ((rcvbuf && setsockopt(d->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(int)) < 0) ||
	    (sndbuf && setsockopt(d->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(int)) < 0)) {
		r = -errno;
		rf_io_err(err, len, "uring: setting rcvbuf/sndbuf failed: %s", strerror(errno));
		goto fail;
	}
	if (d->listen) {
		int one = 1;
		setsockopt(d->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(d->fd, (struct sockaddr *)&ss, sl) < 0 || (tcp && listen(d->fd, 64) < 0)) {
			r = -errno;
			rf_io_err(err, len, "uring: cannot listen on %s: %s%s", rf_io_config_get(cfg, "listen"),
				  strerror(errno), errno == EADDRINUSE ? " (pick another port or stop "
				  "whatever uses it)" : "");
			goto fail;
		}
	} else if (tcp ? tcp_connect(d->fd, &ss, sl) < 0
		       : connect(d->fd, (struct sockaddr *)&ss, sl) < 0) {
		r = -errno;
		rf_io_err(err, len, "uring: cannot connect to %s: %s (is the server listening?)",
			  rf_io_config_get(cfg, "connect"), strerror(errno));
		goto fail;
	}
	d->connected = !d->listen;

	if ((r = br_setup(d, err, len)) < 0)
		goto fail;
	if (!tcp) {
		d->ntx = entries * 2;
		d->tx = calloc(d->ntx, sizeof(*d->tx));
		d->txfree = calloc(d->ntx, sizeof(*d->txfree));
		if (!d->tx || !d->txfree) {
			r = -ENOMEM;
			rf_io_err(err, len, "uring: out of memory");
			goto fail;
		}
		for (unsigned i = 0; i < d->ntx; i++)
			d->txfree[d->ntxfree++] = d->ntx - 1 - i;
		arm_udp_rx(d);
	} else if (d->listen) {
		arm_accept(d);
	} else {
		int fd = d->fd;
		d->fd = -1; /* owned by the connection from now on */
		if ((r = conn_add(d, fd)) < 0) {
			close(fd);
			rf_io_err(err, len, "uring: out of memory for the connection");
			goto fail;
		}
	}
	if ((r = ur_submit(d)) < 0) {
		rf_io_err(err, len, "uring: io_uring_submit: %s", strerror(-r));
		goto fail;
	}
	dev->priv = d;
	return 0;
fail:
	ur_free(d);
	return r < 0 ? r : -EINVAL;
}

static int ur_probe(char *why, size_t len)
{
	struct io_uring ring;
	int r = io_uring_queue_init(8, &ring, 0);
	if (r < 0) {
		snprintf(why, len, "io_uring_setup failed: %s (kernel without io_uring, or "
			 "sysctl kernel.io_uring_disabled set)", strerror(-r));
		return r;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

const struct rf_io_ops rf_io_uring_ops = {
	.name = "uring",
	.usage = "uring:udp|tcp:listen=IP:PORT|connect=IP:PORT[,sqpoll=1][,entries=256][,bufs=1024]"
		 "[,multishot=0][,rcvbuf=B,sndbuf=B][,taskrun=coop|signal]  e.g. uring:udp:listen=0.0.0.0:9000",
	.keys = "listen,connect,sqpoll,entries,bufs,multishot,rcvbuf,sndbuf,taskrun",
	.transports = "udp,tcp",
	.max_queues = 1,
	.probe = ur_probe,
	.open = ur_open,
	.rx_burst = ur_rx_burst,
	.tx_burst = ur_tx_burst,
	.wait_fd = ur_wait_fd,
	.wait = ur_wait,
	.stats = ur_stats,
	.close = ur_close,
};
