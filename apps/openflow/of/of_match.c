/*
 * apps/openflow/of/of_match.c: the nested variable parts of messages, both directions:
 * matches (1.3 OXM TLVs, 1.0 struct ofp_match) and ports (actions: of_action.c).
 *
 * Each parser gets a pointer and the number of bytes it may look at, checks every length it
 * finds against that, and reports the error the spec names (BAD_MATCH/BAD_LEN, DUP_FIELD,
 * and for OXM fields BAD_MASK, BAD_VALUE,
 * BAD_WILDCARDS and the 1.3 prerequisites' BAD_PREREQ). What we do not model is skipped by its own
 * (checked) length and counted, so the caller can tell "not understood" from "absent".
 */
#include <errno.h>
#include <string.h>

#include "of_wire.h"

#define OFPMT_OXM 1
#define OFPXMC_OPENFLOW_BASIC 0x8000
#define OFPXMC_EXPERIMENTER 0xffff


/* struct ofp_match (1.0) wildcard bits. */
#define OFPFW10_IN_PORT (1u << 0)
#define OFPFW10_DL_VLAN (1u << 1)
#define OFPFW10_DL_SRC (1u << 2)
#define OFPFW10_DL_DST (1u << 3)
#define OFPFW10_DL_TYPE (1u << 4)
#define OFPFW10_NW_PROTO (1u << 5)
#define OFPFW10_TP_SRC (1u << 6)
#define OFPFW10_TP_DST (1u << 7)
#define OFPFW10_DL_VLAN_PCP (1u << 20)
#define OFPFW10_NW_TOS (1u << 21)
#define OFPFW10_ALL ((1u << 22) - 1)

static int bad(struct of_fault *f, uint16_t type, uint16_t code, const char *why)
{
	of_fault_set(f, type, code, false, why);
	return -EBADMSG;
}

static int match10_parse(const uint8_t *p, size_t avail, struct of_match *m, struct of_fault *f)
{
	if (avail < OF10_MATCH_LEN)
		return bad(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, "message too short for ofp_match");
	uint32_t w = of_get32(p);
	if (!(w & OFPFW10_IN_PORT)) {
		m->fields |= OF_MATCH_IN_PORT;
		m->in_port = of_port_from10(of_get16(p + 4));
	}
	if (!(w & OFPFW10_DL_SRC)) {
		m->fields |= OF_MATCH_ETH_SRC;
		memcpy(m->eth_src, p + 6, 6);
	}
	if (!(w & OFPFW10_DL_DST)) {
		m->fields |= OF_MATCH_ETH_DST;
		memcpy(m->eth_dst, p + 12, 6);
	}
	if (!(w & OFPFW10_DL_TYPE)) {
		m->fields |= OF_MATCH_ETH_TYPE;
		m->eth_type = of_get16(p + 22);
	}
	static const uint32_t others[] = {OFPFW10_DL_VLAN, OFPFW10_NW_PROTO, OFPFW10_TP_SRC,
					  OFPFW10_TP_DST, OFPFW10_DL_VLAN_PCP, OFPFW10_NW_TOS};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		m->n_other += !(w & others[i]);
	m->n_other += ((w >> 8) & 0x3f) < 32;  /* nw_src prefix not fully wildcarded */
	m->n_other += ((w >> 14) & 0x3f) < 32; /* nw_dst */
	return OF10_MATCH_LEN;
}

