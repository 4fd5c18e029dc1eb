/*
 * bench/tools/pktgen.c: ringflow-pktgen, a frame generator on BPF_PROG_RUN live frames.
 *
 * Each sending thread calls BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES on one frame
 * template: the kernel runs pg_xdp (pktgen.bpf.c) `repeat` times, in batches, and sends every
 * frame it redirects out of --dev through the driver's ndo_xdp_xmit. No socket, no skb: tens
 * of Mpps from one CPU, so a forwarder behind it is measured, not the generator.
 *
 * The count reported is what left the device: the frames the driver's ndo_xdp_xmit took, added
 * up by pg_xmit on the xdp_devmap_xmit tracepoint. What the driver refused (a full peer ring)
 * and what never reached it are reported beside it, never hidden.
 *
 * Pacing (--rate) is per frame, inside the program: a BPF_PROG_RUN call costs about a
 * millisecond of fixed setup here (its page pool), far too much to pace by calls. So the
 * threads keep the kernel running pg_xdp, and a run sends only when the shared schedule says
 * the next frame is due (frame k at t0 + k / rate; pktgen_bpf_shared.h), dropping its frame
 * otherwise: the sending CPUs spin, as any busy-polling generator does. A frame a little late
 * goes as soon as it can; one later than PG_LAG_FRAMES intervals (the CPU was taken, or a
 * call's setup) goes at once and the schedule slips behind it, so what was due in the gap is
 * not sent as a burst the far side could not take (the offered rate is then a little under
 * --rate, and the report says what it was). The run's time
 * is from t0 to the end of the last frame's slot (its claim time + 1 / rate), from the
 * kernel's CLOCK_MONOTONIC: the offered rate is frames / that time.
 * Unpaced (--rate 0), each thread asks for runs in calls of about 50 ms; every run sends.
 *
 * Exit status: 0 done, 1 a failure of the machine (no permission, out of memory), 2 bad
 * arguments, an unusable device, or a kernel that runs no live frames for us (one line on
 * stderr saying which and how to fix it; `--probe` asks only the last).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "ethtool_stats.h"
#include "pktgen_bpf.h"
#include "pktgen_frame.h"
#include "pktgen_opts.h"

#define PG_BATCH 64               /* runs per kernel batch (and per ndo_xdp_xmit bulk): its default */
#define PG_FIRST_CHUNK 65536      /* unpaced: runs of the first call; then sized by PG_CALL_NS */
#define PG_MIN_CHUNK 4096
#define PG_MAX_CHUNK (1u << 24)
#define PG_CALL_NS 50e6           /* unpaced: each call about 50 ms */
#define PG_PACED_RUNS (1u << 18)  /* paced: runs of the first call (most drop: not due yet), ~10 ms */
#define PG_PACED_CALL_NS 250e6    /* paced: then each call about 250 ms, so the ~1-5 ms setup
				   * of a call (during which the schedule slips) costs <= 2 % */
#define PG_LAG_FRAMES 128         /* paced: a frame later than this many intervals (and
				   * PG_LAG_MIN_NS) slips the schedule instead of catching up in a
				   * burst; 128 + one batch of 64 stays inside a veth's 256-slot ring */
#define PG_LAG_MIN_NS 20000

static atomic_bool stop;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store_explicit(&stop, true, memory_order_relaxed); /* a flag only: no data rides on it */
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct dev_info {
	unsigned ifindex, mtu;
	uint8_t mac[6];
	char driver[32];
};

