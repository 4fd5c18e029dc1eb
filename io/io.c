/*
 * io/io.c: the fast path and the accessors of an open device. The burst wrappers
 * (rf_io_rx_burst, rf_io_tx_burst) live here so that the device stays opaque to apps: one
 * direct call per burst on top of the driver's indirect one. The registry is io_registry.c,
 * config strings io_config.c, open/close io_dev.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/io.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"

/* ---- fast path ------------------------------------------------------------------------- */

unsigned rf_io_rx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			unsigned n)
{
	unsigned k = dev->ops->rx_burst(dev, queue, pkts, n);
	/* The port id is the layer's, not the driver's: set it here for every driver. */
	for (unsigned i = 0; i < k; i++)
		pkts[i]->port = dev->port;
	return k;
}

unsigned rf_io_tx_burst(struct rf_io_dev *dev, unsigned queue, struct rf_pktbuf **pkts,
			unsigned n)
{
	/* Debug pools: a buffer sent after it was freed is reported here, for every driver
	 * (one relaxed load per buffer when no debug pool exists). */
	for (unsigned i = 0; i < n; i++)
		rf_pktbuf_debug_check(pkts[i], "rf_io_tx_burst");
	return dev->ops->tx_burst(dev, queue, pkts, n);
}

int rf_io_wait_fd(struct rf_io_dev *dev, unsigned queue)
{
	return dev->ops->wait_fd ? dev->ops->wait_fd(dev, queue) : -1;
}

/* ---- accessors ------------------------------------------------------------------------- */

unsigned rf_io_nqueues(const struct rf_io_dev *dev)
{
	return dev->nqueues;
}

const char *rf_io_driver_name(const struct rf_io_dev *dev)
{
	return dev->ops->name;
}

const char *rf_io_spec(const struct rf_io_dev *dev)
{
	return dev->spec;
}

unsigned rf_io_caps(const struct rf_io_dev *dev)
{
	return dev->ops->caps | (dev->ops->wait ? RF_IO_CAP_WAIT : 0);
}

bool rf_io_frame_mode(const struct rf_io_dev *dev)
{
	return dev->frames;
}

uint16_t rf_io_port_id(const struct rf_io_dev *dev)
{
	return dev->port;
}

struct rf_pktbuf_pool *rf_io_pool(const struct rf_io_dev *dev)
{
	return dev->pool;
}

int rf_io_mac(const struct rf_io_dev *dev, uint8_t mac[6])
{
	if (!dev->has_mac)
		return -ENOTSUP;
	memcpy(mac, dev->mac, 6);
	return 0;
}

unsigned rf_io_mtu(const struct rf_io_dev *dev)
{
	return dev->mtu;
}

int rf_io_link_up(struct rf_io_dev *dev)
{
	return dev->ops->link_up ? dev->ops->link_up(dev) : -ENOTSUP;
}

int rf_io_xstats_get(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n)
{
	return dev->ops->xstats ? (int)dev->ops->xstats(dev, xs, n) : 0;
}

int rf_io_xstat_get(struct rf_io_dev *dev, const char *name, uint64_t *value)
{
	int total = rf_io_xstats_get(dev, NULL, 0), rc = -ENOENT;
	struct rf_io_xstat *xs = total > 0 ? calloc((size_t)total, sizeof(*xs)) : NULL;
	if (!xs)
		return total > 0 ? -ENOMEM : -ENOENT;
	total = rf_io_xstats_get(dev, xs, (unsigned)total);
	for (int i = 0; i < total; i++)
		if (strcmp(xs[i].name, name) == 0) {
			*value = xs[i].value;
			rc = 0;
			break;
		}
	free(xs);
	return rc;
}

int rf_io_wait(struct rf_io_dev *dev, unsigned queue, int timeout_ms)
{
	if (dev->ops->wait)
		return dev->ops->wait(dev, queue, timeout_ms);
	int fd = rf_io_wait_fd(dev, queue);
	if (fd < 0) {
		struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		return 0;
	}
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int rc = poll(&pfd, 1, timeout_ms);
	return rc < 0 ? -errno : rc;
}

