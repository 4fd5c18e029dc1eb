/*
 * apps/ofswitch/sw_rewrite.c: the frame rewrites of OpenFlow's set_field (Ethernet and IPv4
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
#include "sw_rewrite_pvt.h"

/* The L4 header's bytes needed to rewrite a port and fix its checksum (0: not one we fix). */
static uint32_t l4_need(uint8_t proto)
{
	switch (proto) {
	case 6: return 18;   /* TCP: ports .. checksum */
	case 17: return 8;   /* UDP */
	case 132: return 12; /* SCTP: the common header */
	case 1:              /* ICMPv4 */
	case 58: return 4;   /* ICMPv6: type, code, checksum */
	}
	return 0;
}

/* Where the headers are: IPv4 at *ip (after up to two tags), L4 at *l4 (0: none usable). */
static int locate(const uint8_t *f, uint32_t len, uint32_t *ip, uint32_t *l4, uint8_t *proto,
		  uint32_t *end)
{
	*l4 = 0;
	uint32_t off = sw_l3_type_off(f, len);
	if (!off || sw_get16(f + off) != 0x0800 || len < off + 2 + 20)
		return -1;
	*ip = off + 2;
	const uint8_t *h = f + *ip;
	uint32_t ihl = (uint32_t)(h[0] & 0x0f) * 4, tot = sw_get16(h + 2);
	if ((h[0] >> 4) != 4 || ihl < 20 || tot < ihl || len < *ip + tot)
		return -1;
	*proto = h[9];
	*end = *ip + tot;
	uint32_t need = l4_need(*proto);
	if (need && (sw_get16(h + 6) & 0x1fff) == 0 && tot >= ihl + need)
		*l4 = *ip + ihl;
	return 0;
}

/* Where an IPv6 header is (after up to two tags), or 0. */
static uint32_t locate6(const uint8_t *f, uint32_t len)
{
	uint32_t off = sw_l3_type_off(f, len);
	if (!off || sw_get16(f + off) != 0x86dd || len < off + 2 + 40 || (f[off + 2] >> 4) != 6)
		return 0;
	return off + 2;
}

/* The upper-layer header of the IPv6 packet at ip6 (sw_ipv6_l4 walks the extension
 * headers). *l4 = 0 when there is none usable (a later fragment, a cut one). Returns -1 when
 * the packet or an extension header is cut. */
static int locate6_l4(const uint8_t *f, uint32_t len, uint32_t ip6, uint32_t *l4,
		      uint8_t *proto, uint32_t *end)
{
	*l4 = 0;
	uint32_t plen = sw_get16(f + ip6 + 4);
	bool later;
	if (len < ip6 + 40 + plen)
		return -1;
	*end = ip6 + 40 + plen;
	int off = sw_ipv6_l4(f + ip6, plen, proto, &later);
	if (off < 0)
		return -1;
	uint32_t need = l4_need(*proto);
	if (need && !later && 40 + plen >= (uint32_t)off + need)
		*l4 = ip6 + (uint32_t)off;
	return 0;
}

/* IPv4 or IPv6 (*v6), and the L4 header behind it, which ends at *end. */
static int locate_any(const uint8_t *f, uint32_t len, uint32_t *l4, uint8_t *proto,
		      uint32_t *end, bool *v6)
{
	uint32_t ip6 = locate6(f, len), ip;
	*v6 = ip6 != 0;
	if (ip6)
		return locate6_l4(f, len, ip6, l4, proto, end);
	return locate(f, len, &ip, l4, proto, end);
}

/* Offset of the 16-bit L4 checksum from the L4 header, or 0 for none to fix (SCTP's
 * CRC32c is recomputed instead). */
static uint32_t l4_csum(const uint8_t *f, uint32_t l4, uint8_t proto)
{
	switch (proto) {
	case 6: return 16;
	case 17: return sw_get16(f + l4 + 6) ? 6 : 0; /* UDP: 0 means "no checksum" */
	case 1:
	case 58: return 2;
	}
	return 0;
}

/* CRC32c (Castagnoli, reflected 0x82f63b78), as SCTP's checksum (RFC 4960 appendix B). */
static uint32_t crc32c(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xffffffffu;
#if defined(__SSE4_2__)
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t w;
		memcpy(&w, p, 8); /* little-endian: the bytes in wire order, as the CRC wants */
		c = (uint32_t)__builtin_ia32_crc32di(c, w);
	}
	for (; n; n--)
		c = __builtin_ia32_crc32qi(c, *p++);
