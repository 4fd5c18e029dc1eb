/*
 * apps/openflow/controller/cl_etcd.c: etcd v3 JSON-gateway calls over libcurl (cl_etcd.h).
 *
 * Each call POSTs one JSON body and parses one JSON answer. The easy handle is kept between
 * calls (libcurl reuses the connection). A call tries the endpoints in turn from the last
 * one that answered; only a transport failure moves on to the next (an etcd error is an
 * answer). An endpoint whose last request got no answer (silent: dead, hung, or a follower
 * waiting for a leader) is tried after the others, and after a call that none answered the
 * next starts one further on, so a hung member costs one timeout and not one per call. A
 * lease keepalive that the current endpoint does not answer, and the status question, go to
 * every endpoint at once (round_all): one timeout in all. The watch stream is its own easy
 * handle in a multi handle, polled by its owner with a timeout; its write callback splits the
 * stream into lines, one JSON object each.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <ringflow/json.h>

#include "cl_etcd.h"

struct cl_etcd {
	CURL *curl;
	char *urls[CL_ETCD_MAX_URLS];
	unsigned n_urls, cur;
	bool silent[CL_ETCD_MAX_URLS]; /* its last request got no answer: tried last */
	bool ka_failed;                /* the last keepalive did not renew: retries go to all */
	unsigned timeout_ms;
	struct rf_buf reply;
	char err[256];
};

static void set_err(struct cl_etcd *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct cl_etcd *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
}

/* ---- base64 ------------------------------------------------------------------------------ */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void cl_b64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = B64[v >> 18 & 63];
		out[o++] = B64[v >> 12 & 63];
		out[o++] = i + 1 < n ? B64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? B64[v & 63] : '=';
	}
	out[o] = '\0';
}

static int b64_val(char c)
{
	const char *p = c ? strchr(B64, c) : NULL;
	return p ? (int)(p - B64) : -1;
}

long cl_b64_decode(const char *s, uint8_t *out)
{
	size_t n = strlen(s), o = 0;
	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int a = b64_val(s[i]), b = b64_val(s[i + 1]);
		int c = s[i + 2] == '=' ? -2 : b64_val(s[i + 2]);
		int d = s[i + 3] == '=' ? -2 : b64_val(s[i + 3]);
		bool last = i + 4 == n;
		if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2) ||
		    ((c == -2 || d == -2) && !last))
			return -1;
		uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)(c < 0 ? 0 : c) << 6 |
			     (uint32_t)(d < 0 ? 0 : d);
		out[o++] = (uint8_t)(v >> 16);
		if (c >= 0)
			out[o++] = (uint8_t)(v >> 8);
		if (d >= 0)
			out[o++] = (uint8_t)v;
	}
	out[o] = '\0';
	return (long)o;
}

/* A JSON string member as an exact 64-bit number (etcd sends int64 as strings); def when
 * absent (proto3 leaves zero values out). */
static int64_t get_i64(const struct rf_json *o, const char *key, int64_t def)
{
	const struct rf_json *v = rf_json_get(o, key);
	if (!v)
		return def;
	if (v->type == RF_JSON_NUM)
		return (int64_t)v->num;
	if (v->type != RF_JSON_STR)
		return def;
	char *end;
	errno = 0;
	long long x = strtoll(v->str, &end, 10);
	return errno || *end || end == v->str ? def : (int64_t)x;
}

/* ---- one call ------------------------------------------------------------------------------ */

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct rf_buf *b = arg;
	size_t n = size * nmemb;
	rf_buf_append(b, p, n);
	return b->full ? 0 : n; /* past the ceiling: abort the transfer */
}

