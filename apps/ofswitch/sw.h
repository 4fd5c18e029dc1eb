/*
 * apps/ofswitch/sw.h: what the files of ringflow-switch share: the flow key, a flow (rule),
 * the flow table (sw_table.c, changed in place), the ports and the datapath state.
 *
 * The one idea: the pollers only ever read the flow table. The agent thread is its only
 * writer and changes it in place, one flow at a time (sw_table.c: a tuple-space-search
 * classifier on ringflow's lock-free hash, one subtable per mask); every change is one
 * release store a poller sees whole or not at all. What a change removes (a flow, an action
 * list, a subtable) is handed to a retire list and freed after a QSBR grace period (every
 * poller has passed a quiescent state, so none still holds it), batched so the agent waits
 * for at most one grace period every few milliseconds. Pollers never lock and never wait for
 * the agent. A flow's actions are swapped the same way (MODIFY keeps the flow and its
 * counters). Counters are per flow per core, each core on its own cache line.
 *
 * The module, file by file (docs/switch.md "Architecture"):
 *   sw_main.c          options, ports, pollers, the agent thread, the stats line
 *   datapath (the pollers):
 *   sw_key.c           a frame -> struct sw_key
 *   sw_emc.c           the per-core caches (exact-match, megaflow) and sw_table_lookup
 *   sw_table.c         the classifier (tuple space on the lock-free hash), updated in place
 *   sw_dp.c            the poll functions: key, EMC, classifier, action program, tx batches
 *   sw_pipe.c          tables 1.., goto_table, metadata, the action set
 *   sw_outcome.c       per core, a megaflow's whole pipeline as one cached program
 *   sw_rewrite.c       frame rewrites on Ethernet, VLAN, IPv4/IPv6, L4 (the sw_act_* calls)
 *   sw_rewrite_mpls.c  frame rewrites on MPLS and PBB headers
 *   sw_group_dp.c, sw_meter.c  groups' buckets and meters' token buckets on the fast path
 *   the controller's lists -> programs (run by the agent, checked before publishing):
 *   sw_match.c         of_match <-> (value, mask) over the key
 *   sw_actions.c       an action list -> a checked struct sw_actions program
 *   sw_insts.c         the other instructions (goto, metadata, write/clear actions)
 *   the agent (one thread, the only writer of the table; sw_agent_pvt.h):
 *   sw_agent.c         connections, handshake, roles, the dispatch of messages, timers
 *   sw_agent_flow.c    the master flow list, FLOW_MOD, FLOW_REMOVED, expiry
 *   sw_agent_stats.c   multipart replies, TABLE_FEATURES, PORT_STATUS
 *   sw_agent_pkt.c     PACKET_IN (from the to_ctl ring) and PACKET_OUT (to poller 0)
 *   sw_pinrate.c       the PACKET_IN rate limit of a connection (a token bucket)
 *   sw_agent_obs.c     the agent's counters and gauges for the control socket and --metrics
 *   sw_group.c, sw_group_agent.c, sw_meter_agent.c  GROUP_MOD, METER_MOD, their multiparts
 *   sw_role.c, sw_tables.c  roles and async config; table stats and features
 *   sw_ctlcmd.c, sw_portname.c  the control socket's `ports`/`flows`; ports' stats names
 *   sw_offload.c, sw_offload_cls.c  --offload: decided microflows into the xdp ports' kernel
 *                      tables, removed before a FLOW_MOD takes effect (sw_offload.h)
 */
#ifndef RINGFLOW_APPS_SW_H
#define RINGFLOW_APPS_SW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ringflow/common.h>
#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>

#include "of.h"

#define SW_MAX_PORTS 15      /* one poll function per port per core, + 1 on core 0 */
#define SW_MAX_CORES 8
#define SW_MAX_FLOWS 131072  /* TABLE_FULL beyond this (a power of two) */
#define SW_EMC_ENTRIES 8192  /* exact-match cache entries per core (4-way, a power of two) */
#define SW_MFC_ENTRIES 65536 /* megaflow cache entries per core (4-way, a power of two) */
#define SW_OUT_ENTRIES 2048  /* pipeline outcome cache entries per core (4-way, a power of
				two; 840 bytes each with the key) */
#define SW_BURST 32
#define SW_PO_SLOTS 256      /* PACKET_OUTs in flight to poller 0 */
#define SW_N_TABLES 8        /* flow tables of the pipeline (sw_pipe.c), 0..SW_N_TABLES-1 */
#define SW_NO_GOTO 0         /* sw_actions.goto_table: the pipeline ends with this flow (a
				 goto only leads to a later table, never to 0) */

/* The flow key: every field the classifier can match, parsed once per frame. Fields a frame
 * does not have are zero. Fixed layout, no padding holes (it is a hash key, at most
 * RF_HASH_KEY_MAX = 64 bytes). Some slots are shared, as in OVS, and the 1.3 prerequisites
 * keep them apart (a flow matching ipv4_src also matches eth_type=0x0800, so an ARP frame's
 * spa in the same slot can never match it): */
struct sw_key {
	uint32_t in_port;  /* OpenFlow port number (1-based) */
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	uint16_t eth_type; /* after at most one 802.1Q or 802.1ad tag */
	uint16_t vlan;     /* OFPVID_PRESENT | vid when tagged, else 0 */
	uint8_t nw_src[16], nw_dst[16]; /* IPv6 addresses; IPv4 and ARP spa/tpa in bytes 0..3
					   (network byte order as on the wire), ARP sha/tha
					   in bytes 4..9 */
	uint8_t ip_proto;  /* IPv4 protocol, IPv6 upper-layer protocol (after the extension
			      headers) */
	uint8_t ip_dscp;   /* IPv4 TOS >> 2, IPv6 traffic class >> 2 */
	uint8_t vlan_pcp;  /* priority bits of the tag */
	uint8_t ip_ecn;    /* the low 2 bits of the TOS / traffic class */
	uint16_t tp_src, tp_dst; /* TCP/UDP/SCTP ports, or ICMPv4/ICMPv6 type/code (host order) */
	union {                  /* one per eth_type (host order): */
		uint16_t arp_op; /* ARP */
		uint32_t flabel; /* IPv6: flow label (bits 0..19), ipv6_exthdr flags << 20 */
		uint32_t mpls;   /* MPLS: the top label stack entry >> 8 (label << 4 | tc << 1 | bos) */
		uint32_t pbb_isid; /* PBB (0x88e7): the I-TAG's I-SID (24 bits) */
	};
};
#define SW_FLABEL 0xfffffu   /* the flow label's bits of sw_key.flabel */
#define SW_EXTHDR_SHIFT 20   /* where ipv6_exthdr (OFPIEH_*, 9 bits) sits in sw_key.flabel */
_Static_assert(sizeof(struct sw_key) == 64, "sw_key has padding");
_Static_assert(sizeof(struct sw_key) <= RF_HASH_KEY_MAX, "sw_key is an EMC key");
_Static_assert(SW_MAX_PORTS + 1 <= RF_RUNTIME_MAX_POLLS, "a poll function per port per core");

