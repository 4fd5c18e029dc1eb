/*
 * runtime/json.c: the bounded JSON writer buffer and the recursive-descent reader (json.h).
 *
 * The reader is a textbook recursive descent over RFC 8259, with two limits that make it safe
 * on hostile input: nesting depth (RF_JSON_MAX_DEPTH, so the C stack is bounded) and input
 * length (RF_JSON_MAX_LEN, so the tree is bounded: at most one node per input byte).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/json.h>

/* ---- writer ----------------------------------------------------------------------------- */

void rf_buf_init(struct rf_buf *b, size_t max)
{
	*b = (struct rf_buf){.max = max ? max : 1};
}

void rf_buf_free(struct rf_buf *b)
{
	free(b->p);
	*b = (struct rf_buf){.max = b->max};
}

void rf_buf_reset(struct rf_buf *b)
{
	b->len = 0;
	b->full = false;
	if (b->p)
		b->p[0] = '\0';
}

/* Room for n more bytes and a NUL; false (and full) past max or out of memory. */
static bool reserve(struct rf_buf *b, size_t n)
{
	if (b->full)
		return false;
	if (b->len + n + 1 > b->max) {
		b->full = true;
		return false;
	}
	if (b->len + n + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	if (cap > b->max)
		cap = b->max;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->full = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void rf_buf_append(struct rf_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void rf_buf_puts(struct rf_buf *b, const char *s)
{
	rf_buf_append(b, s, strlen(s));
}

void rf_buf_printf(struct rf_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		rf_buf_append(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void rf_json_str(struct rf_buf *b, const char *s)
{
	rf_buf_append(b, "\"", 1);
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		rf_buf_append(b, run, (size_t)(s - run));
		char esc[8];
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		rf_buf_puts(b, esc);
		run = s + 1;
	}
	rf_buf_append(b, run, (size_t)(s - run));
	rf_buf_append(b, "\"", 1);
}

/* ---- reader ----------------------------------------------------------------------------- */

struct rd {
	const char *s;
	size_t len, i;
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct rd *r, const char *what)
{
	if (!r->failed && r->err && r->errlen)
		snprintf(r->err, r->errlen, "malformed JSON at byte %zu: %s", r->i, what);
	r->failed = true;
}

static void ws(struct rd *r)
{
	while (r->i < r->len && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
				 r->s[r->i] == '\r'))
		r->i++;
}

static int peek(struct rd *r)
{
	return r->i < r->len ? (unsigned char)r->s[r->i] : -1;
}

static void put_utf8(char *o, size_t *k, unsigned cp)
{
	if (cp < 0x80) {
		o[(*k)++] = (char)cp;
	} else if (cp < 0x800) {
		o[(*k)++] = (char)(0xc0 | cp >> 6);
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		o[(*k)++] = (char)(0xe0 | cp >> 12);
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		o[(*k)++] = (char)(0xf0 | cp >> 18);
		o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[(*k)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static int hex4(struct rd *r, unsigned *out)
{
	if (r->len - r->i < 4)
		return -1;
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		char c = r->s[r->i++];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A string starting at the opening quote; the unescaped text (malloc'd) or NULL. An escape
 * never makes the text longer than its source, so the source length bounds the buffer. */
static char *parse_string(struct rd *r)
{
	r->i++; /* the quote */
	size_t start = r->i, end = start;
	while (end < r->len && r->s[end] != '"')
		end += r->s[end] == '\\' ? 2 : 1;
	if (end >= r->len) {
		fail(r, "unterminated string");
		return NULL;
	}
	char *o = malloc(end - start + 1);
	if (!o) {
		fail(r, "out of memory");
		return NULL;
	}
	size_t k = 0;
	while (r->i < end) {
		unsigned char c = (unsigned char)r->s[r->i++];
		if (c < 0x20) {
			r->i--;
			fail(r, "control character in string");
			free(o);
			return NULL;
		}
		if (c != '\\') {
			o[k++] = (char)c;
			continue;
		}
		char e = r->s[r->i++];
		switch (e) {
		case '"': o[k++] = '"'; break;
		case '\\': o[k++] = '\\'; break;
		case '/': o[k++] = '/'; break;
		case 'b': o[k++] = '\b'; break;
		case 'f': o[k++] = '\f'; break;
		case 'n': o[k++] = '\n'; break;
		case 'r': o[k++] = '\r'; break;
		case 't': o[k++] = '\t'; break;
		case 'u': {
			unsigned cp;
			if (hex4(r, &cp) || r->i > end) {
				fail(r, "bad \\u escape");
				free(o);
				return NULL;
			}
			if (cp >= 0xd800 && cp < 0xdc00 && end - r->i >= 6 && r->s[r->i] == '\\' &&
			    r->s[r->i + 1] == 'u') {
				size_t save = r->i;
				r->i += 2;
				unsigned lo;
				if (!hex4(r, &lo) && lo >= 0xdc00 && lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				else
					r->i = save;
			}
			if (cp == 0)
				cp = 0xfffd; /* keep strings NUL-free */
			put_utf8(o, &k, cp); /* \uXXXX (6 bytes) -> at most 3; a pair (12) -> 4 */
			break;
		}
		default:
			r->i--;
			fail(r, "bad escape");
			free(o);
			return NULL;
		}
	}
	o[k] = '\0';
	r->i = end + 1;
	return o;
}

static struct rf_json *parse_value(struct rd *r, unsigned depth);

static struct rf_json *node(struct rd *r, enum rf_json_type t)
{
	struct rf_json *j = calloc(1, sizeof(*j));
	if (!j)
		fail(r, "out of memory");
	else
		j->type = t;
	return j;
}

static bool lit(struct rd *r, const char *w)
{
	size_t n = strlen(w);
	if (r->len - r->i >= n && memcmp(r->s + r->i, w, n) == 0) {
		r->i += n;
		return true;
	}
	return false;
}

static struct rf_json *parse_number(struct rd *r)
{
	size_t st = r->i;
	if (peek(r) == '-')
		r->i++;
	if (peek(r) == '0') {
		r->i++;
	} else if (peek(r) >= '1' && peek(r) <= '9') {
		while (peek(r) >= '0' && peek(r) <= '9')
			r->i++;
	} else {
		fail(r, "expected a value");
		return NULL;
	}
	if (peek(r) == '.') {
		r->i++;
		if (!(peek(r) >= '0' && peek(r) <= '9')) {
			fail(r, "expected a digit after '.'");
			return NULL;
		}
		while (peek(r) >= '0' && peek(r) <= '9')
			r->i++;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		r->i++;
		if (peek(r) == '+' || peek(r) == '-')
			r->i++;
		if (!(peek(r) >= '0' && peek(r) <= '9')) {
			fail(r, "expected a digit in the exponent");
			return NULL;
		}
		while (peek(r) >= '0' && peek(r) <= '9')
			r->i++;
	}
	char tmp[64];
	size_t n = r->i - st;
	if (n >= sizeof(tmp)) {
		r->i = st;
		fail(r, "number too long");
		return NULL;
	}
	memcpy(tmp, r->s + st, n);
	tmp[n] = '\0';
	struct rf_json *j = node(r, RF_JSON_NUM);
	if (!j)
		return NULL;
	j->num = strtod(tmp, NULL);
	/* An integer token keeps its exact value too, when it fits 64 bits (-2^63..2^64-1). */
	bool neg = tmp[0] == '-';
	if (strspn(tmp + neg, "0123456789") == n - neg) {
		errno = 0;
		unsigned long long m = strtoull(tmp + neg, NULL, 10);
		if (errno == 0 && (!neg || m <= (unsigned long long)INT64_MAX + 1)) {
			j->is_int = true;
			j->neg = neg && m != 0;
			j->mag = m;
		}
	}
	return j;
}

static struct rf_json *parse_container(struct rd *r, unsigned depth, bool obj)
{
	struct rf_json *j = node(r, obj ? RF_JSON_OBJ : RF_JSON_ARR);
	if (!j)
		return NULL;
	r->i++;
	ws(r);
	if (peek(r) == (obj ? '}' : ']')) {
		r->i++;
		return j;
	}
	struct rf_json **tail = &j->child;
	for (;;) {
		char *key = NULL;
		if (obj) {
			ws(r);
			if (peek(r) != '"') {
				fail(r, "expected a member name in quotes");
				goto bad;
			}
			key = parse_string(r);
			if (!key)
				goto bad;
			ws(r);
			if (peek(r) != ':') {
				free(key);
				fail(r, "expected ':'");
				goto bad;
			}
			r->i++;
		}
		struct rf_json *v = parse_value(r, depth + 1);
		if (!v) {
			free(key);
			goto bad;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		j->n++;
		ws(r);
		int c = peek(r);
		if (c == ',') {
			r->i++;
			continue;
		}
		if (c == (obj ? '}' : ']')) {
			r->i++;
			return j;
		}
		fail(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		goto bad;
	}
bad:
	rf_json_free(j);
	return NULL;
}

static struct rf_json *parse_value(struct rd *r, unsigned depth)
{
	if (depth > RF_JSON_MAX_DEPTH) {
		fail(r, "nested too deep");
		return NULL;
	}
	ws(r);
	int c = peek(r);
	struct rf_json *j;
	switch (c) {
	case '{': return parse_container(r, depth, true);
	case '[': return parse_container(r, depth, false);
	case '"': {
		char *s = parse_string(r);
		if (!s)
			return NULL;
		j = node(r, RF_JSON_STR);
		if (!j)
			free(s);
		else
			j->str = s;
		return j;
	}
	case -1: fail(r, "unexpected end"); return NULL;
	default: break;
	}
	if (lit(r, "true") || lit(r, "false")) {
		j = node(r, RF_JSON_BOOL);
		if (j)
			j->b = r->s[r->i - 1] == 'e' && r->s[r->i - 2] == 'u';
		return j;
	}
	if (lit(r, "null"))
		return node(r, RF_JSON_NULL);
	return parse_number(r);
}

struct rf_json *rf_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct rd r = {.s = text, .len = len, .err = err, .errlen = errlen};
	if (len > RF_JSON_MAX_LEN) {
		fail(&r, "longer than the limit");
		return NULL;
	}
	struct rf_json *j = parse_value(&r, 0);
	if (!j)
		return NULL;
	ws(&r);
	if (r.i != r.len) {
		fail(&r, "text after the value");
		rf_json_free(j);
		return NULL;
	}
	return j;
}

void rf_json_free(struct rf_json *j)
{
	while (j) {
		struct rf_json *next = j->next;
		rf_json_free(j->child); /* depth is bounded by the parser */
		free(j->key);
		free(j->str);
		free(j);
		j = next;
	}
}

const struct rf_json *rf_json_get(const struct rf_json *o, const char *key)
{
	if (!o || o->type != RF_JSON_OBJ)
		return NULL;
	for (const struct rf_json *c = o->child; c; c = c->next)
		if (strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

const struct rf_json *rf_json_path(const struct rf_json *o, const char *path)
{
	char seg[128];
	while (o && path && *path) {
		const char *sl = strchr(path, '/');
		size_t n = sl ? (size_t)(sl - path) : strlen(path);
		if (n >= sizeof(seg))
			return NULL;
		memcpy(seg, path, n);
		seg[n] = '\0';
		if (n)
			o = rf_json_get(o, seg);
		path = sl ? sl + 1 : NULL;
	}
	return o;
}

const char *rf_json_get_str(const struct rf_json *o, const char *key, const char *def)
{
	const struct rf_json *v = rf_json_get(o, key);
	return v && v->type == RF_JSON_STR ? v->str : def;
}

double rf_json_get_num(const struct rf_json *o, const char *key, double def)
{
	const struct rf_json *v = rf_json_get(o, key);
	return v && v->type == RF_JSON_NUM ? v->num : def;
}

int rf_json_u64(const struct rf_json *j, uint64_t *out)
{
	if (!j || j->type != RF_JSON_NUM)
		return -EINVAL;
	if (!j->is_int || j->neg)
		return -ERANGE;
	*out = j->mag;
	return 0;
}

int rf_json_i64(const struct rf_json *j, int64_t *out)
{
	if (!j || j->type != RF_JSON_NUM)
		return -EINVAL;
	if (!j->is_int || j->mag > (j->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		return -ERANGE;
	/* -2^63 has no positive int64: negate in unsigned arithmetic, then convert. */
	*out = j->neg ? (int64_t)(0 - j->mag) : (int64_t)j->mag;
	return 0;
}

uint64_t rf_json_get_u64(const struct rf_json *o, const char *key, uint64_t def)
{
	uint64_t v;
	return rf_json_u64(rf_json_get(o, key), &v) == 0 ? v : def;
}

int64_t rf_json_get_i64(const struct rf_json *o, const char *key, int64_t def)
{
	int64_t v;
	return rf_json_i64(rf_json_get(o, key), &v) == 0 ? v : def;
}

void rf_json_write(struct rf_buf *b, const struct rf_json *j)
{
	switch (j->type) {
	case RF_JSON_NULL: rf_buf_puts(b, "null"); break;
	case RF_JSON_BOOL: rf_buf_puts(b, j->b ? "true" : "false"); break;
	case RF_JSON_NUM:
		if (j->is_int)
			rf_buf_printf(b, "%s%llu", j->neg ? "-" : "", (unsigned long long)j->mag);
		else if (isfinite(j->num) && fabs(j->num) < 9e15 && j->num == (double)(long long)j->num)
			rf_buf_printf(b, "%lld", (long long)j->num);
		else if (isfinite(j->num))
			rf_buf_printf(b, "%.17g", j->num);
		else
			rf_buf_puts(b, "null");
		break;
	case RF_JSON_STR: rf_json_str(b, j->str); break;
	case RF_JSON_ARR:
	case RF_JSON_OBJ: {
		bool obj = j->type == RF_JSON_OBJ;
		rf_buf_puts(b, obj ? "{" : "[");
		for (const struct rf_json *c = j->child; c; c = c->next) {
			if (c != j->child)
				rf_buf_puts(b, ",");
			if (obj) {
				rf_json_str(b, c->key);
				rf_buf_puts(b, ":");
			}
			rf_json_write(b, c);
		}
		rf_buf_puts(b, obj ? "}" : "]");
		break;
	}
	}
}
