/*
 * io/net/net.c: Ethernet/IPv4/UDP/ARP parsing and header building for the raw drivers.
 *
 * The one idea: nothing read from the wire is trusted. Each header is read only after the
 * frame is known to be long enough for it, and each length field is checked against what
 * is actually there (IPv4 total length against the frame, UDP length against the IP
 * payload) before it is used. Fields are read byte by byte (be16/be32), so frames need no
 * particular alignment. See net.h for the checksum policy.
 */
#include "io/net/net.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* One writer (the context's poller); other threads read the counters as a driver's xstats:
 * a relaxed load and store is enough (no read-modify-write needed with one writer). */
static inline void net_inc(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IPPROTO_UDP_ 17

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint32_t rf_net_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t s = sum; /* 64-bit accumulator: no carry lost for any realistic length */
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

/* Ones'-complement fold to 16 bits, not inverted. */
static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t rf_net_csum_fold(uint32_t sum)
{
	return (uint16_t)~fold(sum);
}

uint16_t rf_net_ip_csum(const void *iphdr, size_t ihl_bytes)
{
	const uint8_t *ip = iphdr;
	uint32_t s = rf_net_csum_add(0, ip, 10);

	s = rf_net_csum_add(s, ip + 12, ihl_bytes - 12);
	return rf_net_csum_fold(s);
}

static uint32_t pseudo_sum(uint32_t src_ip, uint32_t dst_ip, size_t udp_len)
{
	uint8_t ph[12];

	memcpy(ph, &src_ip, 4);
	memcpy(ph + 4, &dst_ip, 4);
	ph[8] = 0;
	ph[9] = IPPROTO_UDP_;
	put16(ph + 10, (uint16_t)udp_len);
	return rf_net_csum_add(0, ph, sizeof(ph));
}

uint16_t rf_net_udp_csum(uint32_t src_ip, uint32_t dst_ip, const void *udp, size_t len)
{
	const uint8_t *u = udp;
	uint32_t s = pseudo_sum(src_ip, dst_ip, len);
	uint16_t c;

	s = rf_net_csum_add(s, u, 6);
	s = rf_net_csum_add(s, u + 8, len - 8);
	c = rf_net_csum_fold(s);
	return c ? c : 0xffff;
}

void rf_net_init(struct rf_net_ctx *ctx, const uint8_t mac[6], uint32_t ip, uint16_t port)
{
	memset(ctx, 0, sizeof(*ctx));
	memcpy(ctx->mac, mac, 6);
	ctx->ip = ip;
	ctx->port = port;
	ctx->accept_partial_csum = true;
}

/* Fibonacci hash of the address to a home slot; linear probing over a few slots. */
static unsigned neigh_home(uint32_t ip)
{
	return (unsigned)((ip * 2654435769u) >> 26) & (RF_NET_NEIGH_SLOTS - 1);
}

#define NEIGH_PROBE 8

void rf_net_neigh_learn(struct rf_net_ctx *ctx, uint32_t ip, const uint8_t mac[6])
{
	unsigned h = neigh_home(ip), i, slot = h;

	if (ip == 0)
		return;
	for (i = 0; i < NEIGH_PROBE; i++) {
		struct rf_net_neigh *n = &ctx->neigh[(h + i) & (RF_NET_NEIGH_SLOTS - 1)];
		if (n->ip == ip || n->ip == 0) {
			slot = (h + i) & (RF_NET_NEIGH_SLOTS - 1);
			break;
		}
	}
	/* All probed slots taken by others: evict the home slot (the table is a cache). */
	ctx->neigh[slot].ip = ip;
	memcpy(ctx->neigh[slot].mac, mac, 6);
}

bool rf_net_neigh_lookup(const struct rf_net_ctx *ctx, uint32_t ip, uint8_t mac[6])
{
	unsigned h = neigh_home(ip), i;

	if (ip == 0)
		return false;
	for (i = 0; i < NEIGH_PROBE; i++) {
		const struct rf_net_neigh *n = &ctx->neigh[(h + i) & (RF_NET_NEIGH_SLOTS - 1)];
		if (n->ip == ip) {
			memcpy(mac, n->mac, 6);
			return true;
		}
		if (n->ip == 0)
			return false;
	}
	return false;
}

static enum rf_net_verdict rx_arp(struct rf_net_ctx *ctx, uint8_t *f, size_t len)
{
	uint8_t *a = f + RF_NET_ETH_LEN;
	uint32_t spa, tpa;
	uint8_t sha[6];

	if (len < RF_NET_ARP_FRAME_LEN) {
		net_inc(&ctx->st.rx_short);
		return RF_NET_DROP;
	}
	/* htype Ethernet, ptype IPv4, hlen 6, plen 4 */
	if (be16(a) != 1 || be16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4) {
		net_inc(&ctx->st.rx_bad_arp);
		return RF_NET_DROP;
	}
	memcpy(sha, a + 8, 6);
	memcpy(&spa, a + 14, 4);
	memcpy(&tpa, a + 24, 4);
	if (tpa != ctx->ip || ctx->ip == 0) {
		net_inc(&ctx->st.rx_ignored);
		return RF_NET_IGNORE;
	}
	rf_net_neigh_learn(ctx, spa, sha); /* RFC 826: learn the sender when we are the target */
	if (be16(a + 6) != 1) {            /* a reply to us (or other op): learnt, nothing to send */
		net_inc(&ctx->st.rx_ignored);
		return RF_NET_IGNORE;
	}
	/* Turn the request into the reply, in place. */
	memcpy(f, sha, 6);
	memcpy(f + 6, ctx->mac, 6);
	put16(a + 6, 2);
	memcpy(a + 18, sha, 6);
	memcpy(a + 24, &spa, 4);
	memcpy(a + 8, ctx->mac, 6);
	memcpy(a + 14, &ctx->ip, 4);
	net_inc(&ctx->st.arp_replied);
	return RF_NET_ARP_REPLY;
}

/* The UDP checksum field of a checked datagram is acceptable: fully right, or (when allowed)
 * the pseudo-header-only sum that an offloading local sender leaves behind. */
static bool udp_csum_ok(struct rf_net_ctx *ctx, uint32_t src, uint32_t dst, const uint8_t *u,
			size_t ulen)
{
	uint16_t field = be16(u + 6);
	uint32_t s;

	if (field == 0)
		return true; /* sender did not compute one (allowed in IPv4) */
	s = pseudo_sum(src, dst, ulen);
	if (ctx->accept_partial_csum && field == fold(s)) {
		net_inc(&ctx->st.rx_csum_partial);
		return true;
	}
	s = rf_net_csum_add(s, u, ulen);
	return fold(s) == 0xffff;
}

enum rf_net_verdict rf_net_rx(struct rf_net_ctx *ctx, uint8_t *f, size_t len,
			      struct rf_net_rx_info *out)
{
	const uint8_t *ip, *u;
	size_t ihl, tot, ulen;
	uint32_t src, dst;
	uint16_t dport;

	if (len < RF_NET_ETH_LEN) {
		net_inc(&ctx->st.rx_short);
		return RF_NET_DROP;
	}
	switch (be16(f + 12)) {
	case ETHERTYPE_ARP:
		return rx_arp(ctx, f, len);
	case ETHERTYPE_IPV4:
		break;
	default: /* IPv6, VLAN tags, LLDP...: not ours (VLANs are not supported) */
		net_inc(&ctx->st.rx_ignored);
		return RF_NET_IGNORE;
	}
	ip = f + RF_NET_ETH_LEN;
	if (len < RF_NET_ETH_LEN + RF_NET_IP_LEN) {
		net_inc(&ctx->st.rx_short);
		return RF_NET_DROP;
	}
	ihl = (size_t)(ip[0] & 15) * 4;
	tot = be16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < RF_NET_IP_LEN || tot < ihl) {
		net_inc(&ctx->st.rx_bad_ip);
		return RF_NET_DROP;
	}
	/* tot may be less than what is there (Ethernet pads to 60 B), never more. */
	if (RF_NET_ETH_LEN + tot > len) {
		net_inc(&ctx->st.rx_short);
		return RF_NET_DROP;
	}
	if (fold(rf_net_csum_add(0, ip, ihl)) != 0xffff) {
		net_inc(&ctx->st.rx_bad_ip_csum);
		return RF_NET_DROP;
	}
	if (be16(ip + 6) & 0x3fff) { /* MF flag or a fragment offset */
		net_inc(&ctx->st.rx_fragment);
		return RF_NET_DROP;
	}
	memcpy(&src, ip + 12, 4);
	memcpy(&dst, ip + 16, 4);
	if (ip[9] != IPPROTO_UDP_ || dst != ctx->ip) {
		net_inc(&ctx->st.rx_ignored);
		return RF_NET_IGNORE;
	}
	u = ip + ihl;
	if (tot - ihl < RF_NET_UDP_LEN) {
		net_inc(&ctx->st.rx_bad_udp_len);
		return RF_NET_DROP;
	}
	ulen = be16(u + 4);
	if (ulen < RF_NET_UDP_LEN || ulen > tot - ihl) {
		net_inc(&ctx->st.rx_bad_udp_len);
		return RF_NET_DROP;
	}
	memcpy(&dport, u + 2, 2);
	if (ctx->port != 0 && dport != ctx->port) {
		net_inc(&ctx->st.rx_ignored);
		return RF_NET_IGNORE;
	}
	if (!udp_csum_ok(ctx, src, dst, u, ulen)) {
		net_inc(&ctx->st.rx_bad_udp_csum);
		return RF_NET_DROP;
	}
	rf_net_neigh_learn(ctx, src, f + 6); /* replies go back to the sender's MAC */
	out->payload_off = (uint32_t)(RF_NET_ETH_LEN + ihl + RF_NET_UDP_LEN);
	out->payload_len = (uint32_t)(ulen - RF_NET_UDP_LEN);
	out->src_ip = src;
	out->dst_ip = dst;
	memcpy(&out->src_port, u, 2);
	out->dst_port = dport;
	memcpy(out->src_mac, f + 6, 6);
	net_inc(&ctx->st.rx_udp);
	return RF_NET_UDP;
}

