/*
 * apps/echo/lg_mreport.c: naming the modes and printing a stream / rr / crr point as a table
 * row or one JSON line (lg_modes.h). No I/O driver code: tests link it alone.
 *
 * Throughput counts message bytes (header + payload, without the tcp driver's 2-byte length),
 * as iperf3 counts what the application wrote. A UDP stream point is saturated by the echo
 * report's rule (lg_report.h) applied to what the sink counted: more than 0.1 % lost.
 */
#include <string.h>
#include <sys/resource.h>

#include "lg_modes.h"

static const char *const names[] = {"echo", "stream", "rr", "crr"};

int rf_lg_mode_parse(const char *s)
{
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *rf_lg_mode_name(enum rf_lg_mode m)
{
	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

double rf_lg_proc_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void rf_lg_mpoint_cpu(struct rf_lg_mpoint *p, const struct rf_lg_cpu_sample *a,
		      const struct rf_lg_cpu_sample *b, double proc_cpu_s)
{
	struct rf_lg_point tmp = {0};
	rf_lg_point_cpu(&tmp, a, b);
	p->steal_pct = tmp.steal_pct;
	p->load1 = tmp.load1;
	p->n_cpus = tmp.n_cpus;
	memcpy(p->cpu_busy_pct, tmp.cpu_busy_pct, sizeof(p->cpu_busy_pct));
	p->proc_cpu_pct = p->seconds > 0 ? 100.0 * proc_cpu_s / p->seconds : 0;
}

double rf_lg_mpoint_loss(const struct rf_lg_mpoint *p)
{
	if (p->sent_msgs == 0 || p->recv_msgs >= p->sent_msgs)
		return 0.0;
	return (double)(p->sent_msgs - p->recv_msgs) / (double)p->sent_msgs;
}

static double per_s(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

static bool stream_saturated(const struct rf_lg_mpoint *p)
{
	return p->reported && rf_lg_saturated(p->sent_msgs, p->sent_msgs, p->recv_msgs);
}

/* stream: true when the sink counted exactly the messages, bytes and checksum sent (JSON
 * "checksum_match"). */
static bool stream_intact(const struct rf_lg_mpoint *p)
{
	return p->reported && p->recv_msgs == p->sent_msgs && p->recv_bytes == p->sent_bytes &&
	       p->recv_csum == p->sent_csum && p->corrupt == 0;
}

void rf_lg_mtable_header(FILE *f, enum rf_lg_mode m)
{
	switch (m) {
	case RF_LG_MODE_STREAM:
		fprintf(f, "%-18s %6s %9s %10s %10s %10s %8s %8s %7s  %s\n", "backend", "size",
			"seconds", "sent_Gb/s", "recv_Gb/s", "recv_msg/s", "loss%", "cpu_cli%",
			"steal%", "check");
		break;
	case RF_LG_MODE_RR:
	case RF_LG_MODE_CRR:
		fprintf(f, "%-18s %6s %5s %5s %10s %8s %8s %8s %8s %9s %9s %8s %7s\n", "backend",
			"size", "conns", "outst", m == RF_LG_MODE_RR ? "trans/s" : "conns/s", "lost",
			"min_us", "p50_us", "p99_us", "p99.9_us", "max_us", "cpu_cli%", "steal%");
		break;
	default:
		break;
	}
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

void rf_lg_mtable_row(FILE *f, const struct rf_lg_mpoint *p)
{
	if (p->mode == RF_LG_MODE_STREAM) {
		fprintf(f, "%-18s %6u %9.2f %10.3f %10.3f %10.0f %8.3f %8.1f %7.1f  %s\n",
			p->backend, p->size, p->seconds, 8e-9 * per_s(p->sent_bytes, p->seconds),
			8e-9 * per_s(p->recv_bytes, p->seconds), per_s(p->recv_msgs, p->seconds),
			100.0 * rf_lg_mpoint_loss(p), p->proc_cpu_pct, p->steal_pct,
			!p->reported            ? "NO REPORT from the sink"
			: stream_intact(p)      ? "bytes and checksum match"
			: stream_saturated(p)   ? "SATURATED (loss > 0.1%)"
			: p->corrupt            ? "CORRUPT messages at the sink"
						: "loss (sink count < sent)");
		return;
	}
	const struct rf_hist *h = p->lat;
	uint64_t failed = p->mode == RF_LG_MODE_RR ? p->lost : p->errors;
	fprintf(f, "%-18s %6u %5u %5u %10.0f %8llu %8.1f %8.1f %8.1f %9.1f %9.1f %8.1f %7.1f\n",
		p->backend, p->size, p->conns, p->outstanding, per_s(p->recv_msgs, p->seconds),
		(unsigned long long)failed, us(h->count ? h->min : 0), us(rf_hist_percentile(h, 50)),
		us(rf_hist_percentile(h, 99)), us(rf_hist_percentile(h, 99.9)), us(h->max),
		p->proc_cpu_pct, p->steal_pct);
}

void rf_lg_mjson(FILE *f, const struct rf_lg_mpoint *p)
{
	fprintf(f, "{\"mode\":\"%s\",\"backend\":", rf_lg_mode_name(p->mode));
	rf_lg_json_string(f, p->backend);
	fprintf(f, ",\"size\":%u,\"seconds\":%.3f,\"sent_msgs\":%llu,\"sent_bytes\":%llu,"
		   "\"received_msgs\":%llu,\"received_bytes\":%llu,\"corrupt\":%llu,",
		p->size, p->seconds, (unsigned long long)p->sent_msgs,
		(unsigned long long)p->sent_bytes, (unsigned long long)p->recv_msgs,
		(unsigned long long)p->recv_bytes, (unsigned long long)p->corrupt);
	if (p->mode == RF_LG_MODE_STREAM) {
		fprintf(f, "\"gbit_s\":%.4f,\"sent_gbit_s\":%.4f,\"msgs_s\":%.1f,\"loss\":%.6f,"
			   "\"sink_reported\":%s,\"checksum_match\":%s,\"saturated\":%s,",
			8e-9 * per_s(p->recv_bytes, p->seconds),
			8e-9 * per_s(p->sent_bytes, p->seconds), per_s(p->recv_msgs, p->seconds),
			rf_lg_mpoint_loss(p), p->reported ? "true" : "false",
			stream_intact(p) ? "true" : "false",
			stream_saturated(p) ? "true" : "false");
	} else {
		const struct rf_hist *h = p->lat;
		fprintf(f, "\"conns\":%u,\"outstanding\":%u,\"%s\":%.1f,\"lost\":%llu,"
			   "\"errors\":%llu,\"duplicates\":%llu,\"total_sent\":%llu,"
			   "\"total_received\":%llu,\"conns_made\":%llu,",
			p->conns, p->outstanding, p->mode == RF_LG_MODE_RR ? "trans_s" : "conn_s",
			per_s(p->recv_msgs, p->seconds), (unsigned long long)p->lost,
			(unsigned long long)p->errors, (unsigned long long)p->duplicates,
			(unsigned long long)p->total_sent, (unsigned long long)p->total_recv,
			(unsigned long long)p->conns_made);
		fprintf(f, "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,"
			   "\"p999_us\":%.2f,\"max_us\":%.2f,\"mean_us\":%.2f,",
			us(h->count ? h->min : 0), us(rf_hist_percentile(h, 50)),
			us(rf_hist_percentile(h, 90)), us(rf_hist_percentile(h, 99)),
			us(rf_hist_percentile(h, 99.9)), us(h->max), rf_hist_mean(h) / 1000.0);
	}
	fprintf(f, "\"cpu_client_pct\":%.1f,\"steal_pct\":%.2f,\"load1\":%.2f,\"cpu_busy_pct\":[",
		p->proc_cpu_pct, p->steal_pct, p->load1);
	for (unsigned i = 0; i < p->n_cpus; i++)
		fprintf(f, "%s%.1f", i ? "," : "", p->cpu_busy_pct[i]);
	fputs("]}\n", f);
	fflush(f);
}
