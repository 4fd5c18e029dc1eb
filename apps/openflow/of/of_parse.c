/*
 * apps/openflow/of/of_parse.c: framing, version negotiation and the per-type parsers.
 *
 * Every parser receives the whole framed message (len = the header's length, all present)
 * and checks its fixed part against len before the first load behind the header; nested
 * parts (matches, actions, instructions, port and stats arrays) are handed only the bytes
 * that remain, so a lying inner length can never reach past the message. A length that does
 * not add up is BAD_REQUEST/BAD_LEN; the stream framing is intact, so the connection goes on.
 */
#include <errno.h>
#include <string.h>

#include "of_wire.h"

/* Wire type numbers, indexed by enum of_type. */
static const uint8_t wire13[OF_TYPE_COUNT] = {
	[OF_HELLO] = 0, [OF_ERROR] = 1, [OF_ECHO_REQUEST] = 2, [OF_ECHO_REPLY] = 3,
	[OF_FEATURES_REQUEST] = 5, [OF_FEATURES_REPLY] = 6, [OF_SET_CONFIG] = 9,
	[OF_PACKET_IN] = 10, [OF_FLOW_REMOVED] = 11, [OF_PORT_STATUS] = 12,
	[OF_PACKET_OUT] = 13, [OF_FLOW_MOD] = 14, [OF_MULTIPART_REQUEST] = 18,
	[OF_MULTIPART_REPLY] = 19, [OF_BARRIER_REQUEST] = 20, [OF_BARRIER_REPLY] = 21,
};
static const uint8_t wire10[OF_TYPE_COUNT] = {
	[OF_HELLO] = 0, [OF_ERROR] = 1, [OF_ECHO_REQUEST] = 2, [OF_ECHO_REPLY] = 3,
	[OF_FEATURES_REQUEST] = 5, [OF_FEATURES_REPLY] = 6, [OF_SET_CONFIG] = 9,
	[OF_PACKET_IN] = 10, [OF_FLOW_REMOVED] = 11, [OF_PORT_STATUS] = 12,
	[OF_PACKET_OUT] = 13, [OF_FLOW_MOD] = 14, [OF_MULTIPART_REQUEST] = 16,
	[OF_MULTIPART_REPLY] = 17, [OF_BARRIER_REQUEST] = 18, [OF_BARRIER_REPLY] = 19,
};

static const char *const type_names[OF_TYPE_COUNT] = {
	"HELLO", "ERROR", "ECHO_REQUEST", "ECHO_REPLY", "FEATURES_REQUEST", "FEATURES_REPLY",
	"SET_CONFIG", "PACKET_IN", "FLOW_REMOVED", "PORT_STATUS", "PACKET_OUT", "FLOW_MOD",
	"MULTIPART_REQUEST", "MULTIPART_REPLY", "BARRIER_REQUEST", "BARRIER_REPLY",
};

const char *of_type_name(enum of_type t)
{
	return (unsigned)t < OF_TYPE_COUNT ? type_names[t] : "?";
}

int of_type_to_wire(uint8_t version, enum of_type t)
{
	if ((unsigned)t >= OF_TYPE_COUNT)
		return -1;
	if (version == OF_VERSION_1_0)
		return wire10[t];
	if (version == OF_VERSION_1_3)
		return wire13[t];
	/* HELLO and ERROR are numbered alike in every version: a peer of a version we do not
	 * speak can still be told HELLO_FAILED in its own version. */
	return t == OF_HELLO ? 0 : t == OF_ERROR ? 1 : -1;
}

static int type_from_wire(uint8_t version, uint8_t wt)
{
	const uint8_t *tab = version == OF_VERSION_1_0 ? wire10 : wire13;
	for (int t = 0; t < OF_TYPE_COUNT; t++)
		if (tab[t] == wt)
			return t;
	return -1;
}

