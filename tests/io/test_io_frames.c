/*
 * tests/io/test_io_frames.c: frame mode (frames=1) checked the same way on every frame
 * driver of conformance.h (frame_rows): two ports, A and B, forward between two veth pairs
 * and the frames are compared byte for byte where they come out.
 *
 * The bed lives in a network namespace of the test's own (unshare(CLONE_NEWNET) in the
 * test's process; Criterion runs each test in its own process), so everything in it, veths
 * included, goes away with the process however it ends; names carry the PID anyway. IPv6 is
 * off in it, and no interface has an address, so the kernel sends nothing of its own:
 *
 *   injector a0 ==veth== a1 [port A] --the test forwards--> [port B] b1 ==veth== b0 capture
 *
 * Frames are written and read with AF_PACKET sockets on a0 and b0; each carries a trailer
 * (magic and a sequence number) in its last 8 bytes, so a frame is found by its number.
 * Every wait is bounded.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io/conformance.h"
#include "veth_bed.h"

#define NBUF 4096
#define MAGIC 0x54464652u /* "RFFT" */

/* ---- the bed --------------------------------------------------------------------------- */

static struct veth_bed fb = VETH_BED_INIT;

static void bed_fini(void)
{
	veth_bed_down(&fb);
}

/* Two veth pairs with `queues` queues each in a new netns of this process; MTU of the A pair. */
static void bed_up(unsigned queues, unsigned mtu_a)
{
	bed_netns("a network namespace, veth pairs, raw frames");
	veth_bed_up(&fb, 'F', queues, mtu_a);
	/* A veth spreads received frames over its queues by the sender's queue only through
	 * its NAPI (on with native XDP, or with GRO); skb-mode XDP needs GRO for that. */
	if (queues > 1)
		bed_sh("ethtool -K %s gro on >/dev/null 2>&1; ethtool -K %s gro on >/dev/null 2>&1",
		       fb.a1, fb.b1);
}

/* ---- frames ---------------------------------------------------------------------------- */

enum kind { K_PLAIN, K_VLAN, K_ARP, K_IPV6, K_LLDP, K_UDP };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A frame of len bytes (>= 60) of kind, ending in the trailer (MAGIC, seq). flow varies the
 * UDP ports of K_UDP (for RSS / fanout spreading). */
static size_t make_frame(uint8_t *f, size_t len, enum kind k, uint32_t seq, uint16_t flow)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x0b}, src[6] = {0x02, 0, 0, 0, 0, 0x0a};
	static const uint8_t lldp_dst[6] = {0x01, 0x80, 0xc2, 0, 0, 0x0e};
	size_t o = 12;
	memcpy(f, k == K_LLDP ? lldp_dst : dst, 6);
	memcpy(f + 6, src, 6);
	for (size_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seq * 13 + i * 7);
	switch (k) {
	case K_PLAIN:
		put16(f + o, 0x88b5); /* local experimental ethertype */
		break;
	case K_VLAN:
		put16(f + o, 0x8100);
		put16(f + o + 2, 100);
		put16(f + o + 4, 0x88b5);
		break;
	case K_ARP: { /* who has 10.0.0.2 tell 10.0.0.1 (the rest: padding) */
		static const uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0x0a,
						10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2};
		memset(f, 0xff, 6);
		put16(f + o, 0x0806);
		memcpy(f + 14, arp, sizeof(arp));
		break;
	}
	case K_IPV6: { /* no next header (59), payload up to the end */
		uint8_t *ip = f + 14;
		put16(f + o, 0x86dd);
		memset(ip, 0, 40);
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)(len - 14 - 40));
		ip[6] = 59;
		ip[7] = 64;
		ip[8] = 0xfe, ip[9] = 0x80, ip[23] = 1;
		ip[24] = 0xfe, ip[25] = 0x80, ip[39] = 2;
		break;
	}
	case K_LLDP: { /* chassis id, port id, ttl, end */
		static const uint8_t tlv[] = {0x02, 0x07, 0x04, 0x02, 0, 0, 0, 0, 0x0a, 0x04, 0x03,
					      0x05, 'p', '0', 0x06, 0x02, 0x00, 0x78, 0x00, 0x00};
		put16(f + o, 0x88cc);
		memcpy(f + 14, tlv, sizeof(tlv));
		break;
	}
	case K_UDP: { /* IPv4/UDP 10.0.0.1:flow -> 10.0.0.2:9000 */
		uint8_t *ip = f + 14;
		put16(f + o, 0x0800);
		memset(ip, 0, 28);
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(len - 14));
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
		uint32_t sum = 0;
		for (int i = 0; i < 20; i += 2)
			sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		put16(ip + 10, (uint16_t)~sum);
		put16(ip + 20, (uint16_t)(10000 + flow));
		put16(ip + 22, 9000);
		put16(ip + 24, (uint16_t)(len - 34));
		put16(ip + 26, 0); /* no checksum */
		break;
	}
	}
	uint32_t m = MAGIC;
	memcpy(f + len - 8, &m, 4);
	memcpy(f + len - 4, &seq, 4);
	return len;
}

