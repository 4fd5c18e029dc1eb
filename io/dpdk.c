/*
 * io/dpdk.c: the DPDK driver ("dpdk:vdev=net_af_packet0,iface=veth1,port=9000").
 *
 * The one idea: a received rte_mbuf *is* the app's buffer. Every mbuf carries a struct
 * rf_pktbuf in its private area (priv_size = RF_PKTBUF_META_SIZE), and the driver's buffers
 * form an external pktbuf pool (rf_pktbuf_pool_create_ext) whose free goes back to
 * rte_pktmbuf_free. So rx hands out the mbuf's pktbuf with data_off moved past
 * Ethernet/IPv4/UDP (io/net), and tx of that buffer writes the headers into the headroom and
 * sends the same mbuf: no copy. Buffers from another pool (the app's own) are copied into an
 * mbuf on tx. Hence rx buffers come from the driver's pool, not from the pool given to
 * rf_io_open (that one is used by the app for what it sends).
 *
 * Frame mode (frames=1): rx hands over each mbuf's whole frame (a VLAN tag the PMD took
 * out is put back), tx sends the bytes as they are; port=/ip= are not used. Every dpdk
 * device of the process takes its mbufs from ONE pool (created by the first open, sized by
 * its mbufs=, freed when the last device closes), so a frame received on one port goes out
 * of another as the same mbuf: no copy. Buffers of other pools are copied (xstat tx_copies).
 * With queues>1 RSS is asked for in rte_eth_conf (IP/TCP/UDP, as far as the PMD offers it;
 * net_af_packet spreads by its fanout group, net_af_xdp by the interface's own queues).
 *
 * EAL: the app decides. rf_io_driver_init("dpdk", argc, argv) starts it with the app's
 * arguments (PCI ports: "-a 0000:03:00.0"; the device is then opened as dev=0000:03:00.0);
 * an EAL the app started itself is used as it is; otherwise the first open starts it with
 * defaults: --no-pci, a unique --file-prefix (rf<pid>), lcore 0 on the calling thread's
 * current CPU set (so its affinity does not change), --no-telemetry, and either
 * --in-memory on hugepages (when enough 2 MiB pages are free) or --no-huge -m 256
 * --no-shconf (said aloud). Pollers are not EAL lcores: each one registers itself with
 * rte_thread_register() on its first burst, so the mbuf pool's per-lcore cache works.
 * The EAL stays up (DPDK cannot start it twice in a process): vdevs open and close by
 * hot-plug; there is no exit handler: rf_io_driver_fini("dpdk") runs rte_eal_cleanup when
 * the app wants it. With the defaults the EAL writes no files; its runtime directory is
 * removed right after init, so nothing is left in /var/run/dpdk even by a killed process.
 *
 * The EAL is dpdk_eal.c, the shared mbuf pool dpdk_pool.c, what they share dpdk_pvt.h;
 * these files build as gnu11 (DPDK headers need GNU extensions).
 */
#include "io/dpdk_pvt.h"

/* A poller's first burst registers its thread as an EAL thread (lcore id: mempool caches). */
static inline void thread_register(void)
{
	static _Thread_local bool done;
	if (rf_unlikely(!done)) {
		done = true;
		if (rte_lcore_id() == LCORE_ID_ANY)
			rte_thread_register(); /* failure (out of lcores) leaves it cache-less */
	}
}

/* ---- bursts ---------------------------------------------------------------------------- */

/* Frame mode: each mbuf's whole frame, as it came (a VLAN tag the PMD stripped put back). */
static unsigned rx_frames(struct dpdk_dev *x, struct dpdk_queue *q, unsigned qi,
			  struct rte_mbuf **m, unsigned got, struct rf_pktbuf **pkts)
{
	struct rte_mbuf *drop[RF_IO_MAX_BURST];
	unsigned i, k = 0, nd = 0;
	uint64_t bytes = 0;

