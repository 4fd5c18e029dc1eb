/*
 * runtime/stats.c: the stats registry (stats.h): sample sets, the list of sources, collect
 * and reset. How each kind of source is read is in stats_sources.c; the writers (JSON tree,
 * Prometheus text) are in stats_write.c.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/stats.h>

#include "stats_pvt.h"

/* ---- histograms and sample sets --------------------------------------------------------- */

int rf_stats_hist_init(struct rf_stats_hist *h, uint64_t first, double factor, unsigned nb,
		       double scale)
{
	if (!h || !first || !(factor > 1.0) || nb == 0 || nb > RF_STATS_HIST_MAX)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	double b = (double)first;
	uint64_t prev = 0;
	for (unsigned i = 0; i < nb; i++) {
		uint64_t v = (uint64_t)ceil(b);
		if (v <= prev)
			v = prev + 1;
		h->le[i] = prev = v;
		b *= factor;
	}
	h->nb = nb;
	h->scale = scale;
	return 0;
}

void rf_stat_set_init(struct rf_stat_set *s, size_t max)
{
	*s = (struct rf_stat_set){.max = max ? max : 1};
}

void rf_stat_set_free(struct rf_stat_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].hist);
	free(s->v);
	*s = (struct rf_stat_set){.max = s->max};
}

/* s (NULL: "") into dst, cut to fit. */
static void copy(char *dst, size_t len, const char *s)
{
	size_t n = s ? strnlen(s, len - 1) : 0;
	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

static struct rf_stat *slot(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
			    const char *metric, const char *labels, const char *help)
{
	if (s->n == s->max) {
		s->full = true;
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		if (cap > s->max)
			cap = s->max;
		struct rf_stat *v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			s->full = true;
			return NULL;
		}
		s->v = v;
		s->cap = cap;
	}
	struct rf_stat *x = &s->v[s->n++];
	/* Field by field: a memset of the whole (mostly string) struct is most of a read. */
	x->type = type;
	copy(x->path, sizeof(x->path), path);
	copy(x->metric, sizeof(x->metric), metric);
	copy(x->labels, sizeof(x->labels), labels);
	x->help = help ? help : "";
	x->is_double = false;
	x->u = 0;
	x->d = 0;
	x->scale = 0;
	x->text[0] = '\0';
	x->hist = NULL;
	return x;
}

void rf_stats_emit_u64(struct rf_stat_set *s, enum rf_stat_type type, const char *path,
		       const char *metric, const char *labels, const char *help, uint64_t v)
{
	struct rf_stat *x = slot(s, type, path, metric, labels, help);
	if (x)
		x->u = v;
}

void rf_stats_emit_double(struct rf_stat_set *s, const char *path, const char *metric,
			  const char *labels, const char *help, double v)
{
	struct rf_stat *x = slot(s, RF_STAT_GAUGE, path, metric, labels, help);
	if (x) {
		x->is_double = true;
		x->d = v;
	}
}

void rf_stats_emit_text(struct rf_stat_set *s, const char *path, const char *text)
{
	struct rf_stat *x = slot(s, RF_STAT_TEXT, path, NULL, NULL, NULL);
	if (x)
		snprintf(x->text, sizeof(x->text), "%s", text ? text : "");
}

void rf_stats_emit_hist(struct rf_stat_set *s, const char *path, const char *metric,
			const char *labels, const char *help, const struct rf_stats_hist *h)
{
	struct rf_stat_hist_snap *snap = malloc(sizeof(*snap));
	if (!snap) {
		s->full = true;
		return;
	}
	struct rf_stat *x = slot(s, RF_STAT_HISTOGRAM, path, metric, labels, help);
	if (!x) {
		free(snap);
		return;
	}
	snap->nb = h->nb <= RF_STATS_HIST_MAX ? h->nb : RF_STATS_HIST_MAX;
	snap->scale = h->scale;
	memcpy(snap->le, h->le, sizeof(snap->le));
	/* Relaxed: single writer; the buckets are re-added so count matches them exactly. */
	snap->count = 0;
	for (unsigned i = 0; i <= snap->nb; i++) {
		snap->cnt[i] = atomic_load_explicit(&h->cnt[i], memory_order_relaxed);
		snap->count += snap->cnt[i];
	}
	snap->sum = atomic_load_explicit(&h->sum, memory_order_relaxed);
	x->hist = snap;
}

/* ---- the registry ----------------------------------------------------------------------- */

struct rf_stats {
	char app[32];
	pthread_mutex_t lock; /* sources and baseline; never taken by a poller */
	struct rf_stats_src *src;
	size_t nsrc, capsrc;
	struct rf_stats_base *base; /* sorted by key */
	size_t nbase;
};

bool rf_stats_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 31)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

