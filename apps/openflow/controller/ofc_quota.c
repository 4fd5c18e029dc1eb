/*
 * apps/openflow/controller/ofc_quota.c: what each switch may put in the shared tables (the
 * learning switch's MAC table, the hosts table), owned by the handler that serves the switch.
 *
 * The one idea: every switch is served by one handler (dpid % handlers), so that handler alone
 * writes the switch's entries, and it keeps, per switch, a log of the keys the switch inserted
 * (a ring, oldest first). The log's length is the switch's count, checked against its quota
 * (a full switch stops learning new keys: counted, other switches unaffected); aging walks
 * the logs a bounded number of keys per step (an old key is deleted, a fresh one goes to the
 * back); a switch that left is moved to a "gone" list whose keys are deleted a bounded number
 * per step, after a grace of GONE_GRACE_MS (a switch that reconnects keeps what it taught;
 * only the GONE_GRACE_MAX most recent departures wait, so churn cannot pile them up). Nothing here walks a whole table, and nothing runs on the I/O poller.
 *
 * A switch that connects again while its entries are still being deleted takes its state
 * (and the keys not yet deleted) back. A key found missing from the table is dropped from
 * its log by the aging walk.
 * Handler thread only (counters are read by the REST thread and at exit).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ofc.h"
#include "ofc_app.h"

#define LEARN_BUCKETS 1024  /* dpid -> switch state, chained */
#define MAX_SWITCH_STATES 4096 /* live states per handler (far over the connection cap) */
#define STEP_MS 50          /* aging/reaping steps at most this often */
#define AGE_VISITS 2048     /* keys the aging walk looks at per step, over all switches */
#define REAP_DELETES 1024   /* keys of departed switches deleted per step */
#define GONE_GRACE_MS 5000  /* a departed switch's entries wait this long (it may come back) */
#define GONE_GRACE_MAX 16   /* ... but only the most recent ones: older go at once */

struct keylog {
	struct rf_hash *h;
	unsigned klen, cap;      /* key bytes; most keys (the quota) */
	unsigned head, n, alloc; /* a ring of alloc keys (grows by doubling up to cap) */
	uint8_t *keys;
};

struct swl {
	uint64_t dpid;
	struct swl *next; /* bucket chain, or the gone list */
	unsigned slot;    /* index in all[] */
	uint64_t gone_ms; /* when it left */
	struct keylog macs, hosts;
};

struct ofc_learn {
	struct rf_hash *macs, *hosts;
	struct ofc_net *net;
	struct ofc_learn_limits lim;
	struct swl *bucket[LEARN_BUCKETS];
	struct swl *all[MAX_SWITCH_STATES];
	unsigned n_all, cursor;
	struct swl *gone, **gone_tail; /* oldest first */
	unsigned n_gone;
	uint64_t next_step_ms;
	struct ofc_learn_stats st;
};

static void count(_Atomic uint64_t *c, uint64_t n)
{
	/* single writer (this handler), read by the REST thread */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static unsigned bucket_of(uint64_t dpid)
{
	return (unsigned)((dpid * 0x9e3779b97f4a7c15ull) >> 40) & (LEARN_BUCKETS - 1);
}

struct ofc_learn *ofc_learn_create(struct rf_hash *macs, const struct ofc_learn_limits *lim)
{
	struct ofc_learn *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->macs = macs;
	l->lim = *lim;
	l->gone_tail = &l->gone;
	return l;
}

void ofc_learn_set_hosts(struct ofc_learn *l, struct ofc_net *net)
{
	l->net = net;
	l->hosts = net ? net->hosts : NULL;
}

static void log_free(struct keylog *g)
{
	free(g->keys);
	*g = (struct keylog){0};
}

void ofc_learn_free(struct ofc_learn *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->n_all; i++) {
		log_free(&l->all[i]->macs);
		log_free(&l->all[i]->hosts);
		free(l->all[i]);
	}
	for (struct swl *s = l->gone, *nx; s; s = nx) {
		nx = s->next;
		log_free(&s->macs);
		log_free(&s->hosts);
		free(s);
	}
	free(l);
}

const struct ofc_learn_stats *ofc_learn_stats(const struct ofc_learn *l)
{
	return &l->st;
}

/* The switch's state, made on first sight; NULL when there are too many. A switch that comes
 * back while its entries are still being deleted takes its state back from the gone list
 * (else the deletion would remove what its new connection learns meanwhile). */
static struct swl *switch_of(struct ofc_learn *l, uint64_t dpid)
{
	unsigned b = bucket_of(dpid);
	for (struct swl *s = l->bucket[b]; s; s = s->next)
		if (s->dpid == dpid)
			return s;
	if (l->n_all == MAX_SWITCH_STATES)
		return NULL;
	struct swl **pp = &l->gone, *s;
	while (*pp && (*pp)->dpid != dpid)
		pp = &(*pp)->next;
	if ((s = *pp)) {
		*pp = s->next; /* back from the gone list, with its remaining keys */
		if (l->gone_tail == &s->next)
			l->gone_tail = pp;
		l->n_gone--;
	} else {
		if (!(s = calloc(1, sizeof(*s))))
			return NULL;
		s->dpid = dpid;
		s->macs = (struct keylog){.h = l->macs, .klen = OFC_MAC_KEY,
					  .cap = l->lim.macs_per_switch};
		s->hosts = (struct keylog){.h = l->hosts, .klen = OFC_HOST_KEY,
					   .cap = l->lim.hosts_per_switch};
	}
	s->next = l->bucket[b];
	l->bucket[b] = s;
	s->slot = l->n_all;
	l->all[l->n_all++] = s;
	return s;
}

