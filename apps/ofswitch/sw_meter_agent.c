/*
 * apps/ofswitch/sw_meter_agent.c: the agent's side of meters: METER_MOD and the METER,
 * METER_CONFIG and METER_FEATURES multiparts (issue 25). sw_agent.c hands every parsed meter
 * message here and, after a delete, removes the flows whose meter is dead.
 *
 * Errors as OpenFlow 1.3.5 names them (METER_MOD_FAILED): a command other than ADD, MODIFY,
 * DELETE is BAD_COMMAND; an id of 0 or above OFPM_MAX (OFPM_ALL outside a DELETE, the
 * virtual SLOWPATH/CONTROLLER meters) INVALID_METER; ADD of a present id METER_EXISTS,
 * MODIFY of an absent one UNKNOWN_METER (DELETE of an absent one is no error, as a flow
 * DELETE that matches nothing); flags and bands as sw_meter_check says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"
#include "sw_meter.h"

static int fail(uint16_t *etype, uint16_t *ecode, uint16_t t, uint16_t c)
{
	*etype = t;
	*ecode = c;
	return -1;
}

static int meter_mod(struct sw_meters *ms, const struct of_meter_config *c, uint64_t now,
		     const struct sw_meter_io *io, uint16_t *etype, uint16_t *ecode)
{
	if (c->command > OFPMC_DELETE)
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_BAD_COMMAND);
	if (c->command == OFPMC_DELETE) {
		if (c->meter_id == 0 || (c->meter_id > OFPM_MAX && c->meter_id != OFPM_ALL))
			return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_INVALID_METER);
		return sw_meters_kill(ms, c->meter_id) ? 1 : 0;
	}
	if (c->meter_id == 0 || c->meter_id > OFPM_MAX)
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_INVALID_METER);
	int code = sw_meter_check(c);
	if (code)
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, (uint16_t)code);
	int rc = c->command == OFPMC_ADD ? sw_meters_add(ms, c, now)
					 : sw_meters_modify(ms, c, now, io->retire, io->ctx);
	switch (rc) {
	case 0:
		return 0;
	case -EEXIST:
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_METER_EXISTS);
	case -ENOENT:
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_UNKNOWN_METER);
	default: /* -ENOSPC, -ENOMEM */
		return fail(etype, ecode, OFPET_METER_MOD_FAILED, OFPMMFC_OUT_OF_METERS);
	}
}

static int by_id(const void *x, const void *y)
{
	uint32_t a = (*(struct sw_meter *const *)x)->id, b = (*(struct sw_meter *const *)y)->id;
	return a < b ? -1 : a > b;
}

/* The meters a STATS / CONFIG request names (id, or OFPM_ALL), ascending; *n of them.
 * NULL with *n = 0 when none (or no memory: the reply is then empty, said as such). */
static struct sw_meter **select_meters(const struct sw_meters *ms, uint32_t id, unsigned *n)
{
	*n = 0;
	struct sw_meter **v = malloc(sizeof(*v) * (ms->n ? ms->n : 1));
	if (!v)
		return NULL;
	for (unsigned b = 0; b < SW_METER_BUCKETS; b++)
		for (struct sw_meter *m = ms->bucket[b]; m; m = m->hnext)
			if ((id == OFPM_ALL || m->id == id) && *n < ms->n)
				v[(*n)++] = m;
	qsort(v, *n, sizeof(*v), by_id);
	return v;
}

/* Multipart replies: as many items as fit in one message each, OFPMPF_MORE on all but
 * the last. */