struct cl_etcd *cl_etcd_open(const char *urls, unsigned timeout_ms, char *err, size_t errlen)
{
	static bool global_done; /* the controller opens clients from one thread, at start */
	if (!global_done) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		global_done = true;
	}
	struct cl_etcd *e = calloc(1, sizeof(*e));
	if (!e || !(e->curl = curl_easy_init())) {
		snprintf(err, errlen, "out of memory for the etcd client");
		free(e);
		return NULL;
	}
	e->timeout_ms = timeout_ms ? timeout_ms : 1000;
	rf_buf_init(&e->reply, CL_ETCD_MAX_REPLY);
	const char *p = urls;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (e->n_urls == CL_ETCD_MAX_URLS || len < 8 || len > 200 ||
		    strncmp(p, "http://", 7) != 0) {
			snprintf(err, errlen, "--cluster etcd=%s: give 1..%d endpoints as "
				 "http://HOST:PORT separated by commas", urls, CL_ETCD_MAX_URLS);
			cl_etcd_close(e);
			return NULL;
		}
		e->urls[e->n_urls] = strndup(p, len);
		if (!e->urls[e->n_urls++]) {
			snprintf(err, errlen, "out of memory for the etcd client");
			cl_etcd_close(e);
			return NULL;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	if (!e->n_urls) {
		snprintf(err, errlen, "--cluster etcd=URL: no endpoint given");
		cl_etcd_close(e);
		return NULL;
	}
	return e;
}

void cl_etcd_close(struct cl_etcd *e)
{
	if (!e)
		return;
	if (e->curl)
		curl_easy_cleanup(e->curl);
	for (unsigned i = 0; i < e->n_urls; i++)
		free(e->urls[i]);
	rf_buf_free(&e->reply);
	free(e);
}

void cl_etcd_set_timeout(struct cl_etcd *e, unsigned timeout_ms)
{
	e->timeout_ms = timeout_ms ? timeout_ms : 1000;
}

const char *cl_etcd_error(const struct cl_etcd *e)
{
	return e->err;
}

const char *cl_etcd_endpoint(const struct cl_etcd *e)
{
	return e->urls[e->cur];
}

static void easy_setup(CURL *c, const char *url, const char *body, unsigned timeout_ms,
		       struct rf_buf *out)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
}

/* The answer of endpoint i to a POST on path (cc, HTTP code, body in out): the parsed
 * object, or NULL with e->err and *rc. */
static struct rf_json *answer(struct cl_etcd *e, unsigned i, const char *path, CURLcode cc,
			      long code, const struct rf_buf *out, int *rc)
{
	if (cc != CURLE_OK) {
		set_err(e, "etcd %s: %s", e->urls[i],
			out->full ? "answer too long" : curl_easy_strerror(cc));
		*rc = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -ECONNREFUSED;
		return NULL;
	}
	char perr[128];
	struct rf_json *j = out->len ? rf_json_parse(out->p, out->len, perr, sizeof(perr)) : NULL;
	if (!j || j->type != RF_JSON_OBJ) {
		set_err(e, "etcd %s%s: HTTP %ld, %s", e->urls[i], path, code,
			j ? "answer is not an object" : out->len ? perr : "empty answer");
		rf_json_free(j);
		*rc = -EPROTO;
		return NULL;
	}
	const char *msg = rf_json_get_str(j, "error", NULL);
	if (!msg)
		msg = rf_json_get_str(j, "message", NULL);
	if (code != 200 || msg) {
		set_err(e, "etcd %s%s: HTTP %ld: %s", e->urls[i], path, code, msg ? msg : "error");
		rf_json_free(j);
		*rc = -EPROTO;
		return NULL;
	}
	e->err[0] = '\0';
	return j;
}

/* POSTs body to path on endpoint i: the parsed answer, or NULL with e->err and *rc. */
static struct rf_json *post_one(struct cl_etcd *e, unsigned i, const char *path,
				const char *body, int *rc)
{
	char url[256];
	snprintf(url, sizeof(url), "%s%s", e->urls[i], path);
	rf_buf_reset(&e->reply);
	curl_easy_reset(e->curl);
	easy_setup(e->curl, url, body, e->timeout_ms, &e->reply);
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
	CURLcode cc = curl_easy_perform(e->curl);
	long code = 0;
	if (cc == CURLE_OK)
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &code);
	e->silent[i] = cc != CURLE_OK && !e->reply.full;
	return answer(e, i, path, cc, code, &e->reply, rc);
}

/* POSTs to each endpoint until one answers (an etcd error included): from the current one
 * on, the silent ones after the others. Each is tried once. */
