/*
 * ringflow/offload.h: the XDP fast path: exact-match entries that the kernel runs on a
 * port's frames before they reach the app.
 *
 * The one idea: the app keeps the decisions, the kernel repeats them. An entry says "a frame
 * received on port IN whose fields (named from a fixed menu) equal these values gets these
 * actions" (output to a port, drop, set MACs, push/pop VLAN, decrement TTL); the port's XDP
 * program looks it up and runs the actions itself, so the frame never reaches userspace.
 * A frame with no entry reaches the app exactly as without offload. Only ports of the `xdp`
 * driver have a table (rf_offload_supported says why another port has none), and an output
 * port must be an `xdp` port of the same process.
 *
 * Matching: each entry names its fields (RF_OFFLOAD_F_* in `fields`); a frame matches when
 * it has every named field and each equals the entry's value; an entry naming no field
 * matches every frame of the port (a port-wide entry). Entries naming the same fields
 * form one mask; a table holds entries of at most RF_OFFLOAD_MAX_MASKS masks, tried in the
 * order the masks were first installed (the first mask with a matching entry wins).
 * VLAN and EtherType see one 802.1Q/802.1ad tag: `eth_type` is the inner type; UNTAGGED
 * and CTAG name the frame's tag itself (none; an 802.1Q one): an entry made from an
 * untagged frame says so, and an app whose own parser knows only 802.1Q can say what it saw. L4 ports exist for unfragmented TCP and UDP only.
 * A frame whose IPv4 or IPv6 header claims more bytes than the frame holds (or an IPv4
 * header longer than its total length) matches only a port-wide entry: the app sees it.
 * WHOLE (no value) names the frame's shape: it matches a frame only when every header a
 * strict parser reads is all there: at least 14 bytes (18 tagged); IPv4 of version 4 with
 * a 20-byte header, IHL <= total length <= the bytes present, and (unless a later fragment)
 * 4 bytes of TCP/UDP/SCTP ports or 2 of ICMP type and code within the total length; IPv6 of
 * version 6 with its payload present, no extension header (those frames are never WHOLE),
 * and the same L4 bytes (ICMPv6 for ICMP); ARP with 8 bytes, 28 for Ethernet/IPv4 ARP; MPLS
 * and PBB (0x88e7) with 4; any other EtherType. An app whose parser refuses what fails these
 * (ringflow-switch does) names WHOLE in its entries so the kernel never forwards a frame the
 * app would drop, even with an entry naming few fields; WHOLE alone is a port-wide entry of
 * whole frames, run on the port-wide fast path too.
 *
 * Actions run in order; the list ends with exactly one RF_OFFLOAD_OUTPUT or RF_OFFLOAD_DROP,
 * and holds at most one RF_OFFLOAD_DEC_TTL. A matching frame the program cannot finish (its
 * output port is down, or its TTL / hop limit would reach 0) goes to the app unmodified, as
 * if unmatched, and is counted in rf_offload_totals.fallback_*.
 *
 * Visibility: every call that changes a table is one BPF map update, atomic per entry: a
 * frame the kernel processes after the call returns sees the change; a frame being processed
 * while it runs sees the old entry or the new one, never a mix. Counters of a deleted entry
 * are gone with it; a replaced entry keeps its counters.
 *
 * Thread-safety: every function may be called from any thread, concurrently with each other
 * and with the port's pollers (the table's bookkeeping has its own lock; pollers never take
 * it). Calls on a port must end before rf_io_close of that port. Closing an output port
 * stops the entries sending to it, as if it were down (their frames go to the app).
 *
 * Errors: negative errno. -ENOTSUP: the port has no fast path (reason: rf_offload_supported);
 * -EINVAL: a bad match or action list; -EEXIST / -ENOENT: the entry does / does not exist;
 * -ENOSPC: the table (RF_OFFLOAD_MAX_ENTRIES entries, RF_OFFLOAD_MAX_MASKS masks) is full,
 * counted in rf_offload_totals.full: the app keeps handling those frames itself.
 */
#ifndef RINGFLOW_OFFLOAD_H
#define RINGFLOW_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

struct rf_io_dev; /* io.h */

#define RF_OFFLOAD_MAX_ENTRIES 1024 /* per port */
#define RF_OFFLOAD_MAX_MASKS 8      /* distinct field sets per port */
#define RF_OFFLOAD_MAX_ACTIONS 8

/* The menu of match fields (rf_offload_match.fields). IPv4 and IPv6 addresses exclude each
 * other in one entry, and UNTAGGED excludes VLAN and CTAG. */
