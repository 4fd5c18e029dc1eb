/*
 * tests/openflow/test_of_xmsg.c: the control-plane messages of of_xmsg.c (roles, async
 * config, GET_CONFIG, multipart DESC/AGGREGATE/TABLE). Byte vectors written by hand from the
 * OpenFlow 1.3.5 layouts are compared with what of_xserialize writes and what of_xparse
 * reads; every message parses from an exact-size heap copy (an over-read trips ASan); bad
 * lengths are BAD_LEN without closing; types that are not these are -ENOENT (of_parse's);
 * the generation id comparison wraps as the spec says.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of.h"

static int xparse_exact(const uint8_t *v, size_t n, struct of_xmsg *m, struct of_fault *f)
{
	uint8_t *copy = malloc(n);
	memcpy(copy, v, n);
	int rc = of_xparse(copy, n, m, f);
	free(copy);
	if (rc == 0 && (m->type == OF_X_TABLE_REPLY))
		rc = of_xparse(v, n, m, f); /* tables.raw pointed into the copy */
	return rc;
}

/* Serialize, compare with the golden bytes, parse back, serialize again: same bytes. */
static void golden(const struct of_xmsg *m, const uint8_t *want, size_t n)
{
	uint8_t buf[2048], buf2[2048];
	ssize_t got = of_xserialize(m, buf, sizeof(buf));
	cr_assert_eq(got, (ssize_t)n, "length %zd, want %zu", got, n);
	cr_assert_arr_eq(buf, want, n);
	struct of_xmsg back;
	struct of_fault f;
	cr_assert_eq(xparse_exact(want, n, &back, &f), 0, "%s", f.why ? f.why : "");
	cr_assert_eq(back.type, m->type);
	cr_assert_eq(back.xid, m->xid);
	cr_assert_eq(of_xserialize(&back, buf2, sizeof(buf2)), (ssize_t)n);
	cr_assert_arr_eq(buf2, want, n);
}

Test(of_xmsg, role_request_and_reply)
{
	static const uint8_t req[] = {
		0x04, 24, 0x00, 0x18, 0x00, 0x00, 0x00, 0x07, /* header: ROLE_REQUEST, 24, xid 7 */
		0x00, 0x00, 0x00, 0x02, 0, 0, 0, 0,           /* MASTER, pad */
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, /* generation_id */
	};
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_ROLE_REQUEST, .xid = 7};
	m.u.role.role = OFPCR_ROLE_MASTER;
	m.u.role.generation_id = 0x8000000000000005ull;
	golden(&m, req, sizeof(req));
	uint8_t rep[sizeof(req)];
	memcpy(rep, req, sizeof(rep));
	rep[1] = 25;
	rep[11] = 3;
	m.type = OF_X_ROLE_REPLY;
	m.u.role.role = OFPCR_ROLE_SLAVE;
	golden(&m, rep, sizeof(rep));
}

Test(of_xmsg, async_config)
{
	static const uint8_t v[] = {
		0x04, 28, 0x00, 0x20, 0x00, 0x00, 0x00, 0x09,
		0, 0, 0, 0x03, 0, 0, 0, 0x00, /* packet_in: master/equal, slave */
		0, 0, 0, 0x07, 0, 0, 0, 0x07, /* port_status */
		0, 0, 0, 0x0f, 0, 0, 0, 0x00, /* flow_removed */
	};
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_SET_ASYNC, .xid = 9};
	m.u.async = (struct of_async){{3, 0}, {7, 7}, {15, 0}};
	golden(&m, v, sizeof(v));
	static const uint8_t get[] = {0x04, 26, 0x00, 0x08, 0, 0, 0, 10};
	struct of_xmsg g = {.version = OF_VERSION_1_3, .type = OF_X_GET_ASYNC_REQUEST, .xid = 10};
	golden(&g, get, sizeof(get));
}

Test(of_xmsg, get_config)
{
	static const uint8_t req[] = {0x04, 7, 0x00, 0x08, 0, 0, 0, 11};
	static const uint8_t rep[] = {0x04, 8, 0x00, 0x0c, 0, 0, 0, 11, 0x00, 0x01, 0xff, 0xff};
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_GET_CONFIG_REQUEST, .xid = 11};
	golden(&m, req, sizeof(req));
	m.type = OF_X_GET_CONFIG_REPLY;
	m.u.config.flags = 1;
	m.u.config.miss_send_len = 0xffff;
	golden(&m, rep, sizeof(rep));
}

