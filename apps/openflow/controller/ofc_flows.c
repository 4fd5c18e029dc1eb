/*
 * apps/openflow/controller/ofc_flows.c: GET /api/flows/{dpid} asks the switch itself: the
 * REST thread posts one request in a mailbox, the I/O poller (which owns the connection)
 * sends a MULTIPART/STATS flow request (all tables, all flows), turns the reply parts into
 * a JSON array as they arrive and hands the text back. One request at a time; the REST
 * thread never waits on it (it posts, then polls from its timer, serving others meanwhile).
 * A reply counts only when it comes on the connection the request went out on, from the
 * datapath id asked, with the request's xid; the text stops at OFC_FLOWS_MAX entries or
 * OFC_FLOWS_MAX_BYTES (then the array ends there and `truncated` is set).
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

#include "ofc_app.h"

enum { FR_IDLE, FR_REQUESTED, FR_SENT, FR_DONE };

void ofc_flows_init(struct ofc_flow_req *r)
{
	atomic_init(&r->state, FR_IDLE);
	r->f = NULL;
	r->text = NULL;
}

void ofc_flows_fini(struct ofc_flow_req *r)
{
	if (r->f)
		fclose(r->f);
	free(r->text);
	r->f = NULL;
	r->text = NULL;
}

int ofc_flows_post(struct ofc_flow_req *r, uint64_t dpid)
{
	int idle = FR_IDLE;
	if (atomic_load_explicit(&r->state, memory_order_relaxed) != FR_IDLE)
		return -EBUSY;
	r->dpid = dpid; /* only the REST thread writes it, and only while IDLE */
	/* release: the I/O poller reads dpid after acquiring REQUESTED */
	if (!atomic_compare_exchange_strong_explicit(&r->state, &idle, FR_REQUESTED,
						     memory_order_release, memory_order_relaxed))
		return -EBUSY;
	return 0;
}

int ofc_flows_poll(struct ofc_flow_req *r, char **json, bool *truncated)
{
	/* acquire: pairs with the I/O poller's release of DONE (text is complete) */
	if (atomic_load_explicit(&r->state, memory_order_acquire) != FR_DONE)
		return 0;
	*json = r->text;
	*truncated = r->truncated;
	r->text = NULL;
	atomic_store_explicit(&r->state, FR_IDLE, memory_order_relaxed);
	return 1;
}

int ofc_flows_cancel(struct ofc_flow_req *r, char **json, bool *truncated)
{
	for (;;) { /* give up, unless the reply just came */
		int s = atomic_load_explicit(&r->state, memory_order_acquire);
		if (s == FR_DONE)
			return ofc_flows_poll(r, json, truncated);
		if (s == FR_IDLE ||
		    atomic_compare_exchange_weak_explicit(&r->state, &s, FR_IDLE,
							  memory_order_relaxed, memory_order_relaxed))
			return 0;
	}
}

bool ofc_flows_pending(struct ofc_flow_req *r, uint64_t *dpid)
{
	/* acquire: pairs with the REST thread's release of REQUESTED (dpid) */
	if (atomic_load_explicit(&r->state, memory_order_acquire) != FR_REQUESTED)
		return false;
	*dpid = r->dpid;
	return true;
}

void ofc_flows_send(struct ofc_flow_req *r, struct of_session *s, struct of_out *out)
{
	int req = FR_REQUESTED;
	if (!atomic_compare_exchange_strong_explicit(&r->state, &req, FR_SENT,
						     memory_order_relaxed, memory_order_relaxed))
		return; /* the REST thread gave up meanwhile */
	ofc_flows_fini(r); /* an older, abandoned reply still being collected */
	struct of_msg m = {.type = OF_MULTIPART_REQUEST, .xid = of_session_xid(s)};
	m.u.mp_request.mp_type = OF_MP_FLOW;
	m.u.mp_request.table_id = OFPTT_ALL;
	m.u.mp_request.out_port = OFPP_ANY;
	m.u.mp_request.out_group = OFPG_ANY;
	r->xid = m.xid;
	r->session = s;
	r->n = 0;
	r->truncated = false;
	r->f = open_memstream(&r->text, &r->len);
	if (r->f && of_session_send(s, &m, out) == 0) {
		fputc('[', r->f);
		return;
	}
	ofc_flows_fini(r); /* no memory or no room: the REST thread times out */
}

static void mac_json(FILE *f, const char *name, const uint8_t *m)
{
	fprintf(f, ",\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"", name, m[0], m[1], m[2], m[3],
		m[4], m[5]);
}

void ofc_flows_reply(struct ofc_flow_req *r, const struct of_session *s, const struct of_msg *m)
{
	if (!r->f || m->xid != r->xid || s != r->session || s->datapath_id != r->dpid)
		return; /* not the answer to our request (another switch, an old xid) */
	struct of_flow_stats fs;
	unsigned cur = 0;
	bool more = (m->u.mp_reply.flags & OFPMPF_MORE) != 0;
	while (of_flow_stats_next(m->version, &m->u.mp_reply.body, &cur, &fs) == 1) {
		if (r->n >= OFC_FLOWS_MAX || ftell(r->f) >= OFC_FLOWS_MAX_BYTES) {
			r->truncated = true; /* enough: the array ends here */
			more = false;
			break;
		}
		fprintf(r->f, "%s{\"table_id\":%u,\"priority\":%u,\"idle_timeout\":%u,"
			"\"hard_timeout\":%u,\"cookie\":%llu,\"packet_count\":%llu,\"byte_count\":%llu,"
			"\"duration_s\":%u,\"match\":{\"fields\":%llu",
			r->n++ ? "," : "", fs.table_id,
			fs.priority, fs.idle_timeout, fs.hard_timeout, (unsigned long long)fs.cookie,
			(unsigned long long)fs.packet_count, (unsigned long long)fs.byte_count,
			fs.duration_sec, (unsigned long long)fs.match.fields);
		if (fs.match.fields & OF_MATCH_IN_PORT)
			fprintf(r->f, ",\"in_port\":%u", fs.match.in_port);
		if (fs.match.fields & OF_MATCH_ETH_SRC)
			mac_json(r->f, "eth_src", fs.match.eth_src);
		if (fs.match.fields & OF_MATCH_ETH_DST)
			mac_json(r->f, "eth_dst", fs.match.eth_dst);
		if (fs.match.fields & OF_MATCH_ETH_TYPE)
			fprintf(r->f, ",\"eth_type\":%u", fs.match.eth_type);
		fprintf(r->f, ",\"other_fields\":%u},\"output\":[", fs.match.n_other);
		unsigned nout = 0;
		for (unsigned i = 0; i < fs.actions.n; i++)
			if (fs.actions.a[i].type == OF_ACT_OUTPUT)
				fprintf(r->f, "%s%u", nout++ ? "," : "", fs.actions.a[i].port);
		/* rewrites (set_field, push/pop_vlan, ttl) are counted with the skipped ones */
		fprintf(r->f, "],\"other_actions\":%u}", fs.actions.n_skipped + fs.actions.n - nout);
	}
	if (more)
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
