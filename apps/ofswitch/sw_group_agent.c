/*
 * apps/ofswitch/sw_group_agent.c: the agent's group messages: GROUP_MOD (parsed by
 * of_group.c, carried out by sw_group.c) and the GROUP, GROUP_DESC and GROUP_FEATURES
 * multiparts, in as many reply messages as they take (OFPMPF_MORE on all but the last).
 * ref_count is the number of flows and groups that forward to the group directly.
 */
#include <errno.h>
#include <string.h>

#include "sw_group.h"

#define MP_HDR 16

static uint32_t ref_count(const struct sw_groups *g, const struct sw_flow *flows, uint32_t id)
{
	uint32_t n = 0;
	for (const struct sw_flow *f = flows; f; f = f->next)
		n += sw_group_named(atomic_load_explicit(&((struct sw_flow *)f)->actions,
							 memory_order_relaxed), id); /* ours */
	for (unsigned s = 0; s < SW_MAX_GROUPS; s++) {
		const struct sw_group *o =
			atomic_load_explicit(&((struct sw_groups *)g)->slot[s], memory_order_relaxed);
		bool named = false;
		for (unsigned i = 0; o && i < o->nb; i++)
			named = named || sw_group_named(&o->b[i].acts, id);
		n += named;
	}
	return n;
}

/* The GROUP stats of grp into p (cap bytes): bytes written or -ENOBUFS. */
static ssize_t stats_put(const struct sw_groups *g, const struct sw_flow *flows,
			 const struct sw_group *grp, uint64_t now, uint8_t *p, size_t cap)
{
	uint64_t bp[SW_GROUP_MAX_BUCKETS] = {0}, bb[SW_GROUP_MAX_BUCKETS] = {0};
	struct of_group_stats s = {.group_id = grp->id, .nbuckets = grp->nb,
				   .bucket_pkts = bp, .bucket_bytes = bb};
	unsigned nc = g->dp->ncores ? g->dp->ncores : 1;
	for (unsigned c = 0; c < nc; c++) {
		const struct sw_group_ctr *x = &grp->ctr[c];
		s.packet_count += atomic_load_explicit(&x->pkts, memory_order_relaxed);
		s.byte_count += atomic_load_explicit(&x->bytes, memory_order_relaxed);
		for (unsigned i = 0; i < grp->nb; i++) {
			bp[i] += atomic_load_explicit(&x->bpkts[i], memory_order_relaxed);
			bb[i] += atomic_load_explicit(&x->bbytes[i], memory_order_relaxed);
		}
	}
	s.ref_count = ref_count(g, flows, grp->id);
	uint64_t age = now - grp->created_ns;
	s.duration_sec = (uint32_t)(age / 1000000000u);
	s.duration_nsec = (uint32_t)(age % 1000000000u);
	return of_group_stats_put(p, cap, &s);
}

/* The GROUP_DESC of grp into p: bytes written, -ENOBUFS or -EINVAL. */
static ssize_t desc_put(const struct sw_group *grp, uint8_t *p, size_t cap)
{
	struct of_bucket ob[SW_GROUP_MAX_BUCKETS];
	for (unsigned i = 0; i < grp->nb; i++) {
		ob[i].weight = grp->b[i].weight;
		ob[i].watch_port = grp->b[i].watch_port;
		ob[i].watch_group = grp->b[i].watch_group;
		sw_actions_to_of(&grp->b[i].acts, &ob[i].actions);
	}
	struct of_group_desc d = {.type = grp->type, .group_id = grp->id, .nbuckets = grp->nb,
				  .buckets = ob};
	return of_group_desc_put(p, cap, &d);
}

void sw_group_multipart(const struct sw_groups *g, const struct sw_flow *flows,
			uint16_t mp_type, uint32_t group_id, uint32_t xid, uint64_t now_ns,
			uint8_t *buf, void (*send)(void *ctx, const uint8_t *b, size_t n),
			void *ctx)
{
	size_t len = MP_HDR;
	of_group_mp_begin(buf, xid, mp_type);
	if (mp_type == OFPMP13_GROUP_FEATURES) {
		struct of_group_features gf = {
			.types = 1u << OFPGT_ALL | 1u << OFPGT_SELECT | 1u << OFPGT_INDIRECT |
				 1u << OFPGT_FF,
			.capabilities = OFPGFC_SELECT_WEIGHT | OFPGFC_SELECT_LIVENESS |
					OFPGFC_CHAINING | OFPGFC_CHAINING_CHECKS,
		};
		/* Every action this switch runs, in a bucket of any type. */
		uint32_t acts = 1u << 0 | 1u << 11 | 1u << 12 | 1u << 15 | 1u << 16 | 1u << 17 |
				1u << 18 | 1u << 19 | 1u << 20 | 1u << 21 | 1u << OFPAT_GROUP |
				1u << 23 | 1u << 24 | 1u << 25 | 1u << 26 | 1u << 27;
		for (unsigned t = 0; t < 4; t++) {
			gf.max_groups[t] = SW_MAX_GROUPS;
			gf.actions[t] = acts;
		}
		len += (size_t)of_group_features_put(buf + len, OF_MAX_MSG_LEN - len, &gf);
		of_group_mp_end(buf, len, false);
		send(ctx, buf, len);
		return;
	}
	for (unsigned s = 0; s < SW_MAX_GROUPS; s++) {
		const struct sw_group *grp =
			atomic_load_explicit(&((struct sw_groups *)g)->slot[s], memory_order_relaxed);
		if (!grp || (group_id != OFPG_ALL && grp->id != group_id))
			continue;
		for (int tries = 0; tries < 2; tries++) {
			ssize_t n = mp_type == OFPMP13_GROUP
					    ? stats_put(g, flows, grp, now_ns, buf + len,
							OF_MAX_MSG_LEN - len)
					    : desc_put(grp, buf + len, OF_MAX_MSG_LEN - len);
			if (n >= 0) {
				len += (size_t)n;
				break;
			}
			if (n != -ENOBUFS || len == MP_HDR)
				break; /* cannot be expressed: left out */
			of_group_mp_end(buf, len, true); /* full: this part, then a new one */
			send(ctx, buf, len);
			len = MP_HDR;
			of_group_mp_begin(buf, xid, mp_type);
		}
	}
	of_group_mp_end(buf, len, false);
	send(ctx, buf, len);
}

int sw_group_handle(struct sw_groups *g, const struct sw_flow *flows, const uint8_t *b,
		    size_t len, uint64_t now_ns, uint8_t *buf,
		    void (*send)(void *ctx, const uint8_t *b, size_t n), void *ctx, bool *deleted,
		    uint16_t *etype, uint16_t *ecode)
{
	struct of_group_mod m;
	struct of_fault f;
	uint16_t t;
	uint32_t id;
	*deleted = false;
	int r = of_group_mod_parse(b, len, &m, &f);
	if (r == 0)
		return sw_group_mod(g, &m, now_ns, deleted, etype, ecode) ? -1 : 1;
	if (r == -ENOENT)
		r = of_group_mp_parse(b, len, &t, &id, &f);
	else
		t = 0;
	if (r == -EBADMSG) {
		*etype = f.type;
		*ecode = f.code;
		return -1;
	}
	if (r != 0)
		return 0;
	sw_group_multipart(g, flows, t, id, of_get32(b + 4), now_ns, buf, send, ctx);
	return 1;
}
