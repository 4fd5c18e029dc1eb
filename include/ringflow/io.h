/*
 * ringflow/io.h: one I/O driver interface over sockets, io_uring, AF_XDP, AF_PACKET and DPDK.
 *
 * The one idea: an application is written once against bursts of packet buffers
 * (struct rf_pktbuf, see pktbuf.h) and picks its path to the network with a config string,
 * e.g. "udp:listen=0.0.0.0:9000" or "xdp:dev=veth1,frames=1". Each driver fills one ops table
 * (like libevent's struct eventop or DPDK's eth_dev_ops; see ringflow/io_driver.h, which only
 * drivers include); the string's prefix chooses the table. docs/config.md documents every
 * string. A device (struct rf_io_dev) is opaque: read it through the accessors below.
 *
 * Two modes, chosen at open by the common key `frames`:
 *
 * Message mode (frames=0, the default; every driver): a buffer's data is the L4 payload.
 * rx_burst fills `peer` with the remote IP:port (UDP) and `flow` with the connection id
 * (TCP); tx_burst sends the data to `peer` (UDP) or on `flow` (TCP). An echo is therefore
 * rx_burst then tx_burst of the same buffers, unchanged. Raw drivers (xdp, dpdk) strip and
 * prepend Ethernet/IPv4/UDP headers in the buffer's headroom themselves, and answer ARP.
 * Connection events (tcp with `events=1`, docs/config.md): rx_burst also hands over
 * zero-length buffers flagged RF_PKTBUF_F_CONN_UP / RF_PKTBUF_F_CONN_DOWN, and a tx buffer
 * flagged RF_PKTBUF_F_CLOSE / RF_PKTBUF_F_ABORT closes its connection (pktbuf.h).
 *
 * Frame mode (frames=1; drivers with RF_IO_CAP_FRAMES: xdp, dpdk, packet): rx_burst hands
 * over whole Ethernet frames, every frame the port's queue receives (ARP, VLAN-tagged, IPv6,
 * LLDP, ... all of them): data starts at the destination MAC, data_len is the frame's
 * length without FCS, `peer_len` is 0. tx_burst sends a buffer's data_len bytes as one frame,
 * unchanged: no ARP, no header rewrite, no checksum change. `port=` and `ip=` are not needed.
 * A received frame shorter than an Ethernet header (14 bytes) or longer than a buffer's room
 * is dropped and counted in rx_drops; a tx buffer shorter than 14 bytes or longer than the
 * device can send (its MTU plus Ethernet and VLAN headers) is consumed, dropped and counted
 * in tx_drops. Opening `frames=1` on a driver without frame mode fails with one line.
 *
 * Ports: every open device gets a port id, unique among the process's open devices
 * (rf_io_port_id; the lowest free one, reused after close). rf_io_rx_burst sets
 * rf_pktbuf.port of every buffer it returns to it, in both modes, so an app with several
 * devices knows where each buffer came from.
 *
 * Buffer ownership across ports: a buffer received on one device may be given to
 * rf_io_tx_burst of another (that is forwarding). Once consumed (see rf_io_tx_burst) the
 * buffer belongs to the transmitting device, which frees it to its own pool (b->pool) after
 * sending. Where both devices share packet memory no bytes move: xdp devices opened on the
 * same pktbuf pool share one UMEM, all dpdk devices of a process share one mbuf pool, packet
 * devices take buffers of the pool they were given. Otherwise the transmitting driver copies
 * the data into a buffer of its own, frees the original, and counts the copy in its xstat
 * `tx_copies`. The same holds for buffers the app allocated itself from any pool.
 *
 * Queues: a device has nqueues queues (config key `queues`, default given at open). Each
 * queue is used by one thread at a time (its poller), except that a driver with
 * RF_IO_CAP_SPLIT_RXTX allows one thread receiving and another sending on the same queue;
 * different queues of one device may be used by different threads concurrently.
 * In frame mode with queues=K the traffic is spread over K queues by the device (RSS, a
 * fanout group; one AF_XDP socket per queue): one flow stays on one queue.
 * rf_io_stats_get and rf_io_xstats_get may run concurrently with anything. rf_io_open,
 * rf_io_close and the registry calls are not for the fast path; the registry is thread-safe.
 *
 * Errors: functions returning int return 0 (or a count) or a negative errno; rf_io_open
 * returns NULL and writes ONE line into err (what failed, why, how to fix it) and sets errno.
 * Burst calls return a count (never negative). A failed open leaves nothing open behind.
 */
#ifndef RINGFLOW_IO_H
#define RINGFLOW_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

struct rf_pktbuf;      /* pktbuf.h */
struct rf_pktbuf_pool; /* pktbuf.h */

