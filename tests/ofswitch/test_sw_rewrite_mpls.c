/*
 * tests/ofswitch/test_sw_rewrite_mpls.c: the MPLS and PBB rewrites of sw_rewrite_mpls.c on real
 * frames, byte-exact before and after: push_mpls (defaults from the IP TTL, or copied from
 * the entry it covers; after the VLAN tags), pop_mpls, the top entry's label/tc/bos/TTL,
 * dec_mpls_ttl (refused at TTL 1), copy_ttl_in/out (the IPv4 header checksum recomputed from
 * scratch), push_pbb/pop_pbb; cut stacks and frames without room refused unchanged.
 */
#include "rf_test.h"

#include <string.h>

#include "sw.h"
#include "sw_frames.h"

/* An MPLS frame: Ethernet, entries lse[0..n) (the last one bottom of stack), then the IPv4
 * TCP packet of frame(). Returns the length. */
static uint32_t mpls_frame(uint8_t *f, const uint32_t *lse, unsigned n)
{
	uint8_t g[128];
	uint32_t plen = frame(g, 6) - 14;
	memset(f, 0, 160);
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x88\x47", 14);
	for (unsigned i = 0; i < n; i++) {
		uint32_t e = lse[i];
		f[14 + 4 * i] = (uint8_t)(e >> 24), f[15 + 4 * i] = (uint8_t)(e >> 16);
		f[16 + 4 * i] = (uint8_t)(e >> 8), f[17 + 4 * i] = (uint8_t)e;
	}
	memcpy(f + 14 + 4 * n, g + 14, plen);
	return 14 + 4 * n + plen;
}

#define LSE(label, tc, bos, ttl) ((uint32_t)(label) << 12 | (tc) << 9 | (bos) << 8 | (ttl))

Test(sw_rewrite_mpls, push_on_ipv4_then_pop_restores)
{
	uint8_t f[160], g[160];
	uint32_t n = frame(f, 6) + 5, len = n; /* 64 bytes: a pop gives the length back */
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_push_mpls(f, &len, sizeof(f), 0x8847), 0);
	cr_assert_eq(len, n + 4);
	cr_assert_arr_eq(f, g, 12);
	/* label 0, tc 0, bos 1, TTL of the IPv4 header (64) */
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x88, 0x47, 0x00, 0x00, 0x01, 0x40}), 6);
	cr_assert_arr_eq(f + 18, g + 14, n - 14);
	cr_assert_eq(sw_act_pop_mpls(f, &len, 0x0800), 0);
	cr_assert_eq(len, n);
	cr_assert_arr_eq(f, g, n);
	cr_assert_eq(sw_act_pop_mpls(f, &len, 0x0800), -1, "not MPLS any more");
}

Test(sw_rewrite_mpls, push_defaults_ipv6_arp_and_a_second_entry)
{
	uint8_t f[160];
	uint32_t l4, len = frame6(f, 17, 0, &l4); /* hop limit 64 */
	f[14 + 7] = 33;
	cr_assert_eq(sw_act_push_mpls(f, &len, sizeof(f), 0x8848), 0);
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x88, 0x48, 0, 0, 1, 33}), 6);
	cr_assert_eq(f[18], 0x60, "the IPv6 header follows");
	/* not IP: TTL 0 */
	uint8_t a[64] = {0};
	memcpy(a + 12, "\x08\x06\x00\x01\x08\x00\x06\x04", 8);
	len = 42;
	cr_assert_eq(sw_act_push_mpls(a, &len, sizeof(a), 0x8847), 0);
	cr_assert_arr_eq(a + 12, ((uint8_t[]){0x88, 0x47, 0, 0, 1, 0, 0x00, 0x01, 0x08, 0x00}), 10);
	/* on MPLS: label, tc, TTL copied from the entry covered, bos 0 */
	uint32_t e[1] = {LSE(0x12345, 5, 1, 77)};
	len = mpls_frame(f, e, 1);
	uint32_t n = len;
	cr_assert_eq(sw_act_push_mpls(f, &len, sizeof(f), 0x8847), 0);
	cr_assert_eq(len, n + 4);
	cr_assert_arr_eq(f + 14, ((uint8_t[]){0x12, 0x34, 0x5a, 77, 0x12, 0x34, 0x5b, 77}), 8);
	/* no room: refused, unchanged */
	uint8_t h[160];
	memcpy(h, f, sizeof(h));
	uint32_t l2 = len;
	cr_assert_eq(sw_act_push_mpls(f, &l2, len + 3, 0x8847), -1);
	cr_assert_eq(l2, len);
	cr_assert_arr_eq(f, h, sizeof(h));
}

Test(sw_rewrite_mpls, push_goes_after_the_vlan_tag)
{
	uint8_t f[160], g[160];
	uint32_t n = frame(f, 17), len = n;
	cr_assert_eq(sw_act_push_vlan(f, &len, sizeof(f), 0x8100), 0);
	f[15] = 7; /* vid 7 */
	memcpy(g, f, sizeof(g));
	uint32_t tagged = len;
	cr_assert_eq(sw_act_push_mpls(f, &len, sizeof(f), 0x8847), 0);
	cr_assert_arr_eq(f, g, 16);
	cr_assert_arr_eq(f + 16, ((uint8_t[]){0x88, 0x47, 0, 0, 1, 64}), 6);
	cr_assert_arr_eq(f + 22, g + 18, tagged - 18);
	cr_assert_eq(sw_act_dec_mpls_ttl(f, len), 0);
	cr_assert_eq(f[21], 63);
	cr_assert_eq(sw_act_pop_mpls(f, &len, 0x0800), 0);
	cr_assert_eq(len, tagged);
	cr_assert_arr_eq(f, g, tagged);
}

