/*
 * tests/mempool/test_pktbuf_api.c: packet buffers: layout (metadata, headroom, room inside
 * one mempool object), reset on every alloc, prepend/adj, bulk all-or-nothing, frees that
 * mix pools, and an external pool through an ops table (what the DPDK driver does).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/pktbuf.h>

#define Q RF_MEMPOOL_QUIET

Test(pktbuf_api, create_rejects_bad_arguments)
{
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create("zero", 0, 2048, 0, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create("room0", 8, 0, 0, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create("big", 8, RF_PKTBUF_MAX_ROOM + 1, 0, Q));
	cr_assert_eq(errno, EINVAL);
	/* A jumbo pool: one 64 KiB message per buffer (the data lengths are 32 bits). */
	struct rf_pktbuf_pool *jumbo = rf_pktbuf_pool_create("jumbo", 4, 65536, 0, Q);
	cr_assert_not_null(jumbo);
	struct rf_pktbuf *jb = rf_pktbuf_alloc(jumbo);
	cr_assert_not_null(jb);
	cr_assert_eq(rf_pktbuf_tailroom(jb), 65536);
	rf_pktbuf_free(jb);
	rf_pktbuf_pool_free(jumbo);
	errno = 0;
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create("cache", 8, 2048, 16, Q));
	cr_assert_eq(errno, EINVAL, "mempool's rule: cache <= n");
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create("a_name_that_is_far_too_long_for_it", 8, 64, 0, Q));
	cr_assert_eq(errno, ENAMETOOLONG);
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create_ext("ext", NULL, NULL));
	cr_assert_eq(errno, EINVAL);
	struct rf_pktbuf_pool_ops half = {.name = "half"};
	errno = 0;
	cr_assert_null(rf_pktbuf_pool_create_ext("ext", &half, NULL));
	cr_assert_eq(errno, EINVAL);
	rf_pktbuf_pool_free(NULL);
	rf_pktbuf_free(NULL);
	cr_assert_eq(rf_pktbuf_pool_avail(NULL), 0);
	cr_assert_null(rf_pktbuf_pool_mempool(NULL));
}

Test(pktbuf_api, buffer_layout_and_reset)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("layout", 16, 2048, 4, Q);
	cr_assert_not_null(p);
	cr_assert_str_eq(rf_pktbuf_pool_name(p), "layout");
	cr_assert_eq(rf_pktbuf_pool_data_room(p), 2048);
	struct rf_mempool *mp = rf_pktbuf_pool_mempool(p);
	cr_assert_not_null(mp);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	cr_assert_geq(rf_mempool_obj_index(mp, b), 0, "the buffer is a mempool object");
	cr_assert_eq((uintptr_t)b % RF_CACHE_LINE, 0);
	cr_assert_eq((char *)b->buf_addr, (char *)b + RF_PKTBUF_META_SIZE);
	cr_assert_eq(b->buf_len, RF_PKTBUF_HEADROOM + 2048);
	cr_assert_eq(b->data_off, RF_PKTBUF_HEADROOM);
	cr_assert_eq(rf_pktbuf_data(b), (char *)b->buf_addr + RF_PKTBUF_HEADROOM);
	cr_assert_eq(b->data_len, 0);
	cr_assert_eq(b->peer_len, 0);
	cr_assert_eq(b->pool, p);
	cr_assert_eq(rf_pktbuf_tailroom(b), 2048);
	memset(rf_pktbuf_data(b), 0xee, 2048); /* the whole room is ours */

	/* dirty every field, free, and the next alloc of the same buffer is clean */
	b->data_off = 7;
	b->data_len = 99;
	b->port = 3;
	b->queue = 2;
	b->flags = 1;
	b->timestamp_ns = 5;
	b->flow = 42;
	b->peer_len = sizeof(b->peer.in);
	b->drv = b;
	rf_pktbuf_free(b);
	struct rf_pktbuf *c = rf_pktbuf_alloc(p);
	cr_assert_eq(c, b, "the cache hands the same buffer back");
	cr_assert_eq(c->data_off, RF_PKTBUF_HEADROOM);
	cr_assert_eq(c->data_len, 0);
	cr_assert_eq(c->port + c->queue + c->flags, 0);
	cr_assert_eq(c->timestamp_ns, 0);
	cr_assert_eq(c->flow, 0);
	cr_assert_eq(c->peer_len, 0);
	cr_assert_null(c->drv);
	rf_pktbuf_free(c);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 16);
	rf_pktbuf_pool_free(p);
}

