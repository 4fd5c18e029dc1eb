/*
 * apps/ctl/ctl.c: ringflow-ctl, the command line over a ringflow process's control socket.
 *
 *   ringflow-ctl list                          running ringflow processes
 *   ringflow-ctl [-p PID | -s SOCKET] stats [PATH]
 *   ringflow-ctl [-p PID | -s SOCKET] pollers  a pmd-stats-show-like table
 *   ringflow-ctl [-p PID | -s SOCKET] top      refreshed every second
 *   ringflow-ctl [-p PID | -s SOCKET] log-level [LEVEL]
 *   ringflow-ctl [-p PID | -s SOCKET] CMD [KEY=VALUE...]   any other command (peers, ...)
 * --json prints the answer as JSON everywhere. Built only on the public headers.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <ringflow/json.h>

#include "ctl_client.h"

static bool json_out;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringflow-ctl [--json] list\n"
		"       ringflow-ctl [--json] [-p PID | -s SOCKET] stats [PATH]\n"
		"       ringflow-ctl [--json] [-p PID | -s SOCKET] pollers\n"
		"       ringflow-ctl [--json] [-p PID | -s SOCKET] top [--iterations N] [--interval S]\n"
		"       ringflow-ctl [--json] [-p PID | -s SOCKET] log-level [err|warn|info|debug]\n"
		"       ringflow-ctl [--json] [-p PID | -s SOCKET] CMD [KEY=VALUE...]  (help: list-commands)\n"
		"Asks a running ringflow process over its control socket (docs/observing.md).\n"
		"Without -p/-s, the one running ringflow process is used.\n");
}

static void print_json(const struct rf_json *j)
{
	struct rf_buf b;
	rf_buf_init(&b, 256u << 20);
	rf_json_write(&b, j);
	printf("%s\n", b.p ? b.p : "");
	rf_buf_free(&b);
}

/* Leaves as "path value" lines. */
static void flatten(const struct rf_json *j, const char *prefix)
{
	if (j->type == RF_JSON_OBJ && !(rf_json_get(j, "le") && rf_json_get(j, "counts"))) {
		for (const struct rf_json *c = j->child; c; c = c->next) {
			char p[512];
			snprintf(p, sizeof(p), "%s%s%s", prefix, *prefix ? "/" : "", c->key);
			flatten(c, p);
		}
		return;
	}
	struct rf_buf b;
	rf_buf_init(&b, 1u << 20);
	rf_json_write(&b, j);
	printf("%-48s %s\n", *prefix ? prefix : ".", b.p ? b.p : "");
	rf_buf_free(&b);
}

static int cmd_list(void)
{
	struct ctl_proc p[256];
	int n = ctl_find(p, 256);
	if (json_out) {
		printf("[");
		for (int i = 0; i < n; i++)
			printf("%s{\"pid\":%d,\"app\":\"%s\",\"socket\":\"%s\"}", i ? "," : "",
			       (int)p[i].pid, p[i].app, p[i].path);
		printf("]\n");
		return 0;
	}
	printf("%-8s %-14s %s\n", "PID", "APP", "SOCKET");
	for (int i = 0; i < n; i++)
		printf("%-8d %-14s %s\n", (int)p[i].pid, p[i].app, p[i].path);
	return 0;
}

/* The socket to use: -s, -p, or the only one running. */
static int pick(const char *sock, long pid, char *path, size_t len)
{
	if (sock) {
		snprintf(path, len, "%s", sock);
		return 0;
	}
	struct ctl_proc p[256];
	int n = ctl_find(p, 256), hit = -1, count = 0;
	for (int i = 0; i < n; i++)
		if (pid <= 0 || p[i].pid == pid)
			hit = i, count++;
	if (count == 1) {
		snprintf(path, len, "%s", p[hit].path);
		return 0;
	}
	if (pid > 0)
		fprintf(stderr, "ringflow-ctl: no ringflow process %ld has a control socket: "
			"ringflow-ctl list shows those that do\n", pid);
	else if (count == 0)
		fprintf(stderr, "ringflow-ctl: no ringflow process is running (or its socket is in "
			"another directory: use -s SOCKET)\n");
	else
		fprintf(stderr, "ringflow-ctl: %d ringflow processes are running: pick one with "
			"-p PID (ringflow-ctl list)\n", count);
	return -1;
}

