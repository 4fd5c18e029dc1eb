/*
 * tests/ofswitch/test_sw_rewrite.c: the frame rewrites of sw_rewrite.c applied to real frames:
 * every byte that should change did, nothing else did, and the IPv4 header and TCP/UDP
 * checksums fixed incrementally equal a full recomputation (RFC 1071 sum over the header,
 * over pseudo-header + segment). test_sw_actions.c runs them through whole programs.
 */
#include "rf_test.h"

#include <string.h>

#include "sw.h"
#include "sw_frames.h"

static void checks_ok(const uint8_t *f, uint8_t proto)
{
	const uint8_t *ip = f + 14;
	unsigned c = proto == 6 ? 16 : 6;
	cr_assert_eq(at16(ip + 10), ip_csum(ip), "IPv4 header checksum %04x, want %04x",
		     at16(ip + 10), ip_csum(ip));
	cr_assert_eq(at16(ip + 20 + c), l4_csum(ip, c), "L4 checksum %04x, want %04x",
		     at16(ip + 20 + c), l4_csum(ip, c));
}

Test(sw_rewrite, set_fields_fix_checksums)
{
	for (uint8_t proto = 6; proto <= 17; proto += 11) {
		uint8_t f[128], g[128];
		uint32_t n = frame(f, proto);
		memcpy(g, f, sizeof(f));
		checks_ok(f, proto);
		cr_assert_eq(sw_act_set_ipv4(f, n, false, 0x0a0b0c0d), 0);
		cr_assert_arr_eq(f + 26, ((uint8_t[]){10, 11, 12, 13}), 4);
		checks_ok(f, proto);
		cr_assert_eq(sw_act_set_ipv4(f, n, true, 0xffff0001), 0);
		cr_assert_arr_eq(f + 30, ((uint8_t[]){0xff, 0xff, 0, 1}), 4);
		checks_ok(f, proto);
		cr_assert_eq(sw_act_set_l4_port(f, n, proto, false, 1), 0);
		cr_assert_eq(sw_act_set_l4_port(f, n, proto, true, 65535), 0);
		cr_assert_eq(at16(f + 34), 1);
		cr_assert_eq(at16(f + 36), 65535);
		checks_ok(f, proto);
		/* the wrong protocol is not touched */
		cr_assert_eq(sw_act_set_l4_port(f, n, proto == 6 ? 17 : 6, true, 7), -1);
		cr_assert_eq(at16(f + 36), 65535);
		cr_assert_eq(sw_act_set_eth(f, n, true, (const uint8_t *)"\x02\x01\x02\x03\x04\x05"), 0);
		cr_assert_arr_eq(f, "\x02\x01\x02\x03\x04\x05", 6);
		cr_assert_arr_eq(f + 6, g + 6, 6); /* eth_src untouched */
		cr_assert_eq(sw_act_dec_nw_ttl(f, n), 0);
		cr_assert_eq(f[22], 63);
		checks_ok(f, proto);
		/* payload and everything else as it was */
		cr_assert_arr_eq(f + n - 5, "hello", 5);
		cr_assert_eq(memcmp(f + 14, g + 14, 8), 0);
	}
}

Test(sw_rewrite, udp_without_checksum_stays_without)
{
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	f[14 + 20 + 6] = f[14 + 20 + 7] = 0;
	cr_assert_eq(sw_act_set_ipv4(f, n, false, 0x01020304), 0);
	cr_assert_eq(sw_act_set_l4_port(f, n, 17, true, 53), 0);
	cr_assert_eq(at16(f + 40), 0);
	cr_assert_eq(at16(f + 24), ip_csum(f + 14));
}

