/*
 * io/packet.c: the AF_PACKET driver ("packet:dev=veth1,frames=1,queues=2"), frame mode only.
 *
 * The one idea: each queue is one AF_PACKET socket with an rx ring mapped into our memory
 * (io/packet/afp_sock.c). The kernel fills the TPACKET_V3 rx ring a block at a time and
 * hands a block over when it is full or block_ms old; rx_burst copies each frame out of the
 * block into a pktbuf (buffers taken from the pool in bulk: as many as the open block still
 * holds, up to the burst) and gives the block back once it has read all of it. tx_burst
 * hands the whole burst to the kernel in one sendmmsg(), one message per buffer (send=mmsg,
 * the default); the kernel copies each frame into an skb of its own and, with
 * PACKET_QDISC_BYPASS, gives it straight to the device. OVS's userspace datapath sends on
 * its "system" ports the same way, and it works wherever a raw socket does.
 *
 * send=ring maps a tx ring too: tx_burst copies each buffer into a slot, marks it
 * SEND_REQUEST and kicks the kernel with one send() per burst; the kernel builds skbs that
 * point at the ring pages. That saves the kernel's copy, but those pages are lent, not
 * given: a device that must own the data (veth handing the frame to another namespace,
 * anything with an XDP program behind it) makes the kernel allocate a page per frame and
 * copy it anyway (skb_copy_ubufs), and the slot stays busy until the skb is freed. On the
 * veth bed send=mmsg forwarded 25-35 % more (docs/dataplane-app.md, "The levers").
 *
 * ring=v2 (TPACKET_V2) trades the blocks for one frame per slot: each frame is handed over
 * the moment it arrives. V3's blocks cost no per-frame status write by the kernel and suit
 * high rates; at low rates a frame waits for its block to time out (block_ms, rounded up to
 * a timer tick: 4 ms at HZ=250), which V2 does not (docs/dataplane-app.md has the RTTs).
 *
 * What moves bytes: on rx the kernel copies skb -> rx ring, we copy ring -> pktbuf; on tx
 * the kernel copies pktbuf -> skb (send=ring: we copy pktbuf -> tx ring, and the kernel
 * copies only the 14-byte Ethernet header into the skb and points it at the ring page for
 * the rest). So a frame forwarded from one packet port to another is copied once by
 * ringflow (twice with send=ring; the "zero-copy" of the ownership rule is between xdp or
 * dpdk ports).
 *
 * Why no message mode: AF_PACKET sees every frame of the device and the kernel's own IP stack
 * still answers it; there is no port of ours to own, so this driver carries frames only.
 * frames=1 is implied; frames=0 is refused. VLAN: the kernel strips the tag of a received
 * frame into tp_vlan_tci before any socket sees it; we put it back, so a tagged frame is
 * handed over as it was on the wire.
 *
 * Accounting (exact per burst). send=mmsg: sendmmsg() says how many messages the kernel
 * took (tx_pkts); a full send buffer or device queue (EAGAIN, ENOBUFS) ends the burst and
 * the rest stays the caller's (tx_busy); any other refusal (the device is down or gone)
 * consumes the rest as tx_drops. send=ring: after the kick every slot of the burst has
 * either left SEND_REQUEST (the kernel took it: tx_pkts) or not (the kernel refused it, e.g.
 * the device is down: we take the slot back, count tx_drops and rewind, so that our ring
 * head stays where the kernel's is).
 */
#include <errno.h>
#include <linux/capability.h>
#include <net/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <ringflow/pktbuf.h>

#include "io/io_pvt.h"
#include "io/packet/afp_sock.h"

#define ETH_HDR 14u
#define VLAN_HDR 4u
/* Where the kernel reads a tx frame in its slot: right after the aligned frame header. */
#define TX_DATA_OFF_V3 TPACKET_ALIGN(sizeof(struct tpacket3_hdr))
#define TX_DATA_OFF_V2 TPACKET_ALIGN(sizeof(struct tpacket2_hdr))
#define ERR_CHECK_EVERY 4096u /* empty rx bursts between two SO_ERROR reads */