Test(sw_rewrite_mpls, top_entry_fields_and_ttl)
{
	uint8_t f[160], g[160];
	uint32_t e[2] = {LSE(100, 3, 0, 64), LSE(200, 0, 1, 9)};
	uint32_t len = mpls_frame(f, e, 2);
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_set_mpls(f, len, SW_MPLS_LABEL, 0xfffff), 0);
	cr_assert_eq(sw_act_set_mpls(f, len, SW_MPLS_TC, 6), 0);
	cr_assert_eq(sw_act_set_mpls(f, len, SW_MPLS_BOS, 1), 0);
	cr_assert_eq(sw_act_set_mpls(f, len, SW_MPLS_TTL, 2), 0);
	cr_assert_arr_eq(f + 14, ((uint8_t[]){0xff, 0xff, 0xfd, 2}), 4);
	cr_assert_arr_eq(f + 18, g + 18, len - 18, "only the top entry changes");
	cr_assert_eq(sw_act_dec_mpls_ttl(f, len), 0);
	cr_assert_eq(f[17], 1);
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_dec_mpls_ttl(f, len), -1, "TTL 1 must not be forwarded");
	cr_assert_arr_eq(f, g, len);
	/* a cut entry, and a frame that is not MPLS */
	cr_assert_eq(sw_act_set_mpls(f, 17, SW_MPLS_TC, 1), -1);
	cr_assert_eq(sw_act_dec_mpls_ttl(f, 16), -1);
	uint8_t h[128];
	uint32_t hn = frame(h, 6);
	cr_assert_eq(sw_act_set_mpls(h, hn, SW_MPLS_LABEL, 1), -1);
	cr_assert_eq(sw_act_copy_ttl(h, hn, true), -1);
}

Test(sw_rewrite_mpls, copy_ttl_in_and_out)
{
	uint8_t f[160];
	uint32_t e[1] = {LSE(100, 3, 1, 200)};
	uint32_t len = mpls_frame(f, e, 1);
	const uint8_t *ip = f + 18;
	cr_assert_eq(ip[8], 64);
	cr_assert_eq(sw_act_copy_ttl(f, len, true), 0);
	cr_assert_eq(ip[8], 200, "in: the IPv4 TTL gets the MPLS TTL");
	cr_assert_eq(at16(ip + 10), ip_csum(ip), "IPv4 checksum %04x, want %04x", at16(ip + 10),
		     ip_csum(ip));
	f[18 + 8] = 17;
	cr_assert_eq(sw_act_copy_ttl(f, len, false), 0);
	cr_assert_eq(f[17], 17, "out: the MPLS TTL gets the IPv4 TTL");
	/* two entries: between the entries */
	uint32_t e2[2] = {LSE(1, 0, 0, 50), LSE(2, 0, 1, 60)};
	len = mpls_frame(f, e2, 2);
	cr_assert_eq(sw_act_copy_ttl(f, len, true), 0);
	cr_assert_eq(f[21], 50);
	cr_assert_eq(f[22 + 8], 64, "the IP packet below is not touched");
	f[21] = 99;
	cr_assert_eq(sw_act_copy_ttl(f, len, false), 0);
	cr_assert_eq(f[17], 99);
	/* IPv6 under the bottom entry: its hop limit */
	uint32_t l4, n6 = frame6(f, 6, 0, &l4), l6 = n6;
	cr_assert_eq(sw_act_push_mpls(f, &l6, sizeof(f), 0x8847), 0);
	f[17] = 5;
	cr_assert_eq(sw_act_copy_ttl(f, l6, true), 0);
	cr_assert_eq(f[18 + 7], 5);
	/* bottom of stack with a payload that is neither: refused */
	f[18] = 0x10;
	cr_assert_eq(sw_act_copy_ttl(f, l6, true), -1);
}

Test(sw_rewrite_mpls, pbb_push_push_pop)
{
	uint8_t f[160], g[160];
	uint32_t n = frame(f, 6) + 5, len = n; /* 64 bytes: a pop gives the length back */
	memcpy(g, f, sizeof(g));
	cr_assert_eq(sw_act_push_pbb(f, &len, sizeof(f), 0x88e7), 0);
	cr_assert_eq(len, n + 18);
	cr_assert_arr_eq(f, g, 12, "B-DA, B-SA copied from the customer's");
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x88, 0xe7, 0, 0, 0, 0}), 6);
	cr_assert_arr_eq(f + 18, g, n, "the customer frame whole behind the I-TAG");
	f[15] = 0x12, f[16] = 0x34, f[17] = 0x56; /* I-SID 0x123456 */
	uint32_t one = len;
	cr_assert_eq(sw_act_push_pbb(f, &len, sizeof(f), 0x88e7), 0);
	cr_assert_eq(len, one + 18);
	cr_assert_arr_eq(f + 12, ((uint8_t[]){0x88, 0xe7, 0, 0x12, 0x34, 0x56}), 6,
			 "a second push copies the I-SID");
	cr_assert_eq(sw_act_pop_pbb(f, &len), 0);
	cr_assert_eq(sw_act_pop_pbb(f, &len), 0);
	cr_assert_eq(len, n);
	cr_assert_arr_eq(f, g, n);
	cr_assert_eq(sw_act_pop_pbb(f, &len), -1, "not PBB");
	cr_assert_eq(sw_act_push_pbb(f, &len, n + 17, 0x88e7), -1, "no room");
	cr_assert_arr_eq(f, g, n);
}
