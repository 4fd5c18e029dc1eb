/*
 * apps/openflow/controller/cl_cluster.c: the cluster thread (cl_cluster.h, docs/cluster.md).
 *
 * The one idea: etcd decides, the switch enforces. For each switch this member is connected
 * to, the thread computes who should be master (the switches dealt round-robin over the live
 * members connected to them, see desired()) and that member takes the switch's master key by a create-if-absent
 * transaction bound to its lease. The key's create_revision is the generation id of its
 * ROLE_REQUEST MASTER: every later master's key is created later, so its id is larger and a
 * switch refuses the old master's requests as stale. A member that should no longer be
 * master deletes its key (only if unchanged) and turns SLAVE; the rightful one then takes it.
 *
 * Lease and fencing: the lease is renewed every TTL/10; the I/O poller demotes itself on its
 * own when 2/3 TTL pass without a renewal (cl_roles.h fence_at_ms), a full third of the TTL
 * before etcd can expire the lease and let another member win the key. When etcd answers
 * but has no leader (quorum lost), nobody can win a transaction and etcd does not expire
 * leases without a leader, so roles are kept and the deadline lifted; this is logged and
 * shown in /api/cluster.
 *
 * The thread reads members and masters with a range each round it has a reason to (a watch
 * event on the prefix, its own switches changing, or once a second), so a missed event
 * costs at most a second. Values it cannot read are ignored and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/json.h>
#include <ringflow/qsbr.h>

#include "cl_cluster.h"
#include "cl_etcd.h"
#include "cl_roles.h"
#include "ofc_app.h"

#define MAX_MEMBERS 64
#define CL_PFX_MAX 256 /* PREFIX/what/ of a range */
#define TICK_MS 100
/* Lease renewals per TTL. The deadline is 2/3 TTL after a renewal, so a renewal missed
 * leaves 17/30 TTL to learn why (etcd electing a new leader, quorum lost, or cut off) before
 * the I/O poller demotes itself. etcd needs up to two election timeouts to show either;
 * TTL/3 and TTL/6 left too little of that on a loaded machine (docs/cluster.md). */
#define KA_PER_TTL 10
#define RESYNC_MS 1000
#define ABSENT_GRACE_MS 2000 /* a key nobody takes: any connected member takes it after */

struct member {
	char node[64];
	char rest[64];
	uint64_t *dpids; /* sorted */
	size_t n;
	bool self;
};

struct master {
	uint64_t dpid;
	char node[64];
	int64_t create_rev, mod_rev, lease;
};

enum health { H_OK, H_QUORUM_LOST, H_UNREACHABLE, H_FENCED };
static const char *const health_name[] = {"ok", "quorum_lost", "unreachable", "fenced"};

struct cl_cluster {
	struct cl_config cfg;
	char node[64], prefix[128], rest[64];
	struct cl_etcd *etcd;
	struct cl_roles *roles;
	pthread_t thread;
	atomic_bool stop;
	int64_t lease, ttl_s;
	uint64_t renewed_ms, next_ka_ms, next_sync_ms;
	uint64_t silent_since; /* quorum lost, then no endpoint answers: since then */
	uint64_t watch_events, syncs;
	uint64_t state_sum[CL_ROLE_SLOTS]; /* what we last published per slot (FNV-1a) */
	uint64_t since_ms[CL_ROLE_SLOTS];  /* when the slot's decision last changed (Unix ms) */
	/* per slot: the MACs last published for its switch (kept when the key goes with its
	 * master's lease): what a new master's handler is seeded with */
	uint8_t (*seed[CL_ROLE_SLOTS])[OFC_SEED_REC];
	uint32_t seed_n[CL_ROLE_SLOTS];
	uint64_t seeded;
	uint64_t next_state_ms;
	uint64_t state_puts;
	enum health health;
	/* the view (thread only) */
	struct member members[MAX_MEMBERS];
	unsigned n_members;
	struct master *masters;
	size_t n_masters;
	uint64_t *all; /* every dpid of every member record, sorted, once each */
	size_t n_all;
	uint64_t absent_since[CL_ROLE_SLOTS];
	char published[CL_ETCD_MAX_VALUE]; /* our member record as last written */
	uint64_t ignored, elections, releases, lease_lost, fencings;
	/* the rendering for /api/cluster (written by the thread, read by REST: a mutex off the
	 * message path) */
	pthread_mutex_t mu;
	char *json;
	uint8_t (*sh_hosts)[32], (*sh_links)[32]; /* the published state, merged (under mu) */
	size_t n_sh_hosts, n_sh_links;
};

static uint64_t now_ms(void)
{
	return ofc_now_ms();
}

bool cl_node_name_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= 63 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool has_dpid(const struct member *m, uint64_t dpid)
{
	return bsearch(&dpid, m->dpids, m->n, sizeof(uint64_t), cmp_u64) != NULL;
}

/* The rank of dpid among every dpid some live member is connected to. */
static size_t rank_of(const struct cl_cluster *c, uint64_t dpid)
{
	size_t r = 0;
	for (size_t k = 0; k < c->n_all; k++)
		r += c->all[k] < dpid;
	return r;
}

/* The member that should be master of dpid: NULL when no live member is connected to it.
 * The switches, in dpid order, are dealt round-robin to the members connected to each (in
 * name order, as etcd lists them): every member reads the same records and gets the same
 * answer, and masters differ by at most one per member when every member sees every
 * switch. */
static const struct member *desired(const struct cl_cluster *c, uint64_t dpid)
{
	const struct member *cand[MAX_MEMBERS];
	size_t n = 0;
	for (unsigned i = 0; i < c->n_members; i++)
		if (has_dpid(&c->members[i], dpid))
			cand[n++] = &c->members[i];
	return n ? cand[rank_of(c, dpid) % n] : NULL;
}

static const struct master *master_of(const struct cl_cluster *c, uint64_t dpid)
{
	for (size_t i = 0; i < c->n_masters; i++)
		if (c->masters[i].dpid == dpid)
			return &c->masters[i];
	return NULL;
}

