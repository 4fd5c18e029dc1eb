/*
 * tests/runtime/test_ctl_top.c: `ringflow-ctl top` shows the app's own values (app/NAME:
 * counters, gauges, histograms' counts) and fits the terminal: every line within $COLUMNS at
 * 80 and at 60 (narrower tables, long names cut with '~', big numbers with k/M/G), in the
 * human view and in --json. The process watched is this test: a stats registry with app
 * values and a ring, served by a control socket of its own; ringflow-ctl runs as a child.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/ctl.h>
#include <ringflow/ring.h>
#include <ringflow/stats.h>

static _Atomic uint64_t learned = 12345, huge_gauge = 98765432109876ull;

struct bed {
	struct rf_stats *st;
	struct rf_ctl *ctl;
	struct rf_ring *ring;
	char path[108];
};

static struct bed bed_up(void)
{
	struct bed b = {0};
	char err[256];
	b.st = rf_stats_create("topapp");
	cr_assert_not_null(b.st);
	cr_assert_eq(rf_stats_add_counter(b.st, "frames_learned", "frames learned", &learned), 0);
	cr_assert_eq(rf_stats_add_gauge(b.st, "a_gauge_with_a_31_char_name_xyz",
					"long name", &huge_gauge), 0);
	b.ring = rf_ring_create("r", 1024, 0);
	cr_assert_not_null(b.ring);
	cr_assert_eq(rf_stats_add_ring(b.st, "to_the_controller_ring", b.ring), 0);
	snprintf(b.path, sizeof(b.path), "/tmp/rf-ctltop.%d.sock", (int)getpid());
	struct rf_ctl_config cc = {.stats = b.st, .sock_path = b.path, .timeout_ms = 5000,
				   .max_output_len = 1u << 20};
	b.ctl = rf_ctl_start(&cc, err, sizeof(err));
	cr_assert_not_null(b.ctl, "%s", err);
	return b;
}

static void bed_down(struct bed *b)
{
	rf_ctl_stop(b->ctl);
	rf_stats_destroy(b->st);
	rf_ring_free(b->ring);
}

/* Runs top once with COLUMNS=cols; returns its output (static), checks every line's width. */
static const char *top(const struct bed *b, int cols, const char *extra)
{
	static char out[16384];
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "COLUMNS=%d %s %s -s %s top --iterations 1 --interval 0.1",
		 cols, RF_CTL_BIN, extra, b->path);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	cr_assert_eq(pclose(f), 0, "%s failed: %s", cmd, out);
	if (*extra == '\0') { /* the human view: every line fits */
		char copy[sizeof(out)];
		memcpy(copy, out, n + 1);
		for (char *save, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			cr_assert_leq(strlen(l), (size_t)cols, "wider than %d: \"%s\"", cols, l);
	}
	return out;
}

static void shows_app_values(int cols)
{
	struct bed b = bed_up();
	const char *o = top(&b, cols, "");
	cr_assert(strstr(o, "\nAPP ") != NULL, "no APP table:\n%s", o);
	const char *row = strstr(o, "\nframes_learned ");
	cr_assert_not_null(row, "no frames_learned row:\n%s", o);
	cr_assert(strstr(row, "12345") != NULL && strstr(row, "12345") < strchr(row + 1, '\n'),
		  "frames_learned's value:\n%s", o);
	cr_assert(strstr(o, "\na_gauge_with_a_31_char_name_xyz ") != NULL, "a 31-char name whole:\n%s", o);
	cr_assert(strstr(o, "~ ") != NULL, "a cut name ends in '~':\n%s", o);
	cr_assert(strstr(o, " 98765432110k ") != NULL, "the big gauge, scaled to 12 chars:\n%s",
		  o);
	cr_assert(strstr(o, "\nRING ") != NULL && strstr(o, "\nto_the_cont") != NULL, "%s", o);
	bed_down(&b);
}

Test(ctl_top, shows_app_values_within_80_columns)
{
	shows_app_values(80);
}

Test(ctl_top, shows_app_values_within_60_columns)
{
	shows_app_values(60);
}

Test(ctl_top, json_view_carries_app_values)
{
	struct bed b = bed_up();
	const char *o = top(&b, 60, "--json");
	cr_assert(strstr(o, "\"app\":[") != NULL, "%s", o);
	cr_assert(strstr(o, "{\"name\":\"frames_learned\",\"value\":12345,") != NULL, "%s", o);
	bed_down(&b);
}
