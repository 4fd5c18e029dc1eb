/*
 * bench/switch/perframe.c: what one frame costs ringflow-switch's poller before its actions,
 * key parse + table-0 lookup (sw_key_parse, sw_table_lookup_frame), counted in instructions
 * by callgrind: a count, not a time, so it is repeatable on a loaded machine (issue 25 used
 * it to check that the new match fields cost other frames nothing).
 *
 *   valgrind --tool=callgrind --toggle-collect=drive sw_perframe [ROUNDS] [4|6|n]
 *
 * Instructions per frame = callgrind's "Collected" / the frames printed. The table: 1000
 * flows over 10 masks (eth_type, ip_proto, udp dst port, 1-4 bytes of ipv4_dst); the frames:
 * 64 microflows of IPv4/UDP (4: 80 % hit a flow, the rest a cached "no flow"), IPv6/UDP (6:
 * no flow) or ICMPv6 neighbour solicitations (n: no flow, never through the EMC), each
 * looked up ROUNDS times (default 2000) after 200 rounds that warm the EMC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"

#define NF 64
static uint8_t frames[NF][96];
static uint32_t lens[NF];

/* The measured loop (callgrind collects this function and what it calls): extern, so
 * --toggle-collect finds it by name. */
unsigned long drive(struct sw_table *t, unsigned rounds);
__attribute__((noinline)) unsigned long drive(struct sw_table *t, unsigned rounds)
{
	unsigned long hits = 0;
	for (unsigned r = 0; r < rounds; r++)
		for (unsigned i = 0; i < NF; i++) {
			struct sw_key k;
			if (sw_key_parse(frames[i], lens[i], 1, &k) != 0)
				continue;
			hits += sw_table_lookup_frame(t, 0, frames[i], lens[i], &k) != NULL;
		}
	return hits;
}

static void make_frames(char kind)
{
	for (unsigned i = 0; i < NF; i++) {
		uint8_t *p = frames[i];
		memset(p, 0, sizeof(frames[i]));
		memcpy(p, "\x02\0\0\0\0\x0b\x02\0\0\0\0\x0a", 12);
		uint8_t *ip = p + 14;
		if (kind == '4') {
			p[12] = 0x08;
			ip[0] = 0x45, ip[3] = 28, ip[8] = 64, ip[9] = 17;
			ip[12] = 192, ip[13] = 168;
			ip[16] = (uint8_t)(10 + i % 10), ip[19] = (uint8_t)i;
			ip[20] = 0x9c;
			ip[22] = (uint8_t)((1000 + i) >> 8), ip[23] = (uint8_t)(1000 + i);
			ip[25] = 8;
			lens[i] = 14 + 28;
			continue;
		}
		p[12] = 0x86, p[13] = 0xdd;
		ip[0] = 0x60, ip[5] = 8, ip[6] = 17, ip[7] = 64;
		ip[8] = 0x20, ip[39] = (uint8_t)i;
		ip[42] = (uint8_t)((1000 + i) >> 8), ip[43] = (uint8_t)(1000 + i), ip[45] = 8;
		lens[i] = 14 + 48;
		if (kind == 'n') { /* NS: ICMPv6 135, a target, a source link-layer option */
			ip[5] = 32, ip[6] = 58, ip[7] = 255;
			memset(ip + 40, 0, 32);
			ip[40] = 135;
			ip[48] = 0xfe, ip[49] = 0x80, ip[63] = (uint8_t)i;
			ip[64] = 1, ip[65] = 1, ip[66] = 2, ip[71] = (uint8_t)i;
			lens[i] = 14 + 40 + 32;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	char kind = argc > 2 ? argv[2][0] : '4';
	if (rounds == 0 || (kind != '4' && kind != '6' && kind != 'n')) {
		fprintf(stderr, "usage: sw_perframe [ROUNDS > 0] [4|6|n]\n");
		return 2;
	}
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	if (!t)
		return 1;
	for (unsigned m = 0; m < 10; m++)
		for (unsigned j = 0; j < 100; j++) {
			struct sw_flow *f = sw_flow_alloc(1);
			if (!f)
				return 1;
			f->mask.eth_type = 0xffff;
			f->mask.ip_proto = 0xff;
			f->mask.tp_dst = 0xffff;
			memset(f->mask.nw_dst, 0xff, m % 4 + 1);
			f->match.eth_type = 0x0800;
			f->match.ip_proto = 17;
			f->match.tp_dst = (uint16_t)(1000 + j);
			f->match.nw_dst[0] = (uint8_t)(10 + m);
			f->priority = (uint16_t)(10 + m);
			f->fields = OF_MATCH_ETH_TYPE;
			if (sw_table_add(t, f) != 0)
				return 1;
		}
	make_frames(kind);
	drive(t, 200); /* warm the EMC */
	rf_qsbr_quiescent();
	unsigned long h = drive(t, rounds);
	printf("frames %u (in drive, warm-up included), hits %lu of the last %u\n",
	       (200 + rounds) * NF, h, rounds * NF);
	rf_qsbr_unregister();
	return 0; /* the table goes with the process */
}
