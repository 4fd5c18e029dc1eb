/*
 * apps/openflow/of/of.h: the OpenFlow wire protocol (1.3 = 0x04 main, 1.0 = 0x01 negotiated),
 * one parser and one serializer for both versions. Library `ringflow_of`.
 *
 * The one idea: bytes from the wire are hostile. Every length field is checked against the
 * bytes actually received before anything behind it is read, all loads and stores are
 * explicit big-endian byte operations (no struct overlays on wire bytes), and a malformed
 * message is answered with the OpenFlow error the spec names plus a decision: skip the
 * message and carry on, or close the connection.
 *
 * The flow of a received byte stream:
 *   1. of_frame():  "need N bytes" / "one message of N bytes" / "malformed (fault)".
 *   2. of_parse():  one framed message -> struct of_msg, a version-independent view. Variable
 *                   parts (packet data, echo payload, port and stats arrays) point into the
 *                   caller's buffer: a parsed message is valid as long as that buffer is.
 *   3. on a fault:  of_build_error_reply() makes the ERROR to send; fault.close says whether
 *                   the connection must be closed afterwards.
 * Sending: fill a struct of_msg and call of_serialize(), or use a builder for the common
 * messages (of_build_table_miss(), of_build_packet_out(), ...).
 *
 * What is modelled: HELLO (version bitmap), ERROR, ECHO, FEATURES, SET_CONFIG, BARRIER,
 * PACKET_IN, PACKET_OUT, FLOW_MOD, FLOW_REMOVED, PORT_STATUS, MULTIPART/STATS port
 * description, flow and port statistics. Match fields in_port, eth_src, eth_dst, eth_type
 * (OXM in 1.3, struct ofp_match wildcards in 1.0), and in 1.3 also vlan_vid, vlan_pcp,
 * ip_dscp, ip_proto, ipv4/tcp/udp/icmpv4/arp/ipv6 fields (masks, prerequisites: struct
 * of_match); actions OUTPUT, SET_FIELD (eth, vlan, ip_dscp, ipv4, tcp/udp ports), PUSH_VLAN,
 * POP_VLAN, DEC_NW_TTL, SET_NW_TTL (struct of_actions; 1.0: OUTPUT only). Other match
 * fields, actions and 1.3 instructions other than APPLY_ACTIONS are length-checked, skipped
 * and counted (n_other / n_skipped, with the error a switch answers), never guessed at.
 *
 * Errors: functions return a length or 0 on success and a negative errno on failure
 * (-EBADMSG for malformed input, with a struct of_fault filled; -ENOBUFS when the output
 * buffer is too small; -EINVAL for a message the chosen version cannot express).
 * Thread-safety: no global state; every function is reentrant.
 */
#ifndef RINGFLOW_OF_H
#define RINGFLOW_OF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions and limits ---- */
#define OF_VERSION_1_0 0x01
#define OF_VERSION_1_3 0x04
#define OF_HEADER_LEN 8
#define OF_MAX_MSG_LEN 65535 /* the header's 16-bit length */
#define OF_ERROR_DATA_MAX 64 /* bytes of the offending message echoed in an ERROR */
#define OF_MAX_ACTIONS 16    /* actions kept per list; more are counted, skipped (TOO_MANY) */

/* Bitmap of the versions this module speaks (bit v = wire version v). */
#define OF_VERSIONS_SUPPORTED ((1u << OF_VERSION_1_0) | (1u << OF_VERSION_1_3))

/* ---- reserved numbers (1.3 values; 1.0's 16-bit ports map 0xff00.. to 0xffffff00..) ---- */
#define OFP_NO_BUFFER 0xffffffffu
#define OFPP_MAX 0xffffff00u
#define OFPP_IN_PORT 0xfffffff8u
#define OFPP_TABLE 0xfffffff9u
#define OFPP_NORMAL 0xfffffffau
#define OFPP_FLOOD 0xfffffffbu
#define OFPP_ALL 0xfffffffcu
#define OFPP_CONTROLLER 0xfffffffdu
#define OFPP_LOCAL 0xfffffffeu
#define OFPP_ANY 0xffffffffu /* 1.0 calls it OFPP_NONE (0xffff) */
#define OFPG_ANY 0xffffffffu
#define OFPTT_ALL 0xff
#define OFPCML_NO_BUFFER 0xffff

enum of_flow_mod_command {
	OFPFC_ADD = 0, OFPFC_MODIFY = 1, OFPFC_MODIFY_STRICT = 2,
	OFPFC_DELETE = 3, OFPFC_DELETE_STRICT = 4,
};
#define OFPFF_SEND_FLOW_REM 0x1

