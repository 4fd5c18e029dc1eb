/*
 * apps/openflow/ofbench/ofb_responder.c: the trivial controller behind `ringflow-ofbench
 * --responder`. It does the controller half of the handshake and answers every PACKET_IN
 * with one PACKET_OUT (flood), nothing else: no tables, no learning. Its only job is to show
 * the generator's own ceiling on this machine, so a figure measured against a real
 * controller can be read against it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ofb.h"
#include "ofb_conn.h"

#define MAX_CONNS 1024

int ofb_responder_listen(const char *host, uint16_t port, uint16_t *bound)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -EINVAL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	socklen_t len = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*bound = ntohs(a.sin_port);
	return fd;
}

static void queue(struct ofb_conn *c, const struct of_msg *m)
{
	size_t room;
	uint8_t *q = ofb_conn_reserve(c, 2048, &room);
	if (!q)
		return; /* the switch is not reading: drop rather than buffer without bound */
	ssize_t n = of_serialize(m, q, room);
	if (n > 0)
		ofb_conn_commit(c, (size_t)n);
}

static void handle(struct ofb_conn *c, const uint8_t *b, size_t len, bool *dead)
{
	struct of_msg m, out;
	struct of_fault f;
	size_t room;
	uint8_t *q;
	ssize_t n;
	if (of_parse(b, len, &m, &f) != 0) {
		q = ofb_conn_reserve(c, 128, &room);
		uint8_t v = c->framer.version ? c->framer.version : b[0];
		n = q ? of_build_error_reply(q, room, v, &f, b, len) : -1;
		if (n > 0)
			ofb_conn_commit(c, (size_t)n);
		*dead = f.close;
		return;
	}
	memset(&out, 0, sizeof(out));
	out.version = m.version;
	out.xid = m.xid;
	switch (m.type) {
	case OF_HELLO: {
		int v = of_negotiate(OF_VERSIONS_SUPPORTED, &m);
		if (v < 0) {
			q = ofb_conn_reserve(c, 128, &room);
			n = q ? of_build_error(q, room, m.version, m.xid, OFPET_HELLO_FAILED,
					       OFPHFC_INCOMPATIBLE, NULL, 0) : -1;
			if (n > 0)
				ofb_conn_commit(c, (size_t)n);
			*dead = true;
			return;
		}
		c->framer.version = (uint8_t)v;
		q = ofb_conn_reserve(c, 256, &room);
		n = of_build_simple(q, room, (uint8_t)v, OF_FEATURES_REQUEST, 1);
		if (n > 0)
			ofb_conn_commit(c, (size_t)n);
		if (v == OF_VERSION_1_3) {
			q = ofb_conn_reserve(c, 256, &room);
			n = of_build_table_miss(q, room, 2);
			if (n > 0)
				ofb_conn_commit(c, (size_t)n);
		}
		return;
	}
	case OF_ECHO_REQUEST:
		out.type = OF_ECHO_REPLY;
		out.u.echo = m.u.echo;
		queue(c, &out);
		return;
	case OF_PACKET_IN: {
		const struct of_packet_in *pi = &m.u.packet_in;
		bool unbuffered = pi->buffer_id == OFP_NO_BUFFER;
		q = ofb_conn_reserve(c, 2048, &room);
		if (!q)
			return;
		n = of_build_packet_out(q, room, m.version, m.xid, pi->buffer_id,
					pi->match.fields & OF_MATCH_IN_PORT ? pi->match.in_port
									    : OFPP_CONTROLLER,
					OFPP_FLOOD, unbuffered ? pi->data : NULL,
					unbuffered ? pi->data_len : 0);
		if (n > 0)
			ofb_conn_commit(c, (size_t)n);
		return;
	}
	default:
		return;
	}
}

int ofb_responder_run(int lfd, double max_s, bool busy, atomic_bool *stop)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct ofb_conn *conns = calloc(MAX_CONNS, sizeof(*conns));
	if (ep < 0 || !conns) {
		if (ep >= 0)
			close(ep);
		free(conns);
		close(lfd);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = MAX_CONNS};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	uint64_t end = max_s > 0 ? ofb_now_ns() + (uint64_t)(max_s * 1e9) : UINT64_MAX;
	while (!atomic_load_explicit(stop, memory_order_relaxed) && ofb_now_ns() < end) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, busy ? 0 : 50);
		for (int i = 0; i < n; i++) {
			uint32_t id = evs[i].data.u32;
			if (id == MAX_CONNS) {
				int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
				unsigned k = 0;
				while (fd >= 0 && k < MAX_CONNS && conns[k].fd >= 0)
					k++;
				if (fd < 0)
					continue;
				if (k == MAX_CONNS || ofb_conn_init(&conns[k], fd) < 0) {
					close(fd);
					continue;
				}
				int one = 1;
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				struct epoll_event cev = {.events = EPOLLIN, .data.u32 = k};
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
				size_t room;
				uint8_t *q = ofb_conn_reserve(&conns[k], 64, &room);
				ssize_t hl = of_build_hello(q, room, OF_VERSION_1_3, 0,
							    OF_VERSIONS_SUPPORTED);
				ofb_conn_commit(&conns[k], (size_t)hl);
				ofb_conn_flush(&conns[k]);
				continue;
			}
			struct ofb_conn *c = &conns[id];
			bool dead = ofb_conn_read(c) < 0;
			const uint8_t *msg;
			size_t len;
			int bad, rc = 0;
			struct of_fault f;
			while (!dead && (rc = ofb_conn_next(c, &msg, &len, &bad, &f)) > 0) {
				if (bad)
					continue; /* wrong version after HELLO: skip it */
				handle(c, msg, len, &dead);
			}
			if (!dead && rc < 0)
				dead = true;
			if (ofb_conn_flush(c) < 0 || dead) {
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				ofb_conn_close(c);
			}
		}
		for (unsigned k = 0; k < MAX_CONNS; k++) /* leftovers a full socket refused */
			if (conns[k].fd >= 0 && ofb_conn_pending(&conns[k]))
				ofb_conn_flush(&conns[k]);
	}
	for (unsigned k = 0; k < MAX_CONNS; k++)
		if (conns[k].fd >= 0 || conns[k].rx)
			ofb_conn_close(&conns[k]);
	free(conns);
	close(ep);
	close(lfd);
	return 0;
}
