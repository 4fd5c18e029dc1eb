/*
 * tests/ofswitch/test_sw_meter.c: meters (issue 25): the token buckets with an injected
 * clock (exact counts of passed and dropped frames for a rate, a burst and a frame
 * sequence; the expected counts are worked out in the comments from the bucket rule in
 * sw_meter.h), DSCP remark bytes and checksums, METER_MOD errors, the multiparts, and the
 * cascade: a deleted meter takes its flows with it.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "of_meter.h"
#include "sw.h"
#include "sw_meter.h"

#define MS 1000000ull /* ns */
#define T0 (1000 * MS) /* the meter's epoch: buckets are full then */

static struct sw_meters ms;

static void free_now(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static void fini(void)
{
	sw_meters_free(&ms);
}

TestSuite(sw_meter, .fini = fini);

static struct of_meter_config one_band(uint32_t id, uint16_t flags, uint16_t type, uint32_t rate,
				       uint32_t burst)
{
	struct of_meter_config c = {.command = OFPMC_ADD, .flags = flags, .meter_id = id,
				    .nbands = 1, .nbands_wire = 1};
	c.band[0].type = type;
	c.band[0].rate = rate;
	c.band[0].burst = burst;
	c.band[0].prec_level = 1;
	return c;
}

static struct sw_meter *add(const struct of_meter_config *c)
{
	cr_assert_eq(sw_meter_check(c), 0);
	cr_assert_eq(sw_meters_add(&ms, c, T0), 0);
	return sw_meters_find(&ms, c->meter_id);
}

/* n frames of len bytes at time t: how many passed. */
static unsigned send_frames(struct sw_meter *m, unsigned n, uint32_t len, uint64_t t)
{
	static uint8_t frame[2048]; /* zeros: not IP, a remark leaves it */
	unsigned pass = 0;
	for (unsigned i = 0; i < n; i++)
		pass += sw_meter_apply(m, frame, len, t) == 0;
	return pass;
}

static uint64_t band_pkts(const struct sw_meter *m, unsigned b)
{
	const struct sw_meter_cfg *c = atomic_load(&m->cfg);
	return atomic_load(&c->band[b].pkts);
}

Test(sw_meter, pktps_burst_then_refill)
{
	/* 1000 pkt/s, burst 10 packets: a frame costs 1 ms, the bucket holds 10 ms. */
	struct of_meter_config c = one_band(1, OFPMF_PKTPS | OFPMF_BURST, OFPMBT_DROP, 1000, 10);
	struct sw_meter *m = add(&c);
	/* 20 at once from a full bucket: 10 pass. */
	cr_assert_eq(send_frames(m, 20, 100, T0), 10);
	/* 5 ms later 5 tokens came back: 5 of 10 pass. */
	cr_assert_eq(send_frames(m, 10, 100, T0 + 5 * MS), 5);
	/* 100 ms later it is full again: 10 pass at once (tat = +110 ms) ... */
	cr_assert_eq(send_frames(m, 10, 100, T0 + 100 * MS), 10);
	/* ... then one frame every 0.5 ms (twice the rate) for 100 ms: the one at each whole
	 * millisecond from 101 to 200 passes (tat <= t + 9 ms), the others drop. */
	unsigned pass = 0;
	for (unsigned i = 1; i <= 200; i++)
		pass += send_frames(m, 1, 100, T0 + 100 * MS + i * MS / 2);
	cr_assert_eq(pass, 100);
	cr_assert_eq(band_pkts(m, 0), 10 + 5 + 100);
	cr_assert_eq(atomic_load(&m->pkts_in), 20 + 10 + 10 + 200);
	cr_assert_eq(atomic_load(&m->bytes_in), 100ull * (20 + 10 + 10 + 200));
}

Test(sw_meter, kbps_half_of_twice_the_rate)
{
	/* 1000 kbit/s, burst 12 kbit; 1500-byte frames (12 kbit, 12 ms each) every 6 ms. */
	struct of_meter_config c = one_band(2, OFPMF_KBPS | OFPMF_BURST, OFPMBT_DROP, 1000, 12);
	struct sw_meter *m = add(&c);
	cr_assert_eq(send_frames(m, 2, 1500, T0), 1); /* the full bucket passes one, then owes 12 ms */
	unsigned pass = 0;
	for (unsigned i = 1; i <= 100; i++) /* t = 6 .. 600 ms: each 12 ms one passes */
		pass += send_frames(m, 1, 1500, T0 + i * 6 * MS);
	cr_assert_eq(pass, 50);
	cr_assert_eq(atomic_load(&atomic_load(&m->cfg)->band[0].bytes), 1500ull * (1 + 50));
}

Test(sw_meter, a_full_bucket_passes_a_frame_larger_than_the_burst)
{
	/* burst 1 kbit, frames of 12 kbit: each passes when the bucket is full again. */
	struct of_meter_config c = one_band(3, OFPMF_KBPS | OFPMF_BURST, OFPMBT_DROP, 1000, 1);
	struct sw_meter *m = add(&c);
	cr_assert_eq(send_frames(m, 3, 1500, T0), 1);
	cr_assert_eq(send_frames(m, 1, 1500, T0 + 11 * MS), 0);
	cr_assert_eq(send_frames(m, 1, 1500, T0 + 12 * MS), 1);
}

Test(sw_meter, no_burst_flag_is_1s_of_rate)
{
	struct of_meter_config c = one_band(4, OFPMF_PKTPS, OFPMBT_DROP, 1000, 0);
	struct sw_meter *m = add(&c);
	cr_assert_eq(send_frames(m, 1500, 64, T0), 1000);
}

/* An IPv4 frame (optionally VLAN-tagged) with TOS tos and a valid header checksum. */
static uint32_t ipv4_frame(uint8_t *f, uint8_t tos, bool vlan)
{
	memset(f, 0, 128);
	uint32_t o = 12;
	if (vlan) {
		f[o] = 0x81, f[o + 1] = 0x00, f[o + 3] = 5;
		o += 4;
	}
	f[o] = 0x08, f[o + 1] = 0x00;
	uint8_t *ip = f + o + 2;
	ip[0] = 0x45, ip[1] = tos, ip[3] = 40, ip[8] = 64, ip[9] = 6;
	ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
	uint32_t s = 0;
	for (unsigned i = 0; i < 20; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	ip[10] = (uint8_t)(~s >> 8), ip[11] = (uint8_t)~s;
	return o + 2 + 40;
}

static bool ipv4_csum_ok(const uint8_t *ip)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < 20; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

Test(sw_meter, remark_raises_drop_precedence_with_checksum)
{
	uint8_t f[128];
	static const struct { uint8_t dscp, prec, want; } v[] = {
		{18, 1, 20}, /* AF21 -> AF22 (the suite's case) */
		{18, 2, 22}, /* -> AF23 */
		{18, 3, 22}, /* capped at drop precedence 3 */
		{22, 1, 22},
		{0, 1, 2},   /* best effort: the bits are raised as for any class */
		{46, 0, 46}, /* EF, prec 0: unchanged */
	};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (int tag = 0; tag < 2; tag++) {
			uint32_t len = ipv4_frame(f, (uint8_t)(v[i].dscp << 2 | 1), tag);
			const uint8_t *ip = f + (tag ? 18 : 14);
			cr_assert_eq(sw_meter_remark(f, len, v[i].prec), 0);
			cr_assert_eq(ip[1], v[i].want << 2 | 1, "dscp %u prec %u: tos %u", v[i].dscp,
				     v[i].prec, ip[1]); /* ECN kept */
			cr_assert(ipv4_csum_ok(ip));
		}
	}
	/* IPv6: traffic class 72 (dscp 18) -> 80, flow label bits kept. */
	memset(f, 0, sizeof(f));
	f[12] = 0x86, f[13] = 0xdd;
	f[14] = 0x64, f[15] = 0x8a, f[16] = 0xbc, f[17] = 0xde; /* tc 0x48, label 0xabcde */
	cr_assert_eq(sw_meter_remark(f, 14 + 40, 1), 0);
	cr_assert_eq(f[14], 0x65);
	cr_assert_eq(f[15], 0x0a);
	cr_assert_eq(f[16], 0xbc);
	/* ARP: not IP, unchanged. */
	memset(f, 0, sizeof(f));
	f[12] = 0x08, f[13] = 0x06;
	cr_assert_eq(sw_meter_remark(f, 60, 1), -1);
	cr_assert_eq(f[14], 0);
}

Test(sw_meter, highest_exceeded_band_applies)
{
	/* drop at 1000 pkt/s and remark at 500 pkt/s, both 1 s of burst: of 3000 frames at
	 * once, 0..499 fit both, 500..999 exceed only the remark band (remarked, passed),
	 * 1000..2999 exceed both and the drop band (the higher rate) drops them. */
	struct of_meter_config c = one_band(5, OFPMF_PKTPS, OFPMBT_DROP, 1000, 0);
	c.band[1] = c.band[0];
	c.band[1].type = OFPMBT_DSCP_REMARK;
	c.band[1].rate = 500;
	c.band[1].prec_level = 1;
	c.nbands = c.nbands_wire = 2;
	struct sw_meter *m = add(&c);
	unsigned pass = 0, remarked = 0;
	for (unsigned i = 0; i < 3000; i++) {
		uint8_t f[128];
		uint32_t len = ipv4_frame(f, 18 << 2, false);
		if (sw_meter_apply(m, f, len, T0) == 0) {
			pass++;
			remarked += f[15] == 20 << 2;
			cr_assert_eq(f[15], i < 500 ? 18 << 2 : 20 << 2, "frame %u", i);
		}
	}
	cr_assert_eq(pass, 1000);
	cr_assert_eq(remarked, 500);
	cr_assert_eq(band_pkts(m, 0), 2000);
	cr_assert_eq(band_pkts(m, 1), 500);
}

/* ---- METER_MOD through the parser and the agent's handler ---- */

struct sink {
	uint8_t msg[4][4096];
	size_t len[4];
	unsigned n;
};

static void sink_send(void *ctx, const uint8_t *b, size_t n)
{
	struct sink *s = ctx;
	cr_assert_lt(s->n, 4);
	cr_assert_leq(n, sizeof(s->msg[0]));
	memcpy(s->msg[s->n], b, n);
	s->len[s->n++] = n;
}

static struct sink sink;
static uint8_t wbuf[65536];
static const struct sw_meter_io io = {sink_send, free_now, &sink, wbuf, sizeof(wbuf)};

/* Builds c as METER_MOD, parses it, hands it to the agent's handler: its return, and the
 * error code when it failed. */
static int mod(const struct of_meter_config *c, const struct sw_flow *flows, uint16_t *code)
{
	uint8_t b[1024];
	ssize_t n = of_build_meter_mod(b, sizeof(b), 7, c);
	cr_assert_gt(n, 0);
	struct of_mmsg m;
	struct of_fault f;
	cr_assert_eq(of_mparse(b, (size_t)n, &m, &f), 0);
	cr_assert_eq(m.type, OF_M_METER_MOD);
	uint16_t et = 0, ec = 0;
	int rc = sw_meter_handle(&ms, &m, flows, T0, &io, &et, &ec);
	if (rc < 0)
		cr_assert_eq(et, OFPET_METER_MOD_FAILED);
	*code = ec;
	return rc;
}

static uint16_t mod_err(const struct of_meter_config *c)
{
	uint16_t code;
	cr_assert_eq(mod(c, NULL, &code), -1, "meter %u flags %#x", c->meter_id, c->flags);
	return code;
}

Test(sw_meter, meter_mod_errors)
{
	uint16_t code;
	struct of_meter_config c = one_band(1, OFPMF_KBPS, OFPMBT_DROP, 1000, 0);
	cr_assert_eq(mod(&c, NULL, &code), 0);
	cr_assert_eq(mod_err(&c), OFPMMFC_METER_EXISTS);
	struct of_meter_config x = c;
	x.command = OFPMC_MODIFY, x.meter_id = 2;
	cr_assert_eq(mod_err(&x), OFPMMFC_UNKNOWN_METER);
	x = c, x.meter_id = 0;
	cr_assert_eq(mod_err(&x), OFPMMFC_INVALID_METER);
	x = c, x.meter_id = OFPM_CONTROLLER;
	cr_assert_eq(mod_err(&x), OFPMMFC_INVALID_METER);
	x = c, x.meter_id = OFPM_ALL;
	cr_assert_eq(mod_err(&x), OFPMMFC_INVALID_METER);
	x = c, x.command = 3, x.meter_id = 9;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_COMMAND);
	x = c, x.meter_id = 9, x.flags = OFPMF_KBPS | OFPMF_PKTPS;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_FLAGS);
	x.flags = 0x10;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_FLAGS);
	x = c, x.meter_id = 9, x.band[0].rate = 0;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_RATE);
	x = c, x.meter_id = 9, x.flags |= OFPMF_BURST;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_BURST);
	x = c, x.meter_id = 9, x.band[0].type = 3;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_BAND);
	x.band[0].type = OFPMBT_EXPERIMENTER;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_BAND);
	x = c, x.meter_id = 9, x.band[0].type = OFPMBT_DSCP_REMARK, x.band[0].prec_level = 4;
	cr_assert_eq(mod_err(&x), OFPMMFC_BAD_BAND_VALUE);
	x = c, x.meter_id = 9, x.nbands = x.nbands_wire = SW_METER_MAX_BANDS + 1;
	for (unsigned i = 0; i < x.nbands; i++)
		x.band[i] = c.band[0];
	cr_assert_eq(mod_err(&x), OFPMMFC_OUT_OF_BANDS);
	/* The table holds SW_MAX_METERS. */
	for (uint32_t id = 2; id <= SW_MAX_METERS; id++) {
		x = c, x.meter_id = id;
		cr_assert_eq(mod(&x, NULL, &code), 0);
	}
	x = c, x.meter_id = SW_MAX_METERS + 1;
	cr_assert_eq(mod_err(&x), OFPMMFC_OUT_OF_METERS);
	/* DELETE of an absent meter is no error; of a present one says "flows to remove". */
	x = c, x.command = OFPMC_DELETE, x.meter_id = SW_MAX_METERS + 5;
	cr_assert_eq(mod(&x, NULL, &code), 0);
	x.meter_id = 1;
	cr_assert_eq(mod(&x, NULL, &code), 1);
	sw_meters_reap(&ms, free_now, NULL);
	cr_assert_null(sw_meters_find(&ms, 1));
	x.meter_id = OFPM_ALL;
	cr_assert_eq(mod(&x, NULL, &code), 1);
	sw_meters_reap(&ms, free_now, NULL);
	cr_assert_eq(ms.n, 0);
}

