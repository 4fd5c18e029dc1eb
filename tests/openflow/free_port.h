/*
 * tests/openflow/free_port.h: a TCP port on 127.0.0.1 that is free now (bound, read back,
 * released), so every test run listens on its own port and runs can go in parallel. Test
 * files only (it asserts with Criterion).
 */
#ifndef RINGFLOW_TEST_FREE_PORT_H
#define RINGFLOW_TEST_FREE_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static inline uint16_t free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	close(fd);
	return ntohs(a.sin_port);
}

#endif /* RINGFLOW_TEST_FREE_PORT_H */
