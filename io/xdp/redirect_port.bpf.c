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
 * Before either: the offload table (offload_bpf.h, filled through ringflow/offload.h). A
 * frame matching an entry gets the entry's actions here and never reaches the socket; a
 * frame with no entry, or one the actions cannot finish (output port down, TTL expiring),
 * continues exactly as without the table.
 * Built with `clang -target bpf` at build time and embedded in the library.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "offload_bpf.h"

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

/* The offload table: entries, the masks in use, counters, output ports. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RF_OFL_ENTRIES);
	__type(key, struct rf_ofl_key);
	__type(value, struct rf_ofl_val);
} rf_ofl_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rf_ofl_masks);
} rf_ofl_masks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RF_OFL_ENTRIES);
	__type(key, __u32);
	__type(value, struct rf_ofl_ctr);
} rf_ofl_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rf_ofl_pw);
} rf_ofl_pw SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RF_OFL_MISC_N);
	__type(key, __u32);
	__type(value, __u64);
} rf_ofl_misc SEC(".maps");

/* The microflow cache (offload_bpf.h, struct rf_ofl_cached; the driver may size it down
 * before loading) and the table generation that validates it, with the cache's set mask
 * (struct rf_ofl_genv); the driver maps rf_ofl_gen into its memory and stores a new count there. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RF_OFL_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct rf_ofl_cached);
} rf_ofl_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rf_ofl_genv);
} rf_ofl_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, RF_OFL_PORTS);
	__type(key, __u32);   /* ifindex */
	__type(value, __u32); /* ifindex */
} rf_ofl_ports SEC(".maps");

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

static __always_inline void misc_inc(__u32 i)
{
	__u64 *c = bpf_map_lookup_elem(&rf_ofl_misc, &i);
	if (c)
		*c += 1;
}

/* Whether the L4 header of protocol proto (a first fragment's, or an unfragmented packet's)
 * has the bytes a strict parser reads, within l4len: ports of TCP, UDP and SCTP, type and
 * code of ICMP (icmp: its number in this IP version). */
static __always_inline int ofl_l4_whole(__u8 proto, __u32 l4len, __u8 icmp)
{
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP)
		return l4len >= 4;
	if (proto == icmp)
		return l4len >= 2;
	return 1;
}

/* Parse what the menu can match into k (every field) and *present (the bits that exist in
 * this frame, UNTAGGED / CTAG for its tag, and WHOLE when every header a strict parser reads
 * is all there: ringflow/offload.h lists the rules); *ttl gets the IPv4 TTL or IPv6 hop
 * limit (0: not IP); *bad: the IP header claims more bytes than the frame holds (a parser
 * that checks lengths drops such a frame, so only a port-wide entry may take it). */
