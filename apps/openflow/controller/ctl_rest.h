/*
 * apps/openflow/controller/ctl_rest.h: the control side of ringflow-controller: JSON views of
 * the network (ctl_json.c), the web page (ctl_page.c) and an HTTP server on libevent's evhttp
 * in a thread of its own (ctl_rest.c).
 *
 *   GET /api/switches               connected switches (dpid, version, ports, uptime)
 *   GET /api/switches/{dpid}/ports  that switch's ports
 *   GET /api/links                  discovered links (one entry per direction)
 *   GET /api/hosts                  hosts: MAC, attachment point, IPv4
 *   GET /api/flows/{dpid}           the switch's flow table (a flow stats request, answered
 *                                   within 2 s) and the learning switch's MAC entries
 *   GET /api/stats                  per-core and per-handler counters, messages by type,
 *                                   LLDP counts, discovery time
 *   GET /                           the page: topology drawing and live counters
 * dpids are 16 hex digits in strings (a 64-bit number does not fit a JavaScript number).
 *
 * Threads: the server thread registers with QSBR and stays offline except while it renders
 * one request (rf_qsbr_online ... rf_qsbr_offline), as ringflow/qsbr.h's rule 3 asks of a
 * thread that blocks. Errors: ctl_rest_start returns NULL with one line in err.
 */
#ifndef RINGFLOW_CTL_REST_H
#define RINGFLOW_CTL_REST_H

#include <stdio.h>

#include "ctl_app.h"

struct ctl_rest_view {
	struct ctl_net *net;
	struct rf_runtime *rt;  /* per-core counters; NULL: none */
	struct ctl_handler *h;  /* handler counters and the MAC table; NULL: none */
	unsigned nh;
	const char *apps;       /* the --app list, shown on the page */
	struct ctl_flow_req *flows; /* asks switches for their flows; NULL: not asked */
};

/* Renders GET `path` into out; *ctype gets the content type. Returns the HTTP status (200,
 * 400 bad dpid, 404 unknown path or switch). The caller is an online QSBR thread. */
int ctl_rest_render(const struct ctl_rest_view *v, const char *path, FILE *out,
		    const char **ctype);

/* Writes s as a JSON string (quotes, escapes; bytes >= 0x80 as \u00XX: always valid JSON). */
void ctl_json_str(FILE *out, const char *s);

/* The web page (one self-contained HTML document, inline JS and SVG). */
extern const char ctl_page_html[];

struct ctl_rest;

/* Binds IPV4:PORT (port 0: the kernel picks; see ctl_rest_port) and starts the server thread.
 * *v must outlive the server. */
struct ctl_rest *ctl_rest_start(const char *listen_at, const struct ctl_rest_view *v, char *err,
				size_t errlen);
unsigned ctl_rest_port(const struct ctl_rest *r);
/* Stops the thread (within 100 ms) and frees everything. NULL is ignored. */
void ctl_rest_stop(struct ctl_rest *r);

#endif /* RINGFLOW_CTL_REST_H */
