/*
 * apps/openflow/controller/ofc_rest.c: the HTTP server of the control side (ofc_rest.h):
 * libevent's evhttp on its own event base, in its own thread. Every GET is rendered by
 * ofc_rest_render into a memory stream while the thread is QSBR-online, then sent. A 20 ms
 * timer watches the stop flag (evhttp has no thread-safe way in without libevent_pthreads),
 * the connections' deadlines and the flow requests waiting for a switch.
 *
 * Defences (docs/openflow.md, "Limits and defences"): evhttp makes each connection's
 * bufferevent through our callback (evhttp_set_bevcb), which keeps a reference to it: so we
 * count the connections (at OFC_REST_MAX_CONNS the listener pauses: new ones wait in the
 * kernel's backlog), see when evhttp lets one go (its callbacks are cleared: then we drop our
 * reference, which closes it), and shut down any open longer than OFC_REST_DEADLINE_MS (a slow
 * sender). When accept runs out of fds, the listener pauses for ACCEPT_BACKOFF_MS instead of
 * spinning on the pending connection (and logging each time). evhttp caps the
 * headers (OFC_REST_MAX_HEADERS) and bodies (OFC_REST_MAX_BODY: none is wanted; a bigger one
 * gets 413 as soon as its Content-Length is read) and allows GET and HEAD only. A request
 * must name an IP literal or localhost as its Host (and Origin, if any): a page of another
 * site cannot reach us through DNS rebinding. With --rest-token, every request carries the
 * token (Authorization: Bearer, or ?token= for the page), compared in constant time.
 * GET /api/flows/{dpid} never blocks the thread: the request waits in a queue for the
 * switch's answer (ofc_flows.c), up to OFC_REST_FLOWS_MS, while others are served.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include <ringflow/qsbr.h>

#include "ofc_rest.h"

#define TICK_MS 20
#define ACCEPT_BACKOFF_MS 100 /* accept paused this long when out of fds */
#define PENDING_MAX 16        /* /api/flows requests waiting for a switch */

struct rest_conn {
	struct bufferevent *bev; /* NULL: free; else we hold a reference */
	uint64_t opened_ms;
	bool shut, seen;         /* seen: src is known */
	struct sockaddr_storage src;
};

struct pending {
	struct evhttp_request *req; /* NULL: the client went away */
	uint8_t be[8];
	uint64_t deadline_ms;
};

struct ofc_rest {
	struct event_base *base;
	struct evhttp *http;
	struct event *tick;
	struct evconnlistener *listener; /* evhttp's */
	pthread_t thread;
	atomic_bool stop;
	unsigned port;
	const struct ofc_rest_view *view;
	char token[256];
	size_t token_len; /* 0: no token asked */
	struct rest_conn conns[OFC_REST_MAX_CONNS];
	unsigned nconns;
	struct pending pend[PENDING_MAX];
	unsigned npend;
	bool posted; /* pend[0] is in the flows mailbox */
	bool accept_paused, at_cap;
	uint64_t accept_resume_ms;
	struct ofc_rest_stats st;
};

static struct ofc_ratelog libevent_log;

/* libevent's own warnings (e.g. a failing accept), at most one line per 5 s. */
static void log_cb(int severity, const char *msg)
{
	uint64_t sup;
	if (severity >= EVENT_LOG_WARN && ofc_ratelog_ok(&libevent_log, ofc_now_ms(), &sup))
		fprintf(stderr, "ringflow-controller: REST: %s; %llu more such lines held back\n",
			msg, (unsigned long long)sup);
}

/* ---- checks ------------------------------------------------------------------------------- */