	for (i = 0; i < got; i++) {
		struct rf_pktbuf *b;
		if (rf_unlikely(m[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)) {
			if (rte_vlan_insert(&m[i]) != 0) {
				drop[nd++] = m[i];
				rf_stat_add(&q->st.rx_drops, 1);
				continue;
			}
			rf_stat_add(&q->xst.rx_vlan_reinserted, 1);
		}
		if (rf_unlikely(m[i]->nb_segs != 1 || m[i]->data_len < ETH_HDR)) {
			rf_stat_add(m[i]->nb_segs != 1 ? &q->xst.rx_multiseg : &q->xst.rx_runt, 1);
			rf_stat_add(&q->st.rx_drops, 1);
			drop[nd++] = m[i];
			continue;
		}
		b = pkt_of(m[i]);
		pkt_bind(b, m[i]);
		b->data_off = m[i]->data_off;
		b->data_len = m[i]->data_len;
		b->queue = (uint16_t)qi;
		b->flags = 0;
		b->timestamp_ns = 0;
		b->flow = 0;
		b->peer_len = 0;
		b->pool = x->pool;
		bytes += b->data_len;
		pkts[k++] = b;
	}
	if (nd)
		rte_pktmbuf_free_bulk(drop, nd);
	if (k) {
		rf_stat_add(&q->st.rx_pkts, k);
		rf_stat_add(&q->st.rx_bytes, bytes);
	}
	return k;
}

static unsigned dpdk_rx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			      unsigned n)
{
	struct dpdk_dev *x = dev->priv;
	struct dpdk_queue *q = &x->q[qi];
	struct rte_mbuf *m[RF_IO_MAX_BURST], *arp[RF_IO_MAX_BURST], *drop[RF_IO_MAX_BURST];
	unsigned got, i, k = 0, na = 0, nd = 0, sent;
	uint64_t bytes = 0;

	thread_register();
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	got = rte_eth_rx_burst(x->port_id, (uint16_t)qi, m, (uint16_t)n);
	if (dev->frames)
		return rx_frames(x, q, qi, m, got, pkts);
	for (i = 0; i < got; i++) {
		struct rf_net_rx_info in;
		struct rf_pktbuf *b;

		if (m[i]->nb_segs != 1) { /* scattered frames: larger than we accept */
			drop[nd++] = m[i];
			rf_stat_add(&q->st.rx_drops, 1);
			continue;
		}
		switch (rf_net_rx(&q->net, rte_pktmbuf_mtod(m[i], uint8_t *), m[i]->data_len,
				  &in)) {
		case RF_NET_UDP:
			b = pkt_of(m[i]);
			pkt_bind(b, m[i]);
			b->data_off = (uint16_t)(m[i]->data_off + in.payload_off);
			b->data_len = in.payload_len;
			b->port = 0;
			b->queue = (uint16_t)qi;
			b->flags = 0;
			b->timestamp_ns = 0;
			b->flow = 0;
			memset(&b->peer, 0, sizeof(b->peer));
			b->peer.in.sin_family = AF_INET;
			b->peer.in.sin_addr.s_addr = in.src_ip;
			b->peer.in.sin_port = in.src_port;
			b->peer_len = sizeof(struct sockaddr_in);
			b->pool = x->pool;
			bytes += in.payload_len;
			pkts[k++] = b;
			break;
		case RF_NET_ARP_REPLY: /* rewritten in place: send the same mbuf back */
			arp[na++] = m[i];
			break;
		case RF_NET_DROP:
			rf_stat_add(&q->st.rx_drops, 1);
			/* fallthrough */
		case RF_NET_IGNORE:
			drop[nd++] = m[i];
			break;
		}
	}
	if (na) {
		sent = rte_eth_tx_burst(x->port_id, (uint16_t)qi, arp, (uint16_t)na);
		for (i = sent; i < na; i++)
			drop[nd++] = arp[i];
	}
	if (nd)
		rte_pktmbuf_free_bulk(drop, nd);
	if (k) {
		rf_stat_add(&q->st.rx_pkts, k);
		rf_stat_add(&q->st.rx_bytes, bytes);
	}
	return k;
}

/* Frame mode: pkts' bytes as they are. Our pool's buffers go out as their own mbuf. */
static unsigned tx_frames(struct dpdk_dev *x, struct dpdk_queue *q, unsigned qi,
			  struct rf_pktbuf **pkts, unsigned n)
{
	struct rte_mbuf *out[RF_IO_MAX_BURST];
	uint16_t idx[RF_IO_MAX_BURST], badi[RF_IO_MAX_BURST];
	bool copied[RF_IO_MAX_BURST];
	unsigned i, no = 0, nbad = 0, sent, cut, j;
	uint64_t bytes = 0;