#define RF_OFFLOAD_F_ETH_DST 0x001u
#define RF_OFFLOAD_F_ETH_SRC 0x002u
#define RF_OFFLOAD_F_VLAN 0x004u     /* tagged frames only: the VID (802.1Q or 802.1ad) */
#define RF_OFFLOAD_F_ETH_TYPE 0x008u
#define RF_OFFLOAD_F_IP4_SRC 0x010u
#define RF_OFFLOAD_F_IP4_DST 0x020u
#define RF_OFFLOAD_F_IP6_SRC 0x040u
#define RF_OFFLOAD_F_IP6_DST 0x080u
#define RF_OFFLOAD_F_IP_PROTO 0x100u
#define RF_OFFLOAD_F_L4_SRC 0x200u
#define RF_OFFLOAD_F_L4_DST 0x400u
#define RF_OFFLOAD_F_UNTAGGED 0x800u /* no tag at all (no value: the frame's shape) */
#define RF_OFFLOAD_F_CTAG 0x1000u    /* the tag is 802.1Q (TPID 0x8100), not 802.1ad */
#define RF_OFFLOAD_F_WHOLE 0x2000u   /* every header a strict parser reads is there (below) */
#define RF_OFFLOAD_F_ALL 0x3fffu

/* What to match; fields not named in `fields` are ignored. Host byte order for integers,
 * network order for addresses (as they sit in the frame). */
struct rf_offload_match {
	uint32_t fields;
	uint8_t eth_dst[6], eth_src[6];
	uint16_t vlan;     /* VID 0..4095 */
	uint16_t eth_type;
	uint8_t ip_proto;
	uint8_t ip4_src[4], ip4_dst[4];
	uint8_t ip6_src[16], ip6_dst[16];
	uint16_t l4_src, l4_dst;
};

enum rf_offload_action_type {
	RF_OFFLOAD_OUTPUT = 1, /* send out of `port` (an xdp port); ends the list */
	RF_OFFLOAD_DROP,       /* drop; ends the list */
	RF_OFFLOAD_SET_ETH_SRC,/* source MAC := mac */
	RF_OFFLOAD_SET_ETH_DST,/* destination MAC := mac */
	RF_OFFLOAD_PUSH_VLAN,  /* push an 802.1Q tag with `vlan` (VID) and `pcp` */
	RF_OFFLOAD_POP_VLAN,   /* remove the outer tag (untagged frame: nothing); a frame of
				* 60 bytes or more stays at 60 at least, zero-padded */
	RF_OFFLOAD_DEC_TTL,    /* IPv4 TTL (checksum fixed) / IPv6 hop limit minus one */
};

struct rf_offload_action {
	enum rf_offload_action_type type;
	struct rf_io_dev *port; /* OUTPUT */
	uint8_t mac[6];         /* SET_ETH_* */
	uint16_t vlan;          /* PUSH_VLAN: VID 0..4095 */
	uint8_t pcp;            /* PUSH_VLAN: priority 0..7 */
};

/* A port's table as a whole. */
struct rf_offload_totals {
	uint64_t entries;            /* installed now */
	uint64_t hits, bytes;        /* frames (and their bytes as received) handled by entries
				      * installed now */
	uint64_t full;               /* adds refused with -ENOSPC */
	uint64_t fallback_port_down; /* matched, output port down: went to the app */
	uint64_t fallback_ttl;       /* matched, TTL would expire: went to the app */
};

/* 0 when port has an offload table; else -ENOTSUP with one line in why (what, why, fix). */
int rf_offload_supported(struct rf_io_dev *port, char *why, size_t len);
/* Install an entry on frames received by `in`; -EEXIST if one with the same match exists. */
int rf_offload_add(struct rf_io_dev *in, const struct rf_offload_match *m,
		   const struct rf_offload_action *acts, unsigned n);
/* Swap the actions of an existing entry in one step (counters kept); -ENOENT if none. */
int rf_offload_replace(struct rf_io_dev *in, const struct rf_offload_match *m,
		       const struct rf_offload_action *acts, unsigned n);
/* Remove an entry; its frames go to the app again from the return on. -ENOENT if none. */
int rf_offload_del(struct rf_io_dev *in, const struct rf_offload_match *m);
/* Remove every entry of `in`'s table; returns how many were removed. */
int rf_offload_flush(struct rf_io_dev *in);
/* One entry's frames and bytes (summed over CPUs); -ENOENT if none. */
int rf_offload_stats(struct rf_io_dev *in, const struct rf_offload_match *m, uint64_t *hits,
		     uint64_t *bytes);
/* The table's totals (see struct rf_offload_totals). */
int rf_offload_totals(struct rf_io_dev *in, struct rf_offload_totals *t);
/* How the port's frames that reached the entry lookup were answered, since the port opened:
 * *hits from the program's per-CPU microflow cache, *walks by walking the masks (an entry
 * found or not; a frame of a microflow walks once per CPU and after every table change).
 * Frames of an empty table or of the port-wide fast path reach neither. Either may be NULL. */
int rf_offload_cache_counts(struct rf_io_dev *in, uint64_t *hits, uint64_t *walks);
/* Tell every table whether `port` can send: down, their entries outputting to it stop (their
 * frames go to the app, counted as fallback_port_down); up, they resume. */
int rf_offload_port_state(struct rf_io_dev *port, bool up);
/* rf_offload_port_state(port, rf_io_link_up(port) == 1): call it as link state is polled. */
int rf_offload_link_sync(struct rf_io_dev *port);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_OFFLOAD_H */