static struct rf_json *post(struct cl_etcd *e, const char *path, const char *body, int *rc)
{
	bool silent[CL_ETCD_MAX_URLS]; /* as the call starts: each endpoint is tried once */
	memcpy(silent, e->silent, sizeof(silent));
	for (unsigned pass = 0; pass < 2; pass++)
		for (unsigned k = 0; k < e->n_urls; k++) {
			unsigned i = (e->cur + k) % e->n_urls;
			if (silent[i] != (pass == 1))
				continue;
			struct rf_json *j = post_one(e, i, path, body, rc);
			if (j || *rc == -EPROTO) {
				e->cur = i;
				return j;
			}
		}
	/* None answered: the next call starts from the next one (when all are silent, the
	 * one tried first here is likely the member that hung and held up the others). */
	e->cur = (e->cur + 1) % e->n_urls;
	return NULL;
}

/* What one round to every endpoint learned (round_all). */
struct round {
	int64_t ttl;   /* the renewed lease's TTL (0: expired on etcd's side) */
	bool renewed;  /* a keepalive answered with a result */
	bool answered; /* a status answered */
	bool leader;   /* ... with a leader */
	int rc;        /* the last failure, -errno (-EPROTO: answers without what was asked) */
};

enum { RQ_KEEPALIVE, RQ_STATUS, RQ_KINDS };
static const char *const rq_path[RQ_KINDS] = {"/v3/lease/keepalive", "/v3/maintenance/status"};

/* Takes in an answer j to request kind k; true when it ends the round (a renewal). */
static bool round_take(struct round *r, unsigned k, const struct rf_json *j)
{
	if (k == RQ_KEEPALIVE) {
		const struct rf_json *res = rf_json_get(j, "result");
		if (!res || res->type != RF_JSON_OBJ)
			return false;
		r->ttl = get_i64(res, "TTL", 0); /* absent: expired (proto3 leaves 0 out) */
		return r->renewed = true;
	}
	r->answered = true;
	r->leader |= get_i64(j, "leader", 0) != 0;
	return false;
}

/* One round to every endpoint at once, so a hung member costs one timeout and not one per
 * member: the keepalive ka_body and, if status, the status question. It ends at the first
 * renewal; or once every
 * endpoint that was not silent has answered the status question and none has a leader
 * (quorum lost: no keepalive can succeed, and a member silent before is not waited for);
 * or when every request is answered or timed out. The endpoint that ended it becomes the
 * current one (or else the first from the current one on that answered); one that answered
 * nothing by the end counts as silent. Only for requests that may arrive twice. */
