/*
 * io/io_dev.c: opening and closing devices. rf_io_open parses the spec (io_config.c),
 * finds the driver (io_registry.c), checks every key against the driver's list (and the common
 * keys `queues` and `frames` against what the driver can do) before the driver sees it, gives
 * the device a port id (the lowest free one), then calls the driver's open(). Also the
 * device's counters (rf_io_stats_get and the per-queue sums), and rf_io_read_long, the
 * one-number files (sysfs) drivers read at open.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ringflow/common.h>
#include <ringflow/io.h>
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#include "io_pvt.h"

/* ---- devices --------------------------------------------------------------------------- */

/* Is key one of the comma-separated words in list? */
static bool key_listed(const char *list, const char *key)
{
	size_t kl = strlen(key);
	for (const char *c = list; c && *c;) {
		const char *comma = strchr(c, ',');
		size_t n = comma ? (size_t)(comma - c) : strlen(c);
		if (n == kl && strncmp(c, key, n) == 0)
			return true;
		c += n + (comma ? 1 : 0);
	}
	return false;
}

static bool common_key(const char *k)
{
	return strcmp(k, "queues") == 0 || strcmp(k, "frames") == 0;
}

/* The first config problem the registry can see before the driver runs, or 0. */
static int check_config(const struct rf_io_ops *ops, struct rf_io_config *cfg, unsigned nq,
			char *err, size_t len)
{
	if (ops->transports && !cfg->transport[0])
		return rf_io_err(err, len, "%s: needs a transport (one of %s), e.g. %s:udp:listen=0.0.0.0:9000",
				 ops->name, ops->transports, ops->name);
	if (!ops->transports && cfg->transport[0])
		return rf_io_err(err, len, "%s: takes no transport prefix ('%s:' in '%s'): %s",
				 ops->name, cfg->transport, cfg->spec, ops->usage ? ops->usage : "");
	if (ops->transports && !key_listed(ops->transports, cfg->transport))
		return rf_io_err(err, len, "%s: unknown transport '%s'; valid: %s", ops->name,
				 cfg->transport, ops->transports);
	for (unsigned i = 0; i < cfg->nkeys; i++) {
		const char *k = cfg->kv[i].key;
		if (!common_key(k) && !key_listed(ops->keys, k)) {
			char valid[512];
			size_t o = 0;
			for (const char *c = ops->keys; c && *c && o < sizeof(valid) - 1; c++)
				o += (size_t)snprintf(valid + o, sizeof(valid) - o, *c == ',' ? ", " : "%c", *c);
			snprintf(valid + o, sizeof(valid) - o, "%squeues, frames", o ? ", " : "");
			return rf_io_err(err, len, "%s: unknown key '%s'; valid keys: %s", ops->name,
					 k, valid);
		}
	}
	unsigned maxq = ops->max_queues ? ops->max_queues : 1;
	if (maxq > RF_IO_MAX_QUEUES)
		maxq = RF_IO_MAX_QUEUES;
	if (!rf_io_config_get(cfg, "queues") && nq > maxq)
		return rf_io_err(err, len, "%s: %u queues wanted (one per poller) but the driver has "
				 "at most %u: use fewer cores or one device per core", ops->name, nq, maxq);
	uint32_t q;
	int rc = rf_io_config_get_u32(cfg, "queues", nq, 1, maxq, &q, err, len);
	if (rc)
		return rc;
	cfg->nqueues = q;
	rc = rf_io_config_get_bool(cfg, "frames", false, &cfg->frames, err, len);
	if (rc)
		return rc;
	if (cfg->frames && !(ops->caps & RF_IO_CAP_FRAMES)) {
		char fd[128];
		rf_io_frame_drivers(fd, sizeof(fd));
		rf_io_err(err, len, "%s: frames=1: this driver has no frame mode (it carries "
			  "messages only); drivers with frame mode here: %s", ops->name, fd);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* ---- port ids: the lowest free one, reused after close ---------------------------------- */

static struct {
	pthread_mutex_t lock;
	uint64_t used[RF_IO_MAX_PORTS / 64];
} ports = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int port_take(void)
{
	int id = -EMFILE;
	pthread_mutex_lock(&ports.lock);
	for (unsigned w = 0; w < RF_ARRAY_SIZE(ports.used); w++)
		if (~ports.used[w]) {
			unsigned b = (unsigned)__builtin_ctzll(~ports.used[w]);
			ports.used[w] |= 1ull << b;
			id = (int)(w * 64 + b);
			break;
		}
	pthread_mutex_unlock(&ports.lock);
	return id;
}

static void port_give(uint16_t id)
{
	pthread_mutex_lock(&ports.lock);
	ports.used[id / 64] &= ~(1ull << (id % 64));
	pthread_mutex_unlock(&ports.lock);
}

struct rf_io_dev *rf_io_open_queues(const char *spec, struct rf_pktbuf_pool *pool,
				    unsigned nqueues, char *err, size_t len)
{
	struct rf_io_config *cfg = malloc(sizeof(*cfg));
	struct rf_io_dev *dev = NULL;
	int rc = -ENOMEM;
	if (!cfg) {
		rf_io_err(err, len, "io: out of memory parsing '%s'", spec ? spec : "");
		goto out;
	}
	rc = rf_io_config_parse(spec, cfg, err, len);
	if (rc)
		goto out;
	const struct rf_io_ops *ops = rf_io_find(cfg->driver);
	if (!ops) {
		char why[RF_IO_WHY_MAX], all[1024];
		rc = -ENODEV;
		if (rf_io_absent_reason(cfg->driver, why, sizeof(why))) {
			rf_io_err(err, len, "%s: driver unavailable here: %s", cfg->driver, why);
		} else {
			rf_io_describe(all, sizeof(all));
			rf_io_err(err, len, "unknown driver '%s' in '%s'; %s", cfg->driver, spec, all);
		}
		goto out;
	}
	if (!pool) {
		rc = rf_io_err(err, len, "%s: no buffer pool given (rf_io_open needs an rf_pktbuf_pool)",
			       ops->name);
		goto out;
	}
	rc = check_config(ops, cfg, nqueues ? nqueues : 1, err, len);
	if (rc)
		goto out;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		rc = -ENOMEM;
		rf_io_err(err, len, "%s: out of memory opening '%s'", ops->name, spec);
		goto out;
	}
	int id = port_take();
	if (id < 0) {
		rc = id;
		rf_io_err(err, len, "%s: %d devices are open already (RF_IO_MAX_PORTS): close one "
			  "first", ops->name, RF_IO_MAX_PORTS);
		free(dev);
		dev = NULL;
		goto out;
	}
	dev->ops = ops;
	dev->pool = pool;
	dev->nqueues = cfg->nqueues;
	dev->port = (uint16_t)id;
	dev->frames = cfg->frames;
	snprintf(dev->spec, sizeof(dev->spec), "%s", spec);
	rc = ops->open(dev, cfg, err, len);
	if (rc) {
		port_give(dev->port);
		free(dev);
		dev = NULL;
	}
out:
	free(cfg);
	if (!dev)
		errno = rc < 0 ? -rc : EINVAL;
	return dev;
}

struct rf_io_dev *rf_io_open(const char *spec, struct rf_pktbuf_pool *pool, char *err,
			     size_t len)
{
	return rf_io_open_queues(spec, pool, 1, err, len);
}

void rf_io_close(struct rf_io_dev *dev)
{
	if (!dev)
		return;
	dev->ops->close(dev);
	port_give(dev->port);
	free(dev);
}

void rf_io_set_jumbo_pool(struct rf_io_dev *dev, struct rf_pktbuf_pool *jumbo)
{
	dev->jumbo_pool = jumbo;
}

void rf_io_stats_get(struct rf_io_dev *dev, struct rf_io_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (dev->ops->stats)
		dev->ops->stats(dev, st);
}

int rf_io_queue_stats_get(struct rf_io_dev *dev, unsigned queue, struct rf_io_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (queue >= dev->nqueues)
		return -EINVAL;
	if (dev->ops->queue_stats) {
		dev->ops->queue_stats(dev, queue, st);
		return 0;
	}
	if (dev->nqueues != 1)
		return -ENOTSUP;
	rf_io_stats_get(dev, st);
	return 0;
}

void rf_io_qstats_sum(const struct rf_io_qstats *q, struct rf_io_stats *st)
{
	st->rx_pkts += atomic_load_explicit(&q->rx_pkts, memory_order_relaxed);
	st->rx_bytes += atomic_load_explicit(&q->rx_bytes, memory_order_relaxed);
	st->tx_pkts += atomic_load_explicit(&q->tx_pkts, memory_order_relaxed);
	st->tx_bytes += atomic_load_explicit(&q->tx_bytes, memory_order_relaxed);
	st->rx_nobuf += atomic_load_explicit(&q->rx_nobuf, memory_order_relaxed);
	st->rx_drops += atomic_load_explicit(&q->rx_drops, memory_order_relaxed);
	st->tx_drops += atomic_load_explicit(&q->tx_drops, memory_order_relaxed);
	st->conns_open += atomic_load_explicit(&q->conns_open, memory_order_relaxed);
	st->conns_total += atomic_load_explicit(&q->conns_total, memory_order_relaxed);
}

long rf_io_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = 0;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}
