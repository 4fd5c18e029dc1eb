/*
 * apps/ofswitch/sw_actions.c: the controller's action list (struct of_actions, as the
 * protocol module parsed it) -> the switch's action program (struct sw_actions), checked.
 *
 * Checks, in list order, as OVS does for OpenFlow 1.3:
 *   - anything the parser skipped: the ERROR it noted (BAD_TYPE, BAD_SET_TYPE, TOO_MANY, ...);
 *   - output ports: 1..nports, IN_PORT, FLOOD, ALL, CONTROLLER, else BAD_OUT_PORT;
 *   - set-field prerequisites against what the match guarantees (ipv4_* need eth_type 0x0800,
 *     the tcp, udp and sctp ports IP with ip_proto 6, 17, 132; icmpv4 IPv4 and 1, icmpv6 IPv6 and 58,
 *     the arp fields 0x0806, ipv6_flabel 0x86dd, ip_dscp/ip_ecn and the TTL actions IPv4 or IPv6,
 *     the mpls fields, the MPLS TTL actions, copy_ttl_in/out and pop_mpls an MPLS ethertype, pop_pbb
 *     0x88e7, vlan_vid/vlan_pcp a tag), else BAD_ACTION/MATCH_INCONSISTENT. What the frame is
 *     is followed through the list: push_vlan adds a tag (two at most), pop_vlan needs and
 *     removes one; push_mpls/pop_mpls/push_pbb make the ethertype theirs (pop_pbb: unknown).
 *   - ipv6_nd_target needs ICMPv6 type 135 or 136 in the match, ipv6_nd_sll 135, _tll 136;
 *   - ipv6_src/ipv6_dst need eth_type 0x86dd and take two ops (nd_target too) (the address does not fit one);
 *     a list whose ops would pass OF_MAX_ACTIONS is TOO_MANY;
 *   - pbb_isid needs PBB's ethertype 0x88e7; tunnel_id nothing, and takes two ops (64 bits);
 *   - set_queue is accepted and has no effect (one queue per port), as with no queues set up;
 *   - a GROUP action names a group that exists (ctx->groups), else BAD_ACTION/BAD_OUT_GROUP;
 *     like an OUTPUT it sends the frame as modified so far (last_out counts it). A group's
 *     bucket (ctx->any_frame) has no match: its set-field prerequisites are not checked.
 * A PACKET_OUT's list is checked against its frame instead (sw_act_ctx_of_key).
 */
#include <string.h>

#include "sw.h"
#include "sw_group.h"

void sw_act_ctx_of_match(const struct of_match *m, unsigned nports, struct sw_act_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->nports = nports;
	c->has_eth_type = m->fields & OF_MATCH_ETH_TYPE;
	c->eth_type = m->eth_type;
	c->has_proto = m->fields & OF_MATCH_IP_PROTO;
	c->ip_proto = m->ip_proto;
	/* Tagged when the match requires OFPVID_PRESENT (exact, or masked with that bit). */
	c->has_icmp_type = m->fields & OF_MATCH_ICMPV6_TYPE;
	c->icmp_type = m->icmpv6_type;
	if ((m->fields & OF_MATCH_VLAN_VID) && (m->vlan_vid & OFPVID_PRESENT) &&
	    (!(m->masked & OF_MATCH_VLAN_VID) || (m->vlan_vid_mask & OFPVID_PRESENT)))
		c->vlan_depth = 1;
}

void sw_act_ctx_of_key(const struct sw_key *k, unsigned nports, struct sw_act_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->nports = nports;
	c->has_eth_type = true;
	c->eth_type = k->eth_type;
	c->has_proto = k->eth_type == 0x0800 || k->eth_type == 0x86dd;
	c->ip_proto = k->ip_proto;
	c->has_icmp_type = k->eth_type == 0x86dd && k->ip_proto == 58;
	c->icmp_type = (uint8_t)k->tp_src;
	c->vlan_depth = k->vlan ? 1 : 0;
}

static bool port_ok(uint32_t p, unsigned nports)
{
	return (p >= 1 && p <= nports) || p == OFPP_IN_PORT || p == OFPP_FLOOD ||
	       p == OFPP_ALL || p == OFPP_CONTROLLER;
}

/* What the frame is known to be at a point of the list: the match's promise, then changed
 * by each push/pop before it. */
struct cur {
	bool has_type, has_proto, has_icmp;
	uint16_t type;
	uint8_t proto, icmp; /* icmp: the ICMPv6 type */
	unsigned depth; /* VLAN tags */
};

static bool is_mpls(const struct cur *c)
{
	return c->has_type && (c->type == 0x8847 || c->type == 0x8848);
}

