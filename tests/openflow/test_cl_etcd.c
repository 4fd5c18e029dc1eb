/*
 * tests/openflow/test_cl_etcd.c: the controller's etcd client (apps/openflow/controller/
 * cl_etcd.c) without an etcd: base64 against RFC 4648's vectors and garbage, endpoint lists
 * refused with one line, and a call to a closed loopback port failing at once with the
 * endpoint named (never a hang), and a hung endpoint tried after the others once it was
 * silent (fake endpoints on loopback: one that accepts and never answers, one that answers
 * as etcd does). The client against a real etcd is in cluster_test.sh.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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
	int lead = 1;
	cr_expect_lt(cl_etcd_keepalive(e, 42, &ttl, &lead), 0);
	cr_expect_lt(lead, 0, "nobody answered the status question");
	cr_expect_lt(cl_etcd_put(e, "/k", "v", 1, 0, &rev), 0);
	struct cl_kv *kvs = (struct cl_kv *)1;
	size_t n = 7;
	cr_expect_lt(cl_etcd_range(e, "/p/", &kvs, &n, NULL), 0);
	struct cl_kv held;
	cr_expect_lt(cl_etcd_create(e, "/k", "v", 1, &rev, &held), 0);
	cr_expect_lt(cl_etcd_delete_if(e, "/k", 5), 0);
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

/* ---- fake endpoints: a loopback listener on an ephemeral port and its thread ------------- */

/* HANG: takes connections, never answers (a hung member); ANSWER: answers as etcd does;
 * LEADERLESS: a member without a leader (status answered with none, anything else held);
 * STALE: a follower whose leader is gone but not yet noticed (status names a leader,
 * anything else held). */
enum fake_mode { FAKE_HANG, FAKE_ANSWER, FAKE_LEADERLESS, FAKE_STALE };

struct fake {
	int lfd;
	uint16_t port;
	_Atomic int mode;     /* enum fake_mode, switched by the test */
	atomic_uint accepted; /* connections taken */
	atomic_bool stop;
	int held[64];         /* connections left unanswered (FAKE_HANG), closed at the end */
	unsigned n_held;
	pthread_t th;
};

/* Reads one HTTP request (headers and Content-Length body) from fd, bounded by 2 s: its path
 * in path, or -1. */
static int read_request(int fd, char path[256])
{
	char buf[4096];
	size_t len = 0;
	for (int waits = 0; waits < 40 && len < sizeof(buf) - 1; waits++) {
		struct pollfd pf = {fd, POLLIN, 0};
		if (poll(&pf, 1, 50) <= 0)
			continue;
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		char *end = strstr(buf, "\r\n\r\n");
		const char *cl = strcasestr(buf, "content-length:");
		if (end && (!cl || len >= (size_t)(end + 4 - buf) + strtoul(cl + 15, NULL, 10)))
			return sscanf(buf, "POST %255s", path) == 1 ? 0 : -1;
	}
	return -1;
}

/* What etcd's gateway answers on the paths the tests use (status, put, lease keepalive);
 * false when the request is held (a leaderless member's keepalive or put). */
static bool answer_request(int fd, int mode)
{
	char path[256];
	if (read_request(fd, path))
		return true;
	if ((mode == FAKE_LEADERLESS || mode == FAKE_STALE) && !strstr(path, "status"))
		return false;
	const char *body = mode == FAKE_LEADERLESS ? "{\"header\":{\"member_id\":\"7\"}}"
			 : strstr(path, "status") ? "{\"header\":{\"member_id\":\"7\"},\"leader\":\"7\"}"
			 : strstr(path, "put") ? "{\"header\":{\"revision\":\"5\"}}"
			 : "{\"result\":{\"ID\":\"42\",\"TTL\":\"3\"}}";
	char out[512];
	int n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen(body), body);
	cr_assert(write(fd, out, (size_t)n) == n);
	return true;
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	while (!atomic_load(&f->stop)) {
		struct pollfd pf = {f->lfd, POLLIN, 0};
		if (poll(&pf, 1, 20) <= 0)
			continue;
		int fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		atomic_fetch_add(&f->accepted, 1);
		int mode = atomic_load(&f->mode);
		if ((mode == FAKE_HANG || !answer_request(fd, mode)) && f->n_held < 64) {
			f->held[f->n_held++] = fd;
			continue;
		}
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake *f, enum fake_mode mode)
{
	memset(f, 0, sizeof(*f));
	atomic_store(&f->mode, mode);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(f->lfd, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	cr_assert_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(f->lfd, 16), 0);
	cr_assert_eq(getsockname(f->lfd, (struct sockaddr *)&a, &al), 0);
	f->port = ntohs(a.sin_port);
	cr_assert_eq(pthread_create(&f->th, NULL, fake_run, f), 0);
}