void of_frame(const struct of_framer *fr, const uint8_t *buf, size_t n, struct of_frame *out)
{
	memset(out, 0, sizeof(*out));
	if (n < OF_HEADER_LEN) {
		out->kind = OF_FRAME_NEED_MORE;
		out->len = OF_HEADER_LEN;
		return;
	}
	uint32_t len = of_get16(buf + 2);
	uint32_t max = fr->max_len && fr->max_len < OF_MAX_MSG_LEN ? fr->max_len : OF_MAX_MSG_LEN;
	out->len = len;
	if (len < OF_HEADER_LEN || len > max) {
		/* Where the next message starts is unknown (or too far to wait for): close. */
		out->kind = OF_FRAME_BAD;
		of_fault_set(&out->fault, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, true,
			     len < OF_HEADER_LEN ? "header length below 8"
						 : "message longer than the configured maximum");
		return;
	}
	if (n < len) {
		out->kind = OF_FRAME_NEED_MORE;
		return;
	}
	if (fr->version && buf[0] != fr->version) {
		out->kind = OF_FRAME_BAD;
		of_fault_set(&out->fault, OFPET_BAD_REQUEST, OFPBRC_BAD_VERSION, false,
			     "version differs from the negotiated one");
		return;
	}
	out->kind = OF_FRAME_MSG;
}

int of_negotiate(uint32_t ours, const struct of_msg *peer)
{
	uint32_t common;
	if (!ours)
		return -EPROTO;
	if (peer->u.hello.has_bitmap) {
		common = ours & peer->u.hello.bitmap;
	} else {
		unsigned v = 31u - (unsigned)__builtin_clz(ours);
		if (peer->version < v)
			v = peer->version;
		common = v < 32 ? ours & (1u << v) : 0;
	}
	return common ? 31 - __builtin_clz(common) : -EPROTO;
}

/* ---- helpers ---- */

static int bad_len(struct of_fault *f, const char *why)
{
	of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false, why);
	return -EBADMSG;
}

static int parse_hello(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	/* Versions before 1.3 carry no elements; whatever follows is ignored (1.0 5.5.1). */
	if (m->version < OF_VERSION_1_3)
		return 0;
	for (size_t off = OF_HEADER_LEN; off < len;) {
		size_t elen = len - off < 4 ? 0 : of_get16(b + off + 2);
		if (elen < 4 || elen > len - off) {
			of_fault_set(f, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true,
				     "HELLO element length is bad");
			return -EBADMSG;
		}
		if (of_get16(b + off) == 1 /* OFPHET_VERSIONBITMAP */) {
			if ((elen - 4) % 4) {
				of_fault_set(f, OFPET_HELLO_FAILED, OFPHFC_INCOMPATIBLE, true,
					     "version bitmap length not a multiple of 4");
				return -EBADMSG;
			}
			m->u.hello.has_bitmap = true;
			m->u.hello.bitmap = elen >= 8 ? of_get32(b + off + 4) : 0;
		}
		off += elen + of_pad8(elen); /* the last element's padding may be cut off */
	}
	return 0;
}

static int parse_features(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	if (len < 32)
		return bad_len(f, "FEATURES_REPLY shorter than 32");
	m->u.features.datapath_id = of_get64(b + 8);
	m->u.features.n_buffers = of_get32(b + 16);
	m->u.features.n_tables = b[20];
	m->u.features.capabilities = of_get32(b + 24);
	if (m->version == OF_VERSION_1_3) {
		if (len != 32)
			return bad_len(f, "FEATURES_REPLY 1.3 longer than 32");
		m->u.features.auxiliary_id = b[21];
		return 0;
	}
	m->u.features.actions = of_get32(b + 28);
	if ((len - 32) % OF10_PHY_PORT_LEN)
		return bad_len(f, "FEATURES_REPLY port array not a multiple of 48");
	m->u.features.ports.raw = b + 32;
	m->u.features.ports.raw_len = (uint32_t)(len - 32);
	m->u.features.ports.n = (uint16_t)((len - 32) / OF10_PHY_PORT_LEN);
	return 0;
}

