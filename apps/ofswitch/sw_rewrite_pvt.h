/*
 * apps/ofswitch/sw_rewrite_pvt.h: what the frame rewrites (sw_rewrite.c: set-fields and TTLs on
 * IP and L4; sw_rewrite_mpls.c: MPLS and PBB headers) share: big-endian access, the RFC 1624
 * incremental checksum update, where the ethertype is behind up to two VLAN tags, and the
 * length a pop leaves.
 */
#ifndef RINGFLOW_APPS_SW_REWRITE_PVT_H
#define RINGFLOW_APPS_SW_REWRITE_PVT_H

#include <linux/if_ether.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t sw_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline void sw_set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The checksum at p after one 16-bit word of the data it covers went from old to new. */
static inline void sw_csum_update16(uint8_t *p, uint16_t old, uint16_t new)
{
	uint32_t s = (uint16_t)~sw_get16(p) + (uint32_t)(uint16_t)~old + new;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	sw_set16(p, (uint16_t)~s);
}

static inline bool sw_is_tag(uint16_t tpid)
{
	return tpid == 0x8100 || tpid == 0x88a8;
}

/* Offset of the ethertype after up to two tags, or 0 when the frame is too short. */
static inline uint32_t sw_l3_type_off(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12;
	for (unsigned t = 0; t < 2 && len >= off + 2 && sw_is_tag(sw_get16(f + off)); t++)
		off += 4;
	return len >= off + 2 ? off : 0;
}

static inline bool sw_is_mpls(uint16_t type)
{
	return type == 0x8847 || type == 0x8848;
}

/* The length of a frame of len bytes that a pop just moved down by `by` bytes. A frame of
 * Ethernet's minimum (ETH_ZLEN: 60 bytes without the FCS) or more never ends up below it: the
 * bytes the move left at the end become zero padding, as the MAC of a physical port pads a
 * short frame on transmit (a 60-byte tagged frame popped is 56 bytes of frame and 4 of
 * padding, what the wire would carry). A frame that came in shorter, which only a virtual
 * link carries, just gets shorter. */
static inline uint32_t sw_popped_len(uint8_t *f, uint32_t len, uint32_t by)
{
	uint32_t n = len - by;
	if (n < ETH_ZLEN && len >= ETH_ZLEN) {
		memset(f + n, 0, ETH_ZLEN - n);
		n = ETH_ZLEN;
	}
	return n;
}

#endif
