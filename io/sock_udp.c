/*
 * io/sock_udp.c: the UDP sockets driver, "udp:listen=IP:PORT" or "udp:connect=IP:PORT".
 *
 * One non-blocking socket per queue; rx_burst is one recvmmsg() straight into packet
 * buffers (the peer address lands in the buffer), tx_burst one sendmmsg() from them, so a
 * burst of n messages costs one system call each way. With queues > 1 in listen mode the
 * sockets share the port through SO_REUSEPORT and the kernel spreads flows over them (one
 * socket per poller). The wait fd is the socket itself. Buffers a recvmmsg did not fill are
 * kept in a per-queue stash for the next call rather than freed and re-allocated.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"
#include "sock_pvt.h"

struct udp_queue {
	RF_CACHE_ALIGNED struct rf_io_qstats st; /* written by this queue's thread only */
	int fd;
	unsigned nstash;
	struct rf_pktbuf *stash[RF_IO_MAX_BURST];
	/* rx and tx keep their own message arrays, so one thread may receive while another
	 * sends on the same queue (RF_IO_CAP_SPLIT_RXTX); each counter has one writer. */
	struct mmsghdr msgs[RF_IO_MAX_BURST];
	struct iovec iov[RF_IO_MAX_BURST];
	struct mmsghdr tx_msgs[RF_IO_MAX_BURST];
	struct iovec tx_iov[RF_IO_MAX_BURST];
};

struct udp_dev {
	bool connected;
	unsigned nq;
	struct udp_queue q[];
};

static int udp_probe(char *why, size_t len)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, len, "cannot create a UDP socket: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	return 0;
}

static void udp_close_priv(struct udp_dev *u)
{
	for (unsigned i = 0; i < u->nq; i++) {
		if (u->q[i].fd >= 0)
			close(u->q[i].fd);
		rf_pktbuf_free_bulk(u->q[i].stash, u->q[i].nstash);
	}
	free(u);
}

static int udp_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	struct rf_sock_opts o;
	int rc = rf_sock_opts_parse(cfg, &o, err, len);
	if (rc)
		return rc;
	size_t sz = sizeof(struct udp_dev) + dev->nqueues * sizeof(struct udp_queue);
	sz = (sz + RF_CACHE_LINE - 1) & ~(size_t)(RF_CACHE_LINE - 1); /* aligned_alloc wants it */
	struct udp_dev *u = aligned_alloc(RF_CACHE_LINE, sz);
	if (!u)
		return rf_io_err(err, len, "udp: out of memory"), -ENOMEM;
	memset(u, 0, sz);
	u->connected = o.connect;
	u->nq = dev->nqueues;
	for (unsigned i = 0; i < u->nq; i++)
		u->q[i].fd = -1;
	for (unsigned i = 0; i < u->nq; i++) {
		int fd = rf_sock_open(&o, SOCK_DGRAM, u->nq > 1 && !o.connect, err, len);
		if (fd < 0) {
			udp_close_priv(u);
			return fd;
		}
		u->q[i].fd = fd;
	}
	dev->priv = u;
	return 0;
}

static void udp_close(struct rf_io_dev *dev)
{
	udp_close_priv(dev->priv);
}

/* Refill the stash to n buffers; returns how many it holds (fewer when the pool runs dry). */
static unsigned stash_fill(struct rf_io_dev *dev, struct udp_queue *q, unsigned n)
{
	if (q->nstash < n && rf_pktbuf_alloc_bulk(dev->pool, q->stash + q->nstash, n - q->nstash) == 0)
		return q->nstash = n;
	while (q->nstash < n) {
		struct rf_pktbuf *b = rf_pktbuf_alloc(dev->pool);
		if (!b)
			break;
		q->stash[q->nstash++] = b;
	}
	return q->nstash;
}

