/*
 * apps/echo/lg_modes_main.h: the entry from ringflow-loadgen's command line into the stream,
 * rr and crr modes (lg_modes_main.c).
 */
#ifndef RINGFLOW_APPS_ECHO_LG_MODES_MAIN_H
#define RINGFLOW_APPS_ECHO_LG_MODES_MAIN_H

#include <stdbool.h>

#include "lg_modes.h"

struct rf_lg_modes_cli {
	enum rf_lg_mode mode;     /* stream, rr or crr */
	const char *backend, *label;
	struct rf_lg_mopts o;
	unsigned conns;           /* rr: connections (devices) */
	unsigned pool_n;
	bool json;
};

/* Runs one point of cli->mode and prints it. Returns the process exit status. */
int rf_lg_modes_main(const struct rf_lg_modes_cli *cli);

#endif /* RINGFLOW_APPS_ECHO_LG_MODES_MAIN_H */
