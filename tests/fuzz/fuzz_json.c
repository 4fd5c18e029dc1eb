/*
 * tests/fuzz/fuzz_json.c: libFuzzer target for the JSON reader the control socket parses
 * requests with (runtime/json.c). Any input: no crash, no leak, bounded depth; and what it
 * accepts writes back as JSON that parses again to the same text (a round trip).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/json.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160];
	struct rf_json *j = rf_json_parse((const char *)data, size, err, sizeof(err));
	if (!j) {
		if (strncmp(err, "malformed JSON at byte ", 23) != 0)
			abort();
		return 0;
	}
	struct rf_buf a, b;
	rf_buf_init(&a, 1u << 24);
	rf_buf_init(&b, 1u << 24);
	rf_json_write(&a, j);
	struct rf_json *k = rf_json_parse(a.p ? a.p : "", a.len, err, sizeof(err));
	if (!k)
		abort(); /* what we write must parse */
	rf_json_write(&b, k);
	if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		abort(); /* and write back the same */
	rf_json_path(j, "a/b");
	rf_json_get_str(j, "cmd", NULL);
	rf_json_free(j);
	rf_json_free(k);
	rf_buf_free(&a);
	rf_buf_free(&b);
	return 0;
}