/* The frame's sequence number, or -1 when it has no trailer (not one of ours). */
static int64_t trailer(const uint8_t *f, size_t len)
{
	uint32_t m, seq;
	if (len < 8)
		return -1;
	memcpy(&m, f + len - 8, 4);
	memcpy(&seq, f + len - 4, 4);
	return m == MAGIC ? (int64_t)seq : -1;
}

static void inject(int s, const uint8_t *f, size_t len)
{
	cr_assert_eq(send(s, f, len, 0), (ssize_t)len, "inject %zu bytes: %s", len, strerror(errno));
}

/* ---- ports ----------------------------------------------------------------------------- */

static struct rf_pktbuf_pool *pool;

static void make_spec(const struct frame_row *row, const char *dev, unsigned n, const char *extra,
		      char *out, size_t len)
{
	size_t o = 0;
	for (const char *p = row->spec; *p && o + 1 < len;) {
		if (strncmp(p, "{dev}", 5) == 0)
			o += (size_t)snprintf(out + o, len - o, "%s", dev), p += 5;
		else if (strncmp(p, "{n}", 3) == 0)
			o += (size_t)snprintf(out + o, len - o, "%u", n), p += 3;
		else
			out[o++] = *p++;
	}
	out[o < len ? o : len - 1] = '\0';
	snprintf(out + strlen(out), len - strlen(out), "%s", extra);
}

static bool row_usable(const struct frame_row *row)
{
	if (rf_io_find(row->driver))
		return true;
	char d[1024];
	rf_io_describe(d, sizeof(d));
	cr_log_info("%s: driver %s not usable here (%s)", row->name, row->driver, d);
	return false;
}

