/*
 * io/io.c: the driver registry and the config-string parser.
 *
 * The one idea: the core never knows a driver by name. Every built-in driver is listed once
 * in rf_io_builtin[]; on first use each one's probe() decides whether it is usable here, and
 * an unusable driver is kept apart with its reason so that an error can say why it is absent.
 * rf_io_open parses "driver[:transport]:key=value,...", checks every key against the
 * driver's list (and the common keys `queues` and `frames` against what the driver can do)
 * before the driver sees it, gives the device a port id, then calls the driver's open().
 * The fast-path wrappers (rf_io_rx_burst, rf_io_tx_burst) live here too, so that the device
 * stays opaque to apps: one direct call per burst on top of the driver's indirect one.
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

/* Built-in drivers, in the order `available:` lists them. One slot per helper's drivers. */
static const struct rf_io_ops *const rf_io_builtin[] = {
	/* sockets (runtime) */
	&rf_io_udp_ops,
	&rf_io_tcp_ops,

	/* io_uring (echo-bench): add &rf_io_uring_ops below this line */
	&rf_io_uring_ops,

	/* AF_XDP, DPDK (bypass): add &rf_io_xdp_ops, &rf_io_dpdk_ops below this line */
	&rf_io_xdp_ops,
	&rf_io_dpdk_ops,

	/* AF_PACKET (frame mode): add &rf_io_packet_ops below this line */
	&rf_io_packet_ops,

	NULL, /* end */
};

#define RF_IO_REG_MAX 32
#define RF_IO_WHY_MAX 160

static struct {
	pthread_mutex_t lock;
	unsigned n, nabsent;
	const struct rf_io_ops *ops[RF_IO_REG_MAX];
	struct {
		char name[RF_IO_NAME_MAX];
		char why[RF_IO_WHY_MAX];
	} absent[RF_IO_REG_MAX];
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

int rf_io_err(char *err, size_t len, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int register_locked(const struct rf_io_ops *ops)
{
	if (ops && (ops->abi_version != RF_IO_OPS_VERSION || ops->size != sizeof(*ops))) {
		/* Only the first two members sit where every version puts them: trust name only
		 * when the version matches (then just the size is off). */
		const char *who = ops->abi_version == RF_IO_OPS_VERSION && ops->name ? ops->name
										: "(name unknown)";
		rf_log(RF_LOG_ERR, "io: refusing driver %s: built for struct rf_io_ops version %u "
		       "(%u bytes), this library has version %u (%zu bytes); rebuild the driver "
		       "against this ringflow's ringflow/io_driver.h",
		       who, ops->abi_version, ops->size, RF_IO_OPS_VERSION, sizeof(*ops));
		return -EPROTO;
	}
	if (!ops || !ops->name || !ops->open || !ops->rx_burst || !ops->tx_burst || !ops->close ||
	    strlen(ops->name) >= RF_IO_NAME_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < reg.n; i++)
		if (strcmp(reg.ops[i]->name, ops->name) == 0)
			return -EEXIST;
	for (unsigned i = 0; i < reg.nabsent; i++)
		if (strcmp(reg.absent[i].name, ops->name) == 0)
			return -EEXIST;
	char why[RF_IO_WHY_MAX] = "";
	int rc = ops->probe ? ops->probe(why, sizeof(why)) : 0;
	if (rc == 0) {
		if (reg.n == RF_IO_REG_MAX)
			return -ENOSPC;
		reg.ops[reg.n++] = ops;
		return 0;
	}
	if (reg.nabsent == RF_IO_REG_MAX)
		return -ENOSPC;
	snprintf(reg.absent[reg.nabsent].name, RF_IO_NAME_MAX, "%s", ops->name);
	snprintf(reg.absent[reg.nabsent].why, RF_IO_WHY_MAX, "%s",
		 why[0] ? why : strerror(-rc));
	reg.nabsent++;
	return 0;
}

static void register_builtins(void)
{
	pthread_mutex_lock(&reg.lock);
	for (size_t i = 0; rf_io_builtin[i]; i++)
		register_locked(rf_io_builtin[i]);
	pthread_mutex_unlock(&reg.lock);
}

int rf_io_register(const struct rf_io_ops *ops)
{
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	int rc = register_locked(ops);
	pthread_mutex_unlock(&reg.lock);
	return rc;
}

const struct rf_io_ops *rf_io_find(const char *name)
{
	const struct rf_io_ops *found = NULL;
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n && name; i++)
		if (strcmp(reg.ops[i]->name, name) == 0)
			found = reg.ops[i];
	pthread_mutex_unlock(&reg.lock);
	return found;
}

/* Reason the driver called name is absent, or NULL when it was never registered. */
static const char *absent_reason(const char *name, char *buf, size_t len)
{
	const char *r = NULL;
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.nabsent; i++)
		if (strcmp(reg.absent[i].name, name) == 0) {
			snprintf(buf, len, "%s", reg.absent[i].why);
			r = buf;
		}
	pthread_mutex_unlock(&reg.lock);
	return r;
}