/* Extended counters, in the order xstats reports them. */
enum {
	X_RX_BLOCKS,       /* rx ring blocks read and given back */
	X_RX_TOO_LONG,     /* received frames longer than a buffer (or than a block: truncated) */
	X_RX_RUNTS,        /* received frames shorter than an Ethernet header */
	X_RX_VLAN,         /* received frames whose VLAN tag we put back */
	X_RX_CSUM_PARTIAL, /* received with the checksum left to the sender's offload (same host) */
	X_RX_LINK_EVENTS,  /* socket errors seen (ENETDOWN when the device went down) */
	X_RX_NQ,
};
enum {
	X_TX_RING_FULL,  /* send=ring: tx_burst stopped, the next slot was still in flight */
	X_TX_BUSY,       /* send=mmsg: tx_burst stopped, the send buffer or device queue was full */
	X_TX_KICKS,      /* send() (ring) or sendmmsg() (mmsg) calls */
	X_TX_KICK_ERRORS,/* calls that failed (ENETDOWN, ...); their frames are tx_drops */
	X_TX_BAD_LEN,    /* tx buffers shorter than 14 bytes or longer than MTU + headers */
	X_TX_NQ,
};
static const char *const rx_xnames[X_RX_NQ] = {"rx_ring_blocks", "rx_too_long", "rx_runts",
	"rx_vlan_restored", "rx_csum_partial", "rx_link_events"};
static const char *const tx_xnames[X_TX_NQ] = {"tx_ring_full", "tx_busy", "tx_kicks",
	"tx_kick_errors", "tx_bad_len"};

struct pkt_queue {
	/* rx side: written by the receiving thread */
	RF_CACHE_ALIGNED struct rf_afp_sock sock;
	unsigned rx_blk;                 /* V3: block we read next / are reading; V2: next slot */
	unsigned rx_left;                /* frames left in that block (0: not open) */
	uint8_t *rx_next;                /* next frame in it */
	unsigned rx_empty;               /* empty bursts since the last SO_ERROR read */
	struct rf_io_qstats rst;
	_Atomic uint64_t rx_x[X_RX_NQ];
	/* tx side: written by the sending thread (may be another one: RF_IO_CAP_SPLIT_RXTX) */
	RF_CACHE_ALIGNED unsigned tx_head; /* next slot to fill; equals the kernel's head between bursts */
	struct rf_io_qstats tst;
	_Atomic uint64_t tx_x[X_TX_NQ];
	/* PACKET_STATISTICS resets on read: readers (any thread) add what they read here */
	RF_CACHE_ALIGNED _Atomic uint64_t k_packets, k_drops, k_freeze;
};

struct pkt_dev {
	int ifindex;
	char ifname[IF_NAMESIZE];
	struct rf_afp_geom g;
	unsigned tx_max_len;   /* MTU + Ethernet header (+ 4 for an 802.1Q-tagged frame) */
	unsigned tx_data_off;  /* TX_DATA_OFF_V3 or _V2 */
	unsigned rx_slots;     /* V2: rx ring slots */
	bool send_ring;        /* send=ring: a tx ring per queue; else sendmmsg() */
	unsigned nq;
	struct pkt_queue q[];
};

/* The kernel's ring words are plain u32s shared with us: read and write them as atomics.
 * acquire load of a status pairs with the kernel's smp_wmb() before it sets that status
 * (so the frame or block it covers is complete); release store pairs with its smp_rmb()
 * after reading the status (so the frame we wrote is complete when it sees SEND_REQUEST,
 * and we are done with a block before it refills it). */
static inline uint32_t ring_load(uint32_t *w)
{
	return atomic_load_explicit((_Atomic uint32_t *)w, memory_order_acquire);
}

static inline void ring_store(uint32_t *w, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)w, v, memory_order_release);
}

static inline struct tpacket_block_desc *rx_block(const struct pkt_dev *p,
						  const struct pkt_queue *q, unsigned i)
{
	return (struct tpacket_block_desc *)(q->sock.rx + (size_t)i * p->g.rx_block_size);
}

static inline uint8_t *tx_slot(const struct pkt_dev *p, const struct pkt_queue *q, unsigned i)
{
	return q->sock.tx + (size_t)i * p->g.tx_frame_size;
}

/* The status and length words of a tx slot (V3 and V2 headers place them differently). */
static inline uint32_t *tx_status(const struct pkt_dev *p, uint8_t *slot)
{
	return p->g.version == TPACKET_V3 ? &((struct tpacket3_hdr *)slot)->tp_status
					  : &((struct tpacket2_hdr *)slot)->tp_status;
}

static inline void tx_set_len(const struct pkt_dev *p, uint8_t *slot, uint32_t len)
{
	if (p->g.version == TPACKET_V3) {
		struct tpacket3_hdr *h = (struct tpacket3_hdr *)slot;
		h->tp_len = h->tp_snaplen = len;
		h->tp_next_offset = 0;
	} else {
		struct tpacket2_hdr *h = (struct tpacket2_hdr *)slot;
		h->tp_len = h->tp_snaplen = len;
	}
}