static struct rf_io_dev *open_port(const struct frame_row *row, const char *dev, unsigned n,
				   const char *extra)
{
	char spec[256], err[512];
	make_spec(row, dev, n, extra, spec, sizeof(spec));
	struct rf_io_dev *d = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(d, "%s: open '%s': %s", row->name, spec, err);
	cr_assert(rf_io_frame_mode(d));
	return d;
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Anything of this process left in /var/run/dpdk (the EAL's runtime directory)? */
static bool dpdk_files_left(void)
{
	/* exactly the driver's EAL prefix rf<our pid> (dpdk_eal.c): a substring match took
	 * another test's rf32529 for ours when our pid was 2529 */
	char want[32];
	bool left = false;
	DIR *d = opendir("/var/run/dpdk");
	struct dirent *e;
	snprintf(want, sizeof(want), "rf%d", (int)getpid());
	while (d && (e = readdir(d)) != NULL)
		if (!strcmp(e->d_name, want))
			left = true;
	if (d)
		closedir(d);
	return left;
}

/* Move whatever `from` received to `to` (queue q -> q), checking each buffer's port id.
 * per_queue (may be NULL) counts what each rx queue of `from` gave. Returns frames moved. */
static unsigned pump(struct rf_io_dev *from, struct rf_io_dev *to, unsigned *per_queue)
{
	struct rf_pktbuf *b[32];
	unsigned moved = 0, nq = rf_io_nqueues(from), nqt = rf_io_nqueues(to);
	for (unsigned q = 0; q < nq; q++) {
		unsigned n = rf_io_rx_burst(from, q, b, 32), k = 0;
		for (unsigned i = 0; i < n; i++) {
			cr_assert_eq(b[i]->port, rf_io_port_id(from), "rx buffer carries its port id");
			cr_assert_eq(b[i]->queue, q);
		}
		if (per_queue)
			per_queue[q] += n;
		for (int tries = 0; k < n && tries < 100; tries++)
			k += rf_io_tx_burst(to, q % nqt, b + k, n - k);
		rf_pktbuf_free_bulk(b + k, n - k);
		moved += k;
	}
	return moved;
}

/* Send f on inject socket si, forward from -> to until the frame with seq shows up on capture
 * socket sc (or 2 s pass). Returns its length (-1: never came), the bytes in out. */
static ssize_t through(int si, int sc, struct rf_io_dev *from, struct rf_io_dev *to,
		       const uint8_t *f, size_t len, uint32_t seq, uint8_t *out, size_t cap)
{
	inject(si, f, len);
	double end = bed_now_s() + 2;
	while (bed_now_s() < end) {
		pump(from, to, NULL);
		ssize_t r;
		while ((r = bed_grab(sc, out, cap)) >= 0)
			if (trailer(out, (size_t)r) == (int64_t)seq)
				return r;
		usleep(50);
	}
	return -1;
}

static uint64_t xstat(struct rf_io_dev *d, const char *name)
{
	uint64_t v = 0;
	return rf_io_xstat_get(d, name, &v) == 0 ? v : 0;
}

/* The fd count once the driver's process-wide state exists (the DPDK EAL is started by the
 * first open and stays): open and close one port first, then count. The warm-up port is on
 * the capture interface b0: DPDK 22.11's net_af_xdp cannot set up an interface's queue
 * again in a process that closed a port on it (docs/backends.md). */
static struct rf_io_dev *open_port(const struct frame_row *row, const char *dev, unsigned n,
				   const char *extra);
static int fds_after_warmup(const struct frame_row *row, const char *dev)
{
	rf_io_close(open_port(row, dev, 0, ""));
	return count_fds();
}

static void ports_close_and_check(const struct frame_row *row, struct rf_io_dev *a,
				  struct rf_io_dev *b, int fds_before)
{
	int opened = (a != NULL) + (b != NULL);
	rf_io_close(a);
	rf_io_close(b);
	cr_assert_neq(bed_sh("ip link show dev %s | grep -q xdp", fb.a1), 0, "%s left an XDP program",
		      row->name);
	cr_assert_neq(bed_sh("ip link show dev %s | grep -q xdp", fb.b1), 0, "%s left an XDP program",
		      row->name);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF, "%s: %u of %u buffers back in the pool",
		     row->name, rf_pktbuf_pool_avail(pool), NBUF);
	cr_assert_not(dpdk_files_left(), "%s left files in /var/run/dpdk", row->name);
	int now = count_fds();
	cr_assert_eq(now, fds_before + opened * row->pmd_fd_leak,
		     "%s: %d fds after close, %d before, %d ports", row->name, now, fds_before,
		     opened);
}

static void pool_up(void)
{
	pool = rf_pktbuf_pool_create("frames", NBUF, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
}

static void fini(void)
{
	bed_fini();
	rf_pktbuf_pool_free(pool);
	pool = NULL;
}

/* ---- the checks, once per row ----------------------------------------------------------- */

/* Every length 60..1514 A->B, a sample B->A, and VLAN, ARP, IPv6, LLDP frames: byte-exact;
 * counters add up; no copy where memory is shared; everything released at close. */
static void check_byte_exact(const struct frame_row *row)
{
	bed_up(1, 1500);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	int fds = fds_after_warmup(row, fb.b0);
	struct rf_io_dev *a = open_port(row, fb.a1, 0, ""), *b = open_port(row, fb.b1, 1, "");
	cr_assert_neq(rf_io_port_id(a), rf_io_port_id(b));
	uint8_t mac[6];
	cr_assert_eq(rf_io_mac(a, mac), 0, "%s: a frame port knows its MAC", row->name);
	cr_assert_eq(rf_io_mtu(a), 1500, "%s: MTU", row->name);
	cr_assert_eq(rf_io_link_up(a), 1, "%s: link up", row->name);
	uint8_t f[2048], out[4096];
	uint32_t seq = 0, sent = 0;
	/* A driver with its own buffer pool (dpdk's mbufs) says how many are out of it. */
	uint64_t inuse0 = 0, inuse1 = 0;
	bool own_pool = rf_io_xstat_get(a, "mbufs_in_use", &inuse0) == 0;
	for (size_t len = 60; len <= 1514; len++, seq++) {
		enum kind k = len % 5 == 0 ? K_VLAN : len % 7 == 0 ? K_ARP : len % 11 == 0 && len >= 62
			? K_IPV6 : len % 13 == 0 ? K_LLDP : len % 3 == 0 ? K_UDP : K_PLAIN;
		make_frame(f, len, k, seq, (uint16_t)len);
		ssize_t r = through(fb.sa, fb.sb, a, b, f, len, seq, out, sizeof(out));
		cr_assert_eq(r, (ssize_t)len, "%s: frame of %zu bytes (kind %d): got %zd", row->name,
			     len, k, r);
		cr_assert_eq(memcmp(out, f, len), 0, "%s: frame of %zu bytes changed", row->name, len);
		sent++;
	}
	for (size_t len = 60; len <= 1514; len += 97, seq++) { /* and back */
		make_frame(f, len, len % 2 ? K_ARP : K_VLAN, seq, 0);
		ssize_t r = through(fb.sb, fb.sa, b, a, f, len, seq, out, sizeof(out));
		cr_assert_eq(r, (ssize_t)len, "%s: B->A frame of %zu bytes: got %zd", row->name, len, r);
		cr_assert_eq(memcmp(out, f, len), 0, "%s: B->A frame of %zu changed", row->name, len);
	}
	struct rf_io_stats sa, sb;
	rf_io_stats_get(a, &sa);
	rf_io_stats_get(b, &sb);
	cr_assert_eq(sa.rx_drops + sb.rx_drops + sa.tx_drops + sb.tx_drops, 0,
		     "%s: drops without a reason", row->name);
	cr_assert_geq(sa.rx_pkts, sent, "%s", row->name);
	cr_assert_eq(sb.tx_pkts, sa.rx_pkts, "%s: everything A received went out of B", row->name);
	cr_assert_eq(sa.tx_pkts, sb.rx_pkts, "%s: and back", row->name);
	cr_assert_eq(xstat(a, "tx_copies") + xstat(b, "tx_copies"), 0,
		     "%s: ports sharing memory copied frames", row->name);
	if (own_pool) { /* every mbuf that carried a frame went back to the driver's pool */
		rf_io_tx_burst(a, 0, NULL, 0); /* take back what finished sending */
		rf_io_tx_burst(b, 0, NULL, 0);
		cr_assert_eq(rf_io_xstat_get(a, "mbufs_in_use", &inuse1), 0);
		cr_assert_eq(inuse1, inuse0, "%s: %llu mbufs out after the run, %llu before",
			     row->name, (unsigned long long)inuse1, (unsigned long long)inuse0);
	}
	/* the link state follows the interface: the peer down takes the carrier away */
	cr_assert_eq(bed_sh("ip link set %s down", fb.a0), 0);
	int up = 1;
	for (double end = bed_now_s() + 2; (up = rf_io_link_up(a)) == 1 && bed_now_s() < end;)
		usleep(1000);
	cr_assert_eq(up, 0, "%s: link still up with the peer down", row->name);
	cr_assert_eq(bed_sh("ip link set %s up", fb.a0), 0);
	ports_close_and_check(row, a, b, fds);
}

/* A frame longer than a buffer is a counted receive drop, and the next one still passes; a
 * buffer shorter than an Ethernet header is a counted transmit drop. */
static void check_runt_and_long(const struct frame_row *row)
{
	bed_up(1, 3000);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	int fds = fds_after_warmup(row, fb.b0);
	static uint8_t f[4096], out[4096];
	struct rf_io_stats st;
	struct rf_io_dev *a, *b = open_port(row, fb.b1, 1, "");
	if (row->cuts_long) {
		a = open_port(row, fb.a1, 0, "");
	} else { /* frames the interface takes would not fit a buffer: refused at open */
		char spec[256], err[512] = "";
		make_spec(row, fb.a1, 0, "", spec, sizeof(spec));
		cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "%s: MTU 3000 accepted",
			       row->name);
		cr_assert(strstr(err, "MTU") && !strchr(err, '\n'), "%s: '%s'", row->name, err);
		a = NULL; /* the runt needs only B */
	}

	/* runt on tx: consumed, dropped, counted; nothing reaches b0 */
	struct rf_pktbuf *r = rf_pktbuf_alloc(pool);
	cr_assert_not_null(r);
	memset(rf_pktbuf_data(r), 0xab, 13);
	r->data_len = 13;
	cr_assert_eq(rf_io_tx_burst(b, 0, &r, 1), 1, "%s: a runt is consumed", row->name);
	rf_io_stats_get(b, &st);
	cr_assert_eq(st.tx_drops, 1, "%s: the runt is a counted tx drop", row->name);
	cr_assert_eq(st.tx_pkts, 0, "%s: and not sent", row->name);

	/* too long for a buffer (2048 bytes of room, the interface takes 3000) */
	if (row->cuts_long) {
		make_frame(f, 2500, K_PLAIN, 1, 0);
		inject(fb.sa, f, 2500);
		make_frame(f, 100, K_PLAIN, 2, 0);
		ssize_t got = through(fb.sa, fb.sb, a, b, f, 100, 2, out, sizeof(out));
		cr_assert_eq(got, 100, "%s: the frame after a long one passes", row->name);
		double end = bed_now_s() + 2;
		do {
			rf_io_stats_get(a, &st);
		} while (st.rx_drops == 0 && bed_now_s() < end);
		cr_assert_eq(st.rx_drops, 1, "%s: the long frame is a counted rx drop", row->name);
		ssize_t n;
		while ((n = bed_grab(fb.sb, out, sizeof(out))) >= 0)
			cr_assert_neq(trailer(out, (size_t)n), 1, "%s: a cut long frame came out",
				      row->name);
	}
	ports_close_and_check(row, a, b, fds);
}

/* queues=2 on veths with 2 queues: 64 flows land on both queues (where the veth spreads them
 * for this driver, see conformance.h), every frame arrives once. */
static void check_two_queues(const struct frame_row *row)
{
	bed_up(2, 1500);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	int fds = fds_after_warmup(row, fb.b0);
	if (!row->mq) { /* the driver cannot take 2 queues of a veth: one line, nothing open */
		char spec[256], err[512] = "";
		make_spec(row, fb.a1, 0, ",queues=2", spec, sizeof(spec));
		cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "%s: queues=2 opened",
			       row->name);
		cr_assert(strstr(err, "queue") && !strchr(err, '\n'), "%s: '%s'", row->name, err);
		cr_assert_eq(count_fds(), fds, "%s: the failed open left an fd", row->name);
		return;
	}
	struct rf_io_dev *a = open_port(row, fb.a1, 0, ",queues=2");
	struct rf_io_dev *b = open_port(row, fb.b1, 1, ",queues=2");
	cr_assert_eq(rf_io_nqueues(a), 2);
	enum { FLOWS = 64, PER = 4, N = FLOWS * PER };
	static uint8_t seen[N];
	unsigned perq[2] = {0, 0}, got = 0, dup = 0;
	uint8_t f[256], out[4096];
	memset(seen, 0, sizeof(seen));
	double end = 0;
	for (uint32_t i = 0; i < N || (got < N && bed_now_s() < end); i++) {
		if (i < N) {
			make_frame(f, 128, K_UDP, i, (uint16_t)(i % FLOWS));
			inject(fb.sa, f, 128);
			if (i % 16 != 15) /* a low rate: forward and collect every 16 frames */
				continue;
			end = bed_now_s() + 3;
		}
		pump(a, b, perq);
		ssize_t r;
		while ((r = bed_grab(fb.sb, out, sizeof(out))) >= 0) {
			int64_t s = trailer(out, (size_t)r);
			if (s < 0 || s >= N)
				continue;
			if (seen[s]++)
				dup++;
			else
				got++;
		}
		if (i >= N)
			usleep(100);
	}
	/* and nothing more after a pause: a late duplicate would show here */
	usleep(100000);
	pump(a, b, perq);
	for (ssize_t r; (r = bed_grab(fb.sb, out, sizeof(out))) >= 0;) {
		int64_t s = trailer(out, (size_t)r);
		if (s >= 0 && s < N && seen[s]++)
			dup++;
	}
	cr_assert_eq(dup, 0, "%s: %u frames duplicated", row->name, dup);
	cr_assert_eq(got, N, "%s: %u of %u frames arrived", row->name, got, N);
	if (row->spreads)
		cr_assert(perq[0] > 0 && perq[1] > 0, "%s: flows on both queues (%u, %u)", row->name,
			  perq[0], perq[1]);
	else /* see conformance.h: the veth gives this hook every frame as queue 0's */
		cr_log_info("%s: queue 0 got %u, queue 1 %u (a veth does not spread for this mode)",
			    row->name, perq[0], perq[1]);
	ports_close_and_check(row, a, b, fds);
}

