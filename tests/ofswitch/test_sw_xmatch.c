/*
 * tests/ofswitch/test_sw_xmatch.c: the rest of the OpenFlow 1.3 match set (issue 25):
 * in_phy_port, ipv6_nd_target / _sll / _tll, pbb_isid, tunnel_id, ipv6_exthdr.
 *
 * Each field: the OXM bytes a controller sends parse (or are refused with the code the spec
 * names: BAD_PREREQ, BAD_MASK, BAD_WILDCARDS, BAD_VALUE), a flow made from them the way the
 * agent makes one is found by a table lookup of the frame that has the field and not of one
 * that differs in it, and its match comes back byte-exact (FLOW stats, FLOW_REMOVED). The
 * fields inside the 64-byte key (pbb_isid, ipv6_exthdr) are checked on the key; the ones
 * outside it (sw_xmatch.c) through sw_table_lookup_frame, the pollers' call, twice so that
 * a second answer may come from the EMC. Then the set-fields: pbb_isid byte-exact, and
 * tunnel_id leaving the frame as it was.
 */
#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "of_wire.h"
#include "sw.h"
#include "sw_frames.h"

static size_t wrap(uint8_t *b, const uint8_t *tl, size_t n)
{
	b[0] = 0, b[1] = 1;
	b[2] = (uint8_t)((n + 4) >> 8), b[3] = (uint8_t)(n + 4);
	memcpy(b + 4, tl, n);
	size_t pad = (8 - (n + 4) % 8) % 8;
	memset(b + 4 + n, 0, pad);
	return n + 4 + pad;
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

static struct sw_table *table;
static struct sw_flow *flows[32];
static unsigned nflows;

static void setup(void)
{
	rf_qsbr_register();
	table = sw_table_create(1);
	cr_assert_not_null(table);
	nflows = 0;
}

static void teardown(void)
{
	for (unsigned i = 0; i < nflows; i++) {
		sw_table_remove(table, flows[i]);
		sw_table_retire(table, flows[i], SW_RETIRE_FLOW);
	}
	sw_table_reclaim(table, 0, true);
	sw_table_free(table);
	rf_qsbr_unregister();
}

/* A flow of priority prio from OXM TLVs, made as the agent makes one (key match, the fields
 * outside the key), put in the table; its match must encode back byte-exact. */
static struct sw_flow *add(const uint8_t *tl, size_t n, uint16_t prio)
{
	uint8_t b[256], out[256];
	size_t len = wrap(b, tl, n);
	struct of_flow_mod fm = {.priority = prio};
	struct of_fault flt;
	cr_assert_eq(of_match_parse(OF_VERSION_1_3, b, len, &fm.match, &flt), (int)len, "%s",
		     flt.why);
	cr_assert_eq(fm.match.n_other, 0, "a field was not modelled");
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert_not_null(f);
	sw_key_of_match(&fm.match, &f->match, &f->mask);
	f->fields = fm.match.fields;
	f->priority = prio;
	sw_pipe_flow_init(f, &fm);
	cr_assert(sw_pipe_same(f, &fm), "a flow is the same as the FLOW_MOD that made it");
	struct of_match back;
	sw_match_of_flow(f, &back);
	struct of_wbuf w = of_wbuf_init(out, sizeof(out));
	of_match_put(&w, OF_VERSION_1_3, &back);
	cr_assert_not(w.overflow);
	cr_assert_eq(w.len, len, "match encodes back in %zu bytes, want %zu", w.len, len);
	cr_assert_arr_eq(out, b, len, "match does not encode back byte-exact");
	cr_assert_eq(sw_table_add(table, f), 0);
	flows[nflows++] = f;
	return f;
}

/* Table 0's answer for the frame from port in_port, asked twice (the EMC may answer the
 * second: both must agree). */
static struct sw_flow *look(const uint8_t *fr, uint32_t n, uint32_t in_port)
{
	struct sw_key k;
	cr_assert_eq(sw_key_parse(fr, n, in_port, &k), 0);
	struct sw_flow *a = NULL;
	for (int i = 0; i < 2; i++) {
		struct sw_flow *f = sw_table_lookup_frame(table, 0, fr, n, &k);
		cr_assert(i == 0 || f == a, "a second lookup answers the same");
		a = f;
		rf_qsbr_quiescent();
	}
	return a;
}

#define IN_PORT1 0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1
#define ETH_IP4 0x80, 0x00, 0x0a, 0x02, 0x08, 0x00
#define ETH_IP6 0x80, 0x00, 0x0a, 0x02, 0x86, 0xdd
#define ETH_PBB 0x80, 0x00, 0x0a, 0x02, 0x88, 0xe7
#define PROTO(p) 0x80, 0x00, 0x14, 0x01, (p)
#define ICMP6T(t) 0x80, 0x00, 0x3a, 0x01, (t)
#define TARGET 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0, 0, 0x0b
#define LLADDR 0x02, 0, 0, 0, 0, 0x0a

Test(sw_xmatch, prerequisites_masks_and_values_refused)
{
	/* in_phy_port needs in_port, and takes no mask */
	static const uint8_t phy[] = {0x80, 0x00, 0x02, 0x04, 0, 0, 0, 1};
	refused(phy, sizeof(phy), OFPBMC_BAD_PREREQ);
	static const uint8_t phym[] = {IN_PORT1, 0x80, 0x00, 0x03, 0x08, 0, 0, 0, 1, 0, 0, 0, 1};
	refused(phym, sizeof(phym), OFPBMC_BAD_MASK);
	/* nd_target needs ICMPv6 type 135 or 136 */
	static const uint8_t t_noicmp[] = {ETH_IP6, PROTO(58), 0x80, 0x00, 0x3e, 0x10, TARGET};
	refused(t_noicmp, sizeof(t_noicmp), OFPBMC_BAD_PREREQ);
	static const uint8_t t_echo[] = {ETH_IP6, PROTO(58), ICMP6T(128), 0x80, 0x00, 0x3e, 0x10,
					 TARGET};
	refused(t_echo, sizeof(t_echo), OFPBMC_BAD_PREREQ);
	/* nd_sll needs 135, nd_tll 136 */
	static const uint8_t sll_na[] = {ETH_IP6, PROTO(58), ICMP6T(136), 0x80, 0x00, 0x40, 0x06,
					 LLADDR};
	refused(sll_na, sizeof(sll_na), OFPBMC_BAD_PREREQ);
	static const uint8_t tll_ns[] = {ETH_IP6, PROTO(58), ICMP6T(135), 0x80, 0x00, 0x42, 0x06,
					 LLADDR};
	refused(tll_ns, sizeof(tll_ns), OFPBMC_BAD_PREREQ);
	/* no mask on the ND fields */
	static const uint8_t sllm[] = {ETH_IP6, PROTO(58), ICMP6T(135), 0x80, 0x00, 0x41, 0x0c,
				       LLADDR, LLADDR};
	refused(sllm, sizeof(sllm), OFPBMC_BAD_MASK);
	/* pbb_isid needs eth_type 0x88e7; a value bit outside its mask */
	static const uint8_t isid_ip[] = {ETH_IP4, 0x80, 0x00, 0x4a, 0x03, 0x12, 0x34, 0x56};
	refused(isid_ip, sizeof(isid_ip), OFPBMC_BAD_PREREQ);
	static const uint8_t isid_wc[] = {ETH_PBB, 0x80, 0x00, 0x4b, 0x06, 0x12, 0x34, 0x56,
					  0xff, 0x00, 0x00};
	refused(isid_wc, sizeof(isid_wc), OFPBMC_BAD_WILDCARDS);
	/* ipv6_exthdr needs IPv6 and has 9 bits */
	static const uint8_t eh_ip4[] = {ETH_IP4, 0x80, 0x00, 0x4e, 0x02, 0x00, 0x40};
	refused(eh_ip4, sizeof(eh_ip4), OFPBMC_BAD_PREREQ);
	static const uint8_t eh_big[] = {ETH_IP6, 0x80, 0x00, 0x4e, 0x02, 0x02, 0x00};
	refused(eh_big, sizeof(eh_big), OFPBMC_BAD_VALUE);
	/* tunnel_id: any frame, but no value bit outside the mask; 8 bytes exactly */
	static const uint8_t tun_wc[] = {0x80, 0x00, 0x4d, 0x10, 0, 0, 0, 0, 0, 0, 0, 3,
					 0, 0, 0, 0, 0, 0, 0, 1};
	refused(tun_wc, sizeof(tun_wc), OFPBMC_BAD_WILDCARDS);
	static const uint8_t tun_len[] = {0x80, 0x00, 0x4c, 0x04, 0, 0, 0, 3};
	refused(tun_len, sizeof(tun_len), OFPBMC_BAD_LEN);
	/* repeated */
	static const uint8_t tun_dup[] = {0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 0, 0, 0, 0, 3,
					  0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 0, 0, 0, 0, 3};
	refused(tun_dup, sizeof(tun_dup), OFPBMC_DUP_FIELD);
}

Test(sw_xmatch, nd_target_and_link_layer_addresses, .init = setup, .fini = teardown)
{
	uint8_t ns[128], na[128];
	uint32_t l4s, l4a;
	uint32_t nns = frame_nd(ns, 135, &l4s), nna = frame_nd(na, 136, &l4a);
	static const uint8_t t_ns[] = {ETH_IP6, PROTO(58), ICMP6T(135), 0x80, 0x00, 0x3e, 0x10,
				       TARGET};
	static const uint8_t sll[] = {ETH_IP6, PROTO(58), ICMP6T(135), 0x80, 0x00, 0x40, 0x06,
				      LLADDR};
	static const uint8_t tll[] = {ETH_IP6, PROTO(58), ICMP6T(136), 0x80, 0x00, 0x3e, 0x10,
				      TARGET, 0x80, 0x00, 0x42, 0x06, LLADDR};
	struct sw_flow *ft = add(t_ns, sizeof(t_ns), 30);
	struct sw_flow *fs = add(sll, sizeof(sll), 20);
	struct sw_flow *fa = add(tll, sizeof(tll), 30);
	static const uint8_t any6[] = {ETH_IP6};
	struct sw_flow *fany = add(any6, sizeof(any6), 1);
	cr_assert_eq(look(ns, nns, 1), ft, "the NS's target");
	cr_assert_eq(look(na, nna, 1), fa, "the NA's target and tll");
	/* another target: the NS falls to the sll flow, the NA to the catch-all */
	ns[l4s + 23] ^= 1, na[l4a + 23] ^= 1;
	cr_assert_eq(look(ns, nns, 1), fs);
	cr_assert_eq(look(na, nna, 1), fany);
	/* and another source link-layer address too: the catch-all */
	ns[l4s + 31] ^= 1;
	cr_assert_eq(look(ns, nns, 1), fany);
	/* an NS without the option: its sll is zero, which the sll flow does not match */
	ns[l4s + 31] ^= 1;
	ns[l4s + 24] = 14; /* an option type we do not read */
	cr_assert_eq(look(ns, nns, 1), fany);
	/* a lying option length stops the search without reading past the message */
	ns[l4s + 24] = 1, ns[l4s + 25] = 9;
	cr_assert_eq(look(ns, nns, 1), fany);
	/* an echo request is not ND: the key alone decides, through the EMC */
	na[l4a] = 128;
	cr_assert_eq(look(na, nna, 1), fany);
}

Test(sw_xmatch, tunnel_id_is_zero_on_every_port, .init = setup, .fini = teardown)
{
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	static const uint8_t t5[] = {ETH_IP4, 0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 0, 0, 0, 0, 5};
	static const uint8_t t0[] = {ETH_IP4, 0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t tm[] = {ETH_IP4, 0x80, 0x00, 0x4d, 0x10, 0, 0, 0, 0, 0, 0, 1, 0,
				     0, 0, 0, 0, 0, 0, 0xff, 0};
	static const uint8_t tz[] = {ETH_IP4, 0x80, 0x00, 0x4d, 0x10, 0, 0, 0, 0, 0, 0, 0, 0,
				     0, 0, 0, 0, 0, 0, 0xff, 0xff};
	add(t5, sizeof(t5), 40);
	add(tm, sizeof(tm), 30);
	cr_assert_null(look(f, n, 1), "no frame here has tunnel_id 5 or 0x100/0xff00");
	struct sw_flow *fz = add(tz, sizeof(tz), 20);
	cr_assert_eq(look(f, n, 1), fz, "0/0xffff matches every frame");
	struct sw_flow *f0 = add(t0, sizeof(t0), 25);
	cr_assert_eq(look(f, n, 1), f0, "tunnel_id=0 too");
	/* the same key match, the same priority, another tunnel_id: two flows, two subtables */
	static const uint8_t t6[] = {ETH_IP4, 0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 0, 0, 0, 0, 6};
	struct sw_flow *f6 = add(t6, sizeof(t6), 40);
	cr_assert(memcmp(&f6->match, &flows[0]->match, sizeof(f6->match)) == 0);
	cr_assert_eq(sw_table_nsubtables(table), 5);
	struct of_flow_mod fm = {.priority = 40};
	uint8_t b[64];
	size_t len = wrap(b, t5, sizeof(t5));
	struct of_fault flt;
	cr_assert_eq(of_match_parse(OF_VERSION_1_3, b, len, &fm.match, &flt), (int)len);
	cr_assert(sw_pipe_same(flows[0], &fm));
	cr_assert_not(sw_pipe_same(f6, &fm), "tunnel_id 6 is not the flow of tunnel_id 5");
	cr_assert(sw_pipe_covered(flows[0], 0, &fm.match));
	cr_assert_not(sw_pipe_covered(f6, 0, &fm.match));
	cr_assert_not(sw_pipe_overlaps(f6, &fm));
	cr_assert_not(sw_pipe_overlaps(fz, &fm), "tunnel_id 5 is not 0 under 0xffff");
	cr_assert(sw_pipe_overlaps(flows[0], &fm));
}

Test(sw_xmatch, in_phy_port_is_in_port, .init = setup, .fini = teardown)
{
	uint8_t f[128];
	uint32_t n = frame(f, 17);
	static const uint8_t p12[] = {IN_PORT1, 0x80, 0x00, 0x02, 0x04, 0, 0, 0, 2};
	static const uint8_t p11[] = {IN_PORT1, 0x80, 0x00, 0x02, 0x04, 0, 0, 0, 1};
	add(p12, sizeof(p12), 20);
	cr_assert_null(look(f, n, 1), "a physical port is its own in_phy_port");
	struct sw_flow *a = add(p11, sizeof(p11), 10);
	cr_assert_eq(look(f, n, 1), a);
	cr_assert_null(look(f, n, 2));
}

Test(sw_xmatch, pbb_isid_exact_and_masked, .init = setup, .fini = teardown)
{
	uint8_t f[160];
	uint32_t n = frame(f, 17);
	cr_assert_eq(sw_act_push_pbb(f, &n, sizeof(f), 0x88e7), 0);
	cr_assert_eq(sw_act_set_pbb_isid(f, n, 0x123456), 0);
	static const uint8_t want[] = {0x88, 0xe7, 0x00, 0x12, 0x34, 0x56};
	cr_assert_arr_eq(f + 12, want, 6, "set_field pbb_isid: the I-TAG's low 24 bits");
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, n, 1, &k), 0);
	cr_assert_eq(k.eth_type, 0x88e7);
	cr_assert_eq(k.pbb_isid, 0x123456);
	static const uint8_t ex[] = {ETH_PBB, 0x80, 0x00, 0x4a, 0x03, 0x12, 0x34, 0x57};
	static const uint8_t mk[] = {ETH_PBB, 0x80, 0x00, 0x4b, 0x06, 0x12, 0x34, 0x00,
				     0xff, 0xff, 0x00};
	add(ex, sizeof(ex), 20);
	cr_assert_null(look(f, n, 1));
	struct sw_flow *fm = add(mk, sizeof(mk), 10);
	cr_assert_eq(look(f, n, 1), fm);
	cr_assert_eq(sw_act_set_pbb_isid(f, n, 0x123457), 0);
	cr_assert_eq(look(f, n, 1), flows[0]);
	/* the I-TAG behind a B-TAG; a frame without one is not rewritten */
	uint8_t g[160];
	memcpy(g, f, 12);
	g[12] = 0x88, g[13] = 0xa8, g[14] = 0, g[15] = 5;
	memcpy(g + 16, f + 12, n - 12);
	cr_assert_eq(sw_act_set_pbb_isid(g, n + 4, 0xabcdef), 0);
	cr_assert_eq(g[19], 0xab);
	cr_assert_eq(g[21], 0xef);
	cr_assert_eq(sw_key_parse(g, n + 4, 1, &k), 0);
	cr_assert_eq(k.vlan, 0x1005, "the B-TAG (802.1ad) is the frame's VLAN tag");
	cr_assert_eq(k.eth_type, 0x88e7);
	cr_assert_eq(k.pbb_isid, 0xabcdef);
	uint32_t m = frame(g, 6);
	cr_assert_eq(sw_act_set_pbb_isid(g, m, 1), -1);
	/* a cut I-TAG is a short frame */
	cr_assert_eq(sw_key_parse(f, 16, 1, &k), -1);
}

