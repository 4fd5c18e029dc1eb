/*
 * tests/tools/pktgen_sink.bpf.c: the sink of ringflow-pktgen's tests (test_pktgen.c),
 * attached in native mode to the receiving veth (which puts that veth in NAPI mode, as live
 * frames need). It drops every frame after counting it: the generator's frames (UDP to
 * 10.251.0.1:9, or fwd_latency's) apart from the rest, their shortest and longest length, fwd_latency-format frames with the right magic, and every distinct UDP/IPv4 5-tuple
 * (a hash map, with how many frames each had; a full map is counted, never hidden).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "pktgen_sink.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pgs_stats);
} pgs_stats_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PGS_MAX_TUPLES);
	__type(key, struct pgs_tuple);
	__type(value, __u64);
} pgs_tuples SEC(".maps");

static __always_inline void count_frame(struct pgs_stats *st, __u64 len)
{
	st->frames++;
	if (!st->min_len || len < st->min_len)
		st->min_len = len;
	if (len > st->max_len)
		st->max_len = len;
}

SEC("xdp")
int pgs_sink(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct pgs_stats *st = bpf_map_lookup_elem(&pgs_stats_map, &key);
	if (!st)
		return XDP_DROP;
	unsigned char *data = (unsigned char *)(long)ctx->data;
	unsigned char *end = (unsigned char *)(long)ctx->data_end;
	__u64 len = (__u64)(end - data);
	struct ethhdr *eth = (void *)data;
	if ((void *)(eth + 1) > (void *)end)
		goto other;
	if (eth->h_proto == bpf_htons(PGS_LAT_ETHERTYPE)) {
		__u32 *magic = (void *)(eth + 1);
		if ((void *)(magic + 1) > (void *)end || *magic != PGS_LAT_MAGIC)
			goto other;
		st->lat_frames++;
		count_frame(st, len);
		return XDP_DROP;
	}
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		goto other;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > (void *)end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    ip->daddr != bpf_htonl(PGS_DST_IP) || udp->dest != bpf_htons(PGS_DST_PORT))
		goto other;
	count_frame(st, len);
	/* The IPv4 header checksum must come out right for every flow the generator rewrote. */
	__u32 sum = 0;
	const __u16 *w = (const __u16 *)ip;
#pragma unroll
	for (int i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	if (sum != 0xffff)
		st->bad_csum++;
	struct pgs_tuple t = {.saddr = ip->saddr, .daddr = ip->daddr, .sport = udp->source,
			      .dport = udp->dest, .proto = ip->protocol};
	__u64 one = 1, *n = bpf_map_lookup_elem(&pgs_tuples, &t);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&pgs_tuples, &t, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(&pgs_tuples, &t); /* another CPU added it first */
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			st->tuple_overflow++;
	}
	return XDP_DROP;
other: /* the kernel's own chatter on a fresh link (IPv6 neighbour discovery and the like) */
	st->other++;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
