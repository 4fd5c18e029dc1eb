/*
 * apps/openflow/of/of_meter.c: OpenFlow 1.3 meters on the wire, both directions: METER_MOD
 * and the METER, METER_CONFIG and METER_FEATURES multiparts (layouts in of_meter.h).
 *
 * The one idea, as in of_parse.c: no byte past a checked length is read. A band list is
 * walked by its own lengths (each >= 16, a multiple of 8, inside what is left), a reply's
 * items by theirs, and the iterators read only bodies of_mparse has walked once already.
 */
#include <errno.h>
#include <string.h>

#include "of_meter.h"
#include "of_wire.h"

#define MP_REQUEST 18
#define MP_REPLY 19
#define STATS_FIXED 40
#define CONFIG_FIXED 8

static int bad_len(struct of_fault *f, const char *why)
{
	of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false, why);
	return -EBADMSG;
}

/* The bands at p[0..len) into c (the first OF_METER_MAX_BANDS kept, all counted). */
static int parse_bands(const uint8_t *p, size_t len, struct of_meter_config *c,
		       struct of_fault *f)
{
	c->nbands = c->nbands_wire = 0;
	for (size_t off = 0; off < len;) {
		if (len - off < OF_METER_BAND_LEN)
			return bad_len(f, "meter band truncated");
		size_t bl = of_get16(p + off + 2);
		uint16_t type = of_get16(p + off);
		if (bl < OF_METER_BAND_LEN || bl % 8 || bl > len - off ||
		    (type != OFPMBT_EXPERIMENTER && bl != OF_METER_BAND_LEN))
			return bad_len(f, "meter band length is bad");
		if (c->nbands_wire < UINT16_MAX)
			c->nbands_wire++;
		if (c->nbands < OF_METER_MAX_BANDS) {
			struct of_meter_band *b = &c->band[c->nbands++];
			memset(b, 0, sizeof(*b));
			b->type = type;
			b->rate = of_get32(p + off + 4);
			b->burst = of_get32(p + off + 8);
			if (type == OFPMBT_DSCP_REMARK)
				b->prec_level = p[off + 12];
			else if (type == OFPMBT_EXPERIMENTER)
				b->experimenter = of_get32(p + off + 12);
		}
		off += bl;
	}
	return 0;
}

/* Walks a STATS (stats true) or CONFIG reply body: every item's length checked. */
static int check_items(const uint8_t *p, size_t len, bool stats, struct of_fault *f)
{
	for (size_t off = 0; off < len;) {
		size_t fixed = stats ? STATS_FIXED : CONFIG_FIXED;
		if (len - off < fixed)
			return bad_len(f, "meter reply item truncated");
		size_t il = of_get16(p + off + (stats ? 4 : 0));
		if (il < fixed || il > len - off || (stats && (il - fixed) % 16))
			return bad_len(f, "meter reply item length is bad");
		if (!stats) {
			struct of_meter_config c;
			int rc = parse_bands(p + off + CONFIG_FIXED, il - CONFIG_FIXED, &c, f);
			if (rc)
				return rc;
		}
		off += il;
	}
	return 0;
}