	for (i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		struct rte_mbuf *mb;
		if (rf_unlikely(b->data_len < ETH_HDR || b->data_len > x->max_frame)) {
			badi[nbad++] = (uint16_t)i; /* dropped and counted below */
			continue;
		}
		copied[no] = b->pool != x->pool;
		if (!copied[no]) {
			mb = b->drv;
			mb->data_off = b->data_off;
		} else { /* someone else's buffer: copy into an mbuf of ours */
			mb = rte_pktmbuf_alloc(x->mp);
			if (!mb || b->data_len > rte_pktmbuf_tailroom(mb)) {
				rte_pktmbuf_free(mb); /* NULL is fine */
				break;                /* the caller keeps pkts[i..n) */
			}
			memcpy(rte_pktmbuf_mtod(mb, void *), rf_pktbuf_data(b), b->data_len);
		}
		mb->data_len = (uint16_t)b->data_len;
		mb->pkt_len = b->data_len;
		mb->nb_segs = 1;
		mb->next = NULL;
		mb->ol_flags = 0; /* no offload asked: the bytes go as they are */
		idx[no] = (uint16_t)i;
		out[no++] = mb;
	}
	/* An empty burst still reaches the PMD: it takes back what it has finished sending
	 * (net_af_xdp holds each sent mbuf until its completion), so rf_io_tx_burst(dev, q, NULL,
	 * 0) returns finished buffers to the pool. */
	sent = no || n == 0 ? rte_eth_tx_burst(x->port_id, (uint16_t)qi, out, (uint16_t)no) : 0;
	/* pkts[0..cut) are consumed; from the first frame the queue did not take, the caller
	 * keeps everything (our copies of those are freed). */
	cut = sent < no ? idx[sent] : i;
	for (j = 0; j < no; j++) {
		if (j < sent) {
			bytes += out[j]->pkt_len;
			if (copied[j]) {
				rf_pktbuf_free(pkts[idx[j]]);
				rf_stat_add(&q->xst.tx_copies, 1);
			}
		} else if (copied[j]) {
			rte_pktmbuf_free(out[j]);
		}
	}
	for (j = 0; j < nbad && badi[j] < cut; j++) {
		struct rf_pktbuf *b = pkts[badi[j]];
		rf_stat_add(b->data_len < ETH_HDR ? &q->xst.tx_runt : &q->xst.tx_too_long, 1);
		rf_pktbuf_free(b);
	}
	rf_stat_add(&q->st.tx_drops, j);
	rf_stat_add(&q->st.tx_pkts, sent);
	rf_stat_add(&q->st.tx_bytes, bytes);
	return cut;
}

