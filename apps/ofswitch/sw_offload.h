/*
 * apps/ofswitch/sw_offload.h: ringflow-switch --offload (issue 24, part 2): decided microflows
 * forwarded by the xdp driver's offload table (ringflow/offload.h) before they reach a poller.
 *
 * The one idea: the pollers keep deciding, the agent keeps the kernel's table consistent.
 * A poller that forwards a frame by a flow whose program could be offloaded hands the frame's
 * key to the agent on a random 1 frame in SW_OFFLOAD_REQ_INV (as the EMC fills on 1 miss in
 * 8): every frame a poller sees is a miss of the kernel's table. The agent, the only writer
 * of the flow table, classifies the key again itself and installs an entry only when the
 * outcome is one the kernel can repeat for every frame the entry matches (sw_offload_decide).
 * Every FLOW_MOD that could change an installed microflow's winner removes its entries on the
 * agent thread before the FLOW_MOD takes effect in the classifier, so before any BARRIER reply
 * that follows. The entries' counters are folded into their flows and ports by the agent.
 *
 * Thread-safety: sw_offload_request is the pollers' (any number, each its own core index);
 * everything else is the agent's (one thread), or main's before the pollers start and after
 * they and the agent stopped. Every function takes a NULL offload as "no --offload": a no-op.
 */
#ifndef RINGFLOW_APPS_SW_OFFLOAD_H
#define RINGFLOW_APPS_SW_OFFLOAD_H

#include <stdio.h>

#include <ringflow/offload.h>

#include "sw.h"

#define SW_OFFLOAD_REQ_INV 8    /* a poller asks on a random 1 frame in 8 */
#define SW_OFFLOAD_RING 1024    /* requests in flight to the agent */
#define SW_OFFLOAD_LINK_NS 100000000ull /* link state to the tables every 100 ms */

/* Why a microflow was not offloaded (counted per request the agent looked at). */
enum sw_off_why {
	SW_OFF_OK,        /* offloadable */
	SW_OFF_NO_FLOW,   /* no flow matched (dropped or learned in userspace) */
	SW_OFF_PIPELINE,  /* write/clear actions, or actions and a goto_table in one flow */
	SW_OFF_METER,     /* a meter instruction */
	SW_OFF_GROUP,     /* a group action */
	SW_OFF_CONTROLLER,/* output to the controller */
	SW_OFF_OUTPUTS,   /* several outputs, FLOOD/ALL, or a port without a fast path */
	SW_OFF_ACTION,    /* a rewrite the kernel table does not run */
	SW_OFF_MATCH,     /* the decision depends on a field the entry cannot match exactly */
	SW_OFF_FULL,      /* the port's table (entries or masks) is full: userspace keeps it */
	SW_OFF_ERROR,     /* the driver refused the entry otherwise */
	SW_OFF_N
};

/* One microflow's entry as sw_offload_decide builds it. */
struct sw_off_plan {
	struct rf_offload_match m;
	struct rf_offload_action a[RF_OFFLOAD_MAX_ACTIONS];
	unsigned n;
	int out;        /* output port index, -1: drop */
	int tx_adj;     /* bytes a frame gains on its way out (push +4, pop of a known tag -4) */
	struct sw_key det; /* the key bytes every frame the entry matches has as k has them */
};

struct sw_offload;

/* --offload over dp's ports (opened, before the pollers start): a port without a fast path
 * gets one line on stderr and stays in userspace. NULL when no port has one (said in one line
 * too) or on no memory. */
struct sw_offload *sw_offload_create(struct sw_dp *dp);
/* Removes every entry it installed and frees it (pollers and agent stopped). */
void sw_offload_destroy(struct sw_offload *o);
/* Poller side, per frame forwarded by flow program acts: maybe ask the agent to offload k. */
void sw_offload_request(struct sw_offload *o, unsigned core, const struct sw_key *k,
			const struct sw_actions *acts);

/* Can microflow k (in port index k->in_port - 1) whose table-0 answer is f, decided by the
 * subtables whose masks OR to `consulted`, be repeated by the kernel? SW_OFF_OK with *p
 * filled, or the reason (a flow that needs the pipeline: SW_OFF_PIPELINE; see
 * sw_offload_decide_chain). dp: the ports (fast[i]: port i has an offload table). Pure. */
