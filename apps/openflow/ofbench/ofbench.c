/*
 * apps/openflow/ofbench/ofbench.c: command line of ringflow-ofbench (options, pinning,
 * steal time, JSON lines and the table). The generator is ofb_gen.c, the trivial responder
 * ofb_responder.c; see ofb.h for what each mode measures.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "of.h"
#include "ofb.h"

static atomic_bool stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store_explicit(&stop_flag, true, memory_order_relaxed);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ringflow-ofbench --controller HOST:PORT [options]   (load generator)\n"
		"       ringflow-ofbench --responder --listen HOST:PORT [-t S: stop after S s] [--busy] [--cpu N]\n"
		"  --mode throughput|latency|rate  (default throughput)\n"
		"  -s N        emulated switches (16)          -M N   source MACs per switch (1000)\n"
		"  -l N        measured rounds (5)             -w N   warm-up rounds (1)\n"
		"  -t S        seconds per round (1)           -O V   OpenFlow 1.3 (default) or 1.0\n"
		"  --window N  throughput: outstanding PACKET_INs per switch (1024: saturate, as cbench)\n"
		"  --rate R    rate mode: PACKET_IN/s over all switches (100000)\n"
		"  --no-buffer n_buffers=0 and buffer_id NO_BUFFER, as OVS (responses carry data)\n"
		"  --cpu N     pin to CPU N     --name S  impl name in the output (\"controller\")\n"
		"  --json      JSON lines on stdout, the table on stderr\n"
		"responder mode answers every PACKET_IN with one PACKET_OUT: the generator's ceiling.\n");
}

static int split_hostport(const char *s, char *host, size_t hl, uint16_t *port)
{
	const char *c = strrchr(s, ':');
	if (!c || (size_t)(c - s) >= hl || !c[1])
		return -1;
	memcpy(host, s, (size_t)(c - s));
	host[c - s] = '\0';
	char *end;
	long p = strtol(c + 1, &end, 10);
	if (*end || p < 0 || p > 65535)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

/* Steal and total jiffies over all CPUs (/proc/stat); 0/0 if unreadable. */
static void read_steal(unsigned long long *steal, unsigned long long *total)
{
	unsigned long long v[8] = {0};
	*steal = *total = 0;
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*steal = v[7];
	}
	fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const char *mode_name(enum ofb_mode m)
{
	return m == OFB_THROUGHPUT ? "throughput" : m == OFB_LATENCY ? "latency" : "rate";
}

static void report(const struct ofb_opts *o, const struct ofb_result *r, const char *impl,
		   bool json, double steal_pct)
{
	double v[OFB_MAX_ROUNDS];
	memcpy(v, r->per_s, r->rounds * sizeof(double));
	qsort(v, r->rounds, sizeof(double), cmp_double);
	double median = r->rounds ? v[r->rounds / 2] : 0, best = r->rounds ? v[r->rounds - 1] : 0;
	double worst = r->rounds ? v[0] : 0;
	double avg_us = r->rtt.count ? (double)r->rtt.sum_ns / (double)r->rtt.count / 1e3 : 0;
	double p50 = (double)ofb_hist_quantile(&r->rtt, 0.5) / 1e3;
	double p99 = (double)ofb_hist_quantile(&r->rtt, 0.99) / 1e3;
	double max = (double)r->rtt.max_ns / 1e3;
	const char *ver = r->version == OF_VERSION_1_0 ? "1.0" : "1.3";
	char cs[96];
	if (o->mode == OFB_RATE)
		snprintf(cs, sizeof(cs), "rate%.0f_s%u_m%u_v%s", o->rate, o->switches, o->macs, ver);
	else
		snprintf(cs, sizeof(cs), "%s_s%u_m%u_v%s", mode_name(o->mode), o->switches, o->macs,
			 ver);
	if (json)
		printf("{\"bench\":\"ofbench\",\"impl\":\"%s\",\"case\":\"%s\",\"mode\":\"%s\","
		       "\"value\":%.0f,\"unit\":\"responses/s\",\"best\":%.0f,\"worst\":%.0f,"
		       "\"rounds\":%u,\"switches\":%u,\"macs\":%u,\"version\":\"%s\","
		       "\"sent\":%llu,\"responses\":%llu,\"flow_mods\":%llu,\"packet_outs\":%llu,"
		       "\"lost\":%llu,\"behind\":%llu,\"errors\":%llu,\"rtt_avg_us\":%.1f,"
		       "\"rtt_p50_us\":%.1f,\"rtt_p99_us\":%.1f,\"rtt_max_us\":%.1f,"
		       "\"steal_pct\":%.1f,\"idle\":\"busy-poll\"}\n",
		       impl, cs, mode_name(o->mode), median, best, worst, r->rounds, o->switches,
		       o->macs, ver, (unsigned long long)r->sent, (unsigned long long)r->responses,
		       (unsigned long long)r->flow_mods, (unsigned long long)r->packet_outs,
		       (unsigned long long)r->lost, (unsigned long long)r->behind,
		       (unsigned long long)r->errors_received, avg_us, p50, p99, max, steal_pct);
	FILE *t = json ? stderr : stdout;
	fprintf(t, "%-12s %-28s %12s %12s %12s | rtt us: %8s %8s %8s %8s | %8s %6s\n", "impl",
		"case", "median/s", "best/s", "worst/s", "avg", "p50", "p99", "max", "lost",
		"steal");
	fprintf(t, "%-12s %-28s %12.0f %12.0f %12.0f |         %8.1f %8.1f %8.1f %8.1f | %8llu %5.1f%%\n",
		impl, cs, median, best, worst, avg_us, p50, p99, max, (unsigned long long)r->lost,
		steal_pct);
	fprintf(t, "  sent %llu, answered %llu (flow_mod %llu, packet_out %llu), controller "
		"errors %llu%s%s\n", (unsigned long long)r->sent, (unsigned long long)r->responses,
		(unsigned long long)r->flow_mods, (unsigned long long)r->packet_outs,
		(unsigned long long)r->errors_received,
		r->behind ? ", sends late by > 1 ms: " : "", r->behind ? "yes (generator backlog)" : "");
}