/* Set-fields: the field, its op, and the ethertype (0: any) and IP protocol (0: any) it needs. */
static const struct set_op {
	uint8_t field, code;
	uint16_t type; /* 0x0800, 0x86dd, 0x0806, 1 = IPv4 or IPv6, 2 = MPLS */
	uint8_t proto;
} set_ops[] = {
	{OF_OXM_IP_DSCP, SW_OP_SET_IP_DSCP, 1, 0},
	{OF_OXM_IP_ECN, SW_OP_SET_IP_ECN, 1, 0},
	{OF_OXM_IPV4_SRC, SW_OP_SET_IPV4_SRC, 0x0800, 0},
	{OF_OXM_IPV4_DST, SW_OP_SET_IPV4_DST, 0x0800, 0},
	{OF_OXM_TCP_SRC, SW_OP_SET_TCP_SRC, 1, 6},
	{OF_OXM_TCP_DST, SW_OP_SET_TCP_DST, 1, 6},
	{OF_OXM_UDP_SRC, SW_OP_SET_UDP_SRC, 1, 17},
	{OF_OXM_UDP_DST, SW_OP_SET_UDP_DST, 1, 17},
	{OF_OXM_SCTP_SRC, SW_OP_SET_SCTP_SRC, 1, 132},
	{OF_OXM_SCTP_DST, SW_OP_SET_SCTP_DST, 1, 132},
	{OF_OXM_ICMPV4_TYPE, SW_OP_SET_ICMPV4_TYPE, 0x0800, 1},
	{OF_OXM_ICMPV4_CODE, SW_OP_SET_ICMPV4_CODE, 0x0800, 1},
	{OF_OXM_ICMPV6_TYPE, SW_OP_SET_ICMPV6_TYPE, 0x86dd, 58},
	{OF_OXM_ICMPV6_CODE, SW_OP_SET_ICMPV6_CODE, 0x86dd, 58},
	{OF_OXM_ARP_OP, SW_OP_SET_ARP_OP, 0x0806, 0},
	{OF_OXM_ARP_SPA, SW_OP_SET_ARP_SPA, 0x0806, 0},
	{OF_OXM_ARP_TPA, SW_OP_SET_ARP_TPA, 0x0806, 0},
	{OF_OXM_ARP_SHA, SW_OP_SET_ARP_SHA, 0x0806, 0},
	{OF_OXM_ARP_THA, SW_OP_SET_ARP_THA, 0x0806, 0},
	{OF_OXM_IPV6_FLABEL, SW_OP_SET_IPV6_FLABEL, 0x86dd, 0},
	{OF_OXM_MPLS_LABEL, SW_OP_SET_MPLS_LABEL, 2, 0},
	{OF_OXM_MPLS_TC, SW_OP_SET_MPLS_TC, 2, 0},
	{OF_OXM_MPLS_BOS, SW_OP_SET_MPLS_BOS, 2, 0},
	{OF_OXM_PBB_ISID, SW_OP_SET_PBB_ISID, 0x88e7, 0},
};

/* A set-field: its op and whether the prerequisites hold. */
static bool set_field(const struct of_action *x, const struct cur *c, struct sw_op *o)
{
	bool ip = c->has_type && (c->type == 0x0800 || c->type == 0x86dd);
	o->arg = x->value;
	memcpy(o->mac, x->mac, 6);
	switch (x->field) {
	case OF_OXM_ETH_DST:
	case OF_OXM_ETH_SRC:
		o->code = x->field == OF_OXM_ETH_DST ? SW_OP_SET_ETH_DST : SW_OP_SET_ETH_SRC;
		return true;
	case OF_OXM_VLAN_VID:
		o->code = SW_OP_SET_VLAN_VID;
		o->arg = x->value & 0x0fff;
		return c->depth > 0;
	case OF_OXM_VLAN_PCP:
		o->code = SW_OP_SET_VLAN_PCP;
		return c->depth > 0;
	}
	for (size_t i = 0; i < sizeof(set_ops) / sizeof(set_ops[0]); i++) {
		const struct set_op *d = &set_ops[i];
		if (d->field != x->field)
			continue;
		o->code = d->code;
		bool type_ok = d->type == 1   ? ip
			       : d->type == 2 ? is_mpls(c)
					      : c->has_type && c->type == d->type;
		return type_ok && (!d->proto || (c->has_proto && c->proto == d->proto));
	}
	return false; /* the parser keeps only the fields above */
}

static int fail(uint16_t *etype, uint16_t *ecode, uint16_t type, uint16_t code)
{
	*etype = type;
	*ecode = code;
	return -1;
}