#else
	for (; n; n--) {
		c ^= *p++;
		for (unsigned k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
#endif
	return ~c;
}

/* SCTP's checksum over the packet [l4, end) with the field zeroed, stored least
 * significant byte first (RFC 4960 appendix B, as Linux stores it). */
static void sctp_fix(uint8_t *f, uint32_t l4, uint32_t end)
{
	memset(f + l4 + 8, 0, 4);
	uint32_t c = crc32c(f + l4, end - l4);
	for (unsigned i = 0; i < 4; i++)
		f[l4 + 8 + i] = (uint8_t)(c >> (8 * i));
}

static void l4_update(uint8_t *f, uint32_t l4, uint8_t proto, uint16_t old, uint16_t new)
{
	uint32_t c = l4 ? l4_csum(f, l4, proto) : 0;
	if (!c)
		return;
	sw_csum_update16(f + l4 + c, old, new);
	if (proto == 17 && sw_get16(f + l4 + c) == 0)
		sw_set16(f + l4 + c, 0xffff);
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
	uint32_t ip, l4, end;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto, &end))
		return -1;
	if (proto != 6 && proto != 17)
		l4 = 0; /* ICMPv4's checksum and SCTP's CRC do not cover the addresses */
	uint8_t *a = f + ip + (dst ? 16 : 12);
	for (unsigned i = 0; i < 4; i += 2) {
		uint16_t old = sw_get16(a + i), new = (uint16_t)(addr >> (16 - 8 * i));
		sw_set16(a + i, new);
		sw_csum_update16(f + ip + 10, old, new);
		l4_update(f, l4, proto, old, new);
	}
	return 0;
}

int sw_act_set_l4_port(uint8_t *f, uint32_t len, uint8_t proto, bool dst, uint16_t port)
{
	uint32_t l4, end;
	uint8_t p = 0;
	bool v6;
	if ((proto != 6 && proto != 17 && proto != 132) ||
	    locate_any(f, len, &l4, &p, &end, &v6) || !l4 || p != proto)
		return -1;
	uint8_t *q = f + l4 + (dst ? 2 : 0);
	uint16_t old = sw_get16(q);
	sw_set16(q, port);
	if (p == 132)
		sctp_fix(f, l4, end);
	else
		l4_update(f, l4, p, old, port);
	return 0;
}

int sw_act_set_icmp(uint8_t *f, uint32_t len, bool v6, bool code, uint8_t v)
{
	uint32_t l4, end;
	uint8_t p = 0;
	bool is6;
	if (locate_any(f, len, &l4, &p, &end, &is6) || !l4 || is6 != v6 || p != (v6 ? 58 : 1))
		return -1;
	uint16_t old = sw_get16(f + l4);
	f[l4 + (code ? 1 : 0)] = v;
	l4_update(f, l4, p, old, sw_get16(f + l4));
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
	uint32_t ip, l4, end;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto, &end))
		return -1;
	uint8_t *h = f + ip;
	if (dec && h[8] <= 1)
		return -1; /* the caller drops it: an invalid TTL is not forwarded */
	uint16_t old = sw_get16(h + 8);
	h[8] = dec ? (uint8_t)(h[8] - 1) : ttl;
	sw_csum_update16(h + 10, old, sw_get16(h + 8));
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

/* The TOS / traffic class byte := (tc & keep) | set. */
static int set_tos(uint8_t *f, uint32_t len, uint8_t keep, uint8_t set)
{
	uint32_t ip6 = locate6(f, len);
	if (ip6) { /* traffic class: the low 4 bits of byte 0, the high 4 of byte 1 */
		uint8_t *h = f + ip6;
		uint8_t tc = (uint8_t)((h[0] & 0x0f) << 4 | h[1] >> 4);
		tc = (uint8_t)((tc & keep) | set);
		h[0] = (uint8_t)((h[0] & 0xf0) | tc >> 4);
		h[1] = (uint8_t)((h[1] & 0x0f) | (tc & 0x0f) << 4);
		return 0;
	}
	uint32_t ip, l4, end;
	uint8_t proto;
	if (locate(f, len, &ip, &l4, &proto, &end))
		return -1;
	uint8_t *h = f + ip;
	uint16_t old = sw_get16(h);
	h[1] = (uint8_t)((h[1] & keep) | set);
	sw_csum_update16(h + 10, old, sw_get16(h));
	return 0;
}

int sw_act_set_dscp(uint8_t *f, uint32_t len, uint8_t dscp)
{
	return set_tos(f, len, 3, (uint8_t)((dscp & 0x3f) << 2)); /* ECN bits kept */
}

int sw_act_set_ecn(uint8_t *f, uint32_t len, uint8_t ecn)
{
	return set_tos(f, len, 0xfc, ecn & 3); /* DSCP kept */
}

int sw_act_set_flabel(uint8_t *f, uint32_t len, uint32_t label)
{
	uint32_t ip6 = locate6(f, len);
	if (!ip6)
		return -1;
	uint8_t *h = f + ip6; /* no checksum covers it */
	h[1] = (uint8_t)((h[1] & 0xf0) | ((label >> 16) & 0x0f));
	sw_set16(h + 2, (uint16_t)label);
	return 0;
}

