/*
 * bench/tools/stolen.h: the parts of ringflow-stolen (stolen.c) shared by its three files:
 * stolen.c measures, stolen_load.c starts and stops the load, stolen_report.c prints.
 */
#ifndef RINGFLOW_BENCH_TOOLS_STOLEN_H
#define RINGFLOW_BENCH_TOOLS_STOLEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "udpflood.h"
#include "vethbed.h"

enum load_kind { LOAD_VETH, LOAD_LOOPBACK, LOAD_CMD };

struct opts {
	unsigned cpu, load_cpu;
	uint64_t passes;
	uint64_t packets;
	double load_seconds;
	enum load_kind load;
	bool load_forced;
	const char *load_cmd;
	bool json;
	bool fifo;
};

/* The differences over one compute run, for the measured CPU (and NET_RX of the load CPU). */
struct phase {
	double wall, user, sys, ksoftirqd_s;
	double others_s; /* wall the CPU spent on other tasks' own work (estimate) */
	double softirq_pct, irq_pct, steal_pct, idle_pct;
	uint64_t net_rx, net_tx, net_rx_load_cpu;
	uint64_t processed, dropped, squeezed, received_rps;
	uint64_t checksum;
};

struct load {
	enum load_kind kind;
	struct rf_vethbed bed;
	struct rf_flood flood;
	pid_t cmd_pid;
	char why[160]; /* why the load is not the one asked for, or "" */
};

/* "veth_rps", "loopback" or "cmd": the impl field of the JSON lines. */
const char *load_name(enum load_kind k);

/* Prepares the load o asks for (falls back from veth to loopback without root, unless
 * --load was given); prints the one-line reason and returns -errno on failure. */
int load_open(struct load *l, const struct opts *o);
int load_start(struct load *l, const struct opts *o);
/* Stops the load; returns the packets sent (floods) or 0. */
uint64_t load_stop(struct load *l);
/* Stops the load and removes what load_open created. */
void load_close(struct load *l);

void print_json_line(const struct opts *o, const char *impl, const char *c, double v,
		     const char *unit);
void print_json(const struct opts *o, const char *impl, const struct phase *p, const char *ph,
		uint64_t sent);
void print_table(const struct opts *o, const struct phase *idle, const struct phase *ld,
		 uint64_t sent, FILE *out);

#endif /* RINGFLOW_BENCH_TOOLS_STOLEN_H */
