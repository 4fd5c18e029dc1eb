/*
 * apps/ofswitch/sw_meter.c: the meter table and its token buckets (the design, and why one
 * shared bucket per band, is in sw_meter.h).
 *
 * The datapath half (sw_meter_apply) runs on every poller at once with no lock: the only
 * shared write per band is the CAS on tat, plus relaxed atomic adds to counters. The agent
 * half keeps meters in a small id hash and replaces a configuration as a whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw.h"
#include "sw_rewrite_pvt.h"
#include "sw_meter.h"

#define TICKS_PER_S (1000000000ull * SW_METER_TICKS_PER_NS)
/* Ticks per byte x rate in kbit/s: 8 bits, 1000 bits a kbit. */
#define KBPS_PER_BYTE (8ull * TICKS_PER_S / 1000ull)
#define MAX_BURST 1000000000u /* burst (kbit or packets) kept below u64 overflow of ticks */

uint64_t sw_meter_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the datapath ---- */

/* Takes inc ticks from band b at now if the frame conforms (sw_meter.h: a full bucket, or
 * room for it within the burst). Relaxed is enough: tat guards no other data, and a CAS
 * on one location is ordered with every other CAS on it, so no two frames take the same
 * tokens. */
static bool band_take(struct sw_meter_band *b, uint64_t now, uint64_t inc)
{
	uint64_t tat = atomic_load_explicit(&b->tat, memory_order_relaxed);
	for (;;) {
		bool full = tat <= now;
		if (!full && tat - now + inc > b->cap)
			return false;
		uint64_t next = (full ? now : tat) + inc;
		if (atomic_compare_exchange_weak_explicit(&b->tat, &tat, next, memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	}
}

int sw_meter_remark(uint8_t *f, uint32_t len, uint8_t prec)
{
	uint32_t off = sw_l3_type_off(f, len);
	if (!off)
		return -1;
	uint16_t type = sw_get16(f + off);
	const uint8_t *ip = f + off + 2;
	uint8_t dscp;
	if (type == 0x0800 && len >= off + 2 + 20 && (ip[0] >> 4) == 4)
		dscp = ip[1] >> 2;
	else if (type == 0x86dd && len >= off + 2 + 40 && (ip[0] >> 4) == 6)
		dscp = (uint8_t)(((ip[0] & 0x0f) << 4 | ip[1] >> 4) >> 2);
	else
		return -1;
	unsigned dp = ((dscp >> 1) & 3u) + prec;
	if (dp > 3)
		dp = 3;
	return sw_act_set_dscp(f, len, (uint8_t)((dscp & ~6u) | dp << 1));
}

int sw_meter_apply(struct sw_meter *m, uint8_t *f, uint32_t len, uint64_t now_ns)
{
	/* Pairs with the agent's release store in sw_meters_modify/add: a complete config. */
	struct sw_meter_cfg *c = atomic_load_explicit(&m->cfg, memory_order_acquire);
	atomic_fetch_add_explicit(&m->pkts_in, 1, memory_order_relaxed); /* counters only */
	atomic_fetch_add_explicit(&m->bytes_in, len, memory_order_relaxed);
	uint64_t now = now_ns > c->epoch_ns ? (now_ns - c->epoch_ns) * SW_METER_TICKS_PER_NS : 0;
	int hit = -1;
	for (unsigned i = 0; i < c->nbands; i++) {
		struct sw_meter_band *b = &c->band[i];
		uint64_t inc = c->pktps ? b->per_unit : (uint64_t)len * b->per_unit / b->rate;
		if (!band_take(b, now, inc) && (hit < 0 || b->rate > c->band[hit].rate))
			hit = (int)i;
	}
	if (hit < 0)
		return 0;
	struct sw_meter_band *b = &c->band[hit];
	atomic_fetch_add_explicit(&b->pkts, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->bytes, len, memory_order_relaxed);
	if (b->type == OFPMBT_DROP)
		return -1;
	sw_meter_remark(f, len, b->prec_level);
	return 0;
}

/* ---- the agent ---- */

int sw_meter_check(const struct of_meter_config *c)
{
	if (c->flags & ~(OFPMF_KBPS | OFPMF_PKTPS | OFPMF_BURST | OFPMF_STATS))
		return OFPMMFC_BAD_FLAGS;
	if ((c->flags & OFPMF_KBPS) && (c->flags & OFPMF_PKTPS))
		return OFPMMFC_BAD_FLAGS;
	if (c->nbands_wire > SW_METER_MAX_BANDS)
		return OFPMMFC_OUT_OF_BANDS;
	for (unsigned i = 0; i < c->nbands; i++) {
		const struct of_meter_band *b = &c->band[i];
		if (b->type != OFPMBT_DROP && b->type != OFPMBT_DSCP_REMARK)
			return OFPMMFC_BAD_BAND;
		if (b->rate == 0)
			return OFPMMFC_BAD_RATE;
		if ((c->flags & OFPMF_BURST) && (b->burst == 0 || b->burst > MAX_BURST))
			return OFPMMFC_BAD_BURST;
		if (b->type == OFPMBT_DSCP_REMARK && b->prec_level > 3)
			return OFPMMFC_BAD_BAND_VALUE; /* three drop precedences: more means nothing */
	}
	return 0;
}

/* Meters and configurations hold cache-aligned members: aligned allocations. */
static void *alloc_aligned(size_t size)
{
	size = (size + RF_CACHE_LINE - 1) / RF_CACHE_LINE * RF_CACHE_LINE;
	void *p = aligned_alloc(RF_CACHE_LINE, size);
	if (p)
		memset(p, 0, size);
	return p;
}

struct sw_meter_cfg *sw_meter_cfg_new(const struct of_meter_config *c, uint64_t now_ns)
{
	struct sw_meter_cfg *x = alloc_aligned(sizeof(*x));
	if (!x)
		return NULL;
	x->epoch_ns = now_ns;
	x->pktps = (c->flags & OFPMF_PKTPS) != 0; /* neither flag: kbps, the default */
	x->wire = *c;
	x->wire.command = 0;
	x->nbands = (uint8_t)(c->nbands < SW_METER_MAX_BANDS ? c->nbands : SW_METER_MAX_BANDS);
	for (unsigned i = 0; i < x->nbands; i++) {
		struct sw_meter_band *b = &x->band[i];
		b->rate = c->band[i].rate ? c->band[i].rate : 1;
		b->type = (uint8_t)c->band[i].type;
		b->prec_level = c->band[i].prec_level;
		b->per_unit = x->pktps ? TICKS_PER_S / b->rate : KBPS_PER_BYTE;
		if (c->flags & OFPMF_BURST) { /* burst kbit or packets, as time at the rate */
			uint64_t burst = c->band[i].burst < MAX_BURST ? c->band[i].burst : MAX_BURST;
			b->cap = burst * TICKS_PER_S / b->rate;
		} else {
			b->cap = SW_METER_DEFAULT_BURST_NS * SW_METER_TICKS_PER_NS;
		}
		atomic_init(&b->tat, 0); /* full */
	}
	return x;
}

struct sw_meter *sw_meters_find(const struct sw_meters *ms, uint32_t id)
{
	for (struct sw_meter *m = ms->bucket[id % SW_METER_BUCKETS]; m; m = m->hnext)
		if (m->id == id)
			return m;
	return NULL;
}

int sw_meters_add(struct sw_meters *ms, const struct of_meter_config *c, uint64_t now_ns)
{
	if (sw_meters_find(ms, c->meter_id))
		return -EEXIST;
	if (ms->n >= SW_MAX_METERS)
		return -ENOSPC;
	struct sw_meter *m = alloc_aligned(sizeof(*m));
	struct sw_meter_cfg *cfg = sw_meter_cfg_new(c, now_ns);
	if (!m || !cfg) {
		free(m);
		free(cfg);
		return -ENOMEM;
	}
	m->id = c->meter_id;
	m->created_ns = now_ns;
	/* No poller can reach m before a flow names it; the flow's publication (release)
	 * carries this store with it. */
	atomic_store_explicit(&m->cfg, cfg, memory_order_release);
	struct sw_meter **head = &ms->bucket[m->id % SW_METER_BUCKETS];
	m->hnext = *head;
	*head = m;
	ms->n++;
	return 0;
}

int sw_meters_modify(struct sw_meters *ms, const struct of_meter_config *c, uint64_t now_ns,
		     sw_meter_retire_fn retire, void *ctx)
{
	struct sw_meter *m = sw_meters_find(ms, c->meter_id);
	if (!m)
		return -ENOENT;
	struct sw_meter_cfg *cfg = sw_meter_cfg_new(c, now_ns);
	if (!cfg)
		return -ENOMEM;
	/* Pairs with the pollers' acquire load in sw_meter_apply: a complete configuration. */
	struct sw_meter_cfg *old = atomic_exchange_explicit(&m->cfg, cfg, memory_order_acq_rel);
	retire(ctx, old);
	return 0;
}

unsigned sw_meters_kill(struct sw_meters *ms, uint32_t id)
{
	unsigned n = 0;
	for (unsigned b = 0; b < SW_METER_BUCKETS; b++) {
		if (id != OFPM_ALL && b != id % SW_METER_BUCKETS)
			continue;
		for (struct sw_meter **pp = &ms->bucket[b]; *pp;) {
			struct sw_meter *m = *pp;
			if (id != OFPM_ALL && m->id != id) {
				pp = &m->hnext;
				continue;
			}
			*pp = m->hnext;
			m->dead = true;
			m->hnext = ms->dead;
			ms->dead = m;
			ms->n--;
			n++;
		}
	}
	return n;
}

void sw_meters_reap(struct sw_meters *ms, sw_meter_retire_fn retire, void *ctx)
{
	while (ms->dead) {
		struct sw_meter *m = ms->dead;
		ms->dead = m->hnext;
		retire(ctx, atomic_load_explicit(&m->cfg, memory_order_relaxed)); /* agent's own */
		retire(ctx, m);
	}
}

static void free_now(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

void sw_meters_free(struct sw_meters *ms)
{
	sw_meters_kill(ms, OFPM_ALL);
	sw_meters_reap(ms, free_now, NULL);
}
