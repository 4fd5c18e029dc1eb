/*
 * io/net/net.h: the Ethernet/IPv4/UDP/ARP layer shared by the raw drivers (AF_XDP, DPDK).
 *
 * Raw drivers see whole Ethernet frames; ringflow apps see UDP payloads and a peer address
 * (the pktbuf contract in include/ringflow/pktbuf.h). This module is the one place that turns one into
 * the other, for both drivers:
 *   - rf_net_rx() parses a received frame. Every length read from the wire is checked
 *     against the frame length before it is used; a malformed frame is a verdict plus a
 *     counter, never a read out of bounds. Valid UDP to our IP and port yields the payload
 *     offset/length and the sender's address; the sender's MAC is learnt (neighbour table).
 *   - An ARP request for our IP is rewritten in place into the ARP reply (RF_NET_ARP_REPLY:
 *     the driver transmits the same frame). ringflow answers ARP itself because the raw
 *     driver's interface usually carries no kernel address (else the kernel would also
 *     answer the UDP port with ICMP "port unreachable").
 *   - rf_net_tx_udp() writes Ethernet+IPv4+UDP headers in the RF_NET_HDR_LEN bytes just
 *     before a payload (the pktbuf headroom), destination MAC from the neighbour table.
 *
 * Checksums: the IPv4 header checksum is always checked and written. The UDP checksum is
 * written on tx (over the pseudo-header and payload) and checked on rx when non-zero, with
 * one documented exception: a local sender on veth with TX checksum offload sends the frame
 * with only the pseudo-header sum in the field (Linux CHECKSUM_PARTIAL, finished by "the
 * NIC", which veth does not have). Such a field is accepted when `accept_partial_csum` is
 * set (the default of rf_net_init) and counted in rx_csum_partial, so a test bed can run
 * without `ethtool -K tx off`; clear it to drop those frames as bad checksums instead.
 *
 * Threading: a context belongs to one poller (one queue); nothing here is shared or locked.
 * Addresses and ports are in network byte order everywhere in this API.
 */
#ifndef RINGFLOW_IO_NET_H
#define RINGFLOW_IO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#define RF_NET_ETH_LEN 14
#define RF_NET_IP_LEN 20
#define RF_NET_UDP_LEN 8
#define RF_NET_HDR_LEN (RF_NET_ETH_LEN + RF_NET_IP_LEN + RF_NET_UDP_LEN) /* 42 */
#define RF_NET_ARP_FRAME_LEN 42 /* Ethernet + ARP for IPv4 over Ethernet, unpadded */
#define RF_NET_NEIGH_SLOTS 64   /* power of two */

/* What rf_net_rx() decided about a frame. */
enum rf_net_verdict {
	RF_NET_UDP = 0,       /* UDP payload for us: see struct rf_net_rx_info */
	RF_NET_ARP_REPLY,     /* frame rewritten in place into an ARP reply: transmit it */
	RF_NET_IGNORE,        /* valid but not ours (other IP/port/protocol, ARP not for us) */
	RF_NET_DROP,          /* malformed: a counter says why */
};

/* Counters, one per reason; one writer (the poller that owns the context), read from any
 * thread with relaxed loads (a driver's xstats). */
struct rf_net_stats {
	_Atomic uint64_t rx_udp;          /* UDP payloads delivered */
	_Atomic uint64_t rx_short;        /* frame shorter than the headers it claims */
	_Atomic uint64_t rx_bad_ip;       /* IPv4 version/IHL/total length inconsistent */
	_Atomic uint64_t rx_bad_ip_csum;  /* IPv4 header checksum wrong */
	_Atomic uint64_t rx_fragment;     /* IPv4 fragments (not reassembled) */
	_Atomic uint64_t rx_bad_udp_len;  /* UDP length < 8 or beyond the IP payload */
	_Atomic uint64_t rx_bad_udp_csum; /* UDP checksum wrong */
	_Atomic uint64_t rx_csum_partial; /* accepted with an offload-unfinished UDP checksum */
	_Atomic uint64_t rx_bad_arp;      /* ARP not IPv4-over-Ethernet or truncated */
	_Atomic uint64_t rx_ignored;      /* valid but not for us */
	_Atomic uint64_t arp_replied;     /* ARP requests for our IP answered */
	_Atomic uint64_t tx_udp;          /* UDP headers built */
	_Atomic uint64_t tx_no_neigh;     /* destination MAC unknown: frame turned into an ARP request */
};

