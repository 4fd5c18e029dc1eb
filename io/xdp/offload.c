/*
 * io/xdp/offload.c: the offload table of an xdp port (ringflow/offload.h) over the maps of
 * its XDP program (offload_bpf.h): entries, masks, per-CPU counters, the output devmap.
 *
 * The one idea: the kernel's maps are the table; this file only keeps the bookkeeping a
 * map cannot (which masks are in use and by how many entries, which counter slots are free,
 * which output ports each table references) under one process-wide lock, which only these
 * control calls take. Each change reaches the program as one map update, ordered so that
 * the program never sees an entry without its mask, counters or output port: mask, counters
 * and port first, entry last on add; entry first on delete.
 *
 * The port-wide fast path (rf_ofl_pw): while the port-wide entry (no field named, or WHOLE
 * alone) is in the first mask slot in use and has no DEC_TTL, every frame (every whole frame)
 * takes it, and the program runs a copy of it from a one-entry array without hashing a key
 * (or parsing the frame, but to tell it is whole). The copy is turned
 * off before a change that could make it wrong (a new mask, which may take a lower slot; the
 * entry's deletion) and set again after the table changed (pw_sync), so a frame sees either
 * the copy or the table, both right, and one processed after a call returns sees the change.
 *
 * The program keeps a per-CPU cache of the answers its mask walk gave (rf_ofl_cache, by the
 * frame's whole key), each tagged with the table's generation: a count in rf_ofl_gen, which
 * this file maps into memory and moves on after every change of an entry (gen_bump), so once
 * a call returns no frame is answered from before it.
 *
 * Counter slots are reused first-in first-out: a frame that looked an entry up just before
 * its deletion may still add to the slot's counters, and FIFO reuse keeps that slot out of a
 * new entry for as long as possible (a whole table's worth of adds).
 */
#include <errno.h>
#include <linux/types.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <ringflow/io.h>
#include <ringflow/offload.h>

#include "io/xdp/offload_bpf.h"
#include "io/xdp/offload_pvt.h"
#include "io/xdp/xsk_port.h"

_Static_assert(RF_OFL_ENTRIES == RF_OFFLOAD_MAX_ENTRIES, "offload_bpf.h and offload.h differ");
_Static_assert(RF_OFL_MASKS == RF_OFFLOAD_MAX_MASKS, "offload_bpf.h and offload.h differ");
_Static_assert(RF_OFL_ACTS == RF_OFFLOAD_MAX_ACTIONS, "offload_bpf.h and offload.h differ");
_Static_assert(RF_OFL_F_L4_DST == RF_OFFLOAD_F_L4_DST && RF_OFL_F_IP_PROTO == RF_OFFLOAD_F_IP_PROTO,
	       "field bits differ");
_Static_assert(RF_OFL_F_UNTAGGED == RF_OFFLOAD_F_UNTAGGED && RF_OFL_F_CTAG == RF_OFFLOAD_F_CTAG &&
		       RF_OFL_F_WHOLE == RF_OFFLOAD_F_WHOLE,
	       "field bits differ");
_Static_assert(RF_OFL_A_DEC_TTL == RF_OFFLOAD_DEC_TTL, "action types differ");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t), "the mapped generation is a plain __u64");

struct ofl_port {
	uint32_t ifindex, refs; /* entries of this table outputting to ifindex */
};

struct rf_xdp_ofl {
	int table_fd, masks_fd, stats_fd, misc_fd, ports_fd, pw_fd;
	bool pw_on;            /* rf_ofl_pw is on, holding pw */
	struct rf_ofl_pw pw;
	uint32_t ifindex;
	uint32_t mask[RF_OFL_MASKS], mask_refs[RF_OFL_MASKS];
	uint32_t fifo[RF_OFL_ENTRIES], fifo_head, fifo_n; /* free counter slots */
	bool used[RF_OFL_ENTRIES];
	struct ofl_port ports[RF_OFL_PORTS];
	uint64_t entries, full;
	struct rf_ofl_genv *genv; /* rf_ofl_gen's one value, mapped (gen_len bytes) */
	size_t gen_len;
	struct rf_xdp_ofl *next;
};

