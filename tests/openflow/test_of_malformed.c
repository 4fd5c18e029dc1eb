/*
 * tests/openflow/test_of_malformed.c: hostile input. Every lying length, truncation, unknown
 * type and oversized message gets the ERROR type/code the spec names and the right close
 * decision, and nothing is read past the bytes received (every parse runs on an exact-size
 * heap copy, so the ASan build catches an over-read).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of.h"
#include "openflow/of_samples.h"

static void set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Parses buf[0..n) (its header length set to n) from an exact heap copy; expects a fault. */
static void expect(const uint8_t *buf, size_t n, uint16_t type, uint16_t code, bool close)
{
	uint8_t *c = malloc(n);
	memcpy(c, buf, n);
	if (n >= 4)
		set16(c + 2, (uint16_t)n);
	struct of_msg m;
	struct of_fault f;
	int rc = of_parse(c, n, &m, &f);
	cr_assert_eq(rc, -EBADMSG, "accepted a bad message (type %u)", buf[1]);
	cr_assert_eq(f.type, type, "%s: type %u, want %u", f.why, f.type, type);
	cr_assert_eq(f.code, code, "%s: code %u, want %u", f.why, f.code, code);
	cr_assert_eq(f.close, close, "%s", f.why);
	cr_assert_not_null(f.why);
	free(c);
}

/* ---- framing ---- */

Test(of_malformed, frame_needs_a_header_then_the_whole_message)
{
	uint8_t b[16] = {0x04, 0x02, 0x00, 0x10};
	struct of_framer fr = {.version = 0};
	struct of_frame f;
	for (size_t n = 0; n < 8; n++) {
		of_frame(&fr, b, n, &f);
		cr_assert_eq(f.kind, OF_FRAME_NEED_MORE);
		cr_assert_eq(f.len, 8);
	}
	of_frame(&fr, b, 15, &f);
	cr_assert_eq(f.kind, OF_FRAME_NEED_MORE);
	cr_assert_eq(f.len, 16);
	of_frame(&fr, b, 16, &f);
	cr_assert_eq(f.kind, OF_FRAME_MSG);
	cr_assert_eq(f.len, 16);
}

Test(of_malformed, frame_header_length_below_8_closes)
{
	for (uint16_t len = 0; len < 8; len++) {
		uint8_t b[8] = {0x04, 0x02, (uint8_t)(len >> 8), (uint8_t)len};
		struct of_frame f;
		of_frame(&(struct of_framer){.version = 4}, b, 8, &f);
		cr_assert_eq(f.kind, OF_FRAME_BAD);
		cr_assert_eq(f.fault.type, OFPET_BAD_REQUEST);
		cr_assert_eq(f.fault.code, OFPBRC_BAD_LEN);
		cr_assert(f.fault.close);
	}
}

Test(of_malformed, frame_over_configured_max_closes_before_buffering_it)
{
	uint8_t b[8] = {0x04, 0x0a, 0x40, 0x01}; /* claims 16385 bytes, only 8 here */
	struct of_framer fr = {.version = 4, .max_len = 16384};
	struct of_frame f;
	of_frame(&fr, b, 8, &f);
	cr_assert_eq(f.kind, OF_FRAME_BAD);
	cr_assert_eq(f.fault.code, OFPBRC_BAD_LEN);
	cr_assert(f.fault.close);
	fr.max_len = 0; /* default: the 16-bit maximum; then it is just incomplete */
	of_frame(&fr, b, 8, &f);
	cr_assert_eq(f.kind, OF_FRAME_NEED_MORE);
	cr_assert_eq(f.len, 16385);
}

Test(of_malformed, frame_version_mismatch_is_skipped_not_closed)
{
	uint8_t b[8] = {0x01, 0x02, 0x00, 0x08};
	struct of_frame f;
	of_frame(&(struct of_framer){.version = 4}, b, 8, &f);
	cr_assert_eq(f.kind, OF_FRAME_BAD);
	cr_assert_eq(f.fault.type, OFPET_BAD_REQUEST);
	cr_assert_eq(f.fault.code, OFPBRC_BAD_VERSION);
	cr_assert_not(f.fault.close);
	cr_assert_eq(f.len, 8);
	of_frame(&(struct of_framer){.version = 0}, b, 8, &f); /* before HELLO: any version */
	cr_assert_eq(f.kind, OF_FRAME_MSG);
}

