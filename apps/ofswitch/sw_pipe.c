/*
 * apps/ofswitch/sw_pipe.c: the OpenFlow 1.3 pipeline after table 0 (issue 25).
 *
 * sw_dp_poll looks a frame up in table 0 (the EMC, then the classifier) and, when the flow
 * it finds has only apply-actions, runs them itself: the single-table fast path is what it
 * was. A flow with goto_table, write_metadata, write_actions or clear_actions sends the frame
 * here. Per flow, in the specification's order (1.3.5 section 5.9): apply-actions (on the
 * frame now: outputs send copies), clear-actions, write-actions (into the frame's action
 * set), write-metadata, goto-table. A goto looks the frame up again in the later table with
 * its metadata (the key re-parsed when apply-actions rewrote the frame); no flow there means
 * drop (1.3: a table without a table-miss flow drops). When a flow has no goto, the action
 * set runs in the specification's order (section 5.10): copy TTL inwards, pops, push-MPLS,
 * push-PBB, push-VLAN, copy TTL outwards, decrement TTL, set-field and set-TTL, qos, group,
 * output; one action of each type, a later write replacing an earlier one of its type.
 *
 * The pipeline state lives with the poller for one frame: the action set on its stack, the
 * metadata and tunnel_id in its struct sw_core (pin_md, pin_tun), where an OUTPUT:CONTROLLER
 * finds them for the PACKET_IN's match; nothing here is shared. Lookups after table 0 go
 * through the core's caches as table 0's do (sw_table_lookup_md; metadata bits a flow of
 * that table matches go into the megaflow key, sw_emc.c). Frames with fields outside the key
 * (a tunnel_id set, IPv6 ND) always go to the classifier (sw_table_lookup_x).
 *
 * In front of all that, the core's outcome cache (sw_outcome.c): a frame of a megaflow
 * seen before (the bits some table looks at) whose run could be repeated as one program
 * gets that program and the counts the walk would make (outcome_run); a run that misses
 * records its steps and fills the entry.
 */
#include <string.h>

#include <ringflow/pktbuf.h>

#include "sw.h"
#include "sw_meter.h"

/* Where an action type goes in the action set's order (section 5.10). */
enum {
	CLS_COPY_IN, CLS_POP, CLS_PUSH_MPLS, CLS_PUSH_PBB, CLS_PUSH_VLAN, CLS_COPY_OUT,
	CLS_DEC_TTL, CLS_SET, CLS_QOS, CLS_GROUP, CLS_OUTPUT, CLS_N
};

static unsigned op_class(uint8_t code)
{
	switch (code) {
	case SW_OP_COPY_TTL_IN: return CLS_COPY_IN;
	case SW_OP_POP_VLAN:
	case SW_OP_POP_MPLS:
	case SW_OP_POP_PBB: return CLS_POP;
	case SW_OP_PUSH_MPLS: return CLS_PUSH_MPLS;
	case SW_OP_PUSH_PBB: return CLS_PUSH_PBB;
	case SW_OP_PUSH_VLAN: return CLS_PUSH_VLAN;
	case SW_OP_COPY_TTL_OUT: return CLS_COPY_OUT;
	case SW_OP_DEC_NW_TTL:
	case SW_OP_DEC_MPLS_TTL: return CLS_DEC_TTL;
	case SW_OP_SET_QUEUE: return CLS_QOS;
	case SW_OP_GROUP: return CLS_GROUP;
	case SW_OP_OUTPUT: return CLS_OUTPUT;
	}
	return CLS_SET; /* set-fields and set TTLs */
}

/* The action set of one frame: at most one entry per op code (an IPv6 address set-field is
 * its op and the SW_OP_CONT after it). */
struct aset_ent {
	struct sw_op op[2];
	uint8_t nops;
};
struct aset {
	unsigned n;
	struct aset_ent e[SW_OP_N + 4];
};

/* write_actions: ops[0..n) into the set, replacing entries of the same type. */
static void aset_write(struct aset *s, const struct sw_op *ops, unsigned n)
{
	for (unsigned i = 0; i < n;) {
		unsigned k = i + 1 < n && ops[i + 1].code == SW_OP_CONT ? 2 : 1;
		unsigned j = 0;
		while (j < s->n && s->e[j].op[0].code != ops[i].code)
			j++;
		if (j == s->n) {
			if (s->n == sizeof(s->e) / sizeof(s->e[0]))
				return; /* cannot happen: one entry per op code */
			s->n++;
		}
		memcpy(s->e[j].op, &ops[i], k * sizeof(ops[0]));
		s->e[j].nops = (uint8_t)k;
		i += k;
	}
}

/* The set as one program in the specification's order. */
static void aset_program(const struct aset *s, struct sw_actions *p)
{
	unsigned k = 0;
	p->n = 0;
	p->goto_table = SW_NO_GOTO;
	p->inst = p->nwrite = p->write = 0;
	p->meter_id = 0;
	p->meter = NULL;
	bool group = false; /* a set holding a group ignores its output (1.3.5 section 5.10) */
	for (unsigned j = 0; j < s->n; j++)
		group = group || s->e[j].op[0].code == SW_OP_GROUP;
	for (unsigned cls = 0; cls < CLS_N; cls++)
		for (unsigned j = 0; j < s->n; j++) {
			if (op_class(s->e[j].op[0].code) != cls || (group && cls == CLS_OUTPUT))
				continue;
			if (k + s->e[j].nops > sizeof(p->op) / sizeof(p->op[0]))
				continue; /* cannot happen: 2 * OF_MAX_ACTIONS ops */
			memcpy(&p->op[k], s->e[j].op, s->e[j].nops * sizeof(p->op[0]));
			k += s->e[j].nops;
		}
	p->n = (uint8_t)k;
	sw_actions_mark_last_out(p);
}

