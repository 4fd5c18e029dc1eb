/* bench/fwd/xdp_sink.bpf.c: the forwarding bed's sink (bench/fwd/run.sh). Attached in native
 * mode to SINK's veth (and, for the generator's ceiling, to FWD's first veth), it drops every
 * frame at the earliest point, so counting a frame (the veth's rx_packets, counted before XDP
 * runs) costs the receiving CPU as little as possible. Frames of the latency tool (ethertype
 * 0x88b5, IEEE local experimental) pass to the stack, where its reflector reads them. */
#include <linux/bpf.h>

#define FWD_LAT_ETHERTYPE_BE 0xb588 /* 0x88b5 as it sits in memory, read on a little-endian CPU */

__attribute__((section("xdp"), used)) int xdp_sink(struct xdp_md *ctx)
{
	const unsigned char *data = (const unsigned char *)(unsigned long)ctx->data;
	const unsigned char *end = (const unsigned char *)(unsigned long)ctx->data_end;
	if (data + 14 > end)
		return XDP_DROP;
	if (*(const unsigned short *)(data + 12) == FWD_LAT_ETHERTYPE_BE)
		return XDP_PASS;
	return XDP_DROP;
}

__attribute__((section("license"), used)) char _license[] = "GPL";
