/*
 * bench/tools/procnet.c: line-by-line parsers for /proc/net/softnet_stat, /proc/softirqs,
 * /proc/stat, /proc/net/dev and /proc/net/snmp (see procnet.h for what each counter means).
 *
 * Each parser reads whole lines with getline and splits them itself, so a longer line or an
 * extra column in a newer kernel never shifts the values it keeps: softnet_stat is read by
 * column position and count, the snmp block by column name.
 */
#include "procnet.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64

/* Splits `line` in place at white space; returns the number of fields (at most `max`). */
static unsigned split_fields(char *line, char **field, unsigned max)
{
	unsigned n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(line, " \t\n", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t\n", &save))
		field[n++] = tok;
	return n;
}

static bool parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (errno || end == s || *end != '\0' || *s == '-')
		return false;
	*v = x;
	return true;
}

/* ---- /proc/net/softnet_stat ---- */

int rf_softnet_parse(FILE *f, struct rf_softnet *out)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	while (getline(&line, &cap, f) > 0) {
		char *fld[MAX_FIELDS];
		unsigned nf = split_fields(line, fld, MAX_FIELDS);
		if (nf == 0)
			continue;
		/* 2.6.x printed 9 or 10 columns; anything shorter is not this file. */
		if (nf < 9 || (out->n > 0 && nf != out->columns)) {
			rc = -EINVAL;
			break;
		}
		if (out->n == RF_PN_MAX_CPUS) {
			rc = -E2BIG;
			break;
		}
		uint64_t v[MAX_FIELDS];
		for (unsigned i = 0; i < nf; i++)
			if (!parse_u64(fld[i], 16, &v[i])) {
				rc = -EINVAL;
				goto done;
			}
		struct rf_softnet_cpu *c = &out->cpu[out->n];
		c->processed = v[0];
		c->dropped = v[1];
		c->time_squeeze = v[2];
		c->received_rps = nf > 9 ? v[9] : 0;
		c->flow_limit = nf > 10 ? v[10] : 0;
		c->backlog = nf > 11 ? v[11] : 0;
		/* Offline CPUs have no row, so before 5.10 (no CPU column) the row number is only
		 * the CPU id when all CPUs are online. */
		c->cpu = nf > 12 ? (unsigned)v[12] : out->n;
		out->columns = nf;
		out->n++;
	}
done:
	free(line);
	if (rc == 0 && out->n == 0)
		rc = -EINVAL;
	return rc;
}

const struct rf_softnet_cpu *rf_softnet_find(const struct rf_softnet *s, unsigned cpu)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->cpu[i].cpu == cpu)
			return &s->cpu[i];
	return NULL;
}

/* ---- /proc/softirqs ---- */

int rf_softirqs_parse(FILE *f, struct rf_softirqs *out)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = -EINVAL;
	bool header = false, rx = false, tx = false;
	memset(out, 0, sizeof(*out));
	while (getline(&line, &cap, f) > 0) {
		char *fld[RF_PN_MAX_CPUS + 2];
		unsigned nf = split_fields(line, fld, RF_PN_MAX_CPUS + 2);
		if (nf == 0)
			continue;
		if (!header) {
			/* "CPU0 CPU1 ...": possible CPUs, one column each. */
			if (nf > RF_PN_MAX_CPUS) {
				rc = -E2BIG;
				goto done;
			}
			for (unsigned i = 0; i < nf; i++) {
				uint64_t id;
				if (strncmp(fld[i], "CPU", 3) || !parse_u64(fld[i] + 3, 10, &id))
					goto done;
				out->cpu[i] = (unsigned)id;
			}
			out->n = nf;
			header = true;
			continue;
		}
		uint64_t *dst = NULL;
		if (!strcmp(fld[0], "NET_RX:"))
			dst = out->net_rx, rx = true;
		else if (!strcmp(fld[0], "NET_TX:"))
			dst = out->net_tx, tx = true;
		if (!dst)
			continue;
		if (nf != out->n + 1)
			goto done;
		for (unsigned i = 0; i < out->n; i++)
			if (!parse_u64(fld[i + 1], 10, &dst[i]))
				goto done;
	}
	if (header && rx && tx)
		rc = 0;
