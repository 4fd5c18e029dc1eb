/*
 * tests/fuzz/fuzz_sw_frame.c: libFuzzer target for ringflow-switch's frame code: the flow
 * key extractor (sw_key.c: VLAN, IPv4, IPv6 extension headers, ARP, MPLS, PBB; sw_xmatch.c:
 * the ND target and link-layer options) and the frame
 * rewrites (sw_rewrite.c, sw_rewrite_mpls.c). The first 4 input bytes pick four rewrites, the rest is
 * the frame. The frame sits in a buffer of exactly its size (the key extractor) or its size
 * plus the room a push may take (the rewrites), so ASan sees any read or write past either;
 * a rewrite must never grow the frame past that room nor shrink it below zero.
 * Build: cmake -DRF_BUILD_FUZZ=ON -DCMAKE_C_COMPILER=clang; run: build/tests/fuzz/fuzz_sw_frame
 */
#include <stdlib.h>
#include <string.h>

#include "sw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROOM 40 /* a PBB push (18) and a few tags */

static void rewrite(uint8_t op, uint8_t *f, uint32_t *len, uint32_t cap)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	switch (op % 26) {
	case 0: sw_act_set_eth(f, *len, op & 0x80, mac); break;
	case 1: sw_act_set_ipv4(f, *len, op & 0x80, 0x0a000001); break;
	case 2: sw_act_set_l4_port(f, *len, 6, op & 0x80, 1); break;
	case 3: sw_act_set_l4_port(f, *len, 17, op & 0x80, 2); break;
	case 4: sw_act_set_l4_port(f, *len, 132, op & 0x80, 3); break;
	case 5: sw_act_dec_nw_ttl(f, *len); break;
	case 6: sw_act_set_nw_ttl(f, *len, 9); break;
	case 7: sw_act_set_dscp(f, *len, 46); break;
	case 8: sw_act_set_ecn(f, *len, 3); break;
	case 9: sw_act_set_flabel(f, *len, 0x12345); break;
	case 10: sw_act_set_icmp(f, *len, op & 0x80, op & 0x40, 7); break;
	case 11: sw_act_set_arp(f, *len, (uint8_t)(op >> 5) % 5, 0x01020304, mac); break;
	case 12: sw_act_set_vlan(f, *len, op & 0x80, 5); break;
	case 13: sw_act_push_vlan(f, len, cap, 0x8100); break;
	case 14: sw_act_pop_vlan(f, len); break;
	case 15: sw_act_set_mpls(f, *len, (uint8_t)(op >> 6), 0xabcde); break;
	case 16: sw_act_dec_mpls_ttl(f, *len); break;
	case 17: sw_act_copy_ttl(f, *len, op & 0x80); break;
	case 18: sw_act_push_mpls(f, len, cap, 0x8847); break;
	case 19: sw_act_pop_mpls(f, len, op & 0x80 ? 0x86dd : 0x0800); break;
	case 20: sw_act_push_pbb(f, len, cap, 0x88e7); break;
	case 21: sw_act_pop_pbb(f, len); break;
	case 22: sw_act_set_ipv6(f, *len, op & 0x80, (const uint8_t *)"\xfe\x80\0\0\0\0\0\0\0\0\0\0\0\0\0\1"); break;
	case 23: sw_act_set_nd_target(f, *len, (const uint8_t *)"\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\1"); break;
	case 24: sw_act_set_nd_ll(f, *len, op & 0x80, mac); break;
	case 25: sw_act_set_pbb_isid(f, *len, 0xabcdef); break;
	default: break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4 || size > 4096)
		return 0;
	uint32_t n = (uint32_t)(size - 4);
	uint8_t *f = malloc(n ? n : 1);
	if (!f)
		return 0;
	memcpy(f, data + 4, n);
	struct sw_key k;
	if (sw_key_parse(f, n, 1, &k) == 0) {
		if (k.in_port != 1)
			abort();
		struct sw_xkey x; /* the ND fields outside the key (sw_xmatch.c) */
		sw_xkey_parse(f, n, &k, &x);
		if (x.in_phy_port != 1 || x.tunnel_id != 0)
			abort();
	}
	free(f);
	uint32_t cap = n + ROOM, len = n;
	f = malloc(cap);
	if (!f)
		return 0;
	memcpy(f, data + 4, n);
	for (unsigned i = 0; i < 4; i++) {
		rewrite(data[i], f, &len, cap);
		if (len > cap)
			abort();
		sw_key_parse(f, len, 2, &k); /* what the next hop's switch would see */
	}
	free(f);
	return 0;
}
