/*
 * apps/ofswitch/sw_xmatch.c: the match fields that live outside the 64-byte flow key
 * (issue 25): ipv6_nd_target, ipv6_nd_sll / ipv6_nd_tll, tunnel_id and in_phy_port.
 *
 * The one idea: these are matched the way the metadata is. A flow's (value, mask) over them
 * (struct sw_xmatch) is part of what makes its subtable, next to the key mask, so the
 * subtable's hash stays keyed by the 64-byte key alone; a lookup skips a subtable whose
 * extra match the frame fails, before probing it. The frame's side (struct sw_xkey) is a
 * function of its key for every frame but an ICMPv6 neighbour solicitation/advertisement:
 * tunnel_id is 0 (no port of this switch is a tunnel endpoint), in_phy_port is in_port
 * (every port is physical). So the EMC, keyed by the 64-byte key, stays exact for every
 * other frame, and ND frames alone (sw_key_is_nd) go to the classifier with their sw_xkey,
 * never through the EMC. A flow needing tunnel_id=5 thus never matches, as on a switch
 * whose frames all come from non-tunnel ports; its match is still kept and returned whole
 * in FLOW stats and FLOW_REMOVED.
 */
#include <string.h>

#include "sw.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

void sw_xkey_parse(const uint8_t *f, uint32_t len, const struct sw_key *k, struct sw_xkey *x)
{
	memset(x, 0, sizeof(*x));
	x->in_phy_port = k->in_port;
	if (!sw_key_is_nd(k))
		return;
	/* sw_key_parse accepted the frame: the Ethernet header, at most one 802.1Q tag, the
	 * IPv6 header and its payload length, the extension headers and 2 bytes of ICMPv6. */
	uint16_t t = get16(f + 12);
	uint32_t ip = t == 0x8100 || t == 0x88a8 ? 18 : 14; /* as sw_key_parse */
	uint32_t plen = get16(f + ip + 4);
	uint8_t proto;
	bool later;
	int l4 = sw_ipv6_l4(f + ip, plen, &proto, &later);
	if (l4 < 0 || later || proto != 58)
		return;
	uint32_t o = ip + (uint32_t)l4, end = ip + 40 + plen;
	if (end > len || end < o + 24)
		return; /* no target: the fields stay zero */
	memcpy(x->nd_target, f + o + 8, 16);
	uint8_t want = f[o] == 135 ? 1 : 2; /* NS: source link-layer option, NA: target */
	for (uint32_t p = o + 24; p + 8 <= end;) {
		uint32_t ol = (uint32_t)f[p + 1] * 8;
		if (ol == 0 || p + ol > end)
			return; /* a lying length: the rest cannot be read */
		if (f[p] == want && ol == 8) {
			memcpy(x->nd_ll, f + p + 2, 6);
			return;
		}
		p += ol;
	}
}

bool sw_xmatch_ok(const struct sw_xmatch *x, const struct sw_key *k, const struct sw_xkey *xk)
{
	struct sw_xkey fx;
	if (xk)
		fx = *xk;
	else
		memset(&fx, 0, sizeof(fx));
	fx.in_phy_port = k->in_port;
	const uint8_t *a = (const uint8_t *)&fx, *m = (const uint8_t *)&x->m,
		      *v = (const uint8_t *)&x->v;
	for (size_t i = 0; i < sizeof(fx); i++)
		if ((a[i] & m[i]) != v[i])
			return false;
	return true;
}

void sw_xmatch_of_match(const struct of_match *m, struct sw_xmatch *x)
{
	memset(x, 0, sizeof(*x));
	if (m->fields & OF_MATCH_IN_PHY_PORT) {
		x->v.in_phy_port = m->in_phy_port;
		x->m.in_phy_port = 0xffffffffu;
	}
	if (m->fields & OF_MATCH_ND_TARGET) {
		memcpy(x->v.nd_target, m->nd_target, 16);
		memset(x->m.nd_target, 0xff, 16);
	}
	if (m->fields & (OF_MATCH_ND_SLL | OF_MATCH_ND_TLL)) { /* one slot: 135 or 136 */
		memcpy(x->v.nd_ll, m->fields & OF_MATCH_ND_SLL ? m->nd_sll : m->nd_tll, 6);
		memset(x->m.nd_ll, 0xff, 6);
	}
	if (m->fields & OF_MATCH_TUNNEL_ID) {
		x->m.tunnel_id = m->masked & OF_MATCH_TUNNEL_ID ? m->tunnel_id_mask : ~0ull;
		x->v.tunnel_id = m->tunnel_id & x->m.tunnel_id;
	}
}

void sw_xmatch_to_match(const struct sw_xmatch *x, struct of_match *m)
{
	m->in_phy_port = x->v.in_phy_port;
	memcpy(m->nd_target, x->v.nd_target, 16);
	memcpy(m->nd_sll, x->v.nd_ll, 6);
	memcpy(m->nd_tll, x->v.nd_ll, 6);
	m->tunnel_id = x->v.tunnel_id;
	m->tunnel_id_mask = x->m.tunnel_id;
	if ((m->fields & OF_MATCH_TUNNEL_ID) && x->m.tunnel_id != ~0ull)
		m->masked |= OF_MATCH_TUNNEL_ID;
}

/* The agent's comparisons, as sw_insts.c makes them for the metadata: a covers r (every
 * frame a matches, r matches: r's mask within a's, their values agreeing there), or a and r
 * overlap (no bit both match that they want different). */
bool sw_xmatch_covered(const struct sw_xmatch *a, const struct sw_xmatch *r)
{
	const uint8_t *am = (const uint8_t *)&a->m, *av = (const uint8_t *)&a->v,
		      *rm = (const uint8_t *)&r->m, *rv = (const uint8_t *)&r->v;
	for (size_t i = 0; i < sizeof(a->m); i++)
		if ((am[i] & rm[i]) != rm[i] || (av[i] & rm[i]) != rv[i])
			return false;
	return true;
}

bool sw_xmatch_overlaps(const struct sw_xmatch *a, const struct sw_xmatch *r)
{
	const uint8_t *am = (const uint8_t *)&a->m, *av = (const uint8_t *)&a->v,
		      *rm = (const uint8_t *)&r->m, *rv = (const uint8_t *)&r->v;
	for (size_t i = 0; i < sizeof(a->m); i++)
		if ((av[i] ^ rv[i]) & am[i] & rm[i])
			return false;
	return true;
}