/* ---- error types and codes (wire values; 1.0 and 1.3 agree on the ones used here) ---- */
#define OFPET_HELLO_FAILED 0
#define OFPHFC_INCOMPATIBLE 0
#define OFPET_BAD_REQUEST 1
#define OFPBRC_BAD_VERSION 0
#define OFPBRC_BAD_TYPE 1
#define OFPBRC_BAD_MULTIPART 2 /* 1.0: OFPBRC_BAD_STAT */
#define OFPBRC_BAD_LEN 6
#define OFPET_BAD_ACTION 2
#define OFPBAC_BAD_TYPE 0
#define OFPBAC_BAD_LEN 1
#define OFPBAC_BAD_EXPERIMENTER 2
#define OFPBAC_BAD_OUT_PORT 4
#define OFPBAC_BAD_ARGUMENT 5
#define OFPBAC_TOO_MANY 7
#define OFPBAC_MATCH_INCONSISTENT 10
#define OFPBAC_BAD_SET_TYPE 13 /* 1.3 only, as the three below */
#define OFPBAC_BAD_SET_LEN 14
#define OFPBAC_BAD_SET_ARGUMENT 15
#define OFPET_BAD_INSTRUCTION 3 /* 1.3 only */
#define OFPBIC_UNKNOWN_INST 0
#define OFPBIC_UNSUP_INST 1
#define OFPBIC_BAD_TABLE_ID 2
#define OFPBIC_BAD_EXPERIMENTER 5
#define OFPBIC_BAD_LEN 7
#define OFPBIC_DUP_INST 9 /* 1.4's number (1.3 has none; OVS sends it to 1.3 peers too) */
#define OFPET_BAD_MATCH 4 /* 1.3 only */
#define OFPBMC_BAD_TYPE 0
#define OFPBMC_BAD_LEN 1
#define OFPBMC_BAD_WILDCARDS 5
#define OFPBMC_BAD_FIELD 6
#define OFPBMC_BAD_VALUE 7
#define OFPBMC_BAD_MASK 8
#define OFPBMC_BAD_PREREQ 9
#define OFPBMC_DUP_FIELD 10

/* ---- version-independent message types ---- */
enum of_type {
	OF_HELLO, OF_ERROR, OF_ECHO_REQUEST, OF_ECHO_REPLY, OF_FEATURES_REQUEST,
	OF_FEATURES_REPLY, OF_SET_CONFIG, OF_PACKET_IN, OF_FLOW_REMOVED, OF_PORT_STATUS,
	OF_PACKET_OUT, OF_FLOW_MOD, OF_MULTIPART_REQUEST, OF_MULTIPART_REPLY,
	OF_BARRIER_REQUEST, OF_BARRIER_REPLY,
	OF_TYPE_COUNT
};

/* Multipart (1.0: stats) kinds; wire values of 1.3. PORT_DESC does not exist in 1.0. */
enum of_mp_type { OF_MP_FLOW = 1, OF_MP_PORT_STATS = 4, OF_MP_PORT_DESC = 13 };
#define OFPMPF_MORE 0x1 /* OFPMPF_REQ_MORE / OFPMPF_REPLY_MORE */

/* Name of a type ("PACKET_IN"), for logs and tables. */
const char *of_type_name(enum of_type t);

/* Wire type number of `t` in `version`, or -1 when the version has none (other versions
 * than 1.0 and 1.3 have HELLO = 0 and ERROR = 1 only). */
int of_type_to_wire(uint8_t version, enum of_type t);

/* ---- what a malformed message gets ---- */
struct of_fault {
	uint16_t type;   /* OFPET_*: the ERROR to send (wire numbering of the message's version) */
	uint16_t code;   /* the OFP*C_* code within that type */
	bool close;      /* true: send the error, then close the connection */
	const char *why; /* static text for logs, e.g. "OXM TLV runs past the match" */
};

/* ---- framing ---- */
struct of_framer {
	uint8_t version;  /* negotiated version; 0 before the HELLO exchange (any version passes) */
	uint32_t max_len; /* largest message accepted (<= OF_MAX_MSG_LEN; 0 means OF_MAX_MSG_LEN) */
};

enum of_frame_kind {
	OF_FRAME_NEED_MORE, /* len = total bytes needed before a decision is possible */
	OF_FRAME_MSG,       /* len = bytes of the complete message at the start of the buffer */
	OF_FRAME_BAD,       /* fault says what to send; if !fault.close skip len bytes, go on */
};

struct of_frame {
	enum of_frame_kind kind;
	uint32_t len;
	struct of_fault fault;
};

/* Looks at the first n bytes of a stream and decides what they hold (see enum of_frame_kind).
 * Reads at most the first 8 bytes; never past n. Bad: header length < 8 or > max_len (close,
 * the stream cannot be resynchronised), a version other than the negotiated one (skip). */
