/*
 * tests/fuzz/fuzz_opts.c: libFuzzer target for the apps' shared option parser
 * (runtime/opts.c). Any input: no crash; an accepted number is in range and prints back as
 * the digits it came from (less leading zeros); every error is one line naming the option.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/runtime.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(int rc, const char *err, const char *opt)
{
	if (rc == 0)
		return;
	if (strncmp(err, opt, strlen(opt)) != 0 || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256)
		return 0;
	char v[257], err[200], back[32];
	memcpy(v, data, size);
	v[size] = '\0';
	unsigned x;
	uint64_t y;
	int rc = rf_opt_uint("--burst", v, 1, 256, &x, err, sizeof(err));
	if (rc == 0 && (x < 1 || x > 256))
		abort();
	one_line(rc, err, "--burst");
	rc = rf_opt_u64("--count", v, 0, UINT64_MAX, &y, err, sizeof(err));
	if (rc == 0) {
		const char *d = v;
		while (d[0] == '0' && d[1])
			d++;
		snprintf(back, sizeof(back), "%" PRIu64, y);
		if (strcmp(back, d) != 0)
			abort();
	}
	one_line(rc, err, "--count");
	one_line(rf_opt_cores("--cores", v, err, sizeof(err)), err, "--cores");
	one_line(rf_opt_metrics("--metrics", v, err, sizeof(err)), err, "--metrics");
	return 0;
}