/* Looks the device up in this namespace; 0, or -1 after one line saying what is wrong. */
static int dev_probe(const char *dev, struct dev_info *d)
{
	memset(d, 0, sizeof(*d));
	d->ifindex = if_nametoindex(dev);
	if (!d->ifindex) {
		fprintf(stderr, "ringflow-pktgen: no interface '%s' in this network namespace\n", dev);
		return -1;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "ringflow-pktgen: socket for the device ioctls: %s\n", strerror(errno));
		return -1;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, dev);
	int rc = -1;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
		fprintf(stderr, "ringflow-pktgen: %s: reading its flags: %s\n", dev, strerror(errno));
		goto out;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		fprintf(stderr, "ringflow-pktgen: %s is down: bring it up (ip link set dev %s up)\n", dev, dev);
		goto out;
	}
	if (ioctl(fd, SIOCGIFMTU, &ifr) != 0) {
		fprintf(stderr, "ringflow-pktgen: %s: reading its MTU: %s\n", dev, strerror(errno));
		goto out;
	}
	d->mtu = (unsigned)ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(d->mac, ifr.ifr_hwaddr.sa_data, 6);
	struct ethtool_drvinfo di = {.cmd = ETHTOOL_GDRVINFO};
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		snprintf(d->driver, sizeof(d->driver), "%s", di.driver);
	rc = 0;
out:
	close(fd);
	return rc;
}

/* Why no frame left the device, in one line with the fix; always returns 2 (exit status).
 * A veth takes XDP frames only while its peer is in NAPI mode (the kernel clears the veth's
 * NDO_XMIT feature otherwise, or veth_xdp_xmit answers -ENXIO): then nothing reaches the
 * tracepoint, or it reports ENXIO. */
static int diagnose(const struct pg_opts *o, const struct dev_info *d, const struct pg_stats *s)
{
	if (!strcmp(d->driver, "veth") && (s->last_err == -ENXIO || (s->sent == 0 && s->drops == 0))) {
		long peer = -1;
		struct rf_ethtool_stats es;
		if (rf_ethtool_stats_read(o->dev, &es) == 0) {
			int i = rf_ethtool_stats_find(&es, "peer_ifindex");
			if (i >= 0)
				peer = (long)es.value[i];
			rf_ethtool_stats_free(&es);
		}
		fprintf(stderr,
			"ringflow-pktgen: %s: its veth peer (ifindex %ld, maybe in another namespace) is not "
			"in NAPI mode and refuses XDP frames: attach an XDP program to the peer, or enable "
			"GRO there (ethtool -K PEER gro on)\n",
			o->dev, peer);
	} else if (s->sent == 0 && s->drops == 0) {
		fprintf(stderr,
			"ringflow-pktgen: %s (driver %s) takes no XDP frames (no ndo_xdp_xmit, or XDP "
			"redirect is off there): use a device whose driver transmits XDP frames, e.g. veth\n",
			o->dev, d->driver[0] ? d->driver : "without ethtool info");
	} else {
		fprintf(stderr, "ringflow-pktgen: %s (driver %s) refused every frame: %s\n", o->dev,
			d->driver[0] ? d->driver : "without ethtool info",
			s->last_err ? strerror((int)-s->last_err) : "no error given (MTU?)");
	}
	return 2;
}

struct sender {
	pthread_t tid;
	unsigned idx;
	int cpu;        /* -1: not pinned */
	uint64_t quota; /* unpaced: frames to attempt, 0 = until the deadline */
	uint64_t done;  /* unpaced: frames attempted (pg_xdp runs asked for) */
	uint64_t t_end; /* when this thread's part of the run ended */
	int err;        /* a failed BPF_PROG_RUN, negative errno */
	bool pin_failed;
};

struct run {
	const struct pg_opts *o;
	struct pg_bpf bpf;
	uint8_t frame[PG_MAX_SIZE];
	size_t len;
	uint64_t t0, deadline;
};

static struct run R;

/* Whether this thread's part is done: the schedule's quota is reached (paced), or this
 * thread's own quota (unpaced). */