/* An IPv6/UDP frame whose extension headers are nh[0..n) (8 bytes each; a fragment header
 * says offset 0), the last one's next header `last`. Returns the length. */
static uint32_t frame_ext(uint8_t *f, const uint8_t *nh, unsigned n, uint8_t last)
{
	memset(f, 0, 256);
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x86\xdd", 14);
	uint8_t *ip = f + 14;
	unsigned plen = 8 * n + 8;
	ip[0] = 0x60;
	ip[4] = (uint8_t)(plen >> 8), ip[5] = (uint8_t)plen;
	ip[6] = n ? nh[0] : last;
	ip[7] = 64;
	for (unsigned i = 0; i < n; i++)
		ip[40 + 8 * i] = i + 1 < n ? nh[i + 1] : last;
	return 14 + 40 + plen;
}

static uint16_t exthdr_of(const uint8_t *nh, unsigned n, uint8_t last)
{
	uint8_t f[256];
	uint32_t len = frame_ext(f, nh, n, last);
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, len, 1, &k), 0);
	cr_assert_eq(k.flabel & SW_FLABEL, 0, "the flow label is its own");
	return (uint16_t)(k.flabel >> SW_EXTHDR_SHIFT);
}

Test(sw_xmatch, ipv6_exthdr_flags)
{
	enum { HOP = 0, RT = 43, FR = 44, DST = 60, AH = 51 };
	cr_assert_eq(exthdr_of(NULL, 0, 17), 0);
	cr_assert_eq(exthdr_of((const uint8_t[]){HOP}, 1, 17), SW_IEH_HOP);
	cr_assert_eq(exthdr_of((const uint8_t[]){HOP, DST, RT, FR, AH}, 5, 17),
		     SW_IEH_HOP | SW_IEH_DEST | SW_IEH_ROUTER | SW_IEH_FRAG | SW_IEH_AUTH,
		     "the recommended order");
	cr_assert_eq(exthdr_of((const uint8_t[]){HOP, DST, RT, DST}, 4, 17),
		     SW_IEH_HOP | SW_IEH_DEST | SW_IEH_ROUTER, "destination options twice is fine");
	cr_assert_eq(exthdr_of((const uint8_t[]){DST, DST, DST}, 3, 17),
		     SW_IEH_DEST | SW_IEH_UNREP);
	cr_assert_eq(exthdr_of((const uint8_t[]){RT, HOP}, 2, 17),
		     SW_IEH_ROUTER | SW_IEH_HOP | SW_IEH_UNSEQ, "hop-by-hop only first");
	cr_assert_eq(exthdr_of((const uint8_t[]){FR, FR}, 2, 17), SW_IEH_FRAG | SW_IEH_UNREP);
	cr_assert_eq(exthdr_of((const uint8_t[]){AH, RT}, 2, 17),
		     SW_IEH_AUTH | SW_IEH_ROUTER | SW_IEH_UNSEQ);
	cr_assert_eq(exthdr_of((const uint8_t[]){AH}, 1, 50), SW_IEH_AUTH | SW_IEH_ESP);
	cr_assert_eq(exthdr_of((const uint8_t[]){HOP}, 1, 59), SW_IEH_HOP | SW_IEH_NONEXT);
	cr_assert_eq(exthdr_of(NULL, 0, 59), SW_IEH_NONEXT);
}

