/*
 * bench/tools/pktgen_frame.c: ringflow-pktgen's frame template (pktgen_frame.h). The UDP
 * checksum is 0 (none, allowed for IPv4), so the program need not redo it per flow; the
 * payload is a counting pattern, so a capture can tell a truncated frame.
 */
#include "pktgen_frame.h"

#include <arpa/inet.h>
#include <string.h>

#include "pktgen_bpf_shared.h"

uint16_t pg_ip_csum(const uint8_t *ip)
{
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		if (i != 10)
			sum += (uint32_t)(ip[i] | ip[i + 1] << 8); /* as the BPF program adds: memory order */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

size_t pg_frame_build(uint8_t *buf, size_t size, const uint8_t dst[6], const uint8_t src[6],
		      bool timestamps)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)i;
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	if (timestamps) {
		put16(buf + 12, PG_LAT_ETHERTYPE);
		struct pg_lat_payload pl = {.magic = PG_LAT_MAGIC};
		memcpy(buf + 14, &pl, sizeof(pl)); /* host order, as fwd_latency reads it */
		return size;
	}
	put16(buf + 12, 0x0800);
	uint8_t *ip = buf + 14, *udp = ip + 20;
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(size - 14));
	put16(ip + 4, 0);      /* id */
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = 17; /* UDP */
	put32(ip + 12, PG_SRC_IP);
	put32(ip + 16, PG_DST_IP);
	uint16_t c = pg_ip_csum(ip);
	memcpy(ip + 10, &c, 2); /* computed in memory order: stored as is */
	put16(udp, PG_SPORT_BASE);
	put16(udp + 2, PG_DST_PORT);
	put16(udp + 4, (uint16_t)(size - 34));
	put16(udp + 6, 0);
	return size;
}