/* One line and nothing left open for: a queue count the interface lacks (drivers bound to
 * its queues), an interface that does not exist, frames=1 on a message-only driver. */
static void check_bad_config(const struct frame_row *row)
{
	bed_up(1, 1500);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	int fds = fds_after_warmup(row, fb.b0);
	char spec[256], err[512];
	if (row->hw_queues) {
		make_spec(row, fb.a1, 0, ",queues=2", spec, sizeof(spec));
		err[0] = '\0';
		cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "%s: '%s' opened", row->name,
			       spec);
		cr_assert(err[0] && !strchr(err, '\n'), "%s: one line: '%s'", row->name, err);
		cr_assert(strstr(err, "queue"), "%s: the line names the queues: '%s'", row->name, err);
	}
	make_spec(row, "rfnosuch0", 0, "", spec, sizeof(spec));
	err[0] = '\0';
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "%s: '%s' opened", row->name, spec);
	cr_assert(err[0] && !strchr(err, '\n'), "%s: one line: '%s'", row->name, err);
	cr_assert(strstr(err, "rfnosuch0"), "%s: the line names the interface: '%s'", row->name,
		  err);
	err[0] = '\0';
	cr_assert_null(rf_io_open("udp:listen=127.0.0.1:9,frames=1", pool, err, sizeof(err)));
	cr_assert(strstr(err, "frames=1: this driver has no frame mode"), "'%s'", err);
	cr_assert_eq(errno, EOPNOTSUPP);
	cr_assert_eq(count_fds(), fds, "%s: a failed open left an fd", row->name);
	/* and a good open still works after the failures */
	struct rf_io_dev *a = open_port(row, fb.a1, 0, ""), *b = open_port(row, fb.b1, 1, "");
	cr_assert_eq(rf_io_tx_burst(a, 0, NULL, 0), 0, "%s: an empty tx burst", row->name);
	ports_close_and_check(row, a, b, fds);
}

