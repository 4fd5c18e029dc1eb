/*
 * bench/tools/pktgen_frame.h: the frame template ringflow-pktgen hands to BPF_PROG_RUN: one
 * Ethernet frame of the asked size, either UDP/IPv4 from 10.250.0.1 (flow 0; flow f has source
 * 10.250.0.1 + f and UDP source port 1024 + (f & 0x3fff)) to 10.251.0.1:9, or fwd_latency's
 * frame (ethertype 0x88b5, its magic; sequence and time are written per frame by the program).
 */
#ifndef RINGFLOW_BENCH_TOOLS_PKTGEN_FRAME_H
#define RINGFLOW_BENCH_TOOLS_PKTGEN_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PG_SRC_IP 0x0afa0001u /* 10.250.0.1, host order: flow 0's source */
#define PG_DST_IP 0x0afb0001u /* 10.251.0.1 */
#define PG_DST_PORT 9         /* discard */

/* Writes the template of `size` bytes (60..1514) into buf; returns size. */
size_t pg_frame_build(uint8_t *buf, size_t size, const uint8_t dst[6], const uint8_t src[6],
		      bool timestamps);

/* The IPv4 header checksum of the 20-byte header at ip (its checksum field skipped). */
uint16_t pg_ip_csum(const uint8_t *ip);

#endif /* RINGFLOW_BENCH_TOOLS_PKTGEN_FRAME_H */
