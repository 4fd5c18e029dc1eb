/*
 * apps/openflow/controller/ofc_json.c: the JSON views behind the REST API (ofc_rest.h).
 * Each view walks one lock-free hash (between two quiescent states of the caller), copies
 * the entries out, sorts them by key (dpid order) and prints them. Values are numbers, so
 * nothing read can have been freed under us.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ofc_rest.h"

struct kv {
	uint8_t key[32];
	uint64_t v;
};

static int kv_cmp(const void *a, const void *b)
{
	return memcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key, 32);
}

/* The entries of h (whose first 8 key bytes equal *dpid_be when it is not NULL), sorted. */
static struct kv *collect(const struct rf_hash *h, const uint8_t *dpid_be, size_t *n)
{
	size_t cap = 64, len = 0, klen = rf_hash_key_len(h);
	struct kv *a = malloc(cap * sizeof(*a));
	struct rf_hash_iter it;
	const void *key;
	void *v;
	rf_hash_iter_init(h, &it);
	while (a && rf_hash_iter_next(h, &it, &key, &v)) {
		if (dpid_be && memcmp(key, dpid_be, 8) != 0)
			continue;
		if (len == cap) {
			struct kv *b = realloc(a, 2 * cap * sizeof(*a));
			if (!b)
				break;
			a = b;
			cap *= 2;
		}
		memset(a[len].key, 0, sizeof(a[len].key));
		memcpy(a[len].key, key, klen);
		a[len++].v = (uint64_t)(uintptr_t)v;
	}
	if (a)
		qsort(a, len, sizeof(*a), kv_cmp);
	*n = a ? len : 0;
	return a;
}

void ofc_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void dpid_str(FILE *out, const uint8_t *be)
{
	fprintf(out, "\"%016llx\"", (unsigned long long)ofc_get64(be));
}

