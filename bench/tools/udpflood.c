/*
 * bench/tools/udpflood.c: the bounded UDP flood (udpflood.h).
 */
#include "udpflood.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 32
#define PAYLOAD 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void flood_init(struct rf_flood *f)
{
	memset(f, 0, sizeof(*f));
	f->tx_fd = f->rx_fd = -1;
	atomic_init(&f->stop, false);
	atomic_init(&f->sent, 0);
}

/* Binds rx to addr (port 0 = any), connects tx to where rx ended up. */
static int flood_wire(struct rf_flood *f, const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -EINVAL;
	if (bind(f->rx_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(f->rx_fd, (struct sockaddr *)&sa, &len) ||
	    connect(f->tx_fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	return 0;
}

int rf_flood_open_loopback(struct rf_flood *f)
{
	flood_init(f);
	f->rx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	f->tx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = (f->rx_fd < 0 || f->tx_fd < 0) ? -errno : flood_wire(f, "127.0.0.1");
	if (rc)
		rf_flood_close(f);
	return rc;
}

int rf_flood_open_veth(struct rf_flood *f, const struct rf_vethbed *b)
{
	flood_init(f);
	int rc = rf_vethbed_enter(b, 1);
	if (rc == 0) {
		f->rx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		rc = rf_vethbed_enter(b, 0);
	}
	if (rc == 0) {
		f->tx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		rc = rf_vethbed_enter(b, -1);
	}
	if (rc == 0 && (f->rx_fd < 0 || f->tx_fd < 0))
		rc = -EMFILE;
	if (rc == 0)
		rc = flood_wire(f, b->addr[1]);
	if (rc)
		rf_flood_close(f);
	return rc;
}

static void *flood_main(void *arg)
{
	struct rf_flood *f = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(f->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);

	static char payload[PAYLOAD] = "ringflow-stolen flood";
	struct iovec iov[BATCH];
	struct mmsghdr msg[BATCH];
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = payload, .iov_len = PAYLOAD};
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	double deadline = now_s() + f->max_seconds;
	uint64_t sent = 0;
	for (unsigned loop = 0; sent < f->max_packets; loop++) {
		/* Relaxed: stop is a hint checked every batch; join() orders everything else. */
		if (atomic_load_explicit(&f->stop, memory_order_relaxed))
			break;
		if ((loop & 63) == 0 && now_s() > deadline)
			break;
		int n = sendmmsg(f->tx_fd, msg, BATCH, 0);
		if (n > 0) {
			sent += (uint64_t)n;
			atomic_store_explicit(&f->sent, sent, memory_order_relaxed);
		} else if (n < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR &&
			   errno != ECONNREFUSED) {
			break;
		}
	}
	/* Relaxed: rf_flood_done() is a progress hint; the join in stop() publishes the rest. */
	atomic_store_explicit(&f->stop, true, memory_order_relaxed);
	return NULL;
}

int rf_flood_start(struct rf_flood *f, unsigned cpu, uint64_t max_packets, double max_seconds)
{
	f->cpu = cpu;
	f->max_packets = max_packets;
	f->max_seconds = max_seconds;
	atomic_store_explicit(&f->stop, false, memory_order_relaxed);
	int rc = pthread_create(&f->thread, NULL, flood_main, f);
	if (rc)
		return -rc;
	f->running = true;
	return 0;
}

bool rf_flood_done(struct rf_flood *f)
{
	return atomic_load_explicit(&f->stop, memory_order_relaxed);
}

uint64_t rf_flood_stop(struct rf_flood *f)
{
	if (f->running) {
		atomic_store_explicit(&f->stop, true, memory_order_relaxed);
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	return atomic_load_explicit(&f->sent, memory_order_relaxed);
}

uint64_t rf_flood_wait(struct rf_flood *f)
{
	if (f->running) {
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	return atomic_load_explicit(&f->sent, memory_order_relaxed);
}

void rf_flood_close(struct rf_flood *f)
{
	rf_flood_stop(f);
	if (f->tx_fd >= 0)
		close(f->tx_fd);
	if (f->rx_fd >= 0)
		close(f->rx_fd);
	f->tx_fd = f->rx_fd = -1;
}
