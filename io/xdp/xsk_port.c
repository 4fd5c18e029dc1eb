/*
 * io/xdp/xsk_port.c: one AF_XDP socket and its rings (libxdp's xsk API), frames as UMEM
 * offsets.
 *
 * The one idea: the four rings are single-producer/single-consumer queues shared with the
 * kernel, and every crossing costs. So refill and reap go in batches, and a syscall is made
 * only when the kernel says it is needed (XDP_USE_NEED_WAKEUP): sendto() to start
 * transmission when the tx ring is flagged, recvfrom() when the fill ring is. The ring
 * index loads/stores with acquire/release ordering are inside libxdp's inline helpers
 * (xsk.h: the consumer's release pairs with the producer's acquire in xsk_prod_nb_free).
 *
 * One UMEM per memory region in the process: every port opened over the same region (the
 * queues of one device, and the devices opened on one pktbuf pool) shares it
 * (xsk_socket__create_shared: each (interface, queue) gets its own fill and completion
 * rings), so a frame received on one interface can be sent on another from where it lies.
 * The UMEM is registered by the first port and deleted when the last one closes, in any order.
 */
#include "io/xdp/xsk_port.h"

#include <errno.h>
#include <linux/if_link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

struct rf_xsk_port {
	struct xsk_ring_prod fq; /* fill: empty frames for the kernel to receive into */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_cons cq; /* completion: frames the kernel has sent */
	struct xsk_socket *xsk;
	struct xsk_umem *umem;
	struct umem_share *share;
	bool zc;
	bool busy; /* busy polling set (rf_xsk_port_busy_poll) */
	int fd;
	_Atomic uint64_t tx_kicks; /* sendto() calls made for the kernel (one writer) */
};

/* The process's UMEMs, one per registered region, with the number of ports using each. */
struct umem_share {
	struct umem_share *next;
	void *base;
	size_t len;
	struct xsk_umem *umem;
	unsigned users;
};
static struct umem_share *umems;
static pthread_mutex_t umems_lock = PTHREAD_MUTEX_INITIALIZER;

static int make_socket(struct rf_xsk_port *p, struct rf_xsk_prog *prog, unsigned queue,
		       const struct rf_xsk_ring_sizes *sz, bool shared, uint16_t bind)
{
	struct xsk_socket_config sc = {
		.rx_size = sz->rx,
		.tx_size = sz->tx,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* ours is attached (prog.c) */
		.xdp_flags = prog->xdp_flags,
		.bind_flags = (uint16_t)(bind | XDP_USE_NEED_WAKEUP),
	};
	if (!shared)
		return xsk_socket__create(&p->xsk, prog->ifname, queue, p->umem, &p->rx, &p->tx,
					  &sc);
	return xsk_socket__create_shared(&p->xsk, prog->ifname, queue, p->umem, &p->rx, &p->tx,
					 &p->fq, &p->cq, &sc);
}