/* Ask and return the "result" member's tree (in *root, to free), or NULL after one line. */
static const struct rf_json *ask(int fd, const char *req, struct rf_json **root)
{
	char err[256];
	*root = ctl_ask(fd, req, err, sizeof(err));
	if (!*root) {
		fprintf(stderr, "ringflow-ctl: %s\n", err);
		return NULL;
	}
	const char *e = rf_json_get_str(*root, "error", NULL);
	if (e) {
		fprintf(stderr, "ringflow-ctl: %s\n", e);
		return NULL;
	}
	const struct rf_json *r = rf_json_get(*root, "result");
	if (!r)
		fprintf(stderr, "ringflow-ctl: an answer without \"result\"\n");
	return r;
}

static double num(const struct rf_json *o, const char *k)
{
	return rf_json_get_num(o, k, 0);
}

/* Counter k of a minus the same of b. Counters come as exact 64-bit integers: subtract those
 * (two ns counters past 2^53 differ in bits a double drops), then make it a double. */
static double delta(const struct rf_json *a, const struct rf_json *b, const char *k)
{
	uint64_t x, y;
	if (rf_json_u64(rf_json_get(a, k), &x) == 0 && rf_json_u64(rf_json_get(b, k), &y) == 0)
		return x >= y ? (double)(x - y) : -(double)(y - x);
	return num(a, k) - num(b, k);
}

static void pollers_table(const struct rf_json *pol)
{
	printf("%-6s %-4s %12s %7s %7s %7s %12s %12s %10s %8s %10s\n", "poller", "cpu", "rounds",
	       "busy%", "idle%", "sleep%", "rx", "tx", "drops", "stalls", "stall_max");
	for (const struct rf_json *p = pol->child; p; p = p->next) {
		double b = num(p, "busy_ns"), i = num(p, "idle_ns"), s = num(p, "sleep_ns");
		double t = b + i + s > 0 ? b + i + s : 1;
		printf("%-6s %-4.0f %12.0f %6.1f%% %6.1f%% %6.1f%% %12.0f %12.0f %10.0f %8.0f %8.0fus\n",
		       p->key, num(p, "cpu"), num(p, "rounds"), 100 * b / t, 100 * i / t, 100 * s / t,
		       num(p, "rx"), num(p, "tx"),
		       num(p, "drop_ring_full") + num(p, "drop_pool_empty") + num(p, "drop_driver"),
		       num(p, "stalls"), num(p, "stall_max_ns") / 1e3);
		const struct rf_json *polls = rf_json_get(p, "polls");
		for (const struct rf_json *f = polls ? polls->child : NULL; f; f = f->next)
			printf("       poll %-16s work %.0f in %.0f busy rounds\n", f->key,
			       num(f, "work"), num(f, "busy_rounds"));
	}
}

static volatile sig_atomic_t stop_top;
static void on_int(int s)
{
	(void)s;
	stop_top = 1;
}

/* Cache hits over all cached gets between two snapshots of a pool, in %; -1 when none. */
static double hit_pct(const struct rf_json *c, const struct rf_json *p)
{
	double h = delta(c, p, "cache_hits"), m = delta(c, p, "cache_misses");
	return h + m > 0 ? 100 * h / (h + m) : -1;
}

/* Columns to lay top out for: $COLUMNS, else the terminal's width, else 80; at least 60
 * (narrower terminals wrap). Below 80 the tables drop the driver column and narrow the rest. */
static int term_cols(void)
{
	const char *c = getenv("COLUMNS");
	long v = c ? strtol(c, NULL, 10) : 0;
	struct winsize ws;
	if (v <= 0)
		v = isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
	return v < 60 ? 60 : v > 400 ? 400 : (int)v;
}

