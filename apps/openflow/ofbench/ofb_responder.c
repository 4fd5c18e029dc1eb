/*
 * apps/openflow/ofbench/ofb_responder.c: the trivial controller behind `ringflow-ofbench
 * --responder`. The protocol's session (of_session.h) does the handshake and connect-time
 * setup; the app answers every PACKET_IN with one PACKET_OUT (flood), nothing else: no
 * tables, no learning. Its only job is to show
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
#include "of_session.h"
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

/* The app of this trivial controller: PACKET_IN -> PACKET_OUT flood, nothing else. */
static bool on_message(void *arg, struct of_session *s, const struct of_msg *m,
		       const uint8_t *raw, size_t raw_len, struct of_out *out)
{
	struct ofb_live *live = arg;
	(void)raw;
	(void)raw_len;
	if (m->type == OF_ERROR)
		OFB_LIVE_ADD(live, errors, 1);
	if (m->type != OF_PACKET_IN)
		return true;
	OFB_LIVE_ADD(live, packet_ins, 1);
	const struct of_packet_in *pi = &m->u.packet_in;
	bool unbuffered = pi->buffer_id == OFP_NO_BUFFER;
	ssize_t n = of_build_packet_out(out->p + out->len, out->cap - out->len, s->framer.version,
					m->xid, pi->buffer_id,
					pi->match.fields & OF_MATCH_IN_PORT ? pi->match.in_port
									    : OFPP_CONTROLLER,
					OFPP_FLOOD, unbuffered ? pi->data : NULL,
					unbuffered ? pi->data_len : 0);
	if (n > 0) {
		out->len += (size_t)n;
		OFB_LIVE_ADD(live, responses, 1);
	}
	return true;
}

/* Runs the session over what conn c has received; false when it must be closed. */
static bool serve(struct ofb_conn *c, struct of_session *s, struct ofb_live *live)
{
	size_t room;
	uint8_t *q = ofb_conn_reserve(c, OF_MAX_MSG_LEN, &room);
	if (!q)
		return true; /* the switch is not reading; read no more until it does */
	struct of_out out = {.p = q, .cap = room, .len = 0};
	bool close;
	c->rx_off += of_session_input(s, c->rx + c->rx_off, c->rx_len - c->rx_off, on_message,
				      live, &out, &close);
	ofb_conn_commit(c, out.len);
	return !close;
}

int ofb_responder_run(int lfd, double max_s, bool busy, atomic_bool *stop,
		      struct ofb_live *live)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct ofb_conn *conns = calloc(MAX_CONNS, sizeof(*conns));
	struct of_session *sessions = calloc(MAX_CONNS, sizeof(*sessions));
	if (ep < 0 || !conns || !sessions) {
		if (ep >= 0)
			close(ep);
		free(conns);
		free(sessions);
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
				struct of_out out = {.p = q, .cap = room, .len = 0};
				of_session_start(&sessions[k], 0, 0, &out);
				OFB_LIVE_ADD(live, switches_up, 1);
				ofb_conn_commit(&conns[k], out.len);
				ofb_conn_flush(&conns[k]);
				continue;
			}
			struct ofb_conn *c = &conns[id];
			bool dead = ofb_conn_read(c) < 0 || !serve(c, &sessions[id], live);
			if (ofb_conn_flush(c) < 0 || dead) {
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				ofb_conn_close(c);
				OFB_LIVE_ADD(live, switches_up, (uint64_t)-1);
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
	free(sessions);
	close(ep);
	close(lfd);
	return 0;
}
