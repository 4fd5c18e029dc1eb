/*
 * tests/ofswitch/test_sw_match.c: the OXM fields beyond the basic set, end to end inside
 * the switch: each frame kind (IPv4 with ECN, IPv6 with a flow label and extension headers,
 * SCTP, ICMPv6, ARP sha/tha, MPLS) parses into the key fields the spec defines; a flow made
 * from hand-written OXM bytes (of_match_parse -> sw_key_of_match) matches that frame and not
 * one differing in the field; the flow's match comes back byte-exact (sw_match_of_flow ->
 * of_match_put) for FLOW stats. Cut frames (an MPLS stack, an IPv6 extension header with a
 * lying length) are refused (-1, the poller's counted drop).
 */
#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include "of_wire.h"
#include "sw.h"
#include "sw_frames.h"

/* TLVs -> a whole OXM match (header + padding) in b; returns its length. */
static size_t wrap(uint8_t *b, const uint8_t *tl, size_t n)
{
	b[0] = 0, b[1] = 1;
	b[2] = (uint8_t)((n + 4) >> 8), b[3] = (uint8_t)(n + 4);
	memcpy(b + 4, tl, n);
	size_t pad = (8 - (n + 4) % 8) % 8;
	memset(b + 4 + n, 0, pad);
	return n + 4 + pad;
}

/* A flow from OXM TLVs (as the agent makes one); its match must come back byte-exact. */
static struct sw_flow *flow_of(const uint8_t *tl, size_t n)
{
	uint8_t b[256], out[256];
	size_t len = wrap(b, tl, n);
	struct of_match m, back;
	struct of_fault flt;
	cr_assert_eq(of_match_parse(OF_VERSION_1_3, b, len, &m, &flt), (int)len, "%s", flt.why);
	cr_assert_eq(m.n_other, 0, "a field was not modelled");
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert_not_null(f);
	sw_key_of_match(&m, &f->match, &f->mask);
	f->fields = m.fields;
	sw_match_of_flow(f, &back);
	struct of_wbuf w = of_wbuf_init(out, sizeof(out));
	of_match_put(&w, OF_VERSION_1_3, &back);
	cr_assert_not(w.overflow);
	cr_assert_eq(w.len, len, "match encodes back in %zu bytes, want %zu", w.len, len);
	cr_assert_arr_eq(out, b, len, "match does not encode back byte-exact");
	return f;
}

static void refused(const uint8_t *tl, size_t n, uint16_t code)
{
	uint8_t b[256];
	size_t len = wrap(b, tl, n);
	struct of_match m;
	struct of_fault f;
	cr_assert_lt(of_match_parse(OF_VERSION_1_3, b, len, &m, &f), 0, "want code %u", code);
	cr_assert_eq(f.type, OFPET_BAD_MATCH);
	cr_assert_eq(f.code, code, "code %u, want %u (%s)", f.code, code, f.why);
}

static bool key_matches(const struct sw_flow *f, const uint8_t *frm, uint32_t len)
{
	struct sw_key k;
	cr_assert_eq(sw_key_parse(frm, len, 1, &k), 0);
	return sw_flow_matches(f, &k);
}

#define ETH_IP4 0x80, 0x00, 0x0a, 0x02, 0x08, 0x00
#define ETH_IP6 0x80, 0x00, 0x0a, 0x02, 0x86, 0xdd
#define ETH_ARP 0x80, 0x00, 0x0a, 0x02, 0x08, 0x06
#define ETH_MPLS 0x80, 0x00, 0x0a, 0x02, 0x88, 0x47
#define PROTO(p) 0x80, 0x00, 0x14, 0x01, (p)