/* Everything below is under this lock: every table, the list, the down ports. */
static pthread_mutex_t ofl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rf_xdp_ofl *ofl_all;
static uint32_t down[RF_OFL_PORTS]; /* ifindexes marked down (0: free) */

static bool is_down(uint32_t ifindex)
{
	for (unsigned i = 0; i < RF_OFL_PORTS; i++)
		if (down[i] == ifindex)
			return true;
	return false;
}

/* The mapped generation, written with atomics (the program reads it as a plain __u64). */
static _Atomic uint64_t *gen_of(const struct rf_xdp_ofl *t)
{
	return (_Atomic uint64_t *)&t->genv->gen;
}

void rf_xdp_ofl_size(struct bpf_object *obj)
{
	struct bpf_map *cache = bpf_object__find_map_by_name(obj, "rf_ofl_cache");
	int ncpu = libbpf_num_possible_cpus();
	uint32_t slots = RF_OFL_CACHE_SLOTS;
	if (!cache || ncpu <= 0)
		return; /* the object's own size (and the load says what is wrong) */
	while (slots > RF_OFL_CACHE_MIN_SLOTS &&
	       (uint64_t)slots * sizeof(struct rf_ofl_cached) * (uint64_t)ncpu > RF_OFL_CACHE_BYTES)
		slots /= 2;
	(void)bpf_map__set_max_entries(cache, slots); /* fails only once loaded */
}

struct rf_xdp_ofl *rf_xdp_ofl_create(const struct rf_xsk_prog *prog)
{
	struct rf_xdp_ofl *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->table_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_table");
	t->masks_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_masks");
	t->stats_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_stats");
	t->misc_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_misc");
	t->ports_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_ports");
	t->pw_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_pw");
	int gen_fd = bpf_object__find_map_fd_by_name(prog->obj, "rf_ofl_gen");
	if (t->table_fd < 0 || t->masks_fd < 0 || t->stats_fd < 0 || t->misc_fd < 0 ||
	    t->ports_fd < 0 || t->pw_fd < 0 || gen_fd < 0) {
		free(t);
		return NULL;
	}
	t->gen_len = (size_t)sysconf(_SC_PAGESIZE);
	void *g = mmap(NULL, t->gen_len, PROT_READ | PROT_WRITE, MAP_SHARED, gen_fd, 0);
	if (g == MAP_FAILED) {
		free(t);
		return NULL;
	}
	t->genv = g;
	struct bpf_map *cache = bpf_object__find_map_by_name(prog->obj, "rf_ofl_cache");
	t->genv->set_mask = cache ? bpf_map__max_entries(cache) / 2 - 1 : 0;
	/* release: pairs with the program's ordered read (and publishes the set mask before
	 * it); the cache's empty slots hold 0, so 1 is the first live generation. */
	atomic_store_explicit(gen_of(t), 1, memory_order_release);
	t->ifindex = (uint32_t)prog->ifindex;
	for (uint32_t i = 0; i < RF_OFL_ENTRIES; i++)
		t->fifo[i] = i;
	t->fifo_n = RF_OFL_ENTRIES;
	pthread_mutex_lock(&ofl_lock);
	t->next = ofl_all;
	ofl_all = t;
	pthread_mutex_unlock(&ofl_lock);
	return t;
}

void rf_xdp_ofl_destroy(struct rf_xdp_ofl *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&ofl_lock);
	for (struct rf_xdp_ofl **p = &ofl_all; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	/* The port goes away: other tables' entries sending to it stop (their frames go to
	 * their apps, counted as port down), and its ifindex, which a later interface may
	 * get, is forgotten as down. */
	for (struct rf_xdp_ofl *o = ofl_all; o; o = o->next)
		for (unsigned i = 0; i < RF_OFL_PORTS; i++)
			if (o->ports[i].refs && o->ports[i].ifindex == t->ifindex)
				bpf_map_delete_elem(o->ports_fd, &t->ifindex);
	for (unsigned i = 0; i < RF_OFL_PORTS; i++)
		if (down[i] == t->ifindex)
			down[i] = 0;
	pthread_mutex_unlock(&ofl_lock);
	munmap(t->genv, t->gen_len);
	free(t); /* the maps go with the program */
}

