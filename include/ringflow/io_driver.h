/*
 * ringflow/io_driver.h: what a driver sees of the I/O layer, and only drivers include.
 *
 * The one idea: a driver is one ops table (struct rf_io_ops, like libevent's struct eventop
 * or DPDK's eth_dev_ops) handed to rf_io_register; io.c parses the config string, checks the
 * keys, allocates the struct rf_io_dev and calls the table. Apps never see the table or the
 * device's fields (ringflow/io.h keeps struct rf_io_dev opaque and offers accessors), so the
 * layout below can change without touching an app. Built-in drivers live in io/ and reach
 * this header through io/io_pvt.h; an out-of-tree driver includes it directly.
 *
 * A driver's duties, in both modes: rx_burst sets queue (io.c sets port), tx_burst obeys
 * the buffer ownership rule of io.h (another pool's buffer is copied and counted in the
 * xstat `tx_copies`), stats/xstats read counters with relaxed loads from any thread.
 * A driver with RF_IO_CAP_FRAMES reads dev->frames at open and then follows io.h's frame
 * contract; io.c refuses frames=1 for any other driver before open is called.
 */
#ifndef RINGFLOW_IO_DRIVER_H
#define RINGFLOW_IO_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ringflow/io.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

/*
 * The layout of struct rf_io_ops and struct rf_io_dev below. It goes up with any change to
 * either (and the library's SOVERSION with it, docs/abi.md); rf_io_register refuses, with
 * -EPROTO and one line in the log, a table whose abi_version or size differ from the
 * library's, so a driver built against other headers is never called.
 */
#define RF_IO_OPS_VERSION 1u
/* Begin every ops table with this: { RF_IO_OPS_ABI, .name = "mydrv", ... } (C, or C++20;
 * in C++17 set .abi_version and .size by assignment). */
#define RF_IO_OPS_ABI .abi_version = RF_IO_OPS_VERSION, .size = sizeof(struct rf_io_ops)

/*
 * A driver. Called by io.c only: open after the config was parsed and its keys checked
 * against `keys` (plus the common `queues` and `frames`); the fast-path calls through
 * rf_io_rx_burst / rf_io_tx_burst.
 */
struct rf_io_ops {
	/* RF_IO_OPS_ABI sets both. These two members stay first in every version. */
	uint32_t abi_version; /* RF_IO_OPS_VERSION of the headers the driver was built with */
	uint32_t size;        /* sizeof(struct rf_io_ops) there */
	const char *name;  /* the config prefix: "udp", "tcp", "uring", "xdp", "dpdk", "packet" */
	const char *usage; /* one line: the keys and an example */
	const char *keys;  /* comma-separated driver keys, e.g. "listen,connect,busy_poll" */
	const char *transports; /* comma-separated second-level prefixes ("udp,tcp"), or NULL */
	unsigned max_queues;    /* largest nqueues the driver supports (>= 1) */
	/* 0 when usable on this machine; else -errno and a reason in why (shown in the registry). */
	int (*probe)(char *why, size_t len);
	/* Open dev (pool, nqueues, port, frames and spec set; set priv, and mac/has_mac/mtu
	 * when known). 0, or -errno and one line in err; on failure the driver has released
	 * everything it took. */
	int (*open)(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len);
	/* Up to n received messages (frames) into pkts; returns how many. Buffers come from
	 * dev->pool, except where a driver brings its own (dpdk: its rte_mbuf pool,
	 * docs/backends.md); rf_pktbuf_free returns any buffer to whichever pool it came from. */
	unsigned (*rx_burst)(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n);
	/* Send pkts[0..n). Returns k: pkts[0..k) are consumed (sent, queued, or dropped for
	 * good and counted in tx_drops) and now owned by the driver; the caller still owns
	 * pkts[k..n) (free them or retry). */
	unsigned (*tx_burst)(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			     unsigned n);
	/* An fd that becomes readable (poll/epoll, level-triggered) when queue may have work, or -1. */
	int (*wait_fd)(struct rf_io_dev *dev, unsigned queue);
	/* Optional (NULL: io.c polls wait_fd): block up to timeout_ms until queue may have
	 * work. >0 ready, 0 timeout, -errno. */
	int (*wait)(struct rf_io_dev *dev, unsigned queue, int timeout_ms);
	/* Add this device's counters into *st (already zeroed by the caller). Any thread. */
	void (*stats)(struct rf_io_dev *dev, struct rf_io_stats *st);
	/* Optional (NULL: a one-queue device reports stats() for queue 0): add queue's own
	 * counters into *st (zeroed by the caller; queue < nqueues checked by io.c). Any thread. */
	void (*queue_stats)(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st);
	/* Optional: the device's extended counters, as rf_io_xstats_get (fill xs[0..min(n,
	 * total)), return total). rf_io_xstat_put helps. Any thread. */
	unsigned (*xstats)(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n);
	/* Optional: link state, 1 up, 0 down, -errno. Any thread. */
	int (*link_up)(struct rf_io_dev *dev);
	/* Release everything; free buffers the driver still holds back to their pool. */
	void (*close)(struct rf_io_dev *dev);
	/* Optional: process-wide setup with the app's arguments (rf_io_driver_init; dpdk: the
	 * EAL's argv), before the first open. 0, or -errno and one line in err. */
	int (*init)(int argc, char **argv, char *err, size_t len);
	/* Optional: undo init once no device of the driver is open (rf_io_driver_fini). */
	void (*fini)(void);
	unsigned caps; /* RF_IO_CAP_* (RF_IO_CAP_WAIT is added by io.c when wait is set) */
};

/* An open driver instance. io.c fills all but priv/mac/has_mac/mtu before ops->open. */
struct rf_io_dev {
	const struct rf_io_ops *ops;
	void *priv;                  /* driver state */
	struct rf_pktbuf_pool *pool; /* where rx buffers come from */
	struct rf_pktbuf_pool *jumbo_pool; /* messages longer than pool's room (tcp), or NULL */
	unsigned nqueues;
	uint16_t port;               /* port id: rf_pktbuf.port of every received buffer */
	bool frames;                 /* frame mode (frames=1): the driver has RF_IO_CAP_FRAMES */
	bool has_mac;                /* mac is set (by the driver at open) */
	uint8_t mac[6];
	unsigned mtu;                /* set by the driver at open; 0 unknown */
	char spec[RF_IO_SPEC_MAX];
};

/* For ops->xstats: store (name, value) at xs[i] when i < n; returns i + 1, the next index. */
static inline unsigned rf_io_xstat_put(struct rf_io_xstat *xs, unsigned n, unsigned i,
				       const char *name, uint64_t value)
{
	if (i < n) {
		size_t l = strlen(name);
		if (l >= RF_IO_XSTAT_NAME_MAX)
			l = RF_IO_XSTAT_NAME_MAX - 1;
		memcpy(xs[i].name, name, l);
		xs[i].name[l] = '\0';
		xs[i].value = value;
	}
	return i + 1;
}

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_IO_DRIVER_H */