Test(of_xmsg, multipart_desc)
{
	static const uint8_t req[] = {0x04, 18, 0x00, 0x10, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0};
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_DESC_REQUEST, .xid = 12};
	golden(&m, req, sizeof(req));
	uint8_t rep[16 + 1056] = {0x04, 19, (16 + 1056) >> 8, (16 + 1056) & 0xff, 0, 0, 0, 12};
	memcpy(rep + 16, "ringflow", 8);
	memcpy(rep + 16 + 256, "hw", 2);
	memcpy(rep + 16 + 512, "sw", 2);
	memcpy(rep + 16 + 768, "None", 4);
	memcpy(rep + 16 + 800, "dp", 2);
	m.type = OF_X_DESC_REPLY;
	strcpy(m.u.desc.mfr, "ringflow");
	strcpy(m.u.desc.hw, "hw");
	strcpy(m.u.desc.sw, "sw");
	strcpy(m.u.desc.serial, "None");
	strcpy(m.u.desc.dp, "dp");
	golden(&m, rep, sizeof(rep));
	/* A wire string with no NUL: kept NUL-terminated, the last byte gives way. */
	memset(rep + 16, 'x', 256);
	struct of_xmsg back;
	struct of_fault f;
	cr_assert_eq(xparse_exact(rep, sizeof(rep), &back, &f), 0);
	cr_assert_eq(strlen(back.u.desc.mfr), 255);
}

Test(of_xmsg, multipart_aggregate)
{
	static const uint8_t req[] = {
		0x04, 18, 0x00, 0x38, 0, 0, 0, 13, 0x00, 0x02, 0, 0, 0, 0, 0, 0,
		0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x00, 0x01, 0x00, 0x0c, 0x80, 0x00, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0,
	};
	/* header 16 + fixed 32 + match (OXM in_port=1: 4 + 8 = 12, padded to 16) = 64 */
	uint8_t v[64];
	memcpy(v, req, sizeof(v));
	v[3] = 64;
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_AGGREGATE_REQUEST, .xid = 13};
	struct of_mp_request *r = &m.u.aggregate_request;
	r->table_id = OFPTT_ALL;
	r->out_port = OFPP_ANY;
	r->out_group = OFPG_ANY;
	r->cookie = 0x10;
	r->cookie_mask = ~0ull;
	r->match.fields = OF_MATCH_IN_PORT;
	r->match.in_port = 1;
	golden(&m, v, sizeof(v));
	static const uint8_t rep[] = {
		0x04, 19, 0x00, 0x28, 0, 0, 0, 13, 0x00, 0x02, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 2, 0, 0, 0, 0,
	};
	struct of_xmsg a = {.version = OF_VERSION_1_3, .type = OF_X_AGGREGATE_REPLY, .xid = 13};
	a.u.aggregate = (struct of_aggregate){10, 1000, 2};
	golden(&a, rep, sizeof(rep));
}

Test(of_xmsg, multipart_table)
{
	static const uint8_t req[] = {0x04, 18, 0x00, 0x10, 0, 0, 0, 14, 0, 3, 0, 0, 0, 0, 0, 0};
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_TABLE_REQUEST, .xid = 14};
	golden(&m, req, sizeof(req));
	static const uint8_t rep[] = {
		0x04, 19, 0x00, 0x28, 0, 0, 0, 14, 0, 3, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 90,
	};
	struct of_table_stats t = {0, 5, 100, 90};
	m.type = OF_X_TABLE_REPLY;
	m.u.tables.n = 1;
	m.u.tables.items = &t;
	golden(&m, rep, sizeof(rep));
	struct of_xmsg back;
	struct of_fault f;
	struct of_table_stats o;
	cr_assert_eq(of_xparse(rep, sizeof(rep), &back, &f), 0);
	cr_assert_eq(back.u.tables.n, 1);
	cr_assert_eq(of_table_stats_at(&back.u.tables, 0, &o), 0);
	cr_assert(o.active_count == 5 && o.lookup_count == 100 && o.matched_count == 90);
	cr_assert_eq(of_table_stats_at(&back.u.tables, 1, &o), -EINVAL);
}

