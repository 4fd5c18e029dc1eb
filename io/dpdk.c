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
 * EAL: initialised once per process on the first open, with --no-pci (each device's vdev is
 * then hot-plugged with rte_dev_probe, built from the config), a unique --file-prefix (rf<pid>), -l 0 (the opening thread) and either
 * --in-memory on hugepages (when enough 2 MiB pages are free) or --no-huge -m 256
 * --no-shconf (said aloud). Pollers are not EAL lcores: each one registers itself with
 * rte_thread_register() on its first burst, so the mbuf pool's per-lcore cache works.
 * The EAL stays up for the process (DPDK cannot start it twice): devices open and close
 * by hot-plug, and rte_eal_cleanup() runs at exit. With --no-telemetry and no shared config
 * the EAL writes no files; its runtime directory is removed right after init, so nothing is
 * left in /var/run/dpdk even by a killed process. Device close frees the mbuf pool (with
 * dynamic memory its hugepages go back) and unplugs the vdev.
 *
 * This file alone builds as gnu11 (DPDK headers need GNU extensions).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io/io_pvt.h"
#include "io/net/net.h"

#define DPDK_RING_SIZE 1024
#define DPDK_NO_HUGE_MB "256"

struct dpdk_queue {
	RF_CACHE_ALIGNED struct rf_net_ctx net; /* own line: queues run on different cores */
	struct rf_io_qstats st; /* written by this queue's thread only */
};

struct dpdk_dev {
	uint16_t port_id;
	struct rte_mempool *mp;
	struct rf_pktbuf_pool *pool; /* the ext pool over mp */
	unsigned nq;
	int ns_fd;   /* the netns the device was opened in (net_af_xdp detaches its program there) */
	int hold_fd; /* net_af_packet: kernel UDP socket on ip:port that keeps the kernel quiet */
	char vdev[64];
	struct dpdk_queue q[];
};

/* EAL state of the process: 0 never started, 1 running, 2 cleaned up (cannot restart). */
static int eal_state;
static char eal_runtime_dir[256];


static inline struct rf_pktbuf *pkt_of(struct rte_mbuf *m)
{
	return rte_mbuf_to_priv(m);
}

/* ---- the external pktbuf pool over the rte_mempool of mbufs ---------------------------- */

static void pkt_bind(struct rf_pktbuf *b, struct rte_mbuf *m)
{
	b->buf_addr = m->buf_addr;
	b->buf_len = m->buf_len;
	b->drv = m;
}

static int ext_alloc(void *ctx, struct rf_pktbuf **b, unsigned n)
{
	struct rte_mbuf *m[RF_IO_MAX_BURST];
	unsigned done = 0;

	while (done < n) {
		unsigned k = n - done < RF_IO_MAX_BURST ? n - done : RF_IO_MAX_BURST;
		if (rte_pktmbuf_alloc_bulk(ctx, m, k) != 0) {
			for (unsigned i = 0; i < done; i++)
				rte_pktmbuf_free(b[i]->drv);
			return -ENOBUFS;
		}
		for (unsigned i = 0; i < k; i++) {
			b[done + i] = pkt_of(m[i]);
			pkt_bind(b[done + i], m[i]);
		}
		done += k;
	}
	return 0;
}

static void ext_free(void *ctx, struct rf_pktbuf **b, unsigned n)
{
	(void)ctx;
	for (unsigned i = 0; i < n; i++)
		rte_pktmbuf_free(b[i]->drv);
}

static unsigned ext_avail(void *ctx)
{
	return rte_mempool_avail_count(ctx);
}

static const struct rf_pktbuf_pool_ops dpdk_pool_ops = {
	.name = "dpdk",
	.alloc_bulk = ext_alloc,
	.free_bulk = ext_free,
	.avail = ext_avail,
};

/* ---- EAL ------------------------------------------------------------------------------- */