struct rf_stats *rf_stats_create(const char *app)
{
	if (!rf_stats_name_ok(app)) {
		errno = EINVAL;
		return NULL;
	}
	struct rf_stats *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	snprintf(st->app, sizeof(st->app), "%s", app);
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

void rf_stats_destroy(struct rf_stats *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	free(st->src);
	free(st->base);
	free(st);
}

const char *rf_stats_app(const struct rf_stats *st)
{
	return st->app;
}

static int add(struct rf_stats *st, struct rf_stats_src s)
{
	if (!st || !rf_stats_name_ok(s.name))
		return -EINVAL;
	int rc = 0;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		if (strcmp(st->src[i].name, s.name) == 0 &&
		    (st->src[i].kind == s.kind || (st->src[i].kind >= SRC_COUNTER && s.kind >= SRC_COUNTER)))
			rc = -EEXIST;
	if (!rc && st->nsrc == st->capsrc) {
		size_t cap = st->capsrc ? st->capsrc * 2 : 16;
		struct rf_stats_src *v = realloc(st->src, cap * sizeof(*v));
		if (!v)
			rc = -ENOMEM;
		else
			st->src = v, st->capsrc = cap;
	}
	if (!rc)
		st->src[st->nsrc++] = s;
	pthread_mutex_unlock(&st->lock);
	return rc;
}

static struct rf_stats_src mk(enum src_kind k, const char *name, const void *ptr)
{
	struct rf_stats_src s = {.kind = k, .ptr = ptr};
	if (name && strlen(name) < sizeof(s.name))
		snprintf(s.name, sizeof(s.name), "%s", name);
	return s;
}

int rf_stats_add_runtime(struct rf_stats *st, struct rf_runtime *rt)
{
	return rt ? add(st, mk(SRC_RUNTIME, "pollers", rt)) : -EINVAL;
}

int rf_stats_add_dev(struct rf_stats *st, const char *name, struct rf_io_dev *dev)
{
	return dev ? add(st, mk(SRC_DEV, name, dev)) : -EINVAL;
}

int rf_stats_add_ring(struct rf_stats *st, const char *name, const struct rf_ring *r)
{
	return r ? add(st, mk(SRC_RING, name, r)) : -EINVAL;
}

int rf_stats_add_slotring(struct rf_stats *st, const char *name, const struct rf_slotring *r)
{
	return r ? add(st, mk(SRC_SLOTRING, name, r)) : -EINVAL;
}

int rf_stats_add_pool(struct rf_stats *st, const char *name, const struct rf_pktbuf_pool *p)
{
	return p ? add(st, mk(SRC_POOL, name, p)) : -EINVAL;
}

int rf_stats_add_counter(struct rf_stats *st, const char *name, const char *help,
			 const _Atomic uint64_t *c)
{
	struct rf_stats_src s = mk(SRC_COUNTER, name, c);
	s.help = help;
	return c ? add(st, s) : -EINVAL;
}

int rf_stats_add_gauge(struct rf_stats *st, const char *name, const char *help,
		       const _Atomic uint64_t *g)
{
	struct rf_stats_src s = mk(SRC_GAUGE, name, g);
	s.help = help;
	return g ? add(st, s) : -EINVAL;
}

int rf_stats_add_gauge_fn(struct rf_stats *st, const char *name, const char *help,
			  double (*fn)(void *arg), void *arg)
{
	struct rf_stats_src s = mk(SRC_GAUGE_FN, name, NULL);
	s.help = help;
	s.gauge_fn = fn;
	s.arg = arg;
	return fn ? add(st, s) : -EINVAL;
}

int rf_stats_add_hist(struct rf_stats *st, const char *name, const char *help,
		      const struct rf_stats_hist *h)
{
	struct rf_stats_src s = mk(SRC_HIST, name, h);
	s.help = help;
	return h && h->nb && h->nb <= RF_STATS_HIST_MAX ? add(st, s) : -EINVAL;
}

int rf_stats_add_fn(struct rf_stats *st, const char *name, rf_stats_fn fn, void *arg)
{
	struct rf_stats_src s = mk(SRC_FN, name, NULL);
	s.fn = fn;
	s.arg = arg;
	return fn ? add(st, s) : -EINVAL;
}

int rf_stats_remove(struct rf_stats *st, const char *name)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		if (strcmp(st->src[i].name, name) == 0) {
			memmove(&st->src[i], &st->src[i + 1], (st->nsrc - i - 1) * sizeof(st->src[0]));
			st->nsrc--;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

void rf_stats_collect(struct rf_stats *st, struct rf_stat_set *s)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nsrc; i++)
		rf_stats_read_src(s, &st->src[i]);
	pthread_mutex_unlock(&st->lock);
}

/* ---- reset: a baseline of counter values, keyed by a hash of the path ------------------- */

uint64_t rf_stats_key(const char *path)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 1099511628211ull;
	return h;
}

static int cmp_base(const void *a, const void *b)
{
	uint64_t x = ((const struct rf_stats_base *)a)->key, y = ((const struct rf_stats_base *)b)->key;
	return x < y ? -1 : x > y;
}

void rf_stats_reset(struct rf_stats *st)
{
	struct rf_stat_set s;
	rf_stat_set_init(&s, RF_STATS_MAX_SAMPLES);
	rf_stats_collect(st, &s);
	struct rf_stats_base *b = calloc(s.n ? s.n : 1, sizeof(*b));
	size_t nb = 0;
	for (size_t i = 0; b && i < s.n; i++)
		if (s.v[i].type == RF_STAT_COUNTER)
			b[nb++] = (struct rf_stats_base){rf_stats_key(s.v[i].path), s.v[i].u};
	if (b)
		qsort(b, nb, sizeof(*b), cmp_base);
	rf_stat_set_free(&s);
	pthread_mutex_lock(&st->lock);
	free(st->base);
	st->base = b;
	st->nbase = b ? nb : 0;
	pthread_mutex_unlock(&st->lock);
}

void rf_stats_apply_base(struct rf_stats *st, struct rf_stat_set *s)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < s->n && st->nbase; i++) {
		struct rf_stat *x = &s->v[i];
		if (x->type != RF_STAT_COUNTER)
			continue;
		struct rf_stats_base key = {rf_stats_key(x->path), 0};
		const struct rf_stats_base *f = bsearch(&key, st->base, st->nbase, sizeof(key), cmp_base);
		if (f)
			x->u = x->u >= f->val ? x->u - f->val : x->u; /* a source re-added: from 0 */
	}
	pthread_mutex_unlock(&st->lock);
}
