/*
 * apps/ofswitch/sw_key.c: a frame becomes a flow key, once, on the poller that received it.
 *
 * Ethernet (at most one 802.1Q tag), then IPv4 (its IHL and total length checked against
 * the bytes present), then the TCP/UDP ports of a first fragment. A frame shorter than what
 * its headers claim is refused (-1): the poller drops and counts it. Other ethertypes stop
 * after eth_type; their frames still match on the L2 fields.
 */
#include <string.h>

#include "sw.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
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
		off += 4;
		type = get16(f + off);
	}
	k->eth_type = type;
	off += 2;
	if (type != 0x0800)
		return 0;
	if (len < off + 20)
		return -1;
	const uint8_t *ip = f + off;
	uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || len < off + tot)
		return -1;
	k->ip_proto = ip[9];
	memcpy(&k->ip_src, ip + 12, 4);
	memcpy(&k->ip_dst, ip + 16, 4);
	if ((get16(ip + 6) & 0x1fff) != 0) /* a later fragment has no L4 header */
		return 0;
	if (k->ip_proto == 6 || k->ip_proto == 17) {
		if (tot < ihl + 4)
			return -1;
		k->tp_src = get16(ip + ihl);
		k->tp_dst = get16(ip + ihl + 2);
	}
	return 0;
}
