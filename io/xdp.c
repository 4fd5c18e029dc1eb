/*
 * io/xdp.c: the AF_XDP driver ("xdp:dev=veth1,queue=0,mode=skb,port=9000").
 *
 * The one idea: the pktbuf pool *is* the UMEM. The pool's mempool region (one contiguous,
 * page-aligned block, hugepages when reserved) is registered with the kernel, so a buffer
 * put in the fill ring comes back from the rx ring holding a frame, is handed to the app as
 * is (data_off moved past Ethernet/IPv4/UDP), and goes out again from the same memory when
 * the app transmits it: no copy in ringflow (the kernel copies in copy mode, see below).
 * A UMEM offset names its buffer by division: object i starts at i * stride.
 *
 * Per queue (one poller each): one AF_XDP socket on (dev, queue + i), its own fill/comp
 * rings, its own io/net context (ARP, neighbours). The kernel writes a received frame 256
 * bytes (XDP_PACKET_HEADROOM) after the fill address, which is the buffer's data area; the
 * chunk is 2048 bytes, so frames up to 1792 bytes arrive and pools need data_room >= 1920.
 * Copy vs zero-copy: zero-copy is tried first and the choice is printed at open (veth and
 * skb mode only do copy). Buffers of another pool are copied into ours on transmit (xstat
 * tx_copies); devices opened on the same pool share one UMEM (xsk_port.c), so a frame
 * received on one is sent by another from where it lies.
 *
 * Frame mode (frames=1): the XDP program redirects every frame of the bound queues, rx hands
 * the whole frame over (data at the destination MAC) and tx sends the buffer's bytes as they
 * are. Message mode (the default): only UDP to ip:port and ARP for ip come to us; io/net
 * strips and builds the headers and answers ARP.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <ringflow/mempool.h>
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io/io_pvt.h"
#include "io/net/net.h"
#include "io/xdp/offload_pvt.h"
#include "io/xdp/xsk_port.h"

#define XDP_CHUNK 2048u
#define XDP_KERNEL_HEADROOM 256u /* XDP_PACKET_HEADROOM */
#define XDP_MIN_ROOM (XDP_CHUNK - RF_PKTBUF_HEADROOM)
#define REFILL_BATCH 64u
#define ETH_HDR 14u
#define VLAN_HDR 4u

/* Driver counters beyond rf_io_qstats (xstats), written by the queue's thread only. */
struct xdp_xst {
	_Atomic uint64_t tx_copies;   /* another pool's buffer copied into our UMEM */
	_Atomic uint64_t tx_no_neigh; /* message turned into an ARP request (not sent) */
	_Atomic uint64_t tx_runt, tx_too_long; /* frame mode: refused frames (in tx_drops) */
	_Atomic uint64_t rx_runt;     /* frame mode: shorter than an Ethernet header */
	_Atomic uint64_t rx_wakeups, tx_wakeups; /* syscalls made because the kernel asked */
	_Atomic uint64_t rx_busy_polls; /* busy_poll=: recvfrom calls that polled the NAPI */
};

struct xdp_queue {
	RF_CACHE_ALIGNED struct rf_xsk_port *port; /* own line: queues run on different cores */
	struct rf_net_ctx net;
	unsigned in_fill; /* buffers the kernel holds in this queue's fill ring */
	unsigned in_tx;   /* buffers queued for tx, not yet completed */
	struct rf_io_qstats st; /* written by this queue's thread only */
	struct xdp_xst xst;
};

struct xdp_dev {
	struct rf_xsk_prog prog;
	struct rf_xdp_ofl *ofl; /* the offload table over prog's maps (ringflow/offload.h) */
	char ifname[IF_NAMESIZE];
	int ctl_fd;         /* an AF_INET socket in the device's netns: MTU, link state */
	unsigned max_frame; /* frame mode: longest frame tx takes (MTU + Ethernet + VLAN) */
	char *base;    /* UMEM = the pool's mempool region */
	size_t len, stride;
	struct rf_mempool *mp; /* the pool's mempool, whose region this is */
	uint64_t inv;  /* 2^64 / stride rounded up: obj_index() without a divide (0: divide) */
	unsigned nq;
	unsigned busy_us, busy_budget; /* busy_poll=, busy_budget= (0: no busy polling) */
	struct rf_xsk_ring_sizes sz;
	/* held[i]: buffer i is in a fill or tx ring, i.e. the kernel has it (freed at close).
	 * Each byte is written only by the queue that owns the buffer at that moment. */
	uint8_t *held;
	struct xdp_queue q[];
};


