/*
 * bench/tools/stolen.c: ringflow-stolen, how much CPU the kernel's network processing takes
 * from a process that has nothing to do with the network (seed 000, after `openssl speed`).
 *
 * It runs a fixed compute job (workload.h) pinned to one CPU twice: once on a quiet CPU,
 * once while a load it starts itself makes the kernel receive packets on that same CPU.
 * The job does the same work both times (same checksum), so any extra wall time, any system
 * time charged to it and any softirq share of that CPU in /proc/stat is the kernel's.
 *
 * The default load is a UDP flood over a veth pair between two namespaces it creates; the
 * sender is pinned to the other CPU and RPS on the receiving veth steers the receive softirq
 * to the measured CPU. Without root (no namespaces) it floods over loopback instead, where
 * the receive softirq runs on the sender's CPU: the figure then shows how little reaches the
 * measured CPU, which is the other half of the lesson. --load-cmd runs any command instead.
 * --fifo makes the compute SCHED_FIFO while it is measured, so that on a shared machine other
 * tasks cannot fill its wall time (interrupts and softirqs still can: that is the point).
 * The load lives in stolen_load.c, the output in stolen_report.c.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "procnet.h"
#include "stolen.h"
#include "workload.h"

/* Everything read at the start and end of one compute run. */
struct snap {
	double wall, user, sys;     /* s; user/sys of this thread (RUSAGE_THREAD) */
	uint64_t ksoftirqd_ticks;   /* utime+stime of ksoftirqd/<cpu> */
	struct rf_procstat stat;
	struct rf_softirqs sirq;
	struct rf_softnet softnet;
};

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static pid_t ksoftirqd_pid(unsigned cpu)
{
	char want[32];
	snprintf(want, sizeof(want), "ksoftirqd/%u\n", cpu);
	DIR *d = opendir("/proc");
	pid_t found = -1;
	struct dirent *e;
	while (d && found < 0 && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, want))
			found = atoi(e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* utime + stime (fields 14 and 15 of /proc/PID/stat), in clock ticks. */
static uint64_t task_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* comm may contain spaces; fields restart after ')' */
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return ut + st;
}

static int take_snap(struct snap *s, pid_t ksoftirqd)
{
	int rc = rf_procstat_read(&s->stat);
	if (rc == 0)
		rc = rf_softirqs_read(&s->sirq);
	if (rc == 0)
		rc = rf_softnet_read(&s->softnet);
	s->ksoftirqd_ticks = task_ticks(ksoftirqd);
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	s->user = tv_s(ru.ru_utime);
	s->sys = tv_s(ru.ru_stime);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->wall = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	return rc;
}

static void diff_snap(const struct snap *a, const struct snap *b, const struct opts *o,
		      struct phase *p)
{
	double hz = (double)sysconf(_SC_CLK_TCK);
	p->wall = b->wall - a->wall;
	p->user = b->user - a->user;
	p->sys = b->sys - a->sys;
	p->ksoftirqd_s = (double)(b->ksoftirqd_ticks - a->ksoftirqd_ticks) / hz;

	const struct rf_cpu_ticks *ta = rf_procstat_find(&a->stat, o->cpu);
	const struct rf_cpu_ticks *tb = rf_procstat_find(&b->stat, o->cpu);
	if (ta && tb) {
		double total = (double)(rf_cpu_ticks_total(tb) - rf_cpu_ticks_total(ta));
		if (total > 0) {
			p->softirq_pct = 100.0 * (double)(tb->softirq - ta->softirq) / total;
			p->irq_pct = 100.0 * (double)(tb->irq - ta->irq) / total;
			p->steal_pct = 100.0 * (double)(tb->steal - ta->steal) / total;
			p->idle_pct = 100.0 * (double)(tb->idle - ta->idle) / total;
		}
	}
	/* What is left of the wall time after idle, steal, all irq/softirq time (whoever it was
	 * charged to) and this thread's user time: the own work of other tasks that shared the
	 * CPU, on a shared machine the main noise in the wall time. (This thread makes no
	 * system calls, so its sys time is irq/softirq time and already taken out.) */
	p->others_s = p->wall * (1 - (p->idle_pct + p->steal_pct + p->softirq_pct + p->irq_pct) /
				 100) - p->user;
	if (p->others_s < 0)
		p->others_s = 0;
	int c = rf_softirqs_col(&a->sirq, o->cpu), l = rf_softirqs_col(&a->sirq, o->load_cpu);
	if (c >= 0) {
		p->net_rx = b->sirq.net_rx[c] - a->sirq.net_rx[c];
		p->net_tx = b->sirq.net_tx[c] - a->sirq.net_tx[c];
	}
	if (l >= 0)
		p->net_rx_load_cpu = b->sirq.net_rx[l] - a->sirq.net_rx[l];
	const struct rf_softnet_cpu *na = rf_softnet_find(&a->softnet, o->cpu);
	const struct rf_softnet_cpu *nb = rf_softnet_find(&b->softnet, o->cpu);
	if (na && nb) { /* the kernel keeps these as 32-bit counters */
		p->processed = rf_counter_delta(na->processed, nb->processed, 32);
		p->dropped = rf_counter_delta(na->dropped, nb->dropped, 32);
		p->squeezed = rf_counter_delta(na->time_squeeze, nb->time_squeeze, 32);
		p->received_rps = rf_counter_delta(na->received_rps, nb->received_rps, 32);
	}
}