static unsigned free_hugepages_2m(void)
{
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	unsigned n = 0;
	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* Remove the EAL's runtime directory (one level of files), which rte_eal_cleanup leaves. */
static void remove_runtime_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* At exit: the EAL is released once for the process (it cannot start again after it). */
static void eal_stop(void)
{
	if (eal_state != 1)
		return;
	rte_eal_cleanup();
	remove_runtime_dir(eal_runtime_dir);
	eal_state = 2;
}

static int eal_start(char *err, size_t len)
{
	char prefix[32];
	char *argv[16];
	int argc = 0, rc;
	bool huge = free_hugepages_2m() >= 256 / 2; /* 256 MiB of 2 MiB pages */

	if (eal_state == 2)
		return rf_io_err(err, len, "dpdk: the EAL failed to start earlier in this process "
				 "and cannot be started again: restart the process");
	if (eal_state == 1)
		return 0;
	snprintf(prefix, sizeof(prefix), "--file-prefix=rf%d", (int)getpid());
	argv[argc++] = "ringflow";
	argv[argc++] = "-l";
	argv[argc++] = "0";
	argv[argc++] = "--no-pci";
	argv[argc++] = prefix;
	argv[argc++] = "--log-level=*:warning";
	argv[argc++] = "--no-telemetry";
	if (huge) {
		argv[argc++] = "--in-memory"; /* hugepages through memfd: no hugetlbfs mount */
	} else {
		argv[argc++] = "--no-huge";
		argv[argc++] = "-m";
		argv[argc++] = DPDK_NO_HUGE_MB;
		argv[argc++] = "--no-shconf";
		rf_log(RF_LOG_WARN, "dpdk: fewer than 128 free 2 MiB hugepages: EAL on normal pages "
			"(--no-huge -m %s; reserve pages in /proc/sys/vm/nr_hugepages for hugepages)",
			DPDK_NO_HUGE_MB);
	}
	argv[argc] = NULL;
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		int e = rte_errno;
		/* A failed rte_eal_init cannot be retried either. */
		eal_state = 2;
		if (e == EACCES || e == EPERM)
			return rf_io_err(err, len, "dpdk: EAL init refused (%s): run as root (or with "
					 "CAP_NET_RAW, CAP_IPC_LOCK, CAP_SYS_ADMIN)", rte_strerror(e));
		return rf_io_err(err, len, "dpdk: EAL init failed: %s", rte_strerror(e));
	}
	snprintf(eal_runtime_dir, sizeof(eal_runtime_dir), "%s", rte_eal_get_runtime_dir());
	/* With --no-shconf/--in-memory and --no-telemetry the EAL puts nothing in its runtime
	 * directory (no IPC socket, no config files): remove it now, so even a process that is
	 * killed leaves nothing in /var/run/dpdk. */
	remove_runtime_dir(eal_runtime_dir);
	atexit(eal_stop);
	eal_state = 1;
	return 0;
}

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

static unsigned dpdk_tx_burst(struct rf_io_dev *dev, unsigned qi, struct rf_pktbuf **pkts,
			      unsigned n)
{
	struct dpdk_dev *x = dev->priv;
	struct dpdk_queue *q = &x->q[qi];
	struct rte_mbuf *out[RF_IO_MAX_BURST];
	uint16_t idx[RF_IO_MAX_BURST], badi[RF_IO_MAX_BURST];
	bool copied[RF_IO_MAX_BURST];
	unsigned i, no = 0, nbad = 0, sent, cut, j;
	uint64_t bytes = 0;

	thread_register();
	if (n > RF_IO_MAX_BURST)
		n = RF_IO_MAX_BURST;
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
			bytes += out[j]->pkt_len - RF_NET_HDR_LEN;
			if (copied[j])
				rf_pktbuf_free(pkts[idx[j]]);
		} else if (copied[j]) {
			rte_pktmbuf_free(out[j]);
		}
	}
	for (j = 0; j < nbad && badi[j] < cut; j++)
		rf_pktbuf_free(pkts[badi[j]]);
	rf_stat_add(&q->st.tx_drops, j);
	rf_stat_add(&q->st.tx_pkts, sent);
	rf_stat_add(&q->st.tx_bytes, bytes);
	return cut;
}

static void dpdk_stats(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	struct dpdk_dev *x = dev->priv;
	for (unsigned i = 0; i < x->nq; i++)
		rf_io_qstats_sum(&x->q[i].st, st);
}