static void reply_stats(struct sw_meters *ms, uint32_t xid, uint32_t id,
			const struct sw_flow *flows, uint64_t now, const struct sw_meter_io *io)
{
	unsigned n;
	struct sw_meter **v = select_meters(ms, id, &n);
	for (unsigned i = 0; i < n; i++)
		v[i]->nflows = 0;
	for (const struct sw_flow *f = flows; f && n; f = f->next) {
		/* agent's own list: the agent wrote f->actions */
		const struct sw_actions *x = atomic_load_explicit(&f->actions, memory_order_relaxed);
		if (x && x->meter)
			x->meter->nflows++;
	}
	struct of_meter_stats items[16];
	unsigned k = 0, i = 0;
	do {
		if (i < n) {
			const struct sw_meter *m = v[i];
			const struct sw_meter_cfg *c = atomic_load_explicit(&m->cfg, memory_order_relaxed);
			struct of_meter_stats *s = &items[k];
			memset(s, 0, sizeof(*s));
			uint64_t age = now > m->created_ns ? now - m->created_ns : 0;
			s->meter_id = m->id;
			s->flow_count = m->nflows;
			s->packet_in_count = atomic_load_explicit(&m->pkts_in, memory_order_relaxed);
			s->byte_in_count = atomic_load_explicit(&m->bytes_in, memory_order_relaxed);
			s->duration_sec = (uint32_t)(age / 1000000000u);
			s->duration_nsec = (uint32_t)(age % 1000000000u);
			s->nbands = c->nbands;
			for (unsigned b = 0; b < c->nbands; b++) {
				s->band[b].packets = atomic_load_explicit(&c->band[b].pkts,
									  memory_order_relaxed);
				s->band[b].bytes = atomic_load_explicit(&c->band[b].bytes,
									memory_order_relaxed);
			}
			k++;
			i++;
		}
		bool last = i == n;
		if (last || k == 16) { /* 16 x (40 + 16 x 8) bytes: far below a message */
			ssize_t len = of_build_meter_stats_reply(io->buf, io->cap, xid,
								 last ? 0 : OFPMPF_MORE, items, k);
			if (len > 0)
				io->send(io->ctx, io->buf, (size_t)len);
			k = 0;
		}
	} while (i < n);
	free(v);
}

static void reply_config(struct sw_meters *ms, uint32_t xid, uint32_t id,
			 const struct sw_meter_io *io)
{
	unsigned n;
	struct sw_meter **v = select_meters(ms, id, &n);
	struct of_meter_config items[16];
	unsigned k = 0, i = 0;
	do {
		if (i < n) {
			const struct sw_meter_cfg *c =
				atomic_load_explicit(&v[i]->cfg, memory_order_relaxed); /* agent's own */
			items[k++] = c->wire;
			i++;
		}
		bool last = i == n;
		if (last || k == 16) { /* 16 x (8 + 8 x 16) bytes: far below a message */
			ssize_t len = of_build_meter_config_reply(io->buf, io->cap, xid,
								  last ? 0 : OFPMPF_MORE, items, k);
			if (len > 0)
				io->send(io->ctx, io->buf, (size_t)len);
			k = 0;
		}
	} while (i < n);
	free(v);
}

void sw_meter_cascade(struct sw_flow **flows, void (*unlink)(void *ctx, struct sw_flow *f),
		      void *ctx)
{
	for (struct sw_flow **pp = flows; *pp;) {
		struct sw_flow *f = *pp;
		/* the agent's own list: it wrote f->actions */
		const struct sw_actions *x = atomic_load_explicit(&f->actions, memory_order_relaxed);
		if (x && x->meter && sw_meter_dead(x->meter))
			unlink(ctx, f); /* *pp is now f's successor */
		else
			pp = &f->next;
	}
}

int sw_meter_handle(struct sw_meters *ms, const struct of_mmsg *m, const struct sw_flow *flows,
		    uint64_t now_ns, const struct sw_meter_io *io, uint16_t *etype,
		    uint16_t *ecode)
{
	switch (m->type) {
	case OF_M_METER_MOD:
		return meter_mod(ms, &m->u.mod, now_ns, io, etype, ecode);
	case OF_M_STATS_REQUEST:
		reply_stats(ms, m->xid, m->u.meter_id, flows, now_ns, io);
		return 0;
	case OF_M_CONFIG_REQUEST:
		reply_config(ms, m->xid, m->u.meter_id, io);
		return 0;
	case OF_M_FEATURES_REQUEST: {
		struct of_meter_features ft = {
			.max_meter = SW_MAX_METERS,
			.band_types = 1u << OFPMBT_DROP | 1u << OFPMBT_DSCP_REMARK,
			.capabilities = OFPMF_KBPS | OFPMF_PKTPS | OFPMF_BURST | OFPMF_STATS,
			.max_bands = SW_METER_MAX_BANDS,
			.max_color = 0,
		};
		ssize_t len = of_build_meter_features_reply(io->buf, io->cap, m->xid, &ft);
		if (len > 0)
			io->send(io->ctx, io->buf, (size_t)len);
		return 0;
	}
	default: /* replies: a switch takes none */
		return fail(etype, ecode, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE);
	}
}
