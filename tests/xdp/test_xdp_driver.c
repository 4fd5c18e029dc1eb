/*
 * tests/xdp/test_xdp_driver.c: the AF_XDP driver over a netns + veth bed (root only): an
 * ordinary UDP client in the peer netns sends numbered messages, the driver echoes them
 * (rx_burst then tx_burst of the same buffers, ARP answered by ringflow), every payload is
 * checked; then nothing may stay attached and every buffer is back in the pool. Plus the
 * one-line errors: bad keys/values, missing interface, queue out of range, program already
 * attached, no capabilities, memlock limit.
 */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <ringflow/io.h>
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "bypass_bed.h"

#define NBUF 4096
#define PORT 9000

static struct rf_pktbuf_pool *pool;

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: netns, veth and XDP");
	cr_assert_eq(bed_up('x'), 0, "cannot build the netns + veth bed");
	pool = rf_pktbuf_pool_create("xdp_test", NBUF, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
}

static void teardown(void)
{
	bed_down();
	rf_pktbuf_pool_free(pool);
	pool = NULL;
}

static struct rf_io_dev *open_dev(const char *extra, char *err, size_t len)
{
	char spec[256];
	snprintf(spec, sizeof(spec), "xdp:dev=%s,ip=%s,port=%d%s", bed.dev, bed.ip_drv, PORT,
		 extra);
	return rf_io_open(spec, pool, err, len);
}

/* Echo until the client exits (or 20 s); returns the client's count of bad echoes. */
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

static void echo_in_mode(const char *mode, unsigned size)
{
	char err[256] = "", extra[64];
	struct rf_io_stats st = {0};
	snprintf(extra, sizeof(extra), ",mode=%s", mode);
	struct rf_io_dev *dev = open_dev(extra, err, sizeof(err));
	cr_assert_not_null(dev, "open: %s", err);
	cr_assert(bed_xdp_attached(bed.dev));
	pid_t c = bed_udp_client(PORT, 300, size);
	int bad = echo_until_client_done(dev, c);
	cr_assert_eq(bad, 0, "%d bad or missing echoes (%s mode)", bad, mode);
	rf_io_stats_get(dev, &st);
	cr_assert_geq(st.rx_pkts, 300);
	cr_assert_geq(st.tx_pkts, 300);
	rf_io_close(dev);
	cr_assert_not(bed_xdp_attached(bed.dev), "XDP program left attached after close");
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF, "buffers not returned: %u of %u",
		     rf_pktbuf_pool_avail(pool), NBUF);
}

TestSuite(xdp, .init = setup, .fini = teardown, .timeout = 60);

Test(xdp, echo_skb_mode_payload_intact)
{
	echo_in_mode("skb", 64);
}

Test(xdp, echo_native_mode_payload_intact)
{
	echo_in_mode("native", 64);
}

Test(xdp, echo_large_payloads)
{
	echo_in_mode("skb", 1400);
}

Test(xdp, two_queues_share_one_umem)
{
	char err[256] = "";
	struct rf_pktbuf *b[32];
	bed_down();
	bed.queues = 2;
	cr_assert_eq(bed_up('x'), 0);
	struct rf_io_dev *dev = open_dev(",queues=2,mode=skb,fill=512", err, sizeof(err));
	cr_assert_not_null(dev, "open: %s", err);
	cr_assert_eq(rf_io_nqueues(dev), 2);
	/* The peer's flows land on either queue: poll both, echo from the queue they came on. */
	pid_t c = bed_udp_client(PORT, 200, 64);
	double end = bed_now() + 20;
	int status = -1;
	while (bed_now() < end && waitpid(c, &status, WNOHANG) != c)
		for (unsigned q = 0; q < 2; q++) {
			unsigned n = rf_io_rx_burst(dev, q, b, 32), k = rf_io_tx_burst(dev, q, b, n);
			rf_pktbuf_free_bulk(b + k, n - k);
		}
	if (status == -1) {
		kill(c, SIGKILL);
		waitpid(c, &status, 0);
	}
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bad echoes over 2 queues");
	rf_io_close(dev);
	cr_assert_not(bed_xdp_attached(bed.dev));
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF);
}

/* The open line's ring sizes, caught through the log hook. */
static char rings_line[512];
static void catch_rings(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)lvl, (void)arg;
	const char *r = strstr(line, "rings fill=");
	if (r)
		snprintf(rings_line, sizeof(rings_line), "%s", r);
}

/* Opens the device on a pool of nbuf buffers with extra keys; returns the "rings ..." part. */
static const char *rings_for(unsigned nbuf, const char *extra)
{
	char err[256] = "";
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("xdp_rings", nbuf, 2048, 0,
							 RF_MEMPOOL_QUIET);
	cr_assert_not_null(p);
	char spec[256];
	snprintf(spec, sizeof(spec), "xdp:dev=%s,ip=%s,port=%d,mode=skb%s", bed.dev, bed.ip_drv,
		 PORT, extra);
	rings_line[0] = 0;
	rf_log_set_hook(catch_rings, NULL);
	struct rf_io_dev *dev = rf_io_open(spec, p, err, sizeof(err));
	rf_log_set_hook(NULL, NULL);
	cr_assert_not_null(dev, "open %s: %s", spec, err);
	rf_io_close(dev);
	cr_assert_eq(rf_pktbuf_pool_avail(p), nbuf, "buffers not returned");
	rf_pktbuf_pool_free(p);
	return rings_line;
}