Test(sw_match, ip_ecn_both_versions)
{
	uint8_t f[128];
	uint32_t n = frame(f, 6);
	f[15] = 46 << 2 | 2; /* dscp 46, ECT(0) */
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.ip_ecn, 2);
	cr_assert_eq(k.ip_dscp, 46, "dscp unchanged by the ECN bits");
	static const uint8_t tl[] = {ETH_IP4, 0x80, 0x00, 0x12, 0x01, 2};
	struct sw_flow *fl = flow_of(tl, sizeof(tl));
	cr_assert(key_matches(fl, f, n));
	f[15] = 46 << 2 | 3;
	cr_assert_not(key_matches(fl, f, n));
	free(fl);
	/* IPv6: traffic class 0x0b in bytes 0..1 -> ecn 3 */
	uint32_t l4;
	n = frame6(f, 17, 0, &l4);
	f[14] = 0x60, f[15] = 0xba; /* tc 0x0b, flow label 0xabcde kept */
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.ip_ecn, 3);
	cr_assert_eq(k.ip_dscp, 2);
	cr_assert_eq(k.flabel, 0xabcde);
	static const uint8_t tl6[] = {ETH_IP6, 0x80, 0x00, 0x12, 0x01, 3};
	fl = flow_of(tl6, sizeof(tl6));
	cr_assert(key_matches(fl, f, n));
	free(fl);
	static const uint8_t big[] = {ETH_IP4, 0x80, 0x00, 0x12, 0x01, 4};
	refused(big, sizeof(big), OFPBMC_BAD_VALUE);
	static const uint8_t noip[] = {0x80, 0x00, 0x12, 0x01, 1};
	refused(noip, sizeof(noip), OFPBMC_BAD_PREREQ);
}

Test(sw_match, ipv6_flow_label_exact_and_masked)
{
	uint8_t f[128];
	uint32_t l4, n = frame6(f, 6, 0, &l4);
	static const uint8_t exact[] = {ETH_IP6, 0x80, 0x00, 0x38, 0x04, 0x00, 0x0a, 0xbc, 0xde};
	struct sw_flow *fl = flow_of(exact, sizeof(exact));
	cr_assert(key_matches(fl, f, n));
	f[17] ^= 1; /* flow label 0xabcdf */
	cr_assert_not(key_matches(fl, f, n));
	free(fl);
	/* the high 4 bits only: 0xa0000/0xf0000 */
	static const uint8_t masked[] = {ETH_IP6, 0x80, 0x00, 0x39, 0x08, 0x00, 0x0a, 0,
					 0,       0x00, 0x0f, 0,    0};
	fl = flow_of(masked, sizeof(masked));
	cr_assert(key_matches(fl, f, n));
	f[15] = (uint8_t)((f[15] & 0xf0) | 0x0b);
	cr_assert_not(key_matches(fl, f, n));
	free(fl);
	static const uint8_t big[] = {ETH_IP6, 0x80, 0x00, 0x38, 0x04, 0x00, 0x10, 0, 0};
	refused(big, sizeof(big), OFPBMC_BAD_VALUE);
	static const uint8_t on4[] = {ETH_IP4, 0x80, 0x00, 0x38, 0x04, 0, 0, 0, 1};
	refused(on4, sizeof(on4), OFPBMC_BAD_PREREQ);
}

/* SCTP and ICMPv6 share the port slots with TCP/UDP; ip_proto keeps them apart. The upper
 * layer is found behind an IPv6 hop-by-hop header. */