/* An IP literal (v4, or v6 in brackets) or localhost, with an optional :port. */
static bool host_ok(const char *h, size_t n)
{
	char s[64];
	if (n == 0 || n >= sizeof(s))
		return false;
	memcpy(s, h, n);
	s[n] = '\0';
	char *end = s + n;
	if (s[0] == '[') {
		char *rb = strchr(s, ']');
		if (!rb || (rb[1] && rb[1] != ':'))
			return false;
		*rb = '\0';
		struct in6_addr a6;
		return inet_pton(AF_INET6, s + 1, &a6) == 1;
	}
	char *colon = strchr(s, ':');
	if (colon) {
		for (char *p = colon + 1; p < end; p++)
			if (*p < '0' || *p > '9')
				return false;
		*colon = '\0';
	}
	struct in_addr a4;
	return !strcmp(s, "localhost") || inet_pton(AF_INET, s, &a4) == 1;
}

static bool origin_ok(const char *o)
{
	if (!strcmp(o, "null"))
		return false;
	const char *p = !strncmp(o, "http://", 7) ? o + 7 : !strncmp(o, "https://", 8) ? o + 8 : NULL;
	return p && host_ok(p, strlen(p));
}

/* Constant time in the length of the token (the attacker's guess is not the loop bound). */
static bool token_eq(const char *want, size_t wlen, const char *got, size_t glen)
{
	unsigned char d = (unsigned char)(wlen != glen);
	for (size_t i = 0; i < wlen; i++)
		d |= (unsigned char)(want[i] ^ (i < glen ? got[i] : 0));
	return d == 0;
}

static bool token_ok(const struct ofc_rest *r, struct evhttp_request *req)
{
	if (!r->token_len)
		return true;
	const char *a = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	if (a && !strncmp(a, "Bearer ", 7))
		return token_eq(r->token, r->token_len, a + 7, strlen(a + 7));
	const char *q = strchr(evhttp_request_get_uri(req), '?');
	for (const char *p = q; p; p = strchr(p + 1, '&')) {
		if (strncmp(p + 1, "token=", 6))
			continue;
		const char *v = p + 7, *e = strchr(v, '&');
		return token_eq(r->token, r->token_len, v, e ? (size_t)(e - v) : strlen(v));
	}
	return false;
}

static void send_json(struct evhttp_request *req, int status, const char *reason,
		      const char *body, size_t len, const char *ctype)
{
	struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
	evhttp_add_header(hdr, "Content-Type", ctype);
	evhttp_add_header(hdr, "Cache-Control", "no-store");
	evhttp_add_header(hdr, "X-Content-Type-Options", "nosniff");
	struct evbuffer *buf = evbuffer_new();
	if (buf)
		evbuffer_add(buf, body, len);
	evhttp_send_reply(req, status, reason, buf);
	if (buf)
		evbuffer_free(buf);
}

static void refuse(struct ofc_rest *r, struct evhttp_request *req, int status,
		   const char *reason, const char *msg)
{
	r->st.rejected++;
	char body[256];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", msg);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
	send_json(req, status, reason, body, (size_t)n, "application/json");
}

/* ---- requests ----------------------------------------------------------------------------- */

static void render_reply(struct ofc_rest *r, struct evhttp_request *req, const uint8_t *be,
			 const char *json, bool truncated, const char *err)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	const char *ctype = "application/json";
	int status;
	rf_qsbr_online(); /* reading the hashes: online until the copy is done */
	if (be)
		status = ofc_rest_render_flows(r->view, be, json, truncated, err, f);
	else
		status = ofc_rest_render(r->view, evhttp_request_get_uri(req), f, &ctype);
	rf_qsbr_offline();
	fclose(f);
	if (status == OFC_REST_ASYNC) { /* cannot happen: flows requests are queued first */
		free(body);
		evhttp_send_error(req, 500, "internal");
		return;
	}
	send_json(req, status, status == 200 ? "OK" : "Error", body, len, ctype);
	free(body);
}