Test(sw_rewrite, ttl_and_vlan)
{
	uint8_t f[128], g[128];
	uint32_t n = frame(f, 6) + 5; /* 64 bytes (5 of padding): a pop gives the length back */
	memcpy(g, f, sizeof(f));
	f[22] = 1;
	cr_assert_eq(sw_act_dec_nw_ttl(f, n), -1, "TTL 1 must not be forwarded");
	memcpy(f, g, sizeof(f));
	/* push: the tag goes in after the MACs, VID/PCP 0, the rest moves by 4 */
	uint32_t len = n;
	cr_assert_eq(sw_act_push_vlan(f, &len, sizeof(f), 0x8100), 0);
	cr_assert_eq(len, n + 4);
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x81, 0x00, 0, 0}), 4);
	cr_assert_arr_eq(f + 16, g + 12, n - 12);
	/* the L3 rewrites still find IPv4 behind the tag */
	f[14] = 0xa0, f[15] = 0x64; /* pcp 5, vid 100 */
	cr_assert_eq(sw_act_dec_nw_ttl(f, len), 0);
	cr_assert_eq(f[26], 63);
	cr_assert_eq(at16(f + 28), ip_csum(f + 18));
	/* a second push copies the outer tag's VID and PCP */
	uint32_t len2 = len;
	uint8_t h[128];
	memcpy(h, f, sizeof(h));
	cr_assert_eq(sw_act_push_vlan(h, &len2, sizeof(h), 0x88a8), 0);
	cr_assert_arr_eq(h + 12, ((uint8_t[]){0x88, 0xa8, 0xa0, 0x64, 0x81, 0x00, 0xa0, 0x64}), 8);
	/* pop: back to the untagged frame (TTL now 63) */
	cr_assert_eq(sw_act_pop_vlan(f, &len), 0);
	cr_assert_eq(len, n);
	cr_assert_arr_eq(f + 12, g + 12, 10);
	cr_assert_eq(f[22], 63);
	cr_assert_eq(sw_act_pop_vlan(f, &len), -1, "no tag to pop");
	/* no room: refused, frame unchanged */
	len = n;
	cr_assert_eq(sw_act_push_vlan(f, &len, n + 3, 0x8100), -1);
	cr_assert_eq(len, n);
}

Test(sw_rewrite, set_ttl_dscp_vlan)
{
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	cr_assert_eq(sw_act_set_nw_ttl(f, n, 9), 0);
	cr_assert_eq(f[22], 9);
	cr_assert_eq(sw_act_set_dscp(f, n, 46), 0);
	cr_assert_eq(f[15], 46 << 2);
	checks_ok(f, 17);
	cr_assert_eq(sw_act_set_vlan(f, n, false, 5), -1, "no tag to set");
	/* two tags (0x88a8 outside 0x8100): vid/pcp change the outer one, IPv4 still found */
	uint32_t len = n;
	cr_assert_eq(sw_act_push_vlan(f, &len, sizeof(f), 0x8100), 0);
	cr_assert_eq(sw_act_push_vlan(f, &len, sizeof(f), 0x88a8), 0);
	cr_assert_eq(sw_act_set_vlan(f, len, false, 0xabc), 0);
	cr_assert_eq(sw_act_set_vlan(f, len, true, 7), 0);
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x88, 0xa8, 0xea, 0xbc, 0x81, 0x00, 0, 0}), 8);
	cr_assert_eq(sw_act_set_ipv4(f, len, true, 0x0a0b0c0d), 0);
	cr_assert_eq(sw_act_dec_nw_ttl(f, len), 0);
	cr_assert_eq(f[22 + 8], 8);
	checks_ok(f + 8, 17); /* the IPv4 frame behind the two tags */
	/* IPv6: dscp in the traffic class (ECN bits kept), hop limit set; no checksum */
	uint8_t h[80] = {0};
	memcpy(h + 12, "\x86\xdd", 2);
	h[14] = 0x60 | 0x0b, h[15] = 0x10 | 0x0a; /* traffic class 0xb1 (dscp 44, ecn 1) */
	h[14 + 7] = 64;
	cr_assert_eq(sw_act_set_dscp(h, sizeof(h), 10), 0);
	cr_assert_eq(h[14], 0x62);
	cr_assert_eq(h[15], 0x9a, "tc 0x29 = dscp 10, ecn 1; flow label bits kept");
	cr_assert_eq(sw_act_set_nw_ttl(h, sizeof(h), 3), 0);
	cr_assert_eq(h[21], 3);
}

/* IPv6 has no header checksum, but its addresses are in the TCP/UDP pseudo-header and the
 * ports in the segment: a port or address rewrite must leave the L4 checksum equal to a
 * full recomputation over the IPv6 pseudo-header, also behind an extension header. */