int rf_offload_supported(struct rf_io_dev *port, char *why, size_t len)
{
	if (rf_xdp_ofl_of(port))
		return 0;
	if (why && len)
		snprintf(why, len, "offload: port '%s' has no XDP fast path: only ports of the xdp "
			 "driver have one (open it as xdp:dev=IFACE,frames=1); running without "
			 "offload", port ? rf_io_spec(port) : "(none)");
	return -ENOTSUP;
}

/* ---- keys and values ------------------------------------------------------------------ */

static int make_key(const struct rf_xdp_ofl *t, const struct rf_offload_match *m,
		    struct rf_ofl_key *k)
{
	uint32_t f = m->fields;
	bool v4 = f & (RF_OFFLOAD_F_IP4_SRC | RF_OFFLOAD_F_IP4_DST);
	bool v6 = f & (RF_OFFLOAD_F_IP6_SRC | RF_OFFLOAD_F_IP6_DST);

	bool untagged = f & RF_OFFLOAD_F_UNTAGGED;
	if ((f & ~RF_OFFLOAD_F_ALL) || (v4 && v6) || m->vlan > 4095 ||
	    (untagged && (f & (RF_OFFLOAD_F_VLAN | RF_OFFLOAD_F_CTAG))))
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->fields = f;
	k->in_ifindex = t->ifindex;
	if (f & RF_OFFLOAD_F_ETH_DST)
		memcpy(k->eth_dst, m->eth_dst, 6);
	if (f & RF_OFFLOAD_F_ETH_SRC)
		memcpy(k->eth_src, m->eth_src, 6);
	if (f & RF_OFFLOAD_F_VLAN)
		k->vlan = m->vlan;
	if (f & RF_OFFLOAD_F_ETH_TYPE)
		k->eth_type = (uint16_t)(m->eth_type >> 8 | m->eth_type << 8);
	if (f & RF_OFFLOAD_F_IP4_SRC)
		memcpy(k->ip_src, m->ip4_src, 4);
	if (f & RF_OFFLOAD_F_IP4_DST)
		memcpy(k->ip_dst, m->ip4_dst, 4);
	if (f & RF_OFFLOAD_F_IP6_SRC)
		memcpy(k->ip_src, m->ip6_src, 16);
	if (f & RF_OFFLOAD_F_IP6_DST)
		memcpy(k->ip_dst, m->ip6_dst, 16);
	if (f & RF_OFFLOAD_F_IP_PROTO)
		k->ip_proto = m->ip_proto;
	if (f & RF_OFFLOAD_F_L4_SRC)
		k->l4_src = (uint16_t)(m->l4_src >> 8 | m->l4_src << 8);
	if (f & RF_OFFLOAD_F_L4_DST)
		k->l4_dst = (uint16_t)(m->l4_dst >> 8 | m->l4_dst << 8);
	return 0;
}