static unsigned dpdk_tx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			      unsigned n)
{
	struct dpdk_dev *x = dev->priv;
	struct dpdk_queue *q = &x->q[qi];
	struct rte_mbuf *out[RF_IO_MAX_BURST];
	uint16_t idx[RF_IO_MAX_BURST], badi[RF_IO_MAX_BURST];
	bool copied[RF_IO_MAX_BURST], neigh[RF_IO_MAX_BURST];
	unsigned i, no = 0, nbad = 0, sent, cut, j, nneigh = 0;
	uint64_t bytes = 0;

	thread_register();
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
	if (dev->frames)
		return tx_frames(x, q, qi, pkts, n);
	for (i = 0; i < n; i++) {
		struct rf_pktbuf *b = pkts[i];
		struct rte_mbuf *mb;
		uint8_t *payload;
		int len;

		if (b->peer_len == 0 || b->peer.sa.sa_family != AF_INET ||
		    b->data_len > 65535 - RF_NET_HDR_LEN) {
			badi[nbad++] = (uint16_t)i; /* no IPv4 peer: dropped and counted below */
			continue;
		}
		copied[no] = !(b->pool == x->pool && b->data_off >= RF_NET_HDR_LEN);
		if (!copied[no]) {
			mb = b->drv;
			payload = rf_pktbuf_data(b);
		} else {
			/* Someone else's buffer: copy into an mbuf (headers go in its headroom). */
			mb = rte_pktmbuf_alloc(x->mp);
			if (!mb || b->data_len > rte_pktmbuf_tailroom(mb)) {
				rte_pktmbuf_free(mb); /* NULL is fine */
				break;        /* the caller keeps pkts[i..n) */
			}
			payload = rte_pktmbuf_mtod(mb, uint8_t *);
			memcpy(payload, rf_pktbuf_data(b), b->data_len);
		}
		len = rf_net_tx_udp(&q->net, payload, b->data_len, b->peer.in.sin_addr.s_addr,
				    b->peer.in.sin_port);
		neigh[no] = len < 0;
		if (len < 0) /* unknown neighbour: the frame is now an ARP request */
			len = -len;
		mb->data_off = (uint16_t)(payload - RF_NET_HDR_LEN - (uint8_t *)mb->buf_addr);
		mb->data_len = (uint16_t)len;
		mb->pkt_len = (uint32_t)len;
		mb->nb_segs = 1;
		mb->next = NULL;
		idx[no] = (uint16_t)i;
		out[no++] = mb;
	}
	sent = no ? rte_eth_tx_burst(x->port_id, (uint16_t)qi, out, (uint16_t)no) : 0;
	/* pkts[0..cut) are consumed; from the first frame the queue did not take, the caller
	 * keeps everything (our copies of those are freed). */
	cut = sent < no ? idx[sent] : i;
	for (j = 0; j < no; j++) {
		if (j < sent) {
			/* A message that became an ARP request was not sent: a drop (tx_no_neigh). */
			if (neigh[j])
				nneigh++;
			else
				bytes += out[j]->pkt_len - RF_NET_HDR_LEN;
			if (copied[j]) {
				rf_pktbuf_free(pkts[idx[j]]);
				rf_stat_add(&q->xst.tx_copies, 1);
			}
		} else if (copied[j]) {
			rte_pktmbuf_free(out[j]);
		}
	}
	for (j = 0; j < nbad && badi[j] < cut; j++)
		rf_pktbuf_free(pkts[badi[j]]);
	rf_stat_add(&q->st.tx_drops, j + nneigh);
	rf_stat_add(&q->xst.tx_no_neigh, nneigh);
	rf_stat_add(&q->st.tx_pkts, sent - nneigh);
	rf_stat_add(&q->st.tx_bytes, bytes);
	return cut;
}

static uint64_t ld(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void dpdk_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct dpdk_dev *x = dev->priv;
	struct rte_eth_stats es;
	for (unsigned i = 0; i < x->nq; i++)
		rf_io_qstats_sum(&x->q[i].st, st);
	/* Frames the port dropped before our burst (no room in its ring, or in the kernel's for
	 * the socket PMDs) were meant for us: receive drops. */
	if (rte_eth_stats_get(x->port_id, &es) == 0)
		st->rx_drops += es.imissed + es.ierrors;
}

/* One queue's own counters; the port-level imissed/ierrors belong to no queue (dpdk_stats
 * adds them to the device total only). */
static void dpdk_queue_stats(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	struct dpdk_dev *x = dev->priv;
	rf_io_qstats_sum(&x->q[queue].st, st);
}