Test(sw_match, sctp_and_icmpv6_behind_extension_headers)
{
	uint8_t f[128];
	uint32_t l4, n = frame6(f, 17, 1, &l4);
	f[14 + 40] = 132; /* the hop-by-hop header's next header: SCTP (ports where UDP's are) */
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.ip_proto, 132);
	cr_assert_eq(k.tp_src, 40001);
	cr_assert_eq(k.tp_dst, 80);
	static const uint8_t sctp[] = {ETH_IP6, PROTO(132), 0x80, 0x00, 0x22, 0x02, 0x9c, 0x41,
				       0x80, 0x00, 0x24, 0x02, 0x00, 0x50};
	struct sw_flow *fl = flow_of(sctp, sizeof(sctp));
	cr_assert(key_matches(fl, f, n));
	/* the same ports over UDP do not match an SCTP flow */
	f[14 + 40] = 17;
	cr_assert_not(key_matches(fl, f, n));
	free(fl);
	/* ICMPv6 echo request (128/0) */
	n = frame6(f, 17, 0, &l4);
	f[14 + 6] = 58;
	f[l4] = 128, f[l4 + 1] = 0;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.tp_src, 128);
	cr_assert_eq(k.tp_dst, 0);
	static const uint8_t icmp6[] = {ETH_IP6, PROTO(58), 0x80, 0x00, 0x3a, 0x01, 128,
					0x80, 0x00, 0x3c, 0x01, 0};
	fl = flow_of(icmp6, sizeof(icmp6));
	cr_assert(key_matches(fl, f, n));
	f[l4] = 129;
	cr_assert_not(key_matches(fl, f, n));
	free(fl);
	static const uint8_t icmp6_on4[] = {ETH_IP4, PROTO(58), 0x80, 0x00, 0x3a, 0x01, 128};
	refused(icmp6_on4, sizeof(icmp6_on4), OFPBMC_BAD_PREREQ);
	static const uint8_t sctp_on_tcp[] = {ETH_IP4, PROTO(6), 0x80, 0x00, 0x22, 0x02, 0, 1};
	refused(sctp_on_tcp, sizeof(sctp_on_tcp), OFPBMC_BAD_PREREQ);
	/* SCTP over IPv4 too */
	n = frame(f, 17);
	f[14 + 9] = 132;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.tp_dst, 80);
}

/* A later IPv6 fragment has no L4 header: the protocol is the upper one, no ports. An
 * extension header running past the payload is a cut frame. */
Test(sw_match, ipv6_fragments_and_lying_extension_headers)
{
	uint8_t f[128];
	uint32_t l4, n = frame6(f, 17, 1, &l4);
	f[14 + 6] = 44; /* a fragment header where the hop-by-hop one was: offset 8 */
	memcpy(f + 14 + 40, (uint8_t[]){17, 0, 0, 8, 0, 0, 0, 7}, 8);
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.ip_proto, 17);
	cr_assert_eq(k.tp_src, 0);
	cr_assert_eq(k.tp_dst, 0);
	f[14 + 40 + 3] = 0; /* the first fragment: ports are there */
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.tp_dst, 80);
	n = frame6(f, 17, 1, &l4);
	f[14 + 40 + 1] = 3; /* hop-by-hop of 32 bytes in a 21-byte payload */
	cr_assert_eq(sw_key_parse(f, n, 1, &k), -1);
	/* nine hop-by-hop headers in a row: the walk stops after SW_IPV6_MAX_EXT, no ports */
	uint8_t g[256] = {0};
	memcpy(g + 12, "\x86\xdd", 2);
	g[14] = 0x60;
	unsigned plen = 9 * 8 + 8;
	g[18] = 0, g[19] = (uint8_t)plen;
	g[20] = 0;
	for (unsigned i = 0; i < 9; i++)
		g[54 + 8 * i] = i < 8 ? 0 : 17;
	cr_assert_eq(sw_key_parse(g, 54 + plen, 1, &k), 0);
	cr_assert_eq(k.tp_src, 0);
	cr_assert_neq(k.ip_proto, 17);
}

