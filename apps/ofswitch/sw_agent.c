/*
 * apps/ofswitch/sw_agent.c: the OpenFlow 1.3 agent, one thread: the controller connection,
 * the master flow list, its changes to the classifier, PACKET_IN/PACKET_OUT and the timeouts.
 *
 * The agent is the only writer of the flow table. A FLOW_MOD changes the master list and,
 * one flow at a time, the classifier the pollers read (sw_table_add/remove: each change is
 * visible at once, nothing is rebuilt); what the pollers can no longer reach (removed flows,
 * replaced action lists) is retired, and publish() frees it after a QSBR grace period,
 * waiting for one at most every SW_RECLAIM_NS. So a flood of FLOW_MODs costs no rebuild and
 * no wait per message, and the pollers never wait.
 *
 * Everything the protocol module parses but this switch does not do is refused with the
 * OpenFlow ERROR the spec names (docs/switch.md has the table); malformed input gets its
 * ERROR and the connection stays up unless the framing itself is lost.
 *
 * Connections: one per --controller (up to 8, each connecting on its own, non-blocking,
 * with exponential backoff and jitter) plus up to 4 clients of --listen. Each has its role
 * (EQUAL until a ROLE_REQUEST; sw_role.c), its async config and miss_send_len; PACKET_IN
 * and FLOW_REMOVED go to every connection whose role and config want them, PORT_STATUS to
 * all by default. A SLAVE's state-changing requests get BAD_REQUEST/IS_SLAVE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>

#include "sw.h"
#include "sw_meter.h"
#include "sw_group.h"
#include "sw_offload.h"

/* Error types/codes not in of.h (OpenFlow 1.3 wire values). */
#define OFPBRC_BAD_EXPERIMENTER 3
#define OFPBRC_BUFFER_UNKNOWN 8
#define OFPBRC_BAD_TABLE_ID 9
#define OFPBRC_MULTIPART_BUFFER_OVERFLOW 13
#define OFPBMC_BAD_FIELD 6
#define OFPET_FLOW_MOD_FAILED 5
#define OFPFMFC_TABLE_FULL 1
#define OFPFMFC_OVERLAP 3
#define OFPFF_CHECK_OVERLAP 0x2
#define OFPRR_IDLE_TIMEOUT 0
#define OFPRR_HARD_TIMEOUT 1
#define OFPRR_DELETE 2
#define OFPFMFC_BAD_COMMAND 6
#define OFPFMFC_BAD_FLAGS 7
#define OFPFMFC_BAD_TABLE_ID 9
#define OFPPS_LINK_DOWN 1
#define OFPPR_MODIFY 2
#define OFPMP13_TABLE_FEATURES 12
#define OFPPR_ADD 0
#define CONNECT_TIMEOUT_NS 5000000000ull /* a connect() not done by then failed */
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 8000
#define OFPR_NO_MATCH 0
#define OFPR_ACTION 1
#define OF_VERSION_BIT (1u << OF_VERSION_1_3)
#define RBUF (2 * OF_MAX_MSG_LEN + 4096)
#define WBUF (OF_MAX_MSG_LEN + 1)
#define STATS_PER_MSG 32 /* an entry with both action lists full is about 1.5 KiB: 32 fit WBUF */
#define IDX_BUCKETS (2u * SW_MAX_FLOWS) /* the agent's index: a power of two */

/* One OpenFlow connection: conns[i] for --controller i (i < ncontrollers), the slots after
 * them for --listen clients. */
struct sw_conn {
	int fd;
	uint8_t version; /* 0 until HELLO negotiated */
	bool connecting; /* a non-blocking connect() in progress (controllers only) */
	int ctl;         /* index of its --controller, or -1: a --listen client */
	size_t rlen;
	uint64_t last_rx_ns, last_echo_ns;
	uint64_t next_try_ns, connect_ns; /* controllers: next attempt, start of this one */
	uint32_t backoff_ms;              /* controllers: the current backoff */
	uint16_t miss_send_len;           /* SET_CONFIG, per connection (as OVS) */
	bool async_on; /* listener clients: async messages only after SET_CONFIG/SET_ASYNC */
	struct sw_async async;
	uint8_t rbuf[RBUF];
};

#define SW_MAX_LISTENERS 4 /* --listen clients (ovs-ofctl) */
#define SW_MAX_CONNS (SW_MAX_CONTROLLERS + SW_MAX_LISTENERS)