/* Ours, then the PMD's own (prefixed "pmd."), as names that fit RF_IO_XSTAT_NAME_MAX. */
static unsigned dpdk_xstats(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n)
{
	struct dpdk_dev *x = dev->priv;
	uint64_t v[10] = {0};
	unsigned i = 0;
	int np;

	for (unsigned qi = 0; qi < x->nq; qi++) {
		const struct dpdk_queue *q = &x->q[qi];
		v[0] += ld(&q->xst.tx_copies);
		v[1] += ld(&q->xst.tx_no_neigh);
		v[2] += ld(&q->xst.tx_runt);
		v[3] += ld(&q->xst.tx_too_long);
		v[4] += ld(&q->xst.rx_runt);
		v[5] += ld(&q->xst.rx_multiseg);
		v[6] += ld(&q->xst.rx_vlan_reinserted);
		v[7] += ld(&q->net.st.rx_csum_partial);
		v[8] += ld(&q->net.st.arp_replied);
	}
	v[9] = rte_mempool_in_use_count(x->mp);
	i = rf_io_xstat_put(xs, n, i, "tx_copies", v[0]);
	i = rf_io_xstat_put(xs, n, i, "tx_no_neigh", v[1]);
	i = rf_io_xstat_put(xs, n, i, "tx_runt", v[2]);
	i = rf_io_xstat_put(xs, n, i, "tx_too_long", v[3]);
	i = rf_io_xstat_put(xs, n, i, "rx_runt", v[4]);
	i = rf_io_xstat_put(xs, n, i, "rx_multiseg", v[5]);
	i = rf_io_xstat_put(xs, n, i, "rx_vlan_reinserted", v[6]);
	i = rf_io_xstat_put(xs, n, i, "rx_csum_partial", v[7]);
	i = rf_io_xstat_put(xs, n, i, "arp_replied", v[8]);
	i = rf_io_xstat_put(xs, n, i, "mbufs_in_use", v[9]);
	np = rte_eth_xstats_get(x->port_id, NULL, 0);
	if (np > 0) {
		struct rte_eth_xstat *pv = calloc((size_t)np, sizeof(*pv));
		struct rte_eth_xstat_name *pn = calloc((size_t)np, sizeof(*pn));
		int gv = pv ? rte_eth_xstats_get(x->port_id, pv, (unsigned)np) : -1;
		int gn = pn ? rte_eth_xstats_get_names(x->port_id, pn, (unsigned)np) : -1;
		for (int k = 0; k < np && k < gv && k < gn; k++) {
			char name[96]; /* cut to RF_IO_XSTAT_NAME_MAX by rf_io_xstat_put */
			snprintf(name, sizeof(name), "pmd.%s", pn[pv[k].id].name);
			i = rf_io_xstat_put(xs, n, i, name, pv[k].value);
		}
		free(pv);
		free(pn);
	}
	return i;
}

/* The socket PMDs report their link up from start to stop whatever the interface does: ask
 * the kernel about the interface instead. */
static int dpdk_link_up(struct rf_io_dev *dev)
{
	struct dpdk_dev *x = dev->priv;
	struct rte_eth_link l;
	if (x->ctl_fd >= 0)
		return rf_net_if_running(x->ctl_fd, x->iface);
	int rc = rte_eth_link_get_nowait(x->port_id, &l);
	return rc < 0 ? rc : l.link_status == RTE_ETH_LINK_UP;
}

static void dpdk_close(struct rf_io_dev *dev)
{
	struct dpdk_dev *x = dev->priv;
	struct stat a, b;
	int here = -1;
	if (!x)
		return;
	pthread_mutex_lock(&rf_dpdk_lock);
	/* PMDs that talk to the kernel by interface index (net_af_xdp detaching its XDP
	 * program) must run their close in the netns they were opened in. */
	if (x->ns_fd >= 0 && (here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) >= 0 &&
	    fstat(here, &a) == 0 && fstat(x->ns_fd, &b) == 0 && a.st_ino != b.st_ino)
		setns(x->ns_fd, CLONE_NEWNET);
	else if (here >= 0) {
		close(here);
		here = -1;
	}
	rte_eth_dev_stop(x->port_id);
	if (x->hotplugged) { /* a port the EAL probed (dev=) stays for the next open */
		rte_eth_dev_close(x->port_id);
		rte_eal_hotplug_remove("vdev", x->vdev);
		/* net_af_xdp's sockets are gone, but the kernel unbinds their queues from a
		 * workqueue: give it that moment, so the queues can be opened again at once (the
		 * PMD's failed setup would leak its fill ring's mbufs). */
		if (strncmp(x->vdev, "net_af_xdp", 10) == 0)
			usleep(50000);
	}
	if (x->hold_fd >= 0)
		close(x->hold_fd);
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	if (here >= 0) {
		setns(here, CLONE_NEWNET);
		close(here);
	}
	if (x->ns_fd >= 0)
		close(x->ns_fd);
	rf_dpdk_pool_put();
	rf_dpdk_ndevs--;
	pthread_mutex_unlock(&rf_dpdk_lock);
	free(x);
	dev->priv = NULL;
}

/* ---- open ------------------------------------------------------------------------------ */

/* True when this thread may open raw sockets (CAP_NET_RAW in the effective set). */
static bool has_raw_caps(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return true; /* cannot tell: do not guess */
	return d[0].effective >> CAP_NET_RAW & 1;
}

/*
 * net_af_packet is a tap: the kernel still receives every frame. When the interface also
 * carries ip in the kernel, the kernel would answer our port with ICMP "port unreachable"
 * (and a connected client would see ECONNREFUSED). A bound UDP socket that is never read
 * keeps it quiet: datagrams queue into a minimal receive buffer and are dropped there.
 * Not local (EADDRNOTAVAIL): the kernel ignores the frames anyway, nothing to hold.
 */
