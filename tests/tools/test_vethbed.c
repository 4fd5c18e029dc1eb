/*
 * tests/tools/test_vethbed.c: the parts of the tools that talk to real devices: the ethtool
 * statistics ioctl (loopback has none; veth has peer_ifindex, which must name its peer) and
 * the UDP flood over the two-namespace veth bed with RPS, where every packet sent must be
 * found again as read, dropped at the socket, or dropped at a backlog. Needs root for the
 * bed; skips with the reason otherwise.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ethtool_stats.h"
#include "procnet.h"
#include "udpflood.h"
#include "vethbed.h"

static struct rf_vethbed bed;

static void bed_up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: creates network namespaces and a veth pair");
	int rc = rf_vethbed_create(&bed, "t");
	if (rc)
		cr_skip_test("cannot create the veth bed (%s): is iproute2 installed?", strerror(-rc));
}

static void bed_down(void)
{
	rf_vethbed_destroy(&bed);
}

Test(ethtool, loopback_has_no_driver_stats)
{
	struct rf_ethtool_stats st;
	int rc = rf_ethtool_stats_read("lo", &st);
	cr_assert(rc == 0 || rc == -EOPNOTSUPP, "rc %d", rc);
	cr_assert_eq(st.n, 0);
	rf_ethtool_stats_free(&st);
}

Test(ethtool, missing_interface_is_enodev)
{
	struct rf_ethtool_stats st;
	cr_assert_eq(rf_ethtool_stats_read("rf-no-such-if", &st), -ENODEV);
	cr_assert_eq(rf_ethtool_stats_read("a-name-longer-than-ifnamsiz", &st), -ENODEV);
}

Test(ethtool, veth_peer_ifindex_names_the_peer, .init = bed_up, .fini = bed_down)
{
	cr_assert_eq(rf_vethbed_enter(&bed, 1), 0);
	unsigned peer = if_nametoindex(bed.dev[1]);
	cr_assert_neq(peer, 0);
	cr_assert_eq(rf_vethbed_enter(&bed, 0), 0);
	struct rf_ethtool_stats st;
	cr_assert_eq(rf_ethtool_stats_read(bed.dev[0], &st), 0);
	cr_assert_gt(st.n, 0, "veth has driver statistics");
	int i = rf_ethtool_stats_find(&st, "peer_ifindex");
	cr_assert_geq(i, 0);
	cr_assert_eq(st.value[i], peer);
	rf_ethtool_stats_free(&st);
	cr_assert_eq(rf_vethbed_enter(&bed, -1), 0);
}

static uint64_t softnet_total(uint64_t (*pick)(const struct rf_softnet_cpu *))
{
	static struct rf_softnet s;
	cr_assert_eq(rf_softnet_read(&s), 0);
	uint64_t sum = 0;
	for (unsigned i = 0; i < s.n; i++)
		sum += pick(&s.cpu[i]);
	return sum;
}

static uint64_t pick_dropped(const struct rf_softnet_cpu *c)
{
	return c->dropped;
}

static uint64_t rx_ns_rcvbuf_errors(void)
{
	/* thread-self: the namespace of this thread, which setns() changed. */
	FILE *f = fopen("/proc/thread-self/net/snmp", "r");
	cr_assert_not_null(f);
	struct rf_udp_mib u;
	cr_assert_eq(rf_udp_mib_parse(f, &u), 0);
	fclose(f);
	return u.rcvbuf_errors;
}

Test(flood, veth_rps_accounts_for_every_packet, .init = bed_up, .fini = bed_down)
{
	unsigned ncpu = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	unsigned target = ncpu - 1, sender = 0;
	cr_assert_eq(rf_vethbed_set_rps(&bed, 1, target), 0);
	struct rf_flood fl;
	cr_assert_eq(rf_flood_open_veth(&fl, &bed), 0);

	/* One packet first, read back: ARP is resolved before the counted flood (packets waiting
	 * for ARP past the neighbour queue would vanish without a counter we read). */
	char buf[2048];
	cr_assert_eq(send(fl.tx_fd, "x", 1, 0), 1);
	ssize_t r = -1;
	for (int tries = 0; tries < 200 && r < 0; tries++) {
		r = recv(fl.rx_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	cr_assert_eq(r, 1, "the first datagram crossed the veth pair");

	static struct rf_softnet before;
	cr_assert_eq(rf_softnet_read(&before), 0);
	uint64_t dropped0 = softnet_total(pick_dropped);
	cr_assert_eq(rf_vethbed_enter(&bed, 1), 0);
	uint64_t rcvbuf0 = rx_ns_rcvbuf_errors();

	const uint64_t n = 20000;
	cr_assert_eq(rf_flood_start(&fl, sender, n, 10.0), 0);
	uint64_t sent = rf_flood_wait(&fl);
	cr_assert_eq(sent, n, "the packet bound stopped the flood");

	/* Read what reached the socket until read + socket drops + backlog drops cover what was
	 * sent (packets still in a backlog arrive a little later; bounded wait). Backlog drops
	 * are per CPU, not per device, so other traffic on this machine may add to them: they
	 * bound from above only. */
	uint64_t got = 0, rcvbuf = 0, dropped = 0;
	for (int tries = 0; tries < 200; tries++) {
		while (recv(fl.rx_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			got++;
		rcvbuf = rx_ns_rcvbuf_errors() - rcvbuf0;
		dropped = softnet_total(pick_dropped) - dropped0;
		if (got + rcvbuf + dropped >= sent)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
	cr_assert_leq(got + rcvbuf, sent, "nothing arrives twice");
	cr_assert_geq(got + rcvbuf + dropped, sent, "sent %llu = read %llu + rcvbuf %llu + backlog "
		      "%llu", (unsigned long long)sent, (unsigned long long)got,
		      (unsigned long long)rcvbuf, (unsigned long long)dropped);
	cr_assert_gt(got, 0);

	/* RPS put the receive work on the target CPU. */
	static struct rf_softnet after;
	cr_assert_eq(rf_softnet_read(&after), 0);
	const struct rf_softnet_cpu *a = rf_softnet_find(&before, target);
	const struct rf_softnet_cpu *b = rf_softnet_find(&after, target);
	cr_assert(a && b);
	cr_assert_geq(rf_counter_delta(a->processed, b->processed, 32), got,
		      "every delivered packet was processed on CPU %u", target);
	if (target != sender)
		cr_assert_gt(rf_counter_delta(a->received_rps, b->received_rps, 32), 0);
	cr_assert_eq(rf_vethbed_enter(&bed, -1), 0);
	rf_flood_close(&fl);
}
