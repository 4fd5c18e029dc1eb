/*
 * apps/openflow/of/of_xmsg.c: the 1.3 control-plane messages a switch answers beside the
 * ones of_parse models: ROLE_REQUEST/ROLE_REPLY, GET_ASYNC/SET_ASYNC, GET_CONFIG and the
 * multipart kinds DESC, AGGREGATE and TABLE (struct of_xmsg in of.h).
 *
 * Same rules as of_parse.c: every length is checked against the bytes received before a
 * load behind the header, a length that does not add up is BAD_REQUEST/BAD_LEN (the framing
 * is intact, the connection goes on), and values are left to the caller (a role of 7 parses;
 * the switch answers ROLE_REQUEST_FAILED/BAD_ROLE). Wire layouts (OpenFlow 1.3.5):
 *   ROLE_REQUEST/REPLY  header, role (4), pad (4), generation_id (8)          = 24 bytes
 *   GET_ASYNC_REPLY,    header, packet_in_mask[2], port_status_mask[2],
 *   SET_ASYNC             flow_removed_mask[2] (4 bytes each)                 = 32 bytes
 *   multipart           header, type (2), flags (2), pad (4), body
 *     DESC reply        mfr, hw, sw (256 each), serial (32), dp (256)          = 1056 bytes
 *     AGGREGATE request the flow stats request (32 + match)
 *     AGGREGATE reply   packet_count (8), byte_count (8), flow_count (4), pad (4) = 24
 *     TABLE reply       per table: table_id (1), pad (3), active_count (4),
 *                       lookup_count (8), matched_count (8)                    = 24 each
 */
#include <errno.h>
#include <string.h>

#include "of_wire.h"

#define MP_REQUEST 18
#define MP_REPLY 19
#define DESC_LEN (3 * OF_DESC_STR_LEN + OF_SERIAL_NUM_LEN + OF_DESC_STR_LEN)

static int bad_len(struct of_fault *f, const char *why)
{
	of_fault_set(f, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN, false, why);
	return -EBADMSG;
}

/* A fixed wire string of n bytes into a NUL-terminated one (the last byte gives way). */
static void get_str(char *dst, const uint8_t *p, size_t n)
{
	memcpy(dst, p, n - 1);
	dst[n - 1] = '\0';
}

static void put_str(struct of_wbuf *w, const char *s, size_t n)
{
	size_t l = strnlen(s, n - 1);
	of_put_bytes(w, s, l);
	of_put_zeros(w, n - l);
}

static int parse_mp(const uint8_t *b, size_t len, struct of_xmsg *m, struct of_fault *f)
{
	if (len < 16)
		return -ENOENT; /* of_parse says BAD_LEN */
	uint16_t kind = of_get16(b + 8);
	bool req = b[1] == MP_REQUEST;
	const uint8_t *p = b + 16;
	size_t blen = len - 16;
	m->mp_flags = of_get16(b + 10);
	switch (kind) {
	case OFPMP13_DESC:
		m->type = req ? OF_X_DESC_REQUEST : OF_X_DESC_REPLY;
		if (req)
			return blen ? bad_len(f, "DESC request has a body") : 0;
		if (blen != DESC_LEN)
			return bad_len(f, "DESC reply is not 1056 bytes");
		get_str(m->u.desc.mfr, p, OF_DESC_STR_LEN);
		get_str(m->u.desc.hw, p + 256, OF_DESC_STR_LEN);
		get_str(m->u.desc.sw, p + 512, OF_DESC_STR_LEN);
		get_str(m->u.desc.serial, p + 768, OF_SERIAL_NUM_LEN);
		get_str(m->u.desc.dp, p + 800, OF_DESC_STR_LEN);
		return 0;
	case OFPMP13_AGGREGATE:
		m->type = req ? OF_X_AGGREGATE_REQUEST : OF_X_AGGREGATE_REPLY;
		if (!req) {
			if (blen != 24)
				return bad_len(f, "AGGREGATE reply is not 24 bytes");
			m->u.aggregate.packet_count = of_get64(p);
			m->u.aggregate.byte_count = of_get64(p + 8);
			m->u.aggregate.flow_count = of_get32(p + 16);
			return 0;
		}
		if (blen < 32)
			return bad_len(f, "AGGREGATE request shorter than 32");
		struct of_mp_request *r = &m->u.aggregate_request;
		r->mp_type = OF_MP_FLOW;
		r->flags = m->mp_flags;
		r->table_id = p[0];
		r->out_port = of_get32(p + 4);
		r->out_group = of_get32(p + 8);
		r->cookie = of_get64(p + 16);
		r->cookie_mask = of_get64(p + 24);
		int mt = of_match_parse(OF_VERSION_1_3, p + 32, blen - 32, &r->match, f);
		if (mt < 0)
			return mt;
		if (32 + (size_t)mt != blen)
			return bad_len(f, "AGGREGATE request has bytes after the match");
		return 0;
	case OFPMP13_TABLE:
		m->type = req ? OF_X_TABLE_REQUEST : OF_X_TABLE_REPLY;
		if (req)
			return blen ? bad_len(f, "TABLE request has a body") : 0;
		if (blen % OF13_TABLE_STATS_LEN)
			return bad_len(f, "TABLE reply not a whole number of 24-byte entries");
		m->u.tables.raw = p;
		m->u.tables.raw_len = (uint32_t)blen;
		m->u.tables.n = (uint16_t)(blen / OF13_TABLE_STATS_LEN);
		return 0;
	}
	return -ENOENT;
}

