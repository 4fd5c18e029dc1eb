/*
 * tests/nonroot/probe_driver.c: opens the device spec given as argv[1] on a small pool and
 * prints "opened" or the one-line error; exit 0 only when it opened. check_caps.sh runs it as
 * a plain user, with and without file capabilities.
 */
#include <stdio.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: probe_driver SPEC\n");
		return 2;
	}
	char err[512];
	struct rf_pktbuf_pool *pool = rf_pktbuf_pool_create("probe", 4096, 2048, 0,
							    RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	if (!pool) {
		perror("probe_driver: rf_pktbuf_pool_create");
		return 1;
	}
	struct rf_io_dev *dev = rf_io_open(argv[1], pool, err, sizeof(err));
	printf("%s: %s\n", argv[1], dev ? "opened" : err);
	rf_io_close(dev);
	rf_pktbuf_pool_free(pool);
	return dev ? 0 : 1;
}