static inline uint32_t tx_len(const struct pkt_dev *p, uint8_t *slot)
{
	return p->g.version == TPACKET_V3 ? ((struct tpacket3_hdr *)slot)->tp_len
					  : ((struct tpacket2_hdr *)slot)->tp_len;
}

/* What rx_one needs of a received frame's header (V3 and V2 alike). */
struct rx_meta {
	const uint8_t *frame;
	uint32_t snap, len, status, tci;
	uint16_t tpid;
};

/* Buffers for one rx burst, taken from the pool in bulk (one mempool call and one reset
 * loop for many frames instead of one each); what the burst does not use goes back at its end. */
struct rx_bufs {
	struct rf_pktbuf *b[RF_IO_MAX_BURST];
	unsigned n, next;
};

/* A buffer for the next frame; `more` frames are known to be waiting (a bulk's size). */
static inline struct rf_pktbuf *rx_take(struct rf_io_dev *dev, struct rx_bufs *s, unsigned more)
{
	if (s->next < s->n)
		return s->b[s->next++];
	s->n = s->next = 0;
	if (more > RF_IO_MAX_BURST)
		more = RF_IO_MAX_BURST;
	if (more > 1 && rf_pktbuf_alloc_bulk(dev->pool, s->b, more) == 0) {
		s->n = more;
		return s->b[s->next++];
	}
	return rf_pktbuf_alloc(dev->pool); /* one, or the pool is (nearly) empty */
}

/* Copy one received frame into a buffer of s (VLAN tag put back). 1 handed over, 0 dropped,
 * -1 pool empty (the frame stays for the next burst). `more`: frames known to be waiting. */
static inline __attribute__((always_inline)) int
rx_one(struct rf_io_dev *dev, struct pkt_queue *q, unsigned qi, const struct rx_meta *m,
       struct rf_pktbuf **out, struct rx_bufs *s, unsigned more)
{
	const uint8_t *f = m->frame;
	uint32_t snap = m->snap, st = m->status;
	bool vlan = st & TP_STATUS_VLAN_VALID;
	uint32_t len = m->len + (vlan ? VLAN_HDR : 0);

	if (snap < ETH_HDR) {
		rf_stat_add(&q->rx_x[X_RX_RUNTS], 1);
		rf_stat_add(&q->rst.rx_drops, 1);
		return 0;
	}
	struct rf_pktbuf *b = rx_take(dev, s, more);
	if (!b)
		return -1;
	if (snap < m->len || len > rf_pktbuf_tailroom(b)) {
		if (s->next > 0 && s->b[s->next - 1] == b)
			s->next--; /* unused: stays for the next frame */
		else
			rf_pktbuf_free(b);
		rf_stat_add(&q->rx_x[X_RX_TOO_LONG], 1);
		rf_stat_add(&q->rst.rx_drops, 1);
		return 0;
	}
	uint8_t *d = rf_pktbuf_data(b);
	if (vlan) {
		uint16_t tpid = htons(st & TP_STATUS_VLAN_TPID_VALID ? m->tpid : ETH_P_8021Q);
		uint16_t tci = htons((uint16_t)m->tci);
		memcpy(d, f, 12);
		memcpy(d + 12, &tpid, 2);
		memcpy(d + 14, &tci, 2);
		memcpy(d + 16, f + 12, snap - 12);
		rf_stat_add(&q->rx_x[X_RX_VLAN], 1);
	} else {
		memcpy(d, f, snap);
	}
	if (st & TP_STATUS_CSUMNOTREADY)
		rf_stat_add(&q->rx_x[X_RX_CSUM_PARTIAL], 1);
	b->data_len = len;
	b->queue = (uint16_t)qi;
	*out = b;
	return 1;
}

