/*
 * mempool/pktbuf.c: packet buffers over a mempool, or over an external allocator's ops table.
 *
 * A ringflow pool's element is [struct rf_pktbuf | headroom | room]; the metadata is reset
 * on every alloc (debug mode poisons free objects, and drivers leave fields set), so a
 * buffer never carries the previous packet's peer or lengths. Pointer arrays go through a
 * small local void * array rather than casting struct rf_pktbuf ** to void **.
 *
 * Debug pools (RF_MEMPOOL_DEBUG, every pool with RF_DEBUG_CHECKS) check ownership: a free
 * object is poisoned, pool pointer included, so a free must not trust b->pool. Debug pools
 * are listed in a small table; free and rf_pktbuf_debug_check find a buffer's pool by its
 * address there and ask the mempool's cookie whether it is in use. A misuse is one log line
 * naming the call and the buffer, then abort(): the program stops where the bug is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "mempool_pvt.h"

#define RF_PKTBUF_CHUNK 64

struct rf_pktbuf_pool {
	struct rf_mempool *mp;                /* NULL for an external pool */
	const struct rf_pktbuf_pool_ops *ops; /* NULL for a ringflow pool */
	void *ctx;
	unsigned data_room;
	char name[RF_PKTBUF_NAMESIZE];
};

/* The debug pools, for finding a buffer's pool without reading the buffer. A slot is
 * claimed with a CAS at create and cleared at pool free (which may not run concurrently with
 * the pool's use, so a lookup never meets a pool being freed). */
#define RF_PB_DEBUG_MAX 64
static struct rf_pktbuf_pool *_Atomic rf_pb_debug[RF_PB_DEBUG_MAX];
static _Atomic unsigned rf_pb_debug_n; /* pools listed: 0 skips every check */

static void rf_pb_debug_add(struct rf_pktbuf_pool *p)
{
	for (unsigned i = 0; i < RF_PB_DEBUG_MAX; i++) {
		struct rf_pktbuf_pool *none = NULL;
		/* release: pairs with the acquire load in rf_pb_debug_owner: the pool's fields
		 * are set before a lookup can see it. */
		if (atomic_compare_exchange_strong_explicit(&rf_pb_debug[i], &none, p,
							    memory_order_release,
							    memory_order_relaxed)) {
			/* relaxed: only a hint that the table is non-empty; the slot orders. */
			atomic_fetch_add_explicit(&rf_pb_debug_n, 1, memory_order_relaxed);
			return;
		}
	}
	rf_log(RF_LOG_WARN, "pktbuf pool '%s': more than %d debug pools, its buffers are checked "
	       "by the mempool only (no abort on misuse)", p->name, RF_PB_DEBUG_MAX);
}

static void rf_pb_debug_del(struct rf_pktbuf_pool *p)
{
	for (unsigned i = 0; i < RF_PB_DEBUG_MAX; i++) {
		/* relaxed: the pool is quiescent (pool free's contract) */
		if (atomic_load_explicit(&rf_pb_debug[i], memory_order_relaxed) == p) {
			atomic_store_explicit(&rf_pb_debug[i], NULL, memory_order_relaxed);
			atomic_fetch_sub_explicit(&rf_pb_debug_n, 1, memory_order_relaxed);
			return;
		}
	}
}

static struct rf_pktbuf_pool *rf_pb_debug_owner(const struct rf_pktbuf *b, long *idx)
{
	for (unsigned i = 0; i < RF_PB_DEBUG_MAX; i++) {
		/* acquire: pairs with the release CAS in rf_pb_debug_add */
		struct rf_pktbuf_pool *p = atomic_load_explicit(&rf_pb_debug[i],
								memory_order_acquire);
		if (p && (*idx = rf_mempool_obj_index(p->mp, b)) >= 0)
			return p;
	}
	return NULL;
}

static _Noreturn void rf_pb_fatal(const char *call, const struct rf_pktbuf *b,
				  const struct rf_pktbuf_pool *p, long idx, const char *what)
{
	rf_log(RF_LOG_ERR, "%s: buffer %p (pool '%s', buffer %ld of %u): %s", call, (void *)b,
	       p->name, idx, p->mp->n, what);
	abort();
}

