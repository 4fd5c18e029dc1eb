/*
 * apps/openflow/of/of_eth.c: Ethernet header and LLDP (see of_eth.h).
 *
 * An LLDPDU is a list of TLVs, each with a 16-bit header: 7 bits of type, 9 bits of length.
 * The first three must be Chassis ID (1), Port ID (2), TTL (3), in that order; End (0, length
 * 0) closes the list. Every length is checked against what is left of the frame.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "of_eth.h"
#include "of_wire.h"

int of_eth_parse(const uint8_t *f, size_t len, struct of_eth *e)
{
	memset(e, 0, sizeof(*e));
	if (len < 14)
		return -EBADMSG;
	e->dst = f;
	e->src = f + 6;
	e->type = of_get16(f + 12);
	size_t off = 14;
	if (e->type == OF_ETH_TYPE_VLAN) {
		if (len < 18)
			return -EBADMSG;
		e->vlan = of_get16(f + 14) & 0x0fff;
		e->type = of_get16(f + 16);
		off = 18;
	}
	e->payload = f + off;
	e->payload_len = len - off;
	return 0;
}

#define LLDP_CHASSIS 1
#define LLDP_PORT 2
#define LLDP_TTL 3
#define CHASSIS_LOCAL 7
#define PORT_COMPONENT 2

static void tlv(struct of_wbuf *w, unsigned type, const uint8_t *v, unsigned len)
{
	of_put16(w, (uint16_t)(type << 9 | len));
	of_put_bytes(w, v, len);
}

ssize_t of_lldp_build(uint8_t *buf, size_t cap, const uint8_t src_mac[6], uint64_t dpid,
		      uint32_t port_no, uint16_t ttl_s)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	of_put_bytes(&w, OF_LLDP_DST, 6);
	of_put_bytes(&w, src_mac, 6);
	of_put16(&w, OF_ETH_TYPE_LLDP);
	uint8_t chassis[1 + 22]; /* subtype, "dpid:" + 16 hex digits, room for the NUL */
	chassis[0] = CHASSIS_LOCAL;
	snprintf((char *)chassis + 1, sizeof(chassis) - 1, "dpid:%016llx",
		 (unsigned long long)dpid);
	tlv(&w, LLDP_CHASSIS, chassis, 1 + 21);
	uint8_t port[5] = {PORT_COMPONENT};
	of_set32(port + 1, port_no);
	tlv(&w, LLDP_PORT, port, 5);
	uint8_t ttl[2];
	of_set16(ttl, ttl_s);
	tlv(&w, LLDP_TTL, ttl, 2);
	of_put16(&w, 0); /* End */
	if (w.len < 60)
		of_put_zeros(&w, 60 - w.len);
	return w.overflow ? -ENOBUFS : (ssize_t)w.len;
}

/* "dpid:" + 16 hex digits -> dpid. Returns 0 or -ENOENT. */
static int parse_dpid(const uint8_t *v, size_t n, uint64_t *dpid)
{
	if (n != 21 || memcmp(v, "dpid:", 5) != 0)
		return -ENOENT;
	uint64_t x = 0;
	for (size_t i = 5; i < 21; i++) {
		uint8_t c = v[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
		if (d > 15)
			return -ENOENT;
		x = x << 4 | d;
	}
	*dpid = x;
	return 0;
}

int of_lldp_parse(const uint8_t *frame, size_t len, uint64_t *dpid, uint32_t *port_no)
{
	struct of_eth e;
	if (of_eth_parse(frame, len, &e) || e.type != OF_ETH_TYPE_LLDP)
		return -EBADMSG;
	const uint8_t *p = e.payload;
	size_t n = e.payload_len, off = 0;
	int rc = 0;
	bool have_dpid = false, have_port = false;
	for (unsigned i = 0;; i++) {
		if (n - off < 2)
			return -EBADMSG; /* no End TLV */
		unsigned h = of_get16(p + off), type = h >> 9, tl = h & 0x1ff;
		off += 2;
		if (tl > n - off)
			return -EBADMSG;
		const uint8_t *v = p + off;
		off += tl;
		if (type == 0)
			break;
		if (i < 3 && type != i + 1)
			return -EBADMSG; /* Chassis, Port, TTL must come first, in order */
		if (type == LLDP_CHASSIS) {
			if (tl < 2)
				return -EBADMSG;
			if (v[0] != CHASSIS_LOCAL || parse_dpid(v + 1, tl - 1, dpid))
				rc = -ENOENT;
			else
				have_dpid = true;
		} else if (type == LLDP_PORT) {
			if (tl < 2)
				return -EBADMSG;
			if (v[0] == PORT_COMPONENT && tl == 5) {
				*port_no = of_get32(v + 1);
				have_port = true;
			} else {
				rc = -ENOENT;
			}
		} else if (type == LLDP_TTL && tl != 2) {
			return -EBADMSG;
		}
	}
	if (rc)
		return rc;
	return have_dpid && have_port ? 0 : -EBADMSG;
}
