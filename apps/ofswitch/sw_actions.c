/*
 * apps/ofswitch/sw_actions.c: the controller's action list (struct of_actions, as the
 * protocol module parsed it) -> the switch's action program (struct sw_actions), checked.
 *
 * Checks, in list order, as OVS does for OpenFlow 1.3:
 *   - anything the parser skipped: the ERROR it noted (BAD_TYPE, BAD_SET_TYPE, TOO_MANY, ...);
 *   - output ports: 1..nports, IN_PORT, FLOOD, ALL, CONTROLLER, else BAD_OUT_PORT;
 *   - set-field prerequisites against what the match guarantees (ipv4_* need eth_type 0x0800,
 *     tcp_* ip_proto 6, udp_* ip_proto 17, ip_dscp and the TTL actions IPv4 or IPv6,
 *     vlan_vid/vlan_pcp a tag), else BAD_ACTION/MATCH_INCONSISTENT. The tag is followed
 *     through the list: push_vlan adds one (two at most), pop_vlan needs and removes one.
 * A PACKET_OUT's list is checked against its frame instead (sw_act_ctx_of_key).
 */
#include <string.h>

#include "sw.h"

void sw_act_ctx_of_match(const struct of_match *m, unsigned nports, struct sw_act_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->nports = nports;
	c->has_eth_type = m->fields & OF_MATCH_ETH_TYPE;
	c->eth_type = m->eth_type;
	c->has_proto = m->fields & OF_MATCH_IP_PROTO;
	c->ip_proto = m->ip_proto;
	/* Tagged when the match requires OFPVID_PRESENT (exact, or masked with that bit). */
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
	c->vlan_depth = k->vlan ? 1 : 0;
}

static bool port_ok(uint32_t p, unsigned nports)
{
	return (p >= 1 && p <= nports) || p == OFPP_IN_PORT || p == OFPP_FLOOD ||
	       p == OFPP_ALL || p == OFPP_CONTROLLER;
}

/* A set-field: its op and whether the prerequisites hold. */
static bool set_field(const struct of_action *x, const struct sw_act_ctx *c, unsigned depth,
		      struct sw_op *o)
{
	bool ip4 = c->has_eth_type && c->eth_type == 0x0800;
	bool ip = ip4 || (c->has_eth_type && c->eth_type == 0x86dd);
	o->arg = x->value;
	switch (x->field) {
	case OF_OXM_ETH_DST:
	case OF_OXM_ETH_SRC:
		o->code = x->field == OF_OXM_ETH_DST ? SW_OP_SET_ETH_DST : SW_OP_SET_ETH_SRC;
		memcpy(o->mac, x->mac, 6);
		return true;
	case OF_OXM_VLAN_VID:
		o->code = SW_OP_SET_VLAN_VID;
		o->arg = x->value & 0x0fff;
		return depth > 0;
	case OF_OXM_VLAN_PCP:
		o->code = SW_OP_SET_VLAN_PCP;
		return depth > 0;
	case OF_OXM_IP_DSCP:
		o->code = SW_OP_SET_IP_DSCP;
		return ip;
	case OF_OXM_IPV4_SRC:
	case OF_OXM_IPV4_DST:
		o->code = x->field == OF_OXM_IPV4_SRC ? SW_OP_SET_IPV4_SRC : SW_OP_SET_IPV4_DST;
		return ip4;
	case OF_OXM_TCP_SRC:
	case OF_OXM_TCP_DST:
		o->code = x->field == OF_OXM_TCP_SRC ? SW_OP_SET_TCP_SRC : SW_OP_SET_TCP_DST;
		return ip && c->has_proto && c->ip_proto == 6;
	case OF_OXM_UDP_SRC:
	case OF_OXM_UDP_DST:
		o->code = x->field == OF_OXM_UDP_SRC ? SW_OP_SET_UDP_SRC : SW_OP_SET_UDP_DST;
		return ip && c->has_proto && c->ip_proto == 17;
	}
	return false; /* the parser keeps only the fields above */
}

static int fail(uint16_t *etype, uint16_t *ecode, uint16_t type, uint16_t code)
{
	*etype = type;
	*ecode = code;
	return -1;
}