/* Ports on two different pools share no memory: frames still pass byte-exact, each one
 * copied once and counted in the sender's xstat tx_copies; both pools whole at close. */
static void check_copy_between_pools(const struct frame_row *row)
{
	bed_up(1, 1500);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	struct rf_pktbuf_pool *other = rf_pktbuf_pool_create("frames2", NBUF, 2048, 0,
							     RF_MEMPOOL_QUIET);
	cr_assert_not_null(other);
	char spec[256], err[512];
	struct rf_io_dev *a = open_port(row, fb.a1, 0, "");
	make_spec(row, fb.b1, 1, "", spec, sizeof(spec));
	struct rf_io_dev *b = rf_io_open(spec, other, err, sizeof(err));
	cr_assert_not_null(b, "%s: %s", row->name, err);
	uint8_t f[2048], out[4096];
	unsigned n = 0;
	for (size_t len = 60; len <= 1514; len += 31, n++) {
		make_frame(f, len, len % 2 ? K_VLAN : K_UDP, (uint32_t)len, 1);
		ssize_t r = through(fb.sa, fb.sb, a, b, f, len, (uint32_t)len, out, sizeof(out));
		cr_assert_eq(r, (ssize_t)len, "%s: frame of %zu bytes: got %zd", row->name, len, r);
		cr_assert_eq(memcmp(out, f, len), 0, "%s: frame of %zu changed", row->name, len);
	}
	cr_assert_eq(xstat(b, "tx_copies"), n, "%s: %u frames crossed pools", row->name, n);
	rf_io_close(a);
	rf_io_close(b);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF, "%s: pool A whole", row->name);
	cr_assert_eq(rf_pktbuf_pool_avail(other), NBUF, "%s: pool B whole", row->name);
	rf_pktbuf_pool_free(other);
}