/* v in at most w characters: all digits when they fit, else k/M/G/T/P/E with one decimal. */
static const char *fit_num(char *buf, size_t n, double v, int w)
{
	snprintf(buf, n, "%.0f", v);
	for (const char *u = "kMGTPE"; (int)strlen(buf) > w && *u; u++) {
		v /= 1000;
		snprintf(buf, n, "%.1f%c", v, *u);
		if ((int)strlen(buf) > w)
			snprintf(buf, n, "%.0f%c", v, *u);
	}
	return buf;
}

/* s in at most w characters: cut, with '~' as its last one, when longer. */
static const char *fit_str(char *buf, size_t n, const char *s, int w)
{
	snprintf(buf, n, "%s", s);
	if ((int)strlen(buf) > w && w > 0 && (size_t)w < n) {
		buf[w - 1] = '~';
		buf[w] = '\0';
	}
	return buf;
}

/* One row of top's port table: a device ("all") or one of its queues. */
static void port_row(const char *name, const char *driver, const char *queue,
		     const struct rf_json *c, const struct rf_json *p, double interval, bool wide)
{
	int wpn = wide ? 12 : 10, wq = wide ? 6 : 5, wpr = wide ? 12 : 9, wd = wide ? 10 : 8;
	char a[64], dr[16], q[16], b1[32], b2[32], b3[32], b4[32];
	fit_str(a, sizeof(a), name, wpn);
	if (wide)
		printf("%-*s %-6s ", wpn, a, fit_str(dr, sizeof(dr), driver, 6));
	else
		printf("%-*s ", wpn, a);
	printf("%*s %*s %*s %*s %*s\n", wq, fit_str(q, sizeof(q), queue, wq), wpr,
	       fit_num(b1, sizeof(b1), delta(c, p, "rx_pkts") / interval, wpr), wpr,
	       fit_num(b2, sizeof(b2), delta(c, p, "tx_pkts") / interval, wpr), wd,
	       fit_num(b3, sizeof(b3), (delta(c, p, "rx_drops") + delta(c, p, "tx_drops")) / interval, wd),
	       wd, fit_num(b4, sizeof(b4), delta(c, p, "rx_nobuf") / interval, wd));
}