/* One push/pop or TTL action: its op; false when the frame cannot have what it needs. */
static bool other_action(const struct of_action *x, struct cur *c, struct sw_op *o)
{
	bool ip = c->has_type && (c->type == 0x0800 || c->type == 0x86dd);
	bool ok = true;
	switch (x->type) {
	case OF_ACT_PUSH_VLAN:
		o->code = SW_OP_PUSH_VLAN;
		o->arg = x->ethertype;
		ok = c->depth < 2;
		c->depth++;
		break;
	case OF_ACT_POP_VLAN:
		o->code = SW_OP_POP_VLAN;
		ok = c->depth > 0;
		c->depth = c->depth ? c->depth - 1 : 0;
		break;
	case OF_ACT_DEC_NW_TTL:
	case OF_ACT_SET_NW_TTL:
		o->code = x->type == OF_ACT_DEC_NW_TTL ? SW_OP_DEC_NW_TTL : SW_OP_SET_NW_TTL;
		o->arg = x->value;
		ok = ip;
		break;
	case OF_ACT_PUSH_MPLS: /* on anything; the frame is MPLS from here on */
		o->code = SW_OP_PUSH_MPLS;
		o->arg = x->ethertype;
		c->has_type = true, c->type = x->ethertype, c->has_proto = c->has_icmp = false;
		break;
	case OF_ACT_POP_MPLS:
		o->code = SW_OP_POP_MPLS;
		o->arg = x->ethertype;
		ok = is_mpls(c);
		c->has_type = true, c->type = x->ethertype, c->has_proto = c->has_icmp = false;
		break;
	case OF_ACT_SET_MPLS_TTL:
	case OF_ACT_DEC_MPLS_TTL:
	case OF_ACT_COPY_TTL_OUT:
	case OF_ACT_COPY_TTL_IN:
		o->code = x->type == OF_ACT_SET_MPLS_TTL   ? SW_OP_SET_MPLS_TTL
			  : x->type == OF_ACT_DEC_MPLS_TTL ? SW_OP_DEC_MPLS_TTL
			  : x->type == OF_ACT_COPY_TTL_OUT ? SW_OP_COPY_TTL_OUT
							   : SW_OP_COPY_TTL_IN;
		o->arg = x->value;
		ok = is_mpls(c);
		break;
	case OF_ACT_PUSH_PBB: /* the tags and the ethertype go behind the backbone header */
		o->code = SW_OP_PUSH_PBB;
		o->arg = x->ethertype;
		c->has_type = true, c->type = x->ethertype, c->depth = 0;
		c->has_proto = c->has_icmp = false;
		break;
	case OF_ACT_POP_PBB: /* what is behind it is not known */
		o->code = SW_OP_POP_PBB;
		ok = c->has_type && c->type == 0x88e7;
		c->has_type = c->has_proto = c->has_icmp = false, c->depth = 0;
		break;
	case OF_ACT_SET_QUEUE:
		o->code = SW_OP_SET_QUEUE;
		o->arg = x->value;
		break;
	default:
		return false;
	}
	return ok;
}

void sw_actions_mark_last_out(struct sw_actions *x)
{
	x->last_out = x->n;
	for (unsigned i = 0; i < x->n; i++)
		if (x->op[i].code == SW_OP_OUTPUT || x->op[i].code == SW_OP_GROUP)
			x->last_out = (uint8_t)i;
}

void sw_actions_stamp(struct sw_actions *x)
{
	static _Atomic uint64_t last; /* relaxed: only uniqueness is asked of it */
	x->id = atomic_fetch_add_explicit(&last, 1, memory_order_relaxed) + 1;
}

