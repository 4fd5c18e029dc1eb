/*
 * apps/ofswitch/sw_outcome.c: the pipeline's outcome cache (issue 25), one per poller.
 *
 * The EMC and the megaflow cache (sw_emc.c) answer one table each: a frame through three
 * tables makes three cache probes, a key parse when a flow rewrote it, and runs every flow's
 * instructions, building its action set on the way. This cache keeps what all of that comes
 * to for a frame's megaflow (below): the flows the frame went through, one per table, and
 * the one program the pipeline ran, so a hit is one probe and one sw_dp_apply.
 *
 * It is a megaflow cache over the whole pipeline: the key is the table-0 key under `uall`,
 * the union of every table's union mask (struct sw_pvec), so the entry one microflow made
 * answers every microflow that agrees with it on every bit some flow of some table looks
 * at, including microflows never seen (as OVS's datapath flows span its whole pipeline).
 * Why that is exact: a cached chain's later tables see the table-0 key itself and a
 * metadata that only the chain's flows wrote (below), and table i's answer is a function of
 * k & umask[i] and the metadata; umask[i] is inside uall, so two keys equal under uall get
 * the same answer from every table, flow after flow, and the shadow filter's bits noted
 * for the first (subtable, k & its mask, each inside uall) are the bits of every other:
 * sw_emc.c's megaflow argument, for each table in turn. A subtable that joins the order
 * widens uall and bumps every core; one that leaves (empty) narrows it, and an entry made
 * under the wider mask still answers right (sw_emc.c, the last point).
 *
 * What is cached (sw_outcome_step clears `ok` otherwise): every flow before the last has
 * apply-actions of OUTPUTs only (to any port but the controller), so the key the later
 * tables see is the table-0 key itself and every output is a copy of the frame as it came
 * in; no flow after table 0 has a meter (a meter decides per frame whether the rest runs);
 * every program is a flow's published one (an id); the last flow may have any apply-actions,
 * but not a GROUP or a CONTROLLER output when it also writes metadata (their PACKET_IN would
 * carry the metadata before the write, the cached run carries the final one). The program is
 * then: the earlier flows' outputs, the last flow's apply-actions, the action set in the
 * specification's order, which sw_dp_apply runs as the pipeline would (each output but the
 * last sends a copy of the frame as modified so far). A frame with no flow in a later table
 * (dropped) and an ND frame (fields outside the key) are not cached.
 *
 * Why a hit is exact. Entries carry the core's cache generation and epoch when the record
 * began, and each step's flow slot, slot generation and program id:
 *   - Removal of any flow of the chain bumps its slot's generation; a MODIFY publishes a
 *     program with another id. Either fails the hit's check (the flow is still allocated
 *     while its slot generation matches: sw_emc.c's way_valid argument).
 *   - An add that could change a later table's answer for this key: that lookup went through
 *     the core's caches after the record's generation was loaded (acquire), so its key's
 *     bits were noted in the shadow filter under the record's epoch; the agent then either
 *     made the lookup see the new flow, or sees the bits and bumps the core's generation,
 *     which the entry no longer matches (sw_emc.c's argument, for each table in turn). A
 *     filter restart moves the epoch, so an entry whose bits went with it is stale too.
 *   - Table 0 is looked up (its own caches) before the record begins: an add that beat its
 *     answer in between leaves the entry holding the old first flow, so a hit also needs
 *     table 0's current answer to be the entry's first flow.
 * Groups, ports and meters' state are read when the program runs, as uncached.
 */
#include <string.h>

#include "sw_table_pvt.h"

#define OUT_SEED 0x27d4eb2f165667c5ull /* this cache's hash seed (the EMC's: 0) */

struct oprobe {
	uint64_t h64;
	uint32_t si[2], tag;
	int mine; /* set choice * SW_EMC_WAYS + way holding the key (stale or not), or -1 */
};

static struct sw_outcome *out_find(struct sw_ocache *c, uint32_t epoch, const struct sw_key *k,
				   struct oprobe *p)
{
	p->h64 = sw_key_hash64(k, OUT_SEED);
	p->tag = (uint32_t)(p->h64 >> 32);
	p->si[0] = (uint32_t)p->h64 & (c->nsets - 1);
	p->si[1] = (uint32_t)(p->h64 >> 16) & (c->nsets - 1);
	p->mine = -1;
	for (unsigned x = 0; x < 2 * SW_EMC_WAYS; x++) {
		unsigned s = p->si[x / SW_EMC_WAYS], w = x % SW_EMC_WAYS;
		if (c->set[s].hash[w] == p->tag && c->set[s].epoch[w] == epoch &&
		    sw_key_eq(&c->key[s][w], k)) {
			p->mine = (int)x;
			return &c->ent[s][w];
		}
	}
	return NULL;
}

/* k under order v's union of every table's masks: the outcome cache's key. */
static void out_key(const struct sw_table *t, const struct sw_key *k, struct sw_key *mk)
{
	/* acquire: pairs with the writer's release in publish_vec (the order's masks). */
	const struct sw_pvec *v = atomic_load_explicit(&t->vec, memory_order_acquire);
	sw_mask_key(k, &v->uall, mk);
}

