/*
 * io/stream_pvt.h: the stream layer both TCP drivers share (tcp in sock_tcp.c, uring:tcp in
 * uring_tcp.c): how a byte stream is cut into messages and messages are framed on the way
 * out, the buffers messages land in, and the connection events an app may ask for.
 *
 * Framings: `prefix16` (default) puts a 2-byte big-endian length before each message (at most
 * 65535 bytes); `inline16` is for protocols whose header carries the frame's length
 * (OpenFlow: 16 bits at frame_off, counting the header): whole frames are handed over header
 * included and buffers are sent as they are. An inline16 length below frame_min cannot be
 * resynchronised: the frame's first frame_min bytes go to the app flagged
 * RF_PKTBUF_F_BAD_FRAME and the connection reads no more.
 * A message longer than a buffer of dev->pool lands in a buffer of the jumbo pool when one is
 * set (rf_io_set_jumbo_pool); without one it is dropped and counted.
 * With `events=1` the app sees each connection open (RF_PKTBUF_F_CONN_UP, before its first
 * message) and go (RF_PKTBUF_F_CONN_DOWN, after its last) as zero-length buffers.
 * The drivers keep their own I/O (epoll + send/recv, or io_uring); what they must do the same
 * way lives here, and tests/io/test_tcp_stream.c runs one table of checks on both.
 */
#ifndef RINGFLOW_IO_STREAM_PVT_H
#define RINGFLOW_IO_STREAM_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

/* Keys rf_stream_cfg_parse understands. */
#define RF_STREAM_KEYS "framing,frame_off,frame_min,events"

enum rf_stream_framing { RF_STREAM_PREFIX16, RF_STREAM_INLINE16 };

struct rf_stream_cfg {
	enum rf_stream_framing framing;
	uint32_t frame_off, frame_min; /* inline16: where the length is; the shortest frame */
	bool events;                   /* CONN_UP / CONN_DOWN buffers */
};

/* Parse the stream keys of cfg (drv names the driver in messages). 0 or -EINVAL + one line. */
int rf_stream_cfg_parse(const struct rf_io_config *cfg, const char *drv, struct rf_stream_cfg *s,
			char *err, size_t len);

/* The frame at the front of a connection's unread bytes: `consume` bytes to drop once it is
 * handed over, the `len` bytes to hand over from `off`, and whether it is a bad frame. */
struct rf_stream_frame {
	uint32_t consume, off, len;
	bool bad;
};

/* True when p[0..avail) starts with a whole frame (or, inline16, a bad frame's first
 * frame_min bytes); *f describes it. False: more bytes are needed. */
bool rf_stream_next_frame(const struct rf_stream_cfg *s, const uint8_t *p, uint32_t avail,
			  struct rf_stream_frame *f);

/* Bytes of framing the driver writes before a message on the way out (2 or 0). */
static inline uint32_t rf_stream_hdr_len(const struct rf_stream_cfg *s)
{
	return s->framing == RF_STREAM_PREFIX16 ? 2 : 0;
}

/* Writes the framing of a len-byte message at dst (rf_stream_hdr_len bytes). */
void rf_stream_put_hdr(const struct rf_stream_cfg *s, uint8_t *dst, uint32_t len);

/* The longest message tx may take: 65535 (prefix16), half the output buffer (inline16). */
uint32_t rf_stream_tx_max(const struct rf_stream_cfg *s, uint32_t out_cap);

/* Whether a tx buffer puts bytes on the wire: any data, or an empty prefix16 message (a
 * zero-length buffer with RF_PKTBUF_F_CLOSE only closes). */
static inline bool rf_stream_tx_writes(const struct rf_stream_cfg *s, const struct rf_pktbuf *b)
{
	return b->data_len || (s->framing == RF_STREAM_PREFIX16 && !(b->flags & RF_PKTBUF_F_CLOSE));
}

/* What rf_stream_take did with a frame. */
enum rf_stream_take { RF_STREAM_TAKEN, RF_STREAM_DROPPED, RF_STREAM_NOBUF };

/* Copies frame f of p into a buffer of dev->pool, or of the jumbo pool when it is longer than
 * a pool buffer's room: TAKEN (*out set; data_len, flags BAD_FRAME when f->bad), DROPPED (too
 * long for any buffer: count it in rx_drops and consume it), NOBUF (pool dry: keep it). */
enum rf_stream_take rf_stream_take(struct rf_io_dev *dev, const struct rf_stream_frame *f,
				   const uint8_t *p, struct rf_pktbuf **out);

/* A zero-length event buffer (RF_PKTBUF_F_CONN_UP / _DOWN) for flow, or NULL (pool dry). */
struct rf_pktbuf *rf_stream_event(struct rf_io_dev *dev, uint16_t flags, uint64_t flow,
				  unsigned queue, const void *peer, uint32_t peer_len);

/* CONN_DOWN events owed to the app (connections it was told about, closed since), oldest
 * first. cap: enough for every connection that can close between two rx_bursts. */
struct rf_stream_downs {
	uint64_t *flow;
	unsigned n, cap;
};
int rf_stream_downs_init(struct rf_stream_downs *d, unsigned cap); /* 0 or -ENOMEM */
void rf_stream_downs_free(struct rf_stream_downs *d);
bool rf_stream_downs_push(struct rf_stream_downs *d, uint64_t flow); /* false: full */
/* Hands over up to n CONN_DOWN buffers into pkts, oldest first; returns how many; *nobuf
 * set when the pool ran dry (the rest stay owed). */
unsigned rf_stream_downs_hand_over(struct rf_io_dev *dev, struct rf_stream_downs *d,
				   unsigned queue, struct rf_pktbuf **pkts, unsigned n,
				   bool *nobuf);

#endif /* RINGFLOW_IO_STREAM_PVT_H */
