/*
 * tests/echo/test_report.c: the saturation rule on synthetic results (both edges exact), reply
 * tracking (loss, duplicates, reordering), the message format, rate parsing, and that a point
 * prints as one well-formed JSON line.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_msg.h"
#include "lg_report.h"
#include "lg_track.h"

Test(saturation, everything_back_is_not_saturated)
{
	cr_assert_not(rf_lg_saturated(100000, 100000, 100000));
}

Test(saturation, received_below_99_percent_of_offered)
{
	/* The sender kept up and nothing was lost, but it only managed 98.99 % of the schedule. */
	cr_assert_not(rf_lg_saturated(10000, 9900, 9900));
	cr_assert(rf_lg_saturated(10000, 9899, 9899));
}

Test(saturation, loss_above_one_in_a_thousand)
{
	/* 0.1 % lost is still fine, one more is not. */
	cr_assert_not(rf_lg_saturated(100000, 100000, 99900));
	cr_assert(rf_lg_saturated(100000, 100000, 99899));
	/* Loss counts against what was sent, not offered. */
	cr_assert(rf_lg_saturated(100000, 99500, 99300));
}

Test(saturation, degenerate_counts)
{
	cr_assert_not(rf_lg_saturated(0, 0, 0));   /* nothing asked */
	cr_assert(rf_lg_saturated(1000, 0, 0));    /* nothing sent */
	cr_assert(rf_lg_saturated(1000, 1000, 0)); /* nothing back */
	/* Huge counts do not overflow the comparison. */
	cr_assert_not(rf_lg_saturated(UINT64_MAX / 2, UINT64_MAX / 2, UINT64_MAX / 2));
}

Test(track, counts_loss_duplicates_and_reordering)
{
	struct rf_lg_track t;
	cr_assert_eq(rf_lg_track_init(&t, 1000), 0);
	uint64_t order[] = {0, 1, 2, 5, 3, 4, 4, 6, 9, 7, 1000, 5};
	unsigned firsts = 0;
	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		firsts += rf_lg_track_reply(&t, order[i]);
	cr_assert_eq(firsts, 9);          /* 0..7 and 9, 8 never came */
	cr_assert_eq(t.received, 9);
	cr_assert_eq(t.duplicates, 2);    /* the second 4 and 5 */
	cr_assert_eq(t.reordered, 3);     /* 3 and 4 after 5, 7 after 9 */
	cr_assert_eq(t.out_of_range, 1);  /* 1000 */
	rf_lg_track_reset(&t);
	cr_assert_eq(t.received, 0);
	cr_assert(rf_lg_track_reply(&t, 5));
	rf_lg_track_free(&t);
}

Test(msg, roundtrip_and_corruption_detected)
{
	unsigned char buf[100];
	struct rf_lg_hdr h = {RF_LG_MAGIC, 3, RF_LG_PHASE_MEASURED, 123456789, 42}, r;
	rf_lg_msg_write(buf, sizeof(buf), &h);
	rf_lg_msg_stamp(buf, 77);
	cr_assert(rf_lg_msg_read(buf, 100, 100, &r));
	cr_assert_eq(r.point, 3);
	cr_assert_eq(r.phase, RF_LG_PHASE_MEASURED);
	cr_assert_eq(r.seq, 123456789);
	cr_assert_eq(r.send_ns, 77);
	cr_assert_not(rf_lg_msg_read(buf, 99, 100, &r), "short reply accepted");
	buf[60] ^= 1;
	cr_assert_not(rf_lg_msg_read(buf, 100, 100, &r), "flipped payload bit accepted");
	buf[60] ^= 1;
	buf[0] ^= 1;
	cr_assert_not(rf_lg_msg_read(buf, 100, 100, &r), "bad magic accepted");
}

Test(rates, parse_suffixes_and_reject_junk)
{
	double r;
	cr_assert_eq(rf_lg_parse_rate("20k", &r), 0);
	cr_assert_float_eq(r, 20000.0, 1e-9);
	cr_assert_eq(rf_lg_parse_rate("1.6M", &r), 0);
	cr_assert_float_eq(r, 1600000.0, 1e-6);
	cr_assert_eq(rf_lg_parse_rate("500", &r), 0);
	cr_assert_float_eq(r, 500.0, 1e-9);
	cr_assert_eq(rf_lg_parse_rate("", &r), -EINVAL);
	cr_assert_eq(rf_lg_parse_rate("fast", &r), -EINVAL);
	cr_assert_eq(rf_lg_parse_rate("10x", &r), -EINVAL);
	cr_assert_eq(rf_lg_parse_rate("0", &r), -EINVAL);
	cr_assert_eq(rf_lg_parse_rate("-5k", &r), -EINVAL);
}

Test(report, json_line_has_the_required_keys)
{
	struct rf_hist *h = malloc(sizeof(*h));
	cr_assert_not_null(h);
	rf_hist_reset(h);
	for (int i = 1; i <= 100; i++)
		rf_hist_record(h, (uint64_t)i * 1000);
	struct rf_lg_point p = {.backend = "udp:connect=10.0.0.2:9000", .offered_rate = 100,
				.seconds = 1.0, .offered = 100, .sent = 100, .received = 98, .rtt = h};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	cr_assert_not_null(f);
	rf_lg_json(f, &p);
	fclose(f);
	const char *keys[] = {"\"backend\":\"udp:connect=10.0.0.2:9000\"", "\"offered\":100,",
			      "\"achieved\":100.0,", "\"received\":98.0,", "\"loss\":0.020000,",
			      "\"p50_us\":50.", "\"p99_us\":99.", "\"p999_us\":100.",
			      "\"max_us\":100.00,", "\"saturated\":true,"};
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_not_null(strstr(out, keys[i]), "missing %s in %s", keys[i], out);
	cr_assert_eq(strchr(out, '\n'), out + len - 1, "not exactly one line: %s", out);
	free(out);
	free(h);
}

Test(report, cpu_sample_reads_proc_stat)
{
	struct rf_lg_cpu_sample a, b;
	cr_assert_eq(rf_lg_cpu_read(&a), 0);
	cr_assert_eq(rf_lg_cpu_read(&b), 0);
	cr_assert_gt(a.n_cpus, 0);
	cr_assert_geq(b.total[0], a.total[0]);
	struct rf_lg_point p = {0};
	rf_lg_point_cpu(&p, &a, &b);
	cr_assert_geq(p.steal_pct, 0.0);
	cr_assert_leq(p.steal_pct, 100.0);
}
