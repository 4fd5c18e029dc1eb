/*
 * tests/net/test_net_frames.c: the raw drivers' Ethernet/IPv4/UDP/ARP layer on hand-built
 * frames: a good frame, each malformed case (one counter each, no crash), checksum known
 * vectors, the offload-unfinished checksum, ARP request -> reply bytes, neighbour learning
 * and the header build for replies.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/net/net.h"

static const uint8_t our_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
#define OUR_IP "10.0.0.2"
#define PEER_IP "10.0.0.1"

static uint32_t ip4(const char *s)
{
	struct in_addr a;
	cr_assert_eq(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static void ctx_init(struct rf_net_ctx *c)
{
	rf_net_init(c, our_mac, ip4(OUR_IP), htons(9000));
}

/* A UDP frame PEER_IP:1234 -> OUR_IP:9000 carrying "hello", correct checksums; 47 bytes. */
static size_t good_frame(uint8_t *f)
{
	static const uint8_t bytes[] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,  /* Ethernet */
		0x45, 0x00, 0x00, 0x21, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, /* IPv4 ... */
		0x00, 0x00, 10, 0, 0, 1, 10, 0, 0, 2,                         /* csum below */
		0x04, 0xd2, 0x23, 0x28, 0x00, 0x0d, 0x80, 0x05,             /* UDP, csum 0x8005 */
		'h', 'e', 'l', 'l', 'o'};
	uint16_t c;
	memcpy(f, bytes, sizeof(bytes));
	c = htons(rf_net_ip_csum(f + 14, 20));
	memcpy(f + 24, &c, 2);
	return sizeof(bytes);
}

Test(net, ipv4_header_checksum_known_vector)
{
	/* The classic example header: checksum 0xb861. */
	const uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			       0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	cr_assert_eq(rf_net_ip_csum(h, 20), 0xb861);
	cr_assert_eq(rf_net_csum_fold(rf_net_csum_add(0, h, 20)), 0);
}

Test(net, udp_checksum_known_vector)
{
	/* Computed independently (Python, RFC 768 pseudo-header): 0x8005. */
	uint8_t f[64];
	good_frame(f);
	cr_assert_eq(rf_net_udp_csum(ip4(PEER_IP), ip4(OUR_IP), f + 34, 13), 0x8005);
}

Test(net, good_frame_yields_payload_and_peer)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f);
	ctx_init(&c);
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_UDP);
	cr_assert_eq(in.payload_off, 42);
	cr_assert_eq(in.payload_len, 5);
	cr_assert_eq(memcmp(f + in.payload_off, "hello", 5), 0);
	cr_assert_eq(in.src_ip, ip4(PEER_IP));
	cr_assert_eq(ntohs(in.src_port), 1234);
	cr_assert_eq(ntohs(in.dst_port), 9000);
	cr_assert_eq(memcmp(in.src_mac, peer_mac, 6), 0);
	cr_assert_eq(c.st.rx_udp, 1);
}

Test(net, ethernet_padding_beyond_ip_length_is_ignored)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64] = {0};
	good_frame(f);
	ctx_init(&c);
	cr_assert_eq(rf_net_rx(&c, f, 60, &in), RF_NET_UDP); /* padded to the 60 B minimum */
	cr_assert_eq(in.payload_len, 5);
}

Test(net, every_truncation_is_dropped_not_read)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f), len;
	ctx_init(&c);
	for (len = 0; len < n; len++) {
		/* Exactly len bytes in a buffer of len: ASan catches any read beyond. */
		uint8_t *t = len ? malloc(len) : NULL;
		if (len)
			memcpy(t, f, len);
		cr_assert_eq(rf_net_rx(&c, t, len, &in), RF_NET_DROP, "len %zu", len);
		free(t);
	}
	cr_assert_eq(c.st.rx_short, n);
	cr_assert_eq(c.st.rx_udp, 0);
}

/* Change one byte, fix the IPv4 checksum if asked, and expect a drop counted in *ctr. */
static void expect_drop(size_t off, uint8_t val, bool fix_ip_csum, size_t which)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f);
	uint64_t before, after;
	ctx_init(&c);
	f[off] = val;
	if (fix_ip_csum) {
		uint16_t cs = htons(rf_net_ip_csum(f + 14, (size_t)(f[14] & 15) * 4));
		memcpy(f + 24, &cs, 2);
	}
	before = ((uint64_t *)&c.st)[which];
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_DROP, "byte %zu = %#x", off, val);
	after = ((uint64_t *)&c.st)[which];
	cr_assert_eq(after, before + 1, "byte %zu: counter %zu", off, which);
}

