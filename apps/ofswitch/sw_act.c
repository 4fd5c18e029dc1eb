/*
 * apps/ofswitch/sw_act.c: the frame rewrites of OpenFlow's set_field (Ethernet and IPv4
 * addresses, TCP/UDP ports), dec_nw_ttl, push_vlan and pop_vlan, on a frame in a buffer.
 *
 * Checksums are fixed incrementally (RFC 1624: HC' = ~(~HC + ~m + m')), never recomputed
 * over the frame: an IPv4 address is in the IPv4 header checksum and in the TCP/UDP
 * pseudo-header, a port only in the L4 checksum, the TTL only in the IPv4 header checksum.
 * A UDP checksum of 0 (none, over IPv4) stays 0; a computed 0 is sent as 0xffff. L4 headers
 * are touched only in a first fragment whose L4 header is all there; over IPv6 the L4 header
 * is found behind the extension headers (the checksum covers the IPv6 pseudo-header, so a
 * port rewrite is fixed the same way). IPv4/IPv6 are found behind up to two VLAN tags (0x8100 or 0x88a8), so a rewrite after a push_vlan still works.
 * sw_dp.c runs these for a flow's set_field, push/pop_vlan, dec/set_nw_ttl actions.
 */
#include <string.h>

#include "sw.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static void set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The checksum at p after one 16-bit word of the data it covers went from old to new. */
static void csum_update16(uint8_t *p, uint16_t old, uint16_t new)
{
	uint32_t s = (uint16_t)~get16(p) + (uint32_t)(uint16_t)~old + new;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	set16(p, (uint16_t)~s);
}

static bool is_tag(uint16_t tpid)
{
	return tpid == 0x8100 || tpid == 0x88a8;
}

/* Offset of the ethertype after up to two tags, or 0 when the frame is too short. */
static uint32_t l3_type_off(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12;
	for (unsigned t = 0; t < 2 && len >= off + 2 && is_tag(get16(f + off)); t++)
		off += 4;
	return len >= off + 2 ? off : 0;
}

/* The L4 header's bytes needed to rewrite a port and fix its checksum (0: not one we fix). */
static uint32_t l4_need(uint8_t proto)
{
	return proto == 6 ? 18 : proto == 17 ? 8 : 0;
}

/* Where the headers are: IPv4 at *ip (after up to two tags), L4 at *l4 (0: none usable). */
static int locate(const uint8_t *f, uint32_t len, uint32_t *ip, uint32_t *l4, uint8_t *proto)
{
	*l4 = 0;
	uint32_t off = l3_type_off(f, len);
	if (!off || get16(f + off) != 0x0800 || len < off + 2 + 20)
		return -1;
	*ip = off + 2;
	const uint8_t *h = f + *ip;
	uint32_t ihl = (uint32_t)(h[0] & 0x0f) * 4, tot = get16(h + 2);
	if ((h[0] >> 4) != 4 || ihl < 20 || tot < ihl || len < *ip + tot)
		return -1;
	*proto = h[9];
	uint32_t need = l4_need(*proto);
	if (need && (get16(h + 6) & 0x1fff) == 0 && tot >= ihl + need)
		*l4 = *ip + ihl;
	return 0;
}

/* Where an IPv6 header is (after up to two tags), or 0. */
static uint32_t locate6(const uint8_t *f, uint32_t len)
{
	uint32_t off = l3_type_off(f, len);
	if (!off || get16(f + off) != 0x86dd || len < off + 2 + 40 || (f[off + 2] >> 4) != 6)
		return 0;
	return off + 2;
}

/* The upper-layer header of the IPv6 packet at ip6 (sw_ipv6_l4 walks the extension
 * headers). *l4 = 0 when there is none usable (a later fragment, a cut one). Returns -1 when
 * the packet or an extension header is cut. */
static int locate6_l4(const uint8_t *f, uint32_t len, uint32_t ip6, uint32_t *l4,
		      uint8_t *proto)
{
	*l4 = 0;
	uint32_t plen = get16(f + ip6 + 4);
	bool later;
	if (len < ip6 + 40 + plen)
		return -1;
	int off = sw_ipv6_l4(f + ip6, plen, proto, &later);
	if (off < 0)
		return -1;
	uint32_t need = l4_need(*proto);
	if (need && !later && 40 + plen >= (uint32_t)off + need)
		*l4 = ip6 + (uint32_t)off;
	return 0;
}

/* IPv4 or IPv6, and the L4 header behind it. */
static int locate_any(const uint8_t *f, uint32_t len, uint32_t *l4, uint8_t *proto)
{
	uint32_t ip6 = locate6(f, len), ip;
	if (ip6)
		return locate6_l4(f, len, ip6, l4, proto);
	return locate(f, len, &ip, l4, proto);
}

/* Offset of the L4 checksum from the L4 header, or 0 for none to fix. */
static uint32_t l4_csum(const uint8_t *f, uint32_t l4, uint8_t proto)
{
	if (proto == 6)
		return 16;
	return get16(f + l4 + 6) ? 6 : 0; /* UDP: 0 means "no checksum" */
}