int rf_xsk_port_open(struct rf_xsk_port **out, struct rf_xsk_prog *prog, unsigned queue,
		     void *base, size_t len, unsigned frame_size, const struct rf_xsk_ring_sizes *sz,
		     char *err, size_t errlen)
{
	struct xsk_umem_config uc = {
		.fill_size = sz->fill,
		.comp_size = sz->comp,
		.frame_size = frame_size,
		.frame_headroom = 0,
		.flags = XDP_UMEM_UNALIGNED_CHUNK_FLAG,
	};
	struct rf_xsk_port *p = calloc(1, sizeof(*p));
	struct umem_share *sh;
	bool shared;
	int rc, nq;

	*out = NULL;
	if (!p) {
		snprintf(err, errlen, "xdp: out of memory");
		return -ENOMEM;
	}
	nq = rf_xsk_queue_count(prog->ifname);
	if (nq > 0 && queue >= (unsigned)nq) {
		snprintf(err, errlen, "xdp: queue %u out of range: %s has %d rx queue%s (0..%d)",
			 queue, prog->ifname, nq, nq == 1 ? "" : "s", nq - 1);
		free(p);
		return -EINVAL;
	}
	pthread_mutex_lock(&umems_lock);
	for (sh = umems; sh && sh->base != base; sh = sh->next)
		;
	shared = sh != NULL;
	if (sh && sh->len != len) {
		pthread_mutex_unlock(&umems_lock);
		snprintf(err, errlen, "xdp: the region at %p is a UMEM of %zu bytes already, not %zu",
			 base, sh->len, len);
		free(p);
		return -EINVAL;
	}
	if (!sh) {
		sh = calloc(1, sizeof(*sh));
		rc = sh ? xsk_umem__create(&p->umem, base, len, &p->fq, &p->cq, &uc) : -ENOMEM;
		if (rc != 0) {
			pthread_mutex_unlock(&umems_lock);
			if (rc == -ENOBUFS || rc == -ENOMEM || rc == -EPERM)
				snprintf(err, errlen, "xdp: registering the %zu KiB UMEM failed (%s): "
					 "over the memlock limit, or no CAP_NET_RAW; raise it (`ulimit -l unlimited`, "
					 "LimitMEMLOCK=) or grant CAP_IPC_LOCK", len >> 10,
					 strerror(-rc));
			else
				snprintf(err, errlen, "xdp: registering the UMEM failed: %s (ring "
					 "sizes must be powers of two; frame >= 2048)", strerror(-rc));
			free(sh);
			free(p);
			return rc;
		}
		sh->base = base;
		sh->len = len;
		sh->umem = p->umem;
		sh->next = umems;
		umems = sh;
	}
	p->umem = sh->umem;
	p->share = sh;
	sh->users++;
	/* Zero-copy first; drivers without it (veth, skb mode) refuse the bind. */
	/* A queue whose last socket closed a moment ago is still bound: the kernel releases
	 * its buffer pool from a workqueue. Wait for that, bounded (about 1 s). */
	for (int tries = 0;; tries++) {
		rc = make_socket(p, prog, queue, sz, shared, XDP_ZEROCOPY);
		if (rc != 0)
			rc = make_socket(p, prog, queue, sz, shared, XDP_COPY);
		if (rc != -EBUSY || tries == 100)
			break;
		usleep(10000);
	}
	pthread_mutex_unlock(&umems_lock);
	if (rc == 0) { /* ask the kernel: a socket sharing a UMEM takes no bind flags */
		struct xdp_options o = {0};
		socklen_t ol = sizeof(o);
		p->zc = getsockopt(xsk_socket__fd(p->xsk), SOL_XDP, XDP_OPTIONS, &o, &ol) == 0 &&
			(o.flags & XDP_OPTIONS_ZEROCOPY);
	}
	if (rc == 0)
		rc = xsk_socket__update_xskmap(p->xsk, prog->xsks_map_fd);
	if (rc != 0) {
		if (rc == -EPERM || rc == -EACCES)
			snprintf(err, errlen, "xdp: AF_XDP socket refused (needs CAP_NET_RAW): run "
				 "as root, or `setcap cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,cap_ipc_lock+ep <binary>`");
		else if (rc == -EBUSY)
			snprintf(err, errlen, "xdp: %s queue %u already has an AF_XDP socket",
				 prog->ifname, queue);
		else
			snprintf(err, errlen, "xdp: AF_XDP socket on %s queue %u failed: %s",
				 prog->ifname, queue, strerror(-rc));
		rf_xsk_port_close(p);
		return rc;
	}
	p->fd = xsk_socket__fd(p->xsk);
	*out = p;
	return 0;
}

void rf_xsk_port_close(struct rf_xsk_port *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&umems_lock);
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	if (p->share && --p->share->users == 0) {
		struct umem_share **pp = &umems;
		while (*pp != p->share)
			pp = &(*pp)->next;
		*pp = p->share->next;
		xsk_umem__delete(p->share->umem);
		free(p->share);
	}
	pthread_mutex_unlock(&umems_lock);
	free(p);
}

uint64_t rf_xsk_port_tx_kicks(const struct rf_xsk_port *p)
{
	return atomic_load_explicit(&p->tx_kicks, memory_order_relaxed);
}

bool rf_xsk_port_stats(const struct rf_xsk_port *p, struct xdp_statistics *st)
{
	socklen_t sl = sizeof(*st);
	memset(st, 0, sizeof(*st));
	return getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, st, &sl) == 0;
}

bool rf_xsk_port_zerocopy(const struct rf_xsk_port *p)
{
	return p->zc;
}

int rf_xsk_port_fd(const struct rf_xsk_port *p)
{
	return p->fd;
}