static void fake_stop(struct fake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->th, NULL);
	for (unsigned i = 0; i < f->n_held; i++)
		close(f->held[i]);
	close(f->lfd);
}

/* The fake's count of connections once it reaches want (its thread accepts a moment after the
 * client connects; bounded: 2 s). */
static unsigned accepted(struct fake *f, unsigned want)
{
	for (int i = 0; i < 200 && atomic_load(&f->accepted) < want; i++)
		nanosleep(&(struct timespec){0, 10000000L}, NULL);
	return atomic_load(&f->accepted);
}

/* Starts n fakes in modes[] and a client over them in that order, each request bounded by
 * timeout_ms. */
static struct cl_etcd *fakes_open(struct fake *f, const enum fake_mode *modes, unsigned n,
				  unsigned timeout_ms)
{
	char urls[256] = "", err[256];
	for (unsigned i = 0; i < n; i++) {
		fake_start(&f[i], modes[i]);
		size_t len = strlen(urls);
		snprintf(urls + len, sizeof(urls) - len, "%shttp://127.0.0.1:%u", i ? "," : "",
			 f[i].port);
	}
	struct cl_etcd *e = cl_etcd_open(urls, timeout_ms, err, sizeof(err));
	cr_assert_not_null(e, "%s", err);
	return e;
}

static void fakes_close(struct cl_etcd *e, struct fake *f, unsigned n)
{
	cl_etcd_close(e);
	for (unsigned i = 0; i < n; i++)
		fake_stop(&f[i]);
}

/* The client's current endpoint is fake f. */
static void expect_current(struct cl_etcd *e, const struct fake *f)
{
	char want[64];
	snprintf(want, sizeof(want), "http://127.0.0.1:%u", f->port);
	cr_expect_str_eq(cl_etcd_endpoint(e), want);
}

/* The failure cluster_test.sh once hit: etcd's leader hangs, and for a while the followers
 * hold a keepalive too (forwarded to the hung leader), so a renewal finds every endpoint
 * silent: the current one first, then all at once with the status question (no answer at
 * all). Once the follower answers, the next renewal goes to every endpoint at once (the
 * current one is silent) and renews through it; the renewals after that go to it alone,
 * never again to the hung member (its connections counted: none more). */
Test(cl_etcd, a_hung_endpoint_is_not_asked_again_once_another_answers)
{
	struct fake f[2], *hung = &f[0], *follower = &f[1];
	/* the follower waits for a leader: it holds requests */
	struct cl_etcd *e = fakes_open(f, (enum fake_mode[]){FAKE_HANG, FAKE_HANG}, 2, 200);
	int64_t ttl = 0;
	int lead = 1;
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), -ETIMEDOUT, "%s", cl_etcd_error(e));
	cr_expect_eq(lead, -ETIMEDOUT, "nobody answered the status question either");
	cr_expect_eq(accepted(hung, 3), 3, "the current endpoint, then keepalive and status");
	cr_expect_eq(accepted(follower, 2), 2);

	atomic_store(&follower->mode, FAKE_ANSWER); /* a leader again */
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), 0, "%s", cl_etcd_error(e));
	cr_expect_eq(ttl, 3);
	expect_current(e, follower);
	/* asked too, at the same time; the follower's renewal ends the round before it is known
	 * whether the hung member took the connections */
	unsigned hung_before = accepted(hung, 5);
	unsigned follower_before = accepted(follower, 4);
	for (int i = 0; i < 3; i++) {
		ttl = 0;
		cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), 0, "%s", cl_etcd_error(e));
		cr_expect_eq(ttl, 3);
	}
	cr_expect_eq(atomic_load(&hung->accepted), hung_before, "the hung member is not asked again");
	unsigned got = accepted(follower, follower_before + 3);
	cr_expect_eq(got, follower_before + 3, "follower took %u connections", got);
	fakes_close(e, f, 2);
}

/* Quorum lost with a member hung: the renewal fails, and the same round's status question
 * says "members answer, none has a leader" (0) although the hung member never answers. */
Test(cl_etcd, quorum_lost_is_told_with_a_member_hung)
{
	struct fake f[2];
	struct cl_etcd *e = fakes_open(f, (enum fake_mode[]){FAKE_HANG, FAKE_LEADERLESS}, 2, 200);
	int64_t ttl = 0;
	int lead = 1;
	cr_expect_lt(cl_etcd_keepalive(e, 42, &ttl, &lead), 0);
	cr_expect_eq(lead, 0, "quorum lost");
	cr_expect(strstr(cl_etcd_error(e), "quorum lost") != NULL, "%s", cl_etcd_error(e));
	fakes_close(e, f, 2);
}

