/*
 * apps/ofswitch/sw_pinrate.h: the PACKET_IN rate limit of one controller connection, a
 * token bucket as Open vSwitch's controller_rate_limit / controller_burst_limit (its
 * ofproto/pinsched.c): `rate` tokens a second, at most `burst` saved, one token a
 * PACKET_IN. Unlike pinsched, what finds the bucket empty is dropped and counted, never
 * queued: a flood to the controller costs the switch no memory, and the controller sees at
 * most rate * seconds + burst PACKET_INs. Agent thread only (no concurrency).
 */
#ifndef RINGFLOW_APPS_SW_PINRATE_H
#define RINGFLOW_APPS_SW_PINRATE_H

#include <stdbool.h>
#include <stdint.h>

#define SW_PINRATE_MAX 10000000u /* --packet-in-rate's largest PPS and BURST */

struct sw_pinrate {
	uint32_t rate;   /* tokens a second; 0: no limit */
	uint32_t burst;  /* the bucket's size in tokens (>= 1 when rate > 0) */
	uint64_t tokens; /* in token-nanoseconds (1 token = 1e9): no rounding on refill */
	uint64_t last_ns;
};

/* A full bucket of rate/burst at now_ns (burst 0: rate / 4, at least 1, as OVS; rate 0: the
 * bucket lets everything through). */
void sw_pinrate_init(struct sw_pinrate *b, uint32_t rate, uint32_t burst, uint64_t now_ns);
/* Takes a token for one PACKET_IN at now_ns: true (send it), or false (drop it: the bucket
 * is empty). now_ns never goes backwards (CLOCK_MONOTONIC). */
bool sw_pinrate_take(struct sw_pinrate *b, uint64_t now_ns);
/* Parses --packet-in-rate's "PPS[,BURST]" (PPS 0: off; BURST 0 or absent: PPS / 4, at least
 * 1). 0, or -1 (bad syntax, or above SW_PINRATE_MAX). */
int sw_pinrate_parse(const char *s, uint32_t *rate, uint32_t *burst);

#endif