Test(sw_rewrite, ipv6_l4_rewrites_fix_checksums)
{
	for (int hbh = 0; hbh <= 1; hbh++)
		for (uint8_t proto = 6; proto <= 17; proto += 11) {
			uint8_t f[128], g[128];
			uint32_t l4;
			uint32_t n = frame6(f, proto, hbh, &l4);
			unsigned c = proto == 6 ? 16 : 6;
			memcpy(g, f, sizeof(f));
			cr_assert_eq(at16(f + l4 + c), l4_csum6(f + 14, f + l4, proto, c));
			cr_assert_eq(sw_act_set_l4_port(f, n, proto, false, 1), 0, "hbh %d proto %u",
				     hbh, proto);
			cr_assert_eq(sw_act_set_l4_port(f, n, proto, true, 65535), 0);
			cr_assert_eq(at16(f + l4), 1);
			cr_assert_eq(at16(f + l4 + 2), 65535);
			cr_assert_eq(at16(f + l4 + c), l4_csum6(f + 14, f + l4, proto, c),
				     "hbh %d proto %u: L4 checksum %04x, want %04x", hbh, proto,
				     at16(f + l4 + c), l4_csum6(f + 14, f + l4, proto, c));
			/* the wrong protocol is not touched */
			cr_assert_eq(sw_act_set_l4_port(f, n, proto == 6 ? 17 : 6, true, 7), -1);
			cr_assert_eq(at16(f + l4 + 2), 65535);
			/* everything before the L4 header and the payload as it was */
			cr_assert_eq(memcmp(f, g, l4), 0);
			cr_assert_arr_eq(f + n - 5, "hello", 5);
		}
}

/* An extension header whose length runs past the payload, or a later fragment: no L4 header
 * to rewrite, so the rewrite is refused and the frame left as it was. */
Test(sw_rewrite, ipv6_lying_ext_header_is_refused)
{
	uint8_t f[128], g[128];
	uint32_t l4;
	uint32_t n = frame6(f, 6, 1, &l4);
	f[14 + 40 + 1] = 200; /* hop-by-hop length: 1608 bytes */
	memcpy(g, f, sizeof(f));
	cr_assert_eq(sw_act_set_l4_port(f, n, 6, true, 1), -1);
	cr_assert_eq(memcmp(f, g, sizeof(f)), 0);
	n = frame6(f, 17, 1, &l4);
	f[14 + 6] = 44; /* a fragment header, offset 8: a later fragment */
	memcpy(f + 14 + 40, (uint8_t[]){17, 0, 0, 8, 0, 0, 0, 1}, 8);
	memcpy(g, f, sizeof(f));
	cr_assert_eq(sw_act_set_l4_port(f, n, 17, false, 1), -1);
	cr_assert_eq(memcmp(f, g, sizeof(f)), 0);
	/* payload length past the frame: refused */
	n = frame6(f, 17, 0, &l4);
	cr_assert_eq(sw_act_set_l4_port(f, n - 1, 17, false, 1), -1);
}

/* SCTP's checksum is a CRC32c over the whole packet: a port rewrite recomputes it (the
 * reference is computed bit by bit here, checked against the RFC 3720 test vector). */
Test(sw_rewrite, sctp_port_rewrite_recomputes_crc32c)
{
	cr_assert_eq(crc32c_ref((const uint8_t *)"123456789", 9), 0xe3069283u);
	for (int v6 = 0; v6 <= 1; v6++)
		for (int hbh = 0; hbh <= v6; hbh++) {
			uint8_t f[128];
			uint32_t l4 = 34, n = v6 ? frame6(f, 17, hbh, &l4) : frame(f, 17);
			make_sctp(f, l4, n, v6);
			cr_assert_eq(at32le(f + l4 + 8), sctp_csum_ref(f + l4, n - l4));
			cr_assert_eq(sw_act_set_l4_port(f, n, 132, false, 7), 0, "v6 %d hbh %d", v6, hbh);
			cr_assert_eq(sw_act_set_l4_port(f, n, 132, true, 0xfffe), 0);
			cr_assert_eq(at16(f + l4), 7);
			cr_assert_eq(at16(f + l4 + 2), 0xfffe);
			cr_assert_eq(at32le(f + l4 + 8), sctp_csum_ref(f + l4, n - l4),
				     "v6 %d hbh %d: CRC32c %08x, want %08x", v6, hbh,
				     at32le(f + l4 + 8), sctp_csum_ref(f + l4, n - l4));
			cr_assert_eq(sw_act_set_l4_port(f, n, 6, true, 1), -1, "not TCP");
		}
	/* an address rewrite leaves SCTP's CRC alone (it does not cover the IP header) */
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	make_sctp(f, 34, n, 0);
	uint32_t crc = at32le(f + 42);
	cr_assert_eq(sw_act_set_ipv4(f, n, true, 0x01020304), 0);
	cr_assert_eq(at32le(f + 42), crc);
	cr_assert_eq(at16(f + 24), ip_csum(f + 14));
}