/* The action list as the program runs it; *out: the OUTPUT ifindex or 0. */
static int make_val(const struct rf_offload_action *a, unsigned n, struct rf_ofl_val *v,
		    uint32_t *out)
{
	unsigned ttl = 0;

	if (!a || n == 0 || n > RF_OFL_ACTS)
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->n = n;
	*out = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rf_ofl_act *d = &v->a[i];
		bool last = i == n - 1;
		d->type = (uint8_t)a[i].type;
		switch (a[i].type) {
		case RF_OFFLOAD_OUTPUT: {
			struct rf_xdp_ofl *o = rf_xdp_ofl_of(a[i].port);
			if (!last || !o)
				return -EINVAL;
			d->ifindex = *out = o->ifindex;
			break;
		}
		case RF_OFFLOAD_DROP:
			if (!last)
				return -EINVAL;
			break;
		case RF_OFFLOAD_SET_ETH_SRC:
		case RF_OFFLOAD_SET_ETH_DST:
			memcpy(d->mac, a[i].mac, 6);
			break;
		case RF_OFFLOAD_PUSH_VLAN: {
			uint16_t tci = (uint16_t)(a[i].pcp << 13 | a[i].vlan);
			if (a[i].vlan > 4095 || a[i].pcp > 7)
				return -EINVAL;
			d->tci = (uint16_t)(tci >> 8 | tci << 8);
			break;
		}
		case RF_OFFLOAD_POP_VLAN:
			break;
		case RF_OFFLOAD_DEC_TTL:
			if (++ttl > 1)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
		if (last && a[i].type != RF_OFFLOAD_OUTPUT && a[i].type != RF_OFFLOAD_DROP)
			return -EINVAL;
	}
	return 0;
}

/* ---- output ports (devmap), masks, counter slots: under ofl_lock ---------------------- */

static int port_ref(struct rf_xdp_ofl *t, uint32_t ifindex)
{
	struct ofl_port *fr = NULL;
	if (ifindex == 0)
		return 0;
	for (unsigned i = 0; i < RF_OFL_PORTS; i++) {
		if (t->ports[i].ifindex == ifindex) {
			t->ports[i].refs++;
			return 0;
		}
		if (!fr && t->ports[i].refs == 0)
			fr = &t->ports[i];
	}
	if (!fr)
		return -ENOSPC;
	if (!is_down(ifindex) && bpf_map_update_elem(t->ports_fd, &ifindex, &ifindex, BPF_ANY) != 0)
		return -errno;
	fr->ifindex = ifindex;
	fr->refs = 1;
	return 0;
}

static void port_unref(struct rf_xdp_ofl *t, uint32_t ifindex)
{
	for (unsigned i = 0; ifindex && i < RF_OFL_PORTS; i++)
		if (t->ports[i].ifindex == ifindex && t->ports[i].refs > 0) {
			if (--t->ports[i].refs == 0) {
				bpf_map_delete_elem(t->ports_fd, &ifindex);
				t->ports[i].ifindex = 0;
			}
			return;
		}
}

/* Write slot i of the masks (the program reads all of them as one map value; the other
 * slots are rewritten with the values they have). 0 or -1 with errno. */
static int masks_publish(struct rf_xdp_ofl *t, uint32_t i, uint32_t v)
{
	struct rf_ofl_masks m;
	uint32_t zero = 0;
	for (uint32_t j = 0; j < RF_OFL_MASKS; j++)
		m.m[j] = t->mask_refs[j] ? t->mask[j] | RF_OFL_MASK_USED : 0;
	m.m[i] = v;
	return bpf_map_update_elem(t->masks_fd, &zero, &m, BPF_ANY);
}

/* The slot in use for mask fields, or -1. */
static int mask_find(const struct rf_xdp_ofl *t, uint32_t fields)
{
	for (uint32_t i = 0; i < RF_OFL_MASKS; i++)
		if (t->mask_refs[i] && t->mask[i] == fields)
			return (int)i;
	return -1;
}

/* The mask slot for fields (taken, published when new), or -ENOSPC. */
static int mask_ref(struct rf_xdp_ofl *t, uint32_t fields)
{
	int fr = mask_find(t, fields);
	if (fr >= 0) {
		t->mask_refs[fr]++;
		return fr;
	}
	for (fr = 0; fr < RF_OFL_MASKS && t->mask_refs[fr] != 0; fr++) /* the first free slot */
		;
	if (fr == RF_OFL_MASKS)
		return -ENOSPC;
	if (masks_publish(t, (uint32_t)fr, fields | RF_OFL_MASK_USED) != 0)
		return -errno;
	t->mask[fr] = fields;
	t->mask_refs[fr] = 1;
	return fr;
}

