/*
 * tests/echo/test_sink.c: the stream sink (lg_sink.c) on hand-made buffers: it counts measured
 * messages, bytes and checksum of the current point, keeps warm-up apart, counts foreign and
 * damaged messages as corrupt, starts afresh on a new point, and turns a report request into a
 * report in the request's own buffer (so it goes back to the same peer or connection).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/pktbuf.h>

#include "lg_modes.h"
#include "lg_msg.h"
#include "lg_sink.h"

static struct rf_pktbuf_pool *pool;

static void setup(void)
{
	pool = rf_pktbuf_pool_create("sink", 256, 2048, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
}

static void teardown(void)
{
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 256, "a buffer leaked or was freed twice");
	rf_pktbuf_pool_free(pool);
}

static struct rf_pktbuf *msg(uint16_t point, uint16_t phase, uint64_t seq, unsigned size)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(pool);
	cr_assert_not_null(b);
	struct rf_lg_hdr h = {.magic = RF_LG_MAGIC, .point = point, .phase = phase, .seq = seq};
	rf_lg_msg_write(rf_pktbuf_data(b), size, &h);
	b->data_len = size;
	b->flags = 0;
	b->flow = 0x1234;
	return b;
}

TestSuite(sink, .init = setup, .fini = teardown);

Test(sink, counts_measured_messages_and_answers_a_report_request)
{
	struct rf_lg_sink s = {.check = true};
	struct rf_pktbuf *b[8], *out[8];
	uint64_t csum = 0;
	b[0] = msg(3, RF_LG_PHASE_WARMUP, 0, 100);
	for (unsigned i = 1; i <= 5; i++) {
		b[i] = msg(3, RF_LG_PHASE_MEASURED, i, 100 + i);
		csum += rf_lg_csum(rf_pktbuf_data(b[i]), 100 + i);
	}
	b[6] = msg(3, RF_LG_PHASE_MEASURED, 9, 60);
	((uint8_t *)rf_pktbuf_data(b[6]))[40] ^= 1; /* a damaged payload */
	b[7] = msg(3, RF_LG_PHASE_REPORT_REQ, 0, RF_LG_HDR_SIZE);
	cr_assert_eq(rf_lg_sink_take(&s, b, 8, out), 1);
	struct rf_lg_sink_report r;
	cr_assert_eq(out[0]->data_len, sizeof(r));
	cr_assert_eq(out[0]->flow, 0x1234, "the report goes back on the request's connection");
	memcpy(&r, rf_pktbuf_data(out[0]), sizeof(r));
	cr_assert_eq(r.magic, RF_LG_SINK_MAGIC);
	cr_assert_eq(r.point, 3);
	cr_assert_eq(r.msgs, 5);
	cr_assert_eq(r.bytes, 101 + 102 + 103 + 104 + 105);
	cr_assert_eq(r.csum, csum);
	cr_assert_eq(r.corrupt, 1);
	cr_assert_eq(r.warmup_msgs, 1);
	cr_assert_eq(s.reports, 1);
	cr_assert_eq(s.total_msgs, 8);
	rf_pktbuf_free(out[0]);
}

Test(sink, a_new_point_starts_afresh_and_foreign_bytes_are_corrupt)
{
	struct rf_lg_sink s = {.check = false};
	struct rf_pktbuf *b[4], *out[4];
	b[0] = msg(1, RF_LG_PHASE_MEASURED, 0, 100);
	b[1] = msg(2, RF_LG_PHASE_MEASURED, 0, 100);
	b[2] = rf_pktbuf_alloc(pool);
	memset(rf_pktbuf_data(b[2]), 'x', 50); /* not ours */
	b[2]->data_len = 50;
	b[2]->flags = 0;
	b[3] = msg(1, RF_LG_PHASE_REPORT_REQ, 0, RF_LG_HDR_SIZE);
	cr_assert_eq(rf_lg_sink_take(&s, b, 4, out), 1);
	struct rf_lg_sink_report r;
	memcpy(&r, rf_pktbuf_data(out[0]), sizeof(r));
	/* The request is of point 1 again: a fresh start, nothing counted for it since. */
	cr_assert_eq(r.point, 1);
	cr_assert_eq(r.msgs, 0);
	rf_pktbuf_free(out[0]);
}

Test(sink, checksum_sees_swapped_words)
{
	uint8_t a[32], c[32];
	for (unsigned i = 0; i < 32; i++)
		a[i] = (uint8_t)i;
	memcpy(c, a, 32);
	memcpy(c, a + 8, 8);
	memcpy(c + 8, a, 8);
	cr_assert_neq(rf_lg_csum(a, 32), rf_lg_csum(c, 32));
	cr_assert_neq(rf_lg_csum(a, 31), rf_lg_csum(a, 32));
}

Test(sink, mode_names_round_trip)
{
	cr_assert_eq(rf_lg_mode_parse("echo"), RF_LG_MODE_ECHO);
	cr_assert_eq(rf_lg_mode_parse("stream"), RF_LG_MODE_STREAM);
	cr_assert_eq(rf_lg_mode_parse("rr"), RF_LG_MODE_RR);
	cr_assert_eq(rf_lg_mode_parse("crr"), RF_LG_MODE_CRR);
	cr_assert_eq(rf_lg_mode_parse("RR"), -1);
	cr_assert_eq(rf_lg_mode_parse(""), -1);
	cr_assert_str_eq(rf_lg_mode_name(RF_LG_MODE_CRR), "crr");
}

Test(sink, stream_point_prints_one_json_line_with_the_verdicts)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	struct rf_lg_mpoint p = {.mode = RF_LG_MODE_STREAM, .backend = "udp", .size = 1000,
				 .seconds = 1.0, .sent_msgs = 100000, .sent_bytes = 100000000,
				 .recv_msgs = 99899, .recv_bytes = 99899000, .reported = true};
	rf_lg_mjson(f, &p); /* 101 of 100000 lost: just past the 0.1 % edge */
	p.recv_msgs = 100000;
	p.recv_bytes = 100000000;
	p.sent_csum = p.recv_csum = 42;
	rf_lg_mjson(f, &p);
	fclose(f);
	char *second = strchr(buf, '\n');
	cr_assert_not_null(second);
	*second++ = '\0';
	cr_assert(strstr(buf, "\"saturated\":true") != NULL, "%s", buf);
	cr_assert(strstr(buf, "\"checksum_match\":false") != NULL, "%s", buf);
	cr_assert(strstr(second, "\"saturated\":false") != NULL, "%s", second);
	cr_assert(strstr(second, "\"checksum_match\":true") != NULL, "%s", second);
	cr_assert(strstr(second, "\"gbit_s\":0.8000") != NULL, "%s", second);
	cr_assert_eq(strchr(second, '\n'), second + strlen(second) - 1);
	free(buf);
}
