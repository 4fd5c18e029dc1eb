/*
 * apps/openflow/of/of_action.c: action lists and 1.3 instructions, both directions.
 *
 * Parsing checks every length against the bytes given (BAD_ACTION/BAD_LEN, for a set-field
 * BAD_SET_LEN; BAD_INSTRUCTION/BAD_LEN) and the values the spec constrains (a push_vlan
 * ethertype other than 0x8100/0x88a8, push_mpls other than 0x8847/0x8848, push_pbb other
 * than 0x88e7: BAD_ARGUMENT; a set-field with a mask, non-zero
 * padding or a value out of range: BAD_SET_ARGUMENT). Well-formed actions this module does
 * not model are skipped by their length and counted, with the ERROR a switch answers for
 * them kept in struct of_actions (BAD_TYPE, BAD_SET_TYPE, BAD_EXPERIMENTER, TOO_MANY), so a
 * controller can still read another switch's flow stats and a switch can refuse precisely.
 * 1.0 lists model OUTPUT only.
 */
#include <errno.h>
#include <string.h>

#include "of_meter.h"
#include "of_wire.h"

#define OFPAT_OUTPUT 0
#define OFPAT_COPY_TTL_OUT 11
#define OFPAT_COPY_TTL_IN 12
#define OFPAT_SET_MPLS_TTL 15
#define OFPAT_DEC_MPLS_TTL 16
#define OFPAT_PUSH_VLAN 17
#define OFPAT_POP_VLAN 18
#define OFPAT_PUSH_MPLS 19
#define OFPAT_POP_MPLS 20
#define OFPAT_SET_QUEUE 21
#define OFPAT_GROUP 22
#define OFPAT_SET_NW_TTL 23
#define OFPAT_DEC_NW_TTL 24
#define OFPAT_SET_FIELD 25
#define OFPAT_PUSH_PBB 26
#define OFPAT_POP_PBB 27
#define OFPAT_EXPERIMENTER 0xffff
#define OFPIT_APPLY_ACTIONS 4
#define OFPXMC_OPENFLOW_BASIC 0x8000

static int bad(struct of_fault *f, uint16_t type, uint16_t code, const char *why)
{
	of_fault_set(f, type, code, false, why);
	return -EBADMSG;
}

/* The set-field OXM fields modelled: number, value width, name. */
static const struct set_def {
	uint8_t field, width;
	const char *name;
} set_defs[] = {
	{OF_OXM_ETH_DST, 6, "eth_dst"},   {OF_OXM_ETH_SRC, 6, "eth_src"},
	{OF_OXM_VLAN_VID, 2, "vlan_vid"}, {OF_OXM_VLAN_PCP, 1, "vlan_pcp"},
	{OF_OXM_IP_DSCP, 1, "ip_dscp"},   {OF_OXM_IPV4_SRC, 4, "ipv4_src"},
	{OF_OXM_IPV4_DST, 4, "ipv4_dst"}, {OF_OXM_TCP_SRC, 2, "tcp_src"},
	{OF_OXM_TCP_DST, 2, "tcp_dst"},   {OF_OXM_UDP_SRC, 2, "udp_src"},
	{OF_OXM_UDP_DST, 2, "udp_dst"},   {OF_OXM_IP_ECN, 1, "ip_ecn"},
	{OF_OXM_SCTP_SRC, 2, "sctp_src"}, {OF_OXM_SCTP_DST, 2, "sctp_dst"},
	{OF_OXM_ICMPV4_TYPE, 1, "icmpv4_type"}, {OF_OXM_ICMPV4_CODE, 1, "icmpv4_code"},
	{OF_OXM_ARP_OP, 2, "arp_op"},     {OF_OXM_ARP_SPA, 4, "arp_spa"},
	{OF_OXM_ARP_TPA, 4, "arp_tpa"},   {OF_OXM_ARP_SHA, 6, "arp_sha"},
	{OF_OXM_ARP_THA, 6, "arp_tha"},   {OF_OXM_IPV6_FLABEL, 4, "ipv6_flabel"},
	{OF_OXM_IPV6_SRC, 16, "ipv6_src"}, {OF_OXM_IPV6_DST, 16, "ipv6_dst"},
	{OF_OXM_IPV6_ND_TARGET, 16, "ipv6_nd_target"},
	{OF_OXM_IPV6_ND_SLL, 6, "ipv6_nd_sll"}, {OF_OXM_IPV6_ND_TLL, 6, "ipv6_nd_tll"},
	{OF_OXM_ICMPV6_TYPE, 1, "icmpv6_type"}, {OF_OXM_ICMPV6_CODE, 1, "icmpv6_code"},
	{OF_OXM_MPLS_LABEL, 4, "mpls_label"}, {OF_OXM_MPLS_TC, 1, "mpls_tc"},
	{OF_OXM_MPLS_BOS, 1, "mpls_bos"}, {OF_OXM_PBB_ISID, 3, "pbb_isid"},
	{OF_OXM_TUNNEL_ID, 8, "tunnel_id"},
};