/* ring=v2: one frame per slot, each handed over (and given back) on its own. */
static unsigned rx_v2(struct rf_io_dev *dev, struct pkt_queue *q, unsigned qi,
		      struct rf_pktbuf **pkts, unsigned n, uint64_t *bytes, struct rx_bufs *s)
{
	struct pkt_dev *p = dev->priv;
	unsigned k = 0;
	while (k < n) {
		struct tpacket2_hdr *h =
			(struct tpacket2_hdr *)(q->sock.rx + (size_t)q->rx_blk * p->g.rx_frame_size);
		if (!(ring_load(&h->tp_status) & TP_STATUS_USER))
			break;
		struct rx_meta m = {(const uint8_t *)h + h->tp_mac, h->tp_snaplen, h->tp_len,
				    h->tp_status, h->tp_vlan_tci, h->tp_vlan_tpid};
		/* The slots after this one are not looked at: a bulk of 8 at most, so a slow
		 * trickle does not take (and give back) a whole burst's buffers per frame. */
		int r = rx_one(dev, q, qi, &m, &pkts[k], s, n - k < 8 ? n - k : 8);
		if (r < 0) {
			rf_stat_add(&q->rst.rx_nobuf, 1);
			break;
		}
		if (r > 0)
			*bytes += pkts[k++]->data_len;
		ring_store(&h->tp_status, TP_STATUS_KERNEL);
		q->rx_blk = (q->rx_blk + 1) % p->rx_slots;
	}
	return k;
}

static unsigned pkt_rx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct pkt_dev *p = dev->priv;
	struct pkt_queue *q = &p->q[qi];
	unsigned k = 0;
	uint64_t bytes = 0;
	struct rx_bufs s;

	s.n = s.next = 0;
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	if (p->g.version == TPACKET_V2)
		k = rx_v2(dev, q, qi, pkts, n, &bytes, &s);
	while (p->g.version == TPACKET_V3 && k < n) {
		struct tpacket_block_desc *bd = rx_block(p, q, q->rx_blk);
		if (q->rx_left == 0) {
			if (!(ring_load(&bd->hdr.bh1.block_status) & TP_STATUS_USER))
				break; /* the kernel is still filling it */
			q->rx_left = bd->hdr.bh1.num_pkts;
			q->rx_next = (uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
			rf_stat_add(&q->rx_x[X_RX_BLOCKS], 1);
		}
		/* A run of frames of this block, walked with locals (the queue's fields are
		 * written back once per run, not once per frame); buffers for the whole run are
		 * taken in bulk. */
		unsigned left = q->rx_left, want = n - k < left ? n - k : left, j;
		uint8_t *next = q->rx_next;
		bool nobuf = false;
		for (j = 0; j < want; j++) {
			const struct tpacket3_hdr *h = (const struct tpacket3_hdr *)next;
			struct rx_meta m = {(const uint8_t *)h + h->tp_mac, h->tp_snaplen, h->tp_len,
					    h->tp_status, h->hv1.tp_vlan_tci, h->hv1.tp_vlan_tpid};
			int r = rx_one(dev, q, qi, &m, &pkts[k], &s, want - j);
			if (r < 0) {
				nobuf = true; /* this frame stays for the next burst */
				break;
			}
			if (r > 0)
				bytes += pkts[k++]->data_len;
			next += h->tp_next_offset;
		}
		q->rx_next = next;
		q->rx_left = left - j;
		if (q->rx_left == 0) { /* block read: give it back at once */
			ring_store(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL);
			q->rx_blk = (q->rx_blk + 1) % p->g.rx_blocks;
		}
		if (nobuf) {
			rf_stat_add(&q->rst.rx_nobuf, 1);
			break;
		}
	}
	if (s.next < s.n)
		rf_pktbuf_free_bulk(s.b + s.next, s.n - s.next);
	if (k) {
		rf_stat_add(&q->rst.rx_pkts, k);
		rf_stat_add(&q->rst.rx_bytes, bytes);
		q->rx_empty = 0;
	} else if (++q->rx_empty >= ERR_CHECK_EVERY) {
		/* A device going down leaves sk_err set: poll() then reports the socket ready
		 * forever. Reading SO_ERROR clears it (rarely, so busy polling stays cheap). */
		int e = 0;
		socklen_t l = sizeof(e);
		q->rx_empty = 0;
		if (getsockopt(q->sock.fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e)
			rf_stat_add(&q->rx_x[X_RX_LINK_EVENTS], 1);
	}
	return k;
}

/* Hand the burst's slots [first, first+filled) to the kernel, then account for each. */
static void tx_kick(struct pkt_dev *p, struct pkt_queue *q, unsigned first, unsigned filled)
{
	unsigned mask = p->g.tx_frames - 1, sent = 0, dropped = 0, i;
	uint64_t bytes = 0;

	for (int tries = 0; tries < 3; tries++) {
		rf_stat_add(&q->tx_x[X_TX_KICKS], 1);
		if (send(q->sock.fd, NULL, 0, MSG_DONTWAIT) >= 0)
			break;
		if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
			rf_stat_add(&q->tx_x[X_TX_KICK_ERRORS], 1);
			break; /* ENETDOWN, ENXIO: the device is down or gone */
		}
		if (tries == 2)
			rf_stat_add(&q->tx_x[X_TX_KICK_ERRORS], 1);
	}
	/* The kernel takes slots in order and stops at the first it cannot send; that slot and
	 * the ones after it are still SEND_REQUEST. Take them back and rewind to the first. */
	for (i = 0; i < filled; i++) {
		uint8_t *slot = tx_slot(p, q, (first + i) & mask);
		if (ring_load(tx_status(p, slot)) == TP_STATUS_SEND_REQUEST)
			break;
		sent++;
		bytes += tx_len(p, slot);
	}
	for (; i < filled; i++) {
		ring_store(tx_status(p, tx_slot(p, q, (first + i) & mask)), TP_STATUS_AVAILABLE);
		dropped++;
	}
	if (dropped)
		q->tx_head = (first + sent) & mask;
	rf_stat_add(&q->tst.tx_pkts, sent);
	rf_stat_add(&q->tst.tx_bytes, bytes);
	rf_stat_add(&q->tst.tx_drops, dropped);
}

