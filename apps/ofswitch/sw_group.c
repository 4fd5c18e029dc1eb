/*
 * apps/ofswitch/sw_group.c: the group table, the agent's side (sw_group.h has the design):
 * GROUP_MOD checked as OpenFlow 1.3 section 6.5 and 7.3.4.2 say, then published in one
 * release store per group.
 *
 * Checks, in order: command (BAD_COMMAND), type (BAD_TYPE), group id (INVALID_GROUP above
 * OFPG_MAX), then per command: ADD of a present id is GROUP_EXISTS, past SW_MAX_GROUPS
 * OUT_OF_GROUPS; MODIFY of an absent id UNKNOWN_GROUP; DELETE of an absent id does nothing,
 * of a group another group forwards to or watches CHAINED_GROUP (OFPG_ALL deletes all).
 * Buckets: an indirect group has exactly one (INVALID_GROUP); a weight outside a select
 * group is BAD_BUCKET; a fast-failover bucket watches a port or a group (BAD_WATCH), a
 * watched port is 1..nports and a watched group exists (BAD_WATCH); each bucket's actions go
 * through sw_actions_decode (a GROUP action naming no group: BAD_ACTION/BAD_OUT_GROUP; set-
 * field prerequisites are not known for a bucket, the datapath skips what a frame lacks).
 * Chaining: the new graph of groups (forwarding and watching) has no cycle (LOOP) and no
 * chain longer than SW_GROUP_MAX_DEPTH (CHAINING_UNSUPPORTED).
 */
#include <stdlib.h>
#include <string.h>

#include "sw_group.h"

static struct sw_table *table(const struct sw_groups *g)
{
	return atomic_load_explicit(&g->dp->table, memory_order_relaxed); /* the agent's own */
}

/* Free p after a grace period (the flow table's retire list), or now without a table. */
static void retire(struct sw_groups *g, void *p)
{
	struct sw_table *t = table(g);
	if (t)
		sw_table_retire(t, p, SW_RETIRE_FREE);
	else
		free(p);
}

/* The agent's view of a slot (it is the only writer: relaxed). */
static struct sw_group *at(const struct sw_groups *g, unsigned s)
{
	return atomic_load_explicit(&((struct sw_groups *)g)->slot[s], memory_order_relaxed);
}

static void publish(struct sw_groups *g, unsigned s, struct sw_group *grp)
{
	/* release: pairs with the pollers' acquire load in sw_group_run(): a complete program. */
	atomic_store_explicit(&g->slot[s], grp, memory_order_release);
}

struct sw_groups *sw_groups_create(struct sw_dp *dp)
{
	struct sw_groups *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->dp = dp;
	for (unsigned i = 0; i < SW_MAX_PORTS; i++)
		atomic_init(&g->port_up[i], 1);
	return g;
}

void sw_groups_free(struct sw_groups *g)
{
	if (!g)
		return;
	for (unsigned s = 0; s < SW_MAX_GROUPS; s++) {
		struct sw_group *grp = at(g, s);
		if (grp) {
			free(grp->ctr);
			free(grp);
		}
	}
	free(g);
}

int sw_group_find(const struct sw_groups *g, uint32_t id)
{
	for (unsigned s = 0, seen = 0; s < SW_MAX_GROUPS && seen < g->n; s++) {
		const struct sw_group *grp = at(g, s);
		if (!grp)
			continue;
		if (grp->id == id)
			return (int)s;
		seen++;
	}
	return -1;
}

void sw_group_set_link(struct sw_groups *g, uint32_t port_no, bool up)
{
	if (port_no >= 1 && port_no <= SW_MAX_PORTS)
		atomic_store_explicit(&g->port_up[port_no - 1], up, memory_order_relaxed);
}

bool sw_group_named(const struct sw_actions *x, uint32_t id)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->op[i].code == SW_OP_GROUP && x->op[i].arg == id)
			return true;
	return false;
}

bool sw_group_orphaned(const struct sw_groups *g, const struct sw_actions *x)
{
	for (unsigned i = 0; i < (unsigned)x->n + x->nwrite; i++) { /* apply and write-actions */
		const struct sw_op *o = &x->op[i];
		if (o->code != SW_OP_GROUP)
			continue;
		const struct sw_group *grp = o->max_len < SW_MAX_GROUPS ? at(g, o->max_len) : NULL;
		if (!grp || grp->id != o->arg)
			return true;
	}
	return false;
}