/* SCHED_FIFO for the compute run only (--fifo): no other task, ksoftirqd included, takes the
 * CPU from it, but interrupts and the softirqs run on their exit still do. The flood thread
 * is created while we are SCHED_OTHER, so it never inherits the policy. */
static bool fifo_refused;

static void set_fifo(bool on)
{
	static bool warned;
	struct sched_param sp = {.sched_priority = on ? 1 : 0};
	if (sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp) && on && !warned) {
		fprintf(stderr, "ringflow-stolen: note: SCHED_FIFO refused (%s: needs root or "
				"CAP_SYS_NICE); measuring without it\n", strerror(errno));
		warned = true;
		fifo_refused = true;
	}
}

static int measure(const struct opts *o, const uint8_t *buf, pid_t ksoftirqd, struct phase *p)
{
	struct snap a, b;
	if (o->fifo)
		set_fifo(true);
	int rc = take_snap(&a, ksoftirqd);
	p->checksum = rf_workload_run(buf, o->passes);
	if (rc == 0)
		rc = take_snap(&b, ksoftirqd);
	if (o->fifo)
		set_fifo(false);
	if (rc == 0)
		diff_snap(&a, &b, o, p);
	return rc;
}

/* ---- main ---- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-stolen [--cpu N] [--load-cpu N] [--passes P] [--load veth|loopback]\n"
		"                       [--load-cmd CMD] [--packets N] [--load-seconds S] [--fifo]\n"
		"                       [--json]\n"
		"Runs a fixed compute job (FNV-1a over %d bytes, P passes) pinned to CPU N, idle\n"
		"and then under a network load, and shows how much of that CPU the kernel took.\n"
		"  --cpu N           measured CPU (default: the last one)\n"
		"  --load-cpu N      CPU of the flood sender (default: another CPU)\n"
		"  --passes P        compute size (default 40000, about 0.7 s here)\n"
		"  --load veth       UDP flood over a veth pair in two namespaces it creates, RPS\n"
		"                    steering the receive softirq to CPU N (default; needs root)\n"
		"  --load loopback   UDP flood over lo (the default without root)\n"
		"  --load-cmd CMD    run `sh -c CMD` as the load instead (stopped after the run)\n"
		"  --packets N       flood bound in packets (default 50000000)\n"
		"  --load-seconds S  flood bound in seconds (default 10)\n"
		"  --fifo            run the compute as SCHED_FIFO (root): other tasks and ksoftirqd\n"
		"                    cannot take its CPU, interrupts and softirqs still do; use on a\n"
		"                    shared machine, where other tasks otherwise fill the wall time\n"
		"  --json            JSON lines on stdout (bench/impl/case/value/unit), table on stderr\n",
		RF_WORKLOAD_BUF);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	*o = (struct opts){.cpu = (unsigned)(ncpu > 0 ? ncpu - 1 : 0), .passes = 40000,
			   .packets = 50000000, .load_seconds = 10, .load = LOAD_VETH};
	bool load_cpu_set = false;
	static const struct option lo[] = {
		{"cpu", required_argument, 0, 'c'},      {"load-cpu", required_argument, 0, 'L'},
		{"passes", required_argument, 0, 'p'},   {"load", required_argument, 0, 'l'},
		{"load-cmd", required_argument, 0, 'C'}, {"packets", required_argument, 0, 'n'},
		{"load-seconds", required_argument, 0, 's'},
		{"json", no_argument, 0, 'j'},           {"help", no_argument, 0, 'h'},
		{"fifo", no_argument, 0, 'F'},
		{0, 0, 0, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'c': o->cpu = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'L': o->load_cpu = (unsigned)strtoul(optarg, NULL, 10); load_cpu_set = true; break;
		case 'p': o->passes = strtoull(optarg, NULL, 10); break;
		case 'n': o->packets = strtoull(optarg, NULL, 10); break;
		case 's': o->load_seconds = atof(optarg); break;
		case 'C': o->load_cmd = optarg; o->load = LOAD_CMD; break;
		case 'j': o->json = true; break;
		case 'F': o->fifo = true; break;
		case 'l':
			o->load_forced = true;
			if (!strcmp(optarg, "veth"))
				o->load = LOAD_VETH;
			else if (!strcmp(optarg, "loopback"))
				o->load = LOAD_LOOPBACK;
			else {
				fprintf(stderr, "ringflow-stolen: unknown --load '%s' (veth or "
						"loopback)\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (!load_cpu_set)
		o->load_cpu = o->cpu == 0 ? 1 : 0;
	if (o->passes == 0 || o->load_seconds <= 0 || o->packets == 0) {
		fprintf(stderr, "ringflow-stolen: --passes, --packets and --load-seconds must be > 0\n");
		return 2;
	}
	if ((long)o->cpu >= ncpu || (long)o->load_cpu >= ncpu) {
		fprintf(stderr, "ringflow-stolen: CPU %u or %u is not online (this machine has %ld); "
				"pick others with --cpu/--load-cpu\n", o->cpu, o->load_cpu, ncpu);
		return 2;
	}
	if (o->cpu == o->load_cpu && o->load != LOAD_CMD)
		fprintf(stderr, "ringflow-stolen: note: sender and compute share CPU %u, so the "
				"scheduler, not softirq, splits it\n", o->cpu);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(o.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "ringflow-stolen: cannot pin to CPU %u: %s (is it in this cpuset?)\n",
			o.cpu, strerror(errno));
		return 1;
	}
	FILE *out = o.json ? stderr : stdout;

	static uint8_t buf[RF_WORKLOAD_BUF];
	rf_workload_fill(buf);
	(void)rf_workload_run(buf, o.passes / 10 + 1); /* warm-up: caches, frequency */
	pid_t ksd = ksoftirqd_pid(o.cpu);

	struct phase idle, ld;
	memset(&idle, 0, sizeof(idle));
	memset(&ld, 0, sizeof(ld));
	rc = measure(&o, buf, ksd, &idle);
	if (rc) {
		fprintf(stderr, "ringflow-stolen: cannot read /proc counters: %s (is /proc mounted?)\n",
			strerror(-rc));
		return 1;
	}

	struct load l;
	if (load_open(&l, &o))
		return 1;
	rc = load_start(&l, &o);
	if (rc) {
		fprintf(stderr, "ringflow-stolen: cannot start the load: %s\n", strerror(-rc));
		load_close(&l);
		return 1;
	}
	usleep(100000); /* let the load reach its rate (and fill the receive buffer) */
	rc = measure(&o, buf, ksd, &ld);
	bool ended_early = l.kind != LOAD_CMD && rf_flood_done(&l.flood);
	uint64_t sent = load_stop(&l);
	load_close(&l);
	if (rc) {
		fprintf(stderr, "ringflow-stolen: cannot read /proc counters: %s\n", strerror(-rc));
		return 1;
	}

	const char *impl = load_name(l.kind);
	if (o.json) {
		print_json(&o, impl, &idle, "idle", 0);
		print_json(&o, impl, &ld, "load", sent);
		print_json_line(&o, impl, "slowdown", ld.wall / idle.wall, "x");
	}
	fprintf(out, "ringflow-stolen: FNV-1a over %d B x %llu passes on CPU %u%s; load: ",
		RF_WORKLOAD_BUF, (unsigned long long)o.passes, o.cpu, o.fifo && !fifo_refused ? " (SCHED_FIFO)" : "");
	if (l.kind == LOAD_VETH)
		fprintf(out, "UDP flood over veth %s -> %s (two namespaces), sender on CPU %u, RPS "
			     "steers the receive softirq to CPU %u\n",
			l.bed.dev[0], l.bed.dev[1], o.load_cpu, o.cpu);
	else if (l.kind == LOAD_LOOPBACK)
		fprintf(out, "UDP flood over loopback, sender on CPU %u (%s; the receive softirq "
			     "runs on the sender's CPU)\n",
			o.load_cpu, l.why[0] ? l.why : "asked for");
	else
		fprintf(out, "`%s`\n", o.load_cmd);
	fprintf(out, "compute took %.3f s idle and %.3f s under load; %.1f %% of the CPU went to "
		     "softirq\n",
		idle.wall, ld.wall, ld.softirq_pct);
	print_table(&o, &idle, &ld, sent, out);
	if (idle.checksum != ld.checksum)
		fprintf(out, "warning: the checksums differ: the workload is not deterministic\n");
	if (ended_early)
		fprintf(out, "warning: the load stopped (bound reached) before the compute did: "
			     "raise --packets/--load-seconds\n");
	if (idle.others_s > 0.1 * idle.wall || ld.others_s > 0.1 * ld.wall)
		fprintf(out, "note: other tasks shared CPU %u (%.2f s idle, %.2f s under load), so the "
			     "wall times include them; the thread's user+sys and the softirq share do "
			     "not\n",
			o.cpu, idle.others_s, ld.others_s);
	if (ld.steal_pct > 5)
		fprintf(out, "note: %.1f %% of CPU %u was stolen by the hypervisor during the load run "
			     "(other guests or helpers on the host)\n",
			ld.steal_pct, o.cpu);
	return 0;
}