/* The slow half of rf_pb_check: some debug pool exists. */
static __attribute__((noinline)) void rf_pb_check_slow(const struct rf_pktbuf *b,
						       const char *call, const char *what)
{
	if (b == NULL)
		return;
	long idx;
	struct rf_pktbuf_pool *p = rf_pb_debug_owner(b, &idx);
	if (!p)
		return; /* not a debug pool's buffer (or an external pool's) */
	if (rf_mp_debug_state(p->mp, b) != 1)
		rf_pb_fatal(call, b, p, idx, what);
	if (b->pool != p)
		rf_pb_fatal(call, b, p, idx, "its pool pointer was overwritten (a stray write)");
}

/* Whether any debug pool exists. relaxed: a hint; a pool is listed before any of its
 * buffers exists. */
static inline bool rf_pb_debugging(void)
{
	return atomic_load_explicit(&rf_pb_debug_n, memory_order_relaxed) != 0;
}

/* Debug pools: aborts unless b is a buffer in use. `what` says what a free buffer means
 * for this call (double free, use after free, send after free). Without debug pools (the
 * fast path: every tx and free of every frame) one load and no call. */
static inline void rf_pb_check(const struct rf_pktbuf *b, const char *call, const char *what)
{
	if (rf_unlikely(rf_pb_debugging()))
		rf_pb_check_slow(b, call, what);
}

void rf_pktbuf_debug_check(const struct rf_pktbuf *b, const char *call)
{
	rf_pb_check(b, call ? call : "rf_pktbuf_debug_check",
		    "used after it was freed (use after free)");
}

static void rf_pktbuf_reset(struct rf_pktbuf *b, struct rf_pktbuf_pool *p)
{
	b->data_off = RF_PKTBUF_HEADROOM;
	b->port = 0;
	b->data_len = 0;
	b->queue = 0;
	b->flags = 0;
	b->timestamp_ns = 0;
	b->flow = 0;
	b->peer.sa.sa_family = AF_UNSPEC;
	b->peer_len = 0;
	b->pool = p;
}

static void rf_pktbuf_init_own(struct rf_pktbuf *b, struct rf_pktbuf_pool *p)
{
	b->buf_addr = (char *)b + RF_PKTBUF_META_SIZE;
	b->buf_len = RF_PKTBUF_HEADROOM + p->data_room;
	b->drv = NULL;
	rf_pktbuf_reset(b, p);
}

static struct rf_pktbuf_pool *rf_pktbuf_pool_new(const char *name)
{
	if (name == NULL)
		name = "";
	if (strlen(name) >= RF_PKTBUF_NAMESIZE) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	struct rf_pktbuf_pool *p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	return p;
}

struct rf_pktbuf_pool *rf_pktbuf_pool_create(const char *name, unsigned n, unsigned data_room,
					     unsigned cache_size, unsigned flags)
{
	if (n == 0 || data_room == 0 || data_room > RF_PKTBUF_MAX_ROOM) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_new(name);
	if (!p)
		return NULL;
	p->data_room = data_room;
	p->mp = rf_mempool_create(p->name, n,
				  (size_t)RF_PKTBUF_META_SIZE + RF_PKTBUF_HEADROOM + data_room,
				  cache_size, flags);
	if (!p->mp) {
		int e = errno;
		free(p);
		errno = e;
		return NULL;
	}
	if (p->mp->debug) {
		rf_mp_debug_fatal(p->mp, "rf_pktbuf_alloc", "rf_pktbuf_free");
		rf_pb_debug_add(p);
	}
	return p;
}

struct rf_pktbuf_pool *rf_pktbuf_pool_create_ext(const char *name,
						 const struct rf_pktbuf_pool_ops *ops, void *ctx)
{
	if (!ops || !ops->alloc_bulk || !ops->free_bulk) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_new(name);
	if (!p)
		return NULL;
	p->ops = ops;
	p->ctx = ctx;
	return p;
}

void rf_pktbuf_pool_free(struct rf_pktbuf_pool *p)
{
	if (!p)
		return;
	if (p->mp && p->mp->debug)
		rf_pb_debug_del(p);
	if (p->mp)
		rf_mempool_free(p->mp);
	else if (p->ops->destroy)
		p->ops->destroy(p->ctx);
	free(p);
}