static void mask_unref(struct rf_xdp_ofl *t, uint32_t fields)
{
	int i = mask_find(t, fields);
	if (i >= 0 && --t->mask_refs[i] == 0)
		masks_publish(t, (uint32_t)i, 0);
}

/* The port-wide fast path (file comment). Off: the program looks every frame up. 0 or
 * -errno (the copy stays on: the caller must not change the table). */
static int pw_off(struct rf_xdp_ofl *t)
{
	struct rf_ofl_pw pw = {0};
	uint32_t zero = 0;
	if (!t->pw_on)
		return 0;
	if (bpf_map_update_elem(t->pw_fd, &zero, &pw, BPF_ANY) != 0)
		return -errno;
	t->pw_on = false;
	return 0;
}

/* A mask the port-wide fast path can stand for: no field, or WHOLE alone. */
static bool pw_mask(uint32_t fields)
{
	return fields == 0 || fields == RF_OFL_F_WHOLE;
}

/* On with the port-wide entry's value when it sits in the first mask slot in use and has no
 * DEC_TTL; off otherwise. Writes the map only when that changes. */
static void pw_sync(struct rf_xdp_ofl *t)
{
	struct rf_ofl_pw pw = {.on = 1};
	struct rf_ofl_key k = {.fields = 0, .in_ifindex = t->ifindex};
	uint32_t zero = 0, i = 0;
	bool want;

	while (i < RF_OFL_MASKS && t->mask_refs[i] == 0)
		i++;
	if (i < RF_OFL_MASKS)
		k.fields = t->mask[i];
	pw.whole = k.fields == RF_OFL_F_WHOLE;
	want = i < RF_OFL_MASKS && pw_mask(k.fields) &&
	       bpf_map_lookup_elem(t->table_fd, &k, &pw.v) == 0;
	for (uint32_t a = 0; want && a < pw.v.n && a < RF_OFL_ACTS; a++)
		want = pw.v.a[a].type != RF_OFL_A_DEC_TTL;
	if (!want) {
		pw_off(t); /* an update of a one-entry array fails only on bad arguments */
		return;
	}
	if (t->pw_on && memcmp(&t->pw, &pw, sizeof(pw)) == 0)
		return;
	if (bpf_map_update_elem(t->pw_fd, &zero, &pw, BPF_ANY) == 0) {
		t->pw_on = true;
		t->pw = pw;
	} else {
		pw_off(t); /* the table alone is always right */
	}
}

/* Sum (or zero, when zero is true) one slot's per-CPU counters. */
static int slot_ctr(struct rf_xdp_ofl *t, uint32_t slot, struct rf_ofl_ctr *sum, bool zero)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rf_ofl_ctr *pc;
	int rc = 0;

	if (ncpu <= 0)
		return -EINVAL;
	pc = calloc((size_t)ncpu, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	if (zero) {
		if (bpf_map_update_elem(t->stats_fd, &slot, pc, BPF_ANY) != 0)
			rc = -errno;
	} else if (bpf_map_lookup_elem(t->stats_fd, &slot, pc) != 0) {
		rc = -errno;
	} else {
		memset(sum, 0, sizeof(*sum));
		for (int i = 0; i < ncpu; i++) {
			sum->hits += pc[i].hits;
			sum->bytes += pc[i].bytes;
		}
	}
	free(pc);
	return rc;
}

/* ---- the API ---------------------------------------------------------------------------- */