static void warn_ignored(struct cl_cluster *c, const char *key, const char *why)
{
	c->ignored++;
	if (c->ignored <= 10 || c->ignored % 1000 == 0)
		fprintf(stderr, "ringflow-controller: cluster: ignored %s under %s: %s (%" PRIu64
			" ignored so far)\n", key, c->prefix, why, c->ignored);
}

/* ---- our member record ------------------------------------------------------------------- */

/* The dpids this member is connected to (1.3 switches with a role slot), sorted. */
static size_t my_dpids(const struct cl_cluster *c, uint64_t *out)
{
	size_t n = 0;
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		/* Acquire: pairs with the I/O poller's release store claiming the slot. */
		uint64_t d = atomic_load_explicit(&c->roles->s[i].dpid, memory_order_acquire);
		if (!d)
			break;
		/* Relaxed: up is a hint; a stale read is corrected on the next round. */
		if (atomic_load_explicit(&c->roles->s[i].up, memory_order_relaxed))
			out[n++] = d;
	}
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

static void record(const struct cl_cluster *c, struct rf_buf *b)
{
	static uint64_t d[CL_ROLE_SLOTS];
	size_t n = my_dpids(c, d);
	rf_buf_puts(b, "{\"node\":");
	rf_json_str(b, c->node);
	rf_buf_puts(b, ",\"rest\":");
	rf_json_str(b, c->rest);
	rf_buf_puts(b, ",\"dpids\":[");
	for (size_t i = 0; i < n; i++)
		rf_buf_printf(b, "%s\"%016" PRIx64 "\"", i ? "," : "", d[i]);
	rf_buf_puts(b, "]}");
}

/* Writes our record when it changed (or force). 0, 1 written, or -errno. */
static int publish(struct cl_cluster *c, bool force)
{
	struct rf_buf b;
	rf_buf_init(&b, CL_ETCD_MAX_VALUE);
	record(c, &b);
	int rc = 0;
	if (b.full) {
		fprintf(stderr, "ringflow-controller: cluster: too many switches for one member "
			"record (%d bytes); the others may not see all of them\n", CL_ETCD_MAX_VALUE);
	} else if (force || strcmp(b.p, c->published) != 0) {
		char key[256];
		snprintf(key, sizeof(key), "%s/members/%s", c->prefix, c->node);
		rc = cl_etcd_put(c->etcd, key, b.p, b.len, c->lease, NULL);
		if (rc == 0) {
			snprintf(c->published, sizeof(c->published), "%s", b.p);
			rc = 1;
		}
	}
	rf_buf_free(&b);
	return rc;
}

/* ---- reading the view -------------------------------------------------------------------- */

static void members_free(struct cl_cluster *c)
{
	for (unsigned i = 0; i < c->n_members; i++)
		free(c->members[i].dpids);
	c->n_members = 0;
}

/* One member record into m: 0, or -1 (the caller counts it). */
static int parse_member(const struct cl_kv *kv, const char *name, struct member *m)
{
	char perr[96];
	memset(m, 0, sizeof(*m));
	if (!kv->val || !cl_node_name_ok(name))
		return -1;
	struct rf_json *j = rf_json_parse(kv->val, kv->vlen, perr, sizeof(perr));
	const char *node = rf_json_get_str(j, "node", NULL);
	const char *rest = rf_json_get_str(j, "rest", "");
	const struct rf_json *a = rf_json_get(j, "dpids");
	if (!j || !node || strcmp(node, name) != 0 || !a || a->type != RF_JSON_ARR ||
	    a->n > CL_ROLE_SLOTS || strlen(rest) >= sizeof(m->rest)) {
		rf_json_free(j);
		return -1;
	}
	snprintf(m->node, sizeof(m->node), "%s", node);
	snprintf(m->rest, sizeof(m->rest), "%s", rest);
	m->dpids = calloc(a->n ? a->n : 1, sizeof(uint64_t));
	for (const struct rf_json *d = a->child; m->dpids && d; d = d->next) {
		char *end;
		if (d->type != RF_JSON_STR || strlen(d->str) != 16)
			continue;
		uint64_t v = strtoull(d->str, &end, 16);
		if (!*end)
			m->dpids[m->n++] = v;
	}
	rf_json_free(j);
	if (!m->dpids)
		return -1;
	qsort(m->dpids, m->n, sizeof(uint64_t), cmp_u64);
	return 0;
}

/* The keys under PREFIX/what/ into *kvs, *n (the prefix, with its slash, into pfx). 0 or
 * -errno. */
static int range_under(struct cl_cluster *c, const char *what, char pfx[CL_PFX_MAX],
		       struct cl_kv **kvs, size_t *n)
{
	*kvs = NULL;
	*n = 0;
	snprintf(pfx, CL_PFX_MAX, "%s/%s/", c->prefix, what);
	return cl_etcd_range(c->etcd, pfx, kvs, n, NULL);
}