struct sw_agent {
	struct sw_dp *dp;
	struct sw_conn conns[SW_MAX_CONNS];
	int link[SW_MAX_PORTS]; /* last link state seen (rf_io_link_up), for PORT_STATUS */
	int lfd; /* --listen socket, or -1 */
	struct sw_agent_cfg cfg;
	struct sockaddr_in ctl[SW_MAX_CONTROLLERS];
	uint32_t roles[SW_MAX_CONNS]; /* OFPCR_ROLE_* of each connection (0 when closed) */
	struct sw_roles role_state;   /* the generation id */
	uint64_t rng;                 /* xorshift state for the backoff jitter */
	struct sw_flow *flows;
	unsigned nflows;
	struct sw_flow **idx; /* IDX_BUCKETS chains: ADD and *_STRICT find a flow in O(1) */
	bool dirty;
	uint16_t cfg_flags;
	uint32_t xid;
	uint64_t last_timer_ns;
	uint8_t wbuf[WBUF];
	struct of_flow_stats fs[STATS_PER_MSG];
	struct sw_meters meters; /* sw_meter.h (issue 25) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the table: publish and reclaim ---- */

/* Free p (kind 0: a flow taken out of the table, 1: an action list) after a grace period. */
static void retire(struct sw_agent *a, void *p, int kind)
{
	sw_table_retire(atomic_load_explicit(&a->dp->table, memory_order_relaxed), p,
			kind == 0 ? SW_RETIRE_FLOW : SW_RETIRE_FREE);
}

/* Every change is already visible to the pollers (sw_table.c); this frees what they can no
 * longer reach, waiting for a grace period at most once per SW_RECLAIM_NS. The first call
 * makes the table. */
static int publish(struct sw_agent *a)
{
	struct sw_table *t = atomic_load_explicit(&a->dp->table, memory_order_relaxed); /* ours */
	if (!t) {
		t = sw_table_create(a->dp->ncores ? a->dp->ncores : 1);
		if (!t) {
			fprintf(stderr, "ringflow-switch: no memory for the flow table\n");
			return -ENOMEM;
		}
		/* release: pairs with the pollers' acquire in sw_dp_poll: the table is complete. */
		atomic_store_explicit(&a->dp->table, t, memory_order_release);
	}
	sw_table_reclaim(t, now_ns(), false);
	a->dirty = false;
	return 0;
}

/* ---- sending ---- */

/* The next connect attempt of controller connection c: after its backoff with jitter
 * (a random point in [backoff/2, backoff], so switches that lost the same controller do not
 * come back in step), then the backoff doubles up to BACKOFF_MAX_MS. */
static void schedule_retry(struct sw_agent *a, struct sw_conn *c, uint64_t now)
{
	a->rng ^= a->rng << 13; /* xorshift64 */
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	uint64_t half = c->backoff_ms / 2;
	c->next_try_ns = now + (half + a->rng % (half + 1)) * 1000000ull;
	c->backoff_ms = c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : c->backoff_ms * 2;
}

static void conn_close(struct sw_agent *a, struct sw_conn *c, const char *why)
{
	if (c->fd >= 0) {
		if (c->ctl >= 0 && !c->connecting)
			fprintf(stderr, "ringflow-switch: controller %s: connection closed: %s\n",
				a->cfg.controllers[c->ctl], why);
		close(c->fd);
		if (c->ctl >= 0)
			schedule_retry(a, c, now_ns());
	}
	c->fd = -1;
	c->version = 0;
	c->connecting = false;
	c->rlen = 0;
	a->roles[c - a->conns] = 0;
}

static void send_bytes(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, ssize_t n)
{
	if (n <= 0 || c->fd < 0)
		return;
	size_t off = 0;
	while (off < (size_t)n) {
		ssize_t w = send(c->fd, b + off, (size_t)n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			conn_close(a, c, strerror(errno));
			return;
		}
		off += (size_t)w;
	}
}

static void send_error(struct sw_agent *a, struct sw_conn *c, uint32_t xid, uint16_t type, uint16_t code,
		       const uint8_t *msg, size_t len)
{
	uint8_t v = c->version ? c->version : OF_VERSION_1_3;
	send_bytes(a, c, a->wbuf, of_build_error(a->wbuf, WBUF, v, xid, type, code, msg, len));
}

/* ---- matches ---- */

/* Non-strict: the flow is at least as specific as (v, mk) and agrees with it there. */
static bool covered(const struct sw_flow *f, const struct sw_key *v, const struct sw_key *mk)
{
	const uint8_t *fm = (const uint8_t *)&f->mask, *fv = (const uint8_t *)&f->match,
		      *rm = (const uint8_t *)mk, *rv = (const uint8_t *)v;
	for (size_t i = 0; i < sizeof(*v); i++)
		if ((fm[i] & rm[i]) != rm[i] || (fv[i] & rm[i]) != rv[i])
			return false;
	return true;
}

/* Some packet matches both the flow and (v, mk): they agree wherever both care. */
static bool overlaps(const struct sw_flow *f, const struct sw_key *v, const struct sw_key *mk)
{
	const uint8_t *fm = (const uint8_t *)&f->mask, *fv = (const uint8_t *)&f->match,
		      *rm = (const uint8_t *)mk, *rv = (const uint8_t *)v;
	for (size_t i = 0; i < sizeof(*v); i++)
		if ((fv[i] ^ rv[i]) & fm[i] & rm[i])
			return false;
	return true;
}

static bool same_match(const struct sw_flow *f, const struct sw_key *v, const struct sw_key *mk)
{
	return !memcmp(&f->mask, mk, sizeof(*mk)) && !memcmp(&f->match, v, sizeof(*v));
}

static bool outputs_to(const struct sw_flow *f, uint32_t port)
{
	if (port == OFPP_ANY)
		return true;
	return sw_actions_outputs_to(atomic_load_explicit(&f->actions, memory_order_relaxed), port);
}

/* Does f forward to group (OFPG_ANY: always true)? */
static bool to_group(const struct sw_flow *f, uint32_t group)
{
	return group == OFPG_ANY ||
	       sw_group_named(atomic_load_explicit(&f->actions, memory_order_relaxed), group);
}

static bool cookie_ok(const struct sw_flow *f, uint64_t cookie, uint64_t mask)
{
	return (f->cookie & mask) == (cookie & mask);
}

/* ---- FLOW_MOD ---- */

/* Decodes and checks a FLOW_MOD's actions against its match (sw_actions.c) into *prog.
 * 0, or -1 with the ERROR to send in *etype, *ecode. */
static int check_actions(struct sw_agent *a, const struct of_actions *acts,
			 const struct of_match *m, struct sw_actions *prog, uint16_t *etype,
			 uint16_t *ecode)
{
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(m, a->dp->nports, &ctx);
	ctx.groups = a->dp->groups;
	if (sw_actions_decode(acts, &ctx, prog, etype, ecode))
		return -1;
	if (prog->meter_id && !(prog->meter = sw_meters_find(&a->meters, prog->meter_id))) {
		*etype = OFPET_METER_MOD_FAILED; /* "invalid meter in meter action" (1.3.5) */
		*ecode = OFPMMFC_UNKNOWN_METER;
		return -1;
	}
	return 0;
}

/* A published copy of a checked program, only as long as its steps (a one-output flow
 * takes 20 bytes, not the 260 of a full struct; nothing reads past op[n - 1]). Freed after
 * a grace period (retire()). */
static struct sw_actions *actions_new(const struct sw_actions *prog)
{
	size_t size = offsetof(struct sw_actions, op) +
		      ((size_t)prog->n + prog->nwrite) * sizeof(prog->op[0]); /* + write-actions */
	struct sw_actions *x = malloc(size);
	if (x)
		memcpy(x, prog, size);
	return x;
}

/* Does connection c take an async message of kind (SW_ASYNC_*) and reason now? Its role
 * and async config say; --listen clients (ovs-ofctl) get PACKET_IN and FLOW_REMOVED only
 * once they asked (a nonzero miss_send_len or SET_ASYNC), as OVS's service connections. */
static bool wants(struct sw_agent *a, struct sw_conn *c, unsigned kind, uint8_t reason)
{
	if (c->fd < 0 || !c->version)
		return false;
	if (c->ctl < 0 && !c->async_on && kind != SW_ASYNC_PORT_STATUS)
		return false;
	return sw_async_wants(&c->async, a->roles[c - a->conns], kind, reason);
}

/* FLOW_REMOVED for f to every connection that wants it, when f asked (SEND_FLOW_REM). */
static void flow_removed(struct sw_agent *a, const struct sw_flow *f, uint8_t reason)
{
	if (!(f->flags & OFPFF_SEND_FLOW_REM))
		return;
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_REMOVED, .xid = 0};
	struct of_flow_removed *r = &m.u.flow_removed;
	uint64_t age = now_ns() - f->created_ns;
	r->cookie = f->cookie;
	r->priority = f->priority;
	r->reason = reason;
	r->table_id = f->table_id;
	r->duration_sec = (uint32_t)(age / 1000000000u);
	r->duration_nsec = (uint32_t)(age % 1000000000u);
	r->idle_timeout = f->idle_timeout;
	r->hard_timeout = f->hard_timeout;
	sw_flow_counts(f, &r->packet_count, &r->byte_count);
	sw_match_of_flow(f, &r->match);
	ssize_t n = of_serialize(&m, a->wbuf, WBUF);
	for (unsigned i = 0; i < SW_MAX_CONNS; i++)
		if (wants(a, &a->conns[i], SW_ASYNC_FLOW_REMOVED, reason))
			send_bytes(a, &a->conns[i], a->wbuf, n);
}

/* ---- the agent's index of flows by (match, mask, priority) ---- */

static uint32_t idx_hash(const struct sw_key *v, const struct sw_key *mk, uint16_t prio)
{
	uint32_t h = 2166136261u ^ prio; /* FNV-1a */
	const uint8_t *p = (const uint8_t *)v, *q = (const uint8_t *)mk;
	for (size_t i = 0; i < sizeof(*v); i++)
		h = (h ^ p[i]) * 16777619u;
	for (size_t i = 0; i < sizeof(*mk); i++)
		h = (h ^ q[i]) * 16777619u;
	return h & (IDX_BUCKETS - 1);
}

static struct sw_flow *idx_find(struct sw_agent *a, const struct sw_key *v,
				const struct sw_key *mk, uint16_t prio, const struct of_flow_mod *fm)
{
	for (struct sw_flow *f = a->idx[idx_hash(v, mk, prio)]; f; f = f->hnext)
		if (f->priority == prio && same_match(f, v, mk) && sw_pipe_same(f, fm))
			return f;
	return NULL;
}