/* The client of a queued request went away: forget the request (evhttp frees it). */
static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
	struct ofc_rest *r = arg;
	for (unsigned i = 0; i < r->npend; i++)
		if (r->pend[i].req && evhttp_request_get_connection(r->pend[i].req) == evcon)
			r->pend[i].req = NULL;
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct ofc_rest *r = arg;
	r->st.requests++;
	if (evhttp_request_get_response_code(req) == 413) { /* evhttp: headers or body too big */
		r->st.too_large++;
		refuse(r, req, 413, "Payload Too Large", "request too large");
		return;
	}
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		refuse(r, req, 405, "Method Not Allowed", "only GET");
		return;
	}
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *host = evhttp_find_header(in, "Host"), *origin = evhttp_find_header(in, "Origin");
	if ((host && !host_ok(host, strlen(host))) || (origin && !origin_ok(origin))) {
		refuse(r, req, 403, "Forbidden", "Host and Origin must be an IP address or localhost");
		return;
	}
	if (!token_ok(r, req)) {
		r->st.bad_token++;
		evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", "Bearer");
		refuse(r, req, 401, "Unauthorized", "a valid token is needed (--rest-token)");
		return;
	}
	uint8_t be[8];
	if (r->view->flows && ofc_rest_flows_path(evhttp_request_get_uri(req), be)) {
		rf_qsbr_online();
		uint8_t k[8];
		memcpy(k, be, 8);
		bool known = r->view->net && rf_hash_lookup(r->view->net->switches, k);
		rf_qsbr_offline();
		if (!known) {
			render_reply(r, req, NULL, NULL, false, NULL); /* the 404 */
			return;
		}
		if (r->npend == PENDING_MAX) {
			evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
			refuse(r, req, 503, "Busy", "too many flow requests waiting for switches");
			return;
		}
		struct pending *p = &r->pend[r->npend++];
		*p = (struct pending){.req = req, .deadline_ms = ofc_now_ms() + OFC_REST_FLOWS_MS};
		memcpy(p->be, be, 8);
		evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_conn_close, r);
		r->st.flows_async++;
		return; /* answered by the timer */
	}
	render_reply(r, req, NULL, NULL, false, NULL);
}

/* The head of the flows queue: posted, polled, answered or given up. */
static void serve_flows(struct ofc_rest *r, uint64_t now)
{
	while (r->npend) {
		struct pending *p = &r->pend[0];
		char *json = NULL;
		bool trunc = false, done = false;
		const char *err = NULL;
		if (!r->posted && p->req) {
			if (ofc_flows_post(r->view->flows, ofc_get64(p->be)) == 0)
				r->posted = true;
			else
				return; /* a cancelled one is still being undone: next tick */
		}
		if (r->posted && ofc_flows_poll(r->view->flows, &json, &trunc)) {
			done = true;
		} else if (!p->req || now >= p->deadline_ms) {
			if (r->posted && ofc_flows_cancel(r->view->flows, &json, &trunc))
				done = true;
			else
				err = "the switch did not answer the flow stats request in 2 s";
			done = true;
		}
		if (!done)
			return;
		r->posted = false;
		if (p->req) {
			evhttp_connection_set_closecb(evhttp_request_get_connection(p->req), NULL, NULL);
			render_reply(r, p->req, p->be, json, trunc,
				     json ? NULL : err ? err : "the switch's answer could not be read");
		}
		free(json);
		memmove(&r->pend[0], &r->pend[1], (r->npend - 1) * sizeof(r->pend[0]));
		r->npend--;
	}
}

/* ---- connections -------------------------------------------------------------------------- */

/* evhttp's new connection: its bufferevent, made here so that we can follow it. */
static struct bufferevent *on_new_conn(struct event_base *base, void *arg)
{
	struct ofc_rest *r = arg;
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	unsigned k = 0;
	while (k < OFC_REST_MAX_CONNS && r->conns[k].bev)
		k++;
	if (!bev || k == OFC_REST_MAX_CONNS)
		return bev; /* cannot happen: the listener pauses at the cap */
	bufferevent_incref(bev); /* dropped by sweep_conns once evhttp has let it go */
	r->conns[k] = (struct rest_conn){.bev = bev, .opened_ms = ofc_now_ms()};
	if (++r->nconns == OFC_REST_MAX_CONNS) { /* full: the next ones wait in the backlog */
		evconnlistener_disable(r->listener);
		r->at_cap = true;
		r->st.refused++;
	}
	return bev;
}

