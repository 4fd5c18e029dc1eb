/*
 * apps/ofswitch/sw_ctlcmd.c: ringflow-switch's commands on its control socket
 * (docs/observing.md): `ports` (each port with its counters and link) and `flows` (the flow
 * table as the agent holds it: match, priority, cookie, counters, timeouts).
 *
 * `ports` reads what any thread may read (rf_io_stats_get, rf_io_link_up). `flows` may not
 * walk the agent's master list from the control thread: the agent alone owns it. So the
 * command asks and waits: it posts the request under a mutex, the agent (which loops at least
 * once a millisecond) writes the answer under the same mutex and signals, and the command
 * gives up after two seconds with a one-line error. Neither side is a poller, so the pollers
 * never wait on the socket.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <ringflow/ctl.h>
#include <ringflow/json.h>

#include "sw.h"
#include "sw_offload.h"

#define FLOWS_DEFAULT 100
#define FLOWS_MAX 10000
#define ASK_TIMEOUT_S 2

struct sw_ctlcmd {
	struct sw_dp *dp;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* A hint the agent reads every loop without the mutex (relaxed: everything it then
	 * reads or writes is under mu, which orders it). */
	atomic_bool asked;
	bool answered;     /* under mu */
	unsigned limit;    /* under mu */
	struct rf_buf *out; /* under mu: the asking command's answer buffer */
};

static void put_mac(struct rf_buf *b, const char *name, const uint8_t v[6], const uint8_t m[6],
		    bool *first)
{
	static const uint8_t ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[6];
	if (!memcmp(m, zero, 6))
		return;
	rf_buf_printf(b, "%s%s=%02x:%02x:%02x:%02x:%02x:%02x", *first ? "" : ",", name, v[0], v[1],
		      v[2], v[3], v[4], v[5]);
	if (memcmp(m, ones, 6))
		rf_buf_printf(b, "/%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	*first = false;
}

static void put_num(struct rf_buf *b, const char *name, unsigned v, unsigned m, unsigned all,
		    bool hex, bool *first)
{
	if (!m)
		return;
	rf_buf_printf(b, hex ? "%s%s=0x%04x" : "%s%s=%u", *first ? "" : ",", name, v);
	if (m != all)
		rf_buf_printf(b, "/0x%x", m);
	*first = false;
}

static void put_addr(struct rf_buf *b, const char *name, const uint8_t v[16], const uint8_t m[16],
		     bool v4, bool *first)
{
	static const uint8_t zero[16];
	if (!memcmp(m, zero, v4 ? 4 : 16))
		return;
	rf_buf_printf(b, "%s%s=", *first ? "" : ",", name);
	if (v4) {
		rf_buf_printf(b, "%u.%u.%u.%u/%u.%u.%u.%u", v[0], v[1], v[2], v[3], m[0], m[1], m[2],
			      m[3]);
	} else {
		for (unsigned i = 0; i < 16; i += 2)
			rf_buf_printf(b, "%s%02x%02x", i ? ":" : "", v[i], v[i + 1]);
		rf_buf_printf(b, "/");
		for (unsigned i = 0; i < 16; i += 2)
			rf_buf_printf(b, "%s%02x%02x", i ? ":" : "", m[i], m[i + 1]);
	}
	*first = false;
}

/* The flow's match as name=value[/mask] pairs, in the key's order ("" matches all). */
static void put_match(struct rf_buf *b, const struct sw_flow *f)
{
	const struct sw_key *v = &f->match, *m = &f->mask;
	bool first = true;
	bool v4 = (m->eth_type == 0xffff && (v->eth_type == 0x0800 || v->eth_type == 0x0806));
	put_num(b, "in_port", v->in_port, m->in_port, UINT32_MAX, false, &first);
	put_mac(b, "eth_dst", v->eth_dst, m->eth_dst, &first);
	put_mac(b, "eth_src", v->eth_src, m->eth_src, &first);
	put_num(b, "eth_type", v->eth_type, m->eth_type, 0xffff, true, &first);
	put_num(b, "vlan", v->vlan, m->vlan, 0xffff, true, &first);
	put_num(b, "vlan_pcp", v->vlan_pcp, m->vlan_pcp, 0xff, false, &first);
	put_addr(b, v4 ? "nw_src" : "ipv6_src", v->nw_src, m->nw_src, v4, &first);
	put_addr(b, v4 ? "nw_dst" : "ipv6_dst", v->nw_dst, m->nw_dst, v4, &first);
	put_num(b, "ip_proto", v->ip_proto, m->ip_proto, 0xff, false, &first);
	put_num(b, "ip_dscp", v->ip_dscp, m->ip_dscp, 0xff, false, &first);
	put_num(b, "tp_src", v->tp_src, m->tp_src, 0xffff, false, &first);
	put_num(b, "tp_dst", v->tp_dst, m->tp_dst, 0xffff, false, &first);
	put_num(b, "arp_op", v->arp_op, m->arp_op, 0xffff, false, &first);
}

void sw_ctlcmd_serve(struct sw_ctlcmd *cc, const struct sw_flow *list, unsigned nflows,
		     uint64_t now_ns)
{
	if (!cc || !atomic_load_explicit(&cc->asked, memory_order_relaxed))
		return;
	pthread_mutex_lock(&cc->mu);
	if (cc->out && !cc->answered) {
		struct rf_buf *b = cc->out;
		rf_buf_printf(b, "{\"count\":%u,\"flows\":[", nflows);
		unsigned i = 0;
		for (const struct sw_flow *f = list; f && i < cc->limit; f = f->next, i++) {
			uint64_t pkts, bytes;
			sw_flow_counts(f, &pkts, &bytes);
			rf_buf_printf(b, "%s{\"priority\":%u,\"cookie\":\"0x%" PRIx64 "\",\"packets\":%"
				      PRIu64 ",\"bytes\":%" PRIu64 ",\"duration_s\":%.3f,"
				      "\"idle_timeout\":%u,\"hard_timeout\":%u,\"match\":\"",
				      i ? "," : "", f->priority, f->cookie, pkts, bytes,
				      (double)(now_ns - f->created_ns) / 1e9, f->idle_timeout,
				      f->hard_timeout);
			put_match(b, f);
			rf_buf_printf(b, "\"}");
		}
		rf_buf_printf(b, "],\"shown\":%u}", i);
		cc->answered = true;
		pthread_cond_signal(&cc->cv);
	}
	pthread_mutex_unlock(&cc->mu);
}

static int flows_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	struct sw_ctlcmd *cc = arg;
	/* a number, or the text ringflow-ctl sends for `limit=N` */
	const struct rf_json *l = rf_json_get(req, "limit");
	double lim = FLOWS_DEFAULT;
	char *end = NULL;
	if (l && l->type == RF_JSON_NUM)
		lim = l->num;
	else if (l && l->type == RF_JSON_STR)
		lim = strtod(l->str, &end);
	if ((l && l->type != RF_JSON_NUM && (l->type != RF_JSON_STR || end == l->str || *end)) ||
	    !(lim >= 0 && lim <= FLOWS_MAX)) {
		rf_buf_printf(out, "flows: limit must be 0..%d", FLOWS_MAX);
		return -EINVAL;
	}
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ASK_TIMEOUT_S;
	pthread_mutex_lock(&cc->mu);
	cc->out = out;
	cc->limit = (unsigned)lim;
	cc->answered = false;
	atomic_store_explicit(&cc->asked, true, memory_order_relaxed); /* the hint; mu orders */
	int r = 0;
	while (!cc->answered && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&cc->cv, &cc->mu, &until);
	bool ok = cc->answered;
	cc->out = NULL;
	atomic_store_explicit(&cc->asked, false, memory_order_relaxed);
	pthread_mutex_unlock(&cc->mu);
	if (!ok) {
		rf_buf_printf(out, "flows: the OpenFlow agent did not answer within %d s",
			      ASK_TIMEOUT_S);
		return -ETIMEDOUT;
	}
	return 0;
}