static unsigned udp_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct udp_dev *u = dev->priv;
	struct udp_queue *q = &u->q[queue];
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	unsigned have = stash_fill(dev, q, n);
	if (have > n)
		have = n; /* the stash may hold more from an earlier, larger burst */
	if (have == 0) {
		rf_stat_add(&q->st.rx_nobuf, 1);
		return 0;
	}
	struct rf_pktbuf **bufs = q->stash;
	for (unsigned i = 0; i < have; i++) {
		struct rf_pktbuf *b = bufs[i];
		q->iov[i].iov_base = rf_pktbuf_data(b);
		q->iov[i].iov_len = b->buf_len - b->data_off;
		q->msgs[i].msg_hdr = (struct msghdr){.msg_name = &b->peer,
						     .msg_namelen = sizeof(b->peer),
						     .msg_iov = &q->iov[i],
						     .msg_iovlen = 1};
	}
	int r = recvmmsg(q->fd, q->msgs, have, MSG_DONTWAIT, NULL);
	if (r <= 0)
		return 0; /* EAGAIN, or a connected socket's pending ICMP error: nothing to hand */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	unsigned got = 0, drops = 0;
	uint64_t bytes = 0;
	for (int i = 0; i < r; i++) {
		struct rf_pktbuf *b = bufs[i];
		if (q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
			drops++; /* longer than the buffer's room: never hand out a cut message */
			continue;
		}
		b->data_len = q->msgs[i].msg_len;
		b->peer_len = q->msgs[i].msg_hdr.msg_namelen;
		b->queue = (uint16_t)queue;
		b->flow = 0;
		b->timestamp_ns = now;
		bytes += b->data_len;
		pkts[got++] = b;
	}
	/* Keep what was not handed out (truncated ones and the unused tail) in the stash. */
	unsigned keep = 0;
	for (int i = 0; i < r; i++)
		if (q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
			bufs[keep++] = bufs[i];
	for (unsigned i = (unsigned)r; i < q->nstash; i++)
		bufs[keep++] = bufs[i];
	q->nstash = keep;
	rf_stat_add(&q->st.rx_pkts, got);
	rf_stat_add(&q->st.rx_bytes, bytes);
	if (drops)
		rf_stat_add(&q->st.rx_drops, drops);
	return got;
}

static unsigned udp_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct udp_dev *u = dev->priv;
	struct udp_queue *q = &u->q[queue];
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	for (unsigned i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		q->tx_iov[i].iov_base = rf_pktbuf_data(b);
		q->tx_iov[i].iov_len = b->data_len;
		q->tx_msgs[i].msg_hdr = (struct msghdr){
			.msg_name = u->connected || !b->peer_len ? NULL : &b->peer,
			.msg_namelen = u->connected ? 0 : b->peer_len,
			.msg_iov = &q->tx_iov[i],
			.msg_iovlen = 1};
	}
	unsigned done = 0, drops = 0;
	uint64_t bytes = 0;
	while (done < n) {
		if (!u->connected && !pkts[done]->peer_len) {
			drops++, done++; /* listen mode needs a destination: nothing to send to */
			continue;
		}
		int r = sendmmsg(q->fd, q->tx_msgs + done, n - done, MSG_DONTWAIT);
		if (r > 0) {
			for (int i = 0; i < r; i++)
				bytes += q->tx_iov[done + (unsigned)i].iov_len;
			done += (unsigned)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
			break; /* socket buffer full: the caller keeps the rest */
		drops++, done++; /* this message cannot be sent (bad peer, ICMP error): drop it */
	}
	rf_pktbuf_free_bulk(pkts, done);
	rf_stat_add(&q->st.tx_pkts, done - drops);
	rf_stat_add(&q->st.tx_bytes, bytes);
	if (drops)
		rf_stat_add(&q->st.tx_drops, drops);
	return done;
}

static int udp_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	struct udp_dev *u = dev->priv;
	return u->q[queue].fd;
}

static void udp_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct udp_dev *u = dev->priv;
	for (unsigned i = 0; i < u->nq; i++)
		rf_io_qstats_sum(&u->q[i].st, st);
}

static void udp_queue_stats(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	struct udp_dev *u = dev->priv;
	rf_io_qstats_sum(&u->q[queue].st, st);
}

const struct rf_io_ops rf_io_udp_ops = {
	RF_IO_OPS_ABI,
	.name = "udp",
	.usage = "udp:listen=IP:PORT | udp:connect=IP:PORT[,bind=IP:PORT] "
		 "[,busy_poll=US,rcvbuf=B,sndbuf=B,queues=N]  e.g. udp:listen=0.0.0.0:9000",
	.keys = RF_SOCK_KEYS,
	.max_queues = RF_IO_MAX_QUEUES,
	.probe = udp_probe,
	.open = udp_open,
	.rx_burst = udp_rx_burst,
	.tx_burst = udp_tx_burst,
	.wait_fd = udp_wait_fd,
	.stats = udp_stats,
	.queue_stats = udp_queue_stats,
	.close = udp_close,
	.caps = RF_IO_CAP_SPLIT_RXTX,
};