int sw_actions_decode(const struct of_actions *oa, const struct sw_act_ctx *ctx,
		      struct sw_actions *out, uint16_t *etype, uint16_t *ecode)
{
	memset(out, 0, sizeof(*out));
	if (oa->n_skipped)
		return fail(etype, ecode, oa->skip_type, oa->skip_code);
	if (oa->n > OF_MAX_ACTIONS)
		return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_TOO_MANY);
	struct cur c = {.has_type = ctx->has_eth_type, .has_proto = ctx->has_proto,
			.has_icmp = ctx->has_icmp_type, .type = ctx->eth_type,
			.proto = ctx->ip_proto, .icmp = ctx->icmp_type, .depth = ctx->vlan_depth};
	out->meter_id = oa->meter_id; /* the agent resolves it to out->meter (issue 25) */
	unsigned k = 0; /* ops used: an IPv6 address takes two */
	for (unsigned i = 0; i < oa->n; i++) {
		const struct of_action *x = &oa->a[i];
		bool v6 = x->type == OF_ACT_SET_FIELD &&
			  (x->field == OF_OXM_IPV6_SRC || x->field == OF_OXM_IPV6_DST ||
			   x->field == OF_OXM_IPV6_ND_TARGET);
		bool tun = x->type == OF_ACT_SET_FIELD && x->field == OF_OXM_TUNNEL_ID;
		bool ip6 = c.has_type && c.type == 0x86dd;
		bool nd = ip6 && c.has_proto && c.proto == 58 && c.has_icmp;
		if (k + (v6 || tun ? 2 : 1) > OF_MAX_ACTIONS)
			return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_TOO_MANY);
		struct sw_op *o = &out->op[k];
		bool ok;
		if (x->type == OF_ACT_OUTPUT) {
			if (!port_ok(x->port, ctx->nports))
				return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_BAD_OUT_PORT);
			o->code = SW_OP_OUTPUT;
			o->arg = x->port;
			o->max_len = x->max_len;
			k++;
			continue;
		}
		if (x->type == OF_ACT_GROUP) { /* a group that exists now (sw_group.h) */
			int slot = ctx->groups ? sw_group_find(ctx->groups, x->value) : -1;
			if (slot < 0)
				return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_BAD_OUT_GROUP);
			o->code = SW_OP_GROUP;
			o->arg = x->value;
			o->max_len = (uint16_t)slot;
			k++;
			continue;
		}
		if (v6) { /* bytes 0..5 in mac, 6..9 in arg, 10..15 in the next op's mac */
			o->code = x->field == OF_OXM_IPV6_SRC   ? SW_OP_SET_IPV6_SRC
				  : x->field == OF_OXM_IPV6_DST ? SW_OP_SET_IPV6_DST
								: SW_OP_SET_ND_TARGET;
			memcpy(o->mac, x->addr, 6);
			o->arg = (uint32_t)x->addr[6] << 24 | (uint32_t)x->addr[7] << 16 |
				 (uint32_t)x->addr[8] << 8 | x->addr[9];
			o[1].code = SW_OP_CONT;
			memcpy(o[1].mac, x->addr + 10, 6);
			ok = o->code == SW_OP_SET_ND_TARGET ? nd && (c.icmp == 135 || c.icmp == 136) : ip6;
			k++;
		} else if (tun) { /* 64 bits: low half in arg, high half in the next op's */
			uint64_t id = 0;
			for (unsigned b = 0; b < 8; b++)
				id = id << 8 | x->addr[b];
			o->code = SW_OP_SET_TUNNEL_ID;
			o->arg = (uint32_t)id;
			o[1].code = SW_OP_CONT;
			o[1].arg = (uint32_t)(id >> 32);
			out->inst |= SW_INST_TUN; /* through sw_pipe_run (sw.h) */
			ok = true; /* no prerequisite (1.3.5 table 12) */
			k++;
		} else if (x->type == OF_ACT_SET_FIELD && (x->field == OF_OXM_IPV6_ND_SLL ||
							   x->field == OF_OXM_IPV6_ND_TLL)) {
			bool sll = x->field == OF_OXM_IPV6_ND_SLL;
			o->code = sll ? SW_OP_SET_ND_SLL : SW_OP_SET_ND_TLL;
			memcpy(o->mac, x->mac, 6);
			ok = nd && c.icmp == (sll ? 135 : 136); /* NS carries the SLL, NA the TLL */
		} else if (x->type == OF_ACT_SET_FIELD) {
			ok = set_field(x, &c, o);
			if (x->field == OF_OXM_ICMPV6_TYPE)
				c.icmp = (uint8_t)x->value, c.has_icmp = true;
		} else if (x->type <= OF_ACT_SET_QUEUE) {
			ok = other_action(x, &c, o);
		} else {
			return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_BAD_TYPE);
		}
		if (!ok && !ctx->any_frame)
			return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_MATCH_INCONSISTENT);
		k++;
	}
	out->n = (uint8_t)k;
	sw_actions_mark_last_out(out);
	return 0;
}

/* The set-field op -> its OXM field (0: not a one-op set-field). */
static uint8_t op_field(uint8_t code)
{
	switch (code) {
	case SW_OP_SET_ETH_DST: return OF_OXM_ETH_DST;
	case SW_OP_SET_ETH_SRC: return OF_OXM_ETH_SRC;
	case SW_OP_SET_VLAN_VID: return OF_OXM_VLAN_VID;
	case SW_OP_SET_VLAN_PCP: return OF_OXM_VLAN_PCP;
	}
	for (size_t i = 0; i < sizeof(set_ops) / sizeof(set_ops[0]); i++)
		if (set_ops[i].code == code)
			return set_ops[i].field;
	return 0;
}

