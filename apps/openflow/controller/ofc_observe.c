/*
 * apps/openflow/controller/ofc_observe.c: what ringflow-controller shows over its control
 * socket and --metrics. The registry reads the runtime, the switch-facing tcp device, each
 * handler's two rings and its counters (atomics the handlers own); the commands render the
 * REST API's views (ofc_json.c) into the answer, on the control thread, which is an online
 * QSBR reader while a command runs, as ofc_rest_render requires.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/ctl.h>
#include <ringflow/stats.h>

#include "ofc_observe.h"

struct ofc_observe {
	struct ofc_rest_view view;
	struct rf_stats *reg;
	struct rf_ctl *ctl;
};

/* Per-handler counters as app samples: app/handlers/N/packet_ins ... */
static void handler_counters(struct rf_stat_set *s, void *arg)
{
	const struct ofc_observe *o = arg;
	static const char *const help[] = {"PACKET_IN messages handled", "FLOW_MOD messages sent",
					   "PACKET_OUT messages sent", "Packets flooded"};
	static const char *const name[] = {"packet_ins", "flow_mods", "packet_outs", "floods"};
	for (unsigned i = 0; i < o->view.nh; i++) {
		const struct ofc_handler *h = &o->view.h[i];
		/* Relaxed: counters, read as a snapshot. */
		uint64_t v[4] = {atomic_load_explicit(&h->packet_ins, memory_order_relaxed),
				 atomic_load_explicit(&h->flow_mods, memory_order_relaxed),
				 atomic_load_explicit(&h->packet_outs, memory_order_relaxed),
				 atomic_load_explicit(&h->floods, memory_order_relaxed)};
		for (unsigned k = 0; k < 4; k++) {
			char path[96], metric[64], lab[32];
			snprintf(path, sizeof(path), "app/handlers/%u/%s", i, name[k]);
			snprintf(metric, sizeof(metric), "controller_%s_total", name[k]);
			snprintf(lab, sizeof(lab), "handler=%u", i);
			rf_stats_emit_u64(s, RF_STAT_COUNTER, path, metric, lab, help[k], v[k]);
		}
	}
}

/* The apps' PACKET_IN -> reply latency (ofc_app.h: bucket i counts [2^i, 2^(i+1)) us) as a
 * histogram in seconds. The buckets keep no sum, so _sum adds each bucket's lower bound: a
 * lower bound of the true sum (the help line says so). */
static void reply_latency(struct rf_stat_set *s, void *arg)
{
	const struct ofc_observe *o = arg;
	if (!o->view.net)
		return;
	static struct rf_stats_hist h; /* only the control thread reads it (one source) */
	memset(&h, 0, sizeof(h));
	h.nb = OFC_LAT_BUCKETS - 1;
	h.scale = 1e-6;
	uint64_t sum = 0;
	for (unsigned i = 0; i < OFC_LAT_BUCKETS; i++) {
		if (i < h.nb)
			h.le[i] = 2ull << i;
		/* Relaxed: counters the I/O poller owns, a snapshot. */
		uint64_t c = atomic_load_explicit(&o->view.net->lat[i], memory_order_relaxed);
		atomic_store_explicit(&h.cnt[i], c, memory_order_relaxed);
		sum += c * (i ? 1ull << i : 0);
	}
	atomic_store_explicit(&h.sum, sum, memory_order_relaxed);
	rf_stats_emit_hist(s, "app/packet_in_to_reply", "controller_packet_in_reply_seconds", NULL,
			   "PACKET_IN hand-off to reply queued (_sum: from bucket lower bounds)", &h);
}