static const struct set_def *set_def(uint8_t field)
{
	for (size_t i = 0; i < sizeof(set_defs) / sizeof(set_defs[0]); i++)
		if (set_defs[i].field == field)
			return &set_defs[i];
	return NULL;
}

const char *of_oxm_name(uint8_t field)
{
	const struct set_def *d = set_def(field);
	return d ? d->name : NULL;
}

/* Skips one well-formed action we do not model; the first one names the ERROR. */
static void skip(struct of_actions *a, uint16_t type, uint16_t code)
{
	if (!a->n_skipped) {
		a->skip_type = type;
		a->skip_code = code;
	}
	a->n_skipped++;
}

static struct of_action *slot(struct of_actions *a)
{
	if (a->n >= OF_MAX_ACTIONS) {
		skip(a, OFPET_BAD_ACTION, OFPBAC_TOO_MANY);
		return NULL;
	}
	struct of_action *x = &a->a[a->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

/* A SET_FIELD action at p (alen bytes, >= 8, a multiple of 8, all present). */
static int set_field_parse(const uint8_t *p, size_t alen, struct of_actions *a,
			   struct of_fault *f)
{
	uint32_t h = of_get32(p + 4);
	unsigned cls = h >> 16, field = (h >> 9) & 0x7f, plen = h & 0xff;
	bool hasmask = (h >> 8) & 1;
	if (8 + (size_t)plen > alen || alen != 8 + plen + of_pad8(8 + plen))
		return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_SET_LEN, "SET_FIELD length");
	for (size_t i = 8 + plen; i < alen; i++)
		if (p[i])
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_SET_ARGUMENT,
				   "SET_FIELD padding not zero");
	const struct set_def *d = cls == OFPXMC_OPENFLOW_BASIC ? set_def((uint8_t)field) : NULL;
	if (!d) {
		skip(a, OFPET_BAD_ACTION, OFPBAC_BAD_SET_TYPE);
		return 0;
	}
	if (hasmask) /* 1.3 set-fields carry no mask */
		return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_SET_ARGUMENT, "SET_FIELD with a mask");
	if (plen != d->width)
		return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_SET_LEN, "SET_FIELD value width");
	const uint8_t *v = p + 8;
	uint32_t val = 0;
	if (d->width <= 4)
		for (unsigned i = 0; i < d->width; i++)
			val = val << 8 | v[i];
	if ((d->field == OF_OXM_VLAN_VID && (!(val & OFPVID_PRESENT) || val > 0x1fff)) ||
	    (d->field == OF_OXM_VLAN_PCP && val > 7) || (d->field == OF_OXM_IP_DSCP && val > 63) ||
	    (d->field == OF_OXM_IP_ECN && val > 3) || (d->field == OF_OXM_MPLS_TC && val > 7) ||
	    (d->field == OF_OXM_MPLS_BOS && val > 1) ||
	    ((d->field == OF_OXM_IPV6_FLABEL || d->field == OF_OXM_MPLS_LABEL) && val > 0xfffff))
		return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_SET_ARGUMENT, "SET_FIELD value out of range");
	struct of_action *x = slot(a);
	if (!x)
		return 0;
	x->type = OF_ACT_SET_FIELD;
	x->field = d->field;
	if (d->width == 6)
		memcpy(x->mac, v, 6);
	else if (d->width == 16 || d->width == 8)
		memcpy(x->addr, v, d->width);
	else
		x->value = val;
	return 0;
}