enum sw_off_why sw_offload_decide(const struct sw_dp *dp, const bool *fast, const struct sw_key *k,
				  const struct sw_flow *f, const struct sw_key *consulted,
				  struct sw_off_plan *p);
/* Table 0's answer for k (metadata 0) and the OR of the masks of every subtable the walk
 * looked at (sw_offload_cls.c). Writer or registered reader. */
struct sw_flow *sw_offload_classify(struct sw_table *t, const struct sw_key *k,
				    struct sw_key *consulted);
/* The same in table tbl for metadata md, ORing into *consulted (not cleared first). */
struct sw_flow *sw_offload_classify_md(struct sw_table *t, unsigned tbl, uint64_t md,
				       const struct sw_key *k, struct sw_key *consulted);

/* The flows a microflow's pipeline goes through, with the metadata each was looked up with:
 * the steps before the last only pass the frame on (goto_table, write_metadata, nothing
 * else), so the frame and its key are the same in every table, and the last flow's program
 * is all that acts on it. */
struct sw_off_chain {
	unsigned n;
	const struct sw_flow *f[SW_N_TABLES];
	uint64_t md[SW_N_TABLES];
};
/* Does program x only pass the frame on to a later table (no action, no write/clear, no
 * meter; goto_table, maybe write_metadata)? */
bool sw_offload_passes_on(const struct sw_actions *x);
/* Table 0's answer f for k (and *consulted from its walk), followed through the tables while
 * each flow only passes the frame on (sw_offload_passes_on), ORing every walk's masks into
 * *consulted. The chain ends at the first flow that does more, or with no flow (n counts the
 * flows found; SW_OFF_NO_FLOW when a table had none). Agent (or a registered reader). */
enum sw_off_why sw_offload_follow(struct sw_table *t, const struct sw_key *k, const struct sw_flow *f,
				  struct sw_off_chain *ch, struct sw_key *consulted);
/* sw_offload_decide for a chain: every step's program without a meter, the last one's as
 * sw_offload_decide judges a table-0 flow's. */
enum sw_off_why sw_offload_decide_chain(const struct sw_dp *dp, const bool *fast,
					const struct sw_key *k, const struct sw_off_chain *ch,
					const struct sw_key *consulted, struct sw_off_plan *p);

/* Agent: install what the pollers asked for; tell the tables the links' state now and then. */
void sw_offload_poll(struct sw_offload *o, struct sw_table *t, uint64_t now_ns);
/* Agent, before flow f (table, match, mask, priority set) becomes visible: remove the entries
 * whose winner f could change. */
void sw_offload_flow_new(struct sw_offload *o, const struct sw_flow *f);
/* Agent, before f's program changes or f leaves the table: its entries' counters are folded
 * into f, and the entries removed. */
void sw_offload_flow_gone(struct sw_offload *o, struct sw_flow *f);
/* Agent: fold every entry's counters into its flow and ports (stats requests, idle checks). */
void sw_offload_sync(struct sw_offload *o);
/* Any thread: what the kernel received on port index i, and sent out of it, as of the
 * agent's last sync (once a second, and before every stats reply). */
void sw_offload_port_counts(const struct sw_offload *o, unsigned i, uint64_t *rx_pkts,
			    uint64_t *rx_bytes, uint64_t *tx_pkts, uint64_t *tx_bytes);
/* Agent: the frames the kernel forwarded so far (folded by sw_offload_sync) that went
 * through table tbl (each matched a flow there): TABLE stats add them to its lookups and
 * matches. */
uint64_t sw_offload_hits(const struct sw_offload *o, unsigned tbl);
/* The counters under "app/offload_*" in the stats registry (ringflow-ctl stats app). */
struct rf_stats;
void sw_offload_stats_register(struct sw_offload *o, struct rf_stats *reg);
/* One line: entries, hits, what was not offloaded and why. */
void sw_offload_report(const struct sw_offload *o, FILE *out);

#endif
