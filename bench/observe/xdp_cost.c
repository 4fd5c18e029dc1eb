/*
 * bench/observe/xdp_cost.c: `ringflow-xdp-cost`, what ringflow's XDP program costs per frame,
 * timed by the kernel.
 *
 * The forwarding benches time the program together with everything around it (the NAPI, the
 * redirect, the generator on the same CPU). This tool times the program alone: it opens two
 * xdp ports in frame mode on veths of a network namespace of its own (unshare: the namespace
 * and its interfaces go away with the process, however it ends), fills port A's offload table
 * for a case, and runs the attached program with BPF_PROG_RUN on prepared frames, `repeat`
 * times each: the kernel reports the mean time of one run. No frame is sent anywhere (a test
 * run executes the program and returns its verdict; a redirect is not carried out). Each case
 * also checks what ran: the entries' hit counts, the cache's answers and walks, the verdict;
 * a mismatch exits 1 (ctest xdp_cost_runs).
 *
 * Cases (the frames are IPv4/UDP, 64 B, one per microflow):
 *   empty     no entry: the table check, then the AF_XDP redirect
 *   portwide  one entry naming no field (a port pair): the port-wide path, no parse
 *   exact1k   1000 exact 5-tuple entries and 1000 microflows, as bench-switch's exact1k: the
 *             parse, the per-CPU microflow cache (a hit after each flow's first run), ofl_run
 *   miss1k    the same 1000 entries, frames of 1000 other microflows: parse, cache probe,
 *             the mask walk finding nothing, the AF_XDP redirect
 *
 *   ringflow-xdp-cost [--repeat N] [--rounds N] [--json]     (root: CAP_NET_ADMIN, CAP_BPF;
 *   without, it says so and exits 77)
 */
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include <ringflow/io.h>
#include <ringflow/offload.h>
#include <ringflow/pktbuf.h>

#define NFLOWS 1000
#define FRAME_LEN 64

static char ifa0[IF_NAMESIZE], ifa1[IF_NAMESIZE], ifb0[IF_NAMESIZE], ifb1[IF_NAMESIZE];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* IPv4/UDP 10.0.0.1:sport -> 10.0.0.2:9000 in FRAME_LEN bytes, checksum right. */
static void make_frame(uint8_t *f, uint16_t sport)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x0b}, src[6] = {0x02, 0, 0, 0, 0, 0x0a};
	uint8_t *ip = f + 14;
	uint32_t sum = 0;
	memset(f, 0, FRAME_LEN);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	put16(f + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, FRAME_LEN - 14);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
	put16(ip + 20, sport);
	put16(ip + 22, 9000);
	put16(ip + 24, FRAME_LEN - 34);
}

/* The exact entry of the frame make_frame(sport) builds. */
static void exact_match(struct rf_offload_match *m, uint16_t sport)
{
	memset(m, 0, sizeof(*m));
	m->fields = RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_IP4_SRC | RF_OFFLOAD_F_IP4_DST |
		    RF_OFFLOAD_F_IP_PROTO | RF_OFFLOAD_F_L4_SRC | RF_OFFLOAD_F_L4_DST;
	m->eth_type = 0x0800;
	m->ip4_src[0] = 10, m->ip4_src[3] = 1;
	m->ip4_dst[0] = 10, m->ip4_dst[3] = 2;
	m->ip_proto = 17;
	m->l4_src = sport;
	m->l4_dst = 9000;
}

/* Mean ns of one program run over the frames of sports [base, base + n), each run `repeat`
 * times; -1 on error. *verdict gets the last run's return value. */