static int fail(uint16_t *etype, uint16_t *ecode, uint16_t code)
{
	*etype = OFPET_GROUP_MOD_FAILED;
	*ecode = code;
	return -1;
}

/* ---- the chain check ---- */

struct walk {
	const struct sw_groups *g;
	unsigned self;                  /* the slot being changed */
	const struct sw_group *self_grp; /* its new program (NULL: deleted) */
	uint8_t state[SW_MAX_GROUPS];   /* 0 new, 1 on the path, 2 done */
	uint8_t depth[SW_MAX_GROUPS];   /* longest chain from the slot (done ones) */
};

static const struct sw_group *prog(const struct walk *w, unsigned s)
{
	return s == w->self ? w->self_grp : at(w->g, s);
}

/* The longest chain of groups from slot s (1: s alone), or -1 on a cycle. */
static int chain(struct walk *w, unsigned s)
{
	if (w->state[s] == 1)
		return -1;
	if (w->state[s] == 2)
		return w->depth[s];
	const struct sw_group *grp = prog(w, s);
	if (!grp)
		return 0;
	w->state[s] = 1;
	int best = 0;
	for (unsigned i = 0; i < grp->nb; i++) {
		const struct sw_bucket *b = &grp->b[i];
		if (b->watch_group != OFPG_ANY) {
			int d = chain(w, b->watch_slot);
			if (d < 0)
				return -1;
			best = d > best ? d : best;
		}
		for (unsigned k = 0; k < b->acts.n; k++) {
			if (b->acts.op[k].code != SW_OP_GROUP)
				continue;
			int d = chain(w, b->acts.op[k].max_len);
			if (d < 0)
				return -1;
			best = d > best ? d : best;
		}
	}
	w->state[s] = 2;
	w->depth[s] = (uint8_t)(best + 1 > 255 ? 255 : best + 1);
	return w->depth[s];
}

/* 0, or the GROUP_MOD_FAILED code when slot self holding grp makes a loop or a long chain. */
static int chains_ok(const struct sw_groups *g, unsigned self, const struct sw_group *grp)
{
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return OFPGMFC_OUT_OF_GROUPS;
	w->g = g;
	w->self = self;
	w->self_grp = grp;
	int code = 0;
	for (unsigned s = 0; s < SW_MAX_GROUPS && !code; s++) {
		int d = chain(w, s);
		if (d < 0)
			code = OFPGMFC_LOOP;
		else if (d > SW_GROUP_MAX_DEPTH)
			code = OFPGMFC_CHAINING_UNSUPPORTED;
	}
	free(w);
	return code;
}

/* ---- GROUP_MOD ---- */

/* The checked program of m for slot s (ctr: the counters it shares), or NULL with the error. */
static struct sw_group *build(struct sw_groups *g, const struct of_group_mod *m,
			      uint16_t *etype, uint16_t *ecode)
{
	const struct sw_dp *dp = g->dp;
	if (m->type == OFPGT_INDIRECT && m->nbuckets != 1)
		return fail(etype, ecode, OFPGMFC_INVALID_GROUP), NULL;
	if (m->nbuckets > SW_GROUP_MAX_BUCKETS)
		return fail(etype, ecode, OFPGMFC_OUT_OF_BUCKETS), NULL;
	struct sw_group *grp =
		calloc(1, sizeof(*grp) + (size_t)m->nbuckets * sizeof(struct sw_bucket));
	if (!grp)
		return fail(etype, ecode, OFPGMFC_OUT_OF_GROUPS), NULL;
	grp->id = m->group_id;
	grp->type = m->type;
	grp->nb = (uint8_t)m->nbuckets;
	struct sw_act_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.nports = dp->nports;
	ctx.groups = g;
	ctx.any_frame = true;
	for (unsigned i = 0; i < m->nbuckets; i++) {
		const struct of_bucket *ob = &m->buckets[i];
		struct sw_bucket *b = &grp->b[i];
		int code = -1;
		if (ob->weight && m->type != OFPGT_SELECT)
			code = OFPGMFC_BAD_BUCKET;
		else if (m->type == OFPGT_FF && ob->watch_port == OFPP_ANY &&
			 ob->watch_group == OFPG_ANY)
			code = OFPGMFC_BAD_WATCH;
		else if (ob->watch_port != OFPP_ANY &&
			 (ob->watch_port < 1 || ob->watch_port > dp->nports))
			code = OFPGMFC_BAD_WATCH;
		if (code < 0 && ob->watch_group != OFPG_ANY) {
			int ws = sw_group_find(g, ob->watch_group);
			if (ws < 0)
				code = OFPGMFC_BAD_WATCH;
			else
				b->watch_slot = (uint16_t)ws;
		}
		if (code >= 0) {
			free(grp);
			return fail(etype, ecode, (uint16_t)code), NULL;
		}
		b->weight = ob->weight;
		b->watch_port = ob->watch_port;
		b->watch_group = ob->watch_group;
		if (sw_actions_decode(&ob->actions, &ctx, &b->acts, etype, ecode)) {
			free(grp);
			return NULL;
		}
		grp->total_weight += b->weight;
	}
	return grp;
}