/* Would the kernel send a frame of len bytes (an Ethernet header, at most the MTU, 4 more
 * with an 802.1Q tag)? */
static inline bool tx_len_ok(const struct pkt_dev *p, const uint8_t *d, uint32_t len)
{
	return len >= ETH_HDR && len <= p->tx_max_len &&
	       (len <= p->tx_max_len - VLAN_HDR || (d[12] == 0x81 && d[13] == 0x00));
}

static unsigned tx_burst_ring(struct pkt_dev *p, struct pkt_queue *q, struct rf_pktbuf **pkts,
			      unsigned n)
{
	unsigned mask = p->g.tx_frames - 1, first = q->tx_head, filled = 0, bad = 0, i;

	for (i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		const uint8_t *d = rf_pktbuf_data(b);
		uint32_t len = b->data_len;
		if (!tx_len_ok(p, d, len)) {
			bad++; /* the kernel would refuse it: consumed, counted, freed below */
			continue;
		}
		uint8_t *slot = tx_slot(p, q, q->tx_head);
		if (ring_load(tx_status(p, slot)) != TP_STATUS_AVAILABLE) {
			rf_stat_add(&q->tx_x[X_TX_RING_FULL], 1);
			break; /* still in flight: pkts[i..n) stay the caller's */
		}
		memcpy(slot + p->tx_data_off, d, len);
		tx_set_len(p, slot, len);
		ring_store(tx_status(p, slot), TP_STATUS_SEND_REQUEST);
		q->tx_head = (q->tx_head + 1) & mask;
		filled++;
	}
	if (filled)
		tx_kick(p, q, first, filled);
	if (bad) {
		rf_stat_add(&q->tx_x[X_TX_BAD_LEN], bad);
		rf_stat_add(&q->tst.tx_drops, bad);
	}
	/* Every consumed buffer was copied (or refused): all go back to their pools now. */
	rf_pktbuf_free_bulk(pkts, i);
	return i;
}

#define MMSG_MAX 64u /* messages per sendmmsg() call (a longer burst takes more calls) */

/* send=mmsg: the burst in sendmmsg() calls, one message per buffer, each call a run of
 * buffers of a length the kernel takes; the kernel copies each frame into an skb. A full
 * send buffer or device queue ends the burst (the rest stays the caller's); every buffer
 * before that was sent, refused for its length, or dropped (device down) and is freed. */
