/*
 * apps/ofswitch/sw_meter.h: OpenFlow 1.3 meters of ringflow-switch (issue 25): the meter
 * table the agent keeps (sw_meter.c), the token buckets the pollers run, and the agent's
 * METER_MOD and meter multiparts (sw_meter_agent.c).
 *
 * Contract. The agent is the only writer: it adds, modifies and deletes meters and is the
 * only one that looks them up by id. Pollers reach a meter only through a flow's action
 * program (struct sw_actions.meter) and call sw_meter_apply, from any number of cores at
 * once, with no lock: a band's bucket is one 64-bit word changed by compare-and-swap, its
 * counters are atomic adds. A MODIFY publishes a new configuration (bands and fresh buckets)
 * with one release store; the old one and a deleted meter are freed after a QSBR grace
 * period (the caller's retire function), so a poller holding either stays safe.
 *
 * Why one shared bucket per band and not one per core: per-core buckets with rate/ncores
 * need no atomic RMW, but a meter's traffic is rarely spread evenly over the cores (RSS puts
 * one flow on one core), and then one core's share limits the flow to rate/ncores while the
 * other shares go unused. The shared bucket is exact for any spread; its price is one CAS
 * per frame and band on a line the cores of that meter share, paid only by metered frames,
 * which are the ones a meter is there to slow down.
 *
 * The bucket is a GCRA ("virtual scheduling", the token bucket written as one number): tat,
 * the time the bucket would be full again, in ticks of 1/16 ns since the configuration's
 * epoch. A frame costing inc ticks (its bits, or 1 packet, at the band's rate) conforms when
 * the bucket is full (tat <= now) or when tat - now + inc <= cap (the burst, in time); a
 * conforming frame moves tat to max(tat, now) + inc, a frame that exceeds leaves it. So a
 * full bucket always passes one frame, however large (it then owes its cost), and over any
 * long run the band passes rate x time + burst. Time is the caller's (CLOCK_MONOTONIC ns in
 * the datapath; tests inject it).
 *
 * Bands: the band with the highest rate among those the frame exceeds applies (1.3.5
 * section 5.7): DROP drops it, DSCP_REMARK raises the drop precedence of an IPv4/IPv6 DSCP
 * (AF classes: bits 1-2) by prec_level, up to 3, checksum fixed; non-IP frames pass as they
 * are. Without the BURST flag a band's burst is 1 s of its rate, as OVS sets it (a shorter one
 * loses the tokens of every gap longer than itself in a jittery sender's stream).
 */
#ifndef RINGFLOW_APPS_SW_METER_H
#define RINGFLOW_APPS_SW_METER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <ringflow/common.h>

#include "of_meter.h"

struct sw_flow;

#define SW_MAX_METERS 4096       /* OUT_OF_METERS beyond (METER_FEATURES max_meter) */
#define SW_METER_MAX_BANDS 8     /* OUT_OF_BANDS beyond */
#define SW_METER_TICKS_PER_NS 16 /* bucket time unit: 1/16 ns */
#define SW_METER_DEFAULT_BURST_NS 1000000000ull /* no BURST flag: 1 s of the rate (OVS) */
#define SW_METER_BUCKETS 256     /* the agent's id hash */

struct sw_meter_band {
	RF_CACHE_ALIGNED _Atomic uint64_t tat; /* CAS by pollers (relaxed: see band_take) */
	_Atomic uint64_t pkts, bytes;          /* frames this band applied to (atomic adds) */
	uint64_t cap;      /* burst in ticks */
	uint64_t per_unit; /* ticks per packet (PKTPS) or per byte x rate (KBPS: / rate) */
	uint32_t rate;
	uint8_t type, prec_level;
};

/* A meter's configuration: immutable but for the buckets and band counters; replaced whole. */
struct sw_meter_cfg {
	uint64_t epoch_ns; /* bucket time 0 (buckets start full) */
	bool pktps;
	uint8_t nbands;
	struct of_meter_config wire; /* as the controller sent it: METER_CONFIG echoes it */
	struct sw_meter_band band[SW_METER_MAX_BANDS];
};