/* Reads members and masters. 0 or -errno (the old view stays). */
static int read_view(struct cl_cluster *c)
{
	char pfx[CL_PFX_MAX];
	struct cl_kv *kvs;
	size_t n;
	int rc = range_under(c, "members", pfx, &kvs, &n);
	if (rc)
		return rc;
	members_free(c);
	size_t plen = strlen(pfx);
	for (size_t i = 0; i < n && c->n_members < MAX_MEMBERS; i++) {
		struct member *m = &c->members[c->n_members];
		if (parse_member(&kvs[i], kvs[i].key + plen, m) != 0) {
			warn_ignored(c, kvs[i].key, kvs[i].val ? "not a member record" :
				     "value too long or not base64");
			continue;
		}
		m->self = !strcmp(m->node, c->node);
		c->n_members++;
	}
	cl_kv_free(kvs, n);
	size_t total = 0;
	for (unsigned i = 0; i < c->n_members; i++)
		total += c->members[i].n;
	free(c->all);
	c->n_all = 0;
	c->all = malloc((total ? total : 1) * sizeof(uint64_t));
	for (unsigned i = 0; c->all && i < c->n_members; i++)
		for (size_t k = 0; k < c->members[i].n; k++)
			c->all[c->n_all++] = c->members[i].dpids[k];
	if (c->all)
		qsort(c->all, c->n_all, sizeof(uint64_t), cmp_u64);
	size_t u = 0;
	for (size_t k = 0; k < c->n_all; k++)
		if (!u || c->all[u - 1] != c->all[k])
			c->all[u++] = c->all[k];
	c->n_all = u;

	rc = range_under(c, "masters", pfx, &kvs, &n);
	if (rc)
		return rc;
	free(c->masters);
	c->masters = calloc(n ? n : 1, sizeof(*c->masters));
	c->n_masters = 0;
	plen = strlen(pfx);
	for (size_t i = 0; c->masters && i < n; i++) {
		const char *d = kvs[i].key + plen;
		char *end;
		uint64_t dpid = strtoull(d, &end, 16);
		if (strlen(d) != 16 || *end || !kvs[i].val || !cl_node_name_ok(kvs[i].val) ||
		    !kvs[i].create_rev) {
			warn_ignored(c, kvs[i].key, "not a master key (dpid: 16 hex digits, value: "
				     "a node name)");
			continue;
		}
		struct master *m = &c->masters[c->n_masters++];
		m->dpid = dpid;
		snprintf(m->node, sizeof(m->node), "%s", kvs[i].val);
		m->create_rev = kvs[i].create_rev;
		m->mod_rev = kvs[i].mod_rev;
		m->lease = kvs[i].lease;
	}
	cl_kv_free(kvs, n);
	return 0;
}

/* ---- deciding ---------------------------------------------------------------------------- */

static void send_seed(struct cl_cluster *c, unsigned i, uint64_t dpid);

static bool set_want(struct cl_cluster *c, struct cl_role_slot *s, uint64_t gen, uint32_t role)
{
	uint64_t w = cl_role_word(gen, role);
	if (atomic_load_explicit(&s->want, memory_order_relaxed) == w)
		return false; /* Relaxed: the thread is want's only writer */
	/* Release: pairs with the I/O poller's acquire loads of want (roles_sync,
	 * cl_roles_may_act). */
	atomic_store_explicit(&s->want, w, memory_order_release);
	struct timespec ts; /* wall clock: comparable with other processes' (the test's) */
	clock_gettime(CLOCK_REALTIME, &ts);
	c->since_ms[s - c->roles->s] = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return true;
}

/* One dpid's role, from the view just read. True when want changed. */
static bool decide(struct cl_cluster *c, unsigned i, uint64_t dpid, uint64_t now)
{
	struct cl_role_slot *s = &c->roles->s[i];
	const struct master *m = master_of(c, dpid);
	const struct member *d = desired(c, dpid);
	/* Relaxed: a hint, see my_dpids. */
	bool up = atomic_load_explicit(&s->up, memory_order_relaxed);
	char key[256];
	snprintf(key, sizeof(key), "%s/masters/%016" PRIx64, c->prefix, dpid);
	if (m) {
		c->absent_since[i] = 0;
		bool mine = !strcmp(m->node, c->node) && m->lease == c->lease;
		if (mine && (!up || (d && !d->self))) {
			/* rebalance (or we lost the switch): hand it to the rightful member */
			int rc = cl_etcd_delete_if(c->etcd, key, m->mod_rev);
			if (rc == 1) {
				c->releases++;
				fprintf(stderr, "ringflow-controller: cluster: switch %016" PRIx64
					": mastership handed over to %s\n", dpid,
					d && up ? d->node : "a member connected to it");
			}
			return set_want(c, s, (uint64_t)m->create_rev, CL_ROLE_SLAVE);
		}
		return set_want(c, s, (uint64_t)m->create_rev, mine ? CL_ROLE_MASTER : CL_ROLE_SLAVE);
	}
	if (!up)
		return false;
	if (!c->absent_since[i])
		c->absent_since[i] = now;
	bool mine = d && d->self;
	if (!mine && now - c->absent_since[i] < ABSENT_GRACE_MS)
		return false; /* the rightful member takes it (or, past the grace, anyone) */
	char val[64];
	snprintf(val, sizeof(val), "%s", c->node);
	int64_t rev = 0;
	struct cl_kv held;
	int rc = cl_etcd_create(c->etcd, key, val, c->lease, &rev, &held);
	if (rc == 1) {
		c->elections++;
		c->absent_since[i] = 0;
		fprintf(stderr, "ringflow-controller: cluster: switch %016" PRIx64 ": MASTER, "
			"generation %" PRId64 "%s\n", dpid, rev,
			c->seed_n[i] ? ", its MAC table seeded from the cluster's" : "");
		send_seed(c, i, dpid);
		return set_want(c, s, (uint64_t)rev, CL_ROLE_MASTER);
	}
	if (rc == 0 && held.key) {
		bool changed = set_want(c, s, (uint64_t)held.create_rev, CL_ROLE_SLAVE);
		free(held.key);
		free(held.val);
		return changed;
	}
	return false;
}

static void decide_all(struct cl_cluster *c, uint64_t now)
{
	bool changed = false;
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		/* Acquire: pairs with the I/O poller's release store claiming the slot. */
		uint64_t d = atomic_load_explicit(&c->roles->s[i].dpid, memory_order_acquire);
		if (!d)
			break;
		changed |= decide(c, i, d, now);
	}
	if (changed) /* Release: pairs with roles_sync's acquire load of epoch. */
		atomic_fetch_add_explicit(&c->roles->epoch, 1, memory_order_release);
}

/* ---- lease ------------------------------------------------------------------------------- */

static void set_fence(struct cl_cluster *c, uint64_t at)
{
	/* Relaxed: see cl_roles_effective. */
	atomic_store_explicit(&c->roles->fence_at_ms, at, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->roles->epoch, 1, memory_order_release); /* re-check now */
}