int rf_io_describe(char *buf, size_t len)
{
	char tmp[2048];
	size_t o = 0;
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "available:");
	for (unsigned i = 0; i < reg.n && o < sizeof(tmp); i++)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%s %s", i ? "," : "",
				      reg.ops[i]->name);
	if (reg.n == 0 && o < sizeof(tmp))
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, " none");
	for (unsigned i = 0; i < reg.nabsent && o < sizeof(tmp); i++)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%s %s (%s)",
				      i ? "," : "; absent:", reg.absent[i].name, reg.absent[i].why);
	pthread_mutex_unlock(&reg.lock);
	return snprintf(buf, len, "%s", tmp);
}

void rf_io_print_usage(FILE *out)
{
	pthread_once(&reg_once, register_builtins);
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n; i++)
		fprintf(out, "  %-6s %s\n", reg.ops[i]->name,
			reg.ops[i]->usage ? reg.ops[i]->usage : "");
	for (unsigned i = 0; i < reg.nabsent; i++)
		fprintf(out, "  %-6s (absent here: %s)\n", reg.absent[i].name, reg.absent[i].why);
	pthread_mutex_unlock(&reg.lock);
}

int rf_io_driver_init(const char *driver, int argc, char **argv, char *err, size_t len)
{
	const struct rf_io_ops *ops = rf_io_find(driver);
	char why[RF_IO_WHY_MAX];
	if (!ops) {
		if (driver && absent_reason(driver, why, sizeof(why)))
			rf_io_err(err, len, "%s: driver unavailable here: %s", driver, why);
		else
			rf_io_err(err, len, "unknown driver '%s'", driver ? driver : "(null)");
		return -ENODEV;
	}
	if (!ops->init) {
		rf_io_err(err, len, "%s: the driver takes no process-wide arguments", ops->name);
		return -ENOTSUP;
	}
	return ops->init(argc, argv, err, len);
}

void rf_io_driver_fini(const char *driver)
{
	const struct rf_io_ops *ops = rf_io_find(driver);
	if (ops && ops->fini)
		ops->fini();
}

/* ---- parsing --------------------------------------------------------------------------- */

static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || n >= RF_IO_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