/* accept failed for want of fds (or memory): pause instead of spinning on it. */
static void on_accept_error(struct evconnlistener *l, void *arg)
{
	struct ofc_rest *r = arg;
	r->st.accept_backoffs++;
	evconnlistener_disable(l);
	r->accept_paused = true;
	r->accept_resume_ms = ofc_now_ms() + ACCEPT_BACKOFF_MS;
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return a->ss_family == AF_INET6 &&
	       !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/* A new connection over the per-source cap is shut down at once. */
static void check_source(struct ofc_rest *r, struct rest_conn *c)
{
	socklen_t sl = sizeof(c->src);
	c->seen = true;
	if (getpeername(bufferevent_getfd(c->bev), (struct sockaddr *)&c->src, &sl) != 0)
		return;
	unsigned same = 0;
	for (unsigned k = 0; k < OFC_REST_MAX_CONNS; k++) {
		const struct rest_conn *o = &r->conns[k];
		same += o != c && o->bev && o->seen && !o->shut && same_addr(&o->src, &c->src);
	}
	if (same >= OFC_REST_PER_SOURCE) {
		shutdown(bufferevent_getfd(c->bev), SHUT_RDWR); /* evhttp sees EOF */
		c->shut = true;
		r->st.refused_source++;
	}
}

/* Lets go of connections evhttp is done with; shuts down those over the per-source cap or
 * open too long (evhttp then lets them go). */
static void sweep_conns(struct ofc_rest *r, uint64_t now)
{
	for (unsigned k = 0; r->nconns && k < OFC_REST_MAX_CONNS; k++) {
		struct rest_conn *c = &r->conns[k];
		if (!c->bev)
			continue;
		bufferevent_data_cb rcb, wcb;
		bufferevent_event_cb ecb;
		bufferevent_getcb(c->bev, &rcb, &wcb, &ecb, NULL);
		if (!rcb && !wcb && !ecb) { /* bufferevent_free cleared them: evhttp is done */
			bufferevent_decref(c->bev); /* the last reference: closes the socket */
			c->bev = NULL;
			r->nconns--;
		} else if (!c->seen) {
			check_source(r, c);
		} else if (!c->shut && now - c->opened_ms >= OFC_REST_DEADLINE_MS) {
			shutdown(bufferevent_getfd(c->bev), SHUT_RDWR); /* evhttp sees EOF */
			c->shut = true;
			r->st.deadline_closed++;
		}
	}
	if (r->at_cap && r->nconns < OFC_REST_MAX_CONNS && !r->accept_paused) {
		evconnlistener_enable(r->listener);
		r->at_cap = false;
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ofc_rest *r = arg;
	if (atomic_load_explicit(&r->stop, memory_order_relaxed)) /* join orders the rest */
		event_base_loopbreak(r->base);
	uint64_t now = ofc_now_ms();
	if (r->accept_paused && now >= r->accept_resume_ms) {
		r->accept_paused = false;
		if (!r->at_cap)
			evconnlistener_enable(r->listener);
	}
	sweep_conns(r, now);
	if (r->view->flows)
		serve_flows(r, now);
}

static void *run(void *arg)
{
	struct ofc_rest *r = arg;
	rf_qsbr_register();
	rf_qsbr_offline(); /* blocks in epoll: offline except while rendering */
	event_base_dispatch(r->base);
	rf_qsbr_online();
	rf_qsbr_unregister();
	return NULL;
}

/* ---- setup -------------------------------------------------------------------------------- */

static int read_token(struct ofc_rest *r, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "--rest-token %s: %s", path, strerror(errno));
		return -1;
	}
	size_t n = fread(r->token, 1, sizeof(r->token) - 1, f);
	bool longer = fgetc(f) != EOF;
	fclose(f);
	while (n && (r->token[n - 1] == '\n' || r->token[n - 1] == '\r' || r->token[n - 1] == ' '))
		n--;
	r->token[n] = '\0';
	bool printable = n > 0;
	for (size_t i = 0; i < n; i++)
		printable &= r->token[i] > ' ' && r->token[i] < 0x7f && r->token[i] != '&';
	if (longer || n < 16 || !printable) {
		snprintf(err, errlen, "--rest-token %s: use one line of 16..255 printable characters "
			 "(no spaces, no '&'), e.g. from: head -c 24 /dev/urandom | base64", path);
		return -1;
	}
	r->token_len = n;
	return 0;
}

