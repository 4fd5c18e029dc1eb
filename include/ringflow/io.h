/*
 * ringflow/io.h: one I/O driver interface over sockets, io_uring, AF_XDP and DPDK.
 *
 * The one idea: an application is written once against bursts of packet buffers
 * (struct rf_pktbuf, see pktbuf.h) and picks its path to the network with a config string,
 * e.g. "udp:listen=0.0.0.0:9000" or "uring:tcp:connect=10.0.0.2:9000,sqpoll=1". Each driver
 * fills one ops table (like libevent's struct eventop or DPDK's eth_dev_ops); the string's
 * prefix chooses the table. docs/config.md documents every string.
 *
 * Connection events (tcp with `events=1`, docs/config.md): rx_burst also hands over
 * zero-length buffers flagged RF_PKTBUF_F_CONN_UP / RF_PKTBUF_F_CONN_DOWN, and a tx buffer
 * flagged RF_PKTBUF_F_CLOSE / RF_PKTBUF_F_ABORT closes its connection (pktbuf.h).
 *
 * Message contract (all drivers): a buffer's data is the L4 payload. rx_burst fills `peer`
 * with the remote IP:port (UDP) and `flow` with the connection id (TCP); tx_burst sends the
 * data to `peer` (UDP) or on `flow` (TCP). An echo is therefore rx_burst then tx_burst of the
 * same buffers, unchanged. Raw drivers (xdp, dpdk) strip and prepend Ethernet/IPv4/UDP headers
 * in the buffer's headroom themselves.
 *
 * Queues: a device has nqueues queues (config key `queues`, default given at open). Each
 * queue is used by one thread at a time (its poller), except that a driver with
 * RF_IO_CAP_SPLIT_RXTX allows one thread receiving and another sending on the same queue;
 * different queues of one device may be used by different threads concurrently. rf_io_stats_get may run concurrently with anything.
 * rf_io_open/rf_io_close and the registry calls are not for the fast path; the registry is
 * thread-safe.
 *
 * Errors: functions returning int return 0 or a negative errno; rf_io_open returns NULL and
 * writes ONE line into err (what failed, why, how to fix it) and sets errno. Burst calls
 * return a count (never negative). A failed open leaves nothing open behind.
 */
#ifndef RINGFLOW_IO_H
#define RINGFLOW_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rf_pktbuf;      /* pktbuf.h */
struct rf_pktbuf_pool; /* pktbuf.h */

#define RF_IO_MAX_KEYS 16     /* key=value pairs in one config string */
#define RF_IO_KEY_MAX 32      /* longest key + 1 */
#define RF_IO_VAL_MAX 256     /* longest value + 1 */
#define RF_IO_NAME_MAX 16     /* longest driver or transport name + 1 */
#define RF_IO_SPEC_MAX 1024   /* longest config string + 1 */
#define RF_IO_MAX_QUEUES 64   /* upper bound of the common key `queues` */
#define RF_IO_MAX_BURST 256   /* upper bound of any burst size n */

/* A parsed config string "driver[:transport]:key=value,key=value". */
struct rf_io_config {
	char spec[RF_IO_SPEC_MAX];      /* the string as given */
	char driver[RF_IO_NAME_MAX];    /* "udp", "tcp", "uring", "xdp", "dpdk" */
	char transport[RF_IO_NAME_MAX]; /* two-level prefixes: "udp" in "uring:udp:..."; else "" */
	unsigned nkeys;
	struct {
		char key[RF_IO_KEY_MAX];
		char val[RF_IO_VAL_MAX];
	} kv[RF_IO_MAX_KEYS];
	unsigned nqueues; /* common key `queues` (1..RF_IO_MAX_QUEUES), or the open's default */
};

/* Counters of one device (sum over its queues). Drivers keep them with relaxed atomics. */
struct rf_io_stats {
	uint64_t rx_pkts, rx_bytes; /* messages handed to the app */
	uint64_t tx_pkts, tx_bytes; /* messages accepted by tx_burst and sent (or queued to send) */
	uint64_t rx_nobuf;          /* rx_burst calls that found the buffer pool empty */
	uint64_t rx_drops;          /* messages dropped by the driver on receive (too long, bad frame) */
	uint64_t tx_drops;          /* messages tx_burst consumed but could not send (peer gone, error) */
	uint64_t conns_open;        /* connection drivers: connections open now */
	uint64_t conns_total;       /* connection drivers: connections accepted/made since open */
};