static int add_entry(struct rf_xdp_ofl *t, const struct rf_ofl_key *k, struct rf_ofl_val *v,
		     uint32_t out)
{
	struct rf_ofl_val old;
	uint32_t slot;
	int rc, mi;

	if (bpf_map_lookup_elem(t->table_fd, k, &old) == 0)
		return -EEXIST;
	if (t->fifo_n == 0 || t->entries >= RF_OFL_ENTRIES) {
		t->full++;
		return -ENOSPC;
	}
	if (mask_find(t, k->fields) < 0 && (rc = pw_off(t)) != 0)
		return rc; /* a new mask may take a slot before the port-wide one's */
	mi = mask_ref(t, k->fields);
	if (mi < 0) {
		if (mi == -ENOSPC)
			t->full++;
		return mi;
	}
	if ((rc = port_ref(t, out)) != 0)
		goto unmask;
	slot = t->fifo[t->fifo_head];
	if ((rc = slot_ctr(t, slot, NULL, true)) != 0)
		goto unport;
	v->slot = slot;
	/* Last: from here on the program may run the entry (mask, port, counters are ready). */
	if (bpf_map_update_elem(t->table_fd, k, v, BPF_NOEXIST) != 0) {
		rc = -errno;
		if (rc == -E2BIG || rc == -ENOMEM) {
			t->full++;
			rc = -ENOSPC;
		}
		goto unport;
	}
	t->fifo_head = (t->fifo_head + 1) % RF_OFL_ENTRIES;
	t->fifo_n--;
	t->used[slot] = true;
	t->entries++;
	return 0;
unport:
	port_unref(t, out);
unmask:
	mask_unref(t, k->fields);
	return rc;
}

static int del_entry(struct rf_xdp_ofl *t, const struct rf_ofl_key *k)
{
	struct rf_ofl_val old;
	uint32_t out = 0;

	if (bpf_map_lookup_elem(t->table_fd, k, &old) != 0)
		return -ENOENT;
	if (bpf_map_delete_elem(t->table_fd, k) != 0)
		return -errno;
	/* The entry is gone: now its mask, port and slot may go too. */
	for (uint32_t i = 0; i < old.n && i < RF_OFL_ACTS; i++)
		if (old.a[i].type == RF_OFL_A_OUTPUT)
			out = old.a[i].ifindex;
	port_unref(t, out);
	mask_unref(t, k->fields);
	if (old.slot < RF_OFL_ENTRIES && t->used[old.slot]) {
		t->used[old.slot] = false;
		t->fifo[(t->fifo_head + t->fifo_n) % RF_OFL_ENTRIES] = old.slot;
		t->fifo_n++;
	}
	t->entries--;
	return 0;
}

/* After an entry went in, out or was replaced: every answer the program cached before stops
 * counting. A mask alone changes no answer (a mask without entries finds nothing, and one
 * leaves only after its last entry), and a failed call changed no entry, so neither moves
 * the count: an app that keeps trying to add to a full table must not empty the cache of the
 * entries that are in. Only this file writes the count, under ofl_lock. */
static void gen_bump(struct rf_xdp_ofl *t)
{
	uint64_t g = atomic_load_explicit(gen_of(t), memory_order_relaxed); /* ours alone */
	/* release: pairs with the program's fully ordered read of the count before its mask
	 * walk: a walk that starts after it sees the new count and the change made before. */
	atomic_store_explicit(gen_of(t), g + 1, memory_order_release);
}

/* add_entry and del_entry with the port-wide fast path and the cache kept equal to the table. */
static int add_locked(struct rf_xdp_ofl *t, const struct rf_ofl_key *k, struct rf_ofl_val *v,
		      uint32_t out)
{
	int rc = add_entry(t, k, v, out);
	if (rc == 0)
		gen_bump(t);
	pw_sync(t);
	return rc;
}

static int del_locked(struct rf_xdp_ofl *t, const struct rf_ofl_key *k)
{
	int rc = pw_mask(k->fields) ? pw_off(t) : 0; /* before the entry goes */
	if (rc != 0)
		return rc;
	rc = del_entry(t, k);
	if (rc == 0)
		gen_bump(t);
	pw_sync(t);
	return rc;
}