/* The OXM fields we model: wire field number, value length, our bit. */
static const struct oxm_def {
	uint8_t field, len;
	uint64_t bit;
} oxm_defs[] = {
	{0, 4, OF_MATCH_IN_PORT},      {3, 6, OF_MATCH_ETH_DST},      {4, 6, OF_MATCH_ETH_SRC},
	{5, 2, OF_MATCH_ETH_TYPE},     {6, 2, OF_MATCH_VLAN_VID},     {7, 1, OF_MATCH_VLAN_PCP},
	{8, 1, OF_MATCH_IP_DSCP},      {10, 1, OF_MATCH_IP_PROTO},    {11, 4, OF_MATCH_IPV4_SRC},
	{12, 4, OF_MATCH_IPV4_DST},    {13, 2, OF_MATCH_TCP_SRC},     {14, 2, OF_MATCH_TCP_DST},
	{15, 2, OF_MATCH_UDP_SRC},     {16, 2, OF_MATCH_UDP_DST},     {19, 1, OF_MATCH_ICMPV4_TYPE},
	{20, 1, OF_MATCH_ICMPV4_CODE}, {21, 2, OF_MATCH_ARP_OP},      {22, 4, OF_MATCH_ARP_SPA},
	{23, 4, OF_MATCH_ARP_TPA},     {26, 16, OF_MATCH_IPV6_SRC},   {27, 16, OF_MATCH_IPV6_DST},
	{9, 1, OF_MATCH_IP_ECN},       {17, 2, OF_MATCH_SCTP_SRC},    {18, 2, OF_MATCH_SCTP_DST},
	{24, 6, OF_MATCH_ARP_SHA},     {25, 6, OF_MATCH_ARP_THA},     {28, 4, OF_MATCH_IPV6_FLABEL},
	{29, 1, OF_MATCH_ICMPV6_TYPE}, {30, 1, OF_MATCH_ICMPV6_CODE}, {34, 4, OF_MATCH_MPLS_LABEL},
	{35, 1, OF_MATCH_MPLS_TC},     {36, 1, OF_MATCH_MPLS_BOS},
	{1, 4, OF_MATCH_IN_PHY_PORT},  {31, 16, OF_MATCH_ND_TARGET},  {32, 6, OF_MATCH_ND_SLL},
	{33, 6, OF_MATCH_ND_TLL},      {37, 3, OF_MATCH_PBB_ISID},    {38, 8, OF_MATCH_TUNNEL_ID},
	{39, 2, OF_MATCH_IPV6_EXTHDR},
};
#define N_OXM (sizeof(oxm_defs) / sizeof(oxm_defs[0]))

/* Where field `bit` lives in *m: its value and (maskable fields) its mask, as bytes of
 * width w: 1, 2 and 4 are host-order integers (3: a uint32_t), 8 a uint64_t, 6 and 16
 * byte arrays. */
static void oxm_slot(const struct of_match *m, uint64_t bit, const void **v, const void **mk)
{
	*mk = NULL;
	switch (bit) {
	case OF_MATCH_IN_PORT: *v = &m->in_port; break;
	case OF_MATCH_ETH_DST: *v = m->eth_dst; *mk = m->eth_dst_mask; break;
	case OF_MATCH_ETH_SRC: *v = m->eth_src; *mk = m->eth_src_mask; break;
	case OF_MATCH_ETH_TYPE: *v = &m->eth_type; break;
	case OF_MATCH_VLAN_VID: *v = &m->vlan_vid; *mk = &m->vlan_vid_mask; break;
	case OF_MATCH_VLAN_PCP: *v = &m->vlan_pcp; break;
	case OF_MATCH_IP_DSCP: *v = &m->ip_dscp; break;
	case OF_MATCH_IP_PROTO: *v = &m->ip_proto; break;
	case OF_MATCH_IPV4_SRC: *v = &m->ipv4_src; *mk = &m->ipv4_src_mask; break;
	case OF_MATCH_IPV4_DST: *v = &m->ipv4_dst; *mk = &m->ipv4_dst_mask; break;
	case OF_MATCH_TCP_SRC: *v = &m->tcp_src; break;
	case OF_MATCH_TCP_DST: *v = &m->tcp_dst; break;
	case OF_MATCH_UDP_SRC: *v = &m->udp_src; break;
	case OF_MATCH_UDP_DST: *v = &m->udp_dst; break;
	case OF_MATCH_ICMPV4_TYPE: *v = &m->icmpv4_type; break;
	case OF_MATCH_ICMPV4_CODE: *v = &m->icmpv4_code; break;
	case OF_MATCH_ARP_OP: *v = &m->arp_op; break;
	case OF_MATCH_ARP_SPA: *v = &m->arp_spa; *mk = &m->arp_spa_mask; break;
	case OF_MATCH_ARP_TPA: *v = &m->arp_tpa; *mk = &m->arp_tpa_mask; break;
	case OF_MATCH_IPV6_SRC: *v = m->ipv6_src; *mk = m->ipv6_src_mask; break;
	case OF_MATCH_IP_ECN: *v = &m->ip_ecn; break;
	case OF_MATCH_SCTP_SRC: *v = &m->sctp_src; break;
	case OF_MATCH_SCTP_DST: *v = &m->sctp_dst; break;
	case OF_MATCH_ARP_SHA: *v = m->arp_sha; *mk = m->arp_sha_mask; break;
	case OF_MATCH_ARP_THA: *v = m->arp_tha; *mk = m->arp_tha_mask; break;
	case OF_MATCH_IPV6_FLABEL: *v = &m->ipv6_flabel; *mk = &m->ipv6_flabel_mask; break;
	case OF_MATCH_ICMPV6_TYPE: *v = &m->icmpv6_type; break;
	case OF_MATCH_ICMPV6_CODE: *v = &m->icmpv6_code; break;
	case OF_MATCH_MPLS_LABEL: *v = &m->mpls_label; break;
	case OF_MATCH_MPLS_TC: *v = &m->mpls_tc; break;
	case OF_MATCH_MPLS_BOS: *v = &m->mpls_bos; break;
	case OF_MATCH_IN_PHY_PORT: *v = &m->in_phy_port; break;
	case OF_MATCH_ND_TARGET: *v = m->nd_target; break;
	case OF_MATCH_ND_SLL: *v = m->nd_sll; break;
	case OF_MATCH_ND_TLL: *v = m->nd_tll; break;
	case OF_MATCH_PBB_ISID: *v = &m->pbb_isid; *mk = &m->pbb_isid_mask; break;
	case OF_MATCH_TUNNEL_ID: *v = &m->tunnel_id; *mk = &m->tunnel_id_mask; break;
	case OF_MATCH_IPV6_EXTHDR: *v = &m->ipv6_exthdr; *mk = &m->ipv6_exthdr_mask; break;
	default: *v = m->ipv6_dst; *mk = m->ipv6_dst_mask; break;
	}
}