__extension__ typedef unsigned __int128 xdp_u128;

/* The buffer index of a UMEM offset: addr / stride. Every frame needs it several times
 * (rx, refill, tx, completion), and a 64-bit divide costs tens of cycles; with a UMEM under
 * 4 GiB the multiply by the rounded-up reciprocal is exact for every offset (Lemire, Kaser
 * and Kurz, "Faster remainder by direct computation", 2019: exact for 32-bit operands). */
static inline uint64_t obj_index(const struct xdp_dev *x, uint64_t addr)
{
	if (rf_likely(x->inv))
		return (uint64_t)(((xdp_u128)addr * x->inv) >> 64);
	return addr / x->stride;
}

static inline struct rf_pktbuf *buf_of(const struct xdp_dev *x, uint64_t addr)
{
	return (struct rf_pktbuf *)(x->base + obj_index(x, addr) * x->stride);
}

static inline uint64_t addr_of(const struct xdp_dev *x, const void *p)
{
	return (uint64_t)((const char *)p - x->base);
}

/* Give the kernel up to `want` more empty buffers (batched; all or none per batch). */
static void refill(struct rf_io_dev *dev, struct xdp_queue *q, unsigned want)
{
	struct xdp_dev *x = dev->priv;
	struct rf_pktbuf *b[REFILL_BATCH];
	uint64_t a[REFILL_BATCH];
	unsigned n, i;

	while (want >= 8) {
		n = want < REFILL_BATCH ? want : REFILL_BATCH;
		n = rf_xsk_fill_free(q->port, n) < n ? rf_xsk_fill_free(q->port, n) : n;
		if (n == 0 || rf_pktbuf_alloc_bulk(dev->pool, b, n) != 0)
			return;
		for (i = 0; i < n; i++) {
			a[i] = addr_of(x, b[i]->buf_addr);
			x->held[obj_index(x, a[i])] = 1;
		}
		if (rf_xsk_fill(q->port, a, n) != n) {
			for (i = 0; i < n; i++)
				x->held[obj_index(x, a[i])] = 0;
			rf_pktbuf_free_bulk(b, n);
			return;
		}
		q->in_fill += n;
		want -= n;
	}
}

/* Take transmitted buffers back and free them. Every one is a buffer of the UMEM, i.e. of
 * our pool's mempool: they go straight back to it (what rf_pktbuf_free_bulk does for a
 * ringflow pool, without reading each buffer's pool pointer: a cache line per frame the
 * completion would otherwise touch; a debug mempool still checks every put). */
static void reap(struct rf_io_dev *dev, struct xdp_queue *q)
{
	struct xdp_dev *x = dev->priv;
	void *b[REFILL_BATCH];
	uint64_t a[REFILL_BATCH];
	unsigned n, i;

	while (q->in_tx && (n = rf_xsk_complete(q->port, a, REFILL_BATCH)) != 0) {
		for (i = 0; i < n; i++) {
			uint64_t k = obj_index(x, a[i]);
			b[i] = x->base + k * x->stride;
			x->held[k] = 0;
		}
		rf_mempool_put_bulk(x->mp, b, n);
		q->in_tx -= n;
	}
}

static unsigned xdp_tx_frames(struct xdp_dev *x, struct xdp_queue *q, const struct xdp_desc *d,
			      unsigned n)
{
	unsigned k = rf_xsk_tx(q->port, d, n), i;
	for (i = 0; i < k; i++)
		x->held[obj_index(x, d[i].addr)] = 1;
	q->in_tx += k;
	return k;
}