static void idx_del(struct sw_agent *a, struct sw_flow *f)
{
	struct sw_flow **pp = &a->idx[idx_hash(&f->match, &f->mask, f->priority)];
	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
}

/* Into the classifier (0, or -ENOSPC / -ENOMEM: then nowhere), the master list and the index. */
static int link_flow(struct sw_agent *a, struct sw_flow *f)
{
	int rc = sw_table_add(atomic_load_explicit(&a->dp->table, memory_order_relaxed), f);
	if (rc != 0)
		return rc;
	f->next = a->flows;
	f->pprev = &a->flows;
	if (a->flows)
		a->flows->pprev = &f->next;
	a->flows = f;
	uint32_t b = idx_hash(&f->match, &f->mask, f->priority);
	f->hnext = a->idx[b];
	a->idx[b] = f;
	a->nflows++;
	a->dirty = true;
	return 0;
}

/* Remove f from the master list and the index (reason: OFPRR_*, or -1:
 * no FLOW_REMOVED); it is freed after the next grace period. A loop holding &prev->next
 * (== f->pprev) finds f's successor there afterwards. */
static void unlink_flow(struct sw_agent *a, struct sw_flow *f, int reason)
{
	sw_offload_flow_gone(a->dp->offload, f); /* its kernel entries first (sw_offload.c) */
	if (reason >= 0)
		flow_removed(a, f, (uint8_t)reason);
	sw_table_remove(atomic_load_explicit(&a->dp->table, memory_order_relaxed), f);
	idx_del(a, f);
	if (f->next)
		f->next->pprev = f->pprev;
	*f->pprev = f->next;
	a->nflows--;
	retire(a, atomic_load_explicit(&f->actions, memory_order_relaxed), 1);
	retire(a, f, 0);
	a->dirty = true;
}

/* An ADD over the identical flow old (same match, mask, priority): f takes its place in the
 * classifier (sw_table_replace: no moment without either), the master list and the index;
 * old goes without FLOW_REMOVED (as OVS) and is freed after a grace period. Cannot fail:
 * everything f needs was allocated before. */
static void replace_flow(struct sw_agent *a, struct sw_flow *old, struct sw_flow *f)
{
	sw_offload_flow_gone(a->dp->offload, old); /* its kernel entries first (sw_offload.c) */
	sw_table_replace(atomic_load_explicit(&a->dp->table, memory_order_relaxed), old, f);
	f->next = old->next;
	f->pprev = old->pprev;
	if (f->next)
		f->next->pprev = &f->next;
	*f->pprev = f;
	struct sw_flow **pp = &a->idx[idx_hash(&old->match, &old->mask, old->priority)];
	while (*pp && *pp != old)
		pp = &(*pp)->hnext;
	f->hnext = old->hnext;
	if (*pp)
		*pp = f;
	retire(a, atomic_load_explicit(&old->actions, memory_order_relaxed), 1);
	a->dirty = true;
}

static void flow_mod(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw, size_t len)
{
	const struct of_flow_mod *fm = &m->u.flow_mod;
	uint32_t xid = m->xid;
	struct sw_actions prog;
	uint16_t etype, ecode;
	if (fm->command > OFPFC_DELETE_STRICT)
		return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_BAD_COMMAND, raw, len);
	if (fm->match.n_other)
		return send_error(a, c, xid, OFPET_BAD_MATCH, OFPBMC_BAD_FIELD, raw, len);
	bool del = fm->command == OFPFC_DELETE || fm->command == OFPFC_DELETE_STRICT;
	if (fm->table_id >= SW_N_TABLES && !(del && fm->table_id == OFPTT_ALL))
		return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_BAD_TABLE_ID, raw, len);
	if (!del && (check_actions(a, &fm->actions, &fm->match, &prog, &etype, &ecode) ||
		     sw_pipe_check(fm, a->dp->nports, &prog, &etype, &ecode)))
		return send_error(a, c, xid, etype, ecode, raw, len);
	if (fm->flags & ~(OFPFF_SEND_FLOW_REM | OFPFF_CHECK_OVERLAP)) /* RESET_COUNTS, NO_*_COUNTS */
		return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_BAD_FLAGS, raw, len);
	if (!del && fm->buffer_id != OFP_NO_BUFFER) /* n_buffers = 0 */
		return send_error(a, c, xid, OFPET_BAD_REQUEST, OFPBRC_BUFFER_UNKNOWN, raw, len);
	struct sw_key v, mk;
	sw_key_of_match(&fm->match, &v, &mk);
	bool strict = fm->command == OFPFC_MODIFY_STRICT || fm->command == OFPFC_DELETE_STRICT;

	if (fm->command == OFPFC_ADD) {
		struct sw_flow *old = idx_find(a, &v, &mk, fm->priority, fm);
		bool replace = old != NULL;
		if (!replace && (fm->flags & OFPFF_CHECK_OVERLAP))
			for (struct sw_flow *g = a->flows; g; g = g->next)
				if (g->priority == fm->priority && overlaps(g, &v, &mk) &&
				    sw_pipe_overlaps(g, fm))
					return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_OVERLAP,
							  raw, len);
		if (!replace && a->nflows >= SW_MAX_FLOWS)
			return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_TABLE_FULL, raw, len);
		struct sw_flow *f = sw_flow_alloc(a->dp->ncores ? a->dp->ncores : 1);
		struct sw_actions *acts = actions_new(&prog);
		if (!f || !acts) {
			free(f);
			free(acts);
			return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_TABLE_FULL, raw, len);
		}
		f->match = v;
		f->mask = mk;
		f->fields = fm->match.fields;
		f->priority = fm->priority;
		f->idle_timeout = fm->idle_timeout;
		f->hard_timeout = fm->hard_timeout;
		f->flags = fm->flags;
		f->cookie = fm->cookie;
		sw_pipe_flow_init(f, fm);
		f->created_ns = f->last_used_ns = now_ns();
		atomic_init(&f->actions, acts);
		if (replace) { /* in place: never fails, the pollers see old or f throughout */
			replace_flow(a, old, f);
			return;
		}
		sw_offload_flow_new(a->dp->offload, f); /* entries f may beat go first */
		if (link_flow(a, f) != 0) { /* nothing changed: the table stays as it was */
			free(acts);
			free(f);
			return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_TABLE_FULL, raw, len);
		}
		return;
	}
	/* Strict: the one flow the index names (a one-element walk); else every flow. A
	 * DELETE_STRICT of table ALL takes that flow from each table: a walk over all. */
	bool one_only = strict && fm->table_id != OFPTT_ALL;
	struct sw_flow *one = one_only ? idx_find(a, &v, &mk, fm->priority, fm) : NULL;
	struct sw_flow **start = one_only ? (one ? one->pprev : NULL) : &a->flows;
	for (struct sw_flow **pp = start; pp && *pp;) {
		struct sw_flow *f = *pp;
		if (one_only && f != one)
			break;
		bool hit = one_only ||
			   (strict ? f->priority == fm->priority && same_match(f, &v, &mk) &&
					     sw_pipe_same(f, fm)
				   : covered(f, &v, &mk) &&
					     sw_pipe_covered(f, fm->table_id, &fm->match));
		hit = hit && cookie_ok(f, fm->cookie, fm->cookie_mask);
		if (del)
			hit = hit && outputs_to(f, fm->out_port) && to_group(f, fm->out_group);
		if (!hit) {
			pp = &f->next;
			continue;
		}
		if (del) {
			unlink_flow(a, f, OFPRR_DELETE);
			continue;
		}
		struct sw_actions *acts = actions_new(&prog);
		if (!acts)
			return send_error(a, c, xid, OFPET_FLOW_MOD_FAILED, OFPFMFC_TABLE_FULL, raw, len);
		sw_offload_flow_gone(a->dp->offload, f); /* its kernel entries first */
		/* Pairs with the pollers' acquire load of f->actions: a complete list. The old
		 * list is freed after the next grace period (publish). */
		struct sw_actions *old = atomic_exchange_explicit(&f->actions, acts,
								  memory_order_acq_rel);
		retire(a, old, 1);
		a->dirty = true;
		pp = &f->next;
	}
}

