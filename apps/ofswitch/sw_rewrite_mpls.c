/*
 * apps/ofswitch/sw_rewrite_mpls.c: the frame rewrites on MPLS label stacks and PBB (802.1ah)
 * headers: push/pop, the top entry's label/tc/bos, its TTL (set, decrement, copied in and
 * out) and push/pop of a PBB backbone header.
 *
 * The MPLS label stack goes after the Ethernet header and its VLAN tags (up to two), as in
 * OVS: the ethertype becomes 0x8847/0x8848 and the entries follow it. A pushed entry copies
 * label, tc and TTL from the entry it covers (bos 0), or is label 0, tc 0, bos 1 with the
 * IP TTL / hop limit (0 when not IP), as OpenFlow 1.3's table of push defaults says. Below the
 * bottom of stack the payload is told apart by its first nibble (4: IPv4, 6: IPv6), the only
 * way MPLS has. A PBB push puts a whole backbone header in front (B-DA, B-SA copied from the
 * customer's, ethertype 0x88e7, an I-TAG with the I-SID of a PBB header it covers, else 0):
 * 18 bytes. Each function returns 0, or -1 when the frame has no such header, a cut one,
 * no room, or a TTL of 0/1 to decrement (the caller drops or skips and counts).
 */
#include <string.h>

#include "sw.h"
#include "sw_rewrite_pvt.h"

/* Offset of the top MPLS entry, or 0 when the frame is not MPLS or the entry is cut. */
static uint32_t top_lse(const uint8_t *f, uint32_t len)
{
	uint32_t off = sw_l3_type_off(f, len);
	if (!off || !sw_is_mpls(sw_get16(f + off)) || len < off + 2 + 4)
		return 0;
	return off + 2;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)sw_get16(p) << 16 | sw_get16(p + 2);
}

static void set32(uint8_t *p, uint32_t v)
{
	sw_set16(p, (uint16_t)(v >> 16));
	sw_set16(p + 2, (uint16_t)v);
}

int sw_act_set_mpls(uint8_t *f, uint32_t len, uint8_t field, uint32_t v)
{
	uint32_t o = top_lse(f, len);
	if (!o)
		return -1;
	uint32_t e = get32(f + o);
	switch (field) {
	case SW_MPLS_LABEL: e = (e & 0xfffu) | (v & 0xfffffu) << 12; break;
	case SW_MPLS_TC: e = (e & ~(7u << 9)) | (v & 7) << 9; break;
	case SW_MPLS_BOS: e = (e & ~(1u << 8)) | (v & 1) << 8; break;
	default: e = (e & ~0xffu) | (v & 0xff); break; /* SW_MPLS_TTL */
	}
	set32(f + o, e);
	return 0;
}

int sw_act_dec_mpls_ttl(uint8_t *f, uint32_t len)
{
	uint32_t o = top_lse(f, len);
	if (!o || f[o + 3] <= 1)
		return -1;
	f[o + 3]--;
	return 0;
}

/* The TTL of what the top entry covers: the next entry, or the IP packet under the bottom
 * of stack. *at: where it is; *ip4: an IPv4 header starts at *ip4 (its checksum to fix). */
static int inner_ttl(const uint8_t *f, uint32_t len, uint32_t o, uint32_t *at, uint32_t *ip4)
{
	*ip4 = 0;
	if (!(f[o + 2] & 1)) { /* not the bottom: the next entry's TTL */
		if (len < o + 8)
			return -1;
		*at = o + 7;
		return 0;
	}
	uint32_t ip = o + 4;
	if (len >= ip + 20 && (f[ip] >> 4) == 4 && (f[ip] & 0x0f) >= 5) {
		*at = ip + 8;
		*ip4 = ip;
		return 0;
	}
	if (len >= ip + 40 && (f[ip] >> 4) == 6) {
		*at = ip + 7;
		return 0;
	}
	return -1;
}

int sw_act_copy_ttl(uint8_t *f, uint32_t len, bool in)
{
	uint32_t o = top_lse(f, len), at, ip4;
	if (!o || inner_ttl(f, len, o, &at, &ip4))
		return -1;
	if (!in) {
		f[o + 3] = f[at]; /* out: the outer entry gets the inner TTL */
		return 0;
	}
	uint16_t old = ip4 ? sw_get16(f + ip4 + 8) : 0;
	f[at] = f[o + 3];
	if (ip4)
		sw_csum_update16(f + ip4 + 10, old, sw_get16(f + ip4 + 8));
	return 0;
}

int sw_act_push_mpls(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t type)
{
	uint32_t off = sw_l3_type_off(f, *len);
	if (!off || cap < *len + 4)
		return -1;
	uint16_t old = sw_get16(f + off);
	uint32_t p = off + 2, e;
	if (sw_is_mpls(old)) {
		if (*len < p + 4)
			return -1;
		e = get32(f + p) & ~(1u << 8); /* label, tc, TTL copied; not the bottom */
	} else {
		uint8_t ttl = 0;
		if (old == 0x0800 && *len >= p + 20)
			ttl = f[p + 8];
		else if (old == 0x86dd && *len >= p + 40)
			ttl = f[p + 7];
		e = 1u << 8 | ttl;
	}
	memmove(f + p + 4, f + p, *len - p);
	set32(f + p, e);
	sw_set16(f + off, type);
	*len += 4;
	return 0;
}

int sw_act_pop_mpls(uint8_t *f, uint32_t *len, uint16_t type)
{
	uint32_t o = top_lse(f, *len);
	if (!o)
		return -1;
	memmove(f + o, f + o + 4, *len - o - 4);
	sw_set16(f + o - 2, type);
	*len = sw_popped_len(f, *len, 4);
	return 0;
}

#define PBB_HDR 18 /* B-DA, B-SA, ethertype 0x88e7, I-TAG */

int sw_act_push_pbb(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t type)
{
	if (*len < 14 || cap < *len + PBB_HDR)
		return -1;
	uint32_t isid = 0;
	if (sw_get16(f + 12) == 0x88e7 && *len >= PBB_HDR)
		isid = get32(f + 14) & 0xffffffu;
	memmove(f + PBB_HDR, f, *len);
	memcpy(f, f + PBB_HDR, 12); /* B-DA, B-SA := C-DA, C-SA */
	sw_set16(f + 12, type);
	set32(f + 14, isid); /* PCP, DEI, UCA 0 */
	*len += PBB_HDR;
	return 0;
}

int sw_act_pop_pbb(uint8_t *f, uint32_t *len)
{
	if (*len < PBB_HDR + 14 || sw_get16(f + 12) != 0x88e7)
		return -1;
	memmove(f, f + PBB_HDR, *len - PBB_HDR);
	*len = sw_popped_len(f, *len, PBB_HDR);
	return 0;
}

int sw_act_set_pbb_isid(uint8_t *f, uint32_t len, uint32_t isid)
{
	uint32_t off = 12;
	if (len >= 18 && sw_is_tag(sw_get16(f + 12)))
		off = 16; /* a B-TAG before the I-TAG */
	if (len < off + 6 || sw_get16(f + off) != 0x88e7)
		return -1;
	uint8_t *t = f + off + 2; /* I-PCP, I-DEI, UCA, reserved; then the 24-bit I-SID */
	t[1] = (uint8_t)(isid >> 16), t[2] = (uint8_t)(isid >> 8), t[3] = (uint8_t)isid;
	return 0;
}
