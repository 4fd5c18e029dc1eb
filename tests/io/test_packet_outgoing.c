/*
 * tests/io/test_packet_outgoing.c: the packet driver with queues >= 2 (a fanout group) never
 * receives the frames the host stack itself sends on its port, and a buffer of a debug pool
 * sent after its free stops the program with one line (send after free).
 *
 * The bed is a namespace of the test's own (unshare(CLONE_NEWNET): it goes away with the
 * test's process however it ends; names carry the PID anyway): one veth pair, p1 the port,
 * p0 its peer. The host stack sends UDP datagrams out of p1 (an address and a static
 * neighbour on p1, so no ARP), many destination ports so the fanout hash would spread them
 * over both queues; then a raw socket injects frames into p0, which arrive on p1. The
 * injected frames are sent after the host's, and the host's are seen by a packet socket
 * synchronously inside the send, so once every injected frame has been received, any of
 * the host's would have been received too: the test waits for the injected ones (bounded),
 * and none of the host's may be among what came in.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
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
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "veth_bed.h"

#define N_HOST 64   /* datagrams the host stack sends out of the port */
#define N_IN 64     /* frames injected into the peer, received by the port */
#define HOST_MARK "rf-host-outgoing"
#define IN_MARK "rf-incoming-frame"

static char p0[16], p1[16];

static void bed_up(void)
{
	bed_netns("a network namespace, a veth pair, raw frames");
	int pid = (int)getpid() % 100000;
	snprintf(p0, sizeof(p0), "rfOp0%d", pid);
	snprintf(p1, sizeof(p1), "rfOp1%d", pid);
	cr_assert_eq(bed_sh("set -e; ip link set lo up;"
			"ip link add %1$s numrxqueues 2 numtxqueues 2 type veth peer name %2$s "
			"numrxqueues 2 numtxqueues 2;"
			"sysctl -qw net.ipv6.conf.%1$s.disable_ipv6=1 net.ipv6.conf.%2$s.disable_ipv6=1;"
			"ip link set %1$s up; ip link set %2$s up;"
			"ip addr add 10.251.7.1/24 dev %2$s;"
			"ip neigh replace 10.251.7.2 lladdr 02:00:00:00:07:02 dev %2$s nud permanent",
			p0, p1),
		     0, "cannot build the veth bed in the test's namespace");
}

static struct rf_io_dev *open_port(struct rf_pktbuf_pool *pool, unsigned queues)
{
	char spec[128], err[512] = "";
	snprintf(spec, sizeof(spec), "packet:dev=%s,frames=1,queues=%u", p1, queues);
	struct rf_io_dev *dev = rf_io_open(spec, pool, err, sizeof(err));
	cr_assert_not_null(dev, "%s: %s", spec, err);
	cr_assert_eq(rf_io_nqueues(dev), queues);
	return dev;
}

static void host_sends(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert(s >= 0);
	for (int i = 0; i < N_HOST; i++) {
		struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(9000 + i)};
		inet_pton(AF_INET, "10.251.7.2", &to.sin_addr);
		cr_assert_eq(sendto(s, HOST_MARK, sizeof(HOST_MARK), 0, (struct sockaddr *)&to,
				    sizeof(to)),
			     (ssize_t)sizeof(HOST_MARK), "host send: %s", strerror(errno));
	}
	close(s);
}

static void inject(void)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert(s >= 0, "packet socket: %s", strerror(errno));
	struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				.sll_ifindex = (int)if_nametoindex(p0), .sll_halen = 6};
	for (int i = 0; i < N_IN; i++) {
		uint8_t f[64] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0x07, (uint8_t)i,
				 0x88, 0xb5};
		memcpy(f + 14, IN_MARK, sizeof(IN_MARK));
		cr_assert_eq(sendto(s, f, sizeof(f), 0, (struct sockaddr *)&a, sizeof(a)),
			     (ssize_t)sizeof(f), "inject: %s", strerror(errno));
	}
	close(s);
}

static bool has(const struct rf_pktbuf *b, const char *mark)
{
	const char *d = rf_pktbuf_data(b);
	size_t n = strlen(mark);
	for (uint32_t i = 0; i + n <= b->data_len; i++)
		if (memcmp(d + i, mark, n) == 0)
			return true;
	return false;
}

static void no_host_frames_with(unsigned queues)
{
	bed_up();
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("outg", 1024, 2048, 0,
							    RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	struct rf_io_dev *dev = open_port(pool, queues);
	host_sends();
	inject();
	unsigned in = 0, host = 0, other = 0;
	double deadline = bed_now_s() + 10;
	while (in < N_IN && bed_now_s() < deadline) {
		for (unsigned q = 0; q < queues; q++) {
			struct rf_pktbuf *b[32];
			unsigned n = rf_io_rx_burst(dev, q, b, 32);
			for (unsigned i = 0; i < n; i++) {
				if (has(b[i], IN_MARK))
					in++;
				else if (has(b[i], HOST_MARK))
					host++;
				else
					other++;
			}
			rf_pktbuf_free_bulk(b, n);
		}
	}
	cr_log_info("queues=%u: %u injected frames received, %u of the host's own, %u other",
		    queues, in, host, other);
	cr_assert_eq(in, N_IN, "the port received %u of the %d frames sent to it", in, N_IN);
	cr_assert_eq(host, 0, "the port received %u of the host's own outgoing frames", host);
	rf_io_close(dev);
	rf_pktbuf_pool_free(pool);
}

Test(packet_outgoing, one_queue_never_sees_the_hosts_frames)
{
	no_host_frames_with(1);
}

Test(packet_outgoing, two_queues_never_see_the_hosts_frames)
{
	no_host_frames_with(2);
}

static void check_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	dprintf(STDERR_FILENO, "report: %s\n", line);
	if (lvl == RF_LOG_ERR && (strncmp(line, "rf_io_tx_burst: buffer ", 23) != 0 ||
				  !strstr(line, "use after free")))
		_exit(7);
}

Test(packet_outgoing, send_after_free_aborts_with_one_line, .signal = SIGABRT)
{
	bed_up();
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create(
		"dbg", 64, 2048, 0, RF_MEMPOOL_DEBUG | RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	struct rf_io_dev *dev = open_port(pool, 1);
	struct rf_pktbuf *b = rf_pktbuf_alloc(pool);
	cr_assert_not_null(b);
	b->data_len = 60;
	memset(rf_pktbuf_data(b), 0xff, 60);
	rf_pktbuf_free(b);
	rf_log_set_hook(check_line, NULL);
	rf_io_tx_burst(dev, 0, &b, 1);
	_exit(8); /* not reached */
}
