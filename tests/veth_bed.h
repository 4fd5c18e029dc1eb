/*
 * tests/veth_bed.h: the veth bed the frame tests share (tests/io/test_io_frames.c,
 * tests/io/test_packet_outgoing.c, tests/xdp/test_offload.c): a network namespace of the
 * test's own (unshare(CLONE_NEWNET): it goes away with the test's process however it ends;
 * Criterion runs each test in its own process), two veth pairs in it, and AF_PACKET sockets
 * that inject into one pair and capture from the other:
 *
 *   injector a0 ==veth== a1 [port A] --the test's ports--> [port B] b1 ==veth== b0 capture
 *
 * Interface names carry a per-file tag and the PID, so runs can go in parallel. Test files
 * only (it asserts and skips with Criterion). bed_sh (a formatted shell command) serves
 * tests/bypass_bed.h too.
 */
#ifndef RINGFLOW_TEST_VETH_BED_H
#define RINGFLOW_TEST_VETH_BED_H

#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct veth_bed {
	char a0[16], a1[16], b0[16], b1[16];
	int sa, sb; /* AF_PACKET sockets on a0 (inject) and b0 (capture) */
	bool up;
};
#define VETH_BED_INIT {.sa = -1, .sb = -1}

/* Runs a shell command made from fmt; its exit status as system() gives it. */
static inline int bed_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int bed_sh(const char *fmt, ...)
{
	char cmd[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Monotonic seconds, for bounded waits. */
static inline double bed_now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Writes v to a /proc or /sys file if it exists. */
static inline void bed_write_file(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		cr_assert_eq(write(fd, v, strlen(v)), (ssize_t)strlen(v));
		close(fd);
	}
}

/* Skips unless root with the ip tool (`needs` says what for), then moves the test's process
 * into a new network namespace with IPv6 off (no router solicitations in the capture). */
static inline void bed_netns(const char *needs)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: %s", needs);
	if (system("command -v ip >/dev/null 2>&1") != 0)
		cr_skip_test("needs the ip tool (Debian package iproute2)");
	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	bed_write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	bed_write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
}

/* A raw socket bound to ifname that sees every frame received there (not its own sends),
 * VLAN tags in PACKET_AUXDATA, with room for every frame of a test (the capture never drops). */
static inline int bed_packet_socket(const char *ifname)
{
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)), one = 1;
	struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	cr_assert(s >= 0, "packet socket: %s", strerror(errno));
	a.sll_ifindex = (int)if_nametoindex(ifname);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0, "bind %s", ifname);
	setsockopt(s, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	setsockopt(s, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
	int big = 8 << 20;
	setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	return s;
}

/* In the namespace bed_netns made: the two pairs named rf<tag>{a0,a1,b0,b1}<pid>, `queues`
 * queues each (0: the kernel's default), the A pair's MTU mtu_a (0: the default), all up
 * (waited for, bounded: until linkwatch reports a new link up, its qdisc drops what is
 * sent), sockets on a0 and b0. */
static inline void veth_bed_up(struct veth_bed *b, char tag, unsigned queues, unsigned mtu_a)
{
	char q[64] = "";
	if (queues)
		snprintf(q, sizeof(q), "numrxqueues %u numtxqueues %u", queues, queues);
	int pid = (int)getpid() % 100000;
	snprintf(b->a0, sizeof(b->a0), "rf%ca0%d", tag, pid);
	snprintf(b->a1, sizeof(b->a1), "rf%ca1%d", tag, pid);
	snprintf(b->b0, sizeof(b->b0), "rf%cb0%d", tag, pid);
	snprintf(b->b1, sizeof(b->b1), "rf%cb1%d", tag, pid);
	b->up = true;
	cr_assert_eq(bed_sh("set -e; ip link set lo up;"
			    "ip link add %1$s %5$s type veth peer name %2$s %5$s;"
			    "ip link add %3$s %5$s type veth peer name %4$s %5$s;"
			    "if [ %6$u -ne 0 ]; then ip link set %1$s mtu %6$u; ip link set %2$s mtu %6$u; fi;"
			    "for d in %1$s %2$s %3$s %4$s; do ip link set $d up; done",
			    b->a0, b->a1, b->b0, b->b1, q, mtu_a),
		     0, "cannot build the veth bed");
	int up = 1;
	for (int i = 0; i < 100 && (up = bed_sh("for d in %s %s %s %s; do ip -o link show $d | "
						"grep -q 'state UP' || exit 1; done",
						b->a0, b->a1, b->b0, b->b1)) != 0; i++)
		usleep(50000);
	cr_assert_eq(up, 0, "the veths never came up");
	b->sa = bed_packet_socket(b->a0);
	b->sb = bed_packet_socket(b->b0);
}

/* Closes the sockets and deletes the pairs (a courtesy: the namespace goes with the process). */
static inline void veth_bed_down(struct veth_bed *b)
{
	if (b->sa >= 0)
		close(b->sa);
	if (b->sb >= 0)
		close(b->sb);
	b->sa = b->sb = -1;
	if (b->up) {
		bed_sh("ip link del %s 2>/dev/null; ip link del %s 2>/dev/null", b->a0, b->b0);
		b->up = false;
	}
}

/* One frame from packet socket s if one is there now: its length, or -1. The kernel takes a
 * VLAN tag out of the frame before a packet socket sees it (into PACKET_AUXDATA): put it back. */
static inline ssize_t bed_grab(int s, uint8_t *buf, size_t cap)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} c;
	struct iovec iov = {buf + 4, cap - 4};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &c,
			   .msg_controllen = sizeof(c)};
	ssize_t r = recvmsg(s, &m, MSG_DONTWAIT);
	if (r < 0)
		return r;
	memmove(buf, buf + 4, (size_t)r);
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		struct tpacket_auxdata a;
		if (h->cmsg_level != SOL_PACKET || h->cmsg_type != PACKET_AUXDATA)
			continue;
		memcpy(&a, CMSG_DATA(h), sizeof(a));
		if (!(a.tp_status & TP_STATUS_VLAN_VALID) || r < 12 || (size_t)r + 4 > cap)
			continue;
		uint16_t tpid = a.tp_status & TP_STATUS_VLAN_TPID_VALID ? a.tp_vlan_tpid : 0x8100;
		memmove(buf + 16, buf + 12, (size_t)r - 12);
		buf[12] = (uint8_t)(tpid >> 8);
		buf[13] = (uint8_t)tpid;
		buf[14] = (uint8_t)(a.tp_vlan_tci >> 8);
		buf[15] = (uint8_t)a.tp_vlan_tci;
		r += 4;
	}
	return r;
}

#endif /* RINGFLOW_TEST_VETH_BED_H */
