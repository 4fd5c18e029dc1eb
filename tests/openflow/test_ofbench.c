/*
 * tests/openflow/test_ofbench.c: ringflow-ofbench end to end on loopback. The generator runs
 * every mode in 1.3 and 1.0 against the built-in responder (in a thread of this process),
 * and against ovs-testcontroller when it is installed (a real peer parsing our messages).
 * Checks are on content: every PACKET_IN answered, each answer matched to its PACKET_IN,
 * no ERROR from the peer. Timing never decides the result.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "of.h"
#include "ofb.h"
#include "free_port.h"

struct responder {
	pthread_t t;
	int fd;
	uint16_t port;
	atomic_bool stop;
};

static void *responder_main(void *arg)
{
	struct responder *r = arg;
	ofb_responder_run(r->fd, 30.0, false, &r->stop, NULL);
	return NULL;
}

static void responder_start(struct responder *r)
{
	atomic_init(&r->stop, false);
	r->fd = ofb_responder_listen("127.0.0.1", 0, &r->port);
	cr_assert_geq(r->fd, 0, "listen: %s", strerror(-r->fd));
	cr_assert_eq(pthread_create(&r->t, NULL, responder_main, r), 0);
}

static void responder_stop(struct responder *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->t, NULL);
}

static struct ofb_opts opts(uint16_t port, enum ofb_mode mode, uint8_t version)
{
	struct ofb_opts o = {.host = "127.0.0.1", .port = port, .mode = mode, .switches = 4,
			     .macs = 50, .window = 16, .loops = 2, .warmup = 0, .round_s = 0.1,
			     .rate = 20000, .version = version};
	return o;
}

/* Everything sent in measured rounds (warm-up 0) was answered once, and matched. */
static void check_all_answered(const struct ofb_result *r, uint8_t version)
{
	cr_assert_eq(r->version, version);
	cr_assert_gt(r->sent, 0);
	cr_assert_eq(r->lost, 0);
	cr_assert_eq(r->responses, r->sent, "sent %llu answered %llu",
		     (unsigned long long)r->sent, (unsigned long long)r->responses);
	cr_assert_eq(r->rtt.count, r->responses);
	cr_assert_eq(r->errors_received, 0);
	cr_assert_eq(r->rounds, 2);
}

/* window 0: opts()'s default; else that window with longer rounds. */
static void run_against_responder_window(enum ofb_mode mode, uint8_t version, bool no_buffer,
					 unsigned window)
{
	struct responder rs;
	responder_start(&rs);
	struct ofb_opts o = opts(rs.port, mode, version);
	o.no_buffer = no_buffer;
	if (window) {
		o.window = window;
		o.round_s = 0.3;
	}
	if (mode == OFB_RATE)
		o.switches = 1;
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	int rc = ofb_run(&o, r, err, sizeof(err));
	responder_stop(&rs);
	cr_assert_eq(rc, 0, "%s", err);
	check_all_answered(r, version);
	cr_assert_gt(r->packet_outs, 0); /* the responder answers with PACKET_OUTs only */
	cr_assert_eq(r->flow_mods, 0); /* its 1.3 table-miss FLOW_MOD comes before measuring */
	free(r);
}

static void run_against_responder(enum ofb_mode mode, uint8_t version, bool no_buffer)
{
	run_against_responder_window(mode, version, no_buffer, 0);
}

Test(ofbench, throughput_13_against_responder)
{
	run_against_responder(OFB_THROUGHPUT, OF_VERSION_1_3, false);
}

/* A deep window keeps PACKET_INs outstanding while answers are read: none may be written off
 * as lost while answers still come (a stale clock once made every window look stalled). */
Test(ofbench, throughput_deep_window_loses_nothing)
{
	run_against_responder_window(OFB_THROUGHPUT, OF_VERSION_1_0, false, 1024);
}

Test(ofbench, latency_10_unbuffered_against_responder)
{
	run_against_responder(OFB_LATENCY, OF_VERSION_1_0, true);
}

Test(ofbench, open_loop_rate_13_against_responder)
{
	run_against_responder(OFB_RATE, OF_VERSION_1_3, true);
}

/* --controller A,B: switches dealt over two responders; every PACKET_IN answered means both
 * took their switches (a switch whose responder never accepted would go unanswered). A
 * refused second controller is the one-line error, naming its port. */
