/*
 * io/xdp/redirect_port.bpf.c: the XDP program of ringflow's AF_XDP driver.
 *
 * Message mode: redirects into the AF_XDP socket of the receiving queue only what ringflow
 * owns:
 *   - IPv4 UDP to the configured destination IP and port (not fragments), and
 *   - ARP whose target is the configured IP (ringflow answers ARP itself, io/net/net.h);
 * everything else gets XDP_PASS, so the kernel keeps working on the interface (other
 * ports, ICMP, IPv6, ARP for other addresses).
 * Frame mode (RF_XDP_ALL_FRAMES): every frame of the queue goes to its socket; the kernel
 * sees none (the interface belongs to the app, as a DPDK port would).
 * The configuration is one array entry written by the driver after load; until then
 * (port 0, no flags) nothing is redirected.
 * Built with `clang -target bpf` at build time and embedded in the library.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define RF_XDP_ALL_FRAMES 0x1 /* frame mode: redirect every frame */

struct rf_xdp_cfg {
	__u32 ip;    /* network order */
	__u16 port;  /* network order; 0 = redirect nothing (message mode) */
	__u16 flags; /* RF_XDP_ALL_FRAMES */
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} rf_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rf_xdp_cfg);
} rf_cfg SEC(".maps");

/* ARP for IPv4 over Ethernet, as laid out after the Ethernet header. */
struct arp_eth_ipv4 {
	__be16 htype, ptype;
	__u8 hlen, plen;
	__be16 op;
	__u8 sha[6];
	__be32 spa;
	__u8 tha[6];
	__be32 tpa;
} __attribute__((packed));

SEC("xdp")
int rf_redirect_port(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct rf_xdp_cfg *cfg;
	__u32 key = 0;

	cfg = bpf_map_lookup_elem(&rf_cfg, &key);
	if (!cfg)
		return XDP_PASS;
	if (cfg->flags & RF_XDP_ALL_FRAMES) /* no socket on this queue: the kernel gets it */
		return bpf_redirect_map(&rf_xsks, ctx->rx_queue_index, XDP_PASS);
	if (cfg->port == 0 || (void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_ARP)) {
		struct arp_eth_ipv4 *arp = (void *)(eth + 1);
		if ((void *)(arp + 1) > end || arp->tpa != cfg->ip)
			return XDP_PASS;
	} else if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		struct udphdr *udp;
		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->daddr != cfg->ip ||
		    (ip->frag_off & bpf_htons(0x3fff)) || ip->ihl < 5)
			return XDP_PASS;
		udp = (void *)ip + ip->ihl * 4;
		if ((void *)(udp + 1) > end || udp->dest != cfg->port)
			return XDP_PASS;
	} else {
		return XDP_PASS;
	}
	/* No socket on this queue: the kernel gets the frame (the default action). */
	return bpf_redirect_map(&rf_xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
