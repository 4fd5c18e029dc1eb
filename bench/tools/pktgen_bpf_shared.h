/*
 * bench/tools/pktgen_bpf_shared.h: what ringflow-pktgen's BPF programs (pktgen.bpf.c) and the
 * tool (pktgen.c) both see: the configuration entry, the per-CPU counters and the latency
 * payload. Kernel UAPI types only, so it compiles for -target bpf and for the host alike.
 */
#ifndef RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_SHARED_H
#define RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_SHARED_H

#include <linux/types.h>

#define PG_F_RANDOM 0x1    /* --flows-mode random: flow picked per frame by bpf_get_prandom_u32 */
#define PG_F_TIMESTAMP 0x2 /* --timestamps: fwd_latency's payload, stamped per frame */
#define PG_F_PACED 0x4     /* --rate: frame k leaves no earlier than pace.t0 + k / rate */

#define PG_SPORT_BASE 1024 /* flow f has UDP source port PG_SPORT_BASE + (f & PG_SPORT_MASK) */
#define PG_SPORT_MASK 0x3fff
#define PG_MAX_FLOWS (1u << 24) /* flow f has source IP src_ip + f: distinct for every f */

#define PG_LAT_ETHERTYPE 0x88b5 /* fwd_latency's ethertype (IEEE local experimental) */
#define PG_LAT_MAGIC 0x72666c74u /* "rflt", fwd_latency's LAT_MAGIC */

#define PG_HDR_LEN 42 /* Ethernet + IPv4 + UDP: what pg_xdp writes back on every run */

struct pg_cfg {
	__u32 ifindex; /* the device frames leave by */
	__u32 flows;   /* 1..PG_MAX_FLOWS */
	__u32 flags;   /* PG_F_* */
	__u32 tgid;    /* the tool's process: pg_xmit counts only its test runs */
	__u32 src_ip;  /* host order: flow f's source IP is src_ip + f */
	/* The template's first PG_HDR_LEN bytes. A live frame's page keeps what was written in
	 * it, by us or by whoever received it: an XDP forwarder that rewrites in place (a MAC, a
	 * TTL) hands the page back through the page pool changed. So every run writes them. */
	__u64 hdr[(PG_HDR_LEN + 7) / 8]; /* 8-byte words: pg_xdp copies five and a 16-bit tail */
};

/*
 * The paced mode's schedule, one entry shared by every sending thread. Written by the tool
 * before the first run; `issued` and `last_ns` are then written by pg_xdp only: frame k
 * (k = issued) may go once bpf_ktime_get_ns() >= t0 + k * ps_per_frame / 1000, and whoever
 * moves `issued` from k to k + 1 (compare-and-swap) sends it. Until then a run drops its frame
 * (XDP_DROP: not sent, not counted). No frame goes at or after `deadline`, nor past `quota`.
 * A frame claimed more than `max_lag_ns` after it was due (the CPU was away: a BPF_PROG_RUN
 * call's setup, an interrupt) goes at once and the schedule slips with it (t0 moves on by the
 * lateness), so the frames due in the gap are not sent in a burst after it: a burst would
 * overflow the peer's ring and count as the forwarder's loss. 0 = never slip (catch up).
 */
struct pg_pace {
	__u64 t0;           /* CLOCK_MONOTONIC ns of frame 0 */
	__u64 ps_per_frame; /* 1e12 / rate */
	__u64 quota;        /* frames in all, 0 = no limit */
	__u64 deadline;     /* CLOCK_MONOTONIC ns */
	__u64 issued;       /* frames claimed so far */
	__u64 last_ns;      /* when the latest frame was claimed */
	__u64 max_lag_ns;   /* lateness past which the schedule slips, 0 = never */
};

/* Per CPU. runs: frames pg_xdp redirected (attempts); sent/drops: what the device's ndo_xdp_xmit
 * took and refused; last_err: its last error (negative errno), 0 if none. */
struct pg_stats {
	__u64 runs;
	__u64 sent;
	__u64 drops;
	__s64 last_err;
};

/* After the 14-byte Ethernet header, unaligned as in fwd_latency.c (magic, pad, seq, sent_ns):
 * the pad carries the sending CPU, so (cpu, seq) is unique across the tool's threads. */
struct pg_lat_payload {
	__u32 magic;
	__u32 cpu;
	__u64 seq;
	__u64 sent_ns;
} __attribute__((packed));

#endif /* RINGFLOW_BENCH_TOOLS_PKTGEN_BPF_SHARED_H */