/* Parse frame[0..len) from port in_port into *k. Returns 0, or -1 when the frame is shorter
 * than its headers claim (the caller drops and counts it). */
int sw_key_parse(const uint8_t *frame, uint32_t len, uint32_t in_port, struct sw_key *k);
/* The upper-layer header of the IPv6 packet at ip6 (its 40-byte header and plen payload
 * bytes all present): walks up to SW_IPV6_MAX_EXT extension headers (hop-by-hop, routing,
 * destination options, fragment, AH). Returns its offset from ip6 with the protocol in
 * *proto (*later_frag: a fragment other than the first, so no L4 header), or -1 when an
 * extension header runs past the payload. */
#define SW_IPV6_MAX_EXT 8
int sw_ipv6_l4(const uint8_t *ip6, uint32_t plen, uint8_t *proto, bool *later_frag);

/* OFPIEH_* (1.3.5 section 7.2.3.9): what the extension-header walk saw (sw_key.c). */
enum {
	SW_IEH_NONEXT = 1 << 0, SW_IEH_ESP = 1 << 1, SW_IEH_AUTH = 1 << 2, SW_IEH_DEST = 1 << 3,
	SW_IEH_FRAG = 1 << 4, SW_IEH_ROUTER = 1 << 5, SW_IEH_HOP = 1 << 6, SW_IEH_UNREP = 1 << 7,
	SW_IEH_UNSEQ = 1 << 8
};
/* sw_ipv6_l4 that also returns the OFPIEH_* flags of the walk in *eh. */
int sw_ipv6_walk(const uint8_t *ip6, uint32_t plen, uint8_t *proto, bool *later_frag,
		 uint16_t *eh);

/* The fields outside the 64-byte key (sw_xmatch.c; docs/switch.md "The flow key"): the
 * ND target and link-layer address (22 bytes the key has no room for), the tunnel id (0 on
 * every port of this switch: none is a tunnel endpoint) and in_phy_port (== in_port: every
 * port is physical). A frame has them as a struct sw_xkey; a flow matches them as (value,
 * mask), which, like its metadata match, puts it in a subtable of its own: a lookup skips a
 * subtable whose extra match the frame's sw_xkey fails. Only ND frames (sw_key_is_nd) have
 * an sw_xkey the key does not determine, so only they bypass the EMC. */
struct sw_xkey {
	uint64_t tunnel_id;
	uint8_t nd_target[16];
	uint8_t nd_ll[6];    /* nd_sll of an NS (135), nd_tll of an NA (136) */
	uint8_t pad[2];
	uint32_t in_phy_port;
	uint32_t pad2;
};
struct sw_xmatch {
	struct sw_xkey v, m; /* v already masked; m all zero: no extra match */
};
/* An ICMPv6 neighbour solicitation or advertisement (its sw_xkey carries ND fields). */
static inline bool sw_key_is_nd(const struct sw_key *k)
{
	return k->eth_type == 0x86dd && k->ip_proto == 58 && (k->tp_src == 135 || k->tp_src == 136);
}
/* The frame's extra fields: in_phy_port from k, tunnel_id 0, and for an ND frame (k says
 * so) the target and link-layer option of frame[0..len) (absent option: zero). */
void sw_xkey_parse(const uint8_t *frame, uint32_t len, const struct sw_key *k,
		   struct sw_xkey *x);
/* Does the frame (k; xk NULL: an sw_xkey without ND fields) match x? */
bool sw_xmatch_ok(const struct sw_xmatch *x, const struct sw_key *k, const struct sw_xkey *xk);
/* The extra match of an OpenFlow match (all zero when it has none of those fields), and
 * back into *m (fields and masks). */
void sw_xmatch_of_match(const struct of_match *m, struct sw_xmatch *x);
void sw_xmatch_to_match(const struct sw_xmatch *x, struct of_match *m);
/* The agent's comparisons (sw_insts.c): is r within a (every frame a matches, r does), do
 * they overlap (some frame could match both)? Equality is memcmp: both come from
 * sw_xmatch_of_match, padding zero. */
bool sw_xmatch_covered(const struct sw_xmatch *a, const struct sw_xmatch *r);
bool sw_xmatch_overlaps(const struct sw_xmatch *a, const struct sw_xmatch *r);
static inline bool sw_xmatch_any(const struct sw_xmatch *x)
{
	static const struct sw_xkey zero;
	return memcmp(&x->m, &zero, sizeof(zero)) != 0;
}

/* The controller's match as (value, mask) over the key (sw_match.c); value comes masked. */
void sw_key_of_match(const struct of_match *m, struct sw_key *v, struct sw_key *mk);
struct sw_flow;
/* And back: the match of a flow, for FLOW stats and FLOW_REMOVED. */
void sw_match_of_flow(const struct sw_flow *f, struct of_match *m);

/* Frame rewrites (sw_rewrite.c; MPLS and PBB: sw_rewrite_mpls.c), checksums fixed
 * incrementally. Each returns 0, or -1 when the frame has no such header (or no room, or a
 * TTL of 0/1 to decrement: drop it). Addresses and ports are host order. IPv4 and L4 are
 * found behind up to two VLAN tags. */
