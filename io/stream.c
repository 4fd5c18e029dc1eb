/*
 * io/stream.c: the stream layer of the TCP drivers (see stream_pvt.h): framing in and out,
 * the buffer a message lands in (the jumbo pool for long ones), connection event buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io_pvt.h"
#include "stream_pvt.h"

int rf_stream_cfg_parse(const struct rf_io_config *cfg, const char *drv, struct rf_stream_cfg *s,
			char *err, size_t len)
{
	unsigned framing;
	int rc;
	if ((rc = rf_io_config_get_enum(cfg, "framing", "prefix16|inline16", RF_STREAM_PREFIX16,
					&framing, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "frame_off", 0, 0, 64, &s->frame_off, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "frame_min", s->frame_off + 2, s->frame_off + 2, 1024,
				       &s->frame_min, err, len)) ||
	    (rc = rf_io_config_get_bool(cfg, "events", false, &s->events, err, len)))
		return rc;
	s->framing = (enum rf_stream_framing)framing;
	if (s->framing == RF_STREAM_PREFIX16 &&
	    (rf_io_config_get(cfg, "frame_off") || rf_io_config_get(cfg, "frame_min")))
		return rf_io_err(err, len, "%s: frame_off and frame_min need framing=inline16", drv);
	return 0;
}

bool rf_stream_next_frame(const struct rf_stream_cfg *s, const uint8_t *p, uint32_t avail,
			  struct rf_stream_frame *f)
{
	if (s->framing == RF_STREAM_PREFIX16) {
		if (avail < 2)
			return false;
		uint32_t l = ((uint32_t)p[0] << 8) | p[1];
		*f = (struct rf_stream_frame){.consume = 2 + l, .off = 2, .len = l};
		return avail >= 2 + l;
	}
	if (avail < s->frame_off + 2)
		return false;
	uint32_t l = ((uint32_t)p[s->frame_off] << 8) | p[s->frame_off + 1];
	if (l < s->frame_min) { /* the stream cannot be resynchronised after this */
		*f = (struct rf_stream_frame){.consume = avail, .off = 0, .len = s->frame_min,
					      .bad = true};
		return avail >= s->frame_min;
	}
	*f = (struct rf_stream_frame){.consume = l, .off = 0, .len = l};
	return avail >= l;
}

void rf_stream_put_hdr(const struct rf_stream_cfg *s, uint8_t *dst, uint32_t len)
{
	if (s->framing == RF_STREAM_PREFIX16) {
		dst[0] = (uint8_t)(len >> 8);
		dst[1] = (uint8_t)len;
	}
}

uint32_t rf_stream_tx_max(const struct rf_stream_cfg *s, uint32_t out_cap)
{
	return s->framing == RF_STREAM_PREFIX16 ? 65535 : out_cap / 2;
}

enum rf_stream_take rf_stream_take(struct rf_io_dev *dev, const struct rf_stream_frame *f,
				   const uint8_t *p, struct rf_pktbuf **out)
{
	unsigned room = rf_pktbuf_pool_data_room(dev->pool); /* 0: external pool, unknown */
	struct rf_pktbuf *b = dev->jumbo_pool && room && f->len > room
				      ? rf_pktbuf_alloc(dev->jumbo_pool)
				      : rf_pktbuf_alloc(dev->pool);
	if (!b)
		return RF_STREAM_NOBUF;
	if (f->len > b->buf_len - b->data_off) {
		rf_pktbuf_free(b); /* longer than a buffer's room: drop it, keep the stream */
		return RF_STREAM_DROPPED;
	}
	memcpy(rf_pktbuf_data(b), p + f->off, f->len);
	b->data_len = f->len;
	if (f->bad)
		b->flags = RF_PKTBUF_F_BAD_FRAME;
	*out = b;
	return RF_STREAM_TAKEN;
}

struct rf_pktbuf *rf_stream_event(struct rf_io_dev *dev, uint16_t flags, uint64_t flow,
				  unsigned queue, const void *peer, uint32_t peer_len)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(dev->pool);
	if (!b)
		return NULL;
	b->flags = flags;
	b->flow = flow;
	b->queue = (uint16_t)queue;
	if (peer && peer_len) {
		uint32_t n = peer_len < sizeof(b->peer) ? peer_len : (uint32_t)sizeof(b->peer);
		memcpy(&b->peer, peer, n);
		b->peer_len = n;
	}
	return b;
}

int rf_stream_downs_init(struct rf_stream_downs *d, unsigned cap)
{
	d->n = 0;
	d->cap = cap;
	d->flow = malloc(cap * sizeof(*d->flow));
	return d->flow ? 0 : -ENOMEM;
}

void rf_stream_downs_free(struct rf_stream_downs *d)
{
	free(d->flow);
	d->flow = NULL;
	d->n = d->cap = 0;
}

bool rf_stream_downs_push(struct rf_stream_downs *d, uint64_t flow)
{
	if (d->n == d->cap)
		return false;
	d->flow[d->n++] = flow;
	return true;
}

unsigned rf_stream_downs_hand_over(struct rf_io_dev *dev, struct rf_stream_downs *d,
				   unsigned queue, struct rf_pktbuf **pkts, unsigned n,
				   bool *nobuf)
{
	unsigned k = 0;
	*nobuf = false;
	while (k < d->n && k < n) {
		struct rf_pktbuf *b = rf_stream_event(dev, RF_PKTBUF_F_CONN_DOWN, d->flow[k], queue,
						      NULL, 0);
		if (!b) {
			*nobuf = true;
			break;
		}
		pkts[k++] = b;
	}
	memmove(d->flow, d->flow + k, (d->n - k) * sizeof(*d->flow));
	d->n -= k;
	return k;
}