struct sw_meter {
	_Atomic(struct sw_meter_cfg *) cfg; /* acquire by pollers, pairs with the agent's release */
	uint32_t id;
	RF_CACHE_ALIGNED _Atomic uint64_t pkts_in, bytes_in; /* atomic adds by pollers */
	/* agent only */
	RF_CACHE_ALIGNED uint64_t created_ns;
	uint32_t nflows; /* scratch for METER stats */
	bool dead;       /* deleted: its flows go, then it is retired */
	struct sw_meter *hnext;
};

/* The agent's meters. Zero it to start (sw_meters_init). */
struct sw_meters {
	struct sw_meter *bucket[SW_METER_BUCKETS];
	struct sw_meter *dead; /* deleted, waiting for their flows to go (chained by hnext) */
	unsigned n;
};

/* What the agent side hands back: retire(ctx, p) frees p after a grace period. */
typedef void (*sw_meter_retire_fn)(void *ctx, void *p);

/* ---- the datapath (any poller, lock-free) ---- */

/* Meters frame f[0..len) at now_ns. Returns 0 (go on with the actions; a DSCP_REMARK band
 * may have rewritten f) or -1 (a DROP band applies: drop it). */
int sw_meter_apply(struct sw_meter *m, uint8_t *f, uint32_t len, uint64_t now_ns);
/* Raises the DSCP drop precedence of the IPv4/IPv6 frame f by prec (bits 1-2, at most 3),
 * IPv4 checksum fixed. 0, or -1 when f is not IP (unchanged). */
int sw_meter_remark(uint8_t *f, uint32_t len, uint8_t prec);
/* CLOCK_MONOTONIC in ns (the datapath's clock for sw_meter_apply). */
uint64_t sw_meter_now(void);

/* ---- the agent (one thread) ---- */

/* Checks a METER_MOD's flags and bands (ADD/MODIFY). 0, or the OFPMMFC_* code. */
int sw_meter_check(const struct of_meter_config *c);
/* A configuration for checked c with buckets full at now_ns, or NULL (no memory). */
struct sw_meter_cfg *sw_meter_cfg_new(const struct of_meter_config *c, uint64_t now_ns);
struct sw_meter *sw_meters_find(const struct sw_meters *ms, uint32_t id);
/* Adds meter c->meter_id (checked): 0, -EEXIST, -ENOSPC (SW_MAX_METERS), -ENOMEM. */
int sw_meters_add(struct sw_meters *ms, const struct of_meter_config *c, uint64_t now_ns);
/* Gives meter c->meter_id the configuration c (checked), fresh buckets and band counters,
 * at once for every poller; the old one goes to retire. 0, -ENOENT, -ENOMEM. */
int sw_meters_modify(struct sw_meters *ms, const struct of_meter_config *c, uint64_t now_ns,
		     sw_meter_retire_fn retire, void *ctx);
/* Marks meter id (OFPM_ALL: every meter) deleted and takes it out of the index; its flows
 * must be removed (sw_meter_dead says which), then sw_meters_reap. Returns how many. */
unsigned sw_meters_kill(struct sw_meters *ms, uint32_t id);
static inline bool sw_meter_dead(const struct sw_meter *m)
{
	return m->dead;
}
/* Retires the killed meters and their configurations. */
void sw_meters_reap(struct sw_meters *ms, sw_meter_retire_fn retire, void *ctx);
/* Frees every meter now (no poller runs any more). */
void sw_meters_free(struct sw_meters *ms);

/* The agent's part (sw_meter_agent.c): sw_meter_handle answers a parsed meter message m.
 * flows: the master list (f->next), for METER stats' flow_count. Replies go through
 * send(ctx, bytes, n) built in buf[0..cap). Returns 0 (done), 1 (meters were killed:
 * sw_meter_cascade, then sw_meters_reap) or -1 with the ERROR to send in *etype, *ecode. */
struct sw_meter_io {
	void (*send)(void *ctx, const uint8_t *b, size_t n);
	sw_meter_retire_fn retire;
	void *ctx;
	uint8_t *buf;
	size_t cap;
};
/* After a delete: calls unlink(ctx, f) for every flow of *flows (chained by f->next) whose
 * meter is dead; unlink must take f out of the list. */
void sw_meter_cascade(struct sw_flow **flows, void (*unlink)(void *ctx, struct sw_flow *f),
		      void *ctx);
int sw_meter_handle(struct sw_meters *ms, const struct of_mmsg *m, const struct sw_flow *flows,
		    uint64_t now_ns, const struct sw_meter_io *io, uint16_t *etype,
		    uint16_t *ecode);

#endif