int rf_offload_add(struct rf_io_dev *in, const struct rf_offload_match *m,
		   const struct rf_offload_action *acts, unsigned n)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	struct rf_ofl_key k;
	struct rf_ofl_val v;
	uint32_t out;
	int rc;

	if (!t)
		return -ENOTSUP;
	if (!m || (rc = make_key(t, m, &k)) != 0 || (rc = make_val(acts, n, &v, &out)) != 0)
		return -EINVAL;
	pthread_mutex_lock(&ofl_lock);
	rc = add_locked(t, &k, &v, out);
	pthread_mutex_unlock(&ofl_lock);
	return rc;
}

int rf_offload_replace(struct rf_io_dev *in, const struct rf_offload_match *m,
		       const struct rf_offload_action *acts, unsigned n)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	struct rf_ofl_key k;
	struct rf_ofl_val v, old;
	uint32_t out, old_out = 0;
	int rc;

	if (!t)
		return -ENOTSUP;
	if (!m || make_key(t, m, &k) != 0 || make_val(acts, n, &v, &out) != 0)
		return -EINVAL;
	pthread_mutex_lock(&ofl_lock);
	if (bpf_map_lookup_elem(t->table_fd, &k, &old) != 0) {
		rc = -ENOENT;
		goto out;
	}
	for (uint32_t i = 0; i < old.n && i < RF_OFL_ACTS; i++)
		if (old.a[i].type == RF_OFL_A_OUTPUT)
			old_out = old.a[i].ifindex;
	if ((rc = port_ref(t, out)) != 0)
		goto out;
	v.slot = old.slot; /* the counters carry on */
	if (bpf_map_update_elem(t->table_fd, &k, &v, BPF_EXIST) != 0) {
		rc = -errno;
		port_unref(t, out);
		goto out;
	}
	gen_bump(t);
	pw_sync(t); /* the port-wide entry's copy, if that is the one replaced */
	port_unref(t, old_out);
out:
	pthread_mutex_unlock(&ofl_lock);
	return rc;
}

int rf_offload_del(struct rf_io_dev *in, const struct rf_offload_match *m)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	struct rf_ofl_key k;
	int rc;

	if (!t)
		return -ENOTSUP;
	if (!m || make_key(t, m, &k) != 0)
		return -EINVAL;
	pthread_mutex_lock(&ofl_lock);
	rc = del_locked(t, &k);
	pthread_mutex_unlock(&ofl_lock);
	return rc;
}

int rf_offload_flush(struct rf_io_dev *in)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	struct rf_ofl_key k, next;
	int n = 0;

	if (!t)
		return -ENOTSUP;
	pthread_mutex_lock(&ofl_lock);
	/* Deleting the key just visited is safe: get_next_key restarts from the first. */
	while (bpf_map_get_next_key(t->table_fd, NULL, &next) == 0) {
		k = next;
		if (del_locked(t, &k) != 0)
			break;
		n++;
	}
	pthread_mutex_unlock(&ofl_lock);
	return n;
}

int rf_offload_stats(struct rf_io_dev *in, const struct rf_offload_match *m, uint64_t *hits,
		     uint64_t *bytes)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	struct rf_ofl_key k;
	struct rf_ofl_val v;
	struct rf_ofl_ctr c;
	int rc;

	if (!t)
		return -ENOTSUP;
	if (!m || make_key(t, m, &k) != 0)
		return -EINVAL;
	pthread_mutex_lock(&ofl_lock);
	rc = bpf_map_lookup_elem(t->table_fd, &k, &v) != 0 ? -ENOENT : slot_ctr(t, v.slot, &c, false);
	pthread_mutex_unlock(&ofl_lock);
	if (rc == 0) {
		if (hits)
			*hits = c.hits;
		if (bytes)
			*bytes = c.bytes;
	}
	return rc;
}

/* Counters first .. first + n - 1 of rf_ofl_misc, each summed over the CPUs into sum[]:
 * 0 or -errno. One buffer for all of them. */