static __always_inline void ofl_parse(struct xdp_md *ctx, struct rf_ofl_key *k, __u32 *present,
				      __u8 *ttl, int *bad)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *l3;
	__u16 type;
	__u8 proto = 0;
	void *l4 = 0;
	int whole = 1;

	*present = 0;
	*ttl = 0;
	*bad = 0;
	if ((void *)(eth + 1) > end)
		return;
	__builtin_memcpy(k->eth_dst, eth->h_dest, 6);
	__builtin_memcpy(k->eth_src, eth->h_source, 6);
	*present = RF_OFL_F_ETH_DST | RF_OFL_F_ETH_SRC | RF_OFL_F_ETH_TYPE;
	type = eth->h_proto;
	l3 = eth + 1;
	if (type == bpf_htons(ETH_P_8021Q) || type == bpf_htons(ETH_P_8021AD)) {
		__be16 *tag = l3;
		if ((void *)(tag + 2) > end)
			return;
		k->vlan = bpf_ntohs(tag[0]) & 0x0fff;
		*present |= RF_OFL_F_VLAN | (type == bpf_htons(ETH_P_8021Q) ? RF_OFL_F_CTAG : 0);
		type = tag[1];
		l3 = tag + 2;
	} else {
		*present |= RF_OFL_F_UNTAGGED;
	}
	k->eth_type = type;
	if (type == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		__u32 tot;
		if ((void *)(ip + 1) > end || ip->ihl < 5)
			return;
		tot = bpf_ntohs(ip->tot_len);
		if (ip->ihl * 4 > tot || l3 + tot > end) {
			*bad = 1;
			return;
		}
		__builtin_memcpy(k->ip_src, &ip->saddr, 4);
		__builtin_memcpy(k->ip_dst, &ip->daddr, 4);
		proto = ip->protocol;
		*ttl = ip->ttl;
		*present |= RF_OFL_F_IP4_SRC | RF_OFL_F_IP4_DST | RF_OFL_F_IP_PROTO;
		if (!(ip->frag_off & bpf_htons(0x3fff)))
			l4 = l3 + ip->ihl * 4;
		whole = ip->version == 4 && ((ip->frag_off & bpf_htons(0x1fff)) ||
					     ofl_l4_whole(proto, tot - ip->ihl * 4, IPPROTO_ICMP));
	} else if (type == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;
		__u32 plen;
		if ((void *)(ip6 + 1) > end)
			return;
		plen = bpf_ntohs(ip6->payload_len);
		if ((void *)(ip6 + 1) + plen > end) {
			*bad = 1;
			return;
		}
		__builtin_memcpy(k->ip_src, &ip6->saddr, 16);
		__builtin_memcpy(k->ip_dst, &ip6->daddr, 16);
		proto = ip6->nexthdr;
		*ttl = ip6->hop_limit;
		*present |= RF_OFL_F_IP6_SRC | RF_OFL_F_IP6_DST | RF_OFL_F_IP_PROTO;
		l4 = ip6 + 1;
		/* Extension headers (hop-by-hop, routing, fragment, AH, destination options)
		 * are not walked here: such a frame is not WHOLE, the app parses it. */
		whole = ip6->version == 6 && proto != 0 && proto != 43 && proto != 44 &&
			proto != 51 && proto != 60 && ofl_l4_whole(proto, plen, IPPROTO_ICMPV6);
	} else if (type == bpf_htons(ETH_P_ARP)) {
		struct arp_eth_ipv4 *arp = l3;
		if (l3 + 8 > end) {
			whole = 0;
		} else if (arp->htype == bpf_htons(1) && arp->ptype == bpf_htons(ETH_P_IP) &&
			   arp->hlen == 6 && arp->plen == 4) {
			whole = (void *)(arp + 1) <= end;
		}
	} else if (type == bpf_htons(ETH_P_MPLS_UC) || type == bpf_htons(ETH_P_MPLS_MC) ||
		   type == bpf_htons(0x88e7)) { /* MPLS: the top label; PBB: the I-TAG */
		whole = l3 + 4 <= end;
	}
	if (whole)
		*present |= RF_OFL_F_WHOLE;
	k->ip_proto = proto;
	if (l4 && (proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
		__be16 *ports = l4;
		if ((void *)(ports + 2) > end)
			return;
		k->l4_src = ports[0];
		k->l4_dst = ports[1];
		*present |= RF_OFL_F_L4_SRC | RF_OFL_F_L4_DST;
	}
}

/* The part of full that mask m names (the rest zero), as an entry's key. */
static __always_inline void ofl_mask(struct rf_ofl_key *k, const struct rf_ofl_key *full, __u32 m)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->fields = m;
	k->in_ifindex = full->in_ifindex;
	if (m & RF_OFL_F_ETH_DST)
		__builtin_memcpy(k->eth_dst, full->eth_dst, 6);
	if (m & RF_OFL_F_ETH_SRC)
		__builtin_memcpy(k->eth_src, full->eth_src, 6);
	if (m & RF_OFL_F_VLAN)
		k->vlan = full->vlan;
	if (m & RF_OFL_F_ETH_TYPE)
		k->eth_type = full->eth_type;
	if (m & (RF_OFL_F_IP4_SRC | RF_OFL_F_IP6_SRC))
		__builtin_memcpy(k->ip_src, full->ip_src, 16);
	if (m & (RF_OFL_F_IP4_DST | RF_OFL_F_IP6_DST))
		__builtin_memcpy(k->ip_dst, full->ip_dst, 16);
	if (m & RF_OFL_F_IP_PROTO)
		k->ip_proto = full->ip_proto;
	if (m & RF_OFL_F_L4_SRC)
		k->l4_src = full->l4_src;
	if (m & RF_OFL_F_L4_DST)
		k->l4_dst = full->l4_dst;
}

/* Decrement the IPv4 TTL (checksum fixed) or IPv6 hop limit of the frame as it is now
 * (after pushes/pops); -1 if the header is cut short. */