static unsigned xdp_rx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct xdp_dev *x = dev->priv;
	struct xdp_queue *q = &x->q[qi];
	struct xdp_desc d[RF_IO_MAX_BURST], arp[RF_IO_MAX_BURST];
	struct rf_pktbuf *drop[RF_IO_MAX_BURST];
	unsigned got, i, k = 0, na = 0, nd = 0;
	uint64_t bytes = 0;

	reap(dev, q);
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	got = rf_xsk_rx(q->port, d, n);
	q->in_fill -= got;
	/* Each frame's first line was written by the CPU that ran the receive NAPI (in copy mode
	 * the kernel copied it into the UMEM there): ask for all of them at once, so whoever
	 * reads them next (the app's parse, or the kernel's copy when the frame is sent on)
	 * finds them here instead of waiting for each in turn (docs/backends.md). */
	for (i = 0; i < got; i++)
		__builtin_prefetch((const uint8_t *)x->base + d[i].addr, 0, 3);
	for (i = 0; i < got; i++) {
		struct rf_pktbuf *b = buf_of(x, d[i].addr);
		x->held[obj_index(x, d[i].addr)] = 0;
		uint8_t *frame = (uint8_t *)x->base + d[i].addr;
		struct rf_net_rx_info in;

		if (dev->frames) { /* the whole frame, as it came */
			if (rf_unlikely(d[i].len < ETH_HDR)) {
				rf_stat_add(&q->xst.rx_runt, 1);
				rf_stat_add(&q->st.rx_drops, 1);
				drop[nd++] = b;
				continue;
			}
			b->data_off = (uint16_t)(frame - (uint8_t *)b->buf_addr);
			b->data_len = d[i].len;
			b->queue = (uint16_t)qi;
			b->peer_len = 0;
			bytes += d[i].len;
			pkts[k++] = b;
			continue;
		}
		switch (rf_net_rx(&q->net, frame, d[i].len, &in)) {
		case RF_NET_UDP:
			b->data_off = (uint16_t)((frame - (uint8_t *)b->buf_addr) + in.payload_off);
			b->data_len = in.payload_len;
			b->queue = (uint16_t)qi;
			memset(&b->peer, 0, sizeof(b->peer));
			b->peer.in.sin_family = AF_INET;
			b->peer.in.sin_addr.s_addr = in.src_ip;
			b->peer.in.sin_port = in.src_port;
			b->peer_len = sizeof(struct sockaddr_in);
			bytes += in.payload_len;
			pkts[k++] = b;
			break;
		case RF_NET_ARP_REPLY: /* the frame is now our answer: send it from where it is */
			arp[na++] = d[i];
			break;
		case RF_NET_DROP:
			rf_stat_add(&q->st.rx_drops, 1);
			/* fallthrough */
		case RF_NET_IGNORE:
			drop[nd++] = b;
			break;
		}
	}
	if (na) {
		unsigned sent = xdp_tx_frames(x, q, arp, na);
		for (i = sent; i < na; i++)
			drop[nd++] = buf_of(x, arp[i].addr);
	}
	if (nd)
		rf_pktbuf_free_bulk(drop, nd);
	if (k) {
		rf_stat_add(&q->st.rx_pkts, k);
		rf_stat_add(&q->st.rx_bytes, bytes);
	}
	if (q->in_fill < x->sz.fill)
		refill(dev, q, x->sz.fill - q->in_fill);
	if (got == 0) {
		if (rf_xsk_rx_busy_poll(q->port))
			rf_stat_add(&q->xst.rx_busy_polls, 1);
		else if (rf_xsk_rx_wakeup(q->port))
			rf_stat_add(&q->xst.rx_wakeups, 1);
	}
	return k;
}

/* A buffer that is not UMEM memory, copied into one of ours (the only copy this driver
 * makes), or NULL when our pool is empty. The original is freed. */
static struct rf_pktbuf *copy_in(struct rf_io_dev *dev, struct xdp_queue *q, struct rf_pktbuf *b)
{
	struct rf_pktbuf *c = rf_pktbuf_alloc(dev->pool);
	if (!c)
		return NULL;
	memcpy(rf_pktbuf_data(c), rf_pktbuf_data(b), b->data_len);
	c->data_len = b->data_len;
	c->peer = b->peer;
	c->peer_len = b->peer_len;
	rf_pktbuf_free(b);
	rf_stat_add(&q->xst.tx_copies, 1);
	return c;
}