Test(of_malformed, parse_buffer_must_match_header_length)
{
	uint8_t b[12] = {0x04, 0x02, 0x00, 0x0c};
	struct of_msg m;
	struct of_fault f;
	cr_assert_eq(of_parse(b, 11, &m, &f), -EBADMSG);
	cr_assert_eq(of_parse(b, 7, &m, &f), -EBADMSG);
	cr_assert_eq(f.code, OFPBRC_BAD_LEN);
	cr_assert_eq(of_parse(b, 12, &m, &f), 0);
}

/* ---- header-level ---- */

Test(of_malformed, unknown_type_and_version)
{
	uint8_t b[8] = {0x04, 99};
	expect(b, 8, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, false);
	b[1] = 4; /* EXPERIMENTER: not modelled */
	expect(b, 8, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, false);
	b[0] = 0x01;
	b[1] = 20; /* 1.0 has types up to 21, 1.3's BARRIER_REQUEST number is QUEUE_GET_CONFIG */
	expect(b, 8, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, false);
	b[0] = 0x02;
	b[1] = 2;
	expect(b, 8, OFPET_BAD_REQUEST, OFPBRC_BAD_VERSION, false);
}

Test(of_malformed, header_only_messages_with_a_body)
{
	uint8_t b[12] = {0x04, 5}; /* FEATURES_REQUEST */
	expect(b, 12, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	b[1] = 20; /* BARRIER_REQUEST */
	expect(b, 9, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	b[1] = 9; /* SET_CONFIG of 11 bytes */
	expect(b, 11, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	b[1] = 1; /* ERROR without type/code */
	expect(b, 10, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
}

/* ---- HELLO and negotiation ---- */

Test(of_malformed, hello_element_lying_length_fails_the_hello)
{
	uint8_t b[16] = {0x04, 0x00, 0x00, 0x10, 0, 0, 0, 1, 0x00, 0x01, 0x00, 0x20};
	expect(b, 16, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true);
	b[11] = 0x02; /* element length 2 < 4 */
	expect(b, 16, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true);
	b[11] = 0x07; /* bitmap of 3 bytes */
	expect(b, 16, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true);
	expect(b, 10, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true); /* 2-byte element header */
}

Test(of_malformed, negotiation_picks_highest_common_or_fails)
{
	struct of_msg h = {.type = OF_HELLO, .version = 0x06};
	h.u.hello.has_bitmap = true;
	h.u.hello.bitmap = (1u << 1) | (1u << 4) | (1u << 6);
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), OF_VERSION_1_3);
	h.u.hello.bitmap = 1u << 1;
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), OF_VERSION_1_0);
	h.u.hello.bitmap = (1u << 2) | (1u << 3);
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), -EPROTO);
	h.u.hello.has_bitmap = false; /* no bitmap: min(ours, theirs) must be ours */
	h.version = 0x01;
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), OF_VERSION_1_0);
	h.version = 0x05;
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), OF_VERSION_1_3);
	h.version = 0x02;
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &h), -EPROTO);
}

Test(of_malformed, hello_10_body_is_ignored_and_13_unknown_elements_skipped)
{
	uint8_t b[24] = {0x01, 0x00, 0x00, 0x18, 0, 0, 0, 1, 0xde, 0xad};
	struct of_msg m;
	struct of_fault f;
	cr_assert_eq(of_parse(b, 24, &m, &f), 0);
	cr_assert_not(m.u.hello.has_bitmap);
	/* 1.3: an unknown element of 5 bytes (+3 padding), then the bitmap, no final padding. */
	uint8_t c[24] = {0x04, 0x00, 0x00, 0x18, 0, 0, 0, 1, 0x00, 0x09, 0x00, 0x05, 0xaa, 0, 0, 0,
			 0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x10};
	cr_assert_eq(of_parse(c, 24, &m, &f), 0, "%s", f.why);
	cr_assert(m.u.hello.has_bitmap);
	cr_assert_eq(of_negotiate(OF_VERSIONS_SUPPORTED, &m), OF_VERSION_1_3);
}

/* ---- matches (1.3 OXM) in a PACKET_IN ---- */