static int ports_cmd(const struct rf_json *req, struct rf_buf *out, void *arg)
{
	struct sw_ctlcmd *cc = arg;
	(void)req;
	rf_buf_printf(out, "[");
	for (unsigned i = 0; i < cc->dp->nports; i++) {
		const struct sw_port *p = &cc->dp->ports[i];
		struct rf_io_stats st;
		rf_io_stats_get(p->dev, &st);
		rf_buf_printf(out, "%s{\"port\":%u,\"name\":", i ? "," : "", p->of_no);
		rf_json_str(out, p->name);
		rf_buf_printf(out, ",\"spec\":");
		rf_json_str(out, rf_io_spec(p->dev));
		rf_buf_printf(out, ",\"link_up\":%s,\"rx_packets\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
			      ",\"tx_packets\":%" PRIu64 ",\"tx_bytes\":%" PRIu64,
			      rf_io_link_up(p->dev) > 0 ? "true" : "false", st.rx_pkts, st.rx_bytes,
			      st.tx_pkts, st.tx_bytes);
		if (cc->dp->offload) { /* --offload: what the kernel's entries did, apart */
			uint64_t rp, rb, tp, tb;
			sw_offload_port_counts(cc->dp->offload, i, &rp, &rb, &tp, &tb);
			rf_buf_printf(out, ",\"offload_rx_packets\":%" PRIu64 ",\"offload_rx_bytes\":%"
				      PRIu64 ",\"offload_tx_packets\":%" PRIu64
				      ",\"offload_tx_bytes\":%" PRIu64, rp, rb, tp, tb);
		}
		rf_buf_printf(out, "}");
	}
	rf_buf_printf(out, "]");
	return 0;
}

struct sw_ctlcmd *sw_ctlcmd_create(struct sw_dp *dp)
{
	struct sw_ctlcmd *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	cc->dp = dp;
	pthread_mutex_init(&cc->mu, NULL);
	pthread_cond_init(&cc->cv, NULL);
	atomic_init(&cc->asked, false);
	return cc;
}

int sw_ctlcmd_register(struct sw_ctlcmd *cc, struct rf_ctl *ctl)
{
	int r = rf_ctl_register(ctl, "ports", "ports with their link state and counters",
				ports_cmd, cc);
	if (r == 0)
		r = rf_ctl_register(ctl, "flows", "the flow table ({\"limit\":N}, default 100)",
				    flows_cmd, cc);
	return r;
}

void sw_ctlcmd_destroy(struct sw_ctlcmd *cc)
{
	if (!cc)
		return;
	pthread_cond_destroy(&cc->cv);
	pthread_mutex_destroy(&cc->mu);
	free(cc);
}
