/*
 * tests/tools/test_procnet.c: the /proc parsers of bench/tools on recorded samples (exact
 * values, read off tests/tools/data/ by eye), on malformed input, and on this machine's live
 * files (sane values: the CPU count matches the online CPUs, counters hang together).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procnet.h"

static FILE *data(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", RF_TOOLS_DATA, name);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	return f;
}

static FILE *text(const char *s)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");
	cr_assert_not_null(f);
	return f;
}

static unsigned online_cpus(void)
{
	return (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- softnet_stat ---- */

Test(softnet, parses_this_kernels_15_columns)
{
	static struct rf_softnet s;
	FILE *f = data("softnet_stat-6.18");
	cr_assert_eq(rf_softnet_parse(f, &s), 0);
	fclose(f);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.columns, 15);
	cr_assert_eq(s.cpu[0].cpu, 0);
	cr_assert_eq(s.cpu[0].processed, 336902);
	cr_assert_eq(s.cpu[0].dropped, 0);
	cr_assert_eq(s.cpu[0].received_rps, 0);
	cr_assert_eq(s.cpu[1].cpu, 1);
	cr_assert_eq(s.cpu[1].processed, 80873);
	cr_assert_eq(s.cpu[1].time_squeeze, 0);
	cr_assert_eq(s.cpu[1].received_rps, 2604);
	cr_assert_eq(s.cpu[1].backlog, 0);
	cr_assert_eq(rf_softnet_find(&s, 1), &s.cpu[1]);
	cr_assert_null(rf_softnet_find(&s, 2));
}

Test(softnet, parses_old_11_columns_without_cpu_id)
{
	static struct rf_softnet s;
	FILE *f = data("softnet_stat-4.x");
	cr_assert_eq(rf_softnet_parse(f, &s), 0);
	fclose(f);
	cr_assert_eq(s.n, 4);
	cr_assert_eq(s.columns, 11);
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(s.cpu[i].cpu, i, "no CPU column: the row is the CPU");
	cr_assert_eq(s.cpu[0].processed, 462309890);
	cr_assert_eq(s.cpu[0].time_squeeze, 300);
	cr_assert_eq(s.cpu[1].processed, 267389457);
	cr_assert_eq(s.cpu[1].dropped, 7);
	cr_assert_eq(s.cpu[1].time_squeeze, 3);
	cr_assert_eq(s.cpu[1].received_rps, 48879);
	cr_assert_eq(s.cpu[2].dropped, 4294967294u);
	cr_assert_eq(s.cpu[2].flow_limit, 2);
	cr_assert_eq(s.cpu[3].processed, 2147483647);
	cr_assert_eq(s.cpu[3].backlog, 0, "no backlog column before 5.10");
}

Test(softnet, uses_the_cpu_column_when_a_cpu_is_offline)
{
	/* 5.10+ with CPU 1 offline: rows are CPUs 0 and 2. */
	static struct rf_softnet s;
	FILE *f = text("00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		       "00000000 00000000 00000000 00000000 00000000\n"
		       "00000020 00000001 00000000 00000000 00000000 00000000 00000000 00000000 "
		       "00000000 00000000 00000000 00000005 00000002\n");
	cr_assert_eq(rf_softnet_parse(f, &s), 0);
	fclose(f);
	cr_assert_eq(s.columns, 13);
	cr_assert_eq(s.cpu[1].cpu, 2);
	cr_assert_eq(s.cpu[1].processed, 32);
	cr_assert_eq(s.cpu[1].backlog, 5);
	cr_assert_null(rf_softnet_find(&s, 1));
}

Test(softnet, rejects_ragged_rows_and_garbage)
{
	static struct rf_softnet s;
	FILE *f = text("00000010 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		       "00000000 00000000 00000000\n"
		       "00000010 00000000 00000000\n");
	cr_assert_eq(rf_softnet_parse(f, &s), -EINVAL);
	fclose(f);
	f = text("0000zz10 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
		 "00000000 00000000 00000000\n");
	cr_assert_eq(rf_softnet_parse(f, &s), -EINVAL);
	fclose(f);
	f = text("");
	cr_assert_eq(rf_softnet_parse(f, &s), -EINVAL);
	fclose(f);
}