static void round_all(struct cl_etcd *e, const char *ka_body, bool status, struct round *r)
{
	CURLM *m = curl_multi_init();
	CURL *h[CL_ETCD_MAX_URLS][RQ_KINDS] = {{0}};
	struct rf_buf out[CL_ETCD_MAX_URLS][RQ_KINDS];
	bool heard[CL_ETCD_MAX_URLS] = {0}, told[CL_ETCD_MAX_URLS] = {0}; /* told: status done */
	int running = 0, end = -1;
	bool leaderless = false;
	*r = (struct round){.rc = m ? -EPROTO : -ENOMEM};
	for (unsigned i = 0; i < e->n_urls; i++)
		for (unsigned k = 0; k < RQ_KINDS; k++) {
			rf_buf_init(&out[i][k], CL_ETCD_MAX_REPLY);
			if (!m || (k == RQ_STATUS && !status) ||
			    !(h[i][k] = curl_easy_init()))
				continue;
			char url[256];
			snprintf(url, sizeof(url), "%s%s", e->urls[i], rq_path[k]);
			easy_setup(h[i][k], url, k == RQ_KEEPALIVE ? ka_body : "{}", e->timeout_ms,
				   &out[i][k]);
			curl_easy_setopt(h[i][k], CURLOPT_TIMEOUT_MS, (long)e->timeout_ms);
			curl_multi_add_handle(m, h[i][k]);
			running = 1;
		}
	while (running && end < 0 && !leaderless) { /* bounded: each handle has its timeout */
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		CURLMsg *msg;
		int left;
		while (end < 0 && (msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			unsigned i = 0, k = 0;
			while (h[i][k] != msg->easy_handle)
				if (++k == RQ_KINDS) {
					k = 0;
					i++;
				}
			long code = 0;
			CURLcode cc = msg->data.result;
			if (cc == CURLE_OK)
				curl_easy_getinfo(h[i][k], CURLINFO_RESPONSE_CODE, &code);
			heard[i] |= cc == CURLE_OK || out[i][k].full;
			told[i] |= k == RQ_STATUS;
			struct rf_json *j = answer(e, i, rq_path[k], cc, code, &out[i][k], &r->rc);
			if (j && round_take(r, k, j))
				end = (int)i;
			rf_json_free(j);
		}
		leaderless = end < 0 && r->answered && !r->leader;
		for (unsigned i = 0; i < e->n_urls && leaderless; i++)
			leaderless = told[i] || e->silent[i];
		if (running && end < 0 && !leaderless)
			curl_multi_poll(m, NULL, 0, (int)e->timeout_ms, NULL);
	}
	for (unsigned i = 0; i < e->n_urls; i++)
		for (unsigned k = 0; k < RQ_KINDS; k++) {
			if (h[i][k]) {
				curl_multi_remove_handle(m, h[i][k]);
				curl_easy_cleanup(h[i][k]);
			}
			rf_buf_free(&out[i][k]);
		}
	if (!m) {
		set_err(e, "out of memory for etcd requests");
		return;
	}
	curl_multi_cleanup(m);
	for (unsigned i = 0; i < e->n_urls; i++)
		e->silent[i] = !heard[i];
	if (end >= 0) {
		e->cur = (unsigned)end;
		e->err[0] = '\0';
		return;
	}
	for (unsigned n = 0; n < e->n_urls && !heard[e->cur]; n++)
		if (heard[(e->cur + n) % e->n_urls])
			e->cur = (e->cur + n) % e->n_urls;
}

/* The request body fmt, ... in a new string of at most CL_ETCD_MAX_BODY bytes, or NULL with
 * e->err and *rc (-E2BIG, -ENOMEM). */
static char *body_vfmt(struct cl_etcd *e, int *rc, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || (size_t)n > CL_ETCD_MAX_BODY) {
		set_err(e, "etcd request too long");
		*rc = -E2BIG;
		return NULL;
	}
	char *p = malloc((size_t)n + 1);
	if (!p) {
		set_err(e, "out of memory for an etcd request");
		*rc = -ENOMEM;
		return NULL;
	}
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

static char *body_fmt(struct cl_etcd *e, int *rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static char *body_fmt(struct cl_etcd *e, int *rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = body_vfmt(e, rc, fmt, ap);
	va_end(ap);
	return p;
}

/* POSTs the body fmt, ... (printf-style) to path, as post: the parsed answer, or NULL with
 * e->err and *rc. */
static struct rf_json *post_fmt(struct cl_etcd *e, const char *path, int *rc, const char *fmt,
				...) __attribute__((format(printf, 4, 5)));
static struct rf_json *post_fmt(struct cl_etcd *e, const char *path, int *rc, const char *fmt,
				...)
{
	va_list ap;
	va_start(ap, fmt);
	char *body = body_vfmt(e, rc, fmt, ap);
	va_end(ap);
	struct rf_json *j = body ? post(e, path, body, rc) : NULL;
	free(body);
	return j;
}

/* base64(s[0..n)) in a new string, or NULL (out of memory). */
static char *b64(const char *s, size_t n)
{
	char *enc = malloc(4 * (n / 3 + 1) + 1);
	if (enc)
		cl_b64_encode((const uint8_t *)s, n, enc);
	return enc;
}

/* For a call whose base64 strings could not be made: NULL with e->err and *rc. */
static struct rf_json *no_memory(struct cl_etcd *e, int *rc)
{
	set_err(e, "out of memory for an etcd request");
	*rc = -ENOMEM;
	return NULL;
}

/* The end of the range of keys starting with prefix: prefix with its last byte + 1. */
static void prefix_end(const char *prefix, char *end, size_t cap)
{
	snprintf(end, cap, "%s", prefix);
	size_t n = strlen(end);
	while (n && (uint8_t)end[n - 1] == 0xff)
		end[--n] = '\0';
	if (n)
		end[n - 1]++;
}

int cl_etcd_grant(struct cl_etcd *e, int64_t ttl, int64_t *id, int64_t *granted_ttl)
{
	int rc = 0;
	struct rf_json *j = post_fmt(e, "/v3/lease/grant", &rc, "{\"TTL\":%" PRId64 "}", ttl);
	if (!j)
		return rc;
	*id = get_i64(j, "ID", 0);
	*granted_ttl = get_i64(j, "TTL", 0);
	rf_json_free(j);
	if (!*id || *granted_ttl <= 0) {
		set_err(e, "etcd lease grant: no lease in the answer");
		return -EPROTO;
	}
	return 0;
}

int cl_etcd_keepalive(struct cl_etcd *e, int64_t id, int64_t *ttl, int *lead)
{
	char body[64];
	snprintf(body, sizeof(body), "{\"ID\":\"%" PRId64 "\"}", id);
	if (!e->silent[e->cur] && !e->ka_failed) { /* the current endpoint first: its
						      * connection is kept */
		int rc = 0;
		struct round r = {0};
		struct rf_json *j = post_one(e, e->cur, rq_path[RQ_KEEPALIVE], body, &rc);
		bool ok = j && round_take(&r, RQ_KEEPALIVE, j);
		rf_json_free(j);
		if (ok) {
			*ttl = r.ttl;
			return 0;
		}
	}
	struct round r;
	round_all(e, body, lead != NULL, &r);
	e->ka_failed = !r.renewed;
	if (r.renewed) {
		*ttl = r.ttl;
		return 0;
	}
	if (!e->err[0]) /* answered, but not with a renewal */
		set_err(e, "etcd lease keepalive: no result in the answers");
	if (lead) {
		*lead = r.leader ? 1 : r.answered ? 0 : r.rc;
		if (r.answered && !r.leader)
			set_err(e, "etcd: members answer but none has a leader (quorum lost)");
	}
	return r.rc;
}

int cl_etcd_revoke(struct cl_etcd *e, int64_t id)
{
	int rc = 0;
	struct rf_json *j = post_fmt(e, "/v3/lease/revoke", &rc, "{\"ID\":\"%" PRId64 "\"}", id);
	rf_json_free(j);
	return j ? 0 : rc;
}

int cl_etcd_put(struct cl_etcd *e, const char *key, const char *val, size_t vlen, int64_t lease,
		int64_t *rev)
{
	char *k = b64(key, strlen(key)), *v = b64(val, vlen);
	int rc = 0;
	struct rf_json *j = !k || !v ? no_memory(e, &rc)
			   : post_fmt(e, "/v3/kv/put", &rc,
				      "{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%" PRId64 "\"}",
				      k, v, lease);
	free(k);
	free(v);
	if (!j)
		return rc;
	if (rev)
		*rev = get_i64(rf_json_get(j, "header"), "revision", 0);
	rf_json_free(j);
	return 0;
}

void cl_kv_free(struct cl_kv *kvs, size_t n)
{
	for (size_t i = 0; kvs && i < n; i++) {
		free(kvs[i].key);
		free(kvs[i].val);
	}
	free(kvs);
}

/* One kv object of an answer into *kv (0), or -EPROTO (not base64, key missing). */
static int read_kv(const struct rf_json *o, struct cl_kv *kv)
{
	memset(kv, 0, sizeof(*kv));
	const char *k = rf_json_get_str(o, "key", NULL);
	const char *v = rf_json_get_str(o, "value", ""); /* absent: empty */
	if (!k)
		return -EPROTO;
	size_t klen = strlen(k), vlen = strlen(v);
	kv->key = malloc(klen / 4 * 3 + 4);
	if (!kv->key || cl_b64_decode(k, (uint8_t *)kv->key) < 0) {
		free(kv->key);
		kv->key = NULL;
		return -EPROTO;
	}
	if (vlen / 4 * 3 <= CL_ETCD_MAX_VALUE + 3) {
		kv->val = malloc(vlen / 4 * 3 + 4);
		long n = kv->val ? cl_b64_decode(v, (uint8_t *)kv->val) : -1;
		if (n < 0 || (size_t)n > CL_ETCD_MAX_VALUE) {
			free(kv->val);
			kv->val = NULL; /* garbage or oversize: the caller counts it */
		} else {
			kv->vlen = (size_t)n;
		}
	}
	kv->create_rev = get_i64(o, "create_revision", 0);
	kv->mod_rev = get_i64(o, "mod_revision", 0);
	kv->lease = get_i64(o, "lease", 0);
	return 0;
}

/* The kvs array of a range answer into a new array. */
static int read_kvs(struct cl_etcd *e, const struct rf_json *r, struct cl_kv **kvs, size_t *n)
{
	const struct rf_json *a = rf_json_get(r, "kvs");
	*kvs = NULL;
	*n = 0;
	if (!a)
		return 0;
	if (a->type != RF_JSON_ARR || a->n > CL_ETCD_MAX_KVS) {
		set_err(e, "etcd range: kvs is not an array of at most %d", CL_ETCD_MAX_KVS);
		return -EPROTO;
	}
	*kvs = calloc(a->n ? a->n : 1, sizeof(**kvs));
	if (!*kvs)
		return -ENOMEM;
	for (const struct rf_json *c = a->child; c; c = c->next)
		if (read_kv(c, &(*kvs)[*n]) == 0)
			(*n)++;
	return 0;
}

int cl_etcd_range(struct cl_etcd *e, const char *prefix, struct cl_kv **kvs, size_t *n,
		  int64_t *rev)
{
	char end[256];
	if (strlen(prefix) >= sizeof(end))
		return -ENAMETOOLONG;
	prefix_end(prefix, end, sizeof(end));
	char *k = b64(prefix, strlen(prefix)), *r = b64(end, strlen(end));
	int rc = 0;
	struct rf_json *j = !k || !r ? no_memory(e, &rc)
			   : post_fmt(e, "/v3/kv/range", &rc,
				      "{\"key\":\"%s\",\"range_end\":\"%s\",\"limit\":\"%d\"}", k,
				      r, CL_ETCD_MAX_KVS);
	free(k);
	free(r);
	if (!j)
		return rc;
	if (rev)
		*rev = get_i64(rf_json_get(j, "header"), "revision", 0);
	rc = read_kvs(e, j, kvs, n);
	rf_json_free(j);
	return rc;
}

int cl_etcd_create(struct cl_etcd *e, const char *key, const char *val, int64_t lease,
		   int64_t *rev, struct cl_kv *held)
{
	memset(held, 0, sizeof(*held)); /* empty on every path but "existed" */
	char *k = b64(key, strlen(key)), *v = b64(val, strlen(val));
	int rc = 0;
	struct rf_json *j =
		!k || !v ? no_memory(e, &rc)
			 : post_fmt(e, "/v3/kv/txn", &rc,
				    "{\"compare\":[{\"key\":\"%s\",\"target\":\"CREATE\",\"result\":"
				    "\"EQUAL\",\"create_revision\":\"0\"}],\"success\":[{\"request_put\":"
				    "{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%" PRId64 "\"}}],"
				    "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
				    k, k, v, lease, k);
	free(k);
	free(v);
	if (!j)
		return rc;
	const struct rf_json *s = rf_json_get(j, "succeeded");
	if (s && s->type == RF_JSON_BOOL && s->b) {
		*rev = get_i64(rf_json_get(j, "header"), "revision", 0);
		rf_json_free(j);
		return 1;
	}
	/* responses[0].response_range.kvs[0]: the key as it is */
	const struct rf_json *r = rf_json_get(j, "responses");
	r = r && r->type == RF_JSON_ARR ? rf_json_get(r->child, "response_range") : NULL;
	struct cl_kv *kvs = NULL;
	size_t n = 0;
	rc = r ? read_kvs(e, r, &kvs, &n) : -EPROTO;
	if (rc == 0 && n) {
		*held = kvs[0];
		kvs[0].key = kvs[0].val = NULL;
	}
	cl_kv_free(kvs, n);
	rf_json_free(j);
	return rc ? rc : 0; /* n == 0: deleted meanwhile; the caller tries again later */
}

int cl_etcd_delete_if(struct cl_etcd *e, const char *key, int64_t mod_rev)
{
	char *k = b64(key, strlen(key));
	int rc = 0;
	struct rf_json *j = !k ? no_memory(e, &rc)
			       : post_fmt(e, "/v3/kv/txn", &rc,
					  "{\"compare\":[{\"key\":\"%s\",\"target\":\"MOD\",\"result\":"
					  "\"EQUAL\",\"mod_revision\":\"%" PRId64 "\"}],\"success\":[{"
					  "\"request_delete_range\":{\"key\":\"%s\"}}]}",
					  k, mod_rev, k);
	free(k);
	if (!j)
		return rc;
	const struct rf_json *s = rf_json_get(j, "succeeded");
	rc = s && s->type == RF_JSON_BOOL && s->b;
	rf_json_free(j);
	return rc;
}

/* ---- watch ------------------------------------------------------------------------------- */

struct cl_watch {
	CURLM *multi;
	CURL *curl;
	struct rf_buf line; /* the stream's unfinished line */
	char *body;
	unsigned events;    /* counted by on_stream since the last poll */
	bool bad;           /* an unreadable line or a canceled watch: restart */
};

/* Stream data: each complete line is one JSON object {"result":{...,"events":[...]}}. */
static size_t on_stream(char *p, size_t size, size_t nmemb, void *arg)
{
	struct cl_watch *w = arg;
	size_t n = size * nmemb;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n') {
			rf_buf_append(&w->line, p + i, 1);
			if (w->line.full) {
				w->bad = true;
				return 0; /* a line past the ceiling: end the stream */
			}
			continue;
		}
		char perr[96];
		struct rf_json *j = w->line.len ? rf_json_parse(w->line.p, w->line.len, perr,
								sizeof(perr))
						: NULL;
		const struct rf_json *r = rf_json_get(j, "result");
		const struct rf_json *ev = rf_json_get(r, "events");
		const struct rf_json *cancel = rf_json_get(r, "canceled");
		if (!r || (cancel && cancel->type == RF_JSON_BOOL && cancel->b))
			w->bad = true;
		else if (ev && ev->type == RF_JSON_ARR)
			w->events += ev->n;
		rf_json_free(j);
		rf_buf_reset(&w->line);
	}
	return n;
}

