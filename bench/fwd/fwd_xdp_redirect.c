/*
 * bench/fwd/fwd_xdp_redirect.c: `fwd_xdp_redirect IN OUT` attaches xdp_redirect.bpf.c (embedded)
 * in native mode to IN, with OUT's ifindex in its map, and exits: every frame arriving on IN
 * leaves by OUT inside the kernel (run.sh's xdp-redirect row, the bed's ceiling). Attached the
 * old way (netlink, no BPF link), so it stays after this exits; `ip link set IN xdp off`
 * removes it (run.sh's fwd_stop does). Both devices are looked up in the caller's namespace.
 * Exit status 0, or 1 with one line saying what failed.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

extern const unsigned char fwd_redirect_obj[];
extern const size_t fwd_redirect_obj_len;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fwd_xdp_redirect IN_DEV OUT_DEV\n");
		return 1;
	}
	unsigned in = if_nametoindex(argv[1]), out = if_nametoindex(argv[2]);
	if (!in || !out) {
		fprintf(stderr, "fwd_xdp_redirect: no interface '%s' in this namespace\n", in ? argv[2] : argv[1]);
		return 1;
	}
	libbpf_set_print(quiet);
	struct bpf_object *obj = bpf_object__open_mem(fwd_redirect_obj, fwd_redirect_obj_len, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "fwd_xdp_redirect: loading the XDP program: %s\n", strerror(errno));
		return 1;
	}
	int rc = 1, map = bpf_object__find_map_fd_by_name(obj, "redir_out");
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "xdp_redirect_out");
	__u32 key = 0, val = out;
	if (map < 0 || !prog || bpf_map_update_elem(map, &key, &val, BPF_ANY))
		fprintf(stderr, "fwd_xdp_redirect: writing the out device: %s\n", strerror(errno));
	else if ((rc = bpf_xdp_attach((int)in, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL)) != 0)
		fprintf(stderr, "fwd_xdp_redirect: attaching to %s: %s\n", argv[1], strerror(-rc));
	bpf_object__close(obj); /* the attached program keeps itself and its map */
	return rc ? 1 : 0;
}