Test(softnet, live_file_has_one_row_per_online_cpu)
{
	static struct rf_softnet s;
	cr_assert_eq(rf_softnet_read(&s), 0);
	cr_assert_eq(s.n, online_cpus());
	cr_assert_geq(s.columns, 9);
	for (unsigned i = 0; i < s.n; i++) {
		cr_assert_lt(s.cpu[i].cpu, (unsigned)sysconf(_SC_NPROCESSORS_CONF));
		if (i > 0)
			cr_assert_gt(s.cpu[i].cpu, s.cpu[i - 1].cpu);
		cr_assert_leq(s.cpu[i].dropped, UINT32_MAX, "32-bit counters");
	}
}

/* ---- softirqs ---- */

Test(softirqs, parses_sample)
{
	static struct rf_softirqs s;
	FILE *f = data("softirqs-6.18");
	cr_assert_eq(rf_softirqs_parse(f, &s), 0);
	fclose(f);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.cpu[1], 1);
	cr_assert_eq(s.net_rx[0], 339856);
	cr_assert_eq(s.net_rx[1], 3271);
	cr_assert_eq(s.net_tx[0], 3);
	cr_assert_eq(s.net_tx[1], 4);
	cr_assert_eq(rf_softirqs_col(&s, 1), 1);
	cr_assert_eq(rf_softirqs_col(&s, 7), -1);
}

Test(softirqs, rejects_missing_rows)
{
	static struct rf_softirqs s;
	FILE *f = text("   CPU0 CPU1\n  TIMER: 1 2\n  NET_RX: 3 4\n");
	cr_assert_eq(rf_softirqs_parse(f, &s), -EINVAL, "no NET_TX row");
	fclose(f);
	f = text("   CPU0 CPU1\n  NET_TX: 1 2\n  NET_RX: 3\n");
	cr_assert_eq(rf_softirqs_parse(f, &s), -EINVAL, "short NET_RX row");
	fclose(f);
}

Test(softirqs, live_file_covers_every_online_cpu)
{
	static struct rf_softirqs s;
	cr_assert_eq(rf_softirqs_read(&s), 0);
	cr_assert_geq(s.n, online_cpus(), "one column per possible CPU");
	cpu_set_t set;
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cr_assert_geq(rf_softirqs_col(&s, c), 0, "CPU %u has a column", c);
}

/* ---- /proc/stat ---- */

Test(procstat, parses_sample)
{
	static struct rf_procstat s;
	FILE *f = data("stat-6.18");
	cr_assert_eq(rf_procstat_parse(f, &s), 0);
	fclose(f);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(s.all.cpu, -1);
	cr_assert_eq(s.all.user, 35646);
	cr_assert_eq(s.all.idle, 280630);
	cr_assert_eq(s.all.softirq, 104);
	cr_assert_eq(s.all.steal, 22);
	const struct rf_cpu_ticks *c1 = rf_procstat_find(&s, 1);
	cr_assert_not_null(c1);
	cr_assert_eq(c1->user, 17669);
	cr_assert_eq(c1->system, 3453);
	cr_assert_eq(c1->iowait, 504);
	cr_assert_eq(c1->softirq, 78);
	cr_assert_eq(c1->steal, 13);
	cr_assert_eq(rf_cpu_ticks_total(c1), 17669 + 3453 + 139879 + 504 + 78 + 13);
	/* The per-CPU lines add up to the total line within rounding: the kernel converts each
	 * sum from nanoseconds to ticks on its own (here 25 + 78 = 103 against 104). */
	uint64_t sum = s.cpu[0].softirq + s.cpu[1].softirq;
	cr_assert(sum <= s.all.softirq && s.all.softirq <= sum + s.n, "%llu vs %llu",
		  (unsigned long long)sum, (unsigned long long)s.all.softirq);
}

Test(procstat, live_file_matches_online_cpus)
{
	static struct rf_procstat s;
	cr_assert_eq(rf_procstat_read(&s), 0);
	cr_assert_eq(s.n, online_cpus());
	uint64_t sum = 0;
	for (unsigned i = 0; i < s.n; i++) {
		cr_assert_gt(rf_cpu_ticks_total(&s.cpu[i]), 0);
		sum += rf_cpu_ticks_total(&s.cpu[i]);
	}
	cr_assert_gt(rf_cpu_ticks_total(&s.all), 0);
	cr_assert_gt(sum, 0);
}