/* ---- multipart ---- */

static void mp_flow(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m)
{
	const struct of_mp_request *r = &m->u.mp_request;
	struct sw_key v, mk;
	sw_key_of_match(&r->match, &v, &mk);
	uint64_t now = now_ns();
	unsigned n = 0;
	struct sw_flow *f = a->flows;
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the flows */
	for (;;) {
		for (; f && n < STATS_PER_MSG; f = f->next) {
			if (!covered(f, &v, &mk) || !sw_pipe_covered(f, r->table_id, &r->match) ||
			    !cookie_ok(f, r->cookie, r->cookie_mask) ||
			    !outputs_to(f, r->out_port) || !to_group(f, r->out_group))
				continue;
			struct of_flow_stats *s = &a->fs[n++];
			memset(s, 0, sizeof(*s));
			uint64_t age = now - f->created_ns;
			s->duration_sec = (uint32_t)(age / 1000000000u);
			s->duration_nsec = (uint32_t)(age % 1000000000u);
			s->priority = f->priority;
			s->idle_timeout = f->idle_timeout;
			s->hard_timeout = f->hard_timeout;
			s->flags = f->flags;
			s->cookie = f->cookie;
			sw_flow_counts(f, &s->packet_count, &s->byte_count);
			sw_match_of_flow(f, &s->match);
			sw_actions_to_of(atomic_load_explicit(&f->actions, memory_order_relaxed),
					 &s->actions);
			s->table_id = f->table_id;
			sw_insts_to_of(atomic_load_explicit(&f->actions, memory_order_relaxed),
				       &s->inst);
		}
		struct of_msg rep = {.version = c->version, .type = OF_MULTIPART_REPLY, .xid = m->xid};
		rep.u.mp_reply.mp_type = OF_MP_FLOW;
		rep.u.mp_reply.flags = f ? OFPMPF_MORE : 0;
		rep.u.mp_reply.body.n = (uint16_t)n;
		rep.u.mp_reply.body.items = a->fs;
		send_bytes(a, c, a->wbuf, of_serialize(&rep, a->wbuf, WBUF));
		if (!f || c->fd < 0)
			return;
		n = 0;
	}
}

static void port_desc(const struct sw_port *p, int link, struct of_port *o)
{
	memset(o, 0, sizeof(*o));
	o->port_no = p->of_no;
	memcpy(o->hw_addr, p->mac, 6);
	snprintf(o->name, sizeof(o->name), "%s", p->name);
	o->state = link == 0 ? OFPPS_LINK_DOWN : 0;
}

/* PORT_STATUS (MODIFY) to every connection when a port's link went up or down. */
static void port_status_check(struct sw_agent *a)
{
	for (unsigned i = 0; i < a->dp->nports; i++) {
		struct sw_port *p = &a->dp->ports[i];
		int link = rf_io_link_up(p->dev);
		if (link == a->link[i])
			continue;
		a->link[i] = link;
		sw_group_set_link(a->dp->groups, p->of_no, link != 0); /* fast failover */
		struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PORT_STATUS, .xid = 0};
		m.u.port_status.reason = OFPPR_MODIFY;
		port_desc(p, link, &m.u.port_status.port);
		ssize_t len = of_serialize(&m, a->wbuf, WBUF);
		for (unsigned k = 0; k < SW_MAX_CONNS; k++)
			if (wants(a, &a->conns[k], SW_ASYNC_PORT_STATUS, OFPPR_MODIFY))
				send_bytes(a, &a->conns[k], a->wbuf, len);
	}
}

static void mp_ports(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m)
{
	struct sw_dp *dp = a->dp;
	struct of_port ports[SW_MAX_PORTS];
	struct of_port_stats st[SW_MAX_PORTS];
	unsigned n = 0;
	bool desc = m->u.mp_request.mp_type == OF_MP_PORT_DESC;
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the ports */
	for (unsigned i = 0; i < dp->nports; i++) {
		struct sw_port *p = &dp->ports[i];
		if (!desc && m->u.mp_request.port_no != OFPP_ANY && m->u.mp_request.port_no != p->of_no)
			continue;
		if (desc) {
			port_desc(p, rf_io_link_up(p->dev), &ports[n++]);
		} else {
			struct rf_io_stats s;
			rf_io_stats_get(p->dev, &s);
			struct of_port_stats *o = &st[n++];
			memset(o, 0, sizeof(*o));
			o->port_no = p->of_no;
			o->rx_packets = s.rx_pkts;
			o->tx_packets = s.tx_pkts;
			o->rx_bytes = s.rx_bytes;
			o->tx_bytes = s.tx_bytes;
			o->rx_dropped = s.rx_drops + s.rx_nobuf;
			uint64_t orp, orb, otp, otb; /* what the kernel forwarded (--offload) */
			sw_offload_port_counts(dp->offload, i, &orp, &orb, &otp, &otb);
			o->rx_packets += orp, o->rx_bytes += orb, o->tx_packets += otp,
				o->tx_bytes += otb;
			o->tx_dropped = s.tx_drops;
		}
	}
	struct of_msg rep = {.version = c->version, .type = OF_MULTIPART_REPLY, .xid = m->xid};
	rep.u.mp_reply.mp_type = m->u.mp_request.mp_type;
	rep.u.mp_reply.body.n = (uint16_t)n;
	rep.u.mp_reply.body.items = desc ? (const void *)ports : (const void *)st;
	send_bytes(a, c, a->wbuf, of_serialize(&rep, a->wbuf, WBUF));
}

/* AGGREGATE: the sums over the flows a FLOW stats request with the same fields would list. */
static void mp_aggregate(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	const struct of_mp_request *r = &x->u.aggregate_request;
	struct sw_key v, mk;
	sw_key_of_match(&r->match, &v, &mk);
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_AGGREGATE_REPLY, .xid = x->xid};
	sw_offload_sync(a->dp->offload); /* the kernel's hits into the flows */
	if (r->table_id < SW_N_TABLES || r->table_id == OFPTT_ALL)
		for (struct sw_flow *f = a->flows; f; f = f->next) {
			if (!covered(f, &v, &mk) || !sw_pipe_covered(f, r->table_id, &r->match) ||
			    !cookie_ok(f, r->cookie, r->cookie_mask) ||
			    !outputs_to(f, r->out_port) || !to_group(f, r->out_group))
				continue;
			uint64_t pk, by;
			sw_flow_counts(f, &pk, &by);
			rep.u.aggregate.packet_count += pk;
			rep.u.aggregate.byte_count += by;
			rep.u.aggregate.flow_count++;
		}
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