/* The human view of top: rates from two snapshots, laid out for term_cols(). */
static void top_table(const struct rf_json *cr, const struct rf_json *pr, double interval,
		      bool tty)
{
	int cols = term_cols();
	bool wide = cols >= 80;
	/* widths: name, cpu, pct, rate (pollers); port name, queue, rate, drops (ports) */
	int wn = wide ? 8 : 6, wc = wide ? 4 : 3, wp = wide ? 7 : 6, wr = wide ? 12 : 10;
	int wpn = wide ? 12 : 10, wq = wide ? 6 : 5, wpr = wide ? 12 : 9, wd = wide ? 10 : 8;
	char a[64], b1[32], b2[32], b3[32];
	const struct rf_json *cp = rf_json_get(cr, "pollers"), *pp = rf_json_get(pr, "pollers");
	const struct rf_json *cports = rf_json_get(cr, "ports"), *pports = rf_json_get(pr, "ports");
	const struct rf_json *pools = rf_json_get(cr, "mempools");
	const struct rf_json *ppools = rf_json_get(pr, "mempools");
	const struct rf_json *crings = rf_json_get(cr, "rings"), *prings = rf_json_get(pr, "rings");
	const struct rf_json *capp = rf_json_get(cr, "app"), *papp = rf_json_get(pr, "app");
#define D(a, b, k) delta(a, b, k)
	if (tty)
		printf("\033[H\033[2J");
	char hello[64];
	time_t now = time(NULL);
	strftime(hello, sizeof(hello), "%H:%M:%S", localtime(&now));
	printf("ringflow-ctl top  %s  every %.1f s  (Ctrl-C quits)\n\n", hello, interval);
	printf("%-*s %-*s %*s %*s %*s %*s %*s\n", wn, "POLLER", wc, "CPU", wp, "BUSY%", wp, "IDLE%",
	       wp, "SLEEP%", wr, "RX/s", wr, "TX/s");
	for (const struct rf_json *p = cp ? cp->child : NULL; p; p = p->next) {
		const struct rf_json *o = rf_json_get(pp, p->key);
		double b = D(p, o, "busy_ns"), i = D(p, o, "idle_ns"), s = D(p, o, "sleep_ns");
		double t = b + i + s > 0 ? b + i + s : 1;
		printf("%-*s %-*.0f %*.1f%% %*.1f%% %*.1f%% %*s %*s\n", wn,
		       fit_str(a, sizeof(a), p->key, wn), wc, num(p, "cpu"), wp - 1, 100 * b / t,
		       wp - 1, 100 * i / t, wp - 1, 100 * s / t, wr,
		       fit_num(b1, sizeof(b1), D(p, o, "rx") / interval, wr), wr,
		       fit_num(b2, sizeof(b2), D(p, o, "tx") / interval, wr));
	}
	if (wide)
		printf("\n%-*s %-6s %*s %*s %*s %*s %*s\n", wpn, "PORT", "DRIVER", wq, "QUEUE", wpr,
		       "RX/s", wpr, "TX/s", wd, "DROPS/s", wd, "NOBUF/s");
	else
		printf("\n%-*s %*s %*s %*s %*s %*s\n", wpn, "PORT", wq, "QUEUE", wpr, "RX/s", wpr,
		       "TX/s", wd, "DROPS/s", wd, "NOBUF/s");
	for (const struct rf_json *p = cports ? cports->child : NULL; p; p = p->next) {
		const struct rf_json *o = rf_json_get(pports, p->key);
		/* the device's row ("all"), then one row per queue (its poller's own counters) */
		port_row(p->key, rf_json_get_str(p, "driver", "?"), "all", p, o, interval, wide);
		const struct rf_json *cq = rf_json_get(p, "per_queue");
		const struct rf_json *pq = rf_json_get(o, "per_queue");
		for (const struct rf_json *q = cq ? cq->child : NULL; q; q = q->next)
			port_row("", "", q->key, q, rf_json_get(pq, q->key), interval, wide);
	}
	printf("\n%-12s %10s %10s %6s %8s\n", "POOL", "IN USE", "SIZE", "USE%", "HIT%");
	for (const struct rf_json *p = pools ? pools->child : NULL; p; p = p->next) {
		double h = hit_pct(p, rf_json_get(ppools, p->key));
		char hs[16];
		if (h < 0)
			snprintf(hs, sizeof(hs), "-");
		else
			snprintf(hs, sizeof(hs), "%.2f%%", h);
		printf("%-12s %10s %10s %5.1f%% %8s\n", fit_str(a, sizeof(a), p->key, 12),
		       fit_num(b1, sizeof(b1), num(p, "in_use"), 10),
		       fit_num(b2, sizeof(b2), num(p, "size"), 10),
		       num(p, "size") > 0 ? 100 * num(p, "in_use") / num(p, "size") : 0, hs);
	}
	if (crings && crings->child) {
		printf("\n%-12s %10s %10s %12s\n", "RING", "ENTRIES", "CAPACITY", "ENQ FAIL/s");
		for (const struct rf_json *p = crings->child; p; p = p->next) {
			const struct rf_json *o = rf_json_get(prings, p->key);
			printf("%-12s %10s %10s %12s\n", fit_str(a, sizeof(a), p->key, 12),
			       fit_num(b1, sizeof(b1), num(p, "count"), 10),
			       fit_num(b2, sizeof(b2), num(p, "capacity"), 10),
			       fit_num(b3, sizeof(b3), D(p, o, "enqueue_failures") / interval, 12));
		}
	}
	/* The app's own values (rf_stats_add_counter/_gauge/_hist: "app/NAME"): the value
	 * (a histogram's count) and its change per second. */
	if (capp && capp->child) {
		int wname = cols - 2 * 13 > 40 ? 40 : cols - 2 * 13;
		printf("\n%-*s %12s %12s\n", wname, "APP", "VALUE", "CHANGE/s");
		for (const struct rf_json *p = capp->child; p; p = p->next) {
			const struct rf_json *o = rf_json_get(papp, p->key);
			double v, ov;
			if (p->type == RF_JSON_NUM) {
				v = p->num;
				ov = o && o->type == RF_JSON_NUM ? o->num : v;
			} else if (rf_json_get(p, "count")) {
				v = num(p, "count");
				ov = o ? num(o, "count") : v;
			} else {
				continue; /* a subtree of a callback's own: `stats app` shows it */
			}
			printf("%-*s %12s %12s\n", wname, fit_str(a, sizeof(a), p->key, wname),
			       fit_num(b1, sizeof(b1), v, 12),
			       fit_num(b2, sizeof(b2), (v - ov) / interval, 12));
		}
	}
#undef D
}