Test(sw_meter, parser_checks_lengths)
{
	struct of_meter_config c = one_band(1, OFPMF_KBPS, OFPMBT_DSCP_REMARK, 1000, 0);
	uint8_t b[64];
	ssize_t n = of_build_meter_mod(b, sizeof(b), 7, &c);
	cr_assert_eq(n, 32);
	struct of_mmsg m;
	struct of_fault f;
	cr_assert_eq(of_mparse(b, (size_t)n, &m, &f), 0);
	cr_assert_eq(m.u.mod.band[0].prec_level, 1);
	cr_assert_eq(m.u.mod.band[0].rate, 1000);
	b[16 + 3] = 8; /* band length 8 */
	cr_assert_eq(of_mparse(b, (size_t)n, &m, &f), -EBADMSG);
	cr_assert_eq(f.type, OFPET_BAD_REQUEST);
	cr_assert_eq(f.code, OFPBRC_BAD_LEN);
	b[16 + 3] = 32; /* past the message */
	cr_assert_eq(of_mparse(b, (size_t)n, &m, &f), -EBADMSG);
	b[16 + 3] = 16;
	cr_assert_eq(of_mparse(b, (size_t)n - 4, &m, &f), -EBADMSG); /* truncated band */
	cr_assert_eq(of_mparse(b, 12, &m, &f), -EBADMSG);             /* truncated header */
	b[1] = 14; /* FLOW_MOD: not ours */
	cr_assert_eq(of_mparse(b, (size_t)n, &m, &f), -ENOENT);
}

