/*
 * ringflow/ctl.h: the control socket and the Prometheus endpoint of a running process.
 *
 * The one idea: one ordinary thread (not a poller) answers questions about the process, so
 * asking never costs the pollers anything but the registry's relaxed loads (stats.h). The
 * app starts it with rf_ctl_start and stops it with rf_ctl_stop; the library installs no
 * signal handler and never exits.
 *
 * The control socket is a Unix stream socket, mode 0600, at
 *   $XDG_RUNTIME_DIR/ringflow/APP.PID.sock   when XDG_RUNTIME_DIR is set,
 *   /run/ringflow/APP.PID.sock              for root,
 *   /tmp/ringflow-UID/APP.PID.sock          otherwise,
 * removed by rf_ctl_stop. The protocol is JSON lines, in the spirit of DPDK telemetry v2:
 * the server first sends {"ringflow":1,"app":"echo","pid":123,"max_output_len":N}; then
 * each request is one JSON object on one line, e.g. {"cmd":"stats","path":"ports/echo0"},
 * answered by one line {"cmd":"stats","result":VALUE} or {"cmd":"stats","error":"..."}.
 * Commands: list, info, stats [path], pollers, reset, log-level [level], and the app's
 * (rf_ctl_register). docs/observing.md has the whole list and ringflow-ctl, the client.
 *
 * The Prometheus endpoint (cfg.metrics = "IP:PORT") serves GET /metrics in the text
 * exposition format (rf_stats_write_prometheus) over HTTP/1.0-style one-shot connections.
 *
 * Bad input: a request over RF_CTL_MAX_REQUEST bytes, malformed JSON or an unknown command
 * gets one error line; a client that does not read its answers is not read from (so it
 * cannot make the server hold more than one answer for it) and is closed after
 * cfg.timeout_ms without progress; past cfg.max_clients, a new client gets one error line
 * and is closed. Memory is bounded by max_clients * max_output_len.
 *
 * Thread-safety: rf_ctl_register may be called from any thread at any time; an app
 * command runs on the control thread, so it must be safe to run concurrently with the
 * pollers (read their data as the registry does, or hand the work to the service thread).
 * The control thread is a QSBR reader (qsbr.h), online only while an app command runs, so a
 * command may read RCU-protected tables (hash.h) directly.
 */
#ifndef RINGFLOW_CTLSOCK_H
#define RINGFLOW_CTLSOCK_H

#include <stddef.h>

#include <ringflow/json.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

struct rf_stats;
struct rf_ctl;
struct rf_runtime;
struct rf_io_dev;
struct rf_pktbuf_pool;

#define RF_CTL_MAX_REQUEST 4096

struct rf_ctl_config {
	struct rf_stats *stats; /* the registry to serve (its app name names the socket) */
	const char *sock_path;  /* NULL: the default path above; "": no control socket */
	const char *metrics;    /* "IP:PORT" ("127.0.0.1:9100", "[::1]:0"; port 0: any), or NULL */
	unsigned max_clients;   /* clients at once; 0 = 64 */
	size_t max_output_len;  /* longest answer; 0 = 4 MiB */
	unsigned timeout_ms;    /* a client that makes no progress this long is closed; 0 = 10000 */
};

/*
 * An app command: answer req (the request object; its "cmd" is the name) by writing one
 * JSON value into out and returning 0, or return a negative errno and write a one-line
 * message (plain text) into out.
 */
typedef int (*rf_ctl_cmd_fn)(const struct rf_json *req, struct rf_buf *out, void *arg);

/* Start the control thread. NULL + errno and one line in err (socket path too long, in
 * use by a live process, metrics address bad or taken). */
struct rf_ctl *rf_ctl_start(const struct rf_ctl_config *cfg, char *err, size_t len);

/* Stop the thread, close every client, remove the socket file, free (and the registry,
 * when rf_ctl_start_app made it). NULL: no-op. */
void rf_ctl_stop(struct rf_ctl *ctl);

/* Add a command (name: [a-z0-9_-], at most 31 characters; help: one line, static
 * storage). 0, -EEXIST, -EINVAL, -ENOSPC (RF_CTL_MAX_CMDS). */
#define RF_CTL_MAX_CMDS 32
int rf_ctl_register(struct rf_ctl *ctl, const char *name, const char *help, rf_ctl_cmd_fn fn,
		    void *arg);

/* The socket's path ("" when none), and the metrics port actually bound (0: none). */
const char *rf_ctl_path(const struct rf_ctl *ctl);
int rf_ctl_metrics_port(const struct rf_ctl *ctl);

/* The usual sources of a dataplane app, for rf_ctl_start_app. */
struct rf_ctl_app {
	const char *app;                /* registry and socket name ("echo", "l2fwd") */
	const char *metrics;            /* the app's --metrics IP:PORT, or NULL */
	struct rf_runtime *rt;          /* its pollers, or NULL */
	struct rf_io_dev *const *devs;  /* ndevs devices, named dev_names[i] in the tree */
	const char *const *dev_names;
	unsigned ndevs;
	struct rf_pktbuf_pool *pool;    /* the packet pool, or NULL */
	const char *pool_name;          /* its name (NULL: the app's) */
};

/* Make a registry named a->app holding a's sources and start the control thread on it
 * (socket at the default path, Prometheus at a->metrics). NULL + errno and one line in err;
 * nothing is left behind. The app may add more sources to rf_ctl_stats(ctl) and commands
 * with rf_ctl_register; rf_ctl_stop then also destroys the registry. */
struct rf_ctl *rf_ctl_start_app(const struct rf_ctl_app *a, char *err, size_t len);

/* The registry ctl serves (NULL for NULL). */
struct rf_stats *rf_ctl_stats(const struct rf_ctl *ctl);

/* The directory sockets go in (see above), without creating it. Returns the length as
 * snprintf. */
int rf_ctl_dir(char *buf, size_t len);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_CTLSOCK_H */