Test(io_frames, xdp_skb_copy_between_pools, .fini = fini, .timeout = 60)
{
	check_copy_between_pools(&frame_rows[0]);
}

Test(io_frames, xdp_native_copy_between_pools, .fini = fini, .timeout = 60)
{
	check_copy_between_pools(&frame_rows[1]);
}

/* busy_poll= on native xdp ports: frames still cross byte-exact, and an empty rx poll is a
 * recvfrom that polls the queue's NAPI (counted); a bad value is one line naming the key. */
Test(io_frames, xdp_native_busy_poll, .fini = fini, .timeout = 60)
{
	const struct frame_row *row = &frame_rows[1];
	bed_up(1, 1500);
	pool_up();
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	char spec[256], err[512];
	make_spec(row, fb.a1, 0, ",busy_poll=abc", spec, sizeof(spec));
	err[0] = '\0';
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "'%s' opened", spec);
	cr_assert(err[0] && !strchr(err, '\n') && strstr(err, "busy_poll"), "'%s'", err);
	struct rf_io_dev *a = open_port(row, fb.a1, 0, ",busy_poll=50,busy_budget=16");
	struct rf_io_dev *b = open_port(row, fb.b1, 1, ",busy_poll=50");
	uint8_t f[2048], out[4096];
	uint32_t n = 0;
	for (size_t len = 60; len <= 1514; len += 29, n++) {
		make_frame(f, len, len % 2 ? K_UDP : K_VLAN, n, (uint16_t)len);
		ssize_t r = through(fb.sa, fb.sb, a, b, f, len, n, out, sizeof(out));
		cr_assert_eq(r, (ssize_t)len, "frame of %zu bytes: got %zd", len, r);
		cr_assert_eq(memcmp(out, f, len), 0, "frame of %zu bytes changed", len);
	}
	struct rf_pktbuf *got[32];
	uint64_t polls = xstat(a, "rx_busy_polls");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_io_rx_burst(a, 0, got, 32), 0, "nothing more came to A");
	cr_assert_eq(xstat(a, "rx_busy_polls"), polls + 3, "each empty poll of A polled the NAPI");
	cr_assert_eq(xstat(a, "rx_wakeup_kicks"), 0, "busy polling replaces the rx wake-ups");
	struct rf_io_stats sa, sb;
	rf_io_stats_get(a, &sa);
	rf_io_stats_get(b, &sb);
	cr_assert_geq(sa.rx_pkts, n);
	cr_assert_eq(sb.tx_pkts, sa.rx_pkts, "everything A received went out of B");
	rf_io_close(a);
	rf_io_close(b);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), NBUF, "the pool is whole");
}