/* Wire bytes (big-endian) <-> the host-order slot of width w. */
static void oxm_load(void *slot, const uint8_t *wire, unsigned w)
{
	switch (w) {
	case 1: *(uint8_t *)slot = wire[0]; break;
	case 2: *(uint16_t *)slot = of_get16(wire); break;
	case 3: *(uint32_t *)slot = (uint32_t)wire[0] << 16 | of_get16(wire + 1); break;
	case 4: *(uint32_t *)slot = of_get32(wire); break;
	case 8: *(uint64_t *)slot = of_get64(wire); break;
	default: memcpy(slot, wire, w); break;
	}
}

static void oxm_store(uint8_t *wire, const void *slot, unsigned w)
{
	switch (w) {
	case 1: wire[0] = *(const uint8_t *)slot; break;
	case 2: of_set16(wire, *(const uint16_t *)slot); break;
	case 3:
		wire[0] = (uint8_t)(*(const uint32_t *)slot >> 16);
		of_set16(wire + 1, (uint16_t)*(const uint32_t *)slot);
		break;
	case 4: of_set32(wire, *(const uint32_t *)slot); break;
	case 8:
		of_set32(wire, (uint32_t)(*(const uint64_t *)slot >> 32));
		of_set32(wire + 4, (uint32_t)*(const uint64_t *)slot);
		break;
	default: memcpy(wire, slot, w); break;
	}
}

#define OXM_METADATA 2 /* 8 bytes, maskable: not in oxm_defs (no bit of `fields`) */

/* The metadata OXM: value and optional mask. */
static int oxm_metadata(const uint8_t *v, bool hasmask, unsigned plen, struct of_match *m,
			struct of_fault *f)
{
	if (m->has_metadata)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_DUP_FIELD, "OXM field repeated");
	if (plen != (hasmask ? 16u : 8u))
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "OXM field of wrong length");
	m->metadata = of_get64(v);
	m->metadata_mask = hasmask ? of_get64(v + 8) : ~0ull;
	if (m->metadata & ~m->metadata_mask)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_WILDCARDS,
			   "OXM value has bits outside its mask");
	m->has_metadata = true;
	return 0;
}