static int register_member(struct cl_cluster *c)
{
	int64_t id, ttl;
	uint64_t t0 = now_ms();
	int rc = cl_etcd_grant(c->etcd, c->cfg.ttl_s, &id, &ttl);
	if (rc)
		return rc;
	c->lease = id;
	c->ttl_s = ttl;
	c->renewed_ms = t0;
	c->next_ka_ms = t0 + (uint64_t)ttl * 1000 / KA_PER_TTL;
	rc = publish(c, true);
	return rc < 0 ? rc : 0;
}

static void set_health(struct cl_cluster *c, enum health h, const char *why)
{
	if (c->health == h)
		return;
	if (h == H_OK)
		fprintf(stderr, "ringflow-controller: cluster: etcd reachable again (%s), lease %"
			PRId64 " kept alive\n", cl_etcd_endpoint(c->etcd), c->lease);
	else if (h == H_QUORUM_LOST)
		fprintf(stderr, "ringflow-controller: cluster: etcd has no leader (quorum lost, or "
			"an election under way: %s): keeping the current roles, no elections until "
			"it has one\n", why);
	else if (h == H_UNREACHABLE)
		fprintf(stderr, "ringflow-controller: cluster: cannot renew the lease (%s)\n", why);
	else
		fprintf(stderr, "ringflow-controller: cluster: lease not renewed for %" PRIu64
			" ms: demoted to SLAVE on every switch (fencing)\n",
			(uint64_t)c->ttl_s * 2000 / 3);
	c->health = h;
}

/* Keeps the lease alive; on failure tells quorum loss from being cut off. */
static void keepalive(struct cl_cluster *c, uint64_t now)
{
	uint64_t margin = (uint64_t)c->ttl_s * 2000 / 3;
	if (now >= c->next_ka_ms) {
		int64_t ttl = 0;
		uint64_t t0 = now_ms();
		int lead = 1; /* on failure: the status question's verdict, from the same round */
		int rc = cl_etcd_keepalive(c->etcd, c->lease, &ttl, &lead);
		if (rc == 0 && ttl > 0) {
			c->renewed_ms = t0;
			c->silent_since = 0;
			c->next_ka_ms = t0 + (uint64_t)c->ttl_s * 1000 / KA_PER_TTL;
			set_fence(c, t0 + margin);
			set_health(c, H_OK, NULL);
		} else if (rc == 0) { /* expired on etcd's side: our keys are gone */
			c->lease_lost++;
			fprintf(stderr, "ringflow-controller: cluster: lease %" PRId64 " expired; "
				"registering again\n", c->lease);
			set_fence(c, 0);
			if (register_member(c) == 0) {
				set_fence(c, c->renewed_ms + margin);
				set_health(c, H_OK, NULL);
			}
		} else {
			/* Retried a tick later: the verdict (renewed, or quorum lost) has to come
			 * before the deadline, TTL/2 after the first renewal missed. */
			c->next_ka_ms = now_ms() + TICK_MS;
			char why[256];
			snprintf(why, sizeof(why), "%s", cl_etcd_error(c->etcd));
			if (lead == 0) {
				c->silent_since = 0;
				set_fence(c, UINT64_MAX);
				set_health(c, H_QUORUM_LOST, why);
			} else if (c->health == H_QUORUM_LOST && lead < 0) {
				/* No member answers now: we may be cut off while the others have
				 * quorum again. The usual deadline, counted from the first silence
				 * (a single slow answer does not end the quorum-lost state). */
				if (!c->silent_since) {
					c->silent_since = now_ms();
					set_fence(c, c->silent_since + margin);
				} else if (now_ms() >= c->silent_since + margin) {
					c->renewed_ms = c->silent_since;
					set_health(c, H_UNREACHABLE, why);
				}
			} else if (c->health == H_QUORUM_LOST) {
				/* a leader again, but our renewal failed: retry; the deadline
				 * counts from now, as if renewed just before */
				if (!c->silent_since) {
					c->silent_since = now_ms();
					set_fence(c, c->silent_since + margin);
				}
			} else if (c->health != H_FENCED) {
				set_health(c, H_UNREACHABLE, why);
			}
		}
	}
	if (c->health == H_UNREACHABLE && now_ms() >= c->renewed_ms + margin) {
		c->fencings++;
		set_health(c, H_FENCED, NULL);
	}
}

/* ---- shared state: what each switch's master knows, published and merged ---------------- */

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* Slot i's switch's hosts and links from the local tables, as its state value. */
static void state_of(struct cl_cluster *c, uint64_t dpid, struct rf_buf *b)
{
	struct ofc_net *net = c->cfg.net;
	uint64_t now = now_ms();
	struct rf_hash_iter it;
	const void *kp;
	void *v;
	uint8_t be[8];
	ofc_put64(be, dpid);
	rf_buf_puts(b, "{\"hosts\":[");
	bool first = true;
	rf_qsbr_online(); /* reading the hashes (qsbr.h): online until the copy is done */
	rf_hash_iter_init(net->hosts, &it);
	while (rf_hash_iter_next(net->hosts, &it, &kp, &v)) {
		const uint8_t *k = kp;
		uint64_t seen = (uint64_t)(uintptr_t)v;
		if (memcmp(k + 6, be, 8) != 0 || !seen || now - (seen - 1) > OFC_HOST_AGE_MS)
			continue;
		rf_buf_printf(b, "%s[\"%02x%02x%02x%02x%02x%02x\",%u,%u]", first ? "" : ",", k[0],
			      k[1], k[2], k[3], k[4], k[5], of_get32(k + 14), of_get32(k + 18));
		first = false;
	}
	rf_buf_puts(b, "],\"links\":[");
	first = true;
	rf_hash_iter_init(net->links, &it);
	while (rf_hash_iter_next(net->links, &it, &kp, &v)) {
		const uint8_t *k = kp;
		uint64_t seen = (uint64_t)(uintptr_t)v;
		/* a link is known to the master of the switch that received the LLDP: dst */
		if (memcmp(k + 12, be, 8) != 0 || !seen || now - (seen - 1) > OFC_LINK_AGE_MS)
			continue;
		rf_buf_printf(b, "%s[\"%016" PRIx64 "\",%u,%u]", first ? "" : ",", ofc_get64(k),
			      of_get32(k + 8), of_get32(k + 20));
		first = false;
	}
	if (c->cfg.macs) {
		rf_buf_puts(b, "],\"macs\":[");
		first = true;
		rf_hash_iter_init(c->cfg.macs, &it);
		while (rf_hash_iter_next(c->cfg.macs, &it, &kp, &v)) {
			const uint8_t *k = kp; /* dpid(8) MAC(6) -> seen s << 32 | port + 1 */
			uint32_t port1 = (uint32_t)(uintptr_t)v;
			if (memcmp(k, be, 8) != 0 || !port1)
				continue;
			rf_buf_printf(b, "%s[\"%02x%02x%02x%02x%02x%02x\",%u]", first ? "" : ",",
				      k[8], k[9], k[10], k[11], k[12], k[13], port1 - 1);
			first = false;
		}
	}
	rf_qsbr_offline();
	rf_buf_puts(b, "]}");
}

