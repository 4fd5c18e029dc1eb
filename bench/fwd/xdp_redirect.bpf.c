/* bench/fwd/xdp_redirect.bpf.c: the forwarding bed's in-kernel ceiling (run.sh, row
 * xdp-redirect). Attached in native mode to FWD's first veth by fwd_xdp_redirect, it sends every
 * frame out of the second one (bpf_redirect to the ifindex in its one-entry map), so frames
 * cross FWD without leaving the kernel's XDP path: what the bed allows at all. Frames of the
 * latency tool (ethertype 0x88b5) are redirected too, so its round trip works both ways only
 * if the other direction is forwarded as well (it is not: the row has no latency). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} redir_out SEC(".maps");

SEC("xdp")
int xdp_redirect_out(struct xdp_md *ctx)
{
	(void)ctx;
	__u32 key = 0, *out = bpf_map_lookup_elem(&redir_out, &key);
	return out && *out ? bpf_redirect(*out, 0) : XDP_DROP;
}

char _license[] SEC("license") = "GPL";