static int parse_packet_in(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	if (m->version == OF_VERSION_1_0) {
		if (len < 18)
			return bad_len(f, "PACKET_IN shorter than 18");
		m->u.packet_in.buffer_id = of_get32(b + 8);
		m->u.packet_in.total_len = of_get16(b + 12);
		m->u.packet_in.match.fields = OF_MATCH_IN_PORT;
		m->u.packet_in.match.in_port = of_port_from10(of_get16(b + 14));
		m->u.packet_in.reason = b[16];
		m->u.packet_in.data = b + 18;
		m->u.packet_in.data_len = (uint16_t)(len - 18);
		return 0;
	}
	if (len < 24)
		return bad_len(f, "PACKET_IN shorter than 24");
	m->u.packet_in.buffer_id = of_get32(b + 8);
	m->u.packet_in.total_len = of_get16(b + 12);
	m->u.packet_in.reason = b[14];
	m->u.packet_in.table_id = b[15];
	m->u.packet_in.cookie = of_get64(b + 16);
	int mt = of_match_parse(m->version, b + 24, len - 24, &m->u.packet_in.match, f);
	if (mt < 0)
		return mt;
	size_t off = 24 + (size_t)mt;
	if (len - off < 2)
		return bad_len(f, "PACKET_IN without the 2 bytes of padding after the match");
	m->u.packet_in.data = b + off + 2;
	m->u.packet_in.data_len = (uint16_t)(len - off - 2);
	return 0;
}

static int parse_packet_out(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	size_t fixed = m->version == OF_VERSION_1_0 ? 16 : 24;
	if (len < fixed)
		return bad_len(f, "PACKET_OUT shorter than its fixed part");
	m->u.packet_out.buffer_id = of_get32(b + 8);
	size_t alen;
	if (m->version == OF_VERSION_1_0) {
		m->u.packet_out.in_port = of_port_from10(of_get16(b + 12));
		alen = of_get16(b + 14);
	} else {
		m->u.packet_out.in_port = of_get32(b + 12);
		alen = of_get16(b + 16);
	}
	if (alen > len - fixed)
		return bad_len(f, "PACKET_OUT actions_len runs past the message");
	int rc = of_actions_parse(m->version, b + fixed, alen, &m->u.packet_out.actions, f);
	if (rc)
		return rc;
	m->u.packet_out.data = b + fixed + alen;
	m->u.packet_out.data_len = (uint16_t)(len - fixed - alen);
	return 0;
}

static int parse_flow_mod(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	struct of_flow_mod *fm = &m->u.flow_mod;
	if (m->version == OF_VERSION_1_0) {
		if (len < 72)
			return bad_len(f, "FLOW_MOD shorter than 72");
		int mt = of_match_parse(m->version, b + 8, len - 8, &fm->match, f);
		if (mt < 0)
			return mt;
		fm->cookie = of_get64(b + 48);
		uint16_t cmd = of_get16(b + 56);
		fm->command = cmd > 0xff ? 0xff : (uint8_t)cmd;
		fm->idle_timeout = of_get16(b + 58);
		fm->hard_timeout = of_get16(b + 60);
		fm->priority = of_get16(b + 62);
		fm->buffer_id = of_get32(b + 64);
		fm->out_port = of_port_from10(of_get16(b + 68));
		fm->flags = of_get16(b + 70);
		fm->out_group = OFPG_ANY;
		fm->table_id = 0;
		return of_actions_parse(m->version, b + 72, len - 72, &fm->actions, f);
	}
	if (len < 48)
		return bad_len(f, "FLOW_MOD shorter than 48");
	fm->cookie = of_get64(b + 8);
	fm->cookie_mask = of_get64(b + 16);
	fm->table_id = b[24];
	fm->command = b[25];
	fm->idle_timeout = of_get16(b + 26);
	fm->hard_timeout = of_get16(b + 28);
	fm->priority = of_get16(b + 30);
	fm->buffer_id = of_get32(b + 32);
	fm->out_port = of_get32(b + 36);
	fm->out_group = of_get32(b + 40);
	fm->flags = of_get16(b + 44);
	int mt = of_match_parse(m->version, b + 48, len - 48, &fm->match, f);
	if (mt < 0)
		return mt;
	return of_instructions_parse(b + 48 + mt, len - 48 - (size_t)mt, &fm->actions, &fm->inst,
				     f);
}