struct cl_watch *cl_watch_start(struct cl_etcd *e, const char *prefix, int64_t from_rev)
{
	char end[256];
	if (strlen(prefix) >= sizeof(end))
		return NULL;
	prefix_end(prefix, end, sizeof(end));
	struct cl_watch *w = calloc(1, sizeof(*w));
	char *k = b64(prefix, strlen(prefix)), *r = b64(end, strlen(end));
	int rc = 0;
	/* start_revision "0": from now on, as when it is left out */
	if (w && k && r)
		w->body = body_fmt(e, &rc,
				   "{\"create_request\":{\"key\":\"%s\",\"range_end\":\"%s\","
				   "\"start_revision\":\"%" PRId64 "\"}}",
				   k, r, from_rev);
	free(k);
	free(r);
	if (!w || !w->body || !(w->multi = curl_multi_init()) || !(w->curl = curl_easy_init())) {
		set_err(e, "out of memory for an etcd watch");
		cl_watch_stop(w);
		return NULL;
	}
	rf_buf_init(&w->line, 1u << 20);
	char url[256];
	snprintf(url, sizeof(url), "%s/v3/watch", e->urls[e->cur]);
	easy_setup(w->curl, url, w->body, e->timeout_ms, NULL);
	curl_easy_setopt(w->curl, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(w->curl, CURLOPT_WRITEDATA, w);
	/* No overall timeout (the stream lives long); a stalled stream is noticed by its owner,
	 * which restarts it after its own deadline. */
	curl_multi_add_handle(w->multi, w->curl);
	return w;
}

int cl_watch_poll(struct cl_watch *w, unsigned timeout_ms)
{
	int running = 0;
	curl_multi_perform(w->multi, &running);
	if (running && !w->events && !w->bad) {
		curl_multi_poll(w->multi, NULL, 0, (int)timeout_ms, NULL);
		curl_multi_perform(w->multi, &running);
	}
	int n = (int)w->events;
	w->events = 0;
	if (n)
		return n;
	return w->bad || !running ? -EPIPE : 0;
}

void cl_watch_stop(struct cl_watch *w)
{
	if (!w)
		return;
	if (w->multi && w->curl)
		curl_multi_remove_handle(w->multi, w->curl);
	if (w->curl)
		curl_easy_cleanup(w->curl);
	if (w->multi)
		curl_multi_cleanup(w->multi);
	rf_buf_free(&w->line);
	free(w->body);
	free(w);
}
