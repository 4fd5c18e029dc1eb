/*
 * tests/openflow/test_controller.c: ringflow-controller (learning switch) end to end on
 * loopback: the binary is started on a free port, ringflow-ofbench's generator connects
 * switches to it in 1.3 (buffered) and 1.0 (unbuffered, as OVS), and every PACKET_IN must be
 * answered: flooded while the destination is unknown, a FLOW_MOD once it is learned. Then
 * SIGTERM must stop it cleanly (exit 0). Checks content, never timing.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
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

static pid_t start_controller(uint16_t port)
{
	char listen_at[32];
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u", port);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execl(RF_CONTROLLER_BIN, RF_CONTROLLER_BIN, "--listen", listen_at, "--cores", "0",
		      "--idle", "adaptive", "--max-macs", "4096", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Runs the generator, retrying while the controller is not listening yet. */
static int run(struct ofb_opts *o, struct ofb_result *r, char *err, size_t errlen)
{
	int rc = -1;
	for (int i = 0; i < 50; i++) {
		rc = ofb_run(o, r, err, (unsigned)errlen);
		if (rc == 0 || !strstr(err, "cannot connect"))
			break;
		usleep(100000);
	}
	return rc;
}

static void all_answered(const struct ofb_result *r)
{
	cr_assert_gt(r->sent, 0);
	cr_assert_eq(r->lost, 0);
	cr_assert_eq(r->responses, r->sent);
	cr_assert_eq(r->errors_received, 0);
	cr_assert_gt(r->flow_mods, 0, "nothing was learned");
}

Test(controller, learning_switch_answers_13_and_10_and_stops_cleanly, .timeout = 120)
{
	uint16_t port = free_port();
	pid_t pid = start_controller(port);
	struct ofb_opts o = {.host = "127.0.0.1", .port = port, .mode = OFB_THROUGHPUT,
			     .switches = 4, .macs = 50, .window = 16, .loops = 2, .warmup = 0,
			     .round_s = 0.2, .version = OF_VERSION_1_3};
	struct ofb_result *r = calloc(1, sizeof(*r));
	char err[256];
	int rc = run(&o, r, err, sizeof(err));
	if (rc == 0) {
		cr_expect_eq(r->version, OF_VERSION_1_3);
		all_answered(r);
		/* Buffered: a learned destination is answered by the FLOW_MOD alone. */
		o.version = OF_VERSION_1_0;
		o.no_buffer = true;
		o.mode = OFB_LATENCY;
		rc = ofb_run(&o, r, err, sizeof(err));
	}
	int status = -1;
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(r->version, OF_VERSION_1_0);
	all_answered(r);
	/* Unbuffered (OVS): the frame goes back in a PACKET_OUT, flood or learned port. */
	cr_assert_gt(r->packet_outs, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit status %d", status);
	free(r);
}