static void l4_update(uint8_t *f, uint32_t l4, uint8_t proto, uint16_t old, uint16_t new)
{
	uint32_t c = l4 ? l4_csum(f, l4, proto) : 0;
	if (!c)
		return;
	csum_update16(f + l4 + c, old, new);
	if (proto == 17 && get16(f + l4 + c) == 0)
		set16(f + l4 + c, 0xffff);
}

int sw_act_set_eth(uint8_t *f, uint32_t len, bool dst, const uint8_t mac[6])
{
	if (len < 14)
		return -1;
	memcpy(f + (dst ? 0 : 6), mac, 6);
	return 0;
}

int sw_act_set_ipv4(uint8_t *f, uint32_t len, bool dst, uint32_t addr)
{
	uint32_t ip, l4;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto))
		return -1;
	uint8_t *a = f + ip + (dst ? 16 : 12);
	for (unsigned i = 0; i < 4; i += 2) {
		uint16_t old = get16(a + i), new = (uint16_t)(addr >> (16 - 8 * i));
		set16(a + i, new);
		csum_update16(f + ip + 10, old, new);
		l4_update(f, l4, proto, old, new);
	}
	return 0;
}

int sw_act_set_l4_port(uint8_t *f, uint32_t len, uint8_t proto, bool dst, uint16_t port)
{
	uint32_t l4;
	uint8_t p = 0;
	if (locate_any(f, len, &l4, &p) || !l4 || p != proto)
		return -1;
	uint8_t *q = f + l4 + (dst ? 2 : 0);
	uint16_t old = get16(q);
	set16(q, port);
	l4_update(f, l4, p, old, port);
	return 0;
}

/* TTL (IPv4, header checksum fixed) or hop limit (IPv6) := ttl, or decremented (dec). */
static int nw_ttl(uint8_t *f, uint32_t len, bool dec, uint8_t ttl)
{
	uint32_t ip6 = locate6(f, len);
	if (ip6) {
		uint8_t *hl = f + ip6 + 7; /* IPv6 hop limit: no checksum */
		if (dec && *hl <= 1)
			return -1;
		*hl = dec ? (uint8_t)(*hl - 1) : ttl;
		return 0;
	}
	uint32_t ip, l4;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto))
		return -1;
	uint8_t *h = f + ip;
	if (dec && h[8] <= 1)
		return -1; /* the caller drops it: an invalid TTL is not forwarded */
	uint16_t old = get16(h + 8);
	h[8] = dec ? (uint8_t)(h[8] - 1) : ttl;
	csum_update16(h + 10, old, get16(h + 8));
	return 0;
}

int sw_act_dec_nw_ttl(uint8_t *f, uint32_t len)
{
	return nw_ttl(f, len, true, 0);
}

int sw_act_set_nw_ttl(uint8_t *f, uint32_t len, uint8_t ttl)
{
	return nw_ttl(f, len, false, ttl);
}

int sw_act_set_dscp(uint8_t *f, uint32_t len, uint8_t dscp)
{
	uint32_t ip6 = locate6(f, len);
	if (ip6) { /* traffic class: the low 4 bits of byte 0, the high 4 of byte 1 */
		uint8_t *h = f + ip6;
		uint8_t tc = (uint8_t)((h[0] & 0x0f) << 4 | h[1] >> 4);
		tc = (uint8_t)((dscp & 0x3f) << 2 | (tc & 3));
		h[0] = (uint8_t)((h[0] & 0xf0) | tc >> 4);
		h[1] = (uint8_t)((h[1] & 0x0f) | (tc & 0x0f) << 4);
		return 0;
	}
	uint32_t ip, l4;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto))
		return -1;
	uint8_t *h = f + ip;
	uint16_t old = get16(h);
	h[1] = (uint8_t)((dscp & 0x3f) << 2 | (h[1] & 3)); /* ECN bits kept */
	csum_update16(h + 10, old, get16(h));
	return 0;
}

int sw_act_set_vlan(uint8_t *f, uint32_t len, bool pcp, uint16_t v)
{
	if (len < 18 || !is_tag(get16(f + 12)))
		return -1;
	uint16_t tci = get16(f + 14);
	tci = pcp ? (uint16_t)((tci & 0x1fff) | (v & 7) << 13) : (uint16_t)((tci & 0xf000) | (v & 0xfff));
	set16(f + 14, tci);
	return 0;
}

int sw_act_push_vlan(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t tpid)
{
	if (*len < 14 || cap < *len + 4)
		return -1;
	/* 1.3: the new tag copies VID and PCP from the outer tag if there is one, else 0. */
	uint16_t tci = *len >= 18 && is_tag(get16(f + 12)) ? get16(f + 14) : 0;
	memmove(f + 16, f + 12, *len - 12);
	set16(f + 12, tpid);
	set16(f + 14, tci);
	*len += 4;
	return 0;
}

int sw_act_pop_vlan(uint8_t *f, uint32_t *len)
{
	if (*len < 18 || !is_tag(get16(f + 12)))
		return -1;
	memmove(f + 12, f + 16, *len - 16);
	*len -= 4;
	return 0;
}
