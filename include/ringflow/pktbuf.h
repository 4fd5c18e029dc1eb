/*
 * ringflow/pktbuf.h: packet buffers, the typed layer over the mempool that I/O drivers hand
 * to apps.
 *
 * A buffer is one mempool object: struct rf_pktbuf (metadata, two cache lines), then the data
 * area: RF_PKTBUF_HEADROOM bytes of headroom and data_room bytes of room. The packet is at
 * rf_pktbuf_data(b) = buf_addr + data_off and is data_len bytes long. Raw drivers (AF_XDP,
 * DPDK) prepend Ethernet/IPv4/UDP headers into the headroom.
 *
 * Contract for drivers (io.h has the whole of it): in message mode (UDP/TCP sockets,
 * io_uring, and the raw drivers after they strip Ethernet/IPv4/UDP) the data is the L4
 * payload, `peer` is the remote IP:port (UDP) and `flow` the connection id (TCP). tx_burst
 * sends the data to `peer` (UDP) or on `flow` (TCP). An echo app is: rx_burst, then tx_burst
 * of the same buffers, unchanged. In frame mode (frames=1) the data is a whole Ethernet frame
 * from the destination MAC on, without FCS, and tx_burst sends those bytes unchanged. In both
 * modes `port` is the receiving device's port id and `queue` its queue. A buffer may be
 * handed to another device's tx_burst (forwarding; the ownership rule is in io.h).
 *
 * Two kinds of pools:
 *   - rf_pktbuf_pool_create: buffers in a ringflow mempool (one contiguous hugepage region,
 *     rf_pktbuf_pool_mempool() + rf_mempool_region() give it to AF_XDP as UMEM);
 *   - rf_pktbuf_pool_create_ext: buffers from someone else's allocator through an ops table,
 *     e.g. the DPDK driver keeps a struct rf_pktbuf in each rte_mbuf's private area.
 *
 * Thread-safety: alloc/free from any threads (they are the mempool's calls); create and free
 * of a pool not concurrently with its use. A buffer may be freed by another thread than the
 * one that allocated it. Errors: create returns NULL with errno; alloc_bulk 0 / -ENOBUFS.
 *
 * Debug checks (a pool made with RF_MEMPOOL_DEBUG, or every pool in a build configured with
 * -DRF_DEBUG_CHECKS=ON, as `make asan-test` is): a double free (rf_pktbuf_free/_free_bulk of
 * a free buffer), a write to a buffer after its free (found at the next alloc that hands it
 * out) and a send after free (rf_pktbuf_debug_check, called by drivers' tx) each log one
 * line through the log hook, "<call>: buffer <addr> (pool '<name>', buffer <i> of <n>):
 * <what>", then abort(). Without debug checks none of this is checked: a double free hands
 * the buffer out twice. docs/writing-an-app.md says how to develop with the checks on.
 */
#ifndef RINGFLOW_PKTBUF_H
#define RINGFLOW_PKTBUF_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ringflow/common.h>
#include <ringflow/mempool.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_PKTBUF_HEADROOM 128 /* room for raw drivers to prepend Ethernet/IPv4/UDP headers */
#define RF_PKTBUF_META_SIZE 128 /* bytes reserved for struct rf_pktbuf before the data area */
#define RF_PKTBUF_NAMESIZE RF_MEMPOOL_NAMESIZE

#define RF_PKTBUF_MAX_ROOM ((1u << 20) - RF_PKTBUF_HEADROOM) /* largest data_room of a pool */

/* rf_pktbuf.flags. Set by connection drivers on rx (tcp with events=1 for the first two),
 * read by them on tx; the pool resets them to 0. */
#define RF_PKTBUF_F_CONN_UP 0x1u   /* rx: connection `flow` opened (no data); before its messages */
#define RF_PKTBUF_F_CONN_DOWN 0x2u /* rx: connection `flow` is gone (no data); after its messages */
#define RF_PKTBUF_F_BAD_FRAME 0x4u /* rx: a frame whose length cannot be (its first bytes); the
				    * connection reads no more and closes once replies are sent */
#define RF_PKTBUF_F_CLOSE 0x8u     /* tx: send this buffer's data (may be empty), then stop reading
				    * the connection and close it once its output is sent */
#define RF_PKTBUF_F_ABORT 0x10u    /* tx: close the connection now, unsent output dropped */

struct rf_pktbuf_pool;

struct rf_pktbuf {                 /* lives at the start of a mempool element (cache aligned) */
	void *buf_addr;            /* start of the data area (headroom + room) */
	uint32_t buf_len;          /* bytes of the data area */
	uint32_t data_off;         /* packet starts at buf_addr + data_off (default: RF_PKTBUF_HEADROOM);
				    * 32 bits, as buf_len: an adj() can move it anywhere in a 1 MiB room */
	uint32_t data_len;         /* bytes of packet */
	uint16_t port;             /* device/port index */
	uint16_t queue;            /* rx/tx queue */
	uint16_t flags;
	uint64_t timestamp_ns;     /* rx time (CLOCK_MONOTONIC) when the driver knows it, else 0 */
	uint64_t flow;             /* connection id (TCP drivers) or app's use */
	union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } peer; /* remote addr */
	uint32_t peer_len;         /* 0 when not set */
	struct rf_pktbuf_pool *pool; /* owner, for free */
	void *drv;                 /* driver-private (e.g. the rte_mbuf behind it, a UMEM address) */
};