static void dpdk_close(struct rf_io_dev *dev)
{
	struct dpdk_dev *x = dev->priv;
	struct stat a, b;
	int here = -1;
	if (!x)
		return;
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
	rte_eth_dev_close(x->port_id);
	rte_eal_hotplug_remove("vdev", x->vdev);
	if (x->hold_fd >= 0)
		close(x->hold_fd);
	if (here >= 0) {
		setns(here, CLONE_NEWNET);
		close(here);
	}
	if (x->ns_fd >= 0)
		close(x->ns_fd);
	rf_pktbuf_pool_free(x->pool);
	rte_mempool_free(x->mp);
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

static int dpdk_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	const char *vdev = rf_io_config_get(cfg, "vdev"), *iface = rf_io_config_get(cfg, "iface");
	const char *ipstr = rf_io_config_get(cfg, "ip");
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	char devargs[RF_IO_VAL_MAX * 2 + 64], name[RTE_MEMPOOL_NAMESIZE];
	uint32_t port, nmbufs, nring, ip = 0;
	struct dpdk_dev *x;
	bool raw_iface;
	int rc, sock;
	static unsigned seq;

	if (!vdev)
		return rf_io_err(err, len, "dpdk: vdev= is required (e.g. %s)", rf_io_dpdk_ops.usage);
	if ((rc = rf_io_config_get_u32(cfg, "port", 0, 1, 65535, &port, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "mbufs", 8191, 512, 1u << 20, &nmbufs, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "ring", DPDK_RING_SIZE, 64, 8192, &nring, err, len)))
		return rc;
	if (port == 0)
		return rf_io_err(err, len, "dpdk: port= is required: the UDP port to serve");
	if (ipstr && inet_pton(AF_INET, ipstr, &ip) != 1)
		return rf_io_err(err, len, "dpdk: ip=%s: not an IPv4 address", ipstr);
	raw_iface = strncmp(vdev, "net_af_packet", 13) == 0 || strncmp(vdev, "net_af_xdp", 10) == 0;
	if (raw_iface) {
		if (!iface)
			return rf_io_err(err, len, "dpdk: %s needs iface=IFACE (the kernel interface "
					 "it attaches to)", vdev);
		rc = rf_net_if_lookup(iface, NULL, &ip);
		if (rc != 0)
			return rf_io_err(err, len, "dpdk: interface '%s' not found (check `ip link "
					 "show`; a netns interface needs the process inside it)", iface);
		if (strncmp(vdev, "net_af_packet", 13) == 0)
			snprintf(devargs, sizeof(devargs), "%s,iface=%s,qpairs=%u", vdev, iface,
				 dev->nqueues);
		else
			snprintf(devargs, sizeof(devargs), "%s,iface=%s,start_queue=0,queue_count=%u",
				 vdev, iface, dev->nqueues);
	} else if (strncmp(vdev, "net_ring", 8) == 0 || strncmp(vdev, "net_null", 8) == 0 ||
		   strncmp(vdev, "net_tap", 7) == 0) {
		snprintf(devargs, sizeof(devargs), "%s", vdev);
	} else {
		return rf_io_err(err, len, "dpdk: vdev=%s: not supported here (net_af_packetN, "
				 "net_af_xdpN, net_ringN, net_nullN, net_tapN)", vdev);
	}
	if (ip == 0)
		return rf_io_err(err, len, "dpdk: no IPv4 address: give ip=A.B.C.D (ringflow answers "
				 "ARP for it)");
	if ((rc = eal_start(err, len)) != 0)
		return rc;
	x = calloc(1, sizeof(*x) + dev->nqueues * sizeof(x->q[0]));
	if (!x)
		return rf_io_err(err, len, "dpdk: out of memory");
	snprintf(x->vdev, sizeof(x->vdev), "%s", vdev);
	x->hold_fd = -1;
	x->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (strncmp(vdev, "net_af_packet", 13) == 0 && (rc = hold_port(x, ip, port, err, len)) != 0)
		goto fail_free;
	rc = rte_dev_probe(devargs);
	if (rc != 0) {
		rf_io_err(err, len, "dpdk: starting %s failed: %s%s", devargs, rte_strerror(-rc),
			  raw_iface && (rc == -EPERM || rc == -EACCES || !has_raw_caps())
				  ? " (a raw socket needs CAP_NET_RAW, AF_XDP also CAP_NET_ADMIN and "
				    "CAP_BPF: run as root or setcap them on the binary)"
				  : "");
		goto fail_free;
	}
	if (rte_eth_dev_get_port_by_name(vdev, &x->port_id) != 0 ||
	    rte_eth_dev_info_get(x->port_id, &info) != 0) {
		rc = rf_io_err(err, len, "dpdk: %s started but has no ethdev port", vdev);
		goto fail_remove;
	}
	if (dev->nqueues > info.max_rx_queues || dev->nqueues > info.max_tx_queues) {
		rc = rf_io_err(err, len, "dpdk: queues=%u out of range: %s has %u rx / %u tx queues",
			       dev->nqueues, vdev, info.max_rx_queues, info.max_tx_queues);
		goto fail_remove;
	}
	snprintf(name, sizeof(name), "rfmb%d_%u", (int)getpid(), seq++);
	sock = rte_eth_dev_socket_id(x->port_id);
	/* The rf_pktbuf lives in the mbuf's private area: the mbuf is the app's buffer. */
	x->mp = rte_pktmbuf_pool_create(name, nmbufs, 256, RF_PKTBUF_META_SIZE,
					RTE_MBUF_DEFAULT_BUF_SIZE, sock < 0 ? SOCKET_ID_ANY : sock);
	if (!x->mp) {
		rc = rf_io_err(err, len, "dpdk: mbuf pool of %u failed: %s (lower mbufs=)", nmbufs,
			       rte_strerror(rte_errno));
		goto fail_remove;
	}
	x->pool = rf_pktbuf_pool_create_ext(name, &dpdk_pool_ops, x->mp);
	memset(&conf, 0, sizeof(conf));
	if (!x->pool || rte_eth_dev_configure(x->port_id, (uint16_t)dev->nqueues,
					      (uint16_t)dev->nqueues, &conf) != 0) {
		rc = rf_io_err(err, len, "dpdk: configuring %s failed", vdev);
		goto fail_pool;
	}
	for (x->nq = 0; x->nq < dev->nqueues; x->nq++) {
		uint16_t qi = (uint16_t)x->nq;
		if (rte_eth_rx_queue_setup(x->port_id, qi, (uint16_t)nring, (unsigned)sock, NULL,
					   x->mp) != 0 ||
		    rte_eth_tx_queue_setup(x->port_id, qi, (uint16_t)nring, (unsigned)sock, NULL) !=
			    0) {
			rc = rf_io_err(err, len, "dpdk: queue %u setup on %s failed (ring=%u)", qi,
				       vdev, nring);
			goto fail_pool;
		}
	}
	if ((rc = rte_eth_dev_start(x->port_id)) != 0) {
		rf_io_err(err, len, "dpdk: starting port %s failed: %s", vdev, rte_strerror(-rc));
		goto fail_pool;
	}
	rte_eth_macaddr_get(x->port_id, &mac);
	for (unsigned i = 0; i < x->nq; i++)
		rf_net_init(&x->q[i].net, mac.addr_bytes, ip, htons((uint16_t)port));
	dev->priv = x;
	rf_log(RF_LOG_INFO, "dpdk: %s (port %u, driver %s): %u queue%s, ring=%u, %u mbufs on %s",
		devargs, x->port_id, info.driver_name, x->nq, x->nq == 1 ? "" : "s", nring, nmbufs,
		rte_eal_has_hugepages() ? "hugepages" : "normal pages");
	return 0;
fail_pool:
	rte_eth_dev_close(x->port_id);
	rf_pktbuf_pool_free(x->pool);
	rte_mempool_free(x->mp);
fail_remove:
	rte_eal_hotplug_remove("vdev", x->vdev);
fail_free:
	if (x->hold_fd >= 0)
		close(x->hold_fd);
	if (x->ns_fd >= 0)
		close(x->ns_fd);
	free(x);
	return rc < 0 ? rc : -EINVAL;
}

const struct rf_io_ops rf_io_dpdk_ops = {
	.name = "dpdk",
	.usage = "dpdk:vdev=net_af_packet0|net_af_xdp0|net_ring0|net_null0,port=N[,iface=IFACE,"
		 "ip=A.B.C.D,queues=K,mbufs=8191,ring=1024]  e.g. "
		 "dpdk:vdev=net_af_packet0,iface=veth1,port=9000",
	.keys = "vdev,iface,port,ip,mbufs,ring",
	.max_queues = 16,
	.open = dpdk_open,
	.rx_burst = dpdk_rx_burst,
	.tx_burst = dpdk_tx_burst,
	.stats = dpdk_stats,
	.close = dpdk_close,
};
