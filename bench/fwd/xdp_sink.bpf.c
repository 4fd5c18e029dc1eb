/* bench/fwd/xdp_sink.bpf.c: the forwarding bed's sink (bench/fwd/run.sh). Attached in native
 * mode to SINK's veth (and, for the generator's ceiling, to FWD's first veth), it drops every
 * frame at the earliest point, so counting a frame (the veth's rx_packets, counted before XDP
 * runs) costs the receiving CPU as little as possible.
 * Frames of the latency tools (ethertype 0x88b5, IEEE local experimental, with their magic):
 *   - while fwd_sinklat has timing on (lat_ctl[0] != 0), they are ringflow-pktgen --timestamps
 *     frames (magic, CPU, sequence number, send time from bpf_ktime_get_ns): timed here on
 *     arrival with the same clock, the one-way delay counted in the per-CPU histogram lat_hist
 *     (bench/fwd/lat_hist.h) that fwd_sinklat reads, and dropped;
 *   - otherwise (fwd_latency ping's, when trafgen is the generator) they pass to the stack,
 *     where fwd_latency's reflector reads them. */
#include <linux/bpf.h>
#include <stddef.h>

#include "../tools/pktgen_bpf_shared.h" /* the payload pktgen stamps: struct pg_lat_payload */
#include "lat_hist.h"

#define SEC(name) __attribute__((section(name), used))
/* The ethertype as it sits in memory, read as a short on this little-endian target. */
#define FWD_LAT_ETHERTYPE_MEM __builtin_bswap16(PG_LAT_ETHERTYPE)
#define FWD_LAT_HDR 14 /* the Ethernet header before the payload */

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static unsigned long long (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;

/* One count per bucket per CPU (no atomics: a CPU runs one XDP program at a time), and one
 * more at index LAT_HIST_BUCKETS for pktgen frames whose send time is ahead of the clock. */
struct {
	int (*type)[BPF_MAP_TYPE_PERCPU_ARRAY];
	int (*max_entries)[LAT_HIST_BUCKETS + 1];
	__u32 *key;
	__u64 *value;
} lat_hist SEC(".maps");

/* lat_ctl[0]: timing on (fwd_sinklat sets it for its window, then clears it). A plain word:
 * a frame in flight while it flips is timed or passed, either is fine. */
struct {
	int (*type)[BPF_MAP_TYPE_ARRAY];
	int (*max_entries)[1];
	__u32 *key;
	__u32 *value;
} lat_ctl SEC(".maps");

SEC("xdp") int xdp_sink(struct xdp_md *ctx)
{
	const unsigned char *data = (const unsigned char *)(unsigned long)ctx->data;
	const unsigned char *end = (const unsigned char *)(unsigned long)ctx->data_end;
	if (data + 14 > end)
		return XDP_DROP;
	if (*(const unsigned short *)(data + 12) != FWD_LAT_ETHERTYPE_MEM)
		return XDP_DROP;
	if (data + FWD_LAT_HDR + sizeof(struct pg_lat_payload) > end)
		return XDP_PASS;
	__u32 magic, key = 0;
	const __u32 *on = bpf_map_lookup_elem(&lat_ctl, &key);
	if (!on || !*on)
		return XDP_PASS;
	unsigned long long sent, now = bpf_ktime_get_ns();
	const unsigned char *pl = data + FWD_LAT_HDR;
	__builtin_memcpy(&magic, pl + offsetof(struct pg_lat_payload, magic), sizeof(magic));
	__builtin_memcpy(&sent, pl + offsetof(struct pg_lat_payload, sent_ns), sizeof(sent));
	if (magic != PG_LAT_MAGIC)
		return XDP_PASS;
	key = sent <= now ? lat_hist_index(now - sent) : LAT_HIST_BUCKETS;
	__u64 *n = bpf_map_lookup_elem(&lat_hist, &key);
	if (n)
		*n += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