/* TABLE: every table of the pipeline (sw_tables.c). */
static void mp_table(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	struct of_table_stats t[SW_N_TABLES];
	sw_tables_stats(a->dp, a->flows, t);
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_TABLE_REPLY, .xid = x->xid};
	rep.u.tables.n = SW_N_TABLES;
	rep.u.tables.items = t;
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

static void mp_desc(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x)
{
	struct of_xmsg rep = {.version = OF_VERSION_1_3, .type = OF_X_DESC_REPLY, .xid = x->xid};
	struct of_desc *d = &rep.u.desc;
	snprintf(d->mfr, sizeof(d->mfr), "ringflow");
	snprintf(d->hw, sizeof(d->hw), "ringflow-switch on ringflow frame ports");
	snprintf(d->sw, sizeof(d->sw), "ringflow-switch (OpenFlow 1.3)");
	snprintf(d->serial, sizeof(d->serial), "None");
	snprintf(d->dp, sizeof(d->dp), "dpid 0x%016llx, %u ports, %u cores",
		 (unsigned long long)a->cfg.dpid, a->dp->nports, a->dp->ncores);
	send_bytes(a, c, a->wbuf, of_xserialize(&rep, a->wbuf, WBUF));
}

/* ---- PACKET_OUT ---- */

static void packet_out(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw, size_t len)
{
	const struct of_packet_out *po = &m->u.packet_out;
	struct sw_dp *dp = a->dp;
	if (po->buffer_id != OFP_NO_BUFFER)
		return send_error(a, c, m->xid, OFPET_BAD_REQUEST, OFPBRC_BUFFER_UNKNOWN, raw, len);
	/* The actions are checked against the frame itself (as OVS does). */
	struct sw_key k;
	struct sw_act_ctx ctx;
	struct sw_actions prog;
	uint16_t etype, ecode;
	uint32_t in_no = po->in_port >= 1 && po->in_port <= dp->nports ? po->in_port : 0;
	if (sw_key_parse(po->data, po->data_len, in_no, &k) != 0)
		memset(&k, 0, sizeof(k)); /* not a whole frame: no header can be relied on */
	sw_act_ctx_of_key(&k, dp->nports, &ctx);
	ctx.groups = dp->groups;
	if (sw_actions_decode(&po->actions, &ctx, &prog, &etype, &ecode))
		return send_error(a, c, m->xid, etype, ecode, raw, len);
	struct sw_actions *slot = sw_dp_po_slot(dp);
	if (!slot || prog.last_out >= prog.n)
		return; /* poller 0 is behind (dropped like a full queue), or nothing to send */
	struct rf_pktbuf *b = rf_pktbuf_alloc(dp->pool);
	if (!b || rf_pktbuf_tailroom(b) < po->data_len || po->data_len < 14) {
		rf_pktbuf_free(b);
		return; /* no buffer now, or not a frame: dropped like a full queue */
	}
	memcpy(rf_pktbuf_data(b), po->data, po->data_len);
	b->data_len = po->data_len;
	b->flow = po->in_port;
	*slot = prog;
	b->timestamp_ns = (uint64_t)(uintptr_t)slot;
	void *p = b;
	if (rf_ring_enqueue_burst(dp->from_ctl, &p, 1, NULL) != 1) {
		rf_pktbuf_free(b);
		return;
	}
	dp->po_sent++;
	rf_runtime_wake(dp->rt, 0);
}

/* ---- TABLE_FEATURES (ovs-ofctl asks before a FLOW_MOD) ---- */

/* Every table, described as it is (sw_tables.c). */
static void table_features(struct sw_agent *a, struct sw_conn *c, uint32_t xid)
{
	size_t n = sw_tables_features(a->wbuf, WBUF, xid);
	if (n)
		send_bytes(a, c, a->wbuf, (ssize_t)n);
}

/* ---- meters (sw_meter_agent.c) ---- */

struct meter_ctx {
	struct sw_agent *a;
	struct sw_conn *c;
};

static void meter_send(void *ctx, const uint8_t *b, size_t n)
{
	struct meter_ctx *mc = ctx;
	send_bytes(mc->a, mc->c, b, (ssize_t)n);
}

static void meter_retire(void *ctx, void *p)
{
	retire(((struct meter_ctx *)ctx)->a, p, 1);
}

static void meter_unlink(void *ctx, struct sw_flow *f)
{
	unlink_flow(ctx, f, OFPRR_DELETE);
}

/* A meter message; a deleted meter's flows are removed (FLOW_REMOVED reason DELETE, as
 * 1.3 has no METER_DELETE), then the meter is retired. */
static void meter_msg(struct sw_agent *a, struct sw_conn *c, const struct of_mmsg *mm,
		      const uint8_t *b, size_t len)
{
	struct meter_ctx mc = {a, c};
	struct sw_meter_io io = {meter_send, meter_retire, &mc, a->wbuf, WBUF};
	uint16_t etype, ecode;
	int rc = sw_meter_handle(&a->meters, mm, a->flows, now_ns(), &io, &etype, &ecode);
	if (rc < 0)
		return send_error(a, c, mm->xid, etype, ecode, b, len);
	if (rc == 0)
		return;
	sw_meter_cascade(&a->flows, meter_unlink, a);
	sw_meters_reap(&a->meters, meter_retire, &mc);
	a->dirty = true;
}

/* ---- one message ---- */

/* Wire types a SLAVE may not send (1.3.5 section 6.3.6): PACKET_OUT, FLOW_MOD, GROUP_MOD,
 * PORT_MOD, TABLE_MOD, METER_MOD, and a TABLE_FEATURES request that sets features. */
static bool slave_denied(const uint8_t *b, size_t len)
{
	switch (b[1]) {
	case 13: case 14: case 15: case 16: case 17: case 29:
		return true;
	case 18:
		return len > 16 && of_get16(b + 8) == OFPMP13_TABLE_FEATURES;
	}
	return false;
}

/* A FLOW or AGGREGATE request's table: the one table (0) or all (OFPTT_ALL); another id
 * is OFPBRC_BAD_TABLE_ID, as OVS answers. */
static bool table_ok(uint8_t table_id)
{
	return table_id < SW_N_TABLES || table_id == OFPTT_ALL;
}