struct ofc_rest *ofc_rest_start(const char *listen_at, const char *token_file,
				const struct ofc_rest_view *v, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(listen_at, ':');
	char *end;
	long port = strtol(colon ? colon + 1 : listen_at, &end, 10);
	struct sockaddr_in a = {.sin_family = AF_INET};
	if ((colon && ((size_t)(colon - listen_at) >= sizeof(host) || colon == listen_at)) ||
	    *end || end == (colon ? colon + 1 : listen_at) || port < 0 || port > 65535) {
		snprintf(err, errlen, "--rest %s: use [IPV4:]PORT, e.g. 127.0.0.1:8080 (the "
			 "default address is loopback)", listen_at);
		return NULL;
	}
	if (colon) {
		memcpy(host, listen_at, (size_t)(colon - listen_at));
		host[colon - listen_at] = '\0';
	}
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		snprintf(err, errlen, "--rest %s: %s is not an IPv4 address", listen_at, host);
		return NULL;
	}
	a.sin_port = htons((uint16_t)port);
	struct ofc_rest *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory for the REST server");
		return NULL;
	}
	if (token_file && read_token(r, token_file, err, errlen) < 0)
		goto fail;
	event_set_log_callback(log_cb);
	if (!(r->base = event_base_new()) || !(r->http = evhttp_new(r->base))) {
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
	socklen_t alen = sizeof(a);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&a, &alen) == 0)
		r->port = ntohs(a.sin_port);
	r->listener = evhttp_bound_socket_get_listener(bs);
	evconnlistener_set_error_cb(r->listener, on_accept_error);
	evhttp_set_bevcb(r->http, on_new_conn, r);
	evhttp_set_gencb(r->http, on_request, r);
	evhttp_set_timeout(r->http, OFC_REST_DEADLINE_MS / 1000);
	evhttp_set_max_headers_size(r->http, OFC_REST_MAX_HEADERS);
	evhttp_set_max_body_size(r->http, OFC_REST_MAX_BODY);
	struct timeval tv = {0, TICK_MS * 1000};
	r->tick = event_new(r->base, -1, EV_PERSIST, on_tick, r);
	if (!r->tick || event_add(r->tick, &tv) < 0 || pthread_create(&r->thread, NULL, run, r)) {
		snprintf(err, errlen, "cannot start the REST thread");
		goto fail;
	}
	return r;
fail:
	if (r->tick)
		event_free(r->tick);
	if (r->http)
		evhttp_free(r->http);
	if (r->base)
		event_base_free(r->base);
	free(r);
	return NULL;
}

unsigned ofc_rest_port(const struct ofc_rest *r)
{
	return r->port;
}

void ofc_rest_stop(struct ofc_rest *r, struct ofc_rest_stats *st)
{
	if (!r)
		return;
	atomic_store_explicit(&r->stop, true, memory_order_relaxed);
	pthread_join(r->thread, NULL);
	if (st)
		*st = r->st;
	for (unsigned i = 0; i < r->npend; i++) /* given up: the mailbox is freed with the apps */
		if (r->pend[i].req)
			evhttp_connection_set_closecb(evhttp_request_get_connection(r->pend[i].req),
						      NULL, NULL);
	if (r->posted) {
		char *json = NULL;
		bool t;
		ofc_flows_cancel(r->view->flows, &json, &t);
		free(json);
	}
	event_free(r->tick);
	evhttp_free(r->http); /* frees the connections: their callbacks are cleared */
	for (unsigned k = 0; k < OFC_REST_MAX_CONNS; k++)
		if (r->conns[k].bev)
			bufferevent_decref(r->conns[k].bev);
	event_base_free(r->base);
	free(r);
}