static __always_inline int ofl_dec_ttl(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	void *l3;
	__u16 type;

	if ((void *)(eth + 1) > end)
		return -1;
	type = eth->h_proto;
	l3 = eth + 1;
	if (type == bpf_htons(ETH_P_8021Q) || type == bpf_htons(ETH_P_8021AD)) {
		__be16 *tag = l3;
		if ((void *)(tag + 2) > end)
			return -1;
		type = tag[1];
		l3 = tag + 2;
	}
	if (type == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;
		__u32 c;
		if ((void *)(ip + 1) > end)
			return -1;
		/* RFC 1624 incremental update, as the kernel's ip_decrease_ttl. */
		c = ip->check;
		c += bpf_htons(0x0100);
		ip->check = (__u16)(c + (c >= 0xffff));
		ip->ttl--;
	} else if (type == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;
		if ((void *)(ip6 + 1) > end)
			return -1;
		ip6->hop_limit--;
	}
	return 0;
}

/* Run v's actions on the frame: XDP_REDIRECT (output), XDP_DROP, or -1 when the program
 * cannot finish them (the frame goes on as unmatched, unmodified: checks come first). A global
 * function, so the verifier checks it once with unknown arguments rather than once for each
 * path of the parser that reaches it (inlined, the program no longer fits its limit). */
__attribute__((noinline)) int ofl_run(struct xdp_md *ctx, const struct rf_ofl_val *v, __u32 ttl)
{
	__u32 i, n, out = 0;

	if (!v)
		return -1;
	n = v->n;
	if (n > RF_OFL_ACTS)
		return -1;
	/* Output alone (a port pair): the redirect is its own check, since it fails when the
	 * port is not in the devmap, and nothing was modified before it. */
	if (n == 1 && v->a[0].type == RF_OFL_A_OUTPUT) {
		out = v->a[0].ifindex;
		if (bpf_redirect_map(&rf_ofl_ports, out, 0) == XDP_REDIRECT)
			return XDP_REDIRECT;
		misc_inc(RF_OFL_MISC_PORT_DOWN);
		return -1;
	}
	/* Checks first, so a frame left to userspace is left unmodified. */
	for (i = 0; i < RF_OFL_ACTS && i < n; i++) {
		if (v->a[i].type == RF_OFL_A_OUTPUT) {
			out = v->a[i].ifindex;
			if (!bpf_map_lookup_elem(&rf_ofl_ports, &out)) {
				misc_inc(RF_OFL_MISC_PORT_DOWN);
				return -1;
			}
		} else if (v->a[i].type == RF_OFL_A_DEC_TTL && ttl <= 1) {
			misc_inc(RF_OFL_MISC_TTL);
			return -1;
		}
	}
	for (i = 0; i < RF_OFL_ACTS && i < n; i++) {
		const struct rf_ofl_act *a = &v->a[i];
		void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) > end)
			return XDP_DROP;
		switch (a->type) {
		case RF_OFL_A_OUTPUT:
			return bpf_redirect_map(&rf_ofl_ports, out, 0) == XDP_REDIRECT ? XDP_REDIRECT
										: XDP_DROP;
		case RF_OFL_A_DROP:
			return XDP_DROP;
		case RF_OFL_A_SET_ETH_SRC:
			__builtin_memcpy(eth->h_source, a->mac, 6);
			break;
		case RF_OFL_A_SET_ETH_DST:
			__builtin_memcpy(eth->h_dest, a->mac, 6);
			break;
		case RF_OFL_A_PUSH_VLAN: {
			__u8 macs[12];
			__builtin_memcpy(macs, eth, 12);
			if (bpf_xdp_adjust_head(ctx, -4))
				return XDP_DROP;
			data = (void *)(long)ctx->data;
			end = (void *)(long)ctx->data_end;
			if (data + 16 > end)
				return XDP_DROP;
			__builtin_memcpy(data, macs, 12);
			((__be16 *)data)[6] = bpf_htons(ETH_P_8021Q);
			((__be16 *)data)[7] = a->tci;
			break;
		}
		case RF_OFL_A_POP_VLAN: {
			__u8 macs[12];
			if (eth->h_proto != bpf_htons(ETH_P_8021Q) &&
			    eth->h_proto != bpf_htons(ETH_P_8021AD))
				break; /* untagged: nothing to pop */
			__builtin_memcpy(macs, eth, 12);
			if (bpf_xdp_adjust_head(ctx, 4))
				return XDP_DROP;
			data = (void *)(long)ctx->data;
			end = (void *)(long)ctx->data_end;
			if (data + 14 > end)
				return XDP_DROP;
			__builtin_memcpy(data, macs, 12);
			/* As the switch's own pop (apps/ofswitch/sw_rewrite_pvt.h): a frame of
			 * Ethernet's minimum (ETH_ZLEN, 60 bytes) or more never ends up below it. The kernel
			 * zeroes the bytes the tail grows by; if it cannot grow, the frame goes
			 * as it is. */
			__u64 left = (__u64)(end - data);
			if (left < ETH_ZLEN && left + 4 >= ETH_ZLEN)
				bpf_xdp_adjust_tail(ctx, (int)(ETH_ZLEN - left));
			break;
		}
		case RF_OFL_A_DEC_TTL:
			if (ofl_dec_ttl(ctx) != 0)
				return XDP_DROP;
			break;
		default:
			return XDP_DROP;
		}
	}
	return XDP_DROP; /* no terminal action: the driver never installs such a list */
}