static int parse_flow_removed(const uint8_t *b, size_t len, struct of_msg *m,
			      struct of_fault *f)
{
	struct of_flow_removed *fr = &m->u.flow_removed;
	if (m->version == OF_VERSION_1_0) {
		if (len != 88)
			return bad_len(f, "FLOW_REMOVED 1.0 is not 88 bytes");
		int mt = of_match_parse(m->version, b + 8, len - 8, &fr->match, f);
		if (mt < 0)
			return mt;
		fr->cookie = of_get64(b + 48);
		fr->priority = of_get16(b + 56);
		fr->reason = b[58];
		fr->duration_sec = of_get32(b + 60);
		fr->duration_nsec = of_get32(b + 64);
		fr->idle_timeout = of_get16(b + 68);
		fr->packet_count = of_get64(b + 72);
		fr->byte_count = of_get64(b + 80);
		return 0;
	}
	if (len < 48)
		return bad_len(f, "FLOW_REMOVED shorter than 48");
	fr->cookie = of_get64(b + 8);
	fr->priority = of_get16(b + 16);
	fr->reason = b[18];
	fr->table_id = b[19];
	fr->duration_sec = of_get32(b + 20);
	fr->duration_nsec = of_get32(b + 24);
	fr->idle_timeout = of_get16(b + 28);
	fr->hard_timeout = of_get16(b + 30);
	fr->packet_count = of_get64(b + 32);
	fr->byte_count = of_get64(b + 40);
	int mt = of_match_parse(m->version, b + 48, len - 48, &fr->match, f);
	if (mt < 0)
		return mt;
	if (48 + (size_t)mt != len)
		return bad_len(f, "FLOW_REMOVED has bytes after the match");
	return 0;
}

static int parse_port_status(const uint8_t *b, size_t len, struct of_msg *m,
			     struct of_fault *f)
{
	size_t want = 16 + (m->version == OF_VERSION_1_0 ? OF10_PHY_PORT_LEN : OF13_PORT_LEN);
	if (len != want)
		return bad_len(f, "PORT_STATUS of wrong length");
	m->u.port_status.reason = b[8];
	of_port_decode(m->version, b + 16, &m->u.port_status.port);
	return 0;
}

/* One flow stats entry at p (avail bytes left in the reply). Returns its length. */
static int flow_stats_decode(uint8_t version, const uint8_t *p, size_t avail,
			     struct of_flow_stats *o, struct of_fault *f)
{
	size_t fixed = version == OF_VERSION_1_0 ? OF10_FLOW_STATS_LEN : OF13_FLOW_STATS_LEN;
	memset(o, 0, sizeof(*o));
	if (avail < fixed)
		return bad_len(f, "flow stats entry truncated");
	size_t el = of_get16(p);
	if (el < fixed || el > avail)
		return bad_len(f, "flow stats entry length is bad");
	o->table_id = p[2];
	if (version == OF_VERSION_1_0) {
		int mt = of_match_parse(version, p + 4, el - 4, &o->match, f);
		if (mt < 0)
			return mt;
		o->duration_sec = of_get32(p + 44);
		o->duration_nsec = of_get32(p + 48);
		o->priority = of_get16(p + 52);
		o->idle_timeout = of_get16(p + 54);
		o->hard_timeout = of_get16(p + 56);
		o->cookie = of_get64(p + 64);
		o->packet_count = of_get64(p + 72);
		o->byte_count = of_get64(p + 80);
		int rc = of_actions_parse(version, p + 88, el - 88, &o->actions, f);
		return rc ? rc : (int)el;
	}
	o->duration_sec = of_get32(p + 4);
	o->duration_nsec = of_get32(p + 8);
	o->priority = of_get16(p + 12);
	o->idle_timeout = of_get16(p + 14);
	o->hard_timeout = of_get16(p + 16);
	o->flags = of_get16(p + 18);
	o->cookie = of_get64(p + 24);
	o->packet_count = of_get64(p + 32);
	o->byte_count = of_get64(p + 40);
	int mt = of_match_parse(version, p + 48, el - 48, &o->match, f);
	if (mt < 0)
		return mt;
	int rc = of_instructions_parse(p + 48 + mt, el - 48 - (size_t)mt, &o->actions, &o->inst,
				       f);
	return rc ? rc : (int)el;
}

static int bad_mp(struct of_fault *f)
{
	of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_MULTIPART, false, "multipart type not handled");
	return -EBADMSG;
}