static void mac_str(FILE *out, const uint8_t *m)
{
	fprintf(out, "\"%02x:%02x:%02x:%02x:%02x:%02x\"", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static uint64_t age(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static int switches(const struct ofc_rest_view *v, FILE *out)
{
	size_t n, np;
	struct kv *s = collect(v->net->switches, NULL, &n);
	struct kv *p = collect(v->net->ports, NULL, &np);
	uint64_t now = ofc_now_ms();
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		unsigned ports = 0;
		for (size_t j = 0; j < np; j++)
			ports += memcmp(p[j].key, s[i].key, 8) == 0;
		uint8_t ver = (uint8_t)(s[i].v >> 48);
		fprintf(out, "%s{\"dpid\":", i ? "," : "");
		dpid_str(out, s[i].key);
		fprintf(out, ",\"version\":\"%s\",\"ports\":%u,\"up_ms\":%llu}",
			ver == OF_VERSION_1_0 ? "1.0" : "1.3", ports,
			(unsigned long long)age(now, s[i].v & 0xffffffffffffull));
	}
	fputs("]\n", out);
	free(s);
	free(p);
	return 200;
}

static int parse_dpid(const char *s, const char *end, uint8_t be[8])
{
	if (end - s < 1 || end - s > 16)
		return -1;
	uint64_t d = 0;
	for (const char *c = s; c < end; c++) {
		int x = *c >= '0' && *c <= '9' ? *c - '0'
			: *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
			: *c >= 'A' && *c <= 'F' ? *c - 'A' + 10 : -1;
		if (x < 0)
			return -1;
		d = d << 4 | (uint64_t)x;
	}
	ofc_put64(be, d);
	return 0;
}

static bool switch_known(const struct ofc_rest_view *v, const uint8_t be[8])
{
	return rf_hash_lookup(v->net->switches, be) != NULL;
}

static int ports(const struct ofc_rest_view *v, const uint8_t be[8], FILE *out)
{
	if (!switch_known(v, be)) {
		fputs("{\"error\":\"no such switch\"}\n", out);
		return 404;
	}
	size_t n;
	struct kv *p = collect(v->net->ports, be, &n);
	fputc('[', out);
	for (size_t i = 0; i < n; i++) {
		uint8_t hw[6];
		for (int k = 0; k < 6; k++)
			hw[k] = (uint8_t)(p[i].v >> (56 - 8 * k));
		char name[17] = {0};
		memcpy(name, p[i].key + 12, 16);
		uint32_t no = of_get32(p[i].key + 8);
		fprintf(out, "%s{\"port_no\":", i ? "," : "");
		if (no >= OFPP_MAX)
			fputs(no == OFPP_LOCAL ? "\"LOCAL\"" : "\"reserved\"", out);
		else
			fprintf(out, "%u", no);
		fputs(",\"name\":", out);
		ofc_json_str(out, name);
		fputs(",\"hw_addr\":", out);
		mac_str(out, hw);
		fprintf(out, ",\"link_down\":%s,\"admin_down\":%s}",
			p[i].v & OFC_PORT_LINK_DOWN ? "true" : "false",
			p[i].v & OFC_PORT_ADMIN_DOWN ? "true" : "false");
	}
	fputs("]\n", out);
	free(p);
	return 200;
}

/* --cluster: appends what the other members published for table (0 hosts, 1 links) to
 * a[0..*n), as if seen age_ms ago, and sorts again. */
static struct kv *merge_shared(const struct ofc_rest_view *v, int table, struct kv *a, size_t *n,
			       uint64_t seen)
{
	uint8_t (*keys)[32] = NULL;
	size_t m = v->cluster_shared ? v->cluster_shared(v->cluster_arg, table, &keys) : 0;
	struct kv *b = m && a ? realloc(a, (*n + m) * sizeof(*a)) : a;
	if (b) {
		for (size_t i = 0; m && i < m; i++) {
			memcpy(b[*n + i].key, keys[i], 32);
			b[*n + i].v = seen + 1;
		}
		if (m)
			*n += m;
		qsort(b, *n, sizeof(*b), kv_cmp);
	}
	free(keys);
	return b ? b : a;
}

static int links(const struct ofc_rest_view *v, FILE *out)
{
	size_t n;
	struct kv *l = collect(v->net->links, NULL, &n);
	uint64_t now = ofc_now_ms();
	/* the members' published links count as seen one LLDP period ago */
	l = merge_shared(v, 1, l, &n, now > OFC_TIMER_MS ? now - OFC_TIMER_MS : 0);
	fputc('[', out);
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && !memcmp(l[i].key, l[i - 1].key, sizeof(l[i].key)))
			continue; /* known here and published too: once */
		fprintf(out, "%s{\"src\":{\"dpid\":", shown++ ? "," : "");
		dpid_str(out, l[i].key);
		fprintf(out, ",\"port\":%u},\"dst\":{\"dpid\":", of_get32(l[i].key + 8));
		dpid_str(out, l[i].key + 12);
		fprintf(out, ",\"port\":%u},\"age_ms\":%llu}", of_get32(l[i].key + 20),
			(unsigned long long)age(now, l[i].v - 1));
	}
	fputs("]\n", out);
	free(l);
	return 200;
}

static int hosts(const struct ofc_rest_view *v, FILE *out)
{
	size_t n;
	struct kv *h = collect(v->net->hosts, NULL, &n);
	uint64_t now = ofc_now_ms();
	/* published hosts count as seen one LLDP period ago (the newest entry per MAC shows) */
	h = merge_shared(v, 0, h, &n, now > OFC_TIMER_MS ? now - OFC_TIMER_MS : 0);
	fputc('[', out);
	unsigned shown = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i, best = i; /* sorted by MAC first: the run of one host's entries */
		uint32_t ip = 0;
		for (; j < n && memcmp(h[j].key, h[i].key, 6) == 0; j++) {
			if (h[j].v > h[best].v)
				best = j;
			if (of_get32(h[j].key + 18))
				ip = of_get32(h[j].key + 18);
		}
		const uint8_t *k = h[best].key;
		if (of_get32(k + 18))
			ip = of_get32(k + 18);
		fprintf(out, "%s{\"mac\":", shown++ ? "," : "");
		mac_str(out, k);
		fputs(",\"dpid\":", out);
		dpid_str(out, k + 6);
		fprintf(out, ",\"port\":%u,\"ipv4\":", of_get32(k + 14));
		if (ip)
			fprintf(out, "\"%u.%u.%u.%u\"", ip >> 24, ip >> 16 & 255, ip >> 8 & 255,
				ip & 255);
		else
			fputs("null", out);
		fprintf(out, ",\"age_ms\":%llu}", (unsigned long long)age(now, h[best].v - 1));
		i = j;
	}
	fputs("]\n", out);
	free(h);
	return 200;
}