/* Defaults follow the pool (a quarter of it per queue for the fill ring, 1024..4096; the other
 * rings as many, at most 2048), and explicit keys win. */
Test(xdp, default_rings_follow_the_pool)
{
	cr_expect(strstr(rings_for(4096, ""), "rings fill=1024 comp=1024 rx=1024 tx=1024"), "%s",
		  rings_line);
	cr_expect(strstr(rings_for(8192, ""), "rings fill=2048 comp=2048 rx=2048 tx=2048"), "%s",
		  rings_line);
	cr_expect(strstr(rings_for(16384, ""), "rings fill=4096 comp=2048 rx=2048 tx=2048"), "%s",
		  rings_line);
	cr_expect(strstr(rings_for(65536, ""), "rings fill=4096 comp=2048 rx=2048 tx=2048"), "%s",
		  rings_line);
	cr_expect(strstr(rings_for(16384, ",rx=512,fill=1024"),
			 "rings fill=1024 comp=2048 rx=512 tx=2048"),
		  "%s", rings_line);
}

Test(xdp, crashed_process_leaves_nothing_attached)
{
	/* The attachment is a BPF link held by the process: dying without close drops it. */
	pid_t pid = fork();
	if (pid == 0) {
		char err[256];
		struct rf_io_dev *dev = open_dev("", err, sizeof(err));
		if (!dev || !bed_xdp_attached(bed.dev))
			_exit(1);
		abort();
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFSIGNALED(status), "child did not get to open and crash");
	cr_assert_not(bed_xdp_attached(bed.dev), "a crashed process left its XDP program");
}

static void expect_error(const char *extra, const char *needle)
{
	char err[256] = "";
	struct rf_io_dev *dev = open_dev(extra, err, sizeof(err));
	cr_assert_null(dev, "opened with '%s'", extra);
	cr_assert(strstr(err, needle) != NULL, "'%s': got '%s', wanted '%s'", extra, err, needle);
	cr_assert(strchr(err, '\n') == NULL, "error is not one line: %s", err);
	cr_assert_not(bed_xdp_attached(bed.dev), "failed open left XDP attached ('%s')", extra);
}

Test(xdp, bad_config_values_one_line)
{
	expect_error(",mode=turbo", "mode");
	expect_error(",fill=1000", "power of two");
	expect_error(",bogus=1", "bogus");
	expect_error(",queue=7", "out of range");
	char err[256] = "", spec[128];
	snprintf(spec, sizeof(spec), "xdp:dev=%s,ip=10.0.0,port=%d", bed.dev, PORT);
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)));
	cr_assert(strstr(err, "not an IPv4 address") != NULL, "%s", err);
	cr_assert_null(rf_io_open("xdp:ip=10.0.0.1,port=9000", pool, err, sizeof(err)));
	cr_assert(strstr(err, "dev= is required") != NULL, "%s", err);
}

Test(xdp, missing_interface_one_line)
{
	char err[256] = "";
	cr_assert_null(rf_io_open("xdp:dev=rf_no_such0,port=9000", pool, err, sizeof(err)));
	cr_assert(strstr(err, "not found") != NULL, "%s", err);
}

Test(xdp, program_already_attached_is_refused)
{
	char err[256] = "";
	struct rf_io_dev *dev = open_dev("", err, sizeof(err));
	cr_assert_not_null(dev, "%s", err);
	cr_assert_null(open_dev("", err, sizeof(err)));
	cr_assert(strstr(err, "already has XDP program") != NULL, "%s", err);
	cr_assert(strstr(err, "xdp off") != NULL, "no fix given: %s", err);
	rf_io_close(dev);
	cr_assert_not(bed_xdp_attached(bed.dev));
}

/* Keep only the capabilities in keep (a bit mask), in a forked child. */
static void drop_caps(uint64_t keep)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {0};
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &h, d) != 0)
		_exit(100);
}

/* In a child: drop capabilities (and set memlock), open, print the error to a pipe. */
static void child_error(uint64_t keep, rlim_t memlock, char *out, size_t len)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		char err[256] = "";
		struct rlimit rl = {memlock, memlock};
		close(p[0]);
		if (memlock)
			setrlimit(RLIMIT_MEMLOCK, &rl);
		drop_caps(keep);
		struct rf_io_dev *dev = open_dev("", err, sizeof(err));
		if (dev)
			snprintf(err, sizeof(err), "opened");
		if (write(p[1], err, strlen(err)) < 0)
			_exit(101);
		rf_io_close(dev);
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(pid, NULL, 0);
}

Test(xdp, no_capabilities_one_line)
{
	char err[256];
	child_error(0, 0, err, sizeof(err));
	cr_assert(strstr(err, "CAP_NET_ADMIN") != NULL, "got '%s'", err);
	cr_assert(strstr(err, "setcap") != NULL, "no fix given: '%s'", err);
	cr_assert_not(bed_xdp_attached(bed.dev));
}

Test(xdp, memlock_limit_one_line)
{
	char err[256];
	uint64_t keep = 1ull << CAP_NET_ADMIN | 1ull << CAP_BPF | 1ull << CAP_SYS_ADMIN |
			1ull << CAP_NET_RAW;
	child_error(keep, 64 << 10, err, sizeof(err));
	cr_assert(strstr(err, "memlock") != NULL, "got '%s'", err);
	cr_assert_not(bed_xdp_attached(bed.dev), "failed open left XDP attached");
}