static bool part_done(const struct sender *s, bool paced)
{
	if (!paced)
		return s->quota && s->done >= s->quota;
	struct pg_pace p;
	return pg_bpf_pace_get(&R.bpf, &p) == 0 && p.quota && p.issued >= p.quota;
}

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	if (s->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (rc) {
			fprintf(stderr, "ringflow-pktgen: pinning thread %u to CPU %d: %s\n", s->idx, s->cpu,
				strerror(rc));
			s->pin_failed = true;
			atomic_store_explicit(&stop, true, memory_order_relaxed);
			return NULL;
		}
	}
	bool paced = R.o->rate > 0, decided = false;
	uint64_t chunk = paced ? PG_PACED_RUNS : PG_FIRST_CHUNK;
	s->t_end = R.t0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed) && !part_done(s, paced)) {
		uint64_t t = now_ns(), n = chunk;
		if (t >= R.deadline)
			break;
		if (!paced && s->quota && n > s->quota - s->done)
			n = s->quota - s->done;
		int rc = pg_bpf_run(&R.bpf, R.frame, R.len, (uint32_t)n, n < PG_BATCH ? (uint32_t)n : PG_BATCH);
		uint64_t t2 = now_ns();
		s->t_end = t2;
		if (rc) {
			if (rc != -EINTR)
				s->err = rc;
			atomic_store_explicit(&stop, true, memory_order_relaxed);
			break;
		}
		if (!paced)
			s->done += n;
		/* Next call about PG_CALL_NS (paced: PG_PACED_CALL_NS) long, as a call costs a fixed
		 * ~1-5 ms here, and not much past the deadline. */
		double per_ns = (double)n / (double)(t2 - t + 1);
		double want = per_ns * (paced ? PG_PACED_CALL_NS : PG_CALL_NS);
		double left = per_ns * (double)(R.deadline > t2 ? R.deadline - t2 : 0);
		if (want > left)
			want = left;
		chunk = want < PG_MIN_CHUNK ? PG_MIN_CHUNK : want > PG_MAX_CHUNK ? PG_MAX_CHUNK : (uint64_t)want;
		if (!decided) {
			struct pg_stats st;
			/* Every call flushes its frames before it returns, so at most one batch per
			 * thread is still in flight: more redirected than that and none sent means the
			 * device takes none (main says why). Once one is sent, the device works. */
			if (pg_bpf_read(&R.bpf, &st) == 0) {
				decided = st.sent > 0;
				if (!decided && st.runs > (uint64_t)PG_BATCH * R.o->threads)
					atomic_store_explicit(&stop, true, memory_order_relaxed);
			}
		}
	}
	return NULL;
}

static void report(const struct pg_opts *o, const struct pg_stats *st, double secs, double slipped,
		   const char *why)
{
	double mpps = secs > 0 ? (double)st->sent / secs / 1e6 : 0;
	uint64_t lost = st->runs - st->sent - st->drops;
	const char *mode = o->flows_random ? "random" : "seq";
	if (o->json) {
		printf("{\"bench\":\"pktgen\",\"impl\":\"xdp-live\",\"case\":\"%s\",\"value\":%.6f,"
		       "\"unit\":\"Mpps\",\"sent\":%llu,\"attempted\":%llu,\"refused\":%llu,"
		       "\"not_redirected\":%llu,\"elapsed_s\":%.9f,\"offered_pps\":%.3f,"
		       "\"attempted_pps\":%.3f,\"rate\":%.3f,\"slipped_s\":%.9f,"
		       "\"size\":%u,\"flows\":%u,\"flows_mode\":\"%s\",\"threads\":%u,"
		       "\"timestamps\":%s,\"stopped_by\":\"%s\"}\n",
		       o->dev, mpps, (unsigned long long)st->sent, (unsigned long long)st->runs,
		       (unsigned long long)st->drops, (unsigned long long)lost, secs,
		       secs > 0 ? (double)st->sent / secs : 0,
		       secs > 0 ? (double)st->runs / secs : 0, o->rate, slipped, o->size, o->flows,
		       mode, o->threads, o->timestamps ? "true" : "false", why);
	} else {
		printf("ringflow-pktgen: %s: %llu frames of %u B left the device in %.3f s: %.3f Mpps "
		       "offered (%u flow%s %s, %u thread%s, stopped by %s)\n",
		       o->dev, (unsigned long long)st->sent, o->size, secs, mpps, o->flows,
		       o->flows > 1 ? "s" : "", mode, o->threads, o->threads > 1 ? "s" : "", why);
		printf("ringflow-pktgen: %s: %llu attempted, %llu refused by the driver (peer ring "
		       "full), %llu not redirected\n",
		       o->dev, (unsigned long long)st->runs, (unsigned long long)st->drops,
		       (unsigned long long)lost);
		if (slipped > 0)
			printf("ringflow-pktgen: %s: the schedule slipped %.3f ms behind CPU the "
			       "tool lost (frames due then were not sent in a burst)\n",
			       o->dev, slipped * 1e3);
	}
	fflush(stdout);
}