/* Does a group other than those in slot `skip` (or any, when deleting all) forward to or
 * watch the group in slot s? */
static bool referenced(const struct sw_groups *g, unsigned s, uint32_t id)
{
	for (unsigned t = 0; t < SW_MAX_GROUPS; t++) {
		const struct sw_group *o = at(g, t);
		if (!o || t == s)
			continue;
		for (unsigned i = 0; i < o->nb; i++)
			if (o->b[i].watch_group == id || sw_group_named(&o->b[i].acts, id))
				return true;
	}
	return false;
}

static void delete_slot(struct sw_groups *g, unsigned s)
{
	struct sw_group *grp = at(g, s);
	publish(g, s, NULL);
	retire(g, grp->ctr); /* after the readers that may still count on it */
	retire(g, grp);
	g->n--;
}

int sw_group_mod(struct sw_groups *g, const struct of_group_mod *m, uint64_t now_ns,
		 bool *deleted, uint16_t *etype, uint16_t *ecode)
{
	*deleted = false;
	if (m->command > OFPGC_DELETE)
		return fail(etype, ecode, OFPGMFC_BAD_COMMAND);
	if (m->command == OFPGC_DELETE) {
		if (m->group_id == OFPG_ALL) {
			for (unsigned s = 0; s < SW_MAX_GROUPS; s++)
				if (at(g, s))
					delete_slot(g, s);
			*deleted = true;
			return 0;
		}
		int s = sw_group_find(g, m->group_id);
		if (s < 0)
			return 0; /* nothing to delete is no error (7.3.4.2) */
		if (referenced(g, (unsigned)s, m->group_id))
			return fail(etype, ecode, OFPGMFC_CHAINED_GROUP);
		delete_slot(g, (unsigned)s);
		*deleted = true;
		return 0;
	}
	if (m->type > OFPGT_FF)
		return fail(etype, ecode, OFPGMFC_BAD_TYPE);
	if (m->group_id > OFPG_MAX)
		return fail(etype, ecode, OFPGMFC_INVALID_GROUP);
	int s = sw_group_find(g, m->group_id);
	if (m->command == OFPGC_ADD && s >= 0)
		return fail(etype, ecode, OFPGMFC_GROUP_EXISTS);
	if (m->command == OFPGC_MODIFY && s < 0)
		return fail(etype, ecode, OFPGMFC_UNKNOWN_GROUP);
	if (s < 0) {
		if (g->n >= SW_MAX_GROUPS)
			return fail(etype, ecode, OFPGMFC_OUT_OF_GROUPS);
		for (s = 0; at(g, (unsigned)s); s++)
			;
	}
	struct sw_group *grp = build(g, m, etype, ecode);
	if (!grp)
		return -1;
	int code = chains_ok(g, (unsigned)s, grp);
	if (code) {
		free(grp);
		return fail(etype, ecode, (uint16_t)code);
	}
	struct sw_group *old = at(g, (unsigned)s);
	if (old) { /* MODIFY: the counters and the age go on */
		grp->ctr = old->ctr;
		grp->created_ns = old->created_ns;
	} else {
		unsigned nc = g->dp->ncores ? g->dp->ncores : 1;
		grp->ctr = aligned_alloc(RF_CACHE_LINE, nc * sizeof(struct sw_group_ctr));
		if (!grp->ctr) {
			free(grp);
			return fail(etype, ecode, OFPGMFC_OUT_OF_GROUPS);
		}
		memset(grp->ctr, 0, nc * sizeof(struct sw_group_ctr));
		grp->created_ns = now_ns;
		g->n++;
	}
	publish(g, (unsigned)s, grp);
	if (old)
		retire(g, old);
	return 0;
}
