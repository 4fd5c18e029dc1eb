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
 * skb mode only do copy). Buffers of another pool are copied into ours on transmit.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>

#include "io/io_pvt.h"
#include "io/net/net.h"
#include "io/xdp/xsk_port.h"

#define XDP_CHUNK 2048u
#define XDP_KERNEL_HEADROOM 256u /* XDP_PACKET_HEADROOM */
#define XDP_MIN_ROOM (XDP_CHUNK - RF_PKTBUF_HEADROOM)
#define REFILL_BATCH 64u

struct xdp_queue {
	RF_CACHE_ALIGNED struct rf_xsk_port *port; /* own line: queues run on different cores */
	struct rf_net_ctx net;
	unsigned in_fill; /* buffers the kernel holds in this queue's fill ring */
	unsigned in_tx;   /* buffers queued for tx, not yet completed */
	struct rf_io_qstats st; /* written by this queue's thread only */
};

struct xdp_dev {
	struct rf_xsk_prog prog;
	char *base;    /* UMEM = the pool's mempool region */
	size_t len, stride;
	unsigned nq;
	struct rf_xsk_ring_sizes sz;
	/* held[i]: buffer i is in a fill or tx ring, i.e. the kernel has it (freed at close).
	 * Each byte is written only by the queue that owns the buffer at that moment. */
	uint8_t *held;
	struct xdp_queue q[];
};


static inline struct rf_pktbuf *buf_of(const struct xdp_dev *x, uint64_t addr)
{
	return (struct rf_pktbuf *)(x->base + (addr / x->stride) * x->stride);
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
			x->held[a[i] / x->stride] = 1;
		}
		if (rf_xsk_fill(q->port, a, n) != n) {
			for (i = 0; i < n; i++)
				x->held[a[i] / x->stride] = 0;
			rf_pktbuf_free_bulk(b, n);
			return;
		}
		q->in_fill += n;
		want -= n;
	}
}

/* Take transmitted buffers back and free them. */
static void reap(struct rf_io_dev *dev, struct xdp_queue *q)
{
	struct xdp_dev *x = dev->priv;
	struct rf_pktbuf *b[REFILL_BATCH];
	uint64_t a[REFILL_BATCH];
	unsigned n, i;

	while (q->in_tx && (n = rf_xsk_complete(q->port, a, REFILL_BATCH)) != 0) {
		for (i = 0; i < n; i++) {
			b[i] = buf_of(x, a[i]);
			x->held[a[i] / x->stride] = 0;
		}
		rf_pktbuf_free_bulk(b, n);
		q->in_tx -= n;
	}
}

static unsigned xdp_tx_frames(struct xdp_dev *x, struct xdp_queue *q, const struct xdp_desc *d,
			      unsigned n)
{
	unsigned k = rf_xsk_tx(q->port, d, n), i;
	for (i = 0; i < k; i++)
		x->held[d[i].addr / x->stride] = 1;
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
	for (i = 0; i < got; i++) {
		struct rf_pktbuf *b = buf_of(x, d[i].addr);
		x->held[d[i].addr / x->stride] = 0;
		uint8_t *frame = (uint8_t *)x->base + d[i].addr;
		struct rf_net_rx_info in;

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
	if (got == 0)
		rf_xsk_rx_wakeup(q->port);
	return k;
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
			/* Not UMEM memory: copy into one of ours (the only copy this driver makes). */
			struct rf_pktbuf *c = rf_pktbuf_alloc(dev->pool);
			if (!c)
				break; /* the caller keeps pkts[i..n) */
			memcpy(rf_pktbuf_data(c), rf_pktbuf_data(b), b->data_len);
			c->data_len = b->data_len;
			c->peer = b->peer;
			c->peer_len = b->peer_len;
			rf_pktbuf_free(b);
			b = c;
		}
		payload = rf_pktbuf_data(b);
		len = rf_net_tx_udp(&q->net, payload, b->data_len, b->peer.in.sin_addr.s_addr,
				    b->peer.in.sin_port);
		if (len < 0) /* unknown neighbour: the buffer now holds an ARP request */
			len = -len;
		d[nd].addr = addr_of(x, payload - RF_NET_HDR_LEN);
		d[nd].len = (uint32_t)len;
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

static int xdp_wait_fd(struct rf_io_dev *dev, unsigned qi)
{
	struct xdp_dev *x = dev->priv;
	return rf_xsk_port_fd(x->q[qi].port);
}

static void xdp_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct xdp_dev *x = dev->priv;
	for (unsigned i = 0; i < x->nq; i++)
		rf_io_qstats_sum(&x->q[i].st, st);
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
	rf_xsk_prog_detach(&x->prog);
	for (size_t i = 0; x->held && i < x->len / x->stride; i++)
		if (x->held[i])
			rf_pktbuf_free((struct rf_pktbuf *)(x->base + i * x->stride));
	free(x->held);
	free(x);
	dev->priv = NULL;
}

static int ring_size(const struct rf_io_config *cfg, const char *key, uint32_t *out, char *err,
		     size_t len)
{
	int rc = rf_io_config_get_u32(cfg, key, 1024, 64, 8192, out, err, len);
	if (rc == 0 && !rf_is_power_of_2(*out))
		return rf_io_err(err, len, "xdp: %s=%u: must be a power of two (64..8192)", key,
				 *out);
	return rc;
}