#define CTR(field) (offsetof(struct rf_net_stats, field) / sizeof(uint64_t))

Test(net, malformed_ipv4_each_counted)
{
	expect_drop(14, 0x65, true, CTR(rx_bad_ip));      /* version 6 in an IPv4 frame */
	expect_drop(14, 0x44, false, CTR(rx_bad_ip));     /* IHL 4 (< 20 bytes) */
	expect_drop(14, 0x4f, false, CTR(rx_bad_ip));     /* IHL 60 > total length 33 */
	expect_drop(17, 0x10, true, CTR(rx_bad_ip));      /* total length 16 < IHL */
	expect_drop(17, 0xff, true, CTR(rx_short));       /* total length beyond the frame */
	expect_drop(22, 0x3f, false, CTR(rx_bad_ip_csum)); /* TTL changed, checksum stale */
	expect_drop(20, 0x20, true, CTR(rx_fragment));    /* MF set */
	expect_drop(21, 0x08, true, CTR(rx_fragment));    /* fragment offset */
}

Test(net, malformed_udp_each_counted)
{
	expect_drop(39, 0x07, false, CTR(rx_bad_udp_len));  /* UDP length 7 < 8 */
	expect_drop(39, 0x0e, false, CTR(rx_bad_udp_len));  /* UDP length beyond IP payload */
	expect_drop(42, 'j', false, CTR(rx_bad_udp_csum));  /* payload changed */
	expect_drop(41, 0x06, false, CTR(rx_bad_udp_csum)); /* checksum field wrong */
}

Test(net, ip_total_length_too_short_for_udp_header)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	uint16_t cs;
	size_t n = good_frame(f);
	ctx_init(&c);
	f[17] = 24; /* IPv4 total 24: only 4 bytes of UDP */
	cs = htons(rf_net_ip_csum(f + 14, 20));
	memcpy(f + 24, &cs, 2);
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_DROP);
	cr_assert_eq(c.st.rx_bad_udp_len, 1);
}

Test(net, not_ours_is_ignored)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f);
	ctx_init(&c);
	c.port = htons(9001);
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_IGNORE); /* other port */
	c.port = 0;
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_UDP); /* port 0 accepts every port */
	c.ip = ip4("10.0.0.3");
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_IGNORE); /* other IP */
	f[12] = 0x86;
	f[13] = 0xdd;
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_IGNORE); /* IPv6 */
	cr_assert_eq(c.st.rx_ignored, 3);
}

Test(net, zero_udp_checksum_means_none)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f);
	ctx_init(&c);
	f[40] = f[41] = 0;
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_UDP);
}

Test(net, offload_partial_checksum_accepted_only_when_allowed)
{
	/* What a veth sender with TX offload leaves: fold(pseudo-header) = 0x1421 (Python). */
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64];
	size_t n = good_frame(f);
	ctx_init(&c);
	f[40] = 0x14;
	f[41] = 0x21;
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_UDP);
	cr_assert_eq(c.st.rx_csum_partial, 1);
	c.accept_partial_csum = false;
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_DROP);
	cr_assert_eq(c.st.rx_bad_udp_csum, 1);
}

static size_t arp_request(uint8_t *f, const char *target)
{
	static const uint8_t req[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,                /* request */
		0x02, 0, 0, 0, 0, 0x01, 10, 0, 0, 1,                      /* sender */
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0};                            /* target */
	uint32_t t = ip4(target);
	memcpy(f, req, sizeof(req));
	memcpy(f + 38, &t, 4);
	return sizeof(req);
}

Test(net, arp_request_for_us_becomes_reply_bytes)
{
	static const uint8_t reply[42] = {
		0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x02,                /* reply */
		0x02, 0, 0, 0, 0, 0x02, 10, 0, 0, 2,                      /* us */
		0x02, 0, 0, 0, 0, 0x01, 10, 0, 0, 1};                     /* the asker */
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64], mac[6];
	size_t n = arp_request(f, OUR_IP);
	ctx_init(&c);
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_ARP_REPLY);
	cr_assert_eq(memcmp(f, reply, sizeof(reply)), 0);
	cr_assert_eq(c.st.arp_replied, 1);
	cr_assert(rf_net_neigh_lookup(&c, ip4(PEER_IP), mac));
	cr_assert_eq(memcmp(mac, peer_mac, 6), 0);
}