static int hold_port(struct dpdk_dev *x, uint32_t ip, uint32_t port, char *err, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int one = 1;

	a.sin_addr.s_addr = ip;
	x->hold_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (x->hold_fd < 0)
		return 0;
	setsockopt(x->hold_fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)); /* the minimum */
	if (bind(x->hold_fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return 0;
	close(x->hold_fd);
	x->hold_fd = -1;
	if (errno == EADDRINUSE)
		return rf_io_err(err, len, "dpdk: UDP port %u is in use by a kernel socket on this "
				 "interface's address: stop it or pick another port=", port);
	return 0;
}

/* The kernel MTU of iface (the socket PMDs' frames are the kernel's), or -errno. */
static int iface_mtu(const char *iface)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;
	if (fd < 0)
		return -errno;
	rc = rf_net_if_mtu(fd, iface);
	close(fd);
	return rc;
}

/* devargs for vdev (and whether it needs the kernel interface iface). */
static int vdev_args(const char *vdev, const char *iface, unsigned nq, char *out, size_t olen,
		     bool *raw_iface, char *err, size_t len)
{
	*raw_iface = strncmp(vdev, "net_af_packet", 13) == 0 || strncmp(vdev, "net_af_xdp", 10) == 0;
	if (*raw_iface) {
		if (!iface)
			return rf_io_err(err, len, "dpdk: %s needs iface=IFACE (the kernel interface "
					 "it attaches to)", vdev);
		if (strncmp(vdev, "net_af_packet", 13) == 0)
			snprintf(out, olen, "%s,iface=%s,qpairs=%u", vdev, iface, nq);
		else
			snprintf(out, olen, "%s,iface=%s,start_queue=0,queue_count=%u", vdev, iface, nq);
	} else if (strncmp(vdev, "net_ring", 8) == 0 || strncmp(vdev, "net_null", 8) == 0 ||
		   strncmp(vdev, "net_tap", 7) == 0) {
		snprintf(out, olen, "%s", vdev);
	} else {
		return rf_io_err(err, len, "dpdk: vdev=%s: not supported here (net_af_packetN, "
				 "net_af_xdpN, net_ringN, net_nullN, net_tapN; other ports: start the "
				 "EAL with them and give dev=NAME)", vdev);
	}
	return 0;
}

/* RSS when there are several queues: IP/TCP/UDP hashing as far as the PMD offers it. The
 * socket PMDs offer none and spread by their own means (fanout, the interface's queues). */
static void rss_conf(struct rte_eth_conf *conf, const struct rte_eth_dev_info *info, unsigned nq)
{
	uint64_t want = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;
	memset(conf, 0, sizeof(*conf));
	if (nq > 1 && (info->flow_type_rss_offloads & want)) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads & want;
	}
}

