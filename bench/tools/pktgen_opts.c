/*
 * bench/tools/pktgen_opts.c: ringflow-pktgen's argument parser (pktgen_opts.h). Numbers are
 * read whole (strtod/strtoull with the end checked) and range-checked; nothing is clamped.
 */
#include "pktgen_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/runtime.h>

#include "pktgen_bpf_shared.h"

void pg_opts_usage(void *f)
{
	fprintf((FILE *)f,
		"usage: ringflow-pktgen --dev IFACE [--dst-mac MAC] [--src-mac MAC] [--size 60..1514]\n"
		"         [--flows N] [--flows-mode seq|random] [--rate PPS] [--duration S] [--count N]\n"
		"         [--cpu N] [--threads K] [--timestamps] [--json]\n"
		"       ringflow-pktgen --probe\n"
		"Sends UDP/IPv4 frames out of IFACE with BPF_PROG_RUN live frames (Linux >= 5.18).\n"
		"  --dst-mac     default ff:ff:ff:ff:ff:ff; --src-mac default IFACE's own\n"
		"  --size        frame length without FCS (default 60: 64 B on the wire)\n"
		"  --flows       source IP and UDP port vary over N flows per frame (default 1)\n"
		"  --rate        frames/s in all, paced by batch against the clock (0 = max, default)\n"
		"  --duration    stop after S seconds (default 10); --count: after N frames in all\n"
		"  --cpu         pin thread i to CPU N+i; --threads: K sending threads (default 1)\n"
		"  --timestamps  fwd_latency's frames (ethertype 0x88b5, sequence and send time)\n"
		"  --probe       only say whether this kernel runs live frames for this process (exit 0)\n"
		"                or not (one line, exit 2); no device is involved\n"
		"Reports the frames that left IFACE (what its driver took) and the Mpps offered.\n"
		"Exit status 2: bad arguments or an unusable device.\n");
}

static int bad(const char *opt, const char *want, const char *got)
{
	fprintf(stderr, "ringflow-pktgen: %s wants %s, got '%s'\n", opt, want, got);
	return -1;
}

/* A number in [lo, hi] (a whole one if `whole`), read entirely; -1 after one line otherwise. */
static int number(const char *opt, const char *v, double lo, double hi, bool whole, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo && x <= hi) || (whole && x != (double)(uint64_t)x)) {
		char want[96];
		snprintf(want, sizeof(want), "a %snumber in [%g, %g]", whole ? "whole " : "", lo, hi);
		return bad(opt, want, v);
	}
	*out = x;
	return 0;
}

static int num(const char *opt, const char *v, double lo, double hi, double *out)
{
	return number(opt, v, lo, hi, false, out);
}

/* A whole number: the library's shared option parser (decimal only, one line on error). */
static int whole(const char *opt, const char *v, double lo, double hi, double *out)
{
	char err[200];
	uint64_t x;
	if (rf_opt_u64(opt, v, (uint64_t)lo, (uint64_t)hi, &x, err, sizeof(err))) {
		fprintf(stderr, "ringflow-pktgen: %s\n", err);
		return -1;
	}
	*out = (double)x;
	return 0;
}

static int mac(const char *opt, const char *s, uint8_t m[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return bad(opt, "a MAC address like 02:00:00:00:00:01", s);
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
	return 0;
}

int pg_opts_parse(struct pg_opts *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{"dev", required_argument, 0, 'd'},      {"dst-mac", required_argument, 0, 'D'},
		{"src-mac", required_argument, 0, 'S'},  {"size", required_argument, 0, 's'},
		{"flows", required_argument, 0, 'f'},    {"flows-mode", required_argument, 0, 'm'},
		{"rate", required_argument, 0, 'r'},     {"duration", required_argument, 0, 't'},
		{"count", required_argument, 0, 'n'},    {"cpu", required_argument, 0, 'c'},
		{"threads", required_argument, 0, 'k'},  {"json", no_argument, 0, 'j'},
		{"timestamps", no_argument, 0, 'T'},     {"help", no_argument, 0, 'h'},
		{"probe", no_argument, 0, 'P'},          {0, 0, 0, 0}};
	memset(o, 0, sizeof(*o));
	memset(o->dst_mac, 0xff, sizeof(o->dst_mac));
	o->size = PG_MIN_SIZE;
	o->flows = 1;
	o->duration = PG_DEFAULT_DURATION;
	o->cpu = -1;
	o->threads = 1;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	double x;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		const char *name = optind > 1 ? argv[optind - 1] : "?";
		switch (c) {
		case 'd':
			if (!*optarg || strlen(optarg) >= IFNAMSIZ)
				return bad("--dev", "an interface name (1 to 15 characters)", optarg);
			strcpy(o->dev, optarg);
			break;
		case 'D':
			if (mac("--dst-mac", optarg, o->dst_mac))
				return -1;
			break;
		case 'S':
			if (mac("--src-mac", optarg, o->src_mac))
				return -1;
			o->src_mac_set = true;
			break;
		case 's':
			if (whole("--size", optarg, PG_MIN_SIZE, PG_MAX_SIZE, &x))
				return -1;
			o->size = (unsigned)x;
			break;
		case 'f':
			if (whole("--flows", optarg, 1, PG_MAX_FLOWS, &x))
				return -1;
			o->flows = (uint32_t)x;
			break;
		case 'm':
			if (strcmp(optarg, "seq") && strcmp(optarg, "random"))
				return bad("--flows-mode", "seq or random", optarg);
			o->flows_random = !strcmp(optarg, "random");
			break;
		case 'r':
			if (num("--rate", optarg, 0, 1e9, &o->rate))
				return -1;
			break;
		case 't':
			if (num("--duration", optarg, 0.001, PG_MAX_DURATION, &o->duration))
				return -1;
			break;
		case 'n':
			if (whole("--count", optarg, 0, 1e15, &x))
				return -1;
			o->count = (uint64_t)x;
			break;
		case 'c':
			if (whole("--cpu", optarg, 0, (double)(ncpu > 0 ? ncpu - 1 : 0), &x))
				return -1;
			o->cpu = (int)x;
			break;
		case 'k':
			if (whole("--threads", optarg, 1, PG_MAX_THREADS, &x))
				return -1;
			o->threads = (unsigned)x;
			break;
		case 'j':
			o->json = true;
			break;
		case 'T':
			o->timestamps = true;
			break;
		case 'P':
			o->probe = true;
			break;
		case 'h':
			pg_opts_usage(stdout);
			return 1;
		case ':':
			fprintf(stderr, "ringflow-pktgen: %s needs a value (see --help)\n", name);
			return -1;
		default:
			fprintf(stderr, "ringflow-pktgen: unknown option '%s' (see --help)\n", name);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringflow-pktgen: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	if (o->probe)
		return 0; /* nothing else is used */
	if (!o->dev[0]) {
		fprintf(stderr, "ringflow-pktgen: --dev IFACE is required (see --help)\n");
		return -1;
	}
	if (o->timestamps && o->flows > 1) {
		fprintf(stderr, "ringflow-pktgen: --timestamps frames carry no flow: drop --flows or --timestamps\n");
		return -1;
	}
	return 0;
}
