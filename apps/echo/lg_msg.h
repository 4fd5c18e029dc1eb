/*
 * apps/echo/lg_msg.h: the load generator's message, as it travels to the reflector and back.
 *
 * The one idea: the reply is the request, unchanged, so everything the receiver needs to time
 * and account for it travels inside it: which rate point and phase it belongs to (replies that
 * arrive after their point ended are recognised and ignored), its sequence number (loss,
 * duplicates, reordering) and the CLOCK_MONOTONIC time it was sent (RTT from one clock, on one
 * host). The rest of the message is a pattern derived from the sequence number, checked on
 * receipt, so a reflector that mangles payloads is caught.
 *
 * Layout (host byte order: both ends of the measurement are this process):
 *   0  u32 magic "RFLG"   4  u16 point   6  u16 phase (0 warm-up, 1 measured)
 *   8  u64 seq           16  u64 send time (ns)   24..size-1  pattern bytes
 */
#ifndef RINGFLOW_APPS_ECHO_LG_MSG_H
#define RINGFLOW_APPS_ECHO_LG_MSG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define RF_LG_MAGIC 0x474c4652u /* "RFLG" in memory on little-endian hosts */
#define RF_LG_HDR_SIZE 24u
#define RF_LG_MAX_SIZE 1400u   /* one message per UDP datagram, below any veth MTU */
#define RF_LG_PHASE_WARMUP 0u
#define RF_LG_PHASE_MEASURED 1u
#define RF_LG_PHASE_REPORT_REQ 2u /* stream mode: "tell me what you received" (lg_sink.h) */

struct rf_lg_hdr {
	uint32_t magic;
	uint16_t point;
	uint16_t phase;
	uint64_t seq;
	uint64_t send_ns;
};

static inline uint8_t rf_lg_pattern(uint64_t seq, unsigned i)
{
	return (uint8_t)(seq * 131u + i);
}

/* Writes a whole message of `size` bytes (RF_LG_HDR_SIZE <= size <= RF_LG_MAX_SIZE). */
static inline void rf_lg_msg_write(void *buf, unsigned size, const struct rf_lg_hdr *h)
{
	uint8_t *p = buf;
	memcpy(p, h, sizeof(*h));
	for (unsigned i = RF_LG_HDR_SIZE; i < size; i++)
		p[i] = rf_lg_pattern(h->seq, i);
}

/* Rewrites only the send time (a message retried after a short tx burst). */
static inline void rf_lg_msg_stamp(void *buf, uint64_t send_ns)
{
	memcpy((uint8_t *)buf + 16, &send_ns, sizeof(send_ns));
}

/* Parses a reply of `len` bytes into h; false when it is not one of ours of the expected size
 * or its pattern does not check out. */
static inline bool rf_lg_msg_read(const void *buf, unsigned len, unsigned size,
				  struct rf_lg_hdr *h)
{
	const uint8_t *p = buf;
	if (len != size || len < RF_LG_HDR_SIZE)
		return false;
	memcpy(h, p, sizeof(*h));
	if (h->magic != RF_LG_MAGIC || h->phase > RF_LG_PHASE_MEASURED)
		return false;
	for (unsigned i = RF_LG_HDR_SIZE; i < len; i++)
		if (p[i] != rf_lg_pattern(h->seq, i))
			return false;
	return true;
}

/* Checksum of a message as it travels (stream mode: the sender sums it over what it sent, the
 * sink over what it received, and the two sums must agree): the bytes as little-endian 64-bit
 * words, each rotated into the sum so that swapped words change it; cheap enough for Gbit/s. */
static inline uint64_t rf_lg_csum(const void *buf, unsigned len)
{
	const uint8_t *p = buf;
	uint64_t h = len, w;
	unsigned i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = ((h << 7) | (h >> 57)) + w;
	}
	for (; i < len; i++)
		h = ((h << 7) | (h >> 57)) + p[i];
	return h;
}

#endif /* RINGFLOW_APPS_ECHO_LG_MSG_H */