static unsigned xdp_tx_frames_burst(struct rf_io_dev *dev, struct xdp_queue *q,
				    struct rf_pktbuf **pkts, unsigned n)
{
	struct xdp_dev *x = dev->priv;
	struct xdp_desc d[RF_IO_MAX_BURST];
	struct rf_pktbuf *bad[RF_IO_MAX_BURST];
	unsigned i, nd = 0, nbad = 0;
	uint64_t bytes = 0;

	for (i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		if (rf_unlikely(b->data_len < ETH_HDR || b->data_len > x->max_frame)) {
			rf_stat_add(b->data_len < ETH_HDR ? &q->xst.tx_runt : &q->xst.tx_too_long, 1);
			bad[nbad++] = b;
			continue;
		}
		if (rf_unlikely(b->pool != dev->pool)) {
			struct rf_pktbuf *c = copy_in(dev, q, b);
			if (!c)
				break; /* the caller keeps pkts[i..n) */
			b = c;
		}
		d[nd].addr = addr_of(x, rf_pktbuf_data(b));
		d[nd].len = b->data_len;
		d[nd].options = 0;
		bytes += b->data_len;
		nd++;
	}
	if (nd)
		xdp_tx_frames(x, q, d, nd);
	if (nbad)
		rf_pktbuf_free_bulk(bad, nbad);
	rf_stat_add(&q->st.tx_drops, nbad);
	rf_stat_add(&q->st.tx_pkts, nd);
	rf_stat_add(&q->st.tx_bytes, bytes);
	return i;
}

static unsigned xdp_tx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct xdp_dev *x = dev->priv;
	struct xdp_queue *q = &x->q[qi];
	struct xdp_desc d[RF_IO_MAX_BURST];
	struct rf_pktbuf *bad[RF_IO_MAX_BURST];
	unsigned i, nd = 0, nbad = 0, room;
	uint64_t bytes = 0;

	reap(dev, q);
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	/* Take only what the tx ring has room for: every frame built below is then queued,
	 * and pkts[i..n) stay the caller's. (We are the ring's only producer.) */
	room = rf_xsk_tx_free(q->port, n);
	if (n > room)
		n = room;
	if (dev->frames)
		return xdp_tx_frames_burst(dev, q, pkts, n);
	unsigned nneigh = 0;
	for (i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		uint8_t *payload;
		int len;

		if (b->peer_len == 0 || b->peer.sa.sa_family != AF_INET ||
		    b->data_len > XDP_CHUNK - XDP_KERNEL_HEADROOM - RF_NET_HDR_LEN) {
			bad[nbad++] = b; /* no IPv4 peer or larger than a frame: counted, dropped */
			continue;
		}
		if (b->pool != dev->pool || b->data_off < RF_NET_HDR_LEN) {
			/* Not UMEM memory (or no headroom): copy into one of ours. */
			struct rf_pktbuf *c = copy_in(dev, q, b);
			if (!c)
				break; /* the caller keeps pkts[i..n) */
			b = c;
		}
		payload = rf_pktbuf_data(b);
		len = rf_net_tx_udp(&q->net, payload, b->data_len, b->peer.in.sin_addr.s_addr,
				    b->peer.in.sin_port);
		if (len < 0) { /* unknown neighbour: the buffer now holds an ARP request */
			len = -len;
			nneigh++; /* the message is lost: a drop, not a send */
		} else {
			bytes += b->data_len;
		}
		d[nd].addr = addr_of(x, payload - RF_NET_HDR_LEN);
		d[nd].len = (uint32_t)len;
		d[nd].options = 0;
		nd++;
	}
	if (nd)
		xdp_tx_frames(x, q, d, nd);
	if (nbad)
		rf_pktbuf_free_bulk(bad, nbad);
	rf_stat_add(&q->st.tx_drops, nbad + nneigh);
	rf_stat_add(&q->xst.tx_no_neigh, nneigh);
	rf_stat_add(&q->st.tx_pkts, nd - nneigh);
	rf_stat_add(&q->st.tx_bytes, bytes);
	return i;
}

static int xdp_wait_fd(struct rf_io_dev *dev, unsigned qi)
{
	struct xdp_dev *x = dev->priv;
	return rf_xsk_port_fd(x->q[qi].port);
}

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* One queue's counters: ours, plus what the kernel dropped before its socket's ring (too
 * long for a chunk, ring full): frames meant for us, so receive drops too. */