/* A run's error that says the kernel runs no live frames for us at all, not a device problem:
 * a kernel before 5.18 (EINVAL, EOPNOTSUPP), or EPERM although we are root and the program
 * loaded (a machine that forbids live frames: seen on 2026-12-06 on a VM of this project's
 * kind, kernel 6.18, where the same run had worked on earlier machines of the kind). */
static bool live_refused(int err)
{
	return err == -EINVAL || err == -EOPNOTSUPP || (err == -EPERM && geteuid() == 0);
}

/* The one line for live_refused's cases. */
static void say_live_refused(int err)
{
	struct utsname u;
	uname(&u);
	if (err == -EPERM)
		fprintf(stderr, "ringflow-pktgen: this kernel (%s) refuses BPF_PROG_RUN live frames to root "
			"(EPERM) although the XDP program loaded: the machine forbids them, so no "
			"live-frame generator runs here (the benches use trafgen)\n", u.release);
	else
		fprintf(stderr, "ringflow-pktgen: BPF_PROG_RUN refused live frames (%s): this needs Linux >= "
			"5.18 (BPF_F_TEST_XDP_LIVE_FRAMES); this kernel is %s\n", strerror(-err), u.release);
}

/* --probe: exit 0 with one line on stdout when live frames run here, else 2 (or 1 when the
 * program itself cannot load: no root) with one line on stderr. */
static int probe(void)
{
	const char *step = "";
	int err = pg_bpf_probe_live(&step);
	if (!err) {
		printf("ringflow-pktgen: this kernel runs BPF_PROG_RUN live frames\n");
		return 0;
	}
	if (live_refused(err) && strcmp(step, "run") == 0) {
		say_live_refused(err);
		return 2;
	}
	fprintf(stderr, "ringflow-pktgen: probing live frames: %s: %s%s\n", step, strerror(-err),
		err == -EPERM ? " (run as root: BPF and XDP need CAP_BPF and CAP_NET_ADMIN)" : "");
	return 1;
}

