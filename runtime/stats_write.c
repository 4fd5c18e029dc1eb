/*
 * runtime/stats_write.c: the registry's two views of one list of samples: a JSON tree (the
 * control socket) and the Prometheus text exposition format (the --metrics endpoint).
 *
 * JSON: the samples are sorted by path (numbers in a path compare as numbers, so poller 10
 * comes after poller 9), then written in one pass that opens and closes objects as the
 * path's prefix changes, so no tree is built. Prometheus: the samples are sorted by metric
 * name (stably, so a family keeps the order its sources gave) and each family gets its HELP
 * and TYPE lines once, as the format requires.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/stats.h>

#include "stats_pvt.h"

/* ---- JSON ------------------------------------------------------------------------------- */

static bool all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 18)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int cmp_path(const char *a, const char *b)
{
	while (*a && *b) {
		size_t na = strcspn(a, "/"), nb = strcspn(b, "/");
		int c;
		if (all_digits(a, na) && all_digits(b, nb)) {
			unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
			c = x < y ? -1 : x > y;
		} else {
			size_t m = na < nb ? na : nb;
			c = memcmp(a, b, m);
			if (!c)
				c = na < nb ? -1 : na > nb;
		}
		if (c)
			return c;
		a += na;
		b += nb;
		if (*a == '/')
			a++;
		if (*b == '/')
			b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static const struct rf_stat *sort_base;

static int cmp_idx_path(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = cmp_path(sort_base[i].path, sort_base[j].path);
	return c ? c : (i > j) - (i < j);
}

static int cmp_idx_metric(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	int c = strcmp(sort_base[i].metric, sort_base[j].metric);
	return c ? c : (i > j) - (i < j);
}

/* qsort's comparator has no context argument; the registry's writers hold this lock. */
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static void sort_idx(const struct rf_stat *v, size_t *idx, size_t n,
		     int (*cmp)(const void *, const void *))
{
	pthread_mutex_lock(&sort_lock);
	sort_base = v;
	qsort(idx, n, sizeof(*idx), cmp);
	sort_base = NULL;
	pthread_mutex_unlock(&sort_lock);
}

static void json_value(struct rf_buf *b, const struct rf_stat *x)
{
	switch (x->type) {
	case RF_STAT_TEXT: rf_json_str(b, x->text); return;
	case RF_STAT_HISTOGRAM: {
		const struct rf_stat_hist_snap *h = x->hist;
		rf_buf_printf(b, "{\"count\":%llu,\"sum\":%llu,\"le\":[", (unsigned long long)h->count,
			      (unsigned long long)h->sum);
		for (unsigned i = 0; i < h->nb; i++)
			rf_buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)h->le[i]);
		rf_buf_puts(b, "],\"counts\":[");
		for (unsigned i = 0; i <= h->nb; i++)
			rf_buf_printf(b, "%s%llu", i ? "," : "", (unsigned long long)h->cnt[i]);
		rf_buf_puts(b, "]}");
		return;
	}
	default:
		if (x->is_double)
			rf_buf_printf(b, isfinite(x->d) ? "%.17g" : "null", x->d);
		else
			rf_buf_printf(b, "%llu", (unsigned long long)x->u);
	}
}

/* Segment k of p (no NUL): its start and length; false past the end. */
static bool seg(const char *p, unsigned k, const char **s, size_t *n)
{
	for (unsigned i = 0; i < k; i++) {
		p = strchr(p, '/');
		if (!p)
			return false;
		p++;
	}
	*s = p;
	*n = strcspn(p, "/");
	return true;
}

static unsigned nsegs(const char *p)
{
	unsigned n = 1;
	for (; *p; p++)
		n += *p == '/';
	return n;
}

