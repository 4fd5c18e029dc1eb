/*
 * apps/echo/lg_modes_main.c: ringflow-loadgen's stream, rr and crr modes, from the parsed
 * command line to the printed point (loadgen.c parses the options and calls in here).
 *
 * stream and rr open their devices once (rr: one per --conns, each its own connection or
 * connected UDP socket) and run one point; crr opens and closes a device per connection.
 * Output: a table (header and row) or, with --json, one JSON object on stdout.
 */
#include "lg_modes_main.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "lg_modes.h"

static int fail(const char *msg)
{
	fprintf(stderr, "ringflow-loadgen: %s\n", msg);
	return 2;
}

int rf_lg_modes_main(const struct rf_lg_modes_cli *cli)
{
	char err[512];
	if (cli->mode == RF_LG_MODE_CRR && strncmp(cli->backend, "tcp:", 4) != 0 &&
	    strncmp(cli->backend, "uring:tcp:", 10) != 0)
		return fail("--mode crr: connections need a TCP backend: tcp:connect=IP:PORT or "
			    "uring:tcp:connect=IP:PORT");
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("loadgen", cli->pool_n, 2048, 256,
							    RF_MEMPOOL_QUIET);
	if (!pool) {
		snprintf(err, sizeof(err), "cannot create a pool of %u packet buffers: %s (try a "
			 "smaller --pool)", cli->pool_n, strerror(errno));
		return fail(err);
	}
	signal(SIGPIPE, SIG_IGN);
	struct rf_hist *lat = malloc(sizeof(*lat));
	struct rf_io_dev *dev[RF_LG_MAX_CONNS] = {0};
	unsigned ndev = 0;
	int rc = 0;
	if (!lat) {
		rc = fail("out of memory for the latency histogram");
		goto out;
	}
	struct rf_lg_mpoint p = {.backend = cli->label ? cli->label : cli->backend, .lat = lat,
				 .conns = 1, .outstanding = 1};
	rf_hist_reset(lat);
	unsigned want = cli->mode == RF_LG_MODE_RR ? cli->conns : cli->mode == RF_LG_MODE_STREAM;
	for (; ndev < want; ndev++) {
		dev[ndev] = rf_io_open(cli->backend, pool, err, sizeof(err));
		if (!dev[ndev]) {
			rc = fail(err);
			goto out;
		}
	}
	fprintf(stderr, "loadgen: %s %s, %u-byte messages: %.1f s warm-up + %.1f s ...\n",
		rf_lg_mode_name(cli->mode), cli->backend, cli->o.size, cli->o.warmup_s,
		cli->o.duration_s);
	int r;
	err[0] = '\0';
	if (cli->mode == RF_LG_MODE_STREAM)
		r = rf_lg_run_stream(dev[0], pool, &cli->o, &p);
	else if (cli->mode == RF_LG_MODE_RR)
		r = rf_lg_run_rr(dev, ndev, pool, &cli->o, &p);
	else
		r = rf_lg_run_crr(cli->backend, pool, &cli->o, &p, err, sizeof(err));
	if (r < 0) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s run failed: %s", rf_lg_mode_name(cli->mode),
				 strerror(-r));
		rc = fail(err);
		goto out;
	}
	if (err[0])
		fprintf(stderr, "loadgen: %s\n", err);
	if (cli->mode == RF_LG_MODE_STREAM && !p.reported)
		fprintf(stderr, "loadgen: the sink did not report (is the server ringflow-echo "
				"--sink?): received counts unknown\n");
	if (cli->json) {
		rf_lg_mjson(stdout, &p);
	} else {
		rf_lg_mtable_header(stdout, cli->mode);
		rf_lg_mtable_row(stdout, &p);
	}
	fflush(stdout);
out:
	for (unsigned i = 0; i < ndev; i++)
		rf_io_close(dev[i]);
	free(lat);
	rf_pktbuf_pool_free(pool);
	return rc;
}