/* The messages of_xparse knows: roles, async config, GET_CONFIG, DESC/AGGREGATE/TABLE. */
static void handle_x(struct sw_agent *a, struct sw_conn *c, const struct of_xmsg *x,
		     const uint8_t *b, size_t len)
{
	unsigned who = (unsigned)(c - a->conns);
	struct of_xmsg r = {.version = OF_VERSION_1_3, .xid = x->xid};
	switch (x->type) {
	case OF_X_GET_CONFIG_REQUEST:
		r.type = OF_X_GET_CONFIG_REPLY;
		r.u.config.flags = a->cfg_flags;
		r.u.config.miss_send_len = c->miss_send_len;
		break;
	case OF_X_ROLE_REQUEST: {
		int code = sw_role_request(&a->role_state, a->roles, SW_MAX_CONNS, who,
					   x->u.role.role, x->u.role.generation_id, &r.u.role.role,
					   &r.u.role.generation_id);
		if (code >= 0)
			return send_error(a, c, x->xid, OFPET_ROLE_REQUEST_FAILED, (uint16_t)code, b,
					  len);
		r.type = OF_X_ROLE_REPLY;
		break;
	}
	case OF_X_GET_ASYNC_REQUEST:
		r.type = OF_X_GET_ASYNC_REPLY;
		for (unsigned i = 0; i < 2; i++) {
			r.u.async.packet_in[i] = c->async.mask[SW_ASYNC_PACKET_IN][i];
			r.u.async.port_status[i] = c->async.mask[SW_ASYNC_PORT_STATUS][i];
			r.u.async.flow_removed[i] = c->async.mask[SW_ASYNC_FLOW_REMOVED][i];
		}
		break;
	case OF_X_SET_ASYNC:
		for (unsigned i = 0; i < 2; i++) {
			c->async.mask[SW_ASYNC_PACKET_IN][i] = x->u.async.packet_in[i];
			c->async.mask[SW_ASYNC_PORT_STATUS][i] = x->u.async.port_status[i];
			c->async.mask[SW_ASYNC_FLOW_REMOVED][i] = x->u.async.flow_removed[i];
		}
		c->async_on = true;
		return;
	case OF_X_DESC_REQUEST:
		return mp_desc(a, c, x);
	case OF_X_AGGREGATE_REQUEST:
		if (x->u.aggregate_request.match.n_other)
			return send_error(a, c, x->xid, OFPET_BAD_MATCH, OFPBMC_BAD_FIELD, b, len);
		if (!table_ok(x->u.aggregate_request.table_id))
			return send_error(a, c, x->xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TABLE_ID, b, len);
		return mp_aggregate(a, c, x);
	case OF_X_TABLE_REQUEST:
		return mp_table(a, c, x);
	default: /* replies: a switch takes none */
		return send_error(a, c, x->xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
	}
	send_bytes(a, c, a->wbuf, of_xserialize(&r, a->wbuf, WBUF));
}

/* ---- groups (sw_group_agent.c) ---- */

struct group_out {
	struct sw_agent *a;
	struct sw_conn *c;
};

static void group_send(void *ctx, const uint8_t *b, size_t n)
{
	struct group_out *o = ctx;
	send_bytes(o->a, o->c, b, (ssize_t)n);
}

/* A group message: true when it was one (done or refused). Flows that name a deleted group
 * go with it (1.3.5 section 6.5), FLOW_REMOVED reason GROUP_DELETE. */
static bool group_msg(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, size_t len)
{
	struct group_out o = {a, c};
	uint16_t etype, ecode;
	bool gone;
	int r = sw_group_handle(a->dp->groups, a->flows, b, len, now_ns(), a->wbuf, group_send,
				&o, &gone, &etype, &ecode);
	if (r < 0)
		send_error(a, c, of_get32(b + 4), etype, ecode, b, len);
	for (struct sw_flow **pp = &a->flows; gone && *pp;) {
		struct sw_flow *f = *pp;
		if (sw_group_orphaned(a->dp->groups,
				      atomic_load_explicit(&f->actions, memory_order_relaxed)))
			unlink_flow(a, f, OFPRR_GROUP_DELETE);
		else
			pp = &f->next;
	}
	a->dirty = a->dirty || gone;
	return r != 0;
}

static void handle(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, size_t len)
{
	struct of_msg m;
	struct of_fault f;
	if (c->version) {
		struct of_xmsg x;
		if (a->roles[c - a->conns] == OFPCR_ROLE_SLAVE && slave_denied(b, len))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE, b,
					  len);
		/* EXPERIMENTER, as a message or a multipart kind: no experimenter is known. */
		if (b[1] == 4 || (b[1] == 18 && len >= 16 && of_get16(b + 8) == 0xffff))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST,
					  OFPBRC_BAD_EXPERIMENTER, b, len);
		/* A request in several parts (REQ_MORE): every request this switch takes fits
		 * in one message, so it keeps no parts (1.3.5 section 7.3.5). */
		if (b[1] == 18 && len >= 16 && (of_get16(b + 10) & OFPMPF_MORE))
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST,
					  OFPBRC_MULTIPART_BUFFER_OVERFLOW, b, len);
		if (group_msg(a, c, b, len)) /* GROUP_MOD, the group multiparts */
			return;
		struct of_mmsg mm; /* METER_MOD and the meter multiparts (issue 25) */
		int mr = of_mparse(b, len, &mm, &f);
		if (mr == 0)
			return meter_msg(a, c, &mm, b, len);
		if (mr != -ENOENT)
			return send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version,
								      &f, b, len));
		int xr = of_xparse(b, len, &x, &f);
		if (xr == 0)
			return handle_x(a, c, &x, b, len);
		if (xr != -ENOENT)
			return send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version,
								      &f, b, len));
	}
	if (c->version && len >= 16 && b[1] == 18 && of_get16(b + 8) == OFPMP13_TABLE_FEATURES) {
		if (len != 16) /* a request that sets features: not done */
			return send_error(a, c, of_get32(b + 4), OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, b, len);
		return table_features(a, c, of_get32(b + 4));
	}
	if (of_parse(b, len, &m, &f) != 0) {
		send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version ? c->version
					  : OF_VERSION_1_3, &f, b, len));
		if (f.close)
			conn_close(a, c, f.why);
		return;
	}
	if (!c->version && m.type != OF_HELLO) {
		send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
		return;
	}
	switch (m.type) {
	case OF_HELLO: {
		int v = of_negotiate(OF_VERSION_BIT, &m);
		if (v < 0) {
			send_error(a, c, m.xid, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, b, len);
			conn_close(a, c, "no common OpenFlow version (this switch speaks 1.3)");
			return;
		}
		c->version = (uint8_t)v;
		c->backoff_ms = BACKOFF_MIN_MS; /* a session: the next loss starts over */
		return;
	}
	case OF_ECHO_REQUEST: {
		struct of_msg r = m;
		r.type = OF_ECHO_REPLY;
		return send_bytes(a, c, a->wbuf, of_serialize(&r, a->wbuf, WBUF));
	}
	case OF_ECHO_REPLY:
	case OF_ERROR:
		return; /* last_rx_ns is already updated */
	case OF_FEATURES_REQUEST: {
		struct of_msg r = {.version = c->version, .type = OF_FEATURES_REPLY, .xid = m.xid};
		r.u.features.datapath_id = a->cfg.dpid;
		r.u.features.n_buffers = 0;
		r.u.features.n_tables = SW_N_TABLES;
		r.u.features.capabilities = 0x1 | 0x4 | 0x8; /* FLOW, PORT, GROUP_STATS */
		return send_bytes(a, c, a->wbuf, of_serialize(&r, a->wbuf, WBUF));
	}
	case OF_SET_CONFIG:
		/* Only OFPC_FRAG_NORMAL: fragments go through the table like other frames; this
		 * switch neither drops (FRAG_DROP) nor reassembles (FRAG_REASM) them. */
		if (m.u.config.flags)
			return send_error(a, c, m.xid, OFPET_SWITCH_CONFIG_FAILED, OFPSCFC_BAD_FLAGS, b,
					  len);
		a->cfg_flags = m.u.config.flags;
		c->miss_send_len = m.u.config.miss_send_len;
		c->async_on = c->async_on || c->miss_send_len != 0;
		return;
	case OF_BARRIER_REQUEST:
		/* Everything before it is done: FLOW_MODs change the master list at once, and the
		 * table the pollers use is published before this reply goes out. */
		if (a->dirty)
			publish(a);
		return send_bytes(a, c, a->wbuf, of_build_simple(a->wbuf, WBUF, c->version,
							      OF_BARRIER_REPLY, m.xid));
	case OF_FLOW_MOD:
		return flow_mod(a, c, &m, b, len);
	case OF_PACKET_OUT:
		return packet_out(a, c, &m, b, len);
	case OF_MULTIPART_REQUEST:
		if (m.u.mp_request.mp_type == OF_MP_FLOW && !table_ok(m.u.mp_request.table_id))
			return send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TABLE_ID, b, len);
		if (m.u.mp_request.mp_type == OF_MP_FLOW)
			return mp_flow(a, c, &m);
		return mp_ports(a, c, &m);
	default: /* messages a switch does not take (FEATURES_REPLY, PACKET_IN, ...) */
		return send_error(a, c, m.xid, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, b, len);
	}
}