int sw_act_set_eth(uint8_t *f, uint32_t len, bool dst, const uint8_t mac[6]);
int sw_act_set_ipv4(uint8_t *f, uint32_t len, bool dst, uint32_t addr);
int sw_act_set_l4_port(uint8_t *f, uint32_t len, uint8_t proto, bool dst, uint16_t port);
int sw_act_dec_nw_ttl(uint8_t *f, uint32_t len);
int sw_act_set_nw_ttl(uint8_t *f, uint32_t len, uint8_t ttl);
int sw_act_set_dscp(uint8_t *f, uint32_t len, uint8_t dscp);
/* The outer tag's VID (pcp false) or PCP (pcp true). */
int sw_act_set_vlan(uint8_t *f, uint32_t len, bool pcp, uint16_t v);
int sw_act_push_vlan(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t tpid);
/* Every pop (VLAN, MPLS, PBB) leaves a frame of 60 bytes or more at 60 at least, zero-padded
 * (sw_rewrite_pvt.h's sw_popped_len). */
int sw_act_pop_vlan(uint8_t *f, uint32_t *len);
/* IP ECN (the TOS / traffic class's low 2 bits), IPv6 flow label. */
int sw_act_set_ecn(uint8_t *f, uint32_t len, uint8_t ecn);
int sw_act_set_flabel(uint8_t *f, uint32_t len, uint32_t label);
/* IPv6 source (dst false) or destination address; the TCP/UDP/ICMPv6 checksum fixed (the
 * address is in their pseudo-header). */
int sw_act_set_ipv6(uint8_t *f, uint32_t len, bool dst, const uint8_t addr[16]);
/* IPv6 neighbour discovery (an ICMPv6 NS 135 or NA 136): the target address, or the
 * link-layer address option (sll: the source one, type 1; else the target one, type 2),
 * ICMPv6 checksum fixed. -1 when the frame has no such message or option (options with a
 * length of 0 or past the message end the search). */
int sw_act_set_nd_target(uint8_t *f, uint32_t len, const uint8_t addr[16]);
int sw_act_set_nd_ll(uint8_t *f, uint32_t len, bool sll, const uint8_t mac[6]);
/* ICMPv4 (v6 false) or ICMPv6 type (code false) or code; checksum fixed. SCTP ports go
 * through sw_act_set_l4_port (proto 132), which recomputes SCTP's CRC32c. */
int sw_act_set_icmp(uint8_t *f, uint32_t len, bool v6, bool code, uint8_t v);
/* A field of an Ethernet/IPv4 ARP body: op, spa, tpa (v) or sha, tha (mac). */
enum { SW_ARP_OP, SW_ARP_SPA, SW_ARP_TPA, SW_ARP_SHA, SW_ARP_THA };
int sw_act_set_arp(uint8_t *f, uint32_t len, uint8_t field, uint32_t v, const uint8_t mac[6]);
/* MPLS (sw_rewrite_mpls.c): a field of the top label stack entry; its TTL decremented; TTL
 * copied in (top -> what it covers) or out; push (type 0x8847/0x8848) and pop (the
 * ethertype left behind). PBB: push (type 0x88e7) and pop of the backbone header. */
enum { SW_MPLS_LABEL, SW_MPLS_TC, SW_MPLS_BOS, SW_MPLS_TTL };
int sw_act_set_mpls(uint8_t *f, uint32_t len, uint8_t field, uint32_t v);
int sw_act_dec_mpls_ttl(uint8_t *f, uint32_t len);
int sw_act_copy_ttl(uint8_t *f, uint32_t len, bool in);
int sw_act_push_mpls(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t type);
int sw_act_pop_mpls(uint8_t *f, uint32_t *len, uint16_t type);
int sw_act_push_pbb(uint8_t *f, uint32_t *len, uint32_t cap, uint16_t type);
int sw_act_pop_pbb(uint8_t *f, uint32_t *len);
/* The I-SID of the outermost PBB I-TAG (0x88e7, behind at most one VLAN tag). */
int sw_act_set_pbb_isid(uint8_t *f, uint32_t len, uint32_t isid);

/* One step of an action program (sw_actions.c builds it from the controller's list, sw_dp.c
 * runs it). 16 bytes. */
enum sw_op_code {
	SW_OP_OUTPUT, SW_OP_SET_ETH_DST, SW_OP_SET_ETH_SRC, SW_OP_SET_VLAN_VID,
	SW_OP_SET_VLAN_PCP, SW_OP_SET_IP_DSCP, SW_OP_SET_IPV4_SRC, SW_OP_SET_IPV4_DST,
	SW_OP_SET_TCP_SRC, SW_OP_SET_TCP_DST, SW_OP_SET_UDP_SRC, SW_OP_SET_UDP_DST,
	SW_OP_PUSH_VLAN, SW_OP_POP_VLAN, SW_OP_DEC_NW_TTL, SW_OP_SET_NW_TTL,
	SW_OP_SET_IP_ECN, SW_OP_SET_SCTP_SRC, SW_OP_SET_SCTP_DST, SW_OP_SET_ICMPV4_TYPE,
	SW_OP_SET_ICMPV4_CODE, SW_OP_SET_ICMPV6_TYPE, SW_OP_SET_ICMPV6_CODE, SW_OP_SET_ARP_OP,
	SW_OP_SET_ARP_SPA, SW_OP_SET_ARP_TPA, SW_OP_SET_ARP_SHA, SW_OP_SET_ARP_THA,
	SW_OP_SET_IPV6_FLABEL, SW_OP_SET_MPLS_LABEL, SW_OP_SET_MPLS_TC, SW_OP_SET_MPLS_BOS,
	SW_OP_PUSH_MPLS, SW_OP_POP_MPLS, SW_OP_SET_MPLS_TTL, SW_OP_DEC_MPLS_TTL,
	SW_OP_COPY_TTL_OUT, SW_OP_COPY_TTL_IN, SW_OP_PUSH_PBB, SW_OP_POP_PBB,
	SW_OP_SET_QUEUE, /* accepted, no effect: one queue per port */
	SW_OP_SET_IPV6_SRC, SW_OP_SET_IPV6_DST, /* address bytes 0..5 in mac, 6..9 in arg; the
						   next op (SW_OP_CONT) has 10..15 in mac */
	SW_OP_SET_ND_TARGET, /* the address as SET_IPV6_*, + SW_OP_CONT */
	SW_OP_SET_ND_SLL, SW_OP_SET_ND_TLL,
	SW_OP_CONT, /* the second half of the op before it: no effect of its own */
	SW_OP_GROUP, /* arg: the group id, max_len: its slot (sw_group.h) */
	SW_OP_SET_PBB_ISID,
	SW_OP_SET_TUNNEL_ID, /* arg: bits 0..31, the next op (SW_OP_CONT) bits 32..63; the
				frame is unchanged (no port here is a tunnel endpoint), later
				tables of the pipeline see the value */
	SW_OP_N
};
struct sw_op {
	uint8_t code;     /* enum sw_op_code */
	uint8_t mac[6];   /* SET_ETH_* */
	uint16_t max_len; /* OUTPUT */
	uint32_t arg;     /* OUTPUT port (OFPP_* specials allowed), address, L4 port, VID (no
			     OFPVID_PRESENT), PCP, DSCP, push TPID/ethertype, pop_mpls
			     ethertype, TTL, queue, other set-field values: host order */
};

