/*
 * apps/ofswitch/sw_group.h: the group table of ringflow-switch (OpenFlow 1.3 section 5.6):
 * all, select, indirect and fast-failover groups, chained as the spec allows, never in a loop.
 *
 * The one idea, as for a flow's actions: the pollers only read. A group is an immutable
 * program (struct sw_group: its type and buckets, each bucket a whole action program)
 * published in a slot with one release store; GROUP_MOD MODIFY publishes a new program in
 * the same slot, DELETE stores NULL, and the old program is retired through the flow table's
 * QSBR retire list (freed after a grace period). The agent is the only writer. A GROUP
 * action carries the group id and its slot; a poller that finds another id (or nothing)
 * in the slot drops the frame, so a slot reused after a delete never sends a frame through
 * the wrong group. Counters are per group per core (a line each), kept across MODIFY.
 *
 * Files: sw_group.c (the table, GROUP_MOD's checks), sw_group_dp.c (the pollers' side:
 * bucket choice and execution), sw_group_agent.c (multipart replies, the deletion cascade).
 */
#ifndef RINGFLOW_APPS_SW_GROUP_H
#define RINGFLOW_APPS_SW_GROUP_H

#include "of_group.h"
#include "sw.h"

#define SW_MAX_GROUPS 4096      /* OUT_OF_GROUPS beyond (fits a sw_op's 16-bit max_len) */
#define SW_GROUP_MAX_BUCKETS OF_MAX_BUCKETS
_Static_assert(SW_GROUP_MAX_BUCKETS <= 32, "a select group's live buckets fit a 32-bit mask");
#define SW_GROUP_MAX_DEPTH 8    /* groups in a chain (CHAINING_UNSUPPORTED beyond) */

/* One core's counters of one group: the group's and each bucket's. */
struct sw_group_ctr {
	RF_CACHE_ALIGNED _Atomic uint64_t pkts; /* written by one poller (relaxed) */
	_Atomic uint64_t bytes;
	_Atomic uint64_t bpkts[SW_GROUP_MAX_BUCKETS], bbytes[SW_GROUP_MAX_BUCKETS];
};

struct sw_bucket {
	uint16_t weight;
	uint16_t watch_slot;  /* watch_group's slot (when watch_group != OFPG_ANY) */
	uint32_t watch_port;  /* OFPP_ANY: none */
	uint32_t watch_group; /* OFPG_ANY: none */
	struct sw_actions acts;
};

/* A published group: immutable; replaced as a whole. */
struct sw_group {
	uint32_t id;
	uint8_t type;  /* OFPGT_* */
	uint8_t nb;    /* buckets */
	uint32_t total_weight; /* select: sum of the weights */
	uint64_t created_ns;   /* the ADD (MODIFY keeps it, as the counters) */
	struct sw_group_ctr *ctr; /* [ncores], shared by the programs of one group */
	struct sw_bucket b[];
};

struct sw_groups {
	/* acquire by pollers, pairs with the agent's release in publish() (sw_group.c) */
	_Atomic(struct sw_group *) slot[SW_MAX_GROUPS];
	/* link state per port, written by the agent (relaxed: a hint, not a publication) */
	_Atomic uint8_t port_up[SW_MAX_PORTS];
	struct sw_dp *dp; /* its table's retire list, nports, ncores */
	unsigned n;       /* groups present (agent) */
};

/* A table for dp (every port up), or NULL. The agent calls it before the pollers run. */
struct sw_groups *sw_groups_create(struct sw_dp *dp);
/* Frees the table and every group; no reader may use it any more. */
void sw_groups_free(struct sw_groups *g);

/* Agent side. The slot of group id, or -1. */
int sw_group_find(const struct sw_groups *g, uint32_t id);
/* Carries out a parsed GROUP_MOD: 0 (*deleted: groups went away, flows naming them must go:
 * sw_group_orphaned), or -1 with the ERROR in *etype, *ecode; a refused one changes nothing. */
int sw_group_mod(struct sw_groups *g, const struct of_group_mod *m, uint64_t now_ns,
		 bool *deleted, uint16_t *etype, uint16_t *ecode);
/* Does program x name a group that no longer exists (the deletion cascade, spec 6.5)? */
bool sw_group_orphaned(const struct sw_groups *g, const struct sw_actions *x);
/* Does program x forward to group id? */
bool sw_group_named(const struct sw_actions *x, uint32_t id);
/* Port port_no (1-based) went up or down (fast failover, select liveness). */
void sw_group_set_link(struct sw_groups *g, uint32_t port_no, bool up);
/* The multipart reply to a GROUP, GROUP_DESC or GROUP_FEATURES request (of_group_mp_parse
 * said mp_type, group_id), in as many messages as it takes, each through send(ctx, buf, n).
 * flows: the master list (ref_count). buf: a message's room (OF_MAX_MSG_LEN). */
void sw_group_multipart(const struct sw_groups *g, const struct sw_flow *flows,
			uint16_t mp_type, uint32_t group_id, uint32_t xid, uint64_t now_ns,
			uint8_t *buf, void (*send)(void *ctx, const uint8_t *b, size_t n),
			void *ctx);

/* A 1.3 message b (len bytes) of the agent's: 0 when it is no group message (hand it on);
 * 1 when done (GROUP_MOD carried out, *deleted as sw_group_mod says; a multipart's replies
 * sent through send); -1 refused: send the ERROR *etype, *ecode (malformed, or refused). */
int sw_group_handle(struct sw_groups *g, const struct sw_flow *flows, const uint8_t *b,
		    size_t len, uint64_t now_ns, uint8_t *buf,
		    void (*send)(void *ctx, const uint8_t *b, size_t n), void *ctx, bool *deleted,
		    uint16_t *etype, uint16_t *ecode);

/* Poller side (sw_group_dp.c): runs the GROUP op o on frame b (as sw_dp_apply: consume
 * says b goes to the group, else the group works on a copy). */
void sw_group_run(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_op *o,
		  const struct sw_flow *f, bool consume);
/* The bucket a select group sends the frame (key k) to: a hash of its L2-L4 fields over
 * the live buckets, weighted; -1 when none is live. Exposed for the tests. */
int sw_group_select(const struct sw_groups *g, const struct sw_group *grp,
		    const struct sw_key *k);
/* Is bucket i of grp live (its watch port up, its watch group live)? */
bool sw_group_bucket_live(const struct sw_groups *g, const struct sw_group *grp, unsigned i,
			  unsigned depth);

#endif