/* ---- the connection ---- */

static void conn_read(struct sw_agent *a, struct sw_conn *c)
{
	ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
	if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
		conn_close(a, c, n == 0 ? "closed by the controller" : strerror(errno));
		return;
	}
	if (n < 0)
		return;
	c->rlen += (size_t)n;
	c->last_rx_ns = now_ns();
	size_t off = 0;
	while (c->fd >= 0) {
		struct of_framer fr = {.version = c->version, .max_len = OF_MAX_MSG_LEN};
		struct of_frame fo;
		of_frame(&fr, c->rbuf + off, c->rlen - off, &fo);
		if (fo.kind == OF_FRAME_NEED_MORE)
			break;
		if (fo.kind == OF_FRAME_BAD) {
			send_bytes(a, c, a->wbuf, of_build_error_reply(a->wbuf, WBUF, c->version ? c->version
						  : OF_VERSION_1_3, &fo.fault, c->rbuf + off,
						  c->rlen - off < 64 ? c->rlen - off : 64));
			if (fo.fault.close) {
				conn_close(a, c, fo.fault.why);
				return;
			}
			if (c->rlen - off < fo.len)
				break; /* the rest of the bad message is not here yet */
			off += fo.len;
			continue;
		}
		handle(a, c, c->rbuf + off, fo.len);
		off += fo.len;
	}
	if (c->fd < 0)
		return;
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
	if (a->dirty)
		publish(a);
}

/* A new connection on c (connected): a fresh session, EQUAL, the default async config;
 * send our HELLO. */
static void conn_start(struct sw_agent *a, struct sw_conn *c, int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Sends block (whole messages) but not for ever: a peer that stops reading for an echo
	 * interval is dropped like one that stops answering ECHO, and the others go on. */
	struct timeval tv = {.tv_sec = a->cfg.echo_interval_s ? a->cfg.echo_interval_s : 5};
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c->fd = fd;
	c->version = 0;
	c->connecting = false;
	c->rlen = 0;
	c->last_rx_ns = c->last_echo_ns = now_ns();
	c->miss_send_len = c->ctl >= 0 ? 128 : 0; /* OFP_DEFAULT_MISS_SEND_LEN; 0: a client */
	c->async_on = false;
	sw_async_default(&c->async);
	a->roles[c - a->conns] = OFPCR_ROLE_EQUAL;
	send_bytes(a, c, a->wbuf, of_build_hello(a->wbuf, WBUF, OF_VERSION_1_3, a->xid++,
						 OF_VERSION_BIT));
}

/* Starts a non-blocking connect of controller connection c; the poll loop finishes it
 * (conn_connected) or conn_close schedules the next try. */
static void conn_open(struct sw_agent *a, struct sw_conn *c, uint64_t now)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		schedule_retry(a, c, now);
		return;
	}
	c->fd = fd;
	c->connecting = true;
	c->connect_ns = now;
	if (connect(fd, (struct sockaddr *)&a->ctl[c->ctl], sizeof(a->ctl[0])) != 0 &&
	    errno != EINPROGRESS)
		conn_close(a, c, strerror(errno));
}

/* The connect of c finished (POLLOUT): connected, or failed (closed, retried later). The
 * socket goes back to blocking: sends are whole messages, reads wait for poll. */
static void conn_connected(struct sw_agent *a, struct sw_conn *c)
{
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err) {
		conn_close(a, c, strerror(err));
		return;
	}
	int fd = c->fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	fprintf(stderr, "ringflow-switch: connected to controller %s\n",
		a->cfg.controllers[c->ctl]);
	conn_start(a, c, fd);
}

/* A client of --listen (ovs-ofctl): the first free slot after the controllers'. */
static void conn_accept(struct sw_agent *a)
{
	int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	for (unsigned i = SW_MAX_CONTROLLERS; i < SW_MAX_CONNS; i++)
		if (a->conns[i].fd < 0) {
			conn_start(a, &a->conns[i], fd);
			return;
		}
	close(fd); /* all slots busy: the client sees the close */
}

/* ---- frames for the controller ---- */

/* PACKET_IN to every connection whose role and async config take its reason (master and
 * equal ones by default; a slave only after SET_ASYNC asks). The frame is cut to the
 * output action's max_len. */
static void drain_to_ctl(struct sw_agent *a)
{
	void *bufs[SW_BURST];
	unsigned n;
	while ((n = rf_ring_dequeue_burst(a->dp->to_ctl, bufs, SW_BURST, NULL)) > 0)
		for (unsigned i = 0; i < n; i++) {
			struct rf_pktbuf *b = bufs[i];
			uint16_t max_len = (uint16_t)(b->flow >> 32);
			uint32_t dl = b->data_len;
			if (max_len != OFPCML_NO_BUFFER && dl > max_len)
				dl = max_len;
			struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PACKET_IN, .xid = 0};
			struct of_packet_in *pi = &m.u.packet_in;
			pi->buffer_id = OFP_NO_BUFFER;
			pi->total_len = (uint16_t)b->data_len;
			pi->reason = (b->flow >> 48) & 1 ? OFPR_NO_MATCH : OFPR_ACTION;
			pi->table_id = (uint8_t)(b->flow >> 56); /* the flow's table (sw_dp.c) */
			pi->cookie = b->timestamp_ns;
			pi->match.fields = OF_MATCH_IN_PORT;
			pi->match.in_port = (uint32_t)b->flow;
			pi->data = rf_pktbuf_data(b);
			pi->data_len = (uint16_t)dl;
			ssize_t len = -1;
			for (unsigned k = 0; k < SW_MAX_CONNS; k++) {
				if (!wants(a, &a->conns[k], SW_ASYNC_PACKET_IN, pi->reason))
					continue;
				if (len < 0)
					len = of_serialize(&m, a->wbuf, WBUF);
				send_bytes(a, &a->conns[k], a->wbuf, len);
			}
			rf_pktbuf_free(b);
		}
}

/* ---- timers: expiry and echo ---- */

static void timers(struct sw_agent *a, uint64_t now)
{
	sw_offload_sync(a->dp->offload); /* idle timeouts see the kernel's hits */
	for (struct sw_flow **pp = &a->flows; *pp;) {
		struct sw_flow *f = *pp;
		uint64_t pk, by;
		sw_flow_counts(f, &pk, &by);
		if (pk != f->last_pkts) {
			f->last_pkts = pk;
			f->last_used_ns = now;
		}
		bool idle = f->idle_timeout && now - f->last_used_ns >= f->idle_timeout * 1000000000ull;
		bool hard = f->hard_timeout && now - f->created_ns >= f->hard_timeout * 1000000000ull;
		if (idle || hard)
			unlink_flow(a, f, hard ? OFPRR_HARD_TIMEOUT : OFPRR_IDLE_TIMEOUT);
		else
			pp = &f->next;
	}
	struct sw_table *t = atomic_load_explicit(&a->dp->table, memory_order_relaxed); /* ours */
	sw_table_rerank(t); /* subtables of equal priority: the busiest first */
	sw_table_reclaim(t, now, false);
	a->dirty = false;
	port_status_check(a);
	uint64_t every = (a->cfg.echo_interval_s ? a->cfg.echo_interval_s : 5) * 1000000000ull;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		struct sw_conn *c = &a->conns[i];
		if (c->fd < 0 || c->connecting)
			continue;
		if (now - c->last_rx_ns > 3 * every)
			conn_close(a, c, "no answer to ECHO: dropped");
		else if (c->version && now - c->last_rx_ns >= every &&
			 now - c->last_echo_ns >= every) {
			c->last_echo_ns = now;
			send_bytes(a, c, a->wbuf, of_build_simple(a->wbuf, WBUF, c->version,
								  OF_ECHO_REQUEST, a->xid++));
		}
	}
}

