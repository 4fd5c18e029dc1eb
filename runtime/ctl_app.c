/*
 * runtime/ctl_app.c: the one call a dataplane app makes to be observable: a stats registry
 * holding its pollers, devices and packet pool, served by the control socket and (with
 * --metrics) the Prometheus endpoint. echo, l2fwd and ofbench each used to spell out the
 * same dozen lines; this is them, once, over the public stats.h and ctl.h calls.
 */
#include <errno.h>
#include <stdio.h>

#include <ringflow/ctl.h>
#include <ringflow/stats.h>

#include "ctl_pvt.h"

struct rf_ctl *rf_ctl_start_app(const struct rf_ctl_app *a, char *err, size_t len)
{
	struct rf_stats *reg = rf_stats_create(a->app);
	if (!reg) {
		int e = errno;
		snprintf(err, len, "%s: cannot make the stats registry: %s", a->app,
			 e == EINVAL ? "bad app name (1-31 of [A-Za-z0-9_.-])" : "out of memory");
		errno = e;
		return NULL;
	}
	int r = 0;
	if (a->rt)
		r = rf_stats_add_runtime(reg, a->rt);
	for (unsigned i = 0; r == 0 && i < a->ndevs; i++)
		r = rf_stats_add_dev(reg, a->dev_names[i], a->devs[i]);
	if (r == 0 && a->pool)
		r = rf_stats_add_pool(reg, a->pool_name ? a->pool_name : a->app, a->pool);
	if (r) {
		snprintf(err, len, "%s: cannot register the stats sources: %s (device names must "
			 "be unique, 1-31 of [A-Za-z0-9_.-])", a->app,
			 r == -EEXIST ? "a name is taken" : r == -EINVAL ? "bad name" : "out of memory");
		rf_stats_destroy(reg);
		errno = -r;
		return NULL;
	}
	struct rf_ctl *ctl = rf_ctl_start(&(struct rf_ctl_config){.stats = reg, .metrics = a->metrics},
					  err, len);
	if (!ctl) {
		int e = errno;
		rf_stats_destroy(reg);
		errno = e;
		return NULL;
	}
	ctl->own_stats = true;
	return ctl;
}

struct rf_stats *rf_ctl_stats(const struct rf_ctl *ctl)
{
	return ctl ? ctl->cfg.stats : NULL;
}