void of_frame(const struct of_framer *fr, const uint8_t *buf, size_t n, struct of_frame *out);

/* ---- decoded parts ---- */
#define OF_MATCH_IN_PORT 0x1u
#define OF_MATCH_ETH_SRC 0x2u
#define OF_MATCH_ETH_DST 0x4u
#define OF_MATCH_ETH_TYPE 0x8u
/* 1.3 OXM only (1.0's struct ofp_match counts them in n_other): */
#define OF_MATCH_VLAN_VID 0x10u
#define OF_MATCH_VLAN_PCP 0x20u
#define OF_MATCH_IP_DSCP 0x40u
#define OF_MATCH_IP_PROTO 0x80u
#define OF_MATCH_IPV4_SRC 0x100u
#define OF_MATCH_IPV4_DST 0x200u
#define OF_MATCH_TCP_SRC 0x400u
#define OF_MATCH_TCP_DST 0x800u
#define OF_MATCH_UDP_SRC 0x1000u
#define OF_MATCH_UDP_DST 0x2000u
#define OF_MATCH_ICMPV4_TYPE 0x4000u
#define OF_MATCH_ICMPV4_CODE 0x8000u
#define OF_MATCH_ARP_OP 0x10000u
#define OF_MATCH_ARP_SPA 0x20000u
#define OF_MATCH_ARP_TPA 0x40000u
#define OF_MATCH_IPV6_SRC 0x80000u
#define OF_MATCH_IPV6_DST 0x100000u
#define OF_MATCH_IP_ECN 0x200000u
#define OF_MATCH_SCTP_SRC 0x400000u
#define OF_MATCH_SCTP_DST 0x800000u
#define OF_MATCH_ICMPV6_TYPE 0x1000000u
#define OF_MATCH_ICMPV6_CODE 0x2000000u
#define OF_MATCH_ARP_SHA 0x4000000u
#define OF_MATCH_ARP_THA 0x8000000u
#define OF_MATCH_IPV6_FLABEL 0x10000000u
#define OF_MATCH_MPLS_LABEL 0x20000000u
#define OF_MATCH_MPLS_TC 0x40000000u
#define OF_MATCH_MPLS_BOS 0x80000000u
/* The rest of the 1.3 match set (issue 25): bits above 31 of the 64-bit `fields`. */
#define OF_MATCH_IN_PHY_PORT (1ull << 32)
#define OF_MATCH_ND_TARGET (1ull << 33)
#define OF_MATCH_ND_SLL (1ull << 34)
#define OF_MATCH_ND_TLL (1ull << 35)
#define OF_MATCH_PBB_ISID (1ull << 36)
#define OF_MATCH_TUNNEL_ID (1ull << 37)
#define OF_MATCH_IPV6_EXTHDR (1ull << 38)
/* Fields that take an OXM mask. */
#define OF_MATCH_MASKABLE                                                                  \
	(OF_MATCH_ETH_SRC | OF_MATCH_ETH_DST | OF_MATCH_VLAN_VID | OF_MATCH_IPV4_SRC |      \
	 OF_MATCH_IPV4_DST | OF_MATCH_ARP_SPA | OF_MATCH_ARP_TPA | OF_MATCH_IPV6_SRC |      \
	 OF_MATCH_IPV6_DST | OF_MATCH_ARP_SHA | OF_MATCH_ARP_THA | OF_MATCH_IPV6_FLABEL |   \
	 OF_MATCH_PBB_ISID | OF_MATCH_TUNNEL_ID | OF_MATCH_IPV6_EXTHDR)
#define OFPVID_PRESENT 0x1000 /* vlan_vid: a tag is present (OFPVID_NONE = 0: no tag) */

/* A decoded match. Parsing checks lengths, values (vlan_pcp <= 7, ip_dscp <= 63, vlan_vid
 * <= 0x1fff, ip_ecn <= 3, mpls_tc <= 7, mpls_bos <= 1, mpls_label and ipv6_flabel < 2^20,
 * ipv6_exthdr < 2^9: BAD_VALUE), masks (only on maskable fields; no value bit outside the
 * mask: BAD_WILDCARDS) and the 1.3 prerequisites (ipv4_src needs eth_type=0x0800, tcp_dst
 * needs ip_proto=6, ...: BAD_PREREQ). A mask of all ones is stored as an exact match.
 * Numbers are host order. */