struct rf_io_dev;

/*
 * A driver. Called by io.c only: open after the config was parsed and its keys checked
 * against `keys`; the fast-path calls through the static inline wrappers below.
 */
struct rf_io_ops {
	const char *name;  /* the config prefix: "udp", "tcp", "uring", "xdp", "dpdk" */
	const char *usage; /* one line: the keys and an example */
	const char *keys;  /* comma-separated driver keys, e.g. "listen,connect,busy_poll" */
	const char *transports; /* comma-separated second-level prefixes ("udp,tcp"), or NULL */
	unsigned max_queues;    /* largest nqueues the driver supports (>= 1) */
	/* 0 when usable on this machine; else -errno and a reason in why (shown in the registry). */
	int (*probe)(char *why, size_t len);
	/* Open dev (dev->pool, dev->nqueues set; set dev->priv). 0, or -errno and one line in err;
	 * on failure the driver has released everything it took. */
	int (*open)(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len);
	/* Up to n received messages into pkts; returns how many. Buffers come from dev->pool,
	 * except where a driver brings its own (dpdk: its rte_mbuf pool, docs/backends.md);
	 * rf_pktbuf_free returns any buffer to whichever pool it came from. */
	unsigned (*rx_burst)(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n);
	/* Send pkts[0..n). Returns k: pkts[0..k) are consumed (sent, queued, or dropped for
	 * good and counted in tx_drops) and now owned by the driver; the caller still owns
	 * pkts[k..n) (free them or retry). */
	unsigned (*tx_burst)(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n);
	/* An fd that becomes readable (epoll, level-triggered) when queue may have work, or -1. */
	int (*wait_fd)(struct rf_io_dev *dev, unsigned queue);
	/* Optional (NULL: io.c polls wait_fd): block up to timeout_ms until queue may have
	 * work. >0 ready, 0 timeout, -errno. */
	int (*wait)(struct rf_io_dev *dev, unsigned queue, int timeout_ms);
	/* Add this device's counters into *st (already zeroed by the caller). Any thread. */
	void (*stats)(struct rf_io_dev *dev, struct rf_io_stats *st);
	/* Release everything; free buffers the driver still holds back to their pool. */
	void (*close)(struct rf_io_dev *dev);
	unsigned caps; /* RF_IO_CAP_* */
};

/* Driver capability: rx_burst and tx_burst of one queue may run at the same time on two
 * threads (one receiving, one sending), e.g. a load generator's receiver on another core.
 * Without it, a queue is used by one thread at a time. */
#define RF_IO_CAP_SPLIT_RXTX 0x1u

/* An open driver instance. Fields are read by the inline wrappers; drivers own priv. */
struct rf_io_dev {
	const struct rf_io_ops *ops;
	void *priv;                  /* driver state */
	struct rf_pktbuf_pool *pool; /* where rx buffers come from */
	struct rf_pktbuf_pool *jumbo_pool; /* messages longer than pool's room (tcp), or NULL */
	unsigned nqueues;
	char spec[RF_IO_SPEC_MAX];
};

/* ---- registry -------------------------------------------------------------------------- */

/*
 * Add a driver. Built-in drivers are registered on first use of the registry; call this for
 * an out-of-tree driver. Runs ops->probe(): a driver that is unusable here is kept apart,
 * with its reason, and cannot be opened. 0, -EEXIST (name taken), -ENOSPC, -EINVAL.
 */
int rf_io_register(const struct rf_io_ops *ops);

/* The usable driver called name, or NULL (absent or unusable). */
const struct rf_io_ops *rf_io_find(const char *name);

/*
 * One line describing the registry, e.g.
 * "available: udp, tcp, uring; absent: xdp (needs root: run as root or with CAP_NET_ADMIN)".
 * Returns the length it wanted (as snprintf).
 */
int rf_io_describe(char *buf, size_t len);

/* Print each usable driver's usage line (for --help). */
void rf_io_print_usage(FILE *out);

/* ---- config strings -------------------------------------------------------------------- */

/*
 * Parse spec into cfg (syntax only: prefixes and the key=value list; no registry lookup).
 * 0, or -EINVAL with one line in err.
 */