/* data_off is as wide as the room: in a 1 MiB buffer, dropping 900 KB from the front lands
 * where it should (a 16-bit offset would wrap). */
Test(pktbuf_api, adj_past_64k_in_a_max_room_buffer)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("max", 1, RF_PKTBUF_MAX_ROOM, 0, Q);
	cr_assert_not_null(p);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	b->data_len = RF_PKTBUF_MAX_ROOM;
	char *start = rf_pktbuf_data(b);
	start[900000] = 'x';
	char *at = rf_pktbuf_adj(b, 900000);
	cr_assert_eq(at, start + 900000);
	cr_assert_eq(*at, 'x');
	cr_assert_eq(b->data_off, RF_PKTBUF_HEADROOM + 900000u);
	cr_assert_eq(b->data_len, RF_PKTBUF_MAX_ROOM - 900000u);
	cr_assert_eq(rf_pktbuf_tailroom(b), 0);
	cr_assert_eq(rf_pktbuf_prepend(b, 900000), start);
	rf_pktbuf_free(b);
	rf_pktbuf_pool_free(p);
}

Test(pktbuf_api, prepend_and_adj_stay_inside_the_buffer)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("hdr", 2, 256, 0, Q);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	memcpy(rf_pktbuf_data(b), "payload", 7);
	b->data_len = 7;
	char *eth = rf_pktbuf_prepend(b, 42); /* Ethernet + IPv4 + UDP */
	cr_assert_eq(eth, (char *)b->buf_addr + RF_PKTBUF_HEADROOM - 42);
	cr_assert_eq(b->data_len, 49);
	cr_assert_null(rf_pktbuf_prepend(b, RF_PKTBUF_HEADROOM), "headroom exhausted");
	cr_assert_eq(b->data_len, 49, "unchanged");
	char *payload = rf_pktbuf_adj(b, 42);
	cr_assert_eq(memcmp(payload, "payload", 7), 0);
	cr_assert_null(rf_pktbuf_adj(b, 8));
	cr_assert_eq(b->data_len, 7);
	cr_assert_eq(rf_pktbuf_tailroom(b), 256 - 7);
	rf_pktbuf_free(b);
	rf_pktbuf_pool_free(p);
}

Test(pktbuf_api, alloc_bulk_is_all_or_nothing)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("bulk", 200, 512, 32, Q);
	struct rf_pktbuf *b[200], *more[8] = {NULL};
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 0), 0);
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 150), 0, "more than one chunk of 64");
	for (unsigned i = 0; i < 150; i++)
		cr_assert_eq(b[i]->data_off, RF_PKTBUF_HEADROOM);
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b + 150, 51), -ENOBUFS);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 50, "a failed big bulk gives back what it took");
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b + 150, 50), 0);
	errno = 0;
	cr_assert_null(rf_pktbuf_alloc(p));
	cr_assert_eq(errno, ENOBUFS);
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, more, 1), -ENOBUFS);
	cr_assert_null(more[0]);
	rf_pktbuf_free_bulk(b, 200);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 200);
	rf_pktbuf_pool_free(p);
}

Test(pktbuf_api, free_bulk_returns_each_buffer_to_its_pool)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("p", 8, 128, 0, Q);
	struct rf_pktbuf_pool *q = rf_pktbuf_pool_create("q", 8, 128, 2, Q);
	struct rf_pktbuf *mix[7] = {rf_pktbuf_alloc(p), rf_pktbuf_alloc(q), rf_pktbuf_alloc(q),
				    NULL, rf_pktbuf_alloc(p), rf_pktbuf_alloc(p),
				    rf_pktbuf_alloc(q)};
	cr_assert_eq(rf_pktbuf_pool_avail(p), 5);
	cr_assert_eq(rf_pktbuf_pool_avail(q), 5);
	rf_pktbuf_free_bulk(mix, 7);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 8);
	cr_assert_eq(rf_pktbuf_pool_avail(q), 8);
	rf_pktbuf_pool_free(p);
	rf_pktbuf_pool_free(q);
}