static int dpdk_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	const char *vdev = rf_io_config_get(cfg, "vdev"), *iface = rf_io_config_get(cfg, "iface");
	const char *ipstr = rf_io_config_get(cfg, "ip"), *name = rf_io_config_get(cfg, "dev");
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char devargs[RF_IO_VAL_MAX * 2 + 64];
	uint32_t port, nmbufs, nring, ip = 0;
	struct dpdk_dev *x;
	bool raw_iface = false;
	int rc, sock, mtu;
	uint16_t m16;

	if (!vdev == !name)
		return rf_io_err(err, len, "dpdk: vdev= or dev= is required, one of them: vdev= a "
				 "virtual device ringflow starts (vdev=net_af_packet0,iface=veth1), "
				 "dev= a port the EAL has (dev=0000:03:00.0)");
	if ((rc = rf_io_config_get_u32(cfg, "port", 0, 1, 65535, &port, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "mbufs", 8191, 512, 1u << 20, &nmbufs, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "ring", DPDK_RING_SIZE, 64, 8192, &nring, err, len)))
		return rc;
	if (port == 0 && !dev->frames)
		return rf_io_err(err, len, "dpdk: port= is required: the UDP port to serve (or "
				 "frames=1 for whole frames)");
	if (ipstr && inet_pton(AF_INET, ipstr, &ip) != 1)
		return rf_io_err(err, len, "dpdk: ip=%s: not an IPv4 address", ipstr);
	if (vdev && (rc = vdev_args(vdev, iface, dev->nqueues, devargs, sizeof(devargs), &raw_iface,
				    err, len)) != 0)
		return rc;
	if (raw_iface && rf_net_if_lookup(iface, NULL, dev->frames ? NULL : &ip) != 0)
		return rf_io_err(err, len, "dpdk: interface '%s' not found (check `ip link "
				 "show`; a netns interface needs the process inside it)", iface);
	if (ip == 0 && !dev->frames)
		return rf_io_err(err, len, "dpdk: no IPv4 address: give ip=A.B.C.D (ringflow answers "
				 "ARP for it)");
	mtu = raw_iface ? iface_mtu(iface) : 0;
	if (dev->frames && mtu > 0 &&
	    (unsigned)mtu + ETH_HDR + VLAN_HDR > RTE_MBUF_DEFAULT_DATAROOM) {
		return rf_io_err(err, len, "dpdk: %s has MTU %d: its frames would not fit an mbuf "
				 "(%u bytes) and the PMD would cut them: set its MTU to at most %u",
				 iface, mtu, RTE_MBUF_DEFAULT_DATAROOM,
				 RTE_MBUF_DEFAULT_DATAROOM - ETH_HDR - VLAN_HDR);
	}
	x = calloc(1, sizeof(*x) + dev->nqueues * sizeof(x->q[0]));
	if (!x)
		return rf_io_err(err, len, "dpdk: out of memory");
	x->hold_fd = -1;
	x->ctl_fd = raw_iface ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
	if (raw_iface)
		snprintf(x->iface, sizeof(x->iface), "%s", iface);
	x->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	pthread_mutex_lock(&rf_dpdk_lock);
	if ((rc = rf_dpdk_eal_start(err, len)) != 0)
		goto fail_free;
	if (vdev && !dev->frames && strncmp(vdev, "net_af_packet", 13) == 0 &&
	    (rc = hold_port(x, ip, port, err, len)) != 0)
		goto fail_free;
	if (vdev) {
		snprintf(x->vdev, sizeof(x->vdev), "%s", vdev);
		rc = rte_dev_probe(devargs);
		if (rc != 0) {
			rf_io_err(err, len, "dpdk: starting %s failed: %s%s", devargs, rte_strerror(-rc),
				  raw_iface && !has_raw_caps()
					  ? " (a raw socket needs CAP_NET_RAW, AF_XDP also CAP_NET_ADMIN "
					    "and CAP_BPF: run as root or setcap them on the binary)"
				  : strncmp(vdev, "net_af_xdp", 10) == 0 && dev->nqueues > 1
					  ? " (net_af_xdp wants as many combined queues on the "
					    "interface as queues=: see `ethtool -l`)"
					  : "");
			goto fail_free;
		}
		x->hotplugged = true;
	}
	if (rte_eth_dev_get_port_by_name(vdev ? vdev : name, &x->port_id) != 0) {
		rc = vdev ? rf_io_err(err, len, "dpdk: %s started but has no ethdev port", vdev)
			  : rf_io_err(err, len, "dpdk: dev=%s: no such port in the EAL (start the EAL "
				      "with it: rf_io_driver_init(\"dpdk\", ...) with -a %s)", name,
				      name);
		goto fail_remove;
	}
	if (rte_eth_dev_info_get(x->port_id, &info) != 0) {
		rc = rf_io_err(err, len, "dpdk: %s: no device info", vdev ? vdev : name);
		goto fail_remove;
	}
	if (dev->nqueues > info.max_rx_queues || dev->nqueues > info.max_tx_queues) {
		rc = rf_io_err(err, len, "dpdk: queues=%u out of range: %s has %u rx / %u tx queues",
			       dev->nqueues, vdev ? vdev : name, info.max_rx_queues,
			       info.max_tx_queues);
		goto fail_remove;
	}
	sock = rte_eth_dev_socket_id(x->port_id);
	if ((rc = rf_dpdk_pool_get(x, nmbufs, err, len)) != 0)
		goto fail_remove;
	rss_conf(&conf, &info, dev->nqueues);
	if (rte_eth_dev_configure(x->port_id, (uint16_t)dev->nqueues, (uint16_t)dev->nqueues,
				  &conf) != 0) {
		rc = rf_io_err(err, len, "dpdk: configuring %s failed", vdev ? vdev : name);
		goto fail_pool;
	}
	for (x->nq = 0; x->nq < dev->nqueues; x->nq++) {
		uint16_t qi = (uint16_t)x->nq;
		if (rte_eth_rx_queue_setup(x->port_id, qi, (uint16_t)nring, (unsigned)sock, NULL,
					   x->mp) != 0 ||
		    rte_eth_tx_queue_setup(x->port_id, qi, (uint16_t)nring, (unsigned)sock, NULL) !=
			    0) {
			rc = rf_io_err(err, len, "dpdk: queue %u setup on %s failed (ring=%u)", qi,
				       vdev ? vdev : name, nring);
			goto fail_pool;
		}
	}
	if ((rc = rte_eth_dev_start(x->port_id)) != 0) {
		rf_io_err(err, len, "dpdk: starting port %s failed: %s", vdev ? vdev : name,
			  rte_strerror(-rc));
		goto fail_pool;
	}
	if (dev->frames) /* a forwarder wants every frame, not only those for its MAC */
		rte_eth_promiscuous_enable(x->port_id);
	rte_eth_macaddr_get(x->port_id, &mac);
	for (unsigned i = 0; i < x->nq; i++)
		rf_net_init(&x->q[i].net, mac.addr_bytes, ip, htons((uint16_t)port));
	memcpy(dev->mac, mac.addr_bytes, 6);
	dev->has_mac = true;
	if (mtu <= 0 && rte_eth_dev_get_mtu(x->port_id, &m16) == 0)
		mtu = m16;
	dev->mtu = mtu > 0 ? (unsigned)mtu : 0;
	x->max_frame = (dev->mtu ? dev->mtu : RTE_ETHER_MTU) + ETH_HDR + VLAN_HDR;
	if (x->max_frame > RTE_MBUF_DEFAULT_DATAROOM)
		x->max_frame = RTE_MBUF_DEFAULT_DATAROOM;
	dev->priv = x;
	rf_dpdk_ndevs++;
	pthread_mutex_unlock(&rf_dpdk_lock);
	rf_log(RF_LOG_INFO, "dpdk: %s (port %u, driver %s): %s, %u queue%s%s, ring=%u, %u mbufs "
		"shared by the process's dpdk ports, on %s", vdev ? devargs : name, x->port_id,
		info.driver_name, dev->frames ? "frames" : "messages", x->nq, x->nq == 1 ? "" : "s",
		conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? " (RSS)" : "", nring,
		x->mp->size, rte_eal_has_hugepages() ? "hugepages" : "normal pages");
	return 0;