/* A 1.3 PACKET_IN whose match starts at offset 24; returns the message length. */
static size_t packet_in_with_match(uint8_t *b, const uint8_t *match, size_t mlen, size_t tail)
{
	memset(b, 0, 24);
	b[0] = 0x04;
	b[1] = 10;
	memset(b + 8, 0xff, 4);
	memcpy(b + 24, match, mlen);
	memset(b + 24 + mlen, 0, tail);
	return 24 + mlen + tail;
}

Test(of_malformed, match_lengths_that_lie)
{
	uint8_t b[128];
	/* match length 0x100, far past the message */
	static const uint8_t m1[] = {0x00, 0x01, 0x01, 0x00, 0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1};
	expect(b, packet_in_with_match(b, m1, sizeof(m1), 6), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	/* match length 2 < 4 */
	static const uint8_t m2[] = {0x00, 0x01, 0x00, 0x02, 0, 0, 0, 0};
	expect(b, packet_in_with_match(b, m2, sizeof(m2), 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	/* match length 12 but padding (to 16) missing */
	static const uint8_t m3[] = {0x00, 0x01, 0x00, 0x0c, 0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1};
	expect(b, packet_in_with_match(b, m3, sizeof(m3), 0), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	/* TLV claims 8 bytes of payload inside a 12-byte match */
	static const uint8_t m4[] = {0x00, 0x01, 0x00, 0x0c, 0x80, 0x00, 0x00, 0x08, 0, 0, 0, 1,
				     0, 0, 0, 0};
	expect(b, packet_in_with_match(b, m4, sizeof(m4), 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	/* 2 stray bytes after the last TLV: a truncated TLV header */
	static const uint8_t m5[] = {0x00, 0x01, 0x00, 0x06, 0x80, 0x00, 0, 0};
	expect(b, packet_in_with_match(b, m5, sizeof(m5), 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	/* match fits but the 2 pad bytes before the frame do not */
	static const uint8_t m6[] = {0x00, 0x01, 0x00, 0x04, 0, 0, 0, 0};
	expect(b, packet_in_with_match(b, m6, sizeof(m6), 1), OFPET_BAD_REQUEST, OFPBRC_BAD_LEN,
	       false);
	/* message too short for the fixed part */
	expect(b, 20, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	expect(b, 26, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* 2 bytes of match */
}

Test(of_malformed, match_fields_wrong)
{
	uint8_t b[128];
	static const uint8_t type0[] = {0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0};
	expect(b, packet_in_with_match(b, type0, 8, 2), OFPET_BAD_MATCH, OFPBMC_BAD_TYPE, false);
	static const uint8_t short_port[] = {0x00, 0x01, 0x00, 0x0b, 0x80, 0x00, 0x00, 0x03,
					     0, 0, 1, 0, 0, 0, 0, 0};
	expect(b, packet_in_with_match(b, short_port, 16, 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN,
	       false);
	static const uint8_t masked_port[] = {0x00, 0x01, 0x00, 0x10, 0x80, 0x00, 0x01, 0x08,
					      0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};
	expect(b, packet_in_with_match(b, masked_port, 16, 2), OFPET_BAD_MATCH, OFPBMC_BAD_MASK,
	       false);
	static const uint8_t dup[] = {0x00, 0x01, 0x00, 0x0c, 0x80, 0x00, 0x0a, 0x02, 0x08, 0x00,
				      0x80, 0x00, 0x0a, 0x02, 0x08, 0x06};
	/* len 12 would cut the second TLV: make the match 16 long, no padding needed */
	uint8_t d[16];
	memcpy(d, dup, 16);
	d[3] = 0x10;
	expect(b, packet_in_with_match(b, d, 16, 2), OFPET_BAD_MATCH, OFPBMC_DUP_FIELD, false);
	static const uint8_t eth6[] = {0x00, 0x01, 0x00, 0x0b, 0x80, 0x00, 0x06, 0x07,
				       1, 2, 3, 4, 5, 6, 7, 0};
	expect(b, packet_in_with_match(b, eth6, 16, 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
	static const uint8_t exp[] = {0x00, 0x01, 0x00, 0x06, 0xff, 0xff, 0x00, 0x02,
				      0, 0, 0, 0, 0, 0, 0, 0};
	uint8_t e[16];
	memcpy(e, exp, 16);
	e[3] = 0x0a;
	expect(b, packet_in_with_match(b, e, 16, 2), OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
}

Test(of_malformed, unmodelled_match_fields_are_skipped_and_counted)
{
	/* in_port=1, then an OXM field this module does not know (100) and an NXM field of
	 * class 0x0001. */
	static const uint8_t mt[] = {0x00, 0x01, 0x00, 0x1c, 0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1,
				     0x80, 0x00, 0xc8, 0x04, 0, 0, 0, 1,
				     0x00, 0x01, 0x00, 0x04, 0, 0, 0, 7, 0, 0, 0, 0};
	uint8_t b[128];
	size_t n = packet_in_with_match(b, mt, sizeof(mt), 2 + 14);
	set16(b + 2, (uint16_t)n);
	struct of_msg m;
	struct of_fault f;
	cr_assert_eq(of_parse(b, n, &m, &f), 0, "%s", f.why);
	cr_assert_eq(m.u.packet_in.match.fields, OF_MATCH_IN_PORT);
	cr_assert_eq(m.u.packet_in.match.n_other, 2);
	cr_assert_eq(m.u.packet_in.data_len, 14);
}

/* ---- actions and instructions ---- */

Test(of_malformed, packet_out_action_lengths)
{
	uint8_t b[64] = {0x04, 13};
	/* actions_len 32 but only 16 bytes follow */
	set16(b + 16, 32);
	b[18 + 6 + 3] = 16;
	expect(b, 40, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	/* one action of length 0 */
	memset(b + 8, 0, 56);
	set16(b + 16, 16);
	expect(b, 40, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	/* length 12: not a multiple of 8 */
	set16(b + 26, 12);
	expect(b, 40, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	/* action claims 24 bytes in a 16-byte list */
	set16(b + 26, 24);
	expect(b, 40, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	/* OUTPUT of length 8 in 1.3 (16 is the size) */
	set16(b + 16, 8);
	set16(b + 26, 8);
	expect(b, 32, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	/* truncated action header: actions_len 2 */
	set16(b + 16, 2);
	expect(b, 26, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	/* 1.0: fixed part is 16 */
	uint8_t c[16] = {0x01, 13};
	expect(c, 15, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	set16(c + 14, 8); /* actions_len 8, no bytes */
	expect(c, 16, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
}

Test(of_malformed, flow_mod_instruction_lengths)
{
	uint8_t b[128];
	ssize_t n = of_build_table_miss(b, sizeof(b), 1); /* instruction at 56, action at 64 */
	cr_assert_eq(n, 80);
	set16(b + 58, 32); /* APPLY_ACTIONS claims 32 of the 24 bytes left */
	expect(b, 80, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, false);
	set16(b + 58, 4);
	expect(b, 80, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, false);
	set16(b + 58, 24);
	set16(b + 66, 32); /* the OUTPUT inside claims more than the instruction */
	expect(b, 80, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, false);
	expect(b, 60, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, false); /* cut inside it */
	expect(b, 47, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	uint8_t c[72] = {0x01, 14};
	expect(c, 71, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
}

/* ---- arrays ---- */

Test(of_malformed, port_arrays_not_whole)
{
	uint8_t b[200] = {0x01, 6};
	expect(b, 32 + 47, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* 1.0 features */
	expect(b, 31, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	b[0] = 0x04;
	expect(b, 33, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* 1.3 features is 32 */
	uint8_t mp[200] = {0x04, 19, 0, 0, 0, 0, 0, 0, 0x00, 13};
	expect(mp, 16 + 63, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* port desc */
	mp[9] = 4;
	expect(mp, 16 + 113, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* port stats */
	mp[9] = 99;
	expect(mp, 16, OFPET_BAD_REQUEST, OFPBRC_BAD_MULTIPART, false);
	uint8_t mp10[16] = {0x01, 17, 0, 0, 0, 0, 0, 0, 0x00, 13};
	expect(mp10, 12, OFPET_BAD_REQUEST, OFPBRC_BAD_MULTIPART, false); /* no PORT_DESC in 1.0 */
	uint8_t ps[20] = {0x04, 8 + 10, 0, 0, 0, 0, 0, 0, 0x00, 4};
	expect(ps, 20, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* port stats request of 4 */
	uint8_t pd[20] = {0x04, 18, 0, 0, 0, 0, 0, 0, 0x00, 13};
	expect(pd, 20, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* port desc request with body */
	uint8_t st[12] = {0x04, 5};
	expect(st, 8 + 4, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	uint8_t ps2[72] = {0x04, 12};
	expect(ps2, 72, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* PORT_STATUS */
}

Test(of_malformed, flow_stats_entry_lengths)
{
	uint8_t b[512];
	struct of_msg s[OF_SAMPLES_MAX];
	size_t n = of_samples(OF_VERSION_1_3, s, OF_SAMPLES_MAX);
	const struct of_msg *fs = NULL;
	for (size_t i = 0; i < n; i++)
		if (s[i].type == OF_MULTIPART_REPLY && s[i].u.mp_reply.mp_type == OF_MP_FLOW)
			fs = &s[i];
	cr_assert_not_null(fs);
	ssize_t len = of_serialize(fs, b, sizeof(b));
	cr_assert_gt(len, 16 + 56);
	uint16_t first = of_get16(b + 16);
	set16(b + 16, 0); /* entry length 0 */
	expect(b, (size_t)len, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	set16(b + 16, (uint16_t)(len - 16 + 8)); /* past the reply */
	expect(b, (size_t)len, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false);
	set16(b + 16, first);
	expect(b, (size_t)len - 1, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false); /* last cut short */
	/* match length inside the entry lying: match at entry offset 48 */
	set16(b + 16 + 48 + 2, 0x200);
	expect(b, (size_t)len, OFPET_BAD_MATCH, OFPBMC_BAD_LEN, false);
}

/* ---- sweeps ---- */

/* Every sample cut at every length (header patched to say so) is parsed without reading
 * past the cut; what parses must re-serialize to a message that parses again. */
static void truncation_sweep(uint8_t version)
{
	struct of_msg s[OF_SAMPLES_MAX];
	size_t n = of_samples(version, s, OF_SAMPLES_MAX);
	uint8_t full[2048], again[2048];
	unsigned rejected = 0;
	for (size_t i = 0; i < n; i++) {
		ssize_t len = of_serialize(&s[i], full, sizeof(full));
		cr_assert_gt(len, 0);
		for (size_t k = 8; k < (size_t)len; k++) {
			uint8_t *c = malloc(k);
			memcpy(c, full, k);
			set16(c + 2, (uint16_t)k);
			struct of_msg m;
			struct of_fault f;
			int rc = of_parse(c, k, &m, &f);
			if (rc == 0) {
				ssize_t r = of_serialize(&m, again, sizeof(again));
				cr_assert(r > 0 || r == -EINVAL);
			} else {
				cr_assert_eq(rc, -EBADMSG);
				cr_assert_neq(f.why, NULL);
				rejected++;
			}
			free(c);
		}
	}
	cr_assert_gt(rejected, 100);
}

Test(of_malformed, every_truncation_v13)
{
	truncation_sweep(OF_VERSION_1_3);
}

Test(of_malformed, every_truncation_v10)
{
	truncation_sweep(OF_VERSION_1_0);
}

Test(of_malformed, error_reply_carries_xid_and_64_bytes)
{
	uint8_t bad[100] = {0x04, 99, 0, 100, 0xde, 0xad, 0xbe, 0xef};
	struct of_fault f = {.type = OFPET_BAD_REQUEST, .code = OFPBRC_BAD_TYPE};
	uint8_t out[128];
	ssize_t n = of_build_error_reply(out, sizeof(out), OF_VERSION_1_3, &f, bad, sizeof(bad));
	cr_assert_eq(n, 12 + 64);
	struct of_msg m;
	struct of_fault g;
	cr_assert_eq(of_parse(out, (size_t)n, &m, &g), 0);
	cr_assert_eq(m.type, OF_ERROR);
	cr_assert_eq(m.xid, 0xdeadbeef);
	cr_assert_eq(m.u.error.type, OFPET_BAD_REQUEST);
	cr_assert_eq(m.u.error.code, OFPBRC_BAD_TYPE);
	cr_assert_eq(m.u.error.data_len, 64);
	cr_assert_arr_eq(m.u.error.data, bad, 64);
	/* a short offender is echoed whole */
	n = of_build_error_reply(out, sizeof(out), OF_VERSION_1_0, &f, bad, 8);
	cr_assert_eq(n, 20);
}