/* ICMPv4 (checksum over the message) and ICMPv6 (over the pseudo-header too): type and
 * code rewrites keep the checksum equal to a recomputation. */
Test(sw_rewrite, icmp_type_code_fix_checksums)
{
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	uint8_t *ip = f + 14, *l4 = ip + 20;
	ip[9] = 1;
	ip[10] = ip[11] = 0;
	uint16_t x = ip_csum(ip);
	ip[10] = (uint8_t)(x >> 8), ip[11] = (uint8_t)x;
	memset(l4, 0, 8);
	l4[0] = 8; /* echo request */
	x = fold(sum16(l4, n - 34, 0));
	l4[2] = (uint8_t)(x >> 8), l4[3] = (uint8_t)x;
	cr_assert_eq(sw_act_set_icmp(f, n, false, false, 0), 0);
	cr_assert_eq(sw_act_set_icmp(f, n, false, true, 3), 0);
	cr_assert_eq(l4[0], 0);
	cr_assert_eq(l4[1], 3);
	uint8_t seg[64];
	memcpy(seg, l4, n - 34);
	seg[2] = seg[3] = 0;
	cr_assert_eq(at16(l4 + 2), fold(sum16(seg, n - 34, 0)));
	cr_assert_eq(sw_act_set_icmp(f, n, true, false, 1), -1, "not ICMPv6");
	/* an address rewrite on ICMPv4 leaves its checksum alone (no pseudo-header) */
	uint16_t c = at16(l4 + 2);
	cr_assert_eq(sw_act_set_ipv4(f, n, false, 0x0a0b0c0d), 0);
	cr_assert_eq(at16(l4 + 2), c);
	cr_assert_eq(at16(ip + 10), ip_csum(ip));
	/* ICMPv6 */
	uint32_t o;
	n = frame6(f, 17, 0, &o);
	f[14 + 6] = 58;
	memset(f + o, 0, 8);
	f[o] = 128;
	x = l4_csum6(f + 14, f + o, 58, 2);
	f[o + 2] = (uint8_t)(x >> 8), f[o + 3] = (uint8_t)x;
	cr_assert_eq(sw_act_set_icmp(f, n, true, false, 129), 0);
	cr_assert_eq(sw_act_set_icmp(f, n, true, true, 9), 0);
	cr_assert_eq(f[o], 129);
	cr_assert_eq(f[o + 1], 9);
	cr_assert_eq(at16(f + o + 2), l4_csum6(f + 14, f + o, 58, 2));
	cr_assert_eq(sw_act_set_icmp(f, n, false, false, 1), -1, "not ICMPv4");
}

Test(sw_rewrite, ecn_and_flow_label)
{
	uint8_t f[128], g[128];
	uint32_t n = frame(f, 6);
	f[15] = 46 << 2;
	f[24] = f[25] = 0;
	uint16_t x = ip_csum(f + 14);
	f[24] = (uint8_t)(x >> 8), f[25] = (uint8_t)x;
	cr_assert_eq(sw_act_set_ecn(f, n, 3), 0);
	cr_assert_eq(f[15], 46 << 2 | 3, "DSCP kept");
	cr_assert_eq(at16(f + 24), ip_csum(f + 14));
	cr_assert_eq(sw_act_set_dscp(f, n, 10), 0);
	cr_assert_eq(f[15], 10 << 2 | 3, "ECN kept");
	cr_assert_eq(at16(f + 24), ip_csum(f + 14));
	cr_assert_eq(sw_act_set_flabel(f, n, 1), -1, "IPv4 has no flow label");
	uint32_t l4;
	n = frame6(f, 6, 0, &l4); /* tc 0, flow label 0xabcde */
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_set_ecn(f, n, 2), 0);
	cr_assert_eq(sw_act_set_flabel(f, n, 0x12345), 0);
	cr_assert_arr_eq(f + 14, ((uint8_t[]){0x60, 0x21, 0x23, 0x45}), 4);
	cr_assert_arr_eq(f + 18, g + 18, n - 18, "nothing else changes (no checksum covers them)");
}

