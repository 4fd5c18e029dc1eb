/*
 * runtime/stats_pvt.h: what the registry (stats.c) shares with its writers (stats_write.c)
 * and the control socket (ctl*.c).
 */
#ifndef RINGFLOW_STATS_PVT_H
#define RINGFLOW_STATS_PVT_H

#include <stdbool.h>
#include <stdint.h>

#include <ringflow/stats.h>

#define RF_STATS_MAX_SAMPLES 16384 /* one read never holds more (about 7 MB) */

struct rf_stats_base {
	uint64_t key; /* rf_stats_key(path) */
	uint64_t val; /* the counter at the last reset */
};

/* A registered source: what it is and how to read it. */
enum src_kind { SRC_RUNTIME, SRC_DEV, SRC_RING, SRC_SLOTRING, SRC_POOL, SRC_COUNTER, SRC_GAUGE, SRC_GAUGE_FN,
		SRC_HIST, SRC_FN };

struct rf_stats_src {
	enum src_kind kind;
	char name[32];
	const void *ptr;
	double (*gauge_fn)(void *);
	rf_stats_fn fn;
	void *arg;
	const char *help;
};

/* Add source x's samples to s (stats_sources.c). */
void rf_stats_read_src(struct rf_stat_set *s, const struct rf_stats_src *x);

bool rf_stats_name_ok(const char *s);
uint64_t rf_stats_key(const char *path);
/* Subtract the reset baseline from the counters of s. */
void rf_stats_apply_base(struct rf_stats *st, struct rf_stat_set *s);

#endif /* RINGFLOW_STATS_PVT_H */
