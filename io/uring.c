/*
 * io/uring.c: the io_uring driver, "uring:udp:..." and "uring:tcp:...": the ring, the
 * provided buffers, completion dispatch and the ops; uring_udp.c and uring_tcp.c hold each
 * transport (uring_pvt.h what they share). TCP's framing, events and jumbo buffers are the
 * stream layer's (stream_pvt.h), the same as the tcp driver's.
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
 * re-armed after each completion, and says so once (rf_log).
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
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"
#include "uring_pvt.h"

void ur_stat_add(atomic_uint_fast64_t *c, uint64_t v)
{
	/* Relaxed: counters are read as snapshots by rf_io_stats_get; nothing is ordered by them. */
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

void ur_say_once_single_shot(const char *why)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set_explicit(&said, memory_order_relaxed))
		rf_log(RF_LOG_INFO, "uring: multishot receive unavailable (%s): using single-shot "
		       "receives, one request re-armed per message", why);
}

/* ---- submission ----------------------------------------------------------------------- */

int ur_submit(struct ur_dev *d)
{
	if (!d->unsubmitted)
		return 0;
	int r = io_uring_submit(&d->ring);
	if (r >= 0)
		d->unsubmitted = 0;
	return r < 0 ? r : 0;
}

struct io_uring_sqe *ur_sqe(struct ur_dev *d)
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
	if (ur_br_refill_udp(d) == 0)
		return rf_io_err(err, len, "uring: the packet-buffer pool is empty: give it more "
				 "buffers than bufs=%u", d->nbufs), -ENOBUFS;
	return 0;
}

/* ---- receive -------------------------------------------------------------------------- */

void ur_stage_push(struct ur_dev *d, struct rf_pktbuf *b)
{
	d->stage[(d->stage_head + d->stage_n) % UR_STAGE] = b;
	d->stage_n++;
}

/* ---- send completion, TCP send -------------------------------------------------------- */

/* Handles completions until the stage is nearly full (UDP) or none are left; re-arms. */
static void ur_reap(struct ur_dev *d)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	io_uring_for_each_cqe(&d->ring, head, cqe) {
		if (d->stage_n >= UR_STAGE)
			break;
		switch (ud_kind(cqe->user_data)) {
		case UR_RX: ur_udp_rx_cqe(d, cqe); break;
		case UR_ACCEPT: ur_accept_cqe(d, cqe); break;
		case UR_TRECV: ur_tcp_recv_cqe(d, cqe); break;
		case UR_TSEND: ur_tcp_send_cqe(d, cqe); break;
		case UR_USEND: ur_udp_send_cqe(d, cqe); break;
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
		ur_br_refill_udp(d);
		if (!d->rx_armed && d->nmissing < d->nbufs)
			ur_arm_udp_rx(d);
	} else {
		ur_tcp_rearm(d);
	}
}

/* ---- ops ------------------------------------------------------------------------------ */

static unsigned ur_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			    unsigned n)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	unsigned got = 0;
	if (d->tcp) { /* counts its own messages (events are not) */
		ur_reap(d);
		got = ur_tcp_rx(d, pkts, n);
		ur_submit(d);
		return got;
	}
	if (d->stage_n < n)
		ur_reap(d);
	while (got < n && d->stage_n) {
		pkts[got++] = d->stage[d->stage_head];
		d->stage_head = (d->stage_head + 1) % UR_STAGE;
		d->stage_n--;
	}
	ur_submit(d);
	if (got) {
		uint64_t bytes = 0;
		for (unsigned i = 0; i < got; i++)
			bytes += pkts[i]->data_len;
		ur_stat_add(&d->rx_pkts, got);
		ur_stat_add(&d->rx_bytes, bytes);
	}
	return got;
}

static unsigned ur_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			    unsigned n)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	unsigned k = 0;
	uint64_t bytes = 0, sent = 0;
	ur_reap(d);
	if (d->tcp) { /* counts its own */
		k = ur_tcp_tx(d, pkts, n);
		ur_submit(d);
		return k;
	}
	k = ur_udp_tx(d, pkts, n, &sent, &bytes);
	ur_submit(d);
	ur_stat_add(&d->tx_pkts, sent);
	ur_stat_add(&d->tx_bytes, bytes);
	return k;
}