/* The "macs" of a state value for slot i's switch into c->seed[i] (replacing it). */
static void keep_seed(struct cl_cluster *c, unsigned i, const struct rf_json *ma)
{
	if (!ma || ma->type != RF_JSON_ARR)
		return;
	uint8_t (*r)[OFC_SEED_REC] = malloc((ma->n ? ma->n : 1) * OFC_SEED_REC);
	if (!r)
		return;
	uint32_t n = 0;
	for (const struct rf_json *e = ma->child; e; e = e->next) {
		const struct rf_json *m = e->type == RF_JSON_ARR ? e->child : NULL;
		const struct rf_json *p = m ? m->next : NULL;
		if (!p || m->type != RF_JSON_STR || strlen(m->str) != 12 || p->type != RF_JSON_NUM ||
		    sscanf(m->str, "%2hhx%2hhx%2hhx%2hhx%2hhx%2hhx", &r[n][0], &r[n][1], &r[n][2],
			   &r[n][3], &r[n][4], &r[n][5]) != 6)
			continue;
		ofc_put32(r[n] + 6, (uint32_t)p->num);
		n++;
	}
	free(c->seed[i]);
	c->seed[i] = r;
	c->seed_n[i] = n;
}

/* Slot i's switch has a new master here: its handler learns what the cluster knew. */
static void send_seed(struct cl_cluster *c, unsigned i, uint64_t dpid)
{
	if (!c->roles->seeds || !c->seed_n[i])
		return;
	struct cl_seed *sd = malloc(sizeof(*sd) + (size_t)c->seed_n[i] * OFC_SEED_REC);
	if (!sd)
		return;
	sd->dpid = dpid;
	sd->n = c->seed_n[i];
	memcpy(sd->rec, c->seed[i], (size_t)sd->n * OFC_SEED_REC);
	void *obj = sd;
	uint32_t n = sd->n; /* once enqueued, sd is the I/O poller's (it frees it) */
	if (rf_ring_enqueue_burst(c->roles->seeds, &obj, 1, NULL) != 1) {
		free(sd);
		/* Relaxed: a counter. */
		atomic_fetch_add_explicit(&c->roles->seeds_dropped, 1, memory_order_relaxed);
		return;
	}
	c->seeded += n;
}

/* Publishes the state of every switch we are master of, when it changed (once a second). */
static void publish_state(struct cl_cluster *c, uint64_t now)
{
	if (!c->cfg.net || now < c->next_state_ms)
		return;
	c->next_state_ms = now + RESYNC_MS;
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		struct cl_role_slot *s = &c->roles->s[i];
		/* Acquire: pairs with the claim's release store. */
		uint64_t d = atomic_load_explicit(&s->dpid, memory_order_acquire);
		if (!d)
			break;
		/* Relaxed: the thread is want's only writer. */
		uint64_t w = atomic_load_explicit(&s->want, memory_order_relaxed);
		if ((cl_roles_effective(c->roles, w, now) & 3u) != CL_ROLE_MASTER) {
			c->state_sum[i] = 0;
			continue;
		}
		struct rf_buf b;
		rf_buf_init(&b, CL_ETCD_MAX_VALUE);
		state_of(c, d, &b);
		uint64_t h = b.full ? 0 : fnv(b.p, b.len);
		if (b.full) {
			c->ignored++; /* too much for one value: the others keep the last one */
		} else if (h != c->state_sum[i]) {
			char key[256];
			snprintf(key, sizeof(key), "%s/state/%016" PRIx64, c->prefix, d);
			if (cl_etcd_put(c->etcd, key, b.p, b.len, c->lease, NULL) == 0) {
				c->state_sum[i] = h;
				c->state_puts++;
			}
		}
		rf_buf_free(&b);
	}
}

/* A new zeroed 32-byte key at the end of *a (n used, cap allocated; doubles from 64), or NULL
 * when out of memory. */
static uint8_t *push_key(uint8_t (**a)[32], size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		void *x = realloc(*a, nc * 32);
		if (!x)
			return NULL;
		*a = x;
		*cap = nc;
	}
	uint8_t *k = (*a)[(*n)++];
	memset(k, 0, 32);
	return k;
}

/* One published state value into the arrays (hosts: MAC dpid port ipv4; links: src dpid,
 * src port, dst dpid, dst port). -1: not a state value (counted by the caller). */