/* One OXM TLV of class OPENFLOW_BASIC: decoded if modelled, else counted in n_other. */
static int oxm_basic(const uint8_t *v, unsigned field, bool hasmask, unsigned plen,
		     struct of_match *m, struct of_fault *f)
{
	if (field == OXM_METADATA)
		return oxm_metadata(v, hasmask, plen, m, f);
	const struct oxm_def *d = NULL;
	for (size_t i = 0; i < N_OXM; i++)
		if (oxm_defs[i].field == field)
			d = &oxm_defs[i];
	if (!d) {
		m->n_other++;
		return 0;
	}
	if (m->fields & d->bit)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_DUP_FIELD, "OXM field repeated");
	if (hasmask && !(d->bit & OF_MATCH_MASKABLE))
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_MASK, "OXM mask on unmaskable field");
	if (plen != (hasmask ? 2u : 1u) * d->len)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "OXM field of wrong length");
	if (hasmask) {
		bool ones = true, stray = false;
		for (unsigned i = 0; i < d->len; i++) {
			ones = ones && v[d->len + i] == 0xff;
			stray = stray || (v[i] & ~v[d->len + i]);
		}
		if (stray)
			return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_WILDCARDS,
				   "OXM value has bits outside its mask");
		hasmask = !ones && !(d->bit == OF_MATCH_VLAN_VID && of_get16(v + 2) == 0x1fff);
	}
	const void *cv, *cmk;
	oxm_slot(m, d->bit, &cv, &cmk);
	oxm_load((void *)(uintptr_t)cv, v, d->len);
	if (hasmask) {
		oxm_load((void *)(uintptr_t)cmk, v + d->len, d->len);
		m->masked |= d->bit;
	}
	m->fields |= d->bit;
	if ((d->bit == OF_MATCH_VLAN_VID && (m->vlan_vid > 0x1fff || m->vlan_vid_mask > 0x1fff)) ||
	    (d->bit == OF_MATCH_VLAN_PCP && m->vlan_pcp > 7) ||
	    (d->bit == OF_MATCH_IP_DSCP && m->ip_dscp > 63) ||
	    (d->bit == OF_MATCH_IP_ECN && m->ip_ecn > 3) ||
	    (d->bit == OF_MATCH_IPV6_FLABEL &&
	     (m->ipv6_flabel > 0xfffff || m->ipv6_flabel_mask > 0xfffff)) ||
	    (d->bit == OF_MATCH_MPLS_LABEL && m->mpls_label > 0xfffff) ||
	    (d->bit == OF_MATCH_MPLS_TC && m->mpls_tc > 7) ||
	    (d->bit == OF_MATCH_MPLS_BOS && m->mpls_bos > 1) ||
	    (d->bit == OF_MATCH_IPV6_EXTHDR &&
	     (m->ipv6_exthdr > 0x1ff || m->ipv6_exthdr_mask > 0x1ff)))
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_VALUE, "OXM value out of range");
	return 0;
}

/* The 1.3 prerequisites (spec table 12), checked once the whole match is read. */
static int oxm_prereqs(const struct of_match *m, struct of_fault *f)
{
	uint64_t x = m->fields;
	bool et = x & OF_MATCH_ETH_TYPE;
	bool ip4 = et && m->eth_type == 0x0800, ip6 = et && m->eth_type == 0x86dd;
	bool arp = et && m->eth_type == 0x0806;
	bool mpls = et && (m->eth_type == 0x8847 || m->eth_type == 0x8848);
	bool proto = x & OF_MATCH_IP_PROTO;
	bool tagged = (x & OF_MATCH_VLAN_VID) && (m->vlan_vid & OFPVID_PRESENT) &&
		      (!(m->masked & OF_MATCH_VLAN_VID) || (m->vlan_vid_mask & OFPVID_PRESENT));
	bool ok = true;
	if (x & OF_MATCH_VLAN_PCP)
		ok = ok && tagged;
	if (x & (OF_MATCH_IP_DSCP | OF_MATCH_IP_ECN | OF_MATCH_IP_PROTO))
		ok = ok && (ip4 || ip6);
	if (x & (OF_MATCH_IPV4_SRC | OF_MATCH_IPV4_DST))
		ok = ok && ip4;
	if (x & (OF_MATCH_TCP_SRC | OF_MATCH_TCP_DST))
		ok = ok && proto && m->ip_proto == 6;
	if (x & (OF_MATCH_UDP_SRC | OF_MATCH_UDP_DST))
		ok = ok && proto && m->ip_proto == 17;
	if (x & (OF_MATCH_ICMPV4_TYPE | OF_MATCH_ICMPV4_CODE))
		ok = ok && ip4 && proto && m->ip_proto == 1;
	if (x & (OF_MATCH_SCTP_SRC | OF_MATCH_SCTP_DST))
		ok = ok && proto && m->ip_proto == 132;
	if (x & (OF_MATCH_ICMPV6_TYPE | OF_MATCH_ICMPV6_CODE))
		ok = ok && ip6 && proto && m->ip_proto == 58;
	if (x & (OF_MATCH_ARP_OP | OF_MATCH_ARP_SPA | OF_MATCH_ARP_TPA | OF_MATCH_ARP_SHA |
		 OF_MATCH_ARP_THA))
		ok = ok && arp;
	if (x & (OF_MATCH_IPV6_SRC | OF_MATCH_IPV6_DST | OF_MATCH_IPV6_FLABEL))
		ok = ok && ip6;
	if (x & (OF_MATCH_MPLS_LABEL | OF_MATCH_MPLS_TC | OF_MATCH_MPLS_BOS))
		ok = ok && mpls;
	/* The rest of the set (1.3.5 section 7.2.3.7, table 12): in_phy_port needs in_port,
	 * the ND fields an ICMPv6 NS (135: target, sll) or NA (136: target, tll), pbb_isid
	 * PBB's ethertype, ipv6_exthdr IPv6. */
	bool icmp6 = ip6 && proto && m->ip_proto == 58 && (x & OF_MATCH_ICMPV6_TYPE);
	if (x & OF_MATCH_IN_PHY_PORT)
		ok = ok && (x & OF_MATCH_IN_PORT);
	if (x & OF_MATCH_ND_TARGET)
		ok = ok && icmp6 && (m->icmpv6_type == 135 || m->icmpv6_type == 136);
	if (x & OF_MATCH_ND_SLL)
		ok = ok && icmp6 && m->icmpv6_type == 135;
	if (x & OF_MATCH_ND_TLL)
		ok = ok && icmp6 && m->icmpv6_type == 136;
	if (x & OF_MATCH_PBB_ISID)
		ok = ok && et && m->eth_type == 0x88e7;
	if (x & OF_MATCH_IPV6_EXTHDR)
		ok = ok && ip6;
	return ok ? 0 : bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_PREREQ, "OXM prerequisite missing");
}

