/*
 * bench/fwd/fwd_sinklat.c: one-way latency at the bed's sink (run.sh's latency points).
 *
 *   fwd_sinklat --dev DEV --duration S [--label L] [--ready FILE]
 *
 * DEV (in the caller's namespace) carries xdp_sink.bpf.c. This finds that program's two maps,
 * turns timing on (lat_ctl), creates FILE when it is on, waits S seconds, turns it off, and
 * prints one JSON line from the histogram's growth over the window (bench/fwd/lat_hist.h):
 * p50/p90/p99/max of the one-way delay GEN -> FWD -> SINK in us (each the middle of its
 * bucket: within 3.2 %), received (frames timed) and ahead (send time after the arrival:
 * none on one host's clock). ringflow-pktgen --timestamps is the sender; its count is "sent".
 * Exit status 0, 1 with one line when the device, its program or the maps are not there,
 * 2 on a bad argument.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lat_hist.h"

static int die(const char *what)
{
	fprintf(stderr, "fwd_sinklat: %s\n", what);
	return 1;
}

/* The fds of the maps named hist and ctl of the XDP program on ifindex (-1 when missing). */
static int find_maps(unsigned ifindex, int *hist, int *ctl)
{
	__u32 prog_id = 0, ids[8];
	*hist = *ctl = -1;
	if (bpf_xdp_query_id((int)ifindex, 0, &prog_id) || !prog_id)
		return -ENOENT;
	int pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -errno;
	struct bpf_prog_info pi = {.nr_map_ids = 8, .map_ids = (__u64)(uintptr_t)ids};
	__u32 len = sizeof(pi);
	int err = bpf_obj_get_info_by_fd(pfd, &pi, &len) ? -errno : 0;
	for (__u32 i = 0; !err && i < pi.nr_map_ids && i < 8; i++) {
		int mfd = bpf_map_get_fd_by_id(ids[i]);
		struct bpf_map_info mi = {0};
		__u32 ml = sizeof(mi);
		if (mfd < 0 || bpf_obj_get_info_by_fd(mfd, &mi, &ml)) {
			if (mfd >= 0)
				close(mfd);
			continue;
		}
		if (!strcmp(mi.name, "lat_hist") && *hist < 0)
			*hist = mfd;
		else if (!strcmp(mi.name, "lat_ctl") && *ctl < 0)
			*ctl = mfd;
		else
			close(mfd);
	}
	close(pfd);
	return err ? err : (*hist < 0 || *ctl < 0 ? -ENOENT : 0);
}

/* counts[i] = bucket i summed over the CPUs (i <= LAT_HIST_BUCKETS). */
static int read_hist(int fd, int ncpu, __u64 *counts, __u64 *percpu)
{
	for (__u32 i = 0; i <= LAT_HIST_BUCKETS; i++) {
		if (bpf_map_lookup_elem(fd, &i, percpu))
			return -errno;
		counts[i] = 0;
		for (int c = 0; c < ncpu; c++)
			counts[i] += percpu[c];
	}
	return 0;
}

static int set_on(int fd, __u32 on)
{
	__u32 key = 0;
	return bpf_map_update_elem(fd, &key, &on, BPF_ANY) ? -errno : 0;
}

/* The middle of the bucket holding the q-quantile of n timed frames, in us. */
static double quantile_us(const __u64 *d, __u64 n, double q)
{
	__u64 want = (__u64)(q * (double)n), seen = 0;
	if (want >= n)
		want = n - 1;
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++) {
		seen += d[i];
		if (seen > want) {
			double lo = (double)lat_hist_low(i);
			double hi = i + 1 < LAT_HIST_BUCKETS ? (double)lat_hist_low(i + 1) : lo;
			return (lo + hi) / 2 / 1000.0;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *label = "", *ready = NULL;
	double duration = -1;
	static const struct option opts[] = {{"dev", required_argument, 0, 'd'},
					     {"duration", required_argument, 0, 't'},
					     {"label", required_argument, 0, 'l'},
					     {"ready", required_argument, 0, 'r'},
					     {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *e = NULL;
		switch (c) {
		case 'd': dev = optarg; break;
		case 't':
			duration = strtod(optarg, &e);
			if (!e || *e || !(duration > 0 && duration <= 600))
				duration = -2;
			break;
		case 'l': label = optarg; break;
		case 'r': ready = optarg; break;
		default: duration = -2; break;
		}
	}
	if (!dev || duration < 0 || optind != argc) {
		fprintf(stderr, "usage: fwd_sinklat --dev DEV --duration S (0 < S <= 600) [--label L] [--ready FILE]\n");
		return 2;
	}
	for (const char *p = label; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
			fprintf(stderr, "fwd_sinklat: --label: no quotes, backslashes or control characters\n");
			return 2;
		}
	unsigned ifindex = if_nametoindex(dev);
	if (!ifindex)
		return die("no such device in this namespace");
	int hist, ctl, ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return die("cannot count the possible CPUs");
	if (find_maps(ifindex, &hist, &ctl))
		return die("the device has no XDP program with maps lat_hist and lat_ctl (bench/fwd/xdp_sink.bpf.o)");
	__u64 *before = calloc(LAT_HIST_BUCKETS + 1, sizeof(__u64));
	__u64 *after = calloc(LAT_HIST_BUCKETS + 1, sizeof(__u64));
	__u64 *percpu = calloc((size_t)ncpu, sizeof(__u64));
	if (!before || !after || !percpu)
		return die("out of memory");
	if (read_hist(hist, ncpu, before, percpu) || set_on(ctl, 1))
		return die("cannot read or set the sink's maps");
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (!f)
			return set_on(ctl, 0), die("cannot create the --ready file");
		fclose(f);
	}
	struct timespec ts = {.tv_sec = (time_t)duration,
			      .tv_nsec = (long)((duration - (double)(time_t)duration) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	int err = set_on(ctl, 0);
	struct timespec settle = {.tv_nsec = 50 * 1000 * 1000}; /* frames already inside the program */
	nanosleep(&settle, NULL);
	if (err || read_hist(hist, ncpu, after, percpu))
		return die("cannot read or clear the sink's maps");
	__u64 n = 0, maxi = 0;
	for (unsigned i = 0; i < LAT_HIST_BUCKETS; i++) {
		after[i] -= before[i];
		n += after[i];
		if (after[i])
			maxi = i;
	}
	__u64 ahead = after[LAT_HIST_BUCKETS] - before[LAT_HIST_BUCKETS];
	if (!n)
		return die("no timestamped frame arrived in the window");
	double p50 = quantile_us(after, n, 0.50);
	printf("{\"bench\":\"fwd\",\"impl\":\"%s\",\"case\":\"owd_64B\",\"value\":%.2f,\"unit\":\"us\","
	       "\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,\"max_us\":%.2f,\"received\":%llu,"
	       "\"ahead\":%llu,\"bucket_pct\":6.25}\n",
	       label, p50, p50, quantile_us(after, n, 0.90), quantile_us(after, n, 0.99),
	       (double)lat_hist_low((unsigned)maxi + (maxi + 1 < LAT_HIST_BUCKETS)) / 1000.0, (unsigned long long)n,
	       (unsigned long long)ahead);
	return 0;
}
