/*
 * apps/openflow/controller/ctl_rest.c: the HTTP server of the control side (ctl_rest.h):
 * libevent's evhttp on its own event base, in its own thread. Every GET is rendered by
 * ctl_rest_render into a memory stream while the thread is QSBR-online, then sent. A 100 ms
 * timer watches the stop flag (evhttp has no thread-safe way in without libevent_pthreads).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <ringflow/qsbr.h>

#include "ctl_rest.h"

struct ctl_rest {
	struct event_base *base;
	struct evhttp *http;
	struct event *tick;
	pthread_t thread;
	atomic_bool stop;
	unsigned port;
	const struct ctl_rest_view *view;
};

static void on_request(struct evhttp_request *req, void *arg)
{
	struct ctl_rest *r = arg;
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		evhttp_send_error(req, 405, "only GET");
		return;
	}
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	const char *ctype;
	rf_qsbr_online(); /* reading the hashes: online until the copy is done */
	int status = ctl_rest_render(r->view, evhttp_request_get_uri(req), f, &ctype);
	rf_qsbr_offline();
	fclose(f);
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	evhttp_add_header(hdr, "Content-Type", ctype);
	evhttp_add_header(hdr, "Cache-Control", "no-store");
	struct evbuffer *buf = evbuffer_new();
	if (buf)
		evbuffer_add(buf, body, len);
	evhttp_send_reply(req, status, status == 200 ? "OK" : "Error", buf);
	if (buf)
		evbuffer_free(buf);
	free(body);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ctl_rest *r = arg;
	if (atomic_load_explicit(&r->stop, memory_order_relaxed)) /* join orders the rest */
		event_base_loopbreak(r->base);
}

static void *run(void *arg)
{
	struct ctl_rest *r = arg;
	rf_qsbr_register();
	rf_qsbr_offline(); /* blocks in epoll: offline except inside on_request */
	event_base_dispatch(r->base);
	rf_qsbr_online();
	rf_qsbr_unregister();
	return NULL;
}

struct ctl_rest *ctl_rest_start(const char *listen_at, const struct ctl_rest_view *v, char *err,
				size_t errlen)
{
	char host[64];
	const char *colon = strrchr(listen_at, ':');
	long port = colon ? strtol(colon + 1, NULL, 10) : -1;
	if (!colon || (size_t)(colon - listen_at) >= sizeof(host) || port < 0 || port > 65535) {
		snprintf(err, errlen, "--rest %s: use IPV4:PORT, e.g. 127.0.0.1:8080", listen_at);
		return NULL;
	}
	memcpy(host, listen_at, (size_t)(colon - listen_at));
	host[colon - listen_at] = '\0';
	struct ctl_rest *r = calloc(1, sizeof(*r));
	if (!r || !(r->base = event_base_new()) || !(r->http = evhttp_new(r->base))) {
		snprintf(err, errlen, "cannot set up libevent for the REST server");
		goto fail;
	}
	r->view = v;
	struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(r->http, host,
								      (uint16_t)port);
	if (!bs) {
		snprintf(err, errlen, "cannot listen on %s for the REST API: %s; pick a free port "
			 "with --rest", listen_at, strerror(errno));
		goto fail;
	}
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&a, &alen) == 0)
		r->port = ntohs(a.sin_port);
	evhttp_set_gencb(r->http, on_request, r);
	evhttp_set_timeout(r->http, 10);
	struct timeval tv = {0, 100000};
	r->tick = event_new(r->base, -1, EV_PERSIST, on_tick, r);
	if (!r->tick || event_add(r->tick, &tv) < 0 || pthread_create(&r->thread, NULL, run, r)) {
		snprintf(err, errlen, "cannot start the REST thread");
		goto fail;
	}
	return r;
fail:
	if (r && r->tick)
		event_free(r->tick);
	if (r && r->http)
		evhttp_free(r->http);
	if (r && r->base)
		event_base_free(r->base);
	free(r);
	return NULL;
}

unsigned ctl_rest_port(const struct ctl_rest *r)
{
	return r->port;
}

void ctl_rest_stop(struct ctl_rest *r)
{
	if (!r)
		return;
	atomic_store_explicit(&r->stop, true, memory_order_relaxed);
	pthread_join(r->thread, NULL);
	event_free(r->tick);
	evhttp_free(r->http);
	event_base_free(r->base);
	free(r);
}