#define RF_IO_MAX_KEYS 16     /* key=value pairs in one config string */
#define RF_IO_KEY_MAX 32      /* longest key + 1 */
#define RF_IO_VAL_MAX 256     /* longest value + 1 */
#define RF_IO_NAME_MAX 16     /* longest driver or transport name + 1 */
#define RF_IO_SPEC_MAX 1024   /* longest config string + 1 */
#define RF_IO_MAX_QUEUES 64   /* upper bound of the common key `queues` */
#define RF_IO_MAX_BURST 256   /* upper bound of any burst size n */
#define RF_IO_MAX_PORTS 1024  /* devices open at once in one process (port ids 0..1023) */
#define RF_IO_XSTAT_NAME_MAX 32 /* longest extended-counter name + 1 */

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
	bool frames;      /* common key `frames` (frame mode), default false */
};

/* Counters of one device (sum over its queues). Drivers keep them with relaxed atomics. */
struct rf_io_stats {
	uint64_t rx_pkts, rx_bytes; /* messages (frames in frame mode) handed to the app */
	uint64_t tx_pkts, tx_bytes; /* messages accepted by tx_burst and sent (or queued to send)
				     * as they were given: a buffer the driver had to turn into
				     * something else (an ARP request) is not counted here */
	uint64_t rx_nobuf;          /* rx_burst calls that found the buffer pool empty */
	uint64_t rx_drops;          /* messages dropped by the driver on receive (too long, bad frame) */
	uint64_t tx_drops;          /* messages tx_burst consumed but could not send (peer gone, error) */
	uint64_t conns_open;        /* connection drivers: connections open now */
	uint64_t conns_total;       /* connection drivers: connections accepted/made since open */
};

/* One extended counter of a device: a driver-specific name and its value (like DPDK's
 * xstats), e.g. "tx_no_neigh", "rx_csum_partial", "fill_ring_empty", "tx_copies". */
struct rf_io_xstat {
	char name[RF_IO_XSTAT_NAME_MAX];
	uint64_t value;
};

struct rf_io_dev; /* an open device: opaque, see the accessors below */
struct rf_io_ops; /* a driver's ops table: ringflow/io_driver.h */

/* Capabilities (rf_io_caps). */
/* rx_burst and tx_burst of one queue may run at the same time on two threads (one
 * receiving, one sending), e.g. a load generator's receiver on another core. Without it, a
 * queue is used by one thread at a time. */
#define RF_IO_CAP_SPLIT_RXTX 0x1u
/* The driver has frame mode (config key frames=1). */
#define RF_IO_CAP_FRAMES 0x2u
/* rf_io_wait blocks in the driver itself (no wait fd needed; the runtime waits on it). */
#define RF_IO_CAP_WAIT 0x4u

/* ---- registry -------------------------------------------------------------------------- */

/*
 * Add a driver. Built-in drivers are registered on first use of the registry; call this for
 * an out-of-tree driver (its ops table is defined with ringflow/io_driver.h). Runs
 * ops->probe(): a driver that is unusable here is kept apart, with its reason, and cannot be
 * opened. 0, -EEXIST (name taken), -ENOSPC, -EINVAL, or -EPROTO: the table was built
 * against another struct rf_io_ops (its abi_version or size differ from this library's;
 * one line in the log says which).
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

/*
 * Process-wide setup of a driver with the app's own arguments, before its first open. For
 * "dpdk" argv is the EAL's command line, argv[0] the program name, passed to rte_eal_init
 * as is (e.g. {"app", "-l", "1", "-a", "0000:03:00.0"} for a PCI port); without this call
 * the first dpdk open starts the EAL with ringflow's defaults (docs/backends.md), and an EAL
 * the app started itself with rte_eal_init is used as it is. The library installs no exit
 * handler: call rf_io_driver_fini at the end if the driver should release its global state.
 * 0; -ENODEV driver absent; -ENOTSUP no such setup; -EALREADY done already (or a device is
 * open); else -errno with one line in err.
 */
int rf_io_driver_init(const char *driver, int argc, char **argv, char *err, size_t len);

/* Undo the driver's process-wide state (dpdk: rte_eal_cleanup, which DPDK allows once per
 * process). Only when none of its devices is open; no-op for drivers without it. */
void rf_io_driver_fini(const char *driver);

/* ---- config strings -------------------------------------------------------------------- */

/*
 * Parse spec into cfg (syntax only: prefixes and the key=value list; no registry lookup).
 * 0, or -EINVAL with one line in err.
 */
int rf_io_config_parse(const char *spec, struct rf_io_config *cfg, char *err, size_t len);

/* The value of key, or NULL when absent. */
const char *rf_io_config_get(const struct rf_io_config *cfg, const char *key);

