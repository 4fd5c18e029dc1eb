/*
 * io/io_config.c: config strings: "driver[:transport]:key=value,..." parsed into a
 * struct rf_io_config, and the typed getters drivers read their keys with (numbers decimal
 * only, with the one-line error rf_io_err writes).
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