/* One 1.3 action at p (alen bytes, checked >= 8, multiple of 8, present). */
static int action13_parse(const uint8_t *p, size_t alen, struct of_actions *a,
			  struct of_fault *f)
{
	uint16_t type = of_get16(p);
	struct of_action *x;
	switch (type) {
	case OFPAT_OUTPUT:
		if (alen != 16)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "OUTPUT action length");
		if ((x = slot(a))) {
			x->type = OF_ACT_OUTPUT;
			x->port = of_get32(p + 4);
			x->max_len = of_get16(p + 8);
		}
		return 0;
	case OFPAT_PUSH_VLAN:
		if (alen != 8)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "PUSH_VLAN action length");
		if (of_get16(p + 4) != 0x8100 && of_get16(p + 4) != 0x88a8)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_ARGUMENT,
				   "PUSH_VLAN ethertype is not 0x8100 or 0x88a8");
		if ((x = slot(a))) {
			x->type = OF_ACT_PUSH_VLAN;
			x->ethertype = of_get16(p + 4);
		}
		return 0;
	case OFPAT_PUSH_MPLS:
	case OFPAT_POP_MPLS:
	case OFPAT_PUSH_PBB: {
		if (alen != 8)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "push/pop action length");
		uint16_t et = of_get16(p + 4);
		if ((type == OFPAT_PUSH_MPLS && et != 0x8847 && et != 0x8848) ||
		    (type == OFPAT_PUSH_PBB && et != 0x88e7))
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_ARGUMENT,
				   "push ethertype is not one of its kind");
		if ((x = slot(a))) {
			x->type = type == OFPAT_PUSH_MPLS  ? OF_ACT_PUSH_MPLS
				  : type == OFPAT_POP_MPLS ? OF_ACT_POP_MPLS
							   : OF_ACT_PUSH_PBB;
			x->ethertype = et;
		}
		return 0;
	}
	case OFPAT_POP_VLAN:
	case OFPAT_DEC_NW_TTL:
	case OFPAT_SET_NW_TTL:
	case OFPAT_COPY_TTL_OUT:
	case OFPAT_COPY_TTL_IN:
	case OFPAT_SET_MPLS_TTL:
	case OFPAT_DEC_MPLS_TTL:
	case OFPAT_SET_QUEUE:
	case OFPAT_POP_PBB:
		if (alen != 8)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "action length is not 8");
		if ((x = slot(a))) {
			switch (type) {
			case OFPAT_POP_VLAN: x->type = OF_ACT_POP_VLAN; break;
			case OFPAT_DEC_NW_TTL: x->type = OF_ACT_DEC_NW_TTL; break;
			case OFPAT_SET_NW_TTL: x->type = OF_ACT_SET_NW_TTL, x->value = p[4]; break;
			case OFPAT_COPY_TTL_OUT: x->type = OF_ACT_COPY_TTL_OUT; break;
			case OFPAT_COPY_TTL_IN: x->type = OF_ACT_COPY_TTL_IN; break;
			case OFPAT_SET_MPLS_TTL: x->type = OF_ACT_SET_MPLS_TTL, x->value = p[4]; break;
			case OFPAT_DEC_MPLS_TTL: x->type = OF_ACT_DEC_MPLS_TTL; break;
			case OFPAT_SET_QUEUE: x->type = OF_ACT_SET_QUEUE, x->value = of_get32(p + 4); break;
			default: x->type = OF_ACT_POP_PBB; break;
			}
		}
		return 0;
	case OFPAT_GROUP:
		if (alen != 8)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "GROUP action length");
		if ((x = slot(a))) {
			x->type = OF_ACT_GROUP;
			x->value = of_get32(p + 4);
		}
		return 0;
	case OFPAT_SET_FIELD:
		return set_field_parse(p, alen, a, f);
	case OFPAT_EXPERIMENTER:
		skip(a, OFPET_BAD_ACTION, OFPBAC_BAD_EXPERIMENTER);
		return 0;
	default: /* unknown */
		skip(a, OFPET_BAD_ACTION, OFPBAC_BAD_TYPE);
		return 0;
	}
}

int of_actions_parse(uint8_t version, const uint8_t *p, size_t len, struct of_actions *a,
		     struct of_fault *f)
{
	for (size_t off = 0; off < len;) {
		if (len - off < 4)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "truncated action header");
		size_t alen = of_get16(p + off + 2);
		if (alen < 8 || alen % 8 || alen > len - off)
			return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "action length is bad");
		if (version != OF_VERSION_1_0) {
			int rc = action13_parse(p + off, alen, a, f);
			if (rc)
				return rc;
		} else if (of_get16(p + off) == OFPAT_OUTPUT) {
			if (alen != 8)
				return bad(f, OFPET_BAD_ACTION, OFPBAC_BAD_LEN, "OUTPUT action length");
			struct of_action *x = slot(a);
			if (x) {
				x->port = of_port_from10(of_get16(p + off + 4));
				x->max_len = of_get16(p + off + 6);
			}
		} else {
			skip(a, OFPET_BAD_ACTION, OFPBAC_BAD_TYPE);
		}
		off += alen;
	}
	return 0;
}

