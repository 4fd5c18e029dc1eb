/*
 * apps/ofswitch/sw_tables.c: what the agent says about the pipeline's SW_N_TABLES tables
 * (issue 25): the TABLE stats (per table: flows, lookups, matches) and the TABLE_FEATURES
 * reply (per table: the instructions, next tables, actions and fields it takes).
 */
#include <string.h>

#include "sw.h"

void sw_tables_stats(const struct sw_dp *dp, const struct sw_flow *flows,
		     struct of_table_stats out[SW_N_TABLES])
{
	uint64_t rx = 0, shrt = 0;
	memset(out, 0, SW_N_TABLES * sizeof(out[0]));
	for (unsigned t = 0; t < SW_N_TABLES; t++)
		out[t].table_id = (uint8_t)t;
	for (unsigned i = 0; i < dp->ncores; i++) {
		const struct sw_core *k = &dp->cores[i];
		/* acquire: pairs with sw_dp_poll's release store of tmatch[0] (made after rx):
		 * the rx read below counts every frame of the hits read here. */
		out[0].matched_count += atomic_load_explicit(&k->tmatch[0], memory_order_acquire);
		/* relaxed (the rest): statistics only */
		rx += atomic_load_explicit(&k->rx, memory_order_relaxed);
		shrt += atomic_load_explicit(&k->drop_short, memory_order_relaxed);
		for (unsigned t = 1; t < SW_N_TABLES; t++) {
			out[t].lookup_count += atomic_load_explicit(&k->tlookup[t], memory_order_relaxed);
			out[t].matched_count += atomic_load_explicit(&k->tmatch[t], memory_order_relaxed);
		}
	}
	/* Table 0 sees every frame parsed into a key (all but the short ones); the pollers count
	 * a short frame before the burst's rx: clamp a read that fell in between. Later tables:
	 * a match counted before its lookup is read the same way. */
	out[0].lookup_count = rx > shrt ? rx - shrt : 0;
	if (out[0].matched_count > out[0].lookup_count)
		out[0].lookup_count = out[0].matched_count;
	for (unsigned t = 1; t < SW_N_TABLES; t++)
		if (out[t].matched_count > out[t].lookup_count)
			out[t].matched_count = out[t].lookup_count;
	for (const struct sw_flow *f = flows; f; f = f->next)
		if (f->table_id < SW_N_TABLES)
			out[f->table_id].active_count++;
}

static uint8_t *put_be(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return p + n;
}

/* One property: type, then n items of isz bytes each, padded to 8. */
static uint8_t *put_prop(uint8_t *p, uint16_t type, const uint32_t *items, unsigned n,
			 unsigned isz)
{
	unsigned len = 4 + n * isz;
	p = put_be(p, type, 2);
	p = put_be(p, len, 2);
	for (unsigned i = 0; i < n; i++)
		p = put_be(p, items[i], isz);
	unsigned pad = (8 - len % 8) % 8;
	memset(p, 0, pad);
	return p + pad;
}

/* Action headers (type, len 4): OUTPUT, COPY_TTL_OUT/IN, SET/DEC_MPLS_TTL, PUSH/POP_VLAN,
 * PUSH/POP_MPLS, SET_QUEUE, SET/DEC_NW_TTL, SET_FIELD, PUSH/POP_PBB. */
static const uint32_t acts[] = {0x00000004, 0x000b0004, 0x000c0004, 0x000f0004, 0x00100004,
				0x00110004, 0x00120004, 0x00130004, 0x00140004, 0x00150004,
				0x00170004, 0x00180004, 0x00190004, 0x001a0004, 0x001b0004};
/* The fields a SET_FIELD may set (of_action.c): eth_dst/src, vlan_vid/pcp, ip_dscp/ecn,
 * ipv4, tcp, udp, sctp, icmpv4, arp, ipv6 src/dst/flabel, icmpv6, nd target/sll/tll, mpls,
 * pbb_isid, tunnel_id. */
static const uint32_t setf[] = {
	0x80000606, 0x80000806, 0x80000c02, 0x80000e01, 0x80001001, 0x80001201, 0x80001604,
	0x80001804, 0x80001a02, 0x80001c02, 0x80001e02, 0x80002002, 0x80002202, 0x80002402,
	0x80002601, 0x80002801, 0x80002a02, 0x80002c04, 0x80002e04, 0x80003006, 0x80003206,
	0x80003410, 0x80003610, 0x80003804, 0x80003a01, 0x80003c01, 0x80003e10, 0x80004006,
	0x80004206, 0x80004404, 0x80004601, 0x80004801, 0x80004a03, 0x80004c08, /* pbb_isid,
										   tunnel_id */
};
/* OXM headers without the HM bit: OVS refuses a TABLE_FEATURES reply whose MATCH property
 * has masked headers (OFPBMC_BAD_MASK), so which fields take a mask is not said here
 * (docs/switch.md lists them). The fields sw_match.c keys on, metadata, and those
 * matched outside the key (sw_xmatch.c). */