int of_xparse(const uint8_t *b, size_t len, struct of_xmsg *m, struct of_fault *f)
{
	memset(m, 0, sizeof(*m));
	memset(f, 0, sizeof(*f));
	if (len < OF_HEADER_LEN || len != of_get16(b + 2) || b[0] != OF_VERSION_1_3)
		return -ENOENT;
	m->version = b[0];
	m->xid = of_get32(b + 4);
	switch (b[1]) {
	case OF13_GET_CONFIG_REQUEST:
		m->type = OF_X_GET_CONFIG_REQUEST;
		return len == OF_HEADER_LEN ? 0 : bad_len(f, "GET_CONFIG_REQUEST has a body");
	case OF13_GET_CONFIG_REPLY:
		m->type = OF_X_GET_CONFIG_REPLY;
		if (len != 12)
			return bad_len(f, "GET_CONFIG_REPLY is not 12 bytes");
		m->u.config.flags = of_get16(b + 8);
		m->u.config.miss_send_len = of_get16(b + 10);
		return 0;
	case OF13_ROLE_REQUEST:
	case OF13_ROLE_REPLY:
		m->type = b[1] == OF13_ROLE_REQUEST ? OF_X_ROLE_REQUEST : OF_X_ROLE_REPLY;
		if (len != 24)
			return bad_len(f, "ROLE message is not 24 bytes");
		m->u.role.role = of_get32(b + 8);
		m->u.role.generation_id = of_get64(b + 16);
		return 0;
	case OF13_GET_ASYNC_REQUEST:
		m->type = OF_X_GET_ASYNC_REQUEST;
		return len == OF_HEADER_LEN ? 0 : bad_len(f, "GET_ASYNC_REQUEST has a body");
	case OF13_GET_ASYNC_REPLY:
	case OF13_SET_ASYNC:
		m->type = b[1] == OF13_SET_ASYNC ? OF_X_SET_ASYNC : OF_X_GET_ASYNC_REPLY;
		if (len != 32)
			return bad_len(f, "ASYNC message is not 32 bytes");
		for (unsigned i = 0; i < 2; i++) {
			m->u.async.packet_in[i] = of_get32(b + 8 + 4 * i);
			m->u.async.port_status[i] = of_get32(b + 16 + 4 * i);
			m->u.async.flow_removed[i] = of_get32(b + 24 + 4 * i);
		}
		return 0;
	case MP_REQUEST:
	case MP_REPLY:
		return parse_mp(b, len, m, f);
	}
	return -ENOENT;
}

int of_table_stats_at(const struct of_array *a, unsigned i, struct of_table_stats *o)
{
	if (i >= a->n)
		return -EINVAL;
	if (!a->raw) {
		if (!a->items)
			return -EINVAL;
		*o = ((const struct of_table_stats *)a->items)[i];
		return 0;
	}
	const uint8_t *p = a->raw + (size_t)i * OF13_TABLE_STATS_LEN;
	memset(o, 0, sizeof(*o));
	o->table_id = p[0];
	o->active_count = of_get32(p + 4);
	o->lookup_count = of_get64(p + 8);
	o->matched_count = of_get64(p + 16);
	return 0;
}

static void put_mp_header(struct of_wbuf *w, uint16_t kind, uint16_t flags)
{
	of_put16(w, kind);
	of_put16(w, flags);
	of_put_zeros(w, 4);
}