static void key(struct rf_buf *b, const char *s, size_t n)
{
	char tmp[128];
	if (n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	rf_json_str(b, tmp);
	rf_buf_puts(b, ":");
}

int rf_stats_write_json(struct rf_stats *st, const char *path, struct rf_buf *b)
{
	if (!path)
		path = "";
	while (*path == '/')
		path++;
	size_t plen = strlen(path);
	while (plen && path[plen - 1] == '/')
		plen--;
	struct rf_stat_set s;
	rf_stat_set_init(&s, RF_STATS_MAX_SAMPLES);
	rf_stats_collect(st, &s);
	rf_stats_apply_base(st, &s);
	size_t *idx = malloc((s.n ? s.n : 1) * sizeof(*idx));
	if (!idx) {
		rf_stat_set_free(&s);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < s.n; i++) {
		const char *p = s.v[i].path;
		if (plen == 0 || (strncmp(p, path, plen) == 0 && (p[plen] == '/' || p[plen] == '\0')))
			idx[n++] = i;
	}
	int rc = 0;
	if (n == 0) {
		rc = -ENOENT;
		goto out;
	}
	sort_idx(s.v, idx, n, cmp_idx_path);
	if (n == 1 && plen && s.v[idx[0]].path[plen] == '\0') {
		json_value(b, &s.v[idx[0]]); /* a leaf: its bare value */
		goto out;
	}
	/* Paths relative to the prefix; the stack holds the open objects' segments. */
	const char *stack[RF_JSON_MAX_DEPTH];
	size_t stackn[RF_JSON_MAX_DEPTH];
	unsigned depth = 0;
	bool first[RF_JSON_MAX_DEPTH + 1] = {true};
	rf_buf_puts(b, "{");
	for (size_t k = 0; k < n; k++) {
		const struct rf_stat *x = &s.v[idx[k]];
		const char *rel = plen ? x->path + plen + 1 : x->path;
		unsigned ns = nsegs(rel);
		if (ns > RF_JSON_MAX_DEPTH)
			continue;
		unsigned common = 0;
		while (common < depth && common < ns - 1) {
			const char *sp = "";
			size_t sn = 0;
			seg(rel, common, &sp, &sn);
			if (sn != stackn[common] || memcmp(sp, stack[common], sn) != 0)
				break;
			common++;
		}
		for (; depth > common; depth--)
			rf_buf_puts(b, "}");
		for (; depth < ns - 1; depth++) {
			const char *sp = "";
			size_t sn = 0;
			seg(rel, depth, &sp, &sn);
			if (!first[depth])
				rf_buf_puts(b, ",");
			first[depth] = false;
			key(b, sp, sn);
			rf_buf_puts(b, "{");
			stack[depth] = sp;
			stackn[depth] = sn;
			first[depth + 1] = true;
		}
		const char *sp = "";
		size_t sn = 0;
		seg(rel, ns - 1, &sp, &sn);
		if (!first[depth])
			rf_buf_puts(b, ",");
		first[depth] = false;
		key(b, sp, sn);
		json_value(b, x);
	}
	for (; depth > 0; depth--)
		rf_buf_puts(b, "}");
	rf_buf_puts(b, "}");
out:
	if (!rc && b->full)
		rc = -E2BIG;
	free(idx);
	rf_stat_set_free(&s);
	return rc;
}

/* ---- Prometheus ------------------------------------------------------------------------- */

static void metric_name(struct rf_buf *b, const char *m)
{
	char tmp[80] = "ringflow_";
	size_t n = 9;
	for (; *m && n < sizeof(tmp); m++, n++) {
		char c = *m;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == ':';
		tmp[n] = ok ? c : '_';
	}
	rf_buf_append(b, tmp, n);
}

/* s[0..n) with \ and newline (and " in label values) escaped; safe runs appended whole. */
static void escaped(struct rf_buf *b, const char *s, size_t n, bool quote)
{
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		const char *esc = s[i] == '\\' ? "\\\\" : s[i] == '\n' ? "\\n"
				: s[i] == '"' && quote ? "\\\"" : NULL;
		if (!esc)
			continue;
		rf_buf_append(b, s + run, i - run);
		rf_buf_puts(b, esc);
		run = i + 1;
	}
	rf_buf_append(b, s + run, n - run);
}