/* The frame's length as received, from the two packet pointers as 64-bit values (a 32-bit
 * difference of them would be spilled at a size the verifier refuses for pointers). */
static __always_inline __u64 ofl_len(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	return (__u64)(end - data);
}

/* Counts a hit of the entry whose counters are in slot `slot`. */
static __always_inline void ofl_count(__u32 slot, __u64 len)
{
	struct rf_ofl_ctr *c = bpf_map_lookup_elem(&rf_ofl_stats, &slot);
	if (c) { /* per-CPU: no other writer */
		c->hits += 1;
		c->bytes += len;
	}
}

/* The port-wide fast path (offload_bpf.h, struct rf_ofl_pw): an action verdict, -1 (its
 * entry cannot finish the frame), or -2 (off: look the frame up in the table). */
static __always_inline int ofl_portwide(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct rf_ofl_pw *pw = bpf_map_lookup_elem(&rf_ofl_pw, &zero);
	__u64 len;
	int verdict;

	if (!pw || !pw->on)
		return -2;
	if (pw->whole) { /* the entry names WHOLE alone: only a whole frame takes it */
		struct rf_ofl_key full = {};
		__u32 present;
		__u8 ttl;
		int bad;
		ofl_parse(ctx, &full, &present, &ttl, &bad);
		if (!(present & RF_OFL_F_WHOLE))
			return -2; /* the table decides: it skips WHOLE, a later mask may match */
	}
	len = ofl_len(ctx); /* as received: before the actions */
	verdict = ofl_run(ctx, &pw->v, 0); /* no DEC_TTL in it: the TTL is not needed */
	if (verdict >= 0)
		ofl_count(pw->v.slot, len);
	return verdict;
}

/* The mask walk for a frame's whole key (full->fields: its present bits, RF_OFL_CACHE_CUT for a
 * cut IP header): the first mask in use whose entry exists gives the answer, which is copied
 * into cache slot c under generation gen. Returns 1, or 0 when no mask finds an entry. All
 * masks sit in one map value: the loop counter stays a register the verifier can follow. A
 * global function, so the verifier checks it once, not once per path of the parser and the
 * cache probe that reach it (inlined, the program exceeds the verifier's limit). */
__attribute__((noinline)) int ofl_fill(const struct rf_ofl_key *full, struct rf_ofl_cached *c,
				       __u64 gen)
{
	struct rf_ofl_masks *ms;
	struct rf_ofl_key k;
	__u32 i, zero = 0, present, bad;

	if (!full || !c)
		return 0;
	ms = bpf_map_lookup_elem(&rf_ofl_masks, &zero);
	if (!ms)
		return 0;
	present = full->fields & ~RF_OFL_CACHE_CUT;
	bad = full->fields & RF_OFL_CACHE_CUT;
	for (i = 0; i < RF_OFL_MASKS; i++) {
		__u32 mask = ms->m[i];
		struct rf_ofl_val *v;

		if (!(mask & RF_OFL_MASK_USED))
			continue;
		mask &= ~RF_OFL_MASK_USED;
		if (mask & ~present)
			continue; /* names a field this frame lacks */
		if (bad && mask)
			continue; /* a cut IP frame: only the port-wide entry */
		ofl_mask(&k, full, mask);
		v = bpf_map_lookup_elem(&rf_ofl_table, &k);
		if (!v)
			continue;
		/* gen 0 first and the real one last (compiler barriers: only this CPU reads the
		 * slot, but a program run from an interrupt on it must never see a half-written
		 * slot under a live generation). */
		*(volatile __u64 *)&c->gen = 0;
		asm volatile("" ::: "memory");
		__builtin_memcpy(&c->key, full, sizeof(*full));
		__builtin_memcpy(&c->v, v, sizeof(*v));
		asm volatile("" ::: "memory");
		*(volatile __u64 *)&c->gen = gen;
		return 1;
	}
	return 0;
}

/* The cache's set for a whole key (before the set mask): eight products summed (a key bit
 * reaches the bits of its product from its own position up), folded and multiplied once more
 * so that every bit reaches bits 32..47, which are kept; two ways per set. */
