/* bench/fwd/sndbuf_shim.c: an LD_PRELOAD shim for the forwarding bed's generator (trafgen).
 *
 * trafgen sends from a TX_RING; once its frames queue on the other CPU (the forwarder's), the
 * kernel charges them to the socket's send buffer and trafgen aborts with "Flushing TX_RING
 * failed" when the namespace's default buffer (net.core.wmem_default, not settable inside a
 * namespace) is full. trafgen's own fix, raising the host-wide socket memory sysctls, is turned
 * off in the bed (trafgen -A: never change host settings). So this shim wraps socket(): every
 * AF_PACKET socket the process opens gets SO_SNDBUFFORCE (root only) of RF_SNDBUF bytes
 * (default 16 MiB). Nothing else changes; a failure is reported once on stderr and ignored. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

int socket(int domain, int type, int protocol)
{
	static int (*real_socket)(int, int, int);
	if (!real_socket)
		real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
	int fd = real_socket(domain, type, protocol);
	if (fd < 0 || domain != AF_PACKET)
		return fd;
	const char *env = getenv("RF_SNDBUF");
	int bytes = env ? atoi(env) : 16 << 20;
	if (bytes > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) != 0) {
		static int said;
		if (!said++)
			perror("sndbuf_shim: SO_SNDBUFFORCE");
	}
	return fd;
}