struct of_match {
	uint64_t fields;   /* OF_MATCH_* bits present; none = match everything */
	uint64_t masked;   /* the subset of fields whose *_mask is used (else exact) */
	uint32_t in_port;
	uint8_t eth_src[6], eth_src_mask[6];
	uint8_t eth_dst[6], eth_dst_mask[6];
	uint16_t eth_type;
	uint16_t vlan_vid, vlan_vid_mask; /* OFPVID_PRESENT | vid, or 0 for untagged */
	uint8_t vlan_pcp, ip_dscp, ip_proto, icmpv4_type, icmpv4_code;
	uint16_t tcp_src, tcp_dst, udp_src, udp_dst, arp_op;
	uint32_t ipv4_src, ipv4_src_mask, ipv4_dst, ipv4_dst_mask;
	uint32_t arp_spa, arp_spa_mask, arp_tpa, arp_tpa_mask;
	uint8_t ipv6_src[16], ipv6_src_mask[16], ipv6_dst[16], ipv6_dst_mask[16];
	uint8_t ip_ecn, icmpv6_type, icmpv6_code, mpls_tc, mpls_bos;
	uint16_t sctp_src, sctp_dst;
	uint8_t arp_sha[6], arp_sha_mask[6], arp_tha[6], arp_tha_mask[6];
	uint32_t ipv6_flabel, ipv6_flabel_mask, mpls_label;
	uint32_t in_phy_port;                /* needs in_port; never masked */
	uint8_t nd_target[16], nd_sll[6], nd_tll[6]; /* ICMPv6 135/136, 135, 136; never masked */
	uint32_t pbb_isid, pbb_isid_mask;    /* 24 bits; needs eth_type 0x88e7 */
	uint64_t tunnel_id, tunnel_id_mask;
	uint16_t ipv6_exthdr, ipv6_exthdr_mask; /* OFPIEH_* flags, 9 bits; needs 0x86dd */
	/* The pipeline's metadata (OXM field 2, maskable; 1.3 only): matched when has_metadata,
	 * metadata_mask all ones for an exact match. Not a bit of `fields` (all 32 are taken). */
	bool has_metadata;
	uint64_t metadata, metadata_mask;
	uint16_t n_other;  /* parse only: fields not modelled (skipped, not kept) */
};

/* The actions modelled (1.3 apply-actions; 1.0 has OUTPUT only). OUTPUT is 0, so a zeroed
 * struct of_action with a port is an OUTPUT. */
enum of_action_type {
	OF_ACT_OUTPUT = 0,    /* port, max_len */
	OF_ACT_SET_FIELD,     /* field (OF_OXM_*), value / mac */
	OF_ACT_PUSH_VLAN,     /* ethertype (0x8100 or 0x88a8; parse refuses others: BAD_ARGUMENT) */
	OF_ACT_POP_VLAN,
	OF_ACT_DEC_NW_TTL,
	OF_ACT_SET_NW_TTL,    /* value = the TTL */
	OF_ACT_PUSH_MPLS,     /* ethertype (0x8847 or 0x8848; others: BAD_ARGUMENT) */
	OF_ACT_POP_MPLS,      /* ethertype: what the frame is after the pop */
	OF_ACT_SET_MPLS_TTL,  /* value = the TTL */
	OF_ACT_DEC_MPLS_TTL,
	OF_ACT_COPY_TTL_OUT,
	OF_ACT_COPY_TTL_IN,
	OF_ACT_PUSH_PBB,      /* ethertype (0x88e7; others: BAD_ARGUMENT) */
	OF_ACT_POP_PBB,
	OF_ACT_SET_QUEUE,     /* value = the queue id */
	OF_ACT_GROUP,         /* value = the group id (of_group.h) */
};

/* OXM field numbers (class OPENFLOW_BASIC) a SET_FIELD may carry here. Values parse as host
 * order integers; vlan_vid carries OFPVID_PRESENT (1.3 requires it: BAD_SET_ARGUMENT). */