static int parse_state(const struct cl_kv *kv, uint64_t dpid, uint8_t (**h)[32], size_t *nh,
		       size_t *caph, uint8_t (**l)[32], size_t *nl, size_t *capl)
{
	char perr[96];
	struct rf_json *j = kv->val ? rf_json_parse(kv->val, kv->vlen, perr, sizeof(perr)) : NULL;
	const struct rf_json *ha = rf_json_get(j, "hosts"), *la = rf_json_get(j, "links");
	if (!ha || !la || ha->type != RF_JSON_ARR || la->type != RF_JSON_ARR) {
		rf_json_free(j);
		return -1;
	}
	int bad = 0;
	for (const struct rf_json *e = ha->child; e; e = e->next) {
		const struct rf_json *m = e->type == RF_JSON_ARR ? e->child : NULL;
		const struct rf_json *p = m ? m->next : NULL, *ip = p ? p->next : NULL;
		uint8_t mac[6];
		if (!ip || m->type != RF_JSON_STR || strlen(m->str) != 12 || p->type != RF_JSON_NUM ||
		    ip->type != RF_JSON_NUM || sscanf(m->str, "%2hhx%2hhx%2hhx%2hhx%2hhx%2hhx", &mac[0],
						      &mac[1], &mac[2], &mac[3], &mac[4], &mac[5]) != 6) {
			bad = -1;
			continue;
		}
		uint8_t *k = push_key(h, nh, caph);
		if (!k)
			break;
		memcpy(k, mac, 6);
		ofc_put64(k + 6, dpid);
		ofc_put32(k + 14, (uint32_t)p->num);
		ofc_put32(k + 18, (uint32_t)ip->num);
	}
	for (const struct rf_json *e = la->child; e; e = e->next) {
		const struct rf_json *sd = e->type == RF_JSON_ARR ? e->child : NULL;
		const struct rf_json *sp = sd ? sd->next : NULL, *dp = sp ? sp->next : NULL;
		char *end = NULL;
		uint64_t src = sd && sd->type == RF_JSON_STR ? strtoull(sd->str, &end, 16) : 0;
		if (!dp || !end || *end || strlen(sd->str) != 16 || sp->type != RF_JSON_NUM ||
		    dp->type != RF_JSON_NUM) {
			bad = -1;
			continue;
		}
		uint8_t *k = push_key(l, nl, capl);
		if (!k)
			break;
		ofc_put64(k, src);
		ofc_put32(k + 8, (uint32_t)sp->num);
		ofc_put64(k + 12, dpid);
		ofc_put32(k + 20, (uint32_t)dp->num);
	}
	rf_json_free(j);
	return bad;
}