void sw_actions_to_of(const struct sw_actions *x, struct of_actions *oa)
{
	static const uint8_t simple[SW_OP_N] = {
		[SW_OP_PUSH_VLAN] = OF_ACT_PUSH_VLAN,       [SW_OP_POP_VLAN] = OF_ACT_POP_VLAN,
		[SW_OP_DEC_NW_TTL] = OF_ACT_DEC_NW_TTL,     [SW_OP_SET_NW_TTL] = OF_ACT_SET_NW_TTL,
		[SW_OP_PUSH_MPLS] = OF_ACT_PUSH_MPLS,       [SW_OP_POP_MPLS] = OF_ACT_POP_MPLS,
		[SW_OP_SET_MPLS_TTL] = OF_ACT_SET_MPLS_TTL, [SW_OP_DEC_MPLS_TTL] = OF_ACT_DEC_MPLS_TTL,
		[SW_OP_COPY_TTL_OUT] = OF_ACT_COPY_TTL_OUT, [SW_OP_COPY_TTL_IN] = OF_ACT_COPY_TTL_IN,
		[SW_OP_PUSH_PBB] = OF_ACT_PUSH_PBB,         [SW_OP_POP_PBB] = OF_ACT_POP_PBB,
		[SW_OP_SET_QUEUE] = OF_ACT_SET_QUEUE,
	};
	memset(oa, 0, sizeof(*oa));
	oa->meter_id = x->meter_id;
	for (unsigned i = 0; i < x->n; i++) {
		const struct sw_op *o = &x->op[i];
		uint8_t field = op_field(o->code);
		if (o->code == SW_OP_OUTPUT) {
			of_act_output(oa, o->arg, o->max_len);
		} else if (o->code == SW_OP_GROUP) {
			of_act_simple(oa, OF_ACT_GROUP, o->arg);
		} else if ((o->code == SW_OP_SET_IPV6_SRC || o->code == SW_OP_SET_IPV6_DST ||
			    o->code == SW_OP_SET_ND_TARGET) && i + 1 < x->n) {
			uint8_t a[16];
			memcpy(a, o->mac, 6);
			for (unsigned b = 0; b < 4; b++)
				a[6 + b] = (uint8_t)(o->arg >> (24 - 8 * b));
			memcpy(a + 10, o[1].mac, 6);
			of_act_set_ipv6(oa, o->code == SW_OP_SET_IPV6_SRC   ? OF_OXM_IPV6_SRC
					    : o->code == SW_OP_SET_IPV6_DST ? OF_OXM_IPV6_DST
									    : OF_OXM_IPV6_ND_TARGET, a);
			i++; /* its SW_OP_CONT */
		} else if (o->code == SW_OP_SET_TUNNEL_ID && i + 1 < x->n) {
			uint64_t id = (uint64_t)o[1].arg << 32 | o->arg;
			uint8_t a[16] = {0};
			for (unsigned b = 0; b < 8; b++)
				a[b] = (uint8_t)(id >> (56 - 8 * b));
			of_act_set_ipv6(oa, OF_OXM_TUNNEL_ID, a); /* addr[0..8): the value */
			i++; /* its SW_OP_CONT */
		} else if (o->code == SW_OP_SET_ND_SLL || o->code == SW_OP_SET_ND_TLL) {
			of_act_set_mac(oa, o->code == SW_OP_SET_ND_SLL ? OF_OXM_IPV6_ND_SLL
								       : OF_OXM_IPV6_ND_TLL, o->mac);
		} else if (field == OF_OXM_ETH_DST || field == OF_OXM_ETH_SRC ||
			   field == OF_OXM_ARP_SHA || field == OF_OXM_ARP_THA) {
			of_act_set_mac(oa, field, o->mac);
		} else if (field == OF_OXM_VLAN_VID) {
			of_act_set_field(oa, field, o->arg | OFPVID_PRESENT);
		} else if (field) {
			of_act_set_field(oa, field, o->arg);
		} else if (o->code < SW_OP_N && simple[o->code]) {
			of_act_simple(oa, simple[o->code], o->arg);
		} /* else SW_OP_CONT: read with the op before it */
	}
}

bool sw_actions_outputs_to(const struct sw_actions *x, uint32_t port)
{
	if (port == OFPP_ANY)
		return true;
	for (unsigned i = 0; i < (unsigned)x->n + x->nwrite; i++) /* apply and write-actions */
		if (x->op[i].code == SW_OP_OUTPUT && x->op[i].arg == port)
			return true;
	return false;
}
