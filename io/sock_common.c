/*
 * io/sock_common.c: socket set-up shared by the UDP and TCP drivers.
 *
 * Everything a user can get wrong when opening a socket (port in use, an address this host
 * does not have, a privileged port, nothing listening, a missing capability) ends here, so
 * each errno is turned into one line that says what failed and how to fix it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "io_pvt.h"
#include "sock_pvt.h"

int rf_sock_opts_parse(const struct rf_io_config *cfg, struct rf_sock_opts *o, char *err,
		       size_t len)
{
	const char *d = cfg->driver;
	const char *lis = rf_io_config_get(cfg, "listen"), *con = rf_io_config_get(cfg, "connect");
	memset(o, 0, sizeof(*o));
	if (!!lis == !!con)
		return rf_io_err(err, len, "%s: give exactly one of listen=IP:PORT or connect=IP:PORT "
				 "(e.g. %s:listen=0.0.0.0:9000)", d, d);
	o->connect = con != NULL;
	int rc = rf_io_config_get_addr(cfg, o->connect ? "connect" : "listen", &o->addr, &o->alen,
				       err, len);
	if (rc)
		return rc;
	snprintf(o->addr_str, sizeof(o->addr_str), "%s", o->connect ? con : lis);
	rc = rf_io_config_get_addr(cfg, "bind", &o->bind_addr, &o->bind_len, err, len);
	if (rc == 0) {
		if (!o->connect)
			return rf_io_err(err, len, "%s: bind= is for connect mode; in listen mode "
					 "listen= is the local address", d);
		if (o->bind_addr.ss_family != o->addr.ss_family)
			return rf_io_err(err, len, "%s: bind= and connect= must both be IPv4 or both IPv6", d);
		o->has_bind = true;
		snprintf(o->bind_str, sizeof(o->bind_str), "%s", rf_io_config_get(cfg, "bind"));
	} else if (rc != -ENOENT) {
		return rc;
	}
	if ((rc = rf_io_config_get_u32(cfg, "busy_poll", 0, 0, 1000000, &o->busy_poll_us, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "rcvbuf", 0, 0, 1u << 30, &o->rcvbuf, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "sndbuf", 0, 0, 1u << 30, &o->sndbuf, err, len)) ||
	    (rc = rf_io_config_get_bool(cfg, "nodelay", true, &o->nodelay, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "max_conns", 256, 1, 65536, &o->max_conns, err, len)) ||
	    (rc = rf_io_config_get_u32(cfg, "timeout_ms", 3000, 1, 600000, &o->timeout_ms, err, len)))
		return rc;
	return 0;
}

static const char *proto(int type)
{
	return type == SOCK_STREAM ? "tcp" : "udp";
}

/* The one line for a failed bind() or connect(). */
static int sock_errline(const struct rf_sock_opts *o, int type, const char *what, int e,
			char *err, size_t len)
{
	const char *p = proto(type), *a = o->addr_str;
	switch (e) {
	case EADDRINUSE:
		rf_io_err(err, len, "%s: cannot %s %s: address already in use: stop the process "
			  "holding that port (ss -lnp | grep %s) or pick another port", p, what, a, a);
		break;
	case EADDRNOTAVAIL:
		rf_io_err(err, len, "%s: cannot %s %s: not an address of this host: use one of its "
			  "addresses (ip -br addr) or 0.0.0.0", p, what, a);
		break;
	case EACCES:
	case EPERM:
		rf_io_err(err, len, "%s: cannot %s %s: %s: ports below 1024 need root "
			  "(CAP_NET_BIND_SERVICE): use a port >= 1024 or run as root", p, what, a,
			  strerror(e));
		break;
	case ECONNREFUSED:
		rf_io_err(err, len, "%s: cannot connect to %s: connection refused (nothing listens "
			  "there): start the server first or fix the address", p, a);
		break;
	case ETIMEDOUT:
		rf_io_err(err, len, "%s: cannot connect to %s: no answer within %u ms: check the "
			  "address and that the peer is up (or raise timeout_ms)", p, a, o->timeout_ms);
		break;
	case ENETUNREACH:
	case EHOSTUNREACH:
		rf_io_err(err, len, "%s: cannot %s %s: %s: check the address and the routes "
			  "(ip route)", p, what, a, strerror(e));
		break;
	default:
		rf_io_err(err, len, "%s: cannot %s %s: %s", p, what, a, strerror(e));
	}
	return -e;
}

/* Non-blocking TCP connect, waiting up to timeout_ms for the handshake. 0 or errno. */
static int tcp_connect_wait(int fd, const struct rf_sock_opts *o)
{
	if (connect(fd, (const struct sockaddr *)&o->addr, o->alen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int r;
	do
		r = poll(&pfd, 1, (int)o->timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno;
	if (r == 0)
		return ETIMEDOUT;
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
		return errno;
	return soerr;
}

int rf_sock_open(const struct rf_sock_opts *o, int type, bool reuseport, char *err, size_t len)
{
	const char *p = proto(type);
	int one = 1;
	int fd = socket(o->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		rf_io_err(err, len, "%s: cannot create a socket: %s", p, strerror(e));
		return -e;
	}
	int e = 0;
	const char *opt = NULL;
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0)
		opt = "SO_REUSEPORT";
	else if (type == SOCK_STREAM && !o->connect &&
		 setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
		opt = "SO_REUSEADDR";
	else if (o->rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof(int)) != 0)
		opt = "SO_RCVBUF";
	else if (o->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf, sizeof(int)) != 0)
		opt = "SO_SNDBUF";
	else if (type == SOCK_STREAM && o->nodelay &&
		 setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		opt = "TCP_NODELAY";
	else if (o->busy_poll_us &&
		 setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o->busy_poll_us, sizeof(int)) != 0) {
		e = errno;
		close(fd);
		if (e == EPERM)
			rf_io_err(err, len, "%s: busy_poll=%u needs CAP_NET_ADMIN: run as root or leave "
				  "busy_poll out", p, o->busy_poll_us);
		else
			rf_io_err(err, len, "%s: SO_BUSY_POLL: %s", p, strerror(e));
		return -e;
	}
	if (opt) {
		e = errno;
		close(fd);
		rf_io_err(err, len, "%s: setsockopt %s: %s", p, opt, strerror(e));
		return -e;
	}
	if (o->connect) {
		if (o->has_bind && bind(fd, (const struct sockaddr *)&o->bind_addr, o->bind_len) != 0) {
			e = errno;
			close(fd);
			struct rf_sock_opts b = *o; /* the message names the bind address */
			memcpy(b.addr_str, o->bind_str, sizeof(b.addr_str));
			return sock_errline(&b, type, "bind to", e, err, len);
		}
		e = type == SOCK_STREAM ? tcp_connect_wait(fd, o)
			: connect(fd, (const struct sockaddr *)&o->addr, o->alen) == 0 ? 0 : errno;
		if (e) {
			close(fd);
			return sock_errline(o, type, "connect to", e, err, len);
		}
		return fd;
	}
	if (bind(fd, (const struct sockaddr *)&o->addr, o->alen) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 1024) != 0)) {
		e = errno;
		close(fd);
		return sock_errline(o, type, "listen on", e, err, len);
	}
	return fd;
}

