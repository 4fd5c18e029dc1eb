/*
 * apps/ctl/ctl_client.h: how ringflow-ctl finds a running ringflow process and asks it one
 * question over its control socket (ctl.h: a hello line, then one JSON line per request).
 */
#ifndef RINGFLOW_CTL_CLIENT_H
#define RINGFLOW_CTL_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

#include <ringflow/json.h>

struct ctl_proc {
	pid_t pid;
	char app[32];
	char path[108];
};

/* Live processes with a socket in the socket directory (rf_ctl_dir, ctl.h), at most max. */
int ctl_find(struct ctl_proc *out, int max);

/* Connect to path; -1 and one line in err. */
int ctl_connect(const char *path, char *err, size_t len);

/* Send one request line, read the answer line; the parsed answer object or NULL + err. */
struct rf_json *ctl_ask(int fd, const char *req, char *err, size_t len);

/* Read and parse one line (e.g. the hello line). */
struct rf_json *ctl_read(int fd, char *err, size_t len);

#endif
