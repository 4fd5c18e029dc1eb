/*
 * apps/openflow/controller/ctl_flows.c: GET /api/flows/{dpid} asks the switch itself: the
 * REST thread posts one request in a mailbox, the I/O poller (which owns the connection)
 * sends a MULTIPART/STATS flow request (all tables, all flows), turns the reply parts into
 * a JSON array as they arrive and hands the text back. One request at a time (the REST
 * thread serves one request at a time anyway).
 *
 * The mailbox is a state word moved by CAS, so either side may give up without a lock:
 *   IDLE -> REQUESTED   REST: dpid written first (release: I/O acquires it)
 *   REQUESTED -> SENT   I/O: request sent, xid noted (fields below are I/O-only until DONE)
 *   SENT -> DONE        I/O: the last reply part is in text (release: REST acquires text)
 *   REQUESTED|SENT -> IDLE  REST gives up (timeout); a late reply then fails its CAS and
 *                       the I/O poller frees its text itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_app.h"

enum { FR_IDLE, FR_REQUESTED, FR_SENT, FR_DONE };

void ctl_flows_init(struct ctl_flow_req *r)
{
	atomic_init(&r->state, FR_IDLE);
	r->f = NULL;
	r->text = NULL;
}

void ctl_flows_fini(struct ctl_flow_req *r)
{
	if (r->f)
		fclose(r->f);
	free(r->text);
	r->f = NULL;
	r->text = NULL;
}

int ctl_flows_fetch(struct ctl_flow_req *r, uint64_t dpid, unsigned timeout_ms, char **json)
{
	int idle = FR_IDLE;
	r->dpid = dpid;
	/* release: the I/O poller reads dpid after acquiring REQUESTED */
	if (!atomic_compare_exchange_strong_explicit(&r->state, &idle, FR_REQUESTED,
						     memory_order_release, memory_order_relaxed))
		return -EBUSY;
	for (unsigned waited = 0; waited < timeout_ms; waited += 2) {
		/* acquire: pairs with the I/O poller's release of DONE (text is complete) */
		if (atomic_load_explicit(&r->state, memory_order_acquire) == FR_DONE) {
			*json = r->text;
			r->text = NULL;
			atomic_store_explicit(&r->state, FR_IDLE, memory_order_relaxed);
			return 0;
		}
		nanosleep(&(struct timespec){0, 2000000}, NULL);
	}
	for (;;) { /* give up, unless the reply just came */
		int s = atomic_load_explicit(&r->state, memory_order_acquire);
		if (s == FR_DONE) {
			*json = r->text;
			r->text = NULL;
			atomic_store_explicit(&r->state, FR_IDLE, memory_order_relaxed);
			return 0;
		}
		if (atomic_compare_exchange_weak_explicit(&r->state, &s, FR_IDLE,
							  memory_order_relaxed, memory_order_relaxed))
			return -ETIMEDOUT;
	}
}

bool ctl_flows_pending(struct ctl_flow_req *r, uint64_t *dpid)
{
	/* acquire: pairs with the REST thread's release of REQUESTED (dpid) */
	if (atomic_load_explicit(&r->state, memory_order_acquire) != FR_REQUESTED)
		return false;
	*dpid = r->dpid;
	return true;
}

void ctl_flows_send(struct ctl_flow_req *r, struct of_session *s, struct of_out *out)
{
	int req = FR_REQUESTED;
	if (!atomic_compare_exchange_strong_explicit(&r->state, &req, FR_SENT,
						     memory_order_relaxed, memory_order_relaxed))
		return; /* the REST thread gave up meanwhile */
	ctl_flows_fini(r); /* an older, abandoned reply still being collected */
	struct of_msg m = {.type = OF_MULTIPART_REQUEST, .xid = of_session_xid(s)};
	m.u.mp_request.mp_type = OF_MP_FLOW;
	m.u.mp_request.table_id = OFPTT_ALL;
	m.u.mp_request.out_port = OFPP_ANY;
	m.u.mp_request.out_group = OFPG_ANY;
	r->xid = m.xid;
	r->n = 0;
	r->f = open_memstream(&r->text, &r->len);
	if (r->f && of_session_send(s, &m, out) == 0) {
		fputc('[', r->f);
		return;
	}
	ctl_flows_fini(r); /* no memory or no room: the REST thread times out */
}

static void mac_json(FILE *f, const char *name, const uint8_t *m)
{
	fprintf(f, ",\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"", name, m[0], m[1], m[2], m[3],
		m[4], m[5]);
}

void ctl_flows_reply(struct ctl_flow_req *r, const struct of_msg *m)
{
	if (!r->f || m->xid != r->xid)
		return;
	struct of_flow_stats fs;
	unsigned cur = 0;
	while (of_flow_stats_next(m->version, &m->u.mp_reply.body, &cur, &fs) == 1) {
		fprintf(r->f, "%s{\"table_id\":%u,\"priority\":%u,\"idle_timeout\":%u,"
			"\"hard_timeout\":%u,\"cookie\":%llu,\"packet_count\":%llu,\"byte_count\":%llu,"
			"\"duration_s\":%u,\"match\":{\"fields\":%u", r->n++ ? "," : "", fs.table_id,
			fs.priority, fs.idle_timeout, fs.hard_timeout, (unsigned long long)fs.cookie,
			(unsigned long long)fs.packet_count, (unsigned long long)fs.byte_count,
			fs.duration_sec, fs.match.fields);
		if (fs.match.fields & OF_MATCH_IN_PORT)
			fprintf(r->f, ",\"in_port\":%u", fs.match.in_port);
		if (fs.match.fields & OF_MATCH_ETH_SRC)
			mac_json(r->f, "eth_src", fs.match.eth_src);
		if (fs.match.fields & OF_MATCH_ETH_DST)
			mac_json(r->f, "eth_dst", fs.match.eth_dst);
		if (fs.match.fields & OF_MATCH_ETH_TYPE)
			fprintf(r->f, ",\"eth_type\":%u", fs.match.eth_type);
		fprintf(r->f, ",\"other_fields\":%u},\"output\":[", fs.match.n_other);
		for (unsigned i = 0; i < fs.actions.n; i++)
			fprintf(r->f, "%s%u", i ? "," : "", fs.actions.a[i].port);
		fprintf(r->f, "],\"other_actions\":%u}", fs.actions.n_skipped);
	}
	if (m->u.mp_reply.flags & OFPMPF_MORE)
		return;
	fputc(']', r->f);
	fclose(r->f);
	r->f = NULL;
	int sent = FR_SENT;
	/* release: the REST thread acquires DONE, then reads text */
	if (!atomic_compare_exchange_strong_explicit(&r->state, &sent, FR_DONE,
						     memory_order_release, memory_order_relaxed)) {
		free(r->text); /* nobody waits any more */
		r->text = NULL;
	}
}
