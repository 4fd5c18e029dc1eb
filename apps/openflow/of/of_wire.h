/*
 * apps/openflow/of/of_wire.h: private byte-level helpers of the protocol module.
 *
 * Reading: callers check a length first, then load at fixed offsets with of_get*(), which
 * assemble big-endian values byte by byte (no alignment or endianness assumptions).
 * Writing: a struct of_wbuf appends; a write that would pass the capacity sets `overflow`
 * and writes nothing, so a builder writes its whole message and checks once at the end.
 */
#ifndef RINGFLOW_OF_WIRE_H
#define RINGFLOW_OF_WIRE_H

#include <errno.h>
#include <string.h>

#include "of.h"

static inline uint8_t of_get8(const uint8_t *p)
{
	return p[0];
}

static inline uint64_t of_get64(const uint8_t *p)
{
	return (uint64_t)of_get32(p) << 32 | of_get32(p + 4);
}

struct of_wbuf {
	uint8_t *p;
	size_t cap;
	size_t len;
	bool overflow;
};

static inline struct of_wbuf of_wbuf_init(uint8_t *p, size_t cap)
{
	struct of_wbuf w = {.p = p, .cap = cap, .len = 0, .overflow = false};
	return w;
}

/* Reserves n bytes and returns where they go, or NULL (and overflow) if they do not fit. */
static inline uint8_t *of_wbuf_take(struct of_wbuf *w, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return NULL;
	}
	uint8_t *q = w->p + w->len;
	w->len += n;
	return q;
}

static inline void of_set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void of_set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void of_put8(struct of_wbuf *w, uint8_t v)
{
	uint8_t *q = of_wbuf_take(w, 1);
	if (q)
		q[0] = v;
}

static inline void of_put16(struct of_wbuf *w, uint16_t v)
{
	uint8_t *q = of_wbuf_take(w, 2);
	if (q)
		of_set16(q, v);
}

static inline void of_put32(struct of_wbuf *w, uint32_t v)
{
	uint8_t *q = of_wbuf_take(w, 4);
	if (q)
		of_set32(q, v);
}

static inline void of_put64(struct of_wbuf *w, uint64_t v)
{
	of_put32(w, (uint32_t)(v >> 32));
	of_put32(w, (uint32_t)v);
}

static inline void of_put_bytes(struct of_wbuf *w, const void *src, size_t n)
{
	uint8_t *q = of_wbuf_take(w, n);
	if (q && n)
		memcpy(q, src, n);
}

static inline void of_put_zeros(struct of_wbuf *w, size_t n)
{
	uint8_t *q = of_wbuf_take(w, n);
	if (q && n)
		memset(q, 0, n);
}

/* Ends a message written from its header on (its length patched in): its length, -ENOBUFS
 * when a write overflowed, -EINVAL when it is longer than a message can be. */
static inline ssize_t of_wbuf_finish(struct of_wbuf *w)
{
	if (w->overflow)
		return -ENOBUFS;
	if (w->len > OF_MAX_MSG_LEN)
		return -EINVAL;
	of_set16(w->p + 2, (uint16_t)w->len);
	return (ssize_t)w->len;
}

/* Bytes of padding that bring n up to a multiple of 8. */
static inline size_t of_pad8(size_t n)
{
	return (8 - (n & 7)) & 7;
}

/* 1.0 carries ports in 16 bits: 0xff00.. are the reserved ports, 0xffffff00.. in 1.3. */
static inline uint32_t of_port_from10(uint16_t p)
{
	return p >= 0xff00 ? 0xffff0000u | p : p;
}

/* Returns the 16-bit 1.0 port, or -1 when p has no 1.0 form. */
static inline int32_t of_port_to10(uint32_t p)
{
	if (p >= OFPP_MAX)
		return (int32_t)(p & 0xffff);
	return p < 0xff00 ? (int32_t)p : -1;
}

static inline void of_fault_set(struct of_fault *f, uint16_t type, uint16_t code, bool close,
				const char *why)
{
	f->type = type;
	f->code = code;
	f->close = close;
	f->why = why;
}

/* ---- shared by of_parse.c and of_build.c (of_match.c) ---- */

/* Fixed wire sizes. */
#define OF10_MATCH_LEN 40
#define OF10_PHY_PORT_LEN 48
#define OF13_PORT_LEN 64
#define OF10_PORT_STATS_LEN 104
#define OF13_PORT_STATS_LEN 112
#define OF10_FLOW_STATS_LEN 88 /* fixed part before the actions */
#define OF13_FLOW_STATS_LEN 48 /* fixed part before the match */

/* Parses a match at p (at most avail bytes; 1.3: OXM, padded to 8; 1.0: 40 bytes).
 * Returns the bytes it occupies on the wire (1.3: with padding), or -EBADMSG with *f. */
int of_match_parse(uint8_t version, const uint8_t *p, size_t avail, struct of_match *m,
		   struct of_fault *f);
void of_match_put(struct of_wbuf *w, uint8_t version, const struct of_match *m);

/* Parses an action list of exactly len bytes, appending to *a (of_action.c). Returns 0 or
 * -EBADMSG. */
int of_actions_parse(uint8_t version, const uint8_t *p, size_t len, struct of_actions *a,
		     struct of_fault *f);
/* 1.3 instruction list of exactly len bytes: APPLY_ACTIONS into a, goto_table,
 * write_metadata, write/clear_actions into *in (in NULL: skipped as UNSUP_INST), others
 * skipped. A repeated instruction fails (BAD_INSTRUCTION/DUP_INST). */
int of_instructions_parse(const uint8_t *p, size_t len, struct of_actions *a,
			  struct of_insts *in, struct of_fault *f);
void of_actions_put(struct of_wbuf *w, uint8_t version, const struct of_actions *a);
/* Wire bytes of the actions (1.0: OUTPUT, 8 each; 1.3: 8 or 16 each by type). */
size_t of_actions_len(uint8_t version, const struct of_actions *a);
/* Bytes of the 1.3 instruction list carrying the actions (0 when there are none). */
size_t of_instructions_len(const struct of_actions *a);
void of_instructions_put(struct of_wbuf *w, const struct of_actions *a);
/* The same for the other instructions (goto, metadata, write, clear; in that order). */
size_t of_insts_len(const struct of_insts *in);
void of_insts_put(struct of_wbuf *w, const struct of_insts *in);

void of_port_decode(uint8_t version, const uint8_t *p, struct of_port *out);
void of_port_put(struct of_wbuf *w, uint8_t version, const struct of_port *port);
/* True when every port number in m/actions fits the version (1.0: 16 bits), and every
 * action has a form there (1.0: OUTPUT only; set-field values no wider than the field). */
bool of_match_fits(uint8_t version, const struct of_match *m);
bool of_actions_fit(uint8_t version, const struct of_actions *a);

#endif /* RINGFLOW_OF_WIRE_H */
