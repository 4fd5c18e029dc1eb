/*
 * runtime/opts.c: the apps' shared options (--cores, --burst, --buffers, --metrics) parsed one
 * way, so "--burst 010" or "--buffers -1" means the same thing, and fails the same way, in
 * every app. Decimal only, the whole string, one line in err; nothing is clamped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <ringflow/runtime.h>

#include "runtime_pvt.h"

/* rc, after making err one printable line: the value it quotes is the user's and may hold a
 * newline or another control character. */
static int tidy(char *err, size_t len, int rc)
{
	for (size_t i = 0; err && i < len && err[i]; i++)
		if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
			err[i] = '?';
	return rc;
}

/* One line into err (rf_runtime_err, made printable by tidy), returning rc. */
#define FAIL(rc, ...) tidy(err, len, rf_runtime_err(err, len, rc, __VA_ARGS__))

/* Digits only into *x; false when v is empty, has another character or overflows. */
static bool decimal(const char *v, uint64_t *x, bool *overflow)
{
	uint64_t n = 0;
	*overflow = false;
	if (!*v)
		return false;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return false;
		unsigned d = (unsigned)(*v - '0');
		if (n > (UINT64_MAX - d) / 10)
			*overflow = true; /* keep reading: "99999999999999999999x" is not a number */
		else
			n = n * 10 + d;
	}
	*x = n;
	return true;
}

int rf_opt_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
	       char *err, size_t len)
{
	uint64_t x = 0;
	bool over;
	if (!opt)
		opt = "option";
	if (!v)
		return FAIL(-EINVAL, "%s: needs a value (a decimal integer in %llu..%llu)",
		    opt, (unsigned long long)lo, (unsigned long long)hi);
	if (!decimal(v, &x, &over))
		return FAIL(-EINVAL, "%s %s: not a decimal integer: give %llu..%llu",
		    opt, v, (unsigned long long)lo, (unsigned long long)hi);
	if (over || x < lo || x > hi)
		return FAIL(-ERANGE, "%s %s: not in %llu..%llu", opt, v,
		    (unsigned long long)lo, (unsigned long long)hi);
	*out = x;
	return 0;
}

int rf_opt_uint(const char *opt, const char *v, unsigned lo, unsigned hi, unsigned *out,
		char *err, size_t len)
{
	uint64_t x;
	int rc = rf_opt_u64(opt, v, lo, hi, &x, err, len);
	if (rc == 0)
		*out = (unsigned)x;
	return rc;
}

int rf_opt_cores(const char *opt, const char *v, char *err, size_t len)
{
	int cpus[RF_RUNTIME_MAX_CORES];
	char why[160];
	if (!opt)
		opt = "--cores";
	if (!v)
		return FAIL(-EINVAL, "%s: needs a CPU list, e.g. 0,1 or 0-3 or 0x3", opt);
	if (rf_cpulist_parse(v, cpus, RF_RUNTIME_MAX_CORES, why, sizeof(why)) < 0)
		return FAIL(-EINVAL, "%s %s: %s", opt, v, why);
	return 0;
}

int rf_opt_metrics(const char *opt, const char *v, char *err, size_t len)
{
	if (!opt)
		opt = "--metrics";
	const char *colon = v ? strrchr(v, ':') : NULL;
	if (!colon || colon == v)
		return FAIL(-EINVAL, "%s %s: use IP:PORT, e.g. 127.0.0.1:9100", opt,
		    v ? v : "");
	char host[INET6_ADDRSTRLEN + 2];
	size_t hl = (size_t)(colon - v);
	uint64_t port;
	bool over;
	if (!decimal(colon + 1, &port, &over) || over || port > 65535)
		return FAIL(-EINVAL, "%s %s: the port must be a decimal 0..65535", opt, v);
	if (hl >= sizeof(host))
		return FAIL(-EINVAL, "%s %s: bad address", opt, v);
	memcpy(host, v, hl);
	host[hl] = '\0';
	unsigned char a[16];
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, a) != 1)
			return FAIL(-EINVAL, "%s %s: bad IPv6 address", opt, v);
	} else if (inet_pton(AF_INET, host, a) != 1) {
		return FAIL(-EINVAL, "%s %s: bad IPv4 address (IPv6: [ADDR]:PORT)", opt, v);
	}
	return 0;
}