static int parse_mp_request(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	size_t hdr = m->version == OF_VERSION_1_0 ? 12 : 16;
	if (len < hdr)
		return bad_len(f, "MULTIPART request shorter than its header");
	struct of_mp_request *r = &m->u.mp_request;
	r->mp_type = (enum of_mp_type)of_get16(b + 8);
	r->flags = of_get16(b + 10);
	const uint8_t *p = b + hdr;
	size_t blen = len - hdr;
	switch (r->mp_type) {
	case OF_MP_FLOW:
		if (m->version == OF_VERSION_1_0) {
			if (blen != 44)
				return bad_len(f, "flow stats request 1.0 is not 44 bytes");
			int mt = of_match_parse(m->version, p, blen, &r->match, f);
			if (mt < 0)
				return mt;
			r->table_id = p[40];
			r->out_port = of_port_from10(of_get16(p + 42));
			r->out_group = OFPG_ANY;
			return 0;
		}
		if (blen < 32)
			return bad_len(f, "flow stats request shorter than 32");
		r->table_id = p[0];
		r->out_port = of_get32(p + 4);
		r->out_group = of_get32(p + 8);
		r->cookie = of_get64(p + 16);
		r->cookie_mask = of_get64(p + 24);
		int mt = of_match_parse(m->version, p + 32, blen - 32, &r->match, f);
		if (mt < 0)
			return mt;
		if (32 + (size_t)mt != blen)
			return bad_len(f, "flow stats request has bytes after the match");
		return 0;
	case OF_MP_PORT_STATS:
		if (blen != 8)
			return bad_len(f, "port stats request is not 8 bytes");
		r->port_no = m->version == OF_VERSION_1_0 ? of_port_from10(of_get16(p))
							  : of_get32(p);
		return 0;
	case OF_MP_PORT_DESC:
		if (m->version == OF_VERSION_1_0)
			return bad_mp(f);
		if (blen != 0)
			return bad_len(f, "port desc request has a body");
		return 0;
	}
	return bad_mp(f);
}

static int parse_mp_reply(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	size_t hdr = m->version == OF_VERSION_1_0 ? 12 : 16;
	if (len < hdr)
		return bad_len(f, "MULTIPART reply shorter than its header");
	struct of_mp_reply *r = &m->u.mp_reply;
	r->mp_type = (enum of_mp_type)of_get16(b + 8);
	r->flags = of_get16(b + 10);
	r->body.raw = b + hdr;
	r->body.raw_len = (uint32_t)(len - hdr);
	size_t blen = len - hdr, item;
	switch (r->mp_type) {
	case OF_MP_PORT_DESC:
		if (m->version == OF_VERSION_1_0)
			return bad_mp(f);
		item = OF13_PORT_LEN;
		break;
	case OF_MP_PORT_STATS:
		item = m->version == OF_VERSION_1_0 ? OF10_PORT_STATS_LEN : OF13_PORT_STATS_LEN;
		break;
	case OF_MP_FLOW: {
		struct of_flow_stats scratch;
		unsigned n = 0;
		for (size_t off = 0; off < blen; n++) {
			int el = flow_stats_decode(m->version, r->body.raw + off, blen - off,
						   &scratch, f);
			if (el < 0)
				return el;
			off += (size_t)el;
		}
		r->body.n = (uint16_t)n; /* entries are >= 56 bytes: n < 2^16 */
		return 0;
	}
	default:
		return bad_mp(f);
	}
	if (blen % item)
		return bad_len(f, "multipart reply body not a whole number of items");
	r->body.n = (uint16_t)(blen / item);
	return 0;
}

