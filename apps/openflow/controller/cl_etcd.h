/*
 * apps/openflow/controller/cl_etcd.h: a small client of etcd's v3 JSON gateway (etcd 3.4),
 * the coordination store of the controller cluster (cl_cluster.c, docs/cluster.md).
 *
 * The one idea: every call is one HTTP POST through libcurl with a short timeout, tried on
 * each endpoint in turn (starting from the last one that answered, and an endpoint whose
 * last request got no answer after the others), so a dead or hung etcd member costs one
 * timeout and never a hang. Keys and values travel base64-encoded; revisions and
 * lease ids come back as strings and are read exactly (strtoll, not through a double).
 * Bodies are built with rf_buf and parsed with rf_json_parse (include/ringflow/json.h).
 *
 * Errors: negative errno (-ETIMEDOUT / -ECONNREFUSED: no endpoint answered; -EPROTO: an
 * answer that is not what etcd sends, or an etcd error such as "no leader"), with one line in
 * the client's last error (cl_etcd_error). Thread-safety: one client per thread.
 */
#ifndef RINGFLOW_CL_ETCD_H
#define RINGFLOW_CL_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CL_ETCD_MAX_URLS 8
#define CL_ETCD_MAX_VALUE 65536 /* longer values under our prefix are ignored (counted) */
#define CL_ETCD_MAX_KVS 4096    /* entries one range call returns at most */
#define CL_ETCD_MAX_BODY (4u * CL_ETCD_MAX_VALUE) /* bytes of one request body: a value in base64 and more */
#define CL_ETCD_MAX_REPLY (16u << 20) /* bytes of one answer (RF_JSON_MAX_LEN); longer: the
				       * call fails with the endpoint named */

struct cl_etcd;

/* One key as range returns it (key and value decoded, NUL-terminated). */
struct cl_kv {
	char *key;
	char *val;
	size_t vlen;
	int64_t create_rev, mod_rev, lease;
};

/* Parses "http://h:p[,http://h:p...]" (the part after "etcd="); timeout_ms bounds each
 * request. NULL + one line in err. */
struct cl_etcd *cl_etcd_open(const char *urls, unsigned timeout_ms, char *err, size_t errlen);
void cl_etcd_close(struct cl_etcd *e);
/* Bounds each later request by timeout_ms instead (0: 1000). */
void cl_etcd_set_timeout(struct cl_etcd *e, unsigned timeout_ms);
/* The last call's error line ("" after a success). */
const char *cl_etcd_error(const struct cl_etcd *e);
/* The endpoint the next call starts from: the one that answered last, or after a call that
 * none answered, the next in the list (for logs). */
const char *cl_etcd_endpoint(const struct cl_etcd *e);

/* A lease of ttl seconds: 0 with *id and *granted_ttl, or -errno. */
int cl_etcd_grant(struct cl_etcd *e, int64_t ttl, int64_t *id, int64_t *granted_ttl);
/* Renews lease id once: 0 with *ttl (0: the lease has expired), or -errno. The current
 * endpoint first (unless silent, or the last renewal failed), then every endpoint at once
 * (one timeout in all), with the status question too when lead is not NULL: on failure
 * *lead says whether a member answered it with a leader (1), members answered with none
 * (0: quorum lost), or none answered (-errno). Those that answer nothing are tried last by
 * the next calls. */
int cl_etcd_keepalive(struct cl_etcd *e, int64_t id, int64_t *ttl, int *lead);
/* Revokes lease id (its keys go at once). 0 or -errno. */
int cl_etcd_revoke(struct cl_etcd *e, int64_t id);
/* key = val[0..vlen) bound to lease (0: none). 0 with *rev (may be NULL), or -errno. */
int cl_etcd_put(struct cl_etcd *e, const char *key, const char *val, size_t vlen, int64_t lease,
		int64_t *rev);
/* Every key starting with prefix, in key order: 0 with *kvs (free with cl_kv_free) and *n,
 * or -errno. *rev: the store's revision at the read. Values over CL_ETCD_MAX_VALUE come back
 * with val NULL (the caller counts and ignores them). */
int cl_etcd_range(struct cl_etcd *e, const char *prefix, struct cl_kv **kvs, size_t *n,
		  int64_t *rev);
void cl_kv_free(struct cl_kv *kvs, size_t n);
/* The transaction "create key = val under lease if it does not exist": 1 with *rev the
 * revision that created it; 0 when it existed (*held filled from the existing key, its
 * strings owned by the caller: free held->key and held->val; both NULL on every other
 * path); or -errno. */
int cl_etcd_create(struct cl_etcd *e, const char *key, const char *val, int64_t lease,
		   int64_t *rev, struct cl_kv *held);
/* Deletes key if its mod_revision is still mod_rev: 1 deleted, 0 changed meanwhile, -errno. */
int cl_etcd_delete_if(struct cl_etcd *e, const char *key, int64_t mod_rev);

/* A watch stream on every key under prefix (/v3/watch, one long POST read as it comes). */
struct cl_watch;
/* Starts it from revision from_rev (0: now). NULL + cl_etcd_error on failure. */
struct cl_watch *cl_watch_start(struct cl_etcd *e, const char *prefix, int64_t from_rev);
/* Waits up to timeout_ms for events: the number of events received (0: none), or -errno
 * when the stream ended (start a new one). */
int cl_watch_poll(struct cl_watch *w, unsigned timeout_ms);
void cl_watch_stop(struct cl_watch *w);

/* Base64 (RFC 4648, padded) into out (room for 4 * ceil(n / 3) + 1). */
void cl_b64_encode(const uint8_t *in, size_t n, char *out);
/* Decodes s into out (room for 3 * strlen(s) / 4 + 1, NUL-terminated): the length, or -1. */
long cl_b64_decode(const char *s, uint8_t *out);

#endif /* RINGFLOW_CL_ETCD_H */
