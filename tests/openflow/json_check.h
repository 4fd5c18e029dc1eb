/*
 * tests/openflow/json_check.h: a strict little JSON syntax checker (RFC 8259 grammar, no
 * semantics) for the REST tests: json_valid(s) is true when s is exactly one JSON value
 * with optional surrounding whitespace.
 */
#ifndef RF_TEST_JSON_CHECK_H
#define RF_TEST_JSON_CHECK_H

#include <stdbool.h>
#include <string.h>

static const char *jc_value(const char *p, int depth);

static const char *jc_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *jc_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL; /* raw control character (or the end) */
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *jc_number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return NULL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return p > s ? p : NULL;
}

static const char *jc_seq(const char *p, char close, bool object, int depth)
{
	p = jc_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (!(p = jc_string(jc_ws(p))))
				return NULL;
			p = jc_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = jc_value(p, depth + 1)))
			return NULL;
		p = jc_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *jc_value(const char *p, int depth)
{
	if (depth > 64)
		return NULL;
	p = jc_ws(p);
	switch (*p) {
	case '{': return jc_seq(p, '}', true, depth);
	case '[': return jc_seq(p, ']', false, depth);
	case '"': return jc_string(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return jc_number(p);
	}
}

static inline bool json_valid(const char *s)
{
	const char *p = jc_value(s, 0);
	return p && *jc_ws(p) == '\0';
}

/* Occurrences of needle in s. */
static inline unsigned count_of(const char *s, const char *needle)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

#endif