#define ROW_TESTS(id, idx)                                                                      \
	Test(io_frames, id##_byte_exact, .fini = fini, .timeout = 120)                          \
	{                                                                                       \
		check_byte_exact(&frame_rows[idx]);                                             \
	}                                                                                       \
	Test(io_frames, id##_runt_and_long, .fini = fini, .timeout = 60)                        \
	{                                                                                       \
		check_runt_and_long(&frame_rows[idx]);                                          \
	}                                                                                       \
	Test(io_frames, id##_two_queues, .fini = fini, .timeout = 60)                           \
	{                                                                                       \
		check_two_queues(&frame_rows[idx]);                                            \
	}                                                                                       \
	Test(io_frames, id##_bad_config, .fini = fini, .timeout = 60)                           \
	{                                                                                       \
		check_bad_config(&frame_rows[idx]);                                             \
	}

ROW_TESTS(xdp_skb, 0)
ROW_TESTS(xdp_native, 1)
ROW_TESTS(dpdk_af_packet, 2)
ROW_TESTS(dpdk_af_xdp, 3)
ROW_TESTS(packet, 4)
ROW_TESTS(packet_send_ring, 5)

/* send=mmsg (the default) has no tx ring to size: tx= alone is refused in one line that
 * says what to give; with send=ring it sizes the ring. */
Test(io_frames, packet_tx_needs_send_ring, .fini = fini, .timeout = 60)
{
	bed_up(1, 1500);
	pool_up();
	const struct frame_row *row = &frame_rows[4];
	if (!row_usable(row))
		cr_skip_test("%s absent here", row->name);
	char spec[256], err[512];
	make_spec(row, fb.a1, 0, ",tx=512", spec, sizeof(spec));
	err[0] = '\0';
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "'%s' opened", spec);
	cr_assert(err[0] && !strchr(err, '\n'), "one line: '%s'", err);
	cr_assert(strstr(err, "tx=512") && strstr(err, "send=ring"), "'%s'", err);
	make_spec(row, fb.a1, 0, ",send=ring,tx=512", spec, sizeof(spec));
	struct rf_io_dev *a = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(a, "'%s': %s", spec, err);
	rf_io_close(a);
	make_spec(row, fb.a1, 0, ",send=copy", spec, sizeof(spec));
	err[0] = '\0';
	cr_assert_null(rf_io_open(spec, pool, err, sizeof(err)), "'%s' opened", spec);
	cr_assert(strstr(err, "send"), "'%s'", err);
}
