/*
 * tests/ofswitch/sw_frames.h: test frames and checksums computed from scratch (RFC 1071 over
 * the IPv4 header, over pseudo-header + segment), shared by the action tests. Header-only,
 * static functions.
 */
#ifndef RF_TESTS_SW_FRAMES_H
#define RF_TESTS_SW_FRAMES_H

#include <stdint.h>
#include <string.h>

static inline uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static inline uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Full checksums of the IPv4 frame at ip (header) and its L4 segment. */
static inline uint16_t ip_csum(const uint8_t *ip)
{
	uint8_t h[60];
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	memcpy(h, ip, ihl);
	h[10] = h[11] = 0;
	return fold(sum16(h, ihl, 0));
}

static inline uint16_t l4_csum(const uint8_t *ip, unsigned coff)
{
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4, tot = (size_t)ip[2] << 8 | ip[3], n = tot - ihl;
	uint8_t seg[128];
	memcpy(seg, ip + ihl, n);
	seg[coff] = seg[coff + 1] = 0;
	uint32_t s = sum16(ip + 12, 8, 0) + ip[9] + (uint32_t)n;
	uint16_t c = fold(sum16(seg, n, s));
	return c ? c : 0xffff;
}

static inline uint16_t at16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Sets the TCP or UDP checksum and the IPv4 header checksum of the frame f (Ethernet, IPv4
 * without options): after frame(), or after a test changed its fields. */
static inline void frame_csums(uint8_t *f)
{
	uint8_t *ip = f + 14, *l4 = ip + 20;
	unsigned c = ip[9] == 6 ? 16 : 6;
	uint16_t x = l4_csum(ip, c);
	l4[c] = (uint8_t)(x >> 8), l4[c + 1] = (uint8_t)x;
	x = ip_csum(ip);
	ip[10] = (uint8_t)(x >> 8), ip[11] = (uint8_t)x;
}

/* Ethernet + IPv4 (TTL 64) + TCP (20 bytes + 5 of data) or UDP (8 + 5), checksums set. */
static inline uint32_t frame(uint8_t *f, uint8_t proto)
{
	memset(f, 0, 128);
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x08\x00", 14);
	uint8_t *ip = f + 14, *l4 = ip + 20;
	unsigned l4len = (proto == 6 ? 20 : 8) + 5;
	ip[0] = 0x45;
	ip[2] = 0, ip[3] = (uint8_t)(20 + l4len);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, "\xc0\xa8\x01\x02\x0a\x00\xfe\x07", 8);
	l4[0] = 0x9c, l4[1] = 0x41, l4[2] = 0x00, l4[3] = 0x50; /* 40001 -> 80 */
	if (proto == 6) {
		l4[12] = 0x50, l4[13] = 0x18;
		memcpy(l4 + 20, "hello", 5);
	} else {
		l4[5] = (uint8_t)l4len;
		memcpy(l4 + 8, "hello", 5);
	}
	frame_csums(f);
	return 14 + 20 + l4len;
}

/* The L4 checksum of the IPv6 packet at ip6 whose upper-layer header (protocol proto) starts
 * at l4, computed from scratch (RFC 8200 8.1 pseudo-header: addresses, upper-layer length,
 * next header), with the checksum field at l4 + coff taken as 0. UDP's 0 is sent as 0xffff. */
static inline uint16_t l4_csum6(const uint8_t *ip6, const uint8_t *l4, uint8_t proto,
				unsigned coff)
{
	size_t n = (size_t)(ip6[4] << 8 | ip6[5]) - (size_t)(l4 - (ip6 + 40));
	uint8_t seg[256];
	memcpy(seg, l4, n);
	seg[coff] = seg[coff + 1] = 0;
	uint32_t s = sum16(ip6 + 8, 32, 0) + proto + (uint32_t)n;
	uint16_t c = fold(sum16(seg, n, s));
	return c || proto != 17 ? c : 0xffff;
}

/* Ethernet + IPv6 (hop limit 64; with hbh, an 8-byte hop-by-hop options header first) + TCP
 * (20 + 5 of data) or UDP (8 + 5), the L4 checksum set. Returns the frame length; *l4 gets
 * the offset of the L4 header. */
