/*
 * tests/dpdk/test_dpdk_driver.c: the DPDK driver. net_ring loops a port's tx back to its
 * rx, so one device talks to itself: the first send becomes an ARP request for our own IP,
 * ringflow answers it, learns the MAC, and the numbered UDP messages then come back intact.
 * On the netns + veth bed (root): echo through net_af_packet and net_af_xdp for an ordinary
 * UDP client. After close: no EAL files left (/var/run/dpdk/rf<pid>), nothing attached.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "bypass_bed.h"

#define PORT 9000

static struct rf_pktbuf_pool *pool;

static void setup(void)
{
	pool = rf_pktbuf_pool_create("dpdk_test", 1024, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
}

static void teardown(void)
{
	bed_down();
	rf_pktbuf_pool_free(pool);
}

static bool eal_dir_left(void)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof(p), "/var/run/dpdk/rf%d", (int)getpid());
	return stat(p, &st) == 0;
}

TestSuite(dpdk, .init = setup, .fini = teardown, .timeout = 60);

Test(dpdk, ring_loopback_arp_then_udp_intact)
{
	char err[256] = "";
	struct rf_io_dev *dev = rf_io_open("dpdk:vdev=net_ring0,ip=10.9.9.2,port=9000", pool, err,
					   sizeof(err));
	cr_assert_not_null(dev, "open: %s", err);
	unsigned got = 0, i, tries = 0;
	for (i = 0; i < 100 && tries < 1000; tries++) {
		struct rf_pktbuf *b = rf_pktbuf_alloc(pool), *r[8];
		cr_assert_not_null(b);
		snprintf(rf_pktbuf_data(b), 32, "message %u", i);
		b->data_len = 32;
		b->peer.in.sin_family = AF_INET;
		inet_pton(AF_INET, "10.9.9.2", &b->peer.in.sin_addr);
		b->peer.in.sin_port = htons(PORT);
		b->peer_len = sizeof(struct sockaddr_in);
		if (rf_io_tx_burst(dev, 0, &b, 1) != 1)
			rf_pktbuf_free(b);
		/* A few rx rounds: ARP request -> our reply -> learnt, or the message itself. */
		for (int k = 0; k < 4; k++) {
			unsigned n = rf_io_rx_burst(dev, 0, r, 8);
			for (unsigned j = 0; j < n; j++) {
				char want[32];
				snprintf(want, sizeof(want), "message %u", i);
				cr_assert_eq(r[j]->data_len, 32);
				cr_assert_str_eq(rf_pktbuf_data(r[j]), want);
				cr_assert_eq(ntohs(r[j]->peer.in.sin_port), PORT);
				got++;
				i++;
			}
			rf_pktbuf_free_bulk(r, n);
		}
	}
	cr_assert_eq(got, 100, "only %u of 100 came back", got);
	rf_io_close(dev);
	cr_assert_not(eal_dir_left(), "EAL runtime files left in /var/run/dpdk");
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 1024, "app buffers leaked");
	/* The EAL stays up: another device opens and closes in the same process. */
	dev = rf_io_open("dpdk:vdev=net_ring1,ip=10.9.9.2,port=9000", pool, err, sizeof(err));
	cr_assert_not_null(dev, "second open: %s", err);
	rf_io_close(dev);
	cr_assert_not(eal_dir_left());
}

static int echo_until_client_done(struct rf_io_dev *dev, pid_t client)
{
	struct rf_pktbuf *b[32];
	double end = bed_now() + 20;
	int status = -1;
	while (bed_now() < end) {
		unsigned n = rf_io_rx_burst(dev, 0, b, 32), k = n ? rf_io_tx_burst(dev, 0, b, n) : 0;
		rf_pktbuf_free_bulk(b + k, n - k);
		if (waitpid(client, &status, WNOHANG) == client)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
	}
	kill(client, SIGKILL);
	waitpid(client, &status, 0);
	return -1;
}

static void echo_over_veth(const char *vdev)
{
	char err[256] = "", spec[256];
	if (geteuid() != 0)
		cr_skip_test("needs root: netns and veth");
	cr_assert_eq(bed_up(vdev[7] == 'x' ? 'X' : 'd'), 0);
	snprintf(spec, sizeof(spec), "dpdk:vdev=%s0,iface=%s,ip=%s,port=%d", vdev, bed.dev,
		 bed.ip_drv, PORT);
	struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(dev, "open: %s", err);
	pid_t c = bed_udp_client(PORT, 300, 64);
	int bad = echo_until_client_done(dev, c);
	cr_assert_eq(bad, 0, "%d bad or missing echoes over %s", bad, vdev);
	rf_io_close(dev);
	cr_assert_not(eal_dir_left(), "EAL runtime files left in /var/run/dpdk");
	cr_assert_not(bed_xdp_attached(bed.dev), "XDP program left attached");
}

Test(dpdk, af_packet_echo_over_veth)
{
	echo_over_veth("net_af_packet");
}

Test(dpdk, af_xdp_echo_over_veth)
{
	echo_over_veth("net_af_xdp");
}

