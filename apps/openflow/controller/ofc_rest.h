/*
 * apps/openflow/controller/ofc_rest.h: the control side of ringflow-controller: JSON views of
 * the network (ofc_json.c), the web page (ofc_page.c) and an HTTP server on libevent's evhttp
 * in a thread of its own (ofc_rest.c).
 *
 *   GET /api/switches               connected switches (dpid, version, ports, uptime)
 *   GET /api/switches/{dpid}/ports  that switch's ports
 *   GET /api/links                  discovered links (one entry per direction)
 *   GET /api/hosts                  hosts: MAC, attachment point, IPv4
 *   GET /api/flows/{dpid}           the switch's flow table (a flow stats request, answered
 *                                   within 2 s, asynchronously) and the learning switch's
 *                                   MAC entries
 *   GET /api/stats                  per-core and per-handler counters, messages by type,
 *                                   LLDP counts, discovery time
 *   GET /api/cluster                --cluster: members, health, masters, this member's
 *                                   roles (docs/cluster.md); else {"status":"standalone"}
 *   GET /                           the page: topology drawing and live counters
 * dpids are 16 hex digits in strings (a 64-bit number does not fit a JavaScript number).
 *
 * Limits (ofc_rest.c has the defences): OFC_REST_MAX_CONNS connections, each closed after
 * OFC_REST_DEADLINE_MS; headers up to OFC_REST_MAX_HEADERS bytes, bodies up to
 * OFC_REST_MAX_BODY (413 and close); GET/HEAD only; Host and Origin must be IP literals or
 * localhost; an optional token.
 *
 * Threads: the server thread registers with QSBR and stays offline except while it renders
 * one request (rf_qsbr_online ... rf_qsbr_offline), as ringflow/qsbr.h's rule 3 asks of a
 * thread that blocks. Errors: ofc_rest_start returns NULL with one line in err.
 */
#ifndef RINGFLOW_OFC_REST_H
#define RINGFLOW_OFC_REST_H

#include <stdio.h>

#include "ofc_app.h"

struct ofc_rest_view {
	struct ofc_net *net;
	struct rf_runtime *rt;  /* per-core counters; NULL: none */
	struct ofc_handler *h;  /* handler counters and the MAC table; NULL: none */
	unsigned nh;
	const char *apps;       /* the --app list, shown on the page */
	struct ofc_flow_req *flows; /* asks switches for their flows; NULL: not asked */
	/* --cluster: renders /api/cluster into out (cl_cluster_render), else NULL */
	int (*cluster)(void *arg, FILE *out);
	/* --cluster: the hosts (table 0) or links (1) other members published, as 32-byte keys
	 * in the tables' layouts (cl_cluster_shared); merged into /api/hosts and /api/links */
	size_t (*cluster_shared)(void *arg, int table, uint8_t (**keys)[32]);
	void *cluster_arg;
};

/* Renders GET `path` into out; *ctype gets the content type. Returns the HTTP status (200,
 * 400 bad dpid, 404 unknown path or switch), or OFC_REST_ASYNC for /api/flows/{dpid} when
 * v->flows is set: the caller asks the switch (ofc_flows_post) and renders the answer with
 * ofc_rest_render_flows. The caller is an online QSBR thread. */
#define OFC_REST_ASYNC 1
int ofc_rest_render(const struct ofc_rest_view *v, const char *path, FILE *out,
		    const char **ctype);
/* The /api/flows/{dpid} body around the switch's answer json (NULL: err says why). 200. */
int ofc_rest_render_flows(const struct ofc_rest_view *v, const uint8_t be[8], const char *json,
			  bool truncated, const char *err, FILE *out);
/* True when path is /api/flows/{dpid}, with the dpid in be. */
bool ofc_rest_flows_path(const char *path, uint8_t be[8]);

/* Writes s as a JSON string (quotes, escapes; bytes >= 0x80 as \u00XX: always valid JSON). */
void ofc_json_str(FILE *out, const char *s);

/* The web page (one self-contained HTML document, inline JS and SVG). */
extern const char ofc_page_html[];

struct ofc_rest;

#define OFC_REST_DEADLINE_MS 10000 /* a connection's whole life */
#define OFC_REST_PER_SOURCE 8      /* connections from one IP address */
#define OFC_REST_MAX_HEADERS 8192  /* request line and headers, bytes */
#define OFC_REST_MAX_BODY 1024     /* no endpoint takes a body */
#define OFC_REST_FLOWS_MS 2000     /* /api/flows waits this long for the switch */

/* What the server refused or cut short (ofc_rest_stats). */
struct ofc_rest_stats {
	uint64_t requests, rejected;  /* requests; answered 4xx/5xx by a check below */
	uint64_t too_large, bad_token;
	uint64_t refused;             /* times the listener paused at OFC_REST_MAX_CONNS */
	uint64_t refused_source;      /* connections over OFC_REST_PER_SOURCE: shut at once */
	uint64_t deadline_closed;     /* connections open past OFC_REST_DEADLINE_MS */
	uint64_t accept_backoffs;     /* accept out of fds: paused, not spun */
	uint64_t flows_async;         /* /api/flows requests queued for a switch */
};

/* Binds [IPV4:]PORT (no address: 127.0.0.1; port 0: the kernel picks, see ofc_rest_port)
 * and starts the server thread. token_file: NULL, or a file whose one line every request
 * must carry. *v must outlive the server. */
struct ofc_rest *ofc_rest_start(const char *listen_at, const char *token_file,
				const struct ofc_rest_view *v, char *err, size_t errlen);
unsigned ofc_rest_port(const struct ofc_rest *r);

/* Stops the thread (within 20 ms), gives its counters in *st (if st) and frees everything.
 * NULL is ignored. */
void ofc_rest_stop(struct ofc_rest *r, struct ofc_rest_stats *st);

#endif /* RINGFLOW_OFC_REST_H */