/* One of the pipeline's instructions (type 1, 2, 3 or 5; ilen checked: >= 8, a multiple of
 * 8, all present) into *in. */
static int pipeline_inst(const uint8_t *p, size_t ilen, uint16_t it, struct of_insts *in,
			 struct of_fault *f)
{
	static const uint8_t bit[] = {[1] = OF_INST_GOTO_TABLE, [2] = OF_INST_WRITE_METADATA,
				      [3] = OF_INST_WRITE_ACTIONS, [5] = OF_INST_CLEAR_ACTIONS};
	if (in->present & bit[it])
		return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_DUP_INST, "instruction repeated");
	if ((it == 1 || it == 5) && ilen != 8)
		return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, "instruction length is bad");
	if (it == 2 && ilen != 24)
		return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, "write_metadata length is bad");
	in->present |= bit[it];
	if (it == 1) {
		in->goto_table = p[4];
	} else if (it == 2) {
		in->metadata = of_get64(p + 8);
		in->metadata_mask = of_get64(p + 16);
	} else if (it == 3) {
		return of_actions_parse(OF_VERSION_1_3, p + 8, ilen - 8, &in->write, f);
	}
	return 0;
}

int of_instructions_parse(const uint8_t *p, size_t len, struct of_actions *a,
			  struct of_insts *in, struct of_fault *f)
{
	bool apply = false;
	if (in)
		memset(in, 0, sizeof(*in));
	for (size_t off = 0; off < len;) {
		if (len - off < 4)
			return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, "truncated instruction");
		size_t ilen = of_get16(p + off + 2);
		if (ilen < 8 || ilen % 8 || ilen > len - off)
			return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN, "instruction length is bad");
		uint16_t it = of_get16(p + off);
		if (it == OFPIT_APPLY_ACTIONS) {
			if (apply && in)
				return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_DUP_INST,
					   "instruction repeated");
			apply = true;
			int rc = of_actions_parse(OF_VERSION_1_3, p + off + 8, ilen - 8, a, f);
			if (rc)
				return rc;
		} else if (in && (it == 1 || it == 2 || it == 3 || it == 5)) {
			int rc = pipeline_inst(p + off, ilen, it, in, f);
			if (rc)
				return rc;
		} else if (it == OFPIT_METER) { /* issue 25: meters */
			if (ilen != 8)
				return bad(f, OFPET_BAD_INSTRUCTION, OFPBIC_BAD_LEN,
					   "meter instruction is not 8 bytes");
			a->meter_id = of_get32(p + off + 4);
		} else {
			/* 1..6 are the 1.3 instructions (goto_table, metadata, write/clear
			 * actions, meter): known, not done here */
			skip(a, OFPET_BAD_INSTRUCTION, it >= 1 && it <= 6 ? OFPBIC_UNSUP_INST
						       : it == 0xffff   ? OFPBIC_BAD_EXPERIMENTER
									: OFPBIC_UNKNOWN_INST);
		}
		off += ilen;
	}
	return 0;
}

/* Wire bytes of one action in `version` (0: it has no form there). */
static size_t action_len(uint8_t version, const struct of_action *x)
{
	if (version == OF_VERSION_1_0)
		return x->type == OF_ACT_OUTPUT ? 8 : 0;
	switch (x->type) {
	case OF_ACT_OUTPUT:
		return 16;
	case OF_ACT_SET_FIELD: {
		const struct set_def *d = set_def(x->field);
		return d ? 8 + d->width + of_pad8(8 + d->width) : 0;
	}
	case OF_ACT_PUSH_VLAN:
	case OF_ACT_POP_VLAN:
	case OF_ACT_DEC_NW_TTL:
	case OF_ACT_SET_NW_TTL:
	case OF_ACT_PUSH_MPLS:
	case OF_ACT_POP_MPLS:
	case OF_ACT_SET_MPLS_TTL:
	case OF_ACT_DEC_MPLS_TTL:
	case OF_ACT_COPY_TTL_OUT:
	case OF_ACT_COPY_TTL_IN:
	case OF_ACT_PUSH_PBB:
	case OF_ACT_POP_PBB:
	case OF_ACT_SET_QUEUE:
	case OF_ACT_GROUP:
		return 8;
	}
	return 0;
}