#define OF_OXM_ETH_DST 3
#define OF_OXM_ETH_SRC 4
#define OF_OXM_VLAN_VID 6
#define OF_OXM_VLAN_PCP 7
#define OF_OXM_IP_DSCP 8
#define OF_OXM_IPV4_SRC 11
#define OF_OXM_IPV4_DST 12
#define OF_OXM_TCP_SRC 13
#define OF_OXM_TCP_DST 14
#define OF_OXM_UDP_SRC 15
#define OF_OXM_UDP_DST 16
#define OF_OXM_IP_ECN 9
#define OF_OXM_SCTP_SRC 17
#define OF_OXM_SCTP_DST 18
#define OF_OXM_ICMPV4_TYPE 19
#define OF_OXM_ICMPV4_CODE 20
#define OF_OXM_ARP_OP 21
#define OF_OXM_ARP_SPA 22
#define OF_OXM_ARP_TPA 23
#define OF_OXM_ARP_SHA 24 /* mac */
#define OF_OXM_ARP_THA 25 /* mac */
#define OF_OXM_IPV6_SRC 26 /* addr */
#define OF_OXM_IPV6_DST 27 /* addr */
#define OF_OXM_IPV6_FLABEL 28
#define OF_OXM_ICMPV6_TYPE 29
#define OF_OXM_ICMPV6_CODE 30
#define OF_OXM_IPV6_ND_TARGET 31 /* addr */
#define OF_OXM_IPV6_ND_SLL 32 /* mac */
#define OF_OXM_IPV6_ND_TLL 33 /* mac */
#define OF_OXM_MPLS_LABEL 34
#define OF_OXM_MPLS_TC 35
#define OF_OXM_MPLS_BOS 36
#define OF_OXM_PBB_ISID 37  /* 3 bytes: value */
#define OF_OXM_TUNNEL_ID 38 /* 8 bytes: addr[0..8), wire order */

struct of_action {
	uint8_t type;     /* enum of_action_type */
	uint8_t field;    /* SET_FIELD: OF_OXM_* */
	uint16_t max_len; /* OUTPUT */
	uint32_t port;    /* OUTPUT */
	uint16_t ethertype; /* PUSH_VLAN, PUSH_MPLS, POP_MPLS, PUSH_PBB */
	uint8_t mac[6];   /* SET_FIELD eth_dst / eth_src / arp_sha / arp_tha / ipv6_nd_sll / _tll */
	uint32_t value;   /* SET_FIELD of the other fields, SET_NW_TTL, SET_MPLS_TTL, SET_QUEUE */
	uint8_t addr[16]; /* SET_FIELD ipv6_src / ipv6_dst / ipv6_nd_target; tunnel_id: [0..8) */
};

/* An action list. Parsing keeps the modelled actions in order and skips (by their checked
 * length) what it does not model: other action types, SET_FIELD of other fields, instructions
 * other than APPLY_ACTIONS, actions past OF_MAX_ACTIONS. skip_type/skip_code is the ERROR a
 * switch answers for the first skipped one (BAD_ACTION/BAD_TYPE, BAD_SET_TYPE,
 * BAD_EXPERIMENTER, TOO_MANY; BAD_INSTRUCTION/UNSUP_INST, UNKNOWN_INST, BAD_EXPERIMENTER).
 * Malformed lists (lengths, set-field values, push ethertype) fail the parse instead. */
struct of_actions {
	uint8_t n;                            /* actions in a[] */
	uint16_t n_skipped;                   /* parse only */
	uint16_t skip_type, skip_code;        /* parse only: valid when n_skipped */
	struct of_action a[OF_MAX_ACTIONS];
	uint32_t meter_id; /* 1.3 OFPIT_METER instruction (of_meter.h), 0: none */
};

/* The 1.3 instructions besides APPLY_ACTIONS (which stays in the message's `actions`):
 * which ones a FLOW_MOD or flow stats entry carries and their arguments (of_instructions_parse
 * fills it; an instruction given twice fails the parse with BAD_INSTRUCTION/DUP_INST). */
#define OF_INST_GOTO_TABLE 0x1u
#define OF_INST_WRITE_METADATA 0x2u
#define OF_INST_WRITE_ACTIONS 0x4u
#define OF_INST_CLEAR_ACTIONS 0x8u
struct of_insts {
	uint8_t present;  /* OF_INST_* */
	uint8_t goto_table;
	uint64_t metadata, metadata_mask; /* WRITE_METADATA */
	struct of_actions write;          /* WRITE_ACTIONS (skipped ones counted as in apply) */
};

/* Appends to a (false when full): helpers for building lists. */
bool of_act_output(struct of_actions *a, uint32_t port, uint16_t max_len);
bool of_act_set_field(struct of_actions *a, uint8_t field, uint32_t value);
bool of_act_set_mac(struct of_actions *a, uint8_t field, const uint8_t mac[6]);
/* SET_FIELD of an IPv6 address (OF_OXM_IPV6_SRC / _DST / _ND_TARGET). */
bool of_act_set_ipv6(struct of_actions *a, uint8_t field, const uint8_t addr[16]);
/* An action with at most one argument: PUSH_VLAN, PUSH_MPLS, POP_MPLS, PUSH_PBB (arg:
 * ethertype), SET_NW_TTL, SET_MPLS_TTL (arg: the TTL), SET_QUEUE (arg: queue id), GROUP
 * (arg: group id), and the
 * argument-less ones (POP_VLAN, DEC_NW_TTL, DEC_MPLS_TTL, COPY_TTL_OUT/IN, POP_PBB). */