/* Reads every switch's published state into the merged view. 0 or -errno. */
static int read_state(struct cl_cluster *c)
{
	char pfx[CL_PFX_MAX];
	struct cl_kv *kvs;
	size_t n;
	int rc = range_under(c, "state", pfx, &kvs, &n);
	if (rc)
		return rc;
	uint8_t (*h)[32] = NULL, (*l)[32] = NULL;
	size_t nh = 0, nl = 0, caph = 0, capl = 0, plen = strlen(pfx);
	for (size_t i = 0; i < n; i++) {
		const char *d = kvs[i].key + plen;
		char *end;
		uint64_t dpid = strtoull(d, &end, 16);
		if (strlen(d) != 16 || *end ||
		    parse_state(&kvs[i], dpid, &h, &nh, &caph, &l, &nl, &capl) != 0) {
			warn_ignored(c, kvs[i].key, "not a state value (or parts of it)");
			continue;
		}
		for (unsigned k = 0; c->cfg.macs && k < CL_ROLE_SLOTS; k++) {
			/* Acquire: pairs with the claim's release store. */
			uint64_t sd = atomic_load_explicit(&c->roles->s[k].dpid, memory_order_acquire);
			if (!sd)
				break;
			if (sd != dpid)
				continue;
			char perr[96];
			struct rf_json *j = rf_json_parse(kvs[i].val, kvs[i].vlen, perr, sizeof(perr));
			keep_seed(c, k, rf_json_get(j, "macs"));
			rf_json_free(j);
			break;
		}
	}
	cl_kv_free(kvs, n);
	pthread_mutex_lock(&c->mu);
	free(c->sh_hosts);
	free(c->sh_links);
	c->sh_hosts = h;
	c->sh_links = l;
	c->n_sh_hosts = nh;
	c->n_sh_links = nl;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

size_t cl_cluster_shared(void *arg, int table, uint8_t (**keys)[32])
{
	struct cl_cluster *c = arg;
	pthread_mutex_lock(&c->mu);
	size_t n = table ? c->n_sh_links : c->n_sh_hosts;
	*keys = malloc((n ? n : 1) * 32);
	if (*keys)
		memcpy(*keys, table ? c->sh_links : c->sh_hosts, n * 32);
	else
		n = 0;
	pthread_mutex_unlock(&c->mu);
	return n;
}

/* ---- /api/cluster ----------------------------------------------------------------------- */

static void render_now(struct cl_cluster *c)
{
	struct rf_buf b;
	rf_buf_init(&b, 1u << 20);
	uint64_t now = now_ms();
	rf_buf_puts(&b, "{\"node\":");
	rf_json_str(&b, c->node);
	rf_buf_printf(&b, ",\"prefix\":");
	rf_json_str(&b, c->prefix);
	rf_buf_printf(&b, ",\"status\":\"%s\",\"etcd\":", health_name[c->health]);
	rf_json_str(&b, cl_etcd_endpoint(c->etcd));
	rf_buf_printf(&b, ",\"lease\":\"%" PRId64 "\",\"lease_ttl_s\":%" PRId64
		      ",\"renewed_ms_ago\":%" PRIu64 ",\"last_error\":", c->lease, c->ttl_s,
		      now - c->renewed_ms);
	rf_json_str(&b, cl_etcd_error(c->etcd));
	rf_buf_printf(&b, ",\"elections_won\":%" PRIu64 ",\"handed_over\":%" PRIu64
		      ",\"leases_lost\":%" PRIu64 ",\"fencings\":%" PRIu64
		      ",\"ignored_values\":%" PRIu64 ",\"watch_events\":%" PRIu64 ",\"syncs\":%"
		      PRIu64 ",\"state_puts\":%" PRIu64 ",\"shared_hosts\":%zu,\"shared_links\":%zu"
		      ",\"macs_seeded\":%" PRIu64 ",\"seeds_dropped\":%" PRIu64
		      ",\"switches_without_slot\":%" PRIu64,
		      c->elections, c->releases, c->lease_lost, c->fencings, c->ignored,
		      c->watch_events, c->syncs, c->state_puts, c->n_sh_hosts, c->n_sh_links,
		      c->seeded,
		      atomic_load_explicit(&c->roles->seeds_dropped, memory_order_relaxed),
		      atomic_load_explicit(&c->roles->no_slot, memory_order_relaxed));
	/* Relaxed: display only. */
	uint64_t fd = atomic_load_explicit(&c->roles->fenced_deadline_ms, memory_order_relaxed);
	uint64_t fm = atomic_load_explicit(&c->roles->fenced_ms, memory_order_relaxed);
	if (fd && fm >= fd)
		rf_buf_printf(&b, ",\"last_fencing\":{\"ms_ago\":%" PRIu64 ",\"after_renewal_ms\":%"
			      PRIu64 ",\"late_ms\":%" PRIu64 "}", now - fm,
			      fd - (uint64_t)c->ttl_s * 2000 / 3 <= fm ? fm - (fd - (uint64_t)c->ttl_s * 2000 / 3) : 0,
			      fm - fd);
	rf_buf_puts(&b, ",\"members\":[");
	for (unsigned i = 0; i < c->n_members; i++) {
		const struct member *m = &c->members[i];
		unsigned nm = 0;
		for (size_t k = 0; k < c->n_masters; k++)
			nm += !strcmp(c->masters[k].node, m->node);
		rf_buf_puts(&b, i ? ",{\"node\":" : "{\"node\":");
		rf_json_str(&b, m->node);
		rf_buf_puts(&b, ",\"rest\":");
		rf_json_str(&b, m->rest);
		rf_buf_printf(&b, ",\"self\":%s,\"switches\":%zu,\"masters\":%u}",
			      m->self ? "true" : "false", m->n, nm);
	}
	rf_buf_puts(&b, "],\"masters\":[");
	for (size_t k = 0; k < c->n_masters; k++) {
		rf_buf_printf(&b, "%s{\"dpid\":\"%016" PRIx64 "\",\"node\":", k ? "," : "",
			      c->masters[k].dpid);
		rf_json_str(&b, c->masters[k].node);
		rf_buf_printf(&b, ",\"generation\":%" PRId64 "}", c->masters[k].create_rev);
	}
	rf_buf_puts(&b, "],\"switches\":[");
	static const char *const rn[] = {"none", "equal", "master", "slave"};
	bool first = true;
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++) {
		struct cl_role_slot *s = &c->roles->s[i];
		/* Acquire: pairs with the claim's release store (the slot's fields after it). */
		uint64_t d = atomic_load_explicit(&s->dpid, memory_order_acquire);
		if (!d)
			break;
		/* Relaxed: display only. */
		uint64_t w = atomic_load_explicit(&s->want, memory_order_relaxed);
		uint64_t e = cl_roles_effective(c->roles, w, now);
		uint64_t h = atomic_load_explicit(&s->have, memory_order_relaxed);
		rf_buf_printf(&b, "%s{\"dpid\":\"%016" PRIx64 "\",\"connected\":%s,\"role\":\"%s\","
			      "\"generation\":%" PRIu64 ",\"decided_at_unix_ms\":%" PRIu64
			      ",\"switch_says\":\"%s\",\"switch_generation\":%"
			      PRIu64 ",\"role_requests\":%" PRIu64 ",\"refused\":%" PRIu64 "}",
			      first ? "" : ",", d,
			      atomic_load_explicit(&s->up, memory_order_relaxed) ? "true" : "false",
			      w ? rn[e & 3] : "undecided", e >> 2, c->since_ms[i],
			      h ? rn[h & 3] : "none", h >> 2,
			      atomic_load_explicit(&s->sent, memory_order_relaxed),
			      atomic_load_explicit(&s->refused, memory_order_relaxed));
		first = false;
	}
	rf_buf_puts(&b, "]}\n");
	char *text = b.full ? strdup("{\"error\":\"cluster view too large\"}\n") : strdup(b.p);
	rf_buf_free(&b);
	pthread_mutex_lock(&c->mu);
	free(c->json);
	c->json = text;
	pthread_mutex_unlock(&c->mu);
}

int cl_cluster_render(void *arg, FILE *out)
{
	struct cl_cluster *c = arg;
	pthread_mutex_lock(&c->mu);
	fputs(c->json ? c->json : "{\"status\":\"starting\"}\n", out);
	pthread_mutex_unlock(&c->mu);
	return 200;
}

/* ---- the thread ------------------------------------------------------------------------- */

static void *run(void *arg)
{
	struct cl_cluster *c = arg;
	struct cl_watch *w = NULL;
	char wpfx[256];
	snprintf(wpfx, sizeof(wpfx), "%s/", c->prefix);
	uint64_t next_watch = 0;
	if (c->cfg.net) {
		rf_qsbr_register(); /* reads the apps' hashes (state_of) */
		rf_qsbr_offline();  /* blocks in calls: offline except while reading */
	}
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) { /* Relaxed: a flag */
		uint64_t now = now_ms();
		bool sync = now >= c->next_sync_ms;
		if (!w && now >= next_watch) {
			w = cl_watch_start(c->etcd, wpfx, 0);
			next_watch = now + 1000;
		}
		if (w) {
			int n = cl_watch_poll(w, TICK_MS);
			if (n > 0) {
				sync = true;
				c->watch_events += (uint64_t)n;
			}
			else if (n < 0) {
				cl_watch_stop(w);
				w = NULL;
			}
		} else {
			struct timespec ts = {0, TICK_MS * 1000000L};
			nanosleep(&ts, NULL);
		}
		now = now_ms();
		keepalive(c, now);
		if (c->health == H_OK) {
			int p = publish(c, false);
			if (p == 1)
				sync = true;
			if (sync && read_view(c) == 0) {
				c->syncs++;
				decide_all(c, now);
				c->next_sync_ms = now + RESYNC_MS;
				if (c->cfg.net)
					read_state(c);
			}
			publish_state(c, now_ms());
		}
		render_now(c);
	}
	cl_watch_stop(w);
	if (c->cfg.net) {
		rf_qsbr_online();
		rf_qsbr_unregister();
	}
	return NULL;
}

