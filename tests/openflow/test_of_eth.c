/*
 * tests/openflow/test_of_eth.c: Ethernet header and LLDP frames: our LLDP round trip, a
 * hand-written LLDPDU byte by byte, frames of other controllers (-ENOENT) and every cut
 * or lying TLV length (-EBADMSG), parsed from exact-size heap copies.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of_eth.h"

static int lldp_exact(const uint8_t *f, size_t n, uint64_t *dpid, uint32_t *port)
{
	uint8_t *c = malloc(n ? n : 1);
	memcpy(c, f, n);
	int rc = of_lldp_parse(c, n, dpid, port);
	free(c);
	return rc;
}

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x11};

Test(of_eth, ethernet_header_with_and_without_vlan)
{
	uint8_t f[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x08, 0x00};
	struct of_eth e;
	cr_assert_eq(of_eth_parse(f, 64, &e), 0);
	cr_assert_eq(e.type, OF_ETH_TYPE_IPV4);
	cr_assert_eq(e.src, f + 6);
	cr_assert_eq(e.payload_len, 50);
	f[12] = 0x81;
	f[14] = 0x20; /* VLAN 0x005, PCP 1 */
	f[15] = 0x05;
	f[16] = 0x08;
	f[17] = 0x06;
	cr_assert_eq(of_eth_parse(f, 64, &e), 0);
	cr_assert_eq(e.vlan, 5);
	cr_assert_eq(e.type, OF_ETH_TYPE_ARP);
	cr_assert_eq(e.payload, f + 18);
	cr_assert_eq(of_eth_parse(f, 17, &e), -EBADMSG);
	cr_assert_eq(of_eth_parse(f, 13, &e), -EBADMSG);
}

Test(of_eth, lldp_round_trip_and_layout)
{
	uint8_t f[128];
	ssize_t n = of_lldp_build(f, sizeof(f), mac, 0x00000000deadbeefull, 7, 120);
	cr_assert_eq(n, 60);
	/* dst, src, 88cc, Chassis TLV (type 1, len 22, subtype 7, "dpid:00000000deadbeef") */
	static const uint8_t head[] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0, 0, 0, 0, 0x11,
				       0x88, 0xcc, 0x02, 0x16, 0x07, 'd', 'p', 'i', 'd', ':',
				       '0', '0', '0', '0', '0', '0', '0', '0',
				       'd', 'e', 'a', 'd', 'b', 'e', 'e', 'f',
				       0x04, 0x05, 0x02, 0, 0, 0, 7, /* Port: subtype 2, 7 */
				       0x06, 0x02, 0x00, 0x78,       /* TTL 120 */
				       0x00, 0x00};                  /* End */
	cr_assert_arr_eq(f, head, sizeof(head));
	uint64_t dpid = 0;
	uint32_t port = 0;
	cr_assert_eq(lldp_exact(f, (size_t)n, &dpid, &port), 0);
	cr_assert_eq(dpid, 0xdeadbeef);
	cr_assert_eq(port, 7);
	cr_assert_eq(lldp_exact(f, sizeof(head), &dpid, &port), 0); /* without the padding */
	cr_assert_eq(of_lldp_build(f, 59, mac, 1, 1, 1), -ENOBUFS);
}

Test(of_eth, lldp_of_another_controller_is_enoent)
{
	uint8_t f[128];
	ssize_t n = of_lldp_build(f, sizeof(f), mac, 1, 2, 120);
	uint64_t d;
	uint32_t p;
	f[16] = 4; /* chassis subtype MAC address */
	cr_assert_eq(lldp_exact(f, (size_t)n, &d, &p), -ENOENT);
	f[16] = 7;
	f[22] = 'x'; /* not a hex digit */
	cr_assert_eq(lldp_exact(f, (size_t)n, &d, &p), -ENOENT);
	f[22] = '0';
	f[40] = 5; /* port subtype interface name */
	cr_assert_eq(lldp_exact(f, (size_t)n, &d, &p), -ENOENT);
}

Test(of_eth, lldp_every_cut_and_lie_is_ebadmsg)
{
	uint8_t f[128];
	ssize_t n = of_lldp_build(f, sizeof(f), mac, 9, 3, 120);
	uint64_t d;
	uint32_t p;
	for (size_t k = 0; k < 51; k++) /* 51 bytes: the frame up to and with the End TLV */
		cr_assert_eq(lldp_exact(f, k, &d, &p), -EBADMSG, "cut at %zu", k);
	uint8_t g[128];
	memcpy(g, f, (size_t)n);
	g[15] = 0xff; /* chassis length 255 > frame */
	cr_assert_eq(lldp_exact(g, (size_t)n, &d, &p), -EBADMSG);
	memcpy(g, f, (size_t)n);
	g[14] = 0x04; /* Port TLV first: order violated */
	cr_assert_eq(lldp_exact(g, (size_t)n, &d, &p), -EBADMSG);
	memcpy(g, f, (size_t)n);
	g[46] = 0x03; /* TTL length 3 */
	cr_assert_eq(lldp_exact(g, (size_t)n, &d, &p), -EBADMSG);
	memcpy(g, f, (size_t)n);
	g[13] = 0xcd; /* not LLDP at all */
	cr_assert_eq(lldp_exact(g, (size_t)n, &d, &p), -EBADMSG);
}