unsigned rf_xsk_fill_free(struct rf_xsk_port *p, unsigned want)
{
	return xsk_prod_nb_free(&p->fq, want);
}

unsigned rf_xsk_fill(struct rf_xsk_port *p, const uint64_t *addrs, unsigned n)
{
	uint32_t idx, i;

	if (n == 0 || xsk_ring_prod__reserve(&p->fq, n, &idx) != n)
		return 0;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = addrs[i];
	xsk_ring_prod__submit(&p->fq, n);
	return n;
}

bool rf_xsk_rx_wakeup(struct rf_xsk_port *p)
{
	if (!xsk_ring_prod__needs_wakeup(&p->fq))
		return false;
	recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return true;
}

int rf_xsk_port_busy_poll(struct rf_xsk_port *p, unsigned usecs, unsigned budget, char *err,
			  size_t errlen)
{
	int one = 1, us = (int)usecs, b = (int)budget;
	const char *opt = NULL;

	if (setsockopt(p->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) != 0)
		opt = "SO_PREFER_BUSY_POLL";
	else if (setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us)) != 0)
		opt = "SO_BUSY_POLL";
	else if (setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &b, sizeof(b)) != 0)
		opt = "SO_BUSY_POLL_BUDGET";
	if (opt) {
		int e = errno;
		if (e == EPERM)
			snprintf(err, errlen, "xdp: busy polling: %s needs CAP_NET_ADMIN: run as root "
				 "or leave busy_poll out", opt);
		else if (e == ENOPROTOOPT || e == EINVAL)
			snprintf(err, errlen, "xdp: busy polling: the kernel refused %s (%s; "
				 "SO_PREFER_BUSY_POLL needs Linux 5.11): leave busy_poll out", opt,
				 strerror(e));
		else
			snprintf(err, errlen, "xdp: busy polling: setsockopt %s: %s", opt, strerror(e));
		return -e;
	}
	p->busy = usecs > 0;
	return 0;
}

bool rf_xsk_rx_busy_poll(struct rf_xsk_port *p)
{
	if (!p->busy)
		return false;
	recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return true;
}

unsigned rf_xsk_rx(struct rf_xsk_port *p, struct xdp_desc *descs, unsigned n)
{
	uint32_t idx, got, i;

	got = xsk_ring_cons__peek(&p->rx, n, &idx);
	for (i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);
		descs[i] = *d;
		/* Unaligned mode: the upper bits carry the offset the kernel added. */
		descs[i].addr = xsk_umem__add_offset_to_addr(d->addr);
	}
	if (got)
		xsk_ring_cons__release(&p->rx, got);
	return got;
}

unsigned rf_xsk_tx_free(struct rf_xsk_port *p, unsigned want)
{
	return xsk_prod_nb_free(&p->tx, want);
}

unsigned rf_xsk_tx(struct rf_xsk_port *p, const struct xdp_desc *descs, unsigned n)
{
	uint32_t idx, i;
	unsigned can = xsk_prod_nb_free(&p->tx, n);

	if (can > n)
		can = n;
	if (can == 0 || xsk_ring_prod__reserve(&p->tx, can, &idx) != can)
		return 0;
	for (i = 0; i < can; i++)
		*xsk_ring_prod__tx_desc(&p->tx, idx + i) = descs[i];
	xsk_ring_prod__submit(&p->tx, can);
	/* Copy mode always asks; zero-copy drivers only when their NAPI is idle. EAGAIN,
	 * EBUSY, ENOBUFS: the kernel is busy sending, the frames stay queued. */
	if (xsk_ring_prod__needs_wakeup(&p->tx)) {
		sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		atomic_store_explicit(&p->tx_kicks, /* one writer: relaxed is enough */
				      atomic_load_explicit(&p->tx_kicks, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
	return can;
}

unsigned rf_xsk_complete(struct rf_xsk_port *p, uint64_t *addrs, unsigned n)
{
	uint32_t idx, got, i;

	got = xsk_ring_cons__peek(&p->cq, n, &idx);
	for (i = 0; i < got; i++)
		addrs[i] = *xsk_ring_cons__comp_addr(&p->cq, idx + i);
	if (got)
		xsk_ring_cons__release(&p->cq, got);
	return got;
}