static __always_inline __u32 ofl_cache_hash(const struct rf_ofl_key *k)
{
	const __u64 *w = (const __u64 *)k;
	__u64 h = w[0] * 0x9e3779b97f4a7c15ULL + w[1] * 0xc2b2ae3d27d4eb4fULL +
		  w[2] * 0x165667b19e3779f9ULL + w[3] * 0xd6e8feb86659fd93ULL +
		  w[4] * 0xff51afd7ed558ccdULL + w[5] * 0xc4ceb9fe1a85ec53ULL +
		  w[6] * 0x27d4eb2f165667c5ULL + w[7] * 0x94d049bb133111ebULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (__u32)(h >> 32);
}

static __always_inline int ofl_key_eq(const struct rf_ofl_key *a, const struct rf_ofl_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 d = 0;
#pragma unroll
	for (int i = 0; i < (int)(sizeof(*a) / 8); i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* The offload table: an action verdict, or -1 (no entry, or one it cannot finish). A frame
 * whose whole key the cache holds under the current generation skips the mask walk and its
 * hashes; a frame that finds an entry by the walk leaves its answer in the cache. */
static __always_inline int ofl_lookup(struct xdp_md *ctx)
{
	struct rf_ofl_key full __attribute__((aligned(8))) = {};
	struct rf_ofl_cached *c, *way0, *way1;
	struct rf_ofl_masks *ms;
	__u32 present, set, slot, way, zero = 0;
	__u64 len = ofl_len(ctx), gen;
	struct rf_ofl_genv *gp;
	__u8 ttl;
	int bad, verdict;

	ms = bpf_map_lookup_elem(&rf_ofl_masks, &zero);
	if (!ms || !(ms->m[0] | ms->m[1] | ms->m[2] | ms->m[3] | ms->m[4] | ms->m[5] | ms->m[6] |
		     ms->m[7]))
		return -1; /* an empty table (no offload in use): no parse, no cache */
	full.in_ifindex = ctx->ingress_ifindex;
	ofl_parse(ctx, &full, &present, &ttl, &bad);
	full.fields = present | (bad ? RF_OFL_CACHE_CUT : 0); /* the walk's other inputs */
	gp = bpf_map_lookup_elem(&rf_ofl_gen, &zero);
	if (!gp)
		return -1;
	/* A plain read on a hit: a slot of the current generation was filled after this CPU saw
	 * that generation (below), so its answer is the table's since the last change. A hit
	 * on a generation read just before a change is a frame that ran just before it. */
	gen = *(volatile __u64 *)&gp->gen;
	set = ofl_cache_hash(&full) & gp->set_mask; /* a slot past the map's end: no lookup */
	slot = set * 2;
	way0 = bpf_map_lookup_elem(&rf_ofl_cache, &slot);
	slot = set * 2 + 1;
	way1 = bpf_map_lookup_elem(&rf_ofl_cache, &slot);
	if (!way0 || !way1)
		return -1; /* never: the driver sized the map for the mask */
	if (way0->gen == gen && ofl_key_eq(&way0->key, &full)) {
		way = 0;
		misc_inc(RF_OFL_MISC_CACHE_HIT);
	} else if (way1->gen == gen && ofl_key_eq(&way1->key, &full)) {
		way = 1;
		misc_inc(RF_OFL_MISC_CACHE_HIT);
	} else {
		misc_inc(RF_OFL_MISC_WALK);
		/* Fully ordered (a BPF atomic with fetch): pairs with the driver's release store
		 * of a new generation after its table change, and keeps the walk's reads after
		 * this read, so an answer stored under `gen` is the table's as of `gen` or later. */
		gen = __sync_fetch_and_add(&gp->gen, 0);
		/* A stale way first, else one picked by low bits of the source address and port,
		 * so that the microflows of a crowded set do not all evict the same way. */
		way = way0->gen != gen ? 0 : way1->gen != gen ? 1 : (full.l4_src ^ full.ip_src[3]) & 1;
		if (!ofl_fill(&full, way ? way1 : way0, gen))
			return -1;
	}
	c = way ? way1 : way0; /* the slot found, or just filled */
	verdict = ofl_run(ctx, &c->v, ttl);
	if (verdict < 0)
		return -1;
	ofl_count(c->v.slot, len);
	return verdict;
}

SEC("xdp")
int rf_redirect_port(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct rf_xdp_cfg *cfg;
	__u32 key = 0;
	int verdict = ofl_portwide(ctx);

	if (verdict == -2)
		verdict = ofl_lookup(ctx);
	if (verdict >= 0)
		return verdict;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
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