static inline uint32_t frame6(uint8_t *f, uint8_t proto, int hbh, uint32_t *l4off)
{
	memset(f, 0, 128);
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a\x86\xdd", 14);
	uint8_t *ip = f + 14, *l4 = ip + 40 + (hbh ? 8 : 0);
	unsigned l4len = (proto == 6 ? 20 : 8) + 5, plen = l4len + (hbh ? 8 : 0);
	ip[0] = 0x60, ip[1] = 0x0a, ip[2] = 0xbc, ip[3] = 0xde; /* flow label 0xabcde */
	ip[4] = (uint8_t)(plen >> 8), ip[5] = (uint8_t)plen;
	ip[6] = hbh ? 0 : proto;
	ip[7] = 64;
	memcpy(ip + 8, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 16);
	memcpy(ip + 24, "\x20\x01\x0d\xb8\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x80\x02", 16);
	if (hbh) /* next header, length 0 (8 bytes), PadN of 4 */
		memcpy(ip + 40, (uint8_t[]){proto, 0, 1, 4, 0, 0, 0, 0}, 8);
	l4[0] = 0x9c, l4[1] = 0x41, l4[2] = 0x00, l4[3] = 0x50; /* 40001 -> 80 */
	if (proto == 6) {
		l4[12] = 0x50, l4[13] = 0x18;
		memcpy(l4 + 20, "hello", 5);
	} else {
		l4[5] = (uint8_t)l4len;
		memcpy(l4 + 8, "hello", 5);
	}
	unsigned c = proto == 6 ? 16 : 6;
	uint16_t x = l4_csum6(ip, l4, proto, c);
	l4[c] = (uint8_t)(x >> 8), l4[c + 1] = (uint8_t)x;
	*l4off = (uint32_t)(l4 - f);
	return 14 + 40 + plen;
}

/* CRC32c bit by bit (reflected 0x82f63b78), the reference for SCTP's checksum. */
static inline uint32_t crc32c_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

/* SCTP's checksum of the packet at l4 (n bytes) as it goes on the wire (RFC 4960 B: least
 * significant byte first), the field taken as 0. */
static inline uint32_t sctp_csum_ref(const uint8_t *l4, size_t n)
{
	uint8_t seg[256];
	memcpy(seg, l4, n);
	memset(seg + 8, 0, 4);
	return crc32c_ref(seg, n);
}

static inline uint32_t at32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Turns frame()/frame6()'s UDP packet into SCTP: the 13-byte UDP segment becomes a 12-byte
 * common header (ports 40001 -> 80, verification tag 0x01020304) and one byte of chunk, its
 * CRC32c set. l4: offset of the L4 header; n: frame length. */
static inline void make_sctp(uint8_t *f, uint32_t l4, uint32_t n, int v6)
{
	uint8_t *h = f + l4;
	if (v6) {
		if (f[14 + 6] == 17)
			f[14 + 6] = 132;
		else
			f[14 + 40] = 132; /* behind the hop-by-hop header */
	} else {
		f[14 + 9] = 132;
		uint8_t *ip = f + 14;
		ip[10] = ip[11] = 0;
		uint16_t x = ip_csum(ip);
		ip[10] = (uint8_t)(x >> 8), ip[11] = (uint8_t)x;
	}
	memcpy(h + 4, "\x01\x02\x03\x04", 4);
	uint32_t c = sctp_csum_ref(h, n - l4);
	for (int i = 0; i < 4; i++)
		h[8 + i] = (uint8_t)(c >> (8 * i));
}

/* Ethernet + IPv6 + an ICMPv6 neighbour solicitation (type 135, with a source link-layer
 * address option) or advertisement (136, target link-layer address option), checksum set.
 * *l4: the ICMPv6 message's offset. */
static inline uint32_t frame_nd(uint8_t *f, uint8_t type, uint32_t *l4)
{
	uint32_t n = frame6(f, 17, 0, l4);
	uint8_t *ip = f + 14, *m = f + *l4;
	(void)n;
	ip[5] = 32; /* payload: the 32-byte message */
	ip[6] = 58;
	ip[7] = 255;
	memset(m, 0, 32);
	m[0] = type;
	if (type == 136)
		m[4] = 0x60; /* solicited, override */
	memcpy(m + 8, "\xfe\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xfe\x00\x00\x0b", 16);
	m[24] = type == 135 ? 1 : 2;
	m[25] = 1;
	memcpy(m + 26, "\x02\x00\x00\x00\x00\x0a", 6);
	uint16_t x = l4_csum6(ip, m, 58, 2);
	m[2] = (uint8_t)(x >> 8), m[3] = (uint8_t)x;
	return *l4 + 32;
}

#endif
