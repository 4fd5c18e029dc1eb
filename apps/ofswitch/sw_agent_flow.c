/*
 * apps/ofswitch/sw_agent_flow.c: the agent's master flow list and its index, FLOW_MOD
 * (add, replace, modify, delete), FLOW_REMOVED, the idle and hard timeouts, and what a
 * deleted meter or group takes with it.
 *
 * The agent is the only writer of the flow table. A FLOW_MOD changes the master list and,
 * one flow at a time, the classifier the pollers read (sw_table_add/remove: each change is
 * visible at once, nothing is rebuilt); what the pollers can no longer reach (removed flows,
 * replaced action lists) is retired, and publish() frees it after a QSBR grace period,
 * waiting for one at most every SW_RECLAIM_NS. So a flood of FLOW_MODs costs no rebuild and
 * no wait per message, and the pollers never wait.
 */
#include "sw_agent_pvt.h"

/* ---- the table: publish and reclaim ---- */

/* Free p (kind 0: a flow taken out of the table, 1: an action list) after a grace period. */
void retire(struct sw_agent *a, void *p, int kind)
{
	sw_table_retire(atomic_load_explicit(&a->dp->table, memory_order_relaxed), p,
			kind == 0 ? SW_RETIRE_FLOW : SW_RETIRE_FREE);
}

/* Every change is already visible to the pollers (sw_table.c); this frees what they can no
 * longer reach, waiting for a grace period at most once per SW_RECLAIM_NS. The first call
 * makes the table. */
int publish(struct sw_agent *a)
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

/* ---- matches ---- */

/* Non-strict: the flow is at least as specific as (v, mk) and agrees with it there. */
bool covered(const struct sw_flow *f, const struct sw_key *v, const struct sw_key *mk)
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

bool outputs_to(const struct sw_flow *f, uint32_t port)
{
	if (port == OFPP_ANY)
		return true;
	return sw_actions_outputs_to(atomic_load_explicit(&f->actions, memory_order_relaxed), port);
}

/* Does f forward to group (OFPG_ANY: always true)? */
bool to_group(const struct sw_flow *f, uint32_t group)
{
	return group == OFPG_ANY ||
	       sw_group_named(atomic_load_explicit(&f->actions, memory_order_relaxed), group);
}

bool cookie_ok(const struct sw_flow *f, uint64_t cookie, uint64_t mask)
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
	if (x) {
		memcpy(x, prog, size);
		sw_actions_stamp(x); /* a new program: cached outcomes of the old one stop */
	}
	return x;
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
	dump_forget(a, f, f->next); /* a FLOW dump about to look at f goes on with its successor */
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
	dump_forget(a, old, f); /* a FLOW dump about to look at old reports f there */
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

void flow_mod(struct sw_agent *a, struct sw_conn *c, const struct of_msg *m, const uint8_t *raw, size_t len)
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
		     sw_pipe_check(fm, a->dp->nports, a->dp->groups, &prog, &etype, &ecode)))
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
void meter_msg(struct sw_agent *a, struct sw_conn *c, const struct of_mmsg *mm,
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
bool group_msg(struct sw_agent *a, struct sw_conn *c, const uint8_t *b, size_t len)
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

/* ---- expiry ---- */

/* Idle and hard timeouts: the flows whose time is up go, with FLOW_REMOVED. */
void flow_expire(struct sw_agent *a, uint64_t now)
{
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
}