/* The cluster's LLDP secret into key: ours if we are first (create-if-absent, no lease),
 * else the one stored. 0, or -1 with err. */
static int share_lldp_key(struct cl_cluster *c, uint8_t key[16], char *err, size_t errlen)
{
	char k[256], enc[32];
	snprintf(k, sizeof(k), "%s/lldp-key", c->prefix);
	cl_b64_encode(key, 16, enc);
	int64_t rev;
	struct cl_kv held;
	int rc = cl_etcd_create(c->etcd, k, enc, 0, &rev, &held);
	if (rc == 1)
		return 0;
	uint8_t dec[64];
	long n = rc == 0 && held.val && strlen(held.val) < 40 ? cl_b64_decode(held.val, dec) : -1;
	free(held.key);
	free(held.val);
	if (rc < 0 || n != 16) {
		snprintf(err, errlen, "cluster: cannot %s the shared LLDP secret %s (%s); delete "
			 "the key to start afresh", rc < 0 ? "read" : "use", k,
			 rc < 0 ? cl_etcd_error(c->etcd) : "not 16 bytes of base64");
		return -1;
	}
	memcpy(key, dec, 16);
	return 0;
}

struct cl_cluster *cl_cluster_start(const struct cl_config *cfg, struct cl_roles *roles,
				    char *err, size_t errlen)
{
	if (!cl_node_name_ok(cfg->node)) {
		snprintf(err, errlen, "--node-id %s: use 1..63 of A-Z a-z 0-9 . _ -", cfg->node);
		return NULL;
	}
	if (cfg->ttl_s < 2 || cfg->ttl_s > 60) {
		snprintf(err, errlen, "--lease-ttl %u: use 2..60 seconds", cfg->ttl_s);
		return NULL;
	}
	size_t pl = strlen(cfg->prefix);
	if (pl < 2 || pl > 100 || cfg->prefix[0] != '/' || cfg->prefix[pl - 1] == '/') {
		snprintf(err, errlen, "--cluster-prefix %s: use /NAME (no trailing /, up to 100 "
			 "characters)", cfg->prefix);
		return NULL;
	}
	struct cl_cluster *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory for the cluster state");
		return NULL;
	}
	c->cfg = *cfg;
	c->roles = roles;
	snprintf(c->node, sizeof(c->node), "%s", cfg->node);
	snprintf(c->prefix, sizeof(c->prefix), "%s", cfg->prefix);
	snprintf(c->rest, sizeof(c->rest), "%s", cfg->rest ? cfg->rest : "");
	pthread_mutex_init(&c->mu, NULL);
	/* At start nothing is master and no deadline runs, so a request may take a whole TTL (a
	 * fresh etcd's first commits can be slow: fsync on every member); once registered,
	 * each gets a tenth of the TTL, so three dead endpoints cost under a third. */
	c->etcd = cl_etcd_open(cfg->urls, cfg->ttl_s * 1000, err, errlen);
	if (!c->etcd) {
		free(c);
		return NULL;
	}
	bool said = false;
	int rc;
	while ((rc = register_member(c)) != 0) {
		if (!cfg->wait) {
			snprintf(err, errlen, "cannot reach etcd (%s); start it, fix --cluster, or "
				 "add --cluster-wait", cl_etcd_error(c->etcd));
			cl_etcd_close(c->etcd);
			free(c);
			return NULL;
		}
		if (!said)
			fprintf(stderr, "ringflow-controller: cluster: waiting for etcd (%s)\n",
				cl_etcd_error(c->etcd));
		said = true;
		sleep(1);
	}
	if (cfg->lldp_key && share_lldp_key(c, cfg->lldp_key, err, errlen) != 0) {
		cl_etcd_revoke(c->etcd, c->lease);
		cl_etcd_close(c->etcd);
		free(c);
		return NULL;
	}
	cl_etcd_set_timeout(c->etcd, cfg->ttl_s * 100);
	set_fence(c, c->renewed_ms + (uint64_t)c->ttl_s * 2000 / 3);
	fprintf(stderr, "ringflow-controller: cluster: member %s under %s, lease %" PRId64
		" (TTL %" PRId64 " s) at %s\n", c->node, c->prefix, c->lease, c->ttl_s,
		cl_etcd_endpoint(c->etcd));
	render_now(c);
	if (pthread_create(&c->thread, NULL, run, c) != 0) {
		snprintf(err, errlen, "cannot start the cluster thread");
		cl_etcd_revoke(c->etcd, c->lease);
		cl_etcd_close(c->etcd);
		free(c->json);
		free(c);
		return NULL;
	}
	return c;
}

void cl_cluster_stop(struct cl_cluster *c)
{
	if (!c)
		return;
	atomic_store_explicit(&c->stop, true, memory_order_relaxed); /* Relaxed: a flag */
	pthread_join(c->thread, NULL);
	/* Our master keys go with the lease: the others take the switches at once. */
	cl_etcd_revoke(c->etcd, c->lease);
	cl_etcd_close(c->etcd);
	members_free(c);
	free(c->masters);
	free(c->all);
	free(c->sh_hosts);
	free(c->sh_links);
	for (unsigned i = 0; i < CL_ROLE_SLOTS; i++)
		free(c->seed[i]);
	free(c->json);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