/* "tcp:IPV4:PORT" into *sa; 0 or -1 after one line naming opt. */
static int parse_tcp(const char *opt, const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end = NULL;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (strncmp(s, "tcp:", 4) != 0 || !colon || colon == s + 3 ||
	    (size_t)(colon - s - 4) >= sizeof(host) || *end || port <= 0 || port > 65535)
		goto bad;
	memcpy(host, s + 4, (size_t)(colon - s - 4));
	host[colon - s - 4] = '\0';
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) == 1)
		return 0;
bad:
	fprintf(stderr, "ringflow-switch: %s %s: use tcp:IPV4:PORT, e.g. tcp:127.0.0.1:6653\n", opt,
		s);
	return -1;
}

struct sw_agent *sw_agent_create(struct sw_dp *dp, const struct sw_agent_cfg *cfg)
{
	struct sw_agent *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->dp = dp;
	a->cfg = *cfg;
	a->lfd = -1;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++) {
		a->conns[i].fd = -1;
		a->conns[i].ctl = i < cfg->ncontrollers ? (int)i : -1;
		a->conns[i].backoff_ms = BACKOFF_MIN_MS;
	}
	a->rng = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)a;
	a->rng += !a->rng; /* xorshift state must not be 0 */
	a->xid = 1;
	for (unsigned i = 0; i < dp->nports; i++)
		a->link[i] = rf_io_link_up(dp->ports[i].dev);
	a->idx = calloc(IDX_BUCKETS, sizeof(*a->idx));
	if (!a->idx)
		goto fail;
	if (cfg->ncontrollers > SW_MAX_CONTROLLERS) {
		fprintf(stderr, "ringflow-switch: at most %d --controller\n", SW_MAX_CONTROLLERS);
		goto fail;
	}
	for (unsigned i = 0; i < cfg->ncontrollers; i++)
		if (parse_tcp("--controller", cfg->controllers[i], &a->ctl[i]))
			goto fail;
	if (cfg->listen) {
		struct sockaddr_in la;
		int one = 1;
		if (parse_tcp("--listen", cfg->listen, &la))
			goto fail;
		a->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (a->lfd < 0 || setsockopt(a->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(a->lfd, (struct sockaddr *)&la, sizeof(la)) || listen(a->lfd, 4)) {
			fprintf(stderr, "ringflow-switch: --listen %s: %s: pick a free port\n",
				cfg->listen, strerror(errno));
			goto fail;
		}
	}
	if (!dp->groups && !(dp->groups = sw_groups_create(dp)))
		goto fail;
	for (unsigned i = 0; i < dp->nports; i++) /* fast failover: the links as they are now */
		sw_group_set_link(dp->groups, dp->ports[i].of_no, a->link[i] != 0);
	if (publish(a) != 0) /* an empty table: pollers drop until a controller adds flows */
		goto fail;
	return a;
fail:
	if (a->lfd >= 0)
		close(a->lfd);
	sw_groups_free(dp->groups);
	dp->groups = NULL;
	free(a->idx);
	free(a);
	return NULL;
}

void sw_agent_destroy(struct sw_agent *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < SW_MAX_CONNS; i++)
		conn_close(a, &a->conns[i], "switch stopping");
	if (a->lfd >= 0)
		close(a->lfd);
	drain_to_ctl(a);
	struct sw_table *t = atomic_exchange_explicit(&a->dp->table, NULL, memory_order_acq_rel);
	rf_qsbr_synchronize();
	sw_table_free(t); /* and what it still had to retire */
	sw_groups_free(a->dp->groups); /* the pollers are done (sw_main joins them first) */
	a->dp->groups = NULL;
	while (a->flows) {
		struct sw_flow *f = a->flows;
		a->flows = f->next;
		free(atomic_load_explicit(&f->actions, memory_order_relaxed));
		free(f);
	}
	free(a->idx);
	sw_meters_free(&a->meters); /* no poller runs any more */
	free(a);
}

void *sw_agent_run(void *arg)
{
	struct sw_agent *a = arg;
	struct pollfd pfd[SW_MAX_CONNS + 1];
	rf_qsbr_register(); /* it writes the classifier's lock-free hashes (qsbr.h's rule) */
	while (!rf_runtime_stopping(a->dp->rt)) {
		uint64_t now = now_ns();
		for (unsigned i = 0; i < a->cfg.ncontrollers; i++) {
			struct sw_conn *c = &a->conns[i];
			if (c->fd < 0 && now >= c->next_try_ns)
				conn_open(a, c, now);
			else if (c->connecting && now - c->connect_ns > CONNECT_TIMEOUT_NS)
				conn_close(a, c, "connect timed out");
		}
		for (unsigned i = 0; i < SW_MAX_CONNS; i++)
			pfd[i] = (struct pollfd){.fd = a->conns[i].fd,
						 .events = a->conns[i].connecting ? POLLOUT : POLLIN};
		pfd[SW_MAX_CONNS] = (struct pollfd){.fd = a->lfd, .events = POLLIN};
		rf_qsbr_offline(); /* blocking: delay no grace period */
		int pr = poll(pfd, SW_MAX_CONNS + 1, 1); /* 1 ms: PACKET_IN latency bound */
		rf_qsbr_online();
		for (unsigned i = 0; pr > 0 && i < SW_MAX_CONNS; i++) {
			struct sw_conn *c = &a->conns[i];
			if (c->fd < 0 || pfd[i].fd != c->fd)
				continue; /* closed (or reopened) by an earlier one's handling */
			if (c->connecting && (pfd[i].revents & (POLLOUT | POLLHUP | POLLERR)))
				conn_connected(a, c);
			else if (!c->connecting && (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				conn_read(a, c);
		}
		if (pr > 0 && (pfd[SW_MAX_CONNS].revents & POLLIN))
			conn_accept(a);
		drain_to_ctl(a);
		sw_offload_poll(a->dp->offload, atomic_load_explicit(&a->dp->table,
			memory_order_relaxed), now_ns()); /* ours: the writer */
		sw_ctlcmd_serve(a->cfg.ctlcmd, a->flows, a->nflows, now_ns());
		if (a->dp->macs) { /* relaxed: see struct sw_dp */
			bool up = false; /* a controller session is up */
			for (unsigned i = 0; i < a->cfg.ncontrollers; i++)
				up = up || (a->conns[i].fd >= 0 && a->conns[i].version);
			atomic_store_explicit(&a->dp->standalone, !up, memory_order_relaxed);
		}
		now = now_ns();
		if (now - a->last_timer_ns >= 1000000000ull) {
			a->last_timer_ns = now;
			timers(a, now);
		}
	}
	rf_qsbr_unregister();
	return NULL;
}