int sw_act_set_ipv6(uint8_t *f, uint32_t len, bool dst, const uint8_t addr[16])
{
	uint32_t ip6 = locate6(f, len), l4, end;
	uint8_t proto = 0;
	if (!ip6 || locate6_l4(f, len, ip6, &l4, &proto, &end))
		return -1;
	if (proto != 6 && proto != 17 && proto != 58)
		l4 = 0; /* SCTP's CRC does not cover the addresses */
	uint8_t *a = f + ip6 + (dst ? 24 : 8);
	for (unsigned i = 0; i < 16; i += 2) {
		uint16_t old = sw_get16(a + i), new = sw_get16(addr + i);
		sw_set16(a + i, new);
		l4_update(f, l4, proto, old, new);
	}
	return 0;
}

/* The ND message (NS or NA) of the frame: its offset and end, or -1. */
static int locate_nd(const uint8_t *f, uint32_t len, uint32_t *l4, uint32_t *end)
{
	uint32_t ip6 = locate6(f, len);
	uint8_t proto = 0;
	if (!ip6 || locate6_l4(f, len, ip6, l4, &proto, end) || !*l4 || proto != 58 ||
	    *end < *l4 + 24 || (f[*l4] != 135 && f[*l4] != 136))
		return -1;
	return 0;
}

/* Bytes [p, p + n) of the ICMPv6 message at l4 := v (n even, p - l4 even), checksum fixed. */
static void icmp6_write(uint8_t *f, uint32_t l4, uint32_t p, const uint8_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i += 2) {
		uint16_t old = sw_get16(f + p + i), new = sw_get16(v + i);
		sw_set16(f + p + i, new);
		sw_csum_update16(f + l4 + 2, old, new);
	}
}

int sw_act_set_nd_target(uint8_t *f, uint32_t len, const uint8_t addr[16])
{
	uint32_t l4, end;
	if (locate_nd(f, len, &l4, &end))
		return -1;
	icmp6_write(f, l4, l4 + 8, addr, 16);
	return 0;
}

int sw_act_set_nd_ll(uint8_t *f, uint32_t len, bool sll, const uint8_t mac[6])
{
	uint32_t l4, end;
	if (locate_nd(f, len, &l4, &end))
		return -1;
	for (uint32_t o = l4 + 24; o + 8 <= end;) {
		uint32_t ol = (uint32_t)f[o + 1] * 8;
		if (ol == 0 || o + ol > end)
			return -1; /* a lying length: the rest cannot be read */
		if (f[o] == (sll ? 1 : 2) && ol == 8) {
			icmp6_write(f, l4, o + 2, mac, 6);
			return 0;
		}
		o += ol;
	}
	return -1;
}

int sw_act_set_arp(uint8_t *f, uint32_t len, uint8_t field, uint32_t v, const uint8_t mac[6])
{
	uint32_t off = sw_l3_type_off(f, len);
	if (!off || sw_get16(f + off) != 0x0806 || len < off + 2 + 28)
		return -1;
	uint8_t *a = f + off + 2;
	if (sw_get16(a) != 1 || sw_get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return -1; /* only Ethernet/IPv4 ARP has these fields where we look */
	switch (field) {
	case SW_ARP_OP: sw_set16(a + 6, (uint16_t)v); break;
	case SW_ARP_SHA: memcpy(a + 8, mac, 6); break;
	case SW_ARP_SPA: sw_set16(a + 14, (uint16_t)(v >> 16)), sw_set16(a + 16, (uint16_t)v); break;
	case SW_ARP_THA: memcpy(a + 18, mac, 6); break;
	case SW_ARP_TPA: sw_set16(a + 24, (uint16_t)(v >> 16)), sw_set16(a + 26, (uint16_t)v); break;
	default: return -1;
	}
	return 0;
}

int sw_act_set_vlan(uint8_t *f, uint32_t len, bool pcp, uint16_t v)
{
	if (len < 18 || !sw_is_tag(sw_get16(f + 12)))
		return -1;
	uint16_t tci = sw_get16(f + 14);
	tci = pcp ? (uint16_t)((tci & 0x1fff) | (v & 7) << 13) : (uint16_t)((tci & 0xf000) | (v & 0xfff));
	sw_set16(f + 14, tci);
	return 0;
}

int sw_act_push_vlan(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t tpid)
{
	if (*len < 14 || cap < *len + 4)
		return -1;
	/* 1.3: the new tag copies VID and PCP from the outer tag if there is one, else 0. */
	uint16_t tci = *len >= 18 && sw_is_tag(sw_get16(f + 12)) ? sw_get16(f + 14) : 0;
	memmove(f + 16, f + 12, *len - 12);
	sw_set16(f + 12, tpid);
	sw_set16(f + 14, tci);
	*len += 4;
	return 0;
}

int sw_act_pop_vlan(uint8_t *f, uint32_t *len)
{
	if (*len < 18 || !sw_is_tag(sw_get16(f + 12)))
		return -1;
	memmove(f + 12, f + 16, *len - 16);
	*len = sw_popped_len(f, *len, 4);
	return 0;
}