done:
	free(line);
	return rc;
}

int rf_softirqs_col(const struct rf_softirqs *s, unsigned cpu)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->cpu[i] == cpu)
			return (int)i;
	return -1;
}

/* ---- /proc/stat ---- */

static bool parse_cpu_line(char **fld, unsigned nf, struct rf_cpu_ticks *t)
{
	/* cpuN user nice system idle iowait irq softirq steal [guest guest_nice] */
	uint64_t v[8];
	if (nf < 9)
		return false;
	for (unsigned i = 0; i < 8; i++)
		if (!parse_u64(fld[i + 1], 10, &v[i]))
			return false;
	t->user = v[0];
	t->nice = v[1];
	t->system = v[2];
	t->idle = v[3];
	t->iowait = v[4];
	t->irq = v[5];
	t->softirq = v[6];
	t->steal = v[7];
	return true;
}

int rf_procstat_parse(FILE *f, struct rf_procstat *out)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = -EINVAL;
	bool have_all = false;
	memset(out, 0, sizeof(*out));
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "cpu", 3))
			continue;
		char *fld[16];
		unsigned nf = split_fields(line, fld, 16);
		if (nf == 0)
			goto done;
		if (!strcmp(fld[0], "cpu")) {
			if (!parse_cpu_line(fld, nf, &out->all))
				goto done;
			out->all.cpu = -1;
			have_all = true;
			continue;
		}
		uint64_t id;
		if (!parse_u64(fld[0] + 3, 10, &id))
			goto done;
		if (out->n == RF_PN_MAX_CPUS) {
			rc = -E2BIG;
			goto done;
		}
		struct rf_cpu_ticks *t = &out->cpu[out->n];
		if (!parse_cpu_line(fld, nf, t))
			goto done;
		t->cpu = (int)id;
		out->n++;
	}
	if (have_all && out->n > 0)
		rc = 0;
done:
	free(line);
	return rc;
}

const struct rf_cpu_ticks *rf_procstat_find(const struct rf_procstat *s, unsigned cpu)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->cpu[i].cpu == (int)cpu)
			return &s->cpu[i];
	return NULL;
}

uint64_t rf_cpu_ticks_total(const struct rf_cpu_ticks *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq +
	       t->steal;
}

/* ---- /proc/net/dev ---- */

int rf_netdev_parse(FILE *f, const char *ifname, struct rf_netdev *out)
{
	char *line = NULL;
	size_t cap = 0;
	int rc = -ENODEV;
	memset(out, 0, sizeof(*out));
	while (getline(&line, &cap, f) > 0) {
		/* "  name: rx... tx..."; the name is right-aligned and the first number may touch
		 * the colon ("ens3:19903170"), so split at the colon first. */
		char *colon = strchr(line, ':');
		if (!colon)
			continue; /* the two header lines have '|', not ':' */
		*colon = '\0';
		char *name = line;
		while (isspace((unsigned char)*name))
			name++;
		if (strcmp(name, ifname))
			continue;
		char *fld[MAX_FIELDS];
		unsigned nf = split_fields(colon + 1, fld, MAX_FIELDS);
		uint64_t v[16];
		rc = -EINVAL;
		if (nf != 16)
			break;
		for (unsigned i = 0; i < 16; i++)
			if (!parse_u64(fld[i], 10, &v[i]))
				goto done;
		*out = (struct rf_netdev){
			.rx_bytes = v[0], .rx_packets = v[1], .rx_errs = v[2], .rx_drop = v[3],
			.rx_fifo = v[4], .rx_frame = v[5], .rx_compressed = v[6],
			.rx_multicast = v[7], .tx_bytes = v[8], .tx_packets = v[9],
			.tx_errs = v[10], .tx_drop = v[11], .tx_fifo = v[12], .tx_colls = v[13],
			.tx_carrier = v[14], .tx_compressed = v[15]};
		rc = 0;
		break;
	}
done:
	free(line);
	return rc;
}

