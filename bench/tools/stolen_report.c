/*
 * bench/tools/stolen_report.c: what ringflow-stolen prints: the idle/load table (stdout, or
 * stderr with --json) and one JSON line per figure in the bench/impl/case/value/unit style of
 * ringflow-bench.
 */
#include "stolen.h"

void print_json_line(const struct opts *o, const char *impl, const char *c, double v,
		      const char *unit)
{
	printf("{\"bench\":\"stolen\",\"impl\":\"%s\",\"case\":\"%s\",\"value\":%.6g,"
	       "\"unit\":\"%s\",\"cpu\":%u,\"load_cpu\":%u}\n",
	       impl, c, v, unit, o->cpu, o->load_cpu);
}

void print_json(const struct opts *o, const char *impl, const struct phase *p,
		       const char *ph, uint64_t sent)
{
	char c[64];
#define J(name, val, unit)                                  \
	do {                                                \
		snprintf(c, sizeof(c), "%s_%s", ph, name);  \
		print_json_line(o, impl, c, (double)(val), unit); \
	} while (0)
	J("wall", p->wall, "s");
	J("user", p->user, "s");
	J("sys", p->sys, "s");
	J("softirq_share", p->softirq_pct, "%");
	J("irq_share", p->irq_pct, "%");
	J("steal_share", p->steal_pct, "%");
	J("ksoftirqd", p->ksoftirqd_s, "s");
	J("other_tasks", p->others_s, "s");
	J("net_rx", p->net_rx, "softirqs");
	J("net_tx", p->net_tx, "softirqs");
	J("softnet_processed", p->processed, "packets");
	J("softnet_dropped", p->dropped, "packets");
	J("time_squeeze", p->squeezed, "count");
	J("received_rps", p->received_rps, "IPIs");
	J("net_rx_load_cpu", p->net_rx_load_cpu, "softirqs");
	if (sent)
		J("packets_sent", sent, "packets");
#undef J
}

void print_table(const struct opts *o, const struct phase *idle, const struct phase *ld,
			uint64_t sent, FILE *out)
{
	unsigned c = o->cpu;
	fprintf(out, "\n%-34s %12s %12s\n", "", "idle", "under load");
#define ROW_F(label, field) \
	fprintf(out, "%-34s %12.3f %12.3f\n", label, idle->field, ld->field)
#define ROW_P(label, field) \
	fprintf(out, "%-34s %11.1f%% %11.1f%%\n", label, idle->field, ld->field)
#define ROW_U(label, field)                                                      \
	fprintf(out, "%-34s %12llu %12llu\n", label, (unsigned long long)idle->field, \
		(unsigned long long)ld->field)
	char l[64];
	ROW_F("compute wall s", wall);
	ROW_F("compute user s (its thread)", user);
	ROW_F("compute sys s (its thread)", sys);
	fprintf(out, "%-34s %11.1f%% %11.1f%%\n", "sys share of its cpu time",
		100 * idle->sys / (idle->user + idle->sys + 1e-9),
		100 * ld->sys / (ld->user + ld->sys + 1e-9));
	snprintf(l, sizeof(l), "ksoftirqd/%u cpu s", c);
	ROW_F(l, ksoftirqd_s);
	snprintf(l, sizeof(l), "other tasks' work on CPU%u s (est.)", c);
	ROW_F(l, others_s);
#define LBL(fmt) (snprintf(l, sizeof(l), fmt, c), l)
	ROW_P(LBL("CPU%u softirq (/proc/stat)"), softirq_pct);
	ROW_P(LBL("CPU%u irq"), irq_pct);
	ROW_P(LBL("CPU%u steal"), steal_pct);
	ROW_P(LBL("CPU%u idle"), idle_pct);
	ROW_U(LBL("CPU%u NET_RX softirqs"), net_rx);
	ROW_U(LBL("CPU%u NET_TX softirqs"), net_tx);
	ROW_U(LBL("CPU%u softnet processed"), processed);
	ROW_U(LBL("CPU%u softnet dropped"), dropped);
	ROW_U(LBL("CPU%u softnet time_squeeze"), squeezed);
	ROW_U(LBL("CPU%u softnet received_rps"), received_rps);
	snprintf(l, sizeof(l), "CPU%u (load CPU) NET_RX softirqs", o->load_cpu);
	ROW_U(l, net_rx_load_cpu);
	fprintf(out, "%-34s %12s %11.2fx\n", "slowdown (wall under load / idle)", "-",
		ld->wall / (idle->wall + 1e-9));
	fprintf(out, "%-34s %12s %12llu\n", "packets sent by the load", "-",
		(unsigned long long)sent);
	fprintf(out, "%-26s %20llx %20llx\n", "checksum", (unsigned long long)idle->checksum,
		(unsigned long long)ld->checksum);
#undef ROW_F
#undef ROW_P
#undef ROW_U
#undef LBL
}