size_t of_actions_len(uint8_t version, const struct of_actions *a)
{
	size_t n = 0;
	for (unsigned i = 0; i < a->n && i < OF_MAX_ACTIONS; i++)
		n += action_len(version, &a->a[i]);
	return n;
}

void of_actions_put(struct of_wbuf *w, uint8_t version, const struct of_actions *a)
{
	for (unsigned i = 0; i < a->n && i < OF_MAX_ACTIONS; i++) {
		const struct of_action *x = &a->a[i];
		size_t len = action_len(version, x);
		if (!len)
			continue; /* of_actions_fit() said false; callers check it first */
		if (version == OF_VERSION_1_0) {
			of_put16(w, OFPAT_OUTPUT);
			of_put16(w, 8);
			of_put16(w, (uint16_t)of_port_to10(x->port));
			of_put16(w, x->max_len);
			continue;
		}
		static const uint16_t wire[] = {
			[OF_ACT_OUTPUT] = OFPAT_OUTPUT,       [OF_ACT_SET_FIELD] = OFPAT_SET_FIELD,
			[OF_ACT_PUSH_VLAN] = OFPAT_PUSH_VLAN, [OF_ACT_POP_VLAN] = OFPAT_POP_VLAN,
			[OF_ACT_DEC_NW_TTL] = OFPAT_DEC_NW_TTL, [OF_ACT_SET_NW_TTL] = OFPAT_SET_NW_TTL,
			[OF_ACT_PUSH_MPLS] = OFPAT_PUSH_MPLS, [OF_ACT_POP_MPLS] = OFPAT_POP_MPLS,
			[OF_ACT_SET_MPLS_TTL] = OFPAT_SET_MPLS_TTL,
			[OF_ACT_DEC_MPLS_TTL] = OFPAT_DEC_MPLS_TTL,
			[OF_ACT_COPY_TTL_OUT] = OFPAT_COPY_TTL_OUT,
			[OF_ACT_COPY_TTL_IN] = OFPAT_COPY_TTL_IN, [OF_ACT_PUSH_PBB] = OFPAT_PUSH_PBB,
			[OF_ACT_POP_PBB] = OFPAT_POP_PBB, [OF_ACT_SET_QUEUE] = OFPAT_SET_QUEUE,
			[OF_ACT_GROUP] = OFPAT_GROUP,
		};
		of_put16(w, wire[x->type]);
		of_put16(w, (uint16_t)len);
		switch (x->type) {
		case OF_ACT_OUTPUT:
			of_put32(w, x->port);
			of_put16(w, x->max_len);
			of_put_zeros(w, 6);
			break;
		case OF_ACT_SET_FIELD: {
			unsigned wd = set_def(x->field)->width;
			of_put32(w, (uint32_t)OFPXMC_OPENFLOW_BASIC << 16 | (uint32_t)x->field << 9 | wd);
			if (wd == 6)
				of_put_bytes(w, x->mac, 6);
			else if (wd == 16 || wd == 8)
				of_put_bytes(w, x->addr, wd);
			else
				for (unsigned k = wd; k-- > 0;)
					of_put8(w, (uint8_t)(x->value >> (8 * k)));
			of_put_zeros(w, len - 8 - wd);
			break;
		}
		case OF_ACT_PUSH_VLAN:
		case OF_ACT_PUSH_MPLS:
		case OF_ACT_POP_MPLS:
		case OF_ACT_PUSH_PBB:
			of_put16(w, x->ethertype);
			of_put_zeros(w, 2);
			break;
		case OF_ACT_SET_NW_TTL:
		case OF_ACT_SET_MPLS_TTL:
			of_put8(w, (uint8_t)x->value);
			of_put_zeros(w, 3);
			break;
		case OF_ACT_SET_QUEUE:
		case OF_ACT_GROUP:
			of_put32(w, x->value);
			break;
		default: /* the argument-less ones: the header and 4 bytes of padding */
			of_put_zeros(w, 4);
			break;
		}
	}
}

bool of_actions_fit(uint8_t version, const struct of_actions *a)
{
	if (a->n > OF_MAX_ACTIONS)
		return false;
	for (unsigned i = 0; i < a->n; i++) {
		const struct of_action *x = &a->a[i];
		if (!action_len(version, x))
			return false;
		if (version == OF_VERSION_1_0 && of_port_to10(x->port) < 0)
			return false;
		if (x->type == OF_ACT_SET_FIELD && set_def(x->field)->width <= 4 &&
		    (uint64_t)x->value >> (8 * set_def(x->field)->width))
			return false; /* a value wider than its field */
	}
	return true;
}