static int match13_parse(const uint8_t *p, size_t avail, struct of_match *m, struct of_fault *f)
{
	if (avail < 4)
		return bad(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, "message too short for ofp_match");
	if (of_get16(p) != OFPMT_OXM)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_TYPE, "match type is not OXM");
	size_t mlen = of_get16(p + 2); /* header + TLVs, without the padding */
	if (mlen < 4)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "match length below 4");
	size_t total = mlen + of_pad8(mlen);
	if (total > avail)
		return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "match runs past the message");
	for (size_t off = 4; off < mlen;) {
		if (mlen - off < 4)
			return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "truncated OXM TLV header");
		uint32_t h = of_get32(p + off);
		unsigned cls = h >> 16, field = (h >> 9) & 0x7f, plen = h & 0xff;
		bool hasmask = (h >> 8) & 1;
		if (plen > mlen - off - 4)
			return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, "OXM TLV runs past the match");
		const uint8_t *v = p + off + 4;
		if (cls == OFPXMC_OPENFLOW_BASIC) {
			int rc = oxm_basic(v, field, hasmask, plen, m, f);
			if (rc)
				return rc;
		} else {
			if (cls == OFPXMC_EXPERIMENTER && plen < 4)
				return bad(f, OFPET_BAD_MATCH, OFPBMC_BAD_LEN,
					   "experimenter OXM without experimenter id");
			m->n_other++;
		}
		off += 4 + plen;
	}
	int rc = oxm_prereqs(m, f);
	return rc ? rc : (int)total;
}

int of_match_parse(uint8_t version, const uint8_t *p, size_t avail, struct of_match *m,
		   struct of_fault *f)
{
	memset(m, 0, sizeof(*m));
	return version == OF_VERSION_1_0 ? match10_parse(p, avail, m, f)
					 : match13_parse(p, avail, m, f);
}

