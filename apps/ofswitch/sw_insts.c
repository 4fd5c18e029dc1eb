/*
 * apps/ofswitch/sw_insts.c: a FLOW_MOD's instructions other than apply-actions (goto_table,
 * write_metadata, write_actions, clear_actions; struct of_insts as the protocol module
 * parsed them) -> the pipeline fields of the flow's program (struct sw_actions), checked
 * (issue 25). sw_pipe.c runs them.
 *
 * Checks, as OpenFlow 1.3: goto_table only to a later table that exists (else
 * BAD_INSTRUCTION/BAD_TABLE_ID); write_actions as apply-actions (sw_actions_decode: the
 * parser's skip codes, ports, groups that exist), with the set-field prerequisites against the
 * match followed in the order the action set runs the list (section 5.10: a push_vlan before
 * a vlan_vid set-field whatever their order in the list; OVS follows the list's order and
 * refuses that with MATCH_INCONSISTENT); together with the apply-actions within
 * 2 * OF_MAX_ACTIONS ops (else BAD_ACTION/TOO_MANY); every metadata bit may be written (no
 * UNSUP_METADATA_MASK).
 */
#include <string.h>

#include "sw.h"

int sw_insts_decode(const struct of_insts *in, uint8_t table_id, const struct sw_act_ctx *ctx,
		    struct sw_actions *out, uint16_t *etype, uint16_t *ecode)
{
	if (in->present & OF_INST_GOTO_TABLE) {
		if (in->goto_table <= table_id || in->goto_table >= SW_N_TABLES) {
			*etype = OFPET_BAD_INSTRUCTION;
			*ecode = OFPBIC_BAD_TABLE_ID;
			return -1;
		}
		out->goto_table = in->goto_table;
	}
	if (in->present & OF_INST_WRITE_METADATA) {
		out->inst |= SW_INST_META;
		out->md = in->metadata;
		out->md_mask = in->metadata_mask;
	}
	if (in->present & OF_INST_CLEAR_ACTIONS)
		out->inst |= SW_INST_CLEAR;
	if (in->present & OF_INST_WRITE_ACTIONS) {
		struct sw_actions w, set, chk;
		struct sw_act_ctx any = *ctx;
		any.any_frame = true; /* prerequisites below, in the set's order */
		if (sw_actions_decode(&in->write, &any, &w, etype, ecode) != 0)
			return -1;
		struct of_actions in_order;
		sw_pipe_set_of(w.op, w.n, &set);
		sw_actions_to_of(&set, &in_order);
		if (sw_actions_decode(&in_order, ctx, &chk, etype, ecode) != 0)
			return -1;
		if ((unsigned)out->n + w.n > sizeof(out->op) / sizeof(out->op[0])) {
			*etype = OFPET_BAD_ACTION;
			*ecode = OFPBAC_TOO_MANY;
			return -1;
		}
		memcpy(&out->op[out->n], w.op, w.n * sizeof(w.op[0]));
		out->nwrite = w.n;
		out->write = 1;
	}
	return 0;
}

void sw_insts_to_of(const struct sw_actions *x, struct of_insts *in)
{
	memset(in, 0, sizeof(*in));
	if (x->goto_table != SW_NO_GOTO) {
		in->present |= OF_INST_GOTO_TABLE;
		in->goto_table = x->goto_table;
	}
	if (x->inst & SW_INST_META) {
		in->present |= OF_INST_WRITE_METADATA;
		in->metadata = x->md;
		in->metadata_mask = x->md_mask;
	}
	if (x->inst & SW_INST_CLEAR)
		in->present |= OF_INST_CLEAR_ACTIONS;
	if (x->write) {
		struct sw_actions w;
		memset(&w, 0, sizeof(w));
		memcpy(w.op, &x->op[x->n], x->nwrite * sizeof(w.op[0]));
		w.n = x->nwrite;
		in->present |= OF_INST_WRITE_ACTIONS;
		sw_actions_to_of(&w, &in->write);
	}
}

int sw_pipe_check(const struct of_flow_mod *fm, unsigned nports, const struct sw_groups *groups,
		  struct sw_actions *prog, uint16_t *etype, uint16_t *ecode)
{
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&fm->match, nports, &ctx);
	ctx.groups = groups; /* a write_actions group names one that exists, as apply's */
	return sw_insts_decode(&fm->inst, fm->table_id, &ctx, prog, etype, ecode);
}

/* The metadata match of m as (value, mask); mask 0: any. */
static void md_of(const struct of_match *m, uint64_t *v, uint64_t *mk)
{
	*mk = m->has_metadata ? m->metadata_mask : 0;
	*v = m->metadata & *mk;
}

void sw_pipe_flow_init(struct sw_flow *f, const struct of_flow_mod *fm)
{
	f->table_id = fm->table_id;
	md_of(&fm->match, &f->md, &f->md_mask);
	f->has_md = f->md_mask != 0;
	sw_xmatch_of_match(&fm->match, &f->x); /* the fields outside the key, like md */
}

bool sw_pipe_same(const struct sw_flow *f, const struct of_flow_mod *fm)
{
	uint64_t v, mk;
	struct sw_xmatch x;
	md_of(&fm->match, &v, &mk);
	sw_xmatch_of_match(&fm->match, &x);
	return (fm->table_id == OFPTT_ALL || f->table_id == fm->table_id) && f->md == v &&
	       f->md_mask == mk && memcmp(&f->x, &x, sizeof(x)) == 0;
}

bool sw_pipe_covered(const struct sw_flow *f, uint8_t table_id, const struct of_match *m)
{
	uint64_t v, mk;
	struct sw_xmatch x;
	md_of(m, &v, &mk);
	sw_xmatch_of_match(m, &x);
	return (table_id == OFPTT_ALL || f->table_id == table_id) &&
	       (f->md_mask & mk) == mk && (f->md & mk) == v && sw_xmatch_covered(&f->x, &x);
}

bool sw_pipe_overlaps(const struct sw_flow *f, const struct of_flow_mod *fm)
{
	uint64_t v, mk;
	struct sw_xmatch x;
	md_of(&fm->match, &v, &mk);
	sw_xmatch_of_match(&fm->match, &x);
	return f->table_id == fm->table_id && !((f->md ^ v) & f->md_mask & mk) &&
	       sw_xmatch_overlaps(&f->x, &x);
}