bool of_act_simple(struct of_actions *a, enum of_action_type type, uint32_t arg);

/* Name of an OXM field a SET_FIELD carries ("eth_dst"), or NULL when not modelled. */
const char *of_oxm_name(uint8_t field);

struct of_port {
	uint32_t port_no;
	uint8_t hw_addr[6];
	char name[16]; /* always NUL-terminated (the wire's 16 bytes may not be) */
	uint32_t config, state, curr, advertised, supported, peer;
	uint32_t curr_speed, max_speed; /* 1.3 only (kbps); 0 in 1.0 */
};

struct of_port_stats {
	uint32_t port_no;
	uint64_t rx_packets, tx_packets, rx_bytes, tx_bytes, rx_dropped, tx_dropped;
	uint64_t rx_errors, tx_errors, rx_frame_err, rx_over_err, rx_crc_err, collisions;
	uint32_t duration_sec, duration_nsec; /* 1.3 only */
};

struct of_flow_stats {
	uint8_t table_id;
	uint32_t duration_sec, duration_nsec;
	uint16_t priority, idle_timeout, hard_timeout, flags; /* flags: 1.3 only */
	uint64_t cookie, packet_count, byte_count;
	struct of_match match;
	struct of_actions actions;
	struct of_insts inst; /* 1.3 only */
};

/* An array of fixed-size or self-sized items inside a message. Parsing fills raw/raw_len/n
 * (raw points into the parsed buffer, already validated); serializing reads `items` (an
 * array of n struct of_port / of_port_stats / of_flow_stats). Read parsed items with
 * of_port_at(), of_port_stats_at() and of_flow_stats_next(). */
struct of_array {
	uint16_t n;
	const uint8_t *raw;
	uint32_t raw_len;
	const void *items;
};

/* ---- one message, any version ---- */
struct of_msg {
	uint8_t version;
	enum of_type type;
	uint32_t xid;
	union {
		struct of_hello { uint32_t bitmap; bool has_bitmap; } hello; /* bitmap of versions 0..31 */
		struct of_error { uint16_t type, code; const uint8_t *data; uint16_t data_len; } error;
		struct of_echo { const uint8_t *data; uint16_t data_len; } echo;
		struct of_features {
			uint64_t datapath_id;
			uint32_t n_buffers;
			uint8_t n_tables, auxiliary_id; /* auxiliary_id: 1.3 only */
			uint32_t capabilities, actions; /* actions: 1.0 only */
			struct of_array ports;          /* 1.0 only (1.3: use PORT_DESC) */
		} features;
		struct of_config { uint16_t flags, miss_send_len; } config;
		struct of_packet_in {
			uint32_t buffer_id;
			uint16_t total_len;
			uint8_t reason, table_id; /* table_id: 1.3 only */
			uint64_t cookie;          /* 1.3 only */
			struct of_match match;    /* 1.0: in_port is carried here too */
			const uint8_t *data;
			uint16_t data_len;
		} packet_in;
		struct of_packet_out {
			uint32_t buffer_id, in_port;
			struct of_actions actions;
			const uint8_t *data;
			uint16_t data_len;
		} packet_out;
		struct of_flow_mod {
			uint64_t cookie, cookie_mask; /* cookie_mask: 1.3 only */
			uint8_t table_id, command;    /* table_id: 1.3 only */
			uint16_t idle_timeout, hard_timeout, priority, flags;
			uint32_t buffer_id, out_port, out_group; /* out_group: 1.3 only */
			struct of_match match;
			struct of_actions actions; /* 1.3: the APPLY_ACTIONS instruction */
			struct of_insts inst;      /* 1.3: the other instructions */
		} flow_mod;
		struct of_flow_removed {
			uint64_t cookie;
			uint16_t priority;
			uint8_t reason, table_id; /* table_id: 1.3 only */
			uint32_t duration_sec, duration_nsec;
			uint16_t idle_timeout, hard_timeout; /* hard_timeout: 1.3 only */
			uint64_t packet_count, byte_count;
			struct of_match match;
		} flow_removed;
		struct of_port_status { uint8_t reason; struct of_port port; } port_status;
		struct of_mp_request {
			enum of_mp_type mp_type;
			uint16_t flags;
			/* OF_MP_FLOW */
			uint8_t table_id;
			uint32_t out_port, out_group;  /* out_group: 1.3 only */
			uint64_t cookie, cookie_mask;  /* 1.3 only */
			struct of_match match;
			/* OF_MP_PORT_STATS */
			uint32_t port_no;
		} mp_request;
		struct of_mp_reply {
			enum of_mp_type mp_type;
			uint16_t flags;
			struct of_array body; /* of_port (PORT_DESC), of_port_stats, of_flow_stats */
		} mp_reply;
	} u;
};

