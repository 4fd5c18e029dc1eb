/*
 * ringflow/json.h: the small JSON writer and reader the control socket and ringflow-ctl use.
 *
 * The one idea: bounded everywhere. The writer appends to a growable buffer with a ceiling
 * (struct rf_buf): past it the buffer stops growing and says so (full), so a huge stats tree
 * costs at most the ceiling. The reader builds a tree of nodes from at most RF_JSON_MAX_LEN
 * bytes and RF_JSON_MAX_DEPTH levels, and rejects anything else with one line saying where.
 *
 * Thread-safety: none needed; each buffer and tree belongs to its caller.
 */
#ifndef RINGFLOW_JSON_H
#define RINGFLOW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

#define RF_JSON_MAX_DEPTH 32
#define RF_JSON_MAX_LEN (16u << 20) /* longest text rf_json_parse accepts */

/* A growable text buffer that never passes max bytes (then full is set; text is cut). */
struct rf_buf {
	char *p;     /* NUL-terminated when len > 0 or after any append */
	size_t len, cap, max;
	bool full;
};

void rf_buf_init(struct rf_buf *b, size_t max); /* empty; allocates on first append */
void rf_buf_free(struct rf_buf *b);
void rf_buf_reset(struct rf_buf *b);            /* empty again, memory kept, full cleared */
void rf_buf_append(struct rf_buf *b, const char *s, size_t n);
void rf_buf_puts(struct rf_buf *b, const char *s);
void rf_buf_printf(struct rf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string: quoted, with " \ and control characters escaped. */
void rf_json_str(struct rf_buf *b, const char *s);

enum rf_json_type { RF_JSON_NULL, RF_JSON_BOOL, RF_JSON_NUM, RF_JSON_STR, RF_JSON_ARR,
		    RF_JSON_OBJ };

/* A parsed value. Objects and arrays hold their members as a list (child, then next). */
struct rf_json {
	enum rf_json_type type;
	char *key;    /* member name when the parent is an object, else NULL */
	char *str;    /* RF_JSON_STR: the unescaped text (\u escapes become UTF-8) */
	double num;   /* RF_JSON_NUM, rounded to the nearest double */
	/* RF_JSON_NUM written as a plain integer ("-3", "18446744073709551615": no '.', no
	 * exponent) within -2^63..2^64-1 keeps its exact value here; read it with rf_json_u64 /
	 * rf_json_i64 (counters above 2^53 do not fit a double's 53-bit mantissa). */
	bool is_int;  /* the exact value below is set */
	bool neg;     /* is_int: the value is -mag, else +mag */
	uint64_t mag; /* is_int: the magnitude (at most 2^63 when neg) */
	bool b;       /* RF_JSON_BOOL */
	unsigned n;   /* RF_JSON_ARR/OBJ: members */
	struct rf_json *child, *next;
};

/* Parse text[0..len) (one value, whitespace around it allowed). NULL + one line in err
 * ("malformed JSON at byte 12: expected ':'") on bad input, too deep, too long or no memory. */
struct rf_json *rf_json_parse(const char *text, size_t len, char *err, size_t errlen);
void rf_json_free(struct rf_json *j);

/* Member key of object o, or NULL (also when o is not an object). */
const struct rf_json *rf_json_get(const struct rf_json *o, const char *key);
/* The value at a '/'-separated path of member names ("ports/echo0/rx_pkts"; "" is o). */
const struct rf_json *rf_json_path(const struct rf_json *o, const char *path);
/* Convenience: the string member key of o, or def. The number member key, or def. */
const char *rf_json_get_str(const struct rf_json *o, const char *key, const char *def);
double rf_json_get_num(const struct rf_json *o, const char *key, double def);
/* The exact value of number j, when it was written as an integer that fits: 0 and *out, or
 * -ERANGE (a fraction, an exponent, or out of range: negative for u64), -EINVAL (j is NULL
 * or not a number); *out is untouched on error. */
int rf_json_u64(const struct rf_json *j, uint64_t *out);
int rf_json_i64(const struct rf_json *j, int64_t *out);
/* Convenience: the member key of o as an exact integer, or def when absent or not one. */
uint64_t rf_json_get_u64(const struct rf_json *o, const char *key, uint64_t def);
int64_t rf_json_get_i64(const struct rf_json *o, const char *key, int64_t def);
/* Write j as compact JSON into b (a number with is_int set exactly as its integer). */
void rf_json_write(struct rf_buf *b, const struct rf_json *j);

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_JSON_H */
