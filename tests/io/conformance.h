/*
 * tests/io/conformance.h: the table of backends the driver conformance suite runs against.
 *
 * The suite (test_io_conformance.c) is written once; every driver is one row here. A row's
 * spec is a template: {ip} and {port} are replaced by the server's address, {dev} by the
 * server-side interface (netns tests only). The test client is a plain kernel socket of
 * `proto`, so it checks the driver against the real protocol, not against itself.
 * Adding a driver: add a row (a driver absent on this machine is skipped with its reason).
 */
#ifndef RINGFLOW_TESTS_IO_CONFORMANCE_H
#define RINGFLOW_TESTS_IO_CONFORMANCE_H

#include <stdbool.h>
#include <sys/socket.h>

struct backend_row {
	const char *name;     /* for messages */
	const char *driver;   /* registry name, to skip rows whose driver is absent */
	const char *spec;     /* template, see above */
	int proto;            /* SOCK_DGRAM or SOCK_STREAM: what the test client speaks */
	bool loopback;        /* also runs over lo (raw drivers need a real interface) */
};

static const struct backend_row backend_rows[] = {
	{"udp", "udp", "udp:listen={ip}:{port}", SOCK_DGRAM, true},
	{"udp-opts", "udp", "udp:listen={ip}:{port},rcvbuf=262144,sndbuf=262144", SOCK_DGRAM, true},
	{"tcp", "tcp", "tcp:listen={ip}:{port}", SOCK_STREAM, true},
	/* io_uring (echo-bench): rows below this line */
	{"uring-udp", "uring", "uring:udp:listen={ip}:{port}", SOCK_DGRAM, true},
	{"uring-udp-single", "uring", "uring:udp:listen={ip}:{port},multishot=0", SOCK_DGRAM, true},
	{"uring-udp-sqpoll", "uring", "uring:udp:listen={ip}:{port},sqpoll=1", SOCK_DGRAM, true},
	{"uring-tcp", "uring", "uring:tcp:listen={ip}:{port}", SOCK_STREAM, true},
	{"uring-tcp-single", "uring", "uring:tcp:listen={ip}:{port},multishot=0", SOCK_STREAM, true},

	/* AF_XDP, DPDK (bypass): rows below this line */
	{"xdp-skb", "xdp", "xdp:dev={dev},ip={ip},port={port},mode=skb", SOCK_DGRAM, false},
	{"xdp-native", "xdp", "xdp:dev={dev},ip={ip},port={port},mode=native", SOCK_DGRAM, false},
	{"xdp-small-rings", "xdp", "xdp:dev={dev},port={port},fill=64,comp=64,rx=64,tx=64",
	 SOCK_DGRAM, false},
	{"dpdk-af_packet", "dpdk", "dpdk:vdev=net_af_packet0,iface={dev},ip={ip},port={port}",
	 SOCK_DGRAM, false},
	{"dpdk-af_xdp", "dpdk", "dpdk:vdev=net_af_xdp0,iface={dev},ip={ip},port={port}",
	 SOCK_DGRAM, false},

};

#define N_BACKENDS (sizeof(backend_rows) / sizeof(backend_rows[0]))

/*
 * Frame-mode drivers (test_io_frames.c): each row opens two ports, {dev} replaced by the
 * interface and {n} by the port's index (DPDK vdev names must differ). `hw_queues`: the
 * driver binds to the interface's own queues, so more queues than it has is an error
 * (AF_PACKET fanout makes any number); `cuts_long`: frames longer than a buffer are dropped
 * and counted by the driver (not cut short), else an interface whose MTU lets such frames
 * through is refused at open (the PMD would cut them); `mq`: queues=2 works on a veth
 * (DPDK's net_af_xdp wants "combined" channels, which a veth does not have); `pmd_fd_leak`:
 * fds a closed port leaves open (DPDK 22.11's net_af_xdp never deletes its libxdp UMEM: its
 * socket stays open and bound, with two BPF fds: tests/dpdk/lsan.supp, docs/backends.md);
 * `spreads`: with queues=2 on a 2-queue veth,
 * flows land on both queues (not skb-mode XDP: a veth records no rx queue for the generic
 * XDP hook, so every frame meets the program as queue 0's).
 */
struct frame_row {
	const char *name, *driver, *spec;
	bool hw_queues, cuts_long, mq;
	int pmd_fd_leak;
	bool spreads;
};

static const struct frame_row frame_rows[] = {
	{"xdp-skb", "xdp", "xdp:dev={dev},mode=skb,frames=1", true, true, true, 0, false},
	{"xdp-native", "xdp", "xdp:dev={dev},mode=native,frames=1", true, true, true, 0, true},
	{"dpdk-af_packet", "dpdk", "dpdk:vdev=net_af_packet{n},iface={dev},frames=1", false, false,
	 true, 0, true},
	{"dpdk-af_xdp", "dpdk", "dpdk:vdev=net_af_xdp{n},iface={dev},frames=1", true, false, false,
	 3, true},
	{"packet", "packet", "packet:dev={dev},frames=1", false, true, true, 0, true},
	{"packet-send-ring", "packet", "packet:dev={dev},frames=1,send=ring", false, true, true, 0,
	 true},
};

#define N_FRAME_ROWS (sizeof(frame_rows) / sizeof(frame_rows[0]))

#endif