static double time_frames(int prog_fd, int ifindex, uint16_t base, unsigned n, unsigned repeat,
			  uint32_t *verdict)
{
	uint8_t f[FRAME_LEN], out[FRAME_LEN + 256];
	double total = 0;
	for (unsigned i = 0; i < n; i++) {
		struct xdp_md ctx = {.data_end = FRAME_LEN, .ingress_ifindex = (uint32_t)ifindex};
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = FRAME_LEN,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = (int)repeat);
		make_frame(f, (uint16_t)(base + i));
		if (bpf_prog_test_run_opts(prog_fd, &o) != 0) {
			fprintf(stderr, "ringflow-xdp-cost: BPF_PROG_RUN: %s\n", strerror(errno));
			return -1;
		}
		total += o.duration;
		*verdict = o.retval;
	}
	return total / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned repeat = 200, rounds = 5;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else {
			fprintf(stderr, "usage: ringflow-xdp-cost [--repeat N (200)] [--rounds N (5)] [--json]\n");
			return 2;
		}
	}
	if (repeat == 0 || rounds == 0 || rounds > 64) {
		fprintf(stderr, "ringflow-xdp-cost: --repeat >= 1, --rounds 1..64\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "ringflow-xdp-cost: a network namespace of its own needs root "
				"(unshare: %s)\n", strerror(errno));
		return 77; /* ctest: skipped, not failed */
	}
	int pid = (int)getpid();
	snprintf(ifa0, sizeof(ifa0), "xca0%d", pid % 100000);
	snprintf(ifa1, sizeof(ifa1), "xca1%d", pid % 100000);
	snprintf(ifb0, sizeof(ifb0), "xcb0%d", pid % 100000);
	snprintf(ifb1, sizeof(ifb1), "xcb1%d", pid % 100000);
	/* IPv6 off first: no router or neighbour solicitation may reach the program and be
	 * counted beside the test runs. */
	if (sh("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 && "
	       "ip link add %s type veth peer name %s && ip link add %s type veth peer name %s && "
	       "ip link set %s up && ip link set %s up && ip link set %s up && ip link set %s up",
	       ifa0, ifa1, ifb0, ifb1, ifa0, ifa1, ifb0, ifb1) != 0) {
		fprintf(stderr, "ringflow-xdp-cost: could not create the veth pairs (iproute2)\n");
		return 2;
	}
	char spec[128], err[512];
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("xdpcost", 4096, 2048, 0,
							      RF_MEMPOOL_QUIET);
	if (!pool) {
		fprintf(stderr, "ringflow-xdp-cost: no buffer pool\n");
		return 2;
	}
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=native,frames=1", ifa1);
	struct rf_io_dev *A = rf_io_open(spec, pool, err, sizeof(err));
	snprintf(spec, sizeof(spec), "xdp:dev=%s,mode=native,frames=1", ifb1);
	struct rf_io_dev *B = A ? rf_io_open(spec, pool, err, sizeof(err)) : NULL;
	if (!A || !B) {
		fprintf(stderr, "ringflow-xdp-cost: %s\n", err);
		return 2;
	}
	int ifindex = (int)if_nametoindex(ifa1);
	uint32_t id = 0;
	int prog_fd = -1;
	if (bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id) == 0 && id)
		prog_fd = bpf_prog_get_fd_by_id(id);
	if (prog_fd < 0) {
		fprintf(stderr, "ringflow-xdp-cost: ringflow's program on %s not found\n", ifa1);
		return 2;
	}

	static const char *cases[] = {"empty", "portwide", "exact1k", "miss1k"};
	double ns[4][64];
	uint32_t verdict[4] = {0};
	struct rf_offload_action out = {.type = RF_OFFLOAD_OUTPUT, .port = B};
	struct rf_offload_match m;
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned c = 0; c < 4; c++) {
			rf_offload_flush(A);
			if (c == 1) {
				memset(&m, 0, sizeof(m));
				if (rf_offload_add(A, &m, &out, 1) != 0)
					return fprintf(stderr, "ringflow-xdp-cost: add failed\n"), 1;
			} else if (c >= 2) {
				for (unsigned i = 0; i < NFLOWS; i++) {
					exact_match(&m, (uint16_t)(10000 + i));
					if (rf_offload_add(A, &m, &out, 1) != 0)
						return fprintf(stderr, "ringflow-xdp-cost: add failed\n"), 1;
				}
			}
			uint16_t base = c == 3 ? 30000 : 10000;
			unsigned nframes = c <= 1 ? 1 : NFLOWS;
			uint64_t h0 = 0, w0 = 0, h1 = 0, w1 = 0;
			rf_offload_cache_counts(A, &h0, &w0);
			ns[c][r] = time_frames(prog_fd, ifindex, base, nframes, repeat, &verdict[c]);
			if (ns[c][r] < 0)
				return 1;
			/* What ran is what was meant: entry hits, cache answers and walks counted. */
			struct rf_offload_totals t;
			rf_offload_cache_counts(A, &h1, &w1);
			uint64_t runs = (uint64_t)nframes * repeat, want_hits = c == 1 || c == 2 ? runs : 0;
			uint64_t want_looked = c >= 2 ? runs : 0;
			if (rf_offload_totals(A, &t) != 0 || t.hits != want_hits ||
			    (h1 - h0) + (w1 - w0) != want_looked || (c == 3 && h1 != h0) ||
			    verdict[c] != XDP_REDIRECT) {
				fprintf(stderr, "ringflow-xdp-cost: %s: entry hits %llu (want %llu), cache "
					"answers %llu + walks %llu (want %llu), verdict %u\n", cases[c],
					(unsigned long long)t.hits, (unsigned long long)want_hits,
					(unsigned long long)(h1 - h0), (unsigned long long)(w1 - w0),
					(unsigned long long)want_looked, verdict[c]);
				return 1;
			}
		}
	}
	rf_offload_flush(A);
	if (!json)
		printf("ringflow's XDP program alone (BPF_PROG_RUN, %u runs per frame, %u rounds): "
		       "ns per frame, median [min..max]\n", repeat, rounds);
	for (unsigned c = 0; c < 4; c++) {
		qsort(ns[c], rounds, sizeof(double), cmp_double);
		double med = ns[c][rounds / 2];
		if (json)
			printf("{\"bench\":\"xdp_cost\",\"case\":\"%s\",\"value\":%.2f,\"unit\":\"ns\","
			       "\"min\":%.2f,\"max\":%.2f,\"rounds\":%u,\"verdict\":%u}\n",
			       cases[c], med, ns[c][0], ns[c][rounds - 1], rounds, verdict[c]);
		else
			printf("  %-9s %7.2f [%.2f..%.2f]\n", cases[c], med, ns[c][0], ns[c][rounds - 1]);
	}
	rf_io_close(A);
	rf_io_close(B);
	rf_pktbuf_pool_free(pool);
	return 0;
}
