/*
 * bench/tools/pktgen_opts.h: ringflow-pktgen's command line (bench/tools/pktgen.c), parsed
 * and range-checked in one place. A bad argument gives one line naming the option, what it
 * wants and what it got; the tool then exits 2.
 */
#ifndef RINGFLOW_BENCH_TOOLS_PKTGEN_OPTS_H
#define RINGFLOW_BENCH_TOOLS_PKTGEN_OPTS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define PG_MIN_SIZE 60   /* without FCS: 64 on the wire */
#define PG_MAX_SIZE 1514 /* a 1500-byte MTU frame without FCS */
#define PG_MAX_THREADS 64
#define PG_MAX_DURATION 86400.0
#define PG_DEFAULT_DURATION 10.0

struct pg_opts {
	char dev[IFNAMSIZ];
	uint8_t dst_mac[6], src_mac[6];
	bool src_mac_set;  /* else the device's own */
	unsigned size;     /* frame length without FCS */
	uint32_t flows;    /* 1..PG_MAX_FLOWS */
	bool flows_random; /* --flows-mode random */
	double rate;       /* frames per second in all, 0 = as fast as it can */
	double duration;   /* seconds, > 0 */
	uint64_t count;    /* redirect attempts in all, 0 = until --duration */
	int cpu;           /* first CPU to pin to, -1 = not pinned */
	unsigned threads;
	bool json;
	bool timestamps; /* fwd_latency's payload (ethertype 0x88b5) instead of IPv4/UDP */
	bool probe;      /* --probe: only tell whether live frames run here */
};

/* Parses argv into o. Returns 0, 1 when --help was asked (usage printed to stdout), or -1
 * after one line on stderr saying what is wrong. */
int pg_opts_parse(struct pg_opts *o, int argc, char **argv);

/* The usage text, to `f`. */
void pg_opts_usage(void *f);

#endif /* RINGFLOW_BENCH_TOOLS_PKTGEN_OPTS_H */