static unsigned tx_burst_mmsg(struct pkt_dev *p, struct pkt_queue *q, struct rf_pktbuf **pkts,
			      unsigned n)
{
	struct mmsghdr m[MMSG_MAX];
	struct iovec iov[MMSG_MAX];
	unsigned i = 0, sent = 0, bad = 0, drops = 0, intr = 0;
	uint64_t bytes = 0;

	while (i < n) {
		unsigned k = 0;
		while (i + k < n && k < MMSG_MAX) {
			struct rf_pktbuf *b = pkts[i + k];
			uint8_t *d = rf_pktbuf_data(b);
			if (!tx_len_ok(p, d, b->data_len))
				break;
			iov[k] = (struct iovec){.iov_base = d, .iov_len = b->data_len};
			m[k].msg_hdr = (struct msghdr){.msg_iov = &iov[k], .msg_iovlen = 1};
			k++;
		}
		if (!k) { /* pkts[i] has a length the kernel would refuse: consumed, counted */
			bad++;
			i++;
			continue;
		}
		rf_stat_add(&q->tx_x[X_TX_KICKS], 1);
		int r = sendmmsg(q->sock.fd, m, k, MSG_DONTWAIT);
		if (r > 0) { /* fewer than k: the next call meets the reason, or sends them */
			for (int j = 0; j < r; j++)
				bytes += iov[j].iov_len;
			sent += (unsigned)r;
			i += (unsigned)r;
			continue;
		}
		if (errno == EINTR && ++intr < 3)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
			rf_stat_add(&q->tx_x[X_TX_BUSY], 1);
			break; /* full: pkts[i..n) stay the caller's */
		}
		rf_stat_add(&q->tx_x[X_TX_KICK_ERRORS], 1); /* ENETDOWN, ENXIO: down or gone */
		drops = n - i;
		i = n;
	}
	rf_stat_add(&q->tst.tx_pkts, sent);
	rf_stat_add(&q->tst.tx_bytes, bytes);
	if (bad)
		rf_stat_add(&q->tx_x[X_TX_BAD_LEN], bad);
	if (bad + drops)
		rf_stat_add(&q->tst.tx_drops, bad + drops);
	rf_pktbuf_free_bulk(pkts, i);
	return i;
}

static unsigned pkt_tx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			     unsigned n)
{
	struct pkt_dev *p = dev->priv;
	struct pkt_queue *q = &p->q[qi];
	return p->send_ring ? tx_burst_ring(p, q, pkts, n) : tx_burst_mmsg(p, q, pkts, n);
}

static int pkt_wait_fd(struct rf_io_dev *dev, unsigned qi)
{
	struct pkt_dev *p = dev->priv;
	return p->q[qi].sock.fd;
}

/* Fold the kernel's per-socket counters (reset on each read) into ours. */
static void kernel_stats(struct pkt_queue *q)
{
	struct tpacket_stats_v3 ks;
	socklen_t l = sizeof(ks);
	if (getsockopt(q->sock.fd, SOL_PACKET, PACKET_STATISTICS, &ks, &l) == 0) {
		atomic_fetch_add_explicit(&q->k_packets, ks.tp_packets, memory_order_relaxed);
		atomic_fetch_add_explicit(&q->k_drops, ks.tp_drops, memory_order_relaxed);
		atomic_fetch_add_explicit(&q->k_freeze, ks.tp_freeze_q_cnt, memory_order_relaxed);
	}
}

static void pkt_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct pkt_dev *p = dev->priv;
	for (unsigned i = 0; i < p->nq; i++) {
		rf_io_qstats_sum(&p->q[i].rst, st);
		rf_io_qstats_sum(&p->q[i].tst, st);
	}
}

/* A queue's receive side (rst) and send side (tst), which may be two threads. */
static void pkt_queue_stats(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	struct pkt_dev *p = dev->priv;
	rf_io_qstats_sum(&p->q[queue].rst, st);
	rf_io_qstats_sum(&p->q[queue].tst, st);
}

static unsigned pkt_xstats(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n)
{
	struct pkt_dev *p = dev->priv;
	uint64_t rx[X_RX_NQ] = {0}, tx[X_TX_NQ] = {0}, kp = 0, kd = 0, kf = 0;
	unsigned i, j, o = 0;

	for (i = 0; i < p->nq; i++) {
		struct pkt_queue *q = &p->q[i];
		if (n)
			kernel_stats(q);
		for (j = 0; j < X_RX_NQ; j++)
			rx[j] += atomic_load_explicit(&q->rx_x[j], memory_order_relaxed);
		for (j = 0; j < X_TX_NQ; j++)
			tx[j] += atomic_load_explicit(&q->tx_x[j], memory_order_relaxed);
		kp += atomic_load_explicit(&q->k_packets, memory_order_relaxed);
		kd += atomic_load_explicit(&q->k_drops, memory_order_relaxed);
		kf += atomic_load_explicit(&q->k_freeze, memory_order_relaxed);
	}
	for (j = 0; j < X_RX_NQ; j++)
		o = rf_io_xstat_put(xs, n, o, rx_xnames[j], rx[j]);
	o = rf_io_xstat_put(xs, n, o, "rx_kernel_packets", kp);  /* frames the kernel saw */
	o = rf_io_xstat_put(xs, n, o, "rx_kernel_drops", kd);    /* lost: no free rx block */
	o = rf_io_xstat_put(xs, n, o, "rx_kernel_freezes", kf);  /* times the ring was full */
	for (j = 0; j < X_TX_NQ; j++)
		o = rf_io_xstat_put(xs, n, o, tx_xnames[j], tx[j]);
	return o;
}

