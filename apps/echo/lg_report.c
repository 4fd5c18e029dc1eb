/*
 * apps/echo/lg_report.c: the saturation rule, /proc/stat sampling, and printing a rate point
 * as a table row or a JSON line. No I/O driver code here, so tests link it alone.
 */
#include "lg_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool rf_lg_saturated(uint64_t offered, uint64_t sent, uint64_t received)
{
	if (offered == 0)
		return false;
	/* Long double: offered * 100 must not overflow for any count a run can reach. */
	if ((long double)received * 100.0L < (long double)offered * 99.0L)
		return true;
	if (received >= sent)
		return false;
	return (long double)(sent - received) * 1000.0L > (long double)sent;
}

int rf_lg_cpu_read(struct rf_lg_cpu_sample *s)
{
	memset(s, 0, sizeof(*s));
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -errno;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu", 3) != 0)
			break; /* the cpu lines come first */
		unsigned slot;
		char *p = line + 3;
		if (*p == ' ') {
			slot = 0;
		} else {
			char *end;
			unsigned long id = strtoul(p, &end, 10);
			if (end == p || id >= RF_LG_MAX_CPUS)
				continue;
			slot = 1 + (unsigned)id;
			if (slot > s->n_cpus)
				s->n_cpus = slot;
			p = end;
		}
		unsigned long long v[8] = {0}; /* user nice system idle iowait irq softirq steal */
		if (sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) < 4)
			continue;
		s->busy[slot] = v[0] + v[1] + v[2] + v[5] + v[6];
		s->steal[slot] = v[7];
		s->total[slot] = s->busy[slot] + v[3] + v[4] + v[7];
	}
	fclose(f);
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &s->load1) != 1)
			s->load1 = 0;
		fclose(f);
	}
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void rf_lg_point_cpu(struct rf_lg_point *p, const struct rf_lg_cpu_sample *a,
		     const struct rf_lg_cpu_sample *b)
{
	p->steal_pct = pct(b->steal[0] - a->steal[0], b->total[0] - a->total[0]);
	p->load1 = b->load1;
	p->n_cpus = b->n_cpus < a->n_cpus ? b->n_cpus : a->n_cpus;
	for (unsigned i = 0; i < p->n_cpus; i++)
		p->cpu_busy_pct[i] = pct(b->busy[1 + i] - a->busy[1 + i],
					 b->total[1 + i] - a->total[1 + i]);
}

double rf_lg_point_loss(const struct rf_lg_point *p)
{
	if (p->sent == 0 || p->received >= p->sent)
		return 0.0;
	return (double)(p->sent - p->received) / (double)p->sent;
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static double rate(uint64_t n, double seconds)
{
	return seconds > 0 ? (double)n / seconds : 0.0;
}

static double achieved(const struct rf_lg_point *p)
{
	return p->achieved_rate > 0 ? p->achieved_rate : rate(p->sent, p->seconds);
}

void rf_lg_table_header(FILE *f)
{
	fprintf(f, "%-18s %10s %10s %10s %8s %7s %8s %8s %8s %8s %9s %9s  %s\n", "backend",
		"offered/s", "sent/s", "recv/s", "loss%", "reord", "min_us", "p50_us", "p90_us",
		"p99_us", "p99.9_us", "max_us", "steal%");
}

void rf_lg_table_row(FILE *f, const struct rf_lg_point *p)
{
	bool sat = rf_lg_saturated(p->offered, p->sent, p->received);
	fprintf(f, "%-18s %10.0f %10.0f %10.0f %8.3f %7llu ", p->backend, p->offered_rate,
		achieved(p), rate(p->received, p->seconds),
		100.0 * rf_lg_point_loss(p), (unsigned long long)p->reordered);
	if (sat)
		fprintf(f, "%8s %8s %8s %8s %9s %9s  %.1f  (saturated: sent %.0f/s, received %.0f/s "
			   "of %.0f/s, loss %.3f%%)\n", "-", "-", "-", "-", "-", "-", p->steal_pct,
			achieved(p), rate(p->received, p->seconds), p->offered_rate,
			100.0 * rf_lg_point_loss(p));
	else
		fprintf(f, "%8.1f %8.1f %8.1f %8.1f %9.1f %9.1f  %.1f\n", us(p->rtt->min),
			us(rf_hist_percentile(p->rtt, 50)), us(rf_hist_percentile(p->rtt, 90)),
			us(rf_hist_percentile(p->rtt, 99)), us(rf_hist_percentile(p->rtt, 99.9)),
			us(p->rtt->max), p->steal_pct);
}

void rf_lg_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void rf_lg_json(FILE *f, const struct rf_lg_point *p)
{
	const struct rf_hist *h = p->rtt;
	fputs("{\"backend\":", f);
	rf_lg_json_string(f, p->backend);
	fprintf(f, ",\"offered\":%.0f,\"achieved\":%.1f,\"received\":%.1f,\"loss\":%.6f,"
		   "\"sent_msgs\":%llu,\"received_msgs\":%llu,\"reordered\":%llu,\"duplicates\":%llu,"
		   "\"corrupt\":%llu,",
		p->offered_rate, achieved(p), rate(p->received, p->seconds),
		rf_lg_point_loss(p), (unsigned long long)p->sent, (unsigned long long)p->received,
		(unsigned long long)p->reordered, (unsigned long long)p->duplicates,
		(unsigned long long)p->corrupt);
	fprintf(f, "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,"
		   "\"p999_us\":%.2f,\"max_us\":%.2f,\"mean_us\":%.2f,\"late_max_us\":%.2f,",
		us(h->count ? h->min : 0), us(rf_hist_percentile(h, 50)),
		us(rf_hist_percentile(h, 90)), us(rf_hist_percentile(h, 99)),
		us(rf_hist_percentile(h, 99.9)), us(h->max), rf_hist_mean(h) / 1000.0,
		us(p->late_max_ns));
	fprintf(f, "\"saturated\":%s,\"seconds\":%.3f,\"steal_pct\":%.2f,\"load1\":%.2f,"
		   "\"cpu_busy_pct\":[",
		rf_lg_saturated(p->offered, p->sent, p->received) ? "true" : "false", p->seconds,
		p->steal_pct, p->load1);
	for (unsigned i = 0; i < p->n_cpus; i++)
		fprintf(f, "%s%.1f", i ? "," : "", p->cpu_busy_pct[i]);
	fputs("]}\n", f);
	fflush(f);
}

int rf_lg_parse_rate(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		v *= 1e3;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		v *= 1e6;
		end++;
	}
	if (*end != '\0' || !(v >= 1.0) || v > 1e8)
		return -EINVAL;
	*out = v;
	return 0;
}