struct rf_net_neigh {
	uint32_t ip; /* 0: empty slot */
	uint8_t mac[6];
};

struct rf_net_ctx {
	uint8_t mac[6];      /* our MAC */
	uint32_t ip;         /* our IPv4 address */
	uint16_t port;       /* our UDP port; 0 accepts every port */
	bool accept_partial_csum;
	struct rf_net_neigh neigh[RF_NET_NEIGH_SLOTS];
	struct rf_net_stats st;
};

/* Where the UDP payload of an accepted frame is, and who sent it. */
struct rf_net_rx_info {
	uint32_t payload_off; /* from the start of the frame */
	uint32_t payload_len;
	uint32_t src_ip, dst_ip;
	uint16_t src_port, dst_port;
	uint8_t src_mac[6];
};

/* Initialise a context for MAC/IP/port (network order); accept_partial_csum on. */
void rf_net_init(struct rf_net_ctx *ctx, const uint8_t mac[6], uint32_t ip, uint16_t port);

/* Parse one frame of len bytes. May rewrite the frame (ARP reply) when it returns
 * RF_NET_ARP_REPLY; *out is filled only for RF_NET_UDP. Never reads beyond len. */
enum rf_net_verdict rf_net_rx(struct rf_net_ctx *ctx, uint8_t *frame, size_t len,
			      struct rf_net_rx_info *out);

/* Build Ethernet/IPv4/UDP headers in the RF_NET_HDR_LEN bytes before payload[0], from our
 * address/port to dst_ip:dst_port. Returns the frame length (payload_len + 42), or, when
 * the destination MAC is not known, rewrites the buffer from payload-42 into a broadcast
 * ARP request for dst_ip and returns -(RF_NET_ARP_FRAME_LEN) (the payload is lost: the
 * caller still transmits the frame and counts it in the xstat tx_no_neigh, not as sent,
 * nor in tx_bytes). -EMSGSIZE when the
 * payload does not fit an IPv4 datagram. */
int rf_net_tx_udp(struct rf_net_ctx *ctx, uint8_t *payload, uint32_t payload_len,
		  uint32_t dst_ip, uint16_t dst_port);

/* Neighbour table: learn (replace) ip -> mac; look up (true when found). */
void rf_net_neigh_learn(struct rf_net_ctx *ctx, uint32_t ip, const uint8_t mac[6]);
bool rf_net_neigh_lookup(const struct rf_net_ctx *ctx, uint32_t ip, uint8_t mac[6]);

/* Write a broadcast ARP request "who has target_ip" into frame (42 bytes). */
void rf_net_arp_request(const struct rf_net_ctx *ctx, uint8_t *frame, uint32_t target_ip);

/* ifname's MAC into mac (if not NULL) and, when ip is not NULL and *ip is 0, its first IPv4
 * address into *ip
 * (left 0 when it has none). 0, or -errno (e.g. -ENODEV: no such interface). */
int rf_net_if_lookup(const char *ifname, uint8_t mac[6], uint32_t *ip);

/* Internet checksum helpers (RFC 1071), exposed for the tests and the drivers. Results are
 * host-order numbers: store them big-endian (htons) into the header field. */
uint32_t rf_net_csum_add(uint32_t sum, const void *data, size_t len); /* unfolded sum of BE words */
uint16_t rf_net_csum_fold(uint32_t sum);                              /* ~(ones'-complement fold) */
uint16_t rf_net_ip_csum(const void *iphdr, size_t ihl_bytes);         /* field computed as 0 */
/* UDP checksum for a datagram (udp points at the UDP header, len = UDP length), the field
 * taken as 0; a computed 0 is returned as 0xffff (0 means "no checksum" in IPv4 UDP). */
uint16_t rf_net_udp_csum(uint32_t src_ip, uint32_t dst_ip, const void *udp, size_t len);

/* ifname's MTU, or -errno; fd is any AF_INET datagram socket (its netns is asked). */
int rf_net_if_mtu(int fd, const char *ifname);
/* 1 when ifname is up and its carrier is on (IFF_UP and IFF_RUNNING), 0 when not, -errno. */
int rf_net_if_running(int fd, const char *ifname);

#endif /* RINGFLOW_IO_NET_H */
