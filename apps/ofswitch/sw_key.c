/*
 * apps/ofswitch/sw_key.c: a frame becomes a flow key, once, on the poller that received it.
 *
 * Ethernet (at most one 802.1Q or 802.1ad tag: vid and pcp), then by ethertype, each header
 * checked against the bytes present before it is read:
 *   IPv4: IHL and total length; dscp, ecn, protocol, addresses, and in a first fragment the
 *         TCP/UDP/SCTP ports or ICMP type/code;
 *   IPv6: payload length; dscp, ecn, flow label, addresses; extension headers walked (at
 *         most SW_IPV6_MAX_EXT) to the upper-layer protocol, then TCP/UDP/SCTP ports or
 *         ICMPv6 type/code unless the packet is a later fragment;
 *   ARP:  op, and for Ethernet/IPv4 ARP spa/tpa and sha/tha;
 *   MPLS: the top label stack entry (label, tc, bos);
 *   PBB:  the I-SID of the I-TAG (0x88e7);
 * and for IPv6 the OFPIEH_* flags of the extension-header walk (ipv6_exthdr, which shares
 * the flow label's word: bits 20..28).
 * Only what the ethertype (and protocol) calls for is parsed: a plain IPv4/TCP frame costs
 * what it did before. A frame shorter than what its headers claim (an extension header or
 * MPLS stack running past the end too) is refused (-1): the poller drops and counts it.
 * Other ethertypes stop after eth_type; their frames still match on the L2 fields.
 */
#include <stdbool.h>
#include <string.h>

#include "sw.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

/* Ports, or ICMP type/code (icmp: the ICMP protocol number of this IP version), from an L4
 * header of l4len bytes; -1 if it is cut. */
static int l4_parse(const uint8_t *l4, uint32_t l4len, struct sw_key *k, uint8_t icmp)
{
	uint8_t p = k->ip_proto;
	if (p == 6 || p == 17 || p == 132) {
		if (l4len < 4)
			return -1;
		k->tp_src = get16(l4);
		k->tp_dst = get16(l4 + 2);
	} else if (p == icmp) {
		if (l4len < 2)
			return -1;
		k->tp_src = l4[0];
		k->tp_dst = l4[1];
	}
	return 0;
}

/* An extension header's OFPIEH_* bit and its rank in the order RFC 8200 section 4.1
 * recommends (hop-by-hop, destination options before routing, routing, fragment, AH, ESP,
 * destination options before the upper layer); the rank of a destination options header
 * depends on whether routing or one destination header came before. */
static void ieh_note(uint8_t nh, uint16_t *eh, int *last, unsigned *ndest)
{
	uint16_t bit;
	int rank;
	switch (nh) {
	case 0: bit = SW_IEH_HOP, rank = *last < 0 ? 0 : 7; break; /* only first */
	case 43: bit = SW_IEH_ROUTER, rank = 2; break;
	case 44: bit = SW_IEH_FRAG, rank = 3; break;
	case 51: bit = SW_IEH_AUTH, rank = 4; break;
	case 60:
		bit = SW_IEH_DEST;
		rank = (*eh & SW_IEH_ROUTER) || *ndest ? 6 : 1;
		if (++*ndest > 2)
			*eh |= SW_IEH_UNREP;
		break;
	default: return;
	}
	if ((*eh & bit) && bit != SW_IEH_DEST)
		*eh |= SW_IEH_UNREP;
	if (rank < *last || rank == 7)
		*eh |= SW_IEH_UNSEQ;
	*eh |= bit;
	*last = rank == 7 ? *last : rank;
}

/* Hop-by-hop, routing, destination options, fragment, AH: the headers walked over. */
static bool ext_hdr(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 60 || nh == 44 || nh == 51;
}

int sw_ipv6_l4(const uint8_t *ip6, uint32_t plen, uint8_t *proto, bool *later_frag)
{
	uint16_t eh;
	return sw_ipv6_walk(ip6, plen, proto, later_frag, &eh);
}

/* The walk itself, for a packet with at least one extension header (kept out of line so
 * the common case below saves no registers for it). */
__attribute__((noinline)) static int walk_ext(const uint8_t *ip6, uint32_t plen, uint8_t *proto,
					      bool *later_frag, uint16_t *eh)
{
	uint32_t off = 40, end = 40 + plen;
	uint8_t nh = ip6[6];
	int last = -1;
	unsigned ndest = 0;
	*eh = 0;
	for (unsigned i = 0; i < SW_IPV6_MAX_EXT; i++) {
		uint32_t hl;
		if (!ext_hdr(nh))
			break;
		ieh_note(nh, eh, &last, &ndest);
		if (end < off + 8)
			return -1;
		if (nh == 44) { /* fragment: 8 bytes; offset != 0 is a later fragment */
			hl = 8;
			*later_frag = *later_frag || (get16(ip6 + off + 2) & 0xfff8) != 0;
		} else if (nh == 51) { /* AH: length in 4-byte units, minus 2 */
			hl = ((uint32_t)ip6[off + 1] + 2) * 4;
		} else { /* hop-by-hop, routing, destination options: 8-byte units, minus 1 */
			hl = ((uint32_t)ip6[off + 1] + 1) * 8;
		}
		if (end < off + hl)
			return -1;
		nh = ip6[off];
		off += hl;
	}
	if (nh == 50) /* ESP (rank 5): what follows is encrypted */
		*eh |= SW_IEH_ESP | (last > 5 ? SW_IEH_UNSEQ : 0);
	else if (nh == 59)
		*eh |= SW_IEH_NONEXT;
	*proto = nh;
	return (int)off;
}