int rf_io_config_parse(const char *spec, struct rf_io_config *cfg, char *err, size_t len);

/* The value of key, or NULL when absent. */
const char *rf_io_config_get(const struct rf_io_config *cfg, const char *key);

/* Typed getters: *out = value of key, or def when absent. 0, or -EINVAL with one line in err
 * naming the key, the bad value and what is valid (e.g. "udp: burst=999: must be 1..256"). */
int rf_io_config_get_u32(const struct rf_io_config *cfg, const char *key, uint32_t def,
			 uint32_t min, uint32_t max, uint32_t *out, char *err, size_t len);
/* Booleans: 1/0, yes/no, on/off, true/false. */
int rf_io_config_get_bool(const struct rf_io_config *cfg, const char *key, bool def, bool *out,
			  char *err, size_t len);
/* One of the '|'-separated words in choices (e.g. "skb|drv"): *out = the word's index, or
 * def when absent. */
int rf_io_config_get_enum(const struct rf_io_config *cfg, const char *key, const char *choices,
			  unsigned def, unsigned *out, char *err, size_t len);
/* A numeric address "1.2.3.4:9000" or "[::1]:9000" into *ss / *sl; -ENOENT (err untouched)
 * when key is absent. */
int rf_io_config_get_addr(const struct rf_io_config *cfg, const char *key,
			  struct sockaddr_storage *ss, socklen_t *sl, char *err, size_t len);

/* ---- devices --------------------------------------------------------------------------- */

/*
 * Open the device that spec names, taking rx buffers from pool. NULL + errno and one line in
 * err when the driver is unknown or unusable (the line lists what is available here and why
 * the others are absent), a key is unknown (the line lists the valid keys), a value is bad,
 * or the driver fails (e.g. port in use: the line says how to fix it).
 */
struct rf_io_dev *rf_io_open(const char *spec, struct rf_pktbuf_pool *pool, char *err,
			     size_t len);

/* As rf_io_open, with nqueues queues unless the spec sets `queues=`. The driver's
 * max_queues bounds both. */
struct rf_io_dev *rf_io_open_queues(const char *spec, struct rf_pktbuf_pool *pool,
				    unsigned nqueues, char *err, size_t len);

/* Messages longer than a buffer of the device's pool come in a buffer of jumbo instead
 * (NULL: they are dropped and counted in rx_drops). Honoured by the tcp driver; the others
 * ignore it. Before the first rx_burst. */
void rf_io_set_jumbo_pool(struct rf_io_dev *dev, struct rf_pktbuf_pool *jumbo);

/* Close dev (NULL: no-op). No other call on dev may run concurrently or after. */
void rf_io_close(struct rf_io_dev *dev);

/* Sum of the device's counters. Any thread, any time. */
void rf_io_stats_get(struct rf_io_dev *dev, struct rf_io_stats *st);

/* Block up to timeout_ms until queue may have work: the driver's wait(), else poll() on its
 * wait fd, else sleep. >0 ready, 0 timeout, -errno. Only queue's own thread. */
int rf_io_wait(struct rf_io_dev *dev, unsigned queue, int timeout_ms);

/* Receive up to n (<= RF_IO_MAX_BURST) messages on queue. Only queue's own thread. */
static inline unsigned rf_io_rx_burst(struct rf_io_dev *dev, unsigned queue,
				      struct rf_pktbuf **pkts, unsigned n)
{
	return dev->ops->rx_burst(dev, queue, pkts, n);
}

/* Send pkts[0..n); returns k consumed (see rf_io_ops.tx_burst). Only queue's own thread. */
static inline unsigned rf_io_tx_burst(struct rf_io_dev *dev, unsigned queue,
				      struct rf_pktbuf **pkts, unsigned n)
{
	return dev->ops->tx_burst(dev, queue, pkts, n);
}

/* The fd to block on for queue (readable when it may have work), or -1. */
static inline int rf_io_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	return dev->ops->wait_fd ? dev->ops->wait_fd(dev, queue) : -1;
}

static inline unsigned rf_io_nqueues(const struct rf_io_dev *dev)
{
	return dev->nqueues;
}

static inline const char *rf_io_driver_name(const struct rf_io_dev *dev)
{
	return dev->ops->name;
}

#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_IO_H */