const struct sw_outcome *sw_outcome_find(struct sw_table *t, unsigned core,
					 const struct sw_key *k, const struct sw_flow *f0)
{
	struct sw_pcache *m = t->pc[core];
	struct oprobe p;
	struct sw_key mk;
	out_key(t, k, &mk);
	const struct sw_outcome *o = out_find(&m->out, m->epoch, &mk, &p);
	/* acquire: pairs with the writer's release bump in shadow_check (sw_table.c), as in
	 * sw_table_lookup: a bump seen here comes with the flow that caused it. */
	if (!o || o->step[0].f != f0 ||
	    o->tgen != atomic_load_explicit(&t->cgen[core].v, memory_order_acquire))
		return NULL;
	for (unsigned i = 0; i < o->nsteps; i++) {
		const struct sw_outcome_step *s = &o->step[i];
		/* relaxed: as way_valid (sw_emc.c): a matching generation keeps the flow
		 * allocated until our next quiescent state. */
		if (atomic_load_explicit(&t->slot_gen[s->slot], memory_order_relaxed) != s->fgen)
			return NULL;
		/* acquire: pairs with the agent's release exchange of a MODIFY, as every load of
		 * a flow's program; the id read through it is the published one's. */
		if (atomic_load_explicit(&s->f->actions, memory_order_acquire)->id != s->prog_id)
			return NULL;
	}
	return o;
}

void sw_outcome_begin(struct sw_table *t, unsigned core, struct sw_outcome_rec *r)
{
	/* acquire: as in sw_table_lookup, before the later tables' lookups (sw_outcome.c's
	 * top: the entry is tagged with a generation loaded before every answer it holds). */
	r->gen = atomic_load_explicit(&t->cgen[core].v, memory_order_acquire);
	r->epoch = t->pc[core]->epoch;
	r->ok = true;
	r->n = 0;
}

static bool only_plain_outputs(const struct sw_actions *a)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->op[i].code != SW_OP_OUTPUT || a->op[i].arg == OFPP_CONTROLLER)
			return false;
	return true;
}

static bool has_group_or_controller(const struct sw_actions *a)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->op[i].code == SW_OP_GROUP ||
		    (a->op[i].code == SW_OP_OUTPUT && a->op[i].arg == OFPP_CONTROLLER))
			return true;
	return false;
}

void sw_outcome_step(struct sw_outcome_rec *r, const struct sw_flow *f,
		     const struct sw_actions *a)
{
	if (!r->ok)
		return;
	/* The step before this one was not the last: only plain outputs may it have had. */
	if (r->n >= SW_N_TABLES || !a->id || (r->n && a->meter) ||
	    (r->n && !only_plain_outputs(r->a[r->n - 1]))) {
		r->ok = false;
		return;
	}
	r->f[r->n] = f;
	r->a[r->n] = a;
	r->n++;
}

/* The program a hit runs, into p: the steps' apply-actions, then the action set's. */
static bool compose(const struct sw_outcome_rec *r, const struct sw_actions *set,
		    struct sw_actions *p)
{
	const unsigned cap = sizeof(p->op) / sizeof(p->op[0]);
	unsigned k = 0;
	for (unsigned i = 0; i < r->n; i++) {
		if (k + r->a[i]->n > cap)
			return false;
		memcpy(&p->op[k], r->a[i]->op, r->a[i]->n * sizeof(p->op[0]));
		k += r->a[i]->n;
	}
	if (set) {
		if (k + set->n > cap)
			return false;
		memcpy(&p->op[k], set->op, set->n * sizeof(p->op[0]));
		k += set->n;
	}
	p->n = (uint8_t)k;
	sw_actions_mark_last_out(p);
	p->goto_table = SW_NO_GOTO;
	p->inst = p->nwrite = p->write = 0;
	p->md = p->md_mask = p->id = 0;
	p->meter_id = 0;
	p->meter = NULL;
	return true;
}

bool sw_outcome_fill(struct sw_table *t, unsigned core, const struct sw_key *k,
		     const struct sw_outcome_rec *r, const struct sw_actions *set, uint64_t md)
{
	struct sw_pcache *m = t->pc[core];
	if (!r->ok || r->n < 2 || r->epoch != m->epoch || sw_key_is_nd(k))
		return false; /* epoch: a filter restart took bits the entry needs */
	const struct sw_actions *last = r->a[r->n - 1];
	if ((last->inst & SW_INST_META) && has_group_or_controller(last))
		return false;
	struct oprobe p;
	struct sw_key mk;
	out_key(t, k, &mk);
	(void)out_find(&m->out, m->epoch, &mk, &p);
	int x = p.mine;
	for (unsigned y = 0; x < 0 && y < 2 * SW_EMC_WAYS; y++) { /* a free or stale way */
		const struct sw_out_set *s = &m->out.set[p.si[y / SW_EMC_WAYS]];
		const struct sw_outcome *e = &m->out.ent[p.si[y / SW_EMC_WAYS]][y % SW_EMC_WAYS];
		if (s->epoch[y % SW_EMC_WAYS] != m->epoch || e->tgen != r->gen)
			x = (int)y;
	}
	if (x < 0)
		x = (int)(p.h64 >> 40 & (2 * SW_EMC_WAYS - 1));
	uint32_t si = p.si[x / SW_EMC_WAYS], w = (uint32_t)x % SW_EMC_WAYS;
	struct sw_outcome *e = &m->out.ent[si][w];
	if (!compose(r, set, &e->prog)) {
		m->out.set[si].epoch[w] = 0; /* too long: the way is empty now */
		return false;
	}
	e->tgen = r->gen;
	e->md = md;
	e->nsteps = r->n;
	for (unsigned i = 0; i < r->n; i++)
		e->step[i] = (struct sw_outcome_step){.f = (struct sw_flow *)r->f[i],
						      .prog_id = r->a[i]->id,
						      .slot = r->f[i]->slot,
						      .fgen = r->f[i]->gen};
	m->out.key[si][w] = mk;
	m->out.set[si].hash[w] = p.tag;
	m->out.set[si].epoch[w] = m->epoch;
	return true;
}
