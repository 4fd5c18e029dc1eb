/*
 * tests/ofswitch/test_sw_classifier.c: ringflow-switch's flow key and classifier alone:
 * frames parsed into keys (and refused when shorter than their headers claim), priorities,
 * masks and overlaps, the exact-match cache answering as the scan does.
 */
#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 0xa}, mac_b[6] = {2, 0, 0, 0, 0, 0xb};

/* An Ethernet + IPv4 + UDP frame, ports sp -> dp; ip total length tot (0: correct). */
static uint32_t udp_frame(uint8_t *f, uint16_t sp, uint16_t dp, unsigned tot)
{
	memset(f, 0, 64);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	unsigned t = tot ? tot : 28;
	ip[2] = (uint8_t)(t >> 8);
	ip[3] = (uint8_t)t;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	ip[20] = (uint8_t)(sp >> 8), ip[21] = (uint8_t)sp;
	ip[22] = (uint8_t)(dp >> 8), ip[23] = (uint8_t)dp;
	return 14 + 28;
}

Test(sw_key, udp_fields)
{
	uint8_t f[64];
	struct sw_key k;
	uint32_t len = udp_frame(f, 1234, 53, 0);
	cr_assert_eq(sw_key_parse(f, len, 3, &k), 0);
	cr_assert_eq(k.in_port, 3);
	cr_assert_eq(memcmp(k.eth_dst, mac_b, 6), 0);
	cr_assert_eq(memcmp(k.eth_src, mac_a, 6), 0);
	cr_assert_eq(k.eth_type, 0x0800);
	cr_assert_eq(k.ip_proto, 17);
	cr_assert_eq(memcmp(&k.ip_src, "\x0a\x00\x00\x01", 4), 0);
	cr_assert_eq(k.tp_src, 1234);
	cr_assert_eq(k.tp_dst, 53);
	cr_assert_eq(k.vlan, 0);
}

Test(sw_key, vlan_tag)
{
	uint8_t f[80], g[64];
	uint32_t len = udp_frame(g, 1, 2, 0);
	memcpy(f, g, 12);
	memcpy(f + 12, "\x81\x00\x20\x64", 4); /* pcp 1, vid 100 */
	memcpy(f + 16, g + 12, len - 12);
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, len + 4, 1, &k), 0);
	cr_assert_eq(k.vlan, 0x1000 | 100);
	cr_assert_eq(k.eth_type, 0x0800);
	cr_assert_eq(k.tp_dst, 2);
}

Test(sw_key, short_frames_refused)
{
	uint8_t f[64] = {0};
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, 13, 1, &k), -1, "shorter than Ethernet");
	uint32_t len = udp_frame(f, 1, 2, 200); /* IP claims 200 bytes, 28 are there */
	cr_assert_eq(sw_key_parse(f, len, 1, &k), -1, "IPv4 total length past the frame");
	len = udp_frame(f, 1, 2, 0);
	cr_assert_eq(sw_key_parse(f, 14 + 19, 1, &k), -1, "IPv4 header cut");
	f[14] = 0x4f; /* IHL 60 bytes */
	cr_assert_eq(sw_key_parse(f, len, 1, &k), -1, "IHL past the total length");
	memcpy(f + 12, "\x81\x00", 2);
	cr_assert_eq(sw_key_parse(f, 16, 1, &k), -1, "VLAN tag cut");
}

/* A flow: in_port (0 = wildcard), eth_dst (NULL = wildcard), priority, tag in cookie. */
static struct sw_flow *flow(uint32_t in_port, const uint8_t *dst, uint16_t prio, uint64_t tag)
{
	struct sw_flow *f = aligned_alloc(RF_CACHE_LINE, sizeof(*f));
	cr_assert(f);
	memset(f, 0, sizeof(*f));
	if (in_port) {
		f->match.in_port = in_port;
		f->mask.in_port = 0xffffffffu;
	}
	if (dst) {
		memcpy(f->match.eth_dst, dst, 6);
		memset(f->mask.eth_dst, 0xff, 6);
	}
	f->priority = prio;
	f->cookie = tag;
	f->created_ns = tag;
	return f;
}

static struct sw_flow *chain(struct sw_flow **v, unsigned n)
{
	for (unsigned i = 0; i + 1 < n; i++)
		v[i]->next = v[i + 1];
	v[n - 1]->next = NULL;
	return v[0];
}

static uint64_t look(struct sw_table *t, uint32_t in_port, const uint8_t *dst)
{
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = in_port;
	memcpy(k.eth_dst, dst, 6);
	struct sw_flow *f = sw_table_lookup(t, &k);
	struct sw_flow *again = sw_table_lookup(t, &k); /* now from the EMC */
	cr_assert_eq(f, again, "EMC answer differs from the scan's");
	return f ? f->cookie : 0;
}

Test(sw_classifier, priorities_masks_overlap)
{
	rf_qsbr_register();
	struct sw_flow *v[4] = {
		flow(0, NULL, 0, 1),     /* table-miss */
		flow(1, NULL, 10, 2),    /* everything from port 1 */
		flow(1, mac_b, 20, 3),   /* port 1 to b: overlaps 2, wins */
		flow(0, mac_b, 5, 4),    /* anything to b: below 2 */
	};
	struct sw_table *t = sw_table_build(chain(v, 4), 4);
	cr_assert(t);
	cr_assert_eq(look(t, 1, mac_b), 3);
	cr_assert_eq(look(t, 1, mac_a), 2);
	cr_assert_eq(look(t, 2, mac_b), 4);
	cr_assert_eq(look(t, 2, mac_a), 1);
	sw_table_free(t);
	/* without the table-miss flow, a key nothing matches gets NULL (cached as such) */
	struct sw_table *u = sw_table_build(chain(v + 1, 3), 3);
	cr_assert_eq(look(u, 2, mac_a), 0);
	cr_assert_eq(look(u, 2, mac_b), 4);
	sw_table_free(u);
	/* equal priorities: the older flow (created first) wins, as the build sorts it first */
	struct sw_flow *w[2] = {flow(0, mac_b, 7, 9), flow(1, NULL, 7, 8)};
	struct sw_table *x = sw_table_build(chain(w, 2), 2);
	cr_assert_eq(look(x, 1, mac_b), 8);
	sw_table_free(x);
	for (unsigned i = 0; i < 4; i++)
		free(v[i]);
	free(w[0]);
	free(w[1]);
	rf_qsbr_unregister();
}
