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

#include "lat_hist.h"

#define SEC(name) __attribute__((section(name), used))
#define FWD_LAT_ETHERTYPE_BE 0xb588 /* 0x88b5 as it sits in memory, read on a little-endian CPU */
#define FWD_LAT_OFF_MAGIC 14        /* after the Ethernet header */
#define FWD_LAT_OFF_SENT 30         /* magic, cpu (4 each), seq (8), then the send time */
#define FWD_LAT_WAIT_MIN_LEN 38     /* through the send time */

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
	if (*(const unsigned short *)(data + 12) != FWD_LAT_ETHERTYPE_BE)
		return XDP_DROP;
	if (data + FWD_LAT_WAIT_MIN_LEN > end)
		return XDP_PASS;
	__u32 magic, key = 0;
	unsigned long long sent, now = bpf_ktime_get_ns();
	__builtin_memcpy(&magic, data + FWD_LAT_OFF_MAGIC, sizeof(magic));
	__builtin_memcpy(&sent, data + FWD_LAT_OFF_SENT, sizeof(sent));
	const __u32 *on = bpf_map_lookup_elem(&lat_ctl, &key);
	if (magic != LAT_HIST_MAGIC || !on || !*on)
		return XDP_PASS;
	key = sent <= now ? lat_hist_index(now - sent) : LAT_HIST_BUCKETS;
	__u64 *n = bpf_map_lookup_elem(&lat_hist, &key);
	if (n)
		*n += 1;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
