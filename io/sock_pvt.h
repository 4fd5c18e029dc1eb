/*
 * io/sock_pvt.h: what the sockets drivers (sock_udp.c, sock_tcp.c; io_uring may reuse it)
 * share: their common config keys, opening a socket with one-line errors, and per-queue
 * counters kept by a single writer.
 */
#ifndef RINGFLOW_SOCK_PVT_H
#define RINGFLOW_SOCK_PVT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ringflow/io.h>

/* Keys rf_sock_opts_parse understands (io.c checks spec keys against a driver's list). */
#define RF_SOCK_KEYS "listen,connect,bind,busy_poll,rcvbuf,sndbuf"
#define RF_SOCK_TCP_KEYS RF_SOCK_KEYS ",nodelay,max_conns,timeout_ms"

struct rf_sock_opts {
	bool connect;                 /* connect=... (else listen=...) */
	struct sockaddr_storage addr; /* where to listen / connect */
	socklen_t alen;
	char addr_str[RF_IO_VAL_MAX]; /* as given, for messages */
	bool has_bind;                /* connect mode: bind=... first */
	struct sockaddr_storage bind_addr;
	socklen_t bind_len;
	char bind_str[RF_IO_VAL_MAX];
	uint32_t busy_poll_us;        /* SO_BUSY_POLL, 0 = off */
	uint32_t rcvbuf, sndbuf;      /* SO_RCVBUF/SO_SNDBUF, 0 = kernel default */
	bool nodelay;                 /* TCP_NODELAY (tcp, default on) */
	uint32_t max_conns;           /* tcp listen: connections per queue */
	uint32_t timeout_ms;          /* tcp connect: how long to wait for the handshake */
};

/* Parse the common socket keys of cfg. 0, or -EINVAL with one line in err. */
int rf_sock_opts_parse(const struct rf_io_config *cfg, struct rf_sock_opts *o, char *err,
		       size_t len);

/*
 * A non-blocking socket of type SOCK_DGRAM or SOCK_STREAM, options set, then bound (and
 * listening, for TCP) or connected (TCP: handshake done within timeout_ms). reuseport:
 * SO_REUSEPORT, for one socket per queue on the same port. Returns the fd, or -errno with
 * one line in err saying what failed and how to fix it (the socket is closed).
 */
int rf_sock_open(const struct rf_sock_opts *o, int type, bool reuseport, char *err, size_t len);


#endif /* RINGFLOW_SOCK_PVT_H */