int main(int argc, char **argv)
{
	static struct pg_opts o;
	int rc = pg_opts_parse(&o, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (o.probe)
		return probe();
	struct dev_info d;
	if (dev_probe(o.dev, &d))
		return 2;
	if (o.size - 14 > d.mtu) {
		fprintf(stderr, "ringflow-pktgen: --size %u does not fit %s's MTU %u: at most --size %u\n",
			o.size, o.dev, d.mtu, d.mtu + 14);
		return 2;
	}
	R.o = &o;
	R.len = pg_frame_build(R.frame, o.size, o.dst_mac, o.src_mac_set ? o.src_mac : d.mac,
			       o.timestamps);
	struct pg_cfg cfg = {.ifindex = d.ifindex,
			     .flows = o.flows,
			     .flags = (o.flows_random ? PG_F_RANDOM : 0) | (o.timestamps ? PG_F_TIMESTAMP : 0) |
				      (o.rate > 0 ? PG_F_PACED : 0),
			     .tgid = (__u32)getpid(),
			     .src_ip = PG_SRC_IP};
	_Static_assert(PG_HDR_LEN <= 60, "every frame holds the header template");
	memcpy(cfg.hdr, R.frame, PG_HDR_LEN);
	const char *why = "";
	rc = pg_bpf_open(&R.bpf, &cfg, &why);
	if (rc) {
		fprintf(stderr, "ringflow-pktgen: %s: %s%s\n", why, strerror(-rc),
			rc == -EPERM ? " (run as root: BPF and XDP need CAP_BPF and CAP_NET_ADMIN)" : "");
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static struct sender snd[PG_MAX_THREADS];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	R.t0 = now_ns();
	R.deadline = R.t0 + (uint64_t)(o.duration * 1e9);
	struct pg_pace pace = {.t0 = R.t0, .ps_per_frame = o.rate > 0 ? (uint64_t)(1e12 / o.rate) : 0,
			       .quota = o.count, .deadline = R.deadline};
	pace.max_lag_ns = PG_LAG_FRAMES * pace.ps_per_frame / 1000;
	if (pace.max_lag_ns < PG_LAG_MIN_NS)
		pace.max_lag_ns = PG_LAG_MIN_NS;
	if (o.rate > 0 && (rc = pg_bpf_pace_set(&R.bpf, &pace)) != 0) {
		fprintf(stderr, "ringflow-pktgen: writing the schedule: %s\n", strerror(-rc));
		pg_bpf_close(&R.bpf);
		return 1;
	}
	unsigned started = 0;
	for (unsigned i = 0; i < o.threads; i++) {
		struct sender *s = &snd[i];
		s->idx = i;
		s->cpu = o.cpu < 0 ? -1 : (int)((o.cpu + (long)i) % (ncpu > 0 ? ncpu : 1));
		s->quota = o.count / o.threads + (i < o.count % o.threads ? 1 : 0);
		if (o.rate <= 0 && o.count && !s->quota) { /* fewer frames than threads: this one has none */
			s->t_end = R.t0;
			continue;
		}
		int e = pthread_create(&s->tid, NULL, send_loop, s);
		if (e) {
			fprintf(stderr, "ringflow-pktgen: starting sending thread %u: %s\n", i, strerror(e));
			atomic_store_explicit(&stop, true, memory_order_relaxed);
			break;
		}
		started = i + 1;
	}
	uint64_t t_end = R.t0;
	int err = 0;
	bool failed = started < o.threads && !(o.rate <= 0 && o.count && o.count < o.threads);
	for (unsigned i = 0; i < started; i++) {
		if (o.rate <= 0 && o.count && !snd[i].quota)
			continue;
		pthread_join(snd[i].tid, NULL);
		failed |= snd[i].pin_failed;
		if (snd[i].t_end > t_end)
			t_end = snd[i].t_end;
		if (snd[i].err && !err)
			err = snd[i].err;
	}
	struct pg_stats st;
	rc = pg_bpf_read(&R.bpf, &st);
	uint64_t slipped_ns = 0; /* how far the schedule slipped behind lost CPU (pg_pace) */
	if (!rc && o.rate > 0 && (rc = pg_bpf_pace_get(&R.bpf, &pace)) == 0) {
		t_end = pace.issued ? pace.last_ns + pace.ps_per_frame / 1000 : R.t0;
		slipped_ns = pace.t0 - R.t0;
	}
	pg_bpf_close(&R.bpf);
	if (rc) {
		fprintf(stderr, "ringflow-pktgen: reading the counters: %s\n", strerror(-rc));
		return 1;
	}
	if (failed)
		return 1; /* a thread could not start or be pinned: said so already */
	if (live_refused(err)) {
		say_live_refused(err);
		return 2;
	}
	if (err) {
		fprintf(stderr, "ringflow-pktgen: sending on %s: %s\n", o.dev, strerror(-err));
		return 1;
	}
	if (st.runs > 0 && st.sent == 0)
		return diagnose(&o, &d, &st);
	const char *by = atomic_load_explicit(&stop, memory_order_relaxed) ? "signal"
			 : o.count && st.runs >= o.count ? "count" : "duration";
	report(&o, &st, (double)(t_end - R.t0) / 1e9, (double)slipped_ns / 1e9, by);
	return 0;
}