Test(net, arp_for_others_and_bad_arp)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t f[64], mac[6];
	size_t n = arp_request(f, "10.0.0.9");
	ctx_init(&c);
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_IGNORE);
	cr_assert_not(rf_net_neigh_lookup(&c, ip4(PEER_IP), mac));
	n = arp_request(f, OUR_IP);
	f[19] = 16; /* plen 16: not IPv4 */
	cr_assert_eq(rf_net_rx(&c, f, n, &in), RF_NET_DROP);
	cr_assert_eq(c.st.rx_bad_arp, 1);
	cr_assert_eq(rf_net_rx(&c, f, 41, &in), RF_NET_DROP);
	cr_assert_eq(c.st.rx_short, 1);
}

Test(net, reply_headers_round_trip_through_parser)
{
	struct rf_net_ctx srv, cli;
	struct rf_net_rx_info in;
	uint8_t f[64], buf[128];
	size_t n = good_frame(f);
	int len;
	ctx_init(&srv);
	cr_assert_eq(rf_net_rx(&srv, f, n, &in), RF_NET_UDP); /* learns the peer MAC */
	memcpy(buf + 64, "hello", 5);
	len = rf_net_tx_udp(&srv, buf + 64, 5, in.src_ip, in.src_port);
	cr_assert_eq(len, 47);
	cr_assert_eq(memcmp(buf + 64 - 42, peer_mac, 6), 0);
	cr_assert_eq(memcmp(buf + 64 - 36, our_mac, 6), 0);
	/* The peer parses our reply as good UDP with full checksums. */
	rf_net_init(&cli, peer_mac, ip4(PEER_IP), htons(1234));
	cli.accept_partial_csum = false;
	cr_assert_eq(rf_net_rx(&cli, buf + 64 - 42, (size_t)len, &in), RF_NET_UDP);
	cr_assert_eq(ntohs(in.src_port), 9000);
	cr_assert_eq(in.payload_len, 5);
	cr_assert_eq(memcmp(buf + 64 - 42 + in.payload_off, "hello", 5), 0);
	cr_assert_eq(srv.st.tx_udp, 1);
}

Test(net, unknown_neighbour_turns_into_arp_request)
{
	struct rf_net_ctx c;
	struct rf_net_rx_info in;
	uint8_t buf[128];
	int len;
	ctx_init(&c);
	len = rf_net_tx_udp(&c, buf + 64, 5, ip4(PEER_IP), htons(1234));
	cr_assert_eq(len, -RF_NET_ARP_FRAME_LEN);
	cr_assert_eq(c.st.tx_no_neigh, 1);
	/* The peer sees a request for its address and answers it. */
	struct rf_net_ctx peer;
	rf_net_init(&peer, peer_mac, ip4(PEER_IP), 0);
	cr_assert_eq(rf_net_rx(&peer, buf + 64 - 42, 42, &in), RF_NET_ARP_REPLY);
	cr_assert_eq(rf_net_rx(&c, buf + 64 - 42, 42, &in), RF_NET_IGNORE); /* reply: learnt */
	len = rf_net_tx_udp(&c, buf + 64, 5, ip4(PEER_IP), htons(1234));
	cr_assert_eq(len, 47);
	cr_assert_eq(rf_net_tx_udp(&c, buf + 64, 70000, ip4(PEER_IP), 0), -EMSGSIZE);
}

Test(net, neighbour_table_replaces_and_survives_collisions)
{
	struct rf_net_ctx c;
	uint8_t mac[6] = {0}, got[6];
	uint32_t i;
	ctx_init(&c);
	for (i = 1; i <= 200; i++) { /* more than the slots: older entries get evicted */
		mac[5] = (uint8_t)i;
		rf_net_neigh_learn(&c, htonl(0x0a000000u + i), mac);
	}
	cr_assert(rf_net_neigh_lookup(&c, htonl(0x0a000000u + 200), got));
	cr_assert_eq(got[5], 200);
	mac[5] = 7;
	rf_net_neigh_learn(&c, htonl(0x0a000000u + 200), mac);
	cr_assert(rf_net_neigh_lookup(&c, htonl(0x0a000000u + 200), got));
	cr_assert_eq(got[5], 7);
	cr_assert_not(rf_net_neigh_lookup(&c, 0, got));
}
