/*
 * mempool/mempool_debug.c: the checked get/put of debug mode (RF_MEMPOOL_DEBUG, or every
 * pool in an RF_DEBUG_CHECKS build), after DPDK's RTE_LIBRTE_MEMPOOL_DEBUG.
 *
 * Each object has a cookie, FREE or IN USE, in an array beside the region (so the object's
 * bytes and the region's layout are the same as in a release build). A put flips IN USE to
 * FREE with one compare-and-swap, so of two racing puts of one object exactly one wins and
 * the other is reported. A free object is filled with RF_MEMPOOL_POISON; get checks the fill
 * is intact, which catches writes through a pointer kept after put.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/log.h>

#include "mempool_pvt.h"

static void rf_mp_report(struct rf_mempool *mp, const char *what, const void *obj,
			 const char *fatal_call)
{
	atomic_fetch_add_explicit(&mp->debug_errors, 1, memory_order_relaxed); /* a counter */
	if (fatal_call) {
		rf_log(RF_LOG_ERR, "%s: buffer %p (pool '%s', buffer %ld of %u): %s", fatal_call,
		       obj, mp->name, rf_mempool_obj_index(mp, obj), mp->n, what);
		abort();
	}
	rf_log(RF_LOG_ERR, "mempool '%s': %s %p (object %ld of %u)", mp->name, what,
		obj, rf_mempool_obj_index(mp, obj), mp->n);
}

void rf_mp_debug_fatal(struct rf_mempool *mp, const char *get_call, const char *put_call)
{
	mp->slow->fatal_get_call = get_call;
	mp->slow->fatal_put_call = put_call;
}

int rf_mp_debug_state(const struct rf_mempool *mp, const void *obj)
{
	long idx = rf_mempool_obj_index(mp, obj);
	if (idx < 0 || !mp->debug)
		return -1;
	/* relaxed: the caller owns obj (or claims to); only its cookie's value is asked. */
	return atomic_load_explicit(&mp->slow->cookie[idx], memory_order_relaxed) ==
	       RF_MP_COOKIE_INUSE;
}

void rf_mp_debug_init(struct rf_mempool *mp)
{
	for (unsigned i = 0; i < mp->n; i++) {
		/* relaxed: the pool is not shared yet; creation happens-before any use. */
		atomic_store_explicit(&mp->slow->cookie[i], RF_MP_COOKIE_FREE, memory_order_relaxed);
		memset(rf_mempool_obj_at(mp, i), RF_MEMPOOL_POISON, mp->elt_size);
	}
}

static bool rf_mp_poison_intact(const struct rf_mempool *mp, const unsigned char *p)
{
	for (size_t i = 0; i < mp->elt_size; i++)
		if (p[i] != RF_MEMPOOL_POISON)
			return false;
	return true;
}

int rf_mp_get_debug(struct rf_mempool *mp, void **objs, unsigned n)
{
	int rc = rf_mp_get_raw(mp, objs, n);
	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		long idx = rf_mempool_obj_index(mp, objs[i]);
		/* relaxed: the object itself was handed over by the ring or our cache (their
		 * orderings); the cookie only has to be changed atomically. */
		uint8_t old = atomic_exchange_explicit(&mp->slow->cookie[idx], RF_MP_COOKIE_INUSE,
						       memory_order_relaxed);
		if (old != RF_MP_COOKIE_FREE)
			rf_mp_report(mp, "get returned an object that is in use (pool corrupted):",
				     objs[i], mp->slow->fatal_get_call);
		else if (!rf_mp_poison_intact(mp, objs[i]))
			rf_mp_report(mp, mp->slow->fatal_get_call
					 ? "written after it was freed (use after free)"
					 : "object written after it was put (use after free):",
				     objs[i], mp->slow->fatal_get_call);
	}
	return 0;
}

void rf_mp_put_debug(struct rf_mempool *mp, void *const *objs, unsigned n)
{
	void *ok[64];
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		long idx = rf_mempool_obj_index(mp, objs[i]);
		if (idx < 0) {
			rf_mp_report(mp, "put of a pointer that is not one of its objects, rejected:",
				     objs[i], mp->slow->fatal_put_call);
			continue;
		}
		uint8_t expect = RF_MP_COOKIE_INUSE;
		/* relaxed: see get; the CAS makes one of two racing puts lose. */
		if (!atomic_compare_exchange_strong_explicit(&mp->slow->cookie[idx], &expect,
							     RF_MP_COOKIE_FREE, memory_order_relaxed,
							     memory_order_relaxed)) {
			rf_mp_report(mp, mp->slow->fatal_put_call
					 ? "already free (double free)"
					 : "double put (object already free), rejected:",
				     objs[i], mp->slow->fatal_put_call);
			continue;
		}
		memset(objs[i], RF_MEMPOOL_POISON, mp->elt_size);
		ok[k++] = objs[i];
		if (k == RF_ARRAY_SIZE(ok)) {
			rf_mp_put_raw(mp, ok, k);
			k = 0;
		}
	}
	if (k)
		rf_mp_put_raw(mp, ok, k);
}