static void xdp_queue_stats(struct rf_io_dev *dev, unsigned i, struct rf_io_stats *st)
{
	struct xdp_dev *x = dev->priv;
	struct xdp_statistics ks;
	rf_io_qstats_sum(&x->q[i].st, st);
	if (rf_xsk_port_stats(x->q[i].port, &ks))
		st->rx_drops += ks.rx_dropped + ks.rx_ring_full;
}

static void xdp_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct xdp_dev *x = dev->priv;
	for (unsigned i = 0; i < x->nq; i++)
		xdp_queue_stats(dev, i, st);
}

static unsigned xdp_xstats(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n)
{
	struct xdp_dev *x = dev->priv;
	uint64_t v[18] = {0};
	unsigned i = 0;

	for (unsigned qi = 0; qi < x->nq; qi++) {
		const struct xdp_queue *q = &x->q[qi];
		struct xdp_statistics ks;
		rf_xsk_port_stats(q->port, &ks);
		v[0] += ld(&q->xst.tx_copies);
		v[1] += ld(&q->xst.tx_no_neigh);
		v[2] += ld(&q->xst.tx_runt);
		v[3] += ld(&q->xst.tx_too_long);
		v[4] += ld(&q->xst.rx_runt);
		v[5] += ld(&q->xst.rx_wakeups);
		v[6] += rf_xsk_port_tx_kicks(q->port);
		v[7] += ks.rx_dropped;
		v[8] += ks.rx_ring_full;
		v[9] += ks.rx_fill_ring_empty_descs;
		v[10] += ks.rx_invalid_descs;
		v[11] += ks.tx_invalid_descs;
		v[12] += ks.tx_ring_empty_descs;
		v[13] += ld(&q->net.st.rx_csum_partial);
		v[14] += ld(&q->net.st.arp_replied);
		v[15] += ld(&q->net.st.rx_ignored);
		v[16] += ld(&q->net.st.rx_bad_udp_csum);
		v[17] += ld(&q->xst.rx_busy_polls);
	}
	i = rf_io_xstat_put(xs, n, i, "tx_copies", v[0]);
	i = rf_io_xstat_put(xs, n, i, "tx_no_neigh", v[1]);
	i = rf_io_xstat_put(xs, n, i, "tx_runt", v[2]);
	i = rf_io_xstat_put(xs, n, i, "tx_too_long", v[3]);
	i = rf_io_xstat_put(xs, n, i, "rx_runt", v[4]);
	i = rf_io_xstat_put(xs, n, i, "rx_wakeup_kicks", v[5]);
	i = rf_io_xstat_put(xs, n, i, "tx_wakeup_kicks", v[6]);
	i = rf_io_xstat_put(xs, n, i, "rx_busy_polls", v[17]);
	i = rf_io_xstat_put(xs, n, i, "rx_kernel_dropped", v[7]);
	i = rf_io_xstat_put(xs, n, i, "rx_ring_full", v[8]);
	i = rf_io_xstat_put(xs, n, i, "rx_fill_ring_empty", v[9]);
	i = rf_io_xstat_put(xs, n, i, "rx_invalid_descs", v[10]);
	i = rf_io_xstat_put(xs, n, i, "tx_invalid_descs", v[11]);
	i = rf_io_xstat_put(xs, n, i, "tx_ring_empty", v[12]);
	i = rf_io_xstat_put(xs, n, i, "rx_csum_partial", v[13]);
	i = rf_io_xstat_put(xs, n, i, "arp_replied", v[14]);
	i = rf_io_xstat_put(xs, n, i, "rx_ignored", v[15]);
	i = rf_io_xstat_put(xs, n, i, "rx_bad_udp_csum", v[16]);
	return i;
}

static int xdp_link_up(struct rf_io_dev *dev)
{
	struct xdp_dev *x = dev->priv;
	return rf_net_if_running(x->ctl_fd, x->ifname);
}