static bool log_push(struct keylog *g, const uint8_t *key)
{
	if (g->n == g->alloc) {
		unsigned na = g->alloc ? 2 * g->alloc : 64;
		if (na > g->cap)
			na = g->cap;
		uint8_t *k = na > g->alloc ? malloc((size_t)na * g->klen) : NULL;
		if (!k)
			return false;
		for (unsigned i = 0; i < g->n; i++) /* oldest first, from 0 */
			memcpy(k + (size_t)i * g->klen,
			       g->keys + (size_t)((g->head + i) % g->alloc) * g->klen, g->klen);
		free(g->keys);
		g->keys = k;
		g->head = 0;
		g->alloc = na;
	}
	memcpy(g->keys + (size_t)((g->head + g->n) % g->alloc) * g->klen, key, g->klen);
	g->n++;
	return true;
}

static const uint8_t *log_head(const struct keylog *g)
{
	return g->keys + (size_t)g->head * g->klen;
}

static void log_pop(struct keylog *g)
{
	g->head = (g->head + 1) % g->alloc;
	g->n--;
}

/* The head key goes to the back (it is still fresh). */
static void log_rotate(struct keylog *g)
{
	uint8_t k[RF_HASH_KEY_MAX];
	memcpy(k, log_head(g), g->klen);
	log_pop(g);
	log_push(g, k); /* cannot fail: a slot was just freed */
}

static bool mac_stale(const struct ofc_learn *l, const uint8_t *key, void *v, uint64_t now_ms)
{
	(void)key;
	uint64_t seen_s = (uint64_t)(uintptr_t)v >> 32;
	return now_ms / 1000 > seen_s + l->lim.mac_age_ms / 1000;
}

static bool host_stale(const struct ofc_learn *l, const uint8_t *key, void *v, uint64_t now_ms)
{
	return now_ms > (uint64_t)(uintptr_t)v - 1 + l->lim.host_age_ms ||
	       ofc_links_has_end(l->net, ofc_get64(key + 6), of_get32(key + 14), now_ms);
}

/* Looks at up to `visits` keys at the head of g: a missing or stale one is dropped (deleted
 * from the table), a fresh one goes to the back. Returns the keys looked at; *deleted counts
 * the deletions. */
static unsigned log_age(const struct ofc_learn *l, struct keylog *g, unsigned visits,
			uint64_t now_ms,
			bool (*stale)(const struct ofc_learn *, const uint8_t *, void *, uint64_t),
			uint64_t *deleted)
{
	unsigned i = 0;
	for (unsigned n = g->n; i < visits && i < n; i++) {
		const uint8_t *k = log_head(g);
		void *v = rf_hash_lookup(g->h, k);
		if (!v) {
			log_pop(g);
		} else if (stale(l, k, v, now_ms)) {
			rf_hash_delete(g->h, k, NULL);
			log_pop(g);
			(*deleted)++;
		} else {
			log_rotate(g);
		}
	}
	return i;
}

/* Room for one more key in g: when full, the oldest key is looked at once (it may be stale). */
static bool log_room(const struct ofc_learn *l, struct keylog *g, uint64_t now_ms,
		     bool (*stale)(const struct ofc_learn *, const uint8_t *, void *, uint64_t),
		     uint64_t *aged)
{
	if (g->n < g->cap)
		return true;
	uint64_t d = 0;
	log_age(l, g, 1, now_ms, stale, &d);
	*aged += d;
	return g->n < g->cap;
}

int ofc_learn_mac(struct ofc_learn *l, uint64_t dpid, const uint8_t key[OFC_MAC_KEY],
		  uint32_t port, uint64_t now_ms)
{
	void *want = (void *)(uintptr_t)((now_ms / 1000) << 32 | ((uint64_t)port + 1));
	struct swl *s = switch_of(l, dpid); /* first: it may come back from the gone list */
	void *cur = rf_hash_lookup(l->macs, key);
	if (cur) { /* known: rewrite when it moved, or to refresh its age now and then */
		uint64_t c = (uint64_t)(uintptr_t)cur;
		if ((uint32_t)c != port + 1 || now_ms / 1000 >= (c >> 32) + OFC_REFRESH_S)
			rf_hash_upsert(l->macs, key, want, NULL);
		return 0;
	}
	uint64_t aged = 0;
	if (!s || !log_room(l, &s->macs, now_ms, mac_stale, &aged)) {
		count(&l->st.macs_aged, aged);
		count(&l->st.macs_refused, 1);
		return -ENOSPC;
	}
	count(&l->st.macs_aged, aged);
	int rc = rf_hash_upsert(l->macs, key, want, NULL);
	if (rc == 0 && !log_push(&s->macs, key)) {
		rf_hash_delete(l->macs, key, NULL); /* no memory for the log: not learned */
		rc = -ENOMEM;
	}
	if (rc < 0)
		count(&l->st.macs_refused, 1);
	return rc < 0 ? rc : 0;
}