Test(sw_xmatch, ipv6_exthdr_and_flow_label_share_a_word, .init = setup, .fini = teardown)
{
	uint8_t f[256], g[256];
	uint32_t n = frame_ext(f, (const uint8_t[]){0, 60}, 2, 17);
	uint32_t m = frame_ext(g, NULL, 0, 17);
	f[15] = 0x0a, f[16] = 0xbc, f[17] = 0xde; /* flow label 0xabcde */
	g[15] = 0x0a, g[16] = 0xbc, g[17] = 0xde;
	/* "has hop-by-hop", masked, with the flow label exact */
	static const uint8_t hop[] = {ETH_IP6, 0x80, 0x00, 0x38, 0x04, 0x00, 0x0a, 0xbc, 0xde,
				      0x80, 0x00, 0x4f, 0x04, 0x00, 0x40, 0x00, 0x40};
	/* no extension header at all */
	static const uint8_t none[] = {ETH_IP6, 0x80, 0x00, 0x4e, 0x02, 0x00, 0x00};
	struct sw_flow *fh = add(hop, sizeof(hop), 20);
	struct sw_flow *fn = add(none, sizeof(none), 10);
	cr_assert_eq(look(f, n, 1), fh);
	cr_assert_eq(look(g, m, 1), fn);
	f[17] ^= 1;
	cr_assert_null(look(f, n, 1), "the flow label still counts");
}