static void xdp_close(struct rf_io_dev *dev)
{
	struct xdp_dev *x = dev->priv;
	if (!x)
		return;
	/* Sockets first (sharers before the UMEM owner, queue 0), then the program; then the
	 * buffers the kernel still had go back to the pool. */
	for (unsigned i = x->nq; i-- > 0;)
		rf_xsk_port_close(x->q[i].port);
	rf_xdp_ofl_destroy(x->ofl);
	rf_xsk_prog_detach(&x->prog);
	for (size_t i = 0; x->held && i < x->len / x->stride; i++)
		if (x->held[i])
			rf_pktbuf_free((struct rf_pktbuf *)(x->base + i * x->stride));
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	free(x->held);
	free(x);
	dev->priv = NULL;
}

/*
 * Default ring sizes, from the pool: the fill ring takes up to a quarter of the buffers the
 * pool has free at open, per queue (the refill keeps it full from the pool, so a bigger one
 * would starve the app and the other ports; counting what is free, not the pool's size, lets
 * each port opened later on the same pool take a quarter of what is left), at least 1024 and
 * at most 4096; rx, tx and completion are as big as the fill ring, at most 2048. A fresh pool
 * of 16384 buffers on one queue gets testpmd's net_af_xdp shape (fill 4096, the others 2048);
 * 8192 gets 2048 throughout; 4096 or fewer, 1024 (the size before). Rings of 1024 cost
 * ringflow-l2fwd half its zero-loss rate on the veth bed: a poller off its CPU for a moment
 * loses whatever does not fit (docs/forwarding-benchmark.md).
 */
#define FILL_DEFAULT_MIN 1024u
#define FILL_DEFAULT_MAX 4096u
#define RING_DEFAULT_MAX 2048u

static uint32_t default_fill(unsigned pool_n, unsigned nqueues)
{
	uint64_t share = pool_n / 4 / (nqueues ? nqueues : 1), f = FILL_DEFAULT_MIN;
	while (f * 2 <= share && f * 2 <= FILL_DEFAULT_MAX)
		f *= 2;
	return (uint32_t)f;
}

static int ring_size(const struct rf_io_config *cfg, const char *key, uint32_t dflt,
		     uint32_t *out, char *err, size_t len)
{
	int rc = rf_io_config_get_u32(cfg, key, dflt, 64, 8192, out, err, len);
	if (rc == 0 && !rf_is_power_of_2(*out))
		return rf_io_err(err, len, "xdp: %s=%u: must be a power of two (64..8192)", key,
				 *out);
	return rc;
}

/* Busy polling takes the receive NAPI over from softirq only while the device defers it
 * (napi_defer_hard_irqs and gro_flush_timeout both set); otherwise the kernel still runs it
 * between our polls. Says so once (the app's log), and what to set. */
static void busy_poll_hint(const char *ifname)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/net/%s/napi_defer_hard_irqs", ifname);
	long defer = rf_io_read_long(path);
	snprintf(path, sizeof(path), "/sys/class/net/%s/gro_flush_timeout", ifname);
	long flush = rf_io_read_long(path);
	if (defer == 0 || flush == 0)
		rf_log(RF_LOG_WARN, "xdp: %s: busy_poll= is set but napi_defer_hard_irqs=%ld "
		       "gro_flush_timeout=%ld: the kernel still runs the receive NAPI between polls "
		       "(set both, e.g. 2 and 200000, in /sys/class/net/%s/)", ifname, defer, flush,
		       ifname);
}

