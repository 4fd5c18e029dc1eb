/*
 * io/dpdk_pool.c: the DPDK driver's buffers. The one idea: a received rte_mbuf *is* the
 * app's buffer: every mbuf carries a struct rf_pktbuf in its private area, and the driver's
 * buffers form an external pktbuf pool (rf_pktbuf_pool_create_ext) whose alloc and free are
 * rte_pktmbuf_alloc_bulk and rte_pktmbuf_free. Every dpdk device of the process shares one
 * mbuf pool, so a frame received on one port goes out of another as the same mbuf.
 */
#include "io/dpdk_pvt.h"

/* The process's one mbuf pool, shared by every dpdk device (users: devices using it). */
static struct {
	struct rte_mempool *mp;
	struct rf_pktbuf_pool *pool;
	unsigned users;
} shared;


/* ---- the external pktbuf pool over the rte_mempool of mbufs ---------------------------- */

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

/* The process's mbuf pool: the first open creates it (n mbufs), the others share it. */
int rf_dpdk_pool_get(struct dpdk_dev *x, unsigned n, char *err, size_t len)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	if (!shared.mp) {
		static unsigned seq; /* a fresh name each time: PMDs remember a pool by name */
		snprintf(name, sizeof(name), "rfmb%d_%u", (int)getpid(), seq++);
		/* The rf_pktbuf lives in the mbuf's private area: the mbuf is the app's buffer. */
		shared.mp = rte_pktmbuf_pool_create(name, n, 256, RF_PKTBUF_META_SIZE,
						    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		if (!shared.mp)
			return rf_io_err(err, len, "dpdk: mbuf pool of %u failed: %s (lower mbufs=)",
					 n, rte_strerror(rte_errno));
		shared.pool = rf_pktbuf_pool_create_ext(name, &dpdk_pool_ops, shared.mp);
		if (!shared.pool) {
			rte_mempool_free(shared.mp);
			shared.mp = NULL;
			return rf_io_err(err, len, "dpdk: out of memory");
		}
	}
	shared.users++;
	x->mp = shared.mp;
	x->pool = shared.pool;
	return 0;
}

void rf_dpdk_pool_put(void)
{
	if (--shared.users == 0) {
		rf_pktbuf_pool_free(shared.pool);
		rte_mempool_free(shared.mp);
		shared.pool = NULL;
		shared.mp = NULL;
	}
}