int rf_io_config_parse(const char *spec, struct rf_io_config *cfg, char *err, size_t len)
{
	memset(cfg, 0, sizeof(*cfg));
	if (!spec || !*spec)
		return rf_io_err(err, len, "empty backend spec: give one such as udp:listen=0.0.0.0:9000");
	if (strlen(spec) >= RF_IO_SPEC_MAX)
		return rf_io_err(err, len, "backend spec too long (%zu bytes, at most %d)",
				 strlen(spec), RF_IO_SPEC_MAX - 1);
	for (const char *c = spec; *c; c++) /* a newline would split the error message */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return rf_io_err(err, len, "backend spec has a control character (0x%02x) at "
					 "offset %zu: use printable characters only",
					 (unsigned)(unsigned char)*c, (size_t)(c - spec));
	snprintf(cfg->spec, sizeof(cfg->spec), "%s", spec);

	/* driver prefix */
	const char *p = spec, *colon = strchr(p, ':');
	size_t n = colon ? (size_t)(colon - p) : strlen(p);
	if (!valid_name(p, n))
		return rf_io_err(err, len, "bad backend spec '%s': expected driver[:transport]:key=value,... "
				 "(e.g. udp:listen=0.0.0.0:9000)", spec);
	memcpy(cfg->driver, p, n);
	if (!colon)
		return 0;
	p = colon + 1;

	/* optional transport: a second segment with no '=' or ',' before the next ':' */
	colon = strchr(p, ':');
	if (colon) {
		n = (size_t)(colon - p);
		if (!memchr(p, '=', n) && !memchr(p, ',', n)) {
			if (!valid_name(p, n))
				return rf_io_err(err, len, "bad transport '%.*s' in '%s': expected "
						 "lower-case letters, digits or _ (e.g. uring:udp:listen=0.0.0.0:9000)", (int)n, p, spec);
			memcpy(cfg->transport, p, n);
			p = colon + 1;
		}
	}

	/* key=value,key=value (empty items are skipped) */
	while (*p) {
		const char *end = strchr(p, ',');
		size_t item = end ? (size_t)(end - p) : strlen(p);
		if (item) {
			const char *eq = memchr(p, '=', item);
			if (!eq || eq == p)
				return rf_io_err(err, len, "%s: '%.*s' is not key=value in '%s'",
						 cfg->driver, (int)item, p, spec);
			size_t kl = (size_t)(eq - p), vl = item - kl - 1;
			if (kl >= RF_IO_KEY_MAX || vl >= RF_IO_VAL_MAX)
				return rf_io_err(err, len, "%s: key or value too long in '%.*s'",
						 cfg->driver, (int)item, p);
			if (cfg->nkeys == RF_IO_MAX_KEYS)
				return rf_io_err(err, len, "%s: too many keys (at most %d)",
						 cfg->driver, RF_IO_MAX_KEYS);
			char key[RF_IO_KEY_MAX];
			memcpy(key, p, kl);
			key[kl] = '\0';
			if (rf_io_config_get(cfg, key))
				return rf_io_err(err, len, "%s: key '%s' given twice in '%s'",
						 cfg->driver, key, spec);
			memcpy(cfg->kv[cfg->nkeys].key, key, kl + 1);
			memcpy(cfg->kv[cfg->nkeys].val, eq + 1, vl);
			cfg->kv[cfg->nkeys].val[vl] = '\0';
			cfg->nkeys++;
		}
		p += item + (end ? 1 : 0);
	}
	return 0;
}

const char *rf_io_config_get(const struct rf_io_config *cfg, const char *key)
{
	for (unsigned i = 0; i < cfg->nkeys; i++)
		if (strcmp(cfg->kv[i].key, key) == 0)
			return cfg->kv[i].val;
	return NULL;
}

static const char *cfg_name(const struct rf_io_config *cfg)
{
	return cfg->driver[0] ? cfg->driver : "io";
}

int rf_io_config_get_u32(const struct rf_io_config *cfg, const char *key, uint32_t def,
			 uint32_t min, uint32_t max, uint32_t *out, char *err, size_t len)
{
	const char *v = rf_io_config_get(cfg, key);
	if (!v) {
		*out = def;
		return 0;
	}
	/* Decimal digits only (docs/config.md): no sign, space, 0x or octal; a leading zero is
	 * just a zero, so "queues=010" is 10, never 8 as base 0 read it. */
	size_t nd = strspn(v, "0123456789");
	char *end;
	errno = 0;
	unsigned long long x = nd ? strtoull(v, &end, 10) : 0;
	if (!nd || v[nd])
		return rf_io_err(err, len, "%s: %s=%s: must be a decimal integer in %u..%u",
				 cfg_name(cfg), key, v, min, max);
	if (errno || x < min || x > max)
		return rf_io_err(err, len, "%s: %s=%s: must be an integer in %u..%u", cfg_name(cfg),
				 key, v, min, max);
	*out = (uint32_t)x;
	return 0;
}