/* top: two snapshots an interval apart; per-second rates from the difference. */
static int cmd_top(int fd, long iterations, double interval)
{
	struct rf_json *prev = NULL;
	const struct rf_json *pr = ask(fd, "{\"cmd\":\"stats\"}", &prev);
	if (!pr) {
		rf_json_free(prev);
		return 1;
	}
	signal(SIGINT, on_int);
	bool tty = isatty(1) && !json_out;
	for (long it = 0; (iterations <= 0 || it < iterations) && !stop_top; it++) {
		struct timespec ts = {(time_t)interval, (long)((interval - floor(interval)) * 1e9)};
		nanosleep(&ts, NULL);
		if (stop_top)
			break;
		struct rf_json *cur = NULL;
		const struct rf_json *cr = ask(fd, "{\"cmd\":\"stats\"}", &cur);
		if (!cr) {
			rf_json_free(cur);
			rf_json_free(prev);
			return 1;
		}
		const struct rf_json *cp = rf_json_get(cr, "pollers"), *pp = rf_json_get(pr, "pollers");
		const struct rf_json *cports = rf_json_get(cr, "ports"), *pports = rf_json_get(pr, "ports");
		const struct rf_json *pools = rf_json_get(cr, "mempools");
		const struct rf_json *ppools = rf_json_get(pr, "mempools");
#define D(a, b, k) delta(a, b, k)
		if (json_out) {
			printf("{\"pollers\":[");
			for (const struct rf_json *p = cp ? cp->child : NULL; p; p = p->next) {
				const struct rf_json *o = rf_json_get(pp, p->key);
				double b = D(p, o, "busy_ns"), i = D(p, o, "idle_ns"), s = D(p, o, "sleep_ns");
				double t = b + i + s > 0 ? b + i + s : 1;
				printf("%s{\"poller\":\"%s\",\"busy_pct\":%.2f,\"rx_per_s\":%.0f,"
				       "\"tx_per_s\":%.0f}", p == cp->child ? "" : ",", p->key,
				       100 * b / t, D(p, o, "rx") / interval, D(p, o, "tx") / interval);
			}
			printf("],\"ports\":[");
			for (const struct rf_json *p = cports ? cports->child : NULL; p; p = p->next) {
				const struct rf_json *o = rf_json_get(pports, p->key);
				printf("%s{\"port\":\"%s\",\"rx_per_s\":%.0f,\"tx_per_s\":%.0f,"
				       "\"drops_per_s\":%.0f,\"queues\":[", p == cports->child ? "" : ",",
				       p->key, D(p, o, "rx_pkts") / interval, D(p, o, "tx_pkts") / interval,
				       (D(p, o, "rx_drops") + D(p, o, "tx_drops") + D(p, o, "rx_nobuf")) /
					       interval);
				const struct rf_json *cq = rf_json_get(p, "per_queue");
				const struct rf_json *pq = rf_json_get(o, "per_queue");
				for (const struct rf_json *q = cq ? cq->child : NULL; q; q = q->next) {
					const struct rf_json *oq = rf_json_get(pq, q->key);
					printf("%s{\"queue\":%s,\"rx_per_s\":%.0f,\"tx_per_s\":%.0f,"
					       "\"drops_per_s\":%.0f}", q == cq->child ? "" : ",", q->key,
					       D(q, oq, "rx_pkts") / interval, D(q, oq, "tx_pkts") / interval,
					       (D(q, oq, "rx_drops") + D(q, oq, "tx_drops") +
						D(q, oq, "rx_nobuf")) / interval);
				}
				printf("]}");
			}
			printf("],\"mempools\":[");
			for (const struct rf_json *p = pools ? pools->child : NULL; p; p = p->next) {
				double h = hit_pct(p, rf_json_get(ppools, p->key));
				printf("%s{\"pool\":\"%s\",\"in_use\":%.0f,\"size\":%.0f,"
				       "\"cache_hit_pct\":", p == pools->child ? "" : ",", p->key,
				       num(p, "in_use"), num(p, "size"));
				if (h < 0)
					printf("null}");
				else
					printf("%.2f}", h);
			}
			printf("],\"app\":[");
			const struct rf_json *capp = rf_json_get(cr, "app"), *papp = rf_json_get(pr, "app");
			bool first = true;
			for (const struct rf_json *p = capp ? capp->child : NULL; p; p = p->next) {
				if (p->type != RF_JSON_NUM)
					continue; /* histograms and callbacks' subtrees: `stats app` */
				const struct rf_json *o = rf_json_get(papp, p->key);
				double ov = o && o->type == RF_JSON_NUM ? o->num : p->num;
				printf("%s{\"name\":", first ? "" : ",");
				struct rf_buf nb;
				rf_buf_init(&nb, 1024);
				rf_json_str(&nb, p->key);
				printf("%s,\"value\":%.0f,\"per_s\":%.2f}", nb.p ? nb.p : "\"\"", p->num,
				       (p->num - ov) / interval);
				rf_buf_free(&nb);
				first = false;
			}
			printf("]}\n");
		} else {
			top_table(cr, pr, interval, tty);
		}
#undef D
		fflush(stdout);
		rf_json_free(prev);
		prev = cur;
		pr = cr;
	}
	rf_json_free(prev);
	return 0;
}