static const uint32_t oxm[] = {
	0x80000004, 0x80000408, 0x80000606, 0x80000806, 0x80000a02, 0x80000c02, /* ..vlan_vid */
	0x80000e01, 0x80001001, 0x80001201, 0x80001401, 0x80001604, /* pcp..ipv4_src */
	0x80001804, 0x80001a02, 0x80001c02, 0x80001e02, 0x80002002, /* ipv4_dst, tcp, udp */
	0x80002202, 0x80002402, 0x80002601, 0x80002801, 0x80002a02, /* sctp, icmp, arp_op */
	0x80002c04, 0x80002e04, 0x80003006, 0x80003206, 0x80003410, /* arp..ipv6_src */
	0x80003610, 0x80003804, 0x80003a01, 0x80003c01, 0x80004404, /* ipv6..mpls_label */
	0x80004601, 0x80004801,                                     /* mpls_tc, mpls_bos */
	0x80000204, 0x80003e10, 0x80004006, 0x80004206, /* in_phy_port, nd target/sll/tll */
	0x80004a03, 0x80004c08, 0x80004e02,             /* pbb_isid, tunnel_id, ipv6_exthdr */
};
#define N(a) (unsigned)(sizeof(a) / sizeof((a)[0]))

/* One table's ofp_table_features at p. */
static uint8_t *one_table(uint8_t *p, unsigned t)
{
	/* GOTO_TABLE (not in the last table), WRITE_METADATA, WRITE_, APPLY_, CLEAR_ACTIONS,
	 * METER */
	static const uint32_t instr_goto[] = {0x00010004, 0x00020004, 0x00030004, 0x00040004,
					      0x00050004, 0x00060004};
	uint32_t next[SW_N_TABLES];
	unsigned nnext = 0;
	for (unsigned n = t + 1; n < SW_N_TABLES; n++)
		next[nnext++] = n;
	uint8_t *start = p;
	memset(p, 0, 64);
	put_be(p + 2, t, 1);
	memcpy(p + 8, "classifier", 10);
	put_be(p + 40, ~0ull, 8); /* metadata_match: every bit */
	put_be(p + 48, ~0ull, 8); /* metadata_write: every bit */
	put_be(p + 60, SW_MAX_FLOWS, 4); /* max_entries (shared by the tables) */
	p += 64;
	bool last = t + 1 == SW_N_TABLES;
	p = put_prop(p, 0, last ? instr_goto + 1 : instr_goto, last ? 5 : 6, 4); /* INSTRUCTIONS */
	p = put_prop(p, 2, next, nnext, 1);            /* NEXT_TABLES */
	p = put_prop(p, 4, acts, N(acts), 4);          /* WRITE_ACTIONS */
	p = put_prop(p, 6, acts, N(acts), 4);          /* APPLY_ACTIONS */
	p = put_prop(p, 8, oxm, N(oxm), 4);            /* MATCH */
	p = put_prop(p, 10, oxm, N(oxm), 4);           /* WILDCARDS */
	p = put_prop(p, 12, setf, N(setf), 4);         /* WRITE_SETFIELD */
	p = put_prop(p, 14, setf, N(setf), 4);         /* APPLY_SETFIELD */
	put_be(start, (uint64_t)(p - start), 2);
	return p;
}

size_t sw_tables_features(uint8_t *buf, size_t cap, uint32_t xid)
{
	/* A table takes 64 + 8 properties of at most 8 + 4 * 39 bytes each: 1.2 KiB. */
	if (cap < 16 + SW_N_TABLES * 1280)
		return 0;
	uint8_t *p = buf + 16;
	for (unsigned t = 0; t < SW_N_TABLES; t++)
		p = one_table(p, t);
	size_t total = (size_t)(p - buf);
	memset(buf, 0, 16);
	put_be(buf, OF_VERSION_1_3, 1);
	put_be(buf + 1, 19, 1); /* MULTIPART_REPLY */
	put_be(buf + 2, total, 2);
	put_be(buf + 4, xid, 4);
	put_be(buf + 8, 12, 2); /* OFPMP_TABLE_FEATURES */
	return total;
}