Test(of_xmsg, bad_lengths_are_bad_len_and_keep_the_connection)
{
	struct {
		uint8_t b[64];
		size_t n;
	} bad[] = {
		{{0x04, 24, 0x00, 0x14, 0, 0, 0, 1}, 20},          /* ROLE_REQUEST of 20 */
		{{0x04, 28, 0x00, 0x1c, 0, 0, 0, 1}, 28},          /* SET_ASYNC of 28 */
		{{0x04, 7, 0x00, 0x0c, 0, 0, 0, 1}, 12},           /* GET_CONFIG_REQUEST with a body */
		{{0x04, 26, 0x00, 0x0c, 0, 0, 0, 1}, 12},          /* GET_ASYNC_REQUEST with a body */
		{{0x04, 18, 0x00, 0x14, 0, 0, 0, 1, 0, 0}, 20},    /* DESC request with a body */
		{{0x04, 18, 0x00, 0x14, 0, 0, 0, 1, 0, 3}, 20},    /* TABLE request with a body */
		{{0x04, 18, 0x00, 0x20, 0, 0, 0, 1, 0, 2}, 32},    /* AGGREGATE request cut short */
		{{0x04, 19, 0x00, 0x20, 0, 0, 0, 1, 0, 2}, 32},    /* AGGREGATE reply of 16 */
		{{0x04, 19, 0x00, 0x20, 0, 0, 0, 1, 0, 3}, 32},    /* TABLE reply of 16 */
		{{0x04, 19, 0x00, 0x20, 0, 0, 0, 1, 0, 0}, 32},    /* DESC reply of 16 */
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct of_xmsg m;
		struct of_fault f;
		cr_assert_eq(xparse_exact(bad[i].b, bad[i].n, &m, &f), -EBADMSG, "case %u", i);
		cr_assert_eq(f.type, OFPET_BAD_REQUEST, "case %u", i);
		cr_assert_eq(f.code, OFPBRC_BAD_LEN, "case %u", i);
		cr_assert(!f.close, "case %u", i);
		cr_assert(f.why, "case %u", i);
	}
}

Test(of_xmsg, other_messages_are_left_to_of_parse)
{
	static const uint8_t echo[] = {0x04, 2, 0x00, 0x08, 0, 0, 0, 1};
	static const uint8_t flow_stats[] = {0x04, 18, 0x00, 0x10, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};
	static const uint8_t queue[] = {0x04, 18, 0x00, 0x10, 0, 0, 0, 1, 0, 5, 0, 0, 0, 0, 0, 0};
	static const uint8_t v10[] = {0x01, 24, 0x00, 0x18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 0};
	struct of_xmsg m;
	struct of_fault f;
	cr_assert_eq(of_xparse(echo, sizeof(echo), &m, &f), -ENOENT);
	cr_assert_eq(of_xparse(flow_stats, sizeof(flow_stats), &m, &f), -ENOENT);
	cr_assert_eq(of_xparse(v10, sizeof(v10), &m, &f), -ENOENT);
	/* A multipart kind nobody models: of_parse says BAD_MULTIPART. */
	cr_assert_eq(of_xparse(queue, sizeof(queue), &m, &f), -ENOENT);
	struct of_msg om;
	cr_assert_eq(of_parse(queue, sizeof(queue), &om, &f), -EBADMSG);
	cr_assert_eq(f.type, OFPET_BAD_REQUEST);
	cr_assert_eq(f.code, OFPBRC_BAD_MULTIPART);
	cr_assert(!f.close);
}

Test(of_xmsg, small_buffer_is_enobufs)
{
	uint8_t buf[20];
	struct of_xmsg m = {.version = OF_VERSION_1_3, .type = OF_X_ROLE_REPLY, .xid = 1};
	cr_assert_eq(of_xserialize(&m, buf, sizeof(buf)), -ENOBUFS);
	m.type = OF_XTYPE_COUNT;
	cr_assert_eq(of_xserialize(&m, buf, sizeof(buf)), -EINVAL);
}

Test(of_xmsg, generation_ids_compare_as_signed_differences)
{
	cr_assert(!of_generation_stale(5, 5));
	cr_assert(!of_generation_stale(5, 6));
	cr_assert(of_generation_stale(5, 4));
	/* wrap-around: UINT64_MAX is just behind 0, and 0 just ahead of UINT64_MAX */
	cr_assert(!of_generation_stale(UINT64_MAX, 0));
	cr_assert(of_generation_stale(0, UINT64_MAX));
	/* half the circle away counts as behind (INT64_MIN < 0): an unsigned compare would not */
	cr_assert(of_generation_stale(6, 6 + (1ull << 63)));
	cr_assert(!of_generation_stale(6, 6 + (1ull << 63) - 1));
}