/* ---- /proc/net/dev ---- */

Test(netdev, parses_sample_rows)
{
	struct rf_netdev d;
	FILE *f = data("netdev-6.18");
	cr_assert_eq(rf_netdev_parse(f, "ens3", &d), 0);
	fclose(f);
	cr_assert_eq(d.rx_bytes, 22633654);
	cr_assert_eq(d.rx_packets, 590);
	cr_assert_eq(d.tx_bytes, 33953);
	cr_assert_eq(d.tx_packets, 417);
	cr_assert_eq(d.rx_drop, 0);
	f = data("netdev-6.18");
	cr_assert_eq(rf_netdev_parse(f, "lo", &d), 0);
	fclose(f);
	cr_assert_eq(d.rx_packets, 336925);
	cr_assert_eq(d.tx_bytes, 30997699);
	f = data("netdev-6.18");
	cr_assert_eq(rf_netdev_parse(f, "eth9", &d), -ENODEV);
	fclose(f);
}

Test(netdev, reads_numbers_touching_the_colon)
{
	struct rf_netdev d;
	FILE *f = text("Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
		       "  eth1:4294967296 12 1 2 3 4 5 6 7008 14 9 10 11 12 13 14\n");
	cr_assert_eq(rf_netdev_parse(f, "eth1", &d), 0);
	fclose(f);
	cr_assert_eq(d.rx_bytes, 4294967296ULL);
	cr_assert_eq(d.rx_errs, 1);
	cr_assert_eq(d.rx_drop, 2);
	cr_assert_eq(d.rx_fifo, 3);
	cr_assert_eq(d.tx_bytes, 7008);
	cr_assert_eq(d.tx_drop, 10);
	cr_assert_eq(d.tx_compressed, 14);
}

Test(netdev, live_loopback_is_there)
{
	struct rf_netdev d;
	cr_assert_eq(rf_netdev_read("lo", &d), 0);
	cr_assert_geq(d.rx_bytes, d.rx_packets);
	cr_assert_eq(rf_netdev_read("rf-no-such-if", &d), -ENODEV);
}

/* ---- /proc/net/snmp ---- */

Test(snmp, parses_udp_block_by_name)
{
	struct rf_udp_mib u;
	FILE *f = data("snmp-6.18");
	cr_assert_eq(rf_udp_mib_parse(f, &u), 0);
	fclose(f);
	cr_assert_eq(u.in_datagrams, 29);
	cr_assert_eq(u.no_ports, 0);
	cr_assert_eq(u.in_errors, 336640);
	cr_assert_eq(u.out_datagrams, 336926);
	cr_assert_eq(u.rcvbuf_errors, 336640);
	cr_assert_eq(u.sndbuf_errors, 0);
	cr_assert_eq(u.mem_errors, 0);
	/* The UdpLite: block that follows has the same names and all zeros: the exact values
	 * above show it was not taken for Udp:. */
	cr_assert_leq(u.rcvbuf_errors, u.in_errors, "InErrors counts RcvbufErrors too");
}

Test(snmp, old_kernel_without_newer_columns)
{
	/* 2.6.32 had only the first six columns, in a different order of appearance. */
	struct rf_udp_mib u;
	FILE *f = text("Ip: Forwarding\nIp: 1\n"
		       "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
		       "Udp: 10 2 5 11 4 1\n");
	cr_assert_eq(rf_udp_mib_parse(f, &u), 0);
	fclose(f);
	cr_assert_eq(u.in_datagrams, 10);
	cr_assert_eq(u.no_ports, 2);
	cr_assert_eq(u.in_errors, 5);
	cr_assert_eq(u.rcvbuf_errors, 4);
	cr_assert_eq(u.sndbuf_errors, 1);
	cr_assert_eq(u.in_csum_errors, 0);
	f = text("Ip: Forwarding\nIp: 1\n");
	cr_assert_eq(rf_udp_mib_parse(f, &u), -EINVAL);
	fclose(f);
}

Test(snmp, live_file_has_udp)
{
	struct rf_udp_mib u;
	cr_assert_eq(rf_udp_mib_read(&u), 0);
}
