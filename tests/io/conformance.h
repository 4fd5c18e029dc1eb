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

#endif