int sw_actions_decode(const struct of_actions *oa, const struct sw_act_ctx *c,
		      struct sw_actions *out, uint16_t *etype, uint16_t *ecode)
{
	memset(out, 0, sizeof(*out));
	if (oa->n_skipped)
		return fail(etype, ecode, oa->skip_type, oa->skip_code);
	if (oa->n > OF_MAX_ACTIONS)
		return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_TOO_MANY);
	unsigned depth = c->vlan_depth;
	bool ip = c->has_eth_type && (c->eth_type == 0x0800 || c->eth_type == 0x86dd);
	for (unsigned i = 0; i < oa->n; i++) {
		const struct of_action *x = &oa->a[i];
		struct sw_op *o = &out->op[i];
		bool ok = true;
		switch (x->type) {
		case OF_ACT_OUTPUT:
			if (!port_ok(x->port, c->nports))
				return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_BAD_OUT_PORT);
			o->code = SW_OP_OUTPUT;
			o->arg = x->port;
			o->max_len = x->max_len;
			break;
		case OF_ACT_SET_FIELD:
			ok = set_field(x, c, depth, o);
			break;
		case OF_ACT_PUSH_VLAN:
			o->code = SW_OP_PUSH_VLAN;
			o->arg = x->ethertype;
			ok = depth < 2;
			depth++;
			break;
		case OF_ACT_POP_VLAN:
			o->code = SW_OP_POP_VLAN;
			ok = depth > 0;
			depth = depth ? depth - 1 : 0;
			break;
		case OF_ACT_DEC_NW_TTL:
		case OF_ACT_SET_NW_TTL:
			o->code = x->type == OF_ACT_DEC_NW_TTL ? SW_OP_DEC_NW_TTL : SW_OP_SET_NW_TTL;
			o->arg = x->value;
			ok = ip;
			break;
		default:
			return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_BAD_TYPE);
		}
		if (!ok)
			return fail(etype, ecode, OFPET_BAD_ACTION, OFPBAC_MATCH_INCONSISTENT);
	}
	out->n = oa->n;
	out->last_out = oa->n;
	for (unsigned i = 0; i < oa->n; i++)
		if (out->op[i].code == SW_OP_OUTPUT)
			out->last_out = (uint8_t)i;
	return 0;
}

void sw_actions_to_of(const struct sw_actions *x, struct of_actions *oa)
{
	static const uint8_t field[] = {
		[SW_OP_SET_ETH_DST] = OF_OXM_ETH_DST,   [SW_OP_SET_ETH_SRC] = OF_OXM_ETH_SRC,
		[SW_OP_SET_VLAN_VID] = OF_OXM_VLAN_VID, [SW_OP_SET_VLAN_PCP] = OF_OXM_VLAN_PCP,
		[SW_OP_SET_IP_DSCP] = OF_OXM_IP_DSCP,   [SW_OP_SET_IPV4_SRC] = OF_OXM_IPV4_SRC,
		[SW_OP_SET_IPV4_DST] = OF_OXM_IPV4_DST, [SW_OP_SET_TCP_SRC] = OF_OXM_TCP_SRC,
		[SW_OP_SET_TCP_DST] = OF_OXM_TCP_DST,   [SW_OP_SET_UDP_SRC] = OF_OXM_UDP_SRC,
		[SW_OP_SET_UDP_DST] = OF_OXM_UDP_DST,
	};
	memset(oa, 0, sizeof(*oa));
	for (unsigned i = 0; i < x->n; i++) {
		const struct sw_op *o = &x->op[i];
		switch (o->code) {
		case SW_OP_OUTPUT:
			of_act_output(oa, o->arg, o->max_len);
			break;
		case SW_OP_SET_ETH_DST:
		case SW_OP_SET_ETH_SRC:
			of_act_set_mac(oa, field[o->code], o->mac);
			break;
		case SW_OP_SET_VLAN_VID:
			of_act_set_field(oa, OF_OXM_VLAN_VID, o->arg | OFPVID_PRESENT);
			break;
		case SW_OP_PUSH_VLAN:
			of_act_simple(oa, OF_ACT_PUSH_VLAN, (uint16_t)o->arg);
			break;
		case SW_OP_POP_VLAN:
			of_act_simple(oa, OF_ACT_POP_VLAN, 0);
			break;
		case SW_OP_DEC_NW_TTL:
			of_act_simple(oa, OF_ACT_DEC_NW_TTL, 0);
			break;
		case SW_OP_SET_NW_TTL:
			of_act_simple(oa, OF_ACT_SET_NW_TTL, (uint16_t)o->arg);
			break;
		default:
			of_act_set_field(oa, field[o->code], o->arg);
			break;
		}
	}
}

bool sw_actions_outputs_to(const struct sw_actions *x, uint32_t port)
{
	if (port == OFPP_ANY)
		return true;
	for (unsigned i = 0; i < x->n; i++)
		if (x->op[i].code == SW_OP_OUTPUT && x->op[i].arg == port)
			return true;
	return false;
}