static int xdp_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	struct rf_mempool *mp = rf_pktbuf_pool_mempool(dev->pool);
	const char *ifname = rf_io_config_get(cfg, "dev"), *ipstr = rf_io_config_get(cfg, "ip");
	uint32_t queue, port, ip = 0;
	unsigned mode;
	uint8_t mac[6];
	struct xdp_dev *x;
	void *base;
	int rc;

	if (!ifname)
		return rf_io_err(err, len, "xdp: dev= is required (e.g. %s)", rf_io_xdp_ops.usage);
	if ((rc = rf_io_config_get_u32(cfg, "queue", 0, 0, 1023, &queue, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "port", 0, 1, 65535, &port, err, len)) ||
	    (rc = rf_io_config_get_enum(cfg, "mode", "auto|native|skb", 0, &mode, err, len)))
		return rc;
	if (port == 0)
		return rf_io_err(err, len, "xdp: port= is required: the UDP port to take over");
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
	if ((rc = ring_size(cfg, "fill", &x->sz.fill, err, len)) ||
	    (rc = ring_size(cfg, "comp", &x->sz.comp, err, len)) ||
	    (rc = ring_size(cfg, "rx", &x->sz.rx, err, len)) ||
	    (rc = ring_size(cfg, "tx", &x->sz.tx, err, len)))
		goto fail_free;
	if (if_nametoindex(ifname) == 0) {
		rc = -ENODEV;
		rf_io_err(err, len, "xdp: interface '%s' not found (check `ip link show`; a netns "
			  "interface needs the process inside that netns)", ifname);
		goto fail_free;
	}
	if ((rc = rf_net_if_lookup(ifname, mac, &ip)) != 0 || ip == 0) {
		rf_io_err(err, len, "xdp: %s has no IPv4 address: give ip=A.B.C.D (ringflow "
			  "answers ARP for it)", ifname);
		rc = rc ? rc : -EINVAL;
		goto fail_free;
	}
	rf_mempool_region(mp, &base, &x->len, &x->stride);
	x->base = base;
	/* The kernel pins the UMEM; fork() would then have to copy it eagerly, and with
	 * hugepages that needs free hugepages, or fork fails (system(), a test's client).
	 * Children never need our frames: keep the region out of them. */
	madvise(x->base, x->len, MADV_DONTFORK);
	x->held = calloc(x->len / x->stride + 1, 1);
	if (!x->held) {
		rc = rf_io_err(err, len, "xdp: out of memory");
		goto fail_free;
	}
	rc = rf_xsk_prog_attach(&x->prog, ifname, mode, ip, htons((uint16_t)port), err, len);
	if (rc != 0)
		goto fail_free;
	dev->priv = x;
	for (x->nq = 0; x->nq < dev->nqueues; x->nq++) {
		struct xdp_queue *q = &x->q[x->nq];
		rc = rf_xsk_port_open(&q->port, &x->prog, queue + x->nq, x->base, x->len, XDP_CHUNK,
				      &x->sz, x->nq ? x->q[0].port : NULL, err, len);
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
	fprintf(stderr, "xdp: %s queue %u%s%.0u: %s mode, %s%s; rings fill=%u comp=%u rx=%u tx=%u; "
		"UMEM %zu KiB on %s\n", ifname, queue, dev->nqueues > 1 ? "-" : "",
		dev->nqueues > 1 ? queue + dev->nqueues - 1 : 0,
		x->prog.xdp_flags & XDP_FLAGS_SKB_MODE ? "skb" : "native",
		rf_xsk_port_zerocopy(x->q[0].port) ? "zero-copy" : "copy",
		rf_xsk_port_zerocopy(x->q[0].port) ? "" : " (zero-copy refused by the driver)",
		x->sz.fill, x->sz.comp, x->sz.rx, x->sz.tx, x->len >> 10,
		rf_mempool_on_hugepages(mp) ? "hugepages" : "normal pages (no hugepages reserved)");
	return 0;
fail_close:
	xdp_close(dev);
	return rc;
fail_free:
	free(x->held);
	free(x);
	return rc;
}

/* Usable when this process may load BPF programs and attach them (CAP_BPF or
 * CAP_SYS_ADMIN, and CAP_NET_ADMIN). */
static int xdp_probe(char *why, size_t len)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {0};
	uint64_t eff;

	if (syscall(SYS_capget, &h, d) != 0)
		return -errno;
	eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	if (!(eff >> CAP_NET_ADMIN & 1) ||
	    !((eff >> CAP_BPF & 1) || (eff >> CAP_SYS_ADMIN & 1))) {
		snprintf(why, len, "needs CAP_NET_ADMIN and CAP_BPF: run as root or `setcap "
			 "cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,cap_ipc_lock+ep <binary>`");
		return -EPERM;
	}
	return 0;
}

const struct rf_io_ops rf_io_xdp_ops = {
	.name = "xdp",
	.usage = "xdp:dev=IFACE,port=N[,ip=A.B.C.D,queue=Q,queues=K,mode=auto|native|skb,"
		 "fill=1024,comp=1024,rx=1024,tx=1024]  e.g. xdp:dev=veth1,mode=skb,port=9000",
	.keys = "dev,port,ip,queue,mode,fill,comp,rx,tx",
	.max_queues = RF_IO_MAX_QUEUES,
	.probe = xdp_probe,
	.open = xdp_open,
	.rx_burst = xdp_rx_burst,
	.tx_burst = xdp_tx_burst,
	.wait_fd = xdp_wait_fd,
	.stats = xdp_stats,
	.close = xdp_close,
};