Test(dpdk, no_capabilities_one_line)
{
	char err[256] = "", spec[256];
	int p[2];
	if (geteuid() != 0)
		cr_skip_test("needs root: netns and veth");
	cr_assert_eq(bed_up('d'), 0);
	snprintf(spec, sizeof(spec), "dpdk:vdev=net_af_packet0,iface=%s,ip=%s,port=%d", bed.dev,
		 bed.ip_drv, PORT);
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) { /* root without any capability: what an unprivileged user meets */
		struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
		struct __user_cap_data_struct d[2] = {0};
		if (syscall(SYS_capset, &h, d) != 0)
			_exit(100);
		struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
		if (dev)
			snprintf(err, sizeof(err), "opened");
		if (write(p[1], err, strlen(err)) < 0)
			_exit(101);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = 0;
	waitpid(pid, NULL, 0);
	cr_assert(strstr(err, "CAP_NET_RAW") != NULL, "got '%s'", err);
	cr_assert(strchr(err, '\n') == NULL, "not one line: %s", err);
}

static void expect_error(const char *spec, const char *needle)
{
	char err[256] = "";
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "opened '%s'", spec);
	cr_assert(strstr(err, needle) != NULL, "'%s': got '%s', wanted '%s'", spec, err, needle);
	cr_assert(strchr(err, '\n') == NULL, "not one line: %s", err);
}

Test(dpdk, bad_config_one_line)
{
	expect_error("dpdk:port=9000", "vdev= or dev= is required");
	expect_error("dpdk:vdev=net_ring0,dev=x,port=9000", "vdev= or dev= is required");
	expect_error("dpdk:dev=rf_no_such_port,ip=10.0.0.1,port=9000", "no such port in the EAL");
	expect_error("dpdk:vdev=net_foo0,port=9000", "not supported");
	expect_error("dpdk:vdev=net_af_packet0,port=9000", "needs iface=");
	expect_error("dpdk:vdev=net_af_packet0,iface=rf_no_such0,port=9000", "not found");
	expect_error("dpdk:vdev=net_ring0,port=9000", "give ip=");
	expect_error("dpdk:vdev=net_ring0,ip=10.0.0.1", "port= is required");
	expect_error("dpdk:vdev=net_ring0,ip=10.0.0.1,port=9000,colour=red", "colour");
	cr_assert_not(eal_dir_left());
}

/* The first open starts the EAL with ringflow's defaults without moving the calling thread:
 * its CPU affinity is what the app set. */
Test(dpdk, default_eal_keeps_the_thread_affinity)
{
	cpu_set_t before, after;
	char err[256] = "";
	cr_assert_eq(sched_getaffinity(0, sizeof(before), &before), 0);
	struct rf_io_dev *dev = rf_io_open("dpdk:vdev=net_ring0,ip=10.9.9.2,port=9000", pool, err,
					   sizeof(err));
	cr_assert_not_null(dev, "open: %s", err);
	cr_assert_eq(sched_getaffinity(0, sizeof(after), &after), 0);
	cr_assert(CPU_EQUAL(&before, &after), "rte_eal_init changed the thread's affinity");
	rf_io_close(dev);
	cr_assert_not(eal_dir_left());
}

/* The app's own EAL arguments through rf_io_driver_init (here a net_ring port made by the
 * EAL, opened with dev=); a second init is refused; fini ends the EAL for good. */
Test(dpdk, app_eal_arguments_and_dev_key)
{
	char prefix[64], err[256] = "";
	snprintf(prefix, sizeof(prefix), "--file-prefix=rfi%d", (int)getpid());
	char *argv[] = {"app", "--no-pci", "--no-huge", "-m", "128", "--no-shconf",
			"--no-telemetry", "--log-level=*:warning", prefix, "--vdev=net_ring7", NULL};
	cr_assert_eq(rf_io_driver_init("dpdk", 10, argv, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(rf_io_driver_init("dpdk", 10, argv, err, sizeof(err)), -EALREADY);
	cr_assert(strstr(err, "already") && !strchr(err, '\n'), "%s", err);
	cr_assert_eq(rf_io_driver_init("udp", 0, NULL, err, sizeof(err)), -ENOTSUP);
	struct rf_io_dev *dev = rf_io_open("dpdk:dev=net_ring7,frames=1", pool, err, sizeof(err));
	cr_assert_not_null(dev, "open dev=: %s", err);
	/* net_ring loops tx back to rx: a frame goes out and comes back unchanged */
	struct rf_pktbuf *b = rf_pktbuf_alloc(pool), *r[4];
	cr_assert_not_null(b);
	for (unsigned i = 0; i < 64; i++)
		((uint8_t *)rf_pktbuf_data(b))[i] = (uint8_t)(i * 3);
	b->data_len = 64;
	cr_assert_eq(rf_io_tx_burst(dev, 0, &b, 1), 1);
	unsigned n = 0;
	for (int k = 0; k < 100 && n == 0; k++)
		n = rf_io_rx_burst(dev, 0, r, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(r[0]->data_len, 64);
	for (unsigned i = 0; i < 64; i++)
		cr_assert_eq(((uint8_t *)rf_pktbuf_data(r[0]))[i], (uint8_t)(i * 3));
	cr_assert_eq(r[0]->port, rf_io_port_id(dev));
	uint64_t copies = 9;
	cr_assert_eq(rf_io_xstat_get(dev, "tx_copies", &copies), 0);
	cr_assert_eq(copies, 1, "the app's buffer was copied into an mbuf, and counted");
	rf_pktbuf_free(r[0]);
	cr_assert_eq(rf_io_link_up(dev), 1);
	rf_io_close(dev);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 1024, "app buffers leaked");
	rf_io_driver_fini("dpdk");
	cr_assert_null(rf_io_open("dpdk:vdev=net_ring1,ip=10.9.9.2,port=9000", pool, err,
				  sizeof(err)));
	cr_assert(strstr(err, "cannot be started again"), "%s", err);
}