size_t of_instructions_len(const struct of_actions *a)
{
	return (a->meter_id ? 8 : 0) + (a->n ? 8 + of_actions_len(OF_VERSION_1_3, a) : 0);
}

void of_instructions_put(struct of_wbuf *w, const struct of_actions *a)
{
	if (a->meter_id) { /* the meter instruction comes first, as it runs first */
		of_put16(w, OFPIT_METER);
		of_put16(w, 8);
		of_put32(w, a->meter_id);
	}
	if (!a->n)
		return;
	of_put16(w, OFPIT_APPLY_ACTIONS);
	of_put16(w, (uint16_t)(8 + of_actions_len(OF_VERSION_1_3, a)));
	of_put_zeros(w, 4);
	of_actions_put(w, OF_VERSION_1_3, a);
}

size_t of_insts_len(const struct of_insts *in)
{
	size_t n = 0;
	if (in->present & OF_INST_GOTO_TABLE)
		n += 8;
	if (in->present & OF_INST_WRITE_METADATA)
		n += 24;
	if (in->present & OF_INST_WRITE_ACTIONS)
		n += 8 + of_actions_len(OF_VERSION_1_3, &in->write);
	if (in->present & OF_INST_CLEAR_ACTIONS)
		n += 8;
	return n;
}

void of_insts_put(struct of_wbuf *w, const struct of_insts *in)
{
	if (in->present & OF_INST_GOTO_TABLE) {
		of_put16(w, 1);
		of_put16(w, 8);
		of_put8(w, in->goto_table);
		of_put_zeros(w, 3);
	}
	if (in->present & OF_INST_WRITE_METADATA) {
		of_put16(w, 2);
		of_put16(w, 24);
		of_put_zeros(w, 4);
		of_put64(w, in->metadata);
		of_put64(w, in->metadata_mask);
	}
	if (in->present & OF_INST_WRITE_ACTIONS) {
		of_put16(w, 3);
		of_put16(w, (uint16_t)(8 + of_actions_len(OF_VERSION_1_3, &in->write)));
		of_put_zeros(w, 4);
		of_actions_put(w, OF_VERSION_1_3, &in->write);
	}
	if (in->present & OF_INST_CLEAR_ACTIONS) {
		of_put16(w, 5);
		of_put16(w, 8);
		of_put_zeros(w, 4);
	}
}

/* ---- building lists ---- */

static struct of_action *append(struct of_actions *a, enum of_action_type type)
{
	if (a->n >= OF_MAX_ACTIONS)
		return NULL;
	struct of_action *x = &a->a[a->n++];
	memset(x, 0, sizeof(*x));
	x->type = (uint8_t)type;
	return x;
}

bool of_act_output(struct of_actions *a, uint32_t port, uint16_t max_len)
{
	struct of_action *x = append(a, OF_ACT_OUTPUT);
	if (x) {
		x->port = port;
		x->max_len = max_len;
	}
	return x != NULL;
}

bool of_act_set_field(struct of_actions *a, uint8_t field, uint32_t value)
{
	struct of_action *x = append(a, OF_ACT_SET_FIELD);
	if (x) {
		x->field = field;
		x->value = value;
	}
	return x != NULL;
}

bool of_act_set_mac(struct of_actions *a, uint8_t field, const uint8_t mac[6])
{
	struct of_action *x = append(a, OF_ACT_SET_FIELD);
	if (x) {
		x->field = field;
		memcpy(x->mac, mac, 6);
	}
	return x != NULL;
}

bool of_act_set_ipv6(struct of_actions *a, uint8_t field, const uint8_t addr[16])
{
	struct of_action *x = append(a, OF_ACT_SET_FIELD);
	if (x) {
		x->field = field;
		memcpy(x->addr, addr, 16);
	}
	return x != NULL;
}

bool of_act_simple(struct of_actions *a, enum of_action_type type, uint32_t arg)
{
	struct of_action *x = append(a, type);
	if (!x)
		return false;
	if (type == OF_ACT_PUSH_VLAN || type == OF_ACT_PUSH_MPLS || type == OF_ACT_POP_MPLS ||
	    type == OF_ACT_PUSH_PBB)
		x->ethertype = (uint16_t)arg;
	else if (type == OF_ACT_SET_NW_TTL || type == OF_ACT_SET_MPLS_TTL)
		x->value = arg & 0xff;
	else if (type == OF_ACT_SET_QUEUE || type == OF_ACT_GROUP)
		x->value = arg;
	return true;
}