static int pin(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int main(int argc, char **argv)
{
	struct ofb_opts o = {.mode = OFB_THROUGHPUT, .switches = 16, .macs = 1000, .window = 1024,
			     .loops = 5, .warmup = 1, .round_s = 1.0, .rate = 100000,
			     .version = OF_VERSION_1_3};
	const char *controller = NULL, *listen_at = NULL, *impl = "controller";
	bool json = false, responder = false, busy = false, t_given = false;
	int cpu = -1;
	enum { O_CONTROLLER = 256, O_MODE, O_WINDOW, O_RATE, O_NOBUF, O_CPU, O_NAME, O_JSON,
	       O_RESPONDER, O_LISTEN, O_BUSY, O_HELP };
	static const struct option lo[] = {
		{"controller", required_argument, 0, O_CONTROLLER}, {"mode", required_argument, 0, O_MODE},
		{"window", required_argument, 0, O_WINDOW}, {"rate", required_argument, 0, O_RATE},
		{"no-buffer", no_argument, 0, O_NOBUF}, {"cpu", required_argument, 0, O_CPU},
		{"name", required_argument, 0, O_NAME}, {"json", no_argument, 0, O_JSON},
		{"responder", no_argument, 0, O_RESPONDER}, {"listen", required_argument, 0, O_LISTEN},
		{"busy", no_argument, 0, O_BUSY}, {"help", no_argument, 0, O_HELP}, {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "s:M:l:w:t:O:h", lo, NULL)) != -1) {
		switch (c) {
		case 's': o.switches = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'M': o.macs = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'l': o.loops = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'w': o.warmup = (unsigned)strtoul(optarg, NULL, 10); break;
		case 't': o.round_s = strtod(optarg, NULL); t_given = true; break;
		case 'O':
			if (!strcmp(optarg, "1.0") || !strcmp(optarg, "OpenFlow10"))
				o.version = OF_VERSION_1_0;
			else if (!strcmp(optarg, "1.3") || !strcmp(optarg, "OpenFlow13"))
				o.version = OF_VERSION_1_3;
			else {
				fprintf(stderr, "ringflow-ofbench: -O %s: unknown version; use -O 1.3 or -O 1.0\n", optarg);
				return 2;
			}
			break;
		case O_CONTROLLER: controller = optarg; break;
		case O_MODE:
			if (!strcmp(optarg, "throughput")) o.mode = OFB_THROUGHPUT;
			else if (!strcmp(optarg, "latency")) o.mode = OFB_LATENCY;
			else if (!strcmp(optarg, "rate")) o.mode = OFB_RATE;
			else {
				fprintf(stderr, "ringflow-ofbench: --mode %s: unknown; use throughput, latency or rate\n", optarg);
				return 2;
			}
			break;
		case O_WINDOW: o.window = (unsigned)strtoul(optarg, NULL, 10); break;
		case O_RATE: o.rate = strtod(optarg, NULL); break;
		case O_NOBUF: o.no_buffer = true; break;
		case O_CPU: cpu = atoi(optarg); break;
		case O_NAME: impl = optarg; break;
		case O_JSON: json = true; break;
		case O_RESPONDER: responder = true; break;
		case O_LISTEN: listen_at = optarg; break;
		case O_BUSY: busy = true; break;
		case O_HELP: case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (pin(cpu) < 0) {
		fprintf(stderr, "ringflow-ofbench: cannot pin to CPU %d: %s; pick one of 0..%ld\n",
			cpu, strerror(errno), sysconf(_SC_NPROCESSORS_ONLN) - 1);
		return 1;
	}
	char host[256];
	if (responder) {
		uint16_t port, bound;
		if (!listen_at || split_hostport(listen_at, host, sizeof(host), &port)) {
			fprintf(stderr, "ringflow-ofbench: --responder needs --listen IPV4:PORT (e.g. 127.0.0.1:6653)\n");
			return 2;
		}
		int fd = ofb_responder_listen(host, port, &bound);
		if (fd < 0) {
			fprintf(stderr, "ringflow-ofbench: cannot listen on %s: %s; pick a free port\n",
				listen_at, strerror(-fd));
			return 1;
		}
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		printf("listening %s:%u\n", host, bound);
		fflush(stdout);
		int rc = ofb_responder_run(fd, t_given ? o.round_s : 0, busy,
					   &stop_flag);
		return rc ? 1 : 0;
	}
	if (!controller || split_hostport(controller, host, sizeof(host), &o.port)) {
		fprintf(stderr, "ringflow-ofbench: --controller HOST:PORT is required (e.g. 127.0.0.1:6653); see --help\n");
		return 2;
	}
	o.host = host;
	if (o.mode == OFB_RATE && o.switches == 16)
		o.switches = 1; /* seed 003's test: one connection */
	unsigned long long s0, t0, s1, t1;
	read_steal(&s0, &t0);
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	int rc = r ? ofb_run(&o, r, err, sizeof(err)) : -ENOMEM;
	if (rc < 0) {
		fprintf(stderr, "ringflow-ofbench: %s\n", r ? err : "out of memory");
		free(r);
		return 1;
	}
	read_steal(&s1, &t1);
	double steal = t1 > t0 ? 100.0 * (double)(s1 - s0) / (double)(t1 - t0) : 0;
	report(&o, r, impl, json, steal);
	free(r);
	return 0;
}
