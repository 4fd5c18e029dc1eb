/*
 * apps/echo/lg_report.h: what the load generator reports for one rate point, the saturation
 * rule, and the two output forms (a human table row, one JSON object per line).
 *
 * The saturation rule (seed 002): a point is saturated when the replies received are fewer than
 * 99 % of the messages offered (the schedule's count: rate x duration), or when more than 0.1 %
 * of the messages actually sent got no reply. Past that point the latency only measures queue
 * depth, so the table prints "saturated" with the real received rate and loss instead of hiding it.
 * The rule is a pure function of counts (integer arithmetic, so the 99 % and 0.1 % edges are exact).
 */
#ifndef RINGFLOW_APPS_ECHO_LG_REPORT_H
#define RINGFLOW_APPS_ECHO_LG_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"

/* True when the point is saturated: received * 100 < offered * 99, or (sent - received) * 1000 >
 * sent. offered = messages the schedule asked for, sent = messages the driver accepted,
 * received = distinct replies to those. A point with nothing offered is not saturated. */
bool rf_lg_saturated(uint64_t offered, uint64_t sent, uint64_t received);

/* Busy and steal time of the whole machine and of up to RF_LG_MAX_CPUS CPUs, from /proc/stat. */
#define RF_LG_MAX_CPUS 8
struct rf_lg_cpu_sample {
	unsigned n_cpus;
	uint64_t total[RF_LG_MAX_CPUS + 1]; /* [0] = "cpu" line, [1 + i] = cpu i; USER_HZ ticks */
	uint64_t busy[RF_LG_MAX_CPUS + 1];  /* everything but idle and iowait (steal excluded) */
	uint64_t steal[RF_LG_MAX_CPUS + 1];
	double load1; /* 1-minute load average (/proc/loadavg): other work competing for the CPUs */
};

/* Reads /proc/stat and /proc/loadavg into s. Returns 0, or -errno (s then reads as zeros). */
int rf_lg_cpu_read(struct rf_lg_cpu_sample *s);

/* One measured rate point. */
struct rf_lg_point {
	const char *backend;    /* the --backend spec */
	double offered_rate;    /* msg/s asked for */
	double seconds;         /* measured window (s): --duration, or longer when the sender fell
				 * behind and took longer to send the window's messages */
	uint64_t offered;       /* messages the schedule asked for in that window */
	uint64_t sent;          /* messages the driver accepted in the window */
	double achieved_rate;   /* sent / the real send window (0: use sent / seconds) */
	uint64_t received;      /* distinct replies to those */
	uint64_t reordered;     /* replies with a lower sequence number than one seen before */
	uint64_t duplicates;    /* replies to a sequence number already seen */
	uint64_t corrupt;       /* replies whose payload or header did not check out */
	uint64_t late_max_ns;   /* worst lag of a send behind its scheduled deadline */
	struct rf_hist *rtt;    /* RTT in ns of every received reply */
	double steal_pct;       /* machine-wide steal over the window, % of all CPU time */
	double load1;           /* 1-minute load average at the end of the window */
	unsigned n_cpus;
	double cpu_busy_pct[RF_LG_MAX_CPUS]; /* per CPU, % of that CPU's time */
};

/* Fills the steal and per-CPU busy fields of p from two samples taken around the window. */
void rf_lg_point_cpu(struct rf_lg_point *p, const struct rf_lg_cpu_sample *a,
		     const struct rf_lg_cpu_sample *b);

/* Loss of the point as a fraction of sent (0 when nothing was sent). */
double rf_lg_point_loss(const struct rf_lg_point *p);

/* Prints the table header / one row (saturated rows say so, with the real rate and loss). */
void rf_lg_table_header(FILE *f);
void rf_lg_table_row(FILE *f, const struct rf_lg_point *p);

/* Prints p as one JSON object on one line (keys: backend, offered, achieved, received, loss,
 * reordered, duplicates, corrupt, min_us, p50_us, p90_us, p99_us, p999_us, max_us, mean_us,
 * late_max_us, saturated, seconds, steal_pct, load1, cpu_busy_pct). */
void rf_lg_json(FILE *f, const struct rf_lg_point *p);

/* s as a JSON string literal (quotes, backslashes and control characters escaped). */
void rf_lg_json_string(FILE *f, const char *s);

/* Parses a rate such as "20k", "1.6M", "500" into msg/s. Returns 0, or -EINVAL. */
int rf_lg_parse_rate(const char *s, double *rate);

#endif /* RINGFLOW_APPS_ECHO_LG_REPORT_H */