static int xdp_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	struct rf_mempool *mp = rf_pktbuf_pool_mempool(dev->pool);
	const char *ifname = rf_io_config_get(cfg, "dev"), *ipstr = rf_io_config_get(cfg, "ip");
	uint32_t queue, port, ip = 0, busy_us, busy_budget;
	unsigned mode;
	uint8_t mac[6];
	struct xdp_dev *x;
	void *base;
	int rc;

	if (!ifname)
		return rf_io_err(err, len, "xdp: dev= is required (e.g. %s)", rf_io_xdp_ops.usage);
	if ((rc = rf_io_config_get_u32(cfg, "queue", 0, 0, 1023, &queue, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "port", 0, 1, 65535, &port, err, len)) ||
	    (rc = rf_io_config_get_enum(cfg, "mode", "auto|native|skb", 0, &mode, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "busy_poll", 0, 0, 1000000, &busy_us, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "busy_budget", 64, 1, 1024, &busy_budget, err, len)))
		return rc;
	if (port == 0 && !dev->frames)
		return rf_io_err(err, len, "xdp: port= is required: the UDP port to take over "
				 "(or frames=1 for whole frames)");
	if (ipstr && inet_pton(AF_INET, ipstr, &ip) != 1)
		return rf_io_err(err, len, "xdp: ip=%s: not an IPv4 address", ipstr);
	if (!mp)
		return rf_io_err(err, len, "xdp: the buffer pool must be a ringflow mempool pool "
				 "(rf_pktbuf_pool_create): its region becomes the UMEM");
	if (rf_pktbuf_pool_data_room(dev->pool) < XDP_MIN_ROOM)
		return rf_io_err(err, len, "xdp: pool data_room %u too small: AF_XDP frames need "
				 ">= %u (create the pool with data_room 2048)",
				 rf_pktbuf_pool_data_room(dev->pool), XDP_MIN_ROOM);
	x = calloc(1, sizeof(*x) + dev->nqueues * sizeof(x->q[0]));
	if (!x)
		return rf_io_err(err, len, "xdp: out of memory");
	x->ctl_fd = -1;
	x->busy_us = busy_us;
	x->busy_budget = busy_budget;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	uint32_t fill0 = default_fill(rf_mempool_avail_count(mp), dev->nqueues);
	uint32_t ring0 = fill0 < RING_DEFAULT_MAX ? fill0 : RING_DEFAULT_MAX;
	if ((rc = ring_size(cfg, "fill", fill0, &x->sz.fill, err, len)) ||
	    (rc = ring_size(cfg, "comp", ring0, &x->sz.comp, err, len)) ||
	    (rc = ring_size(cfg, "rx", ring0, &x->sz.rx, err, len)) ||
	    (rc = ring_size(cfg, "tx", ring0, &x->sz.tx, err, len)))
		goto fail_free;
	if (if_nametoindex(ifname) == 0) {
		rc = -ENODEV;
		rf_io_err(err, len, "xdp: interface '%s' not found (check `ip link show`; a netns "
			  "interface needs the process inside that netns)", ifname);
		goto fail_free;
	}
	if (dev->frames)
		ip = 0; /* frame mode: no address of ours, the kernel's stays the kernel's */
	if ((rc = rf_net_if_lookup(ifname, mac, dev->frames ? NULL : &ip)) != 0 ||
	    (ip == 0 && !dev->frames)) {
		rf_io_err(err, len, "xdp: %s has no IPv4 address: give ip=A.B.C.D (ringflow "
			  "answers ARP for it)", ifname);
		rc = rc ? rc : -EINVAL;
		goto fail_free;
	}
	x->ctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rc = x->ctl_fd < 0 ? -errno : rf_net_if_mtu(x->ctl_fd, ifname);
	if (rc < 0) {
		rf_io_err(err, len, "xdp: reading the MTU of %s failed: %s", ifname, strerror(-rc));
		goto fail_free;
	}
	dev->mtu = (unsigned)rc;
	memcpy(dev->mac, mac, 6);
	dev->has_mac = true;
	/* What one frame may carry: the interface's MTU plus Ethernet and one VLAN tag, and no
	 * more than a UMEM chunk holds. */
	x->max_frame = dev->mtu + ETH_HDR + VLAN_HDR;
	if (x->max_frame > XDP_CHUNK - XDP_KERNEL_HEADROOM)
		x->max_frame = XDP_CHUNK - XDP_KERNEL_HEADROOM;
	rf_mempool_region(mp, &base, &x->len, &x->stride);
	x->base = base;
	x->mp = mp;
	x->inv = x->len <= UINT32_MAX && x->stride <= UINT32_MAX ? UINT64_MAX / x->stride + 1 : 0;
	/* The kernel pins the UMEM; fork() would then have to copy it eagerly, and with
	 * hugepages that needs free hugepages, or fork fails (system(), a test's client).
	 * Children never need our frames: keep the region out of them. */
	madvise(x->base, x->len, MADV_DONTFORK);
	x->held = calloc(x->len / x->stride + 1, 1);
	if (!x->held) {
		rc = rf_io_err(err, len, "xdp: out of memory");
		goto fail_free;
	}
	rc = rf_xsk_prog_attach(&x->prog, ifname, mode, ip, htons((uint16_t)port),
				dev->frames ? RF_XSK_PROG_ALL_FRAMES : 0, err, len);
	if (rc != 0)
		goto fail_free;
	x->ofl = rf_xdp_ofl_create(&x->prog); /* NULL: the port works, without offload */
	dev->priv = x;
	for (x->nq = 0; x->nq < dev->nqueues; x->nq++) {
		struct xdp_queue *q = &x->q[x->nq];
		rc = rf_xsk_port_open(&q->port, &x->prog, queue + x->nq, x->base, x->len, XDP_CHUNK,
				      &x->sz, err, len);
		if (rc == 0 && x->busy_us)
			rc = rf_xsk_port_busy_poll(q->port, x->busy_us, x->busy_budget, err, len);
		if (rc != 0)
			goto fail_close;
		rf_net_init(&q->net, mac, ip, htons((uint16_t)port));
		refill(dev, q, x->sz.fill);
		if (q->in_fill == 0) {
			rc = -ENOBUFS;
			rf_io_err(err, len, "xdp: the pool has no free buffers for the fill ring");
			goto fail_close;
		}
	}
	if (x->busy_us)
		busy_poll_hint(ifname);
	rf_log(RF_LOG_INFO, "xdp: %s queue %u%s%.0u: %s, %s mode, %s%s; rings fill=%u comp=%u rx=%u tx=%u; "
		"UMEM %zu KiB on %s", ifname, queue, dev->nqueues > 1 ? "-" : "",
		dev->nqueues > 1 ? queue + dev->nqueues - 1 : 0,
		dev->frames ? "frames" : "messages", x->prog.xdp_flags & XDP_FLAGS_SKB_MODE ? "skb" : "native",
		rf_xsk_port_zerocopy(x->q[0].port) ? "zero-copy" : "copy",
		rf_xsk_port_zerocopy(x->q[0].port) ? "" : " (zero-copy refused by the driver)",
		x->sz.fill, x->sz.comp, x->sz.rx, x->sz.tx, x->len >> 10,
		rf_mempool_on_hugepages(mp) ? "hugepages" : "normal pages (no hugepages reserved)");
	return 0;
