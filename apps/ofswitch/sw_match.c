/*
 * apps/ofswitch/sw_match.c: an OpenFlow match (struct of_match, decoded and checked by the
 * protocol module, prerequisites included) becomes the (value, mask) pair over the flow key
 * that the classifier compares, and back again for FLOW stats and FLOW_REMOVED.
 *
 * A field absent from the match has mask 0; an exact field has all ones; a masked field
 * has the controller's mask. The value is stored already masked, so a frame's key k
 * matches when (k & mask) == value, byte by byte (sw_flow_matches). Addresses go into the
 * key in wire order; ports and numbers in host order, as sw_key_parse leaves them.
 * Slots shared between fields (sw.h) are told apart by the prerequisites the protocol
 * module checked: a match holds at most one field of each slot.
 */
#include <string.h>

#include "sw.h"

static void be32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24), p[1] = (uint8_t)(x >> 16), p[2] = (uint8_t)(x >> 8);
	p[3] = (uint8_t)x;
}

#define IS(bit) (m->fields & (bit))
#define MASKED(bit) (m->masked & (bit))

void sw_key_of_match(const struct of_match *m, struct sw_key *v, struct sw_key *mk)
{
	memset(v, 0, sizeof(*v));
	memset(mk, 0, sizeof(*mk));
	if (IS(OF_MATCH_IN_PORT)) {
		v->in_port = m->in_port;
		mk->in_port = 0xffffffffu;
	}
	if (IS(OF_MATCH_ETH_SRC)) {
		memcpy(v->eth_src, m->eth_src, 6);
		if (MASKED(OF_MATCH_ETH_SRC))
			memcpy(mk->eth_src, m->eth_src_mask, 6);
		else
			memset(mk->eth_src, 0xff, 6);
	}
	if (IS(OF_MATCH_ETH_DST)) {
		memcpy(v->eth_dst, m->eth_dst, 6);
		if (MASKED(OF_MATCH_ETH_DST))
			memcpy(mk->eth_dst, m->eth_dst_mask, 6);
		else
			memset(mk->eth_dst, 0xff, 6);
	}
	if (IS(OF_MATCH_ETH_TYPE)) {
		v->eth_type = m->eth_type;
		mk->eth_type = 0xffff;
	}
	if (IS(OF_MATCH_VLAN_VID)) {
		v->vlan = m->vlan_vid;
		mk->vlan = MASKED(OF_MATCH_VLAN_VID) ? m->vlan_vid_mask : 0x1fff;
	}
	if (IS(OF_MATCH_VLAN_PCP)) {
		v->vlan_pcp = m->vlan_pcp;
		mk->vlan_pcp = 0xff;
	}
	if (IS(OF_MATCH_IP_DSCP)) {
		v->ip_dscp = m->ip_dscp;
		mk->ip_dscp = 0xff;
	}
	if (IS(OF_MATCH_IP_PROTO)) {
		v->ip_proto = m->ip_proto;
		mk->ip_proto = 0xff;
	}
	/* IPv4 and ARP addresses share the first 4 bytes of nw_src/nw_dst (prerequisites:
	 * a match has at most one of them, and eth_type tells them apart). */
	static const struct { uint32_t bit; size_t val, msk; bool dst; } a4[] = {
		{OF_MATCH_IPV4_SRC, offsetof(struct of_match, ipv4_src),
		 offsetof(struct of_match, ipv4_src_mask), false},
		{OF_MATCH_IPV4_DST, offsetof(struct of_match, ipv4_dst),
		 offsetof(struct of_match, ipv4_dst_mask), true},
		{OF_MATCH_ARP_SPA, offsetof(struct of_match, arp_spa),
		 offsetof(struct of_match, arp_spa_mask), false},
		{OF_MATCH_ARP_TPA, offsetof(struct of_match, arp_tpa),
		 offsetof(struct of_match, arp_tpa_mask), true},
	};
	for (size_t i = 0; i < sizeof(a4) / sizeof(a4[0]); i++) {
		if (!IS(a4[i].bit))
			continue;
		uint32_t x, y = 0xffffffffu;
		memcpy(&x, (const uint8_t *)m + a4[i].val, 4);
		if (MASKED(a4[i].bit))
			memcpy(&y, (const uint8_t *)m + a4[i].msk, 4);
		be32(a4[i].dst ? v->nw_dst : v->nw_src, x);
		be32(a4[i].dst ? mk->nw_dst : mk->nw_src, y);
	}
	if (IS(OF_MATCH_IPV6_SRC)) {
		memcpy(v->nw_src, m->ipv6_src, 16);
		if (MASKED(OF_MATCH_IPV6_SRC))
			memcpy(mk->nw_src, m->ipv6_src_mask, 16);
		else
			memset(mk->nw_src, 0xff, 16);
	}
	if (IS(OF_MATCH_IPV6_DST)) {
		memcpy(v->nw_dst, m->ipv6_dst, 16);
		if (MASKED(OF_MATCH_IPV6_DST))
			memcpy(mk->nw_dst, m->ipv6_dst_mask, 16);
		else
			memset(mk->nw_dst, 0xff, 16);
	}
	/* ARP sha/tha: bytes 4..9 of the same slots (eth_type 0x0806 is a prerequisite). */
	if (IS(OF_MATCH_ARP_SHA)) {
		memcpy(v->nw_src + 4, m->arp_sha, 6);
		if (MASKED(OF_MATCH_ARP_SHA))
			memcpy(mk->nw_src + 4, m->arp_sha_mask, 6);
		else
			memset(mk->nw_src + 4, 0xff, 6);
	}
	if (IS(OF_MATCH_ARP_THA)) {
		memcpy(v->nw_dst + 4, m->arp_tha, 6);
		if (MASKED(OF_MATCH_ARP_THA))
			memcpy(mk->nw_dst + 4, m->arp_tha_mask, 6);
		else
			memset(mk->nw_dst + 4, 0xff, 6);
	}
	if (IS(OF_MATCH_IP_ECN)) {
		v->ip_ecn = m->ip_ecn;
		mk->ip_ecn = 0xff;
	}
	/* tp_src/tp_dst carry TCP, UDP, SCTP, ICMPv4 or ICMPv6 (ip_proto, a prerequisite,
	 * tells which; a match has at most one of them). */
	if (IS(OF_MATCH_TCP_SRC | OF_MATCH_UDP_SRC | OF_MATCH_SCTP_SRC | OF_MATCH_ICMPV4_TYPE |
	       OF_MATCH_ICMPV6_TYPE)) {
		v->tp_src = IS(OF_MATCH_TCP_SRC)    ? m->tcp_src
			    : IS(OF_MATCH_UDP_SRC)  ? m->udp_src
			    : IS(OF_MATCH_SCTP_SRC) ? m->sctp_src
			    : IS(OF_MATCH_ICMPV4_TYPE) ? m->icmpv4_type
						       : m->icmpv6_type;
		mk->tp_src = 0xffff;
	}
	if (IS(OF_MATCH_TCP_DST | OF_MATCH_UDP_DST | OF_MATCH_SCTP_DST | OF_MATCH_ICMPV4_CODE |
	       OF_MATCH_ICMPV6_CODE)) {
		v->tp_dst = IS(OF_MATCH_TCP_DST)    ? m->tcp_dst
			    : IS(OF_MATCH_UDP_DST)  ? m->udp_dst
			    : IS(OF_MATCH_SCTP_DST) ? m->sctp_dst
			    : IS(OF_MATCH_ICMPV4_CODE) ? m->icmpv4_code
						       : m->icmpv6_code;
		mk->tp_dst = 0xffff;
	}
	/* The per-ethertype word: ARP op, IPv6 flow label and extension-header flags, MPLS
	 * label/tc/bos, or PBB I-SID. */
	if (IS(OF_MATCH_ARP_OP)) {
		v->arp_op = m->arp_op;
		mk->arp_op = 0xffff;
	}
	if (IS(OF_MATCH_IPV6_FLABEL)) {
		v->flabel = m->ipv6_flabel;
		mk->flabel = MASKED(OF_MATCH_IPV6_FLABEL) ? m->ipv6_flabel_mask : SW_FLABEL;
	}
	if (IS(OF_MATCH_IPV6_EXTHDR)) { /* bits 20..28 of the same word (both need IPv6) */
		v->flabel |= (uint32_t)m->ipv6_exthdr << SW_EXTHDR_SHIFT;
		mk->flabel |= (uint32_t)(MASKED(OF_MATCH_IPV6_EXTHDR) ? m->ipv6_exthdr_mask : 0x1ff)
			      << SW_EXTHDR_SHIFT;
	}
	if (IS(OF_MATCH_PBB_ISID)) {
		v->pbb_isid = m->pbb_isid;
		mk->pbb_isid = MASKED(OF_MATCH_PBB_ISID) ? m->pbb_isid_mask : 0xffffff;
	}
	if (IS(OF_MATCH_MPLS_LABEL | OF_MATCH_MPLS_TC | OF_MATCH_MPLS_BOS)) {
		uint32_t x = 0, y = 0;
		if (IS(OF_MATCH_MPLS_LABEL))
			x |= m->mpls_label << 4, y |= 0xfffffu << 4;
		if (IS(OF_MATCH_MPLS_TC))
			x |= (uint32_t)m->mpls_tc << 1, y |= 7u << 1;
		if (IS(OF_MATCH_MPLS_BOS))
			x |= m->mpls_bos, y |= 1;
		v->mpls = x;
		mk->mpls = y;
	}
	/* Store the value masked (the protocol module refused value bits outside a mask; this
	 * makes it true by construction). */
	uint8_t *pv = (uint8_t *)v;
	const uint8_t *pm = (const uint8_t *)mk;
	for (size_t i = 0; i < sizeof(*v); i++)
		pv[i] &= pm[i];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool ones(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xff)
			return false;
	return true;
}