/* Parses one framed message (len bytes, exactly its header length, as of_frame said).
 * Returns 0 with *out filled, or -EBADMSG with *fault filled (the ERROR to send and whether
 * to close). Every inner length is checked against len; nothing past buf+len is read. */
int of_parse(const uint8_t *buf, size_t len, struct of_msg *out, struct of_fault *fault);

/* Serializes *m (its version, type, xid and body) into buf. Returns the message length,
 * -ENOBUFS if cap is too small, -EINVAL if m->version cannot express it. */
ssize_t of_serialize(const struct of_msg *m, uint8_t *buf, size_t cap);

/* Decodes item i of a parsed FEATURES_REPLY (1.0) port array or PORT_DESC reply, or of a
 * serialize-side items array. Returns 0 or -EINVAL (i out of range). */
int of_port_at(uint8_t version, const struct of_array *a, unsigned i, struct of_port *out);

/* Same for a PORT_STATS reply. */
int of_port_stats_at(uint8_t version, const struct of_array *a, unsigned i,
		     struct of_port_stats *out);

/* Iterates a FLOW stats reply: *cursor starts at 0; returns 1 with *out filled, 0 at the
 * end. Reads only what of_parse validated (or the items array when serializing). */
int of_flow_stats_next(uint8_t version, const struct of_array *a, unsigned *cursor,
		       struct of_flow_stats *out);

/* ---- handshake ---- */

/* Version to speak after receiving `peer` (a parsed HELLO), given our bitmap of versions.
 * Both bitmaps: the highest common bit. Otherwise min(our highest, peer's header version),
 * which we must support. Returns the version, or -EPROTO (send HELLO_FAILED/INCOMPATIBLE and
 * close). */
int of_negotiate(uint32_t ours, const struct of_msg *peer);

/* ---- builders for the common messages (all return length or -ENOBUFS/-EINVAL) ---- */

/* HELLO in `version` (our highest) with a version-bitmap element of `bitmap` (0: none). */
ssize_t of_build_hello(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid,
		       uint32_t bitmap);

/* A header-only message (FEATURES_REQUEST, BARRIER_REQUEST/REPLY, ...). */
ssize_t of_build_simple(uint8_t *buf, size_t cap, uint8_t version, enum of_type type,
			uint32_t xid);

/* ERROR type/code with up to OF_ERROR_DATA_MAX bytes of data. */
ssize_t of_build_error(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid, uint16_t type,
		       uint16_t code, const uint8_t *data, size_t data_len);

/* The ERROR answering a fault on message bad[0..bad_len) (its xid, its first 64 bytes). */
ssize_t of_build_error_reply(uint8_t *buf, size_t cap, uint8_t version,
			     const struct of_fault *f, const uint8_t *bad, size_t bad_len);

/* 1.3 table-miss entry: FLOW_MOD ADD, table 0, priority 0, empty match, APPLY_ACTIONS output
 * CONTROLLER max_len NO_BUFFER. (1.0 has no table-miss entry: misses go to the controller.) */
ssize_t of_build_table_miss(uint8_t *buf, size_t cap, uint32_t xid);

/* FLOW_MOD DELETE of every flow in every table (a clean state after connect). */
ssize_t of_build_delete_all(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid);

/* PACKET_OUT with one OUTPUT action to out_port; data is sent only when buffer_id is
 * OFP_NO_BUFFER (as OVS, with n_buffers=0, requires). */
ssize_t of_build_packet_out(uint8_t *buf, size_t cap, uint8_t version, uint32_t xid,
			    uint32_t buffer_id, uint32_t in_port, uint32_t out_port,
			    const uint8_t *data, size_t data_len);

/* GET_CONFIG is answered by a switch but is not one of the modelled types: a 1.3
 * GET_CONFIG_REQUEST is the header alone with wire type OF13_GET_CONFIG_REQUEST (of_parse
 * reports it as BAD_TYPE; a switch looks at the header first). */
#define OF13_GET_CONFIG_REQUEST 7
#define OF13_GET_CONFIG_REPLY 8

/* 1.3 GET_CONFIG_REPLY (flags, miss_send_len), 12 bytes. */
ssize_t of_build_get_config_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				  uint16_t miss_send_len);

/* ---- the 1.3 control-plane messages of_parse does not model (of_xmsg.c) ----
 * Roles (ROLE_REQUEST/REPLY), the asynchronous configuration (GET_ASYNC/SET_ASYNC),
 * GET_CONFIG and the multipart kinds DESC, AGGREGATE and TABLE. They have their own small
 * view, struct of_xmsg, so of_parse's struct of_msg stays as it is: a switch calls
 * of_xparse() first and of_parse() when it says -ENOENT ("not one of mine"). */