int of_mparse(const uint8_t *buf, size_t len, struct of_mmsg *m, struct of_fault *f)
{
	if (len < OF_HEADER_LEN || buf[0] != OF_VERSION_1_3)
		return -ENOENT;
	memset(m, 0, sizeof(*m));
	m->xid = of_get32(buf + 4);
	if (buf[1] == OF13_METER_MOD) {
		if (len < 16)
			return bad_len(f, "METER_MOD shorter than 16");
		m->type = OF_M_METER_MOD;
		m->u.mod.command = of_get16(buf + 8);
		m->u.mod.flags = of_get16(buf + 10);
		m->u.mod.meter_id = of_get32(buf + 12);
		return parse_bands(buf + 16, len - 16, &m->u.mod, f);
	}
	if ((buf[1] != MP_REQUEST && buf[1] != MP_REPLY) || len < 16)
		return -ENOENT;
	uint16_t kind = of_get16(buf + 8);
	bool req = buf[1] == MP_REQUEST;
	const uint8_t *p = buf + 16;
	size_t blen = len - 16;
	m->mp_flags = of_get16(buf + 10);
	switch (kind) {
	case OFPMP13_METER:
	case OFPMP13_METER_CONFIG:
		if (req) {
			if (blen != 8)
				return bad_len(f, "meter request body is not 8 bytes");
			m->type = kind == OFPMP13_METER ? OF_M_STATS_REQUEST : OF_M_CONFIG_REQUEST;
			m->u.meter_id = of_get32(p);
			return 0;
		}
		m->type = kind == OFPMP13_METER ? OF_M_STATS_REPLY : OF_M_CONFIG_REPLY;
		m->u.items.raw = p;
		m->u.items.raw_len = (uint32_t)blen;
		return check_items(p, blen, kind == OFPMP13_METER, f);
	case OFPMP13_METER_FEATURES:
		if (req) {
			if (blen != 0)
				return bad_len(f, "METER_FEATURES request has a body");
			m->type = OF_M_FEATURES_REQUEST;
			return 0;
		}
		if (blen != 16)
			return bad_len(f, "METER_FEATURES reply body is not 16 bytes");
		m->type = OF_M_FEATURES_REPLY;
		m->u.features.max_meter = of_get32(p);
		m->u.features.band_types = of_get32(p + 4);
		m->u.features.capabilities = of_get32(p + 8);
		m->u.features.max_bands = p[12];
		m->u.features.max_color = p[13];
		return 0;
	}
	return -ENOENT;
}

int of_meter_stats_next(const struct of_mmsg *m, unsigned *cursor, struct of_meter_stats *out)
{
	const uint8_t *p = m->u.items.raw;
	size_t len = m->u.items.raw_len, off = *cursor;
	if (off + STATS_FIXED > len)
		return 0;
	size_t il = of_get16(p + off + 4);
	if (il < STATS_FIXED || il > len - off) /* of_mparse checked; a struct built by hand */
		return 0;
	memset(out, 0, sizeof(*out));
	out->meter_id = of_get32(p + off);
	out->flow_count = of_get32(p + off + 12);
	out->packet_in_count = of_get64(p + off + 16);
	out->byte_in_count = of_get64(p + off + 24);
	out->duration_sec = of_get32(p + off + 32);
	out->duration_nsec = of_get32(p + off + 36);
	for (size_t b = off + STATS_FIXED; b + 16 <= off + il; b += 16) {
		if (out->nbands == OF_METER_MAX_BANDS)
			break;
		out->band[out->nbands].packets = of_get64(p + b);
		out->band[out->nbands++].bytes = of_get64(p + b + 8);
	}
	*cursor = (unsigned)(off + il);
	return 1;
}

int of_meter_config_next(const struct of_mmsg *m, unsigned *cursor, struct of_meter_config *out)
{
	const uint8_t *p = m->u.items.raw;
	size_t len = m->u.items.raw_len, off = *cursor;
	struct of_fault f;
	if (off + CONFIG_FIXED > len)
		return 0;
	size_t il = of_get16(p + off);
	if (il < CONFIG_FIXED || il > len - off)
		return 0;
	memset(out, 0, sizeof(*out));
	out->flags = of_get16(p + off + 2);
	out->meter_id = of_get32(p + off + 4);
	if (parse_bands(p + off + CONFIG_FIXED, il - CONFIG_FIXED, out, &f))
		return 0;
	*cursor = (unsigned)(off + il);
	return 1;
}

/* ---- building ---- */

static void put_header(struct of_wbuf *w, uint8_t type, uint32_t xid)
{
	of_put8(w, OF_VERSION_1_3);
	of_put8(w, type);
	of_put16(w, 0); /* length, set at the end */
	of_put32(w, xid);
}

static void put_mp(struct of_wbuf *w, bool req, uint32_t xid, uint16_t kind, uint16_t flags)
{
	put_header(w, req ? MP_REQUEST : MP_REPLY, xid);
	of_put16(w, kind);
	of_put16(w, flags);
	of_put_zeros(w, 4);
}