/* ---- /proc/net/snmp ---- */

int rf_udp_mib_parse(FILE *f, struct rf_udp_mib *out)
{
	char *line = NULL, *names = NULL;
	size_t cap = 0;
	int rc = -EINVAL;
	memset(out, 0, sizeof(*out));
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "Udp: ", 5))
			continue;
		if (!names) { /* the first Udp: line names the columns, the second has values */
			names = strdup(line);
			if (!names) {
				rc = -ENOMEM;
				break;
			}
			continue;
		}
		char *nf_[MAX_FIELDS], *vf[MAX_FIELDS];
		unsigned nn = split_fields(names, nf_, MAX_FIELDS);
		unsigned nv = split_fields(line, vf, MAX_FIELDS);
		if (nn != nv || nn < 2)
			break;
		static const struct {
			const char *name;
			size_t off;
		} cols[] = {
			{"InDatagrams", offsetof(struct rf_udp_mib, in_datagrams)},
			{"NoPorts", offsetof(struct rf_udp_mib, no_ports)},
			{"InErrors", offsetof(struct rf_udp_mib, in_errors)},
			{"OutDatagrams", offsetof(struct rf_udp_mib, out_datagrams)},
			{"RcvbufErrors", offsetof(struct rf_udp_mib, rcvbuf_errors)},
			{"SndbufErrors", offsetof(struct rf_udp_mib, sndbuf_errors)},
			{"InCsumErrors", offsetof(struct rf_udp_mib, in_csum_errors)},
			{"MemErrors", offsetof(struct rf_udp_mib, mem_errors)},
		};
		rc = 0;
		for (unsigned i = 1; i < nn && rc == 0; i++)
			for (unsigned c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
				if (!strcmp(nf_[i], cols[c].name)) {
					uint64_t *dst = (uint64_t *)((char *)out + cols[c].off);
					if (!parse_u64(vf[i], 10, dst))
						rc = -EINVAL;
				}
		break;
	}
	free(names);
	free(line);
	return rc;
}

/* ---- arithmetic ---- */

uint64_t rf_counter_delta(uint64_t prev, uint64_t cur, unsigned bits)
{
	if (bits >= 64)
		return cur - prev; /* unsigned arithmetic wraps modulo 2^64 */
	uint64_t mask = (UINT64_C(1) << bits) - 1;
	return (cur - prev) & mask;
}

uint64_t rf_counter_delta_auto(uint64_t prev, uint64_t cur)
{
	if (cur >= prev)
		return cur - prev;
	if (prev <= UINT32_MAX)
		return rf_counter_delta(prev, cur, 32);
	return cur;
}

double rf_rate(uint64_t delta, double seconds)
{
	return seconds > 0 ? (double)delta / seconds : 0.0;
}

/* ---- the live files ---- */

#define READ_LIVE(path, call)                         \
	do {                                          \
		FILE *f_ = fopen(path, "r");          \
		if (!f_)                              \
			return -errno;                \
		int rc_ = (call);                     \
		fclose(f_);                           \
		return rc_;                           \
	} while (0)

int rf_softnet_read(struct rf_softnet *out)
{
	READ_LIVE("/proc/net/softnet_stat", rf_softnet_parse(f_, out));
}

int rf_softirqs_read(struct rf_softirqs *out)
{
	READ_LIVE("/proc/softirqs", rf_softirqs_parse(f_, out));
}

int rf_procstat_read(struct rf_procstat *out)
{
	READ_LIVE("/proc/stat", rf_procstat_parse(f_, out));
}

int rf_netdev_read(const char *ifname, struct rf_netdev *out)
{
	READ_LIVE("/proc/net/dev", rf_netdev_parse(f_, ifname, out));
}

int rf_udp_mib_read(struct rf_udp_mib *out)
{
	READ_LIVE("/proc/net/snmp", rf_udp_mib_parse(f_, out));
}