/* A flow whose program names meter m. */
static struct sw_flow *flow(struct sw_meter *m, struct sw_flow *next)
{
	struct sw_flow *f = sw_flow_alloc(1);
	struct sw_actions *a = calloc(1, sizeof(*a));
	cr_assert(f && a);
	a->meter = m;
	a->meter_id = m ? m->id : 0;
	atomic_init(&f->actions, a);
	f->next = next;
	return f;
}

static void drop_flow(void *ctx, struct sw_flow *f)
{
	struct sw_flow **list = ctx, **pp = list;
	while (*pp != f)
		pp = &(*pp)->next;
	*pp = f->next;
	free(atomic_load(&f->actions));
	free(f);
}

Test(sw_meter, stats_config_features_and_delete_cascade)
{
	uint16_t code;
	struct of_meter_config c1 = one_band(1, OFPMF_PKTPS | OFPMF_BURST, OFPMBT_DROP, 1000, 10);
	struct of_meter_config c2 = one_band(2, OFPMF_KBPS, OFPMBT_DSCP_REMARK, 5000, 0);
	cr_assert_eq(mod(&c2, NULL, &code), 0);
	cr_assert_eq(mod(&c1, NULL, &code), 0);
	struct sw_meter *m1 = sw_meters_find(&ms, 1), *m2 = sw_meters_find(&ms, 2);
	cr_assert_eq(send_frames(m1, 20, 100, T0), 10);
	/* flows: two on meter 1, one on meter 2, one without a meter */
	struct sw_flow *list = flow(m1, flow(m2, flow(NULL, flow(m1, NULL))));

	/* METER stats for all: ascending ids, flow counts, band counts. */
	uint8_t req[64];
	struct of_mmsg m;
	struct of_fault f;
	uint16_t et, ec;
	ssize_t n = of_build_meter_request(req, sizeof(req), 9, OFPMP13_METER, OFPM_ALL);
	cr_assert_eq(of_mparse(req, (size_t)n, &m, &f), 0);
	sink.n = 0;
	cr_assert_eq(sw_meter_handle(&ms, &m, list, T0 + 1500 * MS, &io, &et, &ec), 0);
	cr_assert_eq(sink.n, 1);
	struct of_mmsg r;
	cr_assert_eq(of_mparse(sink.msg[0], sink.len[0], &r, &f), 0);
	cr_assert_eq(r.type, OF_M_STATS_REPLY);
	unsigned cur = 0;
	struct of_meter_stats s;
	cr_assert_eq(of_meter_stats_next(&r, &cur, &s), 1);
	cr_assert_eq(s.meter_id, 1);
	cr_assert_eq(s.flow_count, 2);
	cr_assert_eq(s.packet_in_count, 20);
	cr_assert_eq(s.byte_in_count, 2000);
	cr_assert_eq(s.duration_sec, 1);
	cr_assert_eq(s.duration_nsec, 500000000u);
	cr_assert_eq(s.nbands, 1);
	cr_assert_eq(s.band[0].packets, 10);
	cr_assert_eq(s.band[0].bytes, 1000);
	cr_assert_eq(of_meter_stats_next(&r, &cur, &s), 1);
	cr_assert_eq(s.meter_id, 2);
	cr_assert_eq(s.flow_count, 1);
	cr_assert_eq(of_meter_stats_next(&r, &cur, &s), 0);

	/* METER_CONFIG of meter 2: what was sent, as sent. */
	n = of_build_meter_request(req, sizeof(req), 10, OFPMP13_METER_CONFIG, 2);
	cr_assert_eq(of_mparse(req, (size_t)n, &m, &f), 0);
	sink.n = 0;
	cr_assert_eq(sw_meter_handle(&ms, &m, list, T0, &io, &et, &ec), 0);
	cr_assert_eq(of_mparse(sink.msg[0], sink.len[0], &r, &f), 0);
	struct of_meter_config got;
	cur = 0;
	cr_assert_eq(of_meter_config_next(&r, &cur, &got), 1);
	cr_assert_eq(got.meter_id, 2);
	cr_assert_eq(got.flags, OFPMF_KBPS);
	cr_assert_eq(got.nbands, 1);
	cr_assert_eq(got.band[0].type, OFPMBT_DSCP_REMARK);
	cr_assert_eq(got.band[0].rate, 5000);
	cr_assert_eq(got.band[0].prec_level, 1);
	cr_assert_eq(of_meter_config_next(&r, &cur, &got), 0);

	/* FEATURES */
	n = of_build_meter_request(req, sizeof(req), 11, OFPMP13_METER_FEATURES, 0);
	cr_assert_eq(of_mparse(req, (size_t)n, &m, &f), 0);
	sink.n = 0;
	cr_assert_eq(sw_meter_handle(&ms, &m, list, T0, &io, &et, &ec), 0);
	cr_assert_eq(of_mparse(sink.msg[0], sink.len[0], &r, &f), 0);
	cr_assert_eq(r.type, OF_M_FEATURES_REPLY);
	cr_assert_eq(r.u.features.max_meter, SW_MAX_METERS);
	cr_assert_eq(r.u.features.max_bands, SW_METER_MAX_BANDS);
	cr_assert_eq(r.u.features.band_types, 0x6);

	/* DELETE meter 1: its two flows go, the others stay; then the meter. */
	struct of_meter_config d = {.command = OFPMC_DELETE, .meter_id = 1};
	cr_assert_eq(mod(&d, list, &code), 1);
	sw_meter_cascade(&list, drop_flow, &list);
	sw_meters_reap(&ms, free_now, NULL);
	unsigned left = 0;
	for (struct sw_flow *g = list; g; g = g->next) {
		cr_assert_neq(atomic_load(&g->actions)->meter, m1);
		left++;
	}
	cr_assert_eq(left, 2);
	cr_assert_null(sw_meters_find(&ms, 1));
	cr_assert_eq(sw_meters_find(&ms, 2), m2);
	while (list)
		drop_flow(&list, list);
}