void sw_pipe_set_of(const struct sw_op *ops, unsigned n, struct sw_actions *p)
{
	struct aset s = {.n = 0};
	aset_write(&s, ops, n);
	aset_program(&s, p);
}

static bool rewrites(const struct sw_actions *x)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->op[i].code != SW_OP_OUTPUT)
			return true;
	return false;
}

/* sw_pipe_run's work. The frame's metadata and tunnel_id are c->pin_md and c->pin_tun
 * (zero as it enters): the later tables match them and its PACKET_INs carry them. */
static void pipe_run(struct sw_core *c, struct sw_table *t, struct rf_pktbuf *b, int in,
		     struct sw_key *k, struct sw_flow *f, const struct sw_actions *acts)
{
	struct aset set;
	set.n = 0;
	struct sw_outcome_rec rec; /* what this run comes to, for the outcome cache */
	sw_outcome_begin(t, c->idx, &rec);
	sw_outcome_step(&rec, f, acts);
	for (;;) {
		unsigned next = acts->goto_table;
		if (next <= f->table_id || next >= SW_N_TABLES)
			next = SW_NO_GOTO; /* the agent allows neither; a last line of defence */
		bool last = next == SW_NO_GOTO;
		if (last && !acts->write && !(acts->inst & SW_INST_CLEAR) && set.n == 0) {
			if (sw_outcome_fill(t, c->idx, k, &rec, NULL, c->pin_md))
				rf_counter_add(&c->out_fills, 1);
			sw_dp_apply(c, b, in, acts, f); /* no action set: b goes with the last output */
			return;
		}
		if (acts->n) { /* a set_field tunnel_id here sets c->pin_tun (rewrite() in
				  sw_dp.c): later tables match it (as OVS) */
			b = sw_dp_apply_keep(c, b, in, acts, f);
			if (!b)
				return;
		}
		if (acts->inst & SW_INST_CLEAR)
			set.n = 0;
		if (acts->write)
			aset_write(&set, &acts->op[acts->n], acts->nwrite);
		if (acts->inst & SW_INST_META)
			c->pin_md = (c->pin_md & ~acts->md_mask) | (acts->md & acts->md_mask);
		if (last)
			break;
		if (rewrites(acts) &&
		    sw_key_parse(rf_pktbuf_data(b), b->data_len, in >= 0 ? (uint32_t)in + 1 : 0, k)) {
			rf_pktbuf_free(b);
			rf_counter_add(&c->drop_short, 1);
			return;
		}
		rf_counter_add(&c->tlookup[next], 1);
		if (c->pin_tun || sw_key_is_nd(k)) { /* fields outside the key (sw_xmatch.c) */
			struct sw_xkey x;
			sw_xkey_parse(rf_pktbuf_data(b), b->data_len, k, &x);
			x.tunnel_id = c->pin_tun;
			f = sw_table_lookup_x(t, c->idx, next, c->pin_md, k, &x);
		} else {
			f = sw_table_lookup_md(t, c->idx, next, c->pin_md, k);
		}
		if (!f) { /* no table-miss flow in that table: drop (1.3); counted as
			     tlookup - tmatch */
			rf_pktbuf_free(b);
			return;
		}
		rf_counter_add(&c->tmatch[next], 1);
		rf_counter_add(&f->ctr[c->idx].pkts, 1);
		rf_counter_add(&f->ctr[c->idx].bytes, b->data_len);
		/* Pairs with the agent's release store of a MODIFY: a complete program. */
		acts = atomic_load_explicit(&f->actions, memory_order_acquire);
		sw_outcome_step(&rec, f, acts);
		if (acts->meter && sw_meter_apply(acts->meter, rf_pktbuf_data(b), b->data_len,
						  sw_meter_now()) != 0) {
			rf_pktbuf_free(b); /* counted in the meter's band */
			return;
		}
	}
	struct sw_actions prog;
	aset_program(&set, &prog);
	if (sw_outcome_fill(t, c->idx, k, &rec, &prog, c->pin_md))
		rf_counter_add(&c->out_fills, 1);
	sw_dp_apply(c, b, in, &prog, f);
}

/* A hit of the outcome cache: what pipe_run would count and run (sw_outcome.c). */
static void outcome_run(struct sw_core *c, struct rf_pktbuf *b, int in, const struct sw_outcome *o)
{
	for (unsigned i = 1; i < o->nsteps; i++) { /* table 0's step is counted by the caller */
		struct sw_flow *g = o->step[i].f;
		rf_counter_add(&c->tlookup[g->table_id], 1);
		rf_counter_add(&c->tmatch[g->table_id], 1);
		rf_counter_add(&g->ctr[c->idx].pkts, 1);
		rf_counter_add(&g->ctr[c->idx].bytes, b->data_len); /* unchanged before the last */
	}
	rf_counter_add(&c->out_hits, 1);
	c->pin_md = o->md;
	sw_dp_apply(c, b, in, &o->prog, o->step[o->nsteps - 1].f);
}

void sw_pipe_run(struct sw_core *c, struct sw_table *t, struct rf_pktbuf *b, int in,
		 struct sw_key *k, struct sw_flow *f, const struct sw_actions *acts)
{
	const struct sw_outcome *o = sw_key_is_nd(k) ? NULL : sw_outcome_find(t, c->idx, k, f);
	if (o)
		outcome_run(c, b, in, o);
	else
		pipe_run(c, t, b, in, k, f, acts);
	c->pin_md = c->pin_tun = 0; /* the next frame enters the pipeline with neither */
}