static void put_bands(struct of_wbuf *w, const struct of_meter_config *c)
{
	for (unsigned i = 0; i < c->nbands && i < OF_METER_MAX_BANDS; i++) {
		const struct of_meter_band *b = &c->band[i];
		of_put16(w, b->type);
		of_put16(w, OF_METER_BAND_LEN);
		of_put32(w, b->rate);
		of_put32(w, b->burst);
		if (b->type == OFPMBT_DSCP_REMARK) {
			of_put8(w, b->prec_level);
			of_put_zeros(w, 3);
		} else if (b->type == OFPMBT_EXPERIMENTER) {
			of_put32(w, b->experimenter);
		} else {
			of_put_zeros(w, 4);
		}
	}
}

static unsigned nbands(const struct of_meter_config *c)
{
	return c->nbands < OF_METER_MAX_BANDS ? c->nbands : OF_METER_MAX_BANDS;
}

ssize_t of_build_meter_mod(uint8_t *buf, size_t cap, uint32_t xid, const struct of_meter_config *c)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	put_header(&w, OF13_METER_MOD, xid);
	of_put16(&w, c->command);
	of_put16(&w, c->flags);
	of_put32(&w, c->meter_id);
	put_bands(&w, c);
	return of_wbuf_finish(&w);
}

ssize_t of_build_meter_request(uint8_t *buf, size_t cap, uint32_t xid, uint16_t kind,
			       uint32_t meter_id)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	if (kind != OFPMP13_METER && kind != OFPMP13_METER_CONFIG && kind != OFPMP13_METER_FEATURES)
		return -EINVAL;
	put_mp(&w, true, xid, kind, 0);
	if (kind != OFPMP13_METER_FEATURES) {
		of_put32(&w, meter_id);
		of_put_zeros(&w, 4);
	}
	return of_wbuf_finish(&w);
}

size_t of_meter_stats_len(const struct of_meter_stats *s)
{
	unsigned n = s->nbands < OF_METER_MAX_BANDS ? s->nbands : OF_METER_MAX_BANDS;
	return STATS_FIXED + 16u * n;
}

size_t of_meter_config_len(const struct of_meter_config *c)
{
	return CONFIG_FIXED + (size_t)OF_METER_BAND_LEN * nbands(c);
}

ssize_t of_build_meter_stats_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				   const struct of_meter_stats *items, unsigned n)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	put_mp(&w, false, xid, OFPMP13_METER, flags);
	for (unsigned i = 0; i < n; i++) {
		const struct of_meter_stats *s = &items[i];
		unsigned nb = s->nbands < OF_METER_MAX_BANDS ? s->nbands : OF_METER_MAX_BANDS;
		of_put32(&w, s->meter_id);
		of_put16(&w, (uint16_t)of_meter_stats_len(s));
		of_put_zeros(&w, 6);
		of_put32(&w, s->flow_count);
		of_put64(&w, s->packet_in_count);
		of_put64(&w, s->byte_in_count);
		of_put32(&w, s->duration_sec);
		of_put32(&w, s->duration_nsec);
		for (unsigned b = 0; b < nb; b++) {
			of_put64(&w, s->band[b].packets);
			of_put64(&w, s->band[b].bytes);
		}
	}
	return of_wbuf_finish(&w);
}

ssize_t of_build_meter_config_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				    const struct of_meter_config *items, unsigned n)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	put_mp(&w, false, xid, OFPMP13_METER_CONFIG, flags);
	for (unsigned i = 0; i < n; i++) {
		of_put16(&w, (uint16_t)of_meter_config_len(&items[i]));
		of_put16(&w, items[i].flags);
		of_put32(&w, items[i].meter_id);
		put_bands(&w, &items[i]);
	}
	return of_wbuf_finish(&w);
}

ssize_t of_build_meter_features_reply(uint8_t *buf, size_t cap, uint32_t xid,
				      const struct of_meter_features *ft)
{
	struct of_wbuf w = of_wbuf_init(buf, cap);
	put_mp(&w, false, xid, OFPMP13_METER_FEATURES, 0);
	of_put32(&w, ft->max_meter);
	of_put32(&w, ft->band_types);
	of_put32(&w, ft->capabilities);
	of_put8(&w, ft->max_bands);
	of_put8(&w, ft->max_color);
	of_put_zeros(&w, 2);
	return of_wbuf_finish(&w);
}
