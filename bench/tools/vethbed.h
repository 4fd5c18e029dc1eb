/*
 * bench/tools/vethbed.h: a throw-away test bed of two network namespaces joined by a veth
 * pair, for tools that need real packets crossing a device without touching the machine's own interfaces or lo.
 *
 *   netns rf<tag><pid>a  [dev rf<tag><pid>a 10.201.0.1/24] <--veth--> [dev rf<tag><pid>b
 *   10.201.0.2/24]  netns rf<tag><pid>b
 *
 * Names carry the PID, so parallel runs never collide; the addresses live only inside the two
 * namespaces, so they cannot clash with anything else on the machine. Setup and teardown run
 * iproute2 (`ip`), as a person would; deleting the namespaces deletes the veth pair.
 * Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN). Errors: negative errno.
 */
#ifndef RINGFLOW_BENCH_TOOLS_VETHBED_H
#define RINGFLOW_BENCH_TOOLS_VETHBED_H

#include <net/if.h>
#include <stdbool.h>

struct rf_vethbed {
	char ns[2][IFNAMSIZ];  /* namespace of side 0 (sender) and side 1 (receiver) */
	char dev[2][IFNAMSIZ]; /* veth end in that namespace (same name as the namespace) */
	char addr[2][16];      /* IPv4 address of that end */
	int home_ns;           /* fd of the namespace the creating thread started in */
	bool created;
};

/* Creates the bed; `tag` is one or two letters naming the user ("st", "ns", "t"). On failure
 * everything created so far is removed again. Returns 0 or -errno. */
int rf_vethbed_create(struct rf_vethbed *b, const char *tag);

/* Steers receive processing of side's device to `cpu` with RPS (rx-0/rps_cpus, written from
 * inside the namespace, whose sysfs only shows its own devices). Returns 0 or -errno. */
int rf_vethbed_set_rps(const struct rf_vethbed *b, int side, unsigned cpu);

/* Moves the calling thread into side's namespace (side -1: back to the one the creating thread
 * was in).
 * Sockets keep the namespace they were created in. Returns 0 or -errno. */
int rf_vethbed_enter(const struct rf_vethbed *b, int side);

/* Deletes both namespaces (and so the veth pair). Safe to call twice. */
void rf_vethbed_destroy(struct rf_vethbed *b);

/* The same from a signal handler: only fork, execve and waitpid (async-signal-safe), `ip`
 * looked for in the usual places. */
void rf_vethbed_destroy_in_signal(const struct rf_vethbed *b);

/* Runs argv (searched in PATH) with stdout/stderr discarded; returns its exit status or -errno. */
int rf_run_quiet(const char *const argv[]);

#endif /* RINGFLOW_BENCH_TOOLS_VETHBED_H */