static int ur_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	(void)queue;
	return ((struct ur_dev *)dev->priv)->ring.ring_fd;
}

static int ur_wait(struct rf_io_dev *dev, unsigned queue, int timeout_ms)
{
	struct ur_dev *d = dev->priv;
	(void)queue;
	if (d->stage_n || io_uring_cq_ready(&d->ring))
		return 1;
	if (d->tcp && ur_tcp_ready(d)) /* a whole frame (or an event) already reaped */
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

/* One queue (max_queues 1): the queue's counters are the device's. */
static void ur_queue_stats(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	(void)queue;
	ur_stats(dev, st);
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
			ur_udp_send_cqe(d, cqe);
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
	ur_tcp_free(d);
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
	/* io.c accepted every key of the driver: refuse the TCP-only ones for UDP. */
	for (unsigned i = 0; !tcp && i < cfg->nkeys; i++) {
		const char *k = cfg->kv[i].key, *tk = UR_TCP_KEYS;
		size_t kl = strlen(k);
		for (const char *c = tk; *c;) {
			size_t n = strcspn(c, ",");
			if (n == kl && strncmp(c, k, n) == 0)
				return rf_io_err(err, len, "uring: %s= is for uring:tcp only", k);
			c += n + (c[n] == ',');
		}
	}

	struct ur_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return rf_io_err(err, len, "uring: out of memory"), -ENOMEM;
	d->fd = -1;
	d->dev = dev;
	d->tcp = tcp;
	d->listen = rl == 0;
	d->sqpoll = sqpoll;
	d->multishot = multishot;
	d->pool = dev->pool;
	d->nbufs = nbufs;
	if (!multishot)
		ur_say_once_single_shot("multishot=0 was given");
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

	if (tcp) { /* the tcp driver's socket, keys and stream layer (uring_tcp.c) */
		if ((r = ur_tcp_open(d, cfg, err, len)) < 0)
			goto fail;
		goto sock_done;
	}
	d->fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
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
		if (bind(d->fd, (struct sockaddr *)&ss, sl) < 0) {
			r = -errno;
			rf_io_err(err, len, "uring: cannot listen on %s: %s%s", rf_io_config_get(cfg, "listen"),
				  strerror(errno), errno == EADDRINUSE ? " (pick another port or stop "
				  "whatever uses it)" : "");
			goto fail;
		}
	} else if (connect(d->fd, (struct sockaddr *)&ss, sl) < 0) {
		r = -errno;
		rf_io_err(err, len, "uring: cannot connect to %s: %s (is the server listening?)",
			  rf_io_config_get(cfg, "connect"), strerror(errno));
		goto fail;
	}
	d->connected = !d->listen;
sock_done:
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
		ur_arm_udp_rx(d);
	} else {
		ur_tcp_start(d);
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
	RF_IO_OPS_ABI,
	.name = "uring",
	.usage = "uring:udp|tcp:listen=IP:PORT|connect=IP:PORT[,sqpoll=1][,entries=256][,bufs=1024]"
		 "[,multishot=0][,rcvbuf=B,sndbuf=B][,taskrun=coop|signal]; uring:tcp also takes the tcp "
		 "driver's keys (max_conns,timeout_ms,nodelay,bind,busy_poll,framing,frame_off,frame_min,"
		 "events)  e.g. uring:udp:listen=0.0.0.0:9000",
	.keys = "listen,connect,sqpoll,entries,bufs,multishot,rcvbuf,sndbuf,taskrun," UR_TCP_KEYS,
	.transports = "udp,tcp",
	.max_queues = 1,
	.probe = ur_probe,
	.open = ur_open,
	.rx_burst = ur_rx_burst,
	.tx_burst = ur_tx_burst,
	.wait_fd = ur_wait_fd,
	.wait = ur_wait,
	.stats = ur_stats,
	.queue_stats = ur_queue_stats,
	.close = ur_close,
};
