/*
 * bench/tools/pktgen.bpf.c: the two BPF programs of ringflow-pktgen (bench/tools/pktgen.c).
 *
 *   pg_xdp    run by BPF_PROG_RUN in live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES) on the frame
 *             template; it writes the per-frame fields (the flow's source IP and UDP port and
 *             the IP checksum, or the latency payload's sequence number and send time) and
 *             returns bpf_redirect(ifindex), so the kernel sends the frame out of the device.
 *             With live frames the kernel keeps a page's contents from one run to the next
 *             (the template is copied in once per page), also what a receiver rewrote in
 *             place (an XDP forwarder's new MAC or TTL comes back with the recycled page), so
 *             every run writes the template's headers back, then the varied fields. It
 *             counts its runs (redirect attempts) per CPU.
 *   pg_xmit   on the xdp_devmap_xmit tracepoint, fired when a bulk of redirected frames is
 *             handed to the device's ndo_xdp_xmit: adds what the driver took (sent) and what
 *             it refused (drops, with the error) per CPU. "sent" is what left the device: the
 *             count the tool reports. Only our frames count: this process (tgid), from the
 *             test run's receive device (the namespace's loopback, ifindex 1) to our device.
 *             A forwarder's XDP redirect, run in softirq on our CPU while we are the current
 *             task, has another source device and is not counted.
 *
 * The configuration is one array entry written by the tool after load and before any run.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "pktgen_bpf_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_cfg);
} pg_cfg_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_pace);
} pg_pace_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pg_stats);
} pg_stats_map SEC(".maps");

/* Only the field we read; libbpf relocates its offset against the kernel's BTF (CO-RE). */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

static __always_inline __u16 ip_csum(const __u16 *w)
{
	__u32 sum = 0;
#pragma unroll
	for (int i = 0; i < 10; i++)
		if (i != 5) /* the checksum field itself */
			sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int pg_xdp(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct pg_cfg *cfg = bpf_map_lookup_elem(&pg_cfg_map, &key);
	struct pg_stats *st = bpf_map_lookup_elem(&pg_stats_map, &key);
	if (!cfg || !st)
		return XDP_ABORTED;
	unsigned char *data = (unsigned char *)(long)ctx->data;
	unsigned char *end = (unsigned char *)(long)ctx->data_end;
	__u64 n;
	if (cfg->flags & PG_F_PACED) {
		struct pg_pace *p = bpf_map_lookup_elem(&pg_pace_map, &key);
		if (!p)
			return XDP_ABORTED;
		__u64 now = bpf_ktime_get_ns();
		n = *(volatile __u64 *)&p->issued;
		__u64 due = p->t0 + n * p->ps_per_frame / 1000;
		if (now >= p->deadline || (p->quota && n >= p->quota) || now < due)
			return XDP_DROP; /* not due yet, or the run is over: spin on */
		/* Full barrier (BPF's cmpxchg): the one run that moves issued from n to n + 1 owns
		 * frame n; the others retry with the next n on their next run. */
		if (__sync_val_compare_and_swap(&p->issued, n, n + 1) != n)
			return XDP_DROP;
		/* Too late: the schedule slips so that frame n was due now (see pg_pace). An aligned
		 * 64-bit store; another thread may still read the old t0 and claim a frame or two
		 * early, never a whole gap's worth. */
		if (p->max_lag_ns && now - due > p->max_lag_ns)
			p->t0 += now - due;
		if (now > p->last_ns)
			p->last_ns = now; /* read by the tool after every run ended: no ordering needed */
	} else {
		n = st->runs;
	}
	/* Per CPU, and a batch runs with bottom halves off: nothing else on this CPU runs pg_xdp
	 * between this read and write. */
	st->runs++;
	if ((void *)(data + PG_HDR_LEN) > (void *)end)
		return XDP_ABORTED; /* never: the tool's frames are 60 bytes or more */
	/* The header as built, whatever the page went through since (pg_cfg): five 8-byte
	 * stores and one of 16 bits, not 42 single bytes (a byte array has no alignment to
	 * copy by). */
	__u64 *w = (__u64 *)data;
#pragma unroll
	for (int i = 0; i < PG_HDR_LEN / 8; i++)
		w[i] = cfg->hdr[i];
	*(__u16 *)(data + PG_HDR_LEN - 2) = (__u16)cfg->hdr[PG_HDR_LEN / 8];
	if (cfg->flags & PG_F_TIMESTAMP) {
		/* fwd_latency's payload after the Ethernet header: magic, cpu, seq, send time. */
		struct pg_lat_payload *pl = (void *)(data + ETH_HLEN);
		if ((void *)(pl + 1) > (void *)end)
			return XDP_ABORTED;
		pl->cpu = bpf_get_smp_processor_id();
		pl->seq = n;
		pl->sent_ns = bpf_ktime_get_ns(); /* CLOCK_MONOTONIC, as fwd_latency reads it */
	} else if (cfg->flows > 1) {
		struct iphdr *ip = (void *)(data + ETH_HLEN);
		struct udphdr *udp = (void *)(ip + 1);
		if ((void *)(udp + 1) > (void *)end)
			return XDP_ABORTED;
		__u32 f = (cfg->flags & PG_F_RANDOM) ? bpf_get_prandom_u32() % cfg->flows
						     : (__u32)(n % cfg->flows);
		ip->saddr = bpf_htonl(cfg->src_ip + f);
		udp->source = bpf_htons((__u16)(PG_SPORT_BASE + (f & PG_SPORT_MASK)));
		ip->check = ip_csum((const __u16 *)ip);
	}
	return bpf_redirect(cfg->ifindex, 0);
}

SEC("raw_tracepoint/xdp_devmap_xmit")
int pg_xmit(struct bpf_raw_tracepoint_args *ctx)
{
	/* TP_PROTO(const struct net_device *from_dev, const struct net_device *to_dev,
	 *          int sent, int drops, int err) */
	__u32 key = 0;
	struct pg_cfg *cfg = bpf_map_lookup_elem(&pg_cfg_map, &key);
	struct pg_stats *st = bpf_map_lookup_elem(&pg_stats_map, &key);
	if (!cfg || !st || (bpf_get_current_pid_tgid() >> 32) != cfg->tgid)
		return 0;
	const struct net_device *from = (const void *)ctx->args[0];
	const struct net_device *to = (const void *)ctx->args[1];
	if (BPF_CORE_READ(from, ifindex) != 1 || BPF_CORE_READ(to, ifindex) != (int)cfg->ifindex)
		return 0;
	int sent = (int)ctx->args[2], drops = (int)ctx->args[3], err = (int)ctx->args[4];
	st->sent += (__u64)sent;
	st->drops += (__u64)drops;
	if (err)
		st->last_err = err;
	return 0;
}

char _license[] SEC("license") = "GPL";