/* {app="x",k="v",...[,extra]} */
static void labels(struct rf_buf *b, const char *app, const char *lab, const char *extra)
{
	rf_buf_append(b, "{app=\"", 6);
	escaped(b, app, strlen(app), true);
	rf_buf_append(b, "\"", 1);
	while (lab && *lab) {
		size_t n = strcspn(lab, ",");
		const char *eq = memchr(lab, '=', n);
		if (eq) {
			rf_buf_append(b, ",", 1);
			rf_buf_append(b, lab, (size_t)(eq - lab));
			rf_buf_append(b, "=\"", 2);
			escaped(b, eq + 1, n - (size_t)(eq - lab) - 1, true);
			rf_buf_append(b, "\"", 1);
		}
		lab += n;
		if (*lab == ',')
			lab++;
	}
	if (extra) {
		rf_buf_append(b, ",", 1);
		rf_buf_puts(b, extra);
	}
	rf_buf_append(b, "}", 1);
}

/* " 123\n" without printf for integers (most samples). */
static void u64_line(struct rf_buf *b, uint64_t u)
{
	char tmp[24];
	size_t i = sizeof(tmp);
	tmp[--i] = '\n';
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	tmp[--i] = ' ';
	rf_buf_append(b, tmp + i, sizeof(tmp) - i);
}

static void number(struct rf_buf *b, uint64_t u, double scale)
{
	if (scale == 0 || scale == 1)
		u64_line(b, u);
	else
		rf_buf_printf(b, " %.10g\n", (double)u * scale);
}

static void prom_sample(struct rf_buf *b, const char *app, const struct rf_stat *x)
{
	if (x->type != RF_STAT_HISTOGRAM) {
		metric_name(b, x->metric);
		labels(b, app, x->labels, NULL);
		if (x->is_double)
			rf_buf_printf(b, isfinite(x->d) ? " %.17g\n" : " NaN\n", x->d);
		else
			number(b, x->u, x->scale);
		return;
	}
	const struct rf_stat_hist_snap *h = x->hist;
	double sc = h->scale ? h->scale : 1;
	uint64_t cum = 0;
	for (unsigned i = 0; i <= h->nb; i++) {
		cum += h->cnt[i];
		char le[48];
		if (i < h->nb)
			snprintf(le, sizeof(le), "le=\"%.10g\"", (double)h->le[i] * sc);
		else
			snprintf(le, sizeof(le), "le=\"+Inf\"");
		metric_name(b, x->metric);
		rf_buf_puts(b, "_bucket");
		labels(b, app, x->labels, le);
		u64_line(b, cum);
	}
	metric_name(b, x->metric);
	rf_buf_puts(b, "_sum");
	labels(b, app, x->labels, NULL);
	number(b, h->sum, h->scale);
	metric_name(b, x->metric);
	rf_buf_puts(b, "_count");
	labels(b, app, x->labels, NULL);
	u64_line(b, cum);
}

static const char *const type_name[] = {"counter", "gauge", "histogram", "untyped"};

int rf_stats_write_prometheus(struct rf_stats *st, struct rf_buf *b)
{
	struct rf_stat_set s;
	rf_stat_set_init(&s, RF_STATS_MAX_SAMPLES);
	rf_stats_collect(st, &s);
	size_t *idx = malloc((s.n ? s.n : 1) * sizeof(*idx));
	if (!idx) {
		rf_stat_set_free(&s);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].metric[0] && s.v[i].type != RF_STAT_TEXT)
			idx[n++] = i;
	sort_idx(s.v, idx, n, cmp_idx_metric);
	const char *app = rf_stats_app(st);
	for (size_t k = 0; k < n; k++) {
		const struct rf_stat *x = &s.v[idx[k]];
		if (k == 0 || strcmp(x->metric, s.v[idx[k - 1]].metric) != 0) {
			rf_buf_puts(b, "# HELP ");
			metric_name(b, x->metric);
			rf_buf_puts(b, " ");
			const char *h = x->help[0] ? x->help : x->metric;
			escaped(b, h, strlen(h), false);
			rf_buf_puts(b, "\n# TYPE ");
			metric_name(b, x->metric);
			rf_buf_printf(b, " %s\n", type_name[x->type]);
		}
		prom_sample(b, app, x);
	}
	free(idx);
	rf_stat_set_free(&s);
	return b->full ? -E2BIG : 0;
}
