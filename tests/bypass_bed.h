/*
 * tests/bypass_bed.h: the netns + veth test bed of the raw-driver tests (AF_XDP, DPDK).
 *
 * One veth pair per test run, names unique by PID: `dev` stays in the test's namespace with
 * no kernel address (the raw driver owns its address, bed.ip_drv), `peer` goes into a new
 * netns `ns` with bed.ip_peer/24, where a forked child runs an ordinary UDP client
 * (bed_udp_client) that checks every echoed payload. bed_down() deletes both, also after a
 * failed assertion (call it from a Criterion .fini).
 */
#ifndef RINGFLOW_TESTS_BYPASS_BED_H
#define RINGFLOW_TESTS_BYPASS_BED_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "veth_bed.h" /* bed_sh */

struct bypass_bed {
	char ns[32], dev[16], peer[16];
	char ip_drv[20], ip_peer[20];
	bool up;
	unsigned queues; /* rx/tx queues per veth end (0: the default, 1) */
};

static struct bypass_bed bed;

static inline void bed_down(void)
{
	if (!bed.up)
		return;
	bed_sh("ip link set dev %s xdp off 2>/dev/null; ip link del %s 2>/dev/null", bed.dev,
	       bed.dev);
	bed_sh("ip netns del %s 2>/dev/null", bed.ns);
	bed.up = false;
}

/* Build the bed; 0 on success. tag makes names unique across binaries of one run. */
static inline int bed_up(char tag)
{
	int pid = getpid();
	int a = 100 + pid % 100, b = (pid / 100) % 250;
	snprintf(bed.ns, sizeof(bed.ns), "rfb%c%d", tag, pid);
	snprintf(bed.dev, sizeof(bed.dev), "rf%ca%d", tag, pid % 100000);
	snprintf(bed.peer, sizeof(bed.peer), "rf%cp%d", tag, pid % 100000);
	snprintf(bed.ip_drv, sizeof(bed.ip_drv), "10.%d.%d.2", a, b);
	snprintf(bed.ip_peer, sizeof(bed.ip_peer), "10.%d.%d.1", a, b);
	bed.up = true;
	if (bed_sh("ip netns add %s", bed.ns) ||
	    bed_sh("ip link add %s numrxqueues %u numtxqueues %u type veth peer name %s "
		   "numrxqueues %u numtxqueues %u", bed.dev, bed.queues ? bed.queues : 1,
		   bed.queues ? bed.queues : 1, bed.peer, bed.queues ? bed.queues : 1,
		   bed.queues ? bed.queues : 1) ||
	    bed_sh("ip link set %s netns %s", bed.peer, bed.ns) ||
	    bed_sh("ip -n %s addr add %s/24 dev %s", bed.ns, bed.ip_peer, bed.peer) ||
	    bed_sh("ip -n %s link set %s up && ip -n %s link set lo up", bed.ns, bed.peer, bed.ns) ||
	    bed_sh("ip link set %s up", bed.dev)) {
		bed_down();
		return -1;
	}
	return 0;
}

/* True when `ip link show dev` mentions an XDP program. */
static inline bool bed_xdp_attached(const char *dev)
{
	return bed_sh("ip link show dev %s 2>/dev/null | grep -q xdp", dev) == 0;
}

static inline double bed_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* In a forked child inside the peer netns: send n messages of size bytes (each carrying
 * its sequence number) to ip_drv:port one at a time, each echo checked byte for byte.
 * Returns the child's pid; its exit status is the number of bad/missing echoes (max 255). */
static inline pid_t bed_udp_client(unsigned port, unsigned n, unsigned size)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char path[96], msg[2048], got[2048];
	unsigned i, bad = 0, j;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	snprintf(path, sizeof(path), "/run/netns/%s", bed.ns);
	int nsfd = open(path, O_RDONLY);
	if (nsfd < 0 || setns(nsfd, CLONE_NEWNET) != 0)
		_exit(255);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, bed.ip_drv, &to.sin_addr);
	if (s < 0 || connect(s, (struct sockaddr *)&to, sizeof(to)) != 0)
		_exit(255);
	if (size > sizeof(msg))
		size = sizeof(msg);
	for (i = 0; i < n; i++) {
		struct pollfd pfd = {.fd = s, .events = POLLIN};
		for (j = 0; j < size; j++)
			msg[j] = (char)(i * 7 + j);
		memcpy(msg, &i, size < 4 ? size : 4);
		if (send(s, msg, size, 0) != (ssize_t)size) {
			bad++;
			continue;
		}
		/* The first message waits for ARP; 2 s is far above any echo. */
		if (poll(&pfd, 1, 2000) != 1 || recv(s, got, sizeof(got), 0) != (ssize_t)size ||
		    memcmp(got, msg, size) != 0)
			bad++;
	}
	_exit(bad > 254 ? 254 : (int)bad);
}

#endif