int ofc_rest_render_flows(const struct ofc_rest_view *v, const uint8_t be[8], const char *json,
			  bool truncated, const char *err, FILE *out)
{
	fputs("{\"dpid\":", out);
	dpid_str(out, be);
	fputs(",\"flows\":", out);
	if (json) {
		fputs(json, out);
		if (truncated)
			fprintf(out, ",\"flows_truncated\":\"the answer stopped at %d entries or %ld "
				"bytes\"", OFC_FLOWS_MAX, OFC_FLOWS_MAX_BYTES);
	} else {
		fputs("null,\"flows_error\":", out);
		ofc_json_str(out, err ? err : "no answer");
	}
	fputs(",\"learned_macs\":{\"what\":\"learning switch MAC table: for each entry the "
	      "controller installs in_port+eth_dst -> out_port (priority 100, idle 60 s) on the "
	      "next PACKET_IN to that MAC\",\"entries\":[", out);
	size_t n = 0;
	struct kv *m = v->h ? collect(v->h[0].macs, be, &n) : NULL;
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{\"eth_dst\":" : "{\"eth_dst\":", out);
		mac_str(out, m[i].key + 8);
		fprintf(out, ",\"out_port\":%llu}", (unsigned long long)((uint32_t)m[i].v - 1));
	}
	fputs("]}}\n", out);
	free(m);
	return 200;
}

/* GET /api/flows/{dpid}: asking the switch is the REST server's (OFC_REST_ASYNC). */
static int flows(const struct ofc_rest_view *v, const uint8_t be[8], FILE *out)
{
	if (!switch_known(v, be)) {
		fputs("{\"error\":\"no such switch\"}\n", out);
		return 404;
	}
	if (v->flows)
		return OFC_REST_ASYNC;
	return ofc_rest_render_flows(v, be, NULL, false, "not asked (no controller connection)",
				     out);
}

bool ofc_rest_flows_path(const char *path, uint8_t be[8])
{
	const char *q = strchr(path, '?');
	size_t len = q ? (size_t)(q - path) : strlen(path);
	return len > 11 && !strncmp(path, "/api/flows/", 11) &&
	       parse_dpid(path + 11, path + len, be) == 0;
}