/* Typed getters: *out = value of key, or def when absent. 0, or -EINVAL with one line in err
 * naming the key, the bad value and what is valid (e.g. "udp: burst=999: must be an integer
 * in 1..256"). Numbers are decimal digits only: "010" is 10; "0x10", "+1" are errors. */
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
 * Open the device that spec names, taking rx buffers from pool, and give it the lowest free
 * port id. NULL + errno and one line in err when the driver is unknown or unusable (the line
 * lists what is available here and why the others are absent), a key is unknown (the line
 * lists the valid keys), a value is bad, frames=1 is asked of a driver without frame mode
 * (EOPNOTSUPP), RF_IO_MAX_PORTS devices are open (EMFILE), or the driver fails (e.g. port in
 * use, no such interface, more queues than the interface has: the line says how to fix it).
 * Common keys every driver accepts: `queues` (1..RF_IO_MAX_QUEUES) and `frames` (boolean).
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

/* Counters of one queue alone, as its poller keeps them (each driver counts per queue, on
 * the queue's own line, so nothing is shared on the fast path). Over every queue, rx/tx
 * packets and bytes, rx_nobuf and tx_drops add up to rf_io_stats_get's; rx_drops too, except
 * drops a device counts for no queue (dpdk's imissed/ierrors: the device total only).
 * 0; -EINVAL queue >= nqueues; -ENOTSUP a driver without per-queue counters (and more than
 * one queue). Any thread, any time (relaxed loads: each value exact, not a joint snapshot). */
int rf_io_queue_stats_get(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st);

/* Block up to timeout_ms until queue may have work: the driver's wait(), else poll() on its
 * wait fd, else sleep. >0 ready, 0 timeout, -errno. Only queue's own thread. */
int rf_io_wait(struct rf_io_dev *dev, unsigned queue, int timeout_ms);

/* Receive up to n (<= RF_IO_MAX_BURST) messages (frames in frame mode) on queue into
 * pkts; returns how many. Each buffer's port is rf_io_port_id(dev) and queue is queue.
 * Only queue's own thread. */
unsigned rf_io_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			unsigned n);

/* Send pkts[0..n). Returns k: pkts[0..k) are consumed (sent, queued, or dropped for good and
 * counted in tx_drops) and now owned by the device; the caller still owns pkts[k..n) (free
 * them or retry). Buffers may come from any device or pool (see "Buffer ownership" above).
 * n = 0 sends nothing but lets the driver take back what it has finished sending (buffers
 * return to their pools). Only queue's own thread. */
unsigned rf_io_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			unsigned n);

/* The fd to block on for queue (readable when it may have work), or -1. */
int rf_io_wait_fd(struct rf_io_dev *dev, unsigned queue);

/* ---- device accessors (any thread, any time while the device is open) ------------------- */

/* Number of queues. */
unsigned rf_io_nqueues(const struct rf_io_dev *dev);

/* The driver's name ("udp", "xdp", ...). */
const char *rf_io_driver_name(const struct rf_io_dev *dev);

/* The config string the device was opened with. */
const char *rf_io_spec(const struct rf_io_dev *dev);

/* RF_IO_CAP_* of the device's driver. */
unsigned rf_io_caps(const struct rf_io_dev *dev);

/* True when the device was opened in frame mode (frames=1). */
bool rf_io_frame_mode(const struct rf_io_dev *dev);

/* The device's port id (0..RF_IO_MAX_PORTS-1), unique among the open devices of the process;
 * rf_pktbuf.port of every buffer it receives. */
uint16_t rf_io_port_id(const struct rf_io_dev *dev);

/* The pool the device was opened with. */
struct rf_pktbuf_pool *rf_io_pool(const struct rf_io_dev *dev);

/* The device's Ethernet address into mac: 0, or -ENOTSUP when it has none (socket drivers). */
int rf_io_mac(const struct rf_io_dev *dev, uint8_t mac[6]);

/* The device's MTU (bytes of L3 payload per frame), or 0 when unknown (socket drivers). */
unsigned rf_io_mtu(const struct rf_io_dev *dev);

/* Link state now: 1 up, 0 down, -ENOTSUP when the driver cannot tell. */
int rf_io_link_up(struct rf_io_dev *dev);

/* ---- extended counters ----------------------------------------------------------------- */

/*
 * The device's extended counters (driver-specific, e.g. tx_no_neigh, tx_copies,
 * fill_ring_empty, wakeup_kicks; docs/backends.md lists them per driver). Fills
 * xs[0..min(n, total)) and returns total, the number the device has (0 when none), so a
 * call with n = 0 sizes the array. Names and their order are fixed for the device's life.
 * Any thread, any time (each value exact, not a joint snapshot).
 */
int rf_io_xstats_get(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n);

/* The value of the extended counter called name: 0 and *value, or -ENOENT. */
int rf_io_xstat_get(struct rf_io_dev *dev, const char *name, uint64_t *value);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_IO_H */