int rf_pktbuf_alloc_bulk(struct rf_pktbuf_pool *p, struct rf_pktbuf **b, unsigned n)
{
	if (p->ops) {
		int rc = p->ops->alloc_bulk(p->ctx, b, n);
		if (rc)
			return -ENOBUFS;
		for (unsigned i = 0; i < n; i++)
			rf_pktbuf_reset(b[i], p);
		return 0;
	}
	void *tmp[RF_PKTBUF_CHUNK];
	if (n <= RF_PKTBUF_CHUNK) {
		if (rf_mempool_get_bulk(p->mp, tmp, n))
			return -ENOBUFS;
		for (unsigned i = 0; i < n; i++) {
			b[i] = tmp[i];
			rf_pktbuf_init_own(b[i], p);
		}
		return 0;
	}
	/* Larger than a chunk: all or nothing over several gets. */
	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < RF_PKTBUF_CHUNK ? n - done : RF_PKTBUF_CHUNK;
		if (rf_mempool_get_bulk(p->mp, tmp, k)) {
			rf_pktbuf_free_bulk(b, done);
			return -ENOBUFS;
		}
		for (unsigned i = 0; i < k; i++) {
			b[done + i] = tmp[i];
			rf_pktbuf_init_own(b[done + i], p);
		}
		done += k;
	}
	return 0;
}

struct rf_pktbuf *rf_pktbuf_alloc(struct rf_pktbuf_pool *p)
{
	struct rf_pktbuf *b;
	if (rf_pktbuf_alloc_bulk(p, &b, 1)) {
		errno = ENOBUFS;
		return NULL;
	}
	return b;
}

/* Returns a run of buffers that all belong to pool p. */
static void rf_pktbuf_free_run(struct rf_pktbuf_pool *p, struct rf_pktbuf **b, unsigned n)
{
	if (p->ops) {
		p->ops->free_bulk(p->ctx, b, n);
		return;
	}
	void *tmp[RF_PKTBUF_CHUNK];
	for (unsigned done = 0; done < n;) {
		unsigned k = n - done < RF_PKTBUF_CHUNK ? n - done : RF_PKTBUF_CHUNK;
		for (unsigned i = 0; i < k; i++)
			tmp[i] = b[done + i];
		rf_mempool_put_bulk(p->mp, tmp, k);
		done += k;
	}
}

void rf_pktbuf_free_bulk(struct rf_pktbuf **b, unsigned n)
{
	if (rf_unlikely(rf_pb_debugging())) /* one load per burst, not per buffer */
		for (unsigned k = 0; k < n; k++)
			rf_pb_check_slow(b[k], "rf_pktbuf_free_bulk", "already freed (double free)");
	unsigned i = 0;
	while (i < n) {
		if (!b[i]) {
			i++;
			continue;
		}
		struct rf_pktbuf_pool *p = b[i]->pool;
		unsigned j = i + 1;
		while (j < n && b[j] && b[j]->pool == p)
			j++;
		rf_pktbuf_free_run(p, &b[i], j - i);
		i = j;
	}
}

void rf_pktbuf_free(struct rf_pktbuf *b)
{
	if (!b)
		return;
	rf_pb_check(b, "rf_pktbuf_free", "already freed (double free)");
	rf_pktbuf_free_run(b->pool, &b, 1);
}

struct rf_mempool *rf_pktbuf_pool_mempool(struct rf_pktbuf_pool *p)
{
	return p ? p->mp : NULL;
}

unsigned rf_pktbuf_pool_avail(const struct rf_pktbuf_pool *p)
{
	if (!p)
		return 0;
	if (p->mp)
		return rf_mempool_avail_count(p->mp);
	return p->ops->avail ? p->ops->avail(p->ctx) : 0;
}

const char *rf_pktbuf_pool_name(const struct rf_pktbuf_pool *p)
{
	return p ? p->name : "";
}

unsigned rf_pktbuf_pool_data_room(const struct rf_pktbuf_pool *p)
{
	return p ? p->data_room : 0;
}