int sw_ipv6_walk(const uint8_t *ip6, uint32_t plen, uint8_t *proto, bool *later_frag,
		 uint16_t *eh)
{
	uint8_t nh = ip6[6];
	*later_frag = false;
	if (ext_hdr(nh))
		return walk_ext(ip6, plen, proto, later_frag, eh);
	*proto = nh; /* no extension header, the common case */
	*eh = nh == 59 ? SW_IEH_NONEXT : nh == 50 ? SW_IEH_ESP : 0;
	return 40;
}

/* Not inlined: its registers would be saved and restored on every IPv4 frame too
 * (callgrind, key parse + table-0 lookup of an IPv4/UDP frame: 267.5 instructions inlined,
 * 259.5 not; an IPv6 frame pays about one more, the call). */
__attribute__((noinline)) static int ipv6_parse(const uint8_t *ip, uint32_t avail,
						struct sw_key *k)
{
	if (avail < 40)
		return -1;
	uint32_t plen = get16(ip + 4);
	if ((ip[0] >> 4) != 6 || avail < 40 + plen)
		return -1;
	uint8_t tc = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	k->ip_dscp = tc >> 2;
	k->ip_ecn = tc & 3;
	k->flabel = (uint32_t)(ip[1] & 0x0f) << 16 | get16(ip + 2);
	memcpy(k->nw_src, ip + 8, 16);
	memcpy(k->nw_dst, ip + 24, 16);
	bool later;
	uint16_t eh;
	int l4 = sw_ipv6_walk(ip, plen, &k->ip_proto, &later, &eh);
	if (l4 < 0)
		return -1;
	k->flabel |= (uint32_t)eh << SW_EXTHDR_SHIFT;
	if (later)
		return 0;
	return l4_parse(ip + l4, 40 + plen - (uint32_t)l4, k, 58);
}

static int arp_parse(const uint8_t *a, uint32_t avail, struct sw_key *k)
{
	if (avail < 8)
		return -1;
	k->arp_op = get16(a + 6);
	if (get16(a) != 1 || get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return 0;
	if (avail < 28)
		return -1;
	memcpy(k->nw_src, a + 14, 4);
	memcpy(k->nw_dst, a + 24, 4);
	memcpy(k->nw_src + 4, a + 8, 6);  /* sha */
	memcpy(k->nw_dst + 4, a + 18, 6); /* tha */
	return 0;
}

int sw_key_parse(const uint8_t *f, uint32_t len, uint32_t in_port, struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = in_port;
	if (len < 14)
		return -1;
	memcpy(k->eth_dst, f, 6);
	memcpy(k->eth_src, f + 6, 6);
	uint32_t off = 12;
	uint16_t type = get16(f + off);
	if (type == 0x8100 || type == 0x88a8) { /* 802.1Q, or an 802.1ad S-tag (PBB's B-TAG) */
		if (len < 18)
			return -1;
		k->vlan = (uint16_t)(0x1000 | (get16(f + 14) & 0x0fff)); /* OFPVID_PRESENT | vid */
		k->vlan_pcp = f[14] >> 5;
		off += 4;
		type = get16(f + off);
	}
	k->eth_type = type;
	off += 2;
	const uint8_t *ip = f + off;
	if (type != 0x0800) {
		if (type == 0x86dd)
			return ipv6_parse(ip, len - off, k);
		if (type == 0x0806)
			return arp_parse(ip, len - off, k);
		if (type == 0x8847 || type == 0x8848) { /* the top label stack entry */
			if (len < off + 4)
				return -1;
			k->mpls = ((uint32_t)get16(ip) << 16 | get16(ip + 2)) >> 8;
		} else if (type == 0x88e7) { /* PBB: the I-TAG's I-SID */
			if (len < off + 4)
				return -1;
			k->pbb_isid = (uint32_t)ip[1] << 16 | get16(ip + 2);
		}
		return 0;
	}
	if (len < off + 20)
		return -1;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || len < off + tot)
		return -1;
	k->ip_dscp = ip[1] >> 2;
	k->ip_ecn = ip[1] & 3;
	k->ip_proto = ip[9];
	memcpy(k->nw_src, ip + 12, 4);
	memcpy(k->nw_dst, ip + 16, 4);
	if ((get16(ip + 6) & 0x1fff) != 0) /* a later fragment has no L4 header */
		return 0;
	return l4_parse(ip + ihl, tot - ihl, k, 1);
}