/* The current endpoint hangs, another answers: one keepalive call renews through the other
 * (all at once after the current one's timeout), and the next starts there. */
Test(cl_etcd, a_renewal_goes_around_a_hung_current_endpoint)
{
	struct fake f[2], *hung = &f[0], *good = &f[1];
	struct cl_etcd *e = fakes_open(f, (enum fake_mode[]){FAKE_HANG, FAKE_ANSWER}, 2, 200);
	int64_t ttl = 0;
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, NULL), 0, "%s", cl_etcd_error(e));
	cr_expect_eq(ttl, 3);
	expect_current(e, good);
	unsigned hung_before = accepted(hung, 1);
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, NULL), 0, "%s", cl_etcd_error(e));
	cr_expect_eq(atomic_load(&hung->accepted), hung_before);
	fakes_close(e, f, 2);
}

/* Every member silent: a round still asks each (none skipped), once for the keepalive and
 * once for the status question. */
Test(cl_etcd, a_round_with_every_member_silent_asks_each_once)
{
	struct fake f[2];
	struct cl_etcd *e = fakes_open(f, (enum fake_mode[]){FAKE_HANG, FAKE_HANG}, 2, 200);
	int64_t ttl = 0;
	int lead = 1;
	/* the current endpoint alone, then the first round: both silent after it */
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), -ETIMEDOUT, "%s", cl_etcd_error(e));
	cr_expect_eq(accepted(&f[0], 3), 3);
	cr_expect_eq(accepted(&f[1], 2), 2);
	lead = 1;
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), -ETIMEDOUT, "%s", cl_etcd_error(e));
	cr_expect_eq(lead, -ETIMEDOUT);
	cr_expect(strstr(cl_etcd_error(e), "127.0.0.1") != NULL, "%s", cl_etcd_error(e));
	cr_expect_eq(accepted(&f[0], 5), 5);
	cr_expect_eq(accepted(&f[1], 4), 4);
	fakes_close(e, f, 2);
}

/* A call tried in turn (a put: it must not arrive twice), every member silent, then all but
 * the first answer again (no status question between): the next call starts one further on,
 * not at the member tried first before. */
Test(cl_etcd, after_a_call_none_answered_the_next_starts_one_further)
{
	struct fake f[3];
	struct cl_etcd *e =
		fakes_open(f, (enum fake_mode[]){FAKE_HANG, FAKE_HANG, FAKE_HANG}, 3, 150);
	int64_t rev = 0;
	cr_expect_eq(cl_etcd_put(e, "/k", "v", 1, 0, &rev), -ETIMEDOUT, "%s", cl_etcd_error(e));
	for (int i = 0; i < 3; i++)
		cr_expect_eq(accepted(&f[i], 1), 1, "member %d asked once", i);
	atomic_store(&f[1].mode, FAKE_ANSWER);
	atomic_store(&f[2].mode, FAKE_ANSWER);
	cr_expect_eq(cl_etcd_put(e, "/k", "v", 1, 0, &rev), 0, "%s", cl_etcd_error(e));
	cr_expect_eq(rev, 5);
	expect_current(e, &f[1]);
	cr_expect_eq(accepted(&f[1], 2), 2);
	cr_expect_eq(atomic_load(&f[0].accepted), 1, "the first member is not asked first again");
	cr_expect_eq(atomic_load(&f[2].accepted), 1);
	fakes_close(e, f, 3);
}

/* A follower that still names its gone leader answers the status question but holds the
 * keepalive. After one failed renewal (the current endpoint alone, then keepalive and status
 * to every member), the retries go straight to every member: two connections a retry, not
 * three (one more to the current endpoint alone first would cost a timeout each time). */
Test(cl_etcd, retries_after_a_failed_renewal_go_to_every_member_at_once)
{
	struct fake f[1];
	struct cl_etcd *e = fakes_open(f, (enum fake_mode[]){FAKE_STALE}, 1, 150);
	int64_t ttl = 0;
	int lead = 0;
	cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), -ETIMEDOUT, "%s", cl_etcd_error(e));
	cr_expect_eq(lead, 1, "the follower names a leader");
	cr_expect_eq(accepted(&f[0], 3), 3);
	for (unsigned n = 1; n <= 2; n++) {
		cr_expect_eq(cl_etcd_keepalive(e, 42, &ttl, &lead), -ETIMEDOUT);
		unsigned got = accepted(&f[0], 3 + 2 * n);
		cr_expect_eq(got, 3 + 2 * n, "retry %u: %u connections in all", n, got);
	}
	fakes_close(e, f, 1);
}