#define OF13_ROLE_REQUEST 24
#define OF13_ROLE_REPLY 25
#define OF13_GET_ASYNC_REQUEST 26
#define OF13_GET_ASYNC_REPLY 27
#define OF13_SET_ASYNC 28
#define OFPCR_ROLE_NOCHANGE 0
#define OFPCR_ROLE_EQUAL 1
#define OFPCR_ROLE_MASTER 2
#define OFPCR_ROLE_SLAVE 3
#define OFPBRC_IS_SLAVE 10
#define OFPET_SWITCH_CONFIG_FAILED 10
#define OFPSCFC_BAD_FLAGS 0
#define OFPET_ROLE_REQUEST_FAILED 11
#define OFPRRFC_STALE 0
#define OFPRRFC_UNSUP 1
#define OFPRRFC_BAD_ROLE 2
#define OFPMP13_DESC 0
#define OFPMP13_AGGREGATE 2
#define OFPMP13_TABLE 3
#define OF_DESC_STR_LEN 256
#define OF_SERIAL_NUM_LEN 32
#define OF13_TABLE_STATS_LEN 24

enum of_xtype {
	OF_X_GET_CONFIG_REQUEST, OF_X_GET_CONFIG_REPLY, OF_X_ROLE_REQUEST, OF_X_ROLE_REPLY,
	OF_X_GET_ASYNC_REQUEST, OF_X_GET_ASYNC_REPLY, OF_X_SET_ASYNC,
	OF_X_DESC_REQUEST, OF_X_DESC_REPLY, OF_X_AGGREGATE_REQUEST, OF_X_AGGREGATE_REPLY,
	OF_X_TABLE_REQUEST, OF_X_TABLE_REPLY,
	OF_XTYPE_COUNT
};

/* One table's statistics (OFPMP_TABLE reply item). */
struct of_table_stats {
	uint8_t table_id;
	uint32_t active_count;
	uint64_t lookup_count, matched_count;
};

struct of_xmsg {
	uint8_t version; /* always OF_VERSION_1_3 */
	enum of_xtype type;
	uint32_t xid;
	uint16_t mp_flags; /* multipart kinds: OFPMPF_MORE */
	union {
		struct of_config config; /* GET_CONFIG_REPLY */
		struct of_role { uint32_t role; uint64_t generation_id; } role;
		/* Bit r of packet_in[i] enables reason r; [0] master/equal, [1] slave. */
		struct of_async {
			uint32_t packet_in[2], port_status[2], flow_removed[2];
		} async;
		struct of_desc { /* NUL-terminated (the wire's fields may not be) */
			char mfr[OF_DESC_STR_LEN], hw[OF_DESC_STR_LEN], sw[OF_DESC_STR_LEN];
			char serial[OF_SERIAL_NUM_LEN], dp[OF_DESC_STR_LEN];
		} desc;
		/* AGGREGATE request: the flow stats request's fields (table_id, out_port,
		 * out_group, cookie, cookie_mask, match); mp_type is OF_MP_FLOW's and unused. */
		struct of_mp_request aggregate_request;
		struct of_aggregate { uint64_t packet_count, byte_count; uint32_t flow_count; } aggregate;
		struct of_array tables; /* TABLE reply: struct of_table_stats items */
	} u;
};

/* Parses one framed 1.3 message if it is one of the types above: 0 with *m filled;
 * -EBADMSG with *f filled (BAD_LEN and the like; the connection goes on); -ENOENT when it
 * is none of them (hand it to of_parse). Reads nothing past buf+len. */
int of_xparse(const uint8_t *buf, size_t len, struct of_xmsg *m, struct of_fault *f);

/* Serializes *m. Returns the length, -ENOBUFS, or -EINVAL (a bad type or more tables
 * than fit in a message). */
ssize_t of_xserialize(const struct of_xmsg *m, uint8_t *buf, size_t cap);

/* Item i of a TABLE reply (parsed or to serialize). 0 or -EINVAL. */
int of_table_stats_at(const struct of_array *a, unsigned i, struct of_table_stats *out);

/* A MASTER or SLAVE request's generation_id is stale when it is behind the switch's
 * cached one, compared as a signed 64-bit difference (1.3.5 section 6.3.6), so the ids may
 * wrap around. */
static inline bool of_generation_stale(uint64_t cached, uint64_t requested)
{
	return (int64_t)(requested - cached) < 0;
}

/* ---- byte helpers for callers that peek at headers (explicit big-endian loads) ---- */
static inline uint16_t of_get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t of_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_OF_H */