fail_close:
	xdp_close(dev);
	return rc;
fail_free:
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	free(x->held);
	free(x);
	return rc;
}

struct rf_xdp_ofl *rf_xdp_ofl_of(struct rf_io_dev *dev)
{
	if (!dev || dev->ops != &rf_io_xdp_ops || !dev->priv)
		return NULL;
	return ((struct xdp_dev *)dev->priv)->ofl;
}

/* Usable when this process may load BPF programs and attach them (CAP_BPF or
 * CAP_SYS_ADMIN, and CAP_NET_ADMIN). */
static int xdp_probe(char *why, size_t len)
{
	if (!rf_xsk_may_load_bpf()) {
		snprintf(why, len, "needs CAP_NET_ADMIN and CAP_BPF: run as root or `setcap "
			 "cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,cap_ipc_lock+ep <binary>`");
		return -EPERM;
	}
	return 0;
}

const struct rf_io_ops rf_io_xdp_ops = {
	RF_IO_OPS_ABI,
	.name = "xdp",
	.usage = "xdp:dev=IFACE,port=N|frames=1[,ip=A.B.C.D,queue=Q,queues=K,mode=auto|native|skb,"
		 "fill=N,comp=N,rx=N,tx=N (default from the pool),busy_poll=USECS,busy_budget=N]  "
		 "e.g. xdp:dev=veth1,mode=skb,port=9000 or "
		 "xdp:dev=veth1,frames=1",
	.keys = "dev,port,ip,queue,mode,fill,comp,rx,tx,busy_poll,busy_budget",
	.max_queues = RF_IO_MAX_QUEUES,
	.probe = xdp_probe,
	.open = xdp_open,
	.rx_burst = xdp_rx_burst,
	.tx_burst = xdp_tx_burst,
	.wait_fd = xdp_wait_fd,
	.stats = xdp_stats,
	.queue_stats = xdp_queue_stats,
	.xstats = xdp_xstats,
	.link_up = xdp_link_up,
	.close = xdp_close,
	.caps = RF_IO_CAP_FRAMES,
};
