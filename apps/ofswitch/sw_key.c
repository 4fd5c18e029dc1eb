/*
 * apps/ofswitch/sw_key.c: a frame becomes a flow key, once, on the poller that received it.
 *
 * Ethernet (at most one 802.1Q tag: vid and pcp), then IPv4 (its IHL and total length
 * checked against the bytes present; dscp, protocol, addresses) and the TCP/UDP ports or
 * ICMP type/code of a first fragment; or ARP (op, and spa/tpa when it is Ethernet/IPv4
 * ARP); or IPv6 (payload length checked; traffic class, next header, addresses, and TCP/UDP
 * ports when no extension header comes first). A frame shorter than what
 * its headers claim is refused (-1): the poller drops and counts it. Other ethertypes stop
 * after eth_type; their frames still match on the L2 fields.
 */
#include <stdbool.h>
#include <string.h>

#include "sw.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

/* TCP/UDP ports or ICMPv4 type/code from an L4 header of l4len bytes; -1 if it is cut. */
static int l4_parse(const uint8_t *l4, uint32_t l4len, struct sw_key *k, bool icmp4)
{
	if (k->ip_proto == 6 || k->ip_proto == 17) {
		if (l4len < 4)
			return -1;
		k->tp_src = get16(l4);
		k->tp_dst = get16(l4 + 2);
	} else if (icmp4 && k->ip_proto == 1) {
		if (l4len < 2)
			return -1;
		k->tp_src = l4[0];
		k->tp_dst = l4[1];
	}
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
	if (type == 0x8100) {
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
	if (type == 0x0806) { /* ARP: op, and spa/tpa of Ethernet/IPv4 ARP */
		if (len < off + 8)
			return -1;
		k->arp_op = get16(ip + 6);
		if (get16(ip) != 1 || get16(ip + 2) != 0x0800 || ip[4] != 6 || ip[5] != 4)
			return 0;
		if (len < off + 28)
			return -1;
		memcpy(k->nw_src, ip + 14, 4);
		memcpy(k->nw_dst, ip + 24, 4);
		return 0;
	}
	if (type == 0x86dd) { /* IPv6: the fixed header; L4 only right after it */
		if (len < off + 40)
			return -1;
		uint32_t plen = get16(ip + 4);
		if ((ip[0] >> 4) != 6 || len < off + 40 + plen)
			return -1;
		k->ip_dscp = (uint8_t)(((ip[0] & 0x0f) << 4 | ip[1] >> 4) >> 2);
		k->ip_proto = ip[6];
		memcpy(k->nw_src, ip + 8, 16);
		memcpy(k->nw_dst, ip + 24, 16);
		return l4_parse(ip + 40, plen, k, false);
	}
	if (type != 0x0800)
		return 0;
	if (len < off + 20)
		return -1;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || len < off + tot)
		return -1;
	k->ip_dscp = ip[1] >> 2;
	k->ip_proto = ip[9];
	memcpy(k->nw_src, ip + 12, 4);
	memcpy(k->nw_dst, ip + 16, 4);
	if ((get16(ip + 6) & 0x1fff) != 0) /* a later fragment has no L4 header */
		return 0;
	return l4_parse(ip + ihl, tot - ihl, k, true);
}