void rf_net_arp_request(const struct rf_net_ctx *ctx, uint8_t *f, uint32_t target_ip)
{
	uint8_t *a = f + RF_NET_ETH_LEN;

	memset(f, 0xff, 6);
	memcpy(f + 6, ctx->mac, 6);
	put16(f + 12, ETHERTYPE_ARP);
	put16(a, 1);
	put16(a + 2, ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1);
	memcpy(a + 8, ctx->mac, 6);
	memcpy(a + 14, &ctx->ip, 4);
	memset(a + 18, 0, 6);
	memcpy(a + 24, &target_ip, 4);
}

int rf_net_tx_udp(struct rf_net_ctx *ctx, uint8_t *payload, uint32_t payload_len,
		  uint32_t dst_ip, uint16_t dst_port)
{
	uint8_t *f = payload - RF_NET_HDR_LEN;
	uint8_t *ip = f + RF_NET_ETH_LEN, *u = ip + RF_NET_IP_LEN;
	uint32_t ulen = payload_len + RF_NET_UDP_LEN;

	if (payload_len > 65535 - RF_NET_IP_LEN - RF_NET_UDP_LEN)
		return -EMSGSIZE;
	if (!rf_net_neigh_lookup(ctx, dst_ip, f)) {
		rf_net_arp_request(ctx, f, dst_ip);
		net_inc(&ctx->st.tx_no_neigh);
		return -RF_NET_ARP_FRAME_LEN;
	}
	memcpy(f + 6, ctx->mac, 6);
	put16(f + 12, ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(RF_NET_IP_LEN + ulen));
	put16(ip + 4, 0);      /* id: unused, DF is set */
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP_;
	memcpy(ip + 12, &ctx->ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	put16(ip + 10, rf_net_ip_csum(ip, RF_NET_IP_LEN));
	memcpy(u, &ctx->port, 2);
	memcpy(u + 2, &dst_port, 2);
	put16(u + 4, (uint16_t)ulen);
	put16(u + 6, rf_net_udp_csum(ctx->ip, dst_ip, u, ulen));
	net_inc(&ctx->st.tx_udp);
	return (int)(RF_NET_HDR_LEN + payload_len);
}
