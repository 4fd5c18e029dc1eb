/*
 * tests/openflow/test_cl_etcd.c: the controller's etcd client (apps/openflow/controller/
 * cl_etcd.c) without an etcd: base64 against RFC 4648's vectors and garbage, endpoint lists
 * refused with one line, and a call to a closed loopback port failing at once with the
 * endpoint named (never a hang). The client against a real etcd is in cluster_test.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "cl_etcd.h"

static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
				    "Zm9vYmFy"};

Test(cl_etcd, base64_rfc4648_vectors_both_ways)
{
	for (unsigned i = 0; i < 7; i++) {
		char enc[16];
		uint8_t dec[16];
		cl_b64_encode((const uint8_t *)plain[i], strlen(plain[i]), enc);
		cr_expect_str_eq(enc, coded[i]);
		long n = cl_b64_decode(coded[i], dec);
		cr_assert_eq(n, (long)strlen(plain[i]), "%s", coded[i]);
		cr_expect_eq(memcmp(dec, plain[i], (size_t)n), 0);
	}
}

Test(cl_etcd, base64_every_byte_round_trips)
{
	uint8_t in[256], out[256 + 4];
	char enc[4 * 86 + 1];
	for (unsigned i = 0; i < 256; i++)
		in[i] = (uint8_t)(255 - i);
	for (size_t len = 0; len <= 256; len += 37) {
		cl_b64_encode(in, len, enc);
		cr_assert_eq(cl_b64_decode(enc, out), (long)len);
		cr_assert_eq(memcmp(in, out, len), 0, "length %zu", len);
	}
}

Test(cl_etcd, base64_garbage_refused)
{
	static const char *const bad[] = {"Zg=", "Z===", "Zg==Zg==", "Zm9v!A==", "=Zm9", "Zm=v",
					  "Zm9vYg=a", "\xff\xff\xff\xff"};
	uint8_t out[16];
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(cl_b64_decode(bad[i], out), -1, "%s", bad[i]);
}

Test(cl_etcd, endpoint_lists_checked)
{
	char err[256];
	static const char *const bad[] = {"", "localhost:2379", "https://x:1", "http://",
					  "http://a:1,,http://b:2",
					  ("http://a:1,http://a:1,http://a:1,http://a:1,http://a:1,"
					   "http://a:1,http://a:1,http://a:1,http://a:1")};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		cr_expect_null(cl_etcd_open(bad[i], 500, err, sizeof(err)), "%s", bad[i]);
		cr_expect(strlen(err) > 10 && !strchr(err, '\n'), "one line for %s: %s", bad[i], err);
	}
	struct cl_etcd *e = cl_etcd_open("http://127.0.0.1:2379,http://127.0.0.1:2479", 500, err,
					 sizeof(err));
	cr_assert_not_null(e, "%s", err);
	cr_expect_str_eq(cl_etcd_endpoint(e), "http://127.0.0.1:2379");
	cl_etcd_close(e);
}

/* Port 1 on loopback: nothing listens (a connect is refused at once). Each call returns an
 * error naming the endpoint, and nothing is allocated for the caller. */
Test(cl_etcd, closed_port_fails_with_the_endpoint_named)
{
	char err[256];
	struct cl_etcd *e = cl_etcd_open("http://127.0.0.1:1,http://127.0.0.1:1", 500, err,
					 sizeof(err));
	cr_assert_not_null(e, "%s", err);
	int64_t id = 0, ttl = 0, rev = 0;
	cr_expect_lt(cl_etcd_grant(e, 3, &id, &ttl), 0);
	cr_expect(strstr(cl_etcd_error(e), "127.0.0.1:1") != NULL, "%s", cl_etcd_error(e));
	cr_expect_lt(cl_etcd_keepalive(e, 42, &ttl), 0);
	cr_expect_lt(cl_etcd_put(e, "/k", "v", 1, 0, &rev), 0);
	struct cl_kv *kvs = (struct cl_kv *)1;
	size_t n = 7;
	cr_expect_lt(cl_etcd_range(e, "/p/", &kvs, &n, NULL), 0);
	struct cl_kv held;
	cr_expect_lt(cl_etcd_create(e, "/k", "v", 1, &rev, &held), 0);
	cr_expect_lt(cl_etcd_delete_if(e, "/k", 5), 0);
	cr_expect_lt(cl_etcd_has_leader(e), 0);
	struct cl_watch *w = cl_watch_start(e, "/p/", 0);
	cr_assert_not_null(w);
	int rc = 0;
	for (int i = 0; i < 50 && rc == 0; i++) /* bounded: refused within a few polls */
		rc = cl_watch_poll(w, 100);
	cr_expect_lt(rc, 0, "a watch on a closed port ends");
	cl_watch_stop(w);
	cl_etcd_close(e);
}

/* A request body past CL_ETCD_MAX_BODY (a value far over CL_ETCD_MAX_VALUE) is refused before
 * anything is sent: -E2BIG and one line, not a truncated request. */
Test(cl_etcd, oversize_request_refused_before_sending)
{
	char err[256];
	struct cl_etcd *e = cl_etcd_open("http://127.0.0.1:1", 500, err, sizeof(err));
	cr_assert_not_null(e, "%s", err);
	size_t n = CL_ETCD_MAX_BODY;
	char *big = malloc(n + 1);
	cr_assert_not_null(big);
	memset(big, 'x', n);
	big[n] = '\0';
	int64_t rev = 0;
	cr_expect_eq(cl_etcd_put(e, "/k", big, n, 0, &rev), -E2BIG);
	cr_expect(strstr(cl_etcd_error(e), "too long") != NULL, "%s", cl_etcd_error(e));
	struct cl_kv held;
	cr_expect_eq(cl_etcd_create(e, "/k", big, 7, &rev, &held), -E2BIG);
	cr_expect_null(held.key);
	free(big);
	cl_etcd_close(e);
}