/* A toy external allocator: a fixed array of buffers with a free stack, the way the DPDK
 * driver wraps rte_mbufs (buffer in a private area, drv = the mbuf). */
struct toy {
	struct rf_pktbuf bufs[4];
	char data[4][512];
	struct rf_pktbuf *free_stack[4];
	unsigned nfree;
	unsigned destroyed;
};

static int toy_alloc(void *ctx, struct rf_pktbuf **b, unsigned n)
{
	struct toy *t = ctx;
	if (n > t->nfree)
		return -ENOBUFS;
	for (unsigned i = 0; i < n; i++) {
		b[i] = t->free_stack[--t->nfree];
		unsigned idx = (unsigned)(b[i] - t->bufs);
		b[i]->buf_addr = t->data[idx];
		b[i]->buf_len = sizeof(t->data[idx]);
		b[i]->drv = &t->data[idx];
		b[i]->data_len = 12345; /* stale: the layer must reset it */
	}
	return 0;
}

static void toy_free(void *ctx, struct rf_pktbuf **b, unsigned n)
{
	struct toy *t = ctx;
	for (unsigned i = 0; i < n; i++)
		t->free_stack[t->nfree++] = b[i];
}

static unsigned toy_avail(void *ctx)
{
	return ((struct toy *)ctx)->nfree;
}

static void toy_destroy(void *ctx)
{
	((struct toy *)ctx)->destroyed++;
}

static const struct rf_pktbuf_pool_ops toy_ops = {
	.name = "toy", .alloc_bulk = toy_alloc, .free_bulk = toy_free, .avail = toy_avail,
	.destroy = toy_destroy};

Test(pktbuf_api, external_pool_goes_through_its_ops)
{
	static struct toy t;
	for (unsigned i = 0; i < 4; i++)
		t.free_stack[i] = &t.bufs[i];
	t.nfree = 4;
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create_ext("toy", &toy_ops, &t);
	cr_assert_not_null(p);
	cr_assert_null(rf_pktbuf_pool_mempool(p));
	cr_assert_eq(rf_pktbuf_pool_avail(p), 4);
	struct rf_pktbuf *b[4], *x;
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 3), 0);
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(b[i]->pool, p);
		cr_assert_eq(b[i]->data_len, 0, "reset by the layer");
		cr_assert_eq(b[i]->data_off, RF_PKTBUF_HEADROOM);
		cr_assert_not_null(b[i]->drv, "driver field kept");
		cr_assert_eq(rf_pktbuf_data(b[i]), (char *)b[i]->buf_addr + RF_PKTBUF_HEADROOM);
	}
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, &b[3], 2), -ENOBUFS);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 1);
	x = rf_pktbuf_alloc(p);
	cr_assert_not_null(x);
	cr_assert_null(rf_pktbuf_alloc(p));
	rf_pktbuf_free(x);
	rf_pktbuf_free_bulk(b, 3);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 4);
	rf_pktbuf_pool_free(p);
	cr_assert_eq(t.destroyed, 1);
}

Test(pktbuf_api, region_of_a_pool_covers_every_buffer)
{
	/* what AF_XDP registers as UMEM: each buffer's data area lies inside the region */
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("umem", 64, 2048, 0, Q);
	void *base;
	size_t len, stride;
	cr_assert_eq(rf_mempool_region(rf_pktbuf_pool_mempool(p), &base, &len, &stride), 0);
	struct rf_pktbuf *b[64];
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 64), 0);
	for (unsigned i = 0; i < 64; i++) {
		char *d = b[i]->buf_addr;
		cr_assert(d >= (char *)base && d + b[i]->buf_len <= (char *)base + len);
	}
	cr_assert_geq(stride, RF_PKTBUF_META_SIZE + RF_PKTBUF_HEADROOM + 2048);
	rf_pktbuf_free_bulk(b, 64);
	rf_pktbuf_pool_free(p);
}