Test(sw_rewrite, arp_fields)
{
	uint8_t f[64] = {0}, g[64];
	memcpy(f, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x0a\x08\x06", 14);
	memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(f + 22, "\x02\x00\x00\x00\x00\x0a\x0a\x00\x00\x01", 10);
	memcpy(f + 32, "\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x02", 10);
	memcpy(g, f, sizeof(g));
	const uint8_t m1[6] = {2, 1, 1, 1, 1, 1}, m2[6] = {2, 2, 2, 2, 2, 2};
	cr_assert_eq(sw_act_set_arp(f, 42, SW_ARP_OP, 2, NULL), 0);
	cr_assert_eq(sw_act_set_arp(f, 42, SW_ARP_SHA, 0, m1), 0);
	cr_assert_eq(sw_act_set_arp(f, 42, SW_ARP_SPA, 0xc0a80001, NULL), 0);
	cr_assert_eq(sw_act_set_arp(f, 42, SW_ARP_THA, 0, m2), 0);
	cr_assert_eq(sw_act_set_arp(f, 42, SW_ARP_TPA, 0xc0a80002, NULL), 0);
	cr_assert_arr_eq(f, g, 20);
	cr_assert_arr_eq(f + 20, "\x00\x02\x02\x01\x01\x01\x01\x01\xc0\xa8\x00\x01"
				 "\x02\x02\x02\x02\x02\x02\xc0\xa8\x00\x02", 22);
	cr_assert_eq(sw_act_set_arp(f, 41, SW_ARP_OP, 1, NULL), -1, "cut body");
	uint8_t h[128];
	cr_assert_eq(sw_act_set_arp(h, frame(h, 6), SW_ARP_OP, 1, NULL), -1, "not ARP");
}

/* IPv6 addresses are in the TCP/UDP/ICMPv6 pseudo-header: a rewrite fixes those checksums
 * (recomputed from scratch here), behind a hop-by-hop header too. */
Test(sw_rewrite, ipv6_address_rewrite_fixes_l4_checksums)
{
	static const uint8_t a1[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0xab, 0xcd};
	static const uint8_t a2[16] = {0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
	for (int hbh = 0; hbh <= 1; hbh++)
		for (uint8_t proto = 6; proto <= 17; proto += 11) {
			uint8_t f[128], g[128];
			uint32_t l4, n = frame6(f, proto, hbh, &l4);
			unsigned c = proto == 6 ? 16 : 6;
			memcpy(g, f, sizeof(g));
			cr_assert_eq(sw_act_set_ipv6(f, n, false, a1), 0);
			cr_assert_eq(sw_act_set_ipv6(f, n, true, a2), 0);
			cr_assert_arr_eq(f + 22, a1, 16);
			cr_assert_arr_eq(f + 38, a2, 16);
			cr_assert_eq(at16(f + l4 + c), l4_csum6(f + 14, f + l4, proto, c),
				     "hbh %d proto %u: L4 checksum %04x, want %04x", hbh, proto,
				     at16(f + l4 + c), l4_csum6(f + 14, f + l4, proto, c));
			cr_assert_arr_eq(f, g, 22, "nothing before the addresses changes");
			cr_assert_arr_eq(f + 54, g + 54, l4 + c - 54, "nor the L4 header before its checksum");
		}
	/* ICMPv6 */
	uint8_t f[128];
	uint32_t o, n = frame6(f, 17, 0, &o);
	f[14 + 6] = 58;
	memset(f + o, 0, 8);
	f[o] = 135;
	uint16_t x = l4_csum6(f + 14, f + o, 58, 2);
	f[o + 2] = (uint8_t)(x >> 8), f[o + 3] = (uint8_t)x;
	cr_assert_eq(sw_act_set_ipv6(f, n, true, a1), 0);
	cr_assert_eq(at16(f + o + 2), l4_csum6(f + 14, f + o, 58, 2));
	/* IPv4: refused */
	n = frame(f, 6);
	cr_assert_eq(sw_act_set_ipv6(f, n, true, a1), -1);
}

/* Neighbour discovery: the target address and the link-layer address options of NS and NA,
 * the ICMPv6 checksum equal to a recomputation; options that lie are not followed. */
Test(sw_rewrite, nd_target_and_link_layer_options)
{
	static const uint8_t t[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x77};
	static const uint8_t mac[6] = {2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
	uint8_t f[128], g[128];
	uint32_t l4, n = frame_nd(f, 135, &l4);
	cr_assert_eq(at16(f + l4 + 2), l4_csum6(f + 14, f + l4, 58, 2));
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_set_nd_target(f, n, t), 0);
	cr_assert_eq(sw_act_set_nd_ll(f, n, true, mac), 0);
	cr_assert_arr_eq(f + l4 + 8, t, 16);
	cr_assert_arr_eq(f + l4 + 26, mac, 6);
	cr_assert_eq(at16(f + l4 + 2), l4_csum6(f + 14, f + l4, 58, 2));
	cr_assert_arr_eq(f, g, l4 + 2, "nothing before the checksum changes");
	cr_assert_eq(sw_act_set_nd_ll(f, n, false, mac), -1, "an NS has no TLL option here");
	n = frame_nd(f, 136, &l4);
	cr_assert_eq(sw_act_set_nd_ll(f, n, false, mac), 0);
	cr_assert_arr_eq(f + l4 + 26, mac, 6);
	cr_assert_eq(at16(f + l4 + 2), l4_csum6(f + 14, f + l4, 58, 2));
	/* an option length of 0, or one past the message: refused, frame unchanged */
	n = frame_nd(f, 135, &l4);
	f[l4 + 25] = 0;
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_set_nd_ll(f, n, true, mac), -1);
	cr_assert_arr_eq(f, g, n);
	f[l4 + 25] = 2;
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_set_nd_ll(f, n, true, mac), -1);
	cr_assert_arr_eq(f, g, n);
	/* not ND: an echo request */
	f[l4] = 128;
	cr_assert_eq(sw_act_set_nd_target(f, n, t), -1);
}