static int stats(const struct ofc_rest_view *v, FILE *out)
{
	struct ofc_net *net = v->net;
	fputs("{\"cores\":[", out);
	unsigned nc = v->rt ? rf_runtime_ncores(v->rt) : 0;
	for (unsigned i = 0; i < nc; i++) {
		struct rf_counters c;
		rf_runtime_counters(v->rt, i, &c);
		fprintf(out, "%s{\"core\":%u,\"cpu\":%d,\"rx\":%llu,\"tx\":%llu,\"drops\":%llu,"
			"\"loops\":%llu,\"stalls\":%llu,\"stall_max_us\":%.1f}", i ? "," : "", i,
			rf_runtime_cpu(v->rt, i), (unsigned long long)c.rx, (unsigned long long)c.tx,
			(unsigned long long)(c.drop_ring_full + c.drop_pool_empty + c.drop_driver),
			(unsigned long long)c.loops, (unsigned long long)c.stalls,
			(double)c.stall_max_ns / 1e3);
	}
	fputs("],\"handlers\":[", out);
	uint64_t pin = 0;
	for (unsigned i = 0; i < v->nh; i++) {
		struct ofc_handler *h = &v->h[i];
		uint64_t p = atomic_load_explicit(&h->packet_ins, memory_order_relaxed);
		pin += p;
		fprintf(out, "%s{\"packet_in\":%llu,\"flow_mod\":%llu,\"packet_out\":%llu,"
			"\"flood\":%llu", i ? "," : "", (unsigned long long)p,
			(unsigned long long)atomic_load_explicit(&h->flow_mods, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&h->packet_outs, memory_order_relaxed),
			(unsigned long long)atomic_load_explicit(&h->floods, memory_order_relaxed));
		const struct ofc_learn_stats *ls = h->learn ? ofc_learn_stats(h->learn) : NULL;
		if (ls)
			fprintf(out, ",\"macs_refused\":%llu,\"hosts_refused\":%llu,\"macs_aged\":%llu,"
				"\"hosts_aged\":%llu,\"switches_gone\":%llu,\"entries_reaped\":%llu",
				(unsigned long long)atomic_load_explicit(&ls->macs_refused, memory_order_relaxed),
				(unsigned long long)atomic_load_explicit(&ls->hosts_refused, memory_order_relaxed),
				(unsigned long long)atomic_load_explicit(&ls->macs_aged, memory_order_relaxed),
				(unsigned long long)atomic_load_explicit(&ls->hosts_aged, memory_order_relaxed),
				(unsigned long long)atomic_load_explicit(&ls->switches_gone, memory_order_relaxed),
				(unsigned long long)atomic_load_explicit(&ls->reaped, memory_order_relaxed));
		fputc('}', out);
	}
	fputs("],\"messages_in\":{", out);
	bool first = true;
	for (int t = 0; t < OF_TYPE_COUNT; t++) {
		uint64_t c = t == OF_PACKET_IN ? pin
				: atomic_load_explicit(&net->msgs[t], memory_order_relaxed);
		if (!c)
			continue;
		fprintf(out, "%s\"%s\":%llu", first ? "" : ",", of_type_name((enum of_type)t),
			(unsigned long long)c);
		first = false;
	}
	uint64_t up = atomic_load_explicit(&net->first_up_ms, memory_order_relaxed);
	uint64_t last = atomic_load_explicit(&net->last_link_ms, memory_order_relaxed);
	fprintf(out, "},\"lldp\":{\"out\":%llu,\"in\":%llu,\"rejected\":%llu},"
		"\"discovery\":{\"switches\":%zu,"
		"\"links\":%zu,\"hosts_entries\":%zu,\"first_switch_up_to_last_new_link_ms\":",
		(unsigned long long)atomic_load_explicit(&net->lldp_out, memory_order_relaxed),
		(unsigned long long)atomic_load_explicit(&net->lldp_in, memory_order_relaxed),
		(unsigned long long)atomic_load_explicit(&net->lldp_rejected, memory_order_relaxed),
		rf_hash_count(net->switches), rf_hash_count(net->links), rf_hash_count(net->hosts));
	if (up && last >= up)
		fprintf(out, "%llu}", (unsigned long long)(last - up));
	else
		fputs("null}", out);
	/* bucket i counts replies that took [2^i, 2^(i+1)) us (bucket 0: < 2 us) */
	fputs(",\"packet_in_to_reply_us\":{\"what\":\"I/O poller hand-off to the handler until "
	      "the reply is queued on the connection\",\"buckets\":[", out);
	for (int i = 0; i < OFC_LAT_BUCKETS; i++)
		fprintf(out, "%s{\"ge_us\":%u,\"count\":%llu}", i ? "," : "", i ? 1u << i : 0u,
			(unsigned long long)atomic_load_explicit(&net->lat[i], memory_order_relaxed));
	fputs("]}}\n", out);
	return 200;
}

int ofc_rest_render(const struct ofc_rest_view *v, const char *path, FILE *out,
		    const char **ctype)
{
	*ctype = "application/json";
	uint8_t be[8];
	const char *q = strchr(path, '?');
	size_t len = q ? (size_t)(q - path) : strlen(path);
	char p[256];
	if (len >= sizeof(p))
		goto notfound;
	memcpy(p, path, len);
	p[len] = '\0';
	if (!strcmp(p, "/") || !strcmp(p, "/index.html")) {
		*ctype = "text/html; charset=utf-8";
		fputs(ofc_page_html, out);
		return 200;
	}
	if (!strcmp(p, "/api/switches"))
		return switches(v, out);
	if (!strcmp(p, "/api/links"))
		return links(v, out);
	if (!strcmp(p, "/api/hosts"))
		return hosts(v, out);
	if (!strcmp(p, "/api/stats"))
		return stats(v, out);
	if (!strcmp(p, "/api/cluster")) {
		if (v->cluster)
			return v->cluster(v->cluster_arg, out);
		fputs("{\"status\":\"standalone\",\"what\":\"this controller runs without "
		      "--cluster\"}\n", out);
		return 200;
	}
	if (!strncmp(p, "/api/switches/", 14)) {
		const char *d = p + 14, *slash = strchr(d, '/');
		if (slash && !strcmp(slash, "/ports")) {
			if (parse_dpid(d, slash, be) < 0)
				goto baddpid;
			return ports(v, be, out);
		}
	}
	if (!strncmp(p, "/api/flows/", 11)) {
		if (parse_dpid(p + 11, p + strlen(p), be) < 0)
			goto baddpid;
		return flows(v, be, out);
	}
notfound:
	fputs("{\"error\":\"not found\"}\n", out);
	return 404;
baddpid:
	fputs("{\"error\":\"bad dpid: use 1 to 16 hex digits\"}\n", out);
	return 400;
}
