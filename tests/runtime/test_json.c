/*
 * tests/runtime/test_json.c: the JSON reader and writer buffer (json.h): valid documents
 * parse to the right tree and write back the same; each kind of malformed input gets one
 * line naming the byte; depth and the writer's ceiling hold.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/json.h>

static struct rf_json *parse(const char *s, char *err)
{
	return rf_json_parse(s, strlen(s), err, 160);
}

Test(json, parses_a_request_and_finds_members)
{
	char err[160];
	struct rf_json *j = parse(" {\"cmd\":\"stats\",\"path\":\"ports/a\",\"n\":-1.5e2,"
				  "\"ok\":true,\"no\":false,\"x\":null,\"arr\":[1,[2],{}]} ", err);
	cr_assert_not_null(j, "%s", err);
	cr_assert_str_eq(rf_json_get_str(j, "cmd", NULL), "stats");
	cr_assert_str_eq(rf_json_get_str(j, "path", NULL), "ports/a");
	cr_assert_eq(rf_json_get_num(j, "n", 0), -150.0);
	cr_assert(rf_json_get(j, "ok")->b);
	cr_assert_not(rf_json_get(j, "no")->b);
	cr_assert_eq(rf_json_get(j, "x")->type, RF_JSON_NULL);
	cr_assert_eq(rf_json_get(j, "arr")->n, 3);
	cr_assert_null(rf_json_get(j, "missing"));
	cr_assert_str_eq(rf_json_get_str(j, "n", "def"), "def", "a number is not a string");
	rf_json_free(j);
}

Test(json, path_walks_objects)
{
	char err[160];
	struct rf_json *j = parse("{\"a\":{\"b\":{\"c\":7}}}", err);
	cr_assert_eq(rf_json_path(j, "a/b/c")->num, 7);
	cr_assert_eq(rf_json_path(j, "")->type, RF_JSON_OBJ);
	cr_assert_null(rf_json_path(j, "a/x/c"));
	rf_json_free(j);
}

Test(json, escapes_round_trip)
{
	char err[160];
	struct rf_json *j = parse("\"q\\\"b\\\\n\\n\\u00e9\\ud83d\\ude00\\u0000\"", err);
	cr_assert_not_null(j, "%s", err);
	cr_assert_str_eq(j->str, "q\"b\\n\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd");
	struct rf_buf b;
	rf_buf_init(&b, 1024);
	rf_json_write(&b, j);
	struct rf_json *k = rf_json_parse(b.p, b.len, err, sizeof(err));
	cr_assert_not_null(k, "%s", err);
	cr_assert_str_eq(k->str, j->str);
	rf_json_free(j);
	rf_json_free(k);
	rf_buf_free(&b);
}

Test(json, malformed_input_is_one_line_with_the_byte)
{
	const char *bad[] = {"", "{", "{\"a\"}", "{\"a\":}", "{a:1}", "[1,]", "[1 2]", "\"abc",
			     "tru", "01", "1.", "-", "1e", "{\"a\":1}x", "\"\\x\"", "\"\\u12\"",
			     "\"a\nb\"", "{\"a\":1,}", "nul"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[160] = "";
		struct rf_json *j = parse(bad[i], err);
		cr_assert_null(j, "accepted: %s", bad[i]);
		cr_assert(strncmp(err, "malformed JSON at byte ", 23) == 0, "%s -> %s", bad[i], err);
		cr_assert_null(strchr(err, '\n'));
	}
}

Test(json, depth_is_bounded)
{
	char s[200];
	memset(s, '[', 100);
	memset(s + 100, ']', 100);
	char err[160];
	cr_assert_null(rf_json_parse(s, 200, err, sizeof(err)));
	cr_assert(strstr(err, "too deep"), "%s", err);
	memset(s, '[', 10);
	memset(s + 10, ']', 10);
	struct rf_json *j = rf_json_parse(s, 20, err, sizeof(err));
	cr_assert_not_null(j, "%s", err);
	rf_json_free(j);
}

Test(json, writer_stops_at_its_ceiling)
{
	struct rf_buf b;
	rf_buf_init(&b, 100);
	for (int i = 0; i < 50; i++)
		rf_buf_printf(&b, "%d,", i);
	cr_assert(b.full);
	cr_assert_lt(b.len, 100);
	cr_assert_eq(strlen(b.p), b.len);
	rf_buf_reset(&b);
	cr_assert_not(b.full);
	rf_json_str(&b, "a\"\x01");
	cr_assert_str_eq(b.p, "\"a\\\"\\u0001\"");
	rf_buf_free(&b);
}

Test(json, big_numbers_write_back_without_overflow)
{
	char err[160];
	struct rf_json *j = parse("[5e222,-9e18,12345678901,0.5]", err); /* fuzz_json found 5e222 */
	cr_assert_not_null(j, "%s", err);
	struct rf_buf b;
	rf_buf_init(&b, 1024);
	rf_json_write(&b, j);
	cr_assert_str_eq(b.p, "[5.0000000000000002e+222,-9e+18,12345678901,0.5]");
	rf_buf_free(&b);
	rf_json_free(j);
}