struct sw_meter;
/* A flow's (or a PACKET_OUT's) action program: apply-actions, in order, then the flow's
 * other instructions (sw_pipe.c runs them). Immutable once published; replaced as a whole
 * (a MODIFY swaps every instruction at once). A published one is allocated only up to
 * op[n + nwrite - 1]: read it through a pointer, never copy it as a whole struct. */
#define SW_INST_CLEAR 0x1 /* clear_actions: empty the action set */
#define SW_INST_META 0x2  /* write_metadata: md under md_mask */
#define SW_INST_TUN 0x4   /* the apply-actions set tunnel_id (sw_actions_decode sets it): the
			     frame goes through sw_pipe_run, which forgets the value after it
			     (the PACKET_IN's tunnel_id, struct sw_core), so the single-table
			     path never pays for it */
struct sw_actions {
	uint8_t n;
	uint8_t last_out;   /* index of the last OUTPUT or GROUP, n if none: nothing after
			       it runs */
	uint8_t goto_table; /* SW_NO_GOTO (0), or a later table */
	uint8_t inst;       /* SW_INST_* */
	uint8_t nwrite;     /* write_actions: ops op[n .. n + nwrite) (0 and SW_INST_WRITE
			       unset: none) */
	uint8_t write;      /* a write_actions instruction is present (even an empty one) */
	uint64_t md, md_mask;
	uint64_t id;            /* a flow's published program: unique (sw_actions_stamp), so a
				   cached pipeline outcome knows the programs it was made from;
				   0: not a flow's (PACKET_OUT, a group bucket), never cached */
	uint32_t meter_id;      /* the OFPIT_METER instruction, 0: none (issue 25) */
	struct sw_meter *meter; /* its meter (sw_meter.h), set by the agent; runs first */
	struct sw_op op[2 * OF_MAX_ACTIONS]; /* apply-actions, then write-actions */
};
/* Sets x->last_out from x->op[0 .. x->n): the last OUTPUT or GROUP, or n when none. */
void sw_actions_mark_last_out(struct sw_actions *x);
/* Gives x, about to be published as a flow's program, an id no other program had. Any
 * thread. */
void sw_actions_stamp(struct sw_actions *x);
/* Does the program need the pipeline (sw_pipe_run), not just its apply-actions? */
static inline bool sw_actions_pipeline(const struct sw_actions *x)
{
	return x->goto_table != SW_NO_GOTO || x->inst || x->write;
}

struct sw_groups;

/* What a list is validated against (sw_actions.c): a FLOW_MOD's match or a PACKET_OUT's
 * frame. vlan_depth: tags the frame is known to have. */
struct sw_act_ctx {
	bool has_eth_type, has_proto, has_icmp_type;
	uint16_t eth_type;
	uint8_t ip_proto;
	uint8_t vlan_depth;
	uint8_t icmp_type; /* ICMPv6 type (the ND set-fields need 135 or 136) */
	unsigned nports;
	const struct sw_groups *groups; /* GROUP actions name these (NULL: none exists) */
	bool any_frame; /* a group's bucket: no match to check set-field prerequisites against */
};
void sw_act_ctx_of_match(const struct of_match *m, unsigned nports, struct sw_act_ctx *c);
void sw_act_ctx_of_key(const struct sw_key *k, unsigned nports, struct sw_act_ctx *c);

/* Decodes and validates oa into *out. Returns 0, or -1 with the ERROR to send in *etype,
 * *ecode (BAD_ACTION/BAD_OUT_PORT, MATCH_INCONSISTENT, the parser's skip code, ...). */
int sw_actions_decode(const struct of_actions *oa, const struct sw_act_ctx *ctx,
		      struct sw_actions *out, uint16_t *etype, uint16_t *ecode);
/* And back, for FLOW stats. */
void sw_actions_to_of(const struct sw_actions *x, struct of_actions *oa);
/* A FLOW_MOD's other instructions into *out, which sw_actions_decode filled with its
 * apply-actions (sw_insts.c): goto_table (only to a later table below SW_N_TABLES, else
 * BAD_INSTRUCTION/BAD_TABLE_ID), write_metadata, write_actions (checked as apply-actions are,
 * against the match), clear_actions. Returns 0, or -1 with the ERROR in *etype, *ecode. */
int sw_insts_decode(const struct of_insts *in, uint8_t table_id, const struct sw_act_ctx *ctx,
		    struct sw_actions *out, uint16_t *etype, uint16_t *ecode);
/* And back, for FLOW stats. */
void sw_insts_to_of(const struct sw_actions *x, struct of_insts *in);
/* The agent's view of a flow's table and metadata match (sw_insts.c), beside its key match:
 * sw_pipe_check decodes a FLOW_MOD's other instructions into prog (after check_actions);
 * sw_pipe_flow_init sets a new flow's table and metadata from the FLOW_MOD; the rest compare
 * a flow with a FLOW_MOD or request: the same table and metadata match (ADD, *_STRICT; table
 * OFPTT_ALL: any), within the table (OFPTT_ALL: any) and metadata match (non-strict MODIFY,
 * DELETE, stats), or overlapping (CHECK_OVERLAP: the same table, agreeing metadata bits). */
int sw_pipe_check(const struct of_flow_mod *fm, unsigned nports, const struct sw_groups *groups,
		  struct sw_actions *prog, uint16_t *etype, uint16_t *ecode);
/* The action set that the write-actions ops[0..n) alone make, as one program in the order
 * it runs (section 5.10: one action per type, a group dropping the output). */
void sw_pipe_set_of(const struct sw_op *ops, unsigned n, struct sw_actions *p);
void sw_pipe_flow_init(struct sw_flow *f, const struct of_flow_mod *fm);
bool sw_pipe_same(const struct sw_flow *f, const struct of_flow_mod *fm);
bool sw_pipe_covered(const struct sw_flow *f, uint8_t table_id, const struct of_match *m);
bool sw_pipe_overlaps(const struct sw_flow *f, const struct of_flow_mod *fm);
/* Does the program output to port (OFPP_ANY: always true)? Apply- and write-actions. */
bool sw_actions_outputs_to(const struct sw_actions *x, uint32_t port);

struct sw_flow_ctr {
	RF_CACHE_ALIGNED _Atomic uint64_t pkts; /* written by one poller (relaxed: single writer) */
	_Atomic uint64_t bytes;
};

/* A flow. Allocate with sw_flow_alloc (its counters: one line per core the switch runs). The
 * classifier fields are set by sw_table_add; everything but actions, the counters and the
 * agent-only fields is immutable once the flow is in the table.
 *
 * Layout by who writes what while the flow is in the table: the first line holds what a
 * poller reads per frame (actions, priority and slot/gen for the classifier and the EMC,
 * cookie/fields for PACKET_IN) and is written only by a MODIFY; the match is read by the
 * agent only; the agent's bookkeeping, written on every idle check and whenever a
 * neighbour in its lists comes or goes, has a line of its own, so flow churn and timeouts
 * do not invalidate the line the pollers read (issue 25). */
struct sw_flow {
	/* pollers, per frame */
	RF_CACHE_ALIGNED _Atomic(struct sw_actions *) actions; /* acquire by pollers, pairs with
								  the agent's release */
	uint64_t cookie;
	uint64_t fields;   /* OF_MATCH_* given by the controller (stats replies; fields == 0 and
			      priority 0: the table-miss flow) */
	uint16_t priority, flags;
	uint32_t slot, gen; /* the classifier's: EMC validity, the table's slot_gen[slot] == gen
			       while present */
	uint32_t ncores;    /* lines in ctr[] */
	uint8_t table_id;   /* its table in the pipeline (PACKET_IN) */
	bool has_md;        /* it matches metadata (md_mask != 0): not a table-miss flow */
	/* immutable, the agent's (stats, FLOW_REMOVED, the index) */
	RF_CACHE_ALIGNED struct sw_key match, mask; /* match is already masked */
	uint64_t md, md_mask; /* metadata match; md already masked (md_mask 0: any) */
	struct sw_xmatch x;   /* the fields outside the key (sw_xmatch.c); m zero: none */
	/* agent only, written while in the table */
	RF_CACHE_ALIGNED uint64_t created_ns, last_used_ns;
	uint64_t last_pkts;                /* sum at the last idle check */
	uint64_t off_pkts, off_bytes;      /* hits of its --offload entries, folded in by the
					      agent (sw_offload.c); in sw_flow_counts */
	struct sw_off_ent *off_ents;       /* its --offload entries (sw_offload.c) */
	uint16_t idle_timeout, hard_timeout;
	struct sw_flow *next, **pprev;     /* master list (doubly linked) */
	struct sw_flow *hnext;             /* index by (match, mask, priority) */
	struct sw_flow *snext;  /* the classifier's: next lower-priority flow, same masked key */
	struct sw_subtable *st; /* the classifier's: the subtable holding it */
	struct sw_flow_ctr ctr[]; /* [ncores], a line each */
};
_Static_assert(offsetof(struct sw_flow, has_md) + sizeof(bool) <= RF_CACHE_LINE,
	       "what the pollers read per frame fits the flow's first line");

/* A zeroed flow with counters for ncores cores (1..SW_MAX_CORES), or NULL. free() frees it. */
struct sw_flow *sw_flow_alloc(unsigned ncores);

/* The flow table: a tuple-space-search classifier behind two per-core caches, exact-match
 * and megaflow (sw_table.c and sw_emc.c have the design). One writer (the agent) with any
 * number of readers (pollers, one per core index); readers call sw_table_lookup between two
 * quiescent states. */
struct sw_table;

/* An empty table for pollers 0..ncores-1. NULL on no memory. The creating thread and the
 * writer must be QSBR-registered before the first add. */
struct sw_table *sw_table_create(unsigned ncores);
/* Free a table no reader uses any more, with whatever is still on its retire list (flows
 * still in the table are the caller's). */
void sw_table_free(struct sw_table *t);

/* The highest-priority flow matching k, or NULL (equal priorities: any one of them, as
 * OpenFlow leaves it undefined). Poller `core` only (its private caches first); wait-free. */
struct sw_flow *sw_table_lookup(struct sw_table *t, unsigned core, const struct sw_key *k);
/* The same without the caches (tests, benchmarks); any registered reader. */
struct sw_flow *sw_table_classify(struct sw_table *t, const struct sw_key *k);
/* Table 0 is what sw_table_lookup and sw_table_classify answer (metadata 0, as a frame
 * enters the pipeline); a flow's table_id, md and md_mask put it in another table or make it
 * match metadata. The highest-priority flow of table tbl matching (k, metadata md), or NULL,
 * through the core's caches (metadata bits a flow of tbl matches go into the megaflow key),
 * or through the classifier alone when that key has no room for them (sw_emc.c). Poller
 * `core` only; wait-free. */
struct sw_flow *sw_table_lookup_md(struct sw_table *t, unsigned core, unsigned tbl, uint64_t md,
				   const struct sw_key *k);
/* The same for a frame with extra fields xk (sw_xkey; NULL: derived from k): never
 * through the EMC when xk is given (its key is not all of the frame's fields). */
struct sw_flow *sw_table_lookup_x(struct sw_table *t, unsigned core, unsigned tbl, uint64_t md,
				  const struct sw_key *k, const struct sw_xkey *xk);
/* Table 0's answer for frame[0..len) with key k, what the pollers call: sw_table_lookup,
 * but an ND frame (sw_key_is_nd) goes with its sw_xkey to sw_table_lookup_x. */
static inline struct sw_flow *sw_table_lookup_frame(struct sw_table *t, unsigned core,
						   const uint8_t *frame, uint32_t len,
						   const struct sw_key *k)
{
	if (!sw_key_is_nd(k))
		return sw_table_lookup(t, core, k);
	struct sw_xkey x;
	sw_xkey_parse(frame, len, k, &x);
	return sw_table_lookup_x(t, core, 0, 0, k, &x);
}
/* The pipeline's outcome cache (sw_outcome.c): per core, the table-0 key of a frame whose
 * table-0 flow needs the pipeline -> the flows it went through, one per table, and the one
 * program the pipeline ran for it (the earlier flows' outputs, the last flow's
 * apply-actions, the action set in order), with the final metadata. A hit runs that program
 * instead of the pipeline; valid while the core's cache generation and epoch are those of
 * the fill, every flow is still in its slot with the same program (sw_actions.id), and
 * table 0 still answers the first flow. */
struct sw_outcome_step {
	struct sw_flow *f;
	uint64_t prog_id;
	uint32_t slot, fgen;
};
struct sw_outcome {
	uint64_t tgen, md;
	uint32_t nsteps;
	struct sw_outcome_step step[SW_N_TABLES];
	struct sw_actions prog;
};
/* What sw_pipe_run notes while it runs a frame through the tables uncached (sw_outcome_begin
 * starts it; ok turns false at the first thing a cached program could not repeat). */
struct sw_outcome_rec {
	uint64_t gen;
	uint32_t epoch;
	bool ok;
	unsigned n;
	const struct sw_flow *f[SW_N_TABLES];
	const struct sw_actions *a[SW_N_TABLES];
};
/* Poller `core`'s outcome for key k whose table-0 flow is f0, or NULL (none, or stale). */
const struct sw_outcome *sw_outcome_find(struct sw_table *t, unsigned core,
					 const struct sw_key *k, const struct sw_flow *f0);
/* Starts a record before the pipeline's lookups after table 0 (the core's generation and
 * epoch now). */
void sw_outcome_begin(struct sw_table *t, unsigned core, struct sw_outcome_rec *r);
/* Notes flow f with program a as the pipeline's next step (the first: table 0's). */
void sw_outcome_step(struct sw_outcome_rec *r, const struct sw_flow *f,
		     const struct sw_actions *a);
/* After the last step: caches k's outcome when r is still ok (set: the action set's program,
 * or NULL when the last flow's apply-actions ended the pipeline; md: the final metadata).
 * True when it did. */
bool sw_outcome_fill(struct sw_table *t, unsigned core, const struct sw_key *k,
		     const struct sw_outcome_rec *r, const struct sw_actions *set, uint64_t md);
/* Poller `core`'s caches (EMC, megaflow, outcome) start empty: every entry stops counting
 * (its epoch moves on). Poller `core` only (tests: a cold run to compare a cached one with). */
void sw_table_cache_forget(struct sw_table *t, unsigned core);
/* Without the EMC, any registered reader. */
struct sw_flow *sw_table_classify_md(struct sw_table *t, unsigned tbl, uint64_t md,
				     const struct sw_key *k);

/* Writer side (one thread). Add f (match, mask, priority set; a flow with the same match,
 * mask and priority must not be present): 0, -ENOSPC (SW_MAX_FLOWS present) or -ENOMEM. */
int sw_table_add(struct sw_table *t, struct sw_flow *f);
/* Take f out of the table (readers may still hold it until their next quiescent state);
 * then retire it with sw_table_retire(t, f, SW_RETIRE_FLOW). Never fails. */
void sw_table_remove(struct sw_table *t, struct sw_flow *f);
/* Put f (same match, mask and priority as old, which is in the table) in old's place, at
 * once for every reader: a lookup answers old or f, never neither, and cached answers naming
 * old stop counting. old is retired here (the dtor runs for it after its grace period).
 * Allocates nothing and never fails. */
void sw_table_replace(struct sw_table *t, struct sw_flow *old, struct sw_flow *f);
enum sw_retire_kind { SW_RETIRE_FREE, SW_RETIRE_FLOW };
/* Free p (free(), or a removed flow and its slot) after a grace period. */
void sw_table_retire(struct sw_table *t, void *p, enum sw_retire_kind kind);
/* Frees what is past its grace period, and hands what was retired since to a new grace period
 * (rf_qsbr_defer, without waiting) when at least SW_RECLAIM_NS passed since the last one or
 * the list is long. force: waits instead, so everything retired before the call is freed when
 * it returns (blocking the writer, never the readers); a full defer queue (a stalled grace
 * period) or no memory waits as well. now: CLOCK_MONOTONIC ns. */
void sw_table_reclaim(struct sw_table *t, uint64_t now_ns, bool force);
#define SW_RECLAIM_NS 2000000ull /* at most one batch per 2 ms */
/* Re-rank subtables of equal top priority by their hits since the last call, and free
 * subtables that stayed empty since the previous call (writer; a timer calls it about once
 * a second). */
void sw_table_rerank(struct sw_table *t);
/* Flows in the table; non-empty subtables (distinct masks of its flows). Writer side. */
unsigned sw_table_nflows(const struct sw_table *t);
unsigned sw_table_nsubtables(const struct sw_table *t);
/* Called for each flow retired with SW_RETIRE_FLOW just before it is freed, after its grace
 * period (tests: read the final counters). NULL: none. */
void sw_table_set_flow_dtor(struct sw_table *t, void (*fn)(struct sw_flow *f, void *arg),
			    void *arg);

/* Sums of a flow's per-core counters. */
void sw_flow_counts(const struct sw_flow *f, uint64_t *pkts, uint64_t *bytes);

/* Does key k match the flow's (match, mask)? */
static inline bool sw_flow_matches(const struct sw_flow *f, const struct sw_key *k)
{
	const uint8_t *a = (const uint8_t *)k, *m = (const uint8_t *)&f->mask,
		      *v = (const uint8_t *)&f->match;
	for (unsigned i = 0; i < sizeof(*k); i += 4) { /* memcpy: no aliasing games */
		uint32_t x, y, z;
		memcpy(&x, a + i, 4);
		memcpy(&y, m + i, 4);
		memcpy(&z, v + i, 4);
		if ((x & y) != z)
			return false;
	}
	return true;
}

struct sw_port {
	struct rf_io_dev *dev;
	uint32_t of_no; /* OpenFlow port number: index + 1 */
	char name[16];
	uint8_t mac[6];
	struct rf_io_stats base;
};

/* The ports' names in the stats registry (sw_portname.c): each port's name with every
 * character outside [A-Za-z0-9_.-] made '_' (a PCI address's ':'), "port<N>" when empty,
 * "-<OpenFlow number>" added to a name an earlier port has. Always valid and distinct. */
#define SW_STATS_NAME 32
void sw_port_stats_names(const struct sw_port *ports, unsigned n, char names[][SW_STATS_NAME]);

/* One poller's transmit batches, one per port. */
struct sw_core {
	RF_CACHE_ALIGNED unsigned idx;
	struct sw_dp *dp;
	struct rf_pktbuf *tx[SW_MAX_PORTS][SW_BURST];
	unsigned ntx[SW_MAX_PORTS];
	_Atomic uint64_t rx, tx_pkts, drop_short, drop_nomatch, drop_tx, to_ctl, drop_ctl;
	_Atomic uint64_t drop_act; /* dec_nw_ttl at TTL <= 1, push_vlan without room */
	_Atomic uint64_t act_skip; /* rewrites skipped: the frame lacks that header */
	/* lookups and hits per table; table 0's lookups are rx - drop_short, and its hits are
	 * tmatch[0], added once a burst after rx (sw_dp_poll) */
	_Atomic uint64_t tlookup[SW_N_TABLES], tmatch[SW_N_TABLES];
	_Atomic uint64_t drop_group; /* group chains deeper than SW_GROUP_MAX_DEPTH, no live bucket */
	_Atomic uint64_t out_hits, out_fills; /* the pipeline's outcome cache (sw_outcome.c) */
	unsigned group_depth; /* this poller's nesting of group buckets (sw_group_dp.c) */
	/* The pipeline fields of the frame in hand, for its PACKET_INs (struct sw_pin_fields):
	 * poller-private, zero outside sw_pipe_run, which sets them (write_metadata; set_field
	 * tunnel_id through rewrite()) and zeroes them when the frame is done. A group bucket
	 * restores pin_tun after it (its set_field is its copy's only). */
	uint64_t pin_md, pin_tun;
};

/* What one poll function serves: rx queue `core` of port `port`. */
struct sw_unit {
	struct sw_core *core;
	unsigned port;
};

struct sw_dp {
	unsigned nports, ncores;
	struct sw_unit units[SW_MAX_CORES][SW_MAX_PORTS];
	struct sw_port ports[SW_MAX_PORTS];
	struct sw_core cores[SW_MAX_CORES];
	_Atomic(struct sw_table *) table; /* acquire by pollers; release by the agent */
	struct rf_ring *to_ctl;   /* MPSC: pollers -> agent (PACKET_IN frames) */
	/* The agent's wake-up for to_ctl: it sets agent_asleep before it blocks in poll (with
	 * agent_efd among its fds); the poller that enqueues a frame and finds it set clears it
	 * and writes agent_efd (sw_dp_wake_agent). A PACKET_IN then waits for no poll timeout. */
	int agent_efd;
	_Atomic bool agent_asleep;
	struct rf_ring *from_ctl; /* SPSC: agent -> poller 0 (PACKET_OUT frames) */
	struct rf_runtime *rt;
	struct rf_pktbuf_pool *pool;
	/* --fail-mode standalone: set by the agent while no controller session is up; then
	 * frames no flow matches are forwarded by MAC learning in `macs` (MAC -> port + 1).
	 * Relaxed: a plain switch, it publishes nothing (macs exists before the pollers start). */
	_Atomic bool standalone;
	struct rf_hash *macs; /* NULL in secure mode */
	struct sw_groups *groups; /* the group table (sw_group.h); set before the pollers run */
	struct sw_offload *offload; /* --offload (sw_offload.h), or NULL; set before they run */
	/* PACKET_OUT programs (agent -> poller 0): the agent fills slot po_sent % SW_PO_SLOTS
	 * and enqueues the frame with a pointer to it; poller 0 counts po_done after running
	 * one. The agent reuses a slot only while po_sent - po_done < SW_PO_SLOTS. */
	uint64_t po_sent;          /* agent only */
	_Atomic uint64_t po_done;  /* poller 0 (release) -> agent (acquire) */
	struct sw_actions po_prog[SW_PO_SLOTS];
};

/* What travels with a frame on to_ctl / from_ctl (in the pktbuf's `flow` and `timestamp_ns`
 * fields, which frame mode leaves to the app): */
#define SW_META(out_port, max_len) ((uint64_t)(max_len) << 32 | (out_port))
/* A frame on to_ctl: flow = table_id << 56 | SW_PIN_HAS_FIELDS (when it has them) |
 * no_match << 48 | max_len << 32 | in_port, timestamp_ns = the flow's cookie. A frame whose
 * pipeline fields are not all zero (sw_core.pin_md / pin_tun) also carries them, for the
 * PACKET_IN's match (OpenFlow 1.3.5 section 7.4.1), in the first bytes of its buffer's
 * headroom (which frame mode leaves unused: the frame starts at data_off and never grows
 * to the front), and SW_PIN_HAS_FIELDS says so; the others pay nothing. in_phy_port is not
 * carried: every port of this switch is physical, so it always equals in_port and the
 * PACKET_IN leaves it out (1.3.5: only when it differs). */
struct sw_pin_fields {
	uint64_t metadata;  /* write_metadata so far; 0: unset (as OVS: no OXM then) */
	uint64_t tunnel_id; /* set_field tunnel_id so far; 0: unset */
};
#define SW_PIN_HAS_FIELDS (1ull << 49)
/* The agent's side: the pipeline fields of a frame taken off to_ctl (all zero when it
 * carries none). */
void sw_pin_fields_of(const struct rf_pktbuf *b, struct sw_pin_fields *pf);
/* After a frame went onto to_ctl: wake the agent if it is blocked (struct sw_dp). */
void sw_dp_wake_agent(struct sw_dp *dp);

/* The poll function of a unit (struct sw_unit: rx on queue c of one port; every port's
 * batch of core c is flushed at the end). */
unsigned sw_dp_poll(struct rf_poller *p, void *arg);
/* Runs program acts on frame b (in: port index it came in on, -1 for the controller; f: the
 * flow, or NULL): rewrites in place, outputs appended to c's per-port batches (flushed by
 * the poll functions) or handed to the agent. Consumes b. */
void sw_dp_apply(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_actions *acts,
		 const struct sw_flow *f);
/* The same, keeping b: outputs send copies; returns b as the rewrites left it, or NULL when
 * it was dropped (TTL expired, no room) and freed (sw_pipe.c: apply-actions of a flow whose
 * pipeline goes on). */
struct rf_pktbuf *sw_dp_apply_keep(struct sw_core *c, struct rf_pktbuf *b, int in,
				   const struct sw_actions *acts, const struct sw_flow *f);
/* A copy of frame b from dp's pool (an output that must leave b for later actions), or NULL
 * when the pool is empty or its buffers are too small. */
struct rf_pktbuf *sw_dp_frame_copy(struct sw_dp *dp, const struct rf_pktbuf *b);
/* The pipeline (sw_pipe.c) of frame b (key k, in port index in) from f, the flow table 0
 * matched, whose program needs more than its apply-actions: apply-actions, clear/write
 * actions, write_metadata, goto_table through the later tables (no flow in a table: the
 * frame is dropped, OpenFlow 1.3), then the action set in the specification's order.
 * Counts each table's lookups and matches on c. Consumes b. */
void sw_pipe_run(struct sw_core *c, struct sw_table *t, struct rf_pktbuf *b, int in,
		 struct sw_key *k, struct sw_flow *f, const struct sw_actions *acts);
/* Agent side of a PACKET_OUT: the program slot to fill for the next frame, or NULL while
 * poller 0 still uses all SW_PO_SLOTS. Fill it, enqueue the frame on from_ctl with
 * timestamp_ns = the slot's address and flow = the in port, then count dp->po_sent++. */
struct sw_actions *sw_dp_po_slot(struct sw_dp *dp);
/* Poller 0's extra poll function: frames from the agent (PACKET_OUT), each run through the
 * program its slot holds. */
unsigned sw_dp_poll_ctl(struct rf_poller *p, void *arg);

/* ---- the agent ---- */
#define SW_MAX_CONTROLLERS 8 /* --controller, each its own connection and backoff */
struct sw_agent_cfg {
	const char *controllers[SW_MAX_CONTROLLERS]; /* "tcp:IP:PORT" each */
	unsigned ncontrollers;
	const char *listen;     /* "tcp:IP:PORT" for ovs-ofctl and other clients, or NULL */
	bool standalone;        /* --fail-mode standalone */
	uint64_t dpid;
	unsigned echo_interval_s; /* ECHO_REQUEST after this long quiet, drop after 3x (0: 5) */
	struct sw_ctlcmd *ctlcmd; /* the control socket's `flows` asks the agent here, or NULL */
	uint32_t pin_rate, pin_burst; /* --packet-in-rate: PACKET_INs a second and burst per
					 connection (sw_pinrate.h); 0: no limit */
	unsigned stats_interval_s; /* --stats-interval: the agent's counters in a line (0: off) */
};

/* The control socket's commands (sw_ctlcmd.c): `ports` and `flows`. The agent calls
 * sw_ctlcmd_serve every loop; it answers a pending `flows` from the master list. */
struct sw_ctlcmd;
struct rf_ctl;
struct sw_ctlcmd *sw_ctlcmd_create(struct sw_dp *dp);
int sw_ctlcmd_register(struct sw_ctlcmd *cc, struct rf_ctl *ctl);
void sw_ctlcmd_serve(struct sw_ctlcmd *cc, const struct sw_flow *list, unsigned nflows,
		     uint64_t now_ns);
void sw_ctlcmd_destroy(struct sw_ctlcmd *cc);

/* Roles and the asynchronous configuration (sw_role.c), kept apart from the sockets so
 * they can be tested alone. A connection starts EQUAL with the spec's default async
 * config; the generation id is the switch's, shared by all connections. */
struct sw_async {
	uint32_t mask[3][2]; /* [kind: SW_ASYNC_..][0: master/equal, 1: slave]: bit r = reason r */
};
enum { SW_ASYNC_PACKET_IN, SW_ASYNC_PORT_STATUS, SW_ASYNC_FLOW_REMOVED };

struct sw_roles {
	bool have_gen;  /* a MASTER or SLAVE request has set gen */
	uint64_t gen;   /* the last generation id accepted */
};

/* The default async config (1.3.5 section 7.3.10): master/equal get PACKET_IN (but not
 * INVALID_TTL), PORT_STATUS and FLOW_REMOVED; a slave gets PORT_STATUS only. */
void sw_async_default(struct sw_async *as);
/* Does a connection in `role` with config *as want message kind (SW_ASYNC_*) of reason? */
bool sw_async_wants(const struct sw_async *as, uint32_t role, unsigned kind, uint8_t reason);
/* ROLE_REQUEST from connection `who` of n (roles[i] = OFPCR_ROLE_* of connection i, or 0
 * for a closed one). Returns -1 and sets *role_out and *gen_out for the ROLE_REPLY, or the
 * OFPRRFC_* code to refuse with (STALE: generation id behind; BAD_ROLE: not a role). A
 * new MASTER turns the other masters into SLAVEs. */
int sw_role_request(struct sw_roles *r, uint32_t *roles, unsigned n, unsigned who,
		    uint32_t role, uint64_t gen, uint32_t *role_out, uint64_t *gen_out);
/* The pipeline's tables as the agent reports them (sw_tables.c): TABLE stats of every table
 * (flows in it from the master list, lookups and matches from the pollers' counters); the
 * TABLE_FEATURES reply (one message, every table) into buf: its length, 0 if cap is short. */
void sw_tables_stats(const struct sw_dp *dp, const struct sw_flow *flows,
		     struct of_table_stats out[SW_N_TABLES]);
size_t sw_tables_features(uint8_t *buf, size_t cap, uint32_t xid);
/* Run the OpenFlow agent until rf_runtime_stopping(dp->rt). Blocks (own thread). */
void *sw_agent_run(void *arg);
struct sw_agent;
struct sw_agent *sw_agent_create(struct sw_dp *dp, const struct sw_agent_cfg *cfg);
void sw_agent_destroy(struct sw_agent *a);
/* The agent's counters and gauges into the registry (sw_agent_obs.c): app/packet_in/...
 * (per connection: sent, drop_rate, drop_busy), app/switch_subtables, app/switch_flows.
 * 0 or -errno. */
struct rf_stats;
int sw_agent_obs_register(struct sw_agent *a, struct rf_stats *reg);

#endif