fail_pool:
	if (x->hotplugged)
		rte_eth_dev_close(x->port_id);
	rf_dpdk_pool_put();
fail_remove:
	if (x->hotplugged)
		rte_eal_hotplug_remove("vdev", x->vdev);
fail_free:
	pthread_mutex_unlock(&rf_dpdk_lock);
	if (x->hold_fd >= 0)
		close(x->hold_fd);
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	if (x->ns_fd >= 0)
		close(x->ns_fd);
	free(x);
	return rc < 0 ? rc : -EINVAL;
}

const struct rf_io_ops rf_io_dpdk_ops = {
	RF_IO_OPS_ABI,
	.name = "dpdk",
	.usage = "dpdk:vdev=net_af_packet0|net_af_xdp0|net_ring0|net_null0|net_tap0|dev=PORT,port=N|frames=1"
		 "[,iface=IFACE,ip=A.B.C.D,queues=K,mbufs=8191,ring=1024]  e.g. "
		 "dpdk:vdev=net_af_packet0,iface=veth1,port=9000 or "
		 "dpdk:vdev=net_af_packet0,iface=veth1,frames=1",
	.keys = "vdev,dev,iface,port,ip,mbufs,ring",
	.max_queues = 16,
	.open = dpdk_open,
	.rx_burst = dpdk_rx_burst,
	.tx_burst = dpdk_tx_burst,
	.stats = dpdk_stats,
	.queue_stats = dpdk_queue_stats,
	.xstats = dpdk_xstats,
	.link_up = dpdk_link_up,
	.close = dpdk_close,
	.init = rf_dpdk_init,
	.fini = rf_dpdk_fini,
	.caps = RF_IO_CAP_FRAMES,
};