void sw_match_of_flow(const struct sw_flow *f, struct of_match *m)
{
	const struct sw_key *v = &f->match, *mk = &f->mask;
	memset(m, 0, sizeof(*m));
	m->fields = f->fields;
	m->has_metadata = f->md_mask != 0; /* the pipeline's metadata (sw_insts.c) */
	m->metadata = f->md;
	m->metadata_mask = f->md_mask;
	m->in_port = v->in_port;
	memcpy(m->eth_src, v->eth_src, 6);
	memcpy(m->eth_src_mask, mk->eth_src, 6);
	if (!ones(mk->eth_src, 6))
		m->masked |= OF_MATCH_ETH_SRC;
	memcpy(m->eth_dst, v->eth_dst, 6);
	memcpy(m->eth_dst_mask, mk->eth_dst, 6);
	if (!ones(mk->eth_dst, 6))
		m->masked |= OF_MATCH_ETH_DST;
	m->eth_type = v->eth_type;
	m->vlan_vid = v->vlan;
	m->vlan_vid_mask = mk->vlan;
	if (mk->vlan != 0x1fff)
		m->masked |= OF_MATCH_VLAN_VID;
	m->vlan_pcp = v->vlan_pcp;
	m->ip_dscp = v->ip_dscp;
	m->ip_proto = v->ip_proto;
	m->ipv4_src = m->arp_spa = get32(v->nw_src);
	m->ipv4_src_mask = m->arp_spa_mask = get32(mk->nw_src);
	m->ipv4_dst = m->arp_tpa = get32(v->nw_dst);
	m->ipv4_dst_mask = m->arp_tpa_mask = get32(mk->nw_dst);
	if (!ones(mk->nw_src, 4))
		m->masked |= OF_MATCH_IPV4_SRC | OF_MATCH_ARP_SPA;
	if (!ones(mk->nw_dst, 4))
		m->masked |= OF_MATCH_IPV4_DST | OF_MATCH_ARP_TPA;
	memcpy(m->ipv6_src, v->nw_src, 16);
	memcpy(m->ipv6_src_mask, mk->nw_src, 16);
	memcpy(m->ipv6_dst, v->nw_dst, 16);
	memcpy(m->ipv6_dst_mask, mk->nw_dst, 16);
	if (!ones(mk->nw_src, 16))
		m->masked |= OF_MATCH_IPV6_SRC;
	if (!ones(mk->nw_dst, 16))
		m->masked |= OF_MATCH_IPV6_DST;
	m->tcp_src = m->udp_src = v->tp_src;
	m->tcp_dst = m->udp_dst = v->tp_dst;
	m->icmpv4_type = (uint8_t)v->tp_src;
	m->icmpv4_code = (uint8_t)v->tp_dst;
	m->arp_op = v->arp_op;
	memcpy(m->arp_sha, v->nw_src + 4, 6);
	memcpy(m->arp_sha_mask, mk->nw_src + 4, 6);
	if (!ones(mk->nw_src + 4, 6))
		m->masked |= OF_MATCH_ARP_SHA;
	memcpy(m->arp_tha, v->nw_dst + 4, 6);
	memcpy(m->arp_tha_mask, mk->nw_dst + 4, 6);
	if (!ones(mk->nw_dst + 4, 6))
		m->masked |= OF_MATCH_ARP_THA;
	m->ip_ecn = v->ip_ecn;
	m->sctp_src = v->tp_src;
	m->sctp_dst = v->tp_dst;
	m->icmpv6_type = (uint8_t)v->tp_src;
	m->icmpv6_code = (uint8_t)v->tp_dst;
	m->ipv6_flabel = v->flabel & SW_FLABEL;
	m->ipv6_flabel_mask = mk->flabel & SW_FLABEL;
	if ((mk->flabel & SW_FLABEL) != SW_FLABEL)
		m->masked |= OF_MATCH_IPV6_FLABEL;
	m->ipv6_exthdr = (uint16_t)(v->flabel >> SW_EXTHDR_SHIFT);
	m->ipv6_exthdr_mask = (uint16_t)(mk->flabel >> SW_EXTHDR_SHIFT);
	if (m->ipv6_exthdr_mask != 0x1ff)
		m->masked |= OF_MATCH_IPV6_EXTHDR;
	m->pbb_isid = v->pbb_isid;
	m->pbb_isid_mask = mk->pbb_isid;
	if (mk->pbb_isid != 0xffffff)
		m->masked |= OF_MATCH_PBB_ISID;
	sw_xmatch_to_match(&f->x, m); /* the fields outside the key */
	m->mpls_label = v->mpls >> 4;
	m->mpls_tc = (uint8_t)(v->mpls >> 1 & 7);
	m->mpls_bos = (uint8_t)(v->mpls & 1);
	m->masked &= m->fields & OF_MATCH_MASKABLE; /* only for the fields the flow has */
}