int of_parse(const uint8_t *b, size_t len, struct of_msg *m, struct of_fault *f)
{
	memset(m, 0, sizeof(*m));
	memset(f, 0, sizeof(*f));
	if (len < OF_HEADER_LEN || len != of_get16(b + 2))
		return bad_len(f, "buffer length differs from the header length");
	m->version = b[0];
	m->xid = of_get32(b + 4);
	if (b[1] == 0) { /* HELLO: the same in every version */
		m->type = OF_HELLO;
		return parse_hello(b, len, m, f);
	}
	if (m->version != OF_VERSION_1_0 && m->version != OF_VERSION_1_3) {
		of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_VERSION, false, "version not spoken");
		return -EBADMSG;
	}
	int t = type_from_wire(m->version, b[1]);
	if (t < 0) {
		of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_TYPE, false, "message type not handled");
		return -EBADMSG;
	}
	m->type = (enum of_type)t;
	switch (m->type) {
	case OF_ERROR:
		if (len < 12)
			return bad_len(f, "ERROR shorter than 12");
		m->u.error.type = of_get16(b + 8);
		m->u.error.code = of_get16(b + 10);
		m->u.error.data = b + 12;
		m->u.error.data_len = (uint16_t)(len - 12);
		return 0;
	case OF_ECHO_REQUEST:
	case OF_ECHO_REPLY:
		m->u.echo.data = b + 8;
		m->u.echo.data_len = (uint16_t)(len - 8);
		return 0;
	case OF_FEATURES_REQUEST:
	case OF_BARRIER_REQUEST:
	case OF_BARRIER_REPLY:
		return len == OF_HEADER_LEN ? 0 : bad_len(f, "header-only message has a body");
	case OF_FEATURES_REPLY:
		return parse_features(b, len, m, f);
	case OF_SET_CONFIG:
		if (len != 12)
			return bad_len(f, "SET_CONFIG is not 12 bytes");
		m->u.config.flags = of_get16(b + 8);
		m->u.config.miss_send_len = of_get16(b + 10);
		return 0;
	case OF_PACKET_IN:
		return parse_packet_in(b, len, m, f);
	case OF_PACKET_OUT:
		return parse_packet_out(b, len, m, f);
	case OF_FLOW_MOD:
		return parse_flow_mod(b, len, m, f);
	case OF_FLOW_REMOVED:
		return parse_flow_removed(b, len, m, f);
	case OF_PORT_STATUS:
		return parse_port_status(b, len, m, f);
	case OF_MULTIPART_REQUEST:
		return parse_mp_request(b, len, m, f);
	case OF_MULTIPART_REPLY:
		return parse_mp_reply(b, len, m, f);
	case OF_HELLO:
	case OF_TYPE_COUNT:
		break;
	}
	return bad_len(f, "unreachable");
}

/* ---- reading parsed arrays ---- */

int of_port_at(uint8_t version, const struct of_array *a, unsigned i, struct of_port *out)
{
	if (i >= a->n)
		return -EINVAL;
	if (a->raw) {
		size_t sz = version == OF_VERSION_1_0 ? OF10_PHY_PORT_LEN : OF13_PORT_LEN;
		of_port_decode(version, a->raw + i * sz, out);
	} else if (a->items) {
		*out = ((const struct of_port *)a->items)[i];
	} else {
		return -EINVAL;
	}
	return 0;
}

int of_port_stats_at(uint8_t version, const struct of_array *a, unsigned i,
		     struct of_port_stats *o)
{
	if (i >= a->n)
		return -EINVAL;
	if (!a->raw) {
		if (!a->items)
			return -EINVAL;
		*o = ((const struct of_port_stats *)a->items)[i];
		return 0;
	}
	memset(o, 0, sizeof(*o));
	const uint8_t *p;
	if (version == OF_VERSION_1_0) {
		p = a->raw + i * OF10_PORT_STATS_LEN;
		o->port_no = of_port_from10(of_get16(p));
	} else {
		p = a->raw + i * OF13_PORT_STATS_LEN;
		o->port_no = of_get32(p);
		o->duration_sec = of_get32(p + 104);
		o->duration_nsec = of_get32(p + 108);
	}
	uint64_t *c[] = {&o->rx_packets, &o->tx_packets, &o->rx_bytes, &o->tx_bytes,
			 &o->rx_dropped, &o->tx_dropped, &o->rx_errors, &o->tx_errors,
			 &o->rx_frame_err, &o->rx_over_err, &o->rx_crc_err, &o->collisions};
	for (unsigned k = 0; k < 12; k++)
		*c[k] = of_get64(p + 8 + 8 * k);
	return 0;
}

int of_flow_stats_next(uint8_t version, const struct of_array *a, unsigned *cursor,
		       struct of_flow_stats *out)
{
	if (!a->raw) {
		if (!a->items || *cursor >= a->n)
			return 0;
		*out = ((const struct of_flow_stats *)a->items)[(*cursor)++];
		return 1;
	}
	if (*cursor >= a->raw_len)
		return 0;
	struct of_fault f;
	int el = flow_stats_decode(version, a->raw + *cursor, a->raw_len - *cursor, out, &f);
	if (el <= 0)
		return 0; /* only if the array did not come from of_parse */
	*cursor += (unsigned)el;
	return 1;
}