_Static_assert(sizeof(struct rf_pktbuf) <= RF_PKTBUF_META_SIZE, "rf_pktbuf outgrew its lines");

/* An external allocator (e.g. DPDK's rte_mempool of rte_mbufs). Callbacks get the ctx given
 * to rf_pktbuf_pool_create_ext and may be called from any thread concurrently. */
struct rf_pktbuf_pool_ops {
	const char *name; /* e.g. "dpdk" */
	/* Fills b[0..n) with buffers, all or none: 0 or -ENOBUFS. Each buffer's buf_addr,
	 * buf_len and drv must be set; the pktbuf layer then resets the other fields (data_off =
	 * RF_PKTBUF_HEADROOM, lengths, peer, ...) and sets pool. So buf_len must be at least
	 * RF_PKTBUF_HEADROOM. */
	int (*alloc_bulk)(void *ctx, struct rf_pktbuf **b, unsigned n);
	/* Takes back n buffers this ops table handed out. */
	void (*free_bulk)(void *ctx, struct rf_pktbuf **b, unsigned n);
	/* Free buffers (a snapshot), or NULL: rf_pktbuf_pool_avail then returns 0. */
	unsigned (*avail)(void *ctx);
	/* Called once by rf_pktbuf_pool_free, or NULL. */
	void (*destroy)(void *ctx);
};

/* Creates a pool of n buffers with data_room bytes of room each (after the headroom), on a
 * mempool with a per-thread cache of cache_size (flags as rf_mempool_create). Returns NULL
 * with errno (EINVAL: zero n or data_room, data_room over RF_PKTBUF_MAX_ROOM; others as
 * rf_mempool_create). */
struct rf_pktbuf_pool *rf_pktbuf_pool_create(const char *name, unsigned n, unsigned data_room,
					     unsigned cache_size, unsigned flags);

/* Creates a pool whose buffers come from ops (alloc_bulk and free_bulk required). Returns
 * NULL with errno EINVAL (missing callbacks) or ENOMEM. */
struct rf_pktbuf_pool *rf_pktbuf_pool_create_ext(const char *name,
						 const struct rf_pktbuf_pool_ops *ops, void *ctx);

/* Frees the pool (and its mempool, or calls ops->destroy). NULL is ignored. Buffers still
 * held become invalid. */
void rf_pktbuf_pool_free(struct rf_pktbuf_pool *p);

/* One buffer, reset (data_off = RF_PKTBUF_HEADROOM, data_len 0, no peer), or NULL when the
 * pool is empty (errno ENOBUFS). Thread-safe. */
struct rf_pktbuf *rf_pktbuf_alloc(struct rf_pktbuf_pool *p);

/* n reset buffers into b, all or none: 0 or -ENOBUFS. Thread-safe. */
int rf_pktbuf_alloc_bulk(struct rf_pktbuf_pool *p, struct rf_pktbuf **b, unsigned n);

/* Returns a buffer to its pool (b->pool). NULL is ignored. Thread-safe. */
void rf_pktbuf_free(struct rf_pktbuf *b);

/* Returns n buffers, each to its own pool (they may come from different pools). NULL entries
 * are skipped. Thread-safe. */
void rf_pktbuf_free_bulk(struct rf_pktbuf **b, unsigned n);

/* Debug pools only (RF_MEMPOOL_DEBUG, or any pool in an RF_DEBUG_CHECKS build): if b is a
 * buffer of such a pool that is free now, logs one line through the log hook naming `call`
 * and the buffer, then abort()s. Otherwise returns (no cost beyond one load without debug
 * pools). Drivers call it on tx (send after free); apps may call it where they doubt. */
void rf_pktbuf_debug_check(const struct rf_pktbuf *b, const char *call);

/* The mempool underneath, or NULL for an external pool. */
struct rf_mempool *rf_pktbuf_pool_mempool(struct rf_pktbuf_pool *p);

/* Free buffers (a snapshot; see rf_mempool_avail_count). 0 for NULL. */
unsigned rf_pktbuf_pool_avail(const struct rf_pktbuf_pool *p);

/* The pool's name. */
const char *rf_pktbuf_pool_name(const struct rf_pktbuf_pool *p);

/* Bytes of room after the headroom in each buffer of the pool (0 for an external pool). */
unsigned rf_pktbuf_pool_data_room(const struct rf_pktbuf_pool *p);

/* Start of the packet. */
static inline void *rf_pktbuf_data(const struct rf_pktbuf *b)
{
	return (char *)b->buf_addr + b->data_off;
}

/* Bytes free after the packet's end. */
static inline uint32_t rf_pktbuf_tailroom(const struct rf_pktbuf *b)
{
	return b->buf_len - b->data_off - b->data_len;
}

/* Grows the packet by len bytes at the front (into the headroom); returns the new start, or
 * NULL when the headroom is too small (nothing changes). */
static inline void *rf_pktbuf_prepend(struct rf_pktbuf *b, uint32_t len)
{
	if (rf_unlikely(len > b->data_off))
		return NULL;
	b->data_off -= len;
	b->data_len += len;
	return rf_pktbuf_data(b);
}

/* Drops len bytes from the front; returns the new start, or NULL when len > data_len. */
static inline void *rf_pktbuf_adj(struct rf_pktbuf *b, uint32_t len)
{
	if (rf_unlikely(len > b->data_len))
		return NULL;
	b->data_off += len;
	b->data_len -= len;
	return rf_pktbuf_data(b);
}

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_PKTBUF_H */
