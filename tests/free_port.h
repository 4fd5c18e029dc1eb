/*
 * tests/free_port.h: a port on 127.0.0.1 that is free now (a throw-away socket of that type
 * bound to port 0, read back, released), so every test run listens on its own port and runs
 * can go in parallel (each test runs in its own process: fixed or pid-derived ports could
 * collide). Test files only (it asserts with Criterion).
 */
#ifndef RINGFLOW_TEST_FREE_PORT_H
#define RINGFLOW_TEST_FREE_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* A free port for sockets of type (SOCK_STREAM, SOCK_DGRAM). */
static inline uint16_t free_port_of(int type)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* A free TCP port. */
static inline uint16_t free_port(void)
{
	return free_port_of(SOCK_STREAM);
}

#endif /* RINGFLOW_TEST_FREE_PORT_H */