void of_match_put(struct of_wbuf *w, uint8_t version, const struct of_match *m)
{
	if (version == OF_VERSION_1_0) {
		uint32_t wc = OFPFW10_ALL;
		uint8_t *q = of_wbuf_take(w, OF10_MATCH_LEN);
		if (!q)
			return;
		memset(q, 0, OF10_MATCH_LEN);
		if (m->fields & OF_MATCH_IN_PORT) {
			wc &= ~OFPFW10_IN_PORT;
			of_set16(q + 4, (uint16_t)of_port_to10(m->in_port));
		}
		if (m->fields & OF_MATCH_ETH_SRC) {
			wc &= ~OFPFW10_DL_SRC;
			memcpy(q + 6, m->eth_src, 6);
		}
		if (m->fields & OF_MATCH_ETH_DST) {
			wc &= ~OFPFW10_DL_DST;
			memcpy(q + 12, m->eth_dst, 6);
		}
		if (m->fields & OF_MATCH_ETH_TYPE) {
			wc &= ~OFPFW10_DL_TYPE;
			of_set16(q + 22, m->eth_type);
		}
		of_set32(q, wc);
		return;
	}
	size_t start = w->len;
	of_put16(w, OFPMT_OXM);
	of_put16(w, 0); /* length, set below */
	/* in_port first, metadata last, as Open vSwitch orders them (nx_put_raw): controllers
	 * that read a PACKET_IN's in_port as its first OXM get it there. */
	for (size_t i = 0; i < N_OXM; i++) {
		const struct oxm_def *d = &oxm_defs[i];
		if (!(m->fields & d->bit))
			continue;
		bool hasmask = m->masked & d->bit & OF_MATCH_MASKABLE;
		const void *cv, *cmk;
		oxm_slot(m, d->bit, &cv, &cmk);
		of_put32(w, (uint32_t)OFPXMC_OPENFLOW_BASIC << 16 | (uint32_t)d->field << 9 |
				    (hasmask ? 0x100u : 0) | (hasmask ? 2u : 1u) * d->len);
		uint8_t *q = of_wbuf_take(w, (hasmask ? 2u : 1u) * d->len);
		if (!q)
			return;
		oxm_store(q, cv, d->len);
		if (hasmask)
			oxm_store(q + d->len, cmk, d->len);
	}
	if (m->has_metadata) {
		bool hasmask = m->metadata_mask != ~0ull;
		of_put32(w, (uint32_t)OFPXMC_OPENFLOW_BASIC << 16 | OXM_METADATA << 9 |
				    (hasmask ? 0x100u : 0) | (hasmask ? 16u : 8u));
		of_put64(w, m->metadata);
		if (hasmask)
			of_put64(w, m->metadata_mask);
	}
	if (w->overflow)
		return;
	size_t mlen = w->len - start;
	of_set16(w->p + start + 2, (uint16_t)mlen);
	of_put_zeros(w, of_pad8(mlen));
}

bool of_match_fits(uint8_t version, const struct of_match *m)
{
	if (version != OF_VERSION_1_0)
		return true;
	if ((m->fields & ~(uint64_t)(OF_MATCH_IN_PORT | OF_MATCH_ETH_SRC | OF_MATCH_ETH_DST |
				     OF_MATCH_ETH_TYPE)) || m->masked || m->has_metadata)
		return false; /* 1.0's struct ofp_match: only the four fields, exact */
	return !(m->fields & OF_MATCH_IN_PORT) || of_port_to10(m->in_port) >= 0;
}

void of_port_decode(uint8_t version, const uint8_t *p, struct of_port *o)
{
	memset(o, 0, sizeof(*o));
	if (version == OF_VERSION_1_0) {
		o->port_no = of_port_from10(of_get16(p));
		memcpy(o->hw_addr, p + 2, 6);
		memcpy(o->name, p + 8, 16);
		p += 24;
	} else {
		o->port_no = of_get32(p);
		memcpy(o->hw_addr, p + 8, 6);
		memcpy(o->name, p + 16, 16);
		p += 32;
	}
	o->name[15] = '\0';
	o->config = of_get32(p);
	o->state = of_get32(p + 4);
	o->curr = of_get32(p + 8);
	o->advertised = of_get32(p + 12);
	o->supported = of_get32(p + 16);
	o->peer = of_get32(p + 20);
	if (version != OF_VERSION_1_0) {
		o->curr_speed = of_get32(p + 24);
		o->max_speed = of_get32(p + 28);
	}
}

void of_port_put(struct of_wbuf *w, uint8_t version, const struct of_port *o)
{
	char name[16] = {0};
	memcpy(name, o->name, strnlen(o->name, 15));
	if (version == OF_VERSION_1_0) {
		of_put16(w, (uint16_t)of_port_to10(o->port_no));
		of_put_bytes(w, o->hw_addr, 6);
	} else {
		of_put32(w, o->port_no);
		of_put_zeros(w, 4);
		of_put_bytes(w, o->hw_addr, 6);
		of_put_zeros(w, 2);
	}
	of_put_bytes(w, name, 16);
	of_put32(w, o->config);
	of_put32(w, o->state);
	of_put32(w, o->curr);
	of_put32(w, o->advertised);
	of_put32(w, o->supported);
	of_put32(w, o->peer);
	if (version != OF_VERSION_1_0) {
		of_put32(w, o->curr_speed);
		of_put32(w, o->max_speed);
	}
}