/* Counters travel the control socket as JSON integers: above 2^53 a double loses them (a ns
 * counter after ~104 days). The reader keeps every 64-bit integer exact, the writer gives it
 * back digit for digit, and the old double stays as it was. */
Test(json, integers_above_2_53_are_exact)
{
	const char *text = "{\"a\":9007199254740993,\"max\":18446744073709551615,"
			   "\"min\":-9223372036854775808,\"m1\":-1,\"big\":18446744073709551616,"
			   "\"under\":-9223372036854775809,\"f\":1.5,\"e\":1e3,\"z\":-0,\"s\":\"7\"}";
	char err[128];
	struct rf_json *j = rf_json_parse(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(j, "%s", err);
	uint64_t u = 0;
	int64_t i = 0;
	cr_assert_eq(rf_json_u64(rf_json_get(j, "a"), &u), 0);
	cr_assert_eq(u, (UINT64_C(1) << 53) + 1, "2^53+1 read as %llu", (unsigned long long)u);
	cr_assert_eq(rf_json_get(j, "a")->num, 9007199254740992.0, "the double is as before");
	cr_assert_eq(rf_json_get_u64(j, "max", 0), UINT64_MAX);
	cr_assert_eq(rf_json_get_i64(j, "max", 42), 42, "2^64-1 is not an int64");
	cr_assert_eq(rf_json_i64(rf_json_get(j, "min"), &i), 0);
	cr_assert_eq(i, INT64_MIN);
	cr_assert_eq(rf_json_u64(rf_json_get(j, "min"), &u), -ERANGE, "negative is not a u64");
	cr_assert_eq(rf_json_get_i64(j, "m1", 0), -1);
	cr_assert_eq(rf_json_get_i64(j, "a", 0), (INT64_C(1) << 53) + 1);
	u = 77;
	cr_assert_eq(rf_json_u64(rf_json_get(j, "big"), &u), -ERANGE, "2^64 does not fit");
	cr_assert_eq(u, 77, "untouched on error");
	cr_assert_eq(rf_json_i64(rf_json_get(j, "under"), &i), -ERANGE);
	cr_assert_eq(rf_json_u64(rf_json_get(j, "f"), &u), -ERANGE, "a fraction is not exact");
	cr_assert_eq(rf_json_u64(rf_json_get(j, "e"), &u), -ERANGE, "an exponent is not an integer token");
	cr_assert_eq(rf_json_get_num(j, "e", 0), 1000.0);
	cr_assert_eq(rf_json_get_i64(j, "z", 5), 0);
	cr_assert_eq(rf_json_u64(rf_json_get(j, "s"), &u), -EINVAL, "a string is not a number");
	cr_assert_eq(rf_json_u64(NULL, &u), -EINVAL);
	cr_assert_eq(rf_json_get_u64(j, "nope", 3), 3);

	struct rf_buf b;
	rf_buf_init(&b, 4096);
	rf_json_write(&b, j);
	cr_assert_str_eq(b.p, "{\"a\":9007199254740993,\"max\":18446744073709551615,"
			      "\"min\":-9223372036854775808,\"m1\":-1,\"big\":1.8446744073709552e+19,"
			      "\"under\":-9.2233720368547758e+18,\"f\":1.5,\"e\":1000,\"z\":0,\"s\":\"7\"}",
			  "beyond 64 bits a number stays a double: %s", b.p);
	rf_buf_free(&b);
	rf_json_free(j);
}
