/*
 * runtime/cpulist.c: "--cores" parsing. A list ("0,1", "0-3,6") or a hex mask ("0x3"),
 * into a sorted array of CPU numbers without duplicates.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/runtime.h>

static int cpulist_err(char *err, size_t len, const char *s, const char *why)
{
	if (err && len)
		snprintf(err, len, "bad core list '%s': %s (use e.g. --cores 0,1 or 0-3 or 0x3)", s,
			 why);
	return -EINVAL;
}

int rf_cpulist_parse(const char *s, int *cpus, unsigned max, char *err, size_t len)
{
	bool seen[CPU_SETSIZE] = {false};
	if (!s || !*s)
		return cpulist_err(err, len, s ? s : "", "empty");

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		const char *h = s + 2;
		size_t n = strlen(h);
		if (n == 0 || n > CPU_SETSIZE / 4)
			return cpulist_err(err, len, s, "hex mask has no digits or is too long");
		for (size_t i = 0; i < n; i++) {
			char c = h[n - 1 - i];
			int v = c >= '0' && c <= '9' ? c - '0'
				: c >= 'a' && c <= 'f' ? c - 'a' + 10
				: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (v < 0)
				return cpulist_err(err, len, s, "not a hex digit in the mask");
			for (int b = 0; b < 4; b++)
				if (v & (1 << b))
					seen[i * 4 + (size_t)b] = true;
		}
	} else {
		const char *p = s;
		while (*p) {
			char *end;
			if (*p < '0' || *p > '9')
				return cpulist_err(err, len, s, "expected a CPU number");
			long a = strtol(p, &end, 10), b = a;
			if (*end == '-') {
				p = end + 1;
				if (*p < '0' || *p > '9')
					return cpulist_err(err, len, s, "range needs an end");
				b = strtol(p, &end, 10);
			}
			if (a < 0 || b < a || b >= CPU_SETSIZE)
				return cpulist_err(err, len, s, "range out of order or CPU number too large");
			for (long c = a; c <= b; c++)
				seen[c] = true;
			if (*end == ',' && end[1] == '\0')
				return cpulist_err(err, len, s, "trailing comma");
			p = *end == ',' ? end + 1 : end;
			if (*end && *end != ',')
				return cpulist_err(err, len, s, "unexpected character");
		}
	}
	unsigned n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!seen[c])
			continue;
		if (n == max) {
			char why[64];
			snprintf(why, sizeof(why), "more than %u CPUs", max);
			return cpulist_err(err, len, s, why);
		}
		cpus[n++] = c;
	}
	if (n == 0)
		return cpulist_err(err, len, s, "no CPU selected");
	return (int)n;
}
