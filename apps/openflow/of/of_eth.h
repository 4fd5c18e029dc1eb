/*
 * apps/openflow/of/of_eth.h: the frames inside PACKET_IN and PACKET_OUT that the controller
 * apps read or write, part of `ringflow_of`: the Ethernet header (learning switch, host
 * tracking) and LLDP (topology discovery).
 *
 * Same rules as the rest of the module: explicit byte loads after a length check, nothing
 * read past `len`. LLDP (IEEE 802.1AB) frames we send carry the switch and port in the form
 * Ryu/os-ken and ONOS-style controllers use: Chassis ID subtype 7 (locally assigned)
 * "dpid:%016x", Port ID subtype 2 (port component) with the 32-bit port number, TTL, End.
 * Errors: negative errno (-EBADMSG malformed, -ENOENT valid but not ours, -ENOBUFS).
 */
#ifndef RINGFLOW_OF_ETH_H
#define RINGFLOW_OF_ETH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define OF_ETH_TYPE_IPV4 0x0800
#define OF_ETH_TYPE_ARP 0x0806
#define OF_ETH_TYPE_VLAN 0x8100
#define OF_ETH_TYPE_LLDP 0x88cc
#define OF_LLDP_DST "\x01\x80\xc2\x00\x00\x0e" /* nearest-bridge group address */

struct of_eth {
	const uint8_t *dst, *src; /* 6 bytes each, inside the frame */
	uint16_t type;            /* after one 802.1Q tag, if present */
	uint16_t vlan;            /* VLAN id, 0 if untagged */
	const uint8_t *payload;
	size_t payload_len;
};

/* Reads the Ethernet header of frame[0..len). Returns 0, or -EBADMSG (shorter than 14, or
 * a VLAN tag cut off). */
int of_eth_parse(const uint8_t *frame, size_t len, struct of_eth *e);

/* Builds an LLDP frame from src_mac announcing (dpid, port_no) with ttl_s. Returns its
 * length (padded to the 60-byte Ethernet minimum), or -ENOBUFS. */
ssize_t of_lldp_build(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint64_t dpid,
		      uint32_t port_no, uint16_t ttl_s);

/* Reads (dpid, port_no) back from an LLDP frame. Returns 0; -EBADMSG when a TLV length
 * runs past the frame or the mandatory Chassis/Port/TTL TLVs are missing or out of order;
 * -ENOENT when it is valid LLDP but not in our Chassis/Port form (another controller's). */
int of_lldp_parse(const uint8_t *frame, size_t len, uint64_t *dpid, uint32_t *port_no);

#endif /* RINGFLOW_OF_ETH_H */