Test(ofbench, switches_dealt_over_two_controllers)
{
	struct responder a, b;
	responder_start(&a);
	responder_start(&b);
	struct ofb_opts o = opts(a.port, OFB_THROUGHPUT, OF_VERSION_1_3);
	o.n_more = 1;
	o.more_host[0] = "127.0.0.1";
	o.more_port[0] = b.port;
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	int rc = ofb_run(&o, r, err, sizeof(err));
	responder_stop(&a);
	responder_stop(&b);
	cr_assert_eq(rc, 0, "%s", err);
	check_all_answered(r, OF_VERSION_1_3);
	char want[32];
	snprintf(want, sizeof(want), ":%u:", b.port);
	memset(r, 0, sizeof(*r));
	responder_start(&a);
	o.port = a.port;
	cr_assert_lt(ofb_run(&o, r, err, sizeof(err)), 0); /* b is closed now */
	responder_stop(&a);
	cr_assert(strstr(err, "cannot connect") && strstr(err, want), "%s", err);
	free(r);
}

Test(ofbench, refused_connection_is_one_line_error)
{
	struct responder rs;
	responder_start(&rs); /* take a free port, then close it */
	responder_stop(&rs);
	struct ofb_opts o = opts(rs.port, OFB_THROUGHPUT, OF_VERSION_1_3);
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	cr_assert_lt(ofb_run(&o, r, err, sizeof(err)), 0);
	cr_assert(strstr(err, "cannot connect") != NULL, "%s", err);
	o.macs = 0;
	cr_assert_eq(ofb_run(&o, r, err, sizeof(err)), -EINVAL);
	free(r);
}

Test(ofbench, histogram_quantiles_within_bucket_error)
{
	struct ofb_hist *h = calloc(1, sizeof(*h));
	for (uint64_t us = 1; us <= 1000; us++)
		ofb_hist_add(h, us * 1000);
	cr_assert_eq(h->count, 1000);
	cr_assert_eq(h->max_ns, 1000000);
	double p50 = (double)ofb_hist_quantile(h, 0.5), p99 = (double)ofb_hist_quantile(h, 0.99);
	cr_assert(p50 >= 500000 && p50 <= 500000 * 1.07, "p50 %.0f", p50);
	cr_assert(p99 >= 990000 && p99 <= 1000000, "p99 %.0f", p99);
	cr_assert_eq(ofb_hist_quantile(h, 1.0), 1000000);
	for (uint64_t v = 0; v < 32; v++)
		ofb_hist_add(h, v);
	cr_assert_eq(ofb_hist_quantile(h, 0.0), 0);
	free(h);
}

/* ---- ovs-testcontroller (Debian openvswitch-testcontroller) ---- */

static const char *otc = "/usr/bin/ovs-testcontroller";

Test(ofbench, ovs_testcontroller_learns_and_answers, .timeout = 60)
{
	if (access(otc, X_OK) != 0)
		cr_skip_test("needs %s (Debian openvswitch-testcontroller)", otc);
	char dir[] = "/tmp/rf-otc-XXXXXX", method[64];
	cr_assert_not_null(mkdtemp(dir));
	uint16_t port = free_port();
	snprintf(method, sizeof(method), "ptcp:%u:127.0.0.1", port);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* the test dies (timeout): so does the peer */
		setenv("OVS_RUNDIR", dir, 1); /* its control socket goes here, not /var/run */
		setenv("OVS_LOGDIR", dir, 1);
		execl(otc, otc, "-vwarn", method, (char *)NULL);
		_exit(127);
	}
	struct ofb_opts o = opts(port, OFB_LATENCY, OF_VERSION_1_0);
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	int rc = -1;
	for (int i = 0; i < 50 && rc != 0; i++) { /* it needs a moment to listen */
		rc = ofb_run(&o, r, err, sizeof(err));
		if (rc != 0 && !strstr(err, "cannot connect"))
			break;
		if (rc != 0)
			usleep(100000);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(rc, 0, "%s", err);
	check_all_answered(r, OF_VERSION_1_0);
	/* A learning switch floods unknown destinations and installs flows for known ones. */
	cr_assert_gt(r->flow_mods, 0);
	cr_assert_gt(r->packet_outs, 0);
	free(r);
}