int ofc_learn_host(struct ofc_learn *l, uint64_t dpid, const uint8_t key[OFC_HOST_KEY],
		   uint64_t now_ms)
{
	if (!l->hosts)
		return -EINVAL; /* no hosts table (ofc_learn_set_hosts) */
	void *want = (void *)(uintptr_t)(now_ms + 1);
	struct swl *s = switch_of(l, dpid); /* first: it may come back from the gone list */
	uint64_t seen = (uint64_t)(uintptr_t)rf_hash_lookup(l->hosts, key);
	if (seen) {
		if (now_ms >= seen - 1 + 1000) /* refreshed at most once a second */
			rf_hash_upsert(l->hosts, key, want, NULL);
		return 0;
	}
	uint64_t aged = 0;
	if (!s || !log_room(l, &s->hosts, now_ms, host_stale, &aged)) {
		count(&l->st.hosts_aged, aged);
		count(&l->st.hosts_refused, 1);
		return -ENOSPC;
	}
	count(&l->st.hosts_aged, aged);
	int rc = rf_hash_upsert(l->hosts, key, want, NULL);
	if (rc == 0 && !log_push(&s->hosts, key)) {
		rf_hash_delete(l->hosts, key, NULL);
		rc = -ENOMEM;
	}
	if (rc < 0)
		count(&l->st.hosts_refused, 1);
	return rc < 0 ? rc : 0;
}

void ofc_learn_gone(struct ofc_learn *l, uint64_t dpid, uint64_t now_ms)
{
	struct swl **pp = &l->bucket[bucket_of(dpid)];
	while (*pp && (*pp)->dpid != dpid)
		pp = &(*pp)->next;
	struct swl *s = *pp;
	if (!s)
		return;
	*pp = s->next;
	l->all[s->slot] = l->all[--l->n_all];
	l->all[s->slot]->slot = s->slot;
	if (l->cursor >= l->n_all)
		l->cursor = 0;
	s->next = NULL;
	s->gone_ms = now_ms;
	*l->gone_tail = s; /* the newest at the end */
	l->gone_tail = &s->next;
	l->n_gone++;
	count(&l->st.switches_gone, 1);
}

/* True when the oldest departed switch's entries are due: its grace is over, or too many
 * departed switches wait. */
static bool reap_due(const struct ofc_learn *l, uint64_t now_ms)
{
	return l->gone && (now_ms >= l->gone->gone_ms + GONE_GRACE_MS || l->n_gone > GONE_GRACE_MAX);
}

/* Deletes up to `budget` keys of departed switches. Returns how many. */
static unsigned reap(struct ofc_learn *l, unsigned budget, uint64_t now_ms)
{
	unsigned done = 0;
	while (reap_due(l, now_ms) && done < budget) {
		struct swl *s = l->gone;
		struct keylog *g[2] = {&s->macs, &s->hosts};
		for (int i = 0; i < 2; i++)
			for (; g[i]->n && done < budget; done++) {
				rf_hash_delete(g[i]->h, log_head(g[i]), NULL);
				log_pop(g[i]);
			}
		if (s->macs.n || s->hosts.n)
			break;
		l->gone = s->next;
		if (!l->gone)
			l->gone_tail = &l->gone;
		l->n_gone--;
		log_free(&s->macs);
		log_free(&s->hosts);
		free(s);
	}
	count(&l->st.reaped, done);
	return done;
}

unsigned ofc_learn_step(struct ofc_learn *l, uint64_t now_ms)
{
	if (!l || now_ms < l->next_step_ms)
		return 0;
	l->next_step_ms = now_ms + STEP_MS;
	unsigned work = reap(l, REAP_DELETES, now_ms);
	uint64_t macs = 0, hosts = 0;
	unsigned visits = 0;
	for (unsigned n = 0; n < l->n_all && visits < AGE_VISITS; n++) {
		struct swl *s = l->all[l->cursor];
		l->cursor = (l->cursor + 1) % l->n_all;
		visits += log_age(l, &s->macs, AGE_VISITS - visits, now_ms, mac_stale, &macs);
		if (s->hosts.h && visits < AGE_VISITS)
			visits += log_age(l, &s->hosts, AGE_VISITS - visits, now_ms, host_stale,
					  &hosts);
	}
	count(&l->st.macs_aged, macs);
	count(&l->st.hosts_aged, hosts);
	return work + (unsigned)(macs + hosts);
}

bool ofc_learn_busy(const struct ofc_learn *l, uint64_t now_ms)
{
	return l && reap_due(l, now_ms);
}