Test(sw_match, arp_sha_tha_exact_and_masked)
{
	uint8_t f[64] = {0};
	memcpy(f, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x0a\x08\x06", 14);
	memcpy(f + 14, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(f + 22, "\x02\x00\x00\x00\x00\x0a\x0a\x00\x00\x01", 10); /* sha, spa */
	memcpy(f + 32, "\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x02", 10); /* tha, tpa */
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, 42, 1, &k), 0);
	cr_assert_arr_eq(k.nw_src, "\x0a\x00\x00\x01\x02\x00\x00\x00\x00\x0a", 10);
	cr_assert_arr_eq(k.nw_dst, "\x0a\x00\x00\x02\x00\x00\x00\x00\x00\x00", 10);
	cr_assert_eq(k.arp_op, 1);
	static const uint8_t tl[] = {ETH_ARP, 0x80, 0x00, 0x2a, 0x02, 0, 1,
				     0x80, 0x00, 0x2c, 0x04, 10, 0, 0, 1,
				     0x80, 0x00, 0x30, 0x06, 2, 0, 0, 0, 0, 0x0a,
				     0x80, 0x00, 0x33, 0x0c, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0, 0, 0};
	struct sw_flow *fl = flow_of(tl, sizeof(tl));
	cr_assert(key_matches(fl, f, 42));
	f[27] = 0x0b; /* another sha */
	cr_assert_not(key_matches(fl, f, 42));
	f[27] = 0x0a;
	f[37] = 0x55; /* tha outside the mask: still matches */
	cr_assert(key_matches(fl, f, 42));
	f[32] = 0x02; /* tha inside the mask */
	cr_assert_not(key_matches(fl, f, 42));
	free(fl);
	static const uint8_t on4[] = {ETH_IP4, 0x80, 0x00, 0x30, 0x06, 2, 0, 0, 0, 0, 0x0a};
	refused(on4, sizeof(on4), OFPBMC_BAD_PREREQ);
	static const uint8_t stray[] = {ETH_ARP, 0x80, 0x00, 0x31, 0x0c, 2, 0, 0, 0, 0, 1,
					0xff, 0xff, 0xff, 0, 0, 0};
	refused(stray, sizeof(stray), OFPBMC_BAD_WILDCARDS);
}

Test(sw_match, mpls_top_label_stack_entry)
{
	/* two entries: label 0x12345 tc 5 bos 0 ttl 64, then label 16 tc 0 bos 1 */
	uint8_t f[64] = {0};
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x88\x47", 14);
	memcpy(f + 14, "\x12\x34\x5a\x40\x00\x01\x01\x40", 8);
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, 60, 1, &k), 0);
	cr_assert_eq(k.mpls, 0x12345u << 4 | 5 << 1 | 0);
	static const uint8_t tl[] = {ETH_MPLS, 0x80, 0x00, 0x44, 0x04, 0x00, 0x01, 0x23, 0x45,
				     0x80, 0x00, 0x46, 0x01, 5, 0x80, 0x00, 0x48, 0x01, 0};
	struct sw_flow *fl = flow_of(tl, sizeof(tl));
	cr_assert(key_matches(fl, f, 60));
	f[16] |= 1; /* bos set */
	cr_assert_not(key_matches(fl, f, 60));
	free(fl);
	/* tc alone */
	static const uint8_t tc[] = {ETH_MPLS, 0x80, 0x00, 0x46, 0x01, 5};
	fl = flow_of(tc, sizeof(tc));
	cr_assert(key_matches(fl, f, 60));
	f[16] = 0x58 | 1; /* tc 4 */
	cr_assert_not(key_matches(fl, f, 60));
	free(fl);
	/* a cut stack entry is refused */
	cr_assert_eq(sw_key_parse(f, 17, 1, &k), -1);
	static const uint8_t big[] = {ETH_MPLS, 0x80, 0x00, 0x44, 0x04, 0x00, 0x10, 0, 0};
	refused(big, sizeof(big), OFPBMC_BAD_VALUE);
	static const uint8_t bos2[] = {ETH_MPLS, 0x80, 0x00, 0x48, 0x01, 2};
	refused(bos2, sizeof(bos2), OFPBMC_BAD_VALUE);
	static const uint8_t on4[] = {ETH_IP4, 0x80, 0x00, 0x46, 0x01, 1};
	refused(on4, sizeof(on4), OFPBMC_BAD_PREREQ);
	static const uint8_t masked[] = {ETH_MPLS, 0x80, 0x00, 0x45, 0x08, 0, 0, 0, 1, 0, 0, 0, 1};
	refused(masked, sizeof(masked), OFPBMC_BAD_MASK);
}