/* "k=v" arguments into a request object. */
static int build_request(char *req, size_t len, const char *cmd, int argc, char **argv)
{
	struct rf_buf b;
	rf_buf_init(&b, len);
	rf_buf_puts(&b, "{\"cmd\":");
	rf_json_str(&b, cmd);
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "ringflow-ctl: argument \"%s\": use KEY=VALUE\n", argv[i]);
			rf_buf_free(&b);
			return -1;
		}
		*eq = '\0';
		rf_buf_puts(&b, ",");
		rf_json_str(&b, argv[i]);
		rf_buf_puts(&b, ":");
		rf_json_str(&b, eq + 1);
		*eq = '=';
	}
	rf_buf_puts(&b, "}");
	int rc = b.full ? -1 : 0;
	if (rc)
		fprintf(stderr, "ringflow-ctl: request longer than %zu bytes\n", len);
	else
		snprintf(req, len, "%s", b.p);
	rf_buf_free(&b);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},      {"pid", required_argument, NULL, 'p'},
		{"socket", required_argument, NULL, 's'}, {"iterations", required_argument, NULL, 'n'},
		{"interval", required_argument, NULL, 'i'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *sock = NULL;
	long pid = 0, iterations = 0;
	double interval = 1.0;
	int o;
	while ((o = getopt_long(argc, argv, "+jp:s:n:i:h", opts, NULL)) != -1) {
		char *end;
		switch (o) {
		case 'j': json_out = true; break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0) {
				fprintf(stderr, "ringflow-ctl: -p %s: a process id\n", optarg);
				return 2;
			}
			break;
		case 's': sock = optarg; break;
		case 'n':
			iterations = strtol(optarg, &end, 10);
			if (*end || iterations < 1) {
				fprintf(stderr, "ringflow-ctl: --iterations %s: a count >= 1\n", optarg);
				return 2;
			}
			break;
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || !(interval >= 0.1 && interval <= 3600)) {
				fprintf(stderr, "ringflow-ctl: --interval %s: seconds, 0.1..3600\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[optind++];
	if (strcmp(cmd, "list") == 0)
		return cmd_list();
	/* top takes its options after the command too */
	if (strcmp(cmd, "top") == 0) {
		for (; optind < argc; optind++) {
			const char *a = argv[optind];
			char *end = NULL;
			if (strcmp(a, "--json") == 0) {
				json_out = true;
				continue;
			}
			if ((strcmp(a, "--iterations") == 0 || strcmp(a, "-n") == 0) && optind + 1 < argc) {
				iterations = strtol(argv[++optind], &end, 10);
				if (!*end && iterations >= 1)
					continue;
			} else if (strcmp(a, "--interval") == 0 && optind + 1 < argc) {
				interval = strtod(argv[++optind], &end);
				if (!*end && interval >= 0.1 && interval <= 3600)
					continue;
			}
			fprintf(stderr, "ringflow-ctl: top [--iterations N] [--interval S]: bad \"%s\"\n", a);
			return 2;
		}
	}
	char path[256], err[256];
	if (pick(sock, pid, path, sizeof(path)))
		return 1;
	int fd = ctl_connect(path, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "ringflow-ctl: %s\n", err);
		return 1;
	}
	struct rf_json *hello = ctl_read(fd, err, sizeof(err));
	if (!hello && strncmp(err, "process exited", 14) == 0) {
		fprintf(stderr, "ringflow-ctl: %s: %s\n", path, err);
		close(fd);
		return 1;
	}
	if (!hello || !rf_json_get(hello, "ringflow")) {
		fprintf(stderr, "ringflow-ctl: %s: not a ringflow control socket (%s)\n", path,
			hello ? "no hello line" : err);
		rf_json_free(hello);
		close(fd);
		return 1;
	}
	rf_json_free(hello);
	int rc = 0;
	char req[4096];
	struct rf_json *root = NULL;
	if (strcmp(cmd, "top") == 0) {
		rc = cmd_top(fd, iterations, interval);
	} else {
		if (strcmp(cmd, "stats") == 0 && optind < argc) {
			struct rf_buf b;
			rf_buf_init(&b, sizeof(req));
			rf_buf_puts(&b, "{\"cmd\":\"stats\",\"path\":");
			rf_json_str(&b, argv[optind]);
			rf_buf_puts(&b, "}");
			snprintf(req, sizeof(req), "%s", b.full ? "{}" : b.p);
			rf_buf_free(&b);
		} else if (strcmp(cmd, "log-level") == 0 && optind < argc) {
			snprintf(req, sizeof(req), "{\"cmd\":\"log-level\",\"level\":\"%.32s\"}",
				 argv[optind]);
		} else if (strcmp(cmd, "list-commands") == 0) {
			snprintf(req, sizeof(req), "{\"cmd\":\"list\"}");
		} else if (build_request(req, sizeof(req), cmd, argc - optind, argv + optind)) {
			close(fd);
			return 2;
		}
		const struct rf_json *r = ask(fd, req, &root);
		if (!r)
			rc = 1;
		else if (json_out)
			print_json(r);
		else if (strcmp(cmd, "pollers") == 0)
			pollers_table(r);
		else if (r->type == RF_JSON_STR)
			printf("%s\n", r->str);
		else
			flatten(r, strcmp(cmd, "stats") == 0 && optind < argc ? argv[optind] : "");
	}
	rf_json_free(root);
	close(fd);
	return rc;
}