static int pkt_link_up(struct rf_io_dev *dev)
{
	struct pkt_dev *p = dev->priv;
	struct ifreq ifr = {0};
	if (!if_indextoname((unsigned)p->ifindex, ifr.ifr_name))
		return -ENODEV;
	if (ioctl(p->q[0].sock.fd, SIOCGIFFLAGS, &ifr) != 0)
		return -errno;
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING) ? 1 : 0;
}

static void pkt_close(struct rf_io_dev *dev)
{
	struct pkt_dev *p = dev->priv;
	if (!p)
		return;
	/* We hold no buffers (every frame was copied): closing the sockets is all. */
	for (unsigned i = 0; i < p->nq; i++)
		rf_afp_sock_close(&p->q[i].sock);
	free(p);
	dev->priv = NULL;
}

static int pow2_key(const struct rf_io_config *cfg, const char *key, uint32_t def, uint32_t lo,
		    uint32_t hi, uint32_t *out, char *err, size_t len)
{
	int rc = rf_io_config_get_u32(cfg, key, def, lo, hi, out, err, len);
	if (rc == 0 && !rf_is_power_of_2(*out))
		return rf_io_err(err, len, "packet: %s=%u: must be a power of two (%u..%u)", key,
				 *out, lo, hi);
	return rc;
}

/* MAC and MTU of the device; -errno with one line. */
static int dev_info(struct rf_io_dev *dev, const char *ifname, char *err, size_t len)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) {
		rc = -errno;
		rf_io_err(err, len, "packet: %s: cannot read its address: %s", ifname, strerror(errno));
	} else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		rc = rf_io_err(err, len, "packet: %s is not an Ethernet device (frame mode needs "
			       "Ethernet frames)", ifname);
	} else {
		memcpy(dev->mac, ifr.ifr_hwaddr.sa_data, 6);
		dev->has_mac = true;
		if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
			dev->mtu = (unsigned)ifr.ifr_mtu;
		else
			rc = -errno;
	}
	close(fd);
	return rc;
}

