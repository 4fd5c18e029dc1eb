/*
 * tests/tools/pktgen_sink.h: the maps' layout of the test sink (pktgen_sink.bpf.c), shared
 * with test_pktgen.c. UAPI types only: it compiles for -target bpf and for the host.
 */
#ifndef RINGFLOW_TESTS_TOOLS_PKTGEN_SINK_H
#define RINGFLOW_TESTS_TOOLS_PKTGEN_SINK_H

#include <linux/types.h>

#define PGS_MAX_TUPLES 65536
#define PGS_LAT_ETHERTYPE 0x88b5
#define PGS_LAT_MAGIC 0x72666c74u
#define PGS_DST_IP 0x0afb0001u /* 10.251.0.1: bench/tools/pktgen_frame.h's destination */
#define PGS_DST_PORT 9

/* Per CPU: the generator's frames, their shortest and longest length, those in fwd_latency's
 * format, IPv4 headers whose checksum was wrong, 5-tuples the full map could not take, and
 * frames that were not the generator's. */
struct pgs_stats {
	__u64 frames, min_len, max_len, lat_frames, bad_csum, tuple_overflow, other;
};

struct pgs_tuple { /* network order, as on the wire */
	__u32 saddr, daddr;
	__u16 sport, dport;
	__u32 proto;
};

#endif /* RINGFLOW_TESTS_TOOLS_PKTGEN_SINK_H */