/* Render a REST path into out; 0, or -errno with a message. */
static int render(const struct ofc_observe *o, const char *path, struct rf_buf *out)
{
	if (!o->view.net) {
		rf_buf_puts(out, "this controller runs the plain learning switch, which keeps no "
				 "network view: start it with --rest or an --app list to ask this");
		return -ENOTSUP;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		rf_buf_puts(out, "out of memory");
		return -ENOMEM;
	}
	const char *ctype;
	int status = ofc_rest_render(&o->view, path, f, &ctype);
	fclose(f);
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	int rc = 0;
	if (status == 200) {
		rf_buf_append(out, text, len);
	} else {
		rf_buf_printf(out, "%s: %.*s", status == 404 ? "not found" : "bad request",
			      (int)(len < 120 ? len : 120), text);
		rc = status == 404 ? -ENOENT : -EINVAL;
	}
	free(text);
	return rc;
}

static int cmd_switches(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	return render(arg, "/api/switches", out);
}

static int cmd_hosts(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	return render(arg, "/api/hosts", out);
}

static int cmd_links(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	return render(arg, "/api/links", out);
}

static int cmd_ofstats(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	return render(arg, "/api/stats", out);
}

static int cmd_cluster(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	(void)req;
	return render(arg, "/api/cluster", out);
}

static int cmd_flows(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	const char *dpid = rf_json_get_str(req, "dpid", NULL);
	if (!dpid || strlen(dpid) > 16 || strspn(dpid, "0123456789abcdefABCDEF") != strlen(dpid)) {
		rf_buf_puts(out, "flows needs \"dpid\": 16 hex digits (ringflow-ctl flows "
				 "dpid=0000000000000001; ringflow-ctl switches lists them)");
		return -EINVAL;
	}
	char path[64];
	snprintf(path, sizeof(path), "/api/flows/%016llx", strtoull(dpid, NULL, 16));
	return render(arg, path, out);
}

struct ofc_observe *ofc_observe_start(const struct ofc_rest_view *view, struct ofc_io *io,
				      const char *metrics, char *err, size_t len)
{
	struct ofc_observe *o = calloc(1, sizeof(*o));
	if (!o || !(o->reg = rf_stats_create("controller"))) {
		snprintf(err, len, "cannot set up the stats registry: out of memory");
		free(o);
		return NULL;
	}
	o->view = *view;
	rf_stats_add_runtime(o->reg, view->rt);
	rf_stats_add_dev(o->reg, "switches", ofc_io_dev(io));
	for (unsigned i = 0; i < view->nh; i++) {
		char name[32];
		snprintf(name, sizeof(name), "handler%u_in", i);
		rf_stats_add_ring(o->reg, name, view->h[i].in);
		snprintf(name, sizeof(name), "handler%u_out", i);
		rf_stats_add_ring(o->reg, name, view->h[i].out);
	}
	rf_stats_add_fn(o->reg, "handlers", handler_counters, o);
	rf_stats_add_fn(o->reg, "latency", reply_latency, o);
	o->ctl = rf_ctl_start(&(struct rf_ctl_config){.stats = o->reg, .metrics = metrics}, err, len);
	if (!o->ctl) {
		rf_stats_destroy(o->reg);
		free(o);
		return NULL;
	}
	rf_ctl_register(o->ctl, "switches", "connected switches (dpid, version, ports, uptime)",
			cmd_switches, o);
	rf_ctl_register(o->ctl, "flows", "a switch's flow table and learned MACs: dpid=HEX",
			cmd_flows, o);
	rf_ctl_register(o->ctl, "hosts", "hosts: MAC, attachment point, IPv4", cmd_hosts, o);
	rf_ctl_register(o->ctl, "links", "discovered links", cmd_links, o);
	rf_ctl_register(o->ctl, "cluster", "--cluster: members, health, masters, roles",
			cmd_cluster, o);
	rf_ctl_register(o->ctl, "ofstats", "OpenFlow counters: messages by type, LLDP, latency",
			cmd_ofstats, o);
	return o;
}

void ofc_observe_stop(struct ofc_observe *o)
{
	if (!o)
		return;
	rf_ctl_stop(o->ctl);
	rf_stats_destroy(o->reg);
	free(o);
}