ssize_t of_xserialize(const struct of_xmsg *m, uint8_t *buf, size_t cap)
{
	static const uint8_t wire[OF_XTYPE_COUNT] = {
		[OF_X_GET_CONFIG_REQUEST] = OF13_GET_CONFIG_REQUEST,
		[OF_X_GET_CONFIG_REPLY] = OF13_GET_CONFIG_REPLY,
		[OF_X_ROLE_REQUEST] = OF13_ROLE_REQUEST, [OF_X_ROLE_REPLY] = OF13_ROLE_REPLY,
		[OF_X_GET_ASYNC_REQUEST] = OF13_GET_ASYNC_REQUEST,
		[OF_X_GET_ASYNC_REPLY] = OF13_GET_ASYNC_REPLY, [OF_X_SET_ASYNC] = OF13_SET_ASYNC,
		[OF_X_DESC_REQUEST] = MP_REQUEST, [OF_X_DESC_REPLY] = MP_REPLY,
		[OF_X_AGGREGATE_REQUEST] = MP_REQUEST, [OF_X_AGGREGATE_REPLY] = MP_REPLY,
		[OF_X_TABLE_REQUEST] = MP_REQUEST, [OF_X_TABLE_REPLY] = MP_REPLY,
	};
	if ((unsigned)m->type >= OF_XTYPE_COUNT)
		return -EINVAL;
	struct of_wbuf w = of_wbuf_init(buf, cap);
	of_put8(&w, OF_VERSION_1_3);
	of_put8(&w, wire[m->type]);
	of_put16(&w, 0); /* length, set at the end */
	of_put32(&w, m->xid);
	switch (m->type) {
	case OF_X_GET_CONFIG_REQUEST:
	case OF_X_GET_ASYNC_REQUEST:
		break;
	case OF_X_GET_CONFIG_REPLY:
		of_put16(&w, m->u.config.flags);
		of_put16(&w, m->u.config.miss_send_len);
		break;
	case OF_X_ROLE_REQUEST:
	case OF_X_ROLE_REPLY:
		of_put32(&w, m->u.role.role);
		of_put_zeros(&w, 4);
		of_put64(&w, m->u.role.generation_id);
		break;
	case OF_X_GET_ASYNC_REPLY:
	case OF_X_SET_ASYNC:
		for (unsigned i = 0; i < 2; i++)
			of_put32(&w, m->u.async.packet_in[i]);
		for (unsigned i = 0; i < 2; i++)
			of_put32(&w, m->u.async.port_status[i]);
		for (unsigned i = 0; i < 2; i++)
			of_put32(&w, m->u.async.flow_removed[i]);
		break;
	case OF_X_DESC_REQUEST:
		put_mp_header(&w, OFPMP13_DESC, m->mp_flags);
		break;
	case OF_X_DESC_REPLY:
		put_mp_header(&w, OFPMP13_DESC, m->mp_flags);
		put_str(&w, m->u.desc.mfr, OF_DESC_STR_LEN);
		put_str(&w, m->u.desc.hw, OF_DESC_STR_LEN);
		put_str(&w, m->u.desc.sw, OF_DESC_STR_LEN);
		put_str(&w, m->u.desc.serial, OF_SERIAL_NUM_LEN);
		put_str(&w, m->u.desc.dp, OF_DESC_STR_LEN);
		break;
	case OF_X_AGGREGATE_REQUEST: {
		const struct of_mp_request *r = &m->u.aggregate_request;
		put_mp_header(&w, OFPMP13_AGGREGATE, m->mp_flags);
		of_put8(&w, r->table_id);
		of_put_zeros(&w, 3);
		of_put32(&w, r->out_port);
		of_put32(&w, r->out_group);
		of_put_zeros(&w, 4);
		of_put64(&w, r->cookie);
		of_put64(&w, r->cookie_mask);
		of_match_put(&w, OF_VERSION_1_3, &r->match);
		break;
	}
	case OF_X_AGGREGATE_REPLY:
		put_mp_header(&w, OFPMP13_AGGREGATE, m->mp_flags);
		of_put64(&w, m->u.aggregate.packet_count);
		of_put64(&w, m->u.aggregate.byte_count);
		of_put32(&w, m->u.aggregate.flow_count);
		of_put_zeros(&w, 4);
		break;
	case OF_X_TABLE_REQUEST:
		put_mp_header(&w, OFPMP13_TABLE, m->mp_flags);
		break;
	case OF_X_TABLE_REPLY:
		put_mp_header(&w, OFPMP13_TABLE, m->mp_flags);
		for (unsigned i = 0; i < m->u.tables.n; i++) {
			struct of_table_stats t;
			if (of_table_stats_at(&m->u.tables, i, &t))
				return -EINVAL;
			of_put8(&w, t.table_id);
			of_put_zeros(&w, 3);
			of_put32(&w, t.active_count);
			of_put64(&w, t.lookup_count);
			of_put64(&w, t.matched_count);
		}
		break;
	case OF_XTYPE_COUNT:
		return -EINVAL;
	}
	if (w.overflow)
		return -ENOBUFS;
	if (w.len > OF_MAX_MSG_LEN)
		return -EINVAL;
	of_set16(buf + 2, (uint16_t)w.len);
	return (ssize_t)w.len;
}