/* A pop never leaves a frame of Ethernet's 60-byte minimum or more below it: what the move
 * left at the end becomes zero padding, as a physical port pads on transmit. A frame that came
 * in shorter (only virtual links carry those) only shrinks. */
static void expect_padded(const uint8_t *f, uint32_t len, const uint8_t *g, uint32_t kept)
{
	uint8_t zeros[8] = {0};
	cr_assert_eq(len, 60);
	cr_assert_arr_eq(f, g, kept, "the frame as it was before the push");
	cr_assert_arr_eq(f + kept, zeros, 60 - kept, "then zeros, not the frame's old tail");
}

enum { VLAN, MPLS, PBB };

/* g's first len bytes copied to f, a header of the kind pushed and popped again: the length
 * left. */
static uint32_t push_pop(int kind, uint8_t *f, const uint8_t *g, uint32_t len)
{
	memcpy(f, g, 160);
	if (kind == VLAN) {
		cr_assert_eq(sw_act_push_vlan(f, &len, 160, 0x8100), 0);
		cr_assert_eq(sw_act_pop_vlan(f, &len), 0);
	} else if (kind == MPLS) {
		cr_assert_eq(sw_act_push_mpls(f, &len, 160, 0x8847), 0);
		cr_assert_eq(sw_act_pop_mpls(f, &len, 0x0800), 0);
	} else {
		cr_assert_eq(sw_act_push_pbb(f, &len, 160, 0x88e7), 0);
		cr_assert_eq(sw_act_pop_pbb(f, &len), 0);
	}
	return len;
}

Test(sw_rewrite, pops_pad_to_the_ethernet_minimum)
{
	uint8_t f[160], g[160];
	frame(g, 6);
	for (int kind = VLAN; kind <= PBB; kind++) {
		/* 56 bytes of frame with a header pushed: 56 + 4 of padding after the pop (the old
		 * tail, "he" of the payload, must not stay behind) */
		expect_padded(f, push_pop(kind, f, g, 56), g, 56);
		/* 58 bytes: padded to 60 */
		expect_padded(f, push_pop(kind, f, g, 58), g, 58);
		/* a runt with the header (only a virtual link carries one): just loses it again */
		uint32_t runt = kind == PBB ? 40 : 53;
		cr_assert_eq(push_pop(kind, f, g, runt), runt);
		cr_assert_arr_eq(f, g, runt);
	}
}