static int misc_sums(const struct rf_xdp_ofl *t, uint32_t first, unsigned n, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus(), rc = 0;
	uint64_t *v;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return -ENOMEM;
	for (unsigned k = 0; k < n && rc == 0; k++) {
		uint32_t i = first + k;
		sum[k] = 0;
		if (bpf_map_lookup_elem(t->misc_fd, &i, v) != 0)
			rc = -errno;
		for (int c = 0; c < ncpu && rc == 0; c++)
			sum[k] += v[c];
	}
	free(v);
	return rc;
}

/* The pairs read together below sit next to each other in rf_ofl_misc. */
_Static_assert(RF_OFL_MISC_TTL == RF_OFL_MISC_PORT_DOWN + 1, "fallback counters adjacent");
_Static_assert(RF_OFL_MISC_WALK == RF_OFL_MISC_CACHE_HIT + 1, "cache counters adjacent");

int rf_offload_totals(struct rf_io_dev *in, struct rf_offload_totals *tot)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	int rc = 0;

	if (!t)
		return -ENOTSUP;
	memset(tot, 0, sizeof(*tot));
	pthread_mutex_lock(&ofl_lock);
	tot->entries = t->entries;
	tot->full = t->full;
	for (uint32_t s = 0; s < RF_OFL_ENTRIES && rc == 0; s++) {
		struct rf_ofl_ctr c = {0};
		if (!t->used[s])
			continue;
		rc = slot_ctr(t, s, &c, false);
		tot->hits += c.hits;
		tot->bytes += c.bytes;
	}
	uint64_t fb[2] = {0, 0}; /* port down, TTL */
	if (rc == 0)
		rc = misc_sums(t, RF_OFL_MISC_PORT_DOWN, 2, fb);
	tot->fallback_port_down = fb[0];
	tot->fallback_ttl = fb[1];
	pthread_mutex_unlock(&ofl_lock);
	return rc;
}

int rf_offload_cache_counts(struct rf_io_dev *in, uint64_t *hits, uint64_t *walks)
{
	struct rf_xdp_ofl *t = rf_xdp_ofl_of(in);
	uint64_t hw[2]; /* cache hits, walks */
	int rc;

	if (!t)
		return -ENOTSUP;
	rc = misc_sums(t, RF_OFL_MISC_CACHE_HIT, 2, hw);
	if (rc == 0 && hits)
		*hits = hw[0];
	if (rc == 0 && walks)
		*walks = hw[1];
	return rc;
}

int rf_offload_port_state(struct rf_io_dev *port, bool up)
{
	struct rf_xdp_ofl *p = rf_xdp_ofl_of(port);
	uint32_t ifx;
	int rc = 0;

	if (!p)
		return -ENOTSUP;
	ifx = p->ifindex;
	pthread_mutex_lock(&ofl_lock);
	for (unsigned i = 0; i < RF_OFL_PORTS; i++) {
		if (up && down[i] == ifx)
			down[i] = 0;
	}
	if (!up && !is_down(ifx)) {
		unsigned i = 0;
		while (i < RF_OFL_PORTS && down[i] != 0)
			i++;
		if (i == RF_OFL_PORTS)
			rc = -ENOSPC;
		else
			down[i] = ifx;
	}
	for (struct rf_xdp_ofl *t = ofl_all; t && rc == 0; t = t->next)
		for (unsigned i = 0; i < RF_OFL_PORTS; i++) {
			if (t->ports[i].refs == 0 || t->ports[i].ifindex != ifx)
				continue;
			if (up && bpf_map_update_elem(t->ports_fd, &ifx, &ifx, BPF_ANY) != 0)
				rc = -errno;
			if (!up)
				bpf_map_delete_elem(t->ports_fd, &ifx); /* absent already: fine */
		}
	pthread_mutex_unlock(&ofl_lock);
	return rc;
}

int rf_offload_link_sync(struct rf_io_dev *port)
{
	if (!rf_xdp_ofl_of(port))
		return -ENOTSUP;
	return rf_offload_port_state(port, rf_io_link_up(port) == 1);
}