int rf_io_config_get_bool(const struct rf_io_config *cfg, const char *key, bool def, bool *out,
			  char *err, size_t len)
{
	static const char *const yes[] = {"1", "yes", "on", "true"}, *const no[] = {"0", "no", "off", "false"};
	const char *v = rf_io_config_get(cfg, key);
	*out = def;
	if (!v)
		return 0;
	for (size_t i = 0; i < RF_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return (*out = true), 0;
		if (strcasecmp(v, no[i]) == 0)
			return (*out = false), 0;
	}
	return rf_io_err(err, len, "%s: %s=%s: must be 0 or 1 (also yes/no, on/off, true/false)",
			 cfg_name(cfg), key, v);
}

int rf_io_config_get_enum(const struct rf_io_config *cfg, const char *key, const char *choices,
			  unsigned def, unsigned *out, char *err, size_t len)
{
	const char *v = rf_io_config_get(cfg, key);
	*out = def;
	if (!v)
		return 0;
	unsigned idx = 0;
	for (const char *c = choices; *c; idx++) {
		const char *bar = strchr(c, '|');
		size_t n = bar ? (size_t)(bar - c) : strlen(c);
		if (strlen(v) == n && strncmp(v, c, n) == 0)
			return (*out = idx), 0;
		c += n + (bar ? 1 : 0);
	}
	return rf_io_err(err, len, "%s: %s=%s: must be one of %s", cfg_name(cfg), key, v, choices);
}

int rf_io_config_get_addr(const struct rf_io_config *cfg, const char *key,
			  struct sockaddr_storage *ss, socklen_t *sl, char *err, size_t len)
{
	const char *v = rf_io_config_get(cfg, key);
	if (!v)
		return -ENOENT;
	char host[INET6_ADDRSTRLEN + 2];
	const char *port;
	if (v[0] == '[') {
		const char *close = strchr(v, ']');
		if (!close || close[1] != ':' || (size_t)(close - v - 1) >= sizeof(host))
			goto bad;
		memcpy(host, v + 1, (size_t)(close - v - 1));
		host[close - v - 1] = '\0';
		port = close + 2;
	} else {
		const char *c = strrchr(v, ':');
		if (!c || (size_t)(c - v) >= sizeof(host) || memchr(v, ':', (size_t)(c - v)))
			goto bad; /* an IPv6 address needs brackets: ::1:9000 is ambiguous */
		memcpy(host, v, (size_t)(c - v));
		host[c - v] = '\0';
		port = c + 1;
	}
	char *end;
	errno = 0;
	unsigned long pn = strtoul(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || *end || errno)
		goto bad; /* digits only: no sign, no space */
	if (pn > 65535)
		return rf_io_err(err, len, "%s: %s=%s: port %lu out of range 0..65535", cfg_name(cfg), key, v, pn);
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)pn);
		*sl = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)pn);
		*sl = sizeof(*in6);
		return 0;
	}
bad:
	return rf_io_err(err, len, "%s: %s=%s: expected a numeric IPv4:port or [IPv6]:port "
			 "(e.g. %s=127.0.0.1:9000)", cfg_name(cfg), key, v, key);
}

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

/* "xdp, dpdk, packet": the usable drivers with frame mode, for error lines. */
static void frame_drivers(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.n && o < len; i++)
		if (reg.ops[i]->caps & RF_IO_CAP_FRAMES)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
					      reg.ops[i]->name);
	pthread_mutex_unlock(&reg.lock);
	if (!buf[0])
		snprintf(buf, len, "none");
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
		frame_drivers(fd, sizeof(fd));
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
		if (absent_reason(cfg->driver, why, sizeof(why))) {
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