static int pkt_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	const char *ifname = rf_io_config_get(cfg, "dev"), *fr = rf_io_config_get(cfg, "frames");
	uint32_t blocks, block_kb, block_ms, txn;
	unsigned fanout, ring, send;
	bool bypass, promisc;
	struct pkt_dev *p;
	int rc;

	if (!ifname || !*ifname)
		return rf_io_err(err, len, "packet: dev= is required (e.g. packet:dev=veth1,frames=1)");
	if (fr && !dev->frames)
		return rf_io_err(err, len, "packet: frames=%s: AF_PACKET carries whole frames only "
				 "(there is no UDP port to own); drop the key or use udp/xdp for "
				 "messages", fr);
	if ((rc = rf_io_config_get_u32(cfg, "blocks", 128, 4, 4096, &blocks, err, len)) ||
	    (rc = pow2_key(cfg, "block_kb", 32, 4, 4096, &block_kb, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "block_ms", 1, 1, 1000, &block_ms, err, len)) ||
	    (rc = pow2_key(cfg, "tx", 1024, 64, 65536, &txn, err, len)) ||
	    (rc = rf_io_config_get_enum(cfg, "fanout", "hash|lb|cpu|qm", 0, &fanout, err, len)) ||
	    (rc = rf_io_config_get_enum(cfg, "ring", "v3|v2", 0, &ring, err, len)) ||
	    (rc = rf_io_config_get_enum(cfg, "send", "mmsg|ring", 0, &send, err, len)) ||
	    (rc = rf_io_config_get_bool(cfg, "qdisc_bypass", true, &bypass, err, len)) ||
	    (rc = rf_io_config_get_bool(cfg, "promisc", true, &promisc, err, len)))
		return rc;
	const char *tx = rf_io_config_get(cfg, "tx");
	if (send == 0 && tx)
		return rf_io_err(err, len, "packet: tx=%s sizes the tx ring of send=ring; send=mmsg "
				 "(the default) has none: drop tx= or give send=ring", tx);
	int ifindex = (int)if_nametoindex(ifname);
	if (ifindex == 0)
		return rf_io_err(err, len, "packet: interface '%s' not found (check `ip link show`; "
				 "an interface in a netns needs the process inside that netns)",
				 ifname), -ENODEV;
	if ((rc = dev_info(dev, ifname, err, len)) != 0)
		return rc;
	p = calloc(1, sizeof(*p) + dev->nqueues * sizeof(p->q[0]));
	if (!p)
		return rf_io_err(err, len, "packet: out of memory"), -ENOMEM;
	p->ifindex = ifindex;
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->tx_max_len = dev->mtu + ETH_HDR + VLAN_HDR;
	p->send_ring = send == 1;
	p->g = (struct rf_afp_geom){
		.version = ring == 0 ? TPACKET_V3 : TPACKET_V2,
		.rx_blocks = blocks, .rx_block_size = block_kb << 10, .block_ms = block_ms,
		.tx_frames = send == 1 ? txn : 0, .tx_frame_size = 2048,
		.fanout_mode = (unsigned[]){PACKET_FANOUT_HASH, PACKET_FANOUT_LB, PACKET_FANOUT_CPU,
					    PACKET_FANOUT_QM}[fanout],
		.qdisc_bypass = bypass, .promisc = promisc, .sndbuf = 4 << 20,
	};
	p->tx_data_off = ring == 0 ? TX_DATA_OFF_V3 : TX_DATA_OFF_V2;
	while (p->g.tx_frame_size < p->tx_data_off + p->tx_max_len)
		p->g.tx_frame_size <<= 1;
	/* V2 rx slot: header, sockaddr_ll, the kernel's 16 bytes of alignment room, the frame. */
	p->g.rx_frame_size = p->g.tx_frame_size;
	while (p->g.rx_frame_size < TPACKET2_HDRLEN + 32 + p->tx_max_len)
		p->g.rx_frame_size <<= 1;
	p->rx_slots = (unsigned)((size_t)blocks * (block_kb << 10) / p->g.rx_frame_size);
	if (p->g.rx_block_size < p->g.tx_frame_size + 64) {
		rc = rf_io_err(err, len, "packet: block_kb=%u: a block must hold the largest frame "
			       "(MTU %u): give block_kb=%u or more", block_kb, dev->mtu,
			       (p->g.tx_frame_size * 2) >> 10);
		free(p);
		return rc;
	}
	for (unsigned i = 0; i < dev->nqueues; i++)
		p->q[i].sock.fd = -1;
	dev->priv = p;
	dev->frames = true; /* implied: this driver has no message mode */

	/* queues=K: K sockets in one fanout group; the first makes it, the others join. */
	for (p->nq = 0; p->nq < dev->nqueues; p->nq++) {
		if (dev->nqueues > 1)
			p->g.fanout = p->nq == 0 ? 1 : 2;
		rc = rf_afp_sock_open(&p->q[p->nq].sock, ifindex, ifname, &p->g, err, len);
		if (rc) {
			pkt_close(dev);
			return rc;
		}
	}
	return 0;
}

/* Usable when this process may open raw sockets (CAP_NET_RAW). */
static int pkt_probe(char *why, size_t len)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {0};
	if (syscall(SYS_capget, &h, d) != 0)
		return -errno;
	if (!(d[0].effective >> CAP_NET_RAW & 1)) {
		snprintf(why, len, "needs CAP_NET_RAW: run as root or `setcap cap_net_raw+ep <binary>`");
		return -EPERM;
	}
	return 0;
}

const struct rf_io_ops rf_io_packet_ops = {
	RF_IO_OPS_ABI,
	.name = "packet",
	.usage = "packet:dev=IFACE[,frames=1,queues=K,fanout=hash|lb|cpu|qm,ring=v3|v2,blocks=128,"
		 "block_kb=32,block_ms=1,send=mmsg|ring,tx=1024,qdisc_bypass=1,promisc=1]  e.g. packet:dev=veth1,frames=1",
	.keys = "dev,blocks,block_kb,block_ms,send,tx,fanout,ring,qdisc_bypass,promisc",
	.max_queues = RF_IO_MAX_QUEUES,
	.probe = pkt_probe,
	.open = pkt_open,
	.rx_burst = pkt_rx_burst,
	.tx_burst = pkt_tx_burst,
	.wait_fd = pkt_wait_fd,
	.stats = pkt_stats,
	.queue_stats = pkt_queue_stats,
	.xstats = pkt_xstats,
	.link_up = pkt_link_up,
	.close = pkt_close,
	.caps = RF_IO_CAP_FRAMES | RF_IO_CAP_SPLIT_RXTX,
};