Test(sw_xmatch, set_field_tunnel_and_pbb_decode_and_back)
{
	struct of_actions a = {0};
	uint8_t id[16] = {0, 0, 0, 1, 0, 0, 0, 7}; /* 0x100000007 */
	cr_assert(of_act_set_ipv6(&a, OF_OXM_TUNNEL_ID, id));
	cr_assert(of_act_set_field(&a, OF_OXM_PBB_ISID, 0xabcdef));
	cr_assert(of_act_output(&a, 2, 0));
	struct of_match m = {.fields = OF_MATCH_ETH_TYPE, .eth_type = 0x88e7};
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&m, 3, &ctx);
	struct sw_actions p;
	uint16_t et, ec;
	cr_assert_eq(sw_actions_decode(&a, &ctx, &p, &et, &ec), 0);
	cr_assert_eq(p.n, 4);
	cr_assert_eq(p.op[0].code, SW_OP_SET_TUNNEL_ID);
	cr_assert_eq(p.op[0].arg, 7);
	cr_assert_eq(p.op[1].code, SW_OP_CONT);
	cr_assert_eq(p.op[1].arg, 1);
	cr_assert_eq(p.op[2].code, SW_OP_SET_PBB_ISID);
	struct of_actions back;
	sw_actions_to_of(&p, &back);
	cr_assert_eq(back.n, 3);
	cr_assert_eq(back.a[0].field, OF_OXM_TUNNEL_ID);
	cr_assert_arr_eq(back.a[0].addr, id, 8);
	cr_assert_eq(back.a[1].field, OF_OXM_PBB_ISID);
	cr_assert_eq(back.a[1].value, 0xabcdef);
	/* on the wire: 8 and 3 bytes, padded to 16 each */
	uint8_t b[128];
	struct of_wbuf w = of_wbuf_init(b, sizeof(b));
	cr_assert_eq(of_actions_len(OF_VERSION_1_3, &back), 16 + 16 + 16);
	of_actions_put(&w, OF_VERSION_1_3, &back);
	static const uint8_t tun[] = {0, 25, 0, 16, 0x80, 0x00, 0x4c, 0x08, 0, 0, 0, 1, 0, 0, 0, 7};
	static const uint8_t isid[] = {0, 25, 0, 16, 0x80, 0x00, 0x4a, 0x03, 0xab, 0xcd, 0xef, 0,
				       0, 0, 0, 0};
	cr_assert_arr_eq(b, tun, 16);
	cr_assert_arr_eq(b + 16, isid, 16);
	/* tunnel_id has no prerequisite; pbb_isid needs PBB */
	m.eth_type = 0x0800;
	sw_act_ctx_of_match(&m, 3, &ctx);
	cr_assert_eq(sw_actions_decode(&a, &ctx, &p, &et, &ec), -1);
	cr_assert_eq(ec, OFPBAC_MATCH_INCONSISTENT);
	a.n = 1;
	cr_assert_eq(sw_actions_decode(&a, &ctx, &p, &et, &ec), 0);
}
